/* listener.c: the listening socket: created as root or taken from systemd;
 * each connection accepted goes to the callback listener_start() was given. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/time.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listener.h"

#include "backoff.h"
#include "frontend.h"
#include "log.h"
#include "compiler.h"
#include "fdio.h"
#include "svcmgr.h"

#define LISTENER_BACKOFF_MS 200

int
listener_create(const char *path, uid_t uid, gid_t gid, mode_t mode, int *ret_fd)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Only a stale socket is removed; never another kind of file. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return -errno;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* No window in which the socket exists with a looser mode. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0) {
		r = -errno;
		goto fail;
	}
	if (chown(path, uid, gid) < 0 || chmod(path, mode) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

int
listener_from_systemd(int *ret_fd)
{
	int n = svcmgr_listen_fds(), fd;

	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	if (n > 1)
		return -E2BIG;
	fd = SVCMGR_LISTEN_FDS_START;
	if (svcmgr_is_seqpacket_listener(fd) <= 0)
		return -ENOTSOCK;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	*ret_fd = fd;
	return 1;
}

/* Accept every pending connection; back off when out of descriptors. */
static void
listener_accept_cb(evutil_socket_t lfd, short what UNUSED, void *arg)
{
	struct daemon *d = arg;
	int budget;

	for (budget = 64; budget > 0; budget--) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd >= 0) {
			d->accept_cb(d, fd);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
			return;
		if (errno == EMFILE || errno == ENFILE) {
			/* Use the reserve fd to take and shed one connection, so
			 * the client hears a close instead of hanging. */
			if (d->reserve_fd >= 0) {
				close(d->reserve_fd);
				fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
				fd_close(fd);
				d->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			}
			log_warnx("accept: out of file descriptors; pausing %d ms",
				  LISTENER_BACKOFF_MS);
			listener_back_off(d->listen_ev, d->accept_retry_ev, LISTENER_BACKOFF_MS);
			return;
		}
		log_warn("accept");
		return;
	}
}

int
listener_start(struct daemon *d, void (*accept_cb)(struct daemon *d, int fd))
{
	d->accept_cb = accept_cb;
	d->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	d->listen_ev =
		event_new(d->base, d->listen_fd, EV_READ | EV_PERSIST, listener_accept_cb, d);
	d->accept_retry_ev = listener_back_off_new(d->base, d->listen_ev);
	if (d->listen_ev == NULL || d->accept_retry_ev == NULL)
		return -ENOMEM;
	return event_add(d->listen_ev, NULL) < 0 ? -EIO : 0;
}
