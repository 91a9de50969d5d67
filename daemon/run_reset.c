/*
 * run_reset.c: a run goes back to the queue (run.h). Apart from run.c so
 * that a unit test can link it alone, with what it calls as link seams.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "egress.h"
#include "log.h"
#include "run.h"

void
run_reset_for_queue(struct run *r)
{
	struct daemon *d = r->d;
	int k;

	/* A session run takes its session's slot and keeper's work once:
	 * nothing puts it back. */
	if (r->session != NULL)
		fatalx("run %" PRIu32 ": a session run goes back to the queue", r->run_id);
	if (r->state != RUN_QUEUED) {
		/*
		 * Launched: its sandbox's output, lifeline, backstop and
		 * artifacts go, and its count among the running. A run with
		 * tools never comes here (run_pool_eligible: never pre-started,
		 * so never retried): run_io_reset closes its bridge for good.
		 */
		if (r->tools != NULL)
			fatalx("run %" PRIu32 ": a run with tools goes back to the queue",
			       r->run_id);
		run_io_reset(r);
		egress_run_close(r->egress, NULL);
		r->egress = NULL;
		d->nrunning--;
	}
	for (k = 0; k < 2; k++)
		if (r->stat_fd[k] >= 0) {
			close(r->stat_fd[k]);
			r->stat_fd[k] = -1;
		}
	/* The key, and with it the uid slot it holds. */
	if (r->prep_key != 0)
		spawnref_del(&d->refs, r->prep_key);
	r->prep_key = 0;
	r->slot = 0;
	r->t_start = (struct timespec){0, 0};
	memset(&r->f, 0, sizeof(r->f));
	r->prestarted = false;
}
