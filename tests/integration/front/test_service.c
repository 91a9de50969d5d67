/*
 * test_service.c: airlockd as a shared service: the bounded queue and busy,
 * round-robin between uids, queued_ms, cancel and ps (own runs only), the
 * audit line, SIGHUP reload, the prepared pool. The stop, sd_notify, socket
 * activation and the systemd units are in test_service_unit.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"
#include "proto.h"

#define CFG(extra) "[sandbox]\nuid_base = 760000\nuid_count = 64\n" extra
#define UID_LO 760000
#define UID_HI (760000 + 63)

static void
send_cancel(int fd, uint32_t id, uint32_t request, uint32_t run)
{
	struct proto_cancel c = {.request = request, .run = run};
	struct proto_out out;

	assert_int_equal(proto_encode_cancel(id, &c, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
}

/* No sandbox of this file's range left, within ms. */
static bool
no_sandbox_left(int ms)
{
	return front_no_procs_left(UID_LO, UID_HI, ms);
}

/*
 * max_runs 2 and a queue of 3: of 7 requests 5 are accepted (2 run, 3
 * wait) and 2 get busy at once; every accepted one gets exactly one result;
 * queued ones report queued_ms, and their wall time does not include it.
 */
static void
test_queue_and_busy(void **state)
{
	struct fixture f;
	int fd, i, results = 0, busy = 0, queued = 0;
	bool seen[8] = {false};

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nmax_runs = 2\nmax_queued = 3\n")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	for (i = 1; i <= 7; i++)
		front_send_sh(fd, (uint32_t)i, "sleep 0.4; echo done");
	while (results + busy < 7) {
		struct proto_msg m;

		assert_int_equal(front_recv(fd, 20000, &m), 0);
		assert_true(m.id >= 1 && m.id <= 7);
		assert_false(seen[m.id]); /* exactly one answer per request */
		seen[m.id] = true;
		if (m.type == PROTO_ERROR) {
			assert_int_equal(m.u.error.code, PROTO_ERR_BUSY);
			assert_non_null(strstr(m.u.error.message, "queue is full"));
			busy++;
		} else {
			assert_int_equal(m.type, PROTO_RESULT);
			assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
			assert_true(m.u.result.wall_ms < 4000);
			if (m.u.result.queued_ms >= 300)
				queued++;
			results++;
		}
		proto_msg_free(&m);
	}
	assert_int_equal(busy, 2);
	assert_int_equal(results, 5);
	assert_true(queued >= 3);
	close(fd);
	assert_true(no_sandbox_left(5000));
	assert_int_equal(fixture_stop(&f), 0);
}

struct rr_out {
	uint64_t done_ms[4];
	int n;
};

static const char *rr_sock;
static uint64_t rr_t0;

/* As nobody: submit 2 runs at t0 + 150 ms, record when each result came. */
static void
rr_nobody(void *arg, void *buf)
{
	struct rr_out *o = buf;
	struct proto_msg m;
	int fd, i;

	(void)arg;
	memset(o, 0, sizeof(*o));
	while (front_now_ms() < rr_t0 + 150)
		front_sleep_ms(5);
	fd = front_raw_connect(rr_sock);
	if (fd < 0 || front_send_hello(fd, 1, PROTO_VERSION) < 0 || front_recv(fd, 5000, &m) < 0)
		return;
	proto_msg_free(&m);
	for (i = 0; i < 2; i++) {
		struct proto_run run;
		struct proto_out out;
		static const char code[] = "sleep 0.3";

		memset(&run, 0, sizeof(run));
		run.runtime = "sh";
		run.code = (struct proto_blob){.data = (const uint8_t *)code,
					       .len = sizeof(code) - 1,
					       .fd = -1,
					       .present = true};
		run.stdin_data.fd = -1;
		if (proto_encode_run((uint32_t)(10 + i), &run, &out) < 0 ||
		    front_send_out(fd, &out) < 0)
			return;
	}
	for (i = 0; i < 2; i++) {
		if (front_recv(fd, 30000, &m) < 0)
			return;
		if (m.type == PROTO_RESULT)
			o->done_ms[o->n++] = front_now_ms();
		proto_msg_free(&m);
	}
	close(fd);
}

