/*
 * client.c: one client connection: peer credentials, the receive path
 * (every packet handed to the dispatcher, dispatch.c, through the hooks it
 * set: client.c calls neither run.c nor session.c), the hello's facts, and
 * a bounded send queue.
 *
 * Failure follows trust: a malformed packet from a client gets an error
 * reply and the connection goes on; only a client that cannot be answered
 * (send queue over its bound, a socket error) is dropped.
 */
#include <assert.h>
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

#include "admit.h"
#include "client_state.h"
#include "fdpass.h"
#include "frontend.h"
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
	enum client_state state; /* client_state.h: changed by client_transition() only */
	bool allowed;
	bool over_limit;    /* more connections than max_connections_per_uid */
	bool process_limit; /* the client's hello named the outcome process_limit */
	bool network;	    /* ... and result.network */
	bool tools;	    /* the client's hello named the feature tools */
	struct event *free_ev;
	TAILQ_HEAD(, client_pkt) outq;
	uint64_t queued_bytes; /* encoded bytes in outq */
	uint32_t queued_fds;   /* fds in outq */
	uint64_t queued_mem;   /* memfd bytes in outq */
	/* Sent but perhaps not read yet (until its socket's queue is seen
	 * empty): still charged to the uid's budget. */
	uint32_t unread_fds;
	uint64_t unread_bytes;
	uint32_t nruns;
};

static void client_free_cb(evutil_socket_t fd, short what, void *arg);
static void client_transition(struct client *c, enum client_event ev);

/* Not ended yet: HELLO, READY or CLOSING (sends still go out). */
static bool
client_live(const struct client *c)
{
	return c->state == CLIENT_HELLO || c->state == CLIENT_READY || c->state == CLIENT_CLOSING;
}

/* Its packets are read: HELLO or READY. */
static bool
client_reading(const struct client *c)
{
	return c->state == CLIENT_HELLO || c->state == CLIENT_READY;
}

/* The accessors of a client's fields (client.h), one line each. */
#define CLIENT_GETTER(rtype, name, field)                                                          \
	rtype name(const struct client *c)                                                         \
	{                                                                                          \
		return c->field;                                                                   \
	}

CLIENT_GETTER(bool, client_knows_tools, tools)
CLIENT_GETTER(bool, client_knows_process_limit, process_limit)
CLIENT_GETTER(bool, client_knows_network, network)
CLIENT_GETTER(struct daemon *, client_daemon, d)
CLIENT_GETTER(bool, client_allowed_at_connect, allowed)
CLIENT_GETTER(bool, client_over_limit, over_limit)
CLIENT_GETTER(uid_t, client_uid, uid)
CLIENT_GETTER(pid_t, client_pid, pid)
CLIENT_GETTER(uint32_t, client_nruns, nruns)
#undef CLIENT_GETTER

