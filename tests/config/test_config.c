/* test_config.c: unit tests of daemon/config/ (defaults, every key, errors, file checks).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
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

#include "config.h"
#include "cgroup.h"
#include "config_parse.h" /* config_keys[]: the table test */

#define ERRLEN 512

/* A private temporary directory per test, removed afterwards. */
struct fixture {
	char dir[64];
	char path[128];
	struct config cfg;
	char err[ERRLEN];
};

/* Create the temporary directory of one test. */
static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	strcpy(f->dir, "/tmp/airlock-test-config-XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/airlockd.conf", f->dir);
	*state = f;
	return 0;
}

/* Free the config and remove the temporary directory. */
static int
teardown(void **state)
{
	struct fixture *f = *state;
	char link[160];

	config_free(&f->cfg);
	unlink(f->path);
	snprintf(link, sizeof(link), "%s/link.conf", f->dir);
	unlink(link);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Write text to the fixture's file with a given mode (owner root: tests run as root). */
static void
write_file(struct fixture *f, const char *text, mode_t mode)
{
	FILE *fp;

	unlink(f->path);
	fp = fopen(f->path, "w");
	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(f->path, mode), 0);
}

/* Write text and load it; returns config_load()'s result. */
static int
load_text(struct fixture *f, const char *text)
{
	write_file(f, text, 0644);
	return config_load(&f->cfg, f->path, true, f->err, sizeof(f->err));
}

/* Assert that the error starts with "path:line: " and contains what. */
static void
assert_error_at(struct fixture *f, unsigned line, const char *what)
{
	char prefix[200];

	snprintf(prefix, sizeof(prefix), "%s:%u: ", f->path, line);
	if (strncmp(f->err, prefix, strlen(prefix)) != 0 || strstr(f->err, what) == NULL)
		fail_msg("error '%s' is not '%s...%s'", f->err, prefix, what);
}

/* Defaults with no file at all, and with a missing optional file. */
static void
test_defaults(void **state)
{
	struct fixture *f = *state;
	const struct config_runtime *rt;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	assert_int_equal(config_load(&f->cfg, NULL, false, f->err, sizeof(f->err)), 0);
	assert_string_equal(f->cfg.socket_path, "/run/airlock/airlock.sock");
	assert_int_equal(f->cfg.socket_uid, 0);
	assert_int_equal(f->cfg.socket_gid, getgrnam("airlock") ? getgrnam("airlock")->gr_gid : 0);
	assert_int_equal(f->cfg.socket_mode, 0660);
	if (getpwnam("airlock") != NULL)
		assert_string_equal(f->cfg.service_user, "airlock");
	else
		assert_string_equal(f->cfg.service_user, "nobody");
	assert_int_equal(f->cfg.service_uid, getpwnam(f->cfg.service_user)->pw_uid);
	assert_int_equal(f->cfg.service_gid, getpwnam(f->cfg.service_user)->pw_gid);
	assert_int_equal(f->cfg.max_connections_per_uid, 16);
	/* One uid may not hold every slot by default (issue 13). */
	assert_int_equal(f->cfg.max_runs, 2 * ncpu);
	assert_int_equal(f->cfg.max_runs_per_uid, ncpu);
	assert_true(f->cfg.max_runs_per_uid < f->cfg.max_runs);
	/* Live interpreters: twice the run slots, half of them per uid (issue 28). */
	assert_int_equal(f->cfg.max_interpreters, 4 * ncpu);
	assert_int_equal(f->cfg.max_interpreters_per_uid, 2 * ncpu);
	assert_int_equal(f->cfg.max_queued_bytes, 8 << 20);
	assert_int_equal(f->cfg.max_queued_fds, 128);
	assert_int_equal(f->cfg.max_fds_per_uid, 256);
	assert_int_equal(f->cfg.max_bytes_per_uid, 1ULL << 30);
	assert_int_equal(f->cfg.nallow_uids, 0);
	assert_int_equal(f->cfg.nallow_gids, 0);
	assert_false(f->cfg.allow_all);
	assert_int_equal(f->cfg.uid_base, 600000);
	assert_int_equal(f->cfg.uid_count, 2048);
	assert_string_equal(f->cfg.hostname, "airlock");
	/* Pre-started interpreters: two per runtime that asks; the pythons ask. */
	assert_int_equal(f->cfg.prestarted_interpreters, 2);
	for (size_t k = 0; k < f->cfg.nruntimes; k++)
		assert_int_equal(f->cfg.runtimes[k].prestart,
				 !strcmp(f->cfg.runtimes[k].name, "python") ||
					 !strcmp(f->cfg.runtimes[k].name, "python-site"));

	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_WALL_MS], 10000);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_WALL_MS], 300000);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_CPU_MS], 5000);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_CPU_MS], 60000);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_MEMORY_BYTES], 256ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 4ULL << 30);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_PROCESSES], 64);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_PROCESSES], 1024);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_OPEN_FILES], 256);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_OPEN_FILES], 4096);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_FILE_SIZE_BYTES], 64ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_FILE_SIZE_BYTES], 1ULL << 30);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_OUTPUT_BYTES], 1ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_OUTPUT_BYTES], 64ULL << 20);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_WORKSPACE_BYTES], 64ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_WORKSPACE_BYTES], 1ULL << 30);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_TMP_BYTES], 64ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_TMP_BYTES], 1ULL << 30);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_ARTIFACTS], 32);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_ARTIFACTS], 60);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_ARTIFACT_BYTES], 1ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_ARTIFACT_BYTES], 64ULL << 20);

	rt = config_runtime_find(&f->cfg, "python");
	assert_non_null(rt);
	assert_int_equal(rt->argc, 5);
	assert_string_equal(rt->argv[0], "/usr/bin/python3");
	assert_string_equal(rt->argv[1], "-I");
	assert_string_equal(rt->argv[2], "-S");
	assert_string_equal(rt->argv[3], "-B");
	assert_string_equal(rt->argv[4], "{code}");
	assert_null(rt->argv[5]);
	assert_string_equal(rt->code_name, "main.py");
	assert_false(rt->is_exec);
	rt = config_runtime_find(&f->cfg, "python-site");
	assert_non_null(rt);
	assert_int_equal(rt->argc, 4);
	assert_string_equal(rt->argv[1], "-I");
	assert_string_equal(rt->argv[2], "-B");
	rt = config_runtime_find(&f->cfg, "sh");
	assert_non_null(rt);
	assert_string_equal(rt->argv[0], "/bin/sh");
	assert_string_equal(rt->code_name, "main.sh");
	rt = config_runtime_find(&f->cfg, "bash");
	assert_non_null(rt);
	assert_string_equal(rt->argv[0], "/bin/bash");
	rt = config_runtime_find(&f->cfg, "node");
	if (access("/usr/bin/node", X_OK) == 0) {
		assert_non_null(rt);
		assert_string_equal(rt->argv[0], "/usr/bin/node");
		assert_string_equal(rt->code_name, "main.js");
	} else {
		assert_null(rt);
	}
	rt = config_runtime_find(&f->cfg, "exec");
	assert_non_null(rt);
	assert_true(rt->is_exec);
	assert_int_equal(rt->argc, 0);
	assert_null(rt->argv[0]);
	assert_null(config_runtime_find(&f->cfg, "ruby"));

	/* A missing file is fine unless it must exist. */
	config_free(&f->cfg);
	assert_int_equal(config_load(&f->cfg, f->path, false, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->cfg.uid_base, 600000);
	config_free(&f->cfg);
	assert_int_equal(config_load(&f->cfg, f->path, true, f->err, sizeof(f->err)), -ENOENT);
	assert_non_null(strstr(f->err, f->path));
	assert_null(f->cfg.socket_path);
}

