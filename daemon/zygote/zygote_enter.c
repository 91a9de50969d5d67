/*
 * zygote_enter.c: a zygote's forked child enters a prepared sandbox and
 * becomes a run's code (zygote_enter.h; docs/design-bursts.md §3.1-3.2 for
 * what each step was checked to do). One order, one function; a failed
 * step is reported as {step, errno} and the process _exit()s.
 */
#include "zygote_enter.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "landlock.h"
#include "nametab.h"

/* How long pid 2's exit may take before the code gives up its adoption. */
#define ZYGOTE_ADOPT_S 5

static const char *const zygote_step_names[ZYGOTE_STEP_COUNT_] = {
	[ZYGOTE_STEP_NONE] = "none",
	[ZYGOTE_STEP_ORDER] = "order",
	[ZYGOTE_STEP_SETNS_USER] = "setns_user",
	[ZYGOTE_STEP_SETNS_MNT] = "setns_mnt",
	[ZYGOTE_STEP_SETNS_NET] = "setns_net",
	[ZYGOTE_STEP_SETNS_IPC] = "setns_ipc",
	[ZYGOTE_STEP_SETNS_UTS] = "setns_uts",
	[ZYGOTE_STEP_SETNS_CGROUP] = "setns_cgroup",
	[ZYGOTE_STEP_SETNS_PID] = "setns_pid",
	[ZYGOTE_STEP_FORK_PID] = "fork_pid",
	[ZYGOTE_STEP_FORK_ORPHAN] = "fork_orphan",
	[ZYGOTE_STEP_ADOPT] = "adopt",
	[ZYGOTE_STEP_CGROUP] = "cgroup",
	[ZYGOTE_STEP_GROUPS] = "groups",
	[ZYGOTE_STEP_CAPBSET] = "capbset",
	[ZYGOTE_STEP_SETGID] = "setgid",
	[ZYGOTE_STEP_SETUID] = "setuid",
	[ZYGOTE_STEP_CAPS] = "caps",
	[ZYGOTE_STEP_VERIFY] = "verify",
	[ZYGOTE_STEP_DUMPABLE] = "dumpable",
	[ZYGOTE_STEP_OOM_SCORE] = "oom_score_adj",
	[ZYGOTE_STEP_CHDIR] = "chdir",
	[ZYGOTE_STEP_RLIMIT] = "rlimit",
	[ZYGOTE_STEP_STDIO] = "stdio",
	[ZYGOTE_STEP_NO_NEW_PRIVS] = "no_new_privs",
	[ZYGOTE_STEP_LANDLOCK] = "landlock",
	[ZYGOTE_STEP_SECCOMP] = "seccomp",
	[ZYGOTE_STEP_REPORT] = "report",
};

const char *
zygote_step_name(int step)
{
	return nametab_get(zygote_step_names, NAMETAB_LEN(zygote_step_names), step, "unknown");
}

/* Where a step's clone flag comes from: the order of enum zygote_ns. */
static const int zygote_ns_flag[ZYGOTE_NS_COUNT_] = {
	[ZYGOTE_NS_USER] = CLONE_NEWUSER, [ZYGOTE_NS_MNT] = CLONE_NEWNS,
	[ZYGOTE_NS_NET] = CLONE_NEWNET,	  [ZYGOTE_NS_IPC] = CLONE_NEWIPC,
	[ZYGOTE_NS_UTS] = CLONE_NEWUTS,	  [ZYGOTE_NS_CGROUP] = CLONE_NEWCGROUP,
	[ZYGOTE_NS_PID] = CLONE_NEWPID,
};

/* Report the failed step (the report is all that can be done: the pipe
 * may be gone) and end this half-entered process. */
__attribute__((noreturn)) static void
zygote_fail(int report_fd, enum zygote_step step, int err)
{
	struct zygote_report rep = {.step = (int32_t)step, .err = (int32_t)err, .pid = 0};

	if (report_fd >= 0)
		(void)!write(report_fd, &rep, sizeof(rep));
	_exit(127);
}

