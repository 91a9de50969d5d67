/* mcp/tool_file.c: write_file, read_file, list_files, and the session files as
 * resources. */
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

/* Answer a failed operation on the file path: a path the library refused
 * (empty, or too long), else as mcp_session_fail() with missing. */
static void
mcp_file_fail(struct mcp *m, json_t *id, const char *tool, const char *sid, const char *path,
	      const char *missing, int r)
{
	if (r == -EINVAL || r == -ENAMETOOLONG)
		mcp_tool_fail(m, id,
			      "%s: bad path '%s': it must be relative, non-empty and at most 1024 "
			      "bytes",
			      tool, path);
	else
		mcp_session_fail(m, id, tool, sid, missing, r);
}

/* Check a file tool's arguments (content: write_file's; NULL for the
 * others) and connect: 0, or -1 when the call was answered. */
static int
mcp_file_args(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *const *allowed,
	      bool path_required, const char **ret_sid, const char **ret_path,
	      const char **ret_content)
{
	if (mcp_args_known(m, id, tool, args, allowed) < 0 ||
	    mcp_arg_session(m, id, tool, args, true, ret_sid) < 0 ||
	    mcp_arg_string(m, id, tool, args, "path", path_required, ret_path) < 0 ||
	    (ret_content != NULL &&
	     mcp_arg_string(m, id, tool, args, "content", true, ret_content) < 0))
		return -1;
	return mcp_tool_connect(m, id) < 0 ? -1 : 0;
}

void
mcp_tool_write_file(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", "content", NULL};
	const char *sid, *path, *content;
	char *text;
	json_t *v;
	int r;

	if (mcp_file_args(m, id, "write_file", args, allowed, true, &sid, &path, &content) < 0)
		return;
	v = json_object_get(args, "content");
	r = airlock_file_write(m->conn, sid, path, content, json_string_length(v));
	if (r < 0) {
		mcp_file_fail(m, id, "write_file", sid, path, NULL, r);
		return;
	}
	if (asprintf(&text, "wrote %zu bytes to %s", json_string_length(v), path) < 0)
		mcp_oom(NULL);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false);
	free(text);
}

void
mcp_tool_read_file(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", NULL};
	struct airlock_file *file = NULL;
	const char *sid, *path, *image;
	const void *data;
	size_t len;
	char base[128];
	json_t *content;
	int r;

	if (mcp_file_args(m, id, "read_file", args, allowed, true, &sid, &path, NULL) < 0)
		return;
	r = airlock_file_read(m->conn, sid, path, &file);
	if (r < 0) {
		mcp_file_fail(m, id, "read_file", sid, path, path, r);
		return;
	}
	airlock_file_data(file, &data, &len);
	image = mcp_image_type(path, data, len);
	content = mcp_oom(json_array());
	if (!mcp_image_for_model(image) && memchr(data, '\0', len) == NULL) {
		/* Invalid UTF-8 is shown as U+FFFD rather than refused: it is
		 * almost always text with a stray byte. */
		json_array_append_new(
			content,
			mcp_block_output(path, data, len, airlock_file_size(file), m->budget));
	} else {
		struct mcp_budget budget;

		snprintf(base, sizeof(base), "airlock://session/%s/", sid);
		mcp_budget_init(&budget,
				m->budget < MCP_RESOURCE_MAX ? m->budget : MCP_RESOURCE_MAX,
				mcp_since(m, "2025-06-18"), base);
		if (mcp_content_file(content, &budget, path, data, len, airlock_file_size(file),
				     airlock_file_truncated(file)) < 0)
			mcp_oom(NULL);
	}
	airlock_file_free(file);
	mcp_tool_reply(m, id, content, false);
}

void
mcp_tool_list_files(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", NULL};
	struct airlock_file_list *list = NULL;
	const char *sid, *path;
	char *text = NULL, *next;
	json_t *entries;
	size_t i, n, listed = 0;
	int r;

	if (mcp_file_args(m, id, "list_files", args, allowed, false, &sid, &path, NULL) < 0)
		return;
	r = airlock_file_list(m->conn, sid, path, &list);
	if (r == -ENAMETOOLONG) {
		mcp_tool_fail(m, id, "list_files: path longer than 1024 bytes");
		return;
	}
	if (r < 0) {
		mcp_session_fail(m, id, "list_files", sid,
				 path != NULL && path[0] != '\0' ? path : NULL, r);
		return;
	}
	n = airlock_file_list_count(list);
	entries = mcp_oom(json_array());
	if (asprintf(&text, "%zu entr%s in %s:", n, n == 1 ? "y" : "ies",
		     path != NULL && path[0] != '\0' ? path : "the session's workspace") < 0)
		mcp_oom(NULL);
	for (i = 0; i < n; i++) {
		enum airlock_file_kind kind = airlock_file_list_kind(list, i);
		const char *name = airlock_file_list_name(list, i);
		char *clean = mcp_oom(mcp_name_clean(name));

		/* The text and the structured list share the budget, half each. */
		if (strlen(text) + strlen(clean) + 32 > m->budget / 2) {
			free(clean);
			break;
		}
		if (asprintf(&next, "%s\n%-5s %10" PRIu64 "  %s%s", text,
			     airlock_file_kind_name(kind), airlock_file_list_size(list, i), clean,
			     kind == AIRLOCK_FILE_DIR ? "/" : "") < 0)
			mcp_oom(NULL);
		json_array_append_new(
			entries, mcp_oom(json_pack("{s:s, s:s, s:I}", "name", clean, "kind",
						   airlock_file_kind_name(kind), "size",
						   (json_int_t)airlock_file_list_size(list, i))));
		listed++;
		free(clean);
		free(text);
		text = next;
	}
	if (listed < n || airlock_file_list_truncated(list)) {
		if (asprintf(&next, "%s\n[... more entries not listed ...]", text) < 0)
			mcp_oom(NULL);
		free(text);
		text = next;
	}
	mcp_tool_reply_structured(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false,
				  json_pack("{s:o, s:b}", "entries", entries, "truncated",
					    listed < n || airlock_file_list_truncated(list)));
	airlock_file_list_free(list);
	free(text);
}

