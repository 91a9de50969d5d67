/* test_fsm.c: unit tests of common/fsm.c (a lifecycle's table) and
 * common/nametab.h (names by value), on a small lifecycle of their own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fsm.h"
#include "nametab.h"

enum door { DOOR_OPEN, DOOR_SHUT, DOOR_LOCKED, DOOR_COUNT_ };
enum door_ev { EV_PUSH, EV_PULL, EV_LOCK, EV_UNLOCK, EV_COUNT_ };

static const char *const door_names[DOOR_COUNT_] = {
	[DOOR_OPEN] = "open",
	[DOOR_SHUT] = "shut",
	[DOOR_LOCKED] = "locked",
};

/* EV_UNLOCK has no name: its lookup answers "invalid". */
static const char *const door_ev_names[EV_COUNT_] = {
	[EV_PUSH] = "push",
	[EV_PULL] = "pull",
	[EV_LOCK] = "lock",
};

static const signed char door_table[DOOR_COUNT_][EV_COUNT_] = {
	[DOOR_OPEN] = {[EV_PUSH] = FSM_TO(DOOR_SHUT)},
	[DOOR_SHUT] = {[EV_PULL] = FSM_TO(DOOR_OPEN), [EV_LOCK] = FSM_TO(DOOR_LOCKED)},
	[DOOR_LOCKED] = {[EV_UNLOCK] = FSM_TO(DOOR_SHUT)},
};

static const struct fsm door = FSM_INIT("door", door_table, door_names, door_ev_names);

/* FSM_INIT takes the sizes from the arrays. */
static void
test_init_sizes(void **state)
{
	(void)state;
	assert_string_equal(door.name, "door");
	assert_int_equal(door.nstates, DOOR_COUNT_);
	assert_int_equal(door.nevents, EV_COUNT_);
}

/* Every pair written leads where it says; every other pair is -1. */
static void
test_every_pair(void **state)
{
	int s, e, valid = 0;

	(void)state;
	for (s = 0; s < DOOR_COUNT_; s++)
		for (e = 0; e < EV_COUNT_; e++) {
			int want = door_table[s][e] - 1;

			assert_int_equal(fsm_next(&door, s, e), want);
			valid += want >= 0;
		}
	assert_int_equal(valid, 4);
	assert_int_equal(fsm_next(&door, DOOR_OPEN, EV_PUSH), DOOR_SHUT);
	assert_int_equal(fsm_next(&door, DOOR_LOCKED, EV_UNLOCK), DOOR_SHUT);
}

/* A pair that cannot happen, and states or events out of range. */
static void
test_cannot_happen(void **state)
{
	(void)state;
	assert_int_equal(fsm_next(&door, DOOR_OPEN, EV_PULL), -1);
	assert_int_equal(fsm_next(&door, DOOR_LOCKED, EV_PULL), -1);
	assert_int_equal(fsm_next(&door, DOOR_COUNT_, EV_PUSH), -1);
	assert_int_equal(fsm_next(&door, -1, EV_PUSH), -1);
	assert_int_equal(fsm_next(&door, DOOR_OPEN, EV_COUNT_), -1);
	assert_int_equal(fsm_next(&door, DOOR_OPEN, -1), -1);
	assert_int_equal(fsm_next(&door, 1000, 1000), -1);
}

/* An entry outside the states (a typo in a table) is not a state. */
static void
test_bad_entry(void **state)
{
	static const signed char bad_table[2][1] = {{FSM_TO(2)}, {-7}};
	static const char *const names[2] = {"a", "b"};
	static const char *const evs[1] = {"e"};
	static const struct fsm bad = FSM_INIT("bad", bad_table, names, evs);

	(void)state;
	assert_int_equal(fsm_next(&bad, 0, 0), -1);
	assert_int_equal(fsm_next(&bad, 1, 0), -1);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(fsm_state_name(&door, DOOR_LOCKED), "locked");
	assert_string_equal(fsm_event_name(&door, EV_LOCK), "lock");
	assert_string_equal(fsm_state_name(&door, DOOR_COUNT_), "invalid");
	assert_string_equal(fsm_state_name(&door, -1), "invalid");
	assert_string_equal(fsm_event_name(&door, EV_COUNT_), "invalid");
	assert_string_equal(fsm_event_name(&door, EV_UNLOCK), "invalid");
}

/* nametab: in range, past the end, negative, a hole; and the reverse. */
static void
test_nametab(void **state)
{
	static const char *const tab[] = {[0] = "zero", [2] = "two", [3] = "three"};

	(void)state;
	assert_string_equal(nametab_name(tab, 0, "?"), "zero");
	assert_string_equal(nametab_name(tab, 3, "?"), "three");
	assert_string_equal(nametab_name(tab, 1, "?"), "?");
	assert_string_equal(nametab_name(tab, 4, "?"), "?");
	assert_string_equal(nametab_name(tab, -1, "?"), "?");
	assert_string_equal(nametab_name(tab, (long long)1 << 40, "?"), "?");
	assert_int_equal(nametab_find(tab, NAMETAB_LEN(tab), 0, "two"), 2);
	assert_int_equal(nametab_find(tab, NAMETAB_LEN(tab), 0, "zero"), 0);
	/* from 1: "zero" is skipped (proto_error_from_name never answers NONE) */
	assert_int_equal(nametab_find(tab, NAMETAB_LEN(tab), 1, "zero"), -ENOENT);
	assert_int_equal(nametab_find(tab, NAMETAB_LEN(tab), 0, "one"), -ENOENT);
	assert_int_equal(nametab_find(tab, NAMETAB_LEN(tab), 0, ""), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_sizes),    cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_cannot_happen), cmocka_unit_test(test_bad_entry),
		cmocka_unit_test(test_names),	      cmocka_unit_test(test_nametab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
