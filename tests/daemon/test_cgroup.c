/*
 * test_cgroup.c: unit tests of daemon/spawner/cgroup.c's per-run calls on a fake
 * hierarchy: cg->base is a temporary directory, control files are regular
 * files the test makes.
 *
 * Link seams: rmdir() (-Wl,--wrap=rmdir). Every call must be expected by the
 * test (path checked, result queued); with result 0 it removes the directory's
 * files first, as cgroupfs does with control files, then really removes it.
 * mkdir() (-Wl,--wrap=mkdir): when fake_cgroupfs is set, a new directory comes
 * with its control files, as cgroupfs makes them (memsw unless no_memsw).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup.h"

#define UID 100042U
#define UIDDIR "u100042"

int __real_rmdir(const char *path);
int __wrap_rmdir(const char *path);
int __real_mkdir(const char *path, mode_t mode);
int __wrap_mkdir(const char *path, mode_t mode);

static bool fake_cgroupfs, no_memsw, fake_v2, rmdir_auto;
static char killed[64]; /* cgroup.kill of the last directory removed (rmdir_auto) */

/* The control files of a new v1 and of a new v2 cgroup, with their content. */
static const char *const v1_files[][2] = {
	{"memory.limit_in_bytes", ""},
	{"memory.usage_in_bytes", "0\n"},
	{"memory.stat", "cache 0\nshmem 0\ntotal_cache 0\ntotal_shmem 0\n"},
	{"memory.max_usage_in_bytes", ""},
	{"memory.memsw.limit_in_bytes", ""},
	{"memory.oom_control", "oom_kill 0\n"},
	{"cgroup.procs", ""},
	{"tasks", ""},
};
static const char *const v2_files[][2] = {
	{"cgroup.procs", ""},
	{"cgroup.controllers", "cpu memory pids\n"},
	{"cgroup.subtree_control", ""},
	{"cgroup.kill", ""},
	{"memory.max", "max\n"},
	{"memory.swap.max", "max\n"},
	{"memory.oom.group", "0\n"},
	{"memory.current", "0\n"},
	{"memory.stat", "anon 0\nfile 0\nshmem 0\n"},
	{"memory.peak", "0\n"},
	{"memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"},
	{"pids.max", "max\n"},
	{"pids.events", "max 0\n"},
	{"cpu.max", "max 100000\n"},
	{"cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n"},
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * open() (-Wl,--wrap=open64: open under _FILE_OFFSET_BITS=64): when ns_root_busy names a fake root,
 * opening its cgroup.subtree_control for writing fails EBUSY unless our pid is already in its
 * airlockd/daemon leaf, as a non-root cgroup holding a process refuses to enable domain controllers
 * (cgroup v2's rule).
 */
static char ns_root_busy[600];
int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);

int
__wrap_open64(const char *path, int flags, ...)
{
	char p[700], want[32];
	mode_t mode = 0;

	if (flags & O_CREAT) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", ns_root_busy);
	if (ns_root_busy[0] != '\0' && (flags & O_ACCMODE) != O_RDONLY && strcmp(path, p) == 0) {
		char procs[700], got[32] = "";
		int fd;
		ssize_t n;

		snprintf(procs, sizeof(procs), "%s/airlockd/daemon/cgroup.procs", ns_root_busy);
		snprintf(want, sizeof(want), "%ld", (long)getpid());
		fd = __real_open64(procs, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, got, sizeof(got) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0 || strncmp(got, want, strlen(want)) != 0) {
			errno = EBUSY;
			return -1;
		}
	}
	return __real_open64(path, flags, mode);
}

/* mkdir() as cgroupfs would do it: the directory brings its control files. */
int
__wrap_mkdir(const char *path, mode_t mode)
{
	size_t i, n = fake_v2 ? NELEM(v2_files) : NELEM(v1_files);

	if (__real_mkdir(path, mode) < 0)
		return -1;
	for (i = 0; fake_cgroupfs && i < n; i++) {
		const char *name = fake_v2 ? v2_files[i][0] : v1_files[i][0];
		const char *content = fake_v2 ? v2_files[i][1] : v1_files[i][1];
		char p[1024];
		int fd;

		if (no_memsw && strstr(name, "memsw") != NULL)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, name);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
		(void)!write(fd, content, strlen(content));
		close(fd);
	}
	return 0;
}

/* Remove every control file in the directory path (one level). */
static void
empty_dir(const char *path)
{
	char p[1024];
	size_t i;

	for (i = 0; i < NELEM(v1_files); i++) {
		snprintf(p, sizeof(p), "%s/%s", path, v1_files[i][0]);
		(void)unlink(p);
	}
	for (i = 0; i < NELEM(v2_files); i++) {
		snprintf(p, sizeof(p), "%s/%s", path, v2_files[i][0]);
		(void)unlink(p);
	}
}

/* rmdir() as cgroupfs would do it, or the queued errno. With rmdir_auto
 * nothing is expected: cgroupfs behaviour only (a child cgroup: busy). */
int
__wrap_rmdir(const char *path)
{
	int err;

	if (rmdir_auto) {
		char p[1024];
		int fd;
		ssize_t n;

		snprintf(p, sizeof(p), "%s/cgroup.kill", path);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		killed[0] = '\0';
		if (fd >= 0) {
			n = read(fd, killed, sizeof(killed) - 1);
			killed[n > 0 ? n : 0] = '\0';
			close(fd);
		}
		{
			/* A directory with a subdirectory is busy, as in cgroupfs. */
			DIR *d = opendir(path);
			struct dirent *de;
			bool sub = false;

			while (d != NULL && (de = readdir(d)) != NULL)
				if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 &&
				    strcmp(de->d_name, "..") != 0)
					sub = true;
			if (d != NULL)
				closedir(d);
			if (sub) {
				errno = EBUSY;
				return -1;
			}
		}
		empty_dir(path);
		return __real_rmdir(path);
	}
	check_expected_ptr(path);
	err = mock_type(int);
	if (err != 0) {
		errno = err;
		return -1;
	}
	empty_dir(path);
	return __real_rmdir(path);
}

/* cgroup_run_open(), for the v1 tests: the `tasks` fd alone. */
static int
open_self(const struct cgroup *cg, uint32_t uid, int *ret_fd)
{
	struct cgroup_run_fds fds;
	int r = cgroup_run_open(cg, uid, &fds);

	if (r == 0) {
		assert_int_equal(fds.into, -1);
		assert_int_equal(fds.code, -1);
		assert_int_equal(fds.cpu_stat, -1);
		assert_int_equal(fds.pids_events, -1);
		*ret_fd = fds.self;
	}
	return r;
}

