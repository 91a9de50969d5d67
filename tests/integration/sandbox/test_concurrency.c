/*
 * test_concurrency.c: 20 runs at once over 4 connections with the
 * non-blocking API, each answered with its own output; and the busy refusal
 * when max_runs is reached.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbx.h"

#define NCONN 4
#define NRUNS 20

static int
setup(void **state)
{
	static struct sbx s;

	if (sbx_start(&s, "[daemon]\nmax_runs = 32\nmax_runs_per_uid = 32\n") < 0)
		return -1;
	*state = &s;
	return 0;
}

static int
teardown(void **state)
{
	return sbx_stop(*state) == 0 ? 0 : -1;
}

static void
test_twenty_concurrent_runs(void **state)
{
	struct sbx *s = *state;
	struct airlock_conn *conns[NCONN] = {NULL};
	uint32_t ids[NRUNS];
	int conn_of[NRUNS], done[NRUNS] = {0};
	int ndone = 0, i, max_seen = 0;
	uint64_t deadline = sbx_now_ms() + 120000;

	for (i = 0; i < NCONN; i++)
		assert_int_equal(airlock_connect(s->f.sock, &conns[i]), 0);
	for (i = 0; i < NRUNS; i++) {
		/* Each run sleeps a little so they overlap, then prints its own
		 * token (given as an argument) and writes its own artifact. */
		struct airlock_run_req *req =
			sbx_req("python", "import sys, time\n"
					  "time.sleep(1)\n"
					  "open('mine.txt', 'w').write(sys.argv[1])\n"
					  "print('run', sys.argv[1])\n");
		char tok[16];

		snprintf(tok, sizeof(tok), "%d", i);
		assert_int_equal(airlock_run_req_add_arg(req, tok), 0);
		sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 60000);
		conn_of[i] = i % NCONN;
		assert_int_equal(airlock_run_submit(conns[conn_of[i]], req, &ids[i]), 0);
		airlock_run_req_free(req);
	}
	while (ndone < NRUNS) {
		struct pollfd p[NCONN];
		int c, n;

		assert_true(sbx_now_ms() < deadline);
		for (c = 0; c < NCONN; c++) {
			p[c].fd = airlock_conn_fd(conns[c]);
			p[c].events = POLLIN;
			p[c].revents = 0;
		}
		n = poll(p, NCONN, 200);
		assert_true(n >= 0);
		n = fixture_count_uid_procs(s->uid_base, s->uid_base + s->uid_count - 1);
		if (n > max_seen)
			max_seen = n;
		for (c = 0; c < NCONN; c++) {
			struct airlock_result *res = NULL;
			uint32_t id = 0;
			int r;

			if (p[c].revents != 0)
				assert_int_equal(airlock_conn_process(conns[c]), 0);
			while ((r = airlock_conn_next_result(conns[c], &id, &res)) == 0) {
				char want[32], *out, *art;
				int k;

				for (k = 0; k < NRUNS; k++)
					if (conn_of[k] == c && ids[k] == id)
						break;
				assert_true(k < NRUNS);
				assert_false(done[k]);
				done[k] = 1;
				ndone++;
				sbx_assert_ok(res);
				snprintf(want, sizeof(want), "run %d\n", k);
				out = sbx_stdout(res);
				assert_string_equal(out, want);
				assert_int_equal(airlock_result_artifact_count(res), 1);
				art = sbx_artifact(res, 0);
				snprintf(want, sizeof(want), "%d", k);
				assert_string_equal(art, want);
				free(art);
				free(out);
				airlock_result_free(res);
			}
			if (r != -EAGAIN) {
				const char *code = "", *msg = "";

				airlock_conn_last_error(conns[c], &code, &msg);
				fprintf(stderr, "next_result: %d (%s: %s)\n", r, code, msg);
			}
			assert_int_equal(r, -EAGAIN);
		}
	}
	/* They really ran side by side: many sandboxes (two processes each
	 * at least) existed at one moment. */
	fprintf(stderr, "at most %d sandbox processes at once\n", max_seen);
	assert_true(max_seen >= 10);
	for (i = 0; i < NCONN; i++)
		airlock_conn_free(conns[i]);
	assert_int_equal(sbx_leftover(s, 3000), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_twenty_concurrent_runs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
