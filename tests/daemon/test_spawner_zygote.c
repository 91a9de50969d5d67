/*
 * test_spawner_zygote.c: unit tests of the spawner's zygote requests
 * (daemon/spawner/spawner_zygote_cmd.c, docs/design-bursts.md §3.3):
 * SPAWN_ZYGOTE_START's refusals, SPAWN_PREPARE with SPAWN_F_ZYGOTE's, and
 * as root a zygote started, its slot held, its end reported, killed with
 * the frontend's end; the namespaces a zygote-owned supervisor sends, as
 * the spawner takes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/nsfs.h>

#include "fdpass.h"
#include "memfd.h"
#include "sandbox_zygote.h"
#include "spawn_msg.h"
#include "spawner.h"
#include "spawner_fixture.h"

/* A spec memfd of len bytes, sealed or not. */
static int
spec_fd(const char *bytes, size_t len, bool sealed)
{
	int fd = -1;

	if (sealed) {
		assert_int_equal(memfd_sealed_create("spec", bytes, len, &fd), 0);
		return fd;
	}
	assert_int_equal(memfd_new("spec", &fd), 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	return fd;
}

/* Queue SPAWN_ZYGOTE_START for slot under run_id with its spec fd (closed). */
static void
send_zygote(int sock, uint32_t slot, uint32_t run_id, uint32_t flags, int fd)
{
	struct spawn_req r = req_of(SPAWN_ZYGOTE_START, flags);

	r.uid_slot = slot;
	r.run_id = run_id;
	assert_int_equal(fdpass_send(sock, &r, sizeof(r), &fd, 1), 0);
	close(fd);
}

/* Queue SPAWN_PREPARE of slot for the zygote of zslot, under run_id,
 * its root spec one byte (no rootspec: it fails there if it gets there). */
static void
send_prepare_zygote(int sock, uint32_t slot, uint32_t run_id, uint32_t zslot)
{
	struct spawn_req r = req_of(SPAWN_PREPARE, SPAWN_F_ZYGOTE);
	int fd = spec_fd("x", 1, true);

	r.uid_slot = slot;
	r.run_id = run_id;
	r.prep_key = zslot;
	assert_int_equal(fdpass_send(sock, &r, sizeof(r), &fd, 1), 0);
	close(fd);
}

/* The next event on sock within 10 s (the spawner answers as it reads). */
static void
next_ev(int sock, struct spawn_ev *ev)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int fds[2];
	size_t n = 0;

	memset(ev, 0, sizeof(*ev));
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(fdpass_recv(sock, ev, sizeof(*ev), fds, 2, &n), (ssize_t)sizeof(*ev));
	fdpass_close_all(fds, n);
}

/* The next event is SPAWN_FAILED of run_id at step with err. */
static void
expect_failed(int sock, uint32_t run_id, const char *step, int err)
{
	struct spawn_ev ev;

	next_ev(sock, &ev);
	assert_int_equal(ev.type, SPAWN_FAILED);
	assert_int_equal(ev.run_id, run_id);
	assert_string_equal(ev.step, step);
	assert_int_equal(ev.err, err);
	assert_int_equal(ev.pid, 0);
}

static const char good_spec[] = "/usr/bin/python3\0AIRLOCK_T=1\0PATH=/usr/bin";
static const char other_python[] = "/bin/sh\0PATH=/usr/bin";

/*
 * zygote.py taken only as a regular file root owns and no one else may
 * write, not through a symlink: one others may write, a symlink to a
 * root file, a directory (each "script", -EPERM).
 */
