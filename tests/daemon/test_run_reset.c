/*
 * test_run_reset.c: unit tests of daemon/frontend/run_reset.c, the one reset of a run
 * that goes back to the queue. What it calls elsewhere in the frontend
 * (run_io_reset, egress_run_close, spawnref_del) are link seams here that
 * count their calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h> /* cmocka.h needs it */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "egress.h"
#include "run.h"

static int io_resets, egress_closes;
static struct egress_run *egress_closed;
static uint32_t keys_deleted[4];
static size_t nkeys_deleted;

void
run_io_reset(struct run *r)
{
	(void)r;
	io_resets++;
}

void
egress_run_close(struct egress_run *er, struct egress_stats *ret)
{
	assert_null(ret);
	egress_closed = er;
	egress_closes++;
}

void
spawnref_del(struct spawnrefs *t, uint32_t key)
{
	(void)t;
	if (nkeys_deleted < 4)
		keys_deleted[nkeys_deleted] = key;
	nkeys_deleted++;
}

static struct daemon d;
static struct run r;

static int
setup(void **state)
{
	(void)state;
	memset(&d, 0, sizeof(d));
	memset(&r, 0, sizeof(r));
	r.d = &d;
	r.run_id = 7;
	r.stat_fd[0] = r.stat_fd[1] = -1;
	r.plan_fd = -1;
	r.lifeline = -1;
	io_resets = egress_closes = 0;
	egress_closed = NULL;
	nkeys_deleted = 0;
	return 0;
}

/* Is fd an open file descriptor? */
static bool
fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

/*
 * A launched run of a pre-started sandbox: its memory fds, key, slot, count
 * among the running (nrunning), start time, proxy and facts.
 */
static void
launched_fill(int nrunning, const int stat_fd[2])
{
	d.nrunning = nrunning;
	r.state = RUN_RUNNING;
	r.stat_fd[0] = stat_fd[0];
	r.stat_fd[1] = stat_fd[1];
	r.prep_key = 41;
	r.slot = 5;
	r.t_start.tv_sec = 12;
	r.egress = (struct egress_run *)&d; /* any non-NULL address: never used */
	r.prestarted = true;
	r.f.setup_failed = true;
	r.f.fail_err = -ENOENT;
}

/*
 * A run that was running in a pre-started sandbox (run_retry_fresh): every
 * trace of that sandbox goes, what the run is stays.
 */
static void
test_launched(void **state)
{
	int p[2], plan;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	plan = dup(p[0]);
	launched_fill(3, p);
	r.prestart_rt = 1;
	r.plan_fd = plan;
	r.plan_bytes = 4096;
	r.f.spawn_done = true;
	r.f.done_ev.memory_peak = 99;
	snprintf(r.f.prep_error, sizeof(r.f.prep_error), "x");

	assert_int_equal(run_reset_for_queue(&r), 0);

	assert_int_equal(io_resets, 1);
	assert_int_equal(egress_closes, 1);
	assert_ptr_equal(egress_closed, &d);
	assert_null(r.egress);
	assert_int_equal(d.nrunning, 2);
	assert_false(fd_open(p[0]));
	assert_false(fd_open(p[1]));
	assert_int_equal(r.stat_fd[0], -1);
	assert_int_equal(r.stat_fd[1], -1);
	assert_int_equal(nkeys_deleted, 1);
	assert_int_equal(keys_deleted[0], 41);
	assert_int_equal(r.prep_key, 0);
	assert_int_equal(r.slot, 0);
	assert_int_equal(r.t_start.tv_sec, 0);
	assert_false(r.prestarted);
	{
		struct run_facts zero;

		memset(&zero, 0, sizeof(zero));
		assert_memory_equal(&r.f, &zero, sizeof(zero));
	}
	/* What the run is stays: its state (the caller's transition), plan,
	 * budget charge and which interpreters it may take (the caller's). */
	assert_int_equal(r.state, RUN_RUNNING);
	assert_int_equal(r.plan_fd, plan);
	assert_true(fd_open(plan));
	assert_int_equal(r.plan_bytes, 4096);
	assert_int_equal(r.prestart_rt, 1);
	close(plan);
}

