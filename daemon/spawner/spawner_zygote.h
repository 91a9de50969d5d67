/*
 * spawner_zygote.h: how the spawner starts a zygote (docs/design-bursts.md
 * §3.3): a started interpreter that serves one caller's python runs by
 * forking, as a uid of its own with no capability, which owns the user
 * namespaces of those runs' sandboxes.
 */
#ifndef AIRLOCKD_SPAWNER_ZYGOTE_H
#define AIRLOCKD_SPAWNER_ZYGOTE_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The child's steps, in order; a failure comes back as {step, errno}. */
enum spawner_zygote_step {
	SPAWNER_ZYGOTE_STEP_NONE,
	SPAWNER_ZYGOTE_STEP_PDEATHSIG,
	SPAWNER_ZYGOTE_STEP_GROUPS,
	SPAWNER_ZYGOTE_STEP_SETGID,
	SPAWNER_ZYGOTE_STEP_SETUID,
	SPAWNER_ZYGOTE_STEP_CAPS,
	SPAWNER_ZYGOTE_STEP_NO_NEW_PRIVS,
	SPAWNER_ZYGOTE_STEP_FDS,
	SPAWNER_ZYGOTE_STEP_EXEC,
	SPAWNER_ZYGOTE_STEP_COUNT_
};

/* The zygote's fds after the exec (zygote.py's argv names them). */
enum spawner_zygote_fd {
	SPAWNER_ZYGOTE_FD_SOCK = 3,   /* its end of the order socket */
	SPAWNER_ZYGOTE_FD_BPF = 4,    /* the runs' seccomp program (a memfd) */
	SPAWNER_ZYGOTE_FD_SCRIPT = 5, /* zygote.py (a sealed memfd) */
};

/* What a zygote is started with; every fd stays the caller's. */
struct spawner_zygote {
	const char *python; /* the runtime's interpreter, an absolute path */
	const char *ext;    /* the _airlock_zygote extension module's path */
	int script_fd;	    /* zygote.py */
	int sock_fd;	    /* the zygote's end of its order socket */
	int bpf_fd;	    /* the seccomp program of the runs */
	char *const *envp;  /* the runtime's base environment */
	uid_t uid;	    /* the zygote's uid and gid (U_z): not 0 */
	gid_t gid;
};

/*
 * Fork and exec `python -I -S -B` on zygote.py as uid/gid with no group, no
 * capability and no_new_privs, dying with the spawner, its fds 0-2 the
 * spawner's and 3-5 the enum's, no other. Returns the pid in *ret_pid once
 * the exec happened (EOF on a close-on-exec pipe), else -errno with the
 * failed step's name in *ret_step. Before any fork: -EINVAL for uid or
 * gid 0 or a missing field.
 */
int spawner_zygote_start(const struct spawner_zygote *z, pid_t *ret_pid, const char **ret_step);

/*
 * Open path O_PATH (with flags, such as O_NOFOLLOW), close-on-exec, and
 * take it only if it is a regular file owned by root, writable by no one
 * else, with every mode bit of need. Returns the fd, -errno, or -EPERM
 * for another file.
 */
int spawner_zygote_open_root(const char *path, int flags, mode_t need);

/* The name of a step ("unknown" for a value no step has). */
const char *spawner_zygote_step_name(int step);

#endif
