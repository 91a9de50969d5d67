/*
 * run_pool.c: sandboxes prepared ahead of their runs (prepared_sandboxes),
 * each under its own spawn key (spawnref.h): asked for (PREP_ASKED), ready
 * once its STARTED came (PREP_READY), or dead (failed; gone at its reap).
 * A run takes a live one with its key and slot; one gone before any run
 * took it gives its slot back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "run.h"

/* Have the spawner end the sandbox prepared under key in slot. */
static void
run_pool_send_discard(struct daemon *d, uint32_t run_id, uint32_t slot, uint32_t key)
{
	struct spawn_req req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.type = SPAWN_DISCARD;
	req.run_id = run_id;
	req.uid_slot = slot;
	req.prep_key = key;
	rc = frontend_spawn_fds(d, &req, NULL, 0);
	if (rc < 0)
		fatalx("cannot reach the spawner: %s", strerror(-rc));
}

/* The sandbox prepared for r will get no run: have the spawner end it. */
void
run_pool_discard(struct run *r)
{
	run_pool_send_discard(r->d, r->run_id, r->slot, r->prep_key);
}

/* Ask the spawner to prepare a sandbox in a uid slot, events keyed by key. */
void
run_pool_prepare(struct daemon *d, uint32_t key, uint32_t slot)
{
	struct spawn_req req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.type = SPAWN_PREPARE;
	req.run_id = key;
	req.uid_slot = slot;
	req.memory_bytes = d->cfg->defaults.v[PROTO_LIMIT_MEMORY_BYTES];
	rc = frontend_spawn_fds(d, &req, &d->rootspec_fd, 1);
	if (rc < 0)
		fatalx("cannot reach the spawner: %s", strerror(-rc));
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
		run_pool_send_discard(d, p->key, p->slot, p->key);
		p->state = PREP_DEAD;
	}
}

void
run_pool_fill(struct daemon *d)
{
	while (!d->stopping && d->npool < d->cfg->prepared_sandboxes) {
		struct prep *p = calloc(1, sizeof(*p));
		int r;

		if (p == NULL)
			fatalx("out of memory");
		/* Its key holds its uid slot until it is forgotten. */
		r = spawnref_add_slot(&d->refs, SPAWNREF_POOL, p, &p->key, &p->slot);
		if (r == -EBUSY) {
			free(p);
			return;
		}
		if (r < 0)
			fatalx("cannot register a spawn key: %s", strerror(-r));
		p->gen = d->rootspec.generation;
		p->stat_fd[0] = p->stat_fd[1] = -1;
		TAILQ_INSERT_TAIL(&d->pool, p, entry);
		d->npool++;
		run_pool_prepare(d, p->key, p->slot);
	}
}

void
run_pool_event(struct daemon *d, struct prep *p, const struct spawn_ev *ev, int *fds, size_t *nfds)
{
	switch (ev->type) {
	case SPAWN_STARTED:
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
	/* Gone before any run took it: its key goes, and with it its slot. */
	TAILQ_REMOVE(&d->pool, p, entry);
	d->npool--;
	if (p->stat_fd[0] >= 0)
		close(p->stat_fd[0]);
	if (p->stat_fd[1] >= 0)
		close(p->stat_fd[1]);
	spawnref_del(&d->refs, p->key);
	free(p);
	/* A one-shot run may be queued for that slot. */
	run_dispatch_soon(d);
}

/* The first sandbox of the pool that is alive (asked for or ready), or NULL. */
static struct prep *
run_pool_first_alive(struct daemon *d)
{
	struct prep *p;

	TAILQ_FOREACH(p, &d->pool, entry)
	if (p->state != PREP_DEAD && p->gen == d->rootspec.generation)
		return p;
	return NULL;
}

bool
run_pool_has(struct daemon *d)
{
	return run_pool_first_alive(d) != NULL;
}

int
run_pool_take(struct daemon *d, struct run *r, bool *ret_ready)
{
	struct prep *p = run_pool_first_alive(d);

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
	*ret_ready = p->state == PREP_READY;
	free(p);
	return 0;
}
