/* egress.c: the HTTP CONNECT and plain HTTP proxy of network = proxy runs, on libevent. */
#include "egress.h"

#include <assert.h>
#include <errno.h>
#include <event2/bufferevent.h>
#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "budget.h"
#include "clock.h"
#include "backoff.h"
#include "config.h"
#include "log.h"
#include "compiler.h"

#define EGRESS_HEAD_TIMEOUT_MS 10000  /* to send a whole request head */
#define EGRESS_ADDRS_MAX 8	      /* addresses of one name tried */
#define EGRESS_PIPE_HIGH (256 * 1024) /* bytes queued towards one side before reading pauses */
#define EGRESS_ACCEPT_BURST 32	      /* accepts per callback */
#define EGRESS_BACK_OFF_MS 100	      /* accepts paused when out of fds or memory */

enum egress_conn_state {
	EGRESS_HEAD = 1, /* reading the request head */
	EGRESS_RESOLVE,	 /* the name is being looked up */
	EGRESS_CONNECT,	 /* connecting to addrs[iaddr] */
	EGRESS_SPLICE,	 /* copying both ways */
	EGRESS_CLOSING,	 /* flushing the last bytes to one side, then freed */
};

struct egress_conn {
	LIST_ENTRY(egress_conn) entry;
	struct egress_run *er;
	enum egress_conn_state state;
	struct bufferevent *down; /* the code's connection */
	struct bufferevent *up;	  /* the destination's */
	struct evdns_getaddrinfo_request *dns_req;
	const struct egress_entry *allowed; /* what allowed it (in er->pol) */
	char head[EGRESS_HEAD_MAX];	    /* the request head, as read */
	struct egress_head h;		    /* its parse, pointing into head */
	char host[EGRESS_HOST_MAX + 3];	    /* normalised */
	char target[EGRESS_HOST_MAX + 8];   /* "host:port" for the reports */
	struct sockaddr_storage addrs[EGRESS_ADDRS_MAX];
	socklen_t addrlens[EGRESS_ADDRS_MAX];
	size_t naddrs, iaddr;
	uint64_t last_ms; /* the last byte moved; while EGRESS_HEAD: when accepted */
	/* What the host is, as egress_host_normalise() said, for a new match
	 * when a reload changes the list (egress_run_set_policy) */
	bool literal;
	int family;
	uint8_t addr[16];
};

LIST_HEAD(egress_conn_list, egress_conn);

struct egress_run {
	LIST_ENTRY(egress_run) entry;
	struct egress *eg;
	uint32_t run_id;
	struct egress_policy pol;
	int listen_fd;
	struct event *accept_ev;
	struct event *retry_ev; /* accept back-off after EMFILE */
	struct egress_conn_list conns;
	uint32_t open; /* connections in conns */
	bool over;     /* network_bytes reached: everything refused from now */
	struct egress_stats st;
};

LIST_HEAD(egress_run_list, egress_run);

struct egress {
	struct event_base *base;
	struct evdns_base *dns;
	uint32_t connect_ms, idle_ms;
	uint32_t open, open_max; /* connections of all runs open at once, and their bound */
	struct egress_run_list runs;
};

static void egress_conn_free(struct egress_conn *c);
static void egress_splice_read_cb(struct bufferevent *bev, void *arg);

static struct timeval
egress_tv(uint32_t ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	return tv;
}

/* Count a refusal, and keep it for the report when (target, reason) is new and there is room. */
static void
egress_note_refusal(struct egress_run *er, const char *target, const char *reason)
{
	struct egress_stats *st = &er->st;
	size_t i;

	st->refused++;
	for (i = 0; i < st->nrefusals; i++)
		if (!strcmp(st->refusals[i].host, target) &&
		    !strcmp(st->refusals[i].reason, reason))
			return;
	if (st->nrefusals == EGRESS_REPORT_MAX)
		return;
	snprintf(st->refusals[st->nrefusals].host, sizeof(st->refusals[0].host), "%s", target);
	snprintf(st->refusals[st->nrefusals].reason, sizeof(st->refusals[0].reason), "%s", reason);
	st->nrefusals++;
}

