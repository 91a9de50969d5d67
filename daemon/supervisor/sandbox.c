/*
 * sandbox.c: the supervisor, pid 1 of a run's namespaces: its start-up, the
 * run's fds, supervision of the code, the artifacts, the failure report. The
 * filesystem is sandbox_fs.c, the code's process sandbox_code.c
 * (sandbox_child.h).
 *
 * This is the most dangerous code in the project. Rules, all on purpose:
 * no malloc, no stdio, no libevent (the process was cloned from the spawner
 * and owns a copy of its memory); every step that can fail reports
 * {step, errno} and exits; the code's process drops everything in the order
 * groups, gid, uid, capabilities, no_new_privs, seccomp, execve.
 */
#include "sandbox_child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cells_msg.h"
#include "cgroup.h"
#include "closefds.h"
#include "dirents.h"
#include "fdpass.h"
#include "landlock.h"
#include "mountinfo.h"
#include "sandbox_egress.h"
#include "spawn_msg.h"

#define SB_WALK_DEPTH 16
#define SB_WALK_ENTRIES 20000
#define SB_TICK_MS 50
/* With cpu.stat, the supervisor sleeps until the earliest moment the run
 * could reach its cpu limit, and at most this long. */
#define SB_CG_TICK_MAX_MS 1000
/* How long the supervisor waits, after SUP_EXIT, for the frontend to close
 * the lifeline before it exits anyway. */
#define SB_LAST_WORD_MS 1000

int
sandbox_layout_init(struct sandbox_layout *ret)
{
	static const char *const tops[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
	struct sandbox_layout l;
	struct stat st;
	size_t i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		char path[32];

		snprintf(path, sizeof(path), "/%s", tops[i]);
		if (lstat(path, &st) < 0)
			continue;
		snprintf(l.tops[l.ntops].name, sizeof(l.tops[l.ntops].name), "%s", tops[i]);
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(path, l.tops[l.ntops].target,
					     sizeof(l.tops[l.ntops].target) - 1);

			if (n < 0 || (size_t)n >= sizeof(l.tops[l.ntops].target) - 1)
				continue;
			l.tops[l.ntops].target[n] = '\0';
			l.tops[l.ntops].is_link = true;
		} else if (!S_ISDIR(st.st_mode))
			continue;
		l.ntops++;
	}
	l.has_alternatives = stat("/etc/alternatives", &st) == 0 && S_ISDIR(st.st_mode);
	l.has_ld_cache = stat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode);
	l.has_ssl = stat("/etc/ssl", &st) == 0 && S_ISDIR(st.st_mode);
	l.has_mplrc = stat("/etc/matplotlibrc", &st) == 0 && S_ISREG(st.st_mode);
	l.has_fonts = stat("/etc/fonts", &st) == 0 && S_ISDIR(st.st_mode);
	for (i = 0; i < 64; i++) {
		char path[48];

		snprintf(path, sizeof(path), "/usr/lib/python3.%zu/lib-dynload", i);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			l.py_dynload |= UINT64_C(1) << i;
	}
	l.clk_tck = (int)sysconf(_SC_CLK_TCK);
	l.landlock_abi = landlock_usable_abi(landlock_abi());
	l.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (l.ncpus < 1)
		l.ncpus = 1;
	if (l.clk_tck <= 0)
		l.clk_tck = 100;
	{
		/* hidden_paths' overlay needs a /usr with no mount beneath it
		 * (main.c warns); read once, the host's mounts are not ours to
		 * watch. A read that fails leaves "" and the warning unsaid. */
		char buf[65536];
		int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			size_t got = 0;
			ssize_t n;

			while (got < sizeof(buf) - 1 &&
			       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
				got += (size_t)n;
			buf[got] = '\0';
			mountinfo_first_below(buf, "/usr", l.usr_submount, sizeof(l.usr_submount));
			close(fd);
		}
	}
	*ret = l;
	return 0;
}

/* ---- allocation-free helpers -------------------------------------------- */

/* The lifeline, kept in a static so the fail path needs no arguments. This
 * is the cloned child's own copy of memory; nothing else writes it. */
static int sb_lifeline = -1;
static int sb_ctl = -1;
static bool sb_prestarted; /* phase one started the interpreter (sandbox_prestart.c) */

/* The spawner's start message: the run's fds. Returns how many came. */
static size_t
sb_wait_start(int *fds, size_t max, uint32_t *ret_flags)
{
	struct sb_start st;
	size_t nfds = 0;
	ssize_t n;

	do
		n = fdpass_recv(sb_ctl, &st, sizeof(st), fds, max, &nfds);
	while (n == -EINTR);
	/* EOF or anything else: this sandbox will never run anything. A
	 * pre-started one takes only a run for it, and only such a run
	 * comes without output pipes (they came with the prepare). */
	if (n != (ssize_t)sizeof(st) || st.magic != SB_START_MAGIC ||
	    ((st.flags & SPAWN_F_PRESTARTED) != 0) != sb_prestarted ||
	    nfds != (sb_prestarted		      ? SPAWN_REQ_NFDS_PRESTARTED
		     : (st.flags & SPAWN_F_WORKSPACE) ? SPAWN_REQ_NFDS_MAX
						      : SPAWN_REQ_NFDS)) {
		if (n > 0)
			fdpass_close_all(fds, nfds);
		_exit(0);
	}
	close(sb_ctl);
	sb_ctl = -1;
	*ret_flags = st.flags;
	return nfds;
}

