/*
 * clear.h: the one destructor of an object held in place (a struct inside
 * another or on the stack, never freed itself): free the buffers it owns,
 * then zero all of it, so that it reads as empty (counts 0, pointers NULL)
 * and a second call frees nothing. Zeroing the whole struct rather than
 * field by field means a field added later cannot be left behind pointing
 * at freed memory or counting entries that are gone.
 */
#ifndef AIRLOCK_CLEAR_H
#define AIRLOCK_CLEAR_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* free() each of the n buffers at bufs, then zero size bytes at obj. */
static inline void
clear_free(void *obj, size_t size, void *const *bufs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(bufs[i]);
	memset(obj, 0, size);
}

/* Free the buffers named after obj (its own pointer fields), then zero
 * *obj. obj is not NULL: the destructor calling it checks. */
#define CLEAR_FREE(obj, ...)                                                                       \
	clear_free((obj), sizeof(*(obj)), (void *const[]){__VA_ARGS__},                            \
		   sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif
