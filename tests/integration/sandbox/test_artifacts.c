/*
 * test_artifacts.c: input files reach the code; the files it creates or
 * changes come back, within the artifact limits; nothing but regular files
 * inside the workspace is ever returned.
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

static void
add_file(struct airlock_run_req *req, const char *name, const char *text)
{
	assert_int_equal(airlock_run_req_add_file(req, name, text, strlen(text)), 0);
}

/* Assert artifact name exists with exactly content want. */
static void
assert_artifact(const struct airlock_result *res, const char *name, const char *want)
{
	long i = sbx_artifact_find(res, name);
	char *got;

	if (i < 0) {
		fprintf(stderr, "no artifact %s\n", name);
		sbx_dump(res);
	}
	assert_true(i >= 0);
	got = sbx_artifact(res, (size_t)i);
	assert_string_equal(got, want);
	assert_int_equal(airlock_result_artifact_size(res, (size_t)i), strlen(want));
	assert_false(airlock_result_artifact_truncated(res, (size_t)i));
	free(got);
}

/* Inputs are readable by the code and are not returned unchanged. */
static void
test_inputs_readable_not_returned(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "print(open('in.txt').read(), open('d/e/in2.txt').read())\n");
	struct airlock_result *res;
	char *out;

	add_file(req, "in.txt", "first");
	add_file(req, "d/e/in2.txt", "second");
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "first second\n");
	if (airlock_result_artifact_count(res) != 0)
		sbx_dump(res);
	assert_int_equal(airlock_result_artifact_count(res), 0);
	free(out);
	airlock_result_free(res);
}

/* The size and byte j of input file i of test_500_input_files, which the
 * code in the sandbox computes again. */
#define MANY_FILES 500
#define MANY_SIZE(i) ((i) % 50 == 7 ? 40000 + (i) : ((i)*97) % 3000)
#define MANY_BYTE(i, j) ((unsigned char)(((i)*31 + (j)) % 251))

/* 500 input files in one request (a file bundle on the wire), one of them
 * executable: each is in place with its content and mode, none comes back
 * unchanged, the one the code changed does. */
static void
test_500_input_files(void **state)
{
	static const char code[] = "import os, stat\n"
				   "bad = []\n"
				   "for i in range(500):\n"
				   "    size = 40000 + i if i % 50 == 7 else (i * 97) % 3000\n"
				   "    want = bytes((i * 31 + j) % 251 for j in range(size))\n"
				   "    p = 'd%02d/f%03d.bin' % (i % 25, i)\n"
				   "    if open(p, 'rb').read() != want or "
				   "stat.S_IMODE(os.stat(p).st_mode) != 0o644:\n"
				   "        bad.append(p)\n"
				   "n = sum(len(fs) for _, _, fs in os.walk('.'))\n"
				   "m = stat.S_IMODE(os.stat('tool.sh').st_mode)\n"
				   "out = os.popen('./tool.sh').read().strip()\n"
				   "open('d00/f000.bin', 'ab').write(b'!')\n"
				   "print(n, len(bad), bad[:3], oct(m), out)\n";
	static char data[41000];
	struct airlock_run_req *req = sbx_req("python", code);
	struct airlock_result *res;
	char name[32], *out;
	size_t i, j, size;

	for (i = 0; i < MANY_FILES; i++) {
		size = MANY_SIZE(i);
		for (j = 0; j < size; j++)
			data[j] = (char)MANY_BYTE(i, j);
		snprintf(name, sizeof(name), "d%02zu/f%03zu.bin", i % 25, i);
		assert_int_equal(airlock_run_req_add_file(req, name, data, size), 0);
	}
	assert_int_equal(airlock_run_req_add_file_mode(req, "tool.sh", "#!/bin/sh\necho tool ran\n",
						       24, 0755),
			 0);
	assert_int_equal(airlock_run_req_add_file_mode(req, "x", "", 0, 0700), -EINVAL);
	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "501 0 [] 0o755 tool ran\n");
	/* The 500 came in unchanged: only the one the code changed is back. */
	if (airlock_result_artifact_count(res) != 1)
		sbx_dump(res);
	assert_int_equal(airlock_result_artifact_count(res), 1);
	assert_string_equal(airlock_result_artifact_name(res, 0), "d00/f000.bin");
	free(out);
	airlock_result_free(res);
}

