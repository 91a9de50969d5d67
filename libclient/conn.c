/* conn.c: connections to airlockd, request ids, blocking and non-blocking calls. */
#include "airlock.h"
#include "clock.h"
#include "event.h"
#include "export.h"
#include "fdpass.h"
#include "file.h"
#include "proto.h"
#include "ps.h"
#include "request.h"
#include "result.h"
#include "rules.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CONN_CLIENT_NAME "libairlock/" AIRLOCK_VERSION

/* A request waiting for its answer, under the type of the request it sent. */
struct conn_pending {
	uint32_t id;
	enum proto_type type;
	bool stream;	/* a run that asked for stream events */
	bool tools;	/* a run that declares tools: tool_call events */
	bool abandoned; /* its caller timed out: drop the answer and the events */
};

/* One answered request, queued until its caller takes it. */
struct conn_done {
	struct conn_done *next;
	uint32_t id;
	enum proto_type type;  /* of the request */
	int err;	       /* 0, a mapped daemon error, or a local -errno */
	enum proto_error code; /* daemon error reply: its code */
	char *message;	       /* daemon error reply: its message */
	/* The payload of a successful answer: only the member of the request's
	 * type is ever set (none: all NULL); any reads it as the void * that
	 * conn_done_finish() hands over. */
	union {
		void *any;
		struct airlock_result *res;	       /* RUN */
		struct airlock_info *info;	       /* INFO */
		struct airlock_ps *ps;		       /* PS */
		char *session;			       /* SESSION_OPEN: PROTO_SESSION_ID_LEN hex */
		struct airlock_session_list *sessions; /* SESSION_LIST */
		struct airlock_file *file;	       /* FILE_READ */
		struct airlock_file_list *files;       /* FILE_LIST */
	} p;
};

/* One request to send: its type, the fields of its message (the member of u
 * its type names; none for ping, info, ps and session_list). */
struct conn_req {
	enum proto_type type;
	bool stream; /* RUN: ask for stream events */
	bool tools;  /* RUN: it declares tools */
	union {
		const struct proto_hello *hello;	       /* HELLO */
		const struct airlock_run_req *run;	       /* RUN */
		const struct proto_cancel *cancel;	       /* CANCEL */
		const struct proto_session_open *session_open; /* SESSION_OPEN */
		const char *session;			       /* SESSION_CLOSE */
		const struct proto_file_op *file_op;	       /* FILE_* */
	} u;
};

struct airlock_conn {
	int fd;
	int broken;	     /* 0, or the error every call returns from now on */
	uint64_t timeout_ms; /* of each blocking call; 0: none */
	uint32_t next_id;
	uint8_t *buf; /* PROTO_MSG_MAX bytes, one received packet */
	struct conn_pending *pending;
	size_t npending;
	size_t pending_cap;
	struct conn_done *done;
	struct conn_done **done_tail;
	struct airlock_event *events; /* stream events not taken yet, in arrival order */
	struct airlock_event *events_tail;
	bool has_error;
	enum proto_error last_code;
	char *last_message;
	bool file_bundle; /* the daemon's hello_ok named PROTO_FEATURE_FILE_BUNDLE */
	/* airlock_run_tools() while it waits: its request, handler and arg. */
	const struct airlock_run_req *tool_req;
	airlock_tool_fn tool_fn;
	void *tool_arg;
};

/* Map a daemon error code to the errno its caller returns (see airlock.h). */
static int
conn_errno(enum proto_error code)
{
	switch (code) {
	case PROTO_ERR_UNAUTHORIZED:
		return -EACCES;
	case PROTO_ERR_BUSY:
		return -EBUSY;
	case PROTO_ERR_NOT_FOUND:
		return -ENOENT;
	case PROTO_ERR_TOO_LARGE:
		return -E2BIG;
	case PROTO_ERR_UNSUPPORTED_VERSION:
		return -EPROTONOSUPPORT;
	default:
		return -EPROTO;
	}
}

/* Free one queued answer. */
static void
conn_done_free(struct conn_done *d)
{
	if (d == NULL)
		return;
	airlock_result_free(d->type == PROTO_RUN ? d->p.res : NULL);
	airlock_info_free(d->type == PROTO_INFO ? d->p.info : NULL);
	airlock_ps_free(d->type == PROTO_PS ? d->p.ps : NULL);
	free(d->type == PROTO_SESSION_OPEN ? d->p.session : NULL);
	airlock_session_list_free(d->type == PROTO_SESSION_LIST ? d->p.sessions : NULL);
	airlock_file_free(d->type == PROTO_FILE_READ ? d->p.file : NULL);
	airlock_file_list_free(d->type == PROTO_FILE_LIST ? d->p.files : NULL);
	free(d->message);
	free(d);
}

/* Remember a daemon error reply as the connection's last error; takes message. */
static void
conn_set_error(struct airlock_conn *conn, enum proto_error code, char *message)
{
	free(conn->last_message);
	conn->last_message = message;
	conn->last_code = code;
	conn->has_error = true;
}

/* Mark the connection unusable; every later call returns err. */
static int
conn_break(struct airlock_conn *conn, int err)
{
	if (conn->broken == 0)
		conn->broken = err;
	return conn->broken;
}

/* Allocate the next request id: never 0, never one still pending. */
static uint32_t
conn_next_id(struct airlock_conn *conn)
{
	uint32_t id;
	size_t i;

again:
	id = conn->next_id++;
	if (id == 0)
		goto again;
	for (i = 0; i < conn->npending; i++)
		if (conn->pending[i].id == id)
			goto again;
	return id;
}

