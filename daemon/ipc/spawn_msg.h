/*
 * spawn_msg.h: the small fixed messages between the frontend and the spawner
 * (the lifeline's, between a sandbox's supervisor and the frontend, are in
 * sup_msg.h, included here so that their users need one include).
 *
 * Both are SOCK_SEQPACKET socketpairs; a message is one packet of exactly the
 * struct's size (anything else is a protocol violation). fds cross with
 * SCM_RIGHTS. Nothing here is parsed with a general-purpose decoder: the
 * privileged spawner reads fixed-size structs and checks every field.
 * Every err field, here and in keep_msg.h, is 0 or -errno.
 */
#ifndef AIRLOCKD_SPAWN_MSG_H
#define AIRLOCKD_SPAWN_MSG_H

#include <stdint.h>

#include "sup_msg.h"

enum spawn_msg_type {
	/* frontend -> spawner: struct spawn_req + fds {plan, lifeline, stdout, stderr}.
	 * With SPAWN_F_ZYGOTE_RUN (the same four fds): the run's code is
	 * forked by the zygote that owns the prepared sandbox (its
	 * SPAWN_PREPARE had SPAWN_F_ZYGOTE), which must be alive: else
	 * SPAWN_FAILED, step "zygote", -ESRCH, and the sandbox stays
	 * prepared (nothing killed): send the request again without the
	 * flag, or SPAWN_DISCARD it. The supervisor falls back to the
	 * ordinary way itself when the zygote fails it; SUP_EXIT says which
	 * (sup_msg.h, enum sup_zygote; docs/design-bursts.md §3.5). */
	SPAWN_REQ = 1,
	/* spawner -> frontend: struct spawn_ev, the sandbox started (pid) or failed (err) */
	SPAWN_STARTED = 2,
	SPAWN_FAILED = 3,
	/* spawner -> frontend: the supervisor was reaped; status, memory figures */
	SPAWN_DONE = 4,
	/* spawner -> frontend: SIGTERM/SIGINT came to the main pid: stop gracefully */
	SPAWN_STOP = 5,
	/* spawner -> frontend: SIGHUP came to the main pid (or the frontend
	 * asked): reload the config. The spawner read the file (the frontend
	 * may not be able to: a 0600 root file) with start-up's checks and
	 * attaches its bytes as one sealed memfd, which the frontend parses.
	 * No fd and err 0: there is no file (not given, default path absent):
	 * the built-in defaults. err < 0: refused; the spawner logged why.
	 * frontend -> spawner: struct spawn_req, no fd: SIGHUP came to the
	 * frontend; read the file and answer as above
	 * (docs/design-service.md, "Who reads the file"). */
	SPAWN_RELOAD = 6,
	/* frontend -> spawner: struct spawn_req + fd {root spec (rootspec.h),
	 * a sealed memfd the spawner checks}: clone a sandbox into the
	 * uid slot and build everything that does not depend on a request;
	 * it waits for a SPAWN_REQ naming its slot. Every event of that
	 * sandbox comes back with this run_id (its key: daemon/frontend/spawnref.h):
	 * STARTED (with the memory figure fds), FAILED, DONE, also after the
	 * SPAWN_REQ, whose run_id is for logs only.
	 * With SPAWN_F_PRESTART: fds {root spec, pre-start plan, stdout,
	 * stderr}: the sandbox also starts the runtime's interpreter from the
	 * pre-start plan (plan.h; its argv, environment, limits as ceilings),
	 * blocked on its code file, with the run's output pipes already at
	 * fds 1 and 2 (docs/design-interpreters.md §1).
	 * With SPAWN_F_ZYGOTE: fds as without a flag; the sandbox's user
	 * namespace is owned by the zygote of uid slot prep_key (alive:
	 * else SPAWN_FAILED "zygote"), its maps stay uid_slot's; its run
	 * may be a zygote's (SPAWN_F_ZYGOTE_RUN) or an ordinary one
	 * (docs/design-bursts.md §3.5). */
	SPAWN_PREPARE = 8,
	/* frontend -> spawner: struct spawn_req, no fd: the prepared sandbox of
	 * uid_slot (prepared under prep_key) will get no run: end it. Its reap
	 * comes back as SPAWN_DONE under prep_key (or SPAWN_FAILED with pid 0 if
	 * there is no such sandbox).
	 * With SPAWN_F_ZYGOTE: stop the zygote of uid_slot started under
	 * run_id (its key); its reap answers SPAWN_ZYGOTE_GONE; a key that is
	 * not the slot's live zygote's is ignored (no answer). */
	SPAWN_DISCARD = 9,
	/* frontend -> spawner: struct spawn_req + fd {keeper socket}: clone a
	 * session's keeper (memory_bytes = its workspace size). Its events come
	 * back as SPAWN_STARTED/FAILED/DONE with the session's key as run_id. */
	SPAWN_KEEPER = 7,
	/* frontend -> spawner: struct spawn_req + fd {spec}: start a zygote
	 * (docs/design-bursts.md §3.3) as the first uid of uid_slot, which
	 * stays the zygote's until its reap. spec: a sealed memfd of at most
	 * SPAWN_ZYGOTE_SPEC_MAX bytes, NUL-terminated strings: the runtime's
	 * python (an absolute path), then its base environment (NAME=value,
	 * at most SPAWN_ZYGOTE_ENV_MAX; no loader variable: LD_*,
	 * GCONV_PATH...). With SPAWN_F_NOPROC the runs' seccomp program is
	 * subprocess = no's. Answers SPAWN_STARTED (pid) or SPAWN_FAILED
	 * under run_id. */
	SPAWN_ZYGOTE_START = 10,
	/* spawner -> frontend: struct spawn_ev: the zygote started under
	 * run_id was reaped (pid, status). */
	SPAWN_ZYGOTE_GONE = 11,
};

