/*
 * proto.h: the Airlock wire protocol, declared in one place.
 *
 * docs/protocol.md is the contract; this header and proto.c are its only
 * implementation, shared by airlockd and libairlock.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socket. One packet carries exactly one
 * msgpack map with string keys. Payloads larger than PROTO_INLINE_MAX travel
 * as sealed memfds attached with SCM_RIGHTS and referenced from the map by
 * index ("blob" below).
 */
#ifndef AIRLOCK_PROTO_H
#define AIRLOCK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1

/* Size bounds. Every one of them is checked before anything is allocated. */
#define PROTO_MSG_MAX (64 * 1024)     /* one packet, bytes */
#define PROTO_INLINE_MAX (16 * 1024)  /* one inline bin, bytes */
#define PROTO_FDS_MAX 64	      /* fds attached to one packet */
#define PROTO_BLOB_MAX (256ULL << 20) /* one memfd blob, bytes */
#define PROTO_STR_MAX 4096	      /* any string, bytes */
#define PROTO_NAME_MAX 255	      /* a file name (relative path), bytes */
#define PROTO_RUNTIME_MAX 32	      /* runtime name, bytes */
#define PROTO_PROFILE_MAX 32	      /* profile name, bytes */
#define PROTO_PROFILES_MAX 32	      /* profiles in an info reply */
#define PROTO_MOUNT_MAX 32	      /* [mount] name, bytes */
#define PROTO_MOUNTS_MAX 16	      /* mounts a run request names */
#define PROTO_ARGV_MAX 256	      /* argv entries */
#define PROTO_ENV_MAX 128	      /* env entries */
#define PROTO_ENV_KEY_MAX 128	      /* env key, bytes */
#define PROTO_FILES_MAX 64	      /* input files per run in "files" */
#define PROTO_RUN_FILES_MAX 4096      /* input files per run, "files" and "file_bundle" together */
#define PROTO_ARTIFACTS_MAX                                                                        \
	60			     /* artifacts per result: each may be a memfd, and a           \
				      * packet has 64 fds (two for stdout, stderr) */
#define PROTO_VALUE_MAX (16 * 1024)  /* result.value: a cell's repr, bytes */
#define PROTO_ENAME_MAX 256	     /* result.ename: a cell's exception name, bytes */
#define PROTO_EVALUE_MAX 4096	     /* result.evalue, bytes */
#define PROTO_TRACEBACK_MAX 16384    /* result.traceback, bytes */
#define PROTO_DISPLAY_MAX 8	     /* result.display entries (fds, with the artifacts) */
#define PROTO_RUNTIMES_MAX 32	     /* runtimes in an info reply */
#define PROTO_PACKAGES_MAX 16	     /* packages per runtime in info_ok.runtime_packages */
#define PROTO_PACKAGE_NAME_MAX 64    /* a package name there, bytes */
#define PROTO_MSG_PRINTABLE_MAX 1024 /* error message, bytes */
#define PROTO_BLOCKED_IMPORTS_MAX 32 /* blocked_imports of a profile */
#define PROTO_MODULE_NAME_MAX 64     /* one of them: a dotted Python module name, bytes */
#define PROTO_ADVISORIES_MAX 16	     /* result.advisories entries */
#define PROTO_ADVISORY_MAX 255	     /* one of them, bytes */
#define PROTO_INFO_MOUNTS_MAX 32     /* info_ok.mounts entries */
#define PROTO_KEYS_MAX 64	     /* entries in any map but env */

/*
 * Message types. Values are part of the wire format: never renumber; a retired
 * value stays in this list marked "do not reuse".
 */
