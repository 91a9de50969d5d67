/*
 * fake_daemon.c: a stand-in for airlockd that answers from a script, so the
 * airlock command can be tested end to end without sandboxes.
 *
 * usage: fake-daemon SOCKET [PS_FILE [LOG_FILE]]
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
 *
 * Sessions: one session, FAKE_SESSION, exists once opened (session_open
 * always answers it; its options are appended to LOG_FILE) until closed; any
 * other id is not_found. Its files live in memory: write stores (path "full"
 * is too_large, a path with ".." bad_request), read returns them (cut to
 * FAKE_READ_MAX bytes, truncated), list shows them plus a directory "sub", a
 * link "lnk" and a name with a newline, delete removes them. A run's code
 * "stream" sends stream events "one\n" (stdout), "two\n" (stderr), "three\n"
 * (stdout) when it asked for them, then a result with the same bytes; "echo"
 * also reports the run's session.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdpass.h"
#include "proto.h"

#define FAKE_SESSION "0123456789abcdef0123456789abcdef"
#define FAKE_FILES_MAX 16
#define FAKE_READ_MAX 100000

/* The fake's session and its files. */
struct fake_file {
	char *path;
	uint8_t *data;
	size_t len;
};

static struct fake_state {
	const char *log_file;
	bool open;
	bool background; /* the last session_open asked for it */
	uint64_t runs;
	struct fake_file files[FAKE_FILES_MAX];
} fake_state;

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

	if (run->session != NULL && (!fake_state.open || strcmp(run->session, FAKE_SESSION) != 0)) {
		r = proto_encode_error(msg->id, PROTO_ERR_NOT_FOUND, "no such session", &out);
		return r < 0 ? r : fake_send(fd, &out);
	}
	if (run->session != NULL)
		fake_state.runs++;
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
	} else if (strcmp(code, "stream") == 0) {
		static const char *const chunks[3] = {"one\n", "two\n", "three\n"};

		for (i = 0; i < 3 && run->stream; i++) {
			struct proto_stream ev = {.stream = i == 1 ? "stderr" : "stdout",
						  .data = fake_blob(chunks[i], strlen(chunks[i]))};

			r = proto_encode_stream(msg->id, &ev, &out);
			if (r < 0 || (r = fake_send(fd, &out)) < 0)
				return r;
		}
		res.out[0].data = fake_blob("one\nthree\n", 10);
		res.out[1].data = fake_blob("two\n", 4);
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
		if (run->session != NULL)
			snprintf(err + strlen(err), sizeof(err) - strlen(err), " session=%s",
				 run->session);
		res.out[1].data = fake_blob(err, strlen(err));
	}
	res.out[0].total = res.out[0].data.len;
	res.out[1].total = res.out[1].data.len;
	r = proto_encode_result(msg->id, &res, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

#define FAKE_PS_MAX 16

/* The runs of PS_FILE (strings in names); returns how many. A line "more
 * N" sets *more (runs left out of the list), when more is not NULL. */
static size_t
fake_ps_load(const char *path, struct proto_ps_entry *runs, char (*names)[2][64], uint64_t *more)
{
	unsigned long long elapsed, left;
	char line[256];
	size_t n = 0;
	FILE *f;

	if (path == NULL || (f = fopen(path, "re")) == NULL)
		return 0;
	while (n < FAKE_PS_MAX && fgets(line, sizeof(line), f) != NULL) {
		struct proto_ps_entry *e = &runs[n];

		if (more != NULL && sscanf(line, "more %llu", &left) == 1) {
			*more = left;
			continue;
		}
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

	ps.nruns = fake_ps_load(ps_file, runs, names, &ps.more);
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
	n = fake_ps_load(ps_file, runs, names, NULL);
	for (i = 0; i < n; i++)
		if (runs[i].run == msg->u.cancel.run) {
			r = proto_encode_simple(msg->id, PROTO_CANCEL_OK, &out);
			return r < 0 ? r : fake_send(fd, &out);
		}
	snprintf(why, sizeof(why), "no run %" PRIu32 " of uid 1000", msg->u.cancel.run);
	r = proto_encode_error(msg->id, PROTO_ERR_NOT_FOUND, why, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

/* Send an error reply. */
static int
fake_error(int fd, uint32_t id, enum proto_error code, const char *why)
{
	struct proto_out out;
	int r = proto_encode_error(id, code, why, &out);

	return r < 0 ? r : fake_send(fd, &out);
}

/* Send a reply without fields. */
static int
fake_simple(int fd, uint32_t id, enum proto_type type)
{
	struct proto_out out;
	int r = proto_encode_simple(id, type, &out);

	return r < 0 ? r : fake_send(fd, &out);
}

/* The stored file at path, or NULL. */
static struct fake_file *
fake_file_find(const char *path)
{
	size_t i;

	for (i = 0; i < FAKE_FILES_MAX; i++)
		if (fake_state.files[i].path != NULL && strcmp(fake_state.files[i].path, path) == 0)
			return &fake_state.files[i];
	return NULL;
}

/* Forget a stored file. */
static void
fake_file_drop(struct fake_file *f)
{
	free(f->path);
	free(f->data);
	*f = (struct fake_file){0};
}

/* Answer session_open: log the options, open FAKE_SESSION. */
static int
fake_session_open(int fd, const struct proto_msg *msg)
{
	const struct proto_session_open *o = &msg->u.session_open;
	struct proto_out out;
	FILE *log;
	int r;

	if (fake_state.log_file != NULL && (log = fopen(fake_state.log_file, "ae")) != NULL) {
		fprintf(log,
			"session_open workspace=%llu idle=%llu lifetime=%llu wall=%llu cpu=%llu "
			"memory=%llu processes=%llu\n",
			(unsigned long long)o->workspace_bytes,
			(unsigned long long)o->idle_timeout_ms, (unsigned long long)o->lifetime_ms,
			(unsigned long long)o->limits.v[PROTO_LIMIT_WALL_MS],
			(unsigned long long)o->limits.v[PROTO_LIMIT_CPU_MS],
			(unsigned long long)o->limits.v[PROTO_LIMIT_MEMORY_BYTES],
			(unsigned long long)o->limits.v[PROTO_LIMIT_PROCESSES]);
		fclose(log);
	}
	fake_state.open = true;
	fake_state.background = o->background;
	r = proto_encode_session(msg->id, PROTO_SESSION_OK, FAKE_SESSION, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

/* Answer session_list: FAKE_SESSION when open. */
static int
fake_session_list(int fd, const struct proto_msg *msg)
{
	struct proto_session_entry e = {.session = FAKE_SESSION,
					.age_ms = 65000,
					.idle_ms = 1500,
					.runs = fake_state.runs,
					.state = "idle",
					.background = fake_state.background};
	struct proto_session_list l = {.sessions = &e, .nsessions = fake_state.open ? 1 : 0};
	struct proto_out out;
	int r = proto_encode_session_list(msg->id, &l, &out);

	return r < 0 ? r : fake_send(fd, &out);
}

/* Answer session_ps (two processes, "sleep" 7 and "python3" 9) and
 * process_stop (7 and 9 stop, anything else is not_found) of FAKE_SESSION
 * opened with background; bad_request for one without. */
static int
fake_processes(int fd, const struct proto_msg *msg)
{
	struct proto_process p[] = {{7, "sleep", 0, 1 << 20}, {9, "python3", 1500, 40 << 20}};
	struct proto_process_list l = {.processes = p, .nprocesses = 2};
	const char *sid = msg->type == PROTO_SESSION_PS ? msg->u.session_ps.session
							: msg->u.process_stop.session;
	struct proto_out out;
	int r;

	if (!fake_state.open || strcmp(sid, FAKE_SESSION) != 0)
		return fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND, "no such session");
	if (!fake_state.background)
		return fake_error(fd, msg->id, PROTO_ERR_BAD_REQUEST, "no background processes");
	if (msg->type == PROTO_PROCESS_STOP)
		return msg->u.process_stop.pid == 7 || msg->u.process_stop.pid == 9
			       ? fake_simple(fd, msg->id, PROTO_OK)
			       : fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND, "no such process");
	r = proto_encode_session_ps_ok(msg->id, &l, &out);
	return r < 0 ? r : fake_send(fd, &out);
}

/* Answer a file operation on the in-memory workspace. */
static int
fake_file_op(int fd, const struct proto_msg *msg)
{
	const struct proto_file_op *op = &msg->u.file;
	struct proto_file_entry entries[FAKE_FILES_MAX + 3];
	struct proto_file_list l = {.entries = entries};
	struct proto_file_data d = {0};
	struct proto_out out;
	struct fake_file *f;
	size_t i;
	int r;

	if (!fake_state.open || strcmp(op->session, FAKE_SESSION) != 0)
		return fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND, "no such session");
	if (op->path != NULL && strstr(op->path, "..") != NULL)
		return fake_error(fd, msg->id, PROTO_ERR_BAD_REQUEST, "path leaves the workspace");
	f = op->path != NULL ? fake_file_find(op->path) : NULL;
	switch (msg->type) {
	case PROTO_FILE_WRITE:
		if (op->path == NULL)
			return fake_error(fd, msg->id, PROTO_ERR_BAD_REQUEST,
					  "a write needs a path");
		if (strcmp(op->path, "full") == 0)
			return fake_error(fd, msg->id, PROTO_ERR_TOO_LARGE,
					  "full: No space left on device");
		if (f == NULL)
			for (i = 0; i < FAKE_FILES_MAX && f == NULL; i++)
				if (fake_state.files[i].path == NULL)
					f = &fake_state.files[i];
		if (f == NULL)
			return fake_error(fd, msg->id, PROTO_ERR_TOO_LARGE, "too many files");
		fake_file_drop(f);
		f->path = strdup(op->path);
		f->data = malloc(op->data.len + 1);
		if (f->path == NULL || f->data == NULL)
			return -ENOMEM;
		memcpy(f->data, op->data.data, op->data.len);
		f->len = op->data.len;
		return fake_simple(fd, msg->id, PROTO_OK);
	case PROTO_FILE_READ:
		if (f == NULL)
			return fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND,
					  "No such file or directory");
		d.size = f->len;
		d.truncated = f->len > FAKE_READ_MAX;
		d.data = fake_blob(f->data, d.truncated ? FAKE_READ_MAX : f->len);
		r = proto_encode_file_data(msg->id, &d, &out);
		return r < 0 ? r : fake_send(fd, &out);
	case PROTO_FILE_DELETE:
		if (f == NULL)
			return fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND,
					  "No such file or directory");
		fake_file_drop(f);
		return fake_simple(fd, msg->id, PROTO_OK);
	default: /* PROTO_FILE_LIST */
		if (op->path != NULL && op->path[0] != '\0')
			return fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND,
					  "No such file or directory");
		for (i = 0; i < FAKE_FILES_MAX; i++)
			if (fake_state.files[i].path != NULL)
				entries[l.nentries++] =
					(struct proto_file_entry){.name = fake_state.files[i].path,
								  .kind = "file",
								  .size = fake_state.files[i].len,
								  .mtime_ms = 1700000000123ULL};
		entries[l.nentries++] = (struct proto_file_entry){
			.name = "sub", .kind = "dir", .size = 60, .mtime_ms = 1700000000000ULL};
		entries[l.nentries++] = (struct proto_file_entry){
			.name = "lnk", .kind = "link", .size = 4, .mtime_ms = 0};
		entries[l.nentries++] = (struct proto_file_entry){
			.name = "a\nb", .kind = "other", .size = 0, .mtime_ms = 0};
		r = proto_encode_file_list(msg->id, &l, &out);
		return r < 0 ? r : fake_send(fd, &out);
	}
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
	case PROTO_SESSION_OPEN:
		return fake_session_open(fd, msg);
	case PROTO_SESSION_CLOSE:
		if (!fake_state.open || strcmp(msg->u.session.session, FAKE_SESSION) != 0)
			return fake_error(fd, msg->id, PROTO_ERR_NOT_FOUND, "no such session");
		fake_state.open = false;
		return fake_simple(fd, msg->id, PROTO_OK);
	case PROTO_SESSION_LIST:
		return fake_session_list(fd, msg);
	case PROTO_SESSION_PS:
	case PROTO_PROCESS_STOP:
		return fake_processes(fd, msg);
	case PROTO_FILE_WRITE:
	case PROTO_FILE_READ:
	case PROTO_FILE_LIST:
	case PROTO_FILE_DELETE:
		return fake_file_op(fd, msg);
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

	if (argc < 2 || argc > 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: fake-daemon SOCKET [PS_FILE [LOG_FILE]]\n");
		return 2;
	}
	fake_state.log_file = argc > 3 ? argv[3] : NULL;
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
