/* test_admit.c: unit tests of daemon/frontend/admit.c, the one admission
 * decision: a table with one row per rule per kind of work it applies to,
 * rows showing the order of the rules, and a row per kind and phase showing
 * that the kind skips the rules that do not apply to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "admit.h"

#define MIB (1024ULL * 1024)
#define UID 1000

/* What a row spoils in otherwise admissible facts (test_spoil()). */
enum spoil {
	SP_STOPPING,
	SP_DENIED,
	SP_UNNAMED,
	SP_NO_SESSION,
	SP_NOT_READY,
	SP_OTHER_PROFILE,
	SP_KIND,
	SP_RUNTIME,
	SP_NOT_CODE,
	SP_CLIENT_GONE,
	SP_NO_PROFILE,
	SP_PROFILE_DENIED,
	SP_MOUNT_MISSING,
	SP_MOUNT_REFUSED,
	SP_RUNTIME_DENIED,
	SP_MOUNT_GONE,
	SP_OVER_CEILING,
	SP_WS_OVER,
	SP_IDLE_OVER,
	SP_LIFE_OVER,
	SP_CONN_FULL,
	SP_CONN_FAR,
	SP_OVER_LIMIT,
	SP_SESSIONS_FULL,
	SP_INTERPS_ALL,
	SP_INTERPS_UID,
	SP_QUEUE_ALL,
	SP_QUEUE_UID,
	SP_CELLS_FULL,
	SP_CALLS_FULL,
	SP_EGRESS_OVER,
	SP_EGRESS_CONNS,
	SP_EGRESS_OPEN,
	SP_EGRESS_ALL,
	SP_TOO_LARGE,
	SP_BYTES_HELD,
	SP_FDS_UID,
	SP_FDS_ALL,
	SP_NO_SLOT,
	SP_RUNS_ALL,
	SP_RUNS_UID,
	SP_RUNS_UID_ONE, /* one run of the uid's running: room for one more */
	SP_SESSION_BUSY,
	SP_POOL,
	SP_ROOT,
	SP_BG,	      /* a session open asks for background processes */
	SP_BG_PLAIN,  /* ... without an interpreter */
	SP_BG_DENIED, /* ... under a profile without background_processes */
	SP_IPYTHON,   /* the request asks for IPython (cells only) */
};
#define S(x) (1ULL << (SP_##x))

/* One spoil per rule of §3's table, to show which rules a kind skips. */
#define SP_EVERY_RULE                                                                              \
	(S(STOPPING) | S(DENIED) | S(NO_SESSION) | S(NO_PROFILE) | S(OVER_CEILING) |               \
	 S(QUEUE_ALL) | S(TOO_LARGE) | S(NO_SLOT) | S(RUNS_ALL))

static const struct ledger_caps caps = {
	.max_connections_per_uid = 4,
	.sessions_per_uid = 2,
	.max_interpreters = 8,
	.max_interpreters_per_uid = 1,
	.max_queued = 64,
	.max_queued_per_uid = 16,
	.max_runs = 8,
	.max_runs_per_uid = 2,
	.max_bytes_per_uid = MIB,
	.max_fds_per_uid = 4,
	.held_max = 16,
	.file_max_bytes = 65536,
	.session_idle_ms = 60000,
	.session_idle_ms_max = 600000,
	.session_lifetime_ms = 3600000,
	.session_lifetime_ms_max = 86400000,
	.cells_queue_max = 16,
	.tool_calls_max = 256,
	.egress_open_max = 16,
};

static struct proto_limits asked, session_defaults, defaults, ceilings;

static void
test_limits_init(void)
{
	size_t k;

	for (k = 0; k < PROTO_LIMIT_COUNT_; k++) {
		asked.v[k] = 0;
		session_defaults.v[k] = 0;
		defaults.v[k] = 10 + k;
		ceilings.v[k] = 1000 + k;
	}
}

/* Facts that every rule admits, for kind in phase. */
static void
test_base(enum admit_kind kind, enum admit_phase phase, struct admit_facts *f)
{
	bool session = kind == ADMIT_SESSION_RUN || kind == ADMIT_CELL ||
		       kind == ADMIT_INTERP_START || kind == ADMIT_FILE_OP;

	test_limits_init();
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->phase = phase;
	f->uid = UID;
	f->peer_allowed = true;
	f->caps = &caps;
	f->session_named = f->session_found = f->session_ready = session;
	f->session_interp = kind == ADMIT_CELL || kind == ADMIT_INTERP_START;
	f->session_profile = session && kind != ADMIT_FILE_OP ? "default" : NULL;
	f->session_runtime = f->session_interp ? "python" : NULL;
	f->session_defaults = kind == ADMIT_SESSION_RUN ? &session_defaults : NULL;
	f->runtime = kind == ADMIT_CELL || kind == ADMIT_SESSION_OPEN ? "python" : NULL;
	f->runtime_ok = true;
	f->runtime_allowed = true;
	f->profile_runtimes = "";
	f->cell_code_only = true;
	f->profile_found = f->profile_allowed = true;
	f->profile_name = "default";
	f->asked = &asked;
	f->defaults = &defaults;
	f->ceilings = &ceilings;
	f->want_bytes = kind == ADMIT_FILE_OP ? 100 : 70000;
	f->what = "a.txt";
	f->file_write = true;
	f->slot_free = true;
	f->run.conns = 1;
	f->run.conns_max = 10;
	f->run.open_all_max = 100;
}

