/*
 * test_spawner.c: unit tests of the spawner's request checks (daemon/spawner/spawner.c):
 * spawner_check_req() against every row of its table, and spawner_serve()
 * on a socketpair: a good request reaches its handler, a malformed one stops
 * the spawner with EPROTO and closes the fds it came with.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fdpass.h"
#include "spawn_msg.h"
#include "spawner.h"
#include "spawner_fixture.h"

/* Whether the check takes req of len bytes with nfds fds; ret_cmd is
 * written exactly when it does. */
static bool
check(const struct spawn_req *req, size_t len, size_t nfds)
{
	static const char sentinel;
	const struct spawner_cmd *const untouched = (const void *)&sentinel;
	const struct spawner_cmd *cmd = untouched;
	int r = spawner_check_req(req, len, nfds, &cmd);

	if (r == 0) {
		assert_ptr_not_equal(cmd, untouched);
		assert_non_null(cmd);
		return true;
	}
	assert_int_equal(r, -EPROTO);
	assert_ptr_equal(cmd, untouched);
	return false;
}

/* Every row with exactly its fds, and with one fd fewer or more. */
static void
test_every_row_exact_fds(void **state)
{
	static const struct {
		uint32_t type, flags;
		size_t nfds;
	} rows[] = {
		{.type = SPAWN_REQ, .flags = 0, .nfds = SPAWN_REQ_NFDS},
		{.type = SPAWN_REQ, .flags = SPAWN_F_WORKSPACE, .nfds = SPAWN_REQ_NFDS_MAX},
		{.type = SPAWN_REQ, .flags = SPAWN_F_PRESTARTED, .nfds = SPAWN_REQ_NFDS_PRESTARTED},
		{.type = SPAWN_REQ, .flags = SPAWN_F_ZYGOTE_RUN, .nfds = SPAWN_REQ_NFDS},
		{.type = SPAWN_PREPARE, .flags = 0, .nfds = SPAWN_PREPARE_NFDS},
		{.type = SPAWN_PREPARE,
		 .flags = SPAWN_F_PRESTART,
		 .nfds = SPAWN_PREPARE_NFDS_PRESTART},
		{.type = SPAWN_PREPARE, .flags = SPAWN_F_ZYGOTE, .nfds = SPAWN_PREPARE_NFDS},
		{.type = SPAWN_DISCARD, .flags = 0, .nfds = 0},
		{.type = SPAWN_RELOAD, .flags = 0, .nfds = 0},
		{.type = SPAWN_KEEPER, .flags = 0, .nfds = SPAWN_KEEPER_NFDS},
		{.type = SPAWN_ZYGOTE_START, .flags = 0, .nfds = SPAWN_ZYGOTE_START_NFDS},
		{.type = SPAWN_ZYGOTE_START,
		 .flags = SPAWN_F_NOPROC,
		 .nfds = SPAWN_ZYGOTE_START_NFDS},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct spawn_req r = req_of(rows[i].type, rows[i].flags);

		assert_true(check(&r, sizeof(r), rows[i].nfds));
		assert_false(check(&r, sizeof(r), rows[i].nfds + 1));
		if (rows[i].nfds > 0)
			assert_false(check(&r, sizeof(r), rows[i].nfds - 1));
	}
	assert_int_equal(SPAWN_REQ_NFDS, 4);
	assert_int_equal(SPAWN_REQ_NFDS_MAX, 5);
	assert_int_equal(SPAWN_KEEPER_NFDS, 1);
	assert_int_equal(SPAWN_REQ_NFDS_PRESTARTED, 2);
	assert_int_equal(SPAWN_PREPARE_NFDS_PRESTART, 4);
}

/* A pre-started sandbox's flags: each on its own type only, never two at
 * once, and the fds each brings. */
static void
test_prestart_flags(void **state)
{
	static const struct {
		uint32_t type, flags;
	} never[] = {
		{SPAWN_REQ, SPAWN_F_PRESTARTED | SPAWN_F_WORKSPACE},
		{SPAWN_REQ, SPAWN_F_PRESTART},
		{SPAWN_PREPARE, SPAWN_F_PRESTARTED},
		{SPAWN_KEEPER, SPAWN_F_PRESTART},
	};
	struct spawn_req r;
	size_t i, nfds;

	(void)state;
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		for (nfds = 0; nfds <= SPAWN_REQ_NFDS_MAX; nfds++) {
			r = req_of(never[i].type, never[i].flags);
			assert_false(check(&r, sizeof(r), nfds));
		}
	r = req_of(SPAWN_PREPARE, SPAWN_F_PRESTART);
	assert_false(check(&r, sizeof(r), SPAWN_PREPARE_NFDS));
	r = req_of(SPAWN_REQ, SPAWN_F_PRESTARTED);
	assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS));
}

