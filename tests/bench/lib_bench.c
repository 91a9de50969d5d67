/*
 * lib_bench.c: the measuring loops of the Airlock benchmark (tests/bench/):
 * main, its options and subcommands; the loops are in the files that
 * tests/bench/bench.h lists, one per thing measured.
 *
 * One executable, several subcommands; tests/bench/bench.py drives it:
 *   latency    one run at a time, round-robin over variants and payloads;
 *              with CHUNK > 1 each pair runs CHUNK times back to back (no
 *              think time) before the next pair of the round (bench_loops.c)
 *   throughput C concurrent clients for a fixed time, round-robin over variants
 *              (bench_loops.c)
 *   memory     VmRSS of the daemon's two processes, idle and with N runs live
 *              (bench_resources.c)
 *   netns      the clone program with and without CLONE_NEWNET: wall and CPU
 *              (bench_resources.c)
 *   files      a request with 1 input file against one with N (bench_files.c)
 *   cell, cellcancel, stopcont
 *              interpreter cells, the cancel of a running one, the stop
 *              between cells alone (bench_cells.c)
 *   once, loop one run of a pair; N runs of it with a pause (here)
 *
 * Variants of one run (bench_run.c):
 *   lib    airlock_run() on one long-lived connection (libairlock)
 *   cli    fork/exec of the airlock command
 *   bare   fork + exec of the payload, output through a pipe
 *   ns     clone into new user/mount/pid/ipc/uts/net namespaces, uid map, a
 *          tmpfs root with /usr bound read-only, /proc, pivot_root, exec
 *   bwrap  fork/exec of bubblewrap with the same namespaces
 *   base   as lib, through a second daemon (--base-socket): the build the
 *          change is measured against, side by side in the same run
 * Every variant reads the payload's stdout and stderr to EOF and waits for it.
 */
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void __attribute__((noreturn)) bench_usage(void)
{
	fprintf(stderr,
		"usage: airlock-bench [--socket S] [--base-socket S] [--cli PATH] [--bwrap PATH]\n"
		"                     [--variants LIST]\n"
		"                     [--mount NAME]... (lib requests ask for these [mount]s)\n"
		"                     [--payload INDEX] (what throughput runs; 0: /bin/true)\n"
		"         latency ITERS WARMUP [CHUNK]\n"
		"       | throughput SECONDS ROUNDS CLIENTS...\n"
		"       | memory DAEMON_PID FRONTEND_UID COUNT...\n"
		"       | netns ITERS BLOCKS\n"
		"       | files ITERS N SIZE\n"
		"       | cell ITERS\n"
		"       | cellcancel ITERS\n"
		"       | stopcont ITERS\n"
		"       | once VARIANT PAYLOAD_INDEX\n"
		"       | loop VARIANT PAYLOAD_INDEX N PAUSE_MS\n");
	exit(2);
}

/* The options before the subcommand, into b and *mask; the subcommand's index
 * in argv. */
static int
bench_options(int argc, char **argv, struct bench *b, unsigned *mask)
{
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--socket"))
			b->socket = argv[i + 1];
		else if (!strcmp(argv[i], "--base-socket"))
			b->base_socket = argv[i + 1];
		else if (!strcmp(argv[i], "--cli"))
			b->cli = argv[i + 1];
		else if (!strcmp(argv[i], "--bwrap"))
			b->bwrap = argv[i + 1];
		else if (!strcmp(argv[i], "--variants"))
			*mask = bench_parse_variants(argv[i + 1]);
		else if (!strcmp(argv[i], "--mount") && b->nmounts < 8)
			b->mounts[b->nmounts++] = argv[i + 1];
		else if (!strcmp(argv[i], "--payload") &&
			 strtoul(argv[i + 1], NULL, 10) < BENCH_NPAYLOADS)
			b->tput_payload = strtoul(argv[i + 1], NULL, 10);
		else
			bench_usage();
	}
	if (i >= argc)
		bench_usage();
	return i;
}

/* The run requests and the connections that cmd with the variants of mask
 * needs; usage when a socket it needs is missing. */
static void
bench_connect(struct bench *b, const char *cmd, unsigned mask)
{
	int r;

	if (b->socket == NULL && (mask & (1u << V_LIB | 1u << V_CLI) || !strcmp(cmd, "memory")) &&
	    strcmp(cmd, "netns") != 0 && strcmp(cmd, "once") != 0 && strcmp(cmd, "stopcont") != 0)
		bench_usage();
	if (b->base_socket == NULL && (mask & 1u << V_BASE))
		bench_usage();
	if (b->socket != NULL && strcmp(cmd, "netns") != 0) {
		bench_make_reqs(b);
		r = airlock_connect(b->socket, &b->conn);
		if (r < 0)
			bench_die("connect", r);
	}
	if (b->base_socket != NULL && (mask & 1u << V_BASE)) {
		r = airlock_connect(b->base_socket, &b->base_conn);
		if (r < 0)
			bench_die("connect base", r);
	}
}