/* Spoil f by each bit of spoil. */
static void
test_spoil(struct admit_facts *f, uint64_t spoil)
{
	struct admit_run_counts *r = &f->run;

	f->stopping = spoil & S(STOPPING);
	f->peer_allowed = !(spoil & S(DENIED));
	if (spoil & S(UNNAMED))
		f->session_named = f->session_found = false;
	if (spoil & S(NO_SESSION))
		f->session_found = false;
	if (spoil & S(NOT_READY))
		f->session_ready = false;
	if (spoil & S(OTHER_PROFILE))
		f->profile = "gpu";
	if (spoil & S(KIND))
		f->session_interp = !f->session_interp;
	if (spoil & S(RUNTIME)) {
		f->runtime = "ruby";
		f->runtime_ok = false;
	}
	f->cell_code_only = !(spoil & S(NOT_CODE));
	f->background = (spoil & (S(BG) | S(BG_PLAIN) | S(BG_DENIED))) != 0;
	f->profile_background = !(spoil & S(BG_DENIED));
	if (spoil & S(BG_PLAIN))
		f->runtime = NULL;
	r->client_gone = spoil & S(CLIENT_GONE);
	f->profile_found = !(spoil & S(NO_PROFILE));
	f->profile_allowed = !(spoil & S(PROFILE_DENIED));
	f->mount_name = "data";
	f->mount_target = "/mnt/data";
	if (spoil & S(MOUNT_MISSING))
		f->mount = ADMIT_MOUNT_MISSING;
	if (spoil & S(MOUNT_REFUSED))
		f->mount = ADMIT_MOUNT_REFUSED;
	if (spoil & S(MOUNT_GONE))
		f->mount = ADMIT_MOUNT_UNAVAILABLE;
	/* The profile's runtimes = list leaves out the runtime asked (a run's
	 * own: the base facts name none for the kinds that carry one but do
	 * not need it). */
	if (spoil & S(RUNTIME_DENIED)) {
		if (f->runtime == NULL)
			f->runtime = "sh";
		f->runtime_allowed = false;
		f->profile_runtimes = "python, python-site";
	}
	if (spoil & S(OVER_CEILING))
		asked.v[PROTO_LIMIT_CPU_MS] = 5000;
	if (spoil & S(WS_OVER))
		f->workspace_bytes = ceilings.v[PROTO_LIMIT_WORKSPACE_BYTES] + 1;
	if (spoil & S(IDLE_OVER))
		f->idle_ms = caps.session_idle_ms_max + 1;
	if (spoil & S(LIFE_OVER))
		f->lifetime_ms = caps.session_lifetime_ms_max + 1;
	if (spoil & S(CONN_FULL))
		f->held.n[LEDGER_CONNECTIONS] = 4;
	if (spoil & S(CONN_FAR))
		f->held.n[LEDGER_CONNECTIONS] = 8;
	f->over_limit = spoil & S(OVER_LIMIT);
	if (spoil & S(SESSIONS_FULL))
		f->held.n[LEDGER_SESSIONS] = 2;
	if (spoil & S(INTERPS_ALL))
		f->all.n[LEDGER_INTERPRETERS] = 8;
	if (spoil & S(INTERPS_UID))
		f->held.n[LEDGER_INTERPRETERS] = f->all.n[LEDGER_INTERPRETERS] = 1;
	if (spoil & S(QUEUE_ALL))
		f->all.n[LEDGER_QUEUED] = 64;
	if (spoil & S(QUEUE_UID))
		f->held.n[LEDGER_QUEUED] = f->all.n[LEDGER_QUEUED] = 16;
	if (spoil & S(CELLS_FULL))
		f->cells_queued = 16;
	if (spoil & S(CALLS_FULL))
		r->calls = 256;
	r->egress_over = spoil & S(EGRESS_OVER);
	if (spoil & S(EGRESS_CONNS))
		r->conns = 11;
	if (spoil & S(EGRESS_OPEN))
		r->open = 16;
	if (spoil & S(EGRESS_ALL))
		r->open_all = 100;
	if (spoil & S(TOO_LARGE))
		f->want_bytes = 2 * MIB;
	if (spoil & S(BYTES_HELD))
		f->held.bytes = MIB - 1000;
	if (spoil & S(FDS_UID))
		f->held.n[LEDGER_HELD] = f->all.n[LEDGER_HELD] = 4;
	if (spoil & S(FDS_ALL))
		f->all.n[LEDGER_HELD] = 16;
	f->slot_free = !(spoil & S(NO_SLOT));
	if (spoil & S(RUNS_ALL))
		f->all.n[LEDGER_RUNNING] = 8;
	if (spoil & S(RUNS_UID))
		f->held.n[LEDGER_RUNNING] = f->all.n[LEDGER_RUNNING] = 2;
	if (spoil & S(RUNS_UID_ONE))
		f->held.n[LEDGER_RUNNING] = f->all.n[LEDGER_RUNNING] = 1;
	f->session_busy = spoil & S(SESSION_BUSY);
	f->ipython = spoil & S(IPYTHON);
	f->pool_blocks = spoil & S(POOL);
	if (spoil & S(ROOT))
		f->uid = 0;
}

struct admit_row {
	const char *what;
	enum admit_kind kind;
	enum admit_phase phase;
	uint64_t spoil;
	enum admit_verdict verdict;
	enum admit_rule rule;
	enum proto_error code;
	const char *why; /* the whole message; NULL: not looked at */
};

#define REQ ADMIT_AT_REQUEST
#define START ADMIT_AT_START
#define R(x) ADMIT_RULE_##x
#define E(x) PROTO_ERR_##x
#define REFUSE ADMIT_REFUSE
#define QUEUE ADMIT_QUEUE
#define NOW ADMIT_NOW
#define NOT_ALLOWED "uid 1000 is no longer allowed to use this daemon"
#define NO_SESSION "no such session"
#define NEEDS_INTERP "a cell needs a session opened with an interpreter"
#define STOPPING "the daemon is stopping"
#define IPYTHON_CELLS "ipython is for cells (a run has no interpreter driver)"
#define RUNTIME_DENIED(rt)                                                                         \
	"runtime '" rt "' is not available under profile 'default' (its runtimes: python, "        \
	"python-site)"
#define HELD_BYTES                                                                                 \
	"uid 1000: the daemon holds 1047576 bytes for it (queued runs, unread replies, results' "  \
	"memfds still open); this run needs 70000 more; max_bytes_per_uid is 1048576"
#define HELD_FDS(uid, all)                                                                         \
	"uid 1000: its clients keep " #uid " memfds of results open (max_fds_per_uid 4), " #all    \
	" in all (at most 16); close results no longer needed"

