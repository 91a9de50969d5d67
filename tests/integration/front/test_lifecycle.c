/*
 * test_lifecycle.c: connections come and go without leaking the frontend's
 * descriptors, several runs are in flight on one connection, and SIGTERM stops the daemon cleanly.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

#define CONFIG_STOP "[sandbox]\nuid_base = 720480\n"
#define CONFIG_INFLIGHT "[sandbox]\nuid_base = 724576\n"
#define CONFIG_ORPHAN                                                                              \
	"[sandbox]\nuid_base = 732768\nuid_count = 64\n"                                           \
	"[daemon]\nprepared_sandboxes = 0\n"

/* The frontend's fd count once it held still for 200 ms (the fixture's
 * probe connection may still be on its way out). */
static int
settled_fds(pid_t fe)
{
	int i, same = 0, last = -1;

	for (i = 0; i < 500 && same < 10; i++) {
		int n = front_count_fds(fe);

		same = n == last ? same + 1 : 0;
		last = n;
		front_sleep_ms(20);
	}
	return last;
}

/* Wait up to 5 s for the frontend's fd count to come down to want. */
static int
wait_fds(pid_t fe, int want)
{
	int i, n = -1;

	for (i = 0; i < 500; i++) {
		n = front_count_fds(fe);
		if (n <= want)
			return n;
		front_sleep_ms(10);
	}
	return n;
}

/*
 * 50 connect/disconnect cycles of several kinds leave the frontend with the
 * descriptors it had; then SIGTERM stops the daemon with status 0 and no
 * sandbox process of its uid range is left.
 */
static void
test_no_fd_leak_and_clean_stop(void **state)
{
	struct fixture f;
	pid_t fe;
	int before, during, after, i;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG_STOP), 0);
	fe = front_first_child(f.pid);
	assert_true(fe > 0);
	before = settled_fds(fe);
	assert_true(before > 0);

	/* The counter counts: a connection held open shows up. */
	{
		struct airlock_conn *held = NULL;

		assert_int_equal(airlock_connect(f.sock, &held), 0);
		during = front_count_fds(fe);
		assert_int_equal(during, before + 1);
		airlock_conn_free(held);
	}

	for (i = 0; i < 50; i++) {
		struct airlock_conn *conn = NULL;
		struct airlock_info *info = NULL;
		int fd;

		switch (i % 3) {
		case 0: /* hello, ping, info, close */
			assert_int_equal(airlock_connect(f.sock, &conn), 0);
			assert_int_equal(airlock_ping(conn), 0);
			assert_int_equal(airlock_info(conn, &info), 0);
			airlock_info_free(info);
			airlock_conn_free(conn);
			break;
		case 1: /* connect and hang up without a word */
			fd = front_raw_connect(f.sock);
			assert_true(fd >= 0);
			close(fd);
			break;
		default: /* a bad first message: the daemon closes */
			fd = front_raw_connect(f.sock);
			assert_true(fd >= 0);
			assert_int_equal(front_send_ping(fd, 1), 0);
			assert_int_equal(front_wait_eof(fd, 5000), 0);
			close(fd);
			break;
		}
	}
	after = wait_fds(fe, before);
	assert_int_equal(after, before);
	assert_true(fixture_alive(&f));
	assert_int_equal(fixture_stop(&f), 0);
	/* The frontend went with it, and no sandbox uid holds a process. */
	assert_true(kill(fe, 0) < 0 && errno == ESRCH);
	assert_int_equal(fixture_count_uid_procs(720480, 720480 + 4095), 0);
}

/*
 * Three sh runs submitted at once on one connection; the results come back
 * through poll() + airlock_conn_process(), each under its own id with its
 * own stdout.
 */
