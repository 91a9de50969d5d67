/*
 * mcp/server.c: `airlock mcp`, a Model Context Protocol server on stdio.
 *
 * One JSON-RPC 2.0 message per line on stdin, one per line on stdout, and
 * nothing else on stdout (logs go to stderr). Every message is handled as
 * soon as it is read. Runs (run_python, run_shell) are submitted on one
 * libairlock connection and proceed concurrently, up to --parallel at once
 * (beyond that they wait here; the daemon's own queue decides the rest), and
 * each is answered when it ends: calls are independent of one another. The
 * other methods and tools are short round trips answered at once, also while
 * runs are in progress. SIGTERM, SIGINT, SIGHUP and a client gone (stdout
 * without a reader, the parent process exited) stop the server at once,
 * cancelling its runs; stdin's end stops it when the requests read have
 * been answered, or 1.5 s after it, cancelling the rest. Either way it
 * closes the sessions it opened. The server uses
 * only the public libairlock API (airlock.h); tool output is shaped for a
 * model by content.c.
 *
 * This file: the loop, the JSON-RPC answers, the daemon connection, the
 * arguments' checks and the methods (tools/call binds a name to the table
 * of tools.c). stdin's lines: input.c; runs in flight: calls.c; the tools:
 * tool_run.c, tool_cell.c, tool_session.c, tool_file.c.
 */
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef AIRLOCK_VERSION
#define AIRLOCK_VERSION "0"
#endif

/* Protocol versions this server speaks, newest first. */
static const char *const mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
					   NULL};

/* Exit on out of memory, as the command does everywhere. */
void *
mcp_oom(void *p)
{
	if (p == NULL) {
		fputs("airlock: mcp: out of memory\n", stderr);
		exit(MCP_EXIT_SOFTWARE);
	}
	return p;
}

/* Log one line to stderr. */
void __attribute__((format(printf, 1, 2))) mcp_log(const char *fmt, ...)
{
	va_list ap;

	fputs("airlock mcp: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Whether the negotiated protocol version is at least v. */
bool
mcp_since(const struct mcp *m, const char *v)
{
	return strcmp(m->version, v) >= 0; /* dates compare as strings */
}

/* ---- Output ---------------------------------------------------------- */

/* Write one message as one line on stdout; takes the reference to msg. */
void
mcp_send(struct mcp *m, json_t *msg)
{
	json_t *out = mcp_oom(json_pack("{s:s}", "jsonrpc", "2.0"));
	char *text;

	if (json_object_update(out, mcp_oom(msg)) < 0)
		mcp_oom(NULL);
	json_decref(msg);
	text = mcp_oom(json_dumps(out, JSON_COMPACT));
	json_decref(out);
	if (!m->out_failed &&
	    (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) == EOF)) {
		mcp_log("stdout: %s; stopping", strerror(errno));
		m->out_failed = true;
	}
	free(text);
}

/* Answer request id with result (reference taken). */
void
mcp_reply(struct mcp *m, json_t *id, json_t *result)
{
	mcp_send(m, json_pack("{s:O, s:o}", "id", id, "result", mcp_oom(result)));
}

/* A new string formatted from fmt and ap (vasprintf); exits when out of memory. */
static char *mcp_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static char *
mcp_vformat(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		mcp_oom(NULL);
	return s;
}

/* Answer request id (NULL: null) with a JSON-RPC error, its message
 * formatted from fmt and ap. */
static void __attribute__((format(printf, 4, 0)))
mcp_verror(struct mcp *m, json_t *id, int code, const char *fmt, va_list ap)
{
	char *message = mcp_vformat(fmt, ap);

	mcp_send(m, json_pack("{s:O?, s:{s:i, s:s}}", "id", id, "error", "code", code, "message",
			      message));
	free(message);
}

/* Answer request id (NULL: null) with a JSON-RPC error. */
void __attribute__((format(printf, 4, 5)))
mcp_error(struct mcp *m, json_t *id, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mcp_verror(m, id, code, fmt, ap);
	va_end(ap);
}

/* Answer tools/call id with content (reference taken), isError and, when
 * not NULL and the client knows it (2025-06-18), structured (reference
 * taken either way). */
void
mcp_tool_reply_structured(struct mcp *m, json_t *id, json_t *content, bool is_error,
			  json_t *structured)
{
	json_t *result = mcp_oom(json_pack("{s:o, s:b}", "content", content, "isError", is_error));

	if (structured != NULL && mcp_since(m, "2025-06-18"))
		json_object_set(result, "structuredContent", structured);
	json_decref(structured);
	mcp_reply(m, id, result);
}

/* Answer tools/call id with content (reference taken) and isError. */
void
mcp_tool_reply(struct mcp *m, json_t *id, json_t *content, bool is_error)
{
	mcp_tool_reply_structured(m, id, content, is_error, NULL);
}

/* Answer tools/call id with one text block, formatted from fmt and ap, and
 * isError true. */
static void __attribute__((format(printf, 3, 0)))
mcp_tool_vfail(struct mcp *m, json_t *id, const char *fmt, va_list ap)
{
	char *text = mcp_vformat(fmt, ap);

	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), true);
	free(text);
}

