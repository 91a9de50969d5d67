/*
 * sandbox_cells.c: the supervisor's side of an interpreter session
 * (PLAN_F_CELLS, docs/design-interpreters.md §2), between clone and exec and
 * after: no allocation, no stdio. The loop that times each cell is
 * sandbox_supervise_cells() in sandbox_supervise.c, beside the one-shot loop
 * it mirrors.
 */
#include "sandbox_child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cells_msg.h"
#include "childstop.h"
#include "fdpass.h"
#include "spawn_msg.h"

/*
 * The end-of-cell kill's bounds, in time, not in counts: on a loaded host
 * (load 10 on 2 cores) a stopped or killed process may wait a long while
 * for a core to act on its signal, and a bound of 0.1 s for the stop and
 * 200 passes for the exits ended sessions there that had nothing wrong
 * (interpreter lost, signaled 9, seen in python-binding under load). The
 * usual cell pays nothing for the width: its interpreter stops within
 * microseconds and its leftovers, if any, die within a pass or two. The
 * interpreter's stop is waited for asleep (childstop.c), for at most 2 s;
 * a background process's end (process_stop) is polled 100 times a yield
 * apart, then every 20 us, for at most 2 s; the passes are 1 ms apart,
 * for at most 5 s.
 */
#define SB_CELLS_STOP_MAX_NS 2000000000ULL
#define SB_CELLS_STOP_YIELDS 100
#define SB_CELLS_STOP_PAUSE_NS 20000L
#define SB_CELLS_KILL_MAX_NS 5000000000ULL
#define SB_CELLS_PAUSE_NS 1000000L

int
sandbox_cells_channel(int lifeline)
{
	struct sup_msg m;
	int pair[2];

	/*
	 * The driver's end becomes the code's fd 0 (sandbox_code.c); the other
	 * goes to the frontend, which speaks to the driver directly: the
	 * supervisor, which keeps capabilities in the run's namespace, never
	 * reads a byte the code wrote.
	 */
	SB_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), SANDBOX_STEP_CELLS);
	memset(&m, 0, sizeof(m));
	m.type = SUP_CELLS;
	if (fdpass_send(lifeline, &m, sizeof(m), &pair[0], 1) < 0)
		sandbox_fail(SANDBOX_STEP_CELLS, EPIPE);
	close(pair[0]);
	return pair[1];
}

/*
 * Whether pid's thread group has ended: gone, or its leader a zombie (Z, X)
 * with no thread left. The leader's state alone says nothing of the group:
 * a leader whose main thread called exit (SYS_exit, not exit_group) is a
 * zombie while its other threads run on (issue 28, point 2). num_threads,
 * the kernel's signal->nr_threads, counts every thread not yet released,
 * dying ones included, so a group is ended only once its last thread is.
 */
/* /proc/pid/stat into buf (NUL-terminated): its length, or 0 if the process
 * is gone or the file cannot be read. */
