/*
 * test_zygote_enter.c: the set-up of a zygote's child (zygote_enter.c)
 * with every system call it makes a link seam: the calls come in the
 * order docs/design-bursts.md §3.2 gives, and a failure at any of them is
 * reported as that step with its errno, then _exit(127), with nothing
 * after it done. The real thing runs in the prestart tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/filter.h>

#include <cmocka.h>

#include "landlock.h"
#include "zygote_enter.h"

#define REPORT_FD 21
#define CGROUP_FD 22
#define LANDLOCK_FD 23
#define OOM_FD 50
#define PIDFD 51
#define LOG_MAX 128

/* What the seams saw and how they answer. */
static struct {
	char log[LOG_MAX][32];
	int n;
	const char *fail; /* the call (log name) to fail ... */
	int fail_nth;	  /* ... at its nth occurrence (1-based) */
	int fail_errno;
	int seen;
	pid_t fork_ret;	   /* what fork() returns (0: be the child) */
	int groups;	   /* getgroups() count */
	bool caps_left;	   /* capget reports a capability left */
	bool dropped;	   /* the bounding set was dropped */
	int orphan;	   /* getppid() answers 0 this many times, then 1 */
	bool poll_timeout; /* poll() on pid 2's pidfd times out */
	uid_t uid;
	gid_t gid;
	struct zygote_report rep;
	int nrep;
	jmp_buf exit_jmp;
	int exit_status;
} s;

/* Log a call; -1 with errno if it is the one to fail. */
static int
seam(const char *name)
{
	if (s.n < LOG_MAX)
		snprintf(s.log[s.n++], sizeof(s.log[0]), "%s", name);
	if (s.fail != NULL && strcmp(s.fail, name) == 0 && ++s.seen == s.fail_nth) {
		errno = s.fail_errno;
		return -1;
	}
	return 0;
}

__attribute__((noreturn)) void __wrap__exit(int status);
__attribute__((noreturn)) void
__wrap__exit(int status)
{
	s.exit_status = status;
	longjmp(s.exit_jmp, 1);
}

int __wrap_setns(int fd, int nstype);
int
__wrap_setns(int fd, int nstype)
{
	char name[32];

	snprintf(name, sizeof(name), "setns:%d:%x", fd, (unsigned)nstype);
	return seam(name);
}

pid_t __wrap_fork(void);
pid_t
__wrap_fork(void)
{
	return seam("fork") < 0 ? -1 : s.fork_ret;
}

pid_t __wrap_waitpid(pid_t pid, int *st, int opt);
pid_t
__wrap_waitpid(pid_t pid, int *st, int opt)
{
	(void)opt;
	*st = 0;
	return seam("waitpid") < 0 ? -1 : pid;
}

ssize_t __wrap_write(int fd, const void *buf, size_t len);
ssize_t
__wrap_write(int fd, const void *buf, size_t len)
{
	if (fd == OOM_FD) {
		assert_int_equal(len, 4);
		assert_memory_equal(buf, "1000", 4);
		return seam("oom_write") < 0 ? -1 : 4;
	}
	if (fd == CGROUP_FD) {
		assert_int_equal(len, 1);
		assert_memory_equal(buf, "0", 1);
		return seam("cgroup") < 0 ? -1 : 1;
	}
	/* The report: the order's fd, its lifted copy, then fd 3. */
	assert_true(fd == 3 || fd == REPORT_FD || fd == 40 + REPORT_FD);
	assert_int_equal(len, sizeof(s.rep));
	if (seam("report") < 0)
		return -1;
	memcpy(&s.rep, buf, sizeof(s.rep));
	s.nrep++;
	return (ssize_t)len;
}

int __wrap_getgroups(int n, gid_t *list);
int
__wrap_getgroups(int n, gid_t *list)
{
	(void)n;
	(void)list;
	seam("getgroups");
	return s.groups;
}