static void
script_refusals(void)
{
	char dir[] = "/tmp/airlock-zygote-XXXXXX", path[3][128];
	int sv[2], fd;
	uint32_t i;

	assert_non_null(mkdtemp(dir));
	snprintf(path[0], sizeof(path[0]), "%s/writable.py", dir);
	snprintf(path[1], sizeof(path[1]), "%s/link.py", dir);
	snprintf(path[2], sizeof(path[2]), "%s", dir);
	fd = open(path[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path[0], 0666), 0);
	assert_int_equal(symlink("/usr/bin/python3", path[1]), 0);
	for (i = 0; i < 3; i++) {
		fix_script = path[i];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
		send_zygote(sv[0], 0, 94 + i, 0, spec_fd(good_spec, sizeof(good_spec), true));
		assert_int_equal(serve_with(sv[0], sv[1], 2, 0), 0);
		expect_failed(sv[0], 94 + i, "script", -EPERM);
		close(sv[0]);
		close(sv[1]);
	}
	assert_int_equal(unlink(path[0]), 0);
	assert_int_equal(unlink(path[1]), 0);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * SPAWN_ZYGOTE_START's refusals, each answered SPAWN_FAILED under its
 * run_id before anything is started: a slot not ours; no zygote.py of the
 * spawner's own (what airlockd has today); then every bad spec; the
 * subprocess = no program asked for and empty; zygote.py missing.
 */
static void
test_zygote_refusals(void **state)
{
#define LOADER(env) "/usr/bin/python3\0" env, sizeof("/usr/bin/python3\0" env), true, -EPERM
	static const struct {
		const char *bytes;
		size_t len;
		bool sealed;
		int err;
	} specs[] = {
		{good_spec, sizeof(good_spec), false, -EPERM},	  /* not sealed */
		{"/usr/bin/python3", 16, true, -EINVAL},	  /* no NUL at the end */
		{"python3", 8, true, -EINVAL},			  /* a relative python */
		{"/\0", 2, true, -EINVAL},			  /* no file */
		{"/usr/bin/python3\0FOO", 21, true, -EINVAL},	  /* no '=' */
		{"/usr/bin/python3\0=x", 20, true, -EINVAL},	  /* no name */
		{"/usr/bin/python3\0A=1\0\0", 23, true, -EINVAL}, /* an empty entry */
		{"", 0, true, -EINVAL},				  /* nothing */
		/* what would load code into the zygote, outside any sandbox */
		{LOADER("LD_PRELOAD=/tmp/x.so")},
		{LOADER("PATH=/usr/bin\0LD_LIBRARY_PATH=/tmp")},
		{LOADER("LD_AUDIT=/tmp/x.so")},
		{LOADER("GCONV_PATH=/tmp")},
		{LOADER("GLIBC_TUNABLES=glibc.malloc.check=3")},
		{LOADER("NLSPATH=/tmp/%N")},
	};
	static char many[16 + 1 + 4 * (SPAWN_ZYGOTE_ENV_MAX + 1)];
	static char big[SPAWN_ZYGOTE_SPEC_MAX + 1];
	size_t i;
	int sv[2];

	(void)state;
	/* airlockd's spawner today: no zygote.py, so nothing starts. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	send_zygote(sv[0], 2, 40, 0, spec_fd(good_spec, sizeof(good_spec), true));
	send_zygote(sv[0], 0, 41, 0, spec_fd(good_spec, sizeof(good_spec), true));
	/* A sandbox for a zygote that is not there (slot 1), or not a slot. */
	send_prepare_zygote(sv[0], 0, 42, 1);
	send_prepare_zygote(sv[0], 0, 43, 2);
	assert_int_equal(serve_with(sv[0], sv[1], 2, 0), 0);
	expect_failed(sv[0], 40, "uid_slot", -EINVAL);
	expect_failed(sv[0], 41, "zygote", -EOPNOTSUPP);
	expect_failed(sv[0], 42, "zygote", -ESRCH);
	expect_failed(sv[0], 43, "zygote", -ESRCH);
	close(sv[0]);
	close(sv[1]);

	fix_script = "/nonexistent/airlock-test/zygote.py";
	fix_ext = "/nonexistent/airlock-test/ext.so";
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		send_zygote(sv[0], 0, 50 + (uint32_t)i, 0,
			    spec_fd(specs[i].bytes, specs[i].len, specs[i].sealed));
	/* 257 entries; one byte over the bound */
	memcpy(many, "/usr/bin/python3", 17);
	for (i = 0; i <= SPAWN_ZYGOTE_ENV_MAX; i++)
		memcpy(many + 17 + 4 * i, "A=1", 4);
	send_zygote(sv[0], 0, 90, 0, spec_fd(many, sizeof(many), true));
	memset(big, 'x', sizeof(big));
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	send_zygote(sv[0], 0, 91, 0, spec_fd(big, sizeof(big), true));
	send_zygote(sv[0], 0, 92, SPAWN_F_NOPROC, spec_fd(good_spec, sizeof(good_spec), true));
	send_zygote(sv[0], 0, 93, 0, spec_fd(good_spec, sizeof(good_spec), true));
	/* A root program the configuration runs no python runtime with. */
	send_zygote(sv[0], 0, 97, 0, spec_fd(other_python, sizeof(other_python), true));
	assert_int_equal(serve_with(sv[0], sv[1], 2, 0), 0);
	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		expect_failed(sv[0], 50 + (uint32_t)i, "spec", specs[i].err);
	expect_failed(sv[0], 90, "spec", -E2BIG);
	expect_failed(sv[0], 91, "spec", -E2BIG);
	expect_failed(sv[0], 92, "bpf", -EINVAL);
	expect_failed(sv[0], 93, "script", -ENOENT);
	expect_failed(sv[0], 97, "python", -EPERM);
	close(sv[0]);
	close(sv[1]);
	script_refusals();
	fix_script = fix_ext = NULL;
#undef LOADER
}

/* fix_owned's stand-in sandbox ends when a byte comes on this pipe. */
static int owned_go = -1;
/* With fix_owned: the stand-in sandbox's control socket (its spawner's end;
 * -1: none), the zygote of slot 0 alive (a stand-in child) with this end of
 * its order socket, and the sandbox owned by none (not prepared for one). */
static int run_ctl = -1, run_zsock = -1;
static bool run_alive, run_unowned;

#define FDS_SEEN 256

/* Which of the first FDS_SEEN fds are open now. */
static void
fds_open(bool open_now[FDS_SEEN])
{
	int fd;

	for (fd = 0; fd < FDS_SEEN; fd++)
		open_now[fd] = fcntl(fd, F_GETFD) >= 0;
}

/* No fd open now that was not in before (what a leak of ours would be). */
static bool
none_new(const bool before[FDS_SEEN])
{
	bool now[FDS_SEEN];
	int fd;

	fds_open(now);
	for (fd = 0; fd < FDS_SEEN; fd++)
		if (now[fd] && !before[fd])
			return false;
	return true;
}

/* A spawner serving sock (its peer closed) in a child of ours, with the zygote's files;
 * it exits 0 when it served to EOF and has no child left. */
static pid_t
serve_child(int peer, int sock)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct spawner_slot slots[2], keepers[2];
		struct spawner_zygote_slot zygotes[2];
		struct spawner sp;
		bool before[FDS_SEEN];
		int r;

		/* Not beyond the test, whatever it asserts; the test's end
		 * is the frontend's. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		close(peer);
		fixture(&sp, sock, 2, slots, keepers, zygotes);
		if (fix_owned) {
			/* Slot 1's sandbox, owned by slot 0's (gone) zygote:
			 * a child of ours the spawner kills at the end. */
			pid_t sb = fork();

			if (sb < 0)
				_exit(4);
			if (sb == 0) {
				char c;

				/* It ends when the test says, or is killed. */
				(void)!read(owned_go, &c, 1);
				_exit(0);
			}
			slots[1] = (struct spawner_slot){
				.pid = sb, .run_id = 80, .ctl = run_ctl, .owner = 1};
			slots[1].cg_base.peak_fd = -1;
			zygotes[0].owned = 1;
			if (run_unowned) {
				slots[1].owner = 0;
				zygotes[0].owned = 0;
			}
			if (run_alive) {
				pid_t z = fork();

				if (z < 0)
					_exit(4);
				if (z == 0) {
					char c;

					(void)!read(owned_go, &c, 1);
					_exit(0);
				}
				zygotes[0].pid = z;
				zygotes[0].sock = run_zsock;
			}
		}
		fds_open(before);
		r = spawner_serve(&sp);
		if (r != 0)
			_exit(2);
		/* Every fd of a request and every copy made closed: none of
		 * ours above what it was given. */
		if (!none_new(before))
			_exit(5);
		_exit(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD ? 0 : 3);
	}
	return pid;
}