/*
 * One slot; root queues 4 runs, then nobody queues 2. Round-robin between
 * uids: nobody's runs do not wait for all of root's; both of them finish
 * before root's last one.
 */
static void
test_round_robin_between_uids(void **state)
{
	struct fixture f;
	struct rr_out o;
	uint64_t root_done[4];
	pid_t child;
	int fd, i, st;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nmax_runs = 1\nsocket_mode = 0666\n"
					       "[access]\nallow_users = nobody\n")),
			 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	rr_sock = f.sock;
	rr_t0 = front_now_ms();
	for (i = 1; i <= 4; i++)
		front_send_sh(fd, (uint32_t)i, "sleep 0.3");
	/* nobody's client runs in a child and reports its finish times. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int r = front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, rr_nobody, NULL, &o,
				      sizeof(o));
		int p = open("/dev/null", O_WRONLY);

		(void)p;
		/* hand the result back through a file in the fixture dir */
		{
			char path[200];
			FILE *fp;

			snprintf(path, sizeof(path), "%s/rr.out", f.dir);
			fp = fopen(path, "we");
			if (fp != NULL) {
				fwrite(&o, sizeof(o), 1, fp);
				fclose(fp);
			}
		}
		_exit(r == 0 ? 0 : 1);
	}
	for (i = 0; i < 4; i++) {
		struct proto_msg m;

		assert_int_equal(front_recv(fd, 30000, &m), 0);
		assert_int_equal(m.type, PROTO_RESULT);
		root_done[i] = front_now_ms();
		proto_msg_free(&m);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	{
		char path[200];
		FILE *fp;

		snprintf(path, sizeof(path), "%s/rr.out", f.dir);
		fp = fopen(path, "re");
		assert_non_null(fp);
		assert_int_equal(fread(&o, sizeof(o), 1, fp), 1);
		fclose(fp);
	}
	assert_int_equal(o.n, 2);
	/* Strict FIFO would finish all four root runs first. */
	assert_true(o.done_ms[0] < root_done[3]);
	assert_true(o.done_ms[1] < root_done[3]);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

/* nobody's view: ps and a cancel of root's run. */
struct nobody_arg {
	const char *sock;
	uint32_t run;
};

struct nobody_out {
	int ps_runs, cancel_code;
};

static void
nobody_fn(void *varg, void *buf)
{
	struct nobody_arg *arg = varg;
	struct nobody_out *o = buf;
	struct proto_cancel c = {.run = arg->run};
	struct proto_out out;
	struct proto_msg m;
	int fd;

	o->ps_runs = -1;
	o->cancel_code = -1;
	fd = front_raw_connect(arg->sock);
	if (fd < 0 || front_send_hello(fd, 1, PROTO_VERSION) < 0 || front_recv(fd, 5000, &m) < 0)
		return;
	proto_msg_free(&m);
	if (proto_encode_simple(2, PROTO_PS, &out) < 0 || front_send_out(fd, &out) < 0 ||
	    front_recv(fd, 5000, &m) < 0)
		return;
	if (m.type == PROTO_PS_OK)
		o->ps_runs = (int)m.u.ps.nruns;
	proto_msg_free(&m);
	if (proto_encode_cancel(3, &c, &out) < 0 || front_send_out(fd, &out) < 0 ||
	    front_recv(fd, 5000, &m) < 0)
		return;
	if (m.type == PROTO_ERROR)
		o->cancel_code = (int)m.u.error.code;
	proto_msg_free(&m);
	close(fd);
}

/*
 * cancel by request id: cancel_ok, then the run's result with outcome
 * cancelled and the output it had made, quickly, and nothing left; cancel
 * by run id (from ps) from another connection of the same uid; a run of
 * root is not_found for nobody, and invisible in nobody's ps.
 */
static void
test_cancel_and_ps(void **state)
{
	struct fixture f;
	struct proto_msg m;
	uint32_t run_id = 0;
	uint64_t t;
	int a, b;
	size_t i;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nsocket_mode = 0666\n"
					       "[access]\nallow_users = nobody\n")),
			 0);
	a = front_hello(f.sock);
	assert_true(a >= 0);
	front_send_sh(a, 5, "echo started; sleep 30");
	/* Wait until it runs (its sleep is there, so its output is too), then
	 * cancel it. */
	assert_true(front_wait_named(UID_LO, UID_HI, "sleep", 20000));
	t = front_now_ms();
	send_cancel(a, 6, 5, 0);
	front_recv_id(a, 6, &m);
	assert_int_equal(m.type, PROTO_CANCEL_OK);
	proto_msg_free(&m);
	front_recv_id(a, 5, &m);
	assert_int_equal(m.type, PROTO_RESULT);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_CANCELLED);
	assert_int_equal(m.u.result.out[0].total, 8);
	assert_memory_equal(m.u.result.out[0].data.data, "started\n", 8);
	proto_msg_free(&m);
	assert_true(front_now_ms() - t < 5000);
	assert_true(no_sandbox_left(5000));
	/* cancelling it again: it is gone */
	send_cancel(a, 7, 5, 0);
	front_recv_id(a, 7, &m);
	assert_int_equal(m.type, PROTO_ERROR);
	assert_int_equal(m.u.error.code, PROTO_ERR_NOT_FOUND);
	proto_msg_free(&m);

	/* ps on another connection finds the run; cancel it by run id there. */
	front_send_sh(a, 8, "sleep 30");
	b = front_hello(f.sock);
	assert_true(b >= 0);
	front_send_ps(b, 2);
	front_recv_id(b, 2, &m);
	assert_int_equal(m.type, PROTO_PS_OK);
	assert_int_equal(m.u.ps.nruns, 1);
	assert_string_equal(m.u.ps.runs[0].runtime, "sh");
	assert_int_equal(m.u.ps.runs[0].uid, 0);
	assert_int_equal(m.u.ps.runs[0].pid, (int32_t)getpid());
	assert_true(strcmp(m.u.ps.runs[0].state, "running") == 0 ||
		    strcmp(m.u.ps.runs[0].state, "queued") == 0);
	run_id = m.u.ps.runs[0].run;
	proto_msg_free(&m);

	/* nobody sees nothing and cannot cancel it. */
	{
		struct nobody_out o;
		struct nobody_arg arg = {f.sock, run_id};

		assert_int_equal(front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, nobody_fn, &arg,
					       &o, sizeof(o)),
				 0);
		assert_int_equal(o.ps_runs, 0);
		assert_int_equal(o.cancel_code, PROTO_ERR_NOT_FOUND);
	}

	send_cancel(b, 3, 0, run_id);
	front_recv_id(b, 3, &m);
	assert_int_equal(m.type, PROTO_CANCEL_OK);
	proto_msg_free(&m);
	front_recv_id(a, 8, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_CANCELLED);
	proto_msg_free(&m);
	/* A cancel names exactly one of request and run. */
	{
		static const uint8_t both[] = {0x84, 0xa4, 't',	 'y', 'p', 'e', 0x0a, 0xa2, 'i',
					       'd',  0x09, 0xa7, 'r', 'e', 'q', 'u',  'e',  's',
					       't',  0x01, 0xa3, 'r', 'u', 'n', 0x01};

		assert_int_equal(send(b, both, sizeof(both), 0), (ssize_t)sizeof(both));
		front_recv_id(b, 9, &m);
		assert_int_equal(m.type, PROTO_ERROR);
		assert_int_equal(m.u.error.code, PROTO_ERR_BAD_REQUEST);
		proto_msg_free(&m);
	}
	for (i = 0; i < 2; i++)
		close(i == 0 ? a : b);
	assert_true(fixture_log_has(&f, "outcome=cancelled"));
	assert_int_equal(fixture_stop(&f), 0);
}

