/* test_proto.c: unit tests of the wire codec in common/proto.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>

#include "fdpass.h"
#include "memfd.h"
#include "proto.h"
#include "proto_testlib.h"

/* ------------------------------------------------------ round trips */

static void
test_roundtrip_hello(void **state)
{
	struct proto_hello h = {.version = PROTO_VERSION, .peer = "agent/1.0"};
	struct proto_out o;
	struct proto_msg m;

	assert_int_equal(proto_encode_hello(1, PROTO_HELLO, &h, &o), 0);
	assert_int_equal(o.nfds, 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_HELLO);
	assert_int_equal(m.id, 1);
	assert_int_equal(m.u.hello.version, PROTO_VERSION);
	assert_string_equal(m.u.hello.peer, "agent/1.0");
	proto_msg_free(&m);

	h.peer = NULL;
	assert_int_equal(proto_encode_hello(2, PROTO_HELLO, &h, &o), 0);
	decode_out(&o, &m);
	assert_null(m.u.hello.peer);
	proto_msg_free(&m);

	h.peer = "airlockd 0.1.0";
	h.version = 7;
	assert_int_equal(proto_encode_hello(UINT32_MAX, PROTO_HELLO_OK, &h, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_HELLO_OK);
	assert_int_equal(m.id, UINT32_MAX);
	assert_int_equal(m.u.hello.version, 7);
	assert_string_equal(m.u.hello.peer, "airlockd 0.1.0");
	proto_msg_free(&m);

	/* hello_ok needs the daemon name; other types are refused. */
	h.peer = NULL;
	assert_int_equal(proto_encode_hello(3, PROTO_HELLO_OK, &h, &o), -EINVAL);
	assert_int_equal(proto_encode_hello(3, PROTO_PING, &h, &o), -EINVAL);
}

static void
test_roundtrip_simple(void **state)
{
	static const enum proto_type types[] = {PROTO_PING, PROTO_PONG, PROTO_INFO};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(proto_encode_simple((uint32_t)i + 10, types[i], &o), 0);
		decode_out(&o, &m);
		assert_int_equal(m.type, types[i]);
		assert_int_equal(m.id, i + 10);
		proto_msg_free(&m);
	}
	assert_int_equal(proto_encode_simple(1, PROTO_RUN, &o), -EINVAL);
	assert_int_equal(proto_encode_simple(0, PROTO_PING, &o), -EINVAL);
}

static void
test_roundtrip_info(void **state)
{
	struct proto_info in = {.daemon = "airlockd", .version = 1, .uid = 1000, .nruntimes = 3};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	in.runtimes[0] = "python";
	in.runtimes[1] = "sh";
	in.runtimes[2] = "exec";
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		in.defaults.v[i] = i + 1;
		in.ceilings.v[i] = (uint64_t)1 << (i + 20);
	}
	in.ceilings.v[PROTO_LIMIT_MEMORY_BYTES] = UINT64_MAX;
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_INFO_OK);
	assert_string_equal(m.u.info.daemon, "airlockd");
	assert_int_equal(m.u.info.uid, 1000);
	assert_int_equal(m.u.info.version, 1);
	assert_int_equal(m.u.info.nruntimes, 3);
	assert_string_equal(m.u.info.runtimes[0], "python");
	assert_string_equal(m.u.info.runtimes[2], "exec");
	assert_memory_equal(&m.u.info.defaults, &in.defaults, sizeof(in.defaults));
	assert_memory_equal(&m.u.info.ceilings, &in.ceilings, sizeof(in.ceilings));
	/* runtime_packages is absent when there is none. */
	assert_int_equal(m.u.info.nruntime_packages, 0);
	/* So is the capacity when not given (0: an older daemon). */
	assert_int_equal(m.u.info.max_runs, 0);
	assert_int_equal(m.u.info.max_interpreters_per_uid, 0);
	proto_msg_free(&m);

	/* The capacity (issue 28): each figure as sent. */
	in.max_runs = 4;
	in.max_runs_per_uid = 2;
	in.max_interpreters = 8;
	in.max_interpreters_per_uid = UINT32_MAX;
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.info.max_runs, 4);
	assert_int_equal(m.u.info.max_runs_per_uid, 2);
	assert_int_equal(m.u.info.max_interpreters, 8);
	assert_int_equal(m.u.info.max_interpreters_per_uid, UINT32_MAX);
	proto_msg_free(&m);
	in.max_runs = in.max_runs_per_uid = in.max_interpreters = in.max_interpreters_per_uid = 0;

	/* ... and a map of runtime to package names when there is. */
	in.nruntime_packages = 2;
	in.runtime_packages[0].runtime = "python";
	in.runtime_packages[1].runtime = "python-site";
	in.runtime_packages[1].packages[0] = "numpy";
	in.runtime_packages[1].packages[1] = "scipy";
	in.runtime_packages[1].npackages = 2;
	assert_int_equal(proto_encode_info(6, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.info.nruntime_packages, 2);
	assert_string_equal(m.u.info.runtime_packages[0].runtime, "python");
	assert_int_equal(m.u.info.runtime_packages[0].npackages, 0);
	assert_string_equal(m.u.info.runtime_packages[1].runtime, "python-site");
	assert_int_equal(m.u.info.runtime_packages[1].npackages, 2);
	assert_string_equal(m.u.info.runtime_packages[1].packages[0], "numpy");
	assert_string_equal(m.u.info.runtime_packages[1].packages[1], "scipy");
	proto_msg_free(&m);
	/* An empty package name, or too many, is refused by the encoder. */
	in.runtime_packages[1].packages[1] = "";
	assert_int_equal(proto_encode_info(7, &in, &o), -EINVAL);
	in.runtime_packages[1].packages[1] = "scipy";
	in.runtime_packages[1].npackages = PROTO_PACKAGES_MAX + 1;
	assert_int_equal(proto_encode_info(7, &in, &o), -EINVAL);
}

/* profile in run and session_open, profiles in info_ok: round trip and every bound. */
static void
test_profiles(void **state)
{
	struct proto_profile profs[2] = {{.name = "default", .is_default = true},
					 {.name = "data-1_x"}};
	struct proto_info in = {.daemon = "airlockd", .version = 1, .uid = 7, .nruntimes = 1};
	struct proto_run run = {.runtime = "sh", .profile = "minimal"};
	struct proto_session_open so = {.profile = "generous"};
	const char *hidden[PROTO_HIDDEN_MAX + 1] = {"/usr/bin/gcc", "/etc/ssl"}, *empty[1] = {""};
	struct proto_out o;
	struct proto_msg m;
	struct mb b;
	size_t i;

	for (i = 2; i <= PROTO_HIDDEN_MAX; i++)
		hidden[i] = "/usr/x";
	in.runtimes[0] = "sh";
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		profs[0].limits.v[i] = i + 1;
		profs[0].ceilings.v[i] = i + 100;
		profs[1].limits.v[i] = profs[1].ceilings.v[i] = i + 7;
	}
	in.profiles = profs;
	in.nprofiles = 2;
	profs[1].no_file_write = true;
	profs[0].no_subprocess = true;
	profs[1].hidden_paths = hidden;
	profs[1].nhidden_paths = 2;
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.info.nprofiles, 2);
	/* hidden_paths: only where there are some. */
	assert_int_equal(m.u.info.profiles[0].nhidden_paths, 0);
	assert_int_equal(m.u.info.profiles[1].nhidden_paths, 2);
	assert_string_equal(m.u.info.profiles[1].hidden_paths[0], "/usr/bin/gcc");
	assert_string_equal(m.u.info.profiles[1].hidden_paths[1], "/etc/ssl");
	assert_string_equal(m.u.info.profiles[0].name, "default");
	assert_true(m.u.info.profiles[0].is_default);
	assert_false(m.u.info.profiles[0].no_file_write);
	assert_true(m.u.info.profiles[1].no_file_write);
	assert_true(m.u.info.profiles[0].no_subprocess);
	assert_false(m.u.info.profiles[1].no_subprocess);
	assert_memory_equal(&m.u.info.profiles[0].limits, &profs[0].limits,
			    sizeof(profs[0].limits));
	assert_memory_equal(&m.u.info.profiles[0].ceilings, &profs[0].ceilings,
			    sizeof(profs[0].ceilings));
	assert_string_equal(m.u.info.profiles[1].name, "data-1_x");
	assert_false(m.u.info.profiles[1].is_default);
	assert_memory_equal(&m.u.info.profiles[1].ceilings, &profs[1].ceilings,
			    sizeof(profs[1].ceilings));
	proto_msg_free(&m);
	/* More than PROTO_HIDDEN_MAX hidden paths, or an empty one: refused. */
	profs[1].nhidden_paths = PROTO_HIDDEN_MAX + 1;
	assert_int_equal(proto_encode_info(5, &in, &o), -E2BIG);
	profs[1].hidden_paths = empty;
	profs[1].nhidden_paths = 1;
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	profs[1].nhidden_paths = 0;
	/* The encoder refuses a bad name, too many, and a count without entries. */
	profs[1].name = "Data";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	profs[1].name = "";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	profs[1].name = "data";
	in.nprofiles = PROTO_PROFILES_MAX + 1;
	assert_int_equal(proto_encode_info(5, &in, &o), -E2BIG);
	in.nprofiles = 1;
	in.profiles = NULL;
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	/* No profiles: the key is absent (a daemon before profiles). */
	in.nprofiles = 0;
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.info.nprofiles, 0);
	proto_msg_free(&m);

	assert_int_equal(proto_encode_run(6, &run, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.run.profile, "minimal");
	proto_msg_free(&m);
	run.profile = NULL;
	assert_int_equal(proto_encode_run(6, &run, &o), 0);
	decode_out(&o, &m);
	assert_null(m.u.run.profile);
	proto_msg_free(&m);
	run.profile = "a/b";
	assert_int_equal(proto_encode_run(6, &run, &o), -EINVAL);
	run.profile = "abcdefghijklmnopqrstuvwxyz0123456"; /* 33 bytes */
	assert_int_equal(proto_encode_run(6, &run, &o), -EINVAL);
	assert_int_equal(proto_encode_session_open(7, &so, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.session_open.profile, "generous");
	proto_msg_free(&m);
	so.profile = "";
	assert_int_equal(proto_encode_session_open(7, &so, &o), -EINVAL);

	/* A profile entry without file_write (a daemon before the switch)
	 * reads as allowed; one whose file_write is not a boolean is refused. */
	for (i = 0; i < 2; i++) {
		mb_info_ok(&b, 1, 20 + i, "sh");
		mb_str(&b, "profiles");
		mb_array(&b, 1);
		mb_map(&b, 4 + i);
		mb_str(&b, "name");
		mb_str(&b, "old");
		mb_str(&b, "default");
		assert_int_equal(msgpack_pack_true(&b.pk), 0);
		mb_str(&b, "limits");
		mb_map(&b, 0);
		mb_str(&b, "ceilings");
		mb_map(&b, 0);
		if (i == 1) {
			mb_str(&b, "file_write");
			mb_uint(&b, 0);
			check_fail(&b, PROTO_ERR_BAD_REQUEST, "not a boolean", 21);
			continue;
		}
		memset(&m, 0x5a, sizeof(m));
		{
			enum proto_error code;
			uint32_t id;
			char why[256];

			assert_int_equal(proto_decode(b.sb.data, b.sb.size, NULL, 0, &m, &code, &id,
						      why, sizeof(why)),
					 0);
		}
		mb_free(&b);
		assert_int_equal(m.u.info.nprofiles, 1);
		assert_false(m.u.info.profiles[0].no_file_write);
		assert_false(m.u.info.profiles[0].no_subprocess);
		proto_msg_free(&m);
	}

	/* The decoder: a name of bad characters, too long, empty, not a string. */
	mb_head(&b, 2, PROTO_RUN, 11);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "profile");
	mb_str(&b, "Minimal");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.profile: not a profile name", 11);
	mb_head(&b, 2, PROTO_RUN, 12);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "profile");
	mb_strn(&b, 'a', PROTO_PROFILE_MAX + 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.profile", 12);
	mb_head(&b, 1, PROTO_SESSION_OPEN, 13);
	mb_str(&b, "profile");
	mb_str(&b, "");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "session_open.profile", 13);
	mb_head(&b, 1, PROTO_SESSION_OPEN, 14);
	mb_str(&b, "profile");
	mb_uint(&b, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "not a string", 14);
	/* A profile name of exactly PROTO_PROFILE_MAX bytes is fine. */
	mb_head(&b, 2, PROTO_RUN, 15);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "profile");
	mb_strn(&b, 'z', PROTO_PROFILE_MAX);
	decode_mb(&b, NULL, 0, &m);
	assert_int_equal(strlen(m.u.run.profile), PROTO_PROFILE_MAX);
	proto_msg_free(&m);
}

