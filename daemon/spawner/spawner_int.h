/*
 * spawner_int.h: what spawner.c, spawner_clone.c and spawner_zygote_cmd.c share; no other file
 * includes it.
 */
#ifndef AIRLOCKD_SPAWNER_INT_H
#define AIRLOCKD_SPAWNER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spawn_msg.h"
#include "spawner.h"

/* The first host uid of a slot; the cgroup is named for it. */
static inline uint32_t
spawner_uid(const struct spawner *sp, uint32_t slot)
{
	return (uint32_t)sp->uid_base + 2U * slot;
}

/*
 * Clone a child (flags: namespaces, born in the cgroup directory cgfd where
 * the kernel can: *ret_into) as the owner of the new user namespace, the
 * slot's uid. In the parent the caller ends the ownership
 * (spawner_owner_end) once the maps are written; on failure it has ended
 * here, *ret_step names the step ("owner", "clone") and -errno comes back.
 * The child gets 0.
 */
long spawner_clone_owned(struct spawner *sp, uint32_t slot, uint64_t flags, int cgfd,
			 bool *ret_into, const char **ret_step);
/* Back to euid 0; fatal if that fails. */
void spawner_owner_end(struct spawner *sp);
/* SIGKILL a sandbox's supervisor or a keeper of slot (as the slot's uid). */
void spawner_kill(struct spawner *sp, uint32_t slot, pid_t pid);
/* The child's uid and gid maps: its root the slot's first host uid, the
 * code's uid its second (*ret_step: the file that failed). */
int spawner_write_maps(const struct spawner *sp, uint32_t slot, pid_t pid, const char **ret_step);
/* The maps, then one byte on the child's sync pipe: it may go on. */
int spawner_release(const struct spawner *sp, uint32_t slot, pid_t pid, int sync_fd,
		    const char **ret_step);

/* SPAWN_ZYGOTE_START (spawner_zygote_cmd.c). */
void spawner_zygote_cmd(struct spawner *sp, const struct spawn_req *req, int *fds, size_t nfds);
/* The fds a SPAWN_REQ's supervisor gets: fds, and with SPAWN_F_ZYGOTE_RUN a
 * close-on-exec copy of the order socket of the zygote that owns the
 * slot's sandbox (ours to close). Returns how many, or -ESRCH (no such
 * zygote alive: nothing made) or -errno. */
int spawner_zygote_run_fds(struct spawner *sp, const struct spawn_req *req, const int *fds,
			   size_t nfds, int run_fds[SB_START_NFDS_ZYGOTE]);
/* pid was reaped: if it was a zygote, its slot is freed and
 * SPAWN_ZYGOTE_GONE sent; returns whether it was. */
bool spawner_zygote_reaped(struct spawner *sp, pid_t pid, int status);
/* SPAWN_DISCARD with SPAWN_F_ZYGOTE: kill the zygote of req's slot if
 * its key is req's run_id (its reap answers SPAWN_ZYGOTE_GONE); a stale
 * key is ignored. */
void spawner_zygote_stop(struct spawner *sp, const struct spawn_req *req);
/* The frontend is gone: kill and reap every zygote. */
void spawner_zygote_stop_all(struct spawner *sp);

#endif
