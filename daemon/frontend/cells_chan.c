/*
 * cells_chan.c: the driver's channel of an interpreter session in the
 * frontend (cells_msg.h, docs/design-interpreters.md §2): a cell handed
 * over (cells_send: BEGIN to the supervisor, the code and the output
 * memfds to the driver), the driver's answer read and checked
 * (cells_chan_cb), and the cell's end from the supervisor
 * (cells_sup_end). The queue is cells.c, the interpreter's lifecycle
 * cells_interp.c.
 *
 * One cell at a time: the frontend makes its code memfd (sealed) and three
 * plain memfds (stdout, stderr, reply), tells the supervisor the cell
 * begins (CELLS_SUP_BEGIN: its clock), hands the four fds to the driver
 * (struct cells_start), and waits for the driver's struct cells_done. It
 * then asks the supervisor to end the cell (CELLS_SUP_FINISH: the cell's
 * other processes die), and at SUP_CELL_END reads what the cell wrote and
 * answers.
 * Outputs are memfds, not pipes: nothing the cell leaves behind can hold
 * the answer up, and a lingering writer only fills its own copy.
 *
 * The driver runs in the code's process: every message from it is checked
 * here and in cells_reply.c (size, magic, cell number, status, lengths
 * against the bounds and the reply's size, mime names from a closed set,
 * UTF-8 of the value, no fds);
 * anything else, or its channel closing, ends the interpreter, and the
 * next cell starts a new one: the result says the state was lost.
 */
#include "cells.h"
#include "cells_int.h"
#include "cells_reply.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cells_msg.h"
#include "compiler.h"
#include "fdio.h"
#include "fdpass.h"
#include "frontend.h"
#include "log.h"
#include "memfd.h"
#include "run.h"
#include "xevent.h"

void
cells_close_chan(struct cells *cs)
{
	frontend_unwatch(&cs->chan_ev, &cs->chan);
}

static void
cells_chan_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct cells *cs = arg;
	struct cell *cl = TAILQ_FIRST(&cs->q);
	struct cells_done dn;
	struct cells_sup fin;
	int fds[CELLS_NFDS];
	size_t nfds = 0;
	ssize_t n;
	const char *bad;

	n = fdpass_recv(fd, &dn, sizeof(dn), fds, CELLS_NFDS, &nfds);
	if (n == -EAGAIN || n == -EINTR)
		return;
	fdpass_close_all(fds, nfds);
	if (n == 0 || n == -ECONNRESET) {
		/* The channel closed: the driver is gone or broken. If it is
		 * gone, its run's end answers the cell with the true outcome
		 * (an oom kill closes the channel first); if the run has not
		 * ended a moment later, the code closed or overwrote the
		 * channel and goes on: nothing can answer, so restart now
		 * rather than at the cell's wall limit. */
		log_warnx("session %s: the interpreter closed its channel", cells_sid(cs));
		cells_close_chan(cs);
		if (cl == NULL || cl->stage != CELL_SENT) {
			cells_restart(cs, "the interpreter closed its channel");
		} else {
			struct timeval tv = {CELLS_EOF_GRACE_MS / 1000,
					     (CELLS_EOF_GRACE_MS % 1000) * 1000};

			evtimer_add(cs->eof_ev, &tv);
		}
		return;
	}
	if (n < 0 || (size_t)n != sizeof(dn) || nfds != 0) {
		cells_restart(cs, "the interpreter sent a malformed message (%zd bytes, %zu fds)",
			      n, nfds);
		return;
	}
	if (cl == NULL || cl->stage != CELL_SENT) {
		cells_restart(cs, "the interpreter spoke out of turn");
		return;
	}
	bad = cells_check_done(cl->n, cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES], cl->fd[2], &dn);
	if (bad == NULL)
		bad = cells_read_error(&dn, cl->fd[2], &cl->err);
	if (bad != NULL) {
		cells_restart(cs, "cell %" PRIu64 ": the interpreter's answer is refused: %s",
			      cl->n, bad);
		return;
	}
	cl->done = dn;
	cl->stage = CELL_FINISHING;
	memset(&fin, 0, sizeof(fin));
	fin.type = CELLS_SUP_FINISH;
	fin.cell = cl->n;
	if (cs->interp == NULL || run_lifeline_send(cs->interp, &fin, sizeof(fin)) < 0)
		cells_restart(cs, "cell %" PRIu64 ": cannot reach the supervisor", cl->n);
}

