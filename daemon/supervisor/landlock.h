/*
 * landlock.h: a Landlock layer under the mount namespace for the code.
 *
 * The sandbox's mount set-up already decides what the code can reach; this
 * layer says it a second time, in the kernel's own terms, so that a future
 * mistake in the mount set-up (a bind left writable, a path left visible) is
 * not an escape by itself: the code may read and execute beneath the
 * sandbox's root, and write only beneath the paths named writable. On
 * kernels with ABI 6 it also may not signal, or connect to abstract unix
 * sockets of, anything outside its own domain.
 *
 * Allocation-free: it runs in the code's process between clone and exec.
 */
#ifndef AIRLOCKD_LANDLOCK_H
#define AIRLOCKD_LANDLOCK_H

#include <stdint.h>

#define LANDLOCK_RW_MAX 4

/*
 * The best Landlock ABI this kernel offers (1-7), 0 when Landlock is not
 * there (not built, or not in the `lsm=` list), as a negative errno never.
 */
int landlock_abi(void);

/*
 * The ABI the sandbox uses given the kernel's: 0 (none) below ABI 2, whose
 * rules refuse renames and links between directories, which ordinary
 * programs do in their workspace.
 */
int landlock_usable_abi(int abi);

/* What landlock_prepare() builds: a ruleset fd and what it handles. */
struct landlock_rules {
	int fd;	     /* the ruleset, close-on-exec; -1 when Landlock is off */
	int abi;     /* the ABI it was built for */
	uint64_t fs; /* the filesystem rights it handles */
};

/*
 * Build the ruleset for ABI abi (0: nothing to build, ret->fd = -1): read,
 * read a directory and execute beneath root; every right beneath each of the
 * writable paths (a NULL-terminated list of at most LANDLOCK_RW_MAX);
 * writing files (not creating them) beneath each of the write_only paths
 * (NULL-terminated, at most LANDLOCK_RW_MAX: /dev, /proc). Returns 0 or
 * -errno.
 */
int landlock_prepare(int abi, const char *root, const char *const *writable,
		     const char *const *write_only, struct landlock_rules *ret);

/*
 * Restrict this thread (and all it forks) to the ruleset, and close it.
 * no_new_privs must be set first. Returns 0 or -errno; with ret->fd -1, 0.
 */
int landlock_enforce(struct landlock_rules *rules);

#endif
