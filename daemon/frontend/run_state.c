/* run_state.c: the table of a run's states and events (run_state.h). */
#include "run_state.h"

#include <stddef.h>

static const char *const run_state_names[RUN_STATE_COUNT_] = {
	[RUN_QUEUED] = "queued",   [RUN_PREPARING] = "preparing", [RUN_STARTING] = "starting",
	[RUN_RUNNING] = "running", [RUN_EXITED] = "exited",	  [RUN_REAPED] = "reaped",
};

static const char *const run_event_names[RUN_EV_COUNT_] = {
	[RUN_EV_LAUNCH] = "launch",	[RUN_EV_LAUNCH_SESSION] = "launch_session",
	[RUN_EV_PREPARED] = "prepared", [RUN_EV_STARTED] = "started",
	[RUN_EV_ANSWER] = "answer",	[RUN_EV_REAP] = "reap",
	[RUN_EV_DROP] = "drop",		[RUN_EV_RETRY] = "retry",
};

/* The next state by (state, event); 0 in the table is "cannot happen",
 * hence next + 1. */
#define TO(s) ((signed char)((s) + 1))
static const signed char run_state_table[RUN_STATE_COUNT_][RUN_EV_COUNT_] = {
	[RUN_QUEUED] =
		{
			[RUN_EV_LAUNCH] = TO(RUN_STARTING),
			[RUN_EV_LAUNCH_SESSION] = TO(RUN_PREPARING),
			[RUN_EV_DROP] = TO(RUN_REAPED),
		},
	[RUN_PREPARING] =
		{
			[RUN_EV_PREPARED] = TO(RUN_STARTING),
			[RUN_EV_DROP] = TO(RUN_REAPED),
		},
	[RUN_STARTING] =
		{
			[RUN_EV_STARTED] = TO(RUN_RUNNING),
			[RUN_EV_ANSWER] = TO(RUN_EXITED),
			[RUN_EV_REAP] = TO(RUN_REAPED),
			[RUN_EV_RETRY] = TO(RUN_QUEUED),
		},
	[RUN_RUNNING] =
		{
			[RUN_EV_ANSWER] = TO(RUN_EXITED),
			[RUN_EV_REAP] = TO(RUN_REAPED),
			[RUN_EV_RETRY] = TO(RUN_QUEUED),
		},
	[RUN_EXITED] =
		{
			[RUN_EV_REAP] = TO(RUN_REAPED),
		},
	[RUN_REAPED] = {0},
};

enum run_state
run_state_next(enum run_state from, enum run_event ev)
{
	if ((int)from < 0 || from >= RUN_STATE_COUNT_ || (int)ev < 0 || ev >= RUN_EV_COUNT_ ||
	    run_state_table[from][ev] == 0)
		return RUN_STATE_INVALID;
	return (enum run_state)(run_state_table[from][ev] - 1);
}

const char *
run_state_name(enum run_state s)
{
	return (int)s >= 0 && s < RUN_STATE_COUNT_ ? run_state_names[s] : "invalid";
}

const char *
run_event_name(enum run_event ev)
{
	return (int)ev >= 0 && ev < RUN_EV_COUNT_ ? run_event_names[ev] : "invalid";
}
