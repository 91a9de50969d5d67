/*
 * lifeline.c: what a run's supervisor says on its lifeline (spawn_msg.h,
 * struct sup_msg), by a table: sup_wrap_recv() (ipc/sup_wrap.c) checks
 * each message's size, type and fds; a row here says what the run must be
 * for it and who takes it: its set-up failure, its artifacts, its egress
 * and tool listeners, an interpreter's channel and cells' ends (to the
 * run's cells through d->cells_ops, run_owner.h), its last word SUP_EXIT.
 *
 * A supervisor runs inside the sandbox's namespaces, next to the code:
 * anything it sends outside the table, or after SUP_EXIT, is not what a
 * sound supervisor does, so the run ends with a sandbox error (logged, its
 * fds closed, the lifeline closed) rather than the message being dropped.
 */
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fdpass.h"
#include "log.h"
#include "run.h"
#include "run_owner.h"
#include "run_tools.h"
#include "sup_wrap.h"
#include "compiler.h"

static void
lifeline_setup_failed(struct run *r, const struct sup_msg *m, int fd UNUSED)
{
	r->f.setup_failed = true;
	r->f.fail_step = m->step;
	r->f.fail_err = m->err;
}

static void
lifeline_exit(struct run *r, const struct sup_msg *m, int fd UNUSED)
{
	r->f.sup_exit = true;
	r->f.exit_msg = *m;
}

static void
lifeline_artifact(struct run *r, const struct sup_msg *m, int fd)
{
	run_io_add_artifact(r, m, fd);
}

static void
lifeline_display(struct run *r, const struct sup_msg *m, int fd)
{
	run_display_add(r, m, fd);
}

static void
lifeline_egress(struct run *r, const struct sup_msg *m UNUSED, int fd)
{
	run_io_egress_open(r, fd);
}

static void
lifeline_tools(struct run *r, const struct sup_msg *m UNUSED, int fd)
{
	run_tools_listen(r, fd);
}

static void
lifeline_cells(struct run *r, const struct sup_msg *m UNUSED, int fd)
{
	r->d->cells_ops->channel(r->cells, r, fd);
}

static void
lifeline_cell_end(struct run *r, const struct sup_msg *m, int fd UNUSED)
{
	r->d->cells_ops->sup_end(r->cells, r, m);
}

static void
lifeline_cell_lost(struct run *r, const struct sup_msg *m, int fd UNUSED)
{
	r->d->cells_ops->sup_lost(r->cells, r, m);
}

static void
lifeline_procs(struct run *r, const struct sup_msg *m, int fd UNUSED)
{
	r->d->cells_ops->procs(r->cells, r, m);
}

/* Who takes a type (fd: its one fd, or -1), and what the run must be;
 * by type, as sup_rows[] (a type of that table without a row here is a
 * broken invariant). */
struct lifeline_row {
	void (*handle)(struct run *r, const struct sup_msg *m, int fd);
	bool interp; /* only an interpreter session's interpreter's run */
};

static const struct lifeline_row lifeline_rows[SUP_TYPE_END] = {
	[SUP_SETUP_FAILED] = {.handle = lifeline_setup_failed},
	[SUP_ARTIFACT] = {.handle = lifeline_artifact},
	[SUP_EXIT] = {.handle = lifeline_exit},
	[SUP_EGRESS] = {.handle = lifeline_egress},
	[SUP_TOOLS] = {.handle = lifeline_tools},
	[SUP_CELLS] = {.handle = lifeline_cells, .interp = true},
	[SUP_CELL_END] = {.handle = lifeline_cell_end, .interp = true},
	[SUP_CELL_LOST] = {.handle = lifeline_cell_lost, .interp = true},
	[SUP_PROC] = {.handle = lifeline_procs, .interp = true},
	[SUP_PROCS_END] = {.handle = lifeline_procs, .interp = true},
	[SUP_PROC_STOPPED] = {.handle = lifeline_procs, .interp = true},
	[SUP_DISPLAY] = {.handle = lifeline_display},
};

static void lifeline_refuse(struct run *r, int *fds, size_t nfds, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The supervisor broke the lifeline's protocol: say so, close what came
 * and the lifeline; the run ends with a sandbox error (run_outcome.c). */
static void
lifeline_refuse(struct run *r, int *fds, size_t nfds, const char *fmt, ...)
{
	va_list ap;

	fdpass_close_all(fds, nfds);
	va_start(ap, fmt);
	(void)vsnprintf(r->f.lifeline_why, sizeof(r->f.lifeline_why), fmt, ap);
	va_end(ap);
	if (!r->f.lifeline_bad)
		log_warnx("run %" PRIu32 ": the sandbox broke its lifeline: %s", r->run_id,
			  r->f.lifeline_why);
	r->f.lifeline_bad = true;
	run_io_close_lifeline(r);
}

/* Take one checked message: 1 to read on, 0 to stop (SUP_EXIT, or refused). */
static int
lifeline_take(struct run *r, const struct sup_msg *m, int *fds, size_t nfds,
	      const struct sup_row *row)
{
	const struct lifeline_row *h = &lifeline_rows[m->type]; /* < SUP_TYPE_END: sup_wrap */

	if (h->handle == NULL)
		fatalx("lifeline: sup_rows has %s, lifeline_rows does not", row->name);
	if (r->f.sup_exit) {
		lifeline_refuse(r, fds, nfds, "%s after its exit", row->name);
		return 0;
	}
	if (h->interp && r->cells == NULL) {
		lifeline_refuse(r, fds, nfds, "%s for a run that is no interpreter", row->name);
		return 0;
	}
	h->handle(r, m, nfds > 0 ? fds[0] : -1);
	/* SUP_EXIT is its last word: the lifeline is closed once the run was
	 * answered (run_maybe_finish); what follows is read at the reap. */
	return m->type == SUP_EXIT ? 0 : 1;
}

bool
lifeline_read(struct run *r, int budget)
{
	for (; budget > 0 && r->lifeline >= 0; budget--) {
		const struct sup_row *row = NULL;
		struct sup_msg m;
		int fds[SUP_FDS_MAX];
		size_t nfds = 0;
		int rc = sup_wrap_recv(r->lifeline, &m, fds, &nfds, &row);

		if (rc == -EAGAIN)
			return true;
		if (rc == 0) {
			run_io_close_lifeline(r);
			return false;
		}
		if (rc == -EMSGSIZE)
			lifeline_refuse(r, NULL, 0,
					"a message of the wrong size or with too many fds");
		else if (rc == -EPROTO)
			lifeline_refuse(r, NULL, 0, "a message of unknown type %" PRIu32, m.type);
		else if (rc == -EBADMSG)
			lifeline_refuse(r, NULL, 0, "type %" PRIu32 " with the wrong number of fds",
					m.type);
		if (rc < 0 || lifeline_take(r, &m, fds, nfds, row) == 0)
			return false;
	}
	return false;
}

void
lifeline_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct run *r = arg;

	(void)lifeline_read(r, 64);
	r->io_done(r);
}
