/*
 * startcheck.c: the start-up checks (startcheck.h). Each failure names what
 * is missing and what grants it, since the first reader is an operator
 * starting airlockd in a container or on a host it has not run on
 * (docs/scale-out.md lists the grants).
 */
#include "startcheck.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The capabilities airlockd needs as root, each with its reason. The
 * spawner keeps only the first two after the split (privdrop.c). */
static const struct {
	int cap;
	bool socket_chown; /* needed only to give the socket its owner */
	const char *name, *why;
} startcheck_needed[] = {
	{CAP_SETUID, false, "CAP_SETUID",
	 "the spawner writes each run's uid map and acts as the run's uid; the frontend "
	 "drops to the service user"},
	{CAP_SETGID, false, "CAP_SETGID",
	 "the spawner writes each run's gid map; the frontend "
	 "drops to the service group"},
	{CAP_SETPCAP, false, "CAP_SETPCAP",
	 "both halves empty their capability bounding sets "
	 "after the split"},
	{CAP_CHOWN, true, "CAP_CHOWN",
	 "the socket is given the owner or group of socket_user and socket_group; "
	 "with both root (socket_group = root) it is not needed"},
};

int
startcheck_caps(bool socket_chown, char *why, size_t whylen)
{
	size_t i;

	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_get_caps_process() < 0) {
		snprintf(why, whylen, "cannot read this process's capabilities");
		return -EPERM;
	}
	for (i = 0; i < sizeof(startcheck_needed) / sizeof(startcheck_needed[0]); i++) {
		int cap = startcheck_needed[i].cap;

		if (startcheck_needed[i].socket_chown && !socket_chown)
			continue;
		if (capng_have_capability(CAPNG_EFFECTIVE, (unsigned)cap) &&
		    capng_have_capability(CAPNG_BOUNDING_SET, (unsigned)cap))
			continue;
		snprintf(why, whylen,
			 "missing capability %s (%s): grant it (podman/docker --cap-add=%s; "
			 "Kubernetes securityContext.capabilities.add)",
			 startcheck_needed[i].name, startcheck_needed[i].why,
			 startcheck_needed[i].name + 4);
		return -EPERM;
	}
	return 0;
}

int
startcheck_socket_dir(const char *dir, char *why, size_t whylen)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		int e = errno;

		snprintf(why, whylen, "socket directory %s: %s", dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "socket directory %s is not a directory", dir);
		return -ENOTDIR;
	}
	/*
	 * AT_EACCESS: the effective ids and capabilities that bind() will use.
	 * A read-only mount (a hostPath mounted readOnly, a :ro volume) is
	 * EROFS even for root; a directory of another owner is EACCES for a
	 * root without CAP_DAC_OVERRIDE, which a container need not grant.
	 */
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		int e = errno;

		snprintf(why, whylen,
			 "socket directory %s is not writable (%s): mount it read-write and "
			 "owned by root (the container's hostPath or volume)",
			 dir, strerror(e));
		return -e;
	}
	return 0;
}

/* The probe's steps, in order, and what each failing says. */
enum startcheck_step {
	STARTCHECK_IDS = 1,
	STARTCHECK_USERNS,
	STARTCHECK_UNSHARE,
	STARTCHECK_HOSTNAME,
	STARTCHECK_MOUNT,
	STARTCHECK_FORK,
	STARTCHECK_PROC,
};

static const char *const startcheck_step_msg[] = {
	[STARTCHECK_IDS] = "the probe could not become the run range's first uid",
	[STARTCHECK_USERNS] =
		"this kernel does not let an unprivileged process create a user namespace: "
		"airlockd needs them for every run; check kernel.unprivileged_userns_clone, "
		"user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns and "
		"the container's seccomp profile",
	[STARTCHECK_UNSHARE] = "a sandbox's mount, uts and pid namespaces cannot be made in its "
			       "user namespace: the container's seccomp profile (run airlockd "
			       "with seccomp unconfined: it loads its own filters)",
	[STARTCHECK_HOSTNAME] = "sethostname in a sandbox's uts namespace is refused: a container "
				"runtime's default seccomp profile (run airlockd with seccomp "
				"unconfined: it loads its own filters)",
	[STARTCHECK_MOUNT] = "mount in a sandbox's mount namespace is refused: the container's "
			     "AppArmor profile or seccomp profile (apparmor=unconfined, "
			     "seccomp=unconfined)",
	[STARTCHECK_FORK] = "the probe could not fork into its pid namespace",
	[STARTCHECK_PROC] = "a sandbox cannot mount its own /proc: this /proc has paths masked "
			    "or read-only (a container's default; podman --security-opt "
			    "unmask=/proc/*, Kubernetes procMount: Unmasked or privileged)",
};

/* Report {step, errno} on fd and _exit (the probe's child side). */
__attribute__((noreturn)) static void
startcheck_probe_fail(int fd, int step)
{
	int msg[2] = {step, errno};

	(void)!write(fd, msg, sizeof(msg));
	_exit(1);
}

/* The probe's child: what a sandbox does first, as the run's uid. */
__attribute__((noreturn)) static void
startcheck_probe(uid_t uid, int fd)
{
	int status;
	pid_t pid;

	if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		startcheck_probe_fail(fd, STARTCHECK_IDS);
	if (unshare(CLONE_NEWUSER) < 0)
		startcheck_probe_fail(fd, STARTCHECK_USERNS);
	if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWPID) < 0)
		startcheck_probe_fail(fd, STARTCHECK_UNSHARE);
	if (sethostname("airlock", 7) < 0)
		startcheck_probe_fail(fd, STARTCHECK_HOSTNAME);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		startcheck_probe_fail(fd, STARTCHECK_MOUNT);
	pid = fork(); /* pid 1 of the new pid namespace, which a proc mount needs */
	if (pid < 0)
		startcheck_probe_fail(fd, STARTCHECK_FORK);
	if (pid == 0) {
		/* Over /proc in the probe's own mount namespace, gone with it. */
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			startcheck_probe_fail(fd, STARTCHECK_PROC);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

int
startcheck_userns(uid_t uid, char *why, size_t whylen)
{
	int pfd[2], msg[2] = {0, 0}, status, e;
	ssize_t n;
	pid_t pid;

	/*
	 * The spawner clones each run's user namespace as the run's uid
	 * without CAP_SYS_ADMIN (spawner_clone.c), and the sandbox then makes
	 * its namespaces, hostname and mounts in it: what a sysctl, an AppArmor
	 * userns restriction, a container runtime's seccomp profile or its
	 * masked /proc refuse, each a different grant. Try the same steps in
	 * a child, which reports the first that fails as {step, errno} on a
	 * CLOEXEC pipe; nothing read means every step passed.
	 */
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(why, whylen, "start-up probe: pipe: %s", strerror(e));
		return -e;
	}
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(pfd[0]);
		close(pfd[1]);
		snprintf(why, whylen, "start-up probe: fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		close(pfd[0]);
		startcheck_probe(uid, pfd[1]);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], msg, sizeof(msg));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (n != (ssize_t)sizeof(msg) || msg[0] < STARTCHECK_IDS || msg[0] > STARTCHECK_PROC) {
		snprintf(why, whylen, "start-up probe as uid %u: ended without a report",
			 (unsigned)uid);
		return -ECHILD;
	}
	e = msg[1] > 0 ? msg[1] : EPERM;
	snprintf(why, whylen, "%s (as uid %u: %s; docs/scale-out.md)", startcheck_step_msg[msg[0]],
		 (unsigned)uid, strerror(e));
	return -e;
}
