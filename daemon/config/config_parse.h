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

/* config_parse.c */
/* Record the first error of a parse, at a given line; returns the error. */
int __attribute__((format(printf, 4, 5)))
config_fail_at(struct config_parse *p, int error, unsigned line, const char *fmt, ...);
/* Split a value into whitespace-separated words; the result is owned by the caller. */
int config_split_words(const char *s, char **ret, size_t max, size_t *ret_n);
/* Parse a decimal unsigned integer: digits only, no sign, no space, no overflow. */
int config_parse_u64(const char *s, uint64_t *ret);
/* Parse a byte count with an optional binary suffix K, M or G. */
int config_parse_size(const char *s, uint64_t *ret);
/* Parse an octal file mode up to 0777. */
int config_parse_mode(const char *s, mode_t *ret);
/* Parse a boolean: true/false, yes/no, on/off, 1/0. */
int config_parse_bool(const char *s, bool *ret);
/* Is s all decimal digits (a numeric uid or gid)? */
bool config_is_number(const char *s);
/* Parse a numeric id; (uid_t)-1 is "no id" for the kernel and is refused. */
int config_parse_id(const char *s, uint32_t *ret);
/* Resolve a user (group: a group) name or number to its id; a name must exist. */
int config_resolve_id(const char *s, bool group, uint32_t *ret);
/* Report a bad number for a key, naming what was expected. */
int config_bad_number(struct config_parse *p, int r, const char *name, const char *value,
		      const char *expected);
/* Parse a non-zero 32-bit count. */
int config_key_u32(struct config_parse *p, const char *name, const char *value, uint32_t *ret);
/*
 * The next item of a comma-separated list at *s (blanks around it dropped)
 * into item; *s moves past it and its comma. Returns 1, 0 at the end, or
 * -errno for an empty or too long item (the error at line of p names key).
 */
int config_list_next(struct config_parse *p, unsigned line, const char *key, const char **s,
		     char *item, size_t itemlen);
/* Parse a comma-separated list of users or groups into ids. */
int config_key_list(struct config_parse *p, const char *name, const char *value, bool groups,
		    uint32_t *ids, size_t *ret_n);
/* Replace a string option with a copy of value. */
int config_set_string(char **slot, const char *value);
/* Parse the value of limit l (named name in the file) by its kind and bound. */
int config_limit_value(struct config_parse *p, enum proto_limit l, const char *name,
		       const char *value, uint64_t *ret);

/* config_runtime.c */
/* Free a runtime's argv and clear everything but its name. */
void config_runtime_clear(struct config_runtime *rt);
/* Keep a list of [mount] names for mask, resolved once every section is read. */
int config_key_mounts(struct config_parse *p, const char *key, const char *value, uint32_t *mask);
/* Handle one key of [mount NAME]: source, target, package. Checked at the end. */
int config_key_mount(struct config_parse *p, const char *name, const char *value);
/* Handle one key of [runtime NAME]. */
int config_key_runtime(struct config_parse *p, const char *name, const char *value);
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
/* Handle one key of [daemon]. */
int config_key_daemon(struct config_parse *p, const char *name, const char *value);
/* Handle one key of [access]. */
int config_key_access(struct config_parse *p, const char *name, const char *value);
/* Handle one key of [sandbox]. */
int config_key_sandbox(struct config_parse *p, const char *name, const char *value);
/* Handle one key of [sessions]. */
int config_key_sessions(struct config_parse *p, const char *name, const char *value);

/* config_egress.c */
/*
 * The egress keys of [profile NAME]: network = none|proxy, allow_hosts and
 * allow_private_hosts (docs/design-egress.md, section 2), network_bytes,
 * network_connections. Whether they fit together is checked at the end
 * (config_egress_finish()).
 */
int config_key_profile_egress(struct config_parse *p, const char *name, const char *value);
/* Handle one key of [egress]. */
int config_key_egress(struct config_parse *p, const char *name, const char *value);
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
 * Handle one key of [profile NAME]: a [limits] name sets the profile's value
 * (its default and its ceiling), allow_users/allow_groups who may use it,
 * file_write and subprocess policy switches, hidden_paths.
 */
int config_key_profile(struct config_parse *p, const char *name, const char *value);
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
int config_defaults(struct config *cfg);

#endif
