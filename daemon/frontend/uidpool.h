/* uidpool.h: per-run uid slots, never shared by two live runs. */
#ifndef AIRLOCKD_UIDPOOL_H
#define AIRLOCKD_UIDPOOL_H

#include <stdbool.h>
#include <stdint.h>

struct uidpool {
	uint32_t nslots;
	uint32_t next;	/* round-robin start, so a freed uid rests before reuse */
	uint32_t nused; /* slots in use (the run queue asks on every pass) */
	uint8_t *used;
};

int uidpool_init(struct uidpool *p, uint32_t nslots);
void uidpool_free(struct uidpool *p);
/* Take a free slot; -EBUSY when all are in use. */
int uidpool_get(struct uidpool *p, uint32_t *ret_slot);
/* Give a slot back: only after the sandbox that used it was reaped. */
void uidpool_put(struct uidpool *p, uint32_t slot);
uint32_t uidpool_in_use(const struct uidpool *p);

#endif
