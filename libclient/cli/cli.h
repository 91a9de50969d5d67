/* cli/cli.h: what the airlock command's files share (not installed). */
#ifndef AIRLOCK_CLI_CLI_H
#define AIRLOCK_CLI_CLI_H

#include "airlock.h"
#include "limit.h"
#include "tool.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Exit statuses of the command itself; see airlock(1). */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_NOT_FOUND = 1, /* cancel: no such run; session commands: no such session or file */
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_NOINPUT = 66,	   /* EX_NOINPUT: an input file could not be read */
	CLI_EXIT_UNAVAILABLE = 69, /* EX_UNAVAILABLE: daemon unreachable or refused */
	CLI_EXIT_SOFTWARE = 70,	   /* EX_SOFTWARE: out of memory, internal failure */
	CLI_EXIT_CANTCREAT = 73,   /* EX_CANTCREAT: an artifact could not be written */
	CLI_EXIT_PROCESSES = 119,  /* outcome process_limit */
	CLI_EXIT_WALL = 120,
	CLI_EXIT_CPU = 121,
	CLI_EXIT_MEMORY = 122,
	CLI_EXIT_SANDBOX = 123,
	CLI_EXIT_CANCELLED = 124,
	CLI_EXIT_NO_SESSION = 125, /* run --session: no such session of the caller */
	CLI_EXIT_SIGNAL_BASE = 128,
};

/* Options common to every subcommand. */
struct cli {
	const char *socket;
	bool json;
	uint64_t timeout_ms; /* --timeout: each request to the daemon; 0: none */
};

/* The values getopt_long returns for long options. */
enum {
	OPT_SOCKET = 256,
	OPT_JSON,
	OPT_LANG,
	OPT_ARG,
	OPT_FILE,
	OPT_STDIN,
	OPT_ENV,
	OPT_LIMIT,
	OPT_ARTIFACTS,
	OPT_SESSION,
	OPT_STREAM,
	OPT_WORKSPACE,
	OPT_IDLE,
	OPT_LIFETIME,
	OPT_FORCE,
	OPT_VERSION,
	OPT_PROFILE,
	OPT_MOUNT,
	OPT_FILES_FROM,
	OPT_TOOL,
	OPT_CELL,
	OPT_INTERPRETER,
	OPT_TIMEOUT,
	OPT_FIGURES,
	OPT_BACKGROUND,
	OPT_ARCHIVE,
	OPT_LIMIT_FIRST = 512, /* + enum proto_limit: a limit's own option */
};

/* Which commands take an option (struct cli_option.in). */
enum {
	CLI_IN_TOP = 1 << 0,	      /* before the command: airlock [--socket PATH] CMD */
	CLI_IN_RUN = 1 << 1,	      /* airlock run */
	CLI_IN_SESSION_OPEN = 1 << 2, /* airlock session open */
	CLI_IN_SIMPLE = 1 << 3,	      /* the commands without options of their own */
	CLI_IN_EVERY = CLI_IN_TOP | CLI_IN_RUN | CLI_IN_SESSION_OPEN | CLI_IN_SIMPLE,
	/* These also take each limit's own option (the table of limits). */
	CLI_IN_LIMITS = CLI_IN_RUN | CLI_IN_SESSION_OPEN,
};

/* How one command reads its options. */
struct cli_parse {
	unsigned in;	       /* CLI_IN_* */
	const char *shortopts; /* for getopt_long */
	const char *usage;     /* the command whose usage --help prints (NULL: all) */
	const char *what;      /* the command, in messages */
	/* Its own options (not --socket, --json, --help or a limit): 0 or an
	 * exit status. NULL for a command without any. */
	int (*own)(void *ctx, int c, const char *arg);
	void *ctx;
};