/* Record that id waits for the answer to a request of type (a run: with
 * events or not). */
static int
conn_pending_add(struct airlock_conn *conn, uint32_t id, enum proto_type type, bool stream)
{
	struct conn_pending *p;
	size_t cap;

	if (conn->npending == conn->pending_cap) {
		cap = conn->pending_cap ? conn->pending_cap * 2 : 8;
		p = realloc(conn->pending, cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		conn->pending = p;
		conn->pending_cap = cap;
	}
	conn->pending[conn->npending++] =
		(struct conn_pending){.id = id, .type = type, .stream = stream};
	return 0;
}

/* The pending request id, or NULL. */
static const struct conn_pending *
conn_pending_find(const struct airlock_conn *conn, uint32_t id)
{
	size_t i;

	for (i = 0; i < conn->npending; i++)
		if (conn->pending[i].id == id)
			return &conn->pending[i];
	return NULL;
}

/* Forget a pending id; returns 0 and its request's type, or -ENOENT. */
static int
conn_pending_take(struct airlock_conn *conn, uint32_t id, enum proto_type *ret_type)
{
	size_t i;

	for (i = 0; i < conn->npending; i++)
		if (conn->pending[i].id == id) {
			*ret_type = conn->pending[i].type;
			conn->pending[i] = conn->pending[--conn->npending];
			return 0;
		}
	return -ENOENT;
}

/* Whether a reply of type may answer a request of type req. */
static bool
conn_type_answers(enum proto_type type, enum proto_type req)
{
	if (type == PROTO_ERROR)
		return true;
	switch (req) {
	case PROTO_HELLO:
		return type == PROTO_HELLO_OK;
	case PROTO_PING:
		return type == PROTO_PONG;
	case PROTO_INFO:
		return type == PROTO_INFO_OK;
	case PROTO_RUN:
		return type == PROTO_RESULT;
	case PROTO_CANCEL:
		return type == PROTO_CANCEL_OK;
	case PROTO_PS:
		return type == PROTO_PS_OK;
	case PROTO_SESSION_OPEN:
		return type == PROTO_SESSION_OK;
	case PROTO_SESSION_CLOSE:
	case PROTO_FILE_WRITE:
	case PROTO_FILE_DELETE:
		return type == PROTO_OK;
	case PROTO_SESSION_LIST:
		return type == PROTO_SESSION_LIST_OK;
	case PROTO_FILE_READ:
		return type == PROTO_FILE_DATA;
	case PROTO_FILE_LIST:
		return type == PROTO_FILE_LIST_OK;
	default:
		return false;
	}
}

/*
 * Queue a stream event. It must belong to a run in flight that asked for
 * events: anything else means we no longer agree with the daemon on the
 * state of the connection. The queue's size is bounded by the daemon, which
 * streams at most the output limit of each stream of a run (see
 * airlock_conn_next_event() for when queued events are discarded).
 */
static int
conn_accept_event(struct airlock_conn *conn, const struct proto_msg *msg)
{
	const struct conn_pending *p = conn_pending_find(conn, msg->id);
	struct airlock_event *ev;

	bool stream = msg->type == PROTO_STREAM;
	int r;

	/* A tool call of a run that declared no tools is as wrong as a
	 * stream event of a run that did not ask for them. */
	if (p == NULL || p->type != PROTO_RUN || (stream ? !p->stream : !p->tools))
		return conn_break(conn, -EBADMSG);
	if (p->abandoned)
		return 0;
	r = stream ? event_from_proto(msg->id, &msg->u.stream, &ev)
		   : event_from_tool_call(msg->id, &msg->u.tool_call, &ev);
	if (r < 0)
		return conn_break(conn, -ENOMEM);
	if (conn->events_tail != NULL)
		event_set_next(conn->events_tail, ev);
	else
		conn->events = ev;
	conn->events_tail = ev;
	return 0;
}

/* Unlink and return the first queued event of request id (any request when id
 * is 0), or NULL. */
static struct airlock_event *
conn_event_take(struct airlock_conn *conn, uint32_t id)
{
	struct airlock_event *ev, *prev = NULL;

	for (ev = conn->events; ev != NULL; prev = ev, ev = event_next(ev)) {
		if (id != 0 && airlock_event_request_id(ev) != id)
			continue;
		if (prev != NULL)
			event_set_next(prev, event_next(ev));
		else
			conn->events = event_next(ev);
		if (conn->events_tail == ev)
			conn->events_tail = prev;
		event_set_next(ev, NULL);
		return ev;
	}
	return NULL;
}

/* Discard the queued events of request id. */
static void
conn_events_drop(struct airlock_conn *conn, uint32_t id)
{
	struct airlock_event *ev;

	while ((ev = conn_event_take(conn, id)) != NULL)
		airlock_event_free(ev);
}

/*
 * Turn one decoded message into a queued answer. A reply to no pending
 * request, or of the wrong type, means we no longer agree with the daemon on
 * the state of the connection: it breaks the connection. An error reply to
 * no request (id 0: the daemon could not read ours) does too, and is kept as
 * the last error so that the caller can say why.
 */
static int
conn_accept(struct airlock_conn *conn, const struct proto_msg *msg)
{
	const struct conn_pending *p = conn_pending_find(conn, msg->id);
	bool abandoned = p != NULL && p->abandoned;
	struct conn_done *d;
	enum proto_type req;
	char *message;
	int r = 0;

	if (msg->type == PROTO_STREAM || msg->type == PROTO_TOOL_CALL)
		return conn_accept_event(conn, msg);
	if (msg->type == PROTO_ERROR && conn_pending_take(conn, msg->id, &req) < 0) {
		message = strdup(msg->u.error.message != NULL ? msg->u.error.message : "");
		if (message == NULL)
			return conn_break(conn, -ENOMEM);
		conn_set_error(conn, msg->u.error.code, message);
		return conn_break(conn, conn_errno(msg->u.error.code));
	}
	if (msg->type != PROTO_ERROR && conn_pending_take(conn, msg->id, &req) < 0)
		return conn_break(conn, -EBADMSG);
	if (!conn_type_answers(msg->type, req))
		return conn_break(conn, -EBADMSG);
	if (abandoned)
		return 0; /* its caller gave up waiting (airlock_conn_set_timeout) */
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return conn_break(conn, -ENOMEM);
	d->id = msg->id;
	d->type = req;
	switch (msg->type) {
	case PROTO_ERROR:
		d->code = msg->u.error.code;
		r = conn_errno(msg->u.error.code);
		d->message = strdup(msg->u.error.message != NULL ? msg->u.error.message : "");
		if (d->message == NULL)
			r = -ENOMEM;
		break;
	case PROTO_HELLO_OK:
		if (msg->u.hello.version != PROTO_VERSION)
			r = -EPROTONOSUPPORT;
		conn->file_bundle =
			proto_hello_has_feature(&msg->u.hello, PROTO_FEATURE_FILE_BUNDLE);
		break;
	case PROTO_INFO_OK:
		r = result_info_from_proto(&msg->u.info, &d->p.info);
		break;
	case PROTO_RESULT:
		r = result_from_proto(&msg->u.result, &d->p.res);
		break;
	case PROTO_PS_OK:
		r = ps_from_proto(&msg->u.ps, &d->p.ps);
		break;
	case PROTO_SESSION_OK:
		/* The decoder checked it: exactly PROTO_SESSION_ID_LEN hex characters. */
		d->p.session = strdup(msg->u.session.session);
		if (d->p.session == NULL)
			r = -ENOMEM;
		break;
	case PROTO_SESSION_LIST_OK:
		r = session_list_from_proto(&msg->u.session_list, &d->p.sessions);
		break;
	case PROTO_FILE_DATA:
		r = file_from_proto(&msg->u.file_data, &d->p.file);
		break;
	case PROTO_FILE_LIST_OK:
		r = file_list_from_proto(&msg->u.file_list, &d->p.files);
		break;
	default:
		break;
	}
	d->err = r < 0 ? r : 0;
	*conn->done_tail = d;
	conn->done_tail = &d->next;
	return 0;
}

/*
 * Receive and queue one packet. Returns 0, -EAGAIN when nothing is there
 * (the socket is non-blocking), or the connection's (new) broken state.
 */
static int
conn_recv_one(struct airlock_conn *conn)
{
	int fds[PROTO_FDS_MAX];
	struct proto_msg msg;
	enum proto_error code;
	size_t nfds = 0;
	uint32_t id;
	char why[128];
	ssize_t n;
	int r;

	if (conn->broken)
		return conn->broken;
	n = fdpass_recv(conn->fd, conn->buf, PROTO_MSG_MAX, fds, PROTO_FDS_MAX, &nfds);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return -EAGAIN;
	if (n == -EMSGSIZE)
		return conn_break(conn, -EBADMSG);
	if (n < 0)
		return conn_break(conn, (int)n);
	if (n == 0) {
		fdpass_close_all(fds, nfds);
		return conn_break(conn, -ECONNRESET);
	}
	/* The decoder owns fds from here, on success and on failure. */
	r = proto_decode(conn->buf, (size_t)n, fds, nfds, &msg, &code, &id, why, sizeof(why));
	if (r < 0)
		return conn_break(conn, -EBADMSG);
	r = conn_accept(conn, &msg);
	proto_msg_free(&msg);
	return r;
}

/* Receive and queue every packet there is without blocking: -EAGAIN once
 * none is left, or the connection's (new) broken state. */
static int
conn_recv_all(struct airlock_conn *conn)
{
	int r;

	do
		r = conn_recv_one(conn);
	while (r == 0);
	return r;
}

/* The deadline of a blocking call starting now (monotonic ms), 0 for none. */
static uint64_t
conn_deadline(const struct airlock_conn *conn)
{
	return conn->timeout_ms != 0 ? clock_now_ms() + conn->timeout_ms : 0;
}

/*
 * Wait until the socket is readable (and, when out is set, writable), or
 * until deadline (monotonic ms, 0: none) has passed: -ETIMEDOUT.
 */
static int
conn_poll(struct airlock_conn *conn, bool out, uint64_t deadline, short *ret_revents)
{
	struct pollfd p = {.fd = conn->fd, .events = POLLIN};
	uint64_t now;
	int n, timeout;

	if (out)
		p.events |= POLLOUT;
	do {
		timeout = -1;
		if (deadline != 0) {
			now = clock_now_ms();
			if (now >= deadline)
				return -ETIMEDOUT;
			timeout = deadline - now > 60000 ? 60000 : (int)(deadline - now);
		}
		n = poll(&p, 1, timeout);
	} while ((n < 0 && errno == EINTR) || n == 0);
	if (n < 0)
		return -errno;
	*ret_revents = p.revents;
	return 0;
}

/*
 * Send one packet. While the send buffer is full, replies are read and
 * queued, so that the daemon never waits on us while we wait on it.
 */
static int
conn_send(struct airlock_conn *conn, const struct proto_out *out)
{
	uint64_t deadline = conn_deadline(conn);
	short revents;
	int r;

	for (;;) {
		if (conn->broken)
			return conn->broken;
		r = proto_send(conn->fd, out);
		if (r == 0)
			return 0;
		if (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN)
			return conn_break(conn, -ECONNRESET);
		if (r != -EAGAIN && r != -EWOULDBLOCK)
			return r;
		r = conn_poll(conn, true, deadline, &revents);
		if (r < 0)
			return r;
		if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
			r = conn_recv_one(conn);
			if (r < 0 && r != -EAGAIN)
				return r;
		}
	}
}

