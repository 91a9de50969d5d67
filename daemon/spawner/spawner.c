/* spawner.c: clone sandboxes on the frontend's request; reap them. */
#include "spawner.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/sched.h>

#include "config.h"
#include "fdpass.h"
#include "keeper.h"
#include "log.h"
#include "memfd.h"
#include "plan.h"
#include "rootspec.h"
#include "spawn_msg.h"
#include "spawner_int.h"
#include "compiler.h"
#include "fdio.h"

#define SPAWN_NS_FLAGS                                                                             \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

/* Send one event to the frontend; losing it is fatal (the frontend is gone). */
static void
spawner_send(struct spawner *sp, const struct spawn_ev *ev)
{
	int r = fdpass_send(sp->sock, ev, sizeof(*ev), NULL, 0);

	if (r < 0)
		log_warnx("spawner: send to frontend: %s", strerror(-r));
}

/*
 * Is the slot a live session's? Its runs then share one cgroup, kept until
 * the keeper is reaped (cgroup.h, struct cgroup_run_base): a removed cgroup
 * that still has the workspace's pages charged would live on, dying, for
 * as long as the session (issue 13, finding 6).
 */
static bool
spawner_session_slot(const struct spawner *sp, uint32_t slot)
{
	return sp->keepers[slot].pid != 0;
}

/* Finish the cgroup of the slot's run; kept while the slot's session lives. */
static int
spawner_run_cgroup_finish(struct spawner *sp, uint32_t slot, uint64_t *ret_peak, bool *ret_oom)
{
	return cgroup_run_finish(&sp->cg, spawner_uid(sp, slot), &sp->slots[slot].cg_base,
				 spawner_session_slot(sp, slot), ret_peak, ret_oom);
}

/* A keeper was reaped: its cgroup goes, and its session's run cgroup when
 * no run is in it (else that run's reap removes it). */
static int
spawner_keeper_cgroup_finish(struct spawner *sp, uint32_t slot)
{
	int r = cgroup_keeper_finish(&sp->cg, spawner_uid(sp, slot));

	if (sp->slots[slot].pid == 0) {
		int r2 = cgroup_run_remove(&sp->cg, spawner_uid(sp, slot));

		if (r == 0)
			r = r2;
	}
	return r;
}

/*
 * Read the frontend's root spec into sp->rootspec (rootspec_read): a source
 * that fails its check is marked missing and warned about (rate-limited:
 * this runs for every sandbox prepared), the others stand.
 */
static int
spawner_rootspec(struct spawner *sp, int fd)
{
	char why[ROOTSPEC_MOUNTS_MAX][ROOTSPEC_WHY_MAX];
	uint32_t i;
	int r = rootspec_read(fd, &sp->rootspec, why);

	if (r < 0)
		return r;
	for (i = 0; i < sp->rootspec.nmounts; i++)
		if (sp->rootspec.mounts[i].missing != 0)
			log_repeat_warnx(&sp->mount_warn[i],
					 "spawner: root spec mount %" PRIu32
					 " (target %s): unavailable, only runs that name it "
					 "fail: %s",
					 i, sp->rootspec.mounts[i].target, why[i]);
	return 0;
}

/* SPAWN_PREPARE's checks: the frontend is less trusted than we are, check
 * everything. The root spec read (every source checked again, as root);
 * with SPAWN_F_PRESTART the pre-start plan sealed and bounded. */
