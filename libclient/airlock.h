/*
 * airlock.h: the public API of libairlock, the client library of airlockd.
 *
 * libairlock sends code to airlockd, which runs it in a fresh, single-use
 * sandbox and answers with what the code did (exit status, output, files it
 * left behind). See docs/libairlock.md for an overview and airlock(1) for the
 * command-line tool built on this library.
 *
 * Conventions of this API:
 * - Every handle is opaque and created and destroyed by the library. Every
 *   *_free() function accepts NULL.
 * - Functions that can fail return 0 on success or a negative errno value.
 *   Out parameters are named ret* and written only on success (the one
 *   documented exception is *ret_id of airlock_conn_next_result()).
 * - Bytes are passed as (const void *buf, size_t len) and copied by the
 *   library; the caller's buffer need not outlive the call.
 * - The library has no global state, never prints, never exits and never
 *   raises signals (it sends with MSG_NOSIGNAL). Out of memory is -ENOMEM.
 *
 * Thread model: a struct airlock_conn and everything reached through it is
 * not thread-safe: use one connection per thread, or serialize every call on
 * one connection with your own lock. Different connections are independent
 * and may be used from different threads at the same time. Run requests,
 * results and info objects are plain data: they may be moved between threads
 * and read from several threads at once, but not modified concurrently.
 * Results, info, ps, session lists, files, file lists and events do not
 * depend on the connection that produced them and stay valid after it is
 * freed. A run cannot be cancelled from
 * another thread while a blocking airlock_run() waits on the same connection;
 * to cancel, submit with airlock_run_submit(), call airlock_cancel(), then
 * collect the result with airlock_conn_next_result() (or cancel by run id
 * from another connection with airlock_cancel_run()).
 *
 * Every file descriptor the library creates is close-on-exec.
 */
#ifndef AIRLOCK_H
#define AIRLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version of libairlock this header belongs to, to test at compile time
 * (#if LIBAIRLOCK_CHECK_VERSION(0, 4, 0)); airlock_library_version() says
 * which library a program runs with. pkg-config --modversion libairlock
 * prints the same version, which is also the release's (airlockd --version,
 * airlock --version). Functions added in a release are named "Since
 * 0.N" below and live in version node AIRLOCK_0.N of the library.
 */
#define LIBAIRLOCK_VERSION_MAJOR 0
#define LIBAIRLOCK_VERSION_MINOR 10
#define LIBAIRLOCK_VERSION_MICRO 0
#define LIBAIRLOCK_VERSION "0.10.0"
/* True when this header is version major.minor.micro or later. */
#define LIBAIRLOCK_CHECK_VERSION(major, minor, micro)                                              \
	(LIBAIRLOCK_VERSION_MAJOR > (major) ||                                                     \
	 (LIBAIRLOCK_VERSION_MAJOR == (major) && LIBAIRLOCK_VERSION_MINOR > (minor)) ||            \
	 (LIBAIRLOCK_VERSION_MAJOR == (major) && LIBAIRLOCK_VERSION_MINOR == (minor) &&            \
	  LIBAIRLOCK_VERSION_MICRO >= (micro)))

/* Default path of the daemon's socket; the environment variable
 * AIRLOCK_SOCKET overrides it. */
#define AIRLOCK_SOCKET_DEFAULT "/run/airlock/airlock.sock"

/* How a run ended. Values are stable. */
enum airlock_outcome {
	AIRLOCK_OUTCOME_EXITED = 0,	  /* the code exited; see exit_code */
	AIRLOCK_OUTCOME_SIGNALED = 1,	  /* killed by a signal; see signal */
	AIRLOCK_OUTCOME_WALL_LIMIT = 2,	  /* killed at the wall-clock limit */
	AIRLOCK_OUTCOME_CPU_LIMIT = 3,	  /* killed at the CPU-time limit */
	AIRLOCK_OUTCOME_MEMORY_LIMIT = 4, /* killed at the memory limit */
	AIRLOCK_OUTCOME_ERROR = 5,	  /* the sandbox itself failed; see error */
	AIRLOCK_OUTCOME_CANCELLED = 6,	  /* cancelled by its owner or a stopping daemon */
	/* stopped at the process limit (a fork or thread was refused; daemons
	 * with cgroup2 only, see airlock_info_resource_control). Since 0.4. */
	AIRLOCK_OUTCOME_PROCESS_LIMIT = 7,
};

/*
 * Limits a run request may set and an info reply reports. Values are stable
 * and numbered from 0 without gaps; airlock_limit_name() returns NULL past the
 * last one this library knows, so callers can iterate. In a request 0 means
 * "the daemon's configured default"; a value above the daemon's ceiling is
 * refused (-EPROTO, code "bad_request").
 */
enum airlock_limit {
	AIRLOCK_LIMIT_WALL_MS = 0,	   /* wall-clock time, milliseconds */
	AIRLOCK_LIMIT_CPU_MS = 1,	   /* CPU time, milliseconds */
	AIRLOCK_LIMIT_MEMORY_BYTES = 2,	   /* memory, bytes */
	AIRLOCK_LIMIT_PROCESSES = 3,	   /* processes and threads */
	AIRLOCK_LIMIT_OPEN_FILES = 4,	   /* open file descriptors */
	AIRLOCK_LIMIT_FILE_SIZE_BYTES = 5, /* largest file the code may write */
	AIRLOCK_LIMIT_OUTPUT_BYTES = 6,	   /* stdout and stderr kept, each */
	AIRLOCK_LIMIT_WORKSPACE_BYTES = 7, /* size of the workspace tmpfs */
	AIRLOCK_LIMIT_TMP_BYTES = 8,	   /* size of the private /tmp */
	AIRLOCK_LIMIT_ARTIFACTS = 9,	   /* artifacts returned */
	AIRLOCK_LIMIT_ARTIFACT_BYTES = 10, /* bytes kept per artifact */
};

struct airlock_conn;
struct airlock_info;
struct airlock_ps;
struct airlock_run_req;
struct airlock_result;

/* ---- Connections ---------------------------------------------------- */

/*
 * Connect to airlockd and perform the hello handshake (synchronously).
 * path: the socket path; NULL means $AIRLOCK_SOCKET if set and non-empty,
 * else AIRLOCK_SOCKET_DEFAULT.
 *
 * Returns 0 and *ret, or a negative errno: the one from socket(2)/connect(2)
 * (-ENOENT no socket, -EACCES no permission, -ECONNREFUSED no daemon),
 * -ENAMETOOLONG for a path too long for a Unix socket address,
 * -ECONNRESET when the daemon closed the connection, -EBADMSG for a reply that does not decode,
 * -EPROTONOSUPPORT when the daemon speaks another protocol version, or a daemon error reply mapped
 * as in airlock_conn_last_error(). When a daemon error reply made it fail, no connection exists to
 * ask for the daemon's message; use airlock_connect_error() instead.
 */
int airlock_connect(const char *path, struct airlock_conn **ret);

/*
 * Like airlock_connect(), but on failure also copies the daemon's error code
 * name and message (when the daemon sent an error reply) into code (code_len
 * bytes) and message (message_len bytes), NUL-terminated and truncated if
 * needed; both are set to "" when the failure was not a daemon reply. code
 * and message may be NULL when their length is 0.
 */
int airlock_connect_error(const char *path, struct airlock_conn **ret, char *code, size_t code_len,
			  char *message, size_t message_len);

/* Close the connection and free it, with every queued result. NULL-safe.
 * Runs still in flight are abandoned: the daemon ends them. */
void airlock_conn_free(struct airlock_conn *conn);

/*
 * The connection's socket, to poll for POLLIN in an event loop; call
 * airlock_conn_process() when it is readable. The socket is non-blocking;
 * do not read from, write to or close it yourself. Returns -EINVAL for NULL.
 */
int airlock_conn_fd(const struct airlock_conn *conn);

/*
 * The last error reply the daemon sent on this connection. *ret_code gets
 * its stable code name (e.g. "busy") and *ret_message its human message;
 * both stay valid until the next call on conn. Either pointer may be NULL.
 * Returns 0, or -ENOENT when the daemon has sent no error reply.
 *
 * Daemon error codes map to these return values of the call that got them:
 *   unauthorized        -EACCES
 *   busy                -EBUSY
 *   not_found           -ENOENT
 *   too_large           -E2BIG
 *   unsupported_version -EPROTONOSUPPORT
 *   anything else       -EPROTO  (bad_request, unknown_runtime, internal)
 */
