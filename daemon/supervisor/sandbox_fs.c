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
#include <sys/fsuid.h>
#include <sys/sysmacros.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "sandbox_fs_root.h"

/* Create path with data, mode and owner. */
static void
sb_write_file(const char *path, const void *data, uint64_t len, mode_t mode, uid_t uid, int step)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode), r;

	if (fd < 0)
		sandbox_fail(step, errno);
	r = fd_write_all(fd, data, (size_t)len);
	if (r < 0)
		sandbox_fail(step, -r);
	if (fchown(fd, uid, uid) < 0 || fchmod(fd, mode) < 0)
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
/* Why tree i is not open (its errno; 0: open): failed here or at the spawner's check. */
static int sb_tree_err[ROOTSPEC_MOUNTS_MAX];

/*
 * Open src as detached tree i: read-only, nosuid, nodev and, unless a
 * package tree, noexec, on every mount in it (AT_RECURSIVE), before anything
 * of it is visible. The spawner checked the path as root; we open it again
 * as the run's own host uid (other's rights: nothing its frontend could not
 * read itself) refusing every link (RESOLVE_NO_SYMLINKS), so a component
 * swapped since then for a link is not followed.
 *
 * A tree that cannot be opened (its source gone since the spawner's check)
 * is not a failure of this sandbox: it stays closed (-1, its errno kept)
 * and only a run that names it fails, at the attach (issue 28). Nothing of
 * it is attached, so no half-set-up tree (writable, exec) can be reached.
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
	sb_trees[i] = -1;
	if (!(flags & ROOTSPEC_F_PACKAGE))
		attr.attr_set |= MOUNT_ATTR_NOEXEC;
	fd = syscall(SYS_openat2, AT_FDCWD, src, &how, sizeof(how));
	if (fd < 0) {
		sb_tree_err[i] = errno;
		return;
	}
	if (fstat((int)fd, &st) < 0 || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))) {
		sb_tree_err[i] = errno != 0 ? errno : EINVAL;
		close((int)fd);
		return;
	}
	tree = syscall(SYS_open_tree, (int)fd, "",
		       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0) {
		sb_tree_err[i] = errno;
		close((int)fd);
		return;
	}
	close((int)fd);
	if (syscall(SYS_mount_setattr, (int)tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
		    sizeof(attr)) < 0) {
		sb_tree_err[i] = errno;
		close((int)tree);
		return;
	}
	sb_trees[i] = (int)tree;
	sb_tree_err[i] = 0;
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
			if (sb_trees[i] >= 0)
				close(sb_trees[i]);
			continue;
		}
		/* Named but not open: this run fails, with why. */
		if (sb_trees[i] < 0)
			sandbox_fail(SANDBOX_STEP_MOUNTS,
				     sb_tree_err[i] != 0 ? sb_tree_err[i] : ENOENT);
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
	uint32_t i, k = 0, n = rs != NULL ? rs->nmounts : 0;

	/* Nothing we do may propagate back to the host. */
	SB_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), SANDBOX_STEP_MOUNT_PRIVATE);
	sb_tmpfs(SB_NEWROOT, "0755", 4ULL * 1024 * 1024, 4096, false, SANDBOX_STEP_ROOT_TMPFS);
	sandbox_fs_apply(l, sandbox_fs_root, sandbox_fs_root_len);
	/* The root spec's mounts: one more row each, run by the same loop. */
	if (n > ROOTSPEC_MOUNTS_MAX)
		sandbox_fail(SANDBOX_STEP_MOUNTS, EINVAL);
	for (i = 0; i < n; i++) {
		/* What the spawner's check found missing is not even tried:
		 * its tree stays closed, failing only a run that names it. */
		if (rs->mounts[i].missing != 0) {
			sb_trees[i] = -1;
			sb_tree_err[i] = (int)rs->mounts[i].missing;
			continue;
		}
		trees[k++] =
			(struct sandbox_fs_op){SANDBOX_FS_TREE,	     SANDBOX_STEP_MOUNTS,
					       SANDBOX_FS_ALWAYS,    "", /* attached in phase two */
					       rs->mounts[i].source, i,
					       rs->mounts[i].flags};
	}
	sandbox_fs_apply(l, trees, k);
	/* pivot_root(".", ".") stacks the old root under the new one; detaching
	 * it leaves no path back to the host's tree. */
	SB_CHECK(chdir(SB_NEWROOT), SANDBOX_STEP_PIVOT_ROOT);
	SB_CHECK(syscall(SYS_pivot_root, ".", "."), SANDBOX_STEP_PIVOT_ROOT);
	SB_CHECK(umount2(".", MNT_DETACH), SANDBOX_STEP_UMOUNT_OLD);
	SB_CHECK(chdir("/"), SANDBOX_STEP_PIVOT_ROOT);
	SB_CHECK(rmdir("/oldroot"), SANDBOX_STEP_UMOUNT_OLD);
}

