/* Unit tests of daemon/frontend/egress/egress_rules.c: allow-list matching, literals, refused
 * ranges, heads. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "egress_rules.h"

static struct egress_policy pol;

static void
policy(const char *list, const char *private_list)
{
	char why[256];

	memset(&pol, 0, sizeof(pol));
	assert_int_equal(egress_list_parse(list, false, &pol, why, sizeof(why)), 0);
	if (private_list != NULL)
		assert_int_equal(egress_list_parse(private_list, true, &pol, why, sizeof(why)), 0);
}

/* Does host:port (as a request writes it) match the policy? */
static const struct egress_entry *
match(const char *host, uint16_t port)
{
	char norm[EGRESS_HOST_MAX + 3];
	uint8_t addr[16];
	bool literal;
	int family;

	if (egress_host_normalise(host, strlen(host), norm, sizeof(norm), &literal, &family, addr) <
	    0)
		return NULL;
	return egress_match(&pol, norm, literal, family, addr, port);
}

/* Names, wildcards at label boundaries only, ports per entry, case and trailing dot. */
static void
test_match_names(void **state)
{
	(void)state;
	policy("pypi.org:443, *.example.com:80,443 data.test:80", NULL);
	assert_non_null(match("pypi.org", 443));
	assert_non_null(match("PyPI.Org", 443));
	assert_non_null(match("pypi.org.", 443));
	assert_null(match("pypi.org", 80));
	assert_null(match("xpypi.org", 443));
	assert_null(match("pypi.org.evil.test", 443));
	assert_null(match("www.pypi.org", 443));
	assert_non_null(match("a.example.com", 80));
	assert_non_null(match("a.b.example.com", 443));
	assert_null(match("example.com", 443)); /* the suffix itself is not below it */
	assert_null(match("badexample.com", 443));
	assert_null(match("a.example.com", 22));
	assert_non_null(match("data.test", 80));
	assert_null(match("data.test", 8080));
	assert_null(match("", 80));
	assert_null(match("a..test", 80));
	assert_null(match("a b.test", 80));
}

/* Every notation of an address is a literal; only a listed one matches, as listed. */
static void
test_match_literals(void **state)
{
	static const char *const literals[] = {"127.0.0.1", "2130706433", "0x7f000001",
					       "0x7f.1",    "127.1",	  "017700000001",
					       "1.2.3.4",   "[::1]",	  "[::ffff:127.0.0.1]",
					       "a.0x10",    "999.1.1.1"};
	char norm[EGRESS_HOST_MAX + 3];
	uint8_t addr[16];
	bool literal;
	int family;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(literals) / sizeof(literals[0]); i++) {
		literal = false;
		assert_int_equal(egress_host_normalise(literals[i], strlen(literals[i]), norm,
						       sizeof(norm), &literal, &family, addr),
				 0);
		if (!literal)
			fail_msg("%s is not taken as a literal", literals[i]);
	}
	assert_int_equal(
		egress_host_normalise("0x7f.1", 6, norm, sizeof(norm), &literal, &family, addr), 0);
	assert_int_equal(family, AF_INET);
	assert_memory_equal(addr, "\x7f\0\0\x01", 4);
	/* Names with hex letters are names. */
	assert_int_equal(
		egress_host_normalise("cafe.be", 7, norm, sizeof(norm), &literal, &family, addr),
		0);
	assert_false(literal);

	policy("data.test:80, 198.51.100.1:80 [2001:db8::1]:443", NULL);
	assert_null(match("127.0.0.1", 80));
	assert_null(match("2130706433", 80));
	assert_non_null(match("198.51.100.1", 80));
	assert_non_null(match("3325256705", 80)); /* the same address, another notation */
	assert_null(match("198.51.100.1", 443));
	assert_non_null(match("[2001:DB8:0::1]", 443));
	assert_null(match("[2001:db8::2]", 443));
	assert_null(match("[::1]", 80));
	assert_null(match("[fe80::1%eth0]", 80));
}

static bool
refused4(const char *s)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};

	assert_int_equal(inet_pton(AF_INET, s, &sa.sin_addr), 1);
	return egress_addr_refused((struct sockaddr *)&sa);
}

static bool
refused6(const char *s)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6};

	assert_int_equal(inet_pton(AF_INET6, s, &sa.sin6_addr), 1);
	return egress_addr_refused((struct sockaddr *)&sa);
}

