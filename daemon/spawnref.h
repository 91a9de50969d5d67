/*
 * spawnref.h: the frontend's registry of what it has at the spawner. Every
 * sandbox and keeper the frontend asks for is known there by a key of its
 * own; the spawner's STARTED, FAILED and DONE come back under it, and the
 * registry names the one owner each event is for: the pool of prepared
 * sandboxes, a run, or a session. Keys come from their own counter (not run
 * ids), are never 0 and never one still in use.
 */
#ifndef AIRLOCKD_SPAWNREF_H
#define AIRLOCKD_SPAWNREF_H

#include <stdint.h>
#include <sys/queue.h>

enum spawnref_kind {
	SPAWNREF_POOL = 0,   /* a prepared sandbox no run took yet: owner is a struct prep */
	SPAWNREF_RUN = 1,    /* a run's sandbox: owner is a struct run */
	SPAWNREF_KEEPER = 2, /* a session's keeper: owner is a struct session */
};

struct spawnref {
	TAILQ_ENTRY(spawnref) entry;
	uint32_t key;
	enum spawnref_kind kind;
	void *owner;
};

TAILQ_HEAD(spawnref_list, spawnref);

struct spawnrefs {
	struct spawnref_list list;
	uint32_t next_key;
	uint32_t n;
};

void spawnrefs_init(struct spawnrefs *t);
/* Register an owner under a new key; 0 or -ENOMEM. */
int spawnref_add(struct spawnrefs *t, enum spawnref_kind kind, void *owner, uint32_t *ret_key);
/* The reference of a key, or NULL. */
struct spawnref *spawnref_find(const struct spawnrefs *t, uint32_t key);
/* Hand a key to another owner (a pool sandbox taken by a run): the key stays. */
int spawnref_hand(struct spawnrefs *t, uint32_t key, enum spawnref_kind kind, void *owner);
/* Forget a key (its owner is done with it); an unknown key is ignored. */
void spawnref_del(struct spawnrefs *t, uint32_t key);

#endif
