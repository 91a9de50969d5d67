/* test_advisory.c: unit tests of daemon/frontend/advisory.c (the blocked_imports pre-check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advisory.h"

static const char *const blocked[] = {"subprocess", "ctypes", "os.path", "a.b"};
#define NBLOCKED (sizeof(blocked) / sizeof(*blocked))

/*
 * One row: code, and the advisories it must give, joined by '|' ("" for
 * none). Rows marked "not caught" are the documented bypasses
 * (docs/security.md): they pass because the check cannot see them, and they
 * stay here so that nobody mistakes the check for a boundary.
 */
static const struct row {
	const char *what;
	const char *code;
	const char *want;
} rows[] = {
	{"plain import", "import subprocess\n", "blocked import: subprocess (line 1)"},
	{"submodule of a blocked name", "x = 1\nimport subprocess.foo\n",
	 "blocked import: subprocess.foo (line 2)"},
	{"dotted blocked name", "import os.path\n", "blocked import: os.path (line 1)"},
	{"parent of a blocked name is not it", "import os\nimport a\n", ""},
	{"a name that only starts the same", "import subprocessing, ctypesx, a.bc\n", ""},
	{"alias and list", "import sys as s, ctypes as c, json\n",
	 "blocked import: ctypes (line 1)"},
	{"every name of a list", "import ctypes, subprocess\n",
	 "blocked import: ctypes (line 1)|blocked import: subprocess (line 1)"},
	{"from import", "\n\nfrom subprocess import run\n", "blocked import: subprocess (line 3)"},
	{"from a package import a blocked submodule", "from os import path, sep\n",
	 "blocked import: os.path (line 1)"},
	{"from a import b, parenthesised over lines", "from a import (x,\n   b as y)\n",
	 "blocked import: a.b (line 2)"},
	{"from a.b import c", "from a.b import c\n", "blocked import: a.b (line 1)"},
	{"relative import is the code's own", "from . import subprocess\nfrom .ctypes import x\n",
	 ""},
	{"__import__", "m = __import__('subprocess')\n", "blocked import: subprocess (line 1)"},
	{"importlib.import_module", "import importlib\nm = importlib.import_module(\"a.b.c\")\n",
	 "blocked import: a.b.c (line 2)"},
	{"import_module imported by name",
	 "from importlib import import_module as im\n"
	 "import_module('ctypes')\n",
	 "blocked import: ctypes (line 2)"},
	{"raw string argument", "__import__(r'ctypes')\n", "blocked import: ctypes (line 1)"},
	{"after a colon", "if True: import ctypes\n", "blocked import: ctypes (line 1)"},
	{"after a semicolon", "x = 1; import ctypes\n", "blocked import: ctypes (line 1)"},
	{"indented, in a function", "def f():\n    import subprocess\n",
	 "blocked import: subprocess (line 2)"},
	{"line continuation", "import json, \\\n    ctypes\n", "blocked import: ctypes (line 2)"},
	{"CRLF and lone CR line ends", "x = 1\r\ny = 2\rimport ctypes\r\n",
	 "blocked import: ctypes (line 3)"},
	{"no trailing newline", "import ctypes", "blocked import: ctypes (line 1)"},
	{"comment", "# import ctypes\nx = 1  # import subprocess\n", ""},
	{"string", "s = 'import ctypes'\nt = \"from subprocess import x\"\n", ""},
	{"triple-quoted string over lines",
	 "'''\nimport ctypes\n'''\ns = \"\"\"x\nimport subprocess\"\"\"\nimport a.b\n",
	 "blocked import: a.b (line 6)"},
	{"escaped quote does not end the string", "s = 'it\\'s import ctypes'\nimport ctypes\n",
	 "blocked import: ctypes (line 2)"},
	{"not a statement start", "x = y.import ctypes\nprint(import_module)\n", ""},
	{"keyword is a whole word", "important = 1\nimportctypes = 2\n", ""},
	{"inside brackets is not a statement", "f(\nimport ctypes)\n", ""},
	/* Bypasses, not caught (docs/security.md "blocked_imports"). */
	{"not caught: exec of a string", "exec('import ' + 'ctypes')\n", ""},
	{"not caught: exec of a literal", "exec('import ctypes')\n", ""},
	{"not caught: getattr on builtins", "getattr(__builtins__, '__im' + 'port__')('ctypes')\n",
	 ""},
	{"not caught: a name built at run time", "__import__('sub' + 'process')\n", ""},
	{"not caught: a variable", "n = 'ctypes'\n__import__(n)\n", ""},
	{"not caught: an escape in the literal", "__import__('\\x63types')\n", ""},
	{"not caught: implicit concatenation", "__import__('sub' 'process')\n", ""},
	{"not caught: an f-string", "__import__(f'ctypes')\n", ""},
	{"not caught: sys.modules and loaders",
	 "import sys\nm = sys.modules.get('ctypes')\nimport importlib.util as u\n", ""},
	/* Hostile input: bounded, never a wrong read. */
	{"NUL bytes are stray bytes", "x\0import ctypes\n\0import ctypes\0\n", ""},
	{"non-UTF-8 identifier is not the keyword", "\xffimport ctypes\nimport\xff ctypes\n", ""},
	{"non-ASCII after a blocked prefix is shown as ?", "import ctypes.\xc3\xa9t\xc3\xa9\n",
	 "blocked import: ctypes.??t?? (line 1)"},
	{"unterminated string", "s = 'import ctypes\nimport ctypes\n",
	 "blocked import: ctypes (line 2)"},
	{"unterminated triple string", "s = '''\nimport ctypes\n", ""},
	{"unclosed bracket hides what follows", "f(\nimport ctypes\n", ""},
	{"stray closing brackets", ")]}\nimport ctypes\n", "blocked import: ctypes (line 2)"},
	{"backslash at the very end", "import ctypes\\", "blocked import: ctypes (line 1)"},
	{"from without import", "from ctypes\n", ""},
	{"import of nothing", "import\nimport ,\nimport .\n", ""},
	{"dangling dot", "import ctypes.\n", "blocked import: ctypes (line 1)"},
};

