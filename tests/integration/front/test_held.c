/*
 * Issue 28, point 3: the memfds a client keeps are bounded per uid, for
 * every reply (file reads too, not only runs). One uid keeps tiny file
 * reads past max_fds_per_uid (and past the frontend's global ceiling of
 * probes, where replies used to fall back to "counted until read"): they
 * are answered busy, and its 8 MiB reads then never pass its 48M budget.
 * Before the fix (found by the review of issue 28) it kept 20 of 20.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"
#include "memfd.h"

#define CFG                                                                                        \
	"[daemon]\nsocket_mode = 0666\nmax_runs = 2\nmax_bytes_per_uid = 48M\n"                    \
	"[access]\nallow_users = nobody\n"                                                         \
	"[sessions]\nfile_max_bytes = 8M\n[sandbox]\nuid_base = 761440\n"
#define WAIT_MS 10000

struct seen {
	int tiny_fds, tiny_busy, big_held_busy, big_held_kept, big_kept, big_busy, other;
	char busy_msg[160]; /* the first busy answer's message */
};

static int
write_file(int fd, const char *session, const char *path, size_t len)
{
	struct proto_file_op op = {0};
	struct proto_out out;
	struct proto_msg m;
	uint8_t *data = malloc(len);
	int mfd, r;

	if (data == NULL)
		return -1;
	for (size_t k = 0; k < len; k++)
		data[k] = (uint8_t)(k * 7 + 1);
	if (memfd_sealed_create("data", data, len, &mfd) < 0)
		return -1;
	op.session = session;
	op.path = path;
	op.data = (struct proto_blob){.data = data, .len = len, .fd = mfd, .present = true};
	r = proto_encode_file_op(3, PROTO_FILE_WRITE, &op, &out) < 0 ||
			    front_send_out(fd, &out) < 0 || front_recv(fd, WAIT_MS, &m) < 0 ||
			    m.type != PROTO_OK
		    ? -1
		    : 0;
	if (r == 0)
		proto_msg_free(&m);
	free(data);
	return r;
}

/*
 * Read path once; 1: data kept (its fd dup'ed into *kept, left open), 0:
 * busy (its message into msg when msg is empty), -1 else.
 */
static int
read_keep(int fd, uint32_t id, const char *session, const char *path, int *kept, char *msg,
	  size_t msgsz)
{
	struct proto_file_op op = {0};
	struct proto_out out;
	struct proto_msg m;
	int r = -1;

	op.session = session;
	op.path = path;
	op.data.fd = -1;
	if (proto_encode_file_op(id, PROTO_FILE_READ, &op, &out) < 0 ||
	    front_send_out(fd, &out) < 0 || front_recv_reply(fd, id, WAIT_MS, &m) < 0)
		return -1;
	*kept = -1;
	if (m.type == PROTO_FILE_DATA && m.u.file_data.data.fd >= 0) {
		*kept = fcntl(m.u.file_data.data.fd, F_DUPFD_CLOEXEC, 0);
		if (*kept < 0)
			_exit(20);
		r = 1;
	} else if (m.type == PROTO_ERROR && m.u.error.code == PROTO_ERR_BUSY) {
		if (msg[0] == '\0')
			snprintf(msg, msgsz, "%s", m.u.error.message ? m.u.error.message : "");
		r = 0;
	}
	proto_msg_free(&m);
	return r;
}

