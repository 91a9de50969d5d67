/*
 * mcp.c: `airlock mcp`, a Model Context Protocol server on stdio.
 *
 * One JSON-RPC 2.0 message per line on stdin, one per line on stdout, and
 * nothing else on stdout (logs go to stderr). Requests are handled one at a
 * time, in order; while a run is in progress stdin is still read, so that a
 * ping is answered and a notifications/cancelled cancels the run at once.
 * Everything else read meanwhile waits its turn in a queue. The server uses
 * only the public libairlock API (airlock.h); tool output is shaped for a
 * model by mcp_content.c.
 */
#include "mcp.h"
#include "airlock.h"
#include "mcp_content.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef AIRLOCK_VERSION
#define AIRLOCK_VERSION "0"
#endif

#define MCP_LINE_MAX (64u << 20) /* longest message accepted on stdin */
#define MCP_READ_CHUNK 65536	 /* bytes read from stdin at a time */
#define MCP_SESSIONS_MAX 64	 /* sessions remembered to close at exit */
#define MCP_TICK_MS 1000	 /* progress while a run is silent */
#define MCP_NOTE_MS 200		 /* least time between progress notes with output */
#define MCP_NOTE_TEXT 1000	 /* bytes of output in one progress note */
#define MCP_TIMEOUT_MAX 86400.0	 /* largest timeout_seconds taken */
#define MCP_EXIT_USAGE 2
#define MCP_EXIT_SOFTWARE 70

/* JSON-RPC 2.0 error codes, and MCP's "not initialized" (as LSP's). */
enum {
	MCP_ERR_PARSE = -32700,
	MCP_ERR_INVALID = -32600,
	MCP_ERR_METHOD = -32601,
	MCP_ERR_PARAMS = -32602,
	MCP_ERR_INTERNAL = -32603,
	MCP_ERR_NOT_INITIALIZED = -32002,
};

/* Protocol versions this server speaks, newest first. */
static const char *const mcp_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

/* One message read from stdin and not yet handled. */
struct mcp_line {
	struct mcp_line *next;
	json_t *msg; /* the parsed message, or NULL */
	char *error; /* why it did not parse, when msg is NULL */
};

/* The run in progress: the request it answers and its progress state. */
struct mcp_run {
	json_t *id;	  /* JSON-RPC id of the tools/call */
	json_t *token;	  /* _meta.progressToken, or NULL */
	uint32_t req_id;  /* libairlock request id */
	bool cancelled;	  /* notifications/cancelled named it: never answer */
	json_int_t notes; /* progress notes sent */
	uint64_t start_ms, next_tick_ms, last_note_ms;
	int note_stream; /* stream of the last chunk in note, 0 for none */
	size_t note_len;
	char note[MCP_NOTE_TEXT * 2 + 32];
};

/* The server's state, from mcp_main() down. */
struct mcp {
	const char *socket;
	struct airlock_conn *conn;
	struct airlock_info *info; /* of conn, for naming default limits; may be NULL */
	bool initialized;
	const char *version; /* negotiated protocol version */
	char *in;	     /* stdin bytes not yet split into lines */
	size_t in_len, in_cap, in_scan;
	bool in_eof, in_skip; /* in_skip: dropping the rest of an overlong line */
	bool out_failed;      /* stdout is gone: stop */
	struct mcp_line *head, **tail;
	struct mcp_run *run;
	char sessions[MCP_SESSIONS_MAX][AIRLOCK_SESSION_ID_LEN + 1];
};

/* Exit on out of memory, as the command does everywhere. */
static void *
mcp_oom(void *p)
{
	if (p == NULL) {
		fputs("airlock: mcp: out of memory\n", stderr);
		exit(MCP_EXIT_SOFTWARE);
	}
	return p;
}

/* Milliseconds of the monotonic clock. */
static uint64_t
mcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Log one line to stderr. */
static void __attribute__((format(printf, 1, 2))) mcp_log(const char *fmt, ...)
{
	va_list ap;

	fputs("airlock mcp: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- Output ---------------------------------------------------------- */

/* Write one message as one line on stdout; takes the reference to msg. */
static void
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
static void
mcp_reply(struct mcp *m, json_t *id, json_t *result)
{
	mcp_send(m, json_pack("{s:O, s:o}", "id", id, "result", mcp_oom(result)));
}

/* Answer request id (NULL: null) with a JSON-RPC error. */
static void __attribute__((format(printf, 4, 5)))
mcp_error(struct mcp *m, json_t *id, int code, const char *fmt, ...)
{
	char *message;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&message, fmt, ap);
	va_end(ap);
	if (r < 0)
		mcp_oom(NULL);
	mcp_send(m, json_pack("{s:O?, s:{s:i, s:s}}", "id", id, "error", "code", code, "message",
			      message));
	free(message);
}

/* Answer tools/call id with content (reference taken) and isError. */
static void
mcp_tool_reply(struct mcp *m, json_t *id, json_t *content, bool is_error)
{
	mcp_reply(m, id, json_pack("{s:o, s:b}", "content", content, "isError", is_error));
}

/* Answer tools/call id with one text block and isError true. */
static void __attribute__((format(printf, 3, 4)))
mcp_tool_fail(struct mcp *m, json_t *id, const char *fmt, ...)
{
	char *text;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		mcp_oom(NULL);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), true);
	free(text);
}

/* ---- Input ----------------------------------------------------------- */

