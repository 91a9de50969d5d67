/*
 * run.c: one run in the frontend, from a validated request to its reap:
 * the plan, the queue, the launch, the state machine (run_transition), the
 * spawner's events, cancel and ps. Output and the result are run_io.c's,
 * the prepared sandboxes run_pool.c's (run.h).
 *
 * A run waits for four things, in any order: the spawner's word that the
 * sandbox was reaped (only then is its uid slot free again), EOF on stdout
 * and stderr, and the supervisor's last message on the lifeline. Then the
 * result is assembled and sent, and the run is freed.
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "admit_facts.h"
#include "budget.h"
#include "clock.h"
#include "frontend.h"
#include "log.h"
#include "memfd.h"
#include "plan.h"
#include "runqueue.h"
#include "run.h"
#include "run_tools.h"
#include "sandbox.h"
#include "uidpool.h"
#include "run_owner.h"
#include "xalloc.h"
#include "compiler.h"
#include "fdio.h"
#include "xevent.h"

static void run_free_inputs(struct run *r);
static void run_cancel(struct run *r);

bool
run_holds_slot(const struct run *r)
{
	return r->cells == NULL;
}

uint32_t
run_count_uid(const struct daemon *d, uid_t uid)
{
	const struct run *r;
	uint32_t n = 0;

	/*
	 * Runs holding a run slot, whatever their client: a queued run is not
	 * running. Counting queued runs here stalled the queue for good once
	 * a uid had max_runs_per_uid of them waiting (issue 13, finding 5).
	 * An interpreter counts only while one of its cells runs: counted for
	 * its whole life, two users' idle interpreters held every slot and a
	 * third user's one-shot run waited for ever (issue 28).
	 */
	TAILQ_FOREACH(r, &d->runs, entry)
	if (r->uid == uid && r->state != RUN_QUEUED && run_holds_slot(r))
		n++;
	return n + d->session_ops->cell_slots(d, uid);
}

/* ---- run lifecycle ---------------------------------------------------------- */

/* Free a run that ended in state from: a queued one leaves the queue, a
 * launched one gives back its uid slot (a session's stays the session's). */
static void
run_free(struct run *r, enum run_state from)
{
	struct daemon *d = r->d;
	bool slot_held = from != RUN_QUEUED && run_holds_slot(r);

	if (from == RUN_QUEUED)
		runqueue_remove(&r->d->queue, &r->q);
	if (slot_held)
		r->d->nrunning--;
	run_free_inputs(r);
	fd_close_pair(r->stat_fd);
	TAILQ_REMOVE(&r->d->runs, r, entry);
	r->d->nruns--;
	if (r->c != NULL)
		client_run_removed(r->c, r);
	fd_close(r->plan_fd);
	budget_release(&d->budget, r->uid, r->plan_bytes, 0);
	run_io_free(r);
	/* Freed only once its sandbox was reaped (or never was): the key is
	 * done, and a one-shot run's uid slot, which its key holds, is free. */
	spawnref_del(&d->refs, r->prep_key);
	if (r->session != NULL && from == RUN_QUEUED)
		r->d->session_ops->unqueued(r->session);
	else if (r->session != NULL)
		r->d->session_ops->end(r->session, r);
	free(r);
	frontend_run_ended(d);
}

/* Start queued runs on the next turn of the loop, not from inside a run's end. */
static void
run_dispatch_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	run_dispatch(arg);
}

void
run_dispatch_init(struct daemon *d)
{
	if (d->dispatch_ev == NULL)
		d->dispatch_ev = xevtimer_new(d->base, run_dispatch_cb, d);
}

/*
 * The one place a run changes state: run_state_next() says where ev leads
 * (an event that cannot happen in the state is a broken invariant), then the
 * new state's entry action runs. Entering REAPED frees the run: the caller
 * must not touch it afterwards. The queue moves on from the event loop,
 * never from here: the caller may be walking d->runs, or be run_dispatch.
 */
void
run_transition(struct run *r, enum run_event ev)
{
	struct daemon *d = r->d;
	enum run_state from = r->state, to = run_state_next(from, ev);

	if (to == RUN_STATE_INVALID)
		fatalx("run %" PRIu32 ": event %s in state %s", r->run_id, run_event_name(ev),
		       run_state_name(from));
	log_debug("run %" PRIu32 ": %s -> %s (%s)", r->run_id, run_state_name(from),
		  run_state_name(to), run_event_name(ev));
	r->state = to;
	switch (to) {
	case RUN_EXITED:
		run_io_answer(r);
		/* The pool refill that waited for this answer (run_pool_fill). */
		if (r->prestarted)
			run_dispatch_soon(d);
		break;
	case RUN_REAPED:
		if (from < RUN_EXITED)
			run_io_answer(r);
		run_free(r, from);
		run_dispatch_soon(d);
		break;
	default:
		break;
	}
}

