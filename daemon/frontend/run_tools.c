/* run_tools.c: the frontend's end of the tool bridge (run_tools.h). */
#include "run_tools.h"

#include <assert.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "admit_facts.h"
#include "clock.h"
#include "jsonscan.h"
#include "log.h"
#include "rules.h"
#include "run.h"
#include "strv.h"
#include "xalloc.h"
#include "compiler.h"
#include "xevent.h"

/* A call line: its args plus the envelope ({"id":..,"tool":"..","args":}). */
#define RT_LINE_MAX (PROTO_TOOL_BYTES_MAX + 256)

struct rt_conn;

/* One call relayed to the client, waiting for its tool_reply. */
struct rt_call {
	TAILQ_ENTRY(rt_call) entry;
	struct run_tools *t;
	struct rt_conn *conn; /* NULL once the caller's connection closed */
	uint32_t call;
	uint64_t code_id;
	size_t rec; /* index in t->rec, or SIZE_MAX when not listed */
	struct timespec t0;
	struct event *timer;
};

/* One connection of the code. */
struct rt_conn {
	struct run_tools *t;
	int fd;
	struct event *rev, *wev;
	char *in;
	size_t inlen;
	char *out;
	size_t outlen, outoff;
	unsigned npending, malformed;
	bool closing; /* write what is queued, then close */
};

struct run_tools {
	struct run *r;
	struct proto_tool *decl;
	size_t ndecl;
	int lfd;
	struct event *aev;
	struct rt_conn *conns[RUN_TOOLS_CONNS_MAX];
	TAILQ_HEAD(, rt_call) pending;
	uint64_t lines;	    /* call lines read, whatever became of them */
	uint32_t next_call; /* calls relayed to the client */
	uint64_t refused;
	struct proto_tool_record rec[PROTO_TOOL_CALLS_LISTED_MAX];
	char recname[PROTO_TOOL_CALLS_LISTED_MAX][PROTO_TOOL_NAME_MAX + 1];
	size_t nrec;
	uint64_t omitted;
	bool closed;
};

/*
 * The code a refused or failed call gets (the code's vocabulary): the
 * outcome's wire name, but "failed" for an error and "unavailable" for an
 * abandoned call.
 */
static const char *
rt_code(enum proto_tool_outcome oc)
{
	switch (oc) {
	case PROTO_TOOL_ERROR:
		return "failed";
	case PROTO_TOOL_ABANDONED:
		return "unavailable";
	default:
		return proto_tool_outcome_name(oc);
	}
}

static void rt_conn_update(struct rt_conn *k);
static void rt_conn_close(struct rt_conn *k);

static char *
rt_strdup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

struct run_tools *
run_tools_new(struct run *r, const struct proto_tool *tools, size_t n)
{
	struct run_tools *t;
	size_t i;

	if (n == 0)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->decl = xcalloc(n, sizeof(*t->decl));
	for (i = 0; i < n; i++)
		t->decl[i].name = rt_strdup(tools[i].name);
	t->ndecl = n;
	t->r = r;
	t->lfd = -1;
	TAILQ_INIT(&t->pending);
	return t;
}

int
run_tools_env(const struct proto_run *req, struct plan_env *env)
{
	static const char *const keys[] = {"AIRLOCK_TOOLS=", "AIRLOCK_TOOL_NAMES=", "PATH="};
	char *kv[3] = {NULL, NULL, NULL};
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	size_t i, j, len = 0;
	char *p;

	for (i = 0; i < req->ntools; i++)
		len += strlen(req->tools[i].name) + 1;
	for (j = 0; j < env->envc; j++)
		if (strncmp(env->envp[j], "PATH=", 5) == 0)
			path = env->envp[j] + 5;
	if (asprintf(&kv[0], "AIRLOCK_TOOLS=%s", RUN_TOOLS_SOCK) < 0)
		kv[0] = NULL;
	kv[1] = malloc(len + sizeof("AIRLOCK_TOOL_NAMES="));
	if (asprintf(&kv[2], "PATH=/run/tools:%s", path) < 0)
		kv[2] = NULL;
	if (kv[0] == NULL || kv[1] == NULL || kv[2] == NULL ||
	    env->nowned + 3 > sizeof(env->owned) / sizeof(env->owned[0]) + 0 ||
	    env->envc + 3 > PLAN_ENV_MAX) {
		for (i = 0; i < 3; i++)
			free(kv[i]);
		return -ENOMEM;
	}
	p = kv[1] + strlen(strcpy(kv[1], "AIRLOCK_TOOL_NAMES="));
	for (i = 0; i < req->ntools; i++)
		p += sprintf(p, "%s%s", i > 0 ? "," : "", req->tools[i].name);
	for (i = 0; i < 3; i++) {
		size_t kl = strlen(keys[i]);

		env->owned[env->nowned++] = kv[i];
		for (j = 0; j < env->envc; j++)
			if (strncmp(env->envp[j], keys[i], kl) == 0)
				break;
		env->envp[j] = kv[i];
		if (j == env->envc)
			env->envc++;
	}
	env->envp[env->envc] = NULL;
	return 0;
}

