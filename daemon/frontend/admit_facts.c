/*
 * admit_facts.c: the facts of an admission, gathered from the daemon as it
 * is now (docs/design-reshape.md §3.1): access by the config in force, the
 * session and profile named, the limits asked, the uid's counts and bytes.
 * Nothing is decided here (admit.c decides) and nothing is charged.
 */
#include <errno.h>
#include <string.h>

#include "admit_facts.h"
#include "budget.h"
#include "cells.h"
#include "config.h"
#include "frontend.h"
#include "run.h"
#include "run_owner.h"
#include "run_tools.h"
#include "runqueue.h"
#include "uidpool.h"

void
admit_caps(const struct daemon *d, struct ledger_caps *ret)
{
	const struct config *cfg = d->cfg;

	*ret = (struct ledger_caps){
		.max_connections_per_uid = cfg->max_connections_per_uid,
		.sessions_per_uid = cfg->sessions_per_uid,
		.max_interpreters = cfg->max_interpreters,
		.max_interpreters_per_uid = cfg->max_interpreters_per_uid,
		.max_queued = cfg->max_queued,
		.max_queued_per_uid = cfg->max_queued_per_uid,
		.max_runs = cfg->max_runs,
		.max_runs_per_uid = cfg->max_runs_per_uid,
		.max_bytes_per_uid = cfg->max_bytes_per_uid,
		.max_fds_per_uid = cfg->max_fds_per_uid,
		.held_max = d->budget.held_max,
		.file_max_bytes = cfg->session_file_max,
		.session_idle_ms = cfg->session_idle_ms,
		.session_idle_ms_max = cfg->session_idle_ms_max,
		.session_lifetime_ms = cfg->session_lifetime_ms,
		.session_lifetime_ms_max = cfg->session_lifetime_ms_max,
		.cells_queue_max = CELLS_QUEUE_MAX,
		.tool_calls_max = RUN_TOOLS_CALLS_MAX,
	};
}

void
admit_gather_init(const struct daemon *d, enum admit_kind kind, enum admit_phase phase, uid_t uid,
		  struct admit_gather *g)
{
	memset(g, 0, sizeof(*g));
	g->mount_bad = -1;
	admit_caps(d, &g->caps);
	g->f.caps = &g->caps;
	g->f.kind = kind;
	g->f.phase = phase;
	g->f.uid = uid;
	g->f.stopping = d->stopping;
}

/* What every kind of a client's request gathers: who asks, its access. */
static void
admit_gather_common(struct daemon *d, struct client *c, enum admit_kind kind,
		    struct admit_gather *g)
{
	admit_gather_init(d, kind, ADMIT_AT_REQUEST, client_uid(c), g);
	/* Access is asked of the config in force now: a reload may have
	 * narrowed it since the connect. */
	g->f.peer_allowed = client_allowed(c);
}

void
admit_gather_hello(struct daemon *d, struct client *c, struct admit_gather *g)
{
	admit_gather_common(d, c, ADMIT_CONNECTION, g);
	g->f.phase = ADMIT_AT_START;
	/* Checked again at the hello: a reload between the connect and the
	 * hello may have removed the user. */
	g->f.peer_allowed = client_allowed_at_connect(c) && client_allowed(c);
	g->f.over_limit = client_over_limit(c);
}

/* The uid's bytes and memfds held, and all uids' memfds (the budget's),
 * after what its clients let go of since the last look is given back. */
static void
admit_gather_budget(struct daemon *d, struct admit_gather *g)
{
	uid_t uid = g->f.uid;

	(void)budget_sweep(&d->budget, uid, false);
	g->f.held.bytes = budget_bytes(&d->budget, uid);
	g->f.held.n[LEDGER_HELD] = budget_held(&d->budget, uid);
	g->f.all.n[LEDGER_HELD] = d->budget.nheld;
}