int __wrap_prctl(int option, ...);
int
__wrap_prctl(int option, ...)
{
	unsigned long a;
	va_list ap;

	va_start(ap, option);
	a = va_arg(ap, unsigned long);
	va_end(ap);
	switch (option) {
	case PR_CAPBSET_READ:
		if (a > 40) {
			errno = EINVAL;
			return -1;
		}
		return s.dropped ? 0 : 1;
	case PR_CAPBSET_DROP:
		if (seam("capbset_drop") < 0)
			return -1;
		if (a == 40)
			s.dropped = true;
		return 0;
	case PR_CAP_AMBIENT:
		return a == PR_CAP_AMBIENT_IS_SET ? 0 : seam("ambient_clear");
	case PR_SET_DUMPABLE:
		return seam("dumpable");
	case PR_SET_NO_NEW_PRIVS:
		return seam("no_new_privs");
	case PR_SET_SECCOMP:
		return seam("seccomp");
	default:
		fail_msg("prctl %d", option);
	}
	return -1;
}

int __wrap_setresgid(gid_t r, gid_t e, gid_t sv);
int
__wrap_setresgid(gid_t r, gid_t e, gid_t sv)
{
	if (seam("setresgid") < 0)
		return -1;
	assert_true(r == e && e == sv);
	s.gid = r;
	return 0;
}

int __wrap_setresuid(uid_t r, uid_t e, uid_t sv);
int
__wrap_setresuid(uid_t r, uid_t e, uid_t sv)
{
	if (seam("setresuid") < 0)
		return -1;
	assert_true(r == e && e == sv);
	s.uid = r;
	return 0;
}

int __wrap_getresuid(uid_t *r, uid_t *e, uid_t *sv);
int
__wrap_getresuid(uid_t *r, uid_t *e, uid_t *sv)
{
	*r = *e = *sv = s.uid;
	return 0;
}

int __wrap_getresgid(gid_t *r, gid_t *e, gid_t *sv);
int
__wrap_getresgid(gid_t *r, gid_t *e, gid_t *sv)
{
	*r = *e = *sv = s.gid;
	return 0;
}

long __wrap_syscall(long nr, ...);
long
__wrap_syscall(long nr, ...)
{
	struct __user_cap_data_struct *d;
	va_list ap;

	va_start(ap, nr);
	(void)va_arg(ap, void *);
	d = va_arg(ap, struct __user_cap_data_struct *);
	va_end(ap);
	switch (nr) {
	case SYS_capset:
		assert_int_equal(d[0].effective | d[0].permitted | d[0].inheritable, 0);
		return seam("capset");
	case SYS_capget:
		memset(d, 0, 2 * sizeof(*d));
		if (s.caps_left)
			d[0].permitted = 1;
		return seam("capget");
	case SYS_close_range:
		return seam("close_range");
	case SYS_pidfd_open:
		return seam("pidfd_open") < 0 ? -1 : PIDFD;
	default:
		fail_msg("syscall %ld", nr);
	}
	return -1;
}

/* fcntl and setrlimit are fcntl64 and setrlimit64 with 64-bit offsets. */
int __wrap_fcntl64(int fd, int cmd, ...);
int
__wrap_fcntl64(int fd, int cmd, ...)
{
	assert_int_equal(cmd, F_DUPFD_CLOEXEC);
	return seam("dupfd") < 0 ? -1 : 40 + fd;
}

int __wrap_fcntl(int fd, int cmd, ...);
int
__wrap_fcntl(int fd, int cmd, ...)
{
	return __wrap_fcntl64(fd, cmd);
}

int __wrap_dup3(int from, int to, int flags);
int
__wrap_dup3(int from, int to, int flags)
{
	char name[32];

	/* stdio without close-on-exec; the report and ruleset with it */
	assert_int_equal(flags, to < 3 ? 0 : O_CLOEXEC);
	snprintf(name, sizeof(name), "dup3:%d:%d", from - 40, to);
	return seam(name) < 0 ? -1 : to;
}

int __wrap_sigprocmask(int how, const sigset_t *set, sigset_t *old);
int
__wrap_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	(void)old;
	assert_int_equal(how, SIG_SETMASK);
	assert_int_equal(sigisemptyset(set), 1);
	return seam("sigmask");
}

int __wrap_open64(const char *path, int flags, ...);
int
__wrap_open64(const char *path, int flags, ...)
{
	assert_string_equal(path, "/proc/self/oom_score_adj");
	assert_int_equal(flags, O_WRONLY | O_CLOEXEC);
	return seam("oom_open") < 0 ? -1 : OOM_FD;
}

