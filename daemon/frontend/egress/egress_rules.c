/* egress_rules.c: allow-lists, host matching, refused address ranges and request heads. */
#include "egress_rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define EGRESS_LABEL_MAX 63

static bool
egress_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
egress_is_hex(char c)
{
	return egress_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static char
egress_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/*
 * Is this name (lower-case, len bytes) of LDH labels: 1 to 63 of a-z, 0-9
 * and '-', not starting or ending with '-', at most EGRESS_HOST_MAX in all?
 * Punycode ("xn--") is LDH; raw UTF-8 is not accepted.
 */
static bool
egress_name_valid(const char *s, size_t len)
{
	size_t i, lab = 0;

	if (len == 0 || len > EGRESS_HOST_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '.') {
			if (lab == 0 || s[i - 1] == '-')
				return false;
			lab = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || egress_is_digit(c) || c == '-'))
			return false;
		if (c == '-' && lab == 0)
			return false;
		if (++lab > EGRESS_LABEL_MAX)
			return false;
	}
	return lab > 0 && s[len - 1] != '-';
}

/*
 * Does the name end in a number (its last label all digits, or 0x and hex)?
 * Such a name is an IP literal to inet_aton() and to many resolvers and
 * URL parsers ("2130706433", "0x7f.1", "127.1"); no real top-level domain is
 * numeric (the WHATWG URL standard's "ends in a number" rule).
 */
static bool
egress_ends_in_number(const char *s, size_t len)
{
	size_t start = len, i;

	while (start > 0 && s[start - 1] != '.')
		start--;
	if (start == len)
		return false;
	if (len - start >= 2 && s[start] == '0' && s[start + 1] == 'x') {
		for (i = start + 2; i < len; i++)
			if (!egress_is_hex(s[i]))
				return false;
		return true;
	}
	for (i = start; i < len; i++)
		if (!egress_is_digit(s[i]))
			return false;
	return true;
}

int
egress_host_normalise(const char *in, size_t len, char *out, size_t outlen, bool *ret_literal,
		      int *ret_family, uint8_t ret_addr[16])
{
	char buf[EGRESS_HOST_MAX + 3];
	struct in_addr a4;
	size_t i;

	if (len == 0 || len > EGRESS_HOST_MAX + 2 || outlen <= len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (in[i] == '\0')
			return -EINVAL;
		buf[i] = egress_lower(in[i]);
	}
	buf[len] = '\0';
	memset(ret_addr, 0, 16);
	if (buf[0] == '[') {
		char v6[64];

		if (len < 3 || buf[len - 1] != ']' || len - 2 >= sizeof(v6))
			return -EINVAL;
		memcpy(v6, buf + 1, len - 2);
		v6[len - 2] = '\0';
		if (strchr(v6, '%') != NULL || inet_pton(AF_INET6, v6, ret_addr) != 1)
			return -EINVAL;
		memcpy(out, buf, len + 1);
		*ret_literal = true;
		*ret_family = AF_INET6;
		return 0;
	}
	/* One trailing dot names the same host (an absolute name). */
	if (buf[len - 1] == '.')
		buf[--len] = '\0';
	if (len == 0)
		return -EINVAL;
	if (egress_ends_in_number(buf, len)) {
		*ret_literal = true;
		*ret_family = 0;
		if (inet_aton(buf, &a4) != 0) {
			memcpy(ret_addr, &a4, 4);
			*ret_family = AF_INET;
		}
		memcpy(out, buf, len + 1);
		return 0;
	}
	if (!egress_name_valid(buf, len))
		return -EINVAL;
	memcpy(out, buf, len + 1);
	*ret_literal = false;
	*ret_family = 0;
	return 0;
}

/* A port: 1 to 65535, decimal, no sign or leading zero. */
static int
egress_port_parse(const char *s, size_t len, uint16_t *ret)
{
	unsigned long v = 0;
	size_t i;

	if (len == 0 || len > 5 || s[0] == '0')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!egress_is_digit(s[i]))
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*ret = (uint16_t)v;
	return 0;
}

