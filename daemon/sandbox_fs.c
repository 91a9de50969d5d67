/*
 * sandbox_fs.c: a sandbox's filesystem, built by its supervisor between clone
 * and exec: no allocation, no stdio; every failure is sandbox_fail(step).
 *
 * Phase one (sandbox_fs_base), before any request: a tmpfs root filled by a
 * list of set-up ops (sandbox_fs_root, run by sandbox_fs_apply), then
 * pivot_root. Phase two (sandbox_fs_run), for one request: the run's sized
 * mounts and files, then the root becomes read-only.
 */
#include "sandbox_child.h"

#include <fcntl.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Write all of len bytes. */
static int
sb_write_all(int fd, const void *data, uint64_t len)
{
	const char *p = data;

	while (len > 0) {
		size_t chunk = len > (1U << 30) ? (1U << 30) : (size_t)len;
		ssize_t n = write(fd, p, chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* Create path with data, mode and owner. */
static void
sb_write_file(const char *path, const void *data, uint64_t len, mode_t mode, uid_t uid, int step)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);

	if (fd < 0)
		sandbox_fail(step, errno);
	if (sb_write_all(fd, data, len) < 0 || fchown(fd, uid, uid) < 0 || fchmod(fd, mode) < 0)
		sandbox_fail(step, errno);
	close(fd);
}

/* Make the mount at dst read-only (and nosuid, nodev), keeping the flags
 * the kernel locked. */
static void
sb_remount_ro(const char *dst, int step)
{
	struct statvfs sv;
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;

	/* A remount inside a user namespace must keep every flag the outer
	 * mount has (the kernel locks them); read them back and keep them. */
	SB_CHECK(statvfs(dst, &sv), step);
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		flags |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	SB_CHECK(mount(NULL, dst, NULL, flags, NULL), step);
}

/* Bind src onto dst read-only, keeping the flags the kernel locked. */
static void
sb_bind_ro(const char *src, const char *dst, int step)
{
	SB_CHECK(mount(src, dst, NULL, MS_BIND | MS_REC, NULL), step);
	sb_remount_ro(dst, step);
}

/* Make an empty file to bind over. */
static void
sb_touch(const char *path, int step)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);

	if (fd < 0)
		sandbox_fail(step, errno);
	close(fd);
}

/* Decimal formatting without stdio. */
static char *
sb_utoa(uint64_t v, char *end)
{
	*--end = '\0';
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return end;
}

static const char sb_passwd[] = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
				"sandbox:x:1000:1000:sandbox:" PLAN_HOME ":/bin/sh\n"
				"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char sb_group[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char sb_hosts[] = "127.0.0.1\tlocalhost\n::1\tlocalhost\n";
static const char sb_nsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";

/* Mount a tmpfs with "mode=...,size=N[,nr_inodes=M][,uid=..,gid=..]". */
static void
sb_tmpfs(const char *dst, const char *mode, uint64_t size, uint64_t inodes, bool owned, int step)
{
	char opts[160], nb[24], ib[24];
	const char *ns = sb_utoa(size, nb + sizeof(nb));

	if (inodes > 0)
		SB_PATH(opts, step, "mode=%s,size=%s,nr_inodes=%s%s", mode, ns,
			sb_utoa(inodes, ib + sizeof(ib)), owned ? ",uid=1000,gid=1000" : "");
	else
		SB_PATH(opts, step, "mode=%s,size=%s%s", mode, ns,
			owned ? ",uid=1000,gid=1000" : "");
	SB_CHECK(mount("airlock", dst, "tmpfs", MS_NOSUID | MS_NODEV, opts), step);
}

