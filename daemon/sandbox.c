/*
 * sandbox.c: the supervisor (pid 1 of a run's namespaces) and the code's
 * last steps before execve.
 *
 * This is the most dangerous code in the project. Rules, all on purpose:
 * no malloc, no stdio, no libevent (the process was cloned from the spawner
 * and owns a copy of its memory); every step that can fail reports
 * {step, errno} and exits; the code's process drops everything in the order
 * groups, gid, uid, capabilities, no_new_privs, seccomp, execve.
 */
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdpass.h"
#include "landlock.h"
#include "plan.h"
#include "spawn_msg.h"

#define SB_NEWROOT "/tmp"
#define SB_WALK_DEPTH 16
#define SB_WALK_ENTRIES 20000
#define SB_TICK_MS 50
/* With cpu.stat, the supervisor sleeps until the earliest moment the run
 * could reach its cpu limit, and at most this long. */
#define SB_CG_TICK_MAX_MS 1000

static const char *const sandbox_step_names[SANDBOX_STEP_COUNT_] = {
	[SANDBOX_STEP_NONE] = "none",
	[SANDBOX_STEP_FDS] = "fds",
	[SANDBOX_STEP_SYNC] = "sync",
	[SANDBOX_STEP_PDEATHSIG] = "pdeathsig",
	[SANDBOX_STEP_SETID] = "setid",
	[SANDBOX_STEP_PLAN] = "plan",
	[SANDBOX_STEP_MOUNT_PRIVATE] = "mount_private",
	[SANDBOX_STEP_ROOT_TMPFS] = "root_tmpfs",
	[SANDBOX_STEP_MKDIR] = "mkdir",
	[SANDBOX_STEP_BIND_RO] = "bind_ro",
	[SANDBOX_STEP_SYMLINK] = "symlink",
	[SANDBOX_STEP_ETC] = "etc",
	[SANDBOX_STEP_WORKSPACE] = "workspace",
	[SANDBOX_STEP_TMP] = "tmp",
	[SANDBOX_STEP_PROC] = "proc",
	[SANDBOX_STEP_DEV] = "dev",
	[SANDBOX_STEP_CODE_FILE] = "code_file",
	[SANDBOX_STEP_INPUT_FILES] = "input_files",
	[SANDBOX_STEP_PIVOT_ROOT] = "pivot_root",
	[SANDBOX_STEP_UMOUNT_OLD] = "umount_old",
	[SANDBOX_STEP_REMOUNT_RO] = "remount_ro",
	[SANDBOX_STEP_HOSTNAME] = "hostname",
	[SANDBOX_STEP_LOOPBACK] = "loopback",
	[SANDBOX_STEP_FORK] = "fork",
	[SANDBOX_STEP_STDIO] = "stdio",
	[SANDBOX_STEP_CHDIR] = "chdir",
	[SANDBOX_STEP_RLIMIT] = "rlimit",
	[SANDBOX_STEP_CAPBSET] = "capbset",
	[SANDBOX_STEP_SETGID] = "setgid",
	[SANDBOX_STEP_SETUID] = "setuid",
	[SANDBOX_STEP_CAPS] = "caps",
	[SANDBOX_STEP_NO_NEW_PRIVS] = "no_new_privs",
	[SANDBOX_STEP_SECCOMP] = "seccomp",
	[SANDBOX_STEP_EXEC] = "exec",
	[SANDBOX_STEP_LANDLOCK] = "landlock",
};

const char *
sandbox_step_name(int step)
{
	if (step < 0 || step >= SANDBOX_STEP_COUNT_ || sandbox_step_names[step] == NULL)
		return "unknown";
	return sandbox_step_names[step];
}

int
sandbox_layout_init(struct sandbox_layout *ret)
{
	static const char *const tops[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
	struct sandbox_layout l;
	struct stat st;
	size_t i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		char path[32];

		snprintf(path, sizeof(path), "/%s", tops[i]);
		if (lstat(path, &st) < 0)
			continue;
		snprintf(l.tops[l.ntops].name, sizeof(l.tops[l.ntops].name), "%s", tops[i]);
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(path, l.tops[l.ntops].target,
					     sizeof(l.tops[l.ntops].target) - 1);

			if (n < 0 || (size_t)n >= sizeof(l.tops[l.ntops].target) - 1)
				continue;
			l.tops[l.ntops].target[n] = '\0';
			l.tops[l.ntops].is_link = true;
		} else if (!S_ISDIR(st.st_mode))
			continue;
		l.ntops++;
	}
	l.has_alternatives = stat("/etc/alternatives", &st) == 0 && S_ISDIR(st.st_mode);
	l.has_ld_cache = stat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode);
	l.has_ssl = stat("/etc/ssl", &st) == 0 && S_ISDIR(st.st_mode);
	l.has_mplrc = stat("/etc/matplotlibrc", &st) == 0 && S_ISREG(st.st_mode);
	l.has_fonts = stat("/etc/fonts", &st) == 0 && S_ISDIR(st.st_mode);
	l.clk_tck = (int)sysconf(_SC_CLK_TCK);
	l.landlock_abi = landlock_usable_abi(landlock_abi());
	l.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (l.ncpus < 1)
		l.ncpus = 1;
	if (l.clk_tck <= 0)
		l.clk_tck = 100;
	l.cap_last = CAP_LAST_CAP;
	{
		int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			char b[16] = {0};

			if (read(fd, b, sizeof(b) - 1) > 0 && b[0] >= '0' && b[0] <= '9')
				l.cap_last = (int)strtol(b, NULL, 10);
			close(fd);
		}
	}
	*ret = l;
	return 0;
}

/* ---- allocation-free helpers -------------------------------------------- */

/* The lifeline, kept in a static so the fail path needs no arguments. This
 * is the cloned child's own copy of memory; nothing else writes it. */
static int sb_lifeline = -1;
static int sb_ctl = -1;