/* Unlink and return the first queued answer to id (or to any run when id is 0). */
static struct conn_done *
conn_done_take(struct airlock_conn *conn, uint32_t id)
{
	struct conn_done **pp, *d;

	for (pp = &conn->done; (d = *pp) != NULL; pp = &d->next) {
		if (id != 0 ? d->id != id : d->type != PROTO_RUN)
			continue;
		*pp = d->next;
		if (conn->done_tail == &d->next)
			conn->done_tail = pp;
		d->next = NULL;
		return d;
	}
	return NULL;
}

/* Encode req as request id. */
static int
conn_encode(const struct airlock_conn *conn, uint32_t id, const struct conn_req *req,
	    struct proto_out *ret)
{
	switch (req->type) {
	case PROTO_HELLO:
		return proto_encode_hello(id, PROTO_HELLO, req->u.hello, ret);
	case PROTO_RUN:
		return request_encode(req->u.run, id, req->stream, conn->file_bundle, ret);
	case PROTO_CANCEL:
		return proto_encode_cancel(id, req->u.cancel, ret);
	case PROTO_SESSION_OPEN:
		return proto_encode_session_open(id, req->u.session_open, ret);
	case PROTO_SESSION_CLOSE:
		return proto_encode_session(id, req->type, req->u.session, ret);
	case PROTO_FILE_WRITE:
	case PROTO_FILE_READ:
	case PROTO_FILE_LIST:
	case PROTO_FILE_DELETE:
		return proto_encode_file_op(id, req->type, req->u.file_op, ret);
	default:
		return proto_encode_simple(id, req->type, ret);
	}
}

