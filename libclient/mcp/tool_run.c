/* mcp/tool_run.c: run_python and run_shell: the request from the arguments, the
 * answer from the result. */
#include "mcp.h"
#include "airlock.h"
#include "../cli/net.h"
#include "../cli/util.h"
#include "clock.h"
#include "content.h"
#include "server.h"
#include "rules.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

/* ---- Runs: results --------------------------------------------------- */

/* Format a limit of ms milliseconds as seconds ("10 s", "0.5 s"). */
static void
mcp_format_seconds(uint64_t ms, char *buf, size_t len)
{
	snprintf(buf, len, "%g s", (double)ms / 1000.0);
}

/* The limit that fired, in words with its value when known, into buf: the
 * run's own value, else the daemon's default. */
static void
mcp_limit_words(const struct mcp *m, const struct mcp_call *call, enum airlock_outcome outcome,
		char *buf, size_t len)
{
	enum airlock_limit limit = AIRLOCK_LIMIT_MEMORY_BYTES;
	const char *what = "memory";
	char value[48] = "";
	uint64_t v = call->memory_bytes;

	if (outcome == AIRLOCK_OUTCOME_WALL_LIMIT) {
		limit = AIRLOCK_LIMIT_WALL_MS;
		what = "wall-clock";
		v = call->wall_ms;
	} else if (outcome == AIRLOCK_OUTCOME_CPU_LIMIT) {
		limit = AIRLOCK_LIMIT_CPU_MS;
		what = "CPU-time";
		v = call->cpu_ms;
	}
	if (v == 0)
		v = airlock_info_limit_default(m->info, limit);
	if (v != 0 && limit != AIRLOCK_LIMIT_MEMORY_BYTES)
		mcp_format_seconds(v, value, sizeof(value));
	else if (v != 0 && v % (1024 * 1024) == 0)
		snprintf(value, sizeof(value), "%" PRIu64 " MiB", v / (1024 * 1024));
	else if (v != 0)
		snprintf(value, sizeof(value), "%" PRIu64 " bytes", v);
	snprintf(buf, len, "%s limit%s%s exceeded", what, v != 0 ? " of " : "", value);
}

/* What a limit may be raised to, for the model: "(cpu_seconds up to 60)". */
static void
mcp_limit_hint(const struct mcp *m, enum airlock_outcome outcome, char *buf, size_t len)
{
	uint64_t c;

	buf[0] = '\0';
	switch (outcome) {
	case AIRLOCK_OUTCOME_WALL_LIMIT:
		c = airlock_info_limit_ceiling(m->info, AIRLOCK_LIMIT_WALL_MS);
		if (c != 0)
			snprintf(buf, len, " (or raise timeout_seconds, up to %g)",
				 (double)c / 1000);
		break;
	case AIRLOCK_OUTCOME_CPU_LIMIT:
		c = airlock_info_limit_ceiling(m->info, AIRLOCK_LIMIT_CPU_MS);
		if (c != 0)
			snprintf(buf, len, " (or raise cpu_seconds, up to %g)", (double)c / 1000);
		break;
	case AIRLOCK_OUTCOME_MEMORY_LIMIT:
		c = airlock_info_limit_ceiling(m->info, AIRLOCK_LIMIT_MEMORY_BYTES);
		if (c != 0)
			snprintf(buf, len, " (or raise memory_mb, up to %" PRIu64 ")",
				 c / (1024 * 1024));
		break;
	default:
		break;
	}
}

/* Split room bytes between two outputs of need_a and need_b bytes: each gets
 * what it needs when both fit, else the smaller its need up to half. */
static void
mcp_split(size_t room, size_t need_a, size_t need_b, size_t *ret_a, size_t *ret_b)
{
	size_t half = room / 2;

	if (need_a + need_b <= room) {
		*ret_a = need_a;
		*ret_b = room - need_a;
	} else if (need_a <= half) {
		*ret_a = need_a;
		*ret_b = room - need_a;
	} else if (need_b <= half) {
		*ret_b = need_b;
		*ret_a = room - need_b;
	} else {
		*ret_a = half;
		*ret_b = room - half;
	}
}