/* ---- Resources ------------------------------------------------------- */

/*
 * resources/read of "airlock://session/ID/PATH": a file of a live session
 * (the links in results point there). Files of one-shot runs are gone when
 * the result is sent, so results never link to them.
 */
void
mcp_resources_read(struct mcp *m, json_t *id, json_t *params)
{
	static const char prefix[] = "airlock://session/";
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct airlock_file *file = NULL;
	char sid[AIRLOCK_SESSION_ID_LEN + 1], why[512], *path = NULL, *data64 = NULL;
	const char *type;
	const void *data;
	size_t len;
	int r;

	if (uri == NULL) {
		mcp_error(m, id, MCP_ERR_PARAMS, "resources/read: params.uri must be a string");
		return;
	}
	if (strncmp(uri, prefix, sizeof(prefix) - 1) != 0 ||
	    strlen(uri) < sizeof(prefix) - 1 + AIRLOCK_SESSION_ID_LEN + 2 ||
	    uri[sizeof(prefix) - 1 + AIRLOCK_SESSION_ID_LEN] != '/') {
		mcp_send(m, json_pack("{s:O, s:{s:i, s:s, s:{s:s}}}", "id", id, "error", "code",
				      MCP_ERR_NO_RESOURCE, "message",
				      "resource not found: this server serves only "
				      "airlock://session/SESSION/PATH (files of live sessions)",
				      "data", "uri", uri));
		return;
	}
	memcpy(sid, uri + sizeof(prefix) - 1, AIRLOCK_SESSION_ID_LEN);
	sid[AIRLOCK_SESSION_ID_LEN] = '\0';
	path = mcp_uri_decode(uri + sizeof(prefix) + AIRLOCK_SESSION_ID_LEN,
			      strlen(uri + sizeof(prefix) + AIRLOCK_SESSION_ID_LEN));
	if (!rules_session_id_str_valid(sid) || path == NULL) {
		mcp_error(m, id, MCP_ERR_PARAMS, "resources/read: malformed uri '%s'", uri);
		goto out;
	}
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_error(m, id, MCP_ERR_INTERNAL, "resources/read: %s", why);
		goto out;
	}
	r = airlock_file_read(m->conn, sid, path, &file);
	if (r == -ENOENT) {
		mcp_send(m, json_pack("{s:O, s:{s:i, s:s, s:{s:s}}}", "id", id, "error", "code",
				      MCP_ERR_NO_RESOURCE, "message",
				      "resource not found: no such session or file (a session "
				      "ends when closed or idle)",
				      "data", "uri", uri));
		goto out;
	}
	if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_error(m, id, r == -EINVAL || r == -EPROTO ? MCP_ERR_PARAMS : MCP_ERR_INTERNAL,
			  "resources/read: %s", why);
		goto out;
	}
	airlock_file_data(file, &data, &len);
	if (airlock_file_truncated(file) || len > MCP_READ_MAX) {
		mcp_error(m, id, MCP_ERR_INTERNAL,
			  "resources/read: the file has %" PRIu64 " bytes, more than this server "
			  "returns (%u)",
			  airlock_file_size(file), MCP_READ_MAX);
		goto out;
	}
	type = mcp_image_type(path, data, len);
	if (memchr(data, '\0', len) == NULL && cli_utf8_valid(data, len)) {
		json_t *text = mcp_oom(json_stringn(data, len));

		mcp_reply(m, id,
			  json_pack("{s:[{s:s, s:s, s:o}]}", "contents", "uri", uri, "mimeType",
				    type != NULL ? type : "text/plain", "text", text));
	} else {
		data64 = mcp_oom(cli_base64(data, len));
		mcp_reply(m, id,
			  json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
				    type != NULL ? type : "application/octet-stream", "blob",
				    data64));
	}
out:
	airlock_file_free(file);
	free(data64);
	free(path);
}

/* resources/list: nothing is listed (a session's files come and go with its
 * runs; list_files lists them); resources/read serves them. */
void
mcp_resources_list(struct mcp *m, json_t *id, json_t *params)
{
	mcp_reply(m, id, json_pack("{s:[]}", "resources"));
}

void
mcp_resource_templates(struct mcp *m, json_t *id, json_t *params)
{
	mcp_reply(m, id,
		  json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "resourceTemplates", "uriTemplate",
			    "airlock://session/{session}/{+path}", "name", "session-file", "title",
			    "A file of a session's workspace", "description",
			    "A file in the workspace of a live session this user opened "
			    "(session_open); the links in run results point here."));
}
