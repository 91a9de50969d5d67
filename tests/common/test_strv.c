/* test_strv.c: unit tests of common/strv.c; free() is a link seam that
 * records what it is handed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strv.h"

void __real_free(void *p);
void __wrap_free(void *p);

static void *freed[16];
static size_t nfreed;

void
__wrap_free(void *p)
{
	if (nfreed < sizeof(freed) / sizeof(freed[0]))
		freed[nfreed] = p;
	nfreed++;
	__real_free(p);
}

static bool
was_freed(const void *p)
{
	size_t i;

	for (i = 0; i < nfreed && i < sizeof(freed) / sizeof(freed[0]); i++)
		if (freed[i] == p)
			return true;
	return false;
}

/* Every string and the array, once each. */
static void
test_strv_free(void **state)
{
	char **v = malloc(3 * sizeof(*v));
	char *a = strdup("a"), *b = strdup("b");

	(void)state;
	assert_non_null(v);
	v[0] = a;
	v[1] = NULL; /* a hole: free(NULL) */
	v[2] = b;
	nfreed = 0;
	strv_free(v, 3);
	assert_int_equal(nfreed, 4);
	assert_true(was_freed(a));
	assert_true(was_freed(b));
	assert_true(was_freed(v));
}

/* NULL, and an empty array. */
static void
test_strv_free_null(void **state)
{
	char **v = malloc(sizeof(*v));

	(void)state;
	nfreed = 0;
	strv_free(NULL, 5);
	strv_free_field(NULL, 5, 16, 8);
	assert_int_equal(nfreed, 0);
	strv_free(v, 0);
	assert_int_equal(nfreed, 1);
	assert_true(was_freed(v));
}

struct entry {
	uint32_t kind;
	char *name;
	uint64_t size;
};

/* The field of each element (not its neighbours), then the array. */
static void
test_strv_free_field(void **state)
{
	struct entry *e = calloc(3, sizeof(*e));
	char *n0 = strdup("x"), *n2 = strdup("z");

	(void)state;
	assert_non_null(e);
	e[0] = (struct entry){.kind = 1, .name = n0, .size = 7};
	e[1] = (struct entry){.kind = 2, .name = NULL, .size = 8};
	e[2] = (struct entry){.kind = 3, .name = n2, .size = 9};
	nfreed = 0;
	STRV_FREE_FIELD(e, 3, struct entry, name);
	assert_int_equal(nfreed, 4);
	assert_true(was_freed(n0));
	assert_true(was_freed(n2));
	assert_true(was_freed(e));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strv_free),
		cmocka_unit_test(test_strv_free_null),
		cmocka_unit_test(test_strv_free_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
