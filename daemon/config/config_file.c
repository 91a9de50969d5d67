/*
 * config_file.c: airlockd.conf as a file, parsing nothing: who may have
 * written it, and its bytes into a sealed memfd. The spawner links this
 * file alone for a reload (config_read_sealed()): the parser (config_parse.c,
 * inih) and what it links stay out of the privileged processes
 * (docs/security.md; tests/layout checks it).
 */
#include "config_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memfd.h"
#include "fdio.h"

void
config_verr(char *err, size_t errlen, const char *path, unsigned line, const char *fmt, va_list ap)
{
	int n = 0;

	if (err == NULL || errlen == 0)
		return;
	if (path != NULL && line > 0)
		n = snprintf(err, errlen, "%s:%u: ", path, line);
	else if (path != NULL)
		n = snprintf(err, errlen, "%s: ", path);
	if (n < 0)
		n = 0;
	if ((size_t)n >= errlen)
		return;
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
}

/* Write "path: reason" into err; returns error. */
static int __attribute__((format(printf, 5, 6)))
config_file_fail(const char *path, char *err, size_t errlen, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	config_verr(err, errlen, path, 0, fmt, ap);
	va_end(ap);
	return error;
}

/*
 * Open the file and refuse it when anyone but root could have written it:
 * the file decides who may run code and with which limits. fstat() on the
 * opened fd, so the checked file is the read one; O_NOFOLLOW so a link
 * cannot point the daemon elsewhere; O_NONBLOCK so a FIFO cannot hang it.
 */
int
config_file_open(const char *path, bool must_exist, FILE **ret, char *err, size_t errlen)
{
	struct stat st;
	FILE *fp;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT && !must_exist)
			return 0;
		if (r == -ELOOP)
			return config_file_fail(path, err, errlen, r,
						"is a symbolic link: refused");
		return config_file_fail(path, err, errlen, r, "cannot open: %s", strerror(-r));
	}
	if (fstat(fd, &st) < 0) {
		r = config_file_fail(path, err, errlen, -errno, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = config_file_fail(path, err, errlen, -EINVAL, "not a regular file: refused");
		goto out;
	}
	if (st.st_uid != 0) {
		r = config_file_fail(path, err, errlen, -EPERM,
				     "owned by uid %u, not root: refused", (unsigned)st.st_uid);
		goto out;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		r = config_file_fail(path, err, errlen, -EPERM,
				     "writable by group or others (mode %04o): refused",
				     (unsigned)(st.st_mode & 07777));
		goto out;
	}
	fp = fdopen(fd, "r");
	if (fp == NULL) {
		r = config_file_fail(path, err, errlen, -errno, "fdopen: %s", strerror(errno));
		goto out;
	}
	*ret = fp;
	return 0;
out:
	close(fd);
	return r;
}

int
config_read_sealed(const char *path, bool must_exist, int *ret_fd, char *err, size_t errlen)
{
	char buf[16384];
	uint64_t total = 0;
	FILE *fp = NULL;
	size_t n;
	int fd = -1, r;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	r = config_file_open(path, must_exist, &fp, err, errlen);
	if (r < 0)
		return r;
	if (fp == NULL) {
		*ret_fd = -1;
		return 0;
	}
	r = memfd_new("airlockd.conf", &fd);
	if (r < 0) {
		config_file_fail(path, err, errlen, r, "memfd: %s", strerror(-r));
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0) {
		total += n;
		if (total > CONFIG_FILE_MAX) {
			r = config_file_fail(path, err, errlen, -EFBIG,
					     "larger than %u bytes: refused",
					     (unsigned)CONFIG_FILE_MAX);
			goto out;
		}
		if (write(fd, buf, n) != (ssize_t)n) {
			r = config_file_fail(path, err, errlen, -EIO, "memfd: %s", strerror(errno));
			goto out;
		}
	}
	if (ferror(fp)) {
		r = config_file_fail(path, err, errlen, -EIO, "read error");
		goto out;
	}
	r = memfd_seal(fd);
	if (r < 0) {
		config_file_fail(path, err, errlen, r, "memfd: %s", strerror(-r));
		goto out;
	}
	*ret_fd = fd;
	fd = -1;
out:
	fd_close(fd);
	fclose(fp);
	return r;
}
