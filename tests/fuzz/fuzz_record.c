/*
 * fuzz_record.c: libFuzzer harness for session_record_parse()
 * (daemon/frontend/session_record.c), the record of a kept session a
 * restarted daemon reads back from its state directory. It must never read
 * outside the buffer, and a record it accepts must read back the same
 * through the writer (session_record_format()).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session_facts f, g;
	char buf[SESSION_RECORD_MAX], name[PROTO_SESSION_ID_LEN + 8], why[128];
	int n;

	if (session_record_parse((const char *)data, size, "0123456789abcdef0123456789abcdef.rec",
				 &f, why, sizeof(why)) != 0)
		return 0;
	n = session_record_format(&f, buf, sizeof(buf));
	if (n < 0)
		abort();
	memcpy(name, f.id, PROTO_SESSION_ID_LEN);
	memcpy(name + PROTO_SESSION_ID_LEN, ".rec", 5);
	if (session_record_parse(buf, (size_t)n, name, &g, why, sizeof(why)) != 0 ||
	    memcmp(&f, &g, sizeof(f)) != 0)
		abort();
	return 0;
}
