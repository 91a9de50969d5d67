/*
 * mcp.c: `airlock mcp`, a Model Context Protocol server on stdio.
 *
 * One JSON-RPC 2.0 message per line on stdin, one per line on stdout, and
 * nothing else on stdout (logs go to stderr). Every message is handled as
 * soon as it is read. Runs (run_python, run_shell) are submitted on one
 * libairlock connection and proceed concurrently, up to --parallel at once
 * (beyond that they wait here; the daemon's own queue decides the rest), and
 * each is answered when it ends: calls are independent of one another. The
 * other methods and tools are short round trips answered at once, also while
 * runs are in progress. SIGTERM, SIGINT, SIGHUP and a closed stdout stop the
 * server at once; stdin's end stops it when the requests read have been
 * answered. Either way it closes the sessions it opened. The server uses
 * only the public libairlock API (airlock.h); tool output is shaped for a
 * model by mcp_content.c.
 */
#include "mcp.h"
#include "airlock.h"
#include "cli/net.h"
#include "cli/util.h"
#include "clock.h"
#include "mcp_content.h"
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

#ifndef AIRLOCK_VERSION
#define AIRLOCK_VERSION "0"
#endif

#define MCP_LINE_MAX (64u << 20) /* longest message accepted on stdin */
#define MCP_LINE_KEEP 512	 /* bytes of each end of an overlong line kept for its id */
#define MCP_READ_CHUNK 65536	 /* bytes read from stdin at a time */
#define MCP_SESSIONS_MAX 64	 /* sessions remembered to close at exit */
#define MCP_TICK_MS 1000	 /* progress while a run is silent */
#define MCP_NOTE_MS 200		 /* least time between progress notes with output */
#define MCP_NOTE_TEXT 1000	 /* bytes of output in one progress note */
#define MCP_TIMEOUT_MAX 86400.0	 /* largest timeout_seconds or cpu_seconds taken */
#define MCP_PARALLEL_DEFAULT 8	 /* runs in flight at once (--parallel) */
#define MCP_PARALLEL_MAX 256
#define MCP_PROBE_MS 10000 /* how long the environment probe may take */
#define MCP_CLOSE_MS 1500  /* how long closing the sessions at exit may take */
#define MCP_EXIT_USAGE 2
#define MCP_EXIT_SOFTWARE 70

/* JSON-RPC 2.0 error codes, MCP's "not initialized" (as LSP's) and MCP's
 * "resource not found". */
enum {
	MCP_ERR_PARSE = -32700,
	MCP_ERR_INVALID = -32600,
	MCP_ERR_METHOD = -32601,
	MCP_ERR_PARAMS = -32602,
	MCP_ERR_INTERNAL = -32603,
	MCP_ERR_NOT_INITIALIZED = -32002,
	MCP_ERR_NO_RESOURCE = -32002,
};

/* Protocol versions this server speaks, newest first. */
static const char *const mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
					   NULL};

/* One message read from stdin and not yet handled. */
struct mcp_line {
	struct mcp_line *next;
	json_t *msg; /* the parsed message, or NULL */
	char *error; /* why it did not parse, when msg is NULL */
	json_t *id;  /* for a line too long to parse: its id when one was found */
};

/* A run_python or run_shell call: waiting to be sent, or in flight. */
struct mcp_call {
	struct mcp_call *next;
	json_t *id;    /* JSON-RPC id of the tools/call (a reference) */
	json_t *token; /* _meta.progressToken (a reference), or NULL */
	const char *tool;
	struct airlock_run_req *req;
	char session[AIRLOCK_SESSION_ID_LEN + 1]; /* "" for a one-shot run */
	uint64_t wall_ms, cpu_ms, memory_bytes;	  /* asked for; 0: the daemon's default */
	uint32_t req_id;			  /* libairlock request id once sent, else 0 */
	bool cancelled;				  /* notifications/cancelled named it */
	json_int_t notes;			  /* progress notes sent */
	uint64_t start_ms, next_tick_ms, last_note_ms;
	int note_stream; /* stream of the last chunk in note, 0 for none */
	size_t note_len;
	char note[MCP_NOTE_TEXT * 2 + 32];
};

/* The server's state, from mcp_main() down. */
struct mcp {
	const char *socket;
	unsigned parallel;	    /* --parallel */
	size_t budget;		    /* --output-budget */
	const char *python_runtime; /* --python-runtime: run_python's default */
	struct airlock_conn *conn;
	struct airlock_info *info; /* of conn, for defaults and ceilings; may be NULL */
	bool initialized;
	const char *version; /* negotiated protocol version */
	char *in;	     /* stdin bytes not yet split into lines */
	size_t in_len, in_cap, in_scan;
	bool in_eof, in_skip; /* in_skip: dropping the rest of an overlong line */
	char skip_head[MCP_LINE_KEEP], skip_tail[MCP_LINE_KEEP];
	size_t skip_head_len, skip_tail_len;
	bool out_failed; /* stdout is gone: stop */
	int sigfd;	 /* SIGTERM, SIGINT, SIGHUP */
	int stop_signal; /* the signal that stops the server, or 0 */
	struct mcp_line *head, **tail;
	struct mcp_call *calls;	   /* in flight */
	size_t ncalls;		   /* in flight */
	struct mcp_call *waiting;  /* not sent yet, in arrival order */
	bool probed;		   /* the environment probe ran */
	char *env_python, *env_sh; /* what it found, for the tool descriptions */
	char sessions[MCP_SESSIONS_MAX][AIRLOCK_SESSION_ID_LEN + 1];
	char cell_session[AIRLOCK_SESSION_ID_LEN + 1]; /* run_python_cell's, or "" */
};

static void mcp_session_note(struct mcp *m, const char *sid, bool add);

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

/* Whether the negotiated protocol version is at least v. */
static bool
mcp_since(const struct mcp *m, const char *v)
{
	return strcmp(m->version, v) >= 0; /* dates compare as strings */
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

/* Answer request id (NULL: null) with a JSON-RPC error. */
static void __attribute__((format(printf, 4, 5)))
mcp_error(struct mcp *m, json_t *id, int code, const char *fmt, ...)
{
	char *message;
	va_list ap;

	va_start(ap, fmt);
	message = mcp_vformat(fmt, ap);
	va_end(ap);
	mcp_send(m, json_pack("{s:O?, s:{s:i, s:s}}", "id", id, "error", "code", code, "message",
			      message));
	free(message);
}

/* Answer tools/call id with content (reference taken), isError and, when
 * not NULL and the client knows it (2025-06-18), structured (reference
 * taken either way). */
static void
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
static void
mcp_tool_reply(struct mcp *m, json_t *id, json_t *content, bool is_error)
{
	mcp_tool_reply_structured(m, id, content, is_error, NULL);
}

/* Answer tools/call id with one text block and isError true. */
static void __attribute__((format(printf, 3, 4)))
mcp_tool_fail(struct mcp *m, json_t *id, const char *fmt, ...)
{
	char *text;
	va_list ap;

	va_start(ap, fmt);
	text = mcp_vformat(fmt, ap);
	va_end(ap);
	mcp_tool_reply(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), true);
	free(text);
}

/*
 * Answer a tools/call whose arguments are wrong. Since 2025-11-25 that is a
 * tool error (isError), which the client hands to the model so that it can
 * correct the call; older clients get JSON-RPC -32602, as they expect.
 */
static void __attribute__((format(printf, 3, 4)))
mcp_bad_args(struct mcp *m, json_t *id, const char *fmt, ...)
{
	char *text;
	va_list ap;

	va_start(ap, fmt);
	text = mcp_vformat(fmt, ap);
	va_end(ap);
	if (mcp_since(m, "2025-11-25"))
		mcp_tool_fail(m, id, "%s", text);
	else
		mcp_error(m, id, MCP_ERR_PARAMS, "%s", text);
	free(text);
}

/* ---- Input ----------------------------------------------------------- */

/* Queue a line (parsed, or with the reason it did not parse). */
static void
mcp_queue(struct mcp *m, struct mcp_line *line)
{
	*m->tail = line;
	m->tail = &line->next;
}

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
	mcp_queue(m, line);
}

