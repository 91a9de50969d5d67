/*
 * test_profiles.c: profiles end to end through the real daemon and library
 * (issue 17, step 1 of docs/design-profiles.md): a profile's limit applies
 * (minimal's 128 MiB ends a run allocating 200 MiB with memory_limit), a
 * request may tighten but not loosen it, a profile that does not exist or
 * that the caller may not use is refused, info lists only the caller's,
 * default_profile, sessions keep their profile, and SIGHUP applies new ones.
 * Step 2: file_write = false in info and on a session's workspace (the
 * hostile case pol_write_ro tries every write route on a one-shot run).
 * Step 3: subprocess = false in info and on a run (hostile pol_noproc*).
 * Step 8: blocked_imports reports, never refuses: the findings in the
 * result, the audit line's count, the bypass not seen, info's list.
 * The tests that need a daemon of their own config (runtimes =, hidden_paths
 * with a mount beneath /usr) are in test_profiles_alone.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

#define MiB (1024ULL * 1024ULL)

/* nobody may connect; "tiny" is only for uid 1 (daemon) and root. */
#define CFG_BASE                                                                                   \
	"[daemon]\nsocket_mode = 0666\n"                                                           \
	"[sandbox]\nuid_base = 1500000\nuid_count = 64\n"                                          \
	"[profile tiny]\nwall_ms = 3000\nmemory_bytes = 96M\nallow_users = 1\n"                    \
	"[profile readonly]\nfile_write = false\n"                                                 \
	"[profile noproc]\nsubprocess = false\n"                                                   \
	"[profile advised]\nblocked_imports = subprocess, ctypes\nhidden_paths = /usr/share/doc\n"
#define CFG CFG_BASE "[access]\nallow_users = nobody\n"

static int
setup(void **state)
{
	static struct fixture f;

	if (fixture_start(&f, CFG) < 0)
		return -1;
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	return fixture_stop(*state) == 0 ? 0 : -1;
}

static struct airlock_conn *
conn_to(const struct fixture *f)
{
	return front_conn(f->sock);
}

#define ALLOC_200M                                                                                 \
	"b = bytearray(200 * 1024 * 1024)\n"                                                       \
	"for i in range(0, len(b), 4096):\n"                                                       \
	"    b[i] = 1\n"                                                                           \
	"print('survived')\n"

/* minimal's memory limit (128 MiB) ends a run allocating 200 MiB; the
 * implicit default profile (256 MiB default, 4 GiB ceiling) and generous
 * (2 GiB) let the same code run. */
static void
test_profile_limit_applies(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_result *res;
	char code[64], msg[512];
	const void *out;
	size_t len;

	assert_int_equal(front_run_req(c, front_py_req(ALLOC_200M, "minimal"), &res, code, msg), 0);
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_MEMORY_LIMIT)
		fail_msg("minimal: outcome %s", airlock_outcome_name(airlock_result_outcome(res)));
	assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
	assert_int_equal(len, 0);
	airlock_result_free(res);

	assert_int_equal(front_run_req(c, front_py_req(ALLOC_200M, "generous"), &res, code, msg),
			 0);
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED)
		fail_msg("generous: outcome %s, error %s",
			 airlock_outcome_name(airlock_result_outcome(res)),
			 airlock_result_error(res) != NULL ? airlock_result_error(res) : "");
	assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
	assert_int_equal(len, 9);
	assert_memory_equal(out, "survived\n", 9);
	airlock_result_free(res);
	airlock_conn_free(c);
}

/* A request may tighten a profile's limit; one above it is bad_request naming
 * the limit and the profile, whatever the [limits] ceiling allows. */
