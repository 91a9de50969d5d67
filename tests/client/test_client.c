/*
 * test_client.c: libairlock against a fake daemon in the same process.
 *
 * socket(2) and connect(2) are link seams (-Wl,--wrap=): the library gets one
 * end of a SOCK_SEQPACKET socketpair, a thread on the other end plays the
 * daemon with messages encoded by the real codec (common/proto.c).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
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

#include "airlock.h"
#include "fdpass.h"
#include "proto.h"
#include "request.h"

#include <msgpack.h>

int __wrap_socket(int domain, int type, int protocol);
int __wrap_connect(int fd, const struct sockaddr *sa, socklen_t len);

/* The fake daemon's state; one per test. */
struct fake {
	int client_fd; /* handed out by the socket() seam */
	int server_fd;
	char connect_path[108];
	void (*script)(struct fake *f);
	const void *row; /* the table row a table-driven test runs */
	pthread_t thread;
	/* What the scripts saw, checked by the tests after the join. */
	char runtime[64];
	size_t code_len;
	bool code_ok;
	size_t argc;
	char argv1[64];
	char env_value[64];
	size_t nfiles;
	uint64_t wall_ms;
	uint32_t run_ids[2];
	struct proto_cancel cancels[2];
	struct proto_session_open opens[2];
	bool run_stream[2];
	char run_session[2][PROTO_SESSION_ID_LEN + 1];
	char paths[8][64];
	size_t npaths;
	size_t write_len;
	bool write_memfd;
	bool write_ok;
};

#define TEST_SESSION "0123456789abcdef0123456789abcdef"

static struct fake *fake_current;

/* The socket() seam: hand out the client end of the fake's socketpair. */
int
__wrap_socket(int domain, int type, int protocol)
{
	int fd;

	if (fake_current == NULL || domain != AF_UNIX || (type & SOCK_SEQPACKET) == 0 ||
	    (type & SOCK_CLOEXEC) == 0)
		return errno = EAFNOSUPPORT, -1;
	fd = fake_current->client_fd;
	fake_current->client_fd = -1;
	return fd;
}

/* The connect() seam: remember the path, succeed. */
int
__wrap_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)sa;

	snprintf(fake_current->connect_path, sizeof(fake_current->connect_path), "%s",
		 un->sun_path);
	return 0;
}

/* Receive and decode one packet from the client (blocking). */
static void
fake_recv(struct fake *f, struct proto_msg *msg)
{
	static uint8_t buf[PROTO_MSG_MAX];
	int fds[PROTO_FDS_MAX];
	enum proto_error code;
	size_t nfds = 0;
	uint32_t id;
	char why[256];
	ssize_t n;

	n = fdpass_recv(f->server_fd, buf, sizeof(buf), fds, PROTO_FDS_MAX, &nfds);
	assert_true(n > 0);
	assert_int_equal(proto_decode(buf, (size_t)n, fds, nfds, msg, &code, &id, why, sizeof(why)),
			 0);
}

/* Send one encoded packet and free it. */
static void
fake_send(struct fake *f, struct proto_out *out)
{
	assert_int_equal(proto_send(f->server_fd, out), 0);
	proto_out_free(out);
}

/* Expect a hello and answer it. */
static void
fake_hello(struct fake *f)
{
	struct proto_hello h = {.version = PROTO_VERSION, .peer = "fake/1"};
	struct proto_msg msg;
	struct proto_out out;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_HELLO);
	assert_int_equal(msg.u.hello.version, PROTO_VERSION);
	assert_int_equal(proto_encode_hello(msg.id, PROTO_HELLO_OK, &h, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
}

/* Send a result for id: exit code exit_code, stdout text. */
static void
fake_result(struct fake *f, uint32_t id, int exit_code, const char *text)
{
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED, .exit_code = exit_code};
	struct proto_out out;

	res.out[0].data = (struct proto_blob){
		.data = (const uint8_t *)text, .len = strlen(text), .fd = -1, .present = true};
	res.out[0].total = strlen(text);
	res.out[1].data =
		(struct proto_blob){.data = (const uint8_t *)"", .fd = -1, .present = true};
	assert_int_equal(proto_encode_result(id, &res, &out), 0);
	fake_send(f, &out);
}

/* Send a result for id with outcome cancelled. */
static void
fake_result_cancelled(struct fake *f, uint32_t id)
{
	struct proto_result res = {.outcome = PROTO_OUTCOME_CANCELLED, .wall_ms = 40};
	struct proto_out out;

	res.out[0].data =
		(struct proto_blob){.data = (const uint8_t *)"", .fd = -1, .present = true};
	res.out[1].data =
		(struct proto_blob){.data = (const uint8_t *)"", .fd = -1, .present = true};
	assert_int_equal(proto_encode_result(id, &res, &out), 0);
	fake_send(f, &out);
}

/* Receive a cancel request, store what it named in slot i, return its id. */
static uint32_t
fake_recv_cancel(struct fake *f, size_t i)
{
	struct proto_msg msg;
	uint32_t id;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_CANCEL);
	f->cancels[i] = msg.u.cancel;
	id = msg.id;
	proto_msg_free(&msg);
	return id;
}

/* Answer request id with a message without fields of type. */
static void
fake_simple(struct fake *f, uint32_t id, enum proto_type type)
{
	struct proto_out out;

	assert_int_equal(proto_encode_simple(id, type, &out), 0);
	fake_send(f, &out);
}

/* Answer request id with an error reply. */
static void
fake_error(struct fake *f, uint32_t id, enum proto_error code, const char *message)
{
	struct proto_out out;

	assert_int_equal(proto_encode_error(id, code, message, &out), 0);
	fake_send(f, &out);
}

/* Receive a ps request and return its id. */
static uint32_t
fake_recv_ps(struct fake *f)
{
	struct proto_msg msg;
	uint32_t id;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_PS);
	id = msg.id;
	proto_msg_free(&msg);
	return id;
}

/* Answer a ps request with two runs, or none. */
static void
fake_ps_ok(struct fake *f, uint32_t id, bool empty)
{
	struct proto_ps_entry runs[2] = {
		{.run = 17,
		 .uid = 1000,
		 .pid = 4321,
		 .runtime = "python",
		 .state = "running",
		 .elapsed_ms = 1500},
		{.run = 18,
		 .uid = 0,
		 .pid = 0,
		 .runtime = "sh",
		 .state = "queued",
		 .elapsed_ms = 7},
	};
	struct proto_ps ps = {.runs = empty ? NULL : runs, .nruns = empty ? 0 : 2};
	struct proto_out out;

	assert_int_equal(proto_encode_ps(id, &ps, &out), 0);
	fake_send(f, &out);
}

/* Receive a run request and return its id. */
static uint32_t
fake_recv_run(struct fake *f)
{
	struct proto_msg msg;
	uint32_t id;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_RUN);
	id = msg.id;
	proto_msg_free(&msg);
	return id;
}

/* The fake's thread: run the test's script. */
static void *
fake_thread(void *arg)
{
	struct fake *f = arg;

	f->script(f);
	return NULL;
}

