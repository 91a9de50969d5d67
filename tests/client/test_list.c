/* test_list.c: libclient's list conversion and free (list.c), alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "list.h"

struct src_entry {
	const char *name;
	uint32_t v;
};

struct entry {
	uint64_t v;
	char *name;
	char *copy;
};

struct list {
	int before;
	struct entry *entries;
	size_t n;
};

/* Copies name twice; "fail" makes the second copy fail as out of memory. */
static int
conv(void *dst, const void *src)
{
	const struct src_entry *p = src;
	struct entry *e = dst;

	e->v = p->v;
	e->name = strdup(p->name);
	e->copy = strcmp(p->name, "fail") == 0 ? NULL : strdup(p->name);
	return e->name != NULL && e->copy != NULL ? 0 : -ENOMEM;
}

static const struct list_type type =
	LIST_TYPE(struct list, entries, n, struct src_entry, conv, LIST_OWNED(struct entry, name),
		  LIST_OWNED(struct entry, copy));

static void
test_list_converts(void **state)
{
	static const struct src_entry src[] = {{"a", 1}, {"bb", 2}, {"ccc", 3}};
	struct list *l = NULL;

	(void)state;
	assert_int_equal(type.nowned, 2);
	assert_int_equal(list_from_proto(&type, src, 3, &l), 0);
	assert_non_null(l);
	assert_int_equal(l->n, 3);
	assert_int_equal(l->before, 0);
	assert_string_equal(l->entries[1].name, "bb");
	assert_string_equal(l->entries[2].copy, "ccc");
	assert_int_equal(l->entries[2].v, 3);
	list_free(&type, l);
}

static void
test_list_empty(void **state)
{
	struct list *l = NULL;

	(void)state;
	assert_int_equal(list_from_proto(&type, NULL, 0, &l), 0);
	assert_non_null(l);
	assert_int_equal(l->n, 0);
	assert_null(l->entries);
	list_free(&type, l);
	list_free(&type, NULL);
}

/* A failing entry: -ENOMEM, *ret untouched, what was copied freed (the ASan
 * build sees a leak otherwise). */
static void
test_list_fails_midway(void **state)
{
	static const struct src_entry src[] = {{"a", 1}, {"fail", 2}, {"c", 3}};
	struct list *l = (struct list *)&state;

	assert_int_equal(list_from_proto(&type, src, 3, &l), -ENOMEM);
	assert_ptr_equal(l, (struct list *)&state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_converts),
		cmocka_unit_test(test_list_empty),
		cmocka_unit_test(test_list_fails_midway),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