/* The workspace flag is what makes the fifth fd: five without it, four
 * with it, are refused. */
static void
test_workspace_fd_count(void **state)
{
	struct spawn_req plain = req_of(SPAWN_REQ, 0);
	struct spawn_req ws = req_of(SPAWN_REQ, SPAWN_F_WORKSPACE);

	(void)state;
	assert_false(check(&plain, sizeof(plain), SPAWN_REQ_NFDS_MAX));
	assert_false(check(&ws, sizeof(ws), SPAWN_REQ_NFDS));
	assert_false(check(&ws, sizeof(ws), 0));
}

/* A flag a type may not carry, or no flag of ours at all. */
static void
test_stray_flags(void **state)
{
	static const uint32_t types[] = {SPAWN_PREPARE, SPAWN_DISCARD, SPAWN_RELOAD, SPAWN_KEEPER,
					 SPAWN_ZYGOTE_START};
	struct spawn_req r;
	size_t i;
	unsigned bit;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t nfds = types[i] == SPAWN_KEEPER	       ? SPAWN_KEEPER_NFDS
			      : types[i] == SPAWN_PREPARE      ? SPAWN_PREPARE_NFDS
			      : types[i] == SPAWN_ZYGOTE_START ? SPAWN_ZYGOTE_START_NFDS
							       : 0;

		r = req_of(types[i], SPAWN_F_WORKSPACE);
		assert_false(check(&r, sizeof(r), nfds));
		assert_false(check(&r, sizeof(r), nfds + 1));
		/* The zygote's flag on no other type, nor with another flag. */
		r = req_of(types[i], types[i] == SPAWN_ZYGOTE_START
					     ? SPAWN_F_NOPROC | SPAWN_F_WORKSPACE
					     : SPAWN_F_NOPROC);
		assert_false(check(&r, sizeof(r), nfds));
	}
	for (bit = 1; bit < 32; bit++) {
		r = req_of(SPAWN_REQ, 1U << bit);
		if ((1U << bit) == SPAWN_F_ZYGOTE_RUN)
			continue;
		assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS));
		if ((1U << bit) != SPAWN_F_PRESTARTED)
			assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS_PRESTARTED));
		assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS_MAX));
		r.flags |= SPAWN_F_WORKSPACE;
		assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS_MAX));
	}
	/* A zygote run: the ordinary four fds only, no workspace, on SPAWN_REQ only. */
	r = req_of(SPAWN_REQ, SPAWN_F_ZYGOTE_RUN);
	assert_true(check(&r, sizeof(r), SPAWN_REQ_NFDS));
	assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS_MAX));
	assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS_PRESTARTED));
	r.flags |= SPAWN_F_WORKSPACE;
	assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS_MAX));
	r = req_of(SPAWN_PREPARE, SPAWN_F_ZYGOTE_RUN);
	assert_false(check(&r, sizeof(r), SPAWN_PREPARE_NFDS));
}

/* Types not in the table: events (spawner -> frontend), retired, unknown. */
static void
test_unknown_types(void **state)
{
	static const uint32_t types[] = {0,	     SPAWN_STARTED, SPAWN_FAILED,
					 SPAWN_DONE, SPAWN_STOP,    SPAWN_ZYGOTE_GONE,
					 12,	     0x100,	    UINT32_MAX};
	size_t i, nfds;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		for (nfds = 0; nfds <= SPAWN_REQ_NFDS_MAX; nfds++) {
			struct spawn_req r = req_of(types[i], 0);

			assert_false(check(&r, sizeof(r), nfds));
		}
}

/* reserved must be 0 and the size exact, whatever the type. */
static void
test_reserved_and_size(void **state)
{
	struct spawn_req r = req_of(SPAWN_DISCARD, 0);

	(void)state;
	assert_true(check(&r, sizeof(r), 0));
	assert_false(check(&r, sizeof(r) - 1, 0));
	assert_false(check(&r, sizeof(r) + 1, 0));
	assert_false(check(&r, 0, 0));
	r.reserved = 1;
	assert_false(check(&r, sizeof(r), 0));
	r.reserved = 0x80000000U;
	assert_false(check(&r, sizeof(r), 0));
}

