/*
 * spawner_clone.c: how the spawner clones a sandbox or a keeper in a slot's
 * uids: clone3 into its cgroup where the kernel can, as the owner of the new
 * user namespace (the slot's uid: spawner_owner_begin), the uid and gid
 * maps, the release on the sync pipe; and the kill of such a child, which
 * needs the same uid. spawner.c decides when.
 */
#include "spawner.h"
#include "spawner_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/sched.h>

#include "log.h"
#include "plan.h"

/*
 * Clone a child (flags: namespaces) born in the cgroup whose directory is
 * cgfd, when there is one and the kernel can: clone3(CLONE_INTO_CGROUP),
 * Linux 5.7+. Born there, the child needs no migration, which would take
 * the global cgroup_threadgroup_rwsem and wait for an RCU grace period on
 * the run's path. No new stack: the child runs on its copy of ours, like
 * fork. *ret_into (in parent and child) says whether it went in; a kernel
 * without it (ENOSYS, E2BIG, EINVAL) is remembered and the child moves
 * itself instead.
 */
static long
spawner_clone(struct spawner *sp, uint64_t flags, int cgfd, bool *ret_into)
{
	*ret_into = false;
	if (cgfd >= 0 && sp->cg.into) {
		struct clone_args ca;
		long pid;

		memset(&ca, 0, sizeof(ca));
		ca.flags = flags | CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)cgfd;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid >= 0) {
			*ret_into = true;
			return pid;
		}
		if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
			return -1;
		log_warnx("spawner: clone3(CLONE_INTO_CGROUP): %s; sandboxes move themselves "
			  "into their cgroup from now on",
			  strerror(errno));
		sp->cg.into = false;
	}
	return syscall(SYS_clone, (unsigned long)flags | SIGCHLD, 0, NULL, NULL, 0);
}

/*
 * Act as the owner of the next user namespace: the slot's first host uid
 * (issue 13, finding 4). The kernel charges a process's per-user counts
 * (inotify instances and watches, POSIX message queue bytes, pending
 * signals, fanotify groups, user namespaces) at every level of the user
 * namespace tree: in the run's own namespace and, above it, to the
 * namespace's owner in the host's. Created by root, every run's counts were
 * root's: one run took all 128 inotify instances of host root. Owned by
 * the slot's uid, each run has the host's per-user limits to itself, and
 * host root and other runs are untouched.
 *
 * Only the effective uid changes (setresuid(-1, uid, -1)): the real and
 * saved uids stay 0, so the permitted set (CAP_SETUID, CAP_SETGID) is kept
 * and spawner_owner_end() can come back; the effective set, which the
 * kernel clears on the change, is raised again from it. Writing the maps of
 * a namespace we own needs CAP_SYS_ADMIN in it (which its owner has) and
 * CAP_SETUID/CAP_SETGID in its parent, both judged on the opener's
 * credentials: the maps are written in this state too, the way shadow's
 * newuidmap does it. The filesystem uid stays 0 for the permission checks
 * of cgroupfs (CLONE_INTO_CGROUP) and of the child's /proc files (the
 * spawner is not dumpable, so they are root's). No other process can use
 * the window: signals and ptrace need a match with the real or saved uid
 * (0), and the spawner is single-threaded.
 */
static int
spawner_owner_begin(struct spawner *sp, uint32_t uid)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];

	/* A change of euid clears our parent-death signal (a test harness
	 * sets one): kept here, set again by spawner_owner_end(). */
	sp->pdeathsig = 0;
	(void)prctl(PR_GET_PDEATHSIG, &sp->pdeathsig, 0, 0, 0);
	sp->ppid = getppid();
	if (setresuid((uid_t)-1, (uid_t)uid, (uid_t)-1) < 0)
		return -errno;
	(void)setfsuid(0);
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (geteuid() != (uid_t)uid || setfsuid((uid_t)-1) != 0)
		return -EPERM;
	return 0;
}

