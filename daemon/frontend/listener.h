/*
 * listener.h: listening sockets: the daemon's own (created as root or taken
 * from systemd) and the accept back-off that it and the egress proxy's
 * per-run listeners share.
 */
#ifndef AIRLOCKD_LISTENER_H
#define AIRLOCKD_LISTENER_H

#include <sys/types.h>

struct daemon;
struct event;
struct event_base;

/* Create the socket at path (unlink a stale one), owner, group, mode. As root. */
int listener_create(const char *path, uid_t uid, gid_t gid, mode_t mode, int *ret_fd);
/* Take the socket from systemd socket activation, if any (0 = none). */
int listener_from_systemd(int *ret_fd);
/* Start accepting on d->listen_fd. */
int listener_start(struct daemon *d);

/* A timer that, when it fires, adds listen_ev back (see listener_back_off). */
struct event *listener_back_off_new(struct event_base *base, struct event *listen_ev);
/* Out of descriptors or memory: stop accepting on listen_ev for ms
 * milliseconds; back_off_ev (from listener_back_off_new) resumes it. */
void listener_back_off(struct event *listen_ev, struct event *back_off_ev, unsigned ms);

#endif
