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
	if (!mcp_python_runtime_valid(runtime)) {
		mcp_bad_args(m, id,
			     "run_python_cell: runtime '%s' is not a Python runtime (python, "
			     "python-site, ...)",
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
	static const char *const allowed[] = {NULL};
	char why[512];
	int r = 0;

	if (mcp_args_known(m, id, "reset_python", args, allowed) < 0)
		return;
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
	mcp_tool_reply(m, id,
		       mcp_oom(json_pack("[o]", mcp_block_text("the Python interpreter was reset: "
							       "the next run_python_cell starts "
							       "with no variables"))),
		       false);
}