/* Parse one line (without its newline) and queue it; blank lines are skipped. */
static void
mcp_queue_line(struct mcp *m, const char *buf, size_t len)
{
	struct mcp_line *line;
	json_error_t err;
	size_t i;

	for (i = 0; i < len && strchr(" \t\r", buf[i]) != NULL; i++)
		;
	if (i == len)
		return;
	line = mcp_oom(calloc(1, sizeof(*line)));
	line->msg = json_loadb(buf, len, 0, &err);
	if (line->msg == NULL)
		line->error = mcp_oom(strdup(err.text));
	*m->tail = line;
	m->tail = &line->next;
}

/* Take the first queued line, or NULL. */
static struct mcp_line *
mcp_take(struct mcp *m)
{
	struct mcp_line *line = m->head;

	if (line != NULL) {
		m->head = line->next;
		if (m->head == NULL)
			m->tail = &m->head;
		line->next = NULL;
	}
	return line;
}

/* Free a line. NULL-safe. */
static void
mcp_line_free(struct mcp_line *line)
{
	if (line == NULL)
		return;
	json_decref(line->msg);
	free(line->error);
	free(line);
}

/* Read what stdin has (call when it is readable) and queue complete lines. */
static void
mcp_read_input(struct mcp *m)
{
	size_t start = 0;
	ssize_t n;
	char *nl;

	if (m->in_cap - m->in_len < MCP_READ_CHUNK) {
		m->in_cap = m->in_cap == 0 ? 2 * MCP_READ_CHUNK : m->in_cap * 2;
		m->in = mcp_oom(realloc(m->in, m->in_cap));
	}
	n = read(STDIN_FILENO, m->in + m->in_len, m->in_cap - m->in_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (n < 0)
			mcp_log("stdin: %s", strerror(errno));
		m->in_eof = true;
		if (m->in_len > 0 && !m->in_skip)
			mcp_queue_line(m, m->in, m->in_len);
		m->in_len = m->in_scan = 0;
		return;
	}
	m->in_len += (size_t)n;
	while ((nl = memchr(m->in + m->in_scan, '\n', m->in_len - m->in_scan)) != NULL) {
		size_t end = (size_t)(nl - m->in);

		if (m->in_skip)
			m->in_skip = false;
		else
			mcp_queue_line(m, m->in + start, end - start);
		start = m->in_scan = end + 1;
	}
	memmove(m->in, m->in + start, m->in_len - start);
	m->in_len -= start;
	m->in_scan = m->in_len;
	if (m->in_len > MCP_LINE_MAX) {
		if (!m->in_skip)
			mcp_error(m, NULL, MCP_ERR_PARSE,
				  "parse error: message longer than %u bytes", MCP_LINE_MAX);
		m->in_skip = true;
		m->in_len = m->in_scan = 0;
	}
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
static void
mcp_disconnect(struct mcp *m)
{
	airlock_info_free(m->info);
	m->info = NULL;
	airlock_conn_free(m->conn);
	m->conn = NULL;
}

/* Connect unless connected. Returns 0, or -errno with why in buf. */
static int
mcp_connect(struct mcp *m, char *buf, size_t len)
{
	char code[64], message[256];
	int r;

	if (m->conn != NULL)
		return 0;
	r = airlock_connect_error(m->socket, &m->conn, code, sizeof(code), message,
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
	/* Only to name default limits in messages: its failure costs nothing. */
	if (airlock_info(m->conn, &m->info) < 0)
		m->info = NULL;
	return 0;
}

/*
 * Describe the failure r of a call on the connection into buf, and drop the
 * connection when it is no longer usable. A daemon refusal leaves it usable;
 * a broken connection returns the same error forever, so anything that is
 * not clearly a refusal is checked with a ping.
 */
static void
mcp_failure(struct mcp *m, int r, char *buf, size_t len)
{
	const char *code = NULL, *message = NULL;
	bool refusal = r == -EACCES || r == -EBUSY || r == -ENOENT || r == -E2BIG ||
		       r == -EPROTONOSUPPORT || r == -EPROTO;

	if (refusal && airlock_conn_last_error(m->conn, &code, &message) == 0)
		snprintf(buf, len, "airlockd refused: %s: %s", code, message);
	else
		snprintf(buf, len, "%s", strerror(-r));
	if (r != -EINVAL && r != -ENAMETOOLONG && !(refusal && code != NULL) &&
	    airlock_ping(m->conn) < 0) {
		mcp_log("connection to airlockd lost: %s", strerror(-r));
		snprintf(buf + strlen(buf), len - strlen(buf),
			 " (the connection to airlockd was lost; the next call reconnects)");
		mcp_disconnect(m);
	}
}

/* ---- Arguments ------------------------------------------------------- */

/* Check that args has no key outside allowed (NULL-terminated); else answer
 * -32602 and return -1. */
static int
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
			mcp_error(m, id, MCP_ERR_PARAMS, "%s: unknown argument '%s'", tool, key);
			return -1;
		}
	}
	return 0;
}

/* The string argument key of args into *ret (NULL when absent and not
 * required); on a missing or mistyped one, answer -32602 and return -1. */
static int
mcp_arg_string(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *key,
	       bool required, const char **ret)
{
	json_t *v = json_object_get(args, key);

	*ret = NULL;
	if (v == NULL && !required)
		return 0;
	if (!json_is_string(v)) {
		mcp_error(m, id, MCP_ERR_PARAMS, "%s: argument '%s' %s", tool, key,
			  v == NULL ? "is required" : "must be a string");
		return -1;
	}
	*ret = json_string_value(v);
	return 0;
}