/* List a call in the result; SIZE_MAX when past the listed ones. */
static size_t
rt_record(struct run_tools *t, const char *tool, size_t tool_len, enum proto_tool_outcome oc,
	  uint64_t args_bytes)
{
	size_t i = t->nrec;

	if (i == PROTO_TOOL_CALLS_LISTED_MAX) {
		t->omitted++;
		return SIZE_MAX;
	}
	if (tool != NULL && rules_tool_name_check(tool, tool_len)) {
		memcpy(t->recname[i], tool, tool_len);
		t->recname[i][tool_len] = '\0';
	}
	t->rec[i] = (struct proto_tool_record){
		.tool = t->recname[i], .outcome = oc, .args_bytes = args_bytes};
	t->nrec++;
	return i;
}

/* Queue bytes for the code on k (they go out as the socket takes them). */
static void
rt_conn_queue(struct rt_conn *k, const char *data, size_t len)
{
	char *nb;

	if (k->fd < 0)
		return;
	if (k->outoff > 0 && k->outoff == k->outlen)
		k->outoff = k->outlen = 0;
	nb = xrealloc(k->out, k->outlen + len);
	k->out = nb;
	memcpy(k->out + k->outlen, data, len);
	k->outlen += len;
}

/* Append s to a JSON string body, escaped; non-ASCII kept only if it is UTF-8. */
static size_t
rt_escape(char *dst, size_t cap, const char *s)
{
	size_t n = 0, i;
	bool utf8 = true;

	{
		/* Check the UTF-8 of s by scanning it as a JSON string body
		 * with the strict scanner: quotes and escapes aside, what it
		 * refuses is not UTF-8. */
		size_t sl = strlen(s);
		char *q = xmalloc(sl + 3);

		q[0] = '"';
		for (i = 0; i < sl; i++)
			q[i + 1] = (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
					   ? 'x'
					   : s[i];
		q[sl + 1] = '"';
		utf8 = jsonscan_value(q, sl + 2) == 0;
		free(q);
	}
	for (i = 0; s[i] != '\0' && n + 7 < cap; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			n += (size_t)snprintf(dst + n, cap - n, "\\%c", c);
		else if (c < 0x20)
			n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", c);
		else if (c >= 0x80 && !utf8)
			dst[n++] = '?';
		else
			dst[n++] = (char)c;
	}
	dst[n] = '\0';
	return n;
}

/* Answer an error to the code: {"id":N|null,"ok":false,"code":..,"error":..}. */
static size_t
rt_answer_error(struct rt_conn *k, bool has_id, uint64_t id, enum proto_tool_outcome oc,
		const char *msg)
{
	char line[PROTO_TOOL_ERROR_MAX * 6 + 128], idb[24], esc[PROTO_TOOL_ERROR_MAX * 6 + 8];
	int n;

	if (has_id)
		snprintf(idb, sizeof(idb), "%" PRIu64, id);
	else
		snprintf(idb, sizeof(idb), "null");
	rt_escape(esc, sizeof(esc), msg);
	n = snprintf(line, sizeof(line),
		     "{\"id\":%s,\"ok\":false,\"code\":\"%s\",\"error\":\"%s\"}\n", idb,
		     rt_code(oc), esc);
	if (n < 0 || (size_t)n >= sizeof(line))
		fatalx("tool error line too long");
	rt_conn_queue(k, line, (size_t)n);
	return (size_t)n;
}

/* Answer a result: the client's JSON text with its newlines made spaces
 * (outside strings, where a valid text may have them, they are whitespace;
 * inside strings a valid text has none). */
static size_t
rt_answer_result(struct rt_conn *k, uint64_t id, const uint8_t *json, size_t len)
{
	char head[64];
	size_t i, start;
	int n = snprintf(head, sizeof(head), "{\"id\":%" PRIu64 ",\"ok\":true,\"result\":", id);

	rt_conn_queue(k, head, (size_t)n);
	start = k->outlen;
	rt_conn_queue(k, (const char *)json, len);
	for (i = start; k->fd >= 0 && i < k->outlen; i++)
		if (k->out[i] == '\n' || k->out[i] == '\r')
			k->out[i] = ' ';
	rt_conn_queue(k, "}\n", 2);
	return (size_t)n + len + 2;
}

/* A waiting call is over: off the list, its timer gone, its caller free to send more. */
static void
rt_call_done(struct rt_call *c, enum proto_tool_outcome oc, uint64_t result_bytes, bool update)
{
	struct run_tools *t = c->t;

	TAILQ_REMOVE(&t->pending, c, entry);
	if (c->rec != SIZE_MAX) {
		t->rec[c->rec].outcome = oc;
		t->rec[c->rec].ms = clock_ms_since(&c->t0);
		t->rec[c->rec].result_bytes = result_bytes;
	}
	if (oc == PROTO_TOOL_REFUSED)
		t->refused++;
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->conn != NULL) {
		struct rt_conn *k = c->conn;

		k->npending--;
		free(c);
		/* Not from inside the connection's own line loop (rt_relay),
		 * which must not see k closed under it. */
		if (update)
			rt_conn_update(k);
		return;
	}
	free(c);
}