/* A run still starting (its SPAWN_STARTED never came) is reset the same way;
 * without a key or memory fds nothing is closed or deleted. */
static void
test_starting_without_key(void **state)
{
	(void)state;
	d.nrunning = 1;
	r.state = RUN_STARTING;
	r.f.spawn_failed = true;

	assert_int_equal(run_reset_for_queue(&r), 0);

	assert_int_equal(io_resets, 1);
	assert_int_equal(egress_closes, 1);
	assert_int_equal(d.nrunning, 0);
	assert_int_equal(nkeys_deleted, 0);
	assert_false(r.f.spawn_failed);
}

/* A queued run whose launch found no slot (run_dispatch) holds nothing: its
 * count and its I/O are not touched. */
static void
test_never_launched(void **state)
{
	(void)state;
	d.nrunning = 4;
	r.state = RUN_QUEUED;

	assert_int_equal(run_reset_for_queue(&r), 0);

	assert_int_equal(io_resets, 0);
	assert_int_equal(egress_closes, 0);
	assert_int_equal(d.nrunning, 4);
	assert_int_equal(nkeys_deleted, 0);
	assert_int_equal(r.state, RUN_QUEUED);
}

/* A refused run is as launched_fill(1, stat_fd) left it, in state. */
static void
refused_untouched(const int stat_fd[2], enum run_state state)
{
	assert_int_equal(io_resets, 0);
	assert_int_equal(egress_closes, 0);
	assert_int_equal(nkeys_deleted, 0);
	assert_int_equal(d.nrunning, 1);
	assert_int_equal(r.state, state);
	assert_int_equal(r.stat_fd[0], stat_fd[0]);
	assert_int_equal(r.stat_fd[1], stat_fd[1]);
	assert_true(fd_open(stat_fd[0]));
	assert_true(fd_open(stat_fd[1]));
	assert_int_equal(r.prep_key, 41);
	assert_int_equal(r.slot, 5);
	assert_int_equal(r.t_start.tv_sec, 12);
	assert_non_null(r.egress);
	assert_true(r.prestarted);
	assert_true(r.f.setup_failed);
	assert_int_equal(r.f.fail_err, -ENOENT);
}

/*
 * A session run (launched or still queued) and a launched run with tools
 * never go back: refused with -EINVAL before anything is changed, so that
 * the caller can end that run alone.
 */
static void
test_refused(void **state)
{
	struct run_tools *tools = (struct run_tools *)&d;
	int p[2];

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	launched_fill(1, p);
	r.session = (struct session *)&d;
	assert_int_equal(run_reset_for_queue(&r), -EINVAL);
	refused_untouched(p, RUN_RUNNING);

	r.session = NULL;
	r.tools = tools;
	assert_int_equal(run_reset_for_queue(&r), -EINVAL);
	refused_untouched(p, RUN_RUNNING);

	/* A session run still queued (its launch found no slot) too. */
	r.tools = NULL;
	r.session = (struct session *)&d;
	r.state = RUN_QUEUED;
	assert_int_equal(run_reset_for_queue(&r), -EINVAL);
	refused_untouched(p, RUN_QUEUED);
	r.session = NULL;

	/* Queued with tools (a slot was missing): nothing launched to lose,
	 * so it goes back; its memory fds and key go as any run's. */
	r.tools = tools;
	r.state = RUN_QUEUED;
	assert_int_equal(run_reset_for_queue(&r), 0);
	assert_int_equal(nkeys_deleted, 1);
	assert_int_equal(r.prep_key, 0);
	assert_false(fd_open(p[0]));
	assert_false(fd_open(p[1]));
	assert_int_equal(io_resets, 0);
	assert_int_equal(d.nrunning, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_launched, setup),
		cmocka_unit_test_setup(test_starting_without_key, setup),
		cmocka_unit_test_setup(test_never_launched, setup),
		cmocka_unit_test_setup(test_refused, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
