/*
 * test_access.c: who may use the daemon. An unprivileged user not listed in
 * [access] is refused with "unauthorized"; a listed one is served; a listed
 * user is held to max_connections_per_uid ("busy"), root is not. A user
 * removed from [access] by a reload is refused every request on a
 * connection it opened before, file operations included, and its running
 * code's tool calls.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "airlock.h"
#include "fdpass.h"
#include "fixture.h"
#include "front_util.h"

/* Each group below runs its own daemon, each with its own uid range. */
#define CONFIG_DENY "[daemon]\nsocket_mode = 0666\n[sandbox]\nuid_base = 704096\n"
#define SANDBOX_ALLOW "[sandbox]\nuid_base = 708192\n"
#define CONFIG_ALLOW "[daemon]\nsocket_mode = 0666\n[access]\nallow_users = nobody\n" SANDBOX_ALLOW
/* CONFIG_ALLOW with a profile a later reload removes */
#define CONFIG_ALLOW_TEMP CONFIG_ALLOW "[profile temp]\n"
/* CONFIG_ALLOW without nobody, for a reload */
#define CONFIG_REVOKED "[daemon]\nsocket_mode = 0666\n" SANDBOX_ALLOW
/* One run at a time, so that a second one waits in the queue. */
#define CONFIG_ALLOW_ONE                                                                           \
	"[daemon]\nsocket_mode = 0666\nmax_runs = 1\n[access]\nallow_users = "                     \
	"nobody\n" SANDBOX_ALLOW
#define CONFIG_REVOKED_ONE "[daemon]\nsocket_mode = 0666\nmax_runs = 1\n" SANDBOX_ALLOW
#define CONFIG_LIMIT                                                                               \
	"[daemon]\nsocket_mode = 0666\nmax_connections_per_uid = 2\n"                              \
	"[access]\nallow_users = nobody\n[sandbox]\nuid_base = 712288\n"

/* What a child acting as nobody saw; sent back through a pipe. */
struct outcome {
	int connect_r;
	int ping_r;
	uint32_t info_uid;
	int info_r;
	char code[64];
	char message[256];
	int extra_r[4];
	char extra_code[4][64];
};

static int
start(void **state, const char *config)
{
	static struct fixture f;

	if (fixture_start(&f, config) < 0)
		return -1;
	*state = &f;
	return 0;
}

static int
setup_deny(void **state)
{
	return start(state, CONFIG_DENY);
}

static int
setup_allow(void **state)
{
	return start(state, CONFIG_ALLOW);
}

static int
setup_allow_one(void **state)
{
	return start(state, CONFIG_ALLOW_ONE);
}

static int
setup_limit(void **state)
{
	return start(state, CONFIG_LIMIT);
}

static int
teardown(void **state)
{
	return fixture_stop(*state) == 0 ? 0 : -1;
}

static const char *
cli_path(void)
{
	const char *p = getenv("AIRLOCK_CLI");

	return p != NULL ? p : "airlock";
}

/* As nobody: connect, then (if that worked) ping and ask for info. */
static void
as_nobody_connect(void *arg, void *buf)
{
	const struct fixture *f = arg;
	struct outcome *o = buf;
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;

	o->connect_r = airlock_connect_error(f->sock, &conn, o->code, sizeof(o->code), o->message,
					     sizeof(o->message));
	o->ping_r = 1;
	o->info_r = 1;
	if (o->connect_r < 0)
		return;
	o->ping_r = airlock_ping(conn);
	o->info_r = airlock_info(conn, &info);
	if (o->info_r == 0)
		o->info_uid = airlock_info_uid(info);
	airlock_info_free(info);
	airlock_conn_free(conn);
}

/* A user not in [access] reaches the socket but is refused: unauthorized. */
static void
test_unlisted_user_refused(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	assert_int_equal(front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, as_nobody_connect, f, &o,
				       sizeof(o)),
			 0);
	assert_int_equal(o.connect_r, -EACCES);
	assert_string_equal(o.code, "unauthorized");
	assert_non_null(strstr(o.message, "65534"));
	assert_int_equal(o.ping_r, 1); /* never got that far */
	assert_true(fixture_alive(f));

	/* Root, on the same daemon, still is served. */
	memset(&o, 0, sizeof(o));
	as_nobody_connect(f, &o);
	assert_int_equal(o.connect_r, 0);
	assert_int_equal(o.ping_r, 0);
	assert_int_equal(o.info_r, 0);
	assert_int_equal(o.info_uid, 0);
}

