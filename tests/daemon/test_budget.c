/* test_budget.c: unit tests of daemon/frontend/budget.c (per-uid and global bounds). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "budget.h"
#include "memfd.h"

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

/* A sealed memfd of len bytes of data, as the daemon sends. */
static int
data_memfd(size_t len)
{
	char *buf = malloc(len);
	int fd;

	assert_non_null(buf);
	memset(buf, 'x', len);
	assert_int_equal(memfd_sealed_create("held", buf, len, &fd), 0);
	free(buf);
	return fd;
}

/*
 * A memfd given away stays charged while the description given is open or
 * mapped anywhere, and is given back at the sweep after its last close;
 * other uids' and other memfds' charges are untouched.
 */
static void
test_held_until_let_go(void **state)
{
	struct budget b;
	int m1 = data_memfd(MIB), m2 = data_memfd(MIB), g1, g2;
	uint64_t n1 = budget_fd_bytes(m1);
	void *map;

	(void)state;
	budget_init(&b, 100);
	assert_int_equal(memfd_give(m1, &g1), 0);
	assert_int_equal(memfd_give(m2, &g2), 0);
	/* Only what was charged may be held. */
	assert_int_equal(budget_hold(&b, 1000, m1, n1, 64), -EINVAL);
	assert_int_equal(budget_charge(&b, 1000, 2 * n1, 0, 48 * MIB, 64), 0);
	assert_int_equal(budget_hold(&b, 1000, m1, n1, 64), 0);
	assert_int_equal(budget_hold(&b, 1000, m2, n1, 64), 0);
	assert_int_equal(budget_held(&b, 1000), 2);
	assert_int_equal(budget_held(&b, 1001), 0);
	/* Both given descriptions are open: nothing is let go. */
	assert_int_equal(budget_sweep(&b, 0, true), 0);
	assert_int_equal(budget_bytes(&b, 1000), 2 * n1);
	/* A mapping keeps the description after its fd is closed. */
	map = mmap(NULL, MIB, PROT_READ, MAP_SHARED, g1, 0);
	assert_true(map != MAP_FAILED);
	close(g1);
	assert_int_equal(budget_sweep(&b, 1000, false), 0);
	assert_int_equal(budget_bytes(&b, 1000), 2 * n1);
	munmap(map, MIB);
	/* Another uid's sweep does not look at uid 1000's. */
	assert_int_equal(budget_sweep(&b, 1001, false), 0);
	assert_int_equal(budget_sweep(&b, 1000, false), 1);
	assert_int_equal(budget_bytes(&b, 1000), n1);
	assert_int_equal(budget_held(&b, 1000), 1);
	close(g2);
	assert_int_equal(budget_sweep(&b, 0, true), 1);
	assert_int_equal(budget_bytes(&b, 1000), 0);
	assert_int_equal(budget_held(&b, 1000), 0);
	assert_int_equal(b.nheld, 0);
	budget_free(&b);
}

/* At most held_max probes (a quarter of fds_max) are held in all. */
static void
test_held_max(void **state)
{
	struct budget b;
	int m[3], g[3], i;

	(void)state;
	budget_init(&b, 8);
	assert_int_equal(b.held_max, 2);
	assert_int_equal(budget_charge(&b, 1, 3 * 4096, 0, MIB, 1), 0);
	for (i = 0; i < 3; i++) {
		m[i] = data_memfd(4096);
		assert_int_equal(memfd_give(m[i], &g[i]), 0);
	}
	assert_int_equal(budget_hold(&b, 1, m[0], 4096, 64), 0);
	assert_int_equal(budget_hold(&b, 1, m[1], 4096, 64), 0);
	assert_int_equal(budget_hold(&b, 1, m[2], 4096, 64), -ENOSPC);
	close(g[0]);
	assert_int_equal(budget_sweep(&b, 1, false), 1);
	assert_int_equal(budget_hold(&b, 1, m[2], 4096, 64), 0);
	budget_free(&b);
	close(g[1]);
	close(g[2]);
}

