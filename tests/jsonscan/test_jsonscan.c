/* test_jsonscan.c: the strict JSON scanner of the tool bridge (common/jsonscan.c), alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jsonscan.h"

/* A string of n open brackets then n closing ones. */
static char *
nested(size_t n)
{
	char *s = malloc(2 * n + 1);

	assert_non_null(s);
	memset(s, '[', n);
	memset(s + n, ']', n);
	s[2 * n] = '\0';
	return s;
}

/* Each row: a text and whether it is one JSON value. */
static void
test_values(void **state)
{
	static const struct {
		const char *s;
		int want;
	} rows[] = {
		{"{}", 0},
		{" {\"a\": [1, 2.5, -0, 1e10, 1E-2, 0.5e+3]}\n", 0},
		{"\"x\"", 0},
		{"true", 0},
		{"false", 0},
		{"null", 0},
		{"-12", 0},
		{"[]", 0},
		{"[[], {}, \"\", 0]", 0},
		{"\"\\u00e9\\n\\t\\\\\\/\\\"\"", 0},
		{"\"\\ud83d\\ude00\"", 0},			 /* a surrogate pair */
		{"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", 0}, /* é € 😀 */
		{"", -EBADMSG},
		{" ", -EBADMSG},
		{"{", -EBADMSG},
		{"{}}", -EBADMSG},
		{"{} {}", -EBADMSG},
		{"[1,]", -EBADMSG},
		{"{\"a\":1,}", -EBADMSG},
		{"{a:1}", -EBADMSG},
		{"{'a':1}", -EBADMSG},
		{"01", -EBADMSG},
		{"1.", -EBADMSG},
		{".5", -EBADMSG},
		{"1e", -EBADMSG},
		{"+1", -EBADMSG},
		{"-", -EBADMSG},
		{"NaN", -EBADMSG},
		{"Infinity", -EBADMSG},
		{"tru", -EBADMSG},
		{"nul", -EBADMSG},
		{"\"a", -EBADMSG},
		{"\"\\x\"", -EBADMSG},
		{"\"\\u12\"", -EBADMSG},
		{"\"\\u12g4\"", -EBADMSG},
		{"\"\\ud83d\"", -EBADMSG},	  /* a high surrogate alone */
		{"\"\\ude00\"", -EBADMSG},	  /* a low surrogate alone */
		{"\"\\ud83d\\u0041\"", -EBADMSG}, /* a high surrogate, then no low one */
		{"\"a\nb\"", -EBADMSG},		  /* a raw control character */
		{"\"\x01\"", -EBADMSG},
		{"\"\xc0\xaf\"", -EBADMSG},	    /* overlong '/' */
		{"\"\xe0\x80\xaf\"", -EBADMSG},	    /* overlong '/', three bytes */
		{"\"\xf0\x80\x80\xaf\"", -EBADMSG}, /* overlong, four bytes */
		{"\"\xed\xa0\x80\"", -EBADMSG},	    /* an encoded surrogate */
		{"\"\xf4\x90\x80\x80\"", -EBADMSG}, /* past U+10FFFF */
		{"\"\xf5\x80\x80\x80\"", -EBADMSG},
		{"\"\x80\"", -EBADMSG}, /* a continuation byte first */
		{"\"\xc3\"", -EBADMSG}, /* cut short */
		{"\"\xff\"", -EBADMSG},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int r = jsonscan_value(rows[i].s, strlen(rows[i].s));

		if (r != rows[i].want)
			fail_msg("row %zu (%s): got %d, want %d", i, rows[i].s, r, rows[i].want);
	}
	/* A NUL inside the text is not JSON. */
	assert_int_equal(jsonscan_value("\"a\0b\"", 5), -EBADMSG);
	assert_int_equal(jsonscan_value("{}\0", 3), -EBADMSG);
	assert_int_equal(jsonscan_value(NULL, 0), -EBADMSG);
	assert_int_equal(jsonscan_object("{\"a\":1}", 7), 0);
	assert_int_equal(jsonscan_object(" []", 3), -EBADMSG);
	assert_int_equal(jsonscan_object("\"{}\"", 4), -EBADMSG);
}

/* Depth: JSONSCAN_DEPTH_MAX containers pass, one more does not. */
static void
test_depth(void **state)
{
	char *ok = nested(JSONSCAN_DEPTH_MAX), *deep = nested(JSONSCAN_DEPTH_MAX + 1);
	char *huge = nested(100000);

	(void)state;
	assert_int_equal(jsonscan_value(ok, strlen(ok)), 0);
	assert_int_equal(jsonscan_value(deep, strlen(deep)), -EBADMSG);
	assert_int_equal(jsonscan_value(huge, strlen(huge)), -EBADMSG);
	free(ok);
	free(deep);
	free(huge);
}

/* Calls: exactly id, tool and args; the spans point into the text. */
static void
test_calls(void **state)
{
	static const struct {
		const char *s;
		int want;
		bool has_id;
	} rows[] = {
		{"{\"id\":1,\"tool\":\"search\",\"args\":{}}", 0, true},
		{" { \"args\" : {\"q\":[1]} , \"tool\":\"x\", \"id\" : 0 } ", 0, true},
		{"{\"id\":9007199254740991,\"tool\":\"a\",\"args\":{}}", 0, true},
		{"{\"id\":9007199254740992,\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":-1,\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":1.5,\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":1e2,\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":01,\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":\"1\",\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":1,\"tool\":\"a\"}", -EBADMSG, true},
		{"{\"id\":1,\"args\":{}}", -EBADMSG, true},
		{"{\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":1,\"tool\":\"a\",\"args\":[]}", -EBADMSG, true},
		{"{\"id\":1,\"tool\":\"a\",\"args\":{},\"x\":1}", -EBADMSG, true},
		{"{\"id\":1,\"id\":2,\"tool\":\"a\",\"args\":{}}", -EBADMSG, true},
		{"{\"id\":1,\"tool\":\"a\",\"tool\":\"b\",\"args\":{}}", -EBADMSG, true},
		{"{\"id\":1,\"tool\":\"a\\u0062\",\"args\":{}}", -EBADMSG, true},
		{"{\"i\\u0064\":1,\"tool\":\"a\",\"args\":{}}", -EBADMSG, false},
		{"{\"id\":1,\"tool\":\"a\",\"args\":{\"k\":}}", -EBADMSG, true},
		{"{\"id\":1,\"tool\":\"a\",\"args\":{}} x", -EBADMSG, true},
		{"[]", -EBADMSG, false},
		{"", -EBADMSG, false},
	};
	struct jsonscan_call c;
	const char *s = "{\"id\":42,\"tool\":\"search\",\"args\":{\"query\":\"x\"}}";
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int r;

		memset(&c, 0, sizeof(c));
		r = jsonscan_call(rows[i].s, strlen(rows[i].s), &c);
		if (r != rows[i].want || c.has_id != rows[i].has_id)
			fail_msg("row %zu (%s): got %d/%d, want %d/%d", i, rows[i].s, r, c.has_id,
				 rows[i].want, rows[i].has_id);
	}
	assert_int_equal(jsonscan_call(s, strlen(s), &c), 0);
	assert_int_equal(c.id, 42);
	assert_int_equal(c.tool_len, 6);
	assert_memory_equal(c.tool, "search", 6);
	assert_int_equal(c.args_len, strlen("{\"query\":\"x\"}"));
	assert_memory_equal(c.args, "{\"query\":\"x\"}", c.args_len);
	assert_int_equal(jsonscan_call(NULL, 0, &c), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
