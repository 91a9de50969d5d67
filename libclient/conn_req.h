/* conn_req.h: one request as the connection sends it (internal). */
#ifndef AIRLOCK_CONN_REQ_H
#define AIRLOCK_CONN_REQ_H

#include "airlock.h"
#include "proto.h"

#include <stdbool.h>
#include <stdint.h>

/* One request to send: its type, the fields of its message (the member of u
 * its type names; none for ping, info, ps and session_list). */
struct conn_req {
	enum proto_type type;
	bool stream; /* RUN: ask for stream events */
	bool tools;  /* RUN: it declares tools */
	union {
		const struct proto_hello *hello;		   /* HELLO */
		const struct airlock_run_req *run;		   /* RUN */
		const struct proto_cancel *cancel;		   /* CANCEL */
		const struct proto_session_open *session_open;	   /* SESSION_OPEN */
		const char *session;				   /* SESSION_CLOSE, _PS, _SAVE */
		const struct proto_process_stop *stop;		   /* PROCESS_STOP */
		const struct proto_session_extend *session_extend; /* SESSION_EXTEND */
		const struct proto_file_op *file_op;		   /* FILE_* */
	} u;
};

/* Encode req as request id; file_bundle: the daemon's hello_ok named
 * PROTO_FEATURE_FILE_BUNDLE. Returns 0 or -errno. */
int conn_encode(uint32_t id, const struct conn_req *req, bool file_bundle, struct proto_out *ret);

#endif
