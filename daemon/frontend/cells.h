/*
 * cells.h: an interpreter session's cells in the frontend
 * (docs/design-interpreters.md §2): one interpreter sandbox per session (a
 * run of the session whose code is the driver, daemon/cells/cells.py, and
 * whose supervisor times each cell), the cells queued for it, the driver's
 * channel (cells_msg.h), and each cell's result.
 */
#ifndef AIRLOCKD_CELLS_H
#define AIRLOCKD_CELLS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"
#include "spawn_msg.h"

struct advisory_list;
struct cells;
struct client;
struct config_runtime;
struct daemon;
struct egress_policy;
struct run;
struct session;

/* No answer from a cell this long after its SIGINT: the interpreter is
 * killed and restarted empty. */
#define CELLS_GRACE_MS 2000
/* The driver's channel closed during a cell but its interpreter has not
 * ended this long after: the code closed it and goes on; restart. */
#define CELLS_EOF_GRACE_MS 1000
/* Cells of one session waiting behind the one that runs. */
#define CELLS_QUEUE_MAX 16

/* May this runtime serve an interpreter session? (A python one.) */
bool cells_runtime_ok(const struct config_runtime *rt);
/* The driver's source, sent as the interpreter sandbox's code. */
const char *cells_driver(void);

/*
 * What the cells ask of their session, by a table of function pointers as
 * run_owner.h's: so that cells*.c call no function of session.c, and the
 * session's files and the cells' are not one circle of calls
 * (cycle-check). session.c gives its own.
 */
struct cells_session_ops {
	const char *(*id)(const struct session *s);	 /* for log lines */
	const char *(*profile)(const struct session *s); /* for the audit line */
	bool (*background)(const struct session *s);	 /* it keeps its cells' processes */
	void (*touch)(struct session *s);		 /* a cell came or ended: idle from now */
};

/* The cells of session s (ops: its own, kept), of uid, whose interpreter is
 * runtime's. */
struct cells *cells_new(struct daemon *d, struct session *s, const struct cells_session_ops *ops,
			uid_t uid, const char *runtime);
const char *cells_runtime(const struct cells *cs);
/* The session ends: every cell not answered gets an error. */
void cells_end(struct cells *cs, const char *why);
/* The session is freed (its runs are gone). NULL is fine. */
void cells_free(struct cells *cs);
/* Is a cell running or waiting? */
bool cells_busy(const struct cells *cs);

/* How many cells the session was given (queued, running or answered). */
uint64_t cells_count(const struct cells *cs);
/*
 * The config was reloaded (the RELOAD rows of cells_state.c). why: NULL if
 * the interpreter's sandbox is made the same, else what changed
 * (config_sandbox_changed()'s list); pol: the profile's new allow-list
 * (NULL: no network). A changed one's proxy follows pol at once; the
 * interpreter is restarted now, or when the cell in flight is answered,
 * and the next cell runs in a new one under the new config, its answer
 * saying so.
 */
void cells_reload(struct cells *cs, const char *why, const struct egress_policy *pol);
/* The session came back after a daemon restart (session_store.c): its
 * interpreter is a new one, so the next cell's answer has state "lost"
 * and note among its advisories. */
void cells_mark_lost(struct cells *cs, const char *note);
/* A client left: its cells are no one's (they still run, unanswered). */
void cells_client_gone(struct cells *cs, struct client *c);

/* A `run` with cell: true in the session; lim: the cell's resolved limits;
 * adv: its blocked_imports findings (taken; NULL: none). */
void cells_cell(struct cells *cs, struct client *c, uint32_t req_id, const struct proto_run *req,
		const struct proto_limits *lim, struct advisory_list *adv);

/* Is c's request req_id one of the cells queued or running here? */
bool cells_has_request(const struct cells *cs, const struct client *c, uint32_t req_id);
/*
 * cancel (id: the cancel's own request id) of c's cell of request cell_req,
 * or (cell_req 0, a cancel by the interpreter's run id) of the cell it runs
 * now. Answers c: cancel_ok, then, at once for a queued cell, or once an
 * interrupted one has stopped, its result (outcome cancelled); or
 * not_found, saying why, when no such cell can be cancelled (ended,
 * answering, an idle interpreter, a closed session), and nothing changes.
 */
void cells_cancel(struct cells *cs, struct client *c, uint32_t id, uint32_t cell_req);

/* ---- run slots (run.c) ---- */

struct runqueue_item;
/*
 * A cell takes a run slot (max_runs, max_runs_per_uid) from the moment it
 * may go to the interpreter (or have one started for it) until it is
 * answered; between cells the interpreter holds none. A cell that finds no
 * slot waits in the run queue (RUN_QUEUE_CELL), served with the runs.
 */
/* run_dispatch() popped the session's queue item: its head cell has a slot. */
void cells_slot_granted(struct runqueue_item *it);
/* Does a cell of the session hold a run slot? */
bool cells_holds_slot(const struct cells *cs);

/* ---- from the interpreter's run (run_io.c) ---- */

/* The interpreter's run was made (run_start_interp). */
void cells_interp_set(struct cells *cs, struct run *r);
/* SUP_CELLS: the frontend's end of the driver's channel (taken). */
void cells_channel(struct cells *cs, struct run *r, int fd);
/* SUP_CELL_END from the supervisor. */
void cells_sup_end(struct cells *cs, struct run *r, const struct sup_msg *m);
/* SUP_CELL_LOST: the figures of the cell the interpreter ended in. */
void cells_sup_lost(struct cells *cs, struct run *r, const struct sup_msg *m);
/* session_ps (stop false) or process_stop of pid, for a background
 * session (session.c checked): answered when the supervisor says. */
void cells_processes(struct cells *cs, struct client *c, uint32_t req_id, bool stop, uint32_t pid);
/* The interpreter's run was answered (it ended): what it says. */
void cells_interp_ended(struct cells *cs, struct run *r, const struct proto_result *res);

#endif
