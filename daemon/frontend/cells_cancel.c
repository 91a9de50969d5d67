/*
 * cells_cancel.c: a cancel of a cell (docs/design-interpreters.md §2.7).
 *
 * A queued cell is answered cancelled at once; a running one is
 * interrupted as at its wall limit (CELLS_SUP_INTERRUPT: SIGINT and the
 * grace), so that the interpreter keeps its state. What cannot be
 * cancelled (an ended cell, a closed session, an idle interpreter) is
 * refused with the reason and changes nothing.
 */
#include "cells.h"
#include "cells_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frontend.h"
#include "log.h"
#include "run.h"

static struct cell *
cells_find(const struct cells *cs, const struct client *c, uint32_t req_id)
{
	struct cell *cl;

	TAILQ_FOREACH(cl, &cs->q, entry)
	if (cl->c == c && cl->req_id == req_id)
		return cl;
	return NULL;
}

bool
cells_has_request(const struct cells *cs, const struct client *c, uint32_t req_id)
{
	return cells_find(cs, c, req_id) != NULL;
}

/* Why cl (c's of cell_req, or the head) cannot be cancelled; NULL: it can. */
static const char *
cells_cancel_refused(const struct cells *cs, const struct cell *cl, uint32_t cell_req, char *why,
		     size_t len)
{
	if (cs->state == CELLS_ENDED)
		snprintf(why, len, "session %s is closed", cells_sid(cs));
	else if (cl == NULL && cell_req != 0)
		snprintf(why, len,
			 "no cell of request %" PRIu32 " waits or runs in session %s: it has ended",
			 cell_req, cells_sid(cs));
	else if (cl == NULL)
		snprintf(why, len, "no cell runs in session %s: its interpreter is idle",
			 cells_sid(cs));
	else if (cl->stage == CELL_FINISHING)
		snprintf(why, len, "cell %" PRIu64 " of session %s has already ended", cl->n,
			 cells_sid(cs));
	else if (cs->state == CELLS_KILLING)
		snprintf(why, len,
			 "cell %" PRIu64
			 " of session %s is ending: its interpreter is being restarted",
			 cl->n, cells_sid(cs));
	else if (cl->cancelled)
		snprintf(why, len, "cell %" PRIu64 " of session %s is already being cancelled",
			 cl->n, cells_sid(cs));
	else
		return NULL;
	return why;
}

void
cells_cancel(struct cells *cs, struct client *c, uint32_t id, uint32_t cell_req)
{
	struct cell *cl = cell_req != 0 ? cells_find(cs, c, cell_req) : TAILQ_FIRST(&cs->q);
	struct cells_sup in;
	struct proto_out out;
	char why[192];

	if (cells_cancel_refused(cs, cl, cell_req, why, sizeof(why)) != NULL) {
		/* Nothing changes: the cell, if any, runs on. */
		client_send_error(c, id, PROTO_ERR_NOT_FOUND, "%s", why);
		return;
	}
	/* Answer first, so that cancel_ok comes before the cell's result. */
	if (proto_encode_simple(id, PROTO_CANCEL_OK, &out) < 0)
		fatalx("cannot encode cancel_ok");
	client_send(c, &out);
	cl->cancelled = true;
	log_info("session %s: cell %" PRIu64 ": cancelled (%s)", cells_sid(cs), cl->n,
		 cl->stage == CELL_QUEUED ? "queued" : "interrupted");
	if (cl->stage == CELL_QUEUED) {
		bool head = TAILQ_FIRST(&cs->q) == cl;

		cells_answer(cs, cl, NULL, NULL, true, NULL);
		if (head)
			cells_pump_soon(cs);
		return;
	}
	/* Running: interrupted as at its wall limit (SIGINT, the grace): the
	 * driver's answer, or the interpreter's end past the grace, answers it. */
	memset(&in, 0, sizeof(in));
	in.type = CELLS_SUP_INTERRUPT;
	in.cell = cl->n;
	if (cs->interp == NULL || run_lifeline_send(cs->interp, &in, sizeof(in)) < 0)
		cells_restart(cs, "cell %" PRIu64 ": cannot reach the supervisor to interrupt it",
			      cl->n);
}