/*
 * err is a positive errno, as inside the sandbox (errno itself, and the code
 * child's {step, errno} pipe); the lifeline's sup_msg carries -errno, like
 * every fixed struct between the daemon's processes.
 */
__attribute__((noreturn)) void
sandbox_fail(int step, int err)
{
	struct sup_msg m;

	/* Failed while prepared, before any request: wait for the run this
	 * sandbox is given, and tell it why it cannot be run. */
	if (sb_lifeline < 0 && sb_ctl >= 0) {
		int fds[SPAWN_REQ_NFDS_MAX];
		uint32_t flags;
		size_t n = sb_wait_start(fds, SPAWN_REQ_NFDS_MAX, &flags);

		sb_lifeline = fds[1];
		fds[1] = -1;
		fdpass_close_all(fds, n);
	}
	memset(&m, 0, sizeof(m));
	m.type = SUP_SETUP_FAILED;
	m.step = step;
	m.err = -err;
	if (sb_lifeline >= 0)
		(void)send(sb_lifeline, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(127);
}

/* Bring up the loopback interface of the new network namespace. */
static void
sb_loopback(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		sandbox_fail(SANDBOX_STEP_LOOPBACK, errno);
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	SB_CHECK(ioctl(s, SIOCGIFFLAGS, &ifr), SANDBOX_STEP_LOOPBACK);
	ifr.ifr_flags |= IFF_UP;
	SB_CHECK(ioctl(s, SIOCSIFFLAGS, &ifr), SANDBOX_STEP_LOOPBACK);
	close(s);
}

/* ---- supervision ---------------------------------------------------------- */

uint64_t
sandbox_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Parse an unsigned decimal field; advance *p. */
uint64_t
sandbox_stat_u64(const char **p, const char *end)
{
	uint64_t v = 0;

	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && **p >= '0' && **p <= '9') {
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	return v;
}

/* Skip n space-separated fields. */
void
sandbox_stat_skip(const char **p, const char *end, int n)
{
	while (n-- > 0) {
		while (*p < end && **p == ' ')
			(*p)++;
		while (*p < end && **p != ' ')
			(*p)++;
	}
}

void
sandbox_read_stat(const char *path, char *buf, size_t len, int step, const char **ret_p,
		  const char **ret_end)
{
	const char *p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		sandbox_fail(step, errno);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		sandbox_fail(step, n < 0 ? errno : EIO);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL)
		sandbox_fail(step, EIO);
	*ret_p = p + 1;
	*ret_end = buf + n;
}

/*
 * Write over the daemon's command line and environment strings in our copy
 * of its memory. The supervisor is a fork-like clone of the spawner, not an
 * exec (bubblewrap and nsjail exec, so they never have this): /proc/1/cmdline,
 * readable by the code, would show airlockd's argv (--config and --socket
 * paths, the binary's host path), and the environment strings sit right
 * after it. prctl(PR_SET_MM_ARG_START) would need CAP_SYS_RESOURCE in the
 * host's user namespace, and blanking the spawner's own argv at start-up
 * would hide it from the host's administrator too, so each supervisor
 * scrubs its own copy, in place, allocation-free, before anything of a run
 * exists. The bounds are the kernel's (/proc/self/stat fields 48 to 51).
 * The area ends in a NUL, so the kernel shows it as plain argv strings:
 * the title alone, and never the environment.
 */
static void
sb_scrub_cmdline(void)
{
	static const char title[] = "airlockd: supervisor";
	char st[1024];
	const char *p, *end;
	uint64_t arg_start, arg_end, env_start, env_end;

	sandbox_read_stat("/proc/self/stat", st, sizeof(st), SANDBOX_STEP_PROC, &p, &end);
	/* after ")": state is field 3; arg_start is field 48 */
	sandbox_stat_skip(&p, end, 45);
	arg_start = sandbox_stat_u64(&p, end);
	arg_end = sandbox_stat_u64(&p, end);
	env_start = sandbox_stat_u64(&p, end);
	env_end = sandbox_stat_u64(&p, end);
	if (arg_start == 0 || arg_end <= arg_start || env_end < env_start)
		sandbox_fail(SANDBOX_STEP_PROC, EIO);
	memset((void *)(uintptr_t)env_start, 0, (size_t)(env_end - env_start));
	memset((void *)(uintptr_t)arg_start, 0, (size_t)(arg_end - arg_start));
	memcpy((void *)(uintptr_t)arg_start, title,
	       arg_end - arg_start > sizeof(title) ? sizeof(title)
						   : (size_t)(arg_end - arg_start - 1));
}

