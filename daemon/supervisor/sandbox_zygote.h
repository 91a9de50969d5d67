/*
 * sandbox_zygote.h: a supervisor's part in a zygote run
 * (docs/design-bursts.md §3.3): it gives its own namespaces for the order
 * and adopts the code the zygote's grandchild became.
 */
#ifndef AIRLOCKD_SANDBOX_ZYGOTE_H
#define AIRLOCKD_SANDBOX_ZYGOTE_H

#include <sys/types.h>

struct sb_run;

/* Namespaces in ipc/zygote_msg.h's fd order. */
#define SANDBOX_ZYGOTE_NS 6

/*
 * Open this process's own user, mnt, net, ipc, uts and pid namespaces
 * (close-on-exec), for the spawner to put in a zygote's order. Returns 0
 * or -errno (none left open).
 */
int sandbox_zygote_ns(int ret_fds[SANDBOX_ZYGOTE_NS]);

/*
 * Read the zygote child's report (struct zygote_report) on rd, waiting at
 * most timeout_ms. Ready: the code's pid must be our child (its parent in
 * /proc/PID/stat is us), and a pidfd of it comes back in *ret_pidfd, its
 * pid in *ret_pid. A failed step comes back as its -errno with the step in
 * *ret_step (-1 when the report itself was wrong: -EPROTO; EOF: -EPIPE;
 * no report in time: -ETIMEDOUT).
 */
int sandbox_zygote_adopt(int rd, int timeout_ms, int *ret_pidfd, pid_t *ret_pid, int *ret_step);

/*
 * A SPAWN_F_ZYGOTE_RUN run's code, after phase two (docs/design-bursts.md
 * §3.5): the order (our namespaces, the code's cgroup, stdin, r's output
 * pipes, a report pipe, the code memfd, uid, gid, rlimits, cwd) sent
 * without blocking on r->ctx.zygote_fd (closed, set to -1, whatever comes),
 * then the code adopted. 0: it entered, r->pid and r->pidfd are it; the
 * output pipes are still ours to close. Else -errno of why it did not
 * (-EOPNOTSUPP: a plan a zygote cannot serve; the order's -EAGAIN,
 * -EPIPE; the report's, sandbox_zygote_adopt): nothing of the code runs
 * any more (emptied, every other process of ours killed), and the caller
 * runs it the ordinary way.
 */
int sandbox_zygote_run(struct sb_run *r);

#endif