/* The run ends with an internal error as its answer (run_outcome_decide):
 * the daemon could not do what the run needed, through no fault of its code. */
static void
run_internal_error(struct run *r)
{
	snprintf(r->f.prep_error, sizeof(r->f.prep_error),
		 "internal error: the run could not go back to the queue");
}

/*
 * A pre-started run whose sandbox ended before any of its code ran
 * (run_outcome_retry_fresh): its interpreter was found dead or broken at
 * the hand-off, or died as the run was given to it. It is discarded and
 * the run gets a fresh sandbox (issue 18): the sandbox is reaped, so its
 * key and uid slot go; what was heard and read of it is forgotten; the run
 * waits at its uid's head of the queue with the plan it kept, and is never
 * given a pre-started interpreter again. Returns whether it was queued.
 */
static bool
run_retry_fresh(struct run *r)
{
	struct daemon *d = r->d;
	char why[128];

	if ((!r->prestarted && r->zygote_key == 0) || r->c == NULL || d->stopping ||
	    r->plan_fd < 0 || r->state >= RUN_EXITED || !run_outcome_retry_fresh(&r->f))
		return false;
	if (r->f.setup_failed)
		snprintf(why, sizeof(why), "step %s: %s", sandbox_step_name(r->f.fail_step),
			 strerror(-r->f.fail_err));
	else
		snprintf(why, sizeof(why), "spawner: %s: %s", r->f.spawn_ev.step,
			 strerror(-r->f.spawn_ev.err));
	if (run_reset_for_queue(r) < 0) {
		/* Not to be queued again: it ends alone, answered at the reap. */
		log_warnx("run %" PRIu32 " uid %u: its pre-started interpreter was gone or "
			  "refused it (%s), and the run cannot go back to the queue; ended",
			  r->run_id, (unsigned)r->uid, why);
		run_internal_error(r);
		return false;
	}
	log_warnx("run %" PRIu32 " uid %u: its pre-started interpreter was gone or refused it "
		  "(%s); discarded, the run goes to a fresh sandbox",
		  r->run_id, (unsigned)r->uid, why);
	r->prestart_rt = -1;
	r->zygote_rt = -1;
	r->no_zygote = true;
	run_transition(r, RUN_EV_RETRY);
	if (runqueue_push_head(&d->queue, &r->q, r->uid) < 0)
		fatalx("out of memory");
	run_dispatch_soon(d);
	return true;
}

/* Output or the lifeline closed, or the spawner spoke: answer or end the run
 * if it is time (run_outcome.h says when). */
static void
run_maybe_finish(struct run *r)
{
	bool outs_eof = r->out[0].eof && r->out[1].eof;

	if (!outs_eof || r->state >= RUN_REAPED)
		return;
	/*
	 * Answered early (run_outcome_may_answer_early), the run and its uid
	 * slot stay until the spawner reports the reap.
	 */
	if (!run_outcome_reaped(&r->f)) {
		/* After SUP_EXIT the open lifeline is only the supervisor
		 * waiting for us to close it before it exits (sb_report). */
		if (r->state < RUN_EXITED &&
		    run_outcome_may_answer_early(&r->f, outs_eof,
						 r->lifeline >= 0 && !r->f.sup_exit) &&
		    run_io_memory_early(r))
			run_transition(r, RUN_EV_ANSWER);
		/*
		 * Answered (or to be answered at the reap): now the supervisor
		 * may exit. Closed after the answer, not before: it would take
		 * this core from us for its exit's teardown first.
		 */
		if (r->f.sup_exit)
			run_io_close_lifeline(r);
		return;
	}
	/* Reaped: whatever the supervisor sent is queued; read all of it. */
	if (r->lifeline >= 0) {
		(void)lifeline_read(r, INT32_MAX);
		run_io_close_lifeline(r);
	}
	if (run_retry_fresh(r))
		return;
	/* The supervisor ran a zygote's run the ordinary way itself
	 * (docs/design-bursts.md §3.5): that zygote is not used again. */
	if (r->zygote_key != 0 && r->f.sup_exit && r->f.exit_msg.step == SUP_ZYGOTE_FELL_BACK)
		zygotes_fell_back(r->d, r->zygote_key, r->f.exit_msg.err);
	run_transition(r, RUN_EV_REAP);
}