/* Every refused range at its edges, and the forms that embed a v4 address. */
static void
test_addr_ranges(void **state)
{
	static const char *const bad4[] = {
		"0.0.0.0",	   "0.255.255.255",   "10.0.0.1",   "10.255.255.255",
		"100.64.0.1",	   "100.127.255.255", "127.0.0.1",  "127.255.255.254",
		"169.254.169.254", "169.254.0.1",     "172.16.0.1", "172.31.255.255",
		"192.0.0.1",	   "192.168.1.1",     "198.18.0.1", "198.19.255.255",
		"224.0.0.1",	   "239.255.255.255", "240.0.0.1",  "255.255.255.255"};
	static const char *const good4[] = {
		"1.1.1.1",	  "9.255.255.255",   "11.0.0.0",     "100.63.255.255",
		"100.128.0.0",	  "126.255.255.255", "128.0.0.0",    "169.253.255.255",
		"172.15.255.255", "172.32.0.0",	     "192.0.1.0",    "192.167.255.255",
		"198.17.255.255", "198.20.0.0",	     "198.51.100.1", "223.255.255.255"};
	static const char *const bad6[] = {"::",
					   "::1",
					   "fc00::1",
					   "fdff::1",
					   "fe80::1",
					   "febf::1",
					   "fec0::1",
					   "ff02::1",
					   "::ffff:127.0.0.1",
					   "::ffff:169.254.169.254",
					   "::ffff:10.0.0.1",
					   "64:ff9b::7f00:1",
					   "2002:7f00:1::1",
					   "2002:a9fe:a9fe::",
					   "::127.0.0.1",
					   "100::1",
					   "64:ff9b:1::1"};
	static const char *const good6[] = {"2001:db8::1", "2606:4700::1111", "::ffff:1.1.1.1",
					    "64:ff9b::101:101", "2002:101:101::1"};
	struct sockaddr sa = {.sa_family = AF_UNIX};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++)
		if (!refused4(bad4[i]))
			fail_msg("%s not refused", bad4[i]);
	for (i = 0; i < sizeof(good4) / sizeof(good4[0]); i++)
		if (refused4(good4[i]))
			fail_msg("%s refused", good4[i]);
	for (i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++)
		if (!refused6(bad6[i]))
			fail_msg("%s not refused", bad6[i]);
	for (i = 0; i < sizeof(good6) / sizeof(good6[0]); i++)
		if (refused6(good6[i]))
			fail_msg("%s refused", good6[i]);
	assert_true(egress_addr_refused(&sa));
}

static int
head(const char *s, struct egress_head *h)
{
	return egress_head_parse(s, strlen(s), h);
}

