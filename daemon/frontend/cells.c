/*
 * cells.c: an interpreter session's cells in the frontend (cells.h,
 * docs/design-interpreters.md §2).
 *
 * One cell at a time: the frontend makes its code memfd (sealed) and three
 * plain memfds (stdout, stderr, reply), tells the supervisor the cell
 * begins (CELLS_SUP_BEGIN: its clock), hands the four fds to the driver
 * (struct cells_start), and waits for the driver's struct cells_done. It
 * then asks the supervisor to end the cell (CELLS_SUP_FINISH: the cell's
 * other processes die), and at SUP_CELL_END reads what the cell wrote and
 * answers. Outputs are memfds, not pipes: nothing the cell leaves behind
 * can hold the answer up, and a lingering writer only fills its own copy.
 *
 * The driver runs in the code's process: every message from it is checked
 * here (size, magic, cell number, status, lengths against the bounds and the
 * reply's size, mime names from a closed set, UTF-8 of the value, no fds);
 * anything else, or its channel closing, ends the interpreter, and the
 * next cell starts a new one: the result says the state was lost.
 */
#include "cells.h"
#include "cells_int.h"
#include "cells_reply.h"
#include "cells_state.h"

#include <assert.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "cells_driver.h"
#include "advisory.h"
#include "cells_msg.h"
#include "cells_procs.h"
#include "clock.h"
#include "config.h"
#include "egress.h"
#include "fdpass.h"
#include "frontend.h"
#include "log.h"
#include "memfd.h"
#include "run.h"
#include "runqueue.h"
#include "run_owner.h"
#include "xalloc.h"
#include "compiler.h"
#include "fdio.h"
#include "xevent.h"

static void cells_pump_cb(evutil_socket_t fd, short what, void *arg);

/* The one place an interpreter changes state: its table (cells_state.c) says where
 * ev leads; an event that cannot happen in the state is a broken invariant. */
static void
cells_transition(struct cells *cs, enum cells_event ev)
{
	int to = fsm_next(&cells_fsm, (int)cs->state, (int)ev);

	if (to < 0)
		fatalx("session %s: interpreter: event %s in state %s", cells_sid(cs),
		       fsm_event_name(&cells_fsm, (int)ev),
		       fsm_state_name(&cells_fsm, (int)cs->state));
	log_debug("session %s: interpreter: %s -> %s (%s)", cells_sid(cs),
		  fsm_state_name(&cells_fsm, (int)cs->state), fsm_state_name(&cells_fsm, to),
		  fsm_event_name(&cells_fsm, (int)ev));
	cs->state = (enum cells_state)to;
}
static void cells_eof_cb(evutil_socket_t fd, short what, void *arg);

const char *
cells_driver(void)
{
	return cells_driver_py;
}

bool
cells_runtime_ok(const struct config_runtime *rt)
{
	const char *dot;

	/* A Python by what the runtime is (its language), not by its name. */
	if (rt == NULL || rt->is_exec || rt->argc == 0 || rt->language != RULES_LANG_PYTHON)
		return false;
	dot = strrchr(rt->code_name, '.');
	return dot != NULL && strcmp(dot, ".py") == 0;
}

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
static void
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

