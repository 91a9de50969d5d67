/* conn.c: connections to airlockd: the socket, request ids, sending, receiving
 * and the call path every public call goes through (conn_calls.c). */
#include "airlock.h"
#include "clock.h"
#include "conn.h"
#include "event.h"
#include "export.h"
#include "fdpass.h"
#include "file.h"
#include "proto.h"
#include "ps.h"
#include "request.h"
#include "result.h"
#include "session.h"

#include <assert.h>
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
	airlock_process_list_free(d->type == PROTO_SESSION_PS ? d->p.procs : NULL);
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

/* The reply that answers each request type (an error reply answers any). */
static const struct {
	enum proto_type req, reply;
} conn_answers[] = {
	{PROTO_HELLO, PROTO_HELLO_OK},
	{PROTO_PING, PROTO_PONG},
	{PROTO_INFO, PROTO_INFO_OK},
	{PROTO_RUN, PROTO_RESULT},
	{PROTO_CANCEL, PROTO_CANCEL_OK},
	{PROTO_PS, PROTO_PS_OK},
	{PROTO_SESSION_OPEN, PROTO_SESSION_OK},
	{PROTO_SESSION_CLOSE, PROTO_OK},
	{PROTO_FILE_WRITE, PROTO_OK},
	{PROTO_FILE_DELETE, PROTO_OK},
	{PROTO_SESSION_LIST, PROTO_SESSION_LIST_OK},
	{PROTO_FILE_READ, PROTO_FILE_DATA},
	{PROTO_FILE_LIST, PROTO_FILE_LIST_OK},
	{PROTO_SESSION_PS, PROTO_SESSION_PS_OK},
	{PROTO_PROCESS_STOP, PROTO_OK},
	{PROTO_SESSION_EXTEND, PROTO_OK},
	{PROTO_SESSION_SAVE, PROTO_FILE_DATA},
};

/* Whether a reply of type may answer a request of type req. */
static bool
conn_type_answers(enum proto_type type, enum proto_type req)
{
	size_t i;

	if (type == PROTO_ERROR)
		return true;
	for (i = 0; i < sizeof(conn_answers) / sizeof(conn_answers[0]); i++)
		if (conn_answers[i].req == req)
			return conn_answers[i].reply == type;
	return false;
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
struct airlock_event *
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
void
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
	case PROTO_SESSION_PS_OK:
		r = process_list_from_proto(&msg->u.processes, &d->p.procs);
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
int
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

	*ret_revents = 0;
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
struct conn_done *
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
	if (conn_encode(cid, &req, conn->file_bundle, &out) == 0 &&
	    conn_pending_add(conn, cid, PROTO_CANCEL, false) == 0) {
		if (proto_send(conn->fd, &out) == 0)
			conn->pending[conn->npending - 1].abandoned = true;
		else
			conn->npending--;
	}
	proto_out_free(&out);
}

/* Send a tool_reply. */
int
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
		if (conn->broken != 0) {
			assert(conn->broken < 0); /* conn_break() stores only errors */
			return conn->broken;
		}
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
int
conn_submit(struct airlock_conn *conn, const struct conn_req *req, uint32_t *ret_id)
{
	struct proto_out out = {0};
	enum proto_type type;
	uint32_t id;
	int r;

	if (conn->broken != 0) {
		assert(conn->broken < 0); /* conn_break() stores only errors */
		return conn->broken;
	}
	id = conn_next_id(conn);
	r = conn_encode(id, req, conn->file_bundle, &out);
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
int
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
int
conn_call(struct airlock_conn *conn, const struct conn_req *req, airlock_stream_fn cb, void *arg,
	  void **ret_payload)
{
	struct conn_done *d = NULL; /* gcc cannot see conn_wait() set it on 0 */
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
int
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
int
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
