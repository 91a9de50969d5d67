/*
 * frontend.h: the unprivileged half of airlockd. It owns the libevent loop,
 * every client connection, request decoding and policy, the runs in flight
 * and result assembly. It holds no capability; see docs/architecture.md.
 */
#ifndef AIRLOCKD_FRONTEND_H
#define AIRLOCKD_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "budget.h"
#include "cgroup.h"
#include "config.h"
#include "listener.h"
#include "log.h"
#include "proto.h"
#include "spawn_msg.h"
#include "runqueue.h"
#include "spawnref.h"
#include "uidpool.h"
#include "zygotes.h"

struct event_base;
struct event;
struct client;
struct run;
struct cells;

TAILQ_HEAD(client_list, client);
TAILQ_HEAD(run_list, run);
TAILQ_HEAD(session_list, session);

enum prep_state {
	PREP_ASKED = 0, /* SPAWN_PREPARE sent */
	PREP_READY = 1, /* its STARTED came */
	PREP_DEAD = 2,	/* it failed; gone at its reap, never handed out */
};

/* A sandbox prepared ahead, waiting for a run (run.c). Handed to a run,
 * it is freed and its key goes to the run (spawnref.h). */
struct prep {
	TAILQ_ENTRY(prep) entry;
	uint32_t key; /* its spawn key (spawnref.h), handed to the run that takes it */
	uint32_t slot;
	int stat_fd[2];
	enum prep_state state;
	uint32_t gen; /* the root spec generation it was prepared with */
	/* A pre-started interpreter's sandbox: the runtime's index in cfg
	 * (-1: a plain sandbox), the config generation (daemon.prestart_gen)
	 * and the read ends of its output pipes, the run's once taken. */
	int rt;
	uint32_t pgen;
	int out_fd[2];
	/* A zygote's sandbox (rt RUN_POOL_ZYGOTE): its zygote's key and
	 * caller; only that caller's runs may take it (its user namespace is
	 * that zygote's uid's). */
	uint32_t zkey;
	uid_t zuid;
	/* The [mount]s whose source failed the frontend's check when it was
	 * asked for (bit i: mount i): its supervisor will not have them, so
	 * a run that names one takes another sandbox (issue 28). */
	uint32_t missing;
	bool started;	     /* its STARTED came: it was made */
	bool discarded;	     /* ended by us (reload, give-way), not failed */
	bool discard_unsent; /* its SPAWN_DISCARD could not be sent: again after the back-off */
};
TAILQ_HEAD(prep_list, prep);

struct egress_stats;

/*
 * What the dispatcher (dispatch.c, dispatch_init()) does with a connection:
 * client.c calls through these and so calls neither run.c nor session.c.
 */
struct client_hooks {
	/* One packet received (not decoded yet; fds taken). */
	void (*packet)(struct client *c, const char *buf, size_t len, int *fds, size_t nfds);
	/* A connection [access] allowed at connect was adopted. */
	void (*adopted)(struct client *c);
	/* The connection ended: once; last_of_uid when no other live connection
	 * of its uid is allowed. */
	void (*orphaned)(struct client *c, bool last_of_uid);
};