static void
rt_call_timeout_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct rt_call *c = arg;
	size_t n = 0;

	if (c->conn != NULL)
		n = rt_answer_error(c->conn, true, c->code_id, PROTO_TOOL_TIMEOUT,
				    "the client did not answer in time");
	rt_call_done(c, PROTO_TOOL_TIMEOUT, n, true);
}

/* Relay a checked call to the client. */
static void
rt_relay(struct rt_conn *k, const struct jsonscan_call *jc, size_t rec)
{
	struct run_tools *t = k->t;
	struct run *r = t->r;
	struct proto_tool_call tc;
	char name[PROTO_TOOL_NAME_MAX + 1];
	struct proto_out out;
	struct timeval tv = {RUN_TOOLS_WAIT_MS / 1000, (RUN_TOOLS_WAIT_MS % 1000) * 1000};
	struct rt_call *c = xcalloc(1, sizeof(*c));

	memcpy(name, jc->tool, jc->tool_len);
	name[jc->tool_len] = '\0';
	c->t = t;
	c->conn = k;
	c->call = ++t->next_call;
	c->code_id = jc->id;
	c->rec = rec;
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
	c->timer = xevtimer_new(r->d->base, rt_call_timeout_cb, c);
	TAILQ_INSERT_TAIL(&t->pending, c, entry);
	k->npending++;
	tc = (struct proto_tool_call){.call = c->call,
				      .tool = name,
				      .args = {.data = (const uint8_t *)jc->args,
					       .len = jc->args_len,
					       .fd = -1,
					       .present = true}};
	if (proto_encode_tool_call(r->req_id, &tc, &out) < 0) {
		rt_call_done(c, PROTO_TOOL_ABANDONED,
			     rt_answer_error(k, true, jc->id, PROTO_TOOL_ABANDONED,
					     "cannot relay the call"),
			     false);
		return;
	}
	client_send(r->c, &out);
	evtimer_add(c->timer, &tv);
}

