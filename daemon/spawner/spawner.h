/*
 * spawner.h: the privileged half of airlockd. It keeps CAP_SETUID and
 * CAP_SETGID and does one thing: on a fixed-size request from the frontend,
 * clone a sandbox into fresh namespaces, write its uid/gid maps, put it in
 * its memory cgroup, and tell the frontend when it was reaped.
 */
#ifndef AIRLOCKD_SPAWNER_H
#define AIRLOCKD_SPAWNER_H

#include <linux/filter.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "log.h"
#include "sandbox.h"

struct spawner_slot {
	pid_t pid; /* 0 = free */
	uint32_t run_id;
	int ctl; /* a prepared sandbox's control socket, until its start; or -1 */
	struct cgroup_run_base cg_base; /* a run's: its cgroup before the run */
	uint64_t ws_bytes;		/* a keeper's: its session's workspace size */
	uint32_t owner; /* a zygote-owned sandbox's: its zygote's slot + 1; else 0 */
};

/* A zygote of a uid slot (docs/design-bursts.md §3.3): our child until
 * its reap, so its pid is not reused before we wait for it. */
struct spawner_zygote_slot {
	pid_t pid; /* 0 = none */
	uint32_t run_id;
	int sock; /* our end of its order socket (non-blocking), or -1 */
	/* live sandboxes this slot's zygote (alive or gone) owns: while any
	 * is, the slot takes no zygote, sandbox or keeper (its uid owns them) */
	uint32_t owned;
};

#define SPAWNER_ZYGOTE_PYTHONS_MAX 16 /* as many as runtimes (CONFIG_RUNTIMES_MAX) */
#define SPAWNER_MOUNT_WARN_MS 60000   /* a missing mount's warning: at most once a minute */

struct spawner {
	int sock; /* to the frontend */
	uid_t uid_base;
	uint32_t nslots;		     /* uid_count / 2 */
	struct spawner_slot *slots;	     /* the run sandbox of each uid slot */
	struct spawner_slot *keepers;	     /* the session keeper of each uid slot */
	struct spawner_zygote_slot *zygotes; /* the zygote of each uid slot */
	/* zygote.py and the _airlock_zygote extension: the spawner's own,
	 * never the frontend's (NULL: SPAWN_ZYGOTE_START fails; airlockd
	 * sets the installed ones, docs/design-bursts.md §3.3) */
	const char *zygote_script;
	const char *zygote_ext;
	/* The pythons a zygote may exec: the start-up configuration's python
	 * runtimes' absolute argv[0], fixed before the split (the frontend
	 * names one; a reload adds none). */
	const char *zygote_pythons[SPAWNER_ZYGOTE_PYTHONS_MAX];
	size_t nzygote_pythons;
	struct sandbox_layout layout;
	struct sock_fprog seccomp;
	struct rootspec rootspec; /* the last SPAWN_PREPARE's, checked; its clone's copy */
	/* A source found missing at every SPAWN_PREPARE: one line a minute
	 * per mount, with a count, not one per sandbox (issue 28). */
	struct log_repeat mount_warn[ROOTSPEC_MOUNTS_MAX];
	struct log_repeat fds_warn;	  /* a request whose fds were lost (spawner_fds_lost) */
	struct sock_fprog seccomp_noproc; /* subprocess = false */
	struct cgroup cg;
	pid_t frontend;	     /* our child too: its status is the service's */
	int frontend_status; /* once frontend_reaped */
	bool frontend_reaped;
	const char *config_path; /* read again on SIGHUP (spawner_reload) */
	bool config_given;	 /* --config: the file must exist */
	int pdeathsig; /* kept across spawner_owner_begin/end (a change of euid clears it) */
	pid_t ppid;
};

struct spawn_req;
struct spawner_cmd;

/*
 * Hold one request of len bytes that came with nfds fds to its row of the
 * spawner's table: exactly the struct's size, reserved 0, cpu_percent within
 * SPAWN_CPU_PERCENT_MAX, a known type, only the flags that type may carry,
 * exactly the fds it brings. Returns 0 and the row, or -EPROTO (the caller
 * closes the fds and stops: the frontend is not what it should be).
 */
int spawner_check_req(const struct spawn_req *req, size_t len, size_t nfds,
		      const struct spawner_cmd **ret_cmd);

/*
 * A request that came with fewer fds than it was sent with (MSG_CTRUNC:
 * the spawner at its RLIMIT_NOFILE): 0 when its fixed struct passes
 * spawner_check_req()'s checks but the fds', nfds is fewer than its type
 * carries and its uid slot is below nslots (it fails alone: answered
 * SPAWN_FAILED, step "fds"), else -EPROTO (malformed: the spawner stops).
 */
int spawner_check_lost(const struct spawn_req *req, size_t len, size_t nfds, uint32_t nslots);

/*
 * The signals the spawner takes from its signalfd (SIGCHLD, SIGTERM, SIGINT,
 * SIGHUP): main() blocks them before the frontend is forked, so one that
 * comes before spawner_serve() is pending, not lost or fatal.
 */
void spawner_signals(sigset_t *ret);

/*
 * Serve the frontend until it goes away; then kill every sandbox and return.
 * Every sandbox has PR_SET_PDEATHSIG, so the spawner's own death ends them too.
 */
int spawner_serve(struct spawner *sp);

#endif
