/*
 * test_abuse.c: raw protocol abuse on a SOCK_SEQPACKET socket, against one
 * real airlockd. Every bad packet gets the documented error reply; after a
 * bad packet past the hello the connection goes on, before the hello it is
 * closed; meanwhile a second, well-behaved client keeps being served and the
 * daemon stays up (docs/protocol.md, "Failure follows trust").
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
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fdpass.h"
#include "fixture.h"
#include "front_util.h"
#include "memfd.h"

#define ABUSE_CONFIG "[sandbox]\nuid_base = 716384\n"
#define ABUSE_WAIT_MS 5000

struct abuse {
	struct fixture f;
	struct airlock_conn *peer; /* the well-behaved second client */
};

static int
group_setup(void **state)
{
	static struct abuse a;

	if (fixture_start(&a.f, ABUSE_CONFIG) < 0)
		return -1;
	if (airlock_connect(a.f.sock, &a.peer) < 0)
		return -1;
	*state = &a;
	return 0;
}

static int
group_teardown(void **state)
{
	struct abuse *a = *state;

	airlock_conn_free(a->peer);
	return fixture_stop(&a->f) == 0 ? 0 : -1;
}

/* The other client is still served and the daemon is alive. */
static void
others_served(struct abuse *a)
{
	assert_int_equal(airlock_ping(a->peer), 0);
	assert_true(fixture_alive(&a->f));
}

/* Expect an error reply with this id and code; copy its message. */
static void
expect_error(int fd, uint32_t id, enum proto_error code, char *msg, size_t msglen)
{
	struct proto_msg m;

	assert_int_equal(front_recv(fd, ABUSE_WAIT_MS, &m), 0);
	if (m.type != PROTO_ERROR)
		fail_msg("expected error %s, got %s", proto_error_name(code),
			 proto_type_name(m.type));
	assert_int_equal(m.id, id);
	assert_string_equal(proto_error_name(m.u.error.code), proto_error_name(code));
	if (msg != NULL)
		snprintf(msg, msglen, "%s", m.u.error.message);
	proto_msg_free(&m);
}

/* Expect a reply of type with id. */
static void
expect_reply(int fd, uint32_t id, enum proto_type type)
{
	struct proto_msg m;

	assert_int_equal(front_recv(fd, ABUSE_WAIT_MS, &m), 0);
	if (m.type != type)
		fail_msg("expected %s, got %s (%s)", proto_type_name(type), proto_type_name(m.type),
			 m.type == PROTO_ERROR ? m.u.error.message : "");
	assert_int_equal(m.id, id);
	proto_msg_free(&m);
}

/* The connection still answers a ping. */
static void
expect_usable(int fd, uint32_t id)
{
	assert_int_equal(front_send_ping(fd, id), 0);
	expect_reply(fd, id, PROTO_PONG);
}

/* A raw connection past a good hello. */
static int
raw_hello(struct abuse *a)
{
	int fd = front_hello(a->f.sock);

	assert_true(fd >= 0);
	return fd;
}

static int
send_raw(int fd, const void *buf, size_t len)
{
	return fdpass_send(fd, buf, len, NULL, 0);
}

/* Bytes that are not msgpack: bad_request with id 0, and the connection goes on. */
static void
test_garbage_after_hello(void **state)
{
	struct abuse *a = *state;
	static const char junk[] = "\xc1\xc1 this is not msgpack \xff\x00\x01";
	static const unsigned char array[] = {0x93, 0x01, 0x02, 0x03}; /* [1,2,3]: not a map */
	static const unsigned char noid[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0x03}; /* {type:3} */
	int fd = raw_hello(a);

	assert_int_equal(send_raw(fd, junk, sizeof(junk) - 1), 0);
	expect_error(fd, 0, PROTO_ERR_BAD_REQUEST, NULL, 0);
	expect_usable(fd, 2);
	others_served(a);
	assert_int_equal(send_raw(fd, array, sizeof(array)), 0);
	expect_error(fd, 0, PROTO_ERR_BAD_REQUEST, NULL, 0);
	assert_int_equal(send_raw(fd, noid, sizeof(noid)), 0);
	expect_error(fd, 0, PROTO_ERR_BAD_REQUEST, NULL, 0);
	expect_usable(fd, 3);
	others_served(a);
	close(fd);
}

