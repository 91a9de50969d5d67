/*
 * session_record.h: the record of a session kept across a restart
 * (ID.rec in the state directory, docs/design-sessions.md): key=value
 * lines, written and parsed here alone. Pure: no daemon state.
 */
#ifndef AIRLOCKD_SESSION_RECORD_H
#define AIRLOCKD_SESSION_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* The groups kept of the connection that opened a session: as many as a
 * connection keeps (client.c). */
#define SESSION_GROUPS_MAX 64
/* A record is at most this long. */
#define SESSION_RECORD_MAX 4096

/* What a session is, as its record keeps it. */
struct session_facts {
	char id[PROTO_SESSION_ID_LEN + 1];
	uid_t uid;
	gid_t gids[SESSION_GROUPS_MAX];
	size_t ngids;
	char profile[PROTO_PROFILE_MAX + 1];
	char interpreter[PROTO_RUNTIME_MAX + 1]; /* "" for none */
	uint64_t workspace_bytes, idle_ms, lifetime_ms;
	uint64_t lease_end_ms; /* CLOCK_REALTIME, ms */
	bool detached;	       /* no end with its owner's last connection */
	bool background;       /* keeps what its cells start (interpreter only) */
};

/* The record's text of f into buf (len bytes): its length, or -ENOSPC. */
int session_record_format(const struct session_facts *f, char *buf, size_t len);
/*
 * Parse a record's text (len bytes, not NUL-terminated) of the file name
 * (ID.rec) into ret: every key known and given once, numbers in range, the
 * id 32 lowercase hex characters and the file's name. 0, or -EBADMSG with
 * why.
 */
int session_record_parse(const char *text, size_t len, const char *name, struct session_facts *ret,
			 char *why, size_t whylen);

#endif
