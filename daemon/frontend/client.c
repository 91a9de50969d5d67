/*
 * client.c: one client connection: peer credentials, the receive path
 * (every packet through proto_decode() before any handler), the dispatch
 * table, and a bounded send queue.
 *
 * Failure follows trust: a malformed packet from a client gets an error
 * reply and the connection goes on; only a client that cannot be answered
 * (send queue over its bound, a socket error) is dropped.
 */
#include <errno.h>
#include <event2/event.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"
#include "frontend.h"
#include "pypkgs.h"
#include "session.h"
#include "log.h"
#include "memfd.h"
#include "xalloc.h"
#include "compiler.h"
#include "xevent.h"

#define CLIENT_HELLO_TIMEOUT_S 10
#define CLIENT_GROUPS_MAX 64
/*
 * Fds a connection may have in flight: sent, not yet read by its client.
 * One packet's worth. Fds in a socket's queue count against the sender's
 * user (its kernel count of fds in flight, limited by RLIMIT_NOFILE), and
 * no close on our side takes them back: only the client's read or close.
 */
#define CLIENT_UNREAD_FDS_MAX PROTO_FDS_MAX
/* How often replies sent but not yet read are looked at. */
#define CLIENT_TICK_MS 20
/* How often memfds given to clients are looked at (budget_sweep()): a
 * refusal looks at its uid's at once, so this only gives back early. */
#define CLIENT_HELD_TICK_MS 500

struct client_pkt {
	TAILQ_ENTRY(client_pkt) entry;
	struct proto_out out;
	uint64_t mem; /* bytes the memfds it carries hold */
};

struct client {
	TAILQ_ENTRY(client) entry;
	struct daemon *d;
	uint32_t id;
	int fd;
	struct event *read_ev, *write_ev, *hello_ev;
	uid_t uid;
	gid_t gids[CLIENT_GROUPS_MAX];
	size_t ngids;
	pid_t pid;
	bool allowed;
	bool over_limit; /* more connections than max_connections_per_uid */
	bool hello_done;
	bool process_limit; /* the client's hello named the outcome process_limit */
	bool network;	    /* ... and result.network */
	bool tools;	    /* the client's hello named the feature tools */
	bool closing;	    /* send what is queued, then close */
	bool dead;	    /* freed on the next loop turn; nothing more is done */
	bool orphaned;	    /* its runs were killed, its sessions told */
	struct event *free_ev;
	TAILQ_HEAD(, client_pkt) outq;
	uint64_t queued_bytes; /* encoded bytes in outq */
	uint32_t queued_fds;   /* fds in outq */
	uint64_t queued_mem;   /* memfd bytes in outq */
	/* Sent but perhaps not read yet (until its socket's queue is seen
	 * empty): still charged to the uid's budget. */
	uint32_t unread_fds;
	uint64_t unread_bytes;
	bool lingering; /* dropped, kept only until its unread fds are read */
	uint32_t nruns;
};

/* Handler flags, in the table rather than in each handler. */
#define H_BEFORE_HELLO 0x1 /* allowed as the first message */
#define H_AFTER_HELLO 0x2  /* allowed once the handshake is done */

struct client_handler {
	enum proto_type type;
	unsigned flags;
	void (*fn)(struct client *c, const struct proto_msg *m);
};

static void client_free_cb(evutil_socket_t fd, short what, void *arg);
static void client_on_hello(struct client *c, const struct proto_msg *m);
static void client_on_ping(struct client *c, const struct proto_msg *m);
static void client_on_info(struct client *c, const struct proto_msg *m);
static void client_on_run(struct client *c, const struct proto_msg *m);
static void client_on_cancel(struct client *c, const struct proto_msg *m);
static void client_on_ps(struct client *c, const struct proto_msg *m);
static void client_on_session_open(struct client *c, const struct proto_msg *m);
static void client_on_session_close(struct client *c, const struct proto_msg *m);
static void client_on_session_list(struct client *c, const struct proto_msg *m);
static void client_on_file(struct client *c, const struct proto_msg *m);
static void client_on_tool_reply(struct client *c, const struct proto_msg *m);

static const struct client_handler client_handlers[] = {
	{PROTO_HELLO, H_BEFORE_HELLO, client_on_hello},
	{PROTO_PING, H_AFTER_HELLO, client_on_ping},
	{PROTO_INFO, H_AFTER_HELLO, client_on_info},
	{PROTO_RUN, H_AFTER_HELLO, client_on_run},
	{PROTO_CANCEL, H_AFTER_HELLO, client_on_cancel},
	{PROTO_PS, H_AFTER_HELLO, client_on_ps},
	{PROTO_SESSION_OPEN, H_AFTER_HELLO, client_on_session_open},
	{PROTO_SESSION_CLOSE, H_AFTER_HELLO, client_on_session_close},
	{PROTO_SESSION_LIST, H_AFTER_HELLO, client_on_session_list},
	{PROTO_FILE_WRITE, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_READ, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_LIST, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_DELETE, H_AFTER_HELLO, client_on_file},
	{PROTO_TOOL_REPLY, H_AFTER_HELLO, client_on_tool_reply},
};