/*
 * CPU time of the whole run in clock ticks: what pid 1 has reaped
 * (RUSAGE_CHILDREN, which folds in everything those reaped) plus, for every
 * live process, its own and its reaped children's time from /proc/PID/stat.
 * Read in that order, a process reaped in between is missed for one tick,
 * never counted twice.
 */
static uint64_t
sb_cpu_ns(const struct sandbox_layout *l)
{
	struct rusage ru;
	uint64_t ticks = 0, ns;
	struct dirents it;
	const struct dirent64 *d;
	int dfd;

	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		memset(&ru, 0, sizeof(ru));
	ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL +
	     (uint64_t)ru.ru_utime.tv_usec * 1000ULL +
	     (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000ULL;
	dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ns;
	dirents_init(&it, dfd);
	while ((d = dirents_next(&it)) != NULL) {
		char stat_path[300], st[512];
		const char *p, *end;
		ssize_t len;
		int fd;

		if (d->d_name[0] < '1' || d->d_name[0] > '9' || strcmp(d->d_name, "1") == 0)
			continue;
		if ((size_t)snprintf(stat_path, sizeof(stat_path), "%s/stat", d->d_name) >=
		    sizeof(stat_path))
			continue;
		fd = openat(dfd, stat_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, st, sizeof(st) - 1);
		close(fd);
		if (len <= 0)
			continue;
		st[len] = '\0';
		p = strrchr(st, ')');
		if (p == NULL)
			continue;
		end = st + len;
		p++;
		/* after ")": state(3) ... utime is field 14 */
		sandbox_stat_skip(&p, end, 11);
		ticks += sandbox_stat_u64(&p, end); /* utime */
		ticks += sandbox_stat_u64(&p, end); /* stime */
		ticks += sandbox_stat_u64(&p, end); /* cutime */
		ticks += sandbox_stat_u64(&p, end); /* cstime */
	}
	close(dfd);
	return ns + ticks * (1000000000ULL / (uint64_t)l->clk_tck);
}

/* The number after "key " at the start of a line of a control file read
 * through fd (cpu.stat, pids.events); 0 if absent or unreadable. */
static uint64_t
sb_cgroup_key(int fd, const char *key)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return cgroup_parse_key(buf, key);
}

/*
 * CPU time of the whole run: the code's cgroup's usage_usec where there is
 * one (exact, every process, no polling of /proc), less base_ns, what it
 * held before the run (a session's runs share their cgroup: cgroup.h);
 * else from /proc, less what a pre-started interpreter spent before it.
 */
static uint64_t
sb_run_cpu_ns(const struct sandbox_ctx *ctx, uint64_t base_ns)
{
	if (ctx->cpu_stat_fd >= 0) {
		uint64_t ns = sb_cgroup_key(ctx->cpu_stat_fd, "usage_usec") * 1000ULL;

		return ns > base_ns ? ns - base_ns : 0;
	}
	{
		uint64_t ns = sb_cpu_ns(ctx->layout);

		return ns > base_ns ? ns - base_ns : 0;
	}
}

/* Reap every child that has exited; note the code's status. */
static void
sb_reap(pid_t code_pid, int *status, bool *code_done)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
		if (p == code_pid) {
			*status = st;
			*code_done = true;
		}
}

/* Send one candidate artifact: a regular file, opened without following links. */
static void
sb_send_artifact(const char *rel, size_t rel_len, int fd, uint64_t size)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SUP_ARTIFACT;
	m.size = size;
	m.name_len = (uint32_t)rel_len;
	memcpy(m.name, rel, rel_len);
	(void)fdpass_send(sb_lifeline, &m, sizeof(m), &fd, 1);
}

/* Wait until the coarse clock, which stamps file times, has passed t. */
static void
sb_wait_coarse_past(const struct timespec *t)
{
	struct timespec now;

	do {
		struct timespec ts = {0, 200000};

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec > t->tv_nsec))
			return;
		nanosleep(&ts, NULL);
	} while (1);
}

/*
 * Note the time and wait until the coarse clock has passed it: a file
 * changed after this has a newer ctime, one changed before has an older or
 * equal one (whether stamped coarse or fine).
 */
static void
sb_time_fence(struct timespec *ret)
{
	clock_gettime(CLOCK_REALTIME, ret);
	sb_wait_coarse_past(ret);
}

/* Was the file changed after the fence? */
static bool
sb_changed_since(const struct stat *st, const struct timespec *fence)
{
	return st->st_ctim.tv_sec > fence->tv_sec ||
	       (st->st_ctim.tv_sec == fence->tv_sec && st->st_ctim.tv_nsec > fence->tv_nsec);
}

/* The input files as written, to tell unchanged inputs from artifacts. */
struct sb_input {
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
};

