/*
 * log_why.c: log_whyf(), a refusal's reason formatted for the caller. A
 * file of its own, apart from log.c, because libairlock needs it (the
 * bundle decoder's messages) and must not link log.c: that brings fatal()
 * and fatalx(), so exit(), into the library (lintian's
 * exit-in-shared-library), and libclient never exits (conventions.md).
 * tests/client checks that the library calls no exit.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

void
log_whyf(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
}
