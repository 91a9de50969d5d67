/*
 * sandbox_fail.c: the supervisor's leaf: its two channels (the spawner's
 * control socket until the run comes, then the run's lifeline), the wait for
 * the run's start message, the failure report, the monotonic clock and the
 * /proc stat readers. It calls nothing else of the supervisor, so the other
 * sandbox_* files can all call sandbox_fail() without a cycle (the reshape,
 * docs/design-reshape.md section 1.5).
 *
 * Between clone and exec like the rest (sandbox_child.h): no malloc, no
 * stdio, no libevent.
 */
#include "sandbox_child.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fdpass.h"
#include "spawn_msg.h"

/* The lifeline, kept in a static so the fail path needs no arguments. This
 * is the cloned child's own copy of memory; nothing else writes it. */
static int sb_lifeline = -1;
static int sb_ctl = -1;
static bool sb_prestarted; /* phase one started the interpreter (sandbox_prestart.c) */

void
sandbox_self_init(int ctl, bool prestarted)
{
	sb_ctl = ctl;
	sb_prestarted = prestarted;
}

int
sandbox_lifeline(void)
{
	return sb_lifeline;
}

void
sandbox_set_lifeline(int fd)
{
	sb_lifeline = fd;
}

int
sandbox_ctl(void)
{
	return sb_ctl;
}

bool
sandbox_prestarted(void)
{
	return sb_prestarted;
}

/* The spawner's start message: the run's fds. Returns how many came. */
size_t
sandbox_wait_start(int *fds, size_t max, uint32_t *ret_flags)
{
	struct sb_start st;
	size_t nfds = 0;
	ssize_t n;

	do
		n = fdpass_recv(sb_ctl, &st, sizeof(st), fds, max, &nfds);
	while (n == -EINTR);
	/* EOF or anything else: this sandbox will never run anything. A
	 * pre-started one takes only a run for it, and only such a run
	 * comes without output pipes (they came with the prepare). */
	if (n != (ssize_t)sizeof(st) || st.magic != SB_START_MAGIC ||
	    ((st.flags & SPAWN_F_PRESTARTED) != 0) != sb_prestarted ||
	    nfds != (sb_prestarted		       ? SPAWN_REQ_NFDS_PRESTARTED
		     : (st.flags & SPAWN_F_WORKSPACE)  ? SPAWN_REQ_NFDS_MAX
		     : (st.flags & SPAWN_F_ZYGOTE_RUN) ? SB_START_NFDS_ZYGOTE
						       : SPAWN_REQ_NFDS)) {
		if (n > 0)
			fdpass_close_all(fds, nfds);
		_exit(0);
	}
	close(sb_ctl);
	sb_ctl = -1;
	*ret_flags = st.flags;
	return nfds;
}

/*
 * err is a positive errno, as inside the sandbox (errno itself, and the code
 * child's {step, errno} pipe); the lifeline's sup_msg carries -errno, like
 * every fixed struct between the daemon's processes.
 */
__attribute__((noreturn)) void
sandbox_fail(int step, int err)
{
	struct sup_msg m;

	/* Failed while prepared, before any request: wait for the run this
	 * sandbox is given, and tell it why it cannot be run. */
	if (sb_lifeline < 0 && sb_ctl >= 0) {
		int fds[SPAWN_REQ_NFDS_MAX];
		uint32_t flags;
		size_t n = sandbox_wait_start(fds, SPAWN_REQ_NFDS_MAX, &flags);

		sb_lifeline = fds[1];
		fds[1] = -1;
		fdpass_close_all(fds, n);
	}
	memset(&m, 0, sizeof(m));
	m.type = SUP_SETUP_FAILED;
	m.step = step;
	m.err = -err;
	if (sb_lifeline >= 0)
		(void)send(sb_lifeline, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(127);
}

uint64_t
sandbox_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Parse an unsigned decimal field; advance *p. */
uint64_t
sandbox_stat_u64(const char **p, const char *end)
{
	uint64_t v = 0;

	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && **p >= '0' && **p <= '9') {
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	return v;
}

/* Skip n space-separated fields. */
void
sandbox_stat_skip(const char **p, const char *end, int n)
{
	while (n-- > 0) {
		while (*p < end && **p == ' ')
			(*p)++;
		while (*p < end && **p != ' ')
			(*p)++;
	}
}

void
sandbox_read_stat(const char *path, char *buf, size_t len, int step, const char **ret_p,
		  const char **ret_end)
{
	const char *p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		sandbox_fail(step, errno);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		sandbox_fail(step, n < 0 ? errno : EIO);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL)
		sandbox_fail(step, EIO);
	*ret_p = p + 1;
	*ret_end = buf + n;
}
