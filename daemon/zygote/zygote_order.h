/*
 * zygote_order.h: a zygote's strict decoding of the spawner's order
 * (ipc/zygote_msg.h) into a struct zygote_order for zygote_enter().
 */
#ifndef AIRLOCKD_ZYGOTE_ORDER_H
#define AIRLOCKD_ZYGOTE_ORDER_H

#include <stddef.h>

#include "zygote_enter.h"
#include "zygote_msg.h"

/*
 * Decode len bytes of msg and the nfds fds received with it into ret
 * (its seccomp and landlock pointers are left to the caller; landlock_fd
 * gets the ruleset's fd or -1; ret->cwd is copied into cwd, cwd_size
 * bytes). The size must be exact, the magic, flags, padding and rlimit
 * count known, the fd count what the flags say, every fd >= 0, uid and
 * gid not 0, the cwd absolute and NUL-terminated. Returns 0, or -EBADMSG
 * with ret untouched; the fds stay the caller's either way.
 */
int zygote_order_decode(const void *msg, size_t len, const int *fds, size_t nfds,
			struct zygote_order *ret, int *ret_landlock_fd, char *cwd, size_t cwd_size);

#endif