/* The defaults test_defaults() does not name, as the key table gives them. */
static void
test_table_defaults(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(config_load(&f->cfg, NULL, false, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->cfg.prepared_sandboxes, 2);
	assert_int_equal(f->cfg.max_queued, 64);
	assert_int_equal(f->cfg.max_queued_per_uid, 16);
	assert_int_equal(f->cfg.stop_grace_ms, 10000);
	assert_int_equal(f->cfg.resource_control, CGROUP_AUTO);
	assert_int_equal(f->cfg.cpu_max_percent, 0);
	assert_int_equal(f->cfg.sessions_per_uid, 4);
	assert_int_equal(f->cfg.session_idle_ms, 600000);
	assert_int_equal(f->cfg.session_idle_ms_max, 3600000);
	assert_int_equal(f->cfg.session_lifetime_ms, 3600000);
	assert_int_equal(f->cfg.session_lifetime_ms_max, 86400000);
	assert_int_equal(f->cfg.session_orphan_grace_ms, 60000);
	assert_int_equal(f->cfg.session_file_max, 64ULL << 20);
	assert_int_equal(f->cfg.egress_port, EGRESS_DEFAULT_PORT);
	assert_int_equal(f->cfg.egress_connect_ms, 10000);
	assert_int_equal(f->cfg.egress_idle_ms, 120000);
	assert_int_equal(f->cfg.egress_connections_max, 0);
	assert_int_equal(f->cfg.negress_resolvers, 0);
	config_free(&f->cfg);
}

/* The config up to its runtimes, its strings compared and then left out. */
static void
assert_config_same(struct config *a, struct config *b, const char *what)
{
	if (strcmp(a->socket_path, b->socket_path) != 0 || strcmp(a->hostname, b->hostname) != 0 ||
	    strcmp(a->service_user, b->service_user) != 0)
		fail_msg("%s: a string differs", what);
	free(a->socket_path);
	free(a->hostname);
	free(a->service_user);
	a->socket_path = b->socket_path;
	a->hostname = b->hostname;
	a->service_user = b->service_user;
	if (memcmp(a, b, offsetof(struct config, runtimes)) != 0)
		fail_msg("%s: the config differs from the defaults", what);
	a->socket_path = a->hostname = a->service_user = NULL;
}

/*
 * Every row of the key table with a default: "name = default" in its
 * section, written as the row (and the man page) writes it, gives the
 * config of no file at all. Each row once in its section.
 */
static void
test_table_rows(void **state)
{
	struct fixture *f = *state;
	static const char *const sections[] = {
		[CONFIG_SEC_DAEMON] = "daemon",	  [CONFIG_SEC_ACCESS] = "access",
		[CONFIG_SEC_SANDBOX] = "sandbox", [CONFIG_SEC_SESSIONS] = "sessions",
		[CONFIG_SEC_EGRESS] = "egress",
	};
	struct config def;
	char text[256], err[512];
	size_t i, j;

	assert_int_equal(config_load(&def, NULL, false, err, sizeof(err)), 0);
	for (i = 0; i < config_nkeys; i++) {
		const struct config_key *k = &config_keys[i];

		for (j = 0; j < i; j++)
			if (config_keys[j].section == k->section &&
			    !strcmp(config_keys[j].name, k->name))
				fail_msg("key %s: two rows", k->name);
		if (k->def == NULL || k->section >= sizeof(sections) / sizeof(sections[0]) ||
		    sections[k->section] == NULL)
			continue;
		snprintf(text, sizeof(text), "[%s]\n%s = %s\n", sections[k->section], k->name,
			 k->def);
		if (load_text(f, text) != 0)
			fail_msg("%s: %s", text, f->err);
		assert_config_same(&f->cfg, &def, k->name);
		config_free(&f->cfg);
	}
	config_free(&def);
}

/* Every key of every section. */
static void
test_every_key(void **state)
{
	struct fixture *f = *state;
	const struct config_runtime *rt;
	static const char text[] = "# a comment\n"
				   "[daemon]\n"
				   "socket = /run/test/a.sock\n"
				   "socket_user = daemon\n"
				   "socket_group = nogroup\n"
				   "socket_mode = 0600\n"
				   "user = nobody\n"
				   "max_connections_per_uid = 3\n"
				   "max_runs_per_uid = 2\n"
				   "max_runs = 5\n"
				   "max_queued_bytes = 2M\n"
				   "prestarted_interpreters = 5\n"
				   "\n"
				   "[access]\n"
				   "allow_users = root, daemon,1234\n"
				   "allow_groups = nogroup,  77\n"
				   "allow_all = yes\n"
				   "[sandbox]\n"
				   "uid_base = 100000\n"
				   "uid_count = 64\n"
				   "hostname = box.example\n"
				   "[limits]\n"
				   "wall_ms = 2000\n"
				   "wall_ms_max = 3000\n"
				   "cpu_ms = 1000\n"
				   "cpu_ms_max = 1000\n"
				   "memory_bytes = 128M\n"
				   "memory_bytes_max = 8G\n"
				   "processes = 10\n"
				   "processes_max = 20\n"
				   "open_files = 30\n"
				   "open_files_max = 40\n"
				   "file_size_bytes = 1K\n"
				   "file_size_bytes_max = 2K\n"
				   "output_bytes = 4096\n"
				   "output_bytes_max = 8K\n"
				   "workspace_bytes = 1G\n"
				   "workspace_bytes_max = 2G\n"
				   "tmp_bytes = 3M\n"
				   "tmp_bytes_max = 4M\n"
				   "artifacts = 7\n"
				   "artifacts_max = 9\n"
				   "artifact_bytes = 5K\n"
				   "artifact_bytes_max = 6K\n"
				   "[runtime python]\n"
				   "argv = /opt/py/bin/python3   -I\t{code} --flag\n"
				   "code_name = prog.py\n"
				   "mounts = py\n"
				   "env = A=1 LANG=C.UTF-8\n"
				   "cwd = /workspace/src\n"
				   "prestart = yes\n"
				   "[mount py]\n"
				   "source = /usr/share\n"
				   "target = /opt/py\n"
				   "package = true\n"
				   "[runtime ruby]\n"
				   "  code_name = main.rb ; indented, with a comment\n"
				   "  argv = /usr/bin/ruby {code}\n";

	assert_int_equal(load_text(f, text), 0);
	assert_string_equal(f->err, "");
	assert_string_equal(f->cfg.socket_path, "/run/test/a.sock");
	assert_int_equal(f->cfg.socket_uid, 1);
	assert_int_equal(f->cfg.socket_gid, 65534);
	assert_int_equal(f->cfg.socket_mode, 0600);
	assert_string_equal(f->cfg.service_user, "nobody");
	assert_int_equal(f->cfg.service_uid, 65534);
	assert_int_equal(f->cfg.service_gid, 65534);
	assert_int_equal(f->cfg.max_connections_per_uid, 3);
	assert_int_equal(f->cfg.max_runs_per_uid, 2);
	assert_int_equal(f->cfg.max_runs, 5);
	assert_int_equal(f->cfg.max_queued_bytes, 2 << 20);
	assert_int_equal(f->cfg.nallow_uids, 3);
	assert_int_equal(f->cfg.allow_uids[0], 0);
	assert_int_equal(f->cfg.allow_uids[1], 1);
	assert_int_equal(f->cfg.allow_uids[2], 1234);
	assert_int_equal(f->cfg.nallow_gids, 2);
	assert_int_equal(f->cfg.allow_gids[0], 65534);
	assert_int_equal(f->cfg.allow_gids[1], 77);
	assert_true(f->cfg.allow_all);
	assert_int_equal(f->cfg.uid_base, 100000);
	assert_int_equal(f->cfg.uid_count, 64);
	assert_string_equal(f->cfg.hostname, "box.example");

	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_WALL_MS], 2000);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_WALL_MS], 3000);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_CPU_MS], 1000);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_CPU_MS], 1000);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_MEMORY_BYTES], 128ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 8ULL << 30);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_PROCESSES], 10);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_PROCESSES], 20);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_OPEN_FILES], 30);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_OPEN_FILES], 40);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_FILE_SIZE_BYTES], 1024);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_FILE_SIZE_BYTES], 2048);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_OUTPUT_BYTES], 4096);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_OUTPUT_BYTES], 8192);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_WORKSPACE_BYTES], 1ULL << 30);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_WORKSPACE_BYTES], 2ULL << 30);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_TMP_BYTES], 3ULL << 20);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_TMP_BYTES], 4ULL << 20);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_ARTIFACTS], 7);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_ARTIFACTS], 9);
	assert_int_equal(f->cfg.defaults.v[PROTO_LIMIT_ARTIFACT_BYTES], 5 << 10);
	assert_int_equal(f->cfg.ceilings.v[PROTO_LIMIT_ARTIFACT_BYTES], 6 << 10);

	/* [runtime python] replaces the built-in entirely. */
	rt = config_runtime_find(&f->cfg, "python");
	assert_non_null(rt);
	assert_int_equal(rt->argc, 4);
	assert_string_equal(rt->argv[0], "/opt/py/bin/python3");
	assert_int_equal(rt->nenv, 2);
	assert_string_equal(rt->env[0], "A=1");
	assert_string_equal(rt->env[1], "LANG=C.UTF-8");
	assert_null(rt->env[2]);
	assert_string_equal(rt->cwd, "/workspace/src");
	assert_true(rt->prestart);
	assert_int_equal(f->cfg.prestarted_interpreters, 5);
	assert_int_equal(rt->mounts, 1U);
	assert_string_equal(rt->argv[1], "-I");
	assert_string_equal(rt->argv[2], "{code}");
	assert_string_equal(rt->argv[3], "--flag");
	assert_null(rt->argv[4]);
	assert_string_equal(rt->code_name, "prog.py");
	assert_false(rt->is_exec);
	/* Indented lines are keys, not continuations; inline comments are dropped. */
	rt = config_runtime_find(&f->cfg, "ruby");
	assert_non_null(rt);
	assert_int_equal(rt->argc, 2);
	assert_string_equal(rt->argv[0], "/usr/bin/ruby");
	assert_string_equal(rt->code_name, "main.rb");
	assert_non_null(config_runtime_find(&f->cfg, "sh"));
	assert_true(config_runtime_find(&f->cfg, "exec")->is_exec);
}

/* One bad file: its text, the line the error must name, a piece of the reason. */
struct bad_case {
	const char *text;
	unsigned line;
	const char *reason;
};

