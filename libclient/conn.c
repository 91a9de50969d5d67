/* conn.c: connections to airlockd, request ids, blocking and non-blocking calls. */
#include "airlock.h"
#include "export.h"
#include "fdpass.h"
#include "proto.h"
#include "ps.h"
#include "request.h"
#include "result.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CONN_CLIENT_NAME "libairlock/" AIRLOCK_VERSION

/* What a request id is waiting for. */
enum conn_kind {
	CONN_KIND_HELLO,
	CONN_KIND_PING,
	CONN_KIND_INFO,
	CONN_KIND_RUN,
	CONN_KIND_CANCEL,
	CONN_KIND_PS,
};

struct conn_pending {
	uint32_t id;
	enum conn_kind kind;
};

/* One answered request, queued until its caller takes it. */
struct conn_done {
	struct conn_done *next;
	uint32_t id;
	enum conn_kind kind;
	int err;		    /* 0, a mapped daemon error, or a local -errno */
	enum proto_error code;	    /* daemon error reply: its code */
	char *message;		    /* daemon error reply: its message */
	struct airlock_result *res; /* RUN */
	struct airlock_info *info;  /* INFO */
	struct airlock_ps *ps;	    /* PS */
	uint32_t version;	    /* HELLO */
};

struct airlock_conn {
	int fd;
	int broken; /* 0, or the error every call returns from now on */
	uint32_t next_id;
	uint8_t *buf; /* PROTO_MSG_MAX bytes, one received packet */
	struct conn_pending *pending;
	size_t npending;
	size_t pending_cap;
	struct conn_done *done;
	struct conn_done **done_tail;
	bool has_error;
	enum proto_error last_code;
	char *last_message;
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
	airlock_result_free(d->res);
	airlock_info_free(d->info);
	airlock_ps_free(d->ps);
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

/* Record that id waits for an answer of this kind. */
static int
conn_pending_add(struct airlock_conn *conn, uint32_t id, enum conn_kind kind)
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
	conn->pending[conn->npending++] = (struct conn_pending){.id = id, .kind = kind};
	return 0;
}

/* Forget a pending id; returns 0 and its kind, or -ENOENT. */
static int
conn_pending_take(struct airlock_conn *conn, uint32_t id, enum conn_kind *ret_kind)
{
	size_t i;

	for (i = 0; i < conn->npending; i++)
		if (conn->pending[i].id == id) {
			*ret_kind = conn->pending[i].kind;
			conn->pending[i] = conn->pending[--conn->npending];
			return 0;
		}
	return -ENOENT;
}

/* Whether a reply of this type may answer a request of this kind. */
static bool
conn_type_answers(enum proto_type type, enum conn_kind kind)
{
	if (type == PROTO_ERROR)
		return true;
	switch (kind) {
	case CONN_KIND_HELLO:
		return type == PROTO_HELLO_OK;
	case CONN_KIND_PING:
		return type == PROTO_PONG;
	case CONN_KIND_INFO:
		return type == PROTO_INFO_OK;
	case CONN_KIND_RUN:
		return type == PROTO_RESULT;
	case CONN_KIND_CANCEL:
		return type == PROTO_CANCEL_OK;
	case CONN_KIND_PS:
		return type == PROTO_PS_OK;
	}
	return false;
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
	struct conn_done *d;
	enum conn_kind kind;
	char *message;
	int r;

	if (msg->type == PROTO_ERROR && conn_pending_take(conn, msg->id, &kind) < 0) {
		message = strdup(msg->u.error.message != NULL ? msg->u.error.message : "");
		if (message == NULL)
			return conn_break(conn, -ENOMEM);
		conn_set_error(conn, msg->u.error.code, message);
		return conn_break(conn, conn_errno(msg->u.error.code));
	}
	if (msg->type != PROTO_ERROR && conn_pending_take(conn, msg->id, &kind) < 0)
		return conn_break(conn, -EBADMSG);
	if (!conn_type_answers(msg->type, kind))
		return conn_break(conn, -EBADMSG);
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return conn_break(conn, -ENOMEM);
	d->id = msg->id;
	d->kind = kind;
	switch (msg->type) {
	case PROTO_ERROR:
		d->code = msg->u.error.code;
		d->err = conn_errno(msg->u.error.code);
		d->message = strdup(msg->u.error.message != NULL ? msg->u.error.message : "");
		if (d->message == NULL)
			d->err = -ENOMEM;
		break;
	case PROTO_HELLO_OK:
		d->version = msg->u.hello.version;
		break;
	case PROTO_INFO_OK:
		r = result_info_from_proto(&msg->u.info, &d->info);
		if (r < 0)
			d->err = r;
		break;
	case PROTO_RESULT:
		r = result_from_proto(&msg->u.result, &d->res);
		if (r < 0)
			d->err = r;
		break;
	case PROTO_PS_OK:
		r = ps_from_proto(&msg->u.ps, &d->ps);
		if (r < 0)
			d->err = r;
		break;
	default:
		break;
	}
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

/* Wait until the socket is readable (and, when out is set, writable). */
static int
conn_poll(struct airlock_conn *conn, bool out, short *ret_revents)
{
	struct pollfd p = {.fd = conn->fd, .events = POLLIN};
	int n;

	if (out)
		p.events |= POLLOUT;
	do
		n = poll(&p, 1, -1);
	while (n < 0 && errno == EINTR);
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
		r = conn_poll(conn, true, &revents);
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
		if (id != 0 ? d->id != id : d->kind != CONN_KIND_RUN)
			continue;
		*pp = d->next;
		if (conn->done_tail == &d->next)
			conn->done_tail = pp;
		d->next = NULL;
		return d;
	}
	return NULL;
}

