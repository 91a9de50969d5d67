/*
 * config_value.c: the value parsers of airlockd.conf and the error helpers
 * every config/ file reports through. A leaf: it calls no other file of
 * config/ (only config_file.c's config_verr), so the section files and
 * config_parse.c, which calls their begin and end functions, do not call
 * each other in a circle (tests/layout/check_cycles.py).
 */
#include "config_parse.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"

/* Record the first error of a parse, at a given line; returns the error. */
int __attribute__((format(printf, 4, 5)))
config_fail_at(struct config_parse *p, int error, unsigned line, const char *fmt, ...)
{
	va_list ap;

	if (p->error != 0)
		return p->error;
	p->error = error;
	va_start(ap, fmt);
	config_verr(p->err, p->errlen, p->path, line, fmt, ap);
	va_end(ap);
	return error;
}

int
config_section_slot(struct config_parse *p, const struct config_slots *s, const char *name,
		    bool valid, int namemax, size_t *ret)
{
	char *e = s->base;
	size_t i;

	if (!valid)
		return config_fail_at(p, -EINVAL, p->line,
				      "bad %s name '%s': expected 1 to %d of a-z, 0-9, '-', '_'",
				      s->kind, name, namemax);
	for (i = 0; i < *s->n; i++)
		if (!strcmp(e + i * s->stride + s->name_off, name))
			break;
	if (i < *s->n && s->from_file[i])
		return config_fail_at(p, -EINVAL, p->line, "duplicate section [%s %s]", s->kind,
				      name);
	if (i == *s->n) {
		if (*s->n == s->max)
			return config_fail_at(p, -EINVAL, p->line, "more than %zu %ss", s->max,
					      s->kind);
		memset(e + i * s->stride, 0, s->stride);
		strcpy(e + i * s->stride + s->name_off, name);
		(*s->n)++;
	}
	s->from_file[i] = true;
	*ret = i;
	return 0;
}

/* Split a value into whitespace-separated words; the result is owned by the caller. */
int
config_split_words(const char *s, char **ret, size_t max, size_t *ret_n)
{
	char *words[CONFIG_RUNTIME_ARGV_MAX + 1];
	size_t n = 0, i;
	int r;

	if (max > CONFIG_RUNTIME_ARGV_MAX)
		max = CONFIG_RUNTIME_ARGV_MAX;
	while (*s != '\0') {
		const char *start;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		start = s;
		while (*s != '\0' && *s != ' ' && *s != '\t')
			s++;
		if (n == max) {
			r = -E2BIG;
			goto fail;
		}
		words[n] = strndup(start, (size_t)(s - start));
		if (words[n] == NULL) {
			r = -ENOMEM;
			goto fail;
		}
		n++;
	}
	for (i = 0; i < n; i++)
		ret[i] = words[i];
	ret[n] = NULL;
	*ret_n = n;
	return 0;
fail:
	for (i = 0; i < n; i++)
		free(words[i]);
	return r;
}

/* Read the unsigned number in base that s starts with (a digit first, no
 * sign or blank); *ret_end points past it, or with ret_end NULL the number
 * must be the whole of s. */
static int
config_parse_leading(const char *s, int base, uint64_t *ret, char **ret_end)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0) /* ERANGE: the only error with a digit first and base 8 or 10 */
		return -ERANGE;
	if (ret_end != NULL)
		*ret_end = end;
	else if (*end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Parse a decimal unsigned integer: digits only, no sign, no space, no overflow. */
int
config_parse_u64(const char *s, uint64_t *ret)
{
	return config_parse_leading(s, 10, ret, NULL);
}

/* Parse a byte count with an optional binary suffix K, M or G. */
int
config_parse_size(const char *s, uint64_t *ret)
{
	uint64_t v;
	unsigned shift = 0;
	char *end;
	int r;

	r = config_parse_leading(s, 10, &v, &end);
	if (r < 0)
		return r;
	if (*end != '\0') {
		switch (*end) {
		case 'K':
			shift = 10;
			break;
		case 'M':
			shift = 20;
			break;
		case 'G':
			shift = 30;
			break;
		default:
			return -EINVAL;
		}
		if (end[1] != '\0')
			return -EINVAL;
	}
	if (shift > 0 && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = (uint64_t)v << shift;
	return 0;
}

/* Parse an octal file mode up to 0777. */
int
config_parse_mode(const char *s, mode_t *ret)
{
	uint64_t v;
	int r;

	r = config_parse_leading(s, 8, &v, NULL);
	if (r < 0)
		return r;
	if (v > 0777)
		return -ERANGE;
	*ret = (mode_t)v;
	return 0;
}

/* Parse a boolean: true/false, yes/no, on/off, 1/0. */
int
config_parse_bool(const char *s, bool *ret)
{
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "1")) {
		*ret = true;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "0")) {
		*ret = false;
		return 0;
	}
	return -EINVAL;
}

