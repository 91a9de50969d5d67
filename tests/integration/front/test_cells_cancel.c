/*
 * test_cells_cancel.c: cancelling a cell interrupts it and keeps the
 * interpreter's state (issue 30, point 1; docs/design-interpreters.md §2.7),
 * through the real daemon and libairlock.
 *
 * - By request id (airlock_cancel) and by the run id ps shows
 *   (airlock_cancel_run): the cell gets KeyboardInterrupt, is answered
 *   `cancelled` with state `kept`, and the next cell sees the variables the
 *   cells before it left; a cell queued behind the cancelled one then runs.
 * - A queued cell cancelled is answered `cancelled` at once, unrun.
 * - A cell that ignores SIGINT is killed with its interpreter after the
 *   grace: `cancelled`, state `lost`, an advisory saying so; the next cell
 *   runs in a new interpreter.
 * - Bad input: a cell that already ended, an idle interpreter, another
 *   user's cell, a closed session's: not_found, and nothing changes.
 *
 * A daemon per test. Prints the cancel latency (cancel sent -> `cancelled` answer). Every
 * failure prints the daemon's log.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

#define CFG                                                                                        \
	"[daemon]\nsocket_mode = 0666\n[access]\nallow_users = 0, 65534\n"                         \
	"[sandbox]\nuid_base = 1640000\nuid_count = 64\n"

/* How long a cell's start, or an answer, may take on a loaded machine. */
#define WAIT_MS 30000
/* The daemon's grace after a cell's SIGINT (cells.h CELLS_GRACE_MS). */
#define GRACE_MS 2000

/* A cell that marks its start in the workspace, then waits for ever. */
#define LOOP_CELL "import time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.01)\n"
/* ... and one that ignores SIGINT first. */
#define DEAF_CELL                                                                                  \
	"import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"                      \
	"open('started', 'w').close()\nwhile True:\n    time.sleep(0.01)\n"

static struct fixture fx;

#define CHECK(cond, ...) FRONT_CHECK(fx.log, cond, __VA_ARGS__)

static struct airlock_conn *
cc_connect(void)
{
	struct airlock_conn *c = NULL;

	CHECK(airlock_connect(fx.sock, &c) == 0, "connect");
	return c;
}

/* Open an interpreter session into id. */
static void
cc_open(struct airlock_conn *c, char *id)
{
	struct airlock_session_opts *o = NULL;

	CHECK(airlock_session_opts_new(&o) == 0, "opts");
	CHECK(airlock_session_opts_set_interpreter(o, "python") == 0, "interpreter");
	CHECK(airlock_session_open(c, o, id) == 0, "session open");
	airlock_session_opts_free(o);
}

/* Submit code as a cell of session id; its request id. */
static uint32_t
cc_submit(struct airlock_conn *c, const char *id, const char *code)
{
	struct airlock_run_req *req = NULL;
	uint32_t rid = 0;

	CHECK(airlock_run_req_new(&req) == 0, "req");
	CHECK(airlock_run_req_set_runtime(req, "python") == 0, "runtime");
	CHECK(airlock_run_req_set_code(req, code, strlen(code)) == 0, "code");
	CHECK(airlock_run_req_set_session(req, id) == 0, "session");
	CHECK(airlock_run_req_set_cell(req, true) == 0, "cell");
	CHECK(airlock_run_submit(c, req, &rid) == 0, "submit");
	airlock_run_req_free(req);
	return rid;
}

/* The next result on c, which must be request rid's. */
static struct airlock_result *
cc_result(struct airlock_conn *c, uint32_t rid)
{
	struct airlock_result *res = NULL;
	uint32_t got = 0;
	uint64_t end = front_now_ms() + WAIT_MS;
	int rc;

	while ((rc = airlock_conn_next_result(c, &got, &res)) == -EAGAIN && front_now_ms() < end) {
		struct pollfd p = {.fd = airlock_conn_fd(c), .events = POLLIN};

		if (poll(&p, 1, (int)(end - front_now_ms())) > 0 && airlock_conn_process(c) < 0)
			break;
	}
	CHECK(rc == 0, "result of request %u: %s", rid, strerror(-rc));
	CHECK(got == rid, "a result of request %u, not %u", got, rid);
	return res;
}

