/*
 * front_util.h: helpers shared by the front-door integration tests: run a
 * function or a command as another user, and speak raw packets to airlockd.
 */
#ifndef AIRLOCK_TEST_FRONT_UTIL_H
#define AIRLOCK_TEST_FRONT_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "proto.h"

/* The unprivileged user the tests act as (nobody). */
#define FRONT_NOBODY_UID 65534
#define FRONT_NOBODY_GID 65534

/*
 * Fork; in the child drop to uid/gid (no supplementary groups), call
 * fn(arg, buf) and send buf (len bytes) back. Returns 0 with buf filled, or
 * -errno (-ECHILD when the child failed to drop privileges or died).
 */
int front_as_user(uid_t uid, gid_t gid, void (*fn)(void *arg, void *buf), void *arg, void *buf,
		  size_t len);

/*
 * Run argv (uid (uid_t)-1 means as ourselves), capturing stdout and stderr,
 * NUL-terminated and truncated to their sizes. Returns the exit status
 * (0..255), 128 + signal, or -errno.
 */
int front_run_cmd(uid_t uid, gid_t gid, char *const argv[], char *out, size_t outlen, char *err,
		  size_t errlen);

/* Connect a raw SOCK_SEQPACKET socket to path. Returns the fd or -errno. */
int front_raw_connect(const char *path);

/* Encode and send a message built by an encoder; frees it. 0 or -errno. */
int front_send_out(int fd, struct proto_out *out);

/* Send a hello of the given version with id. */
int front_send_hello(int fd, uint32_t id, uint32_t version);

/* Send a ping with id. */
int front_send_ping(int fd, uint32_t id);

/*
 * Receive and decode one packet, waiting up to timeout_ms. Returns 0 with
 * *ret_msg (free with proto_msg_free()), -ECONNRESET on EOF, -ETIMEDOUT, or
 * another -errno (-EBADMSG when the reply does not decode).
 */
int front_recv(int fd, int timeout_ms, struct proto_msg *ret_msg);

/* Wait up to timeout_ms for EOF on fd, discarding packets. 0 at EOF. */
int front_wait_eof(int fd, int timeout_ms);

/* Number of open fds of process pid, or -errno. */
int front_count_fds(pid_t pid);

/* The first child of pid (the frontend of a fixture's daemon), or -errno. */
pid_t front_first_child(pid_t pid);

#endif