/*
 * The caller of request id gave up waiting: its answer and events are
 * dropped when they come, and a run is cancelled. The cancel is sent only if
 * the socket takes it at once (its answer is dropped too): a daemon that does
 * not read is the reason for the timeout, and the run's wall limit ends it.
 */
static void
conn_abandon(struct airlock_conn *conn, uint32_t id)
{
	struct proto_cancel c = {.request = id};
	struct conn_req req = {.type = PROTO_CANCEL, .u.cancel = &c};
	struct proto_out out = {0};
	struct conn_pending *p = NULL;
	uint32_t cid;
	size_t i;

	for (i = 0; i < conn->npending; i++)
		if (conn->pending[i].id == id)
			p = &conn->pending[i];
	if (p == NULL)
		return;
	p->abandoned = true;
	conn_events_drop(conn, id);
	if (p->type != PROTO_RUN || conn->broken)
		return;
	cid = conn_next_id(conn);
	if (conn_encode(conn, cid, &req, &out) == 0 &&
	    conn_pending_add(conn, cid, PROTO_CANCEL, false) == 0) {
		if (proto_send(conn->fd, &out) == 0)
			conn->pending[conn->npending - 1].abandoned = true;
		else
			conn->npending--;
	}
	proto_out_free(&out);
}

/* Send a tool_reply. */
static int
conn_tool_answer(struct airlock_conn *conn, uint32_t request_id, const struct proto_tool_reply *rep)
{
	struct proto_out out = {0};
	int r;

	if (conn->broken)
		return conn->broken;
	r = proto_encode_tool_reply(request_id, rep, &out);
	if (r == 0)
		r = conn_send(conn, &out);
	proto_out_free(&out);
	return r;
}

/* Answer a tool call with a result. */
AIRLOCK_EXPORT int
airlock_tool_reply(struct airlock_conn *conn, uint32_t request_id, uint32_t call, const void *json,
		   size_t len)
{
	struct proto_tool_reply rep = {.call = call, .ok = true};

	if (conn == NULL || request_id == 0 || call == 0 || (json == NULL && len > 0))
		return -EINVAL;
	if (len > PROTO_TOOL_BYTES_MAX)
		return -E2BIG;
	rep.result = (struct proto_blob){.data = json != NULL ? json : (const void *)"",
					 .len = len,
					 .fd = -1,
					 .present = true};
	return conn_tool_answer(conn, request_id, &rep);
}

/* Refuse or fail a tool call. */
AIRLOCK_EXPORT int
airlock_tool_fail(struct airlock_conn *conn, uint32_t request_id, uint32_t call,
		  const char *message, bool refused)
{
	char msg[PROTO_TOOL_ERROR_MAX + 1];
	struct proto_tool_reply rep = {.call = call, .ok = false, .refused = refused, .error = msg};

	if (conn == NULL || request_id == 0 || call == 0)
		return -EINVAL;
	/* A long message is cut to the bound, not refused: a failing tool
	 * must still get its failure to the code. */
	snprintf(msg, sizeof(msg), "%s",
		 message != NULL ? message : (refused ? "refused" : "the tool failed"));
	rep.result.fd = -1;
	return conn_tool_answer(conn, request_id, &rep);
}

