/*
 * zygotes.h: the frontend's registry of zygotes (docs/design-bursts.md
 * §3.6): one per (python runtime with zygote = yes, caller uid) with runs,
 * each holding a uid slot of the pool (U_z, its spawn key's: spawnref.h)
 * and one of its caller's run slots (admit_decide, ADMIT_ZYGOTE) for its
 * life, its lifecycle the table of zygote_state.h. Stopped when idle for
 * zygote_idle_s, after zygote_forks runs, at a reload that drops its key;
 * started again after a death or a failed start with a back-off, while
 * its caller asked for it during zygote_idle_s.
 */
#ifndef AIRLOCKD_ZYGOTES_H
#define AIRLOCKD_ZYGOTES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "proto.h"
#include "zygote_state.h"

struct daemon;
struct event;
struct spawn_ev;

struct zygote {
	TAILQ_ENTRY(zygote) entry;
	struct daemon *d;
	enum zygote_state state;
	uid_t uid;			     /* its caller */
	char runtime[PROTO_RUNTIME_MAX + 1]; /* its runtime, by name (a reload renumbers) */
	uint32_t key, slot;		     /* at the spawner (starting, live, stopping) */
	bool has_key;
	uint32_t forks;	     /* runs handed to this process */
	uint32_t backoff_ms; /* the last wait; 0 after a run served */
	struct event *timer; /* idle (live) or back-off (waiting) */
	uint64_t asked_ms;   /* clock_now_ms() of the last zygotes_get() for it */
};
TAILQ_HEAD(zygote_list, zygote);

/* The list and its count; 0 or -ENOMEM. */
int zygotes_init(struct daemon *d);
/*
 * An eligible run of uid of runtime index rt (zygote = yes): the caller's
 * live zygote, or NULL. With none at all, one is asked for now (admitted
 * through admit_decide; refused: none), and the run goes the ordinary way.
 */
struct zygote *zygotes_get(struct daemon *d, uid_t uid, int rt);
/* The live zygote whose key is key, or NULL. */
struct zygote *zygotes_live(struct daemon *d, uint32_t key);
/* Zygotes of uid that hold a run slot (not waiting); all uids' with uid -1. */
uint32_t zygotes_count_uid(const struct daemon *d, uid_t uid);
/* Live zygotes with no run in flight, of uid (all uids' with -1). */
uint32_t zygotes_idle_count(const struct daemon *d, uid_t uid);
/* A queued run waits for a run slot a zygote no run uses holds: the one of
 * uid (any with -1) asked for longest ago is stopped; its reap frees the
 * slot and dispatches again. */
void zygotes_give_way(struct daemon *d, uid_t uid);
/* A run was handed to z: its idle time starts again; after zygote_forks
 * runs it is replaced (stopped; the next run asks for a new one). */
void zygotes_ran(struct zygote *z);
/* The supervisor ran a zygote run of key the ordinary way (SUP_EXIT's
 * SUP_ZYGOTE_FELL_BACK, err its cause): logged; the zygote is stopped and
 * started again after the back-off. */
void zygotes_fell_back(struct daemon *d, uint32_t key, int err);
/* STARTED, FAILED, ZYGOTE_GONE of z's key (frontend_spawner_keyed). */
void zygotes_event(struct zygote *z, const struct spawn_ev *ev);
/* After a reload: every zygote is stopped (its python and environment are
 * the old config's); the next run of a zygote runtime asks for a new one. */
void zygotes_reloaded(struct daemon *d);

#endif