/* The spawner's start message: the run's fds. Returns how many came. */
static size_t
sb_wait_start(int *fds, size_t max, uint32_t *ret_flags)
{
	struct sb_start st;
	size_t nfds = 0;
	ssize_t n;

	do
		n = fdpass_recv(sb_ctl, &st, sizeof(st), fds, max, &nfds);
	while (n == -EINTR);
	/* EOF or anything else: this sandbox will never run anything. */
	if (n != (ssize_t)sizeof(st) || st.magic != SB_START_MAGIC ||
	    nfds != ((st.flags & SPAWN_F_WORKSPACE) ? 5 : 4)) {
		if (n > 0)
			fdpass_close_all(fds, nfds);
		_exit(0);
	}
	close(sb_ctl);
	sb_ctl = -1;
	*ret_flags = st.flags;
	return nfds;
}

/*
 * Report a failed step to the frontend and exit. err is a positive errno,
 * as inside the sandbox (errno itself, and the code child's {step, errno}
 * pipe); the lifeline's sup_msg carries -errno, like every fixed struct
 * between the daemon's processes.
 */
__attribute__((noreturn)) static void
sb_fail(int step, int err)
{
	struct sup_msg m;

	/* Failed while prepared, before any request: wait for the run this
	 * sandbox is given, and tell it why it cannot be run. */
	if (sb_lifeline < 0 && sb_ctl >= 0) {
		int fds[5];
		uint32_t flags;
		size_t n = sb_wait_start(fds, 5, &flags);

		sb_lifeline = fds[1];
		fds[1] = -1;
		fdpass_close_all(fds, n);
	}
	memset(&m, 0, sizeof(m));
	m.type = SUP_SETUP_FAILED;
	m.step = step;
	m.err = -err;
	if (sb_lifeline >= 0)
		(void)send(sb_lifeline, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(127);
}

#define SB_CHECK(expr, step)                                                                       \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			sb_fail(step, errno);                                                      \
	} while (0)

/* snprintf into a fixed buffer, failing the step on truncation. */
#define SB_PATH(buf, step, ...)                                                                    \
	do {                                                                                       \
		int n_ = snprintf(buf, sizeof(buf), __VA_ARGS__);                                  \
		if (n_ < 0 || (size_t)n_ >= sizeof(buf))                                           \
			sb_fail(step, ENAMETOOLONG);                                               \
	} while (0)

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
		sb_fail(step, errno);
	if (sb_write_all(fd, data, len) < 0 || fchown(fd, uid, uid) < 0 || fchmod(fd, mode) < 0)
		sb_fail(step, errno);
	close(fd);
}

/* Keep only the listed fds open (at most 8); everything else is closed. */
static void
sb_close_others(const int *keep, int nkeep)
{
	int sorted[8];
	int i, j, lo = 0;

	if (nkeep > 8)
		sb_fail(SANDBOX_STEP_FDS, EINVAL);
	for (i = 0; i < nkeep; i++)
		sorted[i] = keep[i];
	for (i = 1; i < nkeep; i++)
		for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (i = 0; i < nkeep; i++) {
		if (sorted[i] < 0)
			continue;
		if (sorted[i] > lo)
			SB_CHECK(syscall(SYS_close_range, lo, sorted[i] - 1, 0), SANDBOX_STEP_FDS);
		lo = sorted[i] + 1;
	}
	SB_CHECK(syscall(SYS_close_range, lo, ~0U, 0), SANDBOX_STEP_FDS);
}

/* Bind src onto dst read-only, keeping the flags the kernel locked. */
static void
sb_bind_ro(const char *src, const char *dst)
{
	struct statvfs sv;
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;

	SB_CHECK(mount(src, dst, NULL, MS_BIND | MS_REC, NULL), SANDBOX_STEP_BIND_RO);
	/* A remount inside a user namespace must keep every flag the outer
	 * mount has (the kernel locks them); read them back and keep them. */
	SB_CHECK(statvfs(dst, &sv), SANDBOX_STEP_BIND_RO);
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		flags |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	SB_CHECK(mount(NULL, dst, NULL, flags, NULL), SANDBOX_STEP_BIND_RO);
}

/* Make an empty file to bind over. */
static void
sb_touch(const char *path, int step)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);

	if (fd < 0)
		sb_fail(step, errno);
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

/* ---- filesystem ---------------------------------------------------------- */

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
				sb_fail(SANDBOX_STEP_INPUT_FILES, errno);
			if (chown(path, PLAN_SANDBOX_UID, PLAN_SANDBOX_GID) < 0)
				sb_fail(SANDBOX_STEP_INPUT_FILES, errno);
			*p = '/';
		}
		sb_write_file(path, pv->files[i].data, pv->files[i].len, 0644, PLAN_SANDBOX_UID,
			      SANDBOX_STEP_INPUT_FILES);
	}
}

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
static void
sb_dev_pts(void)
{
	SB_CHECK(mkdir(SB_NEWROOT "/dev/pts", 0755), SANDBOX_STEP_DEV);
	SB_CHECK(mount("devpts", SB_NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		       "newinstance,ptmxmode=0666,mode=0620,max=64"),
		 SANDBOX_STEP_DEV);
	SB_CHECK(symlink("pts/ptmx", SB_NEWROOT "/dev/ptmx"), SANDBOX_STEP_DEV);
}

/*
 * The host's configuration the data-science stack reads, read-only:
 * /etc/matplotlibrc (Debian's matplotlib finds its defaults only there:
 * "Could not find matplotlibrc file" without it) and /etc/fonts
 * (fontconfig's configuration; the fonts themselves are in /usr). Both are
 * shipped, non-secret package configuration, like /etc/ssl.
 */