/* Start a fake daemon running script. */
static struct fake *
fake_start(void (*script)(struct fake *f))
{
	struct fake *f = calloc(1, sizeof(*f));
	int sv[2];

	assert_non_null(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	f->client_fd = sv[0];
	f->server_fd = sv[1];
	f->script = script;
	fake_current = f;
	assert_int_equal(pthread_create(&f->thread, NULL, fake_thread, f), 0);
	return f;
}

/* Wait for the script to finish. */
static void
fake_join(struct fake *f)
{
	assert_int_equal(pthread_join(f->thread, NULL), 0);
}

/* Free a joined fake. */
static void
fake_free(struct fake *f)
{
	close(f->server_fd);
	if (f->client_fd >= 0)
		close(f->client_fd);
	fake_current = NULL;
	free(f);
}

/* Wait for the script to finish and free the fake. */
static void
fake_stop(struct fake *f)
{
	fake_join(f);
	fake_free(f);
}

/* Script: hello, ping, info. */
static void
script_ping_info(struct fake *f)
{
	struct proto_info info = {.daemon = "0.1.0-fake", .version = PROTO_VERSION, .uid = 4242};
	struct proto_msg msg;
	struct proto_out out;

	fake_hello(f);
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_PING);
	assert_int_equal(proto_encode_simple(msg.id, PROTO_PONG, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_INFO);
	info.runtimes[0] = "python";
	info.runtimes[1] = "exec";
	info.nruntimes = 2;
	info.defaults.v[PROTO_LIMIT_WALL_MS] = 10000;
	info.ceilings.v[PROTO_LIMIT_WALL_MS] = 60000;
	info.ceilings.v[PROTO_LIMIT_ARTIFACT_BYTES] = 1 << 20;
	assert_int_equal(proto_encode_info(msg.id, &info, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
}

/* connect resolves the path from the environment, pings, reads info. */
static void
test_ping_info(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;
	struct fake *f = fake_start(script_ping_info);
	enum airlock_limit wall;

	setenv("AIRLOCK_SOCKET", "/tmp/fake-airlock.sock", 1);
	assert_int_equal(airlock_connect(NULL, &conn), 0);
	unsetenv("AIRLOCK_SOCKET");
	assert_string_equal(f->connect_path, "/tmp/fake-airlock.sock");
	assert_true(airlock_conn_fd(conn) >= 0);
	assert_int_equal(airlock_conn_last_error(conn, NULL, NULL), -ENOENT);
	assert_int_equal(airlock_ping(conn), 0);
	assert_int_equal(airlock_info(conn, &info), 0);
	assert_string_equal(airlock_info_daemon_version(info), "0.1.0-fake");
	assert_int_equal(airlock_info_protocol_version(info), PROTO_VERSION);
	assert_int_equal(airlock_info_uid(info), 4242);
	assert_int_equal(airlock_info_runtime_count(info), 2);
	assert_string_equal(airlock_info_runtime_name(info, 1), "exec");
	assert_null(airlock_info_runtime_name(info, 2));
	assert_int_equal(airlock_limit_from_name("wall_ms", &wall), 0);
	assert_int_equal(wall, AIRLOCK_LIMIT_WALL_MS);
	assert_int_equal(airlock_info_limit_default(info, wall), 10000);
	assert_int_equal(airlock_info_limit_ceiling(info, wall), 60000);
	assert_int_equal(airlock_info_limit_ceiling(info, AIRLOCK_LIMIT_ARTIFACT_BYTES), 1 << 20);
	airlock_info_free(info);
	airlock_conn_free(conn);
	fake_stop(f);
}

/* Script: hello, one run checked field by field, a result with artifacts. */
static void
script_run(struct fake *f)
{
	static char big[PROTO_INLINE_MAX * 3];
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED,
				   .exit_code = 3,
				   .wall_ms = 12,
				   .cpu_ms = 7,
				   .memory_peak_bytes = 1 << 20,
				   .queued_ms = 1};
	struct proto_artifact arts[2];
	struct proto_msg msg;
	struct proto_out out;
	size_t i;

	fake_hello(f);
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_RUN);
	snprintf(f->runtime, sizeof(f->runtime), "%s", msg.u.run.runtime);
	f->code_len = msg.u.run.code.len;
	f->code_ok = msg.u.run.code.fd >= 0; /* above PROTO_INLINE_MAX: a memfd */
	for (i = 0; i < msg.u.run.code.len; i++)
		if (msg.u.run.code.data[i] != (uint8_t)('a' + i % 26))
			f->code_ok = false;
	f->argc = msg.u.run.argc;
	if (msg.u.run.argc > 1)
		snprintf(f->argv1, sizeof(f->argv1), "%s", msg.u.run.argv[1]);
	if (msg.u.run.nenv == 1 && strcmp(msg.u.run.env[0].key, "K") == 0)
		snprintf(f->env_value, sizeof(f->env_value), "%s", msg.u.run.env[0].value);
	f->nfiles = msg.u.run.nfiles;
	f->wall_ms = msg.u.run.limits.v[PROTO_LIMIT_WALL_MS];

	memset(big, 'x', sizeof(big));
	res.out[0].data = (struct proto_blob){
		.data = (const uint8_t *)"out\0put", .len = 7, .fd = -1, .present = true};
	res.out[0].total = 7;
	res.out[1].data = (struct proto_blob){
		.data = (const uint8_t *)"err", .len = 3, .fd = -1, .present = true};
	res.out[1].total = 100;
	res.out[1].truncated = true;
	arts[0] = (struct proto_artifact){
		.name = "dir/small.txt",
		.size = 5,
		.data = {.data = (const uint8_t *)"small", .len = 5, .fd = -1, .present = true}};
	arts[1] = (struct proto_artifact){.name = "big.bin",
					  .size = sizeof(big) + 10,
					  .truncated = true,
					  .data = {.data = (const uint8_t *)big,
						   .len = sizeof(big),
						   .fd = -1,
						   .present = true}};
	res.artifacts = arts;
	res.nartifacts = 2;
	assert_int_equal(proto_encode_result(msg.id, &res, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
}

/* A blocking run carries every field there and the whole result back. */
static void
test_run_blocking(void **state)
{
	static char code[PROTO_INLINE_MAX * 2 + 7];
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct fake *f = fake_start(script_run);
	const void *data;
	size_t len, i;

	for (i = 0; i < sizeof(code); i++)
		code[i] = (char)('a' + i % 26);
	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "exec"), 0);
	assert_int_equal(airlock_run_req_set_code(req, code, sizeof(code)), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "/bin/echo"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "hi"), 0);
	assert_int_equal(airlock_run_req_set_env(req, "K", "v1"), 0);
	assert_int_equal(airlock_run_req_set_env(req, "K", "v2"), 0);
	assert_int_equal(airlock_run_req_set_env(req, "A=B", "x"), -EINVAL);
	assert_int_equal(airlock_run_req_add_file(req, "in.txt", "abc", 3), 0);
	assert_int_equal(airlock_run_req_add_file(req, "in.txt", "abc", 3), -EEXIST);
	assert_int_equal(airlock_run_req_add_file(req, "/etc/x", "abc", 3), -EINVAL);
	assert_int_equal(airlock_run_req_set_limit(req, AIRLOCK_LIMIT_WALL_MS, 1500), 0);
	assert_int_equal(airlock_run_req_set_limit(req, (enum airlock_limit)99, 1), -EINVAL);
	assert_int_equal(airlock_run(conn, req, &res), 0);
	/* The result outlives the connection. */
	airlock_conn_free(conn);
	fake_join(f);
	assert_string_equal(f->runtime, "exec");
	assert_int_equal(f->code_len, sizeof(code));
	assert_true(f->code_ok);
	assert_int_equal(f->argc, 2);
	assert_string_equal(f->argv1, "hi");
	assert_string_equal(f->env_value, "v2");
	assert_int_equal(f->nfiles, 1);
	assert_int_equal(f->wall_ms, 1500);
	fake_free(f);

	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_string_equal(airlock_outcome_name(airlock_result_outcome(res)), "exited");
	assert_int_equal(airlock_result_exit_code(res), 3);
	assert_int_equal(airlock_result_signal(res), 0);
	assert_int_equal(airlock_result_wall_ms(res), 12);
	assert_int_equal(airlock_result_cpu_ms(res), 7);
	assert_int_equal(airlock_result_memory_peak_bytes(res), 1 << 20);
	assert_int_equal(airlock_result_queued_ms(res), 1);
	assert_int_equal(airlock_result_stdout(res, &data, &len), 0);
	assert_int_equal(len, 7);
	assert_memory_equal(data, "out\0put", 7);
	assert_false(airlock_result_stdout_truncated(res));
	assert_int_equal(airlock_result_stderr(res, &data, &len), 0);
	assert_int_equal(len, 3);
	assert_true(airlock_result_stderr_truncated(res));
	assert_int_equal(airlock_result_stderr_total(res), 100);
	assert_null(airlock_result_error(res));
	assert_int_equal(airlock_result_artifact_count(res), 2);
	assert_string_equal(airlock_result_artifact_name(res, 0), "dir/small.txt");
	assert_int_equal(airlock_result_artifact_data(res, 0, &data, &len), 0);
	assert_memory_equal(data, "small", 5);
	assert_string_equal(airlock_result_artifact_name(res, 1), "big.bin");
	assert_true(airlock_result_artifact_truncated(res, 1));
	assert_int_equal(airlock_result_artifact_size(res, 1), PROTO_INLINE_MAX * 3 + 10);
	assert_int_equal(airlock_result_artifact_data(res, 1, &data, &len), 0);
	assert_int_equal(len, PROTO_INLINE_MAX * 3);
	assert_int_equal(((const char *)data)[len - 1], 'x');
	assert_int_equal(airlock_result_artifact_data(res, 2, &data, &len), -EINVAL);
	assert_null(airlock_result_artifact_name(res, 2));
	airlock_result_free(res);
	airlock_run_req_free(req);
}

/* Script: two runs in flight, answered in reverse order. */
static void
script_out_of_order(struct fake *f)
{
	fake_hello(f);
	f->run_ids[0] = fake_recv_run(f);
	f->run_ids[1] = fake_recv_run(f);
	fake_result(f, f->run_ids[1], 2, "second");
	fake_result(f, f->run_ids[0], 1, "first");
}

/* Two runs in flight on the non-blocking API come back matched by id. */
static void
test_two_in_flight(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res[2] = {NULL, NULL};
	struct fake *f = fake_start(script_out_of_order);
	uint32_t id_a, id_b, id, order[2];
	size_t got = 0;
	const void *data;
	size_t len;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_code(req, "print(1)", 8), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_a), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_b), 0);
	assert_int_not_equal(id_a, id_b);
	assert_int_not_equal(id_a, 0);
	while (got < 2) {
		struct pollfd p = {.fd = airlock_conn_fd(conn), .events = POLLIN};
		struct airlock_result *r = NULL;
		int rc;

		rc = airlock_conn_next_result(conn, &id, &r);
		if (rc == -EAGAIN) {
			assert_int_equal(poll(&p, 1, 5000), 1);
			assert_int_equal(airlock_conn_process(conn), 0);
			continue;
		}
		assert_int_equal(rc, 0);
		order[got] = id;
		res[id == id_a ? 0 : 1] = r;
		got++;
	}
	{
		struct airlock_result *none = NULL;

		assert_int_equal(airlock_conn_next_result(conn, &id, &none), -EAGAIN);
		assert_null(none);
	}
	/* B was answered first. */
	assert_int_equal(order[0], id_b);
	assert_int_equal(order[1], id_a);
	assert_int_equal(airlock_result_exit_code(res[0]), 1);
	assert_int_equal(airlock_result_stdout(res[0], &data, &len), 0);
	assert_memory_equal(data, "first", 5);
	assert_int_equal(airlock_result_exit_code(res[1]), 2);
	assert_int_equal(airlock_result_stdout(res[1], &data, &len), 0);
	assert_memory_equal(data, "second", 6);
	assert_int_equal(f->run_ids[0], id_a);
	airlock_result_free(res[0]);
	airlock_result_free(res[1]);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
	fake_stop(f);
}

/* Script: a submitted run and a blocking one; the submitted one answers first. */
static void
script_blocking_with_other(struct fake *f)
{
	fake_hello(f);
	f->run_ids[0] = fake_recv_run(f);
	f->run_ids[1] = fake_recv_run(f);
	fake_result(f, f->run_ids[0], 10, "queued");
	fake_result(f, f->run_ids[1], 20, "waited");
}

/* A blocking run queues the result of another run that arrives meanwhile. */
static void
test_blocking_queues_others(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL, *other = NULL;
	struct fake *f = fake_start(script_blocking_with_other);
	uint32_t id_a, id = 0;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_a), 0);
	assert_int_equal(airlock_run(conn, req, &res), 0);
	assert_int_equal(airlock_result_exit_code(res), 20);
	assert_int_equal(airlock_conn_next_result(conn, &id, &other), 0);
	assert_int_equal(id, id_a);
	assert_int_equal(airlock_result_exit_code(other), 10);
	assert_int_equal(airlock_conn_next_result(conn, &id, &other), -EAGAIN);
	airlock_result_free(res);
	airlock_result_free(other);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
	fake_stop(f);
}

/* Script: refuse the first run with busy, the second (submitted) with too_large. */
static void
script_errors(struct fake *f)
{
	struct proto_out out;
	uint32_t id;

	fake_hello(f);
	id = fake_recv_run(f);
	assert_int_equal(proto_encode_error(id, PROTO_ERR_BUSY, "too many runs", &out), 0);
	fake_send(f, &out);
	f->run_ids[0] = fake_recv_run(f);
	assert_int_equal(
		proto_encode_error(f->run_ids[0], PROTO_ERR_TOO_LARGE, "code too big", &out), 0);
	fake_send(f, &out);
	/* Then hang up: the client must see the connection end. */
	shutdown(f->server_fd, SHUT_RDWR);
}