/* One line from the code (without its newline). */
static void
rt_line(struct rt_conn *k, const char *line, size_t len)
{
	struct run_tools *t = k->t;
	struct jsonscan_call jc = {0};
	struct admit_decision dec;
	struct admit_gather g;
	size_t i, rec;
	bool ok;

	t->lines++;
	ok = jsonscan_call(line, len, &jc) == 0;
	if (!ok) {
		rt_record(t, NULL, 0, PROTO_TOOL_MALFORMED, len);
		rt_answer_error(k, jc.has_id, jc.id, PROTO_TOOL_MALFORMED,
				"not a call: one JSON object {\"id\": integer, \"tool\": string, "
				"\"args\": object} per line");
		if (++k->malformed >= RUN_TOOLS_MALFORMED_MAX)
			k->closing = true;
		return;
	}
	for (i = 0; i < t->ndecl; i++)
		if (strlen(t->decl[i].name) == jc.tool_len &&
		    memcmp(t->decl[i].name, jc.tool, jc.tool_len) == 0)
			break;
	if (i == t->ndecl) {
		rt_record(t, jc.tool, jc.tool_len, PROTO_TOOL_UNDECLARED, jc.args_len);
		rt_answer_error(k, true, jc.id, PROTO_TOOL_UNDECLARED,
				"no such tool: the run did not declare it");
		return;
	}
	if (jc.args_len > PROTO_TOOL_BYTES_MAX) {
		rt_record(t, jc.tool, jc.tool_len, PROTO_TOOL_TOO_LARGE, jc.args_len);
		rt_answer_error(k, true, jc.id, PROTO_TOOL_TOO_LARGE,
				"the arguments are longer than allowed");
		return;
	}
	/*
	 * Admitted by admit_decide() (admit.c), after the rows above (the
	 * line's validation, not admission): the run's user still allowed by
	 * [access] of the config in force (a call comes from the sandbox,
	 * not the client, so the dispatch's check never sees it: a user a
	 * reload removed is refused, "refused", and its client never sees
	 * the call; issue 29), its client there, its calls under the bound.
	 */
	admit_gather_tool_call(t->r->d, t->r->uid, t->r->c, t->closed, t->next_call, &g);
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		rt_record(t, jc.tool, jc.tool_len, dec.tool, jc.args_len);
		rt_answer_error(k, true, jc.id, dec.tool, dec.why);
		return;
	}
	rec = rt_record(t, jc.tool, jc.tool_len, PROTO_TOOL_ABANDONED, jc.args_len);
	rt_relay(k, &jc, rec);
}

/* Take the complete lines in k's buffer while k may answer more. */
static void
rt_conn_lines(struct rt_conn *k)
{
	size_t off = 0;

	while (!k->closing && k->npending < RUN_TOOLS_PENDING_MAX && k->outoff == k->outlen) {
		char *nl = memchr(k->in + off, '\n', k->inlen - off);
		size_t len;

		if (nl == NULL)
			break;
		len = (size_t)(nl - (k->in + off));
		rt_line(k, k->in + off, len > 0 && k->in[off + len - 1] == '\r' ? len - 1 : len);
		off += len + 1;
	}
	memmove(k->in, k->in + off, k->inlen - off);
	k->inlen -= off;
	if (!k->closing && k->inlen == RT_LINE_MAX) {
		/* A line longer than any call may be: answered, and the
		 * connection closed (what follows cannot be framed). */
		rt_record(k->t, NULL, 0, PROTO_TOOL_TOO_LARGE, k->inlen);
		rt_answer_error(k, false, 0, PROTO_TOOL_TOO_LARGE,
				"the line is longer than allowed");
		k->closing = true;
	}
}

/* Write what is queued; watch for reading only while nothing is queued and
 * the connection may send another call (a caller that never reads its
 * answers holds at most its queue). */
static void
rt_conn_update(struct rt_conn *k)
{
	while (k->outoff < k->outlen) {
		ssize_t n = send(k->fd, k->out + k->outoff, k->outlen - k->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			rt_conn_close(k);
			return;
		}
		k->outoff += (size_t)n;
	}
	if (k->outoff == k->outlen) {
		k->outoff = k->outlen = 0;
		if (k->inlen > 0 && !k->closing)
			rt_conn_lines(k);
	}
	if (k->outoff < k->outlen) {
		/* rt_conn_lines may have queued an answer: try it once more next turn. */
		event_add(k->wev, NULL);
		event_del(k->rev);
		return;
	}
	event_del(k->wev);
	if (k->closing) {
		rt_conn_close(k);
		return;
	}
	if (k->npending < RUN_TOOLS_PENDING_MAX)
		event_add(k->rev, NULL);
	else
		event_del(k->rev);
}

static void
rt_conn_read_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct rt_conn *k = arg;
	ssize_t n;

	if (k->in == NULL)
		k->in = xmalloc(RT_LINE_MAX);
	n = recv(fd, k->in + k->inlen, RT_LINE_MAX - k->inlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		/* The code closed (or broke) its connection: its waiting
		 * calls are abandoned; their late answers will be dropped. */
		rt_conn_close(k);
		return;
	}
	k->inlen += (size_t)n;
	rt_conn_lines(k);
	rt_conn_update(k);
}

static void
rt_conn_write_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	rt_conn_update(arg);
}

/* Close one connection; its waiting calls stay until answered or timed out,
 * with nobody to tell. */