/* The profile asked (NULL: the default) and whether c may use it. */
static void
admit_gather_profile(struct daemon *d, struct client *c, const char *name, struct admit_gather *g)
{
	const struct config_profile *prof;

	prof = name != NULL ? config_profile_find(d->cfg, name) : config_profile_default(d->cfg);
	g->prof = prof;
	g->f.profile_found = prof != NULL;
	if (prof == NULL)
		return;
	g->f.profile_name = prof->name;
	g->f.profile_allowed = client_may_use_profile(c, prof);
	g->f.defaults = &prof->defaults;
	g->f.ceilings = &prof->ceilings;
	/* The runtime asked (set before: a run's, a cell's, a session's
	 * interpreter; none for a plain session's open) against its list. */
	g->f.runtime_allowed =
		g->f.runtime == NULL || config_profile_runtime_allowed(prof, g->f.runtime);
	config_profile_runtimes_text(prof, g->runtimes, sizeof(g->runtimes));
	g->f.profile_runtimes = g->runtimes;
}

/*
 * A run's mounts: resolved against its profile (missing, refused), then
 * each source checked on the host now: renamed, unmounted or refused since
 * the config was read, this run alone fails (issue 28). The spawner checks
 * again as root; this check is for the message, not for safety.
 */
static void
admit_gather_mounts(struct daemon *d, const struct proto_run *req, struct admit_gather *g)
{
	size_t bad = 0, i;
	int rc;

	if (g->prof == NULL || !g->f.profile_allowed)
		return;
	rc = config_mounts_resolve(d->cfg, g->prof, config_runtime_find(d->cfg, req->runtime),
				   req->mounts, req->nmounts, &g->mounts, &bad);
	if (rc < 0) {
		g->f.mount = rc == -ENOENT ? ADMIT_MOUNT_MISSING : ADMIT_MOUNT_REFUSED;
		g->f.mount_name = req->mounts[bad];
		return;
	}
	for (i = 0; i < d->cfg->nmounts && i < ROOTSPEC_MOUNTS_MAX; i++) {
		const struct config_mount *m = &d->cfg->mounts[i];

		if (!(g->mounts & (1U << i)) ||
		    rootspec_source_check(m->source, g->mount_why, sizeof(g->mount_why)) == 0)
			continue;
		g->f.mount = ADMIT_MOUNT_UNAVAILABLE;
		g->f.mount_name = m->name;
		g->f.mount_target = m->target;
		g->mount_bad = (int)i;
		return;
	}
}

/* A session run's, a cell's or an interpreter's session, and its facts. */
static void
admit_gather_session(struct daemon *d, const struct proto_run *req, struct admit_gather *g)
{
	const struct run_session_ops *so = d->session_ops;
	const struct cells *cs;

	g->f.session_named = req->session != NULL;
	if (req->session == NULL)
		return;
	g->s = so->find(d, g->f.uid, req->session);
	g->f.session_found = g->s != NULL;
	if (g->s == NULL)
		return;
	g->f.session_ready = so->can_queue(g->s);
	g->f.session_profile = so->profile(g->s);
	g->f.session_defaults = so->defaults(g->s);
	cs = so->cells(g->s);
	g->f.session_interp = cs != NULL;
	if (cs != NULL) {
		g->f.session_runtime = d->cells_ops->runtime(cs);
		g->f.cells_queued = d->cells_ops->nqueued(cs);
	}
}

/* What a run's plan copies: its code and stdin, a one-shot run's files and
 * bundle (a session run's files go to its workspace), and a message. */
static uint64_t
admit_run_bytes(const struct proto_run *req)
{
	uint64_t want = PROTO_MSG_MAX;
	size_t i;

	want += req->code.present ? req->code.len : 0;
	want += req->stdin_data.present ? req->stdin_data.len : 0;
	if (req->session == NULL) {
		for (i = 0; i < req->nfiles; i++)
			want += req->files[i].data.len;
		/* The plan holds the bundle's files, about the bundle's size. */
		want += req->file_bundle.present ? req->file_bundle.len : 0;
	}
	return want;
}