/* cpu_percent up to 4096 CPUs' worth, on every type. */
static void
test_cpu_bound(void **state)
{
	struct spawn_req r = req_of(SPAWN_REQ, 0);
	struct spawn_req p = req_of(SPAWN_PREPARE, 0);

	(void)state;
	assert_int_equal(SPAWN_CPU_PERCENT_MAX, 409600);
	r.cpu_percent = SPAWN_CPU_PERCENT_MAX;
	assert_true(check(&r, sizeof(r), SPAWN_REQ_NFDS));
	r.cpu_percent = SPAWN_CPU_PERCENT_MAX + 1;
	assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS));
	r.cpu_percent = UINT32_MAX;
	assert_false(check(&r, sizeof(r), SPAWN_REQ_NFDS));
	p.cpu_percent = SPAWN_CPU_PERCENT_MAX + 1;
	assert_false(check(&p, sizeof(p), SPAWN_PREPARE_NFDS));
}

/* What the table in docs/architecture.md says of a request of the right
 * size, reserved 0 and cpu_percent in bounds. */
static bool
oracle(uint32_t type, uint32_t flags, size_t nfds)
{
	switch (type) {
	case SPAWN_REQ:
		return ((flags == 0 || flags == SPAWN_F_ZYGOTE_RUN) && nfds == 4) ||
		       (flags == SPAWN_F_WORKSPACE && nfds == 5) ||
		       (flags == SPAWN_F_PRESTARTED && nfds == 2);
	case SPAWN_DISCARD:
		return (flags == 0 || flags == SPAWN_F_ZYGOTE) && nfds == 0;
	case SPAWN_RELOAD:
		return flags == 0 && nfds == 0;
	case SPAWN_PREPARE:
		return ((flags == 0 || flags == SPAWN_F_ZYGOTE) && nfds == 1) ||
		       (flags == SPAWN_F_PRESTART && nfds == 4);
	case SPAWN_KEEPER:
		return flags == 0 && nfds == 1;
	case SPAWN_ZYGOTE_START:
		return (flags == 0 || flags == SPAWN_F_NOPROC) && nfds == 1;
	default:
		return false;
	}
}

/*
 * Every combination of type (0-15), flags (none, each of ours, the workspace
 * with pre-started, a stray bit, the top bit), fd count (0-5), reserved (0,
 * 1), cpu_percent (0, the bound, one past it) and length (one short, exact,
 * one long) against the oracle.
 */
static void
test_every_combination(void **state)
{
	static const uint32_t flagsets[] = {0,
					    SPAWN_F_WORKSPACE,
					    SPAWN_F_PRESTART,
					    SPAWN_F_PRESTARTED,
					    SPAWN_F_WORKSPACE | SPAWN_F_PRESTARTED,
					    SPAWN_F_NOPROC,
					    SPAWN_F_ZYGOTE,
					    SPAWN_F_ZYGOTE | SPAWN_F_PRESTART,
					    SPAWN_F_ZYGOTE_RUN,
					    SPAWN_F_ZYGOTE_RUN | SPAWN_F_WORKSPACE,
					    0x40,
					    0x80000000U};
	static const uint32_t cpus[] = {0, SPAWN_CPU_PERCENT_MAX, SPAWN_CPU_PERCENT_MAX + 1};
	const size_t nflags = sizeof(flagsets) / sizeof(flagsets[0]);
	const size_t ncpus = sizeof(cpus) / sizeof(cpus[0]);
	const size_t total = 16 * nflags * (SPAWN_REQ_NFDS_MAX + 1) * 2 * ncpus * 3;
	size_t i, accepted = 0;

	(void)state;
	for (i = 0; i < total; i++) {
		size_t k = i, nfds;
		struct spawn_req r;
		int dlen;
		bool want;

		r = req_of((uint32_t)(k % 16), 0);
		k /= 16;
		r.flags = flagsets[k % nflags];
		k /= nflags;
		nfds = k % (SPAWN_REQ_NFDS_MAX + 1);
		k /= SPAWN_REQ_NFDS_MAX + 1;
		r.reserved = (uint32_t)(k % 2);
		k /= 2;
		r.cpu_percent = cpus[k % ncpus];
		k /= ncpus;
		dlen = (int)(k % 3) - 1;
		want = dlen == 0 && r.reserved == 0 && r.cpu_percent <= SPAWN_CPU_PERCENT_MAX &&
		       oracle(r.type, r.flags, nfds);
		if (check(&r, (size_t)((int)sizeof(r) + dlen), nfds) != want)
			fail_msg("type %u flags %#x nfds %zu reserved %u cpu %u len %+d", r.type,
				 r.flags, nfds, r.reserved, r.cpu_percent, dlen);
		accepted += want;
	}
	/* thirteen rows (four of SPAWN_REQ, three of SPAWN_PREPARE, two of
	 * SPAWN_DISCARD, two of SPAWN_ZYGOTE_START, one of SPAWN_RELOAD and
	 * of SPAWN_KEEPER), each with cpu 0 and at the bound */
	assert_int_equal(accepted, 26);
}

