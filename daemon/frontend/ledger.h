/*
 * ledger.h: what the frontend holds for each uid, in one place: the counts
 * of work (connections, sessions, interpreters, runs queued and running,
 * memfds given to clients) and the bytes and fds charged to the uid, per
 * uid and in all. admit_decide() reads a uid's figures (ledger_get()) as
 * facts; ledger_charge() takes what a decision admitted and hands back a
 * ticket, and ledger_release() of that ticket is the one unwind, from every
 * end of the work (docs/design-reshape.md §3). Pure data: no clock, no fd.
 */
#ifndef AIRLOCKD_LEDGER_H
#define AIRLOCKD_LEDGER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct admit_facts;
struct admit_decision;

/* What is counted per uid and in all. */
enum ledger_count {
	LEDGER_CONNECTIONS = 0, /* client connections, from the accept to the free */
	LEDGER_SESSIONS,	/* sessions, from the open to their end */
	LEDGER_INTERPRETERS,	/* interpreter sessions among them */
	LEDGER_QUEUED,		/* runs waiting for their start */
	LEDGER_RUNNING,		/* runs and cells holding a run slot */
	LEDGER_HELD,		/* memfds given to clients and not yet let go */
	LEDGER_COUNT_
};

/* One uid's figures (or all uids' together). */
struct ledger_uid {
	uint32_t n[LEDGER_COUNT_];
	uint64_t bytes; /* plans, cells' code, replies and copies held for it */
	uint32_t fds;	/* fds in replies queued or sent and not yet read */
};

/*
 * The caps admit_decide() holds them to: the config in force (a reload
 * changes them, the ledger's counts stay) and the frontend's own bounds.
 */
struct ledger_caps {
	uint32_t max_connections_per_uid; /* root exempt */
	uint32_t sessions_per_uid;	  /* root too */
	uint32_t max_interpreters, max_interpreters_per_uid;
	uint32_t max_queued, max_queued_per_uid; /* root: max_queued only */
	uint32_t max_runs, max_runs_per_uid;	 /* running; root: max_runs only */
	uint64_t max_bytes_per_uid;
	uint32_t max_fds_per_uid; /* memfds given to a uid's clients */
	uint32_t held_max;	  /* memfds given to clients, all uids */
	uint64_t file_max_bytes;  /* one file operation's data */
	uint64_t session_idle_ms, session_idle_ms_max;
	uint64_t session_lifetime_ms, session_lifetime_ms_max;
	uint32_t cells_queue_max; /* cells waiting in one session */
	uint32_t tool_calls_max;  /* tool calls of one run */
	uint32_t egress_open_max; /* egress connections of one run open at once */
};

/* A uid holding something; kept in an array (a handful of uids at a time). */
struct ledger_rec {
	uid_t uid;
	struct ledger_uid h;
};

struct ledger {
	struct ledger_rec *recs; /* uids holding something, in no order */
	size_t nrecs, cap;
	struct ledger_uid all;
};

/*
 * What one piece of work holds, to give back at its end. Embedded in the
 * work's object; zeroed (or from ledger_ticket_init()) before its first
 * charge.
 */
struct ledger_ticket {
	struct ledger *l;
	uid_t uid;
	struct ledger_uid h;
	bool live;
};

void ledger_init(struct ledger *l);
/* Free every record; the tickets still live must not be used after. */
void ledger_free(struct ledger *l);
/* A uid's figures and all uids' (zeros for a uid holding nothing). */
void ledger_get(const struct ledger *l, uid_t uid, struct ledger_uid *ret_uid,
		struct ledger_uid *ret_all);
/*
 * Take what dec admitted for the work of f (its kind and phase say which
 * counts): at the request into a fresh ticket t, at the start onto the
 * request's ticket (a run's queue place becomes a run slot). -EPERM for a
 * decision that admitted nothing to hold (a refusal, a wait), -EINVAL for a
 * ticket in the wrong state or of another uid, -ENOMEM; nothing charged
 * then.
 */
int ledger_charge(struct ledger *l, const struct admit_facts *f, const struct admit_decision *dec,
		  struct ledger_ticket *t);
/* Add to a live ticket: n of count c, bytes and fds (a plan's pages, a reply). */
void ledger_add(struct ledger_ticket *t, enum ledger_count c, uint32_t n, uint64_t bytes,
		uint32_t fds);
/* Give back a part of what t holds (a reply read, a memfd let go). */
void ledger_sub(struct ledger_ticket *t, enum ledger_count c, uint32_t n, uint64_t bytes,
		uint32_t fds);
/* Give back all t holds; t is then not live. NULL and a dead ticket: nothing. */
void ledger_release(struct ledger_ticket *t);

#endif
