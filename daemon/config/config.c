/* config.c: airlockd's configuration: built-in defaults, the file (inih), and its checks. */
#include "config.h"
#include "advisory.h"

#include "cgroup.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "limit.h"
#include "plan.h"
#include "log.h"
#include "memfd.h"
#include "rules.h"
#include "sandbox_fs_root.h"
#include "seccomp_policy.h"
#include "compiler.h"
#include "fdio.h"

#define CONFIG_HOSTNAME_MAX 64
#define CONFIG_SECTION_MAX 128

enum config_section {
	CONFIG_SEC_NONE = 0,
	CONFIG_SEC_DAEMON,
	CONFIG_SEC_ACCESS,
	CONFIG_SEC_SANDBOX,
	CONFIG_SEC_LIMITS,
	CONFIG_SEC_RUNTIME,
	CONFIG_SEC_SESSIONS,
	CONFIG_SEC_PROFILE,
	CONFIG_SEC_EGRESS,
	CONFIG_SEC_MOUNT,
};

/* A list of [mount] names (mounts =, allow_mounts =) read before every
 * [mount] section may have been: resolved into its mask at the end. */
struct config_pending_mounts {
	uint32_t *mask;
	char *value; /* owned */
	unsigned line;
	const char *key;
};

/* [profile] mounts and allow_mounts, [runtime] mounts */
#define CONFIG_PENDING_MAX (2 * CONFIG_PROFILES_MAX + CONFIG_RUNTIMES_MAX)

/* Where a value came from: 0 for a built-in default, else its line in the file. */
struct config_lines {
	unsigned limit[PROTO_LIMIT_COUNT_][2]; /* [0] default, [1] ceiling */
	unsigned uid_base;
	unsigned uid_count;
	unsigned user;
	unsigned socket_group;
	unsigned max_runs_per_uid;
	unsigned max_interpreters;
	unsigned max_interpreters_per_uid;
	unsigned default_profile;
	unsigned profile_limit[CONFIG_PROFILES_MAX][PROTO_LIMIT_COUNT_]; /* 0: not set */
	unsigned profile_subprocess[CONFIG_PROFILES_MAX];		 /* subprocess = */
	unsigned profile_hidden[CONFIG_PROFILES_MAX][CONFIG_HIDDEN_MAX]; /* each path's line */
	unsigned profile_network[CONFIG_PROFILES_MAX];			 /* network = */
	unsigned profile_hosts[CONFIG_PROFILES_MAX]; /* allow_hosts = or allow_private_hosts = */
	unsigned profile_lists[CONFIG_PROFILES_MAX]; /* mounts, allow_mounts, blocked_imports = */
};

/* State of one read of a file: the reader and the handler share it. */
struct config_parse {
	struct config *cfg;
	const char *path;
	FILE *fp;
	char *buf; /* getline() buffer */
	size_t bufsize;
	unsigned line;
	int error; /* first error, 0 or -errno */
	char *err;
	size_t errlen;
	char **seen; /* "section/key" of every key read, for duplicates */
	size_t nseen;
	enum config_section section;
	struct config_runtime *rt; /* the [runtime NAME] being read */
	unsigned rt_line;
	bool rt_from_file[CONFIG_RUNTIMES_MAX];
	unsigned rt_argv_line[CONFIG_RUNTIMES_MAX]; /* 0: built in */
	bool rt_prestart_set[CONFIG_RUNTIMES_MAX];  /* prestart = given */
	struct config_profile *prof;		    /* the [profile NAME] being read */
	bool prof_from_file[CONFIG_PROFILES_MAX];
	struct config_mount *mnt;		     /* the [mount NAME] being read */
	unsigned mnt_line[CONFIG_MOUNTS_MAX];	     /* its header */
	unsigned mnt_source_line[CONFIG_MOUNTS_MAX]; /* its source = */
	unsigned mnt_target_line[CONFIG_MOUNTS_MAX]; /* its target = */
	struct config_pending_mounts pending[CONFIG_PENDING_MAX];
	size_t npending;
	struct config_lines lines;
};

/*
 * The built-in profiles (issue 17's numbers). A limit not named here is the
 * [limits] default. cpu_ms is the wall time, at most the built-in cpu
 * ceiling, so that the defaults need no clamping. Each is clamped to the
 * [limits] ceilings at load, with a log line; a [profile NAME] section of the
 * same name replaces it whole.
 */
static const struct {
	const char *name;
	uint64_t wall_ms, cpu_ms, memory_bytes, processes;
} config_builtin_profiles[] = {
	{"minimal", 30000, 30000, 128ULL << 20, 16},
	{"standard", 60000, 60000, 512ULL << 20, 64},
	{"generous", 300000, 60000, 2ULL << 30, 256},
};

/* The runtimes that exist without a file; "need" must exist for the runtime to be offered. */
static const struct {
	const char *name;
	const char *argv;
	const char *code_name;
	const char *need;
} config_builtin_runtimes[] = {
	{"python", "/usr/bin/python3 -I -S -B {code}", "main.py", NULL},
	{"python-site", "/usr/bin/python3 -I -B {code}", "main.py", NULL},
	{"sh", "/bin/sh {code}", "main.sh", NULL},
	{"bash", "/bin/bash {code}", "main.sh", NULL},
	{"node", "/usr/bin/node {code}", "main.js", "/usr/bin/node"},
};

/* Record the first error of a parse, at a given line; returns the error. */
static int __attribute__((format(printf, 4, 5)))
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

/* Split a value into whitespace-separated words; the result is owned by the caller. */
static int
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

/* Free a runtime's argv and clear everything but its name. */
static void
config_runtime_clear(struct config_runtime *rt)
{
	size_t i;

	for (i = 0; i < CONFIG_RUNTIME_ARGV_MAX + 1; i++) {
		free(rt->argv[i]);
		rt->argv[i] = NULL;
	}
	rt->argc = 0;
	rt->code_name[0] = '\0';
	rt->is_exec = false;
	rt->mounts = 0;
	for (i = 0; i < CONFIG_RUNTIME_ENV_MAX + 1; i++) {
		free(rt->env[i]);
		rt->env[i] = NULL;
	}
	rt->nenv = 0;
	rt->cwd[0] = '\0';
	rt->prestart = false;
}

/* Read the unsigned number in base that s starts with (a digit first, no
 * sign or blank); *ret_end points past it. */
static int
config_parse_leading(const char *s, int base, unsigned long long *ret, char **ret_end)
{
	unsigned long long v;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, ret_end, base);
	if (errno != 0)
		return -errno;
	*ret = v;
	return 0;
}

