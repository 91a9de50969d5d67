/*
 * run_pool.c: sandboxes prepared ahead of their runs (prepared_sandboxes),
 * each under its own spawn key (spawnref.h): asked for (PREP_ASKED), ready
 * once its STARTED came (PREP_READY), or dead (failed; gone at its reap).
 * A run takes a live one with its key and slot; one gone before any run
 * took it gives its slot back.
 *
 * A runtime with prestart = yes also has prestarted_interpreters sandboxes
 * of its own, each holding its interpreter started ahead, blocked on its
 * code (docs/design-interpreters.md §1): made with the runtime's pre-start
 * plan and the output pipes of the run that will take it; taken only by an
 * eligible run of that runtime (run_pool_eligible); one whose interpreter
 * died before its run is reaped and replaced like any that died.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "compiler.h"
#include "limit.h"
#include "log.h"
#include "run.h"
#include "xalloc.h"
#include "fdio.h"

static void run_pool_back_off(struct daemon *d);
static void run_pool_forget(struct daemon *d, struct prep *p);

/* Start a request of type for the sandbox in slot, events keyed by run_id; the rest 0. */
static void
run_pool_req(struct spawn_req *req, uint32_t type, uint32_t run_id, uint32_t slot)
{
	memset(req, 0, sizeof(*req));
	req->type = type;
	req->run_id = run_id;
	req->uid_slot = slot;
}

/*
 * Send req with its fds. Returns 0 or -errno, the failure logged
 * (rate-limited). A failed pass is one failed request, never a stopped
 * service (docs/security.md, "Failure follows trust"): passing fds fails
 * for reasons of the service user's (EMFILE, ETOOMANYREFS: its fds in
 * flight over its RLIMIT_NOFILE, which other processes of that user
 * share), and a dead spawner is seen by its socket's EOF, not here.
 */
static int
run_pool_send(struct daemon *d, const struct spawn_req *req, int *fds, size_t nfds)
{
	int rc = frontend_spawn_fds(d, req, fds, nfds);

	if (rc < 0)
		log_repeat_warnx(&d->pool_warn,
				 "pool: cannot hand request %" PRIu32 " to the spawner: %s",
				 req->type, strerror(-rc));
	return rc;
}

/* Have the spawner end the sandbox prepared under key in slot. Returns 0 or -errno. */
static int
run_pool_send_discard(struct daemon *d, uint32_t run_id, uint32_t slot, uint32_t key)
{
	struct spawn_req req;

	run_pool_req(&req, SPAWN_DISCARD, run_id, slot);
	req.prep_key = key;
	return run_pool_send(d, &req, NULL, 0);
}

/* The sandbox prepared for r will get no run: have the spawner end it. */
void
run_pool_discard(struct run *r)
{
	/* Not sent: that sandbox waits at the spawner, its slot held, until
	 * the daemon stops; the run was answered already. */
	(void)run_pool_send_discard(r->d, r->run_id, r->slot, r->prep_key);
}

/* End p, still in the pool: discard it at the spawner (its reap removes
 * it); one whose discard could not be sent is tried again at the next
 * back-off (run_pool_retry_cb). */
static void
run_pool_end(struct daemon *d, struct prep *p)
{
	p->state = PREP_DEAD;
	p->discarded = true;
	p->discard_unsent = run_pool_send_discard(d, p->key, p->slot, p->key) < 0;
	if (p->discard_unsent)
		run_pool_back_off(d);
}

/* Close a prep's output pipes (read ends), if it has them. */
static void
run_pool_close_out(struct prep *p)
{
	int k;

	for (k = 0; k < 2; k++)
		if (p->out_fd[k] >= 0) {
			close(p->out_fd[k]);
			p->out_fd[k] = -1;
		}
}

/*
 * Ask the spawner to prepare p with its runtime's interpreter started
 * ahead: fds {root spec, pre-start plan, stdout, stderr}, the pipes' read
 * ends kept in p for the run that takes it. Returns 0, or -errno with
 * nothing sent (the caller prepares a plain one instead).
 */
