/*
 * session_cg.c: what test_sessions.c reads of the daemon's run cgroups
 * (their own, found from the daemon's log): dying ones, the run nodes of a
 * uid range, the file cache charged to them. In a file of its own so that
 * test_sessions.c stays within the size check.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "session_cg.h"

/*
 * The daemon's run cgroups' directory (cgroup2 runs/, cgroup1 the memory
 * controller's airlock/), from its log: 2 cgroup2, 1 cgroup1, 0 neither.
 */
int
runs_cgroup(const struct fixture *f, char *buf, size_t len)
{
	char log[16384];
	const char *p;
	ssize_t n;
	int lfd = open(f->log, O_RDONLY | O_CLOEXEC);

	assert_true(lfd >= 0);
	n = read(lfd, log, sizeof(log) - 1);
	close(lfd);
	assert_true(n >= 0);
	log[n] = '\0';
	if ((p = strstr(log, "resource control: cgroup2 at ")) != NULL) {
		p += strlen("resource control: cgroup2 at ");
		snprintf(buf, len, "%.*s/runs", (int)strcspn(p, ":"), p);
		return 2;
	}
	if ((p = strstr(log, "resource control: cgroup1 memory controller at ")) != NULL) {
		p += strlen("resource control: cgroup1 memory controller at ");
		snprintf(buf, len, "%.*s", (int)strcspn(p, " "), p);
		return 1;
	}
	return 0;
}

/*
 * Memory cgroups the daemon's runs left behind, dying: pages of the session's
 * workspace written by a run stay charged to the cgroup the run had, which
 * lives on, removed but not freed, while they do. cgroup2:
 * nr_dying_descendants of the daemon's runs/ node (runs), its own alone.
 */
long
memcg_dying(const char *runs)
{
	char path[640], line[256];
	long n = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/cgroup.stat", runs);
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "nr_dying_descendants %ld", &n) == 1)
			break;
	fclose(fp);
	assert_true(n >= 0);
	return n;
}

/*
 * cgroup1 has no count of dying cgroups but the host's (/proc/cgroups, which
 * every other test's daemon moves too: this test failed beside other suites).
 * What keeps them from piling up is the session's one run cgroup for its
 * life: the daemon's run nodes (airlock/u<uid>, base: airlock/) of this
 * test's uid range alone, their number and the inode of the last, which
 * changes when a node is removed and made again.
 */
int
memcg_own_nodes(const char *base, unsigned lo, unsigned count, ino_t *ret_ino)
{
	unsigned uid;
	char path[700];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *d;

	d = opendir(base);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (sscanf(e->d_name, "u%u", &uid) != 1 || uid < lo || uid - lo >= count)
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			*ret_ino = st.st_ino;
			n++;
		}
	}
	closedir(d);
	return n;
}

/* A cgroup file's number (0: not there). */
static uint64_t
cg_value(const char *path)
{
	unsigned long long v = 0;
	FILE *fp = fopen(path, "re");

	if (fp == NULL)
		return 0;
	if (fscanf(fp, "%llu", &v) != 1)
		v = 0;
	fclose(fp);
	return v;
}

/* Read key's value from a cgroup's flat-keyed file (0: not there). */
static uint64_t
cg_key(const char *path, const char *key)
{
	char line[256], name[64];
	unsigned long long v;
	uint64_t ret = 0;
	FILE *fp = fopen(path, "re");

	if (fp == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%63s %llu", name, &v) == 2 && strcmp(name, key) == 0) {
			ret = v;
			break;
		}
	fclose(fp);
	return ret;
}

/*
 * The most memory other than shmem (file cache, mostly) charged to one of
 * the daemon's run cgroups: cgroup2 u<uid>/code, cgroup1 u<uid>; usage less
 * shmem (cgroup2 memory.current and "shmem", cgroup1 memory.usage_in_bytes
 * and "total_shmem" of memory.stat). With one session and its runs done,
 * that is what the session's runs left (prepared sandboxes hold a little).
 */
uint64_t
run_cgroup_cache(const struct fixture *f, uint64_t *ret_shmem)
{
	char base[600], dir[900], path[1000];
	struct dirent *de;
	uint64_t best = 0, usage, shmem;
	int v = runs_cgroup(f, base, sizeof(base));
	DIR *d = opendir(base);

	assert_true(v > 0);
	assert_non_null(d);
	*ret_shmem = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != 'u')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s%s", base, de->d_name, v == 2 ? "/code" : "");
		snprintf(path, sizeof(path), "%s/%s", dir,
			 v == 2 ? "memory.current" : "memory.usage_in_bytes");
		usage = cg_value(path);
		snprintf(path, sizeof(path), "%s/memory.stat", dir);
		shmem = cg_key(path, v == 2 ? "shmem" : "total_shmem");
		if (usage > shmem && usage - shmem > best) {
			best = usage - shmem;
			*ret_shmem = shmem;
		}
	}
	closedir(d);
	return best;
}
