/* config_parse.c: reading airlockd.conf: inih, the sections, the value parsers, load and free. */
#include "config_parse.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "limit.h"
#include "log.h"
#include "rules.h"
#include "compiler.h"

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

/* Handle one key of [limits]: NAME sets the default, NAME_max the ceiling. */
static int
config_key_limits(struct config_parse *p, const char *name, const char *value)
{
	size_t len = strlen(name);
	enum proto_limit l;
	bool is_max = false;
	uint64_t v;
	int r;

	if (limit_from_name(name, len, &l) < 0) {
		is_max = len > 4 && !strcmp(name + len - 4, "_max");
		if (!is_max || limit_from_name(name, len - 4, &l) < 0)
			return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [limits]",
					      name);
	}
	if (p->lines.limit[l][is_max] != 0)
		return config_fail_at(p, -EINVAL, p->line, "duplicate key '%s' in [limits]", name);
	r = config_limit_value(p, l, name, value, &v);
	if (r < 0)
		return r;
	if (is_max)
		p->cfg->ceilings.v[l] = v;
	else
		p->cfg->defaults.v[l] = v;
	p->lines.limit[l][is_max] = p->line;
	return 0;
}

/* Name of the current section for duplicate detection and messages. */
static void
config_section_id(const struct config_parse *p, char *buf, size_t len)
{
	static const char *const names[] = {
		[CONFIG_SEC_NONE] = "",
		[CONFIG_SEC_DAEMON] = "daemon",
		[CONFIG_SEC_ACCESS] = "access",
		[CONFIG_SEC_SANDBOX] = "sandbox",
		[CONFIG_SEC_LIMITS] = "limits",
		[CONFIG_SEC_RUNTIME] = "runtime",
		[CONFIG_SEC_SESSIONS] = "sessions",
		[CONFIG_SEC_PROFILE] = "profile",
		[CONFIG_SEC_EGRESS] = "egress",
		[CONFIG_SEC_MOUNT] = "mount",
	};

	if (p->section == CONFIG_SEC_RUNTIME && p->rt != NULL)
		snprintf(buf, len, "runtime %s", p->rt->name);
	else if (p->section == CONFIG_SEC_PROFILE && p->prof != NULL)
		snprintf(buf, len, "profile %s", p->prof->name);
	else if (p->section == CONFIG_SEC_MOUNT && p->mnt != NULL)
		snprintf(buf, len, "mount %s", p->mnt->name);
	else
		snprintf(buf, len, "%s", names[p->section]);
}

/* The row of section and name; NULL if there is none. */
static const struct config_key *
config_key_find(enum config_section section, const char *name)
{
	size_t i;

	for (i = 0; i < config_nkeys; i++)
		if (config_keys[i].section == section && !strcmp(config_keys[i].name, name))
			return &config_keys[i];
	return NULL;
}

unsigned
config_key_line(const struct config_parse *p, enum config_section section, const char *name)
{
	const struct config_key *k = config_key_find(section, name);

	if (k == NULL)
		fatalx("config: no key %s", name);
	return p->key_line[k - config_keys];
}

/* Where a row's value goes: its offset in the config or in the section being read. */
static void *
config_key_field(struct config_parse *p, const struct config_key *k)
{
	char *base;

	switch (k->section) {
	case CONFIG_SEC_PROFILE:
		base = (char *)p->prof;
		break;
	case CONFIG_SEC_RUNTIME:
		base = (char *)p->rt;
		break;
	case CONFIG_SEC_MOUNT:
		base = (char *)p->mnt;
		break;
	default:
		base = (char *)p->cfg;
		break;
	}
	return base + k->offset;
}

int
config_key_apply(struct config_parse *p, const struct config_key *k, const char *value)
{
	void *field = config_key_field(p, k);
	uint64_t v;
	int r;

	switch (k->type) {
	case CT_U32:
		if (k->min == 1 && k->max == UINT32_MAX)
			return config_key_u32(p, k->name, value, field);
		/* A range that may hold 0: every value in it allowed. */
		r = config_parse_u64(value, &v);
		if (r == 0 && (v < k->min || v > k->max))
			r = -ERANGE;
		if (r < 0) {
			char expected[64];

			snprintf(expected, sizeof(expected), "a number from %llu to %llu",
				 (unsigned long long)k->min, (unsigned long long)k->max);
			return config_bad_number(p, r, k->name, value, expected);
		}
		*(uint32_t *)field = (uint32_t)v;
		return 0;
	case CT_BOOL:
		if (config_parse_bool(value, field) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "%s = %s: expected true or false", k->name, value);
		return 0;
	case CT_MODE:
		r = config_parse_mode(value, field);
		if (r < 0)
			return config_bad_number(p, r, k->name, value, "an octal mode up to 0777");
		return 0;
	case CT_SIZE:
		r = config_parse_size(value, &v);
		if (r < 0)
			return config_bad_number(p, r, k->name, value, "a size (K, M or G suffix)");
		if (v < k->min || v > k->max)
			return config_fail_at(p, -EINVAL, p->line, "%s %s", k->name, k->range);
		*(uint64_t *)field = v;
		return 0;
	case CT_CUSTOM:
		return k->parse(p, k, value, field);
	}
	fatalx("config: key %s: type %d", k->name, (int)k->type);
}

