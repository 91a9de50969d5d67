/*
 * zygote_send.c: one run's order to a zygote (ipc/zygote_msg.h), as a
 * zygote-owned sandbox's supervisor sends it (docs/design-bursts.md §3.5):
 * checked as the zygote's decoder (zygote_order.c) would check it, so that
 * a wrong order is refused here and never half-works there.
 */
#include "zygote_send.h"

#include <errno.h>
#include <string.h>

#include "fdpass.h"
#include "zygote_msg.h"

/* The order's fixed part from run; -EINVAL for what the zygote refuses. */
static int
zygote_send_msg(const struct zygote_send_run *run, struct zygote_msg_order *m)
{
	size_t k;
	unsigned i;

	memset(m, 0, sizeof(*m));
	if (run->uid == 0 || run->gid == 0 || run->nrlimits > ZYGOTE_MSG_RLIMITS ||
	    run->cwd == NULL || run->cwd[0] != '/' ||
	    (run->nrlimits > 0 && (run->rlimit_res == NULL || run->rlimit == NULL)))
		return -EINVAL;
	k = strnlen(run->cwd, sizeof(m->cwd));
	if (k == sizeof(m->cwd))
		return -EINVAL;
	memcpy(m->cwd, run->cwd, k);
	m->magic = ZYGOTE_MSG_MAGIC;
	m->uid = run->uid;
	m->gid = run->gid;
	m->nrlimits = run->nrlimits;
	for (i = 0; i < run->nrlimits; i++) {
		if (run->rlimit_res[i] < 0 || run->rlimit[i].rlim_cur > run->rlimit[i].rlim_max)
			return -EINVAL;
		m->rlimit[i].resource = run->rlimit_res[i];
		m->rlimit[i].cur = (uint64_t)run->rlimit[i].rlim_cur;
		m->rlimit[i].max = (uint64_t)run->rlimit[i].rlim_max;
	}
	return 0;
}

int
zygote_order_send(int sock, const struct zygote_send_run *run)
{
	struct zygote_msg_order m;
	int fds[ZYGOTE_MSG_FDS_MAX];
	size_t n = 0, i;
	int r = zygote_send_msg(run, &m);

	if (r < 0)
		return r;
	/* The fixed fds, in enum zygote_msg_fd's order, then the optional
	 * ones in flag order (what zygote_order.c decodes). */
	for (i = 0; i < 6; i++)
		fds[n++] = run->ns_fd[i];
	for (i = 0; i < 3; i++)
		fds[n++] = run->stdio_fd[i];
	fds[n++] = run->report_fd;
	fds[n++] = run->code_fd;
	if (run->cgroup_procs_fd >= 0) {
		m.flags |= ZYGOTE_MSG_F_CGROUP_PROCS;
		fds[n++] = run->cgroup_procs_fd;
	}
	if (run->landlock_fd >= 0) {
		m.flags |= ZYGOTE_MSG_F_LANDLOCK;
		fds[n++] = run->landlock_fd;
	}
	for (i = 0; i < n; i++)
		if (fds[i] < 0)
			return -EINVAL;
	return fdpass_send(sock, &m, sizeof(m), fds, n);
}
