/* test_run_outcome.c: unit tests of daemon/frontend/run_outcome.c: one table row per
 * branch of the outcome decision, and of the early-answer rules. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "run_outcome.h"
#include "sandbox.h"

/* A link seam: the step names live in sandbox.c, which this test leaves out. */
const char *
sandbox_step_name(int step)
{
	return step == SANDBOX_STEP_SETID ? "setid" : "unknown";
}

#define EXITED(code) ((code) << 8)
#define KILLED_BY(sig) (sig)
#define MS 1000000ULL

struct outcome_row {
	const char *what;
	struct run_facts f;
	enum proto_outcome outcome;
	int32_t exit_code, signal;
	uint64_t wall_ms, cpu_ms, peak;
	const char *err; /* a substring of the error text, or NULL for none */
};

static const struct outcome_row outcome_rows[] = {
	{"failed before its sandbox, whatever else came",
	 {.prep_error = "input file a: refused",
	  .spawn_failed = true,
	  .sup_exit = true,
	  .cancelled = true},
	 PROTO_OUTCOME_ERROR,
	 0,
	 0,
	 0,
	 0,
	 0,
	 "input file a: refused"},
	{"the spawner could not start it",
	 {.spawn_failed = true,
	  .spawn_ev = {.err = -ENOMEM, .step = "clone"},
	  .setup_failed = true},
	 PROTO_OUTCOME_ERROR,
	 0,
	 0,
	 0,
	 0,
	 0,
	 "sandbox could not start: clone: Cannot allocate memory"},
	{"the set-up in the sandbox failed",
	 {.setup_failed = true,
	  .fail_step = SANDBOX_STEP_SETID,
	  .fail_err = -EPERM,
	  .cancelled = true},
	 PROTO_OUTCOME_ERROR,
	 0,
	 0,
	 0,
	 0,
	 0,
	 "set-up failed at step setid: Operation not permitted"},
	{"the sandbox broke its lifeline, even with a report and a cancel",
	 {.lifeline_bad = true,
	  .lifeline_why = "exit after its exit",
	  .sup_exit = true,
	  .exit_msg = {.status = EXITED(0)},
	  .cancelled = true},
	 PROTO_OUTCOME_ERROR,
	 0,
	 0,
	 0,
	 0,
	 0,
	 "sandbox error: exit after its exit"},
	{"cancelled before the code's end",
	 {.cancelled = true, .spawn_done = true, .done_ev = {.memory_peak = 4096}},
	 PROTO_OUTCOME_CANCELLED,
	 0,
	 0,
	 0,
	 0,
	 4096,
	 NULL},
	{"cancelled after the code's end: the report stands",
	 {.cancelled = true,
	  .sup_exit = true,
	  .exit_msg = {.status = EXITED(0), .wall_ns = 7 * MS}},
	 PROTO_OUTCOME_EXITED,
	 0,
	 0,
	 7,
	 0,
	 0,
	 NULL},
	{"wall limit, by the supervisor",
	 {.sup_exit = true,
	  .exit_msg = {.reason = SUP_REASON_WALL,
		       .status = KILLED_BY(SIGKILL),
		       .wall_ns = 1000 * MS,
		       .cpu_ns = 20 * MS}},
	 PROTO_OUTCOME_WALL_LIMIT,
	 0,
	 0,
	 1000,
	 20,
	 0,
	 NULL},
	{"cpu limit, even when out of memory too",
	 {.sup_exit = true,
	  .exit_msg = {.reason = SUP_REASON_CPU, .cpu_ns = 500 * MS},
	  .spawn_done = true,
	  .done_ev = {.oom = 1, .memory_peak = 1 << 20}},
	 PROTO_OUTCOME_CPU_LIMIT,
	 0,
	 0,
	 0,
	 500,
	 1 << 20,
	 NULL},
	{"memory limit, from the reap's figures",
	 {.sup_exit = true,
	  .exit_msg = {.reason = SUP_REASON_EXITED, .status = KILLED_BY(SIGKILL)},
	  .spawn_done = true,
	  .done_ev = {.oom = 1, .memory_peak = 8 << 20}},
	 PROTO_OUTCOME_MEMORY_LIMIT,
	 0,
	 0,
	 0,
	 0,
	 8 << 20,
	 NULL},
	{"memory limit, from figures read before the reap",
	 {.sup_exit = true,
	  .exit_msg = {.status = EXITED(1)},
	  .mem_read = true,
	  .mem_oom = true,
	  .mem_peak = 3 << 20},
	 PROTO_OUTCOME_MEMORY_LIMIT,
	 0,
	 0,
	 0,
	 0,
	 3 << 20,
	 NULL},
	{"the reap's figures win over those read ahead",
	 {.sup_exit = true,
	  .exit_msg = {.status = EXITED(0)},
	  .mem_read = true,
	  .mem_oom = true,
	  .mem_peak = 1,
	  .spawn_done = true,
	  .done_ev = {.memory_peak = 2}},
	 PROTO_OUTCOME_EXITED,
	 0,
	 0,
	 0,
	 0,
	 2,
	 NULL},
	{"process limit, when memory is fine",
	 {.sup_exit = true, .exit_msg = {.reason = SUP_REASON_PROCS, .status = KILLED_BY(SIGKILL)}},
	 PROTO_OUTCOME_PROCESS_LIMIT,
	 0,
	 0,
	 0,
	 0,
	 0,
	 NULL},
	{"process limit loses to memory",
	 {.sup_exit = true,
	  .exit_msg = {.reason = SUP_REASON_PROCS},
	  .spawn_done = true,
	  .done_ev = {.oom = 1}},
	 PROTO_OUTCOME_MEMORY_LIMIT,
	 0,
	 0,
	 0,
	 0,
	 0,
	 NULL},
	{"exited with a code",
	 {.sup_exit = true,
	  .exit_msg = {.status = EXITED(3), .wall_ns = 12 * MS, .cpu_ns = 5 * MS}},
	 PROTO_OUTCOME_EXITED,
	 3,
	 0,
	 12,
	 5,
	 0,
	 NULL},
	{"signaled",
	 {.sup_exit = true, .exit_msg = {.status = KILLED_BY(SIGSEGV)}},
	 PROTO_OUTCOME_SIGNALED,
	 0,
	 SIGSEGV,
	 0,
	 0,
	 0,
	 NULL},
	{"a wait status neither exited nor signaled",
	 {.sup_exit = true, .exit_msg = {.status = 0x137f}},
	 PROTO_OUTCOME_ERROR,
	 0,
	 0,
	 0,
	 0,
	 0,
	 "unexpected wait status 0x137f"},
	{"the frontend's backstop, no report",
	 {.backstop_fired = true, .spawn_done = true, .done_ev = {.oom = 1}},
	 PROTO_OUTCOME_WALL_LIMIT,
	 0,
	 0,
	 0,
	 0,
	 0,
	 NULL},
	{"out of memory without a report",
	 {.spawn_done = true, .done_ev = {.oom = 1, .memory_peak = 64}},
	 PROTO_OUTCOME_MEMORY_LIMIT,
	 0,
	 0,
	 0,
	 0,
	 64,
	 NULL},
	{"nothing heard but the reap",
	 {.spawn_done = true, .done_ev = {.status = KILLED_BY(SIGKILL)}},
	 PROTO_OUTCOME_ERROR,
	 0,
	 0,
	 0,
	 0,
	 0,
	 "ended without a report (status 0x9)"},
};

