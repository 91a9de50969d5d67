/*
 * session.h: sessions in the frontend: a workspace kept by a keeper process
 * across runs, file operations on it, and its lifetime. See
 * docs/design-sessions.md.
 */
#ifndef AIRLOCKD_SESSION_H
#define AIRLOCKD_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"
#include "spawn_msg.h"

struct config;
struct daemon;
struct client;
struct session;
struct run;
struct cells;

/* Client requests. Each gets exactly one reply. */
void session_open(struct daemon *d, struct client *c, uint32_t req_id,
		  const struct proto_session_open *o);
void session_close(struct daemon *d, struct client *c, uint32_t req_id, const char *id);
void session_list(struct daemon *d, struct client *c, uint32_t req_id);
void session_file_op(struct daemon *d, struct client *c, uint32_t req_id, enum proto_type type,
		     const struct proto_file_op *op);

/* session_ps (stop false) or process_stop of pid: a background session's
 * processes (cells_procs.c); not_found for another uid's session. */
void session_processes(struct daemon *d, struct client *c, uint32_t req_id, const char *id,
		       bool stop, uint32_t pid);
/* The caller's session of this id, or NULL (another uid's is NULL too). */
struct session *session_find(struct daemon *d, uid_t uid, const char *id);

/* A spawner event about the session's keeper (frontend.c finds the session by key). */
void session_spawner_event(struct session *s, const struct spawn_ev *ev);

/* Connections of a uid come and go: the orphan grace starts and stops. */
void session_client_new(struct daemon *d, uid_t uid);
void session_client_gone(struct daemon *d, struct client *c, bool last_of_uid);

/*
 * A reload put d->cfg in place of old: every session not ended takes the
 * event RELOAD (session_state.c), and so does its interpreter
 * (cells_reload()): one whose sandbox the new config makes differently
 * (config_sandbox_changed()) is restarted under the new one.
 */
void session_reloaded(struct daemon *d, const struct config *old);
/* The daemon stops: end every session. */
void session_stop_all(struct daemon *d);

/* ---- for runs in a session (run.c) ---- */

/* How many of uid's interpreter sessions have a cell holding a run slot. */
uint32_t session_cell_slots_uid(const struct daemon *d, uid_t uid);
/* An interpreter session's cells (cells.h), or NULL. */
struct cells *session_cells(const struct session *s);
/* The interpreter session whose cells include c's request req_id (queued
 * or running), or NULL: a cancel by request id (run_cancel_request). */
struct cells *session_cells_of_request(const struct daemon *d, const struct client *c,
				       uint32_t req_id);
/* A cell came: the session is not idle. */
void session_cell_touch(struct session *s);
/* Was the session opened with background (its cells' processes live on)? */
bool session_background(const struct session *s);
/* The session's id (hex). */
const char *session_id(const struct session *s);

/* Does the session accept runs (open and ready)? */
bool session_can_queue(const struct session *s);
/* Does the session accept runs, and is none of its runs in the sandbox? */
bool session_can_start(const struct session *s);
/* The per-run limits a session gives its runs (0 = the daemon's default). */
const struct proto_limits *session_run_defaults(const struct session *s);
/* The profile the session was opened with: every run of it uses it. */
const char *session_profile(const struct session *s);
/* A run of the session is queued, or leaves the queue unstarted. */
void session_run_queued(struct session *s);
void session_run_unqueued(struct session *s);

/*
 * A run starts: it takes the session's uid slot. Its input files are written
 * by the keeper, then the keeper clones the workspace mount; done(r, fd, err)
 * is called with the mount fd (owned by the callee) or -errno and the name
 * of what failed.
 */
uint32_t session_run_begin(struct session *s, struct run *r);
void session_run_prepare(struct session *s, struct run *r, const char *const *names, const int *fds,
			 size_t nfiles,
			 void (*done)(struct run *r, int fd, int err, const char *what));
/* The run was reaped: the session is free for the next one. */
void session_run_end(struct session *s, struct run *r);

#endif