enum proto_type {
	/* client -> daemon: {type, id, version:uint, client?:str} */
	PROTO_HELLO = 1,
	/* daemon -> client: {type, id, version:uint, daemon:str} */
	PROTO_HELLO_OK = 2,
	/* client -> daemon: {type, id} */
	PROTO_PING = 3,
	/* daemon -> client: {type, id} */
	PROTO_PONG = 4,
	/* client -> daemon: {type, id} */
	PROTO_INFO = 5,
	/* daemon -> client: {type, id, daemon:str, version:uint, uid:uint,
	 *   runtimes:[str], defaults:limits, ceilings:limits,
	 *   profiles?:[{name:str, default:bool, limits:limits, ceilings:limits,
	 *   file_write?:bool, subprocess?:bool, hidden_paths?:[str], mounts?:[str],
	 *   allow_mounts?:[str], blocked_imports?:[str]}],
	 *   mounts?:[{name:str, target:str, package:bool}]} */
	PROTO_INFO_OK = 6,
	/* client -> daemon: {type, id, runtime:str, code?:blob, argv?:[str],
	 *   env?:{str:str}, stdin?:blob, files?:[{name:str, data:blob}],
	 *   file_bundle?:blob (common/bundle.h; daemon feature "file_bundle"),
	 *   limits?:limits, profile?:str} */
	PROTO_RUN = 7,
	/* daemon -> client: the run's result, see struct proto_result */
	PROTO_RESULT = 8,
	/* daemon -> client: {type, id, code:str, message:str} */
	PROTO_ERROR = 9,
	/* client -> daemon: {type, id, request?:uint, run?:uint}: cancel one of
	 *   the caller's runs, named by the id of a run request on this
	 *   connection or by its daemon-wide run id (from ps); exactly one. */
	PROTO_CANCEL = 10,
	/* daemon -> client: {type, id} */
	PROTO_CANCEL_OK = 11,
	/* client -> daemon: {type, id} */
	PROTO_PS = 12,
	/* daemon -> client: {type, id, runs:[{run:uint, uid:uint, pid:int,
	 *   runtime:str, state:str ("queued" | "running"), elapsed_ms:uint}]} */
	PROTO_PS_OK = 13,
	/* client -> daemon: {type, id, workspace_bytes?:uint, idle_timeout_ms?:uint,
	 *   lifetime_ms?:uint, limits?:limits (defaults for the session's runs),
	 *   profile?:str (fixed for the session's runs), archive?:blob (a ustar
	 *   archive the workspace starts as; docs/design-sessions.md)} */
	PROTO_SESSION_OPEN = 14,
	/* daemon -> client: {type, id, session:str} (an unguessable id) */
	PROTO_SESSION_OK = 15,
	/* client -> daemon: {type, id, session:str} */
	PROTO_SESSION_CLOSE = 16,
	/* daemon -> client: {type, id}: a request without data succeeded */
	PROTO_OK = 17,
	/* client -> daemon: {type, id} */
	PROTO_SESSION_LIST = 18,
	/* daemon -> client: {type, id, sessions:[{session:str, age_ms:uint,
	 *   idle_ms:uint, runs:uint, state:str ("idle" | "running")}]} */
	PROTO_SESSION_LIST_OK = 19,
	/* client -> daemon: {type, id, session:str, path:str, data:blob} */
	PROTO_FILE_WRITE = 20,
	/* client -> daemon: {type, id, session:str, path:str} */
	PROTO_FILE_READ = 21,
	/* daemon -> client: {type, id, data:blob, size:uint, truncated:bool} */
	PROTO_FILE_DATA = 22,
	/* client -> daemon: {type, id, session:str, path?:str ("" = the workspace)} */
	PROTO_FILE_LIST = 23,
	/* daemon -> client: {type, id, entries:[{name:str, kind:str ("file" | "dir"
	 *   | "link" | "other"), size:uint, mtime_ms:uint}], truncated:bool} */
	PROTO_FILE_LIST_OK = 24,
	/* client -> daemon: {type, id, session:str, path:str} */
	PROTO_FILE_DELETE = 25,
	/* daemon -> client: {type, id (the run's request id), stream:str ("stdout"
	 *   | "stderr"), data:bin (<= PROTO_INLINE_MAX)}: live output of a run that
	 *   asked for stream; every event comes before the run's result */
	PROTO_STREAM = 26,
	/* daemon -> client: {type, id (the run's request id), call:uint (1, 2, ...
	 *   per run), tool:str (a declared name), args:blob (JSON object text,
	 *   <= PROTO_TOOL_BYTES_MAX)}: the code called a tool; answer with
	 *   tool_reply. Sent only to a client whose hello named "tools". */
	PROTO_TOOL_CALL = 27,
	/* client -> daemon: {type, id (the run's request id), call:uint, ok:bool,
	 *   result?:blob (JSON text, present iff ok), error?:str (present iff not
	 *   ok), refused?:bool}: the answer to a tool_call; gets no reply. */
	PROTO_TOOL_REPLY = 28,
	/* client -> daemon: {type, id, session:str}: the processes an
	 *   interpreter session opened with background keeps (besides its
	 *   interpreter); docs/design-interpreters.md §2.7 */
	PROTO_SESSION_PS = 29,
	/* daemon -> client: {type, id, processes:[{pid:uint (in the sandbox),
	 *   name:str (its comm, <= 15 B), cpu_ms:uint, memory_bytes:uint (its
	 *   resident set)}] (<= PROTO_PROCESSES_MAX), truncated:bool} */
	PROTO_SESSION_PS_OK = 30,
	/* client -> daemon: {type, id, session:str, pid:uint}: SIGKILL one of
	 *   them; answered ok, or not_found */
	PROTO_PROCESS_STOP = 31,
	/* client -> daemon: {type, id, session:str, lifetime_ms:uint (>= 1)}:
	 *   the session's lease ends lifetime_ms from now (at most the
	 *   daemon's lifetime_ms_max); answered ok */
	PROTO_SESSION_EXTEND = 32,
	/* client -> daemon: {type, id, session:str}: the session's workspace as
	 *   a ustar archive (docs/design-sessions.md); answered file_data */
	PROTO_SESSION_SAVE = 33,
};