bool
client_knows_tools(const struct client *c)
{
	return c->tools;
}

bool
client_knows_process_limit(const struct client *c)
{
	return c->process_limit;
}

bool
client_knows_network(const struct client *c)
{
	return c->network;
}

uid_t
client_uid(const struct client *c)
{
	return c->uid;
}

pid_t
client_pid(const struct client *c)
{
	return c->pid;
}

uint32_t
client_nruns(const struct client *c)
{
	return c->nruns;
}

void
client_run_added(struct client *c, struct run *r UNUSED)
{
	c->nruns++;
}

void
client_run_removed(struct client *c, struct run *r UNUSED)
{
	if (c->nruns > 0)
		c->nruns--;
}

static void client_tick_arm(struct daemon *d);
static void client_held_arm(struct daemon *d);

/*
 * Has the client read everything sent to it? SIOCOUTQ on a Unix socket is
 * what the peer has not read yet. If so, what was sent is no longer ours
 * to count: it leaves the uid's budget. Returns true when nothing is unread.
 */
static bool
client_refresh(struct client *c)
{
	int n = 0;

	if (c->unread_fds == 0 && c->unread_bytes == 0)
		return true;
	if (ioctl(c->fd, SIOCOUTQ, &n) < 0 || n > 0)
		return false;
	budget_release(&c->d->budget, c->uid, c->unread_bytes, c->unread_fds);
	c->unread_fds = 0;
	c->unread_bytes = 0;
	return true;
}

/* Take a packet off the queue; what it holds stays charged unless sent is
 * false (then it is given back). */
static void
client_pkt_done(struct client *c, struct client_pkt *p, bool sent)
{
	TAILQ_REMOVE(&c->outq, p, entry);
	c->queued_bytes -= p->out.len;
	c->queued_fds -= (uint32_t)p->out.nfds;
	c->queued_mem -= p->mem;
	if (sent) {
		c->unread_fds += (uint32_t)p->out.nfds;
		c->unread_bytes += p->out.len + p->mem;
	} else {
		budget_release(&c->d->budget, c->uid, p->out.len + p->mem, (uint32_t)p->out.nfds);
	}
	proto_out_free(&p->out);
	free(p);
}

/*
 * Flush as much of the send queue as the socket takes. A packet with fds
 * waits while the client has not read the fds sent before it (beyond one
 * packet's worth): a client that does not read gets no more fds.
 */
static int
client_flush(struct client *c)
{
	struct client_pkt *p;

	while ((p = TAILQ_FIRST(&c->outq)) != NULL) {
		int r;

		if (p->out.nfds > 0 && c->unread_fds + p->out.nfds > CLIENT_UNREAD_FDS_MAX &&
		    !client_refresh(c)) {
			client_tick_arm(c->d);
			return 0;
		}
		r = proto_send(c->fd, &p->out);
		if (r == -EAGAIN || r == -EWOULDBLOCK || r == -ENOBUFS) {
			event_add(c->write_ev, NULL);
			return 0;
		}
		client_pkt_done(c, p, r == 0);
		if (r < 0)
			return r;
	}
	if (c->unread_fds > 0 || c->unread_bytes > 0)
		client_tick_arm(c->d);
	if (c->closing)
		client_kill(c);
	return 0;
}

/* Memory the memfds of a packet hold (allocated pages: holes are free). */
static uint64_t
client_out_mem(const struct proto_out *out)
{
	uint64_t mem = 0;
	size_t i;

	for (i = 0; i < out->nfds; i++)
		mem += budget_fd_bytes(out->fds[i]);
	return mem;
}

/* The memfds of a packet that hold something: each needs a probe. */
static uint32_t
client_out_probes(const struct proto_out *out)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < out->nfds; i++)
		n += budget_fd_bytes(out->fds[i]) > 0;
	return n;
}

/*
 * The memfds of a packet charged to c's uid stay charged until the client
 * lets them go, not until it reads them: their pages were written by the
 * frontend, so the kernel charges them to the frontend's memory cgroup for
 * as long as any process keeps them open or mapped, whatever the client
 * does with them (issue 28, point 3). Each memfd is sent as a description
 * of its own (memfd_give()), and its bytes are held (budget_hold()) until
 * that description is gone. Never sent untracked: the caller made room
 * (client_send()); on a failure, -errno, *unheld is the bytes of the
 * memfds not held (the ones held stay so until their given fds are closed).
 */
static int
client_out_give(struct client *c, struct proto_out *out, uint64_t *unheld)
{
	size_t i;
	int r = 0;

	*unheld = 0;
	for (i = 0; i < out->nfds; i++) {
		uint64_t mem = budget_fd_bytes(out->fds[i]);
		int give;

		if (mem == 0)
			continue; /* an empty memfd holds nothing */
		if (r < 0) {
			*unheld += mem;
			continue;
		}
		r = memfd_give(out->fds[i], &give);
		if (r == 0) {
			r = budget_hold(&c->d->budget, c->uid, out->fds[i], mem,
					c->d->cfg->max_fds_per_uid);
			if (r < 0)
				close(give);
		}
		if (r < 0) {
			*unheld += mem;
			continue;
		}
		/* Ours is the probe now (held); the client gets the new one. */
		out->fds[i] = give;
	}
	if (c->d->budget.nheld > 0)
		client_held_arm(c->d);
	return r;
}

