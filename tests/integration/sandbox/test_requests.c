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
 * Send run raw, past the library, on a connection of its own, and assert the
 * daemon answers an error of code whose message holds want (NULL: any), then
 * that it and the library's connection go on serving.
 */
static void
raw_refused(struct sbx *s, struct proto_run *run, enum proto_error code, const char *want)
{
	struct proto_hello hello = {.version = PROTO_VERSION, .peer = "test_requests"};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct proto_out out;
	struct proto_msg m;
	int fd;

	if (!run->code.present)
		run->code = (struct proto_blob){
			.data = (const uint8_t *)"echo ran\n", .len = 9, .fd = -1, .present = true};
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->f.sock);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(proto_encode_hello(1, PROTO_HELLO, &hello, &out), 0);
	raw_exchange(fd, &out, &m);
	assert_int_equal(m.type, PROTO_HELLO_OK);
	assert_true(proto_hello_has_feature(&m.u.hello, PROTO_FEATURE_FILE_BUNDLE));
	proto_msg_free(&m);
	assert_int_equal(proto_encode_run(2, run, &out), 0);
	raw_exchange(fd, &out, &m);
	if (m.type != PROTO_ERROR || m.u.error.code != code ||
	    (want != NULL && strstr(m.u.error.message, want) == NULL))
		fprintf(stderr, "reply %s %s: %s; want %s with \"%s\"\n", proto_type_name(m.type),
			m.type == PROTO_ERROR ? proto_error_name(m.u.error.code) : "-",
			m.type == PROTO_ERROR ? m.u.error.message : "-", proto_error_name(code),
			want != NULL ? want : "");
	assert_int_equal(m.type, PROTO_ERROR);
	assert_int_equal(m.u.error.code, code);
	if (want != NULL)
		assert_non_null(strstr(m.u.error.message, want));
	proto_msg_free(&m);
	close(fd);
	/* Still alive and serving, files and all. */
	assert_int_equal(airlock_ping(s->conn), 0);
	assert_true(fixture_alive(&s->f));
	{
		struct airlock_run_req *req = sbx_req("sh", "cat in.txt\n");
		struct airlock_result *res;
		char *o;

		assert_int_equal(airlock_run_req_add_file(req, "in.txt", "still here", 10), 0);
		res = sbx_run(s, req);
		sbx_assert_ok(res);
		o = sbx_stdout(res);
		assert_string_equal(o, "still here");
		free(o);
		airlock_result_free(res);
	}
}

/*
 * An input file name with a "..", "." or empty component: the library
 * refuses it (the request rule of common/rules.c), and the daemon, sent it
 * raw past the library, answers bad_request and goes on serving.
 */
static void
check_bad_name(void **state, const char *name)
{
	struct airlock_run_req *req = sbx_req("sh", "echo ran\n");
	struct proto_file file = {
		.name = name,
		.data = {.data = (const uint8_t *)"x", .len = 1, .fd = -1, .present = true}};
	struct proto_run run = {.runtime = "sh", .files = &file, .nfiles = 1};

	assert_int_equal(airlock_run_req_add_file(req, name, "x", 1), -EINVAL);
	airlock_run_req_free(req);
	raw_refused(*state, &run, PROTO_ERR_BAD_REQUEST, "files[0]");
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

/* ---- file bundles (common/bundle.h) sent raw: every refusal ---------------- */

/* A bundle as bytes, well formed or not. */
struct bb {
	uint8_t *p;
	size_t len;
};

static void
bb_bytes(struct bb *b, const void *data, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	assert_non_null(b->p);
	if (n > 0)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void
bb_le(struct bb *b, uint64_t v, unsigned n)
{
	uint8_t x[8];
	unsigned i;

	for (i = 0; i < n; i++, v >>= 8)
		x[i] = (uint8_t)(v & 0xff);
	bb_bytes(b, x, n);
}

/* "ALFB" and a count. */
static void
bb_start(struct bb *b, uint32_t count)
{
	bb_bytes(b, "ALFB", 4);
	bb_le(b, count, 4);
}

/* One entry of nlen name bytes, saying len bytes of data and holding have. */
static void
bb_entry_raw(struct bb *b, const char *name, size_t nlen, uint32_t mode, uint64_t len,
	     const char *data, size_t have)
{
	bb_le(b, nlen, 2);
	bb_bytes(b, name, nlen);
	bb_le(b, mode, 4);
	bb_le(b, len, 8);
	bb_bytes(b, data, have);
}

static void
bb_entry(struct bb *b, const char *name, uint32_t mode, const char *data)
{
	bb_entry_raw(b, name, strlen(name), mode, strlen(data), data, strlen(data));
}

/* Send b (freed) as a run's file_bundle, next to files (may be NULL), and
 * assert the refusal. */
static void
bundle_refused(void **state, struct bb *b, struct proto_file *files, size_t nfiles,
	       enum proto_error code, const char *want)
{
	struct proto_run run = {.runtime = "sh", .files = files, .nfiles = nfiles};

	run.file_bundle =
		(struct proto_blob){.data = b->p, .len = b->len, .fd = -1, .present = true};
	raw_refused(*state, &run, code, want);
	free(b->p);
	*b = (struct bb){0};
}

/* A name with a control character: the library refuses it, the daemon too,
 * in files and in a bundle; its reason does not quote it. */
static void
test_input_control_character(void **state)
{
	struct bb b = {0};

	check_bad_name(state, "red\x1b[31m.txt");
	bb_start(&b, 1);
	bb_entry(&b, "a\nb", 0644, "x");
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST, "control character");
}

static void
test_bundle_dotdot(void **state)
{
	struct bb b = {0};

	bb_start(&b, 2);
	bb_entry(&b, "ok.txt", 0644, "x");
	bb_entry(&b, "a/../../evil", 0644, "x");
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "entry 1: \"a/../../evil\" is not a relative path");
}

