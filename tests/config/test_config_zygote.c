/*
 * test_config_zygote.c: the zygote keys of airlockd.conf (issue 33,
 * docs/design-bursts.md §3.6): runtime zygote (default no; only with
 * prestart = yes and a python), [daemon] zygote_forks and zygote_idle_s,
 * their defaults, values and refusals. From buffers (config_load_buffer):
 * test_config.c is at its size bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

#define PY "argv = /usr/bin/python3 {code}\ncode_name = m.py\n"

/* Load text as "t.conf": 0 or -errno, the error in err. */
static int
load(struct config *cfg, const char *text, char *err, size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	return config_load_buffer(cfg, "t.conf", text, strlen(text), err, errlen);
}

/* No by default, built in or from the file; the [daemon] keys' defaults. */
static void
test_defaults(void **state)
{
	struct config cfg;
	char err[512];

	(void)state;
	assert_int_equal(load(&cfg, "[runtime p]\n" PY, err, sizeof(err)), 0);
	assert_false(config_runtime_find(&cfg, "p")->zygote);
	assert_false(config_runtime_find(&cfg, "python")->zygote);
	assert_int_equal(cfg.zygote_forks, 1000);
	assert_int_equal(cfg.zygote_idle_s, 30);
	config_free(&cfg);
}

/* Yes where given, with prestart (its python default or given). */
static void
test_values(void **state)
{
	struct config cfg;
	char err[512];

	(void)state;
	assert_int_equal(load(&cfg,
			      "[daemon]\nzygote_forks = 7\nzygote_idle_s = 2\n"
			      "[runtime p]\n" PY "zygote = yes\n"
			      "[runtime q]\n" PY "prestart = yes\nzygote = no\n",
			      err, sizeof(err)),
			 0);
	assert_true(config_runtime_find(&cfg, "p")->zygote);
	assert_false(config_runtime_find(&cfg, "q")->zygote);
	assert_int_equal(cfg.zygote_forks, 7);
	assert_int_equal(cfg.zygote_idle_s, 2);
	config_free(&cfg);
}

/* Each refused at its line, with what is wrong. */
static void
test_refusals(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"[runtime r]\n" PY "zygote = maybe\n",
		 "t.conf:4: zygote = maybe: expected true or false"},
		{"[runtime r]\n" PY "prestart = no\nzygote = yes\n",
		 "t.conf:5: [runtime r] zygote = yes needs prestart = yes and a python"},
		{"[runtime r]\nargv = /bin/sh {code}\ncode_name = m.sh\nzygote = yes\n"
		 "prestart = yes\n",
		 "t.conf:4: [runtime r] zygote = yes needs prestart = yes and a python"},
		{"[daemon]\nzygote_forks = 0\n", "t.conf:2: zygote_forks = 0: out of range"},
		{"[daemon]\nzygote_idle_s = 86401\n",
		 "t.conf:2: zygote_idle_s = 86401: out of range"},
	};
	struct config cfg;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(load(&cfg, bad[i].text, err, sizeof(err)) < 0);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, bad[i].want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
