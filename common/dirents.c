/* dirents.c: a directory's entries, allocation-free. See dirents.h. */
#include "dirents.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

void
dirents_init(struct dirents *it, int fd)
{
	it->fd = fd;
	it->len = 0;
	it->off = 0;
	it->err = 0;
}

const struct dirent64 *
dirents_next(struct dirents *it)
{
	const struct dirent64 *d;

	if (it->off >= it->len) {
		if (it->err != 0)
			return NULL;
		it->len = syscall(SYS_getdents64, it->fd, it->buf, sizeof(it->buf));
		it->off = 0;
		if (it->len <= 0) {
			it->err = it->len < 0 ? -errno : 0;
			it->len = 0;
			return NULL;
		}
	}
	d = (const struct dirent64 *)(it->buf + it->off);
	it->off += d->d_reclen;
	return d;
}
