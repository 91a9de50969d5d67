/*
 * test_seccomp.c: unit tests of daemon/spawner/seccomp_policy.c. Every case forks a
 * child that loads the compiled filter and makes one call; the child's exit
 * status carries the errno it saw (0 = the call succeeded), so the filter
 * never touches the test runner itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seccomp_policy.h"

#define SUCCEEDED 0
#define KILLED 1000
/* run_notif_probe(): the call went past the filter under test. */
#define PASSED_FILTER 248
/* What the user-space notifier answers for a call that reaches it. */
#define NOTIF_ANSWER 4242

/*
 * Link seam (-Wl,--wrap=seccomp_syscall_resolve_name): a libseccomp that
 * does not know wrap_unknown, or numbers wrap_renumber as wrap_renumber_nr.
 * Reset by every test that sets them.
 */
static const char *wrap_unknown;
static const char *wrap_renumber;
static int wrap_renumber_nr;

int __real_seccomp_syscall_resolve_name(const char *name);
int __wrap_seccomp_syscall_resolve_name(const char *name);

int
__wrap_seccomp_syscall_resolve_name(const char *name)
{
	if (wrap_unknown != NULL && strcmp(name, wrap_unknown) == 0)
		return __NR_SCMP_ERROR;
	if (wrap_renumber != NULL && strcmp(name, wrap_renumber) == 0)
		return wrap_renumber_nr;
	return __real_seccomp_syscall_resolve_name(name);
}

/* One probe: makes a call and returns 0 on success or the errno it got. */
typedef int (*probe_fn)(void);

/* Return 0 if a raw syscall result is success, else errno. */
static int
probe_result(long r)
{
	return r < 0 ? errno : 0;
}

/* After a call that may make a child: the child (0) leaves at once, the
 * parent reaps it; 0 or the errno. */
static int
probe_child(long r)
{
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return probe_result(r);
}

/*
 * Run probe in a child under prog (NULL: no filter). Returns the probe's
 * errno, SUCCEEDED, or KILLED + signal when the filter killed the child.
 */
static int
run_probe(const struct sock_fprog *prog, probe_fn probe)
{
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r;

		if (prog != NULL) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
				_exit(250);
			if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog) < 0)
				_exit(251);
		}
		r = probe();
		_exit(r > 249 ? 249 : r);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return KILLED + WTERMSIG(status);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) < 250);
	return WEXITSTATUS(status);
}

/*
 * Did the filter under test answer system call nr itself, or let it
 * through? The kernel answers a number it lacks with ENOSYS, as the filter
 * does, so the call's errno alone cannot tell. A second filter sends nr to
 * a user-space notifier (a helper process) that answers NOTIF_ANSWER; the
 * kernel takes the action of highest precedence, and ERRNO and KILL rank
 * above USER_NOTIF. So: PASSED_FILTER when the notifier answered (prog let
 * the call through), else the errno prog gave, or KILLED + signal. The
 * helper is forked before prog is loaded, which may forbid fork.
 */
static int
run_notif_probe(const struct sock_fprog *prog, long nr)
{
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sock_filter insns[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog notif = {.len = 4, .filter = insns};
		pid_t helper;
		long r;
		int listener, e;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(250);
		listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					SECCOMP_FILTER_FLAG_NEW_LISTENER, &notif);
		if (listener < 0)
			_exit(251);
		helper = fork();
		if (helper < 0)
			_exit(252);
		if (helper == 0) {
			struct pollfd p = {.fd = listener, .events = POLLIN};
			struct seccomp_notif req;
			struct seccomp_notif_resp resp;

			if (poll(&p, 1, 10000) != 1)
				_exit(1);
			memset(&req, 0, sizeof(req));
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
				_exit(1);
			memset(&resp, 0, sizeof(resp));
			resp.id = req.id;
			resp.val = NOTIF_ANSWER;
			(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
			_exit(0);
		}
		close(listener);
		if (prog != NULL && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog) < 0)
			_exit(253);
		r = syscall(nr, 0L, 0L, 0L, 0L, 0L, 0L);
		e = errno;
		kill(helper, SIGKILL);
		waitpid(helper, NULL, 0);
		if (r == NOTIF_ANSWER)
			_exit(PASSED_FILTER);
		_exit(r < 0 && e < PASSED_FILTER ? e : 249);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return KILLED + WTERMSIG(status);
	assert_true(WIFEXITED(status));
	assert_true(WEXITSTATUS(status) < 249);
	return WEXITSTATUS(status);
}

static int
probe_getpid(void)
{
	return probe_result(syscall(SYS_getpid));
}

static int
probe_unshare_user(void)
{
	return probe_result(unshare(CLONE_NEWUSER));
}

static int
probe_unshare_ns(void)
{
	return probe_result(unshare(CLONE_NEWNS));
}

