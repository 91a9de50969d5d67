/* cli.c: the airlock command, a thin user of libairlock (airlock.h only). */
#include "airlock.h"
#include "cli_net.h"
#include "cli_tool.h"
#include "cli_util.h"
#include "compiler.h"
#include "fdio.h"
#include "limit.h"
#include "mcp.h"
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* Every long option of the command, once, with the commands that take it. */
static const struct cli_option {
	struct option opt;
	unsigned in;
} cli_options[] = {
	{{"socket", required_argument, NULL, OPT_SOCKET}, CLI_IN_EVERY},
	{{"json", no_argument, NULL, OPT_JSON}, CLI_IN_EVERY},
	{{"help", no_argument, NULL, 'h'}, CLI_IN_EVERY},
	{{"version", no_argument, NULL, OPT_VERSION}, CLI_IN_TOP},
	{{"lang", required_argument, NULL, OPT_LANG}, CLI_IN_RUN},
	{{"arg", required_argument, NULL, OPT_ARG}, CLI_IN_RUN},
	{{"file", required_argument, NULL, OPT_FILE}, CLI_IN_RUN},
	{{"files-from", required_argument, NULL, OPT_FILES_FROM}, CLI_IN_RUN},
	{{"stdin", required_argument, NULL, OPT_STDIN}, CLI_IN_RUN},
	{{"env", required_argument, NULL, OPT_ENV}, CLI_IN_RUN},
	{{"artifacts", required_argument, NULL, OPT_ARTIFACTS}, CLI_IN_RUN},
	{{"session", required_argument, NULL, OPT_SESSION}, CLI_IN_RUN},
	{{"stream", no_argument, NULL, OPT_STREAM}, CLI_IN_RUN},
	{{"force", no_argument, NULL, OPT_FORCE}, CLI_IN_RUN},
	{{"tool", required_argument, NULL, OPT_TOOL}, CLI_IN_RUN},
	{{"cell", no_argument, NULL, OPT_CELL}, CLI_IN_RUN},
	{{"interpreter", required_argument, NULL, OPT_INTERPRETER}, CLI_IN_SESSION_OPEN},
	{{"workspace", required_argument, NULL, OPT_WORKSPACE}, CLI_IN_SESSION_OPEN},
	{{"idle", required_argument, NULL, OPT_IDLE}, CLI_IN_SESSION_OPEN},
	{{"lifetime", required_argument, NULL, OPT_LIFETIME}, CLI_IN_SESSION_OPEN},
	{{"limit", required_argument, NULL, OPT_LIMIT}, CLI_IN_LIMITS},
	{{"profile", required_argument, NULL, OPT_PROFILE}, CLI_IN_LIMITS},
	{{"mount", required_argument, NULL, OPT_MOUNT}, CLI_IN_RUN},
};

#define CLI_NOPTIONS (sizeof(cli_options) / sizeof(cli_options[0]))

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

/* The synopsis of each command, for the usage and `airlock CMD --help`. */
static const struct cli_synopsis {
	const char *cmd;
	const char *text;
} cli_synopses[] = {
	{"ping", "airlock [--socket PATH] [--json] ping\n"},
	{"info", "airlock [--socket PATH] [--json] info\n"},
	{"ps", "airlock [--socket PATH] [--json] ps\n"},
	{"cancel", "airlock [--socket PATH] [--json] cancel ID\n"},
	{"run", "airlock [--socket PATH] [--json] run [OPTION]... (-c CODE | FILE | -) [ARG]...\n"
		"       airlock [--socket PATH] [--json] run --lang exec [OPTION]... [--] PROGRAM "
		"[ARG]...\n"},
	{"session", "airlock [--socket PATH] [--json] session open [--workspace SIZE]\n"
		    "               [--idle SECONDS] [--lifetime SECONDS] [--profile NAME]\n"
		    "               [--interpreter RUNTIME]\n"
		    "               [LIMIT OPTION]...\n"
		    "       airlock [--socket PATH] [--json] session close ID\n"
		    "       airlock [--socket PATH] [--json] session ls\n"},
	{"put", "airlock [--socket PATH] [--json] put SESSION LOCAL|- REMOTE\n"},
	{"get", "airlock [--socket PATH] [--json] get SESSION REMOTE LOCAL|-\n"},
	{"files", "airlock [--socket PATH] [--json] files SESSION [DIR]\n"},
	{"rm", "airlock [--socket PATH] [--json] rm SESSION REMOTE\n"},
	{"cell", "airlock [--socket PATH] [--json] cell SESSION [FILE|-]\n"},
	{"mcp", "airlock [--socket PATH] mcp [--parallel N] [--output-budget BYTES]\n"},
	{NULL, NULL},
};

/* The options of `airlock run`, for `airlock run --help`. */
static const char cli_run_help[] =
	"Run code in a fresh sandbox. Options come before the code source: everything\n"
	"after FILE (or after -c CODE's value and the operands that follow) goes to the code.\n"
	"  -c CODE              the code as text (FILE: a file; -: standard input)\n"
	"  --lang NAME          runtime: python (default), sh, bash, node, exec, ...\n"
	"  --arg ARG            append an argument (repeatable)\n"
	"  --file NAME=PATH     put a local file into the workspace (repeatable)\n"
	"  --files-from DIR     put every file below DIR into the workspace, by its\n"
	"                       path below DIR (up to 4096 files; no links)\n"
	"  --stdin PATH         the code's standard input (- for ours)\n"
	"  --env KEY=VALUE      an environment variable of the run (repeatable)\n"
	"  --session ID         run in a session's workspace\n"
	"  --cell               with --session of a session opened with --interpreter:\n"
	"                       run the code as a cell of its interpreter (the state\n"
	"                       stays from cell to cell; a trailing expression's repr\n"
	"                       is printed after the output; without --lang, the\n"
	"                       session's interpreter's runtime)\n"
	"  --mount NAME         one of the daemon's read-only [mount]s the profile\n"
	"                       allows (repeatable)\n"
	"  --stream             print the output as it comes (with --json: JSON lines)\n"
	"  --artifacts DIR      write the files the code left below DIR\n"
	"  --force              with --artifacts: replace files that exist in DIR\n"
	"  --tool NAME=COMMAND  a tool the code may call (import airlock_tools): COMMAND\n"
	"                       runs here with the call's JSON arguments on stdin, its\n"
	"                       stdout is the result (repeatable)\n";

/* The limit options (from the table of limits) and --limit, for help. */
static void
cli_usage_limits(FILE *f)
{
	char opt[64];
	size_t l;

	fputs("Limits (times in seconds, sizes with K, M or G; default: the daemon's):\n", f);
	for (l = 0; l < PROTO_LIMIT_COUNT_; l++) {
		if (limit_table[l].option == NULL)
			continue;
		snprintf(opt, sizeof(opt), "--%s %s", limit_table[l].option,
			 limit_kind_metavar(limit_table[l].kind));
		fprintf(f, "  %-20s %s\n", opt, limit_table[l].doc);
	}
	fputs("  --limit NAME=VALUE   any limit by its name (airlock info lists them)\n", f);
	fputs("  --profile NAME       the daemon's profile of limits (airlock info lists\n"
	      "                       them); limits may only go below its values\n",
	      f);
}

/* Print the usage of cmd (NULL: of every command) to f. */
static void
cli_usage_cmd(FILE *f, const char *cmd)
{
	const struct cli_synopsis *s;
	bool first = true;

	for (s = cli_synopses; s->cmd != NULL; s++) {
		if (cmd != NULL && strcmp(cmd, s->cmd) != 0)
			continue;
		fprintf(f, "%s%s", first ? "usage: " : "       ", s->text);
		first = false;
	}
	if (cmd != NULL && strcmp(cmd, "run") == 0)
		fputs(cli_run_help, f);
	if (cmd != NULL && (strcmp(cmd, "run") == 0 || strcmp(cmd, "session") == 0))
		cli_usage_limits(f);
	if (cmd == NULL)
		fputs("       airlock --version | --help\n", f);
	fputs("See airlock(1).\n", f);
}

/* Print the usage text to f. */
static void
cli_usage(FILE *f)
{
	cli_usage_cmd(f, NULL);
}

/*
 * The command's one output setting, like a log setting: with --json, errors
 * are one JSON object on stdout ({"error": {"code", "message", "status"}})
 * instead of a line on stderr, so that a program reading stdout sees them.
 */
static bool cli_json_errors;

/* Report an error (code: a stable name, such as the daemon's) and return status. */
static int __attribute__((format(printf, 3, 4)))
cli_err(int status, const char *code, const char *fmt, ...)
{
	char *message = NULL;
	va_list ap;
	json_t *obj;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&message, fmt, ap);
	va_end(ap);
	if (r < 0) {
		fputs("airlock: out of memory\n", stderr);
		return status;
	}
	obj = cli_json_errors ? json_pack("{s:{s:s, s:s, s:i}}", "error", "code", code, "message",
					  message, "status", status)
			      : NULL;
	if (obj != NULL) {
		json_dumpf(obj, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
		fputc('\n', stdout);
		fflush(stdout);
		json_decref(obj);
	} else
		fprintf(stderr, "airlock: %s\n", message);
	free(message);
	return status;
}

/* The message of an error reported with cli_errorf() under --json, not
 * printed yet: main() prints it as JSON with the command's status. */
static char cli_pending_error[1024];

/* Report an error whose status the caller returns: a line on stderr, or
 * with --json kept for main() to print as JSON. */
static void __attribute__((format(printf, 1, 2))) cli_errorf(const char *fmt, ...)
{
	char message[sizeof(cli_pending_error)];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	n = strlen(message);
	if (n > 0 && message[n - 1] == '\n')
		message[--n] = '\0';
	if (!cli_json_errors)
		fprintf(stderr, "airlock: %s\n", message);
	else if (cli_pending_error[0] == '\0')
		memcpy(cli_pending_error, message, n + 1);
}

/* Report a usage error and return the usage status. */
static int
cli_usage_error(const char *what)
{
	cli_err(CLI_EXIT_USAGE, "usage", "%s", what);
	if (!cli_json_errors)
		cli_usage(stderr);
	return CLI_EXIT_USAGE;
}

/* Report an out-of-memory or other internal failure. */
static int
cli_fail(const char *what, int err)
{
	return cli_err(CLI_EXIT_SOFTWARE, "internal", "%s: %s", what, strerror(-err));
}

/* Report a failure that the daemon caused or that reaching it caused. */
static int
cli_daemon_error(struct airlock_conn *conn, const char *what, int err)
{
	const char *code, *message;

	if (conn != NULL && airlock_conn_last_error(conn, &code, &message) == 0 &&
	    err != -ECONNRESET && err != -EBADMSG)
		return cli_err(CLI_EXIT_UNAVAILABLE, code, "%s: daemon refused: %s: %s", what, code,
			       message);
	return cli_err(CLI_EXIT_UNAVAILABLE, "unreachable", "%s: %s", what, strerror(-err));
}

