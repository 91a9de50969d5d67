/*
 * cells_state.h: the states of an interpreter session's interpreter and the
 * events that move it, as one table (docs/design-reshape.md §4.3). cells.c
 * makes every change of state through cells_transition(), which asks
 * cells_state_next().
 *
 * Not states: `took` (this interpreter was handed a cell), `lost` (the next
 * answer says the state is gone) and `pumping` (cells_pump's guard).
 */
#ifndef AIRLOCKD_CELLS_STATE_H
#define AIRLOCKD_CELLS_STATE_H

#include "fsm.h"

enum cells_state {
	CELLS_IDLE = 0,	    /* no interpreter */
	CELLS_STARTING = 1, /* its run made (cells_interp_set), no channel yet */
	CELLS_READY = 2,    /* the driver's channel came; no cell with it */
	CELLS_BUSY = 3,	    /* the head cell is with it (sent, or finishing) */
	CELLS_KILLING = 4,  /* cells_restart gave it up; its end is awaited */
	CELLS_ENDED = 5,    /* the session ended: nothing starts again */
	CELLS_STATE_COUNT_,
};

enum cells_event {
	CELLS_EV_START = 0,   /* an interpreter's run made for the head cell */
	CELLS_EV_CHANNEL = 1, /* SUP_CELLS: the driver's channel */
	CELLS_EV_SENT = 2,    /* the head cell handed to the driver */
	CELLS_EV_DONE = 3,    /* SUP_CELL_END: the cell in it answered */
	CELLS_EV_KILL = 4,    /* cells_restart: no channel, a broken answer, a reload, ... */
	CELLS_EV_EXIT = 5,    /* the interpreter's run ended (cells_interp_ended) */
	CELLS_EV_END = 6,     /* the session ends (cells_end) */
	CELLS_EV_RELOAD = 7,  /* the config was reloaded; the sandbox it makes is the same */
	/* The config was reloaded and makes its sandbox differently (its
	 * runtime, or its profile's mounts, network, limits, ...): the one it
	 * has is stale (cells_reload). */
	CELLS_EV_STALE = 8,
	CELLS_EV_COUNT_,
};

/* The table (fsm.h): fsm_next(&cells_fsm, state, event) is the next state,
 * or -1 where the event cannot happen; fsm_state_name(), fsm_event_name(). */
extern const struct fsm cells_fsm;

#endif