/* The session argument (required or not), checked for the shape of an id. */
static int
mcp_arg_session(struct mcp *m, json_t *id, const char *tool, json_t *args, bool required,
		const char **ret)
{
	const char *s;
	size_t i;

	if (mcp_arg_string(m, id, tool, args, "session", required, &s) < 0)
		return -1;
	for (i = 0; s != NULL && s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			break;
	if (s != NULL && (i != AIRLOCK_SESSION_ID_LEN || s[i] != '\0')) {
		mcp_error(m, id, MCP_ERR_PARAMS,
			  "%s: argument 'session' must be a session id as session_open "
			  "returned it (32 lowercase hex characters)",
			  tool);
		return -1;
	}
	*ret = s;
	return 0;
}

/* ---- Runs ------------------------------------------------------------ */

/* Send a progress notification for run with message text. */
static void
mcp_progress(struct mcp *m, struct mcp_run *run, const char *text)
{
	run->notes++;
	run->last_note_ms = mcp_now_ms();
	mcp_send(m,
		 json_pack("{s:s, s:{s:O, s:I, s:s}}", "method", "notifications/progress", "params",
			   "progressToken", run->token, "progress", run->notes, "message", text));
}

/* Send the output collected since the last progress note, if any. */
static void
mcp_progress_flush(struct mcp *m, struct mcp_run *run)
{
	if (run->note_len == 0)
		return;
	run->note[run->note_len] = '\0';
	mcp_progress(m, run, run->note);
	run->note_len = 0;
	run->note_stream = 0;
}

/* Collect one chunk of the run's output for the next progress note. */
static void
mcp_run_chunk(struct mcp *m, struct mcp_run *run, const struct airlock_event *ev)
{
	enum airlock_stream stream = airlock_event_stream(ev);
	const void *data;
	size_t len, room, used;
	char *text;
	int n;

	if (run->token == NULL || airlock_event_data(ev, &data, &len) < 0)
		return;
	if (run->note_len >= MCP_NOTE_TEXT)
		return; /* the note is full; the rest of this chunk is in the result */
	if (run->note_stream != (int)stream) {
		n = snprintf(run->note + run->note_len, sizeof(run->note) - run->note_len,
			     "%s%s: ", run->note_len > 0 ? "\n" : "",
			     stream == AIRLOCK_STREAM_STDERR ? "stderr" : "stdout");
		if (n > 0)
			run->note_len += (size_t)n;
		run->note_stream = (int)stream;
	}
	room = MCP_NOTE_TEXT > run->note_len ? MCP_NOTE_TEXT - run->note_len : 0;
	text = mcp_oom(mcp_text_clean(data, len, room, &used));
	memcpy(run->note + run->note_len, text, strlen(text));
	run->note_len += strlen(text);
	if (used < len && run->note_len + 4 < sizeof(run->note)) {
		memcpy(run->note + run->note_len, "...", 3);
		run->note_len += 3;
	}
	free(text);
}

/* Honour a notifications/cancelled: cancel the run in progress if it is the
 * request named, or drop that request if it is still queued. */
static void
mcp_cancelled(struct mcp *m, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct mcp_line **p, *line;
	int r;

	if (rid == NULL)
		return;
	if (m->run != NULL && json_equal(rid, m->run->id)) {
		if (m->run->cancelled)
			return;
		m->run->cancelled = true;
		r = airlock_cancel(m->conn, m->run->req_id);
		if (r < 0 && r != -ENOENT)
			mcp_log("cancel: %s", strerror(-r));
		return;
	}
	for (p = &m->head; (line = *p) != NULL; p = &line->next) {
		json_t *id = json_object_get(line->msg, "id");

		if (line->msg != NULL && json_object_get(line->msg, "method") != NULL &&
		    id != NULL && json_equal(id, rid)) {
			*p = line->next;
			if (m->tail == &line->next)
				m->tail = p;
			mcp_line_free(line);
			return;
		}
	}
}

/* While a run is in progress: answer the pings and honour the cancellations
 * that were read; everything else stays queued, in order. */
static void
mcp_urgent(struct mcp *m)
{
	struct mcp_line **p = &m->head, *line;

	while ((line = *p) != NULL) {
		const char *method = json_string_value(json_object_get(line->msg, "method"));
		json_t *id = json_object_get(line->msg, "id");

		if (method != NULL && strcmp(method, "ping") == 0 &&
		    (json_is_string(id) || json_is_integer(id))) {
			mcp_reply(m, id, json_object());
		} else if (method != NULL && strcmp(method, "notifications/cancelled") == 0 &&
			   id == NULL) {
			*p = line->next;
			if (m->tail == &line->next)
				m->tail = p;
			mcp_cancelled(m, json_object_get(line->msg, "params"));
			mcp_line_free(line);
			p = &m->head; /* the queue may have changed: start over */
			continue;
		} else {
			p = &line->next;
			continue;
		}
		*p = line->next;
		if (m->tail == &line->next)
			m->tail = p;
		mcp_line_free(line);
	}
}

/*
 * Wait for the result of run, reading stdin meanwhile (mcp_urgent()) and
 * sending progress notes when the request asked for them. Returns 0 and
 * *ret, or the error of the run or of the connection.
 */
static int
mcp_run_wait(struct mcp *m, struct mcp_run *run, struct airlock_result **ret)
{
	struct airlock_result *res;
	struct airlock_event *ev;
	struct pollfd pfd[2];
	uint64_t now;
	uint32_t got;
	int r, err, timeout;

	for (;;) {
		err = 0;
		while ((r = airlock_conn_next_event(m->conn, &ev)) == 0) {
			if (airlock_event_request_id(ev) == run->req_id)
				mcp_run_chunk(m, run, ev);
			airlock_event_free(ev);
		}
		if (r != -EAGAIN)
			err = r;
		got = 0;
		r = airlock_conn_next_result(m->conn, &got, &res);
		if (r == 0 && got == run->req_id) {
			*ret = res;
			return 0;
		}
		if (r == 0) {
			airlock_result_free(res); /* not ours: never happens with one run */
			continue;
		}
		if (r != -EAGAIN && (got == run->req_id || got == 0))
			return r;
		if (r != -EAGAIN)
			continue;
		if (err != 0)
			return err;

		now = mcp_now_ms();
		if (run->token != NULL && now >= run->next_tick_ms) {
			char text[64];

			mcp_progress_flush(m, run);
			if (now - run->last_note_ms >= MCP_TICK_MS / 2) {
				snprintf(text, sizeof(text), "running for %" PRIu64 " s",
					 (now - run->start_ms + 500) / 1000);
				mcp_progress(m, run, text);
			}
			run->next_tick_ms = now + MCP_TICK_MS;
		}
		if (run->token != NULL && run->note_len > 0 &&
		    now >= run->last_note_ms + MCP_NOTE_MS)
			mcp_progress_flush(m, run);
		if (m->out_failed && !run->cancelled) {
			run->cancelled = true;
			airlock_cancel(m->conn, run->req_id);
		}

		timeout = -1;
		if (run->token != NULL) {
			uint64_t until = run->next_tick_ms;

			if (run->note_len > 0 && run->last_note_ms + MCP_NOTE_MS < until)
				until = run->last_note_ms + MCP_NOTE_MS;
			timeout = until > now ? (int)(until - now) : 0;
		}
		pfd[0] = (struct pollfd){.fd = airlock_conn_fd(m->conn), .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = m->in_eof ? -1 : STDIN_FILENO, .events = POLLIN};
		if (poll(pfd, 2, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents != 0) {
			r = airlock_conn_process(m->conn);
			if (r < 0)
				err = r; /* what was queued before still counts */
		}
		if (pfd[1].revents != 0) {
			mcp_read_input(m);
			mcp_urgent(m);
		}
		if (err != 0 && airlock_conn_next_result(m->conn, &got, &res) == 0) {
			if (got == run->req_id) {
				*ret = res;
				return 0;
			}
			airlock_result_free(res);
		}
		if (err != 0)
			return err;
	}
}

/* Format a limit of ms milliseconds as seconds ("10 s", "0.5 s"). */
static void
mcp_format_seconds(uint64_t ms, char *buf, size_t len)
{
	snprintf(buf, len, "%g s", (double)ms / 1000.0);
}

/* The limit that fired, in words with its value when known, into buf. */
static void
mcp_limit_words(const struct mcp *m, enum airlock_outcome outcome, uint64_t wall_ms, char *buf,
		size_t len)
{
	char value[48] = "";
	uint64_t v;

	switch (outcome) {
	case AIRLOCK_OUTCOME_WALL_LIMIT:
		v = wall_ms != 0 ? wall_ms
				 : airlock_info_limit_default(m->info, AIRLOCK_LIMIT_WALL_MS);
		if (v != 0)
			mcp_format_seconds(v, value, sizeof(value));
		snprintf(buf, len, "wall-clock limit%s%s exceeded", v != 0 ? " of " : "", value);
		break;
	case AIRLOCK_OUTCOME_CPU_LIMIT:
		v = airlock_info_limit_default(m->info, AIRLOCK_LIMIT_CPU_MS);
		if (v != 0)
			mcp_format_seconds(v, value, sizeof(value));
		snprintf(buf, len, "CPU-time limit%s%s exceeded", v != 0 ? " of " : "", value);
		break;
	default:
		v = airlock_info_limit_default(m->info, AIRLOCK_LIMIT_MEMORY_BYTES);
		if (v != 0 && v % (1024 * 1024) == 0)
			snprintf(value, sizeof(value), "%" PRIu64 " MiB", v / (1024 * 1024));
		else if (v != 0)
			snprintf(value, sizeof(value), "%" PRIu64 " bytes", v);
		snprintf(buf, len, "memory limit%s%s exceeded", v != 0 ? " of " : "", value);
		break;
	}
}

/* Answer tools/call id with what the run did: a status line, stdout, stderr
 * and its artifacts. A limit, a sandbox failure or a cancellation is isError. */
static void
mcp_run_reply(struct mcp *m, json_t *id, const struct airlock_result *res, uint64_t wall_ms,
	      bool in_session)
{
	enum airlock_outcome outcome = airlock_result_outcome(res);
	json_t *content = mcp_oom(json_array()), *files = mcp_oom(json_array());
	const void *out, *err;
	size_t out_len, err_len, i, count = airlock_result_artifact_count(res), shown = 0;
	struct mcp_budget budget;
	char status[512], words[128], *all;
	bool is_error = false;
	size_t slen;

	airlock_result_stdout(res, &out, &out_len);
	airlock_result_stderr(res, &err, &err_len);
	switch (outcome) {
	case AIRLOCK_OUTCOME_EXITED:
		snprintf(status, sizeof(status), "exit code %d", airlock_result_exit_code(res));
		break;
	case AIRLOCK_OUTCOME_SIGNALED:
		snprintf(status, sizeof(status), "killed by signal %d (%s)",
			 airlock_result_signal(res), strsignal(airlock_result_signal(res)));
		if (airlock_result_signal(res) == SIGKILL) {
			/* Some kernels' OOM kills reach the daemon as a plain SIGKILL. */
			mcp_limit_words(m, AIRLOCK_OUTCOME_MEMORY_LIMIT, 0, words, sizeof(words));
			slen = strlen(status);
			snprintf(
				status + slen, sizeof(status) - slen,
				"; airlockd reported no limit, but a SIGKILL the code did not send "
				"itself usually means: %s",
				words);
		}
		break;
	case AIRLOCK_OUTCOME_WALL_LIMIT:
	case AIRLOCK_OUTCOME_CPU_LIMIT:
	case AIRLOCK_OUTCOME_MEMORY_LIMIT:
		mcp_limit_words(m, outcome, wall_ms, words, sizeof(words));
		snprintf(status, sizeof(status),
			 "%s: the sandbox stopped the code; running the same code again would hit "
			 "the same limit",
			 words);
		is_error = true;
		break;
	case AIRLOCK_OUTCOME_CANCELLED:
		snprintf(status, sizeof(status),
			 "the run was cancelled (by its owner or a "
			 "stopping airlockd)");
		is_error = true;
		break;
	default:
		snprintf(status, sizeof(status), "the sandbox failed: %s",
			 airlock_result_error(res) != NULL ? airlock_result_error(res)
							   : airlock_outcome_name(outcome));
		is_error = true;
		break;
	}
	slen = strlen(status);
	snprintf(status + slen, sizeof(status) - slen, " (wall %.2f s, cpu %.2f s)",
		 (double)airlock_result_wall_ms(res) / 1000.0,
		 (double)airlock_result_cpu_ms(res) / 1000.0);
	if (out_len == 0 && err_len == 0) {
		slen = strlen(status);
		snprintf(status + slen, sizeof(status) - slen, "; no output");
	}

	mcp_budget_init(&budget, strcmp(m->version, "2025-06-18") == 0);
	for (i = 0; i < count && budget.blocks > 0; i++) {
		const char *name = airlock_result_artifact_name(res, i);
		const void *data;
		size_t len;

		if (name == NULL || airlock_result_artifact_data(res, i, &data, &len) < 0)
			continue;
		if (mcp_content_file(files, &budget, name, data, len,
				     airlock_result_artifact_size(res, i),
				     airlock_result_artifact_truncated(res, i)) < 0)
			mcp_oom(NULL);
		shown++;
	}
	if (count > 0) {
		char *names = mcp_oom(strdup("")), *next;

		for (i = 0; i < count; i++) {
			char *clean;
			const char *name = airlock_result_artifact_name(res, i);

			if (name == NULL)
				continue;
			clean = mcp_oom(mcp_text_clean(name, strlen(name), 1024, NULL));
			if (asprintf(&next, "%s%s%s (%" PRIu64 " bytes)", names, i > 0 ? ", " : "",
				     clean, airlock_result_artifact_size(res, i)) < 0)
				mcp_oom(NULL);
			free(clean);
			free(names);
			names = next;
			if (strlen(names) > 4000 && i + 1 < count) {
				if (asprintf(&next, "%s, ... %zu more", names, count - i - 1) < 0)
					mcp_oom(NULL);
				free(names);
				names = next;
				break;
			}
		}
		if (asprintf(&all, "%s\nfiles %s: %s%s", status,
			     in_session ? "created or changed in the session" : "the code left",
			     names,
			     shown < count ? " (not all are attached to this result)" : "") < 0)
			mcp_oom(NULL);
		free(names);
	} else
		all = mcp_oom(strdup(status));

	json_array_append_new(content, mcp_block_text(all));
	free(all);
	if (out_len > 0 || airlock_result_stdout_total(res) > 0)
		json_array_append_new(content, mcp_block_output("stdout", out, out_len,
								airlock_result_stdout_total(res),
								MCP_OUTPUT_MAX));
	if (err_len > 0 || airlock_result_stderr_total(res) > 0)
		json_array_append_new(content, mcp_block_output("stderr", err, err_len,
								airlock_result_stderr_total(res),
								MCP_OUTPUT_MAX));
	json_array_extend(content, files);
	json_decref(files);
	mcp_tool_reply(m, id, content, is_error);
}

/*
 * run_python and run_shell: run code (the argument key) with runtime, in a
 * fresh sandbox or in a session, and answer with what it did.
 */
static void
mcp_tool_run(struct mcp *m, json_t *id, json_t *args, json_t *token, const char *tool,
	     const char *runtime, const char *key)
{
	const char *const allowed[] = {key, "files", "timeout_seconds", "session", NULL};
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct mcp_run run = {0};
	const char *code, *session, *name;
	json_t *files, *timeout, *v;
	uint64_t wall_ms = 0;
	char why[512];
	int r;

	if (mcp_args_known(m, id, tool, args, allowed) < 0 ||
	    mcp_arg_string(m, id, tool, args, key, true, &code) < 0 ||
	    mcp_arg_session(m, id, tool, args, false, &session) < 0)
		return;
	files = json_object_get(args, "files");
	if (files != NULL && !json_is_object(files)) {
		mcp_error(m, id, MCP_ERR_PARAMS,
			  "%s: argument 'files' must be an object of file name to content", tool);
		return;
	}
	json_object_foreach(files, name, v)
	{
		if (!json_is_string(v)) {
			mcp_error(m, id, MCP_ERR_PARAMS, "%s: files: '%s' must be a string", tool,
				  name);
			return;
		}
	}
	timeout = json_object_get(args, "timeout_seconds");
	if (timeout != NULL) {
		double s = json_is_number(timeout) ? json_number_value(timeout) : -1;

		if (!(s > 0 && s <= MCP_TIMEOUT_MAX)) {
			mcp_error(
				m, id, MCP_ERR_PARAMS,
				"%s: argument 'timeout_seconds' must be a number of seconds above "
				"0 and at most %g",
				tool, MCP_TIMEOUT_MAX);
			return;
		}
		wall_ms = (uint64_t)(s * 1000.0 + 0.999);
	}

	r = airlock_run_req_new(&req);
	if (r == 0)
		r = airlock_run_req_set_runtime(req, runtime);
	if (r == 0)
		r = airlock_run_req_set_code(req, code, strlen(code));
	if (r == 0 && wall_ms != 0)
		r = airlock_run_req_set_limit(req, AIRLOCK_LIMIT_WALL_MS, wall_ms);
	if (r == 0 && session != NULL)
		r = airlock_run_req_set_session(req, session);
	if (r == 0)
		r = airlock_run_req_set_stream(req, true);
	if (r < 0) {
		mcp_tool_fail(m, id, "%s: could not build the request: %s", tool, strerror(-r));
		goto out;
	}
	json_object_foreach(files, name, v)
	{
		r = airlock_run_req_add_file(req, name, json_string_value(v),
					     json_string_length(v));
		if (r < 0) {
			mcp_tool_fail(m, id, "%s: input file '%s' refused: %s", tool, name,
				      r == -EINVAL ? "the name must be a relative path of at most "
						     "255 bytes"
				      : r == -EEXIST ? "named twice"
				      : r == -E2BIG  ? "too many or too large files"
						     : strerror(-r));
			goto out;
		}
	}
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "%s", why);
		goto out;
	}
	run.id = id;
	run.token = token;
	run.start_ms = run.last_note_ms = mcp_now_ms();
	run.next_tick_ms = run.start_ms + MCP_TICK_MS;
	r = airlock_run_submit(m->conn, req, &run.req_id);
	if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, id, "%s: the run was not sent: %s", tool, why);
		goto out;
	}
	m->run = &run;
	/* What was read with the request (a ping, its own cancellation) counts too. */
	mcp_urgent(m);
	r = mcp_run_wait(m, &run, &res);
	m->run = NULL;
	if (run.token != NULL)
		mcp_progress_flush(m, &run);
	if (run.cancelled) {
		/* The MCP spec: a cancelled request SHOULD NOT be answered. */
		mcp_log("%s: request cancelled; not answering it", tool);
	} else if (r == -ENOENT && session != NULL) {
		mcp_tool_fail(m, id,
			      "%s: no such session: %s (it was closed, ended after being idle, "
			      "or never existed); open one with session_open",
			      tool, session);
	} else if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, id, "%s: the run failed: %s", tool, why);
	} else
		mcp_run_reply(m, id, res, wall_ms, session != NULL);