static void
test_tighten_not_loosen(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_run_req *req;
	struct airlock_result *res;
	char code[64], msg[512];

	/* 64 MiB within minimal's 128: the 200 MiB program hits it. */
	req = front_py_req(ALLOC_200M, "minimal");
	assert_int_equal(airlock_run_req_set_limit(req, AIRLOCK_LIMIT_MEMORY_BYTES, 64 * MiB), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_MEMORY_LIMIT);
	airlock_result_free(res);

	/* 1 GiB: within the [limits] ceiling (4 GiB), above minimal's. */
	req = front_py_req("print(1)\n", "minimal");
	assert_int_equal(airlock_run_req_set_limit(req, AIRLOCK_LIMIT_MEMORY_BYTES, 1024 * MiB), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), -EPROTO);
	assert_null(res);
	assert_string_equal(code, "bad_request");
	assert_string_equal(msg, "limits.memory_bytes = 1073741824 is above the ceiling "
				 "134217728 of profile 'minimal'");
	/* The same without a profile (the implicit default) is fine. */
	req = front_py_req("print(1)\n", NULL);
	assert_int_equal(airlock_run_req_set_limit(req, AIRLOCK_LIMIT_MEMORY_BYTES, 1024 * MiB), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	airlock_result_free(res);
	/* wall above standard's 60 s */
	req = front_py_req("print(1)\n", "standard");
	assert_int_equal(airlock_run_req_set_limit(req, AIRLOCK_LIMIT_WALL_MS, 60001), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), -EPROTO);
	assert_non_null(strstr(msg, "limits.wall_ms = 60001"));
	assert_non_null(strstr(msg, "profile 'standard'"));
	airlock_conn_free(c);
}

/* A profile that does not exist: not_found naming it. The library refuses a
 * name that is not one before sending. */
static void
test_unknown_profile(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_run_req *req = NULL;
	struct airlock_result *res;
	char code[64], msg[512];

	assert_int_equal(front_run_req(c, front_py_req("print(1)\n", "huge"), &res, code, msg),
			 -ENOENT);
	assert_string_equal(code, "not_found");
	assert_string_equal(msg, "profile 'huge' does not exist");
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_profile(req, "Huge"), -EINVAL);
	assert_int_equal(airlock_run_req_set_profile(req, ""), -EINVAL);
	assert_int_equal(airlock_run_req_set_profile(NULL, "minimal"), -EINVAL);
	airlock_run_req_free(req);
	/* The connection goes on. */
	assert_int_equal(airlock_ping(c), 0);
	airlock_conn_free(c);
}

/* What nobody sees and gets: "tiny" is not nobody's. */
struct as_nobody {
	int run_r, open_r, info_r, minimal_r;
	char code[64], msg[512];
	char open_code[64];
	size_t nprofiles;
	bool has_tiny, has_minimal, default_is_default;
	uint64_t minimal_mem;
};

static void
as_nobody(void *arg, void *buf)
{
	const struct fixture *f = arg;
	struct as_nobody *o = buf;
	struct airlock_session_opts *opts = NULL;
	struct airlock_conn *c = NULL;
	struct airlock_result *res = NULL;
	struct airlock_info *info = NULL;
	char id[AIRLOCK_SESSION_ID_LEN + 1], scratch_code[64], scratch_msg[512];
	const char *ec, *em;
	size_t i;

	if (airlock_connect(f->sock, &c) < 0)
		_exit(5);
	o->run_r = front_run_req(c, front_py_req("print(1)\n", "tiny"), &res, o->code, o->msg);
	airlock_result_free(res);
	o->minimal_r = front_run_req(c, front_py_req("print(1)\n", "minimal"), &res, scratch_code,
				     scratch_msg);
	airlock_result_free(res);
	airlock_session_opts_new(&opts);
	airlock_session_opts_set_profile(opts, "tiny");
	o->open_r = airlock_session_open(c, opts, id);
	if (o->open_r < 0 && airlock_conn_last_error(c, &ec, &em) == 0)
		snprintf(o->open_code, sizeof(o->open_code), "%s", ec);
	airlock_session_opts_free(opts);
	o->info_r = airlock_info(c, &info);
	o->nprofiles = airlock_info_profile_count(info);
	for (i = 0; i < o->nprofiles; i++) {
		const char *name = airlock_info_profile_name(info, i);

		if (strcmp(name, "tiny") == 0)
			o->has_tiny = true;
		if (strcmp(name, "minimal") == 0) {
			o->has_minimal = true;
			o->minimal_mem =
				airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_MEMORY_BYTES);
		}
		if (strcmp(name, "default") == 0)
			o->default_is_default = airlock_info_profile_is_default(info, i);
	}
	airlock_info_free(info);
	airlock_conn_free(c);
}