/* Write the input files into the workspace, making parent directories. */
static void
sb_input_files(const struct plan_view *pv)
{
	uint32_t i;

	for (i = 0; i < pv->nfiles; i++) {
		char path[PROTO_NAME_MAX + sizeof(PLAN_WORKSPACE) + 2];
		size_t base;
		char *p;

		SB_PATH(path, SANDBOX_STEP_INPUT_FILES, "%s/%s", PLAN_WORKSPACE, pv->files[i].name);
		base = strlen(PLAN_WORKSPACE) + 1;
		/* The workspace is new and empty, and names were checked by
		 * plan_parse (no "..", no empty component): plain paths are
		 * safe here, no link can exist yet. */
		for (p = path + base; (p = strchr(p, '/')) != NULL; p++) {
			*p = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				sandbox_fail(SANDBOX_STEP_INPUT_FILES, errno);
			if (chown(path, PLAN_SANDBOX_UID, PLAN_SANDBOX_GID) < 0)
				sandbox_fail(SANDBOX_STEP_INPUT_FILES, errno);
			*p = '/';
		}
		sb_write_file(path, pv->files[i].data, pv->files[i].len, pv->files[i].mode,
			      PLAN_SANDBOX_UID, SANDBOX_STEP_INPUT_FILES);
	}
}

/* A row of the root: an op of kind, failing as step, always or only when the
 * host has what it needs (enum sandbox_fs_when). */
#define SB_OP(kind, step, dst, src)                                                                \
	{                                                                                          \
		SANDBOX_FS_##kind, SANDBOX_STEP_##step, SANDBOX_FS_ALWAYS, dst, src, 0, 0          \
	}
#define SB_OP_IF(when, kind, step, dst, src)                                                       \
	{                                                                                          \
		SANDBOX_FS_##kind, SANDBOX_STEP_##step, SANDBOX_FS_IF_##when, dst, src, 0, 0       \
	}

/*
 * The root every sandbox starts from, in order. Parents come before what is
 * in them; a bind's mount point is made by the op before it. Per-runtime
 * binds will be further entries of a list like this one, run by the same
 * loop (sandbox_fs_apply).
 */
