/*
 * config_parse.h: the state of one read of airlockd.conf and the helpers the
 * config/ files share. Private to config/: other modules include config.h.
 */
#ifndef AIRLOCKD_CONFIG_PARSE_H
#define AIRLOCKD_CONFIG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "config_value.h"

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
	unsigned profile_limit[CONFIG_PROFILES_MAX][PROTO_LIMIT_COUNT_]; /* 0: not set */
	unsigned profile_subprocess[CONFIG_PROFILES_MAX];		 /* subprocess = */
	unsigned profile_hidden[CONFIG_PROFILES_MAX][CONFIG_HIDDEN_MAX]; /* each path's line */
	unsigned profile_network[CONFIG_PROFILES_MAX];			 /* network = */
	unsigned profile_hosts[CONFIG_PROFILES_MAX]; /* allow_hosts = or allow_private_hosts = */
	unsigned profile_lists[CONFIG_PROFILES_MAX]; /* mounts, allow_mounts, blocked_imports = */
	unsigned profile_runtimes[CONFIG_PROFILES_MAX]; /* runtimes = */
};

/* Rows of config_keys[] at most (config_parse.key_line). */
#define CONFIG_KEYS_MAX 80

/* How the table walk parses a key's value (config_key_apply()). */
enum config_key_type {
	CT_U32,	   /* decimal; [1, UINT32_MAX]: "must not be 0", else "a number from min to max" */
	CT_BOOL,   /* true/false, yes/no, on/off, 1/0 */
	CT_MODE,   /* octal, at most 0777 */
	CT_SIZE,   /* uint64_t, K, M or G suffix; [min, max], else "NAME range" */
	CT_CUSTOM, /* the row's parse hook */
};

#define CK_REPEAT 0x1 /* may repeat in its section, each adds (a list longer than a line) */
/* def is the zeroed config's value, as the page writes it, not applied: parsing
 * it would look a name up in the user database for nothing (socket_user root). */
#define CK_DEF_ZERO 0x2

struct config_parse;

/*
 * One key of airlockd.conf (config_keys.c). offset is into struct config for
 * [daemon], [access], [sandbox], [sessions], [egress]; into the section's
 * struct for [profile], [runtime], [mount]. def is the default as
 * airlockd.conf(5) writes it, applied by config_defaults() through the
 * row's type; NULL when there is none or it is computed at the end
 * (config_daemon_finish()). doc is one line.
 */
struct config_key {
	enum config_section section;
	const char *name;
	enum config_key_type type;
	size_t offset;
	const char *def;
	uint64_t min, max; /* CT_U32, CT_SIZE */
	const char *range; /* CT_SIZE: what the value must be, said when it is not */
	int (*parse)(struct config_parse *p, const struct config_key *k, const char *value,
		     void *field);
	unsigned flags; /* CK_* */
	const char *doc;
};

extern const struct config_key config_keys[];
extern const size_t config_nkeys;

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
	/* The line of each config_keys[] row read, 0 if not (yet): duplicates,
	 * and the finishers' "was it set?". A [profile], [runtime] or [mount]
	 * header clears its section's rows. */
	unsigned key_line[CONFIG_KEYS_MAX];
	enum config_section section;
	struct config_runtime *rt; /* the [runtime NAME] being read */
	unsigned rt_line;
	bool rt_from_file[CONFIG_RUNTIMES_MAX];
	unsigned rt_argv_line[CONFIG_RUNTIMES_MAX]; /* 0: built in */
	bool rt_prestart_set[CONFIG_RUNTIMES_MAX];  /* prestart = given */
	bool rt_language_set[CONFIG_RUNTIMES_MAX];  /* language = given */

	/* zygote = yes: its line; 0: not given or no */
	unsigned rt_zygote_line[CONFIG_RUNTIMES_MAX];
	struct config_profile *prof; /* the [profile NAME] being read */
	bool prof_from_file[CONFIG_PROFILES_MAX];
	struct config_mount *mnt;		     /* the [mount NAME] being read */
	unsigned mnt_line[CONFIG_MOUNTS_MAX];	     /* its header */
	unsigned mnt_source_line[CONFIG_MOUNTS_MAX]; /* its source = */
	unsigned mnt_target_line[CONFIG_MOUNTS_MAX]; /* its target = */
	struct config_pending_mounts pending[CONFIG_PENDING_MAX];
	size_t npending;
	struct config_lines lines;
};