/*
 * Room for the probes of a reply's memfds, or the reply is refused (busy):
 * as many per uid as max_fds_per_uid, held_max in all (budget_hold()). A
 * reply past them is never sent untracked: that let a uid fill the global
 * ceiling with tiny reads and then keep results past its byte budget.
 * Returns true when out was answered so (and freed).
 */
static bool
client_held_refused(struct client *c, struct proto_out *out)
{
	struct budget *b = &c->d->budget;
	uint32_t max = c->d->cfg->max_fds_per_uid, need = client_out_probes(out);
	uint32_t id = out->id;

	if (need == 0)
		return false;
	/* What its clients let go of is given back first (its own only). */
	if (budget_held_room(b, c->uid, max) < need)
		(void)budget_sweep(b, c->uid, false);
	if (budget_held_room(b, c->uid, max) >= need)
		return false;
	proto_out_free(out);
	if (budget_held(b, c->uid) + need > max)
		client_send_error(c, id, PROTO_ERR_BUSY,
				  "uid %u: its clients keep %" PRIu32
				  " memfds of results open; max_fds_per_uid is %" PRIu32
				  "; close results no longer needed",
				  (unsigned)c->uid, budget_held(b, c->uid), max);
	else
		client_send_error(c, id, PROTO_ERR_BUSY,
				  "clients keep %" PRIu32 " memfds of results open, the daemon's "
				  "limit; close results no longer needed or retry later",
				  b->nheld);
	return true;
}

/*
 * A client dropped for not reading hears why when it reads at last: one
 * busy error (id 0, no fds), past the queue, if the socket takes it now.
 */
static void
client_farewell(struct client *c)
{
	struct proto_out out;

	if (proto_encode_error(0, PROTO_ERR_BUSY,
			       "connection dropped: the client did not read its replies", &out) < 0)
		return;
	(void)proto_send(c->fd, &out);
	proto_out_free(&out);
}

void
client_send(struct client *c, struct proto_out *out)
{
	const struct config *cfg;
	struct client_pkt *p;
	uint32_t nfds;
	uint64_t mem;

	if (c == NULL || c->dead) {
		proto_out_free(out);
		return;
	}
	cfg = c->d->cfg;
	nfds = (uint32_t)out->nfds;
	mem = client_out_mem(out);
	/*
	 * Bounded per connection: encoded bytes and fds queued or unread. A
	 * client that does not read is dropped; the daemon does not hold its
	 * replies forever (their memfd bytes were bounded by the uid's byte
	 * budget when they were made: run.c, session.c).
	 */
	if (c->queued_bytes + out->len > cfg->max_queued_bytes) {
		log_warnx("client %" PRIu32 " uid %u: not reading: send queue over %" PRIu64
			  " bytes; dropping",
			  c->id, (unsigned)c->uid, cfg->max_queued_bytes);
		goto drop;
	}
	if (nfds > 0 && c->queued_fds + c->unread_fds + nfds > cfg->max_queued_fds &&
	    (!client_refresh(c) || c->queued_fds + nfds > cfg->max_queued_fds)) {
		log_warnx("client %" PRIu32 " uid %u: not reading: %" PRIu32
			  " fds in replies queued or unread, max_queued_fds is %" PRIu32
			  "; dropping",
			  c->id, (unsigned)c->uid, c->queued_fds + c->unread_fds,
			  cfg->max_queued_fds);
		goto drop;
	}
	if (client_held_refused(c, out))
		return;
	/* Per uid (its other connections too) and in all: fds are charged
	 * here, bytes always (they were checked where they were made). */
	if (budget_charge(&c->d->budget, c->uid, out->len + mem, nfds, UINT64_MAX,
			  cfg->max_fds_per_uid) < 0) {
		log_warnx("client %" PRIu32 " uid %u: not reading: uid %u has %" PRIu32
			  " fds in replies queued or unread (max_fds_per_uid %" PRIu32 "), %" PRIu32
			  " in all (at most %" PRIu32 "); dropping",
			  c->id, (unsigned)c->uid, (unsigned)c->uid,
			  budget_fds(&c->d->budget, c->uid), cfg->max_fds_per_uid, c->d->budget.fds,
			  c->d->budget.fds_max);
		goto drop;
	}
	if (client_out_give(c, out, &mem) < 0) {
		uint32_t id = out->id;

		log_warnx("client %" PRIu32 " uid %u: a memfd of a reply cannot be followed; "
			  "refused",
			  c->id, (unsigned)c->uid);
		budget_release(&c->d->budget, c->uid, out->len + mem, nfds);
		proto_out_free(out);
		client_send_error(c, id, PROTO_ERR_INTERNAL,
				  "a memfd of the reply cannot be followed");
		return;
	}
	p = xcalloc(1, sizeof(*p));
	p->out = *out;
	p->mem = mem;
	memset(out, 0, sizeof(*out));
	TAILQ_INSERT_TAIL(&c->outq, p, entry);
	c->queued_bytes += p->out.len;
	c->queued_fds += nfds;
	c->queued_mem += mem;
	if (TAILQ_FIRST(&c->outq) == p && client_flush(c) < 0) {
		log_debug("client %" PRIu32 ": send failed; closing", c->id);
		client_kill(c);
	}
	return;
drop:
	proto_out_free(out);
	client_farewell(c);
	client_kill(c);
}