/* A packet above PROTO_MSG_MAX: too_large, and the connection goes on. */
static void
test_oversized_packet(void **state)
{
	struct abuse *a = *state;
	size_t len = 70000;
	int fd = raw_hello(a), sz = 1 << 20;
	char *big = malloc(len);

	assert_non_null(big);
	assert_true(len > PROTO_MSG_MAX);
	memset(big, 0x90, len);
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	assert_int_equal(send_raw(fd, big, len), 0);
	expect_error(fd, 0, PROTO_ERR_TOO_LARGE, NULL, 0);
	expect_usable(fd, 2);
	/* Exactly PROTO_MSG_MAX bytes is not too large (but is garbage). */
	assert_int_equal(send_raw(fd, big, PROTO_MSG_MAX), 0);
	expect_error(fd, 0, PROTO_ERR_BAD_REQUEST, NULL, 0);
	expect_usable(fd, 3);
	others_served(a);
	free(big);
	close(fd);
}

/* A first message that is not hello: bad_request, then the daemon closes. */
static void
test_first_message_not_hello(void **state)
{
	struct abuse *a = *state;
	static const char junk[] = "garbage first";
	int fd = front_raw_connect(a->f.sock);

	assert_true(fd >= 0);
	assert_int_equal(front_send_ping(fd, 5), 0);
	expect_error(fd, 5, PROTO_ERR_BAD_REQUEST, NULL, 0);
	assert_int_equal(front_wait_eof(fd, ABUSE_WAIT_MS), 0);
	close(fd);
	others_served(a);

	fd = front_raw_connect(a->f.sock);
	assert_true(fd >= 0);
	assert_int_equal(send_raw(fd, junk, sizeof(junk) - 1), 0);
	expect_error(fd, 0, PROTO_ERR_BAD_REQUEST, NULL, 0);
	assert_int_equal(front_wait_eof(fd, ABUSE_WAIT_MS), 0);
	close(fd);
	others_served(a);
}

/*
 * A refused first message from a client that has already closed: the
 * refusal's send fails (EPIPE), which ends the connection before the
 * refusal closes it. Both must hold: the daemon stays up. Many times over,
 * so that some closes win the race with the daemon's read.
 */
static void
test_refused_after_close(void **state)
{
	struct abuse *a = *state;
	static const char junk[] = "garbage first";
	int i, fd;

	for (i = 0; i < 40; i++) {
		fd = front_raw_connect(a->f.sock);

		assert_true(fd >= 0);
		if (i % 2 == 0)
			assert_int_equal(send_raw(fd, junk, sizeof(junk) - 1), 0);
		else
			assert_int_equal(front_send_hello(fd, 9, 99), 0);
		close(fd);
	}
	/* A connection accepted after those is read after theirs: by its
	 * pong (two round trips) the daemon has handled every one of them. */
	fd = raw_hello(a);
	expect_usable(fd, 11);
	close(fd);
	others_served(a);
}

/* hello with version 99: unsupported_version naming our id, then close. */
static void
test_hello_wrong_version(void **state)
{
	struct abuse *a = *state;
	char msg[PROTO_MSG_PRINTABLE_MAX];
	int fd = front_raw_connect(a->f.sock);

	assert_true(fd >= 0);
	assert_int_equal(front_send_hello(fd, 9, 99), 0);
	expect_error(fd, 9, PROTO_ERR_UNSUPPORTED_VERSION, msg, sizeof(msg));
	assert_non_null(strstr(msg, "99"));
	assert_int_equal(front_wait_eof(fd, ABUSE_WAIT_MS), 0);
	close(fd);
	others_served(a);
}

/* A second hello is refused, and the connection goes on. */
static void
test_hello_twice(void **state)
{
	struct abuse *a = *state;
	int fd = raw_hello(a);

	assert_int_equal(front_send_hello(fd, 2, PROTO_VERSION), 0);
	expect_error(fd, 2, PROTO_ERR_BAD_REQUEST, NULL, 0);
	expect_usable(fd, 3);
	others_served(a);
	close(fd);
}

