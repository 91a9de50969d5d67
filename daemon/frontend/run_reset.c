/*
 * run_reset.c: a run goes back to the queue (run.h). Apart from run.c so
 * that a unit test can link it alone, with what it calls as link seams.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "egress.h"
#include "run.h"

int
run_reset_for_queue(struct run *r)
{
	struct daemon *d = r->d;
	int k;

	/*
	 * Refused, before anything is changed: a session run takes its
	 * session's slot and keeper's work once, and nothing puts those back;
	 * a launched run with tools would lose its tool bridge
	 * (run_io_reset closes it for good). Neither comes here today (a
	 * session run never waits for a uid slot, a run with tools is never
	 * pre-started: run_pool_eligible). A caller that brought one ends
	 * that run alone with an internal error: a fatalx here would take
	 * every user's runs down for one run.
	 */
	if (r->session != NULL || (r->state != RUN_QUEUED && r->tools != NULL))
		return -EINVAL;
	if (r->state != RUN_QUEUED) {
		/* Launched: its sandbox's output, lifeline, backstop and
		 * artifacts go, and its count among the running. */
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
	r->zygote_key = 0;
	return 0;
}
