/*
 * run_admit.c: a run's request checked before anything is made for it:
 * the daemon not stopping, the caller's access, its session, its profile
 * and limits, its mounts, its bytes (run_admit); the plan's flags from the
 * profile's switches; the blocked_imports advisory. These checks go to
 * frontend/admit.c when admission is one module (docs/design-reshape.md §3).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisory.h"
#include "budget.h"
#include "config.h"
#include "frontend.h"
#include "log.h"
#include "plan.h"
#include "rootspec.h"
#include "run.h"
#include "run_owner.h"
#include "xalloc.h"

/*
 * Would this run's plan take the uid past its byte budget? The plan copies
 * the code, stdin and input files: a 256 MiB memfd that is all hole costs
 * its sender nothing and the daemon 256 MiB (twice while it is built), so
 * the check comes first, by size (issue 13, finding 2). If so, answer.
 */
static bool
run_over_budget(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req)
{
	uint64_t max = d->cfg->max_bytes_per_uid, want = PROTO_MSG_MAX, held;
	size_t i;

	want += req->code.present ? req->code.len : 0;
	want += req->stdin_data.present ? req->stdin_data.len : 0;
	if (req->session == NULL) {
		for (i = 0; i < req->nfiles; i++)
			want += req->files[i].data.len;
		/* The plan holds the bundle's files, about the bundle's size. */
		want += req->file_bundle.present ? req->file_bundle.len : 0;
	}
	if (want > max) {
		client_send_error(c, req_id, PROTO_ERR_TOO_LARGE,
				  "the run's code, stdin and files take %" PRIu64
				  " bytes; max_bytes_per_uid is %" PRIu64,
				  want, max);
		return true;
	}
	/* What its clients let go of since the last look is given back first. */
	(void)budget_sweep(&d->budget, client_uid(c), false);
	held = budget_bytes(&d->budget, client_uid(c));
	if (want > max - (held < max ? held : max)) {
		client_send_error(
			c, req_id, PROTO_ERR_BUSY,
			"uid %u: the daemon holds %" PRIu64 " bytes for it (queued runs, "
			"unread replies, results' memfds still open); this run needs %" PRIu64
			" more; max_bytes_per_uid is %" PRIu64,
			(unsigned)client_uid(c), held, want, max);
		return true;
	}
	/*
	 * Each memfd a client keeps costs the frontend an fd (its probe):
	 * as many as max_fds_per_uid per uid, held_max in all. Refused here
	 * before the run's work; a result that would pass them when it is
	 * sent is answered busy then (client.c, docs/security.md).
	 */
	if (budget_held_room(&d->budget, client_uid(c), d->cfg->max_fds_per_uid) == 0) {
		client_send_error(c, req_id, PROTO_ERR_BUSY,
				  "uid %u: its clients keep %" PRIu32
				  " memfds of results open (max_fds_per_uid %" PRIu32 "), %" PRIu32
				  " in all (at most %" PRIu32 "); close results no longer needed",
				  (unsigned)client_uid(c), budget_held(&d->budget, client_uid(c)),
				  d->cfg->max_fds_per_uid, d->budget.nheld, d->budget.held_max);
		return true;
	}
	return false;
}

/*
 * The profile's blocked_imports check on the code of a Python runtime (its
 * argv[0] is python*): the findings for result.advisories, NULL for none.
 * Advisory only: the run goes ahead whatever it finds; the check reads the
 * text and any run-time name gets past it (docs/security.md,
 * "blocked_imports"). Bounded: at most ADVISORY_SCAN_MAX bytes are read.
 */
struct advisory_list *
run_advise(const struct config *cfg, const struct proto_run *req, const struct config_profile *prof)
{
	const struct config_runtime *rt = config_runtime_find(cfg, req->runtime);
	const char *names[PROTO_BLOCKED_IMPORTS_MAX];
	struct advisory_list *adv;
	size_t i;

	if (prof->nblocked_imports == 0 || rt == NULL || rt->is_exec || rt->argc == 0 ||
	    !advisory_is_python(rt->argv[0]) || !req->code.present)
		return NULL;
	for (i = 0; i < prof->nblocked_imports; i++)
		names[i] = prof->blocked_imports[i];
	adv = xmalloc(sizeof(*adv));
	advisory_scan(names, prof->nblocked_imports, req->code.data, req->code.len, adv);
	if (adv->n == 0) {
		free(adv);
		return NULL;
	}
	return adv;
}

/*
 * A run request, checked and queued; cs: it is an interpreter session's
 * interpreter (run_start_interp). A cell goes to its session's cells
 * instead (cells.h). Returns the run, or NULL when it was answered (or went
 * to the cells).
 */
/*
 * Is a [mount] of mounts (bit i: mount i) unavailable now, its source gone
 * (renamed, unmounted) or refused since the config was read? Then the
 * request is refused naming the mount and its target, and the daemon's log
 * (rate-limited) has its source and why: this run alone fails, and a run
 * that names none of them is not held up (issue 28). The client is not
 * told the source: a host path is the administrator's (info hides it too).
 * The spawner checks again as root, and the supervisor opens it with no
 * link followed; this check is for the message, not for safety.
 */
