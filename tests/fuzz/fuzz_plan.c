/*
 * fuzz_plan.c: libFuzzer harness for plan_parse() (daemon/ipc/plan_parse.c), which the
 * supervisor runs, with capabilities in its namespace, on the plan memfd the
 * frontend wrote. The frontend is less trusted than the supervisor, so the
 * parser must survive any bytes: never read outside the buffer, never crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touch every byte a successful parse hands out, so ASan sees a bad pointer. */
static size_t
fuzz_plan_touch(const struct plan_view *v)
{
	size_t sum = 0, i;

	for (i = 0; v->argv[i] != NULL; i++)
		sum += strlen(v->argv[i]);
	for (i = 0; v->envp[i] != NULL; i++)
		sum += strlen(v->envp[i]);
	sum += strlen(v->code_name) + strlen(v->hostname);
	for (i = 0; i < v->hdr->code_len; i++)
		sum += v->code[i];
	if (v->stdin_data != NULL)
		for (i = 0; i < v->hdr->stdin_len; i++)
			sum += v->stdin_data[i];
	for (i = 0; i < v->nfiles; i++) {
		uint64_t j;

		sum += strlen(v->files[i].name);
		for (j = 0; j < v->files[i].len; j++)
			sum += v->files[i].data[j];
	}
	return sum;
}

/* Parse one plan from a private, aligned copy (the real one is a page-aligned mapping). */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan_view *v = malloc(sizeof(*v));
	void *copy = malloc(size ? size : 1);
	volatile size_t sink;

	if (v == NULL || copy == NULL)
		abort();
	memcpy(copy, data, size);
	if (plan_parse(copy, size, v) == 0)
		sink = fuzz_plan_touch(v);
	(void)sink;
	free(copy);
	free(v);
	return 0;
}
