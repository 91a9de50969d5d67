/*
 * test_access.c: who may use the daemon. An unprivileged user not listed in
 * [access] is refused with "unauthorized"; a listed one is served; a listed
 * user is held to max_connections_per_uid ("busy"), root is not.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

/* Each group below runs its own daemon, each with its own uid range. */
#define CONFIG_DENY "[daemon]\nsocket_mode = 0666\n[sandbox]\nuid_base = 704096\n"
#define CONFIG_ALLOW                                                                               \
	"[daemon]\nsocket_mode = 0666\n[access]\nallow_users = nobody\n"                           \
	"[sandbox]\nuid_base = 708192\n"
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unlisted_user_refused, setup_deny, teardown),
		cmocka_unit_test_setup_teardown(test_unlisted_user_cli, setup_deny, teardown),
		cmocka_unit_test_setup_teardown(test_listed_user_allowed, setup_allow, teardown),
		cmocka_unit_test_setup_teardown(test_per_uid_connection_limit, setup_limit,
						teardown),
		cmocka_unit_test_setup_teardown(test_root_not_limited, setup_limit, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