void
admit_gather_run(struct daemon *d, struct client *c, const struct proto_run *req,
		 const struct cells *cs, struct admit_gather *g)
{
	enum admit_kind kind = cs != NULL     ? ADMIT_INTERP_START
			       : req->cell    ? ADMIT_CELL
			       : req->session ? ADMIT_SESSION_RUN
					      : ADMIT_RUN;

	admit_gather_common(d, c, kind, g);
	admit_gather_session(d, req, g);
	g->f.runtime = req->runtime;
	g->f.figures_svg = req->figures_svg;
	g->f.ipython = req->ipython;
	{
		const struct config_runtime *rt = config_runtime_find(d->cfg, req->runtime);

		g->f.runtime_figures = rt != NULL && run_plan_boots(rt);
	}
	g->f.cell_code_only = req->argc == 0 && req->nenv == 0 && !req->stdin_data.present &&
			      req->nfiles == 0 && !req->file_bundle.present && req->ntools == 0 &&
			      req->nmounts == 0; /* stream: a cell's too (design-jupyter.md §6.3) */
	/* A session's runs look up the profile it was opened with. */
	g->f.profile = req->profile;
	admit_gather_profile(d, c,
			     g->f.session_profile != NULL ? g->f.session_profile : req->profile, g);
	/* An interpreter's run mounts what its profile and runtime bring. */
	if (kind != ADMIT_CELL)
		admit_gather_mounts(d, req, g);
	g->f.asked = &req->limits;
	g->f.held.n[LEDGER_QUEUED] = runqueue_count_uid(&d->queue, g->f.uid);
	g->f.all.n[LEDGER_QUEUED] = d->queue.n;
	g->f.all.n[LEDGER_RUNNING] = d->nrunning;
	g->f.want_bytes = admit_run_bytes(req);
	admit_gather_budget(d, g);
}

void
admit_gather_session_open(struct daemon *d, struct client *c, const struct proto_session_open *o,
			  struct admit_gather *g)
{
	admit_gather_common(d, c, ADMIT_SESSION_OPEN, g);
	g->f.runtime = o->interpreter;
	g->f.profile = o->profile;
	g->f.background = o->background;
	admit_gather_profile(d, c, o->profile, g);
	g->f.profile_background = g->prof != NULL && g->prof->background_processes;
	g->f.asked = &o->limits;
	g->f.workspace_bytes = o->workspace_bytes;
	g->f.idle_ms = o->idle_timeout_ms;
	g->f.lifetime_ms = o->lifetime_ms;
	g->f.slot_free = uidpool_in_use(&d->uids) < d->uids.nslots;
}

void
admit_gather_file_op(struct daemon *d, struct client *c, enum proto_type type,
		     const struct proto_file_op *op, bool found, bool ready, struct admit_gather *g)
{
	admit_gather_common(d, c, ADMIT_FILE_OP, g);
	g->f.session_named = true;
	g->f.session_found = found;
	g->f.session_ready = ready;
	g->f.file_write = type == PROTO_FILE_WRITE;
	g->f.want_bytes = op->data.len;
	g->f.what = op->path[0] != '\0' ? op->path : ".";
}

void
admit_gather_file_copy(struct daemon *d, uid_t uid, const char *what, uint64_t want,
		       struct admit_gather *g)
{
	admit_gather_init(d, ADMIT_FILE_OP, ADMIT_AT_START, uid, g);
	g->f.peer_allowed = true; /* asked at the request (rule 2) */
	g->f.session_named = g->f.session_found = g->f.session_ready = true;
	g->f.want_bytes = want;
	g->f.what = what;
	admit_gather_budget(d, g);
}

void
admit_gather_tool_call(struct daemon *d, uid_t uid, struct client *c, bool closed, uint32_t calls,
		       struct admit_gather *g)
{
	admit_gather_init(d, ADMIT_TOOL_CALL, ADMIT_AT_REQUEST, uid, g);
	/*
	 * A call comes from the sandbox, not the client: the dispatch's
	 * access check never sees it. [access] of the config in force is
	 * asked again for each call, so a user a reload removed is not
	 * served tools (nor sent its code's arguments) after the reload. A
	 * client that left is rule 3's (abandoned), not a revocation.
	 */
	g->f.peer_allowed = c == NULL || client_allowed(c);
	g->f.run.client_gone = c == NULL || closed;
	g->f.run.calls = calls;
}
