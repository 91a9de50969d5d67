/*
 * cgroup.h: the seam between the daemon and the kernel's resource control.
 *
 * One interface, three back ends, chosen once at start-up and named in the
 * log and in `airlock info`:
 *
 *   cgroup2  memory, processes and cpu of the whole run, by the kernel: one
 *            cgroup per run (memory.max, memory.swap.max, memory.oom.group,
 *            pids.max, cpu.stat, optionally cpu.max) and per session keeper,
 *            under a delegated subtree; the daemon itself lives in a leaf.
 *   cgroup1  memory only, on the v1 memory hierarchy (processes by
 *            RLIMIT_NPROC, cpu by polling /proc).
 *   rlimit   nothing but rlimits: memory is RLIMIT_AS, which counts address
 *            space, not memory (docs/security.md says what that costs).
 *
 * The v1 and rlimit back ends are cgroup1.c; what other processes read
 * (the kinds' names, control files' numbers, a run's figures) is
 * ipc/cgroup_read.h, which this header includes.
 *
 * Every path is built from cg->root, so the unit tests run the back ends
 * against a fake hierarchy in a temporary directory.
 *
 * v2 layout (S: the service's cgroup, e.g. system.slice/airlockd.service):
 *
 *   S/daemon          the spawner and the frontend (v2: no process in an inner node)
 *   S/runs            base: +memory +pids [+cpu] for its children
 *   S/runs/u<uid>     one run (uid: the slot's first host uid); +memory +pids [+cpu]
 *   S/runs/u<uid>/sup the run's supervisor, outside the code's limits
 *   S/runs/u<uid>/code the code: every limit, oom.group, the figures
 *   S/runs/k<uid>     a session keeper
 *
 * A one-shot run's u<uid> is made for it and removed at its reap; a
 * session's is kept across its runs, removed when its keeper is reaped.
 */
#ifndef AIRLOCKD_CGROUP_H
#define AIRLOCKD_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup_read.h" /* the kinds, the readers of a run's figures */

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_SELF "/proc/self/cgroup"

struct cgroup {
	enum cgroup_kind kind;
	bool cpu;	/* v2: the cpu controller is ours (cpu.max) */
	bool into;	/* v2: try clone3(CLONE_INTO_CGROUP); cleared when the kernel lacks it */
	char root[256]; /* where the hierarchies are mounted: CGROUP_ROOT */
	char base[512]; /* v1: .../memory/<ours>/airlock; v2: S/runs */
	char why[400];	/* what was found, for the start-up log */
};

/*
 * Detect what the host offers (root: the hierarchies' mount point, self: a
 * file like /proc/self/cgroup) and prepare our subtree, as root, before the
 * split: on v2 this moves the calling process into S/daemon, so the spawner
 * and the frontend forked from it are in the leaf. want limits the choice.
 * A back end that cannot be used is not an error: cg->kind says what is used
 * and cg->why says why, in one line. Returns -errno only when a path is too
 * long.
 */
int cgroup_init(struct cgroup *cg, const char *root, const char *self, enum cgroup_kind want);

/*
 * Remove what an earlier instance left (a daemon that was killed): v1 the
 * run cgroups of the uid range; v2 everything under S/runs (ours alone),
 * after killing what is still in it.
 */
void cgroup_sweep(const struct cgroup *cg, uint32_t uid_lo, uint32_t uid_hi);

/*
 * A session's runs share one run cgroup, kept from the session's first run
 * to its end (issue 13, finding 6): the workspace pages a run writes stay
 * charged to the memory cgroup it ran in, and a cgroup removed while pages
 * are charged to it lives on, dying, until they are freed (with the
 * session's tmpfs). A kept cgroup's counters run on across runs; each run's
 * figures are measured from a baseline taken before its sandbox is made.
 * A fresh cgroup's baseline is all zero.
 */
struct cgroup_run_base {
	bool kept;	/* made or reused for a session: outlives the run */
	uint64_t usage; /* the workspace's bytes charged to the code's cgroup
			 * before the run: its shmem, at most the workspace size */
	uint64_t ooms;	/* oom kills it had counted before the run */
	int peak_fd;	/* kept: its peak file, reset before the run (v1
			 * memory.max_usage_in_bytes; v2 code/memory.peak, for
			 * reads through fds written: kernel 6.12+), closed by
			 * cgroup_run_finish; -1: none (a fresh cgroup's peak is
			 * the run's already; no reset: no figure) */
};