/* Daemon error replies map to errnos and keep their code and message. */
static void
test_error_reply(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct fake *f = fake_start(script_errors);
	const char *code, *message;
	uint32_t id_b, id = 0;
	struct pollfd p;
	int rc;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run(conn, req, &res), -EBUSY);
	assert_null(res);
	assert_int_equal(airlock_conn_last_error(conn, &code, &message), 0);
	assert_string_equal(code, "busy");
	assert_string_equal(message, "too many runs");

	assert_int_equal(airlock_run_submit(conn, req, &id_b), 0);
	p = (struct pollfd){.fd = airlock_conn_fd(conn), .events = POLLIN};
	while ((rc = airlock_conn_next_result(conn, &id, &res)) == -EAGAIN) {
		assert_int_equal(poll(&p, 1, 5000), 1);
		rc = airlock_conn_process(conn);
		assert_true(rc == 0 || rc == -ECONNRESET);
	}
	assert_int_equal(rc, -E2BIG);
	assert_int_equal(id, id_b);
	assert_null(res);
	assert_int_equal(airlock_conn_last_error(conn, &code, &message), 0);
	assert_string_equal(code, "too_large");
	assert_string_equal(message, "code too big");

	fake_stop(f);
	assert_int_equal(airlock_ping(conn), -ECONNRESET);
	assert_int_equal(airlock_ping(conn), -ECONNRESET);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: refuse the hello. */
static void
script_unauthorized(struct fake *f)
{
	struct proto_msg msg;
	struct proto_out out;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_HELLO);
	assert_int_equal(
		proto_encode_error(msg.id, PROTO_ERR_UNAUTHORIZED, "uid 1234 not allowed", &out),
		0);
	proto_msg_free(&msg);
	fake_send(f, &out);
}

/* A refused hello fails connect with -EACCES and the daemon's reason. */
static void
test_connect_refused(void **state)
{
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_unauthorized);
	char code[32], message[64];

	assert_int_equal(
		airlock_connect_error("/x", &conn, code, sizeof(code), message, sizeof(message)),
		-EACCES);
	assert_null(conn);
	assert_string_equal(code, "unauthorized");
	assert_string_equal(message, "uid 1234 not allowed");
	fake_stop(f);
}

/* Script: answer the hello with a protocol version the library does not speak. */
static void
script_other_version(struct fake *f)
{
	struct proto_hello h = {.version = PROTO_VERSION + 1, .peer = "fake/2"};
	struct proto_msg msg;
	struct proto_out out;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_HELLO);
	assert_int_equal(proto_encode_hello(msg.id, PROTO_HELLO_OK, &h, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
}

/* A hello_ok of another version fails connect with -EPROTONOSUPPORT; it is
 * no daemon error reply, so there is no code or message to copy out. */
static void
test_connect_other_version(void **state)
{
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_other_version);
	char code[32] = "x", message[64] = "x";

	assert_int_equal(
		airlock_connect_error("/x", &conn, code, sizeof(code), message, sizeof(message)),
		-EPROTONOSUPPORT);
	assert_null(conn);
	assert_string_equal(code, "");
	assert_string_equal(message, "");
	fake_stop(f);
}

/* Script: a run, cancelled by its request id: the cancelled result comes
 * before cancel_ok; a second cancel of the same request is not_found. */
static void
script_cancel_request(struct fake *f)
{
	uint32_t id;

	fake_hello(f);
	f->run_ids[0] = fake_recv_run(f);
	id = fake_recv_cancel(f, 0);
	fake_result_cancelled(f, f->run_ids[0]);
	fake_simple(f, id, PROTO_CANCEL_OK);
	id = fake_recv_cancel(f, 1);
	fake_error(f, id, PROTO_ERR_NOT_FOUND, "no request 1 in progress");
}

/* Submit, cancel by request id, collect the cancelled result; not_found is -ENOENT. */
static void
test_cancel_request(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct fake *f = fake_start(script_cancel_request);
	const char *code, *message;
	uint32_t id_a, id = 0;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_a), 0);
	assert_int_equal(airlock_cancel(conn, id_a), 0);
	/* The result arrived while cancel waited: it was queued, not lost. */
	assert_int_equal(airlock_conn_next_result(conn, &id, &res), 0);
	assert_int_equal(id, id_a);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_CANCELLED);
	assert_string_equal(airlock_outcome_name(airlock_result_outcome(res)), "cancelled");
	assert_int_equal(airlock_result_wall_ms(res), 40);
	airlock_result_free(res);
	res = NULL;
	assert_int_equal(airlock_conn_next_result(conn, &id, &res), -EAGAIN);

	assert_int_equal(airlock_cancel(conn, id_a), -ENOENT);
	assert_int_equal(airlock_conn_last_error(conn, &code, &message), 0);
	assert_string_equal(code, "not_found");
	assert_string_equal(message, "no request 1 in progress");
	/* A not_found reply leaves the connection usable and queues nothing. */
	assert_int_equal(airlock_conn_next_result(conn, &id, &res), -EAGAIN);
	fake_join(f);
	assert_int_equal(f->cancels[0].request, id_a);
	assert_int_equal(f->cancels[0].run, 0);
	assert_int_equal(f->cancels[1].request, id_a);
	fake_free(f);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: cancel by run id, ok then not_found; then a ping still works. */
static void
script_cancel_run(struct fake *f)
{
	struct proto_msg msg;
	uint32_t id;

	fake_hello(f);
	id = fake_recv_cancel(f, 0);
	fake_simple(f, id, PROTO_CANCEL_OK);
	id = fake_recv_cancel(f, 1);
	fake_error(f, id, PROTO_ERR_NOT_FOUND, "no run 78 of uid 1000");
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_PING);
	fake_simple(f, msg.id, PROTO_PONG);
	proto_msg_free(&msg);
}

/* Cancel by daemon-wide run id: the request names the run, not a request. */
static void
test_cancel_run(void **state)
{
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_cancel_run);
	const char *code;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_cancel_run(conn, 77), 0);
	assert_int_equal(airlock_cancel_run(conn, 78), -ENOENT);
	assert_int_equal(airlock_conn_last_error(conn, &code, NULL), 0);
	assert_string_equal(code, "not_found");
	assert_int_equal(airlock_ping(conn), 0);
	fake_join(f);
	assert_int_equal(f->cancels[0].run, 77);
	assert_int_equal(f->cancels[0].request, 0);
	assert_int_equal(f->cancels[1].run, 78);
	assert_int_equal(f->cancels[1].request, 0);
	fake_free(f);
	airlock_conn_free(conn);
}

/* Script: ps answered with nothing, then with two runs. */
static void
script_ps(struct fake *f)
{
	fake_hello(f);
	fake_ps_ok(f, fake_recv_ps(f), true);
	fake_ps_ok(f, fake_recv_ps(f), false);
}

/* ps: an empty list, then every field of two entries; out of range is 0/NULL. */
static void
test_ps(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_ps *ps = NULL;
	struct fake *f = fake_start(script_ps);

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_ps(conn, &ps), 0);
	assert_non_null(ps);
	assert_int_equal(airlock_ps_count(ps), 0);
	assert_null(airlock_ps_runtime(ps, 0));
	airlock_ps_free(ps);
	ps = NULL;

	assert_int_equal(airlock_ps(conn, &ps), 0);
	/* The list outlives the connection. */
	airlock_conn_free(conn);
	fake_stop(f);
	assert_int_equal(airlock_ps_count(ps), 2);
	assert_int_equal(airlock_ps_run_id(ps, 0), 17);
	assert_int_equal(airlock_ps_uid(ps, 0), 1000);
	assert_int_equal(airlock_ps_pid(ps, 0), 4321);
	assert_string_equal(airlock_ps_runtime(ps, 0), "python");
	assert_string_equal(airlock_ps_state(ps, 0), "running");
	assert_int_equal(airlock_ps_elapsed_ms(ps, 0), 1500);
	assert_int_equal(airlock_ps_run_id(ps, 1), 18);
	assert_int_equal(airlock_ps_uid(ps, 1), 0);
	assert_int_equal(airlock_ps_pid(ps, 1), 0);
	assert_string_equal(airlock_ps_runtime(ps, 1), "sh");
	assert_string_equal(airlock_ps_state(ps, 1), "queued");
	assert_int_equal(airlock_ps_elapsed_ms(ps, 1), 7);
	assert_int_equal(airlock_ps_run_id(ps, 2), 0);
	assert_int_equal(airlock_ps_uid(ps, 2), 0);
	assert_int_equal(airlock_ps_pid(ps, 2), 0);
	assert_null(airlock_ps_runtime(ps, 2));
	assert_null(airlock_ps_state(ps, 2));
	assert_int_equal(airlock_ps_elapsed_ms(ps, 2), 0);
	airlock_ps_free(ps);
}

/* Script: a run in flight finishes while ps waits for its answer. */
static void
script_ps_with_result(struct fake *f)
{
	uint32_t id;

	fake_hello(f);
	f->run_ids[0] = fake_recv_run(f);
	id = fake_recv_ps(f);
	fake_result(f, f->run_ids[0], 5, "done");
	fake_ps_ok(f, id, false);
}

/* A result that arrives while airlock_ps() waits is queued, not lost. */
static void
test_ps_queues_result(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct airlock_ps *ps = NULL;
	struct fake *f = fake_start(script_ps_with_result);
	uint32_t id_a, id = 0;
	const void *data;
	size_t len;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_a), 0);
	assert_int_equal(airlock_ps(conn, &ps), 0);
	assert_int_equal(airlock_ps_count(ps), 2);
	assert_int_equal(airlock_conn_next_result(conn, &id, &res), 0);
	assert_int_equal(id, id_a);
	assert_int_equal(airlock_result_exit_code(res), 5);
	assert_int_equal(airlock_result_stdout(res, &data, &len), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(data, "done", 4);
	airlock_result_free(res);
	res = NULL;
	assert_int_equal(airlock_conn_next_result(conn, &id, &res), -EAGAIN);
	airlock_ps_free(ps);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
	fake_stop(f);
}

/* Script: answer a ps with a pong. */
static void
script_ps_wrong_reply(struct fake *f)
{
	fake_hello(f);
	fake_simple(f, fake_recv_ps(f), PROTO_PONG);
}

/* A reply of the wrong type to ps breaks the connection (-EBADMSG). */
static void
test_ps_wrong_reply(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_ps *ps = NULL;
	struct fake *f = fake_start(script_ps_wrong_reply);

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_ps(conn, &ps), -EBADMSG);
	assert_null(ps);
	assert_int_equal(airlock_cancel_run(conn, 1), -EBADMSG);
	airlock_conn_free(conn);
	fake_stop(f);
}

/* Script: hello, then expect a ping (nothing else) and answer it. */
static void
script_ping_only(struct fake *f)
{
	struct proto_msg msg;

	fake_hello(f);
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_PING);
	fake_simple(f, msg.id, PROTO_PONG);
	proto_msg_free(&msg);
}

/* Id 0 names no request and no run: refused locally, nothing is sent. */
static void
test_cancel_zero_id(void **state)
{
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_ping_only);

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_cancel(conn, 0), -EINVAL);
	assert_int_equal(airlock_cancel_run(conn, 0), -EINVAL);
	assert_int_equal(airlock_ping(conn), 0);
	airlock_conn_free(conn);
	fake_stop(f);
}

