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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The capabilities airlockd needs as root, each with its reason. The
 * spawner keeps only the first two after the split (privdrop.c). */
static const struct {
	int cap;
	const char *name, *why;
} startcheck_needed[] = {
	{CAP_SETUID, "CAP_SETUID",
	 "the spawner writes each run's uid map and acts as the run's uid; the frontend "
	 "drops to the service user"},
	{CAP_SETGID, "CAP_SETGID",
	 "the spawner writes each run's gid map; the frontend "
	 "drops to the service group"},
	{CAP_SETPCAP, "CAP_SETPCAP",
	 "both halves empty their capability bounding sets "
	 "after the split"},
};

int
startcheck_caps(char *why, size_t whylen)
{
	size_t i;

	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_get_caps_process() < 0) {
		snprintf(why, whylen, "cannot read this process's capabilities");
		return -EPERM;
	}
	for (i = 0; i < sizeof(startcheck_needed) / sizeof(startcheck_needed[0]); i++) {
		int cap = startcheck_needed[i].cap;

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

int
startcheck_userns(uid_t uid, char *why, size_t whylen)
{
	int status, e = 0;
	pid_t pid;

	/*
	 * The spawner clones each run's user namespace as the run's uid
	 * without CAP_SYS_ADMIN (spawner_clone.c), which is what
	 * kernel.unprivileged_userns_clone = 0, user.max_user_namespaces = 0,
	 * an AppArmor userns restriction or a container runtime's seccomp
	 * profile refuse. Try it the same way in a child; it exits with the
	 * errno. The child does nothing else (it has only its exit status).
	 */
	pid = fork();
	if (pid < 0) {
		e = errno;
		snprintf(why, whylen, "user namespaces: fork: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(255);
		_exit(unshare(CLONE_NEWUSER) < 0 ? (errno & 0xff) : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			e = errno;
			snprintf(why, whylen, "user namespaces: waitpid: %s", strerror(e));
			return -e;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 255) {
		snprintf(why, whylen, "user namespaces: the probe could not become uid %u",
			 (unsigned)uid);
		return -ECHILD;
	}
	e = WEXITSTATUS(status);
	snprintf(why, whylen,
		 "this kernel does not let an unprivileged process create a user namespace "
		 "(unshare as uid %u: %s): airlockd needs them for every run; check "
		 "kernel.unprivileged_userns_clone, user.max_user_namespaces, "
		 "kernel.apparmor_restrict_unprivileged_userns and the container's seccomp "
		 "profile (docs/scale-out.md)",
		 (unsigned)uid, strerror(e));
	return -e;
}