int airlock_conn_last_error(const struct airlock_conn *conn, const char **ret_code,
			    const char **ret_message);

/*
 * Send a ping and wait for the pong (blocking). Results of runs in flight
 * that arrive meanwhile are queued. Returns 0 or a negative errno; after
 * -ECONNRESET, -EBADMSG or a send error the connection is unusable and every
 * later call returns the same error.
 */
int airlock_ping(struct airlock_conn *conn);

/* ---- Daemon information --------------------------------------------- */

/* Ask the daemon what it offers to this user (blocking, like airlock_ping). */
int airlock_info(struct airlock_conn *conn, struct airlock_info **ret);

/* Free an info object. NULL-safe. */
void airlock_info_free(struct airlock_info *info);

/* The daemon's version string, e.g. "0.1.0". Never NULL for a valid info. */
const char *airlock_info_daemon_version(const struct airlock_info *info);

/* The protocol version the daemon speaks. */
uint32_t airlock_info_protocol_version(const struct airlock_info *info);

/* The uid the daemon sees this connection as (from SO_PEERCRED). */
uint32_t airlock_info_uid(const struct airlock_info *info);

/* How many runtimes this user may use. */
size_t airlock_info_runtime_count(const struct airlock_info *info);

/* The name of runtime i (0-based), or NULL when i is out of range. */
const char *airlock_info_runtime_name(const struct airlock_info *info, size_t i);

/* The default of a limit (used when a request leaves it 0); 0 if unknown. */
uint64_t airlock_info_limit_default(const struct airlock_info *info, enum airlock_limit limit);

/* The ceiling of a limit (the largest value a request may ask); 0 if unknown. */
uint64_t airlock_info_limit_ceiling(const struct airlock_info *info, enum airlock_limit limit);

/*
 * What enforces the memory, process and cpu limits on the daemon's host:
 * "cgroup2" (the kernel, for the whole run), "cgroup1" (memory only),
 * "rlimit" (per-process rlimits: memory is address space), or NULL when the
 * daemon does not say (an older one). Since 0.4.
 */
const char *airlock_info_resource_control(const struct airlock_info *info);

/*
 * Which of the data-science packages numpy, pandas, matplotlib and scipy
 * runtime i (as in airlock_info_runtime_name) can import, comma-separated in
 * that order, e.g. "numpy,pandas,matplotlib"; "" when it can import none of
 * them; NULL when the daemon did not say (a runtime it does not look at, such
 * as sh or exec, an older daemon) or i is out of range. The string belongs to
 * info. Since 0.5.
 */
const char *airlock_info_runtime_packages(const struct airlock_info *info, size_t i);

/* ---- Run requests --------------------------------------------------- */

/*
 * Create an empty run request: runtime "python", no code, no argv, no env,
 * empty stdin, no files, every limit 0 (the daemon's default). A request may
 * be submitted any number of times and changed between submissions.
 */
int airlock_run_req_new(struct airlock_run_req **ret);

/* Free a run request. NULL-safe. */
void airlock_run_req_free(struct airlock_run_req *req);

/* Set the runtime by name ("python", "sh", "exec", ...; see airlock_info).
 * -EINVAL for NULL, empty or longer than 32 bytes. */
int airlock_run_req_set_runtime(struct airlock_run_req *req, const char *name);

/* Set the code to run (for interpreted runtimes); replaces earlier code.
 * -E2BIG above 256 MiB. buf may be NULL when len is 0. */
int airlock_run_req_set_code(struct airlock_run_req *req, const void *buf, size_t len);

/* Append one argument to argv (the full argv, argv[0] first, for "exec";
 * extra arguments after the code for interpreted runtimes). -E2BIG past 256
 * arguments or for an argument longer than 4096 bytes. */
int airlock_run_req_add_arg(struct airlock_run_req *req, const char *arg);

/* Set an environment variable of the run, replacing an earlier value of the
 * same key. -EINVAL for a key that is not a variable name as the daemon
 * takes it ([A-Za-z_][A-Za-z0-9_]*); -E2BIG past 128 variables, a key over
 * 128 bytes or a value over 4096 bytes. */
int airlock_run_req_set_env(struct airlock_run_req *req, const char *key, const char *value);

/* Set what the code reads on stdin; replaces earlier stdin. -E2BIG above
 * 256 MiB. buf may be NULL when len is 0. */
int airlock_run_req_set_stdin(struct airlock_run_req *req, const void *buf, size_t len);

/* Add an input file (mode 0644), placed at name relative to the workspace
 * before the code starts. -EINVAL for an empty or absolute name, one over
 * 255 bytes, one with an empty, "." or ".." component or a control
 * character (below 0x20, 0x7f) (the daemon's rule), -EEXIST for a name
 * already added, -E2BIG past 4096 files or above 256 MiB. Up to 64 files
 * that fit one packet travel as they always did; more go as one file bundle
 * (a sealed memfd), which a daemon before 0.8 does not take: the run then
 * fails with -E2BIG, as does a run in a session with more than 64 files.
 * (The daemon checks the names again, refuses a name that is also another's
 * directory, and files above workspace_bytes together.) */
int airlock_run_req_add_file(struct airlock_run_req *req, const char *name, const void *buf,
			     size_t len);

/* Set one limit (0 = the daemon's default). -EINVAL for an unknown limit. */
int airlock_run_req_set_limit(struct airlock_run_req *req, enum airlock_limit limit,
			      uint64_t value);

/* ---- Running -------------------------------------------------------- */

/*
 * Run a request and wait for its result (blocking). Other runs in flight on
 * conn keep going; their results are queued for airlock_conn_next_result().
 * A non-zero exit or a limit hit is a result (returns 0), not an error.
 * Returns 0 and *ret, a daemon error reply mapped as in
 * airlock_conn_last_error(), or another negative errno (connection errors as
 * in airlock_ping()).
 */
int airlock_run(struct airlock_conn *conn, const struct airlock_run_req *req,
		struct airlock_result **ret);

/*
 * Send a run request without waiting. *ret_id gets the request id that its
 * result will carry (ids are never 0 and not reused on one connection).
 * Large payloads travel as sealed memfds. May block only while the socket's
 * send buffer is full (reading and queueing replies meanwhile).
 */
int airlock_run_submit(struct airlock_conn *conn, const struct airlock_run_req *req,
		       uint32_t *ret_id);

/*
 * Read every reply available now without blocking and queue completed runs.
 * Call when airlock_conn_fd() is readable. Returns 0 (also when nothing was
 * there) or a connection error as in airlock_ping().
 */
int airlock_conn_process(struct airlock_conn *conn);

/*
 * Take the next completed run off the queue, in the order replies arrived.
 * Returns 0 with *ret_id and *ret set; -EAGAIN when none is ready (call
 * airlock_conn_process() when the fd is readable); once the connection is
 * broken and the queue is empty, the connection error. When run *ret_id
 * failed, returns its error: a daemon refusal mapped as in
 * airlock_conn_last_error() (which then describes that refusal), or -ENOMEM
 * when its result could not be stored. In that case, and only then, *ret_id
 * is written although the call failed, so that the caller learns which run
 * failed; *ret is not written. Never reads from the socket.
 */
int airlock_conn_next_result(struct airlock_conn *conn, uint32_t *ret_id,
			     struct airlock_result **ret);

/* ---- Results -------------------------------------------------------- */

/* Free a result. NULL-safe. */
void airlock_result_free(struct airlock_result *res);

/* How the run ended. */
enum airlock_outcome airlock_result_outcome(const struct airlock_result *res);

/* The exit code (outcome EXITED), else 0. */
int airlock_result_exit_code(const struct airlock_result *res);

/* The terminating signal (outcome SIGNALED), else 0. */
int airlock_result_signal(const struct airlock_result *res);

/* Wall-clock time of the run, milliseconds. */
uint64_t airlock_result_wall_ms(const struct airlock_result *res);

/* CPU time of the run (user + system), milliseconds. */
uint64_t airlock_result_cpu_ms(const struct airlock_result *res);