/* The run's structured result (outputSchema of run_python and run_shell). */
static json_t *
mcp_run_structured(const struct mcp_call *call, const struct airlock_result *res, const char *out,
		   const char *err, bool cut)
{
	enum airlock_outcome outcome = airlock_result_outcome(res);
	json_t *files = mcp_oom(json_array());
	json_t *obj;
	size_t i;

	for (i = 0; i < airlock_result_artifact_count(res); i++) {
		const char *name = airlock_result_artifact_name(res, i);
		char *clean;

		if (name == NULL)
			continue;
		clean = mcp_oom(mcp_name_clean(name));
		json_array_append_new(
			files,
			mcp_oom(json_pack("{s:s, s:I}", "name", clean, "size",
					  (json_int_t)airlock_result_artifact_size(res, i))));
		free(clean);
	}
	obj = mcp_oom(json_pack(
		"{s:s, s:o, s:o, s:f, s:f, s:s, s:s, s:I, s:I, s:b, s:o, s:I, s:I, s:o}", "outcome",
		airlock_outcome_name(outcome) != NULL ? airlock_outcome_name(outcome) : "unknown",
		"exit_code",
		outcome == AIRLOCK_OUTCOME_EXITED ? json_integer(airlock_result_exit_code(res))
						  : json_null(),
		"signal",
		outcome == AIRLOCK_OUTCOME_SIGNALED ? json_integer(airlock_result_signal(res))
						    : json_null(),
		"wall_seconds", (double)airlock_result_wall_ms(res) / 1000.0, "cpu_seconds",
		(double)airlock_result_cpu_ms(res) / 1000.0, "stdout", out, "stderr", err,
		"stdout_bytes", (json_int_t)airlock_result_stdout_total(res), "stderr_bytes",
		(json_int_t)airlock_result_stderr_total(res), "output_cut", cut, "files", files,
		"files_omitted", (json_int_t)airlock_result_artifacts_omitted(res),
		"files_omitted_bytes", (json_int_t)airlock_result_artifacts_omitted_bytes(res),
		"session", call->session[0] != '\0' ? json_string(call->session) : json_null()));
	/* A network = proxy run: what it contacted and what was refused. */
	if (airlock_result_has_network(res) &&
	    json_object_set_new(obj, "network", mcp_oom(cli_network_json(res))) < 0)
		mcp_oom(NULL);
	/* The advisory checks' findings: shown, never a refusal. */
	if (airlock_result_advisory_count(res) > 0) {
		json_t *adv = mcp_oom(json_array());

		for (i = 0; i < airlock_result_advisory_count(res); i++)
			json_array_append_new(
				adv, mcp_oom(json_string(airlock_result_advisory(res, i))));
		json_object_set_new(obj, "advisories", adv);
	}
	if (cli_cell_keys_json(obj, res) < 0)
		mcp_oom(NULL);
	return obj;
}

/* Append a text block "label:\ntext" to content. */
static void
mcp_labelled_block(json_t *content, const char *label, const char *text)
{
	char *block;

	if (asprintf(&block, "%s:\n%s", label, text) < 0)
		mcp_oom(NULL);
	json_array_append_new(content, mcp_block_text(block));
	free(block);
}

/* The most text of one display item (HTML, Markdown, a repr) in an answer. */
#define MCP_DISPLAY_TEXT_MAX 16384

