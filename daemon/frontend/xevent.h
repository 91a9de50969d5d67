/*
 * xevent.h: libevent events that cannot fail, for the frontend. event_new()
 * fails only when out of memory, and the daemon exits there (xalloc.h); a
 * caller that can fail softly (a start-up step, the egress proxy) keeps
 * event_new() and its own check.
 */
#ifndef AIRLOCK_XEVENT_H
#define AIRLOCK_XEVENT_H

#include <event2/event.h>
#include <stddef.h>

#include "log.h"

/* event_new(), or exit. */
static inline struct event *
xevent_new(struct event_base *base, evutil_socket_t fd, short what, event_callback_fn cb, void *arg)
{
	struct event *ev = event_new(base, fd, what, cb, arg);

	if (ev == NULL)
		fatalx("out of memory");
	return ev;
}

/* evtimer_new(), or exit; also the event a callback activates by hand. */
static inline struct event *
xevtimer_new(struct event_base *base, event_callback_fn cb, void *arg)
{
	return xevent_new(base, -1, 0, cb, arg);
}

/*
 * event_free() of each of an object's events at its end, NULL ones (never
 * made) skipped: XEVENTS_FREE(c->read_ev, c->write_ev, ...). One call per
 * destructor, so a new event of the object is one more argument.
 */
static inline void
xevents_free(struct event *const *evs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (evs[i] != NULL)
			event_free(evs[i]);
}

#define XEVENTS_FREE(...)                                                                          \
	xevents_free((struct event *const[]){__VA_ARGS__},                                         \
		     sizeof((struct event *const[]){__VA_ARGS__}) / sizeof(struct event *))

#endif
