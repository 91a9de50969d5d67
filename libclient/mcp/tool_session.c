/* mcp/tool_session.c: session_open, session_close, session_extend and session_save. */
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

/*
 * Decode standard base64 (padding required, no whitespace) of s into a new
 * buffer: 0 with *ret (malloc) and *ret_len, or -EINVAL for anything else.
 * A strict reader: the text comes from the model.
 */
static int
mcp_base64_decode(const char *s, uint8_t **ret, size_t *ret_len)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), i, o = 0;
	uint8_t *out;

	if (n % 4 != 0)
		return -EINVAL;
	out = malloc(n / 4 * 3 + 1);
	if (out == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i += 4) {
		uint32_t v = 0;
		int k, pad = 0;

		for (k = 0; k < 4; k++) {
			const char *p = s[i + k] != '\0' ? strchr(abc, s[i + k]) : NULL;

			if (s[i + k] == '=' && i + 4 == n && k >= 2 &&
			    (k == 3 || s[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (p == NULL || pad > 0)
				goto bad;
			v = (v << 6) | (uint32_t)(p - abc);
		}
		out[o++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)v;
	}
	*ret = out;
	*ret_len = o;
	return 0;
bad:
	free(out);
	return -EINVAL;
}

void
mcp_tool_session_open(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"profile", "archive", NULL};
	char sid[AIRLOCK_SESSION_ID_LEN + 1], why[512], *text;
	struct airlock_session_opts *opts = NULL;
	const char *profile, *archive64 = NULL;
	uint8_t *archive = NULL;
	size_t len = 0;
	int r;

	if (mcp_args_known(m, id, "session_open", args, allowed) < 0 ||
	    mcp_arg_string(m, id, "session_open", args, "profile", false, &profile) < 0 ||
	    mcp_arg_string(m, id, "session_open", args, "archive", false, &archive64) < 0)
		return;
	if (profile != NULL && !rules_profile_name_valid(profile)) {
		mcp_bad_args(m, id,
			     "session_open: argument 'profile' must be a profile name (1 to 32 of "
			     "a-z, 0-9, '-', '_'; the schema lists them)");
		return;
	}
	if (archive64 != NULL && mcp_base64_decode(archive64, &archive, &len) < 0) {
		mcp_bad_args(m, id,
			     "session_open: argument 'archive' must be base64 (as "
			     "session_save returns a workspace)");
		return;
	}
	if (mcp_tool_connect(m, id) < 0)
		goto out;
	if (airlock_session_opts_new(&opts) < 0)
		mcp_oom(NULL);
	if (archive != NULL && airlock_session_opts_set_archive(opts, archive, len) < 0) {
		mcp_bad_args(m, id, "session_open: argument 'archive' is too large");
		goto out;
	}
	/* The session's runs use its profile (its network among the rest):
	 * the daemon checks that this user may use it. */
	r = profile != NULL ? airlock_session_opts_set_profile(opts, profile) : 0;
	if (r == 0)
		r = airlock_session_open(m->conn, opts, sid);
	if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, id, "session_open: %s", why);
		goto out;
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
out:
	airlock_session_opts_free(opts);
	free(archive);
}

void
mcp_tool_session_extend(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "seconds", NULL};
	const char *sid;
	char text[160];
	uint64_t ms;
	int r;

	if (mcp_args_known(m, id, "session_extend", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "session_extend", args, true, &sid) < 0 ||
	    mcp_arg_number(m, id, "session_extend", args, "seconds", 86400.0 * 365, 1000.0,
			   "seconds", &ms) < 0)
		return;
	if (ms == 0) {
		mcp_bad_args(m, id, "session_extend: argument 'seconds' is required");
		return;
	}
	if (mcp_tool_connect(m, id) < 0)
		return;
	r = airlock_session_extend(m->conn, sid, ms);
	if (r < 0) {
		mcp_session_fail(m, id, "session_extend", sid, NULL, r);
		return;
	}
	snprintf(text, sizeof(text), "session %s now ends %" PRIu64 " s from now", sid,
		 (ms + 999) / 1000);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false);
}

void
mcp_tool_session_save(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", NULL};
	struct airlock_file *file = NULL;
	char uri[96], text[256], *data64 = NULL;
	const char *sid;
	const void *data;
	size_t len;
	int r;

	if (mcp_args_known(m, id, "session_save", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "session_save", args, true, &sid) < 0)
		return;
	if (mcp_tool_connect(m, id) < 0)
		return;
	r = airlock_session_save(m->conn, sid, &file);
	if (r < 0) {
		mcp_session_fail(m, id, "session_save", sid, NULL, r);
		return;
	}
	airlock_file_data(file, &data, &len);
	if (len > MCP_READ_MAX) {
		mcp_tool_fail(m, id,
			      "session_save: the archive has %zu bytes, more than this server "
			      "returns (%u)",
			      len, MCP_READ_MAX);
		goto out;
	}
	data64 = mcp_oom(cli_base64(data, len));
	snprintf(uri, sizeof(uri), "airlock://session/%s/workspace.tar", sid);
	snprintf(text, sizeof(text),
		 "session %s's workspace: a tar archive of %zu bytes (directories and regular "
		 "files; links left out). Pass its base64 as 'archive' to session_open to start "
		 "a new session from it.",
		 sid, len);
	mcp_tool_reply(m, id,
		       mcp_oom(json_pack("[o, {s:s, s:{s:s, s:s, s:s}}]", mcp_block_text(text),
					 "type", "resource", "resource", "uri", uri, "mimeType",
					 "application/x-tar", "blob", data64)),
		       false);
out:
	free(data64);
	airlock_file_free(file);
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
