/*
 * sandbox.h: the child side of one run, between clone and exec.
 *
 * sandbox_main() runs as pid 1 of fresh user, mount, pid, network, ipc and
 * uts namespaces (the "supervisor"). It builds the filesystem, starts the
 * code as an unprivileged uid, enforces the wall and cpu limits, reaps, and
 * reports the code's status and its artifacts on the lifeline socket.
 *
 * Everything it needs is prepared before the clone (struct sandbox_ctx);
 * it never allocates, never uses stdio or libevent, and reports a failed step
 * as {step, -errno} (struct sup_msg). Its files: sandbox_child.h.
 */
#ifndef AIRLOCKD_SANDBOX_H
#define AIRLOCKD_SANDBOX_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

#include "rootspec.h"

/* Set-up steps, in order. The values are reported to clients by name. */
enum sandbox_step {
	SANDBOX_STEP_NONE = 0,
	SANDBOX_STEP_FDS,
	SANDBOX_STEP_CGROUP,
	SANDBOX_STEP_SYNC,
	SANDBOX_STEP_PDEATHSIG,
	SANDBOX_STEP_SETID,
	SANDBOX_STEP_PLAN,
	SANDBOX_STEP_MOUNT_PRIVATE,
	SANDBOX_STEP_ROOT_TMPFS,
	SANDBOX_STEP_MKDIR,
	SANDBOX_STEP_BIND_RO,
	SANDBOX_STEP_SYMLINK,
	SANDBOX_STEP_ETC,
	SANDBOX_STEP_WORKSPACE,
	SANDBOX_STEP_TMP,
	SANDBOX_STEP_PROC,
	SANDBOX_STEP_DEV,
	SANDBOX_STEP_CODE_FILE,
	SANDBOX_STEP_INPUT_FILES,
	SANDBOX_STEP_PIVOT_ROOT,
	SANDBOX_STEP_UMOUNT_OLD,
	SANDBOX_STEP_REMOUNT_RO,
	SANDBOX_STEP_HOSTNAME,
	SANDBOX_STEP_LOOPBACK,
	SANDBOX_STEP_FORK,
	SANDBOX_STEP_STDIO,
	SANDBOX_STEP_CHDIR,
	SANDBOX_STEP_RLIMIT,
	SANDBOX_STEP_CAPBSET,
	SANDBOX_STEP_SETGID,
	SANDBOX_STEP_SETUID,
	SANDBOX_STEP_CAPS,
	SANDBOX_STEP_NO_NEW_PRIVS,
	SANDBOX_STEP_SECCOMP,
	SANDBOX_STEP_EXEC,
	SANDBOX_STEP_LANDLOCK,
	SANDBOX_STEP_EGRESS, /* the proxy's listener of a network = proxy run */
	SANDBOX_STEP_MOUNTS,
	SANDBOX_STEP_TOOLS,
	SANDBOX_STEP_CELLS,    /* an interpreter session's channel (sandbox_cells.c) */
	SANDBOX_STEP_HIDDEN,   /* hidden_paths: the overlay on /usr, the /etc rows undone */
	SANDBOX_STEP_PRESTART, /* the pre-started interpreter: gone, or the run not its own */
	/* the code's oom_score_adj (the oom killer takes it first) */
	SANDBOX_STEP_OOM_SCORE,
	SANDBOX_STEP_COUNT_
};

const char *sandbox_step_name(int step);

/*
 * RLIMIT_NPROC for a run whose processes limit is `processes`. Without a v2
 * cgroup it is the limit itself (on the run's own uid). With one, pids.max
 * is the limit and RLIMIT_NPROC a backstop that must never refuse first: a
 * fork it refuses is not counted in pids.events, and the run would not end
 * process_limit. The kernel counts a new task against the uid (copy_creds)
 * before the cgroup charges it, so a burst of concurrent forks is counted by
 * the uid before the cgroup; each fork in flight has a parent the cgroup
 * counts, so the uid's count stays within twice pids.max. One above
 * pids.max, a burst hit it first (1 run in 40 on Debian 13's 6.12).
 */
static inline uint64_t
sandbox_nproc_limit(bool cgroup2, uint64_t processes)
{
	if (!cgroup2 || processes == UINT64_MAX)
		return processes;
	return processes > UINT64_MAX / 2 ? UINT64_MAX : 2 * processes;
}

#define SANDBOX_TOPS_MAX 8

/* The host's top-level layout, read once at start-up. */
struct sandbox_layout {
	struct {
		char name[16];	  /* "bin", "lib", ... */
		char target[128]; /* symlink target, when is_link */
		bool is_link;
	} tops[SANDBOX_TOPS_MAX];
	int ntops;
	bool has_alternatives; /* /etc/alternatives */
	bool has_ld_cache;     /* /etc/ld.so.cache */
	bool has_ssl;	       /* /etc/ssl */
	bool has_mplrc;	       /* /etc/matplotlibrc */
	bool has_fonts;	       /* /etc/fonts */
	int clk_tck;
	bool memory_cgroup; /* the memory limit is enforced by a cgroup */
	bool cgroup2;	    /* processes and cpu too, by the run's v2 cgroup */
	int ncpus;	    /* online CPUs: how fast a run can spend cpu time */
	int landlock_abi;   /* the kernel's Landlock ABI, 0 without (landlock.h) */
	/* The first mount point strictly beneath /usr, "" without: the kernel
	 * refuses such a /usr as the hidden_paths overlay's lower layer. */
	char usr_submount[128];
	/* Bit N: the host has /usr/lib/python3.N/lib-dynload, where a run
	 * with tools links airlock_tools (sandbox_tools.c); said at start-up. */
	uint64_t py_dynload;
};