/* CONNECT and absolute-form heads; everything else refused by its kind. */
static void
test_head_parse(void **state)
{
	static const char *const bad[] = {
		"CONNECT data.test HTTP/1.1\r\n\r\n",
		"CONNECT data.test:0 HTTP/1.1\r\n\r\n",
		"CONNECT data.test:80 HTTP/2.0\r\n\r\n",
		"CONNECT  data.test:80 HTTP/1.1\r\n\r\n",
		"CONNECT data.test:80 HTTP/1.1 x\r\n\r\n",
		"CONNECT data.test:80 HTTP/1.1\n\r\n",
		"CONNECT data.test:80 HTTP/1.1\r\nHost data.test\r\n\r\n",
		"CONNECT data.test:80 HTTP/1.1\r\n folded\r\n\r\n",
		"CONNECT data.test:80 HTTP/1.1\r\nA: b\rc\r\n\r\n",
		"GET http://u@data.test/ HTTP/1.1\r\n\r\n",
		"GET http://data.test/#x HTTP/1.1\r\n\r\n",
		"G(T http://data.test/ HTTP/1.1\r\n\r\n",
		"\r\n\r\n",
	};
	struct egress_head h;
	char big[EGRESS_HEAD_MAX + 16];
	size_t i;

	(void)state;
	assert_int_equal(head("CONNECT Data.Test:8443 HTTP/1.1\r\nHost: x\r\n\r\nTLS", &h), 0);
	assert_true(h.connect);
	assert_int_equal(h.port, 8443);
	assert_int_equal(h.host_len, 9);
	assert_memory_equal(h.host, "Data.Test", 9);
	assert_int_equal(h.head_len, strlen("CONNECT Data.Test:8443 HTTP/1.1\r\nHost: x\r\n\r\n"));
	assert_int_equal(head("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", &h), 0);
	assert_int_equal(h.host_len, 5);
	assert_int_equal(head("GET http://data.test/a?b HTTP/1.0\r\n\r\n", &h), 0);
	assert_false(h.connect);
	assert_int_equal(h.port, 80);
	assert_int_equal(h.path_len, 4);
	assert_int_equal(head("GET HTTP://data.test:8080 HTTP/1.1\r\n\r\n", &h), 0);
	assert_int_equal(h.port, 8080);
	assert_int_equal(h.path_len, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (head(bad[i], &h) != -EINVAL)
			fail_msg("bad head %zu not refused", i);
	assert_int_equal(head("GET / HTTP/1.1\r\n\r\n", &h), -ENOTSUP);
	assert_int_equal(head("GET https://data.test/ HTTP/1.1\r\n\r\n", &h), -ENOTSUP);
	assert_int_equal(head("GET ftp://data.test/ HTTP/1.1\r\n\r\n", &h), -ENOTSUP);
	assert_int_equal(head("CONNECT data.test:443 HTTP/1.1\r\n", &h), -EAGAIN);
	assert_int_equal(head("CONNECT data.test:443 HTTP/1.1\r", &h), -EAGAIN);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET http://data.test/", 21);
	assert_int_equal(egress_head_parse(big, EGRESS_HEAD_MAX, &h), -E2BIG);
	assert_int_equal(egress_head_parse(big, EGRESS_HEAD_MAX - 1, &h), -EAGAIN);
}

/* The origin gets origin form, its own Host, no proxy or hop-by-hop headers, Connection: close. */
static void
test_head_rewrite(void **state)
{
	static const char in[] =
		"POST http://data.test:8080?q=1 HTTP/1.1\r\n"
		"Host: other.test\r\nProxy-Authorization: x\r\n"
		"Connection: keep-alive\r\nUser-Agent: t\r\nKeep-Alive: 5\r\n"
		"Content-Length: 3\r\nproxy-connection: k\r\nUpgrade: h2c\r\n\r\nabc";
	static const char want[] = "POST /?q=1 HTTP/1.1\r\nUser-Agent: t\r\nContent-Length: 3\r\n"
				   "Host: data.test:8080\r\nConnection: close\r\n\r\n";
	struct egress_head h;
	char out[512];
	int n;

	(void)state;
	assert_int_equal(head(in, &h), 0);
	n = egress_head_rewrite(in, &h, out, sizeof(out));
	assert_int_equal(n, (int)strlen(want));
	assert_memory_equal(out, want, strlen(want));
	assert_int_equal(egress_head_rewrite(in, &h, out, 20), -E2BIG);
	assert_int_equal(head("GET http://data.test/x HTTP/1.0\r\n\r\n", &h), 0);
	n = egress_head_rewrite("GET http://data.test/x HTTP/1.0\r\n\r\n", &h, out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out, "GET /x HTTP/1.0\r\nHost: data.test\r\nConnection: close\r\n\r\n");
}

/* Lists: bounds and the forms a resolver address takes. */
static void
test_lists_and_resolvers(void **state)
{
	struct sockaddr_storage ss;
	char list[64 * 16 + 32], why[256];
	size_t i, off = 0;

	(void)state;
	memset(&pol, 0, sizeof(pol));
	for (i = 0; i < EGRESS_ENTRIES_MAX; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "h%zu.test:80,", i);
	assert_int_equal(egress_list_parse(list, false, &pol, why, sizeof(why)), 0);
	assert_int_equal(egress_list_parse("one.more:80", false, &pol, why, sizeof(why)), -E2BIG);
	memset(&pol, 0, sizeof(pol));
	assert_int_equal(
		egress_list_parse("a.test:1,2,3,4,5,6,7,8,9", false, &pol, why, sizeof(why)),
		-E2BIG);

	assert_int_equal(egress_resolver_parse("198.51.100.53", &ss), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 53);
	assert_int_equal(egress_resolver_parse("127.0.0.1:5353", &ss), 0);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 5353);
	assert_int_equal(egress_resolver_parse("2001:db8::1", &ss), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(egress_resolver_parse("[2001:db8::1]:54", &ss), 0);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 54);
	assert_int_equal(egress_resolver_parse("dns.test", &ss), -EINVAL);
	assert_int_equal(egress_resolver_parse("[::1]x", &ss), -EINVAL);
	assert_int_equal(egress_resolver_parse("1.2.3.4:", &ss), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_names),  cmocka_unit_test(test_match_literals),
		cmocka_unit_test(test_addr_ranges),  cmocka_unit_test(test_head_parse),
		cmocka_unit_test(test_head_rewrite), cmocka_unit_test(test_lists_and_resolvers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
