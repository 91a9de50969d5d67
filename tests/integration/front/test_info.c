/*
 * test_info.c: ping and info against a real airlockd, through libairlock and
 * through the airlock command.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

#define FRONT_INFO_CONFIG "[sandbox]\nuid_base = 700000\n"

static int
setup(void **state)
{
	static struct fixture f;

	if (fixture_start(&f, FRONT_INFO_CONFIG) < 0)
		return -1;
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	return fixture_stop(*state) == 0 ? 0 : -1;
}

static const char *
cli_path(void)
{
	const char *p = getenv("AIRLOCK_CLI");

	return p != NULL ? p : "airlock";
}

/* Ping through the library; a second ping on the same connection works too. */
static void
test_lib_ping(void **state)
{
	struct fixture *f = *state;
	struct airlock_conn *conn = NULL;

	assert_int_equal(airlock_connect(f->sock, &conn), 0);
	assert_non_null(conn);
	assert_true(airlock_conn_fd(conn) >= 0);
	assert_int_equal(airlock_ping(conn), 0);
	assert_int_equal(airlock_ping(conn), 0);
	/* No error reply was sent on a healthy connection. */
	assert_int_equal(airlock_conn_last_error(conn, NULL, NULL), -ENOENT);
	airlock_conn_free(conn);
}

/* Info through the library: protocol, runtimes, limits, our uid. */
static void
test_lib_info(void **state)
{
	struct fixture *f = *state;
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;
	bool python = false, sh = false, exec = false, site = false;
	size_t i, n;
	int k;

	assert_int_equal(airlock_connect(f->sock, &conn), 0);
	assert_int_equal(airlock_info(conn, &info), 0);
	assert_non_null(info);
	assert_int_equal(airlock_info_protocol_version(info), 1);
	assert_non_null(strstr(airlock_info_daemon_version(info), AIRLOCK_VERSION));
	assert_int_equal(airlock_info_uid(info), 0);
	n = airlock_info_runtime_count(info);
	assert_true(n >= 3);
	for (i = 0; i < n; i++) {
		const char *name = airlock_info_runtime_name(info, i);

		assert_non_null(name);
		python |= strcmp(name, "python") == 0;
		sh |= strcmp(name, "sh") == 0;
		exec |= strcmp(name, "exec") == 0;
	}
	assert_null(airlock_info_runtime_name(info, n));
	/* python-site sees the host's python3-numpy; python (-I -S) sees none;
	 * sh and exec are not looked at. */
	for (i = 0; i < n; i++) {
		const char *name = airlock_info_runtime_name(info, i);
		const char *pkgs = airlock_info_runtime_packages(info, i);

		if (strcmp(name, "python-site") == 0) {
			assert_non_null(pkgs);
			assert_non_null(strstr(pkgs, "numpy"));
			site = true;
		} else if (strcmp(name, "python") == 0) {
			assert_non_null(pkgs);
			assert_string_equal(pkgs, "");
		} else if (strcmp(name, "sh") == 0 || strcmp(name, "exec") == 0) {
			assert_null(pkgs);
		}
	}
	assert_true(site);
	assert_null(airlock_info_runtime_packages(info, n));
	assert_null(airlock_info_runtime_packages(NULL, 0));
	assert_true(python);
	assert_true(sh);
	assert_true(exec);
	for (k = 0; airlock_limit_name((enum airlock_limit)k) != NULL; k++) {
		uint64_t def = airlock_info_limit_default(info, (enum airlock_limit)k);
		uint64_t ceil = airlock_info_limit_ceiling(info, (enum airlock_limit)k);

		assert_true(def > 0);
		assert_true(ceil > 0);
		assert_true(def <= ceil);
	}
	assert_int_equal(k, 11);
	/* Built-in defaults documented in airlockd.conf(5). */
	assert_int_equal(airlock_info_limit_default(info, AIRLOCK_LIMIT_WALL_MS), 10000);
	assert_int_equal(airlock_info_limit_ceiling(info, AIRLOCK_LIMIT_WALL_MS), 300000);
	airlock_info_free(info);
	/* The connection is still usable after info. */
	assert_int_equal(airlock_ping(conn), 0);
	airlock_conn_free(conn);
}