static void
rt_conn_close(struct rt_conn *k)
{
	struct run_tools *t = k->t;
	struct rt_call *c;
	size_t i;

	TAILQ_FOREACH(c, &t->pending, entry)
	if (c->conn == k)
		c->conn = NULL;
	for (i = 0; i < RUN_TOOLS_CONNS_MAX; i++)
		if (t->conns[i] == k)
			t->conns[i] = NULL;
	event_free(k->rev);
	event_free(k->wev);
	close(k->fd);
	free(k->in);
	free(k->out);
	free(k);
	if (t->aev != NULL && !t->closed)
		event_add(t->aev, NULL);
}

static void
rt_accept_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct run_tools *t = arg;
	struct rt_conn *k;
	size_t i;
	int cfd;

	for (i = 0; i < RUN_TOOLS_CONNS_MAX && t->conns[i] != NULL; i++)
		;
	if (i == RUN_TOOLS_CONNS_MAX) {
		/* The rest wait in the backlog until a connection closes. */
		event_del(t->aev);
		return;
	}
	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	k = xcalloc(1, sizeof(*k));
	k->t = t;
	k->fd = cfd;
	k->rev = xevent_new(t->r->d->base, cfd, EV_READ | EV_PERSIST, rt_conn_read_cb, k);
	k->wev = xevent_new(t->r->d->base, cfd, EV_WRITE | EV_PERSIST, rt_conn_write_cb, k);
	t->conns[i] = k;
	event_add(k->rev, NULL);
}

void
run_tools_listen(struct run *r, int fd)
{
	struct run_tools *t = r->tools;

	if (t == NULL || t->lfd >= 0 || t->closed) {
		close(fd);
		return;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return;
	}
	t->r = r;
	t->lfd = fd;
	t->aev = xevent_new(r->d->base, fd, EV_READ | EV_PERSIST, rt_accept_cb, t);
	event_add(t->aev, NULL);
}

void
run_tools_reply(struct run *r, const struct proto_tool_reply *rep)
{
	struct run_tools *t = r->tools;
	struct rt_call *c;
	enum proto_tool_outcome oc;
	size_t n = 0;

	if (t == NULL)
		return;
	TAILQ_FOREACH(c, &t->pending, entry)
	if (c->call == rep->call)
		break;
	if (c == NULL)
		return; /* answered, timed out, or the run is over: normal races */
	if (rep->ok) {
		/* The client's bytes are checked for form only, never read for meaning. */
		if (jsonscan_value((const char *)rep->result.data, rep->result.len) < 0) {
			oc = PROTO_TOOL_MALFORMED;
			if (c->conn != NULL)
				n = rt_answer_error(c->conn, true, c->code_id, oc,
						    "the client's result is not JSON");
		} else {
			oc = PROTO_TOOL_OK;
			if (c->conn != NULL)
				n = rt_answer_result(c->conn, c->code_id, rep->result.data,
						     rep->result.len);
		}
	} else {
		oc = rep->refused ? PROTO_TOOL_REFUSED : PROTO_TOOL_ERROR;
		if (c->conn != NULL)
			n = rt_answer_error(c->conn, true, c->code_id, oc, rep->error);
	}
	rt_call_done(c, oc, n, true);
}

void
run_tools_close(struct run *r)
{
	struct run_tools *t = r->tools;
	struct rt_call *c;
	size_t i;

	if (t == NULL || t->closed)
		return;
	t->closed = true;
	while ((c = TAILQ_FIRST(&t->pending)) != NULL) {
		c->conn = NULL;
		rt_call_done(c, PROTO_TOOL_ABANDONED, 0, false);
		/* the analyzer cannot see the removal: docs/static-analysis.md */
		assert(TAILQ_FIRST(&t->pending) != c);
	}
	for (i = 0; i < RUN_TOOLS_CONNS_MAX; i++)
		if (t->conns[i] != NULL)
			rt_conn_close(t->conns[i]);
	if (t->aev != NULL) {
		event_free(t->aev);
		t->aev = NULL;
	}
	if (t->lfd >= 0) {
		close(t->lfd);
		t->lfd = -1;
	}
}

void
run_tools_result(const struct run *r, struct proto_result *res)
{
	const struct run_tools *t = r->tools;

	if (t == NULL)
		return;
	res->tool_calls = (struct proto_tool_record *)t->rec;
	res->ntool_calls = t->nrec;
	res->tool_calls_omitted = t->omitted;
}

void
run_tools_free(struct run_tools *t)
{
	if (t == NULL)
		return;
	run_tools_close(t->r);
	STRV_FREE_FIELD(t->decl, t->ndecl, struct proto_tool, name);
	free(t);
}
