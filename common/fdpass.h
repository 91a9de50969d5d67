/* fdpass.h: send and receive one SOCK_SEQPACKET packet with SCM_RIGHTS fds. */
#ifndef AIRLOCK_FDPASS_H
#define AIRLOCK_FDPASS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Send buf and nfds descriptors as one packet. Returns 0 or -errno. */
int fdpass_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds);

/*
 * Receive one packet into buf (cap bytes) and up to maxfds descriptors, all
 * close-on-exec. Returns the packet's length (0 means EOF) or -errno:
 * -EMSGSIZE when the packet was larger than cap or carried more than maxfds
 * descriptors (whatever arrived is closed; the packet is consumed).
 */
ssize_t fdpass_recv(int sock, void *buf, size_t cap, int *fds, size_t maxfds, size_t *ret_nfds);

/*
 * fdpass_recv(), except that a packet whose bytes fit but whose descriptors
 * the kernel could not all install (MSG_CTRUNC: the receiver at its
 * RLIMIT_NOFILE, EMFILE) is returned, with the descriptors that did arrive,
 * and *ret_lost set: a trusted peer's message is then one failed request,
 * not a malformed one. *ret_lost is false otherwise.
 */
ssize_t fdpass_recv_lossy(int sock, void *buf, size_t cap, int *fds, size_t maxfds,
			  size_t *ret_nfds, bool *ret_lost);

/* Close nfds descriptors, ignoring -1. */
void fdpass_close_all(int *fds, size_t nfds);

#endif
