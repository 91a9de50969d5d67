/*
 * test_sandbox_step.c: unit tests of daemon/ipc/sandbox_step.c: every set-up step
 * of the supervisor has a name, no two share one, and a value no step has
 * reads "unknown" (a missing entry did: the cgroup step was "unknown").
 * And sandbox.h's RLIMIT_NPROC for a processes limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox.h"

/* Every step from NONE to the last has its own name. */
static void
test_every_step_named(void **state)
{
	int i, j;

	(void)state;
	for (i = 0; i < SANDBOX_STEP_COUNT_; i++) {
		const char *n = sandbox_step_name(i);

		assert_non_null(n);
		assert_true(n[0] != '\0');
		if (strcmp(n, "unknown") == 0)
			fail_msg("step %d has no name", i);
		for (j = 0; j < i; j++)
			if (strcmp(n, sandbox_step_name(j)) == 0)
				fail_msg("steps %d and %d are both \"%s\"", j, i, n);
	}
}

/* The names clients see for a few steps, and the ones a test matches. */
static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_NONE), "none");
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_CGROUP), "cgroup");
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_EXEC), "exec");
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_LANDLOCK), "landlock");
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_INPUT_FILES), "input_files");
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_OOM_SCORE), "oom_score_adj");
}

/* Out of range, either side. */
static void
test_unknown(void **state)
{
	(void)state;
	assert_string_equal(sandbox_step_name(-1), "unknown");
	assert_string_equal(sandbox_step_name(SANDBOX_STEP_COUNT_), "unknown");
	assert_string_equal(sandbox_step_name(INT32_MAX), "unknown");
	assert_string_equal(sandbox_step_name(INT32_MIN), "unknown");
}

/* Without a v2 cgroup the rlimit is the limit; with one, a backstop twice
 * pids.max (a burst of forks is counted by the uid before the cgroup), and
 * unlimited stays unlimited. */
static void
test_nproc_limit(void **state)
{
	(void)state;
	assert_int_equal(sandbox_nproc_limit(false, 16), 16);
	assert_int_equal(sandbox_nproc_limit(false, 1), 1);
	assert_true(sandbox_nproc_limit(false, UINT64_MAX) == UINT64_MAX);
	assert_int_equal(sandbox_nproc_limit(true, 16), 32);
	assert_int_equal(sandbox_nproc_limit(true, 1), 2);
	assert_true(sandbox_nproc_limit(true, UINT64_MAX) == UINT64_MAX);
	assert_true(sandbox_nproc_limit(true, UINT64_MAX / 2 + 1) == UINT64_MAX);
	assert_true(sandbox_nproc_limit(true, UINT64_MAX / 2) == UINT64_MAX - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_step_named),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_nproc_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
