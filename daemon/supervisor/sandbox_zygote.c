/*
 * sandbox_zygote.c: a supervisor's part in a zygote run: its namespace
 * fds, and the adoption of the code (docs/design-bursts.md §3.3); the run
 * itself is sandbox_zygote_run.c's.
 */
#include "sandbox_zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdpass.h"
#include "spawn_msg.h"
#include "zygote_enter.h"

int
sandbox_zygote_ns(int ret_fds[SANDBOX_ZYGOTE_NS])
{
	static const char *const ns[SANDBOX_ZYGOTE_NS] = {"user", "mnt", "net",
							  "ipc",  "uts", "pid"};
	char path[32];
	int fds[SANDBOX_ZYGOTE_NS], i, r;

	/*
	 * Our own: the kernel lets a process open its own /proc/self/ns files
	 * always. The spawner cannot open them (we are a clone of a
	 * non-dumpable process: the ptrace check wants CAP_SYS_PTRACE in the
	 * host's namespace; design-bursts.md §3.3, checked).
	 */
	for (i = 0; i < SANDBOX_ZYGOTE_NS; i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			r = -errno;
			while (i-- > 0)
				close(fds[i]);
			return r;
		}
	}
	memcpy(ret_fds, fds, sizeof(fds));
	return 0;
}

/* The parent pid in /proc/PID/stat (after the command's last ')'), or -1. */
static pid_t
sandbox_zygote_ppid(pid_t pid)
{
	char path[48], buf[512], *p;
	int fd, ppid = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

int
sandbox_zygote_adopt(int rd, int timeout_ms, int *ret_pidfd, pid_t *ret_pid, int *ret_step)
{
	struct pollfd pfd = {.fd = rd, .events = POLLIN};
	struct zygote_report rep;
	ssize_t n;
	int pidfd, r;

	*ret_step = -1;
	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	do
		n = read(rd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	if (n != (ssize_t)sizeof(rep) || rep.step < 0 || rep.step >= ZYGOTE_STEP_COUNT_)
		return -EPROTO;
	if (rep.step != ZYGOTE_STEP_NONE) {
		*ret_step = rep.step;
		return rep.err > 0 ? -rep.err : -EPROTO;
	}
	/* The zygote is less trusted than we are: its pid is only taken if
	 * it names our own child. An unreaped child's pid cannot be reused,
	 * so the pidfd opened first is the process checked after. */
	if (rep.err != 0 || rep.pid <= 1)
		return -EPROTO;
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)rep.pid, 0);
	if (pidfd < 0)
		return -errno;
	if (sandbox_zygote_ppid(rep.pid) != getpid()) {
		close(pidfd);
		return -ECHILD;
	}
	*ret_pidfd = pidfd;
	*ret_pid = rep.pid;
	return 0;
}