void
run_spawner_event(struct run *r, const struct spawn_ev *ev, int *fds, size_t *nfds)
{
	switch (ev->type) {
	case SPAWN_STARTED:
		/* Its memory figures, unless a pool sandbox brought them. */
		if (*nfds == 2 && r->stat_fd[0] < 0) {
			r->stat_fd[0] = fds[0];
			r->stat_fd[1] = fds[1];
			*nfds = 0;
		}
		/* (A sandbox asked for a run that failed to hand it over: EXITED.) */
		if (r->state == RUN_STARTING)
			run_transition(r, RUN_EV_STARTED);
		return;
	case SPAWN_FAILED:
		/* Its zygote was gone when the spawner read the run: the sandbox
		 * stays prepared (spawn_msg.h); ended here, its reap sends the
		 * run to a fresh sandbox, once (run_retry_fresh). */
		if (r->zygote_key != 0 && !strcmp(ev->step, "zygote") && !r->f.spawn_failed) {
			log_warnx("run %" PRIu32 " uid %u: its zygote was gone; the run goes the "
				  "ordinary way",
				  r->run_id, (unsigned)r->uid);
			run_pool_discard(r);
		}
		/* A prepare and its start may both fail: keep the first reason,
		 * and wait for a reap if either had a child. */
		if (!r->f.spawn_failed)
			r->f.spawn_ev = *ev;
		else if (ev->pid != 0)
			r->f.spawn_ev.pid = ev->pid;
		r->f.spawn_failed = true;
		/* No child to wait for: nothing will write or close the pipes. */
		run_io_close(r);
		break;
	case SPAWN_DONE:
		r->f.spawn_done = true;
		r->f.done_ev = *ev;
		break;
	default:
		log_warnx("spawner: unknown event %u", ev->type);
		return;
	}
	run_maybe_finish(r);
}

static void run_start_facts(struct daemon *d, const struct runqueue_item *it,
			    struct admit_gather *g);

void
run_access_reloaded(struct daemon *d)
{
	struct run *r, *next;

	/*
	 * A run was checked when it came (run_start_req); one still waiting
	 * for a slot when a reload removes its user from [access] would
	 * otherwise start later, under a policy that no longer allows it
	 * (issue 28). It gets the refusal a request of that user gets now
	 * and is dropped as a queued run whose client left is. A run that
	 * has started keeps what it was given, as every run in flight. An
	 * interpreter's run is left alone: its end answers the cell it was
	 * started for (cells_interp_ended), which a refusal here would
	 * answer twice; that user's next cells are refused anyway.
	 */
	for (r = TAILQ_FIRST(&d->runs); r != NULL; r = next) {
		struct client *c = r->c;
		struct admit_decision dec;
		struct admit_gather g;

		next = TAILQ_NEXT(r, entry);
		if (c == NULL || r->state != RUN_QUEUED)
			continue;
		/* Decided as at its start: rule 2 refuses a one-shot or a
		 * session run, never an interpreter's. */
		run_start_facts(d, &r->q, &g);
		admit_decide(&g.f, &dec);
		if (dec.verdict != ADMIT_REFUSE)
			continue;
		client_send_error(c, r->req_id, dec.code, "%s", dec.why);
		client_run_removed(c, r);
		r->c = NULL;
		r->f.cancelled = true;
		run_transition(r, RUN_EV_DROP);
	}
}

void
run_orphan_client(struct daemon *d, struct client *c)
{
	struct run *r, *next;

	for (r = TAILQ_FIRST(&d->runs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->c != c)
			continue;
		if (r->state == RUN_QUEUED) {
			/* Never started: nothing to kill or wait for. */
			client_run_removed(c, r);
			r->c = NULL;
			r->f.cancelled = true;
			run_transition(r, RUN_EV_DROP);
			continue;
		}
		if (r->state >= RUN_EXITED) {
			client_run_removed(c, r);
			r->c = NULL; /* answered, waiting for its reap only */
			continue;
		}
		log_info("run %" PRIu32 " uid %u: client left; killing the run", r->run_id,
			 (unsigned)r->uid);
		client_run_removed(c, r);
		r->c = NULL;
		r->f.cancelled = true; /* its owner is gone: that is a cancel */
		/* Closing the lifeline makes the supervisor exit, which ends
		 * its pid namespace; the run is freed when it was reaped. */
		run_io_close(r);
	}
}

/*
 * The run's sandbox, now: output pipes, lifeline, backstop timer, and the
 * spawner request (with the session's workspace mount when ws_fd >= 0, which
 * this takes). On failure the run has been answered and waits in EXITED
 * for the reap of the sandbox asked for it.
 */
