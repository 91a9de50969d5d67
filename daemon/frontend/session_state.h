/*
 * session_state.h: the states of a session in the frontend and the events
 * that move it, as one table (docs/design-reshape.md §4.2). session.c makes
 * every change of state through session_transition(), which asks
 * session_state_next().
 */
#ifndef AIRLOCKD_SESSION_STATE_H
#define AIRLOCKD_SESSION_STATE_H

enum session_state {
	SESSION_OPENING = 0, /* its keeper asked for; its opener waits for session_ok */
	SESSION_READY = 1,   /* the keeper's first reply came: takes runs and file ops */
	SESSION_ENDING = 2,  /* ended: runs cancelled, keeper's socket closed; not reaped */
	SESSION_ENDED = 3,   /* its keeper is gone (reaped, or never was) */
	SESSION_FREEING = 4, /* no run of it left either: freed on the loop's next turn */
	SESSION_STATE_COUNT_,
	SESSION_STATE_INVALID = -1,
};

enum session_event {
	SESSION_EV_KEEPER_READY = 0, /* the keeper's KEEP_READY with err 0 */
	/* Closed, idle, lifetime over, its owner gone too long, the stop, a
	 * keeper that failed or broke its protocol, a set-up that failed. */
	SESSION_EV_END = 1,
	SESSION_EV_KEEPER_GONE = 2, /* SPAWN_DONE, or a keeper that never had a process */
	SESSION_EV_FREE = 3,	    /* ended, and its last run was reaped */
	SESSION_EV_COUNT_,
};

/* The state after ev in from, or SESSION_STATE_INVALID if ev cannot happen there. */
enum session_state session_state_next(enum session_state from, enum session_event ev);
/* Names for logs. */
const char *session_state_name(enum session_state s);
const char *session_event_name(enum session_event ev);

#endif