/*
 * A tool call of the run airlock_run_tools() waits for: the handler's answer,
 * or an error answer when there is no handler or the name is not declared
 * (the daemon checked it too). A refused or failed call is the code's
 * error, never this call's; a failed send shows as the connection's error.
 */
static void
conn_tool_call(struct airlock_conn *conn, const struct airlock_event *ev)
{
	uint32_t id = airlock_event_request_id(ev), call = airlock_event_tool_call(ev);
	const char *name = airlock_event_tool_name(ev);
	const void *args;
	char *out = NULL;
	size_t len = 0, args_len = 0;
	int r;

	if (conn->tool_fn == NULL) {
		(void)airlock_tool_fail(conn, id, call, "this client runs no tool handler", false);
		return;
	}
	if (!request_has_tool(conn->tool_req, name)) {
		(void)airlock_tool_fail(conn, id, call, "not a declared tool", true);
		return;
	}
	(void)airlock_event_data(ev, &args, &args_len);
	r = conn->tool_fn(conn->tool_arg, name, args, args_len, &out, &len);
	if (r == 0 && out != NULL) {
		if (airlock_tool_reply(conn, id, call, out, len) == -E2BIG)
			(void)airlock_tool_fail(conn, id, call, "the result is too large", false);
	} else if (r == 0) {
		(void)airlock_tool_fail(conn, id, call, "the tool gave no result", false);
	} else {
		(void)airlock_tool_fail(conn, id, call,
					out != NULL		    ? out
					: r == AIRLOCK_TOOL_REFUSED ? "refused"
								    : strerror(r < 0 ? -r : EIO),
					r == AIRLOCK_TOOL_REFUSED);
	}
	free(out);
}

/*
 * Block until the answer to id is there; answers and events of other ids
 * are queued. A run's own events are handed to cb as they arrive, all
 * before the answer is returned (the daemon sends them first), or discarded
 * when cb is NULL: no caller could take them later. After the connection's
 * timeout, the request is abandoned and the result is -ETIMEDOUT.
 */
static int
conn_wait(struct airlock_conn *conn, uint32_t id, airlock_stream_fn cb, void *arg,
	  struct conn_done **ret)
{
	uint64_t deadline = conn_deadline(conn);
	struct airlock_event *ev;
	struct conn_done *d;
	short revents;
	int r;

	for (;;) {
		while ((ev = conn_event_take(conn, id)) != NULL) {
			const void *data;
			size_t len;

			if (airlock_event_kind(ev) == AIRLOCK_EVENT_TOOL_CALL)
				conn_tool_call(conn, ev);
			else if (cb != NULL && airlock_event_data(ev, &data, &len) == 0)
				cb(arg, airlock_event_stream(ev), data, len);
			airlock_event_free(ev);
		}
		d = conn_done_take(conn, id);
		if (d != NULL) {
			*ret = d;
			return 0;
		}
		if (conn->broken)
			return conn->broken;
		r = conn_recv_one(conn);
		if (r == -EAGAIN) {
			r = conn_poll(conn, false, deadline, &revents);
			if (r == -ETIMEDOUT)
				conn_abandon(conn, id);
			if (r < 0)
				return r;
		} else if (r < 0)
			return r;
	}
}

/*
 * Send req under a new request id without waiting for its answer. The id is
 * pending before the send, so that an answer read while the send waits for
 * room is recognised; a failed send forgets it.
 */
static int
conn_submit(struct airlock_conn *conn, const struct conn_req *req, uint32_t *ret_id)
{
	struct proto_out out = {0};
	enum proto_type type;
	uint32_t id;
	int r;

	if (conn->broken)
		return conn->broken;
	id = conn_next_id(conn);
	r = conn_encode(conn, id, req, &out);
	if (r < 0)
		goto out;
	r = conn_pending_add(conn, id, req->type, req->stream);
	if (r < 0)
		goto out;
	conn->pending[conn->npending - 1].tools = req->tools;
	r = conn_send(conn, &out);
	if (r < 0) {
		conn_pending_take(conn, id, &type);
		goto out;
	}
	*ret_id = id;
out:
	proto_out_free(&out);
	return r;
}

/*
 * Finish with an answer taken off the queue, and free it: a daemon error
 * reply becomes the return value and the connection's last error (its
 * message moves there); on success *ret_payload, when not NULL, takes the
 * answer's payload (a result, info, list, file or session id), which the
 * caller owns from here.
 */
static int
conn_done_finish(struct airlock_conn *conn, struct conn_done *d, void **ret_payload)
{
	int r = d->err;

	if (r < 0 && d->message != NULL) {
		conn_set_error(conn, d->code, d->message);
		d->message = NULL;
	}
	if (r == 0 && ret_payload != NULL) {
		*ret_payload = d->p.any;
		d->p.any = NULL;
	}
	conn_done_free(d);
	return r;
}

/*
 * The one blocking call, under every blocking entry point: send req, wait
 * for its answer (a run's events go to cb, or are dropped when cb is NULL),
 * then conn_done_finish(). Answers and events of other requests that arrive
 * meanwhile are queued for their callers.
 */