bool
client_ready(const struct client *c)
{
	return c->state == CLIENT_READY;
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
	/* the analyzer cannot see the removal: docs/static-analysis.md */
	assert(TAILQ_FIRST(&c->outq) != p);
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
 * Send as much of the send queue as the socket takes. A packet with fds
 * waits while the client has not read the fds sent before it (beyond one
 * packet's worth): a client that does not read gets no more fds. Returns
 * 1 when the queue is empty, 0 when it waits, or -errno.
 */
static int
client_flush_queue(struct client *c)
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
	return 1;
}

/* Flush the send queue (client_flush_queue()); a closing connection whose
 * queue is empty ends. 0 or -errno. */
static int
client_flush(struct client *c)
{
	int r = client_flush_queue(c);

	if (r == 1 && c->state == CLIENT_CLOSING)
		client_transition(c, CLIENT_EV_FLUSHED);
	return r < 0 ? r : 0;
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

	if (c == NULL || !client_live(c)) {
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
			if (client_live(c) && !TAILQ_EMPTY(&c->outq) && client_flush(c) < 0)
				client_kill(c);
			continue;
		}
		if (c->state == CLIENT_LINGERING) {
			client_transition(c, CLIENT_EV_READ_ALL);
			continue;
		}
		if (client_live(c) && !TAILQ_EMPTY(&c->outq) &&
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

void
client_refuse(struct client *c)
{
	client_transition(c, CLIENT_EV_REFUSE);
}

void
client_hello_ok(struct client *c, const struct proto_hello *h)
{
	/* An older client's decoder refuses an outcome it does not know. */
	c->process_limit = proto_hello_has_feature(h, PROTO_FEATURE_PROCESS_LIMIT);
	c->network = proto_hello_has_feature(h, PROTO_FEATURE_NETWORK);
	c->tools = proto_hello_has_feature(h, PROTO_FEATURE_TOOLS);
	client_transition(c, CLIENT_EV_HELLO_OK);
}

bool
client_allowed(const struct client *c)
{
	return config_peer_allowed(c->d->cfg, c->uid, c->gids, c->ngids);
}

void
client_reload_all(struct daemon *d)
{
	struct client *c, *next;

	/*
	 * The RELOAD row changes no state. Access is read again for every
	 * request (client_access()) and at a hello: a connection the new
	 * config refuses is answered "unauthorized" from its next request
	 * on and stays open, as before the reload was an event; the log
	 * says so at once.
	 */
	for (c = TAILQ_FIRST(&d->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		client_transition(c, CLIENT_EV_RELOAD);
		if (c->state == CLIENT_READY && !client_allowed(c))
			log_info("client %" PRIu32 " uid %u: the reload refuses its uid: its "
				 "requests are answered unauthorized from now on",
				 c->id, (unsigned)c->uid);
	}
}

size_t
client_gids(const struct client *c, gid_t *ret, size_t max)
{
	size_t n = c->ngids < max ? c->ngids : max;

	memcpy(ret, c->gids, n * sizeof(*ret));
	return n;
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

/* Readable: take every packet that is there (a bounded batch per turn). */
static void
client_read_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct client *c = arg;
	static char buf[PROTO_MSG_MAX + 1];
	int budget;

	for (budget = 32; budget > 0 && client_reading(c); budget--) {
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
		c->d->client_hooks->packet(c, buf, (size_t)n, fds, nfds);
	}
	if (c->state == CLIENT_CLOSING)
		client_flush(c);
}

static void
client_write_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct client *c = arg;

	if (client_live(c) && client_flush(c) < 0)
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
	struct ledger_caps caps = {.max_connections_per_uid = d->cfg->max_connections_per_uid};
	struct admit_facts f = {.kind = ADMIT_CONNECTION, .phase = ADMIT_AT_REQUEST, .caps = &caps};
	struct admit_decision dec;
	struct client *c, *it;
	uint32_t same = 0;
	int r;

	c = xcalloc(1, sizeof(*c));
	c->d = d;
	c->fd = fd;
	c->id = ++d->next_client_id;
	c->state = CLIENT_HELLO;
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
	/* admit_decide() at the accept (rule 6; admit.c is pure: client.c
	 * gathers the facts itself). Refused connections wait for their hello
	 * to hear why (QUEUE); past twice the limit a uid gets no such
	 * courtesy (REFUSE), so it cannot pin frontend fds. */
	f.uid = c->uid;
	f.peer_allowed = c->allowed;
	f.held.n[LEDGER_CONNECTIONS] = same;
	admit_decide(&f, &dec);
	c->over_limit = dec.verdict != ADMIT_NOW;
	if (dec.verdict == ADMIT_REFUSE) {
		log_debug("client %" PRIu32 ": uid %u far over its connection limit; closing",
			  c->id, (unsigned)c->uid);
		client_refuse(c);
		return;
	}
	event_add(c->read_ev, NULL);
	event_add(c->hello_ev, &tv);
	if (c->allowed)
		d->client_hooks->adopted(c);
}

void
client_flush_all(struct daemon *d, int timeout_ms)
{
	struct client *c;
	int waited = 0;

	while (waited < timeout_ms) {
		bool pending = false;

		TAILQ_FOREACH(c, &d->clients, entry)
		if (client_live(c) && !TAILQ_EMPTY(&c->outq)) {
			/* The loop is over: a closing connection is not ended
			 * when its queue empties (client_free() ends them all). */
			int r = client_flush_queue(c);

			if (r < 0)
				client_kill(c);
			else if (r == 0)
				pending = true;
		}
		if (!pending)
			return;
		usleep(10000);
		waited += 10;
	}
}

/*
 * Ends a connection: nothing more is read or sent; its runs are killed and
 * its sessions told on the next loop turn (client_free_cb), never here:
 * client_kill is called from inside client_send, which is called while the
 * run module walks its list of runs (cancelling a session's runs,
 * stopping), and freeing the client's runs then would free the walker's
 * next run under it (a use-after-free found by review). Hence the state
 * DROPPED (client_state.c).
 */
void
client_kill(struct client *c)
{
	if (c != NULL)
		client_transition(c, CLIENT_EV_DROP);
}

/* The runs of a client that left are killed (docs/security.md) and its
 * sessions told, by the dispatcher's hook (client_hooks.orphaned): the entry
 * action of the end (client_state_ends(): once). They live on, for a grace
 * period if a dropped client (from: the state it left) was its uid's last
 * connection. */
static void
client_orphan(struct client *c, enum client_state from)
{
	struct client *it;
	bool last = from == CLIENT_DROPPED && c->allowed;

	TAILQ_FOREACH(it, &c->d->clients, entry)
	if (it != c && client_live(it) && it->uid == c->uid && it->allowed)
		last = false;
	c->d->client_hooks->orphaned(c, last);
}

/* The next loop turn after a drop: linger, or be freed. */
static void
client_free_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct client *c = arg;

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
		client_transition(c, CLIENT_EV_LINGER);
		return;
	}
	client_transition(c, CLIENT_EV_FREE);
}

/* Entry action of LINGERING: shut down both ways, what is queued dropped,
 * the tick watches for the fds sent to be read. */
static void
client_linger(struct client *c)
{
	struct client_pkt *p;

	(void)shutdown(c->fd, SHUT_RDWR);
	while ((p = TAILQ_FIRST(&c->outq)) != NULL)
		client_pkt_done(c, p, false);
	client_tick_arm(c->d);
}

/* Entry action of GONE: everything given back, the memory freed. */
static void
client_destroy(struct client *c)
{
	struct client_pkt *p;

	TAILQ_REMOVE(&c->d->clients, c, entry);
	c->d->nclients--;
	while ((p = TAILQ_FIRST(&c->outq)) != NULL)
		client_pkt_done(c, p, false);
	budget_release(&c->d->budget, c->uid, c->unread_bytes, c->unread_fds);
	XEVENTS_FREE(c->read_ev, c->write_ev, c->hello_ev, c->free_ev);
	close(c->fd);
	free(c);
}

/*
 * Every change of a client's state: the table (client_state.c) says where
 * ev leads, or that it cannot happen (a broken invariant); then the new
 * state's entry action, which for GONE frees c.
 */
static void
client_transition(struct client *c, enum client_event ev)
{
	enum client_state from = c->state, to = client_state_next(from, ev);

	if (to == CLIENT_STATE_INVALID)
		fatalx("client %" PRIu32 ": %s cannot happen in state %s", c->id,
		       fsm_event_name(&client_fsm, (int)ev),
		       fsm_state_name(&client_fsm, (int)from));
	c->state = to;
	if (to == from)
		return;
	if (client_state_ends(from, to))
		client_orphan(c, from);
	switch (to) {
	case CLIENT_READY:
		event_del(c->hello_ev);
		break;
	case CLIENT_CLOSING:
		/* A send error here ends it at its next read. */
		(void)client_flush(c);
		break;
	case CLIENT_DROPPED:
		event_del(c->read_ev);
		event_del(c->write_ev);
		event_del(c->hello_ev);
		event_active(c->free_ev, 0, 0);
		break;
	case CLIENT_LINGERING:
		client_linger(c);
		break;
	case CLIENT_GONE:
		client_destroy(c);
		break;
	default:
		break;
	}
}

void
client_free(struct client *c)
{
	if (c != NULL)
		client_transition(c, CLIENT_EV_EXIT);
}
