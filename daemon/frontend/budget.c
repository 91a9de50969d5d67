/* budget.c: per-uid accounting of what the frontend holds for each uid. */
#include "budget.h"

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
	TAILQ_INIT(&b->held);
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

	while ((h = TAILQ_FIRST(&b->held)) != NULL) {
		TAILQ_REMOVE(&b->held, h, entry);
		close(h->probe);
		free(h);
	}
	b->nheld = 0;
	while ((u = TAILQ_FIRST(&b->uids)) != NULL) {
		TAILQ_REMOVE(&b->uids, u, entry);
		free(u);
	}
	b->bytes = 0;
	b->fds = 0;
}

static struct budget_uid *
budget_find(const struct budget *b, uid_t uid)
{
	struct budget_uid *u;

	TAILQ_FOREACH(u, &b->uids, entry)
	if (u->uid == uid)
		return u;
	return NULL;
}

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
budget_hold(struct budget *b, uid_t uid, int probe, uint64_t bytes)
{
	struct budget_uid *u = budget_find(b, uid);
	struct budget_held *h;

	/* Only what was charged can be held: the caller charged it first. */
	if (u == NULL || u->bytes < bytes)
		return -EINVAL;
	if (b->nheld >= b->held_max)
		return -ENOSPC;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->uid = uid;
	h->probe = probe;
	h->bytes = bytes;
	TAILQ_INSERT_TAIL(&b->held, h, entry);
	b->nheld++;
	u->held++;
	return 0;
}

unsigned
budget_sweep(struct budget *b, uid_t uid, bool all)
{
	struct budget_held *h, *next;
	unsigned n = 0;

	for (h = TAILQ_FIRST(&b->held); h != NULL; h = next) {
		struct budget_uid *u;

		next = TAILQ_NEXT(h, entry);
		if (!all && h->uid != uid)
			continue;
		/*
		 * 0: still open somewhere. 1: let go. An error (leases off,
		 * fs.leases-enable = 0) cannot be told either way: it is let
		 * go, as when it was read, rather than held for ever.
		 */
		if (memfd_released(h->probe) == 0)
			continue;
		TAILQ_REMOVE(&b->held, h, entry);
		b->nheld--;
		u = budget_find(b, h->uid);
		if (u != NULL && u->held > 0)
			u->held--;
		close(h->probe);
		budget_release(b, h->uid, h->bytes, 0);
		free(h);
		n++;
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