void
cells_channel(struct cells *cs, struct run *r, int fd)
{
	if (cs->interp != r || cs->chan >= 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return;
	}
	cs->chan = fd;
	cs->chan_ev = xevent_new(cs->d->base, fd, EV_READ | EV_PERSIST, cells_chan_cb, cs);
	event_add(cs->chan_ev, NULL);
	cells_transition(cs, CELLS_EV_CHANNEL);
	cells_pump_soon(cs);
}

void
cells_sup_end(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	struct cell *cl = TAILQ_FIRST(&cs->q);

	if (cs->interp != r)
		return; /* an interpreter already given up */
	if (cl == NULL || cl->stage != CELL_FINISHING || m->size != cl->n) {
		cells_restart(cs, "a cell's end that is not this cell's");
		return;
	}
	/* A SIGINT the supervisor sent that the cell did not take (it came
	 * after the driver blocked it) is pending in the interpreter: the
	 * next cell's driver drops it, and only then. Any other SIGINT
	 * pending at a start is that cell's cancel, come early. */
	cs->drain_sigint = m->status != 0 && cl->done.status != CELLS_INTERRUPTED;
	cells_answer(cs, cl, NULL, m, false, NULL);
	cells_transition(cs, CELLS_EV_DONE);
	cells_pump_soon(cs);
}

/* The channel closed during a cell and the interpreter still runs. */
void
cells_eof_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct cells *cs = arg;
	struct cell *cl = TAILQ_FIRST(&cs->q);

	if (cs->interp != NULL && cl != NULL && cl->stage == CELL_SENT)
		cells_restart(cs, "cell %" PRIu64 ": the interpreter closed its channel", cl->n);
}

/* Hand the head cell to the driver: the supervisor first (its clock), then the driver. */
int
cells_send(struct cells *cs, struct cell *cl)
{
	struct cells_sup beg;
	struct cells_start st;
	int fds[CELLS_NFDS] = {-1, -1, -1, -1}, k, rc;

	rc = memfd_sealed_create("airlock-cell", cl->code, cl->code_len, &fds[0]);
	for (k = 0; rc == 0 && k < 3; k++) {
		rc = memfd_new(k == 0 ? "stdout" : k == 1 ? "stderr" : "reply", &cl->fd[k]);
		fds[k + 1] = cl->fd[k];
	}
	if (rc < 0)
		goto out;
	memset(&beg, 0, sizeof(beg));
	beg.type = CELLS_SUP_BEGIN;
	beg.cell = cl->n;
	beg.wall_ms = cl->lim.v[PROTO_LIMIT_WALL_MS];
	beg.cpu_ms = cl->lim.v[PROTO_LIMIT_CPU_MS];
	beg.grace_ms = CELLS_GRACE_MS;
	/* The files the cell leaves are chosen and cut by its own limits, as a
	 * run's (run_io_add_artifact reads the run's at each SUP_ARTIFACT). */
	cs->interp->lim.v[PROTO_LIMIT_ARTIFACTS] = cl->lim.v[PROTO_LIMIT_ARTIFACTS];
	cs->interp->lim.v[PROTO_LIMIT_ARTIFACT_BYTES] = cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES];
	clock_gettime(CLOCK_MONOTONIC, &cl->t_sent);
	rc = run_lifeline_send(cs->interp, &beg, sizeof(beg));
	if (rc < 0)
		goto out;
	memset(&st, 0, sizeof(st));
	st.magic = CELLS_MAGIC;
	st.flags = (cl->svg ? CELLS_START_SVG : 0) | (cl->ipython ? CELLS_START_IPYTHON : 0) |
		   (cs->sops->background(cs->s) ? CELLS_START_F_BACKGROUND : 0) |
		   (cs->drain_sigint ? CELLS_START_F_DRAIN_SIGINT : 0) |
		   (cl->stream ? CELLS_START_F_STREAM : 0);
	st.cell = cl->n;
	st.value_max = PROTO_VALUE_MAX;
	st.display_max = (uint32_t)(cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES] > UINT32_MAX
					    ? UINT32_MAX
					    : cl->lim.v[PROTO_LIMIT_ARTIFACT_BYTES]);
	rc = fdpass_send(cs->chan, &st, sizeof(st), fds, CELLS_NFDS);
	if (rc >= 0)
		rc = 0;
	if (rc == 0 && cl->stream)
		cells_stream_arm(cs);
out:
	fd_close(fds[0]);
	cell_code_free(cs, cl);
	return rc;
}