static const struct sandbox_fs_op sandbox_fs_root[] = {
	SB_OP(MKDIR, MKDIR, "usr", NULL),
	SB_OP(MKDIR, MKDIR, "etc", NULL),
	SB_OP(MKDIR, MKDIR, "proc", NULL),
	SB_OP(MKDIR, MKDIR, "dev", NULL),
	SB_OP(MKDIR, MKDIR, "tmp", NULL),
	SB_OP(MKDIR, MKDIR, "run", NULL),
	SB_OP(MKDIR, MKDIR, "run/airlock", NULL),
	SB_OP(MKDIR, MKDIR, "run/tools", NULL), /* the tool bridge (sandbox_tools.c) */
	SB_OP(MKDIR, MKDIR, "oldroot", NULL),
	SB_OP(MKDIR, MKDIR, "workspace", NULL),
	SB_OP(BIND_RO, BIND_RO, "usr", "/usr"),
	SB_OP(TOPS, SYMLINK, "", NULL),
	/* A generated /etc: no host account, host name or resolver leaks in. */
	SB_OP(FILE, ETC, "etc/passwd", sb_passwd),
	SB_OP(FILE, ETC, "etc/group", sb_group),
	SB_OP(FILE, ETC, "etc/hosts", sb_hosts),
	SB_OP(FILE, ETC, "etc/nsswitch.conf", sb_nsswitch),
	SB_OP(FILE, ETC, "etc/resolv.conf", ""),
	SB_OP_IF(LD_CACHE, TOUCH, ETC, "etc/ld.so.cache", NULL),
	SB_OP_IF(LD_CACHE, BIND_RO, BIND_RO, "etc/ld.so.cache", "/etc/ld.so.cache"),
	SB_OP_IF(ALTERNATIVES, MKDIR, ETC, "etc/alternatives", NULL),
	SB_OP_IF(ALTERNATIVES, BIND_RO, BIND_RO, "etc/alternatives", "/etc/alternatives"),
	SB_OP_IF(SSL, MKDIR, ETC, "etc/ssl", NULL),
	SB_OP_IF(SSL, BIND_RO, BIND_RO, "etc/ssl", "/etc/ssl"),
	/*
	 * The host's configuration the data-science stack reads, read-only:
	 * /etc/matplotlibrc (Debian's matplotlib finds its defaults only there:
	 * "Could not find matplotlibrc file" without it) and /etc/fonts
	 * (fontconfig's configuration; the fonts themselves are in /usr). Both are
	 * shipped, non-secret package configuration, like /etc/ssl.
	 */
	SB_OP_IF(MPLRC, TOUCH, ETC, "etc/matplotlibrc", NULL),
	SB_OP_IF(MPLRC, BIND_RO, BIND_RO, "etc/matplotlibrc", "/etc/matplotlibrc"),
	SB_OP_IF(FONTS, MKDIR, ETC, "etc/fonts", NULL),
	SB_OP_IF(FONTS, BIND_RO, BIND_RO, "etc/fonts", "/etc/fonts"),
	SB_OP(PROC, PROC, "proc", NULL),
	{SANDBOX_FS_TMPFS, SANDBOX_STEP_DEV, SANDBOX_FS_ALWAYS, "dev", "0755", 65536, 64},
	SB_OP(TOUCH, DEV, "dev/null", NULL),
	SB_OP(BIND_DEV, DEV, "dev/null", "/dev/null"),
	SB_OP(TOUCH, DEV, "dev/zero", NULL),
	SB_OP(BIND_DEV, DEV, "dev/zero", "/dev/zero"),
	SB_OP(TOUCH, DEV, "dev/full", NULL),
	SB_OP(BIND_DEV, DEV, "dev/full", "/dev/full"),
	SB_OP(TOUCH, DEV, "dev/random", NULL),
	SB_OP(BIND_DEV, DEV, "dev/random", "/dev/random"),
	SB_OP(TOUCH, DEV, "dev/urandom", NULL),
	SB_OP(BIND_DEV, DEV, "dev/urandom", "/dev/urandom"),
	SB_OP(SYMLINK, DEV, "dev/fd", "/proc/self/fd"),
	SB_OP(SYMLINK, DEV, "dev/stdin", "/proc/self/fd/0"),
	SB_OP(SYMLINK, DEV, "dev/stdout", "/proc/self/fd/1"),
	SB_OP(SYMLINK, DEV, "dev/stderr", "/proc/self/fd/2"),
	/* POSIX shared memory and semaphores land in the run's /tmp, under
	 * its size limit, private to this run. */
	SB_OP(SYMLINK, DEV, "dev/shm", "/tmp"),
	/*
	 * The run's own terminals: a new devpts instance at /dev/pts and /dev/ptmx
	 * pointing into it, so openpty(), script and pexpect work. newinstance: the
	 * host's (and other runs') ptys are not in it, and its ptys are not in the
	 * host's. ptmxmode=0666: the code (uid 1000) opens pts/ptmx, which the
	 * instance's root (our namespace's root) owns. max=64 bounds what one run
	 * takes of the kernel's shared pool (kernel.pty.max, 4096, of which 1024 are
	 * kept for the host's own instance): a run that opens hundreds gets ENOSPC
	 * at 64. No gid= option: gid 5 (tty) is not mapped in the run, the slaves
	 * get the opener's gid. The kernel lets a user namespace mount devpts and
	 * keeps its device nodes usable (its superblock is never nodev); nothing
	 * else in /dev can be a device (its tmpfs is nodev).
	 */
	SB_OP(MKDIR, DEV, "dev/pts", NULL),
	SB_OP(DEVPTS, DEV, "dev/pts", NULL),
	SB_OP(SYMLINK, DEV, "dev/ptmx", "pts/ptmx"),
};

/* Whether the host has what an op needs. */
static bool
sb_fs_wanted(const struct sandbox_layout *l, enum sandbox_fs_when when)
{
	switch (when) {
	case SANDBOX_FS_ALWAYS:
		return true;
	case SANDBOX_FS_IF_LD_CACHE:
		return l->has_ld_cache;
	case SANDBOX_FS_IF_ALTERNATIVES:
		return l->has_alternatives;
	case SANDBOX_FS_IF_SSL:
		return l->has_ssl;
	case SANDBOX_FS_IF_MPLRC:
		return l->has_mplrc;
	case SANDBOX_FS_IF_FONTS:
		return l->has_fonts;
	}
	return false;
}

/* The host's top-level directories as the host has them: a link (merged
 * /usr) copied, a directory bound read-only. */