static void
test_bundle_absolute(void **state)
{
	struct bb b = {0};

	bb_start(&b, 1);
	bb_entry(&b, "/etc/passwd", 0644, "x");
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST, "not a relative path");
}

static void
test_bundle_nul_in_name(void **state)
{
	struct bb b = {0};

	bb_start(&b, 1);
	bb_entry_raw(&b, "a\0b", 3, 0644, 1, "x", 1);
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST, "NUL byte");
}

static void
test_bundle_duplicate(void **state)
{
	struct proto_file file = {
		.name = "x/dup.txt",
		.data = {.data = (const uint8_t *)"x", .len = 1, .fd = -1, .present = true}};
	struct bb b = {0};

	bb_start(&b, 2);
	bb_entry(&b, "dup.txt", 0644, "1");
	bb_entry(&b, "dup.txt", 0755, "2");
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST, "\"dup.txt\" given twice");
	/* The same name in files and in the bundle (the format has no hard
	 * link: a second name for a file is a second file, or this). */
	bb_start(&b, 1);
	bb_entry(&b, "x/dup.txt", 0644, "1");
	bundle_refused(state, &b, &file, 1, PROTO_ERR_BAD_REQUEST, "\"x/dup.txt\" given twice");
}

/* "a" a file and "a/b" below it: refused before the supervisor meets it. */
static void
test_bundle_file_is_directory(void **state)
{
	struct bb b = {0};

	bb_start(&b, 3);
	bb_entry(&b, "a", 0644, "1");
	bb_entry(&b, "a-x", 0644, "1");
	bb_entry(&b, "a/b/c", 0644, "2");
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "\"a\" is also the directory of \"a/b/c\"");
}

/* A symlink's, a device's, a set-uid mode: the format has only 0644 and 0755. */
static void
test_bundle_link_device_setuid(void **state)
{
	static const struct {
		uint32_t mode;
		const char *want;
	} modes[] = {
		{0120777, "mode 0120777 is not 0644 or 0755"},
		{0020644, "mode 020644 is not 0644 or 0755"},
		{0060644, "mode 060644 is not 0644 or 0755"},
		{04755, "mode 04755 is not 0644 or 0755"},
		{0777, "mode 0777 is not 0644 or 0755"},
	};
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct bb b = {0};

		bb_start(&b, 1);
		bb_entry(&b, "f", modes[i].mode, "/etc/shadow");
		bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST, modes[i].want);
	}
}

static void
test_bundle_too_many(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "true\n");
	static struct proto_file files[PROTO_FILES_MAX];
	static char names[PROTO_FILES_MAX][16];
	struct bb b = {0};
	char name[32];
	size_t i;

	/* The library stops at 4096 files. */
	for (i = 0; i < PROTO_RUN_FILES_MAX; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		assert_int_equal(airlock_run_req_add_file(req, name, "", 0), 0);
	}
	assert_int_equal(airlock_run_req_add_file(req, "one-more", "", 0), -E2BIG);
	airlock_run_req_free(req);
	/* The daemon refuses a count above it before reading any entry ... */
	bb_start(&b, PROTO_RUN_FILES_MAX + 1);
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_TOO_LARGE, "4097 entries; at most 4096");
	/* ... and files and a bundle together above it. */
	for (i = 0; i < PROTO_FILES_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "in%zu", i);
		files[i] = (struct proto_file){
			.name = names[i],
			.data = {.data = (const uint8_t *)"", .len = 0, .fd = -1, .present = true}};
	}
	b = (struct bb){0};
	bb_start(&b, PROTO_RUN_FILES_MAX - PROTO_FILES_MAX + 1);
	for (i = 0; i < PROTO_RUN_FILES_MAX - PROTO_FILES_MAX + 1; i++) {
		snprintf(name, sizeof(name), "b%zu", i);
		bb_entry(&b, name, 0644, "");
	}
	bundle_refused(state, &b, files, PROTO_FILES_MAX, PROTO_ERR_TOO_LARGE,
		       "4097 input files (files and file_bundle); at most 4096");
}