struct daemon {
	struct event_base *base;
	struct config *cfg;
	int listen_fd;
	struct event *listen_ev;
	struct event *accept_retry_ev;		     /* back-off after EMFILE */
	void (*accept_cb)(struct daemon *d, int fd); /* listener_start()'s: takes the fd */
	const struct client_hooks *client_hooks;     /* dispatch_init()'s */
	int reserve_fd;				     /* an fd kept to shed a connection on EMFILE */
	int spawner_fd;
	int store_fd; /* the sessions' state directory (session_store.c), or -1 */
	struct event *spawner_ev;
	struct event *sigterm_ev, *sigint_ev, *sighup_ev;
	struct uidpool uids;
	struct client_list clients;
	struct run_list runs;
	uint32_t next_run_id;
	struct spawnrefs refs; /* what is at the spawner, by key: its owner */
	uint32_t next_client_id;
	uint32_t nruns;		   /* runs known: queued, running, finishing */
	uint32_t nrunning;	   /* runs holding a uid slot */
	struct event *dispatch_ev; /* run_dispatch on the next turn (run.c) */
	/* What runs ask of sessions and interpreters (run_owner.h). */
	const struct run_session_ops *session_ops;
	const struct run_cells_ops *cells_ops;
	uint32_t nclients;
	struct session_list sessions;
	uint32_t nsessions;
	struct prep_list pool; /* prepared sandboxes */
	uint32_t npool;
	/* A pool sandbox that failed before it was made (or whose request
	 * could not be sent) holds the refill back for pool_backoff_ms,
	 * doubled at each failure in a row up to RUN_POOL_BACKOFF_MAX_MS and
	 * reset by a sandbox made: no spinning on a fault that stays. */
	struct event *pool_retry_ev;
	uint32_t pool_backoff_ms;
	bool pool_waiting;
	/* run_dispatch: a queued run waits for a uid slot that the pool's
	 * sandboxes hold, none of which it can take (run_can_start). */
	bool want_slot;
	/* run_dispatch: a queued run waits for a run slot that a zygote no
	 * run uses holds (of want_zygote_uid, or any: -1). */
	bool want_zygote;
	uid_t want_zygote_uid;
	struct log_repeat pool_warn;  /* the pool's failures, rate-limited */
	struct log_repeat mount_warn; /* a missing mount a run named */
	struct runqueue queue;
	struct budget budget;		   /* what is held for each uid (budget.h) */
	struct event *client_tick_ev;	   /* watches replies sent but not yet read */
	struct event *held_tick_ev;	   /* watches memfds given and not let go */
	enum cgroup_kind resource_control; /* what enforces memory, processes, cpu */
	bool journal;			   /* audit lines go to the journal (under systemd) */
	bool stopping;
	struct event *grace_ev, *hard_stop_ev;
	struct egress *egress; /* the proxy of network = proxy runs, made at the first */
	/* The first mount beneath /usr on the host ("" if none: sandbox.h's
	 * layout, read before the split), for frontend_warn_hidden_usr. */
	char usr_submount[128];
	const char *config_path; /* for reload */
	bool config_given;
	/* The root spec (rootspec.h) of cfg's [mount] sections, sealed into
	 * rootspec_fd and sent with every SPAWN_PREPARE; its generation grows
	 * when a reload changes it. */
	struct rootspec rootspec;
	int rootspec_fd;
	/* The pre-start plans (run_pool.c) of runtimes with prestart = yes, by
	 * runtime index, made at the first fill after each (re)load (-1: not
	 * made); prestart_gen grows at each reload, which discards them. */
	int prestart_plan[CONFIG_RUNTIMES_MAX];
	uint32_t prestart_gen;
	/* Callers' zygotes (zygotes.h); nzygotes: those holding a run slot. */
	struct zygote_list zygotes;
	uint32_t nzygotes;
};

/* ---- frontend.c: the process ---- */

/* Run the frontend's event loop until SIGTERM/SIGINT or the spawner's end. */
int frontend_main(struct daemon *d);

/* SIGTERM/SIGINT, or the spawner's word: the graceful stop. */
void frontend_stop(struct daemon *d);
/* The spawner's SPAWN_RELOAD: parse the config file's bytes it read (fd, taken). */
void frontend_reload(struct daemon *d, const struct spawn_ev *ev, int fd);
/* Build the root spec of d->cfg; when it changed, seal it and bump the
 * generation (prepared sandboxes of the old one are then discarded). */
int frontend_rootspec_update(struct daemon *d);

/* ---- daemon.c: the services of struct daemon (they call no module) ---- */

/* Send one fixed request to the spawner, with its fds (spawn_wrap.h). */
int frontend_spawn_fds(struct daemon *d, const struct spawn_req *req, int *fds, size_t nfds);
/* Stop watching an fd and close it: *ev freed and NULL, *fd closed and -1
 * (either may be gone already). */