static int
probe_setns(void)
{
	return probe_result(setns(-1, 0));
}

/* Without the filter, root gets ENOENT for the missing target. */
static int
probe_mount(void)
{
	return probe_result(mount("none", "/nonexistent-airlock-target", "tmpfs", 0, NULL));
}

static int
probe_keyctl(void)
{
	/* KEYCTL_GET_KEYRING_ID of the session keyring, create = 0 */
	return probe_result(syscall(SYS_keyctl, 0, -3, 0));
}

static int
probe_add_key(void)
{
	return probe_result(syscall(SYS_add_key, "user", "airlock-test", "x", 1, -3));
}

static int
probe_bpf(void)
{
	return probe_result(syscall(SYS_bpf, 0, NULL, 0));
}

static int
probe_perf_event_open(void)
{
	return probe_result(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}

static int
probe_userfaultfd(void)
{
	return probe_result(syscall(SYS_userfaultfd, 0));
}

static int
probe_io_uring_setup(void)
{
	return probe_result(syscall(SYS_io_uring_setup, 1, NULL));
}

static int
probe_ptrace(void)
{
	return probe_result(syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0));
}

static int
probe_personality_linux32(void)
{
	return probe_result(syscall(SYS_personality, 0x0008UL));
}

static int
probe_personality_no_aslr(void)
{
	return probe_result(syscall(SYS_personality, (unsigned long)ADDR_NO_RANDOMIZE));
}

static int
probe_personality_high(void)
{
	return probe_result(syscall(SYS_personality, 0xfffffffeUL));
}

static int
probe_personality_upper(void)
{
	return probe_result(syscall(SYS_personality, 1UL << 32));
}

/* The query must work and report PER_LINUX. */
static int
probe_personality_query(void)
{
	long r = syscall(SYS_personality, 0xffffffffUL);

	if (r < 0)
		return errno;
	return r == PER_LINUX ? 0 : 249;
}

static int
probe_personality_linux(void)
{
	return probe_result(syscall(SYS_personality, 0UL));
}

/* clone with a namespace flag; a child that escapes the filter leaves at once. */
static int
probe_clone_newns(void)
{
	return probe_child(syscall(SYS_clone, (unsigned long)(CLONE_NEWNS | SIGCHLD), 0, 0, 0, 0));
}

static int
probe_clone_newnet(void)
{
	return probe_child(syscall(SYS_clone, (unsigned long)(CLONE_NEWNET | SIGCHLD), 0, 0, 0, 0));
}

/* A plain fork (through the C library) must still work, and so must the child. */
static int
probe_fork(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(7);
	if (waitpid(pid, &status, 0) != pid)
		return errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 249;
}

static int
probe_clone3(void)
{
	struct clone_args args;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	return probe_child(syscall(SYS_clone3, &args, sizeof(args)));
}

/* A plain clone, and one with CLONE_VFORK (the parent waits; no shared memory). */
static int
probe_clone_flags(unsigned long flags)
{
	return probe_child(syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0));
}

static int
probe_clone_plain(void)
{
	return probe_clone_flags(0);
}

static int
probe_clone_vfork(void)
{
	return probe_clone_flags(CLONE_VFORK);
}

/* A thread's flags. Only run under a filter that must refuse it: a thread
 * that got through would share this stack (it exits the process at once). */
static int
probe_clone_thread(void)
{
	return probe_clone_flags(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				 CLONE_SYSVSEM);
}

/* vfork(2) itself; only under a filter that must refuse it. */
static int
probe_vfork(void)
{
	return probe_child(syscall(SYS_vfork));
}

/* Run /bin/true (its exit status 0 reads as SUCCEEDED; probe_execve runs it
 * by path) from an fd with AT_EMPTY_PATH: at fd (-1: wherever open puts
 * it), with flags. */
static int
probe_execveat_at(int at, int flags)
{
	char *const argv[] = {"true", NULL}, *const envp[] = {NULL};
	int fd = open("/bin/true", O_PATH | O_CLOEXEC);

	if (fd < 0)
		return 249;
	if (at >= 0 && (fd = dup3(fd, at, O_CLOEXEC)) < 0)
		return 249;
	syscall(SYS_execveat, (long)fd, "", argv, envp, (long)flags);
	return errno;
}

static int
probe_execveat_fd(void)
{
	return probe_execveat_at(-1, AT_EMPTY_PATH);
}

static int
probe_execveat_exec_fd(void)
{
	return probe_execveat_at(SECCOMP_POLICY_EXEC_FD, AT_EMPTY_PATH);
}

static int
probe_execveat_exec_fd_no_empty(void)
{
	return probe_execveat_at(SECCOMP_POLICY_EXEC_FD, 0);
}

