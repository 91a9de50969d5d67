/*
 * sandbox_code.c: the code's process, cloned by the supervisor: its last
 * steps before execve, in their one order (stdio, working directory, limits,
 * groups, gid, uid, capabilities, no_new_privs, Landlock, seccomp last).
 * Between clone and exec: no allocation, no stdio; a failure is reported as
 * {step, errno} on the exec pipe, whose EOF means the exec worked.
 */
#include "sandbox_child.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "limit.h"
#include "seccomp_policy.h"
#include "sigdefaults.h"

/* The code's stack while it shares our memory (sb_code_start_vm): its
 * set-up's frames are small (no arrays but a few fds); the pages never
 * touched are never allocated. */
#define SB_CODE_STACK (256U * 1024U)

/*
 * AddressSanitizer keeps the main stack as the thread's: on a stack of the
 * child's own, the __asan_handle_no_return it inserts before each noreturn
 * call warns on fd 2, which in the child is not yet the code's stderr (it
 * may be one of the run's pipes or sockets). Sanitized builds keep the copy.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SB_CODE_VM 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SB_CODE_VM 0
#endif
#endif
#ifndef SB_CODE_VM
#define SB_CODE_VM 1
#endif

struct sb_code_args {
	const struct sandbox_ctx *ctx;
	const struct plan_view *pv;
	int pipe_rd; /* the supervisor's end of the exec pipe */
	int pipe_wr; /* the code's end */
};

/* The code's process, started by clone() on its own stack. */
static int
sb_code_main(void *arg)
{
	const struct sb_code_args *a = arg;

	close(a->pipe_rd);
	sandbox_code_exec(a->ctx, a->pv, a->pipe_wr, false);
}

/*
 * Start the code in a process that shares our memory until its execve
 * (CLONE_VM | CLONE_VFORK, as posix_spawn does): no copy of the supervisor's
 * page tables at the clone, no copy-on-write faults after it, and nothing to
 * tear down at the exec, which otherwise were a tenth of all the CPU time of
 * a /bin/true run (docs/performance.md, "Throughput"). Why it isolates as
 * well as a copy:
 *  - CLONE_VFORK: we are suspended until the child has exec'd or exited, so
 *    no two processes ever run on this memory; the child runs on a stack of
 *    its own and returns to no frame of ours.
 *  - Without CLONE_THREAD, CLONE_SIGHAND, CLONE_FILES and CLONE_FS, its
 *    credentials, capability sets, rlimits, seccomp filter, Landlock domain,
 *    no_new_privs, signal dispositions, fds, cwd and umask are its own: what
 *    it drops or sets leaves us untouched. oom_score_adj too: the kernel
 *    sets a vfork child's alone (__set_oom_adj).
 *  - Every signal is blocked across the clone and the child resets every
 *    disposition before it unblocks them (sb_reset_signals): no handler of
 *    ours can run on its stack. Its errno writes reach ours (one thread
 *    area); we read errno only when the clone failed.
 *  - Its set-uid drop makes our memory non-dumpable, which it already is
 *    (the spawner's clone inherited privdrop.c's PR_SET_DUMPABLE 0).
 *  - Only while we are single-threaded: the C library's set*id wrappers
 *    would otherwise signal our other threads from the child. Not in a
 *    build with AddressSanitizer (SB_CODE_VM).
 * The memory's pages come back to us when the child's exec gives it a new
 * address space. Returns the pid, or -1 with errno.
 */