/* Stable error codes. The wire carries the name (error_code_name()). */
enum proto_error {
	PROTO_ERR_NONE = 0,
	PROTO_ERR_BAD_REQUEST = 1,
	PROTO_ERR_UNSUPPORTED_VERSION = 2,
	PROTO_ERR_UNAUTHORIZED = 3,
	PROTO_ERR_TOO_LARGE = 4,
	PROTO_ERR_BUSY = 5,
	PROTO_ERR_UNKNOWN_RUNTIME = 6,
	PROTO_ERR_NOT_FOUND = 7,
	PROTO_ERR_INTERNAL = 8,
	PROTO_ERR_COUNT_
};

/* Run outcomes. The wire carries the name (proto_outcome_name()). */
enum proto_outcome {
	PROTO_OUTCOME_EXITED = 0,
	PROTO_OUTCOME_SIGNALED = 1,
	PROTO_OUTCOME_WALL_LIMIT = 2,
	PROTO_OUTCOME_CPU_LIMIT = 3,
	PROTO_OUTCOME_MEMORY_LIMIT = 4,
	PROTO_OUTCOME_ERROR = 5,
	PROTO_OUTCOME_CANCELLED = 6, /* cancelled by its owner or a stopping daemon */
	/* Stopped at the process limit (cgroup2 pids.max). Sent only to a
	 * client whose hello named PROTO_FEATURE_PROCESS_LIMIT. */
	PROTO_OUTCOME_PROCESS_LIMIT = 7,
	PROTO_OUTCOME_COUNT_
};

/*
 * Limits, all unsigned. In a request 0 means "the configured default"; the
 * daemon refuses a value above its ceiling with bad_request naming it.
 */
enum proto_limit {
	PROTO_LIMIT_WALL_MS = 0,
	PROTO_LIMIT_CPU_MS,
	PROTO_LIMIT_MEMORY_BYTES,
	PROTO_LIMIT_PROCESSES,
	PROTO_LIMIT_OPEN_FILES,
	PROTO_LIMIT_FILE_SIZE_BYTES,
	PROTO_LIMIT_OUTPUT_BYTES,
	PROTO_LIMIT_WORKSPACE_BYTES,
	PROTO_LIMIT_TMP_BYTES,
	PROTO_LIMIT_ARTIFACTS,
	PROTO_LIMIT_ARTIFACT_BYTES,
	PROTO_LIMIT_COUNT_
};

struct proto_limits {
	uint64_t v[PROTO_LIMIT_COUNT_];
};

/*
 * A byte payload: inline (fd == -1, data points into the message) or a sealed
 * memfd (fd >= 0, data is a read-only mapping of it). Decoding verifies the
 * seals and the size; proto_msg_free() unmaps and closes. Encoders send a
 * blob whose present is false as empty (an optional one not at all), whatever
 * fd holds, so a zeroed struct is safe to encode.
 */
struct proto_blob {
	const uint8_t *data;
	size_t len;
	int fd;
	bool present;
};

