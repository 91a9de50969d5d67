/* rootspec_read.c: the root spec's checks and the spawner's read (rootspec.h);
 * the frontend seals it with rootspec_seal.c. */
#include "rootspec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "memfd.h"

bool
rootspec_path_normal(const char *path)
{
	size_t len = strnlen(path, ROOTSPEC_PATH_MAX);
	const char *p;

	if (len == 0 || len >= ROOTSPEC_PATH_MAX || path[0] != '/' || len == 1 ||
	    path[len - 1] == '/')
		return false;
	for (p = path; p != NULL && *p != '\0'; p = strchr(p + 1, '/')) {
		/* p is at a '/': the component after it. */
		if (p[1] == '/' || p[1] == '\0')
			return false;
		if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return false;
		if (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
			return false;
	}
	return true;
}

/* The error of a path that is not absolute and normalised; what: its key. */
static int
rootspec_not_normal(const char *what, const char *path, char *why, size_t whylen)
{
	return log_why(-EINVAL, why, whylen,
		       "%s %.*s: expected an absolute path without '.', '..', '//' or a "
		       "trailing '/', not '/', under %d bytes",
		       what, ROOTSPEC_PATH_MAX, path, ROOTSPEC_PATH_MAX);
}

/* One component of the walk, lstat()ed: no link, root's, not group/other-writable,
 * open to others (searchable; the source itself readable). */
static int
rootspec_check_one(const char *path, const char *shown, bool last, char *why, size_t whylen)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		int r = -errno;

		if (r == -ENOENT)
			return log_why(r, why, whylen, "%s does not exist", shown);
		return log_why(r, why, whylen, "cannot check %s: %s", shown, strerror(-r));
	}
	if (S_ISLNK(st.st_mode))
		return log_why(-ELOOP, why, whylen, "%s is a symbolic link", shown);
	if (st.st_uid != 0)
		return log_why(-EPERM, why, whylen, "%s is owned by uid %u, not root", shown,
			       (unsigned)st.st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		return log_why(-EPERM, why, whylen, "%s is writable by group or others (mode %04o)",
			       shown, (unsigned)(st.st_mode & 07777));
	if (!last && !S_ISDIR(st.st_mode))
		return log_why(-ENOTDIR, why, whylen, "%s is not a directory", shown);
	/* The supervisor opens the source as the run's uid, which is nobody's
	 * owner or group: a path root can walk but "others" cannot would pass
	 * here and fail every sandbox later. */
	if (S_ISDIR(st.st_mode) && (st.st_mode & S_IXOTH) == 0)
		return log_why(-EACCES, why, whylen, "%s is not searchable by others (mode %04o)",
			       shown, (unsigned)(st.st_mode & 07777));
	if (last && (st.st_mode & S_IROTH) == 0)
		return log_why(-EACCES, why, whylen, "%s is not readable by others (mode %04o)",
			       shown, (unsigned)(st.st_mode & 07777));
	if (last && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return log_why(-EINVAL, why, whylen, "%s is neither a directory nor a regular file",
			       shown);
	return 0;
}

/*
 * Why every component: a component the run's uids (or any non-root user)
 * could write, or a link, would let someone swap what is bound between
 * this check and the supervisor's open (which refuses links again with
 * RESOLVE_NO_SYMLINKS): only root can change a path that passes.
 */
int
rootspec_source_check(const char *path, char *why, size_t whylen)
{
	char buf[ROOTSPEC_PATH_MAX];
	char *p;
	int r;

	if (!rootspec_path_normal(path))
		return rootspec_not_normal("source", path, why, whylen);
	r = rootspec_check_one("/", "/", false, why, whylen);
	if (r < 0)
		return r;
	strcpy(buf, path);
	for (p = strchr(buf + 1, '/');; p = strchr(p + 1, '/')) {
		if (p != NULL)
			*p = '\0';
		r = rootspec_check_one(buf, buf, p == NULL, why, whylen);
		if (r < 0 || p == NULL)
			return r;
		*p = '/';
	}
}

bool
rootspec_paths_overlap(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t n = la < lb ? la : lb;

	if (strncmp(a, b, n) != 0)
		return false;
	return la == lb || (la < lb ? b[la] == '/' : a[lb] == '/');
}

int
rootspec_target_check(const char *path, char *why, size_t whylen)
{
	/* What the root makes for itself (sandbox_fs.c): a mount over or
	 * under one of them would hide the system or the run's own files,
	 * or land on a read-only bind or a link. */
	static const char *const reserved[] = {"/usr",	     "/bin",	"/sbin",   "/lib", "/lib32",
					       "/lib64",     "/libx32", "/proc",   "/dev", "/tmp",
					       "/workspace", "/run",	"/oldroot"};
	size_t i;

	if (!rootspec_path_normal(path))
		return rootspec_not_normal("target", path, why, whylen);
	if (!strcmp(path, "/etc"))
		return log_why(-EINVAL, why, whylen, "target /etc: the sandbox's own");
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (rootspec_paths_overlap(path, reserved[i]))
			return log_why(-EINVAL, why, whylen, "target %s: in the sandbox's own %s",
				       path, reserved[i]);
	return 0;
}

int
rootspec_read(int fd, struct rootspec *ret, char (*why)[ROOTSPEC_WHY_MAX])
{
	uint64_t size;
	uint32_t i;
	ssize_t n;
	int r;

	r = memfd_check_sealed(fd, sizeof(*ret), &size);
	if (r < 0)
		return r;
	if (size != sizeof(*ret))
		return -EPROTO;
	n = pread(fd, ret, sizeof(*ret), 0);
	if (n != (ssize_t)sizeof(*ret))
		return n < 0 ? -errno : -EPROTO;
	if (ret->magic != ROOTSPEC_MAGIC || ret->reserved != 0 ||
	    ret->nmounts > ROOTSPEC_MOUNTS_MAX)
		return -EPROTO;
	for (i = 0; i < ret->nmounts; i++) {
		struct rootspec_mount *m = &ret->mounts[i];

		if (memchr(m->source, '\0', sizeof(m->source)) == NULL ||
		    memchr(m->target, '\0', sizeof(m->target)) == NULL || m->missing != 0 ||
		    (m->flags & ~ROOTSPEC_F_PACKAGE) != 0 ||
		    rootspec_target_check(m->target, NULL, 0) < 0)
			return -EPROTO;
		/* Again, now, as root: the frontend could have been fooled or
		 * be compromised; only a path that passes is bound. One that
		 * fails is marked, never opened (sandbox_fs_base): the other
		 * mounts, and the runs that name none, are not its hostages. */
		r = rootspec_source_check(m->source, why != NULL ? why[i] : NULL,
					  why != NULL ? ROOTSPEC_WHY_MAX : 0);
		if (r < 0)
			m->missing = (uint32_t)-r;
	}
	return 0;
}