out:
	airlock_result_free(res);
	airlock_run_req_free(req);
}

/* ---- Tools ----------------------------------------------------------- */

static void
mcp_tool_run_python(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	mcp_tool_run(m, id, args, token, "run_python", "python", "code");
}

static void
mcp_tool_run_shell(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	mcp_tool_run(m, id, args, token, "run_shell", "sh", "command");
}

/* Remember (add) or forget (!add) a session this server opened. */
static void
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

static void
mcp_tool_session_open(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {NULL};
	char sid[AIRLOCK_SESSION_ID_LEN + 1], why[512], *text;
	int r;

	if (mcp_args_known(m, id, "session_open", args, allowed) < 0)
		return;
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "%s", why);
		return;
	}
	r = airlock_session_open(m->conn, NULL, sid);
	if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, id, "session_open: %s", why);
		return;
	}
	mcp_session_note(m, sid, true);
	if (asprintf(&text,
		     "session %s opened. Pass \"session\": \"%s\" to run_python, run_shell, "
		     "write_file, read_file and list_files: files stay in its workspace "
		     "between runs. Close it with session_close when done (it also ends "
		     "after a while without use).",
		     sid, sid) < 0)
		mcp_oom(NULL);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false);
	free(text);
}

/* Answer a failed session operation: no such session or file, or another error. */
static void
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

