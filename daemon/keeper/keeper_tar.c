/*
 * keeper_tar.c: the keeper writes its workspace as one ustar archive
 * (keeper_tar.h). It walks its own tmpfs from the root fd with
 * openat(O_NOFOLLOW) and fstatat(AT_SYMLINK_NOFOLLOW): a link the session's
 * code made is left out, never followed, so the archive holds nothing from
 * outside the workspace. No allocation: one directory buffer per level on
 * the stack (at most 128 levels: a name ustar holds is 255 bytes).
 */
#include "keeper_tar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirents.h"
#include "fdio.h"
#include "ustar.h"

#define TAR_NAME_MAX 255 /* prefix (155) "/" name (100) */

struct tar {
	int out;
	uint64_t bytes;
	uint32_t skipped;
};

/* Put path into h's prefix and name (split at a "/"); false if it cannot. */
static bool
tar_split(struct ustar_header *h, const char *path, size_t len)
{
	size_t i;

	if (len <= sizeof(h->name)) {
		memcpy(h->name, path, len);
		return true;
	}
	for (i = len - 1; i > 0; i--) {
		if (path[i] != '/')
			continue;
		if (i > sizeof(h->prefix))
			continue;
		if (len - i - 1 > sizeof(h->name) || len - i - 1 == 0)
			return false;
		memcpy(h->prefix, path, i);
		memcpy(h->name, path + i + 1, len - i - 1);
		return true;
	}
	return false;
}

/* Write one header for path (a file of size bytes, or a directory). */
static int
tar_header(struct tar *t, const char *path, size_t len, const struct stat *st, uint64_t size)
{
	struct ustar_header h;
	int r;

	memset(&h, 0, sizeof(h));
	if (!tar_split(&h, path, len))
		return -ENAMETOOLONG;
	snprintf(h.mode, sizeof(h.mode), "%07o", (unsigned)(st->st_mode & 0777));
	snprintf(h.uid, sizeof(h.uid), "%07o", 1000u);
	snprintf(h.gid, sizeof(h.gid), "%07o", 1000u);
	snprintf(h.size, sizeof(h.size), "%011llo", (unsigned long long)size);
	snprintf(h.mtime, sizeof(h.mtime), "%011llo",
		 (unsigned long long)(st->st_mtim.tv_sec > 0 ? st->st_mtim.tv_sec : 0));
	h.typeflag = S_ISDIR(st->st_mode) ? USTAR_TYPE_DIR : USTAR_TYPE_FILE;
	memcpy(h.magic, "ustar\0", 6);
	memcpy(h.version, "00", 2);
	snprintf(h.chksum, sizeof(h.chksum), "%06o", ustar_checksum(&h));
	r = fd_write_all(t->out, &h, sizeof(h));
	if (r == 0)
		t->bytes += USTAR_BLOCK;
	return r;
}

/* size bytes of zeros. */
static int
tar_zeros(struct tar *t, uint64_t size)
{
	static const char zero[USTAR_BLOCK];
	int r;

	while (size > 0) {
		size_t n = size < sizeof(zero) ? (size_t)size : sizeof(zero);

		r = fd_write_all(t->out, zero, n);
		if (r < 0)
			return r;
		t->bytes += n;
		size -= n;
	}
	return 0;
}

/* A regular file: its header, exactly the size it says, the padding. */
static int
tar_file(struct tar *t, int dir, const char *name, const char *path, size_t len)
{
	struct stat st;
	uint64_t size, done = 0;
	int fd, r;

	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* gone since it was listed */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		t->skipped++;
		return 0;
	}
	size = (uint64_t)st.st_size;
	r = tar_header(t, path, len, &st, size);
	while (r == 0 && done < size) {
		ssize_t n = sendfile(t->out, fd, NULL, (size_t)(size - done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else if (n == 0) /* cut while we read: zeros keep the header true */
			r = tar_zeros(t, size - done), done = size;
		else
			done += (uint64_t)n, t->bytes += (uint64_t)n;
	}
	close(fd);
	if (r == 0 && size % USTAR_BLOCK != 0)
		r = tar_zeros(t, USTAR_BLOCK - size % USTAR_BLOCK);
	return r;
}

/* Every entry of the open directory dir, whose path is path[0..len). */
static int
tar_dir(struct tar *t, int dir, char *path, size_t len)
{
	struct dirents it;
	const struct dirent64 *d;
	int r = 0;

	dirents_init(&it, dir);
	while (r == 0 && (d = dirents_next(&it)) != NULL) {
		size_t nl = strlen(d->d_name), plen = len + (len > 0) + nl;
		struct stat st;
		int sub;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (plen > TAR_NAME_MAX || fstatat(dir, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
			t->skipped++;
			continue;
		}
		if (len > 0)
			path[len] = '/';
		memcpy(path + len + (len > 0), d->d_name, nl + 1);
		if (S_ISREG(st.st_mode)) {
			r = tar_file(t, dir, d->d_name, path, plen);
		} else if ((r = tar_header(t, path, plen, &st, 0)) == -ENAMETOOLONG) {
			t->skipped++;
			r = 0;
		} else if (r == 0) {
			sub = openat(dir, d->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				r = tar_dir(t, sub, path, plen);
				close(sub);
			}
		}
		if (r == -ENAMETOOLONG) {
			t->skipped++;
			r = 0;
		}
		path[len] = '\0';
	}
	return r != 0 ? r : it.err;
}

int
keeper_tar_write(int root, int out, uint64_t *ret_bytes, uint32_t *ret_skipped)
{
	struct tar t = {.out = out};
	char path[TAR_NAME_MAX + 1] = "";
	int dir, r;

	/* A fresh open: a dup of root would share its directory offset. */
	dir = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	r = tar_dir(&t, dir, path, 0);
	close(dir);
	if (r == 0)
		r = tar_zeros(&t, 2 * USTAR_BLOCK);
	if (r < 0)
		return r;
	*ret_bytes = t.bytes;
	*ret_skipped = t.skipped;
	return 0;
}