static bool
sb_is_unchanged_input(const struct stat *st, const struct sb_input *inputs, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino &&
		    inputs[i].ctime.tv_sec == st->st_ctim.tv_sec &&
		    inputs[i].ctime.tv_nsec == st->st_ctim.tv_nsec)
			return true;
	return false;
}

/*
 * Walk the workspace after every process of the run is gone and send each
 * regular file the code created or changed. Nothing is followed: every open
 * is O_NOFOLLOW relative to an already-open directory; FIFOs (O_NONBLOCK) and
 * anything not regular are skipped; depth and entry count are bounded.
 */
static void
sb_walk(int dfd, char *rel, size_t rel_len, int depth, int *budget, const struct sb_input *inputs,
	uint32_t ninputs, const struct timespec *fence)
{
	struct dirents it;
	const struct dirent64 *d;

	if (depth > SB_WALK_DEPTH)
		return;
	dirents_init(&it, dfd);
	while ((d = dirents_next(&it)) != NULL) {
		size_t nl = strlen(d->d_name), nrel;
		struct stat st;
		int fd;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (--(*budget) < 0)
			return;
		nrel = rel_len + (rel_len ? 1 : 0) + nl;
		if (nrel > SUP_NAME_MAX)
			continue;
		fd = openat(dfd, d->d_name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		if (rel_len)
			rel[rel_len] = '/';
		memcpy(rel + rel_len + (rel_len ? 1 : 0), d->d_name, nl + 1);
		if (S_ISDIR(st.st_mode))
			sb_walk(fd, rel, nrel, depth + 1, budget, inputs, ninputs, fence);
		else if (S_ISREG(st.st_mode) && !sb_is_unchanged_input(&st, inputs, ninputs) &&
			 (fence == NULL || sb_changed_since(&st, fence)))
			sb_send_artifact(rel, nrel, fd, (uint64_t)st.st_size);
		rel[rel_len] = '\0';
		close(fd);
	}
}

/* Record the inputs, and make sure any later change gets a newer ctime. */
static uint32_t
sb_record_inputs(const struct plan_view *pv, struct sb_input *inputs)
{
	struct timespec newest = {0, 0};
	uint32_t i, n = 0;

	for (i = 0; i < pv->nfiles; i++) {
		char path[PROTO_NAME_MAX + sizeof(PLAN_WORKSPACE) + 2];
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), PLAN_WORKSPACE "/%s", pv->files[i].name) >=
			    sizeof(path) ||
		    lstat(path, &st) < 0)
			continue;
		inputs[n].dev = st.st_dev;
		inputs[n].ino = st.st_ino;
		inputs[n].ctime = st.st_ctim;
		n++;
		if (st.st_ctim.tv_sec > newest.tv_sec ||
		    (st.st_ctim.tv_sec == newest.tv_sec && st.st_ctim.tv_nsec > newest.tv_nsec))
			newest = st.st_ctim;
	}
	/* File times come from the coarse clock: wait for it to pass the
	 * inputs' ctime so a write by the code cannot carry the same stamp. */
	if (n > 0)
		sb_wait_coarse_past(&newest);
	return n;
}

/* One run as its supervisor sees it, from its start message to SUP_EXIT. */
struct sb_run {
	struct sandbox_ctx ctx; /* the spawner's, with the run's fds */
	struct plan_view *pv;	/* the parsed plan */
	long pid;		/* the code's main process */
	int pidfd;		/* its pidfd */
	int status;		/* its wait status */
	bool code_done;		/* it was reaped */
	uint32_t reason;	/* enum sup_reason */
	uint64_t start_ns;	/* just before its clone */
	uint64_t end_ns;	/* when the run ended */
	uint64_t cpu_ns;	/* of the whole run, as last read */
	uint64_t cpu_base_ns;	/* cpu.stat usage before the run (a session's cgroup) */
	uint64_t cpu_limit_ns;	/* the plan's */
	uint64_t pids_max0;	/* pids.events "max" before the run */
	/* PLAN_F_CELLS: the cell with the driver (0: none), and its clock
	 * and cpu (sb_run_cpu_ns from 0) at its CELLS_SUP_BEGIN. */
	uint64_t cell, cell_t0, cell_cpu0;
};

/*
 * From the clone to root of the run's namespaces: every fd the spawner does
 * not mean us to have closed, into the run's cgroup, the maps awaited,
 * uid 0, the parent-death signal, the command line scrubbed.
 */