/* Peak memory of the run in bytes; 0 when not measurable. */
uint64_t airlock_result_memory_peak_bytes(const struct airlock_result *res);

/* Time the request waited in the daemon's queue, milliseconds. */
uint64_t airlock_result_queued_ms(const struct airlock_result *res);

/*
 * The stdout the daemon kept (at most the output limit). *ret_data points
 * into the result (never NULL; valid until airlock_result_free()), *ret_len
 * is its length. The bytes are raw and may contain NULs. Returns 0 or
 * -EINVAL.
 */
int airlock_result_stdout(const struct airlock_result *res, const void **ret_data, size_t *ret_len);

/* The stderr the daemon kept, like airlock_result_stdout(). */
int airlock_result_stderr(const struct airlock_result *res, const void **ret_data, size_t *ret_len);

/* Bytes the code wrote to stdout in all (may exceed what was kept). */
uint64_t airlock_result_stdout_total(const struct airlock_result *res);

/* Bytes the code wrote to stderr in all. */
uint64_t airlock_result_stderr_total(const struct airlock_result *res);

/* Whether stdout was cut at the output limit. */
bool airlock_result_stdout_truncated(const struct airlock_result *res);

/* Whether stderr was cut at the output limit. */
bool airlock_result_stderr_truncated(const struct airlock_result *res);

/* What failed when the outcome is ERROR (naming the step), else NULL. */
const char *airlock_result_error(const struct airlock_result *res);

/* How many artifacts (files the code created or changed) came back. */
size_t airlock_result_artifact_count(const struct airlock_result *res);

/* The name of artifact i, a relative path inside the workspace, or NULL when
 * i is out of range. The name comes from the sandbox: never trust it as a
 * path (see airlock(1) --artifacts for a safe way to write artifacts). */
const char *airlock_result_artifact_name(const struct airlock_result *res, size_t i);

/* The size of artifact i in the workspace, 0 when out of range. */
uint64_t airlock_result_artifact_size(const struct airlock_result *res, size_t i);

/* Whether artifact i's data holds fewer bytes than its size. */
bool airlock_result_artifact_truncated(const struct airlock_result *res, size_t i);

/* The bytes kept of artifact i, like airlock_result_stdout(); -EINVAL when i
 * is out of range. */
int airlock_result_artifact_data(const struct airlock_result *res, size_t i, const void **ret_data,
				 size_t *ret_len);

/* How many files the code created or changed are not among the artifacts:
 * past the artifacts limit (the daemon keeps, by a rule docs/protocol.md
 * states, files outside dot-directories first, then the most recently
 * modified), or not copyable. 0 also from a daemon that does not report it
 * (before 0.5). Since AIRLOCK_0.5. */
uint64_t airlock_result_artifacts_omitted(const struct airlock_result *res);

/* The total size, in the workspace, of the files left out. Since AIRLOCK_0.5. */
uint64_t airlock_result_artifacts_omitted_bytes(const struct airlock_result *res);

/* The figures of a run of a network = proxy profile (docs/design-egress.md). */
enum airlock_net_figure {
	AIRLOCK_NET_BYTES_UP = 0,    /* bytes the code sent through the proxy */
	AIRLOCK_NET_BYTES_DOWN = 1,  /* bytes it received */
	AIRLOCK_NET_CONNECTIONS = 2, /* connections it opened to the proxy */
	AIRLOCK_NET_REFUSED = 3,     /* of them, refused (each with a reason) */
};

/* Whether the result has network figures: the run's profile has
 * network = proxy (a daemon before 0.7 never sends them). Since 0.7. */
bool airlock_result_has_network(const struct airlock_result *res);

/* One figure; 0 without network figures or for an unknown figure. Since 0.7. */
uint64_t airlock_result_network(const struct airlock_result *res, enum airlock_net_figure figure);

/* How many destinations the run contacted (at most 32, first seen first),
 * and destination i as "host:port" (NULL when out of range; it belongs to
 * res). Since 0.7. */
size_t airlock_result_network_contacted_count(const struct airlock_result *res);
const char *airlock_result_network_contacted(const struct airlock_result *res, size_t i);

/* How many distinct refusals are listed (at most 32; the refused figure
 * counts them all), and refusal i: its "host:port" as the code asked ("" if
 * it was refused before it asked, at a limit), and its reason in
 * *ret_reason ("not_listed", "ip_literal", "private_address", "limit",
 * "resolve_failed", "connect_failed", "bad_request", ...; may be NULL).
 * NULL when out of range. Both belong to res. Since 0.7. */
size_t airlock_result_network_refusal_count(const struct airlock_result *res);
const char *airlock_result_network_refusal(const struct airlock_result *res, size_t i,
					   const char **ret_reason);

/* ---- Names ---------------------------------------------------------- */

/* The stable name of an outcome ("exited", "wall_limit", ...), or NULL for a
 * value this library does not know. */
const char *airlock_outcome_name(enum airlock_outcome outcome);

/* The stable name of a limit ("wall_ms", "memory_bytes", ...), or NULL for a
 * value this library does not know. */
const char *airlock_limit_name(enum airlock_limit limit);

/* Look a limit up by its name. Returns 0 and *ret, or -ENOENT. */
int airlock_limit_from_name(const char *name, enum airlock_limit *ret);

/* ---- Cancelling and listing runs (since AIRLOCK_0.2) ------------------ */

/*
 * Cancel a run this connection submitted, named by the request id that
 * airlock_run_submit() returned (blocking, like airlock_ping(): results of
 * runs that arrive meanwhile, the cancelled run's own included, are queued).
 * The daemon stops the run, queued or running; its result still arrives, with
 * outcome AIRLOCK_OUTCOME_CANCELLED, and is taken with
 * airlock_conn_next_result() as usual. A cell (airlock_run_req_set_cell) is
 * interrupted instead, as at its wall limit: its interpreter keeps its state
 * (airlock_result_state() AIRLOCK_CELL_KEPT) unless the cell does not stop
 * within 2 s.
 * Returns 0 when the daemon cancelled it; -ENOENT (daemon code "not_found")
 * when no such run is in progress on this connection, for example because it
 * has just finished (its result is then delivered as usual); -EINVAL for a
 * NULL conn or an id of 0; else a daemon error reply mapped as in
 * airlock_conn_last_error() or a connection error as in airlock_ping().
 */
int airlock_cancel(struct airlock_conn *conn, uint32_t request_id);

/*
 * Cancel one of the caller's runs by its daemon-wide run id, as
 * airlock_ps_run_id() reports it: any run of this uid, submitted on any
 * connection (blocking, like airlock_cancel()). The run's result goes to the
 * connection that submitted it, with outcome AIRLOCK_OUTCOME_CANCELLED.
 * Returns 0, -ENOENT when no such run of the caller is in progress (a run of
 * another user is not_found too, exactly like one that never existed; root
 * may cancel any run), -EINVAL for a NULL conn or an id of 0, or another
 * error as for airlock_cancel().
 */
int airlock_cancel_run(struct airlock_conn *conn, uint32_t run_id);

/*
 * List the caller's runs in progress and queued, on every connection
 * (blocking, like airlock_ping(): results of runs that arrive meanwhile are
 * queued). Which runs a user sees is the daemon's decision: its own, or every
 * user's for an administrator such as root. Returns 0 and *ret (free it with
 * airlock_ps_free(); an empty list has count 0), -EINVAL for NULL arguments,
 * a daemon error reply mapped as in airlock_conn_last_error(), or a
 * connection error as in airlock_ping().
 */
int airlock_ps(struct airlock_conn *conn, struct airlock_ps **ret);

/* Free a list of runs. NULL-safe. */
void airlock_ps_free(struct airlock_ps *ps);

/* How many runs the list holds (0 for NULL), in the daemon's order. */
size_t airlock_ps_count(const struct airlock_ps *ps);

/* The daemon-wide run id of entry i (0-based), for airlock_cancel_run();
 * 0 when i is out of range. */
uint32_t airlock_ps_run_id(const struct airlock_ps *ps, size_t i);

/* The uid that owns entry i; 0 when i is out of range. */
uint32_t airlock_ps_uid(const struct airlock_ps *ps, size_t i);

/* The pid of the client process that submitted entry i, as the daemon saw it
 * (SO_PEERCRED); 0 when i is out of range. */