int __wrap_open(const char *path, int flags, ...);
int
__wrap_open(const char *path, int flags, ...)
{
	return __wrap_open64(path, flags);
}

int __wrap_chdir(const char *path);
int
__wrap_chdir(const char *path)
{
	char name[32];

	snprintf(name, sizeof(name), "chdir:%s", path);
	return seam(name);
}

mode_t __wrap_umask(mode_t mask);
mode_t
__wrap_umask(mode_t mask)
{
	assert_int_equal(mask, 022);
	seam("umask");
	return 077;
}

pid_t __wrap_getppid(void);
pid_t
__wrap_getppid(void)
{
	seam("getppid");
	if (s.orphan > 0) {
		s.orphan--;
		return 0;
	}
	return 1;
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int
__wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	assert_int_equal(n, 1);
	assert_int_equal(fds[0].fd, PIDFD);
	assert_int_equal(fds[0].events, POLLIN);
	/* a deadline, never an endless wait */
	assert_true(timeout > 0 && timeout <= 10000);
	if (seam("poll") < 0)
		return -1;
	if (s.poll_timeout)
		return 0;
	s.orphan = 0; /* pid 2 exited: we were given to pid 1 */
	fds[0].revents = POLLIN;
	return 1;
}

pid_t __wrap_setsid(void);
pid_t
__wrap_setsid(void)
{
	return seam("setsid") < 0 ? -1 : 7;
}

int __wrap_setrlimit64(int res, const struct rlimit *rl);
int
__wrap_setrlimit64(int res, const struct rlimit *rl)
{
	char name[32];

	snprintf(name, sizeof(name), "rlimit:%d:%llu", res, (unsigned long long)rl->rlim_cur);
	return seam(name);
}

int __wrap_setrlimit(int res, const struct rlimit *rl);
int
__wrap_setrlimit(int res, const struct rlimit *rl)
{
	return __wrap_setrlimit64(res, rl);
}

int __wrap_close(int fd);
int
__wrap_close(int fd)
{
	char name[32];

	snprintf(name, sizeof(name), "close:%d", fd);
	return seam(name);
}

/* The link seam for landlock.c: the ruleset must have been lifted onto 4. */
int
landlock_enforce(struct landlock_rules *rules)
{
	int r;

	if (rules->fd < 0)
		return 0;
	assert_int_equal(rules->fd, 4);
	r = seam("landlock");
	rules->fd = -1;
	return r < 0 ? -errno : 0;
}

static struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U);
static struct sock_fprog prog = {.len = 1, .filter = &allow};
static struct landlock_rules rules = {.fd = LANDLOCK_FD, .abi = 3, .fs = 1};

/* A whole order: namespace fds 11-17, stdio 18-20. */
static void
order_init(struct zygote_order *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < ZYGOTE_NS_COUNT_; i++)
		o->ns_fd[i] = 11 + i;
	for (i = 0; i < 3; i++)
		o->stdio_fd[i] = 18 + i;
	o->cgroup_procs_fd = CGROUP_FD;
	o->report_fd = REPORT_FD;
	o->code_fd = -1;
	o->cwd = "/workspace";
	o->uid = 1000;
	o->gid = 1000;
	o->nrlimits = 2;
	o->rlimit_res[0] = RLIMIT_NOFILE;
	o->rlimit[0].rlim_cur = o->rlimit[0].rlim_max = 64;
	o->rlimit_res[1] = RLIMIT_CPU;
	o->rlimit[1].rlim_cur = o->rlimit[1].rlim_max = 10;
	o->landlock = &rules;
	o->seccomp = &prog;
}

static int
reset(void **state)
{
	(void)state;
	memset(&s, 0, sizeof(s));
	s.uid = 65534;
	s.gid = 65534;
	s.exit_status = -1;
	return 0;
}

/* Run zygote_enter(): 0 when it returned, else 1000 + the exit status. */
static int
enter(const struct zygote_order *o)
{
	if (setjmp(s.exit_jmp) != 0)
		return 1000 + s.exit_status;
	return zygote_enter(o);
}