static int
run_spawn(struct run *r, int ws_fd)
{
	struct daemon *d = r->d;
	int fds[SPAWN_REQ_NFDS_MAX], child[3], k;
	struct spawn_req sreq;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &r->t_start);
	rc = run_io_open(r, child);
	if (rc < 0) {
		fd_close(ws_fd);
		goto fail;
	}
	memset(&sreq, 0, sizeof(sreq));
	sreq.type = SPAWN_REQ;
	sreq.run_id = r->run_id;
	sreq.uid_slot = r->slot;
	sreq.memory_bytes = r->lim.v[PROTO_LIMIT_MEMORY_BYTES];
	sreq.processes = r->lim.v[PROTO_LIMIT_PROCESSES] > UINT32_MAX
				 ? UINT32_MAX
				 : (uint32_t)r->lim.v[PROTO_LIMIT_PROCESSES];
	sreq.cpu_percent = r->d->cfg->cpu_max_percent;
	sreq.flags = ws_fd >= 0		  ? SPAWN_F_WORKSPACE
		     : r->prestarted	  ? SPAWN_F_PRESTARTED
		     : r->zygote_key != 0 ? SPAWN_F_ZYGOTE_RUN
					  : 0;
	sreq.prep_key = r->prep_key;
	fds[0] = r->plan_fd;
	fds[1] = child[0];
	fds[2] = child[1];
	fds[3] = child[2];
	fds[4] = ws_fd;
	/* A pre-started interpreter has its output pipes: plan and lifeline. */
	rc = frontend_spawn_fds(d, &sreq, fds,
				ws_fd >= 0	? SPAWN_REQ_NFDS_MAX
				: r->prestarted ? SPAWN_REQ_NFDS_PRESTARTED
						: SPAWN_REQ_NFDS);
	/* A pre-started run keeps its plan: should its interpreter turn out
	 * to be gone, it runs again in a fresh sandbox (run_retry_fresh); so
	 * does a zygote's run, should its zygote be gone. */
	if (!r->prestarted && r->zygote_key == 0) {
		close(r->plan_fd);
		r->plan_fd = -1;
	}
	for (k = 0; k < 3; k++)
		fd_close(child[k]);
	fd_close(ws_fd);
	if (rc < 0) {
		/*
		 * This run fails alone: the spawner never saw it. Passing fds
		 * can fail for reasons of the service user's, not the daemon's
		 * (ETOOMANYREFS: its fds in flight are over its RLIMIT_NOFILE,
		 * which other processes of that user share); this used to stop
		 * the whole service (issue 13, finding 1).
		 */
		log_warnx("run %" PRIu32 " uid %u: cannot hand the run to the spawner: %s",
			  r->run_id, (unsigned)r->uid, strerror(-rc));
		goto fail;
	}
	log_debug("run %" PRIu32 " uid %u: started, runtime %s, slot %" PRIu32, r->run_id,
		  (unsigned)r->uid, r->runtime, r->slot);
	return 0;
fail:
	/*
	 * The prepared sandbox will get no run: the spawner ends it, and the
	 * run (with its uid slot) stays until that sandbox is reaped. The
	 * client is answered now.
	 */
	snprintf(r->f.prep_error, sizeof(r->f.prep_error), "cannot set up the run: %s",
		 strerror(-rc));
	run_io_close(r);
	run_pool_discard(r);
	run_transition(r, RUN_EV_ANSWER);
	return rc;
}

/* A session run's inputs are written and its workspace mount is here (or not). */
static void
run_prepared(struct run *r, int ws_fd, int err, const char *what)
{
	if (r->f.cancelled || r->state != RUN_PREPARING) {
		/* Cancelled (or its session ended) while the keeper worked. */
		fd_close(ws_fd);
		run_transition(r, RUN_EV_DROP);
		return;
	}
	if (err == 0) {
		if (spawnref_add(&r->d->refs, SPAWNREF_RUN, r, &r->prep_key) < 0)
			fatalx("out of memory");
		/* Not sent (logged): the start below fails this run alone. */
		(void)run_pool_prepare(r->d, r->prep_key, r->slot);
		run_transition(r, RUN_EV_PREPARED);
		(void)run_spawn(r, ws_fd);
		return;
	}
	{
		/* Answered like any run that failed before its code ran. */
		snprintf(r->f.prep_error, sizeof(r->f.prep_error), "%s: %s", what, strerror(-err));
		if (err == -ELOOP || err == -EXDEV)
			snprintf(r->f.prep_error, sizeof(r->f.prep_error),
				 "input file %s: refused: the path leaves the workspace or goes "
				 "through a link",
				 what);
		run_transition(r, RUN_EV_DROP);
	}
}

/*
 * Hand a queued run to the spawner: its uid slot (a session run uses its
 * session's), then its sandbox. Returns 0, or -EAGAIN when no uid slot is
 * free (the run stays queued).
 */
