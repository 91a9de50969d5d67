/*
 * cells.c: an interpreter session's cells in the frontend (cells.h,
 * docs/design-interpreters.md §2): the queue. Cells wait one behind the
 * other, each takes a run slot, the head goes to the interpreter
 * (cells_pump), and each is answered (cells_answer). The driver's channel
 * is cells_chan.c, the interpreter's lifecycle cells_interp.c.
 */
#include "cells.h"
#include "cells_int.h"
#include "cells_reply.h"

#include <assert.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "advisory.h"
#include "budget.h"
#include "cells_procs.h"
#include "clock.h"
#include "compiler.h"
#include "fdio.h"
#include "log.h"
#include "run.h"
#include "run_owner.h"
#include "runqueue.h"
#include "xalloc.h"
#include "xevent.h"

static void cells_pump_cb(evutil_socket_t fd, short what, void *arg);

struct cells *
cells_new(struct daemon *d, struct session *s, const struct cells_session_ops *ops, uid_t uid,
	  const char *runtime)
{
	struct cells *cs = xcalloc(1, sizeof(*cs));

	cs->d = d;
	cs->s = s;
	cs->sops = ops;
	cs->uid = uid;
	cs->chan = -1;
	snprintf(cs->runtime, sizeof(cs->runtime), "%s", runtime);
	TAILQ_INIT(&cs->q);
	cs->pump_ev = xevtimer_new(d->base, cells_pump_cb, cs);
	cs->eof_ev = xevtimer_new(d->base, cells_eof_cb, cs);
	cs->stream_ev = xevtimer_new(d->base, cells_stream_cb, cs);
	cs->procs = cells_procs_new();
	return cs;
}

const char *
cells_runtime(const struct cells *cs)
{
	return cs->runtime;
}

/* Cells waiting in the session (admit_decide's rule 6: CELLS_QUEUE_MAX). */
static uint32_t
cells_nqueued(const struct cells *cs)
{
	return cs->nq;
}

/* The cell's code copy is no longer needed: freed, and given back to the budget. */
void
cell_code_free(struct cells *cs, struct cell *cl)
{
	if (cl->code == NULL)
		return;
	budget_release(&cs->d->budget, cl->uid, cl->code_len, 0);
	free(cl->code);
	cl->code = NULL;
}

/* The head cell is done with its run slot: the next piece of work may have it. */
static void
cells_slot_release(struct cells *cs)
{
	if (!cs->slot_held)
		return;
	cs->slot_held = false;
	cs->d->nrunning--;
	run_dispatch_soon(cs->d);
}

/* No cell waits any more: the session leaves the run queue. */
static void
cells_slot_unqueue(struct cells *cs)
{
	if (!cs->slot_queued)
		return;
	runqueue_remove(&cs->d->queue, &cs->slot_q);
	cs->slot_queued = false;
}

/* Free a cell: the head gives its run slot back; one behind it (a queued
 * cell cancelled) holds none. */
static void
cell_free(struct cells *cs, struct cell *cl)
{
	int k;

	if (TAILQ_FIRST(&cs->q) == cl)
		cells_slot_release(cs);
	TAILQ_REMOVE(&cs->q, cl, entry);
	/* the analyzer cannot see the removal: docs/static-analysis.md */
	assert(TAILQ_FIRST(&cs->q) != cl);
	cs->nq--;
	if (cs->nq == 0)
		cells_slot_unqueue(cs);
	for (k = 0; k < 3; k++)
		fd_close(cl->fd[k]);
	cell_code_free(cs, cl);
	free(cl->adv);
	free(cl->err);
	free(cl);
}

void
cells_end(struct cells *cs, const char *why)
{
	struct cell *cl;

	if (cs == NULL)
		return;
	if (cs->state != CELLS_ENDED) /* cells_free ends it again */
		cells_transition(cs, CELLS_EV_END);
	cells_close_chan(cs);
	while ((cl = TAILQ_FIRST(&cs->q)) != NULL) {
		if (cl->c != NULL)
			client_send_error(cl->c, cl->req_id, PROTO_ERR_NOT_FOUND, "session %s",
					  why);
		cell_free(cs, cl);
	}
}

void
cells_free(struct cells *cs)
{
	if (cs == NULL)
		return;
	cells_end(cs, "ended");
	cells_procs_free(cs->procs);
	event_free(cs->pump_ev);
	event_free(cs->eof_ev);
	event_free(cs->stream_ev);
	free(cs);
}

bool
cells_busy(const struct cells *cs)
{
	return cs->nq > 0;
}

uint64_t
cells_count(const struct cells *cs)
{
	return cs->next_cell;
}