static long
sb_code_start_vm(const struct sandbox_ctx *ctx, const struct plan_view *pv, int exec_pipe[2],
		 int *pidfd)
{
	struct sb_code_args a = {
		.ctx = ctx, .pv = pv, .pipe_rd = exec_pipe[0], .pipe_wr = exec_pipe[1]};
	sigset_t all, old;
	char *stack;
	long pid;
	int err;

	stack = mmap(NULL, SB_CODE_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	/* A guard page: an overflow faults instead of writing our memory. */
	if (mprotect(stack, (size_t)getpagesize(), PROT_NONE) < 0) {
		err = errno;
		munmap(stack, SB_CODE_STACK);
		errno = err;
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(sb_code_main, stack + SB_CODE_STACK,
		    CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &a, pidfd);
	err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* The child has exec'd or exited: the stack is ours alone again. */
	munmap(stack, SB_CODE_STACK);
	errno = err;
	return pid;
}

/*
 * Start the code's process running sandbox_code_exec(); exec_pipe: the
 * supervisor keeps [0], the code [1]. Born in the code's cgroup where there
 * is one (clone3 CLONE_INTO_CGROUP, with our own credentials: the spawner
 * made the cgroup.procs files it needs writable by our group): like fork,
 * since a clone3 on a stack of the child's own needs a trampoline the C
 * library does not offer; a kernel without clone3 has the child move itself.
 * Elsewhere it shares our memory until its exec (sb_code_start_vm). Returns
 * the pid (in the supervisor only), or -1 with errno.
 */
long
sandbox_code_start(const struct sandbox_ctx *ctx, const struct plan_view *pv, int exec_pipe[2],
		   int *pidfd)
{
	bool move = false;
	long pid;

	if (SB_CODE_VM && ctx->code_cgroup_fd < 0 && __libc_single_threaded)
		return sb_code_start_vm(ctx, pv, exec_pipe, pidfd);
	pid = -1;
	if (ctx->code_cgroup_fd >= 0) {
		struct clone_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_PIDFD | CLONE_INTO_CGROUP;
		ca.pidfd = (uint64_t)(uintptr_t)pidfd;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)ctx->code_cgroup_fd;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid < 0 && errno != ENOSYS && errno != E2BIG && errno != EINVAL)
			return pid;
		move = pid < 0;
	}
	if (pid < 0)
		pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, pidfd, 0, 0);
	if (pid == 0) {
		close(exec_pipe[0]);
		sandbox_code_exec(ctx, pv, exec_pipe[1], move);
	}
	return pid;
}

/* Report {step, errno} on the exec pipe and exit: runs in the code's child.
 * A positive errno: this pipe is internal to the sandbox (the supervisor
 * sends it on as -errno, sandbox_fail). */
__attribute__((noreturn)) static void
sb_code_fail(int pipefd, int step, int err)
{
	int32_t rep[2] = {step, err};

	(void)write(pipefd, rep, sizeof(rep));
	_exit(127);
}

#define SB_CODE_CHECK(expr, step)                                                                  \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			sb_code_fail(pipefd, step, errno);                                         \
	} while (0)

static void
sb_setrlimit(int pipefd, int res, uint64_t v)
{
	struct rlimit rl = {.rlim_cur = v, .rlim_max = v};

	SB_CODE_CHECK(setrlimit(res, &rl), SANDBOX_STEP_RLIMIT);
}

/*
 * Start the code from a known signal state, not the one the daemon was given:
 * a service manager ignores SIGPIPE (systemd's IgnoreSIGPIPE=yes), a shell's
 * "&" ignores SIGINT and SIGQUIT, and the spawner blocks the signals it reads
 * through its signalfd; execve() keeps ignored dispositions and the mask
 * (sigdefaults.h; a zygote's start does the same, spawner_zygote.c).
 */
static void
sb_reset_signals(void)
{
	sigdefaults_all();
}

/*
 * subprocess = false: open the code's program (argv[0]) as fd
 * SECCOMP_POLICY_EXEC_FD, close-on-exec, for the one execveat the noproc
 * filter allows. Before RLIMIT_NOFILE is lowered (to at most that fd, which
 * the config and the check below ensure), so that after the exec no fd of
 * that number can be made again. O_PATH: execveat checks the execute
 * permission itself, with the code's credentials, when it runs. The soft
 * limit is raised to the hard one first if it is too low for the fd; the
 * hard one cannot be (EBADF at the dup then, reported as the rlimit step).
 */
