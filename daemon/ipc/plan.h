/*
 * plan.h: what one sandbox is to run, packed by the frontend into a sealed
 * memfd and read, allocation-free, by the sandbox's supervisor.
 *
 * Layout: struct plan_hdr, then struct plan_file[nfiles], then a string and
 * data area. Every offset is from the start of the plan and is checked by
 * plan_parse() against the plan's size; every string ends with a NUL inside
 * the plan. The frontend validated the request already; the parser checks
 * again because the supervisor runs with capabilities (in its namespace).
 */
#ifndef AIRLOCKD_PLAN_H
#define AIRLOCKD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define PLAN_MAGIC 0x414c504cU /* "ALPL" */
#define PLAN_ARGV_MAX (PROTO_ARGV_MAX + 24)
#define PLAN_PROXY_ENV_MAX 8   /* plan_env_proxy()'s variables */
#define PLAN_ENV_RUNTIME_MAX 8 /* a runtime's env = entries (config.h) */
/* The base environment (12), the runtime's, the request's, the proxy's. */
#define PLAN_ENV_MAX (PROTO_ENV_MAX + 16 + PLAN_ENV_RUNTIME_MAX + PLAN_PROXY_ENV_MAX)
/* "files" and a file_bundle's entries together. The supervisor's tables of
 * them are static, never on its stack (docs/design-profiles.md §5). */
#define PLAN_FILES_MAX PROTO_RUN_FILES_MAX
#define PLAN_SIZE_MAX (1ULL << 30)
/* A profile's hidden_paths (docs/design-profiles.md, section 3.4). */
#define PLAN_HIDDEN_MAX 16

/* plan_hdr.flags */
#define PLAN_F_SESSION 0x1u  /* the workspace is a session's: artifacts are what changed */
#define PLAN_F_READONLY 0x2u /* file_write = false: /workspace and /tmp read-only */
#define PLAN_F_NOPROC 0x4u   /* subprocess = false: one process, one thread, one exec */
/* network = proxy: listen at 127.0.0.1:egress_port (sandbox_egress.c) */
#define PLAN_F_EGRESS 0x80u
#define PLAN_F_TOOLS 0x100u  /* the run declares tools: /run/tools (sandbox_tools.c) */
#define PLAN_F_CELLS 0x1000u /* an interpreter session's sandbox: cells (sandbox_cells.c) */
/* with PLAN_F_CELLS: a cell's other processes live on after it
 * (docs/design-interpreters.md §2.7) */
#define PLAN_F_BACKGROUND 0x2000u

/* Paths inside the sandbox. */
#define PLAN_WORKSPACE "/workspace"
#define PLAN_CODE_DIR "/run/airlock"
/* The code's home, on the run's /tmp: caches and configuration that tools
 * write there are never artifacts (docs/security.md). */
#define PLAN_HOME "/tmp/home"
#define PLAN_SANDBOX_UID 1000
#define PLAN_SANDBOX_GID 1000

struct plan_hdr {
	uint32_t magic;
	uint32_t argc;
	uint32_t envc;
	uint32_t nfiles;
	uint32_t argv_off;	/* argc NUL-terminated strings, back to back */
	uint32_t env_off;	/* envc "KEY=VALUE" strings, back to back */
	uint32_t code_name_off; /* NUL-terminated file name in PLAN_CODE_DIR, "" = no code */
	uint32_t hostname_off;
	uint64_t code_off, code_len;
	uint64_t stdin_off, stdin_len;
	uint32_t has_stdin;
	uint32_t flags;	       /* PLAN_F_* */
	uint32_t mounts;       /* bit i: the root spec's mount i (rootspec.h) */
	uint32_t rootspec_gen; /* the root spec generation mounts index */
	uint32_t cwd_off;      /* NUL-terminated: "" (PLAN_WORKSPACE) or beneath it */
	uint32_t reserved2;    /* 0 */
	uint64_t limits[PROTO_LIMIT_COUNT_];
	uint32_t egress_port; /* PLAN_F_EGRESS: 1 to 65535, else 0 */
	uint32_t reserved;
	uint32_t hidden_off; /* nhidden NUL-terminated paths, back to back (0: none) */
	uint32_t nhidden;    /* hidden_paths: <= PLAN_HIDDEN_MAX (sandbox_fs_root_hidable) */
};

