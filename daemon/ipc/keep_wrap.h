/*
 * keep_wrap.h: the frontend's side of a session's keeper channel
 * (keep_msg.h): a request waiting for its answer (struct kop), a request
 * sent, and one answer received with its size and fds checked before the
 * session (frontend/session.c) sees it.
 */
#ifndef AIRLOCKD_KEEP_WRAP_H
#define AIRLOCKD_KEEP_WRAP_H

#include <stdint.h>
#include <sys/queue.h>

#include "keep_msg.h"
#include "proto.h"

struct client;
struct run;

enum kop_kind {
	KOP_FILE,    /* a client's file operation: reply to (c, req_id) */
	KOP_INPUT,   /* a run's input file */
	KOP_MOUNT,   /* a run's workspace mount */
	KOP_SAVE,    /* the session's snapshot for its restart (session_store.c) */
	KOP_RESTORE, /* one entry of the archive a session is restored from */
};

/* One request sent to the keeper, waiting for its answer. */
struct kop {
	TAILQ_ENTRY(kop) entry;
	uint32_t seq;
	enum keep_op op;
	enum kop_kind kind;
	struct client *c;
	uint32_t req_id;
	struct run *r;
	void (*done)(struct run *r, int fd, int err, const char *what);
	char what[PROTO_NAME_MAX + 1];
	int fd; /* KOP_SAVE for a client: the memfd the keeper writes, or -1 */
};

/* Send request op with seq for path (a workspace path; -ENAMETOOLONG past
 * the message's room) and, if fd >= 0, that fd. 0 or -errno. */
int keep_wrap_send(int sock, uint32_t op, uint32_t seq, const char *path, int fd);

/*
 * Receive one answer from the keeper into rep: 1 with *ret_fd its one fd
 * or -1; 0 at EOF; -EAGAIN when nothing waits; -EBADMSG (a wrong size, or
 * fds past one: every fd received closed) or another -errno (the channel
 * is broken).
 */
int keep_wrap_recv(int sock, struct keep_reply *rep, int *ret_fd);

#endif
