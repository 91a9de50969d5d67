/*
 * test_requests.c: requests the daemon must refuse with an error reply,
 * leaving itself and the connection working. Each test gets a fresh daemon,
 * so that one which brings the daemon down fails alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto.h"
#include "sbx.h"

static int
setup(void **state)
{
	static struct sbx s;

	if (sbx_start(&s, NULL) < 0)
		return -1;
	*state = &s;
	return 0;
}

static int
teardown(void **state)
{
	return sbx_stop(*state) == 0 ? 0 : -1;
}

/* Run req (freed) and assert the daemon refused it with r and code, and
 * that the daemon and the connection still work afterwards. */
static void
assert_refused(struct sbx *s, struct airlock_run_req *req, int want_r, const char *want_code)
{
	struct airlock_result *res = NULL;
	const char *code = NULL, *msg = NULL;
	int r = airlock_run(s->conn, req, &res);

	airlock_run_req_free(req);
	airlock_conn_last_error(s->conn, &code, &msg);
	if (r != want_r)
		fprintf(stderr, "airlock_run: %d (%s: %s), want %d %s\n", r, code ? code : "-",
			msg ? msg : "-", want_r, want_code);
	assert_int_equal(r, want_r);
	assert_null(res);
	assert_string_equal(code, want_code);
	/* Still alive and serving. */
	assert_int_equal(airlock_ping(s->conn), 0);
	res = sbx_run(s, sbx_req("sh", "echo still here\n"));
	sbx_assert_ok(res);
	airlock_result_free(res);
	assert_true(fixture_alive(&s->f));
}

/* Send msg (freed) on fd and decode the one reply into *ret. */
static void
raw_exchange(int fd, struct proto_out *msg, struct proto_msg *ret)
{
	static char buf[65536];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	assert_int_equal(proto_send(fd, msg), 0);
	proto_out_free(msg);
	assert_int_equal(poll(&p, 1, 10000), 1);
	n = recv(fd, buf, sizeof(buf), 0);
	assert_true(n > 0);
	assert_int_equal(proto_decode(buf, (size_t)n, NULL, 0, ret, NULL, NULL, NULL, 0), 0);
}

/*
 * An input file name with a "..", "." or empty component: the library
 * refuses it (the request rule of common/rules.c), and the daemon, sent it
 * raw past the library, answers bad_request and goes on serving.
 */
static void
check_bad_name(void **state, const char *name)
{
	struct sbx *s = *state;
	struct airlock_run_req *req = sbx_req("sh", "echo ran\n");
	struct proto_hello hello = {.version = PROTO_VERSION, .peer = "test_requests"};
	struct proto_file file = {
		.name = name,
		.data = {.data = (const uint8_t *)"x", .len = 1, .fd = -1, .present = true}};
	struct proto_run run = {.runtime = "sh", .files = &file, .nfiles = 1};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct proto_out out;
	struct proto_msg m;
	int fd;

	assert_int_equal(airlock_run_req_add_file(req, name, "x", 1), -EINVAL);
	airlock_run_req_free(req);

	run.code = (struct proto_blob){
		.data = (const uint8_t *)"echo ran\n", .len = 9, .fd = -1, .present = true};
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->f.sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(proto_encode_hello(1, PROTO_HELLO, &hello, &out), 0);
	raw_exchange(fd, &out, &m);
	assert_int_equal(m.type, PROTO_HELLO_OK);
	proto_msg_free(&m);
	assert_int_equal(proto_encode_run(2, &run, &out), 0);
	raw_exchange(fd, &out, &m);
	assert_int_equal(m.type, PROTO_ERROR);
	assert_int_equal(m.u.error.code, PROTO_ERR_BAD_REQUEST);
	proto_msg_free(&m);
	close(fd);
	/* Still alive and serving. */
	assert_int_equal(airlock_ping(s->conn), 0);
	assert_true(fixture_alive(&s->f));
}

static void
test_input_dotdot(void **state)
{
	check_bad_name(state, "../evil");
}

static void
test_input_inner_dotdot(void **state)
{
	check_bad_name(state, "a/../../evil");
}

static void
test_input_trailing_dotdot(void **state)
{
	check_bad_name(state, "a/..");
}

static void
test_input_dot(void **state)
{
	check_bad_name(state, "./x");
}

static void
test_input_empty_component(void **state)
{
	check_bad_name(state, "a//b");
}

/* Input files larger than the workspace are refused (too_large), not
 * crashed on. */
static void
test_inputs_larger_than_workspace(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "echo ran\n");
	static char big[4096];

	memset(big, 'b', sizeof(big));
	assert_int_equal(airlock_run_req_add_file(req, "big", big, sizeof(big)), 0);
	sbx_limit(req, AIRLOCK_LIMIT_WORKSPACE_BYTES, 1024);
	assert_refused(*state, req, -E2BIG, "too_large");
}

static void
test_unknown_runtime(void **state)
{
	struct airlock_run_req *req = sbx_req("cobol", "DISPLAY 'HI'.\n");

	assert_refused(*state, req, -EPROTO, "unknown_runtime");
}

static void
test_exec_without_argv(void **state)
{
	assert_refused(*state, sbx_req("exec", NULL), -EPROTO, "bad_request");
}

static void
test_python_without_code(void **state)
{
	assert_refused(*state, sbx_req("python", NULL), -EPROTO, "bad_request");
}

static void
test_wall_above_ceiling(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "echo ran\n");

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 300001);
	assert_refused(*state, req, -EPROTO, "bad_request");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_input_dotdot),	       T(test_input_inner_dotdot),
		T(test_input_trailing_dotdot), T(test_input_dot),
		T(test_input_empty_component), T(test_inputs_larger_than_workspace),
		T(test_unknown_runtime),       T(test_exec_without_argv),
		T(test_python_without_code),   T(test_wall_above_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
