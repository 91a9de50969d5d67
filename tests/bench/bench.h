/*
 * bench.h: what the files of airlock-bench (tests/bench/, docs/performance.md)
 * share: the variants, the payloads, the client state, the helpers.
 *
 *   lib_bench.c        main: the options, the connections, the subcommands
 *   bench_util.c       the clock, percentiles, summaries, the variant list
 *   bench_run.c        one run of a payload through a variant (bench_one)
 *   bench_loops.c      latency and throughput, round-robin over variants
 *   bench_resources.c  the daemon's memory, what a network namespace costs
 *   bench_files.c      a run with many input files against one with one
 *   bench_cells.c      interpreter cells, their cancel, the stop between them
 */
#ifndef AIRLOCK_BENCH_H
#define AIRLOCK_BENCH_H

#include "airlock.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum bench_variant { V_LIB, V_CLI, V_BARE, V_NS, V_BWRAP, V_BASE, V_COUNT };
extern const char *const bench_variant_names[V_COUNT];

struct bench_payload {
	const char *name;
	const char *runtime; /* daemon runtime */
	const char *code;    /* daemon code, or NULL */
	const char *argv[8]; /* the command for every other variant (and exec) */
};

/* bench_run.c's table; its definition fails to compile if the count differs. */
#define BENCH_NPAYLOADS 4
extern const struct bench_payload bench_payloads[BENCH_NPAYLOADS];

struct bench {
	const char *socket;
	const char *cli;
	const char *bwrap;
	struct airlock_conn *conn;
	const char *base_socket;	/* the base variant's daemon, or NULL */
	struct airlock_conn *base_conn; /* to it */
	struct airlock_run_req *req[BENCH_NPAYLOADS];
	bool newnet;	       /* ns variant: CLONE_NEWNET or not */
	const char *mounts[8]; /* --mount NAME: lib and cli requests ask for it */
	int nmounts;
	size_t tput_payload; /* --payload N: what throughput clients run */
};

/* bench_util.c */
uint64_t bench_now_ns(void);
__attribute__((noreturn)) void bench_die(const char *what, int err);
int bench_wait(pid_t pid);
int bench_cmp_u64(const void *a, const void *b);
uint64_t bench_pct(const uint64_t *s, size_t n, double pct);
unsigned bench_parse_variants(const char *s);
void bench_summary(const char *what, enum bench_variant v, size_t p, uint64_t *s, size_t n);

/* bench_run.c */
int bench_one(struct bench *b, enum bench_variant v, size_t p);
void bench_make_reqs(struct bench *b);

/* bench_loops.c */
int bench_latency(struct bench *b, unsigned mask, int iters, int warmup, int chunk);
int bench_throughput(struct bench *b, unsigned mask, const int *clients, int nclients,
		     double seconds, int rounds);

/* bench_resources.c */
int bench_memory(struct bench *b, pid_t daemon, unsigned uid, const int *counts, int ncounts);
int bench_netns(struct bench *b, int iters, int blocks);

/* bench_files.c */
int bench_files(struct bench *b, int iters, int n, size_t size);

/* bench_cells.c */
int bench_cell(struct bench *b, int iters);
int bench_cellcancel(struct bench *b, int iters);
int bench_stopcont(int iters);

#endif
