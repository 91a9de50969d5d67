/*
 * sandbox.c: the supervisor, pid 1 of a run's namespaces: its start-up, the
 * run's fds, supervision of the code, the artifacts, the failure report. The
 * filesystem is sandbox_fs.c, the code's process sandbox_code.c
 * (sandbox_child.h).
 *
 * This is the most dangerous code in the project. Rules, all on purpose:
 * no malloc, no stdio, no libevent (the process was cloned from the spawner
 * and owns a copy of its memory); every step that can fail reports
 * {step, errno} and exits; the code's process drops everything in the order
 * groups, gid, uid, capabilities, no_new_privs, seccomp, execve.
 */
#include "sandbox_child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cells_msg.h"
#include "cgroup_read.h"
#include "closefds.h"
#include "dirents.h"
#include "fdpass.h"
#include "landlock.h"
#include "mountinfo.h"
#include "sandbox_egress.h"
#include "sandbox_zygote.h"
#include "spawn_msg.h"

#define SB_WALK_DEPTH 16
#define SB_WALK_ENTRIES 20000
/* How long the supervisor waits, after SUP_EXIT, for the frontend to close
 * the lifeline before it exits anyway. */
#define SB_LAST_WORD_MS 1000

int
sandbox_layout_init(struct sandbox_layout *ret)
{
	static const char *const tops[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
	struct sandbox_layout l;
	struct stat st;
	size_t i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		char path[32];

		snprintf(path, sizeof(path), "/%s", tops[i]);
		if (lstat(path, &st) < 0)
			continue;
		snprintf(l.tops[l.ntops].name, sizeof(l.tops[l.ntops].name), "%s", tops[i]);
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(path, l.tops[l.ntops].target,
					     sizeof(l.tops[l.ntops].target) - 1);

			if (n < 0 || (size_t)n >= sizeof(l.tops[l.ntops].target) - 1)
				continue;
			l.tops[l.ntops].target[n] = '\0';
			l.tops[l.ntops].is_link = true;
		} else if (!S_ISDIR(st.st_mode))
			continue;
		l.ntops++;
	}
	l.has_alternatives = stat("/etc/alternatives", &st) == 0 && S_ISDIR(st.st_mode);
	l.has_ld_cache = stat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode);
	l.has_ssl = stat("/etc/ssl", &st) == 0 && S_ISDIR(st.st_mode);
	l.has_mplrc = stat("/etc/matplotlibrc", &st) == 0 && S_ISREG(st.st_mode);
	l.has_fonts = stat("/etc/fonts", &st) == 0 && S_ISDIR(st.st_mode);
	for (i = 0; i < 64; i++) {
		char path[48];

		snprintf(path, sizeof(path), "/usr/lib/python3.%zu/lib-dynload", i);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			l.py_dynload |= UINT64_C(1) << i;
	}
	l.clk_tck = (int)sysconf(_SC_CLK_TCK);
	l.landlock_abi = landlock_usable_abi(landlock_abi());
	l.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (l.ncpus < 1)
		l.ncpus = 1;
	if (l.clk_tck <= 0)
		l.clk_tck = 100;
	{
		/* hidden_paths' overlay needs a /usr with no mount beneath it
		 * (main.c warns); read once, the host's mounts are not ours to
		 * watch. A read that fails leaves "" and the warning unsaid. */
		char buf[65536];
		int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			size_t got = 0;
			ssize_t n;

			while (got < sizeof(buf) - 1 &&
			       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
				got += (size_t)n;
			buf[got] = '\0';
			mountinfo_first_below(buf, "/usr", l.usr_submount, sizeof(l.usr_submount));
			close(fd);
		}
	}
	*ret = l;
	return 0;
}

/* ---- allocation-free helpers -------------------------------------------- */

/* Bring up the loopback interface of the new network namespace. */
static void
sb_loopback(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		sandbox_fail(SANDBOX_STEP_LOOPBACK, errno);
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	SB_CHECK(ioctl(s, SIOCGIFFLAGS, &ifr), SANDBOX_STEP_LOOPBACK);
	ifr.ifr_flags |= IFF_UP;
	SB_CHECK(ioctl(s, SIOCSIFFLAGS, &ifr), SANDBOX_STEP_LOOPBACK);
	close(s);
}