/* The index of a call in the log, -1 if absent. */
static int
at(const char *name)
{
	int i;

	for (i = 0; i < s.n; i++)
		if (strcmp(s.log[i], name) == 0)
			return i;
	return -1;
}

/* The whole order of a successful entry, and its report. */
static void
test_order_of_steps(void **state)
{
	static const char *const want[] = {
		"setns:11:10000000",
		"setns:12:20000",
		"setns:13:40000000",
		"setns:14:8000000",
		"setns:15:4000000",
		"setns:16:2000000",
		"setns:17:20000000",
		"fork",
		"fork",
		"getppid",
		"cgroup",
		"getgroups",
		"capbset_drop",
	};
	static const char *const tail[] = {
		"setresgid",
		"setresuid",
		"capset",
		"ambient_clear",
		"getgroups",
		"capget",
		"dumpable",
		"oom_open",
		"oom_write",
		"close:50",
		"chdir:/workspace",
		"umask",
		"dupfd",
		"dupfd",
		"dupfd",
		"dupfd",
		"dupfd",
		"dup3:18:0",
		"dup3:19:1",
		"dup3:20:2",
		"dup3:21:3",
		"dup3:23:4",
		"close:5",
		"close_range",
		"sigmask",
		"setsid",
		"rlimit:7:64",
		"rlimit:0:10",
		"no_new_privs",
		"landlock",
		"seccomp",
		"report",
		"close:3",
	};
	struct zygote_order o;
	size_t i;
	int base;

	(void)state;
	order_init(&o);
	assert_int_equal(enter(&o), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(s.log[i], want[i]);
	/* 41 drops of the bounding set (capabilities 0-40), then the tail */
	base = at("setresgid");
	assert_int_equal(base, (int)(sizeof(want) / sizeof(want[0])) + 40);
	for (i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		assert_string_equal(s.log[base + (int)i], tail[i]);
	assert_int_equal(s.n, base + (int)(sizeof(tail) / sizeof(tail[0])));
	assert_int_equal(s.nrep, 1);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_NONE);
	assert_int_equal(s.rep.err, 0);
	assert_int_equal(s.rep.pid, getpid());
	assert_int_equal(s.uid, 1000);
}

/* No cgroup namespace, cgroup fd or Landlock: those steps are skipped. */
static void
test_optional_parts(void **state)
{
	struct zygote_order o;

	(void)state;
	order_init(&o);
	o.ns_fd[ZYGOTE_NS_CGROUP] = -1;
	o.cgroup_procs_fd = -1;
	o.landlock = NULL;
	assert_int_equal(enter(&o), 0);
	assert_int_equal(at("setns:16:2000000"), -1);
	assert_int_equal(at("cgroup"), -1);
	assert_int_equal(at("dup3:23:4"), -1);
	/* an absent fd's number is closed, not left to a zygote's fd */
	assert_int_equal(at("close:4"), at("dup3:21:3") + 1);
	assert_int_not_equal(at("close_range"), -1);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_NONE);

	/* the code's fd onto 5, close-on-exec (the dup3 seam checks that) */
	reset(NULL);
	order_init(&o);
	o.code_fd = 24;
	assert_int_equal(enter(&o), 0);
	assert_int_equal(at("dup3:24:5"), at("dup3:23:4") + 1);
	assert_int_equal(at("close:5"), -1);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_NONE);
}

/* The two forks' parents end at once (the first after reaping pid 2). */
static void
test_fork_parents_exit(void **state)
{
	struct zygote_order o;

	(void)state;
	order_init(&o);
	s.fork_ret = 123;
	assert_int_equal(enter(&o), 1000);
	assert_string_equal(s.log[s.n - 1], "waitpid");
	assert_int_equal(s.nrep, 0);
}

/* Not adopted yet: pid 2's pidfd is polled (with a deadline), then the
 * parent checked again; a timeout, a failed pidfd_open or a parent still
 * not pid 1 is the adopt step's error. pid 2 already reaped (ESRCH) is
 * an adoption done. */