/*
 * Every CLIENT_TICK_MS while a reply was sent and not yet seen read: give
 * back what clients have read, send what waited for that, and free the
 * dropped connections whose fds were read at last.
 */
static void
client_tick_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct daemon *d = arg;
	struct client *c, *next;
	bool again = false;

	for (c = TAILQ_FIRST(&d->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (!client_refresh(c)) {
			again = true;
			if (!c->lingering && !c->dead && !TAILQ_EMPTY(&c->outq) &&
			    client_flush(c) < 0)
				client_kill(c);
			continue;
		}
		if (c->lingering) {
			client_free(c);
			continue;
		}
		if (!c->dead && !TAILQ_EMPTY(&c->outq) &&
		    !event_pending(c->write_ev, EV_WRITE, NULL) && client_flush(c) < 0)
			client_kill(c);
	}
	if (again)
		client_tick_arm(d);
}

/* Every CLIENT_HELD_TICK_MS while memfds are held: give back what was let go. */
static void
client_held_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct daemon *d = arg;

	(void)budget_sweep(&d->budget, 0, true);
	if (d->budget.nheld > 0)
		client_held_arm(d);
}

static void
client_held_arm(struct daemon *d)
{
	struct timeval tv = {0, CLIENT_HELD_TICK_MS * 1000};

	if (d->held_tick_ev == NULL)
		d->held_tick_ev = xevtimer_new(d->base, client_held_cb, d);
	if (!evtimer_pending(d->held_tick_ev, NULL))
		evtimer_add(d->held_tick_ev, &tv);
}

static void
client_tick_arm(struct daemon *d)
{
	struct timeval tv = {0, CLIENT_TICK_MS * 1000};

	if (d->client_tick_ev == NULL) {
		d->client_tick_ev = xevtimer_new(d->base, client_tick_cb, d);
	}
	if (!evtimer_pending(d->client_tick_ev, NULL))
		evtimer_add(d->client_tick_ev, &tv);
}