/* result.network and the profiles' network fields: round trip and every bound. */
static void
test_network(void **state)
{
	struct proto_refusal refs[2] = {{"evil.test:443", "not_listed"}, {"", "limit"}};
	struct proto_network net = {.bytes_up = 10,
				    .bytes_down = 1ULL << 40,
				    .connections = 5,
				    .refused = 9,
				    .ncontacted = 2,
				    .refusals = refs,
				    .nrefusals = 2};
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED, .network = &net};
	const char *allow[2] = {"pypi.org:443", "*.example.com:80,443"};
	const char *priv[1] = {"[fd00::1]:443"};
	struct proto_profile prof = {.name = "pip",
				     .network = "proxy",
				     .allow_hosts = allow,
				     .nallow_hosts = 2,
				     .allow_private_hosts = priv,
				     .nallow_private_hosts = 1};
	struct proto_info in = {.daemon = "airlockd",
				.version = 1,
				.nruntimes = 1,
				.profiles = &prof,
				.nprofiles = 1};
	struct proto_out o;
	struct proto_msg m;
	char longname[PROTO_NET_TARGET_MAX + 2];

	(void)state;
	net.contacted[0] = "pypi.org:443";
	net.contacted[1] = "a.example.com:80";
	res.out[0] = (struct proto_stream_out){inline_blob(""), 0, false};
	res.out[1] = res.out[0];
	assert_int_equal(proto_encode_result(4, &res, &o), 0);
	decode_out(&o, &m);
	assert_non_null(m.u.result.network);
	assert_int_equal(m.u.result.network->bytes_up, 10);
	assert_int_equal(m.u.result.network->bytes_down, 1ULL << 40);
	assert_int_equal(m.u.result.network->connections, 5);
	assert_int_equal(m.u.result.network->refused, 9);
	assert_int_equal(m.u.result.network->ncontacted, 2);
	assert_string_equal(m.u.result.network->contacted[1], "a.example.com:80");
	assert_int_equal(m.u.result.network->nrefusals, 2);
	assert_string_equal(m.u.result.network->refusals[0].host, "evil.test:443");
	assert_string_equal(m.u.result.network->refusals[0].reason, "not_listed");
	assert_string_equal(m.u.result.network->refusals[1].host, "");
	proto_msg_free(&m);
	/* Absent: NULL. */
	res.network = NULL;
	assert_int_equal(proto_encode_result(4, &res, &o), 0);
	decode_out(&o, &m);
	assert_null(m.u.result.network);
	proto_msg_free(&m);
	/* The encoder's bounds. */
	res.network = &net;
	net.ncontacted = PROTO_NET_REPORT_MAX + 1;
	assert_int_equal(proto_encode_result(4, &res, &o), -E2BIG);
	net.ncontacted = 1;
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	net.contacted[0] = longname;
	assert_int_equal(proto_encode_result(4, &res, &o), -E2BIG);
	net.contacted[0] = "pypi.org:443";
	refs[1].reason = "";
	assert_int_equal(proto_encode_result(4, &res, &o), -EINVAL);
	refs[1].reason = "limit";
	net.refusals = NULL;
	assert_int_equal(proto_encode_result(4, &res, &o), -E2BIG);
	net.refusals = refs;

	in.runtimes[0] = "sh";
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.info.profiles[0].network, "proxy");
	assert_int_equal(m.u.info.profiles[0].nallow_hosts, 2);
	assert_string_equal(m.u.info.profiles[0].allow_hosts[1], "*.example.com:80,443");
	assert_int_equal(m.u.info.profiles[0].nallow_private_hosts, 1);
	assert_string_equal(m.u.info.profiles[0].allow_private_hosts[0], "[fd00::1]:443");
	proto_msg_free(&m);
	prof.network = "none";
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.info.profiles[0].network, "none");
	assert_int_equal(m.u.info.profiles[0].nallow_hosts, 0);
	proto_msg_free(&m);
	prof.network = "open";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	prof.network = "proxy";
	allow[0] = "";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	allow[0] = "pypi.org:443";
	prof.nallow_hosts = PROTO_ALLOW_MAX + 1;
	assert_int_equal(proto_encode_info(5, &in, &o), -E2BIG);
}

/* run.mounts: round trip and every bound. */
static void
test_mounts(void **state)
{
	struct proto_run run = {.runtime = "sh", .mounts = {"data", "opt-py_3"}, .nmounts = 2};
	struct proto_msg m;
	struct proto_out o;
	struct mb b;
	size_t i;

	(void)state;
	assert_int_equal(proto_encode_run(1, &run, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.run.nmounts, 2);
	assert_string_equal(m.u.run.mounts[0], "data");
	assert_string_equal(m.u.run.mounts[1], "opt-py_3");
	proto_msg_free(&m);
	run.nmounts = 0;
	assert_int_equal(proto_encode_run(1, &run, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.run.nmounts, 0);
	proto_msg_free(&m);
	run.mounts[0] = "/srv/x";
	run.nmounts = 1;
	assert_int_equal(proto_encode_run(1, &run, &o), -EINVAL);
	run.mounts[0] = NULL;
	assert_int_equal(proto_encode_run(1, &run, &o), -EINVAL);
	run.nmounts = PROTO_MOUNTS_MAX + 1;
	assert_int_equal(proto_encode_run(1, &run, &o), -E2BIG);

	/* The decoder: a host path, an upper-case name, too long, too many, not strings. */
	mb_head(&b, 2, PROTO_RUN, 2);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "mounts");
	mb_array(&b, 1);
	mb_str(&b, "/srv/datasets/x");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.mounts: not a mount name", 2);
	mb_head(&b, 2, PROTO_RUN, 3);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "mounts");
	mb_array(&b, 1);
	mb_str(&b, "Data");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "not a mount name", 3);
	mb_head(&b, 2, PROTO_RUN, 4);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "mounts");
	mb_array(&b, 1);
	mb_strn(&b, 'a', PROTO_MOUNT_MAX + 1);
	check_fail(&b, PROTO_ERR_TOO_LARGE, "run.mounts", 4);
	mb_head(&b, 2, PROTO_RUN, 5);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "mounts");
	mb_array(&b, PROTO_MOUNTS_MAX + 1);
	for (i = 0; i < PROTO_MOUNTS_MAX + 1; i++)
		mb_str(&b, "m");
	check_fail(&b, PROTO_ERR_TOO_LARGE, "run.mounts", 5);
	mb_head(&b, 2, PROTO_RUN, 6);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "mounts");
	mb_str(&b, "data");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.mounts", 6);
	/* PROTO_MOUNTS_MAX names of PROTO_MOUNT_MAX bytes are fine. */
	mb_head(&b, 2, PROTO_RUN, 7);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "mounts");
	mb_array(&b, PROTO_MOUNTS_MAX);
	for (i = 0; i < PROTO_MOUNTS_MAX; i++)
		mb_strn(&b, 'z', PROTO_MOUNT_MAX);
	decode_mb(&b, NULL, 0, &m);
	assert_int_equal(m.u.run.nmounts, PROTO_MOUNTS_MAX);
	assert_int_equal(strlen(m.u.run.mounts[15]), PROTO_MOUNT_MAX);
	proto_msg_free(&m);
}

static void
test_roundtrip_run_inline(void **state)
{
	const char *argv[] = {"-c", "", "print(1)"};
	struct proto_env env[] = {{"LANG", "C.UTF-8"}, {"_X1", ""}};
	struct proto_file files[] = {{"a.txt", inline_blob("hello")},
				     {"dir/b.bin", inline_blob("")}};
	struct proto_run run = {.runtime = "python",
				.argv = argv,
				.argc = 3,
				.env = env,
				.nenv = 2,
				.files = files,
				.nfiles = 2};
	struct proto_out o;
	struct proto_msg m;

	run.code = inline_blob("import sys\n");
	run.stdin_data = inline_blob("in");
	run.limits.v[PROTO_LIMIT_WALL_MS] = 1500;
	run.limits.v[PROTO_LIMIT_ARTIFACT_BYTES] = 1u << 20;
	assert_int_equal(proto_encode_run(9, &run, &o), 0);
	assert_int_equal(o.nfds, 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_RUN);
	assert_string_equal(m.u.run.runtime, "python");
	assert_true(m.u.run.code.present);
	assert_int_equal(m.u.run.code.fd, -1);
	assert_int_equal(m.u.run.code.len, 11);
	assert_memory_equal(m.u.run.code.data, "import sys\n", 11);
	assert_int_equal(m.u.run.argc, 3);
	assert_string_equal(m.u.run.argv[0], "-c");
	assert_string_equal(m.u.run.argv[1], "");
	assert_string_equal(m.u.run.argv[2], "print(1)");
	assert_null(m.u.run.argv[3]);
	assert_int_equal(m.u.run.nenv, 2);
	assert_string_equal(m.u.run.env[0].key, "LANG");
	assert_string_equal(m.u.run.env[0].value, "C.UTF-8");
	assert_string_equal(m.u.run.env[1].key, "_X1");
	assert_string_equal(m.u.run.env[1].value, "");
	assert_memory_equal(m.u.run.stdin_data.data, "in", 2);
	assert_int_equal(m.u.run.nfiles, 2);
	assert_string_equal(m.u.run.files[0].name, "a.txt");
	assert_memory_equal(m.u.run.files[0].data.data, "hello", 5);
	assert_string_equal(m.u.run.files[1].name, "dir/b.bin");
	assert_int_equal(m.u.run.files[1].data.len, 0);
	assert_true(m.u.run.files[1].data.present);
	assert_memory_equal(&m.u.run.limits, &run.limits, sizeof(run.limits));
	proto_msg_free(&m);
	/* Freeing twice and freeing a zeroed message are harmless. */
	proto_msg_free(&m);
	memset(&m, 0, sizeof(m));
	proto_msg_free(&m);
	proto_msg_free(NULL);
}

static void
test_roundtrip_run_minimal(void **state)
{
	struct proto_run run = {.runtime = "sh"};
	struct proto_out o;
	struct proto_msg m;

	run.code.fd = -1;
	run.stdin_data.fd = -1;
	assert_int_equal(proto_encode_run(1, &run, &o), 0);
	decode_out(&o, &m);
	assert_false(m.u.run.code.present);
	assert_int_equal(m.u.run.code.fd, -1);
	assert_false(m.u.run.stdin_data.present);
	assert_int_equal(m.u.run.stdin_data.fd, -1);
	assert_int_equal(m.u.run.argc, 0);
	assert_int_equal(m.u.run.nenv, 0);
	assert_int_equal(m.u.run.nfiles, 0);
	proto_msg_free(&m);
}