/* Answer tools/call id with one text block and isError true. */
void __attribute__((format(printf, 3, 4)))
mcp_tool_fail(struct mcp *m, json_t *id, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mcp_tool_vfail(m, id, fmt, ap);
	va_end(ap);
}

/*
 * Answer a tools/call whose arguments are wrong. Since 2025-11-25 that is a
 * tool error (isError), which the client hands to the model so that it can
 * correct the call; older clients get JSON-RPC -32602, as they expect.
 */
void __attribute__((format(printf, 3, 4)))
mcp_bad_args(struct mcp *m, json_t *id, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (mcp_since(m, "2025-11-25"))
		mcp_tool_vfail(m, id, fmt, ap);
	else
		mcp_verror(m, id, MCP_ERR_PARAMS, fmt, ap);
	va_end(ap);
}

/* ---- The daemon ------------------------------------------------------ */

/* The socket path airlock_connect() will use, for messages. */
static const char *
mcp_socket_path(const struct mcp *m)
{
	const char *env = getenv("AIRLOCK_SOCKET");

	if (m->socket != NULL)
		return m->socket;
	return env != NULL && env[0] != '\0' ? env : AIRLOCK_SOCKET_DEFAULT;
}

/* Drop the connection (the next tool call connects again). */
void
mcp_disconnect(struct mcp *m)
{
	airlock_info_free(m->info);
	m->info = NULL;
	airlock_conn_free(m->conn);
	m->conn = NULL;
}

/* Connect unless connected. Returns 0, or -errno with why in buf. */
int
mcp_connect(struct mcp *m, char *buf, size_t len)
{
	char code[64], message[256];
	int r;

	if (m->conn != NULL) {
		r = airlock_conn_check(m->conn);
		if (r == 0)
			return 0;
		/* airlockd restarted, or the connection broke: the runs in flight
		 * on it are lost; connect again. */
		mcp_conn_lost(m, r);
	}
	/* The handshake is bounded: a daemon that accepts and never answers
	 * must not hang every call. */
	r = airlock_connect_timeout(m->socket, 10000, &m->conn, code, sizeof(code), message,
				    sizeof(message));
	if (r < 0) {
		if (code[0] != '\0')
			snprintf(buf, len, "airlockd at %s refused the connection: %s: %s",
				 mcp_socket_path(m), code, message);
		else
			snprintf(buf, len,
				 "cannot reach airlockd at %s: %s (is airlockd running, and may "
				 "this user connect to its socket?)",
				 mcp_socket_path(m), strerror(-r));
		mcp_log("%s", buf);
		return r;
	}
	/* Blocking calls other than runs are short; a run is never blocking. */
	airlock_conn_set_timeout(m->conn, 60000);
	/* For defaults and ceilings in messages: its failure costs nothing. */
	if (airlock_info(m->conn, &m->info) < 0)
		m->info = NULL;
	return 0;
}

/*
 * Describe the failure r of a call on the connection into buf. A daemon
 * refusal leaves the connection usable; whether anything else broke it is
 * asked without a round trip (airlock_conn_check): the collector then fails
 * the runs in flight on it, and the next call connects again.
 */