/* The airlock command as that user reports the refusal and fails. */
static void
test_unlisted_user_cli(void **state)
{
	struct fixture *f = *state;
	char out[4096], err[4096];
	char *argv[] = {(char *)cli_path(), "--socket", f->sock, "ping", NULL};
	int r;

	r = front_run_cmd(FRONT_NOBODY_UID, FRONT_NOBODY_GID, argv, out, sizeof(out), err,
			  sizeof(err));
	assert_true(r > 0 && r < 125);
	assert_null(strstr(out, "pong"));
	assert_non_null(strstr(err, "unauthorized"));
}

/* A user listed in allow_users is served, and the daemon sees its real uid. */
static void
test_listed_user_allowed(void **state)
{
	struct fixture *f = *state;
	struct outcome o;
	char out[4096], err[4096];
	char *argv[] = {(char *)cli_path(), "--socket", f->sock, "ping", NULL};

	assert_int_equal(front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, as_nobody_connect, f, &o,
				       sizeof(o)),
			 0);
	assert_int_equal(o.connect_r, 0);
	assert_string_equal(o.code, "");
	assert_int_equal(o.ping_r, 0);
	assert_int_equal(o.info_r, 0);
	assert_int_equal(o.info_uid, FRONT_NOBODY_UID);
	assert_int_equal(front_run_cmd(FRONT_NOBODY_UID, FRONT_NOBODY_GID, argv, out, sizeof(out),
				       err, sizeof(err)),
			 0);
	assert_non_null(strstr(out, "pong"));
}

/*
 * As nobody with max_connections_per_uid = 2: two connections are served;
 * a third is refused with "busy" (through the library, and on a raw socket:
 * the reply answers the hello's id, then the daemon closes), while the first
 * two stay usable; once one of them is closed, a new one is served again.
 */
static void
as_nobody_three(void *arg, void *buf)
{
	const struct fixture *f = arg;
	struct outcome *o = buf;
	struct airlock_conn *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL;
	struct proto_msg m;
	int fd, i;

	o->extra_r[0] = airlock_connect(f->sock, &c1);
	o->extra_r[1] = airlock_connect(f->sock, &c2);
	o->connect_r = airlock_connect_error(f->sock, &c3, o->code, sizeof(o->code), o->message,
					     sizeof(o->message));
	airlock_conn_free(c3);
	fd = front_raw_connect(f->sock);
	o->extra_r[3] = fd < 0 ? fd : front_send_hello(fd, 7, PROTO_VERSION);
	if (o->extra_r[3] == 0)
		o->extra_r[3] = front_recv(fd, 5000, &m);
	if (o->extra_r[3] == 0) {
		if (m.type == PROTO_ERROR && m.id == 7)
			snprintf(o->extra_code[3], sizeof(o->extra_code[3]), "%s",
				 proto_error_name(m.u.error.code));
		proto_msg_free(&m);
		o->extra_r[3] = front_wait_eof(fd, 5000);
	}
	if (fd >= 0)
		close(fd);
	o->ping_r =
		(c1 != NULL && c2 != NULL) ? (airlock_ping(c1) == 0 && airlock_ping(c2) == 0) : -1;
	/* Free one; the daemon notices the close asynchronously, so retry. */
	airlock_conn_free(c2);
	for (i = 0; i < 200; i++) {
		o->extra_r[2] = airlock_connect_error(f->sock, &c4, o->extra_code[2],
						      sizeof(o->extra_code[2]), NULL, 0);
		if (o->extra_r[2] == 0)
			break;
		front_sleep_ms(10);
	}
	o->info_r = c4 != NULL ? airlock_ping(c4) : -1;
	airlock_conn_free(c4);
	airlock_conn_free(c1);
}

