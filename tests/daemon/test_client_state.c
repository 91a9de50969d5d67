/* test_client_state.c: unit tests of daemon/frontend/client_state.c: every
 * (state, event) pair against the lifecycle of docs/design-reshape.md
 * section 4.1, and the end's orphan action once on every path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client_state.h"

struct row {
	enum client_state from;
	enum client_event ev;
	enum client_state to;
};

/* Every transition there is; any pair not listed cannot happen. */
static const struct row rows[] = {
	{CLIENT_HELLO, CLIENT_EV_HELLO_OK, CLIENT_READY},
	{CLIENT_HELLO, CLIENT_EV_REFUSE, CLIENT_CLOSING}, /* not allowed, over, bad hello */
	{CLIENT_HELLO, CLIENT_EV_DROP, CLIENT_DROPPED},	  /* EOF, no hello in time */
	{CLIENT_HELLO, CLIENT_EV_EXIT, CLIENT_GONE},
	{CLIENT_READY, CLIENT_EV_REFUSE, CLIENT_CLOSING},
	{CLIENT_READY, CLIENT_EV_DROP, CLIENT_DROPPED}, /* EOF, error, not reading */
	{CLIENT_READY, CLIENT_EV_EXIT, CLIENT_GONE},
	{CLIENT_CLOSING, CLIENT_EV_REFUSE, CLIENT_CLOSING},
	{CLIENT_CLOSING, CLIENT_EV_FLUSHED, CLIENT_DROPPED},
	{CLIENT_CLOSING, CLIENT_EV_DROP, CLIENT_DROPPED},
	{CLIENT_CLOSING, CLIENT_EV_EXIT, CLIENT_GONE},
	{CLIENT_DROPPED, CLIENT_EV_DROP, CLIENT_DROPPED},   /* a second drop: nothing */
	{CLIENT_DROPPED, CLIENT_EV_REFUSE, CLIENT_DROPPED}, /* its refusal's send ended it */
	{CLIENT_DROPPED, CLIENT_EV_LINGER, CLIENT_LINGERING},
	{CLIENT_DROPPED, CLIENT_EV_FREE, CLIENT_GONE},
	{CLIENT_DROPPED, CLIENT_EV_EXIT, CLIENT_GONE},
	{CLIENT_LINGERING, CLIENT_EV_DROP, CLIENT_LINGERING},
	{CLIENT_LINGERING, CLIENT_EV_REFUSE, CLIENT_LINGERING},
	{CLIENT_LINGERING, CLIENT_EV_READ_ALL, CLIENT_GONE},
	{CLIENT_LINGERING, CLIENT_EV_EXIT, CLIENT_GONE},
	/* a reload changes no connection's state (access: at each request) */
	{CLIENT_HELLO, CLIENT_EV_RELOAD, CLIENT_HELLO},
	{CLIENT_READY, CLIENT_EV_RELOAD, CLIENT_READY},
	{CLIENT_CLOSING, CLIENT_EV_RELOAD, CLIENT_CLOSING},
	{CLIENT_DROPPED, CLIENT_EV_RELOAD, CLIENT_DROPPED},
	{CLIENT_LINGERING, CLIENT_EV_RELOAD, CLIENT_LINGERING},
};

static enum client_state
expected(enum client_state from, enum client_event ev)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].from == from && rows[i].ev == ev)
			return rows[i].to;
	return CLIENT_STATE_INVALID;
}

/* The whole product of states and events. */
static void
test_every_pair(void **state)
{
	int s, e;
	size_t valid = 0;

	(void)state;
	for (s = 0; s < CLIENT_STATE_COUNT_; s++)
		for (e = 0; e < CLIENT_EV_COUNT_; e++) {
			enum client_state want =
				expected((enum client_state)s, (enum client_event)e);

			print_message("%s + %s\n", fsm_state_name(&client_fsm, s),
				      fsm_event_name(&client_fsm, e));
			assert_int_equal(
				client_state_next((enum client_state)s, (enum client_event)e),
				want);
			valid += want != CLIENT_STATE_INVALID;
		}
	assert_int_equal(valid, sizeof(rows) / sizeof(rows[0]));
}

/* Every path from `s` to GONE: the end (the orphan action) is entered
 * exactly `ends_left` more times; self-loops change nothing. */