static void
egress_note_contacted(struct egress_run *er, const char *target)
{
	struct egress_stats *st = &er->st;
	size_t i;

	for (i = 0; i < st->ncontacted; i++)
		if (!strcmp(st->contacted[i], target))
			return;
	if (st->ncontacted < EGRESS_REPORT_MAX)
		snprintf(st->contacted[st->ncontacted++], sizeof(st->contacted[0]), "%s", target);
}

/* The answer to a refused request: status, the reason in a header and a one-line body. */
static int
egress_refusal_text(char *buf, size_t len, int status, const char *reason, const char *target)
{
	char body[EGRESS_HOST_MAX + 64];
	int n;

	snprintf(body, sizeof(body), "airlock egress: %s%s%s\n", reason, target[0] ? " " : "",
		 target);
	n = snprintf(buf, len,
		     "HTTP/1.1 %d %s\r\nX-Airlock-Refused: %s\r\nContent-Type: text/plain\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		     status,
		     status == 403   ? "Forbidden"
		     : status == 400 ? "Bad Request"
		     : status == 431 ? "Request Header Fields Too Large"
				     : "Bad Gateway",
		     reason, strlen(body), body);
	return n < 0 || (size_t)n >= len ? -E2BIG : n;
}

/* The last bytes are out (or the peer is gone): free when the output is empty. */
static void
egress_closing_write_cb(struct bufferevent *bev, void *arg)
{
	struct egress_conn *c = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		egress_conn_free(c);
}

static void
egress_closing_event_cb(struct bufferevent *bev UNUSED, short what UNUSED, void *arg)
{
	egress_conn_free(arg);
}

/*
 * Flush what is queued towards bev (one side), then free the connection;
 * the other side is closed now. A peer that does not read is given the
 * idle timeout.
 */
static void
egress_conn_close_after(struct egress_conn *c, struct bufferevent *bev)
{
	struct timeval tv = egress_tv(c->er->eg->idle_ms);

	c->state = EGRESS_CLOSING;
	if (c->up != NULL && c->up != bev) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	if (c->down != NULL && c->down != bev) {
		bufferevent_free(c->down);
		c->down = NULL;
	}
	if (bev == NULL || evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		egress_conn_free(c);
		return;
	}
	bufferevent_disable(bev, EV_READ);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_setcb(bev, NULL, egress_closing_write_cb, egress_closing_event_cb, c);
	bufferevent_set_timeouts(bev, NULL, &tv);
	bufferevent_enable(bev, EV_WRITE);
}

/* Refuse the request of c: note it, answer the code, close. */
static void
egress_refuse(struct egress_conn *c, int status, const char *reason)
{
	char buf[1024];
	int n;

	egress_note_refusal(c->er, c->target, reason);
	log_debug("run %" PRIu32 ": egress refused %s: %s", c->er->run_id,
		  c->target[0] ? c->target : "(no head)", reason);
	n = egress_refusal_text(buf, sizeof(buf), status, reason, c->target);
	if (c->dns_req != NULL) {
		evdns_getaddrinfo_cancel(c->dns_req);
		c->dns_req = NULL;
	}
	if (c->up != NULL) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	if (n > 0)
		bufferevent_write(c->down, buf, (size_t)n);
	egress_conn_close_after(c, c->down);
}

static void
egress_conn_free(struct egress_conn *c)
{
	if (c == NULL)
		return;
	if (c->dns_req != NULL) {
		struct evdns_getaddrinfo_request *req = c->dns_req;

		/* The callback runs from the cancel with EVUTIL_EAI_CANCEL and does nothing. */
		c->dns_req = NULL;
		evdns_getaddrinfo_cancel(req);
	}
	if (c->up != NULL)
		bufferevent_free(c->up);
	if (c->down != NULL)
		bufferevent_free(c->down);
	LIST_REMOVE(c, entry);
	c->er->open--;
	c->er->eg->open--;
	free(c);
}