static void
cells_close_chan(struct cells *cs)
{
	frontend_unwatch(&cs->chan_ev, &cs->chan);
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

/* The interpreter must go: its run is cancelled, and the cell it runs (if
 * any) is answered when that run ends. */
/* Through the supervisor, so that the cell gets its own figures
 * (SUP_CELL_LOST); a supervisor out of reach is cut off. */
static void
cells_kill_interp(struct cells *cs)
{
	struct cells_sup kill;

	memset(&kill, 0, sizeof(kill));
	kill.type = CELLS_SUP_KILL;
	if (run_lifeline_send(cs->interp, &kill, sizeof(kill)) < 0)
		run_kill(cs->interp);
}

void
cells_restart(struct cells *cs, const char *fmt, ...)
{
	va_list ap;

	if (cs->state == CELLS_KILLING)
		return; /* the first reason stands */
	va_start(ap, fmt);
	vsnprintf(cs->lost_why, sizeof(cs->lost_why), fmt, ap);
	va_end(ap);
	log_warnx("session %s: %s: restarting the interpreter", cells_sid(cs), cs->lost_why);
	cells_close_chan(cs);
	if (cs->interp == NULL)
		return;
	cells_transition(cs, CELLS_EV_KILL);
	cells_kill_interp(cs);
}

void
cells_mark_lost(struct cells *cs, const char *note)
{
	cs->lost = true;
	snprintf(cs->note, sizeof(cs->note), "%s", note);
}

/* The advisory the next cell's answer carries, and the reason its
 * interpreter ended, for a restart by a reload that changed its sandbox. */
static void
cells_reload_note(struct cells *cs)
{
	snprintf(cs->note, sizeof(cs->note),
		 "the configuration was reloaded and changed this session's sandbox (%.96s): "
		 "the interpreter was restarted empty under the new configuration",
		 cs->reload_why);
	cs->reload_kill = true;
}

/*
 * Restart the interpreter because a reload changed its sandbox (its
 * profile's mounts, network or allow-list, switches, limits, or its
 * runtime): it was made under the old config and a mount or a host taken
 * away must not stay reachable from a live interpreter, when a one-shot run
 * loses it at once (issue 28). Its state is lost; the next cell's answer
 * says why (state "lost" and an advisory). Here for one that was BUSY at
 * the reload (its row kept it BUSY), once its cell is answered.
 */
static void
cells_reload_restart(struct cells *cs)
{
	cs->stale = false;
	if (cs->interp == NULL || cs->state == CELLS_KILLING)
		return;
	cells_reload_note(cs);
	cells_restart(cs, "the configuration was reloaded (%s)", cs->reload_why);
}

void
cells_reload(struct cells *cs, const char *why, const struct egress_policy *pol)
{
	static const struct egress_policy none; /* refuses every connection */
	enum cells_state from = cs->state;
	struct run *r = cs->interp;

	if (why == NULL) {
		cells_transition(cs, CELLS_EV_RELOAD);
		return;
	}
	cells_transition(cs, CELLS_EV_STALE);
	if (from == CELLS_IDLE || from == CELLS_KILLING || r == NULL)
		return;
	snprintf(cs->reload_why, sizeof(cs->reload_why), "%s", why);
	/*
	 * The proxy follows the new allow-list at once, for a cell in
	 * flight too (a profile no longer on the proxy: nothing passes);
	 * the sandbox itself cannot change under a running cell, which
	 * ends in it, as a run in flight does (BUSY stays BUSY), and the
	 * interpreter is restarted as soon as that cell is answered.
	 */
	if (r->egress_pol != NULL) {
		*r->egress_pol = pol != NULL ? *pol : none;
		egress_run_set_policy(r->egress, r->egress_pol);
	}
	if (cs->state == CELLS_BUSY) {
		cs->stale = true;
		return;
	}
	/*
	 * KILLING's entry action for a reload: given up now (no cell is
	 * handed to it any more: its channel is closed), its kill sent from
	 * the loop's next turn (cells_pump): the caller walks the sessions,
	 * and a run killed now could end under it.
	 */
	cells_reload_note(cs);
	snprintf(cs->lost_why, sizeof(cs->lost_why), "the configuration was reloaded (%s)",
		 cs->reload_why);
	log_warnx("session %s: %s: restarting the interpreter", cells_sid(cs), cs->lost_why);
	cells_close_chan(cs);
	cs->kill_soon = true;
	cells_pump_soon(cs);
}

/*
 * One message of the driver's. ended: the supervisor ended the cell
 * already (its SUP_CELL_END came first, the driver's number on the done
 * pipe: design-interpreters.md §2.9), so the answer, sent before that
 * number, must be here now, and no FINISH is sent.
 */
static void
cells_chan_take(struct cells *cs, bool ended)
{
	struct cell *cl = TAILQ_FIRST(&cs->q);
	struct cells_done dn;
	struct cells_sup fin;
	int fds[CELLS_NFDS];
	size_t nfds = 0;
	ssize_t n;
	const char *bad;

	n = fdpass_recv(cs->chan, &dn, sizeof(dn), fds, CELLS_NFDS, &nfds);
	if ((n == -EAGAIN || n == -EINTR) && !ended)
		return;
	if (n == -EAGAIN || n == -EINTR) {
		cells_restart(cs,
			      "cell %" PRIu64 ": the cell ended without the interpreter's answer",
			      cl->n);
		return;
	}
	fdpass_close_all(fds, nfds);
	if (ended && (n == 0 || n == -ECONNRESET)) {
		cells_restart(cs, "cell %" PRIu64 ": the interpreter closed its channel", cl->n);
		return;
	}
	if (n == 0 || n == -ECONNRESET) {
		/* The channel closed: the driver is gone or broken. If it is
		 * gone, its run's end answers the cell with the true outcome
		 * (an oom kill closes the channel first); if the run has not
		 * ended a moment later, the code closed or overwrote the
		 * channel and goes on: nothing can answer, so restart now
		 * rather than at the cell's wall limit. */
		log_warnx("session %s: the interpreter closed its channel", cells_sid(cs));
		cells_close_chan(cs);
		if (cl == NULL || cl->stage != CELL_SENT) {
			cells_restart(cs, "the interpreter closed its channel");
		} else {
			struct timeval tv = {CELLS_EOF_GRACE_MS / 1000,
					     (CELLS_EOF_GRACE_MS % 1000) * 1000};

			evtimer_add(cs->eof_ev, &tv);
		}
		return;
	}
	if (n < 0 || (size_t)n != sizeof(dn) || nfds != 0) {
		cells_restart(cs, "the interpreter sent a malformed message (%zd bytes, %zu fds)",
			      n, nfds);
		return;
	}
	if (cl == NULL || cl->stage != CELL_SENT) {
		cells_restart(cs, "the interpreter spoke out of turn");
		return;
	}
	bad = cells_check_done(cl->n, cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES], cl->fd[2], &dn);
	if (bad == NULL)
		bad = cells_read_error(&dn, cl->fd[2], &cl->err);
	if (bad != NULL) {
		cells_restart(cs, "cell %" PRIu64 ": the interpreter's answer is refused: %s",
			      cl->n, bad);
		return;
	}
	cl->done = dn;
	cl->stage = CELL_FINISHING;
	if (ended)
		return;
	memset(&fin, 0, sizeof(fin));
	fin.type = CELLS_SUP_FINISH;
	fin.cell = cl->n;
	if (cs->interp == NULL || run_lifeline_send(cs->interp, &fin, sizeof(fin)) < 0)
		cells_restart(cs, "cell %" PRIu64 ": cannot reach the supervisor", cl->n);
}

