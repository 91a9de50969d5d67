/*
 * test_zygote_run_real.c: a zygote run through a real spawner, as root
 * (docs/design-bursts.md §3.5): spawner_serve() in a child of ours, set up
 * as airlockd's main.c sets it (the sandbox's layout and seccomp programs,
 * no cgroup: rlimits), given zygote.py and the built extension. The test
 * is the frontend: SPAWN_ZYGOTE_START, SPAWN_PREPARE with SPAWN_F_ZYGOTE,
 * SPAWN_REQ with SPAWN_F_ZYGOTE_RUN (a plan made by plan_build), then the
 * run's stdout and its lifeline's SUP_EXIT.
 *
 * 1. The zygote's run: the code printed its uid, gid, pid, parent,
 *    hostname, namespaces (the supervisor's, read in /proc as root here)
 *    and fds; SUP_EXIT has its exit status and SUP_ZYGOTE_RAN.
 * 2. The fall-back: the zygote stopped (SIGSTOP) before the run, so the
 *    code never reports entering; the supervisor runs it the ordinary way
 *    (SUP_ZYGOTE_FELL_BACK, -ETIMEDOUT) with the same result; the zygote
 *    continued afterwards forks a child for the stale order, which must
 *    not run the code a second time (the output is read to its EOF, which
 *    comes only once that child is gone).
 *
 * Skipped (77) without root, AIRLOCK_TEST_UID_BASE or the extension.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdpass.h"
#include "limit.h"
#include "log.h"
#include "memfd.h"
#include "plan.h"
#include "run_boot.h"
#include "rootspec.h"
#include "seccomp_policy.h"
#include "spawn_msg.h"
#include "spawner.h"

#define NSLOTS 4
#define DEADLINE_MS 30000

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#define DIE(what)                                                                                  \
	do {                                                                                       \
		perror(what);                                                                      \
		exit(1);                                                                           \
	} while (0)

static const char code[] =
	"import os, socket\n"
	"print('uid=%d gid=%d pid=%d ppid=%d host=%s' % (os.getuid(), os.getgid(), "
	"os.getpid(), os.getppid(), socket.gethostname()))\n"
	"print('ns=%s' % ','.join(os.readlink('/proc/self/ns/' + n) for n in "
	"('user', 'mnt', 'net', 'pid', 'uts', 'ipc')))\n"
	"print('fds=%s' % sorted(int(f) for f in os.listdir('/proc/self/fd')), flush=True)\n"
	"import sys\n"
	"print('path=%s' % sys.path, flush=True)\n"
	"raise SystemExit(7)\n";

/* A python run's start-up (run_boot.h, as run_plan.c puts it before the
 * code file): the code runs as `python CODE_FILE` would. */
static const char boot_code[] =
	"import sys\n"
	"print('argv=%s name=%s file=%s hook=%s' % (sys.argv, __name__, __file__, "
	"type(sys.meta_path[0]).__name__))\n";

/* The next plan's: with the start-up (-c BOOT), and its code. */
static bool plan_boot;
static const char *plan_code = code;

/* The spawner, as main.c makes it (main_resources, main_zygote_pythons),
 * without a cgroup; it serves sock in a child of ours until its EOF. */
static pid_t
spawner_child(int sock, int peer, uid_t base, const char *script, const char *ext)
{
	static struct spawner_slot slots[NSLOTS], keepers[NSLOTS];
	static struct spawner_zygote_slot zygotes[NSLOTS];
	static struct spawner sp;
	pid_t pid = fork();
	int i;

	if (pid < 0)
		DIE("fork");
	if (pid > 0)
		return pid;
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close(peer);
	memset(&sp, 0, sizeof(sp));
	for (i = 0; i < NSLOTS; i++) {
		slots[i].ctl = keepers[i].ctl = zygotes[i].sock = -1;
		slots[i].cg_base.peak_fd = keepers[i].cg_base.peak_fd = -1;
	}
	sp.sock = sock;
	sp.uid_base = base;
	sp.nslots = NSLOTS;
	sp.slots = slots;
	sp.keepers = keepers;
	sp.zygotes = zygotes;
	sp.frontend = -1;
	sp.config_path = "/nonexistent/airlock-test/airlockd.conf";
	sp.cg.kind = CGROUP_NONE;
	for (i = 0; i < ROOTSPEC_MOUNTS_MAX; i++)
		sp.mount_warn[i] = (struct log_repeat)LOG_REPEAT_INIT(60000);
	sp.fds_warn = (struct log_repeat)LOG_REPEAT_INIT(60000);
	if (sandbox_layout_init(&sp.layout) < 0 || seccomp_policy_sandbox(&sp.seccomp) < 0 ||
	    seccomp_policy_sandbox_noproc(&sp.seccomp_noproc) < 0)
		_exit(3);
	sp.zygote_script = script;
	sp.zygote_ext = ext;
	sp.zygote_pythons[0] = "/usr/bin/python3";
	sp.nzygote_pythons = 1;
	_exit(spawner_serve(&sp) == 0 ? 0 : 2);
}