/* A message only the daemon sends (pong) is refused; the connection goes on. */
static void
test_daemon_only_type(void **state)
{
	struct abuse *a = *state;
	struct proto_out out;
	int fd = raw_hello(a);

	assert_int_equal(proto_encode_simple(4, PROTO_PONG, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
	expect_error(fd, 4, PROTO_ERR_BAD_REQUEST, NULL, 0);
	expect_usable(fd, 5);
	others_served(a);
	close(fd);
}

/* Send a run of runtime with inline code. */
static void
send_run(int fd, uint32_t id, const char *runtime, const struct proto_limits *lim)
{
	struct proto_run run;
	struct proto_out out;

	front_run_init(&run, runtime, "echo hi\n");
	if (lim != NULL)
		run.limits = *lim;
	assert_int_equal(proto_encode_run(id, &run, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
}

/* A run of a runtime the daemon does not have: unknown_runtime. */
static void
test_unknown_runtime(void **state)
{
	struct abuse *a = *state;
	char msg[PROTO_MSG_PRINTABLE_MAX];
	int fd = raw_hello(a);

	send_run(fd, 11, "cobol-on-mars", NULL);
	expect_error(fd, 11, PROTO_ERR_UNKNOWN_RUNTIME, msg, sizeof(msg));
	assert_non_null(strstr(msg, "cobol-on-mars"));
	expect_usable(fd, 12);
	others_served(a);
	close(fd);
}

/* A run asking a limit above the ceiling: bad_request naming wall_ms. */
static void
test_limit_above_ceiling(void **state)
{
	struct abuse *a = *state;
	struct proto_limits lim;
	char msg[PROTO_MSG_PRINTABLE_MAX];
	int fd = raw_hello(a);

	memset(&lim, 0, sizeof(lim));
	lim.v[PROTO_LIMIT_WALL_MS] = 1000000000ULL;
	send_run(fd, 21, "sh", &lim);
	expect_error(fd, 21, PROTO_ERR_BAD_REQUEST, msg, sizeof(msg));
	assert_non_null(strstr(msg, "wall_ms"));
	assert_null(strstr(msg, "memory_bytes"));
	/* Another limit names itself. */
	memset(&lim, 0, sizeof(lim));
	lim.v[PROTO_LIMIT_PROCESSES] = 1000000;
	send_run(fd, 22, "sh", &lim);
	expect_error(fd, 22, PROTO_ERR_BAD_REQUEST, msg, sizeof(msg));
	assert_non_null(strstr(msg, "processes"));
	expect_usable(fd, 23);
	others_served(a);
	close(fd);
}

/*
 * A blob memfd without seals: bad_request. The encoder only attaches sealed
 * memfds, so the packet is encoded with a sealed one that is then swapped
 * for an unsealed memfd of the same size and contents.
 */
static void
test_unsealed_memfd(void **state)
{
	struct abuse *a = *state;
	static const char code[] = "echo sealed\n";
	char msg[PROTO_MSG_PRINTABLE_MAX];
	struct proto_run run;
	struct proto_out out;
	int fd = raw_hello(a), sealed, unsealed;

	assert_int_equal(memfd_sealed_create("code", code, sizeof(code) - 1, &sealed), 0);
	assert_int_equal(memfd_new("code", &unsealed), 0);
	assert_int_equal(write(unsealed, code, sizeof(code) - 1), (ssize_t)(sizeof(code) - 1));
	memset(&run, 0, sizeof(run));
	run.runtime = "sh";
	run.code = (struct proto_blob){.data = (const uint8_t *)code,
				       .len = sizeof(code) - 1,
				       .fd = sealed,
				       .present = true};
	assert_int_equal(proto_encode_run(31, &run, &out), 0);
	assert_int_equal(out.nfds, 1);
	close(out.fds[0]);
	out.fds[0] = unsealed; /* front_send_out() closes it */
	assert_int_equal(front_send_out(fd, &out), 0);
	expect_error(fd, 31, PROTO_ERR_BAD_REQUEST, msg, sizeof(msg));
	assert_non_null(strstr(msg, "sealed"));
	expect_usable(fd, 32);

	/* The same packet with the sealed memfd is a valid run. */
	run.code.fd = sealed;
	assert_int_equal(proto_encode_run(33, &run, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
	expect_reply(fd, 33, PROTO_RESULT);
	close(sealed);
	others_served(a);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_garbage_after_hello),
		cmocka_unit_test(test_oversized_packet),
		cmocka_unit_test(test_first_message_not_hello),
		cmocka_unit_test(test_hello_wrong_version),
		cmocka_unit_test(test_refused_after_close),
		cmocka_unit_test(test_hello_twice),
		cmocka_unit_test(test_daemon_only_type),
		cmocka_unit_test(test_unknown_runtime),
		cmocka_unit_test(test_limit_above_ceiling),
		cmocka_unit_test(test_unsealed_memfd),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