/*
 * Write over the daemon's command line and environment strings in our copy
 * of its memory. The supervisor is a fork-like clone of the spawner, not an
 * exec (bubblewrap and nsjail exec, so they never have this): /proc/1/cmdline,
 * readable by the code, would show airlockd's argv (--config and --socket
 * paths, the binary's host path), and the environment strings sit right
 * after it. prctl(PR_SET_MM_ARG_START) would need CAP_SYS_RESOURCE in the
 * host's user namespace, and blanking the spawner's own argv at start-up
 * would hide it from the host's administrator too, so each supervisor
 * scrubs its own copy, in place, allocation-free, before anything of a run
 * exists. The bounds are the kernel's (/proc/self/stat fields 48 to 51).
 * The area ends in a NUL, so the kernel shows it as plain argv strings:
 * the title alone, and never the environment.
 */
static void
sb_scrub_cmdline(void)
{
	static const char title[] = "airlockd: supervisor";
	char st[1024];
	const char *p, *end;
	uint64_t arg_start, arg_end, env_start, env_end;

	sandbox_read_stat("/proc/self/stat", st, sizeof(st), SANDBOX_STEP_PROC, &p, &end);
	/* after ")": state is field 3; arg_start is field 48 */
	sandbox_stat_skip(&p, end, 45);
	arg_start = sandbox_stat_u64(&p, end);
	arg_end = sandbox_stat_u64(&p, end);
	env_start = sandbox_stat_u64(&p, end);
	env_end = sandbox_stat_u64(&p, end);
	if (arg_start == 0 || arg_end <= arg_start || env_end < env_start)
		sandbox_fail(SANDBOX_STEP_PROC, EIO);
	memset((void *)(uintptr_t)env_start, 0, (size_t)(env_end - env_start));
	memset((void *)(uintptr_t)arg_start, 0, (size_t)(arg_end - arg_start));
	memcpy((void *)(uintptr_t)arg_start, title,
	       arg_end - arg_start > sizeof(title) ? sizeof(title)
						   : (size_t)(arg_end - arg_start - 1));
}

/* Send one candidate artifact (type SUP_ARTIFACT) or figure (SUP_DISPLAY):
 * a regular file, opened without following links. */
static void
sb_send_file(uint32_t type, const char *rel, size_t rel_len, int fd, uint64_t size)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.size = size;
	m.name_len = (uint32_t)rel_len;
	memcpy(m.name, rel, rel_len);
	(void)fdpass_send(sandbox_lifeline(), &m, sizeof(m), &fd, 1);
}

/* Wait until the coarse clock, which stamps file times, has passed t. */
static void
sb_wait_coarse_past(const struct timespec *t)
{
	struct timespec now;

	do {
		struct timespec ts = {0, 200000};

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec > t->tv_nsec))
			return;
		nanosleep(&ts, NULL);
	} while (1);
}

/*
 * Note the time and wait until the coarse clock has passed it: a file
 * changed after this has a newer ctime, one changed before has an older or
 * equal one (whether stamped coarse or fine).
 */
static void
sb_time_fence(struct timespec *ret)
{
	clock_gettime(CLOCK_REALTIME, ret);
	sb_wait_coarse_past(ret);
}

/* Is a after b? */
static bool
sb_ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* Was the file changed after the fence? */
static bool
sb_changed_since(const struct stat *st, const struct timespec *fence)
{
	return sb_ts_after(&st->st_ctim, fence);
}

/* The input files as written, to tell unchanged inputs from artifacts. */
struct sb_input {
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
};

/* What a walk sends: the regular files changed (not the inputs as written)
 * after fence (NULL: all), or, for a cell (cell != NULL), since the last
 * cell's end; a cell's walk also fills next with the files of now's tick. */
struct sb_walk_filter {
	const struct sb_input *inputs;
	uint32_t ninputs;
	const struct timespec *fence;
	const struct sb_cell_fence *cell;
	struct sb_cell_fence *next;
};

static bool
sb_is_unchanged_input(const struct stat *st, const struct sb_input *inputs, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino &&
		    inputs[i].ctime.tv_sec == st->st_ctim.tv_sec &&
		    inputs[i].ctime.tv_nsec == st->st_ctim.tv_nsec)
			return true;
	return false;
}

/*
 * A cell's file: changed after the last cell's end (hi), or in the clock
 * tick of that end (from lo) and not as that end's walk saw it. File times
 * come from the coarse clock: a write in that tick, before or after the
 * end, has the tick's time; the cell's own would otherwise be missed or an
 * older one reported again (docs/design-interpreters.md §2.5).
 */