/* config_runtime.c */
/* Free a runtime's argv and clear everything but its name. */
void config_runtime_clear(struct config_runtime *rt);
/* Keep a list of [mount] names for mask, resolved once every section is read. */
int config_key_mounts(struct config_parse *p, const char *key, const char *value, uint32_t *mask);
/* A runtime section ends: it must have set both argv and code_name. */
int config_runtime_end(struct config_parse *p);
/* Start a [mount NAME] section. */
int config_mount_begin(struct config_parse *p, const char *name);
/* Start a [runtime NAME] section: a new runtime, or one replacing a built-in. */
int config_runtime_begin(struct config_parse *p, const char *name);
/*
 * The [mount] sections once every section is read: each has a source that
 * passes rootspec_source_check() now (the error at its source line) and a
 * valid target; no two targets overlap. Then the lists that name them.
 */
int config_mounts_finish(struct config_parse *p);

/* config_access.c */
/* Set the service user from a name or number that must exist in the user database. */
int config_set_service_user(struct config *cfg, const char *s);

/* config_egress.c */
/*
 * The egress keys once every section is read: network = proxy needs
 * allow_hosts; allow-list keys need network = proxy (a list that does
 * nothing is a mistake the administrator should hear of).
 */
int config_egress_finish(struct config_parse *p);
/* Two egress policies (NULL: no network) the same, entry by entry? */
bool config_egress_same(const struct egress_policy *a, const struct egress_policy *b);

/* config_profile.c */
/* Free a profile's hidden paths. */
void config_hidden_clear(struct config_profile *prof);
/*
 * Start a [profile NAME] section: a new profile, or one replacing a built-in
 * whole (what the section does not set is the [limits] default, as for a new
 * one). One slot stays free for the implicit "default".
 */
int config_profile_begin(struct config_parse *p, const char *name);

/* config_finish.c */
/*
 * The profiles once every section is read: a value set in a [profile]
 * section above its [limits] ceiling is an error at its line; a built-in
 * value above it is clamped (logged); a value not set is the [limits]
 * default. Then the implicit profile, unless default_profile names another,
 * which must exist and be open to everyone who may connect.
 */
int config_profiles_finish(struct config_parse *p);
/* Run every check across keys; the first failure is the file's error. */
int config_finish(struct config_parse *p);
/* Fill cfg with the built-in defaults that need no user database. */
int config_defaults(struct config_parse *p);

/* Parse hooks of config_keys[] rows, by file (config_access.c ...). */
#define CONFIG_HOOK(name)                                                                          \
	int name(struct config_parse *p, const struct config_key *k, const char *value, void *field)
CONFIG_HOOK(config_hook_socket);
CONFIG_HOOK(config_hook_state_dir);
CONFIG_HOOK(config_hook_owner);
CONFIG_HOOK(config_hook_user);
CONFIG_HOOK(config_hook_allow);
CONFIG_HOOK(config_hook_default_profile);
CONFIG_HOOK(config_hook_uid_base);
CONFIG_HOOK(config_hook_uid_count);
CONFIG_HOOK(config_hook_hostname);
CONFIG_HOOK(config_hook_resource_control);
CONFIG_HOOK(config_hook_network);
CONFIG_HOOK(config_hook_hosts);
CONFIG_HOOK(config_hook_network_max);
CONFIG_HOOK(config_hook_resolver);
CONFIG_HOOK(config_hook_port);
CONFIG_HOOK(config_hook_hidden);
CONFIG_HOOK(config_hook_profile_list);
CONFIG_HOOK(config_hook_switch);
CONFIG_HOOK(config_hook_flag);
CONFIG_HOOK(config_hook_mount_path);
CONFIG_HOOK(config_hook_package);
CONFIG_HOOK(config_hook_argv);
CONFIG_HOOK(config_hook_code_name);
CONFIG_HOOK(config_hook_prestart);
CONFIG_HOOK(config_hook_zygote);
CONFIG_HOOK(config_hook_runtime_mounts);
CONFIG_HOOK(config_hook_env);
CONFIG_HOOK(config_hook_cwd);
CONFIG_HOOK(config_hook_language);
CONFIG_HOOK(config_hook_profile_runtimes);

/* The profiles' runtimes = lists once every section is read (config_profile.c). */
int config_profile_runtimes_finish(struct config_parse *p);
/* A key of [profile NAME] that is no row: one of the limits (config_profile.c). */
int config_profile_limit(struct config_parse *p, const char *name, const char *value);
/* The row of section and name; NULL if there is none (config_keys.c). */
const struct config_key *config_key_find(enum config_section section, const char *name);
/* The line where the row of section and name was set, 0 if not (config_keys.c). */
unsigned config_key_line(const struct config_parse *p, enum config_section section,
			 const char *name);
/* Parse value into the row's field by its type (config_keys.c). */
int config_key_apply(struct config_parse *p, const struct config_key *k, const char *value);

#endif