static int
run_launch(struct run *r)
{
	struct daemon *d = r->d;
	bool ready = false;
	int rc;

	if (r->session != NULL) {
		/* A session run's sandbox is asked for once the keeper has done
		 * its part (run_prepared): until then nothing of it is at the
		 * spawner. */
		r->d->session_ops->unqueued(r->session);
		r->slot = r->d->session_ops->begin(r->session, r);
		if (run_holds_slot(r))
			d->nrunning++;
		clock_gettime(CLOCK_MONOTONIC, &r->t_start);
		run_transition(r, RUN_EV_LAUNCH_SESSION);
		r->d->session_ops->prepare(r->session, r, (const char *const *)r->in_names,
					   r->in_fds, r->nin, run_prepared);
		run_pool_fill(d);
		return 0;
	}
	if (run_pool_take(d, r, &ready) == 0) {
		/* A sandbox prepared ahead: most of the set-up is already done. */
	} else {
		/* Its own key, which holds its uid slot until the run is freed. */
		rc = spawnref_add_slot(&d->refs, SPAWNREF_RUN, r, &r->prep_key, &r->slot);
		/* Every slot held: a waiting interpreter this run cannot use
		 * gives its slot up; the run waits for that reap. */
		if (rc == -EBUSY) {
			(void)run_pool_give_way(d);
			return -EAGAIN;
		}
		if (rc < 0)
			fatalx("cannot register a spawn key: %s", strerror(-rc));
		/* Not sent (logged): the start below finds no sandbox at the
		 * spawner and this run fails alone (issue 28, point 8). */
		(void)run_pool_prepare(d, r->prep_key, r->slot);
	}
	d->nrunning++;
	run_transition(r, RUN_EV_LAUNCH);
	if (ready)
		run_transition(r, RUN_EV_STARTED);
	rc = run_spawn(r, -1);
	/* Refill after this run's start is on its way: the spawner takes
	 * requests in order, and a new sandbox must not go before it. */
	run_pool_fill(d);
	return rc;
}

/*
 * The facts of a queued item at its dequeue (admit_decide's rule 8): the
 * run slots held, its session, the pool. A cell waits for a run slot and
 * nothing else (cells.c).
 */
static void
run_start_facts(struct daemon *d, const struct runqueue_item *it, struct admit_gather *g)
{
	const struct run_session_ops *so = d->session_ops;
	const struct run *r;

	r = it->klass == RUN_QUEUE_CELL
		    ? NULL
		    : (const struct run *)((const char *)it - offsetof(struct run, q));
	admit_gather_init(d,
			  r == NULL	       ? ADMIT_CELL
			  : r->cells != NULL   ? ADMIT_INTERP_START
			  : r->session != NULL ? ADMIT_SESSION_RUN
					       : ADMIT_RUN,
			  ADMIT_AT_START, it->uid, g);
	g->f.peer_allowed = true;
	/* A caller's zygote holds one of its run slots (ADMIT_ZYGOTE). */
	g->f.held.n[LEDGER_RUNNING] = run_count_uid(d, it->uid) + zygotes_count_uid(d, it->uid);
	g->f.all.n[LEDGER_RUNNING] = d->nrunning + d->nzygotes;
	g->f.zygotes_idle_all = zygotes_idle_count(d, (uid_t)-1);
	g->f.zygotes_idle_uid = zygotes_idle_count(d, it->uid);
	if (r == NULL)
		return;
	/* A queued run of a uid a reload no longer allows was answered at the
	 * reload (run_access_reloaded); this is the same check. */
	g->f.peer_allowed = r->c == NULL || client_allowed(r->c);
	if (r->session != NULL) {
		g->f.session_ready = so->can_queue(r->session);
		g->f.session_busy = !so->can_start(r->session);
	}
	/* A sandbox of the pool counts only if this run can take it: one it
	 * cannot (a pre-started interpreter, a [mount] it lacks) would send
	 * it back to the head of the queue at every dispatch (issue 28). */
	g->f.pool_blocks = r->session == NULL && uidpool_in_use(&d->uids) >= d->uids.nslots &&
			   !run_pool_can_take(d, r);
}

/*
 * May this item start now (admit_decide at its start)? A run's uid under
 * its limit, a session run its session free, a one-shot run a sandbox
 * prepared ahead to take or a uid slot free (run_launch takes one or the
 * other); an interpreter, started for a cell that holds a run slot
 * already, waits for no second one. A session run brings its session's
 * slot, in its own class of the queue (RUN_QUEUE_SESSION).
 */
