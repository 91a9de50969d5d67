/*
 * session_query.c: a session's requests that only read it or act through
 * its interpreter: session_list (the caller's sessions) and session_ps /
 * process_stop (a background session's processes, cells_procs.c). Split
 * from session.c, which keeps the lifecycle.
 */
#include "session.h"
#include "session_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "cells.h"
#include "clock.h"
#include "frontend.h"
#include "proto.h"

void
session_list(struct daemon *d, struct client *c, uint32_t req_id)
{
	struct proto_session_entry e[PROTO_SESSIONS_MAX];
	struct proto_session_list l = {.sessions = e, .nsessions = 0};
	struct proto_out out;
	struct session *s;
	bool busy;

	TAILQ_FOREACH(s, &d->sessions, entry)
	{
		/* One being restored after a restart is listed: its owner
		 * sees it is coming back (it takes requests once idle). */
		if ((s->state != SESSION_READY && s->restore == NULL) || s->uid != client_uid(c))
			continue;
		/* Past the cap, count what is left out: a cut list says so. */
		if (l.nsessions == PROTO_SESSIONS_MAX) {
			l.more++;
			continue;
		}
		/* An interpreter session's run is its interpreter, alive
		 * between cells: busy while a cell runs or waits, and its
		 * runs are its cells. */
		busy = s->cells != NULL ? cells_busy(s->cells) : s->active != NULL;
		/* Restoring is busy: "running" (the wire's states are
		 * fixed; an older client refuses another). */
		busy = busy || s->restore != NULL;
		e[l.nsessions++] = (struct proto_session_entry){
			.session = s->id,
			.age_ms = clock_ms_since(&s->t_open),
			.idle_ms = busy ? 0 : clock_ms_since(&s->t_active),
			.runs = s->cells != NULL ? cells_count(s->cells) : s->nruns,
			.state = busy ? "running" : "idle",
			.interpreter = s->cells != NULL ? cells_runtime(s->cells) : NULL,
			.background = s->background};
	}
	client_send_encoded(c, req_id, proto_encode_session_list(req_id, &l, &out), &out,
			    "session_list");
}

void
session_processes(struct daemon *d, struct client *c, uint32_t req_id, const char *id, bool stop,
		  uint32_t pid)
{
	struct session *s = session_find(d, client_uid(c), id);

	/* Another uid's session is not_found, as one that never existed. */
	if (s == NULL || s->state != SESSION_READY) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "no such session");
		return;
	}
	if (s->cells == NULL || !s->background) {
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST,
				  "session %.8s was not opened with background processes: "
				  "nothing a step starts outlives it",
				  s->id);
		return;
	}
	cells_processes(s->cells, c, req_id, stop, pid);
}
