/*
 * lib_bench.c: the measuring loops of the Airlock benchmark (tests/bench/).
 *
 * One executable, several subcommands; tests/bench/bench.py drives it:
 *   latency    one run at a time, round-robin over variants and payloads;
 *              with CHUNK > 1 each pair runs CHUNK times back to back (no
 *              think time) before the next pair of the round
 *   throughput C concurrent clients for a fixed time, round-robin over variants
 *   memory     VmRSS of the daemon's two processes, idle and with N runs live
 *   netns      the clone program with and without CLONE_NEWNET: wall and CPU
 *
 * Variants of one run:
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
#include "airlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NS_UID 2000000 /* host uid of root in the ns program's userns */

enum bench_variant { V_LIB, V_CLI, V_BARE, V_NS, V_BWRAP, V_BASE, V_COUNT };
static const char *const bench_variant_names[V_COUNT] = {"lib", "cli",	 "bare",
							 "ns",	"bwrap", "base"};

struct bench_payload {
	const char *name;
	const char *runtime; /* daemon runtime */
	const char *code;    /* daemon code, or NULL */
	const char *argv[8]; /* the command for every other variant (and exec) */
};

static const struct bench_payload bench_payloads[] = {
	{"true", "exec", NULL, {"/bin/true", NULL}},
	{"sh-c-true", "exec", NULL, {"/bin/sh", "-c", "true", NULL}},
	{"py-pass", "python", "pass\n", {"/usr/bin/python3", "-I", "-S", "-B", "-c", "pass", NULL}},
	{"py-print",
	 "python",
	 "print(1)\n",
	 {"/usr/bin/python3", "-I", "-S", "-B", "-c", "print(1)", NULL}},
};
#define BENCH_NPAYLOADS (sizeof(bench_payloads) / sizeof(bench_payloads[0]))

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

static uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
bench_die(const char *what, int err)
{
	fprintf(stderr, "airlock-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* Read fd to EOF, discarding. */
static void
bench_drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0 || errno == EINTR)
		;
	close(fd);
}