static void
sb_exec_fd(int pipefd, const struct plan_view *pv)
{
	struct rlimit rl;
	int fd;

	if (pv->hdr->limits[PROTO_LIMIT_OPEN_FILES] > SECCOMP_POLICY_EXEC_FD)
		sb_code_fail(pipefd, SANDBOX_STEP_RLIMIT, EINVAL);
	SB_CODE_CHECK(getrlimit(RLIMIT_NOFILE, &rl), SANDBOX_STEP_RLIMIT);
	if (rl.rlim_cur <= SECCOMP_POLICY_EXEC_FD) {
		rl.rlim_cur = rl.rlim_max;
		SB_CODE_CHECK(setrlimit(RLIMIT_NOFILE, &rl), SANDBOX_STEP_RLIMIT);
	}
	fd = open(pv->argv[0], O_PATH | O_CLOEXEC);
	if (fd < 0)
		sb_code_fail(pipefd, SANDBOX_STEP_EXEC, errno);
	SB_CODE_CHECK(dup3(fd, SECCOMP_POLICY_EXEC_FD, O_CLOEXEC), SANDBOX_STEP_RLIMIT);
	close(fd);
}

/* A kernel without CLONE_INTO_CGROUP (move): into the code's cgroup now,
 * before anything is charged (opened by us: our group may write it). Then
 * the code's own cgroup namespace: /proc/self/cgroup says "/", not the
 * host's path to it. */
static void
sb_code_cgroup(const struct sandbox_ctx *ctx, int pipefd, bool move)
{
	if (move) {
		int fd = openat(ctx->code_cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1)
			sb_code_fail(pipefd, SANDBOX_STEP_CGROUP, errno);
		close(fd);
	}
	if (ctx->layout->memory_cgroup)
		SB_CODE_CHECK(unshare(CLONE_NEWCGROUP), SANDBOX_STEP_CGROUP);
}

/* fds 0-2 (the code's stdin: an interpreter's cell channel, the stdin file
 * or /dev/null; the output pipes) and the exec pipe as fd 3, close-on-exec;
 * nothing else. Returns the exec pipe's new number. */
static int
sb_code_stdio(const struct sandbox_ctx *ctx, const struct plan_view *pv, int pipefd)
{
	int in;

	/* An interpreter session's driver reads its cells from fd 0. */
	if (pv->hdr->flags & PLAN_F_CELLS)
		in = ctx->cell_fd;
	else
		in = pv->stdin_data != NULL ? open(PLAN_CODE_DIR "/.stdin", O_RDONLY | O_CLOEXEC)
					    : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		sb_code_fail(pipefd, SANDBOX_STEP_STDIO, errno);
	/* The supervisor closed 0-2, so any of these may sit there: lift them
	 * all above 2 first, then dup2 (which clears close-on-exec) into place. */
	{
		int hi[4] = {in, ctx->out_fd, ctx->err_fd, pipefd}, k;

		for (k = 0; k < 4; k++) {
			hi[k] = fcntl(hi[k], F_DUPFD_CLOEXEC, 10);
			if (hi[k] < 0)
				sb_code_fail(pipefd, SANDBOX_STEP_STDIO, errno);
		}
		pipefd = hi[3];
		if (dup2(hi[0], 0) < 0 || dup2(hi[1], 1) < 0 || dup2(hi[2], 2) < 0 ||
		    dup3(hi[3], 3, O_CLOEXEC) < 0)
			sb_code_fail(pipefd, SANDBOX_STEP_STDIO, errno);
		pipefd = 3;
	}
	/* Keep only stdio and the exec pipe (close-on-exec). */
	SB_CODE_CHECK(syscall(SYS_close_range, 4, ~0U, 0), SANDBOX_STEP_STDIO);
	return pipefd;
}

/* Landlock, a second statement of the mount set-up (landlock.h): read
 * and execute anywhere in the sandbox's root, write only beneath the
 * workspace and /tmp (nowhere with file_write = false, which made them
 * read-only mounts: the layer says that a second time too); device and
 * proc files may be written, not made. Built here, while the paths are
 * ours to open; enforced after no_new_privs, which it needs. */
