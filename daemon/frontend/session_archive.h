/*
 * session_archive.h: the frontend's strict reader of workspace archives
 * (ustar), a client's (session_open's archive) or the state directory's
 * (a restart). docs/design-sessions.md "Who makes the archive, who reads
 * it" lists what it refuses; docs/security.md says why.
 */
#ifndef AIRLOCKD_SESSION_ARCHIVE_H
#define AIRLOCKD_SESSION_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* At most this many entries (files and directories) in one archive. */
#define SESSION_ARCHIVE_ENTRIES_MAX 100000

/* One entry, checked: a relative path of plain components. */
struct session_archive_entry {
	char path[PROTO_PATH_MAX + 1];
	bool dir;
	const uint8_t *data; /* a file's contents, size bytes, inside the archive */
	uint64_t size;
};

/* A walk through an archive, one entry at a time. */
struct session_archive_iter {
	const uint8_t *buf;
	size_t len, off;
	uint64_t quota, used;
	size_t n; /* entries handed out */
	bool done;
	char *why;
	size_t whylen;
};

/* Start a walk of buf (len bytes), whose files add up to at most quota;
 * why (whylen bytes) gets the reason of a refusal. */
void session_archive_iter_init(struct session_archive_iter *it, const void *buf, size_t len,
			       uint64_t quota, char *why, size_t whylen);

/* The next entry, checked, into e: 1, or 0 at the archive's well-formed
 * end, or a -errno of session_archive_walk()'s (the walk is over). */
int session_archive_next(struct session_archive_iter *it, struct session_archive_entry *e);

/*
 * Check the whole archive buf (len bytes) and, if each is not NULL, call
 * each(entry, arg) for every entry in order, each one checked before it is
 * handed on; each's -errno stops the walk and is returned. The contents of
 * the files add up to at most quota bytes. 0 with *ret_entries, or
 * -EBADMSG (not a well-formed archive), -EPERM (an entry that is not a
 * plain file or directory, or a name that is absolute, has an empty, "."
 * or ".." component, or is too long), -EFBIG (past quota or the entries'
 * maximum); why says which entry and what, for the client.
 */
int session_archive_walk(const void *buf, size_t len, uint64_t quota,
			 int (*each)(const struct session_archive_entry *e, void *arg), void *arg,
			 char *why, size_t whylen, size_t *ret_entries);

#endif