static int
run_pool_prepare_prestart(struct daemon *d, struct prep *p)
{
	struct spawn_req req;
	int outp[2][2] = {{-1, -1}, {-1, -1}}, fds[SPAWN_PREPARE_NFDS_PRESTART], k, rc;

	if (d->prestart_plan[p->rt] < 0 &&
	    (rc = run_prestart_plan(d, &d->cfg->runtimes[p->rt], &d->prestart_plan[p->rt])) < 0)
		return rc;
	if ((rc = run_io_pipe(outp[0])) < 0 || (rc = run_io_pipe(outp[1])) < 0)
		goto out;
	run_pool_req(&req, SPAWN_PREPARE, p->key, p->slot);
	req.flags = SPAWN_F_PRESTART;
	req.memory_bytes = d->cfg->defaults.v[PROTO_LIMIT_MEMORY_BYTES];
	fds[0] = d->rootspec_fd;
	fds[1] = d->prestart_plan[p->rt];
	fds[2] = outp[0][1];
	fds[3] = outp[1][1];
	rc = run_pool_send(d, &req, fds, SPAWN_PREPARE_NFDS_PRESTART);
	if (rc < 0)
		goto out;
	for (k = 0; k < 2; k++) {
		p->out_fd[k] = outp[k][0];
		outp[k][0] = -1;
	}
out:
	for (k = 0; k < 2; k++) {
		fd_close_pair(outp[k]);
	}
	return rc;
}

/* Ask the spawner to prepare a sandbox in a uid slot, events keyed by key. */
int
run_pool_prepare(struct daemon *d, uint32_t key, uint32_t slot)
{
	struct spawn_req req;

	run_pool_req(&req, SPAWN_PREPARE, key, slot);
	req.memory_bytes = d->cfg->defaults.v[PROTO_LIMIT_MEMORY_BYTES];
	return run_pool_send(d, &req, &d->rootspec_fd, 1);
}

/* Which [mount]s' sources fail their check now (bit i: mount i). */
uint32_t
run_pool_mounts_missing(struct daemon *d)
{
	uint32_t missing = 0;
	size_t i;

	for (i = 0; i < d->cfg->nmounts && i < ROOTSPEC_MOUNTS_MAX; i++)
		if (rootspec_source_check(d->cfg->mounts[i].source, NULL, 0) < 0)
			missing |= 1U << i;
	return missing;
}

/*
 * Discard the live sandboxes whose missing bits, for the mounts in mask,
 * differ from now (bit i: mount i's source fails its check now): one
 * prepared while a source was gone lacks that tree, and one prepared
 * while it was there holds the tree that went (the new source is another
 * directory). Their reaps free their slots and the refill prepares them
 * again with the sources as they are (issue 28, point 4).
 */
void
run_pool_mounts_changed(struct daemon *d, uint32_t now, uint32_t mask)
{
	struct prep *p;

	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->state != PREP_DEAD && ((p->missing ^ now) & mask) != 0)
		run_pool_end(d, p);
}

/*
 * A source that was missing when a live sandbox was prepared may be back:
 * check those sources again (only those: each check is an lstat per path
 * component, and this runs at every dispatch and refill; with no source
 * missing it costs one walk of the pool and no system call). A source
 * that goes away is seen by the run that names it (run_mounts_unavailable).
 */
void
run_pool_recheck(struct daemon *d)
{
	uint32_t was = 0, now = 0;
	struct prep *p;
	size_t i;

	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->state != PREP_DEAD)
		was |= p->missing;
	if (was == 0)
		return;
	for (i = 0; i < d->cfg->nmounts && i < ROOTSPEC_MOUNTS_MAX; i++)
		if ((was & (1U << i)) &&
		    rootspec_source_check(d->cfg->mounts[i].source, NULL, 0) < 0)
			now |= 1U << i;
	if (now != was)
		run_pool_mounts_changed(d, now, was);
}

/* The pool's refill waits: doubled from RUN_POOL_BACKOFF_MIN_MS at each
 * failure in a row, at most RUN_POOL_BACKOFF_MAX_MS. */
static void
run_pool_back_off(struct daemon *d)
{
	struct timeval tv;

	if (d->pool_waiting)
		return;
	d->pool_backoff_ms = d->pool_backoff_ms == 0 ? RUN_POOL_BACKOFF_MIN_MS
			     : d->pool_backoff_ms >= RUN_POOL_BACKOFF_MAX_MS / 2
				     ? RUN_POOL_BACKOFF_MAX_MS
				     : d->pool_backoff_ms * 2;
	d->pool_waiting = true;
	tv.tv_sec = d->pool_backoff_ms / 1000;
	tv.tv_usec = (d->pool_backoff_ms % 1000) * 1000;
	evtimer_add(d->pool_retry_ev, &tv);
}