static void
sb_etc_data(const struct sandbox_layout *l)
{
	if (l->has_mplrc) {
		sb_touch(SB_NEWROOT "/etc/matplotlibrc", SANDBOX_STEP_ETC);
		sb_bind_ro("/etc/matplotlibrc", SB_NEWROOT "/etc/matplotlibrc");
	}
	if (l->has_fonts) {
		SB_CHECK(mkdir(SB_NEWROOT "/etc/fonts", 0755), SANDBOX_STEP_ETC);
		sb_bind_ro("/etc/fonts", SB_NEWROOT "/etc/fonts");
	}
}

/*
 * Phase one, before any request is known: build the new root under
 * SB_NEWROOT and pivot into it. The root stays writable until phase two.
 */
static void
sb_fs_base(const struct sandbox_ctx *ctx)
{
	const struct sandbox_layout *l = ctx->layout;
	char path[256];
	int i;

	/* Nothing we do may propagate back to the host. */
	SB_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), SANDBOX_STEP_MOUNT_PRIVATE);
	sb_tmpfs(SB_NEWROOT, "0755", 4ULL * 1024 * 1024, 4096, false, SANDBOX_STEP_ROOT_TMPFS);
	{
		static const char *const dirs[] = {"usr",	  "etc",     "proc",
						   "dev",	  "tmp",     "run",
						   "run/airlock", "oldroot", "workspace"};
		size_t k;

		for (k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++) {
			SB_PATH(path, SANDBOX_STEP_MKDIR, SB_NEWROOT "/%s", dirs[k]);
			SB_CHECK(mkdir(path, 0755), SANDBOX_STEP_MKDIR);
		}
	}
	sb_bind_ro("/usr", SB_NEWROOT "/usr");
	for (i = 0; i < l->ntops; i++) {
		SB_PATH(path, SANDBOX_STEP_SYMLINK, SB_NEWROOT "/%s", l->tops[i].name);
		if (l->tops[i].is_link) {
			SB_CHECK(symlink(l->tops[i].target, path), SANDBOX_STEP_SYMLINK);
		} else {
			char src[32];

			SB_PATH(src, SANDBOX_STEP_BIND_RO, "/%s", l->tops[i].name);
			SB_CHECK(mkdir(path, 0755), SANDBOX_STEP_MKDIR);
			sb_bind_ro(src, path);
		}
	}
	/* A generated /etc: no host account, host name or resolver leaks in. */
	sb_write_file(SB_NEWROOT "/etc/passwd", sb_passwd, sizeof(sb_passwd) - 1, 0644, 0,
		      SANDBOX_STEP_ETC);
	sb_write_file(SB_NEWROOT "/etc/group", sb_group, sizeof(sb_group) - 1, 0644, 0,
		      SANDBOX_STEP_ETC);
	sb_write_file(SB_NEWROOT "/etc/hosts", sb_hosts, sizeof(sb_hosts) - 1, 0644, 0,
		      SANDBOX_STEP_ETC);
	sb_write_file(SB_NEWROOT "/etc/nsswitch.conf", sb_nsswitch, sizeof(sb_nsswitch) - 1, 0644,
		      0, SANDBOX_STEP_ETC);
	sb_write_file(SB_NEWROOT "/etc/resolv.conf", "", 0, 0644, 0, SANDBOX_STEP_ETC);
	if (l->has_ld_cache) {
		sb_touch(SB_NEWROOT "/etc/ld.so.cache", SANDBOX_STEP_ETC);
		sb_bind_ro("/etc/ld.so.cache", SB_NEWROOT "/etc/ld.so.cache");
	}
	if (l->has_alternatives) {
		SB_CHECK(mkdir(SB_NEWROOT "/etc/alternatives", 0755), SANDBOX_STEP_ETC);
		sb_bind_ro("/etc/alternatives", SB_NEWROOT "/etc/alternatives");
	}
	if (l->has_ssl) {
		SB_CHECK(mkdir(SB_NEWROOT "/etc/ssl", 0755), SANDBOX_STEP_ETC);
		sb_bind_ro("/etc/ssl", SB_NEWROOT "/etc/ssl");
	}
	sb_etc_data(l);
	SB_CHECK(mount("proc", SB_NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
		 SANDBOX_STEP_PROC);
	sb_tmpfs(SB_NEWROOT "/dev", "0755", 65536, 64, false, SANDBOX_STEP_DEV);
	{
		static const char *const devs[] = {"null", "zero", "full", "random", "urandom"};
		size_t k;

		for (k = 0; k < sizeof(devs) / sizeof(devs[0]); k++) {
			char src[32];

			SB_PATH(src, SANDBOX_STEP_DEV, "/dev/%s", devs[k]);
			SB_PATH(path, SANDBOX_STEP_DEV, SB_NEWROOT "/dev/%s", devs[k]);
			sb_touch(path, SANDBOX_STEP_DEV);
			SB_CHECK(mount(src, path, NULL, MS_BIND, NULL), SANDBOX_STEP_DEV);
		}
		SB_CHECK(symlink("/proc/self/fd", SB_NEWROOT "/dev/fd"), SANDBOX_STEP_DEV);
		SB_CHECK(symlink("/proc/self/fd/0", SB_NEWROOT "/dev/stdin"), SANDBOX_STEP_DEV);
		SB_CHECK(symlink("/proc/self/fd/1", SB_NEWROOT "/dev/stdout"), SANDBOX_STEP_DEV);
		SB_CHECK(symlink("/proc/self/fd/2", SB_NEWROOT "/dev/stderr"), SANDBOX_STEP_DEV);
		/* POSIX shared memory and semaphores land in the run's /tmp, under
		 * its size limit, private to this run. */
		SB_CHECK(symlink("/tmp", SB_NEWROOT "/dev/shm"), SANDBOX_STEP_DEV);
	}
	sb_dev_pts();
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

/*
 * Phase two, for one request, inside the new root: the sized /tmp, the
 * workspace (fresh, or a session's attached), the code and stdin files, the
 * input files; then the root and the code's directory become read-only.
 */
static void
sb_fs_run(const struct plan_view *pv, int ws_fd)
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
	/* The root itself is read-only: the code writes only to /workspace
	 * and /tmp, both size-limited. */
	SB_CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		       NULL),
		 SANDBOX_STEP_REMOUNT_RO);
}

