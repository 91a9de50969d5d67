/* cli/cmd_cell.c: `airlock cell`. */
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
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * `airlock cell SESSION [FILE|-]`: `airlock run --session SESSION --cell
 * FILE` (the code from standard input without FILE); `run --cell` takes
 * the run's options (limits; the runtime is the session's interpreter's).
 */
int
cli_cell(struct cli *cli, int argc, char **argv)
{
	char *run_argv[] = {"run", "--cell", "--session", NULL, NULL, NULL};
	int i;

	for (i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1] != '\0') {
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
				cli_usage_cmd(stdout, "cell");
				return CLI_EXIT_OK;
			}
			return cli_usage_error(
				"cell: options go to `airlock run --session ID --cell`");
		}
	if (argc < 2 || argc > 3)
		return cli_usage_error("cell: expected SESSION [FILE|-]");
	if (cli_check_session_id(argv[1]) != 0)
		return CLI_EXIT_USAGE;
	run_argv[3] = argv[1];
	run_argv[4] = argc == 3 ? argv[2] : "-";
	optind = 0;
	return cli_run(cli, 5, run_argv);
}

/* Hand the cell id's queued stream events to cb (NULL: not streamed), in
 * order: before its result is taken, which drops them. */
static void
cli_cell_events(struct airlock_conn *conn, uint32_t id, airlock_stream_fn cb)
{
	struct airlock_event *ev;
	const void *data;
	size_t len;

	while (cb != NULL && airlock_conn_next_event(conn, &ev) == 0) {
		if (airlock_event_request_id(ev) == id &&
		    airlock_event_kind(ev) == AIRLOCK_EVENT_STREAM &&
		    airlock_event_data(ev, &data, &len) == 0)
			cb(NULL, airlock_event_stream(ev), data, len);
		airlock_event_free(ev);
	}
}

/*
 * Wait for the cell id's result on conn (its output to cb as it comes,
 * when streamed); SIGINT (Ctrl-C, fd sfd) cancels
 * it once (the daemon interrupts it as at its wall limit: its state is
 * kept) and waits on; a second SIGINT leaves at once. 0 with *ret_res,
 * -EINTR for the second, or -errno.
 */
static int
cli_cell_wait(struct airlock_conn *conn, int sfd, uint32_t id, airlock_stream_fn cb,
	      struct airlock_result **ret_res)
{
	bool asked = false;
	uint32_t got;
	int r;

	for (;;) {
		struct pollfd p[2] = {{.fd = airlock_conn_fd(conn), .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};

		cli_cell_events(conn, id, cb);
		r = airlock_conn_next_result(conn, &got, ret_res);
		if (r != -EAGAIN)
			return r;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return -errno;
		if (p[1].revents != 0) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				continue;
			if (asked)
				return -EINTR;
			asked = true;
			fprintf(stderr, "airlock: interrupting the cell (Ctrl-C again to leave)\n");
			/* -ENOENT: it has just ended; its result is on its way. */
			r = airlock_cancel(conn, id);
			if (r < 0 && r != -ENOENT)
				return r;
		}
		if (p[0].revents != 0 && (r = airlock_conn_process(conn)) < 0)
			return r;
	}
}

int
cli_cell_call(struct airlock_conn *conn, const struct airlock_run_req *req, airlock_stream_fn cb,
	      struct airlock_result **ret_res)
{
	sigset_t mask, old;
	uint32_t id = 0;
	int sfd, r;

	/*
	 * SIGINT blocked and read from a signalfd (close-on-exec) from before
	 * the cell is sent, so that a Ctrl-C at any moment is the cell's
	 * cancel, not the end of the command (which left the cell running to
	 * its limit, every later cell waiting behind it).
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, &old) < 0)
		return -errno;
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		r = -errno;
		goto out;
	}
	r = airlock_run_submit(conn, req, &id);
	if (r == 0)
		r = cli_cell_wait(conn, sfd, id, cb, ret_res);
	close(sfd);
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}
