/*
 * run_admit.c: a run's request admitted before anything is made for it
 * (run_admit: its facts gathered by admit_facts.c, decided by admit.c,
 * docs/design-reshape.md §3); the plan's flags from the profile's
 * switches; the blocked_imports advisory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit_facts.h"
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
 * The profile's blocked_imports check on the code of a Python runtime (its
 * language, config.h): the findings for result.advisories, NULL for none.
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
	    rt->language != RULES_LANG_PYTHON || !req->code.present)
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
 * A mount of the run is unavailable now, its source gone (renamed,
 * unmounted) or refused since the config was read: the request is refused
 * naming the mount and its target (admit.c), and the daemon's log
 * (rate-limited) has its source and why: this run alone fails, and a run
 * that names none of them is not held up (issue 28).
 */
static void
run_mount_gone(struct daemon *d, const struct admit_gather *g)
{
	const struct config_mount *m = &d->cfg->mounts[g->mount_bad];

	log_repeat_warnx(&d->mount_warn, "uid %u: mount %s (source %s): unavailable: %s",
			 (unsigned)g->f.uid, m->name, m->source, g->mount_why);
	/* The sandboxes prepared while it was there hold the tree that
	 * went: discarded, not given to a run once it is back. */
	run_pool_mounts_changed(d, 1U << g->mount_bad, 1U << g->mount_bad);
}

/* Gather a request's facts and decide: 0 to go on (a filled), or -1 once
 * answered (refused). cs: the interpreter's cells for its own run. */
int
run_admit(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
	  struct cells *cs, struct run_ask *a)
{
	struct admit_gather g;
	struct admit_decision dec;

	admit_gather_run(d, c, req, cs, &g);
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		if (dec.rule == ADMIT_RULE_PROFILE && g.mount_bad >= 0)
			run_mount_gone(d, &g);
		client_send_error(c, req_id, dec.code, "%s", dec.why);
		return -1;
	}
	/* Queued (rule 8): the run is made, and the queue starts it. */
	a->s = g.s;
	a->prof = g.prof;
	a->lim = dec.limits;
	a->mounts = g.mounts;
	return 0;
}

/* The plan's flags: the session's, and the profile's switches, which
 * travel in the plan, enforced by the kernel in the sandbox
 * (docs/security.md, "Profiles"). */
void
run_ask_flags(struct run_ask *a, const struct cells *cs, bool background)
{
	a->flags = a->s != NULL ? PLAN_F_SESSION : 0;
	if (cs != NULL)
		a->flags |= PLAN_F_CELLS;
	/* Asked at the open and allowed by the profile in force now: a
	 * reload that takes background_processes away restarts the
	 * interpreter (config_sandbox_changed), and the new one has none. */
	if (cs != NULL && background && a->prof->background_processes)
		a->flags |= PLAN_F_BACKGROUND;
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