void
cells_client_gone(struct cells *cs, struct client *c)
{
	struct cell *cl;

	TAILQ_FOREACH(cl, &cs->q, entry)
	if (cl->c == c)
		cl->c = NULL;
	cells_procs_client_gone(cs->procs, c);
}

/*
 * A lost cell's result: its interpreter's end (base, or NULL for none),
 * less what was the interpreter's own; the cell's figures; why as the
 * error when it is ours (a restart), written into err.
 */
static void
cells_answer_lost(const struct cell *cl, const struct proto_result *base, const char *why,
		  struct proto_result *res, char *err, size_t errlen)
{
	if (base != NULL) {
		*res = *base;
		res->artifacts = NULL;
		res->nartifacts = 0;
		res->artifacts_omitted = res->artifacts_omitted_bytes = 0;
		res->network = NULL;
		res->tool_calls = NULL;
		res->ntool_calls = 0;
		res->tool_calls_omitted = 0;
		res->nadvisories = 0; /* the interpreter's own code's: not the cell's */
	}
	/*
	 * The interpreter's run's figures are its whole life. The cell's own
	 * (cpu, wall, memory peak) are the supervisor's, from its
	 * CELLS_SUP_BEGIN (SUP_CELL_LOST); a supervisor gone without them
	 * (the lifeline closed) leaves the wall time from the hand-off and no
	 * cpu or memory figure (0: unknown, never the interpreter's). A cell
	 * that never reached an interpreter (it could not start) has the
	 * figures of that start.
	 */
	if (cl->lost_fig) {
		res->cpu_ms = cl->lost_cpu_ns / 1000000ULL;
		res->wall_ms = cl->lost_wall_ns / 1000000ULL;
		res->memory_peak_bytes = cl->lost_peak;
	} else if (cl->t_sent.tv_sec != 0) {
		res->cpu_ms = 0;
		res->wall_ms = clock_ms_since(&cl->t_sent);
		res->memory_peak_bytes = 0;
	}
	if (why != NULL) {
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen, "%s", why);
		res->error = err;
	}
}

/* A cancelled cell's outcome (docs/design-interpreters.md §2.7): queued,
 * interrupted, or lost past the grace (with a note): `cancelled`; done
 * first, a limit first, or restarted by us (why): its own. */
static void
cells_answer_cancelled(const struct cells *cs, const struct cell *cl, bool lost, const char *why,
		       struct proto_result *res, char *note, size_t len)
{
	if (cl->stage == CELL_QUEUED) {
		res->outcome = PROTO_OUTCOME_CANCELLED;
		res->error = NULL;
	} else if (lost && why == NULL && res->outcome != PROTO_OUTCOME_MEMORY_LIMIT &&
		   res->outcome != PROTO_OUTCOME_PROCESS_LIMIT) {
		res->outcome = PROTO_OUTCOME_CANCELLED;
		res->error = NULL;
		snprintf(note, len,
			 "the cell did not stop within %d ms of its interrupt: the interpreter "
			 "was killed and its state was lost (session %s)",
			 CELLS_GRACE_MS, cells_sid(cs));
	} else if (res->outcome == PROTO_OUTCOME_EXITED && cl->done.status == CELLS_INTERRUPTED) {
		res->outcome = PROTO_OUTCOME_CANCELLED;
	}
}

/*
 * Answer the head cell. lost: the interpreter it ran in is gone (res then
 * holds the outcome its run ended with); else the driver's done and the
 * supervisor's end message decide.
 */
