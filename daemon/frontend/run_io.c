/*
 * run_io.c: a run's input and output in the frontend: the output pipes
 * (kept up to the limit, streamed when asked), the lifeline to the
 * supervisor (its artifacts, set-up failure and exit report), the backstop
 * timer, and the result built from all of it (run.h).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "advisory.h"
#include "budget.h"
#include "run_owner.h"
#include "cgroup.h"
#include "clock.h"
#include "egress.h"
#include "fdpass.h"
#include "log.h"
#include "memfd.h"
#include "plan.h"
#include "run.h"
#include "rules.h"
#include "run_tools.h"
#include "xalloc.h"
#include "compiler.h"
#include "fdio.h"
#include "xevent.h"

/* The frontend's own wall backstop, beyond the supervisor's clock. */
#define RUN_BACKSTOP_MS 3000
#define RUN_READ_CHUNK 65536
/* The first allocation of a run's kept output; doubled as it grows. */
#define RUN_OUT_FIRST 4096

static void
run_io_close_out(struct run_out *o)
{
	frontend_unwatch(&o->ev, &o->fd);
	o->eof = true;
}

void
run_io_close_lifeline(struct run *r)
{
	frontend_unwatch(&r->lifeline_ev, &r->lifeline);
}

/* Send output as it comes, in inline chunks; only what is kept is streamed. */
static void
run_io_stream(struct run *r, const char *name, const uint8_t *data, size_t len)
{
	while (len > 0) {
		size_t n = len > PROTO_INLINE_MAX ? PROTO_INLINE_MAX : len;
		struct proto_stream ev = {
			.stream = name,
			.data = {.data = data, .len = n, .fd = -1, .present = true}};
		struct proto_out out;

		if (proto_encode_stream(r->req_id, &ev, &out) < 0)
			fatalx("cannot encode a stream event");
		client_send(r->c, &out);
		if (r->c == NULL)
			return;
		data += n;
		len -= n;
	}
}

/* Output readable: keep the first bytes up to the limit, count the rest. */
static void
run_io_out_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct run_out *o = arg;
	struct run *r = o->r;
	uint64_t cap = r->lim.v[PROTO_LIMIT_OUTPUT_BYTES];
	static uint8_t chunk[RUN_READ_CHUNK];
	int budget;

	for (budget = 16; budget > 0; budget--) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			run_io_close_out(o);
			r->io_done(r);
			return;
		}
		o->total += (uint64_t)n;
		if (o->len < cap) {
			size_t take = (size_t)n;

			if (take > cap - o->len)
				take = (size_t)(cap - o->len);
			if (r->stream && r->c != NULL)
				run_io_stream(r, o == &r->out[0] ? "stdout" : "stderr", chunk,
					      take);
			/* Grown to what is kept, doubling, never past the limit: a
			 * buffer of the whole limit per run (1 MiB by default) made
			 * glibc raise its mmap threshold and keep 32 MiB of heap
			 * after a burst of 32 runs (tests/load's RSS check). */
			if (o->len + take > o->cap) {
				size_t want = o->cap == 0 ? RUN_OUT_FIRST : o->cap;

				while (want < o->len + take)
					want *= 2;
				if (want > cap)
					want = (size_t)cap;
				o->buf = xrealloc(o->buf, want);
				o->cap = want;
			}
			memcpy(o->buf + o->len, chunk, take);
			o->len += take;
		}
	}
}

/* Does a component of the path start with '.' (a dot-file, or in a
 * dot-directory such as .cache)? */
static bool
run_io_name_hidden(const char *name)
{
	const char *p;

	if (name[0] == '.')
		return true;
	for (p = name; (p = strchr(p, '/')) != NULL; p++)
		if (p[1] == '.')
			return true;
	return false;
}

/*
 * The order in which candidates get the artifacts limit's slots: files
 * outside dot-directories and not dot-files first (caches and tool state are
 * what code writes without meaning to return), then the most recently
 * modified first (what the code wrote last is what it was making), then by
 * name. docs/protocol.md states this rule.
 */
