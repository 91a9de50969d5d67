/*
 * childstop.c: wait, bounded and without spinning, for a child to stop.
 *
 * At a cell's end the supervisor stops the interpreter (SIGSTOP) and must
 * see the group stop complete before it walks /proc for what the cell
 * left (sandbox_cells.c). The stop is completed by the interpreter itself,
 * once it is scheduled: the supervisor polled waitid() between yields and
 * 20 us sleeps, and on two loaded cores that loop took a core from the
 * very process it waited for (strace of a cell: about a hundred
 * waitid/sched_yield pairs per cell; issue 33). The kernel tells the
 * parent of the stop with SIGCHLD (CLD_STOPPED; the supervisor has no
 * SA_NOCLDSTOP handler), so the wait sleeps in sigtimedwait() until that
 * signal or the bound, and probes the state after each wake-up. A SIGCHLD
 * left pending by another child only costs one more probe.
 */
#include "childstop.h"
#include "sandbox_child.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

/* 0 if pid is stopped or ended, 1 if not yet, -errno. */
static int
childstop_probe(pid_t pid)
{
	siginfo_t si;

	/* WNOWAIT: a look at the state now, nothing consumed. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT | __WALL) < 0)
		return -errno;
	return si.si_pid != 0 ? 0 : 1;
}

int
childstop_wait(pid_t pid, uint64_t max_ns)
{
	uint64_t end = sandbox_now_ns() + max_ns;
	sigset_t chld, old;
	int r;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* Blocked, so that the stop's SIGCHLD stays pending for
	 * sigtimedwait() instead of being discarded (its default action). */
	if (sigprocmask(SIG_BLOCK, &chld, &old) < 0)
		return -errno;
	for (;;) {
		uint64_t now, left;
		struct timespec ts;

		r = childstop_probe(pid);
		if (r <= 0)
			break;
		now = sandbox_now_ns();
		if (now >= end) {
			r = -EBUSY;
			break;
		}
		left = end - now;
		ts.tv_sec = (time_t)(left / 1000000000ULL);
		ts.tv_nsec = (long)(left % 1000000000ULL);
		if (sigtimedwait(&chld, NULL, &ts) < 0 && errno != EAGAIN && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	if (!sigismember(&old, SIGCHLD))
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}
