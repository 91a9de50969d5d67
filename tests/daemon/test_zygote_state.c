/* test_zygote_state.c: unit tests of daemon/frontend/zygote_state.c: every
 * (state, event) pair against docs/design-bursts.md §3.6, and the back-off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "zygote_state.h"

struct row {
	enum zygote_state from;
	enum zygote_event ev;
	enum zygote_state to;
};

/* Every transition there is; any pair not listed cannot happen. */
static const struct row rows[] = {
	{ZYGOTE_STARTING, ZYGOTE_EV_STARTED, ZYGOTE_LIVE},
	{ZYGOTE_STARTING, ZYGOTE_EV_FAILED, ZYGOTE_WAITING},
	{ZYGOTE_STARTING, ZYGOTE_EV_STOP, ZYGOTE_STOPPING},
	{ZYGOTE_LIVE, ZYGOTE_EV_GONE, ZYGOTE_WAITING}, /* died unasked: back-off */
	{ZYGOTE_LIVE, ZYGOTE_EV_STOP, ZYGOTE_STOPPING},
	{ZYGOTE_STOPPING, ZYGOTE_EV_STARTED, ZYGOTE_STOPPING}, /* the start crossed the stop */
	{ZYGOTE_STOPPING, ZYGOTE_EV_FAILED, ZYGOTE_ENDED},
	{ZYGOTE_STOPPING, ZYGOTE_EV_GONE, ZYGOTE_ENDED},
	{ZYGOTE_STOPPING, ZYGOTE_EV_STOP, ZYGOTE_STOPPING},
	{ZYGOTE_WAITING, ZYGOTE_EV_RETRY, ZYGOTE_STARTING},
	{ZYGOTE_WAITING, ZYGOTE_EV_STOP, ZYGOTE_ENDED},
};

static enum zygote_state
expected(enum zygote_state from, enum zygote_event ev)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].from == from && rows[i].ev == ev)
			return rows[i].to;
	return ZYGOTE_STATE_INVALID;
}

/* The table holds exactly the rows above: every other pair is invalid. */
static void
test_every_pair(void **state)
{
	int s, e;

	(void)state;
	for (s = 0; s < ZYGOTE_STATE_COUNT_; s++)
		for (e = 0; e < ZYGOTE_EV_COUNT_; e++)
			if (zygote_state_next(s, e) != expected(s, e))
				fail_msg("%s + %s: got %d, want %d", zygote_state_name(s),
					 zygote_event_name(e), zygote_state_next(s, e),
					 expected(s, e));
	assert_int_equal(zygote_state_next(ZYGOTE_STATE_COUNT_, 0), ZYGOTE_STATE_INVALID);
	assert_int_equal(zygote_state_next(0, ZYGOTE_EV_COUNT_), ZYGOTE_STATE_INVALID);
	assert_string_equal(zygote_state_name(ZYGOTE_WAITING), "waiting");
	assert_string_equal(zygote_event_name(ZYGOTE_EV_GONE), "gone");
}

/* 50 ms, doubled per failure in a row, at most 10 s. */
static void
test_backoff(void **state)
{
	static const uint32_t want[] = {50, 100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000};
	uint32_t ms = 0;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ms = zygote_backoff_next(ms);
		assert_int_equal(ms, want[i]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
