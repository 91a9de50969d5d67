/*
 * test_zygote_enter_real.c: zygote_enter() for real (docs/design-bursts.md
 * §3.1-3.2). As root, a sandbox is made the way the spawner makes one (new
 * user, mount, pid, net, ipc and uts namespaces owned by a test uid U, the
 * maps 0 -> U and 1000 -> U+1, a tmpfs root, pivot_root, a pid 1 that
 * reports what it reaps); a "zygote" that dropped to uid U, with no group
 * and no capability, forks a child that enters it. The entered process
 * checks what the code would see, and the sandbox's pid 1 must be the one
 * that reaps it. Then an order whose user namespace fd is not one fails at
 * setns_user. Exit 77 (skip) without root or user namespaces.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <sys/mman.h>
#include <sys/socket.h>

#include "fdpass.h"
#include "spawn_msg.h"
#include "landlock.h"
#include "zygote_enter.h"
#include "sandbox_zygote.h"
#include "spawner_zygote.h"
#include "zygote_msg.h"
#include "zygote_send.h"

static char top[64];
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
		fprintf(stderr, "%s: %s\n", what, strerror(errno));                                \
		if (top[0] != '\0')                                                                \
			(void)rmdir(top);                                                          \
		_exit(99);                                                                         \
	} while (0)

/* Write one /proc/PID file. */
static void
put_proc(pid_t pid, const char *file, const char *val)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		DIE(path);
	close(fd);
}

/*
 * As a supervisor of a zygote run does (sandbox_zygote.c): send its own
 * namespace fds and a report pipe's write end on ctl, adopt the code the
 * report names and reap it: "PID STATUS" on out, or "adopt -ERR STEP".
 */
__attribute__((noreturn)) static void
sandbox_pid1_zygote(int ctl, int out)
{
	int fds[SANDBOX_ZYGOTE_NS + 1], rp[2], pidfd = -1, step = -1, r, n;
	char line[64];
	siginfo_t si;
	pid_t pid = 0;

	if (sandbox_zygote_ns(fds) < 0 || pipe2(rp, O_CLOEXEC) < 0)
		DIE("zygote ns");
	fds[SANDBOX_ZYGOTE_NS] = rp[1];
	if (fdpass_send(ctl, "N", 1, fds, SANDBOX_ZYGOTE_NS + 1) < 0)
		DIE("send ns");
	for (n = 0; n <= SANDBOX_ZYGOTE_NS; n++)
		close(fds[n]);
	r = sandbox_zygote_adopt(rp[0], 10000, &pidfd, &pid, &step);
	if (r < 0) {
		n = snprintf(line, sizeof(line), "adopt %d %d", r, step);
		(void)!write(out, line, (size_t)n);
		_exit(0);
	}
	memset(&si, 0, sizeof(si));
	while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	n = snprintf(line, sizeof(line), "%d %d", (int)si.si_pid,
		     si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status);
	(void)!write(out, line, (size_t)n);
	_exit(0);
}

/* The sandbox's pid 1: set up the root, say ready, report the first
 * child it reaps as "PID STATUS" on out, then exit; with a ctl socket,
 * the zygote run's supervisor (sandbox_pid1_zygote). */