static const struct admit_row rows[] = {
	/* A connection: at its accept, then at its hello. */
	{"connection within its uid's limit", ADMIT_CONNECTION, REQ, 0, NOW, R(NONE), E(NONE), ""},
	{"connection at the limit waits to hear it at its hello", ADMIT_CONNECTION, REQ,
	 S(CONN_FULL), QUEUE, R(COUNTS), E(BUSY), "uid 1000 has 4 connections, the limit"},
	{"connection far over the limit closed without a word", ADMIT_CONNECTION, REQ, S(CONN_FAR),
	 REFUSE, R(COUNTS), E(BUSY), "uid 1000 far over its connection limit; closing"},
	{"root's connections are not counted", ADMIT_CONNECTION, REQ, S(CONN_FAR) | S(ROOT), NOW,
	 R(NONE), E(NONE), ""},
	{"a refused uid hears it at its hello, not at the accept", ADMIT_CONNECTION, REQ, S(DENIED),
	 NOW, R(NONE), E(NONE), ""},
	{"hello of a uid not allowed", ADMIT_CONNECTION, START, S(DENIED), REFUSE, R(ACCESS),
	 E(UNAUTHORIZED), "uid 1000 is not allowed to use this daemon"},
	{"hello over the limit", ADMIT_CONNECTION, START, S(OVER_LIMIT), REFUSE, R(COUNTS), E(BUSY),
	 "uid 1000 has 4 connections, the limit"},
	{"hello: access before the count", ADMIT_CONNECTION, START, S(DENIED) | S(OVER_LIMIT),
	 REFUSE, R(ACCESS), E(UNAUTHORIZED), NULL},
	{"connection skips stopping, object, profile, limits, bytes, start", ADMIT_CONNECTION, REQ,
	 SP_EVERY_RULE & ~S(DENIED), NOW, R(NONE), E(NONE), ""},

	/* A one-shot run. */
	{"run admitted is queued", ADMIT_RUN, REQ, 0, QUEUE, R(START), E(NONE), NULL},
	{"run while stopping", ADMIT_RUN, REQ, S(STOPPING), REFUSE, R(STOPPING), E(BUSY), STOPPING},
	{"run of a uid no longer allowed", ADMIT_RUN, REQ, S(DENIED), REFUSE, R(ACCESS),
	 E(UNAUTHORIZED), NOT_ALLOWED},
	{"run of a profile that does not exist", ADMIT_RUN, REQ, S(NO_PROFILE), REFUSE, R(PROFILE),
	 E(NOT_FOUND), "profile 'default' does not exist"},
	{"run of a profile the uid may not use", ADMIT_RUN, REQ, S(PROFILE_DENIED), REFUSE,
	 R(PROFILE), E(UNAUTHORIZED), "profile 'default' is not available to uid 1000"},
	{"run of a mount that does not exist", ADMIT_RUN, REQ, S(MOUNT_MISSING), REFUSE, R(PROFILE),
	 E(NOT_FOUND), "mount 'data' does not exist"},
	{"run of a mount the profile does not allow", ADMIT_RUN, REQ, S(MOUNT_REFUSED), REFUSE,
	 R(PROFILE), E(UNAUTHORIZED),
	 "mount 'data' is not available to uid 1000 under profile 'default' (not in its "
	 "allow_mounts)"},
	{"run of a runtime the profile does not list", ADMIT_RUN, REQ, S(RUNTIME_DENIED), REFUSE,
	 R(PROFILE), E(UNAUTHORIZED), RUNTIME_DENIED("sh")},
	{"a profile the uid may not use is said before its runtimes", ADMIT_RUN, REQ,
	 S(PROFILE_DENIED) | S(RUNTIME_DENIED), REFUSE, R(PROFILE), E(UNAUTHORIZED),
	 "profile 'default' is not available to uid 1000"},
	{"its runtimes before its mounts", ADMIT_RUN, REQ, S(RUNTIME_DENIED) | S(MOUNT_REFUSED),
	 REFUSE, R(PROFILE), E(UNAUTHORIZED), RUNTIME_DENIED("sh")},
	{"a run's runtimes are not asked again at its start", ADMIT_RUN, START, S(RUNTIME_DENIED),
	 NOW, R(NONE), E(NONE), NULL},
	{"session run of a runtime its profile does not list", ADMIT_SESSION_RUN, REQ,
	 S(RUNTIME_DENIED), REFUSE, R(PROFILE), E(UNAUTHORIZED), RUNTIME_DENIED("sh")},
	{"cell of a runtime its profile no longer lists", ADMIT_CELL, REQ, S(RUNTIME_DENIED),
	 REFUSE, R(PROFILE), E(UNAUTHORIZED), RUNTIME_DENIED("python")},
	{"interpreter of a runtime its profile does not list", ADMIT_INTERP_START, REQ,
	 S(RUNTIME_DENIED), REFUSE, R(PROFILE), E(UNAUTHORIZED), RUNTIME_DENIED("sh")},
	{"session opened with an interpreter its profile does not list", ADMIT_SESSION_OPEN, REQ,
	 S(RUNTIME_DENIED), REFUSE, R(PROFILE), E(UNAUTHORIZED), RUNTIME_DENIED("python")},
	{"a file op has no runtime to refuse", ADMIT_FILE_OP, REQ, S(RUNTIME_DENIED), NOW, R(NONE),
	 E(NONE), NULL},
	{"run of a mount whose source went", ADMIT_RUN, REQ, S(MOUNT_GONE), REFUSE, R(PROFILE),
	 E(NOT_FOUND),
	 "mount 'data' (at /mnt/data) is unavailable: its source is missing on the host"},
	{"run above a ceiling", ADMIT_RUN, REQ, S(OVER_CEILING), REFUSE, R(LIMITS), E(BAD_REQUEST),
	 "limits.cpu_ms = 5000 is above the ceiling 1001 of profile 'default'"},
	{"run with the queue full", ADMIT_RUN, REQ, S(QUEUE_ALL), REFUSE, R(COUNTS), E(BUSY),
	 "0 runs running and 64 queued (0 of this uid): the queue is full"},
	{"run with its uid's queue full", ADMIT_RUN, REQ, S(QUEUE_UID), REFUSE, R(COUNTS), E(BUSY),
	 "0 runs running and 16 queued (16 of this uid): the queue is full"},
	{"root's runs are held to the whole queue only", ADMIT_RUN, REQ, S(QUEUE_UID) | S(ROOT),
	 QUEUE, R(START), E(NONE), NULL},
	{"run larger than the uid's budget", ADMIT_RUN, REQ, S(TOO_LARGE), REFUSE, R(BYTES),
	 E(TOO_LARGE),
	 "the run's code, stdin and files take 2097152 bytes; max_bytes_per_uid is 1048576"},
	{"run past what the uid holds", ADMIT_RUN, REQ, S(BYTES_HELD), REFUSE, R(BYTES), E(BUSY),
	 HELD_BYTES},
	{"run with the uid's memfds at its share", ADMIT_RUN, REQ, S(FDS_UID), REFUSE, R(BYTES),
	 E(BUSY), HELD_FDS(4, 4)},
	{"run with all memfds given", ADMIT_RUN, REQ, S(FDS_ALL), REFUSE, R(BYTES), E(BUSY),
	 HELD_FDS(0, 16)},
	{"run starts with a slot free", ADMIT_RUN, START, 0, NOW, R(NONE), E(NONE), ""},
	{"run waits while stopping", ADMIT_RUN, START, S(STOPPING), QUEUE, R(STOPPING), E(NONE),
	 NULL},
	{"queued run of a uid no longer allowed is dropped", ADMIT_RUN, START, S(DENIED), REFUSE,
	 R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"run waits for max_runs", ADMIT_RUN, START, S(RUNS_ALL), QUEUE, R(START), E(NONE), NULL},
	{"zygote: room for it and its run", ADMIT_ZYGOTE, REQ, 0, NOW, R(NONE), E(NONE), NULL},
	{"zygote: only rules 1 and 8 apply", ADMIT_ZYGOTE, REQ,
	 S(DENIED) | S(NO_PROFILE) | S(OVER_CEILING) | S(QUEUE_ALL) | S(TOO_LARGE) | S(NO_SLOT),
	 NOW, R(NONE), E(NONE), NULL},
	{"zygote: not while stopping", ADMIT_ZYGOTE, REQ, S(STOPPING), REFUSE, R(STOPPING), E(BUSY),
	 "the daemon is stopping"},
	{"zygote: one run slot of the uid left is the run's", ADMIT_ZYGOTE, REQ, S(RUNS_UID_ONE),
	 REFUSE, R(START), E(BUSY), "no run slot free for a zygote"},
	{"zygote: the uid's run slots full", ADMIT_ZYGOTE, REQ, S(RUNS_UID), REFUSE, R(START),
	 E(BUSY), "no run slot free for a zygote"},
	{"zygote: all run slots full", ADMIT_ZYGOTE, REQ, S(RUNS_ALL), REFUSE, R(START), E(BUSY),
	 "no run slot free for a zygote"},
	{"zygote: root is held to max_runs only", ADMIT_ZYGOTE, REQ, S(RUNS_UID) | S(ROOT), NOW,
	 R(NONE), E(NONE), NULL},
	{"run starts with one run of its uid running", ADMIT_RUN, START, S(RUNS_UID_ONE), NOW,
	 R(NONE), E(NONE), NULL},
	{"run waits for max_runs_per_uid", ADMIT_RUN, START, S(RUNS_UID), QUEUE, R(START), E(NONE),
	 NULL},
	{"root is not held to max_runs_per_uid", ADMIT_RUN, START, S(RUNS_UID) | S(ROOT), NOW,
	 R(NONE), E(NONE), ""},
	{"run waits while the pool holds every uid", ADMIT_RUN, START, S(POOL), QUEUE, R(START),
	 E(NONE), NULL},
	{"run at start skips what was checked at its request", ADMIT_RUN, START,
	 S(NO_PROFILE) | S(OVER_CEILING) | S(QUEUE_ALL) | S(TOO_LARGE) | S(SESSION_BUSY) |
		 S(NO_SESSION),
	 NOW, R(NONE), E(NONE), ""},
	{"run skips the session's rules", ADMIT_RUN, REQ,
	 S(NO_SESSION) | S(KIND) | S(OTHER_PROFILE) | S(NO_SLOT) | S(CELLS_FULL), QUEUE, R(START),
	 E(NONE), NULL},

	/* A session's run. */
	{"session run admitted is queued", ADMIT_SESSION_RUN, REQ, 0, QUEUE, R(START), E(NONE),
	 NULL},
	{"session run while stopping", ADMIT_SESSION_RUN, REQ, S(STOPPING), REFUSE, R(STOPPING),
	 E(BUSY), STOPPING},
	{"session run of a uid no longer allowed", ADMIT_SESSION_RUN, REQ, S(DENIED), REFUSE,
	 R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"session run of no session", ADMIT_SESSION_RUN, REQ, S(NO_SESSION), REFUSE, R(OBJECT),
	 E(NOT_FOUND), NO_SESSION},
	{"session run of a session not ready", ADMIT_SESSION_RUN, REQ, S(NOT_READY), REFUSE,
	 R(OBJECT), E(NOT_FOUND), NO_SESSION},
	{"session run asking another profile", ADMIT_SESSION_RUN, REQ, S(OTHER_PROFILE), REFUSE,
	 R(OBJECT), E(BAD_REQUEST), "profile 'gpu': the session's runs use its profile 'default'"},
	{"run in an interpreter session", ADMIT_SESSION_RUN, REQ, S(KIND), REFUSE, R(OBJECT),
	 E(BAD_REQUEST), "an interpreter session runs cells only"},
	{"session run whose profile went", ADMIT_SESSION_RUN, REQ, S(NO_PROFILE), REFUSE,
	 R(PROFILE), E(NOT_FOUND), "profile 'default' does not exist"},
	{"session run above a ceiling", ADMIT_SESSION_RUN, REQ, S(OVER_CEILING), REFUSE, R(LIMITS),
	 E(BAD_REQUEST), NULL},
	{"session run with the queue full", ADMIT_SESSION_RUN, REQ, S(QUEUE_ALL), REFUSE, R(COUNTS),
	 E(BUSY), NULL},
	{"session run past what the uid holds", ADMIT_SESSION_RUN, REQ, S(BYTES_HELD), REFUSE,
	 R(BYTES), E(BUSY), HELD_BYTES},
	{"session run starts", ADMIT_SESSION_RUN, START, 0, NOW, R(NONE), E(NONE), ""},
	{"session run waits for its session's run", ADMIT_SESSION_RUN, START, S(SESSION_BUSY),
	 QUEUE, R(START), E(NONE), NULL},
	{"session run waits for a run slot", ADMIT_SESSION_RUN, START, S(RUNS_UID), QUEUE, R(START),
	 E(NONE), NULL},
	{"session run skips the pool (its session holds a uid)", ADMIT_SESSION_RUN, START, S(POOL),
	 NOW, R(NONE), E(NONE), ""},
	{"session run skips the uid slot and the cells' queue", ADMIT_SESSION_RUN, REQ,
	 S(NO_SLOT) | S(CELLS_FULL) | S(CONN_FAR) | S(SESSIONS_FULL), QUEUE, R(START), E(NONE),
	 NULL},

	/* A cell. */
	{"cell admitted is queued", ADMIT_CELL, REQ, 0, QUEUE, R(START), E(NONE), NULL},
	{"cell through IPython is queued", ADMIT_CELL, REQ, S(IPYTHON), QUEUE, R(START), E(NONE),
	 NULL},
	{"run asking IPython", ADMIT_RUN, REQ, S(IPYTHON), REFUSE, R(OBJECT), E(BAD_REQUEST),
	 IPYTHON_CELLS},
	{"session run asking IPython", ADMIT_SESSION_RUN, REQ, S(IPYTHON), REFUSE, R(OBJECT),
	 E(BAD_REQUEST), IPYTHON_CELLS},
	{"cell while stopping", ADMIT_CELL, REQ, S(STOPPING), REFUSE, R(STOPPING), E(BUSY),
	 STOPPING},
	{"cell of a uid no longer allowed (revoked by a reload)", ADMIT_CELL, REQ, S(DENIED),
	 REFUSE, R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"cell without a session", ADMIT_CELL, REQ, S(UNNAMED), REFUSE, R(OBJECT), E(BAD_REQUEST),
	 NEEDS_INTERP},
	{"cell of no session", ADMIT_CELL, REQ, S(NO_SESSION), REFUSE, R(OBJECT), E(NOT_FOUND),
	 NO_SESSION},
	{"cell in a session without an interpreter", ADMIT_CELL, REQ, S(KIND), REFUSE, R(OBJECT),
	 E(BAD_REQUEST), NEEDS_INTERP},
	{"cell of another runtime", ADMIT_CELL, REQ, S(RUNTIME), REFUSE, R(OBJECT), E(BAD_REQUEST),
	 "runtime 'ruby': the session's interpreter is 'python'"},
	{"cell asking more than code and limits", ADMIT_CELL, REQ, S(NOT_CODE), REFUSE, R(OBJECT),
	 E(BAD_REQUEST),
	 "a cell takes code, limits and stream only (argv, env, stdin, files, mounts and tools "
	 "are for runs)"},
	{"cell whose profile the uid may no longer use", ADMIT_CELL, REQ, S(PROFILE_DENIED), REFUSE,
	 R(PROFILE), E(UNAUTHORIZED), "profile 'default' is not available to uid 1000"},
	{"cell above a ceiling", ADMIT_CELL, REQ, S(OVER_CEILING), REFUSE, R(LIMITS),
	 E(BAD_REQUEST), NULL},
	{"cell with its session's queue full", ADMIT_CELL, REQ, S(CELLS_FULL), REFUSE, R(COUNTS),
	 E(BUSY), "16 cells wait in this session"},
	{"cell larger than the uid's budget", ADMIT_CELL, REQ, S(TOO_LARGE), REFUSE, R(BYTES),
	 E(TOO_LARGE), NULL},
	{"cell starts with a run slot", ADMIT_CELL, START, 0, NOW, R(NONE), E(NONE), ""},
	{"cell waits for a run slot", ADMIT_CELL, START, S(RUNS_UID), QUEUE, R(START), E(NONE),
	 NULL},
	{"cell skips the runs' queue and the uid slot", ADMIT_CELL, REQ,
	 S(QUEUE_ALL) | S(NO_SLOT) | S(MOUNT_MISSING) | S(SESSIONS_FULL), QUEUE, R(START), E(NONE),
	 NULL},
	{"cell at start skips access, its session and the pool", ADMIT_CELL, START,
	 S(DENIED) | S(NO_SESSION) | S(SESSION_BUSY) | S(POOL) | S(CELLS_FULL), NOW, R(NONE),
	 E(NONE), ""},

	/* An interpreter, started for a cell. */
	{"interpreter admitted is queued", ADMIT_INTERP_START, REQ, 0, QUEUE, R(START), E(NONE),
	 NULL},
	{"interpreter while stopping", ADMIT_INTERP_START, REQ, S(STOPPING), REFUSE, R(STOPPING),
	 E(BUSY), STOPPING},
	{"interpreter of a uid no longer allowed", ADMIT_INTERP_START, REQ, S(DENIED), REFUSE,
	 R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"interpreter of a session that ended", ADMIT_INTERP_START, REQ, S(NOT_READY), REFUSE,
	 R(OBJECT), E(NOT_FOUND), NO_SESSION},
	{"interpreter of a session without one", ADMIT_INTERP_START, REQ, S(KIND), REFUSE,
	 R(OBJECT), E(BAD_REQUEST), NEEDS_INTERP},
	{"interpreter whose profile went", ADMIT_INTERP_START, REQ, S(NO_PROFILE), REFUSE,
	 R(PROFILE), E(NOT_FOUND), "profile 'default' does not exist"},
	{"interpreter with the queue full", ADMIT_INTERP_START, REQ, S(QUEUE_UID), REFUSE,
	 R(COUNTS), E(BUSY), NULL},
	{"interpreter past what the uid holds", ADMIT_INTERP_START, REQ, S(BYTES_HELD), REFUSE,
	 R(BYTES), E(BUSY), HELD_BYTES},
	{"interpreter skips the cells' queue, connections and sessions", ADMIT_INTERP_START, REQ,
	 S(CELLS_FULL) | S(NO_SLOT) | S(CONN_FAR) | S(SESSIONS_FULL), QUEUE, R(START), E(NONE),
	 NULL},
	{"interpreter whose mount went", ADMIT_INTERP_START, REQ, S(MOUNT_MISSING), REFUSE,
	 R(PROFILE), E(NOT_FOUND), NULL},
	{"interpreter starts without a run slot of its own", ADMIT_INTERP_START, START,
	 S(RUNS_ALL) | S(RUNS_UID) | S(POOL), NOW, R(NONE), E(NONE), ""},
	{"interpreter waits for its session's run", ADMIT_INTERP_START, START, S(SESSION_BUSY),
	 QUEUE, R(START), E(NONE), NULL},
	{"interpreter waits while stopping", ADMIT_INTERP_START, START, S(STOPPING), QUEUE,
	 R(STOPPING), E(NONE), NULL},
	{"interpreter at start is never refused access (its end answers its cell)",
	 ADMIT_INTERP_START, START, S(DENIED), NOW, R(NONE), E(NONE), ""},

	/* A session's open. */
	{"session open admitted", ADMIT_SESSION_OPEN, REQ, 0, NOW, R(NONE), E(NONE), ""},
	{"session open while stopping", ADMIT_SESSION_OPEN, REQ, S(STOPPING), REFUSE, R(STOPPING),
	 E(BUSY), STOPPING},
	{"session open of a uid no longer allowed", ADMIT_SESSION_OPEN, REQ, S(DENIED), REFUSE,
	 R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"session open of an interpreter not python", ADMIT_SESSION_OPEN, REQ, S(RUNTIME), REFUSE,
	 R(OBJECT), E(BAD_REQUEST), "interpreter 'ruby': not a python runtime of this daemon"},
	{"session open with background processes", ADMIT_SESSION_OPEN, REQ, S(BG), NOW, R(NONE),
	 E(NONE), ""},
	{"background processes without an interpreter", ADMIT_SESSION_OPEN, REQ, S(BG_PLAIN),
	 REFUSE, R(OBJECT), E(BAD_REQUEST),
	 "background processes need an interpreter session (open it with an interpreter)"},
	{"background processes the profile does not allow", ADMIT_SESSION_OPEN, REQ, S(BG_DENIED),
	 REFUSE, R(PROFILE), E(UNAUTHORIZED),
	 "profile 'default' does not allow background processes (background_processes = false)"},
	{"session open of a profile that does not exist", ADMIT_SESSION_OPEN, REQ, S(NO_PROFILE),
	 REFUSE, R(PROFILE), E(NOT_FOUND), "profile 'default' does not exist"},
	{"session open of a profile the uid may not use", ADMIT_SESSION_OPEN, REQ,
	 S(PROFILE_DENIED), REFUSE, R(PROFILE), E(UNAUTHORIZED),
	 "profile 'default' is not available to uid 1000"},
	{"session open above a ceiling", ADMIT_SESSION_OPEN, REQ, S(OVER_CEILING), REFUSE,
	 R(LIMITS), E(BAD_REQUEST),
	 "limits.cpu_ms = 5000 is above the ceiling 1001 of profile 'default'"},
	{"session open above the workspace ceiling", ADMIT_SESSION_OPEN, REQ, S(WS_OVER), REFUSE,
	 R(LIMITS), E(BAD_REQUEST), "workspace_bytes = 1008 is above the ceiling 1007"},
	{"session open above the idle ceiling", ADMIT_SESSION_OPEN, REQ, S(IDLE_OVER), REFUSE,
	 R(LIMITS), E(BAD_REQUEST), "idle_timeout_ms = 600001 is above the ceiling 600000"},
	{"session open above the lifetime ceiling", ADMIT_SESSION_OPEN, REQ, S(LIFE_OVER), REFUSE,
	 R(LIMITS), E(BAD_REQUEST), "lifetime_ms = 86400001 is above the ceiling 86400000"},
	{"session open past sessions_per_uid", ADMIT_SESSION_OPEN, REQ, S(SESSIONS_FULL), REFUSE,
	 R(COUNTS), E(BUSY), "uid 1000 has 2 sessions, the limit"},
	{"root is held to sessions_per_uid too", ADMIT_SESSION_OPEN, REQ,
	 S(SESSIONS_FULL) | S(ROOT), REFUSE, R(COUNTS), E(BUSY), "uid 0 has 2 sessions, the limit"},
	{"session open past max_interpreters", ADMIT_SESSION_OPEN, REQ, S(INTERPS_ALL), REFUSE,
	 R(COUNTS), E(BUSY),
	 "8 live interpreters, the daemon's limit (max_interpreters); close an interpreter "
	 "session or retry later"},
	{"session open past max_interpreters_per_uid", ADMIT_SESSION_OPEN, REQ, S(INTERPS_UID),
	 REFUSE, R(COUNTS), E(BUSY),
	 "uid 1000 has 1 live interpreters, the limit (max_interpreters_per_uid); close one of "
	 "its interpreter sessions"},
	{"root is held to max_interpreters only", ADMIT_SESSION_OPEN, REQ, S(INTERPS_UID) | S(ROOT),
	 NOW, R(NONE), E(NONE), ""},
	{"session open without a free sandbox uid", ADMIT_SESSION_OPEN, REQ, S(NO_SLOT), REFUSE,
	 R(START), E(BUSY), "no free sandbox uid"},
	{"session open skips the session, bytes and run slots", ADMIT_SESSION_OPEN, REQ,
	 S(NO_SESSION) | S(KIND) | S(TOO_LARGE) | S(BYTES_HELD) | S(RUNS_ALL) | S(QUEUE_ALL) |
		 S(CONN_FAR),
	 NOW, R(NONE), E(NONE), ""},

	/* A file operation. */
	{"file op admitted", ADMIT_FILE_OP, REQ, 0, NOW, R(NONE), E(NONE), ""},
	{"file op of a uid no longer allowed (revoked by a reload)", ADMIT_FILE_OP, REQ, S(DENIED),
	 REFUSE, R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"file op of no session", ADMIT_FILE_OP, REQ, S(NO_SESSION), REFUSE, R(OBJECT),
	 E(NOT_FOUND), NO_SESSION},
	{"file op of a session not ready", ADMIT_FILE_OP, REQ, S(NOT_READY), REFUSE, R(OBJECT),
	 E(NOT_FOUND), NO_SESSION},
	{"file write above file_max_bytes", ADMIT_FILE_OP, REQ, S(TOO_LARGE), REFUSE, R(BYTES),
	 E(TOO_LARGE), "a.txt: 2097152 bytes; file_max_bytes is 65536"},
	{"file read's copy past what the uid holds", ADMIT_FILE_OP, START, S(BYTES_HELD), REFUSE,
	 R(BYTES), E(BUSY),
	 "a.txt: uid 1000: the daemon holds 1047576 bytes for it (unread replies, replies' "
	 "memfds still open, queued runs); max_bytes_per_uid is 1048576"},
	{"file read's copy with all memfds given", ADMIT_FILE_OP, START, S(FDS_ALL), REFUSE,
	 R(BYTES), E(BUSY),
	 "a.txt: uid 1000: its clients keep 0 memfds of results open (max_fds_per_uid 4), 16 in "
	 "all (at most 16); close results no longer needed"},
	{"file read's copy is counted at most file_max_bytes", ADMIT_FILE_OP, START, S(TOO_LARGE),
	 NOW, R(NONE), E(NONE), ""},
	{"file op skips stopping, profile, limits, counts, start; an interpreter session's too",
	 ADMIT_FILE_OP, REQ,
	 S(STOPPING) | S(KIND) | S(OTHER_PROFILE) | S(NO_PROFILE) | S(OVER_CEILING) | S(QUEUE_ALL) |
		 S(CELLS_FULL) | S(NO_SLOT) | S(RUNS_ALL),
	 NOW, R(NONE), E(NONE), ""},

	/* A tool call of a run's code. */
	{"tool call admitted", ADMIT_TOOL_CALL, REQ, 0, NOW, R(NONE), E(NONE), ""},
	{"tool call of a uid no longer allowed (revoked by a reload)", ADMIT_TOOL_CALL, REQ,
	 S(DENIED), REFUSE, R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"tool call whose client left", ADMIT_TOOL_CALL, REQ, S(CLIENT_GONE), REFUSE, R(OBJECT),
	 E(NONE), "the client is gone"},
	{"tool call past the run's calls", ADMIT_TOOL_CALL, REQ, S(CALLS_FULL), REFUSE, R(COUNTS),
	 E(NONE), "the run made as many calls as it may"},
	{"tool call skips stopping, profile, limits, bytes, start", ADMIT_TOOL_CALL, REQ,
	 SP_EVERY_RULE & ~S(DENIED), NOW, R(NONE), E(NONE), ""},

	/* An egress connection of a run's code. */
	{"egress connection admitted", ADMIT_EGRESS_CONN, REQ, 0, NOW, R(NONE), E(NONE), ""},
	{"egress connection of a run past its bytes", ADMIT_EGRESS_CONN, REQ, S(EGRESS_OVER),
	 REFUSE, R(COUNTS), E(NONE), "limit"},
	{"egress connection past the policy's count", ADMIT_EGRESS_CONN, REQ, S(EGRESS_CONNS),
	 REFUSE, R(COUNTS), E(NONE), "limit"},
	{"egress connection past the run's open ones", ADMIT_EGRESS_CONN, REQ, S(EGRESS_OPEN),
	 REFUSE, R(COUNTS), E(NONE), "limit"},
	{"egress connection past all runs' open ones", ADMIT_EGRESS_CONN, REQ, S(EGRESS_ALL),
	 REFUSE, R(COUNTS), E(NONE), "limit"},
	{"egress connection skips every rule but its counts (access too: a run in flight)",
	 ADMIT_EGRESS_CONN, REQ, SP_EVERY_RULE | S(CALLS_FULL) | S(CLIENT_GONE), NOW, R(NONE),
	 E(NONE), ""},

	/* The order of the rules: with two spoiled, the earlier decides. */
	{"order: stopping before access", ADMIT_RUN, REQ, S(STOPPING) | S(DENIED), REFUSE,
	 R(STOPPING), E(BUSY), STOPPING},
	{"order: access before the object", ADMIT_SESSION_RUN, REQ, S(DENIED) | S(NO_SESSION),
	 REFUSE, R(ACCESS), E(UNAUTHORIZED), NOT_ALLOWED},
	{"order: the object before the profile", ADMIT_SESSION_RUN, REQ,
	 S(NO_SESSION) | S(NO_PROFILE), REFUSE, R(OBJECT), E(NOT_FOUND), NO_SESSION},
	{"order: the profile before the limits", ADMIT_RUN, REQ, S(NO_PROFILE) | S(OVER_CEILING),
	 REFUSE, R(PROFILE), E(NOT_FOUND), NULL},
	{"order: the limits before the counts", ADMIT_RUN, REQ, S(OVER_CEILING) | S(QUEUE_ALL),
	 REFUSE, R(LIMITS), E(BAD_REQUEST), NULL},
	{"order: the counts before the bytes", ADMIT_RUN, REQ, S(QUEUE_ALL) | S(TOO_LARGE), REFUSE,
	 R(COUNTS), E(BUSY), NULL},
	{"order: the counts before the start", ADMIT_SESSION_OPEN, REQ,
	 S(SESSIONS_FULL) | S(NO_SLOT), REFUSE, R(COUNTS), E(BUSY), NULL},
	{"order: the object before the counts", ADMIT_SESSION_OPEN, REQ,
	 S(RUNTIME) | S(SESSIONS_FULL), REFUSE, R(OBJECT), E(BAD_REQUEST), NULL},
	{"order: the bytes before the start", ADMIT_CELL, REQ, S(TOO_LARGE) | S(NO_SLOT), REFUSE,
	 R(BYTES), E(TOO_LARGE), NULL},
};

