/*
 * spawn_wrap.h: the frontend's side of the spawner channel (spawn_msg.h),
 * as OpenSSH's monitor_wrap.c stands beside monitor.c: the send of a
 * request and the checked receive of an event. The spawner's side is its
 * own table, spawner_cmds (spawner/spawner.c).
 */
#ifndef AIRLOCKD_SPAWN_WRAP_H
#define AIRLOCKD_SPAWN_WRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "spawn_msg.h"

/* The most fds an event from the spawner carries (SPAWN_STARTED's two
 * memory figure fds). */
#define SPAWN_WRAP_FDS_MAX 2

/* Send one fixed request on the spawner channel sock, with its fds; waits
 * while the spawner's queue is full. 0 or -errno. */
int spawn_wrap_send(int sock, const struct spawn_req *req, const int *fds, size_t nfds);

/*
 * Receive one event from the spawner on sock (non-blocking) into *ev, its
 * fds into fds[SPAWN_WRAP_FDS_MAX] (*nfds of them, close-on-exec). Checked
 * here, before any handler: exactly one struct spawn_ev, a type the
 * frontend takes, no more fds than that type carries; ev->step is
 * NUL-terminated. *ret_lost: its fds did not all arrive (the frontend is at
 * its RLIMIT_NOFILE); the ones that did are closed and *nfds is 0.
 * Returns 1 (an event), 0 (the spawner's end), -EAGAIN or -EINTR (nothing
 * now), -EPROTO (a malformed event: its fds closed) or another -errno.
 */
int spawn_wrap_recv(int sock, struct spawn_ev *ev, int *fds, size_t *nfds, bool *ret_lost);

#endif
