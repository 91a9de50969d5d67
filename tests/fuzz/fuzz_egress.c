/*
 * fuzz_egress.c: libFuzzer harness for the egress proxy's parsers
 * (daemon/frontend/egress/egress_rules.c): the request head that sandboxed code sends, its
 * rewrite for the origin, and the host normaliser and matcher it feeds. The
 * code of a network = proxy run chooses every byte.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "egress_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct egress_policy pol;
	static char out[EGRESS_HEAD_MAX + EGRESS_HOST_MAX + 64];
	char why[256], norm[EGRESS_HOST_MAX + 3];
	struct egress_head h;
	uint8_t addr[16];
	bool literal;
	int family;

	if (pol.nentries == 0 &&
	    egress_list_parse("data.test:80,443 *.wild.test:80 198.51.100.1:8080 [2001:db8::1]:443",
			      false, &pol, why, sizeof(why)) < 0)
		return 0;
	if (egress_head_parse((const char *)data, size, &h) != 0)
		return 0;
	if (!h.connect)
		(void)egress_head_rewrite((const char *)data, &h, out, sizeof(out));
	if (egress_host_normalise(h.host, h.host_len, norm, sizeof(norm), &literal, &family,
				  addr) == 0)
		(void)egress_match(&pol, norm, literal, family, addr, h.port);
	return 0;
}