/* The back-off is over: discards not sent go again, then the refill. */
static void
run_pool_retry_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct daemon *d = arg;
	struct prep *p;

	d->pool_waiting = false;
	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->discard_unsent)
		run_pool_end(d, p);
	run_pool_fill(d);
}

int
run_pool_init(struct daemon *d)
{
	d->pool_warn = (struct log_repeat)LOG_REPEAT_INIT(RUN_POOL_WARN_MS);
	d->mount_warn = (struct log_repeat)LOG_REPEAT_INIT(RUN_POOL_WARN_MS);
	d->pool_retry_ev = evtimer_new(d->base, run_pool_retry_cb, d);
	return d->pool_retry_ev != NULL ? 0 : -ENOMEM;
}

/*
 * The root spec changed: the sandboxes prepared with the old one hold the
 * old [mount] trees; the spawner ends them, their reaps free their slots,
 * and the pool is refilled with the new one.
 */
void
run_pool_discard_stale(struct daemon *d)
{
	struct prep *p;

	TAILQ_FOREACH(p, &d->pool, entry)
	{
		if (p->state == PREP_DEAD || p->gen == d->rootspec.generation)
			continue;
		run_pool_end(d, p);
	}
}

/* How many sandboxes of kind rt (-1: plain) the pool holds, dead or alive. */
static uint32_t
run_pool_count(struct daemon *d, int rt)
{
	struct prep *p;
	uint32_t n = 0;

	TAILQ_FOREACH(p, &d->pool, entry)
	n += p->rt == rt;
	return n;
}

/* Add one sandbox of kind rt to the pool; false when no uid slot is free. */
static bool
run_pool_add(struct daemon *d, int rt)
{
	struct prep *p = xcalloc(1, sizeof(*p));
	int r;

	/* Its key holds its uid slot until it is forgotten. */
	r = spawnref_add_slot(&d->refs, SPAWNREF_POOL, p, &p->key, &p->slot);
	if (r == -EBUSY) {
		free(p);
		return false;
	}
	if (r < 0)
		fatalx("cannot register a spawn key: %s", strerror(-r));
	p->gen = d->rootspec.generation;
	p->pgen = d->prestart_gen;
	p->rt = rt;
	p->stat_fd[0] = p->stat_fd[1] = -1;
	p->out_fd[0] = p->out_fd[1] = -1;
	p->missing = run_pool_mounts_missing(d);
	TAILQ_INSERT_TAIL(&d->pool, p, entry);
	d->npool++;
	if (rt >= 0 && run_pool_prepare_prestart(d, p) < 0)
		p->rt = rt = -1; /* no plan, no pipes: a plain one, counted as such */
	if (rt < 0 && run_pool_prepare(d, p->key, p->slot) < 0) {
		/* The spawner never saw it: it goes at once, its slot with it,
		 * and the refill waits. */
		run_pool_forget(d, p);
		run_pool_back_off(d);
		return false;
	}
	return true;
}

/* How many sandboxes of kind rt the pool holds that a run may still take. */
static uint32_t
run_pool_count_alive(struct daemon *d, int rt)
{
	struct prep *p;
	uint32_t n = 0;

	TAILQ_FOREACH(p, &d->pool, entry)
	n += p->rt == rt && p->state != PREP_DEAD;
	return n;
}

/*
 * One sandbox for the live zygote z, prepared ahead with SPAWN_F_ZYGOTE
 * (owned by z's uid, prep_key its slot), for a run of z's caller only.
 * false when no uid slot is free or the request could not be sent.
 */