static int
serve(int peer, int sock)
{
	return serve_with(peer, sock, 0, 0);
}

/* A good request reaches its handler: SPAWN_RELOAD with no config file
 * answers SPAWN_RELOAD, err 0, no fd; then EOF ends the spawner cleanly. */
static void
test_serve_dispatches(void **state)
{
	struct spawn_req r = req_of(SPAWN_RELOAD, 0);
	struct spawn_ev ev;
	int sv[2], fds[2];
	size_t nfds = 9;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(send(sv[0], &r, sizeof(r), 0), (ssize_t)sizeof(r));
	assert_int_equal(serve(sv[0], sv[1]), 0);
	assert_int_equal(fdpass_recv(sv[0], &ev, sizeof(ev), fds, 2, &nfds), (ssize_t)sizeof(ev));
	assert_int_equal(ev.type, SPAWN_RELOAD);
	assert_int_equal(ev.err, 0);
	assert_int_equal(nfds, 0);
	close(sv[0]);
	close(sv[1]);
}

/* A malformed request with fds: EPROTO, the fds closed, nothing answered,
 * and nothing after it read. */
static void
test_serve_malformed_closes_fds(void **state)
{
	struct spawn_req bad = req_of(SPAWN_KEEPER, 0);
	struct spawn_req reload = req_of(SPAWN_RELOAD, 0);
	struct spawn_ev ev;
	int sv[2], p[2];
	char c;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	/* A keeper request with two fds where it brings one. */
	{
		int two[2] = {p[1], p[1]};

		assert_int_equal(fdpass_send(sv[0], &bad, sizeof(bad), two, 2), 0);
	}
	close(p[1]);
	assert_int_equal(send(sv[0], &reload, sizeof(reload), 0), (ssize_t)sizeof(reload));
	assert_int_equal(serve(sv[0], sv[1]), -EPROTO);
	/* Both copies of the write end were closed by the spawner: EOF. */
	assert_int_equal(read(p[0], &c, 1), 0);
	/* The reload after it was never served. */
	assert_int_equal(recv(sv[0], &ev, sizeof(ev), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
}

/* A request of the wrong size stops the spawner too. */
static void
test_serve_short_packet(void **state)
{
	struct spawn_req r = req_of(SPAWN_RELOAD, 0);
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(send(sv[0], &r, sizeof(r) - 4, 0), (ssize_t)sizeof(r) - 4);
	assert_int_equal(serve(sv[0], sv[1]), -EPROTO);
	close(sv[0]);
	close(sv[1]);
}

/*
 * The soft RLIMIT_NOFILE under which one more fd can be made and no second
 * one: spawner_serve()'s signalfd gets the lowest free number, and the fds
 * of a request are then lost (MSG_CTRUNC).
 */
static rlim_t
room_for_one(void)
{
	int a = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int b = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(a >= 0 && b > a);
	close(a);
	close(b);
	return (rlim_t)b;
}

/*
 * req sent with one pipe's write end (twice when two), served at a limit
 * that leaves the spawner no fd for them. Returns what the spawner did; its
 * answer, if any, in *ret_ev (type 0 when none); checks that the write end
 * was closed (the spawner kept no copy).
 */
static int
serve_lost(const struct spawn_req *req, int nfds, struct spawn_ev *ret_ev)
{
	int sv[2], p[2], fds[2], r;
	size_t n = 9;
	char c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fds[0] = fds[1] = p[1];
	assert_int_equal(fdpass_send(sv[0], req, sizeof(*req), fds, (size_t)nfds), 0);
	close(p[1]);
	r = serve_with(sv[0], sv[1], 2, room_for_one());
	memset(ret_ev, 0, sizeof(*ret_ev));
	if (recv(sv[0], ret_ev, 0, MSG_PEEK | MSG_DONTWAIT) >= 0)
		assert_int_equal(fdpass_recv(sv[0], ret_ev, sizeof(*ret_ev), fds, 2, &n),
				 (ssize_t)sizeof(*ret_ev));
	assert_int_equal(read(p[0], &c, 1), 0);
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
	return r;
}

/*
 * Issue 28, point 8: a request whose fds the spawner could not receive (at
 * its RLIMIT_NOFILE the kernel truncates them, MSG_CTRUNC) fails alone:
 * SPAWN_FAILED under its key, step "fds", err EMFILE, and the spawner goes
 * on to EOF. Before: fdpass_recv()'s -EMSGSIZE stopped the spawner, and
 * every sandbox with it.
 */
static void
test_serve_fds_lost_fails_one(void **state)
{
	struct spawn_req prep = req_of(SPAWN_PREPARE, 0);
	struct spawn_req start = req_of(SPAWN_REQ, 0);
	struct spawn_ev ev;

	(void)state;
	prep.uid_slot = 1;
	assert_int_equal(serve_lost(&prep, 1, &ev), 0);
	assert_int_equal(ev.type, SPAWN_FAILED);
	assert_int_equal(ev.run_id, 7);
	assert_int_equal(ev.err, -EMFILE);
	assert_int_equal(ev.pid, 0);
	assert_string_equal(ev.step, "fds");
	/* A start (four fds), whose sandbox is not there: its key answered. */
	start.prep_key = 9;
	assert_int_equal(serve_lost(&start, 2, &ev), 0);
	assert_int_equal(ev.type, SPAWN_FAILED);
	assert_int_equal(ev.run_id, 9);
	assert_int_equal(ev.err, -EMFILE);
	assert_int_equal(ev.pid, 0);
}

/* Lost fds do not excuse a malformed request: a bad slot, a type that
 * carries no fds, a bad struct still stop the spawner. */
static void
test_serve_fds_lost_malformed(void **state)
{
	struct spawn_req r = req_of(SPAWN_PREPARE, 0);
	struct spawn_ev ev;

	(void)state;
	r.uid_slot = 2; /* serve_lost's spawner has two */
	assert_int_equal(serve_lost(&r, 1, &ev), -EPROTO);
	assert_int_equal(ev.type, 0);
	r = req_of(SPAWN_DISCARD, 0);
	assert_int_equal(serve_lost(&r, 1, &ev), -EPROTO);
	r = req_of(SPAWN_PREPARE, 0);
	r.reserved = 1;
	assert_int_equal(serve_lost(&r, 1, &ev), -EPROTO);
	assert_int_equal(ev.type, 0);
}

/* The checks alone: fewer fds than the type carries, and a slot in range. */
static void
test_check_lost(void **state)
{
	struct spawn_req r = req_of(SPAWN_REQ, 0);

	(void)state;
	assert_int_equal(spawner_check_lost(&r, sizeof(r), 0, 1), 0);
	assert_int_equal(spawner_check_lost(&r, sizeof(r), 3, 1), 0);
	assert_int_equal(spawner_check_lost(&r, sizeof(r), 4, 1), -EPROTO);
	assert_int_equal(spawner_check_lost(&r, sizeof(r) - 1, 0, 1), -EPROTO);
	assert_int_equal(spawner_check_lost(&r, sizeof(r), 0, 0), -EPROTO);
	r = req_of(SPAWN_RELOAD, 0);
	assert_int_equal(spawner_check_lost(&r, sizeof(r), 0, 1), -EPROTO);
	r = req_of(999, 0);
	assert_int_equal(spawner_check_lost(&r, sizeof(r), 0, 1), -EPROTO);
}
int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_exact_fds),
		cmocka_unit_test(test_workspace_fd_count),
		cmocka_unit_test(test_prestart_flags),
		cmocka_unit_test(test_stray_flags),
		cmocka_unit_test(test_unknown_types),
		cmocka_unit_test(test_reserved_and_size),
		cmocka_unit_test(test_cpu_bound),
		cmocka_unit_test(test_every_combination),
		cmocka_unit_test(test_serve_dispatches),
		cmocka_unit_test(test_serve_malformed_closes_fds),
		cmocka_unit_test(test_serve_short_packet),
		cmocka_unit_test(test_serve_fds_lost_fails_one),
		cmocka_unit_test(test_serve_fds_lost_malformed),
		cmocka_unit_test(test_check_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