static void
sb_code_landlock(const struct sandbox_ctx *ctx, const struct plan_view *pv, int pipefd,
		 struct landlock_rules *ll)
{
	static const char *const rw[] = {PLAN_WORKSPACE, "/tmp", NULL};
	static const char *const wo[] = {"/dev", "/proc", NULL};
	bool ro = (pv->hdr->flags & PLAN_F_READONLY) != 0;
	int r = landlock_prepare(ctx->layout->landlock_abi, "/", ro ? NULL : rw, wo, ll);

	if (r < 0)
		sb_code_fail(pipefd, SANDBOX_STEP_LANDLOCK, -r);
}

/*
 * The oom killer takes the code before its supervisor: a supervisor
 * killed first would end the run with no report. Raising one's own
 * oom_score_adj needs no privilege, but this process is not dumpable
 * (its memory is a copy of the spawner's, whose credentials changed),
 * so its /proc files belong to the host's root, which is not mapped in
 * the run's user namespace: open() is refused (EACCES) even to the
 * namespace's root. Until issue 28 that failure was ignored and no
 * run's code got the score. Dumpable for the write only, then back:
 * no process of the run's but its supervisor (blocked in our vfork, or
 * waiting for our exec) exists yet to look at it. Any failure fails the
 * run at this step. The exec makes the code dumpable again as its uid.
 */
static void
sb_code_oom_score(int pipefd)
{
	int fd, err = 0;
	ssize_t n;

	/* Dumpable is the memory's, which the supervisor may share
	 * (CLONE_VM until our exec): it is set back before any failure
	 * is reported, so the supervisor never stays dumpable. */
	SB_CODE_CHECK(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), SANDBOX_STEP_OOM_SCORE);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
	} else {
		n = write(fd, "1000", 4);
		if (n != 4)
			err = n < 0 ? errno : EIO;
		close(fd);
	}
	SB_CODE_CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), SANDBOX_STEP_OOM_SCORE);
	if (err != 0)
		sb_code_fail(pipefd, SANDBOX_STEP_OOM_SCORE, err);
}

bool
sandbox_rlimit(const struct sandbox_layout *l, const uint64_t *lim, size_t i, uint64_t cpu_used_s,
	       uint64_t *ret_cur, uint64_t *ret_max)
{
	uint64_t v = lim[i];

	switch (limit_table[i].rlimit) {
	case -1:
		return false;
	case RLIMIT_AS:
		/* Without a memory cgroup the address-space limit is all
		 * there is; with one, memory.max is the limit. */
		if (l->memory_cgroup)
			return false;
		break;
	case RLIMIT_NPROC:
		/*
		 * RLIMIT_NPROC counts per uid; the uid is this run's alone.
		 * With a v2 cgroup, pids.max is the limit (every process of
		 * the run, whatever its uid, and a refused fork is counted in
		 * pids.events); the rlimit, checked first by the kernel, is
		 * then a backstop that never fires first
		 * (sandbox_nproc_limit).
		 */
		v = sandbox_nproc_limit(l->cgroup2, v);
		break;
	case RLIMIT_CPU:
		/* A per-process backstop behind the supervisor's whole-run
		 * count: whole seconds, rounded up, one more; SIGXCPU at
		 * the soft limit, SIGKILL a second later. */
		v = cpu_used_s + (v + 999) / 1000 + 1;
		*ret_cur = v;
		*ret_max = v + 1;
		return true;
	default:
		break;
	}
	*ret_cur = *ret_max = v;
	return true;
}

/* The code's rlimits: one per row of the limit table with an rlimit
 * (sandbox_rlimit), and no core files. subprocess = false opens the
 * program's fd first, before RLIMIT_NOFILE is lowered (sb_exec_fd). */
static void
sb_code_rlimits(const struct sandbox_ctx *ctx, const struct plan_view *pv, int pipefd)
{
	bool noproc = (pv->hdr->flags & PLAN_F_NOPROC) != 0;
	size_t i;

	if (noproc)
		sb_exec_fd(pipefd, pv);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		uint64_t cur, max;
		struct rlimit rl;

		if (!sandbox_rlimit(ctx->layout, pv->hdr->limits, i, 0, &cur, &max))
			continue;
		rl.rlim_cur = cur;
		rl.rlim_max = max;
		SB_CODE_CHECK(setrlimit(limit_table[i].rlimit, &rl), SANDBOX_STEP_RLIMIT);
	}
	sb_setrlimit(pipefd, RLIMIT_CORE, 0);
}