void
mcp_failure(struct mcp *m, int r, char *buf, size_t len)
{
	const char *code = NULL, *message = NULL;
	bool refusal = r == -EACCES || r == -EBUSY || r == -ENOENT || r == -E2BIG ||
		       r == -EPROTONOSUPPORT || r == -EPROTO;

	if (refusal && airlock_conn_last_error(m->conn, &code, &message) == 0)
		snprintf(buf, len, "airlockd refused: %s: %s", code, message);
	else
		snprintf(buf, len, "%s", strerror(-r));
	if (m->conn != NULL && airlock_conn_check(m->conn) < 0) {
		mcp_log("connection to airlockd lost: %s", strerror(-r));
		snprintf(buf + strlen(buf), len - strlen(buf),
			 " (the connection to airlockd was lost; the next call reconnects)");
		if (m->calls == NULL)
			mcp_disconnect(m);
	}
}

/* Connect for tools/call id, or answer it with why not and return -1. */
int
mcp_tool_connect(struct mcp *m, json_t *id)
{
	char why[512];

	if (mcp_connect(m, why, sizeof(why)) == 0)
		return 0;
	mcp_tool_fail(m, id, "%s", why);
	return -1;
}

/* ---- Arguments ------------------------------------------------------- */

/* Check that args has no key outside allowed (NULL-terminated); else answer
 * and return -1. */
int
mcp_args_known(struct mcp *m, json_t *id, const char *tool, json_t *args,
	       const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v)
	{
		size_t i;

		for (i = 0; allowed[i] != NULL && strcmp(allowed[i], key) != 0; i++)
			;
		if (allowed[i] == NULL) {
			mcp_bad_args(m, id, "%s: unknown argument '%s'", tool, key);
			return -1;
		}
	}
	return 0;
}

/* The string argument key of args into *ret (NULL when absent and not
 * required); on a missing or mistyped one, answer and return -1. */
int
mcp_arg_string(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *key,
	       bool required, const char **ret)
{
	json_t *v = json_object_get(args, key);

	*ret = NULL;
	if (v == NULL && !required)
		return 0;
	if (!json_is_string(v)) {
		mcp_bad_args(m, id, "%s: argument '%s' %s", tool, key,
			     v == NULL ? "is required" : "must be a string");
		return -1;
	}
	*ret = json_string_value(v);
	return 0;
}

/* The session argument (required or not), checked for the shape of an id. */
int
mcp_arg_session(struct mcp *m, json_t *id, const char *tool, json_t *args, bool required,
		const char **ret)
{
	const char *s;

	if (mcp_arg_string(m, id, tool, args, "session", required, &s) < 0)
		return -1;
	if (s != NULL && !rules_session_id_str_valid(s)) {
		mcp_bad_args(m, id,
			     "%s: argument 'session' must be a session id as session_open "
			     "returned it (32 lowercase hex characters)",
			     tool);
		return -1;
	}
	*ret = s;
	return 0;
}

/* A number argument above 0 and at most max, scaled by unit into *ret (0
 * when absent); on a bad one, answer and return -1. */
int
mcp_arg_number(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *key,
	       double max, double unit, const char *what, uint64_t *ret)
{
	json_t *v = json_object_get(args, key);
	double x;

	*ret = 0;
	if (v == NULL)
		return 0;
	x = json_is_number(v) ? json_number_value(v) : -1;
	if (!(x > 0 && x <= max)) {
		mcp_bad_args(m, id,
			     "%s: argument '%s' must be a number of %s above 0 and at most %g",
			     tool, key, what, max);
		return -1;
	}
	*ret = (uint64_t)(x * unit + 0.999);
	return 0;
}

/* ---- Methods --------------------------------------------------------- */

