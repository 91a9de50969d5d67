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
	[CELLS_EV_END] = "end",	    [CELLS_EV_RELOAD] = "reload",   [CELLS_EV_STALE] = "stale",
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
 * RELOAD, the sandbox the same, changes nothing. STALE (the reload makes
 * its sandbox differently) gives up an interpreter made under the old
 * config (issue 28: a mount or a host taken away must not stay reachable
 * from it), but not under a cell in flight: BUSY stays BUSY, that cell
 * ends in the sandbox it began in, as a run in flight does, and the
 * interpreter is killed once it is answered (cells.c, `stale`). With no
 * interpreter (IDLE) the next one starts under the new config; KILLING is
 * already going. An ended session's interpreter hears of no reload.
 */
#define NO 0
#define ID FSM_TO(CELLS_IDLE)
#define ST FSM_TO(CELLS_STARTING)
#define RD FSM_TO(CELLS_READY)
#define BU FSM_TO(CELLS_BUSY)
#define KI FSM_TO(CELLS_KILLING)
#define EN FSM_TO(CELLS_ENDED)
_Static_assert(CELLS_EV_COUNT_ == 9 && CELLS_EV_STALE == 8, "a column per event, in order");
static const signed char cells_state_table[CELLS_STATE_COUNT_][CELLS_EV_COUNT_] = {
	/* columns: start channel sent done kill exit end reload stale */
	[CELLS_IDLE] = {ST, NO, NO, NO, NO, NO, EN, ID, ID},
	[CELLS_STARTING] = {NO, RD, NO, NO, KI, ID, EN, ST, KI},
	[CELLS_READY] = {NO, RD, BU, NO, KI, ID, EN, RD, KI},
	[CELLS_BUSY] = {NO, BU, NO, RD, KI, ID, EN, BU, BU},
	[CELLS_KILLING] = {NO, KI, KI, KI, NO, ID, EN, KI, KI},
	[CELLS_ENDED] = {NO, EN, NO, EN, EN, EN, NO, NO, NO},
};
#undef NO
#undef ID
#undef ST
#undef RD
#undef BU
#undef KI
#undef EN

const struct fsm cells_fsm =
	FSM_INIT("interpreter", cells_state_table, cells_state_names, cells_event_names);