/* Created files, also in subdirectories, come back with their content;
 * a changed input comes back, an untouched one does not. */
static void
test_created_and_changed(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "echo created > out.txt\n"
						    "mkdir -p sub/deep\n"
						    "printf 'nested' > sub/deep/f.txt\n"
						    "echo more >> changed.txt\n"
						    "cat same.txt > /dev/null\n");
	struct airlock_result *res;

	add_file(req, "changed.txt", "orig\n");
	add_file(req, "same.txt", "same\n");
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	assert_artifact(res, "out.txt", "created\n");
	assert_artifact(res, "sub/deep/f.txt", "nested");
	assert_artifact(res, "changed.txt", "orig\nmore\n");
	assert_int_equal(sbx_artifact_find(res, "same.txt"), -1);
	assert_int_equal(airlock_result_artifact_count(res), 3);
	/* Sorted by name. */
	assert_string_equal(airlock_result_artifact_name(res, 0), "changed.txt");
	assert_string_equal(airlock_result_artifact_name(res, 1), "out.txt");
	assert_string_equal(airlock_result_artifact_name(res, 2), "sub/deep/f.txt");
	airlock_result_free(res);
}

/* An input rewritten with its very same bytes at once (same second) is
 * still a change and comes back. */
static void
test_input_rewritten_same_content(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "data = open('a.txt').read()\nopen('a.txt', 'w').write(data)\n");
	struct airlock_result *res;

	add_file(req, "a.txt", "abc");
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	assert_artifact(res, "a.txt", "abc");
	airlock_result_free(res);
}

/* A file the code made unreadable (mode 000) still comes back. */
static void
test_unreadable_file(void **state)
{
	struct airlock_result *res =
		sbx_run(*state, sbx_req("sh", "echo hidden > h.txt\nchmod 000 h.txt\n"));

	sbx_assert_ok(res);
	assert_artifact(res, "h.txt", "hidden\n");
	airlock_result_free(res);
}

/* artifact_bytes caps the bytes kept per file and flags it. */
static void
test_artifact_bytes_cap(void **state)
{
	struct airlock_run_req *req = sbx_req("python", "open('big', 'w').write('z' * 1000)\n"
							"open('small', 'w').write('s' * 100)\n");
	struct airlock_result *res;
	const void *d;
	size_t n, k;
	long i;

	sbx_limit(req, AIRLOCK_LIMIT_ARTIFACT_BYTES, 100);
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	i = sbx_artifact_find(res, "big");
	assert_true(i >= 0);
	assert_true(airlock_result_artifact_truncated(res, (size_t)i));
	assert_int_equal(airlock_result_artifact_size(res, (size_t)i), 1000);
	assert_int_equal(airlock_result_artifact_data(res, (size_t)i, &d, &n), 0);
	assert_int_equal(n, 100);
	for (k = 0; k < n; k++)
		assert_int_equal(((const char *)d)[k], 'z');
	i = sbx_artifact_find(res, "small");
	assert_true(i >= 0);
	assert_false(airlock_result_artifact_truncated(res, (size_t)i));
	assert_int_equal(airlock_result_artifact_data(res, (size_t)i, &d, &n), 0);
	assert_int_equal(n, 100);
	airlock_result_free(res);
}

/*
 * artifacts = 3 keeps three by the documented rule (docs/protocol.md): files
 * outside dot-directories before dot-files and caches, then the most
 * recently modified, then by name; the result lists them by name and says
 * how many were left out and their total size.
 */
