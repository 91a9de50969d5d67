/* test_svcmgr.c: unit tests of daemon/frontend/svcmgr.c (systemd's notify,
 * socket-activation and journal protocols, without libsystemd). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "svcmgr.h"

/* A datagram socket bound at PATH ('@': abstract), non-blocking. */
static int
bound(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	unlink(path);
	assert_int_equal(
		bind(fd, (struct sockaddr *)&sa,
		     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'))),
		0);
	return fd;
}

static ssize_t
recv_all(int fd, char *buf, size_t len)
{
	return recv(fd, buf, len, 0);
}

static void
test_notify(void **state)
{
	char path[64], buf[2048];
	int fd;
	ssize_t n;

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(svcmgr_notify("READY=1"), 0); /* not under a manager */
	snprintf(path, sizeof(path), "/tmp/test-svcmgr-%d.sock", (int)getpid());
	fd = bound(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(svcmgr_notify("READY=1"), 1);
	n = recv_all(fd, buf, sizeof(buf));
	assert_int_equal(n, 7);
	assert_memory_equal(buf, "READY=1", 7);
	assert_int_equal(svcmgr_notifyf("STATUS=%u running", 3u), 1);
	n = recv_all(fd, buf, sizeof(buf));
	assert_int_equal(n, 16);
	assert_memory_equal(buf, "STATUS=3 running", 16);
	/* Longer than the notifier's buffer: refused, not cut. */
	memset(buf, 'x', 1500);
	buf[1500] = '\0';
	assert_int_equal(svcmgr_notifyf("STATUS=%s", buf), -EMSGSIZE);
	close(fd);
	unlink(path);

	/* Abstract. */
	snprintf(path, sizeof(path), "@test-svcmgr-%d", (int)getpid());
	fd = bound(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(svcmgr_notify("STOPPING=1"), 1);
	assert_int_equal(recv_all(fd, buf, sizeof(buf)), 10);
	close(fd);

	/* Nobody listening, a relative path, one too long: errors. */
	setenv("NOTIFY_SOCKET", "/nonexistent/notify", 1);
	assert_int_equal(svcmgr_notify("READY=1"), -ENOENT);
	setenv("NOTIFY_SOCKET", "relative", 1);
	assert_int_equal(svcmgr_notify("READY=1"), -EINVAL);
	memset(buf, 'a', 200);
	buf[0] = '/';
	buf[200] = '\0';
	setenv("NOTIFY_SOCKET", buf, 1);
	assert_int_equal(svcmgr_notify("READY=1"), -EINVAL);
	unsetenv("NOTIFY_SOCKET");
}

static void
test_listen_fds(void **state)
{
	char pid[32];

	(void)state;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	assert_int_equal(svcmgr_listen_fds(), 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "2", 1);
	setenv("LISTEN_FDNAMES", "a:b", 1);
	assert_int_equal(svcmgr_listen_fds(), 2);
	/* Unset, so that no child takes them as its own. */
	assert_null(getenv("LISTEN_PID"));
	assert_null(getenv("LISTEN_FDS"));
	assert_null(getenv("LISTEN_FDNAMES"));
	/* Another process's sockets. */
	setenv("LISTEN_PID", "1", 1);
	setenv("LISTEN_FDS", "1", 1);
	assert_int_equal(svcmgr_listen_fds(), 0);
	/* Malformed. */
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "1x", 1);
	assert_int_equal(svcmgr_listen_fds(), -EINVAL);
	setenv("LISTEN_PID", "-1", 1);
	setenv("LISTEN_FDS", "1", 1);
	assert_int_equal(svcmgr_listen_fds(), -EINVAL);
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "99999999999999999999", 1);
	assert_int_equal(svcmgr_listen_fds(), -EINVAL);
	assert_null(getenv("LISTEN_FDS"));
}

static void
test_is_seqpacket_listener(void **state)
{
	int sp[2], p[2], l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	(void)state;
	assert_true(l >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/test-svcmgr-l-%d.sock", (int)getpid());
	unlink(sa.sun_path);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(svcmgr_is_seqpacket_listener(l), 0); /* not listening yet */
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(svcmgr_is_seqpacket_listener(l), 1);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(svcmgr_is_seqpacket_listener(sp[0]), 0); /* a stream */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(svcmgr_is_seqpacket_listener(p[0]), 0); /* not a socket */
	close(p[0]);
	assert_int_equal(svcmgr_is_seqpacket_listener(p[0]), -EBADF);
	close(p[1]);
	close(sp[0]);
	close(sp[1]);
	close(l);
	unlink(sa.sun_path);
}

static void
test_journal(void **state)
{
	char path[64], buf[70000];
	static const char want[] = "MESSAGE=run 1\nAIRLOCK_CODE\n\x05\0\0\0\0\0\0\0a\nb=c\n"
				   "PRIORITY=6\n";
	struct iovec iov[3] = {{(char *)"MESSAGE=run 1", 13},
			       {(char *)"AIRLOCK_CODE=a\nb=c", 18},
			       {(char *)"PRIORITY=6", 10}};
	struct iovec big[2] = {{(char *)"MESSAGE=x", 9}, {buf, 0}};
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test-svcmgr-j-%d.sock", (int)getpid());
	fd = bound(path);
	assert_int_equal(svcmgr_journal_sendv_to(path, iov, 3), 0);
	/* A value with a newline is sent in the binary form: it cannot start
	 * a field of its own (b=c stays inside AIRLOCK_CODE). */
	assert_int_equal(recv_all(fd, buf, sizeof(buf)), (ssize_t)sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
	/* A field without '=' or with an empty key. */
	iov[1] = (struct iovec){(char *)"NOEQUALS", 8};
	assert_int_equal(svcmgr_journal_sendv_to(path, iov, 3), -EINVAL);
	iov[1] = (struct iovec){(char *)"=v", 2};
	assert_int_equal(svcmgr_journal_sendv_to(path, iov, 3), -EINVAL);
	/* More than one entry may hold: refused whole, nothing sent. */
	memcpy(buf, "AIRLOCK_X=", 10);
	memset(buf + 10, 'y', 65600 - 10);
	big[1].iov_len = 65600;
	assert_int_equal(svcmgr_journal_sendv_to(path, big, 2), -EMSGSIZE);
	assert_int_equal(recv_all(fd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	/* No journal. */
	assert_int_equal(svcmgr_journal_sendv_to("/nonexistent/journal", iov, 1), -ENOENT);
	close(fd);
	unlink(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_listen_fds),
		cmocka_unit_test(test_is_seqpacket_listener),
		cmocka_unit_test(test_journal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
