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
	[SESSION_EV_REVOKED] = "revoked",
};

/*
 * The next state by (state, event); a pair left out cannot happen (fsm.h).
 * END is taken once: session_end() asks for it only before ENDING. The
 * keeper's end comes after END (session_keeper_gone ends the session
 * first), once.
 *
 * A reload reaches every session not ended (session_reloaded()): it stays
 * as it is, and its interpreter hears of it (cells_state.c); or, if the
 * new config refuses it (REVOKED: its profile gone, its uid no longer
 * allowed), it ends then, as a one-shot run of that uid or profile would
 * be refused: a session must not keep its keeper, workspace and
 * interpreter for a policy that no longer allows it (docs/security.md).
 */
#define NO 0
#define OP FSM_TO(SESSION_OPENING)
#define RD FSM_TO(SESSION_READY)
#define EG FSM_TO(SESSION_ENDING)
#define ED FSM_TO(SESSION_ENDED)
#define FR FSM_TO(SESSION_FREEING)
_Static_assert(SESSION_EV_COUNT_ == 6 && SESSION_EV_REVOKED == 5, "a column per event, in order");
static const signed char session_state_table[SESSION_STATE_COUNT_][SESSION_EV_COUNT_] = {
	/* columns: keeper_ready end keeper_gone free reload revoked */
	[SESSION_OPENING] = {RD, EG, NO, NO, OP, EG}, [SESSION_READY] = {NO, EG, NO, NO, RD, EG},
	[SESSION_ENDING] = {NO, NO, ED, NO, NO, NO},  [SESSION_ENDED] = {NO, NO, NO, FR, NO, NO},
	[SESSION_FREEING] = {NO, NO, NO, NO, NO, NO},
};
#undef NO
#undef OP
#undef RD
#undef EG
#undef ED
#undef FR

const struct fsm session_fsm =
	FSM_INIT("session", session_state_table, session_state_names, session_event_names);
