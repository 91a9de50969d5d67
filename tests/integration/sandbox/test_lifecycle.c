/*
 * test_lifecycle.c: a run ends with its main process and leaves nothing
 * behind (fork bombs, background and daemonized processes), and a client
 * that goes away mid-run gets its run killed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sbx.h"

static int
setup(void **state)
{
	static struct sbx s;

	if (sbx_start(&s, NULL) < 0)
		return -1;
	*state = &s;
	return 0;
}

static int
teardown(void **state)
{
	return sbx_stop(*state) == 0 ? 0 : -1;
}

static int
count_procs(const struct sbx *s)
{
	return fixture_count_uid_procs(s->uid_base, s->uid_base + s->uid_count - 1);
}

/* A background sleep outlives neither the run nor its result: the run ends
 * when the main process exits, and nothing is left. */
static void
test_background_sleep(void **state)
{
	struct sbx *s = *state;
	struct airlock_run_req *req = sbx_req("sh", "sleep 1000 &\necho started\n");
	struct airlock_result *res;
	uint64_t t0 = sbx_now_ms();
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 60000);
	res = sbx_run(s, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "started\n");
	assert_true(sbx_now_ms() - t0 < 20000);
	assert_int_equal(sbx_leftover(s, 2000), 0);
	free(out);
	airlock_result_free(res);
}

/* A process that daemonizes (double fork, setsid, ignores SIGTERM and
 * SIGHUP, closes its output) is gone too. */
static void
test_daemonized_escapee(void **state)
{
	struct sbx *s = *state;
	struct airlock_run_req *req =
		sbx_req("python", "import os, signal, time\n"
				  "if os.fork() == 0:\n"
				  "    os.setsid()\n"
				  "    if os.fork() == 0:\n"
				  "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
				  "        signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
				  "        os.close(1); os.close(2)\n"
				  "        time.sleep(1000)\n"
				  "    os._exit(0)\n"
				  "os.wait()\n"
				  "print('parent done')\n");
	struct airlock_result *res;
	uint64_t t0 = sbx_now_ms();
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 60000);
	res = sbx_run(s, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "parent done\n");
	assert_true(sbx_now_ms() - t0 < 20000);
	assert_int_equal(sbx_leftover(s, 2000), 0);
	free(out);
	airlock_result_free(res);
}

/* A fork bomb whose main process exits at once: the bomb dies with it. */
static void
test_fork_bomb_leaves_nothing(void **state)
{
	struct sbx *s = *state;
	struct airlock_run_req *req =
		sbx_req("sh", "bomb() { bomb | bomb & }\nbomb\nsleep 0.5\necho bombed\n");
	struct airlock_result *res;
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_PROCESSES, 10);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 2000);
	res = sbx_run(s, req);
	out = sbx_stdout(res);
	/* Whether the main shell could still fork sleep is up to the bomb;
	 * the run ends either at its exit or at the wall limit. */
	assert_true(airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED ||
		    airlock_result_outcome(res) == AIRLOCK_OUTCOME_WALL_LIMIT);
	assert_int_equal(sbx_leftover(s, 2000), 0);
	free(out);
	airlock_result_free(res);
}

/* Wait up to timeout_ms for at least min processes in s's range; the last count. */
static int
wait_procs_at_least(const struct sbx *s, int min, int timeout_ms)
{
	uint64_t end = sbx_now_ms() + (uint64_t)timeout_ms;
	int n;

	while ((n = count_procs(s)) < min && sbx_now_ms() < end) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		nanosleep(&ts, NULL);
	}
	return n;
}

/* Wait up to timeout_ms for at least one process in s's range. */
static int
wait_procs_appear(const struct sbx *s, int timeout_ms)
{
	return wait_procs_at_least(s, 1, timeout_ms);
}

/* A client that disconnects mid-run gets its run killed; the daemon goes
 * on serving others. */
static void
test_disconnect_kills_run(void **state)
{
	struct sbx *s = *state;
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = sbx_req("sh", "sleep 30 & sleep 30\n");
	struct airlock_result *res;
	uint32_t id = 0;
	uint64_t t0;

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 60000);
	assert_int_equal(airlock_connect(s->f.sock, &conn), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id), 0);
	airlock_run_req_free(req);
	/* The run really is running: its processes exist, both sleeps. */
	assert_true(wait_procs_appear(s, 10000) > 0);
	assert_true(wait_procs_at_least(s, 2, 10000) >= 2);
	t0 = sbx_now_ms();
	airlock_conn_free(conn);
	assert_int_equal(sbx_leftover(s, 5000), 0);
	assert_true(sbx_now_ms() - t0 < 5000);
	assert_true(fixture_alive(&s->f));
	res = sbx_run(s, sbx_req("sh", "echo next\n"));
	sbx_assert_ok(res);
	airlock_result_free(res);
}

/* Abandoning one of two runs on a connection by disconnecting a second
 * connection does not touch the first connection's run. */
static void
test_disconnect_spares_others(void **state)
{
	struct sbx *s = *state;
	struct airlock_conn *other = NULL;
	struct airlock_run_req *slow = sbx_req("sh", "sleep 30\n");
	struct airlock_run_req *mine = sbx_req("sh", "sleep 1; echo mine\n");
	struct airlock_result *res = NULL;
	uint32_t id_other = 0, id_mine = 0, got = 0;
	char *out;

	sbx_limit(slow, AIRLOCK_LIMIT_WALL_MS, 60000);
	assert_int_equal(airlock_connect(s->f.sock, &other), 0);
	assert_int_equal(airlock_run_submit(other, slow, &id_other), 0);
	assert_int_equal(airlock_run_submit(s->conn, mine, &id_mine), 0);
	assert_true(wait_procs_appear(s, 10000) > 0);
	airlock_conn_free(other);
	/* Our own run completes normally. */
	for (;;) {
		int r = airlock_conn_next_result(s->conn, &got, &res);

		if (r == 0)
			break;
		assert_int_equal(r, -EAGAIN);
		assert_int_equal(airlock_ping(s->conn), 0); /* reads and queues */
		{
			struct timespec ts = {0, 50 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	assert_int_equal(got, id_mine);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "mine\n");
	assert_int_equal(sbx_leftover(s, 5000), 0);
	free(out);
	airlock_result_free(res);
	airlock_run_req_free(slow);
	airlock_run_req_free(mine);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_background_sleep),
		cmocka_unit_test(test_daemonized_escapee),
		cmocka_unit_test(test_fork_bomb_leaves_nothing),
		cmocka_unit_test(test_disconnect_kills_run),
		cmocka_unit_test(test_disconnect_spares_others),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
