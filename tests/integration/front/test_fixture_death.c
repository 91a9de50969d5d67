/*
 * test_fixture_death.c: a daemon started by a test dies with the test. A
 * child process starts a fixture daemon (with a run in flight) and is then
 * SIGKILLed, as a test runner does on a timeout: the
 * daemon (spawner), its frontend and the run's processes must be gone
 * within two seconds (issue 13, finding 8: three orphaned daemons were found
 * after test runs).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "front_util.h"
#include "proto.h"

#define UID_LO 1420000
#define UID_HI (1420000 + 63)
#define CFG "[sandbox]\nuid_base = 1420000\nuid_count = 64\n"

/* What the child tells the test about its daemon. */
struct started {
	int rc;
	pid_t daemon, frontend;
	char dir[64];
};

/* Is pid gone (or a zombie nobody reaped yet: it runs nothing)? */
static bool
gone(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* The child: start a daemon, start a run in it that sleeps, report, wait. */
__attribute__((noreturn)) static void
child_main(int wfd)
{
	struct fixture f;
	struct started s = {0};
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	const char *code = "sleep 60";
	int fd, i;

	s.rc = fixture_start(&f, CFG);
	if (s.rc == 0) {
		s.daemon = f.pid;
		s.frontend = front_first_child(f.pid);
		snprintf(s.dir, sizeof(s.dir), "%s", f.dir);
		fd = front_raw_connect(f.sock);
		if (fd < 0 || front_send_hello(fd, 1, PROTO_VERSION) < 0 ||
		    front_recv(fd, 5000, &m) < 0) {
			s.rc = -EIO;
		} else {
			proto_msg_free(&m);
			memset(&run, 0, sizeof(run));
			run.runtime = "sh";
			run.code = (struct proto_blob){.data = (const uint8_t *)code,
						       .len = strlen(code),
						       .fd = -1,
						       .present = true};
			run.stdin_data.fd = -1;
			if (proto_encode_run(2, &run, &out) < 0 || front_send_out(fd, &out) < 0)
				s.rc = -EIO;
		}
		/* Wait until the run's code is there. */
		for (i = 0; s.rc == 0 && i < 500 && fixture_count_uid_procs(UID_LO, UID_HI) < 2;
		     i++)
			front_sleep_ms(10);
	}
	if (write(wfd, &s, sizeof(s)) != (ssize_t)sizeof(s))
		_exit(1);
	for (;;)
		pause();
}

static void
test_daemon_dies_with_test(void **state)
{
	struct started s;
	int p[2], i, status;
	pid_t child;
	bool daemon_gone = false, frontend_gone = false, runs_gone = false;
	char cmd[128];

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(p[0]);
		child_main(p[1]);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &s, sizeof(s)), (ssize_t)sizeof(s));
	close(p[0]);
	assert_int_equal(s.rc, 0);
	assert_true(s.daemon > 0 && s.frontend > 0);
	assert_false(gone(s.daemon));
	assert_false(gone(s.frontend));
	assert_true(fixture_count_uid_procs(UID_LO, UID_HI) >= 2);

	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	for (i = 0; i < 200; i++) {
		daemon_gone = gone(s.daemon);
		frontend_gone = gone(s.frontend);
		runs_gone = fixture_count_uid_procs(UID_LO, UID_HI) == 0;
		if (daemon_gone && frontend_gone && runs_gone)
			break;
		front_sleep_ms(10);
	}
	/* A daemon that outlived its test must not outlive this one too. */
	if (!daemon_gone)
		kill(s.daemon, SIGKILL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s.dir);
	if (s.dir[0] == '/' && system(cmd) != 0)
		print_message("cannot remove %s\n", s.dir);
	assert_true(daemon_gone);
	assert_true(frontend_gone);
	assert_true(runs_gone);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_daemon_dies_with_test),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
