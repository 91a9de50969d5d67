/*
 * cells_interp.c: an interpreter session's interpreter in the frontend
 * (docs/design-interpreters.md §2): its lifecycle on the table of
 * cells_state.c (cells_transition makes every change), its start
 * (cells_interp_set), its restart when the driver broke a rule or a reload
 * changed its sandbox (cells_restart, cells_reload), its end
 * (cells_interp_ended: the cell it ran is answered lost), and the
 * supervisor's messages about it that are not a cell's end. The queue is
 * cells.c, the driver's channel cells_chan.c.
 */
#include "cells.h"
#include "cells_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cells_driver.h"
#include "cells_msg.h"
#include "cells_procs.h"
#include "cells_state.h"
#include "config.h"
#include "egress.h"
#include "log.h"
#include "run.h"

/* The one place an interpreter changes state: its table (cells_state.c) says where
 * ev leads; an event that cannot happen in the state is a broken invariant. */
void
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

/* The interpreter must go: its run is cancelled, and the cell it runs (if
 * any) is answered when that run ends. */
/* Through the supervisor, so that the cell gets its own figures
 * (SUP_CELL_LOST); a supervisor out of reach is cut off. */
void
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
void
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

void
cells_interp_set(struct cells *cs, struct run *r)
{
	cs->interp = r;
	cs->interp_id = r->run_id;
	cells_transition(cs, CELLS_EV_START);
	cs->took = false;
	cs->drain_sigint = false;
}

/* What the interpreter's run asks of its cells (run_owner.h). */
void
cells_processes(struct cells *cs, struct client *c, uint32_t req_id, bool stop, uint32_t pid)
{
	cells_procs_ask(cs->procs, cs->interp, c, req_id, stop, pid);
}

/* SUP_PROC, SUP_PROCS_END, SUP_PROC_STOPPED: answers in order, else the
 * supervisor is not sound and the interpreter is given up. */
void
cells_sup_procs(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	if (cs->interp != r)
		return;
	if (cells_procs_sup(cs->procs, m) < 0)
		cells_restart(cs, "a process listing out of order");
}