/* The run passed network_bytes: every connection closes, later ones are refused. */
static void
egress_run_over(struct egress_run *er, const char *target)
{
	er->over = true;
	egress_note_refusal(er, target, "limit");
	log_info("run %" PRIu32 ": network_bytes %" PRIu64 " reached; its connections are closed",
		 er->run_id, er->pol.bytes);
	while (!LIST_EMPTY(&er->conns))
		egress_conn_free(LIST_FIRST(&er->conns));
}

/* Space drained on the side data was queued to: read the other side again. */
static void
egress_splice_write_cb(struct bufferevent *bev, void *arg)
{
	struct egress_conn *c = arg;
	struct bufferevent *src = bev == c->up ? c->down : c->up;

	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_enable(src, EV_READ);
}

/* Bytes from one side: to the other, counted, within the run's byte limit. */
static void
egress_splice_read_cb(struct bufferevent *bev, void *arg)
{
	struct egress_conn *c = arg;
	struct egress_run *er = c->er;
	struct bufferevent *dst = bev == c->down ? c->up : c->down;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint64_t used = er->st.bytes_up + er->st.bytes_down;
	uint64_t left = used < er->pol.bytes ? er->pol.bytes - used : 0;
	size_t n = evbuffer_get_length(in);

	if (n == 0)
		return;
	if (n > left) {
		egress_run_over(er, c->target); /* frees c */
		return;
	}
	if (evbuffer_remove_buffer(in, bufferevent_get_output(dst), n) < 0) {
		egress_conn_close_after(c, NULL);
		return;
	}
	if (bev == c->down)
		er->st.bytes_up += n;
	else
		er->st.bytes_down += n;
	c->last_ms = clock_now_ms();
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= EGRESS_PIPE_HIGH) {
		bufferevent_disable(bev, EV_READ);
		bufferevent_setwatermark(dst, EV_WRITE, EGRESS_PIPE_HIGH / 2, 0);
	}
}