/* The JSON id value (an integer or a string without escapes) at s[*i], or
 * NULL; *i moves past it. */
static json_t *
mcp_scan_id(const char *s, size_t len, size_t *i)
{
	size_t k = *i;

	if (k < len && s[k] == '"') {
		size_t start = ++k;

		while (k < len && s[k] != '"' && s[k] != '\\' && (unsigned char)s[k] >= 0x20)
			k++;
		if (k >= len || s[k] != '"' || k - start > 256)
			return NULL;
		*i = k + 1;
		return json_stringn(s + start, k - start);
	}
	if (k < len && (s[k] == '-' || (s[k] >= '0' && s[k] <= '9'))) {
		char num[24];
		size_t start = k++;

		while (k < len && s[k] >= '0' && s[k] <= '9')
			k++;
		if (k - start >= sizeof(num))
			return NULL;
		memcpy(num, s + start, k - start);
		num[k - start] = '\0';
		*i = k;
		return json_integer(strtoll(num, NULL, 10));
	}
	return NULL;
}

/* The id of an overlong message that ends in `, "id": VALUE }`, or NULL. */
static json_t *
mcp_overlong_tail_id(const char *t, size_t n)
{
	size_t j, q;

	while (n > 0 && strchr(" \t\r", t[n - 1]) != NULL)
		n--;
	if (n < 8 || t[n - 1] != '}')
		return NULL;
	j = n - 1;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	/* The value ends before j. */
	if (j > 0 && t[j - 1] == '"') {
		q = j - 1;
		while (q > 0 && t[q - 1] != '"')
			q--;
		if (q == 0)
			return NULL;
		q--; /* the opening quote */
	} else {
		q = j;
		while (q > 0 && ((t[q - 1] >= '0' && t[q - 1] <= '9') || t[q - 1] == '-'))
			q--;
		if (q == j)
			return NULL;
	}
	j = q;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	if (j == 0 || t[j - 1] != ':')
		return NULL;
	j--;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	if (j < 5 || memcmp(t + j - 4, "\"id\"", 4) != 0)
		return NULL;
	j -= 4;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	if (j == 0 || (t[j - 1] != ',' && t[j - 1] != '{'))
		return NULL;
	return mcp_scan_id(t, n, &q);
}

/*
 * The id of a message too long to parse, from the first and last bytes
 * kept of it: a top-level "id" member near its start (as most clients
 * write it) or as its last member (as the TypeScript SDK does). NULL when
 * neither is there: the error then has id null, as JSON-RPC says.
 */
static json_t *
mcp_overlong_id(const char *head, size_t hlen, const char *tail, size_t tlen)
{
	size_t i, depth = 0;
	char prev = 0;
	json_t *id;

	for (i = 0; i < hlen; i++) {
		char c = head[i];

		if (c == '"') {
			size_t start = i + 1, k = start;

			while (k < hlen && head[k] != '"')
				k += head[k] == '\\' ? 2 : 1;
			if (k >= hlen)
				break;
			if (depth == 1 && (prev == '{' || prev == ',') && k - start == 2 &&
			    memcmp(head + start, "id", 2) == 0) {
				size_t j = k + 1;

				while (j < hlen && strchr(" \t\r", head[j]) != NULL)
					j++;
				if (j < hlen && head[j] == ':') {
					j++;
					while (j < hlen && strchr(" \t\r", head[j]) != NULL)
						j++;
					id = mcp_scan_id(head, hlen, &j);
					if (id != NULL)
						return id;
				}
			}
			i = k;
			prev = '"';
		} else if (c == '{' || c == '[') {
			depth++;
			prev = c;
		} else if (c == '}' || c == ']') {
			depth--;
			prev = c;
		} else if (strchr(" \t\r", c) == NULL) {
			prev = c;
		}
	}
	/* The tail: ... ,"id" : VALUE } */
	return mcp_overlong_tail_id(tail, tlen);
}

/* Keep the last bytes of an overlong line, for its id. */
static void
mcp_skip_feed(struct mcp *m, const char *buf, size_t len)
{
	if (len >= MCP_LINE_KEEP) {
		memcpy(m->skip_tail, buf + len - MCP_LINE_KEEP, MCP_LINE_KEEP);
		m->skip_tail_len = MCP_LINE_KEEP;
		return;
	}
	if (m->skip_tail_len + len > MCP_LINE_KEEP) {
		size_t drop = m->skip_tail_len + len - MCP_LINE_KEEP;

		memmove(m->skip_tail, m->skip_tail + drop, m->skip_tail_len - drop);
		m->skip_tail_len -= drop;
	}
	memcpy(m->skip_tail + m->skip_tail_len, buf, len);
	m->skip_tail_len += len;
}

/* The overlong line has ended: queue its error, with its id when found. */
static void
mcp_skip_end(struct mcp *m)
{
	struct mcp_line *line = mcp_oom(calloc(1, sizeof(*line)));

	line->id = mcp_overlong_id(m->skip_head, m->skip_head_len, m->skip_tail, m->skip_tail_len);
	if (asprintf(&line->error, "message longer than %u bytes", MCP_LINE_MAX) < 0)
		mcp_oom(NULL);
	mcp_queue(m, line);
	m->in_skip = false;
	m->skip_head_len = m->skip_tail_len = 0;
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
	json_decref(line->id);
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
		if (m->in_skip) {
			mcp_skip_feed(m, m->in, m->in_len);
			mcp_skip_end(m);
		} else if (m->in_len > 0)
			mcp_queue_line(m, m->in, m->in_len);
		m->in_len = m->in_scan = 0;
		return;
	}
	m->in_len += (size_t)n;
	while ((nl = memchr(m->in + m->in_scan, '\n', m->in_len - m->in_scan)) != NULL) {
		size_t end = (size_t)(nl - m->in);

		if (m->in_skip) {
			mcp_skip_feed(m, m->in + start, end - start);
			mcp_skip_end(m);
		} else
			mcp_queue_line(m, m->in + start, end - start);
		start = m->in_scan = end + 1;
	}
	memmove(m->in, m->in + start, m->in_len - start);
	m->in_len -= start;
	m->in_scan = m->in_len;
	if (m->in_skip) {
		mcp_skip_feed(m, m->in, m->in_len);
		m->in_len = m->in_scan = 0;
	} else if (m->in_len > MCP_LINE_MAX) {
		/* Too long to parse: keep both ends to find its id, drop the rest. */
		m->skip_head_len = MCP_LINE_KEEP;
		memcpy(m->skip_head, m->in, MCP_LINE_KEEP);
		m->skip_tail_len = 0;
		mcp_skip_feed(m, m->in, m->in_len);
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

static void mcp_conn_lost(struct mcp *m, int err);

/* Connect unless connected. Returns 0, or -errno with why in buf. */
static int
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
	if (m->conn != NULL && airlock_conn_check(m->conn) < 0) {
		mcp_log("connection to airlockd lost: %s", strerror(-r));
		snprintf(buf + strlen(buf), len - strlen(buf),
			 " (the connection to airlockd was lost; the next call reconnects)");
		if (m->calls == NULL)
			mcp_disconnect(m);
	}
}

/* Connect for tools/call id, or answer it with why not and return -1. */
static int
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
			mcp_bad_args(m, id, "%s: unknown argument '%s'", tool, key);
			return -1;
		}
	}
	return 0;
}

/* The string argument key of args into *ret (NULL when absent and not
 * required); on a missing or mistyped one, answer and return -1. */
static int
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
static int
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
static int
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

/* ---- Runs: progress -------------------------------------------------- */

/* Send a progress notification for call with message text. */
static void
mcp_progress(struct mcp *m, struct mcp_call *call, const char *text)
{
	call->notes++;
	call->last_note_ms = clock_now_ms();
	mcp_send(m,
		 json_pack("{s:s, s:{s:O, s:I, s:s}}", "method", "notifications/progress", "params",
			   "progressToken", call->token, "progress", call->notes, "message", text));
}