/* Is s all decimal digits (a numeric uid or gid)? */
bool
config_is_number(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Parse a numeric id; (uid_t)-1 is "no id" for the kernel and is refused. */
int
config_parse_id(const char *s, uint32_t *ret)
{
	uint64_t v;
	int r;

	r = config_parse_u64(s, &v);
	if (r < 0)
		return r;
	if (v >= UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

/* Resolve a user (group: a group) name or number to its id; a name must exist. */
int
config_resolve_id(const char *s, bool group, uint32_t *ret)
{
	struct passwd *pw;
	struct group *gr;

	if (config_is_number(s))
		return config_parse_id(s, ret);
	if (group) {
		gr = getgrnam(s);
		if (gr == NULL)
			return -ENOENT;
		*ret = (uint32_t)gr->gr_gid;
	} else {
		pw = getpwnam(s);
		if (pw == NULL)
			return -ENOENT;
		*ret = (uint32_t)pw->pw_uid;
	}
	return 0;
}

/* Report a bad number for a key, naming what was expected. */
int
config_bad_number(struct config_parse *p, int r, const char *name, const char *value,
		  const char *expected)
{
	if (r == -ERANGE)
		return config_fail_at(p, -EINVAL, p->line, "%s = %s: out of range", name, value);
	return config_fail_at(p, -EINVAL, p->line, "%s = %s: expected %s", name, value, expected);
}

/* Parse a non-zero 32-bit count. */
int
config_key_u32(struct config_parse *p, const char *name, const char *value, uint32_t *ret)
{
	uint64_t v;
	int r;

	*ret = 0;
	r = config_parse_u64(value, &v);
	if (r == 0 && v > UINT32_MAX)
		r = -ERANGE;
	if (r < 0)
		return config_bad_number(p, r, name, value, "a decimal number");
	if (v == 0)
		return config_fail_at(p, -EINVAL, p->line, "%s must not be 0", name);
	*ret = (uint32_t)v;
	return 0;
}

/*
 * The next item of a comma-separated list at *s (blanks around it dropped)
 * into item; *s moves past it and its comma. Returns 1, 0 at the end, or
 * -errno for an empty or too long item (the error at line of p names key).
 */
int
config_list_next(struct config_parse *p, unsigned line, const char *key, const char **s, char *item,
		 size_t itemlen)
{
	const char *start, *end;
	size_t len;

	item[0] = '\0';
	if (**s == '\0')
		return 0;
	while (**s == ' ' || **s == '\t')
		(*s)++;
	start = *s;
	while (**s != '\0' && **s != ',')
		(*s)++;
	end = *s;
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	len = (size_t)(end - start);
	if (len == 0)
		return config_fail_at(p, -EINVAL, line, "%s: empty name in the list", key);
	if (len >= itemlen)
		return config_fail_at(p, -EINVAL, line, "%s: name too long", key);
	memcpy(item, start, len);
	item[len] = '\0';
	if (**s == ',') {
		(*s)++;
		if (**s == '\0')
			return config_fail_at(p, -EINVAL, line, "%s: empty name in the list", key);
	}
	return 1;
}

/* Parse a comma-separated list of users or groups into ids. */
int
config_key_list(struct config_parse *p, const char *name, const char *value, bool groups,
		uint32_t *ids, size_t *ret_n)
{
	char item[256];
	size_t n = 0;
	const char *s = value;
	int r;

	while ((r = config_list_next(p, p->line, name, &s, item, sizeof(item))) > 0) {
		if (n == CONFIG_LIST_MAX)
			return config_fail_at(p, -EINVAL, p->line, "%s: more than %d entries", name,
					      CONFIG_LIST_MAX);
		r = config_resolve_id(item, groups, &ids[n]);
		if (r == -ENOENT)
			return config_fail_at(p, -EINVAL, p->line, "%s: unknown %s '%s'", name,
					      groups ? "group" : "user", item);
		if (r < 0)
			return config_fail_at(p, -EINVAL, p->line, "%s: bad %s '%s': %s", name,
					      groups ? "group" : "user", item, strerror(-r));
		n++;
	}
	if (r < 0)
		return r;
	*ret_n = n;
	return 0;
}

/* Replace a string option with a copy of value. */
int
config_set_string(char **slot, const char *value)
{
	char *s = strdup(value);

	if (s == NULL)
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

/* Parse the value of limit l (named name in the file) by its kind and bound. */
int
config_limit_value(struct config_parse *p, enum proto_limit l, const char *name, const char *value,
		   uint64_t *ret)
{
	const struct limit_row *row = &limit_table[l];
	uint64_t v;
	int r;

	*ret = 0;
	if (row->kind == LIMIT_KIND_BYTES)
		r = config_parse_size(value, &v);
	else
		r = config_parse_u64(value, &v);
	if (r < 0)
		return config_bad_number(p, r, name, value,
					 row->kind == LIMIT_KIND_BYTES ? "a size (K, M or G suffix)"
								       : "a decimal number");
	if (v == 0)
		return config_fail_at(p, -EINVAL, p->line, "%s must not be 0", name);
	if (v > row->bound)
		return config_fail_at(p, -EINVAL, p->line,
				      "%s = %s: above what the protocol carries (%llu)", name,
				      value, (unsigned long long)row->bound);
	*ret = v;
	return 0;
}
