/*
 * test_slots.c: run slots are for work being done (issue 28, point 1).
 *
 * - Two users with two idle interpreter sessions each (one cell run in
 *   each) on a daemon of 4 run slots, 2 per user: a third user's one-shot
 *   run is answered at once. Before, each interpreter held a run slot for
 *   its session's whole life, and the run stayed queued for ever.
 * - A cell still takes a run slot while it runs: with one slot, a cell and
 *   a one-shot run of two users both finish, and the cells of an
 *   interpreter that was idle while the run held the slot go on.
 * - The interpreter caps (max_interpreters, max_interpreters_per_uid)
 *   refuse an interpreter session past them with busy and the key's name;
 *   a session without an interpreter is not refused; a closed interpreter
 *   session makes room.
 * - info_ok (libairlock airlock_info_capacity, `airlock info`) shows the
 *   four figures.
 *
 * Every failure prints the daemon's log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stddef.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

/* Three unprivileged users; each daemon its own uid range (uid-ranges). */
#define UID_A 65534
#define UID_B 65533
#define UID_C 65532
#define CFG_ACCESS "[access]\nallow_users = 65534, 65533, 65532\n"
#define CFG_IDLE                                                                                   \
	"[daemon]\nsocket_mode = 0666\nmax_runs = 4\nmax_runs_per_uid = 2\n" CFG_ACCESS            \
	"[sessions]\norphan_grace_ms = 600000\n[sandbox]\nuid_base = 1600000\nuid_count = 64\n"
#define CFG_ONE                                                                                    \
	"[daemon]\nsocket_mode = 0666\nmax_runs = 1\n" CFG_ACCESS                                  \
	"[sessions]\norphan_grace_ms = 600000\n[sandbox]\nuid_base = 1600064\nuid_count = 64\n"
#define CFG_CAPS                                                                                   \
	"[daemon]\nsocket_mode = 0666\nmax_runs = 3\n" CFG_ACCESS                                  \
	"[sessions]\nmax_interpreters = 3\nmax_interpreters_per_uid = 2\n"                         \
	"orphan_grace_ms = 600000\n[sandbox]\nuid_base = 1600128\nuid_count = 64\n"

/* How long a run that should not wait may take (a loaded 2-core machine
 * starts a sandbox in well under a second; an idle daemon's queue never
 * moves at all, so any bound tells the two apart). */
#define PROMPT_MS 20000
/* How long the run that holds the only slot lasts, in the cell-waits test:
 * the time the test has to send a cell behind it (about 10 ms here). */
#define SLOW_S "3"

static struct fixture fx;

#define CHECK(cond, ...) FRONT_CHECK(fx.log, cond, __VA_ARGS__)

/* What a child acting as one user sends back (front_as_user). */
struct user_out {
	int rc;		    /* 0, or the -errno of the step that failed */
	char step[64];	    /* which step */
	char code[32];	    /* the daemon's error code, if one */
	char msg[256];	    /* its message */
	char out[64];	    /* a run's stdout */
	uint64_t ms;	    /* how long the run took, request to answer */
	uint64_t start_ms;  /* CLOCK_MONOTONIC when the last request went */
	uint64_t end_ms;    /* ... and when its answer came */
	uint64_t queued_ms; /* the last cell's result.queued_ms */
	char ids[4][40];    /* sessions opened */
};

/* What the child does: sock, and how many interpreter sessions to open
 * (running one cell in each), or 0 for one `echo hi` run. */
struct user_in {
	const char *sock;
	const char *close_id; /* first close this session */
	const char *cell_id;  /* run a cell in this session */
	int interps;
	bool plain_session; /* also open one session without an interpreter */
	bool echo;	    /* run `echo hi` */
	bool slow;	    /* ... after sleeping SLOW_S seconds */
};

static void
user_err(struct user_out *o, struct airlock_conn *c, const char *step, int rc)
{
	const char *code = NULL, *msg = NULL;

	o->rc = rc < 0 ? rc : -EPROTO;
	snprintf(o->step, sizeof(o->step), "%s", step);
	if (c != NULL && airlock_conn_last_error(c, &code, &msg) == 0) {
		snprintf(o->code, sizeof(o->code), "%s", code != NULL ? code : "");
		snprintf(o->msg, sizeof(o->msg), "%s", msg != NULL ? msg : "");
	}
}

/* One cell in session id whose value must be 42 ("x = 6 * 7\nx", or "x"
 * in an interpreter that must have kept x): 0, or -errno into o. */