static bool
run_can_start(void *ctx, const struct runqueue_item *it)
{
	struct daemon *d = ctx;
	struct admit_decision dec;
	struct admit_gather g;

	run_start_facts(d, it, &g);
	admit_decide(&g.f, &dec);
	/* One held up for a slot alone has run_dispatch make the pool give one. */
	if (dec.want_slot)
		d->want_slot = true;
	/* One held up for a run slot an idle zygote holds: the first such
	 * item's uid (-1: any caller's zygote would do). */
	if (dec.want_zygote_slot && !d->want_zygote)
		d->want_zygote_uid =
			g.f.all.n[LEDGER_RUNNING] >= d->cfg->max_runs ? (uid_t)-1 : it->uid;
	d->want_zygote = d->want_zygote || dec.want_zygote_slot;
	return dec.verdict == ADMIT_NOW;
}

void
run_dispatch(struct daemon *d)
{
	/* Not bounded by max_runs here: run_can_start() says, per item, for
	 * what takes a run slot (an interpreter starting for its cell takes
	 * none). */
	run_pool_recheck(d);
	d->want_slot = false;
	d->want_zygote = false;
	while (!d->stopping) {
		struct runqueue_item *it = runqueue_pop(&d->queue, run_can_start, d);
		struct run *r;
		int rc;

		if (it == NULL)
			break;
		if (it->klass == RUN_QUEUE_CELL) {
			d->cells_ops->slot_granted(it);
			continue;
		}
		r = (struct run *)((char *)it - offsetof(struct run, q));
		rc = run_launch(r);
		if (rc == -EAGAIN) {
			/* No uid slot after all (run_can_start saw one): put it
			 * back at the head of its class, its turn kept; one that
			 * cannot go back ends alone (still queued: a drop). */
			if (run_reset_for_queue(r) < 0) {
				log_warnx("run %" PRIu32 " uid %u: no uid slot after all, and the "
					  "run cannot go back to the queue; ended",
					  r->run_id, (unsigned)r->uid);
				run_internal_error(r);
				run_transition(r, RUN_EV_DROP);
				break;
			}
			if (runqueue_push_head(&d->queue, &r->q, r->uid) < 0)
				fatalx("out of memory");
			break;
		}
	}
	/* A run waits for a uid slot that sandboxes of the pool it cannot
	 * take hold: one of them gives it up (its reap dispatches again). */
	if (d->want_slot && !d->stopping)
		(void)run_pool_give_way(d);
	/* A run waits for a run slot an idle zygote holds: it is stopped (its
	 * reap dispatches again). */
	if (d->want_zygote && !d->stopping)
		zygotes_give_way(d, d->want_zygote_uid);
	/* Nothing waits for a slot: the pool gets back what died in it (a
	 * pre-started interpreter that ended before its run). */
	if (d->queue.n == 0)
		run_pool_fill(d);
	frontend_status(d);
}

static void
run_free_inputs(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nin; i++) {
		free(r->in_names[i]);
		fd_close(r->in_fds[i]);
	}
	free(r->in_names);
	free(r->in_fds);
	r->in_names = NULL;
	r->in_fds = NULL;
	r->nin = 0;
}

/* Keep a session run's input files (names and sealed memfds) until it starts. */
static int
run_keep_inputs(struct run *r, const struct proto_run *req)
{
	size_t i;

	if (req->nfiles == 0)
		return 0;
	r->in_names = calloc(req->nfiles, sizeof(*r->in_names));
	r->in_fds = calloc(req->nfiles, sizeof(*r->in_fds));
	if (r->in_names == NULL || r->in_fds == NULL)
		return -ENOMEM;
	for (i = 0; i < req->nfiles; i++)
		r->in_fds[i] = -1;
	r->nin = req->nfiles;
	for (i = 0; i < req->nfiles; i++) {
		const struct proto_blob *b = &req->files[i].data;

		r->in_names[i] = strdup(req->files[i].name);
		if (r->in_names[i] == NULL)
			return -ENOMEM;
		if (b->fd >= 0)
			r->in_fds[i] = fcntl(b->fd, F_DUPFD_CLOEXEC, 0);
		else if (memfd_sealed_create("airlock-input", b->data ? b->data : (const void *)"",
					     b->len, &r->in_fds[i]) < 0)
			r->in_fds[i] = -1;
		if (r->in_fds[i] < 0)
			return -EIO;
	}
	return 0;
}

/* Give back what a run that never went into the queue took. */
static void
run_new_undo(struct run *r)
{
	close(r->plan_fd);
	budget_release(&r->d->budget, r->uid, r->plan_bytes, 0);
	run_free_inputs(r);
	free(r);
}

/* Make the run of an admitted request with its plan, and queue it; NULL
 * once answered (its inputs cannot be kept). */
