/*
 * client_state.h: the lifecycle of a client connection as one table
 * (docs/design-reshape.md section 4.1; common/fsm.h). client.c makes every
 * change of state through client_transition(), which asks client_state_next()
 * and does the new state's entry action.
 */
#ifndef AIRLOCKD_CLIENT_STATE_H
#define AIRLOCKD_CLIENT_STATE_H

#include <stdbool.h>

#include "fsm.h"

enum client_state {
	CLIENT_HELLO = 0,     /* connected: only a hello is taken */
	CLIENT_READY = 1,     /* hello_ok sent: requests are taken */
	CLIENT_CLOSING = 2,   /* refused: what is queued is sent, nothing more read */
	CLIENT_DROPPED = 3,   /* ended: nothing more is done; its end on the next loop turn */
	CLIENT_LINGERING = 4, /* ended, kept until the fds sent to it are read */
	CLIENT_GONE = 5,      /* freed */
	CLIENT_STATE_COUNT_,
	CLIENT_STATE_INVALID = -1,
};

enum client_event {
	CLIENT_EV_HELLO_OK = 0, /* its hello was accepted */
	CLIENT_EV_REFUSE = 1,	/* not allowed, over its limit, a bad or missing hello */
	CLIENT_EV_FLUSHED = 2,	/* closing, and all that was queued is sent */
	CLIENT_EV_DROP = 3,	/* EOF, a socket error, not reading, no hello in time */
	CLIENT_EV_LINGER = 4,	/* the next loop turn: fds sent to it are not read yet */
	CLIENT_EV_FREE = 5,	/* the next loop turn: nothing sent is unread */
	CLIENT_EV_READ_ALL = 6, /* lingering: the fds sent to it were read at last */
	CLIENT_EV_EXIT = 7,	/* the frontend leaves */
	CLIENT_EV_RELOAD = 8,	/* the config was reloaded (client_reload_all()) */
	CLIENT_EV_COUNT_,
};

/* The state after ev in from, or CLIENT_STATE_INVALID if ev cannot happen there. */
enum client_state client_state_next(enum client_state from, enum client_event ev);
/* Is the connection's end (the orphan action) the entry action of going
 * from `from` to `to`? Once per connection: no state of the end leads back. */
bool client_state_ends(enum client_state from, enum client_state to);
/* The table itself, for its names (fsm_state_name(), fsm_event_name()). */
extern const struct fsm client_fsm;

#endif