static void
mcp_initialize(struct mcp *m, json_t *id, json_t *params)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	size_t i;

	if (m->initialized) {
		mcp_error(m, id, MCP_ERR_INVALID, "initialize: already initialized");
		return;
	}
	if (asked == NULL) {
		mcp_error(m, id, MCP_ERR_PARAMS,
			  "initialize: params.protocolVersion must be a "
			  "string");
		return;
	}
	m->version = mcp_versions[0];
	for (i = 0; mcp_versions[i] != NULL; i++)
		if (strcmp(asked, mcp_versions[i]) == 0)
			m->version = mcp_versions[i];
	m->initialized = true;
	mcp_reply(
		m, id,
		json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
			  m->version, "capabilities", "tools", "listChanged", false, "resources",
			  "serverInfo", "name", "airlock", "title", "Airlock sandbox", "version",
			  AIRLOCK_VERSION, "instructions",
			  "Runs code in single-use airlockd sandboxes without network: run_python "
			  "and run_shell for runs (several calls run in parallel); session_open, "
			  "write_file, read_file, list_files and session_close for a workspace "
			  "that persists between runs. Runs longer than about a minute need a "
			  "client that resets its timeout on progress notifications."));
}

static void
mcp_initialized(struct mcp *m, json_t *id, json_t *params)
{
}

static void
mcp_ping(struct mcp *m, json_t *id, json_t *params)
{
	mcp_reply(m, id, json_object());
}

static void
mcp_notify_cancelled(struct mcp *m, json_t *id, json_t *params)
{
	mcp_cancelled(m, params);
}

static void
mcp_tools_call(struct mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
	json_t *empty = NULL;
	size_t i;

	if (name == NULL) {
		mcp_error(m, id, MCP_ERR_PARAMS, "tools/call: params.name must be a string");
		return;
	}
	for (i = 0; mcp_tools[i].name != NULL && strcmp(mcp_tools[i].name, name) != 0; i++)
		;
	if (mcp_tools[i].name == NULL) {
		mcp_error(m, id, MCP_ERR_PARAMS, "tools/call: unknown tool '%s'", name);
		return;
	}
	if (args != NULL && !json_is_object(args)) {
		mcp_error(m, id, MCP_ERR_PARAMS, "tools/call: params.arguments must be an object");
		return;
	}
	if (token != NULL && !json_is_string(token) && !json_is_integer(token))
		token = NULL;
	if (args == NULL)
		args = empty = mcp_oom(json_object());
	mcp_tools[i].fn(m, id, args, token);
	json_decref(empty);
}

/* The methods, and whether each is a request (has an id) and needs initialize. */
static const struct mcp_method {
	const char *name;
	bool request;
	bool needs_init;
	void (*fn)(struct mcp *m, json_t *id, json_t *params);
} mcp_methods[] = {
	{"initialize", true, false, mcp_initialize},
	{"ping", true, false, mcp_ping},
	{"tools/list", true, true, mcp_tools_list},
	{"tools/call", true, true, mcp_tools_call},
	{"resources/list", true, true, mcp_resources_list},
	{"resources/templates/list", true, true, mcp_resource_templates},
	{"resources/read", true, true, mcp_resources_read},
	{"notifications/initialized", false, false, mcp_initialized},
	{"notifications/cancelled", false, false, mcp_notify_cancelled},
	{NULL, false, false, NULL},
};

/* Handle one message read from stdin. */
static void
mcp_handle(struct mcp *m, json_t *msg)
{
	json_t *id, *params, *version;
	const char *method;
	size_t i;

	if (!json_is_object(msg)) {
		mcp_error(m, NULL, MCP_ERR_INVALID,
			  json_is_array(msg) ? "invalid request: batches are not supported"
					     : "invalid request: a message must be a JSON object");
		return;
	}
	id = json_object_get(msg, "id");
	params = json_object_get(msg, "params");
	version = json_object_get(msg, "jsonrpc");
	method = json_string_value(json_object_get(msg, "method"));
	if (id != NULL && !json_is_string(id) && !json_is_integer(id)) {
		mcp_error(m, NULL, MCP_ERR_INVALID,
			  "invalid request: id must be a string or an integer");
		return;
	}
	if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
		mcp_error(m, id, MCP_ERR_INVALID, "invalid request: jsonrpc must be \"2.0\"");
		return;
	}
	if (json_object_get(msg, "method") == NULL &&
	    (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL))
		return; /* a response: this server sends no requests */
	if (method == NULL) {
		mcp_error(m, id, MCP_ERR_INVALID, "invalid request: method must be a string");
		return;
	}
	for (i = 0; mcp_methods[i].name != NULL && strcmp(mcp_methods[i].name, method) != 0; i++)
		;
	if (id == NULL && (mcp_methods[i].name == NULL || mcp_methods[i].request))
		return; /* notifications are never answered */
	if (mcp_methods[i].name == NULL) {
		mcp_error(m, id, MCP_ERR_METHOD, "method not found: %s", method);
		return;
	}
	if (id != NULL && !mcp_methods[i].request) {
		mcp_error(m, id, MCP_ERR_INVALID, "invalid request: %s is a notification", method);
		return;
	}
	if (params != NULL && !json_is_object(params)) {
		if (id != NULL)
			mcp_error(m, id, MCP_ERR_PARAMS, "%s: params must be an object", method);
		return;
	}
	if (mcp_methods[i].needs_init && !m->initialized) {
		mcp_error(m, id, MCP_ERR_NOT_INITIALIZED,
			  "server not initialized: send initialize first");
		return;
	}
	mcp_methods[i].fn(m, id, params);
}