static void
sb_fs_tops(const struct sandbox_layout *l)
{
	char path[256];
	int i;

	for (i = 0; i < l->ntops; i++) {
		SB_PATH(path, SANDBOX_STEP_SYMLINK, SB_NEWROOT "/%s", l->tops[i].name);
		if (l->tops[i].is_link) {
			SB_CHECK(symlink(l->tops[i].target, path), SANDBOX_STEP_SYMLINK);
		} else {
			char src[32];

			SB_PATH(src, SANDBOX_STEP_BIND_RO, "/%s", l->tops[i].name);
			SB_CHECK(mkdir(path, 0755), SANDBOX_STEP_MKDIR);
			sb_bind_ro(src, path, SANDBOX_STEP_BIND_RO);
		}
	}
}

/*
 * The root spec's mounts, each a detached copy of the host's tree (phase
 * one, before pivot_root: the host's tree is still ours to copy), attached
 * or closed in phase two. Static, like the rest of the supervisor's state.
 */
static int sb_trees[ROOTSPEC_MOUNTS_MAX];
static bool sb_tree_dir[ROOTSPEC_MOUNTS_MAX];

/*
 * Open src as detached tree i: read-only, nosuid, nodev and, unless a
 * package tree, noexec, on every mount in it (AT_RECURSIVE), before anything
 * of it is visible. The spawner checked the path as root; we open it again
 * as the run's own host uid (other's rights: nothing its frontend could not
 * read itself) refusing every link (RESOLVE_NO_SYMLINKS), so a component
 * swapped since then for a link is not followed.
 */