static const struct bad_case bad_cases[] = {
	/* structure */
	{"[daemon]\n\n[nope]\n", 3, "unknown section [nope]"},
	{"[daemon]\nmax_runs = 4\n[runtimes python]\n", 3, "unknown section"},
	{"max_runs = 4\n", 1, "outside of any section"},
	{"[daemon]\nbogus = 1\n", 2, "unknown key 'bogus' in [daemon]"},
	{"[access]\nallow = x\n", 2, "unknown key 'allow' in [access]"},
	{"[sandbox]\nuid = 1\n", 2, "unknown key 'uid' in [sandbox]"},
	{"[limits]\nwall = 1\n", 2, "unknown key 'wall' in [limits]"},
	{"[limits]\nwall_ms_min = 1\n", 2, "unknown key 'wall_ms_min'"},
	{"[daemon]\nmax_runs = 4\n\nmax_runs = 5\n", 4, "duplicate key 'max_runs' in [daemon]"},
	{"[daemon]\nmax_runs = 4\n[access]\n[daemon]\nmax_runs = 5\n", 5, "duplicate key"},
	{"[daemon]\nmax_runs\n", 2, "syntax error"},
	{"[daemon\nmax_runs = 1\n", 1, "syntax error"},
	{"[daemon]\nsocket =\n", 2, "empty value"},
	/* numbers */
	{"[daemon]\nmax_runs = abc\n", 2, "max_runs = abc: expected a decimal number"},
	{"[daemon]\nmax_runs = -5\n", 2, "expected a decimal number"},
	{"[daemon]\nmax_runs = +5\n", 2, "expected a decimal number"},
	{"[daemon]\nmax_runs = 12x\n", 2, "expected a decimal number"},
	{"[daemon]\nmax_runs = 4294967296\n", 2, "out of range"},
	{"[daemon]\nmax_runs = 0\n", 2, "must not be 0"},
	{"[daemon]\nmax_queued_bytes = 99999999999999999999\n", 2, "out of range"},
	{"[daemon]\nmax_queued_bytes = 17179869184G\n", 2, "out of range"},
	{"[daemon]\nmax_queued_bytes = 5X\n", 2, "expected a size"},
	{"[daemon]\nmax_queued_bytes = 5KB\n", 2, "expected a size"},
	{"[daemon]\nmax_queued_bytes = 1K\n", 2, "at least"},
	{"[daemon]\nmax_queued_fds = 10\n", 2, "out of range"},
	{"[daemon]\nmax_fds_per_uid = 100000\n", 2, "out of range"},
	{"[daemon]\nmax_bytes_per_uid = 4K\n", 2, "at least 1M"},
	{"[daemon]\nsocket_mode = 0999\n", 2, "expected an octal mode"},
	{"[daemon]\nsocket_mode = 01777\n", 2, "out of range"},
	{"[daemon]\nsocket = relative.sock\n", 2, "not an absolute path"},
	{"[daemon]\nuser = no-such-user-xyz\n", 2, "unknown user 'no-such-user-xyz'"},
	{"[daemon]\nuser = root\n", 2, "must not be root"},
	{"[daemon]\nsocket_user = no-such-user-xyz\n", 2, "unknown user"},
	{"[daemon]\nsocket_group = no-such-group-xyz\n", 2, "unknown group"},
	{"[access]\nallow_users = root, no-such-user-xyz\n", 2, "unknown user 'no-such-user-xyz'"},
	{"[access]\nallow_groups = no-such-group-xyz\n", 2, "unknown group 'no-such-group-xyz'"},
	{"[access]\nallow_users = root,,daemon\n", 2, "empty name"},
	{"[access]\nallow_users = root,\n", 2, "empty name"},
	{"[access]\nallow_users = 4294967295\n", 2, "bad user"},
	{"[access]\nallow_all = maybe\n", 2, "expected true or false"},
	/* sandbox */
	{"[sandbox]\nuid_base = 0\n", 2, "uid_base must not be 0"},
	{"[sandbox]\nuid_count = 3\n", 2, "must be even"},
	{"[sandbox]\nuid_count = 0\n", 2, "must not be 0"},
	{"[sandbox]\nuid_base = 4294967000\nuid_count = 1000\n", 3, "overflows"},
	{"[sandbox]\nuid_count = 1000\nuid_base = 4294967000\n", 3, "overflows"},
	{"[sandbox]\nuid_base = 65500\nuid_count = 100\n", 3, "service user"},
	{"[sandbox]\nhostname = -bad\n", 2, "hostname '-bad'"},
	{"[sandbox]\nhostname = a_b\n", 2, "hostname"},
	/* limits */
	{"[limits]\nwall_ms = 0\n", 2, "wall_ms must not be 0"},
	{"[limits]\nwall_ms_max = 0\n", 2, "wall_ms_max must not be 0"},
	{"[limits]\nwall_ms = 400000\n", 2,
	 "wall_ms = 400000 is above its ceiling wall_ms_max = 300000"},
	{"[limits]\nmemory_bytes = 2G\n\nmemory_bytes_max = 1G\n", 4, "above its ceiling"},
	{"[limits]\nmemory_bytes_max = 1G\nmemory_bytes = 2G\n", 3, "above its ceiling"},
	{"[limits]\nwall_ms = 10K\n", 2, "expected a decimal number"},
	{"[limits]\nartifacts_max = 1001\n", 2, "above what the protocol carries"},
	{"[limits]\ncpu_ms_max = 18446744073709551615\n", 2, "above what the protocol carries"},
	{"[limits]\nwall_ms_max = 1000000000001\n", 2, "(1000000000000)"},
	{"[limits]\nprocesses = -1\n", 2, "expected a decimal number"},
	/* runtimes */
	{"[runtime ruby]\ncode_name = main.rb\n[daemon]\n", 1, "[runtime ruby] has no argv"},
	{"[runtime ruby]\nargv = /usr/bin/ruby {code}\n", 1, "[runtime ruby] has no code_name"},
	{"[runtime python]\ncode_name = x.py\n", 1, "[runtime python] has no argv"},
	{"[runtime ruby]\nargv = ruby {code}\n", 2, "absolute path"},
	{"[runtime ruby]\nargv = /usr/bin/ruby main.rb\n", 2, "{code} exactly once"},
	{"[runtime ruby]\nargv = /usr/bin/ruby {code} {code}\n", 2, "{code} exactly once"},
	{"[runtime ruby]\nargv = /a 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 {code}\n", 2,
	 "more than 16 words"},
	{"[runtime ruby]\ncode_name = ../x\n", 2, "code_name '../x'"},
	{"[runtime ruby]\nfoo = 1\n", 2, "unknown key 'foo' in [runtime ruby]"},
	{"[runtime exec]\n", 1, "built in"},
	{"[runtime Ruby]\n", 1, "bad runtime name"},
	{"[runtime ruby]\nargv = /r {code}\ncode_name = a\n[runtime ruby]\n", 4,
	 "duplicate section"},
	{"[runtime ruby]\nargv = /r {code}\nargv = /s {code}\n", 3, "duplicate key 'argv'"},
	/* profiles */
	{"[profile Big]\n", 1, "bad profile name 'Big'"},
	{"[profile default]\nwall_ms = 1000\n", 1, "implicit profile"},
	{"[profile big]\nwall_ms_max = 1000\n", 2, "unknown key 'wall_ms_max' in [profile big]"},
	{"[profile big]\nnetwork = open\n", 2, "network = open: expected none or proxy"},
	{"[profile big]\nnetwork_speed = 1\n", 2, "unknown key 'network_speed' in [profile big]"},
	/* egress (docs/design-egress.md) */
	{"[profile big]\nnetwork = proxy\n", 2, "[profile big] network = proxy needs allow_hosts"},
	{"[profile big]\n\nallow_hosts = a.test:80\n", 3,
	 "[profile big] has egress keys but not network = proxy"},
	{"[profile big]\nnetwork = none\nnetwork_bytes = 1M\n", 2,
	 "[profile big] has egress keys but not network = proxy"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a.test\n", 3, "'a.test': no port"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a.test:0\n", 3, "bad port"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a.test:65536\n", 3, "bad port"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = 443, a.test:80\n", 3,
	 "port 443 before any host"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a.test:80,80\n", 3, "port 80 twice"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a_b.test:80\n", 3, "not a host name"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = -a.test:80\n", 3, "not a host name"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a.test.:80\n", 3, "not a host name"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = *.test:80\n", 3, "a wildcard is"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = a.*.test:80\n", 3, "not a host name"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = 2130706433:80\n", 3,
	 "write an IPv4 address as 127.0.0.1"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = [::1:80\n", 3, "no port"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = [zz::1]:80\n", 3, "not a host name"},
	{"[profile big]\nnetwork = proxy\nallow_hosts = ,\n", 3, "allow_hosts: no entry"},
	{"[profile big]\nnetwork = proxy\nnetwork_bytes = 0\n", 3, "network_bytes = 0"},
	{"[profile big]\nnetwork = proxy\nnetwork_connections = x\n", 3,
	 "network_connections = x: expected"},
	{"[egress]\nresolver = dns.test\n", 2, "resolver: 'dns.test' is not IP[:port]"},
	{"[egress]\nresolver = 1.2.3.4:0\n", 2, "resolver: '1.2.3.4:0' is not IP[:port]"},
	{"[egress]\nresolver = 1.1.1.1 2.2.2.2 3.3.3.3 4.4.4.4\n", 2, "at most 3"},
	{"[egress]\nport = 70000\n", 2, "port = 70000: 1 to 65535"},
	{"[egress]\nidle_timeout_ms = 0\n", 2, "idle_timeout_ms"},
	{"[egress]\nmax_connections = 0\n", 2, "max_connections must not be 0"},
	{"[egress]\nuser = x\n", 2, "unknown key 'user' in [egress]"},
	{"[profile big]\nwall_ms = 0\n", 2, "wall_ms must not be 0"},
	{"[profile big]\nmemory_bytes = lots\n", 2, "expected a size"},
	{"[profile big]\nwall_ms = 1000\n[profile big]\n", 3, "duplicate section [profile big]"},
	{"[profile big]\nwall_ms = 1000\nwall_ms = 2000\n", 3,
	 "duplicate key 'wall_ms' in [profile big]"},
	{"[profile big]\n\nwall_ms = 400000\n", 3,
	 "[profile big] wall_ms = 400000 is above its ceiling wall_ms_max = 300000"},
	{"[profile big]\nmemory_bytes = 2G\n[limits]\nmemory_bytes_max = 1G\n", 2,
	 "[profile big] memory_bytes = 2147483648 is above its ceiling"},
	{"[profile minimal]\nallow_users = no-such-user-xyz\n", 2, "unknown user"},
	{"[profile ro]\n\nfile_write = maybe\n", 3, "file_write = maybe: expected true or false"},
	{"[profile one]\nsubprocess = 2\n", 2, "subprocess = 2: expected true or false"},
	{"[profile bg]\nbackground_processes = sometimes\n", 2,
	 "background_processes = sometimes: expected true or false"},
	{"[profile one]\nsubprocess = false\nopen_files = 4096\n", 3,
	 "[profile one] subprocess = false needs open_files of at most 4095 (it is 4096)"},
	{"[limits]\nopen_files_max = 8192\n[profile one]\nopen_files = 5000\n\nsubprocess = "
	 "false\n",
	 6, "needs open_files of at most 4095 (it is 5000)"},
	{"[limits]\nopen_files = 4096\nopen_files_max = 8192\n[profile one]\nsubprocess = no\n", 5,
	 "(it is 4096)"},
	{"[profile ro]\nfile_write = false\nfile_write = true\n", 3,
	 "duplicate key 'file_write' in [profile ro]"},
	{"[profile minimal]\nallow_groups = root,\n", 2, "empty name"},
	/* blocked_imports (advisory, daemon/frontend/advisory.c) */
	{"[profile p]\n\nblocked_imports = os, sub-process\n", 3,
	 "blocked_imports: 'sub-process' is not a Python module name"},
	{"[profile p]\nblocked_imports = os..path\n", 2, "'os..path' is not a Python module name"},
	{"[profile p]\nblocked_imports = .os\n", 2, "'.os' is not a Python module name"},
	{"[profile p]\nblocked_imports = 1os\n", 2, "'1os' is not a Python module name"},
	{"[profile p]\nblocked_imports = os, ctypes, os\n", 2, "blocked_imports: 'os' given twice"},
	{"[profile p]\nblocked_imports = os,\n", 2, "blocked_imports: empty name"},
	{"[profile p]\nblocked_imports = "
	 "a0,a1,a2,a3,a4,a5,a6,a7,a8,a9,b0,b1,b2,b3,b4,b5,b6,b7,b8,b9,c0,c1,c2,c3,c4,c5,c6,c7,c8,"
	 "c9,d0,d1,d2\n",
	 2, "blocked_imports: more than 32 names"},
	{"[profile p]\nblocked_imports = "
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
	 2, "blocked_imports: name too long"},
	{"[access]\ndefault_profile = Big\n", 2, "default_profile = Big: expected"},
	{"[access]\ndefault_profile = nope\n", 2, "default_profile = nope: no such profile"},
	{"[access]\ndefault_profile = default\n", 2, "no such profile"},
	{"[access]\ndefault_profile = minimal\n[profile minimal]\nallow_users = root\n", 2,
	 "must be open to everyone"},
	/* hidden_paths: beneath /usr or an /etc entry the root makes; bounds */
	{"[profile h]\n\nhidden_paths = usr/bin/gcc\n", 3,
	 "hidden_paths: usr/bin/gcc: expected an absolute path of at most 255 bytes"},
	{"[profile h]\nhidden_paths = /usr/bin/../sbin\n", 2,
	 "hidden_paths: /usr/bin/../sbin: expected"},
	{"[profile h]\nhidden_paths = /usr/lib/\n", 2, "hidden_paths: /usr/lib/: expected"},
	{"[profile h]\nhidden_paths = /usr/bin/gcc, /opt/x\n", 2,
	 "hidden_paths: /opt/x is neither beneath /usr nor one of the paths the sandbox root "
	 "makes (/etc/passwd, /etc/group, /etc/hosts, /etc/nsswitch.conf, /etc/resolv.conf, "
	 "/etc/ld.so.cache, /etc/alternatives, /etc/ssl, /etc/matplotlibrc, /etc/fonts)"},
	{"[profile h]\nhidden_paths = /usr\n", 2, "hidden_paths: /usr is neither beneath /usr"},
	{"[profile h]\nhidden_paths = /etc/ssl/private\n", 2,
	 "hidden_paths: /etc/ssl/private is neither"},
	{"[profile h]\nhidden_paths = /etc\n", 2, "hidden_paths: /etc is neither"},
	{"[profile h]\nhidden_paths = /proc\n", 2, "hidden_paths: /proc is neither"},
	{"[profile h]\nhidden_paths = /etc/hostname\n", 2,
	 "hidden_paths: /etc/hostname is neither"},
	{"[profile h]\nhidden_paths = /usr/lib, /usr/bin/gcc, /usr/lib/gcc\n", 2,
	 "hidden_paths: /usr/lib and /usr/lib/gcc overlap"},
	{"[profile h]\nhidden_paths = /etc/ssl, /etc/ssl\n", 2,
	 "hidden_paths: /etc/ssl and /etc/ssl overlap"},
	{"[profile h]\nhidden_paths = /usr/a, /usr/b, /usr/c, /usr/d, /usr/e, /usr/f, /usr/g, "
	 "/usr/h, /usr/i, /usr/j, /usr/k, /usr/l, /usr/m, /usr/n, /usr/o, /usr/p, /usr/q\n",
	 2, "hidden_paths: more than 16 paths"},
	{"[profile h]\nhidden_paths = /usr/a,\n", 2, "hidden_paths: empty name"},
	{"[profile h]\nhidden_paths = /etc/ssl\n[mount m]\nsource = /usr/share\ntarget = "
	 "/etc/ssl\n",
	 2, "[profile h] hidden_paths: /etc/ssl overlaps [mount m] target /etc/ssl"},
	{"[profile h]\nhidden_paths = /etc/fonts\nhidden_paths = /etc/ssl, /etc/fonts\n", 3,
	 "hidden_paths: /etc/fonts and /etc/fonts overlap"},
	/* [mount NAME] (the source walk's own cases: daemon-mounts) */
	{"[mount m]\nsource = /usr/share\ntarget = /usr/x\n", 3,
	 "[mount m] target /usr/x: in the sandbox's own /usr"},
	{"[mount m]\nsource = /usr/share\ntarget = /workspace\n", 3, "own /workspace"},
	{"[mount m]\nsource = /usr/share\ntarget = /\n", 3, "target /: expected"},
	{"[mount m]\nsource = /usr/share\ntarget = /d/../e\n", 3, "target /d/../e: expected"},
	{"[mount m]\nsource = /usr/share\ntarget = /etc\n", 3, "the sandbox's own"},
	{"[mount m]\n\ntarget = /data\n", 1, "[mount m] has no source"},
	{"[mount m]\nsource = /usr/share\n", 1, "[mount m] has no target"},
	{"[mount m]\nsource = rel\ntarget = /d\n", 2, "[mount m] source: source rel: expected"},
	{"[mount m]\nsource = /usr//share\ntarget = /d\n", 2, "source /usr//share: expected"},
	{"[mount m]\nsource = /usr/share/\ntarget = /d\n", 2, "expected an absolute path"},
	{"[mount m]\nsource = /\ntarget = /d\n", 2, "source /: expected"},
	{"[mount m]\nsource = /usr/share\ntarget = /d\npackage = maybe\n", 4,
	 "package: expected true or false"},
	{"[mount m]\nsource = /usr/share\ntarget = /d\nsize = 1\n", 4,
	 "unknown key 'size' in [mount m]"},
	{"[mount M]\n", 1, "bad mount name 'M'"},
	{"[mount m]\nsource = /usr/share\ntarget = /d\n[mount m]\n", 4,
	 "duplicate section [mount m]"},
	{"[mount a]\nsource = /usr/share\ntarget = /d\n[mount b]\nsource = /usr/lib\ntarget = "
	 "/d/e\n",
	 6, "[mount b] target /d/e overlaps [mount a] target /d"},
	{"[profile p]\nmounts = nope\n", 2, "mounts: no [mount nope] section"},
	{"[profile p]\n\nallow_mounts = nope\n", 3, "allow_mounts: no [mount nope] section"},
	{"[mount a]\nsource = /usr/share\ntarget = /d\n[profile p]\nmounts = a,\n", 5,
	 "mounts: empty name"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\nmounts = x\n", 4,
	 "mounts: no [mount x] section"},
	/* runtime environments */
	{"[runtime r]\ncode_name = m.py\nargv = /opt/py/bin/python3 {code}\n", 3,
	 "[runtime r] argv[0] /opt/py/bin/python3 is not inside the sandbox: add a [mount] with "
	 "package = true to its mounts"},
	{"[runtime r]\nargv = /opt/py/bin/python3 {code}\ncode_name = m.py\nmounts = py\n"
	 "[mount py]\nsource = /usr/share\ntarget = /opt/py\n",
	 2, "is not inside the sandbox"},
	{"[runtime r]\nargv = /opt/pyx {code}\ncode_name = m.py\nmounts = py\n"
	 "[mount py]\nsource = /usr/share\ntarget = /opt/py\npackage = true\n",
	 2, "argv[0] /opt/pyx is not inside"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\nenv = A\n", 4,
	 "env: 'A' is not KEY=VALUE"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\nenv = 1A=2\n", 4,
	 "env: '1A=2' is not KEY=VALUE"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\nenv = =2\n", 4,
	 "is not KEY=VALUE"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\n"
	 "env = A=1 B=2 C=3 D=4 E=5 F=6 G=7 H=8 I=9\n",
	 4, "env: more than 8 words"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\nprestart = maybe\n", 4,
	 "prestart = maybe: expected true or false"},
	{"[daemon]\nprestarted_interpreters = 65\n", 2,
	 "prestarted_interpreters = 65: out of range"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\ncwd = /tmp\n", 4,
	 "cwd /tmp: expected /workspace or"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\ncwd = /workspace/../etc\n",
	 4, "cwd /workspace/../etc: expected"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\ncwd = /workspacex\n", 4,
	 "cwd /workspacex: expected"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\ncwd = /workspace/\n", 4,
	 "cwd /workspace/: expected"},
	/* runtimes = (issue 32, point 8) and language = */
	{"[profile p]\n\nruntimes = python, nope\n", 3, "[profile p] runtimes: no runtime 'nope'"},
	{"[profile p]\nruntimes = python, python\n", 2, "runtimes: 'python' given twice"},
	{"[profile p]\nruntimes = Py\n", 2, "runtimes: 'Py' is not a runtime name"},
	{"[profile p]\nruntimes = python,\n", 2, "runtimes: empty name"},
	{"[profile p]\nruntimes = ,\n", 2, "runtimes: empty name"},
	{"[profile p]\nsubprocess = false\nruntimes = python, sh\n", 3,
	 "[profile p] runtimes: 'sh' is a shell, and subprocess = false refuses"},
	{"[profile p]\nruntimes = python, bash\n\nsubprocess = false\n", 4, "'bash' is a shell"},
	{"[profile p]\nsubprocess = false\nruntimes = shx\n[runtime shx]\nargv = /usr/bin/python3 "
	 "{code}\ncode_name = m\nlanguage = shell\n",
	 3, "'shx' is a shell"},
	{"[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\nlanguage = perl\n", 4,
	 "language = perl: expected python, shell or other"},
};

/* Every error class names the right file and line and leaves cfg freed. */
static void
test_errors(void **state)
{
	struct fixture *f = *state;
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		memset(f->err, 0, sizeof(f->err));
		if (load_text(f, bad_cases[i].text) != -EINVAL)
			fail_msg("case %zu loaded or failed otherwise: '%s'", i, f->err);
		assert_error_at(f, bad_cases[i].line, bad_cases[i].reason);
		/* On error cfg is freed, and freeing it again is safe. */
		assert_null(f->cfg.socket_path);
		assert_int_equal(f->cfg.nruntimes, 0);
		config_free(&f->cfg);
	}
}

