/* file.h: files read from a session and directory listings (internal). */
#ifndef AIRLOCK_FILE_H
#define AIRLOCK_FILE_H

#include "proto.h"

struct airlock_file;
struct airlock_file_list;

/* Copy a decoded file_data reply into a new airlock_file that does not depend
 * on the message (a memfd payload is mapped, not copied). Returns 0 or -errno. */
int file_from_proto(const struct proto_file_data *pd, struct airlock_file **ret);

/* Copy a decoded file_list_ok reply into a new airlock_file_list. Returns 0
 * or -ENOMEM. */
int file_list_from_proto(const struct proto_file_list *pl, struct airlock_file_list **ret);

/*
 * Check a path for a file operation: non-empty unless may_be_empty, at most
 * PROTO_PATH_MAX bytes. Only bounds: the daemon resolves it beneath the
 * workspace. Returns 0, -EINVAL or -ENAMETOOLONG.
 */
int file_path_check(const char *path, bool may_be_empty);

#endif
