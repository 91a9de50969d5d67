/*
 * admit.c: the frontend's one admission decision (docs/design-reshape.md
 * §3): the rules of the table, in its order, over the nine kinds of work.
 * The messages are the daemon's words where each check lived before
 * (run.c, client.c, session.c, cells.c, run_tools.c, egress.c): a client
 * sees the same refusal, whichever path admitted it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "admit.h"
#include "rules.h"

#define KIND(k) (1U << (k))
#define RUN_KINDS (KIND(ADMIT_RUN) | KIND(ADMIT_SESSION_RUN) | KIND(ADMIT_INTERP_START))
#define SESSION_KINDS                                                                              \
	(KIND(ADMIT_SESSION_RUN) | KIND(ADMIT_CELL) | KIND(ADMIT_INTERP_START) |                   \
	 KIND(ADMIT_FILE_OP))

static const char *const admit_rule_names[ADMIT_RULE_COUNT_] = {
	"none", "stopping", "access", "object", "profile", "limits", "counts", "bytes", "start",
};

static const char *const admit_kind_names[ADMIT_KIND_COUNT_] = {
	"connection",	     "run",	     "session run", "cell",
	"interpreter start", "session open", "file op",	    "tool call",
	"egress connection", "zygote",
};

const char *
admit_rule_name(enum admit_rule rule)
{
	return (unsigned)rule < ADMIT_RULE_COUNT_ ? admit_rule_names[rule] : "unknown";
}

const char *
admit_kind_name(enum admit_kind kind)
{
	return (unsigned)kind < ADMIT_KIND_COUNT_ ? admit_kind_names[kind] : "unknown";
}

/* Decide: verdict v with code and the message; true (the caller stops). */
__attribute__((format(printf, 4, 5))) static bool
admit_set(struct admit_decision *ret, enum admit_verdict v, enum proto_error code, const char *fmt,
	  ...)
{
	va_list ap;

	ret->verdict = v;
	ret->code = code;
	va_start(ap, fmt);
	vsnprintf(ret->why, sizeof(ret->why), fmt, ap);
	va_end(ap);
	return true;
}

static bool
admit_is(const struct admit_facts *f, unsigned kinds)
{
	return (KIND(f->kind) & kinds) != 0;
}

/*
 * 1. Stopping: nothing new is taken. At the start a queued run or cell
 * waits (run_dispatch pops nothing while stopping); the stop ends it.
 */
static bool
admit_stopping(const struct admit_facts *f, struct admit_decision *ret)
{
	if (!f->stopping)
		return false;
	if (f->phase == ADMIT_AT_START)
		return admit_set(ret, ADMIT_QUEUE, PROTO_ERR_NONE, "the daemon is stopping");
	return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY, "the daemon is stopping");
}

/*
 * 2. Access, by [access] of the config in force now, never kept from the
 * connect: a reload may have removed the user since, and a revoked user's
 * open connection must not go on using the daemon (issue 28), its sessions'
 * files, cells and its runs' tool calls included (issue 29). A connection
 * hears it at its hello (a refusal needs an id to answer); a queued run at
 * its start, as run_access_reloaded() dropped it; an interpreter's run
 * never (its end answers its cell), nor an egress connection (a run in
 * flight keeps what it was given).
 */
static bool
admit_access(const struct admit_facts *f, struct admit_decision *ret)
{
	if (f->peer_allowed)
		return false;
	if (f->kind == ADMIT_CONNECTION) {
		if (f->phase == ADMIT_AT_REQUEST)
			return false;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_UNAUTHORIZED,
				 "uid %u is not allowed to use this daemon", (unsigned)f->uid);
	}
	if (f->phase == ADMIT_AT_START && !admit_is(f, KIND(ADMIT_RUN) | KIND(ADMIT_SESSION_RUN)))
		return false;
	if (f->kind == ADMIT_TOOL_CALL)
		ret->tool = PROTO_TOOL_REFUSED;
	return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_UNAUTHORIZED,
			 "uid %u is no longer allowed to use this daemon", (unsigned)f->uid);
}

