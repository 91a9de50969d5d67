/* runqueue.c: per-uid FIFO queues, one per class, served round-robin. */
#include "runqueue.h"
#include "uidlist.h"

#include <errno.h>
#include <stdlib.h>

void
runqueue_init(struct runqueue *s)
{
	TAILQ_INIT(&s->uids);
	s->n = 0;
	s->seq = 0;
	s->last_uid = 0;
	s->served_any = false;
}

/* The entry of uid, or NULL. */
UIDLIST_FIND_GENERATE(runqueue_find, runqueue, runqueue_uid, uids, entry)

uint32_t
runqueue_count_uid(const struct runqueue *s, uid_t uid)
{
	const struct runqueue_uid *u = runqueue_find(s, uid);

	return u != NULL ? u->n : 0;
}

/* Queue it in its uid's queue of its class (it->klass; made if need be),
 * at the head or the tail; a new uid's queue goes at the same end of the
 * list of uids. */
static int
runqueue_insert(struct runqueue *s, struct runqueue_item *it, uid_t uid, bool head)
{
	struct runqueue_uid *u = runqueue_find(s, uid);
	unsigned k;

	if (u == NULL) {
		u = calloc(1, sizeof(*u));
		if (u == NULL)
			return -ENOMEM;
		u->uid = uid;
		for (k = 0; k < RUNQUEUE_CLASSES; k++)
			TAILQ_INIT(&u->items[k]);
		if (head)
			TAILQ_INSERT_HEAD(&s->uids, u, entry);
		else
			TAILQ_INSERT_TAIL(&s->uids, u, entry);
	}
	it->uid = uid;
	it->owner = u;
	if (head)
		TAILQ_INSERT_HEAD(&u->items[it->klass], it, entry);
	else
		TAILQ_INSERT_TAIL(&u->items[it->klass], it, entry);
	u->n++;
	s->n++;
	return 0;
}

int
runqueue_push(struct runqueue *s, struct runqueue_item *it, uid_t uid, unsigned klass, uint32_t max,
	      uint32_t max_per_uid)
{
	struct runqueue_uid *u = runqueue_find(s, uid);
	int r;

	if (klass >= RUNQUEUE_CLASSES)
		return -EINVAL;
	if (s->n >= max || (u != NULL && u->n >= max_per_uid))
		return -EBUSY;
	it->klass = klass;
	it->seq = s->seq;
	/* New uids join at the end: they wait one round, no more. */
	r = runqueue_insert(s, it, uid, false);
	if (r == 0)
		s->seq++;
	return r;
}

int
runqueue_push_head(struct runqueue *s, struct runqueue_item *it, uid_t uid)
{
	struct runqueue_uid *prev;
	int r = runqueue_insert(s, it, uid, true);

	if (r < 0)
		return r;
	/* The turn its pop took was not used: its uid is served next. */
	prev = TAILQ_PREV(it->owner, runqueue_uid_list, entry);
	s->served_any = prev != NULL;
	if (prev != NULL)
		s->last_uid = prev->uid;
	return 0;
}

void
runqueue_remove(struct runqueue *s, struct runqueue_item *it)
{
	struct runqueue_uid *u = it->owner;

	if (u == NULL)
		return;
	TAILQ_REMOVE(&u->items[it->klass], it, entry);
	it->owner = NULL;
	u->n--;
	s->n--;
	if (u->n == 0) {
		TAILQ_REMOVE(&s->uids, u, entry);
		free(u);
	}
}

/*
 * The earliest arrived of the heads of u's classes that can_start lets go,
 * or NULL. Each class is a FIFO: a head that may not start holds up the
 * rest of its class, never another class.
 */
static struct runqueue_item *
runqueue_pick(struct runqueue_uid *u, bool (*can_start)(void *ctx, const struct runqueue_item *it),
	      void *ctx)
{
	bool tried[RUNQUEUE_CLASSES] = {false};

	for (;;) {
		struct runqueue_item *best = NULL, *h;
		unsigned k;

		for (k = 0; k < RUNQUEUE_CLASSES; k++) {
			h = TAILQ_FIRST(&u->items[k]);
			if (h != NULL && !tried[k] && (best == NULL || h->seq < best->seq))
				best = h;
		}
		if (best == NULL || can_start(ctx, best))
			return best;
		tried[best->klass] = true;
	}
}

struct runqueue_item *
runqueue_pop(struct runqueue *s, bool (*can_start)(void *ctx, const struct runqueue_item *it),
	     void *ctx)
{
	struct runqueue_uid *start = NULL, *u;
	struct runqueue_item *it;

	if (TAILQ_EMPTY(&s->uids))
		return NULL;
	/* Start after the uid served last; if it is no longer queued, at
	 * the first uid (the list keeps arrival order of uids). */
	if (s->served_any) {
		struct runqueue_uid *last = runqueue_find(s, s->last_uid);

		if (last != NULL)
			start = TAILQ_NEXT(last, entry);
	}
	if (start == NULL)
		start = TAILQ_FIRST(&s->uids);
	u = start;
	do {
		it = runqueue_pick(u, can_start, ctx);
		if (it != NULL) {
			s->last_uid = u->uid;
			s->served_any = true;
			runqueue_remove(s, it);
			return it;
		}
		u = TAILQ_NEXT(u, entry);
		if (u == NULL)
			u = TAILQ_FIRST(&s->uids);
	} while (u != start);
	return NULL;
}
