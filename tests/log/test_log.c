/*
 * test_log.c: unit tests of common/log.c: every control character of a
 * message is escaped, so one call writes exactly one line whatever the
 * strings in it; log_escape() quotes what a caller asks and never cuts an
 * escape in half.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

static void
test_escape_controls(void **state)
{
	char buf[256];
	size_t n;

	(void)state;
	n = log_escape(buf, sizeof(buf), "a\nb\rc\td\x1b[31me\x7f", NULL);
	assert_string_equal(buf, "a\\x0ab\\x0dc\\x09d\\x1b[31me\\x7f");
	assert_int_equal(n, strlen(buf));
	/* UTF-8 and printable ASCII pass as they are; quotes only when asked. */
	log_escape(buf, sizeof(buf), "caf\xc3\xa9 \"q\" \\", NULL);
	assert_string_equal(buf, "caf\xc3\xa9 \"q\" \\");
	log_escape(buf, sizeof(buf), "say \"hi\" \\o/", "\"\\");
	assert_string_equal(buf, "say \\x22hi\\x22 \\x5co/");
}

/* A short buffer: NUL-terminated, and never ending inside an escape. */
static void
test_escape_truncation(void **state)
{
	char buf[6];

	(void)state;
	assert_int_equal(log_escape(buf, sizeof(buf), "ab\ncd", NULL), 2);
	assert_string_equal(buf, "ab");
	assert_int_equal(log_escape(buf, sizeof(buf), "abcdefgh", NULL), 5);
	assert_string_equal(buf, "abcde");
	assert_int_equal(log_escape(buf, 1, "abc", NULL), 0);
	assert_string_equal(buf, "");
}

/* What log_info() writes to stderr, captured through a pipe. */
static size_t
capture(char *out, size_t len, const char *name)
{
	int p[2], saved;
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(p[1], 2), 2);
	log_info("session file %s: not found", name);
	log_init("airlockd", LOG_LVL_INFO, true);
	log_warnx("x\ny");
	log_init("airlockd", LOG_LVL_INFO, false);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	close(p[1]);
	n = read(p[0], out, len - 1);
	close(p[0]);
	assert_true(n > 0);
	out[n] = '\0';
	return (size_t)n;
}

/* A client's string with a newline and a fake record stays on its line. */
static void
test_one_line(void **state)
{
	char out[1024];

	(void)state;
	log_init("airlockd", LOG_LVL_INFO, false);
	capture(out, sizeof(out), "x\naudit run=1 uid=0\r\x1b]0;t\a");
	assert_string_equal(out,
			    "airlockd: session file x\\x0aaudit run=1 uid=0\\x0d\\x1b]0;t\\x07: "
			    "not found\n"
			    "<4>airlockd: x\\x0ay\n");
}

/* Run f with stderr into a pipe; what it wrote, NUL-terminated. */
static void
capture_fn(char *out, size_t len, void (*f)(void))
{
	int p[2], saved;
	ssize_t n;

	/* Non-blocking: a helper that writes more than the pipe holds fails
	 * the comparison below instead of hanging the test. */
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(p[1], 2), 2);
	f();
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	close(p[1]);
	n = read(p[0], out, len - 1);
	close(p[0]);
	assert_true(n >= 0);
	out[n] = '\0';
}

/* A spin of identical warnings over 2.5 s at 1 s: the first written, the
 * rest counted, one line with its count per interval; a new message first
 * flushes the old one's count; a message never held back has no count. */
static void
repeat_sequence(void)
{
	struct log_repeat lr = LOG_REPEAT_INIT(1000);
	uint64_t t;

	log_init("airlockd", LOG_LVL_INFO, false);
	for (t = 0; t < 2500; t++)
		log_repeat_at(&lr, 5000 + t, "root spec mount 0: /x does not exist");
	log_repeat_at(&lr, 7600, "other");
	log_repeat_at(&lr, 9000, "other");
	log_repeat_at(&lr, 9001, "third");
}

static void
test_repeat_counts(void **state)
{
	char out[2048];

	(void)state;
	capture_fn(out, sizeof(out), repeat_sequence);
	assert_string_equal(out, "airlockd: root spec mount 0: /x does not exist\n"
				 "airlockd: root spec mount 0: /x does not exist (repeated 999 "
				 "times)\n"
				 "airlockd: root spec mount 0: /x does not exist (repeated 999 "
				 "times)\n"
				 "airlockd: root spec mount 0: /x does not exist (repeated 499 "
				 "times)\n"
				 "airlockd: other\n"
				 "airlockd: other\n"
				 "airlockd: third\n");
}

/* Through the real clock: a burst of 10,000 identical lines writes one. */
static void
repeat_burst(void)
{
	struct log_repeat lr = LOG_REPEAT_INIT(60000);
	int i;

	log_init("airlockd", LOG_LVL_INFO, false);
	for (i = 0; i < 10000; i++)
		log_repeat_warnx(&lr, "pool: prepare %s", "failed");
}

static void
test_repeat_burst(void **state)
{
	char out[1024];

	(void)state;
	capture_fn(out, sizeof(out), repeat_burst);
	assert_string_equal(out, "airlockd: pool: prepare failed\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_controls), cmocka_unit_test(test_escape_truncation),
		cmocka_unit_test(test_one_line),	cmocka_unit_test(test_repeat_counts),
		cmocka_unit_test(test_repeat_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
