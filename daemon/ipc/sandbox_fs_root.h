/*
 * sandbox_fs_root.h: the root every sandbox starts from (a table of set-up
 * ops) and which of its paths, and which paths under /usr, a profile's
 * hidden_paths may name (docs/design-profiles.md, section 3.4).
 */
#ifndef AIRLOCKD_SANDBOX_FS_ROOT_H
#define AIRLOCKD_SANDBOX_FS_ROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox.h"

extern const struct sandbox_fs_op sandbox_fs_root[];
extern const size_t sandbox_fs_root_len;

/*
 * Whether path may be hidden: absolute and normalised (rootspec_path_normal:
 * no "//", ".", "..", trailing '/', at most 255 bytes), and either beneath
 * /usr (a whiteout in an overlay on /usr) or one of the /etc entries the
 * root makes itself (a generated file or a bind: removed in phase two).
 */
bool sandbox_fs_root_hidable(const char *path);

/* The /etc entries sandbox_fs_root_hidable() accepts, ", "-separated, into
 * buf (for an error message; truncated at len). */
void sandbox_fs_root_etc_list(char *buf, size_t len);

/* Whether two of n hidable paths are the same or one is beneath the other:
 * -EINVAL with their indexes in *ret_i < *ret_j, else 0. */
int sandbox_fs_root_hidden_overlap(const char *const *paths, size_t n, size_t *ret_i,
				   size_t *ret_j);

#endif