/* A user not allowed a profile: unauthorized naming it and the uid, for a run
 * and a session; info does not list it; the open ones work. */
static void
test_forbidden_profile(void **state)
{
	struct fixture *f = *state;
	struct as_nobody o;

	assert_int_equal(
		front_as_user(FRONT_NOBODY_UID, FRONT_NOBODY_GID, as_nobody, f, &o, sizeof(o)), 0);
	assert_int_equal(o.run_r, -EACCES);
	assert_string_equal(o.code, "unauthorized");
	assert_string_equal(o.msg, "profile 'tiny' is not available to uid 65534");
	assert_int_equal(o.minimal_r, 0);
	assert_int_equal(o.open_r, -EACCES);
	assert_string_equal(o.open_code, "unauthorized");
	assert_int_equal(o.info_r, 0);
	assert_false(o.has_tiny);
	assert_true(o.has_minimal);
	assert_true(o.default_is_default);
	assert_int_equal(o.minimal_mem, 128 * MiB);
	/* minimal, standard, generous, readonly, noproc, advised, default */
	assert_int_equal(o.nprofiles, 7);
}

/* root sees every profile, with its limits; the implicit default is the
 * default, its ceilings the [limits] ones. */
static void
test_info_lists_profiles(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_info *info = NULL;
	size_t i, n, seen = 0;

	assert_int_equal(airlock_info(c, &info), 0);
	n = airlock_info_profile_count(info);
	assert_int_equal(n, 8);
	for (i = 0; i < n; i++) {
		const char *name = airlock_info_profile_name(info, i);
		uint64_t mem = airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_MEMORY_BYTES);
		uint64_t memc = airlock_info_profile_ceiling(info, i, AIRLOCK_LIMIT_MEMORY_BYTES);

		if (strcmp(name, "tiny") == 0) {
			assert_int_equal(mem, 96 * MiB);
			assert_int_equal(memc, 96 * MiB);
			assert_int_equal(airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_WALL_MS),
					 3000);
			assert_false(airlock_info_profile_is_default(info, i));
			seen |= 1;
		} else if (strcmp(name, "generous") == 0) {
			assert_int_equal(mem, 2048 * MiB);
			assert_int_equal(
				airlock_info_profile_ceiling(info, i, AIRLOCK_LIMIT_WALL_MS),
				300000);
			seen |= 2;
		} else if (strcmp(name, "standard") == 0) {
			assert_int_equal(mem, 512 * MiB);
			seen |= 4;
		} else if (strcmp(name, "default") == 0) {
			assert_true(airlock_info_profile_is_default(info, i));
			assert_int_equal(
				mem, airlock_info_limit_default(info, AIRLOCK_LIMIT_MEMORY_BYTES));
			assert_int_equal(
				memc, airlock_info_limit_ceiling(info, AIRLOCK_LIMIT_MEMORY_BYTES));
			seen |= 8;
		}
	}
	assert_int_equal(seen, 15);
	assert_null(airlock_info_profile_name(info, n));
	assert_int_equal(airlock_info_profile_limit(info, n, AIRLOCK_LIMIT_WALL_MS), 0);
	assert_int_equal(airlock_info_profile_count(NULL), 0);
	airlock_info_free(info);
	airlock_conn_free(c);
}

/* A session takes its profile at open: its runs get the profile's limits and
 * may not name another; a session asking above the profile is refused. */