static int
spawner_prepare_check(struct spawner *sp, const struct spawn_req *req, int *fds,
		      const char **ret_step)
{
	int r;

	/* A zygote's slot is its uid's (U_z) for its life and its sandboxes':
	 * a sandbox whose user namespace root is U_z would be the zygote's
	 * to enter, and its supervisor would own the zygote's runs. */
	if (req->uid_slot >= sp->nslots || sp->slots[req->uid_slot].pid != 0 ||
	    sp->zygotes[req->uid_slot].pid != 0 || sp->zygotes[req->uid_slot].owned != 0) {
		*ret_step = "uid_slot";
		return -EINVAL;
	}
	/* A zygote-owned sandbox: its zygote must be alive (its uid owns
	 * the namespace from the clone on). */
	if ((req->flags & SPAWN_F_ZYGOTE) &&
	    (req->prep_key >= sp->nslots || sp->zygotes[req->prep_key].pid == 0)) {
		*ret_step = "zygote";
		return -ESRCH;
	}
	*ret_step = "rootspec";
	r = spawner_rootspec(sp, fds[0]);
	if (r < 0)
		return r;
	if (req->flags & SPAWN_F_PRESTART) {
		uint64_t plan_size;

		*ret_step = "plan";
		r = memfd_check_sealed(fds[1], PLAN_SIZE_MAX, &plan_size);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The slot's run cgroup made (*ret_made) and opened into cgfds; a kept
 * one's memory peak into *ret_peak_fd (-1: none). */
static int
spawner_prepare_cgroup(struct spawner *sp, const struct spawn_req *req,
		       struct cgroup_run_fds *cgfds, int *ret_peak_fd, bool *ret_made,
		       const char **ret_step)
{
	int r;

	/* A session's cg_base now holds a peak fd until the slot's
	 * spawner_run_cgroup_finish: at the reap, below on a failure with no
	 * child, or at the end of spawner_serve. A slot is prepared only when
	 * free (pid 0), so its last base's fd is closed already. */
	*ret_step = "cgroup";
	r = cgroup_run_create(&sp->cg, spawner_uid(sp, req->uid_slot), req->memory_bytes,
			      spawner_session_slot(sp, req->uid_slot),
			      sp->keepers[req->uid_slot].ws_bytes,
			      &sp->slots[req->uid_slot].cg_base);
	if (r < 0)
		return r;
	*ret_made = true;
	*ret_step = "cgroup_open";
	r = cgroup_run_open(&sp->cg, spawner_uid(sp, req->uid_slot), cgfds);
	if (r < 0)
		return r;
	/*
	 * A session's sandbox may be its interpreter: its supervisor resets
	 * and reads the peak per cell (sandbox_supervise_cells). Only a kept
	 * cgroup's: a one-shot run's peak is read by us and the frontend, and
	 * its supervisor has no reason to touch it. Without it, no figure.
	 */
	if (sp->slots[req->uid_slot].cg_base.kept &&
	    cgroup_run_open_peak(&sp->cg, spawner_uid(sp, req->uid_slot), ret_peak_fd) < 0)
		*ret_peak_fd = -1;
	return 0;
}

/*
 * Clone the sandbox (it never returns here: sandbox_main) with its context,
 * and release it: the slot takes its pid and control socket. A failed
 * release kills it (ev->pid set: its reap frees the slot).
 */
static int
spawner_prepare_clone(struct spawner *sp, const struct spawn_req *req, int *fds,
		      const struct cgroup_run_fds *cgfds, int peak_fd, struct spawn_ev *ev,
		      const char **ret_step)
{
	struct sandbox_ctx ctx;
	int sync[2] = {-1, -1}, ctl[2] = {-1, -1}, zprocs = -1, r;
	bool into, zygote = (req->flags & SPAWN_F_ZYGOTE) != 0;
	long pid;

	*ret_step = "pipe";
	if (pipe2(sync, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0) {
		r = -errno;
		goto out;
	}
	/*
	 * A zygote's child starts in the zygote's cgroup (our daemon/ leaf)
	 * and moves itself into code/ by a write to its cgroup.procs. cgroup
	 * v2 judges that write on the opener's credentials, who must be able
	 * to write the cgroup.procs of the common ancestor of both: the
	 * service's cgroup, root's. Opened here, as root, as the sup/ and v1
	 * tasks fds are; the supervisor gives it up in the order
	 * (docs/design-bursts.md §3.5, "The move into code/").
	 */
	if (zygote && cgfds->code >= 0 &&
	    (zprocs = openat(cgfds->code, "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0) {
		r = -errno;
		*ret_step = "cgroup";
		goto out;
	}
	ctx = (struct sandbox_ctx){.layout = &sp->layout,
				   .seccomp = &sp->seccomp,
				   .rootspec = &sp->rootspec,
				   .seccomp_noproc = &sp->seccomp_noproc,
				   .sync_fd = sync[0],
				   .ctl_fd = ctl[1],
				   .plan_fd = (req->flags & SPAWN_F_PRESTART) ? fds[1] : -1,
				   .lifeline_fd = -1,
				   .out_fd = (req->flags & SPAWN_F_PRESTART) ? fds[2] : -1,
				   .err_fd = (req->flags & SPAWN_F_PRESTART) ? fds[3] : -1,
				   .cgroup_fd = cgfds->self,
				   .code_cgroup_fd = cgfds->code,
				   .cpu_stat_fd = cgfds->cpu_stat,
				   .pids_events_fd = cgfds->pids_events,
				   .peak_fd = peak_fd,
				   .workspace_fd = -1,
				   .zygote = zygote,
				   .zygote_procs_fd = zprocs,
				   .zygote_fd = -1};
	/* The run's user namespace is owned by its slot's uid, not root:
	 * from the clone to the maps; a zygote run's by its zygote's uid
	 * (U_z), so the zygote's child can join it with no host capability
	 * (docs/design-bursts.md §3.1); the maps are the run slot's either
	 * way. The child runs on its copy of this stack and never returns
	 * from sandbox_main(). */
	pid = spawner_clone_owned(sp, zygote ? req->prep_key : req->uid_slot, SPAWN_NS_FLAGS,
				  cgfds->into, &into, ret_step);
	if (pid < 0) {
		r = (int)pid;
		goto out;
	}
	if (pid == 0) {
		close(sync[1]);
		close(ctl[0]);
		/* Born in its cgroup: nothing to move. */
		if (into)
			ctx.cgroup_fd = -1;
		sandbox_main(&ctx);
	}
	close(sync[0]);
	sync[0] = -1;
	close(ctl[1]);
	ctl[1] = -1;
	sp->slots[req->uid_slot].pid = (pid_t)pid;
	sp->slots[req->uid_slot].run_id = req->run_id;
	sp->slots[req->uid_slot].owner = zygote ? req->prep_key + 1 : 0;
	if (zygote)
		sp->zygotes[req->prep_key].owned++;
	sp->slots[req->uid_slot].ctl = ctl[0];
	ctl[0] = -1;
	r = spawner_release(sp, req->uid_slot, (pid_t)pid, sync[1], ret_step);
	spawner_owner_end(sp);
	if (r < 0) {
		/* The child sees EOF on sync and exits; SIGCHLD reaps it. No
		 * run may be handed to it: its control socket goes now. */
		spawner_kill(sp, req->uid_slot, (pid_t)pid);
		close(sp->slots[req->uid_slot].ctl);
		sp->slots[req->uid_slot].ctl = -1;
	}
	ev->pid = (int32_t)pid;
out:
	fd_close_pair(sync);
	fd_close_pair(ctl);
	fd_close(zprocs);
	return r;
}

/* SPAWN_STARTED to the frontend, with the run's memory figures' fds. */
static void
spawner_prepare_report(struct spawner *sp, const struct spawn_req *req, struct spawn_ev *ev)
{
	int sfds[2] = {-1, -1};
	int r;

	ev->type = SPAWN_STARTED;
	/* The run's memory figures, readable by the frontend the moment
	 * the run's processes are gone. Without them it waits for DONE,
	 * as a session's run does: its kept cgroup's files count more
	 * than the run, which only the reap sets apart. */
	if (sp->slots[req->uid_slot].cg_base.kept ||
	    cgroup_run_open_stats(&sp->cg, spawner_uid(sp, req->uid_slot), sfds) < 0)
		sfds[0] = sfds[1] = -1;
	r = fdpass_send(sp->sock, ev, sizeof(*ev), sfds, sfds[0] >= 0 ? 2 : 0);
	if (r < 0)
		log_warnx("spawner: send to frontend: %s", strerror(-r));
	fdpass_close_all(sfds, 2);
}

/*
 * Handle one SPAWN_PREPARE: clone a sandbox into fresh namespaces in the
 * slot's uids and memory cgroup; it builds what does not depend on a request
 * and waits on its control socket (docs/performance.md). fds: the root spec
 * (rootspec.h), read and every source checked again here, as root, before
 * the sandbox is given it; with SPAWN_F_PRESTART also the pre-start plan (a
 * sealed memfd the supervisor parses, like a run's) and the output pipes of
 * the interpreter it starts ahead.
 */
static void
spawner_prepare(struct spawner *sp, const struct spawn_req *req, int *fds, size_t nfds)
{
	struct spawn_ev ev = {.type = SPAWN_FAILED, .run_id = req->run_id};
	struct cgroup_run_fds cgfds = {-1, -1, -1, -1, -1};
	const char *step = "request";
	int peak_fd = -1, r;
	bool cg_made = false;

	r = spawner_prepare_check(sp, req, fds, &step);
	if (r < 0)
		goto fail;
	r = spawner_prepare_cgroup(sp, req, &cgfds, &peak_fd, &cg_made, &step);
	if (r < 0)
		goto fail;
	r = spawner_prepare_clone(sp, req, fds, &cgfds, peak_fd, &ev, &step);
	if (r < 0)
		goto fail;
	spawner_prepare_report(sp, req, &ev);
	goto out;
fail:
	ev.type = SPAWN_FAILED;
	ev.err = r;
	snprintf(ev.step, sizeof(ev.step), "%s", step);
	log_warnx("spawner: sandbox %" PRIu32 ": %s: %s", req->run_id, step, strerror(-r));
	spawner_send(sp, &ev);
	/* A slot with a killed child stays taken until SIGCHLD reaps it, and
	 * its reap removes the cgroup (and closes cg_base's peak fd); with no
	 * child, nothing else would. */
	if (cg_made && ev.pid == 0) {
		uint64_t peak;
		bool oom;

		(void)spawner_run_cgroup_finish(sp, req->uid_slot, &peak, &oom);
	}
out:
	cgroup_run_fds_close(&cgfds);
	fd_close(peak_fd);
	fdpass_close_all(fds, nfds);
}

/*
 * Handle one SPAWN_REQ: hand a prepared sandbox its run. fds: plan,
 * lifeline, stdout, stderr[, workspace]. The memory limit is the run's own.
 */
static void
spawner_start(struct spawner *sp, const struct spawn_req *req, int *fds, size_t nfds)
{
	/* Every event of a sandbox is under the key it was prepared by. */
	struct spawn_ev ev = {.type = SPAWN_FAILED, .run_id = req->prep_key};
	struct sb_start st = {.magic = SB_START_MAGIC, .flags = req->flags};
	struct spawner_slot *slot;
	const char *step = "uid_slot";
	int run_fds[SB_START_NFDS_ZYGOTE];
	size_t nsend = 0;
	uint64_t plan_size;
	int r = -EINVAL;

	/* The sandbox must be the one prepared for this run, still waiting. */
	if (req->uid_slot >= sp->nslots || sp->slots[req->uid_slot].ctl < 0 ||
	    sp->slots[req->uid_slot].run_id != req->prep_key)
		goto fail;
	slot = &sp->slots[req->uid_slot];
	ev.pid = slot->pid;
	/* A zygote run needs the zygote that owns this sandbox, alive: else
	 * the sandbox stays prepared for the frontend's ordinary request
	 * (docs/design-bursts.md §3.5). */
	step = "zygote";
	r = spawner_zygote_run_fds(sp, req, fds, nfds, run_fds);
	if (r < 0)
		goto fail;
	nsend = (size_t)r;
	step = "plan";
	r = memfd_check_sealed(fds[0], PLAN_SIZE_MAX, &plan_size);
	if (r < 0)
		goto kill;
	step = "cgroup_limit";
	r = cgroup_run_set_limit(&sp->cg, spawner_uid(sp, req->uid_slot), &slot->cg_base,
				 req->memory_bytes, req->processes, req->cpu_percent);
	if (r < 0)
		goto kill;
	step = "start";
	r = fdpass_send(slot->ctl, &st, sizeof(st), run_fds, nsend);
	if (r < 0)
		goto kill;
	close(slot->ctl);
	slot->ctl = -1;
	goto out;
kill:
	spawner_kill(sp, req->uid_slot, slot->pid);
	close(slot->ctl);
	slot->ctl = -1;
fail:
	ev.err = r;
	snprintf(ev.step, sizeof(ev.step), "%s", step);
	log_warnx("spawner: run %" PRIu32 ": %s: %s", req->run_id, step, strerror(-r));
	spawner_send(sp, &ev);
out:
	fdpass_close_all(fds, nfds);
	/* The order socket's copy, if one was made: the supervisor has its own now. */
	if (nsend > nfds)
		close(run_fds[nfds]);
}

/* Handle one SPAWN_DISCARD: end a prepared sandbox that will get no run (no fds: spawner_cmds). */
static void
spawner_discard(struct spawner *sp, const struct spawn_req *req, int *fds UNUSED,
		size_t nfds UNUSED)
{
	struct spawn_ev ev = {.type = SPAWN_FAILED, .run_id = req->prep_key, .err = -ENOENT};
	struct spawner_slot *slot;

	if (req->flags & SPAWN_F_ZYGOTE) {
		spawner_zygote_stop(sp, req);
		return;
	}
	if (req->uid_slot >= sp->nslots || sp->slots[req->uid_slot].pid == 0 ||
	    sp->slots[req->uid_slot].run_id != req->prep_key) {
		/* Nothing of that key is alive: the frontend may free the slot. */
		snprintf(ev.step, sizeof(ev.step), "discard");
		spawner_send(sp, &ev);
		return;
	}
	slot = &sp->slots[req->uid_slot];
	if (slot->ctl >= 0) {
		close(slot->ctl);
		slot->ctl = -1;
	}
	spawner_kill(sp, req->uid_slot, slot->pid);
}

/* Handle one SPAWN_KEEPER: clone a session's keeper. fds: its socket. */
static void
spawner_keeper(struct spawner *sp, const struct spawn_req *req, int *fds, size_t nfds)
{
	struct spawn_ev ev = {.type = SPAWN_FAILED, .run_id = req->run_id};
	struct keeper_ctx kctx;
	const char *step = "uid_slot";
	int sync[2] = {-1, -1}, cgfd = -1, r = -EINVAL;
	bool into, cg_made = false;
	long pid;

	/* Not a zygote's slot either: the keeper would be the zygote's uid. */
	if (req->uid_slot >= sp->nslots || sp->keepers[req->uid_slot].pid != 0 ||
	    sp->zygotes[req->uid_slot].pid != 0 || sp->zygotes[req->uid_slot].owned != 0)
		goto fail;
	step = "cgroup";
	r = cgroup_keeper_create(&sp->cg, spawner_uid(sp, req->uid_slot), req->memory_bytes);
	if (r < 0)
		goto fail;
	cg_made = true;
	r = cgroup_keeper_open(&sp->cg, spawner_uid(sp, req->uid_slot), &cgfd);
	if (r < 0)
		goto fail;
	step = "pipe";
	if (pipe2(sync, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	kctx = (struct keeper_ctx){
		.sync_fd = sync[0], .sock = fds[0], .workspace_bytes = req->memory_bytes};
	/* Owned by the slot's uid, like a run's. Its own user namespace (for
	 * the session's uids) and mount namespace (for the workspace tmpfs);
	 * nothing of the host is given to it. Its own network namespace too:
	 * it needs none, and in the host's it could reach every host socket
	 * (issue 13, finding 7). Made once per session, off any run's path. */
	pid = spawner_clone_owned(sp, req->uid_slot, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET,
				  cgfd, &into, &step);
	if (pid < 0) {
		r = (int)pid;
		goto fail;
	}
	if (pid == 0) {
		close(sync[1]);
		keeper_main(&kctx);
	}
	close(sync[0]);
	sync[0] = -1;
	cg_made = false; /* the keeper's reap removes it */
	sp->keepers[req->uid_slot].pid = (pid_t)pid;
	sp->keepers[req->uid_slot].run_id = req->run_id;
	sp->keepers[req->uid_slot].ws_bytes = req->memory_bytes;
	/* The maps as the namespace's owner; then root again, which cgroup
	 * v1 wants of whoever moves another uid's process. The keeper waits
	 * for its sync byte meanwhile. */
	r = spawner_write_maps(sp, req->uid_slot, (pid_t)pid, &step);
	spawner_owner_end(sp);
	if (r == 0 && !into && cgfd >= 0) {
		/* An older kernel: moved by pid, off any run's path. A keeper
		 * that cannot be moved would hold its session's workspace with
		 * no memory.max or pids.max: it fails, as a run would. */
		char val[16];
		int pfd = openat(cgfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);

		snprintf(val, sizeof(val), "%ld", pid);
		step = "cgroup_move";
		if (pfd < 0 || write(pfd, val, strlen(val)) < 0)
			r = -errno;
		fd_close(pfd);
	}
	if (r == 0 && write(sync[1], "g", 1) != 1) {
		step = "sync";
		r = -errno;
	}
	if (r < 0) {
		spawner_kill(sp, req->uid_slot, (pid_t)pid);
		ev.pid = (int32_t)pid;
		goto fail;
	}
	ev.type = SPAWN_STARTED;
	ev.pid = (int32_t)pid;
	spawner_send(sp, &ev);
	goto out;
fail:
	ev.err = r;
	snprintf(ev.step, sizeof(ev.step), "keeper %s", step);
	log_warnx("spawner: session %" PRIu32 ": keeper %s: %s", req->run_id, step, strerror(-r));
	spawner_send(sp, &ev);
	if (cg_made)
		(void)cgroup_keeper_finish(&sp->cg, spawner_uid(sp, req->uid_slot));
out:
	fd_close(cgfd);
	fd_close_pair(sync);
	fdpass_close_all(fds, nfds);
}

/*
 * SIGHUP, or the frontend asked: read the config file and send its bytes
 * (docs/design-service.md, "Who reads the file"). We read it because we
 * can: a 0600 root file is ours, not the service user's. We parse nothing;
 * the checks are start-up's (a regular file owned by root, writable by no
 * one else, not a link), and the size is bounded.
 */
static void
spawner_reload(struct spawner *sp)
{
	struct spawn_ev ev = {.type = SPAWN_RELOAD};
	char err[512];
	int fd = -1, r;

	r = config_read_sealed(sp->config_path, sp->config_given, &fd, err, sizeof(err));
	if (r < 0) {
		log_warnx("reload refused, the old configuration stays: %s", err);
		ev.err = r;
		fd = -1;
	}
	r = fdpass_send(sp->sock, &ev, sizeof(ev), &fd, fd >= 0 ? 1 : 0);
	if (r < 0)
		log_warnx("spawner: send to frontend: %s", strerror(-r));
	fd_close(fd);
}

/* Reap every exited sandbox and report it. */
static void
spawner_reap(struct spawner *sp)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		struct spawn_ev ev = {.type = SPAWN_DONE, .status = status, .pid = pid};
		uint32_t i;
		bool oom = false;
		int r;

		if (pid == sp->frontend) {
			/* Kept for our own exit status (main.c). */
			sp->frontend_status = status;
			sp->frontend_reaped = true;
			continue;
		}
		if (spawner_zygote_reaped(sp, pid, status))
			continue;

		for (i = 0; i < sp->nslots; i++)
			if (sp->keepers[i].pid == pid)
				break;
		if (i < sp->nslots) {
			/* A keeper: nothing to measure; its cgroup goes. */
			ev.run_id = sp->keepers[i].run_id;
			sp->keepers[i].pid = 0;
			r = spawner_keeper_cgroup_finish(sp, i);
			if (r < 0)
				log_warnx("spawner: session %" PRIu32 ": keeper cgroup: %s",
					  ev.run_id, strerror(-r));
			spawner_send(sp, &ev);
			continue;
		}
		for (i = 0; i < sp->nslots; i++)
			if (sp->slots[i].pid == pid)
				break;
		if (i == sp->nslots)
			continue;
		ev.run_id = sp->slots[i].run_id;
		if (sp->slots[i].ctl >= 0) {
			close(sp->slots[i].ctl);
			sp->slots[i].ctl = -1;
		}
		r = spawner_run_cgroup_finish(sp, i, &ev.memory_peak, &oom);
		if (r < 0)
			log_warnx("spawner: run %" PRIu32 ": cgroup: %s", ev.run_id, strerror(-r));
		ev.oom = oom;
		sp->slots[i].pid = 0;
		if (sp->slots[i].owner != 0)
			sp->zygotes[sp->slots[i].owner - 1].owned--;
		sp->slots[i].owner = 0;
		spawner_send(sp, &ev);
	}
}

/* Handle one SPAWN_RELOAD from the frontend: as SIGHUP (spawner_reload); no fds (spawner_cmds). */
static void
spawner_reload_req(struct spawner *sp, const struct spawn_req *req UNUSED, int *fds UNUSED,
		   size_t nfds UNUSED)
{
	spawner_reload(sp);
}

/*
 * The requests the frontend may send, after OpenSSH's mon_table: the fds
 * each brings (nfds), and the flags it may carry, at most one at a time,
 * each with the fds it brings instead. spawner_check_req() holds every
 * request to its row before any handler runs; the handlers check only the
 * state of the slot they name.
 */
struct spawner_cmd {
	uint32_t type;
	size_t nfds;
	struct {
		uint32_t flag;
		size_t nfds;
	} with[3]; /* flag 0: unused */
	void (*handler)(struct spawner *sp, const struct spawn_req *req, int *fds, size_t nfds);
};

static const struct spawner_cmd spawner_cmds[] = {
	{SPAWN_REQ,
	 SPAWN_REQ_NFDS,
	 {{SPAWN_F_WORKSPACE, SPAWN_REQ_NFDS_MAX},
	  {SPAWN_F_PRESTARTED, SPAWN_REQ_NFDS_PRESTARTED},
	  {SPAWN_F_ZYGOTE_RUN, SPAWN_REQ_NFDS}},
	 spawner_start},
	{SPAWN_PREPARE,
	 SPAWN_PREPARE_NFDS,
	 {{SPAWN_F_PRESTART, SPAWN_PREPARE_NFDS_PRESTART},
	  {SPAWN_F_ZYGOTE, SPAWN_PREPARE_NFDS},
	  {0, 0}},
	 spawner_prepare},
	{SPAWN_DISCARD, 0, {{SPAWN_F_ZYGOTE, 0}, {0, 0}, {0, 0}}, spawner_discard},
	{SPAWN_RELOAD, 0, {{0, 0}, {0, 0}, {0, 0}}, spawner_reload_req},
	{SPAWN_KEEPER, SPAWN_KEEPER_NFDS, {{0, 0}, {0, 0}, {0, 0}}, spawner_keeper},
	{SPAWN_ZYGOTE_START,
	 SPAWN_ZYGOTE_START_NFDS,
	 {{SPAWN_F_NOPROC, SPAWN_ZYGOTE_START_NFDS}, {0, 0}, {0, 0}},
	 spawner_zygote_cmd},
};

/* The fixed struct of a request: its size, reserved field, bounds, type
 * and flags; its row and how many fds it carries. 0 or -EPROTO. */
static int
spawner_check_fixed(const struct spawn_req *req, size_t len, const struct spawner_cmd **ret_cmd,
		    size_t *ret_want)
{
	const struct spawner_cmd *cmd = NULL;
	size_t i, want;

	if (len != sizeof(*req) || req->reserved != 0)
		return -EPROTO;
	/* cpu.max takes any quota; bound it to something a host could have. */
	if (req->cpu_percent > SPAWN_CPU_PERCENT_MAX)
		return -EPROTO;
	for (i = 0; i < sizeof(spawner_cmds) / sizeof(spawner_cmds[0]); i++)
		if (spawner_cmds[i].type == req->type)
			cmd = &spawner_cmds[i];
	if (cmd == NULL)
		return -EPROTO;
	want = cmd->nfds;
	if (req->flags != 0) {
		/* One flag of the row's, which says how many fds come. */
		for (i = 0; i < 3 && (cmd->with[i].flag == 0 || cmd->with[i].flag != req->flags);
		     i++)
			;
		if (i == 3)
			return -EPROTO;
		want = cmd->with[i].nfds;
	}
	*ret_cmd = cmd;
	*ret_want = want;
	return 0;
}

int
spawner_check_req(const struct spawn_req *req, size_t len, size_t nfds,
		  const struct spawner_cmd **ret_cmd)
{
	const struct spawner_cmd *cmd;
	size_t want;
	int r = spawner_check_fixed(req, len, &cmd, &want);

	if (r < 0 || nfds != want)
		return -EPROTO;
	*ret_cmd = cmd;
	return 0;
}

int
spawner_check_lost(const struct spawn_req *req, size_t len, size_t nfds, uint32_t nslots)
{
	const struct spawner_cmd *cmd;
	size_t want;

	/* Fewer fds than the type carries (the kernel installs them in
	 * order, and stops at the first it cannot), for a request that
	 * names a uid slot of ours: anything else is the frontend's. */
	if (spawner_check_fixed(req, len, &cmd, &want) < 0 || nfds >= want ||
	    req->uid_slot >= nslots)
		return -EPROTO;
	return 0;
}

/*
 * A request whose fds the spawner could not all receive (the kernel
 * truncated them, MSG_CTRUNC: the spawner at its RLIMIT_NOFILE): that one
 * request fails, the frontend told as for any failure of it, and the
 * service goes on (issue 28, point 8; docs/security.md, "Failure follows
 * trust"). Lost fds are the spawner's own shortage, not the frontend's
 * fault; a malformed struct still is (spawner_read). A start kills the
 * sandbox prepared for it, as a failed start does (spawner_start): its
 * reap follows.
 */
static void
spawner_fds_lost(struct spawner *sp, const struct spawn_req *req)
{
	struct spawn_ev ev = {.type = SPAWN_FAILED, .run_id = req->run_id, .err = -EMFILE};
	struct spawner_slot *slot = &sp->slots[req->uid_slot];

	snprintf(ev.step, sizeof(ev.step), "fds");
	if (req->type == SPAWN_REQ) {
		/* Every event of a sandbox is under the key it was prepared by. */
		ev.run_id = req->prep_key;
		if (slot->ctl >= 0 && slot->run_id == req->prep_key) {
			ev.pid = slot->pid;
			spawner_kill(sp, req->uid_slot, slot->pid);
			close(slot->ctl);
			slot->ctl = -1;
		}
	}
	log_repeat_warnx(&sp->fds_warn,
			 "spawner: a request of type %" PRIu32 " failed: its fds could not all be "
			 "received (the spawner is at its RLIMIT_NOFILE)",
			 req->type);
	spawner_send(sp, &ev);
}

/* Read and act on one packet from the frontend. Returns -EPIPE at EOF. */
static int
spawner_read(struct spawner *sp)
{
	const struct spawner_cmd *cmd;
	struct spawn_req req;
	int fds[SPAWN_REQ_NFDS_MAX];
	size_t nfds = 0;
	bool lost;
	ssize_t n;

	_Static_assert(SPAWN_PREPARE_NFDS_PRESTART <= SPAWN_REQ_NFDS_MAX, "fds of a request");
	n = fdpass_recv_lossy(sp->sock, &req, sizeof(req), fds, SPAWN_REQ_NFDS_MAX, &nfds, &lost);
	if (n == 0)
		return -EPIPE;
	if (n < 0)
		return n == -EAGAIN || n == -EINTR ? 0 : (int)n;
	if (lost) {
		fdpass_close_all(fds, nfds);
		if (spawner_check_lost(&req, (size_t)n, nfds, sp->nslots) < 0) {
			log_warnx("spawner: malformed request from frontend; stopping");
			return -EPROTO;
		}
		spawner_fds_lost(sp, &req);
		return 0;
	}
	if (spawner_check_req(&req, (size_t)n, nfds, &cmd) < 0) {
		/* A malformed request means the frontend is not what it should be. */
		fdpass_close_all(fds, nfds);
		log_warnx("spawner: malformed request from frontend; stopping");
		return -EPROTO;
	}
	cmd->handler(sp, &req, fds, nfds);
	return 0;
}

void
spawner_signals(sigset_t *ret)
{
	sigemptyset(ret);
	sigaddset(ret, SIGCHLD);
	sigaddset(ret, SIGTERM);
	sigaddset(ret, SIGINT);
	sigaddset(ret, SIGHUP);
}

int
spawner_serve(struct spawner *sp)
{
	sigset_t mask;
	int sfd, r = 0;
	bool stopping = false;
	uint32_t i;

	spawner_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -errno;
	for (;;) {
		struct pollfd p[2] = {{.fd = sp->sock, .events = POLLIN},
				      {.fd = sfd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				struct spawn_ev ev = {.type = SPAWN_STOP};

				if (si.ssi_signo == SIGHUP) {
					spawner_reload(sp);
				} else if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) &&
					   !stopping) {
					/* The frontend stops gracefully and closes its
					 * end; we then kill what is left and go. */
					log_info("signal %u: stopping", si.ssi_signo);
					stopping = true;
					ev.type = SPAWN_STOP;
					spawner_send(sp, &ev);
				} else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
					/* A second one: no more grace. */
					log_info("signal %u again: stopping now", si.ssi_signo);
					shutdown(sp->sock, SHUT_RDWR);
				}
			}
			spawner_reap(sp);
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = spawner_read(sp);
			if (r < 0)
				break;
		}
	}
	/* The frontend is gone: no sandbox, keeper or zygote may outlive it. */
	spawner_zygote_stop_all(sp);
	for (i = 0; i < sp->nslots; i++) {
		if (sp->slots[i].pid > 0)
			spawner_kill(sp, i, sp->slots[i].pid);
		if (sp->keepers[i].pid > 0) {
			spawner_kill(sp, i, sp->keepers[i].pid);
			waitpid(sp->keepers[i].pid, NULL, __WALL);
			sp->keepers[i].pid = 0;
			(void)spawner_keeper_cgroup_finish(sp, i);
		}
	}
	for (i = 0; i < sp->nslots; i++)
		if (sp->slots[i].pid > 0) {
			uint64_t peak;
			bool oom;

			waitpid(sp->slots[i].pid, NULL, __WALL);
			(void)spawner_run_cgroup_finish(sp, i, &peak, &oom);
			sp->slots[i].pid = 0;
		}
	close(sfd);
	return r == -EPIPE ? 0 : r;
}