/* Send the output collected since the last progress note, if any. */
static void
mcp_progress_flush(struct mcp *m, struct mcp_call *call)
{
	if (call->note_len == 0)
		return;
	call->note[call->note_len] = '\0';
	mcp_progress(m, call, call->note);
	call->note_len = 0;
	call->note_stream = 0;
}

/* Collect one chunk of the run's output for the next progress note. */
static void
mcp_run_chunk(struct mcp_call *call, const struct airlock_event *ev)
{
	enum airlock_stream stream = airlock_event_stream(ev);
	const void *data;
	size_t len, room, used;
	char *text;
	int n;

	if (call->token == NULL || airlock_event_data(ev, &data, &len) < 0)
		return;
	if (call->note_len >= MCP_NOTE_TEXT)
		return; /* the note is full; the rest of this chunk is in the result */
	if (call->note_stream != (int)stream) {
		n = snprintf(call->note + call->note_len, sizeof(call->note) - call->note_len,
			     "%s%s: ", call->note_len > 0 ? "\n" : "",
			     stream == AIRLOCK_STREAM_STDERR ? "stderr" : "stdout");
		if (n > 0)
			call->note_len += (size_t)n;
		call->note_stream = (int)stream;
	}
	room = MCP_NOTE_TEXT > call->note_len ? MCP_NOTE_TEXT - call->note_len : 0;
	text = mcp_oom(mcp_text_clean(data, len, room, &used));
	memcpy(call->note + call->note_len, text, strlen(text));
	call->note_len += strlen(text);
	if (used < len && call->note_len + 4 < sizeof(call->note)) {
		memcpy(call->note + call->note_len, "...", 3);
		call->note_len += 3;
	}
	free(text);
}

/*
 * Send the progress notes that are due (output collected, or a tick after a
 * second without one: clients that reset their request timeout on progress
 * then wait for a run of any length) and return the milliseconds until the
 * next one is due, or -1 for none.
 */
static int
mcp_progress_due(struct mcp *m, struct mcp_call *list, uint64_t now, int timeout)
{
	struct mcp_call *call;
	char text[96];

	for (call = list; call != NULL; call = call->next) {
		uint64_t until;

		if (call->token == NULL || call->cancelled)
			continue;
		if (now >= call->next_tick_ms) {
			mcp_progress_flush(m, call);
			if (now - call->last_note_ms >= MCP_TICK_MS / 2) {
				if (call->req_id != 0)
					snprintf(text, sizeof(text), "running for %" PRIu64 " s",
						 (now - call->start_ms + 500) / 1000);
				else
					snprintf(text, sizeof(text),
						 "waiting for a free slot for %" PRIu64 " s",
						 (now - call->start_ms + 500) / 1000);
				mcp_progress(m, call, text);
			}
			call->next_tick_ms = now + MCP_TICK_MS;
		}
		if (call->note_len > 0 && now >= call->last_note_ms + MCP_NOTE_MS)
			mcp_progress_flush(m, call);
		until = call->next_tick_ms;
		if (call->note_len > 0 && call->last_note_ms + MCP_NOTE_MS < until)
			until = call->last_note_ms + MCP_NOTE_MS;
		until = until > now ? until - now : 0;
		if (timeout < 0 || until < (uint64_t)timeout)
			timeout = (int)until;
	}
	return timeout;
}

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
	if (airlock_result_cell(res) != 0 &&
	    (json_object_set_new(obj, "cell", json_integer((json_int_t)airlock_result_cell(res))) <
		     0 ||
	     json_object_set_new(obj, "state",
				 json_string(airlock_result_state(res) == AIRLOCK_CELL_KEPT
						     ? "kept"
						     : "lost")) < 0 ||
	     json_object_set_new(obj, "value",
				 airlock_result_value(res) != NULL
					 ? json_string(airlock_result_value(res))
					 : json_null()) < 0))
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

/* A cell's value (text) and rich outputs (images, within the budget). */
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
		if (airlock_result_display_get(res, i, &mime, &data, &len) < 0 ||
		    strcmp(mime, "image/png") != 0)
			continue;
		snprintf(name, sizeof(name), "figure-%zu.png", i + 1);
		if (mcp_content_file(content, budget, name, data, len, len, false) < 0)
			mcp_oom(NULL);
	}
}

/*
 * Answer call with what the run did: a status line, stdout, stderr and its
 * files, within the output budget, and the same as structuredContent. A
 * limit, a sandbox failure or a cancellation is isError.
 */