static void
test_session_profile(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_session_opts *opts = NULL;
	struct airlock_run_req *req;
	struct airlock_result *res;
	char id[AIRLOCK_SESSION_ID_LEN + 1], code[64], msg[512];
	const char *ec, *em;

	assert_int_equal(airlock_session_opts_new(&opts), 0);
	assert_int_equal(airlock_session_opts_set_profile(opts, "Bad"), -EINVAL);
	assert_int_equal(airlock_session_opts_set_profile(opts, "minimal"), 0);
	assert_int_equal(airlock_session_opts_set_limit(opts, AIRLOCK_LIMIT_WALL_MS, 31000), 0);
	assert_int_equal(airlock_session_open(c, opts, id), -EPROTO);
	assert_int_equal(airlock_conn_last_error(c, &ec, &em), 0);
	assert_non_null(strstr(em, "of profile 'minimal'"));
	assert_int_equal(airlock_session_opts_set_limit(opts, AIRLOCK_LIMIT_WALL_MS, 0), 0);
	assert_int_equal(airlock_session_open(c, opts, id), 0);
	airlock_session_opts_free(opts);

	req = front_py_req(ALLOC_200M, NULL);
	assert_int_equal(airlock_run_req_set_session(req, id), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_MEMORY_LIMIT);
	airlock_result_free(res);
	req = front_py_req("print(1)\n", "generous");
	assert_int_equal(airlock_run_req_set_session(req, id), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), -EPROTO);
	assert_string_equal(msg,
			    "profile 'generous': the session's runs use its profile 'minimal'");
	req = front_py_req("print(1)\n", "minimal");
	assert_int_equal(airlock_run_req_set_session(req, id), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	airlock_result_free(res);
	assert_int_equal(airlock_session_close(c, id), 0);
	airlock_conn_free(c);
}

/* A run of a session opened with "readonly" (file_write = false): info says
 * so; the code reads the session's file but cannot change it or make one
 * (EROFS: its clone of the keeper's workspace is a read-only mount), and
 * the result has no artifact; the client still writes the session's files
 * through the daemon. */
#define RO_CODE                                                                                    \
	"import errno, os\n"                                                                       \
	"print(open('data.txt').read())\n"                                                         \
	"for what, fn in [('create', lambda: open('new.txt', 'w')),\n"                             \
	"                 ('write', lambda: open('data.txt', 'a')),\n"                             \
	"                 ('tmp', lambda: open('/tmp/x', 'w'))]:\n"                                \
	"    try:\n"                                                                               \
	"        fn()\n"                                                                           \
	"        print(what, 'WROTE')\n"                                                           \
	"    except OSError as e:\n"                                                               \
	"        print(what, errno.errorcode[e.errno])\n"

static void
test_readonly_session(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_session_opts *opts = NULL;
	struct airlock_info *info = NULL;
	struct airlock_run_req *req;
	struct airlock_result *res;
	char id[AIRLOCK_SESSION_ID_LEN + 1], code[64], msg[512];
	static const char want[] = "hello\n\ncreate EROFS\nwrite EROFS\ntmp EROFS\n";
	const void *out;
	size_t i, len, seen = 0;

	assert_int_equal(airlock_info(c, &info), 0);
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		const char *name = airlock_info_profile_name(info, i);
		int sw = airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_FILE_WRITE);

		assert_int_equal(airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_SUBPROCESS),
				 strcmp(name, "noproc") == 0 ? 0 : 1);
		if (strcmp(name, "readonly") == 0) {
			assert_int_equal(sw, 0);
			seen |= 1;
		} else {
			assert_int_equal(sw, 1);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_FILE_WRITE), -EINVAL);
	assert_int_equal(airlock_info_profile_switch(info, 0, (enum airlock_profile_switch)99),
			 -EINVAL);
	assert_int_equal(airlock_info_profile_switch(NULL, 0, AIRLOCK_SWITCH_FILE_WRITE), -EINVAL);
	airlock_info_free(info);

	assert_int_equal(airlock_session_opts_new(&opts), 0);
	assert_int_equal(airlock_session_opts_set_profile(opts, "readonly"), 0);
	assert_int_equal(airlock_session_open(c, opts, id), 0);
	airlock_session_opts_free(opts);
	assert_int_equal(airlock_file_write(c, id, "data.txt", "hello\n", 6), 0);
	req = front_py_req(RO_CODE, NULL);
	assert_int_equal(airlock_run_req_set_session(req, id), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_int_equal(airlock_result_exit_code(res), 0);
	assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
	if (len != sizeof(want) - 1 || memcmp(out, want, len) != 0)
		fail_msg("stdout: %.*s", (int)len, (const char *)out);
	assert_int_equal(airlock_result_artifact_count(res), 0);
	airlock_result_free(res);
	/* The daemon's own route into the workspace stays open. */
	assert_int_equal(airlock_file_write(c, id, "data.txt", "hello\n", 6), 0);
	assert_int_equal(airlock_session_close(c, id), 0);
	airlock_conn_free(c);
}

