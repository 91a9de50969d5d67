/* sandbox_egress.c: the listener a network = proxy run's code reaches the proxy through. */
#include "sandbox_egress.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"
#include "sandbox.h"
#include "sandbox_child.h"
#include "spawn_msg.h"

void
sandbox_egress_listen(int lifeline, uint16_t port)
{
	struct sockaddr_in sa;
	struct sup_msg m;
	int fd, r;

	/*
	 * The socket is made here, in the run's network namespace (lo only, no
	 * route), and accepted on by the frontend in the host's: each accepted
	 * connection belongs to the run's namespace and its other end is the
	 * proxy's, so no packet of the code leaves but through it. No
	 * SO_REUSEPORT: the code cannot bind a second socket to the port and
	 * take connections meant for the proxy (EADDRINUSE).
	 */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		sandbox_fail(SANDBOX_STEP_EGRESS, errno);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0)
		sandbox_fail(SANDBOX_STEP_EGRESS, errno);
	memset(&m, 0, sizeof(m));
	m.type = SUP_EGRESS;
	r = fdpass_send(lifeline, &m, sizeof(m), &fd, 1);
	if (r < 0)
		sandbox_fail(SANDBOX_STEP_EGRESS, -r);
	close(fd);
}
