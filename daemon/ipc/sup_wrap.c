/*
 * sup_wrap.c: the frontend's side of a run's lifeline: the size, the type
 * and the fds of each message checked by one table, in one place (a
 * sandbox is not trusted: its supervisor runs in the run's namespaces, and
 * what it sends decides what the frontend keeps open for it).
 */
#include "sup_wrap.h"

#include <errno.h>
#include <stddef.h>

#include "fdpass.h"

/* By type; a row without a name is no type (retired: 4-7, 10, 11). */
static const struct sup_row sup_rows[SUP_TYPE_END] = {
	[SUP_SETUP_FAILED] = {.name = "setup_failed"},
	[SUP_ARTIFACT] = {.name = "artifact", .nfds = 1},
	[SUP_EXIT] = {.name = "exit"},
	[SUP_EGRESS] = {.name = "egress", .nfds = 1},
	[SUP_TOOLS] = {.name = "tools", .nfds = 1},
	[SUP_CELLS] = {.name = "cells", .nfds = 1},
	[SUP_CELL_END] = {.name = "cell_end"},
	[SUP_CELL_LOST] = {.name = "cell_lost"},
	[SUP_PROC] = {.name = "proc"},
	[SUP_PROCS_END] = {.name = "procs_end"},
	[SUP_PROC_STOPPED] = {.name = "proc_stopped"},
	[SUP_DISPLAY] = {.name = "display", .nfds = 1},
};

const struct sup_row *
sup_row_find(uint32_t type)
{
	if (type >= SUP_TYPE_END || sup_rows[type].name == NULL)
		return NULL;
	return &sup_rows[type];
}

int
sup_wrap_recv(int fd, struct sup_msg *m, int *fds, size_t *ret_nfds, const struct sup_row **ret_row)
{
	const struct sup_row *row;
	size_t nfds = 0;
	ssize_t n = fdpass_recv(fd, m, sizeof(*m), fds, SUP_FDS_MAX, &nfds);

	if (n == -EAGAIN || n == -EINTR)
		return -EAGAIN;
	/* fdpass_recv closed what it received: too many fds, too long. */
	if (n == -EMSGSIZE)
		return -EMSGSIZE;
	if (n <= 0)
		return 0;
	if ((size_t)n != sizeof(*m)) {
		fdpass_close_all(fds, nfds);
		return -EMSGSIZE;
	}
	row = sup_row_find(m->type);
	if (row == NULL) {
		fdpass_close_all(fds, nfds);
		return -EPROTO;
	}
	if (row->nfds != nfds) {
		fdpass_close_all(fds, nfds);
		return -EBADMSG;
	}
	*ret_row = row;
	*ret_nfds = nfds;
	return 1;
}