/* subprocess = false through the daemon: python runs, a fork and a thread
 * fail with EPERM (the hostile case pol_noproc tries every route), and the
 * outcome is the code's own exit, not a process limit. */
#define NOPROC_CODE                                                                                \
	"import os, threading\n"                                                                   \
	"print('started')\n"                                                                       \
	"try:\n"                                                                                   \
	"    os.fork()\n"                                                                          \
	"except OSError as e:\n"                                                                   \
	"    print('fork', e.errno)\n"                                                             \
	"try:\n"                                                                                   \
	"    threading.Thread(target=print).start()\n"                                             \
	"except RuntimeError:\n"                                                                   \
	"    print('thread refused')\n"                                                            \
	"raise SystemExit(5)\n"

static void
test_noproc_profile(void **state)
{
	struct airlock_conn *c = conn_to(*state);
	struct airlock_result *res;
	char code[64], msg[512], want[64];
	const void *out;
	size_t len;

	snprintf(want, sizeof(want), "started\nfork %d\nthread refused\n", EPERM);
	assert_int_equal(front_run_req(c, front_py_req(NOPROC_CODE, "noproc"), &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_int_equal(airlock_result_exit_code(res), 5);
	assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
	if (len != strlen(want) || memcmp(out, want, len) != 0)
		fail_msg("stdout: %.*s", (int)len, (const char *)out);
	airlock_result_free(res);
	airlock_conn_free(c);
}

/* Two imports the check sees, one it cannot (a name built at run time), and
 * a comment and a string it must not report; the code runs to the end. */
#define ADVISED_CODE                                                                               \
	"import json\n"                                                                            \
	"import subprocess\n"                                                                      \
	"from ctypes import c_int  # import os\n"                                                  \
	"s = 'import ctypes'\n"                                                                    \
	"m = __import__('sub' + 'process')\n"                                                      \
	"print(m.run(['true']).returncode, c_int(7).value)\n"

/* The advisories of res joined by '|'. */
static void
advisories(const struct airlock_result *res, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < airlock_result_advisory_count(res) && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "",
					airlock_result_advisory(res, i));
}

static void
test_blocked_imports(void **state)
{
	struct fixture *f = *state;
	struct airlock_conn *c = conn_to(f);
	struct airlock_run_req *req;
	struct airlock_result *res;
	struct airlock_info *info = NULL;
	char code[64], msg[512], got[1024];
	static char cout[4096], cerr[4096];
	char *argv[] = {(char *)getenv("AIRLOCK_CLI"),
			"--socket",
			f->sock,
			"run",
			"--profile",
			"advised",
			"-c",
			"import ctypes\nprint(1)",
			NULL,
			NULL,
			NULL};
	const void *out;
	size_t len, i, seen = 0;

	/* Reported, not refused: the code ran, subprocess and all. */
	assert_int_equal(front_run_req(c, front_py_req(ADVISED_CODE, "advised"), &res, code, msg),
			 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_int_equal(airlock_result_exit_code(res), 0);
	assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(out, "0 7\n", 4);
	advisories(res, got, sizeof(got));
	assert_string_equal(got,
			    "blocked import: subprocess (line 2)|blocked import: ctypes (line 3)");
	assert_null(airlock_result_advisory(res, 2));
	airlock_result_free(res);
	assert_true(fixture_log_has(f, "advisories=2"));

	/* Another profile: no check, no advisories. */
	assert_int_equal(front_run_req(c, front_py_req(ADVISED_CODE, NULL), &res, code, msg), 0);
	assert_int_equal(airlock_result_exit_code(res), 0);
	assert_int_equal(airlock_result_advisory_count(res), 0);
	airlock_result_free(res);

	/* Not a python runtime: its code is not read. */
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "sh"), 0);
	assert_int_equal(airlock_run_req_set_code(req, "echo import subprocess\n", 23), 0);
	assert_int_equal(airlock_run_req_set_profile(req, "advised"), 0);
	assert_int_equal(front_run_req(c, req, &res, code, msg), 0);
	assert_int_equal(airlock_result_exit_code(res), 0);
	assert_int_equal(airlock_result_advisory_count(res), 0);
	airlock_result_free(res);

	/* info lists the names (and its hidden path); the other profiles have none. */
	assert_int_equal(airlock_info(c, &info), 0);
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		size_t n =
			airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS);

		if (strcmp(airlock_info_profile_name(info, i), "advised") != 0) {
			assert_int_equal(n, 0);
			assert_int_equal(airlock_info_profile_list_count(
						 info, i, AIRLOCK_PROFILE_HIDDEN_PATHS),
					 0);
			continue;
		}
		assert_int_equal(
			airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS), 1);
		assert_string_equal(
			airlock_info_profile_list(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS, 0),
			"/usr/share/doc");
		seen++;
		assert_int_equal(n, 2);
		assert_string_equal(
			airlock_info_profile_list(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS, 0),
			"subprocess");
		assert_string_equal(
			airlock_info_profile_list(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS, 1),
			"ctypes");
	}
	assert_int_equal(seen, 1);
	airlock_info_free(info);
	airlock_conn_free(c);

	/* airlock run: a line on stderr each, "advisories" with --json; the
	 * exit status is the code's. */
	assert_non_null(argv[0]);
	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, cout, sizeof(cout), cerr, sizeof(cerr)),
			 0);
	assert_string_equal(cout, "1\n");
	assert_non_null(strstr(cerr, "airlock: advisory: blocked import: ctypes (line 1)\n"));
	argv[8] = "--json";
	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, cout, sizeof(cout), cerr, sizeof(cerr)),
			 0);
	assert_non_null(strstr(cout, "\"advisories\":[\"blocked import: ctypes (line 1)\"]"));
}

