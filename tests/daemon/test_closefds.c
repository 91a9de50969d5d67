/*
 * test_closefds.c: unit tests of common/closefds.c. Each case runs in a
 * child (closing every fd of the test runner would end it): fds are opened,
 * closefds_except() keeps some, and the child's exit status says which fds
 * were left as they should be.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "closefds.h"

#define NOPEN 12

static bool
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/*
 * In a child: open NOPEN fds on /dev/null, keep keep[] (indexes into the
 * opened ones; -1 passes -1), and exit 0 if exactly those (and nothing
 * else) are open, 1 if closefds_except failed, 2 if the wrong fds are open.
 */
static int
run_case(const int *keep_idx, size_t nkeep)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[NOPEN], keep[CLOSEFDS_KEEP_MAX + 1];
		size_t i, k;
		int fd;

		for (i = 0; i < NOPEN; i++)
			fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		for (k = 0; k < nkeep; k++)
			keep[k] = keep_idx[k] < 0 ? -1 : fds[keep_idx[k]];
		if (closefds_except(keep, nkeep) < 0)
			_exit(1);
		for (fd = 0; fd < 1024; fd++) {
			bool want = false;

			for (k = 0; k < nkeep; k++)
				if (keep[k] == fd)
					want = true;
			if (is_open(fd) != want)
				_exit(2);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Kept fds in any order, with -1 and repeats; everything else closed,
 * stdio included. */
static void
test_keeps_listed(void **state)
{
	static const int unsorted[] = {9, 2, 11, 5};
	static const int with_holes[] = {-1, 3, 3, -1, 0};
	static const int adjacent[] = {4, 5, 6, 7};

	(void)state;
	assert_int_equal(run_case(unsorted, 4), 0);
	assert_int_equal(run_case(with_holes, 5), 0);
	assert_int_equal(run_case(adjacent, 4), 0);
}

/* Nothing kept: nothing open. */
static void
test_keeps_none(void **state)
{
	(void)state;
	assert_int_equal(run_case(NULL, 0), 0);
}

/* More than CLOSEFDS_KEEP_MAX is refused before anything is closed. */
static void
test_too_many(void **state)
{
	int keep[CLOSEFDS_KEEP_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < CLOSEFDS_KEEP_MAX + 1; i++)
		keep[i] = (int)i;
	assert_int_equal(closefds_except(keep, CLOSEFDS_KEEP_MAX + 1), -EINVAL);
	assert_true(is_open(0) || is_open(1) || is_open(2));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_listed),
		cmocka_unit_test(test_keeps_none),
		cmocka_unit_test(test_too_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