static void
mcp_run_reply(struct mcp *m, const struct mcp_call *call, const struct airlock_result *res)
{
	enum airlock_outcome outcome = airlock_result_outcome(res);
	const char *oname = airlock_outcome_name(outcome);
	json_t *content = mcp_oom(json_array()), *files = mcp_oom(json_array());
	const void *out, *err;
	size_t out_len, err_len, i, count = airlock_result_artifact_count(res), shown = 0;
	size_t room, max_out, max_err, used;
	struct mcp_budget budget;
	char status[768], words[128], hint[96], *all, *out_text, *err_text, base[128];
	bool is_error = false, out_cut, err_cut;
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
			mcp_limit_words(m, call, AIRLOCK_OUTCOME_MEMORY_LIMIT, words,
					sizeof(words));
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
		mcp_limit_words(m, call, outcome, words, sizeof(words));
		mcp_limit_hint(m, outcome, hint, sizeof(hint));
		snprintf(status, sizeof(status),
			 "%s: the sandbox stopped the code; running the same code again would hit "
			 "the same limit: make it cheaper%s",
			 words, hint);
		is_error = true;
		break;
	case AIRLOCK_OUTCOME_CANCELLED:
		snprintf(status, sizeof(status),
			 "the run was cancelled (by its owner or a "
			 "stopping airlockd)");
		is_error = true;
		break;
	default:
		if (oname != NULL && strcmp(oname, "process_limit") == 0)
			snprintf(status, sizeof(status),
				 "process limit reached: the sandbox refused a fork or a thread "
				 "and stopped the code; use fewer processes or threads");
		else
			snprintf(status, sizeof(status), "the sandbox failed: %s",
				 airlock_result_error(res) != NULL
					 ? airlock_result_error(res)
					 : (oname != NULL ? oname : "unknown outcome"));
		is_error = true;
		break;
	}
	slen = strlen(status);
	snprintf(status + slen, sizeof(status) - slen, " (wall %.2f s, cpu %.2f s)",
		 (double)airlock_result_wall_ms(res) / 1000.0,
		 (double)airlock_result_cpu_ms(res) / 1000.0);
	if (out_len == 0 && err_len == 0 && airlock_result_value(res) == NULL) {
		slen = strlen(status);
		snprintf(status + slen, sizeof(status) - slen, "; no output");
	}
	if (airlock_result_cell(res) != 0) {
		slen = strlen(status);
		snprintf(status + slen, sizeof(status) - slen, "; cell %" PRIu64 ", %s",
			 airlock_result_cell(res),
			 airlock_result_state(res) == AIRLOCK_CELL_KEPT
				 ? "variables kept"
				 : "the interpreter was restarted: variables of earlier cells "
				   "are gone");
	}

	if (count > 0) {
		char *names = mcp_oom(strdup("")), *next;

		for (i = 0; i < count; i++) {
			char *clean;
			const char *name = airlock_result_artifact_name(res, i);

			if (name == NULL)
				continue;
			clean = mcp_oom(mcp_name_clean(name));
			if (asprintf(&next, "%s%s%s (%" PRIu64 " bytes)", names, i > 0 ? ", " : "",
				     clean, airlock_result_artifact_size(res, i)) < 0)
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
	} else
		all = mcp_oom(strdup(status));
	/* A network = proxy run: what it contacted and what was refused. */
	if (airlock_result_has_network(res)) {
		bool oom;
		char *line = mcp_oom(cli_network_text(res, &oom)), *next;

		if (asprintf(&next, "%s\n%s", all, line) < 0)
			mcp_oom(NULL);
		free(all);
		free(line);
		all = next;
	}
	/* The advisory checks' findings (the run went ahead). */
	for (i = 0; i < airlock_result_advisory_count(res); i++) {
		char *next;

		if (asprintf(&next, "%s\nadvisory (not enforced): %s", all,
			     airlock_result_advisory(res, i)) < 0)
			mcp_oom(NULL);
		free(all);
		all = next;
	}
	/* Files past the artifacts limit are never dropped silently. */
	if (airlock_result_artifacts_omitted(res) > 0) {
		char *next;

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

	/* The budget: the status first, then the output, then the files. */
	room = m->budget > strlen(all) + 200 ? m->budget - strlen(all) - 200 : 0;
	/* Needs in output bytes: an invalid byte becomes U+FFFD, three bytes. */
	mcp_split(room, out_len * 3, err_len * 3, &max_out, &max_err);
	out_text = mcp_oom(
		mcp_text_cut(out, out_len, airlock_result_stdout_total(res), max_out, &out_cut));
	err_text = mcp_oom(
		mcp_text_cut(err, err_len, airlock_result_stderr_total(res), max_err, &err_cut));
	used = strlen(out_text) + strlen(err_text);
	snprintf(base, sizeof(base), "airlock://session/%s/", call->session);
	mcp_budget_init(&budget, room > used ? room - used : 0, mcp_since(m, "2025-06-18"),
			call->session[0] != '\0' ? base : NULL);
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
	if (shown < count) {
		char *next;

		if (asprintf(&next,
			     "%s (%zu of the %zu files are not attached: at most %d per result)",
			     all, count - shown, count, MCP_ARTIFACT_BLOCKS_MAX) < 0)
			mcp_oom(NULL);
		free(all);
		all = next;
	}
	json_array_append_new(content, mcp_block_text(all));
	free(all);
	if (out_len > 0 || airlock_result_stdout_total(res) > 0)
		mcp_labelled_block(content, "stdout", out_text);
	if (err_len > 0 || airlock_result_stderr_total(res) > 0)
		mcp_labelled_block(content, "stderr", err_text);
	mcp_cell_content(content, &budget, res);
	json_array_extend(content, files);
	json_decref(files);
	mcp_tool_reply_structured(
		m, call->id, content, is_error,
		mcp_run_structured(call, res, out_text, err_text, out_cut || err_cut));
	free(out_text);
	free(err_text);
}

/* ---- Runs: the calls in flight ---------------------------------------- */

/* Free a call. NULL-safe. */
static void
mcp_call_free(struct mcp_call *call)
{
	if (call == NULL)
		return;
	json_decref(call->id);
	json_decref(call->token);
	airlock_run_req_free(call->req);
	free(call);
}

/* Unlink call from *list. */
static void
mcp_call_unlink(struct mcp_call **list, struct mcp_call *call)
{
	struct mcp_call **p;

	for (p = list; *p != NULL; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			call->next = NULL;
			return;
		}
}

/* Append call to the waiting list (front: to the head, for a retry). */
static void
mcp_call_wait(struct mcp *m, struct mcp_call *call, bool front)
{
	struct mcp_call **p = &m->waiting;

	call->req_id = 0;
	if (front) {
		call->next = m->waiting;
		m->waiting = call;
		return;
	}
	while (*p != NULL)
		p = &(*p)->next;
	call->next = NULL;
	*p = call;
}

/* Answer a call that ended with result res (0) or error r, and free it. */
static void
mcp_call_finish(struct mcp *m, struct mcp_call *call, int r, struct airlock_result *res)
{
	char why[512];

	if (call->token != NULL)
		mcp_progress_flush(m, call);
	if (call->cancelled) {
		/* The MCP spec: a cancelled request SHOULD NOT be answered. */
		mcp_log("%s: request cancelled; not answering it", call->tool);
	} else if (r == -ENOENT && strcmp(call->tool, "run_python_cell") == 0) {
		/* The interpreter session ended (idle, lifetime): the next call opens
		 * a new one. */
		if (strcmp(m->cell_session, call->session) == 0) {
			mcp_session_note(m, m->cell_session, false);
			m->cell_session[0] = '\0';
		}
		mcp_tool_fail(m, call->id,
			      "run_python_cell: the interpreter session had ended (unused too "
			      "long); the next call starts a new interpreter, with no variables");
	} else if (r == -ENOENT && call->session[0] != '\0') {
		mcp_tool_fail(m, call->id,
			      "%s: no such session: %s (it was closed, ended after being idle, "
			      "or never existed); open one with session_open",
			      call->tool, call->session);
	} else if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, call->id, "%s: the run failed: %s", call->tool, why);
	} else
		mcp_run_reply(m, call, res);
	airlock_result_free(res);
	mcp_call_free(call);
}

/* The connection broke: every run in flight on it fails (its result will
 * never come), and the next call connects again. */
static void
mcp_conn_lost(struct mcp *m, int err)
{
	struct mcp_call *call;

	mcp_log("connection to airlockd lost: %s", strerror(-err));
	while ((call = m->calls) != NULL) {
		m->calls = call->next;
		m->ncalls--;
		if (!call->cancelled)
			mcp_tool_fail(
				m, call->id,
				"%s: the connection to airlockd was lost during the run (%s); "
				"whether it ran is unknown; the next call reconnects",
				call->tool, strerror(-err));
		mcp_call_free(call);
	}
	mcp_disconnect(m);
}

/* Send the waiting calls while fewer than --parallel are in flight. */
static void
mcp_start(struct mcp *m)
{
	struct mcp_call *call;
	char why[512];
	int r;

	while (m->waiting != NULL && m->ncalls < m->parallel && !m->out_failed) {
		call = m->waiting;
		if (call->cancelled) {
			m->waiting = call->next;
			mcp_call_free(call);
			continue;
		}
		if (mcp_connect(m, why, sizeof(why)) < 0) {
			/* Nothing can run now: answer every waiting call at once. */
			while ((call = m->waiting) != NULL) {
				m->waiting = call->next;
				mcp_tool_fail(m, call->id, "%s", why);
				mcp_call_free(call);
			}
			return;
		}
		m->waiting = call->next;
		r = airlock_run_submit(m->conn, call->req, &call->req_id);
		if (r < 0) {
			mcp_failure(m, r, why, sizeof(why));
			mcp_tool_fail(m, call->id, "%s: the run was not sent: %s", call->tool, why);
			mcp_call_free(call);
			continue;
		}
		call->next = m->calls;
		m->calls = call;
		m->ncalls++;
	}
}

/* The call in flight with libairlock request id req_id, or NULL. */
static struct mcp_call *
mcp_call_find(struct mcp *m, uint32_t req_id)
{
	struct mcp_call *call;

	for (call = m->calls; call != NULL; call = call->next)
		if (call->req_id == req_id)
			return call;
	return NULL;
}

/* Take what the connection has queued: output for progress notes, and
 * results, each answered as it comes. */
static void
mcp_collect(struct mcp *m)
{
	struct airlock_result *res;
	struct airlock_event *ev;
	struct mcp_call *call;
	uint32_t got;
	int r;

	if (m->conn == NULL)
		return;
	while (airlock_conn_next_event(m->conn, &ev) == 0) {
		call = mcp_call_find(m, airlock_event_request_id(ev));
		if (call != NULL)
			mcp_run_chunk(call, ev);
		airlock_event_free(ev);
	}
	for (;;) {
		got = 0;
		res = NULL;
		r = airlock_conn_next_result(m->conn, &got, &res);
		if (r == -EAGAIN)
			break;
		call = got != 0 ? mcp_call_find(m, got) : NULL;
		if (call == NULL) {
			airlock_result_free(res); /* a run of the probe, or nothing */
			if (got == 0) {
				if (m->calls != NULL)
					mcp_conn_lost(m, r);
				else
					mcp_disconnect(m);
				return;
			}
			continue;
		}
		mcp_call_unlink(&m->calls, call);
		m->ncalls--;
		if (r == -EBUSY && m->ncalls > 0 && !call->cancelled) {
			/* The daemon's queue is full: try again when a run ends. */
			mcp_call_wait(m, call, true);
			continue;
		}
		mcp_call_finish(m, call, r, res);
	}
}