static void
test_rows(void **state)
{
	size_t i, failed = 0;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct admit_row *row = &rows[i];
		struct admit_facts f;
		struct admit_decision dec;

		test_base(row->kind, row->phase, &f);
		test_spoil(&f, row->spoil);
		admit_decide(&f, &dec);
		if (dec.verdict == row->verdict && dec.rule == row->rule && dec.code == row->code &&
		    (row->why == NULL || strcmp(dec.why, row->why) == 0))
			continue;
		failed++;
		print_error("row %zu (%s, %s): %s\n  got verdict %d rule %s code %d \"%s\"\n"
			    "  want verdict %d rule %s code %d \"%s\"\n",
			    i, admit_kind_name(row->kind), row->phase == REQ ? "request" : "start",
			    row->what, dec.verdict, admit_rule_name(dec.rule), dec.code, dec.why,
			    row->verdict, admit_rule_name(row->rule), row->code,
			    row->why != NULL ? row->why : "(any)");
	}
	assert_int_equal(failed, 0);
}

/* Every kind, in both phases, has a row (the table covers the nine kinds). */
static void
test_rows_cover_kinds(void **state)
{
	bool seen[ADMIT_KIND_COUNT_][2] = {{false}};
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		seen[rows[i].kind][rows[i].phase] = true;
	for (k = 0; k < ADMIT_KIND_COUNT_; k++)
		assert_true(seen[k][REQ]);
	assert_true(seen[ADMIT_CONNECTION][START] && seen[ADMIT_RUN][START] &&
		    seen[ADMIT_SESSION_RUN][START] && seen[ADMIT_CELL][START] &&
		    seen[ADMIT_INTERP_START][START] && seen[ADMIT_FILE_OP][START]);
}

