/* test_cells_state.c: unit tests of daemon/frontend/cells_state.c: every
 * (state, event) pair against the table of docs/design-reshape.md §4.3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cells_state.h"

/* The table's answer as the enum, -1 where the event cannot happen. */
#define INVALID (-1)
#define NEXT(s, e) fsm_next(&cells_fsm, (int)(s), (int)(e))
#define STATE_NAME(s) fsm_state_name(&cells_fsm, (int)(s))
#define EVENT_NAME(e) fsm_event_name(&cells_fsm, (int)(e))

struct row {
	enum cells_state from;
	enum cells_event ev;
	int to;
};

/* Every transition there is; any pair not listed cannot happen. */
static const struct row rows[] = {
	{CELLS_IDLE, CELLS_EV_START, CELLS_STARTING},
	{CELLS_IDLE, CELLS_EV_END, CELLS_ENDED},
	{CELLS_STARTING, CELLS_EV_CHANNEL, CELLS_READY},
	{CELLS_STARTING, CELLS_EV_KILL, CELLS_KILLING},
	{CELLS_STARTING, CELLS_EV_EXIT, CELLS_IDLE}, /* it failed to start */
	{CELLS_STARTING, CELLS_EV_END, CELLS_ENDED},
	{CELLS_READY, CELLS_EV_CHANNEL, CELLS_READY}, /* again, after an EOF */
	{CELLS_READY, CELLS_EV_SENT, CELLS_BUSY},
	{CELLS_READY, CELLS_EV_KILL, CELLS_KILLING},
	{CELLS_READY, CELLS_EV_EXIT, CELLS_IDLE},
	{CELLS_READY, CELLS_EV_END, CELLS_ENDED},
	{CELLS_BUSY, CELLS_EV_CHANNEL, CELLS_BUSY},
	{CELLS_BUSY, CELLS_EV_DONE, CELLS_READY},
	{CELLS_BUSY, CELLS_EV_KILL, CELLS_KILLING},
	{CELLS_BUSY, CELLS_EV_EXIT, CELLS_IDLE},
	{CELLS_BUSY, CELLS_EV_END, CELLS_ENDED},
	/* being killed: a channel and a cell may still come and go */
	{CELLS_KILLING, CELLS_EV_CHANNEL, CELLS_KILLING},
	{CELLS_KILLING, CELLS_EV_SENT, CELLS_KILLING},
	{CELLS_KILLING, CELLS_EV_DONE, CELLS_KILLING},
	{CELLS_KILLING, CELLS_EV_EXIT, CELLS_IDLE},
	{CELLS_KILLING, CELLS_EV_END, CELLS_ENDED},
	/* the session ended: its interpreter's run ends after it */
	{CELLS_ENDED, CELLS_EV_CHANNEL, CELLS_ENDED},
	{CELLS_ENDED, CELLS_EV_DONE, CELLS_ENDED},
	{CELLS_ENDED, CELLS_EV_KILL, CELLS_ENDED},
	{CELLS_ENDED, CELLS_EV_EXIT, CELLS_ENDED},
	/* a reload: the sandbox the same, nothing changes */
	{CELLS_IDLE, CELLS_EV_RELOAD, CELLS_IDLE},
	{CELLS_STARTING, CELLS_EV_RELOAD, CELLS_STARTING},
	{CELLS_READY, CELLS_EV_RELOAD, CELLS_READY},
	{CELLS_BUSY, CELLS_EV_RELOAD, CELLS_BUSY},
	{CELLS_KILLING, CELLS_EV_RELOAD, CELLS_KILLING},
	/* a reload that changed its sandbox: killed, but not under a cell in
	 * flight (killed once that cell is answered); none to kill when idle */
	{CELLS_IDLE, CELLS_EV_STALE, CELLS_IDLE},
	{CELLS_STARTING, CELLS_EV_STALE, CELLS_KILLING},
	{CELLS_READY, CELLS_EV_STALE, CELLS_KILLING},
	{CELLS_BUSY, CELLS_EV_STALE, CELLS_BUSY},
	{CELLS_KILLING, CELLS_EV_STALE, CELLS_KILLING},
};

static int
expected(enum cells_state from, enum cells_event ev)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].from == from && rows[i].ev == ev)
			return rows[i].to;
	return INVALID;
}

/* The whole product of states and events. */
static void
test_every_pair(void **state)
{
	int s, e;
	size_t valid = 0;

	(void)state;
	for (s = 0; s < CELLS_STATE_COUNT_; s++)
		for (e = 0; e < CELLS_EV_COUNT_; e++) {
			int want = expected((enum cells_state)s, (enum cells_event)e);

			print_message("%s + %s\n", STATE_NAME((enum cells_state)s),
				      EVENT_NAME((enum cells_event)e));
			assert_int_equal(NEXT(s, e), want);
			valid += want != INVALID;
		}
	assert_int_equal(valid, sizeof(rows) / sizeof(rows[0]));
}

/* ENDED is never left; nothing starts an interpreter but in IDLE; every
 * state but IDLE and ENDED can lose its interpreter; out of range is invalid. */
static void
test_invariants(void **state)
{
	int s, e;

	(void)state;
	for (e = 0; e < CELLS_EV_COUNT_; e++) {
		int to = NEXT(CELLS_ENDED, (enum cells_event)e);

		assert_true(to == INVALID || to == CELLS_ENDED);
	}
	for (s = 0; s < CELLS_STATE_COUNT_; s++) {
		int to = NEXT((enum cells_state)s, CELLS_EV_START);

		assert_true(s == CELLS_IDLE ? to == CELLS_STARTING : to == INVALID);
		to = NEXT((enum cells_state)s, CELLS_EV_EXIT);
		if (s != CELLS_IDLE && s != CELLS_ENDED)
			assert_int_equal(to, CELLS_IDLE);
	}
	assert_int_equal(NEXT(CELLS_STATE_COUNT_, CELLS_EV_END), INVALID);
	assert_int_equal(NEXT(CELLS_READY, CELLS_EV_COUNT_), INVALID);
	assert_string_equal(STATE_NAME(CELLS_KILLING), "killing");
	assert_string_equal(EVENT_NAME(CELLS_EV_CHANNEL), "channel");
	assert_string_equal(EVENT_NAME(CELLS_EV_STALE), "stale");
}

/* A reload reaches every live interpreter (session_reload): RELOAD never
 * changes a state; an ended session's interpreter hears of none. */
static void
test_reload(void **state)
{
	int s;

	(void)state;
	for (s = 0; s < CELLS_STATE_COUNT_; s++) {
		int to = NEXT(s, CELLS_EV_RELOAD), ch = NEXT(s, CELLS_EV_STALE);

		if (s == CELLS_ENDED) {
			assert_int_equal(to, INVALID);
			assert_int_equal(ch, INVALID);
			continue;
		}
		assert_int_equal(to, s);
		assert_true(ch == s || ch == CELLS_KILLING);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_reload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
