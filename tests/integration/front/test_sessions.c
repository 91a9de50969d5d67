/*
 * test_sessions.c: sessions through the real daemon, on the raw protocol:
 * state carried between runs, file operations, every traversal and link
 * trick refused (including links planted by a run), ownership between uids,
 * idle expiry, streaming order and cap, no leftovers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "front_util.h"
#include "session_cg.h"
#include "proto.h"

#define UID_BASE 780000 /* CFG's uid_base and uid_count */
#define UID_COUNT 64
#define CFG(extra) "[sandbox]\nuid_base = 780000\nuid_count = 64\n" extra
#define UID_LO 780000
#define UID_HI (780000 + 63)

static uint32_t next_id = 100;

/* Open a session; returns its id in buf. */
static void
open_session(int fd, const struct proto_session_open *o, char *buf)
{
	struct proto_session_open dflt = {0};
	struct proto_out out;
	struct proto_msg m;
	uint32_t id = next_id++;

	assert_int_equal(proto_encode_session_open(id, o ? o : &dflt, &out), 0);
	assert_int_equal(front_call(fd, &out, id, &m), 0);
	assert_int_equal(m.type, PROTO_SESSION_OK);
	assert_int_equal(strlen(m.u.session.session), PROTO_SESSION_ID_LEN);
	strcpy(buf, m.u.session.session);
	proto_msg_free(&m);
}

/* A file operation; the reply is left in m (the caller frees it). */
static void
file_op(int fd, enum proto_type type, const char *sid, const char *path, const char *data,
	struct proto_msg *m)
{
	assert_int_equal(front_file_op(fd, next_id++, type, sid, path, data, m), 0);
}

/* Expect an error of this code. */
static void
expect_error(struct proto_msg *m, enum proto_error code)
{
	if (m->type != PROTO_ERROR || m->u.error.code != code)
		print_message("got %s %s\n", proto_type_name(m->type),
			      m->type == PROTO_ERROR ? m->u.error.message : "");
	assert_int_equal(m->type, PROTO_ERROR);
	assert_int_equal(m->u.error.code, code);
	proto_msg_free(m);
}

static void
expect_ok(struct proto_msg *m)
{
	if (m->type == PROTO_ERROR)
		print_message("error: %s\n", m->u.error.message);
	assert_int_equal(m->type, PROTO_OK);
	proto_msg_free(m);
}

/* Run code of a runtime in a session (sid may be NULL) with input files and
 * limits (NULL: the defaults); the result is left in m. */
static void
run_code(int fd, const char *sid, const char *runtime, const char *code, bool stream,
	 const struct proto_file *files, size_t nfiles, const struct proto_limits *lim,
	 struct proto_msg *m)
{
	struct proto_run run;
	struct proto_out out;
	uint32_t id = next_id++;

	front_run_init(&run, runtime, code);
	run.session = sid;
	run.stream = stream;
	run.files = (struct proto_file *)files;
	run.nfiles = nfiles;
	if (lim != NULL)
		run.limits = *lim;
	assert_int_equal(proto_encode_run(id, &run, &out), 0);
	assert_int_equal(front_call(fd, &out, id, m), 0);
	if (m->type == PROTO_ERROR)
		print_message("run error: %s\n", m->u.error.message);
	assert_int_equal(m->type, PROTO_RESULT);
}

/* Run sh code in a session (sid may be NULL); the result is left in m. */
static void
run_sh(int fd, const char *sid, const char *code, bool stream, const struct proto_file *files,
       size_t nfiles, struct proto_msg *m)
{
	run_code(fd, sid, "sh", code, stream, files, nfiles, NULL, m);
}

/* The stdout of a result as a string (static buffer). */
static const char *
out_str(const struct proto_msg *m)
{
	static char buf[4096];
	size_t n = m->u.result.out[0].data.len < sizeof(buf) - 1 ? m->u.result.out[0].data.len
								 : sizeof(buf) - 1;

	memcpy(buf, m->u.result.out[0].data.data, n);
	buf[n] = '\0';
	return buf;
}

static bool
has_artifact(const struct proto_msg *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->u.result.nartifacts; i++)
		if (strcmp(m->u.result.artifacts[i].name, name) == 0)
			return true;
	return false;
}