static void
mcp_tool_session_close(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", NULL};
	const char *sid;
	char why[512];
	int r;

	if (mcp_args_known(m, id, "session_close", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "session_close", args, true, &sid) < 0)
		return;
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "%s", why);
		return;
	}
	r = airlock_session_close(m->conn, sid);
	if (r < 0) {
		mcp_session_fail(m, id, "session_close", sid, NULL, r);
		return;
	}
	mcp_session_note(m, sid, false);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text("session closed"))), false);
}

static void
mcp_tool_write_file(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", "content", NULL};
	const char *sid, *path, *content;
	char why[512], *text;
	json_t *v;
	int r;

	if (mcp_args_known(m, id, "write_file", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "write_file", args, true, &sid) < 0 ||
	    mcp_arg_string(m, id, "write_file", args, "path", true, &path) < 0 ||
	    mcp_arg_string(m, id, "write_file", args, "content", true, &content) < 0)
		return;
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "%s", why);
		return;
	}
	v = json_object_get(args, "content");
	r = airlock_file_write(m->conn, sid, path, content, json_string_length(v));
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		mcp_tool_fail(m, id,
			      "write_file: bad path '%s': it must be relative, non-empty "
			      "and at most 1024 bytes",
			      path);
		return;
	}
	if (r < 0) {
		mcp_session_fail(m, id, "write_file", sid, NULL, r);
		return;
	}
	if (asprintf(&text, "wrote %zu bytes to %s", json_string_length(v), path) < 0)
		mcp_oom(NULL);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false);
	free(text);
}

