/* fuzz_config.c: libFuzzer harness for the configuration parser (daemon/config/). */
#include <stddef.h>
#include <stdint.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parse one file's contents; every outcome must be clean and leak-free. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[512];

	if (config_load_buffer(&cfg, "fuzz.conf", data, size, err, sizeof(err)) == 0)
		config_free(&cfg);
	return 0;
}
