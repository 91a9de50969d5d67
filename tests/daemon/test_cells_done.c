/* test_cells_done.c: unit tests of daemon/supervisor/cells_done.c (the
 * done pipe a cell's end is read from), over a real pipe. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cells_done.h"

static void
put(int wr, const void *buf, size_t len)
{
	assert_int_equal(write(wr, buf, len), (ssize_t)len);
}

static void
put_cell(int wr, uint64_t n)
{
	put(wr, &n, sizeof(n));
}

/* Both ends close-on-exec, the read end non-blocking, the pipe in packet
 * mode. */
static void
test_pipe_flags(void **state)
{
	int rd, wr;

	(void)state;
	assert_int_equal(cells_done_pipe(&rd, &wr), 0);
	assert_true(fcntl(rd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(wr, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(rd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(wr, F_GETFL) & O_DIRECT);
	assert_false(cells_done_read(rd, 1)); /* empty: no wait */
	close(rd);
	close(wr);
}

/* The number of the cell timed ends it; another number, a packet of
 * another size, or none timed does not. */
static void
test_numbers(void **state)
{
	uint8_t nine[9];
	uint64_t n = 7;
	int rd, wr;

	(void)state;
	assert_int_equal(cells_done_pipe(&rd, &wr), 0);
	put_cell(wr, 7);
	assert_true(cells_done_read(rd, 7));
	put_cell(wr, 8);
	assert_false(cells_done_read(rd, 7));
	put_cell(wr, 7);
	assert_false(cells_done_read(rd, 0)); /* no cell timed: dropped */
	assert_false(cells_done_read(rd, 7)); /* and gone */
	memcpy(nine, &n, sizeof(n));
	nine[8] = 'x';
	put(wr, nine, sizeof(nine)); /* the number and more: not the number */
	assert_false(cells_done_read(rd, 7));
	put(wr, "abc", 3);
	put_cell(wr, 7); /* a short packet does not shift the next */
	assert_true(cells_done_read(rd, 7));
	close(rd);
	close(wr);
}

/* A flood is read CELLS_DONE_READS packets at a time: the number behind
 * them is seen at a later call. */
static void
test_flood_bounded(void **state)
{
	int rd, wr, k;

	(void)state;
	assert_int_equal(cells_done_pipe(&rd, &wr), 0);
	/* A packet pipe holds 16 packets by default (a page each): grow it
	 * so that the flood fits, or take what it holds. */
	(void)fcntl(wr, F_SETPIPE_SZ, 1 << 20);
	for (k = 0; k < CELLS_DONE_READS; k++)
		put_cell(wr, 1);
	put_cell(wr, 2);
	assert_false(cells_done_read(rd, 2));
	assert_true(cells_done_read(rd, 2));
	close(rd);
	close(wr);
}

/* No writer left: read sees the end at once, and says no. */
static void
test_no_writer(void **state)
{
	int rd, wr;

	(void)state;
	assert_int_equal(cells_done_pipe(&rd, &wr), 0);
	put_cell(wr, 3);
	close(wr);
	assert_true(cells_done_read(rd, 3));
	assert_false(cells_done_read(rd, 3));
	close(rd);
}

/* A bad fd is no cell's end. */
static void
test_bad_fd(void **state)
{
	(void)state;
	assert_false(cells_done_read(-1, 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_flags),    cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_flood_bounded), cmocka_unit_test(test_no_writer),
		cmocka_unit_test(test_bad_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
