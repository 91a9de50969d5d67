/*
 * zygotes.c: the registry of callers' zygotes (zygotes.h,
 * docs/design-bursts.md §3.6): their start (SPAWN_ZYGOTE_START with the
 * spec), their events, their stop (SPAWN_DISCARD with SPAWN_F_ZYGOTE),
 * idle reaping, replacement and back-off, every change of state through
 * zygote_state.c's table.
 */
#include "zygotes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "admit.h"
#include "admit_facts.h"
#include "clock.h"
#include "compiler.h"
#include "log.h"
#include "memfd.h"
#include "plan.h"
#include "run.h"
#include "xalloc.h"

static void zygotes_timer_cb(evutil_socket_t fd, short what, void *arg);

int
zygotes_init(struct daemon *d)
{
	TAILQ_INIT(&d->zygotes);
	d->nzygotes = 0;
	return 0;
}

/* z's runtime in the config in force, if it still has zygote = yes. */
static const struct config_runtime *
zygotes_runtime(const struct zygote *z)
{
	const struct config_runtime *rt = config_runtime_find(z->d->cfg, z->runtime);

	return rt != NULL && rt->zygote && rt->prestart ? rt : NULL;
}

/* Arm z's one timer for ms milliseconds. */
static void
zygotes_arm(struct zygote *z, uint32_t ms)
{
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(z->timer, &tv);
}

/* The key (and the uid slot it holds) and the run slot go: the spawner
 * has reaped z's process, or never made one. */
static void
zygotes_forget_key(struct zygote *z)
{
	if (!z->has_key)
		return;
	spawnref_del(&z->d->refs, z->key);
	z->has_key = false;
	z->d->nzygotes--;
	/* Its prepared sandboxes are its uid's: no other process may use them. */
	run_pool_zygote_gone(z->d, z->key);
	/* Its run slot is free: a queued run may take it (zygotes_give_way). */
	run_dispatch_soon(z->d);
}

/* Move z by ev (a pair the table leaves out is a broken invariant) and do
 * the new state's entry action. Entering ENDED frees z. */
static void
zygotes_transition(struct zygote *z, enum zygote_event ev)
{
	enum zygote_state from = z->state, to = zygote_state_next(from, ev);

	if (to == ZYGOTE_STATE_INVALID)
		fatalx("zygote uid %u %s: event %s in state %s", (unsigned)z->uid, z->runtime,
		       zygote_event_name(ev), zygote_state_name(from));
	log_debug("zygote uid %u %s: %s -> %s (%s)", (unsigned)z->uid, z->runtime,
		  zygote_state_name(from), zygote_state_name(to), zygote_event_name(ev));
	z->state = to;
	switch (to) {
	case ZYGOTE_LIVE:
		zygotes_arm(z, z->d->cfg->zygote_idle_s * 1000U);
		run_dispatch_soon(z->d); /* the pool prepares its sandbox */
		break;
	case ZYGOTE_WAITING:
		zygotes_forget_key(z);
		z->backoff_ms = zygote_backoff_next(z->backoff_ms);
		log_info("zygote uid %u %s: next start in %" PRIu32 " ms", (unsigned)z->uid,
			 z->runtime, z->backoff_ms);
		zygotes_arm(z, z->backoff_ms);
		break;
	case ZYGOTE_ENDED:
		zygotes_forget_key(z);
		TAILQ_REMOVE(&z->d->zygotes, z, entry);
		event_free(z->timer);
		free(z);
		break;
	default:
		break;
	}
}

/* The spec of rt's zygote: its python, then the base environment of a
 * fresh run of it, NUL-terminated strings in a sealed memfd. */
