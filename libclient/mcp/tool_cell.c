/* mcp/tool_cell.c: run_python_cell and reset_python, on this server's interpreter session. */
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

/* Open this server's interpreter session (one per server, lazily) with
 * runtime and profile (NULL: the daemon's default). */
static int
mcp_cell_session(struct mcp *m, const char *runtime, const char *profile, char *why, size_t len)
{
	struct airlock_session_opts *opts = NULL;
	char sid[AIRLOCK_SESSION_ID_LEN + 1];
	int r;

	if (m->cell_session[0] != '\0')
		return 0;
	if (mcp_connect(m, why, len) < 0)
		return -1;
	r = airlock_session_opts_new(&opts);
	if (r == 0)
		r = airlock_session_opts_set_interpreter(opts, runtime);
	if (r == 0 && profile != NULL)
		r = airlock_session_opts_set_profile(opts, profile);
	if (r == 0)
		r = airlock_session_opts_set_background(opts, m->cell_background);
	if (r == 0)
		r = airlock_session_open(m->conn, opts, sid);
	airlock_session_opts_free(opts);
	if (r < 0) {
		mcp_failure(m, r, why, len);
		return -1;
	}
	snprintf(m->cell_session, sizeof(m->cell_session), "%s", sid);
	snprintf(m->cell_runtime, sizeof(m->cell_runtime), "%s", runtime);
	snprintf(m->cell_profile, sizeof(m->cell_profile), "%s", profile != NULL ? profile : "");
	mcp_session_note(m, sid, true);
	return 0;
}

void
mcp_tool_run_python_cell(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	const char *runtime = NULL, *profile = NULL, *figures = NULL;
	char why[512];

	if (mcp_arg_string(m, id, "run_python_cell", args, "runtime", false, &runtime) < 0 ||
	    mcp_arg_string(m, id, "run_python_cell", args, "profile", false, &profile) < 0 ||
	    mcp_arg_string(m, id, "run_python_cell", args, "figure_format", false, &figures) < 0)
		return;
	if (figures != NULL && strcmp(figures, "png") != 0 && strcmp(figures, "svg") != 0) {
		mcp_bad_args(
			m, id,
			"run_python_cell: argument 'figure_format' must be \"png\" or \"svg\"");
		return;
	}
	if (runtime == NULL)
		runtime = m->cell_session[0] != '\0' ? m->cell_runtime : m->python_runtime;
	/* The daemon's info says which runtimes are Python (as run_python). */
	(void)mcp_connect(m, why, sizeof(why));
	if (!mcp_python_runtime_valid(m, runtime)) {
		mcp_bad_args(m, id,
			     "run_python_cell: runtime '%s' is not a Python runtime of this daemon "
			     "(python, python-site, ...: those airlock info lists packages for)",
			     runtime);
		return;
	}
	if (profile != NULL && !rules_profile_name_valid(profile)) {
		mcp_bad_args(m, id,
			     "run_python_cell: argument 'profile' must be a profile name (1 to 32 "
			     "of a-z, 0-9, '-', '_'; the schema lists them)");
		return;
	}
	/* The interpreter keeps its runtime and profile (its sandbox is made
	 * with them): another one is asked for by resetting, never by losing
	 * the variables silently. */
	if (m->cell_session[0] != '\0' &&
	    (strcmp(runtime, m->cell_runtime) != 0 ||
	     (profile != NULL && strcmp(profile, m->cell_profile) != 0))) {
		mcp_tool_fail(m, id,
			      "run_python_cell: the interpreter (session %s) runs runtime '%s' "
			      "with profile '%s'; call reset_python first to start one with "
			      "runtime '%s' and profile '%s' (its variables are then lost)",
			      m->cell_session, m->cell_runtime,
			      m->cell_profile[0] != '\0' ? m->cell_profile : "(default)", runtime,
			      profile != NULL ? profile : "(default)");
		return;
	}
	if (mcp_cell_session(m, runtime, profile, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "run_python_cell: cannot start the interpreter: %s", why);
		return;
	}
	mcp_tool_run(m, id, args, token, "run_python_cell", runtime, "code");
}

