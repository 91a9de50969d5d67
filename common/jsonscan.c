/* jsonscan.c: a strict JSON scanner that builds nothing (jsonscan.h). */
#include "jsonscan.h"

#include <errno.h>
#include <string.h>

struct js {
	const unsigned char *p;
	const unsigned char *end;
};

static int js_value(struct js *j, unsigned depth);

/* Skip JSON whitespace: space, tab, newline, carriage return. */
static void
js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Expect the literal word (true, false, null). */
static int
js_word(struct js *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return -EBADMSG;
	j->p += n;
	return 0;
}

/* Four hex digits of a \u escape. */
static int
js_hex4(struct js *j, unsigned *ret)
{
	unsigned v = 0;
	int i;

	if (j->end - j->p < 4)
		return -EBADMSG;
	for (i = 0; i < 4; i++) {
		unsigned char c = *j->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EBADMSG;
	}
	*ret = v;
	return 0;
}

/* One UTF-8 sequence of more than one byte, its lead byte at j->p. */
static int
js_utf8(struct js *j)
{
	unsigned char c = *j->p;
	unsigned char lo = 0x80, hi = 0xbf;
	int more, i;

	if (c >= 0xc2 && c <= 0xdf)
		more = 1;
	else if (c >= 0xe0 && c <= 0xef) {
		more = 2;
		if (c == 0xe0)
			lo = 0xa0; /* no overlong form */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		more = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f; /* nothing past U+10FFFF */
	} else
		return -EBADMSG;
	if (j->end - j->p <= more)
		return -EBADMSG;
	for (i = 1; i <= more; i++) {
		unsigned char b = j->p[i];

		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
			return -EBADMSG;
	}
	j->p += more + 1;
	return 0;
}

/* A string, j->p at its opening quote; *ret_escaped tells whether it had an escape. */
static int
js_string(struct js *j, bool *ret_escaped)
{
	bool escaped = false;

	j->p++;
	while (j->p < j->end) {
		unsigned char c = *j->p;
		unsigned u, lo;

		if (c == '"') {
			j->p++;
			if (ret_escaped != NULL)
				*ret_escaped = escaped;
			return 0;
		}
		if (c < 0x20)
			return -EBADMSG;
		if (c >= 0x80) {
			if (js_utf8(j) < 0)
				return -EBADMSG;
			continue;
		}
		j->p++;
		if (c != '\\')
			continue;
		escaped = true;
		if (j->p >= j->end)
			return -EBADMSG;
		c = *j->p++;
		if (strchr("\"\\/bfnrt", c) != NULL && c != '\0')
			continue;
		if (c != 'u' || js_hex4(j, &u) < 0)
			return -EBADMSG;
		if (u >= 0xdc00 && u <= 0xdfff)
			return -EBADMSG; /* a low surrogate alone */
		if (u >= 0xd800 && u <= 0xdbff) {
			if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
				return -EBADMSG;
			j->p += 2;
			if (js_hex4(j, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
				return -EBADMSG;
		}
	}
	return -EBADMSG;
}

/* A run of at least one digit. */
static int
js_digits(struct js *j)
{
	const unsigned char *start = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > start ? 0 : -EBADMSG;
}

/* A number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int
js_number(struct js *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (js_digits(j) < 0)
		return -EBADMSG;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (js_digits(j) < 0)
			return -EBADMSG;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (js_digits(j) < 0)
			return -EBADMSG;
	}
	return 0;
}

/*
 * An object or an array, j->p at its opening brace or bracket: members
 * separated by commas up to close ('}' or ']'); an object's members are
 * "key": value (keys are not compared: only the call's top is).
 */
static int
js_container(struct js *j, unsigned depth, unsigned char close)
{
	j->p++;
	js_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			js_ws(j);
			if (j->p >= j->end || *j->p != '"' || js_string(j, NULL) < 0)
				return -EBADMSG;
			js_ws(j);
			if (j->p >= j->end || *j->p++ != ':')
				return -EBADMSG;
		}
		if (js_value(j, depth + 1) < 0)
			return -EBADMSG;
		js_ws(j);
		if (j->p >= j->end)
			return -EBADMSG;
		if (*j->p == close) {
			j->p++;
			return 0;
		}
		if (*j->p++ != ',')
			return -EBADMSG;
	}
}