int32_t airlock_ps_pid(const struct airlock_ps *ps, size_t i);

/* The runtime name of entry i, or NULL when i is out of range. Valid until
 * airlock_ps_free(). */
const char *airlock_ps_runtime(const struct airlock_ps *ps, size_t i);

/* The state of entry i: "queued" (waiting for a slot) or "running"; a newer
 * daemon may report other states. NULL when i is out of range. Valid until
 * airlock_ps_free(). */
const char *airlock_ps_state(const struct airlock_ps *ps, size_t i);

/* Milliseconds since the daemon received entry i's request (queued time
 * included); 0 when i is out of range. */
uint64_t airlock_ps_elapsed_ms(const struct airlock_ps *ps, size_t i);

/* How many runs the caller may see are not in the list: the daemon lists at
 * most 256 and counts the rest. 0: the list holds them all (also from a
 * daemon before 0.10, which did not count them), or ps is NULL. Since
 * AIRLOCK_0.10. */
uint64_t airlock_ps_more(const struct airlock_ps *ps);

/* ---- Sessions (since AIRLOCK_0.3) ------------------------------------ */

/*
 * A session is a workspace on the daemon that outlives each run: files put
 * there (airlock_file_write()) and files its runs leave behind stay until the
 * session ends. Every run is still a fresh sandbox; a run joins a session with
 * airlock_run_req_set_session(), and runs of one session never run at once
 * (they queue). A session ends on airlock_session_close(), after its idle
 * timeout, after its lifetime, or when its owner has been disconnected longer
 * than the daemon's grace period; after that its id is not_found (-ENOENT).
 * Sessions belong to the uid that opened them: any other uid gets -ENOENT,
 * exactly as for an id that never existed. Sessions are not tied to the
 * connection that opened them: any connection of the same uid may use one.
 */

/* A session id: exactly 32 lowercase hex characters. A buffer for one, with
 * its NUL, is AIRLOCK_SESSION_ID_LEN + 1 bytes. */
#define AIRLOCK_SESSION_ID_LEN 32

struct airlock_session_opts;
struct airlock_session_list;

/* Create session options: every value 0, meaning the daemon's default. */
int airlock_session_opts_new(struct airlock_session_opts **ret);

/* Free session options. NULL-safe. */
void airlock_session_opts_free(struct airlock_session_opts *opts);

/* Size of the session's workspace tmpfs in bytes (0 = the daemon's default).
 * -EINVAL for NULL opts. */
int airlock_session_opts_set_workspace_bytes(struct airlock_session_opts *opts, uint64_t bytes);

/* End the session after this many milliseconds without a run or a file
 * operation (0 = the daemon's default). -EINVAL for NULL opts. */
int airlock_session_opts_set_idle_timeout_ms(struct airlock_session_opts *opts, uint64_t ms);

/* End the session this many milliseconds after it was opened, whatever it is
 * doing (0 = the daemon's default). -EINVAL for NULL opts. */
int airlock_session_opts_set_lifetime_ms(struct airlock_session_opts *opts, uint64_t ms);

/*
 * detached true: the session does not end when the caller's last connection
 * has been gone for the daemon's grace period (orphan_grace_ms, 60 s as
 * shipped); only airlock_session_close(), its idle timeout and its lifetime
 * end it. For a program that opens a session and exits (airlock session
 * open). A daemon before 0.10 ignores it. -EINVAL for NULL opts. Since
 * AIRLOCK_0.10.
 */
int airlock_session_opts_set_detached(struct airlock_session_opts *opts, bool detached);

/* Set a default limit for the session's runs (0 = the daemon's default); a
 * run's own limits override it. -EINVAL for NULL opts or an unknown limit. */
int airlock_session_opts_set_limit(struct airlock_session_opts *opts, enum airlock_limit limit,
				   uint64_t value);

/*
 * Open a session (blocking, like airlock_ping(): results and stream events of
 * runs in flight that arrive meanwhile are queued). opts may be NULL for the
 * daemon's defaults. On success the new session's id, NUL-terminated, is
 * written to ret_id, a caller buffer of at least AIRLOCK_SESSION_ID_LEN + 1
 * bytes (like uuid_unparse(3): the id has a fixed length, so nothing needs
 * freeing). Returns 0; -EINVAL for a NULL conn or ret_id; -EBUSY (code busy)
 * at the daemon's limit of sessions for this uid; -EPROTO (bad_request, see
 * airlock_conn_last_error()) for a value above the daemon's ceiling; or
 * another daemon error or connection error as in airlock_ping().
 */
int airlock_session_open(struct airlock_conn *conn, const struct airlock_session_opts *opts,
			 char *ret_id);

/*
 * Close a session: its run in progress, if any, is cancelled and its
 * workspace is gone (blocking). Returns 0; -EINVAL for a NULL conn or an id
 * that is not 32 lowercase hex characters (nothing is sent); -ENOENT (code
 * not_found) when the caller has no such session (it ended, never existed or
 * belongs to another user); or another error as for airlock_ping().
 */
int airlock_session_close(struct airlock_conn *conn, const char *id);

/*
 * Extend the lease of session id (since AIRLOCK_0.10): it now ends
 * lifetime_ms from now, whatever was left (a session kept across a daemon
 * restart keeps its lease; docs/design-sessions.md). Returns 0; -EINVAL
 * for a NULL conn, a bad id or 0 ms (nothing is sent); -E2BIG (code
 * too_large) past the daemon's lifetime_ms_max; -ENOENT as for
 * airlock_session_close(); or another error as for airlock_ping().
 */
int airlock_session_extend(struct airlock_conn *conn, const char *id, uint64_t lifetime_ms);

/*
 * The workspace of session id as a POSIX ustar archive (since
 * AIRLOCK_0.10): its directories and regular files (links and special
 * files are left out), for the caller to keep. Returns 0 and *ret (free it
 * with airlock_file_free(); airlock_file_data() and airlock_file_size() as
 * for a file read); -E2BIG (code too_large) when the archive is larger
 * than the daemon's file_max_bytes; errors as for airlock_file_read().
 */
struct airlock_file;
int airlock_session_save(struct airlock_conn *conn, const char *id, struct airlock_file **ret);

/*
 * List the caller's sessions (blocking). Returns 0 and *ret (free it with
 * airlock_session_list_free(); no sessions is a list of count 0), -EINVAL
 * for NULL arguments, or another error as for airlock_ping(). The list is
 * plain data and outlives the connection.
 */
int airlock_session_list(struct airlock_conn *conn, struct airlock_session_list **ret);

/* Free a list of sessions. NULL-safe. */
void airlock_session_list_free(struct airlock_session_list *list);

/* How many sessions the list holds (0 for NULL). */
size_t airlock_session_list_count(const struct airlock_session_list *list);

/* How many of the caller's sessions are not in the list: the daemon lists
 * at most 64, the oldest first, and counts the rest. 0: the list holds them
 * all (also from a daemon before 0.10, which did not count them), or list
 * is NULL. Since AIRLOCK_0.10. */
uint64_t airlock_session_list_more(const struct airlock_session_list *list);

/* The id of session i (0-based), or NULL when i is out of range. Valid until
 * airlock_session_list_free(). */
const char *airlock_session_list_id(const struct airlock_session_list *list, size_t i);

/* Milliseconds since session i was opened; 0 when i is out of range. */
uint64_t airlock_session_list_age_ms(const struct airlock_session_list *list, size_t i);

/* Milliseconds since session i's last run or file operation; 0 when i is out
 * of range. */
uint64_t airlock_session_list_idle_ms(const struct airlock_session_list *list, size_t i);

/* How many runs session i has had so far; 0 when i is out of range. */
uint64_t airlock_session_list_runs(const struct airlock_session_list *list, size_t i);

/* The state of session i: "idle" or "running" (a run of it is queued or in
 * progress); NULL when i is out of range. Valid until
 * airlock_session_list_free(). */
const char *airlock_session_list_state(const struct airlock_session_list *list, size_t i);

/* The runtime of session i's interpreter when it was opened with
 * airlock_session_opts_set_interpreter() (its cells name this runtime), NULL
 * for a session of runs, when i is out of range, or from a daemon before
 * 0.9. Valid until airlock_session_list_free(). Since AIRLOCK_0.9. */
