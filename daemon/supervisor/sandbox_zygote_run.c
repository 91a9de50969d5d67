/*
 * sandbox_zygote_run.c: a supervisor's zygote run (docs/design-bursts.md
 * §3.5): the order, built from its own namespaces, the run's cgroup and
 * pipes and the plan, sent on the zygote's socket; the code adopted; what
 * a zygote that failed us leaves undone before the ordinary way.
 *
 * Allocation-free, no stdio: this is the supervisor (sandbox_child.h).
 */
#include "sandbox_zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fdio.h"
#include "landlock.h"
#include "limit.h"
#include "sandbox_child.h"
#include "zygote_msg.h"
#include "zygote_send.h"

/* The plan flags a zygote's run cannot serve: each changes what the zygote
 * fixed at its start (the seccomp program, the environment) or needs what
 * only our own clone of the code has (a session's workspace, the cells'
 * channel, the tool bridge and egress sockets set up for it). */
#define SB_ZYGOTE_REFUSED                                                                          \
	(PLAN_F_SESSION | PLAN_F_NOPROC | PLAN_F_EGRESS | PLAN_F_TOOLS | PLAN_F_CELLS)
/* How long the code may take to report its entry (the zygote's fork, the
 * set-up, its adoption); past it, the run goes the ordinary way. */
#define SB_ZYGOTE_ENTER_MS 5000

/* The interpreter flags zygote.py honours (its FLAGS): the zygote runs
 * isolated, without bytecode files, and sets up site unless -S. */
static bool
sb_zy_flag(const char *a)
{
	static const char *const ok[] = {"-I", "-S", "-s", "-E", "-B", "-P"};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(a, ok[i]) == 0)
			return true;
	return false;
}

/* One NUL-terminated string into fd; -1 (errno set) on a short write. */
static int
sb_zy_put(int fd, const char *s)
{
	size_t len = strlen(s) + 1;

	if (write(fd, s, len) != (ssize_t)len) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

/*
 * The code memfd, NUL-terminated strings: how many argv strings follow (in
 * decimal), the plan's argv after the interpreter (its flags, then `-c
 * BOOT ARGS` for a python run with its start-up, else `CODE_FILE ARGS`:
 * zygote.py runs them as CPython would), then the plan's environment, which
 * the child takes as its own (the run's, never the zygote's: a pre-started
 * python run's start-up text comes in it, AIRLOCK_BOOT). A flag zygote.py cannot honour:
 * -EOPNOTSUPP, the ordinary way. Sealed against growth and writes; the zygote gets a read-only open
 * of it. Returns the memfd (ours) or -errno.
 */
static int
sb_zy_code(const struct plan_view *pv)
{
	char path[256];
	size_t i, k;
	int fd, r;

	r = snprintf(path, sizeof(path), PLAN_CODE_DIR "/%s", pv->code_name);
	if (r < 0 || (size_t)r >= sizeof(path) || pv->code_name[0] == '\0' || pv->argv[0] == NULL)
		return -EINVAL;
	for (k = 1; pv->argv[k] != NULL; k++)
		if (strcmp(pv->argv[k], "-c") == 0 || strcmp(pv->argv[k], path) == 0)
			break;
		else if (!sb_zy_flag(pv->argv[k]))
			return -EOPNOTSUPP;
	if (pv->argv[k] == NULL)
		return -EINVAL;
	fd = memfd_create("airlock-zygote-code", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	for (i = 1; pv->argv[i] != NULL; i++)
		;
	r = dprintf(fd, "%zu%c", i - 1, '\0');
	for (i = 1; r >= 0 && pv->argv[i] != NULL; i++)
		r = sb_zy_put(fd, pv->argv[i]);
	for (i = 0; r >= 0 && pv->envp[i] != NULL; i++)
		r = sb_zy_put(fd, pv->envp[i]);
	if (r < 0) {
		r = errno != 0 ? -errno : -EIO;
		close(fd);
		return r;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_WRITE) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* The code's rlimits, as sandbox_code.c sets them for a fresh run (one per
 * limit table row with one, no core files). Returns how many, or -E2BIG. */
static int
sb_zy_rlimits(const struct sandbox_layout *l, const struct plan_view *pv,
	      int res[ZYGOTE_MSG_RLIMITS], struct rlimit rl[ZYGOTE_MSG_RLIMITS])
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		uint64_t cur, max;

		if (!sandbox_rlimit(l, pv->hdr->limits, i, 0, &cur, &max))
			continue;
		if (n == ZYGOTE_MSG_RLIMITS)
			return -E2BIG;
		res[n] = limit_table[i].rlimit;
		rl[n].rlim_cur = cur;
		rl[n].rlim_max = max;
		n++;
	}
	if (n == ZYGOTE_MSG_RLIMITS)
		return -E2BIG;
	res[n] = RLIMIT_CORE;
	rl[n].rlim_cur = rl[n].rlim_max = 0;
	return (int)n + 1;
}

