/*
 * cgroup.c: the resource-control seam (cgroup.h): per-run cgroups on the v2
 * hierarchy, on the v1 memory hierarchy, or none (rlimits). The v1 back end
 * and the fallback to rlimits are cgroup1.c; reading a run's figures and the
 * kinds' names, which the supervisor and the frontend need too,
 * ipc/cgroup_read.c.
 */
#include "cgroup.h"
#include "cgroup_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"

/* A keeper's memory.max above its workspace: the process and its page tables. */
#define CGROUP_KEEPER_SLACK ((uint64_t)64 << 20)
/* A keeper is one process. */
#define CGROUP_KEEPER_PIDS "8"

/* snprintf into a path buffer; -ENAMETOOLONG when it does not fit. */
__attribute__((format(printf, 3, 4))) int
cgroup_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Write a short string to a control file, file relative to dfd (AT_FDCWD:
 * a path). */
int
cgroup_write_in(int dfd, const char *file, const char *val)
{
	int fd = openat(dfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		r = -errno;
	close(fd);
	return r;
}

/* Write val to dir/file. */
int
cgroup_write_at(const char *dir, const char *file, const char *val)
{
	char path[700];
	int r = cgroup_path(path, sizeof(path), "%s/%s", dir, file);

	return r < 0 ? r : cgroup_write_in(AT_FDCWD, path, val);
}

/* Write a limit to file under dfd: the number, or "max" for 0 (no limit). */
static int
cgroup2_write_max(int dfd, const char *file, uint64_t value)
{
	char val[24];

	if (value != 0)
		snprintf(val, sizeof(val), "%" PRIu64, value);
	else
		snprintf(val, sizeof(val), "max");
	return cgroup_write_in(dfd, file, val);
}

/* Read a control file into buf, file relative to dfd (AT_FDCWD: a path). */
static int
cgroup_read_in(int dfd, const char *file, char *buf, size_t len)
{
	int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Read dir/file into buf. */
int
cgroup_read_at(const char *dir, const char *file, char *buf, size_t len)
{
	char path[700];
	int r = cgroup_path(path, sizeof(path), "%s/%s", dir, file);

	return r < 0 ? r : cgroup_read_in(AT_FDCWD, path, buf, len);
}

/* Does the space-separated list hold word? */
static bool
cgroup_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

/* Our path in the hierarchy whose controller list matches (v1: "memory",
 * v2: the "0::" line), from a /proc/self/cgroup file. */
int
cgroup_self_path(const char *self, bool v2, char *ret, size_t len)
{
	char line[1024];
	FILE *f = fopen(self, "re");
	int r = -ENOENT;

	ret[0] = '\0';
	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *ctl = strchr(line, ':'), *path;

		if (ctl == NULL || (path = strchr(ctl + 1, ':')) == NULL)
			continue;
		*path++ = '\0';
		*ctl = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (v2 ? strcmp(line, "0") == 0 && ctl[1] == '\0'
		       : cgroup_has_word(ctl + 1, "memory") || strstr(ctl + 1, ",memory") != NULL ||
				    strncmp(ctl + 1, "memory,", 7) == 0) {
			r = cgroup_path(ret, len, "%s", strcmp(path, "/") == 0 ? "" : path);
			break;
		}
	}
	fclose(f);
	return r;
}

/*
 * Open a run's node directory (base/u<uid>) as a directory fd, for the calls
 * that follow to open its control files relative to it: one lookup of the
 * full path per call instead of one per file (each walks the 5 to 8
 * components from /sys/fs/cgroup: about 1.5 us of a 4 to 5 us open, measured
 * on cgroupfs v1; a run opens some twenty files). O_PATH: nothing is read or
 * written through it; O_CLOEXEC, and closed before the call returns, so no
 * sandbox cloned from the spawner inherits it. The names opened relative to
 * it are constants of this file: nothing a run names is ever a path here.
 */
static int
cgroup_node_open(const struct cgroup *cg, uint32_t uid, int *ret_fd)
{
	char node[600];
	int fd, r;

	*ret_fd = -1;
	if ((r = cgroup_path(node, sizeof(node), "%s/u%" PRIu32, cg->base, uid)) < 0)
		return r;
	if ((fd = open(node, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno != 0 ? -errno : -EIO;
	*ret_fd = fd;
	return 0;
}

/* ---- v2 -------------------------------------------------------------------- */

/*
 * mkdir a cgroup with fsgid gid (0: ours). cgroupfs gives a new directory
 * and its files the creator's fsuid and fsgid: the group is how a run's
 * supervisor (host gid = the slot's first uid) gets the right to clone the
 * code into its cgroup, and nothing else (cgroup.procs alone is made group
 * writable; the limits stay root's, read-only to the group).
 */
static int
cgroup2_mkdir(const char *path, uint32_t gid)
{
	int prev = 0, r = 0;

	if (gid != 0)
		prev = setfsgid((gid_t)gid);
	if (mkdir(path, 0755) < 0)
		r = -errno;
	if (gid != 0)
		(void)setfsgid((gid_t)prev);
	return r;
}

/*
 * rmdir, retried for up to 100 ms while the last tasks finish exiting
 * (wait: they were killed, or ended with their pid namespace's init): a
 * task the kernel has not released yet still holds the cgroup (EBUSY).
 */
int
cgroup_rmdir(const char *path, bool wait)
{
	int tries = wait ? 50 : 1;

	while (tries-- > 0) {
		struct timespec ts = {0, 2000000};

		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || tries == 0)
			break;
		nanosleep(&ts, NULL);
	}
	return -errno;
}

/*
 * Remove a run's or keeper's cgroup: kill everything in it in one write
 * (cgroup.kill, kernel 5.14+), then the leaves, then the node.
 */
static int
cgroup2_remove(const char *dir)
{
	static const char *const leaves[] = {"code", "sup"};
	bool killed = cgroup_write_at(dir, "cgroup.kill", "1") == 0;
	size_t i;
	int r;

	for (i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		char path[700];

		if ((r = cgroup_path(path, sizeof(path), "%s/%s", dir, leaves[i])) < 0)
			return r;
		if ((r = cgroup_rmdir(path, killed)) < 0)
			return r;
	}
	return cgroup_rmdir(dir, killed);
}

/* The controllers we enable for children. */
static const char *
cgroup2_controllers(const struct cgroup *cg)
{
	return cg->cpu ? "+memory +pids +cpu" : "+memory +pids";
}

/* Does dir/cgroup.procs hold any process but us? */
static bool
cgroup2_others(const char *dir)
{
	char buf[4096], *p = buf;
	long self = (long)getpid();

	if (cgroup_read_at(dir, "cgroup.procs", buf, sizeof(buf)) < 0)
		return true;
	while (*p != '\0') {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (pid != self)
			return true;
		p = end + strspn(end, "\n");
	}
	return false;
}

/*
 * Set the v2 back end up, or say in why why not. S is our own cgroup when
 * we are alone in it (a systemd service with Delegate=yes, a scope of our
 * own), or a new "airlockd" child when we are in the root cgroup.
 */
static int
cgroup2_init(struct cgroup *cg, const char *self, char *why, size_t whylen)
{
	char own[400], svc[520], leaf[600], ctl[512], pid[32];
	int r;

	if (cgroup_read_at(cg->root, "cgroup.controllers", ctl, sizeof(ctl)) < 0) {
		snprintf(why, whylen, "no cgroup v2 hierarchy at %s", cg->root);
		return 0;
	}
	if (cgroup_self_path(self, true, own, sizeof(own)) < 0) {
		snprintf(why, whylen, "not in the cgroup v2 hierarchy (%s)", self);
		return 0;
	}
	if (own[0] == '\0') {
		/* The root cgroup may hold processes and delegate: a child of ours. */
		if ((r = cgroup_path(svc, sizeof(svc), "%s/airlockd", cg->root)) < 0)
			return r;
	} else {
		if ((r = cgroup_path(svc, sizeof(svc), "%s%s", cg->root, own)) < 0)
			return r;
		if (cgroup_read_at(svc, "cgroup.controllers", ctl, sizeof(ctl)) < 0)
			ctl[0] = '\0';
		/* v2 forbids processes in a node that delegates: every process
		 * here must be ours to move into the leaf. */
		if (cgroup2_others(svc)) {
			snprintf(why, whylen,
				 "cgroup v2: %s holds other processes (not a cgroup of airlockd's "
				 "own; start it as a service with Delegate=yes)",
				 svc);
			return 0;
		}
	}
	if (!cgroup_has_word(ctl, "memory") || !cgroup_has_word(ctl, "pids")) {
		snprintf(why, whylen,
			 "cgroup v2: the memory and pids controllers are not delegated to %s "
			 "(Delegate=yes)",
			 svc);
		return 0;
	}
	cg->cpu = cgroup_has_word(ctl, "cpu");
	if (own[0] == '\0' && mkdir(svc, 0755) < 0 && errno != EEXIST)
		goto fail;
	/* Into the leaf first: the node may enable controllers only when empty.
	 * The caller forks the frontend after this: both halves are in it. */
	if ((r = cgroup_path(leaf, sizeof(leaf), "%s/daemon", svc)) < 0)
		return r;
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		goto fail;
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if ((r = cgroup_write_at(leaf, "cgroup.procs", pid)) < 0) {
		errno = -r;
		goto fail;
	}
	/*
	 * The root's controllers after we left it: the root of a container's
	 * cgroup namespace is not the host's root cgroup, and refuses them
	 * (EBUSY) while it holds a process, airlockd itself (issue 34). The
	 * host's root cgroup takes them either way.
	 */
	if (own[0] == '\0' && (r = cgroup_write_at(cg->root, "cgroup.subtree_control",
						   cgroup2_controllers(cg))) < 0) {
		errno = -r;
		goto fail;
	}
	if ((r = cgroup_write_at(svc, "cgroup.subtree_control", cgroup2_controllers(cg))) < 0 &&
	    cg->cpu) {
		/* The cpu controller refuses while a realtime task is below:
		 * memory and pids are what matter most. */
		cg->cpu = false;
		r = cgroup_write_at(svc, "cgroup.subtree_control", cgroup2_controllers(cg));
	}
	if (r < 0) {
		errno = -r;
		goto fail;
	}
	if ((r = cgroup_path(cg->base, sizeof(cg->base), "%s/runs", svc)) < 0)
		return r;
	if (mkdir(cg->base, 0755) < 0 && errno != EEXIST)
		goto fail;
	if ((r = cgroup_write_at(cg->base, "cgroup.subtree_control", cgroup2_controllers(cg))) <
	    0) {
		errno = -r;
		goto fail;
	}
	cg->kind = CGROUP_V2;
	snprintf(cg->why, sizeof(cg->why),
		 "cgroup2 at %s: memory, processes%s per run (daemon in daemon/, runs in runs/)",
		 svc, cg->cpu ? ", cpu" : " (no cpu controller: cpu.max unused)");
	return 0;
fail:
	snprintf(why, whylen, "cgroup v2 at %s: %s", svc, strerror(errno));
	cg->base[0] = '\0';
	cg->cpu = false;
	return 0;
}

/* Make a keeper's or run's node afresh: one left by a run whose finish
 * failed is removed first (its oom count never resets and would blame the
 * new run). */
static int
cgroup2_mknode(const char *path, uint32_t gid)
{
	int r = cgroup2_mkdir(path, gid);

	if (r == -EEXIST) {
		if ((r = cgroup2_remove(path)) < 0)
			return r;
		r = cgroup2_mkdir(path, gid);
	}
	return r;
}

/* Make the run's node and its two leaves, with the memory limit; keep: a
 * whole one left by the session's earlier runs is reused as it is. The
 * files are written relative to the node's directory fd (cgroup_node_open),
 * left open in *ret_nfd for the caller's reads. */
static int
cgroup2_run_create(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes, bool keep,
		   int *ret_nfd)
{
	char node[600], code[640];
	int nfd = -1, r;

	if ((r = cgroup_path(node, sizeof(node), "%s/u%" PRIu32, cg->base, uid)) < 0 ||
	    (r = cgroup_path(code, sizeof(code), "%s/code", node)) < 0)
		return r;
	if (keep && access(code, F_OK) == 0)
		return cgroup_node_open(cg, uid, ret_nfd);
	if ((r = cgroup2_mknode(node, uid)) < 0)
		return r;
	if ((r = cgroup_node_open(cg, uid, &nfd)) < 0)
		goto fail;
	if ((r = cgroup_write_in(nfd, "cgroup.subtree_control", cgroup2_controllers(cg))) < 0)
		goto fail;
	{
		char sup[640];

		if ((r = cgroup_path(sup, sizeof(sup), "%s/sup", node)) < 0 ||
		    (r = cgroup2_mkdir(sup, 0)) < 0)
			goto fail;
	}
	if ((r = cgroup2_mkdir(code, uid)) < 0)
		goto fail;
	/*
	 * The supervisor clones the code into code/ with its own credentials:
	 * the kernel wants write access to code/cgroup.procs and to that of
	 * the common ancestor (the node). Group-writable, group = the run's
	 * host gid; the code itself runs as another uid and gid and never
	 * sees cgroupfs (no /sys in the sandbox).
	 */
	if (fchmodat(nfd, "cgroup.procs", 0664, 0) < 0 ||
	    fchmodat(nfd, "code/cgroup.procs", 0664, 0) < 0) {
		r = -errno;
		goto fail;
	}
	/* One oom kill takes the whole code cgroup: no run goes on with a
	 * part of its processes gone. The supervisor is outside it. */
	if ((r = cgroup_write_in(nfd, "code/memory.oom.group", "1")) < 0)
		goto fail;
	/* No swap: the limit is memory, not memory plus swap. Absent without
	 * swap accounting, where there is nothing to limit. */
	if ((r = cgroup_write_in(nfd, "code/memory.swap.max", "0")) < 0 && r != -ENOENT)
		goto fail;
	if ((r = cgroup2_write_max(nfd, "code/memory.max", memory_bytes)) < 0)
		goto fail;
	*ret_nfd = nfd;
	return 0;
fail:
	fd_close(nfd);
	(void)cgroup2_remove(node);
	return r;
}

/* Set the code cgroup's limits (memory_bytes: with the baseline's usage);
 * nfd: the node's directory. */
static int
cgroup2_run_set_limit(const struct cgroup *cg, int nfd, uint64_t memory_bytes, uint32_t processes,
		      uint32_t cpu_percent)
{
	char val[48];
	int r;

	if ((r = cgroup2_write_max(nfd, "code/memory.max", memory_bytes)) < 0)
		return r;
	/* Above the kernel's PID_MAX_LIMIT (4M) pids.max takes only "max". */
	if ((r = cgroup2_write_max(nfd, "code/pids.max", processes <= 4194304 ? processes : 0)) < 0)
		return r;
	if (cg->cpu) {
		/* A share of one CPU per 100 ms period; the kernel's floor is 1 ms. */
		if (cpu_percent != 0)
			snprintf(val, sizeof(val), "%" PRIu64 " 100000",
				 (uint64_t)cpu_percent * 1000);
		else
			snprintf(val, sizeof(val), "max 100000");
		if ((r = cgroup_write_in(nfd, "code/cpu.max", val)) < 0)
			return r;
	}
	return 0;
}

/* openat(dfd, file) with flags (and O_CLOEXEC), into *fd. */
int
cgroup_open_in(int dfd, const char *file, int flags, int *fd)
{
	*fd = openat(dfd, file, flags | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* open(dir/file) with flags, into *fd. */
int
cgroup_open_at(const char *dir, const char *file, int flags, int *fd)
{
	char path[700];
	int r = cgroup_path(path, sizeof(path), "%s%s%s", dir, file[0] ? "/" : "", file);

	if (r < 0)
		return r;
	*fd = open(path, flags | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

int
cgroup_init(struct cgroup *cg, const char *root, const char *self, enum cgroup_kind want)
{
	char why2[300] = "not tried";
	int r;

	memset(cg, 0, sizeof(*cg));
	cg->into = true;
	if ((r = cgroup_path(cg->root, sizeof(cg->root), "%s", root)) < 0)
		return r;
	if (want == CGROUP_AUTO || want == CGROUP_V2) {
		if ((r = cgroup2_init(cg, self, why2, sizeof(why2))) < 0)
			return r;
		if (cg->kind == CGROUP_V2)
			return 0;
	}
	return cgroup1_init_fallback(cg, self, want, why2);
}

void
cgroup_sweep(const struct cgroup *cg, uint32_t uid_lo, uint32_t uid_hi)
{
	if (cg->kind == CGROUP_V2) {
		DIR *dir = opendir(cg->base);
		struct dirent *de;

		if (dir == NULL)
			return;
		while ((de = readdir(dir)) != NULL) {
			char path[800], *end;
			unsigned long long u;

			if ((de->d_name[0] != 'u' && de->d_name[0] != 'k') || de->d_name[1] < '0' ||
			    de->d_name[1] > '9')
				continue;
			/* Only our own range: another daemon's runs may share the
			 * parent (two started by hand in one cgroup). */
			errno = 0;
			u = strtoull(de->d_name + 1, &end, 10);
			if (errno != 0 || *end != '\0' || u < uid_lo || u >= uid_hi)
				continue;
			if (cgroup_path(path, sizeof(path), "%s/%s", cg->base, de->d_name) < 0)
				continue;
			(void)cgroup2_remove(path);
		}
		closedir(dir);
		return;
	}
	if (cg->kind == CGROUP_V1)
		cgroup1_sweep(cg, uid_lo, uid_hi);
}

/* The files of a run's figures, relative to its node: memory in use, the
 * peak, the oom counts. */
struct cgroup_files {
	const char *stat, *shmem, *peak, *oom;
};

static struct cgroup_files
cgroup_files(const struct cgroup *cg)
{
	if (cg->kind == CGROUP_V2)
		/* memory.peak: kernel 5.19+; before it, no peak (0). */
		return (struct cgroup_files){"code/memory.stat", "shmem", "code/memory.peak",
					     "code/memory.events"};
	return (struct cgroup_files){"memory.stat", "total_shmem", "memory.max_usage_in_bytes",
				     "memory.oom_control"};
}

/*
 * Read a kept or fresh run cgroup's baseline (nfd: its directory). The
 * memory is the cgroup's shmem, at most ws_bytes (the session's workspace
 * size), not all it holds: what earlier runs may leave that this run
 * cannot reclaim is the workspace's tmpfs pages (no swap). Everything else
 * they leave is reclaimable (file cache of what they read, from /usr say)
 * and this run's allocations push it out; counted, it raised each next
 * run's limit by what the last one read, without bound (review of
 * 0f20866). A run so gets at most its limit plus the workspace's size.
 */
static int
cgroup_base_read(const struct cgroup *cg, int nfd, bool keep, uint64_t ws_bytes,
		 struct cgroup_run_base *ret)
{
	struct cgroup_files files = cgroup_files(cg);
	char buf[8192];
	int r;

	ret->kept = keep;
	ret->usage = ret->ooms = 0;
	if ((r = cgroup_read_in(nfd, files.stat, buf, sizeof(buf))) < 0)
		return r;
	ret->usage = cgroup_parse_key(buf, files.shmem);
	if (ret->usage > ws_bytes)
		ret->usage = ws_bytes;
	if ((r = cgroup_read_in(nfd, files.oom, buf, sizeof(buf))) < 0)
		return r;
	ret->ooms = cgroup_oom_count(buf);
	return 0;
}

/* memory_bytes on top of the workspace pages charged before the run (0
 * stays "none"). */
static uint64_t
cgroup_run_memory(const struct cgroup_run_base *base, uint64_t memory_bytes)
{
	if (base == NULL || memory_bytes == 0)
		return memory_bytes;
	return memory_bytes > UINT64_MAX - base->usage ? UINT64_MAX : memory_bytes + base->usage;
}

/*
 * A kept cgroup's peak file (nfd: its directory), open and reset to the
 * usage now, or -1. Any write resets it: v1 memory.max_usage_in_bytes for
 * the whole cgroup; v2 code/memory.peak, from 6.12, for reads through the
 * fds written (not the cgroup's own peak). So a session's supervisor,
 * which writes its own fd before each cell, resets ours too (v2 seen in
 * the VM on 6.12): the interpreter's run's figure, for the audit line
 * only, counts from its last cell. v2 before 6.12: no write handler, mode
 * 0444, and the open fails for us (no CAP_DAC_OVERRIDE; with it, the write
 * fails, EINVAL): -1, and a session run's peak is not measured.
 */
static int
cgroup_peak_reset_open(const struct cgroup *cg, int nfd)
{
	int fd = openat(nfd, cgroup_files(cg).peak, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (pwrite(fd, "0", 1, 0) != 1)
		return fd_close(fd);
	return fd;
}

int
cgroup_run_create(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes, bool keep,
		  uint64_t ws_bytes, struct cgroup_run_base *ret_base)
{
	struct cgroup_run_base base = {.kept = keep, .peak_fd = -1};
	char path[600];
	int nfd = -1, r;

	if (cg->kind == CGROUP_NONE)
		goto out;
	if ((r = cgroup_path(path, sizeof(path), "%s/u%" PRIu32, cg->base, uid)) < 0)
		return r;
	if (cg->kind == CGROUP_V2) {
		if ((r = cgroup2_run_create(cg, uid, memory_bytes, keep, &nfd)) < 0)
			return r;
	} else if ((r = cgroup1_run_mkdir(path, keep)) < 0) {
		return r;
	} else if ((r = cgroup_node_open(cg, uid, &nfd)) < 0) {
		goto fail;
	}
	/* Taken now, before the sandbox is cloned into it: nothing of this
	 * run is charged or counted yet. */
	if ((r = cgroup_base_read(cg, nfd, keep, keep ? ws_bytes : 0, &base)) < 0)
		goto fail;
	if (cg->kind == CGROUP_V1 &&
	    (r = cgroup1_set_memory(nfd, cgroup_run_memory(&base, memory_bytes))) < 0)
		goto fail;
	/* Its runs share its peak: reset now, this run's is what it reaches. */
	if (keep && ret_base != NULL)
		base.peak_fd = cgroup_peak_reset_open(cg, nfd);
	nfd = fd_close(nfd);
out:
	if (ret_base != NULL)
		*ret_base = base;
	return 0;
fail:
	nfd = fd_close(nfd);
	if (!keep)
		(void)(cg->kind == CGROUP_V2 ? cgroup2_remove(path) : rmdir(path));
	return r;
}

int
cgroup_run_set_limit(const struct cgroup *cg, uint32_t uid, const struct cgroup_run_base *base,
		     uint64_t memory_bytes, uint32_t processes, uint32_t cpu_percent)
{
	int nfd, r;

	memory_bytes = cgroup_run_memory(base, memory_bytes);
	if (cg->kind == CGROUP_NONE)
		return 0;
	if ((r = cgroup_node_open(cg, uid, &nfd)) < 0)
		return r;
	if (cg->kind == CGROUP_V2)
		r = cgroup2_run_set_limit(cg, nfd, memory_bytes, processes, cpu_percent);
	else
		r = cgroup1_set_memory(nfd, memory_bytes);
	close(nfd);
	return r;
}

void
cgroup_run_fds_close(struct cgroup_run_fds *fds)
{
	int *all[5];
	size_t i;

	if (fds == NULL)
		return;
	all[0] = &fds->into;
	all[1] = &fds->self;
	all[2] = &fds->code;
	all[3] = &fds->cpu_stat;
	all[4] = &fds->pids_events;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		*all[i] = fd_close(*all[i]);
	}
}

int
cgroup_run_open(const struct cgroup *cg, uint32_t uid, struct cgroup_run_fds *ret)
{
	struct cgroup_run_fds fds = {-1, -1, -1, -1, -1};
	int nfd, r = 0;

	if (cg->kind == CGROUP_NONE) {
		*ret = fds;
		return 0;
	}
	if ((r = cgroup_node_open(cg, uid, &nfd)) < 0)
		return r;
	/*
	 * Opened here, as root: the kernel checks a migration through a
	 * cgroup.procs or tasks fd against the opener's credentials, so the
	 * sandbox needs no right of its own for it.
	 */
	if (cg->kind == CGROUP_V1) {
		r = cgroup_open_in(nfd, "tasks", O_WRONLY, &fds.self);
	} else if ((r = cgroup_open_in(nfd, "sup", O_RDONLY | O_DIRECTORY, &fds.into)) == 0 &&
		   (r = cgroup_open_in(nfd, "sup/cgroup.procs", O_WRONLY, &fds.self)) == 0 &&
		   (r = cgroup_open_in(nfd, "code", O_RDONLY | O_DIRECTORY, &fds.code)) == 0 &&
		   (r = cgroup_open_in(nfd, "code/cpu.stat", O_RDONLY, &fds.cpu_stat)) == 0) {
		r = cgroup_open_in(nfd, "code/pids.events", O_RDONLY, &fds.pids_events);
	}
	close(nfd);
	if (r < 0) {
		cgroup_run_fds_close(&fds);
		return r;
	}
	*ret = fds;
	return 0;
}

int
cgroup_run_open_stats(const struct cgroup *cg, uint32_t uid, int ret_fds[2])
{
	const char *files[2];
	int fds[2] = {-1, -1}, i, nfd, r;

	if (cg->kind == CGROUP_NONE) {
		ret_fds[0] = ret_fds[1] = -1;
		return 0;
	}
	files[0] = cgroup_files(cg).peak;
	files[1] = cgroup_files(cg).oom;
	if ((r = cgroup_node_open(cg, uid, &nfd)) < 0)
		return r;
	for (i = 0; i < 2; i++) {
		r = cgroup_open_in(nfd, files[i], O_RDONLY, &fds[i]);
		if (r < 0) {
			if (i == 1)
				close(fds[0]);
			close(nfd);
			return r;
		}
	}
	close(nfd);
	ret_fds[0] = fds[0];
	ret_fds[1] = fds[1];
	return 0;
}

int
cgroup_run_open_peak(const struct cgroup *cg, uint32_t uid, int *ret_fd)
{
	const char *file = cgroup_files(cg).peak;
	int fd = -1, nfd, r;

	if (cg->kind == CGROUP_NONE) {
		*ret_fd = -1;
		return 0;
	}
	if ((r = cgroup_node_open(cg, uid, &nfd)) < 0)
		return r;
	r = cgroup_open_in(nfd, file, O_RDWR, &fd);
	/* memory.peak before 6.12 has no write handler: mode 0444. */
	if (r == -EACCES && cg->kind == CGROUP_V2)
		r = cgroup_open_in(nfd, file, O_RDONLY, &fd);
	close(nfd);
	if (r < 0)
		return r;
	*ret_fd = fd;
	return 0;
}

int
cgroup_run_finish(const struct cgroup *cg, uint32_t uid, struct cgroup_run_base *base, bool keep,
		  uint64_t *ret_peak, bool *ret_oom)
{
	struct cgroup_files files = cgroup_files(cg);
	char node[600], pbuf[64], obuf[1024];
	uint64_t peak = 0;
	bool oom = false, have_peak, have_oom = false;
	int nfd, r;

	/* A kept cgroup's peak only through the fd reset before the run;
	 * closed here before any return (the spawner is long-lived), and -1
	 * left in the slot so nothing closes the number again. */
	have_peak = base != NULL && base->peak_fd >= 0 &&
		    cgroup_pread(base->peak_fd, pbuf, sizeof(pbuf)) == 0;
	if (base != NULL)
		base->peak_fd = fd_close(base->peak_fd);
	if (cg->kind == CGROUP_NONE) {
		*ret_peak = 0;
		*ret_oom = false;
		return 0;
	}
	if ((r = cgroup_path(node, sizeof(node), "%s/u%" PRIu32, cg->base, uid)) < 0)
		return r;
	/* A node that cannot be opened has no files to read: no figures. */
	if (cgroup_node_open(cg, uid, &nfd) == 0) {
		if (base == NULL || !base->kept)
			have_peak = cgroup_read_in(nfd, files.peak, pbuf, sizeof(pbuf)) == 0;
		have_oom = cgroup_read_in(nfd, files.oom, obuf, sizeof(obuf)) == 0;
		close(nfd);
	} else if (base == NULL || !base->kept) {
		have_peak = false;
	}
	cgroup_parse_stats(have_peak ? pbuf : NULL, have_oom ? obuf : NULL,
			   base != NULL ? base->ooms : 0, &peak, &oom);
	/* The figures are the run's whether or not its cgroup goes: a removal
	 * that fails is reported, never at the price of its outcome. */
	*ret_peak = peak;
	*ret_oom = oom;
	/* Kept, the session's next run comes into it. Nothing of this run is
	 * left there: its supervisor was the init of the run's pid namespace,
	 * and the kernel ends every process of a namespace before its init
	 * can be reaped. No cgroup.kill: on Debian 12's 6.1 the sandboxes
	 * cloned into the cgroup after one were killed too (seen in the VM,
	 * tests/host/acceptance.sh). */
	if (keep)
		return 0;
	if (cg->kind == CGROUP_V2)
		return cgroup2_remove(node);
	return cgroup_rmdir(node, true);
}

int
cgroup_run_remove(const struct cgroup *cg, uint32_t uid)
{
	char node[600];
	int r;

	if (cg->kind == CGROUP_NONE)
		return 0;
	if ((r = cgroup_path(node, sizeof(node), "%s/u%" PRIu32, cg->base, uid)) < 0)
		return r;
	if (access(node, F_OK) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (cg->kind == CGROUP_V2)
		return cgroup2_remove(node);
	return rmdir(node) < 0 && errno != ENOENT ? -errno : 0;
}

int
cgroup_keeper_create(const struct cgroup *cg, uint32_t uid, uint64_t workspace_bytes)
{
	char node[600], val[32];
	int r;

	if (cg->kind != CGROUP_V2)
		return 0;
	if ((r = cgroup_path(node, sizeof(node), "%s/k%" PRIu32, cg->base, uid)) < 0)
		return r;
	if ((r = cgroup2_mknode(node, 0)) < 0)
		return r;
	/* The workspace tmpfs is capped by its size; this caps the rest. */
	snprintf(val, sizeof(val), "%" PRIu64,
		 workspace_bytes > UINT64_MAX - CGROUP_KEEPER_SLACK
			 ? UINT64_MAX
			 : (uint64_t)(workspace_bytes + CGROUP_KEEPER_SLACK));
	if ((r = cgroup_write_at(node, "memory.max", val)) < 0 ||
	    ((r = cgroup_write_at(node, "memory.swap.max", "0")) < 0 && r != -ENOENT) ||
	    (r = cgroup_write_at(node, "pids.max", CGROUP_KEEPER_PIDS)) < 0) {
		(void)cgroup2_remove(node);
		return r;
	}
	return 0;
}

int
cgroup_keeper_open(const struct cgroup *cg, uint32_t uid, int *ret_fd)
{
	char node[600];
	int fd, r;

	if (cg->kind != CGROUP_V2) {
		*ret_fd = -1;
		return 0;
	}
	if ((r = cgroup_path(node, sizeof(node), "%s/k%" PRIu32, cg->base, uid)) < 0)
		return r;
	if ((r = cgroup_open_at(node, "", O_RDONLY | O_DIRECTORY, &fd)) < 0)
		return r;
	*ret_fd = fd;
	return 0;
}

int
cgroup_keeper_finish(const struct cgroup *cg, uint32_t uid)
{
	char node[600];
	int r;

	if (cg->kind != CGROUP_V2)
		return 0;
	if ((r = cgroup_path(node, sizeof(node), "%s/k%" PRIu32, cg->base, uid)) < 0)
		return r;
	return cgroup2_remove(node);
}
