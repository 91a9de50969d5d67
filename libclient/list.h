/*
 * list.h: allocating a list object and its array of entries at once, the
 * step every conversion of a decoded list (ps, sessions, files) starts with
 * (internal).
 */
#ifndef AIRLOCK_LIST_H
#define AIRLOCK_LIST_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * A zeroed object of osize bytes whose pointer at offset points at n zeroed
 * entries of esize bytes (NULL for n == 0); NULL when out of memory.
 */
static inline void *
list_new(size_t osize, size_t offset, size_t n, size_t esize)
{
	void *o = calloc(1, osize), *a = NULL;

	if (o == NULL)
		return NULL;
	if (n > 0 && (a = calloc(n, esize)) == NULL) {
		free(o);
		return NULL;
	}
	memcpy((char *)o + offset, &a, sizeof(a));
	return o;
}

/* A new type whose member array points at n zeroed entries, or NULL. */
#define LIST_NEW(type, array, n)                                                                   \
	((type *)list_new(sizeof(type), offsetof(type, array), (n), sizeof(*((type *)NULL)->array)))

#endif