void
client_send_error(struct client *c, uint32_t id, enum proto_error code, const char *fmt, ...)
{
	struct proto_out out;
	char msg[PROTO_MSG_PRINTABLE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_debug("client %" PRIu32 " uid %u: request %" PRIu32 ": %s: %s", c->id, (unsigned)c->uid,
		  id, proto_error_name(code), msg);
	if (proto_encode_error(id, code, msg, &out) < 0)
		fatalx("cannot encode an error reply");
	client_send(c, &out);
}

void
client_send_encoded(struct client *c, uint32_t id, int rc, struct proto_out *out, const char *what)
{
	if (rc < 0)
		client_send_error(c, id, PROTO_ERR_INTERNAL, "cannot encode %s: %s", what,
				  strerror(-rc));
	else
		client_send(c, out);
}

static void
client_on_hello(struct client *c, const struct proto_msg *m)
{
	struct proto_hello h = {.version = PROTO_VERSION,
				.peer = "airlockd " AIRLOCK_VERSION,
				.features = {PROTO_FEATURE_PROCESS_LIMIT, PROTO_FEATURE_NETWORK,
					     PROTO_FEATURE_FILE_BUNDLE, PROTO_FEATURE_TOOLS},
				.nfeatures = 4};
	struct proto_out out;

	/* Refusals wait for the hello so the reply has an id to answer and
	 * the client reads it (closing with its hello unread would reset it).
	 * Checked again here: a reload between the connect and the hello may
	 * have removed the user. */
	if (!c->allowed || !client_allowed(c)) {
		client_send_error(c, m->id, PROTO_ERR_UNAUTHORIZED,
				  "uid %u is not allowed to use this daemon", (unsigned)c->uid);
		c->closing = true;
		client_flush(c);
		return;
	}
	if (c->over_limit) {
		client_send_error(c, m->id, PROTO_ERR_BUSY, "uid %u has %u connections, the limit",
				  (unsigned)c->uid, c->d->cfg->max_connections_per_uid);
		c->closing = true;
		client_flush(c);
		return;
	}
	if (m->u.hello.version != PROTO_VERSION) {
		client_send_error(c, m->id, PROTO_ERR_UNSUPPORTED_VERSION,
				  "protocol version %" PRIu32
				  " is not supported; this daemon speaks %d",
				  m->u.hello.version, PROTO_VERSION);
		c->closing = true;
		client_flush(c);
		return;
	}
	c->hello_done = true;
	/* An older client's decoder refuses an outcome it does not know. */
	c->process_limit = proto_hello_has_feature(&m->u.hello, PROTO_FEATURE_PROCESS_LIMIT);
	c->network = proto_hello_has_feature(&m->u.hello, PROTO_FEATURE_NETWORK);
	c->tools = proto_hello_has_feature(&m->u.hello, PROTO_FEATURE_TOOLS);
	if (c->hello_ev != NULL)
		event_del(c->hello_ev);
	if (proto_encode_hello(m->id, PROTO_HELLO_OK, &h, &out) < 0)
		fatalx("cannot encode hello_ok");
	client_send(c, &out);
}

static void
client_on_ping(struct client *c, const struct proto_msg *m)
{
	struct proto_out out;

	if (proto_encode_simple(m->id, PROTO_PONG, &out) < 0)
		fatalx("cannot encode pong");
	client_send(c, &out);
}

/* The names of the mounts of mask into out (at most CONFIG_MOUNTS_MAX); their count. */
static size_t
client_mount_names(const struct config *cfg, uint32_t mask, const char **out)
{
	size_t k, n = 0;

	for (k = 0; k < cfg->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (mask & (1U << k))
			out[n++] = cfg->mounts[k].name;
	return n;
}

/* One row of names per profile: its mounts, allow_mounts, blocked_imports. */
struct client_info_names {
	const char *mounts[CONFIG_MOUNTS_MAX];
	const char *allow_mounts[CONFIG_MOUNTS_MAX];
	const char *blocked[PROTO_BLOCKED_IMPORTS_MAX];
};

static void
client_on_info(struct client *c, const struct proto_msg *m)
{
	const struct config *cfg = c->d->cfg;
	struct proto_profile profiles[PROTO_PROFILES_MAX];
	struct proto_mount_info mounts[CONFIG_MOUNTS_MAX];
	struct client_info_names *names;
	uint32_t seen = 0;
	char(*texts)[PROTO_ALLOW_ENTRY_MAX + 1] = NULL;
	const char **lists = NULL;
	struct proto_info info;
	struct proto_out out;
	size_t i, k, nent = 0, used = 0;
	int r;

	memset(&info, 0, sizeof(info));
	info.daemon = "airlockd " AIRLOCK_VERSION;
	info.version = PROTO_VERSION;
	info.uid = (uint32_t)c->uid;
	for (i = 0; i < cfg->nruntimes && i < PROTO_RUNTIMES_MAX; i++)
		info.runtimes[info.nruntimes++] = cfg->runtimes[i].name;
	info.defaults = cfg->defaults;
	info.ceilings = cfg->ceilings;
	info.resource_control = cgroup_kind_name(c->d->resource_control);
	/* What a user's parallelism is (docs/design-service.md). */
	info.max_runs = cfg->max_runs;
	info.max_runs_per_uid = cfg->max_runs_per_uid;
	info.max_interpreters = cfg->max_interpreters;
	info.max_interpreters_per_uid = cfg->max_interpreters_per_uid;
	for (i = 0; i < cfg->nruntimes && i < PROTO_RUNTIMES_MAX; i++) {
		struct proto_runtime_packages *p = &info.runtime_packages[info.nruntime_packages];

		if (pypkgs_scan(&cfg->runtimes[i], p->packages, &p->npackages)) {
			p->runtime = cfg->runtimes[i].name;
			info.nruntime_packages++;
		}
	}
	info.profiles = profiles;
	names = xcalloc(PROTO_PROFILES_MAX, sizeof(*names));
	/* The allow-lists as listed: config_egress_finish() bounds them all
	 * together, so that the reply fits a packet. */
	for (i = 0; i < cfg->nprofiles && i < PROTO_PROFILES_MAX; i++)
		if (cfg->profiles[i].egress != NULL)
			nent += cfg->profiles[i].egress->nentries;
	if (nent > 0) {
		texts = xcalloc(nent, sizeof(*texts));
		lists = xcalloc(nent, sizeof(*lists));
	}
	for (i = 0; i < cfg->nprofiles && i < PROTO_PROFILES_MAX; i++) {
		const struct config_profile *prof = &cfg->profiles[i];
		struct proto_profile *e = &profiles[info.nprofiles];

		if (!client_may_use_profile(c, prof))
			continue;
		memset(e, 0, sizeof(*e));
		e->name = prof->name;
		e->is_default = !strcmp(prof->name, cfg->default_profile);
		e->limits = prof->defaults;
		e->ceilings = prof->ceilings;
		e->network = prof->network_proxy ? "proxy" : "none";
		if (prof->network_proxy) {
			const struct egress_policy *pol = prof->egress;

			/* Listed entries first, then the private ones, each in
			 * order: two runs of lists[]. */
			e->allow_hosts = &lists[used];
			for (k = 0; k < pol->nentries; k++)
				if (!pol->entries[k].allow_private) {
					egress_entry_format(&pol->entries[k], texts[used],
							    sizeof(texts[used]));
					lists[used] = texts[used];
					used++;
					e->nallow_hosts++;
				}
			e->allow_private_hosts = &lists[used];
			for (k = 0; k < pol->nentries; k++)
				if (pol->entries[k].allow_private) {
					egress_entry_format(&pol->entries[k], texts[used],
							    sizeof(texts[used]));
					lists[used] = texts[used];
					used++;
					e->nallow_private_hosts++;
				}
		}
		e->no_file_write = prof->no_file_write;
		e->no_subprocess = prof->no_subprocess;
		e->hidden_paths = (const char **)prof->hidden;
		e->nhidden_paths = prof->nhidden;
		/* config_listed_finish() bounds these lists together. */
		e->mounts = names[info.nprofiles].mounts;
		e->nmounts = client_mount_names(cfg, prof->mounts, names[info.nprofiles].mounts);
		e->allow_mounts = names[info.nprofiles].allow_mounts;
		e->nallow_mounts = client_mount_names(cfg, prof->allow_mounts,
						      names[info.nprofiles].allow_mounts);
		for (k = 0; k < prof->nblocked_imports; k++)
			names[info.nprofiles].blocked[k] = prof->blocked_imports[k];
		e->blocked_imports = names[info.nprofiles].blocked;
		e->nblocked_imports = prof->nblocked_imports;
		seen |= prof->mounts | prof->allow_mounts;
		info.nprofiles++;
	}
	/*
	 * The mounts a run of the caller can get: its profiles' and every
	 * runtime's. The target and whether it is a package tree, never the
	 * host source: that is the administrator's layout, not the caller's
	 * business (docs/security.md, "Named mounts").
	 */
	for (i = 0; i < cfg->nruntimes; i++)
		seen |= cfg->runtimes[i].mounts;
	info.mounts = mounts;
	for (i = 0; i < cfg->nmounts && i < CONFIG_MOUNTS_MAX; i++)
		if (seen & (1U << i))
			mounts[info.nmounts++] = (struct proto_mount_info){
				.name = cfg->mounts[i].name,
				.target = cfg->mounts[i].target,
				.package = cfg->mounts[i].package,
			};
	r = proto_encode_info(m->id, &info, &out);
	free(texts);
	free(lists);
	free(names);
	client_send_encoded(c, m->id, r, &out, "info");
}

static void
client_on_run(struct client *c, const struct proto_msg *m)
{
	/* A client that did not name tools could not answer a tool_call. */
	if (m->u.run.ntools > 0 && !c->tools) {
		client_send_error(c, m->id, PROTO_ERR_BAD_REQUEST,
				  "run.tools: the client's hello did not name the feature tools");
		return;
	}
	run_start(c->d, c, m->id, &m->u.run);
}

/* An answer to an event: it gets no reply of its own. */
static void
client_on_tool_reply(struct client *c, const struct proto_msg *m)
{
	run_tool_reply(c->d, c, m->id, &m->u.tool_reply);
}

static void
client_on_cancel(struct client *c, const struct proto_msg *m)
{
	run_cancel_request(c->d, c, m->id, &m->u.cancel);
}

static void
client_on_ps(struct client *c, const struct proto_msg *m)
{
	run_ps(c->d, c, m->id);
}

static void
client_on_session_open(struct client *c, const struct proto_msg *m)
{
	session_open(c->d, c, m->id, &m->u.session_open);
}

static void
client_on_session_close(struct client *c, const struct proto_msg *m)
{
	session_close(c->d, c, m->id, m->u.session.session);
}

static void
client_on_session_list(struct client *c, const struct proto_msg *m)
{
	session_list(c->d, c, m->id);
}

static void
client_on_file(struct client *c, const struct proto_msg *m)
{
	session_file_op(c->d, c, m->id, m->type, &m->u.file);
}

bool
client_allowed(const struct client *c)
{
	return config_peer_allowed(c->d->cfg, c->uid, c->gids, c->ngids);
}

bool
client_may_use_profile(const struct client *c, const struct config_profile *prof)
{
	return config_profile_allowed(prof, c->uid, c->gids, c->ngids);
}

int
client_resolve_limits(struct client *c, uint32_t req_id, const char *profile,
		      const struct proto_limits *asked, struct proto_limits *ret,
		      const struct config_profile **ret_prof)
{
	const struct config *cfg = c->d->cfg;
	const struct config_profile *prof;
	enum proto_limit bad;

	prof = profile != NULL ? config_profile_find(cfg, profile) : config_profile_default(cfg);
	if (prof == NULL) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "profile '%s' does not exist",
				  profile);
		return -ENOENT;
	}
	if (!client_may_use_profile(c, prof)) {
		client_send_error(c, req_id, PROTO_ERR_UNAUTHORIZED,
				  "profile '%s' is not available to uid %u", prof->name,
				  (unsigned)c->uid);
		return -EPERM;
	}
	if (config_limits_resolve(prof, asked, ret, &bad) < 0) {
		client_send_error(
			c, req_id, PROTO_ERR_BAD_REQUEST,
			"limits.%s = %" PRIu64 " is above the ceiling %" PRIu64 " of profile '%s'",
			proto_limit_name(bad), asked->v[bad], prof->ceilings.v[bad], prof->name);
		return -ERANGE;
	}
	if (ret_prof != NULL)
		*ret_prof = prof;
	return 0;
}