static bool
no_process_left(int ms)
{
	int i;

	for (i = 0; i < ms / 10; i++) {
		if (fixture_count_uid_procs(UID_LO, UID_HI) == 0)
			return true;
		front_sleep_ms(10);
	}
	return false;
}

/*
 * Files written by one run are there for the next; a run's artifacts are
 * what it created or changed, not what was there before; input files of a
 * session run land in the workspace; session_list shows it; after close,
 * nothing of it is left.
 */
static void
test_state_between_runs(void **state)
{
	struct fixture f;
	struct proto_msg m;
	char sid[64];
	struct proto_file in = {
		.name = "in/data.txt",
		.data = {.data = (const uint8_t *)"input\n", .len = 6, .fd = -1, .present = true}};
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, NULL, sid);
	run_sh(fd, sid, "echo one > a.txt; mkdir -p d; echo two > d/b.txt; echo made", false, NULL,
	       0, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_true(has_artifact(&m, "a.txt"));
	assert_true(has_artifact(&m, "d/b.txt"));
	proto_msg_free(&m);
	/* The second run sees the first one's files and changes one of them. */
	run_sh(fd, sid, "cat a.txt d/b.txt in/data.txt; echo three >> a.txt; touch c.txt", false,
	       &in, 1, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_string_equal(out_str(&m), "one\ntwo\ninput\n");
	assert_true(has_artifact(&m, "a.txt"));
	assert_true(has_artifact(&m, "c.txt"));
	assert_false(has_artifact(&m, "d/b.txt"));     /* from before, unchanged */
	assert_false(has_artifact(&m, "in/data.txt")); /* an input, unchanged */
	proto_msg_free(&m);
	/* session_list knows it */
	{
		struct proto_out out;
		uint32_t id = next_id++;

		assert_int_equal(proto_encode_simple(id, PROTO_SESSION_LIST, &out), 0);
		assert_int_equal(front_call(fd, &out, id, &m), 0);
		assert_int_equal(m.type, PROTO_SESSION_LIST_OK);
		assert_int_equal(m.u.session_list.nsessions, 1);
		assert_string_equal(m.u.session_list.sessions[0].session, sid);
		assert_int_equal(m.u.session_list.sessions[0].runs, 2);
		proto_msg_free(&m);
	}
	/* close: nothing left, the id is gone */
	{
		struct proto_out out;
		uint32_t id = next_id++;

		assert_int_equal(proto_encode_session(id, PROTO_SESSION_CLOSE, sid, &out), 0);
		assert_int_equal(front_call(fd, &out, id, &m), 0);
		expect_ok(&m);
	}
	assert_true(no_process_left(5000));
	file_op(fd, PROTO_FILE_READ, sid, "a.txt", NULL, &m);
	expect_error(&m, PROTO_ERR_NOT_FOUND);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/* write (with directories), read, list, delete. */
static void
test_file_operations(void **state)
{
	struct fixture f;
	struct proto_msg m;
	char sid[64];
	size_t i;
	bool seen = false;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, NULL, sid);
	file_op(fd, PROTO_FILE_WRITE, sid, "x/y/z.txt", "hello world\n", &m);
	expect_ok(&m);
	file_op(fd, PROTO_FILE_READ, sid, "x/y/z.txt", NULL, &m);
	assert_int_equal(m.type, PROTO_FILE_DATA);
	assert_int_equal(m.u.file_data.size, 12);
	assert_false(m.u.file_data.truncated);
	assert_memory_equal(m.u.file_data.data.data, "hello world\n", 12);
	proto_msg_free(&m);
	file_op(fd, PROTO_FILE_LIST, sid, "x/y", NULL, &m);
	assert_int_equal(m.type, PROTO_FILE_LIST_OK);
	assert_int_equal(m.u.file_list.nentries, 1);
	assert_string_equal(m.u.file_list.entries[0].name, "z.txt");
	assert_string_equal(m.u.file_list.entries[0].kind, "file");
	assert_int_equal(m.u.file_list.entries[0].size, 12);
	assert_true(m.u.file_list.entries[0].mtime_ms > 1600000000000ULL);
	proto_msg_free(&m);
	file_op(fd, PROTO_FILE_LIST, sid, "", NULL, &m);
	assert_int_equal(m.type, PROTO_FILE_LIST_OK);
	for (i = 0; i < m.u.file_list.nentries; i++)
		if (strcmp(m.u.file_list.entries[i].name, "x") == 0 &&
		    strcmp(m.u.file_list.entries[i].kind, "dir") == 0)
			seen = true;
	assert_true(seen);
	proto_msg_free(&m);
	/* listing the root again gives the same (the keeper reopens it) */
	file_op(fd, PROTO_FILE_LIST, sid, "", NULL, &m);
	assert_int_equal(m.type, PROTO_FILE_LIST_OK);
	assert_true(m.u.file_list.nentries >= 1);
	proto_msg_free(&m);
	/* the code sees the file, owned by its own uid */
	run_sh(fd, sid, "cat x/y/z.txt; stat -c %u x/y/z.txt", false, NULL, 0, &m);
	assert_string_equal(out_str(&m), "hello world\n1000\n");
	proto_msg_free(&m);
	file_op(fd, PROTO_FILE_DELETE, sid, "x/y/z.txt", NULL, &m);
	expect_ok(&m);
	file_op(fd, PROTO_FILE_READ, sid, "x/y/z.txt", NULL, &m);
	expect_error(&m, PROTO_ERR_NOT_FOUND);
	file_op(fd, PROTO_FILE_DELETE, sid, "x/y", NULL, &m); /* now empty */
	expect_ok(&m);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * Traversal and links: "..", absolute paths, links planted by a run at any
 * component, FIFOs: all refused, nothing written outside, the session still
 * usable afterwards.
 */
static void
test_traversal_and_links(void **state)
{
	struct fixture f;
	struct proto_msg m;
	char sid[64];
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, NULL, sid);
	file_op(fd, PROTO_FILE_WRITE, sid, "../escape.txt", "x", &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_WRITE, sid, "/tmp/airlock-session-escape.txt", "x", &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	assert_int_equal(stat("/tmp/airlock-session-escape.txt", &st), -1);
	file_op(fd, PROTO_FILE_WRITE, sid, "a/../../escape.txt", "x", &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_READ, sid, "../../../etc/passwd", NULL, &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	/* A run plants links and a FIFO; later file operations refuse them. */
	run_sh(fd, sid,
	       "ln -s /etc etcdir; ln -s /etc/passwd pw; ln -s . self; mkdir real; "
	       "ln -s real alias; mkfifo ff; echo planted",
	       false, NULL, 0, &m);
	assert_string_equal(out_str(&m), "planted\n");
	proto_msg_free(&m);
	file_op(fd, PROTO_FILE_READ, sid, "pw", NULL, &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_READ, sid, "etcdir/passwd", NULL, &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_WRITE, sid, "etcdir/airlock-planted", "x", &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	assert_int_equal(stat("/etc/airlock-planted", &st), -1);
	file_op(fd, PROTO_FILE_WRITE, sid, "pw", "overwrite through a link", &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_WRITE, sid, "alias/x", "x", &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_LIST, sid, "etcdir", NULL, &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	file_op(fd, PROTO_FILE_LIST, sid, "self", NULL, &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	/* a FIFO is refused without blocking */
	file_op(fd, PROTO_FILE_READ, sid, "ff", NULL, &m);
	expect_error(&m, PROTO_ERR_BAD_REQUEST);
	/* listing shows the links as links, deleting removes the link only */
	file_op(fd, PROTO_FILE_DELETE, sid, "pw", NULL, &m);
	expect_ok(&m);
	assert_int_equal(stat("/etc/passwd", &st), 0);
	/* still usable */
	file_op(fd, PROTO_FILE_WRITE, sid, "real/ok.txt", "fine", &m);
	expect_ok(&m);
	run_sh(fd, sid, "cat real/ok.txt", false, NULL, 0, &m);
	assert_string_equal(out_str(&m), "fine");
	proto_msg_free(&m);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

struct other_out {
	int write_code, read_code, close_code, run_code, list_n;
};

static const char *other_sock, *other_sid;

/* As nobody: every operation on root's session is not_found. */
static void
other_fn(void *arg, void *buf)
{
	struct other_out *o = buf;
	struct proto_msg m;
	struct proto_out out;
	struct proto_file_op op = {.session = other_sid, .path = "secret.txt"};
	struct proto_run run;
	int fd;

	(void)arg;
	memset(o, 0xff, sizeof(*o));
	fd = front_raw_connect(other_sock);
	if (fd < 0 || front_send_hello(fd, 1, PROTO_VERSION) < 0 || front_recv(fd, 5000, &m) < 0)
		return;
	proto_msg_free(&m);
	op.data = (struct proto_blob){
		.data = (const uint8_t *)"x", .len = 1, .fd = -1, .present = true};
	if (proto_encode_file_op(2, PROTO_FILE_WRITE, &op, &out) == 0 &&
	    front_send_out(fd, &out) == 0 && front_recv(fd, 5000, &m) == 0) {
		o->write_code = m.type == PROTO_ERROR ? (int)m.u.error.code : 0;
		proto_msg_free(&m);
	}
	op.data = (struct proto_blob){.fd = -1};
	if (proto_encode_file_op(3, PROTO_FILE_READ, &op, &out) == 0 &&
	    front_send_out(fd, &out) == 0 && front_recv(fd, 5000, &m) == 0) {
		o->read_code = m.type == PROTO_ERROR ? (int)m.u.error.code : 0;
		proto_msg_free(&m);
	}
	memset(&run, 0, sizeof(run));
	run.runtime = "sh";
	run.code = (struct proto_blob){
		.data = (const uint8_t *)"cat secret.txt", .len = 14, .fd = -1, .present = true};
	run.stdin_data.fd = -1;
	run.session = other_sid;
	if (proto_encode_run(4, &run, &out) == 0 && front_send_out(fd, &out) == 0 &&
	    front_recv(fd, 5000, &m) == 0) {
		o->run_code = m.type == PROTO_ERROR ? (int)m.u.error.code : 0;
		proto_msg_free(&m);
	}
	if (proto_encode_session(5, PROTO_SESSION_CLOSE, other_sid, &out) == 0 &&
	    front_send_out(fd, &out) == 0 && front_recv(fd, 5000, &m) == 0) {
		o->close_code = m.type == PROTO_ERROR ? (int)m.u.error.code : 0;
		proto_msg_free(&m);
	}
	if (proto_encode_simple(6, PROTO_SESSION_LIST, &out) == 0 &&
	    front_send_out(fd, &out) == 0 && front_recv(fd, 5000, &m) == 0) {
		o->list_n = m.type == PROTO_SESSION_LIST_OK ? (int)m.u.session_list.nsessions : -1;
		proto_msg_free(&m);
	}
	close(fd);
}

/* Another uid gets not_found for everything, exactly as for no session. */
static void
test_ownership(void **state)
{
	struct fixture f;
	struct other_out o;
	struct proto_msg m;
	char sid[64];
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nsocket_mode = 0666\n"
					       "[access]\nallow_users = nobody\n")),
			 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, NULL, sid);
	file_op(fd, PROTO_FILE_WRITE, sid, "secret.txt", "root's", &m);
	expect_ok(&m);
	other_sock = f.sock;
	other_sid = sid;
	assert_int_equal(
		front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, other_fn, NULL, &o, sizeof(o)),
		0);
	assert_int_equal(o.write_code, PROTO_ERR_NOT_FOUND);
	assert_int_equal(o.read_code, PROTO_ERR_NOT_FOUND);
	assert_int_equal(o.run_code, PROTO_ERR_NOT_FOUND);
	assert_int_equal(o.close_code, PROTO_ERR_NOT_FOUND);
	assert_int_equal(o.list_n, 0);
	/* untouched for its owner */
	file_op(fd, PROTO_FILE_READ, sid, "secret.txt", NULL, &m);
	assert_int_equal(m.type, PROTO_FILE_DATA);
	assert_memory_equal(m.u.file_data.data.data, "root's", 6);
	proto_msg_free(&m);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/* An idle session ends by itself; its keeper and uid are gone. */
static void
test_idle_expiry_and_limit(void **state)
{
	struct proto_session_open o = {.idle_timeout_ms = 400};
	struct fixture f;
	struct proto_msg m;
	char sid[64], s2[64], s3[64];
	int fd, i;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[sessions]\nmax_per_uid = 2\n")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, &o, sid);
	open_session(fd, NULL, s2);
	/* a third is over max_per_uid */
	{
		struct proto_session_open d = {0};
		struct proto_out out;
		uint32_t id = next_id++;

		assert_int_equal(proto_encode_session_open(id, &d, &out), 0);
		assert_int_equal(front_call(fd, &out, id, &m), 0);
		expect_error(&m, PROTO_ERR_BUSY);
	}
	assert_true(fixture_count_uid_procs(UID_LO, UID_HI) >= 2); /* two keepers */
	/* Until the idle one's keeper is gone (a file op would keep it alive). */
	for (i = 0; i < 1000 && fixture_count_uid_procs(UID_LO, UID_HI) >= 2; i++)
		front_sleep_ms(10);
	file_op(fd, PROTO_FILE_LIST, sid, "", NULL, &m);
	expect_error(&m, PROTO_ERR_NOT_FOUND);
	/* the other one is alive, and a new one may be opened */
	file_op(fd, PROTO_FILE_LIST, s2, "", NULL, &m);
	assert_int_equal(m.type, PROTO_FILE_LIST_OK);
	proto_msg_free(&m);
	open_session(fd, NULL, s3);
	for (i = 0; i < 200 && fixture_count_uid_procs(UID_LO, UID_HI) != 2; i++)
		front_sleep_ms(10);
	assert_int_equal(fixture_count_uid_procs(UID_LO, UID_HI), 2);
	close(fd);
	/* the daemon's stop ends the rest: nothing left */
	assert_int_equal(fixture_stop(&f), 0);
	assert_true(no_process_left(3000));
}

/*
 * stream: stdout and stderr chunks arrive as events, in order, before the
 * result; only the bytes within output_bytes are streamed; a one-shot run
 * streams too.
 */
static void
test_streaming(void **state)
{
	struct fixture f;
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	char got_out[256] = "", got_err[256] = "";
	size_t nevents = 0, streamed = 0;
	bool result = false;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	memset(&run, 0, sizeof(run));
	run.runtime = "sh";
	run.code = (struct proto_blob){
		.data = (const uint8_t *)"echo one; sleep 0.3; echo err >&2; sleep 0.3; echo two",
		.len = strlen("echo one; sleep 0.3; echo err >&2; sleep 0.3; echo two"),
		.fd = -1,
		.present = true};
	run.stdin_data.fd = -1;
	run.stream = true;
	assert_int_equal(proto_encode_run(7, &run, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
	while (!result) {
		assert_int_equal(front_recv(fd, 10000, &m), 0);
		assert_int_equal(m.id, 7);
		if (m.type == PROTO_STREAM) {
			char *dst = strcmp(m.u.stream.stream, "stdout") == 0 ? got_out : got_err;

			/* events come while it runs: the first before "two" exists */
			strncat(dst, (const char *)m.u.stream.data.data, m.u.stream.data.len);
			nevents++;
		} else {
			assert_int_equal(m.type, PROTO_RESULT);
			assert_memory_equal(m.u.result.out[0].data.data, "one\ntwo\n", 8);
			result = true;
		}
		proto_msg_free(&m);
	}
	assert_string_equal(got_out, "one\ntwo\n");
	assert_string_equal(got_err, "err\n");
	assert_true(nevents >= 3);
	/* the cap holds for streams */
	run.code = (struct proto_blob){.data = (const uint8_t *)"yes | head -c 100000",
				       .len = strlen("yes | head -c 100000"),
				       .fd = -1,
				       .present = true};
	run.limits.v[PROTO_LIMIT_OUTPUT_BYTES] = 1000;
	assert_int_equal(proto_encode_run(8, &run, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
	for (result = false; !result;) {
		assert_int_equal(front_recv(fd, 10000, &m), 0);
		if (m.type == PROTO_STREAM) {
			streamed += m.u.stream.data.len;
		} else {
			assert_int_equal(m.type, PROTO_RESULT);
			assert_true(m.u.result.out[0].truncated);
			assert_int_equal(m.u.result.out[0].total, 100000);
			result = true;
		}
		proto_msg_free(&m);
	}
	assert_int_equal(streamed, 1000);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * With sandboxes prepared ahead: a session run whose input file the keeper
 * refuses (a planted link) is answered with an error and leaves no sandbox
 * behind; the next runs work; after the close only the pool is left.
 */
static void
test_refused_input_with_pool(void **state)
{
	struct fixture f;
	struct proto_msg m;
	char sid[64];
	struct proto_file in = {
		.name = "lnk/x",
		.data = {.data = (const uint8_t *)"x", .len = 1, .fd = -1, .present = true}};
	struct proto_file ok = {
		.name = "fine.txt",
		.data = {.data = (const uint8_t *)"ok", .len = 2, .fd = -1, .present = true}};
	int fd, i, k;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nprepared_sandboxes = 2\n")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, NULL, sid);
	run_sh(fd, sid, "ln -s /tmp lnk", false, NULL, 0, &m);
	proto_msg_free(&m);
	for (k = 0; k < 3; k++) {
		run_sh(fd, sid, "echo never", false, &in, 1, &m);
		assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_ERROR);
		assert_non_null(strstr(m.u.result.error, "lnk/x"));
		/* the keeper's -ELOOP, told as such */
		assert_non_null(strstr(m.u.result.error, "leaves the workspace"));
		proto_msg_free(&m);
	}
	run_sh(fd, sid, "cat fine.txt", false, &ok, 1, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_string_equal(out_str(&m), "ok");
	proto_msg_free(&m);
	/* one-shot runs through the pool still right */
	for (k = 0; k < 3; k++) {
		run_sh(fd, NULL, "echo $(id -u)", false, NULL, 0, &m);
		assert_string_equal(out_str(&m), "1000\n");
		proto_msg_free(&m);
	}
	{
		struct proto_out out;
		uint32_t id = next_id++;

		assert_int_equal(proto_encode_session(id, PROTO_SESSION_CLOSE, sid, &out), 0);
		assert_int_equal(front_call(fd, &out, id, &m), 0);
		expect_ok(&m);
	}
	/* only the two prepared sandboxes are left: no orphan, no keeper */
	for (i = 0; i < 300 && fixture_count_uid_procs(UID_LO, UID_HI) != 2; i++)
		front_sleep_ms(10);
	assert_int_equal(fixture_count_uid_procs(UID_LO, UID_HI), 2);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
	assert_true(no_process_left(3000));
}

/*
 * A session's runs cannot raise their own memory limit with file cache
 * (review of 0f20866). Pages of files a run reads stay charged to the
 * session's kept cgroup after it, reclaimable; when the next run's limit was
 * its own on top of all the cgroup held, a run that read as much as its
 * limit raised the next one's by that much, run after run, and the next
 * really got it (its allocations push the cache out). Only the workspace's
 * tmpfs pages (shmem, at most the workspace's size) are added now: after
 * three runs that fill the cache, a run allocating twice its limit ends
 * memory_limit; and a run below its limit is fine next to 48 MiB of
 * workspace files, which take nothing from it.
 */
/* Files under /usr for the cache runs: regular, 1 MiB or more, names that
 * need no quoting in Python; as a Python list's items, at most 256 MiB. */
static char cache_files[16384];
static uint64_t cache_bytes;

static int
cache_file_add(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t len = strlen(cache_files);

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || !(st->st_mode & S_IROTH) ||
	    st->st_size < (1 << 20) || strpbrk(path, "'\\\n") != NULL ||
	    len + strlen(path) + 4 >= sizeof(cache_files))
		return 0;
	snprintf(cache_files + len, sizeof(cache_files) - len, "'%s',", path);
	cache_bytes += (uint64_t)st->st_size;
	return cache_bytes >= 256 << 20;
}

static void
test_cache_raises_no_limit(void **state)
{
	/* Read the files, each dropped from the page cache first (not if
	 * something maps it), so that reading it charges this run's cgroup. */
	static const char cache_code[] = "import os\n"
					 "buf = bytearray(1 << 20)\n"
					 "for p in [%s]:\n"
					 "    fd = os.open(p, os.O_RDONLY)\n"
					 "    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n"
					 "    while os.readv(fd, [buf]) > 0: pass\n"
					 "    os.close(fd)\n";
	static char cache[sizeof(cache_code) + sizeof(cache_files)];
	struct proto_limits lim;
	struct fixture f;
	struct proto_msg m;
	char sid[64], code[160], base[600];
	uint64_t cached, shmem;
	int fd, i;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	if (runs_cgroup(&f, base, sizeof(base)) == 0) {
		print_message("resource control rlimit: no memory cgroup\n");
		close(fd);
		assert_int_equal(fixture_stop(&f), 0);
		skip();
	}
	cache_files[0] = '\0';
	cache_bytes = 0;
	assert_int_equal(nftw("/usr/lib", cache_file_add, 16, FTW_PHYS) < 0, 0);
	print_message("cache runs read %" PRIu64 " MiB under /usr/lib\n", cache_bytes >> 20);
	assert_true(cache_bytes >= 192 << 20);
	snprintf(cache, sizeof(cache), cache_code, cache_files);
	open_session(fd, NULL, sid);
	memset(&lim, 0, sizeof(lim));
	lim.v[PROTO_LIMIT_MEMORY_BYTES] = 64 << 20;
	lim.v[PROTO_LIMIT_WALL_MS] = 25000;
	run_code(fd, sid, "sh", "head -c 50331648 /dev/zero > big", false, NULL, 0, &lim, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	proto_msg_free(&m);
	for (i = 0; i < 3; i++) {
		run_code(fd, sid, "python", cache, false, NULL, 0, &lim, &m);
		if (m.u.result.outcome != PROTO_OUTCOME_EXITED)
			print_message("cache run: outcome %s\n",
				      proto_outcome_name(m.u.result.outcome));
		assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
		proto_msg_free(&m);
		/* The attack's premise: the cache is charged to the session's
		 * cgroup (half its limit at least), besides the workspace. */
		cached = run_cgroup_cache(&f, &shmem);
		print_message("after cache run %d: %" PRIu64 " MiB not shmem, %" PRIu64
			      " MiB shmem\n",
			      i + 1, cached >> 20, shmem >> 20);
		assert_true(cached >= 32 << 20);
		assert_true(shmem >= 48 << 20);
	}
	for (i = 0; i < 2; i++) {
		snprintf(code, sizeof(code),
			 "b = bytearray(%d << 20)\n"
			 "for i in range(0, len(b), 4096): b[i] = 1\n"
			 "print('fine')\n",
			 i == 0 ? 128 : 40);
		run_code(fd, sid, "python", code, false, NULL, 0, &lim, &m);
		print_message("%d MiB: outcome %s\n", i == 0 ? 128 : 40,
			      proto_outcome_name(m.u.result.outcome));
		assert_int_equal(m.u.result.outcome,
				 i == 0 ? PROTO_OUTCOME_MEMORY_LIMIT : PROTO_OUTCOME_EXITED);
		proto_msg_free(&m);
	}
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * Issue 13, finding 6: session runs that write the workspace do not leave a
 * dying memory cgroup each (the session's runs share one cgroup for the
 * session's life). Within one session the memory limit still holds for each
 * run, an oom kill is blamed on its run alone, and the cpu figure is each
 * run's own, not the session's sum.
 */
static void
test_no_dying_cgroups(void **state)
{
	enum { N = 30 };
	struct proto_limits lim;
	struct fixture f;
	struct proto_msg m;
	char sid[64], code[128], runs[600];
	int fd, i, v, remade = 0;
	long before, after;
	ino_t ino0 = 0, ino = 0;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	open_session(fd, NULL, sid);
	run_sh(fd, sid, "head -c 65536 /dev/zero > f0", false, NULL, 0, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	proto_msg_free(&m);
	v = runs_cgroup(&f, runs, sizeof(runs));
	if (v == 0) {
		print_message("resource control rlimit: no memory cgroups to count\n");
		close(fd);
		assert_int_equal(fixture_stop(&f), 0);
		skip();
	}
	before = v == 2 ? memcg_dying(runs)
			: memcg_own_nodes(runs, fixture_uid(UID_BASE), UID_COUNT, &ino0);
	for (i = 1; i <= N; i++) {
		snprintf(code, sizeof(code), "head -c 65536 /dev/zero > f%d", i);
		run_sh(fd, sid, code, false, NULL, 0, &m);
		assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
		proto_msg_free(&m);
		/* cgroup1: still the session's one node, never made again. */
		if (v == 1 && (memcg_own_nodes(runs, fixture_uid(UID_BASE), UID_COUNT, &ino) != 1 ||
			       ino != ino0))
			remade++;
	}
	if (v == 2) {
		after = memcg_dying(runs);
		print_message("dying memory cgroups before %ld, after %d session runs %ld\n",
			      before, N, after);
		/* One each before the fix; a margin for a run's own. */
		assert_true(after - before < N / 3);
	} else {
		print_message("cgroup1: %ld run node(s) of ours, remade in %d of %d session runs\n",
			      before, remade, N);
		assert_int_equal(before, 1);
		assert_int_equal(remade, 0);
	}

	/*
	 * Over its memory limit: memory_limit, in a session too; the next run
	 * is not blamed for that kill, and below its limit it is fine (the
	 * workspace files of the earlier runs take nothing from it).
	 */
	memset(&lim, 0, sizeof(lim));
	lim.v[PROTO_LIMIT_MEMORY_BYTES] = 64 << 20;
	lim.v[PROTO_LIMIT_WALL_MS] = 20000;
	for (i = 0; i < 2; i++) {
		snprintf(code, sizeof(code),
			 "b = bytearray(%d << 20)\n"
			 "for i in range(0, len(b), 4096): b[i] = 1\n"
			 "print('fine')\n",
			 i == 0 ? 200 : 40);
		run_code(fd, sid, "python", code, false, NULL, 0, &lim, &m);
		assert_int_equal(m.u.result.outcome,
				 i == 0 ? PROTO_OUTCOME_MEMORY_LIMIT : PROTO_OUTCOME_EXITED);
		proto_msg_free(&m);
	}
	/* cpu_ms is the run's own: a busy run, then an idle one. */
	run_sh(fd, sid, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done", false, NULL, 0, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	print_message("busy run: cpu_ms %" PRIu64 "\n", m.u.result.cpu_ms);
	assert_true(m.u.result.cpu_ms >= 100);
	proto_msg_free(&m);
	run_sh(fd, sid, "true", false, NULL, 0, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	print_message("idle run: cpu_ms %" PRIu64 "\n", m.u.result.cpu_ms);
	assert_true(m.u.result.cpu_ms < 50);
	proto_msg_free(&m);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * A session run's memory_peak_bytes is its own where the kernel can reset
 * the peak of the session's shared cgroup before each run (cgroup1; cgroup2
 * from kernel 6.12: memory.peak's per-fd reset), else 0 (docs/protocol.md):
 * a run that touched 96 MiB, then one that touched nothing, whose figure
 * (what the cgroup held, earlier runs' cache and workspace included) is far
 * below the first's, as it would not be were it the session's peak.
 */
static void
test_session_run_memory_peak(void **state)
{
	struct proto_limits lim;
	struct fixture f;
	struct proto_msg m;
	struct utsname u;
	char sid[64], base[600];
	uint64_t big, small;
	int fd, v, major = 0, minor = 0;
	bool resettable;

	(void)state;
	assert_int_equal(uname(&u), 0);
	assert_true(sscanf(u.release, "%d.%d", &major, &minor) == 2);
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	v = runs_cgroup(&f, base, sizeof(base));
	resettable = v == 1 || (v == 2 && (major > 6 || (major == 6 && minor >= 12)));
	open_session(fd, NULL, sid);
	memset(&lim, 0, sizeof(lim));
	lim.v[PROTO_LIMIT_MEMORY_BYTES] = 256 << 20;
	lim.v[PROTO_LIMIT_WALL_MS] = 20000;
	run_code(fd, sid, "python",
		 "b = bytearray(96 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n", false,
		 NULL, 0, &lim, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	big = m.u.result.memory_peak_bytes;
	proto_msg_free(&m);
	run_sh(fd, sid, "true", false, NULL, 0, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	small = m.u.result.memory_peak_bytes;
	proto_msg_free(&m);
	print_message("resource control %d, kernel %d.%d: peaks %" PRIu64 " KiB, %" PRIu64 " KiB\n",
		      v, major, minor, big >> 10, small >> 10);
	if (resettable) {
		assert_true(big >= 96 << 20);
		assert_true(small > 0);
		assert_true(small + (64 << 20) < big);
	} else {
		assert_int_equal(big, 0);
		assert_int_equal(small, 0);
	}
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_between_runs),
		cmocka_unit_test(test_file_operations),
		cmocka_unit_test(test_traversal_and_links),
		cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_idle_expiry_and_limit),
		cmocka_unit_test(test_streaming),
		cmocka_unit_test(test_refused_input_with_pool),
		cmocka_unit_test(test_no_dying_cgroups),
		cmocka_unit_test(test_session_run_memory_peak),
		cmocka_unit_test(test_cache_raises_no_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