/*
 * hidden_paths, a path under /usr (docs/design-profiles.md, section 3.4): a
 * layer of whiteouts (character devices 0:0, which overlayfs shows as "no
 * such entry") on its own small tmpfs at PLAN_CODE_DIR, before the code's
 * directory is mounted there, then a read-only overlay on /usr whose lower
 * layers are that layer over the host's /usr. The lowerdir option is given
 * relative to "/" (the new root), so /proc/self/mountinfo names no host path.
 * overlayfs holds private clones of its layers: the layer's tmpfs is
 * detached at once and nothing of it stays reachable in the sandbox. Only a
 * run whose profile hides something pays for this (about 30 us). An
 * unprivileged overlay needs Linux 5.11, an unprivileged whiteout 5.8.
 */
#define SB_LAYER PLAN_CODE_DIR "/.layer"

static void
sb_hide_usr(const struct plan_view *pv)
{
	char path[sizeof(SB_LAYER) + ROOTSPEC_PATH_MAX], opts[64];
	uint32_t i, n = 0;

	for (i = 0; i < pv->nhidden; i++)
		n += strncmp(pv->hidden[i], "/usr/", 5) == 0;
	if (n == 0)
		return;
	sb_tmpfs(PLAN_CODE_DIR, "0755", 65536, 4096, false, SANDBOX_STEP_HIDDEN);
	SB_CHECK(mkdir(SB_LAYER, 0755), SANDBOX_STEP_HIDDEN);
	for (i = 0; i < pv->nhidden; i++) {
		if (strncmp(pv->hidden[i], "/usr/", 5) != 0)
			continue;
		/* plan_parse checked: normalised, none beneath another. */
		SB_PATH(path, SANDBOX_STEP_HIDDEN, SB_LAYER "%s", pv->hidden[i] + 4);
		sb_mkdir_parents(path, SANDBOX_STEP_HIDDEN);
		SB_CHECK(mknod(path, S_IFCHR | 0000, makedev(0, 0)), SANDBOX_STEP_HIDDEN);
	}
	/* Both layers relative to "/": "run/airlock/.layer:usr". */
	SB_CHECK(chdir("/"), SANDBOX_STEP_HIDDEN);
	SB_PATH(opts, SANDBOX_STEP_HIDDEN, "lowerdir=%s:usr", SB_LAYER + 1);
	SB_CHECK(mount("overlay", "usr", "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts),
		 SANDBOX_STEP_HIDDEN);
	SB_CHECK(umount2(PLAN_CODE_DIR, MNT_DETACH), SANDBOX_STEP_HIDDEN);
}

/*
 * hidden_paths, one of the /etc entries the root makes (sandbox_fs_root.c):
 * phase one made it before the request was known (a prepared sandbox serves
 * every profile), so phase two undoes its rows, as if they had been
 * skipped: the bind is detached (EINVAL: a generated file, no mount) and
 * the file or directory under it removed. ENOENT: the host lacks it, its
 * row was skipped. The root is still writable here.
 */
static void
sb_hide_etc(const struct plan_view *pv)
{
	uint32_t i;

	for (i = 0; i < pv->nhidden; i++) {
		const char *path = pv->hidden[i];

		if (strncmp(path, "/usr/", 5) == 0)
			continue;
		if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
			sandbox_fail(SANDBOX_STEP_HIDDEN, errno);
		if (unlink(path) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR)
			sandbox_fail(SANDBOX_STEP_HIDDEN, errno);
		SB_CHECK(rmdir(path), SANDBOX_STEP_HIDDEN);
	}
}

/*
 * The runtime's working directory beneath the workspace (plan_parse checked
 * it: no "..", no empty component), made before the workspace can become
 * read-only (file_write = false) and as the code's own uid and gid
 * (setfsuid: the file-system identity only, so what it makes is the code's,
 * with the code's rights, in a one-shot run's workspace and a session's
 * alike; CAP_SYS_ADMIN stays for the mounts after). A link an earlier run of
 * a session left on the way is followed, as the code could follow it itself:
 * it leads nowhere the code cannot write.
 */
static void
sb_cwd(const char *cwd)
{
	char path[PROTO_NAME_MAX + sizeof(PLAN_WORKSPACE) + 2];
	size_t len = strlen(cwd);
	mode_t old;
	char *p;

	if (len >= sizeof(path))
		sandbox_fail(SANDBOX_STEP_CHDIR, ENAMETOOLONG);
	memcpy(path, cwd, len + 1);
	(void)setfsgid(PLAN_SANDBOX_GID);
	(void)setfsuid(PLAN_SANDBOX_UID);
	/* setfsuid() reports no error: read the identity back. */
	if (setfsuid((uid_t)-1) != PLAN_SANDBOX_UID || setfsgid((gid_t)-1) != PLAN_SANDBOX_GID)
		sandbox_fail(SANDBOX_STEP_CHDIR, EPERM);
	old = umask(022);
	for (p = path + sizeof(PLAN_WORKSPACE);; p++) {
		bool last = (p = strchr(p, '/')) == NULL;

		if (!last)
			*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			sandbox_fail(SANDBOX_STEP_CHDIR, errno);
		if (last)
			break;
		*p = '/';
	}
	umask(old);
	(void)setfsuid(0);
	(void)setfsgid(0);
	if (setfsuid((uid_t)-1) != 0 || setfsgid((gid_t)-1) != 0)
		sandbox_fail(SANDBOX_STEP_CHDIR, EPERM);
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

	/* Before the code's directory: the layer's tmpfs is mounted there first. */
	if (pv->nhidden > 0) {
		sb_hide_usr(pv);
		sb_hide_etc(pv);
	}
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
	if (pv->cwd[0] != '\0')
		sb_cwd(pv->cwd);
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

/*
 * Phase one of a pre-starting sandbox (sandbox_prestart.c), from its
 * pre-start plan: what sandbox_fs_run makes for a run, at the plan's sizes,
 * but no code, no input file, no mount of the root spec's yet: /tmp and the
 * home, the workspace, /etc/hostname, /run/airlock with a FIFO at the code's
 * name (root's, 0644: the interpreter may only read it), the root read-only.
 * /tmp, the workspace and /run/airlock stay their own writable mounts until
 * the hand-off (sandbox_fs_handoff).
 */
void
sandbox_fs_prestart(const struct plan_view *pv0)
{
	const uint64_t *lim = pv0->hdr->limits;
	char path[256];

	sb_tmpfs("/tmp", "1777", lim[PROTO_LIMIT_TMP_BYTES], 16384, false, SANDBOX_STEP_TMP);
	sb_home();
	sb_tmpfs(PLAN_WORKSPACE, "0755", lim[PROTO_LIMIT_WORKSPACE_BYTES], 16384, true,
		 SANDBOX_STEP_WORKSPACE);
	if (pv0->cwd[0] != '\0')
		sb_cwd(pv0->cwd);
	sb_write_file("/etc/hostname", pv0->hostname, strlen(pv0->hostname), 0644, 0,
		      SANDBOX_STEP_ETC);
	sb_tmpfs(PLAN_CODE_DIR, "0755", 65536, 16, false, SANDBOX_STEP_CODE_FILE);
	SB_PATH(path, SANDBOX_STEP_PRESTART, PLAN_CODE_DIR "/%s", pv0->code_name);
	SB_CHECK(mknod(path, S_IFIFO | 0644, 0), SANDBOX_STEP_PRESTART);
	SB_CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		       NULL),
		 SANDBOX_STEP_REMOUNT_RO);
}