static int
user_cell(struct airlock_conn *c, const char *id, const char *code, struct user_out *o)
{
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	const char *v;
	uint64_t t0;
	int rc;

	rc = airlock_run_req_new(&req);
	if (rc == 0)
		rc = airlock_run_req_set_runtime(req, "python");
	if (rc == 0)
		rc = airlock_run_req_set_code(req, code, strlen(code));
	if (rc == 0)
		rc = airlock_run_req_set_session(req, id);
	if (rc == 0)
		rc = airlock_run_req_set_cell(req, true);
	t0 = o->start_ms = front_now_ms();
	if (rc == 0)
		rc = airlock_run(c, req, &res);
	o->ms = front_now_ms() - t0;
	if (rc < 0) {
		user_err(o, c, "cell", rc);
		goto out;
	}
	o->end_ms = front_now_ms();
	o->queued_ms = airlock_result_queued_ms(res);
	v = airlock_result_value(res);
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED || v == NULL ||
	    strcmp(v, "42") != 0) {
		snprintf(o->msg, sizeof(o->msg), "cell: outcome %d, value %s",
			 (int)airlock_result_outcome(res), v != NULL ? v : "(none)");
		user_err(o, NULL, "cell result", -EPROTO);
		rc = -EPROTO;
	}
out:
	airlock_result_free(res);
	airlock_run_req_free(req);
	return rc;
}

/* `echo hi` as a one-shot run (after SLOW_S s if slow), timed. */
static int
user_echo(struct airlock_conn *c, bool slow, struct user_out *o)
{
	static const char *const fast_argv[] = {"echo", "hi", NULL};
	static const char *const slow_argv[] = {"sh", "-c", "sleep " SLOW_S "; echo hi", NULL};
	const char *const *argv = slow ? slow_argv : fast_argv;
	size_t i;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	const void *data;
	size_t len;
	uint64_t t0;
	int rc;

	rc = airlock_run_req_new(&req);
	if (rc == 0)
		rc = airlock_run_req_set_runtime(req, "exec");
	for (i = 0; rc == 0 && argv[i] != NULL; i++)
		rc = airlock_run_req_add_arg(req, argv[i]);
	t0 = front_now_ms();
	if (rc == 0)
		rc = airlock_run(c, req, &res);
	o->end_ms = front_now_ms();
	o->ms = o->end_ms - t0;
	if (rc < 0) {
		user_err(o, c, "echo", rc);
		goto out;
	}
	if (airlock_result_stdout(res, &data, &len) == 0 && len < sizeof(o->out)) {
		memcpy(o->out, data, len);
		o->out[len] = '\0';
	}
out:
	airlock_result_free(res);
	airlock_run_req_free(req);
	return rc;
}

/* Open a session (with the python interpreter if interp) into id. */
static int
user_open(struct airlock_conn *c, bool interp, char *id, struct user_out *o)
{
	struct airlock_session_opts *opts = NULL;
	int rc;

	rc = airlock_session_opts_new(&opts);
	if (rc == 0 && interp)
		rc = airlock_session_opts_set_interpreter(opts, "python");
	if (rc == 0)
		rc = airlock_session_open(c, opts, id);
	airlock_session_opts_free(opts);
	if (rc < 0)
		user_err(o, c, interp ? "interpreter session_open" : "session_open", rc);
	return rc;
}

static void
user_main(void *arg, void *buf)
{
	const struct user_in *in = arg;
	struct user_out *o = buf;
	struct airlock_conn *c = NULL;
	char plain[40];
	int i, rc;

	memset(o, 0, sizeof(*o));
	rc = airlock_connect(in->sock, &c);
	if (rc < 0) {
		user_err(o, NULL, "connect", rc);
		return;
	}
	/* Never wait for ever: a run stuck in the queue is a failure. */
	airlock_conn_set_timeout(c, PROMPT_MS);
	if (in->close_id != NULL) {
		rc = airlock_session_close(c, in->close_id);
		if (rc < 0) {
			user_err(o, c, "session_close", rc);
			goto out;
		}
	}
	if (in->echo && user_echo(c, in->slow, o) < 0)
		goto out;
	if (in->cell_id != NULL && user_cell(c, in->cell_id, "x", o) < 0)
		goto out;
	for (i = 0; i < in->interps && i < 4; i++) {
		if (user_open(c, true, o->ids[i], o) < 0 ||
		    user_cell(c, o->ids[i], "x = 6 * 7\nx", o) < 0)
			goto out;
	}
	if (in->plain_session && user_open(c, false, plain, o) < 0)
		goto out;
out:
	/* The sessions outlive the connection (orphan_grace_ms). */
	airlock_conn_free(c);
}