/* A cell's value (text) and rich outputs (images and text, within the budget). */
static void
mcp_cell_content(json_t *content, struct mcp_budget *budget, const struct airlock_result *res)
{
	const char *value = airlock_result_value(res), *mime;
	const void *data;
	size_t i, len;
	char name[32];

	if (value != NULL)
		mcp_labelled_block(content, "value", value);
	for (i = 0; i < airlock_result_display_count(res) && budget->blocks > 0; i++) {
		if (airlock_result_display_get(res, i, &mime, &data, &len) < 0)
			continue;
		/* Images as image content (SVG as an embedded resource, which
		 * mcp_content_file() makes of it); the text ones (HTML, Markdown,
		 * a plain repr) as text labelled with their type. */
		if (strcmp(mime, "image/png") == 0 || strcmp(mime, "image/svg+xml") == 0) {
			snprintf(name, sizeof(name), "figure-%zu.%s", i + 1,
				 mime[6] == 'p' ? "png" : "svg");
			if (mcp_content_file(content, budget, name, data, len, len, false) < 0)
				mcp_oom(NULL);
		} else {
			char *text =
				mcp_oom(mcp_text_cut(data, len, len, MCP_DISPLAY_TEXT_MAX, NULL));
			char label[48];

			snprintf(label, sizeof(label), "display %zu (%s)", i + 1, mime);
			mcp_labelled_block(content, label, text);
			budget->blocks--;
			free(text);
		}
	}
}

/* The status line of a run's answer into status: its outcome, times,
 * whether it printed, its cell. Returns whether the answer is an error. */
static bool
mcp_run_reply_outcome(struct mcp *m, const struct mcp_call *call, const struct airlock_result *res,
		      char *status, size_t size)
{
	enum airlock_outcome outcome = airlock_result_outcome(res);
	const char *oname = airlock_outcome_name(outcome);
	char words[128], hint[96];
	bool is_error = false;
	const void *out, *err;
	size_t out_len, err_len, slen;

	airlock_result_stdout(res, &out, &out_len);
	airlock_result_stderr(res, &err, &err_len);
	switch (outcome) {
	case AIRLOCK_OUTCOME_EXITED:
		snprintf(status, size, "exit code %d", airlock_result_exit_code(res));
		break;
	case AIRLOCK_OUTCOME_SIGNALED:
		snprintf(status, size, "killed by signal %d (%s)", airlock_result_signal(res),
			 strsignal(airlock_result_signal(res)));
		if (airlock_result_signal(res) == SIGKILL) {
			/* Some kernels' OOM kills reach the daemon as a plain SIGKILL. */
			mcp_limit_words(m, call, AIRLOCK_OUTCOME_MEMORY_LIMIT, words,
					sizeof(words));
			slen = strlen(status);
			snprintf(
				status + slen, size - slen,
				"; airlockd reported no limit, but a SIGKILL the code did not send "
				"itself usually means: %s",
				words);
		}
		break;
	case AIRLOCK_OUTCOME_WALL_LIMIT:
	case AIRLOCK_OUTCOME_CPU_LIMIT:
	case AIRLOCK_OUTCOME_MEMORY_LIMIT:
		mcp_limit_words(m, call, outcome, words, sizeof(words));
		mcp_limit_hint(m, outcome, hint, sizeof(hint));
		snprintf(status, size,
			 "%s: the sandbox stopped the code; running the same code again would hit "
			 "the same limit: make it cheaper%s",
			 words, hint);
		is_error = true;
		break;
	case AIRLOCK_OUTCOME_CANCELLED:
		snprintf(status, size,
			 "the run was cancelled (by its owner or a "
			 "stopping airlockd)");
		is_error = true;
		break;
	default:
		if (oname != NULL && strcmp(oname, "process_limit") == 0)
			snprintf(status, size,
				 "process limit reached: the sandbox refused a fork or a thread "
				 "and stopped the code; use fewer processes or threads");
		else
			snprintf(status, size, "the sandbox failed: %s",
				 airlock_result_error(res) != NULL
					 ? airlock_result_error(res)
					 : (oname != NULL ? oname : "unknown outcome"));
		is_error = true;
		break;
	}
	slen = strlen(status);
	snprintf(status + slen, size - slen, " (wall %.2f s, cpu %.2f s)",
		 (double)airlock_result_wall_ms(res) / 1000.0,
		 (double)airlock_result_cpu_ms(res) / 1000.0);
	if (out_len == 0 && err_len == 0 && airlock_result_value(res) == NULL) {
		slen = strlen(status);
		snprintf(status + slen, size - slen, "; no output");
	}
	if (airlock_result_cell(res) != 0) {
		slen = strlen(status);
		/* The session's id: the cell's files are read with read_file and
		 * list_files in it. */
		snprintf(status + slen, size - slen,
			 "; cell %" PRIu64 " of session %s (pass it as \"session\" to "
			 "read_file and list_files for the files the cell wrote), %s",
			 airlock_result_cell(res), call->session,
			 airlock_result_restarted(res)
				 ? "the interpreter ended during this cell: its variables are "
				   "gone, the next cell starts in a new one"
			 : airlock_result_state(res) == AIRLOCK_CELL_KEPT
				 ? "variables kept"
				 : "the interpreter was restarted: variables of earlier cells "
				   "are gone");
	}
	return is_error;
}

