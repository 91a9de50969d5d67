/*
 * session_store.h: sessions kept across a restart of the daemon
 * (docs/design-sessions.md "Sessions outlive the daemon"): each session's
 * record and a snapshot of its workspace in the state directory, written
 * by the frontend alone; read back, and checked, by the next daemon.
 */
#ifndef AIRLOCKD_SESSION_STORE_H
#define AIRLOCKD_SESSION_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "keep_msg.h"
#include "proto.h"
#include "session_record.h"

struct client;
struct daemon;
struct kop;
struct session;

/* Write the session's record (at open, at a lease change); failures are
 * logged: the session goes on, without surviving a restart. */
void session_store_record(struct session *s);
/* The workspace may have changed: snapshot it (one at a time; a change
 * during one asks for another after it). */
void session_store_snapshot(struct session *s);
/* The daemon stops: if a snapshot is due or being written, write it and end
 * the session after it (true); false: nothing to write, end it now. */
bool session_store_flush(struct session *s);
/* The keeper answered a KOP_SAVE or KOP_RESTORE. */
void session_store_answer(struct session *s, struct kop *k, const struct keep_reply *rep);
/* The keeper of a restored session is ready: its files go back first. */
void session_store_restore_start(struct session *s);
/* The session ends: its snapshot in flight is dropped and, with forget
 * (anything but a daemon stop), its files are deleted. */
void session_store_end(struct session *s, bool forget);
/* Client requests (each gets one reply): session_extend, the lease to end
 * lifetime_ms from now; session_save, the workspace as a ustar archive. */
void session_store_extend(struct daemon *d, struct client *c, uint32_t req_id,
			  const struct proto_session_extend *x);
void session_store_save(struct daemon *d, struct client *c, uint32_t req_id, const char *id);
/* session_open's archive (blob) checked whole against quota: 0 with
 * *ret (the restore it starts, for the session), or -errno answered to
 * (c, req_id) with the entry and the reason. */
struct proto_blob;
struct session_restore;
int session_store_archive_check(struct client *c, uint32_t req_id, const struct proto_blob *blob,
				uint64_t quota, struct session_restore **ret);
/* A restore not started (NULL is fine). */
void session_store_restore_free(struct session_restore *rs);
/* The state directory's sessions/ (made if missing), opened by the service
 * user: its fd, or -1 (none configured, or logged why not). */
int session_store_open(const char *dir);
/* At start: every kept session that can be is restored; each that cannot
 * is logged with why and its files moved to lost/. */
void session_store_recover(struct daemon *d);

#endif
