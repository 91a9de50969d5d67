/* bundle.c: decode and encode file bundles (bundle.h). */
#include "bundle.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clear.h"
#include "log.h"
#include "memfd.h"
#include "proto.h"
#include "rules.h"
#include "fdio.h"

/* Little-endian reads and writes, alignment-free. */
static uint64_t
bundle_get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = (v << 8) | p[n];
	return v;
}

static uint8_t *
bundle_put(uint8_t *p, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)(v & 0xff);
	return p + n;
}

int
bundle_mode_check(uint32_t mode)
{
	return mode == 0644 || mode == 0755 ? 0 : -EINVAL;
}

/* Does s hold no control byte (so that a reason may quote it)? */
static bool
bundle_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

/*
 * One pass over the entries. Without out, check the structure and sum the
 * name bytes; with out, copy names into names and fill out (the structure
 * was checked by the first pass).
 */
static int
bundle_walk(const uint8_t *b, size_t len, uint32_t count, struct bundle_file *out, char *names,
	    size_t *ret_name_bytes, uint64_t *ret_bytes, char *why, size_t whylen)
{
	size_t off = BUNDLE_HDR_LEN, name_bytes = 0;
	uint64_t bytes = 0, dlen;
	uint32_t i, mode;
	unsigned nlen;
	const uint8_t *name;

	for (i = 0; i < count; i++) {
		if (len - off < 2)
			return log_why(-EBADMSG, why, whylen,
				       "truncated: entry %u of %u has no header (%zu bytes)", i,
				       count, len);
		nlen = (unsigned)bundle_get(b + off, 2);
		if (nlen == 0 || nlen > PROTO_NAME_MAX)
			return log_why(-EBADMSG, why, whylen,
				       "entry %u: name length %u is not 1 to %d", i, nlen,
				       PROTO_NAME_MAX);
		if (len - off - 2 < (size_t)nlen + 12)
			return log_why(-EBADMSG, why, whylen,
				       "truncated: entry %u of %u ends past the bundle's %zu bytes",
				       i, count, len);
		name = b + off + 2;
		mode = (uint32_t)bundle_get(name + nlen, 4);
		dlen = bundle_get(name + nlen + 4, 8);
		off += 2 + (size_t)nlen + 12;
		if (dlen > len - off)
			return log_why(-EBADMSG, why, whylen,
				       "truncated: entry %u says %llu bytes, %zu are left", i,
				       (unsigned long long)dlen, len - off);
		if (out != NULL) {
			memcpy(names, name, nlen);
			names[nlen] = '\0';
			out[i].name = names;
			out[i].mode = mode;
			out[i].data = b + off;
			out[i].len = dlen;
			names += nlen + 1;
		} else {
			char copy[PROTO_NAME_MAX + 1];

			if (memchr(name, '\0', nlen) != NULL)
				return log_why(-EBADMSG, why, whylen,
					       "entry %u: the name holds a NUL byte", i);
			memcpy(copy, name, nlen);
			copy[nlen] = '\0';
			/* Named in the reason only once it holds no control byte. */
			if (rules_workspace_name_check(copy) == 0 &&
			    rules_input_name_check(copy) < 0)
				return log_why(-EBADMSG, why, whylen,
					       "entry %u: the name holds a control character", i);
			if (rules_input_name_check(copy) < 0)
				return log_why(-EBADMSG, why, whylen,
					       "entry %u: \"%s\" is not a relative path inside the "
					       "workspace",
					       i,
					       bundle_printable(copy) ? copy : "(not printable)");
			if (bundle_mode_check(mode) < 0)
				return log_why(
					-EBADMSG, why, whylen,
					"entry %u (\"%s\"): mode 0%o is not 0644 or 0755 "
					"(only regular files: no link, device or set-id bit)",
					i, copy, mode);
		}
		name_bytes += nlen + 1;
		bytes += dlen;
		off += (size_t)dlen;
	}
	if (off != len)
		return log_why(-EBADMSG, why, whylen, "%zu bytes after the last of %u entries",
			       len - off, count);
	*ret_name_bytes = name_bytes;
	*ret_bytes = bytes;
	return 0;
}

int
bundle_decode(const void *buf, size_t len, size_t max, struct bundle *ret, char *why, size_t whylen)
{
	const uint8_t *b = buf;
	struct bundle out = {0};
	size_t name_bytes;
	uint32_t count;
	int r;

	if (len < BUNDLE_HDR_LEN || memcmp(b, BUNDLE_MAGIC, 4) != 0)
		return log_why(-EBADMSG, why, whylen,
			       "not a bundle (it must start with \"ALFB\" and a count)");
	count = (uint32_t)bundle_get(b + 4, 4);
	if (count > max)
		return log_why(-E2BIG, why, whylen, "%u entries; at most %zu", count, max);
	r = bundle_walk(b, len, count, NULL, NULL, &name_bytes, &out.bytes, why, whylen);
	if (r < 0)
		return r;
	out.n = count;
	if (count > 0) {
		out.files = calloc(count, sizeof(*out.files));
		out.names_ = malloc(name_bytes);
		if (out.files == NULL || out.names_ == NULL) {
			bundle_free(&out);
			return log_why(-ENOMEM, why, whylen, "out of memory");
		}
		(void)bundle_walk(b, len, count, out.files, out.names_, &name_bytes, &out.bytes,
				  NULL, 0);
	}
	*ret = out;
	return 0;
}

void
bundle_free(struct bundle *b)
{
	if (b == NULL)
		return;
	CLEAR_FREE(b, b->files, b->names_);
}

int
bundle_encode_memfd(const struct bundle_file *files, size_t n, size_t max, uint64_t max_bytes,
		    int *ret_fd, uint64_t *ret_len)
{
	uint64_t size = BUNDLE_HDR_LEN;
	uint8_t *map = MAP_FAILED, *p;
	size_t i, nlen;
	int fd = -1, r;

	if (n > max || n > UINT32_MAX)
		return -E2BIG;
	if (n > 0 && files == NULL)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (rules_input_name_check(files[i].name) < 0 ||
		    bundle_mode_check(files[i].mode) < 0 ||
		    (files[i].len > 0 && files[i].data == NULL))
			return -EINVAL;
		size += BUNDLE_ENTRY_FIXED_LEN + strlen(files[i].name);
		if (files[i].len > max_bytes || size > max_bytes - files[i].len)
			return -E2BIG;
		size += files[i].len;
	}
	r = memfd_new("airlock-bundle", &fd);
	if (r < 0)
		return r;
	if (ftruncate(fd, (off_t)size) < 0) {
		r = -errno;
		goto out;
	}
	map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	memcpy(map, BUNDLE_MAGIC, 4);
	p = bundle_put(map + 4, n, 4);
	for (i = 0; i < n; i++) {
		nlen = strlen(files[i].name);
		p = bundle_put(p, nlen, 2);
		memcpy(p, files[i].name, nlen);
		p = bundle_put(p + nlen, files[i].mode, 4);
		p = bundle_put(p, files[i].len, 8);
		if (files[i].len > 0)
			memcpy(p, files[i].data, (size_t)files[i].len);
		p += files[i].len;
	}
	munmap(map, (size_t)size);
	r = memfd_seal(fd);
	if (r < 0)
		goto out;
	*ret_fd = fd;
	*ret_len = size;
	fd = -1;
out:
	fd_close(fd);
	return r;
}