static struct run *
run_new(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
	struct cells *cs, const struct run_ask *a, int plan_fd)
{
	struct run *r = xcalloc(1, sizeof(*r));

	r->d = d;
	r->io_done = run_maybe_finish;
	r->c = cs != NULL ? NULL : c; /* the interpreter answers no one */
	r->cells = cs;
	r->req_id = req_id;
	r->state = RUN_QUEUED;
	r->uid = client_uid(c);
	r->client_pid = client_pid(c);
	r->lim = a->lim;
	r->asked = req->limits;
	r->plan_fd = plan_fd;
	r->mounts = a->mounts;
	/* The plan's pages are the daemon's (charged to its cgroup) for as
	 * long as the run lives, queued or running: they count for the uid. */
	r->plan_bytes = budget_fd_bytes(plan_fd);
	if (budget_charge(&d->budget, r->uid, r->plan_bytes, 0, UINT64_MAX, UINT32_MAX) < 0)
		fatalx("out of memory");
	r->stat_fd[0] = r->stat_fd[1] = -1;
	r->prestart_rt = run_pool_eligible(d, req, a->flags, a->prof, &a->lim, a->mounts);
	r->zygote_rt = run_pool_zygote_eligible(d, req, a->flags, a->prof, &a->lim, a->mounts);
	r->prestart_gen = d->prestart_gen;
	/* Its caller's zygote, asked for now if it has none: this run goes
	 * the ordinary way, the next ones find it live. */
	if (r->zygote_rt >= 0)
		(void)zygotes_get(d, r->uid, r->zygote_rt);
	r->stream = req->stream;
	if (a->s != NULL && run_keep_inputs(r, req) < 0) {
		run_new_undo(r);
		client_send_error(c, req_id, PROTO_ERR_INTERNAL, "cannot keep the input files");
		return NULL;
	}
	r->lifeline = -1;
	r->out[0] = (struct run_out){.r = r, .fd = -1};
	r->out[1] = (struct run_out){.r = r, .fd = -1};
	snprintf(r->runtime, sizeof(r->runtime), "%s", req->runtime);
	snprintf(r->profile, sizeof(r->profile), "%s", a->prof->name);
	clock_gettime(CLOCK_MONOTONIC, &r->t_request);
	/* Unbounded here: admit_decide() bounded the queue (rule 6) at the
	 * request, and nothing was queued since. */
	if (runqueue_push(&d->queue, &r->q, r->uid,
			  a->s != NULL ? RUN_QUEUE_SESSION : RUN_QUEUE_ONE_SHOT, UINT32_MAX,
			  UINT32_MAX) < 0)
		fatalx("out of memory");
	return r;
}

/* A request for a run: admitted, planned, made and queued (NULL: answered
 * with a refusal, or a cell handed to its interpreter). */
static struct run *
run_start_req(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
	      struct cells *cs)
{
	struct run_ask a = {0};
	enum proto_error code;
	char why[512];
	int plan_fd = -1, rc;
	struct run *r;

	if (run_admit(d, c, req_id, req, cs, &a) < 0)
		return NULL;
	if (req->cell) {
		/* The profile's blocked_imports check reads each cell, as it
		 * reads a run's code (advisory only). */
		d->cells_ops->cell(d->session_ops->cells(a.s), c, req_id, req, &a.lim,
				   run_advise(d->cfg, req, a.prof));
		return NULL;
	}
	run_ask_flags(&a, cs, cs != NULL && a.s != NULL && d->session_ops->background(a.s));
	rc = run_make_plan(d, req, a.flags, a.prof, &a.lim, a.mounts, &plan_fd, &code, why,
			   sizeof(why));
	if (rc < 0 || plan_fd < 0) {
		client_send_error(c, req_id, code, "%s", why);
		return NULL;
	}
	r = run_new(d, c, req_id, req, cs, &a, plan_fd);
	if (r == NULL)
		return NULL;
	if (a.prof->network_proxy) {
		/* Copied: a reload may free the profile while the run lives. */
		r->egress_pol = xmalloc(sizeof(*r->egress_pol));
		*r->egress_pol = *a.prof->egress;
	}
	r->run_id = ++d->next_run_id;
	if (r->run_id == 0)
		r->run_id = ++d->next_run_id;
	r->tools = run_tools_new(r, req->tools, req->ntools);
	/* An interpreter's code is the daemon's driver, not the client's. */
	r->advisories = cs == NULL ? run_advise(d->cfg, req, a.prof) : NULL;
	TAILQ_INSERT_TAIL(&d->runs, r, entry);
	d->nruns++;
	if (r->c != NULL)
		client_run_added(c, r);
	if (a.s != NULL) {
		r->session = a.s;
		d->session_ops->queued(a.s);
	}
	if (cs != NULL)
		d->cells_ops->interp_set(cs, r);
	run_dispatch(d);
	return r;
}