static void
test_roundtrip_run_memfd(void **state)
{
	size_t big = PROTO_INLINE_MAX + 1, small = 100;
	uint8_t *code = pattern(big, 3), *in = pattern(small, 7);
	struct proto_file files[1];
	struct proto_run run = {.runtime = "python", .files = files, .nfiles = 1};
	struct proto_out o;
	struct proto_msg m;
	int stdin_fd, seals;

	/* code: large and inline in memory, so the encoder makes a memfd. */
	run.code = (struct proto_blob){.data = code, .len = big, .fd = -1, .present = true};
	/* stdin: the caller's own sealed memfd, which the encoder dups. */
	assert_int_equal(memfd_sealed_create("in", in, small, &stdin_fd), 0);
	run.stdin_data = (struct proto_blob){.len = small, .fd = stdin_fd, .present = true};
	/* an empty caller memfd travels as an fd too */
	assert_int_equal(memfd_sealed_create("empty", "", 0, &files[0].data.fd), 0);
	files[0] =
		(struct proto_file){"empty", {.len = 0, .fd = files[0].data.fd, .present = true}};
	assert_int_equal(proto_encode_run(77, &run, &o), 0);
	assert_int_equal(o.nfds, 3);
	assert_true(o.fds[0] != stdin_fd && o.fds[1] != stdin_fd);
	seals = fcntl(o.fds[0], F_GET_SEALS);
	assert_int_equal(seals & MEMFD_PAYLOAD_SEALS, MEMFD_PAYLOAD_SEALS);
	assert_true(fcntl(o.fds[0], F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(o.fds[1], F_GETFD) & FD_CLOEXEC);
	/* The caller keeps its fds. */
	assert_true(fcntl(stdin_fd, F_GETFD) >= 0);
	decode_out(&o, &m);
	assert_true(m.u.run.code.fd >= 0);
	assert_int_equal(m.u.run.code.len, big);
	assert_memory_equal(m.u.run.code.data, code, big);
	assert_true(m.u.run.stdin_data.fd >= 0);
	assert_int_equal(m.u.run.stdin_data.len, small);
	assert_memory_equal(m.u.run.stdin_data.data, in, small);
	assert_int_equal(m.u.run.files[0].data.len, 0);
	assert_non_null(m.u.run.files[0].data.data);
	assert_true(m.u.run.files[0].data.fd >= 0);
	proto_msg_free(&m);
	close(stdin_fd);
	close(files[0].data.fd);
	free(code);
	free(in);
}

static void
test_roundtrip_result(void **state)
{
	size_t big = 100000;
	uint8_t *err = pattern(big, 9), *art = pattern(PROTO_INLINE_MAX * 2, 5);
	struct proto_artifact arts[] = {
		{"out.txt", 3, false, inline_blob("abc")},
		{"big.bin",
		 1000000,
		 true,
		 {.data = art, .len = PROTO_INLINE_MAX * 2, .fd = -1, .present = true}},
		{"empty", 0, false, inline_blob("")},
	};
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED,
				   .exit_code = -3,
				   .wall_ms = 12,
				   .cpu_ms = 7,
				   .memory_peak_bytes = 1 << 20,
				   .queued_ms = 1,
				   .artifacts = arts,
				   .nartifacts = 3,
				   .artifacts_omitted = 7,
				   .artifacts_omitted_bytes = 70};
	struct proto_out o;
	struct proto_msg m;

	res.out[0] = (struct proto_stream_out){inline_blob("hi\n"), 3, false};
	res.out[1] = (struct proto_stream_out){
		{.data = err, .len = big, .fd = -1, .present = true}, big * 10, true};
	assert_int_equal(proto_encode_result(4, &res, &o), 0);
	assert_int_equal(o.nfds, 2);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_RESULT);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_int_equal(m.u.result.exit_code, -3);
	assert_int_equal(m.u.result.wall_ms, 12);
	assert_int_equal(m.u.result.cpu_ms, 7);
	assert_int_equal(m.u.result.memory_peak_bytes, 1 << 20);
	assert_int_equal(m.u.result.queued_ms, 1);
	assert_int_equal(m.u.result.artifacts_omitted, 7);
	assert_int_equal(m.u.result.artifacts_omitted_bytes, 70);
	assert_int_equal(m.u.result.out[0].data.fd, -1);
	assert_memory_equal(m.u.result.out[0].data.data, "hi\n", 3);
	assert_int_equal(m.u.result.out[0].total, 3);
	assert_false(m.u.result.out[0].truncated);
	assert_true(m.u.result.out[1].data.fd >= 0);
	assert_int_equal(m.u.result.out[1].data.len, big);
	assert_memory_equal(m.u.result.out[1].data.data, err, big);
	assert_int_equal(m.u.result.out[1].total, big * 10);
	assert_true(m.u.result.out[1].truncated);
	assert_int_equal(m.u.result.nartifacts, 3);
	assert_string_equal(m.u.result.artifacts[0].name, "out.txt");
	assert_memory_equal(m.u.result.artifacts[0].data.data, "abc", 3);
	assert_string_equal(m.u.result.artifacts[1].name, "big.bin");
	assert_int_equal(m.u.result.artifacts[1].size, 1000000);
	assert_true(m.u.result.artifacts[1].truncated);
	assert_memory_equal(m.u.result.artifacts[1].data.data, art, PROTO_INLINE_MAX * 2);
	assert_int_equal(m.u.result.artifacts[2].data.len, 0);
	assert_null(m.u.result.error);
	proto_msg_free(&m);

	res.outcome = PROTO_OUTCOME_SIGNALED;
	res.signal = 9;
	res.nartifacts = 0;
	assert_int_equal(proto_encode_result(5, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_SIGNALED);
	assert_int_equal(m.u.result.signal, 9);
	assert_int_equal(m.u.result.exit_code, 0);
	assert_int_equal(m.u.result.nartifacts, 0);
	proto_msg_free(&m);

	res.outcome = PROTO_OUTCOME_ERROR;
	res.error = "mount: /usr: EPERM";
	assert_int_equal(proto_encode_result(6, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_ERROR);
	assert_string_equal(m.u.result.error, "mount: /usr: EPERM");
	proto_msg_free(&m);

	res.outcome = PROTO_OUTCOME_WALL_LIMIT;
	assert_int_equal(proto_encode_result(7, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_WALL_LIMIT);
	assert_null(m.u.result.error);
	proto_msg_free(&m);

	/* The encoder refuses data that contradicts its size and flag. */
	res.out[0].truncated = true;
	assert_int_equal(proto_encode_result(8, &res, &o), -EINVAL);
	free(err);
	free(art);
}

static void
test_roundtrip_zeroed_result(void **state)
{
	struct proto_result res;
	struct proto_out o;
	struct proto_msg m;

	/* Every blob fd is 0 here; absent blobs must not attach fd 0. */
	memset(&res, 0, sizeof(res));
	assert_int_equal(proto_encode_result(2, &res, &o), 0);
	assert_int_equal(o.nfds, 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_int_equal(m.u.result.out[0].data.len, 0);
	assert_int_equal(m.u.result.out[0].data.fd, -1);
	assert_int_equal(m.u.result.out[1].data.fd, -1);
	proto_msg_free(&m);
}

static void
test_roundtrip_error(void **state)
{
	char longmsg[PROTO_MSG_PRINTABLE_MAX + 100];
	struct proto_out o;
	struct proto_msg m;
	enum proto_error c;

	assert_int_equal(proto_encode_error(3, PROTO_ERR_UNKNOWN_RUNTIME, "no such runtime: x", &o),
			 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_ERROR);
	assert_int_equal(m.u.error.code, PROTO_ERR_UNKNOWN_RUNTIME);
	assert_string_equal(m.u.error.message, "no such runtime: x");
	proto_msg_free(&m);

	/* id 0: the reply to a request whose id could not be read. */
	assert_int_equal(proto_encode_error(0, PROTO_ERR_BAD_REQUEST, NULL, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.id, 0);
	assert_string_equal(m.u.error.message, proto_error_message(PROTO_ERR_BAD_REQUEST));
	proto_msg_free(&m);

	/* A long message is cut, not refused. */
	memset(longmsg, 'x', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	assert_int_equal(proto_encode_error(1, PROTO_ERR_INTERNAL, longmsg, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(strlen(m.u.error.message), PROTO_MSG_PRINTABLE_MAX);
	proto_msg_free(&m);

	assert_int_equal(proto_encode_error(1, PROTO_ERR_NONE, "x", &o), -EINVAL);
	assert_int_equal(proto_encode_error(1, PROTO_ERR_COUNT_, "x", &o), -EINVAL);
	for (c = PROTO_ERR_BAD_REQUEST; c < PROTO_ERR_COUNT_; c++) {
		enum proto_error back;

		assert_int_equal(proto_error_from_name(proto_error_name(c), &back), 0);
		assert_int_equal(back, c);
	}
}

static void
test_send_recv(void **state)
{
	uint8_t *code = pattern(PROTO_INLINE_MAX + 10, 2);
	struct proto_run run = {.runtime = "python"};
	int sv[2], fds[PROTO_FDS_MAX];
	char buf[PROTO_MSG_MAX];
	struct proto_out o;
	struct proto_msg m;
	size_t nfds = 0;
	ssize_t n;

	run.code = (struct proto_blob){
		.data = code, .len = PROTO_INLINE_MAX + 10, .fd = -1, .present = true};
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(proto_encode_run(21, &run, &o), 0);
	assert_int_equal(proto_send(sv[0], &o), 0);
	proto_out_free(&o);
	n = fdpass_recv(sv[1], buf, sizeof(buf), fds, PROTO_FDS_MAX, &nfds);
	assert_true(n > 0);
	assert_int_equal(nfds, 1);
	assert_int_equal(proto_decode(buf, (size_t)n, fds, nfds, &m, NULL, NULL, NULL, 0), 0);
	assert_int_equal(m.id, 21);
	assert_memory_equal(m.u.run.code.data, code, PROTO_INLINE_MAX + 10);
	proto_msg_free(&m);
	assert_int_equal(proto_send(sv[0], NULL), -EINVAL);
	close(sv[0]);
	close(sv[1]);
	free(code);
}

/* Send "x" with two fds on sv[0], then receive on sv[1] with room for one
 * more fd number only (our own RLIMIT_NOFILE lowered): lossy or not. */
static ssize_t
recv_one_fd_room(int sv[2], bool lossy, int *fds, size_t *nfds, bool *lost)
{
	struct rlimit old, low;
	int two[2], probe[2];
	char c;
	ssize_t n;

	two[0] = two[1] = sv[0];
	assert_int_equal(fdpass_send(sv[0], "x", 1, two, 2), 0);
	/* The two lowest free fd numbers: a limit at the second leaves one. */
	probe[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	probe[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(probe[0] >= 0 && probe[1] > probe[0]);
	close(probe[0]);
	close(probe[1]);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)probe[1];
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	n = lossy ? fdpass_recv_lossy(sv[1], &c, 1, fds, 2, nfds, lost)
		  : fdpass_recv(sv[1], &c, 1, fds, 2, nfds);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	return n;
}

/* Fds the receiver could not install (EMFILE): fdpass_recv() refuses the
 * packet (-EMSGSIZE, nothing kept); fdpass_recv_lossy() gives its bytes
 * and the fd that did arrive, with lost set (issue 28: a frontend at its
 * limit stopped the service on a spawner's event). */
static void
test_recv_lossy(void **state)
{
	int sv[2], fds[2] = {-1, -1};
	size_t nfds = 9;
	bool lost = false;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(recv_one_fd_room(sv, false, fds, &nfds, &lost), -EMSGSIZE);
	assert_int_equal(nfds, 0);
	assert_int_equal(recv_one_fd_room(sv, true, fds, &nfds, &lost), 1);
	assert_true(lost);
	assert_int_equal(nfds, 1);
	assert_true(fds[0] >= 0);
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	close(fds[0]);
	/* Nothing lost: lost false, both fds. */
	assert_int_equal(fdpass_send(sv[0], "x", 1, sv, 2), 0);
	assert_int_equal(fdpass_recv_lossy(sv[1], &(char){0}, 1, fds, 2, &nfds, &lost), 1);
	assert_false(lost);
	assert_int_equal(nfds, 2);
	fdpass_close_all(fds, nfds);
	close(sv[0]);
	close(sv[1]);
}

/* ---------------------------------------------------------- encoders */

static void
test_encode_errors(void **state)
{
	static char longarg[PROTO_STR_MAX];
	const char *argv[20];
	struct proto_env badenv[] = {{"1A", "x"}};
	struct proto_run run = {.runtime = "python", .argv = argv, .argc = 20};
	struct proto_artifact arts[PROTO_FDS_MAX + 1];
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED,
				   .artifacts = arts,
				   .nartifacts = PROTO_FDS_MAX + 1};
	uint8_t *big = pattern(PROTO_INLINE_MAX + 1, 0);
	struct proto_out o;
	size_t i;
	int fd;

	/* 20 strings of 4095 bytes: more than one packet. */
	memset(longarg, 'a', sizeof(longarg) - 1);
	for (i = 0; i < 20; i++)
		argv[i] = longarg;
	run.code.fd = run.stdin_data.fd = -1;
	assert_int_equal(proto_encode_run(1, &run, &o), -E2BIG);
	/* Too many entries, a bad variable name, no id, an over-long runtime. */
	run.argc = PROTO_ARGV_MAX + 1;
	assert_int_equal(proto_encode_run(1, &run, &o), -E2BIG);
	run.argc = 0;
	run.env = badenv;
	run.nenv = 1;
	assert_int_equal(proto_encode_run(1, &run, &o), -EINVAL);
	run.nenv = 0;
	assert_int_equal(proto_encode_run(0, &run, &o), -EINVAL);
	run.runtime = "0123456789012345678901234567890123";
	assert_int_equal(proto_encode_run(1, &run, &o), -E2BIG);
	run.runtime = "";
	assert_int_equal(proto_encode_run(1, &run, &o), -EINVAL);
	run.runtime = "sh";
	/* An unsealed caller fd, and a sealed one whose size is not len. */
	fd = unsealed_memfd(10);
	run.stdin_data = (struct proto_blob){.len = 10, .fd = fd, .present = true};
	assert_int_equal(proto_encode_run(1, &run, &o), -EINVAL);
	close(fd);
	assert_int_equal(memfd_sealed_create("x", "abc", 3, &fd), 0);
	run.stdin_data.fd = fd;
	assert_int_equal(proto_encode_run(1, &run, &o), -EINVAL);
	close(fd);
	/* More memfd blobs than fds fit in a packet; none of them may leak. */
	for (i = 0; i < PROTO_FDS_MAX + 1; i++)
		arts[i] = (struct proto_artifact){
			"f",
			PROTO_INLINE_MAX + 1,
			false,
			{.data = big, .len = PROTO_INLINE_MAX + 1, .fd = -1, .present = true}};
	res.out[0].data.fd = res.out[1].data.fd = -1;
	assert_int_equal(proto_encode_result(1, &res, &o), -E2BIG);
	res.nartifacts = PROTO_ARTIFACTS_MAX;
	assert_int_equal(proto_encode_result(1, &res, &o), 0);
	assert_int_equal(o.nfds, PROTO_ARTIFACTS_MAX);
	proto_out_free(&o);
	proto_out_free(&o);
	proto_out_free(NULL);
	free(big);
}

/* -------------------------------------------------- malformed input */

static void
test_bad_framing(void **state)
{
	struct proto_out o;
	struct mb b;
	static uint8_t huge[PROTO_MSG_MAX + 1];
	/* array32 of 2^32-1 elements: must not make msgpack-c allocate 100 GB */
	static const uint8_t bomb[] = {0x82, 0xa4, 't',	 'y',  'p',  'e',  0x07, 0xa2,
				       'i',  'd',  0xdd, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t c1[] = {0xc1};
	uint8_t deep[40];
	char *buf;

	assert_int_equal(proto_encode_simple(5, PROTO_PING, &o), 0);
	/* truncated */
	check_fail_fds(o.buf, o.len - 1, NULL, 0, PROTO_ERR_BAD_REQUEST, "truncated", 0);
	/* trailing bytes */
	buf = malloc(o.len + 1);
	assert_non_null(buf);
	memcpy(buf, o.buf, o.len);
	buf[o.len] = (char)0xc0;
	check_fail_fds(buf, o.len + 1, NULL, 0, PROTO_ERR_BAD_REQUEST, "trailing", 0);
	free(buf);
	proto_out_free(&o);
	/* empty and oversized packets */
	check_fail_fds("", 0, NULL, 0, PROTO_ERR_BAD_REQUEST, "empty", 0);
	memset(huge, 0xc0, sizeof(huge));
	check_fail_fds(huge, sizeof(huge), NULL, 0, PROTO_ERR_TOO_LARGE, "larger", 0);
	check_fail_fds(bomb, sizeof(bomb), NULL, 0, PROTO_ERR_BAD_REQUEST, "count larger", 0);
	check_fail_fds(c1, sizeof(c1), NULL, 0, PROTO_ERR_BAD_REQUEST, "0xc1", 0);
	/* 40 nested one-element arrays */
	memset(deep, 0x91, sizeof(deep));
	deep[sizeof(deep) - 1] = 0xc0;
	check_fail_fds(deep, sizeof(deep), NULL, 0, PROTO_ERR_BAD_REQUEST, "deep", 0);
	/* not a map */
	mb_init(&b);
	mb_array(&b, 2);
	mb_uint(&b, 3);
	mb_uint(&b, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "message: not a map", 0);
	mb_init(&b);
	mb_str(&b, "ping");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "not a map", 0);
}

static void
test_bad_header(void **state)
{
	struct mb b;

	/* non-string key; the id is still reported */
	mb_head(&b, 1, PROTO_PING, 8);
	mb_uint(&b, 1);
	mb_uint(&b, 2);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "not a string", 8);
	/* unknown types */
	mb_head(&b, 0, 99, 8);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "unknown message type 99", 8);
	mb_head(&b, 0, 0, 8);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "unknown message type", 8);
	mb_head(&b, 0, (uint64_t)UINT32_MAX + PROTO_PING, 8);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "message.type", 8);
	/* id 0, negative, too large, wrong type */
	mb_head(&b, 0, PROTO_PING, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "ping.id: 0", 0);
	mb_head(&b, 0, PROTO_PING, (uint64_t)UINT32_MAX + 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "ping.id: out of range", 0);
	mb_init(&b);
	mb_map(&b, 2);
	mb_str(&b, "type");
	mb_uint(&b, PROTO_PING);
	mb_str(&b, "id");
	mb_int(&b, -1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "ping.id: negative", 0);
	mb_init(&b);
	mb_map(&b, 2);
	mb_str(&b, "type");
	mb_str(&b, "ping");
	mb_str(&b, "id");
	mb_uint(&b, 4);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "message.type: not an unsigned integer", 4);
	mb_init(&b);
	mb_map(&b, 2);
	mb_str(&b, "type");
	mb_uint(&b, PROTO_PING);
	mb_str(&b, "id");
	mb_str(&b, "4");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "ping.id: not an unsigned integer", 0);
	/* missing type, missing id */
	mb_init(&b);
	mb_map(&b, 1);
	mb_str(&b, "id");
	mb_uint(&b, 4);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "message.type: missing", 4);
	mb_init(&b);
	mb_map(&b, 1);
	mb_str(&b, "type");
	mb_uint(&b, PROTO_PING);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "ping.id: missing", 0);
	/* duplicate key */
	mb_head(&b, 1, PROTO_PING, 6);
	mb_str(&b, "id");
	mb_uint(&b, 6);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "duplicate key", 6);
	/* too many keys in a map */
	{
		char key[16];
		size_t i;

		mb_head(&b, PROTO_KEYS_MAX, PROTO_PING, 6);
		for (i = 0; i < PROTO_KEYS_MAX; i++) {
			snprintf(key, sizeof(key), "k%zu", i);
			mb_str(&b, key);
			mb_uint(&b, i);
		}
		check_fail(&b, PROTO_ERR_TOO_LARGE, "ping: more than 64 entries", 6);
	}
}