/* The audit line names who, what and what came of it. */
static void
test_audit_line(void **state)
{
	struct fixture f;
	struct proto_msg m;
	char want[128];
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("")), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	front_send_sh(fd, 2, "exit 3");
	front_recv_id(fd, 2, &m);
	proto_msg_free(&m);
	close(fd);
	snprintf(want, sizeof(want),
		 "uid=0 pid=%d runtime=sh profile=default limits=defaults outcome=exited "
		 "exit_code=3",
		 (int)getpid());
	assert_true(fixture_log_has(&f, want));
	assert_true(fixture_log_has(&f, " wall_ms="));
	assert_true(fixture_log_has(&f, " queued_ms="));
	assert_true(
		fixture_log_has(&f, " stdout_bytes=0 stderr_bytes=0 artifacts=0 artifact_bytes=0"));
	assert_int_equal(fixture_stop(&f), 0);
}

/* The default wall_ms as info reports it. */
static uint64_t
info_wall_default(const struct fixture *f)
{
	struct proto_out out;
	struct proto_msg m;
	uint64_t v;
	int fd = front_hello(f->sock);

	assert_true(fd >= 0);
	assert_int_equal(proto_encode_simple(2, PROTO_INFO, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
	front_recv_id(fd, 2, &m);
	assert_int_equal(m.type, PROTO_INFO_OK);
	v = m.u.info.defaults.v[PROTO_LIMIT_WALL_MS];
	proto_msg_free(&m);
	close(fd);
	return v;
}

/*
 * SIGHUP: new limits apply to new requests; a run in flight keeps its own;
 * a bad file is refused with file:line and the old config stays.
 */
static void
test_reload(void **state)
{
	struct fixture f;
	struct proto_msg m;
	char want[256];
	int fd, i;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[limits]\nwall_ms = 5000\n")), 0);
	assert_int_equal(info_wall_default(&f), 5000);
	/* a run in flight under the old default (5 s) */
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	front_send_sh(fd, 2, "sleep 2; echo survived");
	/* Admitted under the old default: its sandbox is there (no pool here). */
	for (i = 0; i < 1000 && fixture_count_uid_procs(UID_LO, UID_HI) < 2; i++)
		front_sleep_ms(10);
	assert_true(fixture_count_uid_procs(UID_LO, UID_HI) >= 2);
	assert_int_equal(fixture_write_config(&f, CFG("[limits]\nwall_ms = 1000\n")), 0);
	assert_int_equal(kill(f.pid, SIGHUP), 0);
	for (i = 0; i < 200 && info_wall_default(&f) != 1000; i++)
		front_sleep_ms(10);
	assert_int_equal(info_wall_default(&f), 1000);
	front_recv_id(fd, 2, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	proto_msg_free(&m);
	/* a new run gets the new default */
	front_send_sh(fd, 3, "sleep 5");
	front_recv_id(fd, 3, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_WALL_LIMIT);
	proto_msg_free(&m);
	close(fd);
	/* a bad file: refused, named by line; the old one stays */
	assert_int_equal(fixture_write_config(&f, CFG("[limits]\nwall_ms = 2000\nnonsense = 1\n")),
			 0);
	assert_int_equal(kill(f.pid, SIGHUP), 0);
	snprintf(want, sizeof(want), "%s:6: unknown key 'nonsense'", f.config);
	for (i = 0; i < 200 && !fixture_log_has(&f, want); i++)
		front_sleep_ms(10);
	assert_true(fixture_log_has(&f, want));
	assert_int_equal(info_wall_default(&f), 1000);
	/* a file writable by others is refused too */
	assert_int_equal(fixture_write_config(&f, CFG("[limits]\nwall_ms = 3000\n")), 0);
	chmod(f.config, 0666);
	assert_int_equal(kill(f.pid, SIGHUP), 0);
	for (i = 0; i < 1000 && !fixture_log_has(&f, "writable by group or others"); i++)
		front_sleep_ms(10);
	assert_true(fixture_log_has(&f, "writable by group or others"));
	assert_int_equal(info_wall_default(&f), 1000);
	assert_int_equal(fixture_stop(&f), 0);
}

/* As nobody: connect; buf gets the result (0 or -errno). */
static void
as_nobody_connect(void *arg, void *buf)
{
	const struct fixture *f = arg;
	struct airlock_conn *c = NULL;
	char code[64], msg[256];
	int r = airlock_connect_error(f->sock, &c, code, sizeof(code), msg, sizeof(msg));

	if (r == 0)
		r = airlock_ping(c);
	airlock_conn_free(c);
	memcpy(buf, &r, sizeof(r));
}

static int
nobody_connect(const struct fixture *f)
{
	int r = 1;

	assert_int_equal(front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, as_nobody_connect,
				       (void *)f, &r, sizeof(r)),
			 0);
	return r;
}

/*
 * Reload with the config 0600 root, as an administrator keeps a file that
 * says who may run code (issue 13, finding 7): the revocation of a user
 * applies (failed before: the unprivileged frontend could not open the file,
 * refused the reload, and the revoked user went on running code); a bad file
 * is still refused with file:line; SIGHUP to the frontend works the same.
 */
static void
test_reload_root_only(void **state)
{
	struct fixture f;
	char want[256];
	pid_t fe;
	int i;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nsocket_mode = 0666\n"
					       "[access]\nallow_users = nobody\n"
					       "[limits]\nwall_ms = 5000\n")),
			 0);
	assert_int_equal(chmod(f.config, 0600), 0);
	assert_int_equal(nobody_connect(&f), 0);
	/* nobody is revoked, and the default changes */
	assert_int_equal(
		fixture_write_config(
			&f, CFG("[daemon]\nsocket_mode = 0666\n[limits]\nwall_ms = 1000\n")),
		0);
	assert_int_equal(chmod(f.config, 0600), 0);
	assert_int_equal(kill(f.pid, SIGHUP), 0);
	for (i = 0; i < 200 && info_wall_default(&f) != 1000; i++)
		front_sleep_ms(10);
	assert_int_equal(info_wall_default(&f), 1000);
	assert_int_equal(nobody_connect(&f), -EACCES);
	/* a bad 0600 file: refused, named by line; the old config stays */
	assert_int_equal(fixture_write_config(&f, CFG("[limits]\nwall_ms = 2000\nnonsense = 1\n")),
			 0);
	assert_int_equal(chmod(f.config, 0600), 0);
	assert_int_equal(kill(f.pid, SIGHUP), 0);
	snprintf(want, sizeof(want), "%s:6: unknown key 'nonsense'", f.config);
	for (i = 0; i < 200 && !fixture_log_has(&f, want); i++)
		front_sleep_ms(10);
	assert_true(fixture_log_has(&f, want));
	assert_int_equal(info_wall_default(&f), 1000);
	/* SIGHUP to the frontend reads the file through the spawner too */
	assert_int_equal(fixture_write_config(&f, CFG("[limits]\nwall_ms = 3000\n")), 0);
	assert_int_equal(chmod(f.config, 0600), 0);
	fe = front_first_child(f.pid);
	assert_true(fe > 0);
	assert_int_equal(kill(fe, SIGHUP), 0);
	for (i = 0; i < 200 && info_wall_default(&f) != 3000; i++)
		front_sleep_ms(10);
	assert_int_equal(info_wall_default(&f), 3000);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * Sandboxes prepared ahead: the pool holds its size, each prepared sandbox
 * serves exactly one run (the pool is refilled with new ones), runs through
 * it are right, and nothing is left after the stop.
 */