/* The uid in /proc/PID/status's "Uid:" line (its real one). */
static long
proc_uid(pid_t pid)
{
	char path[64], buf[4096], *u;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	u = strstr(buf, "\nUid:\t");
	assert_non_null(u);
	return strtol(u + 6, NULL, 10);
}

/*
 * The stop of the zygote of slot started under key, pid zpid (SPAWN_DISCARD
 * with SPAWN_F_ZYGOTE): a stale key (the slot's earlier zygote's) and
 * another slot do nothing; its own key kills it, and its reap is the answer.
 */
static void
stop_zygote(int sock, uint32_t slot, uint32_t key, uint32_t stale, pid_t zpid)
{
	struct spawn_req r = req_of(SPAWN_DISCARD, SPAWN_F_ZYGOTE);
	struct spawn_ev ev;

	r.uid_slot = slot;
	r.run_id = stale;
	assert_int_equal(fdpass_send(sock, &r, sizeof(r), NULL, 0), 0);
	r.run_id = key;
	r.uid_slot = slot + 1;
	assert_int_equal(fdpass_send(sock, &r, sizeof(r), NULL, 0), 0);
	r.uid_slot = slot;
	assert_int_equal(fdpass_send(sock, &r, sizeof(r), NULL, 0), 0);
	next_ev(sock, &ev);
	assert_int_equal(ev.type, SPAWN_ZYGOTE_GONE);
	assert_int_equal(ev.run_id, key);
	assert_int_equal(ev.pid, zpid);
	assert_true(WIFSIGNALED(ev.status));
	assert_int_equal(WTERMSIG(ev.status), SIGKILL);
}