static void
test_unknown_keys_ignored(void **state)
{
	struct proto_msg m;
	struct mb b;

	mb_head(&b, 3, PROTO_RUN, 3);
	mb_str(&b, "future_field");
	mb_map(&b, 1);
	mb_str(&b, "x");
	mb_array(&b, 0);
	mb_str(&b, "runtime");
	mb_str(&b, "sh");
	mb_str(&b, "also_new");
	mb_int(&b, -5);
	decode_mb(&b, NULL, 0, &m);
	assert_string_equal(m.u.run.runtime, "sh");
	proto_msg_free(&m);

	/* info_ok from a newer daemon may carry limits we do not know. */
	mb_head(&b, 6, PROTO_INFO_OK, 3);
	mb_str(&b, "daemon");
	mb_str(&b, "d");
	mb_str(&b, "version");
	mb_uint(&b, 1);
	mb_str(&b, "uid");
	mb_uint(&b, 0);
	mb_str(&b, "runtimes");
	mb_array(&b, 0);
	mb_str(&b, "defaults");
	mb_map(&b, 2);
	mb_str(&b, "gpu_ms");
	mb_uint(&b, 5);
	mb_str(&b, "wall_ms");
	mb_uint(&b, 6);
	mb_str(&b, "ceilings");
	mb_map(&b, 0);
	decode_mb(&b, NULL, 0, &m);
	assert_int_equal(m.u.info.defaults.v[PROTO_LIMIT_WALL_MS], 6);
	assert_int_equal(m.u.info.nruntimes, 0);
	proto_msg_free(&m);
}

/* A run message with runtime plus one field built by fn. */
static void
run_with(struct mb *b, uint32_t id, void (*fn)(struct mb *))
{
	mb_head(b, 2, PROTO_RUN, id);
	mb_str(b, "runtime");
	mb_str(b, "python");
	fn(b);
}

static void
f_argv_int(struct mb *b)
{
	mb_str(b, "argv");
	mb_array(b, 4);
	mb_str(b, "a");
	mb_str(b, "b");
	mb_str(b, "c");
	mb_uint(b, 1);
}

static void
f_argv_many(struct mb *b)
{
	size_t i;

	mb_str(b, "argv");
	mb_array(b, PROTO_ARGV_MAX + 1);
	for (i = 0; i <= PROTO_ARGV_MAX; i++)
		mb_str(b, "x");
}

static void
f_argv_long(struct mb *b)
{
	mb_str(b, "argv");
	mb_array(b, 1);
	mb_strn(b, 'a', PROTO_STR_MAX + 1);
}

static void
f_argv_nul(struct mb *b)
{
	mb_str(b, "argv");
	mb_array(b, 1);
	assert_int_equal(msgpack_pack_str(&b->pk, 3), 0);
	assert_int_equal(msgpack_pack_str_body(&b->pk, "a\0b", 3), 0);
}

static void
f_argv_map(struct mb *b)
{
	mb_str(b, "argv");
	mb_map(b, 0);
}

static void
f_env_badkey(struct mb *b)
{
	mb_str(b, "env");
	mb_map(b, 1);
	mb_str(b, "A-B");
	mb_str(b, "x");
}

static void
f_env_digitkey(struct mb *b)
{
	mb_str(b, "env");
	mb_map(b, 1);
	mb_str(b, "1A");
	mb_str(b, "x");
}

static void
f_env_dup(struct mb *b)
{
	mb_str(b, "env");
	mb_map(b, 2);
	mb_str(b, "A");
	mb_str(b, "x");
	mb_str(b, "A");
	mb_str(b, "y");
}

static void
f_env_many(struct mb *b)
{
	char key[16];
	size_t i;

	mb_str(b, "env");
	mb_map(b, PROTO_ENV_MAX + 1);
	for (i = 0; i <= PROTO_ENV_MAX; i++) {
		snprintf(key, sizeof(key), "K%zu", i);
		mb_str(b, key);
		mb_str(b, "v");
	}
}

static void
f_env_longkey(struct mb *b)
{
	mb_str(b, "env");
	mb_map(b, 1);
	mb_strn(b, 'K', PROTO_ENV_KEY_MAX + 1);
	mb_str(b, "v");
}

static void
f_env_intval(struct mb *b)
{
	mb_str(b, "env");
	mb_map(b, 1);
	mb_str(b, "K");
	mb_uint(b, 1);
}

static void
f_files_many(struct mb *b)
{
	size_t i;

	mb_str(b, "files");
	mb_array(b, PROTO_FILES_MAX + 1);
	for (i = 0; i <= PROTO_FILES_MAX; i++) {
		mb_map(b, 2);
		mb_str(b, "name");
		mb_str(b, "f");
		mb_str(b, "data");
		mb_bin(b, "", 0);
	}
}

static void
f_file_noname(struct mb *b)
{
	mb_str(b, "files");
	mb_array(b, 1);
	mb_map(b, 1);
	mb_str(b, "data");
	mb_bin(b, "", 0);
}

static void
f_file_longname(struct mb *b)
{
	mb_str(b, "files");
	mb_array(b, 1);
	mb_map(b, 2);
	mb_str(b, "name");
	mb_strn(b, 'n', PROTO_NAME_MAX + 1);
	mb_str(b, "data");
	mb_bin(b, "", 0);
}

static void
f_file_strdata(struct mb *b)
{
	mb_str(b, "files");
	mb_array(b, 1);
	mb_map(b, 2);
	mb_str(b, "name");
	mb_str(b, "n");
	mb_str(b, "data");
	mb_str(b, "text, not bin");
}

static void
f_code_biginline(struct mb *b)
{
	uint8_t *p = pattern(PROTO_INLINE_MAX + 1, 0);

	mb_str(b, "code");
	mb_bin(b, p, PROTO_INLINE_MAX + 1);
	free(p);
}

static void
f_limits_neg(struct mb *b)
{
	mb_str(b, "limits");
	mb_map(b, 1);
	mb_str(b, "cpu_ms");
	mb_int(b, -5);
}

static void
f_limits_unknown(struct mb *b)
{
	mb_str(b, "limits");
	mb_map(b, 1);
	mb_str(b, "gpu_ms");
	mb_uint(b, 5);
}

static void
f_limits_float(struct mb *b)
{
	mb_str(b, "limits");
	mb_map(b, 1);
	mb_str(b, "wall_ms");
	assert_int_equal(msgpack_pack_double(&b->pk, 1.0), 0);
}

static void
f_runtime_dup(struct mb *b)
{
	mb_str(b, "runtime");
	mb_str(b, "sh");
}

static void
test_bad_run_fields(void **state)
{
	static const struct {
		void (*fn)(struct mb *);
		enum proto_error code;
		const char *why;
	} cases[] = {
		{f_argv_int, PROTO_ERR_BAD_REQUEST, "run.argv[3]: not a string"},
		{f_argv_many, PROTO_ERR_TOO_LARGE, "run.argv: more than 256 entries"},
		{f_argv_long, PROTO_ERR_TOO_LARGE, "run.argv[0]: longer than 4096 bytes"},
		{f_argv_nul, PROTO_ERR_BAD_REQUEST, "run.argv[0]: contains a NUL"},
		{f_argv_map, PROTO_ERR_BAD_REQUEST, "run.argv: not an array"},
		{f_env_badkey, PROTO_ERR_BAD_REQUEST, "run.env[0]: not a valid variable name"},
		{f_env_digitkey, PROTO_ERR_BAD_REQUEST, "run.env[0]: not a valid variable name"},
		{f_env_dup, PROTO_ERR_BAD_REQUEST, "run.env: duplicate key"},
		{f_env_many, PROTO_ERR_TOO_LARGE, "run.env: more than 128 entries"},
		{f_env_longkey, PROTO_ERR_TOO_LARGE, "run.env[0]: longer than 128"},
		{f_env_intval, PROTO_ERR_BAD_REQUEST, "run.env[0]: not a string"},
		{f_files_many, PROTO_ERR_TOO_LARGE, "run.files: more than 64"},
		{f_file_noname, PROTO_ERR_BAD_REQUEST, "run.files[0].name: missing"},
		{f_file_longname, PROTO_ERR_TOO_LARGE, "run.files[0].name: longer than 255"},
		{f_file_strdata, PROTO_ERR_BAD_REQUEST, "run.files[0].data: not a blob"},
		{f_code_biginline, PROTO_ERR_TOO_LARGE, "run.code: inline blob longer"},
		{f_limits_neg, PROTO_ERR_BAD_REQUEST, "run.limits.cpu_ms: negative"},
		{f_limits_unknown, PROTO_ERR_BAD_REQUEST, "run.limits: entry 0: unknown limit"},
		{f_limits_float, PROTO_ERR_BAD_REQUEST, "run.limits.wall_ms: not an unsigned"},
		{f_runtime_dup, PROTO_ERR_BAD_REQUEST, "run: duplicate key"},
	};
	struct mb b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_with(&b, (uint32_t)(100 + i), cases[i].fn);
		check_fail(&b, cases[i].code, cases[i].why, (uint32_t)(100 + i));
	}
}

static void
test_bad_required_and_strings(void **state)
{
	struct mb b;

	mb_head(&b, 0, PROTO_RUN, 2);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.runtime: missing", 2);
	mb_head(&b, 0, PROTO_HELLO, 2);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "hello.version: missing", 2);
	mb_head(&b, 1, PROTO_HELLO, 2);
	mb_str(&b, "version");
	mb_uint(&b, (uint64_t)UINT32_MAX + 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "hello.version: out of range", 2);
	mb_head(&b, 1, PROTO_HELLO, 2);
	mb_str(&b, "version");
	mb_int(&b, -1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "hello.version: negative", 2);
	mb_head(&b, 1, PROTO_RUN, 2);
	mb_str(&b, "runtime");
	mb_uint(&b, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.runtime: not a string", 2);
	mb_head(&b, 1, PROTO_RUN, 2);
	mb_str(&b, "runtime");
	mb_strn(&b, 'p', PROTO_RUNTIME_MAX + 1);
	check_fail(&b, PROTO_ERR_TOO_LARGE, "run.runtime: longer than 32", 2);
	mb_head(&b, 1, PROTO_RUN, 2);
	mb_str(&b, "runtime");
	mb_str(&b, "");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.runtime: empty", 2);
	mb_head(&b, 2, PROTO_ERROR, 2);
	mb_str(&b, "code");
	mb_str(&b, "no_such_code");
	mb_str(&b, "message");
	mb_str(&b, "m");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "error.code: unknown name", 2);
	mb_head(&b, 2, PROTO_ERROR, 2);
	mb_str(&b, "code");
	mb_str(&b, "internal");
	mb_str(&b, "message");
	mb_strn(&b, 'm', PROTO_MSG_PRINTABLE_MAX + 1);
	check_fail(&b, PROTO_ERR_TOO_LARGE, "error.message: longer", 2);
	/* runtimes array over its bound */
	{
		size_t i;

		mb_head(&b, 6, PROTO_INFO_OK, 2);
		mb_str(&b, "daemon");
		mb_str(&b, "d");
		mb_str(&b, "version");
		mb_uint(&b, 1);
		mb_str(&b, "uid");
		mb_uint(&b, 1);
		mb_str(&b, "defaults");
		mb_map(&b, 0);
		mb_str(&b, "ceilings");
		mb_map(&b, 0);
		mb_str(&b, "runtimes");
		mb_array(&b, PROTO_RUNTIMES_MAX + 1);
		for (i = 0; i <= PROTO_RUNTIMES_MAX; i++)
			mb_str(&b, "r");
		check_fail(&b, PROTO_ERR_TOO_LARGE, "info_ok.runtimes: more than 32", 2);
	}
	/* runtime_packages: a map of runtime to an array of non-empty names. */
	{
		static const char *const why[] = {
			"info_ok.runtime_packages: not a map",
			"info_ok.runtime_packages[0]: not an array",
			"info_ok.runtime_packages[0][0]: empty",
			"info_ok.runtime_packages[0]: more than 16",
		};
		size_t i, k;

		for (k = 0; k < 4; k++) {
			mb_info_ok(&b, 1, 2, "python-site");
			mb_str(&b, "runtime_packages");
			if (k == 0) {
				mb_array(&b, 0);
			} else {
				mb_map(&b, 1);
				mb_str(&b, "python-site");
				if (k == 1) {
					mb_str(&b, "numpy");
				} else if (k == 2) {
					mb_array(&b, 1);
					mb_str(&b, "");
				} else {
					mb_array(&b, PROTO_PACKAGES_MAX + 1);
					for (i = 0; i <= PROTO_PACKAGES_MAX; i++)
						mb_str(&b, "p");
				}
			}
			check_fail(&b, k == 3 ? PROTO_ERR_TOO_LARGE : PROTO_ERR_BAD_REQUEST, why[k],
				   2);
		}
	}
}

/* A result with one field overridden: fields are written in this order. */
static void
result_head(struct mb *b, uint32_t id, const char *outcome, int extra, size_t more)
{
	mb_head(b, 12 + (extra != 0) + more, PROTO_RESULT, id);
	mb_str(b, "outcome");
	mb_str(b, outcome);
	if (extra == 1) {
		mb_str(b, "exit_code");
		mb_int(b, 0);
	} else if (extra == 2) {
		mb_str(b, "signal");
		mb_int(b, 9);
	}
	mb_str(b, "wall_ms");
	mb_uint(b, 1);
	mb_str(b, "cpu_ms");
	mb_uint(b, 1);
	mb_str(b, "memory_peak_bytes");
	mb_uint(b, 0);
	mb_str(b, "queued_ms");
	mb_uint(b, 0);
	mb_str(b, "stdout");
	mb_bin(b, "ab", 2);
	mb_str(b, "stdout_bytes");
	mb_uint(b, 2);
	mb_str(b, "stdout_truncated");
	assert_int_equal(msgpack_pack_false(&b->pk), 0);
	mb_str(b, "stderr");
	mb_bin(b, "", 0);
	mb_str(b, "stderr_bytes");
	mb_uint(b, 0);
	mb_str(b, "stderr_truncated");
	assert_int_equal(msgpack_pack_false(&b->pk), 0);
	mb_str(b, "artifacts");
	mb_array(b, 0);
}

static void
test_bad_result(void **state)
{
	struct proto_msg m;
	struct mb b;

	result_head(&b, 3, "exited", 1, 0);
	decode_mb(&b, NULL, 0, &m);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	proto_msg_free(&m);

	result_head(&b, 3, "exited", 0, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "result.exit_code: missing", 3);
	result_head(&b, 3, "signaled", 1, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "result.exit_code: not allowed", 3);
	result_head(&b, 3, "exploded", 2, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "result.outcome: unknown name", 3);
	result_head(&b, 3, "error", 0, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "result.error: missing", 3);
	/* exit code beyond 32 bits */
	result_head(&b, 3, "signaled", 2, 1);
	mb_str(&b, "exit_code");
	mb_uint(&b, (uint64_t)INT32_MAX + 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "result.exit_code: out of the 32-bit range", 3);
	/* an artifact whose data disagrees with its flag */
	mb_head(&b, 13, PROTO_RESULT, 3);
	mb_str(&b, "outcome");
	mb_str(&b, "signaled");
	mb_str(&b, "signal");
	mb_int(&b, 9);
	mb_str(&b, "wall_ms");
	mb_uint(&b, 1);
	mb_str(&b, "cpu_ms");
	mb_uint(&b, 1);
	mb_str(&b, "memory_peak_bytes");
	mb_uint(&b, 0);
	mb_str(&b, "queued_ms");
	mb_uint(&b, 0);
	mb_str(&b, "stdout");
	mb_bin(&b, "", 0);
	mb_str(&b, "stdout_bytes");
	mb_uint(&b, 0);
	mb_str(&b, "stdout_truncated");
	assert_int_equal(msgpack_pack_false(&b.pk), 0);
	mb_str(&b, "stderr");
	mb_bin(&b, "", 0);
	mb_str(&b, "stderr_bytes");
	mb_uint(&b, 0);
	mb_str(&b, "stderr_truncated");
	assert_int_equal(msgpack_pack_true(&b.pk), 0);
	mb_str(&b, "artifacts");
	mb_array(&b, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "result.stderr: truncated flag", 3);
}