/* Act as uid: in's work, its outcome into *o. */
static void
as_user(uid_t uid, const struct user_in *in, struct user_out *o)
{
	int rc = front_as_user(uid, uid, user_main, (void *)in, o, sizeof(*o));

	CHECK(rc == 0, "uid %u: could not act as the user: %s", (unsigned)uid, strerror(-rc));
}

static int
teardown(void **state)
{
	(void)state;
	fixture_stop(&fx);
	return 0;
}

/*
 * Two users, two interpreter sessions each, one cell run in each and then
 * idle; a third user's `echo hi` is answered promptly. Before issue 28 the
 * four idle interpreters held all 4 run slots and the run timed out queued.
 */
static void
test_idle_interpreters_hold_no_slot(void **state)
{
	struct user_in two = {.sock = fx.sock, .interps = 2},
		       echo = {.sock = fx.sock, .echo = true}, again = {.sock = fx.sock};
	struct user_out o;
	char id[40];
	uint64_t echo_ms;

	(void)state;
	CHECK(fixture_start(&fx, CFG_IDLE) == 0, "the daemon did not start");
	as_user(UID_A, &two, &o);
	CHECK(o.rc == 0, "uid A: %s: %s (%s: %s)", o.step, strerror(-o.rc), o.code, o.msg);
	snprintf(id, sizeof(id), "%s", o.ids[1]);
	as_user(UID_B, &two, &o);
	CHECK(o.rc == 0, "uid B: %s: %s (%s: %s)", o.step, strerror(-o.rc), o.code, o.msg);
	as_user(UID_C, &echo, &o);
	CHECK(o.rc == 0, "uid C: echo hi behind 4 idle interpreters: %s: %s (%s: %s) after %llu ms",
	      o.step, strerror(-o.rc), o.code, o.msg, (unsigned long long)o.ms);
	CHECK(strcmp(o.out, "hi\n") == 0, "uid C: stdout '%s'", o.out);
	CHECK(o.ms < PROMPT_MS, "uid C: echo hi took %llu ms", (unsigned long long)o.ms);
	echo_ms = o.ms;
	/* An idle interpreter kept its state and still takes cells. */
	again.cell_id = id;
	as_user(UID_A, &again, &o);
	CHECK(o.rc == 0, "uid A, a cell in its second interpreter again: %s: %s (%s: %s)", o.step,
	      strerror(-o.rc), o.code, o.msg);
	print_message("echo hi behind 4 idle interpreters: %llu ms\n", (unsigned long long)echo_ms);
}

/*
 * One run slot: a user's interpreter runs a cell (the slot is the cell's
 * while it runs), goes idle, and another user's one-shot runs then get the
 * slot; the interpreter's next cell gets it back.
 */
static void
test_cells_take_the_slot_in_turn(void **state)
{
	struct user_in one = {.sock = fx.sock, .interps = 1},
		       echo = {.sock = fx.sock, .echo = true};
	struct user_out o;
	char id[40];
	int i;

	(void)state;
	CHECK(fixture_start(&fx, CFG_ONE) == 0, "the daemon did not start");
	for (i = 0; i < 3; i++) {
		/* A's interpreter: made by the first cell, then the same one's
		 * next cells (its state kept: x is still 42, user_cell checks). */
		as_user(UID_A, &one, &o);
		CHECK(o.rc == 0, "uid A, round %d: %s: %s (%s: %s)", i, o.step, strerror(-o.rc),
		      o.code, o.msg);
		if (i == 0) {
			snprintf(id, sizeof(id), "%s", o.ids[0]);
			one = (struct user_in){.sock = fx.sock, .cell_id = id};
		}
		as_user(UID_B, &echo, &o);
		CHECK(o.rc == 0 && strcmp(o.out, "hi\n") == 0,
		      "uid B, round %d, one slot, an idle interpreter of A: %s: %s (%s: %s) "
		      "after %llu ms",
		      i, o.step, strerror(-o.rc), o.code, o.msg, (unsigned long long)o.ms);
	}
}

/* Is a run of uid running, as root's ps sees it? */
static bool
uid_running(uid_t uid)
{
	struct airlock_conn *c = NULL;
	struct airlock_ps *ps = NULL;
	bool yes = false;
	size_t i;

	if (airlock_connect(fx.sock, &c) == 0 && airlock_ps(c, &ps) == 0)
		for (i = 0; i < airlock_ps_count(ps); i++)
			if (airlock_ps_uid(ps, i) == uid &&
			    !strcmp(airlock_ps_state(ps, i), "running"))
				yes = true;
	airlock_ps_free(ps);
	airlock_conn_free(c);
	return yes;
}