static void
test_per_uid_connection_limit(void **state)
{
	struct fixture *f = *state;
	struct outcome o;

	assert_int_equal(front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, as_nobody_three, f, &o,
				       sizeof(o)),
			 0);
	assert_int_equal(o.extra_r[0], 0);
	assert_int_equal(o.extra_r[1], 0);
	assert_int_equal(o.connect_r, -EBUSY);
	assert_string_equal(o.code, "busy");
	assert_non_null(strstr(o.message, "65534"));
	assert_int_equal(o.extra_r[3], 0); /* busy on the raw socket, then EOF */
	assert_string_equal(o.extra_code[3], "busy");
	assert_int_equal(o.ping_r, 1);
	assert_int_equal(o.extra_r[2], 0);
	assert_int_equal(o.info_r, 0);
	assert_true(fixture_alive(f));
}

/* Root is not held to max_connections_per_uid. */
static void
test_root_not_limited(void **state)
{
	struct fixture *f = *state;
	struct airlock_conn *c[4] = {NULL};
	int i;

	for (i = 0; i < 4; i++)
		assert_int_equal(airlock_connect(f->sock, &c[i]), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(airlock_ping(c[i]), 0);
		airlock_conn_free(c[i]);
	}
}

/* As nobody: connect twice on raw sockets, say hello on the first only,
 * and hand both to the test (root) through the socketpair in arg: the
 * daemon's SO_PEERCRED is nobody's for each connection's life. */
struct hand_over {
	int sp[2];
	const char *sock;
};

static void
as_nobody_hand_over(void *arg, void *buf)
{
	const struct hand_over *h = arg;
	int *r = buf;
	int fds[2] = {front_hello(h->sock), front_raw_connect(h->sock)};

	*r = fds[0] < 0 ? fds[0] : fds[1];
	if (*r >= 0 && fdpass_send(h->sp[0], "c", 1, fds, 2) < 0)
		*r = -EPIPE;
}

/* How many times the log says "reloaded: ". */
static int
reloads(const struct fixture *f)
{
	static char buf[1 << 20];
	const char *p = buf;
	FILE *fp = fopen(f->log, "re");
	size_t n;
	int k = 0;

	if (fp == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	while ((p = strstr(p, "reloaded: ")) != NULL) {
		k++;
		p++;
	}
	return k;
}

/* Print the last 4 KiB of the daemon's log (for a failure). */
static void
print_log_tail(const struct fixture *f)
{
	static char buf[4097];
	FILE *fp = fopen(f->log, "re");
	size_t n;

	if (fp == NULL)
		return;
	if (fseek(fp, -4096, SEEK_END) < 0)
		rewind(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	print_message("the daemon's log, its end:\n%s\n", buf);
}

/* The reply in m is an error "unauthorized"; frees m. */
static void
expect_unauthorized(const struct fixture *f, struct proto_msg *m, const char *what)
{
	if (m->type != PROTO_ERROR || m->u.error.code != PROTO_ERR_UNAUTHORIZED) {
		print_log_tail(f);
		fail_msg("%s: got %s %s", what, proto_type_name(m->type),
			 m->type == PROTO_ERROR ? proto_error_name(m->u.error.code) : "");
	}
	proto_msg_free(m);
}

/* Send a message with nothing but its type and id; its reply in m. */
static void
call_simple(int fd, uint32_t id, enum proto_type type, struct proto_msg *m)
{
	struct proto_out out;

	assert_int_equal(proto_encode_simple(id, type, &out), 0);
	assert_int_equal(front_call(fd, &out, id, m), 0);
}

/*
 * Issue 28, point 6: nobody opens a session and writes a file; a reload
 * removes nobody from [access]; on the connection opened before, every kind
 * of request is refused "unauthorized", as at connect: file write, read,
 * list and delete (they went on working before), session open, list and
 * close, info, ping, ps, cancel and run. A connection nobody opened before
 * the reload but said hello on after it is refused at its hello.
 */
/* nobody's two connections (hand_over): fds[0] said hello, fds[1] did not. */
static void
nobody_connections(const struct fixture *f, int fds[2])
{
	struct hand_over arg = {.sock = f->sock};
	size_t nfds = 0;
	int r = 0;
	char b;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, arg.sp), 0);
	assert_int_equal(front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, as_nobody_hand_over,
				       &arg, &r, sizeof(r)),
			 0);
	assert_true(r >= 0);
	assert_int_equal(fdpass_recv(arg.sp[1], &b, 1, fds, 2, &nfds), 1);
	assert_int_equal(nfds, 2);
	close(arg.sp[0]);
	close(arg.sp[1]);
}

