/* config_access.c: the hooks of [daemon], [access], [sandbox] and [sessions] keys, the
 * service user, who may connect. */
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

/* socket = PATH: absolute, and it must fit in a socket address. */
int
config_hook_socket(struct config_parse *p, const struct config_key *k, const char *value,
		   void *field)
{
	int r;

	if (value[0] != '/')
		return config_fail_at(p, -EINVAL, p->line, "socket: not an absolute path");
	if (strlen(value) >= sizeof(((struct sockaddr_un *)NULL)->sun_path))
		return config_fail_at(p, -EINVAL, p->line,
				      "socket: path longer than a socket address allows");
	r = config_set_string(field, value);
	if (r < 0)
		return config_fail_at(p, r, p->line, "out of memory");
	return 0;
}

/* state_directory: an absolute path, short enough for a file's name in it. */
int
config_hook_state_dir(struct config_parse *p, const struct config_key *k, const char *value,
		      void *field)
{
	int r;

	(void)k;
	if (value[0] != '/' || strlen(value) > 256)
		return config_fail_at(p, -EINVAL, p->line,
				      "state_directory: not an absolute path of at most 256 bytes");
	r = config_set_string(field, value);
	if (r < 0)
		return config_fail_at(p, r, p->line, "out of memory");
	return 0;
}

/* socket_user, socket_group: a name or number that must exist. */
int
config_hook_owner(struct config_parse *p, const struct config_key *k, const char *value,
		  void *field)
{
	bool group = !strcmp(k->name, "socket_group");
	uint32_t id;

	if (config_resolve_id(value, group, &id) < 0)
		return config_fail_at(p, -EINVAL, p->line, "%s: unknown %s '%s'", k->name,
				      group ? "group" : "user", value);
	*(uint32_t *)field = id;
	return 0;
}

/* user = the service user: must exist and must not be root. */
int
config_hook_user(struct config_parse *p, const struct config_key *k, const char *value, void *field)
{
	struct config *cfg = p->cfg;
	int r;

	r = config_set_service_user(cfg, value);
	if (r == -ENOMEM)
		return config_fail_at(p, r, p->line, "out of memory");
	if (r < 0)
		return config_fail_at(p, -EINVAL, p->line, "user: unknown user '%s'", value);
	if (cfg->service_uid == 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "user: the service user must not be root");
	return 0;
}

/* allow_users, allow_groups of [access] or of a [profile NAME]: names or ids. */
int
config_hook_allow(struct config_parse *p, const struct config_key *k, const char *value,
		  void *field)
{
	bool groups = !strcmp(k->name, "allow_groups");
	bool prof = k->section == CONFIG_SEC_PROFILE;
	uint32_t ids[CONFIG_LIST_MAX];
	size_t n = 0, i;
	int r;

	r = config_key_list(p, k->name, value, groups, ids, &n);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		if (groups)
			(prof ? p->prof->allow_gids : p->cfg->allow_gids)[i] = (gid_t)ids[i];
		else
			(prof ? p->prof->allow_uids : p->cfg->allow_uids)[i] = (uid_t)ids[i];
	}
	*(groups ? (prof ? &p->prof->nallow_gids : &p->cfg->nallow_gids)
		 : (prof ? &p->prof->nallow_uids : &p->cfg->nallow_uids)) = n;
	return 0;
}

/* default_profile = NAME: whether it exists is checked at the end ([profile] may follow). */
int
config_hook_default_profile(struct config_parse *p, const struct config_key *k, const char *value,
			    void *field)
{
	if (!rules_profile_name_valid(value))
		return config_fail_at(p, -EINVAL, p->line,
				      "default_profile = %s: expected 1 to %d of a-z, 0-9, "
				      "'-', '_'",
				      value, PROTO_PROFILE_MAX);
	strcpy(p->cfg->default_profile, value);
	return 0;
}

/* uid_base: a decimal uid, not 0. */
int
config_hook_uid_base(struct config_parse *p, const struct config_key *k, const char *value,
		     void *field)
{
	uint32_t id;
	int r;

	r = config_parse_id(value, &id);
	if (r < 0)
		return config_bad_number(p, r, k->name, value, "a decimal uid");
	if (id == 0)
		return config_fail_at(p, -EINVAL, p->line, "uid_base must not be 0");
	p->cfg->uid_base = (uid_t)id;
	return 0;
}

/* uid_count: even and at least 2, two uids per run. */
int
config_hook_uid_count(struct config_parse *p, const struct config_key *k, const char *value,
		      void *field)
{
	uint32_t id;
	int r;

	r = config_key_u32(p, k->name, value, &id);
	if (r < 0)
		return r;
	if (id < 2 || id % 2 != 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "uid_count must be even and at least 2 (2 per run)");
	p->cfg->uid_count = id;
	return 0;
}

/* hostname: config_hostname_valid(). */
int
config_hook_hostname(struct config_parse *p, const struct config_key *k, const char *value,
		     void *field)
{
	int r;

	if (!config_hostname_valid(value))
		return config_fail_at(p, -EINVAL, p->line,
				      "hostname '%s': expected 1 to %d letters, digits, "
				      "'-' or '.'",
				      value, CONFIG_HOSTNAME_MAX);
	r = config_set_string(&p->cfg->hostname, value);
	if (r < 0)
		return config_fail_at(p, r, p->line, "out of memory");
	return 0;
}

/* resource_control = auto|cgroup2|cgroup1|rlimit (enum cgroup_kind). */
int
config_hook_resource_control(struct config_parse *p, const struct config_key *k, const char *value,
			     void *field)
{
	enum cgroup_kind kind;

	if (cgroup_kind_from_name(value, &kind) < 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "resource_control = %s: expected auto, cgroup2, "
				      "cgroup1 or rlimit",
				      value);
	p->cfg->resource_control = (uint32_t)kind;
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
