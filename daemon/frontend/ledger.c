/*
 * ledger.c: the per-uid ledger of what the frontend holds (ledger.h). A
 * record per uid holding anything, freed when it holds nothing; the totals
 * of all uids beside. Every charge is a ticket's, so every release gives
 * back exactly what was taken, once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "ledger.h"
#include "log.h"

void
ledger_init(struct ledger *l)
{
	memset(l, 0, sizeof(*l));
}

void
ledger_free(struct ledger *l)
{
	if (l != NULL) {
		free(l->recs);
		ledger_init(l);
	}
}

/* uid's record, or NULL. */
static struct ledger_rec *
ledger_find(const struct ledger *l, uid_t uid)
{
	size_t i = 0;

	while (i < l->nrecs && l->recs[i].uid != uid)
		i++;
	return i < l->nrecs ? &l->recs[i] : NULL;
}

/* A new, empty record for uid; NULL when out of memory. */
static struct ledger_rec *
ledger_rec_new(struct ledger *l, uid_t uid)
{
	struct ledger_rec *r;

	if (l->nrecs == l->cap) {
		size_t cap = l->cap != 0 ? 2 * l->cap : 8;

		r = reallocarray(l->recs, cap, sizeof(*r));
		if (r == NULL)
			return NULL;
		l->recs = r;
		l->cap = cap;
	}
	r = &l->recs[l->nrecs++];
	memset(r, 0, sizeof(*r));
	r->uid = uid;
	return r;
}

void
ledger_get(const struct ledger *l, uid_t uid, struct ledger_uid *ret_uid,
	   struct ledger_uid *ret_all)
{
	const struct ledger_rec *r = ledger_find(l, uid);

	if (ret_uid != NULL) {
		if (r != NULL)
			*ret_uid = r->h;
		else
			memset(ret_uid, 0, sizeof(*ret_uid));
	}
	if (ret_all != NULL)
		*ret_all = l->all;
}

static bool
ledger_uid_empty(const struct ledger_uid *h)
{
	size_t i;

	for (i = 0; i < LEDGER_COUNT_; i++)
		if (h->n[i] != 0)
			return false;
	return h->bytes == 0 && h->fds == 0;
}

/*
 * Add d to a (sign > 0) or take it away. Taking more than is there is a
 * broken invariant (a double release, a ticket of another ledger): the
 * counts would wrap and let a uid past every cap, so it is fatal.
 */
static void
ledger_apply(struct ledger_uid *a, const struct ledger_uid *d, int sign)
{
	size_t i;

	for (i = 0; i < LEDGER_COUNT_; i++) {
		if (sign < 0 && a->n[i] < d->n[i])
			fatalx("ledger: count %zu below zero", i);
		a->n[i] = sign > 0 ? a->n[i] + d->n[i] : a->n[i] - d->n[i];
	}
	if (sign < 0 && (a->bytes < d->bytes || a->fds < d->fds))
		fatalx("ledger: bytes or fds below zero");
	a->bytes = sign > 0 ? a->bytes + d->bytes : a->bytes - d->bytes;
	a->fds = sign > 0 ? a->fds + d->fds : a->fds - d->fds;
}

/* Apply d to uid's record (made on need, dropped when empty) and the totals. */
static int
ledger_move(struct ledger *l, uid_t uid, const struct ledger_uid *d, int sign)
{
	struct ledger_rec *r = ledger_find(l, uid);

	if (ledger_uid_empty(d))
		return 0;
	if (r == NULL && sign < 0)
		fatalx("ledger: uid %u holds nothing to give back", (unsigned)uid);
	if (r == NULL && (r = ledger_rec_new(l, uid)) == NULL)
		return -ENOMEM;
	ledger_apply(&r->h, d, sign);
	ledger_apply(&l->all, d, sign);
	if (ledger_uid_empty(&r->h))
		*r = l->recs[--l->nrecs]; /* the last takes its place */
	return 0;
}

/*
 * What a decision admitted, as counts: at the request a connection, a
 * session (and its interpreter), a queue place; at the start a run slot
 * for the queue place (an interpreter's run takes none: its cell holds
 * one), a cell's run slot. Bytes and fds come with ledger_add() once known
 * (a plan's pages after it is built). -EPERM: nothing to hold.
 */