/* Bring up the loopback interface of the new network namespace. */
static void
sb_loopback(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		sb_fail(SANDBOX_STEP_LOOPBACK, errno);
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	SB_CHECK(ioctl(s, SIOCGIFFLAGS, &ifr), SANDBOX_STEP_LOOPBACK);
	ifr.ifr_flags |= IFF_UP;
	SB_CHECK(ioctl(s, SIOCSIFFLAGS, &ifr), SANDBOX_STEP_LOOPBACK);
	close(s);
}

/* ---- the code's process ---------------------------------------------------- */

/* Report {step, errno} on the exec pipe and exit: runs in the code's child. */
__attribute__((noreturn)) static void
sb_code_fail(int pipefd, int step, int err)
{
	int32_t rep[2] = {step, err};

	(void)write(pipefd, rep, sizeof(rep));
	_exit(127);
}

#define SB_CODE_CHECK(expr, step)                                                                  \
	do {                                                                                       \
		if ((expr) < 0)                                                                    \
			sb_code_fail(pipefd, step, errno);                                         \
	} while (0)

static void
sb_setrlimit(int pipefd, int res, uint64_t v)
{
	struct rlimit rl = {.rlim_cur = v, .rlim_max = v};

	SB_CODE_CHECK(setrlimit(res, &rl), SANDBOX_STEP_RLIMIT);
}

/*
 * Start the code from a known signal state, not the one the daemon was given:
 * a service manager ignores SIGPIPE (systemd's IgnoreSIGPIPE=yes), a shell's
 * "&" ignores SIGINT and SIGQUIT, and the spawner blocks the signals it reads
 * through its signalfd; execve() keeps ignored dispositions and the mask. No
 * error is possible here but EINVAL for the signals no one may change
 * (SIGKILL, SIGSTOP, the C library's own), which stay as they are.
 */
static void
sb_reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The code's process: stdio, working directory, limits, then the privilege
 * drop in its one order, seccomp last, execve.
 */
__attribute__((noreturn)) static void
sb_exec_code(const struct sandbox_ctx *ctx, const struct plan_view *pv, int pipefd, bool move)
{
	const uint64_t *lim = pv->hdr->limits;
	struct __user_cap_header_struct caph = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct capd[2];
	struct landlock_rules ll;
	uint64_t cpu_s;
	int in, c;

	/* A kernel without CLONE_INTO_CGROUP: into the code's cgroup now,
	 * before anything is charged (opened by us: our group may write it). */
	if (move) {
		int fd = openat(ctx->code_cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "0", 1) != 1)
			sb_code_fail(pipefd, SANDBOX_STEP_CGROUP, errno);
		close(fd);
	}
	/* The code's own cgroup namespace: /proc/self/cgroup says "/", not
	 * the host's path to it. */
	if (ctx->layout->memory_cgroup)
		SB_CODE_CHECK(unshare(CLONE_NEWCGROUP), SANDBOX_STEP_CGROUP);

	in = pv->stdin_data != NULL ? open(PLAN_CODE_DIR "/.stdin", O_RDONLY | O_CLOEXEC)
				    : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		sb_code_fail(pipefd, SANDBOX_STEP_STDIO, errno);
	/* The supervisor closed 0-2, so any of these may sit there: lift them
	 * all above 2 first, then dup2 (which clears close-on-exec) into place. */
	{
		int hi[4] = {in, ctx->out_fd, ctx->err_fd, pipefd}, k;

		for (k = 0; k < 4; k++) {
			hi[k] = fcntl(hi[k], F_DUPFD_CLOEXEC, 10);
			if (hi[k] < 0)
				sb_code_fail(pipefd, SANDBOX_STEP_STDIO, errno);
		}
		pipefd = hi[3];
		if (dup2(hi[0], 0) < 0 || dup2(hi[1], 1) < 0 || dup2(hi[2], 2) < 0 ||
		    dup3(hi[3], 3, O_CLOEXEC) < 0)
			sb_code_fail(pipefd, SANDBOX_STEP_STDIO, errno);
		pipefd = 3;
	}
	/* Keep only stdio and the exec pipe (close-on-exec). */
	SB_CODE_CHECK(syscall(SYS_close_range, 4, ~0U, 0), SANDBOX_STEP_STDIO);
	SB_CODE_CHECK(setsid(), SANDBOX_STEP_STDIO);
	SB_CODE_CHECK(chdir(PLAN_WORKSPACE), SANDBOX_STEP_CHDIR);
	sb_reset_signals();
	/* Landlock, a second statement of the mount set-up (landlock.h): read
	 * and execute anywhere in the sandbox's root, write only beneath the
	 * workspace and /tmp; device and proc files may be written, not made.
	 * Built here, while the paths are ours to open; enforced after
	 * no_new_privs, which it needs. */
	{
		static const char *const rw[] = {PLAN_WORKSPACE, "/tmp", NULL};
		static const char *const wo[] = {"/dev", "/proc", NULL};
		int r = landlock_prepare(ctx->layout->landlock_abi, "/", rw, wo, &ll);

		if (r < 0)
			sb_code_fail(pipefd, SANDBOX_STEP_LANDLOCK, -r);
	}
	/* The mode of the files the code makes does not depend on the daemon's
	 * umask either. */
	umask(022);

	/* The oom killer takes the code before its supervisor. */
	{
		int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			(void)write(fd, "1000", 4);
			close(fd);
		}
	}
	/*
	 * RLIMIT_NPROC counts per uid; the uid is this run's alone. With a v2
	 * cgroup, pids.max is the limit (every process of the run, whatever
	 * its uid, and a refused fork is counted in pids.events); the rlimit,
	 * checked first by the kernel, is then one above it, a backstop that
	 * never fires first. RLIMIT_CPU is a per-process backstop behind the
	 * supervisor's whole-run count.
	 */
	cpu_s = (lim[PROTO_LIMIT_CPU_MS] + 999) / 1000 + 1;
	if (ctx->layout->cgroup2 && lim[PROTO_LIMIT_PROCESSES] < UINT64_MAX)
		sb_setrlimit(pipefd, RLIMIT_NPROC, lim[PROTO_LIMIT_PROCESSES] + 1);
	else
		sb_setrlimit(pipefd, RLIMIT_NPROC, lim[PROTO_LIMIT_PROCESSES]);
	sb_setrlimit(pipefd, RLIMIT_NOFILE, lim[PROTO_LIMIT_OPEN_FILES]);
	sb_setrlimit(pipefd, RLIMIT_FSIZE, lim[PROTO_LIMIT_FILE_SIZE_BYTES]);
	sb_setrlimit(pipefd, RLIMIT_CORE, 0);
	{
		struct rlimit rl = {.rlim_cur = cpu_s, .rlim_max = cpu_s + 1};

		SB_CODE_CHECK(setrlimit(RLIMIT_CPU, &rl), SANDBOX_STEP_RLIMIT);
	}
	/* Without a memory cgroup the address-space limit is all there is. */
	if (!ctx->layout->memory_cgroup)
		sb_setrlimit(pipefd, RLIMIT_AS, lim[PROTO_LIMIT_MEMORY_BYTES]);

	for (c = 0; c <= ctx->layout->cap_last; c++)
		SB_CODE_CHECK(prctl(PR_CAPBSET_DROP, c, 0, 0, 0), SANDBOX_STEP_CAPBSET);
	SB_CODE_CHECK(setresgid(PLAN_SANDBOX_GID, PLAN_SANDBOX_GID, PLAN_SANDBOX_GID),
		      SANDBOX_STEP_SETGID);
	SB_CODE_CHECK(setresuid(PLAN_SANDBOX_UID, PLAN_SANDBOX_UID, PLAN_SANDBOX_UID),
		      SANDBOX_STEP_SETUID);
	/* setresuid() to a non-zero uid cleared effective and permitted; the
	 * inheritable and ambient sets are cleared explicitly. */
	memset(capd, 0, sizeof(capd));
	SB_CODE_CHECK(syscall(SYS_capset, &caph, capd), SANDBOX_STEP_CAPS);
	SB_CODE_CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), SANDBOX_STEP_CAPS);
	SB_CODE_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), SANDBOX_STEP_NO_NEW_PRIVS);
	{
		int r = landlock_enforce(&ll);

		if (r < 0)
			sb_code_fail(pipefd, SANDBOX_STEP_LANDLOCK, -r);
	}
	/* Seccomp last: nothing after it but execve. */
	SB_CODE_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctx->seccomp, 0, 0),
		      SANDBOX_STEP_SECCOMP);
	execve(pv->argv[0], (char *const *)pv->argv, (char *const *)pv->envp);
	sb_code_fail(pipefd, SANDBOX_STEP_EXEC, errno);
}