static void
sb_start_up(const struct sandbox_ctx *ctx)
{
	int keep[10] = {ctx->sync_fd,	  ctx->ctl_fd,	       ctx->cgroup_fd, ctx->code_cgroup_fd,
			ctx->cpu_stat_fd, ctx->pids_events_fd, ctx->peak_fd,   ctx->plan_fd,
			ctx->out_fd,	  ctx->err_fd};
	char c;
	int r;

	sb_ctl = ctx->ctl_fd;
	sb_prestarted = ctx->plan_fd >= 0;
	r = closefds_except(keep, 10);
	if (r < 0)
		sandbox_fail(SANDBOX_STEP_FDS, -r);
	/*
	 * Into the run's memory cgroup before anything is charged. "0" in the
	 * v1 `tasks` file moves the writing thread itself, which the kernel
	 * does without the global threadgroup lock (and its RCU grace period,
	 * about 13 ms here) that moving another process by pid costs. We are
	 * single-threaded, so the thread is the whole process; every process
	 * of the run is forked from us and inherits the cgroup. (v2: only when
	 * the kernel could not clone us into sup/ at birth; the code gets its
	 * own cgroup, code/, below.)
	 */
	if (ctx->cgroup_fd >= 0) {
		if (write(ctx->cgroup_fd, "0", 1) != 1)
			sandbox_fail(SANDBOX_STEP_CGROUP, errno);
		close(ctx->cgroup_fd);
	}
	if (read(ctx->sync_fd, &c, 1) != 1)
		sandbox_fail(SANDBOX_STEP_SYNC, EPIPE);
	close(ctx->sync_fd);
	/* The maps are written: become root of the new user namespace. */
	SB_CHECK(setresgid(0, 0, 0), SANDBOX_STEP_SETID);
	SB_CHECK(setresuid(0, 0, 0), SANDBOX_STEP_SETID);
	/*
	 * Die with the spawner. Set only now: a change of uid clears the
	 * parent-death signal. Should the spawner die before this line, the
	 * frontend sees its channel close and exits, which closes our lifeline,
	 * and we exit at the first poll: no sandbox outlives the daemon.
	 */
	SB_CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), SANDBOX_STEP_PDEATHSIG);
	sb_scrub_cmdline();
}

/* Map and parse the plan memfd fd (closed) into pv. */
static void
sb_map_plan(int fd, struct plan_view *pv)
{
	struct stat st;
	void *plan;

	SB_CHECK(fstat(fd, &st), SANDBOX_STEP_PLAN);
	plan = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (plan == MAP_FAILED)
		sandbox_fail(SANDBOX_STEP_PLAN, errno);
	close(fd);
	if (plan_parse(plan, (uint64_t)st.st_size, pv) < 0)
		sandbox_fail(SANDBOX_STEP_PLAN, EINVAL);
}

/* The request: its plan (mapped and parsed into pv), lifeline, output pipes
 * and workspace, into run. */
static void
sb_take_run(struct sandbox_ctx *run, struct plan_view *pv)
{
	int fds[SPAWN_REQ_NFDS_MAX];
	uint32_t flags;

	(void)sb_wait_start(fds, SPAWN_REQ_NFDS_MAX, &flags);
	run->plan_fd = fds[0];
	run->lifeline_fd = fds[1];
	/* A pre-started interpreter has its pipes since its exec. */
	run->out_fd = sb_prestarted ? -1 : fds[2];
	run->err_fd = sb_prestarted ? -1 : fds[3];
	run->workspace_fd = (flags & SPAWN_F_WORKSPACE) ? fds[4] : -1;
	sb_lifeline = run->lifeline_fd;
	sb_map_plan(run->plan_fd, pv);
}

/* The run starts now: its wall clock, and what its cgroup counted before
 * (a session's runs share their cgroup, and a pre-started interpreter's
 * start-up is not its run's). */
static void
sb_run_baseline(struct sb_run *r)
{
	r->start_ns = sandbox_now_ns();
	/* kernfs signals a change of pids.events to a poller that has read it. */
	if (r->ctx.pids_events_fd >= 0)
		r->pids_max0 = sb_cgroup_key(r->ctx.pids_events_fd, "max");
	if (r->ctx.cpu_stat_fd >= 0)
		r->cpu_base_ns = sb_cgroup_key(r->ctx.cpu_stat_fd, "usage_usec") * 1000ULL;
	else if (sb_prestarted)
		r->cpu_base_ns = sb_cpu_ns(r->ctx.layout);
}

/* Clone the code and wait for its exec: EOF on the exec pipe, or its
 * {step, errno}, which fails the run. */
static void
sb_start_code(struct sb_run *r)
{
	int exec_pipe[2];

	SB_CHECK(pipe2(exec_pipe, O_CLOEXEC), SANDBOX_STEP_FORK);
	sb_run_baseline(r);
	r->pid = sandbox_code_start(&r->ctx, r->pv, exec_pipe, &r->pidfd);
	if (r->pid < 0)
		sandbox_fail(SANDBOX_STEP_FORK, errno);
	close(exec_pipe[1]);
	/* Only the code holds the output pipes now: EOF means it is all gone. */
	close(r->ctx.out_fd);
	close(r->ctx.err_fd);
	{
		int32_t rep[2];
		ssize_t n;

		do
			n = read(exec_pipe[0], rep, sizeof(rep));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(rep)) {
			kill(-1, SIGKILL);
			sandbox_fail(rep[0], rep[1]);
		}
		close(exec_pipe[0]);
	}
}

