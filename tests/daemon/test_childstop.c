/* test_childstop.c: unit tests of daemon/supervisor/childstop.c (a bounded
 * wait for a child's stop that sleeps instead of polling). */
#include <errno.h>
#include <setjmp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "childstop.h"
#include "sandbox_child.h"

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The supervisor's clock (sandbox_fail.c), a link seam here. */
uint64_t
sandbox_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	kill(pid, SIGCONT);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/*
 * A child that cannot stop for ms milliseconds: it waits in vfork() for a
 * grandchild that sleeps that long (a vfork parent waits killable, so
 * SIGSTOP takes effect only when the grandchild exits).
 */
static pid_t
slow_stopper(unsigned ms)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		/* vfork's wait without vfork's shared memory: CLONE_VFORK alone
		 * suspends the parent, killable, until the child exits, and the
		 * child runs on its own copy (nothing of ours it may not touch). */
		pid_t g = (pid_t)syscall(SYS_clone, CLONE_VFORK | SIGCHLD, NULL, NULL, NULL, 0);

		if (g == 0) {
			nanosleep(&ts, NULL);
			_exit(0);
		}
		for (;;)
			pause();
	}
	usleep(50000); /* the child is in its vfork wait */
	return pid;
}

static void
test_stopped_and_ended(void **state)
{
	pid_t pid = fork();
	sigset_t m;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	assert_int_equal(kill(pid, SIGSTOP), 0);
	assert_int_equal(childstop_wait(pid, 2000000000ULL), 0);
	/* Again, already stopped: at once, even with no time at all. */
	assert_int_equal(childstop_wait(pid, 0), 0);
	/* Nothing consumed: the stop is still there for the caller. */
	{
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		assert_int_equal(waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG), 0);
		assert_int_equal(si.si_pid, pid);
		assert_int_equal(si.si_code, CLD_STOPPED);
	}
	reap(pid);

	/* One that ended (a zombie) counts as stopped. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(3);
	assert_int_equal(childstop_wait(pid, 2000000000ULL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);

	/* Not a child of ours. */
	assert_int_equal(childstop_wait(getppid(), 1000000ULL), -ECHILD);
	/* The caller's mask is as it was: SIGCHLD not blocked. */
	assert_int_equal(sigprocmask(SIG_BLOCK, NULL, &m), 0);
	assert_false(sigismember(&m, SIGCHLD));
}

/* A stop that takes 300 ms: the wait returns after it, having slept, not
 * polled (before childstop.c the supervisor's loop spent milliseconds of
 * CPU in waitid and sched_yield over such a wait). */
static void
test_slow_stop_sleeps(void **state)
{
	pid_t pid = slow_stopper(300);
	uint64_t c0, w0, cpu, wall;

	(void)state;
	assert_int_equal(kill(pid, SIGSTOP), 0);
	c0 = cpu_ns();
	w0 = sandbox_now_ns();
	assert_int_equal(childstop_wait(pid, 2000000000ULL), 0);
	cpu = cpu_ns() - c0;
	wall = sandbox_now_ns() - w0;
	assert_true(wall >= 150000000ULL); /* it did wait for the stop */
	assert_true(cpu < 2000000ULL);	   /* asleep: under 2 ms of CPU */
	reap(pid);
}

/* The bound: a child that does not stop within it is -EBUSY, on time. */
static void
test_bound(void **state)
{
	pid_t pid = slow_stopper(1500);
	uint64_t w0, wall;

	(void)state;
	assert_int_equal(kill(pid, SIGSTOP), 0);
	w0 = sandbox_now_ns();
	assert_int_equal(childstop_wait(pid, 100000000ULL), -EBUSY);
	wall = sandbox_now_ns() - w0;
	assert_true(wall >= 100000000ULL && wall < 1000000000ULL);
	reap(pid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stopped_and_ended),
		cmocka_unit_test(test_slow_stop_sleeps),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
