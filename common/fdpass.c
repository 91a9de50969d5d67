/* fdpass.c: SCM_RIGHTS over SOCK_SEQPACKET, close-on-exec from birth. */
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"

#define FDPASS_MAX 64

int
fdpass_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds)
{
	union {
		char raw[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds > FDPASS_MAX)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.raw;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EMSGSIZE;
	return 0;
}

ssize_t
fdpass_recv(int sock, void *buf, size_t cap, int *fds, size_t maxfds, size_t *ret_nfds)
{
	size_t nfds = 0;
	bool lost;
	ssize_t n = fdpass_recv_lossy(sock, buf, cap, fds, maxfds, &nfds, &lost);

	if (n < 0)
		return n;
	if (lost) {
		fdpass_close_all(fds, nfds);
		if (ret_nfds != NULL)
			*ret_nfds = 0;
		return -EMSGSIZE;
	}
	if (ret_nfds != NULL)
		*ret_nfds = nfds;
	else
		fdpass_close_all(fds, nfds);
	return n;
}

ssize_t
fdpass_recv_lossy(int sock, void *buf, size_t cap, int *fds, size_t maxfds, size_t *ret_nfds,
		  bool *ret_lost)
{
	union {
		char raw[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.raw,
			    .msg_controllen = sizeof(cbuf.raw)};
	struct cmsghdr *c;
	size_t nfds = 0;
	int overflow = 0;
	ssize_t n;

	*ret_lost = false;
	*ret_nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		size_t k, cnt;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < cnt; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (nfds < maxfds)
				fds[nfds++] = fd;
			else {
				close(fd);
				overflow = 1;
			}
		}
	}
	if (overflow || (size_t)n > cap) {
		fdpass_close_all(fds, nfds);
		*ret_nfds = 0;
		return -EMSGSIZE;
	}
	/* Our control buffer holds FDPASS_MAX: more than that is truncated
	 * too, and is as lost to the caller as an fd the kernel could not
	 * install. */
	*ret_lost = (mh.msg_flags & MSG_CTRUNC) != 0;
	*ret_nfds = nfds;
	return n;
}

void
fdpass_close_all(int *fds, size_t nfds)
{
	size_t i;

	for (i = 0; i < nfds; i++) {
		fds[i] = fd_close(fds[i]);
	}
}
