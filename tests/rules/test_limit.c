/*
 * test_limit.c: the table of limits (common/limit.c). Every value of enum
 * proto_limit must have a complete, consistent row: a missing row would
 * otherwise compile and leave a NULL name on the wire, a 0/0 default and
 * ceiling, and a value parsed as the wrong kind.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "limit.h"

/* Whether s ends with suffix. */
static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void
test_rows_complete(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		const struct limit_row *r = &limit_table[i];

		print_message("limit %zu\n", i);
		assert_non_null(r->name);
		assert_true(r->name[0] != '\0');
		assert_true(r->kind == LIMIT_KIND_COUNT || r->kind == LIMIT_KIND_BYTES ||
			    r->kind == LIMIT_KIND_MS);
		assert_true(r->def > 0);
		assert_true(r->def <= r->ceiling);
		assert_true(r->ceiling <= r->bound);
		assert_non_null(r->doc);
		assert_true(r->doc[0] != '\0');
		/* airlockd.conf(5): the keys that end in _bytes are sizes (K/M/G),
		 * times are in milliseconds. */
		assert_int_equal(ends_with(r->name, "_bytes"), r->kind == LIMIT_KIND_BYTES);
		assert_int_equal(ends_with(r->name, "_ms"), r->kind == LIMIT_KIND_MS);
		/* NAME_max is the ceiling's config key: no name may end so. */
		assert_false(ends_with(r->name, "_max"));
		assert_string_equal(proto_limit_name((enum proto_limit)i), r->name);
		for (j = 0; j < i; j++) {
			assert_string_not_equal(limit_table[j].name, r->name);
			if (r->option != NULL && limit_table[j].option != NULL)
				assert_string_not_equal(limit_table[j].option, r->option);
		}
	}
}

static void
test_from_name(void **state)
{
	enum proto_limit l;
	size_t i;

	(void)state;
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		l = PROTO_LIMIT_COUNT_;
		assert_int_equal(
			limit_from_name(limit_table[i].name, strlen(limit_table[i].name), &l), 0);
		assert_int_equal(l, i);
	}
	/* Counted, not NUL-terminated: "wall_ms_max" cut to 7 is "wall_ms". */
	assert_int_equal(limit_from_name("wall_ms_max", 7, &l), 0);
	assert_int_equal(l, PROTO_LIMIT_WALL_MS);
	assert_int_equal(limit_from_name("wall_ms_max", 11, &l), -ENOENT);
	assert_int_equal(limit_from_name("wall", 4, &l), -ENOENT);
	assert_int_equal(limit_from_name("", 0, &l), -ENOENT);
	assert_int_equal(limit_from_name(NULL, 0, &l), -ENOENT);
	assert_string_equal(limit_kind_metavar(LIMIT_KIND_MS), "SECONDS");
	assert_string_equal(limit_kind_metavar(LIMIT_KIND_BYTES), "SIZE");
	assert_string_equal(limit_kind_metavar(LIMIT_KIND_COUNT), "N");
}

/*
 * The enforcement columns, every row: an rlimit the kernel knows or -1, used
 * by one row only; every rlimit lowered at a pre-started interpreter's
 * hand-off and nothing else (sandbox_prestart.c lowers by prlimit, so a row
 * without an rlimit could not be, and run_pool.c would refuse a run for a
 * ceiling the interpreter never had); a cgroup file only for a limit that
 * ends the run with its own outcome; and the enforcement as built, pinned.
 */
static void
test_enforcement(void **state)
{
	static const struct {
		enum proto_limit limit;
		int rlimit;
		const char *cgroup_file;
		enum proto_outcome outcome;
	} pinned[] = {
		{PROTO_LIMIT_WALL_MS, -1, NULL, PROTO_OUTCOME_WALL_LIMIT},
		{PROTO_LIMIT_CPU_MS, RLIMIT_CPU, NULL, PROTO_OUTCOME_CPU_LIMIT},
		{PROTO_LIMIT_MEMORY_BYTES, RLIMIT_AS, "memory.max", PROTO_OUTCOME_MEMORY_LIMIT},
		{PROTO_LIMIT_PROCESSES, RLIMIT_NPROC, "pids.max", PROTO_OUTCOME_PROCESS_LIMIT},
		{PROTO_LIMIT_OPEN_FILES, RLIMIT_NOFILE, NULL, PROTO_OUTCOME_EXITED},
		{PROTO_LIMIT_FILE_SIZE_BYTES, RLIMIT_FSIZE, NULL, PROTO_OUTCOME_EXITED},
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		const struct limit_row *r = &limit_table[i];

		print_message("limit %s\n", r->name);
		assert_true(r->rlimit == -1 || (r->rlimit >= 0 && r->rlimit < RLIM_NLIMITS));
		assert_true(r->rlimit != RLIMIT_CORE);
		assert_int_equal(r->prestart_lower, r->rlimit >= 0);
		assert_true((unsigned)r->outcome < PROTO_OUTCOME_COUNT_);
		assert_true(r->outcome != PROTO_OUTCOME_SIGNALED &&
			    r->outcome != PROTO_OUTCOME_ERROR &&
			    r->outcome != PROTO_OUTCOME_CANCELLED);
		if (r->cgroup_file != NULL) {
			assert_true(r->cgroup_file[0] != '\0');
			assert_int_not_equal(r->outcome, PROTO_OUTCOME_EXITED);
		}
		for (j = 0; j < i; j++)
			if (r->rlimit >= 0)
				assert_int_not_equal(limit_table[j].rlimit, r->rlimit);
	}
	for (i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
		const struct limit_row *r = &limit_table[pinned[i].limit];

		print_message("pinned %s\n", r->name);
		assert_int_equal(r->rlimit, pinned[i].rlimit);
		if (pinned[i].cgroup_file == NULL)
			assert_null(r->cgroup_file);
		else
			assert_string_equal(r->cgroup_file, pinned[i].cgroup_file);
		assert_int_equal(r->outcome, pinned[i].outcome);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_complete),
		cmocka_unit_test(test_from_name),
		cmocka_unit_test(test_enforcement),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