/* Honour a notifications/cancelled: cancel the run of the request named, or
 * drop it while it waits. */
static void
mcp_cancelled(struct mcp *m, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct mcp_call *call;
	int r;

	if (rid == NULL)
		return;
	for (call = m->waiting; call != NULL; call = call->next)
		if (json_equal(rid, call->id))
			call->cancelled = true; /* mcp_start() drops it */
	for (call = m->calls; call != NULL; call = call->next) {
		if (!json_equal(rid, call->id) || call->cancelled)
			continue;
		call->cancelled = true;
		r = airlock_cancel(m->conn, call->req_id);
		if (r < 0 && r != -ENOENT)
			mcp_log("cancel: %s", strerror(-r));
	}
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

/*
 * run_python and run_shell: check the arguments, build the request and queue
 * the call; mcp_start() sends it and mcp_collect() answers it.
 */
static void
mcp_tool_run(struct mcp *m, json_t *id, json_t *args, json_t *token, const char *tool,
	     const char *runtime, const char *key)
{
	const char *allowed[] = {key,		"files",     "timeout_seconds",
				 "cpu_seconds", "memory_mb", "session",
				 "profile",	"runtime",   NULL};
	const char *const cell_allowed[] = {key, "timeout_seconds", "cpu_seconds", NULL};
	bool cell = strcmp(tool, "run_python_cell") == 0;
	struct mcp_call *call = NULL;
	const char *code, *session, *profile, *name;
	uint64_t wall_ms, cpu_ms, memory_mb, ceiling;
	json_t *files, *v;
	int r;

	/* Only run_python chooses a runtime (mcp_tool_run_python read it). */
	if (strcmp(tool, "run_python") != 0)
		allowed[7] = NULL;
	if (mcp_args_known(m, id, tool, args, cell ? cell_allowed : allowed) < 0 ||
	    mcp_arg_string(m, id, tool, args, key, true, &code) < 0 ||
	    mcp_arg_session(m, id, tool, args, false, &session) < 0 ||
	    mcp_arg_string(m, id, tool, args, "profile", false, &profile) < 0 ||
	    mcp_arg_number(m, id, tool, args, "timeout_seconds", MCP_TIMEOUT_MAX, 1000.0, "seconds",
			   &wall_ms) < 0 ||
	    mcp_arg_number(m, id, tool, args, "cpu_seconds", MCP_TIMEOUT_MAX, 1000.0, "seconds",
			   &cpu_ms) < 0 ||
	    mcp_arg_number(m, id, tool, args, "memory_mb", 1024.0 * 1024.0, 1.0, "MiB",
			   &memory_mb) < 0)
		return;
	/* A cell runs in this server's interpreter session (run_python_cell). */
	if (cell)
		session = m->cell_session;
	if (profile != NULL && !rules_profile_name_valid(profile)) {
		mcp_bad_args(m, id,
			     "%s: argument 'profile' must be a profile name (1 to 32 of a-z, 0-9, "
			     "'-', '_'; the schema lists them)",
			     tool);
		return;
	}
	files = json_object_get(args, "files");
	if (files != NULL && !json_is_object(files)) {
		mcp_bad_args(m, id,
			     "%s: argument 'files' must be an object of file name to content",
			     tool);
		return;
	}
	json_object_foreach(files, name, v)
	{
		if (!json_is_string(v)) {
			mcp_bad_args(m, id, "%s: files: '%s' must be a string", tool, name);
			return;
		}
	}
	call = mcp_oom(calloc(1, sizeof(*call)));
	call->tool = tool;
	call->wall_ms = wall_ms;
	call->cpu_ms = cpu_ms;
	call->memory_bytes = memory_mb * 1024 * 1024;
	/* A longer timeout says the code is expected to work longer: let it use
	 * the CPU for as long (within the daemon's, or the profile's, ceiling)
	 * unless told. */
	if (cpu_ms == 0 && wall_ms != 0 && m->info != NULL &&
	    wall_ms > mcp_cpu_limit(m, profile, false)) {
		ceiling = mcp_cpu_limit(m, profile, true);
		call->cpu_ms = ceiling != 0 && wall_ms > ceiling ? ceiling : wall_ms;
	}
	r = airlock_run_req_new(&call->req);
	if (r == 0)
		r = airlock_run_req_set_runtime(call->req, runtime);
	if (r == 0)
		r = airlock_run_req_set_code(call->req, code, strlen(code));
	if (r == 0 && call->wall_ms != 0)
		r = airlock_run_req_set_limit(call->req, AIRLOCK_LIMIT_WALL_MS, call->wall_ms);
	if (r == 0 && call->cpu_ms != 0)
		r = airlock_run_req_set_limit(call->req, AIRLOCK_LIMIT_CPU_MS, call->cpu_ms);
	if (r == 0 && call->memory_bytes != 0)
		r = airlock_run_req_set_limit(call->req, AIRLOCK_LIMIT_MEMORY_BYTES,
					      call->memory_bytes);
	if (r == 0 && profile != NULL)
		r = airlock_run_req_set_profile(call->req, profile);
	if (r == 0 && session != NULL) {
		r = airlock_run_req_set_session(call->req, session);
		snprintf(call->session, sizeof(call->session), "%s", session);
	}
	if (r == 0 && cell)
		r = airlock_run_req_set_cell(call->req, true);
	/* A cell's output comes with its result (an interpreter session does
	 * not stream). */
	if (r == 0 && !cell)
		r = airlock_run_req_set_stream(call->req, true);
	if (r < 0) {
		mcp_tool_fail(m, id, "%s: could not build the request: %s", tool, strerror(-r));
		goto fail;
	}
	json_object_foreach(files, name, v)
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
			goto fail;
		}
	}
	call->id = json_incref(id);
	call->token = json_incref(token);
	call->start_ms = call->last_note_ms = clock_now_ms();
	call->next_tick_ms = call->start_ms + MCP_TICK_MS;
	mcp_call_wait(m, call, false);
	return;
fail:
	mcp_call_free(call);
}

/* ---- Tools ----------------------------------------------------------- */

/* A Python runtime's name: "python" or "python-..." (python-site: the
 * system's site-packages); run_python never runs another language. */
static bool
mcp_python_runtime_valid(const char *name)
{
	return rules_runtime_name_valid(name) && strncmp(name, "python", 6) == 0 &&
	       (name[6] == '\0' || name[6] == '-');
}

static void
mcp_tool_run_python(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	const char *runtime = m->python_runtime;

	if (mcp_arg_string(m, id, "run_python", args, "runtime", false, &runtime) < 0)
		return;
	if (runtime == NULL)
		runtime = m->python_runtime;
	if (!mcp_python_runtime_valid(runtime)) {
		mcp_bad_args(m, id,
			     "run_python: runtime '%s' is not a Python runtime (python, "
			     "python-site, ...)",
			     runtime);
		return;
	}
	mcp_tool_run(m, id, args, token, "run_python", runtime, "code");
}

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

static void
mcp_tool_run_python_cell(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	char why[512];

	if (mcp_cell_session(m, why, sizeof(why)) < 0) {
		mcp_tool_fail(m, id, "run_python_cell: cannot start the interpreter: %s", why);
		return;
	}
	mcp_tool_run(m, id, args, token, "run_python_cell", m->python_runtime, "code");
}

static void
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
	if (mcp_tool_connect(m, id) < 0)
		return;
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
	mcp_tool_reply_structured(m, id, mcp_oom(json_pack("[o]", mcp_block_text(text))), false,
				  json_pack("{s:s}", "session", sid));
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

static void
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

/* A file tool's arguments: only those allowed, a session, and "path"
 * (required or not). 0, or -1 once the call is answered. */
static int
mcp_file_args(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *const *allowed,
	      bool path_required, const char **ret_sid, const char **ret_path)
{
	if (mcp_args_known(m, id, tool, args, allowed) < 0 ||
	    mcp_arg_session(m, id, tool, args, true, ret_sid) < 0 ||
	    mcp_arg_string(m, id, tool, args, "path", path_required, ret_path) < 0)
		return -1;
	return 0;
}