/* status, then the names and sizes of the files the run left: a new string. */
static char *
mcp_run_reply_names(const struct mcp_call *call, const struct airlock_result *res,
		    const char *status)
{
	size_t i, count = airlock_result_artifact_count(res);
	char *names, *next, *all;

	if (count == 0)
		return mcp_oom(strdup(status));
	names = mcp_oom(strdup(""));
	for (i = 0; i < count; i++) {
		char *clean;
		const char *name = airlock_result_artifact_name(res, i);

		if (name == NULL)
			continue;
		clean = mcp_oom(mcp_name_clean(name));
		if (asprintf(&next, "%s%s%s (%" PRIu64 " bytes)", names, i > 0 ? ", " : "", clean,
			     airlock_result_artifact_size(res, i)) < 0)
			mcp_oom(NULL);
		free(clean);
		free(names);
		names = next;
		if (strlen(names) > 2000 && i + 1 < count) {
			if (asprintf(&next, "%s, ... %zu more", names, count - i - 1) < 0)
				mcp_oom(NULL);
			free(names);
			names = next;
			break;
		}
	}
	if (asprintf(&all, "%s\nfiles %s: %s", status,
		     call->session[0] != '\0' ? "created or changed in the session"
					      : "the code left",
		     names) < 0)
		mcp_oom(NULL);
	free(names);
	return all;
}

/* The first text block of a run's answer: the status line, the files, the
 * network figures, the advisories, the files left out. A new string. */
static char *
mcp_run_reply_text(struct mcp *m, const struct mcp_call *call, const struct airlock_result *res,
		   bool *ret_error)
{
	char status[768], *all, *next;
	size_t i;

	*ret_error = mcp_run_reply_outcome(m, call, res, status, sizeof(status));
	all = mcp_run_reply_names(call, res, status);
	/* A network = proxy run: what it contacted and what was refused. */
	if (airlock_result_has_network(res)) {
		bool oom;
		char *line = mcp_oom(cli_network_text(res, &oom));

		if (asprintf(&next, "%s\n%s", all, line) < 0)
			mcp_oom(NULL);
		free(all);
		free(line);
		all = next;
	}
	/* The advisory checks' findings (the run went ahead). */
	for (i = 0; i < airlock_result_advisory_count(res); i++) {
		if (asprintf(&next, "%s\nadvisory (not enforced): %s", all,
			     airlock_result_advisory(res, i)) < 0)
			mcp_oom(NULL);
		free(all);
		all = next;
	}
	/* Files past the artifacts limit are never dropped silently. */
	if (airlock_result_artifacts_omitted(res) > 0) {
		if (asprintf(&next,
			     "%s\n%" PRIu64 " more files (%" PRIu64
			     " bytes) were left out: past the artifacts limit (files outside "
			     "dot-directories and the newest are kept)",
			     all, airlock_result_artifacts_omitted(res),
			     airlock_result_artifacts_omitted_bytes(res)) < 0)
			mcp_oom(NULL);
		free(all);
		all = next;
	}
	return all;
}