static bool
run_pool_add_zygote(struct daemon *d, const struct zygote *z)
{
	struct prep *p = xcalloc(1, sizeof(*p));
	struct spawn_req req;
	int r;

	r = spawnref_add_slot(&d->refs, SPAWNREF_POOL, p, &p->key, &p->slot);
	if (r == -EBUSY) {
		free(p);
		return false;
	}
	if (r < 0)
		fatalx("cannot register a spawn key: %s", strerror(-r));
	p->gen = d->rootspec.generation;
	p->pgen = d->prestart_gen;
	p->rt = RUN_POOL_ZYGOTE;
	p->zkey = z->key;
	p->zuid = z->uid;
	p->stat_fd[0] = p->stat_fd[1] = -1;
	p->out_fd[0] = p->out_fd[1] = -1;
	p->missing = run_pool_mounts_missing(d);
	TAILQ_INSERT_TAIL(&d->pool, p, entry);
	d->npool++;
	run_pool_req(&req, SPAWN_PREPARE, p->key, p->slot);
	req.flags = SPAWN_F_ZYGOTE;
	req.prep_key = z->slot;
	req.memory_bytes = d->cfg->defaults.v[PROTO_LIMIT_MEMORY_BYTES];
	if (run_pool_send(d, &req, &d->rootspec_fd, 1) < 0) {
		run_pool_forget(d, p);
		run_pool_back_off(d);
		return false;
	}
	return true;
}

/* Does the pool hold a live sandbox of the zygote of key? */
static bool
run_pool_has_zygote(struct daemon *d, uint32_t key)
{
	struct prep *p;

	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->rt == RUN_POOL_ZYGOTE && p->zkey == key && p->state != PREP_DEAD)
		return true;
	return false;
}

void
run_pool_zygote_gone(struct daemon *d, uint32_t key)
{
	struct prep *p;

	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->rt == RUN_POOL_ZYGOTE && p->zkey == key && p->state != PREP_DEAD)
		run_pool_end(d, p);
}

/* Is a run that took a pre-started interpreter between its start and its
 * answer? */
static bool
run_pool_prestarted_busy(struct daemon *d)
{
	struct run *r;

	TAILQ_FOREACH(r, &d->runs, entry)
	if (r->prestarted && r->state != RUN_QUEUED && r->state < RUN_EXITED)
		return true;
	return false;
}

void
run_pool_fill(struct daemon *d)
{
	struct zygote *z;
	size_t i;

	run_pool_recheck(d);
	if (d->pool_waiting)
		return;
	while (!d->stopping && run_pool_count(d, -1) < d->cfg->prepared_sandboxes)
		if (!run_pool_add(d, -1))
			return;
	for (i = 0; i < d->cfg->nruntimes; i++) {
		if (!d->cfg->runtimes[i].prestart || d->cfg->runtimes[i].is_exec)
			continue;
		/*
		 * Starting an interpreter costs its start-up's CPU (7-8 ms of
		 * python here), which a run answered on the same cores waits
		 * for (docs/performance.md, "Where the time of a pre-started
		 * run goes"): while a run that took one is between its start
		 * and its answer, and another still waits, the new one is
		 * started at that run's answer (run_transition), not beside
		 * it. The last one taken is replaced at once.
		 */
		if (run_pool_count_alive(d, (int)i) > 0 && run_pool_prestarted_busy(d))
			continue;
		while (!d->stopping && run_pool_count(d, (int)i) < d->cfg->prestarted_interpreters)
			if (!run_pool_add(d, (int)i))
				return;
	}
	/* One sandbox ahead per live zygote: a back-to-back run of its
	 * caller finds one ready. */
	TAILQ_FOREACH(z, &d->zygotes, entry)
	if (!d->stopping && z->state == ZYGOTE_LIVE && !run_pool_has_zygote(d, z->key) &&
	    !run_pool_add_zygote(d, z))
		return;
}

/* Remove p from the pool and free it; its key goes, and with it its slot. */
static void
run_pool_forget(struct daemon *d, struct prep *p)
{
	TAILQ_REMOVE(&d->pool, p, entry);
	d->npool--;
	fd_close_pair(p->stat_fd);
	run_pool_close_out(p);
	spawnref_del(&d->refs, p->key);
	free(p);
}

