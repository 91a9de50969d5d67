/*
 * test_keep_wrap.c: unit tests of daemon/ipc/keep_wrap.c, the frontend's
 * side of a session's keeper channel, over a real socketpair.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h> /* cmocka.h needs it */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdpass.h"
#include "keep_wrap.h"

static int sv[2] = {-1, -1};

static int
setup(void **state)
{
	(void)state;
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv);
}

static int
teardown(void **state)
{
	(void)state;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* Is any fd but 0-2 and the pair open? */
static int
fds_open(void)
{
	int fd, n = 0;

	for (fd = 3; fd < 64; fd++)
		if (fd != sv[0] && fd != sv[1] && fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

/* The keeper's side: an answer of len bytes with nfds pipe ends. */
static void
answer(size_t len, size_t nfds)
{
	struct keep_reply rep;
	int p[2][2], fds[2] = {-1, -1};
	size_t i;

	memset(&rep, 0, sizeof(rep));
	rep.op = KEEP_REPLY;
	rep.seq = 9;
	for (i = 0; i < nfds; i++) {
		assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
		fds[i] = p[i][0];
	}
	assert_int_equal(fdpass_send(sv[1], &rep, len, fds, nfds), 0);
	for (i = 0; i < nfds; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

static void
test_send(void **state)
{
	struct keep_req req;
	char path[sizeof(req.path) + 1];

	(void)state;
	assert_int_equal(keep_wrap_send(sv[0], KEEP_READ, 4, "a/b", -1), 0);
	assert_int_equal(recv(sv[1], &req, sizeof(req), 0), (ssize_t)sizeof(req));
	assert_int_equal(req.op, KEEP_READ);
	assert_int_equal(req.seq, 4);
	assert_string_equal(req.path, "a/b");
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(keep_wrap_send(sv[0], KEEP_READ, 5, path, -1), -ENAMETOOLONG);
}

static void
test_recv(void **state)
{
	struct keep_reply rep;
	int fd = -2;

	(void)state;
	assert_int_equal(keep_wrap_recv(sv[0], &rep, &fd), -EAGAIN);
	answer(sizeof(rep), 1);
	assert_int_equal(keep_wrap_recv(sv[0], &rep, &fd), 1);
	assert_int_equal(rep.seq, 9);
	assert_true(fd >= 0);
	close(fd);
	answer(sizeof(rep), 0);
	assert_int_equal(keep_wrap_recv(sv[0], &rep, &fd), 1);
	assert_int_equal(fd, -1);
	answer(sizeof(rep) - 1, 1); /* short: refused, its fd closed */
	assert_int_equal(keep_wrap_recv(sv[0], &rep, &fd), -EBADMSG);
	answer(sizeof(rep), 2); /* two fds: refused, both closed */
	assert_int_equal(keep_wrap_recv(sv[0], &rep, &fd), -EBADMSG);
	assert_int_equal(fds_open(), 0);
	close(sv[1]);
	sv[1] = -1;
	assert_int_equal(keep_wrap_recv(sv[0], &rep, &fd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
