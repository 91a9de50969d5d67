/* config_profile.c: [profile NAME] sections, hidden paths, blocked imports, profile look-ups and
 * limits. */
#include "config_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limit.h"
#include "rules.h"
#include "rootspec.h"
#include "sandbox_fs_root.h"
#include "log.h"

/* Free a profile's hidden paths. */
void
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

/* hidden_paths = PATH[, ...]: config_key_hidden(); the key repeated adds. */
int
config_hook_hidden(struct config_parse *p, const struct config_key *k, const char *value,
		   void *field)
{
	return config_key_hidden(p, p->prof, value);
}

/* mounts, allow_mounts, blocked_imports of a profile: their line, for the bound on all. */
int
config_hook_profile_list(struct config_parse *p, const struct config_key *k, const char *value,
			 void *field)
{
	p->lines.profile_lists[p->prof - p->cfg->profiles] = p->line;
	if (!strcmp(k->name, "blocked_imports"))
		return config_key_blocked_imports(p, value);
	return config_key_mounts(p, k->name, value, field);
}

/*
 * runtimes = NAME[, ...]: kept as names, each given once, at most
 * CONFIG_RUNTIMES_MAX; whether each names a runtime is asked once every
 * section is read (config_profile_runtimes_finish: a [runtime] section may
 * come after the profile).
 */
int
config_hook_profile_runtimes(struct config_parse *p, const struct config_key *k, const char *value,
			     void *field)
{
	struct config_profile *prof = p->prof;
	char item[PROTO_RUNTIME_MAX + 2];
	const char *s = value;
	size_t i;
	int r;

	prof->nruntimes = 0;
	p->lines.profile_runtimes[prof - p->cfg->profiles] = p->line;
	while ((r = config_list_next(p, p->line, "runtimes", &s, item, sizeof(item))) > 0) {
		if (!rules_runtime_name_valid(item))
			return config_fail_at(p, -EINVAL, p->line,
					      "runtimes: '%s' is not a runtime name", item);
		for (i = 0; i < prof->nruntimes; i++)
			if (!strcmp(prof->runtimes[i], item))
				return config_fail_at(p, -EINVAL, p->line,
						      "runtimes: '%s' given twice", item);
		if (prof->nruntimes == CONFIG_RUNTIMES_MAX)
			return config_fail_at(p, -EINVAL, p->line, "runtimes: more than %d names",
					      CONFIG_RUNTIMES_MAX);
		strcpy(prof->runtimes[prof->nruntimes++], item);
	}
	if (r == 0 && prof->nruntimes == 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "runtimes: no name (leave the key out for every runtime)");
	return r;
}

/*
 * Every name of a runtimes = list is a runtime of this config, and a
 * profile with subprocess = false lists no shell: every command of a
 * shell is a fork, refused there (docs/design-profiles.md, 3.2), so each
 * of its runs would fail; better the file at its line.
 */
int
config_profile_runtimes_finish(struct config_parse *p)
{
	const struct config *cfg = p->cfg;
	size_t i, j;

	for (i = 0; i < cfg->nprofiles; i++) {
		const struct config_profile *prof = &cfg->profiles[i];
		unsigned line = p->lines.profile_runtimes[i];
		/* The later of runtimes = and subprocess =: the line that made it wrong. */
		unsigned both = line > p->lines.profile_subprocess[i]
					? line
					: p->lines.profile_subprocess[i];

		for (j = 0; j < prof->nruntimes; j++) {
			const struct config_runtime *rt =
				config_runtime_find(cfg, prof->runtimes[j]);

			if (rt == NULL)
				return config_fail_at(p, -EINVAL, line,
						      "[profile %s] runtimes: no runtime '%s'",
						      prof->name, prof->runtimes[j]);
			if (prof->no_subprocess && rt->language == RULES_LANG_SHELL)
				return config_fail_at(
					p, -EINVAL, both,
					"[profile %s] runtimes: '%s' is a shell, and subprocess = "
					"false refuses the fork of its every command",
					prof->name, rt->name);
		}
	}
	return 0;
}

