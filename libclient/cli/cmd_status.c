/* cli/cmd_status.c: ping, info, ps, cancel. */
#include "airlock.h"
#include "cli.h"
#include "net.h"
#include "tool.h"
#include "util.h"
#include "compiler.h"
#include "fdio.h"
#include "limit.h"
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* `airlock ping`: one round trip. */
int
cli_ping(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args UNUSED)
{
	struct timespec t0;
	double ms;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = airlock_ping(conn);
	ms = cli_ms_since(&t0);
	if (r < 0)
		return cli_daemon_error(conn, "ping", r);
	if (cli->json)
		return cli_json_print(json_pack("{s:b, s:f}", "pong", 1, "rtt_ms", ms));
	printf("pong %.3f ms\n", ms);
	return CLI_EXIT_OK;
}

/* Does the daemon say which packages any runtime sees? */
static bool
cli_info_has_packages(const struct airlock_info *info)
{
	size_t i;

	for (i = 0; i < airlock_info_runtime_count(info); i++)
		if (airlock_info_runtime_packages(info, i) != NULL)
			return true;
	return false;
}

/* "runtime_packages": {"python-site": ["numpy", ...], "python": []}, if said. */
static int
cli_info_packages_json(const struct airlock_info *info, json_t *obj)
{
	json_t *map, *list;
	const char *p, *comma;
	size_t i;

	if (!cli_info_has_packages(info))
		return 0;
	map = json_object();
	if (map == NULL || json_object_set_new(obj, "runtime_packages", map) < 0)
		return -ENOMEM;
	for (i = 0; i < airlock_info_runtime_count(info); i++) {
		p = airlock_info_runtime_packages(info, i);
		if (p == NULL)
			continue;
		list = json_array();
		if (list == NULL ||
		    json_object_set_new(map, airlock_info_runtime_name(info, i), list) < 0)
			return -ENOMEM;
		while (*p != '\0') {
			comma = strchr(p, ',');
			if (comma == NULL)
				comma = p + strlen(p);
			if (json_array_append_new(list, json_stringn(p, (size_t)(comma - p))) < 0)
				return -ENOMEM;
			p = *comma == ',' ? comma + 1 : comma;
		}
	}
	return 0;
}

