/* memfd.c: create, seal and verify memfds. */
#include "memfd.h"

#include <errno.h>
#include <fcntl.h>
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

int
memfd_sealed_create(const char *name, const void *data, size_t len, int *ret_fd)
{
	const char *p = data;
	size_t off = 0;
	int fd = -1, r;

	r = memfd_new(name, &fd);
	if (r < 0)
		return r;
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			goto fail;
		}
		off += (size_t)n;
	}
	r = memfd_seal(fd);
	if (r < 0)
		goto fail;
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
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

int
memfd_sealed_copy(int fd, uint64_t max, int *ret_fd, uint64_t *ret_len, uint64_t *ret_size)
{
	struct stat st;
	uint64_t want, done = 0;
	off_t off = 0;
	int mfd = -1, r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	want = (uint64_t)st.st_size < max ? (uint64_t)st.st_size : max;
	r = memfd_new("airlock-copy", &mfd);
	if (r < 0)
		return r;
	while (done < want) {
		ssize_t n = sendfile(mfd, fd, &off, (size_t)(want - done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto fail;
		}
		if (n == 0)
			break; /* the file shrank under us: what we have is it */
		done += (uint64_t)n;
	}
	r = memfd_seal(mfd);
	if (r < 0)
		goto fail;
	*ret_fd = mfd;
	*ret_len = done;
	*ret_size = (uint64_t)st.st_size;
	return 0;
fail:
	close(mfd);
	return r;
}
