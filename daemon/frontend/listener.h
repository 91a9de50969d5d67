/*
 * listener.h: the daemon's listening socket (created as root or taken from
 * systemd); its accept back-off is backoff.h's, shared with the egress
 * proxy's per-run listeners.
 */
#ifndef AIRLOCKD_LISTENER_H
#define AIRLOCKD_LISTENER_H

#include <sys/types.h>

struct daemon;

/* Create the socket at path (unlink a stale one), owner, group, mode. As root. */
int listener_create(const char *path, uid_t uid, gid_t gid, mode_t mode, int *ret_fd);
/* Take the socket from systemd socket activation, if any (0 = none). */
int listener_from_systemd(int *ret_fd);
/* Start accepting on d->listen_fd; each connection accepted (a CLOEXEC,
 * non-blocking fd) is given to accept_cb, which takes it. */
int listener_start(struct daemon *d, void (*accept_cb)(struct daemon *d, int fd));

#endif