static void
egress_splice_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct egress_conn *c = arg;
	struct bufferevent *other = bev == c->up ? c->down : c->up;

	if ((what & BEV_EVENT_TIMEOUT) && !(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) {
		/* One direction quiet while the other moves (a long download): not idle. */
		if (clock_now_ms() - c->last_ms < c->er->eg->idle_ms) {
			bufferevent_enable(bev, (what & BEV_EVENT_READING) ? EV_READ : EV_WRITE);
			return;
		}
		egress_conn_close_after(c, NULL);
		return;
	}
	/* One side ended: what was read from it is queued to the other; flush that. */
	if (bev == c->down) {
		bufferevent_free(c->down);
		c->down = NULL;
	} else {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	egress_conn_close_after(c, other);
}

/* Connected to the destination: answer CONNECT or send the rewritten head, then copy. */
static void
egress_splice_start(struct egress_conn *c)
{
	struct timeval idle = egress_tv(c->er->eg->idle_ms);
	char head[EGRESS_HEAD_MAX + EGRESS_HOST_MAX + 64];
	int n;

	c->state = EGRESS_SPLICE;
	c->last_ms = clock_now_ms();
	egress_note_contacted(c->er, c->target);
	log_debug("run %" PRIu32 ": egress to %s", c->er->run_id, c->target);
	if (c->h.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		bufferevent_write(c->down, ok, sizeof(ok) - 1);
	} else {
		n = egress_head_rewrite(c->head, &c->h, head, sizeof(head));
		if (n < 0) {
			egress_refuse(c, 400, "bad_request");
			return;
		}
		bufferevent_write(c->up, head, (size_t)n);
		c->er->st.bytes_up += (uint64_t)n;
	}
	bufferevent_setwatermark(c->down, EV_READ, 0, 0);
	bufferevent_setcb(c->down, egress_splice_read_cb, egress_splice_write_cb,
			  egress_splice_event_cb, c);
	bufferevent_setcb(c->up, egress_splice_read_cb, egress_splice_write_cb,
			  egress_splice_event_cb, c);
	bufferevent_set_timeouts(c->down, &idle, &idle);
	bufferevent_set_timeouts(c->up, &idle, &idle);
	bufferevent_enable(c->down, EV_READ | EV_WRITE);
	bufferevent_enable(c->up, EV_READ | EV_WRITE);
	/* What the code sent after its head goes to the same checked destination. */
	egress_splice_read_cb(c->down, c);
}

static void egress_connect_next(struct egress_conn *c);

static void
egress_connect_event_cb(struct bufferevent *bev UNUSED, short what, void *arg)
{
	struct egress_conn *c = arg;

	if (what & BEV_EVENT_CONNECTED) {
		egress_splice_start(c);
		return;
	}
	bufferevent_free(c->up);
	c->up = NULL;
	c->iaddr++;
	egress_connect_next(c);
}

/* Connect to the next checked address; none left: refused connect_failed. */
static void
egress_connect_next(struct egress_conn *c)
{
	struct timeval tv = egress_tv(c->er->eg->connect_ms);

	c->state = EGRESS_CONNECT;
	for (; c->iaddr < c->naddrs; c->iaddr++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[c->iaddr];
		/* Our own socket: bufferevent_socket_connect() would make one
		 * without SOCK_CLOEXEC. */
		int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0)
			continue;
		c->up = bufferevent_socket_new(c->er->eg->base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (c->up == NULL) {
			close(fd);
			continue;
		}
		bufferevent_setcb(c->up, NULL, NULL, egress_connect_event_cb, c);
		bufferevent_set_timeouts(c->up, NULL, &tv);
		if (bufferevent_socket_connect(c->up, sa, (int)c->addrlens[c->iaddr]) == 0)
			return;
		bufferevent_free(c->up);
		c->up = NULL;
	}
	egress_refuse(c, 502, "connect_failed");
}

/* The checked addresses of the name: rule 5 of the design before any is used. */
static void
egress_resolved_cb(int result, struct evutil_addrinfo *res, void *arg)
{
	struct egress_conn *c = arg;
	struct evutil_addrinfo *ai;
	bool dropped = false;

	if (result == EVUTIL_EAI_CANCEL)
		return;
	c->dns_req = NULL;
	if (result != 0) {
		egress_refuse(c, 502, "resolve_failed");
		return;
	}
	for (ai = res; ai != NULL && c->naddrs < EGRESS_ADDRS_MAX; ai = ai->ai_next) {
		struct sockaddr_storage *ss = &c->addrs[c->naddrs];

		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(*ss))
			continue;
		if (egress_addr_refused(ai->ai_addr) && !c->allowed->allow_private) {
			dropped = true;
			continue;
		}
		memcpy(ss, ai->ai_addr, ai->ai_addrlen);
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)ss)->sin_port = htons(c->h.port);
		else
			((struct sockaddr_in6 *)ss)->sin6_port = htons(c->h.port);
		c->addrlens[c->naddrs++] = (socklen_t)ai->ai_addrlen;
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	if (c->naddrs == 0) {
		egress_refuse(c, dropped ? 403 : 502,
			      dropped ? "private_address" : "resolve_failed");
		return;
	}
	egress_connect_next(c);
}

/* While resolving or connecting the code's side is not read; it may still close. */
static void
egress_wait_event_cb(struct bufferevent *bev UNUSED, short what UNUSED, void *arg)
{
	egress_conn_free(arg);
}

