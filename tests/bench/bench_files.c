/*
 * bench_files.c: airlock-bench's files loop (tests/bench/bench.h): a run
 * with one input file against one with many.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request of exec /bin/true with nfiles input files of size bytes each. */
static struct airlock_run_req *
bench_files_req(int nfiles, size_t size)
{
	struct airlock_run_req *req;
	char name[32], *data = calloc(1, size + 1);
	int i, r;

	if (data == NULL)
		bench_die("calloc", ENOMEM);
	memset(data, 'x', size);
	r = airlock_run_req_new(&req);
	if (r == 0)
		r = airlock_run_req_set_runtime(req, "exec");
	if (r == 0)
		r = airlock_run_req_add_arg(req, "/bin/true");
	for (i = 0; r == 0 && i < nfiles; i++) {
		snprintf(name, sizeof(name), "d%02d/f%04d.txt", i % 20, i);
		r = airlock_run_req_add_file(req, name, data, size);
	}
	free(data);
	if (r < 0)
		bench_die("files request", r);
	return req;
}

/* files ITERS N SIZE: a request with 1 input file against one with N (each
 * SIZE bytes), alternating, ITERS of each after 2 warm-up rounds; prints the
 * latency of each (µs), from the call to the result. */
int
bench_files(struct bench *b, int iters, int n, size_t size)
{
	struct airlock_run_req *req[2] = {bench_files_req(1, size), bench_files_req(n, size)};
	uint64_t *s[2] = {calloc((size_t)iters, sizeof(uint64_t)),
			  calloc((size_t)iters, sizeof(uint64_t))};
	struct airlock_result *res;
	size_t ok[2] = {0, 0};
	int it, k, r, failures = 0;
	uint64_t t0;

	if (s[0] == NULL || s[1] == NULL)
		bench_die("calloc", ENOMEM);
	for (it = -2; it < iters; it++)
		for (k = 0; k < 2; k++) {
			t0 = bench_now_ns();
			res = NULL; /* airlock_run leaves it unset when it fails */
			r = airlock_run(b->conn, req[(k + it + 2) % 2 == 0 ? 0 : 1], &res);
			if (r == 0 && airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED)
				r = -EIO;
			airlock_result_free(res);
			if (r < 0) {
				if (failures++ < 5)
					fprintf(stderr, "files: %s\n", strerror(-r));
				continue;
			}
			/* Only runs that exited count: a failed one is not a 0 µs
			 * sample. */
			if (it >= 0) {
				int w = (k + it + 2) % 2 == 0 ? 0 : 1;

				s[w][ok[w]++] = bench_now_ns() - t0;
			}
		}
	for (k = 0; k < 2; k++) {
		if (ok[k] == 0) {
			printf("files n=%d size=%zu iters=%d: no run exited\n", k == 0 ? 1 : n,
			       size, iters);
		} else {
			qsort(s[k], ok[k], sizeof(uint64_t), bench_cmp_u64);
			printf("files n=%d size=%zu iters=%zu median=%.1f p90=%.1f min=%.1f\n",
			       k == 0 ? 1 : n, size, ok[k],
			       (double)bench_pct(s[k], ok[k], 50) / 1e3,
			       (double)bench_pct(s[k], ok[k], 90) / 1e3, (double)s[k][0] / 1e3);
		}
		free(s[k]);
		airlock_run_req_free(req[k]);
	}
	fflush(stdout);
	return failures;
}