/* The advisories of res joined by '|'. */
static void
join(const struct advisory_list *res, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < res->n; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "", res->text[i]);
}

static void
test_table(void **state)
{
	struct advisory_list res;
	char got[16 * 260];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		/* The rows with NUL bytes are given with their whole length. */
		size_t len = strlen(rows[i].code);

		if (!strncmp(rows[i].what, "NUL", 3))
			len = sizeof("x\0import ctypes\n\0import ctypes\0\n") - 1;
		advisory_scan(blocked, NBLOCKED, rows[i].code, len, &res);
		join(&res, got, sizeof(got));
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("row '%s': got \"%s\", want \"%s\"", rows[i].what, got,
				 rows[i].want);
	}
}

/* The buffer is exactly the code (a heap copy, no NUL after it): no read past it. */
static void
test_exact_buffer(void **state)
{
	static const char *const ends[] = {
		"import ctypes",   "'", "'''", "#", "\\", "__import__(", "__import__('ctypes",
		"from a import (", "rb"};
	struct advisory_list res;
	size_t i, len;
	char *p;

	(void)state;
	for (i = 0; i < sizeof(ends) / sizeof(*ends); i++) {
		len = strlen(ends[i]);
		p = malloc(len);
		assert_non_null(p);
		memcpy(p, ends[i], len);
		advisory_scan(blocked, NBLOCKED, p, len, &res);
		assert_true(res.n <= 1);
		free(p);
	}
	assert_int_equal(advisory_scan(blocked, NBLOCKED, NULL, 0, &res), 0);
	assert_int_equal(res.n, 0);
	assert_int_equal(advisory_scan(blocked, 0, "import ctypes", 13, &res), 0);
	assert_int_equal(res.n, 0);
}

