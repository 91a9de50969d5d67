/*
 * session_state.h: the states of a session in the frontend and the events
 * that move it, as one table (docs/design-reshape.md §4.2). session.c makes
 * every change of state through session_transition(), which asks
 * session_state_next().
 */
#ifndef AIRLOCKD_SESSION_STATE_H
#define AIRLOCKD_SESSION_STATE_H

#include "fsm.h"

enum session_state {
	SESSION_OPENING = 0, /* its keeper asked for; its opener waits for session_ok */
	SESSION_READY = 1,   /* the keeper's first reply came: takes runs and file ops */
	SESSION_ENDING = 2,  /* ended: runs cancelled, keeper's socket closed; not reaped */
	SESSION_ENDED = 3,   /* its keeper is gone (reaped, or never was) */
	SESSION_FREEING = 4, /* no run of it left either: freed on the loop's next turn */
	SESSION_STATE_COUNT_,
};

enum session_event {
	SESSION_EV_KEEPER_READY = 0, /* the keeper's KEEP_READY with err 0 */
	/* Closed, idle, lifetime over, its owner gone too long, the stop, a
	 * keeper that failed or broke its protocol, a set-up that failed. */
	SESSION_EV_END = 1,
	SESSION_EV_KEEPER_GONE = 2, /* SPAWN_DONE, or a keeper that never had a process */
	SESSION_EV_FREE = 3,	    /* ended, and its last run was reaped */
	SESSION_EV_RELOAD = 4,	    /* the config was reloaded (session_reload) */
	/* The config was reloaded and refuses it: its profile is gone, or its
	 * uid (with the groups of the connection that opened it) is no
	 * longer allowed by [access] or by its profile. */
	SESSION_EV_REVOKED = 5,
	SESSION_EV_COUNT_,
};

/* The table (fsm.h): fsm_next(&session_fsm, state, event) is the next state,
 * or -1 where the event cannot happen; fsm_state_name(), fsm_event_name(). */
extern const struct fsm session_fsm;

#endif