static int
zygotes_spec(const struct config_runtime *rt, int *ret_fd)
{
	struct plan_env env = {0};
	char *buf = NULL;
	size_t len, off = 0, i;
	int r;

	/* The spawner checks it is a python the start-up config runs; one
	 * found through PATH it cannot name (design-bursts §3.4 item 6). */
	if (rt->argc == 0 || rt->argv[0][0] != '/')
		return -EINVAL;
	r = plan_env_build(&env, (const char *const *)rt->env, rt->nenv, NULL, 0);
	if (r < 0)
		return r;
	len = strlen(rt->argv[0]) + 1;
	for (i = 0; i < env.envc; i++)
		len += strlen(env.envp[i]) + 1;
	r = -E2BIG;
	if (len > SPAWN_ZYGOTE_SPEC_MAX || env.envc > SPAWN_ZYGOTE_ENV_MAX)
		goto out;
	buf = xmalloc(len);
	memcpy(buf, rt->argv[0], strlen(rt->argv[0]) + 1);
	off = strlen(rt->argv[0]) + 1;
	for (i = 0; i < env.envc; i++) {
		memcpy(buf + off, env.envp[i], strlen(env.envp[i]) + 1);
		off += strlen(env.envp[i]) + 1;
	}
	r = memfd_sealed_create("zygote-spec", buf, len, ret_fd);
out:
	free(buf);
	plan_env_free(&env);
	return r;
}

/* May uid have a zygote now (admit_decide, ADMIT_ZYGOTE)? */
static bool
zygotes_admitted(struct daemon *d, uid_t uid)
{
	struct admit_gather g;
	struct admit_decision dec;

	admit_gather_init(d, ADMIT_ZYGOTE, ADMIT_AT_REQUEST, uid, &g);
	g.f.peer_allowed = true;
	g.f.held.n[LEDGER_RUNNING] = run_count_uid(d, uid) + zygotes_count_uid(d, uid);
	g.f.all.n[LEDGER_RUNNING] = d->nrunning + d->nzygotes;
	admit_decide(&g.f, &dec);
	if (dec.verdict != ADMIT_NOW)
		log_debug("zygote uid %u: refused: %s", (unsigned)uid, dec.why);
	return dec.verdict == ADMIT_NOW;
}

/* Ask the spawner for z's process: a uid slot of the pool, the spec.
 * 0 or -errno with nothing held. */
static int
zygotes_send_start(struct zygote *z)
{
	const struct config_runtime *rt = zygotes_runtime(z);
	struct spawn_req req;
	int fd = -1, r;

	if (rt == NULL)
		return -ENOENT;
	r = zygotes_spec(rt, &fd);
	if (r < 0)
		return r;
	r = spawnref_add_slot(&z->d->refs, SPAWNREF_ZYGOTE, z, &z->key, &z->slot);
	if (r < 0)
		goto out;
	memset(&req, 0, sizeof(req));
	req.type = SPAWN_ZYGOTE_START;
	req.run_id = z->key;
	req.uid_slot = z->slot;
	r = frontend_spawn_fds(z->d, &req, &fd, 1);
	if (r < 0) {
		spawnref_del(&z->d->refs, z->key);
		goto out;
	}
	z->has_key = true;
	z->forks = 0;
	z->d->nzygotes++;
	log_info("zygote uid %u %s: starting (slot %" PRIu32 ")", (unsigned)z->uid, z->runtime,
		 z->slot);
out:
	if (fd >= 0)
		close(fd);
	return r;
}

/* Have the spawner stop z's process; its reap comes as ZYGOTE_GONE. */
static void
zygotes_send_stop(struct zygote *z)
{
	struct spawn_req req;
	int r;

	memset(&req, 0, sizeof(req));
	req.type = SPAWN_DISCARD;
	req.flags = SPAWN_F_ZYGOTE;
	req.run_id = z->key;
	req.uid_slot = z->slot;
	r = frontend_spawn_fds(z->d, &req, NULL, 0);
	/* Not sent: it lives, idle, until the spawner's end, its slot held. */
	if (r < 0)
		log_warnx("zygote uid %u %s: cannot ask for its stop: %s", (unsigned)z->uid,
			  z->runtime, strerror(-r));
}