static void
test_three_runs_in_flight(void **state)
{
	struct fixture f;
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req[3];
	uint32_t ids[3];
	bool got[3] = {false, false, false};
	int i, n = 0, loops;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG_INFLIGHT), 0);
	assert_int_equal(airlock_connect(f.sock, &conn), 0);
	for (i = 0; i < 3; i++) {
		char code[64];

		/* The first sleeps so the replies are not simply in order. */
		snprintf(code, sizeof(code), "%secho %d\n", i == 0 ? "sleep 0.3; " : "", i + 1);
		assert_int_equal(airlock_run_req_new(&req[i]), 0);
		assert_int_equal(airlock_run_req_set_runtime(req[i], "sh"), 0);
		assert_int_equal(airlock_run_req_set_code(req[i], code, strlen(code)), 0);
		assert_int_equal(airlock_run_submit(conn, req[i], &ids[i]), 0);
		assert_true(ids[i] != 0);
	}
	assert_true(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
	/* Nothing can be complete before anything was read. */
	for (loops = 0; n < 3 && loops < 600; loops++) {
		struct pollfd p = {.fd = airlock_conn_fd(conn), .events = POLLIN};
		struct airlock_result *res;
		uint32_t id;
		int r;

		assert_true(p.fd >= 0);
		r = poll(&p, 1, 100);
		assert_true(r >= 0);
		if (r > 0)
			assert_int_equal(airlock_conn_process(conn), 0);
		while ((r = airlock_conn_next_result(conn, &id, &res)) == 0) {
			const void *out;
			size_t len;
			char want[8];

			for (i = 0; i < 3; i++)
				if (ids[i] == id)
					break;
			if (i == 3) {
				fail_msg("result for unknown id %u", (unsigned)id);
				return; /* not reached: for the analyzer, got[3] */
			}
			assert_false(got[i]);
			got[i] = true;
			n++;
			assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
			assert_int_equal(airlock_result_exit_code(res), 0);
			assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
			snprintf(want, sizeof(want), "%d\n", i + 1);
			assert_int_equal(len, strlen(want));
			assert_memory_equal(out, want, len);
			airlock_result_free(res);
		}
		assert_int_equal(r, -EAGAIN);
	}
	assert_int_equal(n, 3);
	assert_true(got[0] && got[1] && got[2]);
	/* The connection is still fine for a blocking call. */
	assert_int_equal(airlock_ping(conn), 0);
	for (i = 0; i < 3; i++)
		airlock_run_req_free(req[i]);
	airlock_conn_free(conn);
	assert_int_equal(fixture_stop(&f), 0);
}

/* A session run of sleep 20 (the session's runs go one at a time). */
static struct airlock_run_req *
session_sleep(const char *sid)
{
	struct airlock_run_req *req;

	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "exec"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "sleep"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "20"), 0);
	assert_int_equal(airlock_run_req_set_session(req, sid), 0);
	return req;
}

/*
 * A client whose replies cannot be sent is killed while the daemon walks a
 * session's runs to cancel them: one run running, two queued behind it, the
 * client's socket shut for reading (its next send fails), then the session
 * closed. Killing the client must not free the runs under that walk (it did:
 * the frontend died of a double free and the daemon stopped). The daemon
 * keeps serving, and stops at once: the closed session's queued runs were
 * counted out of it, so it was freed and its uid slot returned (they were
 * not: the stop waited out its grace for a session that never went).
 */
static void
test_client_killed_while_its_runs_are_cancelled(void **state)
{
	struct fixture f;
	struct airlock_conn *conn = NULL, *again = NULL;
	struct airlock_run_req *req[3];
	char sid[AIRLOCK_SESSION_ID_LEN + 1], ended[64];
	uint32_t id;
	int i, r, keeper;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG_ORPHAN), 0);
	assert_int_equal(airlock_connect(f.sock, &conn), 0);
	assert_int_equal(airlock_session_open(conn, NULL, sid), 0);
	keeper = fixture_count_uid_procs(732768, 732768 + 63);
	for (i = 0; i < 3; i++) {
		req[i] = session_sleep(sid);
		assert_int_equal(airlock_run_submit(conn, req[i], &id), 0);
	}
	/* Until the first runs (its sandbox beside the keeper); the other two
	 * wait behind it. */
	for (i = 0; i < 1000 && fixture_count_uid_procs(732768, 732768 + 63) <= keeper; i++)
		front_sleep_ms(10);
	assert_true(fixture_count_uid_procs(732768, 732768 + 63) > keeper);
	assert_int_equal(shutdown(airlock_conn_fd(conn), SHUT_RD), 0);
	airlock_conn_set_timeout(conn, 3000);
	r = airlock_session_close(conn, sid);
	print_message("session_close on a connection shut for reading: %d\n", r);
	/* The close has been handled (the session's end is logged): an event
	 * with a deadline, not a fixed wait. Then the daemon still serves. */
	snprintf(ended, sizeof(ended), "session %.8s uid 0: ended (", sid);
	for (i = 0; i < 1000 && !fixture_log_has(&f, ended); i++)
		front_sleep_ms(10);
	if (!fixture_log_has(&f, ended))
		fail_msg("no '%s' in the daemon's log within 10 s", ended);
	assert_int_equal(airlock_connect(f.sock, &again), 0);
	assert_int_equal(airlock_ping(again), 0);
	for (i = 0; i < 3; i++)
		airlock_run_req_free(req[i]);
	airlock_conn_free(again);
	airlock_conn_free(conn);
	assert_int_equal(fixture_stop(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_fd_leak_and_clean_stop),
		cmocka_unit_test(test_three_runs_in_flight),
		cmocka_unit_test(test_client_killed_while_its_runs_are_cancelled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
