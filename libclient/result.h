/* result.h: result and info objects and their conversion from decoded
 * messages (internal). */
#ifndef AIRLOCK_RESULT_H
#define AIRLOCK_RESULT_H

#include "proto.h"

#include "airlock.h"

#include <stdbool.h>
#include <stdint.h>

/* Bytes owned by a library object: a heap copy, or a read-only mapping of a
 * sealed memfd. */
struct result_bytes {
	void *data;
	size_t len;
	bool mapped;
};

/* Take a decoded blob into *ret so that it outlives the message (a memfd is
 * mapped again, inline bytes are copied). Returns 0 or -errno. */
int result_bytes_take(const struct proto_blob *blob, struct result_bytes *ret);

/* Release what b holds; b is empty afterwards. */
void result_bytes_clear(struct result_bytes *b);

/* Hand out b's bytes, never a NULL pointer. Returns 0 or -EINVAL for NULL
 * out parameters. */
int result_bytes_get(const struct result_bytes *b, const void **ret_data, size_t *ret_len);

/* The objects, shared by result.c (getters, frees) and result_proto.c
 * (conversion from decoded messages). */
struct result_stream {
	struct result_bytes data;
	uint64_t total;
	bool truncated;
};

struct result_artifact {
	char *name;
	uint64_t size;
	bool truncated;
	struct result_bytes data;
};

/* result.network, copied out of the message. */
struct result_network {
	uint64_t figures[4]; /* enum airlock_net_figure */
	char contacted[PROTO_NET_REPORT_MAX][PROTO_NET_TARGET_MAX + 1];
	size_t ncontacted;
	struct {
		char host[PROTO_NET_TARGET_MAX + 1];
		char reason[PROTO_NET_REASON_MAX + 1];
	} refusals[PROTO_NET_REPORT_MAX];
	size_t nrefusals;
};

struct airlock_result {
	enum airlock_outcome outcome;
	int exit_code;
	int signal;
	uint64_t wall_ms;
	uint64_t cpu_ms;
	uint64_t memory_peak_bytes;
	uint64_t queued_ms;
	struct result_stream out[2];
	struct result_artifact *artifacts;
	size_t nartifacts;
	uint64_t artifacts_omitted;
	uint64_t artifacts_omitted_bytes;
	char *error;
	struct result_network *network; /* NULL: not a network = proxy run */
	struct result_tool_call *tool_calls;
	size_t ntool_calls;
	uint64_t tool_calls_omitted;
	uint64_t cell;			 /* 0: not a cell */
	enum airlock_cell_state state;	 /* a cell's */
	char *value;			 /* a cell's trailing expression, or NULL */
	struct result_artifact *display; /* name: the mime type */
	size_t ndisplay;
	uint32_t value_display; /* bit i: display[i] is the value's */
	char (*advisories)[PROTO_ADVISORY_MAX + 1];
	size_t nadvisories;
	/* A cell's: its interpreter ended during it; its exception, or NULL. */
	bool restarted;
	char *ename, *evalue, *traceback;
};

/* One call of the run's tools, from result.tool_calls. */
struct result_tool_call {
	char name[PROTO_TOOL_NAME_MAX + 1];
	enum proto_tool_outcome outcome;
	uint64_t ms;
};

/* One profile the caller may use, from info_ok.profiles. */
struct info_profile {
	char name[PROTO_PROFILE_MAX + 1];
	bool is_default;
	bool proxy;   /* network = proxy */
	char **allow; /* allow_hosts, then allow_private_hosts */
	size_t nallow, npublic;
	uint64_t limits[PROTO_LIMIT_COUNT_];
	uint64_t ceilings[PROTO_LIMIT_COUNT_];
	bool no_file_write; /* "file_write": false */
	bool no_subprocess; /* "subprocess": false */
	/* enum airlock_profile_list: mounts, allow_mounts, blocked_imports, hidden_paths */
	char **lists[AIRLOCK_PROFILE_HIDDEN_PATHS + 1];
	size_t nlists[AIRLOCK_PROFILE_HIDDEN_PATHS + 1];
};

/* One mount of info_ok.mounts. */
struct info_mount {
	char name[PROTO_MOUNT_MAX + 1];
	char target[PROTO_NAME_MAX + 1];
	bool package;
};

struct airlock_info {
	char *daemon;
	uint32_t version;
	uint32_t uid;
	char **runtimes;
	size_t nruntimes;
	uint64_t defaults[PROTO_LIMIT_COUNT_];
	uint64_t ceilings[PROTO_LIMIT_COUNT_];
	char *resource_control; /* NULL: not said */
	char **packages;	/* per runtime: "numpy,pandas", or NULL: not said */
	struct info_profile *profiles;
	size_t nprofiles;
	struct info_mount *mounts;
	size_t nmounts;
	uint32_t capacity[4]; /* by enum airlock_capacity; 0: not said */
};

/* Free n artifacts (or display items) and the array. */
void result_artifacts_free(struct result_artifact *a, size_t n);

/* Copy a decoded result into a new airlock_result that does not depend on
 * the message (memfd payloads are mapped, not copied). Returns 0 or -errno. */
int result_from_proto(const struct proto_result *pr, struct airlock_result **ret);

/* Copy a decoded info reply into a new airlock_info. Returns 0 or -errno. */
int result_info_from_proto(const struct proto_info *pi, struct airlock_info **ret);

#endif
