/*
 * test_basic.c: hello world in every built-in runtime, exit codes and
 * signals, through the real daemon and library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sbx.h"

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

/* Run code in runtime and assert it exited 0 printing want on stdout. */
static void
check_hello(struct sbx *s, const char *runtime, const char *code, const char *want)
{
	struct airlock_result *res = sbx_run(s, sbx_req(runtime, code));
	char *out = sbx_stdout(res);

	sbx_assert_ok(res);
	assert_string_equal(out, want);
	assert_int_equal(airlock_result_stdout_total(res), strlen(want));
	assert_false(airlock_result_stdout_truncated(res));
	assert_null(airlock_result_error(res));
	free(out);
	airlock_result_free(res);
}

static void
test_hello_python(void **state)
{
	check_hello(*state, "python", "print('hello from python')\n", "hello from python\n");
}

static void
test_hello_sh(void **state)
{
	check_hello(*state, "sh", "echo hello from sh\n", "hello from sh\n");
}

static void
test_hello_bash(void **state)
{
	/* ${BASH_VERSION:+...} prints only under bash, not under a plain sh. */
	check_hello(*state, "bash", "echo \"hello from ${BASH_VERSION:+bash}\"\n",
		    "hello from bash\n");
}

static void
test_hello_exec(void **state)
{
	struct airlock_run_req *req = sbx_req("exec", NULL);

	assert_int_equal(airlock_run_req_add_arg(req, "/bin/echo"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "hi"), 0);
	{
		struct airlock_result *res = sbx_run(*state, req);
		char *out = sbx_stdout(res);

		sbx_assert_ok(res);
		assert_string_equal(out, "hi\n");
		free(out);
		airlock_result_free(res);
	}
}

/* Arguments after the code reach an interpreted runtime's code; stdin and
 * env from the request are what the code sees. */
static void
test_args_stdin_env(void **state)
{
	struct airlock_run_req *req = sbx_req(
		"python", "import sys, os\n"
			  "print(sys.argv[1:], sys.stdin.read(), os.environ.get('GREETING'))\n");
	struct airlock_result *res;
	char *out;

	assert_int_equal(airlock_run_req_add_arg(req, "a b"), 0);
	assert_int_equal(airlock_run_req_add_arg(req, "c"), 0);
	assert_int_equal(airlock_run_req_set_stdin(req, "from stdin", 10), 0);
	assert_int_equal(airlock_run_req_set_env(req, "GREETING", "hej"), 0);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "['a b', 'c'] from stdin hej\n");
	free(out);
	airlock_result_free(res);
}

/* A non-zero exit is a result, not an error; stderr is kept apart. */
static void
test_exit_code(void **state)
{
	struct airlock_result *res = sbx_run(
		*state, sbx_req("python", "import sys\nsys.stderr.write('bye\\n')\nsys.exit(3)\n"));
	char *err = sbx_stderr(res), *out = sbx_stdout(res);

	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED)
		sbx_dump(res);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_int_equal(airlock_result_exit_code(res), 3);
	assert_int_equal(airlock_result_signal(res), 0);
	assert_string_equal(err, "bye\n");
	assert_string_equal(out, "");
	free(err);
	free(out);
	airlock_result_free(res);
}

static void
test_exit_code_sh(void **state)
{
	struct airlock_result *res = sbx_run(*state, sbx_req("sh", "exit 42\n"));

	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_int_equal(airlock_result_exit_code(res), 42);
	airlock_result_free(res);
}

static void
test_sigsegv(void **state)
{
	struct airlock_result *res = sbx_run(
		*state,
		sbx_req("python", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"));

	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_SIGNALED)
		sbx_dump(res);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_SIGNALED);
	assert_int_equal(airlock_result_signal(res), 11);
	assert_int_equal(airlock_result_exit_code(res), 0);
	airlock_result_free(res);
}

/* A real invalid memory access, not a signal sent by hand. */
static void
test_real_segfault(void **state)
{
	struct airlock_result *res =
		sbx_run(*state, sbx_req("python", "import ctypes\nctypes.string_at(0)\n"));

	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_SIGNALED)
		sbx_dump(res);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_SIGNALED);
	assert_int_equal(airlock_result_signal(res), 11);
	airlock_result_free(res);
}

/* exec of a missing program is reported as a sandbox error naming exec and
 * its errno (the code child's {step, errno}, then the lifeline's -errno). */
static void
test_exec_missing(void **state)
{
	struct airlock_run_req *req = sbx_req("exec", NULL);
	struct airlock_result *res;

	assert_int_equal(airlock_run_req_add_arg(req, "/no/such/program"), 0);
	res = sbx_run(*state, req);
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_ERROR)
		sbx_dump(res);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_ERROR);
	assert_non_null(airlock_result_error(res));
	assert_non_null(
		strstr(airlock_result_error(res), "at step exec: No such file or directory"));
	airlock_result_free(res);
}

/* The same connection serves many runs one after the other, each in a
 * fresh sandbox: a file left by one run is not seen by the next. */
static void
test_fresh_each_run(void **state)
{
	struct airlock_result *res;
	char *out;

	res = sbx_run(*state, sbx_req("sh", "echo one > /tmp/mark; echo two > mark; ls /tmp\n"));
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	/* /tmp holds the code's home (HOME) and what it wrote. */
	assert_string_equal(out, "home\nmark\n");
	free(out);
	airlock_result_free(res);
	res = sbx_run(*state, sbx_req("sh", "ls -A /tmp; ls -A ~; ls -A .; echo end\n"));
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "home\nend\n");
	free(out);
	airlock_result_free(res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_python),   cmocka_unit_test(test_hello_sh),
		cmocka_unit_test(test_hello_bash),     cmocka_unit_test(test_hello_exec),
		cmocka_unit_test(test_args_stdin_env), cmocka_unit_test(test_exit_code),
		cmocka_unit_test(test_exit_code_sh),   cmocka_unit_test(test_sigsegv),
		cmocka_unit_test(test_real_segfault),  cmocka_unit_test(test_exec_missing),
		cmocka_unit_test(test_fresh_each_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
