/* runqueue.c: per-uid FIFO queues served round-robin. */
#include "runqueue.h"

#include <errno.h>
#include <stdlib.h>

void
runqueue_init(struct runqueue *s)
{
	TAILQ_INIT(&s->uids);
	s->n = 0;
	s->last_uid = 0;
	s->served_any = false;
}

static struct runqueue_uid *
runqueue_find(const struct runqueue *s, uid_t uid)
{
	struct runqueue_uid *u;

	TAILQ_FOREACH(u, &s->uids, entry)
	if (u->uid == uid)
		return u;
	return NULL;
}

uint32_t
runqueue_count_uid(const struct runqueue *s, uid_t uid)
{
	const struct runqueue_uid *u = runqueue_find(s, uid);

	return u != NULL ? u->n : 0;
}

/* Queue it in its uid's queue (made if need be), at the head or the tail;
 * a new uid's queue goes at the same end of the list of uids. */
static int
runqueue_insert(struct runqueue *s, struct runqueue_item *it, uid_t uid, bool head)
{
	struct runqueue_uid *u = runqueue_find(s, uid);

	if (u == NULL) {
		u = calloc(1, sizeof(*u));
		if (u == NULL)
			return -ENOMEM;
		u->uid = uid;
		TAILQ_INIT(&u->items);
		if (head)
			TAILQ_INSERT_HEAD(&s->uids, u, entry);
		else
			TAILQ_INSERT_TAIL(&s->uids, u, entry);
	}
	it->uid = uid;
	it->owner = u;
	if (head)
		TAILQ_INSERT_HEAD(&u->items, it, entry);
	else
		TAILQ_INSERT_TAIL(&u->items, it, entry);
	u->n++;
	s->n++;
	return 0;
}

int
runqueue_push(struct runqueue *s, struct runqueue_item *it, uid_t uid, uint32_t max,
	      uint32_t max_per_uid)
{
	struct runqueue_uid *u = runqueue_find(s, uid);

	if (s->n >= max || (u != NULL && u->n >= max_per_uid))
		return -EBUSY;
	/* New uids join at the end: they wait one round, no more. */
	return runqueue_insert(s, it, uid, false);
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
	TAILQ_REMOVE(&u->items, it, entry);
	it->owner = NULL;
	u->n--;
	s->n--;
	if (u->n == 0) {
		TAILQ_REMOVE(&s->uids, u, entry);
		free(u);
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
		it = TAILQ_FIRST(&u->items);
		if (can_start(ctx, it)) {
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