static int
conn_call(struct airlock_conn *conn, const struct conn_req *req, airlock_stream_fn cb, void *arg,
	  void **ret_payload)
{
	struct conn_done *d;
	uint32_t id;
	int r;

	r = conn_submit(conn, req, &id);
	if (r < 0)
		return r;
	r = conn_wait(conn, id, cb, arg, &d);
	if (r < 0)
		return r;
	return conn_done_finish(conn, d, ret_payload);
}

/* conn_call() of a request without fields, handing over its payload. */
static int
conn_call_simple(struct airlock_conn *conn, enum proto_type type, void **ret_payload)
{
	const struct conn_req req = {.type = type};

	return conn_call(conn, &req, NULL, NULL, ret_payload);
}

/* Copy src into dst (len bytes), NUL-terminated, when dst has room. */
static void
conn_copy_str(char *dst, size_t len, const char *src)
{
	if (dst == NULL || len == 0)
		return;
	snprintf(dst, len, "%s", src != NULL ? src : "");
}

/* Open the socket at path (connect(2) only). */
static int
conn_open_socket(const char *path, int *ret_fd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do
		r = connect(fd, (const struct sockaddr *)&sa, sizeof(sa));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		goto fail;
	/* Non-blocking from here: blocking calls wait in poll(), never in recvmsg(). */
	r = fcntl(fd, F_GETFL);
	if (r < 0 || fcntl(fd, F_SETFL, r | O_NONBLOCK) < 0)
		goto fail;
	*ret_fd = fd;
	return 0;
fail:
	r = -errno;
	close(fd);
	return r;
}

/* Connect, say hello within timeout_ms (0: no limit), and on failure copy
 * the daemon's reason out. */
static int
conn_connect(const char *path, uint64_t timeout_ms, struct airlock_conn **ret, char *code,
	     size_t code_len, char *message, size_t message_len)
{
	struct airlock_conn *conn = NULL;
	/* Every outcome this library decodes, including the opt-in ones. */
	struct proto_hello hello = {.version = PROTO_VERSION,
				    .peer = CONN_CLIENT_NAME,
				    .features = {PROTO_FEATURE_PROCESS_LIMIT, PROTO_FEATURE_NETWORK,
						 PROTO_FEATURE_TOOLS},
				    .nfeatures = 3};
	struct conn_req req = {.type = PROTO_HELLO, .u.hello = &hello};
	int r;

	conn_copy_str(code, code_len, "");
	conn_copy_str(message, message_len, "");
	if (ret == NULL)
		return -EINVAL;
	if (path == NULL) {
		path = secure_getenv("AIRLOCK_SOCKET");
		if (path == NULL || path[0] == '\0')
			path = AIRLOCK_SOCKET_DEFAULT;
	}
	r = -ENOMEM;
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		goto out;
	conn->fd = -1;
	conn->next_id = 1;
	conn->timeout_ms = timeout_ms;
	conn->done_tail = &conn->done;
	conn->buf = malloc(PROTO_MSG_MAX);
	if (conn->buf == NULL)
		goto out;
	r = conn_open_socket(path, &conn->fd);
	if (r < 0)
		goto out;
	/* A hello answered with another version fails with -EPROTONOSUPPORT. */
	r = conn_call(conn, &req, NULL, NULL, NULL);
	if (r < 0)
		goto out;
	*ret = conn;
	conn = NULL;
out:
	if (r < 0 && conn != NULL && conn->has_error) {
		conn_copy_str(code, code_len, proto_error_name(conn->last_code));
		conn_copy_str(message, message_len, conn->last_message);
	}
	airlock_conn_free(conn);
	return r;
}

/* Connect, say hello, and on failure copy the daemon's reason out. */
AIRLOCK_EXPORT int
airlock_connect_error(const char *path, struct airlock_conn **ret, char *code, size_t code_len,
		      char *message, size_t message_len)
{
	return conn_connect(path, 0, ret, code, code_len, message, message_len);
}

/* Connect with a timeout for the handshake and for every blocking call. */
AIRLOCK_EXPORT int
airlock_connect_timeout(const char *path, uint64_t timeout_ms, struct airlock_conn **ret,
			char *code, size_t code_len, char *message, size_t message_len)
{
	return conn_connect(path, timeout_ms, ret, code, code_len, message, message_len);
}

/* Connect and say hello. */
AIRLOCK_EXPORT int
airlock_connect(const char *path, struct airlock_conn **ret)
{
	return airlock_connect_error(path, ret, NULL, 0, NULL, 0);
}

/* Close and free a connection. */
AIRLOCK_EXPORT void
airlock_conn_free(struct airlock_conn *conn)
{
	struct conn_done *d;

	if (conn == NULL)
		return;
	if (conn->fd >= 0)
		close(conn->fd);
	while ((d = conn->done) != NULL) {
		conn->done = d->next;
		conn_done_free(d);
	}
	conn_events_drop(conn, 0);
	free(conn->pending);
	free(conn->buf);
	free(conn->last_message);
	free(conn);
}

/* The library's version. */
AIRLOCK_EXPORT const char *
airlock_library_version(void)
{
	return LIBAIRLOCK_VERSION;
}

/* Bound each later blocking call. */
AIRLOCK_EXPORT int
airlock_conn_set_timeout(struct airlock_conn *conn, uint64_t timeout_ms)
{
	if (conn == NULL)
		return -EINVAL;
	conn->timeout_ms = timeout_ms;
	return 0;
}

