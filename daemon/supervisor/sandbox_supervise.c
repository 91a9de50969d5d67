/*
 * sandbox_supervise.c: a run's supervision, from the code's exec to the end
 * of everything of it: the poll loop over the lifeline, the code's pidfd,
 * pids.events and the wall and cpu clocks (sandbox_supervise), the same for
 * an interpreter session's cells (sandbox_supervise_cells), and the end
 * (sandbox_end: kill, reap, settle the reason). The run's cpu time, from its
 * cgroup or /proc.
 *
 * Between clone and exec like the rest (sandbox_child.h): no malloc, no
 * stdio, no libevent.
 */
#include "sandbox_child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cells_msg.h"
#include "cgroup_read.h"
#include "dirents.h"
#include "spawn_msg.h"

#define SB_TICK_MS 50
/* With cpu.stat, the supervisor sleeps until the earliest moment the run
 * could reach its cpu limit, and at most this long. */
#define SB_CG_TICK_MAX_MS 1000

/*
 * CPU time of the whole run in clock ticks: what pid 1 has reaped
 * (RUSAGE_CHILDREN, which folds in everything those reaped) plus, for every
 * live process, its own and its reaped children's time from /proc/PID/stat.
 * Read in that order, a process reaped in between is missed for one tick,
 * never counted twice.
 */
uint64_t
sandbox_cpu_ns(const struct sandbox_layout *l)
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

/*
 * CPU time of the whole run: the code's cgroup's usage_usec where there is
 * one (exact, every process, no polling of /proc), less base_ns, what it
 * held before the run (a session's runs share their cgroup: cgroup.h);
 * else from /proc, less what a pre-started interpreter spent before it.
 */
