/*
 * test_limits.c: every limit fires and is named correctly, and asking above
 * a ceiling is refused. Limits are small so the suite stays fast; timings
 * are only checked against generous bounds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbx.h"

#define MiB (1024ULL * 1024ULL)

static int
setup(void **state)
{
	static struct sbx s;

	if (sbx_start(&s, NULL) < 0)
		return -1;
	*state = &s;
	return 0;
}

static int
teardown(void **state)
{
	return sbx_stop(*state) == 0 ? 0 : -1;
}

/* Assert res has outcome want, dumping it otherwise. */
static void
assert_outcome(const struct airlock_result *res, enum airlock_outcome want)
{
	if (airlock_result_outcome(res) != want) {
		fprintf(stderr, "want outcome %s\n", airlock_outcome_name(want));
		sbx_dump(res);
	}
	assert_int_equal(airlock_result_outcome(res), want);
}

static void
test_wall_limit(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "sleep 10\n");
	struct airlock_result *res;
	uint64_t t0;

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 1000);
	t0 = sbx_now_ms();
	res = sbx_run(*state, req);
	assert_outcome(res, AIRLOCK_OUTCOME_WALL_LIMIT);
	assert_string_equal(airlock_outcome_name(airlock_result_outcome(res)), "wall_limit");
	assert_true(sbx_now_ms() - t0 < 5000);
	assert_true(airlock_result_wall_ms(res) >= 900);
	assert_true(airlock_result_wall_ms(res) < 5000);
	assert_int_equal(sbx_leftover(*state, 3000), 0);
	airlock_result_free(res);
}

static void
test_cpu_limit(void **state)
{
	struct airlock_run_req *req = sbx_req("python", "while True:\n    pass\n");
	struct airlock_result *res;

	sbx_limit(req, AIRLOCK_LIMIT_CPU_MS, 1000);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 20000);
	res = sbx_run(*state, req);
	assert_outcome(res, AIRLOCK_OUTCOME_CPU_LIMIT);
	assert_string_equal(airlock_outcome_name(airlock_result_outcome(res)), "cpu_limit");
	assert_true(airlock_result_cpu_ms(res) >= 900);
	assert_true(airlock_result_wall_ms(res) < 15000);
	airlock_result_free(res);
}

/*
 * Four busy processes, each far below the limit on its own: the run as a
 * whole passes 1 s of CPU long before any one process reaches its own
 * RLIMIT_CPU backstop (2 s). If the daemon counted per process only, the
 * busy children would die of SIGXCPU and the shell would exit 0.
 */
static void
test_cpu_limit_whole_run(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "for i in 1 2 3 4; do\n"
						    "  (while :; do :; done) &\n"
						    "done\n"
						    "wait\n"
						    "echo survived\n");
	struct airlock_result *res;
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_CPU_MS, 1000);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 20000);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	assert_outcome(res, AIRLOCK_OUTCOME_CPU_LIMIT);
	assert_string_equal(out, "");
	assert_true(airlock_result_cpu_ms(res) >= 900);
	assert_int_equal(sbx_leftover(*state, 3000), 0);
	free(out);
	airlock_result_free(res);
}

static void
test_memory_limit(void **state)
{
	struct airlock_run_req *req = sbx_req("python", "b = bytearray(200 * 1024 * 1024)\n"
							"for i in range(0, len(b), 4096):\n"
							"    b[i] = 1\n"
							"print('survived')\n");
	struct airlock_result *res;
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_MEMORY_BYTES, 64 * MiB);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 20000);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	assert_outcome(res, AIRLOCK_OUTCOME_MEMORY_LIMIT);
	assert_string_equal(airlock_outcome_name(airlock_result_outcome(res)), "memory_limit");
	assert_null(strstr(out, "survived"));
	free(out);
	airlock_result_free(res);
}

/* Below the limit the same kind of program runs fine (the limit is the
 * request's, not a fixed small one). */
