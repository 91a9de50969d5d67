/*
 * list.h: the lists a reply carries (ps, sessions, a directory listing) as
 * one kind of object: a list object holding an array of entries and their
 * count, each entry owning up to two strings copied from the decoded entry
 * (internal). A list_type says where those are; list_from_proto() and
 * list_free() do the rest, so the allocations and their failure are in
 * list.c alone.
 */
#ifndef AIRLOCK_LIST_H
#define AIRLOCK_LIST_H

#include "export.h"

#include <stddef.h>

struct list_type {
	size_t size;	/* of the list object */
	size_t entries; /* offset in it of the pointer to the entries */
	size_t count;	/* offset in it of their count, a size_t */
	size_t esize;	/* of an entry */
	size_t ssize;	/* of a decoded entry */
	/* Fill entry e's other fields from decoded entry p (no allocation). */
	void (*conv)(void *e, const void *p);
	size_t nowned; /* how many strings an entry owns */
	struct list_owned {
		size_t dst; /* offset in an entry (char *) */
		size_t src; /* offset of what it copies in a decoded entry (const char *) */
	} owned[2];
};

/* The list_type of type, whose member array points at count entries
 * converted from decoded entries of type stype, each owning copies of the
 * strings LIST_OWNED names last. */
#define LIST_TYPE(type, array, count, stype, conv, ...)                                            \
	{                                                                                          \
		sizeof(type), offsetof(type, array), offsetof(type, count),                        \
			sizeof(*((type *)NULL)->array), sizeof(stype), (conv),                     \
			sizeof((struct list_owned[]){__VA_ARGS__}) / sizeof(struct list_owned),    \
		{                                                                                  \
			__VA_ARGS__                                                                \
		}                                                                                  \
	}

/* An entry's owned string: field of type, a copy of sfield of the decoded
 * entry stype (NULL copies as ""), for LIST_TYPE. */
#define LIST_OWNED(type, field, stype, sfield)                                                     \
	{                                                                                          \
		offsetof(type, field), offsetof(stype, sfield)                                     \
	}

/*
 * Convert n decoded entries at src into a new list of type t, stored in
 * *(pointer to t's object type *)ret: each entry filled by t->conv and its
 * owned strings copied. Returns 0 or -ENOMEM, *ret untouched.
 */
int list_from_proto(const struct list_type *t, const void *src, size_t n, void *ret);

/* Free a list of type t: each entry's strings, the entries, the list. NULL
 * is nothing. */
void list_free(const struct list_type *t, void *list);

/* The exported destructor of a list object of type otype, whose list_type
 * is t: void fn(otype *list), NULL is nothing. One line each below its
 * comment, as getter.h's accessors; the symbol is the first argument. */
#define LIST_FREE(fn, otype, t)                                                                    \
	AIRLOCK_EXPORT void fn(otype *list)                                                        \
	{                                                                                          \
		list_free(&(t), list);                                                             \
	}

/* int fn(const ptype *p, otype **ret): a new list of type t from the count
 * decoded entries at p->array; 0 or -ENOMEM. */
#define LIST_FROM_PROTO(fn, otype, t, ptype, array, count)                                         \
	int fn(const ptype *p, otype **ret)                                                        \
	{                                                                                          \
		return list_from_proto(&(t), p->array, p->count, ret);                             \
	}

/* The same for a list whose reply may be cut: its member more (the
 * entries left out) is copied too. */
#define LIST_FROM_PROTO_MORE(fn, otype, t, ptype, array, count, more)                              \
	int fn(const ptype *p, otype **ret)                                                        \
	{                                                                                          \
		otype *list;                                                                       \
		int r = list_from_proto(&(t), p->array, p->count, &list);                          \
                                                                                                   \
		if (r < 0)                                                                         \
			return r;                                                                  \
		list->more = p->more;                                                              \
		*ret = list;                                                                       \
		return 0;                                                                          \
	}

#endif