static bool
sb_cell_changed(const struct sb_cell_fence *cf, const struct stat *st)
{
	uint32_t i;

	if (sb_ts_after(&st->st_ctim, &cf->hi))
		return true; /* after the end */
	if (sb_ts_after(&cf->lo, &st->st_ctim))
		return false; /* before the end's tick */
	if (cf->overflow)
		return true; /* in it, and not remembered: reported, never missed */
	for (i = 0; i < cf->nseen; i++) {
		const struct sb_seen *s = &cf->seen[i];

		if (s->dev == st->st_dev && s->ino == st->st_ino &&
		    s->ctime.tv_sec == st->st_ctim.tv_sec &&
		    s->ctime.tv_nsec == st->st_ctim.tv_nsec &&
		    s->mtime.tv_sec == st->st_mtim.tv_sec &&
		    s->mtime.tv_nsec == st->st_mtim.tv_nsec && s->size == st->st_size)
			return false;
	}
	return true;
}

/* Remember a file of the tick of a cell's end for the next cell's walk. */
static void
sb_cell_remember(struct sb_cell_fence *next, const struct stat *st)
{
	struct sb_seen *s;

	if (sb_ts_after(&next->lo, &st->st_ctim))
		return;
	if (next->nseen == SB_CELL_SEEN_MAX) {
		next->overflow = true;
		return;
	}
	s = &next->seen[next->nseen++];
	s->dev = st->st_dev;
	s->ino = st->st_ino;
	s->ctime = st->st_ctim;
	s->mtime = st->st_mtim;
	s->size = st->st_size;
}

/* Does the walk send this regular file? */
static bool
sb_walk_wants(const struct sb_walk_filter *f, const struct stat *st)
{
	if (sb_is_unchanged_input(st, f->inputs, f->ninputs))
		return false;
	if (f->cell != NULL)
		return sb_cell_changed(f->cell, st);
	return f->fence == NULL || sb_changed_since(st, f->fence);
}

/* Open a regular file the walk chose (st: its fstatat), checked to be the
 * same file once open; -1 if it is not there as it was. */