/* Every row: the outcome, its numbers and its error text. */
static void
test_outcome_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(outcome_rows) / sizeof(outcome_rows[0]); i++) {
		const struct outcome_row *row = &outcome_rows[i];
		struct proto_result res;
		char err[256];

		memset(&res, 0xa5, sizeof(res));
		memset(err, 'x', sizeof(err));
		res.wall_ms = res.cpu_ms = 0;
		print_message("row %zu: %s\n", i, row->what);
		run_outcome_decide(&row->f, &res, err, sizeof(err));
		assert_int_equal(res.outcome, row->outcome);
		if (row->outcome == PROTO_OUTCOME_EXITED ||
		    row->outcome == PROTO_OUTCOME_SIGNALED) {
			assert_int_equal(res.exit_code, row->exit_code);
			assert_int_equal(res.signal, row->signal);
		}
		assert_int_equal(res.wall_ms, row->wall_ms);
		assert_int_equal(res.cpu_ms, row->cpu_ms);
		assert_int_equal(res.memory_peak_bytes, row->peak);
		if (row->err == NULL)
			assert_string_equal(err, "");
		else
			assert_non_null(strstr(err, row->err));
	}
}

/* A client that does not know process_limit hears the code's status; one
 * that does, and every other outcome, are left alone. */
static void
test_for_client(void **state)
{
	struct run_facts f = {
		.sup_exit = true,
		.exit_msg = {.reason = SUP_REASON_PROCS, .status = KILLED_BY(SIGKILL)}};
	struct proto_result res = {0};
	char err[64] = "";

	(void)state;
	run_outcome_decide(&f, &res, err, sizeof(err));
	run_outcome_for_client(&f, true, &res, err, sizeof(err));
	assert_int_equal(res.outcome, PROTO_OUTCOME_PROCESS_LIMIT);
	run_outcome_for_client(&f, false, &res, err, sizeof(err));
	assert_int_equal(res.outcome, PROTO_OUTCOME_SIGNALED);
	assert_int_equal(res.signal, SIGKILL);

	f.exit_msg = (struct sup_msg){.reason = SUP_REASON_WALL, .status = KILLED_BY(SIGKILL)};
	memset(&res, 0, sizeof(res));
	run_outcome_decide(&f, &res, err, sizeof(err));
	run_outcome_for_client(&f, false, &res, err, sizeof(err));
	assert_int_equal(res.outcome, PROTO_OUTCOME_WALL_LIMIT);
}