/* A whole head is in: the rules of the design's section 4, in order. */
static void
egress_request(struct egress_conn *c)
{
	struct evutil_addrinfo hints;
	struct evdns_getaddrinfo_request *req;
	uint8_t addr[16];
	bool literal;
	int family;

	if (egress_host_normalise(c->h.host, c->h.host_len, c->host, sizeof(c->host), &literal,
				  &family, addr) < 0) {
		snprintf(c->target, sizeof(c->target), "%.*s:%u",
			 (int)(c->h.host_len < 64 ? c->h.host_len : 64), c->h.host, c->h.port);
		egress_refuse(c, 400, "bad_host");
		return;
	}
	snprintf(c->target, sizeof(c->target), "%s:%u", c->host, c->h.port);
	c->literal = literal;
	c->family = family;
	memcpy(c->addr, addr, sizeof(c->addr));
	c->allowed = egress_match(&c->er->pol, c->host, literal, family, addr, c->h.port);
	if (c->allowed == NULL) {
		/* No lookup of a name not listed: DNS is no channel out. */
		egress_refuse(c, 403, literal ? "ip_literal" : "not_listed");
		return;
	}
	bufferevent_disable(c->down, EV_READ);
	bufferevent_setcb(c->down, NULL, NULL, egress_wait_event_cb, c);
	if (literal) {
		/* Listed as it is: listing the address is the permission. */
		if (family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&c->addrs[0];

			s4->sin_family = AF_INET;
			s4->sin_port = htons(c->h.port);
			memcpy(&s4->sin_addr, addr, 4);
			c->addrlens[0] = sizeof(*s4);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&c->addrs[0];

			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(c->h.port);
			memcpy(&s6->sin6_addr, addr, 16);
			c->addrlens[0] = sizeof(*s6);
		}
		c->naddrs = 1;
		egress_connect_next(c);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	c->state = EGRESS_RESOLVE;
	/* The callback may run before this returns (then req is NULL and c
	 * may be gone): c is touched only when the lookup is pending. */
	req = evdns_getaddrinfo(c->er->eg->dns, c->host, NULL, &hints, egress_resolved_cb, c);
	if (req != NULL)
		c->dns_req = req;
}

/* Bytes of the request head. */
static void
egress_head_read_cb(struct bufferevent *bev, void *arg)
{
	struct egress_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in);
	size_t n = len < EGRESS_HEAD_MAX ? len : EGRESS_HEAD_MAX;
	const char *p = (const char *)evbuffer_pullup(in, (ssize_t)n);
	int r;

	if (p == NULL)
		return;
	r = egress_head_parse(p, n, &c->h);
	if (r == -EAGAIN) {
		/*
		 * The read timeout restarts with every read, so a head sent a
		 * byte at a time would never time out: the whole head has
		 * EGRESS_HEAD_TIMEOUT_MS from the accept, and the read timeout
		 * is what is left of it.
		 */
		uint64_t spent = clock_now_ms() - c->last_ms;
		struct timeval tv;

		if (spent >= EGRESS_HEAD_TIMEOUT_MS) {
			egress_refuse(c, 400, "head_timeout");
			return;
		}
		tv = egress_tv((uint32_t)(EGRESS_HEAD_TIMEOUT_MS - spent));
		bufferevent_set_timeouts(bev, &tv, &tv);
		return;
	}
	if (r == -E2BIG) {
		egress_refuse(c, 431, "head_too_large");
		return;
	}
	if (r < 0) {
		egress_refuse(c, 400, "bad_request");
		return;
	}
	/* Keep the head (the parse points into it) and leave the rest queued. */
	memcpy(c->head, p, c->h.head_len);
	c->h.host = c->head + (c->h.host - p);
	if (c->h.path != NULL)
		c->h.path = c->head + (c->h.path - p);
	evbuffer_drain(in, c->h.head_len);
	egress_request(c);
}

static void
egress_head_event_cb(struct bufferevent *bev UNUSED, short what, void *arg)
{
	struct egress_conn *c = arg;

	if (what & BEV_EVENT_TIMEOUT) {
		egress_refuse(c, 400, "head_timeout");
		return;
	}
	egress_conn_free(c); /* the code closed before its head was whole */
}