/* Argument checks and NULL-safe frees. */
static void
test_arguments(void **state)
{
	struct airlock_run_req *req = NULL;
	enum airlock_limit l;

	airlock_conn_free(NULL);
	airlock_result_free(NULL);
	airlock_info_free(NULL);
	airlock_run_req_free(NULL);
	assert_int_equal(airlock_connect("/x", NULL), -EINVAL);
	assert_int_equal(airlock_ping(NULL), -EINVAL);
	assert_int_equal(airlock_conn_fd(NULL), -EINVAL);
	assert_int_equal(airlock_cancel(NULL, 1), -EINVAL);
	assert_int_equal(airlock_cancel_run(NULL, 1), -EINVAL);
	assert_int_equal(airlock_ps(NULL, NULL), -EINVAL);
	airlock_ps_free(NULL);
	assert_int_equal(airlock_ps_count(NULL), 0);
	assert_null(airlock_ps_state(NULL, 0));
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, ""), -EINVAL);
	assert_int_equal(
		airlock_run_req_set_runtime(req, "a-name-that-is-far-too-long-for-a-runtime"),
		-EINVAL);
	assert_int_equal(airlock_run_req_set_code(req, NULL, 1), -EINVAL);
	assert_int_equal(airlock_run_req_set_code(req, NULL, 0), 0);
	assert_int_equal(airlock_run_req_set_env(req, "", "x"), -EINVAL);
	airlock_run_req_free(req);
	assert_string_equal(airlock_limit_name(AIRLOCK_LIMIT_ARTIFACT_BYTES), "artifact_bytes");
	assert_null(airlock_limit_name((enum airlock_limit)11));
	assert_int_equal(airlock_limit_from_name("nope", &l), -ENOENT);
	assert_string_equal(airlock_outcome_name(AIRLOCK_OUTCOME_CANCELLED), "cancelled");
	assert_string_equal(airlock_outcome_name(AIRLOCK_OUTCOME_PROCESS_LIMIT), "process_limit");
	assert_null(airlock_outcome_name((enum airlock_outcome)8));
	assert_string_equal(airlock_outcome_name(AIRLOCK_OUTCOME_MEMORY_LIMIT), "memory_limit");
}

/* Receive a message of type and return it (the caller frees it). */
static void
fake_expect(struct fake *f, enum proto_type type, struct proto_msg *msg)
{
	fake_recv(f, msg);
	assert_int_equal(msg->type, type);
}

/* Send a stream event of request id. */
static void
fake_event(struct fake *f, uint32_t id, const char *stream, const char *text)
{
	struct proto_stream ev = {.stream = stream,
				  .data = {.data = (const uint8_t *)text,
					   .len = strlen(text),
					   .fd = -1,
					   .present = true}};
	struct proto_out out;

	assert_int_equal(proto_encode_stream(id, &ev, &out), 0);
	fake_send(f, &out);
}

/* Receive a run, note its stream flag and session in slot i, return its id. */
static uint32_t
fake_recv_run_slot(struct fake *f, size_t i)
{
	struct proto_msg msg;
	uint32_t id;

	fake_expect(f, PROTO_RUN, &msg);
	f->run_stream[i] = msg.u.run.stream;
	snprintf(f->run_session[i], sizeof(f->run_session[i]), "%s",
		 msg.u.run.session != NULL ? msg.u.run.session : "");
	id = msg.id;
	proto_msg_free(&msg);
	return id;
}

/* Script: two session_opens, a list, a close, a close of an unknown session. */
static void
script_sessions(struct fake *f)
{
	struct proto_session_entry e[2] = {
		{.session = TEST_SESSION,
		 .age_ms = 65000,
		 .idle_ms = 1500,
		 .runs = 3,
		 .state = "running",
		 .interpreter = "python-site"},
		{.session = "ffffffffffffffffffffffffffffffff", .state = "idle"},
	};
	struct proto_session_list l = {.sessions = e, .nsessions = 2};
	struct proto_msg msg;
	struct proto_out out;
	size_t i;

	fake_hello(f);
	for (i = 0; i < 2; i++) {
		fake_expect(f, PROTO_SESSION_OPEN, &msg);
		f->opens[i] = msg.u.session_open;
		assert_int_equal(proto_encode_session(msg.id, PROTO_SESSION_OK, TEST_SESSION, &out),
				 0);
		proto_msg_free(&msg);
		fake_send(f, &out);
	}
	fake_expect(f, PROTO_SESSION_LIST, &msg);
	assert_int_equal(proto_encode_session_list(msg.id, &l, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
	for (i = 0; i < 2; i++) {
		fake_expect(f, PROTO_SESSION_CLOSE, &msg);
		snprintf(f->paths[i], sizeof(f->paths[i]), "%s", msg.u.session.session);
		if (i == 0)
			fake_simple(f, msg.id, PROTO_OK);
		else
			fake_error(f, msg.id, PROTO_ERR_NOT_FOUND, "no such session");
		proto_msg_free(&msg);
	}
	fake_expect(f, PROTO_PING, &msg);
	fake_simple(f, msg.id, PROTO_PONG);
	proto_msg_free(&msg);
}

/* Open with options and with defaults, list, close, close again (-ENOENT). */
static void
test_sessions(void **state)
{
	char id[AIRLOCK_SESSION_ID_LEN + 1], id2[AIRLOCK_SESSION_ID_LEN + 1];
	struct airlock_session_opts *opts = NULL;
	struct airlock_session_list *list = NULL;
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_sessions);
	const char *code, *message;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_session_opts_new(&opts), 0);
	assert_int_equal(airlock_session_opts_set_workspace_bytes(opts, 1 << 20), 0);
	assert_int_equal(airlock_session_opts_set_idle_timeout_ms(opts, 30000), 0);
	assert_int_equal(airlock_session_opts_set_lifetime_ms(opts, 60000), 0);
	assert_int_equal(airlock_session_opts_set_limit(opts, AIRLOCK_LIMIT_WALL_MS, 2000), 0);
	assert_int_equal(airlock_session_opts_set_limit(opts, (enum airlock_limit)11, 1), -EINVAL);
	assert_int_equal(airlock_session_open(conn, opts, id), 0);
	assert_string_equal(id, TEST_SESSION);
	assert_int_equal(airlock_session_open(conn, NULL, id2), 0);
	assert_string_equal(id2, TEST_SESSION);

	assert_int_equal(airlock_session_list(conn, &list), 0);
	assert_int_equal(airlock_session_close(conn, id), 0);
	assert_int_equal(airlock_session_close(conn, "ffffffffffffffffffffffffffffffff"), -ENOENT);
	assert_int_equal(airlock_conn_last_error(conn, &code, &message), 0);
	assert_string_equal(code, "not_found");
	assert_string_equal(message, "no such session");
	/* Malformed ids are refused before anything is sent. */
	assert_int_equal(airlock_session_close(conn, "0123"), -EINVAL);
	assert_int_equal(airlock_session_close(conn, "0123456789ABCDEF0123456789ABCDEF"), -EINVAL);
	assert_int_equal(airlock_session_close(conn, TEST_SESSION "0"), -EINVAL);
	assert_int_equal(airlock_session_close(conn, NULL), -EINVAL);
	assert_int_equal(airlock_ping(conn), 0);
	airlock_conn_free(conn);
	fake_join(f);
	assert_int_equal(f->opens[0].workspace_bytes, 1 << 20);
	assert_int_equal(f->opens[0].idle_timeout_ms, 30000);
	assert_int_equal(f->opens[0].lifetime_ms, 60000);
	assert_int_equal(f->opens[0].limits.v[PROTO_LIMIT_WALL_MS], 2000);
	assert_int_equal(f->opens[1].workspace_bytes, 0);
	assert_int_equal(f->opens[1].idle_timeout_ms, 0);
	assert_int_equal(f->opens[1].lifetime_ms, 0);
	assert_int_equal(f->opens[1].limits.v[PROTO_LIMIT_WALL_MS], 0);
	assert_string_equal(f->paths[0], TEST_SESSION);
	fake_free(f);

	/* The list outlives the connection. */
	assert_int_equal(airlock_session_list_count(list), 2);
	assert_string_equal(airlock_session_list_id(list, 0), TEST_SESSION);
	assert_int_equal(airlock_session_list_age_ms(list, 0), 65000);
	assert_int_equal(airlock_session_list_idle_ms(list, 0), 1500);
	assert_int_equal(airlock_session_list_runs(list, 0), 3);
	assert_string_equal(airlock_session_list_state(list, 0), "running");
	assert_string_equal(airlock_session_list_state(list, 1), "idle");
	assert_string_equal(airlock_session_list_interpreter(list, 0), "python-site");
	assert_null(airlock_session_list_interpreter(list, 1));
	assert_null(airlock_session_list_interpreter(list, 2));
	assert_null(airlock_session_list_id(list, 2));
	assert_null(airlock_session_list_state(list, 2));
	assert_int_equal(airlock_session_list_runs(list, 2), 0);
	airlock_session_list_free(list);
	airlock_session_opts_free(opts);
}