/* Rule 5's result: the session's defaults, then the profile's, filled. */
static void
test_limits_filled(void **state)
{
	struct admit_facts f;
	struct admit_decision dec;

	(void)state;
	test_base(ADMIT_SESSION_RUN, REQ, &f);
	session_defaults.v[PROTO_LIMIT_WALL_MS] = 500;
	asked.v[PROTO_LIMIT_CPU_MS] = 7;
	admit_decide(&f, &dec);
	assert_int_equal(dec.verdict, ADMIT_QUEUE);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_WALL_MS], 500);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], 7);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_PROCESSES], defaults.v[PROTO_LIMIT_PROCESSES]);
	/* A session default above the ceiling is refused as if asked. */
	session_defaults.v[PROTO_LIMIT_WALL_MS] = 5000;
	admit_decide(&f, &dec);
	assert_int_equal(dec.rule, ADMIT_RULE_LIMITS);
	assert_string_equal(dec.why,
			    "limits.wall_ms = 5000 is above the ceiling 1000 of profile 'default'");
}

/*
 * Rule 5: a wall limit asked without a CPU limit, above the profile's CPU
 * default, raises the CPU limit to it, at most to the CPU ceiling (the rule
 * of MCP's timeout_seconds and the kernel's AIRLOCK_KERNEL_WALL_S, issue
 * 33); never lowered, never over a CPU limit asked or a session's default.
 * Here the CPU default is 11 and its ceiling 1001.
 */