/* Whether the connection is still usable, without blocking. */
AIRLOCK_EXPORT int
airlock_conn_check(struct airlock_conn *conn)
{
	if (conn == NULL)
		return -EINVAL;
	(void)conn_recv_all(conn);
	return conn->broken;
}

/* The pollable socket. */
AIRLOCK_EXPORT int
airlock_conn_fd(const struct airlock_conn *conn)
{
	if (conn == NULL)
		return -EINVAL;
	return conn->fd;
}

/* The last daemon error reply. */
AIRLOCK_EXPORT int
airlock_conn_last_error(const struct airlock_conn *conn, const char **ret_code,
			const char **ret_message)
{
	if (conn == NULL)
		return -EINVAL;
	if (!conn->has_error)
		return -ENOENT;
	if (ret_code != NULL)
		*ret_code = proto_error_name(conn->last_code);
	if (ret_message != NULL)
		*ret_message = conn->last_message != NULL ? conn->last_message : "";
	return 0;
}

/* Ping the daemon and wait for the pong. */
AIRLOCK_EXPORT int
airlock_ping(struct airlock_conn *conn)
{
	if (conn == NULL)
		return -EINVAL;
	return conn_call_simple(conn, PROTO_PING, NULL);
}

/* Ask the daemon what it offers. */
AIRLOCK_EXPORT int
airlock_info(struct airlock_conn *conn, struct airlock_info **ret)
{
	void *info;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_call_simple(conn, PROTO_INFO, &info);
	if (r == 0)
		*ret = info;
	return r;
}

/* Send a run request without waiting. */
AIRLOCK_EXPORT int
airlock_run_submit(struct airlock_conn *conn, const struct airlock_run_req *req, uint32_t *ret_id)
{
	struct conn_req run = {.type = PROTO_RUN, .u.run = req};

	if (conn == NULL || req == NULL || ret_id == NULL)
		return -EINVAL;
	run.stream = request_stream(req);
	run.tools = request_tools(req);
	return conn_submit(conn, &run, ret_id);
}

/* Run a request, with events or not, hand its events to cb (or drop them),
 * and wait for its result. */
static int
conn_run(struct airlock_conn *conn, const struct airlock_run_req *req, bool stream,
	 airlock_stream_fn cb, void *arg, struct airlock_result **ret)
{
	const struct conn_req run = {
		.type = PROTO_RUN, .stream = stream, .tools = request_tools(req), .u.run = req};
	void *res;
	int r;

	r = conn_call(conn, &run, cb, arg, &res);
	if (r == 0)
		*ret = res;
	return r;
}

/* Run a request and wait for its result. */
AIRLOCK_EXPORT int
airlock_run(struct airlock_conn *conn, const struct airlock_run_req *req,
	    struct airlock_result **ret)
{
	if (conn == NULL || req == NULL || ret == NULL)
		return -EINVAL;
	return conn_run(conn, req, request_stream(req), NULL, NULL, ret);
}

/* Run a request with streaming, calling cb for each chunk, and wait for its result. */
AIRLOCK_EXPORT int
airlock_run_stream(struct airlock_conn *conn, const struct airlock_run_req *req,
		   airlock_stream_fn cb, void *arg, struct airlock_result **ret)
{
	if (conn == NULL || req == NULL || cb == NULL || ret == NULL)
		return -EINVAL;
	return conn_run(conn, req, true, cb, arg, ret);
}

/* Run a request with tools, answering each call with cb, and wait for its result. */
AIRLOCK_EXPORT int
airlock_run_tools(struct airlock_conn *conn, const struct airlock_run_req *req, airlock_tool_fn cb,
		  void *arg, struct airlock_result **ret)
{
	int r;

	if (conn == NULL || req == NULL || cb == NULL || ret == NULL)
		return -EINVAL;
	conn->tool_req = req;
	conn->tool_fn = cb;
	conn->tool_arg = arg;
	r = conn_run(conn, req, request_stream(req), NULL, NULL, ret);
	conn->tool_req = NULL;
	conn->tool_fn = NULL;
	conn->tool_arg = NULL;
	return r;
}

/* Read what is available without blocking and queue completed runs. */
AIRLOCK_EXPORT int
airlock_conn_process(struct airlock_conn *conn)
{
	int r;

	if (conn == NULL)
		return -EINVAL;
	r = conn_recv_all(conn);
	return r == -EAGAIN ? 0 : r;
}

/* Take the next completed run. */
AIRLOCK_EXPORT int
airlock_conn_next_result(struct airlock_conn *conn, uint32_t *ret_id, struct airlock_result **ret)
{
	struct conn_done *d;
	void *res;
	int r;

	if (conn == NULL || ret_id == NULL || ret == NULL)
		return -EINVAL;
	d = conn_done_take(conn, 0);
	if (d == NULL)
		return conn->broken ? conn->broken : -EAGAIN;
	/* Its events all came before it: those the caller did not take go now. */
	conn_events_drop(conn, d->id);
	/* The documented exception: the id is written on failure too. */
	*ret_id = d->id;
	r = conn_done_finish(conn, d, &res);
	if (r == 0)
		*ret = res;
	return r;
}

/* Send a cancel naming a request or a run and wait for its answer. Results
 * of runs (the cancelled one too) that arrive meanwhile are queued. */
static int
conn_cancel(struct airlock_conn *conn, const struct proto_cancel *c)
{
	const struct conn_req req = {.type = PROTO_CANCEL, .u.cancel = c};

	return conn_call(conn, &req, NULL, NULL, NULL);
}