/* stdout and stderr cut to fit what the budget leaves after a text of
 * text_len bytes (*ret_out, *ret_err: new strings). Returns the room left
 * for the files. */
static size_t
mcp_run_reply_outputs(const struct mcp *m, const struct airlock_result *res, size_t text_len,
		      char **ret_out, char **ret_err, bool *ret_cut)
{
	const void *out, *err;
	size_t out_len, err_len, room, max_out, max_err, used;
	bool out_cut, err_cut;

	airlock_result_stdout(res, &out, &out_len);
	airlock_result_stderr(res, &err, &err_len);
	/* The budget: the status first, then the output, then the files. */
	room = m->budget > text_len + 200 ? m->budget - text_len - 200 : 0;
	/* Needs in output bytes: an invalid byte becomes U+FFFD, three bytes. */
	mcp_split(room, out_len * 3, err_len * 3, &max_out, &max_err);
	*ret_out = mcp_oom(
		mcp_text_cut(out, out_len, airlock_result_stdout_total(res), max_out, &out_cut));
	*ret_err = mcp_oom(
		mcp_text_cut(err, err_len, airlock_result_stderr_total(res), max_err, &err_cut));
	*ret_cut = out_cut || err_cut;
	used = strlen(*ret_out) + strlen(*ret_err);
	return room > used ? room - used : 0;
}

/* The run's files as content blocks into files, within room bytes (the
 * budget left in *budget, which keeps base: the caller's, alive as long as
 * the budget); *all says how many were not attached. */
static void
mcp_run_reply_artifacts(struct mcp *m, const struct mcp_call *call,
			const struct airlock_result *res, json_t *files, size_t room,
			struct mcp_budget *budget, const char *base, char **all)
{
	size_t i, count = airlock_result_artifact_count(res), shown = 0;
	char *next;

	mcp_budget_init(budget, room, mcp_since(m, "2025-06-18"),
			call->session[0] != '\0' ? base : NULL);
	for (i = 0; i < count && budget->blocks > 0; i++) {
		const char *name = airlock_result_artifact_name(res, i);
		const void *data;
		size_t len;

		if (name == NULL || airlock_result_artifact_data(res, i, &data, &len) < 0)
			continue;
		if (mcp_content_file(files, budget, name, data, len,
				     airlock_result_artifact_size(res, i),
				     airlock_result_artifact_truncated(res, i)) < 0)
			mcp_oom(NULL);
		shown++;
	}
	if (shown < count) {
		if (asprintf(&next,
			     "%s (%zu of the %zu files are not attached: at most %d per result)",
			     *all, count - shown, count, MCP_ARTIFACT_BLOCKS_MAX) < 0)
			mcp_oom(NULL);
		free(*all);
		*all = next;
	}
}

/*
 * Answer call with what the run did: a status line, stdout, stderr and its
 * files, within the output budget, and the same as structuredContent. A
 * limit, a sandbox failure or a cancellation is isError.
 */