static int
ledger_what(const struct admit_facts *f, const struct admit_decision *dec,
	    struct ledger_uid *ret_plus, struct ledger_uid *ret_minus)
{
	bool now = dec->verdict == ADMIT_NOW, queue = dec->verdict == ADMIT_QUEUE;
	bool run = f->kind == ADMIT_RUN || f->kind == ADMIT_SESSION_RUN ||
		   f->kind == ADMIT_INTERP_START;

	memset(ret_plus, 0, sizeof(*ret_plus));
	memset(ret_minus, 0, sizeof(*ret_minus));
	if (dec->verdict == ADMIT_REFUSE)
		return -EPERM;
	if (f->phase == ADMIT_AT_REQUEST) {
		if (f->kind == ADMIT_CONNECTION)
			ret_plus->n[LEDGER_CONNECTIONS] = 1; /* waiting for its hello too */
		else if (f->kind == ADMIT_SESSION_OPEN && now) {
			ret_plus->n[LEDGER_SESSIONS] = 1;
			ret_plus->n[LEDGER_INTERPRETERS] = f->runtime != NULL;
		} else if (run && queue)
			ret_plus->n[LEDGER_QUEUED] = 1;
		return 0;
	}
	if (!now)
		return -EPERM;
	if (run)
		ret_minus->n[LEDGER_QUEUED] = 1;
	if (f->kind == ADMIT_RUN || f->kind == ADMIT_SESSION_RUN || f->kind == ADMIT_CELL)
		ret_plus->n[LEDGER_RUNNING] = 1;
	return 0;
}

int
ledger_charge(struct ledger *l, const struct admit_facts *f, const struct admit_decision *dec,
	      struct ledger_ticket *t)
{
	struct ledger_uid plus, minus;
	int rc = ledger_what(f, dec, &plus, &minus);

	if (rc < 0)
		return rc;
	if (f->phase == ADMIT_AT_REQUEST ? t->live : (!t->live || t->l != l || t->uid != f->uid))
		return -EINVAL;
	if (f->phase == ADMIT_AT_START && t->h.n[LEDGER_QUEUED] < minus.n[LEDGER_QUEUED])
		return -EINVAL;
	rc = ledger_move(l, f->uid, &plus, 1);
	if (rc < 0)
		return rc;
	if (f->phase == ADMIT_AT_REQUEST) {
		memset(t, 0, sizeof(*t));
		t->l = l;
		t->uid = f->uid;
		t->live = true;
	}
	(void)ledger_move(l, f->uid, &minus, -1);
	ledger_apply(&t->h, &plus, 1);
	ledger_apply(&t->h, &minus, -1);
	return 0;
}

/*
 * Add to a live ticket (sign > 0) or give back from it. Giving back, the
 * ticket comes first: more than it holds is fatal before the ledger is
 * touched, so one ticket cannot give back another's.
 */
static void
ledger_adjust(struct ledger_ticket *t, enum ledger_count c, uint32_t n, uint64_t bytes,
	      uint32_t fds, int sign)
{
	struct ledger_uid d = {.bytes = bytes, .fds = fds};

	if (t == NULL || !t->live || (unsigned)c >= LEDGER_COUNT_)
		fatalx("ledger: a ticket not live");
	d.n[c] = n;
	if (sign < 0) {
		ledger_apply(&t->h, &d, -1);
		(void)ledger_move(t->l, t->uid, &d, -1);
		return;
	}
	if (ledger_move(t->l, t->uid, &d, 1) < 0)
		fatalx("out of memory");
	ledger_apply(&t->h, &d, 1);
}

void
ledger_add(struct ledger_ticket *t, enum ledger_count c, uint32_t n, uint64_t bytes, uint32_t fds)
{
	ledger_adjust(t, c, n, bytes, fds, 1);
}

void
ledger_sub(struct ledger_ticket *t, enum ledger_count c, uint32_t n, uint64_t bytes, uint32_t fds)
{
	ledger_adjust(t, c, n, bytes, fds, -1);
}

void
ledger_release(struct ledger_ticket *t)
{
	if (t == NULL || !t->live)
		return;
	(void)ledger_move(t->l, t->uid, &t->h, -1);
	memset(t, 0, sizeof(*t));
}
