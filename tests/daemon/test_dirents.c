/*
 * test_dirents.c: unit tests of common/dirents.c on a temporary directory:
 * every entry is seen exactly once, across several getdents64 calls (the
 * names fill more than one 4 KiB buffer); an empty directory gives "." and
 * ".." only; a failing getdents64 ends the walk with its -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dirents.h"

/* Enough names of 40 bytes that their records span several buffers. */
#define NFILES 300

static char tmpdir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-dirents.XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char path[128];
	int i;

	(void)state;
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/file-%034d", tmpdir, i);
		(void)unlink(path);
	}
	return rmdir(tmpdir) < 0 ? -1 : 0;
}

/* An empty directory: "." and "..", then the end, with no error. */
static void
test_empty(void **state)
{
	struct dirents it;
	const struct dirent64 *d;
	int fd, n = 0;

	(void)state;
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	dirents_init(&it, fd);
	while ((d = dirents_next(&it)) != NULL) {
		assert_true(strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0);
		n++;
	}
	assert_int_equal(n, 2);
	assert_int_equal(it.err, 0);
	assert_null(dirents_next(&it));
	close(fd);
}

/* NFILES names: each seen once, and the walk took more than one buffer. */
static void
test_many(void **state)
{
	unsigned char seen[NFILES] = {0};
	struct dirents it;
	const struct dirent64 *d;
	char path[128];
	int fd, i, n = 0, refills = 0;

	(void)state;
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/file-%034d", tmpdir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	dirents_init(&it, fd);
	while ((d = dirents_next(&it)) != NULL) {
		if (it.off == d->d_reclen)
			refills++; /* the first entry of a fresh buffer */
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		assert_int_equal(sscanf(d->d_name, "file-%d", &i), 1);
		assert_true(i >= 0 && i < NFILES);
		assert_int_equal(seen[i], 0);
		seen[i] = 1;
		n++;
	}
	assert_int_equal(it.err, 0);
	assert_int_equal(n, NFILES);
	assert_true(refills > 1);
	close(fd);
}

/* getdents64 on something that is not a directory: NULL, and the error. */
static void
test_error(void **state)
{
	struct dirents it;
	int fd;

	(void)state;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	dirents_init(&it, fd);
	assert_null(dirents_next(&it));
	assert_int_equal(it.err, -ENOTDIR);
	assert_null(dirents_next(&it));
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many, setup, teardown),
		cmocka_unit_test(test_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