/* Run code as a cell and return its result. */
static struct airlock_result *
cc_cell(struct airlock_conn *c, const char *id, const char *code)
{
	return cc_result(c, cc_submit(c, id, code));
}

/* The cell's value must be want (and it exited, state kept unless lost). */
static void
cc_expect_value(struct airlock_conn *c, const char *id, const char *code, const char *want)
{
	struct airlock_result *res = cc_cell(c, id, code);
	const char *v = airlock_result_value(res);

	CHECK(airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED && v != NULL &&
		      strcmp(v, want) == 0,
	      "cell '%s': outcome %d, value %s (want %s)", code, (int)airlock_result_outcome(res),
	      v != NULL ? v : "(none)", want);
	airlock_result_free(res);
}

/* Wait until the cell running in session id has made its 'started' file
 * (then removed, for the next one). */
static void
cc_wait_started(struct airlock_conn *c, const char *id)
{
	uint64_t end = front_now_ms() + WAIT_MS;

	for (;;) {
		struct airlock_file *f = NULL;
		int rc = airlock_file_read(c, id, "started", &f);

		airlock_file_free(f);
		if (rc == 0)
			break;
		CHECK(front_now_ms() < end, "the cell did not start within %d ms: %s", WAIT_MS,
		      strerror(-rc));
		front_sleep_ms(5);
	}
	CHECK(airlock_file_delete(c, id, "started") == 0, "delete started");
}

/* The result must be a cancelled cell, in state want; its stderr has
 * KeyboardInterrupt when interrupted. */
static void
cc_expect_cancelled(struct airlock_result *res, enum airlock_cell_state want, bool interrupted)
{
	const void *err = NULL;
	size_t len = 0;

	CHECK(airlock_result_outcome(res) == AIRLOCK_OUTCOME_CANCELLED,
	      "outcome %d, not cancelled (%s)", (int)airlock_result_outcome(res),
	      airlock_result_error(res) != NULL ? airlock_result_error(res) : "");
	CHECK(airlock_result_state(res) == want, "state %d, not %d", (int)airlock_result_state(res),
	      (int)want);
	airlock_result_stderr(res, &err, &len);
	if (interrupted)
		CHECK(err != NULL && memmem(err, len, "KeyboardInterrupt", 17) != NULL,
		      "no KeyboardInterrupt on stderr: '%.*s'", (int)len, (const char *)err);
}

/* The run id ps shows for the caller's interpreter (its only run). */
static uint32_t
cc_ps_run(struct airlock_conn *c)
{
	struct airlock_ps *ps = NULL;
	uint32_t id;

	CHECK(airlock_ps(c, &ps) == 0, "ps");
	CHECK(airlock_ps_count(ps) == 1, "ps: %zu runs, not 1", airlock_ps_count(ps));
	id = airlock_ps_run_id(ps, 0);
	airlock_ps_free(ps);
	return id;
}

static int
setup(void **state)
{
	(void)state;
	CHECK(fixture_start(&fx, CFG) == 0, "the daemon did not start");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	fixture_stop(&fx);
	return 0;
}

/*
 * airlock_cancel by request id: KeyboardInterrupt, cancelled, kept; x is
 * still there; a cell queued behind it runs. Before issue 30: not_found,
 * and the cell ran to its wall limit.
 */
static void
test_cancel_by_request_keeps_state(void **state)
{
	struct airlock_conn *c = cc_connect();
	struct airlock_result *res;
	char id[40];
	uint32_t loop, next;
	uint64_t t0, ms;
	int rc;

	(void)state;
	cc_open(c, id);
	cc_expect_value(c, id, "x = 41\nx", "41");
	loop = cc_submit(c, id, LOOP_CELL);
	next = cc_submit(c, id, "x + 1");
	cc_wait_started(c, id);
	t0 = front_now_ms();
	rc = airlock_cancel(c, loop);
	CHECK(rc == 0, "cancel request %u: %s", loop, strerror(-rc));
	res = cc_result(c, loop);
	ms = front_now_ms() - t0;
	cc_expect_cancelled(res, AIRLOCK_CELL_KEPT, true);
	airlock_result_free(res);
	CHECK(ms < GRACE_MS, "the cancelled answer took %llu ms", (unsigned long long)ms);
	print_message("cancel by request -> cancelled: %llu ms\n", (unsigned long long)ms);
	/* The cell queued behind it ran, with the state kept. */
	res = cc_result(c, next);
	CHECK(airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
		      airlock_result_value(res) != NULL &&
		      strcmp(airlock_result_value(res), "42") == 0 &&
		      airlock_result_state(res) == AIRLOCK_CELL_KEPT,
	      "the cell behind: outcome %d value %s", (int)airlock_result_outcome(res),
	      airlock_result_value(res) ? airlock_result_value(res) : "(none)");
	airlock_result_free(res);
	/* Bad input: the cell has ended; cancelling it again changes nothing. */
	rc = airlock_cancel(c, loop);
	CHECK(rc == -ENOENT, "cancel of an ended cell: %d", rc);
	cc_expect_value(c, id, "x", "41");
	CHECK(airlock_session_close(c, id) == 0, "close");
	airlock_conn_free(c);
}