/*
 * The one access check of every request after the hello, whatever its kind
 * (run, cell, file operation, session open, list and close, cancel, ps,
 * info, ping, tool reply): is the client's uid still allowed by [access] of
 * the config in force? Read again for each request, never kept from the
 * connect, because a reload may have removed the user since: a revoked
 * user's open connection must not go on using the daemon (its sessions'
 * files included; issue 28). The refusal is the one a refused connect gets,
 * "unauthorized". Returns true when the request may go on.
 */
static bool
client_access(struct client *c, const struct proto_msg *m)
{
	if (client_allowed(c))
		return true;
	client_send_error(c, m->id, PROTO_ERR_UNAUTHORIZED,
			  "uid %u is no longer allowed to use this daemon", (unsigned)c->uid);
	return false;
}

/* Decode and dispatch one packet. */
static void
client_dispatch(struct client *c, const char *buf, size_t len, int *fds, size_t nfds)
{
	struct proto_msg m;
	enum proto_error code = PROTO_ERR_BAD_REQUEST;
	uint32_t id = 0;
	char why[256] = "";
	size_t i;
	int r;

	memset(&m, 0, sizeof(m));
	r = proto_decode(buf, len, fds, nfds, &m, &code, &id, why, sizeof(why));
	if (r < 0) {
		client_send_error(c, id, code, "%s", why[0] ? why : strerror(-r));
		if (!c->hello_done)
			c->closing = true;
		return;
	}
	for (i = 0; i < sizeof(client_handlers) / sizeof(client_handlers[0]); i++)
		if (client_handlers[i].type == m.type)
			break;
	if (i == sizeof(client_handlers) / sizeof(client_handlers[0])) {
		client_send_error(c, m.id, PROTO_ERR_BAD_REQUEST, "a client may not send %s",
				  proto_type_name(m.type));
	} else if (!c->hello_done && !(client_handlers[i].flags & H_BEFORE_HELLO)) {
		client_send_error(c, m.id, PROTO_ERR_BAD_REQUEST,
				  "the first message must be hello, not %s",
				  proto_type_name(m.type));
		c->closing = true;
	} else if (c->hello_done && !(client_handlers[i].flags & H_AFTER_HELLO)) {
		client_send_error(c, m.id, PROTO_ERR_BAD_REQUEST, "%s was already done",
				  proto_type_name(m.type));
	} else if (c->hello_done && !client_access(c, &m)) {
		/* refused: client_access() answered */
	} else
		client_handlers[i].fn(c, &m);
	proto_msg_free(&m);
}