static void
mcp_tool_read_file(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", NULL};
	struct airlock_file *file = NULL;
	const char *sid, *path, *image;
	const void *data;
	size_t len;
	char why[512];
	json_t *content;
	int r;

	if (mcp_args_known(m, id, "read_file", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "read_file", args, true, &sid) < 0 ||
	    mcp_arg_string(m, id, "read_file", args, "path", true, &path) < 0)
		return;
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "%s", why);
		return;
	}
	r = airlock_file_read(m->conn, sid, path, &file);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		mcp_tool_fail(m, id,
			      "read_file: bad path '%s': it must be relative, non-empty "
			      "and at most 1024 bytes",
			      path);
		return;
	}
	if (r < 0) {
		mcp_session_fail(m, id, "read_file", sid, path, r);
		return;
	}
	airlock_file_data(file, &data, &len);
	image = mcp_image_type(path, data, len);
	content = mcp_oom(json_array());
	if (image == NULL && memchr(data, '\0', len) == NULL) {
		/* Invalid UTF-8 is shown as U+FFFD rather than refused: it is
		 * almost always text with a stray byte. */
		json_array_append_new(content,
				      mcp_block_output(path, data, len, airlock_file_size(file),
						       MCP_FILE_TEXT_MAX));
	} else {
		struct mcp_budget budget;

		mcp_budget_init(&budget, strcmp(m->version, "2025-06-18") == 0);
		budget.resource_bytes = MCP_RESOURCE_MAX;
		if (mcp_content_file(content, &budget, path, data, len, airlock_file_size(file),
				     airlock_file_truncated(file)) < 0)
			mcp_oom(NULL);
	}
	airlock_file_free(file);
	mcp_tool_reply(m, id, content, false);
}

