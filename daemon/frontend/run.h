/*
 * run.h: what run.c, run_io.c and run_pool.c share about a run; the rest of
 * the frontend sees runs only through frontend.h.
 *
 * run.c: the run itself: request, queue, launch, its state machine
 *   (run_state.h; run_transition() makes every change), cancel.
 * run_plan.c: its plan (and a pre-started interpreter's); run_ps.c: ps.
 * run_io.c: its output, lifeline, artifacts, backstop, and the result.
 * run_pool.c: the sandboxes prepared ahead, and asking the spawner for one.
 * run_reset.c: a run going back to the queue gives back what its launch took.
 */
#ifndef AIRLOCKD_RUN_H
#define AIRLOCKD_RUN_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "frontend.h"
#include "run_outcome.h"
#include "run_state.h"
#include "spawn_msg.h"

struct event;
struct egress_policy;
struct advisory_list;
struct egress_run;
struct run_tools;
struct cells;

/* One output pipe of a run (run_io.c). */
struct run_out {
	struct run *r;
	int fd;
	struct event *ev;
	uint8_t *buf;
	size_t cap;	/* bytes allocated at buf (grown as kept, up to the limit) */
	size_t len;	/* kept */
	uint64_t total; /* produced */
	bool eof;
};

/* A candidate artifact the supervisor sent (run_io.c). */
struct run_artifact {
	char name[SUP_NAME_MAX + 1];
	int fd;
	uint64_t size;
	struct timespec mtime;
	bool hidden; /* a component of its path starts with '.' */
};

/* A python run's figure the supervisor sent (SUP_DISPLAY, run_display.c). */
struct run_figure {
	char name[8]; /* NNN.png or NNN.svg */
	int fd;
};

/*
 * A run's class in the run queue (runqueue.h): it waits only behind runs of
 * its own class. A one-shot run needs a uid slot or a sandbox prepared
 * ahead; a session run brings its session's slot, so a one-shot run that
 * waits for a slot must not hold it up (review finding 3 of issue 15).
 */
enum run_queue_class {
	RUN_QUEUE_ONE_SHOT = 0,
	RUN_QUEUE_SESSION = 1,
	/* Not a run: an interpreter session's next cell waiting for a run
	 * slot (cells.c); its interpreter already lives in the session's. */
	RUN_QUEUE_CELL = 2,
};
_Static_assert(RUN_QUEUE_CELL < RUNQUEUE_CLASSES, "a run class the queue does not have");

