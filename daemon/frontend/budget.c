/* budget.c: per-uid accounting of what the frontend holds for each uid. */
#include "budget.h"
#include "uidlist.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memfd.h"

uint32_t
budget_nofile_share(unsigned div, uint32_t min)
{
	struct rlimit rl;
	rlim_t n = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	n /= div;
	if (n < min)
		n = min;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

void
budget_init(struct budget *b, uint32_t fds_max)
{
	TAILQ_INIT(&b->uids);
	b->nheld = 0;
	b->bytes = 0;
	b->fds = 0;
	b->fds_max = fds_max;
	/*
	 * Each probe is an fd of the frontend's own table, as the fds of
	 * queued replies are (fds_max, half of RLIMIT_NOFILE), and a run's
	 * artifacts, pipes and copies are: probes get a quarter of the
	 * replies' share (65,536 under systemd's default hard limit; 32 of a
	 * limit of 256, with which front-budget's unread-fds case still has
	 * its frontend run out of fds for results when it was a half).
	 */
	b->held_max = fds_max / 4;
}

void
budget_free(struct budget *b)
{
	struct budget_uid *u;
	struct budget_held *h;

	while ((u = TAILQ_FIRST(&b->uids)) != NULL) {
		while ((h = TAILQ_FIRST(&u->held_list)) != NULL) {
			TAILQ_REMOVE(&u->held_list, h, entry);
			close(h->probe);
			free(h);
		}
		TAILQ_REMOVE(&b->uids, u, entry);
		free(u);
	}
	b->nheld = 0;
	b->bytes = 0;
	b->fds = 0;
}

/* The entry of uid, or NULL. */
UIDLIST_FIND_GENERATE(budget_find, budget, budget_uid, uids, entry)

int
budget_charge(struct budget *b, uid_t uid, uint64_t bytes, uint32_t fds, uint64_t max_bytes,
	      uint32_t max_fds)
{
	struct budget_uid *u = budget_find(b, uid);
	uint64_t have_bytes = u != NULL ? u->bytes : 0;
	uint32_t have_fds = u != NULL ? u->fds : 0;

	if (bytes > max_bytes || have_bytes > max_bytes - bytes)
		return -ENOSPC;
	if (fds > max_fds || have_fds > max_fds - fds)
		return -ENOSPC;
	if (fds > b->fds_max || b->fds > b->fds_max - fds)
		return -ENOSPC;
	if (bytes == 0 && fds == 0)
		return 0;
	if (u == NULL) {
		u = calloc(1, sizeof(*u));
		if (u == NULL)
			return -ENOMEM;
		u->uid = uid;
		TAILQ_INIT(&u->held_list);
		TAILQ_INSERT_TAIL(&b->uids, u, entry);
	}
	u->bytes += bytes;
	u->fds += fds;
	b->bytes += bytes;
	b->fds += fds;
	return 0;
}

void
budget_release(struct budget *b, uid_t uid, uint64_t bytes, uint32_t fds)
{
	struct budget_uid *u = budget_find(b, uid);

	if (u == NULL)
		return;
	/* Never below zero, whatever a caller gets wrong. */
	bytes = bytes < u->bytes ? bytes : u->bytes;
	fds = fds < u->fds ? fds : u->fds;
	u->bytes -= bytes;
	u->fds -= fds;
	b->bytes -= bytes;
	b->fds -= fds;
	if (u->bytes == 0 && u->fds == 0 && u->held == 0) {
		TAILQ_REMOVE(&b->uids, u, entry);
		free(u);
	}
}

int
budget_hold(struct budget *b, uid_t uid, int probe, uint64_t bytes, uint32_t max_held)
{
	struct budget_uid *u = budget_find(b, uid);
	struct budget_held *h;

	/* Only what was charged can be held: the caller charged it first. */
	if (u == NULL || u->bytes < bytes)
		return -EINVAL;
	/*
	 * Each probe is an fd of the frontend's: bounded per uid (one uid
	 * cannot take the others' share, and its sweeps stay short) and in
	 * all (the fd table). Past either the reply is refused, never sent
	 * untracked (client.c, docs/security.md "Results a client keeps").
	 */
	if (budget_held_room(b, uid, max_held) == 0)
		return -ENOSPC;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->probe = probe;
	h->bytes = bytes;
	TAILQ_INSERT_TAIL(&u->held_list, h, entry);
	b->nheld++;
	u->held++;
	return 0;
}

uint32_t
budget_held_room(const struct budget *b, uid_t uid, uint32_t max_held)
{
	uint32_t mine = budget_held(b, uid);
	uint32_t room_uid = mine < max_held ? max_held - mine : 0;
	uint32_t room_all = b->nheld < b->held_max ? b->held_max - b->nheld : 0;

	return room_uid < room_all ? room_uid : room_all;
}

/* Sweep u's probes; u may be freed (nothing else left charged to it). */
static unsigned
budget_sweep_uid(struct budget *b, struct budget_uid *u)
{
	struct budget_held *h, *next;
	uid_t uid = u->uid;
	unsigned n = 0;

	for (h = TAILQ_FIRST(&u->held_list); h != NULL; h = next) {
		uint64_t bytes = h->bytes;

		next = TAILQ_NEXT(h, entry);
		/*
		 * 0: still open somewhere. 1: let go. An error (leases off,
		 * fs.leases-enable = 0) cannot be told either way: it is let
		 * go, as when it was read, rather than held for ever.
		 */
		if (memfd_released(h->probe) == 0)
			continue;
		TAILQ_REMOVE(&u->held_list, h, entry);
		b->nheld--;
		u->held--;
		close(h->probe);
		free(h);
		n++;
		/* Frees u only when nothing is left, held ones included: then
		 * next is NULL (u's list is empty). */
		budget_release(b, uid, bytes, 0);
	}
	return n;
}

unsigned
budget_sweep(struct budget *b, uid_t uid, bool all)
{
	struct budget_uid *u, *next;
	unsigned n = 0;

	if (!all) {
		u = budget_find(b, uid);
		return u != NULL ? budget_sweep_uid(b, u) : 0;
	}
	for (u = TAILQ_FIRST(&b->uids); u != NULL; u = next) {
		next = TAILQ_NEXT(u, entry);
		n += budget_sweep_uid(b, u);
	}
	return n;
}

uint32_t
budget_held(const struct budget *b, uid_t uid)
{
	const struct budget_uid *u = budget_find(b, uid);

	return u != NULL ? u->held : 0;
}

uint64_t
budget_bytes_left(const struct budget *b, uid_t uid, uint64_t max_bytes)
{
	uint64_t have = budget_bytes(b, uid);

	return have < max_bytes ? max_bytes - have : 0;
}

uint64_t
budget_bytes(const struct budget *b, uid_t uid)
{
	const struct budget_uid *u = budget_find(b, uid);

	return u != NULL ? u->bytes : 0;
}

uint32_t
budget_fds(const struct budget *b, uid_t uid)
{
	const struct budget_uid *u = budget_find(b, uid);

	return u != NULL ? u->fds : 0;
}

uint64_t
budget_fd_bytes(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || st.st_blocks < 0)
		return 0;
	return (uint64_t)st.st_blocks * 512U;
}