/* Strings are NUL-terminated copies, valid until proto_msg_free(). */
struct proto_env {
	const char *key;
	const char *value;
};

struct proto_file {
	const char *name;
	struct proto_blob data;
};

struct proto_artifact {
	const char *name;
	uint64_t size;	/* size of the file in the workspace */
	bool truncated; /* data holds fewer than size bytes */
	struct proto_blob data;
};

/*
 * Additions within protocol version 1 that a peer must opt into, named in
 * hello (what the client understands) and hello_ok (what the daemon has).
 * Unknown names are ignored. docs/protocol.md, "Features".
 */
#define PROTO_FEATURES_MAX 16
#define PROTO_FEATURE_NAME_MAX 32
#define PROTO_FEATURE_PROCESS_LIMIT "process_limit" /* outcome process_limit */
#define PROTO_FEATURE_NETWORK "network"		    /* result.network */
#define PROTO_FEATURE_FILE_BUNDLE "file_bundle"	    /* run.file_bundle (daemon) */
#define PROTO_FEATURE_TOOLS "tools" /* run.tools, tool_call, tool_reply, result.tool_calls */

struct proto_hello {
	uint32_t version;
	const char *peer; /* "client" or "daemon" field; may be NULL */
	const char *features[PROTO_FEATURES_MAX];
	size_t nfeatures;
};

/* Does a decoded hello name this feature? */
bool proto_hello_has_feature(const struct proto_hello *h, const char *name);

/* info_ok.runtime_packages: which of the data-science packages a runtime sees. */
struct proto_runtime_packages {
	const char *runtime;
	const char *packages[PROTO_PACKAGES_MAX];
	size_t npackages;
};

/* Network egress (docs/design-egress.md). */
#define PROTO_ALLOW_MAX 64	  /* allow-list entries of one kind per profile in info_ok */
#define PROTO_ALLOW_ENTRY_MAX 300 /* one entry as listed ("*.example.com:80,443"), bytes */
#define PROTO_NET_REPORT_MAX 32	  /* contacted and refusals in result.network */
#define PROTO_NET_TARGET_MAX 261  /* "host:port", bytes */
#define PROTO_NET_REASON_MAX 23	  /* a refusal's reason ("not_listed"), bytes */

/* A profile's hidden_paths in info_ok (docs/design-profiles.md, 3.4). */
#define PROTO_HIDDEN_MAX 16	  /* paths per profile */
#define PROTO_HIDDEN_PATH_MAX 255 /* one absolute path, bytes */

/* info_ok.profiles: one profile the caller may use. limits are its defaults,
 * ceilings what a request may ask at most (equal for a [profile] section). */
struct proto_profile {
	const char *name;
	bool is_default; /* "default" on the wire: what a request naming none gets */
	struct proto_limits limits;
	struct proto_limits ceilings;
	/* Optional: "none" or "proxy" (NULL: absent, a daemon before egress:
	 * none); with proxy, the entries of allow_hosts and allow_private_hosts. */
	const char *network;
	const char **allow_hosts;
	size_t nallow_hosts;
	const char **allow_private_hosts;
	size_t nallow_private_hosts;
	/* The policy switches, stored negated: "file_write" or "subprocess"
	 * false on the wire; absent (a daemon before the switch) reads as
	 * allowed. */
	bool no_file_write;
	bool no_subprocess;
	/* Optional: the paths absent in its runs (absent on the wire: none). */
	const char **hidden_paths;
	size_t nhidden_paths;
	/* Optional (since daemon 0.8): the [mount] names every run of the
	 * profile gets and those a request may add; the Python module names
	 * its advisory import check looks for (never a boundary). */
	const char **mounts;
	size_t nmounts;
	const char **allow_mounts;
	size_t nallow_mounts;
	const char **blocked_imports;
	size_t nblocked_imports;
};

/* info_ok.mounts: a [mount] the caller's profiles give or allow. The host
 * source is the administrator's and is not sent (docs/security.md). */
struct proto_mount_info {
	const char *name;
	const char *target; /* where a run sees it, an absolute path */
	bool package;	    /* a package tree: exec allowed */
};

/* result.network: a refusal of the egress proxy. host is "host:port" as the
 * code asked ("" when it was refused before a request was read). */
struct proto_refusal {
	const char *host;
	const char *reason;
};

