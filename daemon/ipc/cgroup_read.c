/*
 * cgroup_read.c: the back ends' names and the readers of control files'
 * text and of a run's figures (cgroup_read.h). Linked by the spawner, the
 * supervisor, the frontend and the config.
 */
#include "cgroup_read.h"
#include "nametab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cgroup_kind_names[] = {
	[CGROUP_NONE] = "rlimit",
	[CGROUP_V1] = "cgroup1",
	[CGROUP_V2] = "cgroup2",
	[CGROUP_AUTO] = "auto",
};

const char *
cgroup_kind_name(enum cgroup_kind kind)
{
	return nametab_name(cgroup_kind_names, kind, "?");
}

int
cgroup_kind_from_name(const char *name, enum cgroup_kind *ret)
{
	size_t i;

	for (i = 0; i < sizeof(cgroup_kind_names) / sizeof(cgroup_kind_names[0]); i++)
		if (strcmp(name, cgroup_kind_names[i]) == 0) {
			*ret = (enum cgroup_kind)i;
			return 0;
		}
	return -EINVAL;
}

uint64_t
cgroup_parse_key(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
			return strtoull(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return 0;
}

/* Moved from the supervisor (sandbox_supervise.c, as sandbox_cgroup_key). */
uint64_t
cgroup_key(int fd, const char *key)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return cgroup_parse_key(buf, key);
}

/*
 * The oom kills counted in a memory.events (v2) or memory.oom_control (v1)
 * text: both have "oom_kill N"; v2 also "oom_group_kill N" (memory.oom.group).
 */
uint64_t
cgroup_oom_count(const char *text)
{
	return cgroup_parse_key(text, "oom_kill") + cgroup_parse_key(text, "oom_group_kill");
}

/* Read a control file through an open fd, from its start. */
int
cgroup_pread(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Parse the peak and whether the oom killer fired since base out of their
 * files' text (NULL: not read). */
void
cgroup_parse_stats(const char *peak_txt, const char *oom_txt, uint64_t ooms_before,
		   uint64_t *ret_peak, bool *ret_oom)
{
	*ret_peak = peak_txt != NULL ? strtoull(peak_txt, NULL, 10) : 0;
	*ret_oom = oom_txt != NULL && cgroup_oom_count(oom_txt) > ooms_before;
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
	cgroup_parse_stats(peak, oom, 0, ret_peak, ret_oom);
	return 0;
}