/* The credentials: no capability left in any set, the sandbox's gid and
 * uid, the runtime's working directory. */
static void
sb_code_creds(const struct plan_view *pv, int pipefd)
{
	struct __user_cap_header_struct caph = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct capd[2];
	int c;

	/*
	 * Every capability this kernel knows, by asking it (READ fails with
	 * EINVAL past its last), not up to a number read at start-up or our
	 * headers' CAP_LAST_CAP: a kernel newer than either has capabilities
	 * neither names, and one left in the bounding set would stay.
	 */
	for (c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		SB_CODE_CHECK(prctl(PR_CAPBSET_DROP, c, 0, 0, 0), SANDBOX_STEP_CAPBSET);
	SB_CODE_CHECK(setresgid(PLAN_SANDBOX_GID, PLAN_SANDBOX_GID, PLAN_SANDBOX_GID),
		      SANDBOX_STEP_SETGID);
	SB_CODE_CHECK(setresuid(PLAN_SANDBOX_UID, PLAN_SANDBOX_UID, PLAN_SANDBOX_UID),
		      SANDBOX_STEP_SETUID);
	/* The runtime's working directory, made by the supervisor
	 * (sandbox_fs.c, sb_cwd) before the workspace could become read-only;
	 * entered as the code's uid, following what the code could follow. */
	if (pv->cwd[0] != '\0')
		SB_CODE_CHECK(chdir(pv->cwd), SANDBOX_STEP_CHDIR);
	/* setresuid() to a non-zero uid cleared effective and permitted; the
	 * inheritable and ambient sets are cleared explicitly. */
	memset(capd, 0, sizeof(capd));
	SB_CODE_CHECK(syscall(SYS_capset, &caph, capd), SANDBOX_STEP_CAPS);
	SB_CODE_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), SANDBOX_STEP_CAPS);
}

/*
 * The code's process: stdio, working directory, limits, then the privilege
 * drop in its one order, seccomp last, execve.
 */
__attribute__((noreturn)) void
sandbox_code_exec(const struct sandbox_ctx *ctx, const struct plan_view *pv, int pipefd, bool move)
{
	struct landlock_rules ll;
	bool noproc = (pv->hdr->flags & PLAN_F_NOPROC) != 0;

	sb_code_cgroup(ctx, pipefd, move);
	pipefd = sb_code_stdio(ctx, pv, pipefd);
	SB_CODE_CHECK(setsid(), SANDBOX_STEP_STDIO);
	SB_CODE_CHECK(chdir(PLAN_WORKSPACE), SANDBOX_STEP_CHDIR);
	sb_reset_signals();
	sb_code_landlock(ctx, pv, pipefd, &ll);
	/* The mode of the files the code makes does not depend on the daemon's
	 * umask either. */
	umask(022);

	sb_code_oom_score(pipefd);
	sb_code_rlimits(ctx, pv, pipefd);
	sb_code_creds(pv, pipefd);
	SB_CODE_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), SANDBOX_STEP_NO_NEW_PRIVS);
	{
		int r = landlock_enforce(&ll);

		if (r < 0)
			sb_code_fail(pipefd, SANDBOX_STEP_LANDLOCK, -r);
	}
	/* Seccomp last: nothing after it but the exec (subprocess = false:
	 * the one execveat its filter allows, of the fd opened above). */
	SB_CODE_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
			    noproc ? ctx->seccomp_noproc : ctx->seccomp, 0, 0),
		      SANDBOX_STEP_SECCOMP);
	if (noproc)
		execveat(SECCOMP_POLICY_EXEC_FD, "", (char *const *)pv->argv,
			 (char *const *)pv->envp, AT_EMPTY_PATH);
	else
		execve(pv->argv[0], (char *const *)pv->argv, (char *const *)pv->envp);
	sb_code_fail(pipefd, SANDBOX_STEP_EXEC, errno);
}