static void
test_artifacts_count_cap(void **state)
{
	struct airlock_run_req *req =
		sbx_req("sh", "for f in e a d b c; do echo $f > $f; done\n"
			      "mkdir 0dir; echo z > 0dir/z\n"
			      "mkdir -p .cache/x; echo cache > .cache/x/c; echo h > .hidden\n"
			      "touch -d @1000 a; touch -d @2000 b; touch -d @3000 c\n"
			      "touch -d @4000 d; touch -d @5000 e; touch -d @1500 0dir/z\n"
			      "touch -d @9000 .hidden .cache/x/c\n");
	struct airlock_result *res;

	sbx_limit(req, AIRLOCK_LIMIT_ARTIFACTS, 3);
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	if (airlock_result_artifact_count(res) != 3)
		sbx_dump(res);
	assert_int_equal(airlock_result_artifact_count(res), 3);
	assert_string_equal(airlock_result_artifact_name(res, 0), "c");
	assert_string_equal(airlock_result_artifact_name(res, 1), "d");
	assert_string_equal(airlock_result_artifact_name(res, 2), "e");
	assert_artifact(res, "e", "e\n");
	/* a, b, 0dir/z, .hidden, .cache/x/c: 2 + 2 + 2 + 2 + 6 bytes. */
	assert_int_equal(airlock_result_artifacts_omitted(res), 5);
	assert_int_equal(airlock_result_artifacts_omitted_bytes(res), 14);
	airlock_result_free(res);
}

/* Thousands of files: the limit's worth come back, the rest are counted;
 * none left out when all fit. */
static void
test_many_files_counted(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "for i in range(3000):\n"
				  "    open('f%04d' % i, 'w').write('x' * 10)\n");
	struct airlock_result *res;

	sbx_limit(req, AIRLOCK_LIMIT_ARTIFACTS, 20);
	res = sbx_run(*state, req);
	sbx_assert_ok(res);
	assert_int_equal(airlock_result_artifact_count(res), 20);
	assert_int_equal(airlock_result_artifacts_omitted(res), 2980);
	assert_int_equal(airlock_result_artifacts_omitted_bytes(res), 29800);
	airlock_result_free(res);
	res = sbx_run(*state, sbx_req("sh", "echo 1 > one\n"));
	sbx_assert_ok(res);
	assert_int_equal(airlock_result_artifact_count(res), 1);
	assert_int_equal(airlock_result_artifacts_omitted(res), 0);
	assert_int_equal(airlock_result_artifacts_omitted_bytes(res), 0);
	airlock_result_free(res);
}

/* Caches and configuration go to HOME, outside the workspace: never
 * artifacts. */
static void
test_home_not_artifact(void **state)
{
	struct airlock_result *res = sbx_run(
		*state, sbx_req("sh", "mkdir -p ~/.cache $XDG_CACHE_HOME $XDG_CONFIG_HOME\n"
				      "echo c > $XDG_CACHE_HOME/c; echo k > $XDG_CONFIG_HOME/k\n"
				      "echo h > ~/h; echo out > out.txt; echo $HOME\n"));
	char *out = sbx_stdout(res);

	sbx_assert_ok(res);
	assert_string_equal(out, "/tmp/home\n");
	assert_int_equal(airlock_result_artifact_count(res), 1);
	assert_artifact(res, "out.txt", "out\n");
	assert_int_equal(airlock_result_artifacts_omitted(res), 0);
	free(out);
	airlock_result_free(res);
}

/*
 * Nothing but regular files inside the workspace: a symlink to /etc/passwd,
 * a symlink to a directory outside, a symlink to a workspace file, a FIFO
 * and a socket are not returned, and a hard link to a file outside the
 * workspace cannot be made. The FIFO does not hang the run.
 */