/* ----------------------------------------------------------- fds */

/* A run carrying its code as fd index idx of size size. */
static void
run_fdref(struct mb *b, uint32_t id, uint64_t idx, uint64_t size)
{
	mb_head(b, 2, PROTO_RUN, id);
	mb_str(b, "runtime");
	mb_str(b, "python");
	mb_fdref(b, "code", idx, size);
}

static void
test_bad_fds(void **state)
{
	int fds[PROTO_FDS_MAX + 1], p[2];
	struct proto_msg m;
	struct mb b;
	size_t i;

	/* not a memfd */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(p[1]);
	fds[0] = p[0];
	run_fdref(&b, 4, 0, 0);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST,
		       "run.code.fd: not a sealed memfd", 4);
	assert_int_equal(fds[0], -1);
	mb_free(&b);
	/* a memfd without seals */
	fds[0] = unsealed_memfd(10);
	run_fdref(&b, 4, 0, 10);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST, "not a sealed memfd",
		       4);
	mb_free(&b);
	/* the wrong size */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	run_fdref(&b, 4, 0, 4);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST, "holds 3 bytes", 4);
	mb_free(&b);
	/* a size beyond the blob bound */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	run_fdref(&b, 4, 0, PROTO_BLOB_MAX + 1);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_TOO_LARGE, "run.code.size", 4);
	mb_free(&b);
	/* an index out of range (one fd attached, index 1) */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	run_fdref(&b, 4, 1, 3);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST, "out of range", 4);
	mb_free(&b);
	/* and with no fds at all */
	run_fdref(&b, 4, 0, 3);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.code.fd: fd index 0 out of range", 4);
	/* an unreferenced fd */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[1]), 0);
	run_fdref(&b, 4, 0, 3);
	check_fail_fds(b.sb.data, b.sb.size, fds, 2, PROTO_ERR_BAD_REQUEST,
		       "attached fd 1 is not referenced", 4);
	assert_int_equal(fds[0], -1);
	assert_int_equal(fds[1], -1);
	mb_free(&b);
	/* an fd referenced twice */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	mb_head(&b, 3, PROTO_RUN, 4);
	mb_str(&b, "runtime");
	mb_str(&b, "python");
	mb_fdref(&b, "code", 0, 3);
	mb_fdref(&b, "stdin", 0, 3);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST,
		       "run.stdin.fd: fd index 0 referenced twice", 4);
	mb_free(&b);
	/* fds attached to a message that fails for another reason are closed */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	mb_head(&b, 0, 99, 4);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST, "unknown", 4);
	mb_free(&b);
	/* more fds than a packet may carry */
	for (i = 0; i < PROTO_FDS_MAX + 1; i++)
		assert_int_equal(memfd_sealed_create("t", "", 0, &fds[i]), 0);
	mb_head(&b, 0, PROTO_PING, 4);
	check_fail_fds(b.sb.data, b.sb.size, fds, PROTO_FDS_MAX + 1, PROTO_ERR_TOO_LARGE, "fds", 0);
	mb_free(&b);
	/* the good case: one sealed memfd, referenced once */
	assert_int_equal(memfd_sealed_create("t", "abc", 3, &fds[0]), 0);
	run_fdref(&b, 4, 0, 3);
	decode_mb(&b, fds, 1, &m);
	assert_int_equal(fds[0], -1);
	assert_int_equal(m.u.run.code.len, 3);
	assert_memory_equal(m.u.run.code.data, "abc", 3);
	proto_msg_free(&m);
}

/* ------------------------------------------- sessions, files, stream */

#define SID "0123456789abcdef0123456789abcdef"
#define SID2 "ffffffffffffffffffffffffffffffff"

static void
test_roundtrip_simple_new(void **state)
{
	static const enum proto_type types[] = {PROTO_OK, PROTO_SESSION_LIST, PROTO_CANCEL_OK,
						PROTO_PS};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		assert_int_equal(proto_encode_simple((uint32_t)i + 1, types[i], &o), 0);
		decode_out(&o, &m);
		assert_int_equal(m.type, types[i]);
		proto_msg_free(&m);
	}
	assert_int_equal(proto_encode_simple(1, PROTO_SESSION_OK, &o), -EINVAL);
	assert_int_equal(proto_encode_simple(1, PROTO_STREAM, &o), -EINVAL);
}

