/*
 * egress.h: the proxy of network = proxy runs (docs/design-egress.md), on
 * the frontend's event loop. Each such run's supervisor sends a listening
 * socket made inside the run's network namespace (sandbox_egress.c); the
 * proxy accepts on it, reads one request head (CONNECT or absolute-form
 * plain HTTP), matches it against the run's allow-list, resolves the name
 * itself (evdns, asynchronous: the loop never blocks), refuses loopback,
 * private and link-local addresses, connects to the address it checked and
 * copies bytes both ways, counting them, within the run's limits.
 */
#ifndef AIRLOCKD_EGRESS_H
#define AIRLOCKD_EGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "egress_rules.h"

struct event_base;
struct config;
struct egress;
struct egress_run;

#define EGRESS_REPORT_MAX 32 /* contacted destinations and refusals kept per run */
#define EGRESS_REASON_MAX 24

/* What a run did through the proxy: the result's `network` map. */
struct egress_stats {
	uint64_t bytes_up, bytes_down;
	uint32_t connections; /* accepted from the code */
	uint32_t refused;     /* of them, refused (each has a reason) */
	char contacted[EGRESS_REPORT_MAX][EGRESS_HOST_MAX + 8]; /* "host:port", first seen */
	size_t ncontacted;
	struct {
		char host[EGRESS_HOST_MAX + 8]; /* "host:port", or "" before a head was read */
		char reason[EGRESS_REASON_MAX];
	} refusals[EGRESS_REPORT_MAX]; /* distinct (host, reason), first seen */
	size_t nrefusals;
};

/*
 * The daemon's proxy: its resolver (cfg's [egress] resolver, else the name
 * servers of /etc/resolv.conf, read now) and timeouts. Returns 0 or -errno.
 */
int egress_new(struct event_base *base, const struct config *cfg, struct egress **ret);
/* Close every run's connections and the resolver. NULL is fine. */
void egress_free(struct egress *eg);

/*
 * Serve one run: accept on listen_fd (taken over: closed by
 * egress_run_close()) within policy pol (copied). Returns 0 or -errno (the
 * fd is closed then too).
 */
int egress_run_open(struct egress *eg, uint32_t run_id, const struct egress_policy *pol,
		    int listen_fd, struct egress_run **ret);
/*
 * A reload changed the run's allow-list (a live interpreter's: cells.c):
 * from now on its connections are checked against pol (copied), and those
 * open that pol does not allow are closed. NULL is fine.
 */
void egress_run_set_policy(struct egress_run *er, const struct egress_policy *pol);
/* The run ended: close its listener and connections, write its figures to
 * ret (may be NULL) and free it. NULL is fine. */
void egress_run_close(struct egress_run *er, struct egress_stats *ret);

#endif
