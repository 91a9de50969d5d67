/*
 * fsm.h: a lifecycle as data (conventions: each lifecycle an enum with a
 * transition table). A `struct fsm` names its states and events and holds
 * one table, next[state][event], of the state an event leads to; a pair the
 * table leaves out cannot happen, and fsm_next() answers -1 for it, upon
 * which the caller fatalx()es: a lifecycle that takes an impossible step is
 * a broken invariant of the daemon (run_transition() in frontend/run.c).
 *
 * The table is written with designated initializers and FSM_TO(), which
 * stores the next state plus one, so every pair not written is 0: cannot
 * happen. The states and events are each an enum counted from 0.
 */
#ifndef AIRLOCK_FSM_H
#define AIRLOCK_FSM_H

/* A table entry: event leads to state s. */
#define FSM_TO(s) ((signed char)((s) + 1))

struct fsm {
	const char *name;		/* the lifecycle's name, for logs ("run") */
	int nstates;			/* states are 0..nstates-1 */
	int nevents;			/* events are 0..nevents-1 */
	const signed char *next;	/* next[state * nevents + event]: FSM_TO(to) or 0 */
	const char *const *state_names; /* nstates names */
	const char *const *event_names; /* nevents names */
};

/*
 * A struct fsm over table (signed char table[NSTATES][NEVENTS]) and the two
 * name arrays, their sizes taken from the arrays themselves.
 */
#define FSM_INIT(fsm_name, table, states, events)                                                  \
	{                                                                                          \
		.name = (fsm_name), .nstates = (int)(sizeof(table) / sizeof((table)[0])),          \
		.nevents = (int)(sizeof((table)[0]) / sizeof((table)[0][0])),                      \
		.next = &(table)[0][0], .state_names = (states), .event_names = (events),          \
	}

/* The state event leads to from state; -1 if it cannot happen there (or
 * either is out of range). */
int fsm_next(const struct fsm *f, int state, int event);
/* Names for logs: "invalid" for a value out of range. */
const char *fsm_state_name(const struct fsm *f, int state);
const char *fsm_event_name(const struct fsm *f, int event);

#endif
