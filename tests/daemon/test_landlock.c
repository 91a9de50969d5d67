/*
 * test_landlock.c: the code's Landlock ruleset, applied for real in a forked
 * child to a tree in a temporary directory: what it lets through and what it
 * stops, for whatever ABI this kernel has (the development machines have 7;
 * Debian 12's kernel has 2).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "landlock.h"

static char top[64];

/* Make a file with some content. */
static void
put(const char *rel, const char *text)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int
setup(void **state)
{
	char path[256];
	static const char *const dirs[] = {"root",	"root/ws",  "root/ws/a",
					   "root/ws/b", "root/dev", "root/usr"};
	size_t i;

	snprintf(top, sizeof(top), "/tmp/airlock-landlock-XXXXXX");
	if (mkdtemp(top) == NULL)
		return -1;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", top, dirs[i]);
		if (mkdir(path, 0755) < 0)
			return -1;
	}
	put("root/usr/lib.txt", "library");
	put("root/dev/null", "");
	put("root/top.txt", "top");
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

/* In the child: 0 if path opens with flags, else errno. */
static int
try_open(const char *rel, int flags)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * The child's checks, one bit each in its exit status (0: all held):
 * the ruleset is built and enforced; reads everywhere beneath root; writes
 * and creation beneath ws; writes but no creation beneath dev; no write,
 * creation or removal elsewhere; nothing outside root at all.
 */
static int
child(int abi)
{
	char root[128], ws[128], dev[128];
	const char *rw[2] = {ws, NULL}, *wo[2] = {dev, NULL};
	struct landlock_rules ll;
	int fail = 0;

	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(ws, sizeof(ws), "%s/root/ws", top);
	snprintf(dev, sizeof(dev), "%s/root/dev", top);
	if (landlock_prepare(abi, root, rw, wo, &ll) < 0 || ll.fd < 0)
		return 1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || landlock_enforce(&ll) < 0 || ll.fd != -1)
		return 1;
	if (try_open("root/usr/lib.txt", O_RDONLY) != 0 || try_open("root/top.txt", O_RDONLY) != 0)
		fail |= 2;
	if (try_open("root/ws/new.txt", O_WRONLY | O_CREAT) != 0)
		fail |= 4;
	/* A file moved to another directory of the workspace (git's objects,
	 * pip's installs): ABI 1 refuses it, which is why it is not used. */
	{
		char from[256], to[256];

		snprintf(from, sizeof(from), "%s/root/ws/a/f", top);
		snprintf(to, sizeof(to), "%s/root/ws/b/f", top);
		if (try_open("root/ws/a/f", O_WRONLY | O_CREAT) != 0 || rename(from, to) != 0)
			fail |= 4;
		else
			(void)rename(to, from);
	}
	if (try_open("root/dev/null", O_WRONLY) != 0 ||
	    try_open("root/dev/made", O_WRONLY | O_CREAT) != EACCES)
		fail |= 8;
	if (try_open("root/usr/lib.txt", O_WRONLY) != EACCES ||
	    try_open("root/usr/new.txt", O_WRONLY | O_CREAT) != EACCES)
		fail |= 16;
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/root/top.txt", top);
		if (unlink(path) == 0 || errno != EACCES)
			fail |= 16;
	}
	if (try_open("outside.txt", O_WRONLY | O_CREAT) != EACCES ||
	    try_open("", O_RDONLY) != EACCES)
		fail |= 32;
	/* ABI 6 scopes signals: the parent is outside the child's domain. */
	if (abi >= 6 && (kill(getppid(), 0) == 0 || errno != EPERM))
		fail |= 64;
	return fail;
}

static void
test_abi(void **state)
{
	/* The machines this suite runs on have Landlock: a kernel without it
	 * must not pass this test by accident. */
	assert_true(landlock_abi() >= 1);
}

static void
test_enforced(void **state)
{
	int abi = landlock_abi(), status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child(abi));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) != 0)
		print_error("landlock child failed checks 0x%x (abi %d)\n", WEXITSTATUS(status),
			    abi);
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Each older ABI the kernel also accepts builds and holds the same way. */
static void
test_older_abis(void **state)
{
	int abi, status;

	for (abi = 2; abi < landlock_abi(); abi++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(child(abi));
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			print_error("abi %d: checks 0x%x\n", abi, WEXITSTATUS(status));
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

/* ABI 1 is not used: its rules refuse renames between directories. */
static void
test_abi1_unused(void **state)
{
	assert_int_equal(landlock_usable_abi(0), 0);
	assert_int_equal(landlock_usable_abi(1), 0);
	assert_int_equal(landlock_usable_abi(2), 2);
	assert_int_equal(landlock_usable_abi(7), 7);
}

/* ABI 0 (no Landlock): nothing is built and enforcing is a no-op. */
static void
test_off(void **state)
{
	struct landlock_rules ll;

	assert_int_equal(landlock_prepare(0, "/", NULL, NULL, &ll), 0);
	assert_int_equal(ll.fd, -1);
	assert_int_equal(landlock_enforce(&ll), 0);
}

/* A path that does not exist is an error, not a hole. */
static void
test_missing_path(void **state)
{
	static const char *const rw[] = {"/nonexistent/airlock", NULL};
	struct landlock_rules ll;

	assert_int_equal(landlock_prepare(landlock_abi(), "/", rw, NULL, &ll), -ENOENT);
	assert_int_equal(ll.fd, -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi),	   cmocka_unit_test(test_enforced),
		cmocka_unit_test(test_older_abis), cmocka_unit_test(test_abi1_unused),
		cmocka_unit_test(test_off),	   cmocka_unit_test(test_missing_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