void
run_pool_event(struct daemon *d, struct prep *p, const struct spawn_ev *ev, int *fds, size_t *nfds)
{
	switch (ev->type) {
	case SPAWN_STARTED:
		p->started = true;
		d->pool_backoff_ms = 0; /* made: the fault, if any, is gone */
		if (*nfds == 2) {
			p->stat_fd[0] = fds[0];
			p->stat_fd[1] = fds[1];
			*nfds = 0;
		}
		if (p->state == PREP_ASKED)
			p->state = PREP_READY;
		return;
	case SPAWN_FAILED:
		if (ev->pid != 0) {
			p->state = PREP_DEAD; /* never handed out; its reap follows */
			return;
		}
		break;
	case SPAWN_DONE:
		break;
	default:
		return;
	}
	/* Gone before any run took it: its key goes, and with it its slot.
	 * One that failed before it was made (not one we ended) makes the
	 * refill wait: a fault that stays (a source gone, the spawner out of
	 * fds) must not be asked again thousands of times a second. */
	if (!p->started && !p->discarded) {
		log_repeat_warnx(&d->pool_warn, "pool: a sandbox prepared ahead failed%s%s: %s",
				 ev->step[0] != '\0' ? " at " : "", ev->step, strerror(-ev->err));
		run_pool_back_off(d);
	}
	run_pool_forget(d, p);
	/* A one-shot run may be queued for that slot. */
	run_dispatch_soon(d);
}

/* The first sandbox of kind rt (-1: plain) of the pool that is alive (asked
 * for or ready) and of the current root spec and config, or NULL. */
static struct prep *
run_pool_first_alive(struct daemon *d, int rt, uint32_t mounts)
{
	struct prep *p;

	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->state != PREP_DEAD && p->gen == d->rootspec.generation && p->rt == rt &&
	    (rt < 0 || p->pgen == d->prestart_gen) && (p->missing & mounts) == 0)
		return p;
	return NULL;
}

/* A ready sandbox of the live zygote of r's caller and runtime, or NULL:
 * never another caller's (its namespaces are that caller's zygote's). */
static struct prep *
run_pool_zygote_pick(struct daemon *d, const struct run *r)
{
	struct prep *p;

	if (r->zygote_rt < 0 || r->no_zygote || r->prestart_gen != d->prestart_gen ||
	    !d->cfg->runtimes[r->zygote_rt].zygote)
		return NULL;
	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->rt == RUN_POOL_ZYGOTE && p->state != PREP_DEAD && p->zuid == r->uid &&
	    p->gen == d->rootspec.generation && (p->missing & r->mounts) == 0 &&
	    zygotes_live(d, p->zkey) != NULL &&
	    !strcmp(zygotes_live(d, p->zkey)->runtime, d->cfg->runtimes[r->zygote_rt].name))
		return p;
	return NULL;
}

/* The sandbox run_pool_take() would give r, or NULL. */
static struct prep *
run_pool_pick(struct daemon *d, const struct run *r)
{
	struct prep *p = run_pool_zygote_pick(d, r);

	if (p != NULL)
		return p;
	if (r->prestart_rt >= 0 && r->prestart_gen == d->prestart_gen)
		p = run_pool_first_alive(d, r->prestart_rt, r->mounts);
	if (p == NULL)
		p = run_pool_first_alive(d, -1, r->mounts);
	return p;
}

bool
run_pool_can_take(struct daemon *d, const struct run *r)
{
	return run_pool_pick(d, r) != NULL;
}

int
run_pool_take(struct daemon *d, struct run *r, bool *ret_ready)
{
	struct prep *p = run_pool_pick(d, r);

	if (p == NULL)
		return -ENOENT;
	/* The key stays: the sandbox's events now go to the run. */
	TAILQ_REMOVE(&d->pool, p, entry);
	d->npool--;
	r->slot = p->slot;
	r->prep_key = p->key;
	if (spawnref_hand(&d->refs, p->key, SPAWNREF_RUN, r) < 0)
		fatalx("pool sandbox %" PRIu32 " not registered", p->key);
	r->stat_fd[0] = p->stat_fd[0];
	r->stat_fd[1] = p->stat_fd[1];
	if (p->rt >= 0) {
		/* Its interpreter writes into these since its exec: the run's. */
		r->prestarted = true;
		r->out[0].fd = p->out_fd[0];
		r->out[1].fd = p->out_fd[1];
	}
	if (p->rt == RUN_POOL_ZYGOTE) {
		r->zygote_key = p->zkey;
		zygotes_ran(zygotes_live(d, p->zkey));
	}
	*ret_ready = p->state == PREP_READY;
	free(p);
	return 0;
}

/* Limits are rlimits lowered at the hand-off (a pre-started interpreter's)
 * or set by the zygote's child: never above the ceilings the interpreter or
 * the zygote started with. */
static bool
run_pool_limits_fit(struct daemon *d, const struct proto_limits *lim)
{
	size_t i;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		if (limit_table[i].prestart_lower && lim->v[i] > d->cfg->ceilings.v[i])
			return false;
	return true;
}