#define ZYGOTE_CHECK(expr, fd, step)                                                               \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			zygote_fail(fd, step, errno);                                              \
	} while (0)

/* The order is the zygote's own, but a wrong one must not half-work. */
static int
zygote_order_ok(const struct zygote_order *o)
{
	int i;

	for (i = 0; i < ZYGOTE_NS_COUNT_; i++)
		if (o->ns_fd[i] < 0 && i != ZYGOTE_NS_CGROUP)
			return -EBADF;
	for (i = 0; i < 3; i++)
		if (o->stdio_fd[i] < 0)
			return -EBADF;
	/* The code never runs as root of its namespace. */
	if (o->uid == 0 || o->gid == 0)
		return -EPERM;
	if (o->nrlimits > ZYGOTE_RLIMITS_MAX || o->seccomp == NULL || o->cwd == NULL ||
	    o->cwd[0] != '/')
		return -EINVAL;
	return 0;
}

/*
 * The namespaces, user first: joining it as its owner's uid gives every
 * capability in it and none left in the host's namespaces, and the others
 * need CAP_SYS_ADMIN there. The mount namespace's join moves root and cwd to
 * the sandbox's pivoted root. The pid namespace is for children only.
 */
static void
zygote_join(const struct zygote_order *o)
{
	int i;

	for (i = 0; i < ZYGOTE_NS_COUNT_; i++) {
		if (o->ns_fd[i] < 0)
			continue;
		ZYGOTE_CHECK(setns(o->ns_fd[i], zygote_ns_flag[i]), o->report_fd,
			     (enum zygote_step)(ZYGOTE_STEP_SETNS_USER + i));
	}
}

/*
 * Two forks. The first child is pid 2 of the run's pid namespace; were it
 * the code, its parent (in the host's pid namespace) would leave it at its
 * exit to the host's reaper, not to the run's supervisor (checked:
 * getppid() 0). The second child's parent is inside the namespace, so at
 * that parent's exit the kernel gives it to the namespace's pid 1, the
 * supervisor, which waits for it as for its own child. The first child
 * waits for pid 2 so that no zombie is left to the host.
 *
 * The code goes on only once it is adopted: the supervisor must be its
 * parent before anything of the run can happen. pid 2's pidfd becomes
 * readable when the kernel notifies its exit, which comes after it gave
 * its children to the namespace's pid 1; so: either the parent is pid 1
 * already, or pid 2 is waited for through its pidfd, with a deadline. (A
 * parent-death signal was tried first: one sent in the instant between
 * the reparenting and the check would stay pending and kill the code at
 * the unblocking of the mask.)
 */
static void
zygote_fork_in(const struct zygote_order *o)
{
	struct pollfd pp;
	pid_t p = fork();
	int st, r;

	if (p < 0)
		zygote_fail(o->report_fd, ZYGOTE_STEP_FORK_PID, errno);
	if (p > 0) {
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	p = fork();
	if (p < 0)
		zygote_fail(o->report_fd, ZYGOTE_STEP_FORK_ORPHAN, errno);
	if (p > 0)
		_exit(0);
	p = getppid();
	if (p == 1)
		return;
	pp.fd = (int)syscall(SYS_pidfd_open, p, 0);
	pp.events = POLLIN;
	/* ESRCH: pid 2 is gone (reaped), so its exit and our adoption were. */
	if (pp.fd < 0 && errno != ESRCH)
		zygote_fail(o->report_fd, ZYGOTE_STEP_ADOPT, errno);
	if (pp.fd >= 0) {
		do
			r = poll(&pp, 1, ZYGOTE_ADOPT_S * 1000);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			zygote_fail(o->report_fd, ZYGOTE_STEP_ADOPT, r == 0 ? ETIMEDOUT : errno);
		(void)close(pp.fd);
	}
	if (getppid() != 1)
		zygote_fail(o->report_fd, ZYGOTE_STEP_ADOPT, ESRCH);
}

/* Read back what the drop must have left: the uids and gids the order's,
 * no supplementary group, every capability set empty. */
static int
zygote_verify(const struct zygote_order *o)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int i;

	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != o->uid || eu != o->uid || su != o->uid || rg != o->gid || eg != o->gid ||
	    sg != o->gid || getgroups(0, NULL) != 0)
		return -EPERM;
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (i = 0; i < 2; i++)
		if (d[i].effective != 0 || d[i].permitted != 0 || d[i].inheritable != 0)
			return -EPERM;
	if (prctl(PR_CAPBSET_READ, 0, 0, 0, 0) != 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0) != 0)
		return -EPERM;
	return 0;
}