static void
cells_chan_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	cells_chan_take(arg, false);
}

void
cells_channel(struct cells *cs, struct run *r, int fd)
{
	if (cs->interp != r || cs->chan >= 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return;
	}
	cs->chan = fd;
	cs->chan_ev = xevent_new(cs->d->base, fd, EV_READ | EV_PERSIST, cells_chan_cb, cs);
	event_add(cs->chan_ev, NULL);
	cells_transition(cs, CELLS_EV_CHANNEL);
	cells_pump_soon(cs);
}

void
cells_sup_end(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	struct cell *cl = TAILQ_FIRST(&cs->q);

	if (cs->interp != r)
		return; /* an interpreter already given up */
	/* The driver's number ended the cell before its answer was read
	 * here: read it now (design-interpreters.md §2.9). */
	if (cl != NULL && cl->stage == CELL_SENT && m->size == cl->n && cs->chan >= 0) {
		cells_chan_take(cs, true);
		if (cs->state == CELLS_KILLING)
			return;
	}
	if (cl == NULL || cl->stage != CELL_FINISHING || m->size != cl->n) {
		cells_restart(cs, "a cell's end that is not this cell's");
		return;
	}
	/* A SIGINT the supervisor sent that the cell did not take (it came
	 * after the driver blocked it) is pending in the interpreter: the
	 * next cell's driver drops it, and only then. Any other SIGINT
	 * pending at a start is that cell's cancel, come early. */
	cs->drain_sigint = m->status != 0 && cl->done.status != CELLS_INTERRUPTED;
	cells_answer(cs, cl, NULL, m, false, NULL);
	cells_transition(cs, CELLS_EV_DONE);
	cells_pump_soon(cs);
}

void
cells_sup_lost(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	struct cell *cl = TAILQ_FIRST(&cs->q);

	/* The interpreter's end (SUP_EXIT) follows and answers the cell. */
	if (cs->interp != r || cl == NULL || cl->stage == CELL_QUEUED || m->size != cl->n)
		return;
	cl->lost_fig = true;
	cl->lost_cpu_ns = m->cpu_ns;
	cl->lost_wall_ns = m->wall_ns;
	cl->lost_peak = m->memory_peak;
}

void
cells_interp_ended(struct cells *cs, struct run *r, const struct proto_result *res)
{
	struct cell *cl = TAILQ_FIRST(&cs->q);
	char why[256];

	if (cs->interp != r)
		return;
	cs->interp = NULL;
	cells_procs_ended(cs->procs);
	evtimer_del(cs->eof_ev);
	cells_close_chan(cs);
	/* A restart of ours (cells_restart, a reload) said why already: that
	 * reason is the cell's error, not how the interpreter we killed ended
	 * (it would always read "signaled"). */
	if (cs->lost_why[0] == '\0')
		snprintf(cs->lost_why, sizeof(cs->lost_why), "the interpreter ended (%s)",
			 proto_outcome_name(res->outcome));
	cs->lost = true;
	/*
	 * An interpreter that ended before it took any cell failed to start
	 * (set-up, exec, a memory limit too small for python): the cell it
	 * was started for is answered with that end, or the next pump would
	 * start another for it, without end.
	 */
	if (cl != NULL && (cl->stage != CELL_QUEUED || (!cs->took && !cs->reload_kill))) {
		bool ours = cs->state == CELLS_KILLING;

		snprintf(why, sizeof(why), "%s; the interpreter was restarted empty", cs->lost_why);
		cells_answer(cs, cl, res, NULL, true, ours ? why : NULL);
	}
	cs->lost_why[0] = '\0';
	cells_transition(cs, CELLS_EV_EXIT);
	cs->stale = false;
	cs->kill_soon = false;
	cs->reload_kill = false;
	if (cs->state != CELLS_ENDED)
		cells_pump_soon(cs);
}