/* Revoke nobody (config text) and wait for the daemon's "reloaded: ". */
static void
revoke_nobody(const struct fixture *f, const char *config)
{
	int n0 = reloads(f), i;

	assert_int_equal(fixture_write_config(f, config), 0);
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	for (i = 0; i < 1000 && reloads(f) <= n0; i++)
		front_sleep_ms(10);
	assert_true(reloads(f) > n0);
}

/* Open a session of profile (NULL: the default) on fd, with a.txt in its
 * workspace; its id into sid. */
static void
open_with_file(int fd, uint32_t id, const char *profile, char sid[PROTO_SESSION_ID_LEN + 1])
{
	struct proto_session_open so = {.profile = profile};
	struct proto_out out;
	struct proto_msg m;

	assert_int_equal(proto_encode_session_open(id, &so, &out), 0);
	assert_int_equal(front_call(fd, &out, id, &m), 0);
	assert_int_equal(m.type, PROTO_SESSION_OK);
	snprintf(sid, PROTO_SESSION_ID_LEN + 1, "%s", m.u.session.session);
	proto_msg_free(&m);
	assert_int_equal(front_file_op(fd, id + 1, PROTO_FILE_WRITE, sid, "a.txt", "x", &m), 0);
	assert_int_equal(m.type, PROTO_OK);
	proto_msg_free(&m);
}

/* Is the session sid there: does a read of its a.txt work (1), or is
 * the session not found (0)? Anything else fails. */
static int
session_there(const struct fixture *f, int fd, uint32_t id, const char *sid)
{
	struct proto_msg m;
	int there;

	assert_int_equal(front_file_op(fd, id, PROTO_FILE_READ, sid, "a.txt", NULL, &m), 0);
	there = m.type != PROTO_ERROR;
	if (m.type == PROTO_ERROR && m.u.error.code != PROTO_ERR_NOT_FOUND) {
		print_log_tail(f);
		fail_msg("session %s: %s", sid, proto_error_name(m.u.error.code));
	}
	proto_msg_free(&m);
	return there;
}

/*
 * A reload that removes a session's uid from [access] ends the session
 * (its RELOAD is REVOKED, docs/design-reshape.md 4.2): given access back by
 * the next reload, the uid finds it gone. Before, it lived on, its
 * interpreter and files with it, for as long as its idle and lifetime
 * allowed, and was the uid's again after the second reload.
 */
static void
test_revoked_user_session_ends(void **state)
{
	struct fixture *f = *state;
	char sid[PROTO_SESSION_ID_LEN + 1];
	int fds[2] = {-1, -1};

	nobody_connections(f, fds);
	open_with_file(fds[0], 2, NULL, sid);
	assert_int_equal(session_there(f, fds[0], 4, sid), 1);
	revoke_nobody(f, CONFIG_REVOKED);
	/* The same helper reloads any config: here nobody's access back. */
	revoke_nobody(f, CONFIG_ALLOW);
	if (session_there(f, fds[0], 5, sid) != 0) {
		print_log_tail(f);
		fail_msg("the session of a uid the reload refused lives on");
	}
	close(fds[0]);
	close(fds[1]);
	assert_true(fixture_alive(f));
}

/*
 * A reload that removes a session's profile ends the session; a session of
 * a profile that stays lives on, its files with it.
 */
static void
test_profile_gone_session_ends(void **state)
{
	struct fixture *f = *state;
	char sid_temp[PROTO_SESSION_ID_LEN + 1], sid_def[PROTO_SESSION_ID_LEN + 1];
	int fds[2] = {-1, -1};

	/* revoke_nobody() reloads any config: here "temp" comes, then goes. */
	revoke_nobody(f, CONFIG_ALLOW_TEMP);
	nobody_connections(f, fds);
	open_with_file(fds[0], 2, "temp", sid_temp);
	open_with_file(fds[0], 4, NULL, sid_def);
	revoke_nobody(f, CONFIG_ALLOW);
	if (session_there(f, fds[0], 6, sid_temp) != 0) {
		print_log_tail(f);
		fail_msg("the session of a profile the reload removed lives on");
	}
	assert_int_equal(session_there(f, fds[0], 7, sid_def), 1);
	close(fds[0]);
	close(fds[1]);
	assert_true(fixture_alive(f));
}