/* Script: file operations, checked and answered one by one. */
static void
script_files(struct fake *f)
{
	static char big[PROTO_INLINE_MAX * 2];
	struct proto_file_entry entries[4] = {
		{.name = "a.txt", .kind = "file", .size = 5, .mtime_ms = 1700000000123ULL},
		{.name = "sub", .kind = "dir", .size = 60, .mtime_ms = 1},
		{.name = "lnk", .kind = "link", .size = 11, .mtime_ms = 2},
		{.name = "fifo", .kind = "other", .size = 0, .mtime_ms = 3},
	};
	struct proto_file_list l = {.entries = entries, .nentries = 4, .truncated = true};
	struct proto_file_data d = {.size = sizeof(big) + 7, .truncated = true};
	struct proto_msg msg;
	struct proto_out out;
	size_t i;

	fake_hello(f);
	/* A large write comes as a sealed memfd. */
	fake_expect(f, PROTO_FILE_WRITE, &msg);
	snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", msg.u.file.path);
	f->write_len = msg.u.file.data.len;
	f->write_memfd = msg.u.file.data.fd >= 0;
	f->write_ok = true;
	for (i = 0; i < msg.u.file.data.len; i++)
		if (msg.u.file.data.data[i] != (uint8_t)('a' + i % 26))
			f->write_ok = false;
	fake_simple(f, msg.id, PROTO_OK);
	proto_msg_free(&msg);
	/* A full workspace. */
	fake_expect(f, PROTO_FILE_WRITE, &msg);
	snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", msg.u.file.path);
	fake_error(f, msg.id, PROTO_ERR_TOO_LARGE, "full: No space left on device");
	proto_msg_free(&msg);
	/* An empty file: no buffer. */
	fake_expect(f, PROTO_FILE_WRITE, &msg);
	assert_int_equal(msg.u.file.data.len, 0);
	fake_simple(f, msg.id, PROTO_OK);
	proto_msg_free(&msg);
	/* A large read, cut. */
	fake_expect(f, PROTO_FILE_READ, &msg);
	snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", msg.u.file.path);
	memset(big, 'r', sizeof(big));
	d.data = (struct proto_blob){
		.data = (const uint8_t *)big, .len = sizeof(big), .fd = -1, .present = true};
	assert_int_equal(proto_encode_file_data(msg.id, &d, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
	/* A read through a link: bad_request. */
	fake_expect(f, PROTO_FILE_READ, &msg);
	fake_error(f, msg.id, PROTO_ERR_BAD_REQUEST, "lnk: refused: goes through a link");
	proto_msg_free(&msg);
	/* The root, then a subdirectory. */
	fake_expect(f, PROTO_FILE_LIST, &msg);
	snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s",
		 msg.u.file.path != NULL ? msg.u.file.path : "");
	assert_int_equal(proto_encode_file_list(msg.id, &l, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
	fake_expect(f, PROTO_FILE_LIST, &msg);
	snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", msg.u.file.path);
	l.nentries = 0;
	l.truncated = false;
	assert_int_equal(proto_encode_file_list(msg.id, &l, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
	/* Delete: ok, then not_found. */
	for (i = 0; i < 2; i++) {
		fake_expect(f, PROTO_FILE_DELETE, &msg);
		snprintf(f->paths[f->npaths++], sizeof(f->paths[0]), "%s", msg.u.file.path);
		if (i == 0)
			fake_simple(f, msg.id, PROTO_OK);
		else
			fake_error(f, msg.id, PROTO_ERR_NOT_FOUND,
				   "a.txt: No such file or directory");
		proto_msg_free(&msg);
	}
	fake_expect(f, PROTO_PING, &msg);
	fake_simple(f, msg.id, PROTO_PONG);
	proto_msg_free(&msg);
}

/* write (memfd, too_large, empty), read (memfd, cut), list, delete; local checks. */
static void
test_files(void **state)
{
	static char data[PROTO_INLINE_MAX * 2 + 3];
	static char longpath[PROTO_PATH_MAX + 2];
	struct airlock_file_list *list = NULL;
	struct airlock_file *file = NULL;
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_files);
	const char *code, *message;
	const void *p;
	size_t len, i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	memset(longpath, 'p', sizeof(longpath) - 1);
	assert_int_equal(airlock_connect("/x", &conn), 0);
	/* Refused before anything is sent. */
	assert_int_equal(airlock_file_write(conn, "nope", "a", "x", 1), -EINVAL);
	assert_int_equal(airlock_file_write(conn, TEST_SESSION, "", "x", 1), -EINVAL);
	assert_int_equal(airlock_file_write(conn, TEST_SESSION, NULL, "x", 1), -EINVAL);
	assert_int_equal(airlock_file_write(conn, TEST_SESSION, "a", NULL, 1), -EINVAL);
	assert_int_equal(airlock_file_write(conn, TEST_SESSION, longpath, "x", 1), -ENAMETOOLONG);
	assert_int_equal(airlock_file_read(conn, TEST_SESSION, "", &file), -EINVAL);
	assert_int_equal(airlock_file_list(conn, TEST_SESSION, longpath, &list), -ENAMETOOLONG);
	assert_int_equal(airlock_file_delete(conn, TEST_SESSION, ""), -EINVAL);

	assert_int_equal(airlock_file_write(conn, TEST_SESSION, "dir/big", data, sizeof(data)), 0);
	assert_int_equal(airlock_file_write(conn, TEST_SESSION, "full", "x", 1), -E2BIG);
	assert_int_equal(airlock_conn_last_error(conn, &code, NULL), 0);
	assert_string_equal(code, "too_large");
	assert_int_equal(airlock_file_write(conn, TEST_SESSION, "empty", NULL, 0), 0);
	assert_int_equal(airlock_file_read(conn, TEST_SESSION, "dir/big", &file), 0);
	assert_int_equal(airlock_file_read(conn, TEST_SESSION, "lnk", &file), -EPROTO);
	assert_int_equal(airlock_conn_last_error(conn, &code, &message), 0);
	assert_string_equal(code, "bad_request");
	assert_string_equal(message, "lnk: refused: goes through a link");
	assert_int_equal(airlock_file_list(conn, TEST_SESSION, NULL, &list), 0);
	{
		struct airlock_file_list *empty = NULL;

		assert_int_equal(airlock_file_list(conn, TEST_SESSION, "sub", &empty), 0);
		assert_int_equal(airlock_file_list_count(empty), 0);
		assert_false(airlock_file_list_truncated(empty));
		airlock_file_list_free(empty);
	}
	assert_int_equal(airlock_file_delete(conn, TEST_SESSION, "a.txt"), 0);
	assert_int_equal(airlock_file_delete(conn, TEST_SESSION, "a.txt"), -ENOENT);
	assert_int_equal(airlock_ping(conn), 0);
	airlock_conn_free(conn);
	fake_join(f);
	assert_int_equal(f->npaths, 7);
	assert_string_equal(f->paths[0], "dir/big");
	assert_int_equal(f->write_len, sizeof(data));
	assert_true(f->write_memfd);
	assert_true(f->write_ok);
	assert_string_equal(f->paths[1], "full");
	assert_string_equal(f->paths[2], "dir/big");
	assert_string_equal(f->paths[3], ""); /* the root: no path, or "" */
	assert_string_equal(f->paths[4], "sub");
	assert_string_equal(f->paths[5], "a.txt");
	fake_free(f);

	/* The file and the listing outlive the connection. */
	assert_int_equal(airlock_file_data(file, &p, &len), 0);
	assert_int_equal(len, PROTO_INLINE_MAX * 2);
	assert_int_equal(((const char *)p)[0], 'r');
	assert_int_equal(((const char *)p)[len - 1], 'r');
	assert_int_equal(airlock_file_size(file), PROTO_INLINE_MAX * 2 + 7);
	assert_true(airlock_file_truncated(file));
	airlock_file_free(file);

	assert_int_equal(airlock_file_list_count(list), 4);
	assert_true(airlock_file_list_truncated(list));
	assert_string_equal(airlock_file_list_name(list, 0), "a.txt");
	assert_int_equal(airlock_file_list_kind(list, 0), AIRLOCK_FILE_FILE);
	assert_int_equal(airlock_file_list_size(list, 0), 5);
	assert_int_equal(airlock_file_list_mtime_ms(list, 0), 1700000000123ULL);
	assert_int_equal(airlock_file_list_kind(list, 1), AIRLOCK_FILE_DIR);
	assert_int_equal(airlock_file_list_kind(list, 2), AIRLOCK_FILE_LINK);
	assert_int_equal(airlock_file_list_size(list, 2), 11);
	assert_int_equal(airlock_file_list_kind(list, 3), AIRLOCK_FILE_OTHER);
	assert_string_equal(airlock_file_list_name(list, 3), "fifo");
	assert_null(airlock_file_list_name(list, 4));
	assert_int_equal(airlock_file_list_kind(list, 4), AIRLOCK_FILE_OTHER);
	assert_int_equal(airlock_file_list_mtime_ms(list, 4), 0);
	airlock_file_list_free(list);
}

/* What a stream callback saw: the chunks joined, tagged by stream. */
struct chunks {
	char text[256];
	size_t n;
};

/* A stream callback that records "1:bytes" or "2:bytes" per chunk. */
static void
record_chunk(void *arg, enum airlock_stream stream, const void *buf, size_t len)
{
	struct chunks *c = arg;
	size_t used = strlen(c->text);

	snprintf(c->text + used, sizeof(c->text) - used, "%d:%.*s|", (int)stream, (int)len,
		 (const char *)buf);
	c->n++;
}

/* Script: a streamed run in a session: three events, then its result. */
static void
script_run_stream(struct fake *f)
{
	uint32_t id;

	fake_hello(f);
	id = fake_recv_run_slot(f, 0);
	fake_event(f, id, "stdout", "one");
	fake_event(f, id, "stderr", "two");
	fake_event(f, id, "stdout", "three");
	fake_result(f, id, 0, "onethree");
}

/* airlock_run_stream: every event through the callback, in order, before the result. */
static void
test_run_stream(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct airlock_event *ev = NULL;
	struct fake *f = fake_start(script_run_stream);
	struct chunks c = {.n = 0};
	const void *data;
	size_t len;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_session(req, "not-an-id"), -EINVAL);
	assert_int_equal(airlock_run_req_set_session(req, TEST_SESSION), 0);
	assert_int_equal(airlock_run_stream(conn, req, NULL, &c, &res), -EINVAL);
	assert_int_equal(airlock_run_stream(conn, req, record_chunk, &c, &res), 0);
	/* All three came before the call returned, in the order sent. */
	assert_int_equal(c.n, 3);
	assert_string_equal(c.text, "1:one|2:two|1:three|");
	assert_int_equal(airlock_result_stdout(res, &data, &len), 0);
	assert_memory_equal(data, "onethree", 8);
	/* None of them was also queued. */
	assert_int_equal(airlock_conn_next_event(conn, &ev), -EAGAIN);
	assert_null(ev);
	fake_join(f);
	assert_true(f->run_stream[0]); /* although the request did not set it */
	assert_string_equal(f->run_session[0], TEST_SESSION);
	fake_free(f);
	airlock_result_free(res);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* What the fake daemon saw of tools: the declared names and each reply. */
static char tools_declared[64];
static char tools_replies[4][128];

/* Send a tool_call of run id. */
static void
fake_tool_call(struct fake *f, uint32_t id, uint32_t call, const char *tool, const char *args)
{
	struct proto_tool_call c = {.call = call,
				    .tool = tool,
				    .args = {.data = (const uint8_t *)args,
					     .len = strlen(args),
					     .fd = -1,
					     .present = true}};
	struct proto_out out;

	assert_int_equal(proto_encode_tool_call(id, &c, &out), 0);
	fake_send(f, &out);
}

/* Receive a tool_reply for id and note it as "CALL ok RESULT" or "CALL fail REFUSED ERROR". */
static void
fake_tool_reply(struct fake *f, uint32_t id, char *note, size_t len)
{
	struct proto_msg msg;

	fake_expect(f, PROTO_TOOL_REPLY, &msg);
	assert_int_equal(msg.id, id);
	if (msg.u.tool_reply.ok)
		snprintf(note, len, "%u ok %.*s", msg.u.tool_reply.call,
			 (int)msg.u.tool_reply.result.len,
			 (const char *)msg.u.tool_reply.result.data);
	else
		snprintf(note, len, "%u fail %d %s", msg.u.tool_reply.call,
			 msg.u.tool_reply.refused, msg.u.tool_reply.error);
	proto_msg_free(&msg);
}

/* Script: a blocking run with tools (three calls), then a submitted one (one call). */
static void
script_run_tools(struct fake *f)
{
	struct proto_msg msg;
	uint32_t id;
	size_t i;

	fake_hello(f);
	fake_expect(f, PROTO_RUN, &msg);
	id = msg.id;
	tools_declared[0] = '\0';
	for (i = 0; i < msg.u.run.ntools; i++)
		snprintf(tools_declared + strlen(tools_declared),
			 sizeof(tools_declared) - strlen(tools_declared), "%s%s", i ? "," : "",
			 msg.u.run.tools[i].name);
	proto_msg_free(&msg);
	fake_tool_call(f, id, 1, "search", "{\"q\":1}");
	fake_tool_reply(f, id, tools_replies[0], sizeof(tools_replies[0]));
	fake_tool_call(f, id, 2, "fetch", "{}");
	fake_tool_reply(f, id, tools_replies[1], sizeof(tools_replies[1]));
	fake_tool_call(f, id, 3, "other", "{}");
	fake_tool_reply(f, id, tools_replies[2], sizeof(tools_replies[2]));
	fake_result(f, id, 0, "done");
	fake_expect(f, PROTO_RUN, &msg);
	id = msg.id;
	proto_msg_free(&msg);
	fake_tool_call(f, id, 1, "search", "{\"q\":2}");
	fake_tool_reply(f, id, tools_replies[3], sizeof(tools_replies[3]));
	fake_result(f, id, 0, "");
}

/* A tool handler: search answers [q], fetch is refused. */
static int
tool_handler(void *arg, const char *name, const char *args, size_t args_len, char **ret_json,
	     size_t *ret_len)
{
	int *calls = arg;

	(*calls)++;
	assert_int_equal(strlen(args), args_len); /* NUL-terminated */
	if (strcmp(name, "search") == 0) {
		*ret_json = strdup(strstr(args, "1") != NULL ? "[1]" : "[2]");
		*ret_len = 3;
		return 0;
	}
	*ret_json = strdup("no");
	return AIRLOCK_TOOL_REFUSED;
}

/* airlock_run_tools answers each call through the handler (a name not
 * declared never reaches it); the event-loop API gets a call as an event
 * and answers it with airlock_tool_reply. */
static void
test_run_tools(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct airlock_event *ev = NULL;
	struct fake *f = fake_start(script_run_tools);
	const void *data;
	uint32_t id, rid;
	size_t len;
	int calls = 0, r;

	(void)state;
	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_add_tool(req, "search", "Search", "{\"type\":\"object\"}"),
			 0);
	assert_int_equal(airlock_run_req_add_tool(req, "search", NULL, NULL), -EEXIST);
	assert_int_equal(airlock_run_req_add_tool(req, "a-b", NULL, NULL), -EINVAL);
	assert_int_equal(airlock_run_req_add_tool(req, "x", NULL, "[1]"), -EINVAL);
	assert_int_equal(airlock_run_req_add_tool(req, "fetch", NULL, NULL), 0);
	assert_int_equal(airlock_run_tools(conn, req, NULL, &calls, &res), -EINVAL);
	assert_int_equal(airlock_run_tools(conn, req, tool_handler, &calls, &res), 0);
	assert_int_equal(calls, 2);
	assert_int_equal(airlock_result_tool_call_count(res), 0);
	assert_null(airlock_result_tool_call_name(res, 0));
	airlock_result_free(res);
	res = NULL;

	/* The event-loop API. */
	assert_int_equal(airlock_run_submit(conn, req, &id), 0);
	while ((r = airlock_conn_next_event(conn, &ev)) == -EAGAIN) {
		struct pollfd p = {.fd = airlock_conn_fd(conn), .events = POLLIN};

		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(airlock_conn_process(conn), 0);
	}
	assert_int_equal(r, 0);
	assert_int_equal(airlock_event_kind(ev), AIRLOCK_EVENT_TOOL_CALL);
	assert_int_equal(airlock_event_request_id(ev), id);
	assert_int_equal(airlock_event_tool_call(ev), 1);
	assert_string_equal(airlock_event_tool_name(ev), "search");
	assert_int_equal(airlock_event_stream(ev), 0);
	assert_int_equal(airlock_event_data(ev, &data, &len), 0);
	assert_memory_equal(data, "{\"q\":2}", len);
	assert_int_equal(airlock_tool_reply(conn, id, 1, "\"x\"", 3), 0);
	assert_int_equal(airlock_tool_reply(conn, id, 0, "1", 1), -EINVAL);
	airlock_event_free(ev);
	while ((r = airlock_conn_next_result(conn, &rid, &res)) == -EAGAIN) {
		struct pollfd p = {.fd = airlock_conn_fd(conn), .events = POLLIN};

		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(airlock_conn_process(conn), 0);
	}
	assert_int_equal(r, 0);
	assert_int_equal(rid, id);
	fake_join(f);
	assert_string_equal(tools_declared, "search,fetch");
	assert_string_equal(tools_replies[0], "1 ok [1]");
	assert_string_equal(tools_replies[1], "2 fail 1 no");
	assert_string_equal(tools_replies[2], "3 fail 1 not a declared tool");
	assert_string_equal(tools_replies[3], "1 ok \"x\"");
	fake_free(f);
	airlock_result_free(res);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: A (submitted, streamed) and B (blocking, streamed) interleaved. */
static void
script_stream_interleaved(struct fake *f)
{
	uint32_t a, b;

	fake_hello(f);
	a = fake_recv_run_slot(f, 0);
	b = fake_recv_run_slot(f, 1);
	f->run_ids[0] = a;
	f->run_ids[1] = b;
	fake_event(f, a, "stdout", "a1");
	fake_event(f, b, "stdout", "b1");
	fake_event(f, a, "stderr", "a2");
	fake_result(f, a, 1, "a");
	fake_event(f, b, "stderr", "b2");
	fake_result(f, b, 2, "b");
}

/* Events of another run that arrive during a blocking call are queued, in
 * order, and each comes out before that run's result. */
static void
test_stream_queued_during_blocking(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL, *other = NULL;
	struct airlock_event *ev = NULL;
	struct fake *f = fake_start(script_stream_interleaved);
	struct chunks c = {.n = 0};
	const void *data;
	size_t len;
	uint32_t id_a, id = 0;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_stream(req, true), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_a), 0);
	assert_int_equal(airlock_run_stream(conn, req, record_chunk, &c, &res), 0);
	assert_string_equal(c.text, "1:b1|2:b2|");
	assert_int_equal(airlock_result_exit_code(res), 2);

	assert_int_equal(airlock_conn_next_event(conn, &ev), 0);
	assert_int_equal(airlock_event_request_id(ev), id_a);
	assert_int_equal(airlock_event_stream(ev), AIRLOCK_STREAM_STDOUT);
	assert_int_equal(airlock_event_data(ev, &data, &len), 0);
	assert_int_equal(len, 2);
	assert_memory_equal(data, "a1", 2);
	airlock_event_free(ev);
	assert_int_equal(airlock_conn_next_event(conn, &ev), 0);
	assert_int_equal(airlock_event_request_id(ev), id_a);
	assert_int_equal(airlock_event_stream(ev), AIRLOCK_STREAM_STDERR);
	assert_int_equal(airlock_event_data(ev, &data, &len), 0);
	assert_memory_equal(data, "a2", 2);
	airlock_event_free(ev);
	ev = NULL;
	assert_int_equal(airlock_conn_next_event(conn, &ev), -EAGAIN);
	assert_int_equal(airlock_conn_next_result(conn, &id, &other), 0);
	assert_int_equal(id, id_a);
	assert_int_equal(airlock_result_exit_code(other), 1);
	fake_join(f);
	assert_true(f->run_stream[0]);
	assert_true(f->run_stream[1]);
	assert_string_equal(f->run_session[0], "");
	fake_free(f);
	airlock_result_free(other);
	airlock_result_free(res);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: a streamed run with two events; a second one whose events nobody
 * takes; a blocking streamed run through airlock_run(). */
static void
script_stream_nonblocking(struct fake *f)
{
	uint32_t id;
	size_t i;

	fake_hello(f);
	for (i = 0; i < 2; i++) {
		id = fake_recv_run_slot(f, i);
		f->run_ids[i] = id;
		fake_event(f, id, "stdout", "x");
		fake_event(f, id, "stdout", "y");
		fake_result(f, id, (int)i, "xy");
	}
	id = fake_recv_run_slot(f, 0);
	fake_event(f, id, "stdout", "dropped");
	fake_result(f, id, 9, "dropped");
}

/* Wait for the fd and process until a result is ready. */
static int
wait_result(struct airlock_conn *conn, uint32_t *id, struct airlock_result **res)
{
	struct pollfd p = {.fd = airlock_conn_fd(conn), .events = POLLIN};
	int rc;

	while ((rc = airlock_conn_next_result(conn, id, res)) == -EAGAIN) {
		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(airlock_conn_process(conn), 0);
	}
	return rc;
}

/* The non-blocking interface: events before the result; events never taken
 * go with their run's result; airlock_run() drops its own events. */
static void
test_stream_nonblocking(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct airlock_event *ev = NULL;
	struct fake *f = fake_start(script_stream_nonblocking);
	struct pollfd p;
	const void *data;
	size_t len;
	uint32_t id_a, id_b, id = 0;
	int got = 0;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_stream(req, true), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id_a), 0);
	p = (struct pollfd){.fd = airlock_conn_fd(conn), .events = POLLIN};
	/* Take events as they come until the result is there: both first. */
	for (;;) {
		while (airlock_conn_next_event(conn, &ev) == 0) {
			assert_int_equal(airlock_event_request_id(ev), id_a);
			assert_int_equal(airlock_event_data(ev, &data, &len), 0);
			assert_int_equal(len, 1);
			assert_int_equal(((const char *)data)[0], got == 0 ? 'x' : 'y');
			airlock_event_free(ev);
			got++;
		}
		if (airlock_conn_next_result(conn, &id, &res) == 0)
			break;
		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(airlock_conn_process(conn), 0);
	}
	assert_int_equal(got, 2);
	assert_int_equal(id, id_a);
	airlock_result_free(res);
	res = NULL;

	/* Never take B's events: its result discards them. */
	assert_int_equal(airlock_run_submit(conn, req, &id_b), 0);
	assert_int_equal(wait_result(conn, &id, &res), 0);
	assert_int_equal(id, id_b);
	assert_int_equal(airlock_conn_next_event(conn, &ev), -EAGAIN);
	airlock_result_free(res);
	res = NULL;

	/* A blocking airlock_run() of a streamed request drops its events. */
	assert_int_equal(airlock_run(conn, req, &res), 0);
	assert_int_equal(airlock_result_exit_code(res), 9);
	assert_int_equal(airlock_conn_next_event(conn, &ev), -EAGAIN);
	airlock_result_free(res);
	fake_join(f);
	assert_true(f->run_stream[0]);
	assert_true(f->run_stream[1]);
	fake_free(f);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: an event for a run that did not ask for events. */
static void
script_stream_unasked(struct fake *f)
{
	uint32_t id;

	fake_hello(f);
	id = fake_recv_run(f);
	fake_event(f, id, "stdout", "unasked");
	fake_result(f, id, 0, "");
}

/* An event nobody asked for (or for no run) breaks the connection. */
static void
test_stream_unasked(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct airlock_event *ev = NULL;
	struct fake *f = fake_start(script_stream_unasked);

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run(conn, req, &res), -EBADMSG);
	assert_null(res);
	assert_int_equal(airlock_conn_next_event(conn, &ev), -EBADMSG);
	fake_stop(f);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/*
 * How the library dispatches what it receives, by the flags of the request
 * waiting for it (conn.c: conn_accept(), conn_type_answers(),
 * conn_accept_event()): a reply must answer a pending request with the type
 * that request expects, and a stream event must belong to a run that asked
 * for events. Anything else breaks the connection with -EBADMSG: the two
 * sides no longer agree on its state. One row a case; the rows that pass
 * show that the others fail for the reason they name.
 */
struct dispatch_row {
	const char *what;
	enum proto_type req;   /* PROTO_PING, PROTO_CANCEL, PROTO_SESSION_CLOSE or PROTO_RUN */
	bool stream;	       /* a run that asks for events */
	enum proto_type first; /* sent first: PROTO_STREAM or a reply without fields */
	uint32_t id_offset;    /* the first message's id: the request's plus this */
	int want;	       /* what the call returns */
	int want_after;	       /* airlock_conn_check() after it */
};

static const struct dispatch_row dispatch_rows[] = {
	{"pong answers ping", PROTO_PING, false, PROTO_PONG, 0, 0, 0},
	{"ok answers session_close", PROTO_SESSION_CLOSE, false, PROTO_OK, 0, 0, 0},
	{"cancel_ok answers cancel", PROTO_CANCEL, false, PROTO_CANCEL_OK, 0, 0, 0},
	{"ok does not answer ping", PROTO_PING, false, PROTO_OK, 0, -EBADMSG, -EBADMSG},
	{"cancel_ok does not answer ping", PROTO_PING, false, PROTO_CANCEL_OK, 0, -EBADMSG,
	 -EBADMSG},
	{"pong does not answer session_close", PROTO_SESSION_CLOSE, false, PROTO_PONG, 0, -EBADMSG,
	 -EBADMSG},
	{"ok does not answer cancel", PROTO_CANCEL, false, PROTO_OK, 0, -EBADMSG, -EBADMSG},
	{"pong does not answer a run", PROTO_RUN, false, PROTO_PONG, 0, -EBADMSG, -EBADMSG},
	{"a pong to no request", PROTO_PING, false, PROTO_PONG, 1, -EBADMSG, -EBADMSG},
	{"an event of a run that asked", PROTO_RUN, true, PROTO_STREAM, 0, 0, 0},
	{"an event of a run that did not ask", PROTO_RUN, false, PROTO_STREAM, 0, -EBADMSG,
	 -EBADMSG},
	{"an event of a ping", PROTO_PING, false, PROTO_STREAM, 0, -EBADMSG, -EBADMSG},
	{"an event of no request", PROTO_RUN, true, PROTO_STREAM, 1, -EBADMSG, -EBADMSG},
};

/* Script: receive the row's request, send the row's first message, then the
 * right answer (which a broken connection never reads). */
static void
script_dispatch(struct fake *f)
{
	const struct dispatch_row *row;
	struct proto_msg msg;
	struct proto_out out;
	uint32_t id;

	/* f->row is set after fake_start() and before the client connects:
	 * read it only once the hello came (read first, it raced the test's
	 * own thread and crashed now and then: exit 255 under load). */
	fake_hello(f);
	row = f->row;
	fake_expect(f, row->req, &msg);
	id = msg.id;
	proto_msg_free(&msg);
	if (row->first == PROTO_STREAM)
		fake_event(f, id + row->id_offset, "stdout", "out");
	else {
		assert_int_equal(proto_encode_simple(id + row->id_offset, row->first, &out), 0);
		fake_send(f, &out);
	}
	if (row->req == PROTO_RUN)
		fake_result(f, id, 0, "out");
	else if (row->first == PROTO_STREAM)
		fake_simple(f, id, row->req == PROTO_PING ? PROTO_PONG : PROTO_OK);
}

/* Make the row's request; returns what the call returned. */
static int
dispatch_call(struct airlock_conn *conn, const struct dispatch_row *row, struct chunks *c)
{
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	int r;

	switch (row->req) {
	case PROTO_PING:
		return airlock_ping(conn);
	case PROTO_SESSION_CLOSE:
		return airlock_session_close(conn, TEST_SESSION);
	case PROTO_CANCEL:
		return airlock_cancel(conn, 42);
	default:
		break;
	}
	assert_int_equal(airlock_run_req_new(&req), 0);
	r = row->stream ? airlock_run_stream(conn, req, record_chunk, c, &res)
			: airlock_run(conn, req, &res);
	assert_true(r == 0 ? res != NULL : res == NULL);
	airlock_result_free(res);
	airlock_run_req_free(req);
	return r;
}

/* Every row of dispatch_rows. */
static void
test_dispatch_flags(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(dispatch_rows) / sizeof(dispatch_rows[0]); i++) {
		const struct dispatch_row *row = &dispatch_rows[i];
		struct airlock_conn *conn = NULL;
		struct airlock_event *ev = NULL;
		struct chunks c = {.n = 0};
		struct fake *f = fake_start(script_dispatch);
		int r;

		f->row = row;
		print_message("%s\n", row->what);
		assert_int_equal(airlock_connect("/x", &conn), 0);
		r = dispatch_call(conn, row, &c);
		if (r != row->want)
			fail_msg("%s: %d, want %d", row->what, r, row->want);
		/* An event reached the callback only where it belonged. */
		assert_int_equal(c.n, row->first == PROTO_STREAM && row->want == 0 ? 1 : 0);
		fake_join(f);
		assert_int_equal(airlock_conn_check(conn), row->want_after);
		assert_int_equal(airlock_conn_next_event(conn, &ev),
				 row->want_after ? row->want_after : -EAGAIN);
		fake_free(f);
		airlock_conn_free(conn);
	}
}

/* Script: a streamed run the client gives up on: after its cancel, an event
 * and the result of that run, an event of a second streamed run, the
 * cancel's answer, then the second run's result. */
static void
script_abandoned_stream(struct fake *f)
{
	uint32_t first, second, cancel;

	fake_hello(f);
	first = fake_recv_run_slot(f, 0);
	cancel = fake_recv_cancel(f, 0);
	second = fake_recv_run_slot(f, 1);
	fake_event(f, first, "stdout", "late");
	fake_result(f, first, 0, "late");
	fake_event(f, second, "stdout", "mine");
	fake_simple(f, cancel, PROTO_CANCEL_OK);
	fake_result(f, second, 0, "mine");
	f->run_ids[0] = first;
}

/* An abandoned request keeps its place among the pending ones, flagged: its
 * events and answer are dropped when they come, not taken for a protocol
 * error, and another run's events still reach their callback. */
static void
test_abandoned_stream(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct airlock_result *late = NULL;
	struct airlock_event *ev = NULL;
	struct fake *f = fake_start(script_abandoned_stream);
	struct chunks c = {.n = 0};
	uint32_t id;

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_conn_set_timeout(conn, 100), 0);
	assert_int_equal(airlock_run_stream(conn, req, record_chunk, &c, &res), -ETIMEDOUT);
	assert_null(res);
	assert_int_equal(airlock_conn_set_timeout(conn, 0), 0);
	assert_int_equal(airlock_run_stream(conn, req, record_chunk, &c, &res), 0);
	assert_non_null(res);
	assert_string_equal(c.text, "1:mine|");
	assert_int_equal(airlock_conn_next_event(conn, &ev), -EAGAIN);
	/* The abandoned run's result was dropped, not queued. */
	assert_int_equal(airlock_conn_next_result(conn, &id, &late), -EAGAIN);
	assert_null(late);
	fake_join(f);
	assert_int_equal(f->cancels[0].request, f->run_ids[0]);
	assert_true(f->run_stream[0] && f->run_stream[1]);
	assert_int_equal(airlock_conn_check(conn), 0);
	airlock_result_free(res);
	fake_free(f);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: a session run refused with not_found. */
static void
script_run_no_session(struct fake *f)
{
	uint32_t id;

	fake_hello(f);
	id = fake_recv_run_slot(f, 0);
	fake_error(f, id, PROTO_ERR_NOT_FOUND, "no such session");
}

/* A run in a session that does not exist: -ENOENT, and a session id of NULL
 * makes the request one-shot again. */
static void
test_run_no_session(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct fake *f = fake_start(script_run_no_session);
	struct chunks c = {.n = 0};

	assert_int_equal(airlock_connect("/x", &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_session(req, TEST_SESSION), 0);
	assert_int_equal(airlock_run_stream(conn, req, record_chunk, &c, &res), -ENOENT);
	assert_null(res);
	assert_int_equal(c.n, 0);
	fake_join(f);
	assert_string_equal(f->run_session[0], TEST_SESSION);
	fake_free(f);
	assert_int_equal(airlock_run_req_set_session(req, NULL), 0);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Argument checks of the 0.3 functions. */
static void
test_arguments_sessions(void **state)
{
	char id[AIRLOCK_SESSION_ID_LEN + 1];
	struct airlock_session_list *sl = NULL;
	struct airlock_file_list *fl = NULL;
	struct airlock_file *file = NULL;
	struct airlock_event *ev = NULL;
	const void *data;
	size_t len;

	airlock_session_opts_free(NULL);
	airlock_session_list_free(NULL);
	airlock_file_free(NULL);
	airlock_file_list_free(NULL);
	airlock_event_free(NULL);
	assert_int_equal(airlock_session_opts_new(NULL), -EINVAL);
	assert_int_equal(airlock_session_opts_set_workspace_bytes(NULL, 1), -EINVAL);
	assert_int_equal(airlock_session_opts_set_idle_timeout_ms(NULL, 1), -EINVAL);
	assert_int_equal(airlock_session_opts_set_lifetime_ms(NULL, 1), -EINVAL);
	assert_int_equal(airlock_session_opts_set_limit(NULL, AIRLOCK_LIMIT_WALL_MS, 1), -EINVAL);
	assert_int_equal(airlock_session_open(NULL, NULL, id), -EINVAL);
	assert_int_equal(airlock_session_close(NULL, TEST_SESSION), -EINVAL);
	assert_int_equal(airlock_session_list(NULL, &sl), -EINVAL);
	assert_int_equal(airlock_file_write(NULL, TEST_SESSION, "a", "x", 1), -EINVAL);
	assert_int_equal(airlock_file_read(NULL, TEST_SESSION, "a", &file), -EINVAL);
	assert_int_equal(airlock_file_list(NULL, TEST_SESSION, NULL, &fl), -EINVAL);
	assert_int_equal(airlock_file_delete(NULL, TEST_SESSION, "a"), -EINVAL);
	assert_int_equal(airlock_conn_next_event(NULL, &ev), -EINVAL);
	assert_int_equal(airlock_run_req_set_session(NULL, NULL), -EINVAL);
	assert_int_equal(airlock_run_req_set_stream(NULL, true), -EINVAL);
	assert_int_equal(airlock_run_stream(NULL, NULL, record_chunk, NULL, NULL), -EINVAL);
	assert_int_equal(airlock_session_list_count(NULL), 0);
	assert_null(airlock_session_list_id(NULL, 0));
	assert_int_equal(airlock_file_list_count(NULL), 0);
	assert_false(airlock_file_list_truncated(NULL));
	assert_int_equal(airlock_file_data(NULL, &data, &len), -EINVAL);
	assert_int_equal(airlock_file_size(NULL), 0);
	assert_false(airlock_file_truncated(NULL));
	assert_int_equal(airlock_event_request_id(NULL), 0);
	assert_int_equal(airlock_event_data(NULL, &data, &len), -EINVAL);
	assert_string_equal(airlock_file_kind_name(AIRLOCK_FILE_FILE), "file");
	assert_string_equal(airlock_file_kind_name(AIRLOCK_FILE_DIR), "dir");
	assert_string_equal(airlock_file_kind_name(AIRLOCK_FILE_LINK), "link");
	assert_string_equal(airlock_file_kind_name(AIRLOCK_FILE_OTHER), "other");
	assert_null(airlock_file_kind_name((enum airlock_file_kind)4));
}

/* Script: hello; a ping left unanswered; a run left unanswered, then its
 * cancel (unanswered too); a late pong and a late result, both to be
 * dropped; then a ping answered; then the connection closed. */
static void
script_timeouts(struct fake *f)
{
	struct proto_msg msg;
	struct proto_out out;
	uint32_t ping_id, run_id, id;

	fake_hello(f);
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_PING);
	ping_id = msg.id;
	proto_msg_free(&msg);
	run_id = fake_recv_run(f);
	id = fake_recv_cancel(f, 0);
	assert_int_not_equal(id, 0);
	/* Late answers: the library must drop them, not break the connection. */
	assert_int_equal(proto_encode_simple(ping_id, PROTO_PONG, &out), 0);
	fake_send(f, &out);
	fake_result(f, run_id, 0, "late");
	fake_simple(f, id, PROTO_CANCEL_OK);
	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_PING);
	assert_int_equal(proto_encode_simple(msg.id, PROTO_PONG, &out), 0);
	proto_msg_free(&msg);
	fake_send(f, &out);
	f->run_ids[0] = run_id;
}

/* A timeout ends a blocking call with -ETIMEDOUT and leaves the connection
 * usable; the late answers are dropped; a timed-out run is cancelled;
 * airlock_conn_check() sees the daemon hang up. */
static void
test_timeouts(void **state)
{
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	struct fake *f = fake_start(script_timeouts);
	uint32_t id;

	assert_int_equal(airlock_connect_timeout("/x", 0, &conn, NULL, 0, NULL, 0), 0);
	assert_int_equal(airlock_conn_set_timeout(NULL, 1), -EINVAL);
	assert_int_equal(airlock_conn_set_timeout(conn, 100), 0);
	assert_int_equal(airlock_ping(conn), -ETIMEDOUT);
	assert_int_equal(airlock_conn_check(conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run(conn, req, &res), -ETIMEDOUT);
	assert_null(res);
	assert_int_equal(airlock_conn_set_timeout(conn, 0), 0);
	/* The late pong, result and cancel_ok are dropped; this ping gets its own. */
	assert_int_equal(airlock_ping(conn), 0);
	assert_int_equal(airlock_conn_next_result(conn, &id, &res), -EAGAIN);
	assert_int_equal(airlock_conn_check(conn), 0);
	fake_join(f);
	assert_int_equal(f->cancels[0].request, f->run_ids[0]);
	close(f->server_fd);
	f->server_fd = -1;
	assert_int_equal(airlock_conn_check(conn), -ECONNRESET);
	assert_int_equal(airlock_ping(conn), -ECONNRESET);
	assert_int_equal(airlock_conn_check(NULL), -EINVAL);
	fake_free(f);
	airlock_run_req_free(req);
	airlock_conn_free(conn);
}

/* Script: accept the connection, never answer the hello. */
static void
script_silent(struct fake *f)
{
	struct proto_msg msg;

	fake_recv(f, &msg);
	assert_int_equal(msg.type, PROTO_HELLO);
	proto_msg_free(&msg);
}

/* The handshake of airlock_connect_timeout() gives up. */
static void
test_connect_timeout(void **state)
{
	struct airlock_conn *conn = NULL;
	struct fake *f = fake_start(script_silent);
	char code[32], message[64];

	assert_int_equal(airlock_connect_timeout("/x", 100, &conn, code, sizeof(code), message,
						 sizeof(message)),
			 -ETIMEDOUT);
	assert_null(conn);
	assert_string_equal(code, "");
	fake_stop(f);
}

/* The header's version macros, the library's version and the build's agree. */
static void
test_version(void **state)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", LIBAIRLOCK_VERSION_MAJOR, LIBAIRLOCK_VERSION_MINOR,
		 LIBAIRLOCK_VERSION_MICRO);
	assert_string_equal(want, LIBAIRLOCK_VERSION);
	assert_string_equal(airlock_library_version(), LIBAIRLOCK_VERSION);
	assert_string_equal(airlock_library_version(), TEST_LIBAIRLOCK_VERSION);
	assert_true(LIBAIRLOCK_CHECK_VERSION(0, 3, 0));
	assert_true(LIBAIRLOCK_CHECK_VERSION(LIBAIRLOCK_VERSION_MAJOR, LIBAIRLOCK_VERSION_MINOR,
					     LIBAIRLOCK_VERSION_MICRO));
	assert_false(LIBAIRLOCK_CHECK_VERSION(LIBAIRLOCK_VERSION_MAJOR, LIBAIRLOCK_VERSION_MINOR,
					      LIBAIRLOCK_VERSION_MICRO + 1));
	assert_false(LIBAIRLOCK_CHECK_VERSION(LIBAIRLOCK_VERSION_MAJOR + 1, 0, 0));
}

