/* zygote_state.c: the table of a zygote's states and events (zygote_state.h). */
#include "zygote_state.h"

#include <stddef.h>

#include "fsm.h"

static const char *const zygote_state_names[ZYGOTE_STATE_COUNT_] = {
	[ZYGOTE_STARTING] = "starting", [ZYGOTE_LIVE] = "live",	  [ZYGOTE_STOPPING] = "stopping",
	[ZYGOTE_WAITING] = "waiting",	[ZYGOTE_ENDED] = "ended",
};

static const char *const zygote_event_names[ZYGOTE_EV_COUNT_] = {
	[ZYGOTE_EV_STARTED] = "started", [ZYGOTE_EV_FAILED] = "failed", [ZYGOTE_EV_GONE] = "gone",
	[ZYGOTE_EV_STOP] = "stop",	 [ZYGOTE_EV_RETRY] = "retry",
};

/*
 * The next state by (state, event); a pair left out cannot happen (fsm.h).
 * A stop while starting waits for the start's answer (the spawner reads in
 * order: the stop request follows the start); a death the frontend did not
 * ask for, or a failed start, waits out the back-off before the next start.
 */
#define TO(s) FSM_TO(s)
static const signed char zygote_state_table[ZYGOTE_STATE_COUNT_][ZYGOTE_EV_COUNT_] = {
	[ZYGOTE_STARTING] =
		{
			[ZYGOTE_EV_STARTED] = TO(ZYGOTE_LIVE),
			[ZYGOTE_EV_FAILED] = TO(ZYGOTE_WAITING),
			[ZYGOTE_EV_STOP] = TO(ZYGOTE_STOPPING),
		},
	[ZYGOTE_LIVE] =
		{
			[ZYGOTE_EV_GONE] = TO(ZYGOTE_WAITING),
			[ZYGOTE_EV_STOP] = TO(ZYGOTE_STOPPING),
		},
	[ZYGOTE_STOPPING] =
		{
			[ZYGOTE_EV_STARTED] = TO(ZYGOTE_STOPPING),
			[ZYGOTE_EV_FAILED] = TO(ZYGOTE_ENDED),
			[ZYGOTE_EV_GONE] = TO(ZYGOTE_ENDED),
			[ZYGOTE_EV_STOP] = TO(ZYGOTE_STOPPING),
		},
	[ZYGOTE_WAITING] =
		{
			[ZYGOTE_EV_RETRY] = TO(ZYGOTE_STARTING),
			[ZYGOTE_EV_STOP] = TO(ZYGOTE_ENDED),
		},
	[ZYGOTE_ENDED] = {0},
};

static const struct fsm zygote_fsm =
	FSM_INIT("zygote", zygote_state_table, zygote_state_names, zygote_event_names);

enum zygote_state
zygote_state_next(enum zygote_state from, enum zygote_event ev)
{
	int to = fsm_next(&zygote_fsm, (int)from, (int)ev);

	return to < 0 ? ZYGOTE_STATE_INVALID : (enum zygote_state)to;
}

const char *
zygote_state_name(enum zygote_state s)
{
	return fsm_state_name(&zygote_fsm, (int)s);
}

const char *
zygote_event_name(enum zygote_event ev)
{
	return fsm_event_name(&zygote_fsm, (int)ev);
}

uint32_t
zygote_backoff_next(uint32_t prev_ms)
{
	if (prev_ms == 0)
		return ZYGOTE_BACKOFF_MIN_MS;
	return prev_ms >= ZYGOTE_BACKOFF_MAX_MS / 2 ? ZYGOTE_BACKOFF_MAX_MS : prev_ms * 2;
}
