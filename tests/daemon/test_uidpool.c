/* test_uidpool.c: unit tests of daemon/frontend/uidpool.c (exclusive slots, round-robin, counts).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uidpool.h"

#define NSLOTS 8

/* A fresh pool of NSLOTS per test. */
static int
setup(void **state)
{
	struct uidpool *p = calloc(1, sizeof(*p));

	if (p == NULL || uidpool_init(p, NSLOTS) != 0) {
		free(p);
		return -1;
	}
	*state = p;
	return 0;
}

/* Free the pool of one test. */
static int
teardown(void **state)
{
	struct uidpool *p = *state;

	uidpool_free(p);
	free(p);
	return 0;
}

/* Exhausting the pool hands out every slot exactly once, then -EBUSY. */
static void
test_exhaust_distinct_then_busy(void **state)
{
	struct uidpool *p = *state;
	uint8_t seen[NSLOTS] = {0};
	uint32_t slot, i;

	for (i = 0; i < NSLOTS; i++) {
		slot = UINT32_MAX;
		assert_int_equal(uidpool_get(p, &slot), 0);
		assert_true(slot < NSLOTS);
		assert_int_equal(seen[slot], 0);
		seen[slot] = 1;
		assert_int_equal(uidpool_in_use(p), i + 1);
	}
	slot = 4242;
	assert_int_equal(uidpool_get(p, &slot), -EBUSY);
	/* ret_slot is written only on success. */
	assert_int_equal(slot, 4242);
	assert_int_equal(uidpool_in_use(p), NSLOTS);
}

/* A slot that is given back can be taken again, and only that one. */
static void
test_put_then_get(void **state)
{
	struct uidpool *p = *state;
	uint32_t slots[NSLOTS], slot, i;

	for (i = 0; i < NSLOTS; i++)
		assert_int_equal(uidpool_get(p, &slots[i]), 0);
	uidpool_put(p, slots[5]);
	assert_int_equal(uidpool_in_use(p), NSLOTS - 1);
	assert_int_equal(uidpool_get(p, &slot), 0);
	assert_int_equal(slot, slots[5]);
	assert_int_equal(uidpool_in_use(p), NSLOTS);
	assert_int_equal(uidpool_get(p, &slot), -EBUSY);
}

/* A freed slot rests: the next get hands out another free slot. */
static void
test_round_robin(void **state)
{
	struct uidpool *p = *state;
	uint32_t a, b, c;

	assert_int_equal(uidpool_get(p, &a), 0);
	uidpool_put(p, a);
	assert_int_equal(uidpool_get(p, &b), 0);
	assert_int_not_equal(b, a);
	uidpool_put(p, b);
	assert_int_equal(uidpool_get(p, &c), 0);
	assert_int_not_equal(c, a);
	assert_int_not_equal(c, b);
	assert_int_equal(uidpool_in_use(p), 1);
}

/* Over many get/put cycles with one slot held, the held slot is never handed
 * out and the others come round in turn. */
static void
test_held_slot_never_reissued(void **state)
{
	struct uidpool *p = *state;
	uint32_t held, s, i;

	assert_int_equal(uidpool_get(p, &held), 0);
	assert_int_equal(held, 0);
	for (i = 0; i < 10 * NSLOTS; i++) {
		assert_int_equal(uidpool_get(p, &s), 0);
		assert_int_not_equal(s, held);
		assert_int_equal(s, 1 + i % (NSLOTS - 1));
		uidpool_put(p, s);
	}
	assert_int_equal(uidpool_in_use(p), 1);
}

/* in_use follows gets and puts; putting a free or out-of-range slot changes nothing. */
static void
test_in_use_counts(void **state)
{
	struct uidpool *p = *state;
	uint32_t a, b;

	assert_int_equal(uidpool_in_use(p), 0);
	assert_int_equal(uidpool_get(p, &a), 0);
	assert_int_equal(uidpool_get(p, &b), 0);
	assert_int_equal(uidpool_in_use(p), 2);
	uidpool_put(p, a);
	assert_int_equal(uidpool_in_use(p), 1);
	uidpool_put(p, a);
	assert_int_equal(uidpool_in_use(p), 1);
	uidpool_put(p, NSLOTS);
	uidpool_put(p, UINT32_MAX);
	assert_int_equal(uidpool_in_use(p), 1);
	uidpool_put(p, b);
	assert_int_equal(uidpool_in_use(p), 0);
}

/* A pool of zero slots is refused; freeing NULL or twice is harmless. */
static void
test_init_zero_and_free_null(void **state)
{
	struct uidpool p;
	uint32_t slot;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(uidpool_init(&p, 0), -EINVAL);
	assert_null(p.used);
	uidpool_free(NULL);
	assert_int_equal(uidpool_init(&p, 1), 0);
	assert_int_equal(uidpool_get(&p, &slot), 0);
	assert_int_equal(slot, 0);
	assert_int_equal(uidpool_get(&p, &slot), -EBUSY);
	uidpool_free(&p);
	assert_null(p.used);
	assert_int_equal(p.nslots, 0);
	uidpool_free(&p);
	/* A freed pool has nothing to hand out. */
	assert_int_equal(uidpool_get(&p, &slot), -EBUSY);
}

/* A freed pool is all zero, as one never initialised: its round-robin
 * start too (CLEAR_FREE, common/clear.h), so nothing of the old pool is
 * left to read. */
static void
test_free_zeroes_everything(void **state)
{
	struct uidpool p, zero;
	uint32_t slot;

	(void)state;
	memset(&zero, 0, sizeof(zero));
	assert_int_equal(uidpool_init(&p, 3), 0);
	assert_int_equal(uidpool_get(&p, &slot), 0);
	assert_int_not_equal(p.next, 0);
	uidpool_free(&p);
	assert_memory_equal(&p, &zero, sizeof(p));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exhaust_distinct_then_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_then_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_robin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_slot_never_reissued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_use_counts, setup, teardown),
		cmocka_unit_test(test_init_zero_and_free_null),
		cmocka_unit_test(test_free_zeroes_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
