/*
 * cells_int.h: what the files of an interpreter session's cells share
 * (cells.c, cells_chan.c, cells_interp.c, cells_cancel.c, cells_stream.c):
 * a cell, the cells of a session, and the calls between them. Nothing
 * outside those files includes it.
 */
#ifndef AIRLOCK_CELLS_INT_H
#define AIRLOCK_CELLS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include "cells.h"
#include "cells_msg.h"
#include "cells_state.h"
#include "proto.h"
#include "runqueue.h"

struct advisory_list;
struct cells_procs;
struct client;
struct event;
struct run;
struct session;
struct daemon;

/* Where a cell is. */
enum cell_stage {
	CELL_QUEUED = 0, /* waiting for the interpreter or the cell before it */
	CELL_SENT,	 /* with the driver */
	CELL_FINISHING,	 /* the driver answered; waiting for SUP_CELL_END */
};

struct cell {
	TAILQ_ENTRY(cell) entry;
	struct client *c; /* NULL once it left */
	uint32_t req_id;
	pid_t pid; /* for the audit line */
	uint64_t n;
	enum cell_stage stage;
	uint8_t *code; /* until sent; its bytes are charged to uid's budget */
	size_t code_len;
	uid_t uid;
	struct proto_limits lim;
	int fd[3];		   /* stdout, stderr, reply memfds; -1 */
	struct timespec t_arrive;  /* its request came */
	struct timespec t_sent;	   /* handed to the driver */
	struct advisory_list *adv; /* blocked_imports findings, or NULL */
	struct cells_done done;
	bool cancelled; /* its owner cancelled it (cells_cancel) */
	bool svg;	/* the request's figures_svg */
	bool ipython;	/* the request's ipython */
	bool lost_fig;	/* SUP_CELL_LOST came: its own figures when its interpreter ended */
	uint64_t lost_cpu_ns, lost_wall_ns, lost_peak;
	/* The request's stream: its output sent as it comes, and the bytes
	 * of stdout, stderr sent so far (cells_stream.c). */
	bool stream;
	uint64_t streamed[2];
	/* The driver's exception fields (cells_read_error), or NULL. */
	char *err;
};

TAILQ_HEAD(cell_list, cell);

struct cells {
	struct daemon *d;
	struct session *s;
	const struct cells_session_ops *sops; /* what is asked of s (cells.h) */
	char runtime[PROTO_RUNTIME_MAX + 1];
	struct run *interp; /* the interpreter's run, or NULL */
	uint32_t interp_id; /* its run id, for the cells' audit lines */
	int chan;	    /* the driver's channel, or -1 */
	struct event *chan_ev;
	uint64_t next_cell;
	bool lost; /* an interpreter ended since the last answer: the state is gone */
	char lost_why[160];
	struct cell_list q; /* the head is the one running, if any is */
	uint32_t nq;
	enum cells_state state; /* changed by cells_transition() only */
	bool pumping;
	struct event *pump_ev;
	bool took; /* the interpreter was handed a cell */
	/* The last cell was sent SIGINT and did not take it: the next start
	 * tells the driver to drop a pending one (CELLS_START_F_DRAIN_SIGINT). */
	bool drain_sigint;
	struct event *eof_ev; /* the channel closed during a cell: restart unless it ends */
	/* A streaming cell's next look at its output (cells_stream.c). */
	struct event *stream_ev;
	/* A reload changed what the interpreter's sandbox is made with
	 * (cells_reload): stale, it was BUSY: restart it once the cell in
	 * flight is answered; kill_soon, it was given up (KILLING) and its
	 * kill is sent from the next pump; reload_kill, it is being
	 * restarted for that (a cell waiting is not the cause: it goes to
	 * the next one); note, the advisory the next cell's answer carries. */
	bool stale;
	bool kill_soon;
	bool reload_kill;
	char reload_why[96];
	char note[PROTO_ADVISORY_MAX + 1];
	/* The head cell's run slot (cells.h): asked for in the run queue, or held. */
	struct runqueue_item slot_q;
	bool slot_queued, slot_held;
	uid_t uid; /* the session's, whose slots its cells take */
	/* A background session's process questions (cells_procs.c). */
	struct cells_procs *procs;
};

/* The session's id, for log lines. */
static inline const char *
cells_sid(const struct cells *cs)
{
	return cs->sops->id(cs->s);
}

/* Answer cell cl (cells.c): lost, its interpreter is gone (base: how its
 * run ended); why, a restart of ours (the error). */
void cells_answer(struct cells *cs, struct cell *cl, const struct proto_result *base,
		  const struct sup_msg *end, bool lost, const char *why);
/* Look at the queue from the event loop's next turn (cells.c). */
void cells_pump_soon(struct cells *cs);
/* The cell's code copy freed and given back to the uid's budget (cells.c). */
void cell_code_free(struct cells *cs, struct cell *cl);
/* The interpreter changes state by its table, or fatalx (cells_interp.c). */
void cells_transition(struct cells *cs, enum cells_event ev);
/* The interpreter given up on the lifeline (CELLS_SUP_KILL), and a stale
 * one restarted once no cell is with it (cells_interp.c). */
void cells_kill_interp(struct cells *cs);
void cells_reload_restart(struct cells *cs);
/* SUP_PROC, SUP_PROCS_END, SUP_PROC_STOPPED (cells_interp.c). */
void cells_sup_procs(struct cells *cs, struct run *r, const struct sup_msg *m);
/* The driver's channel (cells_chan.c): closed and unwatched; the head cell
 * handed over (0 or -errno); the timer's callback when it closed during a
 * cell (arg: the cells). */
void cells_close_chan(struct cells *cs);
int cells_send(struct cells *cs, struct cell *cl);
void cells_eof_cb(int fd, short what, void *arg);
/* The head cell's output read and streamed every CELLS_STREAM_MS while it
 * is with the driver (cells_stream.c, design-jupyter.md §6.3): the event's
 * callback (arg: the cells), the timer armed, and what is new sent now. */
#define CELLS_STREAM_MS 50
void cells_stream_cb(int fd, short what, void *arg);
void cells_stream_arm(struct cells *cs);
void cells_stream_flush(struct cell *cl);
/* Give the interpreter up and start a new one for the next cell (cells.c). */
void cells_restart(struct cells *cs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
