/*
 * pypkgs.c: which of numpy, pandas, matplotlib and scipy a python runtime
 * would import, for info_ok.runtime_packages.
 *
 * Nothing is run: with -S in the runtime's flags the interpreter adds no
 * site directory, and these packages are never in the standard library, so
 * it sees none; otherwise a package counts when its directory with an
 * __init__.py is in one of the site directories CPython (and Debian's
 * site.py) adds for the interpreter's prefix and version. The sandbox binds
 * /usr read-only, so what the daemon sees there the code sees.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pypkgs.h"

static const char *const pypkgs_names[PYPKGS_MAX] = {"numpy", "pandas", "matplotlib", "scipy"};

/* Does a flag word such as "-I", "-IS" or "-B" hold -S? */
static bool
pypkgs_flag_no_site(const char *arg)
{
	const char *p;

	if (arg[0] != '-' || arg[1] == '-' || arg[1] == '\0')
		return false;
	for (p = arg + 1; *p != '\0'; p++) {
		if (*p == 'S')
			return true;
		/* These take an argument: the rest of the word is it. */
		if (strchr("cmWX", *p) != NULL)
			return false;
	}
	return false;
}

bool
pypkgs_scan(const struct config_runtime *rt, const char *ret_pkgs[PYPKGS_MAX], size_t *ret_n)
{
	char real[PATH_MAX], prefix[PATH_MAX], dirs[4][PATH_MAX + 64], path[PATH_MAX + 128];
	const char *base;
	unsigned maj, min;
	size_t i, k, n = 0, ndirs;
	char *slash;

	/* A Python by what it is (config.h, language), whatever its name. */
	if (rt == NULL || rt->is_exec || rt->language != RULES_LANG_PYTHON || rt->argc == 0)
		return false;
	for (i = 1; i < rt->argc && strcmp(rt->argv[i], "{code}") != 0; i++)
		if (pypkgs_flag_no_site(rt->argv[i]))
			goto out;
	if (realpath(rt->argv[0], real) == NULL)
		goto out;
	base = strrchr(real, '/');
	base = base != NULL ? base + 1 : real;
	if (sscanf(base, "python%u.%u", &maj, &min) != 2)
		goto out;
	/* prefix: /usr of /usr/bin/python3.11 */
	snprintf(prefix, sizeof(prefix), "%s", real);
	for (k = 0; k < 2; k++) {
		slash = strrchr(prefix, '/');
		if (slash == NULL)
			goto out;
		*slash = '\0';
	}
	ndirs = 0;
	snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s/local/lib/python%u.%u/dist-packages", prefix,
		 maj, min);
	snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s/lib/python%u/dist-packages", prefix, maj);
	snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s/lib/python%u.%u/dist-packages", prefix, maj,
		 min);
	snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s/lib/python%u.%u/site-packages", prefix, maj,
		 min);
	for (i = 0; i < PYPKGS_MAX; i++)
		for (k = 0; k < ndirs; k++) {
			snprintf(path, sizeof(path), "%s/%s/__init__.py", dirs[k], pypkgs_names[i]);
			if (access(path, R_OK) == 0) {
				ret_pkgs[n++] = pypkgs_names[i];
				break;
			}
		}
out:
	*ret_n = n;
	return true;
}
