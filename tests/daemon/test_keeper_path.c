/*
 * test_keeper_path.c: unit tests of daemon/keeper/keeper_path.c, the keeper's walk
 * to a path's parent beneath the workspace, on a tree in a temporary
 * directory: directories made on the way, and every refusal (empty, ".",
 * "..", absolute, a link at any component, a file as a directory, too long),
 * with no fd left behind.
 */
#include <dirent.h>
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

#include "keeper_path.h"
#include "plan.h"
#include "proto.h"

struct tree {
	char dir[64];
	int root;
};

/* A fresh tree per test: a file f, a link lnk -> ".", a link up -> "..". */
static int
setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	int fd;

	if (t == NULL)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/airlock-keeper-path-XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	t->root = open(t->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->root < 0)
		return -1;
	fd = openat(t->root, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || symlinkat(".", t->root, "lnk") < 0 || symlinkat("..", t->root, "up") < 0)
		return -1;
	close(fd);
	*state = t;
	return 0;
}

/* Remove the tree (at most three levels, which is all the tests make). */
static void
rm_tree(int dfd, const char *name, int depth)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd < 0 || depth > 4) {
		(void)unlinkat(dfd, name, 0);
		if (fd >= 0)
			close(fd);
		return;
	}
	d = fdopendir(fd);
	while (d != NULL && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rm_tree(dirfd(d), e->d_name, depth + 1);
	if (d != NULL)
		closedir(d);
	(void)unlinkat(dfd, name, AT_REMOVEDIR);
}

static int
teardown(void **state)
{
	struct tree *t = *state;

	close(t->root);
	rm_tree(AT_FDCWD, t->dir, 0);
	free(t);
	return 0;
}

/* The lowest free fd: a leaked fd would take it. */
static int
lowest_free_fd(void)
{
	int fd = dup(0);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

/* keeper_path_parent's answer for path, which must be a refusal: checked
 * to leave no fd open and to write no leaf. */
static int
refused(struct tree *t, const char *path, bool mkdirs)
{
	char leaf[PROTO_NAME_MAX + 1] = "untouched";
	int before = lowest_free_fd();
	int r = keeper_path_parent(t->root, path, mkdirs, leaf, sizeof(leaf));

	assert_true(r < 0);
	assert_int_equal(lowest_free_fd(), before);
	assert_string_equal(leaf, "untouched");
	return r;
}

/* Directories are made on the way, owned by the code's uid; the fd is the
 * parent's and close-on-exec; the leaf is copied. */
static void
test_mkdirs_walk(void **state)
{
	struct tree *t = *state;
	char leaf[PROTO_NAME_MAX + 1], path[128];
	struct stat a, b;
	int fd;

	fd = keeper_path_parent(t->root, "a/b/c.txt", true, leaf, sizeof(leaf));
	assert_true(fd >= 0);
	assert_string_equal(leaf, "c.txt");
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	snprintf(path, sizeof(path), "%s/a/b", t->dir);
	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(fstat(fd, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	if (geteuid() == 0) {
		assert_int_equal(a.st_uid, PLAN_SANDBOX_UID);
		assert_int_equal(a.st_gid, PLAN_SANDBOX_GID);
	}
	close(fd);
	/* Made once: the second walk finds them. */
	fd = keeper_path_parent(t->root, "a/b/d", true, leaf, sizeof(leaf));
	assert_true(fd >= 0);
	assert_string_equal(leaf, "d");
	close(fd);
	/* A leaf alone: the root itself, a new fd. */
	fd = keeper_path_parent(t->root, "top", false, leaf, sizeof(leaf));
	assert_true(fd >= 0 && fd != t->root);
	assert_int_equal(fstat(fd, &b), 0);
	assert_int_equal(stat(t->dir, &a), 0);
	assert_true(a.st_ino == b.st_ino);
	assert_string_equal(leaf, "top");
	close(fd);
}

/* Without mkdirs a missing directory is ENOENT, and nothing is made. */
static void
test_missing_without_mkdirs(void **state)
{
	struct tree *t = *state;
	char path[128];
	struct stat st;

	assert_int_equal(refused(t, "x/y", false), -ENOENT);
	snprintf(path, sizeof(path), "%s/x", t->dir);
	assert_int_equal(stat(path, &st), -1);
}

/* Empty paths and components, ".", "..", absolute paths. */
static void
test_refused_names(void **state)
{
	struct tree *t = *state;

	assert_int_equal(refused(t, "", true), -EINVAL);
	assert_int_equal(refused(t, "/etc/passwd", true), -EINVAL);
	assert_int_equal(refused(t, "a//b", true), -EINVAL);
	assert_int_equal(refused(t, "a/", true), -EINVAL);
	assert_int_equal(refused(t, ".", true), -EINVAL);
	assert_int_equal(refused(t, "..", true), -EINVAL);
	assert_int_equal(refused(t, "a/..", true), -EINVAL);
	/* ".." as a directory leaves the root: RESOLVE_BENEATH. */
	assert_int_equal(refused(t, "../x", false), -EXDEV);
	assert_int_equal(refused(t, "../x", true), -EXDEV);
}

/* A link at any component is refused, even one that stays inside. */
static void
test_refused_links(void **state)
{
	struct tree *t = *state;

	assert_int_equal(refused(t, "lnk/x", false), -ELOOP);
	assert_int_equal(refused(t, "lnk/x", true), -ELOOP);
	assert_int_equal(refused(t, "up/x", true), -ELOOP);
	/* A link planted inside a made directory. */
	{
		char leaf[PROTO_NAME_MAX + 1];
		int fd = keeper_path_parent(t->root, "d/x", true, leaf, sizeof(leaf));

		assert_true(fd >= 0);
		assert_int_equal(symlinkat("/", fd, "out"), 0);
		close(fd);
	}
	assert_int_equal(refused(t, "d/out/etc/passwd", true), -ELOOP);
}

/* A file where a directory should be; names too long. */
static void
test_refused_shapes(void **state)
{
	struct tree *t = *state;
	char name[PROTO_NAME_MAX + 2], path[PROTO_NAME_MAX + 8];
	char leaf[8];
	int fd;

	assert_int_equal(refused(t, "f/x", true), -ENOTDIR);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/x", name);
	assert_int_equal(refused(t, path, true), -ENAMETOOLONG);
	assert_int_equal(refused(t, name, true), -ENAMETOOLONG);
	/* A leaf longer than the caller's buffer. */
	assert_int_equal(keeper_path_parent(t->root, "12345678", false, leaf, sizeof(leaf)),
			 -EINVAL);
	fd = keeper_path_parent(t->root, "1234567", false, leaf, sizeof(leaf));
	assert_true(fd >= 0);
	assert_string_equal(leaf, "1234567");
	close(fd);
}

/* keeper_path_open: beneath, no links, close-on-exec. */
static void
test_open(void **state)
{
	struct tree *t = *state;
	int fd;

	fd = keeper_path_open(t->root, "f", O_RDONLY, 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	errno = 0;
	assert_int_equal(keeper_path_open(t->root, "lnk", O_RDONLY, 0), -1);
	assert_int_equal(errno, ELOOP);
	errno = 0;
	assert_int_equal(keeper_path_open(t->root, "/etc/passwd", O_RDONLY, 0), -1);
	assert_int_equal(errno, EXDEV);
	errno = 0;
	assert_int_equal(keeper_path_open(t->root, "../", O_RDONLY, 0), -1);
	assert_int_equal(errno, EXDEV);
	fd = keeper_path_open(t->root, "new", O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mkdirs_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_without_mkdirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_shapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
