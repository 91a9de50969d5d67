/* config.h: airlockd's configuration, parsed with inih; defaults work with no file. */
#ifndef AIRLOCKD_CONFIG_H
#define AIRLOCKD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config_file.h"
#include "egress_rules.h"
#include "plan.h"
#include "proto.h"
#include "rootspec.h"
#include "rules.h"

#define CONFIG_DEFAULT_PATH "/etc/airlock/airlockd.conf"
#define CONFIG_DEFAULT_SOCKET "/run/airlock/airlock.sock"
#define CONFIG_LIST_MAX 64
#define CONFIG_RUNTIMES_MAX 16
#define CONFIG_RUNTIME_ARGV_MAX 16
#define CONFIG_RUNTIME_ENV_MAX PLAN_ENV_RUNTIME_MAX /* env = KEY=VALUE words of a runtime */
#define CONFIG_RUNTIME_CWD_MAX 128
#define CONFIG_PROFILES_MAX PROTO_PROFILES_MAX
#define CONFIG_RESOLVERS_MAX 3 /* [egress] resolver = entries */
/* allow_hosts and allow_private_hosts of all profiles, as listed, in bytes */
#define CONFIG_ALLOW_BYTES_MAX 16384
#define CONFIG_MOUNTS_MAX ROOTSPEC_MOUNTS_MAX /* [mount] sections */
#define CONFIG_HIDDEN_MAX PLAN_HIDDEN_MAX     /* hidden_paths of a profile */
/* hidden_paths of all profiles together, bytes: info_ok lists them in one
 * packet (PROTO_MSG_MAX) next to the allow-lists (CONFIG_ALLOW_BYTES_MAX). */
#define CONFIG_HIDDEN_BYTES_MAX 8192
/* mounts, allow_mounts and blocked_imports of all profiles, as names, in
 * bytes: airlock info lists them in one packet with the allow-lists */
#define CONFIG_LISTED_BYTES_MAX 4096
/* The profile a request gets when [access] names no default_profile: the
 * [limits] defaults, a request may ask up to the [limits] ceilings. */
#define CONFIG_PROFILE_IMPLICIT "default"

/*
 * A runtime: argv template. The literal token "{code}" is replaced with the
 * path of the code file; the request's argv is appended. The runtime named
 * "exec" has no template: the request's argv is the whole command.
 */
struct config_runtime {
	char name[PROTO_RUNTIME_MAX + 1];
	char *argv[CONFIG_RUNTIME_ARGV_MAX + 1]; /* NULL-terminated, owned */
	size_t argc;
	char code_name[64]; /* file name of the code inside the sandbox, e.g. "main.py" */
	bool is_exec;
	uint32_t mounts; /* mounts = NAME[, NAME...]: bits of config.mounts every run gets */
	char *env[CONFIG_RUNTIME_ENV_MAX + 1]; /* env = KEY=VALUE ...: NULL-terminated, owned */
	size_t nenv;
	char cwd[CONFIG_RUNTIME_CWD_MAX]; /* cwd = /workspace[/...]; "" = /workspace */
	/* prestart = yes: interpreters started ahead serve its runs that set
	 * no env, argv or stdin (docs/design-interpreters.md §1; default no) */
	bool prestart;
	/* zygote = yes: its eligible runs fork from a started python, one
	 * zygote per caller uid (docs/design-bursts.md §3; default no; only
	 * with prestart = yes) */
	bool zygote;
	/* language = python|shell|other; absent: its program's, at load
	 * (rules_program_language of argv[0], else of what argv[0] resolves
	 * to). What the runtime is, whatever its name: runtime_packages in
	 * info, the advisory check, prestart's default, interpreter sessions,
	 * and a shell is refused under subprocess = false. */
	enum rules_language language;
};

/*
 * [mount NAME]: a host directory or file bound read-only, nosuid, nodev and
 * (unless package) noexec at target in the sandboxes of the profiles and
 * runtimes that name it. source passed rootspec_source_check() when read.
 */
