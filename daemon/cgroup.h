/*
 * cgroup.h: the per-run memory cgroup, when the host has a memory controller
 * we can use. Detected at start-up and said in the log; without one the
 * memory limit falls back to RLIMIT_AS and memory_limit cannot be told
 * from a crash (docs/security.md).
 */
#ifndef AIRLOCKD_CGROUP_H
#define AIRLOCKD_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cgroup {
	bool enabled;
	char base[512]; /* .../memory/<our cgroup>/airlock */
	char why[160];	/* what was found, for the start-up log */
};

/* Detect the memory controller and make our subtree (as root). */
int cgroup_init(struct cgroup *cg);

/*
 * Remove run cgroups left in our uid range by a daemon that was killed
 * (a cgroup with tasks cannot be removed and is left alone).
 */
void cgroup_sweep(const struct cgroup *cg, uint32_t uid_lo, uint32_t uid_hi);

/* Make the cgroup of one run with its memory limit. A run's cgroup is named
 * for its host uid, which no other live run (of any daemon) shares. */
int cgroup_run_create(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes);

/* Set the memory limit of a run's existing cgroup (no swap beyond it). */
int cgroup_run_set_limit(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes);

/*
 * Open the run's cgroup `tasks` file for the sandbox to move itself in by
 * writing "0" (see sandbox.c). *ret_fd is -1 when no cgroup is used.
 */
int cgroup_run_open_self(const struct cgroup *cg, uint32_t uid, int *ret_fd);

/*
 * Open the run's peak and oom files for reading, for the frontend: it may
 * answer a run as soon as its processes are gone, before the sandbox is
 * reaped (the cgroup directory is not searchable by the service user).
 */
int cgroup_run_open_stats(const struct cgroup *cg, uint32_t uid, int ret_fds[2]);

/* Read the peak and whether the oom killer fired through those fds. */
int cgroup_read_stats(int peak_fd, int oom_fd, uint64_t *ret_peak, bool *ret_oom);

/* Read the peak and whether the oom killer fired, then remove the cgroup. */
int cgroup_run_finish(const struct cgroup *cg, uint32_t uid, uint64_t *ret_peak, bool *ret_oom);

#endif
