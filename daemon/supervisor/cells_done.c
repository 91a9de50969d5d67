/*
 * cells_done.c: the done pipe (docs/design-interpreters.md §2.9). The
 * supervisor of an interpreter session makes it beside the driver's
 * channel; its write end is the code's fd 4, on which the driver writes a
 * cell's number after its answer to the frontend, and the supervisor ends
 * the cell when it reads the number of the cell it times. No allocation,
 * no stdio (it runs in the supervisor).
 */
#include "cells_done.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

int
cells_done_pipe(int *ret_rd, int *ret_wr)
{
	int p[2];

	/*
	 * Packet mode (O_DIRECT): each write of the driver is one read here,
	 * so a cell that writes odd sizes cannot shift the numbers after it.
	 * Only the code writes (the driver, at its fd 4): the supervisor
	 * reads at most 16 bytes a packet and compares 8 of them with the
	 * cell it times; nothing else of it is looked at.
	 */
	if (pipe2(p, O_CLOEXEC | O_DIRECT) < 0)
		return -errno;
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		errno = e;
		return -e;
	}
	*ret_rd = p[0];
	*ret_wr = p[1];
	return 0;
}

/* At most CELLS_DONE_READS packets a wake-up: a cell that floods the pipe
 * still leaves the loop to its limits. */
bool
cells_done_read(int rd, uint64_t cell)
{
	bool hit = false;
	int k;

	for (k = 0; k < CELLS_DONE_READS; k++) {
		/* Room for more than a number: a longer packet is read
		 * whole (its length seen, not cut to 8 bytes) and dropped. */
		uint64_t n[2];
		ssize_t len = read(rd, n, sizeof(n));

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0)
			break;
		/* Little-endian, as the driver packs it (<Q); the hosts are. */
		if (len == (ssize_t)sizeof(n[0]) && cell != 0 && n[0] == cell)
			hit = true;
	}
	return hit;
}