/* One run in the frontend (run.c), from its request to its reap. */
struct run {
	TAILQ_ENTRY(run) entry;
	struct runqueue_item q; /* while queued */
	struct daemon *d;
	struct client *c; /* NULL once the client left */
	uint32_t run_id, req_id, slot;
	enum run_state state; /* changed by run_transition() only */
	uid_t uid;
	pid_t client_pid;
	char runtime[PROTO_RUNTIME_MAX + 1];
	char profile[PROTO_PROFILE_MAX + 1]; /* its profile's name, for the audit line */
	struct proto_limits lim, asked;
	int plan_fd;		   /* until handed to the spawner (a pre-started run's: freed) */
	uint64_t plan_bytes;	   /* charged to the uid's byte budget until freed */
	struct timespec t_request; /* arrival */
	struct timespec t_start;   /* handed to the spawner */
	struct run_facts f;	   /* what was heard: decides the outcome (run_outcome.h) */
	bool stream;		   /* send output as stream events */
	struct session *session;   /* NULL for a one-shot run */
	char **in_names;	   /* a session run's input files, written by the keeper */
	int *in_fds;		   /* their sealed memfds */
	size_t nin;
	int lifeline;
	struct event *lifeline_ev;
	struct event *backstop_ev;
	struct run_out out[2];
	struct run_artifact *arts; /* best first (run_io_artifact_before), at most lim[ARTIFACTS] */
	size_t narts;
	uint64_t arts_omitted, arts_omitted_bytes; /* candidates left out, their sizes */
	struct run_figure disp[PROTO_DISPLAY_MAX]; /* a python run's figures (run_display.c) */
	size_t ndisp;
	int stat_fd[2];	   /* the run's cgroup peak and oom files, or -1 */
	uint32_t prep_key; /* its sandbox's spawn key (spawnref.h), or 0 */
	uint32_t mounts;   /* the [mount]s it names (bit i: mount i), for run_pool_take */
	struct egress_policy *egress_pol; /* network = proxy: its profile's, copied; else NULL */
	struct egress_run *egress;	  /* served by the proxy since SUP_EGRESS, or NULL */
	struct run_tools *tools;	  /* the tool bridge (run_tools.h), or NULL */
	struct cells *cells; /* an interpreter session's interpreter (cells.h), or NULL */
	/* Output or the lifeline closed: run_maybe_finish, called by run_io.c
	 * through this pointer so that run_io.c calls nothing of run.c (the
	 * frontend's call cycle, docs/design-reshape.md §1.5). */
	void (*io_done)(struct run *r);
	struct advisory_list *advisories; /* blocked_imports findings (advisory.h), or NULL */
	/* The runtime (index in cfg) whose pre-started interpreter may serve
	 * it (run_pool_eligible), or -1; prestarted: one did (run_pool_take). */
	int prestart_rt;
	/* The runtime whose zygote may serve it (run_pool_zygote_eligible: a
	 * wider rule than prestart_rt's), or -1. */
	int zygote_rt;
	uint32_t prestart_gen;
	bool prestarted;
	/* A zygote's sandbox was taken: the zygote's key, the run goes
	 * SPAWN_F_ZYGOTE_RUN (docs/design-bursts.md §3.6); 0: none.
	 * no_zygote: it failed one before its code ran (run_retry_fresh). */
	uint32_t zygote_key;
	bool no_zygote;
};

/* ---- run.c ---- */

/*
 * Does the run hold a run slot (max_runs, max_runs_per_uid) from its launch
 * to its end? Every run but an interpreter session's interpreter: that one
 * lives between cells, and its cells take a slot each while they run
 * (cells.c), so that an idle interpreter holds none (issue 28).
 */
bool run_holds_slot(const struct run *r);

/* Change a run's state (run_state.h) and do the new state's entry action;
 * entering REAPED frees it. */
void run_transition(struct run *r, enum run_event ev);
/*
 * Start queued runs from the event loop's next turn (run_dispatch), not
 * from here: for a caller that may be inside a walk over the runs. By an
 * event, not a call: run_pool.c and cells.c wake the queue without calling
 * run.c. Its event is made at start (run_dispatch_init).
 */
static inline void
run_dispatch_soon(struct daemon *d)
{
	if (d->dispatch_ev != NULL)
		event_active(d->dispatch_ev, 0, 0);
}

/* ---- run_reset.c ---- */

/*
 * Before a one-shot run goes back to the queue (run_retry_fresh: its
 * pre-started interpreter was gone; run_dispatch: its launch found no uid
 * slot): what a launch gave it is given back (its sandbox's output,
 * lifeline, backstop, artifacts, proxy and memory fds; its spawn key and
 * with it its uid slot; its count among the running) and what was heard of
 * its sandbox (struct run_facts) forgotten, so that its next launch starts
 * as its first did. Its plan, inputs, limits, budget charge and advisories
 * stay. A run that holds nothing (never launched) is left as it is.
 * Returns 0, or -EINVAL, with nothing changed, for a run that cannot go
 * back: a session run, or a launched run with tools (the caller ends it).
 */
int run_reset_for_queue(struct run *r);

/* ---- run_io.c ---- */

/* Open the run's output pipes (unless its pre-started interpreter's are
 * there), lifeline and backstop timer, watched from here; ret_child gets the
 * sandbox's ends (lifeline, stdout, stderr; -1 for pipes it has). 0 or
 * -errno, with nothing left open. */