/* Stop z, in any state but ended (why for the log). */
static void
zygotes_stop(struct zygote *z, const char *why)
{
	if (z->state == ZYGOTE_STOPPING)
		return;
	log_info("zygote uid %u %s: stopping: %s", (unsigned)z->uid, z->runtime, why);
	evtimer_del(z->timer);
	if (z->state == ZYGOTE_STARTING || z->state == ZYGOTE_LIVE)
		zygotes_send_stop(z);
	zygotes_transition(z, ZYGOTE_EV_STOP);
}

/* Idle (live) or back-off over (waiting). */
static void
zygotes_timer_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct zygote *z = arg;

	if (z->state == ZYGOTE_LIVE) {
		zygotes_stop(z, z->forks >= z->d->cfg->zygote_forks
					? "its runs are done (zygote_forks), replaced"
					: "idle");
		return;
	}
	if (z->state != ZYGOTE_WAITING)
		return;
	/* Retried only while its caller asks for it: one that cannot start
	 * (an LD_ variable in its runtime's env, a python the spawner does
	 * not take) was otherwise asked of the spawner every 10 s for ever,
	 * for every caller that once ran the runtime. */
	if (zygotes_runtime(z) == NULL || z->d->stopping ||
	    clock_now_ms() - z->asked_ms >= z->d->cfg->zygote_idle_s * 1000ULL ||
	    !zygotes_admitted(z->d, z->uid)) {
		zygotes_transition(z, ZYGOTE_EV_STOP);
		return;
	}
	zygotes_transition(z, ZYGOTE_EV_RETRY);
	if (zygotes_send_start(z) < 0)
		zygotes_transition(z, ZYGOTE_EV_FAILED);
}

struct zygote *
zygotes_get(struct daemon *d, uid_t uid, int rt)
{
	const struct config_runtime *crt = &d->cfg->runtimes[rt];
	struct zygote *z;

	if (!crt->zygote)
		return NULL;
	TAILQ_FOREACH(z, &d->zygotes, entry)
	if (z->uid == uid && !strcmp(z->runtime, crt->name) && z->state != ZYGOTE_STOPPING) {
		z->asked_ms = clock_now_ms();
		return z->state == ZYGOTE_LIVE ? z : NULL;
	}
	if (d->stopping || !zygotes_admitted(d, uid))
		return NULL;
	z = xcalloc(1, sizeof(*z));
	z->d = d;
	z->uid = uid;
	z->state = ZYGOTE_STARTING;
	z->asked_ms = clock_now_ms();
	snprintf(z->runtime, sizeof(z->runtime), "%s", crt->name);
	z->timer = evtimer_new(d->base, zygotes_timer_cb, z);
	if (z->timer == NULL)
		fatalx("out of memory");
	TAILQ_INSERT_TAIL(&d->zygotes, z, entry);
	if (zygotes_send_start(z) < 0) {
		log_repeat_warnx(&d->pool_warn, "zygote uid %u %s: cannot start one", (unsigned)uid,
				 z->runtime);
		zygotes_transition(z, ZYGOTE_EV_FAILED);
	}
	return NULL;
}

struct zygote *
zygotes_live(struct daemon *d, uint32_t key)
{
	struct zygote *z;

	TAILQ_FOREACH(z, &d->zygotes, entry)
	if (z->has_key && z->key == key)
		return z->state == ZYGOTE_LIVE ? z : NULL;
	return NULL;
}

uint32_t
zygotes_count_uid(const struct daemon *d, uid_t uid)
{
	const struct zygote *z;
	uint32_t n = 0;

	TAILQ_FOREACH(z, &d->zygotes, entry)
	n += z->has_key && (uid == (uid_t)-1 || z->uid == uid);
	return n;
}

/* Is z live with no run of its in flight (between its hand-off and its
 * reap)? */
static bool
zygotes_idle(const struct zygote *z)
{
	const struct run *r;

	if (z->state != ZYGOTE_LIVE)
		return false;
	TAILQ_FOREACH(r, &z->d->runs, entry)
	if (r->zygote_key == z->key && r->state != RUN_QUEUED && r->state < RUN_REAPED)
		return false;
	return true;
}

