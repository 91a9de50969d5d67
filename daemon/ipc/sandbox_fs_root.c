/*
 * sandbox_fs_root.c: the root every sandbox starts from, as a table of set-up
 * ops (run by sandbox_fs_apply in sandbox_fs.c), and the rule of which paths a
 * profile's hidden_paths may name: the config checks it at load, plan_parse
 * again in the supervisor. Data and pure functions only: the config, the plan
 * and the supervisor link it alike.
 */
#include "sandbox_fs_root.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

static const char sb_passwd[] = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
				"sandbox:x:1000:1000:sandbox:" PLAN_HOME ":/bin/sh\n"
				"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char sb_group[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char sb_hosts[] = "127.0.0.1\tlocalhost\n::1\tlocalhost\n";
static const char sb_nsswitch[] = "passwd: files\ngroup: files\nhosts: files\n";

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
 * loop (sandbox_fs_apply). A profile may hide what an /etc row makes
 * (sandbox_fs_root_hidable).
 */
const struct sandbox_fs_op sandbox_fs_root[] = {
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

const size_t sandbox_fs_root_len = sizeof(sandbox_fs_root) / sizeof(sandbox_fs_root[0]);

/*
 * Whether path is one of the /etc entries the root makes itself (a generated
 * file or a bind of the host's): hiding it removes what its rows made.
 * Structural rows (/etc, /proc, /dev, /tmp, /run...) are not hidable.
 */
static bool
sandbox_fs_root_etc(const char *path)
{
	size_t i;

	for (i = 0; i < sandbox_fs_root_len; i++) {
		const struct sandbox_fs_op *op = &sandbox_fs_root[i];

		if ((op->kind == SANDBOX_FS_FILE || op->kind == SANDBOX_FS_BIND_RO) &&
		    strncmp(op->dst, "etc/", 4) == 0 && strcmp(op->dst, path + 1) == 0)
			return true;
	}
	return false;
}

bool
sandbox_fs_root_hidable(const char *path)
{
	if (path == NULL || !rootspec_path_normal(path))
		return false;
	return strncmp(path, "/usr/", 5) == 0 || sandbox_fs_root_etc(path);
}

void
sandbox_fs_root_etc_list(char *buf, size_t len)
{
	size_t i, off = 0;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < sandbox_fs_root_len; i++) {
		const char *dst = sandbox_fs_root[i].dst;
		char path[ROOTSPEC_PATH_MAX];
		int n;

		if ((sandbox_fs_root[i].kind != SANDBOX_FS_FILE &&
		     sandbox_fs_root[i].kind != SANDBOX_FS_BIND_RO) ||
		    strlen(dst) + 2 > sizeof(path))
			continue;
		path[0] = '/';
		strcpy(path + 1, dst);
		if (!sandbox_fs_root_etc(path))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off > 0 ? ", " : "", path);
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += (size_t)n;
	}
}

int
sandbox_fs_root_hidden_overlap(const char *const *paths, size_t n, size_t *ret_i, size_t *ret_j)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (rootspec_paths_overlap(paths[i], paths[j])) {
				*ret_i = i;
				*ret_j = j;
				return -EINVAL;
			}
	return 0;
}