static bool
run_io_artifact_before(const struct run_artifact *a, const struct run_artifact *b)
{
	if (a->hidden != b->hidden)
		return !a->hidden;
	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec > b->mtime.tv_sec;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec > b->mtime.tv_nsec;
	return strcmp(a->name, b->name) < 0;
}

/* One left out: counted, with its size, for the result. */
static void
run_io_omit_artifact(struct run *r, uint64_t size)
{
	r->arts_omitted++;
	r->arts_omitted_bytes += size;
}

/* Keep a candidate artifact if it is among the first N by
 * run_io_artifact_before; count what is left out. */
void
run_io_add_artifact(struct run *r, const struct sup_msg *m, int fd)
{
	size_t max = (size_t)r->lim.v[PROTO_LIMIT_ARTIFACTS], pos;
	struct run_artifact a;
	struct stat st;

	/* The supervisor is inside the sandbox: check what it says. */
	if (m->name_len == 0 || m->name_len > SUP_NAME_MAX || memchr(m->name, '\0', m->name_len)) {
		close(fd);
		return;
	}
	memset(&a, 0, sizeof(a));
	memcpy(a.name, m->name, m->name_len);
	a.name[m->name_len] = '\0';
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (rules_workspace_name_check(a.name) < 0 || max == 0) {
		run_io_omit_artifact(r, (uint64_t)st.st_size);
		close(fd);
		return;
	}
	a.fd = fd;
	a.size = (uint64_t)st.st_size;
	a.mtime = st.st_mtim;
	a.hidden = run_io_name_hidden(a.name);
	if (r->arts == NULL) {
		r->arts = xcalloc(max, sizeof(*r->arts));
	}
	for (pos = r->narts; pos > 0 && run_io_artifact_before(&a, &r->arts[pos - 1]); pos--)
		;
	if (pos == max) {
		run_io_omit_artifact(r, a.size);
		close(fd);
		return;
	}
	if (r->narts == max) {
		run_io_omit_artifact(r, r->arts[max - 1].size);
		close(r->arts[max - 1].fd);
		r->narts--;
	}
	memmove(&r->arts[pos + 1], &r->arts[pos], (r->narts - pos) * sizeof(*r->arts));
	r->arts[pos] = a;
	r->narts++;
}

static int
run_io_artifact_name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct run_artifact *)a)->name,
		      ((const struct run_artifact *)b)->name);
}

/* The proxy's strings fit the wire's bounds: the encoder never refuses them. */
_Static_assert(sizeof(((struct egress_stats *)0)->contacted[0]) <= PROTO_NET_TARGET_MAX + 1 &&
		       sizeof(((struct egress_stats *)0)->refusals[0].host) <=
			       PROTO_NET_TARGET_MAX + 1 &&
		       sizeof(((struct egress_stats *)0)->refusals[0].reason) <=
			       PROTO_NET_REASON_MAX + 1 &&
		       EGRESS_REPORT_MAX <= PROTO_NET_REPORT_MAX,
	       "egress_stats strings longer than result.network carries");

/* result.network from the proxy's figures (pointing into them). */
static void
run_io_network(const struct egress_stats *st, struct proto_network *ret,
	       struct proto_refusal refusals[EGRESS_REPORT_MAX])
{
	size_t i;

	memset(ret, 0, sizeof(*ret));
	ret->bytes_up = st->bytes_up;
	ret->bytes_down = st->bytes_down;
	ret->connections = st->connections;
	ret->refused = st->refused;
	for (i = 0; i < st->ncontacted && i < PROTO_NET_REPORT_MAX; i++)
		ret->contacted[ret->ncontacted++] = st->contacted[i];
	for (i = 0; i < st->nrefusals && i < PROTO_NET_REPORT_MAX; i++) {
		refusals[i].host = st->refusals[i].host;
		refusals[i].reason = st->refusals[i].reason;
		ret->nrefusals++;
	}
	ret->refusals = refusals;
}

/*
 * The supervisor's listener of a network = proxy run: served by the proxy
 * from now. A sandbox that sends one for a run without network = proxy, or
 * twice, is not what it should be: the run ends.
 */
