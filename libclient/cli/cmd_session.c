/* cli/cmd_session.c: `airlock session open|close|ls|ps|kill|extend|save`. */
#include "airlock.h"
#include "cli.h"
#include "net.h"
#include "tool.h"
#include "util.h"
#include "compiler.h"
#include "fdio.h"
#include "limit.h"
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

static int
cli_session_opts_profile(void *opts, const char *name)
{
	return airlock_session_opts_set_profile(opts, name);
}

/* Report a failed session command: not_found gets its own status. */
int
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
int
cli_check_session_id(const char *id)
{
	if (rules_session_id_str_valid(id))
		return 0;
	cli_errorf("%s: not a session id (see airlock session ls)\n", id);
	return CLI_EXIT_USAGE;
}

/* What `session open` collects: its options, and the archive (read whole;
 * the options point at it until the open returns). */
struct cli_session_open_ctx {
	struct airlock_session_opts *opts;
	char *archive;
	size_t archive_len;
};

/* Apply one option of `session open` of its own to opts; 0 or an exit status. */
static int
cli_session_open_option(void *ctx, int c, const char *arg)
{
	struct cli_session_open_ctx *x = ctx;
	struct airlock_session_opts *opts = x->opts;
	uint64_t v;
	int status;

	switch (c) {
	case OPT_ARCHIVE: {
		int r;

		free(x->archive);
		x->archive = NULL;
		r = cli_read_file(arg, &x->archive, &x->archive_len);
		if (r < 0)
			return cli_err(CLI_EXIT_NOINPUT, "noinput", "--archive %s: %s", arg,
				       strerror(-r));
		r = airlock_session_opts_set_archive(opts, x->archive, x->archive_len);
		return r < 0 ? cli_err(CLI_EXIT_USAGE, "usage", "--archive %s: %s", arg,
				       strerror(-r))
			     : 0;
	}
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
	case OPT_BACKGROUND:
		return airlock_session_opts_set_background(opts, true);
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
	struct cli_session_open_ctx x = {0};
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
	x.opts = opts;
	parse.ctx = &x;
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
	/* The command exits at once: its session must not end with its
	 * connection, only on close, --idle or --lifetime. */
	r = airlock_session_opts_set_detached(opts, true);
	if (r < 0) {
		status = cli_fail("session options", r);
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
	free(x.archive);
	return status;
}

/* `airlock session close ID`. */
static int
cli_session_close(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	int r;

	r = airlock_session_close(conn, args[0]);
	if (r < 0)
		return cli_session_error(conn, "session close", r);
	if (cli->json)
		return cli_json_print(json_pack("{s:s, s:b}", "id", args[0], "closed", 1));
	return CLI_EXIT_OK;
}

/* `airlock session extend ID SECONDS`: the lease ends SECONDS from now. */
static int
cli_session_extend(const struct cli *cli UNUSED, struct airlock_conn *conn, int nargs UNUSED,
		   char **args)
{
	char *end;
	unsigned long long s;
	int r;

	errno = 0;
	s = strtoull(args[1], &end, 10);
	if (errno != 0 || end == args[1] || *end != '\0' || s == 0 || s > UINT64_MAX / 1000 ||
	    args[1][0] == '-' || args[1][0] == '+')
		return cli_err(CLI_EXIT_USAGE, "usage",
			       "session extend: %s: not a number of seconds (1 or more)", args[1]);
	r = airlock_session_extend(conn, args[0], (uint64_t)s * 1000);
	return r < 0 ? cli_session_error(conn, "session extend", r) : CLI_EXIT_OK;
}

/* `airlock session save ID FILE|-`: the workspace as a tar archive. */
static int
cli_session_save(const struct cli *cli UNUSED, struct airlock_conn *conn, int nargs UNUSED,
		 char **args)
{
	struct airlock_file *file = NULL;
	const void *data;
	size_t len;
	int r, status = CLI_EXIT_OK;

	r = airlock_session_save(conn, args[0], &file);
	if (r < 0) {
		status = cli_session_error(conn, "session save", r);
		goto out;
	}
	airlock_file_data(file, &data, &len);
	status = cli_write_out("session save", args[1], data, len);
out:
	airlock_file_free(file);
	return status;
}

/* Session i of `airlock session ls --json` (a list of objects, one per
 * session; `interpreter` only for an interpreter session, `background`
 * only for one opened with it). */
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
	if (o != NULL && airlock_session_list_background(list, i) &&
	    json_object_set_new(o, "background", json_true()) < 0) {
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
	char age[32], idle[32], cut[96];
	size_t i;
	int r, status = CLI_EXIT_OK;

	r = airlock_session_list(conn, &list);
	snprintf(cut, sizeof(cut),
		 "%" PRIu64 " more sessions not listed (the daemon lists %zu at most)",
		 airlock_session_list_more(list), airlock_session_list_count(list));
	status = cli_list_head(cli, conn, "session ls", r, cli_daemon_error, list,
			       airlock_session_list_count(list), cli_session_row,
			       airlock_session_list_more(list) > 0 ? cut : NULL);
	if (status >= 0)
		goto out;
	status = CLI_EXIT_OK;
	printf("%-32s %9s %9s %6s %-7s %-11s %s\n", "ID", "AGE", "IDLE", "RUNS", "STATE",
	       "INTERPRETER", "BACKGROUND");
	for (i = 0; i < airlock_session_list_count(list); i++) {
		const char *interp = airlock_session_list_interpreter(list, i);

		cli_format_elapsed(airlock_session_list_age_ms(list, i), age, sizeof(age));
		cli_format_elapsed(airlock_session_list_idle_ms(list, i), idle, sizeof(idle));
		printf("%-32s %9s %9s %6" PRIu64 " %-7s %-11s %s\n",
		       airlock_session_list_id(list, i), age, idle,
		       airlock_session_list_runs(list, i), airlock_session_list_state(list, i),
		       interp != NULL ? interp : "-",
		       airlock_session_list_background(list, i) ? "yes" : "-");
	}
	status = cli_flushed(status);
out:
	airlock_session_list_free(list);
	return status;
}

/* Process i of `airlock session ps --json`. */
static json_t *
cli_process_row(const void *procs, size_t i)
{
	const struct airlock_process_list *list = procs;

	return json_pack("{s:I, s:s, s:I, s:I}", "pid",
			 (json_int_t)airlock_process_list_pid(list, i), "name",
			 airlock_process_list_name(list, i), "cpu_ms",
			 (json_int_t)airlock_process_list_cpu_ms(list, i), "memory_bytes",
			 (json_int_t)airlock_process_list_memory_bytes(list, i));
}

/* `airlock session ps ID`: a background session's processes, as a table. */
static int
cli_session_ps(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	struct airlock_process_list *list = NULL;
	char cpu[32];
	size_t i;
	int r, status;

	r = airlock_session_ps(conn, args[0], &list);
	status = cli_list_head(cli, conn, "session ps", r, cli_session_error, list,
			       airlock_process_list_count(list), cli_process_row,
			       airlock_process_list_truncated(list) ? "more processes than listed"
								    : NULL);
	if (status >= 0)
		goto out;
	status = CLI_EXIT_OK;
	printf("%7s %-15s %9s %10s\n", "PID", "NAME", "CPU", "MEMORY");
	for (i = 0; i < airlock_process_list_count(list); i++) {
		cli_format_elapsed(airlock_process_list_cpu_ms(list, i), cpu, sizeof(cpu));
		printf("%7" PRIu32 " %-15s %9s %10" PRIu64 "\n", airlock_process_list_pid(list, i),
		       airlock_process_list_name(list, i), cpu,
		       airlock_process_list_memory_bytes(list, i));
	}
	status = cli_flushed(status);
out:
	airlock_process_list_free(list);
	return status;
}

/* `airlock session kill ID PID`: stop one of them. */
static int
cli_session_kill(const struct cli *cli UNUSED, struct airlock_conn *conn, int nargs UNUSED,
		 char **args)
{
	char *end;
	unsigned long pid;
	int r;

	errno = 0;
	pid = strtoul(args[1], &end, 10);
	if (errno != 0 || end == args[1] || *end != '\0' || pid == 0 || pid > UINT32_MAX ||
	    args[1][0] == '-' || args[1][0] == '+')
		return cli_err(CLI_EXIT_USAGE, "usage", "%s: not a pid", args[1]);
	r = airlock_process_stop(conn, args[0], (uint32_t)pid);
	return r < 0 ? cli_session_error(conn, "session kill", r) : CLI_EXIT_OK;
}

/* `airlock session open|close|ls|ps|kill|extend|save`. */
int
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
		{.name = "ps",
		 .fn = cli_session_ps,
		 .min_args = 1,
		 .max_args = 1,
		 .session_first = true},
		{.name = "kill",
		 .fn = cli_session_kill,
		 .min_args = 2,
		 .max_args = 2,
		 .session_first = true},
		{.name = "extend",
		 .fn = cli_session_extend,
		 .min_args = 2,
		 .max_args = 2,
		 .session_first = true},
		{.name = "save",
		 .fn = cli_session_save,
		 .min_args = 2,
		 .max_args = 2,
		 .session_first = true},
		{.name = NULL},
	};

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		cli_usage_cmd(stdout, "session");
		return CLI_EXIT_OK;
	}
	return cli_dispatch(cli, session_commands, "session",
			    "session: expected open, close, ls, ps, kill, extend or save", argc - 1,
			    argv + 1);
}