/* Readable: take every packet that is there (a bounded batch per turn). */
static void
client_read_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct client *c = arg;
	static char buf[PROTO_MSG_MAX + 1];
	int budget;

	for (budget = 32; budget > 0 && !c->closing && !c->dead; budget--) {
		int fds[PROTO_FDS_MAX];
		size_t nfds = 0;
		ssize_t n = fdpass_recv(fd, buf, sizeof(buf), fds, PROTO_FDS_MAX, &nfds);

		if (n == -EAGAIN || n == -EWOULDBLOCK)
			return;
		if (n == -EMSGSIZE) {
			client_send_error(c, 0, PROTO_ERR_TOO_LARGE,
					  "a packet may be at most %d bytes with %d fds",
					  PROTO_MSG_MAX, PROTO_FDS_MAX);
			continue;
		}
		if (n <= 0) {
			log_debug("client %" PRIu32 ": %s", c->id,
				  n == 0 ? "closed" : strerror((int)-n));
			client_kill(c);
			return;
		}
		client_dispatch(c, buf, (size_t)n, fds, nfds);
	}
	if (c->closing && !c->dead)
		client_flush(c);
}

static void
client_write_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct client *c = arg;

	if (!c->dead && client_flush(c) < 0)
		client_kill(c);
}

static void
client_hello_timeout_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct client *c = arg;

	log_debug("client %" PRIu32 ": no hello in %d s; closing", c->id, CLIENT_HELLO_TIMEOUT_S);
	client_kill(c);
}

/* Read the peer's uid, pid and groups, once, at accept. */
static int
client_peercred(struct client *c)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	gid_t groups[CLIENT_GROUPS_MAX];
	socklen_t glen = sizeof(groups);

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	c->uid = uc.uid;
	c->pid = uc.pid;
	c->gids[0] = uc.gid;
	c->ngids = 1;
	/* Supplementary groups as they were at connect(), from the kernel. */
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0) {
		size_t i, n = glen / sizeof(gid_t);

		for (i = 0; i < n && c->ngids < CLIENT_GROUPS_MAX; i++)
			c->gids[c->ngids++] = groups[i];
	}
	return 0;
}