static uint64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000U + (uint64_t)t.tv_nsec / 1000000U;
}

/* Wait for sock to be readable, DEADLINE_MS at most; false at the deadline. */
static bool
wait_in(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;

	do
		r = poll(&p, 1, DEADLINE_MS);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* The next event of type under run_id (others, such as a reap's, skipped). */
static void
event(int sock, uint32_t type, uint32_t run_id, struct spawn_ev *ret)
{
	for (;;) {
		int fds[4];
		size_t n = 0;

		memset(ret, 0, sizeof(*ret));
		if (!wait_in(sock) ||
		    fdpass_recv(sock, ret, sizeof(*ret), fds, 4, &n) != (ssize_t)sizeof(*ret)) {
			fprintf(stderr, "no event %u of %u from the spawner\n", type, run_id);
			exit(1);
		}
		fdpass_close_all(fds, n);
		if (ret->type == SPAWN_FAILED)
			fprintf(stderr, "spawner: %u failed at %s: %s\n", ret->run_id, ret->step,
				strerror(-ret->err));
		if (ret->type == type && ret->run_id == run_id)
			return;
		if (ret->type == SPAWN_FAILED && ret->run_id == run_id)
			exit(1);
	}
}

static void
send_req(int sock, const struct spawn_req *r, int *fds, size_t n)
{
	if (fdpass_send(sock, r, sizeof(*r), fds, n) < 0)
		DIE("send to the spawner");
	fdpass_close_all(fds, n);
}

/* A zygote for slot 0, as SPAWN_ZYGOTE_START under run_id 10; its pid. */
static pid_t
start_zygote(int sock)
{
	static const char spec[] = "/usr/bin/python3\0PATH=/usr/bin:/bin\0LANG=C.UTF-8";
	struct spawn_req r = {.type = SPAWN_ZYGOTE_START, .run_id = 10, .uid_slot = 0};
	struct spawn_ev ev;
	int fd;

	if (memfd_sealed_create("spec", spec, sizeof(spec), &fd) < 0)
		DIE("spec");
	send_req(sock, &r, &fd, 1);
	event(sock, SPAWN_STARTED, 10, &ev);
	return ev.pid;
}

/* A sandbox of slot for the zygote of slot 0, under run_id; its supervisor's pid. */
static pid_t
prepare(int sock, uint32_t slot, uint32_t run_id)
{
	struct spawn_req r = {.type = SPAWN_PREPARE,
			      .run_id = run_id,
			      .uid_slot = slot,
			      .flags = SPAWN_F_ZYGOTE,
			      .prep_key = 0};
	struct rootspec rs;
	struct spawn_ev ev;
	int fd;

	memset(&rs, 0, sizeof(rs));
	rs.magic = ROOTSPEC_MAGIC;
	rs.generation = 1;
	if (rootspec_seal(&rs, &fd) < 0)
		DIE("rootspec");
	send_req(sock, &r, &fd, 1);
	event(sock, SPAWN_STARTED, run_id, &ev);
	return ev.pid;
}

/* The run's plan: python on the code file, the default limits. */
static int
plan(void)
{
	static const char *const plain[] = {"/usr/bin/python3", PLAN_CODE_DIR "/main.py", NULL};
	static const char *const boot[] = {"/usr/bin/python3", "-c", run_boot_py,
					   PLAN_CODE_DIR "/main.py", NULL};
	static const char *const envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
	struct proto_limits lim;
	struct plan_input in;
	size_t i;
	int fd;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		lim.v[i] = limit_table[i].def;
	memset(&in, 0, sizeof(in));
	in.argv = plan_boot ? boot : plain;
	in.argc = plan_boot ? 4 : 2;
	in.envp = envp;
	in.envc = 2;
	in.code_name = "main.py";
	in.code = plan_code;
	in.code_len = strlen(plan_code);
	in.hostname = "zygrun";
	in.limits = &lim;
	in.rootspec_gen = 1;
	if (plan_build(&in, &fd) < 0)
		DIE("plan_build");
	return fd;
}

struct run {
	struct sup_msg exit;
	char out[4096];
};

/*
 * SPAWN_REQ with SPAWN_F_ZYGOTE_RUN for slot's sandbox (prepared under
 * key): its SUP_EXIT, then (after between(), if given) its stdout read to
 * EOF.
 */
static void
run(int sock, uint32_t slot, uint32_t key, struct run *ret, void (*between)(void))
{
	struct spawn_req r = {.type = SPAWN_REQ,
			      .run_id = key + 100,
			      .uid_slot = slot,
			      .flags = SPAWN_F_ZYGOTE_RUN,
			      .prep_key = key};
	int fds[4], life[2], out[2], err[2];
	size_t got = 0;
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, life) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		DIE("pipes");
	fds[0] = plan();
	fds[1] = life[1];
	fds[2] = out[1];
	fds[3] = err[1];
	send_req(sock, &r, fds, 4);
	memset(ret, 0, sizeof(*ret));
	do {
		if (!wait_in(life[0]) || recv(life[0], &ret->exit, sizeof(ret->exit), 0) <= 0) {
			fprintf(stderr, "no SUP_EXIT\n");
			exit(1);
		}
	} while (ret->exit.type != SUP_EXIT && ret->exit.type != SUP_SETUP_FAILED);
	if (between != NULL)
		between();
	while (got + 1 < sizeof(ret->out) && wait_in(out[0]) &&
	       (n = read(out[0], ret->out + got, sizeof(ret->out) - 1 - got)) > 0)
		got += (size_t)n;
	close(life[0]);
	close(out[0]);
	close(err[0]);
}

/* "ns=..." as the supervisor's own namespaces read from here, as root. */
static void
ns_of(pid_t sup, char *buf, size_t len)
{
	static const char *const ns[] = {"user", "mnt", "net", "pid", "uts", "ipc"};
	size_t i, k;

	k = (size_t)snprintf(buf, len, "ns=");
	for (i = 0; i < 6; i++) {
		char path[64], link[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)sup, ns[i]);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			DIE("readlink");
		link[n] = '\0';
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "", link);
	}
}