static void
mcp_tool_list_files(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", NULL};
	struct airlock_file_list *list = NULL;
	const char *sid, *path;
	char why[512], *text = NULL, *next;
	size_t i, n;
	int r;

	if (mcp_args_known(m, id, "list_files", args, allowed) < 0 ||
	    mcp_arg_session(m, id, "list_files", args, true, &sid) < 0 ||
	    mcp_arg_string(m, id, "list_files", args, "path", false, &path) < 0)
		return;
	if (mcp_connect(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "%s", why);
		return;
	}
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
	if (asprintf(&text, "%zu entr%s in %s:", n, n == 1 ? "y" : "ies",
		     path != NULL && path[0] != '\0' ? path : "the session's workspace") < 0)
		mcp_oom(NULL);
	for (i = 0; i < n; i++) {
		enum airlock_file_kind kind = airlock_file_list_kind(list, i);
		const char *name = airlock_file_list_name(list, i);
		char *clean = mcp_oom(mcp_text_clean(name, strlen(name), 1024, NULL));

		if (asprintf(&next, "%s\n%-5s %10" PRIu64 "  %s%s", text,
			     airlock_file_kind_name(kind), airlock_file_list_size(list, i), clean,
			     kind == AIRLOCK_FILE_DIR ? "/" : "") < 0)
			mcp_oom(NULL);
		free(clean);
		free(text);
		text = next;
	}
	if (airlock_file_list_truncated(list)) {
		if (asprintf(&next, "%s\n[... more entries not listed ...]", text) < 0)
			mcp_oom(NULL);
		free(text);
		text = next;
	}
	airlock_file_list_free(list);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false);
	free(text);
}