void
cells_answer(struct cells *cs, struct cell *cl, const struct proto_result *base,
	     const struct sup_msg *end, bool lost, const char *why)
{
	struct proto_result res;
	struct proto_artifact disp[CELLS_DISPLAY_MAX], *arts = NULL;
	uint8_t *bufs[2], *value = NULL, *dbuf[CELLS_DISPLAY_MAX];
	char err[512];
	struct proto_out out;
	char note[PROTO_ADVISORY_MAX + 1], note_cancel[PROTO_ADVISORY_MAX + 1] = "";
	uint32_t i;
	int k, rc;

	memset(&res, 0, sizeof(res));
	memset(dbuf, 0, sizeof(dbuf));
	if (lost)
		cells_answer_lost(cl, base, why, &res, err, sizeof(err));
	else
		cells_answer_done(&cl->done, cl->fd[2], end, &res, disp, dbuf, &value);
	if (cl->cancelled)
		cells_answer_cancelled(cs, cl, lost, why, &res, note_cancel, sizeof(note_cancel));
	/* The files the cell created or changed: the supervisor's walk at its
	 * end, collected by the interpreter's run (issue 30). */
	if (!lost && cs->interp != NULL)
		arts = run_io_cell_artifacts(cs->interp, &res);
	/* Its exception (checked, cells_read_error): "ename\0evalue\0tb\0". */
	if (!lost && cl->err != NULL) {
		res.ename = cl->err;
		res.evalue = res.ename + strlen(res.ename) + 1;
		res.traceback = res.evalue + strlen(res.evalue) + 1;
	}
	/* What a streaming cell wrote since the last tick goes before its
	 * result (every stream event does). */
	cells_stream_flush(cl);
	for (k = 0; k < 2; k++)
		cells_output(cl->fd[k], cl->lim.v[PROTO_LIMIT_OUTPUT_BYTES], &res.out[k], &bufs[k]);
	/* Why the interpreter this cell found is a new one, when a reload
	 * restarted it (cells_reload_restart): first, so that it is never
	 * left out. */
	memcpy(note, cs->note, sizeof(note));
	cs->note[0] = '\0';
	if (note[0] != '\0')
		res.advisories[res.nadvisories++] = note;
	if (note_cancel[0] != '\0')
		res.advisories[res.nadvisories++] = note_cancel;
	for (i = 0; cl->adv != NULL && i < cl->adv->n && res.nadvisories < PROTO_ADVISORIES_MAX;
	     i++)
		res.advisories[res.nadvisories++] = cl->adv->text[i];
	res.cell = cl->n;
	/* A queued cell answered (cancelled, or its interpreter failed to
	 * start: cs->lost is then set) never reached an interpreter. */
	res.state = (lost && cl->stage != CELL_QUEUED) || cs->lost ? "lost" : "kept";
	/* Its interpreter ended during it (design-jupyter.md §5.1): the one
	 * answer that says so; the next cell's is lost, not restarted. */
	res.restarted = lost && cl->stage != CELL_QUEUED;
	/* Its wait for the cells before it, a run slot and an interpreter
	 * (to its answer, for one answered unsent). */
	res.queued_ms = cl->t_sent.tv_sec != 0 || cl->t_sent.tv_nsec != 0
				? clock_ms_between(&cl->t_arrive, &cl->t_sent)
				: clock_ms_since(&cl->t_arrive);
	if (!lost)
		cs->lost = false;
	cs->sops->touch(cs->s); /* idle from the cell's end */
	audit_run(cs->d,
		  &(struct audit_who){.run_id = cs->interp_id,
				      .uid = cl->uid,
				      .pid = cl->pid,
				      .runtime = cs->runtime,
				      .profile = cs->sops->profile(cs->s),
				      .asked = &cl->lim},
		  &res, NULL, res.error);
	log_debug("session %s: cell %" PRIu64 ": %s, state %s, %" PRIu64 " ms", cells_sid(cs),
		  cl->n, proto_outcome_name(res.outcome), res.state, res.wall_ms);
	if (cl->c != NULL) {
		rc = proto_encode_result(cl->req_id, &res, &out);
		client_send_encoded(cl->c, cl->req_id, rc, &out, "the result");
	}
	run_io_artifacts_free(arts, res.nartifacts);
	free(bufs[0]);
	free(bufs[1]);
	free(value);
	for (i = 0; i < CELLS_DISPLAY_MAX; i++)
		free(dbuf[i]);
	cell_free(cs, cl);
}

/* Move on: start an interpreter if a cell waits and none is there; send
 * the head cell when the channel is up. Never from inside itself: the
 * interpreter's run may end while it is being made. */