/* Files that together need more than the workspace: too_large, by the sum
 * the bundle declares, before anything is written. */
static void
test_bundle_over_workspace(void **state)
{
	struct proto_run run = {.runtime = "sh"};
	static char big[6000];
	struct bb b = {0};

	memset(big, 'b', sizeof(big) - 1);
	bb_start(&b, 2);
	bb_entry(&b, "one", 0644, big);
	bb_entry(&b, "two", 0644, big);
	run.limits.v[PROTO_LIMIT_WORKSPACE_BYTES] = 8192;
	run.file_bundle = (struct proto_blob){.data = b.p, .len = b.len, .fd = -1, .present = true};
	raw_refused(*state, &run, PROTO_ERR_TOO_LARGE,
		    "input files hold 11998 bytes; workspace_bytes is 8192");
	free(b.p);
}

/* A bundle cut short, or longer than its entries: refused, nothing written. */
static void
test_bundle_truncated(void **state)
{
	struct bb b = {0};

	bb_start(&b, 3);
	bb_entry(&b, "one", 0644, "1");
	bb_entry(&b, "two", 0644, "2");
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "truncated: entry 2 of 3 has no header");
	bb_start(&b, 1);
	bb_entry_raw(&b, "cut", 3, 0644, 100, "0123456789", 10);
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "truncated: entry 0 says 100 bytes, 10 are left");
	bb_start(&b, 1);
	bb_entry_raw(&b, "cut-in-its-header", 17, 0644, 0, "", 0);
	b.len -= 5;
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "truncated: entry 0 of 1 ends past");
	bb_start(&b, 1);
	bb_entry(&b, "one", 0644, "1");
	bb_bytes(&b, "trailing", 8);
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "8 bytes after the last of 1 entries");
}

/* What a bomb would be: an entry claiming 2^64-1 bytes (no allocation is made
 * by its word), and a compressed archive, which is not a bundle at all. */
static void
test_bundle_bomb(void **state)
{
	static const uint8_t gzip[] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03};
	struct bb b = {0};

	bb_start(&b, 1);
	bb_entry_raw(&b, "bomb", 4, 0644, UINT64_MAX, "x", 1);
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST,
		       "truncated: entry 0 says 18446744073709551615 bytes, 1 are left");
	bb_bytes(&b, gzip, sizeof(gzip));
	bundle_refused(state, &b, NULL, 0, PROTO_ERR_BAD_REQUEST, "not a bundle");
}

/* A run in a session takes its files through the keeper: no bundle there. */
static void
test_bundle_in_session(void **state)
{
	struct sbx *s = *state;
	struct proto_run run = {.runtime = "sh"};
	char id[AIRLOCK_SESSION_ID_LEN + 1];
	struct bb b = {0};

	assert_int_equal(airlock_session_open(s->conn, NULL, id), 0);
	bb_start(&b, 1);
	bb_entry(&b, "in.txt", 0644, "x");
	run.session = id;
	run.file_bundle = (struct proto_blob){.data = b.p, .len = b.len, .fd = -1, .present = true};
	raw_refused(s, &run, PROTO_ERR_BAD_REQUEST, "file_bundle: not for a run in a session");
	free(b.p);
	assert_int_equal(airlock_session_close(s->conn, id), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_input_dotdot),
		T(test_input_inner_dotdot),
		T(test_input_trailing_dotdot),
		T(test_input_dot),
		T(test_input_empty_component),
		T(test_inputs_larger_than_workspace),
		T(test_unknown_runtime),
		T(test_exec_without_argv),
		T(test_python_without_code),
		T(test_wall_above_ceiling),
		T(test_input_control_character),
		T(test_bundle_dotdot),
		T(test_bundle_absolute),
		T(test_bundle_nul_in_name),
		T(test_bundle_duplicate),
		T(test_bundle_file_is_directory),
		T(test_bundle_link_device_setuid),
		T(test_bundle_too_many),
		T(test_bundle_over_workspace),
		T(test_bundle_truncated),
		T(test_bundle_bomb),
		T(test_bundle_in_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