const char *airlock_session_list_interpreter(const struct airlock_session_list *list, size_t i);

/* Whether session i was opened with airlock_session_opts_set_background();
 * false when i is out of range or from a daemon before 0.10. Since
 * AIRLOCK_0.10. */
bool airlock_session_list_background(const struct airlock_session_list *list, size_t i);

/* ---- Files of a session (since AIRLOCK_0.3) ----------------------------- */

/*
 * Paths name a file relative to the session's workspace: non-empty (except
 * for airlock_file_list()), at most 1024 bytes. The library checks only that;
 * the daemon resolves every component with link-refusing lookups that stay
 * beneath the workspace, so an absolute path, a ".." that leaves it or a
 * symbolic link on the way is refused there (-EPROTO, code bad_request, with
 * the reason in airlock_conn_last_error()), not followed.
 *
 * Every file operation is blocking, like airlock_ping(): results and stream
 * events of runs in flight that arrive meanwhile are queued. Common errors:
 * -EINVAL for a NULL argument, a malformed session id or an empty path;
 * -ENAMETOOLONG for a path over 1024 bytes; -ENOENT (code not_found) for no
 * such session of the caller or no such file; otherwise a daemon error or a
 * connection error as in airlock_ping().
 */

/* What a directory entry is. Values are stable. */
enum airlock_file_kind {
	AIRLOCK_FILE_FILE = 0,	/* a regular file */
	AIRLOCK_FILE_DIR = 1,	/* a directory */
	AIRLOCK_FILE_LINK = 2,	/* a symbolic link (never followed) */
	AIRLOCK_FILE_OTHER = 3, /* anything else: FIFO, socket, device */
};

struct airlock_file;
struct airlock_file_list;

/*
 * Write len bytes of buf as the file path of session id, replacing it if it
 * exists and making its parent directories as needed. The data is copied
 * before the call returns; above 16 KiB it travels as a sealed memfd. buf may
 * be NULL when len is 0 (an empty file). Returns 0, -E2BIG (code too_large)
 * when the workspace is full or above 256 MiB, or an error as above.
 */
int airlock_file_write(struct airlock_conn *conn, const char *id, const char *path, const void *buf,
		       size_t len);

/*
 * Read the regular file path of session id. Returns 0 and *ret (free it with
 * airlock_file_free(); it outlives the connection): its first bytes, at most
 * the daemon's limit, and its whole size. A directory, a link or a special
 * file is refused (-EPROTO, code bad_request). Errors as above.
 */
int airlock_file_read(struct airlock_conn *conn, const char *id, const char *path,
		      struct airlock_file **ret);

/* Free a file read. NULL-safe. */
void airlock_file_free(struct airlock_file *file);

/* The bytes read: *ret_data points into file (never NULL; valid until
 * airlock_file_free()), *ret_len is their count. Returns 0 or -EINVAL. */
int airlock_file_data(const struct airlock_file *file, const void **ret_data, size_t *ret_len);

/* The file's size in the workspace (>= the bytes read); 0 for NULL. */
uint64_t airlock_file_size(const struct airlock_file *file);

/* Whether the bytes read are fewer than the file's size (cut at the daemon's
 * limit). */
bool airlock_file_truncated(const struct airlock_file *file);

/*
 * List the directory dir of session id (NULL or "" for the workspace's root):
 * at most 1000 entries, links not followed. Returns 0 and *ret (free it with
 * airlock_file_list_free(); it outlives the connection), or an error as
 * above.
 */
int airlock_file_list(struct airlock_conn *conn, const char *id, const char *dir,
		      struct airlock_file_list **ret);

/* Free a directory listing. NULL-safe. */
void airlock_file_list_free(struct airlock_file_list *list);

/* How many entries the listing holds (0 for NULL), in the daemon's order. */
size_t airlock_file_list_count(const struct airlock_file_list *list);

/* The name of entry i (one component, chosen by the code that ran in the
 * session: never trust it as a path), or NULL when i is out of range. */
const char *airlock_file_list_name(const struct airlock_file_list *list, size_t i);

/* What entry i is; AIRLOCK_FILE_OTHER when i is out of range. */
enum airlock_file_kind airlock_file_list_kind(const struct airlock_file_list *list, size_t i);

/* The size of entry i in bytes (of a link: of the link itself); 0 when i is
 * out of range. */
uint64_t airlock_file_list_size(const struct airlock_file_list *list, size_t i);

/* The modification time of entry i, milliseconds since the epoch; 0 when i is
 * out of range. */
uint64_t airlock_file_list_mtime_ms(const struct airlock_file_list *list, size_t i);

/* Whether the directory holds more entries than the listing (more than 1000,
 * or more than fit in one protocol packet). */
bool airlock_file_list_truncated(const struct airlock_file_list *list);

/* The stable name of a kind ("file", "dir", "link", "other"), or NULL for a
 * value this library does not know. */
const char *airlock_file_kind_name(enum airlock_file_kind kind);

/*
 * Delete path in session id: a file, a link (the link itself, not its target)
 * or an empty directory. Returns 0 or an error as above (a non-empty
 * directory is refused by the daemon).
 */
int airlock_file_delete(struct airlock_conn *conn, const char *id, const char *path);

/* ---- Runs in a session, and streaming (since AIRLOCK_0.3) --------------- */

/* Run in session id's workspace instead of a fresh one (id copied; NULL: a
 * one-shot run again, the default). The run's artifacts are then the files
 * it created or changed. -EINVAL for an id that is not 32 lowercase hex
 * characters. The daemon answers -ENOENT (not_found) for no such session. */
int airlock_run_req_set_session(struct airlock_run_req *req, const char *id);

/*
 * Ask for the run's output as it is written (default false): the daemon then
 * sends stream events, each one chunk of stdout or stderr in order, all before
 * the run's result. Only the bytes within the run's output limit are
 * streamed, and the result still carries the same kept bytes as without
 * streaming. Submitted with airlock_run_submit(), the events are taken with
 * airlock_conn_next_event(); with the blocking airlock_run() they are
 * discarded (use airlock_run_stream() to see them). Since 0.10 a cell
 * (airlock_run_req_set_cell) may stream too: the daemon reads its output
 * every 50 ms while it runs, and its exception is then in
 * airlock_result_error_name() and the others only, not on stderr (a
 * daemon before 0.10 refuses it, -EPROTO). -EINVAL for NULL req.
 */
int airlock_run_req_set_stream(struct airlock_run_req *req, bool stream);

/* Which output a stream event carries. Values are stable. */
enum airlock_stream {
	AIRLOCK_STREAM_STDOUT = 1,
	AIRLOCK_STREAM_STDERR = 2,
};

/* Called by airlock_run_stream() for every chunk of output, in order. buf
 * (len >= 1 bytes, raw, may hold NULs) is valid only during the call. */
typedef void (*airlock_stream_fn)(void *arg, enum airlock_stream stream, const void *buf,
				  size_t len);

/*
 * Run a request with streaming (whatever airlock_run_req_set_stream() says)
 * and wait for its result, calling cb(arg, ...) for every chunk of the run's
 * output as it arrives, all before returning. cb must not call libairlock
 * functions on conn. Results and events of other runs in flight that arrive
 * meanwhile are queued, as for airlock_run(). Returns like airlock_run();
 * -EINVAL for a NULL conn, req, cb or ret.
 */
int airlock_run_stream(struct airlock_conn *conn, const struct airlock_run_req *req,
		       airlock_stream_fn cb, void *arg, struct airlock_result **ret);

struct airlock_event;

/*
 * Take the next event (a stream chunk, or since 0.8 a tool call: see
 * airlock_event_kind()) off the connection's queue, in the order events
 * arrived (every event of a run comes before its result: drain events until
 * -EAGAIN before taking results to see them all). Returns 0 and *ret (free
 * with airlock_event_free()); -EAGAIN when none is queued (call
 * airlock_conn_process() when the fd is readable); -EINVAL for NULL
 * arguments; once the connection is broken and no event is queued, the
 * connection error. Never reads from the socket.
 *
 * Memory: events are queued only for runs submitted with streaming or tools,
 * and the daemon streams at most the run's output limit of each of stdout and
 * stderr (tool calls: at most 4 waiting per connection of the code, 64 KiB each).
 * When airlock_conn_next_result() hands out a run's result, that run's events
 * still queued are discarded; so a caller that never takes events holds at
 * most two output limits of data per run whose result it has not taken yet.
 */