/* airlock --socket S ping exits 0 and says pong. */
static void
test_cli_ping(void **state)
{
	struct fixture *f = *state;
	char out[4096], err[4096];
	char *argv[] = {(char *)cli_path(), "--socket", f->sock, "ping", NULL};

	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "pong"));
}

/* The same command against a socket that does not exist fails. */
static void
test_cli_ping_no_daemon(void **state)
{
	struct fixture *f = *state;
	char out[4096], err[4096], path[200];
	char *argv[] = {(char *)cli_path(), "--socket", path, "ping", NULL};
	int r;

	snprintf(path, sizeof(path), "%s/no-such.sock", f->dir);
	r = front_run_cmd((uid_t)-1, 0, argv, out, sizeof(out), err, sizeof(err));
	assert_true(r > 0 && r < 125);
	assert_null(strstr(out, "pong"));
	assert_non_null(strstr(err, "no-such.sock"));
}

/* airlock --socket S info --json prints one JSON object describing the daemon. */
static void
test_cli_info_json(void **state)
{
	struct fixture *f = *state;
	char out[16384], err[4096];
	char *argv[] = {(char *)cli_path(), "--socket", f->sock, "info", "--json", NULL};
	json_error_t jerr;
	json_t *obj, *rts, *lim, *wall, *v;
	bool python = false, sh = false, exec = false;
	size_t i;
	const char *key;

	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, out, sizeof(out), err, sizeof(err)), 0);
	obj = json_loads(out, 0, &jerr);
	if (obj == NULL)
		fail_msg("info --json is not JSON (%s): %s", jerr.text, out);
	assert_true(json_is_object(obj));
	assert_int_equal(json_integer_value(json_object_get(obj, "protocol")), 1);
	assert_true(json_is_integer(json_object_get(obj, "uid")));
	assert_int_equal(json_integer_value(json_object_get(obj, "uid")), 0);
	rts = json_object_get(obj, "runtimes");
	assert_true(json_is_array(rts));
	json_array_foreach(rts, i, v)
	{
		const char *s = json_string_value(v);

		assert_non_null(s);
		python |= strcmp(s, "python") == 0;
		sh |= strcmp(s, "sh") == 0;
		exec |= strcmp(s, "exec") == 0;
	}
	assert_true(python && sh && exec);
	lim = json_object_get(obj, "limits");
	assert_true(json_is_object(lim));
	assert_int_equal(json_object_size(lim), 11);
	json_object_foreach(lim, key, v)
	{
		json_int_t def = json_integer_value(json_object_get(v, "default"));
		json_int_t ceil = json_integer_value(json_object_get(v, "ceiling"));

		assert_true(def > 0);
		assert_true(def <= ceil);
	}
	wall = json_object_get(lim, "wall_ms");
	assert_int_equal(json_integer_value(json_object_get(wall, "default")), 10000);
	/* runtime_packages: python-site lists numpy, python lists nothing. */
	v = json_object_get(obj, "runtime_packages");
	assert_true(json_is_object(v));
	assert_true(json_is_array(json_object_get(v, "python")));
	assert_int_equal(json_array_size(json_object_get(v, "python")), 0);
	assert_null(json_object_get(v, "sh"));
	rts = json_object_get(v, "python-site");
	assert_true(json_is_array(rts));
	json_array_foreach(rts, i, wall)
	{
		if (strcmp(json_string_value(wall), "numpy") == 0)
			break;
	}
	assert_true(i < json_array_size(rts));
	json_decref(obj);
}

