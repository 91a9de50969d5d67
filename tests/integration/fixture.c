/* fixture.c: a real airlockd for each integration test. */
#include "fixture.h"
#include "proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int
fixture_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (f == NULL)
		return -errno;
	fputs(text, f);
	if (fclose(f) != 0)
		return -errno;
	return chmod(path, 0644) < 0 ? -errno : 0;
}

/* Is the daemon serving: does a hello get an answer? (The socket accepts
 * connections before the frontend exists, so a connect alone says little.) */
static int
fixture_can_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct proto_hello h = {.version = PROTO_VERSION, .peer = "fixture"};
	struct proto_out out;
	struct pollfd p;
	char buf[256];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), ok = 0;

	if (fd < 0)
		return 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto out;
	if (proto_encode_hello(1, PROTO_HELLO, &h, &out) < 0)
		goto out;
	if (proto_send(fd, &out) == 0) {
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		ok = poll(&p, 1, 100) == 1 && recv(fd, buf, sizeof(buf), 0) > 0;
	}
	proto_out_free(&out);
out:
	close(fd);
	return ok;
}

#ifndef FIXTURE_UID_SHIFT
#define FIXTURE_UID_SHIFT 0U
#endif

unsigned
fixture_uid_shift(void)
{
	return FIXTURE_UID_SHIFT;
}

/* uid moved by shift when below the band; ULONG_MAX past 32 bits. */
static unsigned long
fixture_uid_moved(unsigned long uid, unsigned shift)
{
	if (uid >= FIXTURE_UID_BAND)
		return uid;
	return uid + shift > 0xffffffffUL ? ULONG_MAX : uid + shift;
}

unsigned
fixture_uid(unsigned uid)
{
	unsigned long moved = fixture_uid_moved(uid, FIXTURE_UID_SHIFT);

	/* meson keeps offset * band below 2^31 (max 15 bands). */
	return moved > 0xffffffffUL ? uid : (unsigned)moved;
}

int
fixture_move_uid_bases(const char *in, unsigned shift, char *buf, size_t size)
{
	static const char key[] = "uid_base = ";
	size_t o = 0;
	const char *p = in;

	if (size == 0)
		return -E2BIG;
	while (*p != '\0') {
		int line_start = p == in || p[-1] == '\n';

		if (line_start && strncmp(p, key, sizeof(key) - 1) == 0 &&
		    p[sizeof(key) - 1] >= '0' && p[sizeof(key) - 1] <= '9') {
			unsigned long v, moved;
			char *end;
			int n;

			errno = 0;
			v = strtoul(p + sizeof(key) - 1, &end, 10);
			if (errno != 0 || v > 0xffffffffUL)
				return -ERANGE;
			if ((moved = fixture_uid_moved(v, shift)) == ULONG_MAX)
				return -ERANGE;
			n = snprintf(buf + o, size - o, "%s%lu", key, moved);
			if (n < 0 || (size_t)n >= size - o)
				return -E2BIG;
			o += (size_t)n;
			p = end;
			continue;
		}
		if (o + 1 >= size)
			return -E2BIG;
		buf[o++] = *p++;
	}
	buf[o] = '\0';
	return 0;
}

/* config_text with its uid_base moved to this build's band and the pool's
 * two counts at 0 unless it names them (see fixture_start), into buf;
 * -E2BIG if it does not fit. */
static int
fixture_config_text(const char *config_text, char *buf, size_t size)
{
	static char moved[80 * 1024];
	const char *pre = config_text ? config_text : "";
	int n, r;

	/* Two build directories' suites at once never share a uid (the band
	 * of tests/meson.build); the front-door tests write offset 0's. */
	if ((r = fixture_move_uid_bases(pre, FIXTURE_UID_SHIFT, moved, sizeof(moved))) < 0)
		return r;
	pre = moved;
	n = snprintf(buf, size, "%s\n[daemon]\n%s%s", pre,
		     strstr(pre, "prepared_sandboxes") ? "" : "prepared_sandboxes = 0\n",
		     strstr(pre, "prestarted_interpreters") ? "" : "prestarted_interpreters = 0\n");

	/* A config cut short would fail far from here, or worse pass. */
	if (n < 0 || (size_t)n >= size)
		return -E2BIG;
	return 0;
}

