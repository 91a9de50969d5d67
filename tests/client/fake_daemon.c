/*
 * fake_daemon.c: a stand-in for airlockd that answers from a script, so the
 * airlock command can be tested end to end without sandboxes.
 *
 * usage: fake-daemon SOCKET [PS_FILE]
 *   (serves connections one at a time until killed)
 *
 * A run's code selects the answer: "exit:N", "signal:N", "wall", "cpu",
 * "memory", "error", "cancelled", "binary" (stdout not UTF-8), "artifacts",
 * "busy" (an error reply), "echo" (stdout = the run's stdin, stderr = argv
 * joined).
 *
 * ps answers with the runs listed in PS_FILE, read afresh for every request,
 * one per line: "RUN UID PID RUNTIME STATE ELAPSED_MS" (no file or an empty
 * one: no runs). cancel by run id answers cancel_ok for a run listed there
 * and not_found for any other; cancel by request id is refused (bad_request):
 * the airlock command only cancels by run id.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdpass.h"
#include "proto.h"

/* Send one packet and free it; 0 or -errno. */
static int
fake_send(int fd, struct proto_out *out)
{
	int r = proto_send(fd, out);

	proto_out_free(out);
	return r;
}

/* Point a blob at len bytes. */
static struct proto_blob
fake_blob(const void *data, size_t len)
{
	return (struct proto_blob){.data = data, .len = len, .fd = -1, .present = true};
}

