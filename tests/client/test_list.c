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

/*
 * strdup() is a link seam: the strdup_fail_at-th call (from 1) fails. The
 * copy is made here rather than by __real_strdup, which the sanitizer
 * build's link does not resolve (libasan's strdup interceptor).
 */
static int strdup_calls, strdup_fail_at;

char *__wrap_strdup(const char *s);

char *
__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p;

	if (++strdup_calls == strdup_fail_at)
		return NULL;
	p = malloc(n);
	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

/* The fields that are not owned. */
static void
conv(void *dst, const void *src)
{
	const struct src_entry *p = src;
	struct entry *e = dst;

	e->v = p->v;
}

/* Each entry owns two copies of the decoded name. */
static const struct list_type type =
	LIST_TYPE(struct list, entries, n, struct src_entry, conv,
		  LIST_OWNED(struct entry, name, struct src_entry, name),
		  LIST_OWNED(struct entry, copy, struct src_entry, name));

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

/* A copy failing midway (the second entry's second): -ENOMEM, *ret
 * untouched, what was copied freed (the ASan build sees a leak otherwise). */
static void
test_list_fails_midway(void **state)
{
	static const struct src_entry src[] = {{"a", 1}, {"bb", 2}, {"c", 3}};
	struct list *l = (struct list *)&state;

	strdup_calls = 0;
	strdup_fail_at = 4;
	assert_int_equal(list_from_proto(&type, src, 3, &l), -ENOMEM);
	strdup_fail_at = 0;
	assert_int_equal(strdup_calls, 4);
	assert_ptr_equal(l, (struct list *)&state);
}

/* A decoded string left out (NULL) is owned as "", never a NULL entry. */
static void
test_list_null_string_is_empty(void **state)
{
	static const struct src_entry src[] = {{NULL, 7}};
	struct list *l = NULL;

	(void)state;
	assert_int_equal(list_from_proto(&type, src, 1, &l), 0);
	assert_string_equal(l->entries[0].name, "");
	assert_string_equal(l->entries[0].copy, "");
	assert_int_equal(l->entries[0].v, 7);
	list_free(&type, l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_converts),
		cmocka_unit_test(test_list_empty),
		cmocka_unit_test(test_list_fails_midway),
		cmocka_unit_test(test_list_null_string_is_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