struct fixture {
	struct cgroup cg;
	char dir[600]; /* cg.base/UIDDIR */
};

/* Make a fake, enabled hierarchy in a fresh temporary directory. */
static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	fake_cgroupfs = false;
	no_memsw = false;
	fake_v2 = false;
	rmdir_auto = false;
	f->cg.kind = CGROUP_V1;
	strcpy(f->cg.base, "/tmp/airlock-test-cgroup-XXXXXX");
	if (mkdtemp(f->cg.base) == NULL) {
		free(f);
		return -1;
	}
	snprintf(f->dir, sizeof(f->dir), "%s/%s", f->cg.base, UIDDIR);
	*state = f;
	return 0;
}

/* nftw callback: remove one entry, bypassing the seam. */
static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? __real_rmdir(path) : unlink(path);
}

/* Remove the temporary hierarchy. */
static int
teardown(void **state)
{
	struct fixture *f = *state;

	nftw(f->cg.base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Make the run's directory. */
static void
mk_rundir(struct fixture *f)
{
	assert_int_equal(mkdir(f->dir, 0700), 0);
}

/* Create the control file name in the run's directory holding content. */
static void
mk_file(struct fixture *f, const char *name, const char *content)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", f->dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

/* The content of a control file of the run, or NULL when it does not exist. */
static char *
rd_file(struct fixture *f, const char *name)
{
	static char buf[256];
	char p[1024];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", f->dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

/* Does path exist? */
static bool
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Write content to a new or existing file. */
static void
put(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

/* A session's next run: its kept cgroup reused, with the baseline of what
 * is in it (usage, ooms); its limit of 1 MiB set on top of the usage. */
static void
kept_next_run(const struct cgroup *cg, uint32_t uid, uint64_t usage, uint64_t ooms,
	      struct cgroup_run_base *ret_base)
{
	assert_int_equal(cgroup_run_create(cg, uid, 1 << 20, true, 1 << 20, ret_base), 0);
	assert_true(ret_base->kept);
	assert_int_equal(ret_base->usage, usage);
	assert_int_equal(ret_base->ooms, ooms);
	assert_int_equal(cgroup_run_set_limit(cg, uid, ret_base, 1 << 20, 0, 0), 0);
}

/* A session's last run ends with no oom kill of its own and the peak the
 * file it reset (peak_file) shows, read through the fd it kept, which goes;
 * then the session ends: its run cgroup (dir) goes, and a second removal
 * finds nothing to do. */
static void
kept_last_run(const struct cgroup *cg, uint32_t uid, struct cgroup_run_base *base,
	      const char *peak_file, const char *dir)
{
	uint64_t peak = 1;
	bool oom = true;
	int fd = base->peak_fd;

	assert_true(fd >= 0);
	put(peak_file, "3145728\n");
	assert_int_equal(cgroup_run_finish(cg, uid, base, true, &peak, &oom), 0);
	assert_int_equal(peak, 3145728);
	assert_false(oom);
	assert_int_equal(base->peak_fd, -1);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_true(exists(dir));
	if (cg->kind == CGROUP_V1) {
		expect_string(__wrap_rmdir, path, dir);
		will_return(__wrap_rmdir, 0);
	}
	assert_int_equal(cgroup_run_remove(cg, uid), 0);
	assert_false(exists(dir));
	assert_int_equal(cgroup_run_remove(cg, uid), 0);
}

/* ---- create ---- */

/* The memory limit goes to limit_in_bytes and memsw of a new cgroup. */
static void
test_create_writes_limit(void **state)
{
	struct fixture *f = *state;

	struct stat st;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 268435456ULL, false, 0, NULL), 0);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "268435456");
	assert_string_equal(rd_file(f, "memory.memsw.limit_in_bytes"), "268435456");
	assert_int_equal(stat(f->dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
}

/* The whole uint64 range is written in decimal. */
static void
test_create_writes_max_limit(void **state)
{
	struct fixture *f = *state;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, UINT64_MAX, false, 0, NULL), 0);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "18446744073709551615");
}

/* Without swap accounting (no memsw file) create still succeeds. */
static void
test_create_without_memsw(void **state)
{
	struct fixture *f = *state;

	fake_cgroupfs = true;
	no_memsw = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, false, 0, NULL), 0);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "1048576");
	assert_null(rd_file(f, "memory.memsw.limit_in_bytes"));
}

/* A cgroup left by an earlier run is removed and made afresh: its oom_kill
 * count never resets and would blame the new run. */
static void
test_create_replaces_stale(void **state)
{
	struct fixture *f = *state;

	mk_rundir(f);
	mk_file(f, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	fake_cgroupfs = true;
	expect_string(__wrap_rmdir, path, f->dir);
	will_return(__wrap_rmdir, 0);
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, false, 0, NULL), 0);
	assert_string_equal(rd_file(f, "memory.oom_control"), "oom_kill 0\n");
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "1048576");
}

/* A stale cgroup that cannot be removed (tasks in it) refuses the run. */
static void
test_create_stale_busy(void **state)
{
	struct fixture *f = *state;

	mk_rundir(f);
	/* Retried for 100 ms (50 tries) while exiting tasks hold it. */
	expect_string_count(__wrap_rmdir, path, f->dir, 50);
	will_return_count(__wrap_rmdir, EBUSY, 50);
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, false, 0, NULL), -EBUSY);
}

/* A stale cgroup whose last task is still exiting: busy once, then gone. */
static void
test_create_stale_busy_then_free(void **state)
{
	struct fixture *f = *state;

	mk_rundir(f);
	expect_string_count(__wrap_rmdir, path, f->dir, 2);
	will_return(__wrap_rmdir, EBUSY);
	will_return(__wrap_rmdir, 0);
	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, false, 0, NULL), 0);
}

/* A directory made without a cgroup's files (not a memory cgroup): create
 * fails, and takes the directory away again. */
static void
test_create_makes_dir_fails_without_limit(void **state)
{
	struct fixture *f = *state;

	assert_false(exists(f->dir));
	expect_string(__wrap_rmdir, path, f->dir);
	will_return(__wrap_rmdir, 0);
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, false, 0, NULL), -ENOENT);
	assert_false(exists(f->dir));
}

