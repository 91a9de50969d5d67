/*
 * spawner_zygote.c: the start of a zygote (docs/design-bursts.md §3.3): a
 * fork of the spawner that drops to the zygote's uid, keeps no capability
 * and execs the runtime's python on zygote.py. Between the fork and the
 * exec, as for a sandbox: no allocation, no stdio; the child reports
 * {step, errno} on a close-on-exec pipe and EOF means the exec happened.
 */
#include "spawner_zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "closefds.h"
#include "fdpass.h"
#include "sigdefaults.h"
#include "zygote_msg.h"

static const char *const spawner_zygote_steps[SPAWNER_ZYGOTE_STEP_COUNT_] = {
	[SPAWNER_ZYGOTE_STEP_NONE] = "none",
	[SPAWNER_ZYGOTE_STEP_PDEATHSIG] = "pdeathsig",
	[SPAWNER_ZYGOTE_STEP_GROUPS] = "groups",
	[SPAWNER_ZYGOTE_STEP_SETGID] = "setgid",
	[SPAWNER_ZYGOTE_STEP_SETUID] = "setuid",
	[SPAWNER_ZYGOTE_STEP_CAPS] = "caps",
	[SPAWNER_ZYGOTE_STEP_NO_NEW_PRIVS] = "no_new_privs",
	[SPAWNER_ZYGOTE_STEP_FDS] = "fds",
	[SPAWNER_ZYGOTE_STEP_EXEC] = "exec",
};

const char *
spawner_zygote_step_name(int step)
{
	if (step < 0 || step >= SPAWNER_ZYGOTE_STEP_COUNT_)
		return "unknown";
	return spawner_zygote_steps[step];
}

/* The child's report: which step failed and its errno (positive). */
struct spawner_zygote_report {
	int32_t step;
	int32_t err;
};

/* Report step's failure on fd and end the child (errno is the step's). */
static _Noreturn void
spawner_zygote_fail(int fd, enum spawner_zygote_step step)
{
	struct spawner_zygote_report rep = {.step = (int32_t)step, .err = errno ? errno : EIO};

	(void)!write(fd, &rep, sizeof(rep));
	_exit(127);
}

/*
 * No capability in any set: the uid change from 0 cleared the permitted
 * and effective sets (no SECBIT_KEEP_CAPS), ambient is cleared here, and
 * everything is read back. The bounding set keeps what the spawner's has
 * (CAP_SETUID, CAP_SETGID: dropping them would need CAP_SETPCAP, which the
 * spawner does not hold); with no_new_privs and python carrying no file
 * capabilities, no exec can raise them again.
 */
static int
spawner_zygote_nocaps(uid_t uid, gid_t gid)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	if (d[0].effective | d[0].permitted | d[0].inheritable | d[1].effective | d[1].permitted |
	    d[1].inheritable) {
		errno = EPERM;
		return -1;
	}
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -1;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid ||
	    getgroups(0, NULL) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * Put the fds at 3, 4 and 5 and close every other but the report pipe
 * and python's (close-on-exec: they close at the exec), which move above
 * them first (*report and *exe are their new numbers). Through copies above them, so that a
 * source already at 3-5 is neither overwritten nor left close-on-exec
 * (dup2 of an fd onto itself keeps the flag), nor is the report pipe.
 */
