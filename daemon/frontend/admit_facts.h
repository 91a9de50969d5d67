/*
 * admit_facts.h: the facts of admit_decide() gathered from the daemon, one
 * admit_gather_*() per call site of docs/design-reshape.md §3.1. This is
 * the only code that reads the daemon for an admission; admit.c decides
 * from what it wrote. It calls no file that calls it (the cycle check):
 * what only session.c or cells.c know, they fill in themselves, or it is
 * read through the run's session and cells ops (run_owner.h).
 */
#ifndef AIRLOCKD_ADMIT_FACTS_H
#define AIRLOCKD_ADMIT_FACTS_H

#include <stdint.h>

#include "admit.h"
#include "ledger.h"
#include "proto.h"
#include "rootspec.h"

struct daemon;
struct client;
struct cells;
struct session;
struct config_profile;

/*
 * One gathering: the facts, the caps they point to, and what the lookups
 * found for the caller to use once admitted (the session, the profile, the
 * mounts' mask). Lives on the caller's stack for the one decision.
 */
struct admit_gather {
	struct admit_facts f;
	struct ledger_caps caps;
	struct session *s;		   /* the session named, or NULL */
	const struct config_profile *prof; /* the profile found, or NULL */
	uint32_t mounts;		   /* the run's [mount]s, bit i: mount i */
	int mount_bad;			   /* the unavailable mount's index, or -1 */
	char mount_why[ROOTSPEC_WHY_MAX];  /* why, for the daemon's log */
	/* The profile's runtimes = list as text, for rule 4's message. */
	char runtimes[PROTO_RUNTIMES_MAX * (PROTO_RUNTIME_MAX + 2)];
};

/* The caps of the config in force and the frontend's own bounds. */
void admit_caps(const struct daemon *d, struct ledger_caps *ret);

/* g zeroed for kind in phase of uid: the caps, whether the daemon stops;
 * for the gatherers of files that hold what they gather (run.c's start). */
void admit_gather_init(const struct daemon *d, enum admit_kind kind, enum admit_phase phase,
		       uid_t uid, struct admit_gather *g);
/* A connection's hello: allowed at its connect and by the config now, and
 * whether its accept was over its uid's connections. */
void admit_gather_hello(struct daemon *d, struct client *c, struct admit_gather *g);
/* A run request (one-shot, session run, cell, or an interpreter's run for
 * its cells cs): rules 1-8 at the request. */
void admit_gather_run(struct daemon *d, struct client *c, const struct proto_run *req,
		      const struct cells *cs, struct admit_gather *g);
/* A session's open, less what session.c counts (its sessions and
 * interpreters) and knows (runtime_ok), which it fills in. */
void admit_gather_session_open(struct daemon *d, struct client *c,
			       const struct proto_session_open *o, struct admit_gather *g);
/* A file operation on session s (NULL: none found; ready: its keeper
 * answered and it is not ending). */
void admit_gather_file_op(struct daemon *d, struct client *c, enum proto_type type,
			  const struct proto_file_op *op, bool found, bool ready,
			  struct admit_gather *g);
/* A tool call of a run of uid, from its code: c the run's client (NULL: it
 * left), closed its tools closed, calls the calls relayed before. */
void admit_gather_tool_call(struct daemon *d, uid_t uid, struct client *c, bool closed,
			    uint32_t calls, struct admit_gather *g);
/* A file_read's copy of want bytes (path what), held for uid until its
 * reply is read: the start of a file operation. */
void admit_gather_file_copy(struct daemon *d, uid_t uid, const char *what, uint64_t want,
			    struct admit_gather *g);

#endif