static void
test_revoked_user_refused_everything(void **state)
{
	struct fixture *f = *state;
	struct proto_session_open so = {0};
	struct proto_cancel cancel = {.run = 1};
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	char sid[PROTO_SESSION_ID_LEN + 1];
	int fds[2] = {-1, -1}, fd;

	nobody_connections(f, fds);
	fd = fds[0];
	/* Served while listed. */
	assert_int_equal(proto_encode_session_open(2, &so, &out), 0);
	assert_int_equal(front_call(fd, &out, 2, &m), 0);
	assert_int_equal(m.type, PROTO_SESSION_OK);
	snprintf(sid, sizeof(sid), "%s", m.u.session.session);
	proto_msg_free(&m);
	assert_int_equal(front_file_op(fd, 3, PROTO_FILE_WRITE, sid, "a.txt", "x", &m), 0);
	assert_int_equal(m.type, PROTO_OK);
	proto_msg_free(&m);
	revoke_nobody(f, CONFIG_REVOKED);
	/* The connection heard of the reload (client_reload_all): logged. */
	if (!fixture_log_has(f, "the reload refuses its uid")) {
		print_log_tail(f);
		fail_msg("no log line for the connection the reload refuses");
	}
	assert_int_equal(front_file_op(fd, 10, PROTO_FILE_WRITE, sid, "b.txt", "y", &m), 0);
	expect_unauthorized(f, &m, "file_write");
	assert_int_equal(front_file_op(fd, 11, PROTO_FILE_READ, sid, "a.txt", NULL, &m), 0);
	expect_unauthorized(f, &m, "file_read");
	assert_int_equal(front_file_op(fd, 12, PROTO_FILE_LIST, sid, "", NULL, &m), 0);
	expect_unauthorized(f, &m, "file_list");
	assert_int_equal(front_file_op(fd, 13, PROTO_FILE_DELETE, sid, "a.txt", NULL, &m), 0);
	expect_unauthorized(f, &m, "file_delete");
	assert_int_equal(proto_encode_session_open(14, &so, &out), 0);
	assert_int_equal(front_call(fd, &out, 14, &m), 0);
	expect_unauthorized(f, &m, "session_open");
	call_simple(fd, 15, PROTO_SESSION_LIST, &m);
	expect_unauthorized(f, &m, "session_list");
	call_simple(fd, 16, PROTO_INFO, &m);
	expect_unauthorized(f, &m, "info");
	call_simple(fd, 17, PROTO_PING, &m);
	expect_unauthorized(f, &m, "ping");
	call_simple(fd, 18, PROTO_PS, &m);
	expect_unauthorized(f, &m, "ps");
	assert_int_equal(proto_encode_cancel(19, &cancel, &out), 0);
	assert_int_equal(front_call(fd, &out, 19, &m), 0);
	expect_unauthorized(f, &m, "cancel");
	front_run_init(&run, "sh", "echo hi");
	assert_int_equal(proto_encode_run(20, &run, &out), 0);
	assert_int_equal(front_call(fd, &out, 20, &m), 0);
	expect_unauthorized(f, &m, "run");
	assert_int_equal(proto_encode_session(21, PROTO_SESSION_CLOSE, sid, &out), 0);
	assert_int_equal(front_call(fd, &out, 21, &m), 0);
	expect_unauthorized(f, &m, "session_close");
	close(fd);
	/* A connection made before the reload, its hello after: refused. */
	assert_int_equal(front_send_hello(fds[1], 22, PROTO_VERSION), 0);
	assert_int_equal(front_recv(fds[1], FRONT_REPLY_MS, &m), 0);
	expect_unauthorized(f, &m, "hello");
	assert_int_equal(front_wait_eof(fds[1], FRONT_REPLY_MS), 0);
	close(fds[1]);
	assert_true(fixture_alive(f));
}

