/*
 * cgroup_read.h: what every process reads of the resource control: the back
 * ends' names (config, `airlock info`), a flat-keyed control file's numbers
 * (the supervisor's cpu.stat and pids.events), a run's memory figures through
 * the fds the spawner opened (the frontend). No path is built here and
 * nothing is written: the cgroups themselves are the spawner's (cgroup.h).
 */
#ifndef AIRLOCKD_CGROUP_READ_H
#define AIRLOCKD_CGROUP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cgroup_kind {
	CGROUP_NONE = 0, /* "rlimit" */
	CGROUP_V1 = 1,	 /* "cgroup1" */
	CGROUP_V2 = 2,	 /* "cgroup2" */
	CGROUP_AUTO = 3, /* cgroup_init(): v2, else v1, else rlimits */
};

/* The stable name of a kind: "cgroup2", "cgroup1", "rlimit" (or "auto"). */
const char *cgroup_kind_name(enum cgroup_kind kind);
/* Parse such a name; -EINVAL if it is none. */
int cgroup_kind_from_name(const char *name, enum cgroup_kind *ret);

/* Parse "key N" out of a flat-keyed control file's text (memory.events,
 * pids.events, cpu.stat); 0 when the key is absent. */
uint64_t cgroup_parse_key(const char *text, const char *key);

/* The number after "key " at the start of a line of a control file read
 * through fd from its start (cpu.stat, pids.events); 0 if absent or
 * unreadable. No allocation: the supervisor calls it. */
uint64_t cgroup_key(int fd, const char *key);

/* The oom kills counted in a memory.events (v2) or memory.oom_control (v1)
 * text. */
uint64_t cgroup_oom_count(const char *text);

/* Read a control file through an open fd, from its start, into buf (len
 * with the NUL); 0 or -errno. */
int cgroup_pread(int fd, char *buf, size_t len);

/* Parse the peak and whether the oom killer fired since ooms_before out of
 * their files' text (NULL: not read). */
void cgroup_parse_stats(const char *peak_txt, const char *oom_txt, uint64_t ooms_before,
			uint64_t *ret_peak, bool *ret_oom);

/* Read the peak and whether the oom killer fired through those fds. */
int cgroup_read_stats(int peak_fd, int oom_fd, uint64_t *ret_peak, bool *ret_oom);

#endif