/* result.network: what a network = proxy run did through the proxy. */
struct proto_network {
	uint64_t bytes_up, bytes_down; /* code -> destinations, destinations -> code */
	uint64_t connections, refused; /* accepted from the code; of them refused */
	const char *contacted[PROTO_NET_REPORT_MAX]; /* "host:port", first seen */
	size_t ncontacted;
	struct proto_refusal *refusals; /* distinct (host, reason), first seen */
	size_t nrefusals;
};

struct proto_info {
	const char *daemon;
	uint32_t version;
	uint32_t uid;
	/* What enforces memory, processes and cpu: "cgroup2", "cgroup1" or
	 * "rlimit" (optional on the wire; NULL when absent). */
	const char *resource_control;
	const char *runtimes[PROTO_RUNTIMES_MAX];
	size_t nruntimes;
	struct proto_limits defaults;
	struct proto_limits ceilings;
	/* Optional: one entry per runtime whose packages were looked for (an
	 * entry may list none); absent on the wire when there is none. */
	struct proto_runtime_packages runtime_packages[PROTO_RUNTIMES_MAX];
	size_t nruntime_packages;
	/* Optional: the profiles the caller may use (absent: none listed, a
	 * daemon before profiles). */
	struct proto_profile *profiles;
	size_t nprofiles;
	/* Optional: the mounts named by those profiles (absent: none, or a
	 * daemon before 0.8). */
	struct proto_mount_info *mounts;
	size_t nmounts;
	/* Optional (0: absent, a daemon before issue 28): the daemon's
	 * capacity: run slots in all and per uid (work being done: runs and
	 * running cells), live interpreters in all and per uid. */
	uint32_t max_runs, max_runs_per_uid;
	uint32_t max_interpreters, max_interpreters_per_uid;
};

/*
 * The tool bridge (docs/design-tool-bridge.md): tools a run declares, the
 * calls its code makes, and what the result lists of them.
 */
#define PROTO_TOOLS_MAX 32		 /* tools declared by one run */
#define PROTO_TOOL_NAME_MAX 64		 /* [A-Za-z_][A-Za-z0-9_]*, bytes */
#define PROTO_TOOL_DESC_MAX 1024	 /* a tool's description, bytes */
#define PROTO_TOOL_SCHEMA_MAX (8 * 1024) /* its argument schema (a JSON object), bytes */
#define PROTO_TOOL_BYTES_MAX (64 * 1024) /* one call's args or one answer's result, bytes */
#define PROTO_TOOL_ERROR_MAX 1024	 /* a failed call's message, bytes */
#define PROTO_TOOL_CALLS_LISTED_MAX 256	 /* calls listed in a result */

struct proto_tool {
	const char *name;
	const char *description; /* NULL: none */
	const char *schema;	 /* NULL: none; else a JSON object's text */
};

/* How one call ended, in a result's tool_calls. The wire carries the name. */
enum proto_tool_outcome {
	PROTO_TOOL_OK = 0,	   /* answered with a result */
	PROTO_TOOL_REFUSED = 1,	   /* the client's approval hook said no */
	PROTO_TOOL_ERROR = 2,	   /* the client answered an error (the tool failed) */
	PROTO_TOOL_UNDECLARED = 3, /* not a tool the run declared: never sent to the client */
	PROTO_TOOL_MALFORMED = 4,  /* the line, or the client's result, was not valid */
	PROTO_TOOL_TOO_LARGE = 5,  /* the line, or the result, was longer than allowed */
	PROTO_TOOL_LIMIT = 6,	   /* past the run's number of calls */
	PROTO_TOOL_TIMEOUT = 7,	   /* the client did not answer in time */
	PROTO_TOOL_ABANDONED = 8,  /* the run, or the caller's connection, ended first */
	PROTO_TOOL_OUTCOME_COUNT_
};

struct proto_tool_record {
	const char *tool; /* the name asked for ("" when it was not a valid name) */
	enum proto_tool_outcome outcome;
	uint64_t ms;	       /* from the call's line to its answer */
	uint64_t args_bytes;   /* bytes of its args */
	uint64_t result_bytes; /* bytes of the result or error sent back */
};

struct proto_tool_call {
	uint32_t call;
	const char *tool;
	struct proto_blob args;
};