/*
 * Make the cgroup of one run with its memory limit. A run's cgroup is named
 * for its host uid, which no other live run (of any daemon) shares. v2: the
 * run's node, its supervisor's and code's leaves; the code's cgroup.procs
 * (and the node's, their common ancestor) writable by the group `uid` (the
 * supervisor's host gid), so the supervisor can clone the code into it.
 * keep: a session's run; a cgroup its earlier runs left is reused, not made
 * afresh; ws_bytes is its workspace's size, the most its baseline counts;
 * its peak is reset (base->peak_fd) where the kernel allows. *ret_base
 * (may be NULL: then no peak fd is kept) gets the baseline; its peak_fd is
 * to be closed by cgroup_run_finish.
 */
int cgroup_run_create(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes, bool keep,
		      uint64_t ws_bytes, struct cgroup_run_base *ret_base);

/*
 * Set a run's limits on its existing cgroup: memory (no swap beyond it),
 * on top of base->usage (base may be NULL: none), so that the workspace
 * pages a session's earlier runs left take nothing from this run's limit,
 * as when they stayed in their own cgroups (their file cache is not added:
 * reclaimable, it would raise the limit run after run); v2 also the process limit (0: none) and
 * cpu.max as a percentage of one CPU (0: none; only when cg->cpu).
 */
int cgroup_run_set_limit(const struct cgroup *cg, uint32_t uid, const struct cgroup_run_base *base,
			 uint64_t memory_bytes, uint32_t processes, uint32_t cpu_percent);

/* The fds a run's sandbox needs, opened by the spawner as root. -1: none. */
struct cgroup_run_fds {
	int into;	 /* v2: the supervisor's cgroup directory, for CLONE_INTO_CGROUP */
	int self;	 /* v1 `tasks`, v2 sup/cgroup.procs: the child writes "0" there */
	int code;	 /* v2: the code's cgroup directory, for the supervisor's clone */
	int cpu_stat;	 /* v2: code/cpu.stat (usage_usec) */
	int pids_events; /* v2: code/pids.events (max: a fork was refused) */
};

/* Open them; every fd is -1 on a back end without it. */
int cgroup_run_open(const struct cgroup *cg, uint32_t uid, struct cgroup_run_fds *ret);
/* Close what is open and set every fd to -1. NULL-safe. */
void cgroup_run_fds_close(struct cgroup_run_fds *fds);

/*
 * Open the run's peak and oom files for reading, for the frontend: it may
 * answer a run as soon as its processes are gone, before the sandbox is
 * reaped (the cgroup directory is not searchable by the service user).
 * Not for a kept cgroup: its files count more than the run.
 */
int cgroup_run_open_stats(const struct cgroup *cg, uint32_t uid, int ret_fds[2]);

/*
 * Open the peak of a session's run cgroup for its supervisor, which times an
 * interpreter session's cells (sandbox_supervise_cells): v1 the node's
 * memory.max_usage_in_bytes, v2 code/memory.peak, both read-write so that
 * a write resets the peak to the usage now (v1: for the whole cgroup; v2,
 * kernel 6.12+: for reads through the fds written, any of them, the
 * spawner's too, as the Debian 13 VM showed). A v2 memory.peak without
 * that reset (before 6.12) is opened read-only: its peak is then the code
 * cgroup's since it was made. *ret_fd is -1 on the rlimit back end.
 */
int cgroup_run_open_peak(const struct cgroup *cg, uint32_t uid, int *ret_fd);

/*
 * Read the peak and whether the oom killer fired since base (NULL: since
 * the cgroup was made), then remove the cgroup (v2: after killing whatever
 * is left in it with cgroup.kill), or, keep, leave it for the session's
 * next run (no cgroup.kill then: on 6.1 the next sandboxes cloned into a
 * cgroup that had one were killed too). The peak of a kept cgroup is read
 * through base->peak_fd (the most it held since the reset before the run,
 * what earlier runs left in it included), which is closed; without one
 * (cgroup2 before 6.12 cannot reset memory.peak) it is not this run's: 0,
 * not measured. The figures are set even when the removal fails (-errno
 * then).
 */
int cgroup_run_finish(const struct cgroup *cg, uint32_t uid, struct cgroup_run_base *base,
		      bool keep, uint64_t *ret_peak, bool *ret_oom);

/* Remove a kept run cgroup once its session is over (no sandbox in it);
 * 0 when there is none. */
int cgroup_run_remove(const struct cgroup *cg, uint32_t uid);

/*
 * A session keeper's cgroup (v2 only; elsewhere these do nothing and *ret_fd
 * is -1): memory.max the workspace plus KEEPER_SLACK, no swap, a few pids.
 * open gives its directory, for CLONE_INTO_CGROUP; finish kills and removes.
 */
int cgroup_keeper_create(const struct cgroup *cg, uint32_t uid, uint64_t workspace_bytes);
int cgroup_keeper_open(const struct cgroup *cg, uint32_t uid, int *ret_fd);
int cgroup_keeper_finish(const struct cgroup *cg, uint32_t uid);

#endif