struct config_mount {
	char name[PROTO_MOUNT_MAX + 1];
	char source[ROOTSPEC_PATH_MAX]; /* source = /srv/datasets/x */
	char target[ROOTSPEC_PATH_MAX]; /* target = /data/x */
	bool package;			/* package = true: exec allowed (a venv, /opt/...) */
};

/*
 * A profile: [profile NAME], or one of the built-ins (minimal, standard,
 * generous), or the implicit "default" of [limits]. defaults are what a
 * request asking nothing gets, ceilings the most it may ask; for a [profile]
 * section both are its values (a request may only tighten). Who may use it:
 * everyone who may connect when both lists are empty.
 */
struct config_profile {
	char name[PROTO_PROFILE_MAX + 1];
	struct proto_limits defaults;
	struct proto_limits ceilings;
	uid_t allow_uids[CONFIG_LIST_MAX]; /* allow_users = name[, name...] */
	size_t nallow_uids;
	gid_t allow_gids[CONFIG_LIST_MAX]; /* allow_groups = name[, name...] */
	size_t nallow_gids;
	/* network = none (default) | proxy: egress through the daemon's proxy
	 * to allow_hosts only (docs/design-egress.md); egress is NULL unless
	 * proxy, owned (allow_hosts, allow_private_hosts, network_bytes,
	 * network_connections). */
	bool network_proxy;
	struct egress_policy *egress;
	uint32_t mounts;       /* mounts = NAME[, ...]: bits of config.mounts every run gets */
	uint32_t allow_mounts; /* allow_mounts = NAME[, ...]: those a request may add */
	/* Policy switches, kernel-enforced (docs/security.md, "Profiles"),
	 * stored inverted so that a zeroed profile allows everything, as the
	 * built-ins and the implicit "default" do. */
	bool no_file_write; /* file_write = false: workspace and /tmp read-only */
	bool no_subprocess; /* subprocess = false: one process, one thread, one exec */
	/* background_processes = true: an interpreter session opened with
	 * `background` keeps what its cells start between cells
	 * (docs/design-interpreters.md §2.7). Default false, so a zeroed
	 * profile (the built-ins, the implicit "default") refuses it. */
	bool background_processes;
	/* hidden_paths = PATH[, ...]: absent in its runs (sandbox_fs_root_hidable:
	 * beneath /usr or an /etc entry of the root; none beneath another),
	 * owned */
	char *hidden[CONFIG_HIDDEN_MAX];
	size_t nhidden;
	/* blocked_imports = a.b, c: Python modules the advisory check reports
	 * (daemon/frontend/advisory.c). Never a boundary: docs/security.md. */
	char blocked_imports[PROTO_BLOCKED_IMPORTS_MAX][PROTO_MODULE_NAME_MAX + 1];
	size_t nblocked_imports;
	/* runtimes = NAME[, ...]: the runtimes its runs and sessions may use
	 * (admit.c, rule 4); none listed: every runtime. */
	char runtimes[CONFIG_RUNTIMES_MAX][PROTO_RUNTIME_MAX + 1];
	size_t nruntimes;
};

struct config {
	/* [daemon] */
	char *socket_path;  /* socket = (default CONFIG_DEFAULT_SOCKET) */
	uid_t socket_uid;   /* socket_user = (default root) */
	gid_t socket_gid;   /* socket_group = (default airlock, else root) */
	mode_t socket_mode; /* socket_mode = octal (default 0660) */
	char *service_user; /* user = (default "airlock") */
	uid_t service_uid;
	gid_t service_gid;
	uint32_t max_connections_per_uid; /* max_connections_per_uid = (default 16) */
	uint32_t max_runs_per_uid;   /* max_runs_per_uid = (default max_runs / 2, at least 1) */
	uint32_t max_runs;	     /* max_runs = (default 2 * CPUs) */
	uint32_t prepared_sandboxes; /* prepared_sandboxes = made ahead (default 2) */
	/* prestarted_interpreters = per runtime with prestart = yes (default 2) */
	uint32_t prestarted_interpreters;
	uint32_t zygote_forks;	     /* zygote_forks = runs before a zygote is replaced (1000) */
	uint32_t zygote_idle_s;	     /* zygote_idle_s = an idle zygote's life (default 30) */
	uint32_t max_queued;	     /* max_queued = runs waiting, all uids (default 64) */
	uint32_t max_queued_per_uid; /* max_queued_per_uid = (default 16) */
	uint32_t stop_grace_ms;	     /* stop_grace_ms = runs may finish (default 10000) */
	uint64_t max_queued_bytes;   /* max_queued_bytes = per connection (default 8 MiB) */
	uint32_t max_queued_fds;     /* max_queued_fds = fds in replies queued or unread,
				      * per connection (default 128) */
	uint32_t max_fds_per_uid;    /* max_fds_per_uid = the same, one uid (default 256) */
	uint64_t max_bytes_per_uid;  /* max_bytes_per_uid = plans, replies, memfds held
				      * for one uid (default 1 GiB) */