/*
 * As root: a zygote started by the table, as uid 100000 (slot 0's first)
 * with the spec's environment, the spawner's extension path and fds 3 and
 * 4 (the program: one instruction) in its argv, which the script checks;
 * its slot refused to SPAWN_ZYGOTE_START, SPAWN_PREPARE and SPAWN_KEEPER
 * while it lives; its exit reported as SPAWN_ZYGOTE_GONE with its status.
 * A second one, alive when the frontend goes: the spawner kills and reaps
 * it before it returns (its child exits 0 only with no child left).
 */
static void
test_zygote_start_real(void **state)
{
	char dir[] = "/tmp/airlock-zygote-XXXXXX", script[128], go[128], text[1024];
	struct spawn_req r;
	struct spawn_ev ev;
	pid_t child, zpid;
	int sv[2], fd, st;

	(void)state;
	if (geteuid() != 0 || access("/usr/bin/python3", X_OK) != 0)
		skip();
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(script, sizeof(script), "%s/zygote.py", dir);
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(text, sizeof(text),
		 "import os, sys, time\n"
		 "ok = (os.getuid() == 100000 and os.getgid() == 100000\n"
		 "      and os.environ.get('AIRLOCK_T') == '1' and sys.argv[1:] == ['/x/ext.so', "
		 "'3', '4']\n"
		 "      and len(os.read(4, 4096)) == 8)\n"
		 "end = time.monotonic() + 10\n"
		 "while not os.path.exists('%s') and time.monotonic() < end:\n"
		 "    time.sleep(0.01)\n"
		 "sys.exit(7 if ok else 1)\n",
		 go);
	fd = open(script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	fix_script = script;
	fix_ext = "/x/ext.so";

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	child = serve_child(sv[0], sv[1]);
	send_zygote(sv[0], 0, 70, 0, spec_fd(good_spec, sizeof(good_spec), true));
	next_ev(sv[0], &ev);
	assert_int_equal(ev.type, SPAWN_STARTED);
	assert_int_equal(ev.run_id, 70);
	assert_true(ev.pid > 0);
	zpid = ev.pid;
	assert_int_equal(proc_uid(zpid), 100000);
	/* The slot is the zygote's while it lives. */
	send_zygote(sv[0], 0, 71, 0, spec_fd(good_spec, sizeof(good_spec), true));
	expect_failed(sv[0], 71, "uid_slot", -EINVAL);
	r = req_of(SPAWN_PREPARE, 0);
	r.run_id = 72;
	fd = spec_fd("x", 1, true);
	assert_int_equal(fdpass_send(sv[0], &r, sizeof(r), &fd, 1), 0);
	close(fd);
	expect_failed(sv[0], 72, "uid_slot", -EINVAL);
	r = req_of(SPAWN_KEEPER, 0);
	r.run_id = 73;
	fd = spec_fd("x", 1, true);
	assert_int_equal(fdpass_send(sv[0], &r, sizeof(r), &fd, 1), 0);
	close(fd);
	expect_failed(sv[0], 73, "keeper uid_slot", -EINVAL);
	/* A sandbox of slot 1 for it passes the zygote's check (and fails
	 * at the next, the one-byte root spec). */
	send_prepare_zygote(sv[0], 1, 75, 0);
	next_ev(sv[0], &ev);
	assert_int_equal(ev.type, SPAWN_FAILED);
	assert_int_equal(ev.run_id, 75);
	assert_string_equal(ev.step, "rootspec");
	/* Its end, reported. */
	fd = open(go, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	next_ev(sv[0], &ev);
	assert_int_equal(ev.type, SPAWN_ZYGOTE_GONE);
	assert_int_equal(ev.run_id, 70);
	assert_int_equal(ev.pid, zpid);
	assert_true(WIFEXITED(ev.status));
	assert_int_equal(WEXITSTATUS(ev.status), 7);
	/* The slot is free again; this one waits (no go file) for the end. */
	assert_int_equal(unlink(go), 0);
	send_zygote(sv[0], 0, 74, 0, spec_fd(good_spec, sizeof(good_spec), true));
	next_ev(sv[0], &ev);
	assert_int_equal(ev.type, SPAWN_STARTED);
	assert_int_equal(ev.run_id, 74);
	stop_zygote(sv[0], 0, 74, 70, ev.pid);
	send_zygote(sv[0], 0, 76, 0, spec_fd(good_spec, sizeof(good_spec), true));
	next_ev(sv[0], &ev);
	assert_int_equal(ev.type, SPAWN_STARTED);
	assert_int_equal(ev.run_id, 76);
	close(sv[0]);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(sv[1]);
	fix_script = fix_ext = NULL;
	assert_int_equal(unlink(script), 0);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * As root: a slot whose earlier zygote still owns a live sandbox (slot 1's,
 * owner slot 0) takes no new zygote, which would own that sandbox too
 * (SPAWN_FAILED "owned", -EBUSY), nor a sandbox or keeper of its own,
 * which would run as that owner uid; slot 1 itself is taken. Once that
 * sandbox is reaped, slot 0 takes a zygote again (here it fails further
 * on, at the missing zygote.py). At the frontend's EOF the spawner exits
 * with no child left.
 */
static void
test_zygote_owned_slot(void **state)
{
	struct spawn_req r;
	struct spawn_ev ev;
	pid_t child;
	int sv[2], go[2], st, fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	fix_script = "/nonexistent/airlock-test/zygote.py";
	fix_ext = "/nonexistent/airlock-test/ext.so";
	fix_owned = true;
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	owned_go = go[0];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	child = serve_child(sv[0], sv[1]);
	close(go[0]);
	send_zygote(sv[0], 0, 81, 0, spec_fd(good_spec, sizeof(good_spec), true));
	expect_failed(sv[0], 81, "owned", -EBUSY);
	send_zygote(sv[0], 1, 82, 0, spec_fd(good_spec, sizeof(good_spec), true));
	expect_failed(sv[0], 82, "uid_slot", -EINVAL);
	r = req_of(SPAWN_PREPARE, 0);
	r.run_id = 83;
	fd = spec_fd("x", 1, true);
	assert_int_equal(fdpass_send(sv[0], &r, sizeof(r), &fd, 1), 0);
	close(fd);
	expect_failed(sv[0], 83, "uid_slot", -EINVAL);
	r = req_of(SPAWN_KEEPER, 0);
	r.run_id = 84;
	fd = spec_fd("x", 1, true);
	assert_int_equal(fdpass_send(sv[0], &r, sizeof(r), &fd, 1), 0);
	close(fd);
	expect_failed(sv[0], 84, "keeper uid_slot", -EINVAL);
	/* The owned sandbox ends: its reap frees slot 0 of its old zygote. */
	assert_int_equal(write(go[1], "g", 1), 1);
	next_ev(sv[0], &ev);
	assert_int_equal(ev.type, SPAWN_DONE);
	assert_int_equal(ev.run_id, 80);
	send_zygote(sv[0], 0, 85, 0, spec_fd(good_spec, sizeof(good_spec), true));
	expect_failed(sv[0], 85, "script", -ENOENT);
	close(go[1]);
	close(sv[0]);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(sv[1]);
	fix_owned = false;
	fix_script = fix_ext = NULL;
}

/* Queue SPAWN_REQ of slot 1 (prepared under 80) with flags and four fds:
 * a sealed plan, a lifeline, stdout and stderr (pipes'). */
static void
send_run(int sock, uint32_t flags)
{
	struct spawn_req r = req_of(SPAWN_REQ, flags);
	int fds[4], p[2], q[2], l[2];

	r.uid_slot = 1;
	r.prep_key = 80;
	assert_int_equal(memfd_sealed_create("plan", "p", 1, &fds[0]), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l), 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(q, O_CLOEXEC), 0);
	fds[1] = l[0];
	fds[2] = p[1];
	fds[3] = q[1];
	assert_int_equal(fdpass_send(sock, &r, sizeof(r), fds, 4), 0);
	fdpass_close_all(fds, 4);
	close(l[1]);
	close(p[0]);
	close(q[0]);
}

/* The sb_start on the stand-in supervisor's end sup: its flags and fds. */
static size_t
recv_start(int sup, struct sb_start *st, int fds[6])
{
	struct pollfd p = {.fd = sup, .events = POLLIN};
	size_t n = 0;

	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(fdpass_recv(sup, st, sizeof(*st), fds, 6, &n), (ssize_t)sizeof(*st));
	assert_int_equal(st->magic, SB_START_MAGIC);
	return n;
}

/* Serve one scenario of slot 1's prepared sandbox (zygote of slot 0 alive
 * or not, the sandbox its or no one's), sup and zygote our ends. */
static pid_t
serve_run(int sv[2], int *sup, int *zyg, int go[2], bool alive, bool unowned)
{
	int s[2], z[2];
	pid_t child;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, z), 0);
	assert_int_equal(fcntl(z[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	fix_owned = true;
	owned_go = go[0];
	run_ctl = s[0];
	run_zsock = z[0];
	run_alive = alive;
	run_unowned = unowned;
	child = serve_child(sv[0], sv[1]);
	close(go[0]);
	close(s[0]);
	close(z[0]);
	*sup = s[1];
	*zyg = z[1];
	return child;
}

/* The end of a scenario: the frontend's EOF; the spawner exits 0 (no
 * child, no fd of ours left). */
static void
serve_end(int sv[2], pid_t child, int sup, int zyg, int go[2])
{
	int st;

	close(go[1]);
	close(sv[0]);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	close(sv[1]);
	close(sup);
	close(zyg);
	fix_owned = run_alive = run_unowned = false;
	run_ctl = run_zsock = -1;
}

/* A SPAWN_FAILED "zygote" -ESRCH of run 80 with the sandbox's pid, and the
 * sandbox left prepared: nothing on its control socket, not closed. */
static void
expect_refused_kept(int sock, int sup)
{
	struct pollfd p = {.fd = sup, .events = POLLIN};
	struct spawn_ev ev;

	next_ev(sock, &ev);
	assert_int_equal(ev.type, SPAWN_FAILED);
	assert_int_equal(ev.run_id, 80);
	assert_string_equal(ev.step, "zygote");
	assert_int_equal(ev.err, -ESRCH);
	assert_true(ev.pid > 0);
	assert_int_equal(poll(&p, 1, 0), 0);
}

/*
 * As root: SPAWN_REQ with SPAWN_F_ZYGOTE_RUN (docs/design-bursts.md §3.5).
 * The owning zygote gone, or a sandbox no zygote owns: "zygote", -ESRCH,
 * and the sandbox stays prepared: the same request without the flag then
 * starts it the ordinary way (four fds). The zygote alive: the supervisor
 * gets the four fds and a fifth, a non-blocking copy of the zygote's order
 * socket (what it sends there reaches the zygote); the spawner keeps no
 * fd of the run (its child checks) and answers nothing.
 */
static void
test_zygote_run(void **state)
{
	struct sb_start st;
	int sv[2], go[2], fds[6], sup, zyg, i;
	size_t n;
	pid_t child;
	char c = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	for (i = 0; i < 2; i++) {
		child = serve_run(sv, &sup, &zyg, go, i == 1, i == 1);
		send_run(sv[0], SPAWN_F_ZYGOTE_RUN);
		expect_refused_kept(sv[0], sup);
		send_run(sv[0], 0);
		n = recv_start(sup, &st, fds);
		assert_int_equal(st.flags, 0);
		assert_int_equal(n, SPAWN_REQ_NFDS);
		fdpass_close_all(fds, n);
		serve_end(sv, child, sup, zyg, go);
	}
	child = serve_run(sv, &sup, &zyg, go, true, false);
	send_run(sv[0], SPAWN_F_ZYGOTE_RUN);
	n = recv_start(sup, &st, fds);
	assert_int_equal(st.flags, SPAWN_F_ZYGOTE_RUN);
	assert_int_equal(n, SB_START_NFDS_ZYGOTE);
	assert_true((fcntl(fds[4], F_GETFL) & O_NONBLOCK) != 0);
	assert_int_equal(send(fds[4], "o", 1, MSG_DONTWAIT), 1);
	assert_int_equal(recv(zyg, &c, 1, MSG_DONTWAIT), 1);
	assert_int_equal(c, 'o');
	fdpass_close_all(fds, n);
	serve_end(sv, child, sup, zyg, go);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zygote_refusals),
		cmocka_unit_test(test_zygote_start_real),
		cmocka_unit_test(test_zygote_owned_slot),
		cmocka_unit_test(test_zygote_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