static void
attack(const char *sock, int pipe_w, int ntiny)
{
	struct proto_session_open so = {0};
	struct proto_out out;
	struct proto_msg m;
	struct seen s = {0};
	char session[128];
	int fd = front_hello(sock), i, r, kept, *tiny;

	if (fd < 0)
		_exit(5);
	if (proto_encode_session_open(2, &so, &out) < 0 || front_send_out(fd, &out) < 0 ||
	    front_recv(fd, WAIT_MS, &m) < 0 || m.type != PROTO_SESSION_OK)
		_exit(6);
	snprintf(session, sizeof(session), "%s", m.u.session.session);
	proto_msg_free(&m);
	if (write_file(fd, session, "tiny", 1) < 0 || write_file(fd, session, "big", 8 << 20) < 0)
		_exit(7);
	tiny = calloc((size_t)ntiny, sizeof(*tiny));
	if (tiny == NULL)
		_exit(8);
	for (i = 0; i < ntiny; i++) {
		r = read_keep(fd, (uint32_t)(100 + i), session, "tiny", &tiny[i], s.busy_msg,
			      sizeof(s.busy_msg));
		if (r == 1)
			s.tiny_fds++;
		else if (r == 0)
			s.tiny_busy++;
		else
			s.other++;
	}
	/* While the tiny ones are kept, no reply with a memfd is given. */
	for (i = 0; i < 4; i++) {
		r = read_keep(fd, (uint32_t)(50000 + i), session, "big", &kept, s.busy_msg,
			      sizeof(s.busy_msg));
		if (r == 0)
			s.big_held_busy++;
		else if (r == 1)
			s.big_held_kept++; /* and never closed */
		else
			s.other++;
	}
	/* Let them go: the room comes back, bounded by the byte budget. */
	for (i = 0; i < ntiny; i++)
		if (tiny[i] >= 0)
			close(tiny[i]);
	for (i = 0; i < 20; i++) {
		r = read_keep(fd, (uint32_t)(100000 + i), session, "big", &kept, s.busy_msg,
			      sizeof(s.busy_msg));
		if (r == 1)
			s.big_kept++;
		else if (r == 0)
			s.big_busy++;
		else
			s.other++;
	}
	if (write(pipe_w, &s, sizeof(s)) != sizeof(s))
		_exit(10);
	for (;;)
		pause();
}

static void
test_held_capped_per_uid(void **state)
{
	struct fixture f;
	struct seen s;
	struct rlimit rl;
	int p[2], ntiny;
	pid_t pid;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	/* The frontend raises its soft limit to the hard one: held_max is a
	 * quarter of half of it. */
	ntiny = (int)(rl.rlim_max / 8) + 64;
	print_message("hard RLIMIT_NOFILE %llu: held_max about %llu; %d tiny reads\n",
		      (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max / 8, ntiny);
	assert_int_equal(fixture_start(&f, CFG), 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		if (setgroups(0, NULL) < 0 ||
		    setresgid(FRONT_NOBODY_GID, FRONT_NOBODY_GID, FRONT_NOBODY_GID) < 0 ||
		    setresuid(FRONT_NOBODY_UID, FRONT_NOBODY_UID, FRONT_NOBODY_UID) < 0)
			_exit(3);
		attack(f.sock, p[1], ntiny);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &s, sizeof(s)), (ssize_t)sizeof(s));
	close(p[0]);
	print_message("tiny reads kept %d (busy %d); 8 MiB reads while kept: busy %d, kept %d; "
		      "after: kept %d (busy %d); other %d; busy says: %s\n",
		      s.tiny_fds, s.tiny_busy, s.big_held_busy, s.big_held_kept, s.big_kept,
		      s.big_busy, s.other, s.busy_msg);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(fixture_stop(&f), 0);
	/* Bounded: 48 MiB, less a packet's worth, is at most 5 of them. */
	if (s.big_held_kept + s.big_kept > 5)
		fail_msg("one uid kept %d 8 MiB file reads (%d MiB) under max_bytes_per_uid = 48M",
			 s.big_held_kept + s.big_kept, (s.big_held_kept + s.big_kept) * 8);
	assert_true(s.big_kept >= 1);
	assert_int_equal(s.big_busy, 20 - s.big_kept);
	/* The tiny ones: max_fds_per_uid (256) kept, the rest busy, saying
	 * why; the big ones busy too while those were kept. */
	assert_int_equal(s.other, 0);
	assert_int_equal(s.tiny_fds, 256);
	assert_int_equal(s.tiny_busy, ntiny - 256);
	assert_int_equal(s.big_held_busy, 4);
	assert_non_null(strstr(s.busy_msg, "memfds of results open"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_capped_per_uid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