#define SPAWN_REQ_NFDS 4
#define SPAWN_REQ_NFDS_MAX 5	    /* with SPAWN_F_WORKSPACE */
#define SPAWN_REQ_NFDS_PRESTARTED 2 /* with SPAWN_F_PRESTARTED: plan, lifeline */
#define SPAWN_KEEPER_NFDS 1
#define SPAWN_PREPARE_NFDS 1	      /* the root spec (rootspec.h) */
#define SPAWN_PREPARE_NFDS_PRESTART 4 /* with SPAWN_F_PRESTART: + plan, stdout, stderr */
#define SPAWN_ZYGOTE_START_NFDS 1     /* the spec */
#define SPAWN_ZYGOTE_SPEC_MAX 65536U  /* bytes of a zygote's spec */
#define SPAWN_ZYGOTE_ENV_MAX 256U     /* entries of its environment */
/* spawn_req.cpu_percent: cpu.max takes any quota; 4096 CPUs at the most */
#define SPAWN_CPU_PERCENT_MAX (100U * 4096U)

/* spawn_req.flags */
#define SPAWN_F_WORKSPACE 0x1u	 /* SPAWN_REQ: a fifth fd: the session's workspace mount */
#define SPAWN_F_PRESTART 0x2u	 /* SPAWN_PREPARE: start the interpreter ahead */
#define SPAWN_F_PRESTARTED 0x4u	 /* SPAWN_REQ: for a pre-started one: plan, lifeline only */
#define SPAWN_F_NOPROC 0x8u	 /* SPAWN_ZYGOTE_START: the runs' seccomp: subprocess = no */
#define SPAWN_F_ZYGOTE 0x10u	 /* SPAWN_PREPARE: owned by the zygote of slot prep_key */
#define SPAWN_F_ZYGOTE_RUN 0x20u /* SPAWN_REQ: the code forked by that zygote */
/* SPAWN_F_ZYGOTE on SPAWN_DISCARD: stop the zygote of uid_slot (run_id its key) */

struct spawn_req {
	uint32_t type;
	uint32_t run_id;
	uint32_t uid_slot; /* per-run uid pair: uid_base + 2 * slot, + 1 */
	uint32_t flags;
	uint64_t memory_bytes; /* cgroup memory limit, 0 = none */
	uint32_t prep_key;     /* SPAWN_REQ, SPAWN_DISCARD: the key the slot's sandbox
				* was prepared under (its SPAWN_PREPARE run_id) */
	uint32_t processes;    /* SPAWN_REQ: the run's process limit (cgroup2 pids.max) */
	uint32_t cpu_percent;  /* SPAWN_REQ: cgroup2 cpu.max, % of one CPU; 0 = none */
	uint32_t reserved;     /* 0 */
};

struct spawn_ev {
	uint32_t type;
	uint32_t run_id;
	int32_t err;	      /* SPAWN_FAILED: -errno of the step that failed */
	int32_t pid;	      /* host pid of the supervisor */
	int32_t status;	      /* SPAWN_DONE: the supervisor's wait status */
	uint32_t oom;	      /* SPAWN_DONE: the memory limit was hit (cgroup) */
	uint64_t memory_peak; /* SPAWN_DONE: bytes, 0 = not measured */
	char step[32];	      /* SPAWN_FAILED: what failed */
};

/*
 * spawner -> a prepared supervisor, once, on its control socket: the run's
 * fds {plan, lifeline, stdout, stderr[, workspace]} (docs/performance.md);
 * to a pre-started one (SPAWN_F_PRESTARTED) {plan, lifeline}: its output
 * pipes came with its SPAWN_PREPARE. With SPAWN_F_ZYGOTE_RUN {plan,
 * lifeline, stdout, stderr, order}: order is a close-on-exec copy of the
 * spawner's end of the owning zygote's order socket (SOCK_SEQPACKET,
 * non-blocking); the supervisor sends the run's order on it itself
 * (ipc/zygote_msg.h) and closes it (docs/design-bursts.md §3.5).
 */
#define SB_START_MAGIC 0x54525453U /* "STRT" */
#define SB_START_NFDS_ZYGOTE 5	   /* with SPAWN_F_ZYGOTE_RUN */

struct sb_start {
	uint32_t magic;
	uint32_t flags; /* SPAWN_F_WORKSPACE: a fifth fd; SPAWN_F_PRESTARTED: two fds;
			 * SPAWN_F_ZYGOTE_RUN: a fifth fd, the zygote's order socket */
};

#endif
