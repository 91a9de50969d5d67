/* frontend.c: the frontend process: event loop, the spawner's events to their
 * owners (spawn_wrap.c receives them), signals, reload. */
#include <errno.h>
#include <inttypes.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdpass.h"
#include "memfd.h"
#include "frontend.h"
#include "spawn_wrap.h"
#include "run_owner.h"
#include "session.h"
#include "session_store.h"
#include "log.h"
#include "xalloc.h"
#include "compiler.h"
#include "fdio.h"
#include "xevent.h"
#include "svcmgr.h"

/* SPAWN_STOP: SIGTERM/SIGINT came to the main pid. */
static void
frontend_spawner_stop(struct daemon *d, const struct spawn_ev *ev UNUSED, int *fds UNUSED,
		      size_t *nfds UNUSED)
{
	frontend_stop(d);
}

/* SPAWN_RELOAD: the config file's bytes, read by the spawner (spawn_msg.h). */
static void
frontend_spawner_reload(struct daemon *d, const struct spawn_ev *ev, int *fds, size_t *nfds)
{
	if (*nfds > 1)
		return; /* closed by the caller */
	frontend_reload(d, ev, *nfds == 1 ? fds[0] : -1);
	*nfds = 0;
}

/*
 * STARTED, FAILED, DONE: about a sandbox or keeper, under the key it was
 * asked for by (spawnref.h); the registry names its one owner.
 */
static void
frontend_spawner_keyed(struct daemon *d, const struct spawn_ev *ev, int *fds, size_t *nfds)
{
	struct spawnref *ref = spawnref_find(&d->refs, ev->run_id);

	if (ref == NULL) {
		log_warnx("spawner: event %u for unknown key %" PRIu32, ev->type, ev->run_id);
		return;
	}
	switch (ref->kind) {
	case SPAWNREF_POOL:
		run_pool_event(d, ref->owner, ev, fds, nfds);
		break;
	case SPAWNREF_RUN:
		run_spawner_event(ref->owner, ev, fds, nfds);
		break;
	case SPAWNREF_KEEPER:
		session_spawner_event(ref->owner, ev);
		break;
	case SPAWNREF_ZYGOTE:
		zygotes_event(ref->owner, ev);
		break;
	}
}

/* Who handles each event from the spawner (spawn_wrap.c checked its fds). */
static const struct {
	uint32_t type;
	void (*fn)(struct daemon *d, const struct spawn_ev *ev, int *fds, size_t *nfds);
} frontend_spawner_events[] = {
	{SPAWN_STARTED, frontend_spawner_keyed}, {SPAWN_FAILED, frontend_spawner_keyed},
	{SPAWN_DONE, frontend_spawner_keyed},	 {SPAWN_STOP, frontend_spawner_stop},
	{SPAWN_RELOAD, frontend_spawner_reload}, {SPAWN_ZYGOTE_GONE, frontend_spawner_keyed},
};

/* Events from the spawner; its end is the frontend's end. */
static void
frontend_spawner_cb(evutil_socket_t fd, short what UNUSED, void *arg)
{
	struct daemon *d = arg;
	int budget;

	for (budget = 64; budget > 0; budget--) {
		struct spawn_ev ev;
		int fds[SPAWN_WRAP_FDS_MAX];
		size_t nfds = 0, i;
		bool lost = false;
		int n = spawn_wrap_recv(fd, &ev, fds, &nfds, &lost);

		if (n == -EAGAIN || n == -EINTR)
			return;
		if (n == 0) {
			log_warnx("the spawner is gone; stopping");
			event_base_loopbreak(d->base);
			return;
		}
		/* Our own, more trusted peer: anything unexpected is a broken
		 * invariant, not an attack to survive. */
		if (n < 0)
			fatalx("malformed message from the spawner");
		/*
		 * Its fds did not all arrive (spawn_wrap_recv() closed the
		 * rest): we are at our RLIMIT_NOFILE (the service user's to
		 * share), not facing a broken spawner. One event's worth fails
		 * alone (issue 28): STARTED goes on without its memory figure
		 * fds (as when the spawner has none), a RELOAD is refused.
		 */
		if (lost) {
			log_repeat_warnx(&d->pool_warn,
					 "spawner: event %u: its fds could not be received (the "
					 "frontend is at its RLIMIT_NOFILE)",
					 ev.type);
			if (ev.type == SPAWN_RELOAD && ev.err == 0)
				ev.err = -EMFILE;
		}
		for (i = 0;
		     i < sizeof(frontend_spawner_events) / sizeof(frontend_spawner_events[0]); i++)
			if (frontend_spawner_events[i].type == ev.type)
				frontend_spawner_events[i].fn(d, &ev, fds, &nfds);
		fdpass_close_all(fds, nfds);
	}
}