static int
egress_entry_add_port(struct egress_entry *e, uint16_t port, char *why, size_t whylen)
{
	size_t i;

	for (i = 0; i < e->nports; i++)
		if (e->ports[i] == port) {
			snprintf(why, whylen, "port %u twice", port);
			return -EINVAL;
		}
	if (e->nports == EGRESS_PORTS_MAX) {
		snprintf(why, whylen, "more than %d ports in one entry", EGRESS_PORTS_MAX);
		return -E2BIG;
	}
	e->ports[e->nports++] = port;
	return 0;
}

/* One "host:port" token (len bytes) into e. */
static int
egress_entry_parse(const char *tok, size_t len, struct egress_entry *e, char *why, size_t whylen)
{
	const char *colon = NULL;
	bool literal;
	int family;
	size_t hlen, i;
	uint16_t port;

	memset(e, 0, sizeof(*e));
	for (i = len; i > 0; i--)
		if (tok[i - 1] == ':') {
			colon = tok + i - 1;
			break;
		}
	if (colon == NULL || (tok[0] == '[' && colon[-1] != ']')) {
		snprintf(why, whylen, "'%.*s': no port (host:port)", (int)len, tok);
		return -EINVAL;
	}
	if (egress_port_parse(colon + 1, (size_t)(tok + len - colon - 1), &port) < 0) {
		snprintf(why, whylen, "'%.*s': bad port (1 to 65535)", (int)len, tok);
		return -EINVAL;
	}
	hlen = (size_t)(colon - tok);
	if (hlen > 2 && tok[0] == '*' && tok[1] == '.') {
		/* Below the suffix only: the suffix itself is a separate entry. */
		if (egress_host_normalise(tok + 2, hlen - 2, e->host, sizeof(e->host), &literal,
					  &family, e->addr) < 0 ||
		    literal || hlen - 2 != strlen(e->host) || strchr(e->host, '.') == NULL) {
			snprintf(why, whylen,
				 "'%.*s': a wildcard is '*.' and a name of two labels or more",
				 (int)len, tok);
			return -EINVAL;
		}
		e->kind = EGRESS_SUFFIX;
	} else {
		if (egress_host_normalise(tok, hlen, e->host, sizeof(e->host), &literal, &family,
					  e->addr) < 0 ||
		    (literal && family == 0) || (!literal && hlen != strlen(e->host))) {
			snprintf(why, whylen,
				 "'%.*s': not a host name (letters, digits, '-', '.'; punycode for "
				 "others), '*.suffix', a dotted IPv4 or a [IPv6]",
				 (int)len, tok);
			return -EINVAL;
		}
		/* A v4 literal is listed only in its dotted-quad form. */
		if (literal && family == AF_INET) {
			char dotted[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, e->addr, dotted, sizeof(dotted));
			if (strcmp(dotted, e->host) != 0) {
				snprintf(why, whylen, "'%.*s': write an IPv4 address as %s",
					 (int)len, tok, dotted);
				return -EINVAL;
			}
		}
		e->kind = !literal ? EGRESS_NAME : family == AF_INET ? EGRESS_ADDR4 : EGRESS_ADDR6;
	}
	e->ports[0] = port;
	e->nports = 1;
	return 0;
}

int
egress_list_parse(const char *value, bool private_ok, struct egress_policy *pol, char *why,
		  size_t whylen)
{
	struct egress_entry *last = NULL;
	const char *p = value;
	int r;

	while (*p != '\0') {
		const char *tok;
		size_t len;
		uint16_t port;

		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		tok = p;
		while (*p != '\0' && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - tok);
		if (egress_port_parse(tok, len, &port) == 0) {
			if (last == NULL) {
				snprintf(why, whylen, "port %u before any host", port);
				return -EINVAL;
			}
			r = egress_entry_add_port(last, port, why, whylen);
			if (r < 0)
				return r;
			continue;
		}
		if (pol->nentries == EGRESS_ENTRIES_MAX) {
			snprintf(why, whylen, "more than %d entries", EGRESS_ENTRIES_MAX);
			return -E2BIG;
		}
		last = &pol->entries[pol->nentries];
		r = egress_entry_parse(tok, len, last, why, whylen);
		if (r < 0)
			return r;
		last->allow_private = private_ok;
		pol->nentries++;
	}
	if (last == NULL) {
		snprintf(why, whylen, "no entry");
		return -EINVAL;
	}
	return 0;
}

