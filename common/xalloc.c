/* xalloc.c: allocation or exit. See xalloc.h. */
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

void *
xrealloc(void *p, size_t size)
{
	void *np = realloc(p, size);

	if (np == NULL)
		fatalx("out of memory");
	return np;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}
