/*
 * zygote_order.c: the zygote's decoder of the spawner's order. The
 * spawner is more trusted than the zygote, but a wrong order must not
 * half-work: everything is checked before anything is kept.
 */
#include "zygote_order.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* How many optional fds the flags name. */
static size_t
zygote_order_optional(uint32_t flags)
{
	size_t n = 0;

	for (; flags != 0; flags &= flags - 1)
		n++;
	return n;
}

int
zygote_order_decode(const void *msg, size_t len, const int *fds, size_t nfds,
		    struct zygote_order *ret, int *ret_landlock_fd, char *cwd, size_t cwd_size)
{
	static const enum zygote_ns ns_of[] = {
		[ZYGOTE_MSG_FD_USER] = ZYGOTE_NS_USER, [ZYGOTE_MSG_FD_MNT] = ZYGOTE_NS_MNT,
		[ZYGOTE_MSG_FD_NET] = ZYGOTE_NS_NET,   [ZYGOTE_MSG_FD_IPC] = ZYGOTE_NS_IPC,
		[ZYGOTE_MSG_FD_UTS] = ZYGOTE_NS_UTS,   [ZYGOTE_MSG_FD_PID] = ZYGOTE_NS_PID,
	};
	struct zygote_msg_order m;
	struct zygote_order o;
	size_t i, k;

	if (msg == NULL || len != sizeof(m) || (fds == NULL && nfds > 0))
		return -EBADMSG;
	memcpy(&m, msg, sizeof(m));
	if (m.magic != ZYGOTE_MSG_MAGIC || (m.flags & ~(uint32_t)ZYGOTE_MSG_F_ALL_) != 0 ||
	    m.pad != 0 || m.nrlimits > ZYGOTE_MSG_RLIMITS || m.nrlimits > ZYGOTE_RLIMITS_MAX ||
	    m.uid == 0 || m.gid == 0)
		return -EBADMSG;
	if (nfds != ZYGOTE_MSG_FDS_FIXED_ + zygote_order_optional(m.flags))
		return -EBADMSG;
	for (i = 0; i < nfds; i++)
		if (fds[i] < 0)
			return -EBADMSG;
	for (i = 0; i < m.nrlimits; i++)
		if (m.rlimit[i].pad != 0 || m.rlimit[i].resource < 0 ||
		    m.rlimit[i].cur > m.rlimit[i].max)
			return -EBADMSG;
	k = strnlen(m.cwd, sizeof(m.cwd));
	if (k == sizeof(m.cwd) || k >= cwd_size || m.cwd[0] != '/')
		return -EBADMSG;

	memset(&o, 0, sizeof(o));
	for (i = 0; i < ZYGOTE_NS_COUNT_; i++)
		o.ns_fd[i] = -1;
	for (i = ZYGOTE_MSG_FD_USER; i <= ZYGOTE_MSG_FD_PID; i++)
		o.ns_fd[ns_of[i]] = fds[i];
	for (i = 0; i < 3; i++)
		o.stdio_fd[i] = fds[ZYGOTE_MSG_FD_STDIN + i];
	o.report_fd = fds[ZYGOTE_MSG_FD_REPORT];
	o.code_fd = fds[ZYGOTE_MSG_FD_CODE];
	o.cgroup_procs_fd = -1;
	*ret_landlock_fd = -1;
	k = ZYGOTE_MSG_FDS_FIXED_;
	if (m.flags & ZYGOTE_MSG_F_CGROUP_NS)
		o.ns_fd[ZYGOTE_NS_CGROUP] = fds[k++];
	if (m.flags & ZYGOTE_MSG_F_CGROUP_PROCS)
		o.cgroup_procs_fd = fds[k++];
	if (m.flags & ZYGOTE_MSG_F_LANDLOCK)
		*ret_landlock_fd = fds[k++];
	o.uid = m.uid;
	o.gid = m.gid;
	memcpy(cwd, m.cwd, strnlen(m.cwd, sizeof(m.cwd)) + 1);
	o.cwd = cwd;
	o.nrlimits = m.nrlimits;
	for (i = 0; i < m.nrlimits; i++) {
		o.rlimit_res[i] = m.rlimit[i].resource;
		o.rlimit[i].rlim_cur = (rlim_t)m.rlimit[i].cur;
		o.rlimit[i].rlim_max = (rlim_t)m.rlimit[i].max;
	}
	*ret = o;
	return 0;
}