uint64_t
sandbox_run_cpu_ns(const struct sandbox_ctx *ctx, uint64_t base_ns)
{
	if (ctx->cpu_stat_fd >= 0) {
		uint64_t ns = cgroup_key(ctx->cpu_stat_fd, "usage_usec") * 1000ULL;

		return ns > base_ns ? ns - base_ns : 0;
	}
	{
		uint64_t ns = sandbox_cpu_ns(ctx->layout);

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

/*
 * Until the code's main process ends or a limit is reached: the lifeline
 * (anything on it ends the run at once), the code's pidfd, pids.events, and
 * a timer for the wall and cpu limits.
 */
void
sandbox_supervise(struct sb_run *r)
{
	const struct sandbox_ctx *ctx = &r->ctx;
	uint64_t deadline_ns = r->start_ns + r->pv->hdr->limits[PROTO_LIMIT_WALL_MS] * 1000000ULL;

	r->cpu_limit_ns = r->pv->hdr->limits[PROTO_LIMIT_CPU_MS] * 1000000ULL;
	while (!r->code_done) {
		struct pollfd p[3] = {{.fd = sandbox_lifeline(), .events = POLLIN},
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
		if (p[2].revents != 0 && cgroup_key(ctx->pids_events_fd, "max") > r->pids_max0) {
			r->reason = SUP_REASON_PROCS;
			break;
		}
		r->cpu_ns = sandbox_run_cpu_ns(ctx, r->cpu_base_ns);
		if (r->cpu_ns >= r->cpu_limit_ns) {
			r->reason = SUP_REASON_CPU;
			break;
		}
	}
}

/*
 * Interrupt the cell (its limit, or a cancel): SIGINT to the main thread
 * only, where the driver runs the cell (and blocks SIGINT between cells). A
 * process-directed SIGINT that came after the cell's end would go to a
 * thread the cell left unblocked, and Python raises KeyboardInterrupt in its
 * main thread wherever it then is: in the driver, or in the next cell.
 * Returns the end of the grace for its answer.
 */
static uint64_t
sb_cells_interrupt(const struct sb_run *r, uint64_t grace_ms)
{
	syscall(SYS_tgkill, (pid_t)r->pid, (pid_t)r->pid, SIGINT);
	return sandbox_now_ns() + grace_ms * 1000000ULL;
}

/*
 * An interpreter session's sandbox (PLAN_F_CELLS): the code is the driver,
 * alive for the session; the limits are a cell's, from the frontend's
 * CELLS_SUP_BEGIN to its CELLS_SUP_FINISH (cells_msg.h). At a cell's wall or
 * cpu limit the interpreter gets SIGINT (KeyboardInterrupt: its state is
 * kept); no FINISH within the grace after it, and the run ends here with
 * that limit as its reason (sandbox_end kills everything; the frontend starts a
 * new interpreter: the state is lost). At FINISH every other process dies
 * and SUP_CELL_END follows. CELLS_SUP_INTERRUPT (a cancel) interrupts the
 * cell as its limit does. CELLS_SUP_KILL ends the run (the frontend gives
 * the interpreter up); any other message, or EOF, ends it at once. A cell
 * still with the driver when the run ends gets its own figures in
 * SUP_CELL_LOST (sandbox_main).
 *
 * Between two cells the interpreter is stopped (SIGSTOP at FINISH, SIGCONT
 * at BEGIN): the threads a cell left running spend nothing, and fork
 * nothing, while no cell's limits count (docs/security.md). What the stop
 * costs a cell: docs/performance.md (tests/bench/airlockd-nostop).
 */
/*
 * The cell's cpu so far, walking /proc (cgroup1, rlimit) at most once a
 * half tick: the loop wakes for every message (issue 33: one walk less per
 * cell). cpu0, the cell's baseline, is the last cell's end figure, or a
 * walk at BEGIN for a session's first cell and a background session's. A
 * limit passed is still seen within a tick, as when every wake-up walked.
 */
static uint64_t
sb_cells_used(const struct sandbox_ctx *ctx, uint64_t cpu0, uint64_t now, uint64_t *at,
	      uint64_t *last)
{
	uint64_t used;

	if (now - *at < SB_TICK_MS * 1000000ULL / 2)
		return *last;
	used = sandbox_run_cpu_ns(ctx, 0);
	*at = now;
	*last = used > cpu0 ? used - cpu0 : 0;
	return *last;
}

/* A cell being timed (sandbox_supervise_cells). */
struct sb_cell {
	struct cells_sup m; /* its BEGIN */
	bool active, interrupted;
	uint64_t t0, cpu0, deadline, grace_end, cpu_max, cpu_at, cpu_last;
	uint64_t cpu_end; /* the run's cpu at the last cell's end (0: none yet) */
};

static void
sb_cells_begin(struct sb_run *r, struct sb_cell *c, const struct cells_sup *m)
{
	c->m = *m;
	c->active = true;
	c->interrupted = false;
	r->reason = SUP_REASON_EXITED;
	c->t0 = sandbox_now_ns();
	/*
	 * The baseline is the last cell's end's figure when nothing could
	 * run since: the interpreter stopped, every other process dead (a
	 * killed child's time moves to its reaper's, the sum stays). The
	 * /proc walk then leaves the path between BEGIN and SIGCONT, which
	 * the driver waits on (issue 33). A background session's processes
	 * run between cells: walked, as is the first cell.
	 */
	if (c->cpu_end != 0 && !(r->pv->hdr->flags & PLAN_F_BACKGROUND))
		c->cpu0 = c->cpu_end;
	else
		c->cpu0 = sandbox_run_cpu_ns(&r->ctx, 0);
	c->cpu_at = c->t0;
	c->cpu_last = 0;
	c->deadline = c->t0 + m->wall_ms * 1000000ULL;
	c->cpu_max = m->cpu_ms * 1000000ULL;
	r->cell = m->cell;
	r->cell_t0 = c->t0;
	r->cell_cpu0 = c->cpu0;
	sandbox_cells_peak_reset(r->ctx.peak_fd);
	kill((pid_t)r->pid, SIGCONT);
}

/*
 * The cell is done (the frontend's FINISH). Stopped first: a thread of the
 * cell's forks no more while the others die. What cannot be shown dead ends
 * the run (-EBUSY), the interpreter with it (sandbox_end kills everything):
 * nothing of a cell runs after it.
 */
static int
sb_cells_finished(struct sb_run *r, struct sb_cell *c)
{
	uint64_t used;

	kill((pid_t)r->pid, SIGSTOP);
	if (sandbox_cells_finish(r) < 0)
		return -EBUSY;
	/* The files it left, before its end (issue 30). */
	sandbox_cell_artifacts(r);
	used = sandbox_run_cpu_ns(&r->ctx, 0);
	sandbox_cells_end(sandbox_lifeline(), SUP_CELL_END, c->m.cell, r->reason, c->interrupted,
			  used > c->cpu0 ? used - c->cpu0 : 0, sandbox_now_ns() - c->t0,
			  r->ctx.peak_fd);
	c->active = false;
	c->cpu_end = used;
	r->cell = 0;
	r->reason = SUP_REASON_EXITED;
	return 0;
}

/* One message of the frontend's: 0, or -1 when the run must end. */
static int
sb_cells_msg(struct sb_run *r, struct sb_cell *c, const struct cells_sup *m)
{
	if (m->type == CELLS_SUP_BEGIN && !c->active) {
		sb_cells_begin(r, c, m);
	} else if (m->type == CELLS_SUP_FINISH && c->active && m->cell == c->m.cell) {
		return sb_cells_finished(r, c) < 0 ? -1 : 0;
	} else if (m->type == CELLS_SUP_KILL) {
		return -1;
	} else if (m->type == CELLS_SUP_INTERRUPT) {
		/* A cancel: as at a limit, for the cell being timed and once;
		 * a late one (answered) is dropped. */
		if (c->active && m->cell == c->m.cell && !c->interrupted) {
			c->grace_end = sb_cells_interrupt(r, c->m.grace_ms);
			c->interrupted = true;
		}
	} else if (!sandbox_cells_background_msg(r, m)) {
		_exit(0);
	}
	return 0;
}

void
sandbox_supervise_cells(struct sb_run *r)
{
	const struct sandbox_ctx *ctx = &r->ctx;
	struct sb_cell c;

	/* The interpreter's own total is RLIMIT_CPU's (sandbox_code.c). */
	r->cpu_limit_ns = UINT64_MAX;
	memset(&c, 0, sizeof(c));
	while (!r->code_done) {
		struct pollfd p[3] = {{.fd = sandbox_lifeline(), .events = POLLIN},
				      {.fd = r->pidfd, .events = POLLIN},
				      {.fd = ctx->pids_events_fd, .events = POLLPRI}};
		uint64_t now = sandbox_now_ns(), used;
		int timeout = -1;

		if (c.active) {
			used = sb_cells_used(ctx, c.cpu0, now, &c.cpu_at, &c.cpu_last);
			if (!c.interrupted && (now >= c.deadline || used >= c.cpu_max)) {
				r->reason = now >= c.deadline ? SUP_REASON_WALL : SUP_REASON_CPU;
				c.grace_end = sb_cells_interrupt(r, c.m.grace_ms);
				c.interrupted = true;
			}
			if (c.interrupted && now >= c.grace_end)
				return;
			timeout = (int)(((c.interrupted ? c.grace_end : c.deadline) - now) /
						1000000ULL +
					1);
			if (!c.interrupted && timeout > SB_TICK_MS)
				timeout = SB_TICK_MS;
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			return;
		if (p[0].revents != 0) {
			struct cells_sup m;
			ssize_t n = recv(sandbox_lifeline(), &m, sizeof(m), MSG_DONTWAIT);

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n != (ssize_t)sizeof(m))
				_exit(0);
			if (sb_cells_msg(r, &c, &m) < 0)
				return;
		}
		sb_reap((pid_t)r->pid, &r->status, &r->code_done);
		if (p[2].revents != 0 && cgroup_key(ctx->pids_events_fd, "max") > r->pids_max0) {
			r->reason = SUP_REASON_PROCS;
			return;
		}
	}
}

/* The run ends with its main process: nothing else may outlive it. Kill and
 * reap everything, then settle the cpu time and the reason. */
void
sandbox_end(struct sb_run *r)
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
		r->cpu_ns = sandbox_run_cpu_ns(ctx, r->cpu_base_ns);
	/* The code ended by itself, but not well, after a refused fork. */
	if (r->reason == SUP_REASON_EXITED && ctx->pids_events_fd >= 0 &&
	    !(WIFEXITED(st) && WEXITSTATUS(st) == 0) &&
	    cgroup_key(ctx->pids_events_fd, "max") > r->pids_max0)
		r->reason = SUP_REASON_PROCS;
	if (r->reason == SUP_REASON_EXITED && r->cpu_ns >= r->cpu_limit_ns && WIFSIGNALED(st) &&
	    (WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGKILL))
		r->reason = SUP_REASON_CPU;
}
