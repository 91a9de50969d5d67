/*
 * session_archive.c: the strict reader of workspace archives (ustar). It
 * runs in the frontend, which holds no capability: no privileged process
 * parses an archive (tests/layout link-check). Whatever it passes still
 * goes through the keeper's link-refusing writes into a tmpfs whose size
 * is the session's quota, so a bug here cannot reach the host either.
 */
#include "session_archive.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ustar.h"

static int
walk_refuse(struct session_archive_iter *w, int err, const char *fmt, ...)
{
	va_list ap;
	int k;

	k = snprintf(w->why, w->whylen, "archive entry %zu (offset %zu): ", w->n + 1, w->off);
	if (k >= 0 && (size_t)k < w->whylen) {
		va_start(ap, fmt);
		vsnprintf(w->why + k, w->whylen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* An octal field: digits, optionally led by spaces and ended by NUL or
 * space; base-256 (GNU) and anything else refused. 0 or -EBADMSG. */
static int
archive_octal(const char *f, size_t len, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;
	bool digits = false;

	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v > (UINT64_MAX >> 3))
			return -EBADMSG;
		v = (v << 3) | (uint64_t)(f[i] - '0');
		digits = true;
	}
	for (; i < len; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return -EBADMSG;
	if (!digits)
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* A NUL-padded field's length (it may fill the field). */
static size_t
archive_field_len(const char *f, size_t len)
{
	const char *z = memchr(f, '\0', len);

	return z != NULL ? (size_t)(z - f) : len;
}

/*
 * The entry's name into e->path, made relative and checked: prefix "/" name
 * (POSIX magic only: GNU's header has other fields there), one leading "./"
 * dropped (what `tar -C dir -cf x .` writes), a directory's one trailing "/"
 * dropped. Refused: absolute, an empty, "." or ".." component (a lexical
 * check is enough here: links are refused whole, so no name can lead
 * through one; the keeper's openat2 walk checks again).
 */
static int
archive_name(struct session_archive_iter *w, const struct ustar_header *h, bool posix, bool dir,
	     struct session_archive_entry *e)
{
	size_t plen = posix ? archive_field_len(h->prefix, sizeof(h->prefix)) : 0;
	size_t nlen = archive_field_len(h->name, sizeof(h->name));
	char full[sizeof(h->prefix) + 1 + sizeof(h->name) + 1];
	const char *p, *c;
	size_t len = 0, clen;

	if (plen > 0) {
		memcpy(full, h->prefix, plen);
		full[plen] = '/';
		len = plen + 1;
	}
	memcpy(full + len, h->name, nlen);
	len += nlen;
	full[len] = '\0';
	if (memchr(full, '\0', len) != NULL)
		return walk_refuse(w, -EPERM, "a NUL inside its name");
	p = full;
	if (strncmp(p, "./", 2) == 0)
		p += 2;
	len = strlen(p);
	if (dir && len > 0 && p[len - 1] == '/')
		len--;
	if (len == 0 && dir) {
		e->path[0] = '\0'; /* the workspace itself */
		return 0;
	}
	if (len == 0 || len > PROTO_PATH_MAX)
		return walk_refuse(w, -EPERM, "a name that is empty or longer than %d bytes",
				   PROTO_PATH_MAX);
	if (p[0] == '/')
		return walk_refuse(w, -EPERM, "an absolute name");
	memcpy(e->path, p, len);
	e->path[len] = '\0';
	for (c = e->path;; c += clen + 1) {
		clen = strcspn(c, "/");
		if (clen == 0 || (clen == 1 && c[0] == '.') ||
		    (clen == 2 && c[0] == '.' && c[1] == '.'))
			return walk_refuse(w, -EPERM, "%s: an empty, \".\" or \"..\" component",
					   e->path);
		if (c[clen] == '\0')
			return 0;
	}
}

/* The type: a plain file or a directory, and nothing else. */
static int
archive_type(struct session_archive_iter *w, char type, bool *ret_dir)
{
	switch (type) {
	case USTAR_TYPE_FILE:
	case USTAR_TYPE_FILE_OLD:
		*ret_dir = false;
		return 0;
	case USTAR_TYPE_DIR:
		*ret_dir = true;
		return 0;
	case '1':
	case '2':
		return walk_refuse(w, -EPERM, "a link (only files and directories)");
	case '3':
	case '4':
	case '6':
		return walk_refuse(w, -EPERM, "a device or FIFO (only files and directories)");
	default:
		return walk_refuse(w, -EPERM, "type '%c' (only files and directories)",
				   type >= 0x20 && type < 0x7f ? type : '?');
	}
}

/* Is the block all zeros? */
static bool
archive_zero(const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* One header at w->off, checked, into e (its data located, not copied). */
static int
archive_entry(struct session_archive_iter *w, const struct ustar_header *h,
	      struct session_archive_entry *e)
{
	uint64_t sum, size, blocks;
	bool posix, dir = false;
	int r;

	posix = memcmp(h->magic, "ustar\0", 6) == 0 && memcmp(h->version, "00", 2) == 0;
	if (!posix && memcmp(h->magic, "ustar  \0", 8) != 0)
		return walk_refuse(w, -EBADMSG, "not a ustar header");
	if (archive_octal(h->chksum, sizeof(h->chksum), &sum) < 0 || sum != ustar_checksum(h))
		return walk_refuse(w, -EBADMSG, "a bad checksum");
	r = archive_type(w, h->typeflag, &dir);
	if (r < 0)
		return r;
	if (archive_octal(h->size, sizeof(h->size), &size) < 0)
		return walk_refuse(w, -EBADMSG, "a bad size field");
	if (dir && size != 0)
		return walk_refuse(w, -EBADMSG, "a directory with contents");
	r = archive_name(w, h, posix, dir, e);
	if (r < 0)
		return r;
	blocks = (size + USTAR_BLOCK - 1) / USTAR_BLOCK;
	if (blocks > (w->len - w->off) / USTAR_BLOCK - 1)
		return walk_refuse(w, -EBADMSG, "%s: contents past the archive's end", e->path);
	if (size > w->quota - w->used)
		return walk_refuse(w, -EFBIG, "%s: past the workspace's %llu bytes", e->path,
				   (unsigned long long)w->quota);
	w->used += size;
	e->dir = dir;
	e->size = size;
	e->data = w->buf + w->off + USTAR_BLOCK;
	w->off += USTAR_BLOCK + (size_t)blocks * USTAR_BLOCK;
	return 0;
}

void
session_archive_iter_init(struct session_archive_iter *it, const void *buf, size_t len,
			  uint64_t quota, char *why, size_t whylen)
{
	*it = (struct session_archive_iter){
		.buf = buf, .len = len, .quota = quota, .why = why, .whylen = whylen};
	if (whylen > 0)
		why[0] = '\0';
}

int
session_archive_next(struct session_archive_iter *w, struct session_archive_entry *e)
{
	int r;

	if (w->done)
		return 0;
	if (w->len % USTAR_BLOCK != 0)
		return walk_refuse(w, -EBADMSG, "a length that is not whole blocks");
	if (w->len - w->off < 2 * USTAR_BLOCK)
		return walk_refuse(w, -EBADMSG, "no end (two zero blocks)");
	if (archive_zero(w->buf + w->off, USTAR_BLOCK)) {
		/* The end: two zero blocks, then nothing but zeros (tar
		 * pads to its record size). */
		if (!archive_zero(w->buf + w->off, w->len - w->off))
			return walk_refuse(w, -EBADMSG, "data after the end");
		w->done = true;
		return 0;
	}
	if (w->n == SESSION_ARCHIVE_ENTRIES_MAX)
		return walk_refuse(w, -EFBIG, "more than %d entries", SESSION_ARCHIVE_ENTRIES_MAX);
	r = archive_entry(w, (const struct ustar_header *)(w->buf + w->off), e);
	if (r < 0)
		return r;
	w->n++;
	return 1;
}

int
session_archive_walk(const void *buf, size_t len, uint64_t quota,
		     int (*each)(const struct session_archive_entry *e, void *arg), void *arg,
		     char *why, size_t whylen, size_t *ret_entries)
{
	struct session_archive_iter it;
	struct session_archive_entry e;
	int r;

	session_archive_iter_init(&it, buf, len, quota, why, whylen);
	while ((r = session_archive_next(&it, &e)) > 0) {
		if (each != NULL && (r = each(&e, arg)) < 0) {
			it.n--;
			return walk_refuse(&it, r, "%s: %s", e.path[0] ? e.path : ".",
					   strerror(-r));
		}
	}
	if (r < 0)
		return r;
	*ret_entries = it.n;
	return 0;
}
