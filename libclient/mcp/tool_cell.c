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

/* Open this server's interpreter session (one per server, lazily). */
static int
mcp_cell_session(struct mcp *m, char *why, size_t len)
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
		r = airlock_session_opts_set_interpreter(opts, m->python_runtime);
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
	mcp_session_note(m, sid, true);
	return 0;
}

void
mcp_tool_run_python_cell(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	char why[512];

	if (mcp_cell_session(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "run_python_cell: cannot start the interpreter: %s", why);
		return;
	}
	mcp_tool_run(m, id, args, token, "run_python_cell", m->python_runtime, "code");
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