/* [mount] sections: the masks of profiles and runtimes (names may come
 * before their sections), and the mounts of a run (config_mounts_resolve). */
static void
test_mounts(void **state)
{
	struct fixture *f = *state;
	const struct config_profile *p, *std;
	const struct config_runtime *rt;
	static const char *const ask_b[] = {"b"}, *const ask_a[] = {"a"}, *const ask_c[] = {"c"},
				 *const ask_x[] = {"b", "x"};
	uint32_t mask = 0;
	size_t bad = 99;

	assert_int_equal(load_text(f,
				   "[profile p]\nmounts = a\nallow_mounts = b, c\n"
				   "[runtime r]\nargv = /usr/bin/python3 {code}\n"
				   "code_name = m.py\nmounts = c\n"
				   "[mount a]\nsource = /usr/share\ntarget = /data/a\n"
				   "[mount b]\nsource = /usr/lib\ntarget = /opt/b\npackage = true\n"
				   "[mount c]\nsource = /etc\ntarget = /srv/c\n"),
			 0);
	assert_int_equal(f->cfg.nmounts, 3);
	assert_string_equal(f->cfg.mounts[1].source, "/usr/lib");
	assert_string_equal(f->cfg.mounts[1].target, "/opt/b");
	assert_true(f->cfg.mounts[1].package);
	assert_false(f->cfg.mounts[0].package);
	p = config_profile_find(&f->cfg, "p");
	rt = config_runtime_find(&f->cfg, "r");
	std = config_profile_find(&f->cfg, "standard");
	assert_non_null(p);
	assert_non_null(rt);
	assert_int_equal(p->mounts, 1U);
	assert_int_equal(p->allow_mounts, 6U);
	assert_int_equal(rt->mounts, 4U);
	assert_int_equal(config_mounts_resolve(&f->cfg, p, NULL, NULL, 0, &mask, &bad), 0);
	assert_int_equal(mask, 1U);
	assert_int_equal(config_mounts_resolve(&f->cfg, p, rt, ask_b, 1, &mask, &bad), 0);
	assert_int_equal(mask, 7U);
	/* Asking for what the profile gives anyway is fine. */
	assert_int_equal(config_mounts_resolve(&f->cfg, p, NULL, ask_a, 1, &mask, &bad), 0);
	assert_int_equal(mask, 1U);
	assert_int_equal(config_mounts_resolve(&f->cfg, p, NULL, ask_x, 2, &mask, &bad), -ENOENT);
	assert_int_equal(bad, 1);
	assert_int_equal(config_mounts_resolve(&f->cfg, std, NULL, ask_b, 1, &mask, &bad), -EPERM);
	assert_int_equal(bad, 0);
	/* The runtime's mount is the run's, not one it may ask for elsewhere. */
	assert_int_equal(config_mounts_resolve(&f->cfg, std, rt, ask_c, 1, &mask, &bad), 0);
	assert_int_equal(config_mounts_resolve(&f->cfg, std, NULL, ask_c, 1, &mask, &bad), -EPERM);
	config_free(&f->cfg);
}