int
egress_resolver_parse(const char *s, struct sockaddr_storage *ret)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ret;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ret;
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN];
	uint16_t port = 53;
	size_t hlen = strlen(s);

	memset(ret, 0, sizeof(*ret));
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (end == NULL || (end[1] != '\0' && end[1] != ':'))
			return -EINVAL;
		if (end[1] == ':' && egress_port_parse(end + 2, strlen(end + 2), &port) < 0)
			return -EINVAL;
		s++;
		hlen = (size_t)(end - s);
	} else if (colon != NULL && strchr(s, ':') == colon) {
		if (egress_port_parse(colon + 1, strlen(colon + 1), &port) < 0)
			return -EINVAL;
		hlen = (size_t)(colon - s);
	}
	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return 0;
	}
	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return 0;
	}
	return -EINVAL;
}

void
egress_entry_format(const struct egress_entry *e, char *buf, size_t len)
{
	size_t off;
	int n;
	size_t i;

	n = snprintf(buf, len, "%s%s", e->kind == EGRESS_SUFFIX ? "*." : "", e->host);
	off = n < 0 ? 0 : (size_t)n;
	for (i = 0; i < e->nports && off < len; i++) {
		n = snprintf(buf + off, len - off, "%c%u", i == 0 ? ':' : ',', e->ports[i]);
		off += n < 0 ? 0 : (size_t)n;
	}
}

static bool
egress_entry_has_port(const struct egress_entry *e, uint16_t port)
{
	size_t i;

	for (i = 0; i < e->nports; i++)
		if (e->ports[i] == port)
			return true;
	return false;
}

const struct egress_entry *
egress_match(const struct egress_policy *pol, const char *host, bool literal, int family,
	     const uint8_t addr[16], uint16_t port)
{
	size_t i, hlen = strlen(host);

	for (i = 0; i < pol->nentries; i++) {
		const struct egress_entry *e = &pol->entries[i];
		size_t slen = strlen(e->host);

		if (!egress_entry_has_port(e, port))
			continue;
		switch (e->kind) {
		case EGRESS_NAME:
			if (!literal && !strcmp(host, e->host))
				return e;
			break;
		case EGRESS_SUFFIX:
			if (!literal && hlen > slen + 1 && host[hlen - slen - 1] == '.' &&
			    !strcmp(host + hlen - slen, e->host))
				return e;
			break;
		case EGRESS_ADDR4:
			if (literal && family == AF_INET && !memcmp(addr, e->addr, 4))
				return e;
			break;
		case EGRESS_ADDR6:
			if (literal && family == AF_INET6 && !memcmp(addr, e->addr, 16))
				return e;
			break;
		}
	}
	return NULL;
}

/* A v4 address (network order bytes) in a refused range? */
static bool
egress_addr4_refused(const uint8_t *a)
{
	static const struct {
		uint8_t net[4];
		unsigned bits;
	} ranges[] = {
		{{0, 0, 0, 0}, 8},    {{10, 0, 0, 0}, 8},     {{100, 64, 0, 0}, 10},
		{{127, 0, 0, 0}, 8},  {{169, 254, 0, 0}, 16}, {{172, 16, 0, 0}, 12},
		{{192, 0, 0, 0}, 24}, {{192, 168, 0, 0}, 16}, {{198, 18, 0, 0}, 15},
		{{224, 0, 0, 0}, 4},  {{240, 0, 0, 0}, 4},
	};
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	size_t i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		uint32_t n = (uint32_t)ranges[i].net[0] << 24 | (uint32_t)ranges[i].net[1] << 16 |
			     (uint32_t)ranges[i].net[2] << 8 | ranges[i].net[3];
		uint32_t mask = 0xffffffffU << (32 - ranges[i].bits);

		if ((v & mask) == n)
			return true;
	}
	return false;
}