/* v1, a session's cgroup: reused, the limit on top of its usage (memsw
 * too), oom kills counted from the baseline, the peak reset before each
 * run (memory.max_usage_in_bytes written) and read after it; removed at
 * the end. */
static void
test_create_kept(void **state)
{
	struct fixture *f = *state;
	struct cgroup_run_base base;
	char p[700], peak_file[700];
	uint64_t peak = 1;
	bool oom = true;

	fake_cgroupfs = true;
	snprintf(peak_file, sizeof(peak_file), "%s/memory.max_usage_in_bytes", f->dir);
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, true, 1 << 20, &base), 0);
	assert_true(base.kept);
	assert_true(base.peak_fd >= 0);
	assert_int_equal(fcntl(base.peak_fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_string_equal(rd_file(f, "memory.max_usage_in_bytes"), "0");
	/* The first run's peak: what the file shows at its end. */
	put(peak_file, "7340032\n");
	assert_int_equal(cgroup_run_finish(&f->cg, UID, &base, true, &peak, &oom), 0);
	assert_int_equal(peak, 7340032);
	assert_int_equal(base.peak_fd, -1);
	assert_false(oom);
	assert_true(exists(f->dir));
	/* What the first run left: workspace files (shmem), the cache of
	 * files it read (not counted: reclaimable), one oom kill. */
	snprintf(p, sizeof(p), "%s/memory.usage_in_bytes", f->dir);
	assert_int_equal(unlink(p), 0);
	mk_file(f, "memory.usage_in_bytes", "60000000\n");
	snprintf(p, sizeof(p), "%s/memory.stat", f->dir);
	assert_int_equal(unlink(p), 0);
	mk_file(f, "memory.stat",
		"cache 59995904\nrss 0\nshmem 4096\nmapped_file 0\n"
		"hierarchical_memory_limit 1052672\ntotal_cache 59995904\ntotal_rss 0\n"
		"total_shmem 4096\n");
	snprintf(p, sizeof(p), "%s/memory.oom_control", f->dir);
	assert_int_equal(unlink(p), 0);
	mk_file(f, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
	kept_next_run(&f->cg, UID, 4096, 1, &base);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "1052672");
	assert_string_equal(rd_file(f, "memory.memsw.limit_in_bytes"), "1052672");
	/* Reset again: the first run's peak is not the next one's. */
	assert_string_equal(rd_file(f, "memory.max_usage_in_bytes"), "0340032\n");
	kept_last_run(&f->cg, UID, &base, peak_file, f->dir);
}

/* A session's baseline is its cgroup's shmem, at most the workspace size:
 * a run never gets more than its limit plus the workspace; no memory.stat
 * (or no shmem line): none. */
static void
test_create_kept_cap(void **state)
{
	struct fixture *f = *state;
	struct cgroup_run_base base;
	char p[700];

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, true, 1 << 20, &base), 0);
	snprintf(p, sizeof(p), "%s/memory.stat", f->dir);
	assert_int_equal(unlink(p), 0);
	mk_file(f, "memory.stat", "shmem 8388608\ntotal_shmem 8388608\n");
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, true, 1 << 20, &base), 0);
	assert_int_equal(base.usage, 1 << 20);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "2097152");
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, true, 16 << 20, &base), 0);
	assert_int_equal(base.usage, 8 << 20);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "9437184");
	/* Only the hierarchical total_shmem is read, at the start of a line. */
	assert_int_equal(unlink(p), 0);
	mk_file(f, "memory.stat", "shmem 8388608\nx_total_shmem 4096\n");
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, true, 16 << 20, &base), 0);
	assert_int_equal(base.usage, 0);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "1048576");
	assert_int_equal(unlink(p), 0);
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576, true, 16 << 20, &base), -ENOENT);
}

/* No hierarchy at base: the mkdir error is returned. */
static void
test_create_no_base(void **state)
{
	struct fixture *f = *state;
	struct cgroup cg = f->cg;

	snprintf(cg.base, sizeof(cg.base), "%s/missing", f->cg.base);
	assert_int_equal(cgroup_run_create(&cg, UID, 1048576, false, 0, NULL), -ENOENT);
}

/* ---- open_self ---- */

/* The run's tasks file is opened for writing, close-on-exec; what the
 * sandbox writes there ("0": itself) lands in it. */