/*
 * Groups, bounding set, gid, uid, then the capability sets, read back.
 * setgroups() is refused in the run's namespace (its setgroups file says
 * deny), so the zygote must have started with none: checked, not done.
 * The bounding set is dropped while CAP_SETPCAP (the run namespace's) is
 * held. The uid is not 0 before setresuid() (the zygote's host uid is not
 * mapped), so the kernel does not clear the capabilities itself: capset.
 */
static void
zygote_drop(const struct zygote_order *o)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	int c, r;

	if (getgroups(0, NULL) != 0)
		zygote_fail(o->report_fd, ZYGOTE_STEP_GROUPS, EPERM);
	for (c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		ZYGOTE_CHECK(prctl(PR_CAPBSET_DROP, c, 0, 0, 0), o->report_fd, ZYGOTE_STEP_CAPBSET);
	ZYGOTE_CHECK(setresgid(o->gid, o->gid, o->gid), o->report_fd, ZYGOTE_STEP_SETGID);
	ZYGOTE_CHECK(setresuid(o->uid, o->uid, o->uid), o->report_fd, ZYGOTE_STEP_SETUID);
	memset(d, 0, sizeof(d));
	ZYGOTE_CHECK(syscall(SYS_capset, &h, d), o->report_fd, ZYGOTE_STEP_CAPS);
	ZYGOTE_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), o->report_fd,
		     ZYGOTE_STEP_CAPS);
	r = zygote_verify(o);
	if (r < 0)
		zygote_fail(o->report_fd, ZYGOTE_STEP_VERIFY, -r);
	/* The uid changed without an exec, which leaves the process
	 * non-dumpable (its /proc files the host's root's): an exec of the
	 * code would have made it dumpable as its uid, and it holds nothing
	 * but the zygote's image, which never read a secret. */
	ZYGOTE_CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), o->report_fd, ZYGOTE_STEP_DUMPABLE);
}

/*
 * What a fresh run's code gets between clone and exec besides the drop
 * (sandbox_code.c): the oom killer takes it before its supervisor (raising
 * one's own score needs no privilege; its /proc file is its own now that
 * it is dumpable), the runtime's working directory entered as the code's
 * uid (the mount namespace's join left it at the root), umask 022.
 */
static void
zygote_code_env(const struct zygote_order *o)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		zygote_fail(o->report_fd, ZYGOTE_STEP_OOM_SCORE, errno);
	n = write(fd, "1000", 4);
	if (n != 4)
		zygote_fail(o->report_fd, ZYGOTE_STEP_OOM_SCORE, n < 0 ? errno : EIO);
	(void)close(fd);
	ZYGOTE_CHECK(chdir(o->cwd), o->report_fd, ZYGOTE_STEP_CHDIR);
	umask(022);
}

/*
 * The code's fds: stdio on 0-2, the report pipe on 3, Landlock's ruleset
 * on 4 and the code on 5 (ZYGOTE_FD_*; an absent one's number closed),
 * nothing else. Everything of the zygote (its order socket, the
 * namespaces' fds of this and other runs) is closed: without an exec,
 * close-on-exec closes nothing. Lifted above 9 first, as any may sit
 * where another goes. The signal mask is emptied (an exec keeps it, and
 * the zygote's was its starter's); the dispositions are the interpreter's
 * own, as in a fresh one. A new session, as a fresh run's code has.
 */