/* ---- supervision ---------------------------------------------------------- */

static uint64_t
sb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Parse an unsigned decimal field; advance *p. */
static uint64_t
sb_parse_u64(const char **p, const char *end)
{
	uint64_t v = 0;

	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && **p >= '0' && **p <= '9') {
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	return v;
}

/* Skip n space-separated fields. */
static void
sb_skip_fields(const char **p, const char *end, int n)
{
	while (n-- > 0) {
		while (*p < end && **p == ' ')
			(*p)++;
		while (*p < end && **p != ' ')
			(*p)++;
	}
}

/*
 * Write over the daemon's command line and environment strings in our copy
 * of its memory. The supervisor is a fork-like clone of the spawner, not an
 * exec (bubblewrap and nsjail exec, so they never have this): /proc/1/cmdline,
 * readable by the code, would show airlockd's argv (--config and --socket
 * paths, the binary's host path), and the environment strings sit right
 * after it. prctl(PR_SET_MM_ARG_START) would need CAP_SYS_RESOURCE in the
 * host's user namespace, and blanking the spawner's own argv at start-up
 * would hide it from the host's administrator too, so each supervisor
 * scrubs its own copy, in place, allocation-free, before anything of a run
 * exists. The bounds are the kernel's (/proc/self/stat fields 48 to 51).
 * The area ends in a NUL, so the kernel shows it as plain argv strings:
 * the title alone, and never the environment.
 */
static void
sb_scrub_cmdline(void)
{
	static const char title[] = "airlockd: supervisor";
	char st[1024];
	const char *p, *end;
	uint64_t arg_start, arg_end, env_start, env_end;
	ssize_t len;
	int fd;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		sb_fail(SANDBOX_STEP_PROC, errno);
	len = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (len <= 0)
		sb_fail(SANDBOX_STEP_PROC, len < 0 ? errno : EIO);
	st[len] = '\0';
	end = st + len;
	p = strrchr(st, ')');
	if (p == NULL)
		sb_fail(SANDBOX_STEP_PROC, EIO);
	p++;
	/* after ")": state is field 3; arg_start is field 48 */
	sb_skip_fields(&p, end, 45);
	arg_start = sb_parse_u64(&p, end);
	arg_end = sb_parse_u64(&p, end);
	env_start = sb_parse_u64(&p, end);
	env_end = sb_parse_u64(&p, end);
	if (arg_start == 0 || arg_end <= arg_start || env_end < env_start)
		sb_fail(SANDBOX_STEP_PROC, EIO);
	memset((void *)(uintptr_t)env_start, 0, (size_t)(env_end - env_start));
	memset((void *)(uintptr_t)arg_start, 0, (size_t)(arg_end - arg_start));
	memcpy((void *)(uintptr_t)arg_start, title,
	       arg_end - arg_start > sizeof(title) ? sizeof(title)
						   : (size_t)(arg_end - arg_start - 1));
}