/* airlock_cancel_run with the id ps shows (what `airlock cancel ID` sends):
 * the same; an idle interpreter's run id is not_found, nothing killed. */
static void
test_cancel_by_ps_run_id(void **state)
{
	struct airlock_conn *c = cc_connect(), *other = cc_connect();
	struct airlock_result *res;
	char id[40];
	uint32_t loop, run;
	int rc;

	(void)state;
	cc_open(c, id);
	cc_expect_value(c, id, "y = 'kept'\ny", "'kept'");
	run = cc_ps_run(c);
	/* Idle: no cell to cancel; the interpreter is not touched. */
	rc = airlock_cancel_run(c, run);
	CHECK(rc == -ENOENT, "cancel of an idle interpreter: %d", rc);
	cc_expect_value(c, id, "y", "'kept'");
	loop = cc_submit(c, id, LOOP_CELL);
	cc_wait_started(c, id);
	/* From another connection, as `airlock cancel ID` does. */
	rc = airlock_cancel_run(other, run);
	CHECK(rc == 0, "cancel run %u: %s", run, strerror(-rc));
	res = cc_result(c, loop);
	cc_expect_cancelled(res, AIRLOCK_CELL_KEPT, true);
	airlock_result_free(res);
	cc_expect_value(c, id, "y", "'kept'");
	/* Bad input: a closed session's interpreter. */
	CHECK(airlock_session_close(c, id) == 0, "close");
	rc = airlock_cancel_run(c, run);
	CHECK(rc == -ENOENT, "cancel of a closed session's interpreter: %d", rc);
	airlock_conn_free(other);
	airlock_conn_free(c);
}

/* A queued cell cancelled is answered cancelled at once, unrun, and the
 * running one goes on. */
static void
test_cancel_queued_cell(void **state)
{
	struct airlock_conn *c = cc_connect();
	struct airlock_result *res;
	char id[40];
	uint32_t loop, queued;
	int rc;

	(void)state;
	cc_open(c, id);
	cc_expect_value(c, id, "z = 7\nz", "7");
	loop = cc_submit(c, id, LOOP_CELL);
	queued = cc_submit(c, id, "z = 0\nz");
	cc_wait_started(c, id);
	rc = airlock_cancel(c, queued);
	CHECK(rc == 0, "cancel a queued cell: %s", strerror(-rc));
	res = cc_result(c, queued);
	cc_expect_cancelled(res, AIRLOCK_CELL_KEPT, false);
	airlock_result_free(res);
	rc = airlock_cancel(c, loop);
	CHECK(rc == 0, "cancel the running cell: %s", strerror(-rc));
	res = cc_result(c, loop);
	cc_expect_cancelled(res, AIRLOCK_CELL_KEPT, true);
	airlock_result_free(res);
	/* The queued cell never ran: z is still 7. */
	cc_expect_value(c, id, "z", "7");
	CHECK(airlock_session_close(c, id) == 0, "close");
	airlock_conn_free(c);
}

/* A cell that ignores SIGINT: killed with its interpreter after the grace;
 * cancelled, lost, and an advisory says the state was lost. */