/*
 * At most max_held probes per uid, whatever room is left in all: one uid
 * cannot take the others' share; budget_held_room() says what is left.
 */
static void
test_held_per_uid(void **state)
{
	struct budget b;
	int m[4], g[4], i;

	(void)state;
	budget_init(&b, 100);
	assert_int_equal(b.held_max, 25);
	assert_int_equal(budget_held_room(&b, 1, 2), 2);
	assert_int_equal(budget_charge(&b, 1, 3 * 4096, 0, MIB, 4), 0);
	assert_int_equal(budget_charge(&b, 2, 4096, 0, MIB, 4), 0);
	for (i = 0; i < 4; i++) {
		m[i] = data_memfd(4096);
		assert_int_equal(memfd_give(m[i], &g[i]), 0);
	}
	assert_int_equal(budget_hold(&b, 1, m[0], 4096, 2), 0);
	assert_int_equal(budget_hold(&b, 1, m[1], 4096, 2), 0);
	assert_int_equal(budget_held_room(&b, 1, 2), 0);
	assert_int_equal(budget_hold(&b, 1, m[2], 4096, 2), -ENOSPC);
	/* Another uid's room is its own. */
	assert_int_equal(budget_held_room(&b, 2, 2), 2);
	assert_int_equal(budget_hold(&b, 2, m[3], 4096, 2), 0);
	/* Uid 1's sweep probes its own only: uid 2's let-go one stays. */
	close(g[3]);
	assert_int_equal(budget_sweep(&b, 1, false), 0);
	assert_int_equal(budget_held(&b, 2), 1);
	assert_int_equal(budget_sweep(&b, 2, false), 1);
	assert_int_equal(budget_held(&b, 2), 0);
	assert_int_equal(budget_bytes(&b, 2), 0);
	/* Let one go: room again. */
	close(g[0]);
	assert_int_equal(budget_sweep(&b, 1, false), 1);
	assert_int_equal(budget_held_room(&b, 1, 2), 1);
	assert_int_equal(budget_hold(&b, 1, m[2], 4096, 2), 0);
	assert_int_equal(b.nheld, 2);
	budget_free(&b);
	close(g[1]);
	close(g[2]);
}

/* budget_free() closes the probes of what is still held. */
static void
test_free_closes_probes(void **state)
{
	struct budget b;
	int m = data_memfd(4096), g;

	(void)state;
	budget_init(&b, 100);
	assert_int_equal(memfd_give(m, &g), 0);
	assert_int_equal(budget_charge(&b, 7, 4096, 0, MIB, 1), 0);
	assert_int_equal(budget_hold(&b, 7, m, 4096, 64), 0);
	budget_free(&b);
	assert_int_equal(fcntl(m, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	close(g);
}

/*
 * The memfd given cannot be opened again by another uid through /proc (it
 * would keep the pages with a description the probe does not see); root
 * bypasses modes, so this runs as nobody in a child.
 */
static void
test_give_no_reopen(void **state)
{
	int m = data_memfd(4096), g, status;
	pid_t pid;

	(void)state;
	assert_int_equal(memfd_give(m, &g), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char path[64];

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", g);
		_exit(open(path, O_RDONLY) < 0 && errno == EACCES ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (getuid() == 0)
		assert_int_equal(WEXITSTATUS(status), 0);
	close(g);
	close(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_uid_bounds),	  cmocka_unit_test(test_global_fds),
		cmocka_unit_test(test_release_clamps),	  cmocka_unit_test(test_fd_bytes_sparse),
		cmocka_unit_test(test_held_until_let_go), cmocka_unit_test(test_held_max),
		cmocka_unit_test(test_held_per_uid),	  cmocka_unit_test(test_free_closes_probes),
		cmocka_unit_test(test_give_no_reopen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