/* Wait for pid; 0 when it exited 0. */
static int
bench_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* Write a whole string to a file. */
static int
bench_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* The ns program's child: build the root and exec. No allocation, no stdio. */
static void __attribute__((noreturn)) bench_ns_child(int syncfd, int outfd, const char *const *argv)
{
	char c;

	if (read(syncfd, &c, 1) != 1)
		_exit(120);
	close(syncfd);
	/* Become the mapped root of the new user namespace (host uid BENCH_NS_UID). */
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		_exit(130);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(121);
	if (mount("bench", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m") < 0)
		_exit(122);
	if (mkdir("/tmp/usr", 0755) < 0 || mkdir("/tmp/proc", 0755) < 0 ||
	    mkdir("/tmp/tmp", 01777) < 0)
		_exit(123);
	if (symlink("usr/bin", "/tmp/bin") < 0 || symlink("usr/lib", "/tmp/lib") < 0 ||
	    symlink("usr/lib64", "/tmp/lib64") < 0)
		_exit(124);
	if (mount("/usr", "/tmp/usr", NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, "/tmp/usr", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		_exit(125);
	if (mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		_exit(126);
	if (chdir("/tmp") < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		_exit(127);
	if (dup2(outfd, 1) < 0 || dup2(outfd, 2) < 0)
		_exit(128);
	execv(argv[0], (char *const *)argv);
	_exit(129);
}

/* Fork (or clone into new namespaces) and exec argv; drain its output. */
static int
bench_spawn(const char *const *argv, bool ns, bool newnet)
{
	int out[2], sync[2] = {-1, -1};
	char path[64], map[64];
	pid_t pid;
	int r = 0;

	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	if (ns && pipe2(sync, O_CLOEXEC) < 0)
		return -errno;
	if (ns) {
		unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
				      CLONE_NEWUTS | (newnet ? CLONE_NEWNET : 0) | SIGCHLD;

		pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	} else {
		pid = fork();
	}
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(out[0]);
		if (ns) {
			close(sync[1]);
			bench_ns_child(sync[0], out[1], argv);
		}
		dup2(out[1], 1);
		dup2(out[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	if (ns) {
		close(sync[0]);
		snprintf(map, sizeof(map), "0 %d 1\n", BENCH_NS_UID);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
		r = bench_write_file(path, map);
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		if (r == 0)
			r = bench_write_file(path, "deny");
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		if (r == 0)
			r = bench_write_file(path, map);
		if (r == 0 && write(sync[1], "x", 1) != 1)
			r = -EIO;
		close(sync[1]);
	}
	bench_drain(out[0]);
	if (bench_wait(pid) < 0 && r == 0)
		r = -EIO;
	return r;
}

/* One run of payload p through variant v. */
static int
bench_one(struct bench *b, enum bench_variant v, size_t p)
{
	const struct bench_payload *pl = &bench_payloads[p];
	const char *av[32];
	size_t n = 0, i;
	int r;

	switch (v) {
	case V_LIB:
	case V_BASE: {
		struct airlock_result *res;

		r = airlock_run(v == V_LIB ? b->conn : b->base_conn, b->req[p], &res);
		if (r < 0)
			return r;
		r = airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
				    airlock_result_exit_code(res) == 0
			    ? 0
			    : -EIO;
		if (r < 0 && airlock_result_error(res) != NULL)
			fprintf(stderr, "run error: %s\n", airlock_result_error(res));
		airlock_result_free(res);
		return r;
	}
	case V_CLI:
		av[n++] = b->cli;
		av[n++] = "--socket";
		av[n++] = b->socket;
		av[n++] = "run";
		av[n++] = "--lang";
		av[n++] = pl->runtime;
		if (pl->code != NULL) {
			av[n++] = "-c";
			av[n++] = pl->code;
		} else {
			av[n++] = "--";
			for (i = 0; pl->argv[i] != NULL; i++)
				av[n++] = pl->argv[i];
		}
		av[n] = NULL;
		return bench_spawn(av, false, false);
	case V_BARE:
		return bench_spawn(pl->argv, false, false);
	case V_NS:
		return bench_spawn(pl->argv, true, b->newnet);
	case V_BWRAP: {
		static const char *const pre[] = {
			"--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc",
			"--unshare-uts",  "--ro-bind",	   "/usr",	    "/usr",
			"--symlink",	  "usr/bin",	   "/bin",	    "--symlink",
			"usr/lib",	  "/lib",	   "--symlink",	    "usr/lib64",
			"/lib64",	  "--tmpfs",	   "/tmp",	    "--proc",
			"/proc",	  "--dev",	   "/dev",	    "--"};

		av[n++] = b->bwrap;
		for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			av[n++] = pre[i];
		for (i = 0; pl->argv[i] != NULL; i++)
			av[n++] = pl->argv[i];
		av[n] = NULL;
		return bench_spawn(av, false, false);
	}
	default:
		return -EINVAL;
	}
}

/* The run request of every payload. */
static void
bench_make_reqs(struct bench *b)
{
	size_t p, i;
	int r;

	for (p = 0; p < BENCH_NPAYLOADS; p++) {
		const struct bench_payload *pl = &bench_payloads[p];

		r = airlock_run_req_new(&b->req[p]);
		if (r == 0)
			r = airlock_run_req_set_runtime(b->req[p], pl->runtime);
		if (r == 0 && pl->code != NULL)
			r = airlock_run_req_set_code(b->req[p], pl->code, strlen(pl->code));
		for (i = 0; r == 0 && pl->code == NULL && pl->argv[i] != NULL; i++)
			r = airlock_run_req_add_arg(b->req[p], pl->argv[i]);
		for (i = 0; r == 0 && i < (size_t)b->nmounts; i++)
			r = airlock_run_req_add_mount(b->req[p], b->mounts[i]);
		if (r < 0)
			bench_die("run request", r);
	}
}

static int
bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t
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
static unsigned
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
static void
bench_summary(const char *what, enum bench_variant v, size_t p, uint64_t *s, size_t n)
{
	qsort(s, n, sizeof(*s), bench_cmp_u64);
	printf("%s %s %s n=%zu median=%.1f p90=%.1f p99=%.1f min=%.1f max=%.1f\n", what,
	       bench_variant_names[v], bench_payloads[p].name, n, (double)bench_pct(s, n, 50) / 1e3,
	       (double)bench_pct(s, n, 90) / 1e3, (double)bench_pct(s, n, 99) / 1e3,
	       (double)s[0] / 1e3, (double)s[n - 1] / 1e3);
}

/* latency: ITERS rounds; each round runs every (variant, payload) CHUNK
 * times in a row (1: once), in an order shuffled each round. CHUNK > 1 is the
 * back-to-back mode: no think time between the runs of a pair, so a pool the
 * daemon refills between runs has to keep up. Prints one summary line per
 * pair (µs). */
static int
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
static int
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
static int
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
static int
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
static int
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

/* One run of req on conn; its wall time (ns), or 0 when it did not exit 0. */
static uint64_t
bench_time_run(struct airlock_conn *conn, const struct airlock_run_req *req)
{
	struct airlock_result *res = NULL;
	uint64_t t0 = bench_now_ns();
	int r = airlock_run(conn, req, &res);

	if (r == 0 && (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED ||
		       airlock_result_exit_code(res) != 0))
		r = -EIO;
	airlock_result_free(res);
	return r == 0 ? bench_now_ns() - t0 : 0;
}

/* A run request of code in session sid (a cell if cell); dies on failure. */
static struct airlock_run_req *
bench_session_req(const char *sid, const char *code, bool cell)
{
	struct airlock_run_req *req = NULL;
	int r = airlock_run_req_new(&req);

	if (r == 0)
		r = airlock_run_req_set_runtime(req, "python");
	if (r == 0)
		r = airlock_run_req_set_session(req, sid);
	if (r == 0)
		r = airlock_run_req_set_code(req, code, strlen(code));
	if (r == 0 && cell)
		r = airlock_run_req_set_cell(req, true);
	if (r < 0)
		bench_die("cell request", r);
	return req;
}

/*
 * cell ITERS: a stateful cell `x += 1` in an interpreter session (python),
 * ITERS of them after 20 warm-up cells, against a session run of `pass`
 * (every tenth round); with --base-socket (variant base) also the same cell
 * through the base daemon, in the same rounds, alternating with ours. Prints
 * each kind's latency (µs), from the call to the result.
 */
static int
bench_cell(struct bench *b, int iters)
{
	/* lanes: our cell, our session run, the base daemon's cell */
	static const char *const kind[3] = {"cell", "session-run", "base-cell"};
	struct airlock_conn *conn[3] = {b->conn, b->conn, b->base_conn};
	struct airlock_run_req *req[3] = {NULL, NULL, NULL};
	uint64_t *s[3];
	char sid[3][AIRLOCK_SESSION_ID_LEN + 1];
	int it, k, r = 0, failures = 0, nk = b->base_conn != NULL ? 3 : 2;

	for (k = 0; k < nk; k++) {
		struct airlock_session_opts *opts = NULL;

		s[k] = calloc((size_t)iters, sizeof(uint64_t));
		if (s[k] == NULL)
			bench_die("calloc", ENOMEM);
		r = airlock_session_opts_new(&opts);
		if (r == 0 && k != 1)
			r = airlock_session_opts_set_interpreter(opts, "python");
		if (r == 0)
			r = airlock_session_open(conn[k], opts, sid[k]);
		airlock_session_opts_free(opts);
		if (r < 0)
			bench_die("cell session", r);
		req[k] = bench_session_req(sid[k], k == 1 ? "pass" : "x += 1", k != 1);
		if (k != 1) {
			struct airlock_run_req *init = bench_session_req(sid[k], "x = 0", true);

			if (bench_time_run(conn[k], init) == 0)
				bench_die("cell x = 0", EIO);
			airlock_run_req_free(init);
		}
	}
	for (it = -20; it < iters; it++)
		for (k = 0; k < nk; k++) {
			uint64_t ns;

			/* The session runs are slow: fewer of them. */
			if (k == 1 && (it < -2 || it % 10 != 0))
				continue;
			ns = bench_time_run(conn[k], req[k]);
			if (ns == 0 && failures++ < 5)
				fprintf(stderr, "cell: %s failed\n", kind[k]);
			if (it >= 0)
				s[k][k == 1 ? it / 10 : it] = ns;
		}
	for (k = 0; k < nk; k++) {
		size_t n = k == 1 ? (size_t)(iters + 9) / 10 : (size_t)iters;

		qsort(s[k], n, sizeof(uint64_t), bench_cmp_u64);
		printf("cell kind=%s iters=%zu median=%.1f p90=%.1f min=%.1f\n", kind[k], n,
		       (double)bench_pct(s[k], n, 50) / 1e3, (double)bench_pct(s[k], n, 90) / 1e3,
		       (double)s[k][0] / 1e3);
		free(s[k]);
		airlock_run_req_free(req[k]);
		(void)airlock_session_close(conn[k], sid[k]);
	}
	fflush(stdout);
	return failures;
}

/* The next result on conn, waiting for it; dies on failure. */
static struct airlock_result *
bench_next_result(struct airlock_conn *conn)
{
	struct airlock_result *res = NULL;
	uint32_t id;
	int r;

	while ((r = airlock_conn_next_result(conn, &id, &res)) == -EAGAIN) {
		struct pollfd p = {.fd = airlock_conn_fd(conn), .events = POLLIN};

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			bench_die("poll", errno);
		if ((r = airlock_conn_process(conn)) < 0)
			bench_die("conn process", r);
	}
	if (r < 0)
		bench_die("next result", r);
	return res;
}

/*
 * cellcancel ITERS: the cancel of a running cell (issue 30): a cell that
 * marks its start in the workspace and then spins (`while True: pass`) is
 * submitted; once its mark is there (polled, untimed), airlock_cancel() is
 * called, and the time from that call to the cell's `cancelled` result
 * (state kept) is one sample. 3 warm-up rounds. Prints the latency (µs).
 */
static int
bench_cellcancel(struct bench *b, int iters)
{
	static const char code[] = "open('started', 'w').close()\nwhile True: pass\n";
	struct airlock_session_opts *opts = NULL;
	struct airlock_run_req *req;
	char sid[AIRLOCK_SESSION_ID_LEN + 1];
	uint64_t *s = calloc((size_t)iters, sizeof(uint64_t));
	int it, r, failures = 0;
	size_t n = 0;

	if (s == NULL)
		bench_die("calloc", ENOMEM);
	r = airlock_session_opts_new(&opts);
	if (r == 0)
		r = airlock_session_opts_set_interpreter(opts, "python");
	if (r == 0)
		r = airlock_session_open(b->conn, opts, sid);
	airlock_session_opts_free(opts);
	if (r < 0)
		bench_die("cellcancel session", r);
	req = bench_session_req(sid, code, true);
	for (it = -3; it < iters; it++) {
		struct airlock_result *res;
		uint32_t id;
		uint64_t t0;

		r = airlock_run_submit(b->conn, req, &id);
		if (r < 0)
			bench_die("cellcancel submit", r);
		for (;;) {
			struct airlock_file *f = NULL;

			r = airlock_file_read(b->conn, sid, "started", &f);
			airlock_file_free(f);
			if (r == 0)
				break;
			if (r != -ENOENT)
				bench_die("cellcancel started", r);
			usleep(1000);
		}
		(void)airlock_file_delete(b->conn, sid, "started");
		t0 = bench_now_ns();
		r = airlock_cancel(b->conn, id);
		/* Refused: the cell runs on to its limit, and every round after
		 * it would wait for it; no figure can come. */
		if (r < 0)
			bench_die("cellcancel cancel", r);
		res = bench_next_result(b->conn);
		if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_CANCELLED ||
		    airlock_result_state(res) != AIRLOCK_CELL_KEPT) {
			if (failures++ < 5)
				fprintf(stderr, "cellcancel: round %d: outcome %d, state %d\n", it,
					(int)airlock_result_outcome(res),
					(int)airlock_result_state(res));
		} else if (it >= 0) {
			s[n++] = bench_now_ns() - t0;
		}
		airlock_result_free(res);
	}
	if (n > 0) {
		qsort(s, n, sizeof(uint64_t), bench_cmp_u64);
		printf("cellcancel iters=%zu median=%.1f p90=%.1f min=%.1f\n", n,
		       (double)bench_pct(s, n, 50) / 1e3, (double)bench_pct(s, n, 90) / 1e3,
		       (double)s[0] / 1e3);
	}
	free(s);
	airlock_run_req_free(req);
	(void)airlock_session_close(b->conn, sid);
	fflush(stdout);
	return failures;
}

/* One byte on fd, then one awaited on fd (0: none); dies on failure. */
static void
bench_msg(int fd, char out, int in_fd)
{
	char c;

	if (out != 0 && send(fd, &out, 1, 0) != 1)
		bench_die("stopcont send", errno);
	if (in_fd >= 0 && recv(in_fd, &c, 1, 0) != 1)
		bench_die("stopcont recv", errno);
}

/*
 * stopcont ITERS: the interpreter's stop between cells (sb_supervise_cells)
 * alone, without a daemon: three processes in the roles of a cell's path
 * (F the frontend, S the supervisor, D the driver; SOCK_SEQPACKET pairs
 * F-S and F-D). One cell: F sends BEGIN to S and the cell to D, D answers
 * F, F sends FINISH to S, S answers END. Kind "stop": S sends D SIGCONT at
 * BEGIN and SIGSTOP at FINISH, as the daemon does; kind "none": nothing.
 * The kinds alternate cell by cell, each cell starting as between two cells
 * of its kind (untimed: S stops D before a "stop" cell, continues it before
 * a "none" one); prints each kind's latency (µs) from BEGIN to END.
 */
static int
bench_stopcont(int iters)
{
	static const char *const kind[2] = {"none", "stop"};
	int fs[2], fd[2], k, it;
	uint64_t *s[2];
	size_t n[2] = {0, 0};
	pid_t sup, drv;

	s[0] = calloc((size_t)iters + 1, sizeof(uint64_t));
	s[1] = calloc((size_t)iters + 1, sizeof(uint64_t));
	if (s[0] == NULL || s[1] == NULL)
		bench_die("calloc", ENOMEM);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fs) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fd) < 0)
		bench_die("socketpair", errno);
	drv = fork();
	if (drv == 0) {
		for (;;)
			bench_msg(fd[1], 0, fd[1]), bench_msg(fd[1], 'D', -1);
	}
	sup = fork();
	if (sup == 0) {
		char c;

		while (recv(fs[1], &c, 1, 0) == 1) {
			/* b/f: BEGIN/FINISH of kind none; B/F of kind stop;
			 * R, S: continue, stop D between cells */
			if (c == 'B' || c == 'R')
				kill(drv, SIGCONT);
			else if (c == 'F' || c == 'S')
				kill(drv, SIGSTOP);
			if (c != 'B' && c != 'b')
				bench_msg(fs[1], 'E', -1);
		}
		_exit(0);
	}
	if (drv < 0 || sup < 0)
		bench_die("fork", errno);
	for (it = -100; it < 2 * iters; it++) {
		int stop = (it + 100) % 2;
		uint64_t t0;

		bench_msg(fs[0], stop ? 'S' : 'R', fs[0]);
		t0 = bench_now_ns();
		bench_msg(fs[0], stop ? 'B' : 'b', -1);
		bench_msg(fd[0], 'C', fd[0]);
		bench_msg(fs[0], stop ? 'F' : 'f', fs[0]);
		if (it >= 0 && n[stop] < (size_t)iters)
			s[stop][n[stop]++] = bench_now_ns() - t0;
	}
	kill(drv, SIGKILL);
	kill(sup, SIGKILL);
	(void)waitpid(drv, NULL, 0);
	(void)waitpid(sup, NULL, 0);
	for (k = 0; k < 2; k++) {
		qsort(s[k], n[k], sizeof(uint64_t), bench_cmp_u64);
		printf("stopcont kind=%s iters=%zu median=%.1f p90=%.1f min=%.1f\n", kind[k], n[k],
		       (double)bench_pct(s[k], n[k], 50) / 1e3,
		       (double)bench_pct(s[k], n[k], 90) / 1e3,
		       n[k] > 0 ? (double)s[k][0] / 1e3 : 0.0);
		free(s[k]);
	}
	close(fs[0]);
	close(fs[1]);
	close(fd[0]);
	close(fd[1]);
	fflush(stdout);
	return 0;
}

static void
bench_usage(void)
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

int
main(int argc, char **argv)
{
	struct bench b = {.cli = "airlock", .bwrap = "/usr/bin/bwrap", .newnet = true};
	unsigned mask = (1u << V_BASE) - 1;
	int i = 1, r, k;
	const char *cmd;

	signal(SIGPIPE, SIG_IGN);
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--socket"))
			b.socket = argv[i + 1];
		else if (!strcmp(argv[i], "--base-socket"))
			b.base_socket = argv[i + 1];
		else if (!strcmp(argv[i], "--cli"))
			b.cli = argv[i + 1];
		else if (!strcmp(argv[i], "--bwrap"))
			b.bwrap = argv[i + 1];
		else if (!strcmp(argv[i], "--variants"))
			mask = bench_parse_variants(argv[i + 1]);
		else if (!strcmp(argv[i], "--mount") && b.nmounts < 8)
			b.mounts[b.nmounts++] = argv[i + 1];
		else if (!strcmp(argv[i], "--payload") &&
			 strtoul(argv[i + 1], NULL, 10) < BENCH_NPAYLOADS)
			b.tput_payload = strtoul(argv[i + 1], NULL, 10);
		else
			bench_usage();
	}
	if (i >= argc)
		bench_usage();
	cmd = argv[i++];
	if (b.socket == NULL && (mask & (1u << V_LIB | 1u << V_CLI) || !strcmp(cmd, "memory")) &&
	    strcmp(cmd, "netns") != 0 && strcmp(cmd, "once") != 0 && strcmp(cmd, "stopcont") != 0)
		bench_usage();
	if (b.base_socket == NULL && (mask & 1u << V_BASE))
		bench_usage();
	if (b.socket != NULL && strcmp(cmd, "netns") != 0) {
		bench_make_reqs(&b);
		r = airlock_connect(b.socket, &b.conn);
		if (r < 0)
			bench_die("connect", r);
	}
	if (b.base_socket != NULL && (mask & 1u << V_BASE)) {
		r = airlock_connect(b.base_socket, &b.base_conn);
		if (r < 0)
			bench_die("connect base", r);
	}
	if (!strcmp(cmd, "latency") && (argc - i == 2 || argc - i == 3)) {
		r = bench_latency(&b, mask, atoi(argv[i]), atoi(argv[i + 1]),
				  argc - i == 3 ? atoi(argv[i + 2]) : 1);
	} else if (!strcmp(cmd, "throughput") && argc - i >= 3) {
		int cl[16], n = 0;

		for (k = i + 2; k < argc && n < 16; k++)
			cl[n++] = atoi(argv[k]);
		r = bench_throughput(&b, mask, cl, n, atof(argv[i]), atoi(argv[i + 1]));
	} else if (!strcmp(cmd, "memory") && argc - i >= 3) {
		int cnt[16], n = 0;

		for (k = i + 2; k < argc && n < 16; k++)
			cnt[n++] = atoi(argv[k]);
		r = bench_memory(&b, (pid_t)atoi(argv[i]), (unsigned)atoi(argv[i + 1]), cnt, n);
	} else if (!strcmp(cmd, "files") && argc - i == 3) {
		r = bench_files(&b, atoi(argv[i]), atoi(argv[i + 1]), (size_t)atol(argv[i + 2]));
	} else if (!strcmp(cmd, "cell") && argc - i == 1) {
		r = bench_cell(&b, atoi(argv[i]));
	} else if (!strcmp(cmd, "cellcancel") && argc - i == 1) {
		r = bench_cellcancel(&b, atoi(argv[i]));
	} else if (!strcmp(cmd, "stopcont") && argc - i == 1) {
		r = bench_stopcont(atoi(argv[i]));
	} else if (!strcmp(cmd, "netns") && argc - i == 2) {
		r = bench_netns(&b, atoi(argv[i]), atoi(argv[i + 1]));
	} else if (!strcmp(cmd, "loop") && argc - i == 4) {
		/* loop VARIANT PAYLOAD N PAUSE_MS: N runs of one pair, a pause
		 * after each (for tracing; 0: back to back); their summary. */
		unsigned v = bench_parse_variants(argv[i]);
		int n = atoi(argv[i + 2]), j;
		size_t p = (size_t)atoi(argv[i + 1]);
		uint64_t *s = calloc(n > 0 ? (size_t)n : 1, sizeof(uint64_t));

		if (s == NULL)
			bench_die("calloc", ENOMEM);
		for (k = 0; k < V_COUNT && !(v & (1u << k)); k++)
			;
		for (j = 0, r = 0; j < n && k < V_COUNT && p < BENCH_NPAYLOADS && r == 0; j++) {
			uint64_t t0 = bench_now_ns();

			r = bench_one(&b, (enum bench_variant)k, p);
			s[j] = bench_now_ns() - t0;
			usleep((unsigned)atoi(argv[i + 3]) * 1000u);
		}
		if (r == 0 && j > 0)
			bench_summary("loop", (enum bench_variant)k, p, s, (size_t)j);
		free(s);
	} else if (!strcmp(cmd, "once") && argc - i == 2) {
		unsigned v = bench_parse_variants(argv[i]);

		for (k = 0; k < V_COUNT && !(v & (1u << k)); k++)
			;
		r = k < V_COUNT ? bench_one(&b, (enum bench_variant)k, (size_t)atoi(argv[i + 1]))
				: -EINVAL;
		if (r < 0)
			fprintf(stderr, "once: %s\n", strerror(-r));
	} else {
		bench_usage();
	}
	airlock_conn_free(b.conn);
	airlock_conn_free(b.base_conn);
	for (k = 0; k < (int)BENCH_NPAYLOADS; k++)
		airlock_run_req_free(b.req[k]);
	return r == 0 ? 0 : 1;
}
