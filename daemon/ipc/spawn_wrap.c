/* spawn_wrap.c: the frontend's side of the spawner channel (spawn_wrap.h). */
#include <errno.h>
#include <poll.h>

#include "spawn_wrap.h"

#include "fdpass.h"

/* The events the frontend takes from the spawner, and how many fds each
 * may carry (spawn_msg.h). */
static const struct {
	uint32_t type;
	size_t nfds_max;
} spawn_wrap_events[] = {
	{SPAWN_STARTED, 2}, /* a sandbox's memory figure fds */
	{SPAWN_FAILED, 0},	{SPAWN_DONE, 0},
	{SPAWN_STOP, 0},	{SPAWN_RELOAD, 1}, /* a sealed memfd of the config file */
	{SPAWN_ZYGOTE_GONE, 0},			   /* a zygote's end (no handler yet) */
};

int
spawn_wrap_send(int sock, const struct spawn_req *req, const int *fds, size_t nfds)
{
	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLOUT};
		int r = fdpass_send(sock, req, sizeof(*req), fds, nfds);

		if (r != -EAGAIN)
			return r;
		/* The spawner is a busy local peer, not a client: wait for it. */
		if (poll(&p, 1, 1000) < 0 && errno != EINTR)
			return -errno;
	}
}

int
spawn_wrap_recv(int sock, struct spawn_ev *ev, int *fds, size_t *nfds, bool *ret_lost)
{
	size_t i, n_events = sizeof(spawn_wrap_events) / sizeof(spawn_wrap_events[0]);
	bool lost = false;
	ssize_t n;

	*nfds = 0;
	n = fdpass_recv_lossy(sock, ev, sizeof(*ev), fds, SPAWN_WRAP_FDS_MAX, nfds, &lost);
	if (n == -EAGAIN || n == -EINTR)
		return (int)n;
	if (n == 0) {
		fdpass_close_all(fds, *nfds);
		*nfds = 0;
		return 0;
	}
	for (i = 0; n > 0 && i < n_events; i++)
		if (spawn_wrap_events[i].type == ev->type)
			break;
	/* A wrong size, type or fd count: the caller decides what that means
	 * (the frontend: a broken invariant of its more trusted peer). A type
	 * that carries no fd came with some it could not all receive: too many. */
	if (n < 0 || (size_t)n != sizeof(*ev) || i == n_events ||
	    *nfds > spawn_wrap_events[i].nfds_max || (lost && spawn_wrap_events[i].nfds_max == 0)) {
		fdpass_close_all(fds, *nfds);
		*nfds = 0;
		return n < 0 ? (int)n : -EPROTO;
	}
	ev->step[sizeof(ev->step) - 1] = '\0';
	if (lost) {
		fdpass_close_all(fds, *nfds);
		*nfds = 0;
	}
	*ret_lost = lost;
	return 1;
}
