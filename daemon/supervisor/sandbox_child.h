/*
 * sandbox_child.h: what the supervisor's files share, between clone and exec
 * (no allocation, no stdio, no libevent in any of them).
 *
 *   sandbox.c       the supervisor: start-up, the run's fds, artifacts,
 *                   the report
 *   sandbox_fail.c  its channels, the failure report, the clock, /proc stat
 *                   (a leaf: calls nothing else of the supervisor)
 *   sandbox_supervise.c  the poll loops over a run and its cells, the end
 *   sandbox_fs.c    the filesystem: the root as a list of set-up ops run by
 *                   one loop (phase one), the run's own mounts (phase two)
 *   sandbox_code.c  the code's process: clone, its last steps, execve
 *   sandbox_step.c  the steps' names
 *   sandbox_tools.c the tool bridge's socket, module and command
 */
#ifndef AIRLOCKD_SANDBOX_CHILD_H
#define AIRLOCKD_SANDBOX_CHILD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "plan.h"
#include "sandbox.h"

/*
 * Report a failed step (err: a positive errno, as errno itself) on the
 * lifeline and exit. A sandbox that fails while prepared first waits for the
 * run it is given, so that run can be told why.
 */
__attribute__((noreturn)) void sandbox_fail(int step, int err);

/*
 * The supervisor's channels (sandbox_fail.c), in statics so the fail path
 * needs no arguments; this is the cloned child's own copy of memory, and
 * nothing else writes it. sandbox_self_init: the spawner's control socket,
 * and whether phase one starts the interpreter (sandbox_prestart.c);
 * sandbox_set_lifeline: the run's lifeline, once it came.
 */
void sandbox_self_init(int ctl, bool prestarted);
void sandbox_set_lifeline(int fd);
int sandbox_lifeline(void);
int sandbox_ctl(void);
bool sandbox_prestarted(void);

/*
 * The spawner's start message on the control socket: the run's fds into fds
 * (max of them), its flags; returns how many came, and closes the control
 * socket. Anything else (EOF, a wrong size, magic or fd count): _exit(0),
 * this sandbox will never run anything.
 */
size_t sandbox_wait_start(int *fds, size_t max, uint32_t *ret_flags);

#define SB_CHECK(expr, step)                                                                       \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			sandbox_fail(step, errno);                                                 \
	} while (0)

/* snprintf into a fixed buffer, failing the step on truncation. */
#define SB_PATH(buf, step, ...)                                                                    \
	do {                                                                                       \
		int n_ = snprintf(buf, sizeof(buf), __VA_ARGS__);                                  \
		if (n_ < 0 || (size_t)n_ >= sizeof(buf))                                           \
			sandbox_fail(step, ENAMETOOLONG);                                          \
	} while (0)

/* Where the new root is built before pivot_root (sandbox_fs_base). */
#define SB_NEWROOT "/tmp"

/*
 * Run nops set-up ops in order (one loop, bubblewrap's SetupOp shape), each
 * beneath SB_NEWROOT; an op whose host file the layout lacks is skipped.
 */
void sandbox_fs_apply(const struct sandbox_layout *l, const struct sandbox_fs_op *ops, size_t nops);

/*
 * Phase one, before any request is known: build the new root from the
 * root's ops and pivot into it. The root stays writable until phase two.
 */
void sandbox_fs_base(const struct sandbox_layout *l, const struct rootspec *rs);

/*
 * Phase two, for one request, inside the new root: the sized /tmp, the
 * workspace (fresh, or a session's attached at ws_fd), the code and stdin
 * files, the input files; then the root and the code's directory become
 * read-only.
 */
void sandbox_fs_run(const struct plan_view *pv, const struct rootspec *rs, int ws_fd);

/*
 * Read a /proc/.../stat file at path into buf (len bytes with the NUL);
 * *ret_p: just after the command's ")", where field 3 (state) follows;
 * *ret_end: the end. A failure fails step. The fields, space-separated:
 * sandbox_stat_skip() n of them, sandbox_stat_u64() the next as a number.
 */
void sandbox_read_stat(const char *path, char *buf, size_t len, int step, const char **ret_p,
		       const char **ret_end);
void sandbox_stat_skip(const char **p, const char *end, int n);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t sandbox_now_ns(void);
uint64_t sandbox_stat_u64(const char **p, const char *end);

/*
 * PLAN_F_CELLS: what a cell's walk (sandbox_cell_artifacts) compares file
 * times with (docs/design-interpreters.md §2.5, "a cell's files"): the
 * coarse and the fine clock at the last cell's end (lo, hi), and the files
 * the walk then saw with a ctime at or after lo, as they were.
 */
#define SB_CELL_SEEN_MAX 64
struct sb_seen {
	dev_t dev;
	ino_t ino;
	struct timespec ctime, mtime;
	off_t size;
};
struct sb_cell_fence {
	struct timespec lo, hi;
	struct sb_seen seen[SB_CELL_SEEN_MAX];
	uint32_t nseen;
	bool overflow; /* more than SB_CELL_SEEN_MAX: every file of [lo, hi] is new */
};

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
	 * and cpu (sandbox_run_cpu_ns from 0) at its CELLS_SUP_BEGIN. */
	uint64_t cell, cell_t0, cell_cpu0;
	struct sb_cell_fence cell_fence; /* PLAN_F_CELLS: since the last cell's end */
};

/* At a cell's end (PLAN_F_CELLS), its other processes dead: send a
 * SUP_ARTIFACT for each file changed since the previous cell's end, and
 * move the fence to now (sandbox.c). */