static void
test_adoption_waited_for(void **state)
{
	struct zygote_order o;

	(void)state;
	order_init(&o);
	s.orphan = 1;
	assert_int_equal(enter(&o), 0);
	assert_int_equal(at("pidfd_open"), at("getppid") + 1);
	assert_string_equal(s.log[at("pidfd_open") + 1], "poll");
	assert_string_equal(s.log[at("pidfd_open") + 2], "close:51");
	assert_string_equal(s.log[at("pidfd_open") + 3], "getppid");
	assert_int_equal(s.rep.step, ZYGOTE_STEP_NONE);

	reset(NULL);
	order_init(&o);
	s.orphan = 1000;
	s.poll_timeout = true;
	assert_int_equal(enter(&o), 1127);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_ADOPT);
	assert_int_equal(s.rep.err, ETIMEDOUT);
	assert_int_equal(at("cgroup"), -1);

	reset(NULL);
	order_init(&o);
	s.orphan = 1;
	s.fail = "pidfd_open";
	s.fail_nth = 1;
	s.fail_errno = ESRCH; /* reaped already: adopted */
	assert_int_equal(enter(&o), 0);
	assert_int_equal(at("poll"), -1);

	reset(NULL);
	order_init(&o);
	s.orphan = 2; /* gone, yet the parent is not pid 1 */
	s.fail = "pidfd_open";
	s.fail_nth = 1;
	s.fail_errno = ESRCH;
	assert_int_equal(enter(&o), 1127);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_ADOPT);
	assert_int_equal(s.rep.err, ESRCH);

	reset(NULL);
	order_init(&o);
	s.orphan = 1;
	s.fail = "pidfd_open";
	s.fail_nth = 1;
	s.fail_errno = EMFILE;
	assert_int_equal(enter(&o), 1127);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_ADOPT);
	assert_int_equal(s.rep.err, EMFILE);
}

/* A bad order: refused before any namespace is joined. */
static void
test_bad_orders(void **state)
{
	struct zygote_order o;
	int k;

	(void)state;
	for (k = 0; k < 7; k++) {
		reset(NULL);
		order_init(&o);
		if (k == 0)
			o.ns_fd[ZYGOTE_NS_USER] = -1;
		else if (k == 1)
			o.stdio_fd[1] = -1;
		else if (k == 2)
			o.uid = 0;
		else if (k == 3)
			o.seccomp = NULL;
		else if (k == 5)
			o.cwd = NULL;
		else if (k == 6)
			o.cwd = "workspace";
		else
			o.nrlimits = ZYGOTE_RLIMITS_MAX + 1;
		assert_int_equal(enter(&o), 1127);
		assert_int_equal(s.rep.step, ZYGOTE_STEP_ORDER);
		assert_int_equal(s.rep.err, k < 2 ? EBADF : k == 2 ? EPERM : EINVAL);
		assert_int_equal(at("setns:11:10000000"), -1);
	}
}

/* Each failing call: its step reported with its errno, exit 127, and
 * nothing after it. */