static void
mcp_tool_write_file(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", "content", NULL};
	const char *sid, *path, *content;
	char *text;
	json_t *v;
	int r;

	if (mcp_file_args(m, id, "write_file", args, allowed, true, &sid, &path) < 0 ||
	    mcp_arg_string(m, id, "write_file", args, "content", true, &content) < 0)
		return;
	if (mcp_tool_connect(m, id) < 0)
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

static void
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

	if (mcp_file_args(m, id, "read_file", args, allowed, true, &sid, &path) < 0)
		return;
	if (mcp_tool_connect(m, id) < 0)
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

static void
mcp_tool_list_files(struct mcp *m, json_t *id, json_t *args, json_t *token)
{
	static const char *const allowed[] = {"session", "path", NULL};
	struct airlock_file_list *list = NULL;
	const char *sid, *path;
	char *text = NULL, *next;
	json_t *entries;
	size_t i, n, listed = 0;
	int r;

	if (mcp_file_args(m, id, "list_files", args, allowed, false, &sid, &path) < 0)
		return;
	if (mcp_tool_connect(m, id) < 0)
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
static void
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
static void
mcp_resources_list(struct mcp *m, json_t *id, json_t *params)
{
	mcp_reply(m, id, json_pack("{s:[]}", "resources"));
}

static void
mcp_resource_templates(struct mcp *m, json_t *id, json_t *params)
{
	mcp_reply(m, id,
		  json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "resourceTemplates", "uriTemplate",
			    "airlock://session/{session}/{+path}", "name", "session-file", "title",
			    "A file of a session's workspace", "description",
			    "A file in the workspace of a live session this user opened "
			    "(session_open); the links in run results point here."));
}

/* ---- What the sandbox offers ------------------------------------------ */

/* Run code in runtime (blocking, bounded) and return its stdout, or NULL. */
static char *
mcp_probe_run(struct mcp *m, const char *runtime, const char *code)
{
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	char *text = NULL;
	const void *out;
	size_t len;
	int r;

	r = airlock_run_req_new(&req);
	if (r == 0)
		r = airlock_run_req_set_runtime(req, runtime);
	if (r == 0)
		r = airlock_run_req_set_code(req, code, strlen(code));
	if (r == 0)
		r = airlock_run_req_set_limit(req, AIRLOCK_LIMIT_WALL_MS, MCP_PROBE_MS / 2);
	if (r == 0) {
		airlock_conn_set_timeout(m->conn, MCP_PROBE_MS);
		r = airlock_run(m->conn, req, &res);
		airlock_conn_set_timeout(m->conn, 60000);
	}
	if (r == 0 && airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
	    airlock_result_exit_code(res) == 0) {
		airlock_result_stdout(res, &out, &len);
		text = mcp_oom(mcp_text_clean(out, len, 2000, NULL));
		while (text[0] != '\0' && strchr(" \n", text[strlen(text) - 1]) != NULL)
			text[strlen(text) - 1] = '\0';
	} else if (r < 0)
		mcp_log("probe of %s: %s", runtime, strerror(-r));
	airlock_result_free(res);
	airlock_run_req_free(req);
	return text;
}

/*
 * Find out once what the runtimes offer (the Python version and its
 * packages beyond the standard library; the commands the shell finds), so
 * that the tool descriptions tell the model what it can use instead of
 * letting it try `pip install` in a sandbox without network.
 */
static void
mcp_probe(struct mcp *m)
{
	char why[512];

	if (m->probed || mcp_connect(m, why, sizeof(why)) < 0)
		return;
	m->probed = true;
	m->env_python = mcp_probe_run(
		m, "python",
		"import sys, pkgutil\n"
		"std = set(getattr(sys, 'stdlib_module_names', ()))\n"
		"names = sorted({x.name for x in pkgutil.iter_modules()\n"
		"                if not x.name.startswith('_') and x.name not in std})\n"
		"print('Python %d.%d.%d' % sys.version_info[:3])\n"
		"print(', '.join(names[:60]) + (', ...' if len(names) > 60 else ''))\n");
	m->env_sh = mcp_probe_run(m, "sh",
				  "for c in python3 perl awk sed grep find sort jq bc dc tar gzip "
				  "xz zip unzip sqlite3 git gcc cc make node curl; do "
				  "command -v $c >/dev/null 2>&1 && printf '%s ' $c; done; echo");
	mcp_collect(m); /* what the runs in flight sent meanwhile */
}

/* ---- The tool list ---------------------------------------------------- */

/* Input and output schemas shared by the run tools. */
#define MCP_RUN_LIMITS                                                                             \
	"\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"                         \
	"\"description\":\"Wall-clock limit of the run in seconds (default: the daemon's, "        \
	"usually 10). Raising it also raises the CPU-time limit to the same value unless "         \
	"cpu_seconds is given.\"},"                                                                \
	"\"cpu_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"                             \
	"\"description\":\"CPU-time limit in seconds, all processes and threads together "         \
	"(default: the daemon's, usually 5)\"},"                                                   \
	"\"memory_mb\":{\"type\":\"number\",\"exclusiveMinimum\":0,"                               \
	"\"description\":\"Memory limit in MiB (default: the daemon's, usually 256)\"},"           \
	"\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\","                         \
	"\"description\":\"Run in this session's workspace (from session_open) instead of a "      \
	"fresh one\"}"
#define MCP_RUN_FILES                                                                              \
	"\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"           \
	"\"description\":\"Input files placed in the working directory before the code runs: "     \
	"relative file name to text content (at most 64)\"},"
#define MCP_RUN_OUTPUT                                                                             \
	"{\"type\":\"object\",\"properties\":{"                                                    \
	"\"outcome\":{\"type\":\"string\",\"description\":\"exited, signaled, wall_limit, "        \
	"cpu_limit, memory_limit, process_limit, error or cancelled\"},"                           \
	"\"exit_code\":{\"type\":[\"integer\",\"null\"]},"                                         \
	"\"signal\":{\"type\":[\"integer\",\"null\"]},"                                            \
	"\"wall_seconds\":{\"type\":\"number\"},\"cpu_seconds\":{\"type\":\"number\"},"            \
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"                       \
	"\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"},"         \
	"\"output_cut\":{\"type\":\"boolean\"},"                                                   \
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"            \
	"\"name\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}},"                         \
	"\"required\":[\"name\",\"size\"]}},"                                                      \
	"\"files_omitted\":{\"type\":\"integer\",\"description\":\"files left out: past the "      \
	"artifacts limit\"},\"files_omitted_bytes\":{\"type\":\"integer\"},"                       \
	"\"session\":{\"type\":[\"string\",\"null\"]},"                                            \
	"\"network\":{\"type\":\"object\",\"description\":\"a profile with network = proxy: "      \
	"bytes_up, bytes_down, connections, refused, contacted (host:port), refusals "             \
	"({host, reason})\"},"                                                                     \
	"\"advisories\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"                      \
	"\"description\":\"what the daemon's advisory checks found (a profile's blocked "          \
	"imports); the run was not refused\"}},"                                                   \
	"\"required\":[\"outcome\",\"exit_code\",\"wall_seconds\",\"cpu_seconds\",\"stdout\","     \
	"\"stderr\",\"files\"]}"
#define MCP_SESSION_ARG "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"}"

/* The tools: name, title, description, schemas, annotations (readOnly,
 * destructive, idempotent; none is open-world: the sandbox has no network). */
static const struct mcp_tool {
	const char *name;
	const char *title;
	const char *description;
	const char *input;
	const char *output; /* NULL: none */
	bool read_only, destructive, idempotent;
	void (*fn)(struct mcp *m, json_t *id, json_t *args, json_t *token);
} mcp_tools[] = {
	{"run_python", "Run Python code in a sandbox",
	 "Run Python 3 code as a script in a fresh, single-use sandbox: no network, no access to "
	 "the host, time, CPU and memory limited. Returns the exit code, stdout and stderr (cut "
	 "to fit, saying what was cut) and the files the code created: images (PNG, JPEG, GIF, "
	 "WebP) as image content, other files as embedded resources. A limit that fires is an "
	 "error naming the limit. Print what you want to see. Calls run in parallel. With "
	 "'session' the code runs in that session's workspace, whose files persist between "
	 "runs (variables do not).",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"code\":{\"type\":\"string\",\"description\":\"Python 3 source to run as a "
	 "script\"},\"runtime\":{\"type\":\"string\",\"description\":\"python: the standard "
	 "library only; python-site: also the system's packages (numpy, pandas, matplotlib, "
	 "scipy where installed; matplotlib draws with Agg, save figures as PNG). Default: the "
	 "server's --python-runtime, else python\"}," MCP_RUN_FILES MCP_RUN_LIMITS
	 "},\"required\":[\"code\"],\"additionalProperties\":false}",
	 MCP_RUN_OUTPUT, false, false, false, mcp_tool_run_python},
	{"run_shell", "Run a shell script in a sandbox",
	 "Run a POSIX shell script (/bin/sh) in a fresh, single-use sandbox: no network, no "
	 "access to the host, time, CPU and memory limited. Returns the exit code, stdout and "
	 "stderr (cut to fit, saying what was cut) and the files the script created, like "
	 "run_python. Calls run in parallel. With 'session' it runs in that session's "
	 "workspace.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"command\":{\"type\":\"string\",\"description\":\"Shell script to run with "
	 "/bin/sh\"}," MCP_RUN_FILES MCP_RUN_LIMITS
	 "},\"required\":[\"command\"],\"additionalProperties\":false}",
	 MCP_RUN_OUTPUT, false, false, false, mcp_tool_run_shell},
	{"run_python_cell", "Run a Python cell (state kept)",
	 "Run Python code in this server's one persistent interpreter, like a notebook cell: "
	 "variables, imports and functions stay from one call to the next (started on the "
	 "first call, in a sandbox without network; time, CPU and memory limited). Returns "
	 "stdout, stderr, the repr of a trailing expression as 'value', and matplotlib "
	 "figures left open as images. A cell over its time limit is interrupted "
	 "(KeyboardInterrupt) and the variables stay; one that does not stop, or runs out of "
	 "memory, restarts the interpreter empty (the result says so). Calls run one at a "
	 "time. reset_python starts over.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"code\":{\"type\":\"string\",\"description\":\"Python 3 code, run in the "
	 "interpreter's globals\"},"
	 "\"timeout_seconds\":{\"type\":\"number\",\"description\":\"Wall-clock limit of "
	 "this cell\"},\"cpu_seconds\":{\"type\":\"number\",\"description\":\"CPU-time "
	 "limit of this cell\"}},\"required\":[\"code\"],\"additionalProperties\":false}",
	 NULL, false, false, false, mcp_tool_run_python_cell},
	{"reset_python", "Reset the Python interpreter",
	 "End run_python_cell's interpreter: every variable is gone, and the next "
	 "run_python_cell starts a new, empty one.",
	 "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", NULL, false,
	 true, true, mcp_tool_reset_python},
	{"session_open", "Open a session",
	 "Open a session: a workspace that keeps its files between runs (each run is still a "
	 "fresh sandbox). Returns the session id to pass as 'session' to the other tools. "
	 "Close it with session_close when done.",
	 "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	 "{\"type\":\"object\",\"properties\":{\"session\":{\"type\":\"string\"}},"
	 "\"required\":[\"session\"]}",
	 false, false, false, mcp_tool_session_open},
	{"session_close", "Close a session",
	 "Close a session: its files are deleted and a run in it is stopped.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG "},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 NULL, false, true, true, mcp_tool_session_close},
	{"write_file", "Write a file into a session",
	 "Write a text file into a session's workspace (replacing it; parent directories are "
	 "made). The path is relative to the workspace.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative path in the workspace\"},"
	 "\"content\":{\"type\":\"string\",\"description\":\"The file's text\"}},"
	 "\"required\":[\"session\",\"path\",\"content\"],\"additionalProperties\":false}",
	 NULL, false, true, true, mcp_tool_write_file},
	{"read_file", "Read a file of a session",
	 "Read a file of a session's workspace: text (cut to fit, saying so), an image as image "
	 "content, other files as an embedded resource.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative path in the workspace\"}},"
	 "\"required\":[\"session\",\"path\"],\"additionalProperties\":false}",
	 NULL, true, false, true, mcp_tool_read_file},
	{"list_files", "List files of a session",
	 "List a directory of a session's workspace (default: its top): kind, size and name "
	 "of each entry.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative directory (default: the "
	 "workspace)\"}},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 "{\"type\":\"object\",\"properties\":{\"entries\":{\"type\":\"array\",\"items\":{"
	 "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
	 "\"kind\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}}}},"
	 "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"entries\",\"truncated\"]}",
	 true, false, true, mcp_tool_list_files},
	{NULL, NULL, NULL, NULL, NULL, false, false, false, NULL},
};

/*
 * What the run tools' descriptions say of the network: none, or, for each
 * profile of this user with network = proxy, the hosts its runs may reach
 * through the daemon's proxy. A new string.
 */
static char *
mcp_network_note(const struct mcp *m, const char *none)
{
	size_t i, k, n = m->info != NULL ? airlock_info_profile_count(m->info) : 0;
	char *text = mcp_oom(strdup(none)), *next;

	for (i = 0; i < n; i++) {
		if (!airlock_info_profile_network(m->info, i))
			continue;
		if (asprintf(&next,
			     "%s With profile '%s' the code may reach, through the daemon's "
			     "HTTP proxy (HTTP_PROXY and HTTPS_PROXY are set), only:",
			     text, airlock_info_profile_name(m->info, i)) < 0)
			mcp_oom(NULL);
		free(text);
		text = next;
		for (k = 0; k < airlock_info_profile_allow_count(m->info, i); k++) {
			if (asprintf(&next, "%s%s %s", text, k > 0 ? "," : "",
				     airlock_info_profile_allow(m->info, i, k, NULL)) < 0)
				mcp_oom(NULL);
			free(text);
			text = next;
		}
		if (asprintf(&next, "%s.", text) < 0)
			mcp_oom(NULL);
		free(text);
		text = next;
	}
	return text;
}

/* A tool's description, with what the probe found for the run tools. */
static char *
mcp_tool_description(const struct mcp *m, const struct mcp_tool *t)
{
	char *text, *net;
	int r = -1;

	if (strcmp(t->name, "run_python") == 0 && m->env_python != NULL) {
		const char *nl = strchr(m->env_python, '\n');
		const char *packages = nl != NULL ? nl + 1 : "";

		r = asprintf(&text, "%s Environment: %.*s%s%s.%s", t->description,
			     nl != NULL ? (int)(nl - m->env_python) : (int)strlen(m->env_python),
			     m->env_python,
			     packages[0] != '\0'
				     ? " with the standard library and these packages: "
				     : " with the standard library only (no third-party "
				       "packages)",
			     packages,
			     (net = mcp_network_note(
				      m, " There is no network: nothing can be installed (no pip "
					 "install).")));
		free(net);
	} else if (strcmp(t->name, "run_shell") == 0 && m->env_sh != NULL) {
		r = asprintf(&text, "%s Commands found on the PATH include: %s.%s", t->description,
			     m->env_sh[0] != '\0' ? m->env_sh : "(none probed)",
			     (net = mcp_network_note(m, " There is no network: nothing can be "
							"downloaded or installed.")));
		free(net);
	}
	if (r < 0)
		text = mcp_oom(strdup(t->description));
	return text;
}

/* Append to *text (an asprintf string) what profile i lets a run do: its main
 * limits, its policy switches, its network, its mounts and advisory checks. */
static void
mcp_profile_text(const struct mcp *m, size_t i, char **text)
{
	const struct airlock_info *info = m->info;
	size_t k, nb = airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS);
	size_t nm = airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_MOUNTS);
	size_t nh = airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS);
	char *next;

	if (asprintf(&next,
		     "%s '%s': %" PRIu64 " s wall, %" PRIu64 " MiB memory, %" PRIu64
		     " processes; %s; %s; %s",
		     *text, airlock_info_profile_name(info, i),
		     airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_WALL_MS) / 1000,
		     airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_MEMORY_BYTES) >> 20,
		     airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_PROCESSES),
		     airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_FILE_WRITE) == 0
			     ? "file_write off (workspace and /tmp read-only: output only through "
			       "stdout and stderr)"
			     : "file_write on",
		     airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_SUBPROCESS) == 0
			     ? "subprocess off (one process: fork, threads and exec fail)"
			     : "subprocess on",
		     airlock_info_profile_network(info, i) ? "network through the daemon's proxy"
							   : "no network") < 0)
		mcp_oom(NULL);
	free(*text);
	*text = next;
	for (k = 0; k < nm; k++) {
		if (asprintf(&next, "%s%s%s", *text, k == 0 ? "; read-only mounts: " : ", ",
			     airlock_info_profile_list(info, i, AIRLOCK_PROFILE_MOUNTS, k)) < 0)
			mcp_oom(NULL);
		free(*text);
		*text = next;
	}
	for (k = 0; k < nh; k++) {
		if (asprintf(&next, "%s%s%s", *text, k == 0 ? "; not there in its runs: " : ", ",
			     airlock_info_profile_list(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS, k)) <
		    0)
			mcp_oom(NULL);
		free(*text);
		*text = next;
	}
	for (k = 0; k < nb; k++) {
		if (asprintf(&next, "%s%s%s", *text,
			     k == 0 ? "; imports of these are reported, not blocked: " : ", ",
			     airlock_info_profile_list(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS,
						       k)) < 0)
			mcp_oom(NULL);
		free(*text);
		*text = next;
	}
	if (asprintf(&next, "%s.", *text) < 0)
		mcp_oom(NULL);
	free(*text);
	*text = next;
}

