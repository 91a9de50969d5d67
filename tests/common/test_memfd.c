/* test_memfd.c: unit tests of common/memfd.c: sealed memfds made from bytes
 * and from files, and their failure paths; fcntl() is a link seam (under
 * _FILE_OFFSET_BITS=64 the symbol is fcntl64) that can refuse the seals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "memfd.h"

int __real_fcntl64(int fd, int cmd, ...);
int __wrap_fcntl64(int fd, int cmd, ...);

static bool refuse_seals;

int
__wrap_fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long); /* every command used here takes one int or none */
	va_end(ap);
	if (refuse_seals && cmd == F_ADD_SEALS) {
		errno = EPERM;
		return -1;
	}
	return __real_fcntl64(fd, cmd, arg);
}

/* The number of open fds of this process. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static int
reset(void **state)
{
	(void)state;
	refuse_seals = false;
	return 0;
}

static void
test_create(void **state)
{
	uint64_t size = 0;
	char buf[8] = "";
	int fd = -1;

	(void)state;
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(memfd_check_sealed(fd, 16, &size), 0);
	assert_int_equal(size, 3);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
}

/* A refused seal: the error, no fd handed over, none left open. */
static void
test_create_seal_fails(void **state)
{
	int fd = -7, before = open_fds();

	(void)state;
	refuse_seals = true;
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fd), -EPERM);
	assert_int_equal(fd, -7);
	assert_int_equal(open_fds(), before);
}

/* A file with a hole: the copy has its bytes, its size, and is sealed. */
static int
sparse_file(void)
{
	char path[] = "/tmp/test_memfd_XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(pwrite(fd, "head", 4, 0), 4);
	assert_int_equal(pwrite(fd, "tail", 4, 1 << 20), 4);
	return fd;
}

static void
test_copy_sparse(void **state)
{
	uint64_t len = 0, size = 0, sealed = 0;
	char buf[4];
	int fd = sparse_file(), copy = -1;

	(void)state;
	assert_int_equal(memfd_sealed_copy_sparse(fd, 1 << 21, UINT64_MAX, &copy, &len, &size), 0);
	assert_int_equal(len, (1 << 20) + 4);
	assert_int_equal(size, (1 << 20) + 4);
	assert_int_equal(memfd_check_sealed(copy, 1 << 21, &sealed), 0);
	assert_int_equal(sealed, len);
	assert_int_equal(pread(copy, buf, 4, 1 << 20), 4);
	assert_memory_equal(buf, "tail", 4);
	close(copy);
	close(fd);
}

/* A refused seal after the copy: the error, outputs untouched, no fd left. */
static void
test_copy_seal_fails(void **state)
{
	uint64_t len = 99, size = 98;
	int fd = sparse_file(), copy = -7, before = open_fds();

	(void)state;
	refuse_seals = true;
	assert_int_equal(memfd_sealed_copy_sparse(fd, 1 << 21, UINT64_MAX, &copy, &len, &size),
			 -EPERM);
	assert_int_equal(copy, -7);
	assert_int_equal(len, 99);
	assert_int_equal(size, 98);
	assert_int_equal(open_fds(), before);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_create, reset),
		cmocka_unit_test_setup(test_create_seal_fails, reset),
		cmocka_unit_test_setup(test_copy_sparse, reset),
		cmocka_unit_test_setup(test_copy_seal_fails, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
