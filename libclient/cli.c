/* cli.c: the airlock command, a thin user of libairlock (airlock.h only). */
#include "airlock.h"
#include "cli_util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses of the command itself; see airlock(1). */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_NOT_FOUND = 1, /* cancel: no such run of the caller in progress */
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_NOINPUT = 66,	   /* EX_NOINPUT: an input file could not be read */
	CLI_EXIT_UNAVAILABLE = 69, /* EX_UNAVAILABLE: daemon unreachable or refused */
	CLI_EXIT_SOFTWARE = 70,	   /* EX_SOFTWARE: out of memory, internal failure */
	CLI_EXIT_CANTCREAT = 73,   /* EX_CANTCREAT: an artifact could not be written */
	CLI_EXIT_WALL = 120,
	CLI_EXIT_CPU = 121,
	CLI_EXIT_MEMORY = 122,
	CLI_EXIT_SANDBOX = 123,
	CLI_EXIT_CANCELLED = 124,
	CLI_EXIT_SIGNAL_BASE = 128,
};

/* Options common to every subcommand. */
struct cli {
	const char *socket;
	bool json;
};

/* What `airlock run` collected from its command line. */
struct cli_run {
	const char *lang;
	const char *code;	/* -c */
	const char *stdin_path; /* --stdin */
	const char *artifacts;	/* --artifacts */
	struct airlock_run_req *req;
};

/* Print the usage text to f. */
static void
cli_usage(FILE *f)
{
	fputs("usage: airlock [--socket PATH] [--json] ping\n"
	      "       airlock [--socket PATH] [--json] info\n"
	      "       airlock [--socket PATH] [--json] ps\n"
	      "       airlock [--socket PATH] [--json] cancel ID\n"
	      "       airlock [--socket PATH] [--json] run [--lang NAME] [-c CODE | FILE | -]\n"
	      "               [--arg ARG]... [--file NAME=PATH]... [--stdin PATH]\n"
	      "               [--env KEY=VALUE]... [--wall SECONDS] [--cpu SECONDS]\n"
	      "               [--memory SIZE] [--processes N] [--output SIZE]\n"
	      "               [--limit NAME=VALUE]... [--artifacts DIR] [-- ARG...]\n"
	      "See airlock(1).\n",
	      f);
}

/* Report a usage error and return the usage status. */
static int
cli_usage_error(const char *what)
{
	fprintf(stderr, "airlock: %s\n", what);
	cli_usage(stderr);
	return CLI_EXIT_USAGE;
}

/* Report an out-of-memory or other internal failure. */
static int
cli_fail(const char *what, int err)
{
	fprintf(stderr, "airlock: %s: %s\n", what, strerror(-err));
	return CLI_EXIT_SOFTWARE;
}

/* Report a failure that the daemon caused or that reaching it caused. */
static int
cli_daemon_error(struct airlock_conn *conn, const char *what, int err)
{
	const char *code, *message;

	if (conn != NULL && airlock_conn_last_error(conn, &code, &message) == 0 &&
	    err != -ECONNRESET && err != -EBADMSG)
		fprintf(stderr, "airlock: %s: daemon refused: %s: %s\n", what, code, message);
	else
		fprintf(stderr, "airlock: %s: %s\n", what, strerror(-err));
	return CLI_EXIT_UNAVAILABLE;
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
		fprintf(stderr, "airlock: connect to %s: daemon refused: %s: %s\n", path, code,
			message);
	else
		fprintf(stderr, "airlock: connect to %s: %s\n", path, strerror(-r));
	return CLI_EXIT_UNAVAILABLE;
}

/* Read all of path ("-" is stdin) into a new buffer. */
static int
cli_read_file(const char *path, char **ret_buf, size_t *ret_len)
{
	char *buf = NULL, *nbuf;
	size_t len = 0, cap = 0;
	int fd = 0, r;

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
	}
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

/* `airlock ping`: one round trip. */
static int
cli_ping(const struct cli *cli)
{
	struct airlock_conn *conn = NULL;
	struct timespec t0;
	double ms;
	int r, status;

	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = airlock_ping(conn);
	ms = cli_ms_since(&t0);
	if (r < 0) {
		status = cli_daemon_error(conn, "ping", r);
		goto out;
	}
	if (cli->json)
		status = cli_json_print(json_pack("{s:b, s:f}", "pong", 1, "rtt_ms", ms));
	else
		printf("pong %.3f ms\n", ms);
out:
	airlock_conn_free(conn);
	return status;
}