/* The tools, their descriptions and their input schemas (JSON Schema). */
static const struct mcp_tool {
	const char *name;
	const char *description;
	const char *schema;
	void (*fn)(struct mcp *m, json_t *id, json_t *args, json_t *token);
} mcp_tools[] = {
	{"run_python",
	 "Run Python 3 code in a fresh, single-use sandbox (no network, no access to the host; "
	 "time, CPU and memory are limited). Returns the exit code, stdout and stderr (each cut "
	 "at 20000 bytes, saying so), and the files the code created: images (PNG, JPEG, GIF, "
	 "WebP, SVG) as image content, other files as embedded resources. A limit that fires "
	 "is reported as an error naming the limit. Print what you want to see. With 'session' "
	 "the code runs in that session's workspace, whose files persist between runs.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"code\":{\"type\":\"string\",\"description\":\"Python 3 source to run as a script\"},"
	 "\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	 "\"description\":\"Input files placed in the working directory before the code runs: "
	 "relative file name to text content\"},"
	 "\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
	 "\"description\":\"Wall-clock limit of the run in seconds (default: the daemon's)\"},"
	 "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\","
	 "\"description\":\"Run in this session (from session_open) instead of a fresh "
	 "workspace\"}},"
	 "\"required\":[\"code\"],\"additionalProperties\":false}",
	 mcp_tool_run_python},
	{"run_shell",
	 "Run a POSIX shell command (/bin/sh) in a fresh, single-use sandbox (no network, no "
	 "access to the host; time, CPU and memory are limited). Returns the exit code, stdout "
	 "and stderr (each cut at 20000 bytes, saying so) and the files the command created, "
	 "like run_python. With 'session' it runs in that session's workspace.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"command\":{\"type\":\"string\",\"description\":\"Shell script to run with /bin/sh\"},"
	 "\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"
	 "\"description\":\"Input files placed in the working directory first: relative file "
	 "name to text content\"},"
	 "\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
	 "\"description\":\"Wall-clock limit of the run in seconds (default: the daemon's)\"},"
	 "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\","
	 "\"description\":\"Run in this session (from session_open)\"}},"
	 "\"required\":[\"command\"],\"additionalProperties\":false}",
	 mcp_tool_run_shell},
	{"session_open",
	 "Open a session: a workspace that keeps its files between runs (each run is still a "
	 "fresh sandbox). Returns the session id to pass as 'session' to the other tools. "
	 "Close it with session_close when done.",
	 "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	 mcp_tool_session_open},
	{"session_close", "Close a session: its files are deleted and a run in it is stopped.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"}},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 mcp_tool_session_close},
	{"write_file",
	 "Write a text file into a session's workspace (replacing it; parent directories are "
	 "made). The path is relative to the workspace.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"},"
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative path in the workspace\"},"
	 "\"content\":{\"type\":\"string\",\"description\":\"The file's text\"}},"
	 "\"required\":[\"session\",\"path\",\"content\"],\"additionalProperties\":false}",
	 mcp_tool_write_file},
	{"read_file",
	 "Read a file of a session's workspace: text (cut at 100000 bytes, saying so), an "
	 "image as image content, other files as an embedded resource.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"},"
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative path in the workspace\"}},"
	 "\"required\":[\"session\",\"path\"],\"additionalProperties\":false}",
	 mcp_tool_read_file},
	{"list_files",
	 "List a directory of a session's workspace (default: its top): kind, size and name "
	 "of each entry.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"},"
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative directory (default: the "
	 "workspace)\"}},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 mcp_tool_list_files},
	{NULL, NULL, NULL, NULL},
};

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
		json_pack("{s:s, s:{s:{}}, s:{s:s, s:s}, s:s}", "protocolVersion", m->version,
			  "capabilities", "tools", "serverInfo", "name", "airlock", "version",
			  AIRLOCK_VERSION, "instructions",
			  "Runs code in single-use airlockd sandboxes: run_python and run_shell "
			  "for one-shot runs; session_open, write_file, read_file, list_files and "
			  "session_close for a workspace that persists between runs."));
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
mcp_tools_list(struct mcp *m, json_t *id, json_t *params)
{
	json_t *tools = mcp_oom(json_array());
	size_t i;

	for (i = 0; mcp_tools[i].name != NULL; i++) {
		json_t *schema = json_loads(mcp_tools[i].schema, 0, NULL);

		if (schema == NULL) {
			mcp_log("tool %s: bad schema", mcp_tools[i].name); /* a bug */
			abort();
		}
		json_array_append_new(
			tools, mcp_oom(json_pack("{s:s, s:s, s:o}", "name", mcp_tools[i].name,
						 "description", mcp_tools[i].description,
						 "inputSchema", schema)));
	}
	mcp_reply(m, id, json_pack("{s:o}", "tools", tools));
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

/* Close the sessions this server opened and did not close. */
static void
mcp_close_sessions(struct mcp *m)
{
	size_t i;

	for (i = 0; i < MCP_SESSIONS_MAX; i++) {
		if (m->sessions[i][0] == '\0' || m->conn == NULL)
			continue;
		if (airlock_session_close(m->conn, m->sessions[i]) == 0)
			mcp_log("closed session %s at exit", m->sessions[i]);
		m->sessions[i][0] = '\0';
	}
}

int
mcp_main(const char *socket_path, int argc, char **argv)
{
	struct mcp m = {.socket = socket_path, .version = mcp_versions[0]};
	struct mcp_line *line;
	struct pollfd pfd;

	if (argc > 1) {
		fprintf(stderr, "usage: airlock [--socket PATH] mcp\n"
				"Serves the Model Context Protocol on stdin and stdout; see "
				"airlock(1).\n");
		return strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0
			       ? 0
			       : MCP_EXIT_USAGE;
	}
	/* stdout is the protocol: a client that went away must not kill us
	 * with SIGPIPE before the sessions are closed. */
	signal(SIGPIPE, SIG_IGN);
	m.tail = &m.head;
	mcp_log("serving MCP on stdio (airlockd at %s)", mcp_socket_path(&m));
	while (!m.out_failed) {
		while (!m.out_failed && (line = mcp_take(&m)) != NULL) {
			if (line->msg == NULL)
				mcp_error(&m, NULL, MCP_ERR_PARSE, "parse error: %s", line->error);
			else
				mcp_handle(&m, line->msg);
			mcp_line_free(line);
		}
		if (m.in_eof)
			break;
		pfd = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
			mcp_log("poll: %s", strerror(errno));
			break;
		}
		if (pfd.revents != 0)
			mcp_read_input(&m);
	}
	while ((line = mcp_take(&m)) != NULL)
		mcp_line_free(line);
	mcp_close_sessions(&m);
	mcp_disconnect(&m);
	free(m.in);
	return 0;
}