static void
test_open_self(void **state)
{
	struct fixture *f = *state;
	int fd = -1;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 65536, false, 0, NULL), 0);
	assert_int_equal(open_self(&f->cg, UID, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(write(fd, "0", 1), 1);
	close(fd);
	assert_string_equal(rd_file(f, "tasks"), "0");
}

/* Without the run's cgroup the open error is returned; fd is not written. */
static void
test_open_self_missing(void **state)
{
	struct fixture *f = *state;
	int fd = 12345;

	assert_int_equal(open_self(&f->cg, UID, &fd), -ENOENT);
	assert_int_equal(fd, 12345);
	assert_false(exists(f->dir));
}

/* ---- open_peak ---- */

/* A session's peak for its supervisor: v1 memory.max_usage_in_bytes of the
 * run's node, read-write (a write resets it), close-on-exec. */
static void
test_open_peak(void **state)
{
	struct fixture *f = *state;
	char buf[8] = "", p[700];
	int fd = -1;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 65536, true, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/memory.max_usage_in_bytes", f->dir);
	assert_int_equal(unlink(p), 0);
	mk_file(f, "memory.max_usage_in_bytes", "999\n");
	assert_int_equal(cgroup_run_open_peak(&f->cg, UID, &fd), 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(pread(fd, buf, sizeof(buf) - 1, 0), 4);
	assert_string_equal(buf, "999\n");
	assert_int_equal(pwrite(fd, "0\n\n\n", 4, 0), 4);
	close(fd);
	assert_string_equal(rd_file(f, "memory.max_usage_in_bytes"), "0\n\n\n");
}

/* No run cgroup: the error, fd not written; rlimit: -1 and nothing made. */
static void
test_open_peak_missing(void **state)
{
	struct fixture *f = *state;
	struct cgroup cg = f->cg;
	int fd = 12345;

	assert_int_equal(cgroup_run_open_peak(&f->cg, UID, &fd), -ENOENT);
	assert_int_equal(fd, 12345);
	cg.kind = CGROUP_NONE;
	assert_int_equal(cgroup_run_open_peak(&cg, UID, &fd), 0);
	assert_int_equal(fd, -1);
	assert_false(exists(f->dir));
}

/* ---- finish ---- */

/* Run finish expecting an rmdir of the run's directory with result err
 * (EBUSY: each of its 50 tries). */
static int
finish(struct fixture *f, int err, uint64_t *peak, bool *oom)
{
	int tries = err == EBUSY ? 50 : 1;

	expect_string_count(__wrap_rmdir, path, f->dir, tries);
	will_return_count(__wrap_rmdir, err, tries);
	return cgroup_run_finish(&f->cg, UID, NULL, false, peak, oom);
}

/* Peak and an oom kill are read back, and the cgroup is removed. */
static void
test_finish_oom_kill(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 77;
	bool oom = false;

	mk_rundir(f);
	mk_file(f, "memory.max_usage_in_bytes", "123456789\n");
	mk_file(f, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
	assert_int_equal(finish(f, 0, &peak, &oom), 0);
	assert_int_equal(peak, 123456789);
	assert_true(oom);
	assert_false(exists(f->dir));
}

/* oom_kill 0 is no oom, whatever the other keys say. */
static void
test_finish_no_oom_kill(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 77;
	bool oom = true;

	mk_rundir(f);
	mk_file(f, "memory.max_usage_in_bytes", "4096\n");
	mk_file(f, "memory.oom_control", "oom_kill_disable 1\nunder_oom 1\noom_kill 0\n");
	assert_int_equal(finish(f, 0, &peak, &oom), 0);
	assert_int_equal(peak, 4096);
	assert_false(oom);
	assert_false(exists(f->dir));
}

/* A count above one is still an oom; a large peak is read whole. */
static void
test_finish_oom_kill_count(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 0;
	bool oom = false;

	mk_rundir(f);
	mk_file(f, "memory.max_usage_in_bytes", "18446744073709551615\n");
	mk_file(f, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 12\n");
	assert_int_equal(finish(f, 0, &peak, &oom), 0);
	assert_int_equal(peak, UINT64_MAX);
	assert_true(oom);
}

/* Without an oom_kill line (kernels before 4.13) there is no oom verdict. */
static void
test_finish_no_oom_kill_line(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 77;
	bool oom = true;

	mk_rundir(f);
	mk_file(f, "memory.oom_control", "oom_kill_disable 0\nunder_oom 1\n");
	assert_int_equal(finish(f, 0, &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_false(oom);
}

/* Missing control files: peak 0, no oom, still removed. */
static void
test_finish_missing_files(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 77;
	bool oom = true;

	mk_rundir(f);
	assert_int_equal(finish(f, 0, &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_false(oom);
	assert_false(exists(f->dir));
}

/* rmdir failing (a task still in the cgroup): -errno, and the run's figures
 * all the same. */
static void
test_finish_rmdir_fails(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 77;
	bool oom = false;

	mk_rundir(f);
	mk_file(f, "memory.max_usage_in_bytes", "999\n");
	mk_file(f, "memory.oom_control", "oom_kill 1\n");
	assert_int_equal(finish(f, EBUSY, &peak, &oom), -EBUSY);
	assert_int_equal(peak, 999);
	assert_true(oom);
	assert_true(exists(f->dir));
}

/* create, open_self, finish in sequence on one run. */
static void
test_lifecycle(void **state)
{
	struct fixture *f = *state;
	uint64_t peak = 0;
	bool oom = true;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 65536, false, 0, NULL), 0);
	{
		int fd = -1;

		assert_int_equal(open_self(&f->cg, UID, &fd), 0);
		close(fd);
	}
	assert_int_equal(finish(f, 0, &peak, &oom), 0);
	/* A fresh cgroup: no peak, no oom kill. */
	assert_int_equal(peak, 0);
	assert_false(oom);
	assert_false(exists(f->dir));
}

/* ---- sweep ---- */

/* Make the directory of run uid with a control file. */
static void
mk_uid_dir(struct fixture *f, uint32_t uid)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/u%u", f->cg.base, uid);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/u%u/memory.oom_control", f->cg.base, uid);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

/* Does the directory of run uid exist? */
static bool
uid_dir_exists(struct fixture *f, uint32_t uid)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/u%u", f->cg.base, uid);
	return exists(p);
}

/* Expect one rmdir of the directory of run uid with result err. */
static void
expect_rmdir_uid(struct fixture *f, uint32_t uid, int err)
{
	static char paths[8][1024];
	static size_t n;
	char *p = paths[n++ % 8];

	snprintf(p, sizeof(paths[0]), "%s/u%u", f->cg.base, uid);
	expect_string(__wrap_rmdir, path, p);
	will_return(__wrap_rmdir, err);
}

/*
 * Every run uid of the range (every second uid from uid_lo) is tried once, in
 * order; absent and busy ones are skipped, the rest removed.
 */
static void
test_sweep_range(void **state)
{
	struct fixture *f = *state;

	mk_uid_dir(f, 100042);
	mk_uid_dir(f, 100044);
	mk_uid_dir(f, 100043);		    /* not a run uid of this range: never touched */
	expect_rmdir_uid(f, 100040, 0);	    /* absent: ENOENT, ignored */
	expect_rmdir_uid(f, 100042, EBUSY); /* tasks left in it */
	expect_rmdir_uid(f, 100044, 0);
	cgroup_sweep(&f->cg, 100040, 100046);
	assert_true(uid_dir_exists(f, 100042));
	assert_false(uid_dir_exists(f, 100044));
	assert_true(uid_dir_exists(f, 100043));
}

/* An empty range, or no controller: no rmdir at all. */
static void
test_sweep_noop(void **state)
{
	struct fixture *f = *state;
	struct cgroup cg = f->cg;

	mk_uid_dir(f, 100040);
	cgroup_sweep(&f->cg, 100040, 100040);
	cg.kind = CGROUP_NONE;
	cgroup_sweep(&cg, 100040, 100046);
	assert_true(uid_dir_exists(f, 100040));
}

/* ---- disabled ---- */

/* Without a controller every call is a no-op: nothing made, rmdir never called. */
static void
test_disabled_noop(void **state)
{
	struct fixture *f = *state;
	struct cgroup cg = f->cg;
	uint64_t peak = 77;
	bool oom = true;

	cg.kind = CGROUP_NONE;
	assert_int_equal(cgroup_run_create(&cg, UID, 1048576, false, 0, NULL), 0);
	assert_false(exists(f->dir));
	{
		int fd = 7;

		assert_int_equal(open_self(&cg, UID, &fd), 0);
		assert_int_equal(fd, -1);
	}
	assert_false(exists(f->dir));
	/* Even with a run's directory present, finish leaves it alone. */
	mk_rundir(f);
	mk_file(f, "memory.max_usage_in_bytes", "999\n");
	mk_file(f, "memory.oom_control", "oom_kill 1\n");
	assert_int_equal(cgroup_run_finish(&cg, UID, NULL, false, &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_false(oom);
	assert_true(exists(f->dir));
}

/* ---- cgroup v2 ---- */

#define V2UID 600000U
#define SVC "system.slice/airlockd.service"

struct v2fix {
	char root[256]; /* the fake /sys/fs/cgroup */
	char self[300]; /* the fake /proc/self/cgroup */
	char svc[600];	/* root/SVC */
	char node[800]; /* svc/runs/u600000 */
	struct cgroup cg;
};

/* The content of dir/name, or NULL. */
static char *
get(const char *dir, const char *name)
{
	static char buf[512];
	char p[1200];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* A fake v2 host: the root's controllers, a service cgroup that holds only
 * us (as systemd makes it with Delegate=yes), /proc/self/cgroup naming it. */
static int
v2_setup(void **state)
{
	struct v2fix *f = calloc(1, sizeof(*f));
	char p[1200];

	if (f == NULL)
		return -1;
	fake_cgroupfs = true;
	fake_v2 = true;
	no_memsw = false;
	rmdir_auto = true;
	strcpy(f->root, "/tmp/airlock-test-cgroup2-XXXXXX");
	if (mkdtemp(f->root) == NULL)
		return -1;
	snprintf(f->self, sizeof(f->self), "%s/self-cgroup", f->root);
	snprintf(p, sizeof(p), "%s/sys", f->root);
	if (__real_mkdir(p, 0755) < 0)
		return -1;
	snprintf(f->root + strlen(f->root), sizeof(f->root) - strlen(f->root), "/sys");
	put(f->self, "0::/" SVC "\n");
	snprintf(p, sizeof(p), "%s/cgroup.controllers", f->root);
	put(p, "cpuset cpu io memory hugetlb pids rdma misc\n");
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", f->root);
	put(p, "");
	snprintf(p, sizeof(p), "%s/system.slice", f->root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(f->svc, sizeof(f->svc), "%s/" SVC, f->root);
	assert_int_equal(mkdir(f->svc, 0755), 0);
	snprintf(p, sizeof(p), "%s/cgroup.procs", f->svc);
	{
		char pid[32];

		snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
		put(p, pid);
	}
	snprintf(f->node, sizeof(f->node), "%s/runs/u%u", f->svc, V2UID);
	*state = f;
	return 0;
}

static int
v2_teardown(void **state)
{
	struct v2fix *f = *state;

	*strrchr(f->root, '/') = '\0';
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Init as the service: cgroup2, we move into daemon/, the controllers are
 * enabled in the service's and in runs/'s subtree_control. */
static void
v2_init(struct v2fix *f)
{
	assert_int_equal(cgroup_init(&f->cg, f->root, f->self, CGROUP_AUTO), 0);
	assert_int_equal(f->cg.kind, CGROUP_V2);
}

static void
test_v2_init_service(void **state)
{
	struct v2fix *f = *state;
	char pid[32], runs[700], leaf[700];

	v2_init(f);
	snprintf(runs, sizeof(runs), "%s/runs", f->svc);
	snprintf(leaf, sizeof(leaf), "%s/daemon", f->svc);
	assert_string_equal(f->cg.base, runs);
	assert_true(f->cg.cpu);
	assert_true(f->cg.into);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	assert_string_equal(get(leaf, "cgroup.procs"), pid);
	assert_string_equal(get(f->svc, "cgroup.subtree_control"), "+memory +pids +cpu");
	assert_string_equal(get(runs, "cgroup.subtree_control"), "+memory +pids +cpu");
	assert_non_null(strstr(f->cg.why, "cgroup2"));
	assert_string_equal(cgroup_kind_name(f->cg.kind), "cgroup2");
}

/* Our cgroup holds a shell too (started by hand): one clear reason, and
 * the fallback (no v1 here either) is rlimit. Nothing was moved. */
static void
test_v2_init_not_alone(void **state)
{
	struct v2fix *f = *state;
	char p[700];

	snprintf(p, sizeof(p), "%s/cgroup.procs", f->svc);
	put(p, "1\n");
	assert_int_equal(cgroup_init(&f->cg, f->root, f->self, CGROUP_AUTO), 0);
	assert_int_equal(f->cg.kind, CGROUP_NONE);
	assert_string_equal(cgroup_kind_name(f->cg.kind), "rlimit");
	assert_non_null(strstr(f->cg.why, "holds other processes"));
	assert_non_null(strstr(f->cg.why, "RLIMIT_AS"));
	snprintf(p, sizeof(p), "%s/daemon", f->svc);
	assert_false(exists(p));
}

/* No delegation (the controllers are not offered to our cgroup): rlimit. */
static void
test_v2_init_not_delegated(void **state)
{
	struct v2fix *f = *state;
	char p[700];

	snprintf(p, sizeof(p), "%s/cgroup.controllers", f->svc);
	put(p, "cpu\n");
	assert_int_equal(cgroup_init(&f->cg, f->root, f->self, CGROUP_AUTO), 0);
	assert_int_equal(f->cg.kind, CGROUP_NONE);
	assert_non_null(strstr(f->cg.why, "not delegated"));
}

/* In the root of a container's cgroup namespace, which is not the host's
 * root cgroup: its controllers are refused while it holds a process
 * (ns_root_busy in __wrap_open64). airlockd moves into its leaf first. */
static void
test_v2_init_ns_root(void **state)
{
	struct v2fix *f = *state;
	char pid[32], leaf[700];

	put(f->self, "0::/\n");
	snprintf(ns_root_busy, sizeof(ns_root_busy), "%s", f->root);
	v2_init(f);
	ns_root_busy[0] = '\0';
	snprintf(leaf, sizeof(leaf), "%s/airlockd/daemon", f->root);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	assert_string_equal(get(leaf, "cgroup.procs"), pid);
	assert_string_equal(get(f->root, "cgroup.subtree_control"), "+memory +pids +cpu");
}

/* In the root cgroup (a container, say): a child "airlockd" of our own. */
static void
test_v2_init_root(void **state)
{
	struct v2fix *f = *state;
	char runs[700];

	put(f->self, "0::/\n");
	v2_init(f);
	snprintf(runs, sizeof(runs), "%s/airlockd/runs", f->root);
	assert_string_equal(f->cg.base, runs);
	assert_string_equal(get(f->root, "cgroup.subtree_control"), "+memory +pids +cpu");
}

/* A configured choice: v1 only (no v1 here), or rlimits. */
static void
test_v2_init_want(void **state)
{
	struct v2fix *f = *state;

	assert_int_equal(cgroup_init(&f->cg, f->root, f->self, CGROUP_V1), 0);
	assert_int_equal(f->cg.kind, CGROUP_NONE);
	assert_int_equal(cgroup_init(&f->cg, f->root, f->self, CGROUP_NONE), 0);
	assert_int_equal(f->cg.kind, CGROUP_NONE);
	assert_non_null(strstr(f->cg.why, "as configured"));
}

/* A run's cgroup: node, sup/ and code/; the limits on code/; the two
 * cgroup.procs the supervisor clones through writable by its group. */
static void
test_v2_run_create(void **state)
{
	struct v2fix *f = *state;
	char code[900], sup[900], p[1000];
	struct stat st;

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 268435456ULL, false, 0, NULL), 0);
	snprintf(code, sizeof(code), "%s/code", f->node);
	snprintf(sup, sizeof(sup), "%s/sup", f->node);
	assert_string_equal(get(f->node, "cgroup.subtree_control"), "+memory +pids +cpu");
	assert_string_equal(get(code, "memory.max"), "268435456");
	assert_string_equal(get(code, "memory.swap.max"), "0");
	assert_string_equal(get(code, "memory.oom.group"), "1");
	assert_true(exists(sup));
	snprintf(p, sizeof(p), "%s/cgroup.procs", f->node);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0664);
	snprintf(p, sizeof(p), "%s/cgroup.procs", code);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0664);
	snprintf(p, sizeof(p), "%s/cgroup.procs", sup);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	if (geteuid() == 0) {
		/* Made with fsgid = the run's gid: node and code are its group's. */
		assert_int_equal(stat(f->node, &st), 0);
		assert_int_equal(st.st_gid, V2UID);
		assert_int_equal(stat(code, &st), 0);
		assert_int_equal(st.st_gid, V2UID);
		assert_int_equal(stat(sup, &st), 0);
		assert_int_equal(st.st_gid, getegid());
	}
}

/* No memory limit asked: "max". */
static void
test_v2_run_create_unlimited(void **state)
{
	struct v2fix *f = *state;
	char code[900];

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 0, false, 0, NULL), 0);
	snprintf(code, sizeof(code), "%s/code", f->node);
	assert_string_equal(get(code, "memory.max"), "max");
}

/* A run's limits: memory, pids, cpu.max as a share of a 100 ms period. */
static void
test_v2_set_limit(void **state)
{
	struct v2fix *f = *state;
	char code[900];

	v2_init(f);
	snprintf(code, sizeof(code), "%s/code", f->node);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	assert_int_equal(cgroup_run_set_limit(&f->cg, V2UID, NULL, 64 << 20, 16, 50), 0);
	assert_string_equal(get(code, "memory.max"), "67108864");
	assert_string_equal(get(code, "pids.max"), "16");
	assert_string_equal(get(code, "cpu.max"), "50000 100000");
	assert_int_equal(cgroup_run_set_limit(&f->cg, V2UID, NULL, 0, 0, 0), 0);
	assert_string_equal(get(code, "memory.max"), "max");
	assert_string_equal(get(code, "pids.max"), "max");
	assert_string_equal(get(code, "cpu.max"), "max 100000");
	/* Above PID_MAX_LIMIT the kernel takes only "max". */
	assert_int_equal(cgroup_run_set_limit(&f->cg, V2UID, NULL, 1, UINT32_MAX, 250), 0);
	assert_string_equal(get(code, "pids.max"), "max");
	assert_string_equal(get(code, "cpu.max"), "250000 100000");
	/* Without the cpu controller cpu.max is left alone. */
	f->cg.cpu = false;
	assert_int_equal(cgroup_run_set_limit(&f->cg, V2UID, NULL, 1, 1, 10), 0);
	assert_string_equal(get(code, "cpu.max"), "250000 100000");
}

/* The sandbox's fds: two directories, the self-move file of sup/, the
 * code's cpu.stat and pids.events; all close-on-exec. */
static void
test_v2_run_open(void **state)
{
	struct v2fix *f = *state;
	struct cgroup_run_fds fds;
	char sup[900];
	struct stat st;
	int *all[5], i;

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	assert_int_equal(cgroup_run_open(&f->cg, V2UID, &fds), 0);
	all[0] = &fds.into, all[1] = &fds.self, all[2] = &fds.code, all[3] = &fds.cpu_stat;
	all[4] = &fds.pids_events;
	for (i = 0; i < 5; i++) {
		assert_true(*all[i] >= 0);
		assert_int_equal(fcntl(*all[i], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	}
	assert_int_equal(fstat(fds.into, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(fstat(fds.code, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(write(fds.self, "0", 1), 1);
	snprintf(sup, sizeof(sup), "%s/sup", f->node);
	assert_string_equal(get(sup, "cgroup.procs"), "0");
	{
		char buf[128];
		ssize_t n = pread(fds.pids_events, buf, sizeof(buf) - 1, 0);

		assert_true(n > 0);
		buf[n] = '\0';
		assert_int_equal(cgroup_parse_key(buf, "max"), 0);
	}
	cgroup_run_fds_close(&fds);
	for (i = 0; i < 5; i++)
		assert_int_equal(*all[i], -1);
	cgroup_run_fds_close(NULL);
}

/* Opening the fds of a run that has no cgroup fails; nothing leaks. */
static void
test_v2_run_open_missing(void **state)
{
	struct v2fix *f = *state;
	struct cgroup_run_fds fds = {7, 7, 7, 7, 7};

	v2_init(f);
	assert_int_equal(cgroup_run_open(&f->cg, V2UID, &fds), -ENOENT);
	assert_int_equal(fds.into, 7);
}

/* The frontend's early figures: memory.peak and memory.events of code/;
 * an oom group kill counts as the memory limit. */
static void
test_v2_stats(void **state)
{
	struct v2fix *f = *state;
	char p[1000];
	uint64_t peak = 0;
	bool oom = true;
	int fds[2];

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	assert_int_equal(cgroup_run_open_stats(&f->cg, V2UID, fds), 0);
	assert_int_equal(cgroup_read_stats(fds[0], fds[1], &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_false(oom);
	snprintf(p, sizeof(p), "%s/code/memory.peak", f->node);
	put(p, "67104768\n");
	snprintf(p, sizeof(p), "%s/code/memory.events", f->node);
	put(p, "low 0\nhigh 0\nmax 91\noom 1\noom_kill 0\noom_group_kill 1\n");
	assert_int_equal(cgroup_read_stats(fds[0], fds[1], &peak, &oom), 0);
	assert_int_equal(peak, 67104768);
	assert_true(oom);
	close(fds[0]);
	close(fds[1]);
}

/* v2: the session's peak is code/memory.peak, read-write (6.12's per-fd
 * reset); reads through the fd see the file. */
static void
test_v2_open_peak(void **state)
{
	struct v2fix *f = *state;
	char p[1000], buf[32];
	int fd = -1;
	ssize_t n;

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, true, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/code/memory.peak", f->node);
	put(p, "67104768\n");
	assert_int_equal(cgroup_run_open_peak(&f->cg, V2UID, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_int_equal(n, 9);
	buf[n] = '\0';
	assert_string_equal(buf, "67104768\n");
	close(fd);
}

/* finish: the figures, then cgroup.kill on the node and every directory gone. */
static void
test_v2_finish(void **state)
{
	struct v2fix *f = *state;
	char p[1000];
	uint64_t peak = 0;
	bool oom = false;

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/code/memory.peak", f->node);
	put(p, "4096\n");
	snprintf(p, sizeof(p), "%s/code/memory.events", f->node);
	put(p, "oom 2\noom_kill 2\noom_group_kill 0\n");
	assert_int_equal(cgroup_run_finish(&f->cg, V2UID, NULL, false, &peak, &oom), 0);
	assert_int_equal(peak, 4096);
	assert_true(oom);
	assert_string_equal(killed, "1");
	assert_false(exists(f->node));
}

/* A node that cannot go (a cgroup made below it): -EBUSY, and the run's
 * figures all the same (an oom kill must not become "signaled" for it). */
static void
test_v2_finish_busy(void **state)
{
	struct v2fix *f = *state;
	char p[1000];
	uint64_t peak = 77;
	bool oom = false;

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/code/memory.peak", f->node);
	put(p, "8192\n");
	snprintf(p, sizeof(p), "%s/code/memory.events", f->node);
	put(p, "oom 1\noom_kill 1\noom_group_kill 0\n");
	snprintf(p, sizeof(p), "%s/code/x", f->node);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(cgroup_run_finish(&f->cg, V2UID, NULL, false, &peak, &oom), -EBUSY);
	assert_int_equal(peak, 8192);
	assert_true(oom);
}

/* A node left by an earlier run is removed and made afresh. */
static void
test_v2_create_replaces_stale(void **state)
{
	struct v2fix *f = *state;
	char p[1000];

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/code/memory.events", f->node);
	put(p, "oom_kill 3\n");
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 2 << 20, false, 0, NULL), 0);
	snprintf(p, sizeof(p), "%s/code", f->node);
	assert_int_equal(cgroup_parse_key(get(p, "memory.events"), "oom_kill"), 0);
	assert_string_equal(get(p, "memory.max"), "2097152");
}

/*
 * A session's runs share their cgroup (issue 13, finding 6): kept, it is
 * reused as it is; each run's limit is on top of what is charged to it
 * before the run, its oom verdict counts kills since then, its peak is
 * reset before it; removed when the session ends.
 */
static void
test_v2_kept(void **state)
{
	struct v2fix *f = *state;
	struct cgroup_run_base base;
	char code[1000], p[1000], peak_file[1000];
	uint64_t peak = 1;
	bool oom = true;

	v2_init(f);
	snprintf(code, sizeof(code), "%s/code", f->node);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, true, 1 << 20, &base), 0);
	assert_true(base.kept);
	assert_int_equal(base.usage, 0);
	assert_int_equal(base.ooms, 0);
	/* The first run wrote files and was oom-killed once; its peak is
	 * read through the fd reset before it (6.12: for that fd only). */
	assert_true(base.peak_fd >= 0);
	snprintf(peak_file, sizeof(peak_file), "%s/memory.peak", code);
	put(peak_file, "9000000\n");
	snprintf(p, sizeof(p), "%s/memory.events", code);
	put(p, "oom 1\noom_kill 1\noom_group_kill 1\n");
	assert_int_equal(cgroup_run_finish(&f->cg, V2UID, &base, true, &peak, &oom), 0);
	assert_int_equal(peak, 9000000);
	assert_int_equal(base.peak_fd, -1);
	assert_true(oom);
	assert_true(exists(code));
	/* No cgroup.kill on a kept cgroup (6.1 killed the next sandboxes). */
	assert_string_equal(get(f->node, "cgroup.kill"), "");
	/* The next run: the same cgroup, a baseline of what is in it. */
	snprintf(p, sizeof(p), "%s/memory.current", code);
	put(p, "90000000\n");
	snprintf(p, sizeof(p), "%s/memory.stat", code);
	put(p, "anon 0\nfile 89934464\nkernel 0\nshmem 65536\nfile_mapped 0\n");
	kept_next_run(&f->cg, V2UID, 65536, 2, &base);
	assert_string_equal(get(code, "memory.max"), "1114112");
	assert_int_equal(cgroup_run_set_limit(&f->cg, V2UID, &base, 0, 0, 0), 0);
	assert_string_equal(get(code, "memory.max"), "max");
	/* Reset (written) before this run. */
	assert_string_equal(get(code, "memory.peak"), "0000000\n");
	/* The first run's kills are not this one's. */
	kept_last_run(&f->cg, V2UID, &base, peak_file, f->node);
}

/*
 * The session ended while its run was alive: that run's reap removes the
 * cgroup, with the figures measured from its baseline. Its peak could not
 * be reset (cgroup2 before 6.12: no write handler, the open fails; here no
 * file): no fd, and the peak is 0, not measured, never the file's figure
 * (the session's so far).
 */
static void
test_v2_kept_finish_removes(void **state)
{
	struct v2fix *f = *state;
	struct cgroup_run_base base;
	char p[1000];
	uint64_t peak = 1;
	bool oom = true;

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, true, 1 << 20, &base), 0);
	assert_true(base.peak_fd >= 0);
	close(base.peak_fd); /* that run is not measured here */
	snprintf(p, sizeof(p), "%s/code/memory.events", f->node);
	put(p, "oom_kill 4\n");
	snprintf(p, sizeof(p), "%s/code/memory.peak", f->node);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, true, 1 << 20, &base), 0);
	assert_int_equal(base.ooms, 4);
	assert_int_equal(base.peak_fd, -1);
	put(p, "9000000\n");
	assert_int_equal(cgroup_run_finish(&f->cg, V2UID, &base, false, &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_false(oom);
	assert_false(exists(f->node));
}

/*
 * A peak file that opens read-write but refuses the reset (6.1's
 * memory.peak, to an opener with CAP_DAC_OVERRIDE: EINVAL; here a FIFO:
 * ESPIPE): no fd is kept, none is left open, and the run's peak is 0.
 */
static void
test_v2_kept_reset_refused(void **state)
{
	struct v2fix *f = *state;
	struct cgroup_run_base base;
	char p[1000];
	uint64_t peak = 1;
	bool oom = true;
	int lowest;

	v2_init(f);
	snprintf(p, sizeof(p), "%s/code/memory.peak", f->node);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, true, 1 << 20, &base), 0);
	assert_true(base.peak_fd >= 0);
	close(base.peak_fd); /* that run is not measured here */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkfifo(p, 0600), 0);
	lowest = dup(0);
	close(lowest);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, true, 1 << 20, &base), 0);
	assert_int_equal(base.peak_fd, -1);
	assert_int_equal(fcntl(lowest, F_GETFD), -1);
	assert_int_equal(cgroup_run_finish(&f->cg, V2UID, &base, true, &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_int_equal(unlink(p), 0);
}

/* A keeper: its own leaf, memory.max its workspace plus slack, few pids. */
static void
test_v2_keeper(void **state)
{
	struct v2fix *f = *state;
	char k[900];
	struct stat st;
	int fd = -1;

	v2_init(f);
	snprintf(k, sizeof(k), "%s/runs/k%u", f->svc, V2UID);
	assert_int_equal(cgroup_keeper_create(&f->cg, V2UID, 1 << 20), 0);
	assert_string_equal(get(k, "memory.max"), "68157440");
	assert_string_equal(get(k, "memory.swap.max"), "0");
	assert_string_equal(get(k, "pids.max"), "8");
	assert_int_equal(cgroup_keeper_open(&f->cg, V2UID, &fd), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	assert_int_equal(cgroup_keeper_finish(&f->cg, V2UID), 0);
	assert_string_equal(killed, "1");
	assert_false(exists(k));
}

/* Keepers elsewhere: nothing, no fd. */
static void
test_keeper_v1_noop(void **state)
{
	struct fixture *f = *state;
	int fd = 7;

	assert_int_equal(cgroup_keeper_create(&f->cg, UID, 1 << 20), 0);
	assert_int_equal(cgroup_keeper_open(&f->cg, UID, &fd), 0);
	assert_int_equal(fd, -1);
	assert_int_equal(cgroup_keeper_finish(&f->cg, UID), 0);
	assert_false(exists(f->dir));
}

/* A restarted daemon removes the run and keeper cgroups of its own uid range
 * under runs/, and nothing else (not another daemon's range). */
static void
test_v2_sweep(void **state)
{
	struct v2fix *f = *state;
	char other[900], k[900], foreign[900];

	v2_init(f);
	assert_int_equal(cgroup_run_create(&f->cg, V2UID, 1 << 20, false, 0, NULL), 0);
	assert_int_equal(cgroup_keeper_create(&f->cg, V2UID + 2, 1 << 20), 0);
	snprintf(other, sizeof(other), "%s/runs/notours", f->svc);
	assert_int_equal(mkdir(other, 0755), 0);
	snprintf(foreign, sizeof(foreign), "%s/runs/u%u", f->svc, V2UID + 1000);
	assert_int_equal(mkdir(foreign, 0755), 0);
	cgroup_sweep(&f->cg, V2UID, V2UID + 4);
	snprintf(k, sizeof(k), "%s/runs/k%u", f->svc, V2UID + 2);
	assert_false(exists(f->node));
	assert_false(exists(k));
	assert_true(exists(other));
	assert_true(exists(foreign));
}

/* "key N" lines: whole keys at the start of a line only. */
static void
test_parse_key(void **state)
{
	(void)state;
	assert_int_equal(cgroup_parse_key("usage_usec 1234\nuser_usec 5\n", "usage_usec"), 1234);
	assert_int_equal(cgroup_parse_key("usage_usec 1234\nuser_usec 5\n", "user_usec"), 5);
	assert_int_equal(cgroup_parse_key("max.imposed 3\nmax 2\n", "max"), 2);
	assert_int_equal(cgroup_parse_key("oom_group_kill 4\n", "oom_kill"), 0);
	assert_int_equal(cgroup_parse_key("", "max"), 0);
}

/* Kind names round-trip; an unknown one is refused. */
static void
test_kind_names(void **state)
{
	enum cgroup_kind k;

	(void)state;
	assert_int_equal(cgroup_kind_from_name("cgroup2", &k), 0);
	assert_int_equal(k, CGROUP_V2);
	assert_int_equal(cgroup_kind_from_name("rlimit", &k), 0);
	assert_int_equal(k, CGROUP_NONE);
	assert_int_equal(cgroup_kind_from_name("cgroup3", &k), -EINVAL);
	assert_string_equal(cgroup_kind_name(CGROUP_V1), "cgroup1");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_writes_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_writes_max_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_without_memsw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_replaces_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_stale_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_stale_busy_then_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_makes_dir_fails_without_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_create_no_base, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_kept_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_self_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_peak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_peak_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_oom_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_no_oom_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_oom_kill_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_no_oom_kill_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_missing_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_finish_rmdir_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_noop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disabled_noop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keeper_v1_noop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_init_service, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_init_not_alone, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_init_not_delegated, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_init_ns_root, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_init_root, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_init_want, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_run_create, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_run_create_unlimited, v2_setup,
						v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_set_limit, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_run_open, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_run_open_missing, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_stats, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_open_peak, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_finish, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_finish_busy, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_create_replaces_stale, v2_setup,
						v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_kept, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_kept_finish_removes, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_kept_reset_refused, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_keeper, v2_setup, v2_teardown),
		cmocka_unit_test_setup_teardown(test_v2_sweep, v2_setup, v2_teardown),
		cmocka_unit_test(test_parse_key),
		cmocka_unit_test(test_kind_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
