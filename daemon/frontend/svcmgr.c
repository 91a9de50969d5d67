/*
 * svcmgr.c: systemd's service-manager protocols, spoken without libsystemd.
 *
 * The three the daemon needs are small, stable and documented for
 * reimplementation (sd_notify(3) "Notes", sd_listen_fds(3), systemd's
 * JOURNAL_NATIVE_PROTOCOL): a datagram to $NOTIFY_SOCKET, two environment
 * variables, a datagram of fields to the journal's socket. Linking
 * libsystemd for them mapped it and six more libraries (gcrypt, gpg-error,
 * lzma, zstd, lz4, cap) into both daemon processes: about 1.4 MiB of the
 * idle daemon's RSS, and mappings every supervisor clone of the spawner
 * copied (docs/performance.md, issue 33).
 */
#include "svcmgr.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SVCMGR_DGRAM_MAX 65536 /* the largest journal entry we send */

/* A sockaddr_un for PATH ('@' first: abstract). -EINVAL if it does not fit. */
static int
svcmgr_addr(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n < 2 || n >= sizeof(sa->sun_path) || (path[0] != '/' && path[0] != '@'))
		return -EINVAL;
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@')
		sa->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
	return 0;
}

/* One datagram to PATH on a socket of its own (CLOEXEC, closed at once). */
static int
svcmgr_send(const char *path, const void *buf, size_t len)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int fd, r = svcmgr_addr(path, &sa, &salen);

	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = sendto(fd, buf, len, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int
svcmgr_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	int r;

	if (path == NULL || path[0] == '\0')
		return 0;
	r = svcmgr_send(path, state, strlen(state));
	return r < 0 ? r : 1;
}

int
svcmgr_notifyf(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EMSGSIZE;
	return svcmgr_notify(buf);
}

/* A decimal of the whole string, 0..max; -EINVAL otherwise. */
static long
svcmgr_number(const char *s, long max)
{
	char *end;
	long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	return v;
}

int
svcmgr_listen_fds(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	long p = svcmgr_number(pid, INT_MAX), n = svcmgr_number(fds, INT_MAX - 3);
	int r;

	/* Not for a child: a run or the frontend must never take these as
	 * its own (sd_listen_fds(1) unsets them too). */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (pid == NULL && fds == NULL)
		return 0;
	if (p < 0 || n < 0)
		return -EINVAL;
	if ((pid_t)p != getpid())
		return 0;
	r = (int)n;
	return r;
}

int
svcmgr_is_seqpacket_listener(int fd)
{
	struct stat st;
	int v;
	socklen_t l = sizeof(v);

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) < 0)
		return -errno;
	if (v != AF_UNIX)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) < 0)
		return -errno;
	if (v != SOCK_SEQPACKET)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) < 0)
		return -errno;
	return v != 0;
}

/* Append len bytes at *off of buf (SVCMGR_DGRAM_MAX); -EMSGSIZE if full. */
static int
svcmgr_put(char *buf, size_t *off, const void *p, size_t len)
{
	if (len > SVCMGR_DGRAM_MAX - *off)
		return -EMSGSIZE;
	memcpy(buf + *off, p, len);
	*off += len;
	return 0;
}

/*
 * The native protocol: a field is "KEY=VALUE\n", or, when VALUE holds a
 * newline, "KEY\n", its length as a little-endian 64-bit number, VALUE,
 * "\n". Values come from clients (audit fields): the second form keeps a
 * newline in one from starting a field of its own.
 */
int
svcmgr_journal_sendv_to(const char *path, const struct iovec *iov, size_t n)
{
	char *buf = malloc(SVCMGR_DGRAM_MAX);
	size_t off = 0, i;
	int r = buf == NULL ? -ENOMEM : 0;

	for (i = 0; r == 0 && i < n; i++) {
		const char *f = iov[i].iov_base, *eq = memchr(f, '=', iov[i].iov_len);
		size_t klen = eq != NULL ? (size_t)(eq - f) : 0, vlen;

		if (eq == NULL || klen == 0) {
			r = -EINVAL;
			break;
		}
		vlen = iov[i].iov_len - klen - 1;
		if (memchr(eq + 1, '\n', vlen) == NULL) {
			r = svcmgr_put(buf, &off, f, iov[i].iov_len);
		} else {
			uint8_t le[8];
			uint64_t v = vlen;
			int k;

			for (k = 0; k < 8; k++, v >>= 8)
				le[k] = (uint8_t)(v & 0xff);
			r = svcmgr_put(buf, &off, f, klen);
			if (r == 0)
				r = svcmgr_put(buf, &off, "\n", 1);
			if (r == 0)
				r = svcmgr_put(buf, &off, le, sizeof(le));
			if (r == 0)
				r = svcmgr_put(buf, &off, eq + 1, vlen);
		}
		if (r == 0)
			r = svcmgr_put(buf, &off, "\n", 1);
	}
	if (r == 0)
		r = svcmgr_send(path, buf, off);
	free(buf);
	return r;
}

int
svcmgr_journal_sendv(const struct iovec *iov, size_t n)
{
	return svcmgr_journal_sendv_to(SVCMGR_JOURNAL_SOCKET, iov, n);
}