/* `airlock info` as JSON. */
static json_t *
cli_info_json(const struct airlock_info *info)
{
	json_t *obj, *rt, *lim;
	size_t i;
	int l;

	obj = json_pack("{s:s, s:I, s:I}", "daemon", airlock_info_daemon_version(info), "protocol",
			(json_int_t)airlock_info_protocol_version(info), "uid",
			(json_int_t)airlock_info_uid(info));
	rt = json_array();
	lim = json_object();
	if (obj == NULL || rt == NULL || lim == NULL)
		goto fail;
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
	if (json_object_set_new(obj, "runtimes", rt) < 0) {
		rt = NULL;
		goto fail;
	}
	rt = NULL;
	if (json_object_set_new(obj, "limits", lim) < 0) {
		lim = NULL;
		goto fail;
	}
	return obj;
fail:
	json_decref(obj);
	json_decref(rt);
	json_decref(lim);
	return NULL;
}

/* `airlock info`: what the daemon offers this user. */
static int
cli_info(const struct cli *cli)
{
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;
	size_t i;
	int l, r, status;

	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
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
	printf("\n%-18s %20s %20s\n", "limit", "default", "ceiling");
	for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
		enum airlock_limit k = (enum airlock_limit)l;

		printf("%-18s %20" PRIu64 " %20" PRIu64 "\n", airlock_limit_name(k),
		       airlock_info_limit_default(info, k), airlock_info_limit_ceiling(info, k));
	}
out:
	airlock_info_free(info);
	airlock_conn_free(conn);
	return status;
}