void
mcp_tool_reset_python(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"background", NULL};
	json_t *bg = json_object_get(args, "background");
	const char *msg;
	char why[512];
	int r = 0;

	if (mcp_args_known(m, id, "reset_python", args, allowed) < 0)
		return;
	if (bg != NULL && !json_is_boolean(bg)) {
		mcp_tool_fail(m, id, "reset_python: argument 'background' must be true or false");
		return;
	}
	if (m->cell_session[0] != '\0') {
		if (mcp_tool_connect(m, id) < 0)
			return;
		r = airlock_session_close(m->conn, m->cell_session);
		if (r < 0 && r != -ENOENT) {
			mcp_failure(m, r, why, sizeof(why));
			mcp_tool_fail(m, id, "reset_python: %s", why);
			return;
		}
		mcp_session_note(m, m->cell_session, false);
		m->cell_session[0] = '\0';
	}
	m->cell_background = json_is_true(bg);
	msg = m->cell_background ? "the Python interpreter was reset: the next run_python_cell "
				   "starts with no variables, and the processes cells start (a "
				   "server, a long job) keep running between cells until the next "
				   "reset"
				 : "the Python interpreter was reset: the next run_python_cell "
				   "starts with no variables";
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(msg))), false);
}

/* The processes run_python_cell's interpreter keeps (reset_python with
 * background), as text and structured content; after a stop, its pid. */
static void
mcp_processes_reply(struct mcp *m, json_t *id, const struct airlock_process_list *l,
		    uint32_t stopped)
{
	json_t *rows = mcp_oom(json_array());
	char *text = NULL, *line;
	size_t i, n = airlock_process_list_count(l);

	if (asprintf(&text, "%s%zu background process%s of the Python interpreter%s",
		     stopped != 0 ? "stopped; " : "", n, n == 1 ? "" : "es", n > 0 ? ":" : "") < 0)
		mcp_oom(NULL);
	for (i = 0; i < n; i++) {
		json_array_append_new(
			rows, mcp_oom(json_pack(
				      "{s:I, s:s, s:I, s:I}", "pid",
				      (json_int_t)airlock_process_list_pid(l, i), "name",
				      airlock_process_list_name(l, i), "cpu_ms",
				      (json_int_t)airlock_process_list_cpu_ms(l, i), "memory_bytes",
				      (json_int_t)airlock_process_list_memory_bytes(l, i))));
		if (asprintf(&line, "%s\npid %" PRIu32 " %s: cpu %.2f s, memory %" PRIu64 " bytes",
			     text, airlock_process_list_pid(l, i), airlock_process_list_name(l, i),
			     (double)airlock_process_list_cpu_ms(l, i) / 1000.0,
			     airlock_process_list_memory_bytes(l, i)) < 0)
			mcp_oom(NULL);
		free(text);
		text = line;
	}
	mcp_tool_reply_structured(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false,
				  json_pack("{s:o}", "processes", rows));
	free(text);
}

/* list_processes and stop_process: run_python_cell's interpreter session's
 * background processes (docs/design-interpreters.md §2.7). */
static void
mcp_processes(struct mcp *m, json_t *id, json_t *args, const char *tool, bool stop)
{
	static const char *const list_args[] = {NULL};
	static const char *const stop_args[] = {"pid", NULL};
	struct airlock_process_list *l = NULL;
	char why[512];
	uint64_t pid = 0;
	int r;

	if (mcp_args_known(m, id, tool, args, stop ? stop_args : list_args) < 0)
		return;
	if (stop) {
		json_t *v = json_object_get(args, "pid");

		if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
		    json_integer_value(v) > (json_int_t)UINT32_MAX) {
			mcp_tool_fail(m, id, "%s: argument 'pid' must be a pid list_processes gave",
				      tool);
			return;
		}
		pid = (uint64_t)json_integer_value(v);
	}
	if (m->cell_session[0] == '\0' || !m->cell_background) {
		mcp_tool_fail(m, id,
			      "%s: no Python interpreter with background processes yet (call "
			      "reset_python with background true, then run_python_cell)",
			      tool);
		return;
	}
	if (mcp_tool_connect(m, id) < 0)
		return;
	r = stop ? airlock_process_stop(m->conn, m->cell_session, (uint32_t)pid) : 0;
	if (r == 0)
		r = airlock_session_ps(m->conn, m->cell_session, &l);
	if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, id, "%s: %s", tool, why);
		return;
	}
	mcp_processes_reply(m, id, l, (uint32_t)pid);
	airlock_process_list_free(l);
}

void
mcp_tool_list_processes(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	(void)token;
	mcp_processes(m, id, args, "list_processes", false);
}

void
mcp_tool_stop_process(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	(void)token;
	mcp_processes(m, id, args, "stop_process", true);
}
