/*
 * zygote_enter.h: how a zygote's forked child becomes a run's code in a
 * sandbox the spawner prepared (docs/design-bursts.md §3.2).
 *
 * A zygote is a started interpreter that never runs user code: per run it
 * forks, and the child calls zygote_enter() with the run's order. The child
 * joins the sandbox's namespaces (user first: from then on its
 * capabilities count in the run's namespace only), forks twice so that the
 * process left is in the run's pid namespace and adopted by its supervisor,
 * and drops to the code's credentials and limits, seccomp last. What
 * returns is that process, ready to run the code in the interpreter.
 *
 * Allocation-free and without stdio: it runs in a copy of the zygote between
 * fork and the code, as sandbox_code.c runs between clone and exec.
 */
#ifndef AIRLOCKD_ZYGOTE_ENTER_H
#define AIRLOCKD_ZYGOTE_ENTER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct landlock_rules;
struct sock_fprog;

/* The namespaces joined, in this order (the user namespace first). */
enum zygote_ns {
	ZYGOTE_NS_USER,
	ZYGOTE_NS_MNT,
	ZYGOTE_NS_NET,
	ZYGOTE_NS_IPC,
	ZYGOTE_NS_UTS,
	ZYGOTE_NS_CGROUP,
	ZYGOTE_NS_PID,
	ZYGOTE_NS_COUNT_
};

/* The steps, in order; a failure is reported as {step, errno}. */
enum zygote_step {
	ZYGOTE_STEP_NONE,
	ZYGOTE_STEP_ORDER,
	ZYGOTE_STEP_SETNS_USER,
	ZYGOTE_STEP_SETNS_MNT,
	ZYGOTE_STEP_SETNS_NET,
	ZYGOTE_STEP_SETNS_IPC,
	ZYGOTE_STEP_SETNS_UTS,
	ZYGOTE_STEP_SETNS_CGROUP,
	ZYGOTE_STEP_SETNS_PID,
	ZYGOTE_STEP_FORK_PID,
	ZYGOTE_STEP_FORK_ORPHAN,
	ZYGOTE_STEP_ADOPT,
	ZYGOTE_STEP_CGROUP,
	ZYGOTE_STEP_GROUPS,
	ZYGOTE_STEP_CAPBSET,
	ZYGOTE_STEP_SETGID,
	ZYGOTE_STEP_SETUID,
	ZYGOTE_STEP_CAPS,
	ZYGOTE_STEP_VERIFY,
	ZYGOTE_STEP_DUMPABLE,
	ZYGOTE_STEP_OOM_SCORE,
	ZYGOTE_STEP_CHDIR,
	ZYGOTE_STEP_RLIMIT,
	ZYGOTE_STEP_STDIO,
	ZYGOTE_STEP_NO_NEW_PRIVS,
	ZYGOTE_STEP_LANDLOCK,
	ZYGOTE_STEP_SECCOMP,
	ZYGOTE_STEP_REPORT,
	ZYGOTE_STEP_COUNT_
};

#define ZYGOTE_RLIMITS_MAX 8

/* The fds of the process zygote_enter() returns in; no other is open. */
enum zygote_fd {
	ZYGOTE_FD_REPORT = 3,	/* closed after the report */
	ZYGOTE_FD_LANDLOCK = 4, /* closed once enforced */
	ZYGOTE_FD_CODE = 5,	/* the order's code_fd (close-on-exec), for the
				 * interpreter to read and close; absent: closed */
	ZYGOTE_FD_COUNT_ = 6
};

/* What the child reports on the order's report pipe: once, then EOF. */
struct zygote_report {
	int32_t step; /* enum zygote_step; ZYGOTE_STEP_NONE: ready */
	int32_t err;  /* errno of the failed step; 0 when ready */
	int32_t pid;  /* when ready: the code's pid in the run's namespace, for its
		       * supervisor to hold (pidfd_open); 0 on failure */
};

/*
 * One run's order, filled in before the fork. fds are the zygote's (its
 * child inherits them); -1 for an optional one.
 */
struct zygote_order {
	int ns_fd[ZYGOTE_NS_COUNT_]; /* the supervisor's /proc ns files; cgroup: -1 */
	int cgroup_procs_fd;	     /* the code cgroup's cgroup.procs, opened by the
				      * spawner (write judged on its credentials); -1 */
	int stdio_fd[3];	     /* become the code's fds 0, 1, 2 */
	int report_fd;		     /* a pipe's write end: struct zygote_report */
	int code_fd;		     /* becomes ZYGOTE_FD_CODE; -1: none */
	const char *cwd;	     /* the code's working directory (absolute) */
	uid_t uid;		     /* the code's uid and gid in the run's namespace */
	gid_t gid;
	unsigned nrlimits;
	int rlimit_res[ZYGOTE_RLIMITS_MAX];
	struct rlimit rlimit[ZYGOTE_RLIMITS_MAX];
	struct landlock_rules *landlock; /* built before the fork; NULL: none */
	const struct sock_fprog *seccomp;
};

/*
 * Enter the run's sandbox per order and return 0 in the process that is to
 * run the code (pid 3 of the run's pid namespace, adopted by its
 * supervisor), with fds 0-2 its stdio, ZYGOTE_FD_CODE the order's code_fd
 * (if any) and no other fd open, after
 * {ZYGOTE_STEP_NONE, 0} went on the report pipe. The two processes forked
 * on the way _exit(0) at once. A failed step writes {step, errno} on the
 * report pipe and _exit(127)s: it never returns an error, as nothing of
 * the zygote may go on in a half-entered process.
 */
int zygote_enter(const struct zygote_order *order);

/* The name of a step ("unknown" for a value no step has). */
const char *zygote_step_name(int step);

#endif