/* `airlock ps` as JSON: a list of objects, one per run. */
static json_t *
cli_ps_json(const struct airlock_ps *ps)
{
	json_t *list = json_array();
	size_t i;

	if (list == NULL)
		return NULL;
	for (i = 0; i < airlock_ps_count(ps); i++) {
		json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:I, s:I}", "id",
				      (json_int_t)airlock_ps_run_id(ps, i), "runtime",
				      airlock_ps_runtime(ps, i), "state", airlock_ps_state(ps, i),
				      "elapsed_ms", (json_int_t)airlock_ps_elapsed_ms(ps, i), "pid",
				      (json_int_t)airlock_ps_pid(ps, i), "uid",
				      (json_int_t)airlock_ps_uid(ps, i));

		if (json_array_append_new(list, o) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

/* `airlock ps`: the caller's runs in progress and queued, as a table. */
static int
cli_ps(const struct cli *cli)
{
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;
	struct airlock_ps *ps = NULL;
	char elapsed[32], pid[16];
	bool show_uid = false;
	size_t i, n;
	int r, status;

	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
	r = airlock_ps(conn, &ps);
	if (r < 0) {
		status = cli_daemon_error(conn, "ps", r);
		goto out;
	}
	if (cli->json) {
		status = cli_json_print(cli_ps_json(ps));
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
	airlock_conn_free(conn);
	return status;
}

/* `airlock cancel ID`: cancel one of the caller's runs by its run id (from ps). */
static int
cli_cancel(const struct cli *cli, const char *arg)
{
	struct airlock_conn *conn = NULL;
	uint64_t id;
	int r, status;

	if (cli_parse_count(arg, &id) < 0 || id > UINT32_MAX) {
		fprintf(stderr, "airlock: cancel %s: not a run id (see airlock ps)\n", arg);
		return CLI_EXIT_USAGE;
	}
	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
	r = airlock_cancel_run(conn, (uint32_t)id);
	if (r == -ENOENT) {
		fprintf(stderr, "airlock: cancel %" PRIu64 ": no such run of yours in progress\n",
			id);
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
		fprintf(stderr, "airlock: --file %s: read %s: %s\n", spec, path, strerror(-r));
		status = CLI_EXIT_NOINPUT;
		goto out;
	}
	r = airlock_run_req_add_file(run->req, name, buf, len);
	if (r < 0) {
		fprintf(stderr, "airlock: --file %s: %s\n", spec,
			r == -EINVAL   ? "bad name (empty, absolute or too long)"
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
		fprintf(stderr, "airlock: --env %s: expected KEY=VALUE\n", spec);
		return CLI_EXIT_USAGE;
	}
	key = strndup(spec, (size_t)(eq - spec));
	if (key == NULL)
		return cli_fail("--env", -ENOMEM);
	r = airlock_run_req_set_env(run->req, key, eq + 1);
	free(key);
	if (r < 0) {
		fprintf(stderr, "airlock: --env %s: %s\n", spec, strerror(-r));
		return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
	}
	return 0;
}

/* Parse the value of a limit given by name (times in seconds, sizes with suffixes). */
static int
cli_parse_limit(enum airlock_limit limit, const char *s, uint64_t *ret)
{
	switch (limit) {
	case AIRLOCK_LIMIT_WALL_MS:
	case AIRLOCK_LIMIT_CPU_MS:
		return cli_parse_seconds(s, ret);
	case AIRLOCK_LIMIT_PROCESSES:
	case AIRLOCK_LIMIT_OPEN_FILES:
	case AIRLOCK_LIMIT_ARTIFACTS:
		return cli_parse_count(s, ret);
	default:
		return cli_parse_size(s, ret);
	}
}

/* Set one limit from an option's value; opt names the option in messages. */
static int
cli_run_set_limit(struct cli_run *run, const char *opt, enum airlock_limit limit, const char *s)
{
	uint64_t v;
	int r;

	r = cli_parse_limit(limit, s, &v);
	if (r < 0) {
		fprintf(stderr, "airlock: %s %s: %s\n", opt, s,
			r == -ERANGE ? "out of range (must be more than 0)" : "malformed value");
		return CLI_EXIT_USAGE;
	}
	r = airlock_run_req_set_limit(run->req, limit, v);
	if (r < 0)
		return cli_fail(opt, r);
	return 0;
}

/* Set --limit NAME=VALUE. */
static int
cli_run_limit_spec(struct cli_run *run, const char *spec)
{
	const char *eq = strchr(spec, '=');
	enum airlock_limit limit;
	char *name;
	int r;

	if (eq == NULL) {
		fprintf(stderr, "airlock: --limit %s: expected NAME=VALUE\n", spec);
		return CLI_EXIT_USAGE;
	}
	name = strndup(spec, (size_t)(eq - spec));
	if (name == NULL)
		return cli_fail("--limit", -ENOMEM);
	r = airlock_limit_from_name(name, &limit);
	free(name);
	if (r < 0) {
		fprintf(stderr, "airlock: --limit %s: no such limit (see airlock info)\n", spec);
		return CLI_EXIT_USAGE;
	}
	return cli_run_set_limit(run, "--limit", limit, eq + 1);
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
			fprintf(stderr, "airlock: read code from %s: %s\n",
				strcmp(source, "-") == 0 ? "stdin" : source, strerror(-r));
			return CLI_EXIT_NOINPUT;
		}
		r = airlock_run_req_set_code(run->req, buf, len);
		free(buf);
	}
	if (r < 0) {
		fprintf(stderr, "airlock: code: %s\n", strerror(-r));
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
		fprintf(stderr, "airlock: --stdin %s: %s\n", run->stdin_path, strerror(-r));
		return CLI_EXIT_NOINPUT;
	}
	r = airlock_run_req_set_stdin(run->req, buf, len);
	free(buf);
	if (r < 0) {
		fprintf(stderr, "airlock: --stdin %s: %s\n", run->stdin_path, strerror(-r));
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

/* The result as one JSON object. */
static json_t *
cli_result_json(const struct airlock_result *res)
{
	const void *out, *err;
	size_t olen, elen, i;
	json_t *obj, *arts;
	const char *error = airlock_result_error(res);

	airlock_result_stdout(res, &out, &olen);
	airlock_result_stderr(res, &err, &elen);
	obj = json_pack("{s:s, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:b, s:o}", "outcome",
			airlock_outcome_name(airlock_result_outcome(res)), "exit_code",
			airlock_result_exit_code(res), "signal", airlock_result_signal(res),
			"wall_ms", (json_int_t)airlock_result_wall_ms(res), "cpu_ms",
			(json_int_t)airlock_result_cpu_ms(res), "memory_peak_bytes",
			(json_int_t)airlock_result_memory_peak_bytes(res), "queued_ms",
			(json_int_t)airlock_result_queued_ms(res), "stdout_bytes",
			(json_int_t)airlock_result_stdout_total(res), "stdout_truncated",
			airlock_result_stdout_truncated(res), "stderr_bytes",
			(json_int_t)airlock_result_stderr_total(res), "stderr_truncated",
			airlock_result_stderr_truncated(res), "error",
			error != NULL ? json_string(error) : json_null());
	arts = json_array();
	if (obj == NULL || arts == NULL)
		goto fail;
	if (cli_json_stream(obj, "stdout", out, olen) < 0 ||
	    cli_json_stream(obj, "stderr", err, elen) < 0)
		goto fail;
	for (i = 0; i < airlock_result_artifact_count(res); i++) {
		json_t *a =
			json_pack("{s:s, s:I, s:b}", "name", airlock_result_artifact_name(res, i),
				  "size", (json_int_t)airlock_result_artifact_size(res, i),
				  "truncated", airlock_result_artifact_truncated(res, i));

		if (json_array_append_new(arts, a) < 0)
			goto fail;
	}
	if (json_object_set_new(obj, "artifacts", arts) < 0) {
		arts = NULL;
		goto fail;
	}
	return obj;
fail:
	json_decref(obj);
	json_decref(arts);
	return NULL;
}

/* Write every artifact below dir; returns 0 or CLI_EXIT_CANTCREAT. */
static int
cli_write_artifacts(const struct airlock_result *res, const char *dir)
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
		r = cli_artifact_write(dfd, name, data, len);
		if (r < 0) {
			fprintf(stderr, "airlock: artifact %s: not written below %s: %s\n", name,
				dir,
				r == -EINVAL  ? "unsafe name"
				: r == -ELOOP ? "a symlink is in the way"
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

/* Print the result (raw streams or JSON) and return the command's status. */
static int
cli_run_report(const struct cli *cli, const struct cli_run *run, const struct airlock_result *res)
{
	const void *data;
	size_t len;
	int status, astatus = 0;

	if (cli->json) {
		status = cli_json_print(cli_result_json(res));
		if (status != 0)
			return status;
	} else {
		airlock_result_stdout(res, &data, &len);
		fwrite(data, 1, len, stdout);
		fflush(stdout);
		airlock_result_stderr(res, &data, &len);
		fwrite(data, 1, len, stderr);
		if (airlock_result_stdout_truncated(res))
			fprintf(stderr, "airlock: stdout truncated: %" PRIu64 " bytes written\n",
				airlock_result_stdout_total(res));
		if (airlock_result_stderr_truncated(res))
			fprintf(stderr, "airlock: stderr truncated: %" PRIu64 " bytes written\n",
				airlock_result_stderr_total(res));
	}
	if (run->artifacts != NULL)
		astatus = cli_write_artifacts(res, run->artifacts);
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
		fprintf(stderr, "airlock: killed at the wall-clock limit after %" PRIu64 " ms\n",
			airlock_result_wall_ms(res));
		status = CLI_EXIT_WALL;
		break;
	case AIRLOCK_OUTCOME_CPU_LIMIT:
		fprintf(stderr, "airlock: killed at the CPU-time limit after %" PRIu64 " ms\n",
			airlock_result_cpu_ms(res));
		status = CLI_EXIT_CPU;
		break;
	case AIRLOCK_OUTCOME_MEMORY_LIMIT:
		fprintf(stderr, "airlock: killed at the memory limit\n");
		status = CLI_EXIT_MEMORY;
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

/* The long options of every subcommand that are also global. */
enum {
	OPT_SOCKET = 256,
	OPT_JSON,
	OPT_LANG,
	OPT_ARG,
	OPT_FILE,
	OPT_STDIN,
	OPT_ENV,
	OPT_WALL,
	OPT_CPU,
	OPT_MEMORY,
	OPT_PROCESSES,
	OPT_OUTPUT,
	OPT_LIMIT,
	OPT_ARTIFACTS,
};

static const struct option cli_run_options[] = {
	{"socket", required_argument, NULL, OPT_SOCKET},
	{"json", no_argument, NULL, OPT_JSON},
	{"lang", required_argument, NULL, OPT_LANG},
	{"arg", required_argument, NULL, OPT_ARG},
	{"file", required_argument, NULL, OPT_FILE},
	{"stdin", required_argument, NULL, OPT_STDIN},
	{"env", required_argument, NULL, OPT_ENV},
	{"wall", required_argument, NULL, OPT_WALL},
	{"cpu", required_argument, NULL, OPT_CPU},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"processes", required_argument, NULL, OPT_PROCESSES},
	{"output", required_argument, NULL, OPT_OUTPUT},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"artifacts", required_argument, NULL, OPT_ARTIFACTS},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Handle one option of `airlock run`; returns 0 or an exit status. */
static int
cli_run_option(struct cli *cli, struct cli_run *run, int c, const char *arg)
{
	int r;

	switch (c) {
	case OPT_SOCKET:
		cli->socket = arg;
		return 0;
	case OPT_JSON:
		cli->json = true;
		return 0;
	case OPT_LANG:
		run->lang = arg;
		return 0;
	case 'c':
		run->code = arg;
		return 0;
	case OPT_ARG:
		r = airlock_run_req_add_arg(run->req, arg);
		if (r < 0) {
			fprintf(stderr, "airlock: --arg: %s\n", strerror(-r));
			return r == -ENOMEM ? CLI_EXIT_SOFTWARE : CLI_EXIT_USAGE;
		}
		return 0;
	case OPT_FILE:
		return cli_run_add_file(run, arg);
	case OPT_STDIN:
		run->stdin_path = arg;
		return 0;
	case OPT_ENV:
		return cli_run_add_env(run, arg);
	case OPT_WALL:
		return cli_run_set_limit(run, "--wall", AIRLOCK_LIMIT_WALL_MS, arg);
	case OPT_CPU:
		return cli_run_set_limit(run, "--cpu", AIRLOCK_LIMIT_CPU_MS, arg);
	case OPT_MEMORY:
		return cli_run_set_limit(run, "--memory", AIRLOCK_LIMIT_MEMORY_BYTES, arg);
	case OPT_PROCESSES:
		return cli_run_set_limit(run, "--processes", AIRLOCK_LIMIT_PROCESSES, arg);
	case OPT_OUTPUT:
		return cli_run_set_limit(run, "--output", AIRLOCK_LIMIT_OUTPUT_BYTES, arg);
	case OPT_LIMIT:
		return cli_run_limit_spec(run, arg);
	case OPT_ARTIFACTS:
		run->artifacts = arg;
		return 0;
	case 'h':
		cli_usage(stdout);
		return -1;
	default:
		cli_usage(stderr);
		return CLI_EXIT_USAGE;
	}
}

/* `airlock run`: build the request from argv, run it, report. */
static int
cli_run(struct cli *cli, int argc, char **argv)
{
	struct cli_run run = {.lang = "python"};
	struct airlock_conn *conn = NULL;
	struct airlock_result *res = NULL;
	const char *source = NULL;
	bool is_exec;
	int c, r, status;

	r = airlock_run_req_new(&run.req);
	if (r < 0)
		return cli_fail("run request", r);
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:h", cli_run_options, NULL)) != -1) {
		status = cli_run_option(cli, &run, c, optarg);
		if (status != 0) {
			if (status < 0)
				status = CLI_EXIT_OK;
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
	if (status != 0)
		goto out;
	r = airlock_run(conn, run.req, &res);
	if (r < 0) {
		status = cli_daemon_error(conn, "run", r);
		goto out;
	}
	status = cli_run_report(cli, &run, res);
out:
	airlock_result_free(res);
	airlock_conn_free(conn);
	airlock_run_req_free(run.req);
	return status;
}

static const struct option cli_simple_options[] = {
	{"socket", required_argument, NULL, OPT_SOCKET},
	{"json", no_argument, NULL, OPT_JSON},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/*
 * Parse the options of ping, info, ps and cancel (--socket, --json after the
 * subcommand) and expect nargs operands; *ret_first gets the index of the
 * first operand in argv (permuted by getopt).
 */
static int
cli_simple_options_parse(struct cli *cli, int argc, char **argv, int nargs, int *ret_first)
{
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", cli_simple_options, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			cli->socket = optarg;
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case 'h':
			cli_usage(stdout);
			return -1;
		default:
			cli_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (argc - optind > nargs)
		return cli_usage_error("unexpected argument");
	if (argc - optind < nargs)
		return cli_usage_error("missing argument");
	*ret_first = optind;
	return 0;
}

/* Parse global options and dispatch the subcommand. */
int
main(int argc, char **argv)
{
	struct cli cli = {0};
	const char *cmd;
	int c, first = 0, nargs, status;

	while ((c = getopt_long(argc, argv, "+h", cli_simple_options, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			cli.socket = optarg;
			break;
		case OPT_JSON:
			cli.json = true;
			break;
		case 'h':
			cli_usage(stdout);
			return CLI_EXIT_OK;
		default:
			cli_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return cli_usage_error("no command given");
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	if (strcmp(cmd, "run") == 0)
		return cli_run(&cli, argc, argv);
	if (strcmp(cmd, "ping") != 0 && strcmp(cmd, "info") != 0 && strcmp(cmd, "ps") != 0 &&
	    strcmp(cmd, "cancel") != 0) {
		fprintf(stderr, "airlock: unknown command '%s'\n", cmd);
		cli_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	nargs = strcmp(cmd, "cancel") == 0 ? 1 : 0;
	status = cli_simple_options_parse(&cli, argc, argv, nargs, &first);
	if (status != 0)
		return status < 0 ? CLI_EXIT_OK : status;
	if (strcmp(cmd, "ping") == 0)
		return cli_ping(&cli);
	if (strcmp(cmd, "ps") == 0)
		return cli_ps(&cli);
	if (strcmp(cmd, "cancel") == 0)
		return cli_cancel(&cli, argv[first]);
	return cli_info(&cli);
}