/*
 * Until the code's main process ends or a limit is reached: the lifeline
 * (anything on it ends the run at once), the code's pidfd, pids.events, and
 * a timer for the wall and cpu limits.
 */
static void
sb_supervise(struct sb_run *r)
{
	const struct sandbox_ctx *ctx = &r->ctx;
	uint64_t deadline_ns = r->start_ns + r->pv->hdr->limits[PROTO_LIMIT_WALL_MS] * 1000000ULL;

	r->cpu_limit_ns = r->pv->hdr->limits[PROTO_LIMIT_CPU_MS] * 1000000ULL;
	while (!r->code_done) {
		struct pollfd p[3] = {{.fd = sb_lifeline, .events = POLLIN},
				      {.fd = r->pidfd, .events = POLLIN},
				      {.fd = ctx->pids_events_fd, .events = POLLPRI}};
		uint64_t now = sandbox_now_ns();
		int timeout;

		if (now >= deadline_ns) {
			r->reason = SUP_REASON_WALL;
			break;
		}
		{
			uint64_t t = SB_TICK_MS, left = (deadline_ns - now) / 1000000ULL + 1;

			/* With cpu.stat, no tick: the run cannot spend the cpu
			 * time it has left faster than on every CPU at once. */
			if (ctx->cpu_stat_fd >= 0) {
				t = (r->cpu_limit_ns - r->cpu_ns) / (uint64_t)ctx->layout->ncpus /
					    1000000ULL +
				    1;
				if (t > SB_CG_TICK_MAX_MS)
					t = SB_CG_TICK_MAX_MS;
			}
			timeout = (int)(left < t ? left : t);
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		/* Anything on the lifeline (EOF, or the frontend gone) ends the run. */
		if (p[0].revents != 0)
			_exit(0);
		sb_reap((pid_t)r->pid, &r->status, &r->code_done);
		if (r->code_done)
			break;
		/*
		 * A fork or thread refused at pids.max ends the run, as an
		 * oom kill does: a fork bomb is stopped at once, and the
		 * outcome says why (not a wall limit much later).
		 */
		if (p[2].revents != 0 && sb_cgroup_key(ctx->pids_events_fd, "max") > r->pids_max0) {
			r->reason = SUP_REASON_PROCS;
			break;
		}
		r->cpu_ns = sb_run_cpu_ns(ctx, r->cpu_base_ns);
		if (r->cpu_ns >= r->cpu_limit_ns) {
			r->reason = SUP_REASON_CPU;
			break;
		}
	}
}

/*
 * An interpreter session's sandbox (PLAN_F_CELLS): the code is the driver,
 * alive for the session; the limits are a cell's, from the frontend's
 * CELLS_SUP_BEGIN to its CELLS_SUP_FINISH (cells_msg.h). At a cell's wall or
 * cpu limit the interpreter gets SIGINT (KeyboardInterrupt: its state is
 * kept); no FINISH within the grace after it, and the run ends here with
 * that limit as its reason (sb_end kills everything; the frontend starts a
 * new interpreter: the state is lost). At FINISH every other process dies
 * and SUP_CELL_END follows. CELLS_SUP_KILL ends the run (the frontend gives
 * the interpreter up); any other message, or EOF, ends it at once. A cell
 * still with the driver when the run ends gets its own figures in
 * SUP_CELL_LOST (sandbox_main).
 *
 * Between two cells the interpreter is stopped (SIGSTOP at FINISH, SIGCONT
 * at BEGIN): the threads a cell left running spend nothing, and fork
 * nothing, while no cell's limits count (docs/security.md). What the stop
 * costs a cell: docs/performance.md (tests/bench/airlockd-nostop).
 */
static void
sb_supervise_cells(struct sb_run *r)
{
	const struct sandbox_ctx *ctx = &r->ctx;
	struct cells_sup cell;
	bool active = false, interrupted = false;
	uint64_t t0 = 0, cpu0 = 0, deadline = 0, grace_end = 0, cpu_max = 0;

	/* The interpreter's own total is RLIMIT_CPU's (sandbox_code.c). */
	r->cpu_limit_ns = UINT64_MAX;
	memset(&cell, 0, sizeof(cell));
	while (!r->code_done) {
		struct pollfd p[3] = {{.fd = sb_lifeline, .events = POLLIN},
				      {.fd = r->pidfd, .events = POLLIN},
				      {.fd = ctx->pids_events_fd, .events = POLLPRI}};
		uint64_t now = sandbox_now_ns(), used;
		int timeout = -1;

		if (active) {
			used = sb_run_cpu_ns(ctx, 0);
			used = used > cpu0 ? used - cpu0 : 0;
			if (!interrupted && (now >= deadline || used >= cpu_max)) {
				r->reason = now >= deadline ? SUP_REASON_WALL : SUP_REASON_CPU;
				/*
				 * To the main thread only, where the driver runs
				 * the cell (and blocks SIGINT between cells). A
				 * process-directed SIGINT that came after the
				 * cell's end would go to a thread the cell left
				 * unblocked, and Python raises KeyboardInterrupt
				 * in its main thread wherever it then is: in the
				 * driver, or in the next cell.
				 */
				syscall(SYS_tgkill, (pid_t)r->pid, (pid_t)r->pid, SIGINT);
				interrupted = true;
				grace_end = now + cell.grace_ms * 1000000ULL;
			}
			if (interrupted && now >= grace_end)
				return;
			timeout = (int)(((interrupted ? grace_end : deadline) - now) / 1000000ULL +
					1);
			if (!interrupted && timeout > SB_TICK_MS)
				timeout = SB_TICK_MS;
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			return;
		if (p[0].revents != 0) {
			struct cells_sup m;
			ssize_t n = recv(sb_lifeline, &m, sizeof(m), MSG_DONTWAIT);

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n != (ssize_t)sizeof(m))
				_exit(0);
			if (m.type == CELLS_SUP_BEGIN && !active) {
				cell = m;
				active = true;
				interrupted = false;
				r->reason = SUP_REASON_EXITED;
				t0 = sandbox_now_ns();
				cpu0 = sb_run_cpu_ns(ctx, 0);
				deadline = t0 + m.wall_ms * 1000000ULL;
				cpu_max = m.cpu_ms * 1000000ULL;
				r->cell = m.cell;
				r->cell_t0 = t0;
				r->cell_cpu0 = cpu0;
				sandbox_cells_peak_reset(ctx->peak_fd);
				kill((pid_t)r->pid, SIGCONT);
			} else if (m.type == CELLS_SUP_FINISH && active && m.cell == cell.cell) {
				/* Stopped first: a thread of the cell's forks no
				 * more while the others die. What cannot be shown
				 * dead ends the run, the interpreter with it
				 * (sb_end kills everything): nothing of a cell
				 * runs after it. */
				kill((pid_t)r->pid, SIGSTOP);
				if (sandbox_cells_kill_others((pid_t)r->pid) < 0)
					return;
				used = sb_run_cpu_ns(ctx, 0);
				sandbox_cells_end(sb_lifeline, SUP_CELL_END, cell.cell, r->reason,
						  used > cpu0 ? used - cpu0 : 0,
						  sandbox_now_ns() - t0, ctx->peak_fd);
				active = false;
				r->cell = 0;
				r->reason = SUP_REASON_EXITED;
			} else if (m.type == CELLS_SUP_KILL) {
				return;
			} else {
				_exit(0);
			}
		}
		sb_reap((pid_t)r->pid, &r->status, &r->code_done);
		if (p[2].revents != 0 && sb_cgroup_key(ctx->pids_events_fd, "max") > r->pids_max0) {
			r->reason = SUP_REASON_PROCS;
			return;
		}
	}
}

/* The run ends with its main process: nothing else may outlive it. Kill and
 * reap everything, then settle the cpu time and the reason. */
static void
sb_end(struct sb_run *r)
{
	const struct sandbox_ctx *ctx = &r->ctx;
	int st = r->status;

	r->end_ns = sandbox_now_ns();
	kill(-1, SIGKILL);
	for (;;) {
		int st2;
		pid_t p = waitpid(-1, &st2, __WALL);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == (pid_t)r->pid && !r->code_done)
			st = st2;
	}
	r->status = st;
	if (r->cpu_ns < r->cpu_limit_ns || r->code_done)
		r->cpu_ns = sb_run_cpu_ns(ctx, r->cpu_base_ns);
	/* The code ended by itself, but not well, after a refused fork. */
	if (r->reason == SUP_REASON_EXITED && ctx->pids_events_fd >= 0 &&
	    !(WIFEXITED(st) && WEXITSTATUS(st) == 0) &&
	    sb_cgroup_key(ctx->pids_events_fd, "max") > r->pids_max0)
		r->reason = SUP_REASON_PROCS;
	if (r->reason == SUP_REASON_EXITED && r->cpu_ns >= r->cpu_limit_ns && WIFSIGNALED(st) &&
	    (WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGKILL))
		r->reason = SUP_REASON_CPU;
}