int airlock_conn_next_event(struct airlock_conn *conn, struct airlock_event **ret);

/* Free an event. NULL-safe. */
void airlock_event_free(struct airlock_event *ev);

/* The request id of the run the event belongs to (as airlock_run_submit()
 * returned it); 0 for NULL. */
uint32_t airlock_event_request_id(const struct airlock_event *ev);

/* Which output the event carries; 0 for NULL. */
enum airlock_stream airlock_event_stream(const struct airlock_event *ev);

/* The event's bytes (1 to 16 KiB): *ret_data points into ev (valid until
 * airlock_event_free()), *ret_len is their count. Returns 0 or -EINVAL. */
int airlock_event_data(const struct airlock_event *ev, const void **ret_data, size_t *ret_len);

/* ---- Versions, timeouts and liveness (since AIRLOCK_0.4) --------------- */

/* The version of the library the program runs with, e.g. "0.7.0" (the
 * header's is LIBAIRLOCK_VERSION). Never NULL. Since 0.4. */
const char *airlock_library_version(void);

/*
 * Like airlock_connect_error(), but the hello handshake gives up after
 * timeout_ms milliseconds (-ETIMEDOUT; connect(2) itself is not bounded: it
 * waits only while the daemon's listen backlog is full), and the connection starts
 * with that timeout for its blocking calls (airlock_conn_set_timeout()).
 * timeout_ms 0: no timeout, exactly airlock_connect_error(). Since 0.4.
 */
int airlock_connect_timeout(const char *path, uint64_t timeout_ms, struct airlock_conn **ret,
			    char *code, size_t code_len, char *message, size_t message_len);

/*
 * Bound every later blocking call on conn (airlock_ping, airlock_info,
 * airlock_run, airlock_run_stream, airlock_cancel, airlock_cancel_run,
 * airlock_ps, the session and file calls, and the wait of a submit for room
 * in the send buffer) to timeout_ms milliseconds each; 0 (the default)
 * waits for ever. A call that times out returns -ETIMEDOUT and the
 * connection stays usable: the answer that comes later is discarded, and a
 * run whose blocking airlock_run() or airlock_run_stream() timed out is
 * cancelled (its result is discarded too). A run limited by its own wall
 * limit needs a timeout above that limit. Returns 0 or -EINVAL. Since 0.4.
 */
int airlock_conn_set_timeout(struct airlock_conn *conn, uint64_t timeout_ms);

/*
 * Whether conn can still be used, without blocking and without a round
 * trip: reads what the socket has (queued as airlock_conn_process() does)
 * and returns 0 when the connection is usable, or the error every later call
 * would return: -ECONNRESET once the daemon has closed it (it stopped or
 * restarted), -EBADMSG, or another error that broke it. -EINVAL for NULL.
 * A daemon that hangs without closing is not detected: use a timeout and
 * airlock_ping() for that. Since 0.4.
 */
int airlock_conn_check(struct airlock_conn *conn);

/* ---- Profiles (since AIRLOCK_0.6) --------------------------------------- */

/*
 * Profiles are named sets of limits the daemon's administrator defines
 * (airlockd.conf(5), [profile NAME]; minimal, standard and generous are
 * built in). A request names one, or gets the daemon's default profile; a
 * profile's value of a limit is the request's default and its ceiling: a
 * request may ask less, never more.
 */

/* Name the run's profile (copied; NULL: the daemon's default profile, the
 * default). -EINVAL for NULL req or a name that is not 1 to 32 of a-z, 0-9,
 * '-', '_'. The daemon answers -ENOENT (not_found) for a profile that does
 * not exist, -EACCES (unauthorized) for one the caller may not use, -EPROTO
 * (bad_request) for a limit above the profile's. In a session the run uses
 * the session's profile: naming another is bad_request. Since 0.6. */
int airlock_run_req_set_profile(struct airlock_run_req *req, const char *name);

/* ---- Mounts (since AIRLOCK_0.7) ------------------------------------------ */

/*
 * Ask for one of the daemon's named read-only mounts (airlockd.conf(5),
 * [mount NAME]: a dataset or a package tree the administrator configured;
 * never a host path of the caller's). The run gets it on top of those its
 * profile and runtime give every run. Copied. -EINVAL for NULL or a name
 * that is not 1 to 32 of a-z, 0-9, '-', '_'; -E2BIG past 16. The daemon
 * answers -ENOENT (not_found) for a mount that does not exist and -EACCES
 * (unauthorized) for one the run's profile does not list in allow_mounts.
 * Since 0.7.
 */
int airlock_run_req_add_mount(struct airlock_run_req *req, const char *name);

/* Name the session's profile (copied; NULL: the daemon's default), fixed for
 * all its runs. -EINVAL and the daemon's answers as for
 * airlock_run_req_set_profile(). Since 0.6. */
int airlock_session_opts_set_profile(struct airlock_session_opts *opts, const char *name);

/* How many profiles the caller may use (those info lists); 0 from a daemon
 * before 0.6. Since 0.6. */
size_t airlock_info_profile_count(const struct airlock_info *info);

/* The name of profile i, or NULL when i is out of range. It belongs to info.
 * Since 0.6. */
const char *airlock_info_profile_name(const struct airlock_info *info, size_t i);

/* Whether profile i is the one a request naming no profile gets. Since 0.6. */
bool airlock_info_profile_is_default(const struct airlock_info *info, size_t i);

/* Profile i's default of a limit (what a request leaving it 0 gets); 0 when
 * i or limit is out of range. Since 0.6. */
uint64_t airlock_info_profile_limit(const struct airlock_info *info, size_t i,
				    enum airlock_limit limit);

/* Profile i's ceiling of a limit (the most a request may ask): the same as
 * its default for a [profile] section, the [limits] ceiling for the implicit
 * profile "default". 0 when out of range. Since 0.6. */
uint64_t airlock_info_profile_ceiling(const struct airlock_info *info, size_t i,
				      enum airlock_limit limit);

/* Whether profile i has network = proxy (its runs reach the hosts of its
 * allow-list through the daemon's proxy; else no network at all). Since 0.7. */
bool airlock_info_profile_network(const struct airlock_info *info, size_t i);

/* How many allow-list entries profile i has, and entry k as listed
 * ("pypi.org:443", "*.example.com:80,443"); *ret_private (may be NULL) says
 * whether it is from allow_private_hosts. NULL when out of range; it belongs
 * to info. Since 0.7. */
size_t airlock_info_profile_allow_count(const struct airlock_info *info, size_t i);
const char *airlock_info_profile_allow(const struct airlock_info *info, size_t i, size_t k,
				       bool *ret_private);
/* ---- Profile switches (since AIRLOCK_0.7) -------------------------------- */

/*
 * A profile's policy switches (airlockd.conf(5), [profile NAME]): what the
 * kernel lets its runs do. Each is on (allowed) unless the profile turns it
 * off; docs/security.md says what "off" guarantees.
 */
enum airlock_profile_switch {
	/* file_write: the workspace and /tmp are writable (off: read-only
	 * mounts; outputs only through stdout and stderr, no artifacts) */
	AIRLOCK_SWITCH_FILE_WRITE = 0,
	/* subprocess: the code may start processes and threads and run other
	 * programs (off: one process, one thread, one exec; fork, clone,
	 * posix_spawn, pthread_create and exec fail with EPERM) */
	AIRLOCK_SWITCH_SUBPROCESS = 1,
};

/* Whether profile i's runs may do what sw names: 1 (allowed; also from a
 * daemon that does not know the switch), 0 (the profile turns it off), or
 * -EINVAL when info is NULL or i or sw is out of range. Since 0.7. */
int airlock_info_profile_switch(const struct airlock_info *info, size_t i,
				enum airlock_profile_switch sw);

/* ---- Many input files (since AIRLOCK_0.8) --------------------------------- */

/* airlock_run_req_add_file() with a mode: 0644 or 0755 (executable), else
 * -EINVAL. A file of mode 0755 always travels in a file bundle: a daemon
 * before 0.8, or a run in a session, fails the run with -EOPNOTSUPP.
 * Since 0.8. */
