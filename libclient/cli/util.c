/* cli/util.c: parsing and safe artifact writing for the airlock command. */
#include "util.h"
#include "fdio.h"
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Parse leading decimal digits of *sp into *ret, advancing *sp. */
static int
cli_parse_digits(const char **sp, uint64_t *ret)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*sp = s;
	*ret = v;
	return 0;
}

/*
 * Parse a positive decimal number; with suffix, a binary suffix K, M, G or T
 * (either case, then optionally "i" and "B") may follow, and a lone "B".
 */
static int
cli_parse_scaled(const char *s, bool suffix, uint64_t *ret)
{
	static const char units[] = "kmgt";
	uint64_t v, mult = 1;
	const char *u;
	int r;

	if (s == NULL)
		return -EINVAL;
	r = cli_parse_digits(&s, &v);
	if (r < 0)
		return r;
	if (suffix) {
		u = *s != '\0' ? strchr(units, *s | 0x20) : NULL;
		if (u != NULL) {
			mult = 1ULL << (10 * (u - units + 1));
			s++;
			if (*s == 'i')
				s++;
		}
		if (*s == 'B' || *s == 'b')
			s++;
	}
	if (*s != '\0')
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v == 0)
		return -ERANGE;
	*ret = v;
	return 0;
}

int
cli_parse_size(const char *s, uint64_t *ret)
{
	return cli_parse_scaled(s, true, ret);
}

int
cli_parse_count(const char *s, uint64_t *ret)
{
	return cli_parse_scaled(s, false, ret);
}

/* Parse possibly fractional seconds into milliseconds. */
int
cli_parse_seconds(const char *s, uint64_t *ret_ms)
{
	uint64_t whole, frac = 0, scale = 1000;
	bool rest = false;
	int r;

	if (s == NULL)
		return -EINVAL;
	if (*s == '.')
		whole = 0;
	else {
		r = cli_parse_digits(&s, &whole);
		if (r < 0)
			return r;
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*s - '0') * scale;
			} else if (*s != '0')
				rest = true;
		}
	}
	if (*s != '\0')
		return -EINVAL;
	if (whole > (UINT64_MAX - 1000) / 1000)
		return -ERANGE;
	whole = whole * 1000 + frac + (rest ? 1 : 0);
	if (whole == 0)
		return -ERANGE;
	*ret_ms = whole;
	return 0;
}

/* openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (glibc has no wrapper). */
static int
cli_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode)
{
	struct open_how how = {
		.flags = flags,
		.mode = mode,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	return (int)fd;
}

/* Create one artifact file below dirfd without following any link. */
int
cli_artifact_write(int dirfd, const char *name, const void *data, size_t len, bool replace)
{
	char *path = NULL, *comp, *slash, tmp[32] = "";
	int cur = -1, next, fd = -1, r;
	uint64_t rnd = 0;

	r = rules_workspace_name_check(name);
	if (r < 0)
		return r;
	r = -ENOMEM;
	path = strdup(name);
	if (path == NULL)
		goto out;
	/*
	 * Walk one component at a time from dirfd: each lookup is a single name
	 * resolved by openat2 with RESOLVE_NO_SYMLINKS, so a symlink planted at
	 * any level (by the code that made the artifacts, or by anyone who can
	 * write to DIR) is refused instead of followed out of DIR.
	 */
	comp = path;
	while ((slash = strchr(comp, '/')) != NULL) {
		*slash = '\0';
		if (mkdirat(cur >= 0 ? cur : dirfd, comp, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			goto out;
		}
		next = cli_openat2(cur >= 0 ? cur : dirfd, comp, O_PATH | O_DIRECTORY | O_CLOEXEC,
				   0);
		if (next < 0) {
			r = next;
			goto out;
		}
		if (cur >= 0)
			close(cur);
		cur = next;
		comp = slash + 1;
	}
	if (replace) {
		/* A new file under an unguessable name, renamed over the old one:
		 * rename replaces a link itself, never what it points to. */
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			r = -EIO;
			goto out;
		}
		snprintf(tmp, sizeof(tmp), ".airlock-%016llx", (unsigned long long)rnd);
	}
	fd = cli_openat2(cur >= 0 ? cur : dirfd, replace ? tmp : comp,
			 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = fd;
		tmp[0] = '\0';
		goto out;
	}
	r = fd_write_all(fd, data, len);
	if (r < 0)
		goto out;
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto out;
	}
	fd = -1;
	if (replace && renameat(cur >= 0 ? cur : dirfd, tmp, cur >= 0 ? cur : dirfd, comp) < 0) {
		r = -errno;
		goto out;
	}
	tmp[0] = '\0';
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] != '\0')
		unlinkat(cur >= 0 ? cur : dirfd, tmp, 0);
	if (cur >= 0)
		close(cur);
	free(path);
	return r;
}

/* Validate UTF-8 strictly. */
bool
cli_utf8_valid(const void *buf, size_t len)
{
	const unsigned char *s = buf;
	size_t i = 0, n, k;
	uint32_t cp;

	while (i < len) {
		unsigned char c = s[i];

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else
			return false;
		if (len - i - 1 < n)
			return false;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

/* Encode as padded base64. */
char *
cli_base64(const void *buf, size_t len)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = buf;
	char *out, *o;
	size_t i;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	out = malloc((len + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)s[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)s[i + 1] << 8;
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* Format a duration for a table column. */
char *
cli_format_elapsed(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "s", s, ms % 1000 / 100);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s % 3600 / 60);
	return buf;
}