void sandbox_cell_artifacts(struct sb_run *r);

/*
 * Supervision (sandbox_supervise.c). sandbox_supervise: until the code's
 * main process ends or a limit is reached; sandbox_supervise_cells: the same
 * for an interpreter session, a cell's limits at a time; sandbox_end: kill
 * and reap everything, settle the cpu time and the reason. The run's cpu
 * time since base_ns (sandbox_run_cpu_ns), from /proc alone
 * (sandbox_cpu_ns).
 */
void sandbox_supervise(struct sb_run *r);
void sandbox_supervise_cells(struct sb_run *r);
void sandbox_end(struct sb_run *r);
uint64_t sandbox_run_cpu_ns(const struct sandbox_ctx *ctx, uint64_t base_ns);
uint64_t sandbox_cpu_ns(const struct sandbox_layout *l);

/* A pre-starting sandbox's phase one, the hand-off's mounts and files, and
 * the code file taking the FIFO's name (sandbox_prestart.c). */
void sandbox_fs_prestart(const struct plan_view *pv0);
void sandbox_fs_handoff(const struct plan_view *pv, const struct rootspec *rs);
void sandbox_fs_code_swap(const struct plan_view *pv);

/*
 * A pre-starting sandbox (docs/design-interpreters.md §1): wait for the run
 * on the control socket ctl while watching the interpreter's pidfd (gone
 * first: exit, the sandbox is discarded); then, for the run's plan pv,
 * check it is the pre-start plan pv0's command, do the filesystem hand-off,
 * lower the interpreter's limits to the run's (prlimit). sandbox_prestart_feed
 * gives it the code through the FIFO, by deadline_ns at the latest. The
 * interpreter found gone, or any step failed, before the code's EOF:
 * sandbox_fail, and the frontend runs the run in a fresh sandbox.
 */
void sandbox_prestart_wait(int ctl, int pidfd);
void sandbox_prestart_handoff(const struct plan_view *pv0, const struct plan_view *pv,
			      const struct rootspec *rs, const struct sandbox_layout *l, long pid,
			      int pidfd);
void sandbox_prestart_feed(const struct plan_view *pv, long pid, int pidfd, uint64_t deadline_ns);

/*
 * A run with tools: /run/tools (socket, module, command) made read-only,
 * the module importable, the listening socket sent on the lifeline.
 */
void sandbox_tools_setup(int lifeline);

/*
 * An interpreter session's sandbox (sandbox_cells.c): the driver's channel
 * (its end returned, to be the code's fd 0; the frontend's sent as
 * SUP_CELLS); SIGKILL to every process but us and keep (stopped), whatever
 * its state, until none has a thread left (0, or -errno: -EBUSY when some
 * outlived the bound; the run must then end); the memory peak
 * (peak_fd: the context's, -1 for none) reset as a cell begins; a cell's
 * end (type SUP_CELL_END, or SUP_CELL_LOST when its interpreter ended) on
 * the lifeline, with the peak read through peak_fd.
 */
int sandbox_cells_channel(int lifeline);
int sandbox_cells_kill_others(pid_t keep);
/* At a cell's FINISH: sandbox_cells_kill_others(), unless the session keeps
 * its processes (PLAN_F_BACKGROUND: 0). */
int sandbox_cells_finish(const struct sb_run *r);
struct cells_sup;
/* CELLS_SUP_PS (its processes but 1 and the interpreter to the lifeline:
 * SUP_PROC..., SUP_PROCS_END) or CELLS_SUP_STOP (SIGKILL to one:
 * SUP_PROC_STOPPED) of a background session: true once answered, false
 * for any other message. */
bool sandbox_cells_background_msg(const struct sb_run *r, const struct cells_sup *m);
void sandbox_cells_peak_reset(int peak_fd);
/* SUP_CELL_END or SUP_CELL_LOST of cell; sigint: the cell was sent SIGINT
 * (a limit or a cancel), so the frontend can tell the driver whether a
 * SIGINT still pending is the last cell's (CELLS_START_F_DRAIN_SIGINT). */
void sandbox_cells_end(int lifeline, uint32_t type, uint64_t cell, uint32_t reason, bool sigint,
		       uint64_t cpu_ns, uint64_t wall_ns, int peak_fd);

/*
 * Start the code's process (*pidfd: its pidfd), into the code's cgroup where
 * there is one; it runs sandbox_code_exec() with exec_pipe[1] and without
 * exec_pipe[0]. Returns its pid, or -1 with errno; returns only in the
 * supervisor.
 */
long sandbox_code_start(const struct sandbox_ctx *ctx, const struct plan_view *pv, int exec_pipe[2],
			int *pidfd);

/*
 * The rlimit the code's process gets for row i of the limit table (its
 * rlimit column) from the plan's limits lim, into *ret_cur and *ret_max;
 * false when none is in force here (no rlimit; RLIMIT_AS with a memory
 * cgroup). cpu_used_s: CPU seconds the process spent already (a
 * pre-started interpreter's start-up), added to RLIMIT_CPU's.
 */
bool sandbox_rlimit(const struct sandbox_layout *l, const uint64_t *lim, size_t i,
		    uint64_t cpu_used_s, uint64_t *ret_cur, uint64_t *ret_max);

/* In the code's process: its last steps, then execve. Failures go to
 * pipefd as {step, errno}. */
__attribute__((noreturn)) void sandbox_code_exec(const struct sandbox_ctx *ctx,
						 const struct plan_view *pv, int pipefd, bool move);

#endif