static void
test_prepared_pool(void **state)
{
	struct fixture f;
	struct proto_msg m;
	int fd, i, k;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nprepared_sandboxes = 3\n")), 0);
	for (i = 0; i < 300 && fixture_count_uid_procs(UID_LO, UID_HI) != 3; i++)
		front_sleep_ms(10);
	assert_int_equal(fixture_count_uid_procs(UID_LO, UID_HI), 3);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	for (k = 0; k < 6; k++) {
		char want[32];

		front_send_sh(fd, (uint32_t)(10 + k),
			      "echo $(hostname) $(id -u); ls /workspace | wc -l");
		front_recv_id(fd, (uint32_t)(10 + k), &m);
		assert_int_equal(m.type, PROTO_RESULT);
		assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
		snprintf(want, sizeof(want), "airlock 1000\n0\n");
		assert_int_equal(m.u.result.out[0].data.len, strlen(want));
		assert_memory_equal(m.u.result.out[0].data.data, want, strlen(want));
		proto_msg_free(&m);
	}
	/* refilled to its size: the used ones are gone, new ones wait */
	for (i = 0; i < 300 && fixture_count_uid_procs(UID_LO, UID_HI) != 3; i++)
		front_sleep_ms(10);
	assert_int_equal(fixture_count_uid_procs(UID_LO, UID_HI), 3);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
	assert_true(no_sandbox_left(3000));
}