/*
 * A cell is work: with one slot, held by B's run, A's cell in its live
 * interpreter waits for it and is answered after B's run. (Were cells not
 * counted, an idle interpreter's cell would run beside it; before issue 28
 * B's run never started behind A's idle interpreter.)
 */
static void
test_cell_waits_for_a_slot(void **state)
{
	struct user_in one = {.sock = fx.sock, .interps = 1},
		       slow = {.sock = fx.sock, .echo = true, .slow = true};
	struct user_out o, ob;
	char id[40];
	uint64_t t0;
	int p[2];
	pid_t pid;

	(void)state;
	CHECK(fixture_start(&fx, CFG_ONE) == 0, "the daemon did not start");
	as_user(UID_A, &one, &o);
	CHECK(o.rc == 0, "uid A: %s: %s (%s: %s)", o.step, strerror(-o.rc), o.code, o.msg);
	snprintf(id, sizeof(id), "%s", o.ids[0]);
	/* B's slow run, from a process of its own. */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		memset(&ob, 0, sizeof(ob));
		if (front_as_user(UID_B, UID_B, user_main, &slow, &ob, sizeof(ob)) < 0)
			ob.rc = -ECHILD;
		_exit(write(p[1], &ob, sizeof(ob)) == (ssize_t)sizeof(ob) ? 0 : 1);
	}
	close(p[1]);
	t0 = front_now_ms();
	while (!uid_running(UID_B) && front_now_ms() - t0 < PROMPT_MS)
		usleep(20 * 1000);
	CHECK(uid_running(UID_B), "uid B's run did not start within %d ms", PROMPT_MS);
	one = (struct user_in){.sock = fx.sock, .cell_id = id};
	as_user(UID_A, &one, &o);
	CHECK(read(p[0], &ob, sizeof(ob)) == (ssize_t)sizeof(ob), "uid B's process said nothing");
	close(p[0]);
	waitpid(pid, NULL, 0);
	CHECK(ob.rc == 0 && strcmp(ob.out, "hi\n") == 0, "uid B: %s: %s (%s: %s)", ob.step,
	      strerror(-ob.rc), ob.code, ob.msg);
	CHECK(o.rc == 0, "uid A's cell: %s: %s (%s: %s)", o.step, strerror(-o.rc), o.code, o.msg);
	/* Else this test tested nothing: the host was too slow to send a
	 * cell within B's run of SLOW_S s (a finding, not a pass). */
	CHECK(o.start_ms < ob.end_ms, "uid A's cell was sent %llu ms after B's run ended",
	      (unsigned long long)(o.start_ms - ob.end_ms));
	CHECK(o.end_ms >= ob.end_ms,
	      "uid A's cell was answered %llu ms before B's run, which held the only slot",
	      (unsigned long long)(ob.end_ms - o.end_ms));
	/* Its wait is in its result: from its arrival, which came after B's
	 * run started, to its hand-off, which came after that run's end. */
	CHECK(o.queued_ms > 0 && o.queued_ms <= o.ms, "uid A's cell: queued_ms %llu of %llu ms",
	      (unsigned long long)o.queued_ms, (unsigned long long)o.ms);
	print_message("a cell behind another user's run of " SLOW_S " s: queued %llu ms\n",
		      (unsigned long long)o.queued_ms);
}

