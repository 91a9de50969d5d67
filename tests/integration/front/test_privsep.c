/*
 * test_privsep.c: the daemon's two processes. The frontend runs as the
 * service user with no capabilities, no_new_privs and seccomp; the spawner
 * keeps CAP_SETUID and CAP_SETGID only. If either dies, the other exits and
 * no sandbox process is left.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

#define UID_BASE 740000
#define CONFIG "[sandbox]\nuid_base = 740000\nuid_count = 64\n"

/* Read a "Key:\tvalue" line of /proc/PID/status into buf. */
static int
status_field(pid_t pid, const char *key, char *buf, size_t len)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	FILE *f;
	int r = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(buf, len, "%s", v);
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

/* Submit `sleep 100` (two processes) and wait until they exist. */
static struct airlock_conn *
start_sleeper(struct fixture *f)
{
	static const char code[] = "sleep 100 & sleep 100";
	struct airlock_conn *conn = NULL;
	struct airlock_run_req *req = NULL;
	uint32_t id;
	int i;

	assert_int_equal(airlock_connect(f->sock, &conn), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "sh"), 0);
	assert_int_equal(airlock_run_req_set_code(req, code, sizeof(code) - 1), 0);
	assert_int_equal(airlock_run_submit(conn, req, &id), 0);
	airlock_run_req_free(req);
	for (i = 0; i < 500 && fixture_count_uid_procs(UID_BASE, UID_BASE + 63) < 3; i++)
		front_sleep_ms(10);
	/* supervisor + two sleeps */
	assert_true(fixture_count_uid_procs(UID_BASE, UID_BASE + 63) >= 3);
	return conn;
}

/* Wait for pid (not our child) to disappear. */
static bool
gone(pid_t pid, int ms)
{
	int i;

	for (i = 0; i < ms / 10; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
		if (access(path, F_OK) < 0)
			return true;
		/* A zombie still has a /proc entry: check its state. */
		{
			char st[32] = "";

			if (status_field(pid, "State", st, sizeof(st)) == 0 && st[0] == 'Z')
				return true;
		}
		front_sleep_ms(10);
	}
	return false;
}

static bool
no_sandbox_left(int ms)
{
	int i;

	for (i = 0; i < ms / 10; i++) {
		if (fixture_count_uid_procs(UID_BASE, UID_BASE + 63) == 0)
			return true;
		front_sleep_ms(10);
	}
	return false;
}

/* The frontend's and the spawner's credentials, read from /proc. */
static void
test_credentials(void **state)
{
	struct fixture f;
	char v[128];
	pid_t fe;
	int i;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fe = front_first_child(f.pid);
	assert_true(fe > 0);
	/* frontend: nobody, nothing in any capability set, nnp, seccomp */
	assert_int_equal(status_field(fe, "Uid", v, sizeof(v)), 0);
	assert_string_equal(v, "65534\t65534\t65534\t65534");
	assert_int_equal(status_field(fe, "Groups", v, sizeof(v)), 0);
	assert_true(strcmp(v, "") == 0 || strcmp(v, "65534") == 0);
	assert_int_equal(status_field(fe, "CapEff", v, sizeof(v)), 0);
	assert_string_equal(v, "0000000000000000");
	assert_int_equal(status_field(fe, "CapPrm", v, sizeof(v)), 0);
	assert_string_equal(v, "0000000000000000");
	assert_int_equal(status_field(fe, "CapBnd", v, sizeof(v)), 0);
	assert_string_equal(v, "0000000000000000");
	assert_int_equal(status_field(fe, "NoNewPrivs", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(status_field(fe, "Seccomp", v, sizeof(v)), 0);
	assert_string_equal(v, "2");
	/*
	 * spawner: uid 0 with CAP_SETGID (6) and CAP_SETUID (7) only. The
	 * frontend answers the fixture's ping before the spawner has dropped
	 * (main.c forks it first); the spawner reads no request before its
	 * drop, so the test waits for it (5 s at most) rather than racing it.
	 */
	for (i = 0; i < 500; i++) {
		assert_int_equal(status_field(f.pid, "CapEff", v, sizeof(v)), 0);
		if (strcmp(v, "00000000000000c0") == 0)
			break;
		front_sleep_ms(10);
	}
	assert_string_equal(v, "00000000000000c0");
	assert_int_equal(status_field(f.pid, "CapPrm", v, sizeof(v)), 0);
	assert_string_equal(v, "00000000000000c0");
	assert_int_equal(status_field(f.pid, "CapBnd", v, sizeof(v)), 0);
	assert_string_equal(v, "00000000000000c0");
	assert_int_equal(fixture_stop(&f), 0);
}

/* Kill the frontend: the spawner exits and takes every sandbox with it. */
static void
test_frontend_dies(void **state)
{
	struct airlock_conn *conn;
	struct fixture f;
	pid_t fe, spawner;
	int status;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fe = front_first_child(f.pid);
	assert_true(fe > 0);
	conn = start_sleeper(&f);
	assert_int_equal(kill(fe, SIGKILL), 0);
	spawner = f.pid;
	/* The fixture's child is the spawner: wait for it directly. */
	{
		int i;

		for (i = 0; i < 500 && waitpid(spawner, &status, WNOHANG) == 0; i++)
			front_sleep_ms(10);
		assert_true(i < 500);
	}
	assert_true(WIFEXITED(status));
	f.pid = 0;
	assert_true(no_sandbox_left(5000));
	airlock_conn_free(conn);
	assert_int_equal(fixture_stop(&f), 0);
}

/* Kill the spawner: the frontend and every sandbox go with it. */
static void
test_spawner_dies(void **state)
{
	struct airlock_conn *conn;
	struct fixture f;
	pid_t fe;
	int status;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fe = front_first_child(f.pid);
	assert_true(fe > 0);
	conn = start_sleeper(&f);
	assert_int_equal(kill(f.pid, SIGKILL), 0);
	assert_int_equal(waitpid(f.pid, &status, 0), f.pid);
	f.pid = 0;
	assert_true(gone(fe, 5000));
	assert_true(no_sandbox_left(5000));
	/* The client hears the end instead of hanging. */
	assert_int_equal(airlock_ping(conn) < 0, 1);
	airlock_conn_free(conn);
	assert_int_equal(fixture_stop(&f), 0);
}

/* SIGTERM with a run in flight: a clean stop, nothing left. */
static void
test_sigterm_with_run(void **state)
{
	struct airlock_conn *conn;
	struct fixture f;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	conn = start_sleeper(&f);
	assert_int_equal(fixture_stop(&f), 0);
	assert_true(no_sandbox_left(5000));
	airlock_conn_free(conn);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_frontend_dies),
		cmocka_unit_test(test_spawner_dies),
		cmocka_unit_test(test_sigterm_with_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
