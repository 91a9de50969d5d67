/*
 * test_cgroup_opens.c: daemon/spawner/cgroup.c opens a run's control files
 * relative to its node's directory, one lookup of the full path per call
 * (cgroup_node_open), not one per file.
 *
 * Link seams: open() and openat() (-Wl,--wrap=open64,--wrap=openat64, the
 * names under _FILE_OFFSET_BITS=64) count the opens by an absolute path
 * under the fake hierarchy's base. The run is a session's (keep): its node,
 * leaves and control files are made by the test before the calls, as a
 * session's earlier run leaves them, so no mkdir or rmdir seam is needed.
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

#define RUN_UID 300042U

int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __real_openat64(int dfd, const char *path, int flags, ...);
int __wrap_openat64(int dfd, const char *path, int flags, ...);

static char counted_base[600]; /* the base with a trailing '/'; "": count nothing */
static unsigned counted;       /* opens by an absolute path under counted_base */

static void
count(const char *path)
{
	if (counted_base[0] != '\0' && strncmp(path, counted_base, strlen(counted_base)) == 0)
		counted++;
}

int
__wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	count(path);
	return __real_open64(path, flags, mode);
}

int
__wrap_openat64(int dfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	if (path[0] == '/')
		count(path);
	return __real_openat64(dfd, path, flags, mode);
}

/* Make dir/name with content (not counted: made before counting starts). */
static void
mkfile(const char *dir, const char *name, const char *content)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = __real_open64(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static void
mksub(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	assert_int_equal(mkdir(buf, 0755), 0);
}

static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int
setup(void **state)
{
	struct cgroup *cg = calloc(1, sizeof(*cg));

	if (cg == NULL)
		return -1;
	strcpy(cg->base, "/tmp/airlock-test-cgopens-XXXXXX");
	if (mkdtemp(cg->base) == NULL) {
		free(cg);
		return -1;
	}
	*state = cg;
	return 0;
}

static int
teardown(void **state)
{
	struct cgroup *cg = *state;

	counted_base[0] = '\0';
	nftw(cg->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(cg);
	return 0;
}

/* The calls of one run, counting the opens by a full path. */
static unsigned
run_calls(struct cgroup *cg, bool v2)
{
	struct cgroup_run_base base;
	struct cgroup_run_fds fds;
	uint64_t peak = 0;
	bool oom = true;
	int sfds[2], pfd = -1;

	snprintf(counted_base, sizeof(counted_base), "%s/", cg->base);
	counted = 0;
	assert_int_equal(cgroup_run_create(cg, RUN_UID, 1 << 20, true, 4096, &base), 0);
	assert_int_equal(cgroup_run_set_limit(cg, RUN_UID, &base, 64 << 20, 16, 50), 0);
	assert_int_equal(cgroup_run_open(cg, RUN_UID, &fds), 0);
	assert_true(fds.self >= 0);
	assert_int_equal(fds.code >= 0, v2);
	cgroup_run_fds_close(&fds);
	assert_int_equal(cgroup_run_open_stats(cg, RUN_UID, sfds), 0);
	close(sfds[0]);
	close(sfds[1]);
	assert_int_equal(cgroup_run_open_peak(cg, RUN_UID, &pfd), 0);
	close(pfd);
	assert_int_equal(cgroup_run_finish(cg, RUN_UID, &base, true, &peak, &oom), 0);
	assert_false(oom);
	counted_base[0] = '\0';
	return counted;
}

/*
 * v1: six calls, six opens by a full path (the node's, one per call); seen
 * failing before cgroup_node_open: 14.
 */
static void
test_v1_opens_relative(void **state)
{
	struct cgroup *cg = *state;
	char node[700];

	cg->kind = CGROUP_V1;
	snprintf(node, sizeof(node), "%s/u%u", cg->base, RUN_UID);
	assert_int_equal(mkdir(node, 0700), 0);
	mkfile(node, "memory.stat", "total_shmem 0\n");
	mkfile(node, "memory.oom_control", "oom_kill 0\n");
	mkfile(node, "memory.max_usage_in_bytes", "0\n");
	mkfile(node, "memory.limit_in_bytes", "");
	mkfile(node, "memory.memsw.limit_in_bytes", "");
	mkfile(node, "tasks", "");
	assert_int_equal(run_calls(cg, false), 6);
	/* And the files were the node's: the limit was written there. */
	{
		char p[800], buf[32] = "";
		int fd;

		snprintf(p, sizeof(p), "%s/memory.limit_in_bytes", node);
		fd = __real_open64(p, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
		close(fd);
		assert_string_equal(buf, "67108864");
	}
}

/*
 * v2: the same six calls, six opens by a full path; seen failing before
 * cgroup_node_open: 15.
 */
static void
test_v2_opens_relative(void **state)
{
	struct cgroup *cg = *state;
	char node[700], code[800], sup[800];

	cg->kind = CGROUP_V2;
	cg->cpu = true;
	snprintf(node, sizeof(node), "%s/u%u", cg->base, RUN_UID);
	assert_int_equal(mkdir(node, 0755), 0);
	mksub(code, sizeof(code), node, "code");
	mksub(sup, sizeof(sup), node, "sup");
	mkfile(sup, "cgroup.procs", "");
	mkfile(code, "memory.stat", "shmem 0\n");
	mkfile(code, "memory.events", "oom 0\noom_kill 0\n");
	mkfile(code, "memory.peak", "0\n");
	mkfile(code, "memory.max", "max\n");
	mkfile(code, "pids.max", "max\n");
	mkfile(code, "cpu.max", "max 100000\n");
	mkfile(code, "cpu.stat", "usage_usec 0\n");
	mkfile(code, "pids.events", "max 0\n");
	assert_int_equal(run_calls(cg, true), 6);
}

/* A node that is not there: every call fails -ENOENT, nothing is left
 * open (the fd count is the same after). */
static void
test_missing_node(void **state)
{
	struct cgroup *cg = *state;
	struct cgroup_run_fds fds;
	int sfds[2], pfd, before = open("/dev/null", O_RDONLY | O_CLOEXEC), after;

	cg->kind = CGROUP_V2;
	close(before);
	assert_int_equal(cgroup_run_set_limit(cg, RUN_UID, NULL, 1 << 20, 0, 0), -ENOENT);
	assert_int_equal(cgroup_run_open(cg, RUN_UID, &fds), -ENOENT);
	assert_int_equal(cgroup_run_open_stats(cg, RUN_UID, sfds), -ENOENT);
	assert_int_equal(cgroup_run_open_peak(cg, RUN_UID, &pfd), -ENOENT);
	after = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(after);
	assert_int_equal(after, before);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v1_opens_relative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v2_opens_relative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_node, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
