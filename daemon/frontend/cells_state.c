/* cells_state.c: the table of an interpreter's states and events (cells_state.h). */
#include "cells_state.h"

#include <stddef.h>

static const char *const cells_state_names[CELLS_STATE_COUNT_] = {
	[CELLS_IDLE] = "idle", [CELLS_STARTING] = "starting", [CELLS_READY] = "ready",
	[CELLS_BUSY] = "busy", [CELLS_KILLING] = "killing",   [CELLS_ENDED] = "ended",
};

static const char *const cells_event_names[CELLS_EV_COUNT_] = {
	[CELLS_EV_START] = "start", [CELLS_EV_CHANNEL] = "channel", [CELLS_EV_SENT] = "sent",
	[CELLS_EV_DONE] = "done",   [CELLS_EV_KILL] = "kill",	    [CELLS_EV_EXIT] = "exit",
	[CELLS_EV_END] = "end",
};

/*
 * The next state by (state, event); a pair left out cannot happen (fsm.h).
 * A channel may come again while one lives (the first was closed at its
 * EOF), and to an interpreter being killed: that one may still be handed
 * the head cell and answer it, as before. The session's end is final; the
 * interpreter's run ends after it, and a restart then asked for stays
 * ENDED (it only kills).
 */
static const signed char cells_state_table[CELLS_STATE_COUNT_][CELLS_EV_COUNT_] = {
	[CELLS_IDLE] =
		{
			[CELLS_EV_START] = FSM_TO(CELLS_STARTING),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
		},
	[CELLS_STARTING] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_READY),
			[CELLS_EV_KILL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
		},
	[CELLS_READY] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_READY),
			[CELLS_EV_SENT] = FSM_TO(CELLS_BUSY),
			[CELLS_EV_KILL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
		},
	[CELLS_BUSY] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_BUSY),
			[CELLS_EV_DONE] = FSM_TO(CELLS_READY),
			[CELLS_EV_KILL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
		},
	[CELLS_KILLING] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_SENT] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_DONE] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
		},
	[CELLS_ENDED] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_DONE] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_KILL] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_ENDED),
		},
};

const struct fsm cells_fsm =
	FSM_INIT("interpreter", cells_state_table, cells_state_names, cells_event_names);
