/*
 * fdio.h: write a whole buffer to an fd. Header-only, like clock.h: the
 * airlock command links only libairlock, and the daemon's sandbox set-up
 * calls it between clone and exec (it allocates nothing).
 */
#ifndef AIRLOCK_FDIO_H
#define AIRLOCK_FDIO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Write all len bytes of buf to fd, again after EINTR: 0 or -errno (-EIO
 * if the kernel took nothing). */
static inline int
fd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