/* The caps: 2 per uid, 3 in all; busy, naming the key; room after a close. */
static void
test_interpreter_caps_refuse(void **state)
{
	struct user_in three = {.sock = fx.sock, .interps = 3},
		       plain = {.sock = fx.sock, .plain_session = true},
		       two = {.sock = fx.sock, .interps = 2}, one = {.sock = fx.sock, .interps = 1};
	struct user_out o;
	char b_id[40];

	(void)state;
	CHECK(fixture_start(&fx, CFG_CAPS) == 0, "the daemon did not start");
	/* A's third interpreter is past max_interpreters_per_uid = 2. */
	as_user(UID_A, &three, &o);
	CHECK(o.rc == -EBUSY && strcmp(o.step, "interpreter session_open") == 0 &&
		      strcmp(o.code, "busy") == 0 && strstr(o.msg, "max_interpreters_per_uid"),
	      "uid A's third interpreter: rc %d at %s (%s: %s)", o.rc, o.step, o.code, o.msg);
	CHECK(o.ids[0][0] != '\0' && o.ids[1][0] != '\0' && o.ids[2][0] == '\0',
	      "uid A: the first two interpreter sessions were not opened");
	/* A session without an interpreter is no interpreter's. */
	as_user(UID_A, &plain, &o);
	CHECK(o.rc == 0, "uid A, a plain session: %s: %s (%s: %s)", o.step, strerror(-o.rc), o.code,
	      o.msg);
	/* B: one more makes 3 in all; the next is past max_interpreters. */
	as_user(UID_B, &two, &o);
	CHECK(o.rc == -EBUSY && strcmp(o.code, "busy") == 0 && strstr(o.msg, "max_interpreters") &&
		      !strstr(o.msg, "per_uid") && o.ids[0][0] != '\0' && o.ids[1][0] == '\0',
	      "uid B past max_interpreters: rc %d at %s (%s: %s)", o.rc, o.step, o.code, o.msg);
	snprintf(b_id, sizeof(b_id), "%s", o.ids[0]);
	as_user(UID_C, &one, &o);
	CHECK(o.rc == -EBUSY && strcmp(o.code, "busy") == 0 && strstr(o.msg, "max_interpreters"),
	      "uid C past max_interpreters: rc %d at %s (%s: %s)", o.rc, o.step, o.code, o.msg);
	/* B closes its interpreter session: C's open now succeeds (at once:
	 * ended sessions are not counted, whatever their keeper's reap). */
	one.close_id = NULL;
	{
		struct user_in bclose = {.sock = fx.sock, .close_id = b_id};

		as_user(UID_B, &bclose, &o);
		CHECK(o.rc == 0, "uid B: %s: %s (%s: %s)", o.step, strerror(-o.rc), o.code, o.msg);
	}
	as_user(UID_C, &one, &o);
	CHECK(o.rc == 0, "uid C after B closed one: %s: %s (%s: %s)", o.step, strerror(-o.rc),
	      o.code, o.msg);
}

/* info_ok and the libairlock accessor: the four figures of the config. */
static void
info_main(void *arg, void *buf)
{
	const char *sock = arg;
	uint32_t *v = buf;
	struct airlock_conn *c = NULL;
	struct airlock_info *info = NULL;

	memset(v, 0, 5 * sizeof(*v));
	if (airlock_connect(sock, &c) < 0 || airlock_info(c, &info) < 0)
		goto out;
	v[0] = airlock_info_capacity(info, AIRLOCK_CAPACITY_RUNS);
	v[1] = airlock_info_capacity(info, AIRLOCK_CAPACITY_RUNS_PER_UID);
	v[2] = airlock_info_capacity(info, AIRLOCK_CAPACITY_INTERPRETERS);
	v[3] = airlock_info_capacity(info, AIRLOCK_CAPACITY_INTERPRETERS_PER_UID);
	v[4] = airlock_info_capacity(info, (enum airlock_capacity)4);
out:
	airlock_info_free(info);
	airlock_conn_free(c);
}

static void
test_info_shows_the_caps(void **state)
{
	uint32_t v[5];
	char out[8192], err[1024];
	char *argv[] = {getenv("AIRLOCK_CLI"), "--socket", fx.sock, "info", NULL};
	int rc;

	(void)state;
	CHECK(fixture_start(&fx, CFG_CAPS) == 0, "the daemon did not start");
	rc = front_as_user(UID_A, UID_A, info_main, fx.sock, v, sizeof(v));
	CHECK(rc == 0, "info as uid A: %s", strerror(-rc));
	CHECK(v[0] == 3 && v[1] == 2 && v[2] == 3 && v[3] == 2 && v[4] == 0,
	      "capacity: runs %u per uid %u, interpreters %u per uid %u, out of range %u", v[0],
	      v[1], v[2], v[3], v[4]);
	if (argv[0] == NULL) {
		print_message("AIRLOCK_CLI not set: `airlock info` not checked\n");
		return;
	}
	rc = front_run_cmd(UID_A, UID_A, argv, out, sizeof(out), err, sizeof(err));
	CHECK(rc == 0, "airlock info: exit %d: %s", rc, err);
	CHECK(strstr(out, "max_runs: 3 ") && strstr(out, "max_runs_per_uid: 2 ") &&
		      strstr(out, "max_interpreters: 3 ") &&
		      strstr(out, "max_interpreters_per_uid: 2 "),
	      "airlock info says:\n%s", out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_idle_interpreters_hold_no_slot, teardown),
		cmocka_unit_test_teardown(test_cells_take_the_slot_in_turn, teardown),
		cmocka_unit_test_teardown(test_cell_waits_for_a_slot, teardown),
		cmocka_unit_test_teardown(test_interpreter_caps_refuse, teardown),
		cmocka_unit_test_teardown(test_info_shows_the_caps, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
