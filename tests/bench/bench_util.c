/*
 * bench_util.c: airlock-bench's shared helpers (tests/bench/bench.h): the
 * clock, dying, waiting, percentiles and the summary line, the variant list.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
bench_die(const char *what, int err)
{
	fprintf(stderr, "airlock-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* Wait for pid; 0 when it exited 0. */
int
bench_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

int
bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
uint64_t
bench_pct(const uint64_t *s, size_t n, double pct)
{
	size_t k = (size_t)(pct / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return s[k - 1];
}

/* Parse "lib,cli,..." into a mask. */
unsigned
bench_parse_variants(const char *s)
{
	unsigned mask = 0;
	char *dup = strdup(s), *save = NULL, *tok;
	int v;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (v = 0; v < V_COUNT; v++)
			if (!strcmp(tok, bench_variant_names[v]))
				mask |= 1u << v;
	}
	free(dup);
	return mask;
}

/* Sort n samples (ns) of (v, p) and print their summary line (µs). */
void
bench_summary(const char *what, enum bench_variant v, size_t p, uint64_t *s, size_t n)
{
	qsort(s, n, sizeof(*s), bench_cmp_u64);
	printf("%s %s %s n=%zu median=%.1f p90=%.1f p99=%.1f min=%.1f max=%.1f\n", what,
	       bench_variant_names[v], bench_payloads[p].name, n, (double)bench_pct(s, n, 50) / 1e3,
	       (double)bench_pct(s, n, 90) / 1e3, (double)bench_pct(s, n, 99) / 1e3,
	       (double)s[0] / 1e3, (double)s[n - 1] / 1e3);
}