/*
 * A run tool's input schema gains "profile", an enum of the profiles the
 * daemon's info lists for this user (none listed: no such argument offered),
 * described by what each lets a run do, switches and limits.
 */
static void
mcp_schema_profiles(const struct mcp *m, const struct mcp_tool *t, json_t *schema)
{
	json_t *names, *prop;
	size_t i, n = m->info != NULL ? airlock_info_profile_count(m->info) : 0;
	const char *def = NULL;
	char *text;

	if (n == 0 || (strcmp(t->name, "run_python") != 0 && strcmp(t->name, "run_shell") != 0))
		return;
	names = mcp_oom(json_array());
	for (i = 0; i < n; i++) {
		json_array_append_new(names,
				      mcp_oom(json_string(airlock_info_profile_name(m->info, i))));
		if (airlock_info_profile_is_default(m->info, i))
			def = airlock_info_profile_name(m->info, i);
	}
	if (asprintf(&text,
		     "The daemon's named policy for the run (default: %s). Its limits "
		     "are the defaults and the most the other arguments may ask; its switches "
		     "are enforced by the kernel.",
		     def != NULL ? def : "the daemon's") < 0)
		mcp_oom(NULL);
	for (i = 0; i < n; i++)
		mcp_profile_text(m, i, &text);
	prop = mcp_oom(
		json_pack("{s:s, s:o, s:s}", "type", "string", "enum", names, "description", text));
	free(text);
	json_object_set_new(json_object_get(schema, "properties"), "profile", prop);
}