/*
 * A child of ours, as the frontend's user (nobody): lowers the frontend fe's
 * soft RLIMIT_NOFILE to limit (as its own uid: this root has no
 * CAP_SYS_RESOURCE), then holds n fds in flight on a socket pair it never
 * reads. The kernel counts a user's fds in flight and refuses a process of
 * that user any fd pass (ETOOMANYREFS) while the count is over that
 * process's RLIMIT_NOFILE: fe's passes fail, nobody else's (the limits of
 * other daemons' frontends are far higher). When *ret_ctl is closed it lets
 * go, puts fe's limit back and exits 0. Returns its pid.
 */
static pid_t
inflight_hold(pid_t fe, rlim_t limit, int n, int *ret_ctl)
{
	int ready[2], ctl[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ctl, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct passwd *pw = getpwnam("nobody");
		struct rlimit old, low;
		int sp[2], fds[200], i, k, devnull;

		close(ready[0]);
		close(ctl[1]);
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (pw == NULL || devnull < 0 ||
		    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0 ||
		    setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
			_exit(1);
		if (prlimit(fe, RLIMIT_NOFILE, NULL, &old) < 0)
			_exit(2);
		low = old;
		low.rlim_cur = limit;
		if (prlimit(fe, RLIMIT_NOFILE, &low, NULL) < 0)
			_exit(3);
		for (i = 0; i < 200; i++)
			fds[i] = devnull;
		for (k = 0; k < n; k += 200) {
			union {
				char buf[CMSG_SPACE(sizeof(fds))];
				struct cmsghdr align;
			} u;
			int cnt = n - k < 200 ? n - k : 200;
			struct iovec iov = {.iov_base = "x", .iov_len = 1};
			struct msghdr mh = {.msg_iov = &iov,
					    .msg_iovlen = 1,
					    .msg_control = u.buf,
					    .msg_controllen =
						    CMSG_SPACE(sizeof(int) * (size_t)cnt)};
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)cnt);
			memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)cnt);
			if (sendmsg(sp[0], &mh, 0) != 1)
				_exit(4);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(5);
		(void)read(ctl[0], &c, 1); /* until the test closes it */
		close(sp[0]);
		close(sp[1]);
		if (prlimit(fe, RLIMIT_NOFILE, &old, NULL) < 0)
			_exit(6);
		_exit(0);
	}
	close(ready[1]);
	close(ctl[0]);
	if (read(ready[0], &c, 1) != 1) {
		int st;

		assert_int_equal(waitpid(pid, &st, 0), pid);
		fail_msg("the in-flight holder failed: status %#x", (unsigned)st);
	}
	close(ready[0]);
	*ret_ctl = ctl[1];
	return pid;
}