/* ---- Start and end ---------------------------------------------------- */

/* Close the sessions this server opened and did not close (connecting
 * again if needed, within a short time: the client may kill us soon). */
static void
mcp_close_sessions(struct mcp *m)
{
	char code[64], message[256];
	size_t i;
	int r;

	for (i = 0; i < MCP_SESSIONS_MAX; i++) {
		if (m->sessions[i][0] == '\0')
			continue;
		if (m->conn != NULL && airlock_conn_check(m->conn) < 0)
			mcp_disconnect(m);
		if (m->conn == NULL &&
		    airlock_connect_timeout(m->socket, MCP_CLOSE_MS, &m->conn, code, sizeof(code),
					    message, sizeof(message)) < 0) {
			mcp_log("cannot close the sessions at exit: airlockd unreachable");
			return;
		}
		airlock_conn_set_timeout(m->conn, MCP_CLOSE_MS);
		r = airlock_session_close(m->conn, m->sessions[i]);
		if (r == 0)
			mcp_log("closed session %s at exit", m->sessions[i]);
		else if (r != -ENOENT)
			mcp_log("closing session %s at exit: %s", m->sessions[i], strerror(-r));
		m->sessions[i][0] = '\0';
	}
}

/* Print the usage to f. */
static void
mcp_usage(FILE *f)
{
	fprintf(f,
		"usage: airlock [--socket PATH] mcp [--parallel N] [--output-budget BYTES]\n"
		"                                   [--python-runtime NAME]\n"
		"Serves the Model Context Protocol on stdin and stdout: tools that run code\n"
		"in airlockd's sandboxes. See airlock(1) and docs/mcp.md.\n"
		"  --parallel N           runs in flight at once (default %d)\n"
		"  --output-budget BYTES  text in one tool result (default %d)\n"
		"  --python-runtime NAME  run_python's runtime when a call names none\n"
		"                         (default python; python-site: system packages)\n",
		MCP_PARALLEL_DEFAULT, MCP_BUDGET_DEFAULT);
}

/* Parse the subcommand's options into m; returns -1 and sets *status to stop. */
static int
mcp_options(struct mcp *m, int argc, char **argv, int *status)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			mcp_usage(stdout);
			*status = 0;
			return -1;
		}
		if (strcmp(a, "--parallel") == 0 && v != NULL && cli_parse_count(v, &n) == 0 &&
		    n <= MCP_PARALLEL_MAX) {
			m->parallel = (unsigned)n;
			i++;
		} else if (strcmp(a, "--python-runtime") == 0 && v != NULL &&
			   rules_runtime_name_valid(v)) {
			/* A runtime name; whether the daemon's is a Python, each
			 * run_python asks (mcp_python_runtime_valid). */
			m->python_runtime = v;
			i++;
		} else if (strcmp(a, "--output-budget") == 0 && v != NULL &&
			   cli_parse_size(v, &n) == 0 && n >= MCP_BUDGET_MIN &&
			   n <= MCP_BUDGET_MAX) {
			m->budget = (size_t)n;
			i++;
		} else {
			fprintf(stderr, "airlock mcp: bad option or value: %s%s%s\n", a,
				v != NULL ? " " : "", v != NULL ? v : "");
			mcp_usage(stderr);
			*status = MCP_EXIT_USAGE;
			return -1;
		}
	}
	return 0;
}