static int
sb_walk_open(int dfd, const char *name, const struct stat *st)
{
	struct stat st2;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_dev != st->st_dev ||
	    st2.st_ino != st->st_ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Walk the workspace after every process of the run is gone (a cell's end:
 * all but the stopped interpreter) and send each regular file the code
 * created or changed. Nothing is followed: every look (fstatat) and open is
 * O_NOFOLLOW relative to an already-open directory; anything not a directory
 * or a regular file is never opened; depth and entry count are bounded.
 * Only a directory, or a file the walk sends, is opened: an unchanged file
 * costs one system call, not three (a cell's end walks the whole workspace:
 * issue 30); what is opened is checked to be what was looked at.
 */
static void
sb_walk(int dfd, char *rel, size_t rel_len, int depth, int *budget, const struct sb_walk_filter *f)
{
	struct dirents it;
	const struct dirent64 *d;

	if (depth > SB_WALK_DEPTH)
		return;
	dirents_init(&it, dfd);
	while ((d = dirents_next(&it)) != NULL) {
		size_t nl = strlen(d->d_name), nrel;
		struct stat st;
		int fd = -1;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (--(*budget) < 0)
			return;
		nrel = rel_len + (rel_len ? 1 : 0) + nl;
		if (nrel > SUP_NAME_MAX ||
		    fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) < 0)
			continue;
		if (rel_len)
			rel[rel_len] = '/';
		memcpy(rel + rel_len + (rel_len ? 1 : 0), d->d_name, nl + 1);
		if (S_ISDIR(st.st_mode)) {
			fd = openat(dfd, d->d_name,
				    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
			if (fd >= 0)
				sb_walk(fd, rel, nrel, depth + 1, budget, f);
		} else if (S_ISREG(st.st_mode)) {
			if (f->next != NULL)
				sb_cell_remember(f->next, &st);
			if (sb_walk_wants(f, &st) && (fd = sb_walk_open(dfd, d->d_name, &st)) >= 0)
				sb_send_file(SUP_ARTIFACT, rel, nrel, fd, (uint64_t)st.st_size);
		}
		rel[rel_len] = '\0';
		if (fd >= 0)
			close(fd);
	}
}

/*
 * A python run's figures: the regular files of SUP_DISPLAY_DIR, at most
 * PROTO_DISPLAY_MAX, as SUP_DISPLAY. The directory and its files are the
 * code's (it is dead now): nothing is followed (O_NOFOLLOW from /tmp, the
 * walk's fstatat and open), only regular files are opened, names are only
 * passed on (the frontend keeps NNN.png and NNN.svg); at most
 * SB_DISPLAY_ENTRIES entries are looked at (the start-up writes at most 8
 * files: more is the code's doing, and costs it its figures, not us a walk
 * of /tmp's 16384 inodes). One open() that fails (ENOENT) for a run that
 * made no figure.
 */
#define SB_DISPLAY_ENTRIES 64

static void
sb_send_display(void)
{
	struct dirents it;
	const struct dirent64 *d;
	int dfd = open(SUP_DISPLAY_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), n = 0;
	int budget = SB_DISPLAY_ENTRIES;

	if (dfd < 0)
		return;
	dirents_init(&it, dfd);
	while (n < PROTO_DISPLAY_MAX && budget-- > 0 && (d = dirents_next(&it)) != NULL) {
		size_t nl = strlen(d->d_name);
		struct stat st;
		int fd;

		if (d->d_name[0] == '.' || nl > SUP_NAME_MAX ||
		    fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		fd = sb_walk_open(dfd, d->d_name, &st);
		if (fd < 0)
			continue;
		sb_send_file(SUP_DISPLAY, d->d_name, nl, fd, (uint64_t)st.st_size);
		close(fd);
		n++;
	}
	close(dfd);
}

/* Record the inputs, and make sure any later change gets a newer ctime. */
static uint32_t
sb_record_inputs(const struct plan_view *pv, struct sb_input *inputs)
{
	struct timespec newest = {0, 0};
	uint32_t i, n = 0;

	for (i = 0; i < pv->nfiles; i++) {
		char path[PROTO_NAME_MAX + sizeof(PLAN_WORKSPACE) + 2];
		struct stat st;

		if ((size_t)snprintf(path, sizeof(path), PLAN_WORKSPACE "/%s", pv->files[i].name) >=
			    sizeof(path) ||
		    lstat(path, &st) < 0)
			continue;
		inputs[n].dev = st.st_dev;
		inputs[n].ino = st.st_ino;
		inputs[n].ctime = st.st_ctim;
		n++;
		if (st.st_ctim.tv_sec > newest.tv_sec ||
		    (st.st_ctim.tv_sec == newest.tv_sec && st.st_ctim.tv_nsec > newest.tv_nsec))
			newest = st.st_ctim;
	}
	/* File times come from the coarse clock: wait for it to pass the
	 * inputs' ctime so a write by the code cannot carry the same stamp. */
	if (n > 0)
		sb_wait_coarse_past(&newest);
	return n;
}

/*
 * From the clone to root of the run's namespaces: every fd the spawner does
 * not mean us to have closed, into the run's cgroup, the maps awaited,
 * uid 0, the parent-death signal, the command line scrubbed.
 */
static void
sb_start_up(const struct sandbox_ctx *ctx)
{
	int keep[11] = {ctx->sync_fd,	     ctx->ctl_fd,	  ctx->cgroup_fd,
			ctx->code_cgroup_fd, ctx->cpu_stat_fd,	  ctx->pids_events_fd,
			ctx->peak_fd,	     ctx->plan_fd,	  ctx->out_fd,
			ctx->err_fd,	     ctx->zygote_procs_fd};
	char c;
	int r;

	sandbox_self_init(ctx->ctl_fd, ctx->plan_fd >= 0);
	r = closefds_except(keep, 11);
	if (r < 0)
		sandbox_fail(SANDBOX_STEP_FDS, -r);
	/*
	 * Into the run's memory cgroup before anything is charged. "0" in the
	 * v1 `tasks` file moves the writing thread itself, which the kernel
	 * does without the global threadgroup lock (and its RCU grace period,
	 * about 13 ms here) that moving another process by pid costs. We are
	 * single-threaded, so the thread is the whole process; every process
	 * of the run is forked from us and inherits the cgroup. (v2: only when
	 * the kernel could not clone us into sup/ at birth; the code gets its
	 * own cgroup, code/, below.)
	 */
	if (ctx->cgroup_fd >= 0) {
		if (write(ctx->cgroup_fd, "0", 1) != 1)
			sandbox_fail(SANDBOX_STEP_CGROUP, errno);
		/* A zygote's child is born in the zygote's cgroup: on v1
		 * (no code cgroup) it moves itself into ours through this
		 * fd (sandbox_zygote_run). */
		if (!ctx->zygote || ctx->code_cgroup_fd >= 0)
			close(ctx->cgroup_fd);
	}
	if (read(ctx->sync_fd, &c, 1) != 1)
		sandbox_fail(SANDBOX_STEP_SYNC, EPIPE);
	close(ctx->sync_fd);
	/* The maps are written: become root of the new user namespace. */
	SB_CHECK(setresgid(0, 0, 0), SANDBOX_STEP_SETID);
	SB_CHECK(setresuid(0, 0, 0), SANDBOX_STEP_SETID);
	/*
	 * Die with the spawner. Set only now: a change of uid clears the
	 * parent-death signal. Should the spawner die before this line, the
	 * frontend sees its channel close and exits, which closes our lifeline,
	 * and we exit at the first poll: no sandbox outlives the daemon.
	 */
	SB_CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), SANDBOX_STEP_PDEATHSIG);
	sb_scrub_cmdline();
}

