/* sbx.c: helpers shared by the sandboxed-run integration tests. */
#include "sbx.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* Print the daemon's log to stderr, for a failing test. */
static void
sbx_print_log(const struct sbx *s)
{
	char line[512];
	FILE *f = fopen(s->f.log, "re");

	if (f == NULL)
		return;
	fprintf(stderr, "---- %s\n", s->f.log);
	while (fgets(line, sizeof(line), f) != NULL)
		fputs(line, stderr);
	fclose(f);
}

int
sbx_start(struct sbx *s, const char *extra_config)
{
	return sbx_start_slots(s, 0, extra_config);
}

int
sbx_start_slots(struct sbx *s, unsigned nslots, const char *extra_config)
{
	char config[1024];
	unsigned count;
	int r;

	memset(s, 0, sizeof(*s));
	r = fixture_uid_range(&s->uid_base, &s->uid_count);
	if (r < 0) {
		fprintf(stderr, "fixture_uid_range: %s\n", strerror(-r));
		return r;
	}
	count = nslots > 0 ? 2 * nslots : s->uid_count;
	if (count > s->uid_count) {
		fprintf(stderr, "%u uid slots do not fit the test's range of %u uids\n", nslots,
			s->uid_count);
		return -ERANGE;
	}
	snprintf(config, sizeof(config), "[sandbox]\nuid_base = %u\nuid_count = %u\n%s",
		 s->uid_base, count, extra_config ? extra_config : "");
	r = fixture_start(&s->f, config);
	if (r < 0) {
		fprintf(stderr, "fixture_start: %s\n", strerror(-r));
		sbx_print_log(s);
		return r;
	}
	r = airlock_connect(s->f.sock, &s->conn);
	if (r < 0) {
		fprintf(stderr, "airlock_connect: %s\n", strerror(-r));
		sbx_print_log(s);
		fixture_stop(&s->f);
		return r;
	}
	return 0;
}

int
sbx_stop(struct sbx *s)
{
	int r;

	airlock_conn_free(s->conn);
	s->conn = NULL;
	if (!fixture_alive(&s->f)) {
		fprintf(stderr, "the daemon died during the tests\n");
		sbx_print_log(s);
	}
	r = fixture_stop(&s->f);
	if (r != 0)
		fprintf(stderr, "fixture_stop: %d\n", r);
	return r;
}

struct airlock_run_req *
sbx_req(const char *runtime, const char *code)
{
	struct airlock_run_req *req = NULL;

	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, runtime), 0);
	if (code != NULL)
		assert_int_equal(airlock_run_req_set_code(req, code, strlen(code)), 0);
	return req;
}

void
sbx_limit(struct airlock_run_req *req, enum airlock_limit limit, uint64_t value)
{
	assert_int_equal(airlock_run_req_set_limit(req, limit, value), 0);
}

struct airlock_result *
sbx_run(struct sbx *s, struct airlock_run_req *req)
{
	struct airlock_result *res = NULL;
	int r = airlock_run(s->conn, req, &res);

	airlock_run_req_free(req);
	if (r < 0) {
		const char *code = "", *msg = "";

		airlock_conn_last_error(s->conn, &code, &msg);
		fprintf(stderr, "airlock_run: %s (%s: %s)\n", strerror(-r), code, msg);
		sbx_print_log(s);
	}
	assert_int_equal(r, 0);
	assert_non_null(res);
	return res;
}

/* Copy (data, len) into a NUL-terminated string. */
static char *
sbx_strndup(const void *data, size_t len)
{
	char *s = malloc(len + 1);

	assert_non_null(s);
	memcpy(s, data, len);
	s[len] = '\0';
	return s;
}

char *
sbx_stdout(const struct airlock_result *res)
{
	const void *d;
	size_t n;

	assert_int_equal(airlock_result_stdout(res, &d, &n), 0);
	return sbx_strndup(d, n);
}

char *
sbx_stderr(const struct airlock_result *res)
{
	const void *d;
	size_t n;

	assert_int_equal(airlock_result_stderr(res, &d, &n), 0);
	return sbx_strndup(d, n);
}

char *
sbx_artifact(const struct airlock_result *res, size_t i)
{
	const void *d;
	size_t n;

	assert_int_equal(airlock_result_artifact_data(res, i, &d, &n), 0);
	return sbx_strndup(d, n);
}

long
sbx_artifact_find(const struct airlock_result *res, const char *name)
{
	size_t i;

	for (i = 0; i < airlock_result_artifact_count(res); i++)
		if (strcmp(airlock_result_artifact_name(res, i), name) == 0)
			return (long)i;
	return -1;
}

void
sbx_dump(const struct airlock_result *res)
{
	char *out = sbx_stdout(res), *err = sbx_stderr(res);
	const char *e = airlock_result_error(res);
	size_t i;

	fprintf(stderr,
		"result: outcome %s exit %d signal %d wall_ms %llu cpu_ms %llu error %s\n"
		"stdout (%llu): %.2000s\nstderr (%llu): %.2000s\n",
		airlock_outcome_name(airlock_result_outcome(res)), airlock_result_exit_code(res),
		airlock_result_signal(res), (unsigned long long)airlock_result_wall_ms(res),
		(unsigned long long)airlock_result_cpu_ms(res), e ? e : "-",
		(unsigned long long)airlock_result_stdout_total(res), out,
		(unsigned long long)airlock_result_stderr_total(res), err);
	for (i = 0; i < airlock_result_artifact_count(res); i++)
		fprintf(stderr, "artifact %s (%llu bytes)\n", airlock_result_artifact_name(res, i),
			(unsigned long long)airlock_result_artifact_size(res, i));
	free(out);
	free(err);
}

void
sbx_assert_ok(const struct airlock_result *res)
{
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED ||
	    airlock_result_exit_code(res) != 0)
		sbx_dump(res);
	assert_int_equal(airlock_result_outcome(res), AIRLOCK_OUTCOME_EXITED);
	assert_int_equal(airlock_result_exit_code(res), 0);
}

uint64_t
sbx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
sbx_leftover(const struct sbx *s, int timeout_ms)
{
	uint64_t end = sbx_now_ms() + (uint64_t)timeout_ms;
	int n;

	for (;;) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		n = fixture_count_uid_procs(s->uid_base, s->uid_base + s->uid_count - 1);
		if (n == 0 || sbx_now_ms() >= end)
			return n;
		nanosleep(&ts, NULL);
	}
}
