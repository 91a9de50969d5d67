/* test_spawn_wrap.c: unit tests of daemon/ipc/spawn_wrap.c, the frontend's
 * side of the spawner channel: a request goes out whole with its fds; an
 * event comes in only at its exact size, of a type the frontend takes, with
 * no more fds than that type carries, else -EPROTO with its fds closed;
 * fds the frontend had no room for are reported lost, not malformed. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdpass.h"
#include "spawn_wrap.h"

/* sv[0] the frontend's end, sv[1] the spawner's. */
static int sv[2];

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

/* How many fds this process has open (dup() finds the lowest free one). */
static int
lowest_free_fd(void)
{
	int fd = dup(0);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

/* The spawner sends an event of size len with nfds fds (pipes' read ends). */
static void
spawner_send(const void *ev, size_t len, size_t nfds)
{
	int fds[4] = {-1, -1, -1, -1}, p[2];
	size_t i;

	for (i = 0; i < nfds; i++) {
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		fds[i] = p[0];
		close(p[1]);
	}
	assert_int_equal(fdpass_send(sv[1], ev, len, fds, nfds), 0);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
}

static void
test_send_whole(void **state)
{
	struct spawn_req req = {.type = SPAWN_RELOAD, .run_id = 7}, got;
	int p[2], fds[1];
	size_t nfds = 0;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(spawn_wrap_send(sv[0], &req, &p[0], 1), 0);
	assert_int_equal(fdpass_recv(sv[1], &got, sizeof(got), fds, 1, &nfds),
			 (ssize_t)sizeof(got));
	assert_memory_equal(&got, &req, sizeof(req));
	assert_int_equal(nfds, 1);
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);
	close(p[0]);
	close(p[1]);
}

static void
test_recv_started_with_fds(void **state)
{
	struct spawn_ev ev = {.type = SPAWN_STARTED, .run_id = 3, .pid = 42}, got;
	int fds[SPAWN_WRAP_FDS_MAX];
	size_t nfds = 9;
	bool lost = true;

	(void)state;
	memset(ev.step, 'x', sizeof(ev.step)); /* not terminated by the sender */
	spawner_send(&ev, sizeof(ev), 2);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), 1);
	assert_false(lost);
	assert_int_equal(got.run_id, 3);
	assert_int_equal(got.pid, 42);
	assert_int_equal(got.step[sizeof(got.step) - 1], '\0');
	assert_int_equal(nfds, 2);
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	fdpass_close_all(fds, nfds);
}

static void
test_recv_nothing_then_end(void **state)
{
	struct spawn_ev got;
	int fds[SPAWN_WRAP_FDS_MAX];
	size_t nfds = 0;
	bool lost;

	(void)state;
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EAGAIN);
	close(sv[1]);
	sv[1] = -1;
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), 0);
	assert_int_equal(nfds, 0);
}

/* Every malformed event is -EPROTO and leaves no fd open behind it. */
static void
test_recv_malformed(void **state)
{
	struct spawn_ev ev = {.type = SPAWN_DONE}, got;
	int fds[SPAWN_WRAP_FDS_MAX], before = lowest_free_fd();
	size_t nfds;
	bool lost;

	(void)state;
	spawner_send(&ev, sizeof(ev) - 1, 0); /* short */
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EPROTO);
	ev.type = SPAWN_REQ; /* a request, not an event */
	spawner_send(&ev, sizeof(ev), 0);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EPROTO);
	ev.type = 99;
	spawner_send(&ev, sizeof(ev), 0);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EPROTO);
	ev.type = SPAWN_FAILED; /* carries no fd */
	spawner_send(&ev, sizeof(ev), 1);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EPROTO);
	assert_int_equal(nfds, 0);
	ev.type = SPAWN_RELOAD; /* one fd at most */
	spawner_send(&ev, sizeof(ev), 2);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EPROTO);
	ev.type = SPAWN_STARTED; /* two at most */
	spawner_send(&ev, sizeof(ev), 3);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EMSGSIZE);
	assert_int_equal(lowest_free_fd(), before);
}

/* A zygote's end (SPAWN_ZYGOTE_GONE) is an event with no fd: with its
 * pid and status; with an fd, malformed. */
static void
test_recv_zygote_gone(void **state)
{
	struct spawn_ev ev = {.type = SPAWN_ZYGOTE_GONE, .run_id = 9, .pid = 77, .status = 256},
			got;
	int fds[SPAWN_WRAP_FDS_MAX], before = lowest_free_fd();
	size_t nfds = 9;
	bool lost = true;

	(void)state;
	spawner_send(&ev, sizeof(ev), 0);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), 1);
	assert_false(lost);
	assert_int_equal(nfds, 0);
	assert_int_equal(got.type, SPAWN_ZYGOTE_GONE);
	assert_int_equal(got.run_id, 9);
	assert_int_equal(got.pid, 77);
	assert_int_equal(got.status, 256);
	spawner_send(&ev, sizeof(ev), 1);
	assert_int_equal(spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost), -EPROTO);
	assert_int_equal(lowest_free_fd(), before);
}

/*
 * At RLIMIT_NOFILE the kernel installs none of an event's fds: STARTED is
 * still an event, its fds lost; a type that carries none cannot have lost
 * any, so it is malformed.
 */
static void
test_recv_lost(void **state)
{
	struct spawn_ev ev = {.type = SPAWN_STARTED, .run_id = 5}, got;
	int fds[SPAWN_WRAP_FDS_MAX];
	struct rlimit old, low;
	size_t nfds = 9;
	bool lost = false;
	int r;

	(void)state;
	spawner_send(&ev, sizeof(ev), 2);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)lowest_free_fd();
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	r = spawn_wrap_recv(sv[0], &got, fds, &nfds, &lost);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(r, 1);
	assert_true(lost);
	assert_int_equal(nfds, 0);
	assert_int_equal(got.run_id, 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_started_with_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_nothing_then_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recv_zygote_gone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
