/*
 * fdio.h: write a whole buffer to an fd; close one that may not be open. Header-only, like clock.h:
 * the airlock command links only libairlock, and the daemon's sandbox set-up calls it between clone
 * and exec (it allocates nothing).
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

/*
 * Close fd if it is open (>= 0), errno kept, and return -1 for the caller to
 * store (systemd's safe_close): `x->fd = fd_close(x->fd);` leaves no number
 * behind that a later close could take from another owner.
 */
static inline int
fd_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return -1;
}

/* Close both ends of a pipe or socketpair that may not be open; both -1 after. */
static inline void
fd_close_pair(int fd[2])
{
	fd[0] = fd_close(fd[0]);
	fd[1] = fd_close(fd[1]);
}

#endif