void
client_new(struct daemon *d, int fd)
{
	struct timeval tv = {CLIENT_HELLO_TIMEOUT_S, 0};
	struct client *c, *it;
	uint32_t same = 0;
	int r;

	c = xcalloc(1, sizeof(*c));
	c->d = d;
	c->fd = fd;
	c->id = ++d->next_client_id;
	TAILQ_INIT(&c->outq);
	r = client_peercred(c);
	if (r < 0) {
		log_warnx("client %" PRIu32 ": SO_PEERCRED: %s", c->id, strerror(-r));
		close(fd);
		free(c);
		return;
	}
	c->allowed = config_peer_allowed(d->cfg, c->uid, c->gids, c->ngids);
	TAILQ_FOREACH(it, &d->clients, entry)
	if (it->uid == c->uid)
		same++;
	c->read_ev = xevent_new(d->base, fd, EV_READ | EV_PERSIST, client_read_cb, c);
	c->write_ev = xevent_new(d->base, fd, EV_WRITE, client_write_cb, c);
	c->hello_ev = xevtimer_new(d->base, client_hello_timeout_cb, c);
	c->free_ev = xevtimer_new(d->base, client_free_cb, c);
	TAILQ_INSERT_TAIL(&d->clients, c, entry);
	d->nclients++;
	log_debug("client %" PRIu32 ": uid %u pid %d connected%s", c->id, (unsigned)c->uid,
		  (int)c->pid, c->allowed ? "" : " (not allowed)");
	c->over_limit = c->uid != 0 && same >= d->cfg->max_connections_per_uid;
	/* Refused connections wait for their hello to hear why; past twice the
	 * limit a uid gets no such courtesy, so it cannot pin frontend fds. */
	if (c->over_limit && same >= 2 * d->cfg->max_connections_per_uid) {
		log_debug("client %" PRIu32 ": uid %u far over its connection limit; closing",
			  c->id, (unsigned)c->uid);
		c->closing = true;
		client_flush(c);
		return;
	}
	event_add(c->read_ev, NULL);
	event_add(c->hello_ev, &tv);
	if (c->allowed)
		session_client_new(d, c->uid);
}

void
client_flush_all(struct daemon *d, int timeout_ms)
{
	struct client *c;
	int waited = 0;

	while (waited < timeout_ms) {
		bool pending = false;

		TAILQ_FOREACH(c, &d->clients, entry)
		if (!c->dead && !TAILQ_EMPTY(&c->outq)) {
			c->closing = false;
			if (client_flush(c) < 0)
				c->dead = true;
			else if (!TAILQ_EMPTY(&c->outq))
				pending = true;
		}
		if (!pending)
			return;
		usleep(10000);
		waited += 10;
	}
}

/*
 * Marks a client dead; its runs are killed and its sessions told on the next
 * loop turn (client_free_cb), never here: client_kill is called from inside
 * client_send, which is called while the run module walks its list of runs
 * (cancelling a session's runs, stopping), and freeing the client's runs then
 * would free the walker's next run under it (a use-after-free found by review).
 */
void
client_kill(struct client *c)
{
	if (c == NULL || c->dead)
		return;
	c->dead = true;
	event_del(c->read_ev);
	event_del(c->write_ev);
	event_del(c->hello_ev);
	event_active(c->free_ev, 0, 0);
}

/* Kills the runs of a client that left (docs/security.md) and tells its
 * sessions, once. They live on, for a grace period if a killed client was its
 * uid's last connection. */
static void
client_orphan(struct client *c)
{
	struct client *it;
	bool last = c->dead && c->allowed;

	if (c->orphaned)
		return;
	c->orphaned = true;
	run_orphan_client(c->d, c);
	TAILQ_FOREACH(it, &c->d->clients, entry)
	if (it != c && !it->dead && it->uid == c->uid && it->allowed)
		last = false;
	session_client_gone(c->d, c, last);
}

static void
client_free_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct client *c = arg;
	struct client_pkt *p;

	client_orphan(c);
	/*
	 * Fds sent and not read stay in flight, charged to the service user,
	 * when we close: only the client's read or close ends that. So a
	 * dropped client's connection lingers, shut down both ways (it reads
	 * what is there, then EOF), counted in its uid's connections and
	 * budget, until the tick sees those fds read (issue 13, finding 1).
	 */
	if (c->unread_fds > 0 && !client_refresh(c) && !c->d->stopping) {
		log_debug("client %" PRIu32 " uid %u: %" PRIu32
			  " fds sent are not read yet; lingering",
			  c->id, (unsigned)c->uid, c->unread_fds);
		c->lingering = true;
		(void)shutdown(c->fd, SHUT_RDWR);
		while ((p = TAILQ_FIRST(&c->outq)) != NULL)
			client_pkt_done(c, p, false);
		client_tick_arm(c->d);
		return;
	}
	client_free(c);
}

void
client_free(struct client *c)
{
	struct client_pkt *p;

	if (c == NULL)
		return;
	client_orphan(c);
	TAILQ_REMOVE(&c->d->clients, c, entry);
	c->d->nclients--;
	while ((p = TAILQ_FIRST(&c->outq)) != NULL)
		client_pkt_done(c, p, false);
	budget_release(&c->d->budget, c->uid, c->unread_bytes, c->unread_fds);
	event_free(c->read_ev);
	event_free(c->write_ev);
	event_free(c->hello_ev);
	event_free(c->free_ev);
	close(c->fd);
	free(c);
}
