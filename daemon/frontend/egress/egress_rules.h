/*
 * egress_rules.h: the pure rules of network egress (docs/design-egress.md):
 * a profile's allow-list (parsed from airlockd.conf), matching a request's
 * host and port against it, the address ranges refused after resolution, and
 * the proxy's request head parser. No I/O, no allocation: unit-tested alone
 * (tests/daemon/test_egress_rules.c) and fuzzed.
 */
#ifndef AIRLOCKD_EGRESS_RULES_H
#define AIRLOCKD_EGRESS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define EGRESS_ENTRIES_MAX 64 /* allow-list entries per profile */
#define EGRESS_PORTS_MAX 8    /* ports per entry */
#define EGRESS_HOST_MAX 253   /* a DNS name, bytes, without the trailing dot */
#define EGRESS_HEAD_MAX 8192  /* a request head, bytes, with its blank line */
#define EGRESS_DEFAULT_PORT 3128

enum egress_entry_kind {
	EGRESS_NAME = 1, /* an exact host name */
	EGRESS_SUFFIX,	 /* "*.suffix": any name strictly below suffix */
	EGRESS_ADDR4,	 /* a v4 literal, allowed only as written */
	EGRESS_ADDR6,	 /* a v6 literal ([...] in the list) */
};

struct egress_entry {
	enum egress_entry_kind kind;
	char host[EGRESS_HOST_MAX + 1]; /* lower-case name or suffix (without "*."), or the
					 * literal as listed */
	uint8_t addr[16];		/* ADDR4 (first 4) and ADDR6 */
	uint16_t ports[EGRESS_PORTS_MAX];
	size_t nports;
	bool allow_private; /* from allow_private_hosts: may resolve to a refused range */
};

/* A profile's egress policy (network = proxy). */
struct egress_policy {
	struct egress_entry entries[EGRESS_ENTRIES_MAX];
	size_t nentries;
	uint64_t bytes;	      /* network_bytes: up and down, per run */
	uint32_t connections; /* network_connections: accepted, per run */
};

#define EGRESS_BYTES_DEFAULT (256ULL << 20)
#define EGRESS_CONNECTIONS_DEFAULT 256
#define EGRESS_CONCURRENT_MAX 16 /* connections of one run open at once */

/*
 * Add the entries of one allow_hosts (or, private set, allow_private_hosts)
 * value to pol: comma- or blank-separated `host:port`, `*.suffix:port`,
 * `IPv4:port`, `[IPv6]:port`; a bare number after an entry is one more port
 * of it ("*.example.com:80,443"). On a bad entry returns -EINVAL (-E2BIG past
 * the bounds) and writes the reason to why; pol may then hold a part.
 */
int egress_list_parse(const char *value, bool private_ok, struct egress_policy *pol, char *why,
		      size_t whylen);

/*
 * A resolver address as configured: "IPv4", "IPv4:port", "IPv6" or
 * "[IPv6]:port" (port 53 when absent), numeric only. Returns 0 or -EINVAL.
 */
int egress_resolver_parse(const char *s, struct sockaddr_storage *ret);

/* Write entry e as it is listed ("*.example.com:80,443") into buf. */
void egress_entry_format(const struct egress_entry *e, char *buf, size_t len);

/*
 * What a request names as its destination host (len bytes, as the client
 * wrote it, brackets included for v6): lower-cased into out, and whether it
 * is an IP literal in any notation a resolver or inet_aton() takes
 * ("2130706433", "0x7f.1", "127.1", "[::1]"). A literal that parses is in
 * *ret_family / ret_addr (AF_INET, AF_INET6), else *ret_family is 0 (refused
 * as a literal anyway). Returns 0, or -EINVAL for what is neither a valid
 * name nor a literal.
 */
int egress_host_normalise(const char *in, size_t len, char *out, size_t outlen, bool *ret_literal,
			  int *ret_family, uint8_t ret_addr[16]);

/*
 * The entry of pol that allows host (normalised) on port, or NULL. A literal
 * matches only an ADDR entry of the same address; a name matches an exact
 * NAME entry or a SUFFIX entry it is strictly below (at a label boundary).
 */
const struct egress_entry *egress_match(const struct egress_policy *pol, const char *host,
					bool literal, int family, const uint8_t addr[16],
					uint16_t port);

/*
 * Is this address in a range egress refuses unless the entry allows private
 * addresses: loopback, private, link-local (169.254.169.254 too), CGNAT,
 * multicast, reserved, unspecified; v6 ::1, ::, ULA, link-local, multicast,
 * and the v4 inside ::ffff:0:0/96, 64:ff9b::/96 and 2002::/16 by the v4 rules.
 */
bool egress_addr_refused(const struct sockaddr *sa);

/* A parsed request head: offsets into the caller's buffer. */
struct egress_head {
	bool connect;	   /* CONNECT host:port, else absolute-form http:// */
	size_t method_len; /* the method at buf[0] */
	const char *host;  /* not NUL-terminated */
	size_t host_len;   /* as written, brackets included */
	uint16_t port;	   /* 80 when an http:// URL names none */
	const char *path;  /* origin-form target ("/..."), plain HTTP only */
	size_t path_len;
	char version;			 /* '0' or '1': HTTP/1.x */
	size_t headers_off, headers_len; /* the header lines after the request line */
	size_t head_len;		 /* the whole head, with its blank line */
};

/*
 * Parse the head at the start of buf (len bytes). Returns 0 when a whole
 * head is there, -EAGAIN when more bytes are needed (and len is below
 * EGRESS_HEAD_MAX), -E2BIG when there is no end within EGRESS_HEAD_MAX,
 * -EINVAL for a malformed head, -ENOTSUP for a method or scheme egress does
 * not serve (https:// in absolute form, ftp://, an origin-form target).
 */
int egress_head_parse(const char *buf, size_t len, struct egress_head *ret);

/*
 * The head to send to the origin of a plain HTTP request: the request line
 * in origin form, the header lines without Proxy-*, Connection, Keep-Alive,
 * TE, Upgrade and Host, then "Host: <host as asked>" and "Connection: close".
 * Returns the length written, or -E2BIG when out (outlen) is too small.
 */
int egress_head_rewrite(const char *buf, const struct egress_head *h, char *out, size_t outlen);

#endif
