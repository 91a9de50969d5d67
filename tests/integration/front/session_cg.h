/* session_cg.h: what test_sessions.c reads of the daemon's run cgroups. */
#ifndef AIRLOCK_TEST_SESSION_CG_H
#define AIRLOCK_TEST_SESSION_CG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fixture.h"

/* The daemon's run cgroups' directory into buf, from its log: 2 cgroup2
 * (its runs/ node), 1 cgroup1 (the memory controller's airlock/), 0 neither. */
int runs_cgroup(const struct fixture *f, char *buf, size_t len);

/* cgroup2: nr_dying_descendants of the runs/ node runs. */
long memcg_dying(const char *runs);

/* cgroup1: the run nodes u<uid> under base with uid in [lo, lo + count),
 * their number, and the inode of the last into *ret_ino. */
int memcg_own_nodes(const char *base, unsigned lo, unsigned count, ino_t *ret_ino);

/* The most memory other than shmem charged to one run cgroup, and that
 * cgroup's shmem into *ret_shmem. */
uint64_t run_cgroup_cache(const struct fixture *f, uint64_t *ret_shmem);

#endif
