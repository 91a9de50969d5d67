/*
 * keeper_tar.h: a session's workspace written out as one ustar archive
 * (daemon/ipc/ustar.h) by its keeper: for a client's session_save and the
 * daemon's copy in its state directory (docs/design-sessions.md).
 * Allocation-free, like all of the keeper. It writes a format; it parses
 * none.
 */
#ifndef AIRLOCKD_KEEPER_TAR_H
#define AIRLOCKD_KEEPER_TAR_H

#include <stdint.h>

/*
 * Write every directory and regular file beneath root (an open directory)
 * to out, as ustar, ended by its two zero blocks. Links, devices, FIFOs,
 * sockets and names longer than ustar holds (255 bytes) are left out and
 * counted in *ret_skipped; nothing is followed. A file that changes while
 * it is copied keeps the size its header says (cut, or padded with
 * zeros). 0 with *ret_bytes (the archive's size), or -errno.
 */
int keeper_tar_write(int root, int out, uint64_t *ret_bytes, uint32_t *ret_skipped);

#endif