/*
 * One set-up step of a sandbox's root (bubblewrap's SetupOp): the root is a
 * list of these, run in order by one loop between clone and exec
 * (sandbox_fs.c); more binds are more entries. Paths in dst are beneath the
 * new root, without a leading '/'.
 */
enum sandbox_fs_kind {
	SANDBOX_FS_MKDIR = 1, /* an empty directory dst */
	SANDBOX_FS_TOUCH,     /* an empty file dst, to bind a file over */
	SANDBOX_FS_BIND_RO,   /* the host's src at dst (made before), read-only */
	SANDBOX_FS_BIND_DEV,  /* the host's device node src at dst (touched before) */
	SANDBOX_FS_SYMLINK,   /* a link dst -> src */
	SANDBOX_FS_FILE,      /* a file dst holding the string src, 0644, root's */
	SANDBOX_FS_TMPFS,     /* a tmpfs at dst: mode src, size bytes, inodes */
	SANDBOX_FS_PROC,      /* the run's proc at dst */
	SANDBOX_FS_DEVPTS,    /* a new devpts instance at dst */
	SANDBOX_FS_TOPS,      /* the host's /bin, /lib...: links copied, directories bound */
	SANDBOX_FS_TREE,      /* the host's src as detached read-only tree number size
			       * (inodes: ROOTSPEC_F_*), attached in phase two if the
			       * run names it (the root spec's mounts, rootspec.h) */
};

/* Which host file an op needs (read once into struct sandbox_layout); without
 * it the op is skipped. */
enum sandbox_fs_when {
	SANDBOX_FS_ALWAYS = 0,
	SANDBOX_FS_IF_LD_CACHE,
	SANDBOX_FS_IF_ALTERNATIVES,
	SANDBOX_FS_IF_SSL,
	SANDBOX_FS_IF_MPLRC,
	SANDBOX_FS_IF_FONTS,
};

struct sandbox_fs_op {
	enum sandbox_fs_kind kind;
	enum sandbox_step step; /* reported when the op fails */
	enum sandbox_fs_when when;
	const char *dst;
	const char *src;
	uint64_t size, inodes; /* SANDBOX_FS_TMPFS */
};

/* Read the host layout (as root, before dropping privileges). */
int sandbox_layout_init(struct sandbox_layout *ret);

/* Everything one clone needs, prepared by the spawner before it. */
struct sandbox_ctx {
	const struct sandbox_layout *layout;
	const struct sock_fprog *seccomp;
	const struct sock_fprog *seccomp_noproc; /* for a plan with PLAN_F_NOPROC */
	const struct rootspec *rootspec;	 /* the [mount] table, checked by the spawner */
	int sync_fd; /* read end: one byte once the uid/gid maps are written */
	int ctl_fd;  /* from the spawner: struct sb_start and the run's fds */
	/* At the clone, -1, or with SPAWN_F_PRESTART the pre-start plan and the
	 * output pipes (sandbox_prestart.c); then the run's. */
	int plan_fd;	    /* sealed memfd, see plan.h */
	int lifeline_fd;    /* SOCK_SEQPACKET to the frontend; EOF = kill the run */
	int out_fd;	    /* stdout pipe, write end */
	int err_fd;	    /* stderr pipe, write end */
	int cgroup_fd;	    /* write "0" to move in: v1 `tasks`, v2 sup/cgroup.procs; or -1 */
	int code_cgroup_fd; /* v2: the code's cgroup directory (clone3 into it), or -1 */
	int cpu_stat_fd;    /* v2: the code's cpu.stat, or -1 (then /proc is polled) */
	int pids_events_fd; /* v2: the code's pids.events, or -1 */
	int peak_fd;	    /* a session's: its memory peak, read-write, or -1 */
	int workspace_fd;   /* a session's workspace mount (open_tree), or -1 */
	int cell_fd; /* PLAN_F_CELLS: the driver's channel, its fd 0 (set by the supervisor) */
	/* SPAWN_F_ZYGOTE: owned by a zygote; v1's cgroup_fd is then kept for
	 * the zygote's child to move itself into the run's cgroup */
	bool zygote;
	/* SPAWN_F_ZYGOTE on cgroup v2: code/cgroup.procs, opened by the
	 * spawner as root (the zygote's child moves itself through it), or -1 */
	int zygote_procs_fd;
	int zygote_fd; /* SPAWN_F_ZYGOTE_RUN: the zygote's order socket, or -1 (supervisor's) */
};

/* Become the supervisor. Never returns. */
__attribute__((noreturn)) void sandbox_main(const struct sandbox_ctx *ctx);

#endif
