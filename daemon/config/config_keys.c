/*
 * config_keys.c: every key of airlockd.conf but the limits, as data (after
 * tmux's options-table.c): its section, type, where its value goes, its
 * default as airlockd.conf(5) writes it, its bounds or parse hook. The
 * parser walks it (config_key_set()), config_defaults() applies its
 * defaults, tests/config/check_config_docs.c holds the man page to it.
 * [limits] keys, and a profile's limits, are the limit table's (common/limit.c).
 * After the table, its walk: a row found, its line, a value applied by its
 * type (config_parse.c reads the file through them, config_finish.c applies
 * the defaults and asks what was set).
 */
#include "config_parse.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

#define D(field) offsetof(struct config, field)
#define P(field) offsetof(struct config_profile, field)
#define R(field) offsetof(struct config_runtime, field)
#define M(field) offsetof(struct config_mount, field)
#define U32(sec, name, field, def, doc)                                                            \
	{                                                                                          \
		sec, name, CT_U32, D(field), def, 1, UINT32_MAX, NULL, NULL, 0, doc                \
	}
#define RANGE(sec, name, field, def, min, max, doc)                                                \
	{                                                                                          \
		sec, name, CT_U32, D(field), def, min, max, NULL, NULL, 0, doc                     \
	}
#define SIZE(sec, name, field, def, min, max, range, doc)                                          \
	{                                                                                          \
		sec, name, CT_SIZE, D(field), def, min, max, range, NULL, 0, doc                   \
	}
#define TYPED(sec, name, type, field, def, doc)                                                    \
	{                                                                                          \
		sec, name, type, D(field), def, 0, 0, NULL, NULL, 0, doc                           \
	}
#define HOOK(sec, name, off, def, hook, flags, doc)                                                \
	{                                                                                          \
		sec, name, CT_CUSTOM, off, def, 0, 0, NULL, hook, flags, doc                       \
	}

_Static_assert(PROTO_MSG_MAX == 65536 && PROTO_BLOB_MAX == 256ULL << 20,
	       "the ranges of max_queued_bytes and file_max_bytes say these numbers");