/* A proxy profile's "allow_hosts" and "allow_private_hosts" into p. */
static int
cli_info_allow_json(const struct airlock_info *info, size_t i, json_t *p)
{
	json_t *pub = json_array(), *priv = json_array();
	size_t k;

	if (json_object_set_new(p, "allow_hosts", pub) < 0 ||
	    json_object_set_new(p, "allow_private_hosts", priv) < 0)
		return -ENOMEM;
	for (k = 0; k < airlock_info_profile_allow_count(info, i); k++) {
		bool private_ok = false;
		const char *e = airlock_info_profile_allow(info, i, k, &private_ok);

		if (json_array_append_new(private_ok ? priv : pub, json_string(e)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A value of one of libairlock's enums, with its airlockd.conf(5) name. */
struct cli_named {
	int value;
	const char *name;
};

/* A profile's policy switches (enum airlock_profile_switch), by their names. */
static const struct cli_named cli_profile_switches[] = {
	{AIRLOCK_SWITCH_FILE_WRITE, "file_write"},
	{AIRLOCK_SWITCH_SUBPROCESS, "subprocess"},
};

/* A profile's lists of names (enum airlock_profile_list), by their keys. */
static const struct cli_named cli_profile_lists[] = {
	{AIRLOCK_PROFILE_MOUNTS, "mounts"},
	{AIRLOCK_PROFILE_ALLOW_MOUNTS, "allow_mounts"},
	{AIRLOCK_PROFILE_BLOCKED_IMPORTS, "blocked_imports"},
	{AIRLOCK_PROFILE_HIDDEN_PATHS, "hidden_paths"},
};

/* The lists profile i has (those with names) as arrays of p. */
static int
cli_info_lists_json(const struct airlock_info *info, size_t i, json_t *p)
{
	size_t l, k;
	json_t *a;

	for (l = 0; l < sizeof(cli_profile_lists) / sizeof(cli_profile_lists[0]); l++) {
		enum airlock_profile_list list =
			(enum airlock_profile_list)cli_profile_lists[l].value;

		if (airlock_info_profile_list_count(info, i, list) == 0)
			continue;
		a = json_array();
		if (a == NULL || json_object_set_new(p, cli_profile_lists[l].name, a) < 0)
			return -ENOMEM;
		for (k = 0; k < airlock_info_profile_list_count(info, i, list); k++)
			if (json_array_append_new(a, json_string(airlock_info_profile_list(
							     info, i, list, k))) < 0)
				return -ENOMEM;
	}
	return 0;
}

/* Mount i of `airlock info --json`: {"name", "target", "package": bool}. */
static json_t *
cli_info_mount_row(const void *list, size_t i)
{
	const struct airlock_info *info = list;

	return json_pack("{s:s, s:s, s:b}", "name", airlock_info_mount_name(info, i), "target",
			 airlock_info_mount_target(info, i), "package",
			 (int)airlock_info_mount_is_package(info, i));
}

/* "mounts": [{"name", "target", "package": bool}], if said. */
static int
cli_info_mounts_json(const struct airlock_info *info, json_t *obj)
{
	size_t n = airlock_info_mount_count(info);

	if (n == 0)
		return 0;
	if (json_object_set_new(obj, "mounts", cli_json_rows(info, n, cli_info_mount_row)) < 0)
		return -ENOMEM;
	return 0;
}

/* "profiles": [{"name", "default": bool, "limits": {NAME: {default, ceiling}}, "network",
 * SWITCH: bool, LIST: [str]}], if said. */
static int
cli_info_profiles_json(const struct airlock_info *info, json_t *obj)
{
	json_t *list, *p, *lim;
	size_t i, s;
	int l;

	if (airlock_info_profile_count(info) == 0)
		return 0;
	list = json_array();
	if (list == NULL || json_object_set_new(obj, "profiles", list) < 0)
		return -ENOMEM;
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		lim = json_object();
		p = json_pack("{s:s, s:b, s:o, s:s}", "name", airlock_info_profile_name(info, i),
			      "default", (int)airlock_info_profile_is_default(info, i), "limits",
			      lim, "network",
			      airlock_info_profile_network(info, i) ? "proxy" : "none");
		if (p == NULL || json_array_append_new(list, p) < 0)
			return -ENOMEM;
		for (s = 0; s < sizeof(cli_profile_switches) / sizeof(cli_profile_switches[0]); s++)
			if (json_object_set_new(
				    p, cli_profile_switches[s].name,
				    json_boolean(airlock_info_profile_switch(
							 info, i,
							 (enum airlock_profile_switch)
								 cli_profile_switches[s]
									 .value) != 0)) < 0)
				return -ENOMEM;
		if (airlock_info_profile_network(info, i) && cli_info_allow_json(info, i, p) < 0)
			return -ENOMEM;
		if (cli_info_lists_json(info, i, p) < 0)
			return -ENOMEM;
		for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
			enum airlock_limit k = (enum airlock_limit)l;
			json_t *v = json_pack("{s:I, s:I}", "default",
					      (json_int_t)airlock_info_profile_limit(info, i, k),
					      "ceiling",
					      (json_int_t)airlock_info_profile_ceiling(info, i, k));

			if (json_object_set_new(lim, airlock_limit_name(k), v) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* `airlock info` as text: the profiles, their main limits (--json has them all)
 * and the policy switches each turns off ("-": none). */
static void
cli_info_profiles_text(const struct airlock_info *info)
{
	static const enum airlock_limit shown[] = {AIRLOCK_LIMIT_WALL_MS, AIRLOCK_LIMIT_CPU_MS,
						   AIRLOCK_LIMIT_MEMORY_BYTES,
						   AIRLOCK_LIMIT_PROCESSES};
	size_t i, k;

	if (airlock_info_profile_count(info) == 0)
		return;
	printf("%-20s", "profile (* default)");
	for (k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
		printf(" %14s", airlock_limit_name(shown[k]));
	printf(" %s\n", "off");
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		const char *sep = " ";

		printf("%c %-18s", airlock_info_profile_is_default(info, i) ? '*' : ' ',
		       airlock_info_profile_name(info, i));
		for (k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
			printf(" %14" PRIu64, airlock_info_profile_limit(info, i, shown[k]));
		for (k = 0; k < sizeof(cli_profile_switches) / sizeof(cli_profile_switches[0]); k++)
			if (airlock_info_profile_switch(
				    info, i,
				    (enum airlock_profile_switch)cli_profile_switches[k].value) ==
			    0) {
				printf("%s%s", sep, cli_profile_switches[k].name);
				sep = ",";
			}
		printf("%s\n", sep[0] == ' ' ? " -" : "");
		/* network = proxy: where its runs may connect (the rest have no network). */
		for (k = 0; k < airlock_info_profile_allow_count(info, i); k++) {
			bool private_ok = false;
			const char *e = airlock_info_profile_allow(info, i, k, &private_ok);

			printf("%s%s%s", k == 0 ? "    network: proxy to " : ", ", e,
			       private_ok ? " (private addresses allowed)" : "");
		}
		if (airlock_info_profile_network(info, i))
			printf("\n");
		for (k = 0; k < sizeof(cli_profile_lists) / sizeof(cli_profile_lists[0]); k++) {
			enum airlock_profile_list list =
				(enum airlock_profile_list)cli_profile_lists[k].value;
			size_t j, n = airlock_info_profile_list_count(info, i, list);

			for (j = 0; j < n; j++)
				printf("%s%s", j == 0 ? "    " : ", ",
				       airlock_info_profile_list(info, i, list, j));
			if (n > 0)
				printf(" (%s%s)\n", cli_profile_lists[k].name,
				       list == AIRLOCK_PROFILE_BLOCKED_IMPORTS
					       ? ": reported in the result, not refused"
				       : list == AIRLOCK_PROFILE_HIDDEN_PATHS
					       ? ": not there in its runs"
					       : "");
		}
	}
	if (airlock_info_mount_count(info) == 0)
		return;
	printf("%-20s %-8s %s\n", "mount", "kind", "target (read-only)");
	for (i = 0; i < airlock_info_mount_count(info); i++)
		printf("  %-18s %-8s %s\n", airlock_info_mount_name(info, i),
		       airlock_info_mount_is_package(info, i) ? "package" : "data",
		       airlock_info_mount_target(info, i));
}

/* The daemon's capacity figures: key in --json, words in the text. */
static const struct {
	enum airlock_capacity what;
	const char *key, *text;
} cli_capacity[] = {
	{AIRLOCK_CAPACITY_RUNS, "max_runs", "run slots (runs and running cells), all users"},
	{AIRLOCK_CAPACITY_RUNS_PER_UID, "max_runs_per_uid", "run slots, one user"},
	{AIRLOCK_CAPACITY_INTERPRETERS, "max_interpreters", "live interpreters, all users"},
	{AIRLOCK_CAPACITY_INTERPRETERS_PER_UID, "max_interpreters_per_uid",
	 "live interpreters, one user"},
};

/* info.capacity as JSON: {max_runs: n, ...}, only the figures the daemon said. */
static int
cli_info_capacity_json(const struct airlock_info *info, json_t *obj)
{
	json_t *cap = json_object();
	size_t i;

	if (cap == NULL || json_object_set_new(obj, "capacity", cap) < 0)
		return -1;
	for (i = 0; i < sizeof(cli_capacity) / sizeof(cli_capacity[0]); i++) {
		uint32_t v = airlock_info_capacity(info, cli_capacity[i].what);

		if (v != 0 && json_object_set_new(cap, cli_capacity[i].key, json_integer(v)) < 0)
			return -1;
	}
	return 0;
}

/* `airlock info` as JSON. */
static json_t *
cli_info_json(const struct airlock_info *info)
{
	json_t *obj, *rt, *lim;
	size_t i;
	int l;

	/* rt and lim are borrowed from obj, which owns them from the start. */
	obj = json_pack("{s:s, s:I, s:I, s:[], s:{}}", "daemon", airlock_info_daemon_version(info),
			"protocol", (json_int_t)airlock_info_protocol_version(info), "uid",
			(json_int_t)airlock_info_uid(info), "runtimes", "limits");
	if (obj == NULL)
		return NULL;
	rt = json_object_get(obj, "runtimes");
	lim = json_object_get(obj, "limits");
	for (i = 0; i < airlock_info_runtime_count(info); i++)
		if (json_array_append_new(rt, json_string(airlock_info_runtime_name(info, i))) < 0)
			goto fail;
	for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
		enum airlock_limit k = (enum airlock_limit)l;
		json_t *v = json_pack("{s:I, s:I}", "default",
				      (json_int_t)airlock_info_limit_default(info, k), "ceiling",
				      (json_int_t)airlock_info_limit_ceiling(info, k));

		if (json_object_set_new(lim, airlock_limit_name(k), v) < 0)
			goto fail;
	}
	if (airlock_info_resource_control(info) != NULL &&
	    json_object_set_new(obj, "resource_control",
				json_string(airlock_info_resource_control(info))) < 0)
		goto fail;
	if (cli_info_packages_json(info, obj) < 0 || cli_info_profiles_json(info, obj) < 0 ||
	    cli_info_mounts_json(info, obj) < 0 || cli_info_capacity_json(info, obj) < 0)
		goto fail;
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

/* `airlock info`: what the daemon offers this user. */
int
cli_info(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args UNUSED)
{
	struct airlock_info *info = NULL;
	size_t i;
	int l, r, status = CLI_EXIT_OK;

	r = airlock_info(conn, &info);
	if (r < 0) {
		status = cli_daemon_error(conn, "info", r);
		goto out;
	}
	if (cli->json) {
		status = cli_json_print(cli_info_json(info));
		goto out;
	}
	printf("daemon: %s\nprotocol: %" PRIu32 "\nuid: %" PRIu32 "\nruntimes:",
	       airlock_info_daemon_version(info), airlock_info_protocol_version(info),
	       airlock_info_uid(info));
	for (i = 0; i < airlock_info_runtime_count(info); i++)
		printf(" %s", airlock_info_runtime_name(info, i));
	printf("\nresource control: %s", airlock_info_resource_control(info) != NULL
						 ? airlock_info_resource_control(info)
						 : "unknown");
	if (cli_info_has_packages(info)) {
		printf("\npackages (numpy, pandas, matplotlib, scipy):");
		for (i = 0; i < airlock_info_runtime_count(info); i++) {
			const char *p = airlock_info_runtime_packages(info, i);
			size_t n;

			if (p == NULL)
				continue;
			printf("\n  %s:", airlock_info_runtime_name(info, i));
			if (*p == '\0')
				printf(" none");
			for (; *p != '\0'; p += n + (p[n] == ',')) {
				n = strcspn(p, ",");
				printf(" %.*s", (int)n, p);
			}
		}
	}
	for (i = 0; i < sizeof(cli_capacity) / sizeof(cli_capacity[0]); i++) {
		uint32_t v = airlock_info_capacity(info, cli_capacity[i].what);

		if (v != 0)
			printf("%s%s: %" PRIu32 " (%s)", i == 0 ? "\ncapacity:\n  " : "\n  ",
			       cli_capacity[i].key, v, cli_capacity[i].text);
	}
	printf("\n%-18s %20s %20s\n", "limit", "default", "ceiling");
	for (l = 0; airlock_limit_name((enum airlock_limit)l) != NULL; l++) {
		enum airlock_limit k = (enum airlock_limit)l;

		printf("%-18s %20" PRIu64 " %20" PRIu64 "\n", airlock_limit_name(k),
		       airlock_info_limit_default(info, k), airlock_info_limit_ceiling(info, k));
	}
	cli_info_profiles_text(info);
out:
	airlock_info_free(info);
	return status;
}

/* Run i of `airlock ps --json` (a list of objects, one per run). */
static json_t *
cli_ps_row(const void *list, size_t i)
{
	const struct airlock_ps *ps = list;

	return json_pack(
		"{s:I, s:s, s:s, s:I, s:I, s:I}", "id", (json_int_t)airlock_ps_run_id(ps, i),
		"runtime", airlock_ps_runtime(ps, i), "state", airlock_ps_state(ps, i),
		"elapsed_ms", (json_int_t)airlock_ps_elapsed_ms(ps, i), "pid",
		(json_int_t)airlock_ps_pid(ps, i), "uid", (json_int_t)airlock_ps_uid(ps, i));
}

/* `airlock ps`: the caller's runs in progress and queued, as a table. */
int
cli_ps(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args UNUSED)
{
	struct airlock_info *info = NULL;
	struct airlock_ps *ps = NULL;
	char elapsed[32], pid[16], cut[96];
	bool show_uid = false;
	size_t i, n;
	int r, status = CLI_EXIT_OK;

	r = airlock_ps(conn, &ps);
	snprintf(cut, sizeof(cut),
		 "%" PRIu64 " more runs not listed (the daemon lists %zu at most)",
		 airlock_ps_more(ps), airlock_ps_count(ps));
	status = cli_list_head(cli, conn, "ps", r, cli_daemon_error, ps, airlock_ps_count(ps),
			       cli_ps_row, airlock_ps_more(ps) > 0 ? cut : NULL);
	if (status >= 0)
		goto out;
	status = CLI_EXIT_OK;
	n = airlock_ps_count(ps);
	if (n > 0) {
		/* The uid the daemon sees us as decides whether a run is someone else's. */
		r = airlock_info(conn, &info);
		if (r < 0) {
			status = cli_daemon_error(conn, "ps: info", r);
			goto out;
		}
		for (i = 0; i < n; i++)
			if (airlock_ps_uid(ps, i) != airlock_info_uid(info))
				show_uid = true;
	}
	if (show_uid)
		printf("%-10s %-10s %-10s %-8s %9s %8s\n", "ID", "UID", "RUNTIME", "STATE",
		       "ELAPSED", "PID");
	else
		printf("%-10s %-10s %-8s %9s %8s\n", "ID", "RUNTIME", "STATE", "ELAPSED", "PID");
	for (i = 0; i < n; i++) {
		cli_format_elapsed(airlock_ps_elapsed_ms(ps, i), elapsed, sizeof(elapsed));
		if (airlock_ps_pid(ps, i) > 0)
			snprintf(pid, sizeof(pid), "%" PRId32, airlock_ps_pid(ps, i));
		else
			snprintf(pid, sizeof(pid), "-");
		printf("%-10" PRIu32 " ", airlock_ps_run_id(ps, i));
		if (show_uid)
			printf("%-10" PRIu32 " ", airlock_ps_uid(ps, i));
		printf("%-10s %-8s %9s %8s\n", airlock_ps_runtime(ps, i), airlock_ps_state(ps, i),
		       elapsed, pid);
	}
	status = cli_flushed(status);
out:
	airlock_info_free(info);
	airlock_ps_free(ps);
	return status;
}

/* `airlock cancel ID`: cancel one of the caller's runs by its run id (from
 * ps). It connects itself (conn NULL), once ID is known to be one. */
int
cli_cancel(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	const char *arg = args[0];
	uint64_t id;
	int r, status;

	if (cli_parse_count(arg, &id) < 0 || id > UINT32_MAX) {
		cli_errorf("cancel %s: not a run id (see airlock ps)\n", arg);
		return CLI_EXIT_USAGE;
	}
	status = cli_connect(cli, &conn);
	if (status != 0)
		return status;
	r = airlock_cancel_run(conn, (uint32_t)id);
	if (r == -ENOENT) {
		const char *code = NULL, *msg = NULL;

		/* The daemon's message says why (a cell: ended, idle, closed). */
		if (airlock_conn_last_error(conn, &code, &msg) < 0 || msg == NULL)
			msg = "no such run of yours in progress";
		cli_errorf("cancel %" PRIu64 ": %s\n", id, msg);
		status = CLI_EXIT_NOT_FOUND;
		goto out;
	}
	if (r < 0) {
		status = cli_daemon_error(conn, "cancel", r);
		goto out;
	}
	if (cli->json)
		status = cli_json_print(
			json_pack("{s:I, s:b}", "id", (json_int_t)id, "cancelled", 1));
out:
	airlock_conn_free(conn);
	return status;
}