void
run_start(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req)
{
	(void)run_start_req(d, c, req_id, req, NULL);
}

int
run_start_interp(struct daemon *d, struct client *c, uint32_t req_id, struct session *s,
		 const char *runtime, struct cells *cs)
{
	struct proto_run req;
	const char *drv = d->cells_ops->driver();

	memset(&req, 0, sizeof(req));
	req.runtime = runtime;
	req.code.data = (const uint8_t *)drv;
	req.code.len = strlen(drv);
	req.code.fd = -1;
	req.code.present = true;
	req.session = d->session_ops->id(s);
	return run_start_req(d, c, req_id, &req, cs) != NULL ? 0 : -EINVAL;
}

void
run_cancel_session(struct daemon *d, struct session *s)
{
	struct run *r, *next;

	for (r = TAILQ_FIRST(&d->runs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->session == s)
			run_cancel(r);
	}
}

/* Find a run by the caller's request id on its connection, or by run id. */
static struct run *
run_find(struct daemon *d, struct client *c, const struct proto_cancel *what)
{
	struct run *r;

	TAILQ_FOREACH(r, &d->runs, entry)
	{
		if (r->state >= RUN_EXITED)
			continue;
		if (what->request != 0 && r->c == c && r->req_id == what->request)
			return r;
		/* Another uid's run is not found, the same as one that never
		 * existed: no run ids leak across uids (root sees all). */
		if (what->run != 0 && r->run_id == what->run &&
		    (client_uid(c) == 0 || client_uid(c) == r->uid))
			return r;
	}
	return NULL;
}

void
run_tool_reply(struct daemon *d, struct client *c, uint32_t req_id,
	       const struct proto_tool_reply *rep)
{
	struct proto_cancel what = {.request = req_id};
	struct run *r = run_find(d, c, &what);

	/* No such run (over, or never): dropped, like a late reply. */
	if (r != NULL)
		run_tools_reply(r, rep);
}

/* End a run early: a queued one at once, a running one when reaped. */
static void run_cancel(struct run *r);

void
run_kill(struct run *r)
{
	run_cancel(r);
}

int
run_lifeline_send(struct run *r, const void *m, size_t len)
{
	ssize_t n;

	if (r->lifeline < 0 || r->f.sup_exit)
		return -EPIPE;
	n = send(r->lifeline, m, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static void
run_cancel(struct run *r)
{
	if (r->f.cancelled || r->state >= RUN_EXITED)
		return;
	r->f.cancelled = true;
	log_info("run %" PRIu32 " uid %u: cancelled", r->run_id, (unsigned)r->uid);
	if (r->state == RUN_QUEUED) {
		run_transition(r, RUN_EV_DROP);
		return;
	}
	/* The supervisor exits when its lifeline closes; the pid namespace
	 * dies with it, and the result follows once it was reaped. */
	run_io_close_lifeline(r);
}

void
run_cancel_request(struct daemon *d, struct client *c, uint32_t req_id,
		   const struct proto_cancel *what)
{
	struct run *r = run_find(d, c, what);
	struct cells *cs = NULL;
	struct proto_out out;

	/*
	 * A cell is cancelled by interrupting it (cells_cancel), never by
	 * ending its interpreter's run: named by its own request id (the
	 * interpreter's run answers no connection, so run_find never finds it
	 * by one: the session's cells are asked), or by the interpreter's run
	 * id (what ps shows).
	 */
	if (r != NULL)
		cs = r->cells;
	else if (what->request != 0)
		cs = d->session_ops->cells_of_request(d, c, what->request);
	if (cs != NULL) {
		d->cells_ops->cancel(cs, c, req_id, what->request);
		return;
	}
	if (r == NULL) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND,
				  "no such run of uid %u: %s %" PRIu32, (unsigned)client_uid(c),
				  what->request ? "request" : "run",
				  what->request ? what->request : what->run);
		return;
	}
	/* Answer first, so cancel_ok comes before the cancelled result. */
	if (proto_encode_simple(req_id, PROTO_CANCEL_OK, &out) < 0)
		fatalx("cannot encode cancel_ok");
	client_send(c, &out);
	run_cancel(r);
}

void
run_stop_all(struct daemon *d, bool running_too)
{
	struct run *r, *next;

	for (r = TAILQ_FIRST(&d->runs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->state == RUN_QUEUED || (running_too && r->state < RUN_EXITED))
			run_cancel(r);
	}
}