/*
 * A run nobody queued before the reload (max_runs = 1: its first run, a
 * sleep, holds the one slot; ps shows the second queued) is answered
 * "unauthorized" at the reload, not started later under a policy that no
 * longer allows it.
 */
static void
test_revoked_user_queued_run(void **state)
{
	struct fixture *f = *state;
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	int fds[2] = {-1, -1}, i;
	bool queued = false;

	nobody_connections(f, fds);
	front_run_init(&run, "sh", "sleep 5");
	assert_int_equal(proto_encode_run(2, &run, &out), 0);
	assert_int_equal(front_send_out(fds[0], &out), 0);
	front_run_init(&run, "sh", "echo ran");
	assert_int_equal(proto_encode_run(3, &run, &out), 0);
	assert_int_equal(front_send_out(fds[0], &out), 0);
	for (i = 0; i < 500 && !queued; i++) {
		size_t k;

		call_simple(fds[0], 10 + (uint32_t)i, PROTO_PS, &m);
		assert_int_equal(m.type, PROTO_PS_OK);
		for (k = 0; k < m.u.ps.nruns; k++)
			if (strcmp(m.u.ps.runs[k].state, "queued") == 0)
				queued = true;
		proto_msg_free(&m);
		if (!queued)
			front_sleep_ms(10);
	}
	assert_true(queued);
	revoke_nobody(f, CONFIG_REVOKED_ONE);
	/* Within 2 s: before, it ran once the sleep was over (5 s). */
	assert_int_equal(front_recv_reply(fds[0], 3, 2000, &m), 0);
	expect_unauthorized(f, &m, "the queued run");
	close(fds[0]);
	close(fds[1]);
	assert_true(fixture_alive(f));
}

/*
 * The python process of a run with the tool search, of uid range [base,
 * base + 4096) (the test's own range: no other test's sandboxes are in
 * it), or -1.
 */
static pid_t
sandbox_python(uid_t base)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;

	assert_non_null(dir);
	while (found < 0 && (e = readdir(dir)) != NULL) {
		char path[64], buf[4096], *p;
		unsigned long uid;
		FILE *fp;
		size_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		fp = fopen(path, "re");
		if (fp == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[n] = '\0';
		p = strstr(buf, "\nUid:\t");
		if (strncmp(buf, "Name:\tpython", 12) != 0 || p == NULL)
			continue;
		uid = strtoul(p + 6, NULL, 10);
		if (uid < base || uid >= base + 4096)
			continue;
		/* Not a pool's pre-started interpreter: the run's, given the
		 * names of its tools. */
		snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
		fp = fopen(path, "re");
		if (fp == NULL)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		if (memmem(buf, n, "AIRLOCK_TOOL_NAMES=search", 25) != NULL)
			found = (pid_t)atoi(e->d_name);
	}
	closedir(dir);
	return found;
}

/* Say hello on fd naming the feature tools (as the test: the connection
 * stays nobody's, its peer credentials are the connect's). */
static void
hello_tools(int fd)
{
	struct proto_hello h = {.version = PROTO_VERSION,
				.peer = "test-access",
				.features = {PROTO_FEATURE_TOOLS},
				.nfeatures = 1};
	struct proto_out out;
	struct proto_msg m;

	assert_int_equal(proto_encode_hello(1, PROTO_HELLO, &h, &out), 0);
	assert_int_equal(front_call(fd, &out, 1, &m), 0);
	assert_int_equal(m.type, PROTO_HELLO_OK);
	proto_msg_free(&m);
}

/* A run's code: one call, then (on SIGUSR1: the reload is done) another. */
static const char code_call_twice[] = "import signal, airlock_tools as t\n"
				      "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
				      "t.search(q='before')\n"
				      "signal.sigwait({signal.SIGUSR1})\n"
				      "try:\n"
				      "    t.search(q='after')\n"
				      "    print('answered')\n"
				      "except t.ToolError as e:\n"
				      "    print(e.code, e.message)\n";

