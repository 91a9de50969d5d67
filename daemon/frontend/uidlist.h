/*
 * uidlist.h: the per-uid entries the frontend keeps in a TAILQ (budget.c,
 * runqueue.c), each with a uid member. UIDLIST_FIND_GENERATE defines the
 * lookup of a uid's entry for one such list, as sys/tree.h's RB_GENERATE
 * defines a tree's functions: written once, typed per list.
 */
#ifndef AIRLOCK_UIDLIST_H
#define AIRLOCK_UIDLIST_H

#include <stddef.h>
#include <sys/queue.h>
#include <sys/types.h>

/* static struct etype *name(const struct otype *o, uid_t uid): uid's entry
 * in o->head (linked by field), or NULL. */
#define UIDLIST_FIND_GENERATE(name, otype, etype, head, field)                                     \
	static struct etype *name(const struct otype *o, uid_t uid)                                \
	{                                                                                          \
		struct etype *u;                                                                   \
                                                                                                   \
		TAILQ_FOREACH(u, &o->head, field)                                                  \
		if (u->uid == uid)                                                                 \
			return u;                                                                  \
		return NULL;                                                                       \
	}

#endif
