/* list.c: converting and freeing the lists replies carry (list.h). */
#include "list.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The member of list at offset (a pointer or a size_t, copied by bytes so
 * that list stays an untyped object here). */
#define LIST_MEMBER(list, off) ((char *)(list) + (off))

void
list_free(const struct list_type *t, void *list)
{
	char *entries, *s;
	size_t n, i, k;

	if (list == NULL)
		return;
	memcpy(&entries, LIST_MEMBER(list, t->entries), sizeof(entries));
	memcpy(&n, LIST_MEMBER(list, t->count), sizeof(n));
	for (i = 0; i < n; i++)
		for (k = 0; k < t->nowned; k++) {
			memcpy(&s, entries + i * t->esize + t->owned[k].dst, sizeof(s));
			free(s);
		}
	free(entries);
	free(list);
}

int
list_from_proto(const struct list_type *t, const void *src, size_t n, void *ret)
{
	void *list = calloc(1, t->size);
	char *entries = NULL;
	size_t i;

	if (list == NULL)
		return -ENOMEM;
	if (n > 0 && (entries = calloc(n, t->esize)) == NULL)
		goto fail;
	memcpy(LIST_MEMBER(list, t->entries), &entries, sizeof(entries));
	/* The count counts the entries whose strings are owned, so a failure
	 * frees exactly those. */
	for (i = 0; i < n; i++) {
		char *e = entries + i * t->esize;
		const char *p = (const char *)src + i * t->ssize;
		size_t owned = i + 1, k;

		memcpy(LIST_MEMBER(list, t->count), &owned, sizeof(owned));
		t->conv(e, p);
		for (k = 0; k < t->nowned; k++) {
			const char *from;
			char *copy;

			memcpy(&from, p + t->owned[k].src, sizeof(from));
			copy = strdup(from != NULL ? from : "");
			memcpy(e + t->owned[k].dst, &copy, sizeof(copy));
			if (copy == NULL)
				goto fail;
		}
	}
	memcpy(ret, &list, sizeof(list));
	return 0;
fail:
	list_free(t, list);
	return -ENOMEM;
}
