/*
 * nametab.h: the one lookup of a name by an enum's value, for the tables of
 * names the logs and the wire use (protocol types, errors and outcomes, the
 * supervisor's steps, cgroup kinds, run states and events). A table is an
 * array of strings indexed by value, written with designated initializers:
 * a value past its end, negative, or with no entry gets the caller's word
 * for "unknown", so a value read from a peer can never index out of bounds.
 */
#ifndef AIRLOCK_NAMETAB_H
#define AIRLOCK_NAMETAB_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The number of entries of an array (not of a pointer). */
#define NAMETAB_LEN(tab) (sizeof(tab) / sizeof((tab)[0]))

/* The name of value v in names[0..n), or unknown if it has none. */
static inline const char *
nametab_get(const char *const *names, size_t n, long long v, const char *unknown)
{
	if (v < 0 || (unsigned long long)v >= n || names[v] == NULL)
		return unknown;
	return names[v];
}

/* The value whose name is name, searched from index first; -ENOENT if none. */
static inline int
nametab_find(const char *const *names, size_t n, size_t first, const char *name)
{
	size_t i;

	for (i = first; i < n; i++)
		if (names[i] != NULL && strcmp(names[i], name) == 0)
			return (int)i;
	return -ENOENT;
}

/* The same, for a table declared as an array in scope. */
#define nametab_name(tab, v, unknown)                                                              \
	nametab_get((tab), NAMETAB_LEN(tab), (long long)(v), (unknown))

#endif