void
run_io_egress_open(struct run *r, int fd)
{
	int rc;

	if (r->egress_pol == NULL || r->egress != NULL) {
		log_warnx("run %" PRIu32 ": unexpected egress listener from the sandbox",
			  r->run_id);
		close(fd);
		run_io_close_lifeline(r);
		return;
	}
	if (r->d->egress == NULL) {
		rc = egress_new(r->d->base, r->d->cfg, &r->d->egress);
		if (rc < 0)
			fatalx("cannot start the egress proxy: %s", strerror(-rc));
	}
	rc = egress_run_open(r->d->egress, r->run_id, r->egress_pol, fd, &r->egress);
	if (rc < 0) {
		log_warnx("run %" PRIu32 ": cannot serve its egress: %s", r->run_id, strerror(-rc));
		run_io_close_lifeline(r);
	}
}

/* The frontend's own wall clock fired: the supervisor did not end the run. */
static void
run_io_backstop_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct run *r = arg;

	log_warnx("run %" PRIu32 ": supervisor did not end the run in time; killing it", r->run_id);
	r->f.backstop_fired = true;
	run_io_close(r);
	r->io_done(r);
}

/*
 * Copy up to cap bytes of an artifact into a sealed memfd, holes as holes,
 * at most max_data bytes of data (what is left of the uid's byte budget).
 */
static int
run_io_artifact_blob(int fd, uint64_t cap, uint64_t max_data, struct proto_artifact *a,
		     int *ret_memfd)
{
	uint64_t len, size;
	int mfd, r;

	r = memfd_sealed_copy_sparse(fd, cap, max_data, &mfd, &len, &size);
	if (r < 0)
		return r;
	a->size = size;
	a->truncated = len < size;
	a->data.fd = mfd;
	a->data.len = len;
	a->data.present = true;
	*ret_memfd = mfd;
	return 0;
}

/*
 * Can the memory figures be read before the reap? Only through the fds the
 * spawner gave, and only if they make sense (run_outcome_memory_usable):
 * anything else waits for the reap, where the spawner reads them itself.
 */
bool
run_io_memory_early(struct run *r)
{
	uint64_t peak = 0;
	bool oom = false;
	int rc = -EBADF;

	if (r->d->resource_control == CGROUP_NONE)
		return true;
	if (r->stat_fd[0] >= 0)
		rc = cgroup_read_stats(r->stat_fd[0], r->stat_fd[1], &peak, &oom);
	if (!run_outcome_memory_usable(rc, peak)) {
		log_debug("run %" PRIu32 ": memory figures not readable yet; answering at the reap",
			  r->run_id);
		return false;
	}
	r->f.mem_peak = peak;
	r->f.mem_oom = oom;
	r->f.mem_read = true;
	return true;
}

/*
 * The result's artifacts (res->artifacts, nartifacts; the array returned for
 * the caller to free). The copies are held for the uid until its client
 * read them: they fit in what is left of its byte budget, less a packet for
 * the result itself. Past it an artifact is truncated (an unread result
 * must not pin memory no limit covers).
 */
uint64_t
run_io_copy_room(struct run *r)
{
	uint64_t left;

	(void)budget_sweep(&r->d->budget, r->uid, false);
	left = budget_bytes_left(&r->d->budget, r->uid, r->d->cfg->max_bytes_per_uid);
	return left > PROTO_MSG_MAX ? left - PROTO_MSG_MAX : 0;
}

static struct proto_artifact *
run_io_artifacts(struct run *r, struct proto_result *res)
{
	struct proto_artifact *arts;
	uint64_t left = run_io_copy_room(r);
	size_t i;

	arts = xcalloc(r->narts, sizeof(*arts));
	/* Chosen best first; the result lists them by name. */
	qsort(r->arts, r->narts, sizeof(*r->arts), run_io_artifact_name_cmp);
	for (i = 0; i < r->narts; i++) {
		uint64_t used;
		int mfd;

		if (run_io_artifact_blob(r->arts[i].fd, r->lim.v[PROTO_LIMIT_ARTIFACT_BYTES], left,
					 &arts[res->nartifacts], &mfd) < 0) {
			run_io_omit_artifact(r, r->arts[i].size);
			continue;
		}
		used = budget_fd_bytes(mfd);
		left = used < left ? left - used : 0;
		arts[res->nartifacts].name = r->arts[i].name;
		res->nartifacts++;
	}
	res->artifacts = arts;
	return arts;
}

