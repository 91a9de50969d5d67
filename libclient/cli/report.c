/* cli/report.c: a run's result as text or JSON, its artifacts written. */
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

/*
 * Put a file name into obj as "name": as it is when it is UTF-8; else
 * escaped (each byte of an invalid sequence as \xHH, and \ as \\) with the
 * exact bytes beside it in "name_base64". JSON strings must be UTF-8, and a
 * file name on Linux is any bytes but NUL and '/'.
 */
int
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

/* A cell's exception (ename, evalue, traceback), as JSON keys of obj:
 * only when it raised one. 0 or -1. */
static int
cli_cell_error_json(json_t *obj, const struct airlock_result *res)
{
	const char *ename = airlock_result_error_name(res);

	if (ename == NULL)
		return 0;
	return json_object_set_new(obj, "ename", json_string(ename)) < 0 ||
			       json_object_set_new(obj, "evalue",
						   json_string(airlock_result_error_value(res))) <
				       0 ||
			       json_object_set_new(obj, "traceback",
						   json_string(airlock_result_traceback(res))) < 0
		       ? -1
		       : 0;
}

/* A cell's fields of the JSON result: cell, state, restarted, value,
 * display [{mime, size, data_base64}], ename, evalue, traceback; a run's
 * display (a python run's figures, issue 30) when it has any. 0 or -1. */
static int
cli_cell_json(json_t *obj, const struct airlock_result *res)
{
	const char *mime;
	const void *data;
	size_t i, len;
	json_t *disp;

	if (airlock_result_cell(res) == 0 && airlock_result_display_count(res) == 0)
		return 0;
	disp = json_array();
	if (disp == NULL)
		return -1;
	if (cli_cell_keys_json(obj, res) < 0 || cli_cell_error_json(obj, res) < 0) {
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

/* The file name of a cell's display item i of type mime: display-N.EXT. */
static void
cli_display_name(size_t i, const char *mime, char *buf, size_t size)
{
	static const char *const exts[][2] = {
		{"image/png", "png"},	      {"image/svg+xml", "svg"}, {"text/html", "html"},
		{"text/markdown", "md"},      {"text/plain", "txt"},	{"text/latex", "tex"},
		{"application/json", "json"},
	};
	const char *ext = "bin";
	size_t k;

	for (k = 0; k < sizeof(exts) / sizeof(exts[0]); k++)
		if (strcmp(mime, exts[k][0]) == 0)
			ext = exts[k][1];
	snprintf(buf, size, "display-%zu.%s", i + 1, ext);
}

/* Write a cell's display items below dfd as display-N.EXT (a cell's rich
 * outputs are its files for --artifacts); returns 0 or CLI_EXIT_CANTCREAT. */
static int
cli_write_displays(const struct airlock_result *res, int dfd, const char *dir, bool force)
{
	const char *mime;
	const void *data;
	size_t len, i;
	char name[32];
	int r, status = 0;

	for (i = 0; i < airlock_result_display_count(res); i++) {
		if (airlock_result_display_get(res, i, &mime, &data, &len) < 0)
			continue;
		cli_display_name(i, mime, name, sizeof(name));
		r = cli_artifact_write(dfd, name, data, len, force);
		if (r < 0) {
			fprintf(stderr, "airlock: display %s: not written below %s: %s\n", name,
				dir,
				r == -ELOOP    ? "a symlink is in the way"
				: r == -EEXIST ? "a file is there (--force replaces it)"
					       : strerror(-r));
			status = CLI_EXIT_CANTCREAT;
		}
	}
	return status;
}

/* Write every artifact (and a cell's display items) below dir (replacing
 * files with force); returns 0 or CLI_EXIT_CANTCREAT. */
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
	if (cli_write_displays(res, dfd, dir, force) != 0)
		status = CLI_EXIT_CANTCREAT;
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

/* On stderr, each display item that is not text, who ("cell N: " or "")
 * before it: its type and size, and where --artifacts writes it. */
static void
cli_display_notes(const struct airlock_result *res, const struct cli_run *run, const char *who)
{
	const char *mime;
	const void *data;
	size_t i, len;

	for (i = 0; i < airlock_result_display_count(res); i++) {
		char name[32];

		if (airlock_result_display_get(res, i, &mime, &data, &len) < 0 ||
		    strcmp(mime, "text/plain") == 0 || strcmp(mime, "text/markdown") == 0)
			continue;
		cli_display_name(i, mime, name, sizeof(name));
		fprintf(stderr, "airlock: %sdisplay %zu: %s, %zu bytes%s%s%s\n", who, i + 1, mime,
			len, run->artifacts != NULL ? " (" : " (--artifacts DIR writes it as ",
			name, run->artifacts != NULL ? " below --artifacts)" : ")");
	}
}

/* A cell's text display items (display() of a plain object, Markdown),
 * then its value, after its output, as a console shows them; on stderr what
 * is not text: a lost state, the other rich outputs (a python run's
 * figures too: "airlock: display N: ..."). */
static void
cli_cell_report(const struct airlock_result *res, const struct cli_run *run)
{
	const char *value = airlock_result_value(res), *mime;
	const void *data;
	size_t i, len;
	char who[32] = "";

	if (airlock_result_cell(res) == 0) {
		cli_display_notes(res, run, who);
		return;
	}
	snprintf(who, sizeof(who), "cell %" PRIu64 ": ", airlock_result_cell(res));
	for (i = 0; i < airlock_result_display_count(res); i++)
		if (airlock_result_display_get(res, i, &mime, &data, &len) == 0 &&
		    (strcmp(mime, "text/plain") == 0 || strcmp(mime, "text/markdown") == 0)) {
			fwrite(data, 1, len, stdout);
			if (len == 0 || ((const char *)data)[len - 1] != '\n')
				putchar('\n');
		}
	if (value != NULL) {
		printf("%s\n", value);
		fflush(stdout);
	}
	/* Which interpreter ended (docs/design-jupyter.md §5.1): this cell's,
	 * or one before it (the note then says it ran in a new one). */
	if (airlock_result_restarted(res))
		fprintf(stderr,
			"airlock: cell %" PRIu64 ": the interpreter ended during this cell: "
			"its state is lost, the next cell starts in a new one\n",
			airlock_result_cell(res));
	else if (airlock_result_state(res) == AIRLOCK_CELL_LOST)
		fprintf(stderr,
			"airlock: cell %" PRIu64 ": the interpreter was restarted: the state of "
			"earlier cells is lost\n",
			airlock_result_cell(res));
	cli_display_notes(res, run, who);
}

/* Print the result (raw streams or JSON) and return the command's status.
 * A streamed run's output was printed as it came: it is not printed again. */
int
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
		} else if (airlock_result_traceback(res) != NULL) {
			/* A streamed cell's traceback is not on its stderr
			 * (docs/protocol.md, "stream"): printed where it was. */
			fputs(airlock_result_traceback(res), stderr);
		}
		cli_cell_report(res, run);
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
		fprintf(stderr, "airlock: cancelled%s\n",
			airlock_result_state(res) == AIRLOCK_CELL_KEPT
				? "; the interpreter's state is kept"
				: "");
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