int
fixture_start(struct fixture *f, const char *config_text)
{
	const char *bin = getenv("AIRLOCKD");
	static char text[80 * 1024];
	pid_t parent;
	int i, r;

	memset(f, 0, sizeof(*f));
	if (bin == NULL)
		bin = "airlockd";
	snprintf(f->dir, sizeof(f->dir), "/tmp/airlock-test-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -errno;
	chmod(f->dir, 0755);
	snprintf(f->sock, sizeof(f->sock), "%s/airlock.sock", f->dir);
	snprintf(f->config, sizeof(f->config), "%s/airlockd.conf", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/airlockd.log", f->dir);
	/*
	 * Tests count the processes of their uid range to prove nothing is
	 * left; sandboxes prepared ahead would be counted too, and so would
	 * pre-started interpreters waiting for a run. Both are off unless a
	 * test asks for them (daemon-service tests the pool; tests/prestart
	 * and the hostile suite, whose leftover checks tell waiting
	 * interpreters apart, run with them).
	 */
	r = fixture_config_text(config_text, text, sizeof(text));
	if (r < 0)
		return r;
	config_text = text;
	r = fixture_write(f->config, config_text);
	if (r < 0)
		return r;
	parent = getpid();
	f->pid = fork();
	if (f->pid < 0)
		return -errno;
	if (f->pid == 0) {
		int fd;

		/*
		 * The daemon dies with the test: a test killed by a timeout or
		 * by hand must not leave an airlockd behind (issue 13, finding
		 * 8). SIGKILL reaches the spawner, which is airlockd's main
		 * process, through the exec (airlockd is not setuid and the
		 * spawner keeps uid 0, so nothing clears it); its frontend,
		 * keepers and sandboxes die with it by their own
		 * PR_SET_PDEATHSIG. It fires when the thread that forked ends:
		 * tests call this from their main thread. A test that died
		 * before the prctl is seen by getppid().
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(126);
		fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		execl(bin, "airlockd", "--foreground", "--debug", "--user", "nobody", "--socket",
		      f->sock, "--config", f->config, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 500; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		if (fixture_can_connect(f->sock))
			return 0;
		if (waitpid(f->pid, NULL, WNOHANG) == f->pid) {
			f->pid = 0;
			return -ECHILD;
		}
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

bool
fixture_log_has(const struct fixture *f, const char *s)
{
	static char buf[1 << 20];
	FILE *fp = fopen(f->log, "re");
	size_t n;

	if (fp == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strstr(buf, s) != NULL;
}

int
fixture_write_config(const struct fixture *f, const char *text)
{
	static char buf[80 * 1024];
	FILE *fp;
	int r;

	/* A reloaded config keeps the pool off as fixture_start's does. */
	if ((r = fixture_config_text(text, buf, sizeof(buf))) < 0)
		return r;
	text = buf;
	fp = fopen(f->config, "we");
	if (fp == NULL)
		return -errno;
	if (fputs(text, fp) == EOF)
		r = -EIO;
	if (fclose(fp) == EOF && r == 0)
		r = -EIO;
	if (r == 0 && chmod(f->config, 0644) < 0)
		r = -errno;
	return r;
}

int
fixture_alive(const struct fixture *f)
{
	return f->pid > 0 && kill(f->pid, 0) == 0 && waitpid(f->pid, NULL, WNOHANG) == 0;
}

/*
 * The log's last 8 KiB on stderr, before the directory holding it goes:
 * meson shows a test's stderr when the test fails, so a failure always
 * comes with what its daemon said.
 */
static void
fixture_log_show(const struct fixture *f)
{
	char buf[8192];
	FILE *fp = fopen(f->log, "re");
	size_t n;

	if (fp == NULL)
		return;
	if (fseek(fp, 0, SEEK_END) == 0 && ftell(fp) > (long)sizeof(buf))
		fseek(fp, -(long)sizeof(buf), SEEK_END);
	else
		rewind(fp);
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	fprintf(stderr, "--- %s (last %zu bytes) ---\n%.*s--- end of log ---\n", f->log, n, (int)n,
		buf);
}

int
fixture_stop(struct fixture *f)
{
	char cmd[160];
	int status = 0, i;

	if (f->pid > 0) {
		kill(f->pid, SIGTERM);
		for (i = 0; i < 1000; i++) {
			struct timespec ts = {0, 10 * 1000 * 1000};

			if (waitpid(f->pid, &status, WNOHANG) == f->pid)
				break;
			nanosleep(&ts, NULL);
		}
		if (i == 1000) {
			kill(f->pid, SIGKILL);
			waitpid(f->pid, &status, 0);
			status = -ETIMEDOUT;
		}
		f->pid = 0;
	}
	fixture_log_show(f);
	if (getenv("AIRLOCK_TEST_KEEP") == NULL && f->dir[0] == '/') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		if (system(cmd) != 0)
			return -EIO;
	}
	if (status < 0)
		return status;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A decimal number below 2^32 from the environment variable name. */
static int
fixture_env_uint(const char *name, unsigned *ret)
{
	const char *v = getenv(name);
	unsigned long n;
	char *end;

	if (v == NULL || v[0] < '0' || v[0] > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno != 0 || *end != '\0' || n > 0xffffffffUL)
		return -EINVAL;
	*ret = (unsigned)n;
	return 0;
}

int
fixture_uid_range(unsigned *ret_base, unsigned *ret_count)
{
	unsigned base, count;

	if (getenv("AIRLOCK_TEST_UID_BASE") == NULL) {
		*ret_base = FIXTURE_UID_BASE_BY_HAND;
		*ret_count = FIXTURE_UID_COUNT_BY_HAND;
		return 0;
	}
	if (fixture_env_uint("AIRLOCK_TEST_UID_BASE", &base) < 0 ||
	    fixture_env_uint("AIRLOCK_TEST_UID_COUNT", &count) < 0 || count == 0)
		return -EINVAL;
	*ret_base = base;
	*ret_count = count;
	return 0;
}

int
fixture_count_uid_procs(unsigned lo, unsigned hi)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	/* The range of this build's band: the other build directory's suite
	 * may run beside this one, on its own band. */
	lo = fixture_uid(lo);
	hi = fixture_uid(hi);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		char path[300], line[256];
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			unsigned uid;

			if (sscanf(line, "Uid:\t%u", &uid) == 1) {
				if (uid >= lo && uid <= hi)
					n++;
				break;
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}