/* One value with the whitespace before it; depth counts open containers. */
static int
js_value(struct js *j, unsigned depth)
{
	js_ws(j);
	if (j->p >= j->end)
		return -EBADMSG;
	switch (*j->p) {
	case '{':
	case '[':
		if (depth >= JSONSCAN_DEPTH_MAX)
			return -EBADMSG;
		return js_container(j, depth, *j->p == '{' ? '}' : ']');
	case '"':
		return js_string(j, NULL);
	case 't':
		return js_word(j, "true");
	case 'f':
		return js_word(j, "false");
	case 'n':
		return js_word(j, "null");
	default:
		return js_number(j);
	}
}

int
jsonscan_value(const char *s, size_t len)
{
	struct js j = {(const unsigned char *)s, (const unsigned char *)s + len};

	if (s == NULL || js_value(&j, 0) < 0)
		return -EBADMSG;
	js_ws(&j);
	return j.p == j.end ? 0 : -EBADMSG;
}

int
jsonscan_object(const char *s, size_t len)
{
	size_t i = 0;

	while (s != NULL && i < len && strchr(" \t\n\r", s[i]) != NULL && s[i] != '\0')
		i++;
	if (s == NULL || i >= len || s[i] != '{')
		return -EBADMSG;
	return jsonscan_value(s, len);
}

/* The id: a non-negative integer without fraction or exponent, at most JSONSCAN_ID_MAX. */
static int
js_id(struct js *j, uint64_t *ret)
{
	uint64_t v = 0;

	if (j->p >= j->end || *j->p < '0' || *j->p > '9')
		return -EBADMSG;
	if (*j->p == '0' && j->end - j->p > 1 && j->p[1] >= '0' && j->p[1] <= '9')
		return -EBADMSG;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		v = v * 10 + (uint64_t)(*j->p++ - '0');
		if (v > JSONSCAN_ID_MAX)
			return -EBADMSG;
	}
	if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
		return -EBADMSG;
	*ret = v;
	return 0;
}

int
jsonscan_call(const char *s, size_t len, struct jsonscan_call *ret)
{
	struct js j = {(const unsigned char *)s, (const unsigned char *)s + len};
	struct jsonscan_call c = {0};
	bool seen_tool = false, seen_args = false, escaped;
	unsigned n = 0;

	if (s == NULL || ret == NULL)
		return -EINVAL;
	js_ws(&j);
	if (j.p >= j.end || *j.p++ != '{')
		goto bad;
	for (;;) {
		const unsigned char *k;
		size_t klen;

		js_ws(&j);
		if (j.p >= j.end || *j.p != '"')
			goto bad;
		k = j.p + 1;
		if (js_string(&j, &escaped) < 0 || escaped)
			goto bad;
		klen = (size_t)(j.p - 1 - k);
		js_ws(&j);
		if (j.p >= j.end || *j.p++ != ':')
			goto bad;
		js_ws(&j);
		if (klen == 2 && memcmp(k, "id", 2) == 0 && !c.has_id) {
			if (js_id(&j, &c.id) < 0)
				goto bad;
			c.has_id = true;
		} else if (klen == 4 && memcmp(k, "tool", 4) == 0 && !seen_tool) {
			const unsigned char *t = j.p + 1;

			if (j.p >= j.end || *j.p != '"' || js_string(&j, &escaped) < 0 || escaped)
				goto bad;
			c.tool = (const char *)t;
			c.tool_len = (size_t)(j.p - 1 - t);
			seen_tool = true;
		} else if (klen == 4 && memcmp(k, "args", 4) == 0 && !seen_args) {
			const unsigned char *a = j.p;

			if (j.p >= j.end || *j.p != '{' || js_value(&j, 0) < 0)
				goto bad;
			c.args = (const char *)a;
			c.args_len = (size_t)(j.p - a);
			seen_args = true;
		} else {
			goto bad; /* an unknown key, or one given twice */
		}
		n++;
		js_ws(&j);
		if (j.p >= j.end)
			goto bad;
		if (*j.p == '}')
			break;
		if (*j.p++ != ',')
			goto bad;
	}
	j.p++;
	js_ws(&j);
	if (j.p != j.end || n != 3 || !c.has_id || !seen_tool || !seen_args)
		goto bad;
	*ret = c;
	return 0;
bad:
	ret->has_id = c.has_id;
	ret->id = c.id;
	return -EBADMSG;
}
