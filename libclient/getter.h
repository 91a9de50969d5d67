/*
 * getter.h: the accessors of libclient's opaque objects (internal). Most
 * read one field and answer a default for a NULL handle or, for an entry of
 * a list, an index out of range, or set one field and refuse a NULL handle;
 * each such accessor is one line below its comment, so the check is written
 * once.
 */
#ifndef AIRLOCK_GETTER_H
#define AIRLOCK_GETTER_H

#include "export.h"

#include <errno.h>
#include <stddef.h>

/* rtype fn(const otype *o): o->field, or dflt for NULL. */
#define GETTER(rtype, fn, otype, field, dflt)                                                      \
	AIRLOCK_EXPORT rtype fn(const otype *o)                                                    \
	{                                                                                          \
		return o != NULL ? o->field : (dflt);                                              \
	}

/* rtype fn(const otype *o, size_t i): o->array[i].field, or dflt for NULL or
 * i >= o->count. */
#define GETTER_AT(rtype, fn, otype, count, array, field, dflt)                                     \
	AIRLOCK_EXPORT rtype fn(const otype *o, size_t i)                                          \
	{                                                                                          \
		return o != NULL && i < o->count ? o->array[i].field : (dflt);                     \
	}

/* int fn(otype *o, vtype v): o->field = v, or -EINVAL for NULL. */
#define SETTER(fn, otype, vtype, field)                                                            \
	AIRLOCK_EXPORT int fn(otype *o, vtype v)                                                   \
	{                                                                                          \
		if (o == NULL)                                                                     \
			return -EINVAL;                                                            \
		o->field = v;                                                                      \
		return 0;                                                                          \
	}

#endif