/* stdin is /dev/null here (see main), so without the filter: ENOTTY. */
static int
probe_tiocsti(void)
{
	char c = 'x';

	return probe_result(ioctl(0, TIOCSTI, &c));
}

/* The kernel truncates the request to 32 bits: upper bits must not bypass the rule. */
static int
probe_tiocsti_upper(void)
{
	char c = 'x';

	return probe_result(syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), &c));
}

static int
probe_tioclinux(void)
{
	char c = 0;

	return probe_result(ioctl(0, TIOCLINUX, &c));
}

/* An ordinary ioctl stays allowed. */
static int
probe_fionread(void)
{
	int n;

	return probe_result(ioctl(0, FIONREAD, &n));
}

/* getpid through the x32 ABI (bit 30 set). */
static int
probe_x32_getpid(void)
{
	return probe_result(syscall(0x40000000L | SYS_getpid));
}

static int
probe_execve(void)
{
	char *const argv[] = {"/bin/true", NULL};
	char *const envp[] = {NULL};

	return probe_result(execve("/bin/true", argv, envp));
}

static int
probe_setuid(void)
{
	return probe_result(syscall(SYS_setuid, 0));
}

/* Allowed by the filter (the UTS namespace is the run's own): the kernel answers. */
static int
probe_sethostname(void)
{
	return probe_result(syscall(SYS_sethostname, NULL, 100000));
}

/*
 * socket() through the raw call, closing what it got: 0 or the errno. The
 * family is a long so that a test can set its upper bits.
 */
