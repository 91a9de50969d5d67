/*
 * strv.h: freeing owned arrays, the loop every list destructor wrote again:
 * an array of strings (strv_free), and an array of structs each owning one
 * allocation at the same offset (strv_free_field). Both accept NULL.
 */
#ifndef AIRLOCK_STRV_H
#define AIRLOCK_STRV_H

#include <stddef.h>

/* Free v[0..n) and v. */
void strv_free(char **v, size_t n);

/*
 * Free the pointer at offset in each of the n elements (of size bytes each)
 * of arr, then arr: STRV_FREE_FIELD(list->entries, list->nentries, struct
 * airlock_file_entry, name).
 */
void strv_free_field(void *arr, size_t n, size_t size, size_t offset);
#define STRV_FREE_FIELD(arr, n, type, field)                                                       \
	strv_free_field((arr), (n), sizeof(type), offsetof(type, field))

#endif