int airlock_run_req_add_file_mode(struct airlock_run_req *req, const char *name, const void *buf,
				  size_t len, unsigned int mode);
/* ---- Tools the run's code may call (since AIRLOCK_0.8) ------------------ */

/*
 * The tool bridge (docs/protocol.md, "Tools"): a run declares tools; its code
 * calls them (`import airlock_tools`, `airlock-tool`, or JSON lines on
 * $AIRLOCK_TOOLS) and the daemon relays each call of a declared tool to this
 * connection as an event; the program runs the tool and answers with
 * airlock_tool_reply() or airlock_tool_fail(). The daemon answers undeclared,
 * malformed and over-limit calls itself. Nothing the code sends reaches the
 * program but a declared name and its args (a JSON object's text).
 */

/*
 * Declare a tool: name ([A-Za-z_][A-Za-z0-9_]*, 1..64 bytes), an optional
 * description (<= 1024 bytes) and an optional JSON schema of its arguments
 * (a JSON object's text, <= 8 KiB; passed on, never interpreted). At most 32
 * per run. Returns 0, -EINVAL (a bad name or schema), -EEXIST (declared
 * already), -E2BIG or -ENOMEM. Since 0.8.
 */
int airlock_run_req_add_tool(struct airlock_run_req *req, const char *name, const char *description,
			     const char *schema_json);

/* What an event is. Values are stable. */
enum airlock_event_kind {
	AIRLOCK_EVENT_STREAM = 1,    /* a chunk of output (airlock_event_stream, _data) */
	AIRLOCK_EVENT_TOOL_CALL = 2, /* a call of a declared tool, to answer */
};

/* The kind of an event; 0 for NULL. Since 0.8. */
enum airlock_event_kind airlock_event_kind(const struct airlock_event *ev);

/* A tool call's number in its run (1, 2, ...; what the answer names), its
 * tool's name (valid until airlock_event_free()); 0 and NULL for any other
 * event. Its args, a JSON object's text (also NUL-terminated), are
 * airlock_event_data()'s bytes. Since 0.8. */
uint32_t airlock_event_tool_call(const struct airlock_event *ev);
const char *airlock_event_tool_name(const struct airlock_event *ev);

/*
 * Answer call of the run of request_id with a result: json (len bytes of
 * JSON text, <= 64 KiB) goes to the code as it is. Or refuse or fail it with
 * a message (<= 1024 bytes; refused: the approval said no, else the tool
 * failed): the code gets an error. Returns 0 (sent; an answer to a call the
 * daemon no longer waits for is dropped there), -EINVAL, -E2BIG, or the
 * connection's error. Does not wait. Since 0.8.
 */
int airlock_tool_reply(struct airlock_conn *conn, uint32_t request_id, uint32_t call,
		       const void *json, size_t len);
int airlock_tool_fail(struct airlock_conn *conn, uint32_t request_id, uint32_t call,
		      const char *message, bool refused);

/* What a tool handler may return besides 0 and a negative errno. */
#define AIRLOCK_TOOL_REFUSED 1

/*
 * A tool handler of airlock_run_tools(): name is a declared tool, args its
 * arguments (args_len bytes of a JSON object, NUL-terminated). Return 0 with
 * *ret_json a malloc()ed JSON text of *ret_len bytes (the result); or
 * AIRLOCK_TOOL_REFUSED (the approval said no) or a negative errno (the tool
 * failed), with *ret_json NULL or a malloc()ed NUL-terminated message. The
 * library frees *ret_json. It must not call libairlock functions on conn.
 */
typedef int (*airlock_tool_fn)(void *arg, const char *name, const char *args, size_t args_len,
			       char **ret_json, size_t *ret_len);

/*
 * Run a request that declares tools and wait for its result, calling
 * cb(arg, ...) for each call of a declared tool and sending its answer (a
 * refusal or a failure is an error answer to the code, never an error of
 * this call). Stream events, if asked for, are discarded. Returns like
 * airlock_run(); -EINVAL for a NULL conn, req, cb or ret. Since 0.8.
 */
int airlock_run_tools(struct airlock_conn *conn, const struct airlock_run_req *req,
		      airlock_tool_fn cb, void *arg, struct airlock_result **ret);

/* The calls the run's code made, in order (at most 256; the rest counted by
 * _omitted): name, outcome ("ok", "refused", "error", "undeclared",
 * "malformed", "too_large", "limit", "timeout", "abandoned") and
 * milliseconds to the answer. NULL or 0 when out of range. Since 0.8. */
size_t airlock_result_tool_call_count(const struct airlock_result *res);
const char *airlock_result_tool_call_name(const struct airlock_result *res, size_t i);
const char *airlock_result_tool_call_outcome(const struct airlock_result *res, size_t i);
uint64_t airlock_result_tool_call_ms(const struct airlock_result *res, size_t i);
uint64_t airlock_result_tool_calls_omitted(const struct airlock_result *res);

/* ---- Interpreter sessions (since AIRLOCK_0.9) ---------------------------- */

/*
 * Open the session with an interpreter: one python of this runtime ("python")
 * kept alive in the session's sandbox, which runs cells
 * (airlock_run_req_set_cell) in one set of globals. Such a session takes
 * cells and file operations only. NULL: none (the default). -EINVAL for a
 * NULL opts or an empty or too long name. Since 0.9.
 */
int airlock_session_opts_set_interpreter(struct airlock_session_opts *opts, const char *runtime);

/*
 * Keep the processes the session's cells start (a server, a long job)
 * alive between cells, in the interpreter's one sandbox, under the
 * session's limits, until the session ends; a later cell reaches a server
 * on 127.0.0.1. Only with an interpreter (else airlock_session_open()
 * gets bad_request, -EPROTO) and under a profile whose background_processes
 * is true (else unauthorized, -EACCES). Default false: every process a
 * cell started dies at its end. -EINVAL for a NULL opts. Since 0.10.
 */
int airlock_session_opts_set_background(struct airlock_session_opts *opts, bool on);

/*
 * The processes a background session keeps (every process of its sandbox
 * but its interpreter), each with its pid in the sandbox, its name (comm,
 * at most 15 bytes, printable ASCII), its cpu time so far and its resident
 * memory. At most 64 (airlock_process_list_truncated() says when the
 * session had more). *ret is freed with airlock_process_list_free().
 * -EINVAL for a NULL argument or a malformed id; the daemon's
 * not_found (-ENOENT) for no such session of the caller's, bad_request
 * (-EPROTO) for one not opened with background. Since 0.10.
 */
struct airlock_process_list;
int airlock_session_ps(struct airlock_conn *conn, const char *session,
		       struct airlock_process_list **ret);
void airlock_process_list_free(struct airlock_process_list *list);
size_t airlock_process_list_count(const struct airlock_process_list *list);
bool airlock_process_list_truncated(const struct airlock_process_list *list);
/* Process i's fields; 0 or NULL when i is out of range. */
uint32_t airlock_process_list_pid(const struct airlock_process_list *list, size_t i);
const char *airlock_process_list_name(const struct airlock_process_list *list, size_t i);
uint64_t airlock_process_list_cpu_ms(const struct airlock_process_list *list, size_t i);
uint64_t airlock_process_list_memory_bytes(const struct airlock_process_list *list, size_t i);

/*
 * Stop one of them: SIGKILL to pid (as airlock_session_ps() lists it).
 * 0 once it was sent; -ENOENT (not_found) when the session has no such
 * process; -EPROTO (bad_request) for the interpreter itself or a session
 * not opened with background; -EINVAL for a NULL argument, a malformed id
 * or pid 0. Since 0.10.
 */
int airlock_process_stop(struct airlock_conn *conn, const char *session, uint32_t pid);

/*
 * Start the session's workspace as the POSIX ustar archive buf (len bytes;
 * as airlock_session_save() returns one), which must stay valid until
 * airlock_session_open() returns; NULL: an empty workspace (the default).
 * The daemon refuses the whole archive, and opens no session (-EPROTO, code
 * bad_request, naming the entry), for anything but plain files and
 * directories, an absolute or ".." name, or contents past the session's
 * workspace size (code too_large). -EINVAL for a NULL opts, a NULL buf with
 * len > 0, or more than 256 MiB. Since 0.10.
 */
int airlock_session_opts_set_archive(struct airlock_session_opts *opts, const void *buf,
				     size_t len);