static void
test_limits_wall_raises_cpu(void **state)
{
	static const enum admit_kind kinds[] = {ADMIT_RUN, ADMIT_SESSION_RUN, ADMIT_CELL};
	static const struct {
		uint64_t wall, cpu, session_cpu, want_cpu;
	} walls[] = {
		{500, 0, 0, 500},   /* raised to the wall */
		{1000, 0, 0, 1000}, /* the wall's ceiling is 1000, the cpu's 1001 */
		{5, 0, 0, 11},	    /* below the default: the default */
		{11, 0, 0, 11},	    /* at it */
		{500, 7, 0, 7},	    /* asked: kept */
		{0, 0, 0, 11},	    /* no wall asked: the default */
		{500, 0, 9, 9},	    /* a session's CPU default: kept */
	};
	struct admit_facts f;
	struct admit_decision dec;
	size_t i, k;

	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (i = 0; i < sizeof(walls) / sizeof(walls[0]); i++) {
			if (walls[i].session_cpu != 0 && kinds[k] != ADMIT_SESSION_RUN)
				continue;
			test_base(kinds[k], REQ, &f);
			asked.v[PROTO_LIMIT_WALL_MS] = walls[i].wall;
			asked.v[PROTO_LIMIT_CPU_MS] = walls[i].cpu;
			session_defaults.v[PROTO_LIMIT_CPU_MS] = walls[i].session_cpu;
			admit_decide(&f, &dec);
			assert_int_equal(dec.verdict, ADMIT_QUEUE);
			assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], walls[i].want_cpu);
		}
	/* Capped at the CPU ceiling when it is below the wall asked. */
	test_base(ADMIT_RUN, REQ, &f);
	ceilings.v[PROTO_LIMIT_CPU_MS] = 300;
	asked.v[PROTO_LIMIT_WALL_MS] = 900;
	admit_decide(&f, &dec);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], 300);
	/* A session's wall default counts as asked. */
	test_base(ADMIT_SESSION_RUN, REQ, &f);
	session_defaults.v[PROTO_LIMIT_WALL_MS] = 400;
	admit_decide(&f, &dec);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], 400);
	/* An interpreter's start keeps the ceilings; a session's open its
	 * profile's defaults (its asked limits are its runs' defaults). */
	test_base(ADMIT_INTERP_START, REQ, &f);
	asked.v[PROTO_LIMIT_WALL_MS] = 500;
	admit_decide(&f, &dec);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], ceilings.v[PROTO_LIMIT_CPU_MS]);
	test_base(ADMIT_SESSION_OPEN, REQ, &f);
	asked.v[PROTO_LIMIT_WALL_MS] = 500;
	admit_decide(&f, &dec);
	assert_int_equal(dec.verdict, ADMIT_NOW);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], defaults.v[PROTO_LIMIT_CPU_MS]);
}

