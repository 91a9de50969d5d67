/*
 * airlockd-nostop, for the benchmark only (never installed, never run as a
 * test): airlockd's own objects linked with -Wl,--wrap=kill and
 * -Wl,--wrap=childstop_wait, so that the
 * supervisor's SIGSTOP and SIGCONT of an interpreter between cells
 * (sb_supervise_cells in daemon/supervisor/sandbox.c, the daemon's only senders of
 * either signal) are never sent. bench.py --base-airlockd runs cells through
 * it and through airlockd, alternating: what the stop costs a cell
 * (docs/performance.md). Without the stop a thread a cell left runs between
 * cells, uncounted: such a daemon is never to be shipped (docs/security.md).
 */
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

int __real_kill(pid_t pid, int sig);
int __wrap_kill(pid_t pid, int sig);
int __wrap_childstop_wait(pid_t pid, uint64_t max_ns);

/* kill(2), except that SIGSTOP and SIGCONT succeed without being sent. */
int
__wrap_kill(pid_t pid, int sig)
{
	if (sig == SIGSTOP || sig == SIGCONT)
		return 0;
	return __real_kill(pid, sig);
}

/* childstop_wait(), for an interpreter never stopped: it answers as if the
 * stop had come (the supervisor waits for it at a cell's end since issue
 * 33; without this wrap every cell of airlockd-nostop waited the 2 s bound
 * and ended its interpreter). */
int
__wrap_childstop_wait(pid_t pid, uint64_t max_ns)
{
	(void)pid;
	(void)max_ns;
	return 0;
}