/* Does a new connection's info list the profile, and is it the default? */
static int
info_profile(const struct fixture *f, const char *name)
{
	struct airlock_conn *c = conn_to(f);
	struct airlock_info *info = NULL;
	int found = 0;
	size_t i;

	assert_int_equal(airlock_info(c, &info), 0);
	for (i = 0; i < airlock_info_profile_count(info); i++)
		if (strcmp(airlock_info_profile_name(info, i), name) == 0)
			found = airlock_info_profile_is_default(info, i) ? 2 : 1;
	airlock_info_free(info);
	airlock_conn_free(c);
	return found;
}

/* SIGHUP: a new profile and default_profile apply; a broken profile section
 * is refused with file:line and the profiles stay. Runs last (it changes
 * the daemon's config). */
static void
test_reload(void **state)
{
	struct fixture *f = *state;
	struct airlock_conn *c;
	struct airlock_result *res;
	char code[64], msg[512], want[256];
	int i;

	assert_int_equal(
		fixture_write_config(
			f, CFG "default_profile = minimal\n[profile extra]\nwall_ms = 2000\n"),
		0);
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	for (i = 0; i < 300 && info_profile(f, "extra") == 0; i++)
		front_sleep_ms(10);
	assert_int_equal(info_profile(f, "extra"), 1);
	assert_int_equal(info_profile(f, "minimal"), 2);
	assert_int_equal(info_profile(f, "default"), 0);
	/* No profile named: minimal now, so 200 MiB is too much. */
	c = conn_to(f);
	assert_int_equal(front_run_req(c, front_py_req(ALLOC_200M, NULL), &res, code, msg), 0);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_MEMORY_LIMIT);
	airlock_result_free(res);
	assert_int_equal(front_run_req(c, front_py_req("print(1)\n", "default"), &res, code, msg),
			 -ENOENT);
	airlock_conn_free(c);

	/* Line 20: the extra section's wall_ms_max. */
	assert_int_equal(fixture_write_config(f, CFG "[profile extra]\nwall_ms_max = 2000\n"), 0);
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	snprintf(want, sizeof(want), "%s:20: unknown key 'wall_ms_max' in [profile extra]",
		 f->config);
	for (i = 0; i < 300 && !fixture_log_has(f, want); i++)
		front_sleep_ms(10);
	assert_true(fixture_log_has(f, want));
	assert_int_equal(info_profile(f, "minimal"), 2);
	assert_int_equal(info_profile(f, "extra"), 1);
}

