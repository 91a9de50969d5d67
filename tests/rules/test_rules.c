/*
 * test_rules.c: the request rules (common/rules.c), table-driven: each row
 * is an input and what the rule must say about it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rules.h"

/* A string of n copies of c (static buffer, one at a time). */
static const char *
rep(char c, size_t n)
{
	static char buf[2048];

	assert_true(n < sizeof(buf));
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* rules_env_name_check() on a whole string. */
static int
env_rule(const char *s)
{
	return rules_env_name_check(s, s != NULL ? strlen(s) : 0);
}

/* The rules that answer 0 or -errno: each row is a rule, an input and the answer. */
static void
test_checks(void **state)
{
	static const struct {
		int (*rule)(const char *);
		const char *s;
		int want;
	} rows[] = {
		{env_rule, "A", 0},
		{env_rule, "_", 0},
		{env_rule, "a_b9", 0},
		{env_rule, "X1", 0},
		{env_rule, "1X", -EINVAL},
		{env_rule, "9", -EINVAL},
		{env_rule, "", -EINVAL},
		{env_rule, NULL, -EINVAL},
		{env_rule, "A=B", -EINVAL},
		{env_rule, "A-B", -EINVAL},
		{env_rule, "A B", -EINVAL},
		{env_rule, "A.B", -EINVAL},
		{env_rule, "\xc3\xa9", -EINVAL},
		{rules_workspace_name_check, "a", 0},
		{rules_workspace_name_check, "a/b/c.txt", 0},
		{rules_workspace_name_check, "..a/b..", 0},
		{rules_workspace_name_check, ".hidden", 0},
		{rules_workspace_name_check, "a/...", 0},
		{rules_workspace_name_check, "", -EINVAL},
		{rules_workspace_name_check, NULL, -EINVAL},
		{rules_workspace_name_check, "/abs", -EINVAL},
		{rules_workspace_name_check, "../x", -EINVAL},
		{rules_workspace_name_check, "..", -EINVAL},
		{rules_workspace_name_check, ".", -EINVAL},
		{rules_workspace_name_check, "a/../../b", -EINVAL},
		{rules_workspace_name_check, "a/..", -EINVAL},
		{rules_workspace_name_check, "a/.", -EINVAL},
		{rules_workspace_name_check, "a//b", -EINVAL},
		{rules_workspace_name_check, "a/", -EINVAL},
		{rules_workspace_name_check, "./a", -EINVAL},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(rows[i].rule(rows[i].s), rows[i].want);
	assert_int_equal(env_rule(rep('A', PROTO_ENV_KEY_MAX)), 0);
	assert_int_equal(env_rule(rep('A', PROTO_ENV_KEY_MAX + 1)), -E2BIG);
	/* A bad character is -EINVAL even in a long name. */
	assert_int_equal(env_rule(rep('1', PROTO_ENV_KEY_MAX + 1)), -EINVAL);
	/* Only len bytes count: "AB=" cut to 2 is "AB". */
	assert_int_equal(rules_env_name_check("AB=", 2), 0);
	assert_int_equal(rules_workspace_name_check(rep('a', PROTO_NAME_MAX)), 0);
	assert_int_equal(rules_workspace_name_check(rep('a', PROTO_NAME_MAX + 1)), -EINVAL);
}

/* The rules that answer yes or no: each row is a rule, an input and the answer. */
static void
test_predicates(void **state)
{
	static const struct {
		bool (*rule)(const char *);
		const char *s;
		bool want;
	} rows[] = {
		{rules_session_id_str_valid, "0123456789abcdef0123456789abcdef", true},
		{rules_session_id_str_valid, "ffffffffffffffffffffffffffffffff", true},
		{rules_session_id_str_valid, "0123456789ABCDEF0123456789abcdef", false},
		{rules_session_id_str_valid, "0123456789abcdef0123456789abcde", false},
		{rules_session_id_str_valid, "0123456789abcdef0123456789abcdef0", false},
		{rules_session_id_str_valid, "0123456789abcdef0123456789abcdeg", false},
		{rules_session_id_str_valid, "0123456789abcdef 123456789abcdef", false},
		{rules_session_id_str_valid, "", false},
		{rules_session_id_str_valid, NULL, false},
		{rules_runtime_name_valid, "python", true},
		{rules_runtime_name_valid, "python-site", true},
		{rules_runtime_name_valid, "node_18", true},
		{rules_runtime_name_valid, "Python", false},
		{rules_runtime_name_valid, "", false},
		{rules_runtime_name_valid, NULL, false},
		{rules_runtime_name_valid, "a b", false},
		{rules_runtime_name_valid, "a/b", false},
		{rules_runtime_name_valid, "a.b", false},
		{rules_profile_name_valid, "minimal", true},
		{rules_profile_name_valid, "data-1_x", true},
		{rules_profile_name_valid, "Minimal", false},
		{rules_profile_name_valid, "", false},
		{rules_profile_name_valid, NULL, false},
		{rules_profile_name_valid, "a b", false},
		{rules_profile_name_valid, "a/b", false},
		{rules_profile_name_valid, "a\xc3\xa9", false},
		{rules_code_name_valid, "main.py", true},
		{rules_code_name_valid, "..x", true},
		{rules_code_name_valid, "", false},
		{rules_code_name_valid, NULL, false},
		{rules_code_name_valid, ".", false},
		{rules_code_name_valid, "..", false},
		{rules_code_name_valid, "a/b", false},
		{rules_code_name_valid, "a b", false},
		{rules_code_name_valid, "a\tb", false},
		{rules_code_name_valid, "\xc3\xa9", false},
		{rules_code_name_valid, "a\x7f", false},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(rows[i].rule(rows[i].s), rows[i].want);
		/* The counted form of the session id rule says the same. */
		if (rows[i].rule == rules_session_id_str_valid && rows[i].s != NULL)
			assert_int_equal(rules_session_id_valid(rows[i].s, strlen(rows[i].s)),
					 rows[i].want);
		if (rows[i].rule == rules_profile_name_valid && rows[i].s != NULL)
			assert_int_equal(rules_profile_name_check(rows[i].s, strlen(rows[i].s)),
					 rows[i].want);
	}
	assert_true(rules_runtime_name_valid(rep('a', PROTO_RUNTIME_MAX)));
	assert_false(rules_runtime_name_valid(rep('a', PROTO_RUNTIME_MAX + 1)));
	assert_true(rules_profile_name_valid(rep('a', PROTO_PROFILE_MAX)));
	assert_false(rules_profile_name_valid(rep('a', PROTO_PROFILE_MAX + 1)));
	/* Counted: the first bytes of a longer buffer; NUL is not a name byte. */
	assert_true(rules_profile_name_check("minimalXX", 7));
	assert_false(rules_profile_name_check("min\0mal", 7));
	assert_false(rules_profile_name_check(NULL, 3));
	assert_true(rules_code_name_valid(rep('a', PROTO_NAME_MAX)));
	assert_false(rules_code_name_valid(rep('a', PROTO_NAME_MAX + 1)));
	/* Counted: the first 32 bytes of a longer buffer are an id. */
	assert_true(rules_session_id_valid("0123456789abcdef0123456789abcdefXX", 32));
	assert_false(rules_session_id_valid(NULL, PROTO_SESSION_ID_LEN));
}

static void
test_limits_within(void **state)
{
	struct proto_limits ceil, asked;
	enum proto_limit bad = PROTO_LIMIT_COUNT_;
	size_t i;

	(void)state;
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		ceil.v[i] = 100 + i;
		asked.v[i] = 0;
	}
	assert_true(rules_limits_within(&asked, &ceil, &bad));
	assert_int_equal(bad, PROTO_LIMIT_COUNT_); /* untouched on success */
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		asked.v[i] = ceil.v[i];
	assert_true(rules_limits_within(&asked, &ceil, NULL));
	/* Each limit alone one above its ceiling is named. */
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		asked.v[i] = ceil.v[i] + 1;
		assert_false(rules_limits_within(&asked, &ceil, &bad));
		assert_int_equal(bad, i);
		assert_false(rules_limits_within(&asked, &ceil, NULL));
		asked.v[i] = ceil.v[i];
	}
}