static int
probe_socket_raw(long family, long type, long protocol)
{
	long fd = syscall(SYS_socket, family, type | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static int
probe_socket_vsock(void)
{
	return probe_socket_raw(AF_VSOCK, SOCK_STREAM, 0);
}

static int
probe_socket_packet(void)
{
	return probe_socket_raw(AF_PACKET, SOCK_DGRAM, 0);
}

static int
probe_socket_unix(void)
{
	return probe_socket_raw(AF_UNIX, SOCK_STREAM, 0);
}

static int
probe_socket_inet(void)
{
	return probe_socket_raw(AF_INET, SOCK_STREAM, 0);
}

static int
probe_socket_inet6(void)
{
	return probe_socket_raw(AF_INET6, SOCK_DGRAM, 0);
}

static int
probe_socket_netlink_route(void)
{
	return probe_socket_raw(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

/* Host-wide kernel events: not for a sandbox. */
static int
probe_socket_netlink_uevent(void)
{
	return probe_socket_raw(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
}

/* NETLINK_ROUTE with upper bits: the kernel would truncate it to 0. */
static int
probe_socket_netlink_upper(void)
{
	return probe_socket_raw(AF_NETLINK, SOCK_RAW, 1L << 32);
}

/* AF_INET with upper bits: the kernel truncates the family to an int. */
static int
probe_socket_inet_upper(void)
{
	return probe_socket_raw((1L << 32) | AF_INET, SOCK_STREAM, 0);
}

/* AF_VSOCK with upper bits set: must not come through as AF_VSOCK either. */
static int
probe_socket_vsock_upper(void)
{
	return probe_socket_raw((1L << 32) | AF_VSOCK, SOCK_STREAM, 0);
}

static int
probe_socket_negative(void)
{
	return probe_socket_raw(-1L, SOCK_STREAM, 0);
}

/* socketpair() of a denied family, and the one everybody uses. */
static int
probe_socketpair_vsock(void)
{
	int sv[2];

	if (syscall(SYS_socketpair, (long)AF_VSOCK, (long)SOCK_STREAM, 0L, sv) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

static int
probe_socketpair_unix(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* modify_ldt(0 = read, ...): without the filter it answers (0 bytes here). */
static int
probe_modify_ldt(void)
{
	char buf[64];

	return probe_result(syscall(SYS_modify_ldt, 0, buf, sizeof(buf)));
}

/* Unprivileged fanotify (Linux 5.13+): we are root, so without the filter it works. */
static int
probe_fanotify_init(void)
{
	long fd = syscall(SYS_fanotify_init, (long)(FAN_CLASS_NOTIF | FAN_CLOEXEC), (long)O_RDONLY);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* Without the filter: EBADF for the group fd -1. */
static int
probe_fanotify_mark(void)
{
	return probe_result(syscall(SYS_fanotify_mark, -1L, (long)FAN_MARK_ADD, (long)FAN_OPEN,
				    (long)AT_FDCWD, "/"));
}

/* An i386 call through int 0x80 (no-op where that ABI is not x86_64's). */
static int
probe_i386(long nr)
{
#if defined(__x86_64__)
	long r;

	__asm__ volatile("int $0x80"
			 : "=a"(r)
			 : "a"(nr), "b"(0L), "c"(0L), "d"(0L)
			 : "memory", "r8", "r9", "r10", "r11");
	return r < 0 ? (int)-r : 0;
#else
	(void)nr;
	return ENOSYS;
#endif
}

static int
probe_i386_getpid(void)
{
	return probe_i386(20); /* getpid in the i386 table */
}

static int
probe_i386_above_max(void)
{
	return probe_i386(SECCOMP_POLICY_REVIEWED_MAX + 30);
}

static int
probe_x32_above_max(void)
{
	return probe_result(syscall(0x40000000L | (SECCOMP_POLICY_REVIEWED_MAX + 30)));
}

/* Compile one of the policies for a test. */
static int
setup_sandbox(void **state)
{
	struct sock_fprog *prog = calloc(1, sizeof(*prog));

	if (prog == NULL || seccomp_policy_sandbox(prog) < 0)
		return -1;
	*state = prog;
	return 0;
}

static int
setup_noproc(void **state)
{
	struct sock_fprog *prog = calloc(1, sizeof(*prog));

	if (prog == NULL || seccomp_policy_sandbox_noproc(prog) < 0)
		return -1;
	*state = prog;
	return 0;
}

static int
setup_frontend(void **state)
{
	struct sock_fprog *prog = calloc(1, sizeof(*prog));

	if (prog == NULL || seccomp_policy_frontend(prog) < 0)
		return -1;
	*state = prog;
	return 0;
}

static int
teardown_prog(void **state)
{
	struct sock_fprog *prog = *state;

	seccomp_policy_free(prog);
	assert_null(prog->filter);
	seccomp_policy_free(NULL);
	free(prog);
	return 0;
}

/*
 * Without a filter, the probes give something other than what the filter
 * must give: otherwise the filter tests below could not fail. (We are root.)
 */
static void
test_probes_discriminate(void **state)
{
	(void)state;
	assert_int_equal(run_probe(NULL, probe_getpid), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_mount), ENOENT);
	assert_int_equal(run_probe(NULL, probe_unshare_ns), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_personality_linux32), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_clone_newns), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_ptrace), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_tiocsti), ENOTTY);
	assert_int_equal(run_probe(NULL, probe_tiocsti_upper), ENOTTY);
	assert_int_not_equal(run_probe(NULL, probe_bpf), EPERM);
	assert_int_not_equal(run_probe(NULL, probe_io_uring_setup), EPERM);
	assert_int_not_equal(run_probe(NULL, probe_keyctl), EPERM);
	assert_int_not_equal(run_probe(NULL, probe_userfaultfd), EPERM);
	assert_int_not_equal(run_probe(NULL, probe_perf_event_open), EPERM);
	assert_int_equal(run_probe(NULL, probe_fork), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_clone_plain), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_clone_vfork), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_execve), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_execveat_fd), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_execveat_exec_fd_no_empty), ENOENT);
	assert_true(run_probe(NULL, probe_clone3) != ENOSYS);
	assert_int_equal(run_probe(NULL, probe_modify_ldt), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_socket_packet), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_socket_inet_upper), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_socket_netlink_uevent), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_socket_netlink_upper), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_fanotify_init), SUCCEEDED);
	assert_int_equal(run_probe(NULL, probe_fanotify_mark), EBADF);
	/* The notifier probe sees a call above the table reach it without a filter. */
	assert_int_equal(run_notif_probe(NULL, SECCOMP_POLICY_REVIEWED_MAX + 1), PASSED_FILTER);
	assert_int_equal(run_notif_probe(NULL, 500), PASSED_FILTER);
	assert_int_equal(run_notif_probe(NULL, 457 /* statmount */), PASSED_FILTER);
}

/* The sandbox filter denies what it must with EPERM and leaves the rest working. */
static void
test_sandbox_denies(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_true(prog->len > 0);
	assert_non_null(prog->filter);
	assert_int_equal(run_probe(prog, probe_getpid), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_unshare_user), EPERM);
	assert_int_equal(run_probe(prog, probe_unshare_ns), EPERM);
	assert_int_equal(run_probe(prog, probe_setns), EPERM);
	assert_int_equal(run_probe(prog, probe_mount), EPERM);
	assert_int_equal(run_probe(prog, probe_keyctl), EPERM);
	assert_int_equal(run_probe(prog, probe_add_key), EPERM);
	assert_int_equal(run_probe(prog, probe_bpf), EPERM);
	assert_int_equal(run_probe(prog, probe_perf_event_open), EPERM);
	assert_int_equal(run_probe(prog, probe_userfaultfd), EPERM);
	assert_int_equal(run_probe(prog, probe_io_uring_setup), EPERM);
	assert_int_equal(run_probe(prog, probe_ptrace), EPERM);
	assert_int_equal(run_probe(prog, probe_sethostname), run_probe(NULL, probe_sethostname));
}