/* 3, for the session kinds: the session, then what it takes. */
static bool
admit_session(const struct admit_facts *f, struct admit_decision *ret)
{
	bool cellish = admit_is(f, KIND(ADMIT_CELL) | KIND(ADMIT_INTERP_START));

	if (f->kind == ADMIT_CELL && !f->session_named)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "a cell needs a session opened with an interpreter");
	if (!f->session_found || !f->session_ready)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NOT_FOUND, "no such session");
	if (f->kind == ADMIT_FILE_OP)
		return false;
	/* A session's runs use the profile it was opened with. */
	if (f->profile != NULL && f->session_profile != NULL &&
	    strcmp(f->profile, f->session_profile) != 0)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "profile '%s': the session's runs use its profile '%s'",
				 f->profile, f->session_profile);
	/* An interpreter session takes cells (and file operations) only:
	 * its interpreter is the one sandbox in its uid slot. */
	if (f->session_interp != cellish)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST, "%s",
				 f->session_interp
					 ? "an interpreter session runs cells only"
					 : "a cell needs a session opened with an interpreter");
	return false;
}

/* 3. The object: the session named, the runtime; a tool call's client; a
 * run's figures_svg and ipython. */
static bool
admit_object(const struct admit_facts *f, struct admit_decision *ret)
{
	/* Figures come back from a cell, and from a run whose runtime starts
	 * through the figure hook (a python one); another run's are files it
	 * saves. (An interpreter's start is gathered from its cell's request.) */
	if (admit_is(f, KIND(ADMIT_RUN) | KIND(ADMIT_SESSION_RUN)) && f->figures_svg &&
	    !f->runtime_figures)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "figures_svg is for cells and python runs (this runtime's figures "
				 "are files it saves)");
	/* IPython is a driver of the session's interpreter: a run has none. */
	if (admit_is(f, KIND(ADMIT_RUN) | KIND(ADMIT_SESSION_RUN)) && f->ipython)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "ipython is for cells (a run has no interpreter driver)");
	if (f->kind == ADMIT_RUN)
		return false; /* no session: the rest is a session's */
	if (f->phase == ADMIT_AT_START)
		return false;
	if (f->kind == ADMIT_SESSION_OPEN) {
		if (f->runtime != NULL && !f->runtime_ok)
			return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
					 "interpreter '%s': not a python runtime of this daemon",
					 f->runtime);
		/* Only an interpreter session has one sandbox for all its
		 * steps; a plain session's runs are separate sandboxes, each
		 * with its own network namespace (design-interpreters.md §2.7). */
		if (f->background && f->runtime == NULL)
			return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
					 "background processes need an interpreter session "
					 "(open it with an interpreter)");
		return false;
	}
	if (f->kind == ADMIT_TOOL_CALL) {
		if (!f->run.client_gone)
			return false;
		ret->tool = PROTO_TOOL_ABANDONED;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NONE, "the client is gone");
	}
	if (admit_session(f, ret))
		return true;
	if (f->kind != ADMIT_CELL)
		return false;
	if (f->runtime == NULL || f->session_runtime == NULL ||
	    strcmp(f->runtime, f->session_runtime) != 0)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "runtime '%s': the session's interpreter is '%s'",
				 f->runtime != NULL ? f->runtime : "",
				 f->session_runtime != NULL ? f->session_runtime : "");
	if (!f->cell_code_only)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "a cell takes code, limits and stream only (argv, env, stdin, "
				 "files, mounts and tools are for runs)");
	return false;
}