int
run_pool_eligible(struct daemon *d, const struct proto_run *req, uint32_t flags,
		  const struct config_profile *prof, const struct proto_limits *lim,
		  uint32_t mounts)
{
	const struct config_runtime *rt = config_runtime_find(d->cfg, req->runtime);

	if (rt == NULL || !rt->prestart || rt->is_exec || d->cfg->prestarted_interpreters == 0)
		return -1;
	/* figures_svg sets an environment variable: not the interpreter's. */
	if (req->nenv > 0 || req->argc > 0 || req->stdin_data.present || req->ntools > 0 ||
	    req->figures_svg || req->session != NULL || prof->network_proxy || prof->nhidden > 0 ||
	    flags != 0 || mounts != 0)
		return -1;
	return run_pool_limits_fit(d, lim) ? (int)(rt - d->cfg->runtimes) : -1;
}

/*
 * Is env's name one the zygote's child cannot honour? The interpreter, the
 * loader and the C library read these once, at the start: the zygote's,
 * long before the run's environment replaces it in the child (zygote.py),
 * so a fork would silently ignore what a fresh run's exec obeys. Such
 * runs go the ordinary way.
 */
static bool
run_pool_env_at_start(const char *name)
{
	static const char *const prefix[] = {"PYTHON", "LD_", "LC_", "MALLOC_"};
	static const char *const exact[] = {"LANG", "LANGUAGE", "GLIBC_TUNABLES", "TZ"};
	size_t i;

	for (i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return true;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(name, exact[i]) == 0)
			return true;
	return false;
}

int
run_pool_zygote_eligible(struct daemon *d, const struct proto_run *req, uint32_t flags,
			 const struct config_profile *prof, const struct proto_limits *lim,
			 uint32_t mounts)
{
	const struct config_runtime *rt = config_runtime_find(d->cfg, req->runtime);
	size_t i;

	if (rt == NULL || !rt->zygote || !rt->prestart || rt->is_exec ||
	    d->cfg->prestarted_interpreters == 0)
		return -1;
	/*
	 * Unlike a pre-started interpreter's, the zygote's child takes the
	 * plan's argv and environment (zygote.py: the request's env and args,
	 * figures_svg's variable) and the order carries the run's stdin
	 * (sandbox_zygote_run.c), so those are its to honour, but for the
	 * variables read only at an interpreter's start (run_pool_env_at_start).
	 * What it cannot either:
	 * tools, a session, the egress proxy, hidden paths and mounts (the
	 * supervisor's SB_ZYGOTE_REFUSED, or our own clone's set-up).
	 */
	if (req->ntools > 0 || req->session != NULL || prof->network_proxy || prof->nhidden > 0 ||
	    flags != 0 || mounts != 0)
		return -1;
	for (i = 0; i < req->nenv; i++)
		if (run_pool_env_at_start(req->env[i].key))
			return -1;
	return run_pool_limits_fit(d, lim) ? (int)(rt - d->cfg->runtimes) : -1;
}

bool
run_pool_give_way(struct daemon *d)
{
	struct prep *p;
	int pass;

	/* One at a time: one already ended frees its slot at its reap, and
	 * the dispatch that follows asks again if it is still needed. */
	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->state == PREP_DEAD && p->discarded)
		return true;
	/* A waiting interpreter first (it serves fewer runs), then a plain
	 * sandbox: a run must never wait behind sandboxes it cannot take
	 * (issue 28). */
	for (pass = 0; pass < 2; pass++) {
		TAILQ_FOREACH(p, &d->pool, entry)
		{
			if ((pass == 0) != (p->rt >= 0) || p->state == PREP_DEAD)
				continue;
			run_pool_end(d, p);
			return true;
		}
	}
	return false;
}

void
run_pool_reloaded(struct daemon *d)
{
	struct prep *p;
	size_t i;

	d->prestart_gen++;
	for (i = 0; i < CONFIG_RUNTIMES_MAX; i++)
		if (d->prestart_plan[i] >= 0) {
			close(d->prestart_plan[i]);
			d->prestart_plan[i] = -1;
		}
	TAILQ_FOREACH(p, &d->pool, entry)
	{
		if (p->rt < 0 || p->state == PREP_DEAD)
			continue;
		run_pool_end(d, p);
	}
}