/* Handle the lines read so far, in order, while stdout still takes answers. */
static void
mcp_dispatch(struct mcp *m)
{
	struct mcp_line *line;

	while (!m->out_failed && (line = mcp_take(m)) != NULL) {
		if (line->msg != NULL)
			mcp_handle(m, line->msg);
		else if (line->id != NULL)
			mcp_error(m, line->id, MCP_ERR_INVALID, "invalid request: %s", line->error);
		else
			mcp_error(m, NULL, MCP_ERR_PARSE, "parse error: %s", line->error);
		mcp_line_free(line);
	}
}

/* ---- The client's presence ------------------------------------------- */

/*
 * Watch the client: the parent process that started us. A client killed
 * with SIGKILL cannot close anything in order; what it leaves is a stdout
 * without a reader and, when it was our parent, its exit. A pidfd reports
 * the exit at once (Linux 5.3); without one, getppid() is compared on every
 * pass of the loop, which then wakes at least every MCP_WATCH_MS. A parent
 * of 1 (started by init, or reparented already) is not watched.
 */
static void
mcp_watch_open(struct mcp *m)
{
	m->parentfd = -1;
	m->ppid = getppid();
	if (m->ppid <= 1) {
		m->ppid = 0;
		return;
	}
#ifdef SYS_pidfd_open
	/* A pidfd is close-on-exec from birth. */
	m->parentfd = (int)syscall(SYS_pidfd_open, m->ppid, 0);
#endif
	/* The parent may have exited between getppid() and the pidfd. */
	if (getppid() != m->ppid)
		m->gone = "its parent process exited";
}

/*
 * The milliseconds the loop may wait, at most, for stdin's end: stdin's end
 * is the MCP client's request to shut down (the stdio transport; clients
 * send SIGTERM a few seconds later), so the calls in flight are given
 * MCP_EOF_GRACE_MS to be answered, which a short run (the hand-typed
 * `printf ... | airlock mcp`) is; then the client counts as gone and the
 * rest is cancelled. -1: no bound; 0: the grace is over.
 */
static int
mcp_eof_due(struct mcp *m, uint64_t now)
{
	if (!m->in_eof || (m->calls == NULL && m->waiting == NULL))
		return -1;
	if (m->eof_ms == 0)
		m->eof_ms = now;
	if (now >= m->eof_ms + MCP_EOF_GRACE_MS) {
		m->gone = "its stdin ended and the runs in flight did not end within 1.5 s";
		return 0;
	}
	return (int)(m->eof_ms + MCP_EOF_GRACE_MS - now);
}

/* Note the client gone, from the loop's poll of stdout (out) and of the
 * parent's pidfd (parent). */
static void
mcp_watch_check(struct mcp *m, const struct pollfd *out, const struct pollfd *parent)
{
	if (m->gone != NULL)
		return;
	/* events 0: only POLLERR (a pipe's reader closed), POLLHUP (a socket's
	 * peer closed) and POLLNVAL come back, never for a file or a tty. */
	if (out->revents & (POLLERR | POLLHUP | POLLNVAL))
		m->gone = "its stdout has no reader";
	else if (m->out_failed)
		m->gone = "writing to its stdout failed";
	else if (m->ppid != 0 && ((parent->revents & POLLIN) || getppid() != m->ppid))
		m->gone = "its parent process exited";
}

/* The client is gone: nobody will read an answer. Cancel the runs in flight
 * (the daemon stops their sandboxes now rather than at the connection's end)
 * and drop the waiting ones; the caller closes the sessions. */
static void
mcp_client_gone(struct mcp *m)
{
	struct mcp_call *call;
	int r;

	mcp_log("the client is gone (%s): cancelling %zu runs, dropping %s", m->gone, m->ncalls,
		m->waiting != NULL ? "the waiting ones" : "nothing waiting");
	for (call = m->calls; call != NULL && m->conn != NULL; call = call->next) {
		r = airlock_cancel(m->conn, call->req_id);
		if (r < 0 && r != -ENOENT)
			mcp_log("cancel: %s", strerror(-r));
		call->cancelled = true;
	}
}