static void
cells_pump(struct cells *cs)
{
	struct cell *cl;
	int rc;

	if (cs->pumping)
		return;
	cs->pumping = true;
	/* A reload changed the interpreter's sandbox (cells_reload): given
	 * up then (KILLING), its kill goes now; one that was BUSY goes once
	 * no cell is with it; a cell waiting goes to the next. */
	if (cs->kill_soon) {
		cs->kill_soon = false;
		if (cs->interp != NULL && cs->state == CELLS_KILLING)
			cells_kill_interp(cs);
	}
	cl = TAILQ_FIRST(&cs->q);
	if (cs->stale && cs->interp != NULL && (cl == NULL || cl->stage == CELL_QUEUED))
		cells_reload_restart(cs);
	while ((cl = TAILQ_FIRST(&cs->q)) != NULL && cl->stage == CELL_QUEUED &&
	       cs->state != CELLS_ENDED) {
		/*
		 * A cell is work being done: it takes a run slot, as a run
		 * does, before it goes to the interpreter or has one started;
		 * without one it waits in the run queue, round-robin with
		 * every uid's runs (cells_slot_granted pumps again). Between
		 * cells the interpreter holds no slot (issue 28).
		 */
		if (!cs->slot_held) {
			if (!cs->slot_queued) {
				if (runqueue_push(&cs->d->queue, &cs->slot_q, cs->uid,
						  RUN_QUEUE_CELL, UINT32_MAX, UINT32_MAX) < 0)
					fatalx("out of memory");
				cs->slot_queued = true;
				run_dispatch_soon(cs->d);
			}
			break;
		}
		if (cs->interp == NULL) {
			/* A new interpreter is started on behalf of the cell's
			 * client (its access and limits are checked again):
			 * a cell whose client left is dropped. */
			if (cl->c == NULL) {
				log_debug("session %s: cell %" PRIu64 " dropped: its client left",
					  cells_sid(cs), cl->n);
				cell_free(cs, cl);
				continue;
			}
			rc = run_start_interp(cs->d, cl->c, cl->req_id, cs->s, cs->runtime, cs);
			if (rc < 0) {
				/* Refused, and that cell was told why. */
				cl->c = NULL;
				cell_free(cs, cl);
				continue;
			}
			break;
		}
		if (cs->chan < 0) {
			if (cs->state != CELLS_STARTING)
				cells_restart(cs, "the interpreter has no channel");
			break;
		}
		cl->stage = CELL_SENT;
		cells_transition(cs, CELLS_EV_SENT);
		cs->took = true;
		rc = cells_send(cs, cl);
		if (rc < 0)
			cells_restart(cs, "cell %" PRIu64 ": cannot hand it over: %s", cl->n,
				      strerror(-rc));
		break;
	}
	cs->pumping = false;
}

void
cells_slot_granted(struct runqueue_item *it)
{
	struct cells *cs = (struct cells *)((char *)it - offsetof(struct cells, slot_q));

	cs->slot_queued = false;
	cs->slot_held = true;
	cs->d->nrunning++;
	/* From the loop's next turn: run_dispatch() is the caller. */
	cells_pump_soon(cs);
}

bool
cells_holds_slot(const struct cells *cs)
{
	return cs->slot_held;
}

static void
cells_pump_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	cells_pump(arg);
}

/* cells_pump from the loop's next turn: for callers inside a run's end. */
void
cells_pump_soon(struct cells *cs)
{
	event_active(cs->pump_ev, 0, 0);
}

void
cells_cell(struct cells *cs, struct client *c, uint32_t req_id, const struct proto_run *req,
	   const struct proto_limits *lim, struct advisory_list *adv)
{
	struct cell *cl;

	/* Admitted (admit_decide): its runtime is the session's, it asks
	 * for code and limits only, and fewer than CELLS_QUEUE_MAX wait. */
	cl = xcalloc(1, sizeof(*cl));
	cl->c = c;
	cl->req_id = req_id;
	cl->pid = client_pid(c);
	cl->n = ++cs->next_cell;
	clock_gettime(CLOCK_MONOTONIC, &cl->t_arrive);
	cl->lim = *lim;
	cl->svg = req->figures_svg;
	cl->ipython = req->ipython;
	cl->stream = req->stream;
	cl->adv = adv;
	cl->fd[0] = cl->fd[1] = cl->fd[2] = -1;
	cl->code_len = req->code.present ? req->code.len : 0;
	cl->uid = client_uid(c);
	/*
	 * The copy waits in the queue: charged to the uid's budget, as a
	 * queued run's plan is, or 16 cells of 256 MiB of memfd hole each
	 * (free to the client) would each cost the daemon 256 MiB, in every
	 * session (admit_decide() checked the room before).
	 */
	if (budget_charge(&cs->d->budget, cl->uid, cl->code_len, 0, UINT64_MAX, UINT32_MAX) < 0)
		fatalx("out of memory");
	cl->code = xmalloc(cl->code_len + 1);
	if (cl->code_len > 0)
		memcpy(cl->code, req->code.data, cl->code_len);
	TAILQ_INSERT_TAIL(&cs->q, cl, entry);
	cs->nq++;
	cs->sops->touch(cs->s);
	cells_pump(cs);
}

const struct run_cells_ops cells_run_ops = {
	.driver = cells_driver,
	.runtime = cells_runtime,
	.nqueued = cells_nqueued,
	.cell = cells_cell,
	.slot_granted = cells_slot_granted,
	.interp_set = cells_interp_set,
	.channel = cells_channel,
	.sup_end = cells_sup_end,
	.sup_lost = cells_sup_lost,
	.interp_ended = cells_interp_ended,
	.cancel = cells_cancel,
	.procs = cells_sup_procs,
};