/* Block until the answer to id is there; answers to other ids are queued. */
static int
conn_wait(struct airlock_conn *conn, uint32_t id, struct conn_done **ret)
{
	struct conn_done *d;
	short revents;
	int r;

	for (;;) {
		d = conn_done_take(conn, id);
		if (d != NULL) {
			*ret = d;
			return 0;
		}
		if (conn->broken)
			return conn->broken;
		r = conn_recv_one(conn);
		if (r == -EAGAIN) {
			r = conn_poll(conn, false, &revents);
			if (r < 0)
				return r;
		} else if (r < 0)
			return r;
	}
}

/*
 * Turn a taken answer into the caller's return value: a daemon error reply
 * becomes the connection's last error (its message moves there).
 */
static int
conn_done_status(struct airlock_conn *conn, struct conn_done *d)
{
	if (d->err != 0 && d->message != NULL) {
		conn_set_error(conn, d->code, d->message);
		d->message = NULL;
	}
	return d->err;
}

/* Encode with encode(), register id as pending of kind, send. */
static int
conn_request(struct airlock_conn *conn, uint32_t id, enum conn_kind kind,
	     const struct proto_out *out)
{
	enum conn_kind k;
	int r;

	r = conn_pending_add(conn, id, kind);
	if (r < 0)
		return r;
	r = conn_send(conn, out);
	if (r < 0)
		conn_pending_take(conn, id, &k);
	return r;
}

/* Send a message without payload of type and wait for its answer. */
static int
conn_simple_call(struct airlock_conn *conn, enum proto_type type, enum conn_kind kind,
		 struct conn_done **ret)
{
	struct proto_out out = {0};
	uint32_t id;
	int r;

	if (conn->broken)
		return conn->broken;
	id = conn_next_id(conn);
	r = proto_encode_simple(id, type, &out);
	if (r < 0)
		goto out;
	r = conn_request(conn, id, kind, &out);
	if (r < 0)
		goto out;
	r = conn_wait(conn, id, ret);
out:
	proto_out_free(&out);
	return r;
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

/* Connect, say hello, and on failure copy the daemon's reason out. */
AIRLOCK_EXPORT int
airlock_connect_error(const char *path, struct airlock_conn **ret, char *code, size_t code_len,
		      char *message, size_t message_len)
{
	struct airlock_conn *conn = NULL;
	struct proto_hello hello = {.version = PROTO_VERSION, .peer = CONN_CLIENT_NAME};
	struct proto_out out = {0};
	struct conn_done *d = NULL;
	uint32_t id;
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
	conn->done_tail = &conn->done;
	conn->buf = malloc(PROTO_MSG_MAX);
	if (conn->buf == NULL)
		goto out;
	r = conn_open_socket(path, &conn->fd);
	if (r < 0)
		goto out;
	id = conn_next_id(conn);
	r = proto_encode_hello(id, PROTO_HELLO, &hello, &out);
	if (r < 0)
		goto out;
	r = conn_request(conn, id, CONN_KIND_HELLO, &out);
	if (r < 0)
		goto out;
	r = conn_wait(conn, id, &d);
	if (r < 0)
		goto out;
	r = conn_done_status(conn, d);
	if (r < 0)
		goto out;
	r = -EPROTONOSUPPORT;
	if (d->version != PROTO_VERSION)
		goto out;
	*ret = conn;
	conn = NULL;
	r = 0;
out:
	if (r < 0 && conn != NULL && conn->has_error) {
		conn_copy_str(code, code_len, proto_error_name(conn->last_code));
		conn_copy_str(message, message_len, conn->last_message);
	}
	conn_done_free(d);
	proto_out_free(&out);
	airlock_conn_free(conn);
	return r;
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
	free(conn->pending);
	free(conn->buf);
	free(conn->last_message);
	free(conn);
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
	struct conn_done *d = NULL;
	int r;

	if (conn == NULL)
		return -EINVAL;
	r = conn_simple_call(conn, PROTO_PING, CONN_KIND_PING, &d);
	if (r < 0)
		goto out;
	r = conn_done_status(conn, d);
out:
	conn_done_free(d);
	return r;
}

/* Ask the daemon what it offers. */
AIRLOCK_EXPORT int
airlock_info(struct airlock_conn *conn, struct airlock_info **ret)
{
	struct conn_done *d = NULL;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_simple_call(conn, PROTO_INFO, CONN_KIND_INFO, &d);
	if (r < 0)
		goto out;
	r = conn_done_status(conn, d);
	if (r < 0)
		goto out;
	/* Ownership of the info moves to the caller. */
	*ret = d->info;
	d->info = NULL;
out:
	conn_done_free(d);
	return r;
}

/* Send a run request without waiting. */
AIRLOCK_EXPORT int
airlock_run_submit(struct airlock_conn *conn, const struct airlock_run_req *req, uint32_t *ret_id)
{
	struct proto_out out = {0};
	uint32_t id;
	int r;

	if (conn == NULL || req == NULL || ret_id == NULL)
		return -EINVAL;
	if (conn->broken)
		return conn->broken;
	id = conn_next_id(conn);
	r = request_encode(req, id, &out);
	if (r < 0)
		goto out;
	r = conn_request(conn, id, CONN_KIND_RUN, &out);
	if (r < 0)
		goto out;
	*ret_id = id;
out:
	proto_out_free(&out);
	return r;
}

/* Run a request and wait for its result. */
AIRLOCK_EXPORT int
airlock_run(struct airlock_conn *conn, const struct airlock_run_req *req,
	    struct airlock_result **ret)
{
	struct conn_done *d = NULL;
	uint32_t id;
	int r;

