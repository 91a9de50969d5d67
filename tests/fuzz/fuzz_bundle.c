/*
 * fuzz_bundle.c: libFuzzer harness for bundle_decode() (common/bundle.c),
 * which the frontend runs on a client's file_bundle: any bytes must give a
 * clean refusal or entries that lie inside the buffer, never a crash or a
 * leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bundle.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle b;
	char why[256];
	size_t i, sum = 0;
	uint64_t j;

	if (bundle_decode(data, size, 4096, &b, why, sizeof(why)) < 0)
		return 0;
	/* Every entry the decoder accepted meets the rules the daemon relies on. */
	for (i = 0; i < b.n; i++) {
		if (rules_input_name_check(b.files[i].name) < 0 ||
		    bundle_mode_check(b.files[i].mode) < 0 || b.files[i].data < data ||
		    b.files[i].data + b.files[i].len > data + size)
			__builtin_trap();
		sum += strlen(b.files[i].name);
		for (j = 0; j < b.files[i].len; j++)
			sum += b.files[i].data[j];
	}
	bundle_free(&b);
	return (int)(sum & 0);
}