/* 4. The profile: it exists, the uid may use it, and the mounts named. */
static bool
admit_profile(const struct admit_facts *f, struct admit_decision *ret)
{
	const char *name = f->profile_name != NULL ? f->profile_name : "";

	if (f->phase == ADMIT_AT_START)
		return false;
	/* A session's runs look up the profile it was opened with. */
	if (!f->profile_found)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NOT_FOUND,
				 "profile '%s' does not exist",
				 f->session_profile != NULL ? f->session_profile
				 : f->profile != NULL	    ? f->profile
							    : "default");
	if (!f->profile_allowed)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_UNAUTHORIZED,
				 "profile '%s' is not available to uid %u", name, (unsigned)f->uid);
	/* Processes that outlive a cell are the administrator's choice, per
	 * profile (background_processes, default false): they spend the
	 * session's limits between cells, with no run slot held. */
	if (f->kind == ADMIT_SESSION_OPEN && f->background && !f->profile_background)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_UNAUTHORIZED,
				 "profile '%s' does not allow background processes "
				 "(background_processes = false)",
				 name);
	/*
	 * The runtimes = list: a run's, a cell's (a reload may have taken the
	 * runtime from the session's profile since its open), an interpreter's
	 * and a session's interpreter at its open. Refused like a mount the
	 * profile does not allow: the administrator's policy, not a bad request.
	 */
	if (f->runtime != NULL && !f->runtime_allowed &&
	    admit_is(f, RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_SESSION_OPEN)))
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_UNAUTHORIZED,
				 "runtime '%s' is not available under profile '%s' (its runtimes: "
				 "%s)",
				 f->runtime, name,
				 f->profile_runtimes != NULL ? f->profile_runtimes : "");
	/* Mounts are a run's, an interpreter's included (its profile's and
	 * runtime's); a cell names none: its object check said so. */
	if (!admit_is(f, RUN_KINDS))
		return false;
	switch (f->mount) {
	case ADMIT_MOUNT_MISSING:
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NOT_FOUND,
				 "mount '%s' does not exist", f->mount_name);
	case ADMIT_MOUNT_REFUSED:
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_UNAUTHORIZED,
				 "mount '%s' is not available to uid %u under profile '%s' (not "
				 "in its allow_mounts)",
				 f->mount_name, (unsigned)f->uid, name);
	case ADMIT_MOUNT_UNAVAILABLE:
		/* The client is not told the source: a host path is the
		 * administrator's (the daemon's log has it). */
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NOT_FOUND,
				 "mount '%s' (at %s) is unavailable: its source is missing on "
				 "the host",
				 f->mount_name, f->mount_target);
	case ADMIT_MOUNT_OK:
	default:
		return false;
	}
}

/* A session's own limit: 0 takes the default, above the maximum is refused. */
static bool
admit_pick(struct admit_decision *ret, const char *name, uint64_t asked, uint64_t def, uint64_t max,
	   uint64_t *out)
{
	if (asked > max)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "%s = %" PRIu64 " is above the ceiling %" PRIu64, name, asked,
				 max);
	*out = asked != 0 ? asked : def;
	return false;
}

/*
 * A wall limit asked (or a session's default) without a CPU limit says the
 * code is expected to work that long: above the profile's CPU default, the
 * CPU limit is the wall, at most the profile's CPU ceiling, so that it is
 * not stopped by the CPU default first (docs/design-profiles.md 7b; once
 * the rule of the MCP server's timeout_seconds and the Jupyter kernel's
 * wall). It grants nothing a request could not ask: the ceiling bounds it.
 */
static void
admit_wall_raises_cpu(const struct proto_limits *asked, const struct proto_limits *defaults,
		      const struct proto_limits *ceilings, struct proto_limits *limits)
{
	uint64_t wall = asked->v[PROTO_LIMIT_WALL_MS];

	if (asked->v[PROTO_LIMIT_CPU_MS] != 0 || wall <= defaults->v[PROTO_LIMIT_CPU_MS])
		return;
	limits->v[PROTO_LIMIT_CPU_MS] =
		wall < ceilings->v[PROTO_LIMIT_CPU_MS] ? wall : ceilings->v[PROTO_LIMIT_CPU_MS];
}

/*
 * 5. Limits: asked (a session's run: its session's defaults first) within
 * the profile's ceilings, the profile's defaults filled; a session's
 * workspace, idle and lifetime within theirs.
 */
