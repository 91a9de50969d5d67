/* closefds.c: close every fd but a few. See closefds.h. */
#include "closefds.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

int
closefds_except(const int *keep, size_t nkeep)
{
	int sorted[CLOSEFDS_KEEP_MAX];
	size_t i, j;
	unsigned lo = 0;

	if (nkeep > CLOSEFDS_KEEP_MAX)
		return -EINVAL;
	for (i = 0; i < nkeep; i++)
		sorted[i] = keep[i];
	for (i = 1; i < nkeep; i++)
		for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	/* The gaps between the kept fds, in order, then everything above. */
	for (i = 0; i < nkeep; i++) {
		if (sorted[i] < 0)
			continue;
		if ((unsigned)sorted[i] > lo &&
		    syscall(SYS_close_range, lo, (unsigned)sorted[i] - 1, 0) < 0)
			return -errno;
		if ((unsigned)sorted[i] + 1 > lo)
			lo = (unsigned)sorted[i] + 1;
	}
	if (syscall(SYS_close_range, lo, ~0U, 0) < 0)
		return -errno;
	return 0;
}
