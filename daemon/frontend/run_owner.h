/*
 * run_owner.h: what a run asks of its owners, a session (session.c) and an
 * interpreter session's cells (cells.c), through a table of function
 * pointers each of them fills (session_run_ops, cells_run_ops), put in
 * struct daemon at start (frontend_main). run*.c call no function of
 * session.c or cells.c: the frontend's files then call each other in no
 * large circle (docs/design-reshape.md §1.5).
 */
#ifndef AIRLOCKD_RUN_OWNER_H
#define AIRLOCKD_RUN_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct advisory_list;
struct cells;
struct client;
struct daemon;
struct proto_limits;
struct proto_result;
struct proto_run;
struct run;
struct runqueue_item;
struct session;
struct sup_msg;

/* A session's part in its runs (session.c fills it; session.h says each). */
struct run_session_ops {
	/* Admission: the session of uid named id, or NULL; its facts. */
	struct session *(*find)(struct daemon *d, uid_t uid, const char *id);
	bool (*can_queue)(const struct session *s);
	bool (*can_start)(const struct session *s);
	const char *(*profile)(const struct session *s);
	const char *(*id)(const struct session *s);
	const struct proto_limits *(*defaults)(const struct session *s);
	struct cells *(*cells)(const struct session *s);
	bool (*background)(const struct session *s); /* opened with background */
	/* How many of uid's interpreter sessions have a cell holding a slot. */
	uint32_t (*cell_slots)(const struct daemon *d, uid_t uid);
	/* The cells with c's cell of request req_id, or NULL (a cancel). */
	struct cells *(*cells_of_request)(const struct daemon *d, const struct client *c,
					  uint32_t req_id);
	/* A run of it is queued, leaves the queue unstarted, starts, has its
	 * inputs written and workspace cloned (done), is reaped. */
	void (*queued)(struct session *s);
	void (*unqueued)(struct session *s);
	uint32_t (*begin)(struct session *s, struct run *r);
	void (*prepare)(struct session *s, struct run *r, const char *const *names, const int *fds,
			size_t nfiles,
			void (*done)(struct run *r, int fd, int err, const char *what));
	void (*end)(struct session *s, struct run *r);
};

/* An interpreter session's part in its interpreter's run (cells.c fills it). */
struct run_cells_ops {
	/* The driver: the interpreter's code. */
	const char *(*driver)(void);
	/* Admission's facts: the session's interpreter, the cells waiting. */
	const char *(*runtime)(const struct cells *cs);
	uint32_t (*nqueued)(const struct cells *cs);
	/* A cell admitted: lim its limits, adv its findings (taken). */
	void (*cell)(struct cells *cs, struct client *c, uint32_t req_id,
		     const struct proto_run *req, const struct proto_limits *lim,
		     struct advisory_list *adv);
	/* The queue gave the head cell a run slot. */
	void (*slot_granted)(struct runqueue_item *it);
	/* The interpreter's run was made; its lifeline's cells messages
	 * (SUP_CELLS with the channel, taken; SUP_CELL_END; SUP_CELL_LOST);
	 * it was answered. */
	void (*interp_set)(struct cells *cs, struct run *r);
	void (*channel)(struct cells *cs, struct run *r, int fd);
	void (*sup_end)(struct cells *cs, struct run *r, const struct sup_msg *m);
	void (*sup_lost)(struct cells *cs, struct run *r, const struct sup_msg *m);
	void (*interp_ended)(struct cells *cs, struct run *r, const struct proto_result *res);
	/* A cancel of a cell (cells_cancel): answered here, cancel_ok or an error. */
	void (*cancel)(struct cells *cs, struct client *c, uint32_t id, uint32_t cell_req);
	/* SUP_PROC, SUP_PROCS_END, SUP_PROC_STOPPED (cells_procs.c). */
	void (*procs)(struct cells *cs, struct run *r, const struct sup_msg *m);
};

extern const struct run_session_ops session_run_ops;
extern const struct run_cells_ops cells_run_ops;

#endif
