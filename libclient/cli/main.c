/* cli/main.c: the airlock command, a thin user of libairlock (airlock.h only): its
 * options, usage, errors, command table and dispatcher. */
#include "airlock.h"
#include "cli.h"
#include "net.h"
#include "tool.h"
#include "util.h"
#include "compiler.h"
#include "fdio.h"
#include "limit.h"
#include "../mcp/mcp.h"
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

/* Every long option of the command, once, with the commands that take it. */
static const struct cli_option {
	struct option opt;
	unsigned in;
} cli_options[] = {
	{{"socket", required_argument, NULL, OPT_SOCKET}, CLI_IN_EVERY},
	{{"json", no_argument, NULL, OPT_JSON}, CLI_IN_EVERY},
	{{"timeout", required_argument, NULL, OPT_TIMEOUT}, CLI_IN_EVERY},
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
	{{"figures", required_argument, NULL, OPT_FIGURES}, CLI_IN_RUN},
	{{"interpreter", required_argument, NULL, OPT_INTERPRETER}, CLI_IN_SESSION_OPEN},
	{{"background", no_argument, NULL, OPT_BACKGROUND}, CLI_IN_SESSION_OPEN},
	{{"archive", required_argument, NULL, OPT_ARCHIVE}, CLI_IN_SESSION_OPEN},
	{{"workspace", required_argument, NULL, OPT_WORKSPACE}, CLI_IN_SESSION_OPEN},
	{{"idle", required_argument, NULL, OPT_IDLE}, CLI_IN_SESSION_OPEN},
	{{"lifetime", required_argument, NULL, OPT_LIFETIME}, CLI_IN_SESSION_OPEN},
	{{"limit", required_argument, NULL, OPT_LIMIT}, CLI_IN_LIMITS},
	{{"profile", required_argument, NULL, OPT_PROFILE}, CLI_IN_LIMITS},
	{{"mount", required_argument, NULL, OPT_MOUNT}, CLI_IN_RUN},
};

#define CLI_NOPTIONS (sizeof(cli_options) / sizeof(cli_options[0]))

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
		    "               [--interpreter RUNTIME [--background]] [--archive FILE]\n"
		    "               [LIMIT OPTION]...\n"
		    "       airlock [--socket PATH] [--json] session close ID\n"
		    "       airlock [--socket PATH] [--json] session ls\n"
		    "       airlock [--socket PATH] [--json] session ps ID\n"
		    "       airlock [--socket PATH] [--json] session kill ID PID\n"
		    "       airlock [--socket PATH] [--json] session extend ID SECONDS\n"
		    "       airlock [--socket PATH] [--json] session save ID FILE|-\n"},
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
	"  --figures png|svg    the type of a cell's or a python run's matplotlib figures\n"
	"  --mount NAME         one of the daemon's read-only [mount]s the profile\n"
	"                       allows (repeatable)\n"
	"  --stream             print the output as it comes (with --json: JSON lines)\n"
	"  --artifacts DIR      write the files the code left (and its display items,\n"
	"                       a cell's or a python run's figures: display-N.EXT) below DIR\n"
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
void
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
	if (cmd == NULL || strcmp(cmd, "mcp") != 0)
		fputs("--timeout SECONDS (before or after the command): give up on each request\n"
		      "to the daemon after SECONDS, cancelling it there (exit status 124).\n",
		      f);
	fputs("See airlock(1).\n", f);
}

/* The command whose synopsis a usage error prints (NULL: the command line
 * before any command); set as the command line is read. An output setting,
 * like cli_json_errors below. */
static const char *cli_usage_topic;

/*
 * The short usage a usage error prints on stderr: the synopsis of the
 * command being read (or the command line's shape and the commands) and
 * where the whole help is. The whole help (cli_usage_cmd) is only for
 * --help: dozens of lines after an error hide the error.
 */
static void
cli_usage_short(FILE *f)
{
	const struct cli_synopsis *s;
	bool first = true;

	for (s = cli_synopses; cli_usage_topic != NULL && s->cmd != NULL; s++) {
		if (strcmp(cli_usage_topic, s->cmd) != 0)
			continue;
		fprintf(f, "%s%s", first ? "usage: " : "       ", s->text);
		first = false;
	}
	if (first) {
		fputs("usage: airlock [--socket PATH] [--json] COMMAND [ARG]...\ncommands:", f);
		for (s = cli_synopses; s->cmd != NULL; s++)
			fprintf(f, " %s", s->cmd);
		fputs("\nTry 'airlock --help' for more.\n", f);
		return;
	}
	fprintf(f, "Try 'airlock %s --help' for more.\n", cli_usage_topic);
}

/*
 * The command's one output setting, like a log setting: with --json, errors
 * are one JSON object on stdout ({"error": {"code", "message", "status"}})
 * instead of a line on stderr, so that a program reading stdout sees them.
 */
static bool cli_json_errors;

/* Report an error (code: a stable name, such as the daemon's) and return status. */
int __attribute__((format(printf, 3, 4)))
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
void __attribute__((format(printf, 1, 2))) cli_errorf(const char *fmt, ...)
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
int
cli_usage_error(const char *what)
{
	cli_err(CLI_EXIT_USAGE, "usage", "%s", what);
	if (!cli_json_errors)
		cli_usage_short(stderr);
	return CLI_EXIT_USAGE;
}