static size_t
sb_cells_stat(long pid, char *buf, size_t len)
{
	char path[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (size_t)n;
}

static bool
sb_cells_ended(long pid)
{
	char buf[512], *p;
	int field;

	if (sb_cells_stat(pid, buf, sizeof(buf)) == 0)
		return true;
	/* "pid (comm) S ...": comm may hold anything, so the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return false;
	if (p[2] != 'Z' && p[2] != 'X')
		return false;
	/* num_threads is the 20th field, the 18th after the state. */
	for (p += 2, field = 0; *p != '\0' && field < 17; p++)
		if (*p == ' ')
			field++;
	/* A line cut short says nothing: not ended, looked at again. */
	return field == 17 && *p >= '0' && *p <= '9' && strtol(p, NULL, 10) <= 1;
}

/*
 * The last pid given out in our pid namespace: /proc/loadavg's last field is
 * read in the reader's namespace. -1 if it cannot be read.
 */
static long
sb_cells_last_pid(void)
{
	char buf[128], *p;
	ssize_t n;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	p = strrchr(buf, ' ');
	if (p == NULL || p[1] < '0' || p[1] > '9')
		return -1;
	return strtol(p + 1, NULL, 10);
}

/*
 * Call step(keep) until it answers 0 (done) or -errno, at least once and
 * until max_ns have passed; 1 means "not yet". Between passes the first
 * `yields` give the core away (sched_yield), the rest sleep pause_ns. The
 * one bounded polling loop of the cells: a stop and a kill are waited for
 * without a fixed sleep standing for them, and never for longer than the
 * bound. -EBUSY past it.
 */
static int
sb_cells_poll(uint64_t max_ns, int yields, long pause_ns, int (*step)(pid_t), pid_t keep)
{
	uint64_t end = sandbox_now_ns() + max_ns;
	int pass, r;

	for (pass = 0; pass == 0 || sandbox_now_ns() < end; pass++) {
		struct timespec ts = {0, pause_ns};

		r = step(keep);
		if (r <= 0)
			return r;
		if (pass < yields)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
	return -EBUSY;
}

/*
 * Whether keep is stopped or has ended, waiting at most
 * SB_CELLS_STOP_MAX_NS: a thread in an uninterruptible wait may not stop
 * by then (sandbox_cells_kill_others says what follows). A stop takes
 * microseconds: yields first, the core to it.
 */
static bool
sb_cells_wait_stopped(pid_t keep)
{
	/* Asleep until the stop's SIGCHLD, not polling: the interpreter needs
	 * a core to complete its own stop (childstop.c). */
	return childstop_wait(keep, SB_CELLS_STOP_MAX_NS) == 0;
}

/*
 * Call fn(pid, arg) for every process of our pid namespace but 1 (us) and
 * keep, from /proc with no allocation: 0 when the walk was whole, -errno
 * when /proc could not be opened or read to its end.
 */
static int
sb_cells_each_pid(pid_t keep, void (*fn)(long pid, void *arg), void *arg)
{
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096];
	long n;

	if (dfd < 0)
		return -errno;
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			long pid = 0;
			const char *c;

			off += d->d_reclen;
			for (c = d->d_name; *c >= '0' && *c <= '9' && pid < 1L << 30; c++)
				pid = pid * 10 + (*c - '0');
			if (*c != '\0' || pid <= 1 || pid == (long)keep)
				continue;
			fn(pid, arg);
		}
	}
	close(dfd);
	return n < 0 ? -EIO : 0;
}

/* sb_cells_kill_pass's step: SIGKILL, and count it if it has not ended. */
static void
sb_cells_kill_one(long pid, void *arg)
{
	(void)kill((pid_t)pid, SIGKILL);
	if (!sb_cells_ended(pid))
		++*(int *)arg;
}

/* One SIGKILL pass over the namespace but 1 and keep: 0 if it found
 * nothing left and no pid was given out meanwhile, 1 if not, -errno. */
static int
sb_cells_kill_pass(pid_t keep)
{
	long last = sb_cells_last_pid();
	int alive = 0, r = sb_cells_each_pid(keep, sb_cells_kill_one, &alive);

	if (r == -EIO)
		alive++; /* a walk cut short proves nothing */
	else if (r < 0)
		return r;
	return alive == 0 && last >= 0 && sb_cells_last_pid() == last ? 0 : 1;
}

/* SIGKILL passes until one finds nothing left and no pid given out
 * meanwhile; -EBUSY past the bound. */
static int
sb_cells_kill_passes(pid_t keep)
{
	return sb_cells_poll(SB_CELLS_KILL_MAX_NS, 0, SB_CELLS_PAUSE_NS, sb_cells_kill_pass, keep);
}