/* Serve until a stop signal, the client gone, or stdin's end with every
 * request answered: handle what was read, send and collect runs, then wait
 * for stdin, the daemon, a signal, the client's end or the next progress
 * note. */
static void
mcp_loop(struct mcp *m)
{
	struct pollfd pfd[5];
	int timeout, eof;

	for (;;) {
		mcp_dispatch(m);
		mcp_start(m);
		mcp_collect(m);
		eof = mcp_eof_due(m, clock_now_ms());
		if (m->stop_signal != 0 || m->out_failed || m->gone != NULL)
			break;
		if (m->in_eof && m->calls == NULL && m->waiting == NULL)
			break;
		timeout = mcp_progress_due(m, m->calls, clock_now_ms(), eof);
		timeout = mcp_progress_due(m, m->waiting, clock_now_ms(), timeout);
		if (m->ppid != 0 && m->parentfd < 0 && (timeout < 0 || timeout > MCP_WATCH_MS))
			timeout = MCP_WATCH_MS;
		pfd[0] = (struct pollfd){.fd = m->in_eof ? -1 : STDIN_FILENO, .events = POLLIN};
		pfd[1] = (struct pollfd){
			.fd = m->conn != NULL && m->calls != NULL ? airlock_conn_fd(m->conn) : -1,
			.events = POLLIN};
		pfd[2] = (struct pollfd){.fd = m->sigfd, .events = POLLIN};
		pfd[3] = (struct pollfd){.fd = STDOUT_FILENO, .events = 0};
		pfd[4] = (struct pollfd){.fd = m->parentfd, .events = POLLIN};
		if (poll(pfd, 5, timeout) < 0) {
			if (errno == EINTR)
				continue;
			mcp_log("poll: %s", strerror(errno));
			break;
		}
		if (pfd[2].revents != 0) {
			struct signalfd_siginfo si;

			if (read(m->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				m->stop_signal = (int)si.ssi_signo;
		}
		if (pfd[1].revents != 0) {
			int r = airlock_conn_process(m->conn);

			if (r < 0)
				mcp_log("airlockd: %s",
					strerror(-r)); /* mcp_collect() fails the runs */
		}
		if (pfd[0].revents != 0)
			mcp_read_input(m);
		mcp_watch_check(m, &pfd[3], &pfd[4]);
	}
}

int
mcp_main(const char *socket_path, int argc, char **argv)
{
	struct mcp m = {.socket = socket_path,
			.version = mcp_versions[0],
			.parallel = MCP_PARALLEL_DEFAULT,
			.budget = MCP_BUDGET_DEFAULT,
			.python_runtime = "python",
			.sigfd = -1,
			.parentfd = -1};
	sigset_t stop;
	int status = 0;

	if (mcp_options(&m, argc, argv, &status) < 0)
		return status;
	/* stdout is the protocol: a client that went away must not kill us
	 * with SIGPIPE before the sessions are closed; and the signals that
	 * ask us to stop are read in the loop, so that the sessions are closed
	 * then too. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &stop, NULL) == 0)
		m.sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (m.sigfd < 0)
		mcp_log("signalfd: %s (sessions are not closed on signals)", strerror(errno));
	m.tail = &m.head;
	mcp_watch_open(&m);
	mcp_log("serving MCP on stdio (airlockd at %s, %u runs at once)", mcp_socket_path(&m),
		m.parallel);
	mcp_loop(&m);
	if (m.stop_signal != 0)
		mcp_log("%s: stopping (%zu runs in flight, %s)", strsignal(m.stop_signal), m.ncalls,
			"closing the sessions opened here");
	else if (m.gone != NULL || m.out_failed) {
		if (m.gone == NULL)
			m.gone = "writing to its stdout failed";
		mcp_client_gone(&m);
	}
	mcp_queues_free(&m);
	mcp_close_sessions(&m);
	mcp_disconnect(&m);
	if (m.sigfd >= 0)
		close(m.sigfd);
	if (m.parentfd >= 0)
		close(m.parentfd);
	free(m.env_python);
	free(m.env_sh);
	free(m.in);
	return 0;
}