void frontend_unwatch(struct event **ev, int *fd);
/* Tell systemd what we are doing (STATUS=), if it listens. */
void frontend_status(struct daemon *d);
/* A run ended: if stopping and nothing is left, leave the loop. */
void frontend_run_ended(struct daemon *d);

/* ---- dispatch.c: a client's requests to the modules that do them ---- */

/* Set d->client_hooks: the dispatch table, the adoption and the orphan
 * action of connections. Before the first accept. */
void dispatch_init(struct daemon *d);

/* ---- info.c: the info reply ---- */

/* Answer an info request: what the daemon offers c (its profiles only). */
void info_reply(struct client *c, uint32_t req_id);

/* ---- client.c: one connection ---- */

/* Adopt an accepted connection. */
void client_new(struct daemon *d, int fd);
/* Before exit: try for up to timeout_ms to send what every client has queued. */
void client_flush_all(struct daemon *d, int timeout_ms);
/* Close a connection: its runs are killed, the memory freed on the next turn. */
void client_kill(struct client *c);
void client_free(struct client *c);
/* Queue or send one encoded packet; takes ownership of out's contents. */
void client_send(struct client *c, struct proto_out *out);
/* Send an error reply. */
void client_send_error(struct client *c, uint32_t id, enum proto_error code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Send the reply encoded into out, or, when its encoder failed (rc < 0), an
 * internal error saying which reply (what) could not be encoded. */
void client_send_encoded(struct client *c, uint32_t id, int rc, struct proto_out *out,
			 const char *what);
uid_t client_uid(const struct client *c);
struct daemon *client_daemon(const struct client *c);
/* Was the hello answered hello_ok (requests are taken now)? */
bool client_ready(const struct client *c);
/* Did [access] allow the client when it connected? */
bool client_allowed_at_connect(const struct client *c);
/* Did it connect past max_connections_per_uid (refused at its hello)? */
bool client_over_limit(const struct client *c);
/* Refuse the connection: what is queued (the refusal) is sent, then it is
 * closed; nothing more is read. */
void client_refuse(struct client *c);
/* The hello is accepted: its features kept, its timer stopped. */
void client_hello_ok(struct client *c, const struct proto_hello *h);
/* A client's answer to one of its run's tool calls (run_tools.h). */
void run_tool_reply(struct daemon *d, struct client *c, uint32_t req_id,
		    const struct proto_tool_reply *rep);
/* Did the client's hello name the feature tools? */
bool client_knows_tools(const struct client *c);
/* Did the client's hello name the outcome process_limit? */
bool client_knows_process_limit(const struct client *c);
/* Did the client's hello name the feature network (result.network)? */
bool client_knows_network(const struct client *c);
/* Is the client allowed by the config in force now? */
bool client_allowed(const struct client *c);
/* The config was reloaded: every connection takes the event RELOAD
 * (client_state.c); one the new config refuses is logged, and refused at
 * its next request (client_access()). */
void client_reload_all(struct daemon *d);
/* Copy the client's groups (as [access] judges them) into ret, max at most;
 * returns how many were copied. */
size_t client_gids(const struct client *c, gid_t *ret, size_t max);
/* May the client use this profile (its allow_users, allow_groups)? */
bool client_may_use_profile(const struct client *c, const struct config_profile *prof);
/*
 * Resolve the limits a request asks within its profile (NULL: the default
 * profile): 0 or -errno, and then an error reply has been sent: not_found
 * (no such profile), unauthorized (not the client's), bad_request (a limit
 * above the profile's ceiling, named with the profile).
 */
int client_resolve_limits(struct client *c, uint32_t req_id, const char *profile,
			  const struct proto_limits *asked, struct proto_limits *ret,
			  const struct config_profile **ret_prof);
pid_t client_pid(const struct client *c);
uint32_t client_nruns(const struct client *c);
void client_run_added(struct client *c, struct run *r);
void client_run_removed(struct client *c, struct run *r);

/* ---- run.c: one run in flight ---- */

/*
 * Validate a run request and start it. On a request error, replies with an
 * error and returns; the client sees exactly one reply per request.
 */
void run_start(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req);
/*
 * An interpreter session's interpreter (cells.h): a run of session s whose
 * code is the driver, owned by cs (cells_interp_set) and answered to no
 * client; a refusal is answered to (c, req_id), the cell that asked for it,
 * and gives -EINVAL.
 */
int run_start_interp(struct daemon *d, struct client *c, uint32_t req_id, struct session *s,
		     const char *runtime, struct cells *cs);
/* End a run now (its supervisor exits; it is answered once reaped). */
void run_kill(struct run *r);
/* Send a fixed message to a running run's supervisor; 0 or -errno. */
int run_lifeline_send(struct run *r, const void *m, size_t len);
/* An event from the spawner about a run's sandbox (STARTED carries its
 * memory figure fds: taken from *nfds when kept). */
void run_spawner_event(struct run *r, const struct spawn_ev *ev, int *fds, size_t *nfds);
/* The client went away: kill its runs; each is freed once reaped. */
void run_orphan_client(struct daemon *d, struct client *c);
/* A reload: the queued runs of clients [access] no longer allows are
 * answered unauthorized and dropped. */
void run_access_reloaded(struct daemon *d);
/* Count a uid's work that holds a run slot: runs launched and not freed
 * (an interpreter session's interpreter not among them) and cells running. */
uint32_t run_count_uid(const struct daemon *d, uid_t uid);
/* Start queued runs while there are free slots. */
void run_dispatch(struct daemon *d);
/* Make the event run_dispatch_soon() (run.h) wakes the queue by. */
void run_dispatch_init(struct daemon *d);
/* Keep prepared_sandboxes sandboxes prepared ahead. */
void run_pool_fill(struct daemon *d);
/* The pool's back-off timer and rate-limited warnings (frontend_main). Returns 0 or -ENOMEM. */
int run_pool_init(struct daemon *d);
/* End the prepared sandboxes of an older root spec generation. */
void run_pool_discard_stale(struct daemon *d);
/* A reload: every pre-started interpreter and pre-start plan is of the old
 * config; discard them (the next fill makes new ones). */
void run_pool_reloaded(struct daemon *d);
/* A spawner event about a prepared sandbox no run took yet (fds taken from
 * *nfds when kept). */
void run_pool_event(struct daemon *d, struct prep *p, const struct spawn_ev *ev, int *fds,
		    size_t *nfds);
/* cancel: one of the caller's runs, by request id or run id. */
void run_cancel_request(struct daemon *d, struct client *c, uint32_t req_id,
			const struct proto_cancel *what);
/* ps: the caller's runs (root: all), queued and running. */
void run_ps(struct daemon *d, struct client *c, uint32_t req_id);
/* Cancel every queued run, and the running ones too when asked. */
void run_stop_all(struct daemon *d, bool running_too);
/* Cancel every run of a session that ends. */
void run_cancel_session(struct daemon *d, struct session *s);

/* ---- audit.c: one structured line per finished run ---- */
/* Who asked for what: the run (an interpreter's for a cell), its owner and
 * client pid, its runtime and profile (NULL: "default"), the limits it named. */
struct audit_who {
	uint32_t run_id;
	uid_t uid;
	pid_t pid;
	const char *runtime;
	const char *profile;
	const struct proto_limits *asked;
	bool prestarted;
	/* A zygote's run: "ran" (its child ran the code) or "fell_back"
	 * (the supervisor ran it the ordinary way); NULL: not one. */
	const char *zygote;
};
void audit_run(struct daemon *d, const struct audit_who *who, const struct proto_result *res,
	       const struct egress_stats *net, const char *err);

#endif
