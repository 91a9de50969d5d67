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
};

/*
 * The next state by (state, event); a pair left out cannot happen (fsm.h).
 * DROPPED is a state of its own, between a live state and the end, because
 * a connection is ended from inside client_send(), which run.c and
 * session.c call while they walk their lists: the end's orphan action
 * (runs killed, sessions told) must wait for the next loop turn, or it
 * would free the walker's next run under it. A drop of what is already
 * dropped or lingering changes nothing.
 */
#define TO(s) FSM_TO(s)
static const signed char client_state_table[CLIENT_STATE_COUNT_][CLIENT_EV_COUNT_] = {
	[CLIENT_HELLO] =
		{
			[CLIENT_EV_HELLO_OK] = TO(CLIENT_READY),
			[CLIENT_EV_REFUSE] = TO(CLIENT_CLOSING),
			[CLIENT_EV_DROP] = TO(CLIENT_DROPPED),
			[CLIENT_EV_EXIT] = TO(CLIENT_GONE),
		},
	[CLIENT_READY] =
		{
			[CLIENT_EV_REFUSE] = TO(CLIENT_CLOSING),
			[CLIENT_EV_DROP] = TO(CLIENT_DROPPED),
			[CLIENT_EV_EXIT] = TO(CLIENT_GONE),
		},
	[CLIENT_CLOSING] =
		{
			[CLIENT_EV_REFUSE] = TO(CLIENT_CLOSING),
			[CLIENT_EV_FLUSHED] = TO(CLIENT_DROPPED),
			[CLIENT_EV_DROP] = TO(CLIENT_DROPPED),
			[CLIENT_EV_EXIT] = TO(CLIENT_GONE),
		},
	[CLIENT_DROPPED] =
		{
			[CLIENT_EV_DROP] = TO(CLIENT_DROPPED),
			[CLIENT_EV_LINGER] = TO(CLIENT_LINGERING),
			[CLIENT_EV_FREE] = TO(CLIENT_GONE),
			[CLIENT_EV_EXIT] = TO(CLIENT_GONE),
		},
	[CLIENT_LINGERING] =
		{
			[CLIENT_EV_DROP] = TO(CLIENT_LINGERING),
			[CLIENT_EV_READ_ALL] = TO(CLIENT_GONE),
			[CLIENT_EV_EXIT] = TO(CLIENT_GONE),
		},
	[CLIENT_GONE] = {0},
};

static const struct fsm client_fsm =
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

const char *
client_state_name(enum client_state s)
{
	return fsm_state_name(&client_fsm, (int)s);
}

const char *
client_event_name(enum client_event ev)
{
	return fsm_event_name(&client_fsm, (int)ev);
}
