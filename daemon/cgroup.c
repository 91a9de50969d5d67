/* cgroup.c: per-run memory cgroups on the cgroup v1 memory hierarchy. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write a short string to a control file. */
static int
cgroup_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
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

/* Read a control file into buf. */
static int
cgroup_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Our own path in the v1 memory hierarchy, from /proc/self/cgroup. */
static int
cgroup_self_memory(char *ret, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int r = -ENOENT;

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *ctl = strchr(line, ':'), *path;

		if (ctl == NULL || (path = strchr(ctl + 1, ':')) == NULL)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(ctl + 1, "memory") == 0 || strstr(ctl + 1, ",memory") != NULL ||
		    strncmp(ctl + 1, "memory,", 7) == 0) {
			snprintf(ret, len, "%s", strcmp(path, "/") == 0 ? "" : path);
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int
cgroup_init(struct cgroup *cg)
{
	char self[400], probe[600];
	struct stat st;
	int r;

	memset(cg, 0, sizeof(*cg));
	r = cgroup_self_memory(self, sizeof(self));
	if (r < 0 || stat("/sys/fs/cgroup/memory", &st) < 0) {
		snprintf(cg->why, sizeof(cg->why),
			 "no cgroup v1 memory hierarchy%s; memory limit is RLIMIT_AS only",
			 access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0
				 ? " (cgroup v2 memory is not supported yet)"
				 : "");
		return 0;
	}
	if ((size_t)snprintf(cg->base, sizeof(cg->base), "/sys/fs/cgroup/memory%s/airlock", self) >=
	    sizeof(cg->base))
		return -ENAMETOOLONG;
	if (mkdir(cg->base, 0700) < 0 && errno != EEXIST) {
		snprintf(cg->why, sizeof(cg->why),
			 "cannot create %s: %s; memory limit is RLIMIT_AS only", cg->base,
			 strerror(errno));
		return 0;
	}
	snprintf(probe, sizeof(probe), "%s/memory.limit_in_bytes", cg->base);
	if (access(probe, W_OK) < 0) {
		snprintf(cg->why, sizeof(cg->why),
			 "%s not writable; memory limit is RLIMIT_AS only", probe);
		return 0;
	}
	cg->enabled = true;
	snprintf(cg->why, sizeof(cg->why), "cgroup v1 memory controller at %s", cg->base);
	return 0;
}

void
cgroup_sweep(const struct cgroup *cg, uint32_t uid_lo, uint32_t uid_hi)
{
	uint32_t uid;

	if (!cg->enabled)
		return;
	for (uid = uid_lo; uid < uid_hi; uid += 2) {
		char path[600];

		snprintf(path, sizeof(path), "%s/u%" PRIu32, cg->base, uid);
		(void)rmdir(path);
	}
}

int
cgroup_run_create(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes)
{
	char path[600], val[32];
	int r;

	if (!cg->enabled)
		return 0;
	snprintf(path, sizeof(path), "%s/u%" PRIu32, cg->base, uid);
	/* A cgroup left by a run whose finish failed is removed and made
	 * afresh: its oom_kill count never resets and would blame this run. */
	if (mkdir(path, 0700) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (rmdir(path) < 0 || mkdir(path, 0700) < 0)
			return -errno;
	}
	snprintf(val, sizeof(val), "%" PRIu64, memory_bytes);
	snprintf(path, sizeof(path), "%s/u%" PRIu32 "/memory.limit_in_bytes", cg->base, uid);
	r = cgroup_write(path, val);
	if (r < 0)
		return r;
	/* No swap either, where swap accounting exists. */
	snprintf(path, sizeof(path), "%s/u%" PRIu32 "/memory.memsw.limit_in_bytes", cg->base, uid);
	(void)cgroup_write(path, val);
	return 0;
}

int
cgroup_run_set_limit(const struct cgroup *cg, uint32_t uid, uint64_t memory_bytes)
{
	char mem[600], memsw[600], val[32];
	int r;

	if (!cg->enabled)
		return 0;
	snprintf(val, sizeof(val), "%" PRIu64, memory_bytes);
	snprintf(mem, sizeof(mem), "%s/u%" PRIu32 "/memory.limit_in_bytes", cg->base, uid);
	snprintf(memsw, sizeof(memsw), "%s/u%" PRIu32 "/memory.memsw.limit_in_bytes", cg->base,
		 uid);
	/* memsw may never be below memory: raise it first, lower it last. */
	(void)cgroup_write(memsw, val);
	r = cgroup_write(mem, val);
	if (r < 0)
		return r;
	(void)cgroup_write(memsw, val);
	return 0;
}

int
cgroup_run_open_self(const struct cgroup *cg, uint32_t uid, int *ret_fd)
{
	char path[600];
	int fd;

	if (!cg->enabled) {
		*ret_fd = -1;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/u%" PRIu32 "/tasks", cg->base, uid);
	/* Opened here, as root: the kernel checks a migration against the
	 * opener's credentials, so the sandbox needs no right of its own. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

int
cgroup_run_open_stats(const struct cgroup *cg, uint32_t uid, int ret_fds[2])
{
	static const char *const files[2] = {"memory.max_usage_in_bytes", "memory.oom_control"};
	int fds[2] = {-1, -1}, i;

	if (!cg->enabled) {
		ret_fds[0] = ret_fds[1] = -1;
		return 0;
	}
	for (i = 0; i < 2; i++) {
		char path[600];

		snprintf(path, sizeof(path), "%s/u%" PRIu32 "/%s", cg->base, uid, files[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			int r = -errno;

			if (i == 1)
				close(fds[0]);
			return r;
		}
	}
	ret_fds[0] = fds[0];
	ret_fds[1] = fds[1];
	return 0;
}

/* Read a control file through an open fd, from its start. */
static int
cgroup_pread(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Parse the peak and the oom kill count out of their files' text. */
static void
cgroup_parse_stats(const char *peak_txt, const char *oom_txt, uint64_t *ret_peak, bool *ret_oom)
{
	const char *k = oom_txt != NULL ? strstr(oom_txt, "oom_kill ") : NULL;

	*ret_peak = peak_txt != NULL ? strtoull(peak_txt, NULL, 10) : 0;
	*ret_oom = k != NULL && strtoull(k + 9, NULL, 10) > 0;
}

int
cgroup_read_stats(int peak_fd, int oom_fd, uint64_t *ret_peak, bool *ret_oom)
{
	char peak[64], oom[1024];

	if (peak_fd < 0 || oom_fd < 0) {
		*ret_peak = 0;
		*ret_oom = false;
		return 0;
	}
	if (cgroup_pread(peak_fd, peak, sizeof(peak)) < 0 ||
	    cgroup_pread(oom_fd, oom, sizeof(oom)) < 0)
		return -EIO;
	cgroup_parse_stats(peak, oom, ret_peak, ret_oom);
	return 0;
}

int
cgroup_run_finish(const struct cgroup *cg, uint32_t uid, uint64_t *ret_peak, bool *ret_oom)
{
	char path[600], pbuf[64], obuf[1024];
	uint64_t peak = 0;
	bool oom = false, have_peak, have_oom;

	if (!cg->enabled) {
		*ret_peak = 0;
		*ret_oom = false;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/u%" PRIu32 "/memory.max_usage_in_bytes", cg->base, uid);
	have_peak = cgroup_read(path, pbuf, sizeof(pbuf)) == 0;
	snprintf(path, sizeof(path), "%s/u%" PRIu32 "/memory.oom_control", cg->base, uid);
	have_oom = cgroup_read(path, obuf, sizeof(obuf)) == 0;
	cgroup_parse_stats(have_peak ? pbuf : NULL, have_oom ? obuf : NULL, &peak, &oom);
	snprintf(path, sizeof(path), "%s/u%" PRIu32, cg->base, uid);
	if (rmdir(path) < 0)
		return -errno;
	*ret_peak = peak;
	*ret_oom = oom;
	return 0;
}
