/*
 * mountinfo.c: reading the text of /proc/PID/mountinfo (proc_pid_mountinfo(5)).
 * Pure: the caller reads the file.
 */
#include <stdio.h>
#include <string.h>

#include "mountinfo.h"

int
mountinfo_first_below(const char *mountinfo, const char *dir, char *ret, size_t size)
{
	size_t dlen = strlen(dir);
	const char *line = mountinfo;

	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n'), *mp = line;
		size_t len;
		int field;

		/* The fifth field is the mount point: skip four. */
		for (field = 0; field < 4 && mp != NULL; field++) {
			mp = strchr(mp, ' ');
			if (mp != NULL)
				mp++;
		}
		if (mp != NULL && (end == NULL || mp < end)) {
			len = strcspn(mp, " \n");
			if (len > dlen && strncmp(mp, dir, dlen) == 0 && mp[dlen] == '/') {
				snprintf(ret, size, "%.*s", (int)len, mp);
				return 1;
			}
		}
		line = end != NULL ? end + 1 : NULL;
	}
	if (size > 0)
		ret[0] = '\0';
	return 0;
}
