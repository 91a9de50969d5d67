/* mcp/tool_session.c: session_open and session_close. */
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

/* Remember (add) or forget (!add) a session this server opened. */
void
mcp_session_note(struct mcp *m, const char *sid, bool add)
{
	size_t i;

	for (i = 0; i < MCP_SESSIONS_MAX; i++) {
		if (add && m->sessions[i][0] == '\0') {
			snprintf(m->sessions[i], sizeof(m->sessions[i]), "%s", sid);
			return;
		}
		if (!add && strcmp(m->sessions[i], sid) == 0) {
			m->sessions[i][0] = '\0';
			return;
		}
	}
}

void
mcp_tool_session_open(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"profile", NULL};
	struct airlock_session_opts *opts = NULL;
	char sid[AIRLOCK_SESSION_ID_LEN + 1], why[512], *text;
	const char *profile;
	int r;

	if (mcp_args_known(m, id, "session_open", args, allowed) < 0 ||
	    mcp_arg_string(m, id, "session_open", args, "profile", false, &profile) < 0)
		return;
	if (profile != NULL && !rules_profile_name_valid(profile)) {
		mcp_bad_args(m, id,
			     "session_open: argument 'profile' must be a profile name (1 to 32 of "
			     "a-z, 0-9, '-', '_'; the schema lists them)");
		return;
	}
	if (mcp_tool_connect(m, id) < 0)
		return;
	/* The session's runs use its profile (its network among the rest):
	 * the daemon checks that this user may use it. */
	r = airlock_session_opts_new(&opts);
	if (r == 0 && profile != NULL)
		r = airlock_session_opts_set_profile(opts, profile);
	if (r == 0)
		r = airlock_session_open(m->conn, opts, sid);
	airlock_session_opts_free(opts);
	if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, id, "session_open: %s", why);
		return;
	}
	mcp_session_note(m, sid, true);
	if (asprintf(&text,
		     "session %s opened%s%s. Pass \"session\": \"%s\" to run_python, "
		     "run_shell, write_file, read_file and list_files: files stay in its "
		     "workspace between runs. Close it with session_close when done (it also "
		     "ends after a while without use).",
		     sid, profile != NULL ? " with profile " : "", profile != NULL ? profile : "",
		     sid) < 0)
		mcp_oom(NULL);
	mcp_tool_reply_structured(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false,
				  json_pack("{s:s}", "session", sid));
	free(text);
}

/* Answer a failed session operation: no such session or file, or another error. */
void
mcp_session_fail(struct mcp *m, json_t *id, const char *tool, const char *sid, const char *path,
		 int r)
{
	char why[512];

	mcp_failure(m, r, why, sizeof(why));
	if (r == -ENOENT && path != NULL)
		mcp_tool_fail(m, id, "%s: no such file or session: '%s' in session %s (%s)", tool,
			      path, sid, why);
	else if (r == -ENOENT)
		mcp_tool_fail(m, id,
			      "%s: no such session: %s (it was closed, ended after being idle, or "
			      "never existed)",
			      tool, sid);
	else
		mcp_tool_fail(m, id, "%s: %s", tool, why);
}

void
mcp_tool_session_close(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", NULL};
	const char *sid;
	int r;

	if (mcp_args_known(m, id, "session_close", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "session_close", args, true, &sid) < 0)
		return;
	if (mcp_tool_connect(m, id) < 0)
		return;
	r = airlock_session_close(m->conn, sid);
	if (r < 0) {
		mcp_session_fail(m, id, "session_close", sid, NULL, r);
		return;
	}
	mcp_session_note(m, sid, false);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text("session closed"))), false);
}