uint32_t
zygotes_idle_count(const struct daemon *d, uid_t uid)
{
	const struct zygote *z;
	uint32_t n = 0;

	TAILQ_FOREACH(z, &d->zygotes, entry)
	n += (uid == (uid_t)-1 || z->uid == uid) && zygotes_idle(z);
	return n;
}

void
zygotes_give_way(struct daemon *d, uid_t uid)
{
	struct zygote *z, *oldest = NULL;

	TAILQ_FOREACH(z, &d->zygotes, entry)
	if ((uid == (uid_t)-1 || z->uid == uid) && zygotes_idle(z) &&
	    (oldest == NULL || z->asked_ms < oldest->asked_ms))
		oldest = z;
	if (oldest != NULL)
		zygotes_stop(oldest, "a queued run waits for the run slot it holds");
}

void
zygotes_ran(struct zygote *z)
{
	z->forks++;
	z->backoff_ms = 0; /* it served: a later death starts the back-off anew */
	/* Its layout and hash seed must not live forever (§4): stopped on
	 * the next turn, after this run's SPAWN_REQ went (the spawner reads
	 * in order: a stop sent first would fail the run). */
	zygotes_arm(z, z->forks >= z->d->cfg->zygote_forks ? 0 : z->d->cfg->zygote_idle_s * 1000U);
}

void
zygotes_fell_back(struct daemon *d, uint32_t key, int err)
{
	struct zygote *z = zygotes_live(d, key);

	log_warnx("zygote key %" PRIu32 ": a run went the ordinary way: %s", key,
		  strerror(err < 0 ? -err : err));
	/* It failed a run: not used again; the next run asks for a new one. */
	if (z != NULL)
		zygotes_stop(z, "it failed a run");
}

void
zygotes_event(struct zygote *z, const struct spawn_ev *ev)
{
	switch (ev->type) {
	case SPAWN_STARTED:
		log_info("zygote uid %u %s: started, pid %d", (unsigned)z->uid, z->runtime,
			 (int)ev->pid);
		zygotes_transition(z, ZYGOTE_EV_STARTED);
		return;
	case SPAWN_FAILED:
		log_repeat_warnx(&z->d->pool_warn, "zygote uid %u %s: its start failed at %s: %s",
				 (unsigned)z->uid, z->runtime, ev->step, strerror(-ev->err));
		zygotes_transition(z, ZYGOTE_EV_FAILED);
		return;
	case SPAWN_ZYGOTE_GONE:
		if (z->state == ZYGOTE_STOPPING)
			log_info("zygote uid %u %s: pid %d ended", (unsigned)z->uid, z->runtime,
				 (int)ev->pid);
		else if (WIFSIGNALED(ev->status))
			log_warnx("zygote uid %u %s: pid %d died of signal %d", (unsigned)z->uid,
				  z->runtime, (int)ev->pid, WTERMSIG(ev->status));
		else
			log_warnx("zygote uid %u %s: pid %d died, status %d", (unsigned)z->uid,
				  z->runtime, (int)ev->pid, WEXITSTATUS(ev->status));
		zygotes_transition(z, ZYGOTE_EV_GONE);
		return;
	default:
		log_warnx("spawner: event %u for a zygote", ev->type);
		return;
	}
}

void
zygotes_reloaded(struct daemon *d)
{
	struct zygote *z, *next;

	/*
	 * Every zygote goes, not only those whose key the reload dropped: one
	 * runs the old runtime's python with its old environment, and a run
	 * after the reload must be the new config's, as run_pool_reloaded()
	 * ends the pre-started interpreters for (a reload that named another
	 * python had runs forked from the old one until its idle end). A
	 * run's SPAWN_REQ sent before the stop is served (the spawner reads
	 * in order); a queued one is of the old prestart_gen, never a zygote's.
	 */
	for (z = TAILQ_FIRST(&d->zygotes); z != NULL; z = next) {
		next = TAILQ_NEXT(z, entry);
		zygotes_stop(z, zygotes_runtime(z) == NULL
					? "the reload dropped its zygote = yes"
					: "reloaded: its runtime may have changed");
	}
}
