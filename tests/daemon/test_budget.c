/* test_budget.c: unit tests of daemon/budget.c (per-uid and global bounds). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "budget.h"

#define MIB (1ULL << 20)

/* Charges fit under the uid's bytes and fds, and are refused whole past them. */
static void
test_per_uid_bounds(void **state)
{
	struct budget b;

	(void)state;
	budget_init(&b, 1000);
	assert_int_equal(budget_charge(&b, 1000, 40 * MIB, 10, 48 * MIB, 64), 0);
	assert_int_equal(budget_charge(&b, 1000, 9 * MIB, 0, 48 * MIB, 64), -ENOSPC);
	assert_int_equal(budget_charge(&b, 1000, 8 * MIB, 0, 48 * MIB, 64), 0);
	assert_int_equal(budget_charge(&b, 1000, 0, 55, 48 * MIB, 64), -ENOSPC);
	assert_int_equal(budget_charge(&b, 1000, 0, 54, 48 * MIB, 64), 0);
	/* A refusal charged nothing. */
	assert_int_equal(budget_bytes(&b, 1000), 48 * MIB);
	assert_int_equal(budget_fds(&b, 1000), 64);
	assert_int_equal(budget_bytes_left(&b, 1000, 48 * MIB), 0);
	/* Another uid has its own budget. */
	assert_int_equal(budget_charge(&b, 1001, 48 * MIB, 64, 48 * MIB, 64), 0);
	assert_int_equal(b.bytes, 96 * MIB);
	assert_int_equal(b.fds, 128);
	budget_release(&b, 1000, 48 * MIB, 64);
	assert_int_equal(budget_bytes(&b, 1000), 0);
	assert_int_equal(budget_bytes_left(&b, 1000, 48 * MIB), 48 * MIB);
	budget_free(&b);
}

/* The fds of all uids together stop at fds_max. */
static void
test_global_fds(void **state)
{
	struct budget b;

	(void)state;
	budget_init(&b, 100);
	assert_int_equal(budget_charge(&b, 1, 0, 60, UINT64_MAX, 256), 0);
	assert_int_equal(budget_charge(&b, 2, 0, 41, UINT64_MAX, 256), -ENOSPC);
	assert_int_equal(budget_charge(&b, 2, 0, 40, UINT64_MAX, 256), 0);
	budget_release(&b, 1, 0, 60);
	assert_int_equal(budget_charge(&b, 2, 0, 60, UINT64_MAX, 256), 0);
	assert_int_equal(b.fds, 100);
	budget_free(&b);
}

/* Releasing more than was charged never goes below zero; an unknown uid is a no-op. */
static void
test_release_clamps(void **state)
{
	struct budget b;

	(void)state;
	budget_init(&b, 100);
	assert_int_equal(budget_charge(&b, 7, 100, 3, UINT64_MAX, 256), 0);
	budget_release(&b, 7, 1000, 30);
	assert_int_equal(budget_bytes(&b, 7), 0);
	assert_int_equal(budget_fds(&b, 7), 0);
	assert_int_equal(b.bytes, 0);
	assert_int_equal(b.fds, 0);
	budget_release(&b, 8, 1, 1);
	assert_true(TAILQ_EMPTY(&b.uids));
	budget_free(&b);
}

/* A sparse file costs its allocated pages, not its size. */
static void
test_fd_bytes_sparse(void **state)
{
	char path[] = "/tmp/airlock-budget-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, (off_t)(64 * MIB)), 0);
	assert_true(budget_fd_bytes(fd) < MIB);
	assert_int_equal(pwrite(fd, "x", 1, 0), 1);
	assert_true(budget_fd_bytes(fd) > 0);
	close(fd);
	assert_int_equal(budget_fd_bytes(-1), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_uid_bounds),
		cmocka_unit_test(test_global_fds),
		cmocka_unit_test(test_release_clamps),
		cmocka_unit_test(test_fd_bytes_sparse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
