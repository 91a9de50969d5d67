/*
 * bench_resources.c: what airlock-bench reads from /proc (tests/bench/bench.h):
 * the daemon's memory idle and with runs live, and the CPU a network
 * namespace costs the ns program and the kernel's workers.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* VmRSS in KiB of a pid, or -1. */
static long
bench_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The frontend: the daemon's child whose real uid is `uid`. Also sums the RSS
 * of its other children (the runs' supervisors) into *ret_sandbox_kib. */
static pid_t
bench_frontend(pid_t daemon, unsigned uid, long *ret_sandbox_kib)
{
	char path[300], line[256];
	pid_t front = -1;
	long sbx = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		int ppid = -1, pid = atoi(e->d_name);
		unsigned ruid = 0;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			sscanf(line, "PPid: %d", &ppid);
			sscanf(line, "Uid: %u", &ruid);
		}
		fclose(f);
		if (ppid != daemon)
			continue;
		if (ruid == uid && front < 0) {
			front = pid;
		} else {
			long k = bench_rss_kib(pid);

			if (k > 0)
				sbx += k;
		}
	}
	closedir(d);
	*ret_sandbox_kib = sbx;
	return front;
}

/* memory: idle RSS, then RSS with N `sleep 1` runs live, for each N. */
int
bench_memory(struct bench *b, pid_t daemon, unsigned uid, const int *counts, int ncounts)
{
	long sbx, fe, sp;
	pid_t front = bench_frontend(daemon, uid, &sbx);
	struct airlock_run_req *req;
	int ci, i, r;

	if (front < 0)
		bench_die("no frontend found", ESRCH);
	printf("memory idle frontend_kib=%ld spawner_kib=%ld\n", bench_rss_kib(front),
	       bench_rss_kib(daemon));
	if ((r = airlock_run_req_new(&req)) < 0 || (r = airlock_run_req_set_runtime(req, "exec")) ||
	    (r = airlock_run_req_add_arg(req, "/bin/sleep")) ||
	    (r = airlock_run_req_add_arg(req, "1")))
		bench_die("sleep request", r);
	for (ci = 0; ci < ncounts; ci++) {
		int done = 0;
		uint32_t id;

		for (i = 0; i < counts[ci]; i++)
			if ((r = airlock_run_submit(b->conn, req, &id)) < 0)
				bench_die("submit", r);
		usleep(600000);
		fe = bench_rss_kib(front);
		sp = bench_rss_kib(daemon);
		bench_frontend(daemon, uid, &sbx);
		printf("memory runs=%d frontend_kib=%ld spawner_kib=%ld sandboxes_kib=%ld\n",
		       counts[ci], fe, sp, sbx);
		fflush(stdout);
		while (done < counts[ci]) {
			struct airlock_result *res;
			struct pollfd pfd = {.fd = airlock_conn_fd(b->conn), .events = POLLIN};

			r = airlock_conn_next_result(b->conn, &id, &res);
			if (r == 0) {
				airlock_result_free(res);
				done++;
				continue;
			}
			if (r != -EAGAIN) {
				done++;
				continue;
			}
			poll(&pfd, 1, 5000);
			if ((r = airlock_conn_process(b->conn)) < 0)
				bench_die("process", r);
		}
	}
	usleep(200000);
	printf("memory after frontend_kib=%ld spawner_kib=%ld\n", bench_rss_kib(front),
	       bench_rss_kib(daemon));
	airlock_run_req_free(req);
	return 0;
}

/* CPU time (ns) of every kernel worker thread: the network namespace's
 * teardown (cleanup_net) runs there, after the namespace's last process died. */
static uint64_t
bench_kworker_ns(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uint64_t sum = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[64];
		unsigned long long ns;
		FILE *f;

		if (atoi(e->d_name) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL || strncmp(comm, "kworker", 7) != 0) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%s/schedstat", e->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		fclose(f);
	}
	closedir(d);
	return sum;
}

/* CPU time (ns) of this process's reaped children. */
static uint64_t
bench_children_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ULL +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
}

/* netns: the ns program running /bin/true with and without CLONE_NEWNET,
 * alternating blocks; wall per run, the children's CPU per run and the kernel
 * workers' CPU per run (the deferred namespace teardown, waited out after
 * each block; other load on the machine adds noise to this one). */
int
bench_netns(struct bench *b, int iters, int blocks)
{
	uint64_t wall[2] = {0, 0}, cpu[2] = {0, 0}, kw[2] = {0, 0}, n[2] = {0, 0};
	int blk, i, w;

	for (blk = 0; blk < blocks * 2; blk++) {
		uint64_t t0, c0, k0;

		w = blk % 2;
		b->newnet = w == 1;
		usleep(200000); /* let earlier teardown finish */
		k0 = bench_kworker_ns();
		c0 = bench_children_ns();
		t0 = bench_now_ns();
		for (i = 0; i < iters; i++)
			if (bench_one(b, V_NS, 0) == 0)
				n[w]++;
		wall[w] += bench_now_ns() - t0;
		cpu[w] += bench_children_ns() - c0;
		usleep(200000); /* deferred cleanup_net() */
		kw[w] += bench_kworker_ns() - k0;
	}
	for (w = 0; w < 2; w++)
		printf("netns newnet=%d runs=%llu wall_us_per_run=%.1f child_cpu_us_per_run=%.1f "
		       "kworker_cpu_us_per_run=%.1f\n",
		       w, (unsigned long long)n[w], n[w] ? (double)wall[w] / 1e3 / (double)n[w] : 0,
		       n[w] ? (double)cpu[w] / 1e3 / (double)n[w] : 0,
		       n[w] ? (double)kw[w] / 1e3 / (double)n[w] : 0);
	b->newnet = true;
	return 0;
}
