/*
 * fuzz_advisory.c: libFuzzer harness for advisory_scan() (daemon/frontend/advisory.c),
 * which the frontend runs on the code of every run of a profile with
 * blocked_imports: any bytes a client sends. It must never read outside the
 * buffer, and what it hands back must be what the result may carry: at most
 * PROTO_ADVISORIES_MAX lines, each NUL-terminated printable ASCII.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "advisory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const blocked[] = {"os", "subprocess", "ctypes", "a.b", "importlib"};
	struct advisory_list res;
	size_t found, i, k, len;

	/* The buffer is exactly the input: ASan sees a read past its end. */
	found = advisory_scan(blocked, sizeof(blocked) / sizeof(*blocked), data, size, &res);
	if (res.n > PROTO_ADVISORIES_MAX || res.n > found + (size > ADVISORY_SCAN_MAX))
		abort();
	for (i = 0; i < res.n; i++) {
		len = strnlen(res.text[i], sizeof(res.text[i]));
		if (len == 0 || len > PROTO_ADVISORY_MAX)
			abort();
		for (k = 0; k < len; k++)
			if (res.text[i][k] < 0x20 || res.text[i][k] > 0x7e)
				abort();
	}
	return 0;
}