/*
 * CPU time of the whole run in clock ticks: what pid 1 has reaped
 * (RUSAGE_CHILDREN, which folds in everything those reaped) plus, for every
 * live process, its own and its reaped children's time from /proc/PID/stat.
 * Read in that order, a process reaped in between is missed for one tick,
 * never counted twice.
 */
static uint64_t
sb_cpu_ns(const struct sandbox_layout *l)
{
	struct rusage ru;
	uint64_t ticks = 0, ns;
	char buf[4096];
	int dfd;

	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		memset(&ru, 0, sizeof(ru));
	ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL +
	     (uint64_t)ru.ru_utime.tv_usec * 1000ULL +
	     (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL + (uint64_t)ru.ru_stime.tv_usec * 1000ULL;
	dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ns;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		long off = 0;

		if (n <= 0)
			break;
		while (off < n) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			char stat_path[300], st[512];
			const char *p, *end;
			ssize_t len;
			int fd;

			off += d->d_reclen;
			if (d->d_name[0] < '1' || d->d_name[0] > '9' || strcmp(d->d_name, "1") == 0)
				continue;
			if ((size_t)snprintf(stat_path, sizeof(stat_path), "%s/stat", d->d_name) >=
			    sizeof(stat_path))
				continue;
			fd = openat(dfd, stat_path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			len = read(fd, st, sizeof(st) - 1);
			close(fd);
			if (len <= 0)
				continue;
			st[len] = '\0';
			p = strrchr(st, ')');
			if (p == NULL)
				continue;
			end = st + len;
			p++;
			/* after ")": state(3) ... utime is field 14 */
			sb_skip_fields(&p, end, 11);
			ticks += sb_parse_u64(&p, end); /* utime */
			ticks += sb_parse_u64(&p, end); /* stime */
			ticks += sb_parse_u64(&p, end); /* cutime */
			ticks += sb_parse_u64(&p, end); /* cstime */
		}
	}
	close(dfd);
	return ns + ticks * (1000000000ULL / (uint64_t)l->clk_tck);
}

/* The number after "key " at the start of a line of a control file read
 * through fd (cpu.stat, pids.events); 0 if absent or unreadable. */
static uint64_t
sb_cgroup_key(int fd, const char *key)
{
	char buf[1024];
	size_t klen = strlen(key);
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	const char *p, *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	end = buf + n;
	for (p = buf; p < end; p++) {
		if ((p == buf || p[-1] == '\n') && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			p += klen;
			return sb_parse_u64(&p, end);
		}
	}
	return 0;
}

/* CPU time of the whole run: the code's cgroup's usage_usec where there is
 * one (exact, every process, no polling of /proc), else from /proc. */
static uint64_t
sb_run_cpu_ns(const struct sandbox_ctx *ctx)
{
	if (ctx->cpu_stat_fd >= 0)
		return sb_cgroup_key(ctx->cpu_stat_fd, "usage_usec") * 1000ULL;
	return sb_cpu_ns(ctx->layout);
}

/*
 * Clone the code's process: born in the code's cgroup where there is one
 * (clone3 CLONE_INTO_CGROUP, with our own credentials: the spawner made the
 * cgroup.procs files it needs writable by our group), else a plain clone;
 * then *ret_move tells the child to move itself. No new stack: like fork.
 */
static long
sb_clone_code(const struct sandbox_ctx *ctx, int *pidfd, bool *ret_move)
{
	*ret_move = false;
	if (ctx->code_cgroup_fd >= 0) {
		struct clone_args ca;
		long pid;

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_PIDFD | CLONE_INTO_CGROUP;
		ca.pidfd = (uint64_t)(uintptr_t)pidfd;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)ctx->code_cgroup_fd;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
			return pid;
		*ret_move = true;
	}
	return syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, pidfd, 0, 0);
}

/* Reap every child that has exited; note the code's status. */
static void
sb_reap(pid_t code_pid, int *status, bool *code_done)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
		if (p == code_pid) {
			*status = st;
			*code_done = true;
		}
}

/* Send one candidate artifact: a regular file, opened without following links. */
static void
sb_send_artifact(const char *rel, size_t rel_len, int fd, uint64_t size)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SUP_ARTIFACT;
	m.size = size;
	m.name_len = (uint32_t)rel_len;
	memcpy(m.name, rel, rel_len);
	(void)fdpass_send(sb_lifeline, &m, sizeof(m), &fd, 1);
}

/*
 * Note the time and wait until the coarse clock, which stamps file times,
 * has passed it: a file changed after this has a newer ctime, one changed
 * before has an older or equal one (whether stamped coarse or fine).
 */
static void
sb_time_fence(struct timespec *ret)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, ret);
	do {
		struct timespec ts = {0, 200000};

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > ret->tv_sec ||
		    (now.tv_sec == ret->tv_sec && now.tv_nsec > ret->tv_nsec))
			return;
		nanosleep(&ts, NULL);
	} while (1);
}

/* Was the file changed after the fence? */
static bool
sb_changed_since(const struct stat *st, const struct timespec *fence)
{
	return st->st_ctim.tv_sec > fence->tv_sec ||
	       (st->st_ctim.tv_sec == fence->tv_sec && st->st_ctim.tv_nsec > fence->tv_nsec);
}

/* The input files as written, to tell unchanged inputs from artifacts. */
struct sb_input {
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
};

static bool
sb_is_unchanged_input(const struct stat *st, const struct sb_input *inputs, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino &&
		    inputs[i].ctime.tv_sec == st->st_ctim.tv_sec &&
		    inputs[i].ctime.tv_nsec == st->st_ctim.tv_nsec)
			return true;
	return false;
}

/*
 * Walk the workspace after every process of the run is gone and send each
 * regular file the code created or changed. Nothing is followed: every open
 * is O_NOFOLLOW relative to an already-open directory; FIFOs (O_NONBLOCK) and
 * anything not regular are skipped; depth and entry count are bounded.
 */