static void
test_cancel_deaf_cell_loses_state(void **state)
{
	struct airlock_conn *c = cc_connect();
	struct airlock_result *res;
	char id[40];
	uint32_t deaf;
	uint64_t t0, ms;
	size_t i, n;
	bool said = false;
	int rc;

	(void)state;
	cc_open(c, id);
	cc_expect_value(c, id, "w = 1\nw", "1");
	deaf = cc_submit(c, id, DEAF_CELL);
	cc_wait_started(c, id);
	t0 = front_now_ms();
	rc = airlock_cancel(c, deaf);
	CHECK(rc == 0, "cancel: %s", strerror(-rc));
	res = cc_result(c, deaf);
	ms = front_now_ms() - t0;
	cc_expect_cancelled(res, AIRLOCK_CELL_LOST, false);
	n = airlock_result_advisory_count(res);
	for (i = 0; i < n; i++)
		if (strstr(airlock_result_advisory(res, i), "state was lost") != NULL)
			said = true;
	CHECK(said, "no advisory says the state was lost (%zu advisories)", n);
	airlock_result_free(res);
	CHECK(ms >= GRACE_MS - 100, "answered after %llu ms, before the grace",
	      (unsigned long long)ms);
	/* A new interpreter: w is gone, cells work. */
	res = cc_cell(c, id, "'w' in globals()");
	CHECK(airlock_result_value(res) != NULL && strcmp(airlock_result_value(res), "False") == 0,
	      "after the loss: value %s",
	      airlock_result_value(res) ? airlock_result_value(res) : "(none)");
	airlock_result_free(res);
	CHECK(airlock_session_close(c, id) == 0, "close");
	airlock_conn_free(c);
}

/* The session's first cell, whose request started the interpreter (the
 * daemon finds its run by that request id): interrupted too, and the
 * interpreter lives on; a second cancel of it is not_found. */
static void
test_cancel_first_cell(void **state)
{
	struct airlock_conn *c = cc_connect();
	struct airlock_result *res;
	char id[40];
	uint32_t loop;
	int rc;

	(void)state;
	cc_open(c, id);
	loop = cc_submit(c, id, "u = 5\n" LOOP_CELL);
	cc_wait_started(c, id);
	rc = airlock_cancel(c, loop);
	CHECK(rc == 0, "cancel the first cell: %s", strerror(-rc));
	res = cc_result(c, loop);
	cc_expect_cancelled(res, AIRLOCK_CELL_KEPT, true);
	airlock_result_free(res);
	rc = airlock_cancel(c, loop);
	CHECK(rc == -ENOENT, "cancel of the first cell again: %d", rc);
	cc_expect_value(c, id, "u", "5");
	CHECK(airlock_session_close(c, id) == 0, "close");
	airlock_conn_free(c);
}

/* What another user sees when cancelling our interpreter's run id. */
static void
other_cancel(void *arg, void *buf)
{
	struct airlock_conn *c = NULL;
	int rc = airlock_connect(fx.sock, &c);

	if (rc == 0)
		rc = airlock_cancel_run(c, *(uint32_t *)arg);
	airlock_conn_free(c);
	memcpy(buf, &rc, sizeof(rc));
}

/* Another uid's cell is not_found (exactly as one that never was), and it
 * runs on. */
static void
test_cancel_other_users_cell(void **state)
{
	struct airlock_conn *c = cc_connect();
	struct airlock_result *res;
	char id[40];
	uint32_t loop, run;
	int rc, orc = 0;

	(void)state;
	cc_open(c, id);
	cc_expect_value(c, id, "v = 3\nv", "3");
	run = cc_ps_run(c);
	loop = cc_submit(c, id, LOOP_CELL);
	cc_wait_started(c, id);
	rc = front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, other_cancel, &run, &orc,
			   sizeof(orc));
	CHECK(rc == 0, "as nobody: %s", strerror(-rc));
	CHECK(orc == -ENOENT, "nobody cancelling root's cell: %d", orc);
	/* Still running: our own cancel finds it. */
	rc = airlock_cancel(c, loop);
	CHECK(rc == 0, "cancel after the other's try: %s", strerror(-rc));
	res = cc_result(c, loop);
	cc_expect_cancelled(res, AIRLOCK_CELL_KEPT, true);
	airlock_result_free(res);
	cc_expect_value(c, id, "v", "3");
	CHECK(airlock_session_close(c, id) == 0, "close");
	airlock_conn_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cancel_by_request_keeps_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel_by_ps_run_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_queued_cell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_deaf_cell_loses_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_first_cell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_other_users_cell, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