	/* [access]: root is always allowed. Empty lists and allow_all = false
	 * mean only members of socket_group (and root). */
	uid_t allow_uids[CONFIG_LIST_MAX]; /* allow_users = name[, name...] */
	size_t nallow_uids;
	gid_t allow_gids[CONFIG_LIST_MAX]; /* allow_groups = name[, name...] */
	size_t nallow_gids;
	bool allow_all; /* allow_all = false */
	/* default_profile = NAME: what a request naming no profile gets
	 * (default: the implicit profile "default" of [limits]) */
	char default_profile[PROTO_PROFILE_MAX + 1];

	/* [sandbox] */
	uid_t uid_base;		   /* uid_base = (default 600000): per-run host uids */
	uint32_t uid_count;	   /* uid_count = (default 2048): uids in the range, 2 per run */
	char *hostname;		   /* hostname = (default "airlock") */
	uint32_t resource_control; /* resource_control = auto|cgroup2|cgroup1|rlimit
				    * (enum cgroup_kind; default auto; at start-up only) */
	uint32_t cpu_max_percent;  /* cpu_max_percent = per-run cpu.max, % of one CPU
				    * (cgroup2; default 0: no cap) */

	/* [sessions] */
	uint32_t sessions_per_uid;	  /* max_per_uid = (default 4) */
	uint32_t session_idle_ms;	  /* idle_timeout_ms = (default 600000) */
	uint32_t session_idle_ms_max;	  /* idle_timeout_ms_max = (default 3600000) */
	uint32_t session_lifetime_ms;	  /* lifetime_ms = (default 3600000) */
	uint32_t session_lifetime_ms_max; /* lifetime_ms_max = (default 86400000) */
	uint32_t session_orphan_grace_ms; /* orphan_grace_ms = (default 60000) */
	char *session_state_dir;	  /* state_directory = (NULL: none) */
	uint64_t session_file_max;	  /* file_max_bytes = read/write size (default 64M) */
	/* Live interpreters (interpreter sessions open), all uids and one uid:
	 * max_interpreters = (default 2 * max_runs), max_interpreters_per_uid =
	 * (default max_interpreters / 2, at least 1). Their own caps: between
	 * cells an interpreter holds no run slot (docs/design-interpreters.md). */
	uint32_t max_interpreters;
	uint32_t max_interpreters_per_uid;

	/* [egress]: the proxy of network = proxy profiles */
	char egress_resolvers[CONFIG_RESOLVERS_MAX][64]; /* resolver = IP[:port], ...
							  * (default: /etc/resolv.conf) */
	size_t negress_resolvers;
	uint16_t egress_port;		 /* port = (default 3128): inside each run's namespace */
	uint32_t egress_connect_ms;	 /* connect_timeout_ms = (default 10000) */
	uint32_t egress_idle_ms;	 /* idle_timeout_ms = (default 120000) */
	uint32_t egress_connections_max; /* max_connections = (0: RLIMIT_NOFILE / 8), all runs */

	/* [limits]: defaults and ceilings, e.g. wall_ms = 10000, wall_ms_max = 60000 */
	struct proto_limits defaults;
	struct proto_limits ceilings;

	/* [runtime NAME]: argv = /usr/bin/python3 -I -S -B {code}; code_name = main.py */
	struct config_runtime runtimes[CONFIG_RUNTIMES_MAX];
	size_t nruntimes;

