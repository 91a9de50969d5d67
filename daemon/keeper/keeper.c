/*
 * keeper.c: a session's keeper. See docs/design-sessions.md.
 *
 * It runs as root of its own user namespace (the session's host uid), owns
 * the workspace tmpfs in its own mount namespace, and answers fixed requests
 * (keep_msg.h) from the frontend one at a time. Every path is walked with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
 * relative to the workspace's root fd: "..", absolute paths, a link at any
 * component and a link swapped in during the operation fail, with no string
 * check involved. Like the supervisor it was cloned from the spawner: no
 * allocation, no stdio.
 */
#include "keeper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "closefds.h"
#include "dirents.h"
#include "fdpass.h"
#include "keep_msg.h"
#include "keeper_path.h"
#include "keeper_tar.h"
#include "plan.h"
#include "fdio.h"

#define KEEP_MNT "/tmp"

/*
 * Write the contents of memfd into path, making directories as needed. The
 * data goes to a new temporary file first, renamed over the leaf at the end:
 * a write that fails (a full workspace) leaves nothing half-written, and the
 * rename replaces whatever is at the leaf (a link is replaced, not followed).
 */
static int
keep_write(int root, const char *path, int memfd)
{
	static uint64_t tmp_seq;
	char leaf[PROTO_NAME_MAX + 1], tmp[64];
	struct stat st;
	off_t off = 0;
	int dir, fd, r = 0;

	if (memfd < 0 || fstat(memfd, &st) < 0)
		return -EINVAL;
	dir = keeper_path_parent(root, path, true, leaf, sizeof(leaf));
	if (dir < 0)
		return dir;
	/* A link at the leaf is refused like one at any other component
	 * (the rename below would replace it, never follow it, either way). */
	if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		close(dir);
		return S_ISLNK(st.st_mode) ? -ELOOP : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if (fstat(memfd, &st) < 0) {
		close(dir);
		return -EINVAL;
	}
	/* A name the session's code cannot guess, so it cannot plant one to
	 * make the write fail (O_EXCL would refuse it). */
	{
		uint64_t rnd = 0;

		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			rnd = ++tmp_seq;
		snprintf(tmp, sizeof(tmp), ".airlock-put-%016llx", (unsigned long long)rnd);
	}
	fd = keeper_path_open(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	if (fd < 0) {
		r = -errno;
		close(dir);
		return r;
	}
	if (fchown(fd, PLAN_SANDBOX_UID, PLAN_SANDBOX_GID) < 0) {
		r = -errno;
		goto out;
	}
	while (off < st.st_size) {
		ssize_t n = sendfile(fd, memfd, &off, (size_t)(st.st_size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
	}
	if (r == 0 && renameat(dir, tmp, dir, leaf) < 0)
		r = -errno;
out:
	if (r != 0)
		(void)unlinkat(dir, tmp, 0);
	close(fd);
	close(dir);
	return r;
}

/* Open path for reading: a regular file only, never blocking on a FIFO. */
static int
keep_read(int root, const char *path, int *ret_fd, uint64_t *ret_size)
{
	struct stat st;
	int fd;

	if (path[0] == '\0')
		return -EINVAL;
	fd = keeper_path_open(root, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	*ret_fd = fd;
	*ret_size = (uint64_t)st.st_size;
	return 0;
}

/* List a directory into a sealed memfd of struct keep_entry records. */
static int
keep_list(int root, const char *path, int *ret_fd, uint32_t *ret_count, uint64_t *ret_more)
{
	struct dirents it;
	const struct dirent64 *d;
	uint32_t count = 0;
	int dir, mfd, r = 0;

	/* A fresh open, even of the root: a dup would share its directory
	 * offset, and a second listing would start at the end. */
	dir = keeper_path_open(root, path[0] == '\0' ? "." : path, O_RDONLY | O_DIRECTORY, 0);
	if (dir < 0)
		return -errno;
	mfd = memfd_create("airlock-list", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0) {
		r = -errno;
		close(dir);
		return r;
	}
	dirents_init(&it, dir);
	while (count < KEEP_LIST_MAX && (d = dirents_next(&it)) != NULL) {
		struct keep_entry e;
		struct stat st;
		size_t nl = strlen(d->d_name);

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0 ||
		    nl > PROTO_NAME_MAX)
			continue;
		if (fstatat(dir, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		memset(&e, 0, sizeof(e));
		memcpy(e.name, d->d_name, nl + 1);
		e.kind = S_ISREG(st.st_mode)   ? KEEP_KIND_FILE
			 : S_ISDIR(st.st_mode) ? KEEP_KIND_DIR
			 : S_ISLNK(st.st_mode) ? KEEP_KIND_LINK
					       : KEEP_KIND_OTHER;
		e.size = (uint64_t)st.st_size;
		e.mtime_ms = (uint64_t)st.st_mtim.tv_sec * 1000ULL +
			     (uint64_t)st.st_mtim.tv_nsec / 1000000ULL;
		if (write(mfd, &e, sizeof(e)) != (ssize_t)sizeof(e)) {
			r = errno ? -errno : -EIO;
			break;
		}
		count++;
	}
	if (r == 0)
		r = it.err;
	close(dir);
	if (r == 0 &&
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		r = -errno;
	if (r != 0) {
		close(mfd);
		return r;
	}
	*ret_fd = mfd;
	*ret_count = count;
	*ret_more = count >= KEEP_LIST_MAX; /* there may be more than we said */
	return 0;
}

/* Delete a file, a link (not what it points to) or an empty directory. */
static int
keep_delete(int root, const char *path)
{
	char leaf[PROTO_NAME_MAX + 1];
	int dir, r = 0;

	dir = keeper_path_parent(root, path, false, leaf, sizeof(leaf));
	if (dir < 0)
		return dir;
	if (unlinkat(dir, leaf, 0) < 0) {
		r = -errno;
		if ((r == -EISDIR || r == -EPERM) && unlinkat(dir, leaf, AT_REMOVEDIR) == 0)
			r = 0;
		else if (r == -EISDIR || r == -EPERM)
			r = -errno;
	}
	close(dir);
	return r;
}

/* Make a directory (its parents too), owned by the code's uid; one that
 * is there already is fine, anything else at its name is not. */
static int
keep_mkdir(int root, const char *path)
{
	char leaf[PROTO_NAME_MAX + 1];
	struct stat st;
	int dir, r = 0;

	dir = keeper_path_parent(root, path, true, leaf, sizeof(leaf));
	if (dir < 0)
		return dir;
	if (mkdirat(dir, leaf, 0755) == 0)
		(void)fchownat(dir, leaf, PLAN_SANDBOX_UID, PLAN_SANDBOX_GID, AT_SYMLINK_NOFOLLOW);
	else if (errno != EEXIST)
		r = -errno;
	else if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		r = -EEXIST;
	close(dir);
	return r;
}

/* The workspace as one archive, written to out (a file or memfd of the
 * frontend's; never read back here). */
static int
keep_save(int root, int out, uint64_t *ret_bytes, uint32_t *ret_skipped)
{
	struct stat st;

	if (out < 0 || fstat(out, &st) < 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	return keeper_tar_write(root, out, ret_bytes, ret_skipped);
}

/* A detached copy of the workspace mount, for one run's /workspace. */
static int
keep_mount(int *ret_fd)
{
	long fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (fd < 0)
		return -errno;
	*ret_fd = (int)fd;
	return 0;
}

/* Answer one request. */
static void
keep_serve(int sock, int root, const struct keep_req *req, int in_fd)
{
	struct keep_reply rep = {.op = KEEP_REPLY, .seq = req->seq};
	int out_fd = -1;

	switch (req->op) {
	case KEEP_MOUNT:
		rep.err = keep_mount(&out_fd);
		break;
	case KEEP_WRITE:
		rep.err = keep_write(root, req->path, in_fd);
		break;
	case KEEP_READ:
		rep.err = keep_read(root, req->path, &out_fd, &rep.size);
		break;
	case KEEP_LIST:
		rep.err = keep_list(root, req->path, &out_fd, &rep.count, &rep.size);
		break;
	case KEEP_DELETE:
		rep.err = keep_delete(root, req->path);
		break;
	case KEEP_MKDIR:
		rep.err = keep_mkdir(root, req->path);
		break;
	case KEEP_SAVE:
		rep.err = keep_save(root, in_fd, &rep.size, &rep.count);
		break;
	default:
		rep.err = -EINVAL;
		break;
	}
	(void)fdpass_send(sock, &rep, sizeof(rep), &out_fd, out_fd >= 0 ? 1 : 0);
	fd_close(out_fd);
}

/* Report the end of set-up (err = 0 for ready, or -errno) and, on error, exit. */
static void
keep_ready(int sock, int err)
{
	struct keep_reply rep = {.op = KEEP_READY, .err = err};

	(void)send(sock, &rep, sizeof(rep), MSG_NOSIGNAL);
	if (err != 0)
		_exit(1);
}

__attribute__((noreturn)) void
keeper_main(const struct keeper_ctx *ctx)
{
	char opts[128], c;
	int root, sock = ctx->sock, keep[2] = {ctx->sync_fd, ctx->sock}, i, r;

	/* Close everything but the sync pipe and our socket. */
	for (i = 0; i < 2; i++)
		if (keep[i] < 3)
			keep_ready(sock, -EBADF);
	r = closefds_except(keep, 2);
	if (r < 0)
		keep_ready(sock, r);
	if (read(ctx->sync_fd, &c, 1) != 1)
		keep_ready(sock, -EPIPE);
	close(ctx->sync_fd);
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		keep_ready(sock, -errno);
	/* After the uid change, which clears it; see sb_start_up() in sandbox.c. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		keep_ready(sock, -errno);
	/* The workspace: a tmpfs of the session's size in our private mount
	 * tree, owned by the code's uid, nosuid and nodev. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		keep_ready(sock, -errno);
	{
		int n = snprintf(opts, sizeof(opts),
				 "mode=0755,uid=%d,gid=%d,size=%llu,nr_inodes=65536",
				 PLAN_SANDBOX_UID, PLAN_SANDBOX_GID,
				 (unsigned long long)ctx->workspace_bytes);

		if (n < 0 || (size_t)n >= sizeof(opts))
			keep_ready(sock, -EINVAL);
	}
	if (mount("airlock-session", KEEP_MNT, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		keep_ready(sock, -errno);
	/*
	 * The workspace becomes our root and the host's tree is detached
	 * (issue 13, finding 7): a keeper lives as long as its session (up to
	 * a day) and its copy of the host's mounts kept every one of them
	 * alive, and busy for an administrator's umount, that long. It needs
	 * no path outside its workspace: requests come on its socket, files
	 * are resolved beneath the root fd, mounts cloned from "/".
	 */
	if (chdir(KEEP_MNT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		keep_ready(sock, -errno);
	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		keep_ready(sock, -errno);
	keep_ready(sock, 0);
	for (;;) {
		struct keep_req req;
		int fds[2];
		size_t nfds = 0;
		ssize_t n = fdpass_recv(sock, &req, sizeof(req), fds, 1, &nfds);

		if (n == -EINTR)
			continue;
		/* EOF or anything not ours: the session is over. */
		if (n != (ssize_t)sizeof(req))
			_exit(0);
		req.path[sizeof(req.path) - 1] = '\0';
		keep_serve(sock, root, &req, nfds == 1 ? fds[0] : -1);
		fdpass_close_all(fds, nfds);
	}
}
