/* conn_calls.c: the public calls over a connection, each a wrapper of the
 * call path in conn.c. */
#include "airlock.h"
#include "conn.h"
#include "export.h"
#include "getter.h"
#include "file.h"
#include "proto.h"
#include "request.h"
#include "rules.h"
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The library's version. */
AIRLOCK_EXPORT const char *
airlock_library_version(void)
{
	return LIBAIRLOCK_VERSION;
}

/* Bound each later blocking call. */
SETTER(airlock_conn_set_timeout, struct airlock_conn, uint64_t, timeout_ms)

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

/*
 * A blocking call of a request without fields whose answer is an object
 * (info, ps, session list): the object pointer ret points at takes it.
 */
static int
conn_calls_get(struct airlock_conn *conn, enum proto_type type, void *ret)
{
	void *payload;
	int r;

	if (conn == NULL || ret == NULL)
		return -EINVAL;
	r = conn_call_simple(conn, type, &payload);
	if (r == 0)
		memcpy(ret, &payload, sizeof(payload));
	return r;
}

/* A request naming one session whose answer is an object, into *ret (a
 * pointer to the object's pointer, of the type the caller names). */
static int
conn_calls_session_get(struct airlock_conn *conn, enum proto_type type, const char *session,
		       void *ret)
{
	const struct conn_req req = {.type = type, .u.session = session};
	void *payload;
	int r;

	if (conn == NULL || ret == NULL || !rules_session_id_str_valid(session))
		return -EINVAL;
	r = conn_call(conn, &req, NULL, NULL, &payload);
	if (r == 0)
		memcpy(ret, &payload, sizeof(payload));
	return r;
}

/* Ask the daemon what it offers. */
AIRLOCK_EXPORT int
airlock_info(struct airlock_conn *conn, struct airlock_info **ret)
{
	return conn_calls_get(conn, PROTO_INFO, ret);
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

/* Send a cancel naming a request or (request 0) a run and wait for its
 * answer. Results of runs (the cancelled one too) that arrive meanwhile are
 * queued. */
static int
conn_cancel(struct airlock_conn *conn, uint32_t request, uint32_t run)
{
	const struct proto_cancel c = {.request = request, .run = run};
	const struct conn_req req = {.type = PROTO_CANCEL, .u.cancel = &c};

	if (conn == NULL || (request == 0 && run == 0))
		return -EINVAL;
	return conn_call(conn, &req, NULL, NULL, NULL);
}

/* Cancel a run this connection submitted, by its request id. */
AIRLOCK_EXPORT int
airlock_cancel(struct airlock_conn *conn, uint32_t request_id)
{
	return conn_cancel(conn, request_id, 0);
}

/* Cancel one of the caller's runs by its daemon-wide run id. */
AIRLOCK_EXPORT int
airlock_cancel_run(struct airlock_conn *conn, uint32_t run_id)
{
	return conn_cancel(conn, 0, run_id);
}

/* List the caller's runs in progress and queued. */
AIRLOCK_EXPORT int
airlock_ps(struct airlock_conn *conn, struct airlock_ps **ret)
{
	return conn_calls_get(conn, PROTO_PS, ret);
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

/* Extend a session's lease. */
AIRLOCK_EXPORT int
airlock_session_extend(struct airlock_conn *conn, const char *session, uint64_t lifetime_ms)
{
	const struct proto_session_extend x = {.session = session, .lifetime_ms = lifetime_ms};
	const struct conn_req req = {.type = PROTO_SESSION_EXTEND, .u.session_extend = &x};

	if (conn == NULL || !rules_session_id_str_valid(session) || lifetime_ms == 0)
		return -EINVAL;
	return conn_call(conn, &req, NULL, NULL, NULL);
}

/* A session's workspace as a ustar archive. */
AIRLOCK_EXPORT int
airlock_session_save(struct airlock_conn *conn, const char *session, struct airlock_file **ret)
{
	return conn_calls_session_get(conn, PROTO_SESSION_SAVE, session, ret);
}

/* List a background session's processes. */
AIRLOCK_EXPORT int
airlock_session_ps(struct airlock_conn *conn, const char *session,
		   struct airlock_process_list **ret)
{
	return conn_calls_session_get(conn, PROTO_SESSION_PS, session, ret);
}

/* Stop (SIGKILL) one of a background session's processes. */
AIRLOCK_EXPORT int
airlock_process_stop(struct airlock_conn *conn, const char *session, uint32_t pid)
{
	const struct proto_process_stop stop = {.session = session, .pid = pid};
	const struct conn_req req = {.type = PROTO_PROCESS_STOP, .u.stop = &stop};

	if (conn == NULL || !rules_session_id_str_valid(session) || pid == 0)
		return -EINVAL;
	return conn_call(conn, &req, NULL, NULL, NULL);
}

/* List the caller's sessions. */
AIRLOCK_EXPORT int
airlock_session_list(struct airlock_conn *conn, struct airlock_session_list **ret)
{
	return conn_calls_get(conn, PROTO_SESSION_LIST, ret);
}

/*
 * Send a file operation of type on path (data: file_write only) and wait for
 * its answer; its payload (a file, a listing) goes to the object pointer ret
 * points at, when ret is not NULL.
 */
static int
conn_file_op(struct airlock_conn *conn, enum proto_type type, const char *session, const char *path,
	     const void *buf, size_t len, void *ret)
{
	static const uint8_t empty[1];
	struct proto_file_op op = {.session = session, .path = path};
	const struct conn_req req = {.type = type, .u.file_op = &op};
	void *payload;
	int r;

	if (conn == NULL || !rules_session_id_str_valid(session))
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
	r = conn_call(conn, &req, NULL, NULL, ret != NULL ? &payload : NULL);
	if (r == 0 && ret != NULL)
		memcpy(ret, &payload, sizeof(payload));
	return r;
}

/* Write a file into a session. */
AIRLOCK_EXPORT int
airlock_file_write(struct airlock_conn *conn, const char *session, const char *path,
		   const void *buf, size_t len)
{
	return conn_file_op(conn, PROTO_FILE_WRITE, session, path, buf, len, NULL);
}

/* Read a file of a session. */
AIRLOCK_EXPORT int
airlock_file_read(struct airlock_conn *conn, const char *session, const char *path,
		  struct airlock_file **ret)
{
	if (ret == NULL)
		return -EINVAL;
	return conn_file_op(conn, PROTO_FILE_READ, session, path, NULL, 0, ret);
}

/* List a directory of a session. */
AIRLOCK_EXPORT int
airlock_file_list(struct airlock_conn *conn, const char *session, const char *dir,
		  struct airlock_file_list **ret)
{
	if (ret == NULL)
		return -EINVAL;
	/* "" and NULL both name the session's root. */
	return conn_file_op(conn, PROTO_FILE_LIST, session,
			    dir != NULL && dir[0] != '\0' ? dir : NULL, NULL, 0, ret);
}

/* Delete a file, link or empty directory of a session. */
AIRLOCK_EXPORT int
airlock_file_delete(struct airlock_conn *conn, const char *session, const char *path)
{
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
