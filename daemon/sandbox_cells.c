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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
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

/* Whether pid has ended (a zombie, or gone): its parent may reap it now. */
static bool
sb_cells_ended(long pid)
{
	char path[32], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold anything, so the last ')'. */
	p = strrchr(buf, ')');
	return p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

void
sandbox_cells_kill_others(pid_t keep)
{
	int pass;

	/*
	 * Every process of the pid namespace but us (1) and the interpreter:
	 * what the cell forked dies with the cell, so nothing of it holds a
	 * pipe or spends the next cell's time. Passes until none is left but
	 * zombies (the driver reaps its children before the next cell; ours
	 * are reaped by our loop), for what was forked meanwhile and for the
	 * exits SIGKILL sets going: bounded, 200 passes 1 ms apart. The
	 * interpreter's own threads are not processes.
	 */
	for (pass = 0; pass < 200; pass++) {
		struct timespec ts = {0, 1000000};
		int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC), alive = 0;
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
				if (*c != '\0' || pid <= 1 || pid == (long)keep ||
				    sb_cells_ended(pid))
					continue;
				if (kill((pid_t)pid, SIGKILL) == 0)
					alive++;
			}
		}
		close(dfd);
		if (alive == 0)
			return;
		nanosleep(&ts, NULL);
	}
}

void
sandbox_cells_peak_reset(int peak_fd)
{
	/*
	 * Any write sets the peak to the usage now: v1 for the whole cgroup,
	 * v2 for reads through every fd written, the spawner's too (6.12,
	 * seen in the VM). Either way of a session's own cgroup: the
	 * spawner's figure for the interpreter's run, for its audit line
	 * only, is then since the last cell began. A v2 fd opened read-only
	 * (no reset before 6.12) refuses it: its peak stays the cgroup's
	 * since it was made (docs/protocol.md).
	 */
	if (peak_fd >= 0)
		(void)pwrite(peak_fd, "0", 1, 0);
}

/* The peak through peak_fd, in bytes; 0 if there is none. */
static uint64_t
sb_cells_peak(int peak_fd)
{
	char buf[32];
	ssize_t n;

	if (peak_fd < 0)
		return 0;
	n = pread(peak_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

void
sandbox_cells_end(int lifeline, uint32_t type, uint64_t cell, uint32_t reason, uint64_t cpu_ns,
		  uint64_t wall_ns, int peak_fd)
{
	struct sup_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.reason = reason;
	m.cpu_ns = cpu_ns;
	m.wall_ns = wall_ns;
	m.size = cell;
	m.memory_peak = sb_cells_peak(peak_fd);
	(void)send(lifeline, &m, sizeof(m), MSG_NOSIGNAL);
}