static void
walk(enum client_state s, int ends_left, int depth)
{
	int e;

	assert_true(depth < 16); /* no cycle but self-loops */
	if (s == CLIENT_GONE) {
		assert_int_equal(ends_left, 0);
		return;
	}
	for (e = 0; e < CLIENT_EV_COUNT_; e++) {
		enum client_state to = client_state_next(s, (enum client_event)e);

		if (to == CLIENT_STATE_INVALID || to == s)
			continue;
		walk(to, ends_left - (client_state_ends(s, to) ? 1 : 0), depth + 1);
	}
}

/*
 * The orphan action once on every path from the connect to the end; nothing
 * leaves GONE; every state but GONE can end (EXIT); requests only in READY
 * (a hello only in HELLO); once ended, never live again.
 */
static void
test_invariants(void **state)
{
	int s, e;

	(void)state;
	walk(CLIENT_HELLO, 1, 0);
	for (e = 0; e < CLIENT_EV_COUNT_; e++)
		assert_int_equal(client_state_next(CLIENT_GONE, (enum client_event)e),
				 CLIENT_STATE_INVALID);
	for (s = 0; s < CLIENT_GONE; s++)
		assert_int_equal(client_state_next((enum client_state)s, CLIENT_EV_EXIT),
				 CLIENT_GONE);
	for (s = 0; s < CLIENT_STATE_COUNT_; s++)
		if (s != CLIENT_HELLO)
			assert_int_equal(
				client_state_next((enum client_state)s, CLIENT_EV_HELLO_OK),
				CLIENT_STATE_INVALID);
	for (s = CLIENT_DROPPED; s < CLIENT_STATE_COUNT_; s++)
		for (e = 0; e < CLIENT_EV_COUNT_; e++) {
			enum client_state to =
				client_state_next((enum client_state)s, (enum client_event)e);

			assert_true(to == CLIENT_STATE_INVALID || to >= (enum client_state)s);
		}
	/* A handler's send may end the connection before the handler refuses
	 * or drops it: never a broken invariant once ended. */
	for (s = CLIENT_DROPPED; s < CLIENT_GONE; s++) {
		assert_int_equal(client_state_next((enum client_state)s, CLIENT_EV_REFUSE), s);
		assert_int_equal(client_state_next((enum client_state)s, CLIENT_EV_DROP), s);
	}
	assert_true(client_state_ends(CLIENT_DROPPED, CLIENT_LINGERING));
	assert_true(client_state_ends(CLIENT_READY, CLIENT_GONE));
	assert_false(client_state_ends(CLIENT_LINGERING, CLIENT_GONE));
	assert_false(client_state_ends(CLIENT_READY, CLIENT_DROPPED));
	/* A reload reaches every connection still on the list and moves none
	 * (so it never ends one: no orphan action). */
	for (s = 0; s < CLIENT_GONE; s++)
		assert_int_equal(client_state_next((enum client_state)s, CLIENT_EV_RELOAD), s);
}

/* Out-of-range input is refused, and names exist for everything. */
static void
test_bounds_and_names(void **state)
{
	int s, e;

	(void)state;
	assert_int_equal(client_state_next(CLIENT_STATE_COUNT_, CLIENT_EV_DROP),
			 CLIENT_STATE_INVALID);
	assert_int_equal(client_state_next(CLIENT_STATE_INVALID, CLIENT_EV_DROP),
			 CLIENT_STATE_INVALID);
	assert_int_equal(client_state_next(CLIENT_HELLO, CLIENT_EV_COUNT_), CLIENT_STATE_INVALID);
	assert_string_equal(fsm_state_name(&client_fsm, CLIENT_STATE_INVALID), "invalid");
	assert_string_equal(fsm_event_name(&client_fsm, CLIENT_EV_COUNT_), "invalid");
	for (s = 0; s < CLIENT_STATE_COUNT_; s++)
		assert_string_not_equal(fsm_state_name(&client_fsm, s), "invalid");
	for (e = 0; e < CLIENT_EV_COUNT_; e++)
		assert_string_not_equal(fsm_event_name(&client_fsm, e), "invalid");
	assert_string_equal(fsm_state_name(&client_fsm, CLIENT_LINGERING), "lingering");
	assert_string_equal(fsm_event_name(&client_fsm, CLIENT_EV_READ_ALL), "read_all");
	assert_string_equal(fsm_event_name(&client_fsm, CLIENT_EV_RELOAD), "reload");
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
