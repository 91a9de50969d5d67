/*
 * bench_loops.c: airlock-bench's latency and throughput loops
 * (tests/bench/bench.h), round-robin over the variants.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* latency: ITERS rounds; each round runs every (variant, payload) CHUNK
 * times in a row (1: once), in an order shuffled each round. CHUNK > 1 is the
 * back-to-back mode: no think time between the runs of a pair, so a pool the
 * daemon refills between runs has to keep up. Prints one summary line per
 * pair (µs). */
int
bench_latency(struct bench *b, unsigned mask, int iters, int warmup, int chunk)
{
	size_t npairs = V_COUNT * BENCH_NPAYLOADS, k, p, per;
	uint64_t *samples;
	size_t nsamples[V_COUNT * BENCH_NPAYLOADS] = {0};
	int it, c, failures = 0;

	if (iters < 1 || chunk < 1 || iters > 100000 || chunk > 1000)
		return -EINVAL;
	per = (size_t)iters * (size_t)chunk;
	samples = calloc(npairs * per, sizeof(uint64_t));
	if (samples == NULL)
		bench_die("calloc", ENOMEM);
	size_t order[V_COUNT * BENCH_NPAYLOADS];
	unsigned seed = 12345;

	for (k = 0; k < npairs; k++)
		order[k] = k;
	for (it = -warmup; it < iters; it++) {
		/* A new order each round, so no pair always follows the same one. */
		for (k = npairs - 1; k > 0; k--) {
			size_t j = (size_t)rand_r(&seed) % (k + 1), t = order[k];

			order[k] = order[j];
			order[j] = t;
		}
		for (k = 0; k < npairs; k++) {
			size_t pair = order[k];
			enum bench_variant v = (enum bench_variant)(pair / BENCH_NPAYLOADS);

			p = pair % BENCH_NPAYLOADS;
			if (!(mask & (1u << v)))
				continue;
			for (c = 0; c < chunk; c++) {
				uint64_t t0 = bench_now_ns();
				int r = bench_one(b, v, p);

				if (r < 0) {
					if (failures++ < 5)
						fprintf(stderr, "latency %s %s: %s\n",
							bench_variant_names[v],
							bench_payloads[p].name, strerror(-r));
					continue;
				}
				if (it >= 0)
					samples[pair * per + nsamples[pair]++] =
						bench_now_ns() - t0;
			}
		}
	}
	for (k = 0; k < npairs; k++) {
		uint64_t *s = samples + k * per;
		size_t n = nsamples[k];

		if (!(mask & (1u << (k / BENCH_NPAYLOADS))))
			continue;
		if (n == 0) {
			printf("latency %s %s n=0\n", bench_variant_names[k / BENCH_NPAYLOADS],
			       bench_payloads[k % BENCH_NPAYLOADS].name);
			continue;
		}
		bench_summary("latency", (enum bench_variant)(k / BENCH_NPAYLOADS),
			      k % BENCH_NPAYLOADS, s, n);
	}
	free(samples);
	fflush(stdout);
	return failures;
}

/* One throughput slice: `clients` processes run b->tput_payload through v until
 * `ns` nanoseconds have passed. Adds completed runs and elapsed time. */
static void
bench_slice(struct bench *b, enum bench_variant v, int clients, uint64_t dur_ns, uint64_t *runs,
	    uint64_t *elapsed, uint64_t *errors)
{
	int go[2], res[2], i;
	pid_t *pids = calloc((size_t)clients, sizeof(pid_t));
	uint64_t t0, deadline;
	char c;

	if (pids == NULL || pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
		bench_die("slice", errno);
	for (i = 0; i < clients; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			bench_die("fork", errno);
		if (pids[i] == 0) {
			uint64_t cnt[2] = {0, 0}, end;
			int r;

			close(go[1]);
			close(res[0]);
			b->conn = NULL;
			b->base_conn = NULL;
			if (v == V_LIB || v == V_BASE) {
				r = airlock_connect(v == V_LIB ? b->socket : b->base_socket,
						    v == V_LIB ? &b->conn : &b->base_conn);
				if (r < 0)
					bench_die("connect", r);
			}
			if (read(go[0], &end, sizeof(end)) != sizeof(end))
				_exit(1);
			while (bench_now_ns() < end) {
				if (bench_one(b, v, b->tput_payload) == 0)
					cnt[0]++;
				else
					cnt[1]++;
			}
			if (write(res[1], cnt, sizeof(cnt)) != sizeof(cnt))
				_exit(1);
			airlock_conn_free(b->conn);
			airlock_conn_free(b->base_conn);
			_exit(0);
		}
	}
	close(go[0]);
	close(res[1]);
	/* Let every client connect first. */
	usleep(v == V_LIB || v == V_BASE ? 20000 + 2000 * (unsigned)clients : 5000);
	t0 = bench_now_ns();
	deadline = t0 + dur_ns;
	for (i = 0; i < clients; i++)
		if (write(go[1], &deadline, sizeof(deadline)) != sizeof(deadline))
			bench_die("go", errno);
	for (i = 0; i < clients; i++) {
		uint64_t cnt[2];

		if (read(res[0], cnt, sizeof(cnt)) == sizeof(cnt)) {
			*runs += cnt[0];
			*errors += cnt[1];
		}
	}
	*elapsed += bench_now_ns() - t0;
	for (i = 0; i < clients; i++)
		bench_wait(pids[i]);
	close(go[1]);
	close(res[0]);
	(void)c;
	free(pids);
}

/* throughput: for each client count, ROUNDS rounds over the variants (order
 * rotated), each variant getting SECONDS/ROUNDS per round. */
int
bench_throughput(struct bench *b, unsigned mask, const int *clients, int nclients, double seconds,
		 int rounds)
{
	int ci, rd, k;

	for (ci = 0; ci < nclients; ci++) {
		uint64_t runs[V_COUNT] = {0}, el[V_COUNT] = {0}, errs[V_COUNT] = {0};

		for (rd = 0; rd < rounds; rd++)
			for (k = 0; k < V_COUNT; k++) {
				enum bench_variant v =
					(enum bench_variant)((k + rd + ci) % V_COUNT);

				if (mask & (1u << v))
					bench_slice(b, v, clients[ci],
						    (uint64_t)(seconds / rounds * 1e9), &runs[v],
						    &el[v], &errs[v]);
			}
		for (k = 0; k < V_COUNT; k++)
			if (mask & (1u << k))
				printf("throughput %s clients=%d payload=%s runs=%llu "
				       "errors=%llu seconds=%.3f rate=%.1f\n",
				       bench_variant_names[k], clients[ci],
				       bench_payloads[b->tput_payload].name,
				       (unsigned long long)runs[k], (unsigned long long)errs[k],
				       (double)el[k] / 1e9,
				       el[k] ? (double)runs[k] / ((double)el[k] / 1e9) : 0.0);
		fflush(stdout);
	}
	return 0;
}