__attribute__((noreturn)) static void
sandbox_pid1(int sync_fd, int out, int ctl)
{
	static const char *const dirs[] = {"usr", "proc", "old", "dev", "tmp"};
	struct timespec deadline = {30, 0};
	char path[128], c, line[64];
	sigset_t chld;
	int st, n;
	size_t i;
	pid_t p;

	if (read(sync_fd, &c, 1) != 1 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		DIE("sync");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", top, "tmpfs", 0, "size=1m,mode=0755") < 0)
		DIE("root");
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", top, dirs[i]);
		if (mkdir(path, i == 4 ? 01777 : 0755) < 0 ||
		    chmod(path, i == 4 ? 01777 : 0755) < 0)
			DIE(path);
	}
	snprintf(path, sizeof(path), "%s/usr", top);
	if (mount("/usr", path, NULL, MS_BIND | MS_REC, NULL) < 0)
		DIE("usr");
	snprintf(path, sizeof(path), "%s/proc", top);
	/* /proc before the old root goes: a new proc needs one visible. */
	if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		DIE("proc");
	snprintf(path, sizeof(path), "%s/old", top);
	if (syscall(SYS_pivot_root, top, path) < 0 || chdir("/") < 0 ||
	    umount2("/old", MNT_DETACH) < 0 || sethostname("zyg-sbx", 7) < 0)
		DIE("pivot_root");
	if (write(out, "R", 1) != 1)
		DIE("ready");
	if (ctl >= 0)
		sandbox_pid1_zygote(ctl, out);
	/* An adopted child is not ours until it is reparented: wait for
	 * SIGCHLD (its exit), with a deadline, not for a child to exist. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		p = waitpid(-1, &st, WNOHANG);
		if (p > 0 || (p < 0 && errno != ECHILD && errno != EINTR))
			break;
		if (sigtimedwait(&chld, NULL, &deadline) < 0 && errno == EAGAIN) {
			p = -1;
			errno = ETIMEDOUT;
			break;
		}
	}
	n = snprintf(line, sizeof(line), "%d %d", (int)p,
		     p < 0	     ? -errno
		     : WIFEXITED(st) ? WEXITSTATUS(st)
				     : 128 + WTERMSIG(st));
	(void)!write(out, line, (size_t)n);
	_exit(0);
}

/* Make the sandbox, owned by uid u as the spawner does (effective uid
 * only, permitted capabilities raised again). Returns its pid 1's pid.
 * ctl >= 0: its pid 1 is a zygote run's supervisor on that socket. */
static pid_t
sandbox_make_ctl(unsigned u, int *ret_out, int ctl)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	int syncp[2], outp[2];
	char map[64], c;
	pid_t pid;

	if (pipe2(syncp, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0)
		DIE("pipe");
	if (setresuid((uid_t)-1, u, (uid_t)-1) < 0)
		DIE("owner");
	(void)setfsuid(0);
	if (syscall(SYS_capget, &h, d) < 0)
		DIE("capget");
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d) < 0)
		DIE("capset");
	pid = (pid_t)syscall(SYS_clone,
			     CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
				     CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD,
			     0, NULL, NULL, 0);
	if (pid < 0)
		DIE("clone");
	if (pid == 0) {
		close(syncp[1]);
		close(outp[0]);
		sandbox_pid1(syncp[0], outp[1], ctl);
	}
	snprintf(map, sizeof(map), "0 %u 1\n1000 %u 1\n", u, u + 1);
	put_proc(pid, "uid_map", map);
	put_proc(pid, "setgroups", "deny");
	put_proc(pid, "gid_map", map);
	if (setresuid((uid_t)-1, 0, (uid_t)-1) < 0 || write(syncp[1], "g", 1) != 1)
		DIE("release");
	close(syncp[0]);
	close(syncp[1]);
	close(outp[1]);
	if (read(outp[0], &c, 1) != 1 || c != 'R')
		DIE("sandbox not ready");
	*ret_out = outp[0];
	return pid;
}

static pid_t
sandbox_make(unsigned u, int *ret_out)
{
	return sandbox_make_ctl(u, ret_out, -1);
}

