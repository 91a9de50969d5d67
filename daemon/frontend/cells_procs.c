/*
 * cells_procs.c: a background interpreter session's processes, listed
 * (session_ps) and stopped one by one (process_stop) by its owner
 * (docs/design-interpreters.md §2.7). Only the interpreter's supervisor can
 * see them (they are in its pid namespace) and signal them (they run as
 * the session's sandbox uid): each question goes to it on the lifeline
 * (CELLS_SUP_PS, CELLS_SUP_STOP) and its answers come back in order
 * (SUP_PROC..., SUP_PROCS_END; SUP_PROC_STOPPED), so the questions wait
 * here, oldest first, at most CELLS_PROCS_WAIT_MAX.
 */
#include "cells_procs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cells_msg.h"
#include "frontend.h"
#include "log.h"
#include "proto.h"
#include "sup_msg.h"
#include "xalloc.h"

struct cells_ask {
	struct client *c; /* NULL: its client left, answered to no one */
	uint32_t req_id;
	bool stop;
	uint32_t pid;
};

struct cells_procs {
	struct cells_ask wait[CELLS_PROCS_WAIT_MAX]; /* wait[0] is the oldest */
	size_t nwait;
	/* The list under way (wait[0] a list): what SUP_PROC said so far. */
	struct proto_process procs[PROTO_PROCESSES_MAX];
	char names[PROTO_PROCESSES_MAX][PROTO_PROCESS_NAME_MAX + 1];
	size_t nprocs;
};

struct cells_procs *
cells_procs_new(void)
{
	return xcalloc(1, sizeof(struct cells_procs));
}

/* Answer the oldest question with a list of what came (truncated: more
 * were there than came) and drop it. */
static void
cells_procs_answer_list(struct cells_procs *p, bool truncated)
{
	struct proto_process_list l = {
		.processes = p->procs, .nprocesses = p->nprocs, .truncated = truncated};
	struct cells_ask *a = &p->wait[0];
	struct proto_out out;

	if (a->c != NULL)
		client_send_encoded(a->c, a->req_id,
				    proto_encode_session_ps_ok(a->req_id, &l, &out), &out,
				    "session_ps");
	p->nprocs = 0;
	memmove(&p->wait[0], &p->wait[1], --p->nwait * sizeof(p->wait[0]));
}

/* Answer the oldest question, a stop, with err (0: ok) and drop it. */
static void
cells_procs_answer_stop(struct cells_procs *p, int err)
{
	struct cells_ask *a = &p->wait[0];
	struct proto_out out;

	if (a->c == NULL)
		;
	else if (err == 0 && proto_encode_simple(a->req_id, PROTO_OK, &out) == 0)
		client_send(a->c, &out);
	else if (err == -EPERM)
		client_send_error(
			a->c, a->req_id, PROTO_ERR_BAD_REQUEST,
			"process %" PRIu32 " is the session's interpreter or its "
			"supervisor: close the session (or reset the interpreter) instead",
			a->pid);
	else
		client_send_error(a->c, a->req_id, PROTO_ERR_NOT_FOUND,
				  "no process %" PRIu32 " in the session", a->pid);
	memmove(&p->wait[0], &p->wait[1], --p->nwait * sizeof(p->wait[0]));
}

void
cells_procs_ask(struct cells_procs *p, struct run *interp, struct client *c, uint32_t req_id,
		bool stop, uint32_t pid)
{
	struct cells_sup m;

	if (interp == NULL) {
		/* No interpreter now (not started, or restarting): nothing of
		 * the session runs. */
		struct proto_process_list none = {0};
		struct proto_out out;

		if (stop)
			client_send_error(c, req_id, PROTO_ERR_NOT_FOUND,
					  "no process %" PRIu32 " in the session", pid);
		else
			client_send_encoded(c, req_id,
					    proto_encode_session_ps_ok(req_id, &none, &out), &out,
					    "session_ps");
		return;
	}
	/* Bounded: a client cannot make the frontend hold more than this
	 * per session, nor flood the supervisor's lifeline. */
	if (p->nwait == CELLS_PROCS_WAIT_MAX) {
		client_send_error(c, req_id, PROTO_ERR_BUSY,
				  "%d process questions of this session wait already",
				  CELLS_PROCS_WAIT_MAX);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = stop ? CELLS_SUP_STOP : CELLS_SUP_PS;
	m.cell = pid;
	if (run_lifeline_send(interp, &m, sizeof(m)) < 0) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND,
				  "the session's interpreter is ending");
		return;
	}
	p->wait[p->nwait++] =
		(struct cells_ask){.c = c, .req_id = req_id, .stop = stop, .pid = pid};
}

/* One SUP_PROC into the list under way; its name as the frontend shows it:
 * the code chose it (prctl), so only printable ASCII is kept. */
static void
cells_procs_add(struct cells_procs *p, const struct sup_msg *m)
{
	char *name = p->names[p->nprocs];
	size_t i, len = m->name_len < PROTO_PROCESS_NAME_MAX ? m->name_len : PROTO_PROCESS_NAME_MAX;

	for (i = 0; i < len && m->name[i] != '\0'; i++)
		name[i] = m->name[i] >= 0x20 && m->name[i] < 0x7f ? m->name[i] : '?';
	name[i] = '\0';
	if (i == 0)
		strcpy(name, "?");
	p->procs[p->nprocs++] = (struct proto_process){
		.pid = m->size <= UINT32_MAX ? (uint32_t)m->size : 0,
		.name = name,
		.cpu_ms = m->cpu_ns / 1000000,
		.memory_bytes = m->memory_peak,
	};
}

int
cells_procs_sup(struct cells_procs *p, const struct sup_msg *m)
{
	const struct cells_ask *a = p->nwait > 0 ? &p->wait[0] : NULL;

	switch (m->type) {
	case SUP_PROC:
		if (a == NULL || a->stop || p->nprocs == PROTO_PROCESSES_MAX || m->size <= 1 ||
		    m->size > UINT32_MAX)
			return -EPROTO;
		cells_procs_add(p, m);
		return 0;
	case SUP_PROCS_END:
		if (a == NULL || a->stop || m->size < p->nprocs)
			return -EPROTO;
		cells_procs_answer_list(p, m->size > p->nprocs);
		return 0;
	case SUP_PROC_STOPPED:
		if (a == NULL || !a->stop || m->size != a->pid || m->err > 0)
			return -EPROTO;
		cells_procs_answer_stop(p, m->err);
		return 0;
	default:
		return -EPROTO;
	}
}

void
cells_procs_client_gone(struct cells_procs *p, struct client *c)
{
	size_t i;

	for (i = 0; i < p->nwait; i++)
		if (p->wait[i].c == c)
			p->wait[i].c = NULL;
}

void
cells_procs_ended(struct cells_procs *p)
{
	/* Its processes went with the sandbox: a list is empty, a stop found
	 * nothing to stop. */
	while (p->nwait > 0) {
		p->nprocs = 0;
		if (p->wait[0].stop)
			cells_procs_answer_stop(p, -ESRCH);
		else
			cells_procs_answer_list(p, false);
	}
}

void
cells_procs_free(struct cells_procs *p)
{
	if (p == NULL)
		return;
	cells_procs_ended(p);
	free(p);
}