/* prestart's default: yes for a runtime whose program is a python, as
 * given otherwise; built-in or from the file. */
static void
test_prestart_default(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load_text(f,
				   "[runtime p]\nargv = /usr/bin/python3.11 -I {code}\n"
				   "code_name = m.py\n"
				   "[runtime q]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\n"
				   "prestart = no\n"
				   "[runtime s]\nargv = /bin/sh {code}\ncode_name = m.sh\n"
				   "[runtime t]\nargv = /bin/sh {code}\ncode_name = m.sh\n"
				   "prestart = yes\n"
				   "[runtime python-site]\nargv = /usr/bin/python3 {code}\n"
				   "code_name = m.py\nprestart = false\n"),
			 0);
	assert_true(config_runtime_find(&f->cfg, "p")->prestart);
	assert_false(config_runtime_find(&f->cfg, "q")->prestart);
	assert_false(config_runtime_find(&f->cfg, "s")->prestart);
	assert_true(config_runtime_find(&f->cfg, "t")->prestart);
	assert_true(config_runtime_find(&f->cfg, "python")->prestart);
	assert_false(config_runtime_find(&f->cfg, "python-site")->prestart);
	assert_false(config_runtime_find(&f->cfg, "sh")->prestart);
	assert_false(config_runtime_find(&f->cfg, "exec")->prestart);
}

/* The interpreter caps (issue 28): derived from max_runs unless set; the
 * per-uid one from the global one; 0 refused. */
static void
test_interpreter_caps(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load_text(f, "[daemon]\nmax_runs = 5\n"), 0);
	assert_int_equal(f->cfg.max_interpreters, 10);
	assert_int_equal(f->cfg.max_interpreters_per_uid, 5);
	config_free(&f->cfg);
	assert_int_equal(load_text(f, "[daemon]\nmax_runs = 1\n"), 0);
	assert_int_equal(f->cfg.max_interpreters, 2);
	assert_int_equal(f->cfg.max_interpreters_per_uid, 1);
	config_free(&f->cfg);
	assert_int_equal(load_text(f, "[sessions]\nmax_interpreters = 7\n"), 0);
	assert_int_equal(f->cfg.max_interpreters, 7);
	assert_int_equal(f->cfg.max_interpreters_per_uid, 4);
	config_free(&f->cfg);
	assert_int_equal(load_text(f, "[sessions]\nmax_interpreters = 3\n"
				      "max_interpreters_per_uid = 3\n"),
			 0);
	assert_int_equal(f->cfg.max_interpreters, 3);
	assert_int_equal(f->cfg.max_interpreters_per_uid, 3);
	config_free(&f->cfg);
	assert_int_not_equal(load_text(f, "[sessions]\nmax_interpreters = 0\n"), 0);
	assert_non_null(strstr(f->err, "max_interpreters must not be 0"));
	assert_int_not_equal(load_text(f, "[sessions]\nmax_interpreters_per_uid = x\n"), 0);
	assert_non_null(strstr(f->err, "max_interpreters_per_uid = x"));
}

/*
 * runtimes = kept in order (a [runtime] after the profile is found);
 * config_profile_runtime_allowed by the list, every runtime without one. A
 * runtime's language: given, or its program's (argv[0], else what it
 * resolves to), never its name's.
 */
static void
test_profile_runtimes(void **state)
{
	struct fixture *f = *state;
	const struct config_profile *p;
	char text[128];

	assert_int_equal(
		load_text(f, "[profile p]\nruntimes = python , py3\n[profile q]\n"
			     "[runtime py3]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\n"
			     "[runtime python-sh]\nargv = /bin/sh {code}\ncode_name = m.sh\n"
			     "[runtime calc]\nargv = /usr/bin/bc {code}\ncode_name = m\n"
			     "[runtime told]\nargv = /usr/bin/bc {code}\ncode_name = m\n"
			     "language = python\n"),
		0);
	p = config_profile_find(&f->cfg, "p");
	assert_non_null(p);
	assert_int_equal(p->nruntimes, 2);
	assert_true(config_profile_runtime_allowed(p, "python"));
	assert_true(config_profile_runtime_allowed(p, "py3"));
	assert_false(config_profile_runtime_allowed(p, "sh"));
	assert_false(config_profile_runtime_allowed(p, NULL));
	config_profile_runtimes_text(p, text, sizeof(text));
	assert_string_equal(text, "python, py3");
	p = config_profile_find(&f->cfg, "q");
	assert_true(config_profile_runtime_allowed(p, "sh"));
	config_profile_runtimes_text(p, text, sizeof(text));
	assert_string_equal(text, "");
	assert_int_equal(config_runtime_find(&f->cfg, "py3")->language, RULES_LANG_PYTHON);
	assert_int_equal(config_runtime_find(&f->cfg, "python")->language, RULES_LANG_PYTHON);
	assert_int_equal(config_runtime_find(&f->cfg, "python-sh")->language, RULES_LANG_SHELL);
	assert_int_equal(config_runtime_find(&f->cfg, "sh")->language, RULES_LANG_SHELL);
	assert_int_equal(config_runtime_find(&f->cfg, "calc")->language, RULES_LANG_OTHER);
	assert_int_equal(config_runtime_find(&f->cfg, "told")->language, RULES_LANG_PYTHON);
	assert_int_equal(config_runtime_find(&f->cfg, "exec")->language, RULES_LANG_OTHER);
	/* prestart's default follows the language, not the name. */
	assert_true(config_runtime_find(&f->cfg, "py3")->prestart);
	assert_false(config_runtime_find(&f->cfg, "python-sh")->prestart);
	config_free(&f->cfg);
}

/* blocked_imports: the names kept in order; the lists of all profiles
 * together bounded (info lists them in one packet). */