static void
test_roundtrip_run_session(void **state)
{
	struct proto_run run = {.runtime = "sh", .session = SID, .stream = true};
	struct proto_out o;
	struct proto_msg m;

	run.code.fd = run.stdin_data.fd = -1;
	assert_int_equal(proto_encode_run(3, &run, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.run.session, SID);
	assert_true(m.u.run.stream);
	proto_msg_free(&m);

	/* Each alone. */
	run.stream = false;
	assert_int_equal(proto_encode_run(4, &run, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.run.session, SID);
	assert_false(m.u.run.stream);
	proto_msg_free(&m);
	run.session = NULL;
	run.stream = true;
	assert_int_equal(proto_encode_run(5, &run, &o), 0);
	decode_out(&o, &m);
	assert_null(m.u.run.session);
	assert_true(m.u.run.stream);
	proto_msg_free(&m);

	/* Without either: a one-shot run, not streamed. */
	run.stream = false;
	assert_int_equal(proto_encode_run(6, &run, &o), 0);
	decode_out(&o, &m);
	assert_null(m.u.run.session);
	assert_false(m.u.run.stream);
	proto_msg_free(&m);

	/* stream: false on the wire is the same as absent. */
	{
		struct mb b;

		mb_head(&b, 2, PROTO_RUN, 7);
		mb_str(&b, "runtime");
		mb_str(&b, "sh");
		mb_str(&b, "stream");
		assert_int_equal(msgpack_pack_false(&b.pk), 0);
		decode_mb(&b, NULL, 0, &m);
		assert_false(m.u.run.stream);
		assert_null(m.u.run.session);
		proto_msg_free(&m);
	}

	/* The encoder checks the id like the decoder does. */
	run.session = "0123456789ABCDEF0123456789ABCDEF";
	assert_int_equal(proto_encode_run(8, &run, &o), -EINVAL);
	run.session = SID "0";
	assert_int_equal(proto_encode_run(8, &run, &o), -EINVAL);
	run.session = "";
	assert_int_equal(proto_encode_run(8, &run, &o), -EINVAL);
}

static void
test_roundtrip_sessions(void **state)
{
	struct proto_session_open so = {
		.workspace_bytes = 64 << 20, .idle_timeout_ms = 60000, .lifetime_ms = UINT64_MAX};
	struct proto_session_entry ents[] = {{SID, 10, 5, 3, "idle", NULL, false},
					     {SID2, 0, 0, 0, "running", "python", true}};
	struct proto_session_list sl = {.sessions = ents, .nsessions = 2};
	struct proto_out o;
	struct proto_msg m;

	so.limits.v[PROTO_LIMIT_WALL_MS] = 2000;
	assert_int_equal(proto_encode_session_open(1, &so, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_OPEN);
	assert_int_equal(m.u.session_open.workspace_bytes, 64 << 20);
	assert_int_equal(m.u.session_open.idle_timeout_ms, 60000);
	assert_true(m.u.session_open.lifetime_ms == UINT64_MAX);
	assert_memory_equal(&m.u.session_open.limits, &so.limits, sizeof(so.limits));
	proto_msg_free(&m);

	/* Every field of session_open is optional. */
	{
		struct mb b;

		mb_head(&b, 0, PROTO_SESSION_OPEN, 2);
		decode_mb(&b, NULL, 0, &m);
		assert_int_equal(m.u.session_open.workspace_bytes, 0);
		assert_int_equal(m.u.session_open.limits.v[PROTO_LIMIT_WALL_MS], 0);
		proto_msg_free(&m);
	}

	assert_int_equal(proto_encode_session(2, PROTO_SESSION_OK, SID, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_OK);
	assert_string_equal(m.u.session.session, SID);
	proto_msg_free(&m);
	assert_int_equal(proto_encode_session(3, PROTO_SESSION_CLOSE, SID2, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_CLOSE);
	assert_string_equal(m.u.session.session, SID2);
	proto_msg_free(&m);

	assert_int_equal(proto_encode_session_list(4, &sl, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_LIST_OK);
	assert_int_equal(m.u.session_list.nsessions, 2);
	assert_string_equal(m.u.session_list.sessions[0].session, SID);
	assert_int_equal(m.u.session_list.sessions[0].age_ms, 10);
	assert_int_equal(m.u.session_list.sessions[0].idle_ms, 5);
	assert_int_equal(m.u.session_list.sessions[0].runs, 3);
	assert_string_equal(m.u.session_list.sessions[0].state, "idle");
	assert_string_equal(m.u.session_list.sessions[1].session, SID2);
	assert_string_equal(m.u.session_list.sessions[1].state, "running");
	assert_null(m.u.session_list.sessions[0].interpreter);
	assert_string_equal(m.u.session_list.sessions[1].interpreter, "python");
	/* background is on the wire only when true, and read back. */
	assert_false(m.u.session_list.sessions[0].background);
	assert_true(m.u.session_list.sessions[1].background);
	proto_msg_free(&m);
	/* An empty interpreter name is refused, as in session_open. */
	ents[1].interpreter = "";
	assert_int_equal(proto_encode_session_list(4, &sl, &o), -EINVAL);
	ents[1].interpreter = "python";

	sl.nsessions = 0;
	sl.sessions = NULL;
	assert_int_equal(proto_encode_session_list(5, &sl, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.session_list.nsessions, 0);
	proto_msg_free(&m);

	/* The most a reply may hold. */
	{
		struct proto_session_entry many[PROTO_SESSIONS_MAX + 1];
		size_t i;

		for (i = 0; i <= PROTO_SESSIONS_MAX; i++)
			many[i] = (struct proto_session_entry){SID, i, i, i, "idle", NULL, false};
		sl.sessions = many;
		sl.nsessions = PROTO_SESSIONS_MAX;
		assert_int_equal(proto_encode_session_list(6, &sl, &o), 0);
		decode_out(&o, &m);
		assert_int_equal(m.u.session_list.nsessions, PROTO_SESSIONS_MAX);
		assert_int_equal(m.u.session_list.sessions[PROTO_SESSIONS_MAX - 1].runs,
				 PROTO_SESSIONS_MAX - 1);
		proto_msg_free(&m);
		sl.nsessions = PROTO_SESSIONS_MAX + 1;
		assert_int_equal(proto_encode_session_list(6, &sl, &o), -E2BIG);
	}
}

static void
test_roundtrip_file_ops(void **state)
{
	static const enum proto_type types[] = {PROTO_FILE_WRITE, PROTO_FILE_READ, PROTO_FILE_LIST,
						PROTO_FILE_DELETE};
	uint8_t *big = pattern(PROTO_INLINE_MAX * 3, 4);
	struct proto_file_op op = {.session = SID, .path = "src/a b/ü.py"};
	char longpath[PROTO_PATH_MAX + 1];
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	op.data = inline_blob("print(1)\n");
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		assert_int_equal(proto_encode_file_op((uint32_t)i + 1, types[i], &op, &o), 0);
		assert_int_equal(o.nfds, 0);
		decode_out(&o, &m);
		assert_int_equal(m.type, types[i]);
		assert_string_equal(m.u.file.session, SID);
		assert_string_equal(m.u.file.path, "src/a b/ü.py");
		if (types[i] == PROTO_FILE_WRITE) {
			assert_true(m.u.file.data.present);
			assert_int_equal(m.u.file.data.len, 9);
			assert_memory_equal(m.u.file.data.data, "print(1)\n", 9);
		} else {
			/* Only write carries data. */
			assert_false(m.u.file.data.present);
			assert_int_equal(m.u.file.data.fd, -1);
		}
		proto_msg_free(&m);
	}

	/* A large write travels as a memfd; an empty one is an empty file. */
	op.data = (struct proto_blob){
		.data = big, .len = PROTO_INLINE_MAX * 3, .fd = -1, .present = true};
	assert_int_equal(proto_encode_file_op(9, PROTO_FILE_WRITE, &op, &o), 0);
	assert_int_equal(o.nfds, 1);
	decode_out(&o, &m);
	assert_true(m.u.file.data.fd >= 0);
	assert_int_equal(m.u.file.data.len, PROTO_INLINE_MAX * 3);
	assert_memory_equal(m.u.file.data.data, big, PROTO_INLINE_MAX * 3);
	proto_msg_free(&m);
	op.data = inline_blob("");
	assert_int_equal(proto_encode_file_op(9, PROTO_FILE_WRITE, &op, &o), 0);
	decode_out(&o, &m);
	assert_true(m.u.file.data.present);
	assert_int_equal(m.u.file.data.len, 0);
	proto_msg_free(&m);

	/* file_list without a path, or with "", is the workspace itself. */
	op.path = NULL;
	assert_int_equal(proto_encode_file_op(10, PROTO_FILE_LIST, &op, &o), 0);
	decode_out(&o, &m);
	assert_non_null(m.u.file.path);
	assert_string_equal(m.u.file.path, "");
	proto_msg_free(&m);
	op.path = "";
	assert_int_equal(proto_encode_file_op(11, PROTO_FILE_LIST, &op, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.file.path, "");
	proto_msg_free(&m);

	/* A path of exactly the bound. */
	memset(longpath, 'p', PROTO_PATH_MAX);
	longpath[PROTO_PATH_MAX] = '\0';
	op.path = longpath;
	assert_int_equal(proto_encode_file_op(12, PROTO_FILE_READ, &op, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(strlen(m.u.file.path), PROTO_PATH_MAX);
	proto_msg_free(&m);
	free(big);
}

static void
test_roundtrip_file_data(void **state)
{
	uint8_t *big = pattern(PROTO_INLINE_MAX + 5, 8);
	struct proto_file_data fd = {.data = inline_blob("abc"), .size = 3};
	struct proto_out o;
	struct proto_msg m;

	assert_int_equal(proto_encode_file_data(1, &fd, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_FILE_DATA);
	assert_int_equal(m.u.file_data.data.len, 3);
	assert_memory_equal(m.u.file_data.data.data, "abc", 3);
	assert_int_equal(m.u.file_data.size, 3);
	assert_false(m.u.file_data.truncated);
	proto_msg_free(&m);

	fd.data = (struct proto_blob){
		.data = big, .len = PROTO_INLINE_MAX + 5, .fd = -1, .present = true};
	fd.size = 1ULL << 40;
	fd.truncated = true;
	assert_int_equal(proto_encode_file_data(2, &fd, &o), 0);
	assert_int_equal(o.nfds, 1);
	decode_out(&o, &m);
	assert_true(m.u.file_data.data.fd >= 0);
	assert_memory_equal(m.u.file_data.data.data, big, PROTO_INLINE_MAX + 5);
	assert_true(m.u.file_data.size == 1ULL << 40);
	assert_true(m.u.file_data.truncated);
	proto_msg_free(&m);

	/* An empty file; a zeroed struct is one. */
	memset(&fd, 0, sizeof(fd));
	assert_int_equal(proto_encode_file_data(3, &fd, &o), 0);
	assert_int_equal(o.nfds, 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.file_data.data.len, 0);
	assert_int_equal(m.u.file_data.data.fd, -1);
	proto_msg_free(&m);

	/* The encoder refuses data that contradicts size and flag. */
	fd.data = inline_blob("abc");
	fd.size = 2;
	assert_int_equal(proto_encode_file_data(4, &fd, &o), -EINVAL);
	fd.size = 4;
	assert_int_equal(proto_encode_file_data(4, &fd, &o), -EINVAL);
	fd.size = 3;
	fd.truncated = true;
	assert_int_equal(proto_encode_file_data(4, &fd, &o), -EINVAL);
	free(big);
}

static void
test_roundtrip_file_list(void **state)
{
	struct proto_file_entry *ents = calloc(PROTO_LIST_MAX + 1, sizeof(*ents));
	static char names[PROTO_LIST_MAX + 1][8];
	static const char *const kinds[] = {"file", "dir", "link", "other"};
	struct proto_file_list fl = {.entries = ents, .nentries = 4};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	assert_non_null(ents);
	for (i = 0; i <= PROTO_LIST_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		ents[i] = (struct proto_file_entry){names[i], kinds[i % 4], i * 10,
						    1700000000000 + i};
	}
	assert_int_equal(proto_encode_file_list(1, &fl, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_FILE_LIST_OK);
	assert_int_equal(m.u.file_list.nentries, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(m.u.file_list.entries[i].name, names[i]);
		assert_string_equal(m.u.file_list.entries[i].kind, kinds[i]);
		assert_int_equal(m.u.file_list.entries[i].size, i * 10);
		assert_int_equal(m.u.file_list.entries[i].mtime_ms, 1700000000000 + i);
	}
	proto_msg_free(&m);

	/* An empty directory. */
	fl.nentries = 0;
	assert_int_equal(proto_encode_file_list(2, &fl, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.file_list.nentries, 0);
	proto_msg_free(&m);

	/* The bound, with short names, fits in one packet; one more is refused. */
	fl.nentries = PROTO_LIST_MAX;
	assert_int_equal(proto_encode_file_list(3, &fl, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.file_list.nentries, PROTO_LIST_MAX);
	assert_string_equal(m.u.file_list.entries[PROTO_LIST_MAX - 1].name, "f999");
	proto_msg_free(&m);
	fl.nentries = PROTO_LIST_MAX + 1;
	assert_int_equal(proto_encode_file_list(3, &fl, &o), -E2BIG);
	free(ents);
}

static void
test_roundtrip_stream(void **state)
{
	uint8_t *max = pattern(PROTO_INLINE_MAX, 6);
	struct proto_stream s = {.stream = "stdout", .data = inline_blob("line\n")};
	struct proto_out o;
	struct proto_msg m;

	assert_int_equal(proto_encode_stream(7, &s, &o), 0);
	assert_int_equal(o.nfds, 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_STREAM);
	assert_int_equal(m.id, 7);
	assert_string_equal(m.u.stream.stream, "stdout");
	assert_int_equal(m.u.stream.data.fd, -1);
	assert_int_equal(m.u.stream.data.len, 5);
	assert_memory_equal(m.u.stream.data.data, "line\n", 5);
	proto_msg_free(&m);

	/* stderr, and exactly PROTO_INLINE_MAX bytes: still inline. */
	s.stream = "stderr";
	s.data = (struct proto_blob){
		.data = max, .len = PROTO_INLINE_MAX, .fd = -1, .present = true};
	assert_int_equal(proto_encode_stream(8, &s, &o), 0);
	assert_int_equal(o.nfds, 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.stream.stream, "stderr");
	assert_int_equal(m.u.stream.data.len, PROTO_INLINE_MAX);
	assert_memory_equal(m.u.stream.data.data, max, PROTO_INLINE_MAX);
	proto_msg_free(&m);
	free(max);
}

static void
test_encode_errors_new(void **state)
{
	char longpath[PROTO_PATH_MAX + 2];
	uint8_t *big = pattern(PROTO_INLINE_MAX + 1, 0);
	struct proto_file_op op = {.session = SID, .path = "a"};
	struct proto_session_entry se = {SID, 1, 1, 1, "zombie", NULL, false};
	struct proto_session_list sl = {.sessions = &se, .nsessions = 1};
	struct proto_file_entry fe = {"x", "socket", 0, 0};
	struct proto_file_list fl = {.entries = &fe, .nentries = 1};
	struct proto_stream s = {.stream = "stdout"};
	struct proto_out o;
	int fd;

	/* session_ok/session_close: type and id checked. */
	assert_int_equal(proto_encode_session(1, PROTO_OK, SID, &o), -EINVAL);
	assert_int_equal(proto_encode_session(1, PROTO_SESSION_OK, NULL, &o), -EINVAL);
	assert_int_equal(proto_encode_session(1, PROTO_SESSION_OK, "abc", &o), -EINVAL);
	assert_int_equal(proto_encode_session(1, PROTO_SESSION_OK, SID "a", &o), -EINVAL);
	assert_int_equal(
		proto_encode_session(1, PROTO_SESSION_OK, "g123456789abcdef0123456789abcdef", &o),
		-EINVAL);
	assert_int_equal(proto_encode_session(0, PROTO_SESSION_OK, SID, &o), -EINVAL);
	assert_int_equal(proto_encode_session_open(1, NULL, &o), -EINVAL);
	assert_int_equal(proto_encode_session_open(0, &(struct proto_session_open){0}, &o),
			 -EINVAL);

	/* session_list_ok: states from the set, ids checked, NULL array. */
	assert_int_equal(proto_encode_session_list(1, &sl, &o), -EINVAL);
	se.state = NULL;
	assert_int_equal(proto_encode_session_list(1, &sl, &o), -EINVAL);
	se.state = "idle";
	se.session = "x";
	assert_int_equal(proto_encode_session_list(1, &sl, &o), -EINVAL);
	sl.sessions = NULL;
	assert_int_equal(proto_encode_session_list(1, &sl, &o), -EINVAL);

	/* file ops: type, id, path. */
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_DATA, &op, &o), -EINVAL);
	op.session = NULL;
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_READ, &op, &o), -EINVAL);
	op.session = SID;
	op.path = "";
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_READ, &op, &o), -EINVAL);
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_DELETE, &op, &o), -EINVAL);
	op.data = inline_blob("x");
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_WRITE, &op, &o), -EINVAL);
	op.path = NULL;
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_WRITE, &op, &o), -EINVAL);
	memset(longpath, 'p', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	op.path = longpath;
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_LIST, &op, &o), -E2BIG);
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_WRITE, &op, &o), -E2BIG);
	/* A write's unsealed memfd is refused and not leaked. */
	op.path = "a";
	fd = unsealed_memfd(4);
	op.data = (struct proto_blob){.len = 4, .fd = fd, .present = true};
	assert_int_equal(proto_encode_file_op(1, PROTO_FILE_WRITE, &op, &o), -EINVAL);
	close(fd);

	/* file_list_ok: kinds from the set, names non-empty. */
	assert_int_equal(proto_encode_file_list(1, &fl, &o), -EINVAL);
	fe.kind = "file";
	fe.name = "";
	assert_int_equal(proto_encode_file_list(1, &fl, &o), -EINVAL);
	fe.name = NULL;
	assert_int_equal(proto_encode_file_list(1, &fl, &o), -EINVAL);
	fl.entries = NULL;
	assert_int_equal(proto_encode_file_list(1, &fl, &o), -EINVAL);

	/* stream: a name from the set, inline, non-empty, <= PROTO_INLINE_MAX. */
	s.data = inline_blob("x");
	s.stream = "stdin";
	assert_int_equal(proto_encode_stream(1, &s, &o), -EINVAL);
	s.stream = NULL;
	assert_int_equal(proto_encode_stream(1, &s, &o), -EINVAL);
	s.stream = "stdout";
	s.data = inline_blob("");
	assert_int_equal(proto_encode_stream(1, &s, &o), -EINVAL);
	s.data.present = false;
	assert_int_equal(proto_encode_stream(1, &s, &o), -EINVAL);
	s.data = (struct proto_blob){
		.data = big, .len = PROTO_INLINE_MAX + 1, .fd = -1, .present = true};
	assert_int_equal(proto_encode_stream(1, &s, &o), -E2BIG);
	assert_int_equal(memfd_sealed_create("s", "abc", 3, &fd), 0);
	s.data = (struct proto_blob){.len = 3, .fd = fd, .present = true};
	assert_int_equal(proto_encode_stream(1, &s, &o), -EINVAL);
	close(fd);
	free(big);
}

/* Hand-made malformed messages of the new types, each with its reply code and reason. */
static void
b_session_short(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_CLOSE, id);
	mb_str(b, "session");
	mb_strn(b, 'a', PROTO_SESSION_ID_LEN - 1);
}

static void
b_session_long(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_OK, id);
	mb_str(b, "session");
	mb_strn(b, 'a', PROTO_SESSION_ID_LEN + 1);
}

static void
b_session_huge(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_CLOSE, id);
	mb_str(b, "session");
	mb_strn(b, 'a', PROTO_STR_MAX + 1);
}

static void
b_session_upper(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_CLOSE, id);
	mb_str(b, "session");
	mb_str(b, "0123456789ABCDEF0123456789abcdef");
}

static void
b_session_nonhex(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_CLOSE, id);
	mb_str(b, "session");
	mb_str(b, "0123456789abcdeg0123456789abcdef");
}

static void
b_session_nul(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_CLOSE, id);
	mb_str(b, "session");
	assert_int_equal(msgpack_pack_str(&b->pk, PROTO_SESSION_ID_LEN), 0);
	assert_int_equal(msgpack_pack_str_body(&b->pk,
					       "0123456789abcdef\0"
					       "123456789abcdef",
					       PROTO_SESSION_ID_LEN),
			 0);
}

static void
b_session_int(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_CLOSE, id);
	mb_str(b, "session");
	mb_uint(b, 5);
}

static void
b_session_missing(struct mb *b, uint32_t id)
{
	mb_head(b, 0, PROTO_SESSION_CLOSE, id);
}

static void
b_run_session(struct mb *b, uint32_t id)
{
	mb_head(b, 2, PROTO_RUN, id);
	mb_str(b, "runtime");
	mb_str(b, "sh");
	mb_str(b, "session");
	mb_str(b, SID "0");
}

static void
b_run_stream(struct mb *b, uint32_t id)
{
	mb_head(b, 2, PROTO_RUN, id);
	mb_str(b, "runtime");
	mb_str(b, "sh");
	mb_str(b, "stream");
	mb_uint(b, 1);
}

static void
b_open_limit(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_OPEN, id);
	mb_str(b, "limits");
	mb_map(b, 1);
	mb_str(b, "gpu_ms");
	mb_uint(b, 1);
}

static void
b_open_neg(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_OPEN, id);
	mb_str(b, "workspace_bytes");
	mb_int(b, -1);
}

static void
b_open_str(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_OPEN, id);
	mb_str(b, "idle_timeout_ms");
	mb_str(b, "60000");
}

/* A file operation: session plus an optional path of n bytes of c (n < 0: none). */
static void
file_op(struct mb *b, uint64_t type, uint32_t id, long n, size_t extra)
{
	mb_head(b, 1 + (n >= 0) + extra, type, id);
	mb_str(b, "session");
	mb_str(b, SID);
	if (n >= 0) {
		mb_str(b, "path");
		mb_strn(b, 'p', (size_t)n);
	}
}

static void
b_read_nopath(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_READ, id, -1, 0);
}

static void
b_read_empty(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_READ, id, 0, 0);
}

static void
b_delete_nopath(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_DELETE, id, -1, 0);
}

static void
b_delete_empty(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_DELETE, id, 0, 0);
}

static void
b_delete_long(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_DELETE, id, PROTO_PATH_MAX + 1, 0);
}

static void
b_list_long(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_LIST, id, PROTO_PATH_MAX + 1, 0);
}

static void
b_list_nosession(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_FILE_LIST, id);
	mb_str(b, "path");
	mb_str(b, "x");
}

static void
b_list_badsession(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_FILE_LIST, id);
	mb_str(b, "session");
	mb_str(b, "../../etc");
}

static void
b_write_nodata(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_WRITE, id, 3, 0);
}

static void
b_write_nopath(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_WRITE, id, -1, 1);
	mb_str(b, "data");
	mb_bin(b, "x", 1);
}

static void
b_write_long(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_WRITE, id, PROTO_PATH_MAX + 1, 1);
	mb_str(b, "data");
	mb_bin(b, "x", 1);
}

static void
b_write_nul(struct mb *b, uint32_t id)
{
	mb_head(b, 3, PROTO_FILE_WRITE, id);
	mb_str(b, "session");
	mb_str(b, SID);
	mb_str(b, "path");
	assert_int_equal(msgpack_pack_str(&b->pk, 3), 0);
	assert_int_equal(msgpack_pack_str_body(&b->pk, "a\0b", 3), 0);
	mb_str(b, "data");
	mb_bin(b, "x", 1);
}

static void
b_write_strdata(struct mb *b, uint32_t id)
{
	file_op(b, PROTO_FILE_WRITE, id, 3, 1);
	mb_str(b, "data");
	mb_str(b, "text");
}

/* file_data with data of dlen bytes, size and truncated. */
static void
file_data(struct mb *b, uint32_t id, size_t dlen, uint64_t size, bool truncated)
{
	mb_head(b, 3, PROTO_FILE_DATA, id);
	mb_str(b, "data");
	mb_bin(b, "abcdef", dlen);
	mb_str(b, "size");
	mb_uint(b, size);
	mb_str(b, "truncated");
	assert_int_equal(truncated ? msgpack_pack_true(&b->pk) : msgpack_pack_false(&b->pk), 0);
}

