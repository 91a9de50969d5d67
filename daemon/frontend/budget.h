/*
 * budget.h: what the frontend holds on each uid's behalf, counted against
 * that uid's budget: bytes (queued plans, replies queued or unread, artifact
 * copies, and the memfds of replies until the client closed them) and fds
 * (in replies queued or sent but not yet read). See docs/security.md,
 * "Bounds".
 */
#ifndef AIRLOCKD_BUDGET_H
#define AIRLOCKD_BUDGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

/* A memfd given to a client: its bytes stay charged until it is let go. */
struct budget_held {
	TAILQ_ENTRY(budget_held) entry;
	int probe; /* our own description (memfd_released()) */
	uint64_t bytes;
};

TAILQ_HEAD(budget_held_list, budget_held);

struct budget_uid {
	TAILQ_ENTRY(budget_uid) entry;
	uid_t uid;
	uint64_t bytes;
	uint32_t fds;
	/* Memfds given to its clients and not yet let go, and their count:
	 * kept per uid so that a uid's sweep probes its own only. */
	struct budget_held_list held_list;
	uint32_t held;
};

TAILQ_HEAD(budget_uid_list, budget_uid);

struct budget {
	struct budget_uid_list uids; /* uids holding something */
	uint64_t bytes;		     /* all uids */
	uint32_t fds;		     /* all uids */
	uint32_t fds_max;	     /* all uids: a share of RLIMIT_NOFILE */
	uint32_t nheld;		     /* memfds given to clients, all uids: the probes' fds */
	uint32_t held_max;	     /* at most: a quarter of fds_max */
};

void budget_init(struct budget *b, uint32_t fds_max);

/* The soft RLIMIT_NOFILE (1024 when unlimited) divided by div, at least min. */
uint32_t budget_nofile_share(unsigned div, uint32_t min);
void budget_free(struct budget *b);

/*
 * Charge bytes and fds to uid if they fit under max_bytes and max_fds for
 * that uid and fds_max in all. -ENOSPC (nothing charged) if not; -ENOMEM.
 */
int budget_charge(struct budget *b, uid_t uid, uint64_t bytes, uint32_t fds, uint64_t max_bytes,
		  uint32_t max_fds);

/* Give back what budget_charge() took (any split of it). */
void budget_release(struct budget *b, uid_t uid, uint64_t bytes, uint32_t fds);

/* Bytes uid may still be charged under max_bytes. */
uint64_t budget_bytes_left(const struct budget *b, uid_t uid, uint64_t max_bytes);

/* What uid holds now. */
uint64_t budget_bytes(const struct budget *b, uid_t uid);
uint32_t budget_fds(const struct budget *b, uid_t uid);

/*
 * Keep bytes (already charged to uid) charged until the memfd of probe is
 * let go by the client it was given to (memfd_give()); takes probe.
 * -ENOSPC when uid holds max_held probes already or all uids held_max,
 * -EINVAL when bytes were not charged, -ENOMEM (probe not taken then).
 */
int budget_hold(struct budget *b, uid_t uid, int probe, uint64_t bytes, uint32_t max_held);

/* How many more probes uid may hold: under max_held for it, held_max in all. */
uint32_t budget_held_room(const struct budget *b, uid_t uid, uint32_t max_held);

/*
 * Give back what was held for the memfds that were let go: uid's (a probe
 * of each it holds, at most its max_held), or every uid's when all.
 * Returns how many were let go.
 */
unsigned budget_sweep(struct budget *b, uid_t uid, bool all);

/* Memfds given to uid's clients and not let go yet (as of the last sweep). */
uint32_t budget_held(const struct budget *b, uid_t uid);

/* Memory a file holds: its allocated blocks (a sparse file's holes are free). */
uint64_t budget_fd_bytes(int fd);

#endif