/* Connect, reporting failure with the daemon's reason when it gave one. */
static int
cli_connect(const struct cli *cli, struct airlock_conn **ret)
{
	char code[64], message[1100];
	const char *path = cli->socket;
	int r;

	r = airlock_connect_error(path, ret, code, sizeof(code), message, sizeof(message));
	if (r == 0)
		return 0;
	if (path == NULL)
		path = getenv("AIRLOCK_SOCKET");
	if (path == NULL || path[0] == '\0')
		path = AIRLOCK_SOCKET_DEFAULT;
	if (code[0] != '\0')
		return cli_err(CLI_EXIT_UNAVAILABLE, code, "connect to %s: daemon refused: %s: %s",
			       path, code, message);
	return cli_err(CLI_EXIT_UNAVAILABLE, "unreachable", "connect to %s: %s", path,
		       strerror(-r));
}

/* Read all of fd (closed here unless it is 0, stdin) into a new buffer. */
static int
cli_read_fd(int fd, char **ret_buf, size_t *ret_len)
{
	char *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	int r;

	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			if (cap > SIZE_MAX / 2) {
				r = -EFBIG;
				goto out;
			}
			cap = cap ? cap * 2 : 65536;
			nbuf = realloc(buf, cap);
			if (nbuf == NULL) {
				r = -ENOMEM;
				goto out;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
	r = 0;
out:
	if (fd > 0)
		close(fd);
	free(buf);
	return r;
}

/* Read all of path ("-" is stdin) into a new buffer. */
static int
cli_read_file(const char *path, char **ret_buf, size_t *ret_len)
{
	int fd = 0;

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
	}
	return cli_read_fd(fd, ret_buf, ret_len);
}

/* Milliseconds between two monotonic timestamps. */
static double
cli_ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* Print a JSON value on stdout. */
static int
cli_json_print(json_t *obj)
{
	if (obj == NULL)
		return cli_fail("build JSON", -ENOMEM);
	if (json_dumpf(obj, stdout, JSON_COMPACT | JSON_ENSURE_ASCII) < 0 ||
	    fputc('\n', stdout) == EOF) {
		json_decref(obj);
		return cli_fail("write JSON", -EIO);
	}
	json_decref(obj);
	return CLI_EXIT_OK;
}

/* A JSON array of row(list, i) for each i < n: one object per entry of a
 * list (row returns NULL when out of memory). NULL when out of memory. */
