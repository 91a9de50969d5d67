/*
 * zygote_state.h: the lifecycle of a caller's zygote in the frontend
 * (docs/design-bursts.md §3.6) as one table, and the wait before a start
 * after a failure. zygotes.c makes every change of state through
 * zygote_state_next() and does the new state's entry action.
 */
#ifndef AIRLOCKD_ZYGOTE_STATE_H
#define AIRLOCKD_ZYGOTE_STATE_H

#include <stdint.h>

enum zygote_state {
	ZYGOTE_STARTING = 0, /* SPAWN_ZYGOTE_START sent; its slot and run slot held */
	ZYGOTE_LIVE = 1,     /* its STARTED came: it serves its caller's runs */
	ZYGOTE_STOPPING = 2, /* stop sent (idle, forks done, reload): waits for its reap */
	ZYGOTE_WAITING = 3,  /* died or failed to start: no process, no slot; back-off */
	ZYGOTE_ENDED = 4,    /* terminal: freed */
	ZYGOTE_STATE_COUNT_,
	ZYGOTE_STATE_INVALID = -1,
};

enum zygote_event {
	ZYGOTE_EV_STARTED = 0, /* SPAWN_STARTED */
	ZYGOTE_EV_FAILED = 1,  /* SPAWN_FAILED of its start: nothing was started */
	ZYGOTE_EV_GONE = 2,    /* SPAWN_ZYGOTE_GONE: reaped */
	ZYGOTE_EV_STOP = 3,    /* not wanted any more */
	ZYGOTE_EV_RETRY = 4,   /* the back-off is over: start again */
	ZYGOTE_EV_COUNT_,
};

/* The back-off: 50 ms after the first failure in a row, doubled at each
 * next, at most 10 s (the pool's, run.h). */
#define ZYGOTE_BACKOFF_MIN_MS 50U
#define ZYGOTE_BACKOFF_MAX_MS 10000U

/* The state after ev in from, or ZYGOTE_STATE_INVALID if ev cannot happen there. */
enum zygote_state zygote_state_next(enum zygote_state from, enum zygote_event ev);
/* Names for logs. */
const char *zygote_state_name(enum zygote_state s);
const char *zygote_event_name(enum zygote_event ev);
/* The wait after one more failure in a row, the last wait being prev_ms
 * (0: none yet). */
uint32_t zygote_backoff_next(uint32_t prev_ms);

#endif