/* Answer one run request according to its code. */
static int
fake_run(int fd, const struct proto_msg *msg)
{
	static const char bin[] = {'o', 'k', (char)0xff, (char)0xfe, 0};
	const struct proto_run *run = &msg->u.run;
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED, .wall_ms = 5, .cpu_ms = 3};
	struct proto_artifact arts[4];
	struct proto_out out;
	char code[64] = "", err[512] = "";
	size_t i, n;
	int r;

	n = run->code.len < sizeof(code) - 1 ? run->code.len : sizeof(code) - 1;
	if (n > 0)
		memcpy(code, run->code.data, n);
	code[n] = '\0';
	if (strcmp(run->runtime, "exec") == 0)
		snprintf(code, sizeof(code), "echo");
	res.out[0].data = fake_blob("out\n", 4);
	res.out[1].data = fake_blob("err\n", 4);
	if (strncmp(code, "exit:", 5) == 0)
		res.exit_code = atoi(code + 5);
	else if (strncmp(code, "signal:", 7) == 0) {
		res.outcome = PROTO_OUTCOME_SIGNALED;
		res.signal = atoi(code + 7);
	} else if (strcmp(code, "wall") == 0)
		res.outcome = PROTO_OUTCOME_WALL_LIMIT;
	else if (strcmp(code, "cpu") == 0)
		res.outcome = PROTO_OUTCOME_CPU_LIMIT;
	else if (strcmp(code, "memory") == 0)
		res.outcome = PROTO_OUTCOME_MEMORY_LIMIT;
	else if (strcmp(code, "cancelled") == 0)
		res.outcome = PROTO_OUTCOME_CANCELLED;
	else if (strcmp(code, "error") == 0) {
		res.outcome = PROTO_OUTCOME_ERROR;
		res.error = "mount workspace: ENOSPC";
	} else if (strcmp(code, "binary") == 0)
		res.out[0].data = fake_blob(bin, sizeof(bin));
	else if (strcmp(code, "busy") == 0) {
		r = proto_encode_error(msg->id, PROTO_ERR_BUSY, "uid 1000 has 4 runs", &out);
		return r < 0 ? r : fake_send(fd, &out);
	} else if (strcmp(code, "artifacts") == 0) {
		arts[0] = (struct proto_artifact){
			.name = "ok.txt", .size = 2, .data = fake_blob("ok", 2)};
		arts[1] = (struct proto_artifact){.name = "sub/dir/x",
						  .size = 9,
						  .truncated = true,
						  .data = fake_blob("x", 1)};
		arts[2] = (struct proto_artifact){
			.name = "../evil", .size = 4, .data = fake_blob("evil", 4)};
		arts[3] = (struct proto_artifact){
			.name = "/tmp/airlock-fake-abs", .size = 4, .data = fake_blob("evil", 4)};
		res.artifacts = arts;
		res.nartifacts = 4;
	} else if (strcmp(code, "echo") == 0) {
		res.out[0].data = run->stdin_data.present
					  ? fake_blob(run->stdin_data.data, run->stdin_data.len)
					  : fake_blob("", 0);
		for (i = 0; i < run->argc; i++)
			snprintf(err + strlen(err), sizeof(err) - strlen(err), "%s%s", i ? " " : "",
				 run->argv[i]);
		for (i = 0; i < run->nenv; i++)
			snprintf(err + strlen(err), sizeof(err) - strlen(err), " %s=%s",
				 run->env[i].key, run->env[i].value);
		snprintf(err + strlen(err), sizeof(err) - strlen(err), " wall_ms=%llu files=%zu",
			 (unsigned long long)run->limits.v[PROTO_LIMIT_WALL_MS], run->nfiles);
		res.out[1].data = fake_blob(err, strlen(err));
	}
	res.out[0].total = res.out[0].data.len;
	res.out[1].total = res.out[1].data.len;
	r = proto_encode_result(msg->id, &res, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

#define FAKE_PS_MAX 16

/* The runs of PS_FILE (strings in names); returns how many. */
static size_t
fake_ps_load(const char *path, struct proto_ps_entry *runs, char (*names)[2][64])
{
	unsigned long long elapsed;
	char line[256];
	size_t n = 0;
	FILE *f;

	if (path == NULL || (f = fopen(path, "re")) == NULL)
		return 0;
	while (n < FAKE_PS_MAX && fgets(line, sizeof(line), f) != NULL) {
		struct proto_ps_entry *e = &runs[n];

		if (sscanf(line, "%" SCNu32 " %" SCNu32 " %" SCNd32 " %63s %63s %llu", &e->run,
			   &e->uid, &e->pid, names[n][0], names[n][1], &elapsed) != 6)
			continue;
		e->runtime = names[n][0];
		e->state = names[n][1];
		e->elapsed_ms = elapsed;
		n++;
	}
	fclose(f);
	return n;
}

/* Answer a ps request from PS_FILE. */
static int
fake_ps(int fd, const struct proto_msg *msg, const char *ps_file)
{
	struct proto_ps_entry runs[FAKE_PS_MAX];
	char names[FAKE_PS_MAX][2][64];
	struct proto_ps ps = {.runs = runs};
	struct proto_out out;
	int r;

	ps.nruns = fake_ps_load(ps_file, runs, names);
	r = proto_encode_ps(msg->id, &ps, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

/* Answer a cancel request: ok for a run listed in PS_FILE, else not_found. */
static int
fake_cancel(int fd, const struct proto_msg *msg, const char *ps_file)
{
	struct proto_ps_entry runs[FAKE_PS_MAX];
	char names[FAKE_PS_MAX][2][64], why[64];
	struct proto_out out;
	size_t i, n;
	int r;

	if (msg->u.cancel.request != 0) {
		r = proto_encode_error(msg->id, PROTO_ERR_BAD_REQUEST, "fake: cancel by request",
				       &out);
		return r < 0 ? r : fake_send(fd, &out);
	}
	n = fake_ps_load(ps_file, runs, names);
	for (i = 0; i < n; i++)
		if (runs[i].run == msg->u.cancel.run) {
			r = proto_encode_simple(msg->id, PROTO_CANCEL_OK, &out);
			return r < 0 ? r : fake_send(fd, &out);
		}
	snprintf(why, sizeof(why), "no run %" PRIu32 " of uid 1000", msg->u.cancel.run);
	r = proto_encode_error(msg->id, PROTO_ERR_NOT_FOUND, why, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

/* Answer one request. */
static int
fake_answer(int fd, const struct proto_msg *msg, const char *ps_file)
{
	struct proto_hello h = {.version = PROTO_VERSION, .peer = "fake"};
	struct proto_info info = {.daemon = "0.1.0-fake",
				  .version = PROTO_VERSION,
				  .uid = 1000,
				  .runtimes = {"python", "sh", "exec"},
				  .nruntimes = 3};
	struct proto_out out;
	int r;

	switch (msg->type) {
	case PROTO_HELLO:
		r = proto_encode_hello(msg->id, PROTO_HELLO_OK, &h, &out);
		break;
	case PROTO_PING:
		r = proto_encode_simple(msg->id, PROTO_PONG, &out);
		break;
	case PROTO_INFO:
		info.defaults.v[PROTO_LIMIT_WALL_MS] = 10000;
		info.ceilings.v[PROTO_LIMIT_WALL_MS] = 60000;
		r = proto_encode_info(msg->id, &info, &out);
		break;
	case PROTO_RUN:
		return fake_run(fd, msg);
	case PROTO_PS:
		return fake_ps(fd, msg, ps_file);
	case PROTO_CANCEL:
		return fake_cancel(fd, msg, ps_file);
	default:
		r = proto_encode_error(msg->id, PROTO_ERR_BAD_REQUEST, "unexpected", &out);
		break;
	}
	return r < 0 ? r : fake_send(fd, &out);
}

/* Serve one connection until the client hangs up. */
static void
fake_serve(int fd, const char *ps_file)
{
	static uint8_t buf[PROTO_MSG_MAX];
	int fds[PROTO_FDS_MAX];
	struct proto_msg msg;
	enum proto_error code;
	uint32_t id;
	size_t nfds;
	char why[256];
	ssize_t n;

	for (;;) {
		n = fdpass_recv(fd, buf, sizeof(buf), fds, PROTO_FDS_MAX, &nfds);
		if (n <= 0)
			return;
		if (proto_decode(buf, (size_t)n, fds, nfds, &msg, &code, &id, why, sizeof(why)) <
		    0) {
			fprintf(stderr, "fake-daemon: bad message: %s\n", why);
			return;
		}
		if (fake_answer(fd, &msg, ps_file) < 0) {
			proto_msg_free(&msg);
			return;
		}
		proto_msg_free(&msg);
	}
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int lfd, fd;

	if (argc < 2 || argc > 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: fake-daemon SOCKET [PS_FILE]\n");
		return 2;
	}
	memcpy(sa.sun_path, argv[1], strlen(argv[1]) + 1);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 8) < 0) {
		perror("fake-daemon: listen");
		return 1;
	}
	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("fake-daemon: accept");
			return 1;
		}
		fake_serve(fd, argc > 2 ? argv[2] : NULL);
		close(fd);
	}
}