static json_t *
cli_json_rows(const void *list, size_t n, json_t *(*row)(const void *list, size_t i))
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr != NULL && i < n; i++)
		if (json_array_append_new(arr, row(list, i)) < 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

/* `airlock ping`: one round trip. */
static int
cli_ping(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args UNUSED)
{
	struct timespec t0;
	double ms;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = airlock_ping(conn);
	ms = cli_ms_since(&t0);
	if (r < 0)
		return cli_daemon_error(conn, "ping", r);
	if (cli->json)
		return cli_json_print(json_pack("{s:b, s:f}", "pong", 1, "rtt_ms", ms));
	printf("pong %.3f ms\n", ms);
	return CLI_EXIT_OK;
}

/* Does the daemon say which packages any runtime sees? */
static bool
cli_info_has_packages(const struct airlock_info *info)
{
	size_t i;

	for (i = 0; i < airlock_info_runtime_count(info); i++)
		if (airlock_info_runtime_packages(info, i) != NULL)
			return true;
	return false;
}

/* "runtime_packages": {"python-site": ["numpy", ...], "python": []}, if said. */
static int
cli_info_packages_json(const struct airlock_info *info, json_t *obj)
{
	json_t *map, *list;
	const char *p, *comma;
	size_t i;

	if (!cli_info_has_packages(info))
		return 0;
	map = json_object();
	if (map == NULL || json_object_set_new(obj, "runtime_packages", map) < 0)
		return -ENOMEM;
	for (i = 0; i < airlock_info_runtime_count(info); i++) {
		p = airlock_info_runtime_packages(info, i);
		if (p == NULL)
			continue;
		list = json_array();
		if (list == NULL ||
		    json_object_set_new(map, airlock_info_runtime_name(info, i), list) < 0)
			return -ENOMEM;
		while (*p != '\0') {
			comma = strchr(p, ',');
			if (comma == NULL)
				comma = p + strlen(p);
			if (json_array_append_new(list, json_stringn(p, (size_t)(comma - p))) < 0)
				return -ENOMEM;
			p = *comma == ',' ? comma + 1 : comma;
		}
	}
	return 0;
}

/* A proxy profile's "allow_hosts" and "allow_private_hosts" into p. */
static int
cli_info_allow_json(const struct airlock_info *info, size_t i, json_t *p)
{
	json_t *pub = json_array(), *priv = json_array();
	size_t k;

	if (json_object_set_new(p, "allow_hosts", pub) < 0 ||
	    json_object_set_new(p, "allow_private_hosts", priv) < 0)
		return -ENOMEM;
	for (k = 0; k < airlock_info_profile_allow_count(info, i); k++) {
		bool private_ok = false;
		const char *e = airlock_info_profile_allow(info, i, k, &private_ok);

		if (json_array_append_new(private_ok ? priv : pub, json_string(e)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A profile's policy switches, by their airlockd.conf(5) names. */
static const struct {
	enum airlock_profile_switch sw;
	const char *name;
} cli_profile_switches[] = {
	{AIRLOCK_SWITCH_FILE_WRITE, "file_write"},
	{AIRLOCK_SWITCH_SUBPROCESS, "subprocess"},
};

/* A profile's lists of names, by their airlockd.conf(5) keys. */
static const struct {
	enum airlock_profile_list list;
	const char *name;
} cli_profile_lists[] = {
	{AIRLOCK_PROFILE_MOUNTS, "mounts"},
	{AIRLOCK_PROFILE_ALLOW_MOUNTS, "allow_mounts"},
	{AIRLOCK_PROFILE_BLOCKED_IMPORTS, "blocked_imports"},
	{AIRLOCK_PROFILE_HIDDEN_PATHS, "hidden_paths"},
};

/* The lists profile i has (those with names) as arrays of p. */
static int
cli_info_lists_json(const struct airlock_info *info, size_t i, json_t *p)
{
	size_t l, k;
	json_t *a;

	for (l = 0; l < sizeof(cli_profile_lists) / sizeof(cli_profile_lists[0]); l++) {
		enum airlock_profile_list list = cli_profile_lists[l].list;

		if (airlock_info_profile_list_count(info, i, list) == 0)
			continue;
		a = json_array();
		if (a == NULL || json_object_set_new(p, cli_profile_lists[l].name, a) < 0)
			return -ENOMEM;
		for (k = 0; k < airlock_info_profile_list_count(info, i, list); k++)
			if (json_array_append_new(a, json_string(airlock_info_profile_list(
							     info, i, list, k))) < 0)
				return -ENOMEM;
	}
	return 0;
}

/* Mount i of `airlock info --json`: {"name", "target", "package": bool}. */
static json_t *
cli_info_mount_row(const void *list, size_t i)
{
	const struct airlock_info *info = list;

	return json_pack("{s:s, s:s, s:b}", "name", airlock_info_mount_name(info, i), "target",
			 airlock_info_mount_target(info, i), "package",
			 (int)airlock_info_mount_is_package(info, i));
}

/* "mounts": [{"name", "target", "package": bool}], if said. */
static int
cli_info_mounts_json(const struct airlock_info *info, json_t *obj)
{
	size_t n = airlock_info_mount_count(info);

	if (n == 0)
		return 0;
	if (json_object_set_new(obj, "mounts", cli_json_rows(info, n, cli_info_mount_row)) < 0)
		return -ENOMEM;
	return 0;
}

/* "profiles": [{"name", "default": bool, "limits": {NAME: {default, ceiling}}, "network",
 * SWITCH: bool, LIST: [str]}], if said. */
static int
cli_info_profiles_json(const struct airlock_info *info, json_t *obj)
{
	json_t *list, *p, *lim;
	size_t i, s;
	int l;

	if (airlock_info_profile_count(info) == 0)
		return 0;
	list = json_array();
	if (list == NULL || json_object_set_new(obj, "profiles", list) < 0)
		return -ENOMEM;
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		lim = json_object();
		p = json_pack("{s:s, s:b, s:o, s:s}", "name", airlock_info_profile_name(info, i),
			      "default", (int)airlock_info_profile_is_default(info, i), "limits",
			      lim, "network",
			      airlock_info_profile_network(info, i) ? "proxy" : "none");
		if (p == NULL || json_array_append_new(list, p) < 0)
			return -ENOMEM;
		for (s = 0; s < sizeof(cli_profile_switches) / sizeof(cli_profile_switches[0]); s++)
			if (json_object_set_new(
				    p, cli_profile_switches[s].name,
				    json_boolean(airlock_info_profile_switch(
							 info, i, cli_profile_switches[s].sw) !=
						 0)) < 0)
				return -ENOMEM;
		if (airlock_info_profile_network(info, i) && cli_info_allow_json(info, i, p) < 0)
			return -ENOMEM;
		if (cli_info_lists_json(info, i, p) < 0)
			return -ENOMEM;
		for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
			enum airlock_limit k = (enum airlock_limit)l;
			json_t *v = json_pack("{s:I, s:I}", "default",
					      (json_int_t)airlock_info_profile_limit(info, i, k),
					      "ceiling",
					      (json_int_t)airlock_info_profile_ceiling(info, i, k));

			if (json_object_set_new(lim, airlock_limit_name(k), v) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* `airlock info` as text: the profiles, their main limits (--json has them all)
 * and the policy switches each turns off ("-": none). */
static void
cli_info_profiles_text(const struct airlock_info *info)
{
	static const enum airlock_limit shown[] = {AIRLOCK_LIMIT_WALL_MS, AIRLOCK_LIMIT_CPU_MS,
						   AIRLOCK_LIMIT_MEMORY_BYTES,
						   AIRLOCK_LIMIT_PROCESSES};
	size_t i, k;

	if (airlock_info_profile_count(info) == 0)
		return;
	printf("%-20s", "profile (* default)");
	for (k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
		printf(" %14s", airlock_limit_name(shown[k]));
	printf(" %s\n", "off");
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		const char *sep = " ";

		printf("%c %-18s", airlock_info_profile_is_default(info, i) ? '*' : ' ',
		       airlock_info_profile_name(info, i));
		for (k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
			printf(" %14" PRIu64, airlock_info_profile_limit(info, i, shown[k]));
		for (k = 0; k < sizeof(cli_profile_switches) / sizeof(cli_profile_switches[0]); k++)
			if (airlock_info_profile_switch(info, i, cli_profile_switches[k].sw) == 0) {
				printf("%s%s", sep, cli_profile_switches[k].name);
				sep = ",";
			}
		printf("%s\n", sep[0] == ' ' ? " -" : "");
		/* network = proxy: where its runs may connect (the rest have no network). */
		for (k = 0; k < airlock_info_profile_allow_count(info, i); k++) {
			bool private_ok = false;
			const char *e = airlock_info_profile_allow(info, i, k, &private_ok);

			printf("%s%s%s", k == 0 ? "    network: proxy to " : ", ", e,
			       private_ok ? " (private addresses allowed)" : "");
		}
		if (airlock_info_profile_network(info, i))
			printf("\n");
		for (k = 0; k < sizeof(cli_profile_lists) / sizeof(cli_profile_lists[0]); k++) {
			enum airlock_profile_list list = cli_profile_lists[k].list;
			size_t j, n = airlock_info_profile_list_count(info, i, list);

			for (j = 0; j < n; j++)
				printf("%s%s", j == 0 ? "    " : ", ",
				       airlock_info_profile_list(info, i, list, j));
			if (n > 0)
				printf(" (%s%s)\n", cli_profile_lists[k].name,
				       list == AIRLOCK_PROFILE_BLOCKED_IMPORTS
					       ? ": reported in the result, not refused"
				       : list == AIRLOCK_PROFILE_HIDDEN_PATHS
					       ? ": not there in its runs"
					       : "");
		}
	}
	if (airlock_info_mount_count(info) == 0)
		return;
	printf("%-20s %-8s %s\n", "mount", "kind", "target (read-only)");
	for (i = 0; i < airlock_info_mount_count(info); i++)
		printf("  %-18s %-8s %s\n", airlock_info_mount_name(info, i),
		       airlock_info_mount_is_package(info, i) ? "package" : "data",
		       airlock_info_mount_target(info, i));
}

/* The daemon's capacity figures: key in --json, words in the text. */
static const struct {
	enum airlock_capacity what;
	const char *key, *text;
} cli_capacity[] = {
	{AIRLOCK_CAPACITY_RUNS, "max_runs", "run slots (runs and running cells), all users"},
	{AIRLOCK_CAPACITY_RUNS_PER_UID, "max_runs_per_uid", "run slots, one user"},
	{AIRLOCK_CAPACITY_INTERPRETERS, "max_interpreters", "live interpreters, all users"},
	{AIRLOCK_CAPACITY_INTERPRETERS_PER_UID, "max_interpreters_per_uid",
	 "live interpreters, one user"},
};

/* info.capacity as JSON: {max_runs: n, ...}, only the figures the daemon said. */
static int
cli_info_capacity_json(const struct airlock_info *info, json_t *obj)
{
	json_t *cap = json_object();
	size_t i;

	if (cap == NULL || json_object_set_new(obj, "capacity", cap) < 0)
		return -1;
	for (i = 0; i < sizeof(cli_capacity) / sizeof(cli_capacity[0]); i++) {
		uint32_t v = airlock_info_capacity(info, cli_capacity[i].what);

		if (v != 0 && json_object_set_new(cap, cli_capacity[i].key, json_integer(v)) < 0)
			return -1;
	}
	return 0;
}

/* `airlock info` as JSON. */
static json_t *
cli_info_json(const struct airlock_info *info)
{
	json_t *obj, *rt, *lim;
	size_t i;
	int l;

	/* rt and lim are borrowed from obj, which owns them from the start. */
	obj = json_pack("{s:s, s:I, s:I, s:[], s:{}}", "daemon", airlock_info_daemon_version(info),
			"protocol", (json_int_t)airlock_info_protocol_version(info), "uid",
			(json_int_t)airlock_info_uid(info), "runtimes", "limits");
	if (obj == NULL)
		return NULL;
	rt = json_object_get(obj, "runtimes");
	lim = json_object_get(obj, "limits");
	for (i = 0; i < airlock_info_runtime_count(info); i++)
		if (json_array_append_new(rt, json_string(airlock_info_runtime_name(info, i))) < 0)
			goto fail;
	for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
		enum airlock_limit k = (enum airlock_limit)l;
		json_t *v = json_pack("{s:I, s:I}", "default",
				      (json_int_t)airlock_info_limit_default(info, k), "ceiling",
				      (json_int_t)airlock_info_limit_ceiling(info, k));

		if (json_object_set_new(lim, airlock_limit_name(k), v) < 0)
			goto fail;
	}
	if (airlock_info_resource_control(info) != NULL &&
	    json_object_set_new(obj, "resource_control",
				json_string(airlock_info_resource_control(info))) < 0)
		goto fail;
	if (cli_info_packages_json(info, obj) < 0 || cli_info_profiles_json(info, obj) < 0 ||
	    cli_info_mounts_json(info, obj) < 0 || cli_info_capacity_json(info, obj) < 0)
		goto fail;
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

/* `airlock info`: what the daemon offers this user. */
static int
cli_info(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args UNUSED)
{
	struct airlock_info *info = NULL;
	size_t i;
	int l, r, status = CLI_EXIT_OK;

	r = airlock_info(conn, &info);
	if (r < 0) {
		status = cli_daemon_error(conn, "info", r);
		goto out;
	}
	if (cli->json) {
		status = cli_json_print(cli_info_json(info));
		goto out;
	}
	printf("daemon: %s\nprotocol: %" PRIu32 "\nuid: %" PRIu32 "\nruntimes:",
	       airlock_info_daemon_version(info), airlock_info_protocol_version(info),
	       airlock_info_uid(info));
	for (i = 0; i < airlock_info_runtime_count(info); i++)
		printf(" %s", airlock_info_runtime_name(info, i));
	printf("\nresource control: %s", airlock_info_resource_control(info) != NULL
						 ? airlock_info_resource_control(info)
						 : "unknown");
	if (cli_info_has_packages(info)) {
		printf("\npackages (numpy, pandas, matplotlib, scipy):");
		for (i = 0; i < airlock_info_runtime_count(info); i++) {
			const char *p = airlock_info_runtime_packages(info, i);
			size_t n;

			if (p == NULL)
				continue;
			printf("\n  %s:", airlock_info_runtime_name(info, i));
			if (*p == '\0')
				printf(" none");
			for (; *p != '\0'; p += n + (p[n] == ',')) {
				n = strcspn(p, ",");
				printf(" %.*s", (int)n, p);
			}
		}
	}
	for (i = 0; i < sizeof(cli_capacity) / sizeof(cli_capacity[0]); i++) {
		uint32_t v = airlock_info_capacity(info, cli_capacity[i].what);

		if (v != 0)
			printf("%s%s: %" PRIu32 " (%s)", i == 0 ? "\ncapacity:\n  " : "\n  ",
			       cli_capacity[i].key, v, cli_capacity[i].text);
	}
	printf("\n%-18s %20s %20s\n", "limit", "default", "ceiling");
	for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
		enum airlock_limit k = (enum airlock_limit)l;

		printf("%-18s %20" PRIu64 " %20" PRIu64 "\n", airlock_limit_name(k),
		       airlock_info_limit_default(info, k), airlock_info_limit_ceiling(info, k));
	}
	cli_info_profiles_text(info);
out:
	airlock_info_free(info);
	return status;
}

/* Run i of `airlock ps --json` (a list of objects, one per run). */
static json_t *
cli_ps_row(const void *list, size_t i)
{
	const struct airlock_ps *ps = list;

	return json_pack(
		"{s:I, s:s, s:s, s:I, s:I, s:I}", "id", (json_int_t)airlock_ps_run_id(ps, i),
		"runtime", airlock_ps_runtime(ps, i), "state", airlock_ps_state(ps, i),
		"elapsed_ms", (json_int_t)airlock_ps_elapsed_ms(ps, i), "pid",
		(json_int_t)airlock_ps_pid(ps, i), "uid", (json_int_t)airlock_ps_uid(ps, i));
}

/* `airlock ps`: the caller's runs in progress and queued, as a table. */
static int
cli_ps(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args UNUSED)
{
	struct airlock_info *info = NULL;
	struct airlock_ps *ps = NULL;
	char elapsed[32], pid[16];
	bool show_uid = false;
	size_t i, n;
	int r, status = CLI_EXIT_OK;

	r = airlock_ps(conn, &ps);
	if (r < 0) {
		status = cli_daemon_error(conn, "ps", r);
		goto out;
	}
	if (cli->json) {
		status = cli_json_print(cli_json_rows(ps, airlock_ps_count(ps), cli_ps_row));
		goto out;
	}
	n = airlock_ps_count(ps);
	if (n > 0) {
		/* The uid the daemon sees us as decides whether a run is someone else's. */
		r = airlock_info(conn, &info);
		if (r < 0) {
			status = cli_daemon_error(conn, "ps: info", r);
			goto out;
		}
		for (i = 0; i < n; i++)
			if (airlock_ps_uid(ps, i) != airlock_info_uid(info))
				show_uid = true;
	}
	if (show_uid)
		printf("%-10s %-10s %-10s %-8s %9s %8s\n", "ID", "UID", "RUNTIME", "STATE",
		       "ELAPSED", "PID");
	else
		printf("%-10s %-10s %-8s %9s %8s\n", "ID", "RUNTIME", "STATE", "ELAPSED", "PID");
	for (i = 0; i < n; i++) {
		cli_format_elapsed(airlock_ps_elapsed_ms(ps, i), elapsed, sizeof(elapsed));
		if (airlock_ps_pid(ps, i) > 0)
			snprintf(pid, sizeof(pid), "%" PRId32, airlock_ps_pid(ps, i));
		else
			snprintf(pid, sizeof(pid), "-");
		printf("%-10" PRIu32 " ", airlock_ps_run_id(ps, i));
		if (show_uid)
			printf("%-10" PRIu32 " ", airlock_ps_uid(ps, i));
		printf("%-10s %-8s %9s %8s\n", airlock_ps_runtime(ps, i), airlock_ps_state(ps, i),
		       elapsed, pid);
	}
	if (fflush(stdout) == EOF)
		status = cli_fail("write", -EIO);
out:
	airlock_info_free(info);
	airlock_ps_free(ps);
	return status;
}

/* `airlock cancel ID`: cancel one of the caller's runs by its run id (from
 * ps). It connects itself (conn NULL), once ID is known to be one. */
static int
cli_cancel(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	const char *arg = args[0];
	uint64_t id;
	int r, status;

	if (cli_parse_count(arg, &id) < 0 || id > UINT32_MAX) {
		cli_errorf("cancel %s: not a run id (see airlock ps)\n", arg);
		return CLI_EXIT_USAGE;
	}
	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
	r = airlock_cancel_run(conn, (uint32_t)id);
	if (r == -ENOENT) {
		cli_errorf("cancel %" PRIu64 ": no such run of yours in progress\n", id);
		status = CLI_EXIT_NOT_FOUND;
		goto out;
	}
	if (r < 0) {
		status = cli_daemon_error(conn, "cancel", r);
		goto out;
	}
	if (cli->json)
		status = cli_json_print(
			json_pack("{s:I, s:b}", "id", (json_int_t)id, "cancelled", 1));
out:
	airlock_conn_free(conn);
	return status;
}

#define CLI_DIR_DEPTH_MAX 64

/* Add one regular file at dfd/name as rel (mode 0755 if anyone may run it). */
static int
cli_run_add_dir_file(struct cli_run *run, const char *top, int dfd, const char *name,
		     const char *rel)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	size_t len;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		cli_errorf("--files-from %s: %s: %s\n", top, rel, strerror(-r));
		return CLI_EXIT_NOINPUT;
	}
	r = cli_read_fd(fd, &buf, &len);
	if (r < 0) {
		cli_errorf("--files-from %s: read %s: %s\n", top, rel, strerror(-r));
		return CLI_EXIT_NOINPUT;
	}
	r = airlock_run_req_add_file_mode(run->req, rel, buf, len,
					  (st.st_mode & 0111) != 0 ? 0755 : 0644);
	free(buf);
	if (r < 0) {
		cli_errorf("--files-from %s: %s: %s\n", top, rel,
			   r == -EINVAL	  ? "bad name (a control character, or too long)"
			   : r == -EEXIST ? "name given twice"
			   : r == -E2BIG  ? "more than 4096 files, or too large"
					  : strerror(-r));
		return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
	}
	return 0;
}

/* Add every regular file below the open directory dfd (closed here), named
 * prefix/NAME; a link or a special file is an error, never followed. */
static int
cli_run_add_dir_at(struct cli_run *run, const char *top, int dfd, const char *prefix, int depth)
{
	DIR *dir = fdopendir(dfd);
	struct dirent *e;
	struct stat st;
	char rel[PROTO_NAME_MAX + 2];
	int status = 0, sub;

	if (dir == NULL) {
		close(dfd);
		return cli_fail("--files-from", -errno);
	}
	while (status == 0 && (errno = 0, e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "",
				     e->d_name) > PROTO_NAME_MAX) {
			cli_errorf("--files-from %s: %s...: a name longer than %d bytes\n", top,
				   prefix, PROTO_NAME_MAX);
			status = CLI_EXIT_USAGE;
		} else if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			cli_errorf("--files-from %s: %s: %s\n", top, rel, strerror(errno));
			status = CLI_EXIT_NOINPUT;
		} else if (S_ISDIR(st.st_mode) && depth < CLI_DIR_DEPTH_MAX) {
			sub = openat(dirfd(dir), e->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				cli_errorf("--files-from %s: %s: %s\n", top, rel, strerror(errno));
				status = CLI_EXIT_NOINPUT;
			} else {
				status = cli_run_add_dir_at(run, top, sub, rel, depth + 1);
			}
		} else if (S_ISREG(st.st_mode)) {
			status = cli_run_add_dir_file(run, top, dirfd(dir), e->d_name, rel);
		} else {
			cli_errorf("--files-from %s: %s: not a regular file or directory (links "
				   "are not followed)\n",
				   top, rel);
			status = CLI_EXIT_USAGE;
		}
	}
	if (status == 0 && errno != 0)
		status = cli_fail("--files-from", -errno);
	closedir(dir);
	return status;
}

/* --files-from DIR: every file below DIR, by its path below DIR. */
static int
cli_run_add_dir(struct cli_run *run, const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0) {
		cli_errorf("--files-from %s: %s\n", dir, strerror(errno));
		return CLI_EXIT_NOINPUT;
	}
	return cli_run_add_dir_at(run, dir, dfd, "", 0);
}

/* Add --file NAME=PATH (or PATH, named by its last component) to the request. */
static int
cli_run_add_file(struct cli_run *run, const char *spec)
{
	const char *eq = strchr(spec, '='), *path, *slash;
	char *name = NULL, *buf = NULL;
	size_t len;
	int r, status;

	if (eq != NULL) {
		name = strndup(spec, (size_t)(eq - spec));
		path = eq + 1;
	} else {
		slash = strrchr(spec, '/');
		name = strdup(slash != NULL ? slash + 1 : spec);
		path = spec;
	}
	if (name == NULL)
		return cli_fail("--file", -ENOMEM);
	r = cli_read_file(path, &buf, &len);
	if (r < 0) {
		cli_errorf("--file %s: read %s: %s\n", spec, path, strerror(-r));
		status = CLI_EXIT_NOINPUT;
		goto out;
	}
	r = airlock_run_req_add_file(run->req, name, buf, len);
	if (r < 0) {
		cli_errorf("--file %s: %s\n", spec,
			   r == -EINVAL	  ? "bad name (empty, absolute or too long)"
			   : r == -EEXIST ? "name given twice"
					  : strerror(-r));
		status = CLI_EXIT_USAGE;
		goto out;
	}
	status = 0;
out:
	free(name);
	free(buf);
	return status;
}

/* Add --env KEY=VALUE to the request. */
static int
cli_run_add_env(struct cli_run *run, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char *key;
	int r;

	if (eq == NULL || eq == spec) {
		cli_errorf("--env %s: expected KEY=VALUE\n", spec);
		return CLI_EXIT_USAGE;
	}
	key = strndup(spec, (size_t)(eq - spec));
	if (key == NULL)
		return cli_fail("--env", -ENOMEM);
	r = airlock_run_req_set_env(run->req, key, eq + 1);
	free(key);
	if (r < 0) {
		cli_errorf("--env %s: %s\n", spec, strerror(-r));
		return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
	}
	return 0;
}

/*
 * Parse the value of option opt (given as arg) as a number of this kind:
 * seconds (sent as milliseconds), a size with suffixes, or a count. Returns
 * 0 or the usage status, with a message.
 */
static int
cli_value(const char *opt, const char *arg, const char *value, enum limit_kind kind, uint64_t *ret)
{
	int r;

	switch (kind) {
	case LIMIT_KIND_MS:
		r = cli_parse_seconds(value, ret);
		break;
	case LIMIT_KIND_COUNT:
		r = cli_parse_count(value, ret);
		break;
	default:
		r = cli_parse_size(value, ret);
		break;
	}
	if (r < 0) {
		cli_errorf("%s %s: %s\n", opt, arg,
			   r == -ERANGE ? "out of range (must be more than 0)" : "malformed value");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/*
 * A limit's own option (c: OPT_LIMIT_FIRST + the limit) or --limit NAME=VALUE:
 * the value parsed as the table of limits says (times in seconds, sizes
 * with suffixes, counts) into lim. Returns 0 or the usage status.
 */
static int
cli_limit_option(struct cli_limits *lim, int c, const char *arg)
{
	const char *value = arg, *eq;
	enum proto_limit l;
	char opt[40] = "--limit";

	if (c == OPT_LIMIT) {
		eq = strchr(arg, '=');
		if (eq == NULL) {
			cli_errorf("--limit %s: expected NAME=VALUE\n", arg);
			return CLI_EXIT_USAGE;
		}
		if (limit_from_name(arg, (size_t)(eq - arg), &l) < 0) {
			cli_errorf("--limit %s: no such limit (see airlock info)\n", arg);
			return CLI_EXIT_USAGE;
		}
		value = eq + 1;
	} else {
		l = (enum proto_limit)(c - OPT_LIMIT_FIRST);
		snprintf(opt, sizeof(opt), "--%s", limit_table[l].option);
	}
	return cli_value(opt, arg, value, limit_table[l].kind, &lim->v[l]);
}

/* The getopt_long table of the commands in `in` (ret: CLI_NOPTIONS +
 * PROTO_LIMIT_COUNT_ + 1 entries): their options, each limit's own option
 * where they take limits, the terminator. */
static void
cli_options_for(unsigned in, struct option *ret)
{
	size_t i, l, n = 0;

	for (i = 0; i < CLI_NOPTIONS; i++)
		if ((cli_options[i].in & in) != 0)
			ret[n++] = cli_options[i].opt;
	for (l = 0; (in & CLI_IN_LIMITS) != 0 && l < PROTO_LIMIT_COUNT_; l++)
		if (limit_table[l].option != NULL)
			ret[n++] = (struct option){limit_table[l].option, required_argument, NULL,
						   OPT_LIMIT_FIRST + (int)l};
	ret[n] = (struct option){NULL, 0, NULL, 0};
}

/* An option the command does not take: the usage (unless --json) and the usage status. */
static int
cli_bad_option(const struct cli_parse *p)
{
	if (!cli_json_errors)
		cli_usage_cmd(stderr, p->usage);
	if (p->usage == NULL)
		return cli_err(CLI_EXIT_USAGE, "usage", "bad option (see airlock --help)");
	return cli_err(CLI_EXIT_USAGE, "usage", "%s: bad option (see airlock %s --help)", p->what,
		       p->usage);
}

/*
 * Read the options of one command (argv[0] is its name) as p says: --socket
 * and --json into cli, limits into lim, --help prints the usage, the rest
 * goes to p->own. Returns 0 (optind: the first operand), -1 after --help,
 * or an exit status.
 */
static int
cli_parse_options(struct cli *cli, const struct cli_parse *p, struct cli_limits *lim, int argc,
		  char **argv)
{
	struct option options[CLI_NOPTIONS + PROTO_LIMIT_COUNT_ + 1];
	int c, status;

	cli_options_for(p->in, options);
	optind = 0;
	while ((c = getopt_long(argc, argv, p->shortopts, options, NULL)) != -1) {
		if (c == OPT_SOCKET) {
			cli->socket = optarg;
			continue;
		}
		if (c == OPT_JSON) {
			cli->json = cli_json_errors = true;
			continue;
		}
		if (c == 'h') {
			cli_usage_cmd(stdout, p->usage);
			return -1;
		}
		if (c == OPT_LIMIT ||
		    (c >= OPT_LIMIT_FIRST && c < OPT_LIMIT_FIRST + (int)PROTO_LIMIT_COUNT_))
			status = cli_limit_option(lim, c, optarg);
		else if (c != '?' && p->own != NULL)
			status = p->own(p->ctx, c, optarg);
		else
			status = cli_bad_option(p);
		if (status != 0)
			return status;
	}
	return 0;
}

/* Set the code of the run from -c, a file or stdin. */
static int
cli_run_set_code(struct cli_run *run, const char *source)
{
	char *buf = NULL;
	size_t len;
	int r;

	if (run->code != NULL)
		r = airlock_run_req_set_code(run->req, run->code, strlen(run->code));
	else {
		r = cli_read_file(source, &buf, &len);
		if (r < 0) {
			cli_errorf("read code from %s: %s\n",
				   strcmp(source, "-") == 0 ? "stdin" : source, strerror(-r));
			return CLI_EXIT_NOINPUT;
		}
		r = airlock_run_req_set_code(run->req, buf, len);
		free(buf);
	}
	if (r < 0) {
		cli_errorf("code: %s\n", strerror(-r));
		return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
	}
	return 0;
}

/* Set the run's stdin from --stdin PATH. */
static int
cli_run_set_stdin(struct cli_run *run)
{
	char *buf = NULL;
	size_t len;
	int r;

	r = cli_read_file(run->stdin_path, &buf, &len);
	if (r < 0) {
		cli_errorf("--stdin %s: %s\n", run->stdin_path, strerror(-r));
		return CLI_EXIT_NOINPUT;
	}
	r = airlock_run_req_set_stdin(run->req, buf, len);
	free(buf);
	if (r < 0) {
		cli_errorf("--stdin %s: %s\n", run->stdin_path, strerror(-r));
		return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
	}
	return 0;
}

/* Put a stream of the result into obj as "name" (UTF-8) or "name_base64". */
static int
cli_json_stream(json_t *obj, const char *name, const void *data, size_t len)
{
	char key[32];
	char *b64;
	int r;

	if (cli_utf8_valid(data, len))
		return json_object_set_new(obj, name, json_stringn(data, len));
	b64 = cli_base64(data, len);
	if (b64 == NULL)
		return -1;
	snprintf(key, sizeof(key), "%s_base64", name);
	r = json_object_set_new(obj, name, json_null());
	if (r == 0)
		r = json_object_set_new(obj, key, json_string(b64));
	free(b64);
	return r;
}

/*
 * Put a file name into obj as "name": as it is when it is UTF-8; else
 * escaped (each byte of an invalid sequence as \xHH, and \ as \\) with the
 * exact bytes beside it in "name_base64". JSON strings must be UTF-8, and a
 * file name on Linux is any bytes but NUL and '/'.
 */
static int
cli_json_name(json_t *obj, const char *name)
{
	size_t len = strlen(name), i = 0, o = 0;
	char *esc, *b64;
	int r;

	if (cli_utf8_valid(name, len))
		return json_object_set_new(obj, "name", json_stringn(name, len));
	esc = malloc(len * 4 + 1);
	b64 = cli_base64(name, len);
	if (esc == NULL || b64 == NULL) {
		free(esc);
		free(b64);
		return -1;
	}
	while (i < len) {
		size_t k;

		for (k = 1; k <= 4 && i + k <= len; k++)
			if (cli_utf8_valid(name + i, k))
				break;
		if (k <= 4 && i + k <= len && name[i] != '\\') {
			memcpy(esc + o, name + i, k);
			o += k;
			i += k;
		} else if (name[i] == '\\') {
			memcpy(esc + o, "\\\\", 2);
			o += 2;
			i++;
		} else {
			o += (size_t)sprintf(esc + o, "\\x%02x", (unsigned char)name[i]);
			i++;
		}
	}
	esc[o] = '\0';
	r = json_object_set_new(obj, "name", json_stringn(esc, o));
	if (r == 0)
		r = json_object_set_new(obj, "name_base64", json_string(b64));
	free(esc);
	free(b64);
	return r;
}

/* Tool call i of `run --json`: {"tool", "outcome", "ms"}. */
static json_t *
cli_tool_call_row(const void *list, size_t i)
{
	const struct airlock_result *res = list;

	return json_pack("{s:s, s:s, s:I}", "tool", airlock_result_tool_call_name(res, i),
			 "outcome", airlock_result_tool_call_outcome(res, i), "ms",
			 (json_int_t)airlock_result_tool_call_ms(res, i));
}

/* Artifact i of `run --json`: {"name" (or "name_base64"), "size", "truncated"}. */
static json_t *
cli_artifact_row(const void *list, size_t i)
{
	const struct airlock_result *res = list;
	json_t *a =
		json_pack("{s:I, s:b}", "size", (json_int_t)airlock_result_artifact_size(res, i),
			  "truncated", airlock_result_artifact_truncated(res, i));

	if (a != NULL && cli_json_name(a, airlock_result_artifact_name(res, i)) < 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* A cell's fields of the JSON result: cell, state, value, display
 * [{mime, size, data_base64}]. 0 or -1. */
static int
cli_cell_json(json_t *obj, const struct airlock_result *res)
{
	const char *value = airlock_result_value(res), *mime;
	const void *data;
	size_t i, len;
	json_t *disp;

	if (airlock_result_cell(res) == 0)
		return 0;
	disp = json_array();
	if (disp == NULL ||
	    json_object_set_new(obj, "cell", json_integer((json_int_t)airlock_result_cell(res))) <
		    0 ||
	    json_object_set_new(
		    obj, "state",
		    json_string(airlock_result_state(res) == AIRLOCK_CELL_KEPT ? "kept" : "lost")) <
		    0 ||
	    json_object_set_new(obj, "value", value != NULL ? json_string(value) : json_null()) <
		    0) {
		json_decref(disp);
		return -1;
	}
	for (i = 0; i < airlock_result_display_count(res); i++) {
		json_t *d;

		if (airlock_result_display_get(res, i, &mime, &data, &len) < 0)
			continue;
		d = json_pack("{s:s, s:I}", "mime", mime, "size", (json_int_t)len);
		if (d == NULL || cli_json_stream(d, "data", data, len) < 0 ||
		    json_array_append_new(disp, d) < 0) {
			json_decref(d);
			json_decref(disp);
			return -1;
		}
	}
	return json_object_set_new(obj, "display", disp);
}

/* The result as one JSON object. */
static json_t *
cli_result_json(const struct airlock_result *res)
{
	const void *out, *err;
	size_t olen, elen, i;
	json_t *obj;
	const char *error = airlock_result_error(res);
	enum airlock_outcome outcome = airlock_result_outcome(res);

	airlock_result_stdout(res, &out, &olen);
	airlock_result_stderr(res, &err, &elen);
	/* exit_code is null unless the code exited, signal unless a signal
	 * ended it: a killed run has no exit code (0 would read as success). */
	obj = json_pack(
		"{s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:b, s:o}", "outcome",
		airlock_outcome_name(outcome), "exit_code",
		outcome == AIRLOCK_OUTCOME_EXITED ? json_integer(airlock_result_exit_code(res))
						  : json_null(),
		"signal",
		outcome == AIRLOCK_OUTCOME_SIGNALED ? json_integer(airlock_result_signal(res))
						    : json_null(),
		"wall_ms", (json_int_t)airlock_result_wall_ms(res), "cpu_ms",
		(json_int_t)airlock_result_cpu_ms(res), "memory_peak_bytes",
		(json_int_t)airlock_result_memory_peak_bytes(res), "queued_ms",
		(json_int_t)airlock_result_queued_ms(res), "stdout_bytes",
		(json_int_t)airlock_result_stdout_total(res), "stdout_truncated",
		airlock_result_stdout_truncated(res), "stderr_bytes",
		(json_int_t)airlock_result_stderr_total(res), "stderr_truncated",
		airlock_result_stderr_truncated(res), "error",
		error != NULL ? json_string(error) : json_null());
	if (obj == NULL)
		return NULL;
	if (cli_json_stream(obj, "stdout", out, olen) < 0 ||
	    cli_json_stream(obj, "stderr", err, elen) < 0 ||
	    json_object_set_new(
		    obj, "artifacts",
		    cli_json_rows(res, airlock_result_artifact_count(res), cli_artifact_row)) < 0)
		goto fail;
	/* What the artifacts limit left out: how many files, and their size. */
	if (json_object_set_new(obj, "artifacts_omitted",
				json_integer((json_int_t)airlock_result_artifacts_omitted(res))) <
		    0 ||
	    json_object_set_new(
		    obj, "artifacts_omitted_bytes",
		    json_integer((json_int_t)airlock_result_artifacts_omitted_bytes(res))) < 0)
		goto fail;
	/* A network = proxy run: what it contacted and what was refused. */
	if (airlock_result_has_network(res) &&
	    json_object_set_new(obj, "network", cli_network_json(res)) < 0)
		goto fail;
	/* A run with tools: every call, in order. */
	if (airlock_result_tool_call_count(res) > 0 &&
	    json_object_set_new(
		    obj, "tool_calls",
		    cli_json_rows(res, airlock_result_tool_call_count(res), cli_tool_call_row)) < 0)
		goto fail;
	/* The advisory checks' findings (blocked_imports), when there are any. */
	if (airlock_result_advisory_count(res) > 0) {
		json_t *adv = json_array();

		if (adv == NULL || json_object_set_new(obj, "advisories", adv) < 0)
			goto fail;
		for (i = 0; i < airlock_result_advisory_count(res); i++)
			if (json_array_append_new(adv,
						  json_string(airlock_result_advisory(res, i))) < 0)
				goto fail;
	}
	if (cli_cell_json(obj, res) < 0)
		goto fail;
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

/* Write every artifact below dir (replacing files with force); returns 0
 * or CLI_EXIT_CANTCREAT. */
static int
cli_write_artifacts(const struct airlock_result *res, const char *dir, bool force)
{
	const void *data;
	size_t len, i;
	int dfd, r, status = 0;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "airlock: --artifacts %s: mkdir: %s\n", dir, strerror(errno));
		return CLI_EXIT_CANTCREAT;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "airlock: --artifacts %s: open: %s\n", dir, strerror(errno));
		return CLI_EXIT_CANTCREAT;
	}
	for (i = 0; i < airlock_result_artifact_count(res); i++) {
		const char *name = airlock_result_artifact_name(res, i);

		if (airlock_result_artifact_data(res, i, &data, &len) < 0)
			continue;
		r = cli_artifact_write(dfd, name, data, len, force);
		if (r < 0) {
			fprintf(stderr, "airlock: artifact %s: not written below %s: %s\n", name,
				dir,
				r == -EINVAL   ? "unsafe name"
				: r == -ELOOP  ? "a symlink is in the way"
				: r == -EEXIST ? "a file is there (--force replaces it)"
					       : strerror(-r));
			status = CLI_EXIT_CANTCREAT;
			continue;
		}
		if (airlock_result_artifact_truncated(res, i))
			fprintf(stderr,
				"airlock: artifact %s: truncated to %zu of %" PRIu64 " bytes\n",
				name, len, airlock_result_artifact_size(res, i));
	}
	close(dfd);
	return status;
}

/* A time limit fired: the code was killed, or a cell was interrupted and
 * its interpreter's state kept. */
static void
cli_limit_note(const struct airlock_result *res, const char *limit, uint64_t ms)
{
	bool kept = airlock_result_state(res) == AIRLOCK_CELL_KEPT;

	fprintf(stderr, "airlock: %s at the %s limit after %" PRIu64 " ms%s\n",
		kept ? "interrupted" : "killed", limit, ms,
		kept ? "; the interpreter's state is kept" : "");
}

/* A cell's value (after its output, as a REPL prints it), and on stderr
 * what is not text: a lost state, the rich outputs. */
static void
cli_cell_report(const struct airlock_result *res)
{
	const char *value = airlock_result_value(res), *mime;
	const void *data;
	size_t i, len;

	if (airlock_result_cell(res) == 0)
		return;
	if (value != NULL) {
		printf("%s\n", value);
		fflush(stdout);
	}
	if (airlock_result_state(res) == AIRLOCK_CELL_LOST)
		fprintf(stderr,
			"airlock: cell %" PRIu64 ": the interpreter was restarted: the state of "
			"earlier cells is lost\n",
			airlock_result_cell(res));
	for (i = 0; i < airlock_result_display_count(res); i++)
		if (airlock_result_display_get(res, i, &mime, &data, &len) == 0)
			fprintf(stderr, "airlock: cell %" PRIu64 ": display %zu: %s, %zu bytes\n",
				airlock_result_cell(res), i + 1, mime, len);
}

/* Print the result (raw streams or JSON) and return the command's status.
 * A streamed run's output was printed as it came: it is not printed again. */
static int
cli_run_report(const struct cli *cli, const struct cli_run *run, const struct airlock_result *res)
{
	const void *data;
	size_t len;
	int status, astatus = 0;

	if (cli->json) {
		json_t *obj = cli_result_json(res);

		/* After JSON lines of output, the result is the last line. */
		if (obj != NULL && run->stream)
			json_object_set_new(obj, "event", json_string("result"));
		status = cli_json_print(obj);
		if (status != 0)
			return status;
	} else {
		if (!run->stream) {
			airlock_result_stdout(res, &data, &len);
			fwrite(data, 1, len, stdout);
			fflush(stdout);
			airlock_result_stderr(res, &data, &len);
			fwrite(data, 1, len, stderr);
		}
		cli_cell_report(res);
		if (airlock_result_stdout_truncated(res))
			fprintf(stderr, "airlock: stdout truncated: %" PRIu64 " bytes written\n",
				airlock_result_stdout_total(res));
		if (airlock_result_stderr_truncated(res))
			fprintf(stderr, "airlock: stderr truncated: %" PRIu64 " bytes written\n",
				airlock_result_stderr_total(res));
		if (airlock_result_artifacts_omitted(res) > 0)
			fprintf(stderr,
				"airlock: %" PRIu64 " more files (%" PRIu64
				" bytes) left out of the artifacts: past the artifacts limit\n",
				airlock_result_artifacts_omitted(res),
				airlock_result_artifacts_omitted_bytes(res));
		if (airlock_result_has_network(res)) {
			bool oom;
			char *line = cli_network_text(res, &oom);

			if (line == NULL)
				return cli_fail("network summary", -ENOMEM);
			fprintf(stderr, "airlock: %s\n", line);
			free(line);
		}
		/* Advisory only: the run went ahead (docs/security.md). */
		for (size_t i = 0; i < airlock_result_advisory_count(res); i++)
			fprintf(stderr, "airlock: advisory: %s\n", airlock_result_advisory(res, i));
	}
	if (run->artifacts != NULL)
		astatus = cli_write_artifacts(res, run->artifacts, run->force);
	switch (airlock_result_outcome(res)) {
	case AIRLOCK_OUTCOME_EXITED:
		status = airlock_result_exit_code(res) & 0xff;
		break;
	case AIRLOCK_OUTCOME_SIGNALED:
		if (!cli->json)
			fprintf(stderr, "airlock: killed by signal %d\n",
				airlock_result_signal(res));
		status = CLI_EXIT_SIGNAL_BASE + (airlock_result_signal(res) & 0x7f);
		break;
	case AIRLOCK_OUTCOME_WALL_LIMIT:
		cli_limit_note(res, "wall-clock", airlock_result_wall_ms(res));
		status = CLI_EXIT_WALL;
		break;
	case AIRLOCK_OUTCOME_CPU_LIMIT:
		cli_limit_note(res, "CPU-time", airlock_result_cpu_ms(res));
		status = CLI_EXIT_CPU;
		break;
	case AIRLOCK_OUTCOME_MEMORY_LIMIT:
		fprintf(stderr, "airlock: killed at the memory limit\n");
		status = CLI_EXIT_MEMORY;
		break;
	case AIRLOCK_OUTCOME_PROCESS_LIMIT:
		fprintf(stderr, "airlock: stopped at the process limit (a fork was refused)\n");
		status = CLI_EXIT_PROCESSES;
		break;
	case AIRLOCK_OUTCOME_CANCELLED:
		fprintf(stderr, "airlock: cancelled\n");
		status = CLI_EXIT_CANCELLED;
		break;
	default:
		fprintf(stderr, "airlock: the sandbox failed: %s\n",
			airlock_result_error(res) != NULL ? airlock_result_error(res) : "unknown");
		status = CLI_EXIT_SANDBOX;
		break;
	}
	if (astatus != 0 && status == 0)
		status = astatus;
	return status;
}

/* --profile NAME: checked here as the daemon would (set is the request's setter). */
static int
cli_profile_option(const char *arg, int (*set)(void *, const char *), void *obj)
{
	int r = set(obj, arg);

	if (r == -EINVAL)
		return cli_err(CLI_EXIT_USAGE, "usage",
			       "--profile %s: not a profile name (1 to 32 of a-z, 0-9, '-', '_'; "
			       "see airlock info)",
			       arg);
	return r < 0 ? cli_fail("--profile", r) : 0;
}

/* Adapters of the two setters to cli_profile_option(). */
static int
cli_run_req_profile(void *req, const char *name)
{
	return airlock_run_req_set_profile(req, name);
}

static int
cli_session_opts_profile(void *opts, const char *name)
{
	return airlock_session_opts_set_profile(opts, name);
}

/* Handle one option of `airlock run` of its own; returns 0 or an exit status. */
static int
cli_run_option(void *ctx, int c, const char *arg)
{
	struct cli_run *run = ctx;
	int r;

	switch (c) {
	case OPT_LANG:
		run->lang = arg;
		run->lang_set = true;
		return 0;
	case 'c':
		run->code = arg;
		return 0;
	case OPT_ARG:
		r = airlock_run_req_add_arg(run->req, arg);
		if (r < 0) {
			cli_errorf("--arg: %s\n", strerror(-r));
			return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
		}
		return 0;
	case OPT_FILE:
		return cli_run_add_file(run, arg);
	case OPT_FILES_FROM:
		return cli_run_add_dir(run, arg);
	case OPT_STDIN:
		run->stdin_path = arg;
		return 0;
	case OPT_ENV:
		return cli_run_add_env(run, arg);
	case OPT_ARTIFACTS:
		run->artifacts = arg;
		return 0;
	case OPT_SESSION:
		run->session = arg;
		r = airlock_run_req_set_session(run->req, arg);
		if (r < 0) {
			fprintf(stderr,
				"airlock: --session %s: not a session id (see airlock session "
				"ls)\n",
				arg);
			return CLI_EXIT_USAGE;
		}
		run->in_session = true;
		return 0;
	case OPT_STREAM:
		run->stream = true;
		return 0;
	case OPT_CELL:
		run->cell = true;
		r = airlock_run_req_set_cell(run->req, true);
		return r < 0 ? cli_fail("--cell", r) : 0;
	case OPT_FORCE:
		run->force = true;
		return 0;
	case OPT_TOOL: {
		const char *why;

		r = cli_tools_add(&run->tools, run->req, arg, &why);
		if (r == -ENOMEM)
			return cli_fail("--tool", r);
		if (r < 0) {
			cli_errorf("--tool %s: %s\n", arg, why);
			return CLI_EXIT_USAGE;
		}
		return 0;
	}
	case OPT_PROFILE:
		return cli_profile_option(arg, cli_run_req_profile, run->req);
	case OPT_MOUNT:
		r = airlock_run_req_add_mount(run->req, arg);
		if (r == -EINVAL)
			return cli_err(
				CLI_EXIT_USAGE, "usage",
				"--mount %s: not a mount name (1 to 32 of a-z, 0-9, '-', '_')",
				arg);
		if (r == -E2BIG)
			return cli_err(CLI_EXIT_USAGE, "usage", "--mount %s: more than %d mounts",
				       arg, PROTO_MOUNTS_MAX);
		return r < 0 ? cli_fail("--mount", r) : 0;
	default: /* not an option of run's in cli_options */
		return cli_err(CLI_EXIT_SOFTWARE, "internal", "run: option %d not handled", c);
	}
}

/* `run --stream`: print a chunk of the run's output as it comes. */
static void
cli_stream_chunk(void *arg UNUSED, enum airlock_stream stream, const void *buf, size_t len)
{
	/* Errors are left to the final status (like stdio's). */
	(void)fd_write_all(stream == AIRLOCK_STREAM_STDERR ? STDERR_FILENO : STDOUT_FILENO, buf,
			   len);
}

/* `run --stream --json`: one JSON line per chunk, {"event": "output",
 * "stream", "data"} ("data_base64" when the bytes are not UTF-8). */
static void
cli_stream_json_chunk(void *arg UNUSED, enum airlock_stream stream, const void *buf, size_t len)
{
	json_t *obj = json_pack("{s:s, s:s}", "event", "output", "stream",
				stream == AIRLOCK_STREAM_STDERR ? "stderr" : "stdout");

	if (obj == NULL || cli_json_stream(obj, "data", buf, len) < 0) {
		json_decref(obj);
		return;
	}
	json_dumpf(obj, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(obj);
}

/*
 * A cell without --lang runs with the session's interpreter as the daemon
 * lists it (a session opened with python-site takes python-site cells);
 * when the daemon does not say (before 0.9, or no such session), the
 * default stays and the daemon's answer to the cell tells.
 */
static int
cli_run_cell_runtime(struct airlock_conn *conn, struct cli_run *run)
{
	struct airlock_session_list *list = NULL;
	const char *interp = NULL;
	size_t i;
	int r;

	if (!run->cell || run->lang_set || run->session == NULL)
		return 0;
	if (airlock_session_list(conn, &list) < 0)
		return 0;
	for (i = 0; i < airlock_session_list_count(list); i++)
		if (strcmp(airlock_session_list_id(list, i), run->session) == 0)
			interp = airlock_session_list_interpreter(list, i);
	r = interp != NULL ? airlock_run_req_set_runtime(run->req, interp) : 0;
	airlock_session_list_free(list);
	return r < 0 ? cli_fail("runtime", r) : 0;
}

/* `airlock run`: build the request from argv, run it, report. */
static int
cli_run(struct cli *cli, int argc, char **argv)
{
	struct cli_run run = {.lang = "python"};
	struct airlock_conn *conn = NULL;
	struct airlock_result *res = NULL;
	/* "+": options end at the first operand (FILE, -, or the program of
	 * exec), as with docker run, bwrap and systemd-run: what follows is the
	 * code's. */
	const struct cli_parse parse = {CLI_IN_RUN, "+c:h", "run", "run", cli_run_option, &run};
	const char *source = NULL;
	bool is_exec;
	size_t l;
	int r, status;

	r = airlock_run_req_new(&run.req);
	if (r < 0)
		return cli_fail("run request", r);
	status = cli_parse_options(cli, &parse, &run.lim, argc, argv);
	if (status != 0) {
		if (status < 0)
			status = CLI_EXIT_OK;
		goto out;
	}
	for (l = 0; l < PROTO_LIMIT_COUNT_; l++) {
		r = run.lim.v[l] != 0 ? airlock_run_req_set_limit(run.req, (enum airlock_limit)l,
								  run.lim.v[l])
				      : 0;
		if (r < 0) {
			status = cli_fail("limit", r);
			goto out;
		}
	}
	is_exec = strcmp(run.lang, "exec") == 0;
	r = airlock_run_req_set_runtime(run.req, run.lang);
	if (r < 0) {
		status = cli_usage_error("--lang: bad runtime name");
		goto out;
	}
	if (!is_exec && run.code == NULL) {
		if (optind >= argc) {
			status = cli_usage_error("run: no code: give -c CODE, FILE or -");
			goto out;
		}
		source = argv[optind++];
		/* A "--" right after FILE separated the code's arguments before
		 * options ended at FILE: still taken as that separator. */
		if (optind < argc && strcmp(argv[optind], "--") == 0)
			optind++;
	}
	if (run.stream && run.tools.n > 0) {
		status = cli_usage_error("run: --stream and --tool cannot be combined");
		goto out;
	}
	if (run.force && run.artifacts == NULL) {
		status = cli_usage_error("run: --force needs --artifacts DIR");
		goto out;
	}
	if (is_exec && run.code != NULL) {
		status = cli_usage_error("run: --lang exec takes an argv after --, not -c");
		goto out;
	}
	if (source != NULL && run.stdin_path != NULL && strcmp(source, "-") == 0 &&
	    strcmp(run.stdin_path, "-") == 0) {
		status = cli_usage_error("run: code and --stdin cannot both be read from stdin");
		goto out;
	}
	/* Positional arguments: the argv for exec, extra arguments otherwise. */
	for (; optind < argc; optind++) {
		r = airlock_run_req_add_arg(run.req, argv[optind]);
		if (r < 0) {
			status = r == -ENOMEM
					 ? cli_fail("argv", r)
					 : cli_usage_error("run: too many or too long arguments");
			goto out;
		}
	}
	if (!is_exec) {
		status = cli_run_set_code(&run, source);
		if (status != 0)
			goto out;
	}
	if (run.stdin_path != NULL) {
		status = cli_run_set_stdin(&run);
		if (status != 0)
			goto out;
	}
	status = cli_connect(cli, &conn);
	if (status == 0)
		status = cli_run_cell_runtime(conn, &run);
	if (status != 0)
		goto out;
	if (run.tools.n > 0)
		r = airlock_run_tools(conn, run.req, cli_tools_call, &run.tools, &res);
	else if (run.stream)
		r = airlock_run_stream(conn, run.req,
				       cli->json ? cli_stream_json_chunk : cli_stream_chunk, NULL,
				       &res);
	else
		r = airlock_run(conn, run.req, &res);
	if (r == -ENOENT && run.in_session) {
		/* not_found with --session: the session (or the profile, said in the message). */
		cli_daemon_error(conn, "run --session", r);
		status = CLI_EXIT_NO_SESSION;
		goto out;
	}
	if (r < 0) {
		status = cli_daemon_error(conn, "run", r);
		goto out;
	}
	status = cli_run_report(cli, &run, res);
out:
	airlock_result_free(res);
	airlock_conn_free(conn);
	airlock_run_req_free(run.req);
	cli_tools_free(&run.tools);
	return status;
}

/* Report a failed session command: not_found gets its own status. */
static int
cli_session_error(struct airlock_conn *conn, const char *what, int err)
{
	const char *code, *message;

	if (err != -ENOENT)
		return cli_daemon_error(conn, what, err);
	if (airlock_conn_last_error(conn, &code, &message) == 0)
		return cli_err(CLI_EXIT_NOT_FOUND, "not_found", "%s: not found: %s", what, message);
	return cli_err(CLI_EXIT_NOT_FOUND, "not_found", "%s: not found", what);
}

/* Check a SESSION operand; returns 0 or the usage status. */
static int
cli_check_session_id(const char *id)
{
	if (rules_session_id_str_valid(id))
		return 0;
	cli_errorf("%s: not a session id (see airlock session ls)\n", id);
	return CLI_EXIT_USAGE;
}

/* Apply one option of `session open` of its own to opts; 0 or an exit status. */
static int
cli_session_open_option(void *ctx, int c, const char *arg)
{
	struct airlock_session_opts *opts = ctx;
	uint64_t v;
	int status;

	switch (c) {
	case OPT_WORKSPACE:
		status = cli_value("--workspace", arg, arg, LIMIT_KIND_BYTES, &v);
		return status != 0 ? status : airlock_session_opts_set_workspace_bytes(opts, v);
	case OPT_IDLE:
		status = cli_value("--idle", arg, arg, LIMIT_KIND_MS, &v);
		return status != 0 ? status : airlock_session_opts_set_idle_timeout_ms(opts, v);
	case OPT_LIFETIME:
		status = cli_value("--lifetime", arg, arg, LIMIT_KIND_MS, &v);
		return status != 0 ? status : airlock_session_opts_set_lifetime_ms(opts, v);
	case OPT_PROFILE:
		return cli_profile_option(arg, cli_session_opts_profile, opts);
	case OPT_INTERPRETER: {
		int r = airlock_session_opts_set_interpreter(opts, arg);

		if (r == -EINVAL)
			return cli_err(CLI_EXIT_USAGE, "usage",
				       "--interpreter %s: not a runtime name", arg);
		return r < 0 ? cli_fail("--interpreter", r) : 0;
	}
	default: /* not an option of session open's in cli_options */
		return cli_err(CLI_EXIT_SOFTWARE, "internal", "session open: option %d not handled",
			       c);
	}
}

/* `airlock session open`: print the new session's id alone (scripts capture it). */
static int
cli_session_open(struct cli *cli, int argc, char **argv)
{
	char id[AIRLOCK_SESSION_ID_LEN + 1];
	struct airlock_session_opts *opts = NULL;
	struct airlock_conn *conn = NULL;
	struct cli_limits lim = {0};
	struct cli_parse parse = {CLI_IN_SESSION_OPEN,	   "h", "session", "session open",
				  cli_session_open_option, NULL};
	size_t l;
	int r, status;

	r = airlock_session_opts_new(&opts);
	if (r < 0)
		return cli_fail("session options", r);
	parse.ctx = opts;
	status = cli_parse_options(cli, &parse, &lim, argc, argv);
	if (status != 0) {
		if (status < 0)
			status = CLI_EXIT_OK;
		goto out;
	}
	for (l = 0; l < PROTO_LIMIT_COUNT_; l++) {
		r = lim.v[l] != 0
			    ? airlock_session_opts_set_limit(opts, (enum airlock_limit)l, lim.v[l])
			    : 0;
		if (r < 0) {
			status = cli_fail("limit", r);
			goto out;
		}
	}
	if (optind < argc) {
		status = cli_usage_error("session open: unexpected argument");
		goto out;
	}
	status = cli_connect(cli, &conn);
	if (status != 0)
		goto out;
	r = airlock_session_open(conn, opts, id);
	if (r < 0) {
		status = cli_daemon_error(conn, "session open", r);
		goto out;
	}
	if (cli->json)
		status = cli_json_print(json_pack("{s:s}", "id", id));
	else if (printf("%s\n", id) < 0 || fflush(stdout) == EOF)
		status = cli_fail("write", -EIO);
out:
	airlock_conn_free(conn);
	airlock_session_opts_free(opts);
	return status;
}

/* `airlock session close ID`. */
static int
cli_session_close(const struct cli *cli UNUSED, struct airlock_conn *conn, int nargs UNUSED,
		  char **args)
{
	int r;

	r = airlock_session_close(conn, args[0]);
	return r < 0 ? cli_session_error(conn, "session close", r) : CLI_EXIT_OK;
}

/* Session i of `airlock session ls --json` (a list of objects, one per
 * session; `interpreter` only for an interpreter session). */
static json_t *
cli_session_row(const void *sessions, size_t i)
{
	const struct airlock_session_list *list = sessions;
	const char *interp = airlock_session_list_interpreter(list, i);
	json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:s}", "id", airlock_session_list_id(list, i),
			      "age_ms", (json_int_t)airlock_session_list_age_ms(list, i), "idle_ms",
			      (json_int_t)airlock_session_list_idle_ms(list, i), "runs",
			      (json_int_t)airlock_session_list_runs(list, i), "state",
			      airlock_session_list_state(list, i));

	if (o != NULL && interp != NULL &&
	    json_object_set_new(o, "interpreter", json_string(interp)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* `airlock session ls`: the caller's sessions, as a table. */
static int
cli_session_ls(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED,
	       char **args UNUSED)
{
	struct airlock_session_list *list = NULL;
	char age[32], idle[32];
	size_t i;
	int r, status = CLI_EXIT_OK;

	r = airlock_session_list(conn, &list);
	if (r < 0) {
		status = cli_daemon_error(conn, "session ls", r);
		goto out;
	}
	if (cli->json) {
		status = cli_json_print(
			cli_json_rows(list, airlock_session_list_count(list), cli_session_row));
		goto out;
	}
	printf("%-32s %9s %9s %6s %-7s %s\n", "ID", "AGE", "IDLE", "RUNS", "STATE", "INTERPRETER");
	for (i = 0; i < airlock_session_list_count(list); i++) {
		const char *interp = airlock_session_list_interpreter(list, i);

		cli_format_elapsed(airlock_session_list_age_ms(list, i), age, sizeof(age));
		cli_format_elapsed(airlock_session_list_idle_ms(list, i), idle, sizeof(idle));
		printf("%-32s %9s %9s %6" PRIu64 " %-7s %s\n", airlock_session_list_id(list, i),
		       age, idle, airlock_session_list_runs(list, i),
		       airlock_session_list_state(list, i), interp != NULL ? interp : "-");
	}
	if (fflush(stdout) == EOF)
		status = cli_fail("write", -EIO);
out:
	airlock_session_list_free(list);
	return status;
}

static int cli_dispatch(struct cli *cli, const struct cli_command *table, const char *usage,
			const char *unknown, int argc, char **argv);

/* `airlock session open|close|ls`. */
static int
cli_session(struct cli *cli, int argc, char **argv)
{
	static const struct cli_command session_commands[] = {
		{.name = "open", .main = cli_session_open},
		{.name = "close",
		 .fn = cli_session_close,
		 .min_args = 1,
		 .max_args = 1,
		 .session_first = true},
		{.name = "ls", .fn = cli_session_ls},
		{.name = NULL},
	};

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		cli_usage_cmd(stdout, "session");
		return CLI_EXIT_OK;
	}
	return cli_dispatch(cli, session_commands, "session", "session: expected open, close or ls",
			    argc - 1, argv + 1);
}

/* `airlock put SESSION LOCAL REMOTE`: LOCAL (- = stdin) into the session.
 * It connects itself (conn NULL) once LOCAL is read: no connection waits
 * on a slow stdin. */
static int
cli_put(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	char *buf = NULL;
	size_t len;
	int r, status;

	r = cli_read_file(args[1], &buf, &len);
	if (r < 0) {
		cli_errorf("put: read %s: %s\n", strcmp(args[1], "-") == 0 ? "stdin" : args[1],
			   strerror(-r));
		return CLI_EXIT_NOINPUT;
	}
	status = cli_connect(cli, &conn);
	if (status != 0)
		goto out;
	r = airlock_file_write(conn, args[0], args[2], buf, len);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		cli_errorf("put: %s: bad remote path (empty or too long)\n", args[2]);
		status = CLI_EXIT_USAGE;
	} else if (r < 0)
		status = cli_session_error(conn, "put", r);
out:
	airlock_conn_free(conn);
	free(buf);
	return status;
}

/*
 * Write len bytes to path atomically: a new file next to it (O_CREAT | O_EXCL
 * | O_NOFOLLOW, mode 0666 less the umask), filled and synced, then renamed
 * over path. A reader never sees a partial file, and a symbolic link at path
 * is replaced, not followed. Returns 0 or -errno.
 */
static int
cli_write_atomic(const char *path, const void *data, size_t len)
{
	char *dcopy = NULL, *bcopy = NULL, tmp[300];
	const char *dir, *base;
	int dfd = -1, fd = -1, r, i;
	uint64_t rnd;

	dcopy = strdup(path);
	bcopy = strdup(path);
	r = -ENOMEM;
	if (dcopy == NULL || bcopy == NULL)
		goto out;
	dir = dirname(dcopy);
	base = basename(bcopy);
	r = -EISDIR;
	if (base[0] == '\0' || strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0 || path[strlen(path) - 1] == '/')
		goto out;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		goto out;
	}
	for (i = 0; fd < 0; i++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint64_t)getpid() * 1000003u + (uint64_t)i;
		snprintf(tmp, sizeof(tmp), ".%.200s.%016" PRIx64 ".tmp", base, rnd);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && (errno != EEXIST || i >= 16)) {
			r = -errno;
			goto out;
		}
	}
	r = fd_write_all(fd, data, len);
	if (r < 0)
		goto fail;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		goto fail;
	}
	r = 0;
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	fd = -1;
	unlinkat(dfd, tmp, 0);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(dcopy);
	free(bcopy);
	return r;
}

