/*
 * cgroup_int.h: what cgroup.c (v2, the seam) and cgroup1.c (v1, the rlimit
 * fallback) share; no other file includes it.
 */
#ifndef AIRLOCKD_CGROUP_INT_H
#define AIRLOCKD_CGROUP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

/* snprintf into a path buffer; -ENAMETOOLONG when it does not fit. */
__attribute__((format(printf, 3, 4))) int cgroup_path(char *buf, size_t len, const char *fmt, ...);
/* Write val to dir/file; read dir/file into buf (len with the NUL). */
int cgroup_write_at(const char *dir, const char *file, const char *val);
int cgroup_read_at(const char *dir, const char *file, char *buf, size_t len);
/* open(dir/file) with flags (and O_CLOEXEC), into *fd. */
int cgroup_open_at(const char *dir, const char *file, int flags, int *fd);
/* The same relative to a directory fd (a run's node: cgroup.c's
 * cgroup_node_open), AT_FDCWD for a path: write, open. */
int cgroup_write_in(int dfd, const char *file, const char *val);
int cgroup_open_in(int dfd, const char *file, int flags, int *fd);
/* Our path in the hierarchy whose controller list matches (v1: "memory",
 * v2: the "0::" line), from a /proc/self/cgroup file. */
int cgroup_self_path(const char *self, bool v2, char *ret, size_t len);
/* rmdir a cgroup; wait: retry while the kernel still counts it busy. */
int cgroup_rmdir(const char *path, bool wait);

/* v1 (cgroup1.c): cgroup_init after cgroup2 (why2: why not it), falling
 * back to rlimits; remove what an earlier instance left; make a run's node
 * at path (a kept one stays); set a node's memory limit (nfd: its
 * directory), no swap beyond. */
int cgroup1_init_fallback(struct cgroup *cg, const char *self, enum cgroup_kind want,
			  const char *why2);
void cgroup1_sweep(const struct cgroup *cg, uint32_t uid_lo, uint32_t uid_hi);
int cgroup1_run_mkdir(const char *path, bool keep);
int cgroup1_set_memory(int nfd, uint64_t memory_bytes);

#endif