static void
sb_tree_open(const char *src, size_t i, uint64_t flags, int step)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	struct mount_attr attr = {.attr_set =
					  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	struct stat st;
	long fd, tree;

	if (i >= ROOTSPEC_MOUNTS_MAX)
		sandbox_fail(step, EINVAL);
	if (!(flags & ROOTSPEC_F_PACKAGE))
		attr.attr_set |= MOUNT_ATTR_NOEXEC;
	fd = syscall(SYS_openat2, AT_FDCWD, src, &how, sizeof(how));
	if (fd < 0)
		sandbox_fail(step, errno);
	if (fstat((int)fd, &st) < 0)
		sandbox_fail(step, errno);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		sandbox_fail(step, EINVAL);
	tree = syscall(SYS_open_tree, (int)fd, "",
		       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		sandbox_fail(step, errno);
	close((int)fd);
	SB_CHECK(syscall(SYS_mount_setattr, (int)tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
			 sizeof(attr)),
		 step);
	sb_trees[i] = (int)tree;
	sb_tree_dir[i] = S_ISDIR(st.st_mode);
}

/* Make the directories of path (absolute, normalised) but the last component. */
static void
sb_mkdir_parents(char *path, int step)
{
	char *p;

	for (p = strchr(path + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			sandbox_fail(step, errno);
		*p = '/';
	}
}

/*
 * Phase two: attach the trees the plan names at their targets, close the
 * rest. The plan's bits index the root spec of its generation; a plan made
 * for another (a reload changed the [mount] sections between the request
 * and its sandbox) fails the run (ESTALE) rather than bind another mount.
 */
static void
sb_trees_attach(const struct plan_view *pv, const struct rootspec *rs)
{
	uint32_t want = pv->hdr->mounts, i;

	if (want != 0 && (rs == NULL || pv->hdr->rootspec_gen != rs->generation))
		sandbox_fail(SANDBOX_STEP_MOUNTS, ESTALE);
	if (rs == NULL)
		return;
	if (rs->nmounts < 32 && (want >> rs->nmounts) != 0)
		sandbox_fail(SANDBOX_STEP_MOUNTS, EINVAL);
	for (i = 0; i < rs->nmounts; i++) {
		char path[ROOTSPEC_PATH_MAX];

		if (!(want & (1U << i))) {
			close(sb_trees[i]);
			continue;
		}
		SB_PATH(path, SANDBOX_STEP_MOUNTS, "%s", rs->mounts[i].target);
		sb_mkdir_parents(path, SANDBOX_STEP_MOUNTS);
		if (sb_tree_dir[i]) {
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				sandbox_fail(SANDBOX_STEP_MOUNTS, errno);
		} else {
			sb_touch(path, SANDBOX_STEP_MOUNTS);
		}
		SB_CHECK(syscall(SYS_move_mount, sb_trees[i], "", AT_FDCWD, path,
				 MOVE_MOUNT_F_EMPTY_PATH),
			 SANDBOX_STEP_MOUNTS);
		close(sb_trees[i]);
	}
}

void
sandbox_fs_apply(const struct sandbox_layout *l, const struct sandbox_fs_op *ops, size_t nops)
{
	char path[256];
	size_t i;

	for (i = 0; i < nops; i++) {
		const struct sandbox_fs_op *op = &ops[i];

		if (!sb_fs_wanted(l, op->when))
			continue;
		SB_PATH(path, op->step, SB_NEWROOT "/%s", op->dst);
		switch (op->kind) {
		case SANDBOX_FS_MKDIR:
			SB_CHECK(mkdir(path, 0755), op->step);
			break;
		case SANDBOX_FS_TOUCH:
			sb_touch(path, op->step);
			break;
		case SANDBOX_FS_BIND_RO:
			sb_bind_ro(op->src, path, op->step);
			break;
		case SANDBOX_FS_BIND_DEV:
			SB_CHECK(mount(op->src, path, NULL, MS_BIND, NULL), op->step);
			break;
		case SANDBOX_FS_SYMLINK:
			SB_CHECK(symlink(op->src, path), op->step);
			break;
		case SANDBOX_FS_FILE:
			sb_write_file(path, op->src, strlen(op->src), 0644, 0, op->step);
			break;
		case SANDBOX_FS_TMPFS:
			sb_tmpfs(path, op->src, op->size, op->inodes, false, op->step);
			break;
		case SANDBOX_FS_PROC:
			SB_CHECK(
				mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
				op->step);
			break;
		case SANDBOX_FS_DEVPTS:
			SB_CHECK(mount("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC,
				       "newinstance,ptmxmode=0666,mode=0620,max=64"),
				 op->step);
			break;
		case SANDBOX_FS_TOPS:
			sb_fs_tops(l);
			break;
		case SANDBOX_FS_TREE:
			sb_tree_open(op->src, (size_t)op->size, op->inodes, op->step);
			break;
		default:
			sandbox_fail(op->step, EINVAL);
		}
	}
}

void
sandbox_fs_base(const struct sandbox_layout *l, const struct rootspec *rs)
{
	struct sandbox_fs_op trees[ROOTSPEC_MOUNTS_MAX];
	uint32_t i, n = rs != NULL ? rs->nmounts : 0;

	/* Nothing we do may propagate back to the host. */
	SB_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), SANDBOX_STEP_MOUNT_PRIVATE);
	sb_tmpfs(SB_NEWROOT, "0755", 4ULL * 1024 * 1024, 4096, false, SANDBOX_STEP_ROOT_TMPFS);
	sandbox_fs_apply(l, sandbox_fs_root, sizeof(sandbox_fs_root) / sizeof(sandbox_fs_root[0]));
	/* The root spec's mounts: one more row each, run by the same loop. */
	if (n > ROOTSPEC_MOUNTS_MAX)
		sandbox_fail(SANDBOX_STEP_MOUNTS, EINVAL);
	for (i = 0; i < n; i++)
		trees[i] =
			(struct sandbox_fs_op){SANDBOX_FS_TREE,	     SANDBOX_STEP_MOUNTS,
					       SANDBOX_FS_ALWAYS,    "", /* attached in phase two */
					       rs->mounts[i].source, i,
					       rs->mounts[i].flags};
	sandbox_fs_apply(l, trees, n);
	/* pivot_root(".", ".") stacks the old root under the new one; detaching
	 * it leaves no path back to the host's tree. */
	SB_CHECK(chdir(SB_NEWROOT), SANDBOX_STEP_PIVOT_ROOT);
	SB_CHECK(syscall(SYS_pivot_root, ".", "."), SANDBOX_STEP_PIVOT_ROOT);
	SB_CHECK(umount2(".", MNT_DETACH), SANDBOX_STEP_UMOUNT_OLD);
	SB_CHECK(chdir("/"), SANDBOX_STEP_PIVOT_ROOT);
	SB_CHECK(rmdir("/oldroot"), SANDBOX_STEP_UMOUNT_OLD);
}

