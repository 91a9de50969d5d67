/* session_state.c: the table of a session's states and events (session_state.h). */
#include "session_state.h"

#include <stddef.h>

static const char *const session_state_names[SESSION_STATE_COUNT_] = {
	[SESSION_OPENING] = "opening", [SESSION_READY] = "ready",     [SESSION_ENDING] = "ending",
	[SESSION_ENDED] = "ended",     [SESSION_FREEING] = "freeing",
};

static const char *const session_event_names[SESSION_EV_COUNT_] = {
	[SESSION_EV_KEEPER_READY] = "keeper_ready",
	[SESSION_EV_END] = "end",
	[SESSION_EV_KEEPER_GONE] = "keeper_gone",
	[SESSION_EV_FREE] = "free",
	[SESSION_EV_RELOAD] = "reload",
};

/*
 * The next state by (state, event); a pair left out cannot happen (fsm.h).
 * END is taken once: session_end() asks for it only before ENDING. The
 * keeper's end comes after END (session_keeper_gone ends the session
 * first), once.
 *
 * A reload reaches every session not ended (session_reloaded()): it stays
 * as it is, and its interpreter hears of it (cells_state.c).
 */
static const signed char session_state_table[SESSION_STATE_COUNT_][SESSION_EV_COUNT_] = {
	[SESSION_OPENING] =
		{
			[SESSION_EV_KEEPER_READY] = FSM_TO(SESSION_READY),
			[SESSION_EV_END] = FSM_TO(SESSION_ENDING),
			[SESSION_EV_RELOAD] = FSM_TO(SESSION_OPENING),
		},
	[SESSION_READY] =
		{
			[SESSION_EV_END] = FSM_TO(SESSION_ENDING),
			[SESSION_EV_RELOAD] = FSM_TO(SESSION_READY),
		},
	[SESSION_ENDING] =
		{
			[SESSION_EV_KEEPER_GONE] = FSM_TO(SESSION_ENDED),
		},
	[SESSION_ENDED] =
		{
			[SESSION_EV_FREE] = FSM_TO(SESSION_FREEING),
		},
	[SESSION_FREEING] = {0},
};

const struct fsm session_fsm =
	FSM_INIT("session", session_state_table, session_state_names, session_event_names);