/* The order's fds that are ours to open: the namespaces, stdin, the
 * cgroup's move, the Landlock ruleset, the report pipe and the code
 * (o's fds all -1 first). 0 or -errno; what was opened is in o either way. */
static int
sb_zy_open(const struct sb_run *r, struct zygote_send_run *o, int rep[2], int *code)
{
	static const char *const rw[] = {PLAN_WORKSPACE, "/tmp", NULL};
	static const char *const wo[] = {"/dev", "/proc", NULL};
	const struct plan_view *pv = r->pv;
	struct landlock_rules ll;
	int err;

	err = sandbox_zygote_ns(o->ns_fd);
	if (err < 0)
		return err;
	o->stdio_fd[0] = pv->stdin_data != NULL
				 ? open(PLAN_CODE_DIR "/.stdin", O_RDONLY | O_CLOEXEC)
				 : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (o->stdio_fd[0] < 0)
		return -errno;
	/* The zygote's child is born in the zygote's cgroup, not ours: it
	 * moves itself into the code's (v2) or the run's (v1: our kept
	 * `tasks` fd) before anything of the run is charged. Both opened by
	 * the spawner, as root: an open of ours would not do on v2, where
	 * the move is judged on the opener's right to write the cgroup.procs
	 * of the service's cgroup (docs/design-bursts.md §3.5). A copy for
	 * the order; sandbox_zygote_run() closes ours once it is sent or not. */
	if (r->ctx.zygote_procs_fd >= 0)
		o->cgroup_procs_fd = fcntl(r->ctx.zygote_procs_fd, F_DUPFD_CLOEXEC, 0);
	else if (r->ctx.code_cgroup_fd >= 0)
		return -EACCES;
	else if (r->ctx.cgroup_fd >= 0)
		o->cgroup_procs_fd = fcntl(r->ctx.cgroup_fd, F_DUPFD_CLOEXEC, 0);
	if ((r->ctx.zygote_procs_fd >= 0 || r->ctx.cgroup_fd >= 0) && o->cgroup_procs_fd < 0)
		return -errno;
	/* Landlock's rules, as sandbox_code.c builds them for a fresh run. */
	err = landlock_prepare(r->ctx.layout->landlock_abi, "/",
			       (pv->hdr->flags & PLAN_F_READONLY) ? NULL : rw, wo, &ll);
	if (err < 0)
		return err;
	o->landlock_fd = ll.fd;
	if (pipe2(rep, O_CLOEXEC) < 0)
		return -errno;
	o->report_fd = rep[1];
	*code = sb_zy_code(pv);
	if (*code < 0)
		return *code;
	/* A read-only open of its own, at offset 0: the code cannot change it. */
	{
		char self[48];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", *code);
		o->code_fd = open(self, O_RDONLY | O_CLOEXEC);
	}
	return o->code_fd < 0 ? -errno : 0;
}

/* Close what the order carried (the zygote has its own copies now). */
static void
sb_zy_close(struct zygote_send_run *o)
{
	int *all[] = {&o->ns_fd[0],    &o->ns_fd[1],  &o->ns_fd[2],    &o->ns_fd[3],
		      &o->ns_fd[4],    &o->ns_fd[5],  &o->stdio_fd[0], &o->cgroup_procs_fd,
		      &o->landlock_fd, &o->report_fd, &o->code_fd};
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i] >= 0) {
			close(*all[i]);
			*all[i] = -1;
		}
}