void
mcp_run_reply(struct mcp *m, const struct mcp_call *call, const struct airlock_result *res)
{
	json_t *content = mcp_oom(json_array()), *files = mcp_oom(json_array());
	struct mcp_budget budget;
	char base[128], *all, *out_text, *err_text;
	const void *out, *err;
	size_t room, out_len, err_len;
	bool is_error, cut;

	/* The artifacts' URIs: the budget points at base until the last block. */
	snprintf(base, sizeof(base), "airlock://session/%s/", call->session);
	all = mcp_run_reply_text(m, call, res, &is_error);
	room = mcp_run_reply_outputs(m, res, strlen(all), &out_text, &err_text, &cut);
	mcp_run_reply_artifacts(m, call, res, files, room, &budget, base, &all);
	json_array_append_new(content, mcp_block_text(all));
	free(all);
	airlock_result_stdout(res, &out, &out_len);
	airlock_result_stderr(res, &err, &err_len);
	if (out_len > 0 || airlock_result_stdout_total(res) > 0)
		mcp_labelled_block(content, "stdout", out_text);
	if (err_len > 0 || airlock_result_stderr_total(res) > 0)
		mcp_labelled_block(content, "stderr", err_text);
	mcp_cell_content(content, &budget, res);
	json_array_extend(content, files);
	json_decref(files);
	mcp_tool_reply_structured(m, call->id, content, is_error,
				  mcp_run_structured(call, res, out_text, err_text, cut));
	free(out_text);
	free(err_text);
}

/* The CPU limit's default (or ceiling) of the run: its profile's when info
 * lists it, else the daemon's. */
static uint64_t
mcp_cpu_limit(const struct mcp *m, const char *profile, bool ceiling)
{
	size_t i;

	for (i = 0; profile != NULL && i < airlock_info_profile_count(m->info); i++)
		if (strcmp(airlock_info_profile_name(m->info, i), profile) == 0)
			return ceiling ? airlock_info_profile_ceiling(m->info, i,
								      AIRLOCK_LIMIT_CPU_MS)
				       : airlock_info_profile_limit(m->info, i,
								    AIRLOCK_LIMIT_CPU_MS);
	return ceiling ? airlock_info_limit_ceiling(m->info, AIRLOCK_LIMIT_CPU_MS)
		       : airlock_info_limit_default(m->info, AIRLOCK_LIMIT_CPU_MS);
}

/* The arguments of a run tool, checked. */
struct mcp_run_args {
	const char *code, *session, *profile, *figures;
	uint64_t wall_ms, cpu_ms, memory_mb;
	json_t *files; /* an object of strings, or NULL */
};

/* Check the arguments of a run tool (key: its code's) into *ret: 0, or -1
 * when they were refused (answered). */
static int
mcp_run_args(struct mcp *m, json_t *id, json_t *args, const char *tool, const char *key,
	     struct mcp_run_args *ret)
{
	const char *allowed[] = {
		key,	   "files",   "timeout_seconds", "cpu_seconds",	  "memory_mb",
		"session", "profile", "runtime",	 "figure_format", NULL};
	const char *const cell_allowed[] = {key,       "timeout_seconds", "cpu_seconds", "profile",
					    "runtime", "figure_format",	  NULL};
	bool cell = strcmp(tool, "run_python_cell") == 0;
	bool python = strcmp(tool, "run_python") == 0;
	const char *name;
	json_t *v;