int
sandbox_cells_kill_others(pid_t keep)
{
	bool stopped;
	int r;

	/*
	 * Every process of the pid namespace but us (1) and the interpreter
	 * dies with the cell, so nothing of it holds a pipe, spends the next
	 * cell's time or reaches the network between cells. The namespace is
	 * exactly the run's processes on every back end (cgroup2, cgroup1,
	 * rlimit): no cgroup is needed to find them, and the interpreter's
	 * forks share its cgroup, so a cgroup.kill could not spare it.
	 *
	 * The interpreter was sent SIGSTOP: we wait for its group stop first,
	 * so that no thread of it is inside a fork whose child is not yet in
	 * /proc. Then SIGKILL to every pid whatever its state: a zombie
	 * leader's threads get it too (the signal goes to the thread group),
	 * and to a dead zombie it does nothing. A pass counts what has not
	 * ended (sb_cells_ended: its last thread released); the passes go on
	 * until one finds nothing left and no pid was given out in the
	 * namespace while it walked (a fork of a process the walk had passed
	 * before it was killed). A process killed cannot fork: the kernel
	 * refuses a fork with a fatal signal pending. Bounded:
	 * passes SB_CELLS_PAUSE_NS apart for SB_CELLS_KILL_MAX_NS; -EBUSY past it
	 * (the caller ends the run: what it cannot prove dead, it ends with
	 * everything else). Zombies left are reaped by their parents: the
	 * driver before the next cell, our loop for the orphans.
	 */
	stopped = sb_cells_wait_stopped(keep);
	r = sb_cells_kill_passes(keep);
	if (r < 0 || stopped)
		return r;
	/*
	 * The interpreter had not stopped before the passes (a thread in an
	 * uninterruptible wait): one that stops now may have forked after the
	 * passes looked, so they run again; one that still does not stop
	 * could fork after any pass we make, so the cell's end cannot be
	 * proven: -EBUSY, and the caller ends the run (review finding).
	 */
	if (!sb_cells_wait_stopped(keep))
		return -EBUSY;
	return sb_cells_kill_passes(keep);
}

void
sandbox_cells_peak_reset(int peak_fd)
{
	/*
	 * Any write sets the peak to the usage now: v1 for the whole cgroup,
	 * v2 for reads through every fd written, the spawner's too (6.12,
	 * seen in the VM). Either way of a session's own cgroup: the
	 * spawner's figure for the interpreter's run, for its audit line
	 * only, is then since the last cell began. A v2 fd opened read-only
	 * (no reset before 6.12) refuses it: its peak stays the cgroup's
	 * since it was made (docs/protocol.md).
	 */
	if (peak_fd >= 0)
		(void)pwrite(peak_fd, "0", 1, 0);
}

