/*
 * run_ps.c: the ps reply: the runs a caller may see, queued or running
 * (root sees every uid's).
 */
#include <stdint.h>

#include "clock.h"
#include "frontend.h"
#include "run.h"

void
run_ps(struct daemon *d, struct client *c, uint32_t req_id)
{
	struct proto_ps_entry e[PROTO_PS_MAX];
	struct proto_ps ps = {.runs = e, .nruns = 0};
	struct proto_out out;
	struct run *r;

	TAILQ_FOREACH(r, &d->runs, entry)
	{
		if (r->state >= RUN_EXITED || (client_uid(c) != 0 && client_uid(c) != r->uid))
			continue;
		/* Past the cap, count what is left out: a cut list says so. */
		if (ps.nruns == PROTO_PS_MAX) {
			ps.more++;
			continue;
		}
		e[ps.nruns++] = (struct proto_ps_entry){
			.run = r->run_id,
			.uid = (uint32_t)r->uid,
			.pid = (int32_t)r->client_pid,
			.runtime = r->runtime,
			.state = r->state == RUN_QUEUED ? "queued" : "running",
			.elapsed_ms = clock_ms_since(&r->t_request),
		};
	}
	client_send_encoded(c, req_id, proto_encode_ps(req_id, &ps, &out), &out, "ps");
}
