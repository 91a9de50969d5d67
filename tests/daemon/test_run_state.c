/* test_run_state.c: unit tests of daemon/frontend/run_state.c: every (state, event)
 * pair against the table of docs/design-run-lifecycle.md, section 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "run_state.h"

struct row {
	enum run_state from;
	enum run_event ev;
	enum run_state to;
};

/* Every transition there is; any pair not listed cannot happen. */
static const struct row rows[] = {
	{RUN_QUEUED, RUN_EV_LAUNCH, RUN_STARTING},
	{RUN_QUEUED, RUN_EV_LAUNCH_SESSION, RUN_PREPARING},
	{RUN_QUEUED, RUN_EV_DROP, RUN_REAPED}, /* cancel, client left, stop */
	{RUN_PREPARING, RUN_EV_PREPARED, RUN_STARTING},
	{RUN_PREPARING, RUN_EV_DROP, RUN_REAPED}, /* keeper error, cancel, session ended */
	{RUN_STARTING, RUN_EV_STARTED, RUN_RUNNING},
	{RUN_STARTING, RUN_EV_ANSWER, RUN_EXITED}, /* hand-over failed, or early answer */
	{RUN_STARTING, RUN_EV_REAP, RUN_REAPED},   /* failed with no process */
	{RUN_RUNNING, RUN_EV_ANSWER, RUN_EXITED},
	{RUN_RUNNING, RUN_EV_REAP, RUN_REAPED},
	{RUN_EXITED, RUN_EV_REAP, RUN_REAPED},
	/* its pre-started interpreter was gone: runs again in a fresh sandbox */
	{RUN_STARTING, RUN_EV_RETRY, RUN_QUEUED},
	{RUN_RUNNING, RUN_EV_RETRY, RUN_QUEUED},
};

static enum run_state
expected(enum run_state from, enum run_event ev)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].from == from && rows[i].ev == ev)
			return rows[i].to;
	return RUN_STATE_INVALID;
}

/* The whole product of states and events. */
static void
test_every_pair(void **state)
{
	int s, e;
	size_t valid = 0;

	(void)state;
	for (s = 0; s < RUN_STATE_COUNT_; s++)
		for (e = 0; e < RUN_EV_COUNT_; e++) {
			enum run_state want = expected((enum run_state)s, (enum run_event)e);

			print_message("%s + %s\n", run_state_name((enum run_state)s),
				      run_event_name((enum run_event)e));
			assert_int_equal(run_state_next((enum run_state)s, (enum run_event)e),
					 want);
			valid += want != RUN_STATE_INVALID;
		}
	assert_int_equal(valid, sizeof(rows) / sizeof(rows[0]));
}

/* Nothing leaves REAPED; states only advance, but for a retry, which goes
 * back to QUEUED only, and never once answered. */
static void
test_invariants(void **state)
{
	int s, e;

	(void)state;
	for (e = 0; e < RUN_EV_COUNT_; e++)
		assert_int_equal(run_state_next(RUN_REAPED, (enum run_event)e), RUN_STATE_INVALID);
	assert_int_equal(run_state_next(RUN_EXITED, RUN_EV_RETRY), RUN_STATE_INVALID);
	for (s = 0; s < RUN_STATE_COUNT_; s++)
		for (e = 0; e < RUN_EV_COUNT_; e++) {
			enum run_state to = run_state_next((enum run_state)s, (enum run_event)e);

			if (to != RUN_STATE_INVALID && e != RUN_EV_RETRY)
				assert_true(to > (enum run_state)s);
		}
}

/* Out-of-range input is refused, and names exist for everything. */
static void
test_bounds_and_names(void **state)
{
	int s, e;

	(void)state;
	assert_int_equal(run_state_next(RUN_STATE_COUNT_, RUN_EV_REAP), RUN_STATE_INVALID);
	assert_int_equal(run_state_next(RUN_STATE_INVALID, RUN_EV_REAP), RUN_STATE_INVALID);
	assert_int_equal(run_state_next(RUN_QUEUED, RUN_EV_COUNT_), RUN_STATE_INVALID);
	assert_string_equal(run_state_name(RUN_STATE_INVALID), "invalid");
	assert_string_equal(run_event_name(RUN_EV_COUNT_), "invalid");
	for (s = 0; s < RUN_STATE_COUNT_; s++)
		assert_string_not_equal(run_state_name((enum run_state)s), "invalid");
	for (e = 0; e < RUN_EV_COUNT_; e++)
		assert_string_not_equal(run_event_name((enum run_event)e), "invalid");
	assert_string_equal(run_state_name(RUN_EXITED), "exited");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_bounds_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
