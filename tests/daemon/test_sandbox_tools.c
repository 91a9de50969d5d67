/*
 * test_sandbox_tools.c: the tool bridge's set-up in the sandbox
 * (daemon/supervisor/sandbox_tools.c), for real, in a child in new user and mount
 * namespaces: /usr read-only and a tmpfs /run with /run/tools, as the
 * sandbox's root has them. mount() is a link seam that refuses one
 * filesystem type (ENODEV, as a kernel that cannot load it does);
 * sandbox_fail() reports its step and errno on a pipe. Issue 28: on a host
 * that could not load overlayfs the module was not importable and nothing
 * said so.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdpass.h"
#include "sandbox_child.h"
#include "spawn_msg.h"

/* The filesystem type __wrap_mount refuses (NULL: none), and where (a
 * prefix of the target; NULL: anywhere). */
static const char *refuse_type;
static const char *refuse_under;
/* Where sandbox_fail reports, in the child. */
static int fail_fd = -1;

int __real_mount(const char *src, const char *dst, const char *type, unsigned long flags,
		 const void *data);
int __wrap_mount(const char *src, const char *dst, const char *type, unsigned long flags,
		 const void *data);

int
__wrap_mount(const char *src, const char *dst, const char *type, unsigned long flags,
	     const void *data)
{
	if (refuse_type != NULL && type != NULL && strcmp(type, refuse_type) == 0 &&
	    (refuse_under == NULL || strncmp(dst, refuse_under, strlen(refuse_under)) == 0)) {
		errno = ENODEV;
		return -1;
	}
	return __real_mount(src, dst, type, flags, data);
}

/* The supervisor's: report {step, err} and end the child. */
void
sandbox_fail(int step, int err)
{
	int rep[2] = {step, err};

	if (write(fail_fd, rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(98);
	_exit(97);
}

/* The first /usr/lib/python3.N/lib-dynload this host has, in buf. */
static int
find_dynload(char *buf, size_t len)
{
	struct stat st;
	int n;

	for (n = 0; n < 64; n++) {
		snprintf(buf, len, "/usr/lib/python3.%d/lib-dynload", n);
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
	}
	return -1;
}

/* Write text to path (a /proc/self file). */
static int
put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

/* In the child: new user and mount namespaces, /usr read-only (keeping the
 * flags the kernel locks), a tmpfs /run with /run/tools. */
static int
child_namespace(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	struct statvfs sv;
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (put("/proc/self/uid_map", map) < 0 || put("/proc/self/setgroups", "deny") < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (put("/proc/self/gid_map", map) < 0)
		return -1;
	if (__real_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    __real_mount("/usr", "/usr", NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    statvfs("/usr", &sv) < 0)
		return -1;
	if (sv.f_flag & ST_NOSUID)
		flags |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		flags |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		flags |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	if (__real_mount(NULL, "/usr", NULL, flags, NULL) < 0 ||
	    __real_mount("test", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0 ||
	    mkdir("/run/tools", 0755) < 0)
		return -1;
	return 0;
}

/* Run python3 -I -S -B -c code in the child's namespaces; its exit status. */
static int
child_python(const char *code)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/usr/bin/python3", "python3", "-I", "-S", "-B", "-c", code, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The set-up in a child, with mount() refusing type (under prefix), then
 * (if it returned) python's exit status for code. ret_step, ret_err: what
 * sandbox_fail reported (0, 0: it did not fail). Returns the child's exit
 * status: 0 set up and python exited 0; 10 + python's status otherwise; 97
 * sandbox_fail; 1-5 the test's own set-up failed.
 */
static int
run_setup(const char *type, const char *prefix, const char *code, int *ret_step, int *ret_err)
{
	int pipefd[2], life[2], rep[2] = {0, 0}, status;
	pid_t pid;

	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, life), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r;

		close(pipefd[0]);
		close(life[0]);
		fail_fd = pipefd[1];
		if (child_namespace() < 0)
			_exit(1);
		refuse_type = type;
		refuse_under = prefix;
		sandbox_tools_setup(life[1]);
		_exit(code == NULL ? 0 : (r = child_python(code)) == 0 ? 0 : 10 + r);
	}
	close(pipefd[1]);
	close(life[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (read(pipefd[0], rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		rep[0] = rep[1] = 0;
	close(pipefd[0]);
	/* Set up: the listening socket came on the lifeline, once. */
	if (WEXITSTATUS(status) == 0) {
		struct sup_msg m;
		size_t nfds = 0;
		int fd = -1;

		assert_int_equal(fdpass_recv(life[0], &m, sizeof(m), &fd, 1, &nfds),
				 (ssize_t)sizeof(m));
		assert_int_equal(m.type, SUP_TOOLS);
		assert_int_equal(nfds, 1);
		assert_true(fd >= 0);
		close(fd);
	}
	close(life[0]);
	*ret_step = rep[0];
	*ret_err = rep[1];
	return WEXITSTATUS(status);
}

static const char import_code[] =
	"import sys, airlock_tools\n"
	"sys.exit(0 if airlock_tools.__file__ == sys.path[2] + '/airlock_tools.py' else 3)\n";

/* A kernel that cannot load overlayfs: the module imports all the same,
 * from lib-dynload (before issue 28's fix: ModuleNotFoundError, status 11). */
static void
test_import_without_overlay(void **state)
{
	char dyn[64];
	int step, err;

	(void)state;
	if (find_dynload(dyn, sizeof(dyn)) < 0)
		skip();
	assert_int_equal(run_setup("overlay", NULL, import_code, &step, &err), 0);
	assert_int_equal(step, 0);
	assert_int_equal(err, 0);
}

/* Nothing refused: the module imports, and the host's lib-dynload stays
 * reachable (an extension module of it loads through its link). */
static void
test_import(void **state)
{
	char dyn[64];
	int step, err;

	(void)state;
	if (find_dynload(dyn, sizeof(dyn)) < 0)
		skip();
	assert_int_equal(run_setup(NULL, NULL, import_code, &step, &err), 0);
	assert_int_equal(run_setup(NULL, NULL,
				   "import os, sys, importlib\n"
				   "d = sys.path[2]\n"
				   "so = sorted(n for n in os.listdir(d) if n.endswith('.so'))\n"
				   "importlib.import_module(so[0].split('.')[0])\n",
				   &step, &err),
			 0);
}

/* A mount of the set-up refused (the tmpfs over lib-dynload): the run
 * fails at step "tools" with that errno, never silently. */
static void
test_refused_mount_fails_the_step(void **state)
{
	char dyn[64];
	int step, err;

	(void)state;
	if (find_dynload(dyn, sizeof(dyn)) < 0)
		skip();
	assert_int_equal(run_setup("tmpfs", "/usr/lib/python3.", NULL, &step, &err), 97);
	assert_int_equal(step, SANDBOX_STEP_TOOLS);
	assert_int_equal(err, ENODEV);
	/* /run/tools itself refused: the same step. */
	assert_int_equal(run_setup("tmpfs", "/run/tools", NULL, &step, &err), 97);
	assert_int_equal(step, SANDBOX_STEP_TOOLS);
	assert_int_equal(err, ENODEV);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_import_without_overlay),
		cmocka_unit_test(test_refused_mount_fails_the_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
