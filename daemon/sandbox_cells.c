/*
 * sandbox_cells.c: the supervisor's side of an interpreter session
 * (PLAN_F_CELLS, docs/design-interpreters.md §2), between clone and exec and
 * after: no allocation, no stdio. The loop that times each cell is
 * sb_supervise_cells() in sandbox.c, beside the one-shot loop it mirrors.
 */
#include "sandbox_child.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdpass.h"
#include "spawn_msg.h"

int
sandbox_cells_channel(int lifeline)
{
	struct sup_msg m;
	int pair[2];

	/*
	 * The driver's end becomes the code's fd 0 (sandbox_code.c); the other
	 * goes to the frontend, which speaks to the driver directly: the
	 * supervisor, which keeps capabilities in the run's namespace, never
	 * reads a byte the code wrote.
	 */
	SB_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), SANDBOX_STEP_CELLS);
	memset(&m, 0, sizeof(m));
	m.type = SUP_CELLS;
	if (fdpass_send(lifeline, &m, sizeof(m), &pair[0], 1) < 0)
		sandbox_fail(SANDBOX_STEP_CELLS, EPIPE);
	close(pair[0]);
	return pair[1];
}

void
sandbox_cells_kill_others(pid_t keep)
{
	int pass;

	/*
	 * Every process of the pid namespace but us (1) and the interpreter:
	 * what the cell forked dies with the cell, so nothing of it holds a
	 * pipe or spends the next cell's time. A few passes for what was
	 * forked meanwhile; the interpreter's own threads are not processes.
	 */
	for (pass = 0; pass < 8; pass++) {
		int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), killed = 0;
		char buf[4096];
		long n;

		if (dfd < 0)
			return;
		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
			long off = 0;

			while (off < n) {
				struct dirent64 *d = (struct dirent64 *)(buf + off);
				long pid = 0;
				const char *c;

				off += d->d_reclen;
				for (c = d->d_name; *c >= '0' && *c <= '9' && pid < 1L << 30; c++)
					pid = pid * 10 + (*c - '0');
				if (*c != '\0' || pid <= 1 || pid == (long)keep)
					continue;
				if (kill((pid_t)pid, SIGKILL) == 0)
					killed++;
			}
		}
		close(dfd);
		if (killed == 0)
			return;
	}
}

void
sandbox_cells_end(int lifeline, uint64_t cell, uint32_t reason, uint64_t cpu_ns, uint64_t wall_ns)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SUP_CELL_END;
	m.reason = reason;
	m.cpu_ns = cpu_ns;
	m.wall_ns = wall_ns;
	m.size = cell;
	(void)send(lifeline, &m, sizeof(m), MSG_NOSIGNAL);
}
