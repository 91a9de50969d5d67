/* test_spawnref.c: unit tests of daemon/frontend/spawnref.c (keys never 0 nor reused
 * while in use, one owner per key, hand-over keeps the key, a key holds its
 * uid slot until it is forgotten). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spawnref.h"
#include "uidpool.h"

static int owners[4];

/* uidpool_get() and uidpool_put() are link seams (uidpool.c is not linked):
 * a pool of MOCK_SLOTS slots that counts what comes back. */
#define MOCK_SLOTS 2
static bool mock_used[MOCK_SLOTS];
static int mock_puts;

int
uidpool_get(struct uidpool *p, uint32_t *ret_slot)
{
	uint32_t i;

	(void)p;
	for (i = 0; i < MOCK_SLOTS; i++) {
		if (!mock_used[i]) {
			mock_used[i] = true;
			*ret_slot = i;
			return 0;
		}
	}
	return -EBUSY;
}

void
uidpool_put(struct uidpool *p, uint32_t slot)
{
	(void)p;
	assert_true(slot < MOCK_SLOTS);
	assert_true(mock_used[slot]);
	mock_used[slot] = false;
	mock_puts++;
}

/* Add one and return its key. */
static uint32_t
add(struct spawnrefs *t, enum spawnref_kind kind, void *owner)
{
	uint32_t key = 0;

	assert_int_equal(spawnref_add(t, kind, owner, &key), 0);
	assert_int_not_equal(key, 0);
	return key;
}

/* Each key finds its own owner; an unknown or deleted key finds nothing. */
static void
test_find_and_delete(void **state)
{
	struct spawnrefs t;
	struct spawnref *ref;
	uint32_t k1, k2, k3;

	(void)state;
	spawnrefs_init(&t, NULL);
	assert_null(spawnref_find(&t, 0));
	assert_null(spawnref_find(&t, 1));
	k1 = add(&t, SPAWNREF_POOL, &owners[0]);
	k2 = add(&t, SPAWNREF_RUN, &owners[1]);
	k3 = add(&t, SPAWNREF_KEEPER, &owners[2]);
	assert_true(k1 != k2 && k2 != k3 && k1 != k3);
	assert_int_equal(t.n, 3);
	ref = spawnref_find(&t, k2);
	assert_non_null(ref);
	assert_int_equal(ref->kind, SPAWNREF_RUN);
	assert_ptr_equal(ref->owner, &owners[1]);
	ref = spawnref_find(&t, k3);
	assert_int_equal(ref->kind, SPAWNREF_KEEPER);
	assert_ptr_equal(ref->owner, &owners[2]);
	spawnref_del(&t, k2);
	assert_null(spawnref_find(&t, k2));
	assert_int_equal(t.n, 2);
	/* Deleting twice, or a key never given, is harmless. */
	spawnref_del(&t, k2);
	spawnref_del(&t, 0);
	assert_int_equal(t.n, 2);
	assert_ptr_equal(spawnref_find(&t, k1)->owner, &owners[0]);
	spawnref_del(&t, k1);
	spawnref_del(&t, k3);
	assert_int_equal(t.n, 0);
}

/* A pool sandbox taken by a run: same key, new kind and owner. */
static void
test_hand_over(void **state)
{
	struct spawnrefs t;
	uint32_t k;

	(void)state;
	spawnrefs_init(&t, NULL);
	k = add(&t, SPAWNREF_POOL, &owners[0]);
	assert_int_equal(spawnref_hand(&t, k, SPAWNREF_RUN, &owners[3]), 0);
	assert_int_equal(spawnref_find(&t, k)->kind, SPAWNREF_RUN);
	assert_ptr_equal(spawnref_find(&t, k)->owner, &owners[3]);
	assert_int_equal(spawnref_hand(&t, k + 1, SPAWNREF_RUN, &owners[3]), -ENOENT);
	spawnref_del(&t, k);
}

/* A wrapped counter skips 0 and the keys still in use. */
static void
test_wrap_skips_zero_and_used(void **state)
{
	struct spawnrefs t;
	uint32_t k1, k2, k3;

	(void)state;
	spawnrefs_init(&t, NULL);
	t.next_key = 0;
	k1 = add(&t, SPAWNREF_RUN, &owners[0]); /* 1, still in use */
	assert_int_equal(k1, 1);
	t.next_key = UINT32_MAX - 1;
	k2 = add(&t, SPAWNREF_RUN, &owners[1]);
	assert_int_equal(k2, UINT32_MAX);
	k3 = add(&t, SPAWNREF_RUN, &owners[2]); /* 0 and 1 skipped */
	assert_int_equal(k3, 2);
	spawnref_del(&t, k1);
	spawnref_del(&t, k2);
	spawnref_del(&t, k3);
}

/* A key made with a slot holds it: the slot is taken at once, given back
 * when the key is forgotten (once), kept across a hand-over; with no slot
 * free nothing is registered. A key without a slot gives nothing back. */
static void
test_key_holds_its_slot(void **state)
{
	struct spawnrefs t;
	uint32_t k1, k2, k3, s1 = 99, s2 = 99, s3 = 99, kx = 0, sx = 99;

	(void)state;
	memset(mock_used, 0, sizeof(mock_used));
	mock_puts = 0;
	spawnrefs_init(&t, NULL);
	assert_int_equal(spawnref_add_slot(&t, SPAWNREF_POOL, &owners[0], &k1, &s1), 0);
	assert_int_equal(spawnref_add_slot(&t, SPAWNREF_KEEPER, &owners[1], &k2, &s2), 0);
	assert_true(s1 < MOCK_SLOTS && s2 < MOCK_SLOTS && s1 != s2);
	assert_true(spawnref_find(&t, k1)->holds_slot);
	assert_int_equal(spawnref_find(&t, k1)->slot, s1);
	/* No slot free: -EBUSY, no key, nothing written. */
	assert_int_equal(spawnref_add_slot(&t, SPAWNREF_RUN, &owners[2], &kx, &sx), -EBUSY);
	assert_int_equal(t.n, 2);
	assert_int_equal(kx, 0);
	assert_int_equal(sx, 99);
	/* A session's run: a key, no slot. */
	k3 = add(&t, SPAWNREF_RUN, &owners[2]);
	assert_false(spawnref_find(&t, k3)->holds_slot);
	spawnref_del(&t, k3);
	assert_int_equal(mock_puts, 0);
	/* A pool sandbox taken by a run: the slot goes with the key. */
	assert_int_equal(spawnref_hand(&t, k1, SPAWNREF_RUN, &owners[3]), 0);
	assert_int_equal(mock_puts, 0);
	spawnref_del(&t, k1);
	assert_int_equal(mock_puts, 1);
	assert_false(mock_used[s1]);
	spawnref_del(&t, k1);
	assert_int_equal(mock_puts, 1);
	/* The slot given back is there for the next key. */
	assert_int_equal(spawnref_add_slot(&t, SPAWNREF_RUN, &owners[2], &k3, &s3), 0);
	assert_int_equal(s3, s1);
	spawnref_del(&t, k2);
	spawnref_del(&t, k3);
	assert_int_equal(mock_puts, 3);
	assert_int_equal(t.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_and_delete),
		cmocka_unit_test(test_hand_over),
		cmocka_unit_test(test_wrap_skips_zero_and_used),
		cmocka_unit_test(test_key_holds_its_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