/* ---- The audit line against its documented field list (issue 32, 7) ---- */

#define AUDIT_KEYS_MAX 64

/* The keys of docs/security.md's "The audit line" table, and which are
 * "always" there. */
struct audit_doc {
	char key[AUDIT_KEYS_MAX][32];
	bool always[AUDIT_KEYS_MAX];
	size_t n;
};

static void
audit_doc_read(struct audit_doc *doc)
{
	const char *path = getenv("AIRLOCK_SECURITY_MD");
	char line[1024];
	bool in = false;
	FILE *fp;

	memset(doc, 0, sizeof(*doc));
	assert_non_null(path);
	fp = fopen(path, "re");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *p, *end, *cell2;

		if (strncmp(line, "### The audit line", 18) == 0) {
			in = true;
			continue;
		}
		if (in && line[0] == '#')
			break;
		if (!in || strncmp(line, "| `", 3) != 0)
			continue;
		cell2 = strchr(line + 1, '|');
		assert_non_null(cell2);
		*cell2++ = '\0';
		/* "| `a`, `b` | always ..." : every backticked key of the first cell */
		for (p = line; (p = strchr(p, '`')) != NULL; p = end + 1) {
			end = strchr(p + 1, '`');
			assert_non_null(end);
			assert_true(doc->n < AUDIT_KEYS_MAX && (size_t)(end - p - 1) < 32);
			memcpy(doc->key[doc->n], p + 1, (size_t)(end - p - 1));
			doc->always[doc->n++] =
				strncmp(cell2 + strspn(cell2, " "), "always", 6) == 0;
		}
	}
	fclose(fp);
	if (doc->n < 20)
		fail_msg("%s: %zu keys in \"The audit line\"", path, doc->n);
}

static bool
audit_doc_has(const struct audit_doc *doc, const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < doc->n; i++)
		if (strlen(doc->key[i]) == len && memcmp(doc->key[i], key, len) == 0)
			return true;
	return false;
}

/* Check one line ("... audit time=... run=...") against the table. */
static void
audit_check_line(const struct audit_doc *doc, const char *line)
{
	const char *p = strstr(line, ": audit ");
	bool seen[AUDIT_KEYS_MAX] = {false};
	size_t i;

	if (p == NULL) {
		fail_msg("not an audit line: %s", line);
		return;
	}
	p += strlen(": audit ");

	while (*p != '\0' && *p != '\n') {
		const char *eq = strchr(p, '=');
		size_t klen;

		if (eq == NULL) {
			fail_msg("no '=' in %s", p);
			return; /* fail_msg ends the test; the analyzer does not know */
		}
		klen = (size_t)(eq - p);
		if (!audit_doc_has(doc, p, klen))
			fail_msg("key '%.*s' is not in docs/security.md: %s", (int)klen, p, line);
		for (i = 0; i < doc->n; i++)
			if (strlen(doc->key[i]) == klen && memcmp(doc->key[i], p, klen) == 0)
				seen[i] = true;
		p = eq + 1;
		if (*p == '"') { /* a quoted value escapes its quotes */
			const char *end = strchr(p + 1, '"');

			if (end == NULL) {
				fail_msg("an unterminated quoted value: %s", line);
				return;
			}
			p = end + 1;
		} else
			p += strcspn(p, " \n");
		p += strspn(p, " ");
	}
	for (i = 0; i < doc->n; i++)
		if (doc->always[i] && !seen[i])
			fail_msg("'always' key %s missing: %s", doc->key[i], line);
}

