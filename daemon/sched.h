/*
 * sched.h: the queue of runs waiting for a slot. Arrival order within a uid,
 * round-robin between uids, bounded in all and per uid. See
 * docs/design-service.md.
 */
#ifndef AIRLOCKD_SCHED_H
#define AIRLOCKD_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

/* Embedded in whatever is queued. */
struct sched_item {
	TAILQ_ENTRY(sched_item) entry;
	struct sched_uid *owner;
	uid_t uid;
};

TAILQ_HEAD(sched_item_list, sched_item);

/* The queue of one uid. */
struct sched_uid {
	TAILQ_ENTRY(sched_uid) entry;
	uid_t uid;
	uint32_t n;
	struct sched_item_list items;
};

TAILQ_HEAD(sched_uid_list, sched_uid);

struct sched {
	struct sched_uid_list uids; /* uids with something queued */
	uid_t last_uid;		    /* the uid served last, for round-robin */
	bool served_any;
	uint32_t n; /* items queued in all */
};

void sched_init(struct sched *s);

/*
 * Queue an item at the end of its uid's queue. -EBUSY when max items are
 * queued in all or max_per_uid for this uid; -ENOMEM.
 */
int sched_push(struct sched *s, struct sched_item *it, uid_t uid, uint32_t max,
	       uint32_t max_per_uid);

/*
 * Take the next item: the head of the first uid after the last one served
 * (in queue order, wrapping) for which can_start(ctx, uid) says yes. NULL
 * when nothing may start.
 */
struct sched_item *sched_pop(struct sched *s, bool (*can_start)(void *ctx, uid_t uid), void *ctx);

/* Take a queued item out (cancel, client gone). */
void sched_remove(struct sched *s, struct sched_item *it);

/* Items queued for one uid. */
uint32_t sched_count_uid(const struct sched *s, uid_t uid);

#endif
