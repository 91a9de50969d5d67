/*
 * sandbox_prestart.c: the supervisor's side of a pre-started single-use
 * interpreter (docs/design-interpreters.md §1). In phase one the supervisor
 * started the runtime's interpreter from the pre-start plan, exactly as a
 * fresh run's code is started (sandbox_code.c), with its code file a FIFO
 * (sandbox_fs_prestart): CPython finishes its start-up and blocks in the
 * open() of its script. Here: the wait for the run, the checks that the run
 * is the one the interpreter was started for, the hand-off of its limits and
 * files, and the code fed through the FIFO. One interpreter, one exec, one
 * run: nothing of it is ever reused.
 *
 * Allocation-free, no stdio: this is the supervisor (sandbox_child.h).
 */
#include "sandbox_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "limit.h"
#include "spawn_msg.h"

/* The plan flags a pre-started interpreter cannot serve: each changes what
 * was fixed at its exec (the filter, Landlock, the environment, the mounts). */
#define SB_PRESTART_REFUSED                                                                        \
	(PLAN_F_SESSION | PLAN_F_READONLY | PLAN_F_NOPROC | PLAN_F_EGRESS | PLAN_F_TOOLS |         \
	 PLAN_F_CELLS)

/*
 * The interpreter died while waiting for its run. The frontend may have
 * given it a run in the meantime: after the shutdown no start message can
 * come any more (the spawner's send fails, EPIPE, and it tells the run),
 * and one that came before it is answered with the step "prestart", which
 * has the frontend run it in a fresh sandbox. Either way the run never
 * meets this sandbox, and our exit makes the frontend refill the pool.
 */
__attribute__((noreturn)) static void
sb_ps_gone(int ctl)
{
	char c;

	(void)shutdown(ctl, SHUT_RD);
	if (recv(ctl, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0)
		sandbox_fail(SANDBOX_STEP_PRESTART, ECHILD);
	_exit(0);
}

void
sandbox_prestart_wait(int ctl, int pidfd)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = ctl, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		/* The run came (or the spawner closed the socket: the start
		 * message read says which). */
		if (p[0].revents != 0)
			return;
		/* Died before its run: this sandbox serves no run. Our exit
		 * ends the pid namespace; the frontend sees the reap
		 * (SPAWN_DONE) and prepares another. */
		if (p[1].revents != 0)
			sb_ps_gone(ctl);
	}
}

/* Whether two NULL-terminated string vectors are equal. */
static bool
sb_ps_same_strv(const char *const *a, const char *const *b)
{
	for (; *a != NULL && *b != NULL; a++, b++)
		if (strcmp(*a, *b) != 0)
			return false;
	return *a == NULL && *b == NULL;
}

/*
 * The run's plan must be the command the interpreter was started with:
 * argv, environment, working directory, code name and host name equal, no
 * flag that changes what was fixed at exec, and every limit enforced by an
 * rlimit at most the pre-start plan's (an rlimit is only ever lowered). The
 * frontend hands a pre-started sandbox only such a run; a plan that is not
 * fails the run here rather than run in an interpreter made for another.
 */
static void
sb_ps_check(const struct plan_view *pv0, const struct plan_view *pv, const struct sandbox_layout *l)
{
	size_t i;

	if (!sb_ps_same_strv(pv0->argv, pv->argv) || !sb_ps_same_strv(pv0->envp, pv->envp) ||
	    strcmp(pv0->cwd, pv->cwd) != 0 || strcmp(pv0->code_name, pv->code_name) != 0 ||
	    pv->code_name[0] == '\0' || strcmp(pv0->hostname, pv->hostname) != 0 ||
	    (pv->hdr->flags & SB_PRESTART_REFUSED) != 0 || pv->stdin_data != NULL ||
	    pv->nhidden != 0)
		sandbox_fail(SANDBOX_STEP_PRESTART, EINVAL);
	/* The limits lowered at the hand-off, where an rlimit is in force
	 * (with a memory cgroup the memory limit is not RLIMIT_AS): never
	 * above the interpreter's, which it started with. */
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		uint64_t cur, max;

		if (!limit_table[i].prestart_lower ||
		    !sandbox_rlimit(l, pv->hdr->limits, i, 0, &cur, &max))
			continue;
		if (pv->hdr->limits[i] > pv0->hdr->limits[i])
			sandbox_fail(SANDBOX_STEP_PRESTART, EINVAL);
	}
}

/* Lower one of the interpreter's rlimits (never raise: the hard limit only
 * goes down, and a value above the current is left as it is). */
static void
sb_ps_lower(long pid, int res, uint64_t cur, uint64_t max)
{
	struct rlimit old, rl;

	SB_CHECK(prlimit((pid_t)pid, res, NULL, &old), SANDBOX_STEP_RLIMIT);
	rl.rlim_cur = cur < old.rlim_max ? cur : old.rlim_max;
	rl.rlim_max = max < old.rlim_max ? max : old.rlim_max;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	SB_CHECK(prlimit((pid_t)pid, res, &rl, NULL), SANDBOX_STEP_RLIMIT);
}