/* Give a tmpfs made in phase one the run's size ("size=" on a remount: the
 * other options stay). */
static void
sb_tmpfs_resize(const char *dst, uint64_t size, int step)
{
	char opts[48], nb[24];

	SB_PATH(opts, step, "size=%s", sb_utoa(size, nb + sizeof(nb)));
	SB_CHECK(mount(NULL, dst, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts), step);
}

/*
 * The hand-off's filesystem part, for the run's plan pv (its argv, env and
 * flags checked equal to the pre-start plan's): /tmp, the workspace and
 * /run/airlock at the run's sizes, the input files, the root spec's mounts
 * the run names.
 */
void
sandbox_fs_handoff(const struct plan_view *pv, const struct rootspec *rs)
{
	const uint64_t *lim = pv->hdr->limits;

	sb_tmpfs_resize("/tmp", lim[PROTO_LIMIT_TMP_BYTES], SANDBOX_STEP_TMP);
	sb_tmpfs_resize(PLAN_WORKSPACE, lim[PROTO_LIMIT_WORKSPACE_BYTES], SANDBOX_STEP_WORKSPACE);
	sb_tmpfs_resize(PLAN_CODE_DIR, 65536 + pv->hdr->code_len, SANDBOX_STEP_CODE_FILE);
	sb_input_files(pv);
	sb_trees_attach(pv, rs);
}

/*
 * The code's file takes the FIFO's name: written whole under another name,
 * then renamed over the FIFO (which the interpreter, blocked in its open,
 * already holds), and /run/airlock becomes read-only, as in a fresh run.
 * What reads the file by name later (tracebacks, inspect) finds the code.
 */
void
sandbox_fs_code_swap(const struct plan_view *pv)
{
	char path[256];

	SB_PATH(path, SANDBOX_STEP_CODE_FILE, PLAN_CODE_DIR "/%s", pv->code_name);
	sb_write_file(PLAN_CODE_DIR "/.code", pv->code, pv->hdr->code_len, 0444, 0,
		      SANDBOX_STEP_CODE_FILE);
	SB_CHECK(rename(PLAN_CODE_DIR "/.code", path), SANDBOX_STEP_CODE_FILE);
	SB_CHECK(mount(NULL, PLAN_CODE_DIR, NULL,
		       MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL),
		 SANDBOX_STEP_REMOUNT_RO);
}
