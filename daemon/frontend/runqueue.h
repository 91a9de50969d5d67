/*
 * runqueue.h: the queue of runs waiting for a slot. Arrival order within a
 * uid and class, round-robin between uids, bounded in all and per uid. See
 * docs/design-service.md.
 */
#ifndef AIRLOCKD_RUNQUEUE_H
#define AIRLOCKD_RUNQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

/*
 * Classes of items: an item waits only behind the items of its own uid and
 * class, so an item that cannot start holds up no other class. run.c has
 * one-shot runs, which need a uid slot, session runs, which bring their
 * session's, and interpreter sessions' cells waiting for a run slot.
 */
#define RUNQUEUE_CLASSES 3

/* Embedded in whatever is queued. */
struct runqueue_item {
	TAILQ_ENTRY(runqueue_item) entry;
	struct runqueue_uid *owner;
	uid_t uid;
	unsigned klass; /* < RUNQUEUE_CLASSES */
	uint64_t seq;	/* arrival order in the whole queue */
};

TAILQ_HEAD(runqueue_item_list, runqueue_item);

/* The queue of one uid: a FIFO per class. */
struct runqueue_uid {
	TAILQ_ENTRY(runqueue_uid) entry;
	uid_t uid;
	uint32_t n; /* in all its classes */
	struct runqueue_item_list items[RUNQUEUE_CLASSES];
};

TAILQ_HEAD(runqueue_uid_list, runqueue_uid);

struct runqueue {
	struct runqueue_uid_list uids; /* uids with something queued */
	uid_t last_uid;		       /* the uid served last, for round-robin */
	bool served_any;
	uint32_t n;   /* items queued in all */
	uint64_t seq; /* the next item's arrival number */
};

void runqueue_init(struct runqueue *s);

/*
 * Queue an item at the end of its uid's queue of class klass. -EINVAL for
 * a class out of range; -EBUSY when max items are queued in all or
 * max_per_uid for this uid (all classes); -ENOMEM.
 */
int runqueue_push(struct runqueue *s, struct runqueue_item *it, uid_t uid, unsigned klass,
		  uint32_t max, uint32_t max_per_uid);

/*
 * Put back an item that runqueue_pop() gave but that could not start: at
 * the head of its uid's queue of its class, with its arrival number, its
 * uid served next. No bound applies (it was queued before). -ENOMEM.
 */
int runqueue_push_head(struct runqueue *s, struct runqueue_item *it, uid_t uid);

/*
 * Take the next item: of the first uid after the last one served (in queue
 * order, wrapping) that has one, the earliest arrived of the heads of its
 * classes that can_start(ctx, head) lets go. NULL when nothing may start.
 */
struct runqueue_item *runqueue_pop(struct runqueue *s,
				   bool (*can_start)(void *ctx, const struct runqueue_item *it),
				   void *ctx);

/* Take a queued item out (cancel, client gone). */
void runqueue_remove(struct runqueue *s, struct runqueue_item *it);

/* Items queued for one uid. */
uint32_t runqueue_count_uid(const struct runqueue *s, uid_t uid);

#endif