	/* Only run_python chooses a runtime (mcp_tool_run_python read it)
	 * and, as a cell does, its figures' format. */
	if (!python)
		allowed[7] = NULL;
	if (mcp_args_known(m, id, tool, args, cell ? cell_allowed : allowed) < 0 ||
	    mcp_arg_string(m, id, tool, args, key, true, &ret->code) < 0 ||
	    mcp_arg_session(m, id, tool, args, false, &ret->session) < 0 ||
	    mcp_arg_string(m, id, tool, args, "profile", false, &ret->profile) < 0 ||
	    mcp_arg_number(m, id, tool, args, "timeout_seconds", MCP_TIMEOUT_MAX, 1000.0, "seconds",
			   &ret->wall_ms) < 0 ||
	    mcp_arg_number(m, id, tool, args, "cpu_seconds", MCP_TIMEOUT_MAX, 1000.0, "seconds",
			   &ret->cpu_ms) < 0 ||
	    mcp_arg_number(m, id, tool, args, "memory_mb", 1024.0 * 1024.0, 1.0, "MiB",
			   &ret->memory_mb) < 0)
		return -1;
	/* A cell runs in this server's interpreter session (run_python_cell). */
	if (cell)
		ret->session = m->cell_session;
	/* Checked by mcp_tool_run_python_cell, before its session opened. */
	if ((cell || python) &&
	    (mcp_arg_string(m, id, tool, args, "figure_format", false, &ret->figures) < 0))
		return -1;
	if (python && ret->figures != NULL && strcmp(ret->figures, "png") != 0 &&
	    strcmp(ret->figures, "svg") != 0) {
		mcp_bad_args(m, id,
			     "run_python: argument 'figure_format' must be \"png\" or \"svg\"");
		return -1;
	}
	if (ret->profile != NULL && !rules_profile_name_valid(ret->profile)) {
		mcp_bad_args(m, id,
			     "%s: argument 'profile' must be a profile name (1 to 32 of a-z, 0-9, "
			     "'-', '_'; the schema lists them)",
			     tool);
		return -1;
	}
	ret->files = json_object_get(args, "files");
	if (ret->files != NULL && !json_is_object(ret->files)) {
		mcp_bad_args(m, id,
			     "%s: argument 'files' must be an object of file name to content",
			     tool);
		return -1;
	}
	json_object_foreach(ret->files, name, v)
	{
		if (!json_is_string(v)) {
			mcp_bad_args(m, id, "%s: files: '%s' must be a string", tool, name);
			return -1;
		}
	}
	return 0;
}

/* Build call's request from a: 0, or -1 when it could not be (answered). */
static int
mcp_run_call(struct mcp *m, json_t *id, struct mcp_call *call, const struct mcp_run_args *a,
	     const char *runtime, bool cell)
{
	const char *tool = call->tool, *name;
	json_t *v;
	int r;

	r = airlock_run_req_new(&call->req);
	if (r == 0)
		r = airlock_run_req_set_runtime(call->req, runtime);
	if (r == 0)
		r = airlock_run_req_set_code(call->req, a->code, strlen(a->code));
	if (r == 0 && call->wall_ms != 0)
		r = airlock_run_req_set_limit(call->req, AIRLOCK_LIMIT_WALL_MS, call->wall_ms);
	if (r == 0 && call->cpu_ms != 0)
		r = airlock_run_req_set_limit(call->req, AIRLOCK_LIMIT_CPU_MS, call->cpu_ms);
	if (r == 0 && call->memory_bytes != 0)
		r = airlock_run_req_set_limit(call->req, AIRLOCK_LIMIT_MEMORY_BYTES,
					      call->memory_bytes);
	if (r == 0 && a->profile != NULL)
		r = airlock_run_req_set_profile(call->req, a->profile);
	if (r == 0 && a->session != NULL) {
		r = airlock_run_req_set_session(call->req, a->session);
		snprintf(call->session, sizeof(call->session), "%s", a->session);
	}
	if (r == 0 && cell)
		r = airlock_run_req_set_cell(call->req, true);
	if (r == 0 && a->figures != NULL && strcmp(a->figures, "svg") == 0)
		r = airlock_run_req_set_figures_svg(call->req, true);
	/* A cell's output comes with its result (an interpreter session does
	 * not stream). */
	if (r == 0 && !cell)
		r = airlock_run_req_set_stream(call->req, true);
	if (r < 0) {
		mcp_tool_fail(m, id, "%s: could not build the request: %s", tool, strerror(-r));
		return -1;
	}
	json_object_foreach(a->files, name, v)
	{
		r = airlock_run_req_add_file(call->req, name, json_string_value(v),
					     json_string_length(v));
		if (r < 0) {
			mcp_tool_fail(m, id, "%s: input file '%s' refused: %s", tool, name,
				      r == -EINVAL ? "the name must be a relative path of at most "
						     "255 bytes, without control characters"
				      : r == -EEXIST ? "named twice"
				      : r == -E2BIG
					      ? "too many or too large files (at most 4096, 64 "
						"in a session: write more with write_file)"
					      : strerror(-r));
			return -1;
		}
	}
	return 0;
}

