/* test_pypkgs.c: unit tests of daemon/frontend/pypkgs.c (which packages a python runtime sees). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "pypkgs.h"

/* A fake prefix: bin/python3 -> python3.11 and three packages in three site dirs. */
struct fake {
	char dir[64];
	char python[PATH_MAX];
};

static void
fake_mkdirs(const char *root, const char *rel)
{
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

static void
fake_touch(const char *root, const char *rel)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static int
setup(void **state)
{
	static struct fake f;
	char path[PATH_MAX];

	snprintf(f.dir, sizeof(f.dir), "/tmp/test-pypkgs-XXXXXX");
	if (mkdtemp(f.dir) == NULL)
		return -1;
	fake_mkdirs(f.dir, "bin");
	fake_touch(f.dir, "bin/python3.11");
	snprintf(path, sizeof(path), "%s/bin/python3", f.dir);
	if (symlink("python3.11", path) < 0)
		return -1;
	fake_touch(f.dir, "bin/python");
	fake_mkdirs(f.dir, "lib/python3/dist-packages/numpy");
	fake_touch(f.dir, "lib/python3/dist-packages/numpy/__init__.py");
	fake_mkdirs(f.dir, "local/lib/python3.11/dist-packages/pandas");
	fake_touch(f.dir, "local/lib/python3.11/dist-packages/pandas/__init__.py");
	fake_mkdirs(f.dir, "lib/python3.11/site-packages/scipy");
	fake_touch(f.dir, "lib/python3.11/site-packages/scipy/__init__.py");
	/* A directory without __init__.py is not a package. */
	fake_mkdirs(f.dir, "lib/python3.11/dist-packages/matplotlib");
	snprintf(f.python, sizeof(f.python), "%s/bin/python3", f.dir);
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fake *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A Python runtime (its language, as the config found it) named name with
 * argv interp, then the words of flags, then {code}. */
static void
rt_init(struct config_runtime *rt, const char *name, char *interp, char **flags)
{
	memset(rt, 0, sizeof(*rt));
	snprintf(rt->name, sizeof(rt->name), "%s", name);
	rt->language = RULES_LANG_PYTHON;
	rt->argv[rt->argc++] = interp;
	while (*flags != NULL)
		rt->argv[rt->argc++] = *flags++;
}

static size_t
scan(struct config_runtime *rt, const char **pkgs)
{
	size_t n = 99;

	assert_true(pypkgs_scan(rt, pkgs, &n));
	assert_true(n <= PYPKGS_MAX);
	return n;
}

/* With site: the packages found in the site dirs, in the fixed order. */
static void
test_site(void **state)
{
	struct fake *f = *state;
	char *flags[] = {"-I", "-B", "-Wignore::SyntaxWarning", "{code}", "-S", NULL};
	struct config_runtime rt;
	const char *pkgs[PYPKGS_MAX];

	rt_init(&rt, "python-site", f->python, flags);
	assert_int_equal(scan(&rt, pkgs), 3);
	assert_string_equal(pkgs[0], "numpy");
	assert_string_equal(pkgs[1], "pandas");
	assert_string_equal(pkgs[2], "scipy");
}

/* -S, alone or in a cluster: no site dir, so none. */
static void
test_no_site(void **state)
{
	struct fake *f = *state;
	char *flags1[] = {"-I", "-S", "-B", "{code}", NULL};
	char *flags2[] = {"-ISB", "{code}", NULL};
	struct config_runtime rt;
	const char *pkgs[PYPKGS_MAX];

	rt_init(&rt, "python", f->python, flags1);
	assert_int_equal(scan(&rt, pkgs), 0);
	rt_init(&rt, "python-x", f->python, flags2);
	assert_int_equal(scan(&rt, pkgs), 0);
}

/* An interpreter whose version is not in its name, or missing: none. */
static void
test_unknown_interpreter(void **state)
{
	struct fake *f = *state;
	char *flags[] = {"{code}", NULL};
	char path[PATH_MAX], missing[PATH_MAX];
	struct config_runtime rt;
	const char *pkgs[PYPKGS_MAX];

	snprintf(path, sizeof(path), "%s/bin/python", f->dir);
	rt_init(&rt, "python", path, flags);
	assert_int_equal(scan(&rt, pkgs), 0);
	snprintf(missing, sizeof(missing), "%s/bin/python3.99", f->dir);
	rt_init(&rt, "python", missing, flags);
	assert_int_equal(scan(&rt, pkgs), 0);
}

/* Only Python runtimes are looked at: by their language, not their name
 * (issue 32: "py312" is one, "python-sh" running a shell is not). */
static void
test_not_python(void **state)
{
	struct fake *f = *state;
	char *flags[] = {"{code}", NULL};
	struct config_runtime rt;
	const char *pkgs[PYPKGS_MAX];
	size_t n = 7;

	rt_init(&rt, "python-sh", f->python, flags);
	rt.language = RULES_LANG_SHELL;
	assert_false(pypkgs_scan(&rt, pkgs, &n));
	rt_init(&rt, "calc", f->python, flags);
	rt.language = RULES_LANG_OTHER;
	assert_false(pypkgs_scan(&rt, pkgs, &n));
	assert_int_equal(n, 7);
	rt_init(&rt, "py312", f->python, flags);
	assert_true(pypkgs_scan(&rt, pkgs, &n));
	rt_init(&rt, "exec", f->python, flags);
	rt.is_exec = true;
	assert_false(pypkgs_scan(&rt, pkgs, &n));
	n = 7;
	assert_false(pypkgs_scan(NULL, pkgs, &n));
	assert_int_equal(n, 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site),
		cmocka_unit_test(test_no_site),
		cmocka_unit_test(test_unknown_interpreter),
		cmocka_unit_test(test_not_python),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
