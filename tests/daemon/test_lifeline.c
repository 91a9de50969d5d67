/*
 * test_lifeline.c: unit tests of daemon/frontend/lifeline.c, what a run's
 * supervisor may say on its lifeline, over a real socketpair. What the
 * lifeline hands on (artifacts, egress and tool listeners, the cells ops)
 * are link seams here that count their calls and close the fds they take.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h> /* cmocka.h needs it */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdpass.h"
#include "run.h"
#include "run_owner.h"
#include "run_tools.h"

static int artifacts, figures, egresses, tools, channels, cell_ends, cell_losts;

void
run_io_add_artifact(struct run *r, const struct sup_msg *m, int fd)
{
	(void)r;
	(void)m;
	close(fd);
	artifacts++;
}

void
run_display_add(struct run *r, const struct sup_msg *m, int fd)
{
	(void)r;
	(void)m;
	close(fd);
	figures++;
}

void
run_io_egress_open(struct run *r, int fd)
{
	(void)r;
	close(fd);
	egresses++;
}

void
run_tools_listen(struct run *r, int fd)
{
	(void)r;
	close(fd);
	tools++;
}

void
run_io_close_lifeline(struct run *r)
{
	if (r->lifeline >= 0)
		close(r->lifeline);
	r->lifeline = -1;
}

static void
t_channel(struct cells *cs, struct run *r, int fd)
{
	(void)cs;
	(void)r;
	close(fd);
	channels++;
}

static void
t_sup_end(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	(void)cs;
	(void)r;
	(void)m;
	cell_ends++;
}

static void
t_sup_lost(struct cells *cs, struct run *r, const struct sup_msg *m)
{
	(void)cs;
	(void)r;
	(void)m;
	cell_losts++;
}

static const struct run_cells_ops t_cells_ops = {
	.channel = t_channel,
	.sup_end = t_sup_end,
	.sup_lost = t_sup_lost,
};

static struct daemon d;
static struct run r;
static int peer = -1;

static int
setup(void **state)
{
	int sv[2];

	(void)state;
	memset(&d, 0, sizeof(d));
	memset(&r, 0, sizeof(r));
	d.cells_ops = &t_cells_ops;
	r.d = &d;
	r.run_id = 7;
	artifacts = figures = egresses = tools = channels = cell_ends = cell_losts = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
		return -1;
	r.lifeline = sv[0];
	peer = sv[1];
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (r.lifeline >= 0)
		close(r.lifeline);
	if (peer >= 0)
		close(peer);
	peer = -1;
	return 0;
}

/* The supervisor's side: a message of type (len bytes of it) with nfds
 * fds (a pipe's read end each). */