static bool
admit_limits(const struct admit_facts *f, struct admit_decision *ret)
{
	struct proto_limits asked = {0};
	enum proto_limit bad = 0;
	size_t k;

	if (f->phase == ADMIT_AT_START || f->ceilings == NULL || f->defaults == NULL)
		return false;
	if (f->asked != NULL)
		asked = *f->asked;
	for (k = 0; f->session_defaults != NULL && k < PROTO_LIMIT_COUNT_; k++)
		if (asked.v[k] == 0)
			asked.v[k] = f->session_defaults->v[k];
	if (!rules_limits_within(&asked, f->ceilings, &bad))
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BAD_REQUEST,
				 "limits.%s = %" PRIu64 " is above the ceiling %" PRIu64
				 " of profile '%s'",
				 proto_limit_name(bad), asked.v[bad], f->ceilings->v[bad],
				 f->profile_name != NULL ? f->profile_name : "");
	for (k = 0; k < PROTO_LIMIT_COUNT_; k++)
		ret->limits.v[k] = asked.v[k] != 0 ? asked.v[k] : f->defaults->v[k];
	if (f->kind == ADMIT_RUN || f->kind == ADMIT_SESSION_RUN || f->kind == ADMIT_CELL)
		admit_wall_raises_cpu(&asked, f->defaults, f->ceilings, &ret->limits);
	/* The interpreter lives for the session: the wall and cpu limits are
	 * each cell's, counted by its supervisor; RLIMIT_CPU (at the ceiling)
	 * bounds the interpreter's whole life. */
	if (f->kind == ADMIT_INTERP_START) {
		ret->limits.v[PROTO_LIMIT_WALL_MS] = f->ceilings->v[PROTO_LIMIT_WALL_MS];
		ret->limits.v[PROTO_LIMIT_CPU_MS] = f->ceilings->v[PROTO_LIMIT_CPU_MS];
	}
	if (f->kind != ADMIT_SESSION_OPEN || f->caps == NULL)
		return false;
	return admit_pick(ret, "workspace_bytes", f->workspace_bytes,
			  f->defaults->v[PROTO_LIMIT_WORKSPACE_BYTES],
			  f->ceilings->v[PROTO_LIMIT_WORKSPACE_BYTES], &ret->workspace_bytes) ||
	       admit_pick(ret, "idle_timeout_ms", f->idle_ms, f->caps->session_idle_ms,
			  f->caps->session_idle_ms_max, &ret->idle_ms) ||
	       admit_pick(ret, "lifetime_ms", f->lifetime_ms, f->caps->session_lifetime_ms,
			  f->caps->session_lifetime_ms_max, &ret->lifetime_ms);
}

/*
 * 6 for a connection. Refused connections wait for their hello to hear
 * why; past twice the limit a uid gets no such courtesy, so it cannot pin
 * frontend fds. Root is exempt.
 */
static bool
admit_count_connection(const struct admit_facts *f, const struct ledger_caps *cap,
		       struct admit_decision *ret)
{
	uint32_t same = f->held.n[LEDGER_CONNECTIONS];

	if (f->phase == ADMIT_AT_START) {
		if (!f->over_limit)
			return false;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "uid %u has %u connections, the limit", (unsigned)f->uid,
				 cap->max_connections_per_uid);
	}
	if (f->uid == 0 || same < cap->max_connections_per_uid)
		return false;
	if (same >= 2 * cap->max_connections_per_uid) {
		ret->silent = true;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "uid %u far over its connection limit; closing", (unsigned)f->uid);
	}
	return admit_set(ret, ADMIT_QUEUE, PROTO_ERR_BUSY, "uid %u has %u connections, the limit",
			 (unsigned)f->uid, cap->max_connections_per_uid);
}

/*
 * 6 for a session's open. Between cells an interpreter holds no run slot,
 * so what idle ones hold is bounded by caps of their own (issue 28); past
 * one the open is refused at once, never queued. Root is held to the
 * global interpreter cap only; sessions_per_uid holds it too.
 */
static bool
admit_count_session(const struct admit_facts *f, const struct ledger_caps *cap,
		    struct admit_decision *ret)
{
	uint32_t mine = f->held.n[LEDGER_INTERPRETERS], all = f->all.n[LEDGER_INTERPRETERS];

	if (f->held.n[LEDGER_SESSIONS] >= cap->sessions_per_uid)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "uid %u has %u sessions, the limit", (unsigned)f->uid,
				 cap->sessions_per_uid);
	if (f->runtime == NULL)
		return false;
	if (all >= cap->max_interpreters)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "%u live interpreters, the daemon's limit (max_interpreters); "
				 "close an interpreter session or retry later",
				 (unsigned)all);
	if (f->uid != 0 && mine >= cap->max_interpreters_per_uid)
		return admit_set(
			ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
			"uid %u has %u live interpreters, the limit "
			"(max_interpreters_per_uid); close one of its interpreter sessions",
			(unsigned)f->uid, (unsigned)mine);
	return false;
}