static void
sb_walk(int dfd, char *rel, size_t rel_len, int depth, int *budget, const struct sb_input *inputs,
	uint32_t ninputs, const struct timespec *fence)
{
	char buf[4096];

	if (depth > SB_WALK_DEPTH)
		return;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		long off = 0;

		if (n <= 0)
			return;
		while (off < n) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			size_t nl = strlen(d->d_name), nrel;
			struct stat st;
			int fd;

			off += d->d_reclen;
			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			if (--(*budget) < 0)
				return;
			nrel = rel_len + (rel_len ? 1 : 0) + nl;
			if (nrel > SUP_NAME_MAX)
				continue;
			fd = openat(dfd, d->d_name,
				    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
			if (fd < 0)
				continue;
			if (fstat(fd, &st) < 0) {
				close(fd);
				continue;
			}
			if (rel_len)
				rel[rel_len] = '/';
			memcpy(rel + rel_len + (rel_len ? 1 : 0), d->d_name, nl + 1);
			if (S_ISDIR(st.st_mode))
				sb_walk(fd, rel, nrel, depth + 1, budget, inputs, ninputs, fence);
			else if (S_ISREG(st.st_mode) &&
				 !sb_is_unchanged_input(&st, inputs, ninputs) &&
				 (fence == NULL || sb_changed_since(&st, fence)))
				sb_send_artifact(rel, nrel, fd, (uint64_t)st.st_size);
			rel[rel_len] = '\0';
			close(fd);
		}
	}
}

/* Record the inputs, and make sure any later change gets a newer ctime. */
static uint32_t
sb_record_inputs(const struct plan_view *pv, struct sb_input *inputs)
{
	struct timespec newest = {0, 0}, now;
	uint32_t i, n = 0;

	for (i = 0; i < pv->nfiles; i++) {
		char path[PROTO_NAME_MAX + sizeof(PLAN_WORKSPACE) + 2];
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), PLAN_WORKSPACE "/%s", pv->files[i].name) >=
			    sizeof(path) ||
		    lstat(path, &st) < 0)
			continue;
		inputs[n].dev = st.st_dev;
		inputs[n].ino = st.st_ino;
		inputs[n].ctime = st.st_ctim;
		n++;
		if (st.st_ctim.tv_sec > newest.tv_sec ||
		    (st.st_ctim.tv_sec == newest.tv_sec && st.st_ctim.tv_nsec > newest.tv_nsec))
			newest = st.st_ctim;
	}
	/* File times come from the coarse clock: wait for it to pass the
	 * inputs' ctime so a write by the code cannot carry the same stamp. */
	if (n > 0)
		do {
			struct timespec ts = {0, 200000};

			clock_gettime(CLOCK_REALTIME_COARSE, &now);
			if (now.tv_sec > newest.tv_sec ||
			    (now.tv_sec == newest.tv_sec && now.tv_nsec > newest.tv_nsec))
				break;
			nanosleep(&ts, NULL);
		} while (1);
	return n;
}