static int
spawner_zygote_fds(const struct spawner_zygote *z, int *report, int *exe)
{
	const int src[3] = {z->sock_fd, z->bpf_fd, z->script_fd};
	int hi[3], keep[8] = {0, 1, 2, 3, 4, 5, -1, -1}, rep, i, r;

	if ((rep = fcntl(*report, F_DUPFD_CLOEXEC, 16)) < 0)
		return -1;
	*report = rep;
	keep[6] = rep;
	if ((rep = fcntl(*exe, F_DUPFD_CLOEXEC, 16)) < 0)
		return -1;
	*exe = rep;
	keep[7] = rep;
	for (i = 0; i < 3; i++)
		if ((hi[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16)) < 0)
			return -1;
	for (i = 0; i < 3; i++)
		if (dup2(hi[i], SPAWNER_ZYGOTE_FD_SOCK + i) < 0)
			return -1;
	if ((r = closefds_except(keep, 8)) < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/*
 * The forked child, in the one order: die with the spawner; groups, gid,
 * uid (the order that leaves no window with a group or a uid we meant to
 * give up); no capability, read back; no_new_privs; fds; exec.
 */
static _Noreturn void
spawner_zygote_child(const struct spawner_zygote *z, int report, int exe)
{
	char *const argv[] = {(char *)z->python, "-I", "-S", "-B", "/proc/self/fd/5",
			      (char *)z->ext,	 "3",  "4",  NULL};

	errno = 0;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_PDEATHSIG);
	if (setgroups(0, NULL) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_GROUPS);
	if (setresgid(z->gid, z->gid, z->gid) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_SETGID);
	if (setresuid(z->uid, z->uid, z->uid) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_SETUID);
	if (spawner_zygote_nocaps(z->uid, z->gid) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_CAPS);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_NO_NEW_PRIVS);
	if (spawner_zygote_fds(z, &report, &exe) < 0)
		spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_FDS);
	/* A fresh run's code starts with every disposition at its default
	 * (sandbox_code.c); the zygote's runs must too, and its child has no
	 * exec of its own: an ignored SIGINT or SIGQUIT the daemon was started
	 * with would reach every run's code (and Python installs no SIGINT
	 * handler then). The mask emptied too. */
	sigdefaults_all();
	/* The file checked by spawner_zygote_open_root(), not what the path names
	 * now. */
	(void)syscall(SYS_execveat, exe, "", argv, z->envp, AT_EMPTY_PATH);
	spawner_zygote_fail(report, SPAWNER_ZYGOTE_STEP_EXEC);
}

/*
 * Open a file the zygote runs and check it. The zygote's python comes
 * from the frontend (the spawner parses no config), and unlike a
 * sandbox's argv it is exec'd outside any sandbox: only a regular file
 * that only root can change is taken (as [mount] sources are held), and
 * that open file is what the child execs (execveat), so a later change
 * of the path does not count. Opened O_PATH: the frontend may name any
 * path, and an open for reading as root would block the spawner on a
 * FIFO, or act on a device, before the check; an O_PATH fd only names
 * the file, and execveat() runs it.
 */
int
spawner_zygote_open_root(const char *path, int flags, mode_t need)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC | flags);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || (st.st_mode & need) != need) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int
spawner_zygote_start(const struct spawner_zygote *z, pid_t *ret_pid, const char **ret_step)
{
	struct spawner_zygote_report rep;
	int p[2], exe, r = 0;
	ssize_t n;
	pid_t pid;

	*ret_step = "args";
	/* Never root: the zygote is a parser-adjacent process (Python) and
	 * must hold no power on the host; its uid's only power is owning the
	 * user namespaces of its caller's runs (design-bursts.md §3.1). */
	if (z->uid == 0 || z->gid == 0 || z->python == NULL || z->python[0] != '/' ||
	    z->ext == NULL || z->envp == NULL || z->sock_fd < 0 || z->bpf_fd < 0 ||
	    z->script_fd < 0)
		return -EINVAL;
	*ret_step = "python";
	if ((exe = spawner_zygote_open_root(z->python, 0, S_IXOTH)) < 0)
		return exe;
	*ret_step = "pipe";
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		close(exe);
		return r;
	}
	*ret_step = "fork";
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0) {
		close(p[0]);
		spawner_zygote_child(z, p[1], exe);
	}
	close(p[1]);
	p[1] = -1;
	do
		n = read(p[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		*ret_pid = pid;
		goto out;
	}
	r = n == (ssize_t)sizeof(rep) && rep.err > 0 ? -rep.err : -EPROTO;
	*ret_step = n == (ssize_t)sizeof(rep) ? spawner_zygote_step_name(rep.step) : "report";
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
out:
	close(exe);
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	return r;
}