static bool
run_mounts_unavailable(struct daemon *d, struct client *c, uint32_t req_id, uint32_t mounts)
{
	char why[ROOTSPEC_WHY_MAX];
	size_t i;

	for (i = 0; i < d->cfg->nmounts && i < ROOTSPEC_MOUNTS_MAX; i++) {
		const struct config_mount *m = &d->cfg->mounts[i];

		if (!(mounts & (1U << i)) ||
		    rootspec_source_check(m->source, why, sizeof(why)) == 0)
			continue;
		log_repeat_warnx(&d->mount_warn, "uid %u: mount %s (source %s): unavailable: %s",
				 (unsigned)client_uid(c), m->name, m->source, why);
		/* The sandboxes prepared while it was there hold the tree
		 * that went: discarded, not given to a run once it is back. */
		run_pool_mounts_changed(d, 1U << i, 1U << i);
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND,
				  "mount '%s' (at %s) is unavailable: its source is missing on "
				  "the host",
				  m->name, m->target);
		return true;
	}
	return false;
}

/* A session run's facts: its session (ready), its profile, its kind, and its
 * limits with the session's defaults. 0, or -1 once answered. */
static int
run_admit_session(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
		  struct cells *cs, const char **profile, struct run_ask *a)
{
	const struct run_session_ops *so = d->session_ops;
	struct session *s;
	size_t k;

	s = so->find(d, client_uid(c), req->session);
	if (s == NULL || !so->can_queue(s)) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "no such session");
		return -1;
	}
	/* A session's runs use the profile it was opened with. */
	*profile = so->profile(s);
	if (req->profile != NULL && strcmp(req->profile, *profile) != 0) {
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST,
				  "profile '%s': the session's runs use its profile '%s'",
				  req->profile, *profile);
		return -1;
	}
	/* An interpreter session takes cells (and file operations)
	 * only: its interpreter is the one sandbox in its uid slot. */
	if ((so->cells(s) != NULL) != (req->cell || cs != NULL)) {
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST,
				  so->cells(s) != NULL
					  ? "an interpreter session runs cells only"
					  : "a cell needs a session opened with an interpreter");
		return -1;
	}
	/* The session's own defaults come before the profile's. */
	a->asked = req->limits;
	for (k = 0; k < PROTO_LIMIT_COUNT_; k++)
		if (a->asked.v[k] == 0)
			a->asked.v[k] = so->defaults(s)->v[k];
	a->s = s;
	return 0;
}

/* The mounts a request names, resolved against its profile. 0, or -1 once
 * answered. */
static int
run_admit_mounts(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
		 struct run_ask *a)
{
	size_t bad;
	int rc;

	rc = config_mounts_resolve(d->cfg, a->prof, config_runtime_find(d->cfg, req->runtime),
				   req->mounts, req->nmounts, &a->mounts, &bad);
	if (rc == -ENOENT) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "mount '%s' does not exist",
				  req->mounts[bad]);
		return -1;
	}
	if (rc < 0) {
		client_send_error(c, req_id, PROTO_ERR_UNAUTHORIZED,
				  "mount '%s' is not available to uid %u under profile '%s' (not "
				  "in its allow_mounts)",
				  req->mounts[bad], (unsigned)client_uid(c), a->prof->name);
		return -1;
	}
	if (!req->cell && run_mounts_unavailable(d, c, req_id, a->mounts))
		return -1;
	return 0;
}

/* Gather a request's facts and decide: 0 to go on (a filled), or -1 once
 * answered (refused). cs: the interpreter's cells for its own run. */
int
run_admit(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
	  struct cells *cs, struct run_ask *a)
{
	const char *profile = req->profile;

	if (d->stopping) {
		client_send_error(c, req_id, PROTO_ERR_BUSY, "the daemon is stopping");
		return -1;
	}
	/* Access is checked again for every run: a reload may have narrowed it. */
	if (!client_allowed(c)) {
		client_send_error(c, req_id, PROTO_ERR_UNAUTHORIZED,
				  "uid %u is no longer allowed to use this daemon",
				  (unsigned)client_uid(c));
		return -1;
	}
	a->asked = req->limits;
	if (req->session != NULL && run_admit_session(d, c, req_id, req, cs, &profile, a) < 0)
		return -1;
	if (req->cell && a->s == NULL) {
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST,
				  "a cell needs a session opened with an interpreter");
		return -1;
	}
	if (client_resolve_limits(c, req_id, profile, &a->asked, &a->lim, &a->prof) < 0)
		return -1;
	/* The interpreter lives for the session: the wall and cpu limits
	 * are each cell's, counted by its supervisor; RLIMIT_CPU (at the
	 * ceiling) bounds the interpreter's whole life. */
	if (cs != NULL) {
		a->lim.v[PROTO_LIMIT_WALL_MS] = a->prof->ceilings.v[PROTO_LIMIT_WALL_MS];
		a->lim.v[PROTO_LIMIT_CPU_MS] = a->prof->ceilings.v[PROTO_LIMIT_CPU_MS];
	}
	if (run_admit_mounts(d, c, req_id, req, a) < 0)
		return -1;
	if (run_over_budget(d, c, req_id, req))
		return -1;
	return 0;
}

/* The plan's flags: the session's, and the profile's switches, which
 * travel in the plan, enforced by the kernel in the sandbox
 * (docs/security.md, "Profiles"). */
void
run_ask_flags(struct run_ask *a, const struct cells *cs)
{
	a->flags = a->s != NULL ? PLAN_F_SESSION : 0;
	if (cs != NULL)
		a->flags |= PLAN_F_CELLS;
	if (a->prof->no_file_write)
		a->flags |= PLAN_F_READONLY;
	/* subprocess = false: one process. The processes limit (pids.max, or
	 * RLIMIT_NPROC on the run's own uid) is a second wall behind the
	 * seccomp filter that refuses every fork, clone and exec. */
	if (a->prof->no_subprocess) {
		a->flags |= PLAN_F_NOPROC;
		a->lim.v[PROTO_LIMIT_PROCESSES] = 1;
	}
}
