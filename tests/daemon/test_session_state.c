/* test_session_state.c: unit tests of daemon/frontend/session_state.c: every
 * (state, event) pair against the table of docs/design-reshape.md §4.2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "session_state.h"

/* The table's answer as the enum, -1 where the event cannot happen. */
#define INVALID (-1)
#define NEXT(s, e) fsm_next(&session_fsm, (int)(s), (int)(e))
#define STATE_NAME(s) fsm_state_name(&session_fsm, (int)(s))
#define EVENT_NAME(e) fsm_event_name(&session_fsm, (int)(e))

struct row {
	enum session_state from;
	enum session_event ev;
	int to;
};

/* Every transition there is; any pair not listed cannot happen. */
static const struct row rows[] = {
	{SESSION_OPENING, SESSION_EV_KEEPER_READY, SESSION_READY},
	{SESSION_OPENING, SESSION_EV_END, SESSION_ENDING}, /* keeper failed, set-up failed */
	{SESSION_READY, SESSION_EV_END, SESSION_ENDING},   /* close, idle, lifetime, ... */
	{SESSION_ENDING, SESSION_EV_KEEPER_GONE, SESSION_ENDED},
	{SESSION_ENDED, SESSION_EV_FREE, SESSION_FREEING},
	/* a reload reaches the sessions not ended */
	{SESSION_OPENING, SESSION_EV_RELOAD, SESSION_OPENING},
	{SESSION_READY, SESSION_EV_RELOAD, SESSION_READY},
	/* a reload that refuses it (profile gone, uid no longer allowed) ends it */
	{SESSION_OPENING, SESSION_EV_REVOKED, SESSION_ENDING},
	{SESSION_READY, SESSION_EV_REVOKED, SESSION_ENDING},
};

static int
expected(enum session_state from, enum session_event ev)
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
	for (s = 0; s < SESSION_STATE_COUNT_; s++)
		for (e = 0; e < SESSION_EV_COUNT_; e++) {
			int want = expected((enum session_state)s, (enum session_event)e);

			print_message("%s + %s\n", STATE_NAME((enum session_state)s),
				      EVENT_NAME((enum session_event)e));
			assert_int_equal(NEXT(s, e), want);
			valid += want != INVALID;
		}
	assert_int_equal(valid, sizeof(rows) / sizeof(rows[0]));
}

/* Nothing leaves FREEING; states only advance (a reload keeps one); out of
 * range is invalid. */
static void
test_invariants(void **state)
{
	int s, e;

	(void)state;
	for (e = 0; e < SESSION_EV_COUNT_; e++)
		assert_int_equal(NEXT(SESSION_FREEING, (enum session_event)e), INVALID);
	for (s = 0; s < SESSION_STATE_COUNT_; s++)
		for (e = 0; e < SESSION_EV_COUNT_; e++) {
			int to = NEXT(s, e);

			if (e == SESSION_EV_RELOAD)
				assert_true(to == INVALID || to == s);
			else
				assert_true(to == INVALID || (int)to > s);
		}
	assert_int_equal(NEXT(SESSION_STATE_COUNT_, SESSION_EV_END), INVALID);
	assert_int_equal(NEXT(SESSION_READY, SESSION_EV_COUNT_), INVALID);
	assert_string_equal(STATE_NAME(SESSION_ENDED), "ended");
	assert_string_equal(EVENT_NAME(SESSION_EV_KEEPER_GONE), "keeper_gone");
}

/* A reload reaches the live sessions only: an ended one hears of none; a
 * live one stays, or ends as END would end it. */
static void
test_reload(void **state)
{
	int s;

	(void)state;
	for (s = 0; s < SESSION_STATE_COUNT_; s++) {
		assert_int_equal(NEXT(s, SESSION_EV_RELOAD), s < SESSION_ENDING ? s : INVALID);
		assert_int_equal(NEXT(s, SESSION_EV_REVOKED), NEXT(s, SESSION_EV_END));
	}
	assert_string_equal(EVENT_NAME(SESSION_EV_RELOAD), "reload");
	assert_string_equal(EVENT_NAME(SESSION_EV_REVOKED), "revoked");
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