/*
 * Back to euid 0 (allowed: the real uid is 0); the kernel copies the
 * permitted set into the effective set. Not coming back is fatal: the
 * spawner would go on with the wrong credentials.
 */
void
spawner_owner_end(struct spawner *sp)
{
	if (setresuid((uid_t)-1, 0, (uid_t)-1) < 0 || geteuid() != 0 || setfsuid((uid_t)-1) != 0)
		fatal("spawner: cannot return to euid 0");
	if (sp->pdeathsig > 0) {
		(void)prctl(PR_SET_PDEATHSIG, sp->pdeathsig, 0, 0, 0);
		/* The parent died while it was cleared: the signal it missed. */
		if (getppid() != sp->ppid)
			(void)kill(getpid(), sp->pdeathsig);
	}
}

/*
 * Clone (spawner_clone) as the owner of the new user namespace, slot's uid
 * (spawner_owner_begin). In the parent the caller ends the ownership once
 * the maps are written; on failure it has ended here, *ret_step names the
 * step ("owner", "clone") and -errno comes back. The child gets 0.
 */
long
spawner_clone_owned(struct spawner *sp, uint32_t slot, uint64_t flags, int cgfd, bool *ret_into,
		    const char **ret_step)
{
	long pid;
	int r;

	*ret_step = "owner";
	r = spawner_owner_begin(sp, spawner_uid(sp, slot));
	if (r < 0) {
		spawner_owner_end(sp);
		return r;
	}
	*ret_step = "clone";
	pid = spawner_clone(sp, flags, cgfd, ret_into);
	if (pid < 0) {
		r = -errno;
		spawner_owner_end(sp);
		return r;
	}
	return pid;
}

/*
 * SIGKILL a sandbox's supervisor or a keeper of slot. Once it is root of its
 * user namespace its uids are the slot's, and that namespace is no longer
 * ours (spawner_owner_begin), so euid 0 without CAP_KILL may not signal it.
 * With the slot's uid as our effective uid we may: the kernel lets a sender
 * signal a process whose real or saved uid is its effective uid.
 */
void
spawner_kill(struct spawner *sp, uint32_t slot, pid_t pid)
{
	int r = spawner_owner_begin(sp, spawner_uid(sp, slot));

	if (r == 0 && kill(pid, SIGKILL) < 0)
		r = -errno;
	spawner_owner_end(sp);
	if (r < 0 && r != -ESRCH)
		log_warnx("spawner: kill %d (uid slot %" PRIu32 "): %s", (int)pid, slot,
			  strerror(-r));
}

/* Write one /proc/PID/ file. */
static int
spawner_write_proc(pid_t pid, const char *file, const char *val)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == strlen(val) ? 0 : -EIO;
}

/*
 * Map root of the sandbox to the slot's first host uid and the code's uid
 * 1000 to its second, so no two live runs share a host uid.
 */
int
spawner_write_maps(const struct spawner *sp, uint32_t slot, pid_t pid, const char **ret_step)
{
	char map[128];
	unsigned long h = (unsigned long)sp->uid_base + 2UL * slot;
	int r;

	snprintf(map, sizeof(map), "0 %lu 1\n%d %lu 1\n", h, PLAN_SANDBOX_UID, h + 1);
	*ret_step = "uid_map";
	if ((r = spawner_write_proc(pid, "uid_map", map)) < 0)
		return r;
	*ret_step = "setgroups";
	if ((r = spawner_write_proc(pid, "setgroups", "deny")) < 0)
		return r;
	*ret_step = "gid_map";
	return spawner_write_proc(pid, "gid_map", map);
}

/*
 * Let a new child go: write its uid/gid maps, then one byte on its sync pipe
 * (it waits for it before it becomes root of its namespace).
 */
int
spawner_release(const struct spawner *sp, uint32_t slot, pid_t pid, int sync_fd,
		const char **ret_step)
{
	int r = spawner_write_maps(sp, slot, pid, ret_step);

	if (r < 0)
		return r;
	if (write(sync_fd, "g", 1) != 1) {
		*ret_step = "sync";
		return -errno;
	}
	return 0;
}
