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

#include "advisory.h"
#include "budget.h"
#include "cells.h"
#include "clock.h"
#include "frontend.h"
#include "log.h"
#include "memfd.h"
#include "plan.h"
#include "runqueue.h"
#include "run.h"
#include "rules.h"
#include "run_files.h"
#include "run_tools.h"
#include "sandbox.h"
#include "session.h"
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
	return n + session_cell_slots_uid(d, uid);
}

bool
run_slot_free(const struct daemon *d, uid_t uid)
{
	if (d->nrunning >= d->cfg->max_runs)
		return false;
	return uid == 0 || run_count_uid(d, uid) < d->cfg->max_runs_per_uid;
}

/* ---- building the plan -------------------------------------------------- */

/* Find an executable for a bare argv[0] the way a shell would, in /usr. */
static int
run_resolve_exec(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin",
					   "/sbin"};
	size_t i;

	if (strchr(name, '/') != NULL)
		return snprintf(buf, len, "%s", name) < (int)len ? 0 : -ENAMETOOLONG;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if ((size_t)snprintf(buf, len, "%s/%s", dirs[i], name) >= len)
			return -ENAMETOOLONG;
		if (access(buf, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/*
 * Validate the request against the config and pack it into a plan memfd
 * (flags: PLAN_F_*, the session and the profile's switches). On a request
 * error, writes the reply code and message.
 */
static int
run_make_plan(struct daemon *d, const struct proto_run *req, uint32_t flags,
	      const struct config_profile *prof, const struct proto_limits *lim, uint32_t mounts,
	      int *ret_fd, enum proto_error *ret_code, char *why, size_t whylen)
{
	bool session = (flags & PLAN_F_SESSION) != 0;
	const struct config_runtime *rt = config_runtime_find(d->cfg, req->runtime);
	const char *argv[PLAN_ARGV_MAX + 1];
	struct plan_env env = {0};
	struct run_files files = {0};
	char code_path[128], exec_path[PROTO_STR_MAX + 16];
	struct plan_input in;
	size_t argc = 0, i;
	int r = -EINVAL;

	*ret_code = PROTO_ERR_BAD_REQUEST;
	if (rt == NULL) {
		*ret_code = PROTO_ERR_UNKNOWN_RUNTIME;
		snprintf(why, whylen, "no runtime named \"%s\"", req->runtime);
		return -ENOENT;
	}
	if (rt->is_exec) {
		if (req->argc == 0) {
			snprintf(why, whylen, "runtime exec needs argv");
			return -EINVAL;
		}
		if (run_resolve_exec(req->argv[0], exec_path, sizeof(exec_path)) < 0) {
			snprintf(why, whylen,
				 "exec: %s: not found in /usr/local/bin, /usr/bin, /bin",
				 req->argv[0]);
			return -ENOENT;
		}
		argv[argc++] = exec_path;
		for (i = 1; i < req->argc; i++)
			argv[argc++] = req->argv[i];
	} else {
		if (!req->code.present) {
			snprintf(why, whylen, "runtime %s needs code", rt->name);
			return -EINVAL;
		}
		snprintf(code_path, sizeof(code_path), PLAN_CODE_DIR "/%s", rt->code_name);
		for (i = 0; i < rt->argc; i++)
			argv[argc++] = strcmp(rt->argv[i], "{code}") == 0 ? code_path : rt->argv[i];
		for (i = 0; i < req->argc && argc < PLAN_ARGV_MAX; i++)
			argv[argc++] = req->argv[i];
	}
	argv[argc] = NULL;

	r = plan_env_build(&env, (const char *const *)rt->env, rt->nenv, req->env, req->nenv);
	if (r == 0 && req->ntools > 0)
		r = run_tools_env(req, &env);
	if (r < 0) {
		*ret_code = PROTO_ERR_INTERNAL;
		snprintf(why, whylen, "cannot build the environment: %s", strerror(-r));
		goto out;
	}

	if (prof->network_proxy && plan_env_proxy(&env, d->cfg->egress_port) < 0)
		fatalx("out of memory");

	r = run_files_collect(req, session, lim->v[PROTO_LIMIT_WORKSPACE_BYTES], &files, ret_code,
			      why, whylen);
	if (r < 0)
		goto out;

	memset(&in, 0, sizeof(in));
	in.argv = argv;
	in.argc = argc;
	in.envp = env.envp;
	in.envc = env.envc;
	in.code_name = rt->is_exec ? NULL : rt->code_name;
	in.code = req->code.data;
	in.code_len = req->code.present ? req->code.len : 0;
	in.stdin_data = req->stdin_data.present
				? (req->stdin_data.data ? req->stdin_data.data : (const void *)"")
				: NULL;
	in.stdin_len = req->stdin_data.present ? req->stdin_data.len : 0;
	in.file_names = files.names;
	in.file_data = files.data;
	in.file_len = files.len;
	in.file_mode = files.mode;
	/* A session run's files are written by the session's keeper instead. */
	in.nfiles = session ? 0 : files.n;
	in.flags = flags | (req->ntools > 0 ? PLAN_F_TOOLS : 0);
	if (prof->network_proxy) {
		in.flags |= PLAN_F_EGRESS;
		in.egress_port = d->cfg->egress_port;
	}
	in.hostname = d->cfg->hostname;
	in.limits = lim;
	in.mounts = mounts;
	in.cwd = rt->cwd[0] != '\0' ? rt->cwd : NULL;
	in.rootspec_gen = d->rootspec.generation;
	/* hidden_paths: absent in the sandbox (sandbox_fs.c, phase two). */
	in.hidden = (const char *const *)prof->hidden;
	in.nhidden = prof->nhidden;
	r = plan_build(&in, ret_fd);
	if (r < 0) {
		*ret_code = PROTO_ERR_INTERNAL;
		snprintf(why, whylen, "cannot build the plan: %s", strerror(-r));
	}
out:
	run_files_free(&files);
	plan_env_free(&env);
	return r;
}

int
run_prestart_plan(struct daemon *d, const struct config_runtime *rt, int *ret_fd)
{
	static const struct config_profile none; /* no network, no switches */
	struct proto_run req;
	enum proto_error code;
	char why[256];
	int r;

	memset(&req, 0, sizeof(req));
	req.runtime = rt->name;
	req.code.present = true;
	req.code.data = (const uint8_t *)"";
	r = run_make_plan(d, &req, 0, &none, &d->cfg->ceilings, 0, ret_fd, &code, why, sizeof(why));
	if (r < 0)
		log_warnx("runtime %s: cannot make its pre-start plan: %s", rt->name, why);
	return r;
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
		session_run_unqueued(r->session);
	else if (r->session != NULL)
		session_run_end(r->session, r);
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
run_dispatch_soon(struct daemon *d)
{
	if (d->dispatch_ev == NULL) {
		d->dispatch_ev = xevtimer_new(d->base, run_dispatch_cb, d);
	}
	event_active(d->dispatch_ev, 0, 0);
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

	if (!r->prestarted || r->c == NULL || d->stopping || r->plan_fd < 0 ||
	    r->state >= RUN_EXITED || !run_outcome_retry_fresh(&r->f))
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
	run_transition(r, RUN_EV_RETRY);
	if (runqueue_push_head(&d->queue, &r->q, r->uid) < 0)
		fatalx("out of memory");
	run_dispatch_soon(d);
	return true;
}

void
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
		(void)run_io_lifeline_read(r, INT32_MAX);
		run_io_close_lifeline(r);
	}
	if (run_retry_fresh(r))
		return;
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

		next = TAILQ_NEXT(r, entry);
		if (c == NULL || r->state != RUN_QUEUED || r->cells != NULL || client_allowed(c))
			continue;
		client_send_error(c, r->req_id, PROTO_ERR_UNAUTHORIZED,
				  "uid %u is no longer allowed to use this daemon",
				  (unsigned)client_uid(c));
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
	sreq.flags = ws_fd >= 0 ? SPAWN_F_WORKSPACE : r->prestarted ? SPAWN_F_PRESTARTED : 0;
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
	 * to be gone, it runs again in a fresh sandbox (run_retry_fresh). */
	if (!r->prestarted) {
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
		session_run_unqueued(r->session);
		r->slot = session_run_begin(r->session, r);
		if (run_holds_slot(r))
			d->nrunning++;
		clock_gettime(CLOCK_MONOTONIC, &r->t_start);
		run_transition(r, RUN_EV_LAUNCH_SESSION);
		session_run_prepare(r->session, r, (const char *const *)r->in_names, r->in_fds,
				    r->nin, run_prepared);
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
 * May this run start now? Its uid under its limit; a session run: its
 * session free; a one-shot run: a sandbox prepared ahead to take, or a uid
 * slot free (run_launch takes one or the other). A session run brings its
 * session's slot: it waits for none, and in its own class of the queue
 * (RUN_QUEUE_SESSION) no one-shot run that waits for a slot holds it up.
 */
static bool
run_can_start(void *ctx, const struct runqueue_item *it)
{
	struct daemon *d = ctx;
	const struct run *r;

	/* A cell waits for a run slot and nothing else (cells.c). */
	if (it->klass == RUN_QUEUE_CELL)
		return run_slot_free(d, it->uid);
	r = (const struct run *)((const char *)it - offsetof(struct run, q));
	if (r->session != NULL && !session_can_start(r->session))
		return false;
	/* An interpreter is started for a cell that holds a run slot
	 * already: it must not wait for a second one (with one slot per uid
	 * it would wait for its own cell for ever). */
	if (!run_holds_slot(r))
		return true;
	if (!run_slot_free(d, r->uid))
		return false;
	/* A sandbox of the pool counts only if this run can take it: one it
	 * cannot (a pre-started interpreter, a [mount] it lacks) would send
	 * it back to the head of the queue at every dispatch (issue 28). One
	 * held up for a slot alone has run_dispatch make the pool give one. */
	if (r->session == NULL && uidpool_in_use(&d->uids) >= d->uids.nslots &&
	    !run_pool_can_take(d, r)) {
		d->want_slot = true;
		return false;
	}
	return true;
}

void
run_dispatch(struct daemon *d)
{
	/* Not bounded by max_runs here: run_can_start() says, per item, for
	 * what takes a run slot (an interpreter starting for its cell takes
	 * none). */
	run_pool_recheck(d);
	d->want_slot = false;
	while (!d->stopping) {
		struct runqueue_item *it = runqueue_pop(&d->queue, run_can_start, d);
		struct run *r;
		int rc;

		if (it == NULL)
			break;
		if (it->klass == RUN_QUEUE_CELL) {
			cells_slot_granted(it);
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

/*
 * Would this run's plan take the uid past its byte budget? The plan copies
 * the code, stdin and input files: a 256 MiB memfd that is all hole costs
 * its sender nothing and the daemon 256 MiB (twice while it is built), so
 * the check comes first, by size (issue 13, finding 2). If so, answer.
 */
static bool
run_over_budget(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req)
{
	uint64_t max = d->cfg->max_bytes_per_uid, want = PROTO_MSG_MAX, held;
	size_t i;

	want += req->code.present ? req->code.len : 0;
	want += req->stdin_data.present ? req->stdin_data.len : 0;
	if (req->session == NULL) {
		for (i = 0; i < req->nfiles; i++)
			want += req->files[i].data.len;
		/* The plan holds the bundle's files, about the bundle's size. */
		want += req->file_bundle.present ? req->file_bundle.len : 0;
	}
	if (want > max) {
		client_send_error(c, req_id, PROTO_ERR_TOO_LARGE,
				  "the run's code, stdin and files take %" PRIu64
				  " bytes; max_bytes_per_uid is %" PRIu64,
				  want, max);
		return true;
	}
	/* What its clients let go of since the last look is given back first. */
	(void)budget_sweep(&d->budget, client_uid(c), false);
	held = budget_bytes(&d->budget, client_uid(c));
	if (want > max - (held < max ? held : max)) {
		client_send_error(
			c, req_id, PROTO_ERR_BUSY,
			"uid %u: the daemon holds %" PRIu64 " bytes for it (queued runs, "
			"unread replies, results' memfds still open); this run needs %" PRIu64
			" more; max_bytes_per_uid is %" PRIu64,
			(unsigned)client_uid(c), held, want, max);
		return true;
	}
	/*
	 * Each memfd a client keeps costs the frontend an fd (its probe):
	 * as many as max_fds_per_uid per uid, held_max in all. Refused here
	 * before the run's work; a result that would pass them when it is
	 * sent is answered busy then (client.c, docs/security.md).
	 */
	if (budget_held_room(&d->budget, client_uid(c), d->cfg->max_fds_per_uid) == 0) {
		client_send_error(c, req_id, PROTO_ERR_BUSY,
				  "uid %u: its clients keep %" PRIu32
				  " memfds of results open (max_fds_per_uid %" PRIu32 "), %" PRIu32
				  " in all (at most %" PRIu32 "); close results no longer needed",
				  (unsigned)client_uid(c), budget_held(&d->budget, client_uid(c)),
				  d->cfg->max_fds_per_uid, d->budget.nheld, d->budget.held_max);
		return true;
	}
	return false;
}

/*
 * The profile's blocked_imports check on the code of a Python runtime (its
 * argv[0] is python*): the findings for result.advisories, NULL for none.
 * Advisory only: the run goes ahead whatever it finds; the check reads the
 * text and any run-time name gets past it (docs/security.md,
 * "blocked_imports"). Bounded: at most ADVISORY_SCAN_MAX bytes are read.
 */
static struct advisory_list *
run_advise(const struct config *cfg, const struct proto_run *req, const struct config_profile *prof)
{
	const struct config_runtime *rt = config_runtime_find(cfg, req->runtime);
	const char *names[PROTO_BLOCKED_IMPORTS_MAX];
	struct advisory_list *adv;
	size_t i;

	if (prof->nblocked_imports == 0 || rt == NULL || rt->is_exec || rt->argc == 0 ||
	    !advisory_is_python(rt->argv[0]) || !req->code.present)
		return NULL;
	for (i = 0; i < prof->nblocked_imports; i++)
		names[i] = prof->blocked_imports[i];
	adv = xmalloc(sizeof(*adv));
	advisory_scan(names, prof->nblocked_imports, req->code.data, req->code.len, adv);
	if (adv->n == 0) {
		free(adv);
		return NULL;
	}
	return adv;
}

/*
 * A run request, checked and queued; cs: it is an interpreter session's
 * interpreter (run_start_interp). A cell goes to its session's cells
 * instead (cells.h). Returns the run, or NULL when it was answered (or went
 * to the cells).
 */
/*
 * Is a [mount] of mounts (bit i: mount i) unavailable now, its source gone
 * (renamed, unmounted) or refused since the config was read? Then the
 * request is refused naming the mount and its target, and the daemon's log
 * (rate-limited) has its source and why: this run alone fails, and a run
 * that names none of them is not held up (issue 28). The client is not
 * told the source: a host path is the administrator's (info hides it too).
 * The spawner checks again as root, and the supervisor opens it with no
 * link followed; this check is for the message, not for safety.
 */
static bool
run_mounts_unavailable(struct daemon *d, struct client *c, uint32_t req_id, uint32_t mounts)
{
	char why[ROOTSPEC_WHY_MAX];
	size_t i;

	for (i = 0; i < d->cfg->nmounts && i < ROOTSPEC_MOUNTS_MAX; i++) {
		const struct config_mount *m = &d->cfg->mounts[i];

		if (!(mounts & (1U << i)) ||
		    rootspec_source_check(m->source, why, sizeof(why)) == 0)
			continue;
		log_repeat_warnx(&d->mount_warn, "uid %u: mount %s (source %s): unavailable: %s",
				 (unsigned)client_uid(c), m->name, m->source, why);
		/* The sandboxes prepared while it was there hold the tree
		 * that went: discarded, not given to a run once it is back. */
		run_pool_mounts_changed(d, 1U << i, 1U << i);
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND,
				  "mount '%s' (at %s) is unavailable: its source is missing on "
				  "the host",
				  m->name, m->target);
		return true;
	}
	return false;
}

static struct run *
run_start_req(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
	      struct cells *cs)
{
	struct proto_limits lim, asked;
	const struct config_profile *prof;
	const char *profile = req->profile;
	uint32_t mounts;
	size_t bad;
	uint32_t flags;
	struct session *s = NULL;
	enum proto_error code;
	char why[512];
	int plan_fd = -1, rc;
	struct run *r;

	if (d->stopping) {
		client_send_error(c, req_id, PROTO_ERR_BUSY, "the daemon is stopping");
		return NULL;
	}
	/* Access is checked again for every run: a reload may have narrowed it. */
	if (!client_allowed(c)) {
		client_send_error(c, req_id, PROTO_ERR_UNAUTHORIZED,
				  "uid %u is no longer allowed to use this daemon",
				  (unsigned)client_uid(c));
		return NULL;
	}
	if (req->session != NULL) {
		size_t k;

		s = session_find(d, client_uid(c), req->session);
		if (s == NULL || !session_can_queue(s)) {
			client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "no such session");
			return NULL;
		}
		/* A session's runs use the profile it was opened with. */
		profile = session_profile(s);
		if (req->profile != NULL && strcmp(req->profile, profile) != 0) {
			client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST,
					  "profile '%s': the session's runs use its profile '%s'",
					  req->profile, profile);
			return NULL;
		}
		/* An interpreter session takes cells (and file operations)
		 * only: its interpreter is the one sandbox in its uid slot. */
		if ((session_cells(s) != NULL) != (req->cell || cs != NULL)) {
			client_send_error(
				c, req_id, PROTO_ERR_BAD_REQUEST,
				session_cells(s) != NULL
					? "an interpreter session runs cells only"
					: "a cell needs a session opened with an interpreter");
			return NULL;
		}
		/* The session's own defaults come before the profile's. */
		asked = req->limits;
		for (k = 0; k < PROTO_LIMIT_COUNT_; k++)
			if (asked.v[k] == 0)
				asked.v[k] = session_run_defaults(s)->v[k];
	} else {
		asked = req->limits;
	}
	if (req->cell && s == NULL) {
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST,
				  "a cell needs a session opened with an interpreter");
		return NULL;
	}
	if (client_resolve_limits(c, req_id, profile, &asked, &lim, &prof) < 0)
		return NULL;
	/* The interpreter lives for the session: the wall and cpu limits
	 * are each cell's, counted by its supervisor; RLIMIT_CPU (at the
	 * ceiling) bounds the interpreter's whole life. */
	if (cs != NULL) {
		lim.v[PROTO_LIMIT_WALL_MS] = prof->ceilings.v[PROTO_LIMIT_WALL_MS];
		lim.v[PROTO_LIMIT_CPU_MS] = prof->ceilings.v[PROTO_LIMIT_CPU_MS];
	}
	rc = config_mounts_resolve(d->cfg, prof, config_runtime_find(d->cfg, req->runtime),
				   req->mounts, req->nmounts, &mounts, &bad);
	if (rc == -ENOENT) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "mount '%s' does not exist",
				  req->mounts[bad]);
		return NULL;
	}
	if (rc < 0) {
		client_send_error(c, req_id, PROTO_ERR_UNAUTHORIZED,
				  "mount '%s' is not available to uid %u under profile '%s' (not "
				  "in its allow_mounts)",
				  req->mounts[bad], (unsigned)client_uid(c), prof->name);
		return NULL;
	}
	if (!req->cell && run_mounts_unavailable(d, c, req_id, mounts))
		return NULL;
	if (run_over_budget(d, c, req_id, req))
		return NULL;
	if (req->cell) {
		/* The profile's blocked_imports check reads each cell, as it
		 * reads a run's code (advisory only). */
		cells_cell(session_cells(s), c, req_id, req, &lim, run_advise(d->cfg, req, prof));
		return NULL;
	}
	/* The profile's switches travel in the plan, enforced by the kernel
	 * in the sandbox (docs/security.md, "Profiles"). */
	flags = s != NULL ? PLAN_F_SESSION : 0;
	if (cs != NULL)
		flags |= PLAN_F_CELLS;
	if (prof->no_file_write)
		flags |= PLAN_F_READONLY;
	/* subprocess = false: one process. The processes limit (pids.max, or
	 * RLIMIT_NPROC on the run's own uid) is a second wall behind the
	 * seccomp filter that refuses every fork, clone and exec. */
	if (prof->no_subprocess) {
		flags |= PLAN_F_NOPROC;
		lim.v[PROTO_LIMIT_PROCESSES] = 1;
	}
	rc = run_make_plan(d, req, flags, prof, &lim, mounts, &plan_fd, &code, why, sizeof(why));
	if (rc < 0 || plan_fd < 0) {
		client_send_error(c, req_id, code, "%s", why);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->d = d;
	r->c = cs != NULL ? NULL : c; /* the interpreter answers no one */
	r->cells = cs;
	r->req_id = req_id;
	r->state = RUN_QUEUED;
	r->uid = client_uid(c);
	r->client_pid = client_pid(c);
	r->lim = lim;
	r->asked = req->limits;
	r->plan_fd = plan_fd;
	r->mounts = mounts;
	/* The plan's pages are the daemon's (charged to its cgroup) for as
	 * long as the run lives, queued or running: they count for the uid. */
	r->plan_bytes = budget_fd_bytes(plan_fd);
	if (budget_charge(&d->budget, r->uid, r->plan_bytes, 0, UINT64_MAX, UINT32_MAX) < 0)
		fatalx("out of memory");
	r->stat_fd[0] = r->stat_fd[1] = -1;
	r->prestart_rt = run_pool_eligible(d, req, flags, prof, &lim, mounts);
	r->prestart_gen = d->prestart_gen;
	r->stream = req->stream;
	if (s != NULL && run_keep_inputs(r, req) < 0) {
		close(plan_fd);
		budget_release(&d->budget, r->uid, r->plan_bytes, 0);
		run_free_inputs(r);
		free(r);
		client_send_error(c, req_id, PROTO_ERR_INTERNAL, "cannot keep the input files");
		return NULL;
	}
	r->lifeline = -1;
	r->out[0] = (struct run_out){.r = r, .fd = -1};
	r->out[1] = (struct run_out){.r = r, .fd = -1};
	snprintf(r->runtime, sizeof(r->runtime), "%s", req->runtime);
	clock_gettime(CLOCK_MONOTONIC, &r->t_request);
	/* Bounded: a full queue answers busy at once, and root's runs wait in
	 * it like everybody's (root is only exempt from the per-uid limit). */
	rc = runqueue_push(&d->queue, &r->q, r->uid,
			   s != NULL ? RUN_QUEUE_SESSION : RUN_QUEUE_ONE_SHOT, d->cfg->max_queued,
			   r->uid == 0 ? d->cfg->max_queued : d->cfg->max_queued_per_uid);
	if (rc < 0) {
		if (rc == -ENOMEM)
			fatalx("out of memory");
		close(plan_fd);
		budget_release(&d->budget, r->uid, r->plan_bytes, 0);
		run_free_inputs(r);
		free(r);
		client_send_error(c, req_id, PROTO_ERR_BUSY,
				  "%" PRIu32 " runs running and %" PRIu32 " queued (%" PRIu32
				  " of this uid): the queue is full",
				  d->nrunning, d->queue.n,
				  runqueue_count_uid(&d->queue, client_uid(c)));
		return NULL;
	}
	if (prof->network_proxy) {
		/* Copied: a reload may free the profile while the run lives. */
		r->egress_pol = xmalloc(sizeof(*r->egress_pol));
		*r->egress_pol = *prof->egress;
	}
	r->run_id = ++d->next_run_id;
	if (r->run_id == 0)
		r->run_id = ++d->next_run_id;
	r->tools = run_tools_new(r, req->tools, req->ntools);
	/* An interpreter's code is the daemon's driver, not the client's. */
	r->advisories = cs == NULL ? run_advise(d->cfg, req, prof) : NULL;
	TAILQ_INSERT_TAIL(&d->runs, r, entry);
	d->nruns++;
	if (r->c != NULL)
		client_run_added(c, r);
	if (s != NULL) {
		r->session = s;
		session_run_queued(s);
	}
	if (cs != NULL)
		cells_interp_set(cs, r);
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
	const char *drv = cells_driver();

	memset(&req, 0, sizeof(req));
	req.runtime = runtime;
	req.code.data = (const uint8_t *)drv;
	req.code.len = strlen(drv);
	req.code.fd = -1;
	req.code.present = true;
	req.session = session_id(s);
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
	struct proto_out out;

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
run_ps(struct daemon *d, struct client *c, uint32_t req_id)
{
	struct proto_ps_entry e[PROTO_PS_MAX];
	struct proto_ps ps = {.runs = e, .nruns = 0};
	struct proto_out out;
	struct run *r;

	TAILQ_FOREACH(r, &d->runs, entry)
	{
		if (r->state >= RUN_EXITED || (client_uid(c) != 0 && client_uid(c) != r->uid))
			continue;
		if (ps.nruns == PROTO_PS_MAX)
			break;
		e[ps.nruns++] = (struct proto_ps_entry){
			.run = r->run_id,
			.uid = (uint32_t)r->uid,
			.pid = (int32_t)r->client_pid,
			.runtime = r->runtime,
			.state = r->state == RUN_QUEUED ? "queued" : "running",
			.elapsed_ms = clock_ms_since(&r->t_request),
		};
	}
	client_send_encoded(c, req_id, proto_encode_ps(req_id, &ps, &out), &out, "ps");
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