/* Refuse a connection before any byte: at a limit. No state is kept for it. */
static void
egress_refuse_fd(struct egress_run *er, int fd, const char *reason)
{
	char buf[512];
	int n;

	egress_note_refusal(er, "", reason);
	n = egress_refusal_text(buf, sizeof(buf), 403, reason, "");
	if (n > 0)
		(void)send(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	/*
	 * Read what the code sent already: a socket closed with unread bytes
	 * is reset, and a reset can reach the code before the answer does.
	 * Bounded: at most two reads, never waiting.
	 */
	(void)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	(void)recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
	close(fd);
}

/*
 * May the run open one more egress connection (its count taken)? Decided
 * by admit_decide() (rule 6, admit.c): the run's bytes, its connections
 * in all and open at once, and eg->open_max: the runs together cannot
 * take the fds the frontend needs for its clients and runs (2 per
 * connection).
 */
static bool
egress_over_limit(const struct egress_run *er)
{
	static const struct ledger_caps caps = {.egress_open_max = EGRESS_CONCURRENT_MAX};
	struct admit_facts f = {
		.kind = ADMIT_EGRESS_CONN, .phase = ADMIT_AT_REQUEST, .caps = &caps};
	struct admit_decision dec;

	f.run = (struct admit_run_counts){.egress_over = er->over,
					  .conns = er->st.connections,
					  .conns_max = er->pol.connections,
					  .open = er->open,
					  .open_all = er->eg->open,
					  .open_all_max = er->eg->open_max};
	admit_decide(&f, &dec);
	return dec.verdict == ADMIT_REFUSE;
}

static void
egress_accept_cb(evutil_socket_t lfd, short what UNUSED, void *arg)
{
	struct egress_run *er = arg;
	struct timeval head_tv = egress_tv(EGRESS_HEAD_TIMEOUT_MS);
	int i;

	for (i = 0; i < EGRESS_ACCEPT_BURST; i++) {
		struct egress_conn *c;
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				log_warnx("run %" PRIu32 ": egress accept: %s; pausing", er->run_id,
					  strerror(errno));
				listener_back_off(er->accept_ev, er->retry_ev, EGRESS_BACK_OFF_MS);
			}
			return;
		}
		er->st.connections++;
		if (egress_over_limit(er)) {
			egress_refuse_fd(er, fd, "limit");
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			egress_refuse_fd(er, fd, "internal");
			continue;
		}
		c->er = er;
		c->state = EGRESS_HEAD;
		c->last_ms = clock_now_ms();
		c->down = bufferevent_socket_new(er->eg->base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (c->down == NULL) {
			free(c);
			egress_refuse_fd(er, fd, "internal");
			continue;
		}
		LIST_INSERT_HEAD(&er->conns, c, entry);
		er->open++;
		er->eg->open++;
		bufferevent_setcb(c->down, egress_head_read_cb, NULL, egress_head_event_cb, c);
		bufferevent_setwatermark(c->down, EV_READ, 0, EGRESS_HEAD_MAX);
		bufferevent_set_timeouts(c->down, &head_tv, &head_tv);
		bufferevent_enable(c->down, EV_READ);
	}
}

/*
 * Connections open at once, all runs together, unless [egress]
 * max_connections says: an eighth of RLIMIT_NOFILE (two fds each, so a
 * quarter of the fds; replies may hold half, see frontend_fds_max()).
 */
static uint32_t
egress_open_max_default(void)
{
	return budget_nofile_share(8, EGRESS_CONCURRENT_MAX);
}

