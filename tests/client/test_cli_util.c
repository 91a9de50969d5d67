/* test_cli_util.c: the airlock command's parsers and safe artifact writer. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/util.h"

/* A fresh temporary directory, opened; removed by teardown. */
struct tmpdir {
	char path[64];
	int fd;
};

/* Create the temporary directory of a test. */
static int
tmpdir_setup(void **state)
{
	struct tmpdir *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	/* The test's directory is "w" in a directory of its own, so that
	 * "../x" from it is ours too (not /tmp/x, which anyone may make). */
	snprintf(t->path, sizeof(t->path), "/tmp/airlock-cli-test.XXXXXX");
	if (mkdtemp(t->path) == NULL)
		return -1;
	strcat(t->path, "/w");
	if (mkdir(t->path, 0700) < 0)
		return -1;
	t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->fd < 0)
		return -1;
	*state = t;
	return 0;
}

/* Remove the temporary directory of a test, its parent and everything in
 * them. */
static int
tmpdir_teardown(void **state)
{
	struct tmpdir *t = *state;
	char cmd[128];

	close(t->fd);
	t->path[strlen(t->path) - 2] = '\0'; /* the parent, of "/w" */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->path);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

/* Sizes: plain bytes and binary suffixes; junk, zero and overflow refused. */
static void
test_parse_size(void **state)
{
	uint64_t v = 7;

	assert_int_equal(cli_parse_size("1", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cli_parse_size("64K", &v), 0);
	assert_int_equal(v, 64 * 1024);
	assert_int_equal(cli_parse_size("256m", &v), 0);
	assert_int_equal(v, 256ULL << 20);
	assert_int_equal(cli_parse_size("2GiB", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(cli_parse_size("1T", &v), 0);
	assert_int_equal(v, 1ULL << 40);
	assert_int_equal(cli_parse_size("100B", &v), 0);
	assert_int_equal(v, 100);
	v = 7;
	assert_int_equal(cli_parse_size("", &v), -EINVAL);
	assert_int_equal(cli_parse_size("K", &v), -EINVAL);
	assert_int_equal(cli_parse_size("-1", &v), -EINVAL);
	assert_int_equal(cli_parse_size("1.5M", &v), -EINVAL);
	assert_int_equal(cli_parse_size("10X", &v), -EINVAL);
	assert_int_equal(cli_parse_size("10 M", &v), -EINVAL);
	assert_int_equal(cli_parse_size("0", &v), -ERANGE);
	assert_int_equal(cli_parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(cli_parse_size("17179869184G", &v), -ERANGE);
	assert_int_equal(v, 7); /* untouched on failure */
}

/* Seconds: integers and fractions to milliseconds, sub-ms rounded up. */
static void
test_parse_seconds(void **state)
{
	uint64_t ms = 7;

	assert_int_equal(cli_parse_seconds("2", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(cli_parse_seconds("0.5", &ms), 0);
	assert_int_equal(ms, 500);
	assert_int_equal(cli_parse_seconds(".25", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(cli_parse_seconds("1.234", &ms), 0);
	assert_int_equal(ms, 1234);
	assert_int_equal(cli_parse_seconds("0.0001", &ms), 0);
	assert_int_equal(ms, 1);
	assert_int_equal(cli_parse_seconds("1.0000", &ms), 0);
	assert_int_equal(ms, 1000);
	ms = 7;
	assert_int_equal(cli_parse_seconds("0", &ms), -ERANGE);
	assert_int_equal(cli_parse_seconds("0.000", &ms), -ERANGE);
	assert_int_equal(cli_parse_seconds("", &ms), -EINVAL);
	assert_int_equal(cli_parse_seconds("-1", &ms), -EINVAL);
	assert_int_equal(cli_parse_seconds("1.", &ms), -EINVAL);
	assert_int_equal(cli_parse_seconds("1e3", &ms), -EINVAL);
	assert_int_equal(cli_parse_seconds("2s", &ms), -EINVAL);
	assert_int_equal(cli_parse_seconds("99999999999999999999", &ms), -ERANGE);
	assert_int_equal(ms, 7);
}

/* Counts: positive integers only. */
static void
test_parse_count(void **state)
{
	uint64_t v = 7;

	assert_int_equal(cli_parse_count("64", &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(cli_parse_count("0", &v), -ERANGE);
	assert_int_equal(cli_parse_count("4K", &v), -EINVAL);
	assert_int_equal(cli_parse_count("", &v), -EINVAL);
}

/* Read a file below dir into buf; returns its length or -1. */
static ssize_t
read_below(const struct tmpdir *t, const char *name, char *buf, size_t cap)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", t->path, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	n = read(fd, buf, cap);
	close(fd);
	return n;
}

/* Artifacts are written, with parents created, and never overwrite. */
static void
test_artifact_write(void **state)
{
	struct tmpdir *t = *state;
	char buf[16];

	assert_int_equal(cli_artifact_write(t->fd, "top.txt", "hello", 5, false), 0);
	assert_int_equal(read_below(t, "top.txt", buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(cli_artifact_write(t->fd, "d1/d2/deep.bin", "\0\1", 2, false), 0);
	assert_int_equal(read_below(t, "d1/d2/deep.bin", buf, sizeof(buf)), 2);
	assert_int_equal(cli_artifact_write(t->fd, "d1/other", "", 0, false), 0);
	assert_int_equal(read_below(t, "d1/other", buf, sizeof(buf)), 0);
	assert_int_equal(cli_artifact_write(t->fd, "top.txt", "again", 5, false), -EEXIST);
	/* --force: replaced, atomically, a link in its place replaced, not followed. */
	assert_int_equal(cli_artifact_write(t->fd, "top.txt", "again", 5, true), 0);
	assert_int_equal(symlinkat("/etc/passwd", t->fd, "link.txt"), 0);
	assert_int_equal(cli_artifact_write(t->fd, "link.txt", "mine", 4, true), 0);
	{
		struct stat st;
		char got[8] = "";
		int fd;

		assert_int_equal(fstatat(t->fd, "link.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
		assert_true(S_ISREG(st.st_mode));
		fd = openat(t->fd, "top.txt", O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(read(fd, got, sizeof(got)), 5);
		assert_string_equal(got, "again");
		close(fd);
	}
	/* A file where a directory is needed. */
	assert_int_equal(cli_artifact_write(t->fd, "top.txt/x", "y", 1, false), -ENOTDIR);
}

/* Unsafe names are refused and nothing is created outside the directory. */
static void
test_artifact_write_refuses_names(void **state)
{
	struct tmpdir *t = *state;
	char outside[128];

	assert_int_equal(cli_artifact_write(t->fd, "../x", "bad", 3, false), -EINVAL);
	assert_int_equal(cli_artifact_write(t->fd, "/tmp/airlock-cli-abs", "bad", 3, false),
			 -EINVAL);
	assert_int_equal(cli_artifact_write(t->fd, "a/../../b", "bad", 3, false), -EINVAL);
	assert_int_equal(access("/tmp/airlock-cli-abs", F_OK), -1);
	snprintf(outside, sizeof(outside), "%s/../x", t->path);
	assert_int_equal(access(outside, F_OK), -1);
	/* Nothing was created for the refused "a/../../b" either. */
	assert_int_equal(faccessat(t->fd, "a", F_OK, 0), -1);
}

/* A symlinked directory (or file) on the way is refused, never followed. */
static void
test_artifact_write_refuses_symlinks(void **state)
{
	struct tmpdir *t = *state;
	char target[128], link[128], victim[160];

	snprintf(target, sizeof(target), "%s.target", t->path);
	assert_int_equal(mkdir(target, 0755), 0);
	snprintf(link, sizeof(link), "%s/link", t->path);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(cli_artifact_write(t->fd, "link/evil", "bad", 3, false), -ELOOP);
	snprintf(victim, sizeof(victim), "%s/evil", target);
	assert_int_equal(access(victim, F_OK), -1);
	/* Also below a real directory, and as the last component. */
	assert_int_equal(mkdirat(t->fd, "real", 0755), 0);
	assert_int_equal(symlinkat(target, t->fd, "real/link"), 0);
	assert_int_equal(cli_artifact_write(t->fd, "real/link/evil", "bad", 3, false), -ELOOP);
	assert_int_equal(symlinkat(victim, t->fd, "file-link"), 0);
	assert_int_not_equal(cli_artifact_write(t->fd, "file-link", "bad", 3, false), 0);
	assert_int_equal(access(victim, F_OK), -1);
	rmdir(target);
}

/* UTF-8 validation: what JSON may carry as a string. */
static void
test_utf8(void **state)
{
	assert_true(cli_utf8_valid("", 0));
	assert_true(cli_utf8_valid("plain\n", 6));
	assert_true(cli_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
	assert_true(cli_utf8_valid("a\0b", 3));
	assert_false(cli_utf8_valid("\xff", 1));
	assert_false(cli_utf8_valid("\xc3", 1));	     /* truncated */
	assert_false(cli_utf8_valid("\xc0\xaf", 2));	     /* overlong */
	assert_false(cli_utf8_valid("\xe0\x80\xaf", 3));     /* overlong */
	assert_false(cli_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
	assert_false(cli_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
}

/* Base64 with padding. */
static void
test_base64(void **state)
{
	static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const out[] = {"",	      "Zg==",	  "Zm8=",    "Zm9v",
					  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	size_t i;

	for (i = 0; i < 7; i++) {
		char *s = cli_base64(in[i], strlen(in[i]));

		assert_non_null(s);
		assert_string_equal(s, out[i]);
		free(s);
	}
}

/* Durations for ps: tenths below a minute, then m:ss, then h:mm. */
static void
test_format_elapsed(void **state)
{
	char buf[32];

	assert_string_equal(cli_format_elapsed(0, buf, sizeof(buf)), "0.0s");
	assert_string_equal(cli_format_elapsed(1599, buf, sizeof(buf)), "1.5s");
	assert_string_equal(cli_format_elapsed(59999, buf, sizeof(buf)), "59.9s");
	assert_string_equal(cli_format_elapsed(65000, buf, sizeof(buf)), "1m05s");
	assert_string_equal(cli_format_elapsed(3599999, buf, sizeof(buf)), "59m59s");
	assert_string_equal(cli_format_elapsed(3600000, buf, sizeof(buf)), "1h00m");
	assert_string_equal(cli_format_elapsed(7380000, buf, sizeof(buf)), "2h03m");
	assert_string_equal(cli_format_elapsed(UINT64_MAX, buf, sizeof(buf)), "5124095576030h25m");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_parse_count),
		cmocka_unit_test_setup_teardown(test_artifact_write, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_artifact_write_refuses_names, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_artifact_write_refuses_symlinks, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_format_elapsed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
