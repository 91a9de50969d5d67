/*
 * xalloc.h: allocation that cannot fail, for the daemon (fatalx on
 * out-of-memory: the daemon may exit there, libclient never; the processes
 * cloned from the spawner do not allocate at all).
 */
#ifndef AIRLOCK_XALLOC_H
#define AIRLOCK_XALLOC_H

#include <stddef.h>

/* calloc(n, size), or exit. */
void *xcalloc(size_t n, size_t size) __attribute__((malloc, alloc_size(1, 2), returns_nonnull));

/* malloc(size) for size > 0, or exit. */
void *xmalloc(size_t size) __attribute__((malloc, alloc_size(1), returns_nonnull));

/* realloc(p, size) for size > 0, or exit. */
void *xrealloc(void *p, size_t size) __attribute__((alloc_size(2), returns_nonnull));

/* strdup(s), or exit. */
char *xstrdup(const char *s) __attribute__((malloc, returns_nonnull));

#endif
