/*
 * test_profiles_alone.c: the profile tests that need a daemon configured
 * for them alone (split from test_profiles.c, whose tests share one daemon):
 *
 * - runtimes = (issue 32, point 8): a profile's runs and sessions use only
 *   its runtimes (its own [runtime] sections);
 * - hidden_paths on a host whose /usr has a mount beneath it: named at
 *   start-up and at a reload, a run fails at step hidden_paths (the test
 *   makes that mount in a mount namespace of its own, so it runs last).
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

/*
 * A host whose /usr has a mount beneath it (the unit's old
 * ProtectKernelModules=yes did that to /usr/lib/modules) cannot give the
 * hidden_paths overlay its lower layer: the daemon says so at start-up and
 * at a reload, by the profile's name, and a run of the profile fails at step
 * hidden_paths.
 * The mount is made in this test's own mount namespace, which the daemon it
 * starts inherits; the host's /usr is untouched.
 */
#define HIDER_SANDBOX "[sandbox]\nuid_base = 1500064\nuid_count = 16\n"
static void
test_hidden_usr_submount(void **state)
{
	static struct fixture f;
	struct airlock_conn *c;
	struct airlock_result *res;
	char code[64], msg[512];
	const char *err;
	int i;

	(void)state;
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	assert_int_equal(mount("airlock-test", "/usr/local", "tmpfs", 0, "size=64k"), 0);
	assert_int_equal(fixture_start(&f, HIDER_SANDBOX
				       "[profile hider]\nhidden_paths = /usr/share/doc\n"
				       "[profile etc]\nhidden_paths = /etc/ssl\n"),
			 0);
	if (!fixture_log_has(&f, "profile hider: hidden_paths under /usr cannot work here: "
				 "/usr/local is a mount beneath /usr"))
		fail_msg("no start-up warning for profile hider");
	/* Only a profile that hides something under /usr is named. */
	assert_false(fixture_log_has(&f, "profile etc: hidden_paths"));

	c = front_conn(f.sock);
	assert_int_equal(front_run_req(c, front_py_req("print(1)", "hider"), &res, code, msg), 0);
	err = airlock_result_error(res);
	if (err == NULL || strstr(err, "hidden_paths") == NULL)
		fail_msg("hider: outcome %s, error %s",
			 airlock_outcome_name(airlock_result_outcome(res)), err != NULL ? err : "");
	airlock_result_free(res);
	/* Hiding under /etc needs no overlay: it still works here. */
	assert_int_equal(
		front_run_req(c,
			      front_py_req("import os; print(os.path.exists('/etc/ssl'))", "etc"),
			      &res, code, msg),
		0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	airlock_result_free(res);
	airlock_conn_free(c);
	/* A profile that a reload brings is named too (the warning was once
	 * given at start-up only). */
	assert_int_equal(fixture_write_config(&f, HIDER_SANDBOX "[profile later]\n"
								"hidden_paths = /usr/bin/true\n"),
			 0);
	assert_int_equal(kill(f.pid, SIGHUP), 0);
	for (i = 0; i < 300 && !fixture_log_has(&f, "profile later: hidden_paths under /usr "
						    "cannot work here");
	     i++)
		front_sleep_ms(10);
	if (!fixture_log_has(&f, "profile later: hidden_paths under /usr cannot work here: "
				 "/usr/local is a mount beneath /usr"))
		fail_msg("no warning at reload for profile later");
	assert_int_equal(fixture_stop(&f), 0);
	assert_int_equal(umount("/usr/local"), 0);
}

/* A request of runtime under profile (NULL: none named), its code code. */
static struct airlock_run_req *
rt_req(const char *runtime, const char *code, const char *profile)
{
	struct airlock_run_req *req = front_py_req(code, profile);

	assert_int_equal(airlock_run_req_set_runtime(req, runtime), 0);
	return req;
}

/*
 * runtimes = (issue 32, point 8): a profile's runs and sessions use only its
 * runtimes, refused by admit_decide() naming the runtime, the profile and
 * its list; a runtime is a Python by its program, not its name, in info's
 * runtime_packages (py3x is one, python-sh is not).
 */
#define RT_CFG                                                                                     \
	"[sandbox]\nuid_base = 1500080\nuid_count = 16\n"                                          \
	"[profile pyonly]\nruntimes = python, py3x\n"                                              \
	"[profile shonly]\nruntimes = sh\n"                                                        \
	"[runtime py3x]\nargv = /usr/bin/python3 -I -B {code}\ncode_name = main.py\n"              \
	"[runtime python-sh]\nargv = /bin/sh {code}\ncode_name = main.sh\n"

static void
test_profile_runtimes(void **state)
{
	struct fixture f;
	struct airlock_conn *c;
	struct airlock_session_opts *opts = NULL;
	struct airlock_result *res;
	struct airlock_info *info = NULL;
	char id[AIRLOCK_SESSION_ID_LEN + 1], code[64], msg[512];
	const char *ec, *em;
	bool py3x = false, pysh = false;
	size_t i;

	(void)state;
	assert_int_equal(fixture_start(&f, RT_CFG), 0);
	c = front_conn(f.sock);
	assert_int_equal(front_run_req(c, rt_req("sh", "echo hi", "pyonly"), &res, code, msg),
			 -EACCES);
	assert_string_equal(code, "unauthorized");
	assert_string_equal(msg, "runtime 'sh' is not available under profile 'pyonly' (its "
				 "runtimes: python, py3x)");
	assert_int_equal(front_run_req(c, rt_req("py3x", "print(3)", "pyonly"), &res, code, msg),
			 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	airlock_result_free(res);
	/* A profile without the key: every runtime. */
	assert_int_equal(front_run_req(c, rt_req("sh", "echo hi", "minimal"), &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	airlock_result_free(res);

	/* A session's interpreter at its open, and a session's run. */
	assert_int_equal(airlock_session_opts_new(&opts), 0);
	assert_int_equal(airlock_session_opts_set_profile(opts, "shonly"), 0);
	assert_int_equal(airlock_session_opts_set_interpreter(opts, "python"), 0);
	assert_int_equal(airlock_session_open(c, opts, id), -EACCES);
	assert_int_equal(airlock_conn_last_error(c, &ec, &em), 0);
	assert_string_equal(em, "runtime 'python' is not available under profile 'shonly' (its "
				"runtimes: sh)");
	airlock_session_opts_free(opts);
	assert_int_equal(airlock_session_opts_new(&opts), 0);
	assert_int_equal(airlock_session_opts_set_profile(opts, "shonly"), 0);
	assert_int_equal(airlock_session_open(c, opts, id), 0);
	airlock_session_opts_free(opts);
	{
		struct airlock_run_req *req = rt_req("python", "print(1)", NULL);

		assert_int_equal(airlock_run_req_set_session(req, id), 0);
		assert_int_equal(front_run_req(c, req, &res, code, msg), -EACCES);
		assert_non_null(strstr(msg, "runtime 'python' is not available under profile "
					    "'shonly'"));
		req = rt_req("sh", "echo in session", NULL);
		assert_int_equal(airlock_run_req_set_session(req, id), 0);
		assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
		assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
		airlock_result_free(res);
	}
	assert_int_equal(airlock_session_close(c, id), 0);

	assert_int_equal(airlock_info(c, &info), 0);
	for (i = 0; i < airlock_info_runtime_count(info); i++) {
		const char *name = airlock_info_runtime_name(info, i);
		const char *pk = airlock_info_runtime_packages(info, i);

		if (strcmp(name, "py3x") == 0)
			py3x = pk != NULL;
		if (strcmp(name, "python-sh") == 0)
			pysh = pk != NULL;
	}
	airlock_info_free(info);
	if (!py3x || pysh)
		fail_msg("runtime_packages: py3x %s, python-sh %s (want listed, not listed)",
			 py3x ? "listed" : "not listed", pysh ? "listed" : "not listed");
	airlock_conn_free(c);
	assert_int_equal(fixture_stop(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_runtimes),
		/* Last: it leaves this process in a mount namespace of its own. */
		cmocka_unit_test(test_hidden_usr_submount),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