/* 6 for the work of a run: its tool calls, its egress connections. */
static bool
admit_count_run(const struct admit_facts *f, const struct ledger_caps *cap,
		struct admit_decision *ret)
{
	const struct admit_run_counts *r = &f->run;

	if (f->kind == ADMIT_TOOL_CALL) {
		if (r->calls < cap->tool_calls_max)
			return false;
		ret->tool = PROTO_TOOL_LIMIT;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NONE,
				 "the run made as many calls as it may");
	}
	/* open_all_max: the runs together cannot take the fds the frontend
	 * needs for its clients and runs (2 per connection). */
	if (r->egress_over || r->conns > r->conns_max || r->open >= cap->egress_open_max ||
	    r->open_all >= r->open_all_max)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_NONE, "limit");
	return false;
}

/*
 * 6. Counts. A run's queue is bounded in all and per uid, root's runs
 * waiting in it like everybody's (root is only exempt from the per-uid
 * bound); a full queue answers busy at once.
 */
static bool
admit_counts(const struct admit_facts *f, struct admit_decision *ret)
{
	const struct ledger_caps *cap = f->caps;
	uint32_t per_uid;

	if (cap == NULL)
		return false;
	if (f->kind == ADMIT_CONNECTION)
		return admit_count_connection(f, cap, ret);
	if (f->phase == ADMIT_AT_START)
		return false;
	if (f->kind == ADMIT_SESSION_OPEN)
		return admit_count_session(f, cap, ret);
	if (admit_is(f, KIND(ADMIT_TOOL_CALL) | KIND(ADMIT_EGRESS_CONN)))
		return admit_count_run(f, cap, ret);
	if (f->kind == ADMIT_CELL) {
		if (f->cells_queued < cap->cells_queue_max)
			return false;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY, "%u cells wait in this session",
				 (unsigned)f->cells_queued);
	}
	per_uid = f->uid == 0 ? cap->max_queued : cap->max_queued_per_uid;
	if (f->all.n[LEDGER_QUEUED] < cap->max_queued && f->held.n[LEDGER_QUEUED] < per_uid)
		return false;
	return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
			 "%" PRIu32 " runs running and %" PRIu32 " queued (%" PRIu32
			 " of this uid): the queue is full",
			 f->all.n[LEDGER_RUNNING], f->all.n[LEDGER_QUEUED],
			 f->held.n[LEDGER_QUEUED]);
}

/* Room for one more memfd given to a client: the uid's share and all uids'. */
static bool
admit_held_room(const struct admit_facts *f)
{
	const struct ledger_caps *cap = f->caps;

	return f->held.n[LEDGER_HELD] < cap->max_fds_per_uid &&
	       f->all.n[LEDGER_HELD] < cap->held_max;
}

/*
 * 7 for a file op. A write's data is bounded by file_max_bytes at the
 * request; a read's copy is held for the uid until its client read the
 * reply, so it is checked at the copy (the start), by what the copy will
 * really hold, plus a message's worth.
 */
static bool
admit_bytes_file(const struct admit_facts *f, struct admit_decision *ret)
{
	const struct ledger_caps *cap = f->caps;
	uint64_t max = cap->max_bytes_per_uid, held = f->held.bytes, want = f->want_bytes;
	const char *what = f->what != NULL ? f->what : ".";

	if (f->phase == ADMIT_AT_REQUEST) {
		if (!f->file_write || want <= cap->file_max_bytes)
			return false;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_TOO_LARGE,
				 "%s: %" PRIu64 " bytes; file_max_bytes is %" PRIu64, what, want,
				 cap->file_max_bytes);
	}
	if (want > cap->file_max_bytes)
		want = cap->file_max_bytes;
	if (want + PROTO_MSG_MAX > max - (held < max ? held : max))
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "%s: uid %u: the daemon holds %" PRIu64
				 " bytes for it (unread replies, replies' memfds still open, "
				 "queued runs); max_bytes_per_uid is %" PRIu64,
				 what, (unsigned)f->uid, held, max);
	if (!admit_held_room(f))
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "%s: uid %u: its clients keep %" PRIu32
				 " memfds of results open (max_fds_per_uid %" PRIu32 "), %" PRIu32
				 " in all (at most %" PRIu32 "); close results no longer needed",
				 what, (unsigned)f->uid, f->held.n[LEDGER_HELD],
				 cap->max_fds_per_uid, f->all.n[LEDGER_HELD], cap->held_max);
	return false;
}

