/*
 * cgroup1.c: the v1 memory back end (cgroup.h: memory only, processes by
 * RLIMIT_NPROC, cpu by polling /proc) and the fallback to rlimits when
 * neither hierarchy can be used. cgroup.c calls these where the kind is v1.
 */
#include "cgroup.h"
#include "cgroup_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set the v1 memory back end up, or say in why why not. */
static int
cgroup1_init(struct cgroup *cg, const char *self, char *why, size_t whylen)
{
	char own[400], probe[600], mem[300];
	struct stat st;
	int r;

	if ((r = cgroup_path(mem, sizeof(mem), "%s/memory", cg->root)) < 0)
		return r;
	if (cgroup_self_path(self, false, own, sizeof(own)) < 0 || stat(mem, &st) < 0) {
		snprintf(why, whylen, "no cgroup v1 memory hierarchy");
		return 0;
	}
	if ((r = cgroup_path(cg->base, sizeof(cg->base), "%s%s/airlock", mem, own)) < 0)
		return r;
	if (mkdir(cg->base, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", cg->base, strerror(errno));
		cg->base[0] = '\0';
		return 0;
	}
	if ((r = cgroup_path(probe, sizeof(probe), "%s/memory.limit_in_bytes", cg->base)) < 0)
		return r;
	if (access(probe, W_OK) < 0) {
		snprintf(why, whylen, "%s not writable", probe);
		cg->base[0] = '\0';
		return 0;
	}
	cg->kind = CGROUP_V1;
	snprintf(cg->why, sizeof(cg->why),
		 "cgroup1 memory controller at %s (processes by RLIMIT_NPROC, cpu by polling)",
		 cg->base);
	return 0;
}

/* cgroup_init after cgroup2 (why2: why not it, or "not tried"): v1 if want
 * allows it and the host has it, else rlimits, with cg->why saying why. */
int
cgroup1_init_fallback(struct cgroup *cg, const char *self, enum cgroup_kind want, const char *why2)
{
	char why1[300] = "not tried";
	int r;

	if (want == CGROUP_AUTO || want == CGROUP_V1) {
		if ((r = cgroup1_init(cg, self, why1, sizeof(why1))) < 0)
			return r;
		if (cg->kind == CGROUP_V1) {
			if (want == CGROUP_AUTO) {
				size_t n = strlen(cg->why);

				snprintf(cg->why + n, sizeof(cg->why) - n, "; not cgroup2: %s",
					 why2);
			}
			return 0;
		}
	}
	if (want == CGROUP_NONE)
		snprintf(cg->why, sizeof(cg->why), "rlimit (as configured)");
	else
		snprintf(cg->why, sizeof(cg->why),
			 "rlimit: falling back to RLIMIT_AS for memory, RLIMIT_NPROC for "
			 "processes, /proc polling for cpu (weaker: docs/security.md); "
			 "cgroup2: %s; cgroup1: %s",
			 why2, why1);
	return 0;
}

/* v1: remove the run cgroups an earlier instance left, over the uid range. */
void
cgroup1_sweep(const struct cgroup *cg, uint32_t uid_lo, uint32_t uid_hi)
{
	uint32_t uid;

	for (uid = uid_lo; uid < uid_hi; uid += 2) {
		char path[600];

		snprintf(path, sizeof(path), "%s/u%" PRIu32, cg->base, uid);
		(void)rmdir(path);
	}
}

/* v1: make a run's cgroup node at path (a kept one stays). */
int
cgroup1_run_mkdir(const char *path, bool keep)
{
	int r;

	if (mkdir(path, 0700) < 0) {
		/* A cgroup left by a run whose finish failed is removed and
		 * made afresh, unless it is the session's own, kept. */
		if (errno != EEXIST)
			return -errno;
		if (!keep) {
			if ((r = cgroup_rmdir(path, true)) < 0)
				return r;
			if (mkdir(path, 0700) < 0)
				return -errno;
		}
	}
	return 0;
}

/*
 * v1: the memory limit of the cgroup node, and no swap beyond it where swap
 * accounting exists. memsw may never be below memory: raised first, lowered
 * last (a kept cgroup's limits go up and down from run to run).
 */
int
cgroup1_set_memory(int nfd, uint64_t memory_bytes)
{
	char val[32];
	int r;

	snprintf(val, sizeof(val), "%" PRIu64, memory_bytes);
	(void)cgroup_write_in(nfd, "memory.memsw.limit_in_bytes", val);
	if ((r = cgroup_write_in(nfd, "memory.limit_in_bytes", val)) < 0)
		return r;
	(void)cgroup_write_in(nfd, "memory.memsw.limit_in_bytes", val);
	return 0;
}