/* airlock info names the packages of each python runtime, one line each. */
static void
test_cli_info_text(void **state)
{
	struct fixture *f = *state;
	char out[16384], err[4096];
	char *argv[] = {(char *)cli_path(), "--socket", f->sock, "info", NULL};

	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "\npackages (numpy, pandas, matplotlib, scipy):\n"));
	assert_non_null(strstr(out, "\n  python: none\n"));
	assert_non_null(strstr(out, "\n  python-site: numpy"));
}

/* Append printf output to a config being built; the buffer is large enough
 * for the config at every bound (about 40 KiB). */
static void
cfg_add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < size - *len);
	*len += (size_t)n;
}

/* A name of exactly 32 bytes: prefix, number, then 'x's. */
static const char *
name32(char *buf, const char *prefix, int i)
{
	int n = snprintf(buf, 33, "%s%d", prefix, i);

	memset(buf + n, 'x', (size_t)(32 - n));
	buf[32] = '\0';
	return buf;
}

#define MAX_PROFILES 28 /* with minimal, standard, generous and the implicit default: 32 */
#define MAX_RUNTIMES 10 /* with the six built-in: 16 */
#define MAX_MOUNTS 32

/*
 * info_ok at (near) every bound it lists, in one packet (64 KiB): 31
 * profiles of 32-byte names, each with allow-lists (the 16 KiB of all
 * profiles nearly spent), hidden paths (8 KiB) and mount names (4 KiB), 32
 * named mounts and 16 runtimes. It was estimated at about 60 KiB and never
 * sent. The daemon answers, and every entry arrives.
 */
static void
test_info_at_bounds(void **state)
{
	static char cfg[64 * 1024];
	struct fixture f;
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;
	char nm[33], host[200];
	size_t len = 0, i, hosts = 0, hidden = 0, allowed = 0;
	int p, k;

	(void)state;
	cfg_add(cfg, sizeof(cfg), &len,
		"[sandbox]\nuid_base = 702048\nuid_count = 64\n[egress]\nresolver = 127.0.0.1\n");
	for (k = 0; k < MAX_MOUNTS; k++)
		cfg_add(cfg, sizeof(cfg), &len,
			"[mount %s]\nsource = /usr/share\ntarget = /data/m%d\n", name32(nm, "m", k),
			k);
	for (k = 0; k < MAX_RUNTIMES; k++)
		cfg_add(cfg, sizeof(cfg), &len,
			"[runtime %s]\nargv = /usr/bin/python3 -I -S {code}\ncode_name = main.py\n",
			name32(nm, "r", k));
	for (p = 0; p < MAX_PROFILES; p++) {
		cfg_add(cfg, sizeof(cfg), &len, "[profile %s]\nnetwork = proxy\n",
			name32(nm, "p", p));
		/* 3 entries of 180 bytes: 15 KiB of the 16 */
		for (k = 0; k < 3; k++) {
			int n = snprintf(host, sizeof(host), "h%d-%d.", p, k);

			memset(host + n, 'a', 60);
			memcpy(host + n + 60, ".", 1);
			memset(host + n + 61, 'b', 60);
			snprintf(host + n + 121, sizeof(host) - (size_t)n - 121,
				 ".example.com:443, 80");
			cfg_add(cfg, sizeof(cfg), &len, "allow_hosts = %s\n", host);
		}
		/* 2 paths of 140 bytes: 7.8 KiB of the 8 */
		for (k = 0; k < 2; k++) {
			int n = snprintf(host, sizeof(host), "/usr/share/h%d_%d_", p, k);

			memset(host + n, 'd', (size_t)(140 - n));
			host[140] = '\0';
			cfg_add(cfg, sizeof(cfg), &len, "hidden_paths = %s\n", host);
		}
		/* 4 mount names of 32 bytes: 3.8 KiB of the 4, every mount named
		 * (the key is not repeatable: one line) */
		cfg_add(cfg, sizeof(cfg), &len, "allow_mounts = %s",
			name32(nm, "m", (4 * p) % MAX_MOUNTS));
		for (k = 1; k < 4; k++)
			cfg_add(cfg, sizeof(cfg), &len, ", %s",
				name32(nm, "m", (4 * p + k) % MAX_MOUNTS));
		cfg_add(cfg, sizeof(cfg), &len, "\n");
	}
	assert_int_equal(fixture_start(&f, cfg), 0);
	assert_int_equal(airlock_connect(f.sock, &conn), 0);
	assert_int_equal(airlock_info(conn, &info), 0);
	assert_int_equal(airlock_info_profile_count(info), 32);
	assert_int_equal(airlock_info_runtime_count(info), MAX_RUNTIMES + 6);
	assert_int_equal(airlock_info_mount_count(info), MAX_MOUNTS);
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		hosts += airlock_info_profile_allow_count(info, i);
		hidden += airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS);
		allowed += airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_ALLOW_MOUNTS);
	}
	assert_int_equal(hosts, 3 * MAX_PROFILES);
	assert_int_equal(hidden, 2 * MAX_PROFILES);
	assert_int_equal(allowed, 4 * MAX_PROFILES);
	/* The last profile's last hidden path came whole. */
	for (i = 0; i < airlock_info_profile_count(info); i++)
		if (strcmp(airlock_info_profile_name(info, i), name32(nm, "p", MAX_PROFILES - 1)) ==
		    0)
			assert_int_equal(strlen(airlock_info_profile_list(
						 info, i, AIRLOCK_PROFILE_HIDDEN_PATHS, 1)),
					 140);
	airlock_info_free(info);
	assert_int_equal(airlock_ping(conn), 0);
	airlock_conn_free(conn);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * A profile's egress allow-list in info: the entries of allow_hosts first,
 * then those of allow_private_hosts, each in the order written, whatever
 * the order of the lines (info.c builds them as two runs of one list).
 */