/*
 * 7. Bytes and fds. A run's plan copies its code, stdin and input files: a
 * 256 MiB memfd that is all hole costs its sender nothing and the daemon
 * 256 MiB, so the check comes before the copy, by size (issue 13, finding
 * 2). Each memfd a client keeps costs the frontend an fd (its probe): as
 * many as max_fds_per_uid per uid, held_max in all.
 */
static bool
admit_bytes(const struct admit_facts *f, struct admit_decision *ret)
{
	const struct ledger_caps *cap = f->caps;
	uint64_t max, held, want = f->want_bytes;

	if (cap == NULL)
		return false;
	if (f->kind == ADMIT_FILE_OP)
		return admit_bytes_file(f, ret);
	if (f->phase == ADMIT_AT_START)
		return false;
	max = cap->max_bytes_per_uid;
	held = f->held.bytes;
	if (want > max)
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_TOO_LARGE,
				 "the run's code, stdin and files take %" PRIu64
				 " bytes; max_bytes_per_uid is %" PRIu64,
				 want, max);
	if (want > max - (held < max ? held : max))
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "uid %u: the daemon holds %" PRIu64
				 " bytes for it (queued runs, unread replies, results' memfds "
				 "still open); this run needs %" PRIu64
				 " more; max_bytes_per_uid is %" PRIu64,
				 (unsigned)f->uid, held, want, max);
	if (!admit_held_room(f))
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "uid %u: its clients keep %" PRIu32
				 " memfds of results open (max_fds_per_uid %" PRIu32 "), %" PRIu32
				 " in all (at most %" PRIu32 "); close results no longer needed",
				 (unsigned)f->uid, f->held.n[LEDGER_HELD], cap->max_fds_per_uid,
				 f->all.n[LEDGER_HELD], cap->held_max);
	return false;
}

/*
 * A run slot: max_runs in all, max_runs_per_uid for a uid but root. A
 * queued run is not running: counting queued runs stalled the queue for
 * good (issue 13, finding 5).
 */
static bool
admit_run_slot_free(const struct admit_facts *f)
{
	const struct ledger_caps *cap = f->caps;

	if (f->all.n[LEDGER_RUNNING] >= cap->max_runs)
		return false;
	return f->uid == 0 || f->held.n[LEDGER_RUNNING] < cap->max_runs_per_uid;
}

/*
 * 8. The start. At the request a run (and a cell) is queued; at its
 * dequeue it starts when a run slot is free (an interpreter started for
 * its cell takes none: its cell holds one), its session runs nothing and
 * the pool does not hold every sandbox uid. A session's open takes a
 * sandbox uid for its keeper at once, or is refused.
 */