/*
 * subprocess = false: no process, thread or exec but the one execveat of
 * SECCOMP_POLICY_EXEC_FD with AT_EMPTY_PATH (the code's first; /bin/true
 * then runs and exits 0); the rest of the sandbox's policy still holds.
 */
static void
test_noproc(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_getpid), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_fork), EPERM);
	assert_int_equal(run_probe(prog, probe_vfork), EPERM);
	assert_int_equal(run_probe(prog, probe_clone_plain), EPERM);
	assert_int_equal(run_probe(prog, probe_clone_vfork), EPERM);
	assert_int_equal(run_probe(prog, probe_clone_thread), EPERM);
	assert_int_equal(run_probe(prog, probe_clone_newns), EPERM);
	assert_int_equal(run_probe(prog, probe_clone3), ENOSYS);
	assert_int_equal(run_probe(prog, probe_execve), EPERM);
	assert_int_equal(run_probe(prog, probe_execveat_fd), EPERM);
	assert_int_equal(run_probe(prog, probe_execveat_exec_fd_no_empty), EPERM);
	assert_int_equal(run_probe(prog, probe_execveat_exec_fd), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_mount), EPERM);
	assert_int_equal(run_probe(prog, probe_io_uring_setup), EPERM);
	assert_int_equal(run_probe(prog, probe_socket_packet), EAFNOSUPPORT);
}

/*
 * modify_ldt: denied. io_uring (all three calls) is in test_sandbox_denies
 * and the hostile case esc_io_uring.
 */
static void
test_sandbox_modify_ldt(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_modify_ldt), EPERM);
}

/* Which families exist on this kernel decides what an unfiltered probe says. */
static int socket_family;

static int
probe_socket_family(void)
{
	int r = probe_socket_raw(socket_family, SOCK_STREAM, 0);

	if (r == 0 || r == EAFNOSUPPORT)
		return r;
	/* The family exists but wants another type or protocol. */
	r = probe_socket_raw(socket_family, SOCK_DGRAM, 0);
	if (r == 0 || r == EAFNOSUPPORT)
		return r;
	return probe_socket_raw(socket_family, SOCK_RAW, 0);
}

/*
 * socket(): the allow-list. Every family number up to well past AF_MAX gets
 * EAFNOSUPPORT under the filter, except AF_UNIX, AF_INET, AF_INET6 and
 * AF_NETLINK (with NETLINK_ROUTE only), which answer as without it.
 */
static void
test_sandbox_socket_families(void **state)
{
	const struct sock_fprog *prog = *state;

	for (socket_family = 0; socket_family < 64; socket_family++) {
		int with = run_probe(prog, probe_socket_family);

		if (socket_family == AF_UNIX || socket_family == AF_INET ||
		    socket_family == AF_INET6 || socket_family == AF_NETLINK) {
			assert_int_equal(with, run_probe(NULL, probe_socket_family));
			assert_int_not_equal(with, EAFNOSUPPORT);
		} else if (with != EAFNOSUPPORT) {
			fail_msg("family %d: %d, expected EAFNOSUPPORT", socket_family, with);
		}
	}
	assert_int_equal(run_probe(prog, probe_socket_vsock), EAFNOSUPPORT);
	assert_int_equal(run_probe(prog, probe_socket_packet), EAFNOSUPPORT);
	assert_int_equal(run_probe(prog, probe_socket_unix), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_socket_inet), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_socket_inet6), run_probe(NULL, probe_socket_inet6));
	assert_int_equal(run_probe(prog, probe_socket_netlink_route), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_socket_netlink_uevent), EPROTONOSUPPORT);
	assert_int_equal(run_probe(prog, probe_socket_netlink_upper), EPROTONOSUPPORT);
	assert_int_equal(run_probe(prog, probe_socket_inet_upper), EAFNOSUPPORT);
	assert_int_equal(run_probe(prog, probe_socket_vsock_upper), EAFNOSUPPORT);
	assert_int_equal(run_probe(prog, probe_socket_negative), EAFNOSUPPORT);
}

/* The protocol an inet probe names; the family and type it tries. */
static int socket_protocol;
static int socket_inet_family;

/* The protocol with whichever type the kernel takes for it. */
static int
probe_socket_protocol(void)
{
	static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_RAW};
	int r = 0;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		r = probe_socket_raw(socket_inet_family, types[i], socket_protocol);
		if (r != EPROTONOSUPPORT && r != ESOCKTNOSUPPORT && r != EPROTOTYPE)
			return r;
	}
	return r;
}

/*
 * AF_INET and AF_INET6 sockets: only the protocols TCP, UDP, ICMP(v6) and
 * the type's default may be named; SCTP (132), DCCP (33), UDP-Lite (136),
 * MPTCP (262) and everything else get EPROTONOSUPPORT (no module loaded on
 * demand), while the allowed ones answer as they would without the filter.
 */