/* Parse a decimal unsigned integer: digits only, no sign, no space, no overflow. */
static int
config_parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;
	int r;

	r = config_parse_leading(s, 10, &v, &end);
	if (r < 0)
		return r;
	if (*end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Parse a byte count with an optional binary suffix K, M or G. */
static int
config_parse_size(const char *s, uint64_t *ret)
{
	unsigned long long v;
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
static int
config_parse_mode(const char *s, mode_t *ret)
{
	unsigned long long v;
	char *end;
	int r;

	r = config_parse_leading(s, 8, &v, &end);
	if (r < 0)
		return r;
	if (*end != '\0')
		return -EINVAL;
	if (v > 0777)
		return -ERANGE;
	*ret = (mode_t)v;
	return 0;
}

/* Parse a boolean: true/false, yes/no, on/off, 1/0. */
static int
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
static bool
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
static int
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
static int
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

/* Set the service user from a name or number that must exist in the user database. */
static int
config_set_service_user(struct config *cfg, const char *s)
{
	struct passwd *pw;
	uint32_t id;
	char *name;
	int r;

	if (config_is_number(s)) {
		r = config_parse_id(s, &id);
		if (r < 0)
			return r;
		pw = getpwuid((uid_t)id);
	} else {
		pw = getpwnam(s);
	}
	if (pw == NULL)
		return -ENOENT;
	name = strdup(pw->pw_name);
	if (name == NULL)
		return -ENOMEM;
	free(cfg->service_user);
	cfg->service_user = name;
	cfg->service_uid = pw->pw_uid;
	cfg->service_gid = pw->pw_gid;
	return 0;
}

/* Report a bad number for a key, naming what was expected. */
static int
config_bad_number(struct config_parse *p, int r, const char *name, const char *value,
		  const char *expected)
{
	if (r == -ERANGE)
		return config_fail_at(p, -EINVAL, p->line, "%s = %s: out of range", name, value);
	return config_fail_at(p, -EINVAL, p->line, "%s = %s: expected %s", name, value, expected);
}

/* Parse a non-zero 32-bit count. */
static int
config_key_u32(struct config_parse *p, const char *name, const char *value, uint32_t *ret)
{
	uint64_t v;
	int r;

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
static int
config_list_next(struct config_parse *p, unsigned line, const char *key, const char **s, char *item,
		 size_t itemlen)
{
	const char *start, *end;
	size_t len;

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
static int
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

/* Keep a list of [mount] names for mask, resolved once every section is read. */
static int
config_key_mounts(struct config_parse *p, const char *key, const char *value, uint32_t *mask)
{
	struct config_pending_mounts *pm;

	if (p->npending == CONFIG_PENDING_MAX)
		return config_fail_at(p, -EINVAL, p->line, "too many mount lists");
	pm = &p->pending[p->npending];
	pm->value = strdup(value);
	if (pm->value == NULL)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	pm->mask = mask;
	pm->line = p->line;
	pm->key = key;
	p->npending++;
	*mask = 0;
	return 0;
}

/* Handle one key of [mount NAME]: source, target, package. Checked at the end. */
static int
config_key_mount(struct config_parse *p, const char *name, const char *value)
{
	struct config_mount *m = p->mnt;
	size_t idx = (size_t)(m - p->cfg->mounts);

	if (!strcmp(name, "source") || !strcmp(name, "target")) {
		bool src = name[0] == 's';

		if (strlen(value) >= ROOTSPEC_PATH_MAX)
			return config_fail_at(p, -EINVAL, p->line, "%s: longer than %d bytes", name,
					      ROOTSPEC_PATH_MAX - 1);
		strcpy(src ? m->source : m->target, value);
		if (src)
			p->mnt_source_line[idx] = p->line;
		else
			p->mnt_target_line[idx] = p->line;
		return 0;
	}
	if (!strcmp(name, "package")) {
		if (config_parse_bool(value, &m->package) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "package: expected true or false, got '%s'", value);
		return 0;
	}
	return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [mount %s]", name, m->name);
}

/* Is this a valid host name: 1 to 64 letters, digits, '-' and '.', not starting with '-'? */
static bool
config_hostname_valid(const char *s)
{
	size_t len = strlen(s), i;

	if (len == 0 || len > CONFIG_HOSTNAME_MAX || s[0] == '-' || s[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

/* Replace a string option with a copy of value. */
static int
config_set_string(char **slot, const char *value)
{
	char *s = strdup(value);

	if (s == NULL)
		return -ENOMEM;
	free(*slot);
	*slot = s;
	return 0;
}

/* Handle one key of [daemon]. */
static int
config_key_daemon(struct config_parse *p, const char *name, const char *value)
{
	struct config *cfg = p->cfg;
	uint64_t v;
	uint32_t id;
	int r;

	if (!strcmp(name, "socket")) {
		if (value[0] != '/')
			return config_fail_at(p, -EINVAL, p->line, "socket: not an absolute path");
		if (strlen(value) >= sizeof(((struct sockaddr_un *)NULL)->sun_path))
			return config_fail_at(p, -EINVAL, p->line,
					      "socket: path longer than a socket address allows");
		r = config_set_string(&cfg->socket_path, value);
		if (r < 0)
			return config_fail_at(p, r, p->line, "out of memory");
	} else if (!strcmp(name, "socket_user")) {
		r = config_resolve_id(value, false, &id);
		if (r < 0)
			return config_fail_at(p, -EINVAL, p->line, "socket_user: unknown user '%s'",
					      value);
		cfg->socket_uid = (uid_t)id;
	} else if (!strcmp(name, "socket_group")) {
		r = config_resolve_id(value, true, &id);
		if (r < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "socket_group: unknown group '%s'", value);
		cfg->socket_gid = (gid_t)id;
		p->lines.socket_group = p->line;
	} else if (!strcmp(name, "socket_mode")) {
		r = config_parse_mode(value, &cfg->socket_mode);
		if (r < 0)
			return config_bad_number(p, r, name, value, "an octal mode up to 0777");
	} else if (!strcmp(name, "user")) {
		r = config_set_service_user(cfg, value);
		if (r == -ENOMEM)
			return config_fail_at(p, r, p->line, "out of memory");
		if (r < 0)
			return config_fail_at(p, -EINVAL, p->line, "user: unknown user '%s'",
					      value);
		if (cfg->service_uid == 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "user: the service user must not be root");
		p->lines.user = p->line;
	} else if (!strcmp(name, "max_connections_per_uid")) {
		return config_key_u32(p, name, value, &cfg->max_connections_per_uid);
	} else if (!strcmp(name, "max_runs_per_uid")) {
		p->lines.max_runs_per_uid = p->line;
		return config_key_u32(p, name, value, &cfg->max_runs_per_uid);
	} else if (!strcmp(name, "max_runs")) {
		return config_key_u32(p, name, value, &cfg->max_runs);
	} else if (!strcmp(name, "prepared_sandboxes") ||
		   !strcmp(name, "prestarted_interpreters")) {
		/* 0 is allowed: every run then prepares its own sandbox, or no
		 * runtime's interpreters are started ahead. */
		r = config_parse_u64(value, &v);
		if (r == 0 && v > 64)
			r = -ERANGE;
		if (r < 0)
			return config_bad_number(p, r, name, value, "a number from 0 to 64");
		*(!strcmp(name, "prepared_sandboxes") ? &cfg->prepared_sandboxes
						      : &cfg->prestarted_interpreters) =
			(uint32_t)v;
	} else if (!strcmp(name, "max_queued")) {
		return config_key_u32(p, name, value, &cfg->max_queued);
	} else if (!strcmp(name, "max_queued_per_uid")) {
		return config_key_u32(p, name, value, &cfg->max_queued_per_uid);
	} else if (!strcmp(name, "stop_grace_ms")) {
		return config_key_u32(p, name, value, &cfg->stop_grace_ms);
	} else if (!strcmp(name, "max_queued_bytes")) {
		r = config_parse_size(value, &v);
		if (r < 0)
			return config_bad_number(p, r, name, value, "a size (K, M or G suffix)");
		/* Less than one message could never be queued at all. */
		if (v < PROTO_MSG_MAX)
			return config_fail_at(p, -EINVAL, p->line,
					      "max_queued_bytes must be at least %d (one message)",
					      PROTO_MSG_MAX);
		cfg->max_queued_bytes = v;
	} else if (!strcmp(name, "max_queued_fds") || !strcmp(name, "max_fds_per_uid")) {
		/* Less than one packet's fds could never be sent at all. */
		r = config_parse_u64(value, &v);
		if (r == 0 && (v < PROTO_FDS_MAX || v > 65536))
			r = -ERANGE;
		if (r < 0)
			return config_bad_number(p, r, name, value, "a number from 64 to 65536");
		if (!strcmp(name, "max_queued_fds"))
			cfg->max_queued_fds = (uint32_t)v;
		else
			cfg->max_fds_per_uid = (uint32_t)v;
	} else if (!strcmp(name, "max_bytes_per_uid")) {
		r = config_parse_size(value, &v);
		if (r < 0)
			return config_bad_number(p, r, name, value, "a size (K, M or G suffix)");
		if (v < (1ULL << 20))
			return config_fail_at(p, -EINVAL, p->line,
					      "max_bytes_per_uid must be at least 1M");
		cfg->max_bytes_per_uid = v;
	} else {
		return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [daemon]", name);
	}
	return 0;
}

/* Handle one key of [access]. */
static int
config_key_access(struct config_parse *p, const char *name, const char *value)
{
	struct config *cfg = p->cfg;
	uint32_t ids[CONFIG_LIST_MAX];
	size_t n = 0, i;
	int r;

	if (!strcmp(name, "allow_users")) {
		r = config_key_list(p, name, value, false, ids, &n);
		if (r < 0)
			return r;
		for (i = 0; i < n; i++)
			cfg->allow_uids[i] = (uid_t)ids[i];
		cfg->nallow_uids = n;
	} else if (!strcmp(name, "allow_groups")) {
		r = config_key_list(p, name, value, true, ids, &n);
		if (r < 0)
			return r;
		for (i = 0; i < n; i++)
			cfg->allow_gids[i] = (gid_t)ids[i];
		cfg->nallow_gids = n;
	} else if (!strcmp(name, "allow_all")) {
		r = config_parse_bool(value, &cfg->allow_all);
		if (r < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "allow_all = %s: expected true or false", value);
	} else if (!strcmp(name, "default_profile")) {
		/* Whether it exists is checked at the end: [profile] may follow. */
		if (!rules_profile_name_valid(value))
			return config_fail_at(p, -EINVAL, p->line,
					      "default_profile = %s: expected 1 to %d of a-z, 0-9, "
					      "'-', '_'",
					      value, PROTO_PROFILE_MAX);
		strcpy(cfg->default_profile, value);
		p->lines.default_profile = p->line;
	} else {
		return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [access]", name);
	}
	return 0;
}

/* Handle one key of [sandbox]. */
static int
config_key_sandbox(struct config_parse *p, const char *name, const char *value)
{
	struct config *cfg = p->cfg;
	uint64_t v;
	uint32_t id;
	int r;

	if (!strcmp(name, "uid_base")) {
		r = config_parse_id(value, &id);
		if (r < 0)
			return config_bad_number(p, r, name, value, "a decimal uid");
		if (id == 0)
			return config_fail_at(p, -EINVAL, p->line, "uid_base must not be 0");
		cfg->uid_base = (uid_t)id;
		p->lines.uid_base = p->line;
	} else if (!strcmp(name, "uid_count")) {
		r = config_key_u32(p, name, value, &id);
		if (r < 0)
			return r;
		if (id < 2 || id % 2 != 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "uid_count must be even and at least 2 (2 per run)");
		cfg->uid_count = id;
		p->lines.uid_count = p->line;
	} else if (!strcmp(name, "hostname")) {
		if (!config_hostname_valid(value))
			return config_fail_at(p, -EINVAL, p->line,
					      "hostname '%s': expected 1 to %d letters, digits, "
					      "'-' or '.'",
					      value, CONFIG_HOSTNAME_MAX);
		r = config_set_string(&cfg->hostname, value);
		if (r < 0)
			return config_fail_at(p, r, p->line, "out of memory");
	} else if (!strcmp(name, "resource_control")) {
		enum cgroup_kind kind;

		if (cgroup_kind_from_name(value, &kind) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "resource_control = %s: expected auto, cgroup2, "
					      "cgroup1 or rlimit",
					      value);
		cfg->resource_control = (uint32_t)kind;
	} else if (!strcmp(name, "cpu_max_percent")) {
		/* 0: no cap; else a share of one CPU, up to 4096 CPUs' worth. */
		r = config_parse_u64(value, &v);
		if (r == 0 && v > 409600)
			r = -ERANGE;
		if (r < 0)
			return config_bad_number(p, r, name, value, "a number from 0 to 409600");
		cfg->cpu_max_percent = (uint32_t)v;
	} else {
		return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [sandbox]", name);
	}
	return 0;
}

/* Handle one key of [sessions]. */
static int
config_key_sessions(struct config_parse *p, const char *name, const char *value)
{
	struct config *cfg = p->cfg;
	uint64_t v;
	int r;

	if (!strcmp(name, "max_per_uid"))
		return config_key_u32(p, name, value, &cfg->sessions_per_uid);
	if (!strcmp(name, "max_interpreters")) {
		p->lines.max_interpreters = p->line;
		return config_key_u32(p, name, value, &cfg->max_interpreters);
	}
	if (!strcmp(name, "max_interpreters_per_uid")) {
		p->lines.max_interpreters_per_uid = p->line;
		return config_key_u32(p, name, value, &cfg->max_interpreters_per_uid);
	}
	if (!strcmp(name, "idle_timeout_ms"))
		return config_key_u32(p, name, value, &cfg->session_idle_ms);
	if (!strcmp(name, "idle_timeout_ms_max"))
		return config_key_u32(p, name, value, &cfg->session_idle_ms_max);
	if (!strcmp(name, "lifetime_ms"))
		return config_key_u32(p, name, value, &cfg->session_lifetime_ms);
	if (!strcmp(name, "lifetime_ms_max"))
		return config_key_u32(p, name, value, &cfg->session_lifetime_ms_max);
	if (!strcmp(name, "orphan_grace_ms"))
		return config_key_u32(p, name, value, &cfg->session_orphan_grace_ms);
	if (!strcmp(name, "file_max_bytes")) {
		r = config_parse_size(value, &v);
		if (r < 0)
			return config_bad_number(p, r, name, value, "a size (K, M or G suffix)");
		if (v == 0 || v > PROTO_BLOB_MAX)
			return config_fail_at(p, -EINVAL, p->line,
					      "file_max_bytes must be between 1 and 256M");
		cfg->session_file_max = v;
		return 0;
	}
	return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [sessions]", name);
}

/* Parse the value of limit l (named name in the file) by its kind and bound. */
static int
config_limit_value(struct config_parse *p, enum proto_limit l, const char *name, const char *value,
		   uint64_t *ret)
{
	const struct limit_row *row = &limit_table[l];
	uint64_t v;
	int r;

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

/* The profile's egress policy, made on its first egress key. */
static struct egress_policy *
config_profile_egress(struct config_profile *prof)
{
	if (prof->egress == NULL) {
		prof->egress = calloc(1, sizeof(*prof->egress));
		if (prof->egress == NULL)
			return NULL;
		prof->egress->bytes = EGRESS_BYTES_DEFAULT;
		prof->egress->connections = EGRESS_CONNECTIONS_DEFAULT;
	}
	return prof->egress;
}

/*
 * The egress keys of [profile NAME]: network = none|proxy, allow_hosts and
 * allow_private_hosts (docs/design-egress.md, section 2), network_bytes,
 * network_connections. Whether they fit together is checked at the end
 * (config_egress_finish()).
 */
static int
config_key_profile_egress(struct config_parse *p, const char *name, const char *value)
{
	struct config_profile *prof = p->prof;
	size_t idx = (size_t)(prof - p->cfg->profiles);
	struct egress_policy *pol;
	char why[256];
	uint64_t v;
	int r;

	if (!strcmp(name, "network")) {
		if (strcmp(value, "none") && strcmp(value, "proxy"))
			return config_fail_at(p, -EINVAL, p->line,
					      "network = %s: expected none or proxy", value);
		p->lines.profile_network[idx] = p->line;
		if (!strcmp(value, "none"))
			return 0;
	}
	pol = config_profile_egress(prof);
	if (pol == NULL)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	if (!strcmp(name, "network")) {
		prof->network_proxy = true;
		return 0;
	}
	if (!strcmp(name, "allow_hosts") || !strcmp(name, "allow_private_hosts")) {
		r = egress_list_parse(value, name[6] == 'p', pol, why, sizeof(why));
		if (r < 0)
			return config_fail_at(p, -EINVAL, p->line, "%s: %s", name, why);
		if (p->lines.profile_hosts[idx] == 0)
			p->lines.profile_hosts[idx] = p->line;
		return 0;
	}
	if (!strcmp(name, "network_bytes")) {
		r = config_parse_size(value, &v);
		if (r < 0 || v == 0)
			return config_bad_number(p, r < 0 ? r : -ERANGE, name, value,
						 "a size above 0 (K, M or G suffix)");
		pol->bytes = v;
		return 0;
	}
	if (!strcmp(name, "network_connections")) {
		r = config_parse_u64(value, &v);
		if (r < 0 || v == 0 || v > UINT32_MAX)
			return config_bad_number(p, r < 0 ? r : -ERANGE, name, value,
						 "a number of 1 or more");
		pol->connections = (uint32_t)v;
		return 0;
	}
	return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [profile %s]", name,
			      prof->name);
}

/*
 * resolver = IP[:port][, ...]: the name servers the egress proxy asks
 * (a v6 address in brackets when it has a port). Numeric only: the
 * resolver itself is never looked up.
 */
static int
config_egress_resolvers(struct config_parse *p, const char *value)
{
	struct config *cfg = p->cfg;
	const char *s = value;
	size_t n = 0;

	while (*s != '\0') {
		struct sockaddr_storage ss;
		const char *e;
		char one[64];

		while (*s == ',' || *s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		for (e = s; *e != '\0' && *e != ',' && *e != ' ' && *e != '\t'; e++)
			;
		if ((size_t)(e - s) >= sizeof(one) || n == CONFIG_RESOLVERS_MAX)
			return config_fail_at(p, -EINVAL, p->line,
					      "resolver: at most %d addresses of IP[:port]",
					      CONFIG_RESOLVERS_MAX);
		memcpy(one, s, (size_t)(e - s));
		one[e - s] = '\0';
		if (egress_resolver_parse(one, &ss) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "resolver: '%s' is not IP[:port] ([IPv6]:port)", one);
		strcpy(cfg->egress_resolvers[n++], one);
		s = e;
	}
	if (n == 0)
		return config_fail_at(p, -EINVAL, p->line, "resolver: no address");
	cfg->negress_resolvers = n;
	return 0;
}

/* Handle one key of [egress]. */
static int
config_key_egress(struct config_parse *p, const char *name, const char *value)
{
	struct config *cfg = p->cfg;
	uint32_t v;
	int r;

	if (!strcmp(name, "resolver"))
		return config_egress_resolvers(p, value);
	if (!strcmp(name, "port")) {
		r = config_key_u32(p, name, value, &v);
		if (r < 0)
			return r;
		if (v == 0 || v > 65535)
			return config_fail_at(p, -EINVAL, p->line, "port = %s: 1 to 65535", value);
		cfg->egress_port = (uint16_t)v;
		return 0;
	}
	if (!strcmp(name, "max_connections")) {
		r = config_key_u32(p, name, value, &v);
		if (r < 0)
			return r;
		if (v == 0)
			return config_fail_at(p, -EINVAL, p->line, "%s must not be 0", name);
		cfg->egress_connections_max = v;
		return 0;
	}
	if (!strcmp(name, "connect_timeout_ms") || !strcmp(name, "idle_timeout_ms")) {
		r = config_key_u32(p, name, value, &v);
		if (r < 0)
			return r;
		if (v == 0)
			return config_fail_at(p, -EINVAL, p->line, "%s must not be 0", name);
		*(name[0] == 'c' ? &cfg->egress_connect_ms : &cfg->egress_idle_ms) = v;
		return 0;
	}
	return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [egress]", name);
}

/*
 * The egress keys once every section is read: network = proxy needs
 * allow_hosts; allow-list keys need network = proxy (a list that does
 * nothing is a mistake the administrator should hear of).
 */
static int
config_egress_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	size_t i, k, total = 0;
	char buf[PROTO_ALLOW_ENTRY_MAX + 1];

	for (i = 0; i < cfg->nprofiles; i++) {
		struct config_profile *prof = &cfg->profiles[i];

		if (prof->network_proxy && prof->egress->nentries == 0)
			return config_fail_at(p, -EINVAL, p->lines.profile_network[i],
					      "[profile %s] network = proxy needs allow_hosts",
					      prof->name);
		if (!prof->network_proxy && prof->egress != NULL)
			return config_fail_at(
				p, -EINVAL,
				p->lines.profile_hosts[i] ? p->lines.profile_hosts[i]
							  : p->lines.profile_network[i],
				"[profile %s] has egress keys but not network = proxy", prof->name);
		for (k = 0; prof->egress != NULL && k < prof->egress->nentries; k++) {
			egress_entry_format(&prof->egress->entries[k], buf, sizeof(buf));
			total += strlen(buf) + 2;
		}
		/* airlock info lists them all in one packet (PROTO_MSG_MAX). */
		if (total > CONFIG_ALLOW_BYTES_MAX)
			return config_fail_at(p, -EINVAL, p->lines.profile_hosts[i],
					      "[profile %s]: the allow-lists of all profiles "
					      "together are longer than %d bytes",
					      prof->name, CONFIG_ALLOW_BYTES_MAX);
	}
	return 0;
}

/* Free a profile's hidden paths. */
static void
config_hidden_clear(struct config_profile *prof)
{
	size_t i;

	for (i = 0; i < CONFIG_HIDDEN_MAX; i++) {
		free(prof->hidden[i]);
		prof->hidden[i] = NULL;
	}
	prof->nhidden = 0;
}

/*
 * hidden_paths = PATH[, PATH...], the key repeated adds (a line holds at most
 * 198 bytes): at most CONFIG_HIDDEN_MAX in all, each absolute, normalised,
 * at most 255 bytes, beneath /usr or one of the /etc entries the sandbox root
 * makes itself (sandbox_fs_root_hidable: what the kernel can take away, an
 * overlay whiteout or an op undone), none the same as or beneath another.
 * Checked here at start-up and at reload alike.
 */
static int
config_key_hidden(struct config_parse *p, struct config_profile *prof, const char *value)
{
	size_t idx = (size_t)(prof - p->cfg->profiles);
	char item[2 * ROOTSPEC_PATH_MAX], etc[512];
	const char *s = value;
	size_t i, j, total = 0;
	int r;

	/* What is hidden already, for the bound on all profiles together. */
	for (i = 0; i < p->cfg->nprofiles; i++)
		for (j = 0; j < p->cfg->profiles[i].nhidden; j++)
			total += strlen(p->cfg->profiles[i].hidden[j]);
	while ((r = config_list_next(p, p->line, "hidden_paths", &s, item, sizeof(item))) > 0) {
		if (prof->nhidden == CONFIG_HIDDEN_MAX) {
			r = config_fail_at(p, -EINVAL, p->line, "hidden_paths: more than %d paths",
					   CONFIG_HIDDEN_MAX);
			break;
		}
		if (!rootspec_path_normal(item)) {
			r = config_fail_at(p, -EINVAL, p->line,
					   "hidden_paths: %s: expected an absolute path of at most "
					   "%d bytes without '.', '..', '//' or a trailing '/'",
					   item, ROOTSPEC_PATH_MAX - 1);
			break;
		}
		if (!sandbox_fs_root_hidable(item)) {
			sandbox_fs_root_etc_list(etc, sizeof(etc));
			r = config_fail_at(
				p, -EINVAL, p->line,
				"hidden_paths: %s is neither beneath /usr nor one of the "
				"paths the sandbox root makes (%s)",
				item, etc);
			break;
		}
		total += strlen(item);
		if (total > CONFIG_HIDDEN_BYTES_MAX) {
			r = config_fail_at(p, -EINVAL, p->line,
					   "hidden_paths: the paths of all profiles together are "
					   "longer than %d bytes",
					   CONFIG_HIDDEN_BYTES_MAX);
			break;
		}
		prof->hidden[prof->nhidden] = strdup(item);
		if (prof->hidden[prof->nhidden] == NULL) {
			r = config_fail_at(p, -ENOMEM, p->line, "out of memory");
			break;
		}
		p->lines.profile_hidden[idx][prof->nhidden++] = p->line;
	}
	if (r == 0 && sandbox_fs_root_hidden_overlap((const char *const *)prof->hidden,
						     prof->nhidden, &i, &j) < 0)
		r = config_fail_at(p, -EINVAL, p->line, "hidden_paths: %s and %s overlap",
				   prof->hidden[i], prof->hidden[j]);
	return r;
}

/* blocked_imports = a.b, c: at most PROTO_BLOCKED_IMPORTS_MAX module names, each once. */
static int
config_key_blocked_imports(struct config_parse *p, const char *value)
{
	struct config_profile *prof = p->prof;
	char item[PROTO_MODULE_NAME_MAX + 1];
	const char *s = value;
	size_t n = 0, k;
	int r;

	while ((r = config_list_next(p, p->line, "blocked_imports", &s, item, sizeof(item))) > 0) {
		if (!rules_module_name_check(item, strlen(item)))
			return config_fail_at(p, -EINVAL, p->line,
					      "blocked_imports: '%s' is not a Python module name "
					      "(identifiers of A-Z, a-z, 0-9, '_' joined by '.')",
					      item);
		for (k = 0; k < n; k++)
			if (!strcmp(prof->blocked_imports[k], item))
				return config_fail_at(p, -EINVAL, p->line,
						      "blocked_imports: '%s' given twice", item);
		if (n == PROTO_BLOCKED_IMPORTS_MAX)
			return config_fail_at(p, -EINVAL, p->line,
					      "blocked_imports: more than %d names",
					      PROTO_BLOCKED_IMPORTS_MAX);
		strcpy(prof->blocked_imports[n++], item);
	}
	if (r < 0)
		return r;
	prof->nblocked_imports = n;
	return 0;
}

/*
 * Handle one key of [profile NAME]: a [limits] name sets the profile's value
 * (its default and its ceiling), allow_users/allow_groups who may use it,
 * file_write and subprocess policy switches, hidden_paths.
 */
static int
config_key_profile(struct config_parse *p, const char *name, const char *value)
{
	struct config_profile *prof = p->prof;
	size_t idx = (size_t)(prof - p->cfg->profiles);
	uint32_t ids[CONFIG_LIST_MAX];
	enum proto_limit l;
	size_t n = 0, i;
	uint64_t v;
	int r;

	if (!strcmp(name, "hidden_paths"))
		return config_key_hidden(p, prof, value);
	if (!strcmp(name, "mounts") || !strcmp(name, "allow_mounts") ||
	    !strcmp(name, "blocked_imports"))
		p->lines.profile_lists[idx] = p->line;
	if (!strcmp(name, "mounts"))
		return config_key_mounts(p, "mounts", value, &prof->mounts);
	if (!strcmp(name, "allow_mounts"))
		return config_key_mounts(p, "allow_mounts", value, &prof->allow_mounts);
	if (!strcmp(name, "blocked_imports"))
		return config_key_blocked_imports(p, value);
	if (!strcmp(name, "allow_users") || !strcmp(name, "allow_groups")) {
		bool groups = name[6] == 'g';

		r = config_key_list(p, name, value, groups, ids, &n);
		if (r < 0)
			return r;
		for (i = 0; i < n; i++) {
			if (groups)
				prof->allow_gids[i] = (gid_t)ids[i];
			else
				prof->allow_uids[i] = (uid_t)ids[i];
		}
		if (groups)
			prof->nallow_gids = n;
		else
			prof->nallow_uids = n;
		return 0;
	}
	if (!strcmp(name, "network") || !strncmp(name, "allow_", 6) ||
	    !strncmp(name, "network_", 8))
		return config_key_profile_egress(p, name, value);
	if (!strcmp(name, "file_write") || !strcmp(name, "subprocess")) {
		bool on;

		if (config_parse_bool(value, &on) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "%s = %s: expected true or false", name, value);
		if (name[0] == 'f') {
			prof->no_file_write = !on;
		} else {
			prof->no_subprocess = !on;
			p->lines.profile_subprocess[idx] = p->line;
		}
		return 0;
	}
	if (limit_from_name(name, strlen(name), &l) < 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "unknown key '%s' in [profile %s] (a profile's limit is its "
				      "default and its ceiling: no _max)",
				      name, prof->name);
	r = config_limit_value(p, l, name, value, &v);
	if (r < 0)
		return r;
	prof->defaults.v[l] = v;
	p->lines.profile_limit[idx][l] = p->line;
	return 0;
}

/* Is this a valid code file name: not empty, no '/', not "." or "..", printable? */
static bool
config_code_name_valid(const char *s)
{
	return strlen(s) < sizeof(((struct config_runtime *)NULL)->code_name) &&
	       rules_code_name_valid(s);
}

/*
 * env = KEY=VALUE ...: the runtime's environment, words split at blanks, each
 * a valid name (the request's rule) and a value; a request's entry of the
 * same name replaces it (plan_env_build).
 */
static int
config_key_runtime_env(struct config_parse *p, struct config_runtime *rt, const char *value)
{
	char *words[CONFIG_RUNTIME_ENV_MAX + 1];
	size_t n, i;
	int r;

	r = config_split_words(value, words, CONFIG_RUNTIME_ENV_MAX, &n);
	if (r == -E2BIG)
		return config_fail_at(p, -EINVAL, p->line, "env: more than %d words",
				      CONFIG_RUNTIME_ENV_MAX);
	if (r < 0)
		return config_fail_at(p, r, p->line, "out of memory");
	for (i = 0; i < n; i++) {
		const char *eq = strchr(words[i], '=');

		if (eq == NULL || rules_env_name_check(words[i], (size_t)(eq - words[i])) < 0) {
			r = config_fail_at(p, -EINVAL, p->line,
					   "env: '%s' is not KEY=VALUE with KEY of [A-Za-z0-9_] "
					   "(not starting with a digit)",
					   words[i]);
			break;
		}
	}
	if (r < 0) {
		for (i = 0; i < n; i++)
			free(words[i]);
		return r;
	}
	for (i = 0; i < CONFIG_RUNTIME_ENV_MAX + 1; i++) {
		free(rt->env[i]);
		rt->env[i] = i < n ? words[i] : NULL;
	}
	rt->nenv = n;
	return 0;
}

/* Handle one key of [runtime NAME]. */
static int
config_key_runtime(struct config_parse *p, const char *name, const char *value)
{
	struct config_runtime *rt = p->rt;
	char *argv[CONFIG_RUNTIME_ARGV_MAX + 1];
	size_t argc, i, ncode = 0;
	int r;

	if (!strcmp(name, "argv")) {
		r = config_split_words(value, argv, CONFIG_RUNTIME_ARGV_MAX, &argc);
		if (r == -E2BIG)
			return config_fail_at(p, -EINVAL, p->line, "argv: more than %d words",
					      CONFIG_RUNTIME_ARGV_MAX);
		if (r < 0)
			return config_fail_at(p, r, p->line, "out of memory");
		for (i = 0; i < argc; i++)
			if (!strcmp(argv[i], "{code}"))
				ncode++;
		if (argc == 0 || argv[0][0] != '/')
			r = config_fail_at(p, -EINVAL, p->line,
					   "argv: the first word must be an absolute path");
		else if (ncode != 1)
			r = config_fail_at(p, -EINVAL, p->line,
					   "argv: must contain the word {code} exactly once");
		if (r < 0) {
			for (i = 0; i < argc; i++)
				free(argv[i]);
			return r;
		}
		for (i = 0; i < CONFIG_RUNTIME_ARGV_MAX + 1; i++) {
			free(rt->argv[i]);
			rt->argv[i] = argv[i];
			if (argv[i] == NULL)
				break;
		}
		rt->argc = argc;
		p->rt_argv_line[rt - p->cfg->runtimes] = p->line;
	} else if (!strcmp(name, "code_name")) {
		if (!config_code_name_valid(value))
			return config_fail_at(p, -EINVAL, p->line,
					      "code_name '%s': expected a file name (no '/', at "
					      "most %zu bytes)",
					      value, sizeof(rt->code_name) - 1);
		strcpy(rt->code_name, value);
	} else if (!strcmp(name, "prestart")) {
		if (config_parse_bool(value, &rt->prestart) < 0)
			return config_fail_at(p, -EINVAL, p->line,
					      "prestart = %s: expected true or false", value);
		p->rt_prestart_set[rt - p->cfg->runtimes] = true;
	} else if (!strcmp(name, "mounts")) {
		return config_key_mounts(p, "mounts", value, &rt->mounts);
	} else if (!strcmp(name, "env")) {
		return config_key_runtime_env(p, rt, value);
	} else if (!strcmp(name, "cwd")) {
		/* Under the workspace: made there by the code itself if missing
		 * (sandbox_code.c), so it is the code's, like the workspace. */
		if (strlen(value) >= sizeof(rt->cwd) ||
		    (strcmp(value, PLAN_WORKSPACE) != 0 &&
		     (strncmp(value, PLAN_WORKSPACE "/", sizeof(PLAN_WORKSPACE)) != 0 ||
		      rules_workspace_name_check(value + sizeof(PLAN_WORKSPACE)) < 0)))
			return config_fail_at(
				p, -EINVAL, p->line,
				"cwd %s: expected %s or a normalised path beneath it, "
				"under %zu bytes",
				value, PLAN_WORKSPACE, sizeof(rt->cwd));
		strcpy(rt->cwd, value);
	} else {
		return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [runtime %s]", name,
				      rt->name);
	}
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

/* Remember a key; fails when the same key was already set in the same section. */
static int
config_key_seen(struct config_parse *p, const char *name)
{
	char section[CONFIG_SECTION_MAX];
	char **seen;
	char *id;
	size_t i;

	config_section_id(p, section, sizeof(section));
	if (asprintf(&id, "%s/%s", section, name) < 0)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	for (i = 0; i < p->nseen; i++)
		if (!strcmp(p->seen[i], id)) {
			free(id);
			return config_fail_at(p, -EINVAL, p->line, "duplicate key '%s' in [%s]",
					      name, section);
		}
	seen = realloc(p->seen, (p->nseen + 1) * sizeof(*seen));
	if (seen == NULL) {
		free(id);
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	}
	p->seen = seen;
	p->seen[p->nseen++] = id;
	return 0;
}

/* inih handler: one "name = value" of the current section. Returns nonzero on success. */
static int
config_ini_handler(void *user, const char *section UNUSED, const char *name, const char *value)
{
	struct config_parse *p = user;
	int r;

	/* section: the reader tracked it, see config_section_begin(). */
	if (p->error != 0)
		return 0;
	if (value == NULL || value[0] == '\0') {
		config_fail_at(p, -EINVAL, p->line, "'%s' has an empty value", name);
		return 0;
	}
	/* An allow-list (or hidden_paths) is longer than a line: its keys may
	 * repeat, each adds. */
	if (p->section != CONFIG_SEC_NONE &&
	    !(p->section == CONFIG_SEC_PROFILE &&
	      (!strcmp(name, "allow_hosts") || !strcmp(name, "allow_private_hosts") ||
	       !strcmp(name, "hidden_paths"))) &&
	    config_key_seen(p, name) < 0)
		return 0;
	switch (p->section) {
	case CONFIG_SEC_DAEMON:
		r = config_key_daemon(p, name, value);
		break;
	case CONFIG_SEC_ACCESS:
		r = config_key_access(p, name, value);
		break;
	case CONFIG_SEC_SANDBOX:
		r = config_key_sandbox(p, name, value);
		break;
	case CONFIG_SEC_LIMITS:
		r = config_key_limits(p, name, value);
		break;
	case CONFIG_SEC_RUNTIME:
		r = config_key_runtime(p, name, value);
		break;
	case CONFIG_SEC_SESSIONS:
		r = config_key_sessions(p, name, value);
		break;
	case CONFIG_SEC_PROFILE:
		r = config_key_profile(p, name, value);
		break;
	case CONFIG_SEC_EGRESS:
		r = config_key_egress(p, name, value);
		break;
	case CONFIG_SEC_MOUNT:
		r = config_key_mount(p, name, value);
		break;
	default:
		r = config_fail_at(p, -EINVAL, p->line, "'%s' outside of any section", name);
		break;
	}
	return r == 0;
}

/* A runtime section ends: it must have set both argv and code_name. */
static int
config_runtime_end(struct config_parse *p)
{
	struct config_runtime *rt = p->rt;

	if (rt == NULL)
		return 0;
	p->rt = NULL;
	if (rt->argc == 0)
		return config_fail_at(p, -EINVAL, p->rt_line, "[runtime %s] has no argv", rt->name);
	if (rt->code_name[0] == '\0')
		return config_fail_at(p, -EINVAL, p->rt_line, "[runtime %s] has no code_name",
				      rt->name);
	return 0;
}

/*
 * Start a [profile NAME] section: a new profile, or one replacing a built-in
 * whole (what the section does not set is the [limits] default, as for a new
 * one). One slot stays free for the implicit "default".
 */
static int
config_profile_begin(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;
	size_t i;

	if (!rules_profile_name_valid(name))
		return config_fail_at(
			p, -EINVAL, p->line,
			"bad profile name '%s': expected 1 to %d of a-z, 0-9, '-', '_'", name,
			PROTO_PROFILE_MAX);
	if (!strcmp(name, CONFIG_PROFILE_IMPLICIT))
		return config_fail_at(p, -EINVAL, p->line,
				      "[profile %s] is the implicit profile: set [limits] instead",
				      name);
	for (i = 0; i < cfg->nprofiles; i++)
		if (!strcmp(cfg->profiles[i].name, name))
			break;
	if (i < cfg->nprofiles && p->prof_from_file[i])
		return config_fail_at(p, -EINVAL, p->line, "duplicate section [profile %s]", name);
	if (i == cfg->nprofiles) {
		if (cfg->nprofiles == CONFIG_PROFILES_MAX - 1)
			return config_fail_at(p, -EINVAL, p->line, "more than %d profiles",
					      CONFIG_PROFILES_MAX - 1);
		cfg->nprofiles++;
	}
	memset(&cfg->profiles[i], 0, sizeof(cfg->profiles[i]));
	strcpy(cfg->profiles[i].name, name);
	memset(p->lines.profile_limit[i], 0, sizeof(p->lines.profile_limit[i]));
	p->prof_from_file[i] = true;
	p->prof = &cfg->profiles[i];
	return 0;
}

/* Start a [mount NAME] section. */
static int
config_mount_begin(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;

	if (!rules_mount_name_valid(name))
		return config_fail_at(p, -EINVAL, p->line,
				      "bad mount name '%s': expected 1 to %d of a-z, 0-9, '-', '_'",
				      name, PROTO_MOUNT_MAX);
	if (config_mount_find(cfg, name) >= 0)
		return config_fail_at(p, -EINVAL, p->line, "duplicate section [mount %s]", name);
	if (cfg->nmounts == CONFIG_MOUNTS_MAX)
		return config_fail_at(p, -EINVAL, p->line, "more than %d mounts",
				      CONFIG_MOUNTS_MAX);
	p->mnt = &cfg->mounts[cfg->nmounts];
	memset(p->mnt, 0, sizeof(*p->mnt));
	strcpy(p->mnt->name, name);
	p->mnt_line[cfg->nmounts] = p->line;
	cfg->nmounts++;
	return 0;
}

/* Start a [runtime NAME] section: a new runtime, or one replacing a built-in. */
static int
config_runtime_begin(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;
	size_t i;

	if (!rules_runtime_name_valid(name))
		return config_fail_at(
			p, -EINVAL, p->line,
			"bad runtime name '%s': expected 1 to %d of a-z, 0-9, '-', '_'", name,
			PROTO_RUNTIME_MAX);
	if (!strcmp(name, "exec"))
		return config_fail_at(p, -EINVAL, p->line,
				      "[runtime exec] is built in and takes no template");
	for (i = 0; i < cfg->nruntimes; i++)
		if (!strcmp(cfg->runtimes[i].name, name))
			break;
	if (i < cfg->nruntimes && p->rt_from_file[i])
		return config_fail_at(p, -EINVAL, p->line, "duplicate section [runtime %s]", name);
	if (i == cfg->nruntimes) {
		if (cfg->nruntimes == CONFIG_RUNTIMES_MAX)
			return config_fail_at(p, -EINVAL, p->line, "more than %d runtimes",
					      CONFIG_RUNTIMES_MAX);
		memset(&cfg->runtimes[i], 0, sizeof(cfg->runtimes[i]));
		strcpy(cfg->runtimes[i].name, name);
		cfg->nruntimes++;
	}
	config_runtime_clear(&cfg->runtimes[i]);
	p->rt_from_file[i] = true;
	p->rt_prestart_set[i] = false;
	p->rt = &cfg->runtimes[i];
	p->rt_line = p->line;
	return 0;
}

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
	size_t len;
	int r;

	if (end == NULL)
		return config_fail_at(p, -EINVAL, p->line,
				      "syntax error: no ']' in section header");
	r = config_runtime_end(p);
	if (r < 0)
		return r;
	p->prof = NULL;
	p->mnt = NULL;
	len = (size_t)(end - line - 1);
	if (len >= sizeof(name))
		return config_fail_at(p, -EINVAL, p->line, "unknown section");
	memcpy(name, line + 1, len);
	name[len] = '\0';
	if (!strcmp(name, "daemon")) {
		p->section = CONFIG_SEC_DAEMON;
	} else if (!strcmp(name, "access")) {
		p->section = CONFIG_SEC_ACCESS;
	} else if (!strcmp(name, "sandbox")) {
		p->section = CONFIG_SEC_SANDBOX;
	} else if (!strcmp(name, "limits")) {
		p->section = CONFIG_SEC_LIMITS;
	} else if (!strcmp(name, "sessions")) {
		p->section = CONFIG_SEC_SESSIONS;
	} else if (!strcmp(name, "egress")) {
		p->section = CONFIG_SEC_EGRESS;
	} else if (!strncmp(name, "runtime ", 8)) {
		const char *rt = name + 8;

		while (*rt == ' ' || *rt == '\t')
			rt++;
		p->section = CONFIG_SEC_RUNTIME;
		return config_runtime_begin(p, rt);
	} else if (!strncmp(name, "profile ", 8)) {
		const char *pr = name + 8;

		while (*pr == ' ' || *pr == '\t')
			pr++;
		p->section = CONFIG_SEC_PROFILE;
		return config_profile_begin(p, pr);
	} else if (!strncmp(name, "mount ", 6)) {
		const char *mn = name + 6;

		while (*mn == ' ' || *mn == '\t')
			mn++;
		p->section = CONFIG_SEC_MOUNT;
		return config_mount_begin(p, mn);
	} else {
		return config_fail_at(p, -EINVAL, p->line, "unknown section [%s]", name);
	}
	return 0;
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

/* The later of two lines where a value was set (0 = built in). */
static unsigned
config_line_max(unsigned a, unsigned b)
{
	return a > b ? a : b;
}

/*
 * The profiles once every section is read: a value set in a [profile]
 * section above its [limits] ceiling is an error at its line; a built-in
 * value above it is clamped (logged); a value not set is the [limits]
 * default. Then the implicit profile, unless default_profile names another,
 * which must exist and be open to everyone who may connect.
 */
static int
config_profiles_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	struct config_profile *prof;
	const struct config_profile *def;
	size_t i, l;

	for (i = 0; i < cfg->nprofiles; i++) {
		prof = &cfg->profiles[i];
		for (l = 0; l < PROTO_LIMIT_COUNT_; l++) {
			const char *name = proto_limit_name((enum proto_limit)l);
			uint64_t *v = &prof->defaults.v[l];

			if (*v == 0) {
				*v = cfg->defaults.v[l];
			} else if (*v > cfg->ceilings.v[l] && p->prof_from_file[i]) {
				return config_fail_at(
					p, -EINVAL, p->lines.profile_limit[i][l],
					"[profile %s] %s = %llu is above its ceiling %s_max = %llu",
					prof->name, name, (unsigned long long)*v, name,
					(unsigned long long)cfg->ceilings.v[l]);
			} else if (*v > cfg->ceilings.v[l]) {
				log_warnx("built-in profile %s: %s %llu lowered to the ceiling "
					  "%s_max = %llu",
					  prof->name, name, (unsigned long long)*v, name,
					  (unsigned long long)cfg->ceilings.v[l]);
				*v = cfg->ceilings.v[l];
			}
		}
		prof->ceilings = prof->defaults;
		/* subprocess = false execs the code from fd SECCOMP_POLICY_EXEC_FD,
		 * which the code must never be able to make again. */
		if (prof->no_subprocess &&
		    prof->defaults.v[PROTO_LIMIT_OPEN_FILES] > SECCOMP_POLICY_EXEC_FD)
			return config_fail_at(
				p, -EINVAL,
				config_line_max(p->lines.profile_subprocess[i],
						p->lines.profile_limit[i][PROTO_LIMIT_OPEN_FILES]),
				"[profile %s] subprocess = false needs open_files of at most %d "
				"(it is %llu)",
				prof->name, SECCOMP_POLICY_EXEC_FD,
				(unsigned long long)prof->defaults.v[PROTO_LIMIT_OPEN_FILES]);
	}
	if (cfg->default_profile[0] == '\0') {
		/* config_profile_begin() kept this slot free. */
		prof = &cfg->profiles[cfg->nprofiles++];
		memset(prof, 0, sizeof(*prof));
		strcpy(prof->name, CONFIG_PROFILE_IMPLICIT);
		prof->defaults = cfg->defaults;
		prof->ceilings = cfg->ceilings;
		strcpy(cfg->default_profile, CONFIG_PROFILE_IMPLICIT);
		return 0;
	}
	def = config_profile_find(cfg, cfg->default_profile);
	if (def == NULL)
		return config_fail_at(p, -EINVAL, p->lines.default_profile,
				      "default_profile = %s: no such profile",
				      cfg->default_profile);
	/* A request naming no profile must get one: the default has no list. */
	if (def->nallow_uids > 0 || def->nallow_gids > 0)
		return config_fail_at(p, -EINVAL, p->lines.default_profile,
				      "default_profile = %s: the default profile must be open to "
				      "everyone (it has allow_users or allow_groups)",
				      cfg->default_profile);
	return 0;
}

/*
 * Every runtime's program must be inside the sandbox: under /usr, a
 * top-level directory the root takes from the host (/bin, /sbin, /lib*), or
 * a package tree of the runtime's own mounts. Else every run of it would
 * fail at "step exec" (the old airlockd.conf(5) example did); now the file
 * does, at its argv line.
 */
static int
config_runtimes_finish(struct config_parse *p)
{
	static const char *const tops[] = {"/usr",   "/bin",   "/sbin",	 "/lib",
					   "/lib32", "/lib64", "/libx32"};
	struct config *cfg = p->cfg;
	size_t i, j;

	for (i = 0; i < cfg->nruntimes; i++) {
		struct config_runtime *rt = &cfg->runtimes[i];
		bool inside = false;

		/* prestart's default: yes for a python (the FIFO hand-off is
		 * checked for CPython only: docs/design-interpreters.md §1). */
		if (p->rt_from_file[i] && !p->rt_prestart_set[i])
			rt->prestart =
				!rt->is_exec && rt->argc > 0 && advisory_is_python(rt->argv[0]);
		if (rt->is_exec || rt->argc == 0)
			continue;
		for (j = 0; j < sizeof(tops) / sizeof(tops[0]) && !inside; j++)
			inside = rootspec_paths_overlap(rt->argv[0], tops[j]);
		for (j = 0; j < cfg->nmounts && !inside; j++)
			inside = (rt->mounts & (1U << j)) && cfg->mounts[j].package &&
				 rootspec_paths_overlap(rt->argv[0], cfg->mounts[j].target);
		if (!inside)
			return config_fail_at(p, -EINVAL, p->rt_argv_line[i],
					      "[runtime %s] argv[0] %s is not inside the sandbox: "
					      "add a [mount] with package = true to its mounts",
					      rt->name, rt->argv[0]);
	}
	return 0;
}

/*
 * The names every profile entry of info_ok lists (mounts, allow_mounts,
 * blocked_imports), all profiles together, within CONFIG_LISTED_BYTES_MAX:
 * with the allow-lists' own bound, the reply fits one packet.
 */
static int
config_listed_finish(struct config_parse *p)
{
	const struct config *cfg = p->cfg;
	size_t i, k, total = 0;

	for (i = 0; i < cfg->nprofiles; i++) {
		const struct config_profile *prof = &cfg->profiles[i];

		for (k = 0; k < cfg->nmounts; k++)
			total += (!!(prof->mounts & (1U << k)) +
				  !!(prof->allow_mounts & (1U << k))) *
				 (strlen(cfg->mounts[k].name) + 2);
		for (k = 0; k < prof->nblocked_imports; k++)
			total += strlen(prof->blocked_imports[k]) + 2;
		if (total > CONFIG_LISTED_BYTES_MAX)
			return config_fail_at(p, -EINVAL, p->lines.profile_lists[i],
					      "[profile %s]: the mounts, allow_mounts and "
					      "blocked_imports of all profiles together are longer "
					      "than %d bytes",
					      prof->name, CONFIG_LISTED_BYTES_MAX);
	}
	return 0;
}

/*
 * The [mount] sections once every section is read: each has a source that
 * passes rootspec_source_check() now (the error at its source line) and a
 * valid target; no two targets overlap. Then the lists that name them.
 */
static int
config_mounts_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	char why[512], item[PROTO_MOUNT_MAX + 2];
	size_t i, j;
	int r;

	for (i = 0; i < cfg->nmounts; i++) {
		const struct config_mount *m = &cfg->mounts[i];

		if (m->source[0] == '\0' || m->target[0] == '\0')
			return config_fail_at(p, -EINVAL, p->mnt_line[i], "[mount %s] has no %s",
					      m->name, m->source[0] == '\0' ? "source" : "target");
		r = rootspec_source_check(m->source, why, sizeof(why));
		if (r < 0)
			return config_fail_at(p, r, p->mnt_source_line[i],
					      "[mount %s] source: %s: refused", m->name, why);
		r = rootspec_target_check(m->target, why, sizeof(why));
		if (r < 0)
			return config_fail_at(p, r, p->mnt_target_line[i], "[mount %s] %s", m->name,
					      why);
		for (j = 0; j < i; j++)
			if (rootspec_paths_overlap(m->target, cfg->mounts[j].target))
				return config_fail_at(p, -EINVAL, p->mnt_target_line[i],
						      "[mount %s] target %s overlaps [mount %s] "
						      "target %s",
						      m->name, m->target, cfg->mounts[j].name,
						      cfg->mounts[j].target);
	}
	/* A [mount] at or over a hidden path would put it back (phase two
	 * attaches the mounts after it hides): refused, whichever profile. */
	for (i = 0; i < cfg->nprofiles; i++)
		for (j = 0; j < cfg->profiles[i].nhidden; j++) {
			const char *h = cfg->profiles[i].hidden[j];
			size_t k;

			for (k = 0; k < cfg->nmounts; k++)
				if (rootspec_paths_overlap(h, cfg->mounts[k].target))
					return config_fail_at(
						p, -EINVAL, p->lines.profile_hidden[i][j],
						"[profile %s] hidden_paths: %s overlaps [mount %s] "
						"target %s",
						cfg->profiles[i].name, h, cfg->mounts[k].name,
						cfg->mounts[k].target);
		}
	for (i = 0; i < p->npending; i++) {
		const struct config_pending_mounts *pm = &p->pending[i];
		const char *s = pm->value;

		while ((r = config_list_next(p, pm->line, pm->key, &s, item, sizeof(item))) > 0) {
			int idx = config_mount_find(cfg, item);

			if (idx < 0)
				return config_fail_at(p, -EINVAL, pm->line,
						      "%s: no [mount %s] section", pm->key, item);
			*pm->mask |= 1U << idx;
		}
		if (r < 0)
			return r;
	}
	r = config_listed_finish(p);
	if (r < 0)
		return r;
	return config_runtimes_finish(p);
}

/* Each limit's default at most its ceiling. */
static int
config_limits_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	unsigned i;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		const char *name = proto_limit_name((enum proto_limit)i);

		if (cfg->defaults.v[i] > cfg->ceilings.v[i])
			return config_fail_at(
				p, -EINVAL,
				config_line_max(p->lines.limit[i][0], p->lines.limit[i][1]),
				"%s = %llu is above its ceiling %s_max = %llu", name,
				(unsigned long long)cfg->defaults.v[i], name,
				(unsigned long long)cfg->ceilings.v[i]);
	}
	return 0;
}

/* [daemon] and [sandbox] across keys, and the defaults that depend on the
 * user database. */
static int
config_daemon_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	struct group *gr;
	int r;

	if ((uint64_t)cfg->uid_base + cfg->uid_count > UINT32_MAX)
		return config_fail_at(p, -EINVAL,
				      config_line_max(p->lines.uid_base, p->lines.uid_count),
				      "uid_base + uid_count overflows the uid space");
	/*
	 * One uid may not hold every run slot by default (issue 13): half of
	 * them, at least one. An administrator may still set more.
	 */
	if (p->lines.max_runs_per_uid == 0)
		cfg->max_runs_per_uid = cfg->max_runs > 1 ? (cfg->max_runs + 1) / 2 : 1;
	/*
	 * Live interpreters have caps of their own (issue 28): between cells
	 * one holds no run slot, only memory, a process and a uid slot, so
	 * the caps bound what idle ones hold. By default twice the run slots
	 * (a user who works may keep an interpreter while runs still find
	 * every slot), and, as for runs, one uid half of them.
	 */
	if (p->lines.max_interpreters == 0)
		cfg->max_interpreters =
			cfg->max_runs > UINT32_MAX / 2 ? UINT32_MAX : 2 * cfg->max_runs;
	if (p->lines.max_interpreters_per_uid == 0)
		cfg->max_interpreters_per_uid =
			cfg->max_interpreters > 1
				? cfg->max_interpreters / 2 + cfg->max_interpreters % 2
				: 1;
	if (p->lines.socket_group == 0) {
		gr = getgrnam("airlock");
		cfg->socket_gid = gr != NULL ? gr->gr_gid : 0;
	}
	if (p->lines.user == 0) {
		r = config_set_service_user(cfg, "airlock");
		if (r < 0 && r != -ENOMEM)
			r = config_set_service_user(cfg, "nobody");
		if (r == -ENOMEM)
			return config_fail_at(p, r, 0, "out of memory");
		if (r < 0)
			return config_fail_at(
				p, -ENOENT, 0,
				"neither user 'airlock' nor 'nobody' exists; set user =");
	}
	if (cfg->service_uid >= cfg->uid_base &&
	    (uint64_t)cfg->service_uid < (uint64_t)cfg->uid_base + cfg->uid_count)
		return config_fail_at(p, -EINVAL,
				      config_line_max(p->lines.uid_base, p->lines.uid_count),
				      "the service user's uid %u lies in the per-run uid range",
				      (unsigned)cfg->service_uid);
	return 0;
}

/* The checks across keys and sections, in this order, once a file is read. */
static int (*const config_finishers[])(struct config_parse *) = {
	config_limits_finish, config_profiles_finish, config_egress_finish,
	config_mounts_finish, config_daemon_finish,
};

/* Run every check across keys; the first failure is the file's error. */
static int
config_finish(struct config_parse *p)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(config_finishers) / sizeof(config_finishers[0]); i++) {
		r = config_finishers[i](p);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Fill cfg with the built-in defaults that need no user database. */
static int
config_defaults(struct config *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t i, n = 0;
	int r;

	cfg->socket_path = strdup(CONFIG_DEFAULT_SOCKET);
	cfg->hostname = strdup("airlock");
	if (cfg->socket_path == NULL || cfg->hostname == NULL)
		return -ENOMEM;
	cfg->socket_uid = 0;
	cfg->socket_gid = 0;
	cfg->socket_mode = 0660;
	cfg->max_connections_per_uid = 16;
	cfg->max_runs_per_uid = 8; /* replaced in config_finish() unless set */
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > 65536)
		ncpu = 65536;
	cfg->max_runs = (uint32_t)(2 * ncpu);
	cfg->max_queued_bytes = 8ULL << 20;
	cfg->max_queued_fds = 128;
	cfg->max_fds_per_uid = 256;
	cfg->max_bytes_per_uid = 1ULL << 30;
	cfg->max_queued = 64;
	cfg->prepared_sandboxes = 2;
	cfg->prestarted_interpreters = 2;
	cfg->resource_control = CGROUP_AUTO;
	cfg->cpu_max_percent = 0;
	cfg->max_queued_per_uid = 16;
	cfg->stop_grace_ms = 10000;
	cfg->sessions_per_uid = 4;
	cfg->session_idle_ms = 600000;
	cfg->session_idle_ms_max = 3600000;
	cfg->session_lifetime_ms = 3600000;
	cfg->session_lifetime_ms_max = 86400000;
	cfg->session_orphan_grace_ms = 60000;
	cfg->session_file_max = 64ULL << 20;
	cfg->egress_port = EGRESS_DEFAULT_PORT;
	cfg->egress_connect_ms = 10000;
	cfg->egress_idle_ms = 120000;
	cfg->allow_all = false;
	cfg->uid_base = 600000;
	cfg->uid_count = 2048;
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		cfg->defaults.v[i] = limit_table[i].def;
		cfg->ceilings.v[i] = limit_table[i].ceiling;
	}
	for (i = 0; i < sizeof(config_builtin_runtimes) / sizeof(config_builtin_runtimes[0]); i++) {
		struct config_runtime *rt = &cfg->runtimes[n];

		if (config_builtin_runtimes[i].need != NULL &&
		    access(config_builtin_runtimes[i].need, X_OK) < 0)
			continue;
		strcpy(rt->name, config_builtin_runtimes[i].name);
		strcpy(rt->code_name, config_builtin_runtimes[i].code_name);
		r = config_split_words(config_builtin_runtimes[i].argv, rt->argv,
				       CONFIG_RUNTIME_ARGV_MAX, &rt->argc);
		if (r < 0)
			return r;
		rt->prestart = advisory_is_python(rt->argv[0]);
		n++;
		cfg->nruntimes = n;
	}
	for (i = 0; i < sizeof(config_builtin_profiles) / sizeof(config_builtin_profiles[0]); i++) {
		struct config_profile *prof = &cfg->profiles[i];

		strcpy(prof->name, config_builtin_profiles[i].name);
		prof->defaults.v[PROTO_LIMIT_WALL_MS] = config_builtin_profiles[i].wall_ms;
		prof->defaults.v[PROTO_LIMIT_CPU_MS] = config_builtin_profiles[i].cpu_ms;
		prof->defaults.v[PROTO_LIMIT_MEMORY_BYTES] =
			config_builtin_profiles[i].memory_bytes;
		prof->defaults.v[PROTO_LIMIT_PROCESSES] = config_builtin_profiles[i].processes;
		cfg->nprofiles = i + 1;
	}
	strcpy(cfg->runtimes[n].name, "exec");
	cfg->runtimes[n].is_exec = true;
	cfg->nruntimes = n + 1;
	return 0;
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

	r = config_defaults(cfg);
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
	for (i = 0; i < p.nseen; i++)
		free(p.seen[i]);
	free(p.seen);
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

const struct config_runtime *
config_runtime_find(const struct config *cfg, const char *name)
{
	size_t i;

	if (cfg == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cfg->nruntimes && i < CONFIG_RUNTIMES_MAX; i++)
		if (!strcmp(cfg->runtimes[i].name, name))
			return &cfg->runtimes[i];
	return NULL;
}

int
config_mount_find(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nmounts; i++)
		if (!strcmp(cfg->mounts[i].name, name))
			return (int)i;
	return -1;
}