	if (conn == NULL || req == NULL || ret == NULL)
		return -EINVAL;
	r = airlock_run_submit(conn, req, &id);
	if (r < 0)
		goto out;
	r = conn_wait(conn, id, &d);
	if (r < 0)
		goto out;
	r = conn_done_status(conn, d);
	if (r < 0)
		goto out;
	/* Ownership of the result moves to the caller. */
	*ret = d->res;
	d->res = NULL;
out:
	conn_done_free(d);
	return r;
}

/* Read what is available without blocking and queue completed runs. */
AIRLOCK_EXPORT int
airlock_conn_process(struct airlock_conn *conn)
{
	int r;

	if (conn == NULL)
		return -EINVAL;
	do
		r = conn_recv_one(conn);
	while (r == 0);
	return r == -EAGAIN ? 0 : r;
}

/* Take the next completed run. */
AIRLOCK_EXPORT int
airlock_conn_next_result(struct airlock_conn *conn, uint32_t *ret_id, struct airlock_result **ret)
{
	struct conn_done *d;
	int r;

	if (conn == NULL || ret_id == NULL || ret == NULL)
		return -EINVAL;
	d = conn_done_take(conn, 0);
	if (d == NULL)
		return conn->broken ? conn->broken : -EAGAIN;
	r = conn_done_status(conn, d);
	/* The documented exception: the id is written on failure too. */
	*ret_id = d->id;
	if (r == 0) {
		*ret = d->res;
		d->res = NULL;
	}
	conn_done_free(d);
	return r;
}

/* Send a cancel naming a request or a run and wait for its answer. */
static int
conn_cancel(struct airlock_conn *conn, const struct proto_cancel *c)
{
	struct proto_out out = {0};
	struct conn_done *d = NULL;
	uint32_t id;
	int r;

	if (conn->broken)
		return conn->broken;
	id = conn_next_id(conn);
	r = proto_encode_cancel(id, c, &out);
	if (r < 0)
		goto out;
	r = conn_request(conn, id, CONN_KIND_CANCEL, &out);
	if (r < 0)
		goto out;
	/* Results of runs (the cancelled one too) that arrive meanwhile are queued. */
	r = conn_wait(conn, id, &d);
	if (r < 0)
		goto out;
	r = conn_done_status(conn, d);
out:
	conn_done_free(d);
	proto_out_free(&out);
	return r;
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
	struct conn_done *d = NULL;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_simple_call(conn, PROTO_PS, CONN_KIND_PS, &d);
	if (r < 0)
		goto out;
	r = conn_done_status(conn, d);
	if (r < 0)
		goto out;
	/* Ownership of the list moves to the caller. */
	*ret = d->ps;
	d->ps = NULL;
out:
	conn_done_free(d);
	return r;
}
