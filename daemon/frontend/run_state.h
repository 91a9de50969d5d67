/*
 * run_state.h: the states of a run in the frontend and the events that move
 * it, as one table (docs/design-run-lifecycle.md, section 2). run.c makes
 * every change of state through run_transition(), which asks
 * run_state_next() and does the new state's entry action.
 */
#ifndef AIRLOCKD_RUN_STATE_H
#define AIRLOCKD_RUN_STATE_H

enum run_state {
	RUN_QUEUED = 0,	   /* in the runqueue; holds its plan; no uid slot */
	RUN_PREPARING = 1, /* holds a slot; a session run's keeper writes its inputs */
	RUN_STARTING = 2,  /* its sandbox is asked for (spawn key known), SPAWN_REQ sent */
	RUN_RUNNING = 3,   /* the spawner's STARTED came */
	RUN_EXITED = 4,	   /* answered (or its client left); waits for the reap */
	RUN_REAPED = 5,	   /* terminal: answered if not yet, freed */
	RUN_STATE_COUNT_,
	RUN_STATE_INVALID = -1,
};

enum run_event {
	RUN_EV_LAUNCH = 0,	   /* dispatched with a slot and a sandbox asked for */
	RUN_EV_LAUNCH_SESSION = 1, /* dispatched into its session's slot */
	RUN_EV_PREPARED = 2,	   /* the keeper's part is done; sandbox asked for */
	RUN_EV_STARTED = 3,	   /* SPAWN_STARTED */
	RUN_EV_ANSWER = 4,	   /* answered before the reap (early, or a failed hand-over) */
	RUN_EV_REAP = 5,	   /* SPAWN_DONE, or a failure with no process to wait for */
	RUN_EV_DROP = 6,	   /* ended before any sandbox: cancelled, refused input */
	RUN_EV_RETRY = 7,	   /* its pre-started interpreter was gone: queued again, fresh */
	RUN_EV_COUNT_,
};

/* The state after ev in from, or RUN_STATE_INVALID if ev cannot happen there. */
enum run_state run_state_next(enum run_state from, enum run_event ev);
/* Names for logs. */
const char *run_state_name(enum run_state s);
const char *run_event_name(enum run_event ev);

#endif