/* figures_svg: a cell's, or a run's of a runtime whose figures come back
 * (a python one, runtime_figures); another run's is bad_request (issue 30). */
static void
test_figures_svg(void **state)
{
	static const enum admit_kind kinds[] = {ADMIT_RUN, ADMIT_SESSION_RUN};
	struct admit_facts f;
	struct admit_decision dec;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		test_base(kinds[i], REQ, &f);
		f.figures_svg = true;
		admit_decide(&f, &dec);
		assert_int_equal(dec.rule, ADMIT_RULE_OBJECT);
		assert_int_equal(dec.code, PROTO_ERR_BAD_REQUEST);
		assert_non_null(strstr(dec.why, "figures_svg is for cells and python runs"));
		f.runtime_figures = true;
		admit_decide(&f, &dec);
		assert_int_equal(dec.verdict, ADMIT_QUEUE);
	}
	test_base(ADMIT_CELL, REQ, &f);
	f.figures_svg = true;
	admit_decide(&f, &dec);
	assert_int_not_equal(dec.rule, ADMIT_RULE_OBJECT);
}

/* An interpreter's wall and cpu limits are the profile's ceilings. */
static void
test_limits_interp(void **state)
{
	struct admit_facts f;
	struct admit_decision dec;

	(void)state;
	test_base(ADMIT_INTERP_START, REQ, &f);
	asked.v[PROTO_LIMIT_WALL_MS] = 3;
	admit_decide(&f, &dec);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_WALL_MS], ceilings.v[PROTO_LIMIT_WALL_MS]);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_CPU_MS], ceilings.v[PROTO_LIMIT_CPU_MS]);
	assert_int_equal(dec.limits.v[PROTO_LIMIT_MEMORY_BYTES],
			 defaults.v[PROTO_LIMIT_MEMORY_BYTES]);
}