/*
 * The code's home (PLAN_HOME) on the run's fresh /tmp, owned by the code:
 * HOME and the XDG directories point there, so caches are never artifacts,
 * and it shares /tmp's size limit.
 */
static void
sb_home(void)
{
	SB_CHECK(mkdir(PLAN_HOME, 0700), SANDBOX_STEP_TMP);
	SB_CHECK(chown(PLAN_HOME, PLAN_SANDBOX_UID, PLAN_SANDBOX_GID), SANDBOX_STEP_TMP);
}

void
sandbox_fs_run(const struct plan_view *pv, const struct rootspec *rs, int ws_fd)
{
	const uint64_t *lim = pv->hdr->limits;
	char path[256];

	sb_tmpfs("/tmp", "1777", lim[PROTO_LIMIT_TMP_BYTES], 16384, false, SANDBOX_STEP_TMP);
	sb_home();
	if (ws_fd >= 0) {
		/* A session's workspace: the keeper's tmpfs, cloned detached
		 * (open_tree) for this run and attached here. */
		SB_CHECK(syscall(SYS_move_mount, ws_fd, "", AT_FDCWD, PLAN_WORKSPACE,
				 MOVE_MOUNT_F_EMPTY_PATH),
			 SANDBOX_STEP_WORKSPACE);
		close(ws_fd);
	} else {
		sb_tmpfs(PLAN_WORKSPACE, "0755", lim[PROTO_LIMIT_WORKSPACE_BYTES], 16384, true,
			 SANDBOX_STEP_WORKSPACE);
	}
	sb_write_file("/etc/hostname", pv->hostname, strlen(pv->hostname), 0644, 0,
		      SANDBOX_STEP_ETC);
	/* The code file lives outside the workspace so it is never an artifact,
	 * on a tmpfs of its own size, read-only before the code starts. */
	sb_tmpfs(PLAN_CODE_DIR, "0755", 65536 + pv->hdr->code_len + pv->hdr->stdin_len, 16, false,
		 SANDBOX_STEP_CODE_FILE);
	if (pv->code_name[0] != '\0') {
		SB_PATH(path, SANDBOX_STEP_CODE_FILE, PLAN_CODE_DIR "/%s", pv->code_name);
		sb_write_file(path, pv->code, pv->hdr->code_len, 0444, 0, SANDBOX_STEP_CODE_FILE);
	}
	if (pv->stdin_data != NULL)
		sb_write_file(PLAN_CODE_DIR "/.stdin", pv->stdin_data, pv->hdr->stdin_len, 0444, 0,
			      SANDBOX_STEP_CODE_FILE);
	SB_CHECK(mount(NULL, PLAN_CODE_DIR, NULL,
		       MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
		 SANDBOX_STEP_REMOUNT_RO);
	sb_input_files(pv);
	sb_trees_attach(pv, rs);
	/*
	 * file_write = false: the workspace (its input files written) and /tmp
	 * (the home made on it) become read-only mounts too, so every write,
	 * create, rename, link, mknod, chmod, utime and truncate beneath them
	 * fails with EROFS whatever path or fd the code uses (a mount flag, not
	 * a permission: no uid, and no fd opened later, gets around it). The
	 * code's only outputs are then its stdout and stderr.
	 */
	if (pv->hdr->flags & PLAN_F_READONLY) {
		sb_remount_ro(PLAN_WORKSPACE, SANDBOX_STEP_REMOUNT_RO);
		sb_remount_ro("/tmp", SANDBOX_STEP_REMOUNT_RO);
	}
	/* The root itself is read-only: the code writes only to /workspace
	 * and /tmp, both size-limited. */
	SB_CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		       NULL),
		 SANDBOX_STEP_REMOUNT_RO);
}
