/*
 * mountinfo.h: reading the text of /proc/PID/mountinfo.
 */
#ifndef AIRLOCK_MOUNTINFO_H
#define AIRLOCK_MOUNTINFO_H

#include <stddef.h>

/*
 * The first mount point strictly beneath dir (e.g. "/usr") in mountinfo's
 * text, its fifth field as the kernel writes it (octal escapes kept), copied
 * to ret (truncated to size); 1 when found, 0 when none ("" in ret).
 */
int mountinfo_first_below(const char *mountinfo, const char *dir, char *ret, size_t size);

#endif
