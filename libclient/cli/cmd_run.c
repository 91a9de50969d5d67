/* cli/cmd_run.c: `airlock run`: its options, the request, streaming. */
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
int
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

/* --profile NAME: checked here as the daemon would (set is the request's setter). */
int
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

/* --session ID: the run goes to that session's workspace. */
static int
cli_run_set_session(struct cli_run *run, const char *arg)
{
	run->session = arg;
	if (airlock_run_req_set_session(run->req, arg) < 0) {
		fprintf(stderr,
			"airlock: --session %s: not a session id (see airlock session ls)\n", arg);
		return CLI_EXIT_USAGE;
	}
	run->in_session = true;
	return 0;
}

/* Where an option of run that only records its value (read once all
 * options are) keeps it; NULL for the others. */
static const char **
cli_run_value(struct cli_run *run, int c)
{
	return c == 'c'		    ? &run->code
	       : c == OPT_STDIN	    ? &run->stdin_path
	       : c == OPT_ARTIFACTS ? &run->artifacts
				    : NULL;
}

/* The same for the options without a value: --stream, --force. */
static bool *
cli_run_flag(struct cli_run *run, int c)
{
	return c == OPT_STREAM ? &run->stream : c == OPT_FORCE ? &run->force : NULL;
}

/* Handle one option of `airlock run` of its own; returns 0 or an exit status. */
static int
cli_run_option(void *ctx, int c, const char *arg)
{
	struct cli_run *run = ctx;
	const char **value = cli_run_value(run, c);
	bool *flag = cli_run_flag(run, c);
	int r;

	if (value != NULL) {
		*value = arg;
		return 0;
	}
	if (flag != NULL) {
		*flag = true;
		return 0;
	}
	switch (c) {
	case OPT_LANG:
		run->lang = arg;
		run->lang_set = true;
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
	case OPT_ENV:
		return cli_run_add_env(run, arg);
	case OPT_SESSION:
		return cli_run_set_session(run, arg);
	case OPT_CELL:
		run->cell = true;
		r = airlock_run_req_set_cell(run->req, true);
		return r < 0 ? cli_fail("--cell", r) : 0;
	case OPT_FIGURES:
		/* A cell's figures; the daemon refuses svg for a run. */
		if (strcmp(arg, "png") != 0 && strcmp(arg, "svg") != 0)
			return cli_usage_error("--figures: png or svg");
		r = airlock_run_req_set_figures_svg(run->req, strcmp(arg, "svg") == 0);
		return r < 0 ? cli_fail("--figures", r) : 0;
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

/* Build run's request from the options read and the operands argv[optind..]:
 * the limits, the runtime, the code and its arguments, stdin. Returns 0 or
 * an exit status. */
static int
cli_run_request(struct cli_run *run, int argc, char **argv)
{
	const char *source = NULL;
	bool is_exec;
	size_t l;
	int r, status;

	for (l = 0; l < PROTO_LIMIT_COUNT_; l++) {
		r = run->lim.v[l] != 0 ? airlock_run_req_set_limit(run->req, (enum airlock_limit)l,
								   run->lim.v[l])
				       : 0;
		if (r < 0)
			return cli_fail("limit", r);
	}
	is_exec = strcmp(run->lang, "exec") == 0;
	r = airlock_run_req_set_runtime(run->req, run->lang);
	if (r < 0)
		return cli_usage_error("--lang: bad runtime name");
	if (!is_exec && run->code == NULL) {
		if (optind >= argc)
			return cli_usage_error("run: no code: give -c CODE, FILE or -");
		source = argv[optind++];
		/* A "--" right after FILE separated the code's arguments before
		 * options ended at FILE: still taken as that separator. */
		if (optind < argc && strcmp(argv[optind], "--") == 0)
			optind++;
	}
	if (run->stream && run->tools.n > 0)
		return cli_usage_error("run: --stream and --tool cannot be combined");
	if (run->force && run->artifacts == NULL)
		return cli_usage_error("run: --force needs --artifacts DIR");
	if (is_exec && run->code != NULL)
		return cli_usage_error("run: --lang exec takes an argv after --, not -c");
	if (source != NULL && run->stdin_path != NULL && strcmp(source, "-") == 0 &&
	    strcmp(run->stdin_path, "-") == 0)
		return cli_usage_error("run: code and --stdin cannot both be read from stdin");
	/* Positional arguments: the argv for exec, extra arguments otherwise. */
	for (; optind < argc; optind++) {
		r = airlock_run_req_add_arg(run->req, argv[optind]);
		if (r < 0)
			return r == -ENOMEM
				       ? cli_fail("argv", r)
				       : cli_usage_error("run: too many or too long arguments");
	}
	if (!is_exec) {
		status = cli_run_set_code(run, source);
		if (status != 0)
			return status;
	}
	return run->stdin_path != NULL ? cli_run_set_stdin(run) : 0;
}

/* Run the request on conn as its options ask (with tools, streaming, or
 * plain). Returns 0 with *ret_res, or an exit status. */
static int
cli_run_call(const struct cli *cli, struct airlock_conn *conn, struct cli_run *run,
	     struct airlock_result **ret_res)
{
	int r;

	if (run->tools.n > 0)
		r = airlock_run_tools(conn, run->req, cli_tools_call, &run->tools, ret_res);
	else if (run->cell) { /* Ctrl-C interrupts it, streamed or not */
		r = airlock_run_req_set_stream(run->req, run->stream);
		if (r == 0)
			r = cli_cell_call(conn, run->req,
					  !run->stream ? NULL
					  : cli->json  ? cli_stream_json_chunk
						       : cli_stream_chunk,
					  ret_res);
	} else if (run->stream)
		r = airlock_run_stream(conn, run->req,
				       cli->json ? cli_stream_json_chunk : cli_stream_chunk, NULL,
				       ret_res);
	else
		r = airlock_run(conn, run->req, ret_res);
	if (r == -EINTR && run->cell) {
		fprintf(stderr, "airlock: left; the cell is still being interrupted\n");
		return CLI_EXIT_CANCELLED;
	}
	if (r == -ENOENT && run->in_session) {
		/* not_found with --session: the session (or the profile, said in the message). */
		cli_daemon_error(conn, "run --session", r);
		return CLI_EXIT_NO_SESSION;
	}
	if (r < 0)
		return cli_daemon_error(conn, "run", r);
	return 0;
}

/* `airlock run`: build the request from argv, run it, report. */
int
cli_run(struct cli *cli, int argc, char **argv)
{
	struct cli_run run = {.lang = "python"};
	struct airlock_conn *conn = NULL;
	struct airlock_result *res = NULL;
	/* "+": options end at the first operand (FILE, -, or the program of
	 * exec), as with docker run, bwrap and systemd-run: what follows is the
	 * code's. */
	const struct cli_parse parse = {CLI_IN_RUN, "+c:h", "run", "run", cli_run_option, &run};
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
	status = cli_run_request(&run, argc, argv);
	if (status == 0)
		status = cli_connect(cli, &conn);
	if (status == 0)
		status = cli_run_cell_runtime(conn, &run);
	if (status == 0)
		status = cli_run_call(cli, conn, &run, &res);
	if (status == 0)
		status = cli_run_report(cli, &run, res);
out:
	airlock_result_free(res);
	airlock_conn_free(conn);
	airlock_run_req_free(run.req);
	cli_tools_free(&run.tools);
	return status;
}