/* A command (or a subcommand of session): by name, what runs it. */
struct cli_command {
	const char *name;
	/* A command that reads its own options (argv[0]: its name) ... */
	int (*main)(struct cli *cli, int argc, char **argv);
	/* ... or one that takes only --socket and --json, then min_args to
	 * max_args operands, run connected to the daemon (conn, freed after
	 * it) unless it connects itself (conn NULL). */
	int (*fn)(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
	int min_args;
	int max_args;
	bool session_first;   /* its first operand is a SESSION id, checked first */
	bool connects_itself; /* it checks or reads its operands before it connects */
};

/* Limits given on the command line (0: not given), applied once all are read. */
struct cli_limits {
	uint64_t v[PROTO_LIMIT_COUNT_];
};

/* What `airlock run` collected from its command line. */
struct cli_run {
	const char *lang;
	bool lang_set;		/* --lang given */
	const char *session;	/* --session */
	const char *code;	/* -c */
	const char *stdin_path; /* --stdin */
	const char *artifacts;	/* --artifacts */
	bool stream;		/* --stream */
	bool force;		/* --force: artifacts replace existing files */
	bool in_session;	/* --session */
	bool cell;		/* --cell */
	struct cli_limits lim;	/* --wall, ..., --limit */
	struct airlock_run_req *req;
	struct cli_tools tools; /* --tool */
};

/* main.c */
void cli_usage_cmd(FILE *f, const char *cmd);
int cli_err(int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_usage_error(const char *what);
int cli_fail(const char *what, int err);
int cli_daemon_error(struct airlock_conn *conn, const char *what, int err);
int cli_flushed(int status);
int cli_list_head(const struct cli *cli, struct airlock_conn *conn, const char *what, int r,
		  int (*err)(struct airlock_conn *, const char *, int), const void *list, size_t n,
		  json_t *(*row)(const void *list, size_t i), const char *cut);
int cli_connect(const struct cli *cli, struct airlock_conn **ret);
int cli_read_fd(int fd, char **ret_buf, size_t *ret_len);
int cli_read_file(const char *path, char **ret_buf, size_t *ret_len);
double cli_ms_since(const struct timespec *a);
int cli_json_print(json_t *obj);
json_t *cli_json_rows(const void *list, size_t n, json_t *(*row)(const void *list, size_t i));
int cli_value(const char *opt, const char *arg, const char *value, enum limit_kind kind,
	      uint64_t *ret);
int cli_parse_options(struct cli *cli, const struct cli_parse *p, struct cli_limits *lim, int argc,
		      char **argv);
int cli_dispatch(struct cli *cli, const struct cli_command *table, const char *usage,
		 const char *unknown, int argc, char **argv);

/* cmd_status.c */
int cli_ping(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
int cli_info(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
int cli_ps(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
int cli_cancel(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);

/* cmd_run.c */
int cli_json_stream(json_t *obj, const char *name, const void *data, size_t len);
int cli_profile_option(const char *arg, int (*set)(void *, const char *), void *obj);
int cli_run(struct cli *cli, int argc, char **argv);

/* report.c */
int cli_json_name(json_t *obj, const char *name);
int cli_run_report(const struct cli *cli, const struct cli_run *run,
		   const struct airlock_result *res);

/* cmd_session.c */
int cli_session_error(struct airlock_conn *conn, const char *what, int err);
/* Write len bytes to path atomically (cmd_file.c): 0 or -errno. */
int cli_write_atomic(const char *path, const void *data, size_t len);
int cli_check_session_id(const char *id);
int cli_session(struct cli *cli, int argc, char **argv);

/* cmd_file.c */
int cli_put(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
int cli_get(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
int cli_files(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);
int cli_rm(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args);

/* cmd_cell.c */
int cli_cell(struct cli *cli, int argc, char **argv);
/* Run the cell req on conn, Ctrl-C interrupting it (a cancel), its output
 * to cb as it comes when cb is not NULL (req asks stream): 0 with
 * *ret_res, -EINTR at a second Ctrl-C, or -errno as airlock_run(). */
int cli_cell_call(struct airlock_conn *conn, const struct airlock_run_req *req,
		  airlock_stream_fn cb, struct airlock_result **ret_res);

#endif