struct proto_tool_reply {
	uint32_t call;
	bool ok;
	struct proto_blob result; /* ok: JSON text */
	const char *error;	  /* not ok: a message */
	bool refused;		  /* not ok because the approval hook said no */
};

struct proto_run {
	const char *runtime;
	struct proto_blob code;
	const char **argv;
	size_t argc;
	struct proto_env *env;
	size_t nenv;
	struct proto_blob stdin_data;
	struct proto_file *files;
	size_t nfiles;
	struct proto_blob file_bundle; /* many files in one blob, common/bundle.h */
	struct proto_limits limits;
	const char *session; /* NULL: a one-shot run */
	bool stream;	     /* send stdout/stderr as PROTO_STREAM events */
	const char *profile; /* NULL: the caller's default (a session's: its own) */
	const char *mounts[PROTO_MOUNTS_MAX]; /* [mount] names asked for, beyond the profile's */
	size_t nmounts;
	struct proto_tool *tools; /* needs the "tools" feature */
	size_t ntools;
	bool cell;	  /* a cell of the session's interpreter (interpreter sessions only) */
	bool figures_svg; /* a cell's matplotlib figures as SVG, not PNG (cells only) */
	bool ipython;	  /* run the cell through IPython when the runtime has it (cells only) */
};

#define PROTO_SESSION_ID_LEN 32 /* hex characters */
#define PROTO_SESSIONS_MAX 64	/* sessions in a list reply */
#define PROTO_PATH_MAX 1024	/* a path in the workspace, bytes */
#define PROTO_LIST_MAX 1000	/* entries in a file list reply */

struct proto_session_open {
	uint64_t workspace_bytes; /* 0 = default */
	uint64_t idle_timeout_ms; /* 0 = default */
	uint64_t lifetime_ms;	  /* 0 = default */
	struct proto_limits limits;
	const char *profile;	   /* NULL: the caller's default */
	const char *interpreter;   /* a runtime with interpreter sessions: cells; NULL: none */
	bool detached;		   /* it does not end with its owner's last connection */
	bool background;	   /* keep what cells start between cells (interpreter only) */
	struct proto_blob archive; /* present: the workspace starts as this ustar archive */
};

struct proto_session_ref {
	const char *session;
};

struct proto_session_extend {
	const char *session;
	uint64_t lifetime_ms;
};

struct proto_session_entry {
	const char *session;
	uint64_t age_ms;
	uint64_t idle_ms;
	uint64_t runs;
	const char *state;
	const char *interpreter; /* an interpreter session's runtime; NULL: none */
	bool background;	 /* opened with background: its processes outlive cells */
};

struct proto_session_list {
	struct proto_session_entry *sessions;
	size_t nsessions;
	uint64_t more; /* the caller's sessions not listed (past the cap); 0: none */
};

#define PROTO_PROCESSES_MAX 64	  /* processes in a session_ps_ok */
#define PROTO_PROCESS_NAME_MAX 15 /* a comm: TASK_COMM_LEN - 1 */

struct proto_process {
	uint32_t pid; /* in the sandbox's pid namespace */
	const char *name;
	uint64_t cpu_ms;
	uint64_t memory_bytes;
};

struct proto_process_list {
	struct proto_process *processes;
	size_t nprocesses;
	bool truncated; /* more than PROTO_PROCESSES_MAX */
};

struct proto_process_stop {
	const char *session;
	uint32_t pid;
};

struct proto_file_op {
	const char *session;
	const char *path;	/* "" allowed only for list */
	struct proto_blob data; /* write only */
};

struct proto_file_data {
	struct proto_blob data;
	uint64_t size;
	bool truncated;
};

struct proto_file_entry {
	const char *name;
	const char *kind;
	uint64_t size;
	uint64_t mtime_ms;
};

struct proto_file_list {
	struct proto_file_entry *entries;
	size_t nentries;
	bool truncated; /* the directory holds more than the entries given */
};

struct proto_stream {
	const char *stream; /* "stdout" or "stderr" */
	struct proto_blob data;
};

struct proto_stream_out {
	struct proto_blob data; /* the first bytes, at most the output limit */
	uint64_t total;		/* bytes the code wrote in all */
	bool truncated;
};

