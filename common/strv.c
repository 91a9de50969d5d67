/* strv.c: freeing owned arrays (strv.h). */
#include "strv.h"

#include <stdlib.h>
#include <string.h>

void
strv_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
strv_free_field(void *arr, size_t n, size_t size, size_t offset)
{
	char *base = arr;
	size_t i;

	if (arr == NULL)
		return;
	for (i = 0; i < n; i++) {
		void *p;

		/* memcpy: the field need not be aligned as a void * in a char array's view */
		memcpy(&p, base + i * size + offset, sizeof(p));
		free(p);
	}
	free(arr);
}
