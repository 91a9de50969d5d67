/* config_parse.c: reading airlockd.conf: inih, the sections, load and free (the value
 * parsers: config_value.c; the key table and its walk: config_keys.c). */
#include "config_parse.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "limit.h"
#include "log.h"
#include "rules.h"
#include "compiler.h"

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
	free(cfg->session_state_dir);
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