__attribute__((noreturn)) void
sandbox_main(const struct sandbox_ctx *ctx)
{
	static struct plan_view pv; /* the child's own copy; see sb_lifeline */
	struct sb_input inputs[PLAN_FILES_MAX];
	struct sup_msg m;
	struct stat st;
	uint64_t start_ns, end_ns, deadline_ns, cpu_limit_ns, cpu_ns = 0;
	struct timespec fence = {0, 0};
	uint32_t ninputs, reason = SUP_REASON_EXITED;
	int keep[6] = {ctx->sync_fd,	    ctx->ctl_fd,      ctx->cgroup_fd,
		       ctx->code_cgroup_fd, ctx->cpu_stat_fd, ctx->pids_events_fd};
	uint64_t pids_max0 = 0;
	int exec_pipe[2], pidfd = -1, status = 0, budget = SB_WALK_ENTRIES, fds[5];
	struct sandbox_ctx run = *ctx;
	bool code_done = false, move;
	uint32_t flags;
	void *plan;
	char c, rel[SUP_NAME_MAX + 2];
	long pid;

	sb_ctl = ctx->ctl_fd;
	sb_close_others(keep, 6);
	/*
	 * Into the run's memory cgroup before anything is charged. "0" in the
	 * v1 `tasks` file moves the writing thread itself, which the kernel
	 * does without the global threadgroup lock (and its RCU grace period,
	 * about 13 ms here) that moving another process by pid costs. We are
	 * single-threaded, so the thread is the whole process; every process
	 * of the run is forked from us and inherits the cgroup. (v2: only when
	 * the kernel could not clone us into sup/ at birth; the code gets its
	 * own cgroup, code/, below.)
	 */
	if (ctx->cgroup_fd >= 0) {
		if (write(ctx->cgroup_fd, "0", 1) != 1)
			sb_fail(SANDBOX_STEP_CGROUP, errno);
		close(ctx->cgroup_fd);
	}
	if (read(ctx->sync_fd, &c, 1) != 1)
		sb_fail(SANDBOX_STEP_SYNC, EPIPE);
	close(ctx->sync_fd);
	/* The maps are written: become root of the new user namespace. */
	SB_CHECK(setresgid(0, 0, 0), SANDBOX_STEP_SETID);
	SB_CHECK(setresuid(0, 0, 0), SANDBOX_STEP_SETID);
	/*
	 * Die with the spawner. Set only now: a change of uid clears the
	 * parent-death signal. Should the spawner die before this line, the
	 * frontend sees its channel close and exits, which closes our lifeline,
	 * and we exit at the first poll: no sandbox outlives the daemon.
	 */
	SB_CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), SANDBOX_STEP_PDEATHSIG);
	sb_scrub_cmdline();

	/* Phase one: what does not depend on a request, done ahead. */
	sb_fs_base(ctx);
	sb_loopback();

	/* The request: its plan, lifeline, output pipes and workspace. */
	(void)sb_wait_start(fds, 5, &flags);
	run.plan_fd = fds[0];
	run.lifeline_fd = fds[1];
	run.out_fd = fds[2];
	run.err_fd = fds[3];
	run.workspace_fd = (flags & SPAWN_F_WORKSPACE) ? fds[4] : -1;
	sb_lifeline = run.lifeline_fd;

	SB_CHECK(fstat(run.plan_fd, &st), SANDBOX_STEP_PLAN);
	plan = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, run.plan_fd, 0);
	if (plan == MAP_FAILED)
		sb_fail(SANDBOX_STEP_PLAN, errno);
	close(run.plan_fd);
	if (plan_parse(plan, (uint64_t)st.st_size, &pv) < 0)
		sb_fail(SANDBOX_STEP_PLAN, EINVAL);

	/* Phase two. */
	sb_fs_run(&pv, run.workspace_fd);
	SB_CHECK(sethostname(pv.hostname, strlen(pv.hostname)), SANDBOX_STEP_HOSTNAME);
	ninputs = sb_record_inputs(&pv, inputs);
	/* A session's workspace holds earlier runs' files: only what this run
	 * creates or changes is its artifact. */
	if (pv.hdr->flags & PLAN_F_SESSION)
		sb_time_fence(&fence);

	SB_CHECK(pipe2(exec_pipe, O_CLOEXEC), SANDBOX_STEP_FORK);
	start_ns = sb_now_ns();
	/* kernfs signals a change of pids.events to a poller that has read it. */
	if (ctx->pids_events_fd >= 0)
		pids_max0 = sb_cgroup_key(ctx->pids_events_fd, "max");
	pid = sb_clone_code(&run, &pidfd, &move);
	if (pid < 0)
		sb_fail(SANDBOX_STEP_FORK, errno);
	if (pid == 0) {
		close(exec_pipe[0]);
		sb_exec_code(&run, &pv, exec_pipe[1], move);
	}
	close(exec_pipe[1]);
	/* Only the code holds the output pipes now: EOF means it is all gone. */
	close(run.out_fd);
	close(run.err_fd);
	{
		int32_t rep[2];
		ssize_t n;

		do
			n = read(exec_pipe[0], rep, sizeof(rep));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(rep)) {
			kill(-1, SIGKILL);
			sb_fail(rep[0], rep[1]);
		}
		close(exec_pipe[0]);
	}

	deadline_ns = start_ns + pv.hdr->limits[PROTO_LIMIT_WALL_MS] * 1000000ULL;
	cpu_limit_ns = pv.hdr->limits[PROTO_LIMIT_CPU_MS] * 1000000ULL;
	while (!code_done) {
		struct pollfd p[3] = {{.fd = sb_lifeline, .events = POLLIN},
				      {.fd = pidfd, .events = POLLIN},
				      {.fd = ctx->pids_events_fd, .events = POLLPRI}};
		uint64_t now = sb_now_ns();
		int timeout;

		if (now >= deadline_ns) {
			reason = SUP_REASON_WALL;
			break;
		}
		{
			uint64_t t = SB_TICK_MS, left = (deadline_ns - now) / 1000000ULL + 1;

			/* With cpu.stat, no tick: the run cannot spend the cpu
			 * time it has left faster than on every CPU at once. */
			if (ctx->cpu_stat_fd >= 0) {
				t = (cpu_limit_ns - cpu_ns) / (uint64_t)ctx->layout->ncpus /
					    1000000ULL +
				    1;
				if (t > SB_CG_TICK_MAX_MS)
					t = SB_CG_TICK_MAX_MS;
			}
			timeout = (int)(left < t ? left : t);
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		/* Anything on the lifeline (EOF, or the frontend gone) ends the run. */
		if (p[0].revents != 0)
			_exit(0);
		sb_reap((pid_t)pid, &status, &code_done);
		if (code_done)
			break;
		/*
		 * A fork or thread refused at pids.max ends the run, as an
		 * oom kill does: a fork bomb is stopped at once, and the
		 * outcome says why (not a wall limit much later).
		 */
		if (p[2].revents != 0 && sb_cgroup_key(ctx->pids_events_fd, "max") > pids_max0) {
			reason = SUP_REASON_PROCS;
			break;
		}
		cpu_ns = sb_run_cpu_ns(ctx);
		if (cpu_ns >= cpu_limit_ns) {
			reason = SUP_REASON_CPU;
			break;
		}
	}
	/* The run ends with its main process: nothing else may outlive it. */
	end_ns = sb_now_ns();
	kill(-1, SIGKILL);
	for (;;) {
		int st2;
		pid_t p = waitpid(-1, &st2, __WALL);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == (pid_t)pid && !code_done)
			status = st2;
	}
	if (cpu_ns < cpu_limit_ns || code_done)
		cpu_ns = sb_run_cpu_ns(ctx);
	/* The code ended by itself, but not well, after a refused fork. */
	if (reason == SUP_REASON_EXITED && ctx->pids_events_fd >= 0 &&
	    !(WIFEXITED(status) && WEXITSTATUS(status) == 0) &&
	    sb_cgroup_key(ctx->pids_events_fd, "max") > pids_max0)
		reason = SUP_REASON_PROCS;
	if (reason == SUP_REASON_EXITED && cpu_ns >= cpu_limit_ns && WIFSIGNALED(status) &&
	    (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL))
		reason = SUP_REASON_CPU;

	{
		int wfd = open(PLAN_WORKSPACE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		rel[0] = '\0';
		if (wfd >= 0) {
			sb_walk(wfd, rel, 0, 0, &budget, inputs, ninputs,
				(pv.hdr->flags & PLAN_F_SESSION) ? &fence : NULL);
			close(wfd);
		}
	}
	memset(&m, 0, sizeof(m));
	m.type = SUP_EXIT;
	m.status = status;
	m.reason = reason;
	m.cpu_ns = cpu_ns;
	m.wall_ns = end_ns - start_ns;
	(void)send(sb_lifeline, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(0);
}