const struct config_key config_keys[] = {
	/* [daemon] */
	HOOK(CONFIG_SEC_DAEMON, "socket", D(socket_path), CONFIG_DEFAULT_SOCKET, config_hook_socket,
	     0, "the listening socket"),
	HOOK(CONFIG_SEC_DAEMON, "socket_user", D(socket_uid), "root", config_hook_owner,
	     CK_DEF_ZERO, "owner of the socket"),
	HOOK(CONFIG_SEC_DAEMON, "socket_group", D(socket_gid), NULL, config_hook_owner, 0,
	     "group of the socket (default airlock if it exists, else root)"),
	TYPED(CONFIG_SEC_DAEMON, "socket_mode", CT_MODE, socket_mode, "0660",
	      "permission bits of the socket"),
	HOOK(CONFIG_SEC_DAEMON, "user", 0, NULL, config_hook_user, 0,
	     "the service user (default airlock if it exists, else nobody)"),
	U32(CONFIG_SEC_DAEMON, "max_connections_per_uid", max_connections_per_uid, "16",
	    "connections one user may hold open"),
	U32(CONFIG_SEC_DAEMON, "max_runs_per_uid", max_runs_per_uid, NULL,
	    "runs one user may have running (default half of max_runs)"),
	U32(CONFIG_SEC_DAEMON, "max_runs", max_runs, NULL,
	    "runs executing at once (default twice the online CPUs)"),
	RANGE(CONFIG_SEC_DAEMON, "prepared_sandboxes", prepared_sandboxes, "2", 0, 64,
	      "sandboxes built ahead of demand"),
	RANGE(CONFIG_SEC_DAEMON, "prestarted_interpreters", prestarted_interpreters, "2", 0, 64,
	      "interpreters started ahead per prestart runtime"),
	RANGE(CONFIG_SEC_DAEMON, "zygote_forks", zygote_forks, "1000", 1, 1000000,
	      "runs of a zygote before it is replaced"),
	RANGE(CONFIG_SEC_DAEMON, "zygote_idle_s", zygote_idle_s, "30", 1, 86400,
	      "seconds an idle zygote lives"),
	U32(CONFIG_SEC_DAEMON, "max_queued", max_queued, "64", "run requests waiting, all users"),
	U32(CONFIG_SEC_DAEMON, "max_queued_per_uid", max_queued_per_uid, "16",
	    "run requests one user may have waiting"),
	U32(CONFIG_SEC_DAEMON, "stop_grace_ms", stop_grace_ms, "10000",
	    "how long runs may go on after SIGTERM"),
	/* Less than one message could never be queued at all. */
	SIZE(CONFIG_SEC_DAEMON, "max_queued_bytes", max_queued_bytes, "8M", PROTO_MSG_MAX,
	     UINT64_MAX, "must be at least 65536 (one message)",
	     "reply bytes queued for one connection"),
	RANGE(CONFIG_SEC_DAEMON, "max_queued_fds", max_queued_fds, "128", PROTO_FDS_MAX, 65536,
	      "fds in replies queued or unread, one connection"),
	RANGE(CONFIG_SEC_DAEMON, "max_fds_per_uid", max_fds_per_uid, "256", PROTO_FDS_MAX, 65536,
	      "fds in replies queued or unread, one user"),
	SIZE(CONFIG_SEC_DAEMON, "max_bytes_per_uid", max_bytes_per_uid, "1G", 1ULL << 20,
	     UINT64_MAX, "must be at least 1M", "memory the daemon may hold for one user"),

	/* [access] */
	HOOK(CONFIG_SEC_ACCESS, "allow_users", 0, NULL, config_hook_allow, 0,
	     "users who may connect"),
	HOOK(CONFIG_SEC_ACCESS, "allow_groups", 0, NULL, config_hook_allow, 0,
	     "groups whose members may connect"),
	TYPED(CONFIG_SEC_ACCESS, "allow_all", CT_BOOL, allow_all, "false", "everyone may connect"),
	HOOK(CONFIG_SEC_ACCESS, "default_profile", 0, NULL, config_hook_default_profile, 0,
	     "the profile of a request naming none (default: the implicit \"default\")"),

	/* [sandbox] */
	HOOK(CONFIG_SEC_SANDBOX, "uid_base", 0, "600000", config_hook_uid_base, 0,
	     "first host uid of the runs"),
	HOOK(CONFIG_SEC_SANDBOX, "uid_count", 0, "2048", config_hook_uid_count, 0,
	     "host uids of the runs, two per run"),
	HOOK(CONFIG_SEC_SANDBOX, "hostname", 0, "airlock", config_hook_hostname, 0,
	     "the host name inside a sandbox"),
	HOOK(CONFIG_SEC_SANDBOX, "resource_control", 0, "auto", config_hook_resource_control, 0,
	     "how limits are enforced, at start-up only"),
	RANGE(CONFIG_SEC_SANDBOX, "cpu_max_percent", cpu_max_percent, "0", 0, 409600,
	      "a run's cpu.max, percent of one CPU (0: no cap)"),

	/* [sessions] */
	U32(CONFIG_SEC_SESSIONS, "max_per_uid", sessions_per_uid, "4",
	    "sessions one user may have open"),
	U32(CONFIG_SEC_SESSIONS, "max_interpreters", max_interpreters, NULL,
	    "live interpreters, all users (default twice max_runs)"),
	U32(CONFIG_SEC_SESSIONS, "max_interpreters_per_uid", max_interpreters_per_uid, NULL,
	    "live interpreters of one user (default half of max_interpreters)"),
	U32(CONFIG_SEC_SESSIONS, "idle_timeout_ms", session_idle_ms, "600000",
	    "a session's idle time out, by default"),
	U32(CONFIG_SEC_SESSIONS, "idle_timeout_ms_max", session_idle_ms_max, "3600000",
	    "the most idle time out a session may ask"),
	U32(CONFIG_SEC_SESSIONS, "lifetime_ms", session_lifetime_ms, "3600000",
	    "a session's lifetime, by default"),
	U32(CONFIG_SEC_SESSIONS, "lifetime_ms_max", session_lifetime_ms_max, "86400000",
	    "the most lifetime a session may ask"),
	U32(CONFIG_SEC_SESSIONS, "orphan_grace_ms", session_orphan_grace_ms, "60000",
	    "how long a session outlives its connection"),
	HOOK(CONFIG_SEC_SESSIONS, "state_directory", D(session_state_dir), NULL,
	     config_hook_state_dir, 0,
	     "where sessions are kept across a restart (default $STATE_DIRECTORY, else none)"),
	SIZE(CONFIG_SEC_SESSIONS, "file_max_bytes", session_file_max, "64M", 1, PROTO_BLOB_MAX,
	     "must be between 1 and 256M", "bytes of one file read or write"),

	/* [egress] */
	HOOK(CONFIG_SEC_EGRESS, "resolver", 0, NULL, config_hook_resolver, 0,
	     "name servers of the proxy (default: those of /etc/resolv.conf)"),
	HOOK(CONFIG_SEC_EGRESS, "port", 0, "3128", config_hook_port, 0,
	     "the proxy's port inside each run"),
	U32(CONFIG_SEC_EGRESS, "connect_timeout_ms", egress_connect_ms, "10000",
	    "time to connect upstream"),
	U32(CONFIG_SEC_EGRESS, "idle_timeout_ms", egress_idle_ms, "120000",
	    "a proxied connection's idle time out"),
	U32(CONFIG_SEC_EGRESS, "max_connections", egress_connections_max, NULL,
	    "proxied connections, all runs (default RLIMIT_NOFILE / 8)"),

	/* [profile NAME]: and every [limits] name (config_profile_limit()) */
	HOOK(CONFIG_SEC_PROFILE, "allow_users", 0, NULL, config_hook_allow, 0,
	     "users who may use the profile"),
	HOOK(CONFIG_SEC_PROFILE, "allow_groups", 0, NULL, config_hook_allow, 0,
	     "groups whose members may use the profile"),
	HOOK(CONFIG_SEC_PROFILE, "network", 0, NULL, config_hook_network, 0,
	     "none, or proxy: egress to allow_hosts"),
	HOOK(CONFIG_SEC_PROFILE, "allow_hosts", 0, NULL, config_hook_hosts, CK_REPEAT,
	     "hosts the proxy lets a run reach"),
	HOOK(CONFIG_SEC_PROFILE, "allow_private_hosts", 0, NULL, config_hook_hosts, CK_REPEAT,
	     "private addresses the proxy lets a run reach"),
	HOOK(CONFIG_SEC_PROFILE, "network_bytes", 0, NULL, config_hook_network_max, 0,
	     "bytes a run may move through the proxy"),
	HOOK(CONFIG_SEC_PROFILE, "network_connections", 0, NULL, config_hook_network_max, 0,
	     "connections a run may open through the proxy"),
	HOOK(CONFIG_SEC_PROFILE, "mounts", P(mounts), NULL, config_hook_profile_list, 0,
	     "[mount] sections every run gets"),
	HOOK(CONFIG_SEC_PROFILE, "allow_mounts", P(allow_mounts), NULL, config_hook_profile_list, 0,
	     "[mount] sections a request may add"),
	HOOK(CONFIG_SEC_PROFILE, "file_write", P(no_file_write), NULL, config_hook_switch, 0,
	     "workspace and /tmp writable"),
	HOOK(CONFIG_SEC_PROFILE, "subprocess", P(no_subprocess), NULL, config_hook_switch, 0,
	     "the code may start processes"),
	HOOK(CONFIG_SEC_PROFILE, "background_processes", P(background_processes), NULL,
	     config_hook_flag, 0, "interpreter sessions may keep processes between cells"),
	HOOK(CONFIG_SEC_PROFILE, "hidden_paths", 0, NULL, config_hook_hidden, CK_REPEAT,
	     "paths absent in its runs"),
	HOOK(CONFIG_SEC_PROFILE, "blocked_imports", 0, NULL, config_hook_profile_list, 0,
	     "Python modules the advisory check reports"),
	HOOK(CONFIG_SEC_PROFILE, "runtimes", 0, NULL, config_hook_profile_runtimes, 0,
	     "the runtimes its runs may use (default all)"),

	/* [mount NAME] */
	HOOK(CONFIG_SEC_MOUNT, "source", M(source), NULL, config_hook_mount_path, 0,
	     "the host directory or file"),
	HOOK(CONFIG_SEC_MOUNT, "target", M(target), NULL, config_hook_mount_path, 0,
	     "where it appears in the sandbox"),
	HOOK(CONFIG_SEC_MOUNT, "package", M(package), NULL, config_hook_package, 0,
	     "exec allowed (a venv, /opt/...)"),

	/* [runtime NAME] */
	HOOK(CONFIG_SEC_RUNTIME, "argv", 0, NULL, config_hook_argv, 0,
	     "the command, {code} the code file"),
	HOOK(CONFIG_SEC_RUNTIME, "code_name", 0, NULL, config_hook_code_name, 0,
	     "the code file's name in the sandbox"),
	HOOK(CONFIG_SEC_RUNTIME, "mounts", R(mounts), NULL, config_hook_runtime_mounts, 0,
	     "[mount] sections every run of it gets"),
	HOOK(CONFIG_SEC_RUNTIME, "env", 0, NULL, config_hook_env, 0, "its environment"),
	HOOK(CONFIG_SEC_RUNTIME, "cwd", 0, NULL, config_hook_cwd, 0, "its working directory"),
	HOOK(CONFIG_SEC_RUNTIME, "prestart", 0, NULL, config_hook_prestart, 0,
	     "interpreters started ahead (default yes for a python)"),
	HOOK(CONFIG_SEC_RUNTIME, "zygote", 0, NULL, config_hook_zygote, 0,
	     "runs forked from a started python (default no; needs prestart)"),
	HOOK(CONFIG_SEC_RUNTIME, "language", 0, NULL, config_hook_language, 0,
	     "python, shell or other (default: its program's)"),
};

const size_t config_nkeys = sizeof(config_keys) / sizeof(config_keys[0]);

_Static_assert(sizeof(config_keys) / sizeof(config_keys[0]) <= CONFIG_KEYS_MAX,
	       "CONFIG_KEYS_MAX: room for every row in config_parse.key_line");

const struct config_key *
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
