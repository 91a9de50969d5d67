/* memfd.c: create, seal and verify memfds. */
#include "memfd.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

int
memfd_new(const char *name, int *ret_fd)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

int
memfd_seal(int fd)
{
	if (fcntl(fd, F_ADD_SEALS, MEMFD_PAYLOAD_SEALS) < 0)
		return -errno;
	return 0;
}

/*
 * The end of making a memfd here: if r (the filling) succeeded, seal fd and
 * hand it over in *ret_fd; else, or if the seal fails, close it.
 */
static int
memfd_seal_or_close(int fd, int r, int *ret_fd)
{
	if (r == 0)
		r = memfd_seal(fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int
memfd_sealed_create(const char *name, const void *data, size_t len, int *ret_fd)
{
	int fd = -1, r;

	r = memfd_new(name, &fd);
	if (r < 0)
		return r;
	return memfd_seal_or_close(fd, fd_write_all(fd, data, len), ret_fd);
}

int
memfd_check_sealed(int fd, uint64_t max, uint64_t *ret_size)
{
	struct stat st;
	int seals;

	/* F_GET_SEALS fails with EINVAL on anything that is not a memfd/shmem. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0)
		return errno == EINVAL ? -EPERM : -errno;
	if ((seals & MEMFD_PAYLOAD_SEALS) != MEMFD_PAYLOAD_SEALS)
		return -EPERM;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EPERM;
	if ((uint64_t)st.st_size > max)
		return -E2BIG;
	*ret_size = (uint64_t)st.st_size;
	return 0;
}

/* Copy len bytes at off of fd to the same offset of mfd. Stops early
 * if the file shrank; *ret_done gets what was copied. */
static int
memfd_copy_range(int mfd, int fd, off_t off, uint64_t len, uint64_t *ret_done)
{
	uint64_t done = 0;

	if (lseek(mfd, off, SEEK_SET) < 0)
		return -errno;
	while (done < len) {
		ssize_t n = sendfile(mfd, fd, &off, (size_t)(len - done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break; /* the file shrank under us: what we have is it */
		done += (uint64_t)n;
	}
	*ret_done = done;
	return 0;
}

int
memfd_sealed_copy_sparse(int fd, uint64_t max, uint64_t max_data, int *ret_fd, uint64_t *ret_len,
			 uint64_t *ret_size)
{
	struct stat st;
	uint64_t want, pos = 0, data = 0, end;
	int mfd = -1, r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	want = (uint64_t)st.st_size < max ? (uint64_t)st.st_size : max;
	end = want;
	r = memfd_new("airlock-copy", &mfd);
	if (r < 0)
		return r;
	/*
	 * Only the data is copied; holes stay holes (SEEK_DATA, SEEK_HOLE).
	 * A dense copy of a sparse file turned a few pages of a run's
	 * workspace into up to 64 MiB of the daemon's memory per artifact
	 * (issue 13, finding 2). The data copied stops at max_data: the
	 * caller's share of its uid's byte budget.
	 */
	while (pos < end) {
		off_t ds = lseek(fd, (off_t)pos, SEEK_DATA), de;
		uint64_t n, done = 0;

		if (ds < 0 && errno == ENXIO)
			break; /* nothing but a hole up to the end */
		if (ds < 0 && errno != EINVAL) {
			r = -errno;
			goto fail;
		}
		if (ds < 0) {
			ds = (off_t)pos; /* no SEEK_DATA here: all of it is data */
			de = (off_t)end;
		} else {
			de = lseek(fd, ds, SEEK_HOLE);
			if (de < 0)
				de = (off_t)end;
		}
		if ((uint64_t)ds >= end)
			break;
		if ((uint64_t)de > end)
			de = (off_t)end;
		n = (uint64_t)(de - ds);
		if (data + n > max_data) {
			/* Out of budget: the copy ends here, truncated. */
			n = max_data - data;
			end = (uint64_t)ds + n;
		}
		r = memfd_copy_range(mfd, fd, ds, n, &done);
		if (r < 0)
			goto fail;
		data += done;
		pos = (uint64_t)ds + done;
		if (done < n) {
			end = pos;
			break;
		}
	}
	r = ftruncate(mfd, (off_t)end) < 0 ? -errno : 0;
	r = memfd_seal_or_close(mfd, r, ret_fd);
	if (r < 0)
		return r;
	*ret_len = end;
	*ret_size = (uint64_t)st.st_size;
	return 0;
fail:
	close(mfd);
	return r;
}

int
memfd_sealed_copy(int fd, uint64_t max, int *ret_fd, uint64_t *ret_len, uint64_t *ret_size)
{
	return memfd_sealed_copy_sparse(fd, max, UINT64_MAX, ret_fd, ret_len, ret_size);
}

int
memfd_give(int fd, int *ret_give)
{
	char path[64];
	int give;

	/*
	 * A reopen is a new open file description: O_RDWR takes write access
	 * on the inode (i_writecount), which a memfd_create() description does
	 * not (alloc_file_pseudo). The seals still refuse every write.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	give = open(path, O_RDWR | O_CLOEXEC);
	if (give < 0)
		return -errno;
	/*
	 * Mode 0: the peer (another uid) cannot open it again through
	 * /proc/PID/fd, which would keep the pages with a description that
	 * memfd_released() does not see. The seals leave the mode free.
	 */
	if (fchmod(fd, 0) < 0) {
		int r = -errno;

		close(give);
		return r;
	}
	*ret_give = give;
	return 0;
}

int
memfd_released(int probe)
{
	/*
	 * A read lease is refused (EAGAIN) while any description of the file
	 * is open for writing (check_conflicting_open: inode_is_open_for_write).
	 * The only such description is the one memfd_give() made; it lives on
	 * in a socket's queue, a receiver's fd table and each mapping of it,
	 * and goes at the last of them. The lease, if given, is taken back at
	 * once. The caller owns the file (leases need that, or CAP_LEASE).
	 */
	if (fcntl(probe, F_SETLEASE, F_RDLCK) < 0)
		return errno == EAGAIN ? 0 : -errno;
	(void)fcntl(probe, F_SETLEASE, F_UNLCK);
	return 1;
}