static void
test_sandbox_inet_protocols(void **state)
{
	const struct sock_fprog *prog = *state;
	static const int fams[2] = {AF_INET, AF_INET6};
	size_t f;

	for (f = 0; f < 2; f++) {
		socket_inet_family = fams[f];
		for (socket_protocol = 0; socket_protocol <= 300; socket_protocol++) {
			int with = run_probe(prog, probe_socket_protocol);
			bool allowed = socket_protocol == 0 || socket_protocol == IPPROTO_ICMP ||
				       socket_protocol == IPPROTO_TCP ||
				       socket_protocol == IPPROTO_UDP ||
				       socket_protocol == IPPROTO_ICMPV6;

			if (allowed)
				assert_int_equal(with, run_probe(NULL, probe_socket_protocol));
			else if (with != EPROTONOSUPPORT)
				fail_msg("family %d protocol %d: %d, expected EPROTONOSUPPORT",
					 socket_inet_family, socket_protocol, with);
		}
	}
}

/* socketpair(): the same list. */
static void
test_sandbox_socketpair(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_socketpair_unix), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_socketpair_vsock), EAFNOSUPPORT);
}

/* personality: only PER_LINUX and the query. */
static void
test_sandbox_personality(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_personality_linux32), EPERM);
	assert_int_equal(run_probe(prog, probe_personality_no_aslr), EPERM);
	assert_int_equal(run_probe(prog, probe_personality_high), EPERM);
	assert_int_equal(run_probe(prog, probe_personality_upper), EPERM);
	assert_int_equal(run_probe(prog, probe_personality_query), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_personality_linux), SUCCEEDED);
}

/* clone: namespace flags denied, plain fork works, clone3 says ENOSYS. */
static void
test_sandbox_clone(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_clone_newns), EPERM);
	assert_int_equal(run_probe(prog, probe_clone_newnet), EPERM);
	assert_int_equal(run_probe(prog, probe_fork), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_clone3), ENOSYS);
}

/* ioctl: TIOCSTI and TIOCLINUX denied whatever the upper 32 bits; others allowed. */
static void
test_sandbox_ioctl(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_tiocsti), EPERM);
	assert_int_equal(run_probe(prog, probe_tiocsti_upper), EPERM);
	assert_int_equal(run_probe(prog, probe_tioclinux), EPERM);
	assert_int_equal(run_probe(prog, probe_fionread), run_probe(NULL, probe_fionread));
}

/* An x32 system call never succeeds. */
static void
test_sandbox_x32(void **state)
{
	const struct sock_fprog *prog = *state;
	int r = run_probe(prog, probe_x32_getpid);

	assert_int_not_equal(r, SUCCEEDED);
	/* With the filter it is the filter that answers, by killing. */
	assert_int_equal(r, KILLED + SIGSYS);
}

/* The frontend filter: no exec, no fork, no id changes; the sandbox's denies too. */
static void
test_frontend(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_getpid), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_execve), EPERM);
	assert_int_equal(run_probe(prog, probe_fork), EPERM);
	assert_int_equal(run_probe(prog, probe_clone_newns), EPERM);
	assert_int_equal(run_probe(prog, probe_clone3), EPERM);
	assert_int_equal(run_probe(prog, probe_setuid), EPERM);
	assert_int_equal(run_probe(prog, probe_mount), EPERM);
	assert_int_equal(run_probe(prog, probe_ptrace), EPERM);
	assert_int_equal(run_probe(prog, probe_tiocsti_upper), EPERM);
	assert_int_equal(run_probe(prog, probe_personality_linux32), EPERM);
	assert_int_equal(run_probe(prog, probe_personality_query), SUCCEEDED);
	assert_int_equal(run_probe(prog, probe_x32_getpid), KILLED + SIGSYS);
}

/*
 * What each filter must do with every call numbered from 424 (Linux 5.1,
 * from which every architecture numbers calls alike) to the reviewed
 * maximum: PASSED_FILTER (allowed: the call reaches the kernel) or the
 * errno. Written out here, not read from the policy, so that a wrong entry
 * in either shows. clone3 is ENOSYS in the sandbox, EPERM in the frontend.
 */
#define CLONE3_ERRNO (-1)

