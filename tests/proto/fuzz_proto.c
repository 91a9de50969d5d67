/* fuzz_proto.c: libFuzzer harness for proto_decode(), the client-reachable parser. */
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode one packet without fds; every outcome must be clean and leak-free. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_msg msg = {0};
	enum proto_error code;
	uint32_t id;
	char why[256];

	if (proto_decode(data, size, NULL, 0, &msg, &code, &id, why, sizeof(why)) == 0)
		proto_msg_free(&msg);
	return 0;
}