struct proto_artifact *
run_io_cell_artifacts(struct run *r, struct proto_result *res)
{
	struct proto_artifact *arts = NULL;
	size_t i;

	if (r->narts > 0)
		arts = run_io_artifacts(r, res);
	res->artifacts_omitted = r->arts_omitted;
	res->artifacts_omitted_bytes = r->arts_omitted_bytes;
	for (i = 0; i < r->narts; i++)
		if (r->arts[i].fd >= 0)
			close(r->arts[i].fd);
	r->narts = 0;
	r->arts_omitted = r->arts_omitted_bytes = 0;
	return arts;
}

void
run_io_artifacts_free(struct proto_artifact *arts, size_t n)
{
	size_t i;

	for (i = 0; arts != NULL && i < n; i++)
		close(arts[i].data.fd);
	free(arts);
}

/* Build the result, send it, log it. The run is not freed here. */
void
run_io_answer(struct run *r)
{
	struct proto_result res;
	struct proto_artifact *arts = NULL, *disp = NULL;
	struct egress_stats *net = NULL;
	struct proto_refusal refusals[EGRESS_REPORT_MAX];
	struct proto_network pnet;
	struct proto_out out;
	char err[512] = "";
	size_t i, k;
	int rc;

	memset(&res, 0, sizeof(res));
	run_outcome_decide(&r->f, &res, err, sizeof(err));
	/* t_start is set once the run leaves the queue. */
	if (res.wall_ms == 0 && r->t_start.tv_sec != 0)
		res.wall_ms = clock_ms_since(&r->t_start);
	res.error = err[0] ? err : NULL;
	for (k = 0; k < 2; k++) {
		res.out[k].data.data = r->out[k].buf ? r->out[k].buf : (const uint8_t *)"";
		res.out[k].data.len = r->out[k].len;
		res.out[k].data.fd = -1;
		res.out[k].data.present = true;
		res.out[k].total = r->out[k].total;
		res.out[k].truncated = r->out[k].total > r->out[k].len;
	}
	if (r->narts > 0 && r->c != NULL)
		arts = run_io_artifacts(r, &res);
	res.artifacts_omitted = r->arts_omitted;
	res.artifacts_omitted_bytes = r->arts_omitted_bytes;
	if (r->c != NULL && r->cells == NULL)
		disp = run_display_result(r, &res);
	if (r->t_start.tv_sec != 0)
		res.queued_ms = clock_ms_between(&r->t_request, &r->t_start);
	else
		res.queued_ms = clock_ms_since(&r->t_request);
	for (i = 0; r->advisories != NULL && i < r->advisories->n; i++)
		res.advisories[res.nadvisories++] = r->advisories->text[i];
	/* Calls still waiting are abandoned: the code is gone. */
	run_tools_close(r);
	run_tools_result(r, &res);
	/* The code is gone (or its answer is being given): its connections close now. */
	if (r->egress != NULL) {
		net = xmalloc(sizeof(*net));
		egress_run_close(r->egress, net);
		r->egress = NULL;
	}
	audit_run(r->d,
		  &(struct audit_who){.run_id = r->run_id,
				      .uid = r->uid,
				      .pid = r->client_pid,
				      .runtime = r->runtime,
				      .profile = r->profile,
				      .asked = &r->asked,
				      .prestarted = r->prestarted,
				      .zygote = r->zygote_key == 0 ? NULL
						: r->f.exit_msg.step == SUP_ZYGOTE_RAN
							? "ran"
							: "fell_back"},
		  &res, net, err);
	if (r->cells != NULL)
		r->d->cells_ops->interp_ended(r->cells, r, &res);
	if (net != NULL && r->c != NULL && client_knows_network(r->c)) {
		run_io_network(net, &pnet, refusals);
		res.network = &pnet;
	}
	/* A client that did not name process_limit in its hello would refuse
	 * it: it gets what the code's status says (the supervisor's SIGKILL). */
	if (r->c != NULL)
		run_outcome_for_client(&r->f, client_knows_process_limit(r->c), &res, err,
				       sizeof(err));
	if (r->c != NULL) {
		rc = proto_encode_result(r->req_id, &res, &out);
		client_send_encoded(r->c, r->req_id, rc, &out, "the result");
	}
	for (i = 0; arts != NULL && i < res.nartifacts; i++)
		close(arts[i].data.fd);
	free(arts);
	run_io_artifacts_free(disp, res.ndisplay);
	free(net);
	for (i = 0; i < r->narts; i++)
		if (r->arts[i].fd >= 0) {
			close(r->arts[i].fd);
			r->arts[i].fd = -1;
		}
}