static const struct {
	long nr;
	const char *name;
	int want;
} reviewed[] = {
	{424, "pidfd_send_signal", PASSED_FILTER},
	{425, "io_uring_setup", EPERM},
	{426, "io_uring_enter", EPERM},
	{427, "io_uring_register", EPERM},
	{428, "open_tree", EPERM},
	{429, "move_mount", EPERM},
	{430, "fsopen", EPERM},
	{431, "fsconfig", EPERM},
	{432, "fsmount", EPERM},
	{433, "fspick", EPERM},
	{434, "pidfd_open", PASSED_FILTER},
	{435, "clone3", CLONE3_ERRNO},
	{436, "close_range", PASSED_FILTER},
	{437, "openat2", PASSED_FILTER},
	{438, "pidfd_getfd", EPERM},
	{439, "faccessat2", PASSED_FILTER},
	{440, "process_madvise", PASSED_FILTER},
	{441, "epoll_pwait2", PASSED_FILTER},
	{442, "mount_setattr", EPERM},
	{443, "quotactl_fd", EPERM},
	{444, "landlock_create_ruleset", PASSED_FILTER},
	{445, "landlock_add_rule", PASSED_FILTER},
	{446, "landlock_restrict_self", PASSED_FILTER},
	{447, "memfd_secret", ENOSYS},
	{448, "process_mrelease", PASSED_FILTER},
	{449, "futex_waitv", PASSED_FILTER},
	{450, "set_mempolicy_home_node", PASSED_FILTER},
	{451, "cachestat", ENOSYS},
	{452, "fchmodat2", PASSED_FILTER},
	{453, "map_shadow_stack", PASSED_FILTER},
	{454, "futex_wake", PASSED_FILTER},
	{455, "futex_wait", PASSED_FILTER},
	{456, "futex_requeue", PASSED_FILTER},
	{457, "statmount", ENOSYS},
	{458, "listmount", ENOSYS},
	{459, "lsm_get_self_attr", PASSED_FILTER},
	{460, "lsm_set_self_attr", ENOSYS},
	{461, "lsm_list_modules", PASSED_FILTER},
	{462, "mseal", PASSED_FILTER},
	{463, "setxattrat", ENOSYS},
	{464, "getxattrat", ENOSYS},
	{465, "listxattrat", ENOSYS},
	{466, "removexattrat", ENOSYS},
	{467, "open_tree_attr", ENOSYS},
	{468, "file_getattr", ENOSYS},
	{469, "file_setattr", ENOSYS},
	{470, "listns", ENOSYS},
};

/* Native numbers above the reviewed maximum, up to just below the x32 bit. */
static const long above_max[] = {
	SECCOMP_POLICY_REVIEWED_MAX + 1,
	SECCOMP_POLICY_REVIEWED_MAX + 2,
	500,
	512, /* x32's own numbers, called natively */
	547,
	1000,
	0x3fffffff,
};

/* Every reviewed call gets its decision, and everything above the table ENOSYS. */
static void
check_reviewed(const struct sock_fprog *prog, int clone3_errno)
{
	unsigned wrong = 0;
	size_t i;

	assert_int_equal(reviewed[sizeof(reviewed) / sizeof(reviewed[0]) - 1].nr,
			 SECCOMP_POLICY_REVIEWED_MAX);
	for (i = 0; i < sizeof(reviewed) / sizeof(reviewed[0]); i++) {
		int want = reviewed[i].want == CLONE3_ERRNO ? clone3_errno : reviewed[i].want;
		int got = run_notif_probe(prog, reviewed[i].nr);

		assert_int_equal(reviewed[i].nr, 424 + (long)i);
		if (got != want) {
			print_error("%ld %s: %d, expected %d (%d: passed the filter)\n",
				    reviewed[i].nr, reviewed[i].name, got, want, PASSED_FILTER);
			wrong++;
		}
	}
	for (i = 0; i < sizeof(above_max) / sizeof(above_max[0]); i++) {
		int got = run_notif_probe(prog, above_max[i]);

		if (got != ENOSYS) {
			print_error("%ld above the reviewed table: %d, expected ENOSYS\n",
				    above_max[i], got);
			wrong++;
		}
	}
	if (wrong > 0)
		fail_msg("%u calls not as reviewed", wrong);
}

static void
test_sandbox_reviewed(void **state)
{
	check_reviewed(*state, ENOSYS);
}

static void
test_noproc_reviewed(void **state)
{
	check_reviewed(*state, ENOSYS);
}

static void
test_frontend_reviewed(void **state)
{
	check_reviewed(*state, EPERM);
}

/* fanotify: EPERM in every filter (docs/security.md says why). */
static void
test_fanotify(void **state)
{
	const struct sock_fprog *prog = *state;

	assert_int_equal(run_probe(prog, probe_fanotify_init), EPERM);
	assert_int_equal(run_probe(prog, probe_fanotify_mark), EPERM);
}

/*
 * Foreign ABIs still die, whatever the number: the check of the reviewed
 * maximum looks at native calls only, and must not turn an i386 or x32
 * call into an ENOSYS the program could go on from.
 */
