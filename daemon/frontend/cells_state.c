/* cells_state.c: the table of an interpreter's states and events (cells_state.h). */
#include "cells_state.h"

#include <stddef.h>

static const char *const cells_state_names[CELLS_STATE_COUNT_] = {
	[CELLS_IDLE] = "idle", [CELLS_STARTING] = "starting", [CELLS_READY] = "ready",
	[CELLS_BUSY] = "busy", [CELLS_KILLING] = "killing",   [CELLS_ENDED] = "ended",
};

static const char *const cells_event_names[CELLS_EV_COUNT_] = {
	[CELLS_EV_START] = "start",
	[CELLS_EV_CHANNEL] = "channel",
	[CELLS_EV_SENT] = "sent",
	[CELLS_EV_DONE] = "done",
	[CELLS_EV_KILL] = "kill",
	[CELLS_EV_EXIT] = "exit",
	[CELLS_EV_END] = "end",
	[CELLS_EV_RELOAD] = "reload",
	[CELLS_EV_RELOAD_CHANGED] = "reload_changed",
};

/*
 * The next state by (state, event); a pair left out cannot happen (fsm.h).
 * A channel may come again while one lives (the first was closed at its
 * EOF), and to an interpreter being killed: that one may still be handed
 * the head cell and answer it, as before. The session's end is final; the
 * interpreter's run ends after it, and a restart then asked for stays
 * ENDED (it only kills).
 *
 * A reload reaches the interpreter of every live session (session_reload):
 * RELOAD, the sandbox the same, changes nothing. RELOAD_CHANGED gives up
 * an interpreter made under the old config (issue 28: a mount or a host
 * taken away must not stay reachable from it), but not under a cell in
 * flight: BUSY stays BUSY, that cell ends in the sandbox it began in, as a
 * run in flight does, and the interpreter is killed once it is answered
 * (cells.c, `stale`). With no interpreter (IDLE) the next one starts under
 * the new config; KILLING is already going. An ended session's
 * interpreter hears of no reload.
 */
static const signed char cells_state_table[CELLS_STATE_COUNT_][CELLS_EV_COUNT_] = {
	[CELLS_IDLE] =
		{
			[CELLS_EV_START] = FSM_TO(CELLS_STARTING),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_RELOAD] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_RELOAD_CHANGED] = FSM_TO(CELLS_IDLE),
		},
	[CELLS_STARTING] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_READY),
			[CELLS_EV_KILL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_RELOAD] = FSM_TO(CELLS_STARTING),
			[CELLS_EV_RELOAD_CHANGED] = FSM_TO(CELLS_KILLING),
		},
	[CELLS_READY] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_READY),
			[CELLS_EV_SENT] = FSM_TO(CELLS_BUSY),
			[CELLS_EV_KILL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_RELOAD] = FSM_TO(CELLS_READY),
			[CELLS_EV_RELOAD_CHANGED] = FSM_TO(CELLS_KILLING),
		},
	[CELLS_BUSY] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_BUSY),
			[CELLS_EV_DONE] = FSM_TO(CELLS_READY),
			[CELLS_EV_KILL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_RELOAD] = FSM_TO(CELLS_BUSY),
			[CELLS_EV_RELOAD_CHANGED] = FSM_TO(CELLS_BUSY),
		},
	[CELLS_KILLING] =
		{
			[CELLS_EV_CHANNEL] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_SENT] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_DONE] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_EXIT] = FSM_TO(CELLS_IDLE),
			[CELLS_EV_END] = FSM_TO(CELLS_ENDED),
			[CELLS_EV_RELOAD] = FSM_TO(CELLS_KILLING),
			[CELLS_EV_RELOAD_CHANGED] = FSM_TO(CELLS_KILLING),
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