struct proto_result {
	enum proto_outcome outcome;
	int32_t exit_code; /* valid when outcome == EXITED */
	int32_t signal;	   /* valid when outcome == SIGNALED, else 0 */
	uint64_t wall_ms;
	uint64_t cpu_ms;
	uint64_t memory_peak_bytes; /* 0 when not measurable */
	uint64_t queued_ms;
	struct proto_stream_out out[2]; /* 0 = stdout, 1 = stderr */
	struct proto_artifact *artifacts;
	size_t nartifacts;
	const char *error; /* outcome == ERROR: what failed, naming the step */
	/* Files the code created or changed that are not in artifacts (past the
	 * artifacts limit, or not copyable), and the sum of their sizes.
	 * Optional on the wire (a daemon before 0.5 does not send them): 0. */
	uint64_t artifacts_omitted;
	uint64_t artifacts_omitted_bytes;
	/* A network = proxy run's figures, sent to a client whose hello named
	 * PROTO_FEATURE_NETWORK (NULL: none, or not sent). */
	const struct proto_network *network;
	/* The tool calls the code made, in order (at most
	 * PROTO_TOOL_CALLS_LISTED_MAX; the rest counted in tool_calls_omitted).
	 * Optional on the wire, sent only to a "tools" client of a run with tools. */
	struct proto_tool_record *tool_calls;
	size_t ntool_calls;
	uint64_t tool_calls_omitted;
	/* A cell's (docs/design-interpreters.md §2): its number (0: not a
	 * cell, and none of these is on the wire), whether the interpreter's
	 * state was kept ("kept") or the interpreter was restarted empty
	 * ("lost"), the repr of a trailing expression (NULL: none), and rich
	 * outputs, each shaped like an artifact whose name is its mime type. */
	uint64_t cell;
	const char *state;
	/* the interpreter ended during this cell (design-jupyter.md §5.1) */
	bool restarted;
	/* the exception it raised (NULL: none; design-jupyter.md §6.2): name, str(), traceback */
	const char *ename;
	const char *evalue;
	const char *traceback;
	const char *value;
	struct proto_artifact *display;
	size_t ndisplay;
	/* Bit i: display[i] is one of the value's representations (its
	 * execute_result bundle, design-jupyter.md §2). Optional: 0. */
	uint32_t value_display;
	/* What the daemon's advisory checks found (the profile's
	 * blocked_imports), never a refusal: at most PROTO_ADVISORIES_MAX of
	 * at most PROTO_ADVISORY_MAX bytes. Optional on the wire. */
	const char *advisories[PROTO_ADVISORIES_MAX];
	size_t nadvisories;
};

struct proto_err {
	enum proto_error code;
	const char *message;
};

struct proto_cancel {
	uint32_t request; /* 0 = not given */
	uint32_t run;	  /* 0 = not given */
};

#define PROTO_PS_MAX 256 /* runs in a ps reply */

struct proto_ps_entry {
	uint32_t run;
	uint32_t uid;
	int32_t pid;
	const char *runtime;
	const char *state;
	uint64_t elapsed_ms;
};

struct proto_ps {
	struct proto_ps_entry *runs;
	size_t nruns;
	uint64_t more; /* runs the caller may see not listed (past the cap); 0: none */
};

/* One decoded message. Free with proto_msg_free(). */
struct proto_msg {
	enum proto_type type;
	uint32_t id;
	union {
		struct proto_hello hello;
		struct proto_info info;
		struct proto_run run;
		struct proto_result result;
		struct proto_err error;
		struct proto_cancel cancel;
		struct proto_ps ps;
		struct proto_session_open session_open;
		struct proto_session_ref session; /* session_ok, session_close, session_save */
		struct proto_session_extend session_extend;
		struct proto_session_list session_list;
		struct proto_session_ref session_ps; /* session_ps */
		struct proto_process_list processes; /* session_ps_ok */
		struct proto_process_stop process_stop;
		struct proto_file_op file; /* file_write/read/list/delete */
		struct proto_file_data file_data;
		struct proto_file_list file_list;
		struct proto_stream stream;
		struct proto_tool_call tool_call;
		struct proto_tool_reply tool_reply;
	} u;
	void *priv_; /* decoder state: the msgpack zone, mappings, fds */
};