static void
say(uint32_t type, size_t len, size_t nfds)
{
	struct sup_msg m;
	int fds[2] = {-1, -1}, p[2][2];
	size_t i;

	memset(&m, 0, sizeof(m));
	m.type = type;
	for (i = 0; i < nfds; i++) {
		assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
		fds[i] = p[i][0];
	}
	assert_int_equal(fdpass_send(peer, &m, len, fds, nfds), 0);
	for (i = 0; i < nfds; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}

/* Is any fd but 0-2, the lifeline and its peer open? (Received fds were
 * closed.) */
static int
fds_open(void)
{
	int fd, n = 0;

	for (fd = 3; fd < 64; fd++)
		if (fd != r.lifeline && fd != peer && fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

/* The run ended by the lifeline: closed, the fact set, every fd closed. */
static void
assert_refused(void)
{
	assert_int_equal(r.lifeline, -1);
	assert_true(r.f.lifeline_bad);
	assert_true(r.f.lifeline_why[0] != '\0');
	assert_int_equal(fds_open(), 0);
}

static void
test_rows_handled(void **state)
{
	(void)state;
	r.cells = (struct cells *)&d; /* an interpreter's run: any non-NULL */
	say(SUP_ARTIFACT, sizeof(struct sup_msg), 1);
	say(SUP_DISPLAY, sizeof(struct sup_msg), 1);
	say(SUP_EGRESS, sizeof(struct sup_msg), 1);
	say(SUP_TOOLS, sizeof(struct sup_msg), 1);
	say(SUP_CELLS, sizeof(struct sup_msg), 1);
	say(SUP_CELL_END, sizeof(struct sup_msg), 0);
	say(SUP_CELL_LOST, sizeof(struct sup_msg), 0);
	say(SUP_EXIT, sizeof(struct sup_msg), 0);
	assert_false(lifeline_read(&r, 64));
	assert_int_equal(artifacts, 1);
	assert_int_equal(figures, 1);
	assert_int_equal(egresses, 1);
	assert_int_equal(tools, 1);
	assert_int_equal(channels, 1);
	assert_int_equal(cell_ends, 1);
	assert_int_equal(cell_losts, 1);
	assert_true(r.f.sup_exit);
	assert_false(r.f.lifeline_bad);
	assert_true(r.lifeline >= 0); /* closed once the run is answered */
	assert_int_equal(fds_open(), 0);
}

static void
test_setup_failed(void **state)
{
	struct sup_msg m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = SUP_SETUP_FAILED;
	m.step = 3;
	m.err = -EPERM;
	assert_int_equal(fdpass_send(peer, &m, sizeof(m), NULL, 0), 0);
	assert_true(lifeline_read(&r, 64)); /* EAGAIN: more may come */
	assert_true(r.f.setup_failed);
	assert_int_equal(r.f.fail_step, 3);
	assert_int_equal(r.f.fail_err, -EPERM);
	assert_false(r.f.lifeline_bad);
}

static void
test_eof(void **state)
{
	(void)state;
	close(peer);
	peer = -1;
	assert_false(lifeline_read(&r, 64));
	assert_int_equal(r.lifeline, -1);
	assert_false(r.f.lifeline_bad);
}

static void
test_unknown_type(void **state)
{
	(void)state;
	say(7, sizeof(struct sup_msg), 0);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
}

static void
test_unknown_type_with_fd(void **state)
{
	(void)state;
	say(0, sizeof(struct sup_msg), 1);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
}

static void
test_wrong_fd_count(void **state)
{
	(void)state;
	say(SUP_EXIT, sizeof(struct sup_msg), 1);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
	assert_false(r.f.sup_exit);
}

static void
test_artifact_without_fd(void **state)
{
	(void)state;
	say(SUP_ARTIFACT, sizeof(struct sup_msg), 0);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
	assert_int_equal(artifacts, 0);
}

static void
test_too_many_fds(void **state)
{
	(void)state;
	say(SUP_ARTIFACT, sizeof(struct sup_msg), 2);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
	assert_int_equal(artifacts, 0);
}

static void
test_short(void **state)
{
	(void)state;
	say(SUP_EXIT, sizeof(struct sup_msg) - 1, 0);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
	assert_false(r.f.sup_exit);
}

static void
test_cells_row_needs_interpreter(void **state)
{
	(void)state;
	r.cells = NULL;
	say(SUP_CELLS, sizeof(struct sup_msg), 1);
	assert_false(lifeline_read(&r, 64));
	assert_refused();
	assert_int_equal(channels, 0);
}

static void
test_after_exit(void **state)
{
	(void)state;
	say(SUP_EXIT, sizeof(struct sup_msg), 0);
	say(SUP_ARTIFACT, sizeof(struct sup_msg), 1);
	assert_false(lifeline_read(&r, 64)); /* stops at SUP_EXIT */
	assert_true(r.f.sup_exit);
	assert_false(r.f.lifeline_bad);
	assert_false(lifeline_read(&r, 64)); /* the reap's read: what followed */
	assert_refused();
	assert_int_equal(artifacts, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_handled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_type_with_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_fd_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_artifact_without_fd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cells_row_needs_interpreter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_exit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
