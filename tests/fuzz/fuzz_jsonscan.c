/*
 * fuzz_jsonscan.c: libFuzzer harness of the tool bridge's JSON scanner
 * (common/jsonscan.c), which reads lines the sandboxed code writes: any
 * bytes, no crash, no read past the end, and a call's spans inside the text.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so ASan sees a read one byte past the text. */
	char *s = malloc(size > 0 ? size : 1);
	struct jsonscan_call c;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	(void)jsonscan_value(s, size);
	(void)jsonscan_object(s, size);
	if (jsonscan_call(s, size, &c) == 0) {
		if (c.tool < s || c.tool + c.tool_len > s + size || c.args < s ||
		    c.args + c.args_len > s + size || c.id > JSONSCAN_ID_MAX ||
		    jsonscan_object(c.args, c.args_len) != 0)
			abort();
	}
	free(s);
	return 0;
}
