/* config_finish.c: the built-in defaults, and the checks across keys once a file is read. */
#include "config_parse.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "rules.h"
#include "limit.h"
#include "log.h"
#include "seccomp_policy.h"

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
int
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
		return config_fail_at(
			p, -EINVAL, config_key_line(p, CONFIG_SEC_ACCESS, "default_profile"),
			"default_profile = %s: no such profile", cfg->default_profile);
	/* A request naming no profile must get one: the default has no list. */
	if (def->nallow_uids > 0 || def->nallow_gids > 0)
		return config_fail_at(p, -EINVAL,
				      config_key_line(p, CONFIG_SEC_ACCESS, "default_profile"),
				      "default_profile = %s: the default profile must be open to "
				      "everyone (it has allow_users or allow_groups)",
				      cfg->default_profile);
	return 0;
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
		return config_fail_at(
			p, -EINVAL,
			config_line_max(config_key_line(p, CONFIG_SEC_SANDBOX, "uid_base"),
					config_key_line(p, CONFIG_SEC_SANDBOX, "uid_count")),
			"uid_base + uid_count overflows the uid space");
	/*
	 * One uid may not hold every run slot by default (issue 13): half of
	 * them, at least one. An administrator may still set more.
	 */
	if (config_key_line(p, CONFIG_SEC_DAEMON, "max_runs_per_uid") == 0)
		cfg->max_runs_per_uid = cfg->max_runs > 1 ? (cfg->max_runs + 1) / 2 : 1;
	/*
	 * Live interpreters have caps of their own (issue 28): between cells
	 * one holds no run slot, only memory, a process and a uid slot, so
	 * the caps bound what idle ones hold. By default twice the run slots
	 * (a user who works may keep an interpreter while runs still find
	 * every slot), and, as for runs, one uid half of them.
	 */
	if (config_key_line(p, CONFIG_SEC_SESSIONS, "max_interpreters") == 0)
		cfg->max_interpreters =
			cfg->max_runs > UINT32_MAX / 2 ? UINT32_MAX : 2 * cfg->max_runs;
	if (config_key_line(p, CONFIG_SEC_SESSIONS, "max_interpreters_per_uid") == 0)
		cfg->max_interpreters_per_uid =
			cfg->max_interpreters > 1
				? cfg->max_interpreters / 2 + cfg->max_interpreters % 2
				: 1;
	if (config_key_line(p, CONFIG_SEC_DAEMON, "socket_group") == 0) {
		gr = getgrnam("airlock");
		cfg->socket_gid = gr != NULL ? gr->gr_gid : 0;
	}
	if (config_key_line(p, CONFIG_SEC_DAEMON, "user") == 0) {
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
		return config_fail_at(
			p, -EINVAL,
			config_line_max(config_key_line(p, CONFIG_SEC_SANDBOX, "uid_base"),
					config_key_line(p, CONFIG_SEC_SANDBOX, "uid_count")),
			"the service user's uid %u lies in the per-run uid range",
			(unsigned)cfg->service_uid);
	return 0;
}

/* The checks across keys and sections, in this order, once a file is read. */
static int (*const config_finishers[])(struct config_parse *) = {
	config_limits_finish, config_profiles_finish,	      config_egress_finish,
	config_mounts_finish, config_profile_runtimes_finish, config_daemon_finish,
};

/* Run every check across keys; the first failure is the file's error. */
int
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

/* The built-in runtimes whose program exists, then "exec". */
static int
config_builtin_runtimes_add(struct config *cfg)
{
	size_t i, n = 0;
	int r;

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
		rt->language = rules_program_language(rt->argv[0]);
		rt->prestart = rt->language == RULES_LANG_PYTHON;
		n++;
		cfg->nruntimes = n;
	}
	strcpy(cfg->runtimes[n].name, "exec");
	cfg->runtimes[n].is_exec = true;
	cfg->nruntimes = n + 1;
	return 0;
}

/*
 * Fill the config with the built-in defaults that need no user database:
 * the rows' (config_keys.c), those computed, the limits, the built-in
 * runtimes and profiles.
 */
int
config_defaults(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t i;
	int r;

	for (i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];

		/* The rows of the sections with a name have no default here:
		 * their struct starts zeroed (struct config_profile). */
		if (k->def == NULL || (k->flags & CK_DEF_ZERO) ||
		    k->section == CONFIG_SEC_PROFILE || k->section == CONFIG_SEC_RUNTIME ||
		    k->section == CONFIG_SEC_MOUNT)
			continue;
		r = config_key_apply(p, k, k->def);
		if (r < 0)
			return r;
	}
	cfg->max_runs_per_uid = 8; /* replaced in config_finish() unless set */
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > 65536)
		ncpu = 65536;
	cfg->max_runs = (uint32_t)(2 * ncpu);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		cfg->defaults.v[i] = limit_table[i].def;
		cfg->ceilings.v[i] = limit_table[i].ceiling;
	}
	r = config_builtin_runtimes_add(cfg);
	if (r < 0)
		return r;
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
	return 0;
}