/* Cancel a run this connection submitted, by its request id. */
AIRLOCK_EXPORT int
airlock_cancel(struct airlock_conn *conn, uint32_t request_id)
{
	struct proto_cancel c = {.request = request_id};

	if (conn == NULL || request_id == 0)
		return -EINVAL;
	return conn_cancel(conn, &c);
}

/* Cancel one of the caller's runs by its daemon-wide run id. */
AIRLOCK_EXPORT int
airlock_cancel_run(struct airlock_conn *conn, uint32_t run_id)
{
	struct proto_cancel c = {.run = run_id};

	if (conn == NULL || run_id == 0)
		return -EINVAL;
	return conn_cancel(conn, &c);
}

/* List the caller's runs in progress and queued. */
AIRLOCK_EXPORT int
airlock_ps(struct airlock_conn *conn, struct airlock_ps **ret)
{
	void *ps;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_call_simple(conn, PROTO_PS, &ps);
	if (r == 0)
		*ret = ps;
	return r;
}

/* Open a session. */
AIRLOCK_EXPORT int
airlock_session_open(struct airlock_conn *conn, const struct airlock_session_opts *opts,
		     char *ret_id)
{
	struct proto_session_open o;
	const struct conn_req req = {.type = PROTO_SESSION_OPEN, .u.session_open = &o};
	void *session;
	int r;

	if (conn == NULL || ret_id == NULL)
		return -EINVAL;
	session_opts_to_proto(opts, &o);
	r = conn_call(conn, &req, NULL, NULL, &session);
	if (r == 0) {
		/* The decoder checked it: exactly PROTO_SESSION_ID_LEN hex characters. */
		memcpy(ret_id, session, PROTO_SESSION_ID_LEN + 1);
		free(session);
	}
	return r;
}

/* Close a session. */
AIRLOCK_EXPORT int
airlock_session_close(struct airlock_conn *conn, const char *session)
{
	const struct conn_req req = {.type = PROTO_SESSION_CLOSE, .u.session = session};

	if (conn == NULL || !rules_session_id_str_valid(session))
		return -EINVAL;
	return conn_call(conn, &req, NULL, NULL, NULL);
}

/* List the caller's sessions. */
AIRLOCK_EXPORT int
airlock_session_list(struct airlock_conn *conn, struct airlock_session_list **ret)
{
	void *sessions;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_call_simple(conn, PROTO_SESSION_LIST, &sessions);
	if (r == 0)
		*ret = sessions;
	return r;
}

/*
 * Send a file operation of type on path (data: file_write only) and wait for
 * its answer; *ret_payload as for conn_call().
 */
static int
conn_file_op(struct airlock_conn *conn, enum proto_type type, const char *session, const char *path,
	     const void *buf, size_t len, void **ret_payload)
{
	static const uint8_t empty[1];
	struct proto_file_op op = {.session = session, .path = path};
	const struct conn_req req = {.type = type, .u.file_op = &op};
	int r;

	if (!rules_session_id_str_valid(session))
		return -EINVAL;
	r = file_path_check(path, type == PROTO_FILE_LIST);
	if (r < 0)
		return r;
	if (type == PROTO_FILE_WRITE) {
		if (buf == NULL && len > 0)
			return -EINVAL;
		if ((uint64_t)len > PROTO_BLOB_MAX)
			return -E2BIG;
		/* Inline here; the codec moves a large payload into a sealed memfd. */
		op.data = (struct proto_blob){
			.data = buf != NULL ? buf : empty, .len = len, .fd = -1, .present = true};
	}
	return conn_call(conn, &req, NULL, NULL, ret_payload);
}

/* Write a file into a session. */
AIRLOCK_EXPORT int
airlock_file_write(struct airlock_conn *conn, const char *session, const char *path,
		   const void *buf, size_t len)
{
	if (conn == NULL)
		return -EINVAL;
	return conn_file_op(conn, PROTO_FILE_WRITE, session, path, buf, len, NULL);
}

/* Read a file of a session. */
AIRLOCK_EXPORT int
airlock_file_read(struct airlock_conn *conn, const char *session, const char *path,
		  struct airlock_file **ret)
{
	void *file;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_file_op(conn, PROTO_FILE_READ, session, path, NULL, 0, &file);
	if (r == 0)
		*ret = file;
	return r;
}

/* List a directory of a session. */
AIRLOCK_EXPORT int
airlock_file_list(struct airlock_conn *conn, const char *session, const char *dir,
		  struct airlock_file_list **ret)
{
	void *files;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_file_op(conn, PROTO_FILE_LIST, session, dir != NULL && dir[0] != '\0' ? dir : NULL,
			 NULL, 0, &files);
	if (r == 0)
		*ret = files;
	return r;
}

/* Delete a file, link or empty directory of a session. */
AIRLOCK_EXPORT int
airlock_file_delete(struct airlock_conn *conn, const char *session, const char *path)
{
	if (conn == NULL)
		return -EINVAL;
	return conn_file_op(conn, PROTO_FILE_DELETE, session, path, NULL, 0, NULL);
}

/* Take the next queued stream event. */
AIRLOCK_EXPORT int
airlock_conn_next_event(struct airlock_conn *conn, struct airlock_event **ret)
{
	struct airlock_event *ev;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	ev = conn_event_take(conn, 0);
	if (ev == NULL)
		return conn->broken ? conn->broken : -EAGAIN;
	*ret = ev;
	return 0;
}