static void
test_memory_below_limit(void **state)
{
	struct airlock_run_req *req = sbx_req("python", "b = bytearray(32 * 1024 * 1024)\n"
							"for i in range(0, len(b), 4096):\n"
							"    b[i] = 1\n"
							"print('survived')\n");
	struct airlock_result *res;
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_MEMORY_BYTES, 128 * MiB);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "survived\n");
	assert_true(airlock_result_memory_peak_bytes(res) >= 32 * MiB);
	free(out);
	airlock_result_free(res);
}

/* With processes = 10 forking fails with EAGAIN before the 10th child,
 * and none of the sleeping children outlives the run. */
static void
test_processes_limit(void **state)
{
	struct airlock_run_req *req = sbx_req("python", "import os, time, errno\n"
							"n = 0\n"
							"try:\n"
							"    for i in range(50):\n"
							"        if os.fork() == 0:\n"
							"            time.sleep(1000)\n"
							"            os._exit(0)\n"
							"        n += 1\n"
							"    print('forked', n)\n"
							"except OSError as e:\n"
							"    print(errno.errorcode[e.errno], n)\n");
	struct airlock_result *res;
	char *out;
	int n = -1;
	char err[32] = "";

	sbx_limit(req, AIRLOCK_LIMIT_PROCESSES, 10);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 10000);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_int_equal(sscanf(out, "%31s %d", err, &n), 2);
	assert_string_equal(err, "EAGAIN");
	assert_in_range(n, 1, 9);
	assert_int_equal(sbx_leftover(*state, 3000), 0);
	free(out);
	airlock_result_free(res);
}

/* A shell fork bomb under processes = 10 ends at the wall limit and leaves
 * nothing behind. */
static void
test_fork_bomb(void **state)
{
	/* The sleeper is forked before the bomb, and the bomb starts in one
	 * subshell: once it holds all 10 processes the main shell could fork
	 * nothing (dash: "Cannot fork", exit 2), and wait is a builtin. dash
	 * forks each element of a background pipeline from the shell that
	 * runs it, so a bomb started by the main shell itself raced it for
	 * its second fork, and lost under load (exited 2, 1 run in 3). */
	struct airlock_run_req *req =
		sbx_req("sh", "sleep 5 &\nbomb() { bomb | bomb & }\n(bomb) &\nwait\n");
	struct airlock_result *res;

	sbx_limit(req, AIRLOCK_LIMIT_PROCESSES, 10);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 1500);
	res = sbx_run(*state, req);
	/* The main shell waits; the bomb cannot grow past 10 processes. */
	assert_outcome(res, AIRLOCK_OUTCOME_WALL_LIMIT);
	assert_int_equal(sbx_leftover(*state, 3000), 0);
	airlock_result_free(res);
}

/* Writing past file_size_bytes: Python ignores SIGXFSZ, so the write fails
 * with EFBIG, and the file stops at the limit. */
static void
test_file_size_limit(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "import os, errno\n"
				  "fd = os.open('big', os.O_WRONLY | os.O_CREAT)\n"
				  "chunk = b'x' * 65536\n"
				  "try:\n"
				  "    for i in range(160):\n"
				  "        os.write(fd, chunk)\n"
				  "    print('wrote all')\n"
				  "except OSError as e:\n"
				  "    print(errno.errorcode[e.errno])\n"
				  "print(os.fstat(fd).st_size)\n");
	struct airlock_result *res;
	char *out;
	long i;

	sbx_limit(req, AIRLOCK_LIMIT_FILE_SIZE_BYTES, 1 * MiB);
	sbx_limit(req, AIRLOCK_LIMIT_ARTIFACT_BYTES, 2 * MiB);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "EFBIG\n1048576\n");
	i = sbx_artifact_find(res, "big");
	assert_true(i >= 0);
	assert_int_equal(airlock_result_artifact_size(res, (size_t)i), 1 * MiB);
	free(out);
	airlock_result_free(res);
}