/* `airlock get SESSION REMOTE LOCAL`: a file of the session into LOCAL (- = stdout). */
static int
cli_get(const struct cli *cli UNUSED, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	struct airlock_file *file = NULL;
	const void *data;
	size_t len;
	int r, status = CLI_EXIT_OK;

	r = airlock_file_read(conn, args[0], args[1], &file);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		cli_errorf("get: %s: bad remote path (empty or too long)\n", args[1]);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (r < 0) {
		status = cli_session_error(conn, "get", r);
		goto out;
	}
	airlock_file_data(file, &data, &len);
	if (strcmp(args[2], "-") == 0) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) == EOF)
			status = cli_fail("get: write stdout", -EIO);
	} else {
		r = cli_write_atomic(args[2], data, len);
		if (r < 0) {
			cli_errorf("get: write %s: %s\n", args[2], strerror(-r));
			status = CLI_EXIT_CANTCREAT;
			goto out;
		}
	}
	if (airlock_file_truncated(file))
		fprintf(stderr, "airlock: get: %s: truncated to %zu of %" PRIu64 " bytes\n",
			args[1], len, airlock_file_size(file));
out:
	airlock_file_free(file);
	return status;
}

/* Print a name from the sandbox for a terminal: control bytes and backslash as \xHH. */
static void
cli_print_name(const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			printf("\\x%02x", *p);
		else
			putchar(*p);
}