/* Reaped: the spawner's DONE, or a failure with no child to wait for. */
static void
test_reaped(void **state)
{
	struct run_facts f = {0};

	(void)state;
	assert_false(run_outcome_reaped(&f));
	f.spawn_failed = true;
	f.spawn_ev.pid = 1234;
	assert_false(run_outcome_reaped(&f));
	f.spawn_ev.pid = 0;
	assert_true(run_outcome_reaped(&f));
	f = (struct run_facts){.spawn_done = true};
	assert_true(run_outcome_reaped(&f));
}

/* Run again fresh: only on the sandbox's word that the code did not run. */
static void
test_retry_fresh(void **state)
{
	struct run_facts f = {0};

	(void)state;
	assert_false(run_outcome_retry_fresh(&f)); /* no word at all */
	f.setup_failed = true;
	assert_true(run_outcome_retry_fresh(&f));
	f = (struct run_facts){.spawn_failed = true};
	assert_true(run_outcome_retry_fresh(&f));
	f.sup_exit = true; /* the code ran */
	assert_false(run_outcome_retry_fresh(&f));
	f = (struct run_facts){.setup_failed = true, .cancelled = true};
	assert_false(run_outcome_retry_fresh(&f));
	f = (struct run_facts){.setup_failed = true, .backstop_fired = true};
	assert_false(run_outcome_retry_fresh(&f));
	f = (struct run_facts){.setup_failed = true, .lifeline_bad = true};
	assert_false(run_outcome_retry_fresh(&f));
	f = (struct run_facts){.spawn_failed = true, .prep_error = "cannot set up the run"};
	assert_false(run_outcome_retry_fresh(&f));
	/* A supervisor gone without a word may have run the code. */
	f = (struct run_facts){.spawn_done = true};
	assert_false(run_outcome_retry_fresh(&f));
}

struct early_row {
	const char *what;
	struct run_facts f;
	bool outs_eof, lifeline_open, early;
};

static const struct early_row early_rows[] = {
	{"the last word, outputs closed, lifeline closed", {.sup_exit = true}, true, false, true},
	{"exited with a code",
	 {.sup_exit = true, .exit_msg = {.status = EXITED(2)}},
	 true,
	 false,
	 true},
	{"killed by a signal other than SIGKILL",
	 {.sup_exit = true, .exit_msg = {.status = KILLED_BY(SIGTERM)}},
	 true,
	 false,
	 true},
	{"SIGKILL: the oom count may lag (6d76a40)",
	 {.sup_exit = true, .exit_msg = {.status = KILLED_BY(SIGKILL)}},
	 true,
	 false,
	 false},
	{"output still open", {.sup_exit = true}, false, false, false},
	{"lifeline still open", {.sup_exit = true}, true, true, false},
	{"no last word", {.cancelled = true}, true, false, false},
	{"already reaped: answered at the reap",
	 {.sup_exit = true, .spawn_done = true},
	 true,
	 false,
	 false},
	{"failed with no child", {.sup_exit = true, .spawn_failed = true}, true, false, false},
	{"failed with a child still to reap",
	 {.sup_exit = true, .spawn_failed = true, .spawn_ev = {.pid = 99}},
	 true,
	 false,
	 true},
};

/* The early answer's rules, one row each. */
static void
test_early_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(early_rows) / sizeof(early_rows[0]); i++) {
		const struct early_row *row = &early_rows[i];

		print_message("row %zu: %s\n", i, row->what);
		assert_int_equal(
			run_outcome_may_answer_early(&row->f, row->outs_eof, row->lifeline_open),
			row->early);
	}
}

/* Memory figures read early count only when read and non-zero (54f7d39). */
static void
test_memory_usable(void **state)
{
	(void)state;
	assert_true(run_outcome_memory_usable(0, 1));
	assert_false(run_outcome_memory_usable(0, 0));
	assert_false(run_outcome_memory_usable(-EBADF, 4096));
	assert_false(run_outcome_memory_usable(-EIO, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcome_table), cmocka_unit_test(test_for_client),
		cmocka_unit_test(test_reaped),	      cmocka_unit_test(test_early_table),
		cmocka_unit_test(test_memory_usable), cmocka_unit_test(test_retry_fresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