/* The daemon's decoder accepts a run whose env holds this one name. */
static bool
daemon_takes_env_name(const char *name)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct proto_msg m;
	enum proto_error code;
	uint32_t id;
	char why[256];
	int r;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 4);
	msgpack_pack_str_with_body(&pk, "type", 4);
	msgpack_pack_uint32(&pk, PROTO_RUN);
	msgpack_pack_str_with_body(&pk, "id", 2);
	msgpack_pack_uint32(&pk, 1);
	msgpack_pack_str_with_body(&pk, "runtime", 7);
	msgpack_pack_str_with_body(&pk, "sh", 2);
	msgpack_pack_str_with_body(&pk, "env", 3);
	msgpack_pack_map(&pk, 1);
	msgpack_pack_str_with_body(&pk, name, strlen(name));
	msgpack_pack_str_with_body(&pk, "v", 1);
	r = proto_decode(sb.data, sb.size, NULL, 0, &m, &code, &id, why, sizeof(why));
	msgpack_sbuffer_destroy(&sb);
	if (r == 0)
		proto_msg_free(&m);
	return r == 0;
}

/*
 * Issue 15: the library took an env name ("1X") that the encoder then
 * refused. The library, the encoder and the daemon's decoder must agree on
 * every name: what the library takes is sent and decoded, what it refuses
 * the daemon would refuse too.
 */