static void
test_links_and_specials(void **state)
{
	struct airlock_run_req *req =
		sbx_req("python", "import os, errno, socket\n"
				  "open('real', 'w').write('real')\n"
				  "os.symlink('/etc/passwd', 'passwd')\n"
				  "os.symlink('/etc', 'etcdir')\n"
				  "os.symlink('real', 'alias')\n"
				  "os.symlink('/run/airlock/main.py', 'code')\n"
				  "os.mkfifo('fifo')\n"
				  "s = socket.socket(socket.AF_UNIX)\n"
				  "s.bind('sock')\n"
				  "for src in ['/etc/passwd', '/run/airlock/main.py']:\n"
				  "    try:\n"
				  "        os.link(src, 'hard')\n"
				  "        print('linked', src)\n"
				  "    except OSError as e:\n"
				  "        print(errno.errorcode[e.errno])\n");
	struct airlock_result *res;
	uint64_t t0 = sbx_now_ms();
	char *out;

	res = sbx_run(*state, req);
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_true(sbx_now_ms() - t0 < 10000);
	assert_string_equal(out, "EXDEV\nEXDEV\n");
	if (airlock_result_artifact_count(res) != 1)
		sbx_dump(res);
	assert_int_equal(airlock_result_artifact_count(res), 1);
	assert_artifact(res, "real", "real");
	free(out);
	airlock_result_free(res);
}

/* Names that merely start with dots are ordinary names and come back. */
static void
test_dotted_names_returned(void **state)
{
	struct airlock_result *res =
		sbx_run(*state, sbx_req("sh", "echo 1 > ...\necho 2 > ..x\necho 3 > .hidden\n"));

	sbx_assert_ok(res);
	assert_artifact(res, "...", "1\n");
	assert_artifact(res, "..x", "2\n");
	assert_artifact(res, ".hidden", "3\n");
	assert_int_equal(airlock_result_artifact_count(res), 3);
	airlock_result_free(res);
}

/* The code file is never an artifact, whatever the runtime. */
static void
test_code_file_not_artifact(void **state)
{
	struct airlock_result *res;
	char *out;

	res = sbx_run(*state, sbx_req("python", "print(__file__)\n"));
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "/run/airlock/main.py\n");
	assert_int_equal(airlock_result_artifact_count(res), 0);
	free(out);
	airlock_result_free(res);
	res = sbx_run(*state, sbx_req("sh", "ls -A /workspace; echo \"$0\"\n"));
	out = sbx_stdout(res);
	sbx_assert_ok(res);
	assert_string_equal(out, "/run/airlock/main.sh\n");
	assert_int_equal(airlock_result_artifact_count(res), 0);
	free(out);
	airlock_result_free(res);
}

/* Files left in /tmp are not artifacts. */
static void
test_tmp_not_artifact(void **state)
{
	struct airlock_result *res = sbx_run(*state, sbx_req("sh", "echo t > /tmp/t\n"));

	sbx_assert_ok(res);
	assert_int_equal(airlock_result_artifact_count(res), 0);
	airlock_result_free(res);
}

/* Artifacts are collected also when the run ends at a limit. */
static void
test_artifacts_after_wall_limit(void **state)
{
	struct airlock_run_req *req = sbx_req("sh", "echo partial > p.txt\nsleep 10\n");
	struct airlock_result *res;

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 1000);
	res = sbx_run(*state, req);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_WALL_LIMIT);
	assert_artifact(res, "p.txt", "partial\n");
	airlock_result_free(res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs_readable_not_returned),
		cmocka_unit_test(test_created_and_changed),
		cmocka_unit_test(test_500_input_files),
		cmocka_unit_test(test_input_rewritten_same_content),
		cmocka_unit_test(test_unreadable_file),
		cmocka_unit_test(test_artifact_bytes_cap),
		cmocka_unit_test(test_artifacts_count_cap),
		cmocka_unit_test(test_many_files_counted),
		cmocka_unit_test(test_home_not_artifact),
		cmocka_unit_test(test_links_and_specials),
		cmocka_unit_test(test_dotted_names_returned),
		cmocka_unit_test(test_code_file_not_artifact),
		cmocka_unit_test(test_tmp_not_artifact),
		cmocka_unit_test(test_artifacts_after_wall_limit),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