/*
 * Issue 28, point 8: a pool refill whose fd pass to the spawner fails is one
 * failed request, not a stopped service (it was fatalx()). With every fd
 * pass of the frontend refused (its user's fds in flight over its lowered
 * RLIMIT_NOFILE), a run that takes a prepared sandbox fails alone, its
 * refill fails and backs off (the log stays small), the daemon answers a
 * ping; when the passes work again, runs work again by themselves.
 */
static void
test_pool_fd_pass_fails(void **state)
{
	struct fixture f;
	struct proto_msg m;
	struct stat st;
	off_t before;
	int fd, i, n, ctl, status;
	pid_t fe, holder;
	bool ok = false;

	(void)state;
	assert_int_equal(fixture_start(&f, CFG("[daemon]\nprepared_sandboxes = 2\n")), 0);
	for (i = 0; i < 300 && fixture_count_uid_procs(UID_LO, UID_HI) != 2; i++)
		front_sleep_ms(10);
	assert_int_equal(fixture_count_uid_procs(UID_LO, UID_HI), 2);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	fe = front_first_child(f.pid);
	assert_true(fe > 0);
	n = front_count_fds(fe);
	assert_true(n > 0);
	/* Room for the fds it opens (a run's pipes), none for a pass. */
	holder = inflight_hold(fe, (rlim_t)n + 48, n + 48 + 64, &ctl);
	assert_int_equal(stat(f.log, &st), 0);
	before = st.st_size;

	/* The run takes a prepared sandbox; its start cannot be passed. */
	front_send_sh(fd, 10, "echo hi");
	if (front_recv_reply(fd, 10, 10000, &m) < 0) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "tail -c 8192 %s >&2", f.log);
		(void)system(cmd);
		fail_msg("no answer to the run: the daemon is %s",
			 fixture_alive(&f) ? "alive" : "gone");
	}
	assert_int_equal(m.type, PROTO_RESULT);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_ERROR);
	proto_msg_free(&m);
	/* Its refill failed: logged, backed off, the service still answers. */
	for (i = 0; i < 500 && !fixture_log_has(&f, "pool: cannot hand request"); i++)
		front_sleep_ms(10);
	front_sleep_ms(500); /* room for a spin to show in the log */
	if (!fixture_alive(&f) || front_send_ping(fd, 11) < 0 ||
	    front_recv_reply(fd, 11, 5000, &m) < 0) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "tail -c 8192 %s >&2", f.log);
		(void)system(cmd);
		fail_msg("no answer to a ping after the refill failed");
	}
	assert_int_equal(m.type, PROTO_PONG);
	proto_msg_free(&m);
	assert_true(fixture_log_has(&f, "pool: cannot hand request"));
	assert_int_equal(stat(f.log, &st), 0);
	if (st.st_size - before > 64 * 1024)
		fail_msg("the log grew by %lld bytes", (long long)(st.st_size - before));

	/* Passes work again: runs work again, the pool refills. */
	close(ctl);
	assert_int_equal(waitpid(holder, &status, 0), holder);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 0; i < 30 && !ok; i++) {
		front_send_sh(fd, (uint32_t)(20 + i), "echo hi");
		assert_int_equal(front_recv_reply(fd, (uint32_t)(20 + i), 10000, &m), 0);
		ok = m.type == PROTO_RESULT && m.u.result.outcome == PROTO_OUTCOME_EXITED;
		proto_msg_free(&m);
		if (!ok)
			front_sleep_ms(100);
	}
	assert_true(ok);
	for (i = 0; i < 1500 && fixture_count_uid_procs(UID_LO, UID_HI) != 2; i++)
		front_sleep_ms(10);
	assert_int_equal(fixture_count_uid_procs(UID_LO, UID_HI), 2);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
	assert_true(no_sandbox_left(3000));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_and_busy),
		cmocka_unit_test(test_round_robin_between_uids),
		cmocka_unit_test(test_cancel_and_ps),
		cmocka_unit_test(test_audit_line),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_reload_root_only),
		cmocka_unit_test(test_prepared_pool),
		cmocka_unit_test(test_pool_fd_pass_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