static void
test_env_names_agree(void **state)
{
	static const char *const names[] = {"A",   "_x",  "X1",	      "1X",   "9",  "A=B",
					    "A-B", "A B", "\xc3\xa9", "PATH", "a.b"};
	struct airlock_run_req *req;
	struct proto_out out;
	char longname[PROTO_ENV_KEY_MAX + 2];
	size_t i;
	int lib;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(airlock_run_req_new(&req), 0);
		assert_int_equal(airlock_run_req_set_runtime(req, "sh"), 0);
		lib = airlock_run_req_set_env(req, names[i], "v");
		assert_true(lib == 0 || lib == -EINVAL);
		assert_int_equal(lib == 0, daemon_takes_env_name(names[i]));
		/* What the library took, its encoder sends. */
		if (lib == 0) {
			assert_int_equal(request_encode(req, 1, false, true, &out), 0);
			proto_out_free(&out);
		}
		airlock_run_req_free(req);
	}
	memset(longname, 'A', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_env(req, longname, "v"), -E2BIG);
	assert_false(daemon_takes_env_name(longname));
	longname[PROTO_ENV_KEY_MAX] = '\0';
	assert_int_equal(airlock_run_req_set_env(req, longname, "v"), 0);
	assert_true(daemon_takes_env_name(longname));
	airlock_run_req_free(req);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_info),
		cmocka_unit_test(test_env_names_agree),
		cmocka_unit_test(test_run_blocking),
		cmocka_unit_test(test_two_in_flight),
		cmocka_unit_test(test_blocking_queues_others),
		cmocka_unit_test(test_error_reply),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_connect_other_version),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_cancel_request),
		cmocka_unit_test(test_cancel_run),
		cmocka_unit_test(test_ps),
		cmocka_unit_test(test_ps_queues_result),
		cmocka_unit_test(test_ps_wrong_reply),
		cmocka_unit_test(test_cancel_zero_id),
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_run_stream),
		cmocka_unit_test(test_run_tools),
		cmocka_unit_test(test_stream_queued_during_blocking),
		cmocka_unit_test(test_stream_nonblocking),
		cmocka_unit_test(test_stream_unasked),
		cmocka_unit_test(test_dispatch_flags),
		cmocka_unit_test(test_abandoned_stream),
		cmocka_unit_test(test_run_no_session),
		cmocka_unit_test(test_arguments_sessions),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_connect_timeout),
		cmocka_unit_test(test_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
