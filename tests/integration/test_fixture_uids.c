/*
 * test_fixture_uids.c: the fixture moves the uids a test writes into its
 * build directory's band (fixture.h, tests/meson.build), so that two build
 * directories' suites run at once without sharing a host uid.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"

/* Every uid_base line is moved, wherever it stands; nothing else is. */
static void
test_move_every_base(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(fixture_move_uid_bases("[daemon]\nmax_runs = 2\n[sandbox]\n"
						"uid_base = 740000\nuid_count = 64\n",
						2000000, buf, sizeof(buf)),
			 0);
	assert_string_equal(
		buf, "[daemon]\nmax_runs = 2\n[sandbox]\nuid_base = 2740000\nuid_count = 64\n");
	assert_int_equal(fixture_move_uid_bases("uid_base = 1600000\n[x]\nuid_base = 700000",
						4000000, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "uid_base = 5600000\n[x]\nuid_base = 4700000");
	/* Not a uid_base line: a comment, another key, a value not a number. */
	assert_int_equal(fixture_move_uid_bases("# uid_base = 7\nmy_uid_base = 7\nuid_base = x\n",
						2000000, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "# uid_base = 7\nmy_uid_base = 7\nuid_base = x\n");
	/* Offset 0 changes nothing. */
	assert_int_equal(fixture_move_uid_bases("uid_base = 700000\n", 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "uid_base = 700000\n");
}

/* A base at or above the band is already moved (handed out by meson, or
 * the by-hand range) and stays: moving it again would leave the range the
 * test counts. */
static void
test_moved_base_stays(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(fixture_move_uid_bases("uid_base = 2900000\n", 2000000, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "uid_base = 2900000\n");
	assert_int_equal(fixture_uid(FIXTURE_UID_BASE_BY_HAND), FIXTURE_UID_BASE_BY_HAND);
	assert_int_equal(fixture_uid(FIXTURE_UID_BAND - 1),
			 FIXTURE_UID_BAND - 1 + fixture_uid_shift());
	assert_int_equal(fixture_uid(fixture_uid(700000)), fixture_uid(700000));
}

/* Too small a buffer, and a value moved past 32 bits, fail; never cut. */
static void
test_move_errors(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(fixture_move_uid_bases("uid_base = 700000\n", 2000000, buf, 12), -E2BIG);
	assert_int_equal(fixture_move_uid_bases("[sandbox]\nuid_base = 700000\n", 2000000, buf, 20),
			 -E2BIG);
	assert_int_equal(fixture_move_uid_bases("0123456789", 0, buf, 10), -E2BIG);
	assert_int_equal(fixture_move_uid_bases("0123456789", 0, buf, 11), 0);
	assert_int_equal(fixture_move_uid_bases("x", 0, buf, 0), -E2BIG);
	assert_int_equal(
		fixture_move_uid_bases("uid_base = 700000\n", 4294967000U, buf, sizeof(buf)),
		-ERANGE);
	assert_int_equal(
		fixture_move_uid_bases("uid_base = 99999999999999999999\n", 0, buf, sizeof(buf)),
		-ERANGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_every_base),
		cmocka_unit_test(test_moved_base_stays),
		cmocka_unit_test(test_move_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