/* Report an out-of-memory or other internal failure. */
int
cli_fail(const char *what, int err)
{
	return cli_err(CLI_EXIT_SOFTWARE, "internal", "%s: %s", what, strerror(-err));
}

/* Flush stdout: status, or the internal failure's when the output did not go. */
int
cli_flushed(int status)
{
	return fflush(stdout) == EOF ? cli_fail("write", -EIO) : status;
}

/*
 * The head of a listing command, r its call's result: an error reported by
 * err, or under --json the rows printed. cut (NULL: the list is whole) says
 * on stderr, in both forms, what the daemon left out of the list, so that
 * a cut list is never taken for the whole. Returns the exit status, or -1
 * when the caller goes on to print its table.
 */
int
cli_list_head(const struct cli *cli, struct airlock_conn *conn, const char *what, int r,
	      int (*err)(struct airlock_conn *, const char *, int), const void *list, size_t n,
	      json_t *(*row)(const void *list, size_t i), const char *cut)
{
	if (r < 0)
		return err(conn, what, r);
	if (cut != NULL)
		fprintf(stderr, "airlock: %s: %s\n", what, cut);
	if (cli->json)
		return cli_json_print(cli_json_rows(list, n, row));
	return -1;
}

/* Report a failure that the daemon caused or that reaching it caused. */
int
cli_daemon_error(struct airlock_conn *conn, const char *what, int err)
{
	const char *code, *message;

	/* The library gave up at --timeout; a run it was waiting for is
	 * cancelled on the daemon (airlock_conn_set_timeout()). 124, as
	 * timeout(1) exits. */
	if (err == -ETIMEDOUT)
		return cli_err(CLI_EXIT_CANCELLED, "timeout",
			       "%s: no answer within --timeout (the request was cancelled)", what);
	if (conn != NULL && airlock_conn_last_error(conn, &code, &message) == 0 &&
	    err != -ECONNRESET && err != -EBADMSG)
		return cli_err(CLI_EXIT_UNAVAILABLE, code, "%s: daemon refused: %s: %s", what, code,
			       message);
	return cli_err(CLI_EXIT_UNAVAILABLE, "unreachable", "%s: %s", what, strerror(-err));
}

/* Connect, reporting failure with the daemon's reason when it gave one. */
int
cli_connect(const struct cli *cli, struct airlock_conn **ret)
{
	char code[64], message[1100];
	const char *path = cli->socket;
	int r;

	/* --timeout bounds the handshake too (a daemon that accepts and does
	 * not answer, such as a stopped one) and, through the connection's
	 * timeout, every later request; 0 is airlock_connect_error(). */
	r = airlock_connect_timeout(path, cli->timeout_ms, ret, code, sizeof(code), message,
				    sizeof(message));
	if (r == 0)
		return 0;
	if (path == NULL)
		path = getenv("AIRLOCK_SOCKET");
	if (path == NULL || path[0] == '\0')
		path = AIRLOCK_SOCKET_DEFAULT;
	if (code[0] != '\0')
		return cli_err(CLI_EXIT_UNAVAILABLE, code, "connect to %s: daemon refused: %s: %s",
			       path, code, message);
	if (r == -ETIMEDOUT)
		return cli_err(CLI_EXIT_CANCELLED, "timeout",
			       "connect to %s: no answer within --timeout", path);
	return cli_err(CLI_EXIT_UNAVAILABLE, "unreachable", "connect to %s: %s", path,
		       strerror(-r));
}

/* Read all of fd (closed here unless it is 0, stdin) into a new buffer. */
int
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
int
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
double
cli_ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* Print a JSON value on stdout. */
int
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
json_t *
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

/*
 * Parse the value of option opt (given as arg) as a number of this kind:
 * seconds (sent as milliseconds), a size with suffixes, or a count. Returns
 * 0 or the usage status, with a message.
 */
int
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

/* An option the command does not take: the short usage (unless --json) and
 * the usage status. */
static int
cli_bad_option(const struct cli_parse *p)
{
	if (!cli_json_errors)
		cli_usage_short(stderr);
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
int
cli_parse_options(struct cli *cli, const struct cli_parse *p, struct cli_limits *lim, int argc,
		  char **argv)
{
	struct option options[CLI_NOPTIONS + PROTO_LIMIT_COUNT_ + 1];
	int c, status;

	cli_options_for(p->in, options);
	cli_usage_topic = p->usage;
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
		if (c == OPT_TIMEOUT) {
			status = cli_value("--timeout", optarg, optarg, LIMIT_KIND_MS,
					   &cli->timeout_ms);
			if (status != 0)
				return status;
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

/* `airlock mcp`: the MCP server (libclient/mcp/) reads its own options. */
static int
cli_mcp(struct cli *cli, int argc, char **argv)
{
	/* Each of its calls has its own bounds (docs/mcp.md); a client times
	 * out its requests itself. */
	if (cli->timeout_ms != 0)
		return cli_usage_error("mcp: --timeout is not an option of mcp");
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
int
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
	cli_usage_topic = usage != NULL ? usage : cmd->name;
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
