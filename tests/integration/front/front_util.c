/* front_util.c: helpers shared by the front-door integration tests. */
#include "front_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fdpass.h"
#include "fixture.h"

/* Drop to uid/gid for good, and check that it stuck. */
static int
front_drop(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;

	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid)
		return -EPERM;
	return 0;
}

static int
front_read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = read(fd, (char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		off += (size_t)n;
	}
	return 0;
}

int
front_as_user(uid_t uid, gid_t gid, void (*fn)(void *arg, void *buf), void *arg, void *buf,
	      size_t len)
{
	int p[2], r, status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		size_t off = 0;

		close(p[0]);
		if (front_drop(uid, gid) < 0)
			_exit(3);
		memset(buf, 0, len);
		fn(arg, buf);
		while (off < len) {
			ssize_t n = write(p[1], (char *)buf + off, len - off);

			if (n <= 0)
				_exit(4);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(p[1]);
	r = front_read_full(p[0], buf, len);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -ECHILD;
	return 0;
}

int
front_run_cmd(uid_t uid, gid_t gid, char *const argv[], char *out, size_t outlen, char *err,
	      size_t errlen)
{
	int po[2], pe[2], status;
	size_t olen = 0, elen = 0;
	struct pollfd pfd[2];
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (uid != (uid_t)-1 && front_drop(uid, gid) < 0)
			_exit(125);
		if (dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	pfd[0] = (struct pollfd){.fd = po[0], .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = pe[0], .events = POLLIN};
	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		int k;

		if (poll(pfd, 2, 60000) <= 0)
			break;
		for (k = 0; k < 2; k++) {
			char tmp[4096];
			char *dst = k == 0 ? out : err;
			size_t cap = k == 0 ? outlen : errlen, *used = k == 0 ? &olen : &elen;
			ssize_t n;

			if (pfd[k].fd < 0 || pfd[k].revents == 0)
				continue;
			n = read(pfd[k].fd, tmp, sizeof(tmp));
			if (n <= 0) {
				close(pfd[k].fd);
				pfd[k].fd = -1;
				continue;
			}
			if (cap > 0 && *used < cap - 1) {
				size_t take =
					(size_t)n < cap - 1 - *used ? (size_t)n : cap - 1 - *used;

				memcpy(dst + *used, tmp, take);
				*used += take;
			}
		}
	}
	if (pfd[0].fd >= 0)
		close(pfd[0].fd);
	if (pfd[1].fd >= 0)
		close(pfd[1].fd);
	if (outlen > 0)
		out[olen] = '\0';
	if (errlen > 0)
		err[elen] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int
front_raw_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, r;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
front_send_out(int fd, struct proto_out *out)
{
	int r = proto_send(fd, out);

	proto_out_free(out);
	return r;
}

int
front_send_hello(int fd, uint32_t id, uint32_t version)
{
	struct proto_hello h = {.version = version, .peer = "front-test"};
	struct proto_out out;
	int r = proto_encode_hello(id, PROTO_HELLO, &h, &out);

	return r < 0 ? r : front_send_out(fd, &out);
}

int
front_send_ping(int fd, uint32_t id)
{
	struct proto_out out;
	int r = proto_encode_simple(id, PROTO_PING, &out);

	return r < 0 ? r : front_send_out(fd, &out);
}

int
front_hello(const char *path)
{
	struct proto_msg m;
	int fd, r;

	fd = front_raw_connect(path);
	if (fd < 0)
		return fd;
	r = front_send_hello(fd, 1, PROTO_VERSION);
	if (r == 0)
		r = front_recv(fd, 10000, &m);
	if (r == 0) {
		if (m.type != PROTO_HELLO_OK)
			r = -EPROTO;
		proto_msg_free(&m);
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

void
front_run_init(struct proto_run *ret, const char *runtime, const char *code)
{
	memset(ret, 0, sizeof(*ret));
	ret->runtime = runtime;
	ret->code = (struct proto_blob){
		.data = (const uint8_t *)code, .len = strlen(code), .fd = -1, .present = true};
	ret->stdin_data.fd = -1;
}

int
front_file_op(int fd, uint32_t id, enum proto_type type, const char *sid, const char *path,
	      const char *data, struct proto_msg *ret_msg)
{
	struct proto_file_op op = {.session = sid, .path = path};
	struct proto_out out;
	int r;

	op.data.fd = -1;
	if (data != NULL)
		op.data = (struct proto_blob){.data = (const uint8_t *)data,
					      .len = strlen(data),
					      .fd = -1,
					      .present = true};
	r = proto_encode_file_op(id, type, &op, &out);
	return r < 0 ? r : front_call(fd, &out, id, ret_msg);
}

int
front_recv(int fd, int timeout_ms, struct proto_msg *ret_msg)
{
	static char buf[PROTO_MSG_MAX + 1];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int fds[PROTO_FDS_MAX];
	size_t nfds = 0;
	ssize_t n;
	int r;

	r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	n = fdpass_recv(fd, buf, sizeof(buf), fds, PROTO_FDS_MAX, &nfds);
	if (n == 0 || n == -ECONNRESET)
		return -ECONNRESET;
	if (n < 0)
		return (int)n;
	r = proto_decode(buf, (size_t)n, fds, nfds, ret_msg, NULL, NULL, NULL, 0);
	return r < 0 ? -EBADMSG : 0;
}

int
front_recv_reply(int fd, uint32_t id, int timeout_ms, struct proto_msg *ret_msg)
{
	struct proto_msg m;
	int r;

	for (;;) {
		r = front_recv(fd, timeout_ms, &m);
		if (r < 0)
			return r;
		if (m.id == id && m.type != PROTO_STREAM) {
			*ret_msg = m;
			return 0;
		}
		proto_msg_free(&m);
	}
}

int
front_call(int fd, struct proto_out *out, uint32_t id, struct proto_msg *ret_msg)
{
	int r = front_send_out(fd, out);

	return r < 0 ? r : front_recv_reply(fd, id, FRONT_REPLY_MS, ret_msg);
}

int
front_wait_eof(int fd, int timeout_ms)
{
	for (;;) {
		struct proto_msg m;
		int r = front_recv(fd, timeout_ms, &m);

		if (r == -ECONNRESET)
			return 0;
		if (r < 0 && r != -EBADMSG)
			return r;
		if (r == 0)
			proto_msg_free(&m);
	}
}

void
front_fail_log(const char *log, const char *fmt, ...)
{
	char msg[512], buf[6144];
	va_list ap;
	FILE *fp;
	long size;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fp = fopen(log, "re");
	if (fp != NULL) {
		fseek(fp, 0, SEEK_END);
		size = ftell(fp);
		fseek(fp, size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0,
		      SEEK_SET);
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		buf[n] = '\0';
		fclose(fp);
		fprintf(stderr, "---- the daemon's log (tail) ----\n%s\n----\n", buf);
	}
	fail_msg("%s", msg);
	abort(); /* not reached */
}

uint64_t
front_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct airlock_conn *
front_conn(const char *sock)
{
	struct airlock_conn *c = NULL;

	assert_int_equal(airlock_connect(sock, &c), 0);
	return c;
}

struct airlock_run_req *
front_py_req(const char *code, const char *profile)
{
	struct airlock_run_req *req = NULL;

	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "python"), 0);
	assert_int_equal(airlock_run_req_set_code(req, code, strlen(code)), 0);
	assert_int_equal(airlock_run_req_set_profile(req, profile), 0);
	return req;
}

int
front_run_req(struct airlock_conn *c, struct airlock_run_req *req, struct airlock_result **ret,
	      char *code, char *msg)
{
	const char *ec, *em;
	int r;

	*ret = NULL;
	r = airlock_run(c, req, ret);
	code[0] = msg[0] = '\0';
	if (r < 0 && airlock_conn_last_error(c, &ec, &em) == 0) {
		snprintf(code, 64, "%s", ec);
		snprintf(msg, 512, "%s", em);
	}
	airlock_run_req_free(req);
	return r;
}

void
front_send_sh(int fd, uint32_t id, const char *code)
{
	struct proto_run run;
	struct proto_out out;

	front_run_init(&run, "sh", code);
	assert_int_equal(proto_encode_run(id, &run, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
}

void
front_send_ps(int fd, uint32_t id)
{
	struct proto_out out;

	assert_int_equal(proto_encode_simple(id, PROTO_PS, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
}

void
front_recv_id(int fd, uint32_t id, struct proto_msg *m)
{
	assert_int_equal(front_recv(fd, 20000, m), 0);
	if (m->id != id)
		print_message("expected id %u, got %u (%s)\n", id, m->id, proto_type_name(m->type));
	assert_int_equal(m->id, id);
}

bool
front_no_procs_left(unsigned lo, unsigned hi, int ms)
{
	uint64_t end = front_now_ms() + (uint64_t)ms;

	for (;;) {
		if (fixture_count_uid_procs(lo, hi) == 0)
			return true;
		if (front_now_ms() >= end)
			return false;
		front_sleep_ms(10);
	}
}

/* Is pid's real uid in [lo, hi] and its comm comm? */
static bool
front_proc_is(const char *pid, unsigned lo, unsigned hi, const char *comm)
{
	char path[300], line[256];
	unsigned uid;
	bool uid_ok = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false; /* gone meanwhile */
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Uid:\t%u", &uid) == 1) {
			uid_ok = uid >= lo && uid <= hi;
			break;
		}
	fclose(f);
	if (!uid_ok)
		return false;
	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	line[0] = '\0';
	if (fgets(line, sizeof(line), f) != NULL)
		line[strcspn(line, "\n")] = '\0';
	fclose(f);
	return strcmp(line, comm) == 0;
}

bool
front_wait_named(unsigned lo, unsigned hi, const char *comm, int ms)
{
	uint64_t end = front_now_ms() + (uint64_t)ms;

	lo = fixture_uid(lo);
	hi = fixture_uid(hi);
	for (;;) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		bool found = false;

		assert_non_null(d);
		while (!found && (e = readdir(d)) != NULL)
			if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
				found = front_proc_is(e->d_name, lo, hi, comm);
		closedir(d);
		if (found)
			return true;
		if (front_now_ms() >= end)
			return false;
		front_sleep_ms(10);
	}
}

void
front_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int
front_count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

pid_t
front_first_child(pid_t pid)
{
	char path[96];
	FILE *f;
	int child = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	if (fscanf(f, "%d", &child) != 1)
		child = -ESRCH;
	fclose(f);
	return child;
}