/* More findings than fit: 15 listed, the 16th counts the rest. */
static void
test_many(void **state)
{
	struct advisory_list res;
	char *code = malloc(40 * 16), line[64];
	size_t i, off = 0;

	(void)state;
	assert_non_null(code);
	for (i = 0; i < 40; i++)
		off += (size_t)snprintf(code + off, 40 * 16 - off, "import ctypes\n");
	assert_int_equal(advisory_scan(blocked, NBLOCKED, code, off, &res), 40);
	assert_int_equal(res.n, PROTO_ADVISORIES_MAX);
	for (i = 0; i + 1 < PROTO_ADVISORIES_MAX; i++) {
		snprintf(line, sizeof(line), "blocked import: ctypes (line %zu)", i + 1);
		assert_string_equal(res.text[i], line);
	}
	assert_string_equal(res.text[15], "blocked import: 25 more not listed");
	/* Exactly 16 fit without a count. */
	assert_int_equal(advisory_scan(blocked, NBLOCKED, code, 16 * 14, &res), 16);
	assert_int_equal(res.n, 16);
	assert_string_equal(res.text[15], "blocked import: ctypes (line 16)");
	free(code);
}

/* A 64 KiB single line, a very long name, a long list: bounded, one line each. */
static void
test_long(void **state)
{
	size_t n = 64 * 1024, i;
	struct advisory_list res;
	char *code = malloc(n + 64);

	(void)state;
	assert_non_null(code);
	if (code == NULL) /* not reached: for gcc's -Warray-bounds under ASan */
		return;
	/* One 64 KiB line of names: "import ctypes.aaaa...": shown cut. */
	memcpy(code, "import ctypes.", 14);
	memset(code + 14, 'a', n - 14);
	assert_int_equal(advisory_scan(blocked, NBLOCKED, code, n, &res), 1);
	assert_int_equal(res.n, 1);
	assert_true(strlen(res.text[0]) <= PROTO_ADVISORY_MAX);
	assert_non_null(strstr(res.text[0], "aaa... (line 1)"));
	/* One 64 KiB line: "import a, a, a, ..., ctypes" (work linear in its length). */
	memcpy(code, "import ", 7);
	for (i = 7; i + 3 < n; i += 3)
		memcpy(code + i, "a, ", 3);
	memcpy(code + i, "ctypes", 6);
	assert_int_equal(advisory_scan(blocked, NBLOCKED, code, i + 6, &res), 1);
	assert_string_equal(res.text[0], "blocked import: ctypes (line 1)");
	/* 64 KiB of one open string, then the import on the same line: not seen. */
	code[0] = '\'';
	memset(code + 1, 'x', n - 1);
	memcpy(code + n - 14, "import ctypes\n", 14);
	assert_int_equal(advisory_scan(blocked, NBLOCKED, code, n, &res), 0);
	free(code);
}

/* Past ADVISORY_SCAN_MAX the check stops and says so in its own line. */
static void
test_scan_limit(void **state)
{
	size_t n = ADVISORY_SCAN_MAX + 32;
	struct advisory_list res;
	char *code = malloc(n);

	(void)state;
	assert_non_null(code);
	memset(code, '\n', n);
	memcpy(code, "import ctypes\n", 14);
	memcpy(code + ADVISORY_SCAN_MAX + 2, "import a.b\n", 11); /* past the limit: unseen */
	assert_int_equal(advisory_scan(blocked, NBLOCKED, code, n, &res), 1);
	assert_int_equal(res.n, 2);
	assert_string_equal(res.text[0], "blocked import: ctypes (line 1)");
	assert_string_equal(res.text[1],
			    "blocked imports: only the first 1048576 bytes of the code were read");
	free(code);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),	   cmocka_unit_test(test_exact_buffer),
		cmocka_unit_test(test_many),	   cmocka_unit_test(test_long),
		cmocka_unit_test(test_scan_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