static void
b_data_longer(struct mb *b, uint32_t id)
{
	file_data(b, id, 3, 2, false);
}

static void
b_data_short_untrunc(struct mb *b, uint32_t id)
{
	file_data(b, id, 2, 3, false);
}

static void
b_data_full_trunc(struct mb *b, uint32_t id)
{
	file_data(b, id, 3, 3, true);
}

static void
b_data_nosize(struct mb *b, uint32_t id)
{
	mb_head(b, 2, PROTO_FILE_DATA, id);
	mb_str(b, "data");
	mb_bin(b, "", 0);
	mb_str(b, "truncated");
	assert_int_equal(msgpack_pack_false(&b->pk), 0);
}

/* One file_list_ok entry with these name and kind. */
static void
file_entry(struct mb *b, const char *name, const char *kind)
{
	mb_map(b, 4);
	mb_str(b, "name");
	mb_str(b, name);
	mb_str(b, "kind");
	mb_str(b, kind);
	mb_str(b, "size");
	mb_uint(b, 1);
	mb_str(b, "mtime_ms");
	mb_uint(b, 1);
}

static void
b_entry_kind(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_FILE_LIST_OK, id);
	mb_str(b, "entries");
	mb_array(b, 2);
	file_entry(b, "a", "dir");
	file_entry(b, "s", "socket");
}

static void
b_entry_kind_case(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_FILE_LIST_OK, id);
	mb_str(b, "entries");
	mb_array(b, 1);
	file_entry(b, "a", "FILE");
}

static void
b_entry_noname(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_FILE_LIST_OK, id);
	mb_str(b, "entries");
	mb_array(b, 1);
	file_entry(b, "", "file");
}

static void
b_entry_longname(struct mb *b, uint32_t id)
{
	char name[PROTO_NAME_MAX + 2];

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	mb_head(b, 1, PROTO_FILE_LIST_OK, id);
	mb_str(b, "entries");
	mb_array(b, 1);
	file_entry(b, name, "file");
}

static void
b_entry_missing(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_FILE_LIST_OK, id);
	mb_str(b, "entries");
	mb_array(b, 1);
	mb_map(b, 3);
	mb_str(b, "name");
	mb_str(b, "a");
	mb_str(b, "kind");
	mb_str(b, "file");
	mb_str(b, "size");
	mb_uint(b, 1);
}

static void
b_entries_many(struct mb *b, uint32_t id)
{
	size_t i;

	mb_head(b, 1, PROTO_FILE_LIST_OK, id);
	mb_str(b, "entries");
	mb_array(b, PROTO_LIST_MAX + 1);
	for (i = 0; i <= PROTO_LIST_MAX; i++)
		mb_map(b, 0);
}

static void
b_entries_missing(struct mb *b, uint32_t id)
{
	mb_head(b, 0, PROTO_FILE_LIST_OK, id);
}

/* One session_list_ok entry. */
static void
session_entry(struct mb *b, const char *session, const char *state)
{
	mb_map(b, 5);
	mb_str(b, "session");
	mb_str(b, session);
	mb_str(b, "age_ms");
	mb_uint(b, 1);
	mb_str(b, "idle_ms");
	mb_uint(b, 1);
	mb_str(b, "runs");
	mb_uint(b, 1);
	mb_str(b, "state");
	mb_str(b, state);
}

static void
b_sess_state(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_LIST_OK, id);
	mb_str(b, "sessions");
	mb_array(b, 1);
	session_entry(b, SID, "zombie");
}

static void
b_sess_id(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_LIST_OK, id);
	mb_str(b, "sessions");
	mb_array(b, 2);
	session_entry(b, SID, "idle");
	session_entry(b, "0123", "idle");
}

static void
b_sess_many(struct mb *b, uint32_t id)
{
	size_t i;

	mb_head(b, 1, PROTO_SESSION_LIST_OK, id);
	mb_str(b, "sessions");
	mb_array(b, PROTO_SESSIONS_MAX + 1);
	for (i = 0; i <= PROTO_SESSIONS_MAX; i++)
		session_entry(b, SID, "idle");
}

static void
b_sess_noruns(struct mb *b, uint32_t id)
{
	mb_head(b, 1, PROTO_SESSION_LIST_OK, id);
	mb_str(b, "sessions");
	mb_array(b, 1);
	mb_map(b, 4);
	mb_str(b, "session");
	mb_str(b, SID);
	mb_str(b, "age_ms");
	mb_uint(b, 1);
	mb_str(b, "idle_ms");
	mb_uint(b, 1);
	mb_str(b, "state");
	mb_str(b, "idle");
}

/* A stream event: name plus data written by the caller (ndata more fields). */
static void
stream_head(struct mb *b, uint32_t id, const char *name, size_t ndata)
{
	mb_head(b, 1 + ndata, PROTO_STREAM, id);
	mb_str(b, "stream");
	mb_str(b, name);
}

static void
b_stream_empty(struct mb *b, uint32_t id)
{
	stream_head(b, id, "stdout", 1);
	mb_str(b, "data");
	mb_bin(b, "", 0);
}

static void
b_stream_big(struct mb *b, uint32_t id)
{
	uint8_t *p = pattern(PROTO_INLINE_MAX + 1, 0);

	stream_head(b, id, "stdout", 1);
	mb_str(b, "data");
	mb_bin(b, p, PROTO_INLINE_MAX + 1);
	free(p);
}

static void
b_stream_name(struct mb *b, uint32_t id)
{
	stream_head(b, id, "stdin", 1);
	mb_str(b, "data");
	mb_bin(b, "x", 1);
}

static void
b_stream_nodata(struct mb *b, uint32_t id)
{
	stream_head(b, id, "stderr", 0);
}

static void
b_stream_str(struct mb *b, uint32_t id)
{
	stream_head(b, id, "stderr", 1);
	mb_str(b, "data");
	mb_str(b, "text");
}

/* A memfd reference with no fd attached: refused as not inline before any fd check. */
static void
b_stream_fdref(struct mb *b, uint32_t id)
{
	stream_head(b, id, "stdout", 1);
	mb_fdref(b, "data", 0, 3);
}

static void
test_bad_new_messages(void **state)
{
	static const struct {
		void (*fn)(struct mb *, uint32_t);
		enum proto_error code;
		const char *why;
	} cases[] = {
		{b_session_short, PROTO_ERR_BAD_REQUEST, "session_close.session: not a session id"},
		{b_session_long, PROTO_ERR_BAD_REQUEST, "session_ok.session: not a session id"},
		{b_session_huge, PROTO_ERR_BAD_REQUEST, "session_close.session: not a session id"},
		{b_session_upper, PROTO_ERR_BAD_REQUEST, "session_close.session: not a session id"},
		{b_session_nonhex, PROTO_ERR_BAD_REQUEST,
		 "session_close.session: not a session id"},
		{b_session_nul, PROTO_ERR_BAD_REQUEST, "session_close.session: not a session id"},
		{b_session_int, PROTO_ERR_BAD_REQUEST, "session_close.session: not a string"},
		{b_session_missing, PROTO_ERR_BAD_REQUEST, "session_close.session: missing"},
		{b_run_session, PROTO_ERR_BAD_REQUEST, "run.session: not a session id"},
		{b_run_stream, PROTO_ERR_BAD_REQUEST, "run.stream: not a boolean"},
		{b_open_limit, PROTO_ERR_BAD_REQUEST,
		 "session_open.limits: entry 0: unknown limit"},
		{b_open_neg, PROTO_ERR_BAD_REQUEST, "session_open.workspace_bytes: negative"},
		{b_open_str, PROTO_ERR_BAD_REQUEST,
		 "session_open.idle_timeout_ms: not an unsigned"},
		{b_read_nopath, PROTO_ERR_BAD_REQUEST, "file_read.path: missing"},
		{b_read_empty, PROTO_ERR_BAD_REQUEST, "file_read.path: empty"},
		{b_delete_nopath, PROTO_ERR_BAD_REQUEST, "file_delete.path: missing"},
		{b_delete_empty, PROTO_ERR_BAD_REQUEST, "file_delete.path: empty"},
		{b_delete_long, PROTO_ERR_TOO_LARGE, "file_delete.path: longer than 1024 bytes"},
		{b_list_long, PROTO_ERR_TOO_LARGE, "file_list.path: longer than 1024 bytes"},
		{b_list_nosession, PROTO_ERR_BAD_REQUEST, "file_list.session: missing"},
		{b_list_badsession, PROTO_ERR_BAD_REQUEST, "file_list.session: not a session id"},
		{b_write_nodata, PROTO_ERR_BAD_REQUEST, "file_write.data: missing"},
		{b_write_nopath, PROTO_ERR_BAD_REQUEST, "file_write.path: missing"},
		{b_write_long, PROTO_ERR_TOO_LARGE, "file_write.path: longer than 1024 bytes"},
		{b_write_nul, PROTO_ERR_BAD_REQUEST, "file_write.path: contains a NUL"},
		{b_write_strdata, PROTO_ERR_BAD_REQUEST, "file_write.data: not a blob"},
		{b_data_longer, PROTO_ERR_BAD_REQUEST, "file_data.data: data longer than the size"},
		{b_data_short_untrunc, PROTO_ERR_BAD_REQUEST, "file_data.data: truncated flag"},
		{b_data_full_trunc, PROTO_ERR_BAD_REQUEST, "file_data.data: truncated flag"},
		{b_data_nosize, PROTO_ERR_BAD_REQUEST, "file_data.size: missing"},
		{b_entry_kind, PROTO_ERR_BAD_REQUEST, "file_list_ok.entries[1].kind: unknown name"},
		{b_entry_kind_case, PROTO_ERR_BAD_REQUEST, "file_list_ok.entries[0].kind: unknown"},
		{b_entry_noname, PROTO_ERR_BAD_REQUEST, "file_list_ok.entries[0].name: empty"},
		{b_entry_longname, PROTO_ERR_TOO_LARGE, "file_list_ok.entries[0].name: longer"},
		{b_entry_missing, PROTO_ERR_BAD_REQUEST,
		 "file_list_ok.entries[0].mtime_ms: missing"},
		{b_entries_many, PROTO_ERR_TOO_LARGE,
		 "file_list_ok.entries: more than 1000 entries"},
		{b_entries_missing, PROTO_ERR_BAD_REQUEST, "file_list_ok.entries: missing"},
		{b_sess_state, PROTO_ERR_BAD_REQUEST, "session_list_ok.sessions[0].state: unknown"},
		{b_sess_id, PROTO_ERR_BAD_REQUEST,
		 "session_list_ok.sessions[1].session: not a sess"},
		{b_sess_many, PROTO_ERR_TOO_LARGE,
		 "session_list_ok.sessions: more than 64 entries"},
		{b_sess_noruns, PROTO_ERR_BAD_REQUEST, "session_list_ok.sessions[0].runs: missing"},
		{b_stream_empty, PROTO_ERR_BAD_REQUEST, "stream.data: empty"},
		{b_stream_big, PROTO_ERR_TOO_LARGE, "stream.data: inline blob longer"},
		{b_stream_name, PROTO_ERR_BAD_REQUEST, "stream.stream: unknown name"},
		{b_stream_nodata, PROTO_ERR_BAD_REQUEST, "stream.data: missing"},
		{b_stream_str, PROTO_ERR_BAD_REQUEST, "stream.data: not an inline bin"},
		{b_stream_fdref, PROTO_ERR_BAD_REQUEST, "stream.data: not an inline bin"},
	};
	struct mb b;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cases[i].fn(&b, (uint32_t)(200 + i));
		check_fail(&b, cases[i].code, cases[i].why, (uint32_t)(200 + i));
	}
}

static void
test_bad_new_fds(void **state)
{
	struct proto_msg m;
	struct mb b;
	int fds[1];

	/* A stream's data as a real sealed memfd: refused, and the fd closed. */
	assert_int_equal(memfd_sealed_create("s", "abc", 3, &fds[0]), 0);
	stream_head(&b, 5, "stdout", 1);
	mb_fdref(&b, "data", 0, 3);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST,
		       "stream.data: not an inline bin", 5);
	assert_int_equal(fds[0], -1);
	mb_free(&b);

	/* file_write and file_data take memfds; a bad one is refused and closed. */
	fds[0] = unsealed_memfd(3);
	file_op(&b, PROTO_FILE_WRITE, 6, 1, 1);
	mb_fdref(&b, "data", 0, 3);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST,
		       "file_write.data.fd: not a sealed memfd", 6);
	mb_free(&b);
	assert_int_equal(memfd_sealed_create("d", "abc", 3, &fds[0]), 0);
	mb_head(&b, 3, PROTO_FILE_DATA, 7);
	mb_fdref(&b, "data", 0, 3);
	mb_str(&b, "size");
	mb_uint(&b, 2);
	mb_str(&b, "truncated");
	assert_int_equal(msgpack_pack_false(&b.pk), 0);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST,
		       "file_data.data: data longer", 7);
	mb_free(&b);
	/* An fd attached to a message without blobs is unreferenced. */
	assert_int_equal(memfd_sealed_create("d", "abc", 3, &fds[0]), 0);
	file_op(&b, PROTO_FILE_READ, 8, 1, 0);
	check_fail_fds(b.sb.data, b.sb.size, fds, 1, PROTO_ERR_BAD_REQUEST,
		       "attached fd 0 is not referenced", 8);
	mb_free(&b);

	/* The good case: a write's sealed memfd, owned by the message. */
	assert_int_equal(memfd_sealed_create("w", "abc", 3, &fds[0]), 0);
	file_op(&b, PROTO_FILE_WRITE, 9, 1, 1);
	mb_fdref(&b, "data", 0, 3);
	decode_mb(&b, fds, 1, &m);
	assert_int_equal(fds[0], -1);
	assert_true(m.u.file.data.fd >= 0);
	assert_memory_equal(m.u.file.data.data, "abc", 3);
	proto_msg_free(&m);
}

/* Issue 30: session_ps, session_ps_ok and process_stop round-trip; the
 * bounds (64 processes, a 15-byte name, an empty name, a bad session id)
 * are refused by the encoder. */