/* In the entered process: what the code would see, as one line on fd 1. */
__attribute__((noreturn)) static void
code_checks(void)
{
	char buf[4096], host[64] = "", line[512];
	int fd, nfd = 0, i, bad_write;
	ssize_t n;

	/* No wait here: zygote_enter() returns only once pid 1 adopted us. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	(void)gethostname(host, sizeof(host));
	for (i = 0; i < 64; i++)
		nfd += fcntl(i, F_GETFD) >= 0;
	fd = open("/usr/zygote-test", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	bad_write = fd >= 0 ? 0 : errno;
	fd = open("/tmp/ok", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	n = snprintf(line, sizeof(line),
		     "pid=%d ppid=%d uid=%d gid=%d host=%s fds=%d usr_write=%d tmp_write=%d "
		     "caps0=%d nnp=%d seccomp=%d groups=%d sigblk=%d\n",
		     (int)getpid(), (int)getppid(), (int)getuid(), (int)getgid(), host, nfd,
		     bad_write, fd >= 0,
		     strstr(buf, "CapPrm:\t0000000000000000") &&
			     strstr(buf, "CapEff:\t0000000000000000") &&
			     strstr(buf, "CapBnd:\t0000000000000000") &&
			     strstr(buf, "CapAmb:\t0000000000000000"),
		     strstr(buf, "NoNewPrivs:\t1") != NULL, strstr(buf, "Seccomp:\t2") != NULL,
		     getgroups(0, NULL), strstr(buf, "SigBlk:\t0000000000000000") == NULL);
	(void)!write(1, line, (size_t)n);
	_exit(42);
}

/* Fork a zygote as uid u (no group, no capability) that forks a child
 * entering per order; the child runs code_checks(). Returns the report. */
static struct zygote_report
zygote_run(unsigned u, struct zygote_order *o, int report_rd)
{
	struct zygote_report rep = {.step = -1, .err = 0};
	pid_t z = fork();
	int st;

	if (z < 0)
		DIE("fork");
	if (z == 0) {
		pid_t c;

		if (setgroups(0, NULL) < 0 || setresgid(u, u, u) < 0 || setresuid(u, u, u) < 0)
			DIE("zygote drop");
		c = fork();
		if (c == 0) {
			zygote_enter(o);
			code_checks();
		}
		while (waitpid(c, &st, 0) < 0 && errno == EINTR)
			;
		_exit(c > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 98);
	}
	close(o->report_fd);
	o->report_fd = -1;
	if (read(report_rd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		rep.step = -2;
	while (waitpid(z, &st, 0) < 0 && errno == EINTR)
		;
	return rep;
}

/* The order's namespace fds: the sandbox's pid 1's (no cgroup ns). */
static void
order_ns(struct zygote_order *o, pid_t sup)
{
	static const char *const ns[] = {"user", "mnt", "net", "ipc", "uts", NULL, "pid"};
	char path[64];
	int i;

	for (i = 0; i < ZYGOTE_NS_COUNT_; i++) {
		o->ns_fd[i] = -1;
		if (ns[i] == NULL)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)sup, ns[i]);
		o->ns_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (o->ns_fd[i] < 0)
			DIE(path);
	}
}

/* A Landlock ruleset on the sandbox's own inodes, through its root:
 * read beneath /, write beneath /tmp. */
static void
order_landlock(pid_t sup, struct landlock_rules *ll)
{
	char root[64], tmp[64];
	const char *rw[2] = {tmp, NULL};

	snprintf(root, sizeof(root), "/proc/%d/root/.", (int)sup);
	snprintf(tmp, sizeof(tmp), "/proc/%d/root/tmp", (int)sup);
	if (landlock_prepare(landlock_usable_abi(landlock_abi()), root, rw, NULL, ll) < 0)
		DIE("landlock_prepare");
}

/* Let fd cross an exec. */
static void
inherit(int fd)
{
	if (fd >= 0 && fcntl(fd, F_SETFD, 0) < 0)
		DIE("fcntl");
}

/*
 * The same through the extension module: a test zygote, python3 -I -S -B
 * as uid u, prepares the order and fork_enter()s a child that runs Python
 * code in a second sandbox. The code's line and pid 1's word are checked.
 */
static void
python_zygote(unsigned u, const char *ext, const char *script)
{
	struct zygote_order o;
	struct zygote_report rep = {.step = -1, .err = 0};
	struct landlock_rules ll;
	char a[6][96], out[512] = "", said[64] = "";
	int rp[2], op[2], dn, sup_out, st, i;
	pid_t sup = sandbox_make(u, &sup_out), z;
	ssize_t n;

	order_ns(&o, sup);
	order_landlock(sup, &ll);
	if (pipe2(rp, O_CLOEXEC) < 0 || pipe2(op, O_CLOEXEC) < 0)
		DIE("pipe");
	dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
	snprintf(a[0], sizeof(a[0]), "%s", ext);
	snprintf(a[1], sizeof(a[1]), "%d,%d,%d,%d,%d,%d,%d", o.ns_fd[0], o.ns_fd[1], o.ns_fd[2],
		 o.ns_fd[3], o.ns_fd[4], o.ns_fd[5], o.ns_fd[6]);
	snprintf(a[2], sizeof(a[2]), "-1");
	snprintf(a[3], sizeof(a[3]), "%d,%d,%d", dn, op[1], op[1]);
	snprintf(a[4], sizeof(a[4]), "%d", rp[1]);
	snprintf(a[5], sizeof(a[5]), "%d", ll.fd);
	z = fork();
	if (z < 0)
		DIE("fork");
	if (z == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(u, u, u) < 0 || setresuid(u, u, u) < 0)
			DIE("zygote drop");
		for (i = 0; i < ZYGOTE_NS_COUNT_; i++)
			inherit(o.ns_fd[i]);
		inherit(dn);
		inherit(op[1]);
		inherit(rp[1]);
		inherit(ll.fd);
		execl("/usr/bin/python3", "python3", "-I", "-S", "-B", script, a[0], a[1], a[2],
		      a[3], a[4], a[5], (char *)NULL);
		DIE("exec python3");
	}
	close(rp[1]);
	close(op[1]);
	if (read(rp[0], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		rep.step = -2;
	n = read(op[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(sup_out, said, sizeof(said) - 1);
	said[n > 0 ? n : 0] = '\0';
	while (waitpid(z, &st, 0) < 0 && errno == EINTR)
		;
	fprintf(stderr, "python zygote: %sreaped by the sandbox's pid 1: %s\n", out, said);
	CHECK(rep.step == ZYGOTE_STEP_NONE, "python zygote's report: step %s errno %d",
	      zygote_step_name(rep.step), rep.err);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the test zygote exited %d", st);
	CHECK(strstr(out, "pid=3 ppid=1 uid=1000 host=zyg-sbx fds=3 isolated=1 ") != NULL,
	      "what the python code saw: %s", out);
	CHECK(strstr(out, "main=__main__") != NULL && strstr(out, "usr=written") == NULL,
	      "python code's module or /usr write: %s", out);
	CHECK(strcmp(said, "3 5") == 0, "pid 1 reaped \"%s\", not pid 3 status 5", said);
	kill(sup, SIGKILL);
	waitpid(sup, NULL, 0);
}

/* A memfd holding len bytes of data, at offset 0. */
static int
memfd_with(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0)
		DIE("memfd");
	return fd;
}

/* Read fd to EOF into buf (NUL-terminated, cut at size - 1). */
static void
read_all(int fd, char *buf, size_t size)
{
	size_t off = 0;
	ssize_t n;

	while (off + 1 < size && (n = read(fd, buf + off, size - 1 - off)) > 0)
		off += (size_t)n;
	buf[off] = '\0';
}

/* What one run through zygote.py gave. */
struct zy_run {
	struct zygote_report rep;
	char out[1024], err[2048], said[64];
};

/* One run of code through the zygote on sock, in a new sandbox of uid u. */
static void
zygote_py_run(int sock, unsigned u, const char *code, struct zy_run *ret)
{
	static const int nofile = RLIMIT_NOFILE;
	static const struct rlimit lim = {32, 32};
	struct zygote_send_run zr, bad;
	struct landlock_rules ll;
	int op[2], ep[2], cv[2], fds[SANDBOX_ZYGOTE_NS + 1], sup_out, i;
	size_t got = 0;
	char c;
	pid_t sup;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cv) < 0)
		DIE("socketpair");
	sup = sandbox_make_ctl(u, &sup_out, cv[1]);
	close(cv[1]);
	/* The supervisor's own namespaces and its report pipe: what the
	 * spawner will be sent (design-bursts.md §3.3), not /proc/SUP/ns. */
	if (fdpass_recv(cv[0], &c, 1, fds, SANDBOX_ZYGOTE_NS + 1, &got) != 1 ||
	    got != SANDBOX_ZYGOTE_NS + 1)
		DIE("the supervisor's fds");
	close(cv[0]);
	order_landlock(sup, &ll);
	if (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		DIE("pipes");
	memset(&zr, 0, sizeof(zr));
	for (i = 0; i < SANDBOX_ZYGOTE_NS; i++)
		zr.ns_fd[i] = fds[i];
	zr.cgroup_procs_fd = -1;
	zr.landlock_fd = ll.fd;
	zr.stdio_fd[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	zr.stdio_fd[1] = op[1];
	zr.stdio_fd[2] = ep[1];
	zr.report_fd = fds[SANDBOX_ZYGOTE_NS];
	/* How many argv strings, the run's argv after the interpreter's flags
	 * (design-bursts.md §3.5): -c, the text, the code file's name; then
	 * the run's environment: one variable. */
	{
		static char argv[4096];
		size_t n = strlen(code);

		if (n + 64 > sizeof(argv))
			DIE("code too long");
		memcpy(argv, "3\0-c", 5);
		memcpy(argv + 5, code, n + 1);
		memcpy(argv + 5 + n + 1, "/run/airlock/main.py", 21);
		memcpy(argv + 5 + n + 1 + 21, "LANG=C.UTF-8", 13);
		zr.code_fd = memfd_with("code", argv, 5 + n + 1 + 21 + 13);
	}
	zr.uid = 1000;
	zr.gid = 1000;
	zr.cwd = "/tmp";
	zr.nrlimits = 1;
	zr.rlimit_res = &nofile;
	zr.rlimit = &lim;
	/* What the zygote would refuse is refused before it is sent. */
	bad = zr;
	bad.uid = 0;
	CHECK(zygote_order_send(sock, &bad) == -EINVAL, "an order for uid 0 was sent");
	bad = zr;
	bad.cwd = "tmp";
	CHECK(zygote_order_send(sock, &bad) == -EINVAL, "a relative cwd was sent");
	bad = zr;
	bad.nrlimits = ZYGOTE_MSG_RLIMITS + 1;
	CHECK(zygote_order_send(sock, &bad) == -EINVAL, "too many rlimits were sent");
	bad = zr;
	bad.code_fd = -1;
	CHECK(zygote_order_send(sock, &bad) == -EINVAL, "an order without code was sent");
	if (zygote_order_send(sock, &zr) < 0)
		DIE("send the order");
	close(zr.stdio_fd[0]);
	close(op[1]);
	close(ep[1]);
	close(zr.code_fd);
	if (ll.fd >= 0)
		close(ll.fd);
	for (i = 0; i <= SANDBOX_ZYGOTE_NS; i++)
		close(fds[i]);
	read_all(op[0], ret->out, sizeof(ret->out));
	read_all(ep[0], ret->err, sizeof(ret->err));
	read_all(sup_out, ret->said, sizeof(ret->said));
	/* The report went to the supervisor, which adopted the code. */
	memset(&ret->rep, 0, sizeof(ret->rep));
	ret->rep.step = -2;
	if (sscanf(ret->said, "adopt %d %d", &ret->rep.err, &ret->rep.step) != 2 &&
	    sscanf(ret->said, "%d", &ret->rep.pid) == 1)
		ret->rep.step = ZYGOTE_STEP_NONE;
	close(op[0]);
	close(ep[0]);
	close(sup_out);
	kill(sup, SIGKILL);
	waitpid(sup, NULL, 0);
}

/* /proc/PID/status's line key, its value (tabs as spaces) in buf. */
static void
status_line(pid_t pid, const char *key, char *buf, size_t size)
{
	char path[64], all[4096], *p, *e;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		DIE("open status");
	read_all(fd, all, sizeof(all));
	close(fd);
	buf[0] = '\0';
	p = strstr(all, key);
	if (p == NULL)
		return;
	p += strlen(key);
	while (*p == '\t' || *p == ' ')
		p++;
	e = strchr(p, '\n');
	snprintf(buf, size, "%.*s", e != NULL ? (int)(e - p) : (int)strlen(p), p);
	for (p = buf; *p != '\0'; p++)
		if (*p == '\t')
			*p = ' ';
}

/*
 * The zygote as the spawner starts it (spawner_zygote_start): uid, gid
 * and no group of u's, no capability, no_new_privs, fds 0-5 only.
 */
static void
zygote_creds(pid_t z, unsigned u)
{
	static const char *const zero[] = {"CapInh:", "CapPrm:", "CapEff:", "CapAmb:"};
	char want[64], got[128], path[64], link[PATH_MAX];
	unsigned i;
	int fd;

	snprintf(want, sizeof(want), "%u %u %u %u", u, u, u, u);
	status_line(z, "\nUid:", got, sizeof(got));
	CHECK(strcmp(got, want) == 0, "the zygote's uids: %s, not %s", got, want);
	status_line(z, "\nGid:", got, sizeof(got));
	CHECK(strcmp(got, want) == 0, "the zygote's gids: %s, not %s", got, want);
	status_line(z, "\nGroups:", got, sizeof(got));
	CHECK(got[0] == '\0', "the zygote's groups: %s", got);
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		status_line(z, zero[i], got, sizeof(got));
		CHECK(strcmp(got, "0000000000000000") == 0, "the zygote's %s %s", zero[i], got);
	}
	status_line(z, "\nNoNewPrivs:", got, sizeof(got));
	CHECK(strcmp(got, "1") == 0, "the zygote's NoNewPrivs: %s", got);
	for (fd = 0; fd < 64; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)z, fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		/* 0-2 the spawner's, 3 the socket, 4 the seccomp program, 5
		 * zygote.py; python may hold one more while it reads a file. */
		CHECK(fd <= 5, "the zygote holds fd %d: %s", fd, link);
	}
}

/*
 * spawner_zygote_start()'s refusals and failures, each before anything
 * runs as the zygote: uid 0, and a python that is not there (the exec's
 * errno comes back by the report pipe, named).
 */
static void
zygote_start_errors(const struct spawner_zygote *good, unsigned u)
{
	struct spawner_zygote z = *good;
	const char *step = "";
	char path[3][96], fifo[96];
	pid_t pid = -1;
	int r, saved[2], i, fd;

	z.uid = 0;
	r = spawner_zygote_start(&z, &pid, &step);
	CHECK(r == -EINVAL && strcmp(step, "args") == 0 && pid == -1, "a zygote as uid 0: %d at %s",
	      r, step);
	z = *good;
	z.python = "/nonexistent/python3";
	r = spawner_zygote_start(&z, &pid, &step);
	CHECK(r == -ENOENT && strcmp(step, "python") == 0 && pid == -1,
	      "a zygote with no python: %d at %s", r, step);
	/* Files in the test's directory: one others may write, one of uid
	 * u's (both refused before the fork), and one root's, 0755, that is
	 * not a program (its exec fails in the child). */
	for (i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/python-%d", top, i);
		fd = open(path[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		if (fd < 0 || write(fd, "not a program\n", 14) != 14)
			DIE("fake python");
		close(fd);
	}
	if (chmod(path[0], 0757) < 0 || chown(path[1], u, u) < 0)
		DIE("fake python's owner or mode");
	for (i = 0; i < 2; i++) {
		z.python = path[i];
		r = spawner_zygote_start(&z, &pid, &step);
		CHECK(r == -EPERM && strcmp(step, "python") == 0 && pid == -1,
		      "a python %s: %d at %s", i == 0 ? "others may write" : "not root's", r, step);
	}
	z.python = path[2];
	r = spawner_zygote_start(&z, &pid, &step);
	CHECK(r == -ENOEXEC && strcmp(step, "exec") == 0 && pid == -1,
	      "a python that is no program: %d at %s", r, step);
	/* A FIFO (root's, 0755) named as python, as a frontend may name any
	 * path: refused without the spawner blocking in its open (SIGALRM
	 * ends the test if it does). */
	snprintf(fifo, sizeof(fifo), "%s/python-fifo", top);
	if (mkfifo(fifo, 0755) < 0)
		DIE("mkfifo");
	z.python = fifo;
	alarm(10);
	r = spawner_zygote_start(&z, &pid, &step);
	alarm(0);
	CHECK(r == -EPERM && strcmp(step, "python") == 0 && pid == -1, "a FIFO as python: %d at %s",
	      r, step);
	unlink(fifo);
	z.python = path[2];
	/* The same with fds 3 and 4 free, so that the report pipe is made
	 * there, where the order socket and the seccomp program go: the
	 * report must still come back. */
	saved[0] = fcntl(3, F_DUPFD_CLOEXEC, 200);
	saved[1] = fcntl(4, F_DUPFD_CLOEXEC, 200);
	close(3);
	close(4);
	r = spawner_zygote_start(&z, &pid, &step);
	CHECK(r == -ENOEXEC && strcmp(step, "exec") == 0 && pid == -1,
	      "no python, its report pipe at fds 3 and 4: %d at %s", r, step);
	for (i = 0; i < 2; i++)
		if (saved[i] >= 0) {
			(void)dup3(saved[i], 3 + i, O_CLOEXEC);
			close(saved[i]);
		}
	for (i = 0; i < 3; i++)
		unlink(path[i]);
}

/*
 * daemon/zygote/zygote.py itself, started as the spawner starts it
 * (spawner_zygote_start: uid u, no capability), taking orders on a
 * socket: a run whose code (a memfd, read by the child after it entered)
 * leaves marks in its interpreter and raises after an atexit
 * registration; a second run of the same zygote, which must see none of
 * those marks (the fork copied the zygote, not the first run); then a bad
 * order, which ends the zygote.
 */
static void
zygote_py_orders(unsigned u, const char *ext, const char *zygote)
{
	static const char first[] =
		"import atexit, builtins, json, os, sys\n"
		"atexit.register(lambda: print('atexit ran', flush=True))\n"
		"print('pid=%d ppid=%d uid=%d argv=%s file=%s fds=%d' % (os.getpid(), "
		"os.getppid(), os.getuid(), sys.argv, globals().get('__file__'), "
		"len(os.listdir('/proc/self/fd')) - 1), flush=True)\n"
		"print('cwd=%s umask=%o oom=%s' % (os.getcwd(), os.umask(0o22), "
		"open('/proc/self/oom_score_adj').read().strip()), flush=True)\n"
		"builtins.LEAK = 1; os.environ['LEAK'] = '1'; os.sep = '!'; sys.path.append('/x')\n"
		"raise ValueError('from the run')\n";
	static const char second[] =
		"import builtins, os, sys\n"
		"print('leak=%s env=%s sep=%s path=%s json=%s' % (hasattr(builtins, 'LEAK'), "
		"'LEAK' in os.environ, os.sep, '/x' in sys.path, 'json' in sys.modules))\n"
		"print('pids=%s' % sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n";
	static char *envp[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL};
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct spawner_zygote sz;
	struct zygote_msg_order bad;
	struct zy_run r1, r2;
	const char *step = "";
	int sv[2], st, r, leak;
	pid_t z = -1;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		DIE("socketpair");
	memset(&sz, 0, sizeof(sz));
	sz.python = "/usr/bin/python3";
	sz.ext = ext;
	sz.script_fd = open(zygote, O_RDONLY | O_CLOEXEC);
	sz.sock_fd = sv[1];
	sz.bpf_fd = memfd_with("bpf", &allow, sizeof(allow));
	sz.envp = envp;
	sz.uid = u;
	sz.gid = u;
	if (sz.script_fd < 0)
		DIE("open zygote.py");
	zygote_start_errors(&sz, u);
	/* Not close-on-exec, as a library's stray fd in the spawner would
	 * be: the zygote must not have it (zygote_creds). */
	leak = open("/dev/null", O_RDONLY);
	r = spawner_zygote_start(&sz, &z, &step);
	close(leak);
	if (r < 0) {
		errno = -r;
		fprintf(stderr, "spawner_zygote_start: step %s\n", step);
		DIE("spawner_zygote_start");
	}
	close(sv[1]);
	close(sz.bpf_fd);
	close(sz.script_fd);
	zygote_py_run(sv[0], u, first, &r1);
	/* After a run: the zygote is in its loop, waiting for the next. */
	zygote_creds(z, u);
	zygote_py_run(sv[0], u, second, &r2);
	memset(&bad, 0, sizeof(bad));
	if (fdpass_send(sv[0], &bad, sizeof(bad), NULL, 0) < 0)
		DIE("send a bad order");
	while (waitpid(z, &st, 0) < 0 && errno == EINTR)
		;
	fprintf(stderr, "zygote.py run 1: %sits stderr: %sreaped by pid 1: %s\n", r1.out, r1.err,
		r1.said);
	fprintf(stderr, "zygote.py run 2: %sreaped by pid 1: %s\n", r2.out, r2.said);
	CHECK(r1.rep.step == ZYGOTE_STEP_NONE && r2.rep.step == ZYGOTE_STEP_NONE &&
		      r1.rep.pid == 3 && r2.rep.pid == 3,
	      "zygote.py's reports: steps %s, %s", zygote_step_name(r1.rep.step),
	      zygote_step_name(r2.rep.step));
	CHECK(strstr(r1.out, "pid=3 ppid=1 uid=1000 argv=['-c', '/run/airlock/main.py'] "
			     "file=None fds=3\ncwd=/tmp umask=22 oom=1000\natexit ran\n") != NULL,
	      "zygote.py's code printed: %s", r1.out);
	CHECK(strstr(r1.err, "Traceback (most recent call last):\n  File \"<string>\", line "
			     "6, in <module>\nValueError: from the run\n") != NULL,
	      "the traceback, as a fresh run's: %s", r1.err);
	CHECK(strcmp(r1.said, "3 1") == 0, "pid 1 reaped \"%s\", not pid 3 status 1", r1.said);
	/* The zygote, its other children and the host are not in sight:
	 * only the run's pid 1 and the code. */
	CHECK(strcmp(r2.out, "leak=False env=False sep=/ path=False json=False\npids=[1, 3]\n") ==
		      0,
	      "the second run saw the first's marks: %s", r2.out);
	CHECK(strcmp(r2.said, "3 0") == 0, "pid 1 reaped \"%s\", not pid 3 status 0", r2.said);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a bad order ends the zygote (1): %d", st);
	close(sv[0]);
}

/* sandbox_zygote_adopt() on one report (len bytes of rep; 0: none). */
static int
adopt_one(const struct zygote_report *rep, size_t len, bool eof, pid_t *ret_pid, int *ret_step)
{
	int p[2], pidfd = -1, r;

	if (pipe2(p, O_CLOEXEC) < 0)
		DIE("pipe");
	if (len > 0 && write(p[1], rep, len) != (ssize_t)len)
		DIE("write report");
	if (eof)
		close(p[1]);
	r = sandbox_zygote_adopt(p[0], 50, &pidfd, ret_pid, ret_step);
	if (!eof)
		close(p[1]);
	close(p[0]);
	if (pidfd >= 0)
		close(pidfd);
	return r;
}

/*
 * The supervisor's adoption refuses what a zygote (less trusted than it)
 * could say wrongly: a pid that is not its child, a failed step (its
 * errno and step come back), a short report, EOF, silence.
 */
static void
adopt_checks(void)
{
	struct zygote_report rep = {.step = ZYGOTE_STEP_NONE, .err = 0, .pid = 0};
	pid_t child, pid = 0;
	int r, step;

	child = fork();
	if (child < 0)
		DIE("fork");
	if (child == 0) {
		pause();
		_exit(0);
	}
	rep.pid = child;
	r = adopt_one(&rep, sizeof(rep), false, &pid, &step);
	CHECK(r == 0 && pid == child, "our own child not adopted: %d", r);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	rep.pid = getppid();
	r = adopt_one(&rep, sizeof(rep), false, &pid, &step);
	CHECK(r == -ECHILD, "a pid not ours was adopted: %d", r);
	rep.pid = 1;
	r = adopt_one(&rep, sizeof(rep), false, &pid, &step);
	CHECK(r == -EPROTO, "pid 1 was adopted: %d", r);
	rep = (struct zygote_report){.step = ZYGOTE_STEP_SETNS_USER, .err = EPERM, .pid = 0};
	r = adopt_one(&rep, sizeof(rep), false, &pid, &step);
	CHECK(r == -EPERM && step == ZYGOTE_STEP_SETNS_USER, "a failed step: %d at %d", r, step);
	r = adopt_one(&rep, 4, true, &pid, &step);
	CHECK(r == -EPROTO, "a short report: %d", r);
	r = adopt_one(&rep, 0, true, &pid, &step);
	CHECK(r == -EPIPE, "EOF: %d", r);
	r = adopt_one(&rep, 0, false, &pid, &step);
	CHECK(r == -ETIMEDOUT, "silence: %d", r);
}

int
main(void)
{
	static struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	static struct sock_fprog prog = {.len = 1, .filter = &allow};
	const char *base = getenv("AIRLOCK_TEST_UID_BASE");
	const char *py_ext, *py_script, *py_zygote;
	struct zygote_order o;
	struct zygote_report rep;
	struct landlock_rules ll;
	char out[512] = "", said[64] = "";
	int rp[2], op[2], sup_out;
	unsigned u;
	pid_t sup;
	ssize_t n;

	if (geteuid() != 0 || base == NULL || access("/proc/self/ns/user", F_OK) < 0) {
		fprintf(stderr, "skip: needs root and AIRLOCK_TEST_UID_BASE\n");
		return 77;
	}
	u = (unsigned)strtoul(base, NULL, 10) + 16;
	{
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, NULL);
	}
	snprintf(top, sizeof(top), "/tmp/airlock-zygote-XXXXXX");
	if (mkdtemp(top) == NULL)
		DIE("mkdtemp");
	adopt_checks();
	sup = sandbox_make(u, &sup_out);

	memset(&o, 0, sizeof(o));
	order_ns(&o, sup);
	if (pipe2(rp, O_CLOEXEC) < 0 || pipe2(op, O_CLOEXEC) < 0)
		DIE("pipe");
	o.cgroup_procs_fd = -1;
	o.stdio_fd[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	o.stdio_fd[1] = op[1];
	o.stdio_fd[2] = op[1];
	o.report_fd = rp[1];
	o.code_fd = -1;
	o.cwd = "/tmp";
	o.uid = 1000;
	o.gid = 1000;
	o.nrlimits = 1;
	o.rlimit_res[0] = RLIMIT_NOFILE;
	o.rlimit[0].rlim_cur = o.rlimit[0].rlim_max = 32;
	o.seccomp = &prog;
	order_landlock(sup, &ll);
	o.landlock = &ll;

	rep = zygote_run(u, &o, rp[0]);
	CHECK(rep.step == ZYGOTE_STEP_NONE && rep.err == 0 && rep.pid == 3,
	      "report: step %s errno %d pid %d", zygote_step_name(rep.step), rep.err, rep.pid);
	close(op[1]);
	n = read(op[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(sup_out, said, sizeof(said) - 1);
	said[n > 0 ? n : 0] = '\0';
	fprintf(stderr, "entered: %sreaped by the sandbox's pid 1: %s\n", out, said);
	CHECK(strstr(out, "pid=3 ppid=1 uid=1000 gid=1000 host=zyg-sbx fds=3 ") != NULL,
	      "what the code saw: %s", out);
	CHECK(strstr(out, ll.abi > 0 ? "usr_write=13 " : "usr_write=") != NULL,
	      "a write in /usr: %s", out);
	CHECK(strstr(out, "tmp_write=1 caps0=1 nnp=1 seccomp=1 groups=0 sigblk=0") != NULL,
	      "privileges: %s", out);
	CHECK(strcmp(said, "3 42") == 0, "the sandbox's pid 1 reaped \"%s\", not pid 3 status 42",
	      said);

	/* A wrong fd in the user namespace's place: refused at that step. */
	if (pipe2(rp, O_CLOEXEC) < 0)
		DIE("pipe");
	o.report_fd = rp[1];
	o.landlock = NULL;
	o.ns_fd[ZYGOTE_NS_USER] = o.ns_fd[ZYGOTE_NS_MNT];
	rep = zygote_run(u, &o, rp[0]);
	CHECK(rep.step == ZYGOTE_STEP_SETNS_USER && rep.err == EINVAL,
	      "wrong user namespace fd: step %s errno %d", zygote_step_name(rep.step), rep.err);

	kill(sup, SIGKILL);
	waitpid(sup, NULL, 0);
	/* Read once each: two getenv calls may differ, to the analyzer. */
	py_ext = getenv("ZYGOTE_PY_EXT");
	py_script = getenv("ZYGOTE_PY_SCRIPT");
	py_zygote = getenv("ZYGOTE_PY");
	if (py_ext != NULL && py_script != NULL && py_zygote != NULL) {
		python_zygote(u, py_ext, py_script);
		zygote_py_orders(u, py_ext, py_zygote);
	} else
		fprintf(stderr, "no extension module built: the python zygote is not tried\n");
	rmdir(top);
	fprintf(stderr, "%s\n", failures == 0 ? "ok" : "FAILED");
	return failures == 0 ? 0 : 1;
}
