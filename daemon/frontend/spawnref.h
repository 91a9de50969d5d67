/*
 * spawnref.h: the frontend's registry of what it has at the spawner. Every
 * sandbox and keeper the frontend asks for is known there by a key of its
 * own; the spawner's STARTED, FAILED and DONE come back under it, and the
 * registry names the one owner each event is for: the pool of prepared
 * sandboxes, a run, or a session. Keys come from their own counter (not run
 * ids), are never 0 and never one still in use.
 *
 * A reference also holds the uid slot its process runs in, if it has one of
 * its own (a pool sandbox, a one-shot run's, a keeper; a session's run uses
 * its keeper's): taken from the pool when the reference is made, given back
 * when it is forgotten, which its owner does once the process was reaped.
 * A pool sandbox handed to a run keeps its key, and so its slot.
 */
#ifndef AIRLOCKD_SPAWNREF_H
#define AIRLOCKD_SPAWNREF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

struct uidpool;

enum spawnref_kind {
	SPAWNREF_POOL = 0,   /* a prepared sandbox no run took yet: owner is a struct prep */
	SPAWNREF_RUN = 1,    /* a run's sandbox: owner is a struct run */
	SPAWNREF_KEEPER = 2, /* a session's keeper: owner is a struct session */
	SPAWNREF_ZYGOTE = 3, /* a caller's zygote (zygotes.h): owner is a struct zygote */
};

struct spawnref {
	TAILQ_ENTRY(spawnref) entry;
	uint32_t key;
	enum spawnref_kind kind;
	void *owner;
	uint32_t slot;	 /* the uid slot it holds, if holds_slot */
	bool holds_slot; /* given back to the pool by spawnref_del() */
};

TAILQ_HEAD(spawnref_list, spawnref);

struct spawnrefs {
	struct spawnref_list list;
	uint32_t next_key;
	uint32_t n;
	struct uidpool *uids; /* where the slots come from and go back to */
};

void spawnrefs_init(struct spawnrefs *t, struct uidpool *uids);
/* Register an owner under a new key, with no uid slot of its own (a
 * session's run: its keeper's reference holds the slot); 0, -ENOSPC (no
 * key left) or -ENOMEM. */
int spawnref_add(struct spawnrefs *t, enum spawnref_kind kind, void *owner, uint32_t *ret_key);
/* The same with a uid slot of its own, taken from the pool now (*ret_slot)
 * and given back by spawnref_del(); 0, -EBUSY (no slot free), -ENOSPC or
 * -ENOMEM, with nothing taken. */
int spawnref_add_slot(struct spawnrefs *t, enum spawnref_kind kind, void *owner, uint32_t *ret_key,
		      uint32_t *ret_slot);
/* The reference of a key, or NULL. */
struct spawnref *spawnref_find(const struct spawnrefs *t, uint32_t key);
/* Hand a key to another owner (a pool sandbox taken by a run): the key stays. */
int spawnref_hand(struct spawnrefs *t, uint32_t key, enum spawnref_kind kind, void *owner);
/* Forget a key (its owner is done with it: its process was reaped, or never
 * was) and give its uid slot back; an unknown key is ignored. */
void spawnref_del(struct spawnrefs *t, uint32_t key);

#endif