/* Entry i of `airlock files --json` (a list of {name (or name_base64), kind,
 * size, mtime_ms}). */
static json_t *
cli_file_row(const void *files, size_t i)
{
	const struct airlock_file_list *list = files;
	json_t *o = json_pack("{s:s, s:I, s:I}", "kind",
			      airlock_file_kind_name(airlock_file_list_kind(list, i)), "size",
			      (json_int_t)airlock_file_list_size(list, i), "mtime_ms",
			      (json_int_t)airlock_file_list_mtime_ms(list, i));

	if (o != NULL && cli_json_name(o, airlock_file_list_name(list, i)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* `airlock files SESSION [DIR]`: one line per entry, KIND SIZE MTIME NAME. */
static int
cli_files(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args)
{
	struct airlock_file_list *list = NULL;
	const char *dir = nargs > 1 ? args[1] : NULL;
	char mtime[32];
	struct tm tm;
	time_t t;
	size_t i;
	int r, status = CLI_EXIT_OK;

	r = airlock_file_list(conn, args[0], dir, &list);
	if (r == -ENAMETOOLONG) {
		cli_errorf("files: %s: path too long\n", dir);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (r < 0) {
		status = cli_session_error(conn, "files", r);
		goto out;
	}
	if (cli->json) {
		status = cli_json_print(
			cli_json_rows(list, airlock_file_list_count(list), cli_file_row));
		goto out;
	}
	printf("%-5s %12s %-20s %s\n", "KIND", "SIZE", "MTIME", "NAME");
	for (i = 0; i < airlock_file_list_count(list); i++) {
		t = (time_t)(airlock_file_list_mtime_ms(list, i) / 1000);
		if (gmtime_r(&t, &tm) == NULL ||
		    strftime(mtime, sizeof(mtime), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			snprintf(mtime, sizeof(mtime), "-");
		printf("%-5s %12" PRIu64 " %-20s ",
		       airlock_file_kind_name(airlock_file_list_kind(list, i)),
		       airlock_file_list_size(list, i), mtime);
		cli_print_name(airlock_file_list_name(list, i));
		putchar('\n');
	}
	if (airlock_file_list_truncated(list))
		fprintf(stderr, "airlock: files: listing truncated at %zu entries\n",
			airlock_file_list_count(list));
	if (fflush(stdout) == EOF)
		status = cli_fail("write", -EIO);
out:
	airlock_file_list_free(list);
	return status;
}

/* `airlock rm SESSION REMOTE`: delete a file, link or empty directory. */
static int
cli_rm(const struct cli *cli UNUSED, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	int r;

	r = airlock_file_delete(conn, args[0], args[1]);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		cli_errorf("rm: %s: bad remote path (empty or too long)\n", args[1]);
		return CLI_EXIT_USAGE;
	}
	return r < 0 ? cli_session_error(conn, "rm", r) : CLI_EXIT_OK;
}

/*
 * `airlock cell SESSION [FILE|-]`: `airlock run --session SESSION --cell
 * FILE` (the code from standard input without FILE); `run --cell` takes
 * the run's options (limits; the runtime is the session's interpreter's).
 */
static int
cli_cell(struct cli *cli, int argc, char **argv)
{
	char *run_argv[] = {"run", "--cell", "--session", NULL, NULL, NULL};
	int i;

	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] != '\0') {
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
				cli_usage_cmd(stdout, "cell");
				return CLI_EXIT_OK;
			}
			return cli_usage_error(
				"cell: options go to `airlock run --session ID --cell`");
		}
	if (argc < 2 || argc > 3)
		return cli_usage_error("cell: expected SESSION [FILE|-]");
	if (cli_check_session_id(argv[1]) != 0)
		return CLI_EXIT_USAGE;
	run_argv[3] = argv[1];
	run_argv[4] = argc == 3 ? argv[2] : "-";
	optind = 0;
	return cli_run(cli, 5, run_argv);
}

/* `airlock mcp`: the MCP server (libclient/mcp.c) reads its own options. */
static int
cli_mcp(struct cli *cli, int argc, char **argv)
{
	return mcp_main(cli->socket, argc, argv);
}

/* The commands (their synopses: cli_synopses). */
static const struct cli_command cli_commands[] = {
	/* reading their own options */
	{.name = "run", .main = cli_run},
	{.name = "session", .main = cli_session},
	{.name = "mcp", .main = cli_mcp},
	{.name = "cell", .main = cli_cell},
	/* taking --socket and --json only, then their operands */
	{.name = "ping", .fn = cli_ping},
	{.name = "info", .fn = cli_info},
	{.name = "ps", .fn = cli_ps},
	{.name = "cancel", .fn = cli_cancel, .min_args = 1, .max_args = 1, .connects_itself = true},
	{.name = "put",
	 .fn = cli_put,
	 .min_args = 3,
	 .max_args = 3,
	 .session_first = true,
	 .connects_itself = true},
	{.name = "get", .fn = cli_get, .min_args = 3, .max_args = 3, .session_first = true},
	{.name = "files", .fn = cli_files, .min_args = 1, .max_args = 2, .session_first = true},
	{.name = "rm", .fn = cli_rm, .min_args = 2, .max_args = 2, .session_first = true},
	{.name = NULL},
};

/*
 * Run the command argv[0] of table. One that takes only --socket and --json
 * has them read here, its operands counted and, unless it connects itself,
 * the connection made and freed here; usage names the command whose usage
 * its --help prints (NULL: its own name).
 */
static int
cli_dispatch(struct cli *cli, const struct cli_command *table, const char *usage,
	     const char *unknown, int argc, char **argv)
{
	struct cli_parse parse = {CLI_IN_SIMPLE, "h", usage, NULL, NULL, NULL};
	struct cli_limits lim = {0};
	struct airlock_conn *conn = NULL;
	const struct cli_command *cmd;
	int status;

	if (argc < 1)
		return cli_usage_error(unknown);
	for (cmd = table; cmd->name != NULL; cmd++)
		if (strcmp(argv[0], cmd->name) == 0)
			break;
	if (cmd->name == NULL)
		return cli_usage_error(unknown);
	if (cmd->main != NULL)
		return cmd->main(cli, argc, argv);
	parse.what = cmd->name;
	if (parse.usage == NULL)
		parse.usage = cmd->name;
	status = cli_parse_options(cli, &parse, &lim, argc, argv);
	if (status != 0)
		return status < 0 ? CLI_EXIT_OK : status;
	if (argc - optind > cmd->max_args)
		return cli_usage_error("unexpected argument");
	if (argc - optind < cmd->min_args)
		return cli_usage_error("missing argument");
	if (cmd->session_first) {
		status = cli_check_session_id(argv[optind]);
		if (status != 0)
			return status;
	}
	if (cmd->connects_itself)
		return cmd->fn(cli, NULL, argc - optind, argv + optind);
	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
	status = cmd->fn(cli, conn, argc - optind, argv + optind);
	airlock_conn_free(conn);
	return status;
}

/* --version, the one option of the command line before the command. */
static int
cli_top_option(void *ctx UNUSED, int c, const char *arg UNUSED)
{
	if (c != OPT_VERSION)
		return cli_err(CLI_EXIT_SOFTWARE, "internal", "option %d not handled", c);
	/* The command's release and the library it runs with. */
	printf("airlock %s (libairlock %s)\n", AIRLOCK_VERSION, airlock_library_version());
	return -1;
}

static int cli_main(int argc, char **argv);

/* Run the command; under --json, an error it reported is printed as JSON. */
int
main(int argc, char **argv)
{
	static const char *const codes[][2] = {
		{"1", "not_found"},    {"2", "usage"},	   {"66", "noinput"},
		{"69", "unavailable"}, {"70", "internal"}, {"73", "cantcreat"},
	};
	const char *code = "error";
	char num[16];
	int status = cli_main(argc, argv);
	size_t i;

	if (cli_pending_error[0] != '\0') {
		snprintf(num, sizeof(num), "%d", status);
		for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			if (strcmp(codes[i][0], num) == 0)
				code = codes[i][1];
		cli_json_errors = true;
		cli_err(status, code, "%s", cli_pending_error);
	}
	return status;
}

/* Parse the options before the command and run it. */
static int
cli_main(int argc, char **argv)
{
	const struct cli_parse parse = {CLI_IN_TOP, "+h", NULL, "airlock", cli_top_option, NULL};
	struct cli_limits lim = {0};
	struct cli cli = {0};
	int status;

	status = cli_parse_options(&cli, &parse, &lim, argc, argv);
	if (status != 0)
		return status < 0 ? CLI_EXIT_OK : status;
	if (optind >= argc)
		return cli_usage_error("no command given");
	return cli_dispatch(&cli, cli_commands, NULL, "unknown command", argc - optind,
			    argv + optind);
}