/*
 * Make req a cell of its session's interpreter: code, limits and (since
 * 0.10) stream only (the runtime must be the session's interpreter). The
 * result's wall and cpu
 * limits are the cell's: at one the cell is interrupted (KeyboardInterrupt)
 * and the state is kept; if it does not stop within 2 s, or the memory limit
 * is hit, the interpreter is restarted empty (state lost). Run it with
 * airlock_run() or airlock_run_async(). Since 0.9.
 */
int airlock_run_req_set_cell(struct airlock_run_req *req, bool cell);

/*
 * Ask a cell's or a python run's matplotlib figures (those plt.show()
 * shows, those left open) as "image/svg+xml" display items instead of
 * "image/png". A run of another runtime asking it is refused (-EPROTO, code
 * "bad_request"), and so is a python run by a daemon before run figures. A
 * daemon before issue 30 ignores it on a cell (its figures stay PNG: check
 * the display items' mime types). -EINVAL for a NULL req. Since 0.10.
 */
int airlock_run_req_set_figures_svg(struct airlock_run_req *req, bool svg);

/*
 * Ask a cell run through IPython's InteractiveShell (magics such as %timeit,
 * `!cmd` as a process of the sandbox, IPython's display()) when the
 * session's runtime can import IPython; otherwise the cell runs as without
 * it and its stderr starts with a line saying so. For cells only: a run
 * asking it is refused (-EPROTO, code "bad_request"); a daemon before 0.10
 * ignores it. -EINVAL for a NULL req. Since 0.10.
 */
int airlock_run_req_set_ipython(struct airlock_run_req *req, bool ipython);

enum airlock_cell_state {
	AIRLOCK_CELL_NONE = 0, /* not a cell */
	AIRLOCK_CELL_KEPT = 1, /* the cell ran with what the cells before it left */
	AIRLOCK_CELL_LOST = 2, /* the interpreter was restarted empty before or during it */
};

/* A cell's number in its session (1, 2, ...), 0 when not a cell. Since 0.9. */
uint64_t airlock_result_cell(const struct airlock_result *res);
/* Whether the cell kept the interpreter's state. Since 0.9. */
enum airlock_cell_state airlock_result_state(const struct airlock_result *res);
/*
 * Whether the cell's interpreter ended during it (the cell killed it, the
 * memory limit, no stop within 2 s of an interrupt, a broken driver): the
 * next cell runs in a new, empty one. Its state is then AIRLOCK_CELL_LOST
 * too; a LOST cell for which this is false ran in an interpreter that was
 * new before it began (the cell after a restarted one, or after a reload
 * or a daemon restart). false for a run, or from a daemon before 0.10.
 * Since 0.10.
 */
bool airlock_result_restarted(const struct airlock_result *res);
/*
 * The exception the cell raised (a SyntaxError of its code included;
 * "KeyboardInterrupt" for an interrupted one): its type's name (1..256 B,
 * no space), str() of it (at most 4 KiB) and the traceback's text from the
 * first frame of the cell's code (at most 16 KiB, cut at its front), all
 * UTF-8. NULL when it raised none, for a run, or from a daemon before 0.10;
 * all three or none. The traceback is on stderr too, unless the cell was
 * streamed (airlock_run_req_set_stream). Valid until airlock_result_free().
 * Since 0.10.
 */
const char *airlock_result_error_name(const struct airlock_result *res);
const char *airlock_result_error_value(const struct airlock_result *res);
const char *airlock_result_traceback(const struct airlock_result *res);
/* The repr of the cell's trailing expression (at most 16 KiB, UTF-8), or NULL
 * when it had none or it was None. Valid until airlock_result_free(). Since 0.9. */
const char *airlock_result_value(const struct airlock_result *res);
/* Rich outputs of the cell (at most 8), in Jupyter's order: display() calls
 * and plt.show() figures, the trailing value's _repr_png_, _repr_svg_,
 * _repr_html_ and _repr_markdown_, the figures left open; *ret_mime is
 * "image/png", "image/svg+xml", "text/plain", "text/html",
 * "text/markdown", or (a cell through IPython, 0.10) "text/latex" or
 * "application/json" (JSON text), the bytes are like
 * airlock_result_stdout()'s. A python run's (not a cell's) are its
 * matplotlib figures, those plt.show() showed then those left open at its
 * end (image/png or image/svg+xml; since 0.10, with a daemon that sends
 * them). -EINVAL when i is out of range. Since 0.9. */
size_t airlock_result_display_count(const struct airlock_result *res);
int airlock_result_display_get(const struct airlock_result *res, size_t i, const char **ret_mime,
			       const void **ret_data, size_t *ret_len);
/* Whether rich output i is one of the trailing value's representations
 * (with airlock_result_value() as its text/plain, the value's one mime
 * bundle, Jupyter's execute_result); false for a display() call or a
 * figure, for i out of range and from a daemon before 0.10. Since 0.10. */
bool airlock_result_display_is_value(const struct airlock_result *res, size_t i);

/* ---- Advisories, mounts, profile lists (since AIRLOCK_0.9) --------------- */

/*
 * What the daemon's advisory checks found in the run's code (at most 16
 * lines of at most 255 bytes, e.g. "blocked import: subprocess (line 3)";
 * the profile's blocked_imports). An advisory is never a refusal and never a
 * boundary: the run went ahead, and code can import a module no check sees
 * (docs/security.md). NULL or 0 when out of range or from a daemon before
 * 0.9. Since 0.9.
 */
size_t airlock_result_advisory_count(const struct airlock_result *res);
const char *airlock_result_advisory(const struct airlock_result *res, size_t i);

/* A list of names a profile carries (airlockd.conf(5), [profile NAME]). */
enum airlock_profile_list {
	AIRLOCK_PROFILE_MOUNTS = 0,	     /* mounts: every run of the profile gets them */
	AIRLOCK_PROFILE_ALLOW_MOUNTS = 1,    /* allow_mounts: a request may add them */
	AIRLOCK_PROFILE_BLOCKED_IMPORTS = 2, /* blocked_imports: what the advisory import
					      * check reports (never a boundary) */
	AIRLOCK_PROFILE_HIDDEN_PATHS = 3,    /* hidden_paths: paths of the sandbox that
					      * are not there in its runs (the kernel) */
};

/* How many names profile i's list has, and name k; 0 or NULL when out of
 * range (or from a daemon before 0.9). It belongs to info. Since 0.9. */
size_t airlock_info_profile_list_count(const struct airlock_info *info, size_t i,
				       enum airlock_profile_list list);
const char *airlock_info_profile_list(const struct airlock_info *info, size_t i,
				      enum airlock_profile_list list, size_t k);

/* The named read-only mounts the caller's profiles and the runtimes give or
 * allow: mount i's name (what a request names), its target (where a run sees
 * it) and whether it is a package tree (exec allowed; else noexec). The host
 * source is not told. NULL, false or 0 when out of range. Since 0.9. */
size_t airlock_info_mount_count(const struct airlock_info *info);
const char *airlock_info_mount_name(const struct airlock_info *info, size_t i);
const char *airlock_info_mount_target(const struct airlock_info *info, size_t i);
bool airlock_info_mount_is_package(const struct airlock_info *info, size_t i);

/*
 * The daemon's capacity (airlockd.conf(5)): how much work may be done at
 * once, and how many interpreter sessions may live. A run slot is held by a
 * run from its start to its end and by a cell while it runs; an interpreter
 * between cells holds none, only a place among the live interpreters.
 */
enum airlock_capacity {
	AIRLOCK_CAPACITY_RUNS = 0,		   /* max_runs: run slots, all users */
	AIRLOCK_CAPACITY_RUNS_PER_UID = 1,	   /* max_runs_per_uid (root: not bound) */
	AIRLOCK_CAPACITY_INTERPRETERS = 2,	   /* max_interpreters: all users */
	AIRLOCK_CAPACITY_INTERPRETERS_PER_UID = 3, /* max_interpreters_per_uid */
};

/* One figure of the daemon's capacity; 0 when the daemon did not say (one
 * before 0.9) or what is out of range. Since 0.9. */
uint32_t airlock_info_capacity(const struct airlock_info *info, enum airlock_capacity what);

#ifdef __cplusplus
}
#endif

#endif
