/* childstop.h: wait, bounded and without spinning, for a child to stop. */
#ifndef AIRLOCK_CHILDSTOP_H
#define AIRLOCK_CHILDSTOP_H

#include <stdint.h>
#include <sys/types.h>

/*
 * Wait until the caller's child pid is stopped (every thread in the group
 * stop) or has ended, at most max_ns: 0 then, -EBUSY past the bound,
 * -errno if pid is not a child of the caller. Nothing is consumed (the
 * child's state stays for waitid/wait4). Blocks in sigtimedwait() for the
 * SIGCHLD the stop sends the parent, with SIGCHLD blocked for the time of
 * the call (the caller's mask is restored).
 */
int childstop_wait(pid_t pid, uint64_t max_ns);

#endif