/* A program that does not ignore SIGXFSZ is killed by it. */
static void
test_file_size_limit_signal(void **state)
{
	struct airlock_run_req *req = sbx_req("exec", NULL);
	struct airlock_result *res;

	assert_int_equal(airlock_run_req_add_arg(req, "/bin/dd"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "if=/dev/zero"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "of=big"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "bs=1M"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "count=10"), 0);
	sbx_limit(req, AIRLOCK_LIMIT_FILE_SIZE_BYTES, 1 * MiB);
	res = sbx_run(*state, req);
	assert_outcome(res, AIRLOCK_OUTCOME_SIGNALED);
	assert_int_equal(airlock_result_signal(res), 25 /* SIGXFSZ */);
	airlock_result_free(res);
}

/* Filling the workspace gives ENOSPC. */
static void
test_workspace_full(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "import os, errno\n"
				  "fd = os.open('fill', os.O_WRONLY | os.O_CREAT)\n"
				  "chunk = b'x' * 65536\n"
				  "try:\n"
				  "    for i in range(64):\n"
				  "        os.write(fd, chunk)\n"
				  "    print('wrote all')\n"
				  "except OSError as e:\n"
				  "    print(errno.errorcode[e.errno])\n");
	struct airlock_result *res;
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_WORKSPACE_BYTES, 1 * MiB);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "ENOSPC\n");
	free(out);
	airlock_result_free(res);
}

/* /tmp has its own size limit. */
static void
test_tmp_full(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "import os, errno\n"
				  "fd = os.open('/tmp/fill', os.O_WRONLY | os.O_CREAT)\n"
				  "chunk = b'x' * 65536\n"
				  "try:\n"
				  "    for i in range(64):\n"
				  "        os.write(fd, chunk)\n"
				  "    print('wrote all')\n"
				  "except OSError as e:\n"
				  "    print(errno.errorcode[e.errno])\n");
	struct airlock_result *res;
	char *out;

	sbx_limit(req, AIRLOCK_LIMIT_TMP_BYTES, 1 * MiB);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "ENOSPC\n");
	free(out);
	airlock_result_free(res);
}

static void
test_output_cap(void **state)
{
	struct airlock_run_req *req = sbx_req(
		"python", "import sys\nsys.stdout.write('y' * 5000000)\nsys.stderr.write('e')\n");
	struct airlock_result *res;
	const void *d;
	size_t n, k;

	sbx_limit(req, AIRLOCK_LIMIT_OUTPUT_BYTES, 1000);
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	assert_true(airlock_result_stdout_truncated(res));
	assert_int_equal(airlock_result_stdout(res, &d, &n), 0);
	assert_int_equal(n, 1000);
	for (k = 0; k < n; k++)
		assert_int_equal(((const char *)d)[k], 'y');
	assert_true(airlock_result_stdout_total(res) >= 5000000);
	/* stderr has its own cap and was not cut. */
	assert_false(airlock_result_stderr_truncated(res));
	assert_int_equal(airlock_result_stderr_total(res), 1);
	airlock_result_free(res);
}

/* Output that fits is kept whole and not flagged. */
static void
test_output_exact(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "import sys\nsys.stdout.write('y' * 1000)\n");
	struct airlock_result *res;
	const void *d;
	size_t n;

	sbx_limit(req, AIRLOCK_LIMIT_OUTPUT_BYTES, 1000);
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	assert_false(airlock_result_stdout_truncated(res));
	assert_int_equal(airlock_result_stdout(res, &d, &n), 0);
	assert_int_equal(n, 1000);
	assert_int_equal(airlock_result_stdout_total(res), 1000);
	airlock_result_free(res);
}

/* Each limit asked above its ceiling is refused with bad_request; the
 * connection stays usable. */