/* The first variant of a "lib,cli,..." list; V_COUNT when none. */
static int
bench_first_variant(const char *list)
{
	unsigned v = bench_parse_variants(list);
	int k;

	for (k = 0; k < V_COUNT && !(v & (1u << k)); k++)
		;
	return k;
}

/* loop VARIANT PAYLOAD N PAUSE_MS: N runs of one pair, a pause after each
 * (for tracing; 0: back to back); their summary. */
static int
bench_loop(struct bench *b, char **av)
{
	int k = bench_first_variant(av[0]);
	int n = atoi(av[2]), j, r;
	size_t p = (size_t)atoi(av[1]);
	uint64_t *s = calloc(n > 0 ? (size_t)n : 1, sizeof(uint64_t));

	if (s == NULL)
		bench_die("calloc", ENOMEM);
	for (j = 0, r = 0; j < n && k < V_COUNT && p < BENCH_NPAYLOADS && r == 0; j++) {
		uint64_t t0 = bench_now_ns();

		r = bench_one(b, (enum bench_variant)k, p);
		s[j] = bench_now_ns() - t0;
		usleep((unsigned)atoi(av[3]) * 1000u);
	}
	if (r == 0 && j > 0)
		bench_summary("loop", (enum bench_variant)k, p, s, (size_t)j);
	free(s);
	return r;
}

/* once VARIANT PAYLOAD: one run of one pair. */
static int
bench_once(struct bench *b, char **av)
{
	int k = bench_first_variant(av[0]), r;

	r = k < V_COUNT ? bench_one(b, (enum bench_variant)k, (size_t)atoi(av[1])) : -EINVAL;
	if (r < 0)
		fprintf(stderr, "once: %s\n", strerror(-r));
	return r;
}

/* atoi of each of av[0..n), at most 16 of them, into out; their count. */
static int
bench_ints(char **av, int n, int out[16])
{
	int k;

	for (k = 0; k < n && k < 16; k++)
		out[k] = atoi(av[k]);
	return k;
}

/* Run subcommand cmd with its n arguments av; usage when they do not fit. */
static int
bench_command(struct bench *b, unsigned mask, const char *cmd, int n, char **av)
{
	int list[16];

	if (!strcmp(cmd, "latency") && (n == 2 || n == 3))
		return bench_latency(b, mask, atoi(av[0]), atoi(av[1]), n == 3 ? atoi(av[2]) : 1);
	if (!strcmp(cmd, "throughput") && n >= 3)
		return bench_throughput(b, mask, list, bench_ints(av + 2, n - 2, list), atof(av[0]),
					atoi(av[1]));
	if (!strcmp(cmd, "memory") && n >= 3)
		return bench_memory(b, (pid_t)atoi(av[0]), (unsigned)atoi(av[1]), list,
				    bench_ints(av + 2, n - 2, list));
	if (!strcmp(cmd, "files") && n == 3)
		return bench_files(b, atoi(av[0]), atoi(av[1]), (size_t)atol(av[2]));
	if (!strcmp(cmd, "cell") && n == 1)
		return bench_cell(b, atoi(av[0]));
	if (!strcmp(cmd, "cellcancel") && n == 1)
		return bench_cellcancel(b, atoi(av[0]));
	if (!strcmp(cmd, "stopcont") && n == 1)
		return bench_stopcont(atoi(av[0]));
	if (!strcmp(cmd, "netns") && n == 2)
		return bench_netns(b, atoi(av[0]), atoi(av[1]));
	if (!strcmp(cmd, "loop") && n == 4)
		return bench_loop(b, av);
	if (!strcmp(cmd, "once") && n == 2)
		return bench_once(b, av);
	bench_usage();
}

int
main(int argc, char **argv)
{
	struct bench b = {.cli = "airlock", .bwrap = "/usr/bin/bwrap", .newnet = true};
	unsigned mask = (1u << V_BASE) - 1;
	int i, r, k;
	const char *cmd;

	signal(SIGPIPE, SIG_IGN);
	i = bench_options(argc, argv, &b, &mask);
	cmd = argv[i++];
	bench_connect(&b, cmd, mask);
	r = bench_command(&b, mask, cmd, argc - i, argv + i);
	airlock_conn_free(b.conn);
	airlock_conn_free(b.base_conn);
	for (k = 0; k < (int)BENCH_NPAYLOADS; k++)
		airlock_run_req_free(b.req[k]);
	return r == 0 ? 0 : 1;
}