bool
config_profile_runtime_allowed(const struct config_profile *prof, const char *runtime)
{
	size_t i;

	if (prof == NULL || runtime == NULL)
		return false;
	if (prof->nruntimes == 0)
		return true;
	for (i = 0; i < prof->nruntimes && i < CONFIG_RUNTIMES_MAX; i++)
		if (!strcmp(prof->runtimes[i], runtime))
			return true;
	return false;
}

void
config_profile_runtimes_text(const struct config_profile *prof, char *buf, size_t len)
{
	size_t i, off = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; prof != NULL && i < prof->nruntimes; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", prof->runtimes[i]);

		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
}

/* file_write, subprocess = true|false: stored inverted (struct config_profile). */
int
config_hook_switch(struct config_parse *p, const struct config_key *k, const char *value,
		   void *field)
{
	bool on;

	if (config_parse_bool(value, &on) < 0)
		return config_fail_at(p, -EINVAL, p->line, "%s = %s: expected true or false",
				      k->name, value);
	*(bool *)field = !on;
	if (!strcmp(k->name, "subprocess"))
		p->lines.profile_subprocess[p->prof - p->cfg->profiles] = p->line;
	return 0;
}

/* background_processes = true|false: stored as written (default false). */
int
config_hook_flag(struct config_parse *p, const struct config_key *k, const char *value, void *field)
{
	if (config_parse_bool(value, (bool *)field) < 0)
		return config_fail_at(p, -EINVAL, p->line, "%s = %s: expected true or false",
				      k->name, value);
	return 0;
}

/*
 * A key of [profile NAME] that is no row: a [limits] name sets the profile's
 * value (its default and its ceiling), once.
 */
int
config_profile_limit(struct config_parse *p, const char *name, const char *value)
{
	struct config_profile *prof = p->prof;
	size_t idx = (size_t)(prof - p->cfg->profiles);
	enum proto_limit l;
	uint64_t v;
	int r;

	if (!strncmp(name, "allow_", 6) || !strncmp(name, "network_", 8))
		return config_fail_at(p, -EINVAL, p->line, "unknown key '%s' in [profile %s]", name,
				      prof->name);
	if (limit_from_name(name, strlen(name), &l) < 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "unknown key '%s' in [profile %s] (a profile's limit is its "
				      "default and its ceiling: no _max)",
				      name, prof->name);
	if (p->lines.profile_limit[idx][l] != 0)
		return config_fail_at(p, -EINVAL, p->line, "duplicate key '%s' in [profile %s]",
				      name, prof->name);
	r = config_limit_value(p, l, name, value, &v);
	if (r < 0)
		return r;
	prof->defaults.v[l] = v;
	p->lines.profile_limit[idx][l] = p->line;
	return 0;
}

/*
 * Start a [profile NAME] section: a new profile, or one replacing a built-in
 * whole (what the section does not set is the [limits] default, as for a new
 * one). One slot stays free for the implicit "default".
 */
int
config_profile_begin(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;
	const struct config_slots slots = {"profile",
					   cfg->profiles,
					   sizeof(cfg->profiles[0]),
					   offsetof(struct config_profile, name),
					   &cfg->nprofiles,
					   CONFIG_PROFILES_MAX - 1,
					   p->prof_from_file};
	size_t i;
	int r;

	if (!strcmp(name, CONFIG_PROFILE_IMPLICIT))
		return config_fail_at(p, -EINVAL, p->line,
				      "[profile %s] is the implicit profile: set [limits] instead",
				      name);
	r = config_section_slot(p, &slots, name, rules_profile_name_valid(name), PROTO_PROFILE_MAX,
				&i);
	if (r < 0)
		return r;
	memset(&cfg->profiles[i], 0, sizeof(cfg->profiles[i]));
	strcpy(cfg->profiles[i].name, name);
	memset(p->lines.profile_limit[i], 0, sizeof(p->lines.profile_limit[i]));
	p->prof = &cfg->profiles[i];
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