int
sandbox_zygote_run(struct sb_run *r)
{
	static int res[ZYGOTE_MSG_RLIMITS];
	static struct rlimit rl[ZYGOTE_MSG_RLIMITS];
	struct zygote_send_run o;
	int sock = r->ctx.zygote_fd, rep[2] = {-1, -1}, code = -1, pidfd = -1, step, n, err;
	pid_t pid = 0;

	r->ctx.zygote_fd = -1;
	memset(&o, 0, sizeof(o));
	memset(o.ns_fd, -1, sizeof(o.ns_fd));
	o.cgroup_procs_fd = o.landlock_fd = o.report_fd = o.code_fd = o.stdio_fd[0] = -1;
	o.stdio_fd[1] = r->ctx.out_fd;
	o.stdio_fd[2] = r->ctx.err_fd;
	o.uid = PLAN_SANDBOX_UID;
	o.gid = PLAN_SANDBOX_GID;
	o.cwd = r->pv->cwd[0] != '\0' ? r->pv->cwd : PLAN_WORKSPACE;
	err = (r->pv->hdr->flags & SB_ZYGOTE_REFUSED) ? -EOPNOTSUPP : 0;
	n = err < 0 ? err : sb_zy_rlimits(r->ctx.layout, r->pv, res, rl);
	err = n < 0 ? n : sb_zy_open(r, &o, rep, &code);
	o.nrlimits = n < 0 ? 0 : (unsigned)n;
	o.rlimit_res = res;
	o.rlimit = rl;
	/* Sent without blocking (the socket is non-blocking): a zygote that
	 * does not read is EAGAIN, one that is gone EPIPE; either way the
	 * run goes the ordinary way. Our copy of the socket goes at once. */
	if (err == 0)
		err = zygote_order_send(sock, &o);
	close(sock);
	sb_zy_close(&o);
	if (r->ctx.cgroup_fd >= 0) {
		close(r->ctx.cgroup_fd);
		r->ctx.cgroup_fd = -1;
	}
	r->ctx.zygote_procs_fd = fd_close(r->ctx.zygote_procs_fd);
	if (err == 0)
		err = sandbox_zygote_adopt(rep[0], SB_ZYGOTE_ENTER_MS, &pidfd, &pid, &step);
	/*
	 * Past the deadline, the code is emptied before the last look at the
	 * pipe: a child that reported in the instant since then may have read
	 * the code, and so is adopted (the run is its own, never run again);
	 * one that reports after this look reads nothing (zygote.py runs
	 * nothing) and is killed below. Closing the pipe first instead left a
	 * window where a child reported, read the code and ran it before the
	 * kill, and the fall-back ran it again.
	 */
	if (err == -ETIMEDOUT && code >= 0) {
		(void)ftruncate(code, 0);
		err = sandbox_zygote_adopt(rep[0], 0, &pidfd, &pid, &step);
	}
	if (rep[0] >= 0)
		close(rep[0]);
	if (err == 0) {
		close(code);
		r->pid = pid;
		r->pidfd = pidfd;
		return 0;
	}
	/*
	 * Never run twice: the code did not enter, and whatever the zygote
	 * forked for it must not run it later. Three locks: the code is
	 * emptied (above, past the deadline; here for the other failures: a
	 * child that reads it from now on runs nothing); the report pipe's
	 * read end is closed above (a child that reports from now on fails
	 * its write and exits before the code: zygote_enter's "report"
	 * step); every process in our pid namespace but us is killed. The
	 * fall-back's own code is cloned after. A report that came but
	 * failed its checks (-EPROTO, -ECHILD) is a zygote that lies, not the
	 * code's doing (docs/security.md).
	 */
	if (code >= 0) {
		(void)ftruncate(code, 0);
		close(code);
	}
	(void)kill(-1, SIGKILL);
	return err;
}