/*
 * Decode one packet. fds are the descriptors that came with it; on success
 * and on failure the decoder owns them (referenced ones move into the
 * message, the rest are closed). On failure returns -EBADMSG or -E2BIG and
 * writes a reply code and a human reason (into ret_why, at most why_len).
 * ret_id gets the request id when it could be read, else 0.
 * -ENOMEM (code internal) is possible when memory or a mapping fails, and
 * -EINVAL when ret_msg is NULL. ret_code, ret_id and ret_why may be NULL.
 * On failure *ret_msg is not touched. An id of 0 is accepted only in an
 * error message (a reply to a request whose id could not be read).
 * Blob fds stay owned by the message: dup them to keep them longer.
 */
int proto_decode(const void *buf, size_t len, int *fds, size_t nfds, struct proto_msg *ret_msg,
		 enum proto_error *ret_code, uint32_t *ret_id, char *ret_why, size_t why_len);
void proto_msg_free(struct proto_msg *msg);

/*
 * An encoded packet: bytes plus the fds to attach. Blobs larger than
 * PROTO_INLINE_MAX (or with fd >= 0) are attached as fds; the encoder dups
 * caller fds, so the caller keeps ownership of what it passed in.
 */
struct proto_out {
	char *buf;
	size_t len;
	int fds[PROTO_FDS_MAX];
	size_t nfds;
	uint32_t id; /* the message's id: a reply's request (an error may answer it instead) */
};
void proto_out_free(struct proto_out *out);

int proto_encode_hello(uint32_t id, enum proto_type type, const struct proto_hello *h,
		       struct proto_out *ret);
int proto_encode_simple(uint32_t id, enum proto_type type, struct proto_out *ret);
int proto_encode_info(uint32_t id, const struct proto_info *info, struct proto_out *ret);
int proto_encode_run(uint32_t id, const struct proto_run *run, struct proto_out *ret);
int proto_encode_result(uint32_t id, const struct proto_result *res, struct proto_out *ret);
int proto_encode_cancel(uint32_t id, const struct proto_cancel *c, struct proto_out *ret);
int proto_encode_ps(uint32_t id, const struct proto_ps *ps, struct proto_out *ret);
int proto_encode_session_open(uint32_t id, const struct proto_session_open *o,
			      struct proto_out *ret);
/* session_ok, session_close and session_save: {session} */
int proto_encode_session(uint32_t id, enum proto_type type, const char *session,
			 struct proto_out *ret);
int proto_encode_session_extend(uint32_t id, const struct proto_session_extend *x,
				struct proto_out *ret);
int proto_encode_session_list(uint32_t id, const struct proto_session_list *l,
			      struct proto_out *ret);
int proto_encode_session_ps_ok(uint32_t id, const struct proto_process_list *l,
			       struct proto_out *ret);
int proto_encode_process_stop(uint32_t id, const struct proto_process_stop *s,
			      struct proto_out *ret);
/* file_write (with data), file_read, file_list, file_delete */
int proto_encode_file_op(uint32_t id, enum proto_type type, const struct proto_file_op *op,
			 struct proto_out *ret);
int proto_encode_file_data(uint32_t id, const struct proto_file_data *d, struct proto_out *ret);
int proto_encode_file_list(uint32_t id, const struct proto_file_list *l, struct proto_out *ret);
int proto_encode_stream(uint32_t id, const struct proto_stream *s, struct proto_out *ret);
int proto_encode_tool_call(uint32_t id, const struct proto_tool_call *c, struct proto_out *ret);
int proto_encode_tool_reply(uint32_t id, const struct proto_tool_reply *r, struct proto_out *ret);
int proto_encode_error(uint32_t id, enum proto_error code, const char *message,
		       struct proto_out *ret);

const char *proto_type_name(enum proto_type type);
const char *proto_error_name(enum proto_error code);
int proto_error_from_name(const char *name, enum proto_error *ret);
const char *proto_error_message(enum proto_error code); /* a default human message */
const char *proto_outcome_name(enum proto_outcome outcome);
int proto_outcome_from_name(const char *name, enum proto_outcome *ret);
const char *proto_limit_name(enum proto_limit limit);
const char *proto_tool_outcome_name(enum proto_tool_outcome outcome);
int proto_tool_outcome_from_name(const char *name, enum proto_tool_outcome *ret);

/* Send and receive one packet with its fds (MSG_CMSG_CLOEXEC on receive). */
int proto_send(int sock, const struct proto_out *out);

#endif
