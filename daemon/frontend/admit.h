/*
 * admit.h: the frontend's one admission decision (docs/design-reshape.md
 * §3). Every kind of work a local user can make the daemon do is admitted
 * here, by the same rules in the same order, from facts its call site
 * gathered; admit_decide() is pure (no clock, no fd, no daemon), so
 * unit-admit drives it by a table.
 */
#ifndef AIRLOCKD_ADMIT_H
#define AIRLOCKD_ADMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ledger.h"
#include "proto.h"

enum admit_kind {
	ADMIT_CONNECTION = 0, /* a client's connection: its accept, then its hello */
	ADMIT_RUN,	      /* a one-shot run */
	ADMIT_SESSION_RUN,    /* a run in a session */
	ADMIT_CELL,	      /* a cell of an interpreter session */
	ADMIT_INTERP_START,   /* an interpreter session's interpreter, for its cell */
	ADMIT_SESSION_OPEN,
	ADMIT_FILE_OP,	   /* file_write, _read, _list, _delete in a session */
	ADMIT_TOOL_CALL,   /* a call of the run's code to a tool of its client */
	ADMIT_EGRESS_CONN, /* a connection of the run's code to the egress proxy */
	ADMIT_ZYGOTE,	   /* a caller's zygote (docs/design-bursts.md §3.6), for its life */
	ADMIT_KIND_COUNT_
};

/*
 * At the request, or when the work would start: a queued run or cell at
 * its dequeue, a connection at its hello, a file_read at its reply's copy.
 */
enum admit_phase { ADMIT_AT_REQUEST = 0, ADMIT_AT_START };

/* Go now; wait (in the queue, or for its hello); refused. */
enum admit_verdict { ADMIT_NOW = 0, ADMIT_QUEUE, ADMIT_REFUSE };

/* The rows of §3's table, in the order they are applied. */
enum admit_rule {
	ADMIT_RULE_NONE = 0, /* none decided: admitted now */
	ADMIT_RULE_STOPPING, /* 1 the daemon is stopping */
	ADMIT_RULE_ACCESS,   /* 2 [access] of the config in force now */
	ADMIT_RULE_OBJECT,   /* 3 the session, its kind, the runtime */
	ADMIT_RULE_PROFILE,  /* 4 the profile and its mounts */
	ADMIT_RULE_LIMITS,   /* 5 within the ceilings, defaults filled */
	ADMIT_RULE_COUNTS,   /* 6 connections, sessions, queue, calls, egress */
	ADMIT_RULE_BYTES,    /* 7 bytes and fds within the uid's budget */
	ADMIT_RULE_START,    /* 8 run slots, the uid slot, the session free */
	ADMIT_RULE_COUNT_
};

/* A named mount of a run, as config_mounts_resolve() and the host found it. */
enum admit_mount {
	ADMIT_MOUNT_OK = 0,
	ADMIT_MOUNT_MISSING,	 /* no [mount] of that name */
	ADMIT_MOUNT_REFUSED,	 /* not in the profile's allow_mounts */
	ADMIT_MOUNT_UNAVAILABLE, /* its source is gone from the host */
};

/* A run's own counts, for its tool calls and its egress connections. */
struct admit_run_counts {
	bool client_gone;      /* tool call: the run's client left */
	uint32_t calls;	       /* tool calls made before this one */
	bool egress_over;      /* egress: the run is past its bytes */
	uint32_t conns;	       /* egress connections, this one included */
	uint32_t conns_max;    /* the run's policy: connections in all */
	uint32_t open;	       /* egress connections of the run open now */
	uint32_t open_all;     /* of all runs */
	uint32_t open_all_max; /* the proxy's share of the frontend's fds */
};

/*
 * The facts of one piece of work, gathered by its call site (§3.1) from the
 * daemon as it is now. A field a kind does not use is left zero. Every
 * pointer is borrowed for the call only.
 */
struct admit_facts {
	enum admit_kind kind;
	enum admit_phase phase;
	uid_t uid;
	bool stopping;
	/* Rule 2: [access] of the config in force now, never kept from the
	 * connect; for a connection, also allowed at its accept. */
	bool peer_allowed;
	bool over_limit; /* a connection's hello: its accept was over its uid's limit */
	/* Rule 3: the session named (session kinds), as this uid's lookup found it. */
	bool session_named, session_found;
	bool session_ready; /* open and not ending (file op: its keeper answered) */
	bool session_interp;
	bool session_busy; /* one of its runs is running (rule 8) */
	const char *session_profile, *session_runtime;
	uint32_t cells_queued; /* cells waiting in the session */
	const char *runtime;   /* asked: a cell's runtime, a session's interpreter */
	bool runtime_ok;       /* a session's interpreter is a python runtime */
	bool cell_code_only;   /* a cell asks for no argv, env, stdin, files... */
	bool figures_svg;      /* the request asks a cell's or a run's figures as SVG */
	bool runtime_figures;  /* a run's runtime returns figures (run_plan_boots) */
	bool ipython;	       /* the request asks a cell run through IPython */
	/* A session's open asks for background processes; its profile
	 * allows them (background_processes). */
	bool background, profile_background;
	/* Rule 4: the profile asked (NULL: the default; a session's runs: the
	 * request's, against session_profile) and the one the config has. */
	const char *profile;
	const char *profile_name; /* found: its name */
	bool profile_found, profile_allowed;
	enum admit_mount mount;
	const char *mount_name, *mount_target;
	/* The runtime (runtime above) is in the profile's runtimes = list,
	 * or it has none; the list's text for the message. */
	bool runtime_allowed;
	const char *profile_runtimes;
	/* Rule 5: asked, and under it the session's defaults (session runs),
	 * the profile's defaults and ceilings. */
	const struct proto_limits *asked, *session_defaults, *defaults, *ceilings;
	uint64_t workspace_bytes, idle_ms, lifetime_ms; /* a session's open: asked */
	/* Rules 6-8: the uid's figures and all uids', and the caps. */
	struct ledger_uid held, all;
	const struct ledger_caps *caps;
	struct admit_run_counts run;
	uint64_t want_bytes; /* the work's bytes: a plan's parts, a file's data */
	const char *what;    /* a file op's path, for its messages */
	bool file_write;     /* a file op that carries data */
	bool slot_free;	     /* a sandbox uid is free (session open) */
	bool pool_blocks;    /* every sandbox uid is in the pool's, none this run can take */
	/* Live zygotes no run uses, all uids' and this uid's (each holds a
	 * run slot: ADMIT_ZYGOTE). */
	uint32_t zygotes_idle_all, zygotes_idle_uid;
};

struct admit_decision {
	enum admit_verdict verdict;
	enum admit_rule rule;	      /* the row that decided; NONE: none refused */
	enum proto_error code;	      /* the reply's error (NONE when admitted) */
	enum proto_tool_outcome tool; /* a tool call's refusal, as its record shows */
	bool silent;		      /* a connection closed without a reply */
	bool want_slot;		      /* queued for a sandbox uid only the pool's sandboxes hold */
	bool want_zygote_slot;	      /* queued for a run slot an idle zygote holds */
	struct proto_limits limits;   /* rule 5's result */
	uint64_t workspace_bytes, idle_ms, lifetime_ms; /* a session's, rule 5 */
	char why[512]; /* the reply's message, the daemon's words */
};

/* Decide f; *ret is written whole. */
void admit_decide(const struct admit_facts *f, struct admit_decision *ret);
/* "stopping", "access", ...: the rule's name for logs and tests. */
const char *admit_rule_name(enum admit_rule rule);
const char *admit_kind_name(enum admit_kind kind);

#endif