/* The grace period is over: what still runs is cancelled. */
static void
frontend_grace_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct daemon *d = arg;

	log_info("stopping: grace period over; cancelling %u runs", d->nruns);
	run_stop_all(d, true);
}

/* Nothing may keep the daemon from stopping: a last resort after the grace. */
static void
frontend_hard_stop_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct daemon *d = arg;

	log_warnx("stopping: %u runs did not end after cancel; leaving", d->nruns);
	event_base_loopbreak(d->base);
}

/*
 * Graceful stop: accept nothing more, answer queued runs (cancelled), let
 * running ones finish within stop_grace_ms, then cancel them; leave once
 * every run was answered.
 */
void
frontend_stop(struct daemon *d)
{
	struct timeval grace, hard;

	if (d->stopping)
		return;
	d->stopping = true;
	svcmgr_notify("STOPPING=1");
	event_del(d->listen_ev);
	event_del(d->accept_retry_ev);
	if (d->pool_retry_ev != NULL)
		event_del(d->pool_retry_ev);
	/* New clients hear a refusal at once instead of waiting in a backlog
	 * nobody will read (under socket activation systemd keeps the socket). */
	close(d->listen_fd);
	d->listen_fd = -1;
	log_info("stopping: %u running, %u queued; grace %u ms", d->nrunning, d->queue.n,
		 d->cfg->stop_grace_ms);
	run_stop_all(d, false);
	session_stop_all(d);
	if (d->nruns == 0 && d->nsessions == 0) {
		event_base_loopbreak(d->base);
		return;
	}
	grace.tv_sec = d->cfg->stop_grace_ms / 1000;
	grace.tv_usec = (suseconds_t)(d->cfg->stop_grace_ms % 1000) * 1000;
	hard = grace;
	hard.tv_sec += 5;
	d->grace_ev = xevtimer_new(d->base, frontend_grace_cb, d);
	d->hard_stop_ev = xevtimer_new(d->base, frontend_hard_stop_cb, d);
	event_add(d->grace_ev, &grace);
	event_add(d->hard_stop_ev, &hard);
	frontend_status(d);
}

/*
 * A profile that hides something under /usr needs a /usr with no mount
 * beneath it (docs/security.md, hidden_paths): say so when the config is
 * loaded, at start-up and at each reload, rather than leave every such run
 * to fail at step hidden_paths.
 */
static void
frontend_warn_hidden_usr(const struct daemon *d)
{
	const struct config *cfg = d->cfg;
	size_t i, j;

	if (d->usr_submount[0] == '\0')
		return;
	for (i = 0; i < cfg->nprofiles; i++)
		for (j = 0; j < cfg->profiles[i].nhidden; j++)
			if (strncmp(cfg->profiles[i].hidden[j], "/usr/", 5) == 0) {
				log_warnx("profile %s: hidden_paths under /usr cannot work "
					  "here: %s is a mount beneath /usr, and the kernel "
					  "refuses such a /usr as an overlay layer; its runs "
					  "will fail at step hidden_paths",
					  cfg->profiles[i].name, d->usr_submount);
				break;
			}
}

static int frontend_rootspec_make(const struct daemon *d, const struct config *cfg,
				  struct rootspec *ret_rs, int *ret_fd);
static void frontend_rootspec_set(struct daemon *d, const struct rootspec *rs, int fd);

/*
 * Reload the config file, whose bytes the spawner read (ev, fd: spawn_msg.h;
 * docs/design-service.md). New limits, ceilings, access lists, profiles, runtimes and
 * daemon limits apply to new runs; a run in flight keeps what it was given.
 * The reload is then an event of each lifecycle (docs/design-reshape.md
 * section 4), each answering by its own table: every connection
 * (client_reload_all(): access is read again for every request), the
 * queued runs of users it no longer allows (refused: run_access_reloaded()),
 * every live session (session_reloaded(): ended if the new config refuses
 * its uid or lost its profile) and its interpreter (restarted if its
 * sandbox is made differently now).
 * What the process was built around (socket, users, uid range) stays.
 * A bad file is refused and the old config stays in force. Takes fd.
 */