static int
zygote_stdio(const struct zygote_order *o, int *ll_fd)
{
	int fd[ZYGOTE_FD_COUNT_] = {o->stdio_fd[0], o->stdio_fd[1], o->stdio_fd[2],
				    o->report_fd,   *ll_fd,	    o->code_fd};
	sigset_t none;
	int k;

	for (k = 0; k < ZYGOTE_FD_COUNT_; k++)
		if (fd[k] >= 0 && (fd[k] = fcntl(fd[k], F_DUPFD_CLOEXEC, 10)) < 0)
			zygote_fail(o->report_fd, ZYGOTE_STEP_STDIO, errno);
	for (k = 0; k < ZYGOTE_FD_COUNT_; k++) {
		if (fd[k] < 0)
			(void)close(k);
		else if (dup3(fd[k], k, k < 3 ? 0 : O_CLOEXEC) < 0)
			zygote_fail(fd[ZYGOTE_FD_REPORT], ZYGOTE_STEP_STDIO, errno);
	}
	if (syscall(SYS_close_range, (unsigned)ZYGOTE_FD_COUNT_, ~0U, 0) < 0)
		zygote_fail(ZYGOTE_FD_REPORT, ZYGOTE_STEP_STDIO, errno);
	if (*ll_fd >= 0)
		*ll_fd = ZYGOTE_FD_LANDLOCK;
	sigemptyset(&none);
	ZYGOTE_CHECK(sigprocmask(SIG_SETMASK, &none, NULL), ZYGOTE_FD_REPORT, ZYGOTE_STEP_STDIO);
	ZYGOTE_CHECK(setsid(), ZYGOTE_FD_REPORT, ZYGOTE_STEP_STDIO);
	return ZYGOTE_FD_REPORT;
}

int
zygote_enter(const struct zygote_order *o)
{
	struct zygote_report ok = {.step = ZYGOTE_STEP_NONE, .err = 0, .pid = 0};
	struct landlock_rules ll = {.fd = -1, .abi = 0, .fs = 0};
	unsigned i;
	int r, rep;

	r = zygote_order_ok(o);
	if (r < 0)
		zygote_fail(o->report_fd, ZYGOTE_STEP_ORDER, -r);
	if (o->landlock != NULL)
		ll = *o->landlock;
	zygote_join(o);
	zygote_fork_in(o);
	/* Into the run's code cgroup before anything is charged; the fd was
	 * opened by the spawner, and the kernel judges the write on the
	 * opener's credentials (Linux 5.16+). */
	if (o->cgroup_procs_fd >= 0)
		ZYGOTE_CHECK(write(o->cgroup_procs_fd, "0", 1), o->report_fd, ZYGOTE_STEP_CGROUP);
	zygote_drop(o);
	zygote_code_env(o);
	rep = zygote_stdio(o, &ll.fd);
	for (i = 0; i < o->nrlimits; i++)
		ZYGOTE_CHECK(setrlimit((__rlimit_resource_t)o->rlimit_res[i], &o->rlimit[i]), rep,
			     ZYGOTE_STEP_RLIMIT);
	ZYGOTE_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), rep, ZYGOTE_STEP_NO_NEW_PRIVS);
	r = landlock_enforce(&ll);
	if (r < 0)
		zygote_fail(rep, ZYGOTE_STEP_LANDLOCK, -r);
	ok.pid = (int32_t)getpid();
	/* Seccomp last; after it only the report, then the code. */
	ZYGOTE_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, o->seccomp, 0, 0), rep,
		     ZYGOTE_STEP_SECCOMP);
	if (write(rep, &ok, sizeof(ok)) != (ssize_t)sizeof(ok))
		zygote_fail(rep, ZYGOTE_STEP_REPORT, errno != 0 ? errno : EIO);
	close(rep);
	return 0;
}
