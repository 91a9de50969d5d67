/*
 * spawner_fixture.h: a spawner in the test's own process for the unit
 * tests of its table (test_spawner.c, test_spawner_zygote.c): well-formed
 * requests, a struct spawner over the caller's arrays, spawner_serve() on
 * a socketpair.
 */
#ifndef AIRLOCK_TEST_SPAWNER_FIXTURE_H
#define AIRLOCK_TEST_SPAWNER_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "spawn_msg.h"
#include "spawner.h"

/* The zygote's files the next spawner is given (NULL: none, as airlockd). */
extern const char *fix_script, *fix_ext;
/* serve_child (test_spawner_zygote.c): slot 1 holds a sandbox of slot 0's zygote */
extern bool fix_owned;

/* A well-formed request of type with flags (run_id 7). */
struct spawn_req req_of(uint32_t type, uint32_t flags);

/* A spawner on sock with nslots (at most 2) free uid slots from uid 100000,
 * in the caller's arrays (two of each); its runs' seccomp program allows
 * all, subprocess = no's is empty. */
void fixture(struct spawner *sp, int sock, uint32_t nslots, struct spawner_slot *slots,
	     struct spawner_slot *keepers, struct spawner_zygote_slot *zygotes);

/*
 * spawner_serve() on a socketpair, the packets queued before it runs and
 * our end shut for writing (its EOF ends the loop), with nslots uid slots
 * (none alive) and RLIMIT_NOFILE's soft limit at nofile (0: unchanged,
 * restored after). Returns what it did.
 */
int serve_with(int peer, int sock, uint32_t nslots, rlim_t nofile);

#endif