/*
 * Issue 29, step 14: a tool call comes from the sandbox, not the client, so
 * the dispatch's access check never saw it. nobody's run calls a tool (it
 * is answered), a reload removes nobody from [access], and the run's next
 * call is refused by the daemon ("refused", in the result's tool calls
 * too): it never reaches the client. Before, it was relayed.
 */
static void
test_revoked_user_tool_call(void **state)
{
	struct fixture *f = *state;
	struct proto_tool tool = {"search", NULL, NULL};
	struct proto_tool_reply rep = {.ok = true};
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	int fds[2] = {-1, -1}, i;
	pid_t py = -1;

	nobody_connections(f, fds);
	close(fds[0]);
	hello_tools(fds[1]);
	front_run_init(&run, "python", code_call_twice);
	run.tools = &tool;
	run.ntools = 1;
	assert_int_equal(proto_encode_run(2, &run, &out), 0);
	assert_int_equal(front_send_out(fds[1], &out), 0);
	assert_int_equal(front_recv(fds[1], FRONT_REPLY_MS, &m), 0);
	if (m.type != PROTO_TOOL_CALL) {
		print_log_tail(f);
		fail_msg("the first call: got %s", proto_type_name(m.type));
	}
	rep.call = m.u.tool_call.call;
	rep.result = (struct proto_blob){
		.data = (const uint8_t *)"1", .len = 1, .fd = -1, .present = true};
	assert_int_equal(proto_encode_tool_reply(m.id, &rep, &out), 0);
	assert_int_equal(front_send_out(fds[1], &out), 0);
	proto_msg_free(&m);
	/* The reply is taken before the reload: the connection's packets are
	 * read in order, and the pong comes after it. */
	call_simple(fds[1], 4, PROTO_PING, &m);
	assert_int_equal(m.type, PROTO_PONG);
	proto_msg_free(&m);
	revoke_nobody(f, CONFIG_REVOKED);
	/* The code waits for the signal; its sandbox uid is in our range. */
	for (i = 0; i < 500 && (py = sandbox_python(fixture_uid(708192))) < 0; i++)
		front_sleep_ms(10);
	assert_true(py > 0);
	assert_int_equal(kill(py, SIGUSR1), 0);
	assert_int_equal(front_recv(fds[1], FRONT_REPLY_MS, &m), 0);
	if (m.type != PROTO_RESULT) {
		print_log_tail(f);
		fail_msg("after the reload: got %s (a revoked uid's tool call reached its client)",
			 proto_type_name(m.type));
	}
	assert_int_equal(m.u.result.exit_code, 0);
	assert_int_equal(m.u.result.ntool_calls, 2);
	assert_int_equal(m.u.result.tool_calls[0].outcome, PROTO_TOOL_OK);
	assert_int_equal(m.u.result.tool_calls[1].outcome, PROTO_TOOL_REFUSED);
	assert_true(m.u.result.out[0].data.len > 0);
	assert_non_null(memmem(m.u.result.out[0].data.data, m.u.result.out[0].data.len,
			       "refused uid 65534 is no longer allowed",
			       strlen("refused uid 65534 is no longer allowed")));
	proto_msg_free(&m);
	close(fds[1]);
	assert_true(fixture_alive(f));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unlisted_user_refused, setup_deny, teardown),
		cmocka_unit_test_setup_teardown(test_unlisted_user_cli, setup_deny, teardown),
		cmocka_unit_test_setup_teardown(test_listed_user_allowed, setup_allow, teardown),
		cmocka_unit_test_setup_teardown(test_revoked_user_session_ends, setup_allow,
						teardown),
		cmocka_unit_test_setup_teardown(test_profile_gone_session_ends, setup_allow,
						teardown),
		cmocka_unit_test_setup_teardown(test_revoked_user_refused_everything, setup_allow,
						teardown),
		cmocka_unit_test_setup_teardown(test_revoked_user_queued_run, setup_allow_one,
						teardown),
		cmocka_unit_test_setup_teardown(test_revoked_user_tool_call, setup_allow, teardown),
		cmocka_unit_test_setup_teardown(test_per_uid_connection_limit, setup_limit,
						teardown),
		cmocka_unit_test_setup_teardown(test_root_not_limited, setup_limit, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