/* A program's language by its base name (config: a runtime's, absent language =). */
static void
test_program_language(void **state)
{
	enum rules_language l = RULES_LANG_OTHER;

	(void)state;
	assert_int_equal(rules_program_language("/usr/bin/python3"), RULES_LANG_PYTHON);
	assert_int_equal(rules_program_language("/opt/venv/bin/python"), RULES_LANG_PYTHON);
	assert_int_equal(rules_program_language("python3.12"), RULES_LANG_PYTHON);
	assert_int_equal(rules_program_language("/usr/bin/python3-config"), RULES_LANG_OTHER);
	assert_int_equal(rules_program_language("/usr/bin/pythonista"), RULES_LANG_OTHER);
	assert_int_equal(rules_program_language("/bin/sh"), RULES_LANG_SHELL);
	assert_int_equal(rules_program_language("/usr/bin/bash"), RULES_LANG_SHELL);
	assert_int_equal(rules_program_language("/usr/bin/dash"), RULES_LANG_SHELL);
	assert_int_equal(rules_program_language("/usr/bin/shellcheck"), RULES_LANG_OTHER);
	assert_int_equal(rules_program_language("/usr/bin/node"), RULES_LANG_OTHER);
	assert_int_equal(rules_program_language("/opt/python3.12/bin/pypy3"), RULES_LANG_OTHER);
	assert_int_equal(rules_program_language("/usr/bin/"), RULES_LANG_OTHER);
	assert_int_equal(rules_program_language(NULL), RULES_LANG_OTHER);
	assert_string_equal(rules_language_name(RULES_LANG_PYTHON), "python");
	assert_int_equal(rules_language_from_name("shell", &l), 0);
	assert_int_equal(l, RULES_LANG_SHELL);
	assert_int_equal(rules_language_from_name("Python", &l), -EINVAL);
	assert_int_equal(rules_language_from_name(NULL, &l), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_predicates),
		cmocka_unit_test(test_limits_within),
		cmocka_unit_test(test_program_language),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