/* CPU seconds the interpreter has used so far, rounded up (utime + stime of
 * /proc/PID/stat, in our pid namespace's proc). */
static uint64_t
sb_ps_cpu_s(long pid, const struct sandbox_layout *l)
{
	char path[32], st[512];
	const char *p, *end;
	uint64_t ticks;

	SB_PATH(path, SANDBOX_STEP_PRESTART, "/proc/%ld/stat", pid);
	sandbox_read_stat(path, st, sizeof(st), SANDBOX_STEP_PRESTART, &p, &end);
	/* after ")": state is field 3; utime and stime are 14 and 15 */
	sandbox_stat_skip(&p, end, 11);
	ticks = sandbox_stat_u64(&p, end);
	ticks += sandbox_stat_u64(&p, end);
	return (ticks + (uint64_t)l->clk_tck - 1) / (uint64_t)l->clk_tck;
}

void
sandbox_prestart_handoff(const struct plan_view *pv0, const struct plan_view *pv,
			 const struct rootspec *rs, const struct sandbox_layout *l, long pid,
			 int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	uint64_t cpu_used_s;
	size_t i;

	/* Gone between the run's start message and now: the run is told
	 * (the step "prestart"); it never ran anything, and the frontend
	 * runs it again in a fresh sandbox. So does any failure of the
	 * hand-off (sandbox_fail): the code has not been fed yet. */
	if (poll(&p, 1, 0) != 0)
		sandbox_fail(SANDBOX_STEP_PRESTART, ECHILD);
	sb_ps_check(pv0, pv, l);
	sandbox_fs_handoff(pv, rs);
	/*
	 * The run's limits, set from outside: root of the run's user namespace
	 * may lower the rlimits of a process in it (CAP_SYS_RESOURCE over it);
	 * they were the ceilings since the exec. The same values as
	 * sandbox_code_exec sets for a fresh run (sandbox_rlimit, a loop over
	 * the limit table's rows lowered at the hand-off), but RLIMIT_CPU,
	 * which counts the start-up too: what was used, plus the run's.
	 */
	cpu_used_s = sb_ps_cpu_s(pid, l);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		uint64_t cur, max;

		if (limit_table[i].prestart_lower &&
		    sandbox_rlimit(l, pv->hdr->limits, i, cpu_used_s, &cur, &max))
			sb_ps_lower(pid, limit_table[i].rlimit, cur, max);
	}
}

/*
 * Open the FIFO for writing once the interpreter reads it: O_NONBLOCK fails
 * with ENXIO while no reader is there (it may still be starting up); the
 * interpreter's pidfd and the deadline bound the wait. Returns the fd, or -1
 * at the deadline (the wall limit then ends the run); the interpreter gone
 * first fails the hand-off.
 */
static int
sb_ps_open_fifo(const char *path, int pidfd, uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);

		if (fd >= 0)
			return fd;
		if (errno != ENXIO && errno != EINTR)
			sandbox_fail(SANDBOX_STEP_PRESTART, errno);
		if (sandbox_now_ns() >= deadline_ns)
			return -1;
		/* Gone before it read its code: nothing of the run ran; the
		 * frontend runs it in a fresh sandbox. */
		if (poll(&p, 1, 1) > 0)
			sandbox_fail(SANDBOX_STEP_PRESTART, ECHILD);
	}
}

void
sandbox_prestart_feed(const struct plan_view *pv, long pid, int pidfd, uint64_t deadline_ns)
{
	struct sigaction sa;
	char path[256];
	const uint8_t *c = pv->code;
	uint64_t left = pv->hdr->code_len;
	int fd;

	/* A reader gone mid-write is EPIPE, not the end of the supervisor. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	SB_PATH(path, SANDBOX_STEP_PRESTART, PLAN_CODE_DIR "/%s", pv->code_name);
	fd = sb_ps_open_fifo(path, pidfd, deadline_ns);
	if (fd < 0)
		return;
	/* The reader holds the FIFO now: the name can become the file. */
	sandbox_fs_code_swap(pv);
	while (left > 0) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLOUT},
				      {.fd = pidfd, .events = POLLIN}};
		uint64_t now = sandbox_now_ns();
		ssize_t n;

		if (now >= deadline_ns)
			break;
		n = write(fd, c, left > (1U << 20) ? (1U << 20) : (size_t)left);
		if (n > 0) {
			c += n;
			left -= (uint64_t)n;
			continue;
		}
		/* EPIPE, or gone: CPython compiles the whole script before it
		 * runs any of it, so without its EOF none of the code ran. */
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			sandbox_fail(SANDBOX_STEP_PRESTART, errno);
		if (poll(p, 2, (int)((deadline_ns - now) / 1000000ULL) + 1) < 0 && errno != EINTR)
			sandbox_fail(SANDBOX_STEP_PRESTART, errno);
		if (p[1].revents != 0)
			sandbox_fail(SANDBOX_STEP_PRESTART, ECHILD);
	}
	/* The wall limit came with code still unwritten: a truncated script
	 * must not run (its first lines may be whole statements). */
	if (left > 0)
		kill((pid_t)pid, SIGKILL);
	/* EOF: the interpreter runs what it read. */
	close(fd);
}
