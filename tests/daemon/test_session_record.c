/*
 * test_session_record.c: unit tests of daemon/frontend/session_record.c,
 * the record of a session kept across a restart: what it writes reads back
 * the same, and a record that is not exactly what the daemon writes is
 * refused (unknown, repeated or missing keys, bad numbers, names and ids,
 * an id that is not the file's name, too long, a NUL, no last newline).
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "session_record.h"

#define ID "0123456789abcdef0123456789abcdef"

static void
facts(struct session_facts *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->id, ID, sizeof(ID));
	f->uid = 1000;
	f->ngids = 2;
	f->gids[0] = 1000;
	f->gids[1] = 27;
	strcpy(f->profile, "default");
	strcpy(f->interpreter, "python");
	f->workspace_bytes = 64 << 20;
	f->idle_ms = 600000;
	f->lifetime_ms = 3600000;
	f->lease_end_ms = 1796653927461ULL;
	f->detached = true;
	f->background = true;
}

static void
test_round_trip(void **state)
{
	struct session_facts f, g;
	char buf[SESSION_RECORD_MAX], why[128];
	int n;

	(void)state;
	facts(&f);
	n = session_record_format(&f, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(session_record_parse(buf, (size_t)n, ID ".rec", &g, why, sizeof(why)), 0);
	assert_memory_equal(&f, &g, sizeof(f));
	/* No groups, no interpreter. */
	f.ngids = 0;
	f.interpreter[0] = '\0';
	n = session_record_format(&f, buf, sizeof(buf));
	assert_int_equal(session_record_parse(buf, (size_t)n, ID ".rec", &g, why, sizeof(why)), 0);
	assert_int_equal(g.ngids, 0);
	assert_string_equal(g.interpreter, "");
	/* Each flag alone: detached (client-habits) and background (bg-procs)
	 * come back as they were, so a restart keeps them. */
	f.background = false;
	n = session_record_format(&f, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\ndetached=1\nbackground=0\n"));
	assert_int_equal(session_record_parse(buf, (size_t)n, ID ".rec", &g, why, sizeof(why)), 0);
	assert_true(g.detached);
	assert_false(g.background);
	f.detached = false;
	f.background = true;
	n = session_record_format(&f, buf, sizeof(buf));
	assert_int_equal(session_record_parse(buf, (size_t)n, ID ".rec", &g, why, sizeof(why)), 0);
	assert_false(g.detached);
	assert_true(g.background);
	/* Too small a buffer. */
	assert_int_equal(session_record_format(&f, buf, 40), -ENOSPC);
}

/* The good record with line key's value replaced by value (NULL: the line
 * dropped; key not in it: the line added). */
static int
parse_with(const char *key, const char *value, const char *name, char *why)
{
	struct session_facts f, g;
	char buf[SESSION_RECORD_MAX], out[SESSION_RECORD_MAX], *line, *next;
	size_t off = 0, klen = strlen(key);
	bool found = false;

	facts(&f);
	assert_true(session_record_format(&f, buf, sizeof(buf)) > 0);
	for (line = buf; *line != '\0'; line = next) {
		next = strchr(line, '\n') + 1;
		if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
			found = true;
			if (value != NULL)
				off += (size_t)snprintf(out + off, sizeof(out) - off, "%s=%s\n",
							key, value);
			continue;
		}
		memcpy(out + off, line, (size_t)(next - line));
		off += (size_t)(next - line);
	}
	if (!found)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s=%s\n", key, value);
	return session_record_parse(out, off, name, &g, why, 128);
}

static void
test_refused(void **state)
{
	char why[128];

	(void)state;
	assert_int_equal(parse_with("uid", "1000", ID ".rec", why), 0);
	assert_int_equal(parse_with("color", "red", ID ".rec", why), -EBADMSG);
	assert_non_null(strstr(why, "line 13"));
	assert_int_equal(parse_with("uid", NULL, ID ".rec", why), -EBADMSG);
	assert_non_null(strstr(why, "missing"));
	assert_int_equal(parse_with("version", "2", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("uid", "-1", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("uid", "4294967295", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("uid", "12x", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("uid", "", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("workspace_bytes", "99999999999999999999", ID ".rec", why),
			 -EBADMSG);
	assert_int_equal(parse_with("profile", "../../etc", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("profile", "", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("interpreter", "py thon", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("id", "0123456789ABCDEF0123456789ABCDEF", ID ".rec", why),
			 -EBADMSG);
	assert_int_equal(parse_with("id", "0123", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("gids", "1,,2", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("gids", "1,", ID ".rec", why), -EBADMSG);
	/* The flags: exactly 0 or 1, and never missing. */
	assert_int_equal(parse_with("detached", "0", ID ".rec", why), 0);
	assert_int_equal(parse_with("detached", "2", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("detached", "", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("detached", "yes", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("background", "01", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("background", "true", ID ".rec", why), -EBADMSG);
	assert_int_equal(parse_with("detached", NULL, ID ".rec", why), -EBADMSG);
	assert_non_null(strstr(why, "missing"));
	assert_int_equal(parse_with("background", NULL, ID ".rec", why), -EBADMSG);
	assert_non_null(strstr(why, "missing"));
	/* Another session's name. */
	assert_int_equal(parse_with("uid", "1000", "ffffffffffffffffffffffffffffffff.rec", why),
			 -EBADMSG);
	assert_non_null(strstr(why, "file's name"));
}

static void
test_repeated_and_raw(void **state)
{
	struct session_facts f, g;
	char buf[SESSION_RECORD_MAX + 64], why[128];
	int n;

	(void)state;
	facts(&f);
	n = session_record_format(&f, buf, sizeof(buf));
	/* A key twice. */
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "uid=0\n");
	assert_int_equal(session_record_parse(buf, (size_t)n, ID ".rec", &g, why, sizeof(why)),
			 -EBADMSG);
	/* No newline at the end; a NUL inside; too long. */
	n = session_record_format(&f, buf, sizeof(buf));
	assert_int_equal(session_record_parse(buf, (size_t)n - 1, ID ".rec", &g, why, sizeof(why)),
			 -EBADMSG);
	buf[5] = '\0';
	assert_int_equal(session_record_parse(buf, (size_t)n, ID ".rec", &g, why, sizeof(why)),
			 -EBADMSG);
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(
		session_record_parse(buf, SESSION_RECORD_MAX + 1, ID ".rec", &g, why, sizeof(why)),
		-EBADMSG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_repeated_and_raw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