int
egress_new(struct event_base *base, const struct config *cfg, struct egress **ret)
{
	struct egress *eg = calloc(1, sizeof(*eg));
	size_t i;

	if (eg == NULL)
		return -ENOMEM;
	eg->base = base;
	eg->connect_ms = cfg->egress_connect_ms;
	eg->idle_ms = cfg->egress_idle_ms;
	eg->open_max = cfg->egress_connections_max != 0 ? cfg->egress_connections_max
							: egress_open_max_default();
	LIST_INIT(&eg->runs);
	/* No search domains, no hosts file: a name is asked as it is listed. */
	eg->dns = evdns_base_new(base, 0);
	if (eg->dns == NULL) {
		free(eg);
		return -ENOMEM;
	}
	for (i = 0; i < cfg->negress_resolvers; i++) {
		struct sockaddr_storage ss;

		if (egress_resolver_parse(cfg->egress_resolvers[i], &ss) < 0 ||
		    evdns_base_nameserver_sockaddr_add(eg->dns, (struct sockaddr *)&ss,
						       ss.ss_family == AF_INET
							       ? sizeof(struct sockaddr_in)
							       : sizeof(struct sockaddr_in6),
						       0) != 0)
			log_warnx("egress: cannot use resolver %s", cfg->egress_resolvers[i]);
	}
	if (cfg->negress_resolvers == 0 &&
	    evdns_base_resolv_conf_parse(eg->dns, DNS_OPTION_NAMESERVERS, "/etc/resolv.conf") != 0)
		log_warnx("egress: no name server from /etc/resolv.conf: names will not resolve");
	*ret = eg;
	return 0;
}

int
egress_run_open(struct egress *eg, uint32_t run_id, const struct egress_policy *pol, int listen_fd,
		struct egress_run **ret)
{
	struct egress_run *er = calloc(1, sizeof(*er));

	if (er == NULL) {
		close(listen_fd);
		return -ENOMEM;
	}
	er->eg = eg;
	er->run_id = run_id;
	er->pol = *pol;
	er->listen_fd = listen_fd;
	LIST_INIT(&er->conns);
	er->accept_ev = event_new(eg->base, listen_fd, EV_READ | EV_PERSIST, egress_accept_cb, er);
	er->retry_ev = listener_back_off_new(eg->base, er->accept_ev);
	if (er->accept_ev == NULL || er->retry_ev == NULL || event_add(er->accept_ev, NULL) < 0) {
		egress_run_close(er, NULL);
		return -ENOMEM;
	}
	LIST_INSERT_HEAD(&eg->runs, er, entry);
	*ret = er;
	return 0;
}

void
egress_run_set_policy(struct egress_run *er, const struct egress_policy *pol)
{
	struct egress_conn *c, *next;

	if (er == NULL || pol == NULL)
		return;
	er->pol = *pol;
	/*
	 * A connection past its head was let through by the list being
	 * replaced (c->allowed points into it): it is matched again against
	 * the new one, as its head was, and closed when the new list does
	 * not allow it, so that a reload that narrowed the list leaves
	 * nothing open to a host taken away (whatever its state: resolving,
	 * connecting, copying). A connection still reading its head, or
	 * refused, has no entry and is checked (again) as it was.
	 */
	for (c = LIST_FIRST(&er->conns); c != NULL; c = next) {
		next = LIST_NEXT(c, entry);
		if (c->allowed == NULL)
			continue;
		c->allowed =
			egress_match(&er->pol, c->host, c->literal, c->family, c->addr, c->h.port);
		if (c->allowed == NULL)
			egress_conn_free(c);
	}
}

void
egress_run_close(struct egress_run *er, struct egress_stats *ret)
{
	if (er == NULL)
		return;
	while (!LIST_EMPTY(&er->conns)) {
		struct egress_conn *c = LIST_FIRST(&er->conns);

		egress_conn_free(c);
		/* the analyzer cannot see the removal: docs/static-analysis.md */
		assert(LIST_FIRST(&er->conns) != c);
	}
	if (er->accept_ev != NULL)
		event_free(er->accept_ev);
	if (er->retry_ev != NULL)
		event_free(er->retry_ev);
	close(er->listen_fd);
	if (er->entry.le_prev != NULL)
		LIST_REMOVE(er, entry);
	if (ret != NULL)
		*ret = er->st;
	free(er);
}

void
egress_free(struct egress *eg)
{
	if (eg == NULL)
		return;
	while (!LIST_EMPTY(&eg->runs)) {
		struct egress_run *er = LIST_FIRST(&eg->runs);

		egress_run_close(er, NULL);
		/* the analyzer cannot see the removal: docs/static-analysis.md */
		assert(LIST_FIRST(&eg->runs) != er);
	}
	evdns_base_free(eg->dns, 1);
	free(eg);
}