	/* [profile NAME]: limits (value = default = ceiling), allow_users,
	 * allow_groups; the built-ins first, the implicit "default" among them
	 * unless default_profile names another. */
	struct config_profile profiles[CONFIG_PROFILES_MAX];
	size_t nprofiles;

	/* [mount NAME]: source, target, package; bit i of a mounts mask is mounts[i] */
	struct config_mount mounts[CONFIG_MOUNTS_MAX];
	size_t nmounts;
};

/*
 * Fill cfg with the built-in defaults, then, if path is not NULL, read it.
 * A file that does not exist is an error only when must_exist is true.
 * Errors are written to err (at most errlen bytes) as "file:line: reason".
 * The file is refused when it is writable by anyone but root (owner not root,
 * or group/other write bit set). Returns 0 or -errno; on error cfg is freed.
 */
int config_load(struct config *cfg, const char *path, bool must_exist, char *err, size_t errlen);

/*
 * Like config_load() on a file named name holding len bytes of buf, without
 * the ownership and permission checks: for tests and the fuzzer.
 */
int config_load_buffer(struct config *cfg, const char *name, const void *buf, size_t len, char *err,
		       size_t errlen);
/* config_read_sealed(): config_file.h. */
void config_free(struct config *cfg);

/* Look a runtime up by name; NULL if unknown. */
const struct config_runtime *config_runtime_find(const struct config *cfg, const char *name);

/* Look a profile up by name; NULL if unknown. */
const struct config_profile *config_profile_find(const struct config *cfg, const char *name);

/* The profile of a request naming none (cfg->default_profile). Never NULL. */
const struct config_profile *config_profile_default(const struct config *cfg);

/*
 * A reload (o: the config it replaces, n: the new one): does a sandbox made
 * for profile and runtime under o differ from one made under n, in what
 * the sandbox is built with (the profile's mounts, network and allow-list,
 * switches, hidden paths, limits; the runtime's argv, env, cwd and mounts;
 * a profile or runtime gone)? Access lists and blocked_imports are not
 * compared: they are read again for each request. When it differs, what
 * differs is written to why ("mounts, allow-list"). Pure: unit-tested.
 */
bool config_sandbox_changed(const struct config *o, const struct config *n, const char *profile,
			    const char *runtime, char *why, size_t whylen);

/* Look a mount up by name; its index into cfg->mounts, or -1 if unknown. */
int config_mount_find(const struct config *cfg, const char *name);

/*
 * The mounts of one run: the profile's and the runtime's (rt may be NULL),
 * and those asked (n names), each of which must exist (-ENOENT) and be in
 * the profile's allow_mounts or one of those (-EPERM); *ret_bad is then the index of the
 * name refused. A pure function of its arguments.
 */
int config_mounts_resolve(const struct config *cfg, const struct config_profile *prof,
			  const struct config_runtime *rt, const char *const *asked, size_t n,
			  uint32_t *ret, size_t *ret_bad);

/* May this peer (uid, its groups) use the profile? root always may. */
/* May runs of prof use the runtime named runtime (its runtimes = list)? */
bool config_profile_runtime_allowed(const struct config_profile *prof, const char *runtime);
/* "python, sh" of prof's runtimes = list into buf ("" for none: all). */
void config_profile_runtimes_text(const struct config_profile *prof, char *buf, size_t len);
bool config_profile_allowed(const struct config_profile *prof, uid_t uid, const gid_t *gids,
			    size_t ngids);

/*
 * Resolve the limits of one request within a profile: 0 takes the profile's
 * default; a value above its ceiling fails with -ERANGE and *ret_bad names
 * the limit. A pure function of its arguments.
 */
int config_limits_resolve(const struct config_profile *prof, const struct proto_limits *asked,
			  struct proto_limits *ret, enum proto_limit *ret_bad);

/*
 * Is this peer allowed to connect? root always is. gids holds the peer's
 * primary and supplementary groups (SO_PEERCRED, SO_PEERGROUPS).
 */
bool config_peer_allowed(const struct config *cfg, uid_t uid, const gid_t *gids, size_t ngids);

#endif
