/*
 * front_util.h: helpers shared by the front-door integration tests: run a
 * function or a command as another user, and speak raw packets to airlockd.
 */
#ifndef AIRLOCK_TEST_FRONT_UTIL_H
#define AIRLOCK_TEST_FRONT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* The unprivileged user the tests act as (nobody). */
#define FRONT_NOBODY_UID 65534
#define FRONT_NOBODY_GID 65534

/* How long front_call() waits for each packet of a reply (a run included). */
#define FRONT_REPLY_MS 30000

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

/* Connect to path and complete a hello. Returns the fd, or -errno (-EPROTO
 * when the answer is not hello_ok). */
int front_hello(const char *path);

/* A run request of runtime with code and nothing else set (callers add the
 * rest); it borrows both strings. */
void front_run_init(struct proto_run *ret, const char *runtime, const char *code);

/* Send a file operation of type on path in session sid (data: the bytes of
 * a file_write, else NULL) with id and receive its reply as front_call(). */
int front_file_op(int fd, uint32_t id, enum proto_type type, const char *sid, const char *path,
		  const char *data, struct proto_msg *ret_msg);

/*
 * Receive and decode one packet, waiting up to timeout_ms. Returns 0 with
 * *ret_msg (free with proto_msg_free()), -ECONNRESET on EOF, -ETIMEDOUT, or
 * another -errno (-EBADMSG when the reply does not decode).
 */
int front_recv(int fd, int timeout_ms, struct proto_msg *ret_msg);

/*
 * Receive until the reply to id comes (stream events and other ids are
 * dropped), waiting up to timeout_ms for each packet. 0 with *ret_msg, or
 * -errno as front_recv().
 */
int front_recv_reply(int fd, uint32_t id, int timeout_ms, struct proto_msg *ret_msg);

/* Send out (encoded with id; freed) and receive its reply as
 * front_recv_reply(), within FRONT_REPLY_MS a packet. */
int front_call(int fd, struct proto_out *out, uint32_t id, struct proto_msg *ret_msg);

/* Wait up to timeout_ms for EOF on fd, discarding packets. 0 at EOF. */
int front_wait_eof(int fd, int timeout_ms);

/*
 * Print the tail of the daemon's log (its stderr file, log) and fail the
 * running cmocka test with the message: what every front test shows on a
 * failure.
 */
void front_fail_log(const char *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* Fail with the log of the daemon that logs to log unless cond holds. */
#define FRONT_CHECK(log, cond, ...)                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			front_fail_log((log), __VA_ARGS__);                                        \
	} while (0)

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t front_now_ms(void);

struct airlock_conn;
struct airlock_run_req;
struct airlock_result;

/* Connect to the daemon at sock through libairlock (a failure fails the
 * test). */
struct airlock_conn *front_conn(const char *sock);

/* A python run request of code under profile (NULL: none named). */
struct airlock_run_req *front_py_req(const char *code, const char *profile);

/* Run req (freed) into *ret; on a refusal the daemon's error code (64
 * bytes) and message (512) into code and msg. airlock_run()'s return. */
int front_run_req(struct airlock_conn *c, struct airlock_run_req *req, struct airlock_result **ret,
		  char *code, char *msg);

/* Send a run of sh code with request id over a raw connection. */
void front_send_sh(int fd, uint32_t id, const char *code);

/* Send a ps request with id over a raw connection. */
void front_send_ps(int fd, uint32_t id);

/* Receive the next packet, which must answer id, within 20 s. */
void front_recv_id(int fd, uint32_t id, struct proto_msg *m);

/* Wait up to ms for no process of a uid in [lo, hi] (fixture_uid() moves
 * them into the build's band): true once there is none. */
bool front_no_procs_left(unsigned lo, unsigned hi, int ms);

/* Wait up to ms for a process named comm (its /proc comm) of a uid in
 * [lo, hi] (moved by fixture_uid()): true once there is one. What a test
 * waits for to know that a run got as far as that program. */
bool front_wait_named(unsigned lo, unsigned hi, const char *comm, int ms);

/* Sleep for ms milliseconds. */
void front_sleep_ms(long ms);

/* Number of open fds of process pid, or -errno. */
int front_count_fds(pid_t pid);

/* The first child of pid (the frontend of a fixture's daemon), or -errno. */
pid_t front_first_child(pid_t pid);

#endif
