/*
 * daemon.c: the services of struct daemon the frontend's modules share:
 * the spawner channel's send, the status systemd shows, an fd's watch
 * ended, the stop once the last run ended. It calls none of those modules,
 * so run.c, session.c and cells.c reach it without a cycle through
 * frontend.c (docs/design-reshape.md section 1.5).
 */
#include <event2/event.h>
#include <unistd.h>

#include "frontend.h"
#include "spawn_wrap.h"
#include "svcmgr.h"

void
frontend_unwatch(struct event **ev, int *fd)
{
	if (*ev != NULL) {
		event_free(*ev);
		*ev = NULL;
	}
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

int
frontend_spawn_fds(struct daemon *d, const struct spawn_req *req, int *fds, size_t nfds)
{
	return spawn_wrap_send(d->spawner_fd, req, fds, nfds);
}

void
frontend_status(struct daemon *d)
{
	svcmgr_notifyf("STATUS=%s%u running, %u queued, %u sessions, %u clients",
		       d->stopping ? "stopping: " : "", d->nrunning, d->queue.n, d->nsessions,
		       d->nclients);
}

void
frontend_run_ended(struct daemon *d)
{
	if (d->stopping && d->nruns == 0 && d->nsessions == 0) {
		log_info("stopping: every run has ended");
		event_base_loopbreak(d->base);
	}
}