static void
test_info_egress_lists(void **state)
{
	static const char cfg[] = "[sandbox]\nuid_base = 702112\nuid_count = 64\n"
				  "[egress]\nresolver = 127.0.0.1\n"
				  "[profile net]\nnetwork = proxy\n"
				  "allow_hosts = pypi.org:443\n"
				  "allow_private_hosts = registry.lan:5000\n"
				  "allow_hosts = *.example.com:80, 443\n";
	static const struct {
		const char *text;
		bool private;
	} want[] = {
		{"pypi.org:443", false},
		{"*.example.com:80,443", false},
		{"registry.lan:5000", true},
	};
	struct fixture f;
	struct airlock_conn *conn = NULL;
	struct airlock_info *info = NULL;
	size_t i, k, found = 0;

	(void)state;
	assert_int_equal(fixture_start(&f, cfg), 0);
	assert_int_equal(airlock_connect(f.sock, &conn), 0);
	assert_int_equal(airlock_info(conn, &info), 0);
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		if (strcmp(airlock_info_profile_name(info, i), "net") != 0) {
			assert_int_equal(airlock_info_profile_allow_count(info, i), 0);
			continue;
		}
		found++;
		assert_true(airlock_info_profile_network(info, i));
		assert_int_equal(airlock_info_profile_allow_count(info, i), 3);
		for (k = 0; k < 3; k++) {
			bool private = !want[k].private;
			const char *e = airlock_info_profile_allow(info, i, k, &private);

			assert_non_null(e);
			assert_string_equal(e, want[k].text);
			assert_int_equal(private, want[k].private);
		}
		assert_null(airlock_info_profile_allow(info, i, 3, NULL));
	}
	assert_int_equal(found, 1);
	airlock_info_free(info);
	airlock_conn_free(conn);
	assert_int_equal(fixture_stop(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lib_ping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lib_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_ping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_ping_no_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_info_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_info_text, setup, teardown),
		cmocka_unit_test(test_info_at_bounds),
		cmocka_unit_test(test_info_egress_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
