/*
 * Issue 28, point 4 (found by the review of it): a pool sandbox prepared
 * while a [mount] source was missing lacks that tree. Once the source is
 * back, the pool must replace it (run_pool_recheck), and a run that names
 * the mount must not be counted as startable on a sandbox it cannot take
 * (run_can_start asks run_pool_can_take): before the fix, with every uid
 * slot held by such sandboxes, the run was popped, got -EAGAIN, went back
 * to the head and broke run_dispatch for ever, the runs queued behind it
 * with it.
 *
 * Also issue 28, point 8: the daemon is started with systemd's default
 * soft RLIMIT_NOFILE (1024, below the hard limit), and the spawner, like
 * the frontend, raises its own to the hard limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"

static char base[PATH_MAX];
static struct fixture fx;

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* 0 when python code under profile exited 0, else -1. */
static int
run_py(const char *code, const char *profile)
{
	struct airlock_conn *c = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	int r;

	if (airlock_connect(fx.sock, &c) < 0 || airlock_run_req_new(&req) < 0)
		return -1;
	airlock_run_req_set_runtime(req, "python");
	airlock_run_req_set_code(req, code, strlen(code));
	airlock_run_req_set_profile(req, profile);
	r = airlock_run(c, req, &res);
	if (r == 0)
		r = airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
				    airlock_result_exit_code(res) == 0
			    ? 0
			    : -1;
	if (res != NULL)
		airlock_result_free(res);
	airlock_run_req_free(req);
	airlock_conn_free(c);
	return r;
}

/* Run it in a child; its pid. */
static pid_t
run_py_bg(const char *code, const char *profile)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(run_py(code, profile) == 0 ? 0 : 1);
	return pid;
}

/* Wait up to ms for pid: its exit status, or -ETIMEDOUT (then killed). */
static int
wait_ms(pid_t pid, long ms)
{
	int st;

	for (; ms > 0; ms -= 50) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		sleep_ms(50);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -ETIMEDOUT;
}

static int
setup(void **state)
{
	char cfg[4096], path[PATH_MAX + 32];
	int fd;

	(void)state;
	snprintf(base, sizeof(base), "/var/lib/airlock-pool-missing-XXXXXX");
	if (mkdtemp(base) == NULL || chmod(base, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/data", base);
	if (mkdir(path, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/data/hello.txt", base);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "hi\n", 3) != 3)
		return -1;
	close(fd);
	/* Two uid slots, both for the two prepared sandboxes. */
	snprintf(cfg, sizeof(cfg),
		 "[daemon]\nsocket_mode = 0666\nprepared_sandboxes = 2\n"
		 "prestarted_interpreters = 0\n"
		 "[sandbox]\nuid_base = 1560000\nuid_count = 4\n"
		 "[mount data]\nsource = %s/data\ntarget = /data/x\n"
		 "[profile ds]\nmounts = data\n",
		 base);
	/* The daemon starts as under systemd: soft 1024, the hard above. */
	{
		struct rlimit old, rl;
		int r;

		if (getrlimit(RLIMIT_NOFILE, &old) < 0)
			return -1;
		rl = old;
		if (rl.rlim_max > 1024)
			rl.rlim_cur = 1024;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -1;
		r = fixture_start(&fx, cfg);
		if (setrlimit(RLIMIT_NOFILE, &old) < 0)
			return -1;
		return r < 0 ? -1 : 0;
	}
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	int r = fixture_stop(&fx);

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	(void)system(cmd);
	return r == 0 ? 0 : -1;
}

static void
test_pool_missing_source_back(void **state)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16], cmd[256];
	int i, r;
	pid_t pid;

	(void)state;
	snprintf(from, sizeof(from), "%s/data", base);
	snprintf(to, sizeof(to), "%s/data.gone", base);
	assert_int_equal(run_py("print(1)\n", "ds"), 0);
	assert_int_equal(rename(from, to), 0);
	/* The pool is used up and refilled while the source is gone. */
	for (i = 0; i < 4; i++)
		assert_int_equal(run_py("print(1)\n", "standard"), 0);
	sleep_ms(1000);
	assert_int_equal(rename(to, from), 0);
	/* The source is back: a run of ds should work again by itself. */
	pid = run_py_bg("print(open('/data/x/hello.txt').read(), end='')\n", "ds");
	sleep_ms(2000);
	{
		/* A run of another profile, queued after it (the same uid and class). */
		pid_t other = run_py_bg("print(1)\n", "standard");
		int r2 = wait_ms(other, 8000);

		r = wait_ms(pid, 8000);
		if (r != 0 || r2 != 0) {
			snprintf(cmd, sizeof(cmd), "tail -c 3000 %s >&2", fx.log);
			(void)system(cmd);
			fail_msg("a run of ds after its source came back: %s; a run of standard "
				 "queued 2 s after it: %s",
				 r == -ETIMEDOUT ? "never answered in 10 s"
				 : r == 0	 ? "ok"
						 : "failed",
				 r2 == -ETIMEDOUT ? "never answered in 8 s"
				 : r2 == 0	  ? "ok"
						  : "failed");
		}
	}
}

/*
 * A source that goes and comes back as another directory: the sandboxes
 * prepared while the old one was there hold its tree (opened at their
 * preparation). A run that finds the source gone has them discarded
 * (run_mounts_unavailable), so a run after the new one came sees the new
 * files, not the old.
 */
static void
test_source_replaced(void **state)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16], file[PATH_MAX + 32], cmd[256];
	int fd, r;

	(void)state;
	snprintf(from, sizeof(from), "%s/data", base);
	snprintf(to, sizeof(to), "%s/data.old", base);
	/* The pool holds sandboxes made with the source there. */
	assert_int_equal(run_py("print(open('/data/x/hello.txt').read(), end='')\n", "ds"), 0);
	assert_int_equal(rename(from, to), 0);
	/* Refused: the source is gone. */
	assert_int_not_equal(run_py("print(1)\n", "ds"), 0);
	assert_int_equal(mkdir(from, 0755), 0);
	snprintf(file, sizeof(file), "%s/hello.txt", from);
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "new\n", 4), 4);
	close(fd);
	r = run_py("import sys\n"
		   "sys.exit(0 if open('/data/x/hello.txt').read() == 'new\\n' else 3)\n",
		   "ds");
	if (r != 0) {
		snprintf(cmd, sizeof(cmd), "tail -c 3000 %s >&2", fx.log);
		(void)system(cmd);
		fail_msg("a run of ds after its source came back as another directory did not "
			 "see the new file (the old tree, or no answer)");
	}
}

/* The spawner (the daemon's first process) raised its soft RLIMIT_NOFILE
 * to its hard limit: at 1024 it lost a busy frontend's fds sooner. */
static void
test_spawner_nofile_raised(void **state)
{
	char path[64], line[256], soft[32] = "", hard[32] = "";
	FILE *fp;

	(void)state;
	/* /proc, not prlimit(): that asks for the spawner's credentials or
	 * CAP_SYS_RESOURCE, which this root may not have. */
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)fx.pid);
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "Max open files", 14) == 0)
			assert_int_equal(sscanf(line + 14, "%31s %31s", soft, hard), 2);
	fclose(fp);
	assert_true(soft[0] != '\0');
	if (strcmp(soft, hard) != 0)
		fail_msg("the spawner's soft RLIMIT_NOFILE is %s, its hard %s", soft, hard);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawner_nofile_raised),
		cmocka_unit_test(test_pool_missing_source_back),
		cmocka_unit_test(test_source_replaced),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