static void
test_above_ceiling(void **state)
{
	struct sbx *s = *state;
	struct airlock_info *info = NULL;
	int l;

	assert_int_equal(airlock_info(s->conn, &info), 0);
	for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
		uint64_t ceil = airlock_info_limit_ceiling(info, (enum airlock_limit)l);
		struct airlock_run_req *req = sbx_req("sh", "echo ran\n");
		struct airlock_result *res = NULL;
		const char *code = NULL;
		int r;

		assert_true(ceil > 0);
		sbx_limit(req, (enum airlock_limit)l, ceil + 1);
		r = airlock_run(s->conn, req, &res);
		if (r != -EPROTO)
			fprintf(stderr, "limit %s = %llu: %d\n", airlock_limit_name(l),
				(unsigned long long)ceil + 1, r);
		assert_int_equal(r, -EPROTO);
		assert_null(res);
		assert_int_equal(airlock_conn_last_error(s->conn, &code, NULL), 0);
		assert_string_equal(code, "bad_request");
		airlock_run_req_free(req);
	}
	airlock_info_free(info);
	assert_int_equal(airlock_ping(s->conn), 0);
}

/* The second group's daemon: a CPU default of 0.3 s, a CPU ceiling of 0.7 s. */
static int
setup_low_cpu(void **state)
{
	static struct sbx s;

	if (sbx_start(&s, "[limits]\ncpu_ms = 300\ncpu_ms_max = 700\n") < 0)
		return -1;
	*state = &s;
	return 0;
}

/*
 * A wall limit asked without a CPU limit raises the CPU limit to it, up to
 * the profile's ceiling (admission, docs/design-profiles.md 7b): the rule
 * the MCP server's timeout_seconds and the Jupyter kernel's wall had each
 * written for themselves, now the daemon's for every client. A CPU limit
 * asked is kept.
 */
static void
test_wall_raises_cpu(void **state)
{
	static const char spin[] = "import sys, time\n"
				   "while time.process_time() < float(sys.argv[1]): pass\n"
				   "print('spun')\n";
	struct airlock_run_req *req;
	struct airlock_result *res;
	char *out;

	/* 0.5 s of CPU under a 10 s wall: above the 0.3 s default, fine. */
	req = sbx_req("python", spin);
	assert_int_equal(airlock_run_req_add_arg(req, "0.5"), 0);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 10000);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	assert_outcome(res, AIRLOCK_OUTCOME_EXITED);
	assert_string_equal(out, "spun\n");
	free(out);
	airlock_result_free(res);
	/* 2 s asked of it: stopped at the 0.7 s ceiling, not the default. */
	req = sbx_req("python", spin);
	assert_int_equal(airlock_run_req_add_arg(req, "2"), 0);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 10000);
	res = sbx_run(*state, req);
	assert_outcome(res, AIRLOCK_OUTCOME_CPU_LIMIT);
	assert_true(airlock_result_cpu_ms(res) >= 600);
	airlock_result_free(res);
	/* A CPU limit asked is the run's: 0.3 s. */
	req = sbx_req("python", spin);
	assert_int_equal(airlock_run_req_add_arg(req, "0.5"), 0);
	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 10000);
	sbx_limit(req, AIRLOCK_LIMIT_CPU_MS, 300);
	res = sbx_run(*state, req);
	assert_outcome(res, AIRLOCK_OUTCOME_CPU_LIMIT);
	assert_true(airlock_result_cpu_ms(res) < 600);
	airlock_result_free(res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wall_limit),
		cmocka_unit_test(test_cpu_limit),
		cmocka_unit_test(test_cpu_limit_whole_run),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_memory_below_limit),
		cmocka_unit_test(test_processes_limit),
		cmocka_unit_test(test_fork_bomb),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_file_size_limit_signal),
		cmocka_unit_test(test_workspace_full),
		cmocka_unit_test(test_tmp_full),
		cmocka_unit_test(test_output_cap),
		cmocka_unit_test(test_output_exact),
		cmocka_unit_test(test_above_ceiling),
	};

	const struct CMUnitTest low_cpu[] = {
		cmocka_unit_test(test_wall_raises_cpu),
	};
	int failed = cmocka_run_group_tests(tests, setup, teardown);

	/* One daemon at a time: the first group's is stopped (its uid range). */
	return failed + cmocka_run_group_tests_name("low_cpu", low_cpu, setup_low_cpu, teardown);
}
