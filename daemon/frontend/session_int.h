/*
 * session_int.h: a session's struct, shared by the files of the session
 * module alone (session.c, session_store.c and session_query.c), and what
 * session.c lends session_store.c. Nothing else includes it: the rest of
 * the frontend sees session.h.
 */
#ifndef AIRLOCKD_SESSION_INT_H
#define AIRLOCKD_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include "keep_wrap.h"
#include "proto.h"
#include "session_state.h"
#include "session_store.h"

struct session_restore;

struct session {
	TAILQ_ENTRY(session) entry;
	struct daemon *d;
	char id[PROTO_SESSION_ID_LEN + 1];
	uint32_t key; /* the spawner knows the keeper by it */
	uid_t uid;
	uint32_t slot;
	int keeper;
	struct event *keeper_ev;
	struct client *open_c; /* waiting for session_ok */
	uint32_t open_req;
	enum session_state state; /* changed by session_transition() only */
	struct proto_limits run_defaults;
	char profile[PROTO_PROFILE_MAX + 1]; /* fixed at open for all its runs */
	uint64_t workspace_bytes, idle_ms, lifetime_ms;
	bool detached; /* session_open's detached: no end with the owner's connections */
	struct event *idle_ev, *life_ev, *orphan_ev, *free_ev;
	struct timespec t_open, t_active;
	uint64_t nruns;
	uint32_t queued; /* its runs in the run queue */
	struct run *active;
	TAILQ_HEAD(, kop) ops;
	uint32_t next_seq;
	struct cells *cells; /* an interpreter session's (cells.h), or NULL */
	bool background;     /* opened with background (admitted: interpreter only) */
	/* The groups of the connection that opened it: a reload checks its
	 * uid's access again with them (session_reload_refused). */
	gid_t gids[SESSION_GROUPS_MAX];
	size_t ngids;
	/* Kept across a restart (session_store.c): the lease's end (wall
	 * clock, ms), the snapshot in flight (its file) and whether another
	 * must follow, whether its end keeps its files (the daemon stops),
	 * and the archive it is being restored from. */
	uint64_t lease_end_ms;
	int snap_fd;
	bool snap_dirty, keep_store;
	/* Snapshots are at most one per SESSION_SNAP_INTERVAL_MS: the next
	 * waits on snap_ev; a stopping daemon takes a last one first
	 * (stop_after_snap: the session ends once it is written). */
	struct event *snap_ev;
	uint64_t snap_done_ms;
	bool stop_after_snap;
	struct session_restore *restore;
};

struct config;

/* A new session of f's (the caller checked it may be), not started; NULL
 * when no uid slot is free. */
struct session *session_create(struct daemon *d, const struct session_facts *f);
/* Start it: its keeper asked for, its lease of lease_ms running. 0, or
 * -errno (the session then ends). */
int session_start(struct session *s, uint64_t lease_ms);
/* Its keeper is ready and its files in place: it takes runs. */
void session_ready(struct session *s);
/* Does cfg refuse a session of uid (with gids) and profile? why says why. */
bool session_policy_refuses(const struct config *cfg, uid_t uid, const gid_t *gids, size_t ngids,
			    const char *profile, char *why, size_t len);
/* Send one request to the keeper and remember what its answer is for. */
int session_send(struct session *s, struct kop *k, const char *path, int fd);
/* End the session (why for the log), as a close or an expiry does. */
void session_end_why(struct session *s, const char *why);

#endif