static void
test_blocked_imports(void **state)
{
	struct fixture *f = *state;
	const struct config_profile *p;
	char text[16384];
	size_t len = 0, i, k;

	assert_int_equal(load_text(f, "[profile p]\nblocked_imports = subprocess , os.path,ctypes\n"
				      "[profile q]\n"),
			 0);
	p = config_profile_find(&f->cfg, "p");
	assert_non_null(p);
	assert_int_equal(p->nblocked_imports, 3);
	assert_string_equal(p->blocked_imports[0], "subprocess");
	assert_string_equal(p->blocked_imports[1], "os.path");
	assert_string_equal(p->blocked_imports[2], "ctypes");
	assert_int_equal(config_profile_find(&f->cfg, "q")->nblocked_imports, 0);
	config_free(&f->cfg);

	/* Lines are short (inih), so the bound takes several lists: 5 mounts of
	 * 30 bytes in mounts and allow_mounts and 4 names of 40 bytes, 488 bytes
	 * a profile; the 9th goes past 4096. */
	for (k = 0; k < 5; k++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"[mount m%029zu]\nsource = /usr/share\ntarget = /d/%zu\n",
					k, k);
	for (i = 0; i < 9; i++) {
		const char *l = "m0000000000000000000000000000";

		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"[profile p%zu]\nmounts = %s0,%s1,%s2,%s3,%s4\n"
					"allow_mounts = %s0,%s1,%s2,%s3,%s4\nblocked_imports = ",
					i, l, l, l, l, l, l, l, l, l, l);
		for (k = 0; k < 4; k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%sm%02zu%037d",
						k ? "," : "", k, 0);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "\n");
	}
	assert_int_equal(load_text(f, text), -EINVAL);
	assert_error_at(f, 51,
			"[profile p8]: the mounts, allow_mounts and blocked_imports of all "
			"profiles together are longer than 4096 bytes");
	/* One profile fewer fits. */
	*strstr(text, "[profile p8]") = '\0';
	assert_int_equal(load_text(f, text), 0);
	config_free(&f->cfg);
}

/* A line longer than inih's buffer is an error, not two lines. */
static void
test_long_line(void **state)
{
	struct fixture *f = *state;
	char text[2048];

	snprintf(text, sizeof(text), "[daemon]\nsocket = /%01000d\n", 0);
	assert_int_equal(load_text(f, text), -EINVAL);
	assert_error_at(f, 2, "line too long");
}

/* Many runtimes: the 17th is refused. */
static void
test_too_many_runtimes(void **state)
{
	struct fixture *f = *state;
	char text[4096];
	size_t len = 0, n = 0, i;
	struct config probe;

	assert_int_equal(config_load(&probe, NULL, false, NULL, 0), 0);
	n = probe.nruntimes;
	config_free(&probe);
	for (i = 0; n + i <= CONFIG_RUNTIMES_MAX; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"[runtime r%zu]\nargv = /x {code}\ncode_name = m\n", i);
	assert_int_equal(load_text(f, text), -EINVAL);
	assert_error_at(f, (unsigned)(3 * (i - 1) + 1), "more than 16 runtimes");
}

/* The file is refused unless root owns it and only root can write it. */
static void
test_file_checks(void **state)
{
	struct fixture *f = *state;
	struct passwd *nobody = getpwnam("nobody");
	char link[160];

	assert_non_null(nobody);
	assert_int_equal(geteuid(), 0);

	write_file(f, "[daemon]\nmax_runs = 3\n", 0644);
	assert_int_equal(config_load(&f->cfg, f->path, true, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->cfg.max_runs, 3);
	config_free(&f->cfg);

	/* Read-only for everyone is fine too. */
	assert_int_equal(chmod(f->path, 0400), 0);
	assert_int_equal(config_load(&f->cfg, f->path, true, f->err, sizeof(f->err)), 0);
	config_free(&f->cfg);

	assert_int_equal(chmod(f->path, 0664), 0);
	assert_int_equal(config_load(&f->cfg, f->path, true, f->err, sizeof(f->err)), -EPERM);
	assert_non_null(strstr(f->err, f->path));
	assert_non_null(strstr(f->err, "writable by group or others"));
	assert_null(f->cfg.socket_path);

	assert_int_equal(chmod(f->path, 0646), 0);
	assert_int_equal(config_load(&f->cfg, f->path, true, f->err, sizeof(f->err)), -EPERM);
	assert_non_null(strstr(f->err, "writable by group or others"));

	assert_int_equal(chmod(f->path, 0644), 0);
	assert_int_equal(chown(f->path, nobody->pw_uid, 0), 0);
	assert_int_equal(config_load(&f->cfg, f->path, true, f->err, sizeof(f->err)), -EPERM);
	assert_non_null(strstr(f->err, "not root"));
	/* Even an optional file is refused: it exists. */
	assert_int_equal(config_load(&f->cfg, f->path, false, f->err, sizeof(f->err)), -EPERM);
	assert_int_equal(chown(f->path, 0, 0), 0);

	/* A symbolic link is not followed, even to a good file. */
	snprintf(link, sizeof(link), "%s/link.conf", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	assert_int_equal(config_load(&f->cfg, link, true, f->err, sizeof(f->err)), -ELOOP);
	assert_non_null(strstr(f->err, "symbolic link"));

	/* A directory is not a file. */
	assert_int_equal(config_load(&f->cfg, f->dir, true, f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "not a regular file"));
}

/* 0 takes the default, up to the ceiling is kept, above it is -ERANGE naming the limit. */
static void
test_limits_resolve(void **state)
{
	struct fixture *f = *state;
	struct proto_limits asked, got, sentinel;
	enum proto_limit bad = PROTO_LIMIT_COUNT_;
	unsigned i;

	assert_int_equal(config_load(&f->cfg, NULL, false, f->err, sizeof(f->err)), 0);
	memset(&asked, 0, sizeof(asked));
	assert_int_equal(config_limits_resolve(config_profile_default(&f->cfg), &asked, &got, &bad),
			 0);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		assert_int_equal(got.v[i], f->cfg.defaults.v[i]);
	assert_int_equal(bad, PROTO_LIMIT_COUNT_);

	asked.v[PROTO_LIMIT_WALL_MS] = 1;
	asked.v[PROTO_LIMIT_MEMORY_BYTES] = f->cfg.ceilings.v[PROTO_LIMIT_MEMORY_BYTES];
	assert_int_equal(config_limits_resolve(config_profile_default(&f->cfg), &asked, &got, &bad),
			 0);
	assert_int_equal(got.v[PROTO_LIMIT_WALL_MS], 1);
	assert_int_equal(got.v[PROTO_LIMIT_MEMORY_BYTES], 4ULL << 30);
	assert_int_equal(got.v[PROTO_LIMIT_CPU_MS], 5000);

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		memset(&asked, 0, sizeof(asked));
		asked.v[i] = f->cfg.ceilings.v[i] + 1;
		memset(&got, 0xa5, sizeof(got));
		sentinel = got;
		bad = PROTO_LIMIT_COUNT_;
		assert_int_equal(
			config_limits_resolve(config_profile_default(&f->cfg), &asked, &got, &bad),
			-ERANGE);
		assert_int_equal(bad, i);
		/* ret is written only on success. */
		assert_memory_equal(&got, &sentinel, sizeof(got));
	}
	asked.v[PROTO_LIMIT_ARTIFACTS] = UINT64_MAX;
	assert_int_equal(config_limits_resolve(config_profile_default(&f->cfg), &asked, &got, &bad),
			 -ERANGE);
	assert_int_equal(config_limits_resolve(config_profile_default(&f->cfg), NULL, &got, &bad),
			 -EINVAL);
}

/* The built-in profiles, one replaced, one new, the default profile, who may use each. */
static void
test_profiles(void **state)
{
	struct fixture *f = *state;
	const struct config_profile *p;
	struct proto_limits asked, got;
	enum proto_limit bad;
	gid_t g[1] = {4242};

	/* No file: the built-ins and the implicit default of [limits]. */
	assert_int_equal(config_load(&f->cfg, NULL, false, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->cfg.nprofiles, 4);
	p = config_profile_find(&f->cfg, "minimal");
	assert_non_null(p);
	assert_int_equal(p->defaults.v[PROTO_LIMIT_MEMORY_BYTES], 128ULL << 20);
	assert_int_equal(p->defaults.v[PROTO_LIMIT_WALL_MS], 30000);
	assert_int_equal(p->defaults.v[PROTO_LIMIT_CPU_MS], 30000);
	assert_int_equal(p->defaults.v[PROTO_LIMIT_PROCESSES], 16);
	/* Not named by the built-in: the [limits] default; value = ceiling. */
	assert_int_equal(p->defaults.v[PROTO_LIMIT_OPEN_FILES], 256);
	assert_memory_equal(&p->defaults, &p->ceilings, sizeof(p->defaults));
	p = config_profile_find(&f->cfg, "standard");
	assert_non_null(p);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 512ULL << 20);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_WALL_MS], 60000);
	p = config_profile_find(&f->cfg, "generous");
	assert_non_null(p);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 2ULL << 30);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_WALL_MS], 300000);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_PROCESSES], 256);
	/* The built-ins switch nothing off. */
	assert_false(p->no_file_write);
	assert_false(p->no_subprocess);
	p = config_profile_default(&f->cfg);
	assert_string_equal(p->name, "default");
	assert_false(p->no_file_write);
	assert_false(p->no_subprocess);
	assert_memory_equal(&p->defaults, &f->cfg.defaults, sizeof(p->defaults));
	assert_memory_equal(&p->ceilings, &f->cfg.ceilings, sizeof(p->ceilings));
	assert_null(config_profile_find(&f->cfg, "nope"));
	assert_null(config_profile_find(&f->cfg, NULL));
	config_free(&f->cfg);

	/* minimal tightened only: a request may go below, never above. */
	p = NULL;
	memset(&asked, 0, sizeof(asked));
	assert_int_equal(load_text(f, "[access]\ndefault_profile = minimal\n"), 0);
	p = config_profile_default(&f->cfg);
	assert_string_equal(p->name, "minimal");
	assert_null(config_profile_find(&f->cfg, "default"));
	assert_int_equal(f->cfg.nprofiles, 3);
	assert_int_equal(config_limits_resolve(p, &asked, &got, &bad), 0);
	assert_int_equal(got.v[PROTO_LIMIT_MEMORY_BYTES], 128ULL << 20);
	asked.v[PROTO_LIMIT_MEMORY_BYTES] = 64ULL << 20;
	assert_int_equal(config_limits_resolve(p, &asked, &got, &bad), 0);
	assert_int_equal(got.v[PROTO_LIMIT_MEMORY_BYTES], 64ULL << 20);
	asked.v[PROTO_LIMIT_MEMORY_BYTES] = (128ULL << 20) + 1;
	assert_int_equal(config_limits_resolve(p, &asked, &got, &bad), -ERANGE);
	assert_int_equal(bad, PROTO_LIMIT_MEMORY_BYTES);
	config_free(&f->cfg);

	/* A section replaces a built-in whole; a new one; built-ins clamped to [limits]. */
	assert_int_equal(load_text(f, "[profile standard]\nwall_ms = 2000\nallow_users = 0, 1\n"
				      "file_write = no\n"
				      "[profile data-1]\nmemory_bytes = 1G\ncpu_ms = 7000\n"
				      "allow_groups = 4242\nfile_write = true\nsubprocess = off\n"
				      "open_files = 4095\nbackground_processes = yes\n"
				      "[limits]\nmemory_bytes_max = 1G\nwall_ms_max = 100000\n"),
			 0);
	p = config_profile_find(&f->cfg, "standard");
	assert_non_null(p);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_WALL_MS], 2000);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 256ULL << 20); /* [limits] */
	assert_true(p->no_file_write);
	assert_false(p->no_subprocess);
	assert_false(p->background_processes); /* default: off */
	assert_true(config_profile_allowed(p, 1, NULL, 0));
	assert_true(config_profile_allowed(p, 0, NULL, 0));
	assert_false(config_profile_allowed(p, 1000, g, 1));
	p = config_profile_find(&f->cfg, "data-1");
	assert_non_null(p);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 1ULL << 30);
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_CPU_MS], 7000);
	assert_false(p->no_file_write);
	assert_true(p->no_subprocess);
	assert_true(p->background_processes);
	assert_false(config_profile_allowed(p, 1000, NULL, 0));
	assert_true(config_profile_allowed(p, 1000, g, 1));
	p = config_profile_find(&f->cfg, "generous");
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_MEMORY_BYTES], 1ULL << 30); /* clamped */
	assert_int_equal(p->ceilings.v[PROTO_LIMIT_WALL_MS], 100000);	       /* clamped */
	assert_true(config_profile_allowed(p, 1000, NULL, 0));
	assert_int_equal(f->cfg.nprofiles, 5);
	assert_false(config_profile_allowed(NULL, 0, NULL, 0));
}