/* The value of key on line into buf ("" when absent). */
static void
audit_value(const char *line, const char *key, char *buf, size_t len)
{
	char pat[40];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	buf[0] = '\0';
	p = strstr(line, pat);
	if (p != NULL)
		snprintf(buf, len, "%.*s", (int)strcspn(p + strlen(pat), " \n"), p + strlen(pat));
}

/* Run code under profile with a wall limit (0: the profile's), expect outcome. */
static void
audit_run_one(struct airlock_conn *c, const char *code, const char *profile, uint64_t wall_ms,
	      enum airlock_outcome want)
{
	struct airlock_run_req *req = front_py_req(code, profile);
	struct airlock_result *res;
	char ec[64], em[512];

	if (wall_ms != 0)
		assert_int_equal(airlock_run_req_set_limit(req, AIRLOCK_LIMIT_WALL_MS, wall_ms), 0);
	assert_int_equal(front_run_req(c, req, &res, ec, em), 0);
	if (airlock_result_outcome(res) != want)
		fail_msg("%s: outcome %s", code, airlock_outcome_name(airlock_result_outcome(res)));
	airlock_result_free(res);
}

/*
 * Every audit line the daemon wrote (this test's runs and the tests' before
 * it) has only documented keys and every "always" one; a minimal run names
 * its profile, a killed run has no exit code, and each line has a time.
 */
static void
test_audit_fields(void **state)
{
	const struct fixture *f = *state;
	struct airlock_conn *c = conn_to(f);
	struct audit_doc doc;
	char line[4096], v[64] = "";
	size_t nlines = 0, nminimal = 0, nkilled = 0, nsig = 0;
	FILE *fp;

	audit_doc_read(&doc);
	audit_run_one(c, "print('audited')", "minimal", 0, AIRLOCK_OUTCOME_EXITED);
	audit_run_one(c, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", NULL, 0,
		      AIRLOCK_OUTCOME_SIGNALED);
	audit_run_one(c, "while True:\n    pass\n", "minimal", 300, AIRLOCK_OUTCOME_WALL_LIMIT);
	airlock_conn_free(c);
	fp = fopen(f->log, "re");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strstr(line, ": audit ") == NULL)
			continue;
		nlines++;
		audit_check_line(&doc, line);
		audit_value(line, "time", v, sizeof(v));
		/* 2026-12-07T13:22:16.123Z */
		if (strlen(v) != 24 || v[10] != 'T' || v[19] != '.' || v[23] != 'Z')
			fail_msg("time '%s': %s", v, line);
		audit_value(line, "profile", v, sizeof(v));
		nminimal += strcmp(v, "minimal") == 0;
		audit_value(line, "outcome", v, sizeof(v));
		if (strcmp(v, "exited") != 0 && strstr(line, " exit_code=") != NULL)
			fail_msg("an exit code for outcome %s: %s", v, line);
		nkilled += strcmp(v, "wall_limit") == 0;
		if (strcmp(v, "signaled") == 0) {
			audit_value(line, "signal", v, sizeof(v));
			if (strcmp(v, "9") != 0)
				fail_msg("signaled without signal=9: %s", line);
			nsig++;
		}
	}
	fclose(fp);
	if (nminimal < 2 || nkilled < 1 || nsig < 1)
		fail_msg("%zu audit lines: %zu of profile minimal, %zu wall_limit, %zu signaled",
			 nlines, nminimal, nkilled, nsig);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_limit_applies),
		cmocka_unit_test(test_tighten_not_loosen),
		cmocka_unit_test(test_unknown_profile),
		cmocka_unit_test(test_forbidden_profile),
		cmocka_unit_test(test_info_lists_profiles),
		cmocka_unit_test(test_session_profile),
		cmocka_unit_test(test_readonly_session),
		cmocka_unit_test(test_noproc_profile),
		cmocka_unit_test(test_blocked_imports),
		cmocka_unit_test(test_audit_fields),
		cmocka_unit_test(test_reload),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