/*
 * One "name = value" of the current section: its row's type or hook, once
 * (CK_REPEAT: each adds). Not a row: a limit of [limits] or [profile], or
 * unknown.
 */
static int
config_key_set(struct config_parse *p, const char *name, const char *value)
{
	const struct config_key *k = config_key_find(p->section, name);
	char section[CONFIG_SECTION_MAX];
	unsigned *line;

	if (k == NULL && p->section == CONFIG_SEC_LIMITS)
		return config_key_limits(p, name, value);
	if (k == NULL && p->section == CONFIG_SEC_PROFILE)
		return config_profile_limit(p, name, value);
	config_section_id(p, section, sizeof(section));
	if (k == NULL)
		return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [%s]", name,
				      section);
	line = &p->key_line[k - config_keys];
	if (*line != 0 && !(k->flags & CK_REPEAT))
		return config_fail_at(p, -EINVAL, p->line, "duplicate key '%s' in [%s]", name,
				      section);
	*line = p->line;
	return config_key_apply(p, k, value);
}

/* inih handler: one "name = value" of the current section. Returns nonzero on success. */
static int
config_ini_handler(void *user, const char *section UNUSED, const char *name, const char *value)
{
	struct config_parse *p = user;

	/* section: the reader tracked it, see config_section_begin(). */
	if (p->error != 0)
		return 0;
	if (value == NULL || value[0] == '\0') {
		config_fail_at(p, -EINVAL, p->line, "'%s' has an empty value", name);
		return 0;
	}
	if (p->section == CONFIG_SEC_NONE) {
		config_fail_at(p, -EINVAL, p->line, "'%s' outside of any section", name);
		return 0;
	}
	return config_key_set(p, name, value) == 0;
}

/* The sections by name; a named one ("[runtime NAME]": the name has its
 * blank) begins through begin with NAME. */
struct config_section_name {
	const char *name;
	enum config_section section;
	int (*begin)(struct config_parse *p, const char *name);
};

static const struct config_section_name config_sections[] = {
	{"daemon", CONFIG_SEC_DAEMON, NULL},
	{"access", CONFIG_SEC_ACCESS, NULL},
	{"sandbox", CONFIG_SEC_SANDBOX, NULL},
	{"limits", CONFIG_SEC_LIMITS, NULL},
	{"sessions", CONFIG_SEC_SESSIONS, NULL},
	{"egress", CONFIG_SEC_EGRESS, NULL},
	{"runtime ", CONFIG_SEC_RUNTIME, config_runtime_begin},
	{"profile ", CONFIG_SEC_PROFILE, config_profile_begin},
	{"mount ", CONFIG_SEC_MOUNT, config_mount_begin},
};

/*
 * A section header line, seen by the reader before inih parses it: inih only
 * calls the handler for keys, so an unknown or empty section would otherwise
 * pass unnoticed.
 */
static int
config_section_begin(struct config_parse *p, const char *line)
{
	char name[CONFIG_SECTION_MAX];
	const char *end = strchr(line, ']');
	size_t len, i;
	int r;

	if (end == NULL)
		return config_fail_at(p, -EINVAL, p->line,
				      "syntax error: no ']' in section header");
	r = config_runtime_end(p);
	if (r < 0)
		return r;
	/* A new [profile], [runtime] or [mount] may set each of its keys again. */
	for (i = 0; i < config_nkeys; i++)
		if (config_keys[i].section == CONFIG_SEC_PROFILE ||
		    config_keys[i].section == CONFIG_SEC_RUNTIME ||
		    config_keys[i].section == CONFIG_SEC_MOUNT)
			p->key_line[i] = 0;
	p->prof = NULL;
	p->mnt = NULL;
	len = (size_t)(end - line - 1);
	if (len >= sizeof(name))
		return config_fail_at(p, -EINVAL, p->line, "unknown section");
	memcpy(name, line + 1, len);
	name[len] = '\0';
	for (i = 0; i < sizeof(config_sections) / sizeof(config_sections[0]); i++) {
		const struct config_section_name *t = &config_sections[i];
		size_t tlen = strlen(t->name);
		const char *arg;

		if (t->begin == NULL ? strcmp(name, t->name) != 0
				     : strncmp(name, t->name, tlen) != 0)
			continue;
		p->section = t->section;
		if (t->begin == NULL)
			return 0;
		arg = name + tlen;
		while (*arg == ' ' || *arg == '\t')
			arg++;
		return t->begin(p, arg);
	}
	return config_fail_at(p, -EINVAL, p->line, "unknown section [%s]", name);
}

/*
 * inih reader: one line of the file, counted, so that errors can name the
 * line whatever INI_HANDLER_LINENO the library was built with. Leading blanks
 * are dropped so that inih never takes an indented line for a continuation
 * of the previous value. Returning NULL ends the parse.
 */
