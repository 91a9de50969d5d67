/*
 * bench_cells.c: airlock-bench's interpreter-session loops (tests/bench/bench.h):
 * a stateful cell against a session run, the cancel of a running cell, and
 * the stop between cells alone, without a daemon (stopcont).
 */
#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
int
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
int
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
int
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