int
run_io_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int
run_io_open(struct run *r, int ret_child[3])
{
	struct daemon *d = r->d;
	int outp[2][2] = {{-1, -1}, {-1, -1}}, life[2] = {-1, -1};
	struct timeval tv;
	uint64_t backstop;
	int k, rc = 0;
	/* A pre-started interpreter's pipes came with its sandbox (run_pool.c):
	 * the read ends are the run's already, the write ends the interpreter's. */
	bool have = r->out[0].fd >= 0;

	if ((!have && ((rc = run_io_pipe(outp[0])) < 0 || (rc = run_io_pipe(outp[1])) < 0)) ||
	    (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, life) < 0 && (rc = -errno)) ||
	    (fcntl(life[0], F_SETFL, O_NONBLOCK) < 0 && (rc = -errno))) {
		for (k = 0; k < 2; k++) {
			fd_close_pair(outp[k]);
		}
		fd_close_pair(life);
		return rc;
	}
	r->lifeline = life[0];
	r->lifeline_ev = xevent_new(d->base, life[0], EV_READ | EV_PERSIST, lifeline_cb, r);
	r->backstop_ev = xevtimer_new(d->base, run_io_backstop_cb, r);
	for (k = 0; k < 2; k++) {
		if (!have)
			r->out[k].fd = outp[k][0];
		r->out[k].ev = xevent_new(d->base, r->out[k].fd, EV_READ | EV_PERSIST,
					  run_io_out_cb, &r->out[k]);
	}
	event_add(r->lifeline_ev, NULL);
	event_add(r->out[0].ev, NULL);
	event_add(r->out[1].ev, NULL);
	/* The wall limit counts from here: time in the queue is not the run's. */
	backstop = r->lim.v[PROTO_LIMIT_WALL_MS] + RUN_BACKSTOP_MS;
	tv.tv_sec = (time_t)(backstop / 1000);
	tv.tv_usec = (suseconds_t)((backstop % 1000) * 1000);
	/* An interpreter lives as long as its session; each cell is timed
	 * by its supervisor (cells.h). */
	if (r->cells == NULL)
		event_add(r->backstop_ev, &tv);
	ret_child[0] = life[1];
	ret_child[1] = outp[0][1];
	ret_child[2] = outp[1][1];
	return 0;
}

void
run_io_close(struct run *r)
{
	run_tools_close(r);
	run_io_close_lifeline(r);
	run_io_close_out(&r->out[0]);
	run_io_close_out(&r->out[1]);
}

void
run_io_reset(struct run *r)
{
	size_t i;
	int k;

	run_io_close(r);
	for (k = 0; k < 2; k++) {
		free(r->out[k].buf);
		r->out[k].buf = NULL;
		r->out[k].cap = 0;
		r->out[k].len = 0;
		r->out[k].total = 0;
		r->out[k].eof = false;
	}
	if (r->backstop_ev != NULL)
		event_free(r->backstop_ev);
	r->backstop_ev = NULL;
	for (i = 0; i < r->narts; i++)
		fd_close(r->arts[i].fd);
	free(r->arts);
	r->arts = NULL;
	r->narts = 0;
	r->arts_omitted = 0;
	r->arts_omitted_bytes = 0;
	run_display_reset(r);
}

void
run_io_free(struct run *r)
{
	run_io_reset(r);
	egress_run_close(r->egress, NULL);
	r->egress = NULL;
	free(r->egress_pol);
	r->egress_pol = NULL;
	run_tools_free(r->tools);
	r->tools = NULL;
	free(r->advisories);
	r->advisories = NULL;
}