/* The channel closed during a cell and the interpreter still runs. */
static void
cells_eof_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct cells *cs = arg;
	struct cell *cl = TAILQ_FIRST(&cs->q);

	if (cs->interp != NULL && cl != NULL && cl->stage == CELL_SENT)
		cells_restart(cs, "cell %" PRIu64 ": the interpreter closed its channel", cl->n);
}

/* Hand the head cell to the driver: the supervisor first (its clock), then the driver. */
static int
cells_send(struct cells *cs, struct cell *cl)
{
	struct cells_sup beg;
	struct cells_start st;
	int fds[CELLS_NFDS] = {-1, -1, -1, -1}, k, rc;

	rc = memfd_sealed_create("airlock-cell", cl->code, cl->code_len, &fds[0]);
	for (k = 0; rc == 0 && k < 3; k++) {
		rc = memfd_new(k == 0 ? "stdout" : k == 1 ? "stderr" : "reply", &cl->fd[k]);
		fds[k + 1] = cl->fd[k];
	}
	if (rc < 0)
		goto out;
	memset(&beg, 0, sizeof(beg));
	beg.type = CELLS_SUP_BEGIN;
	beg.cell = cl->n;
	beg.wall_ms = cl->lim.v[PROTO_LIMIT_WALL_MS];
	beg.cpu_ms = cl->lim.v[PROTO_LIMIT_CPU_MS];
	beg.grace_ms = CELLS_GRACE_MS;
	/* The files the cell leaves are chosen and cut by its own limits, as a
	 * run's (run_io_add_artifact reads the run's at each SUP_ARTIFACT). */
	cs->interp->lim.v[PROTO_LIMIT_ARTIFACTS] = cl->lim.v[PROTO_LIMIT_ARTIFACTS];
	cs->interp->lim.v[PROTO_LIMIT_ARTIFACT_BYTES] = cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES];
	clock_gettime(CLOCK_MONOTONIC, &cl->t_sent);
	rc = run_lifeline_send(cs->interp, &beg, sizeof(beg));
	if (rc < 0)
		goto out;
	memset(&st, 0, sizeof(st));
	st.magic = CELLS_MAGIC;
	st.flags = (cl->svg ? CELLS_START_SVG : 0) | (cl->ipython ? CELLS_START_IPYTHON : 0) |
		   (cs->sops->background(cs->s) ? CELLS_START_F_BACKGROUND : 0) |
		   (cs->drain_sigint ? CELLS_START_F_DRAIN_SIGINT : 0) |
		   (cl->stream ? CELLS_START_F_STREAM : 0);
	st.cell = cl->n;
	st.value_max = PROTO_VALUE_MAX;
	st.display_max = (uint32_t)(cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES] > UINT32_MAX
					    ? UINT32_MAX
					    : cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES]);
	rc = fdpass_send(cs->chan, &st, sizeof(st), fds, CELLS_NFDS);
	if (rc >= 0)
		rc = 0;
	if (rc == 0 && cl->stream)
		cells_stream_arm(cs);
out:
	fd_close(fds[0]);
	cell_code_free(cs, cl);
	return rc;
}

void
cells_interp_set(struct cells *cs, struct run *r)
{
	cs->interp = r;
	cs->interp_id = r->run_id;
	cells_transition(cs, CELLS_EV_START);
	cs->took = false;
	cs->drain_sigint = false;
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

/* What the interpreter's run asks of its cells (run_owner.h). */
void
cells_processes(struct cells *cs, struct client *c, uint32_t req_id, bool stop, uint32_t pid)
{
	cells_procs_ask(cs->procs, cs->interp, c, req_id, stop, pid);
}

/* SUP_PROC, SUP_PROCS_END, SUP_PROC_STOPPED: answers in order, else the
 * supervisor is not sound and the interpreter is given up. */
static void
cells_sup_procs(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	if (cs->interp != r)
		return;
	if (cells_procs_sup(cs->procs, m) < 0)
		cells_restart(cs, "a process listing out of order");
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
