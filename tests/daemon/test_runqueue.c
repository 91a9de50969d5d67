/* test_runqueue.c: unit tests of daemon/frontend/runqueue.c (order within a uid and
 * class, round-robin between uids, bounds, removal, the can_start filter,
 * classes that do not hold each other up). */
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
	uid_t blocked;		  /* can_start refuses this uid's items (0 = none) */
	unsigned blocked_classes; /* ... and the items of these classes (bit 1 << class) */
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

	if (f->blocked_classes & (1u << it->klass))
		return false;
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

/* Queue thing tag for uid in class klass. */
static void
push_class(struct fixture *f, int tag, uid_t uid, unsigned klass)
{
	assert_int_equal(runqueue_push(&f->s, &f->t[tag].q, uid, klass, NITEMS, NITEMS), 0);
}

/* Queue thing tag for uid in class 0. */
static void
push(struct fixture *f, int tag, uid_t uid)
{
	push_class(f, tag, uid, 0);
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

	assert_int_equal(runqueue_push(&f->s, &f->t[0].q, 1000, 0, 3, 2), 0);
	assert_int_equal(runqueue_push(&f->s, &f->t[1].q, 1000, 0, 3, 2), 0);
	assert_int_equal(runqueue_push(&f->s, &f->t[2].q, 1000, 0, 3, 2), -EBUSY);
	assert_null(f->t[2].q.owner);
	assert_int_equal(runqueue_push(&f->s, &f->t[3].q, 1001, 0, 3, 2), 0);
	assert_int_equal(runqueue_push(&f->s, &f->t[4].q, 1002, 0, 3, 2), -EBUSY);
	assert_null(f->t[4].q.owner);
	assert_int_equal(f->s.n, 3);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 2);
	assert_int_equal(runqueue_count_uid(&f->s, 1002), 0);
	/* Room again once one leaves. */
	runqueue_remove(&f->s, &f->t[0].q);
	assert_int_equal(runqueue_push(&f->s, &f->t[4].q, 1002, 0, 3, 2), 0);
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

/* Queue things 0 to n-1 for uid, thing i in class klass[i]. */
static void
push_classes(struct fixture *f, uid_t uid, const unsigned *klass, int n)
{
	int i;

	for (i = 0; i < n; i++)
		push_class(f, i, uid, klass[i]);
}

/* Pop n times; the tags must be want[0..n-1] (-1: nothing). */
static void
expect_pops(struct fixture *f, const int *want, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(pop_tag(f), want[i]);
}

/* Nothing blocked: the classes of a uid are served in arrival order. */
static void
test_classes_in_arrival_order(void **state)
{
	static const unsigned klass[] = {0, 1, 0, 1, 1};
	static const int order[] = {0, 1, 2, 3, 4, -1};
	struct fixture *f = *state;

	push_classes(f, 1000, klass, 5);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 5);
	expect_pops(f, order, 6);
}

/*
 * A head that may not start holds up its own class only: the other class
 * of the same uid goes past it in its own order, and once it may start it
 * comes first again (it arrived first), so it is not starved. With only
 * the held class queued nothing comes out.
 */
static void
test_blocked_class_holds_up_only_itself(void **state)
{
	static const unsigned klass[] = {0, 0, 1, 1, 1};
	static const int held[] = {2, 3}, then[] = {0, 1, 4, -1};
	struct fixture *f = *state;

	push_classes(f, 1000, klass, 5);
	f->blocked_classes = 1u << 0;
	expect_pops(f, held, 2);
	f->blocked_classes = 0;
	expect_pops(f, then, 4);
	push_class(f, 5, 1000, 0);
	f->blocked_classes = 1u << 0;
	assert_int_equal(pop_tag(f), -1);
	assert_int_equal(runqueue_count_uid(&f->s, 1000), 1);
}

/* A class held up in one uid does not cost the other uids their turns:
 * 1001 was served last, so 1000 comes first once the class may start. */
static void
test_blocked_class_and_round_robin(void **state)
{
	static const int held[] = {1, 3, -1}, then[] = {0, 2, -1};
	struct fixture *f = *state;

	push_class(f, 0, 1000, 0);
	push_class(f, 1, 1000, 1);
	push_class(f, 2, 1001, 0);
	push_class(f, 3, 1001, 1);
	f->blocked_classes = 1u << 0;
	expect_pops(f, held, 3);
	f->blocked_classes = 0;
	expect_pops(f, then, 3);
}

/* An item put back keeps its class and its arrival number: it comes
 * before the items of any class that arrived after it. */
static void
test_push_head_keeps_class_and_order(void **state)
{
	static const unsigned klass[] = {1, 0, 1};
	static const int order[] = {0, 1, 2, -1};
	struct fixture *f = *state;

	push_classes(f, 1000, klass, 3);
	assert_int_equal(pop_tag(f), 0);
	assert_int_equal(runqueue_push_head(&f->s, &f->t[0].q, 1000), 0);
	assert_int_equal(f->t[0].q.klass, 1);
	expect_pops(f, order, 4);
}

/* A class out of range is refused, and nothing is queued. */
static void
test_bad_class(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(runqueue_push(&f->s, &f->t[0].q, 1000, RUNQUEUE_CLASSES, NITEMS, NITEMS),
			 -EINVAL);
	assert_null(f->t[0].q.owner);
	assert_int_equal(f->s.n, 0);
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
		cmocka_unit_test_setup_teardown(test_classes_in_arrival_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_class_holds_up_only_itself, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_blocked_class_and_round_robin, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_push_head_keeps_class_and_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_class, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