bool
egress_addr_refused(const struct sockaddr *sa)
{
	static const uint8_t zero[12];
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
	const uint8_t *a;

	if (sa->sa_family == AF_INET)
		return egress_addr4_refused(
			(const uint8_t *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr);
	if (sa->sa_family != AF_INET6)
		return true;
	a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
	/* ::, ::1 and the old v4-compatible ::a.b.c.d: the v4 rules (0/8 refuses ::). */
	if (!memcmp(a, zero, 12) || !memcmp(a, mapped, 12) || !memcmp(a, nat64, 12))
		return egress_addr4_refused(a + 12) || !memcmp(a, zero, 12);
	if (a[0] == 0x20 && a[1] == 0x02) /* 6to4: 2002:a.b.c.d::/48 */
		return egress_addr4_refused(a + 2);
	if ((a[0] & 0xfe) == 0xfc) /* fc00::/7 unique local */
		return true;
	if (a[0] == 0xfe && (a[1] & 0x80) == 0x80) /* fe80::/10 link-local, fec0::/10 site-local */
		return true;
	if (a[0] == 0xff) /* multicast */
		return true;
	if (a[0] == 0x01 && a[1] == 0x00 && !memcmp(a + 2, zero, 6)) /* 100::/64 discard */
		return true;
	if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b) /* 64:ff9b:1::/48 */
		return true;
	return false;
}

/* A token character of RFC 9110 (method and header names). */
static bool
egress_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || egress_is_digit(c) ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Split "host:port" or "[v6]:port" or (port_ok_absent) "host" at buf. */
static int
egress_authority(const char *s, size_t len, bool need_port, struct egress_head *h)
{
	const char *colon = NULL;
	size_t i;

	if (len == 0)
		return -EINVAL;
	if (s[0] == '[') {
		const char *end = memchr(s, ']', len);

		if (end == NULL)
			return -EINVAL;
		if ((size_t)(end - s) + 1 < len) {
			if (end[1] != ':')
				return -EINVAL;
			colon = end + 1;
		}
	} else {
		for (i = 0; i < len; i++) {
			if (s[i] == '@')
				return -EINVAL; /* no userinfo */
			if (s[i] == ':') {
				if (colon != NULL)
					return -EINVAL;
				colon = s + i;
			}
		}
	}
	if (colon == NULL) {
		if (need_port)
			return -EINVAL;
		h->host = s;
		h->host_len = len;
		h->port = 80;
		return 0;
	}
	if (egress_port_parse(colon + 1, (size_t)(s + len - colon - 1), &h->port) < 0)
		return -EINVAL;
	h->host = s;
	h->host_len = (size_t)(colon - s);
	return h->host_len == 0 ? -EINVAL : 0;
}