/* Map and parse the plan memfd fd (closed) into pv. */
static void
sb_map_plan(int fd, struct plan_view *pv)
{
	struct stat st;
	void *plan;

	SB_CHECK(fstat(fd, &st), SANDBOX_STEP_PLAN);
	plan = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (plan == MAP_FAILED)
		sandbox_fail(SANDBOX_STEP_PLAN, errno);
	close(fd);
	if (plan_parse(plan, (uint64_t)st.st_size, pv) < 0)
		sandbox_fail(SANDBOX_STEP_PLAN, EINVAL);
}

/* The request: its plan (mapped and parsed into pv), lifeline, output pipes
 * and workspace, into run. */
static void
sb_take_run(struct sandbox_ctx *run, struct plan_view *pv)
{
	int fds[SB_START_NFDS_ZYGOTE];
	uint32_t flags;

	_Static_assert(SB_START_NFDS_ZYGOTE >= SPAWN_REQ_NFDS_MAX, "the most fds a start brings");
	(void)sandbox_wait_start(fds, SB_START_NFDS_ZYGOTE, &flags);
	run->plan_fd = fds[0];
	run->lifeline_fd = fds[1];
	/* A pre-started interpreter has its pipes since its exec. */
	run->out_fd = sandbox_prestarted() ? -1 : fds[2];
	run->err_fd = sandbox_prestarted() ? -1 : fds[3];
	run->workspace_fd = (flags & SPAWN_F_WORKSPACE) ? fds[4] : -1;
	run->zygote_fd = (flags & SPAWN_F_ZYGOTE_RUN) ? fds[4] : -1;
	sandbox_set_lifeline(run->lifeline_fd);
	sb_map_plan(run->plan_fd, pv);
}

/* The run starts now: its wall clock, and what its cgroup counted before
 * (a session's runs share their cgroup, and a pre-started interpreter's
 * start-up is not its run's). */
static void
sb_run_baseline(struct sb_run *r)
{
	r->start_ns = sandbox_now_ns();
	/* kernfs signals a change of pids.events to a poller that has read it. */
	if (r->ctx.pids_events_fd >= 0)
		r->pids_max0 = cgroup_key(r->ctx.pids_events_fd, "max");
	if (r->ctx.cpu_stat_fd >= 0)
		r->cpu_base_ns = cgroup_key(r->ctx.cpu_stat_fd, "usage_usec") * 1000ULL;
	else if (sandbox_prestarted())
		r->cpu_base_ns = sandbox_cpu_ns(r->ctx.layout);
}

/* Clone the code and wait for its exec: EOF on the exec pipe, or its
 * {step, errno}, which fails the run. */