int
config_mounts_resolve(const struct config *cfg, const struct config_profile *prof,
		      const struct config_runtime *rt, const char *const *asked, size_t n,
		      uint32_t *ret, size_t *ret_bad)
{
	uint32_t mask = prof->mounts | (rt != NULL ? rt->mounts : 0);
	uint32_t allowed = prof->allow_mounts | mask; /* asking for what it gets is fine */
	size_t i;

	for (i = 0; i < n; i++) {
		int idx = config_mount_find(cfg, asked[i]);

		if (idx < 0 || !(allowed & (1U << idx))) {
			*ret_bad = i;
			return idx < 0 ? -ENOENT : -EPERM;
		}
		mask |= 1U << idx;
	}
	*ret = mask;
	return 0;
}

const struct config_profile *
config_profile_find(const struct config *cfg, const char *name)
{
	size_t i;

	if (cfg == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cfg->nprofiles && i < CONFIG_PROFILES_MAX; i++)
		if (!strcmp(cfg->profiles[i].name, name))
			return &cfg->profiles[i];
	return NULL;
}

/* Is mount k of a the same (name, source, target, package) as one of n's in mask? */
static bool
config_mount_in(const struct config_mount *m, const struct config *n, uint32_t mask)
{
	size_t k;

	for (k = 0; k < n->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if ((mask & (1U << k)) && !strcmp(n->mounts[k].name, m->name) &&
		    !strcmp(n->mounts[k].source, m->source) &&
		    !strcmp(n->mounts[k].target, m->target) && n->mounts[k].package == m->package)
			return true;
	return false;
}

/* The mounts of mask a under o and of mask b under n: the same set? By
 * name and what they bind, never by bit: a reload may renumber them. */
static bool
config_mounts_same(const struct config *o, uint32_t a, const struct config *n, uint32_t b)
{
	size_t k, ca = 0, cb = 0;

	for (k = 0; k < o->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (a & (1U << k)) {
			if (!config_mount_in(&o->mounts[k], n, b))
				return false;
			ca++;
		}
	for (k = 0; k < n->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (b & (1U << k))
			cb++;
	return ca == cb;
}

/* Two egress policies (NULL: no network) the same, entry by entry? */
static bool
config_egress_same(const struct egress_policy *a, const struct egress_policy *b)
{
	size_t i;

	if (a == NULL || b == NULL)
		return a == b;
	if (a->nentries != b->nentries || a->bytes != b->bytes || a->connections != b->connections)
		return false;
	for (i = 0; i < a->nentries && i < EGRESS_ENTRIES_MAX; i++) {
		const struct egress_entry *x = &a->entries[i], *y = &b->entries[i];

		if (x->kind != y->kind || strcmp(x->host, y->host) != 0 ||
		    memcmp(x->addr, y->addr, sizeof(x->addr)) != 0 || x->nports != y->nports ||
		    x->nports > EGRESS_PORTS_MAX ||
		    memcmp(x->ports, y->ports, x->nports * sizeof(x->ports[0])) != 0 ||
		    x->allow_private != y->allow_private)
			return false;
	}
	return true;
}

/* Two NULL-terminated string vectors the same? */
static bool
config_strv_same(char *const *a, char *const *b)
{
	size_t i;

	for (i = 0; a[i] != NULL && b[i] != NULL; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return a[i] == NULL && b[i] == NULL;
}

/* Something differs: note it, and append item to why (", "-separated). */
static void
config_why_add(bool *changed, char *why, size_t whylen, const char *item)
{
	size_t len;

	*changed = true;
	if (why == NULL || whylen == 0)
		return;
	len = strnlen(why, whylen);
	if (len + 1 >= whylen)
		return;
	snprintf(why + len, whylen - len, "%s%s", len > 0 ? ", " : "", item);
}

bool
config_sandbox_changed(const struct config *o, const struct config *n, const char *profile,
		       const char *runtime, char *why, size_t whylen)
{
	const struct config_profile *op = config_profile_find(o, profile);
	const struct config_profile *np = config_profile_find(n, profile);
	const struct config_runtime *ort = config_runtime_find(o, runtime);
	const struct config_runtime *nrt = config_runtime_find(n, runtime);
	bool changed = false;
	size_t i;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (op == NULL || np == NULL) {
		config_why_add(&changed, why, whylen, "the profile is gone");
	} else {
		if (!config_mounts_same(o, op->mounts, n, np->mounts))
			config_why_add(&changed, why, whylen, "mounts");
		if (op->network_proxy != np->network_proxy)
			config_why_add(&changed, why, whylen, "network");
		else if (!config_egress_same(op->network_proxy ? op->egress : NULL,
					     np->network_proxy ? np->egress : NULL))
			config_why_add(&changed, why, whylen, "allow-list");
		if (op->no_file_write != np->no_file_write)
			config_why_add(&changed, why, whylen, "file_write");
		if (op->no_subprocess != np->no_subprocess)
			config_why_add(&changed, why, whylen, "subprocess");
		if (op->nhidden != np->nhidden)
			config_why_add(&changed, why, whylen, "hidden_paths");
		else
			for (i = 0; i < op->nhidden && i < CONFIG_HIDDEN_MAX; i++)
				if (strcmp(op->hidden[i], np->hidden[i]) != 0) {
					config_why_add(&changed, why, whylen, "hidden_paths");
					break;
				}
		if (memcmp(&op->defaults, &np->defaults, sizeof(op->defaults)) != 0 ||
		    memcmp(&op->ceilings, &np->ceilings, sizeof(op->ceilings)) != 0)
			config_why_add(&changed, why, whylen, "limits");
	}
	if (ort == NULL || nrt == NULL)
		config_why_add(&changed, why, whylen, "the runtime is gone");
	else if (ort->is_exec != nrt->is_exec || !config_strv_same(ort->argv, nrt->argv) ||
		 !config_strv_same(ort->env, nrt->env) || strcmp(ort->cwd, nrt->cwd) != 0 ||
		 strcmp(ort->code_name, nrt->code_name) != 0 ||
		 !config_mounts_same(o, ort->mounts, n, nrt->mounts))
		config_why_add(&changed, why, whylen, "runtime");
	return changed;
}

const struct config_profile *
config_profile_default(const struct config *cfg)
{
	const struct config_profile *prof = config_profile_find(cfg, cfg->default_profile);

	/* config_profiles_finish() made sure it exists. */
	if (prof == NULL)
		fatalx("config: default profile '%s' missing", cfg->default_profile);
	return prof;
}

bool
config_profile_allowed(const struct config_profile *prof, uid_t uid, const gid_t *gids,
		       size_t ngids)
{
	size_t i, j;

	if (prof == NULL)
		return false;
	if (uid == 0 || (prof->nallow_uids == 0 && prof->nallow_gids == 0))
		return true;
	for (i = 0; i < prof->nallow_uids && i < CONFIG_LIST_MAX; i++)
		if (prof->allow_uids[i] == uid)
			return true;
	for (j = 0; gids != NULL && j < ngids; j++)
		for (i = 0; i < prof->nallow_gids && i < CONFIG_LIST_MAX; i++)
			if (prof->allow_gids[i] == gids[j])
				return true;
	return false;
}

int
config_limits_resolve(const struct config_profile *prof, const struct proto_limits *asked,
		      struct proto_limits *ret, enum proto_limit *ret_bad)
{
	struct proto_limits out;
	unsigned i;

	if (prof == NULL || asked == NULL || ret == NULL)
		return -EINVAL;
	if (!rules_limits_within(asked, &prof->ceilings, ret_bad))
		return -ERANGE;
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		out.v[i] = asked->v[i] != 0 ? asked->v[i] : prof->defaults.v[i];
	*ret = out;
	return 0;
}

bool
config_peer_allowed(const struct config *cfg, uid_t uid, const gid_t *gids, size_t ngids)
{
	size_t i, j;

	if (uid == 0)
		return true;
	if (cfg == NULL)
		return false;
	if (cfg->allow_all)
		return true;
	for (i = 0; i < cfg->nallow_uids && i < CONFIG_LIST_MAX; i++)
		if (cfg->allow_uids[i] == uid)
			return true;
	if (gids == NULL)
		return false;
	for (j = 0; j < ngids; j++) {
		if (gids[j] == cfg->socket_gid)
			return true;
		for (i = 0; i < cfg->nallow_gids && i < CONFIG_LIST_MAX; i++)
			if (cfg->allow_gids[i] == gids[j])
				return true;
	}
	return false;
}