void
frontend_reload(struct daemon *d, const struct spawn_ev *ev, int fd)
{
	const char *path = d->config_given ? d->config_path : CONFIG_DEFAULT_PATH;
	struct config *n, *o = d->cfg;
	struct rootspec rs;
	uint64_t size = 0;
	void *map = NULL;
	char err[512];
	int r, rs_fd;

	svcmgr_notify("RELOADING=1");
	if (ev->err != 0) {
		/* The spawner logged the reason (file, owner, mode). */
		log_warnx("reload refused, the old configuration stays: %s: %s", path,
			  strerror(-ev->err));
		goto out;
	}
	/* The spawner is more trusted than we are, but what we parse is what
	 * we checked: sealed, bounded. */
	if (fd >= 0) {
		r = memfd_check_sealed(fd, CONFIG_FILE_MAX, &size);
		if (r < 0) {
			log_warnx("reload refused, the old configuration stays: %s: the "
				  "spawner's copy: %s",
				  path, strerror(-r));
			goto out;
		}
		if (size > 0) {
			map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (map == MAP_FAILED) {
				map = NULL;
				log_warn("reload refused, the old configuration stays: mmap");
				goto out;
			}
		}
	}
	n = xcalloc(1, sizeof(*n));
	r = config_load_buffer(n, path, map, (size_t)size, err, sizeof(err));
	if (r < 0) {
		log_warnx("reload refused, the old configuration stays: %s", err);
		free(n);
		goto out;
	}
	/* Sealed before anything changes: a memfd the service user cannot
	 * have now (EMFILE) refuses this reload, not the service (issue 28;
	 * it was fatalx() after the switch). */
	r = frontend_rootspec_make(d, n, &rs, &rs_fd);
	if (r < 0) {
		log_warnx("reload refused, the old configuration stays: cannot seal the root "
			  "spec: %s",
			  strerror(-r));
		config_free(n);
		free(n);
		goto out;
	}
	/* Kept from the running config: fixed at start-up. */
	free(n->socket_path);
	n->socket_path = o->socket_path;
	o->socket_path = NULL;
	free(n->service_user);
	n->service_user = o->service_user;
	o->service_user = NULL;
	n->socket_uid = o->socket_uid;
	n->socket_gid = o->socket_gid;
	n->socket_mode = o->socket_mode;
	n->service_uid = o->service_uid;
	n->service_gid = o->service_gid;
	n->uid_base = o->uid_base;
	n->uid_count = o->uid_count;
	d->cfg = n;
	client_reload_all(d);
	/* Before the sessions: a queued run of a session ended now would
	 * be answered "cancelled", where its user is told "unauthorized". */
	run_access_reloaded(d);
	/* Compared with the old config, so before it is freed. */
	session_reloaded(d, o);
	config_free(o);
	free(o);
	/* Pre-started interpreters run the old runtimes' commands. */
	run_pool_reloaded(d);
	zygotes_reloaded(d);
	frontend_rootspec_set(d, &rs, rs_fd);
	log_info("reloaded: %u runs at most, %zu runtimes", n->max_runs, n->nruntimes);
	frontend_warn_hidden_usr(d);
	run_dispatch(d);
out:
	if (map != NULL)
		munmap(map, (size_t)size);
	fd_close(fd);
	svcmgr_notify("READY=1");
}

/*
 * The root spec of cfg's [mount] sections into *ret_rs, sealed into a new
 * memfd (*ret_fd), or *ret_fd = -1 when it is the one in force. Nothing of
 * d changes. Returns 0 or -errno.
 */
static int
frontend_rootspec_make(const struct daemon *d, const struct config *cfg, struct rootspec *ret_rs,
		       int *ret_fd)
{
	size_t i;

	memset(ret_rs, 0, sizeof(*ret_rs));
	ret_rs->magic = ROOTSPEC_MAGIC;
	ret_rs->generation = d->rootspec.generation;
	ret_rs->nmounts = (uint32_t)cfg->nmounts;
	for (i = 0; i < cfg->nmounts; i++) {
		const struct config_mount *m = &cfg->mounts[i];
		struct rootspec_mount *rm = &ret_rs->mounts[i];

		snprintf(rm->source, sizeof(rm->source), "%s", m->source);
		snprintf(rm->target, sizeof(rm->target), "%s", m->target);
		rm->flags = m->package ? ROOTSPEC_F_PACKAGE : 0;
	}
	*ret_fd = -1;
	if (d->rootspec_fd >= 0 && memcmp(ret_rs, &d->rootspec, sizeof(*ret_rs)) == 0)
		return 0;
	ret_rs->generation++;
	return rootspec_seal(ret_rs, ret_fd);
}

