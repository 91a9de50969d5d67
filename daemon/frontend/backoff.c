/* backoff.c: the accept back-off of a listening event (backoff.h). */
#include <event2/event.h>
#include <sys/time.h>

#include "backoff.h"

#include "compiler.h"

/* The back-off is over: accept on the listening event (arg) again. */
static void
listener_resume_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	event_add(arg, NULL);
}

struct event *
listener_back_off_new(struct event_base *base, struct event *listen_ev)
{
	return evtimer_new(base, listener_resume_cb, listen_ev);
}

void
listener_back_off(struct event *listen_ev, struct event *back_off_ev, unsigned ms)
{
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

	event_del(listen_ev);
	evtimer_add(back_off_ev, &tv);
}