/* A session's workspace, idle and lifetime: 0 takes the default. */
static void
test_session_picks(void **state)
{
	struct admit_facts f;
	struct admit_decision dec;

	(void)state;
	test_base(ADMIT_SESSION_OPEN, REQ, &f);
	f.lifetime_ms = 5;
	admit_decide(&f, &dec);
	assert_int_equal(dec.verdict, ADMIT_NOW);
	assert_int_equal(dec.workspace_bytes, defaults.v[PROTO_LIMIT_WORKSPACE_BYTES]);
	assert_int_equal(dec.idle_ms, caps.session_idle_ms);
	assert_int_equal(dec.lifetime_ms, 5);
}

/* A tool call's refusal carries the outcome its record shows. */
static void
test_tool_outcomes(void **state)
{
	struct admit_facts f;
	struct admit_decision dec;

	(void)state;
	test_base(ADMIT_TOOL_CALL, REQ, &f);
	admit_decide(&f, &dec);
	assert_int_equal(dec.tool, PROTO_TOOL_OK);
	test_spoil(&f, S(DENIED));
	admit_decide(&f, &dec);
	assert_int_equal(dec.tool, PROTO_TOOL_REFUSED);
	test_spoil(&f, S(CALLS_FULL));
	admit_decide(&f, &dec);
	assert_int_equal(dec.tool, PROTO_TOOL_LIMIT);
	test_spoil(&f, S(CLIENT_GONE));
	admit_decide(&f, &dec);
	assert_int_equal(dec.tool, PROTO_TOOL_ABANDONED);
	/* Only a connection far over its limit is closed without a reply. */
	test_base(ADMIT_CONNECTION, REQ, &f);
	test_spoil(&f, S(CONN_FAR));
	admit_decide(&f, &dec);
	assert_true(dec.silent);
	test_spoil(&f, S(CONN_FULL));
	admit_decide(&f, &dec);
	assert_false(dec.silent);
}

/* A run waiting for a run slot wants an idle zygote stopped only when that
 * would free one for it: under max_runs any caller's, under
 * max_runs_per_uid its own caller's (max_runs 8, max_runs_per_uid 2). */
static void
test_want_zygote_slot(void **state)
{
	static const struct {
		uint32_t all, held, idle_all, idle_uid;
		bool want;
	} want_rows[] = {
		{8, 0, 1, 0, true}, {8, 0, 0, 0, false}, {2, 2, 1, 0, false},
		{2, 2, 1, 1, true}, {1, 1, 1, 0, false}, {8, 2, 0, 0, false},
	};
	struct admit_facts f;
	struct admit_decision dec;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want_rows) / sizeof(want_rows[0]); i++) {
		test_base(ADMIT_RUN, START, &f);
		f.all.n[LEDGER_RUNNING] = want_rows[i].all;
		f.held.n[LEDGER_RUNNING] = want_rows[i].held;
		f.zygotes_idle_all = want_rows[i].idle_all;
		f.zygotes_idle_uid = want_rows[i].idle_uid;
		memset(&dec, 0, sizeof(dec));
		admit_decide(&f, &dec);
		if (dec.want_zygote_slot != want_rows[i].want)
			fail_msg("row %zu: want_zygote_slot %d", i, dec.want_zygote_slot);
	}
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(admit_rule_name(ADMIT_RULE_ACCESS), "access");
	assert_string_equal(admit_rule_name(ADMIT_RULE_START), "start");
	assert_string_equal(admit_rule_name(ADMIT_RULE_COUNT_), "unknown");
	assert_string_equal(admit_kind_name(ADMIT_EGRESS_CONN), "egress connection");
	assert_string_equal(admit_kind_name(ADMIT_KIND_COUNT_), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_rows_cover_kinds),
		cmocka_unit_test(test_limits_filled),
		cmocka_unit_test(test_limits_interp),
		cmocka_unit_test(test_limits_wall_raises_cpu),
		cmocka_unit_test(test_session_picks),
		cmocka_unit_test(test_tool_outcomes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_want_zygote_slot),
		cmocka_unit_test(test_figures_svg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
