/*
 * keeper_path.h: how a session's keeper resolves a client's path beneath its
 * workspace: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS) relative to an open directory, one component at a
 * time. "..", absolute paths, a link at any component and a link swapped in
 * during the walk fail, with no string check involved. No allocation: it
 * runs in the keeper, a clone of the spawner.
 */
#ifndef AIRLOCKD_KEEPER_PATH_H
#define AIRLOCKD_KEEPER_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* openat2 of path beneath dirfd with the keeper's resolve flags, always
 * O_CLOEXEC. Returns the fd, or -1 with errno set, like openat(). */
int keeper_path_open(int dirfd, const char *path, int flags, mode_t mode);

/*
 * Split path into its parent directory (opened beneath root, returned) and
 * its last component (copied to leaf, leaflen bytes at most with the NUL).
 * An empty path or component, a leaf "." or "..", a component longer than
 * PROTO_NAME_MAX and a leaf too long for leaf fail. With mkdirs, missing
 * directories are made on the way, owned by the code's uid. Returns the
 * parent's fd or -errno.
 */
int keeper_path_parent(int root, const char *path, bool mkdirs, char *leaf, size_t leaflen);

#endif
