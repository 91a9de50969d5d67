/*
 * fuzz_archive.c: libFuzzer harness for session_archive_walk()
 * (daemon/frontend/session_archive.c), the frontend's reader of workspace
 * archives: a client's at session_open, or the daemon's own copy read back
 * after a restart. It must never read outside the buffer, and every entry
 * it hands on must be what the keeper may be asked to write: a relative
 * path of plain components, its data inside the buffer, the sizes within
 * the quota.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session_archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ctx {
	const uint8_t *buf;
	size_t len;
	uint64_t used;
};

static int
check(const struct session_archive_entry *e, void *arg)
{
	struct ctx *c = arg;
	const char *p = e->path, *s;
	size_t n = strnlen(e->path, sizeof(e->path));

	if (n == sizeof(e->path) || (n == 0 && !e->dir) || p[0] == '/')
		abort();
	for (s = p; n > 0; s += strcspn(s, "/") + 1) {
		size_t k = strcspn(s, "/");

		if (k == 0 || (k == 1 && s[0] == '.') || (k == 2 && s[0] == '.' && s[1] == '.'))
			abort();
		if (s[k] == '\0')
			break;
	}
	if (e->dir ? e->size != 0
		   : (e->data < c->buf || e->size > c->len ||
		      (size_t)(e->data - c->buf) > c->len - e->size))
		abort();
	c->used += e->size;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctx c = {.buf = data, .len = size};
	char why[256];
	size_t n;
	int r;

	/* The buffer is exactly the input: ASan sees a read past its end. */
	r = session_archive_walk(data, size, 1 << 20, check, &c, why, sizeof(why), &n);
	if (r != 0 && r != -EBADMSG && r != -EPERM && r != -EFBIG)
		abort();
	if (c.used > 1 << 20 || strnlen(why, sizeof(why)) == sizeof(why))
		abort();
	return 0;
}
