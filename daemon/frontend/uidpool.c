/* uidpool.c: a round-robin allocator of per-run uid slots. */
#include "uidpool.h"

#include <errno.h>
#include <stdlib.h>

#include "clear.h"

int
uidpool_init(struct uidpool *p, uint32_t nslots)
{
	if (nslots == 0)
		return -EINVAL;
	p->used = calloc(nslots, 1);
	if (p->used == NULL)
		return -ENOMEM;
	p->nslots = nslots;
	p->next = 0;
	p->nused = 0;
	return 0;
}

void
uidpool_free(struct uidpool *p)
{
	if (p == NULL)
		return;
	CLEAR_FREE(p, p->used);
}

int
uidpool_get(struct uidpool *p, uint32_t *ret_slot)
{
	uint32_t i;

	for (i = 0; i < p->nslots; i++) {
		uint32_t s = (p->next + i) % p->nslots;

		if (!p->used[s]) {
			p->used[s] = 1;
			p->nused++;
			p->next = (s + 1) % p->nslots;
			*ret_slot = s;
			return 0;
		}
	}
	return -EBUSY;
}

void
uidpool_put(struct uidpool *p, uint32_t slot)
{
	if (slot < p->nslots && p->used[slot]) {
		p->used[slot] = 0;
		p->nused--;
	}
}

uint32_t
uidpool_in_use(const struct uidpool *p)
{
	return p->nused;
}
