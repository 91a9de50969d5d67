/*
 * test_keeper_tar.c: unit tests of daemon/keeper/keeper_tar.c, the keeper's
 * archive of its workspace, read back by the frontend's strict reader
 * (session_archive.c): both sides of the format, on a tree in a temporary
 * directory. Files and directories come back with their contents; a
 * symbolic link (to a host file), a FIFO and a name past 255 bytes are
 * left out and counted, and nothing a link points to is in the archive.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "keeper_tar.h"
#include "session_archive.h"

struct seen {
	char paths[16][300];
	char data[16][32];
	bool dir[16];
	int n;
};

static int
collect(const struct session_archive_entry *e, void *arg)
{
	struct seen *s = arg;

	if (s->n == 16)
		return -E2BIG;
	snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", e->path);
	snprintf(s->data[s->n], sizeof(s->data[0]), "%.*s", (int)e->size, (const char *)e->data);
	s->dir[s->n] = e->dir;
	s->n++;
	return 0;
}

static int
find(const struct seen *s, const char *path)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->paths[i], path) == 0)
			return i;
	return -1;
}

static void
put(int dir, const char *name, const char *data)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static void
test_round_trip(void **state)
{
	char tmpl[] = "/tmp/test_keeper_tar.XXXXXX", longname[201], longpath[400];
	struct seen s = {0};
	uint64_t bytes = 0;
	uint32_t skipped = 0;
	size_t n = 0;
	void *map;
	int root, out, i;
	char why[256];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	root = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	put(root, "a.txt", "hello");
	assert_int_equal(mkdirat(root, "d", 0755), 0);
	assert_int_equal(mkdirat(root, "d/e", 0755), 0);
	put(root, "d/e/big", "0123456789abcdef0123");
	put(root, "empty", "");
	assert_int_equal(symlinkat("/etc/passwd", root, "passwd"), 0);
	assert_int_equal(symlinkat("/etc", root, "etc"), 0);
	assert_int_equal(mkfifoat(root, "fifo", 0600), 0);
	/* A path of 100 + 1 + 200 bytes: more than ustar holds. */
	memset(longname, 'x', 200);
	longname[200] = '\0';
	memset(longpath, 'p', 100);
	longpath[100] = '\0';
	assert_int_equal(mkdirat(root, longpath, 0755), 0);
	snprintf(longpath + 100, sizeof(longpath) - 100, "/%s", longname);
	put(root, longpath, "too long");
	out = memfd_create("test-tar", MFD_CLOEXEC);
	assert_true(out >= 0);
	assert_int_equal(keeper_tar_write(root, out, &bytes, &skipped), 0);
	assert_int_equal(skipped, 4); /* two links, the FIFO, the long name */
	assert_int_equal(lseek(out, 0, SEEK_END), (off_t)bytes);
	map = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, out, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(session_archive_walk(map, bytes, 25, collect, &s, why, sizeof(why), &n),
			 0);
	assert_int_equal(n, 6); /* a.txt d d/e d/e/big empty pppp...(dir) */
	i = find(&s, "a.txt");
	assert_true(i >= 0);
	assert_string_equal(s.data[i], "hello");
	assert_true(s.dir[find(&s, "d")]);
	assert_true(find(&s, "d") < find(&s, "d/e/big"));
	assert_string_equal(s.data[find(&s, "d/e/big")], "0123456789abcdef0123");
	assert_true(find(&s, "empty") >= 0);
	assert_int_equal(find(&s, "passwd"), -1);
	assert_int_equal(find(&s, "etc"), -1);
	/* The contents add up to 25 bytes: one less is past the quota. */
	assert_int_equal(session_archive_walk(map, bytes, 24, NULL, NULL, why, sizeof(why), &n),
			 -EFBIG);
	munmap(map, bytes);
	/* Somewhere it cannot write: the error, not a short archive. */
	assert_int_equal(keeper_tar_write(root, -1, &bytes, &skipped), -EBADF);
	close(out);
	close(root);
	{
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
		assert_int_equal(system(cmd), 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