static void
sb_start_code(struct sb_run *r)
{
	int exec_pipe[2];

	SB_CHECK(pipe2(exec_pipe, O_CLOEXEC), SANDBOX_STEP_FORK);
	sb_run_baseline(r);
	r->pid = sandbox_code_start(&r->ctx, r->pv, exec_pipe, &r->pidfd);
	if (r->pid < 0)
		sandbox_fail(SANDBOX_STEP_FORK, errno);
	close(exec_pipe[1]);
	/* Only the code holds the output pipes now: EOF means it is all gone. */
	close(r->ctx.out_fd);
	close(r->ctx.err_fd);
	{
		int32_t rep[2];
		ssize_t n;

		do
			n = read(exec_pipe[0], rep, sizeof(rep));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(rep)) {
			kill(-1, SIGKILL);
			sandbox_fail(rep[0], rep[1]);
		}
		close(exec_pipe[0]);
	}
}

/*
 * The run's code: forked by the zygote that owns this sandbox when the
 * spawner gave us its order socket (docs/design-bursts.md §3.5), else
 * ours. A zygote that fails us before the code entered is a fall-back:
 * the code runs the ordinary way, once, and SUP_EXIT says so; once it
 * entered, every failure is the run's.
 */
static void
sb_start_run(struct sb_run *r)
{
	int err;

	if (r->ctx.zygote_fd < 0) {
		sb_start_code(r);
		return;
	}
	sb_run_baseline(r);
	err = sandbox_zygote_run(r);
	if (err == 0) {
		r->zygote = SUP_ZYGOTE_RAN;
		/* Only the code holds the output pipes now, as after a clone. */
		close(r->ctx.out_fd);
		close(r->ctx.err_fd);
		return;
	}
	r->zygote = SUP_ZYGOTE_FELL_BACK;
	r->zygote_err = err;
	sb_start_code(r);
}

void
sandbox_cell_artifacts(struct sb_run *r)
{
	/* Static: two fences (4.6 KiB each) do not belong on the stack. */
	static struct sb_cell_fence next;
	struct sb_walk_filter f = {.cell = &r->cell_fence, .next = &next};
	char rel[SUP_NAME_MAX + 2];
	int budget = SB_WALK_ENTRIES;
	int wfd;

	/* Now's tick and time, before the walk: the next cell's fence. Every
	 * process but the stopped interpreter is dead, so what the walk sees
	 * is what the cell left (the file operations of the session may still
	 * write: such a file is the next cell's too). */
	memset(&next, 0, sizeof(next));
	clock_gettime(CLOCK_REALTIME_COARSE, &next.lo);
	clock_gettime(CLOCK_REALTIME, &next.hi);
	rel[0] = '\0';
	wfd = open(PLAN_WORKSPACE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wfd >= 0) {
		sb_walk(wfd, rel, 0, 0, &budget, &f);
		close(wfd);
	}
	r->cell_fence = next;
}

/* Send the artifacts (fence: a session's, only what changed after it) and
 * the final SUP_EXIT. */
