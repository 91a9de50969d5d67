/*
 * sandbox_step.c: the names of the supervisor's set-up steps, as clients see
 * them in "sandbox set-up failed at step NAME". Every step has one
 * (unit-sandbox-step); the frontend names what a sandbox reported.
 */
#include "sandbox.h"

#include <stddef.h>

#include "nametab.h"

static const char *const sandbox_step_names[SANDBOX_STEP_COUNT_] = {
	[SANDBOX_STEP_NONE] = "none",
	[SANDBOX_STEP_FDS] = "fds",
	[SANDBOX_STEP_CGROUP] = "cgroup",
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
	[SANDBOX_STEP_EGRESS] = "egress",
	[SANDBOX_STEP_MOUNTS] = "mounts",
	[SANDBOX_STEP_TOOLS] = "tools",
	[SANDBOX_STEP_CELLS] = "cells",
	[SANDBOX_STEP_HIDDEN] = "hidden_paths",
	[SANDBOX_STEP_PRESTART] = "prestart",
	[SANDBOX_STEP_OOM_SCORE] = "oom_score_adj",
};

/* The name of a step; "unknown" for a value no step has. */
const char *
sandbox_step_name(int step)
{
	return nametab_name(sandbox_step_names, step, "unknown");
}
