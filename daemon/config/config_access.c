/* config_access.c: [daemon], [access], [sandbox] and [sessions] keys, the service user, who may
 * connect. */
#include "config_parse.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "cgroup.h"
#include "rules.h"

/* Set the service user from a name or number that must exist in the user database. */
int
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

/* Handle one key of [daemon]. */
int
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
int
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
int
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
int
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
