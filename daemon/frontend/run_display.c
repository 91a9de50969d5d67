/*
 * run_display.c: a python run's figures (docs/design-interpreters.md,
 * "figures of a plain run"): the files its start-up (cells/runboot.py) left
 * in SUP_DISPLAY_DIR, sent by the supervisor as SUP_DISPLAY once every
 * process of the run was gone, kept here by name and put in the result's
 * display items as a cell's are.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "fdio.h"
#include "memfd.h"
#include "run.h"
#include "xalloc.h"

/* The mime type of a figure's file name NNN.png or NNN.svg, else NULL: the
 * name is the code's, so only these two shapes are taken. */
static const char *
run_display_mime(const char *name, size_t len)
{
	if (len != 7 || strspn(name, "0123456789") != 3 || name[3] != '.')
		return NULL;
	if (memcmp(name + 4, "png", 3) == 0)
		return "image/png";
	if (memcmp(name + 4, "svg", 3) == 0)
		return "image/svg+xml";
	return NULL;
}

void
run_display_add(struct run *r, const struct sup_msg *m, int fd)
{
	struct stat st;

	/* The supervisor is inside the sandbox: check what it says. */
	if (r->ndisp == PROTO_DISPLAY_MAX || m->name_len > SUP_NAME_MAX ||
	    run_display_mime(m->name, m->name_len) == NULL || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	memcpy(r->disp[r->ndisp].name, m->name, 7);
	r->disp[r->ndisp].name[7] = '\0';
	r->disp[r->ndisp].fd = fd;
	r->ndisp++;
}

static int
run_display_cmp(const void *a, const void *b)
{
	return strcmp(((const struct run_figure *)a)->name, ((const struct run_figure *)b)->name);
}

struct proto_artifact *
run_display_result(struct run *r, struct proto_result *res)
{
	uint64_t room = r->lim.v[PROTO_LIMIT_ARTIFACT_BYTES], left;
	struct proto_artifact *disp;
	size_t i;

	if (r->ndisp == 0)
		return NULL;
	/* Within the uid's byte budget, as the artifacts (copied before). */
	left = run_io_copy_room(r);
	disp = xcalloc(r->ndisp, sizeof(*disp));
	qsort(r->disp, r->ndisp, sizeof(*r->disp), run_display_cmp);
	for (i = 0; i < r->ndisp; i++) {
		struct proto_artifact *a = &disp[res->ndisplay];
		uint64_t len, size, used;
		int mfd;

		/* Whole or not at all, their bytes together at most the
		 * artifact_bytes limit (a cell's rule): a cut image is none. */
		if (memfd_sealed_copy_sparse(r->disp[i].fd, room, left, &mfd, &len, &size) < 0)
			continue;
		if (len < size) {
			close(mfd);
			continue;
		}
		used = budget_fd_bytes(mfd);
		left = used < left ? left - used : 0;
		room -= size;
		a->name = run_display_mime(r->disp[i].name, strlen(r->disp[i].name));
		a->size = size;
		a->data.fd = mfd;
		a->data.len = len;
		a->data.present = true;
		res->ndisplay++;
	}
	res->display = disp;
	return disp;
}

void
run_display_reset(struct run *r)
{
	size_t i;

	for (i = 0; i < r->ndisp; i++)
		fd_close(r->disp[i].fd);
	r->ndisp = 0;
}
