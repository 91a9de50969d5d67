/*
 * backoff.h: the accept back-off that the daemon's listener and the egress
 * proxy's per-run listeners share: out of descriptors or memory, stop
 * accepting for a while rather than spin on a listening socket that stays
 * readable.
 */
#ifndef AIRLOCKD_BACKOFF_H
#define AIRLOCKD_BACKOFF_H

struct event;
struct event_base;

/* A timer that, when it fires, adds listen_ev back (see listener_back_off). */
struct event *listener_back_off_new(struct event_base *base, struct event *listen_ev);
/* Out of descriptors or memory: stop accepting on listen_ev for ms
 * milliseconds; back_off_ev (from listener_back_off_new) resumes it. */
void listener_back_off(struct event *listen_ev, struct event *back_off_ev, unsigned ms);

#endif
