/* client_state.c: the table of a client connection's states and events
 * (client_state.h). */
#include "client_state.h"

#include <stddef.h>

#include "fsm.h"

static const char *const client_state_names[CLIENT_STATE_COUNT_] = {
	[CLIENT_HELLO] = "hello",	  [CLIENT_READY] = "ready",
	[CLIENT_CLOSING] = "closing",	  [CLIENT_DROPPED] = "dropped",
	[CLIENT_LINGERING] = "lingering", [CLIENT_GONE] = "gone",
};

static const char *const client_event_names[CLIENT_EV_COUNT_] = {
	[CLIENT_EV_HELLO_OK] = "hello_ok", [CLIENT_EV_REFUSE] = "refuse",
	[CLIENT_EV_FLUSHED] = "flushed",   [CLIENT_EV_DROP] = "drop",
	[CLIENT_EV_LINGER] = "linger",	   [CLIENT_EV_FREE] = "free",
	[CLIENT_EV_READ_ALL] = "read_all", [CLIENT_EV_EXIT] = "exit",
	[CLIENT_EV_RELOAD] = "reload",
};

/*
 * The next state by (state, event): one row a state, one column an event
 * (in the order of enum client_event), as docs/design-reshape.md 4.1 draws
 * it; NO: cannot happen (fsm.h). DROPPED is a state of its own, between a
 * live state and the end, because a connection is ended from inside
 * client_send(), which run.c and session.c call while they walk their
 * lists: the end's orphan action (runs killed, sessions told) must wait
 * for the next loop turn, or it would free the walker's next run under it.
 * A drop or a refusal of what is already dropped or lingering changes
 * nothing: a handler's reply can end the connection (its send fails: the
 * client has gone) before the handler refuses it, and a client must not
 * be able to make that a broken invariant (front-abuse
 * test_refused_after_close).
 *
 * A reload reaches every connection and changes no state: access is read
 * again for every request (client_access(), and a hello's own check), so
 * a connection the new config refuses is answered "unauthorized" from its
 * next request on and stays open, as it did before RELOAD was an event;
 * client_reload_all() checks it at once only to say so in the log.
 */
#define NO 0
#define HE FSM_TO(CLIENT_HELLO)
#define RD FSM_TO(CLIENT_READY)
#define CL FSM_TO(CLIENT_CLOSING)
#define DR FSM_TO(CLIENT_DROPPED)
#define LI FSM_TO(CLIENT_LINGERING)
#define GO FSM_TO(CLIENT_GONE)
_Static_assert(CLIENT_EV_COUNT_ == 9 && CLIENT_EV_RELOAD == 8, "a column per event, in order");
static const signed char client_state_table[CLIENT_STATE_COUNT_][CLIENT_EV_COUNT_] = {
	/* columns: hello_ok refuse flushed drop linger free read_all exit reload */
	[CLIENT_HELLO] = {RD, CL, NO, DR, NO, NO, NO, GO, HE},
	[CLIENT_READY] = {NO, CL, NO, DR, NO, NO, NO, GO, RD},
	[CLIENT_CLOSING] = {NO, CL, DR, DR, NO, NO, NO, GO, CL},
	[CLIENT_DROPPED] = {NO, DR, NO, DR, LI, GO, NO, GO, DR},
	[CLIENT_LINGERING] = {NO, LI, NO, LI, NO, NO, GO, GO, LI},
	[CLIENT_GONE] = {NO, NO, NO, NO, NO, NO, NO, NO, NO},
};
#undef NO
#undef HE
#undef RD
#undef CL
#undef DR
#undef LI
#undef GO

const struct fsm client_fsm =
	FSM_INIT("client", client_state_table, client_state_names, client_event_names);

enum client_state
client_state_next(enum client_state from, enum client_event ev)
{
	int to = fsm_next(&client_fsm, (int)from, (int)ev);

	return to < 0 ? CLIENT_STATE_INVALID : (enum client_state)to;
}

bool
client_state_ends(enum client_state from, enum client_state to)
{
	bool ended_from = from == CLIENT_LINGERING || from == CLIENT_GONE;
	bool ended_to = to == CLIENT_LINGERING || to == CLIENT_GONE;

	return !ended_from && ended_to;
}