static void
sb_report(const struct sb_run *r, const struct sb_input *inputs, uint32_t ninputs,
	  const struct timespec *fence)
{
	struct sb_walk_filter f = {.inputs = inputs, .ninputs = ninputs, .fence = fence};
	char rel[SUP_NAME_MAX + 2];
	int budget = SB_WALK_ENTRIES;
	int wfd = open(PLAN_WORKSPACE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct sup_msg m;

	sb_send_display();
	rel[0] = '\0';
	if (wfd >= 0) {
		sb_walk(wfd, rel, 0, 0, &budget, &f);
		close(wfd);
	}
	memset(&m, 0, sizeof(m));
	m.type = SUP_EXIT;
	m.status = r->status;
	m.reason = r->reason;
	m.cpu_ns = r->cpu_ns;
	m.wall_ns = r->end_ns - r->start_ns;
	m.step = r->zygote;
	m.err = r->zygote_err;
	(void)send(sandbox_lifeline(), &m, sizeof(m), MSG_NOSIGNAL);
	/*
	 * Our last word. Asleep until the frontend closes the lifeline on it
	 * (or SB_LAST_WORD_MS), we leave this core to the frontend, which
	 * answers the run now: our exit (our copy of the spawner's memory,
	 * the namespaces' teardown) comes after the answer, not before it
	 * (docs/performance.md, "Where the time of a pre-started run goes").
	 */
	{
		struct pollfd p = {.fd = sandbox_lifeline(), .events = POLLIN};

		(void)poll(&p, 1, SB_LAST_WORD_MS);
	}
}

/*
 * A pre-starting sandbox (docs/design-interpreters.md §1): in phase one, the
 * pre-start plan's mounts and its interpreter, started as sb_start_code
 * starts any code, which blocks on its FIFO; then the run (a plain prepared
 * sandbox's phase two, but the interpreter's exec is done), its limits
 * lowered, its clock started, its code fed.
 */
static void
sb_prestart(struct sb_run *r, struct sb_input *inputs, uint32_t *ret_ninputs)
{
	static struct plan_view pv0; /* the pre-start plan, as pv */
	struct plan_view *pv = r->pv;

	sb_map_plan(r->ctx.plan_fd, &pv0);
	r->ctx.plan_fd = -1;
	sandbox_fs_prestart(&pv0);
	SB_CHECK(sethostname(pv0.hostname, strlen(pv0.hostname)), SANDBOX_STEP_HOSTNAME);
	r->pv = &pv0;
	sb_start_code(r);
	r->pv = pv;

	sandbox_prestart_wait(sandbox_ctl(), r->pidfd);
	sb_take_run(&r->ctx, r->pv);
	sandbox_prestart_handoff(&pv0, pv, r->ctx.rootspec, r->ctx.layout, r->pid, r->pidfd);
	*ret_ninputs = sb_record_inputs(pv, inputs);
	sb_run_baseline(r);
	sandbox_prestart_feed(pv, r->pid, r->pidfd,
			      r->start_ns + pv->hdr->limits[PROTO_LIMIT_WALL_MS] * 1000000ULL);
}

__attribute__((noreturn)) void
sandbox_main(const struct sandbox_ctx *ctx)
{
	static struct plan_view pv; /* the child's own copy (sandbox_fail.c) */
	/* Static like pv: PLAN_FILES_MAX rows do not belong on the stack. */
	static struct sb_input inputs[PLAN_FILES_MAX];
	struct timespec fence = {0, 0};
	struct sb_run r;
	uint32_t ninputs;
	bool session = false;

	sb_start_up(ctx);

	/* Phase one: what does not depend on a request, done ahead. */
	sandbox_fs_base(ctx->layout, ctx->rootspec);
	sb_loopback();

	memset(&r, 0, sizeof(r));
	r.ctx = *ctx;
	r.pv = &pv;
	r.pidfd = -1;
	r.reason = SUP_REASON_EXITED;
	if (sandbox_prestarted()) {
		sb_prestart(&r, inputs, &ninputs);
	} else {
		sb_take_run(&r.ctx, &pv);

		/* Phase two. */
		sandbox_fs_run(&pv, ctx->rootspec, r.ctx.workspace_fd);
		if ((pv.hdr->flags & PLAN_F_TOOLS) != 0)
			sandbox_tools_setup(sandbox_lifeline());
		SB_CHECK(sethostname(pv.hostname, strlen(pv.hostname)), SANDBOX_STEP_HOSTNAME);
		if (pv.hdr->flags & PLAN_F_EGRESS)
			sandbox_egress_listen(sandbox_lifeline(), (uint16_t)pv.hdr->egress_port);
		ninputs = sb_record_inputs(&pv, inputs);
		/* A session's workspace holds earlier runs' files: only what this run
		 * creates or changes is its artifact. */
		session = (pv.hdr->flags & PLAN_F_SESSION) != 0;
		if (session)
			sb_time_fence(&fence);
		/* The first cell's files: those changed after the same fence
		 * (waited for: nothing of the tick before it is seen). */
		r.cell_fence.lo = r.cell_fence.hi = fence;

		if (pv.hdr->flags & PLAN_F_CELLS)
			r.ctx.cell_fd = sandbox_cells_channel(sandbox_lifeline());
		sb_start_run(&r);
	}
	if (pv.hdr->flags & PLAN_F_CELLS) {
		close(r.ctx.cell_fd);
		sandbox_supervise_cells(&r);
	} else {
		sandbox_supervise(&r);
	}
	sandbox_end(&r);
	/* The interpreter's figures are its whole life; the cell it ended in
	 * gets its own, from its CELLS_SUP_BEGIN, once everything is reaped. */
	if (r.cell != 0)
		sandbox_cells_end(sandbox_lifeline(), SUP_CELL_LOST, r.cell, r.reason, false,
				  sandbox_run_cpu_ns(&r.ctx, r.cell_cpu0), r.end_ns - r.cell_t0,
				  r.ctx.peak_fd);
	sb_report(&r, inputs, ninputs, session ? &fence : NULL);
	_exit(0);
}