/* Send the artifacts (fence: a session's, only what changed after it) and
 * the final SUP_EXIT. */
static void
sb_report(const struct sb_run *r, const struct sb_input *inputs, uint32_t ninputs,
	  const struct timespec *fence)
{
	char rel[SUP_NAME_MAX + 2];
	int budget = SB_WALK_ENTRIES;
	int wfd = open(PLAN_WORKSPACE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct sup_msg m;

	rel[0] = '\0';
	if (wfd >= 0) {
		sb_walk(wfd, rel, 0, 0, &budget, inputs, ninputs, fence);
		close(wfd);
	}
	memset(&m, 0, sizeof(m));
	m.type = SUP_EXIT;
	m.status = r->status;
	m.reason = r->reason;
	m.cpu_ns = r->cpu_ns;
	m.wall_ns = r->end_ns - r->start_ns;
	(void)send(sb_lifeline, &m, sizeof(m), MSG_NOSIGNAL);
	/*
	 * Our last word. Asleep until the frontend closes the lifeline on it
	 * (or SB_LAST_WORD_MS), we leave this core to the frontend, which
	 * answers the run now: our exit (our copy of the spawner's memory,
	 * the namespaces' teardown) comes after the answer, not before it
	 * (docs/performance.md, "Where the time of a pre-started run goes").
	 */
	{
		struct pollfd p = {.fd = sb_lifeline, .events = POLLIN};

		(void)poll(&p, 1, SB_LAST_WORD_MS);
	}
}

/*
 * A pre-starting sandbox (docs/design-interpreters.md §1): in phase one, the
 * pre-start plan's mounts and its interpreter, started as sb_start_code
 * starts any code, which blocks on its FIFO; then the run (a plain prepared
 * sandbox's phase two, but the interpreter's exec is done), its limits
 * lowered, its clock started, its code fed.
 */
static void
sb_prestart(struct sb_run *r, struct sb_input *inputs, uint32_t *ret_ninputs)
{
	static struct plan_view pv0; /* the pre-start plan, as pv */
	struct plan_view *pv = r->pv;

	sb_map_plan(r->ctx.plan_fd, &pv0);
	r->ctx.plan_fd = -1;
	sandbox_fs_prestart(&pv0);
	SB_CHECK(sethostname(pv0.hostname, strlen(pv0.hostname)), SANDBOX_STEP_HOSTNAME);
	r->pv = &pv0;
	sb_start_code(r);
	r->pv = pv;

	sandbox_prestart_wait(sb_ctl, r->pidfd);
	sb_take_run(&r->ctx, r->pv);
	sandbox_prestart_handoff(&pv0, pv, r->ctx.rootspec, r->ctx.layout, r->pid, r->pidfd);
	*ret_ninputs = sb_record_inputs(pv, inputs);
	sb_run_baseline(r);
	sandbox_prestart_feed(pv, r->pid, r->pidfd,
			      r->start_ns + pv->hdr->limits[PROTO_LIMIT_WALL_MS] * 1000000ULL);
}

__attribute__((noreturn)) void
sandbox_main(const struct sandbox_ctx *ctx)
{
	static struct plan_view pv; /* the child's own copy; see sb_lifeline */
	/* Static like pv: PLAN_FILES_MAX rows do not belong on the stack. */
	static struct sb_input inputs[PLAN_FILES_MAX];
	struct timespec fence = {0, 0};
	struct sb_run r;
	uint32_t ninputs;
	bool session = false;

	sb_start_up(ctx);

	/* Phase one: what does not depend on a request, done ahead. */
	sandbox_fs_base(ctx->layout, ctx->rootspec);
	sb_loopback();

	memset(&r, 0, sizeof(r));
	r.ctx = *ctx;
	r.pv = &pv;
	r.pidfd = -1;
	r.reason = SUP_REASON_EXITED;
	if (sb_prestarted) {
		sb_prestart(&r, inputs, &ninputs);
	} else {
		sb_take_run(&r.ctx, &pv);

		/* Phase two. */
		sandbox_fs_run(&pv, ctx->rootspec, r.ctx.workspace_fd);
		if ((pv.hdr->flags & PLAN_F_TOOLS) != 0)
			sandbox_tools_setup(sb_lifeline);
		SB_CHECK(sethostname(pv.hostname, strlen(pv.hostname)), SANDBOX_STEP_HOSTNAME);
		if (pv.hdr->flags & PLAN_F_EGRESS)
			sandbox_egress_listen(sb_lifeline, (uint16_t)pv.hdr->egress_port);
		ninputs = sb_record_inputs(&pv, inputs);
		/* A session's workspace holds earlier runs' files: only what this run
		 * creates or changes is its artifact. */
		session = (pv.hdr->flags & PLAN_F_SESSION) != 0;
		if (session)
			sb_time_fence(&fence);

		if (pv.hdr->flags & PLAN_F_CELLS)
			r.ctx.cell_fd = sandbox_cells_channel(sb_lifeline);
		sb_start_code(&r);
	}
	if (pv.hdr->flags & PLAN_F_CELLS) {
		close(r.ctx.cell_fd);
		sb_supervise_cells(&r);
	} else {
		sb_supervise(&r);
	}
	sb_end(&r);
	/* The interpreter's figures are its whole life; the cell it ended in
	 * gets its own, from its CELLS_SUP_BEGIN, once everything is reaped. */
	if (r.cell != 0)
		sandbox_cells_end(sb_lifeline, SUP_CELL_LOST, r.cell, r.reason,
				  sb_run_cpu_ns(&r.ctx, r.cell_cpu0), r.end_ns - r.cell_t0,
				  r.ctx.peak_fd);
	sb_report(&r, inputs, ninputs, session ? &fence : NULL);
	_exit(0);
}