static char *
config_ini_reader(char *str, int num, void *stream)
{
	struct config_parse *p = stream;
	const char *s;
	ssize_t n;
	size_t len;

	if (p->error != 0 || num < 2)
		return NULL;
	n = getline(&p->buf, &p->bufsize, p->fp);
	if (n < 0) {
		if (ferror(p->fp))
			config_fail_at(p, -EIO, p->line + 1, "read error");
		return NULL;
	}
	p->line++;
	if (memchr(p->buf, '\0', (size_t)n) != NULL) {
		config_fail_at(p, -EINVAL, p->line, "NUL byte in line");
		return NULL;
	}
	s = p->buf;
	while (*s == ' ' || *s == '\t')
		s++;
	len = (size_t)n - (size_t)(s - p->buf);
	/* inih reads into a fixed buffer of num bytes (INI_MAX_LINE); never split a line. */
	if (len + 1 > (size_t)num) {
		config_fail_at(p, -EINVAL, p->line, "line too long (at most %d bytes)", num - 2);
		return NULL;
	}
	if (*s == '[' && config_section_begin(p, s) < 0)
		return NULL;
	memcpy(str, s, len + 1);
	return str;
}

/* Open the file with config_file_open()'s checks, its error the parse's first. */
static int
config_open(struct config_parse *p, bool must_exist, FILE **ret)
{
	int r;

	if (p->error != 0)
		return config_file_open(p->path, must_exist, ret, NULL, 0) < 0 ? p->error : 0;
	r = config_file_open(p->path, must_exist, ret, p->err, p->errlen);
	if (r < 0)
		p->error = r;
	return r;
}

/* Parse an opened stream into p->cfg. */
static int
config_parse_stream(struct config_parse *p, FILE *fp)
{
	int r;

	p->fp = fp;
	r = ini_parse_stream(config_ini_reader, p, config_ini_handler, p);
	if (p->error == 0) {
		if (r > 0)
			config_fail_at(p, -EINVAL, (unsigned)r, "syntax error");
		else if (r == -2)
			config_fail_at(p, -ENOMEM, 0, "out of memory");
		else if (r < 0)
			config_fail_at(p, -EIO, 0, "cannot read");
		else
			config_runtime_end(p);
	}
	p->fp = NULL;
	return p->error;
}

/* Read the file into cfg; a missing file is fine unless must_exist. */
static int
config_read(struct config_parse *p, bool must_exist)
{
	FILE *fp = NULL;
	int r;

	r = config_open(p, must_exist, &fp);
	if (r < 0 || fp == NULL)
		return r;
	r = config_parse_stream(p, fp);
	fclose(fp);
	return r;
}

/*
 * Defaults, then the file at path (checked) or the stream mem (unchecked),
 * then the checks across keys. On error cfg is freed.
 */
static int
config_load_from(struct config *cfg, const char *path, bool must_exist, FILE *mem, char *err,
		 size_t errlen)
{
	struct config_parse p;
	size_t i;
	int r;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (cfg == NULL)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.path = path;
	p.err = err;
	p.errlen = errlen;

	r = config_defaults(&p);
	if (r < 0) {
		config_fail_at(&p, r, 0, "out of memory");
		goto out;
	}
	if (mem != NULL)
		r = config_parse_stream(&p, mem);
	else if (path != NULL)
		r = config_read(&p, must_exist);
	if (r < 0)
		goto out;
	r = config_finish(&p);
out:
	for (i = 0; i < p.npending; i++)
		free(p.pending[i].value);
	free(p.buf);
	if (r < 0)
		config_free(cfg);
	return r;
}

int
config_load(struct config *cfg, const char *path, bool must_exist, char *err, size_t errlen)
{
	return config_load_from(cfg, path, must_exist, NULL, err, errlen);
}

int
config_load_buffer(struct config *cfg, const char *name, const void *buf, size_t len, char *err,
		   size_t errlen)
{
	FILE *mem;
	int r;

	if (buf == NULL && len > 0)
		return -EINVAL;
	if (len == 0)
		return config_load_from(cfg, NULL, false, NULL, err, errlen);
	mem = fmemopen((void *)buf, len, "r");
	if (mem == NULL) {
		r = -errno;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "%s: fmemopen: %s", name, strerror(-r));
		if (cfg != NULL)
			memset(cfg, 0, sizeof(*cfg));
		return r;
	}
	r = config_load_from(cfg, name, false, mem, err, errlen);
	fclose(mem);
	return r;
}

void
config_free(struct config *cfg)
{
	size_t i;

	if (cfg == NULL)
		return;
	free(cfg->socket_path);
	free(cfg->service_user);
	free(cfg->hostname);
	for (i = 0; i < CONFIG_RUNTIMES_MAX; i++)
		config_runtime_clear(&cfg->runtimes[i]);
	for (i = 0; i < CONFIG_PROFILES_MAX; i++) {
		free(cfg->profiles[i].egress);
		config_hidden_clear(&cfg->profiles[i]);
	}
	memset(cfg, 0, sizeof(*cfg));
}
