/*
 * keep_wrap.c: the frontend's side of a session's keeper channel: a
 * request out, an answer in, each the exact size of its struct (the keeper
 * runs as the session's uid next to its runs: what it answers is checked
 * before the session takes it).
 */
#include "keep_wrap.h"

#include <errno.h>
#include <string.h>

#include "fdpass.h"

int
keep_wrap_send(int sock, uint32_t op, uint32_t seq, const char *path, int fd)
{
	struct keep_req req;
	size_t len = strlen(path);

	memset(&req, 0, sizeof(req));
	req.op = op;
	req.seq = seq;
	if (len >= sizeof(req.path))
		return -ENAMETOOLONG;
	memcpy(req.path, path, len + 1);
	return fdpass_send(sock, &req, sizeof(req), &fd, fd >= 0 ? 1 : 0);
}

int
keep_wrap_recv(int sock, struct keep_reply *rep, int *ret_fd)
{
	int fds[1];
	size_t nfds = 0;
	ssize_t n = fdpass_recv(sock, rep, sizeof(*rep), fds, 1, &nfds);

	if (n == -EAGAIN || n == -EINTR)
		return -EAGAIN;
	if (n == 0)
		return 0;
	if (n == -EMSGSIZE)
		return -EBADMSG; /* fdpass_recv closed what came */
	if (n < 0)
		return (int)n;
	if ((size_t)n != sizeof(*rep)) {
		fdpass_close_all(fds, nfds);
		return -EBADMSG;
	}
	*ret_fd = nfds == 1 ? fds[0] : -1;
	return 1;
}