/* The peak through peak_fd, in bytes; 0 if there is none. */
static uint64_t
sb_cells_peak(int peak_fd)
{
	char buf[32];
	ssize_t n;

	if (peak_fd < 0)
		return 0;
	n = pread(peak_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

void
sandbox_cells_end(int lifeline, uint32_t type, uint64_t cell, uint32_t reason, bool sigint,
		  uint64_t cpu_ns, uint64_t wall_ns, int peak_fd)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.reason = reason;
	m.status = sigint ? 1 : 0;
	m.cpu_ns = cpu_ns;
	m.wall_ns = wall_ns;
	m.size = cell;
	m.memory_peak = sb_cells_peak(peak_fd);
	(void)send(lifeline, &m, sizeof(m), MSG_NOSIGNAL);
}

/*
 * One process of /proc for sandbox_cells_ps: its comm, state, cpu (utime +
 * stime, in ns) and resident bytes from /proc/PID/stat. false if it is
 * gone, dead (Z, X) or the line cannot be read whole.
 */
static bool
sb_cells_proc_read(long pid, struct sup_msg *m)
{
	char buf[1024], *open_p, *close_p, *p;
	unsigned long long utime = 0, stime = 0, rss = 0;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	size_t len;
	int field;

	if (sb_cells_stat(pid, buf, sizeof(buf)) == 0)
		return false;
	/* "pid (comm) S ...": the code chose its comm (prctl), so it is
	 * bounded here (the kernel's 15 bytes) and checked again by the
	 * frontend; the fields are after the last ')'. */
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (open_p == NULL || close_p == NULL || close_p < open_p || close_p[1] != ' ' ||
	    close_p[2] == 'Z' || close_p[2] == 'X')
		return false;
	len = (size_t)(close_p - open_p - 1);
	if (len > 15)
		len = 15;
	memcpy(m->name, open_p + 1, len);
	m->name[len] = '\0';
	m->name_len = (uint32_t)len;
	/* utime, stime: fields 14 and 15; rss: 24 (the 12th, 13th and 22nd
	 * after the state, which is the 3rd). */
	for (p = close_p + 2, field = 3; *p != '\0' && field < 24; p++) {
		if (*p != ' ')
			continue;
		field++;
		if (field == 14)
			utime = strtoull(p + 1, NULL, 10);
		else if (field == 15)
			stime = strtoull(p + 1, NULL, 10);
		else if (field == 24)
			rss = strtoull(p + 1, NULL, 10);
	}
	if (field < 24 || tick <= 0 || page <= 0)
		return false;
	m->cpu_ns = (utime + stime) * (1000000000ULL / (unsigned long long)tick);
	m->memory_peak = rss * (unsigned long long)page;
	m->size = (uint64_t)pid;
	return true;
}

/* sb_cells_ps's walk: what it sent and found so far. */
struct sb_cells_ps_walk {
	int lifeline;
	uint64_t found;
};

/* sb_cells_ps's step: one SUP_PROC for a live process, while they fit. */
static void
sb_cells_ps_one(long pid, void *arg)
{
	struct sb_cells_ps_walk *w = arg;
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	if (!sb_cells_proc_read(pid, &m))
		return;
	if (w->found++ < SUP_PROCS_MAX) {
		m.type = SUP_PROC;
		(void)send(w->lifeline, &m, sizeof(m), MSG_NOSIGNAL);
	}
}

static void
sb_cells_ps(int lifeline, pid_t keep)
{
	struct sb_cells_ps_walk w = {.lifeline = lifeline, .found = 0};
	struct sup_msg m;

	/*
	 * A background session's processes, as the code could list them: pid
	 * namespace pids, every one but us (1) and the interpreter. At most
	 * SUP_PROCS_MAX are sent (the walk counts the rest), so a fork bomb
	 * costs the frontend a bounded reply. No allocation: one message on
	 * the stack, reused.
	 */
	(void)sb_cells_each_pid(keep, sb_cells_ps_one, &w);
	memset(&m, 0, sizeof(m));
	m.type = SUP_PROCS_END;
	m.size = w.found;
	(void)send(lifeline, &m, sizeof(m), MSG_NOSIGNAL);
}

/* One probe of a stopped process: 0 once it has ended, 1 if not yet. */
static int
sb_cells_gone_pass(pid_t pid)
{
	return sb_cells_ended(pid) ? 0 : 1;
}

static void
sb_cells_stop(int lifeline, uint64_t pid, pid_t keep)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SUP_PROC_STOPPED;
	m.size = (uint64_t)pid;
	/* Our pid namespace's pids only: no host process can be named. Never
	 * 1 (us) nor the interpreter (reset_python / a session's close end
	 * it), and never a pid that is not in the namespace now. */
	if (pid <= 1 || pid == (uint64_t)keep)
		m.err = -EPERM;
	else if (pid > (uint64_t)INT32_MAX)
		m.err = -ESRCH;
	else if (kill((pid_t)pid, SIGKILL) < 0)
		m.err = -errno;
	/* Answered once it has ended (a listing right after no longer shows
	 * it), waiting as for the end-of-cell kill, at most
	 * SB_CELLS_STOP_MAX_NS: one in an uninterruptible wait is answered
	 * all the same, its SIGKILL pending. */
	else
		(void)sb_cells_poll(SB_CELLS_STOP_MAX_NS, SB_CELLS_STOP_YIELDS,
				    SB_CELLS_STOP_PAUSE_NS, sb_cells_gone_pass, (pid_t)pid);
	(void)send(lifeline, &m, sizeof(m), MSG_NOSIGNAL);
}

int
sandbox_cells_finish(const struct sb_run *r)
{
	/*
	 * A session opened with background, under a profile that allows it
	 * (PLAN_F_BACKGROUND), keeps its cells' processes: they stay in this
	 * sandbox, under its limits, and die with it
	 * (docs/design-interpreters.md §2.7). Every other session's die now.
	 */
	if (r->pv->hdr->flags & PLAN_F_BACKGROUND)
		return 0;
	return sandbox_cells_kill_others((pid_t)r->pid);
}

bool
sandbox_cells_background_msg(const struct sb_run *r, const struct cells_sup *m)
{
	/* Only a background session has processes to list or stop: for any
	 * other, these are not what a sound frontend sends (the caller ends
	 * the sandbox, as for any unknown message). */
	if (!(r->pv->hdr->flags & PLAN_F_BACKGROUND))
		return false;
	if (m->type == CELLS_SUP_PS)
		sb_cells_ps(sandbox_lifeline(), (pid_t)r->pid);
	else if (m->type == CELLS_SUP_STOP)
		sb_cells_stop(sandbox_lifeline(), m->cell, (pid_t)r->pid);
	else
		return false;
	return true;
}
