/* test_runqueue.c: unit tests of daemon/runqueue.c (order within a uid,
 * round-robin between uids, bounds, removal, the can_start filter). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runqueue.h"

#define NITEMS 16

/* One queued thing: its item and a tag to recognise it. */
struct thing {
	struct runqueue_item q;
	int tag;
};

struct fixture {
	struct runqueue s;
	struct thing t[NITEMS];
	uid_t blocked; /* can_start refuses this uid's items (0 = none) */
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int i;

	if (f == NULL)
		return -1;
	runqueue_init(&f->s);
	for (i = 0; i < NITEMS; i++)
		f->t[i].tag = i;
	*state = f;
	return 0;
}

/* Empty the queue (frees its per-uid records), then the fixture. */
static int
teardown(void **state)
{
	struct fixture *f = *state;
	int i;

	for (i = 0; i < NITEMS; i++)
		runqueue_remove(&f->s, &f->t[i].q);
	free(f);
	return 0;
}

static bool
can_start(void *ctx, const struct runqueue_item *it)
{
	const struct fixture *f = ctx;

	return f->blocked == 0 || it->uid != f->blocked;
}

/* Pop one and return its tag, -1 for none. */
static int
pop_tag(struct fixture *f)
{
	struct runqueue_item *it = runqueue_pop(&f->s, can_start, f);

	if (it == NULL)
		return -1;
	assert_null(it->owner);
	return ((struct thing *)((char *)it - offsetof(struct thing, q)))->tag;
}

static void
push(struct fixture *f, int tag, uid_t uid)
{
	assert_int_equal(runqueue_push(&f->s, &f->t[tag].q, uid, NITEMS, NITEMS), 0);
}

/* An empty queue gives nothing; a removed item is not found again. */
static void
test_empty(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(pop_tag(f), -1);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 0);
	/* Removing what is not queued is harmless. */
	runqueue_remove(&f->s, &f->t[0].q);
	assert_int_equal(f->s.n, 0);
}

/* One uid: arrival order. */
static void
test_fifo_within_uid(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1000);
	push(f, 2, 1000);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 3);
	assert_int_equal(f->s.n, 3);
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(pop_tag(f), 1);
	assert_int_equal(pop_tag(f), 2);
	assert_int_equal(pop_tag(f), -1);
	assert_int_equal(f->s.n, 0);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 0);
}

/* Three uids, one of them with many runs: each uid gets its turn. */
static void
test_round_robin(void **state)
{
	struct fixture *f = *state;
	static const int want[] = {0, 4, 6, 1, 5, 2, 3};
	size_t i;

	push(f, 0, 1000);
	push(f, 1, 1000);
	push(f, 2, 1000);
	push(f, 3, 1000);
	push(f, 4, 1001);
	push(f, 5, 1001);
	push(f, 6, 1002);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(pop_tag(f), want[i]);
	assert_int_equal(pop_tag(f), -1);
}

/* A uid that joins goes after the uids already queued; when the uid served
 * last left, the round starts again at the first uid. */
static void
test_new_uid_joins_at_the_end(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1000);
	push(f, 2, 1001);
	assert_int_equal(pop_tag(f), 0);
	push(f, 3, 1002);
	assert_int_equal(pop_tag(f), 2); /* 1001 served, and gone */
	assert_int_equal(pop_tag(f), 1);
	assert_int_equal(pop_tag(f), 3);
}

/* The uid served last left the queue: start from the first uid queued. */
static void
test_last_uid_gone(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1001);
	push(f, 2, 1001);
	assert_int_equal(pop_tag(f), 0); /* 1000 served, and gone */
	push(f, 3, 1002);
	assert_int_equal(pop_tag(f), 1);
	assert_int_equal(pop_tag(f), 3);
	assert_int_equal(pop_tag(f), 2);
}

/* can_start skips a uid whose head may not start, without losing its turn
 * order for the others, and the skipped runs stay queued. */
static void
test_can_start_skips(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1000);
	push(f, 2, 1001);
	push(f, 3, 1001);
	f->blocked = 1000;
	assert_int_equal(pop_tag(f), 2);
	assert_int_equal(pop_tag(f), 3);
	assert_int_equal(pop_tag(f), -1);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 2);
	f->blocked = 0;
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(pop_tag(f), 1);
}

/* Bounds in all and per uid: -EBUSY, and nothing is queued by a refusal. */
static void
test_bounds(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(runqueue_push(&f->s, &f->t[0].q, 1000, 3, 2), 0);
	assert_int_equal(runqueue_push(&f->s, &f->t[1].q, 1000, 3, 2), 0);
	assert_int_equal(runqueue_push(&f->s, &f->t[2].q, 1000, 3, 2), -EBUSY);
	assert_null(f->t[2].q.owner);
	assert_int_equal(runqueue_push(&f->s, &f->t[3].q, 1001, 3, 2), 0);
	assert_int_equal(runqueue_push(&f->s, &f->t[4].q, 1002, 3, 2), -EBUSY);
	assert_null(f->t[4].q.owner);
	assert_int_equal(f->s.n, 3);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 2);
	assert_int_equal(runqueue_count_uid(&f->s, 1002), 0);
	/* Room again once one leaves. */
	runqueue_remove(&f->s, &f->t[0].q);
	assert_int_equal(runqueue_push(&f->s, &f->t[4].q, 1002, 3, 2), 0);
}

/* Removal from the middle, and of a uid's last item (its record goes). */
static void
test_remove(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1000);
	push(f, 2, 1000);
	push(f, 3, 1001);
	runqueue_remove(&f->s, &f->t[1].q);
	assert_null(f->t[1].q.owner);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 2);
	runqueue_remove(&f->s, &f->t[3].q);
	assert_int_equal(runqueue_count_uid(&f->s, 1001), 0);
	assert_int_equal(f->s.n, 2);
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(pop_tag(f), 2);
	assert_int_equal(pop_tag(f), -1);
}

/* An item taken but not started goes back to the head of its uid's queue,
 * before the runs that came after it. */
static void
test_push_head(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1000);
	push(f, 2, 1001);
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(runqueue_push_head(&f->s, &f->t[0].q, 1000), 0);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 2);
	assert_int_equal(f->s.n, 3);
	/* The turn was not used: 1000 is served again, then 1001. */
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(pop_tag(f), 2);
	assert_int_equal(pop_tag(f), 1);
	/* Back into an emptied queue, too. */
	assert_int_equal(runqueue_push_head(&f->s, &f->t[1].q, 1000), 0);
	assert_int_equal(pop_tag(f), 1);
}

/* A uid whose only run is put back keeps its turn ahead of the others. */
static void
test_push_head_last_of_uid(void **state)
{
	struct fixture *f = *state;

	push(f, 0, 1000);
	push(f, 1, 1001);
	push(f, 2, 1002);
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(pop_tag(f), 1); /* 1001 served, and gone */
	assert_int_equal(runqueue_push_head(&f->s, &f->t[1].q, 1001), 0);
	assert_int_equal(pop_tag(f), 1);
	assert_int_equal(pop_tag(f), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_within_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_robin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_uid_joins_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_uid_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_can_start_skips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_push_head, setup, teardown),
		cmocka_unit_test_setup_teardown(test_push_head_last_of_uid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
