/*
 * test_service_unit.c: airlockd's start and stop as a service manager sees
 * them (split from test_service.c): SIGTERM lets a running run finish
 * within the grace and cancels the queued ones, or cancels a run longer
 * than the grace, exit 0 either way; the systemd units pass
 * systemd-analyze verify; socket activation starts the daemon on the first
 * connection, and sd_notify gets READY=1, STATUS= and STOPPING=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"
#include "proto.h"

/* A range of its own: meson runs this file beside test_service.c. */
#define CFG(extra) "[sandbox]\nuid_base = 760064\nuid_count = 64\n" extra
#define UID_LO 760064
#define UID_HI (760064 + 63)

/* The daemon of the test running, until it is seen stopped: a test that
 * fails midway leaves it to stop_live(), so that the next test's search
 * for its own `sleep` in the shared uid range never finds this one's. */
static struct fixture *live;

static int
stop_live(void **state)
{
	(void)state;
	if (live != NULL) {
		(void)fixture_stop(live);
		(void)front_no_procs_left(UID_LO, UID_HI, 5000);
		live = NULL;
	}
	return 0;
}

/* After its SIGTERM: the daemon of f exits 0 within 5 s, leaving no
 * sandbox; fd (its client connection) closed. */
static void
stopped_cleanly(struct fixture *f, int fd)
{
	uint64_t end = front_now_ms() + 5000;
	pid_t r;
	int st = 0;

	while ((r = waitpid(f->pid, &st, WNOHANG)) == 0 && front_now_ms() < end)
		front_sleep_ms(10);
	assert_int_equal(r, f->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	f->pid = 0;
	close(fd);
	assert_true(front_no_procs_left(UID_LO, UID_HI, 3000));
	live = NULL;
	assert_int_equal(fixture_stop(f), 0);
}

/*
 * SIGTERM: a running run finishes within the grace and gets its result; a
 * queued run is answered cancelled (no wall time, its time in the queue);
 * new connections are refused; exit 0.
 */
static void
test_graceful_stop(void **state)
{
	static struct fixture f; /* static: stop_live() reads it after a failure */
	struct proto_msg m;
	uint64_t t, waited;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nmax_runs = 1\n")), 0);
	live = &f;
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	front_send_sh(fd, 2, "sleep 0.8; echo finished");
	front_send_sh(fd, 3, "echo never");
	/* Events, not a fixed wait: the ps answer follows run 3's receipt (one
	 * connection's messages are read in order), so from t run 3 is in
	 * the queue; then run 2's sleep runs. */
	front_send_ps(fd, 4);
	front_recv_id(fd, 4, &m);
	assert_int_equal(m.type, PROTO_PS_OK);
	proto_msg_free(&m);
	t = front_now_ms();
	assert_true(front_wait_named(UID_LO, UID_HI, "sleep", 20000));
	waited = front_now_ms() - t;
	assert_int_equal(kill(f.pid, SIGTERM), 0);
	front_recv_id(fd, 3, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_CANCELLED);
	assert_int_equal(m.u.result.wall_ms, 0);
	/* Whole milliseconds on both sides: the daemon's figure floors the
	 * true time, waited is a difference of two floored readings (up to 1
	 * ms over), so 2 ms of slack (CI saw queued_ms 24 against 25). */
	if (m.u.result.queued_ms + 2 < waited || m.u.result.queued_ms >= 60000)
		fail_msg("queued_ms %llu: not its time in the queue (at least %llu ms)",
			 (unsigned long long)m.u.result.queued_ms, (unsigned long long)waited);
	proto_msg_free(&m);
	front_recv_id(fd, 2, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_memory_equal(m.u.result.out[0].data.data, "finished\n", 9);
	proto_msg_free(&m);
	stopped_cleanly(&f, fd);
}

/* SIGTERM with a run longer than the grace: it is cancelled, exit 0. */
static void
test_stop_after_grace(void **state)
{
	static struct fixture f; /* static: stop_live() reads it after a failure */
	struct proto_msg m;
	uint64_t t;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nstop_grace_ms = 300\n")), 0);
	live = &f;
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	front_send_sh(fd, 2, "sleep 30");
	assert_true(front_wait_named(UID_LO, UID_HI, "sleep", 20000));
	t = front_now_ms();
	assert_int_equal(kill(f.pid, SIGTERM), 0);
	front_recv_id(fd, 2, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_CANCELLED);
	proto_msg_free(&m);
	assert_true(front_now_ms() - t < 5000);
	stopped_cleanly(&f, fd);
}

/* Run a command, return its exit status (stdout and stderr to the log). */
static int
sh(const char *cmd)
{
	int r = system(cmd);

	return WIFEXITED(r) ? WEXITSTATUS(r) : 128;
}

/* The units pass systemd-analyze verify (ExecStart pointed at the build). */
static void
test_units_verify(void **state)
{
	const char *src = getenv("AIRLOCK_SYSTEMD_DIR"), *bin = getenv("AIRLOCKD");
	char dir[] = "/tmp/airlock-units-XXXXXX", cmd[1024];

	(void)state;
	assert_non_null(src);
	assert_non_null(bin);
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "sed 's|@SBINDIR@/airlockd|%s|' %s/airlockd.service > %s/airlockd.service && "
		 "cp %s/airlockd.socket %s/ && cd %s && "
		 "systemd-analyze verify --man=no ./airlockd.service ./airlockd.socket",
		 bin, src, dir, src, dir, dir);
	assert_int_equal(sh(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	sh(cmd);
}

/*
 * Socket activation: systemd-socket-activate holds the socket; the daemon
 * starts on the first connection and answers it. sd_notify: READY=1 and
 * STATUS= reach $NOTIFY_SOCKET, and STOPPING=1 at the end.
 */
static void
test_socket_activation_and_notify(void **state)
{
	char dir[] = "/tmp/airlock-sa-XXXXXX", sock[128], nsock[128], conf[128], buf[4096];
	char all[16384] = "";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *bin = getenv("AIRLOCKD");
	struct proto_msg m;
	pid_t pid;
	int nfd, fd, i, st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(sock, sizeof(sock), "%s/a.sock", dir);
	snprintf(nsock, sizeof(nsock), "%s/notify", dir);
	snprintf(conf, sizeof(conf), "%s/c.conf", dir);
	{
		FILE *fp = fopen(conf, "we");

		assert_non_null(fp);
		fputs(CFG(""), fp);
		fclose(fp);
		chmod(conf, 0644);
	}
	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(nfd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", nsock);
	assert_int_equal(bind(nfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	chmod(nsock, 0666);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char logp[160];
		int lfd;

		/* The daemon's log, printed if it does not stop cleanly. */
		snprintf(logp, sizeof(logp), "%s/log", dir);
		lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		/* The daemon dies with the test (systemd-socket-activate execs
		 * airlockd in this process); see fixture_start(). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
			_exit(126);
		dup2(lfd, 1);
		dup2(lfd, 2);
		setenv("NOTIFY_SOCKET", nsock, 1);
		execlp("systemd-socket-activate", "systemd-socket-activate", "--seqpacket", "-l",
		       sock, "-E", "NOTIFY_SOCKET", bin, "--foreground", "--user", "nobody",
		       "--config", conf, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && access(sock, F_OK) < 0; i++)
		front_sleep_ms(10);
	/* Nothing runs yet: no notification before the first connection. */
	front_sleep_ms(200);
	assert_int_equal(recv(nfd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	fd = front_raw_connect(sock);
	assert_true(fd >= 0);
	assert_int_equal(front_send_hello(fd, 1, PROTO_VERSION), 0);
	assert_int_equal(front_recv(fd, 10000, &m), 0);
	assert_int_equal(m.type, PROTO_HELLO_OK);
	proto_msg_free(&m);
	assert_int_equal(front_send_ping(fd, 2), 0);
	assert_int_equal(front_recv(fd, 5000, &m), 0);
	assert_int_equal(m.type, PROTO_PONG);
	proto_msg_free(&m);
	close(fd);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char logp[160];
		int lfd;
		ssize_t n;

		snprintf(logp, sizeof(logp), "%s/log", dir);
		lfd = open(logp, O_RDONLY | O_CLOEXEC);
		while (lfd >= 0 && (n = read(lfd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			print_message("%s", buf);
		}
		if (lfd >= 0)
			close(lfd);
	}
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (;;) {
		ssize_t n = recv(nfd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

		if (n <= 0)
			break;
		buf[n] = '\0';
		strncat(all, buf, sizeof(all) - strlen(all) - 2);
		strcat(all, "\n");
	}
	assert_non_null(strstr(all, "READY=1"));
	assert_non_null(strstr(all, "STATUS="));
	assert_non_null(strstr(all, "STOPPING=1"));
	close(nfd);
	snprintf(buf, sizeof(buf), "rm -rf %s", dir);
	sh(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_graceful_stop, stop_live),
		cmocka_unit_test_teardown(test_stop_after_grace, stop_live),
		cmocka_unit_test(test_units_verify),
		cmocka_unit_test(test_socket_activation_and_notify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