static void
test_each_failure(void **state)
{
	static const struct {
		const char *call;
		int nth;
		enum zygote_step step;
	} cases[] = {
		{"setns:11:10000000", 1, ZYGOTE_STEP_SETNS_USER},
		{"setns:12:20000", 1, ZYGOTE_STEP_SETNS_MNT},
		{"setns:13:40000000", 1, ZYGOTE_STEP_SETNS_NET},
		{"setns:14:8000000", 1, ZYGOTE_STEP_SETNS_IPC},
		{"setns:15:4000000", 1, ZYGOTE_STEP_SETNS_UTS},
		{"setns:16:2000000", 1, ZYGOTE_STEP_SETNS_CGROUP},
		{"setns:17:20000000", 1, ZYGOTE_STEP_SETNS_PID},
		{"fork", 1, ZYGOTE_STEP_FORK_PID},
		{"fork", 2, ZYGOTE_STEP_FORK_ORPHAN},
		{"cgroup", 1, ZYGOTE_STEP_CGROUP},
		{"capbset_drop", 7, ZYGOTE_STEP_CAPBSET},
		{"setresgid", 1, ZYGOTE_STEP_SETGID},
		{"setresuid", 1, ZYGOTE_STEP_SETUID},
		{"capset", 1, ZYGOTE_STEP_CAPS},
		{"ambient_clear", 1, ZYGOTE_STEP_CAPS},
		{"capget", 1, ZYGOTE_STEP_VERIFY},
		{"dumpable", 1, ZYGOTE_STEP_DUMPABLE},
		{"oom_open", 1, ZYGOTE_STEP_OOM_SCORE},
		{"oom_write", 1, ZYGOTE_STEP_OOM_SCORE},
		{"chdir:/workspace", 1, ZYGOTE_STEP_CHDIR},
		{"dupfd", 3, ZYGOTE_STEP_STDIO},
		{"dup3:19:1", 1, ZYGOTE_STEP_STDIO},
		{"close_range", 1, ZYGOTE_STEP_STDIO},
		{"sigmask", 1, ZYGOTE_STEP_STDIO},
		{"setsid", 1, ZYGOTE_STEP_STDIO},
		{"rlimit:0:10", 1, ZYGOTE_STEP_RLIMIT},
		{"no_new_privs", 1, ZYGOTE_STEP_NO_NEW_PRIVS},
		{"landlock", 1, ZYGOTE_STEP_LANDLOCK},
		{"seccomp", 1, ZYGOTE_STEP_SECCOMP},
	};
	struct zygote_order o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		reset(NULL);
		order_init(&o);
		s.fail = cases[i].call;
		s.fail_nth = cases[i].nth;
		s.fail_errno = EACCES;
		assert_int_equal(enter(&o), 1127);
		/* the failed call was the last one made, but for the report */
		assert_string_equal(s.log[s.n - 2], cases[i].call);
		assert_string_equal(s.log[s.n - 1], "report");
		assert_int_equal(s.nrep, 1);
		if (s.rep.step != (int32_t)cases[i].step)
			fail_msg("%s: step %s, want %s", cases[i].call,
				 zygote_step_name(s.rep.step),
				 zygote_step_name((int)cases[i].step));
		assert_int_equal(s.rep.err, EACCES);
		assert_int_equal(s.rep.pid, 0);
	}
}

/* The read-backs refuse what the drop should have removed. */
static void
test_verify_refuses(void **state)
{
	struct zygote_order o;

	(void)state;
	order_init(&o);
	s.caps_left = true;
	assert_int_equal(enter(&o), 1127);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_VERIFY);
	assert_int_equal(s.rep.err, EPERM);
	assert_int_equal(at("dumpable"), -1);

	reset(NULL);
	order_init(&o);
	s.groups = 1; /* a supplementary group: setgroups is denied there */
	assert_int_equal(enter(&o), 1127);
	assert_int_equal(s.rep.step, ZYGOTE_STEP_GROUPS);
	assert_int_equal(s.rep.err, EPERM);
	assert_int_equal(at("capbset_drop"), -1);
}

/* A report that cannot be written is the last step's failure. */
static void
test_report_fails(void **state)
{
	struct zygote_order o;

	(void)state;
	order_init(&o);
	s.fail = "report";
	s.fail_nth = 1;
	s.fail_errno = EPIPE;
	assert_int_equal(enter(&o), 1127);
	assert_int_equal(at("close:3"), -1);
}

/* Every step has a name, and a value no step has is "unknown". */
static void
test_step_names(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < ZYGOTE_STEP_COUNT_; i++)
		assert_string_not_equal(zygote_step_name(i), "unknown");
	assert_string_equal(zygote_step_name(ZYGOTE_STEP_COUNT_), "unknown");
	assert_string_equal(zygote_step_name(-1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_order_of_steps, reset),
		cmocka_unit_test_setup(test_optional_parts, reset),
		cmocka_unit_test_setup(test_fork_parents_exit, reset),
		cmocka_unit_test_setup(test_adoption_waited_for, reset),
		cmocka_unit_test_setup(test_bad_orders, reset),
		cmocka_unit_test_setup(test_each_failure, reset),
		cmocka_unit_test_setup(test_verify_refuses, reset),
		cmocka_unit_test_setup(test_report_fails, reset),
		cmocka_unit_test_setup(test_step_names, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