struct plan_file {
	uint32_t name_off; /* NUL-terminated relative path, already validated */
	uint32_t mode;	   /* 0644 or 0755 */
	uint64_t data_off, data_len;
};

/* The supervisor's view of a parsed plan: pointers into the mapping. */
struct plan_view {
	const struct plan_hdr *hdr;
	const char *argv[PLAN_ARGV_MAX + 1];
	const char *envp[PLAN_ENV_MAX + 1];
	const char *code_name;
	const char *hostname;
	const char *cwd; /* "" or PLAN_WORKSPACE "/..." (a checked workspace name) */
	const char *hidden[PLAN_HIDDEN_MAX + 1]; /* hidden_paths, NULL-terminated */
	uint32_t nhidden;
	const uint8_t *code;
	const uint8_t *stdin_data;
	struct {
		const char *name;
		const uint8_t *data;
		uint64_t len;
		uint32_t mode;
	} files[PLAN_FILES_MAX];
	uint32_t nfiles;
};

/* The input of plan_build(): everything resolved by the frontend. */
struct plan_input {
	const char *const *argv;
	size_t argc;
	const char *const *envp; /* "KEY=VALUE" */
	size_t envc;
	const char *code_name; /* NULL: no code file */
	const void *code;
	size_t code_len;
	const void *stdin_data; /* NULL: /dev/null */
	size_t stdin_len;
	const char *const *file_names;
	const void *const *file_data;
	const size_t *file_len;
	const uint32_t *file_mode; /* NULL: every file 0644 */
	size_t nfiles;
	const char *hostname;
	const struct proto_limits *limits;
	uint32_t flags;
	uint16_t egress_port;	   /* with PLAN_F_EGRESS */
	uint32_t mounts;	   /* bits of the root spec's mounts */
	uint32_t rootspec_gen;	   /* of the root spec those bits index */
	const char *cwd;	   /* NULL: PLAN_WORKSPACE; else PLAN_WORKSPACE or beneath it */
	const char *const *hidden; /* the profile's hidden_paths */
	size_t nhidden;
};

/*
 * A run's environment, built from nothing: PATH, HOME, LANG, TMPDIR,
 * OPENBLAS_NUM_THREADS and USER, then the runtime's "KEY=VALUE" entries (at
 * most PLAN_ENV_RUNTIME_MAX, checked by the config), then the request's own;
 * a later key replaces an earlier one of the same name.
 */
struct plan_env {
	const char *envp[PLAN_ENV_MAX + 1]; /* NULL-terminated */
	size_t envc;
	char *owned[PROTO_ENV_MAX + PLAN_PROXY_ENV_MAX];
	size_t nowned;
};

int plan_env_build(struct plan_env *ret, const char *const *rt_env, size_t nrt,
		   const struct proto_env *env, size_t nenv);

/* Set kv ("KEY=VALUE", not copied: it must outlive env) in an environment
 * built by plan_env_build(), replacing the same key. 0, -EINVAL or -E2BIG. */
int plan_env_set(struct plan_env *env, const char *kv);

/*
 * Add the proxy variables of a network = proxy run (HTTP_PROXY, HTTPS_PROXY,
 * ALL_PROXY = http://127.0.0.1:port, NO_PROXY = localhost,127.0.0.1,::1, and
 * each in lower case) to an environment built by plan_env_build(): a name
 * the request set keeps the request's value. Returns 0 or -ENOMEM.
 */
int plan_env_proxy(struct plan_env *env, uint16_t port);
void plan_env_free(struct plan_env *env);

/* Pack in into a new sealed memfd. Returns 0 or -errno. */
int plan_build(const struct plan_input *in, int *ret_fd);

/*
 * Check and index a plan mapped at base (size bytes). Allocation-free: safe
 * between clone and exec. The view is large (PLAN_FILES_MAX rows): keep it
 * static or on the heap. Returns 0 or -EINVAL; on failure *ret is zeroed.
 */
int plan_parse(const void *base, uint64_t size, struct plan_view *ret);

#endif