int run_io_open(struct run *r, int ret_child[3]);
/* Make a pipe whose read end is non-blocking in the frontend. */
int run_io_pipe(int p[2]);
/* Close the lifeline (the supervisor exits when it closes). */
void run_io_close_lifeline(struct run *r);
/* Close the lifeline and both outputs: nothing more will be read. */
void run_io_close(struct run *r);
/* SUP_ARTIFACT: keep the candidate artifact fd (taken) if it ranks. */
void run_io_add_artifact(struct run *r, const struct sup_msg *m, int fd);
/* A cell's artifacts: those its interpreter's run collected at the cell's
 * end, into res (the array returned: for run_io_artifacts_free()); the run
 * forgets them. */
struct proto_artifact *run_io_cell_artifacts(struct run *r, struct proto_result *res);
/* What the uid's byte budget leaves for a result's copies (artifacts,
 * figures), less a packet for the result itself. */
uint64_t run_io_copy_room(struct run *r);
/* Close the copies of an answered result's n artifacts and free arts. */
void run_io_artifacts_free(struct proto_artifact *arts, size_t n);
/* SUP_EGRESS: serve the sandbox's egress listener fd (taken). */
void run_io_egress_open(struct run *r, int fd);

/* ---- run_display.c ---- */

/* SUP_DISPLAY: keep a python run's figure fd (taken) if its name is one. */
void run_display_add(struct run *r, const struct sup_msg *m, int fd);
/* The figures as res->display (by name, whole, within artifact_bytes and
 * the uid's byte budget); the array returned for run_io_artifacts_free(),
 * NULL with none. */
struct proto_artifact *run_display_result(struct run *r, struct proto_result *res);
/* Close the figures kept. */
void run_display_reset(struct run *r);

/* ---- lifeline.c ---- */

/* Read at most budget messages from the supervisor; true if it stopped on EAGAIN. */
bool lifeline_read(struct run *r, int budget);
/* The lifeline is readable (arg: the run). */
void lifeline_cb(evutil_socket_t fd, short what, void *arg);
/* Read the memory figures ahead of the reap; false if not usable yet. */
bool run_io_memory_early(struct run *r);
/* Build the result, send it (if the client is there), audit it. */
void run_io_answer(struct run *r);
/* Forget a sandbox's output, lifeline, backstop and artifacts, for the run
 * to be started again (its advisories stay). */
void run_io_reset(struct run *r);
/* Free what run_io holds: buffers, events, artifacts. */
void run_io_free(struct run *r);

/* ---- run_pool.c ---- */

#define RUN_POOL_BACKOFF_MIN_MS 50    /* the refill's first wait after a failure */
#define RUN_POOL_BACKOFF_MAX_MS 10000 /* its longest, after failures in a row */
#define RUN_POOL_WARN_MS 60000	      /* a repeated pool or mount warning: once a minute */
#define RUN_POOL_ZYGOTE (-2)	      /* struct prep.rt of a zygote's sandbox */

/* Ask the spawner to prepare a sandbox in a uid slot, events keyed by key.
 * Returns 0 or -errno (nothing sent; logged). */
int run_pool_prepare(struct daemon *d, uint32_t key, uint32_t slot);
/* Which [mount]s' sources fail rootspec_source_check() now (bit i: mount i). */
uint32_t run_pool_mounts_missing(struct daemon *d);
/* The sandbox prepared for r will get no run: have the spawner end it. */
void run_pool_discard(struct run *r);
/* Would run_pool_take() give r a sandbox prepared ahead? */
bool run_pool_can_take(struct daemon *d, const struct run *r);
/* Discard the live prepared sandboxes whose missing bits for the mounts
 * in mask differ from now (run_pool_recheck, run_mounts_unavailable). */
void run_pool_mounts_changed(struct daemon *d, uint32_t now, uint32_t mask);
/* Check again the sources that live prepared sandboxes lack; discard
 * those prepared without one that is back (no system call when none is
 * missing). */
