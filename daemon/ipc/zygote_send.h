/*
 * zygote_send.h: one run's order to a zygote, encoded and sent
 * (docs/design-bursts.md §3.5; the format: zygote_msg.h).
 */
#ifndef AIRLOCKD_ZYGOTE_SEND_H
#define AIRLOCKD_ZYGOTE_SEND_H

#include <stdint.h>
#include <sys/resource.h>

/* One run's order (ipc/zygote_msg.h); every fd stays the caller's. */
struct zygote_send_run {
	int ns_fd[6];	     /* the supervisor's own user, mnt, net, ipc, uts, pid */
	int cgroup_procs_fd; /* the code cgroup's cgroup.procs; -1: none */
	int landlock_fd;     /* a Landlock ruleset; -1: none */
	int stdio_fd[3];     /* the code's stdin, stdout, stderr */
	int report_fd;	     /* the report pipe's write end (the supervisor's) */
	int code_fd;	     /* the code, a sealed memfd */
	uint32_t uid, gid;   /* the code's, in the run's namespace: not 0 */
	const char *cwd;     /* absolute, shorter than ZYGOTE_MSG_CWD_MAX */
	unsigned nrlimits;   /* at most ZYGOTE_MSG_RLIMITS */
	const int *rlimit_res;
	const struct rlimit *rlimit;
};

/*
 * Send run's order on sock, a copy of the spawner's end of a zygote's
 * order socket (non-blocking: a zygote that does not read costs -EAGAIN
 * and the run goes the ordinary way, not a wait). The fds stay the
 * caller's. Returns 0, -EINVAL for an order the zygote would refuse
 * (checked here first), or fdpass_send's -errno (-EAGAIN, -EPIPE...).
 */
int zygote_order_send(int sock, const struct zygote_send_run *run);

#endif
