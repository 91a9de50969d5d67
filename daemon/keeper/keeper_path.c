/* keeper_path.c: a keeper's path resolution beneath its workspace. See keeper_path.h. */
#include "keeper_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plan.h"
#include "proto.h"

#define KEEPER_PATH_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* openat2 with the keeper's resolve flags; retried on EINTR and EAGAIN. */
int
keeper_path_open(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
			       .mode = (flags & O_CREAT) ? mode : 0,
			       .resolve = KEEPER_PATH_RESOLVE};
	long fd;

	int tries = 0;

	/* EAGAIN: a ".." was resolved while some mount or rename happened on
	 * the host (the kernel cannot then vouch for the result); the lookup
	 * is to be retried. With sandboxes mounting all the time it happens. */
	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++tries < 64)));
	return (int)fd;
}

/*
 * Split path into its parent directory (opened, returned) and last
 * component (copied to leaf). With mkdirs, missing directories are made on
 * the way, one component at a time, each opened again through openat2 so
 * a link put in its place is refused. Returns the parent fd or -errno.
 */
int
keeper_path_parent(int root, const char *path, bool mkdirs, char *leaf, size_t leaflen)
{
	char comp[PROTO_NAME_MAX + 1];
	const char *p = path;
	int cur = -1;

	if (path[0] == '\0')
		return -EINVAL;
	cur = fcntl(root, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return -errno;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		int next;

		if (n == 0 || n >= sizeof(comp)) {
			close(cur);
			return n == 0 ? -EINVAL : -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (slash == NULL) {
			if (n >= leaflen || strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
				close(cur);
				return -EINVAL;
			}
			memcpy(leaf, comp, n + 1);
			return cur;
		}
		if (mkdirs && mkdirat(cur, comp, 0755) == 0)
			(void)fchownat(cur, comp, PLAN_SANDBOX_UID, PLAN_SANDBOX_GID,
				       AT_SYMLINK_NOFOLLOW);
		next = keeper_path_open(cur, comp, O_RDONLY | O_DIRECTORY, 0);
		close(cur);
		if (next < 0)
			return -errno;
		cur = next;
		p = slash + 1;
	}
}