/* network = proxy: the allow-list as parsed, its limits, [egress]; the default has none. */
static void
test_profile_egress(void **state)
{
	struct fixture *f = *state;
	const struct config_profile *p;
	const struct egress_policy *pol;
	char buf[300];

	assert_int_equal(
		load_text(f, "[egress]\nresolver = 198.51.100.53, [2001:db8::1]:5353\nport = 8080\n"
			     "max_connections = 40\n"
			     "[profile pip]\nnetwork = proxy\n"
			     "allow_hosts = pypi.org:443, *.Example.COM:80,443 198.51.100.1:8443\n"
			     "allow_private_hosts = [fd00::1]:443\n"
			     "network_bytes = 2M\nnetwork_connections = 9\n"
			     "[profile off]\nnetwork = none\n"),
		0);
	assert_int_equal(f->cfg.negress_resolvers, 2);
	assert_string_equal(f->cfg.egress_resolvers[1], "[2001:db8::1]:5353");
	assert_int_equal(f->cfg.egress_port, 8080);
	assert_int_equal(f->cfg.egress_connections_max, 40);
	p = config_profile_find(&f->cfg, "pip");
	assert_non_null(p);
	assert_true(p->network_proxy);
	pol = p->egress;
	assert_non_null(pol);
	assert_int_equal(pol->nentries, 4);
	assert_int_equal(pol->bytes, 2ULL << 20);
	assert_int_equal(pol->connections, 9);
	egress_entry_format(&pol->entries[1], buf, sizeof(buf));
	assert_string_equal(buf, "*.example.com:80,443");
	assert_int_equal(pol->entries[2].kind, EGRESS_ADDR4);
	assert_false(pol->entries[2].allow_private);
	assert_int_equal(pol->entries[3].kind, EGRESS_ADDR6);
	assert_true(pol->entries[3].allow_private);
	p = config_profile_find(&f->cfg, "off");
	assert_false(p->network_proxy);
	assert_null(p->egress);
	assert_false(config_profile_default(&f->cfg)->network_proxy);
	config_free(&f->cfg);

	/* The allow-lists of all profiles together are bounded (info lists them in one packet). */
	{
		static char text[40000];
		size_t off = 0, i, k;

		/* 5 profiles of 16 lines of 4 entries of 40 bytes: 12800 bytes (fits); a 6th: no.
		 */
		for (k = 0; k < 6; k++) {
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						"[profile p%zu]\nnetwork = proxy\n", k);
			for (i = 0; i < 64; i++)
				off += (size_t)snprintf(text + off, sizeof(text) - off,
							"%shost%02zu-%026d.test:80%s",
							i % 4 == 0 ? "allow_hosts =" : "", i, 0,
							i % 4 == 3 ? "\n" : ",");
		}
		assert_int_equal(load_text(f, text), -EINVAL);
		assert_error_at(f, 5 * 18 + 3, "together are longer than 16384 bytes");
		config_free(&f->cfg);
		/* Five fit; a key of the list repeats, each adds. */
		*strstr(text, "[profile p5]") = '\0';
		assert_int_equal(load_text(f, text), 0);
		assert_int_equal(config_profile_find(&f->cfg, "p4")->egress->nentries, 64);
		config_free(&f->cfg);
	}

	/* Defaults: no resolver named (/etc/resolv.conf), port 3128, the limits' defaults. */
	assert_int_equal(load_text(f, "[profile w]\nnetwork = proxy\nallow_hosts = a.test:80\n"),
			 0);
	assert_int_equal(f->cfg.negress_resolvers, 0);
	assert_int_equal(f->cfg.egress_port, 3128);
	assert_int_equal(f->cfg.egress_connections_max, 0); /* RLIMIT_NOFILE / 8 */
	pol = config_profile_find(&f->cfg, "w")->egress;
	assert_int_equal(pol->bytes, EGRESS_BYTES_DEFAULT);
	assert_int_equal(pol->connections, EGRESS_CONNECTIONS_DEFAULT);
}

/* Many profiles: the 32nd from the file is refused (one slot is the implicit one's). */
static void
test_too_many_profiles(void **state)
{
	struct fixture *f = *state;
	char text[4096];
	size_t len = 0, prev = 0, i;

	for (i = 0; 3 + i < CONFIG_PROFILES_MAX; i++) {
		prev = len;
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"[profile p%zu]\nwall_ms = 1000\n", i);
	}
	assert_int_equal(load_text(f, text), -EINVAL);
	assert_error_at(f, (unsigned)(2 * (i - 1) + 1), "more than 31 profiles");
	config_free(&f->cfg);
	/* One fewer loads, with the implicit default in the last slot. */
	text[prev] = '\0';
	assert_int_equal(load_text(f, text), 0);
	assert_int_equal(f->cfg.nprofiles, CONFIG_PROFILES_MAX);
	assert_string_equal(config_profile_default(&f->cfg)->name, "default");
}

/* Who may connect: root, allow_all, listed users, listed groups, the socket's group. */
static void
test_peer_allowed(void **state)
{
	struct fixture *f = *state;
	gid_t g_none[] = {5000, 5001};
	gid_t g_listed[] = {5000, 77};
	gid_t g_socket[] = {65534};

	assert_int_equal(load_text(f, "[daemon]\nsocket_group = nogroup\n"
				      "[access]\nallow_users = 1234\nallow_groups = 77\n"),
			 0);
	assert_true(config_peer_allowed(&f->cfg, 0, NULL, 0));
	assert_true(config_peer_allowed(&f->cfg, 1234, NULL, 0));
	assert_false(config_peer_allowed(&f->cfg, 1235, NULL, 0));
	assert_false(config_peer_allowed(&f->cfg, 1235, g_none, 2));
	assert_true(config_peer_allowed(&f->cfg, 1235, g_listed, 2));
	assert_false(config_peer_allowed(&f->cfg, 1235, g_listed, 1));
	assert_true(config_peer_allowed(&f->cfg, 1235, g_socket, 1));
	config_free(&f->cfg);

	assert_int_equal(
		load_text(f, "[daemon]\nsocket_group = 4242\n[access]\nallow_all = true\n"), 0);
	assert_true(config_peer_allowed(&f->cfg, 999, NULL, 0));
	assert_true(config_peer_allowed(&f->cfg, 999, g_none, 2));
	config_free(&f->cfg);

	assert_int_equal(load_text(f, "[daemon]\nsocket_group = 4242\n"), 0);
	assert_false(config_peer_allowed(&f->cfg, 999, g_socket, 1));
	assert_false(config_peer_allowed(&f->cfg, 999, NULL, 0));
	assert_true(config_peer_allowed(&f->cfg, 0, NULL, 0));
}