static bool
admit_start(const struct admit_facts *f, struct admit_decision *ret)
{
	const struct ledger_caps *cap = f->caps;

	/*
	 * A zygote holds one of its caller's run slots for its life
	 * (docs/design-bursts.md §3.6), so that one caller's zygotes and
	 * runs together stay within max_runs_per_uid and max_runs: asked for
	 * by a run, it needs room for itself and that run, or the caller's
	 * own zygote would keep its runs waiting until its idle end. Never
	 * queued: refused, the run goes the ordinary way.
	 */
	if (f->kind == ADMIT_ZYGOTE) {
		if (cap != NULL && f->all.n[LEDGER_RUNNING] + 2 <= cap->max_runs &&
		    (f->uid == 0 || f->held.n[LEDGER_RUNNING] + 2 <= cap->max_runs_per_uid))
			return false;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY,
				 "no run slot free for a zygote");
	}
	if (f->kind == ADMIT_SESSION_OPEN) {
		if (f->slot_free)
			return false;
		return admit_set(ret, ADMIT_REFUSE, PROTO_ERR_BUSY, "no free sandbox uid");
	}
	if (f->phase == ADMIT_AT_REQUEST)
		return admit_set(ret, ADMIT_QUEUE, PROTO_ERR_NONE, "queued");
	/* An interpreter's run waits for its session too, as its runs do. */
	if (admit_is(f, KIND(ADMIT_SESSION_RUN) | KIND(ADMIT_INTERP_START)) &&
	    (!f->session_ready || f->session_busy))
		return admit_set(ret, ADMIT_QUEUE, PROTO_ERR_NONE, "its session is busy");
	if (f->kind == ADMIT_INTERP_START)
		return false;
	if (f->caps == NULL || !admit_run_slot_free(f)) {
		/* A zygote no run uses holds a slot this run could have: under
		 * max_runs any caller's, under max_runs_per_uid its own; the
		 * frontend stops one (zygotes_give_way) rather than have the
		 * run wait for the zygote's idle end (zygote_idle_s). */
		ret->want_zygote_slot =
			f->caps != NULL &&
			(f->all.n[LEDGER_RUNNING] >= f->caps->max_runs ? f->zygotes_idle_all > 0
								       : f->zygotes_idle_uid > 0);
		return admit_set(ret, ADMIT_QUEUE, PROTO_ERR_NONE, "no run slot free");
	}
	if (f->kind == ADMIT_RUN && f->pool_blocks) {
		/* run_dispatch has the pool give one up. */
		ret->want_slot = true;
		return admit_set(ret, ADMIT_QUEUE, PROTO_ERR_NONE,
				 "every sandbox uid is held by the pool");
	}
	return false;
}

/* One row of §3's table: the rule, the kinds it applies to, its check. */
struct admit_row {
	enum admit_rule rule;
	unsigned kinds;
	bool (*check)(const struct admit_facts *f, struct admit_decision *ret);
};

/*
 * The order is the table's: the first row that decides, decides. A kind
 * skips the rows that do not apply to it; within a row the check looks at
 * the phase (most rows apply at the request only).
 */
static const struct admit_row admit_rows[] = {
	{ADMIT_RULE_STOPPING,
	 RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_SESSION_OPEN) | KIND(ADMIT_ZYGOTE),
	 admit_stopping},
	{ADMIT_RULE_ACCESS, ~(KIND(ADMIT_EGRESS_CONN) | KIND(ADMIT_ZYGOTE)), admit_access},
	{ADMIT_RULE_OBJECT,
	 SESSION_KINDS | KIND(ADMIT_RUN) | KIND(ADMIT_SESSION_OPEN) | KIND(ADMIT_TOOL_CALL),
	 admit_object},
	{ADMIT_RULE_PROFILE, RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_SESSION_OPEN),
	 admit_profile},
	{ADMIT_RULE_LIMITS, RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_SESSION_OPEN), admit_limits},
	{ADMIT_RULE_COUNTS,
	 RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_CONNECTION) | KIND(ADMIT_SESSION_OPEN) |
		 KIND(ADMIT_TOOL_CALL) | KIND(ADMIT_EGRESS_CONN),
	 admit_counts},
	{ADMIT_RULE_BYTES, RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_FILE_OP), admit_bytes},
	{ADMIT_RULE_START,
	 RUN_KINDS | KIND(ADMIT_CELL) | KIND(ADMIT_SESSION_OPEN) | KIND(ADMIT_ZYGOTE), admit_start},
};

void
admit_decide(const struct admit_facts *f, struct admit_decision *ret)
{
	size_t i;

	memset(ret, 0, sizeof(*ret));
	ret->tool = PROTO_TOOL_OK;
	if (f->asked != NULL)
		ret->limits = *f->asked;
	for (i = 0; i < sizeof(admit_rows) / sizeof(admit_rows[0]); i++) {
		const struct admit_row *row = &admit_rows[i];

		if ((row->kinds & KIND(f->kind)) == 0)
			continue;
		if (row->check(f, ret)) {
			ret->rule = row->rule;
			return;
		}
	}
	ret->verdict = ADMIT_NOW;
	ret->code = PROTO_ERR_NONE;
	ret->why[0] = '\0';
}
