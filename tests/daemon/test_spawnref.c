/* test_spawnref.c: unit tests of daemon/spawnref.c (keys never 0 nor reused
 * while in use, one owner per key, hand-over keeps the key). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "spawnref.h"

static int owners[4];

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
	spawnrefs_init(&t);
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
	spawnrefs_init(&t);
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
	spawnrefs_init(&t);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_and_delete),
		cmocka_unit_test(test_hand_over),
		cmocka_unit_test(test_wrap_skips_zero_and_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