int
egress_head_parse(const char *buf, size_t len, struct egress_head *ret)
{
	struct egress_head h;
	const char *line_end, *sp1, *sp2, *p, *end;
	size_t i, n = len < EGRESS_HEAD_MAX ? len : EGRESS_HEAD_MAX;
	int r;

	memset(&h, 0, sizeof(h));
	/* Only CRLF ends a line; a bare CR or LF, or a NUL, is refused (no line
	 * the origin could split otherwise than we did). */
	for (i = 0; i < n; i++) {
		if (buf[i] == '\0')
			return -EINVAL;
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return -EINVAL;
		if (buf[i] == '\r' && i + 1 < n && buf[i + 1] != '\n')
			return -EINVAL;
		if (i >= 3 && !memcmp(buf + i - 3, "\r\n\r\n", 4)) {
			h.head_len = i + 1;
			break;
		}
	}
	if (h.head_len == 0)
		return len >= EGRESS_HEAD_MAX ? -E2BIG : -EAGAIN;
	end = buf + h.head_len;
	line_end = memchr(buf, '\r', h.head_len);
	sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
	if (sp1 == NULL || sp1 == buf || sp1 - buf > 16)
		return -EINVAL;
	for (p = buf; p < sp1; p++)
		if (!egress_tchar(*p))
			return -EINVAL;
	h.method_len = (size_t)(sp1 - buf);
	sp2 = memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1));
	if (sp2 == NULL || sp2 == sp1 + 1 || memchr(sp2 + 1, ' ', (size_t)(line_end - sp2 - 1)))
		return -EINVAL;
	for (p = sp1 + 1; p < sp2; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return -EINVAL;
	if (line_end - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -EINVAL;
	h.version = sp2[8];
	h.connect = h.method_len == 7 && !memcmp(buf, "CONNECT", 7);
	if (h.connect) {
		r = egress_authority(sp1 + 1, (size_t)(sp2 - sp1 - 1), true, &h);
		if (r < 0)
			return r;
	} else {
		const char *auth = sp1 + 1, *path;

		if ((size_t)(sp2 - auth) < 8 || strncasecmp(auth, "http://", 7) != 0)
			return -ENOTSUP;
		auth += 7;
		for (path = auth; path < sp2 && *path != '/' && *path != '?'; path++)
			;
		r = egress_authority(auth, (size_t)(path - auth), false, &h);
		if (r < 0)
			return r;
		if (memchr(path, '#', (size_t)(sp2 - path)) != NULL)
			return -EINVAL;
		h.path = path;
		h.path_len = (size_t)(sp2 - path);
	}
	/* Header lines: "name: value", no folding. */
	h.headers_off = (size_t)(line_end + 2 - buf);
	h.headers_len = h.head_len - 2 - h.headers_off;
	for (p = line_end + 2; p < end - 2;) {
		const char *le = memchr(p, '\r', (size_t)(end - p));
		const char *c;

		for (c = p; c < le && egress_tchar(*c); c++)
			;
		if (c == p || c == le || *c != ':')
			return -EINVAL;
		for (; c < le; c++)
			if ((unsigned char)*c < 0x20 && *c != '\t')
				return -EINVAL;
		p = le + 2;
	}
	*ret = h;
	return 0;
}

/* Is the header line at p (name up to ':') one egress does not forward? */
static bool
egress_header_dropped(const char *p, size_t namelen)
{
	static const char *const dropped[] = {"connection", "keep-alive", "te",
					      "upgrade",    "host",	  "proxy-connection"};
	size_t i;

	if (namelen >= 6 && !strncasecmp(p, "proxy-", 6))
		return true;
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		if (strlen(dropped[i]) == namelen && !strncasecmp(p, dropped[i], namelen))
			return true;
	return false;
}

/* Append len bytes to out at *off, within outlen. */
static int
egress_put(char *out, size_t outlen, size_t *off, const char *s, size_t len)
{
	if (len > outlen - *off)
		return -E2BIG;
	memcpy(out + *off, s, len);
	*off += len;
	return 0;
}

int
egress_head_rewrite(const char *buf, const struct egress_head *h, char *out, size_t outlen)
{
	const char *p = buf + h->headers_off, *end = p + h->headers_len;
	char tail[EGRESS_HOST_MAX + 64];
	size_t off = 0;
	int n, r = 0;

	r |= egress_put(out, outlen, &off, buf, h->method_len + 1);
	if (h->path_len == 0 || h->path[0] != '/')
		r |= egress_put(out, outlen, &off, "/", 1);
	r |= egress_put(out, outlen, &off, h->path, h->path_len);
	r |= egress_put(out, outlen, &off, " HTTP/1.", 8);
	r |= egress_put(out, outlen, &off, &h->version, 1);
	r |= egress_put(out, outlen, &off, "\r\n", 2);
	while (p < end) {
		const char *le = memchr(p, '\r', (size_t)(end - p));
		const char *colon = memchr(p, ':', (size_t)(le - p));

		if (!egress_header_dropped(p, (size_t)(colon - p)))
			r |= egress_put(out, outlen, &off, p, (size_t)(le + 2 - p));
		p = le + 2;
	}
	if (h->port == 80)
		n = snprintf(tail, sizeof(tail), "Host: %.*s\r\nConnection: close\r\n\r\n",
			     (int)h->host_len, h->host);
	else
		n = snprintf(tail, sizeof(tail), "Host: %.*s:%u\r\nConnection: close\r\n\r\n",
			     (int)h->host_len, h->host, h->port);
	if (n < 0 || (size_t)n >= sizeof(tail))
		return -E2BIG;
	r |= egress_put(out, outlen, &off, tail, (size_t)n);
	if (r != 0)
		return -E2BIG;
	return (int)off;
}
