/*
 * closefds.h: close every fd of the process but a few, allocation-free, for
 * the processes cloned from the spawner (the supervisor, a keeper), which
 * start with a copy of its fd table.
 */
#ifndef AIRLOCKD_CLOSEFDS_H
#define AIRLOCKD_CLOSEFDS_H

#include <stddef.h>

#define CLOSEFDS_KEEP_MAX 12

/*
 * Close every fd but the nkeep listed (in any order; -1 entries and repeats
 * are ignored) with close_range(2). Returns 0, -EINVAL for more than
 * CLOSEFDS_KEEP_MAX, or close_range's -errno.
 */
int closefds_except(const int *keep, size_t nkeep);

#endif