/* config_free accepts a zeroed struct, NULL, and a second call. */
static void
test_config_free(void **state)
{
	struct config zero;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	config_free(&zero);
	config_free(NULL);
	assert_int_equal(config_load(&zero, NULL, false, NULL, 0), 0);
	config_free(&zero);
	config_free(&zero);
	assert_null(zero.socket_path);
	assert_null(config_runtime_find(&zero, "python"));
	assert_null(config_runtime_find(NULL, "python"));
}

/* A buffer parses like a file of that name, without the file checks. */
static void
test_load_buffer(void **state)
{
	struct fixture *f = *state;
	static const char good[] = "[daemon]\nmax_runs = 7\n";
	static const char bad[] = "[daemon]\n\nmax_runs = x\n";
	static const char nul[] = "[daemon]\nmax_runs = 7\0\n";

	assert_int_equal(
		config_load_buffer(&f->cfg, "mem.conf", good, strlen(good), f->err, sizeof(f->err)),
		0);
	assert_int_equal(f->cfg.max_runs, 7);
	config_free(&f->cfg);
	assert_int_equal(
		config_load_buffer(&f->cfg, "mem.conf", bad, strlen(bad), f->err, sizeof(f->err)),
		-EINVAL);
	assert_string_equal(f->err, "mem.conf:3: max_runs = x: expected a decimal number");
	assert_int_equal(config_load_buffer(&f->cfg, "mem.conf", nul, sizeof(nul) - 1, f->err,
					    sizeof(f->err)),
			 -EINVAL);
	assert_string_equal(f->err, "mem.conf:2: NUL byte in line");
	assert_int_equal(config_load_buffer(&f->cfg, "mem.conf", NULL, 0, f->err, sizeof(f->err)),
			 0);
	assert_int_equal(f->cfg.uid_base, 600000);
}

/* hidden_paths as parsed, kept in order; a path of 256 bytes and the bound
 * on all profiles together are file:line errors; a reload (the frontend's
 * config_load_buffer) refuses what start-up refuses. */
static void
test_hidden_paths(void **state)
{
	struct fixture *f = *state;
	const struct config_profile *p;
	char text[16384], path[300];
	size_t off = 0, i;

	assert_int_equal(load_text(f, "[profile h]\nhidden_paths = /usr/bin/gcc,/usr/lib/gcc , "
				      "/etc/ssl\n[profile plain]\n"),
			 0);
	p = config_profile_find(&f->cfg, "h");
	assert_non_null(p);
	assert_int_equal(p->nhidden, 3);
	assert_string_equal(p->hidden[0], "/usr/bin/gcc");
	assert_string_equal(p->hidden[1], "/usr/lib/gcc");
	assert_string_equal(p->hidden[2], "/etc/ssl");
	assert_int_equal(config_profile_find(&f->cfg, "plain")->nhidden, 0);
	assert_int_equal(config_profile_find(&f->cfg, "standard")->nhidden, 0);
	config_free(&f->cfg);

	/* The key repeated adds; 16 in all; a path as long as a line allows. */
	memset(path, 'a', sizeof(path));
	memcpy(path, "/usr/", 5);
	path[183] = '\0'; /* "hidden_paths = " and 183 bytes: a line of 198 */
	off = (size_t)snprintf(text, sizeof(text), "[profile h]\n");
	for (i = 0; i < 16; i++) {
		path[100] = (char)('a' + i);
		off += (size_t)snprintf(text + off, sizeof(text) - off, "hidden_paths = %s\n",
					path);
	}
	if (load_text(f, text) != 0)
		fail_msg("16 paths: %s", f->err);
	p = config_profile_find(&f->cfg, "h");
	assert_int_equal(p->nhidden, 16);
	assert_int_equal(strlen(p->hidden[15]), 183);
	config_free(&f->cfg);
	snprintf(text + off, sizeof(text) - off, "hidden_paths = /etc/ssl\n");
	assert_int_equal(load_text(f, text), -EINVAL);
	assert_error_at(f, 18, "hidden_paths: more than 16 paths");
	config_free(&f->cfg);

	/* All profiles together: at most CONFIG_HIDDEN_BYTES_MAX bytes (16 x
	 * 183 per profile: the third profile goes over at its 13th path). */
	off = 0;
	for (i = 0; i < 3; i++) {
		size_t k;

		off += (size_t)snprintf(text + off, sizeof(text) - off, "[profile p%zu]\n", i);
		for (k = 0; k < 16; k++) {
			path[100] = (char)('a' + k);
			off += (size_t)snprintf(text + off, sizeof(text) - off,
						"hidden_paths = %s\n", path);
		}
	}
	assert_true(off < sizeof(text));
	assert_int_equal(load_text(f, text), -EINVAL);
	assert_error_at(f, 2 * 17 + 1 + 13,
			"the paths of all profiles together are longer than 8192 bytes");
	config_free(&f->cfg);

	/* A reload reads the same bytes with the same rule. */
	snprintf(text, sizeof(text), "[profile h]\nhidden_paths = /opt/x\n");
	assert_int_equal(config_load_buffer(&f->cfg, "reload.conf", text, strlen(text), f->err,
					    sizeof(f->err)),
			 -EINVAL);
	if (strncmp(f->err, "reload.conf:2: hidden_paths: /opt/x is neither", 46) != 0)
		fail_msg("reload error: %s", f->err);
}

/* The base of test_sandbox_changed, with a hole for each part a case varies. */
#define SC_TEXT(daemon, mounts, hosts, extra, argv)                                                \
	"[daemon]\n" daemon "[mount a]\nsource = /usr/share\ntarget = /data/a\n"                   \
	"[mount b]\nsource = /usr/lib\ntarget = /opt/b\n"                                          \
	"[profile p]\nnetwork = proxy\nallow_hosts = " hosts "\n" mounts extra                     \
	"[runtime r]\nargv = " argv " {code}\ncode_name = m.py\n"

/* Load text into *ret (config_free() it), with the fixture's file. */
static void
load_into(struct fixture *f, const char *text, struct config *ret)
{
	if (load_text(f, text) < 0)
		fail_msg("%s", f->err);
	*ret = f->cfg;
	memset(&f->cfg, 0, sizeof(f->cfg));
}

/*
 * Issue 28, point 6: which reloads change what a live interpreter's sandbox
 * is made with (its profile's mounts, by name and binding, network and
 * allow-list, switches, limits; its runtime) and which do not (another
 * profile, [daemon] settings, the profile's access list or blocked_imports,
 * which are read per request; mounts renumbered).
 */
static void
test_sandbox_changed(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *text;
		const char *why; /* NULL: not changed */
	} cases[] = {
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:80", "", "/usr/bin/python3"), NULL},
		{SC_TEXT("max_runs = 3\n", "mounts = a\n", "x.test:80, y.test:80",
			 "allow_users = root\nblocked_imports = os\n[profile q]\nmounts = b\n",
			 "/usr/bin/python3"),
		 NULL},
		/* b first: renumbered, the same binding */
		{"[mount b]\nsource = /usr/lib\ntarget = /opt/b\n"
		 "[mount a]\nsource = /usr/share\ntarget = /data/a\n"
		 "[profile p]\nnetwork = proxy\nallow_hosts = x.test:80, y.test:80\nmounts = a\n"
		 "[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\n",
		 NULL},
		{SC_TEXT("", "", "x.test:80, y.test:80", "", "/usr/bin/python3"), "mounts"},
		{SC_TEXT("", "mounts = b\n", "x.test:80, y.test:80", "", "/usr/bin/python3"),
		 "mounts"},
		{"[mount a]\nsource = /usr/include\ntarget = /data/a\n"
		 "[profile p]\nnetwork = proxy\nallow_hosts = x.test:80, y.test:80\nmounts = a\n"
		 "[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\n",
		 "mounts"},
		{SC_TEXT("", "mounts = a\n", "x.test:80", "", "/usr/bin/python3"), "allow-list"},
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:443", "", "/usr/bin/python3"),
		 "allow-list"},
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:80", "network_bytes = 1M\n",
			 "/usr/bin/python3"),
		 "allow-list"},
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:80", "file_write = false\n",
			 "/usr/bin/python3"),
		 "file_write"},
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:80",
			 "background_processes = true\n", "/usr/bin/python3"),
		 "background_processes"},
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:80", "memory_bytes = 64M\n",
			 "/usr/bin/python3"),
		 "limits"},
		{SC_TEXT("", "", "x.test:80", "", "/usr/bin/python3"), "mounts, allow-list"},
		{SC_TEXT("", "mounts = a\n", "x.test:80, y.test:80", "", "/usr/bin/python3 -I"),
		 "runtime"},
		{"[profile other]\nwall_ms = 1000\n"
		 "[runtime r]\nargv = /usr/bin/python3 {code}\ncode_name = m.py\n",
		 "the profile is gone"},
	};
	struct config base, n;
	char why[96];
	size_t i;

	load_into(f, cases[0].text, &base);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool changed;

		load_into(f, cases[i].text, &n);
		memset(why, 'x', sizeof(why));
		changed = config_sandbox_changed(&base, &n, "p", "r", why, sizeof(why));
		if (changed != (cases[i].why != NULL) ||
		    strcmp(why, cases[i].why != NULL ? cases[i].why : "") != 0)
			fail_msg("case %zu: changed %d, why '%.*s'", i, changed, (int)sizeof(why),
				 why);
		config_free(&n);
	}
	/* No room for the reasons: the answer stands. */
	load_into(f, cases[3].text, &n);
	assert_true(config_sandbox_changed(&base, &n, "p", "r", NULL, 0));
	assert_false(config_sandbox_changed(&base, &base, "p", "r", NULL, 0));
	/* A runtime that is not there (any longer) */
	assert_true(config_sandbox_changed(&base, &n, "p", "no-such", why, sizeof(why)));
	assert_non_null(strstr(why, "the runtime is gone"));
	config_free(&n);
	config_free(&base);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mounts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_runtimes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_imports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prestart_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interpreter_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_runtimes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peer_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sandbox_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile_egress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_free, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden_paths, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