static void
test_roundtrip_processes(void **state)
{
	struct proto_process procs[PROTO_PROCESSES_MAX + 1] = {{2, "python3", 1500, 12 << 20},
							       {7, "sleep", 0, 1 << 20}};
	struct proto_process_list l = {.processes = procs, .nprocesses = 2, .truncated = true};
	struct proto_process_stop st = {.session = SID, .pid = 7};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	(void)state;
	assert_int_equal(proto_encode_session(1, PROTO_SESSION_PS, SID, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_PS);
	assert_string_equal(m.u.session_ps.session, SID);
	proto_msg_free(&m);

	assert_int_equal(proto_encode_session_ps_ok(2, &l, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_PS_OK);
	assert_int_equal(m.u.processes.nprocesses, 2);
	assert_true(m.u.processes.truncated);
	assert_int_equal(m.u.processes.processes[0].pid, 2);
	assert_string_equal(m.u.processes.processes[0].name, "python3");
	assert_int_equal(m.u.processes.processes[0].cpu_ms, 1500);
	assert_int_equal(m.u.processes.processes[0].memory_bytes, 12 << 20);
	assert_string_equal(m.u.processes.processes[1].name, "sleep");
	proto_msg_free(&m);
	l.nprocesses = 0;
	l.truncated = false;
	assert_int_equal(proto_encode_session_ps_ok(2, &l, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.processes.nprocesses, 0);
	assert_false(m.u.processes.truncated);
	proto_msg_free(&m);

	assert_int_equal(proto_encode_process_stop(3, &st, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_PROCESS_STOP);
	assert_string_equal(m.u.process_stop.session, SID);
	assert_int_equal(m.u.process_stop.pid, 7);
	proto_msg_free(&m);

	/* Bounds. */
	for (i = 0; i <= PROTO_PROCESSES_MAX; i++)
		procs[i] = (struct proto_process){(uint32_t)i + 2, "x", 0, 0};
	l.nprocesses = PROTO_PROCESSES_MAX + 1;
	assert_int_equal(proto_encode_session_ps_ok(2, &l, &o), -E2BIG);
	l.nprocesses = PROTO_PROCESSES_MAX;
	assert_int_equal(proto_encode_session_ps_ok(2, &l, &o), 0);
	proto_out_free(&o);
	procs[0].name = "0123456789abcdef"; /* 16 bytes: more than a comm */
	assert_int_not_equal(proto_encode_session_ps_ok(2, &l, &o), 0);
	procs[0].name = NULL;
	assert_int_not_equal(proto_encode_session_ps_ok(2, &l, &o), 0);
	st.session = "nothex";
	assert_int_not_equal(proto_encode_process_stop(3, &st, &o), 0);
	assert_int_equal(proto_encode_process_stop(3, NULL, &o), -EINVAL);
}

static void
test_names(void **state)
{
	enum proto_outcome oc;
	size_t i;

	assert_string_equal(proto_type_name(PROTO_RESULT), "result");
	assert_string_equal(proto_type_name(PROTO_SESSION_OPEN), "session_open");
	assert_string_equal(proto_type_name(PROTO_OK), "ok");
	assert_string_equal(proto_type_name(PROTO_FILE_LIST_OK), "file_list_ok");
	assert_string_equal(proto_type_name(PROTO_STREAM), "stream");
	assert_string_equal(proto_type_name(PROTO_TOOL_REPLY), "tool_reply");
	assert_string_equal(proto_type_name(PROTO_PROCESS_STOP), "process_stop");
	assert_string_equal(proto_type_name(PROTO_SESSION_EXTEND), "session_extend");
	assert_string_equal(proto_type_name(PROTO_SESSION_SAVE), "session_save");
	/* The numbers are the wire's: bg-procs took 29 to 31 first, and a
	 * number once given is never given again. */
	assert_int_equal(PROTO_SESSION_PS, 29);
	assert_int_equal(PROTO_SESSION_PS_OK, 30);
	assert_int_equal(PROTO_PROCESS_STOP, 31);
	assert_int_equal(PROTO_SESSION_EXTEND, 32);
	assert_int_equal(PROTO_SESSION_SAVE, 33);
	for (i = PROTO_HELLO; i <= PROTO_SESSION_SAVE; i++)
		assert_string_not_equal(proto_type_name((enum proto_type)i), "unknown");
	assert_string_equal(proto_type_name((enum proto_type)(PROTO_SESSION_SAVE + 1)), "unknown");
	assert_string_equal(proto_type_name((enum proto_type)42), "unknown");
	for (i = 0; i < PROTO_OUTCOME_COUNT_; i++) {
		assert_int_equal(
			proto_outcome_from_name(proto_outcome_name((enum proto_outcome)i), &oc), 0);
		assert_int_equal(oc, i);
	}
	assert_int_equal(proto_outcome_from_name("nope", &oc), -ENOENT);
	assert_string_equal(proto_limit_name(PROTO_LIMIT_TMP_BYTES), "tmp_bytes");
}

/* ps_ok: the list of runs round-trips, every field of every entry
 * (DEC_PSRUNS, which no other test decodes). */
static void
test_ps_ok(void **state)
{
	struct proto_ps_entry runs[2] = {
		{.run = 7,
		 .uid = 1000,
		 .pid = 42,
		 .runtime = "python",
		 .state = "running",
		 .elapsed_ms = 1500},
		{.run = 8,
		 .uid = 1001,
		 .pid = -1,
		 .runtime = "shell",
		 .state = "queued",
		 .elapsed_ms = 0},
	};
	struct proto_ps ps = {.runs = runs, .nruns = 2};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	(void)state;
	assert_int_equal(proto_encode_ps(3, &ps, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_PS_OK);
	assert_int_equal(m.u.ps.nruns, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(m.u.ps.runs[i].run, runs[i].run);
		assert_int_equal(m.u.ps.runs[i].uid, runs[i].uid);
		assert_int_equal(m.u.ps.runs[i].pid, runs[i].pid);
		assert_string_equal(m.u.ps.runs[i].runtime, runs[i].runtime);
		assert_string_equal(m.u.ps.runs[i].state, runs[i].state);
		assert_int_equal(m.u.ps.runs[i].elapsed_ms, runs[i].elapsed_ms);
	}
	proto_msg_free(&m);

	ps.nruns = PROTO_PS_MAX + 1;
	assert_int_equal(proto_encode_ps(3, &ps, &o), -E2BIG);
	ps.nruns = 1;
	runs[0].runtime = "";
	assert_int_equal(proto_encode_ps(3, &ps, &o), -EINVAL);
}

/* Values out of range get each table's word for unknown (nametab.h), and a
 * peer cannot name "none" as an error. */
static void
test_names_out_of_range(void **state)
{
	enum proto_error e = PROTO_ERR_BUSY;
	enum proto_outcome oc = PROTO_OUTCOME_EXITED;

	(void)state;
	assert_string_equal(proto_type_name((enum proto_type) - 1), "unknown");
	assert_string_equal(proto_error_name(PROTO_ERR_COUNT_), "internal");
	assert_string_equal(proto_error_name((enum proto_error) - 1), "internal");
	assert_string_equal(proto_error_name(PROTO_ERR_NONE), "none");
	assert_int_equal(proto_error_from_name("none", &e), -ENOENT);
	assert_int_equal(proto_error_from_name("", &e), -ENOENT);
	assert_int_equal(e, PROTO_ERR_BUSY); /* written only on success */
	assert_int_equal(proto_error_from_name("internal", &e), 0);
	assert_int_equal(e, PROTO_ERR_INTERNAL);
	assert_string_equal(proto_outcome_name(PROTO_OUTCOME_COUNT_), "error");
	assert_string_equal(proto_outcome_name((enum proto_outcome) - 1), "error");
	assert_int_equal(proto_outcome_from_name("", &oc), -ENOENT);
	assert_int_equal(oc, PROTO_OUTCOME_EXITED);
	assert_string_equal(proto_tool_outcome_name(PROTO_TOOL_OUTCOME_COUNT_), "error");
	assert_string_equal(proto_tool_outcome_name((enum proto_tool_outcome) - 1), "error");
}

/* session_extend, session_save and session_open's archive round trips; a
 * lease of 0 ms and a bad session id refused on both sides. */
static void
test_roundtrip_session_lease_save(void **state)
{
	static const char id[] = "0123456789abcdef0123456789abcdef";
	struct proto_session_extend x = {.session = id, .lifetime_ms = 90000};
	struct proto_out o;
	struct proto_msg m;
	struct mb b;

	(void)state;
	assert_int_equal(proto_encode_session_extend(3, &x, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_EXTEND);
	assert_int_equal(m.id, 3);
	assert_string_equal(m.u.session_extend.session, id);
	assert_int_equal(m.u.session_extend.lifetime_ms, 90000);
	proto_msg_free(&m);
	assert_int_equal(proto_encode_session(4, PROTO_SESSION_SAVE, id, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_SESSION_SAVE);
	assert_string_equal(m.u.session.session, id);
	proto_msg_free(&m);
	/* session_open's archive: a blob, absent by default. */
	{
		struct proto_session_open so = {.archive = inline_blob("tar")};

		assert_int_equal(proto_encode_session_open(5, &so, &o), 0);
		decode_out(&o, &m);
		assert_true(m.u.session_open.archive.present);
		assert_int_equal(m.u.session_open.archive.len, 3);
		assert_memory_equal(m.u.session_open.archive.data, "tar", 3);
		proto_msg_free(&m);
		so.archive = (struct proto_blob){.fd = -1};
		assert_int_equal(proto_encode_session_open(5, &so, &o), 0);
		decode_out(&o, &m);
		assert_false(m.u.session_open.archive.present);
		assert_int_equal(m.u.session_open.archive.fd, -1);
		proto_msg_free(&m);
		/* With detached and background too: every field counted. */
		so = (struct proto_session_open){.interpreter = "python",
						 .detached = true,
						 .background = true,
						 .archive = inline_blob("tar")};
		assert_int_equal(proto_encode_session_open(6, &so, &o), 0);
		decode_out(&o, &m);
		assert_true(m.u.session_open.detached);
		assert_true(m.u.session_open.background);
		assert_true(m.u.session_open.archive.present);
		assert_string_equal(m.u.session_open.interpreter, "python");
		proto_msg_free(&m);
	}
	x.lifetime_ms = 0;
	assert_int_equal(proto_encode_session_extend(3, &x, &o), -EINVAL);
	mb_head(&b, 2, PROTO_SESSION_EXTEND, 7);
	mb_str(&b, "session");
	mb_str(&b, id);
	mb_str(&b, "lifetime_ms");
	mb_uint(&b, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "must not be 0", 7);
	mb_head(&b, 1, PROTO_SESSION_EXTEND, 8);
	mb_str(&b, "session");
	mb_str(&b, id);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "lifetime_ms", 8);
	mb_head(&b, 1, PROTO_SESSION_SAVE, 9);
	mb_str(&b, "session");
	mb_str(&b, "../../etc");
	check_fail(&b, PROTO_ERR_BAD_REQUEST, NULL, 9);
}

/* info_ok.mounts and the profile entry's lists: round trip, absent when
 * empty, names checked, every bound. */
static void
test_roundtrip_info_mounts(void **state)
{
	const char *mnts[] = {"data", "tools"}, *blocked[] = {"subprocess", "os.path"};
	struct proto_mount_info mi[2] = {{"data", "/data/x", false}, {"tools", "/opt/t", true}};
	struct proto_profile prof = {.name = "p"};
	struct proto_info in = {.daemon = "airlockd", .version = 1, .nruntimes = 1};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	(void)state;
	in.runtimes[0] = "python";
	in.profiles = &prof;
	in.nprofiles = 1;
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.info.nmounts, 0);
	assert_int_equal(m.u.info.profiles[0].nmounts + m.u.info.profiles[0].nallow_mounts +
				 m.u.info.profiles[0].nblocked_imports,
			 0);
	proto_msg_free(&m);
	prof.mounts = mnts;
	prof.nmounts = 1;
	prof.allow_mounts = mnts;
	prof.nallow_mounts = 2;
	prof.blocked_imports = blocked;
	prof.nblocked_imports = 2;
	in.mounts = mi;
	in.nmounts = 2;
	assert_int_equal(proto_encode_info(5, &in, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.info.profiles[0].nmounts, 1);
	assert_string_equal(m.u.info.profiles[0].mounts[0], "data");
	assert_int_equal(m.u.info.profiles[0].nallow_mounts, 2);
	assert_string_equal(m.u.info.profiles[0].allow_mounts[1], "tools");
	assert_int_equal(m.u.info.profiles[0].nblocked_imports, 2);
	assert_string_equal(m.u.info.profiles[0].blocked_imports[1], "os.path");
	assert_int_equal(m.u.info.nmounts, 2);
	for (i = 0; i < 2; i++) {
		assert_string_equal(m.u.info.mounts[i].name, mi[i].name);
		assert_string_equal(m.u.info.mounts[i].target, mi[i].target);
		assert_int_equal(m.u.info.mounts[i].package, mi[i].package);
	}
	proto_msg_free(&m);
	/* Names that break their rule are not sent. */
	blocked[1] = "os..path";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	blocked[1] = "os.path";
	mnts[1] = "Tools";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	mnts[1] = "tools";
	mi[0].name = "/srv/data";
	assert_int_equal(proto_encode_info(5, &in, &o), -EINVAL);
	mi[0].name = "data";
	in.nmounts = PROTO_INFO_MOUNTS_MAX + 1;
	assert_int_equal(proto_encode_info(5, &in, &o), -E2BIG);
	in.nmounts = 2;
	prof.nblocked_imports = PROTO_BLOCKED_IMPORTS_MAX + 1;
	assert_int_equal(proto_encode_info(5, &in, &o), -E2BIG);
}

#define T(f) cmocka_unit_test_setup_teardown(f, fd_setup, fd_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_roundtrip_hello),
		T(test_roundtrip_simple),
		T(test_roundtrip_info),
		T(test_profiles),
		T(test_mounts),
		T(test_network),
		T(test_roundtrip_run_inline),
		T(test_roundtrip_run_minimal),
		T(test_roundtrip_run_memfd),
		T(test_roundtrip_result),
		T(test_roundtrip_zeroed_result),
		T(test_roundtrip_error),
		T(test_send_recv),
		T(test_recv_lossy),
		T(test_encode_errors),
		T(test_bad_framing),
		T(test_bad_header),
		T(test_unknown_keys_ignored),
		T(test_bad_run_fields),
		T(test_bad_required_and_strings),
		T(test_bad_result),
		T(test_bad_fds),
		T(test_roundtrip_simple_new),
		T(test_roundtrip_run_session),
		T(test_roundtrip_sessions),
		T(test_roundtrip_file_ops),
		T(test_roundtrip_file_data),
		T(test_roundtrip_file_list),
		T(test_roundtrip_stream),
		T(test_encode_errors_new),
		T(test_bad_new_messages),
		T(test_bad_new_fds),
		T(test_roundtrip_processes),
		T(test_names),
		T(test_names_out_of_range),
		T(test_ps_ok),
		T(test_roundtrip_session_lease_save),
		T(test_roundtrip_info_mounts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