/*
 * run_python and run_shell: check the arguments, build the request and queue
 * the call; mcp_start() sends it and mcp_collect() answers it.
 */
void
mcp_tool_run(struct mcp *m, json_t *id, json_t *args, json_t *token, const char *tool,
	     const char *runtime, const char *key)
{
	bool cell = strcmp(tool, "run_python_cell") == 0;
	struct mcp_run_args a = {0};
	struct mcp_call *call;
	uint64_t ceiling;

	if (mcp_run_args(m, id, args, tool, key, &a) < 0)
		return;
	call = mcp_oom(calloc(1, sizeof(*call)));
	call->tool = tool;
	call->wall_ms = a.wall_ms;
	call->cpu_ms = a.cpu_ms;
	call->memory_bytes = a.memory_mb * 1024 * 1024;
	/* A longer timeout says the code is expected to work longer: let it use
	 * the CPU for as long (within the daemon's, or the profile's, ceiling)
	 * unless told. */
	if (a.cpu_ms == 0 && a.wall_ms != 0 && m->info != NULL &&
	    a.wall_ms > mcp_cpu_limit(m, a.profile, false)) {
		ceiling = mcp_cpu_limit(m, a.profile, true);
		call->cpu_ms = ceiling != 0 && a.wall_ms > ceiling ? ceiling : a.wall_ms;
	}
	if (mcp_run_call(m, id, call, &a, runtime, cell) < 0) {
		mcp_call_free(call);
		return;
	}
	call->id = json_incref(id);
	call->token = json_incref(token);
	call->start_ms = call->last_note_ms = clock_now_ms();
	call->next_tick_ms = call->start_ms + MCP_TICK_MS;
	mcp_call_wait(m, call, false);
}

/* ---- Tools ----------------------------------------------------------- */

/*
 * Is name a Python runtime? run_python never runs another language. The
 * daemon's word when it gave one: info's runtime_packages lists exactly its
 * Python runtimes, known by what they are, not by their names
 * (docs/protocol.md), so a "py312" is one and a "python-sh" running /bin/sh
 * is not. Without it (no info yet, a daemon before 0.5): the name rule,
 * "python" or "python-..." (python-site: the system's site-packages).
 */
bool
mcp_python_runtime_valid(const struct mcp *m, const char *name)
{
	bool said = false;
	size_t i;

	if (!rules_runtime_name_valid(name))
		return false;
	for (i = 0; m != NULL && m->info != NULL && i < airlock_info_runtime_count(m->info); i++) {
		if (airlock_info_runtime_packages(m->info, i) == NULL)
			continue;
		said = true;
		if (strcmp(airlock_info_runtime_name(m->info, i), name) == 0)
			return true;
	}
	return !said && strncmp(name, "python", 6) == 0 && (name[6] == '\0' || name[6] == '-');
}

void
mcp_tool_run_python(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	const char *runtime = m->python_runtime;
	char why[512];

	if (mcp_arg_string(m, id, "run_python", args, "runtime", false, &runtime) < 0)
		return;
	if (runtime == NULL)
		runtime = m->python_runtime;
	/* The daemon's info says which runtimes are Python: connected first (a
	 * failure is mcp_tool_run's to report). */
	(void)mcp_connect(m, why, sizeof(why));
	if (!mcp_python_runtime_valid(m, runtime)) {
		mcp_bad_args(m, id,
			     "run_python: runtime '%s' is not a Python runtime of this daemon "
			     "(python, python-site, ...: those airlock info lists packages for)",
			     runtime);
		return;
	}
	mcp_tool_run(m, id, args, token, "run_python", runtime, "code");
}

void
mcp_tool_run_shell(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	mcp_tool_run(m, id, args, token, "run_shell", "sh", "command");
}