/* Put a root spec made by frontend_rootspec_make() in force (fd -1: none
 * new); the sandboxes prepared with the old one are discarded. */
static void
frontend_rootspec_set(struct daemon *d, const struct rootspec *rs, int fd)
{
	if (fd < 0)
		return;
	fd_close(d->rootspec_fd);
	d->rootspec_fd = fd;
	d->rootspec = *rs;
	run_pool_discard_stale(d);
}

int
frontend_rootspec_update(struct daemon *d)
{
	struct rootspec rs;
	int fd, r = frontend_rootspec_make(d, d->cfg, &rs, &fd);

	if (r < 0)
		return r;
	frontend_rootspec_set(d, &rs, fd);
	return 0;
}

static void
frontend_signal_cb(evutil_socket_t sig, short what UNUSED, void *arg)
{
	struct daemon *d = arg;

	if (sig == SIGHUP) {
		/* We may not be able to read the file: the spawner reads it and
		 * answers with SPAWN_RELOAD. */
		struct spawn_req req = {.type = SPAWN_RELOAD};
		int r = frontend_spawn_fds(d, &req, NULL, 0);

		if (r < 0)
			log_warnx("reload: cannot reach the spawner: %s", strerror(-r));
		return;
	}
	log_info("signal %d", (int)sig);
	frontend_stop(d);
}

/*
 * How many fds replies may hold in all, queued or unread: half of
 * RLIMIT_NOFILE. That one number bounds both the fds the frontend may have
 * open and the fds it may have in flight in sockets (the kernel's count of
 * a user's in-flight fds, past which every fd pass fails with
 * ETOOMANYREFS); the other half stays for clients, runs and the spawner.
 */
static uint32_t
frontend_fds_max(void)
{
	return budget_nofile_share(2, PROTO_FDS_MAX);
}

int
frontend_main(struct daemon *d)
{
	TAILQ_INIT(&d->clients);
	TAILQ_INIT(&d->runs);
	TAILQ_INIT(&d->sessions);
	d->session_ops = &session_run_ops;
	d->cells_ops = &cells_run_ops;
	run_dispatch_init(d);
	TAILQ_INIT(&d->pool);
	spawnrefs_init(&d->refs, &d->uids);
	runqueue_init(&d->queue);
	budget_init(&d->budget, frontend_fds_max());
	signal(SIGPIPE, SIG_IGN);
	if (fcntl(d->spawner_fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	d->spawner_ev =
		event_new(d->base, d->spawner_fd, EV_READ | EV_PERSIST, frontend_spawner_cb, d);
	d->sigterm_ev = evsignal_new(d->base, SIGTERM, frontend_signal_cb, d);
	d->sigint_ev = evsignal_new(d->base, SIGINT, frontend_signal_cb, d);
	d->sighup_ev = evsignal_new(d->base, SIGHUP, frontend_signal_cb, d);
	if (d->spawner_ev == NULL || d->sigterm_ev == NULL || d->sigint_ev == NULL ||
	    d->sighup_ev == NULL)
		return -ENOMEM;
	event_add(d->sighup_ev, NULL);
	event_add(d->spawner_ev, NULL);
	event_add(d->sigterm_ev, NULL);
	event_add(d->sigint_ev, NULL);
	dispatch_init(d);
	if (listener_start(d, client_new) < 0)
		return -EIO;
	if (frontend_rootspec_update(d) < 0 || run_pool_init(d) < 0 || zygotes_init(d) < 0)
		return -ENOMEM;
	frontend_warn_hidden_usr(d);
	/* Sessions kept by the daemon before us come back first. */
	d->store_fd = session_store_open(d->cfg->session_state_dir);
	session_store_recover(d);
	run_pool_fill(d);
	log_info("ready: listening, %u runs at most, limits by %s", d->cfg->max_runs,
		 cgroup_kind_name(d->resource_control));
	/* NotifyAccess=all: the main pid is the spawner, readiness is ours. */
	svcmgr_notifyf("READY=1\nSTATUS=listening; %u runs at most", d->cfg->max_runs);
	event_base_dispatch(d->base);
	svcmgr_notify("STOPPING=1");
	/* Every answer queued for a client gets its chance to leave. */
	client_flush_all(d, 1000);
	/* Leaving closes the spawner channel: the spawner kills every sandbox. */
	while (!TAILQ_EMPTY(&d->clients))
		client_free(TAILQ_FIRST(&d->clients));
	if (d->pool_retry_ev != NULL)
		event_free(d->pool_retry_ev);
	return 0;
}