/* Parse one of the schemas above (a bug if it does not parse). */
static json_t *
mcp_schema(const char *tool, const char *text)
{
	json_t *schema = json_loads(text, 0, NULL);

	if (schema == NULL) {
		mcp_log("tool %s: bad schema", tool); /* a bug */
		abort();
	}
	return schema;
}

static void
mcp_tools_list(struct mcp *m, json_t *id, json_t *params)
{
	json_t *tools = mcp_oom(json_array());
	size_t i;

	mcp_probe(m);
	for (i = 0; mcp_tools[i].name != NULL; i++) {
		const struct mcp_tool *t = &mcp_tools[i];
		char *description = mcp_tool_description(m, t);
		json_t *input = mcp_schema(t->name, t->input);
		json_t *tool;

		mcp_schema_profiles(m, t, input);
		tool = mcp_oom(json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}",
					 "name", t->name, "title", t->title, "description",
					 description, "inputSchema", input, "annotations", "title",
					 t->title, "readOnlyHint", t->read_only, "destructiveHint",
					 t->destructive, "idempotentHint", t->idempotent,
					 "openWorldHint", false));

		if (t->output != NULL && mcp_since(m, "2025-06-18"))
			json_object_set_new(tool, "outputSchema", mcp_schema(t->name, t->output));
		json_array_append_new(tools, tool);
		free(description);
	}
	mcp_reply(m, id, json_pack("{s:o}", "tools", tools));
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
			   mcp_python_runtime_valid(v)) {
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

int
mcp_main(const char *socket_path, int argc, char **argv)
{
	struct mcp m = {.socket = socket_path,
			.version = mcp_versions[0],
			.parallel = MCP_PARALLEL_DEFAULT,
			.budget = MCP_BUDGET_DEFAULT,
			.python_runtime = "python",
			.sigfd = -1};
	struct mcp_line *line;
	struct mcp_call *call;
	struct pollfd pfd[3];
	sigset_t stop;
	int status = 0, timeout;

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
	mcp_log("serving MCP on stdio (airlockd at %s, %u runs at once)", mcp_socket_path(&m),
		m.parallel);
	for (;;) {
		while (!m.out_failed && (line = mcp_take(&m)) != NULL) {
			if (line->msg != NULL)
				mcp_handle(&m, line->msg);
			else if (line->id != NULL)
				mcp_error(&m, line->id, MCP_ERR_INVALID, "invalid request: %s",
					  line->error);
			else
				mcp_error(&m, NULL, MCP_ERR_PARSE, "parse error: %s", line->error);
			mcp_line_free(line);
		}
		mcp_start(&m);
		mcp_collect(&m);
		if (m.stop_signal != 0 || m.out_failed)
			break;
		if (m.in_eof && m.calls == NULL && m.waiting == NULL)
			break;
		timeout = mcp_progress_due(&m, m.calls, clock_now_ms(), -1);
		timeout = mcp_progress_due(&m, m.waiting, clock_now_ms(), timeout);
		pfd[0] = (struct pollfd){.fd = m.in_eof ? -1 : STDIN_FILENO, .events = POLLIN};
		pfd[1] = (struct pollfd){
			.fd = m.conn != NULL && m.calls != NULL ? airlock_conn_fd(m.conn) : -1,
			.events = POLLIN};
		pfd[2] = (struct pollfd){.fd = m.sigfd, .events = POLLIN};
		if (poll(pfd, 3, timeout) < 0) {
			if (errno == EINTR)
				continue;
			mcp_log("poll: %s", strerror(errno));
			break;
		}
		if (pfd[2].revents != 0) {
			struct signalfd_siginfo si;

			if (read(m.sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				m.stop_signal = (int)si.ssi_signo;
		}
		if (pfd[1].revents != 0) {
			int r = airlock_conn_process(m.conn);

			if (r < 0)
				mcp_log("airlockd: %s",
					strerror(-r)); /* mcp_collect() fails the runs */
		}
		if (pfd[0].revents != 0)
			mcp_read_input(&m);
	}
	if (m.stop_signal != 0)
		mcp_log("%s: stopping (%zu runs in flight, %s)", strsignal(m.stop_signal), m.ncalls,
			"closing the sessions opened here");
	/* Runs still in flight are abandoned with the connection: the daemon
	 * ends them; runs in a session end with it. */
	while ((call = m.calls) != NULL) {
		m.calls = call->next;
		mcp_call_free(call);
	}
	while ((call = m.waiting) != NULL) {
		m.waiting = call->next;
		mcp_call_free(call);
	}
	while ((line = mcp_take(&m)) != NULL)
		mcp_line_free(line);
	mcp_close_sessions(&m);
	mcp_disconnect(&m);
	if (m.sigfd >= 0)
		close(m.sigfd);
	free(m.env_python);
	free(m.env_sh);
	free(m.in);
	return 0;
}