void run_pool_recheck(struct daemon *d);
/* Give r a sandbox prepared ahead, if one is alive: a pre-started
 * interpreter of its runtime if it may have one, else a plain sandbox; its
 * slot, key, memory figure fds (and output pipes). Returns 0 (*ret_ready:
 * its STARTED came) or -ENOENT. */
int run_pool_take(struct daemon *d, struct run *r, bool *ret_ready);
/*
 * The runtime index whose pre-started interpreter may serve this request,
 * or -1: the runtime has prestart = yes, and the request sets nothing that
 * is fixed at the interpreter's exec (env, argv, stdin, tools, a session,
 * a profile's network proxy, file_write, subprocess or hidden_paths, [mount]
 * trees, which python-site's start-up would scan), and no
 * limit enforced by an rlimit above the pre-start plan's (the ceilings).
 */
int run_pool_eligible(struct daemon *d, const struct proto_run *req, uint32_t flags,
		      const struct config_profile *prof, const struct proto_limits *lim,
		      uint32_t mounts);
/* The runtime index whose zygote may serve this request, or -1: its own
 * rule (docs/design-bursts.md §3.6), wider than run_pool_eligible()'s: the
 * request's env, argv, stdin and figures_svg are the zygote's child's to
 * honour; not tools, a session, a network proxy, hidden paths, [mount]
 * trees, plan flags or limits above the ceilings. */
int run_pool_zygote_eligible(struct daemon *d, const struct proto_run *req, uint32_t flags,
			     const struct config_profile *prof, const struct proto_limits *lim,
			     uint32_t mounts);
/* No uid slot is free for a run that can take no sandbox of the pool: end
 * one the pool holds, a waiting pre-started interpreter first (its reap
 * frees its slot). Returns whether one was ended or is being ended. */
bool run_pool_give_way(struct daemon *d);
/* The zygote of key is gone or stopping: its prepared sandboxes are ended
 * (they are its uid's: no other zygote or process may serve from them). */
void run_pool_zygote_gone(struct daemon *d, uint32_t key);

/* ---- run_admit.c ---- */

/* What a request asks, gathered and checked by run_admit(). */
struct run_ask {
	struct session *s; /* NULL: a one-shot run */
	const struct config_profile *prof;
	struct proto_limits lim;
	uint32_t mounts, flags;
};

/* Gather a request's facts and decide: 0 to go on (a filled), or -1 once
 * answered (refused). cs: the interpreter's cells for its own run. */
int run_admit(struct daemon *d, struct client *c, uint32_t req_id, const struct proto_run *req,
	      struct cells *cs, struct run_ask *a);
/* The plan's flags of an admitted request (cs: an interpreter's run;
 * background: its session was opened with background). */
void run_ask_flags(struct run_ask *a, const struct cells *cs, bool background);
/* The profile's blocked_imports findings on the request's code, or NULL. */
struct advisory_list *run_advise(const struct config *cfg, const struct proto_run *req,
				 const struct config_profile *prof);

/* ---- run_plan.c ---- */

/*
 * Validate the request against the config and pack it into a plan memfd
 * (flags: PLAN_F_*, the session and the profile's switches). On a request
 * error, writes the reply code and message.
 */
int run_make_plan(struct daemon *d, const struct proto_run *req, uint32_t flags,
		  const struct config_profile *prof, const struct proto_limits *lim,
		  uint32_t mounts, int *ret_fd, enum proto_error *ret_code, char *why,
		  size_t whylen);
/* The pre-start plan of runtime rt: the plan of a run of it with empty
 * code, nothing else asked, at the [limits] ceilings. */
int run_prestart_plan(struct daemon *d, const struct config_runtime *rt, int *ret_fd);
/* Whether a run of rt starts through the figure hook (a python runtime of
 * the shape `PROGRAM [-FLAGS...] {code}`: its figures come back). */
bool run_plan_boots(const struct config_runtime *rt);

#endif
