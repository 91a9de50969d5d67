/*
 * test_cgroup.c: unit tests of daemon/cgroup.c's per-run calls on a fake
 * hierarchy: cg->base is a temporary directory, control files are regular
 * files the test makes.
 *
 * Link seams: rmdir() (-Wl,--wrap=rmdir). Every call must be expected by the
 * test (path checked, result queued); with result 0 it removes the directory's
 * files first, as cgroupfs does with control files, then really removes it.
 * mkdir() (-Wl,--wrap=mkdir): when fake_cgroupfs is set, a new directory comes
 * with its control files, as cgroupfs makes them (memsw unless no_memsw).
 */
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

static bool fake_cgroupfs, no_memsw;

/* mkdir() as cgroupfs would do it: the directory brings its control files. */
int
__wrap_mkdir(const char *path, mode_t mode)
{
	static const char *const names[] = {"memory.limit_in_bytes",
					    "memory.max_usage_in_bytes",
					    "memory.memsw.limit_in_bytes",
					    "memory.oom_control",
					    "cgroup.procs",
					    "tasks"};
	size_t i;

	if (__real_mkdir(path, mode) < 0)
		return -1;
	for (i = 0; fake_cgroupfs && i < sizeof(names) / sizeof(names[0]); i++) {
		char p[1024];
		int fd;

		if (no_memsw && strstr(names[i], "memsw") != NULL)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, names[i]);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		if (strcmp(names[i], "memory.oom_control") == 0)
			(void)!write(fd, "oom_kill 0\n", 11);
		close(fd);
	}
	return 0;
}

/* Remove every file in the directory path (one level). */
static void
empty_dir(const char *path)
{
	static const char *const names[] = {
		"memory.limit_in_bytes",
		"memory.max_usage_in_bytes",
		"memory.memsw.limit_in_bytes",
		"memory.oom_control",
		"cgroup.procs",
		"tasks",
	};
	char p[1024];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", path, names[i]);
		(void)unlink(p);
	}
}

/* rmdir() as cgroupfs would do it, or the queued errno. */
int
__wrap_rmdir(const char *path)
{
	int err;

	check_expected_ptr(path);
	err = mock_type(int);
	if (err != 0) {
		errno = err;
		return -1;
	}
	empty_dir(path);
	return __real_rmdir(path);
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
	f->cg.enabled = true;
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

/* ---- create ---- */

/* The memory limit goes to limit_in_bytes and memsw of a new cgroup. */
static void
test_create_writes_limit(void **state)
{
	struct fixture *f = *state;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 268435456ULL), 0);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "268435456");
	assert_string_equal(rd_file(f, "memory.memsw.limit_in_bytes"), "268435456");
}

/* The whole uint64 range is written in decimal. */
static void
test_create_writes_max_limit(void **state)
{
	struct fixture *f = *state;

	fake_cgroupfs = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, UINT64_MAX), 0);
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "18446744073709551615");
}

/* Without swap accounting (no memsw file) create still succeeds. */
static void
test_create_without_memsw(void **state)
{
	struct fixture *f = *state;

	fake_cgroupfs = true;
	no_memsw = true;
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576), 0);
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
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576), 0);
	assert_string_equal(rd_file(f, "memory.oom_control"), "oom_kill 0\n");
	assert_string_equal(rd_file(f, "memory.limit_in_bytes"), "1048576");
}

/* A stale cgroup that cannot be removed (tasks in it) refuses the run. */
static void
test_create_stale_busy(void **state)
{
	struct fixture *f = *state;

	mk_rundir(f);
	expect_string(__wrap_rmdir, path, f->dir);
	will_return(__wrap_rmdir, EBUSY);
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576), -EBUSY);
}

/* The run's directory is made (0700) when absent; without a limit file create fails. */
static void
test_create_makes_dir_fails_without_limit(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	assert_false(exists(f->dir));
	assert_int_equal(cgroup_run_create(&f->cg, UID, 1048576), -ENOENT);
	assert_int_equal(stat(f->dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	/* Nothing was created with the directory: a real cgroup brings its files. */
	assert_null(rd_file(f, "memory.limit_in_bytes"));
}

/* No hierarchy at base: the mkdir error is returned. */
static void
test_create_no_base(void **state)
{
	struct fixture *f = *state;
	struct cgroup cg = f->cg;

	snprintf(cg.base, sizeof(cg.base), "%s/missing", f->cg.base);
	assert_int_equal(cgroup_run_create(&cg, UID, 1048576), -ENOENT);
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
	assert_int_equal(cgroup_run_create(&f->cg, UID, 65536), 0);
	assert_int_equal(cgroup_run_open_self(&f->cg, UID, &fd), 0);
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

	assert_int_equal(cgroup_run_open_self(&f->cg, UID, &fd), -ENOENT);
	assert_int_equal(fd, 12345);
	assert_false(exists(f->dir));
}

/* ---- finish ---- */

/* Run finish expecting one rmdir of the run's directory with result err. */
static int
finish(struct fixture *f, int err, uint64_t *peak, bool *oom)
{
	expect_string(__wrap_rmdir, path, f->dir);
	will_return(__wrap_rmdir, err);
	return cgroup_run_finish(&f->cg, UID, peak, oom);
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

/* rmdir failing (a task still in the cgroup): -errno, out-parameters untouched. */
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
	assert_int_equal(peak, 77);
	assert_false(oom);
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
	assert_int_equal(cgroup_run_create(&f->cg, UID, 65536), 0);
	{
		int fd = -1;

		assert_int_equal(cgroup_run_open_self(&f->cg, UID, &fd), 0);
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
	cg.enabled = false;
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

	cg.enabled = false;
	assert_int_equal(cgroup_run_create(&cg, UID, 1048576), 0);
	assert_false(exists(f->dir));
	{
		int fd = 7;

		assert_int_equal(cgroup_run_open_self(&cg, UID, &fd), 0);
		assert_int_equal(fd, -1);
	}
	assert_false(exists(f->dir));
	/* Even with a run's directory present, finish leaves it alone. */
	mk_rundir(f);
	mk_file(f, "memory.max_usage_in_bytes", "999\n");
	mk_file(f, "memory.oom_control", "oom_kill 1\n");
	assert_int_equal(cgroup_run_finish(&cg, UID, &peak, &oom), 0);
	assert_int_equal(peak, 0);
	assert_false(oom);
	assert_true(exists(f->dir));
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
		cmocka_unit_test_setup_teardown(test_create_makes_dir_fails_without_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_create_no_base, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_self_missing, setup, teardown),
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
