/* run_state.c: the table of a run's states and events (run_state.h). */
#include "run_state.h"

#include <stddef.h>

#include "fsm.h"

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

/* The next state by (state, event); a pair left out cannot happen (fsm.h). */
#define TO(s) FSM_TO(s)
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

static const struct fsm run_fsm =
	FSM_INIT("run", run_state_table, run_state_names, run_event_names);

enum run_state
run_state_next(enum run_state from, enum run_event ev)
{
	int to = fsm_next(&run_fsm, (int)from, (int)ev);

	return to < 0 ? RUN_STATE_INVALID : (enum run_state)to;
}

const char *
run_state_name(enum run_state s)
{
	return fsm_state_name(&run_fsm, (int)s);
}

const char *
run_event_name(enum run_event ev)
{
	return fsm_event_name(&run_fsm, (int)ev);
}
