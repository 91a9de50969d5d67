/* conn.h: a connection's state and its call path, shared by conn.c and
 * conn_calls.c (internal). */
#ifndef AIRLOCK_CONN_H
#define AIRLOCK_CONN_H

#include "airlock.h"
#include "conn_req.h"
#include "proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn_pending;

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
		struct airlock_process_list *procs;    /* SESSION_PS */
		struct airlock_file *file;	       /* FILE_READ */
		struct airlock_file_list *files;       /* FILE_LIST */
	} p;
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

/* Send a tool_reply. */
int conn_tool_answer(struct airlock_conn *conn, uint32_t request_id,
		     const struct proto_tool_reply *rep);

/* Connect, say hello within timeout_ms (0: no limit), and on failure copy
 * the daemon's reason out. */
int conn_connect(const char *path, uint64_t timeout_ms, struct airlock_conn **ret, char *code,
		 size_t code_len, char *message, size_t message_len);

/* Receive and queue every packet there is without blocking: -EAGAIN once
 * none is left, or the connection's (new) broken state. */
int conn_recv_all(struct airlock_conn *conn);

/* Unlink and return the first queued event of request id (any request when id
 * is 0), or NULL. */
struct airlock_event *conn_event_take(struct airlock_conn *conn, uint32_t id);

/* Discard the queued events of request id. */
void conn_events_drop(struct airlock_conn *conn, uint32_t id);

/* Unlink and return the first queued answer to id (or to any run when id is 0). */
struct conn_done *conn_done_take(struct airlock_conn *conn, uint32_t id);

/*
 * Finish with an answer taken off the queue, and free it: a daemon error
 * reply becomes the return value and the connection's last error (its
 * message moves there); on success *ret_payload, when not NULL, takes the
 * answer's payload (a result, info, list, file or session id), which the
 * caller owns from here.
 */
int conn_done_finish(struct airlock_conn *conn, struct conn_done *d, void **ret_payload);

/*
 * Send req under a new request id without waiting for its answer. The id is
 * pending before the send, so that an answer read while the send waits for
 * room is recognised; a failed send forgets it.
 */
int conn_submit(struct airlock_conn *conn, const struct conn_req *req, uint32_t *ret_id);

/*
 * The one blocking call, under every blocking entry point: send req, wait
 * for its answer (a run's events go to cb, or are dropped when cb is NULL),
 * then conn_done_finish(). Answers and events of other requests that arrive
 * meanwhile are queued for their callers.
 */
int conn_call(struct airlock_conn *conn, const struct conn_req *req, airlock_stream_fn cb,
	      void *arg, void **ret_payload);

/* conn_call() of a request without fields, handing over its payload. */
int conn_call_simple(struct airlock_conn *conn, enum proto_type type, void **ret_payload);

#endif