/* Cut buf at its "path=" line; that line (a fresh run's sys.path, or the
 * zygote child's) into path. */
static void
cut_path(char *buf, char *path, size_t len)
{
	char *p = strstr(buf, "path=");

	snprintf(path, len, "%s", p != NULL ? p : "(none)");
	if (p != NULL)
		*p = '\0';
}

static pid_t zygote_pid;

static void
continue_zygote(void)
{
	kill(zygote_pid, SIGCONT);
}

int
main(void)
{
	const char *base = getenv("AIRLOCK_TEST_UID_BASE"), *ext = getenv("ZYGOTE_PY_EXT"),
		   *script = getenv("ZYGOTE_PY");
	char want[512], ns[400], path1[1024], path2[1024];
	struct spawn_ev ev;
	struct run r;
	pid_t child, sup;
	uint64_t t0;
	int sv[2], st;
	uid_t u;

	if (geteuid() != 0 || base == NULL || ext == NULL || script == NULL) {
		fprintf(stderr, "skip: needs root, AIRLOCK_TEST_UID_BASE and the extension\n");
		return 77;
	}
	u = (uid_t)strtoul(base, NULL, 10);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		DIE("socketpair");
	child = spawner_child(sv[1], sv[0], u, script, ext);
	close(sv[1]);
	zygote_pid = start_zygote(sv[0]);

	/* 1. The zygote's run. */
	sup = prepare(sv[0], 1, 21);
	ns_of(sup, ns, sizeof(ns));
	run(sv[0], 1, 21, &r, NULL);
	fprintf(stderr, "zygote run: step %d err %d status %#x\n%s", r.exit.step, r.exit.err,
		r.exit.status, r.out);
	CHECK(r.exit.type == SUP_EXIT && r.exit.step == SUP_ZYGOTE_RAN && r.exit.err == 0,
	      "not run by the zygote: type %u step %d err %d", r.exit.type, r.exit.step,
	      r.exit.err);
	CHECK(WIFEXITED(r.exit.status) && WEXITSTATUS(r.exit.status) == 7, "status %#x",
	      r.exit.status);
	cut_path(r.out, path1, sizeof(path1));
	snprintf(want, sizeof(want),
		 "uid=1000 gid=1000 pid=3 ppid=1 host=zygrun\n%s\nfds=[0, 1, 2, 3]\n", ns);
	CHECK(strcmp(r.out, want) == 0, "the code printed\n%swanted\n%s", r.out, want);
	CHECK(kill(zygote_pid, 0) == 0, "the zygote did not outlive its run");

	/* 2. The zygote stopped before the order: the ordinary way, once. */
	sup = prepare(sv[0], 2, 22);
	ns_of(sup, ns, sizeof(ns));
	if (kill(zygote_pid, SIGSTOP) < 0)
		DIE("SIGSTOP");
	t0 = now_ms();
	run(sv[0], 2, 22, &r, continue_zygote);
	fprintf(stderr, "fall-back run (%llu ms): step %d err %d status %#x\n%s",
		(unsigned long long)(now_ms() - t0), r.exit.step, r.exit.err, r.exit.status, r.out);
	CHECK(r.exit.type == SUP_EXIT && r.exit.step == SUP_ZYGOTE_FELL_BACK &&
		      r.exit.err == -ETIMEDOUT,
	      "no fall-back: type %u step %d err %d", r.exit.type, r.exit.step, r.exit.err);
	CHECK(WIFEXITED(r.exit.status) && WEXITSTATUS(r.exit.status) == 7, "status %#x",
	      r.exit.status);
	cut_path(r.out, path2, sizeof(path2));
	/* The zygote's child (python -S) sets up site as a fresh run does. */
	CHECK(strcmp(path1, path2) == 0, "sys.path: the zygote's run %s, a fresh run's %s", path1,
	      path2);
	snprintf(want, sizeof(want),
		 "uid=1000 gid=1000 pid=2 ppid=1 host=zygrun\n%s\nfds=[0, 1, 2, 3]\n", ns);
	CHECK(strcmp(r.out, want) == 0, "the code printed (once)\n%swanted\n%s", r.out, want);

	/* 3. A python run with its start-up (BOOT), run by a zygote again. */
	plan_boot = true;
	plan_code = boot_code;
	(void)prepare(sv[0], 3, 23);
	run(sv[0], 3, 23, &r, NULL);
	fprintf(stderr, "start-up run: step %d err %d status %#x\n%s", r.exit.step, r.exit.err,
		r.exit.status, r.out);
	CHECK(r.exit.type == SUP_EXIT && r.exit.step == SUP_ZYGOTE_RAN && r.exit.status == 0,
	      "the start-up run: type %u step %d status %#x", r.exit.type, r.exit.step,
	      r.exit.status);
	CHECK(strcmp(r.out, "argv=['/run/airlock/main.py'] name=__main__ "
			    "file=/run/airlock/main.py hook=_PyplotFinder\n") == 0,
	      "the start-up run printed %s", r.out);

	/* The frontend goes: the spawner kills and reaps the zygote and
	 * every sandbox, and exits 0. */
	if (shutdown(sv[0], SHUT_WR) < 0)
		DIE("shutdown");
	while (wait_in(sv[0]) && recv(sv[0], &ev, sizeof(ev), 0) > 0)
		;
	close(sv[0]);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the spawner ended %#x", st);
	if (failures != 0)
		fprintf(stderr, "%d failed\n", failures);
	return failures != 0;
}