static void
test_foreign_abis(void **state)
{
	const struct sock_fprog *prog = *state;

#if defined(__x86_64__)
	assert_int_equal(run_probe(prog, probe_x32_above_max), KILLED + SIGSYS);
	/* Without the filter, i386 calls run where the kernel has IA32_EMULATION. */
	if (run_probe(NULL, probe_i386_getpid) != SUCCEEDED) {
		print_message("this kernel runs no i386 code: its case not tested\n");
		return;
	}
	assert_int_equal(run_probe(NULL, probe_i386_above_max), ENOSYS);
	assert_int_equal(run_probe(prog, probe_i386_getpid), KILLED + SIGSYS);
	assert_int_equal(run_probe(prog, probe_i386_above_max), KILLED + SIGSYS);
#else
	(void)prog;
	skip();
#endif
}

/* Every name and number the policy uses is known, and the table agrees with libseccomp. */
static void
test_check_ok(void **state)
{
	const char *name = "unset";

	(void)state;
	assert_int_equal(seccomp_policy_check(&name), 0);
}

/*
 * A listed call that libseccomp cannot name: the check refuses and names
 * it, and no filter is compiled without its rule.
 */
static void
test_check_unknown_name(void **state)
{
	struct sock_fprog prog = {0};
	const char *name = NULL;

	(void)state;
	wrap_unknown = "kcmp";
	assert_int_equal(seccomp_policy_check(&name), -ENOSYS);
	assert_non_null(name);
	assert_string_equal(name, "kcmp");
	assert_true(seccomp_policy_sandbox(&prog) < 0);
	assert_true(seccomp_policy_frontend(&prog) < 0);
	assert_null(prog.filter);
	wrap_unknown = "setresuid"; /* on the frontend's own list */
	name = NULL;
	assert_int_equal(seccomp_policy_check(&name), -ENOSYS);
	assert_string_equal(name, "setresuid");
	wrap_unknown = NULL;
}

/*
 * A call of the policy's own table that libseccomp does not name (as
 * statmount with 2.5.4): denied by number, and the check passes.
 */
static void
test_check_by_number(void **state)
{
	struct sock_fprog prog = {0};
	const char *name = NULL;

	(void)state;
	wrap_unknown = "statmount";
	assert_int_equal(seccomp_policy_check(&name), 0);
	assert_int_equal(seccomp_policy_sandbox(&prog), 0);
	wrap_unknown = NULL;
	assert_int_equal(run_notif_probe(&prog, 457), ENOSYS);
	seccomp_policy_free(&prog);
}

/* libseccomp and the table disagree on a number: refused, the call named. */
static void
test_check_mismatch(void **state)
{
	struct sock_fprog prog = {0};
	const char *name = NULL;

	(void)state;
	wrap_renumber = "listns";
	wrap_renumber_nr = 999;
	assert_int_equal(seccomp_policy_check(&name), -EINVAL);
	assert_non_null(name);
	assert_string_equal(name, "listns");
	assert_true(seccomp_policy_sandbox(&prog) < 0);
	wrap_renumber = NULL;
}

int
main(void)
{
	const struct CMUnitTest sandbox[] = {
		cmocka_unit_test(test_probes_discriminate),
		cmocka_unit_test_setup_teardown(test_sandbox_denies, setup_sandbox, teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_personality, setup_sandbox,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_clone, setup_sandbox, teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_ioctl, setup_sandbox, teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_x32, setup_sandbox, teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_modify_ldt, setup_sandbox,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_inet_protocols, setup_sandbox,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_socket_families, setup_sandbox,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_socketpair, setup_sandbox,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_noproc, setup_noproc, teardown_prog),
		cmocka_unit_test_setup_teardown(test_frontend, setup_frontend, teardown_prog),
		cmocka_unit_test_setup_teardown(test_sandbox_reviewed, setup_sandbox,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_noproc_reviewed, setup_noproc, teardown_prog),
		cmocka_unit_test_setup_teardown(test_frontend_reviewed, setup_frontend,
						teardown_prog),
		cmocka_unit_test_setup_teardown(test_fanotify, setup_sandbox, teardown_prog),
		cmocka_unit_test_setup_teardown(test_fanotify, setup_noproc, teardown_prog),
		cmocka_unit_test_setup_teardown(test_fanotify, setup_frontend, teardown_prog),
		cmocka_unit_test_setup_teardown(test_foreign_abis, setup_sandbox, teardown_prog),
		cmocka_unit_test_setup_teardown(test_foreign_abis, setup_frontend, teardown_prog),
		cmocka_unit_test(test_check_ok),
		cmocka_unit_test(test_check_unknown_name),
		cmocka_unit_test(test_check_by_number),
		cmocka_unit_test(test_check_mismatch),
	};
	int fd;

	/* A known stdin that is not a terminal, so TIOCSTI without a filter is ENOTTY. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, 0) < 0)
		return 1;
	close(fd);
	return cmocka_run_group_tests(sandbox, NULL, NULL);
}
