/* proto.c: the single implementation of the wire protocol (see docs/protocol.md). */
#include "proto.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdpass.h"
#include "jsonscan.h"
#include "limit.h"
#include "memfd.h"
#include "nametab.h"
#include "rules.h"

static const char *const proto_type_names[] = {
	[PROTO_HELLO] = "hello",
	[PROTO_HELLO_OK] = "hello_ok",
	[PROTO_PING] = "ping",
	[PROTO_PONG] = "pong",
	[PROTO_INFO] = "info",
	[PROTO_INFO_OK] = "info_ok",
	[PROTO_RUN] = "run",
	[PROTO_RESULT] = "result",
	[PROTO_ERROR] = "error",
	[PROTO_CANCEL] = "cancel",
	[PROTO_CANCEL_OK] = "cancel_ok",
	[PROTO_PS] = "ps",
	[PROTO_PS_OK] = "ps_ok",
	[PROTO_SESSION_OPEN] = "session_open",
	[PROTO_SESSION_OK] = "session_ok",
	[PROTO_SESSION_CLOSE] = "session_close",
	[PROTO_OK] = "ok",
	[PROTO_SESSION_LIST] = "session_list",
	[PROTO_SESSION_LIST_OK] = "session_list_ok",
	[PROTO_FILE_WRITE] = "file_write",
	[PROTO_FILE_READ] = "file_read",
	[PROTO_FILE_DATA] = "file_data",
	[PROTO_FILE_LIST] = "file_list",
	[PROTO_FILE_LIST_OK] = "file_list_ok",
	[PROTO_FILE_DELETE] = "file_delete",
	[PROTO_STREAM] = "stream",
	[PROTO_TOOL_CALL] = "tool_call",
	[PROTO_TOOL_REPLY] = "tool_reply",
};

/* The closed sets of names some string fields take (NULL-terminated). */
static const char *const proto_file_kinds[] = {"file", "dir", "link", "other", NULL};
static const char *const proto_session_states[] = {"idle", "running", NULL};
static const char *const proto_stream_names[] = {"stdout", "stderr", NULL};
static const char *const proto_netmodes[] = {"none", "proxy", NULL};
static const char *const proto_cell_states[] = {"kept", "lost", NULL};

static const char *const proto_error_names[PROTO_ERR_COUNT_] = {
	[PROTO_ERR_NONE] = "none",
	[PROTO_ERR_BAD_REQUEST] = "bad_request",
	[PROTO_ERR_UNSUPPORTED_VERSION] = "unsupported_version",
	[PROTO_ERR_UNAUTHORIZED] = "unauthorized",
	[PROTO_ERR_TOO_LARGE] = "too_large",
	[PROTO_ERR_BUSY] = "busy",
	[PROTO_ERR_UNKNOWN_RUNTIME] = "unknown_runtime",
	[PROTO_ERR_NOT_FOUND] = "not_found",
	[PROTO_ERR_INTERNAL] = "internal",
};

static const char *const proto_error_messages[PROTO_ERR_COUNT_] = {
	[PROTO_ERR_NONE] = "no error",
	[PROTO_ERR_BAD_REQUEST] = "the request is malformed or asks for something not allowed",
	[PROTO_ERR_UNSUPPORTED_VERSION] = "the daemon does not speak this protocol version",
	[PROTO_ERR_UNAUTHORIZED] = "this user may not use the daemon",
	[PROTO_ERR_TOO_LARGE] = "the message or a field is larger than allowed",
	[PROTO_ERR_BUSY] = "the daemon is at its limit; try again later",
	[PROTO_ERR_UNKNOWN_RUNTIME] = "no such runtime",
	[PROTO_ERR_NOT_FOUND] = "no such object",
	[PROTO_ERR_INTERNAL] = "the daemon failed internally",
};

static const char *const proto_outcome_names[PROTO_OUTCOME_COUNT_] = {
	[PROTO_OUTCOME_EXITED] = "exited",
	[PROTO_OUTCOME_SIGNALED] = "signaled",
	[PROTO_OUTCOME_WALL_LIMIT] = "wall_limit",
	[PROTO_OUTCOME_CPU_LIMIT] = "cpu_limit",
	[PROTO_OUTCOME_MEMORY_LIMIT] = "memory_limit",
	[PROTO_OUTCOME_ERROR] = "error",
	[PROTO_OUTCOME_CANCELLED] = "cancelled",
	[PROTO_OUTCOME_PROCESS_LIMIT] = "process_limit",
};

const char *
proto_type_name(enum proto_type type)
{
	return nametab_name(proto_type_names, type, "unknown");
}

const char *
proto_error_name(enum proto_error code)
{
	return nametab_name(proto_error_names, code, "internal");
}

const char *
proto_error_message(enum proto_error code)
{
	if ((size_t)code >= PROTO_ERR_COUNT_)
		return proto_error_messages[PROTO_ERR_INTERNAL];
	return proto_error_messages[code];
}

int
proto_error_from_name(const char *name, enum proto_error *ret)
{
	/* from 1: "none" is no error a peer may name */
	int i = nametab_find(proto_error_names, PROTO_ERR_COUNT_, 1, name);

	if (i < 0)
		return i;
	*ret = (enum proto_error)i;
	return 0;
}

bool
proto_hello_has_feature(const struct proto_hello *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->nfeatures && i < PROTO_FEATURES_MAX; i++)
		if (h->features[i] != NULL && strcmp(h->features[i], name) == 0)
			return true;
	return false;
}

const char *
proto_outcome_name(enum proto_outcome outcome)
{
	return nametab_name(proto_outcome_names, outcome, "error");
}

int
proto_outcome_from_name(const char *name, enum proto_outcome *ret)
{
	int i = nametab_find(proto_outcome_names, PROTO_OUTCOME_COUNT_, 0, name);

	if (i < 0)
		return i;
	*ret = (enum proto_outcome)i;
	return 0;
}

static const char *const proto_tool_outcome_names[PROTO_TOOL_OUTCOME_COUNT_] = {
	[PROTO_TOOL_OK] = "ok",
	[PROTO_TOOL_REFUSED] = "refused",
	[PROTO_TOOL_ERROR] = "error",
	[PROTO_TOOL_UNDECLARED] = "undeclared",
	[PROTO_TOOL_MALFORMED] = "malformed",
	[PROTO_TOOL_TOO_LARGE] = "too_large",
	[PROTO_TOOL_LIMIT] = "limit",
	[PROTO_TOOL_TIMEOUT] = "timeout",
	[PROTO_TOOL_ABANDONED] = "abandoned",
};

const char *
proto_tool_outcome_name(enum proto_tool_outcome outcome)
{
	return nametab_name(proto_tool_outcome_names, outcome, "error");
}

int
proto_tool_outcome_from_name(const char *name, enum proto_tool_outcome *ret)
{
	int i = nametab_find(proto_tool_outcome_names, PROTO_TOOL_OUTCOME_COUNT_, 0, name);

	if (i < 0)
		return i;
	*ret = (enum proto_tool_outcome)i;
	return 0;
}

const char *
proto_limit_name(enum proto_limit limit)
{
	if ((size_t)limit >= PROTO_LIMIT_COUNT_)
		return "unknown";
	return limit_table[limit].name;
}

/* CODEC: implemented below by the protocol module (encode/decode). */

/* Nesting the pre-scan accepts; version 1 needs 5 levels. */
#define PROTO_DEPTH_MAX 16
#define PROTO_BLOB_MEMFD_NAME "airlock-blob"

/* The entry of a NULL-terminated name set equal to s, or NULL. */
static const char *
proto_name_in(const char *const *names, const char *s)
{
	size_t i;

	for (i = 0; s != NULL && names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0)
			return names[i];
	return NULL;
}

/* ---------------------------------------------------------------- decode */

struct proto_mapping {
	void *addr;
	size_t len;
};

/* What a decoded message owns: the zone, the fds that came with it, mappings. */
struct proto_priv {
	msgpack_zone *zone;
	size_t nfds;
	int fds[PROTO_FDS_MAX];
	bool used[PROTO_FDS_MAX];
	size_t nmaps;
	struct proto_mapping maps[PROTO_FDS_MAX];
};

/* Decoder state: where the failure is reported and the field path so far. */
struct proto_dec {
	struct proto_priv *priv;
	enum proto_error code;
	char *why;
	size_t why_len;
	size_t pathlen;
	char path[160];
};

enum dec_kind {
	DEC_U32,
	DEC_U64,
	DEC_I32,
	DEC_BOOL,
	DEC_BOOL_NOT, /* a bool stored negated: absent reads as true */
	DEC_STR,
	DEC_BLOB,
	DEC_STRV,	/* [str] into a NULL-terminated zone array + count */
	DEC_STRA,	/* [str] into a fixed array + count */
	DEC_ENV,	/* {str:str} */
	DEC_RTPKGS,	/* {str:[str]}: info_ok.runtime_packages */
	DEC_FILES,	/* [{name, data}] */
	DEC_ARTIFACTS,	/* [{name, size, truncated, data}] */
	DEC_PSRUNS,	/* [{run, uid, pid, runtime, state, elapsed_ms}] */
	DEC_SESSIONS,	/* [{session, age_ms, idle_ms, runs, state}] */
	DEC_ENTRIES,	/* [{name, kind, size, mtime_ms}] */
	DEC_LIMITS,	/* limits; unknown names ignored */
	DEC_LIMITS_REQ, /* limits in a request; unknown names refused */
	DEC_OUTCOME,
	DEC_ERRCODE,
	DEC_SESSION_ID,	   /* str: exactly PROTO_SESSION_ID_LEN of [0-9a-f] */
	DEC_INLINE,	   /* an inline bin only, never a memfd reference */
	DEC_FILE_KIND,	   /* str, one of proto_file_kinds */
	DEC_SESSION_STATE, /* str, one of proto_session_states */
	DEC_STREAM_NAME,   /* str, one of proto_stream_names */
	DEC_PROFILE,	   /* str: a profile name (rules_profile_name_check) */
	DEC_PROFILES,	   /* [{name, default, limits, ceilings, ..., file_write?, subprocess?}] */
	DEC_NETWORK,	   /* {bytes_up, ...}: result.network, into a zone struct */
	DEC_REFUSALS,	   /* [{host, reason}]: result.network.refusals */
	DEC_NETMODE,	   /* str, "none" or "proxy" */
	DEC_MOUNTS,	   /* [str] of [mount] names (rules_mount_name_check), fixed array */
	DEC_MOUNTV,	   /* the same into a zone array + count */
	DEC_MODULEV,	   /* [str] of Python module names (rules_module_name_check), zone */
	DEC_MOUNT_INFOS,   /* [{name, target, package}]: info_ok.mounts */
	DEC_MOUNT_NAME,	   /* str: a [mount] name (rules_mount_name_check) */
	DEC_TOOLS,	   /* [{name, description?, schema?}]: run.tools */
	DEC_TOOL_RECORDS,  /* [{tool, outcome, ms, args_bytes, result_bytes}]: result.tool_calls */
	DEC_TOOL_NAME,	   /* str: rules_tool_name_check */
	DEC_TOOL_OUTCOME,  /* str, one of proto_tool_outcome_names */
	DEC_CELL_STATE,	   /* str, one of proto_cell_states */
};

#define DF_REQUIRED 0x1u
#define DF_NONEMPTY 0x2u

/* One known key of a map: how to check it and where its value goes. */
struct dec_field {
	const char *name;
	enum dec_kind kind;
	unsigned flags;
	size_t off;	 /* value's offset in the target struct */
	size_t cnt_off;	 /* arrays: the count's offset */
	size_t max;	 /* strings: bytes; arrays and maps: entries */
	size_t elem_max; /* string arrays: bytes per entry */
};

/* A memfd reference: {"fd": index, "size": bytes}. */
struct dec_blobref {
	uint32_t fd;
	uint64_t size;
};

#define U(s, f) offsetof(struct s, f)

static const struct dec_field dec_hello_fields[] = {
	{"version", DEC_U32, DF_REQUIRED, U(proto_hello, version), 0, 0, 0},
	{"client", DEC_STR, 0, U(proto_hello, peer), 0, PROTO_NAME_MAX, 0},
	{"features", DEC_STRA, 0, U(proto_hello, features), U(proto_hello, nfeatures),
	 PROTO_FEATURES_MAX, PROTO_FEATURE_NAME_MAX},
};

static const struct dec_field dec_hello_ok_fields[] = {
	{"version", DEC_U32, DF_REQUIRED, U(proto_hello, version), 0, 0, 0},
	{"daemon", DEC_STR, DF_REQUIRED, U(proto_hello, peer), 0, PROTO_NAME_MAX, 0},
	{"features", DEC_STRA, 0, U(proto_hello, features), U(proto_hello, nfeatures),
	 PROTO_FEATURES_MAX, PROTO_FEATURE_NAME_MAX},
};

static const struct dec_field dec_info_ok_fields[] = {
	{"daemon", DEC_STR, DF_REQUIRED, U(proto_info, daemon), 0, PROTO_NAME_MAX, 0},
	{"version", DEC_U32, DF_REQUIRED, U(proto_info, version), 0, 0, 0},
	{"uid", DEC_U32, DF_REQUIRED, U(proto_info, uid), 0, 0, 0},
	{"runtimes", DEC_STRA, DF_REQUIRED | DF_NONEMPTY, U(proto_info, runtimes),
	 U(proto_info, nruntimes), PROTO_RUNTIMES_MAX, PROTO_RUNTIME_MAX},
	{"defaults", DEC_LIMITS, DF_REQUIRED, U(proto_info, defaults), 0, 0, 0},
	{"ceilings", DEC_LIMITS, DF_REQUIRED, U(proto_info, ceilings), 0, 0, 0},
	{"resource_control", DEC_STR, DF_NONEMPTY, U(proto_info, resource_control), 0,
	 PROTO_FEATURE_NAME_MAX, 0},
	{"runtime_packages", DEC_RTPKGS, 0, U(proto_info, runtime_packages),
	 U(proto_info, nruntime_packages), PROTO_RUNTIMES_MAX, PROTO_PACKAGE_NAME_MAX},
	{"profiles", DEC_PROFILES, 0, U(proto_info, profiles), U(proto_info, nprofiles),
	 PROTO_PROFILES_MAX, 0},
	{"mounts", DEC_MOUNT_INFOS, 0, U(proto_info, mounts), U(proto_info, nmounts),
	 PROTO_INFO_MOUNTS_MAX, 0},
	{"max_runs", DEC_U32, 0, U(proto_info, max_runs), 0, 0, 0},
	{"max_runs_per_uid", DEC_U32, 0, U(proto_info, max_runs_per_uid), 0, 0, 0},
	{"max_interpreters", DEC_U32, 0, U(proto_info, max_interpreters), 0, 0, 0},
	{"max_interpreters_per_uid", DEC_U32, 0, U(proto_info, max_interpreters_per_uid), 0, 0, 0},
};

static const struct dec_field dec_mount_info_fields[] = {
	{"name", DEC_MOUNT_NAME, DF_REQUIRED, U(proto_mount_info, name), 0, 0, 0},
	{"target", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_mount_info, target), 0,
	 PROTO_NAME_MAX, 0},
	{"package", DEC_BOOL, DF_REQUIRED, U(proto_mount_info, package), 0, 0, 0},
};

static const struct dec_field dec_profile_fields[] = {
	{"name", DEC_PROFILE, DF_REQUIRED, U(proto_profile, name), 0, 0, 0},
	{"default", DEC_BOOL, DF_REQUIRED, U(proto_profile, is_default), 0, 0, 0},
	{"limits", DEC_LIMITS, DF_REQUIRED, U(proto_profile, limits), 0, 0, 0},
	{"ceilings", DEC_LIMITS, DF_REQUIRED, U(proto_profile, ceilings), 0, 0, 0},
	{"network", DEC_NETMODE, 0, U(proto_profile, network), 0, 0, 0},
	{"allow_hosts", DEC_STRV, 0, U(proto_profile, allow_hosts), U(proto_profile, nallow_hosts),
	 PROTO_ALLOW_MAX, PROTO_ALLOW_ENTRY_MAX},
	{"allow_private_hosts", DEC_STRV, 0, U(proto_profile, allow_private_hosts),
	 U(proto_profile, nallow_private_hosts), PROTO_ALLOW_MAX, PROTO_ALLOW_ENTRY_MAX},
	{"file_write", DEC_BOOL_NOT, 0, U(proto_profile, no_file_write), 0, 0, 0},
	{"subprocess", DEC_BOOL_NOT, 0, U(proto_profile, no_subprocess), 0, 0, 0},
	{"hidden_paths", DEC_STRV, 0, U(proto_profile, hidden_paths),
	 U(proto_profile, nhidden_paths), PROTO_HIDDEN_MAX, PROTO_HIDDEN_PATH_MAX},
	{"mounts", DEC_MOUNTV, 0, U(proto_profile, mounts), U(proto_profile, nmounts),
	 PROTO_INFO_MOUNTS_MAX, PROTO_MOUNT_MAX},
	{"allow_mounts", DEC_MOUNTV, 0, U(proto_profile, allow_mounts),
	 U(proto_profile, nallow_mounts), PROTO_INFO_MOUNTS_MAX, PROTO_MOUNT_MAX},
	{"blocked_imports", DEC_MODULEV, 0, U(proto_profile, blocked_imports),
	 U(proto_profile, nblocked_imports), PROTO_BLOCKED_IMPORTS_MAX, PROTO_MODULE_NAME_MAX},
};

static const struct dec_field dec_network_fields[] = {
	{"bytes_up", DEC_U64, DF_REQUIRED, U(proto_network, bytes_up), 0, 0, 0},
	{"bytes_down", DEC_U64, DF_REQUIRED, U(proto_network, bytes_down), 0, 0, 0},
	{"connections", DEC_U64, DF_REQUIRED, U(proto_network, connections), 0, 0, 0},
	{"refused", DEC_U64, DF_REQUIRED, U(proto_network, refused), 0, 0, 0},
	{"contacted", DEC_STRA, DF_REQUIRED, U(proto_network, contacted),
	 U(proto_network, ncontacted), PROTO_NET_REPORT_MAX, PROTO_NET_TARGET_MAX},
	{"refusals", DEC_REFUSALS, DF_REQUIRED, U(proto_network, refusals),
	 U(proto_network, nrefusals), PROTO_NET_REPORT_MAX, 0},
};

static const struct dec_field dec_refusal_fields[] = {
	{"host", DEC_STR, DF_REQUIRED, U(proto_refusal, host), 0, PROTO_NET_TARGET_MAX, 0},
	{"reason", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_refusal, reason), 0,
	 PROTO_NET_REASON_MAX, 0},
};

static const struct dec_field dec_run_fields[] = {
	{"runtime", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_run, runtime), 0, PROTO_RUNTIME_MAX,
	 0},
	{"code", DEC_BLOB, 0, U(proto_run, code), 0, 0, 0},
	{"argv", DEC_STRV, 0, U(proto_run, argv), U(proto_run, argc), PROTO_ARGV_MAX,
	 PROTO_STR_MAX},
	{"env", DEC_ENV, 0, U(proto_run, env), U(proto_run, nenv), PROTO_ENV_MAX, 0},
	{"stdin", DEC_BLOB, 0, U(proto_run, stdin_data), 0, 0, 0},
	{"files", DEC_FILES, 0, U(proto_run, files), U(proto_run, nfiles), PROTO_FILES_MAX, 0},
	{"file_bundle", DEC_BLOB, 0, U(proto_run, file_bundle), 0, 0, 0},
	{"limits", DEC_LIMITS_REQ, 0, U(proto_run, limits), 0, 0, 0},
	{"session", DEC_SESSION_ID, 0, U(proto_run, session), 0, 0, 0},
	{"stream", DEC_BOOL, 0, U(proto_run, stream), 0, 0, 0},
	{"profile", DEC_PROFILE, 0, U(proto_run, profile), 0, 0, 0},
	{"mounts", DEC_MOUNTS, 0, U(proto_run, mounts), U(proto_run, nmounts), PROTO_MOUNTS_MAX,
	 PROTO_MOUNT_MAX},
	{"tools", DEC_TOOLS, DF_NONEMPTY, U(proto_run, tools), U(proto_run, ntools),
	 PROTO_TOOLS_MAX, 0},
	{"cell", DEC_BOOL, 0, U(proto_run, cell), 0, 0, 0},
};

static const struct dec_field dec_tool_fields[] = {
	{"name", DEC_TOOL_NAME, DF_REQUIRED, U(proto_tool, name), 0, 0, 0},
	{"description", DEC_STR, 0, U(proto_tool, description), 0, PROTO_TOOL_DESC_MAX, 0},
	{"schema", DEC_STR, 0, U(proto_tool, schema), 0, PROTO_TOOL_SCHEMA_MAX, 0},
};

static const struct dec_field dec_tool_record_fields[] = {
	{"tool", DEC_STR, DF_REQUIRED, U(proto_tool_record, tool), 0, PROTO_TOOL_NAME_MAX, 0},
	{"outcome", DEC_TOOL_OUTCOME, DF_REQUIRED, U(proto_tool_record, outcome), 0, 0, 0},
	{"ms", DEC_U64, DF_REQUIRED, U(proto_tool_record, ms), 0, 0, 0},
	{"args_bytes", DEC_U64, DF_REQUIRED, U(proto_tool_record, args_bytes), 0, 0, 0},
	{"result_bytes", DEC_U64, DF_REQUIRED, U(proto_tool_record, result_bytes), 0, 0, 0},
};

static const struct dec_field dec_tool_call_fields[] = {
	{"call", DEC_U32, DF_REQUIRED, U(proto_tool_call, call), 0, 0, 0},
	{"tool", DEC_TOOL_NAME, DF_REQUIRED, U(proto_tool_call, tool), 0, 0, 0},
	{"args", DEC_BLOB, DF_REQUIRED, U(proto_tool_call, args), 0, 0, 0},
};

static const struct dec_field dec_tool_reply_fields[] = {
	{"call", DEC_U32, DF_REQUIRED, U(proto_tool_reply, call), 0, 0, 0},
	{"ok", DEC_BOOL, DF_REQUIRED, U(proto_tool_reply, ok), 0, 0, 0},
	{"result", DEC_BLOB, 0, U(proto_tool_reply, result), 0, 0, 0},
	{"error", DEC_STR, 0, U(proto_tool_reply, error), 0, PROTO_TOOL_ERROR_MAX, 0},
	{"refused", DEC_BOOL, 0, U(proto_tool_reply, refused), 0, 0, 0},
};

/* Indices into dec_result_fields used by the cross-field checks. */
enum { DEC_RES_EXIT_CODE = 1, DEC_RES_SIGNAL = 2, DEC_RES_ERROR = 3 };

static const struct dec_field dec_result_fields[] = {
	{"outcome", DEC_OUTCOME, DF_REQUIRED, U(proto_result, outcome), 0, 0, 0},
	[DEC_RES_EXIT_CODE] = {"exit_code", DEC_I32, 0, U(proto_result, exit_code), 0, 0, 0},
	[DEC_RES_SIGNAL] = {"signal", DEC_I32, 0, U(proto_result, signal), 0, 0, 0},
	[DEC_RES_ERROR] = {"error", DEC_STR, 0, U(proto_result, error), 0, PROTO_STR_MAX, 0},
	{"wall_ms", DEC_U64, DF_REQUIRED, U(proto_result, wall_ms), 0, 0, 0},
	{"cpu_ms", DEC_U64, DF_REQUIRED, U(proto_result, cpu_ms), 0, 0, 0},
	{"memory_peak_bytes", DEC_U64, DF_REQUIRED, U(proto_result, memory_peak_bytes), 0, 0, 0},
	{"queued_ms", DEC_U64, DF_REQUIRED, U(proto_result, queued_ms), 0, 0, 0},
	{"stdout", DEC_BLOB, DF_REQUIRED, U(proto_result, out[0].data), 0, 0, 0},
	{"stdout_bytes", DEC_U64, DF_REQUIRED, U(proto_result, out[0].total), 0, 0, 0},
	{"stdout_truncated", DEC_BOOL, DF_REQUIRED, U(proto_result, out[0].truncated), 0, 0, 0},
	{"stderr", DEC_BLOB, DF_REQUIRED, U(proto_result, out[1].data), 0, 0, 0},
	{"stderr_bytes", DEC_U64, DF_REQUIRED, U(proto_result, out[1].total), 0, 0, 0},
	{"stderr_truncated", DEC_BOOL, DF_REQUIRED, U(proto_result, out[1].truncated), 0, 0, 0},
	{"artifacts", DEC_ARTIFACTS, DF_REQUIRED, U(proto_result, artifacts),
	 U(proto_result, nartifacts), PROTO_ARTIFACTS_MAX, 0},
	{"artifacts_omitted", DEC_U64, 0, U(proto_result, artifacts_omitted), 0, 0, 0},
	{"artifacts_omitted_bytes", DEC_U64, 0, U(proto_result, artifacts_omitted_bytes), 0, 0, 0},
	{"network", DEC_NETWORK, 0, U(proto_result, network), 0, 0, 0},
	{"tool_calls", DEC_TOOL_RECORDS, 0, U(proto_result, tool_calls),
	 U(proto_result, ntool_calls), PROTO_TOOL_CALLS_LISTED_MAX, 0},
	{"tool_calls_omitted", DEC_U64, 0, U(proto_result, tool_calls_omitted), 0, 0, 0},
	{"cell", DEC_U64, 0, U(proto_result, cell), 0, 0, 0},
	{"state", DEC_CELL_STATE, 0, U(proto_result, state), 0, 0, 0},
	{"value", DEC_STR, 0, U(proto_result, value), 0, PROTO_VALUE_MAX, 0},
	{"display", DEC_ARTIFACTS, 0, U(proto_result, display), U(proto_result, ndisplay),
	 PROTO_DISPLAY_MAX, 0},
	{"advisories", DEC_STRA, 0, U(proto_result, advisories), U(proto_result, nadvisories),
	 PROTO_ADVISORIES_MAX, PROTO_ADVISORY_MAX},
};

static const struct dec_field dec_error_fields[] = {
	{"code", DEC_ERRCODE, DF_REQUIRED, U(proto_err, code), 0, 0, 0},
	{"message", DEC_STR, DF_REQUIRED, U(proto_err, message), 0, PROTO_MSG_PRINTABLE_MAX, 0},
};

static const struct dec_field dec_file_fields[] = {
	{"name", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_file, name), 0, PROTO_NAME_MAX, 0},
	{"data", DEC_BLOB, DF_REQUIRED, U(proto_file, data), 0, 0, 0},
};

static const struct dec_field dec_artifact_fields[] = {
	{"name", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_artifact, name), 0, PROTO_NAME_MAX, 0},
	{"size", DEC_U64, DF_REQUIRED, U(proto_artifact, size), 0, 0, 0},
	{"truncated", DEC_BOOL, DF_REQUIRED, U(proto_artifact, truncated), 0, 0, 0},
	{"data", DEC_BLOB, DF_REQUIRED, U(proto_artifact, data), 0, 0, 0},
};

static const struct dec_field dec_cancel_fields[] = {
	{"request", DEC_U32, 0, U(proto_cancel, request), 0, 0, 0},
	{"run", DEC_U32, 0, U(proto_cancel, run), 0, 0, 0},
};

static const struct dec_field dec_ps_ok_fields[] = {
	{"runs", DEC_PSRUNS, DF_REQUIRED, U(proto_ps, runs), U(proto_ps, nruns), PROTO_PS_MAX, 0},
};

static const struct dec_field dec_ps_entry_fields[] = {
	{"run", DEC_U32, DF_REQUIRED, U(proto_ps_entry, run), 0, 0, 0},
	{"uid", DEC_U32, DF_REQUIRED, U(proto_ps_entry, uid), 0, 0, 0},
	{"pid", DEC_I32, DF_REQUIRED, U(proto_ps_entry, pid), 0, 0, 0},
	{"runtime", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_ps_entry, runtime), 0,
	 PROTO_RUNTIME_MAX, 0},
	{"state", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_ps_entry, state), 0, PROTO_NAME_MAX,
	 0},
	{"elapsed_ms", DEC_U64, DF_REQUIRED, U(proto_ps_entry, elapsed_ms), 0, 0, 0},
};

static const struct dec_field dec_session_open_fields[] = {
	{"workspace_bytes", DEC_U64, 0, U(proto_session_open, workspace_bytes), 0, 0, 0},
	{"idle_timeout_ms", DEC_U64, 0, U(proto_session_open, idle_timeout_ms), 0, 0, 0},
	{"lifetime_ms", DEC_U64, 0, U(proto_session_open, lifetime_ms), 0, 0, 0},
	{"limits", DEC_LIMITS_REQ, 0, U(proto_session_open, limits), 0, 0, 0},
	{"profile", DEC_PROFILE, 0, U(proto_session_open, profile), 0, 0, 0},
	{"interpreter", DEC_STR, DF_NONEMPTY, U(proto_session_open, interpreter), 0,
	 PROTO_RUNTIME_MAX, 0},
};

/* session_ok, session_close */
static const struct dec_field dec_session_ref_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_session_ref, session), 0, 0, 0},
};

static const struct dec_field dec_session_list_ok_fields[] = {
	{"sessions", DEC_SESSIONS, DF_REQUIRED, U(proto_session_list, sessions),
	 U(proto_session_list, nsessions), PROTO_SESSIONS_MAX, 0},
};

static const struct dec_field dec_session_entry_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_session_entry, session), 0, 0, 0},
	{"age_ms", DEC_U64, DF_REQUIRED, U(proto_session_entry, age_ms), 0, 0, 0},
	{"idle_ms", DEC_U64, DF_REQUIRED, U(proto_session_entry, idle_ms), 0, 0, 0},
	{"runs", DEC_U64, DF_REQUIRED, U(proto_session_entry, runs), 0, 0, 0},
	{"state", DEC_SESSION_STATE, DF_REQUIRED, U(proto_session_entry, state), 0, 0, 0},
	{"interpreter", DEC_STR, DF_NONEMPTY, U(proto_session_entry, interpreter), 0,
	 PROTO_RUNTIME_MAX, 0},
};

static const struct dec_field dec_file_write_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_file_op, session), 0, 0, 0},
	{"path", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_file_op, path), 0, PROTO_PATH_MAX, 0},
	{"data", DEC_BLOB, DF_REQUIRED, U(proto_file_op, data), 0, 0, 0},
};

/* file_read, file_delete */
static const struct dec_field dec_file_path_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_file_op, session), 0, 0, 0},
	{"path", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_file_op, path), 0, PROTO_PATH_MAX, 0},
};

/* file_list: path optional and may be empty (the workspace itself) */
static const struct dec_field dec_file_list_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_file_op, session), 0, 0, 0},
	{"path", DEC_STR, 0, U(proto_file_op, path), 0, PROTO_PATH_MAX, 0},
};

static const struct dec_field dec_file_data_fields[] = {
	{"data", DEC_BLOB, DF_REQUIRED, U(proto_file_data, data), 0, 0, 0},
	{"size", DEC_U64, DF_REQUIRED, U(proto_file_data, size), 0, 0, 0},
	{"truncated", DEC_BOOL, DF_REQUIRED, U(proto_file_data, truncated), 0, 0, 0},
};

static const struct dec_field dec_file_list_ok_fields[] = {
	{"entries", DEC_ENTRIES, DF_REQUIRED, U(proto_file_list, entries),
	 U(proto_file_list, nentries), PROTO_LIST_MAX, 0},
	{"truncated", DEC_BOOL, DF_REQUIRED, U(proto_file_list, truncated), 0, 0, 0},
};

static const struct dec_field dec_file_entry_fields[] = {
	{"name", DEC_STR, DF_REQUIRED | DF_NONEMPTY, U(proto_file_entry, name), 0, PROTO_NAME_MAX,
	 0},
	{"kind", DEC_FILE_KIND, DF_REQUIRED, U(proto_file_entry, kind), 0, 0, 0},
	{"size", DEC_U64, DF_REQUIRED, U(proto_file_entry, size), 0, 0, 0},
	{"mtime_ms", DEC_U64, DF_REQUIRED, U(proto_file_entry, mtime_ms), 0, 0, 0},
};

static const struct dec_field dec_stream_fields[] = {
	{"stream", DEC_STREAM_NAME, DF_REQUIRED, U(proto_stream, stream), 0, 0, 0},
	{"data", DEC_INLINE, DF_REQUIRED | DF_NONEMPTY, U(proto_stream, data), 0, 0, 0},
};

static const struct dec_field dec_blobref_fields[] = {
	{"fd", DEC_U32, DF_REQUIRED, U(dec_blobref, fd), 0, 0, 0},
	{"size", DEC_U64, DF_REQUIRED, U(dec_blobref, size), 0, 0, 0},
};

#undef U
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The fields of each message type; a type without fields has an empty schema. */
static const struct dec_schema {
	const struct dec_field *fields;
	size_t nfields;
} dec_schemas[] = {
	[PROTO_HELLO] = {dec_hello_fields, NELEM(dec_hello_fields)},
	[PROTO_HELLO_OK] = {dec_hello_ok_fields, NELEM(dec_hello_ok_fields)},
	[PROTO_PING] = {NULL, 0},
	[PROTO_PONG] = {NULL, 0},
	[PROTO_INFO] = {NULL, 0},
	[PROTO_INFO_OK] = {dec_info_ok_fields, NELEM(dec_info_ok_fields)},
	[PROTO_RUN] = {dec_run_fields, NELEM(dec_run_fields)},
	[PROTO_RESULT] = {dec_result_fields, NELEM(dec_result_fields)},
	[PROTO_ERROR] = {dec_error_fields, NELEM(dec_error_fields)},
	[PROTO_CANCEL] = {dec_cancel_fields, NELEM(dec_cancel_fields)},
	[PROTO_CANCEL_OK] = {NULL, 0},
	[PROTO_PS] = {NULL, 0},
	[PROTO_PS_OK] = {dec_ps_ok_fields, NELEM(dec_ps_ok_fields)},
	[PROTO_SESSION_OPEN] = {dec_session_open_fields, NELEM(dec_session_open_fields)},
	[PROTO_SESSION_OK] = {dec_session_ref_fields, NELEM(dec_session_ref_fields)},
	[PROTO_SESSION_CLOSE] = {dec_session_ref_fields, NELEM(dec_session_ref_fields)},
	[PROTO_OK] = {NULL, 0},
	[PROTO_SESSION_LIST] = {NULL, 0},
	[PROTO_SESSION_LIST_OK] = {dec_session_list_ok_fields, NELEM(dec_session_list_ok_fields)},
	[PROTO_FILE_WRITE] = {dec_file_write_fields, NELEM(dec_file_write_fields)},
	[PROTO_FILE_READ] = {dec_file_path_fields, NELEM(dec_file_path_fields)},
	[PROTO_FILE_DATA] = {dec_file_data_fields, NELEM(dec_file_data_fields)},
	[PROTO_FILE_LIST] = {dec_file_list_fields, NELEM(dec_file_list_fields)},
	[PROTO_FILE_LIST_OK] = {dec_file_list_ok_fields, NELEM(dec_file_list_ok_fields)},
	[PROTO_FILE_DELETE] = {dec_file_path_fields, NELEM(dec_file_path_fields)},
	[PROTO_STREAM] = {dec_stream_fields, NELEM(dec_stream_fields)},
	[PROTO_TOOL_CALL] = {dec_tool_call_fields, NELEM(dec_tool_call_fields)},
	[PROTO_TOOL_REPLY] = {dec_tool_reply_fields, NELEM(dec_tool_reply_fields)},
};

/* Every message type has a name and a schema, and nothing else does. */
_Static_assert(NELEM(dec_schemas) == NELEM(proto_type_names), "a type lacks a schema or name");

#define DEC_NO_BLOB SIZE_MAX

/* The element of each array-of-maps kind: its size, its fields, its blob. */
static const struct dec_elem {
	size_t size;
	const struct dec_field *fields;
	size_t nfields;
	size_t blob_off; /* a blob to give fd -1 before decoding, or DEC_NO_BLOB */
} dec_elems[] = {
	[DEC_FILES] = {sizeof(struct proto_file), dec_file_fields, NELEM(dec_file_fields),
		       offsetof(struct proto_file, data)},
	[DEC_ARTIFACTS] = {sizeof(struct proto_artifact), dec_artifact_fields,
			   NELEM(dec_artifact_fields), offsetof(struct proto_artifact, data)},
	[DEC_PSRUNS] = {sizeof(struct proto_ps_entry), dec_ps_entry_fields,
			NELEM(dec_ps_entry_fields), DEC_NO_BLOB},
	[DEC_SESSIONS] = {sizeof(struct proto_session_entry), dec_session_entry_fields,
			  NELEM(dec_session_entry_fields), DEC_NO_BLOB},
	[DEC_ENTRIES] = {sizeof(struct proto_file_entry), dec_file_entry_fields,
			 NELEM(dec_file_entry_fields), DEC_NO_BLOB},
	[DEC_PROFILES] = {sizeof(struct proto_profile), dec_profile_fields,
			  NELEM(dec_profile_fields), DEC_NO_BLOB},
	[DEC_REFUSALS] = {sizeof(struct proto_refusal), dec_refusal_fields,
			  NELEM(dec_refusal_fields), DEC_NO_BLOB},
	[DEC_MOUNT_INFOS] = {sizeof(struct proto_mount_info), dec_mount_info_fields,
			     NELEM(dec_mount_info_fields), DEC_NO_BLOB},
	[DEC_TOOLS] = {sizeof(struct proto_tool), dec_tool_fields, NELEM(dec_tool_fields),
		       DEC_NO_BLOB},
	[DEC_TOOL_RECORDS] = {sizeof(struct proto_tool_record), dec_tool_record_fields,
			      NELEM(dec_tool_record_fields), DEC_NO_BLOB},
};

static int dec_value(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f,
		     void *base);

/* Record the failure with the current path; returns the matching -errno. */
__attribute__((format(printf, 3, 4))) static int
dec_fail(struct proto_dec *d, enum proto_error code, const char *fmt, ...)
{
	va_list ap;
	int n;

	d->code = code;
	if (d->why != NULL && d->why_len > 0) {
		n = snprintf(d->why, d->why_len, "%s: ", d->path);
		if (n >= 0 && (size_t)n < d->why_len) {
			va_start(ap, fmt);
			vsnprintf(d->why + n, d->why_len - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	if (code == PROTO_ERR_TOO_LARGE)
		return -E2BIG;
	if (code == PROTO_ERR_INTERNAL)
		return -ENOMEM;
	return -EBADMSG;
}

#define dec_bad(d, ...) dec_fail((d), PROTO_ERR_BAD_REQUEST, __VA_ARGS__)
#define dec_big(d, ...) dec_fail((d), PROTO_ERR_TOO_LARGE, __VA_ARGS__)

/* Append a segment to the field path; returns the length to restore. */
__attribute__((format(printf, 2, 3))) static size_t
dec_push(struct proto_dec *d, const char *fmt, ...)
{
	size_t old = d->pathlen;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(d->path + old, sizeof(d->path) - old, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->pathlen =
			old + (size_t)n < sizeof(d->path) ? old + (size_t)n : sizeof(d->path) - 1;
	return old;
}

/* Cut the field path back to a length dec_push() returned. */
static void
dec_pop(struct proto_dec *d, size_t len)
{
	d->pathlen = len;
	d->path[len] = '\0';
}

/* Allocate n zeroed bytes in the message's zone. */
static void *
dec_alloc(struct proto_dec *d, size_t n)
{
	void *p = msgpack_zone_malloc(d->priv->zone, n > 0 ? n : 1);

	if (p != NULL)
		memset(p, 0, n > 0 ? n : 1);
	return p;
}

/* True when a msgpack string equals name. */
static bool
dec_str_eq(const msgpack_object_str *s, const char *name)
{
	return strlen(name) == s->size && memcmp(s->ptr, name, s->size) == 0;
}

/* Read one big-endian length of w bytes at *off. */
static int
dec_scan_len(struct proto_dec *d, const uint8_t *p, size_t len, size_t *off, unsigned w,
	     uint64_t *ret)
{
	uint64_t v = 0;
	unsigned i;

	if (w > len - *off)
		return dec_bad(d, "truncated packet");
	for (i = 0; i < w; i++)
		v = (v << 8) | p[(*off)++];
	*ret = v;
	return 0;
}

/*
 * For header bytes 0xc4..0xdf: the width of the big-endian length that
 * follows, the fixed bytes after it, and 1/2 when the length counts array
 * elements/map pairs rather than bytes.
 */
static const struct {
	uint8_t lw, extra, kids;
} dec_scan_tab[0xe0 - 0xc4] = {
	{1, 0, 0}, {2, 0, 0}, {4, 0, 0},			/* bin 8/16/32 */
	{1, 1, 0}, {2, 1, 0}, {4, 1, 0},			/* ext 8/16/32 */
	{0, 4, 0}, {0, 8, 0},					/* float 32/64 */
	{0, 1, 0}, {0, 2, 0}, {0, 4, 0}, {0, 8, 0},		/* uint 8..64 */
	{0, 1, 0}, {0, 2, 0}, {0, 4, 0}, {0, 8, 0},		/* int 8..64 */
	{0, 2, 0}, {0, 3, 0}, {0, 5, 0}, {0, 9, 0}, {0, 17, 0}, /* fixext */
	{1, 0, 0}, {2, 0, 0}, {4, 0, 0},			/* str 8/16/32 */
	{2, 0, 1}, {4, 0, 1}, {2, 0, 2}, {4, 0, 2},		/* array, map */
};

/*
 * Walk the packet's msgpack structure without allocating anything. msgpack-c
 * allocates an array or map from its declared count before reading a single
 * element, so a 5-byte packet could ask it for gigabytes; here every count
 * must fit in the bytes that are left (each object takes at least one byte),
 * which bounds what msgpack-c allocates by the packet's length. Also refuses
 * truncation, trailing bytes, the never-used byte 0xc1 and deep nesting.
 */
static int
dec_prescan(struct proto_dec *d, const uint8_t *p, size_t len)
{
	uint64_t left[PROTO_DEPTH_MAX] = {1};
	uint64_t pending = 1, n = 0, kids, skip;
	size_t depth = 0, off = 0;
	uint8_t c;
	int r;

	while (pending > 0) {
		while (left[depth] == 0)
			depth--;
		if (off >= len)
			return dec_bad(d, "truncated packet");
		c = p[off++];
		pending--;
		left[depth]--;
		kids = skip = 0;
		if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
			;
		else if (c <= 0x8f)
			kids = 2u * (c & 0x0fu);
		else if (c <= 0x9f)
			kids = c & 0x0fu;
		else if (c <= 0xbf)
			skip = c & 0x1fu;
		else if (c == 0xc1)
			return dec_bad(d, "invalid msgpack byte 0xc1");
		else {
			r = dec_scan_len(d, p, len, &off, dec_scan_tab[c - 0xc4].lw, &n);
			if (r < 0)
				return r;
			if (dec_scan_tab[c - 0xc4].kids > 0)
				kids = n * dec_scan_tab[c - 0xc4].kids;
			else
				skip = n + dec_scan_tab[c - 0xc4].extra;
		}
		if (skip > len - off)
			return dec_bad(d, "truncated packet");
		off += skip;
		if (kids == 0)
			continue;
		if (kids > len - off || pending > len - off - kids)
			return dec_bad(d, "truncated packet (count larger than the packet)");
		if (depth + 1 >= PROTO_DEPTH_MAX)
			return dec_bad(d, "nested too deeply");
		left[++depth] = kids;
		pending += kids;
	}
	if (off != len)
		return dec_bad(d, "trailing bytes after the message");
	return 0;
}

/* Check a map: bounded size, string keys only, no key twice. */
static int
dec_check_map(struct proto_dec *d, const msgpack_object *o, size_t max)
{
	const msgpack_object_kv *kv;
	size_t i, j;

	if (o->type != MSGPACK_OBJECT_MAP)
		return dec_bad(d, "not a map");
	if (o->via.map.size > max)
		return dec_big(d, "more than %zu entries", max);
	kv = o->via.map.ptr;
	for (i = 0; i < o->via.map.size; i++) {
		if (kv[i].key.type != MSGPACK_OBJECT_STR)
			return dec_bad(d, "key of entry %zu is not a string", i);
		for (j = 0; j < i; j++)
			if (kv[j].key.via.str.size == kv[i].key.via.str.size &&
			    memcmp(kv[j].key.via.str.ptr, kv[i].key.via.str.ptr,
				   kv[i].key.via.str.size) == 0)
				return dec_bad(d, "duplicate key in entry %zu", i);
	}
	return 0;
}

/* Find a key in a map whose keys may not have been checked yet. */
static const msgpack_object *
dec_find(const msgpack_object *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->via.map.size; i++)
		if (o->via.map.ptr[i].key.type == MSGPACK_OBJECT_STR &&
		    dec_str_eq(&o->via.map.ptr[i].key.via.str, name))
			return &o->via.map.ptr[i].val;
	return NULL;
}

/* An unsigned integer no larger than max. */
static int
dec_uint(struct proto_dec *d, const msgpack_object *o, uint64_t max, uint64_t *ret)
{
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return dec_bad(d, "negative");
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return dec_bad(d, "not an unsigned integer");
	if (o->via.u64 > max)
		return dec_bad(d, "out of range (max %llu)", (unsigned long long)max);
	*ret = o->via.u64;
	return 0;
}

/* A signed 32-bit integer. */
static int
dec_i32(struct proto_dec *d, const msgpack_object *o, int32_t *ret)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT32_MAX)
		*ret = (int32_t)o->via.u64;
	else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 >= INT32_MIN)
		*ret = (int32_t)o->via.i64;
	else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
		 o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return dec_bad(d, "out of the 32-bit range");
	else
		return dec_bad(d, "not an integer");
	return 0;
}

/* A string of at most max bytes without NUL, copied NUL-terminated into the zone. */
static int
dec_str(struct proto_dec *d, const msgpack_object *o, size_t max, bool nonempty, const char **ret)
{
	char *s;

	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	if (o->via.str.size > max)
		return dec_big(d, "longer than %zu bytes", max);
	if (nonempty && o->via.str.size == 0)
		return dec_bad(d, "empty");
	if (memchr(o->via.str.ptr, '\0', o->via.str.size) != NULL)
		return dec_bad(d, "contains a NUL byte");
	s = dec_alloc(d, (size_t)o->via.str.size + 1);
	if (s == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	memcpy(s, o->via.str.ptr, o->via.str.size);
	*ret = s;
	return 0;
}

/* A string name from a table; not found is bad_request. */
static int
dec_enum(struct proto_dec *d, const msgpack_object *o, int (*lookup)(const char *, void *),
	 void *ret)
{
	const char *s;
	int r;

	r = dec_str(d, o, PROTO_NAME_MAX, true, &s);
	if (r < 0)
		return r;
	if (lookup(s, ret) < 0)
		return dec_bad(d, "unknown name");
	return 0;
}

/* proto_outcome_from_name() with a generic signature for dec_enum(). */
static int
dec_outcome_lookup(const char *name, void *ret)
{
	return proto_outcome_from_name(name, ret);
}

/* proto_error_from_name() with a generic signature for dec_enum(). */
static int
dec_errcode_lookup(const char *name, void *ret)
{
	return proto_error_from_name(name, ret);
}

/* A string from a NULL-terminated set (names); *ret gets the set's own
 * copy. Not in the set is bad_request. */
static int
dec_oneof(struct proto_dec *d, const msgpack_object *o, const char *const *names, const char **ret)
{
	const char *s;
	int r;

	r = dec_str(d, o, PROTO_NAME_MAX, true, &s);
	if (r < 0)
		return r;
	s = proto_name_in(names, s);
	if (s == NULL)
		return dec_bad(d, "unknown name");
	*ret = s;
	return 0;
}

/* proto_tool_outcome_from_name() with a generic signature for dec_enum(). */
static int
dec_tool_outcome_lookup(const char *name, void *ret)
{
	return proto_tool_outcome_from_name(name, ret);
}

/* A tool's name: [A-Za-z_][A-Za-z0-9_]*, 1 to PROTO_TOOL_NAME_MAX bytes. */
static int
dec_tool_name(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	if (o->type == MSGPACK_OBJECT_STR && o->via.str.size > PROTO_TOOL_NAME_MAX)
		return dec_big(d, "longer than %d bytes", PROTO_TOOL_NAME_MAX);
	if (o->type != MSGPACK_OBJECT_STR ||
	    !rules_tool_name_check(o->via.str.ptr, o->via.str.size))
		return dec_bad(d, "not a tool name ([A-Za-z_][A-Za-z0-9_]*)");
	return dec_str(d, o, PROTO_TOOL_NAME_MAX, true, ret);
}

/* A session id: any other string, of whatever length, is bad_request. */
static int
dec_session_id(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	if (!rules_session_id_valid(o->via.str.ptr, o->via.str.size))
		return dec_bad(d, "not a session id (%d lowercase hex characters)",
			       PROTO_SESSION_ID_LEN);
	return dec_str(d, o, PROTO_SESSION_ID_LEN, true, ret);
}

/* A profile name: 1 to PROTO_PROFILE_MAX of [a-z0-9_-], else bad_request. */
static int
dec_profile(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	if (!rules_profile_name_check(o->via.str.ptr, o->via.str.size))
		return dec_bad(d, "not a profile name (1 to %d of a-z, 0-9, '-', '_')",
			       PROTO_PROFILE_MAX);
	return dec_str(d, o, PROTO_PROFILE_MAX, true, ret);
}

/* A name of a kind with a rule: a [mount] name, or (DEC_MODULEV) a Python
 * module name; anything else is bad_request. */
static int
dec_named_check(struct proto_dec *d, const char *s, size_t len, enum dec_kind kind)
{
	if (kind == DEC_MODULEV)
		return rules_module_name_check(s, len)
			       ? 0
			       : dec_bad(d,
					 "not a Python module name (1 to %d bytes of dotted "
					 "identifiers)",
					 PROTO_MODULE_NAME_MAX);
	return rules_mount_name_check(s, len)
		       ? 0
		       : dec_bad(d, "not a mount name (1 to %d of a-z, 0-9, '-', '_')",
				 PROTO_MOUNT_MAX);
}

/* A str that is a [mount] name. */
static int
dec_mount_name(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	int r = dec_named_check(d, o->via.str.ptr, o->via.str.size, DEC_MOUNT_NAME);

	if (r < 0)
		return r;
	return dec_str(d, o, PROTO_MOUNT_MAX, true, ret);
}

/*
 * Attach memfd number idx to a blob. The seals are what make this safe
 * against a sender that keeps its own copy of the fd: with F_SEAL_WRITE,
 * F_SEAL_SHRINK and F_SEAL_GROW set (and F_SEAL_SEAL so they stay), the
 * contents and size can no longer change, so the size checked here is the
 * size mapped and reading the mapping can neither race nor SIGBUS.
 */
static int
dec_blob_fd(struct proto_dec *d, const struct dec_blobref *ref, struct proto_blob *b)
{
	struct proto_priv *p = d->priv;
	uint64_t size;
	size_t old;
	void *addr;
	int r, fd;

	old = dec_push(d, ".fd");
	if (ref->fd >= p->nfds)
		return dec_bad(d, "fd index %u out of range (%zu attached)", ref->fd, p->nfds);
	if (p->used[ref->fd])
		return dec_bad(d, "fd index %u referenced twice", ref->fd);
	p->used[ref->fd] = true;
	fd = p->fds[ref->fd];
	r = memfd_check_sealed(fd, PROTO_BLOB_MAX, &size);
	if (r == -E2BIG)
		return dec_big(d, "memfd larger than %llu bytes",
			       (unsigned long long)PROTO_BLOB_MAX);
	if (r < 0)
		return dec_bad(d, "not a sealed memfd (%s)", strerror(-r));
	if (size != ref->size)
		return dec_bad(d, "memfd holds %llu bytes, size says %llu",
			       (unsigned long long)size, (unsigned long long)ref->size);
	dec_pop(d, old);
	b->data = (const uint8_t *)"";
	if (size > 0) {
		addr = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED)
			return dec_fail(d, PROTO_ERR_INTERNAL, "cannot map memfd: %s",
					strerror(errno));
		p->maps[p->nmaps].addr = addr;
		p->maps[p->nmaps++].len = (size_t)size;
		b->data = addr;
	}
	b->len = (size_t)size;
	b->fd = fd;
	b->present = true;
	return 0;
}

/* A blob: inline bin, or {fd, size} naming an attached sealed memfd. */
static int
dec_blob(struct proto_dec *d, const msgpack_object *o, struct proto_blob *b)
{
	struct dec_blobref ref = {0};
	uint8_t *copy;
	size_t i;
	int r;

	if (o->type == MSGPACK_OBJECT_BIN) {
		if (o->via.bin.size > PROTO_INLINE_MAX)
			return dec_big(d, "inline blob longer than %d bytes", PROTO_INLINE_MAX);
		copy = dec_alloc(d, o->via.bin.size);
		if (copy == NULL)
			return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
		if (o->via.bin.size > 0)
			memcpy(copy, o->via.bin.ptr, o->via.bin.size);
		*b = (struct proto_blob){
			.data = copy, .len = o->via.bin.size, .fd = -1, .present = true};
		return 0;
	}
	if (o->type != MSGPACK_OBJECT_MAP)
		return dec_bad(d, "not a blob (bin or {fd, size})");
	r = dec_check_map(d, o, PROTO_KEYS_MAX);
	for (i = 0; r == 0 && i < NELEM(dec_blobref_fields); i++) {
		const msgpack_object *v = dec_find(o, dec_blobref_fields[i].name);
		size_t old = dec_push(d, ".%s", dec_blobref_fields[i].name);

		if (v == NULL)
			return dec_bad(d, "missing");
		r = dec_value(d, v, &dec_blobref_fields[i], &ref);
		if (r == 0)
			dec_pop(d, old);
	}
	if (r < 0)
		return r;
	if (ref.size > PROTO_BLOB_MAX) {
		dec_push(d, ".size");
		return dec_big(d, "larger than %llu bytes", (unsigned long long)PROTO_BLOB_MAX);
	}
	return dec_blob_fd(d, &ref, b);
}

/* Decode a map against a field table into base; unknown keys are ignored. */
static int
dec_object(struct proto_dec *d, const msgpack_object *o, const struct dec_field *fields,
	   size_t nfields, void *base, uint32_t *ret_seen)
{
	uint32_t seen = 0;
	size_t i, k, old;
	int r;

	r = dec_check_map(d, o, PROTO_KEYS_MAX);
	if (r < 0)
		return r;
	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		for (k = 0; k < nfields; k++)
			if (dec_str_eq(&kv->key.via.str, fields[k].name))
				break;
		if (k == nfields)
			continue; /* unknown key: forward compatibility */
		old = dec_push(d, ".%s", fields[k].name);
		r = dec_value(d, &kv->val, &fields[k], base);
		if (r < 0)
			return r;
		dec_pop(d, old);
		seen |= 1u << k;
	}
	for (k = 0; k < nfields; k++)
		if ((fields[k].flags & DF_REQUIRED) != 0 && (seen & (1u << k)) == 0) {
			dec_push(d, ".%s", fields[k].name);
			return dec_bad(d, "missing");
		}
	if (ret_seen != NULL)
		*ret_seen = seen;
	return 0;
}

/* Check that an array holds at most max entries. */
static int
dec_check_array(struct proto_dec *d, const msgpack_object *o, size_t max)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return dec_bad(d, "not an array");
	if (o->via.array.size > max)
		return dec_big(d, "more than %zu entries", max);
	return 0;
}

/* An array of strings into a NULL-terminated zone array. */
static int
dec_strv(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, const char ***ret,
	 size_t *ret_n)
{
	const char **v;
	size_t i, old;
	int r;

	r = dec_check_array(d, o, f->max);
	if (r < 0)
		return r;
	v = dec_alloc(d, ((size_t)o->via.array.size + 1) * sizeof(*v));
	if (v == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	for (i = 0; i < o->via.array.size; i++) {
		old = dec_push(d, "[%zu]", i);
		r = dec_str(d, &o->via.array.ptr[i], f->elem_max, (f->flags & DF_NONEMPTY) != 0,
			    &v[i]);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* env: a map of variable names to values. */
static int
dec_env(struct proto_dec *d, const msgpack_object *o, struct proto_env **ret, size_t *ret_n)
{
	struct proto_env *v;
	size_t i, old;
	int r;

	r = dec_check_map(d, o, PROTO_ENV_MAX);
	if (r < 0)
		return r;
	v = dec_alloc(d, (size_t)o->via.map.size * sizeof(*v));
	if (v == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	for (i = 0; i < o->via.map.size; i++) {
		old = dec_push(d, "[%zu]", i);
		r = dec_str(d, &o->via.map.ptr[i].key, PROTO_ENV_KEY_MAX, true, &v[i].key);
		if (r < 0)
			return r;
		if (rules_env_name_check(v[i].key, strlen(v[i].key)) < 0)
			return dec_bad(d, "not a valid variable name");
		r = dec_str(d, &o->via.map.ptr[i].val, PROTO_STR_MAX, false, &v[i].value);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* runtime_packages: a map of runtime names to arrays of package names. */
static int
dec_rtpkgs(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f,
	   struct proto_runtime_packages *v, size_t *ret_n)
{
	const struct dec_field pf = {"packages", DEC_STRV,	     DF_NONEMPTY, 0,
				     0,		 PROTO_PACKAGES_MAX, f->elem_max};
	const char **strv;
	size_t i, n, old;
	int r;

	r = dec_check_map(d, o, f->max);
	if (r < 0)
		return r;
	for (i = 0; i < o->via.map.size; i++) {
		old = dec_push(d, "[%zu]", i);
		r = dec_str(d, &o->via.map.ptr[i].key, PROTO_RUNTIME_MAX, true, &v[i].runtime);
		if (r < 0)
			return r;
		r = dec_strv(d, &o->via.map.ptr[i].val, &pf, &strv, &n);
		if (r < 0)
			return r;
		memcpy(v[i].packages, strv, n * sizeof(*strv));
		v[i].npackages = n;
		dec_pop(d, old);
	}
	*ret_n = i;
	return 0;
}

/* Check an artifact's or a stream's data against its total and flag. */
static int
dec_check_partial(struct proto_dec *d, const struct proto_blob *b, uint64_t total, bool truncated)
{
	if (b->len > total)
		return dec_bad(d, "data longer than the size given");
	if (truncated != (b->len < total))
		return dec_bad(d, "truncated flag does not match the data");
	return 0;
}

/* An array of maps (files, artifacts, ps, sessions, entries), each decoded by dec_elems. */
static int
dec_list(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void **ret,
	 size_t *ret_n)
{
	const struct dec_elem *el = &dec_elems[f->kind];
	size_t i, old;
	uint8_t *v;
	int r;

	r = dec_check_array(d, o, f->max);
	if (r < 0)
		return r;
	v = dec_alloc(d, (size_t)o->via.array.size * el->size);
	if (v == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	for (i = 0; i < o->via.array.size; i++) {
		uint8_t *elem = v + i * el->size;

		old = dec_push(d, "[%zu]", i);
		if (el->blob_off != DEC_NO_BLOB)
			((struct proto_blob *)(elem + el->blob_off))->fd = -1;
		r = dec_object(d, &o->via.array.ptr[i], el->fields, el->nfields, elem, NULL);
		if (r == 0 && f->kind == DEC_ARTIFACTS) {
			const struct proto_artifact *a = (const struct proto_artifact *)elem;

			r = dec_check_partial(d, &a->data, a->size, a->truncated);
		}
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* limits: a map of proto_limit_name() names to unsigned values. */
static int
dec_limits(struct proto_dec *d, const msgpack_object *o, bool strict, struct proto_limits *ret)
{
	size_t i, old;
	int r;

	r = dec_check_map(d, o, PROTO_KEYS_MAX);
	if (r < 0)
		return r;
	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object_str *key = &o->via.map.ptr[i].key.via.str;
		enum proto_limit k;

		if (limit_from_name(key->ptr, key->size, &k) < 0) {
			if (strict)
				return dec_bad(d, "entry %zu: unknown limit", i);
			continue;
		}
		old = dec_push(d, ".%s", limit_table[k].name);
		r = dec_uint(d, &o->via.map.ptr[i].val, UINT64_MAX, &ret->v[k]);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	return 0;
}

/* Decode one value of a known field into base + f->off. */
static int
dec_value(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *base)
{
	uint8_t *dst = (uint8_t *)base + f->off;
	size_t *cnt = (size_t *)((uint8_t *)base + f->cnt_off);
	const char **strv;
	uint64_t u;
	size_t n;
	int r;

	switch (f->kind) {
	case DEC_U32:
		r = dec_uint(d, o, UINT32_MAX, &u);
		if (r == 0)
			*(uint32_t *)dst = (uint32_t)u;
		return r;
	case DEC_U64:
		return dec_uint(d, o, UINT64_MAX, (uint64_t *)dst);
	case DEC_I32:
		return dec_i32(d, o, (int32_t *)dst);
	case DEC_BOOL:
	case DEC_BOOL_NOT:
		if (o->type != MSGPACK_OBJECT_BOOLEAN)
			return dec_bad(d, "not a boolean");
		*(bool *)dst = f->kind == DEC_BOOL_NOT ? !o->via.boolean : o->via.boolean;
		return 0;
	case DEC_STR:
		return dec_str(d, o, f->max, (f->flags & DF_NONEMPTY) != 0, (const char **)dst);
	case DEC_BLOB:
		return dec_blob(d, o, (struct proto_blob *)dst);
	case DEC_STRV:
		return dec_strv(d, o, f, (const char ***)dst, cnt);
	case DEC_MOUNT_NAME:
		return dec_mount_name(d, o, (const char **)dst);
	case DEC_MOUNTS:
	case DEC_MOUNTV:
	case DEC_MODULEV:
		r = dec_strv(d, o, f, &strv, &n);
		for (size_t i = 0; r == 0 && i < n; i++)
			r = dec_named_check(d, strv[i], strlen(strv[i]), f->kind);
		if (r == 0 && f->kind == DEC_MOUNTS) {
			memcpy(dst, strv, n * sizeof(*strv));
		} else if (r == 0) {
			*(const char ***)dst = strv;
		}
		if (r == 0)
			*cnt = n;
		return r;
	case DEC_STRA:
		r = dec_strv(d, o, f, &strv, &n);
		if (r == 0) {
			memcpy(dst, strv, n * sizeof(*strv));
			*cnt = n;
		}
		return r;
	case DEC_ENV:
		return dec_env(d, o, (struct proto_env **)dst, cnt);
	case DEC_RTPKGS:
		return dec_rtpkgs(d, o, f, (struct proto_runtime_packages *)dst, cnt);
	case DEC_FILES:
	case DEC_ARTIFACTS:
	case DEC_PSRUNS:
	case DEC_SESSIONS:
	case DEC_ENTRIES:
	case DEC_PROFILES:
	case DEC_REFUSALS:
	case DEC_MOUNT_INFOS:
		return dec_list(d, o, f, (void **)dst, cnt);
	case DEC_NETWORK: {
		struct proto_network *net = dec_alloc(d, sizeof(*net));

		if (net == NULL)
			return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
		memset(net, 0, sizeof(*net));
		r = dec_object(d, o, dec_network_fields, NELEM(dec_network_fields), net, NULL);
		if (r == 0)
			*(const struct proto_network **)dst = net;
		return r;
	}
	case DEC_NETMODE:
		return dec_oneof(d, o, proto_netmodes, (const char **)dst);
	case DEC_TOOLS:
	case DEC_TOOL_RECORDS:
		if ((f->flags & DF_NONEMPTY) != 0 && o->type == MSGPACK_OBJECT_ARRAY &&
		    o->via.array.size == 0)
			return dec_bad(d, "empty (leave it out)");
		return dec_list(d, o, f, (void **)dst, cnt);
	case DEC_TOOL_NAME:
		return dec_tool_name(d, o, (const char **)dst);
	case DEC_TOOL_OUTCOME:
		return dec_enum(d, o, dec_tool_outcome_lookup, dst);
	case DEC_LIMITS:
	case DEC_LIMITS_REQ:
		return dec_limits(d, o, f->kind == DEC_LIMITS_REQ, (struct proto_limits *)dst);
	case DEC_OUTCOME:
		return dec_enum(d, o, dec_outcome_lookup, dst);
	case DEC_ERRCODE:
		return dec_enum(d, o, dec_errcode_lookup, dst);
	case DEC_SESSION_ID:
		return dec_session_id(d, o, (const char **)dst);
	case DEC_PROFILE:
		return dec_profile(d, o, (const char **)dst);
	case DEC_INLINE:
		if (o->type != MSGPACK_OBJECT_BIN)
			return dec_bad(d, "not an inline bin (never a memfd here)");
		if ((f->flags & DF_NONEMPTY) != 0 && o->via.bin.size == 0)
			return dec_bad(d, "empty");
		return dec_blob(d, o, (struct proto_blob *)dst);
	case DEC_FILE_KIND:
		return dec_oneof(d, o, proto_file_kinds, (const char **)dst);
	case DEC_SESSION_STATE:
		return dec_oneof(d, o, proto_session_states, (const char **)dst);
	case DEC_CELL_STATE:
		return dec_oneof(d, o, proto_cell_states, (const char **)dst);
	case DEC_STREAM_NAME:
		return dec_oneof(d, o, proto_stream_names, (const char **)dst);
	}
	return dec_fail(d, PROTO_ERR_INTERNAL, "unknown field kind");
}

/* Read type and id first, so that even a bad request can be answered by id. */
static int
dec_header(struct proto_dec *d, const msgpack_object *o, struct proto_msg *m, uint32_t *ret_id)
{
	const msgpack_object *t, *i;
	uint64_t type, id;
	int r;

	i = dec_find(o, "id");
	if (i != NULL && i->type == MSGPACK_OBJECT_POSITIVE_INTEGER && i->via.u64 > 0 &&
	    i->via.u64 <= UINT32_MAX && ret_id != NULL)
		*ret_id = (uint32_t)i->via.u64;
	t = dec_find(o, "type");
	dec_push(d, ".type");
	if (t == NULL)
		return dec_bad(d, "missing");
	r = dec_uint(d, t, UINT32_MAX, &type);
	if (r < 0)
		return r;
	if (type >= NELEM(dec_schemas) || proto_type_names[type] == NULL)
		return dec_bad(d, "unknown message type %llu", (unsigned long long)type);
	m->type = (enum proto_type)type;
	dec_pop(d, 0);
	dec_push(d, "%s.id", proto_type_name(m->type));
	if (i == NULL)
		return dec_bad(d, "missing");
	r = dec_uint(d, i, UINT32_MAX, &id);
	if (r < 0)
		return r;
	if (id == 0 && m->type != PROTO_ERROR)
		return dec_bad(d, "0 is not a request id");
	m->id = (uint32_t)id;
	dec_pop(d, 0);
	dec_push(d, "%s", proto_type_name(m->type));
	return 0;
}

/*
 * Give absent blobs fd -1 so that nobody mistakes them for fd 0, and absent
 * optional strings that have a meaning their value ("" for file_list's path).
 */
static void
dec_init_blobs(struct proto_msg *m)
{
	switch (m->type) {
	case PROTO_RUN:
		m->u.run.code.fd = -1;
		m->u.run.stdin_data.fd = -1;
		m->u.run.file_bundle.fd = -1;
		break;
	case PROTO_RESULT:
		m->u.result.out[0].data.fd = -1;
		m->u.result.out[1].data.fd = -1;
		break;
	case PROTO_FILE_WRITE:
	case PROTO_FILE_READ:
	case PROTO_FILE_LIST:
	case PROTO_FILE_DELETE:
		m->u.file.data.fd = -1;
		m->u.file.path = "";
		break;
	case PROTO_FILE_DATA:
		m->u.file_data.data.fd = -1;
		break;
	case PROTO_STREAM:
		m->u.stream.data.fd = -1;
		break;
	case PROTO_TOOL_CALL:
		m->u.tool_call.args.fd = -1;
		break;
	case PROTO_TOOL_REPLY:
		m->u.tool_reply.result.fd = -1;
		break;
	default:
		break;
	}
}

/* Checks across fields of a result: which optional keys the outcome needs. */
static int
dec_result_check(struct proto_dec *d, const struct proto_result *res, uint32_t seen)
{
	static const struct {
		unsigned field;
		enum proto_outcome outcome;
	} cond[] = {
		{DEC_RES_EXIT_CODE, PROTO_OUTCOME_EXITED},
		{DEC_RES_SIGNAL, PROTO_OUTCOME_SIGNALED},
		{DEC_RES_ERROR, PROTO_OUTCOME_ERROR},
	};
	size_t i, old;
	int r;

	for (i = 0; i < NELEM(cond); i++) {
		bool has = (seen & (1u << cond[i].field)) != 0;

		if (has != (res->outcome == cond[i].outcome)) {
			dec_push(d, ".%s", dec_result_fields[cond[i].field].name);
			return dec_bad(d,
				       has ? "not allowed with outcome %s"
					   : "missing (required with outcome %s)",
				       proto_outcome_name(res->outcome));
		}
	}
	for (i = 0; i < 2; i++) {
		old = dec_push(d, i == 0 ? ".stdout" : ".stderr");
		r = dec_check_partial(d, &res->out[i].data, res->out[i].total,
				      res->out[i].truncated);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	return 0;
}

/* Fail naming the field at the current path plus field. */
__attribute__((format(printf, 4, 5))) static int
dec_at(struct proto_dec *d, const char *field, enum proto_error code, const char *fmt, ...)
{
	char msg[PROTO_MSG_PRINTABLE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dec_push(d, "%s", field);
	return dec_fail(d, code, "%s", msg);
}

/* Checks across fields of the tool bridge's messages (run.tools, tool_call, tool_reply). */
static int
dec_tools_check(struct proto_dec *d, const struct proto_msg *m)
{
	size_t i, j;

	if (m->type == PROTO_RUN) {
		const struct proto_run *run = &m->u.run;

		for (i = 0; i < run->ntools; i++) {
			const struct proto_tool *t = &run->tools[i];
			size_t old = dec_push(d, ".tools[%zu]", i);

			for (j = 0; j < i; j++)
				if (strcmp(run->tools[j].name, t->name) == 0)
					return dec_at(d, ".name", PROTO_ERR_BAD_REQUEST,
						      "%s declared twice", t->name);
			if (t->schema != NULL && jsonscan_object(t->schema, strlen(t->schema)) < 0)
				return dec_at(d, ".schema", PROTO_ERR_BAD_REQUEST,
					      "not a JSON object");
			dec_pop(d, old);
		}
		return 0;
	}
	if (m->type == PROTO_TOOL_CALL) {
		const struct proto_tool_call *c = &m->u.tool_call;

		if (c->args.len > PROTO_TOOL_BYTES_MAX)
			return dec_at(d, ".args", PROTO_ERR_TOO_LARGE, "longer than %d bytes",
				      PROTO_TOOL_BYTES_MAX);
		if (c->call == 0)
			return dec_at(d, ".call", PROTO_ERR_BAD_REQUEST, "0 is not a call");
		return 0;
	}
	if (m->type == PROTO_TOOL_REPLY) {
		const struct proto_tool_reply *r = &m->u.tool_reply;

		if (r->call == 0)
			return dec_at(d, ".call", PROTO_ERR_BAD_REQUEST, "0 is not a call");
		if (r->result.present != r->ok)
			return dec_at(d, ".result", PROTO_ERR_BAD_REQUEST, "%s",
				      r->ok ? "missing (required when ok)"
					    : "not allowed when not ok");
		if ((r->error != NULL) == r->ok)
			return dec_at(d, ".error", PROTO_ERR_BAD_REQUEST, "%s",
				      r->ok ? "not allowed when ok"
					    : "missing (required when not ok)");
		if (r->refused && r->ok)
			return dec_at(d, ".refused", PROTO_ERR_BAD_REQUEST, "not allowed when ok");
		if (r->result.len > PROTO_TOOL_BYTES_MAX)
			return dec_at(d, ".result", PROTO_ERR_TOO_LARGE, "longer than %d bytes",
				      PROTO_TOOL_BYTES_MAX);
	}
	return 0;
}

/* Decode the top-level map into m. */
static int
dec_message(struct proto_dec *d, const msgpack_object *o, struct proto_msg *m, uint32_t *ret_id)
{
	const struct dec_schema *s;
	uint32_t seen = 0;
	size_t i;
	int r;

	if (o->type != MSGPACK_OBJECT_MAP)
		return dec_bad(d, "not a map");
	r = dec_header(d, o, m, ret_id);
	if (r < 0)
		return r;
	dec_init_blobs(m);
	s = &dec_schemas[m->type];
	r = dec_object(d, o, s->fields, s->nfields, &m->u, &seen);
	if (r < 0)
		return r;
	if (m->type == PROTO_RESULT) {
		r = dec_result_check(d, &m->u.result, seen);
		if (r < 0)
			return r;
	}
	r = dec_tools_check(d, m);
	if (r < 0)
		return r;
	if (m->type == PROTO_CANCEL && (m->u.cancel.request == 0) == (m->u.cancel.run == 0))
		return dec_bad(d, ": exactly one of request and run, non-zero, is required");
	if (m->type == PROTO_FILE_DATA) {
		size_t old = dec_push(d, ".data");

		r = dec_check_partial(d, &m->u.file_data.data, m->u.file_data.size,
				      m->u.file_data.truncated);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	for (i = 0; i < d->priv->nfds; i++)
		if (!d->priv->used[i])
			return dec_bad(d, "attached fd %zu is not referenced", i);
	return 0;
}

/* Unmap, close and free everything a decoded message owns. */
static void
proto_priv_free(struct proto_priv *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nmaps; i++)
		munmap(p->maps[i].addr, p->maps[i].len);
	fdpass_close_all(p->fds, p->nfds);
	if (p->zone != NULL)
		msgpack_zone_free(p->zone);
	free(p);
}

/* Take ownership of the packet's fds; the caller's copies become -1. */
static int
dec_take_fds(struct proto_dec *d, int *fds, size_t nfds)
{
	size_t i;

	if (nfds > PROTO_FDS_MAX) {
		fdpass_close_all(fds, nfds);
		return dec_big(d, "more than %d fds attached", PROTO_FDS_MAX);
	}
	for (i = 0; i < nfds; i++) {
		d->priv->fds[i] = fds[i];
		fds[i] = -1;
	}
	d->priv->nfds = nfds;
	return 0;
}

/* Check the bytes and unpack them into a zone the message will own. */
static int
dec_unpack(struct proto_dec *d, const void *buf, size_t len, msgpack_unpacked *upk)
{
	msgpack_unpack_return ur;
	size_t off = 0;
	int r;

	if (len > PROTO_MSG_MAX)
		return dec_big(d, "packet larger than %d bytes", PROTO_MSG_MAX);
	if (buf == NULL || len == 0)
		return dec_bad(d, "empty packet");
	r = dec_prescan(d, buf, len);
	if (r < 0)
		return r;
	ur = msgpack_unpack_next(upk, buf, len, &off);
	if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	if (ur != MSGPACK_UNPACK_SUCCESS)
		return dec_bad(d, "not valid msgpack");
	if (off != len)
		return dec_bad(d, "trailing bytes after the message");
	d->priv->zone = msgpack_unpacked_release_zone(upk);
	if (d->priv->zone == NULL)
		d->priv->zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
	if (d->priv->zone == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	return 0;
}

int
proto_decode(const void *buf, size_t len, int *fds, size_t nfds, struct proto_msg *ret_msg,
	     enum proto_error *ret_code, uint32_t *ret_id, char *ret_why, size_t why_len)
{
	struct proto_dec d = {.why = ret_why, .why_len = why_len};
	struct proto_msg m;
	msgpack_unpacked upk;
	int r;

	memset(&m, 0, sizeof(m));
	msgpack_unpacked_init(&upk);
	dec_push(&d, "message");
	if (ret_id != NULL)
		*ret_id = 0;
	if (ret_why != NULL && why_len > 0)
		ret_why[0] = '\0';
	d.priv = calloc(1, sizeof(*d.priv));
	if (d.priv == NULL || ret_msg == NULL) {
		fdpass_close_all(fds, nfds);
		r = dec_fail(&d, PROTO_ERR_INTERNAL,
			     ret_msg == NULL ? "no message" : "out of memory");
		if (ret_msg == NULL)
			r = -EINVAL;
		goto out;
	}
	r = dec_take_fds(&d, fds, nfds);
	if (r < 0)
		goto out;
	r = dec_unpack(&d, buf, len, &upk);
	if (r < 0)
		goto out;
	r = dec_message(&d, &upk.data, &m, ret_id);
	if (r < 0)
		goto out;
	m.priv_ = d.priv;
	d.priv = NULL;
	*ret_msg = m;
	d.code = PROTO_ERR_NONE;
out:
	proto_priv_free(d.priv);
	msgpack_unpacked_destroy(&upk);
	if (ret_code != NULL)
		*ret_code = d.code;
	return r;
}

void
proto_msg_free(struct proto_msg *msg)
{
	if (msg == NULL)
		return;
	proto_priv_free(msg->priv_);
	memset(msg, 0, sizeof(*msg));
}

/* ---------------------------------------------------------------- encode */

/* Encoder state; the first failure sticks in err and later steps do nothing. */
struct proto_enc {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int fds[PROTO_FDS_MAX];
	size_t nfds;
	uint32_t id;
	int err;
};

/* Record the first failure. */
static void
enc_fail(struct proto_enc *e, int err)
{
	if (e->err == 0)
		e->err = err;
}

/* msgpack write callback: the sbuffer, capped at PROTO_MSG_MAX. */
static int
enc_write(void *data, const char *buf, size_t len)
{
	struct proto_enc *e = data;

	if (len == 0)
		return 0;
	if (len > PROTO_MSG_MAX - e->sb.size) {
		enc_fail(e, -E2BIG);
		return -1;
	}
	if (msgpack_sbuffer_write(&e->sb, buf, len) != 0) {
		enc_fail(e, -ENOMEM);
		return -1;
	}
	return 0;
}

/* Record a failed msgpack call (enc_write has usually named the reason). */
static void
enc_check(struct proto_enc *e, int r)
{
	if (r != 0)
		enc_fail(e, -ENOMEM);
}

/* A string of at most max bytes. */
static void
enc_rawstr(struct proto_enc *e, const char *s, size_t max)
{
	size_t n;

	if (e->err != 0)
		return;
	if (s == NULL) {
		enc_fail(e, -EINVAL);
		return;
	}
	n = strnlen(s, max + 1);
	if (n > max) {
		enc_fail(e, -E2BIG);
		return;
	}
	enc_check(e, msgpack_pack_str(&e->pk, n));
	if (e->err == 0 && n > 0)
		enc_check(e, msgpack_pack_str_body(&e->pk, s, n));
}

/* A map header of n entries. */
static void
enc_map(struct proto_enc *e, size_t n)
{
	if (e->err == 0)
		enc_check(e, msgpack_pack_map(&e->pk, n));
}

/* An array header of n entries. */
static void
enc_array(struct proto_enc *e, size_t n)
{
	if (e->err == 0)
		enc_check(e, msgpack_pack_array(&e->pk, n));
}

/* key: unsigned value. */
static void
enc_kv_uint(struct proto_enc *e, const char *key, uint64_t v)
{
	enc_rawstr(e, key, PROTO_STR_MAX);
	if (e->err == 0)
		enc_check(e, msgpack_pack_uint64(&e->pk, v));
}

/* key: signed value. */
static void
enc_kv_int(struct proto_enc *e, const char *key, int64_t v)
{
	enc_rawstr(e, key, PROTO_STR_MAX);
	if (e->err == 0)
		enc_check(e, msgpack_pack_int64(&e->pk, v));
}

/* key: boolean. */
static void
enc_kv_bool(struct proto_enc *e, const char *key, bool v)
{
	enc_rawstr(e, key, PROTO_STR_MAX);
	if (e->err == 0)
		enc_check(e, v ? msgpack_pack_true(&e->pk) : msgpack_pack_false(&e->pk));
}

/* key: string of at most max bytes (nonempty when asked). */
static void
enc_kv_str(struct proto_enc *e, const char *key, const char *s, size_t max, bool nonempty)
{
	if (nonempty && s != NULL && s[0] == '\0')
		enc_fail(e, -EINVAL);
	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_rawstr(e, s, max);
}

/* key: a session id, checked like the decoder checks it. */
static void
enc_kv_session(struct proto_enc *e, const char *key, const char *session)
{
	if (!rules_session_id_str_valid(session))
		enc_fail(e, -EINVAL);
	enc_kv_str(e, key, session, PROTO_SESSION_ID_LEN, true);
}

/* key: a profile name, checked like the decoder checks it. */
static void
enc_kv_profile(struct proto_enc *e, const char *key, const char *name)
{
	if (!rules_profile_name_valid(name))
		enc_fail(e, -EINVAL);
	enc_kv_str(e, key, name, PROTO_PROFILE_MAX, true);
}

/* key: one of a closed set of names. */
static void
enc_kv_oneof(struct proto_enc *e, const char *key, const char *const *names, const char *s)
{
	if (proto_name_in(names, s) == NULL)
		enc_fail(e, -EINVAL);
	enc_kv_str(e, key, s, PROTO_NAME_MAX, true);
}

/* key: an array of n (<= max) non-empty strings of at most len bytes
 * (info_ok.profiles: allow-list entries, hidden paths). */
static void
enc_strlist(struct proto_enc *e, const char *key, const char *const *v, size_t n, size_t max,
	    size_t len)
{
	size_t i;

	if (n > max || (n > 0 && v == NULL))
		enc_fail(e, n > max ? -E2BIG : -EINVAL);
	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_array(e, n);
	for (i = 0; e->err == 0 && i < n; i++) {
		if (v[i] != NULL && v[i][0] == '\0')
			enc_fail(e, -EINVAL);
		enc_rawstr(e, v[i], len);
	}
}

/* key: an array of names that pass their rule (DEC_MOUNTV, DEC_MODULEV). */
static void
enc_namelist(struct proto_enc *e, const char *key, const char *const *v, size_t n,
	     enum dec_kind kind)
{
	bool module = kind == DEC_MODULEV;
	size_t i, max = module ? PROTO_BLOCKED_IMPORTS_MAX : PROTO_INFO_MOUNTS_MAX;

	if (n > max)
		enc_fail(e, -E2BIG);
	for (i = 0; e->err == 0 && i < n && v != NULL; i++)
		if (v[i] == NULL || (module ? !rules_module_name_check(v[i], strlen(v[i]))
					    : !rules_mount_name_check(v[i], strlen(v[i]))))
			enc_fail(e, -EINVAL);
	enc_strlist(e, key, v, n, max, module ? PROTO_MODULE_NAME_MAX : PROTO_MOUNT_MAX);
}

/* Attach a blob as an fd: a dup of the caller's sealed memfd, or a new one. */
static void
enc_attach(struct proto_enc *e, const struct proto_blob *b)
{
	uint64_t size;
	int r, fd;

	if (b->len > PROTO_BLOB_MAX || e->nfds >= PROTO_FDS_MAX) {
		enc_fail(e, -E2BIG);
		return;
	}
	if (b->fd >= 0) {
		r = memfd_check_sealed(b->fd, PROTO_BLOB_MAX, &size);
		if (r == 0 && size != b->len)
			r = -EINVAL;
		if (r < 0) {
			enc_fail(e, r == -EPERM ? -EINVAL : r);
			return;
		}
		fd = fcntl(b->fd, F_DUPFD_CLOEXEC, 0);
		r = fd < 0 ? -errno : 0;
	} else if (b->data == NULL) {
		r = -EINVAL;
	} else {
		r = memfd_sealed_create(PROTO_BLOB_MEMFD_NAME, b->data, b->len, &fd);
	}
	if (r < 0) {
		enc_fail(e, r);
		return;
	}
	e->fds[e->nfds] = fd;
	enc_map(e, 2);
	enc_kv_uint(e, "fd", e->nfds++);
	enc_kv_uint(e, "size", b->len);
}

/* key: blob, inline when small and not already an fd. */
static void
enc_kv_blob(struct proto_enc *e, const char *key, const struct proto_blob *b)
{
	enc_rawstr(e, key, PROTO_STR_MAX);
	if (e->err != 0)
		return;
	/* A zeroed struct has fd 0: an absent blob is empty, whatever fd holds. */
	if (!b->present) {
		enc_check(e, msgpack_pack_bin(&e->pk, 0));
		return;
	}
	if (b->fd >= 0 || b->len > PROTO_INLINE_MAX) {
		enc_attach(e, b);
		return;
	}
	if (b->len > 0 && b->data == NULL) {
		enc_fail(e, -EINVAL);
		return;
	}
	enc_check(e, msgpack_pack_bin(&e->pk, b->len));
	if (e->err == 0 && b->len > 0)
		enc_check(e, msgpack_pack_bin_body(&e->pk, b->data, b->len));
}

/* key: every limit by name. */
static void
enc_kv_limits(struct proto_enc *e, const char *key, const struct proto_limits *l)
{
	size_t i;

	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_map(e, PROTO_LIMIT_COUNT_);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		enc_kv_uint(e, limit_table[i].name, l->v[i]);
}

/* Start a message: the top map with nfields beyond type and id. */
static void
enc_begin(struct proto_enc *e, enum proto_type type, uint32_t id, size_t nfields)
{
	size_t i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < PROTO_FDS_MAX; i++)
		e->fds[i] = -1;
	msgpack_sbuffer_init(&e->sb);
	msgpack_packer_init(&e->pk, e, enc_write);
	if (id == 0 && type != PROTO_ERROR)
		enc_fail(e, -EINVAL);
	enc_map(e, nfields + 2);
	enc_kv_uint(e, "type", (uint64_t)type);
	enc_kv_uint(e, "id", id);
	e->id = id;
}

/* Finish a message: hand bytes and fds to *ret, or undo everything. */
static int
enc_finish(struct proto_enc *e, struct proto_out *ret)
{
	size_t i;

	if (e->err != 0) {
		fdpass_close_all(e->fds, e->nfds);
		msgpack_sbuffer_destroy(&e->sb);
		return e->err;
	}
	ret->len = e->sb.size;
	ret->buf = msgpack_sbuffer_release(&e->sb);
	for (i = 0; i < PROTO_FDS_MAX; i++)
		ret->fds[i] = e->fds[i];
	ret->nfds = e->nfds;
	ret->id = e->id;
	return 0;
}

int
proto_encode_hello(uint32_t id, enum proto_type type, const struct proto_hello *h,
		   struct proto_out *ret)
{
	struct proto_enc e;
	bool ok = type == PROTO_HELLO_OK;

	if (h == NULL || ret == NULL || (type != PROTO_HELLO && !ok))
		return -EINVAL;
	enc_begin(&e, type, id, (ok || h->peer != NULL ? 2 : 1) + (h->nfeatures > 0 ? 1 : 0));
	enc_kv_uint(&e, "version", h->version);
	if (ok || h->peer != NULL)
		enc_kv_str(&e, ok ? "daemon" : "client", h->peer, PROTO_NAME_MAX, false);
	if (h->nfeatures > 0) {
		size_t i;

		if (h->nfeatures > PROTO_FEATURES_MAX)
			enc_fail(&e, -E2BIG);
		enc_rawstr(&e, "features", PROTO_STR_MAX);
		enc_array(&e, h->nfeatures);
		for (i = 0; e.err == 0 && i < h->nfeatures; i++)
			enc_rawstr(&e, h->features[i], PROTO_FEATURE_NAME_MAX);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_simple(uint32_t id, enum proto_type type, struct proto_out *ret)
{
	struct proto_enc e;

	if (ret == NULL || (type != PROTO_PING && type != PROTO_PONG && type != PROTO_INFO &&
			    type != PROTO_CANCEL_OK && type != PROTO_PS && type != PROTO_OK &&
			    type != PROTO_SESSION_LIST))
		return -EINVAL;
	enc_begin(&e, type, id, 0);
	return enc_finish(&e, ret);
}

int
proto_encode_info(uint32_t id, const struct proto_info *info, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i, k;

	if (info == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_INFO_OK, id,
		  6 + (info->resource_control != NULL) + (info->nruntime_packages > 0) +
			  (info->nprofiles > 0) + (info->nmounts > 0) + (info->max_runs != 0) +
			  (info->max_runs_per_uid != 0) + (info->max_interpreters != 0) +
			  (info->max_interpreters_per_uid != 0));
	if (info->nruntimes > PROTO_RUNTIMES_MAX || info->nruntime_packages > PROTO_RUNTIMES_MAX ||
	    info->nprofiles > PROTO_PROFILES_MAX || info->nmounts > PROTO_INFO_MOUNTS_MAX)
		enc_fail(&e, -E2BIG);
	if ((info->nprofiles > 0 && info->profiles == NULL) ||
	    (info->nmounts > 0 && info->mounts == NULL))
		enc_fail(&e, -EINVAL);
	enc_kv_str(&e, "daemon", info->daemon, PROTO_NAME_MAX, false);
	enc_kv_uint(&e, "version", info->version);
	enc_kv_uint(&e, "uid", info->uid);
	enc_rawstr(&e, "runtimes", PROTO_STR_MAX);
	enc_array(&e, info->nruntimes);
	for (i = 0; e.err == 0 && i < info->nruntimes; i++) {
		if (info->runtimes[i] != NULL && info->runtimes[i][0] == '\0')
			enc_fail(&e, -EINVAL);
		enc_rawstr(&e, info->runtimes[i], PROTO_RUNTIME_MAX);
	}
	enc_kv_limits(&e, "defaults", &info->defaults);
	enc_kv_limits(&e, "ceilings", &info->ceilings);
	if (info->resource_control != NULL)
		enc_kv_str(&e, "resource_control", info->resource_control, PROTO_FEATURE_NAME_MAX,
			   true);
	if (info->nruntime_packages > 0) {
		enc_rawstr(&e, "runtime_packages", PROTO_STR_MAX);
		enc_map(&e, info->nruntime_packages);
	}
	for (i = 0; e.err == 0 && i < info->nruntime_packages; i++) {
		const struct proto_runtime_packages *p = &info->runtime_packages[i];

		if (p->runtime == NULL || p->runtime[0] == '\0' ||
		    p->npackages > PROTO_PACKAGES_MAX)
			enc_fail(&e, -EINVAL);
		enc_rawstr(&e, p->runtime, PROTO_RUNTIME_MAX);
		enc_array(&e, p->npackages);
		for (k = 0; e.err == 0 && k < p->npackages; k++) {
			if (p->packages[k] != NULL && p->packages[k][0] == '\0')
				enc_fail(&e, -EINVAL);
			enc_rawstr(&e, p->packages[k], PROTO_PACKAGE_NAME_MAX);
		}
	}
	if (info->nprofiles > 0) {
		enc_rawstr(&e, "profiles", PROTO_STR_MAX);
		enc_array(&e, info->nprofiles);
	}
	for (i = 0; e.err == 0 && i < info->nprofiles; i++) {
		const struct proto_profile *p = &info->profiles[i];

		bool proxy = p->network != NULL && !strcmp(p->network, "proxy");

		enc_map(&e, 6 + (p->network != NULL) + 2 * proxy + (p->nhidden_paths > 0) +
				    (p->nmounts > 0) + (p->nallow_mounts > 0) +
				    (p->nblocked_imports > 0));
		enc_kv_profile(&e, "name", p->name);
		enc_kv_bool(&e, "default", p->is_default);
		enc_kv_limits(&e, "limits", &p->limits);
		enc_kv_limits(&e, "ceilings", &p->ceilings);
		if (p->network != NULL)
			enc_kv_oneof(&e, "network", proto_netmodes, p->network);
		if (proxy) {
			enc_strlist(&e, "allow_hosts", p->allow_hosts, p->nallow_hosts,
				    PROTO_ALLOW_MAX, PROTO_ALLOW_ENTRY_MAX);
			enc_strlist(&e, "allow_private_hosts", p->allow_private_hosts,
				    p->nallow_private_hosts, PROTO_ALLOW_MAX,
				    PROTO_ALLOW_ENTRY_MAX);
		}
		enc_kv_bool(&e, "file_write", !p->no_file_write);
		enc_kv_bool(&e, "subprocess", !p->no_subprocess);
		if (p->nhidden_paths > 0)
			enc_strlist(&e, "hidden_paths", p->hidden_paths, p->nhidden_paths,
				    PROTO_HIDDEN_MAX, PROTO_HIDDEN_PATH_MAX);
		if (p->nmounts > 0)
			enc_namelist(&e, "mounts", p->mounts, p->nmounts, DEC_MOUNTV);
		if (p->nallow_mounts > 0)
			enc_namelist(&e, "allow_mounts", p->allow_mounts, p->nallow_mounts,
				     DEC_MOUNTV);
		if (p->nblocked_imports > 0)
			enc_namelist(&e, "blocked_imports", p->blocked_imports, p->nblocked_imports,
				     DEC_MODULEV);
	}
	if (info->nmounts > 0) {
		enc_rawstr(&e, "mounts", PROTO_STR_MAX);
		enc_array(&e, info->nmounts);
	}
	for (i = 0; e.err == 0 && i < info->nmounts; i++) {
		const struct proto_mount_info *m = &info->mounts[i];

		if (m->name == NULL || !rules_mount_name_valid(m->name))
			enc_fail(&e, -EINVAL);
		enc_map(&e, 3);
		enc_kv_str(&e, "name", m->name, PROTO_MOUNT_MAX, true);
		enc_kv_str(&e, "target", m->target, PROTO_NAME_MAX, true);
		enc_kv_bool(&e, "package", m->package);
	}
	/* The capacity: each key only when known (0 is no daemon's value). */
	if (info->max_runs != 0)
		enc_kv_uint(&e, "max_runs", info->max_runs);
	if (info->max_runs_per_uid != 0)
		enc_kv_uint(&e, "max_runs_per_uid", info->max_runs_per_uid);
	if (info->max_interpreters != 0)
		enc_kv_uint(&e, "max_interpreters", info->max_interpreters);
	if (info->max_interpreters_per_uid != 0)
		enc_kv_uint(&e, "max_interpreters_per_uid", info->max_interpreters_per_uid);
	return enc_finish(&e, ret);
}

/* run.env: names checked like the decoder checks them. */
static void
enc_env(struct proto_enc *e, const struct proto_env *env, size_t n)
{
	size_t i, klen;
	int r;

	if (n > PROTO_ENV_MAX || (n > 0 && env == NULL))
		enc_fail(e, n > PROTO_ENV_MAX ? -E2BIG : -EINVAL);
	enc_rawstr(e, "env", PROTO_STR_MAX);
	enc_map(e, n);
	for (i = 0; e->err == 0 && i < n; i++) {
		klen = env[i].key != NULL ? strlen(env[i].key) : 0;
		r = rules_env_name_check(env[i].key, klen);
		if (r < 0)
			enc_fail(e, r);
		enc_rawstr(e, env[i].key, PROTO_ENV_KEY_MAX);
		enc_rawstr(e, env[i].value, PROTO_STR_MAX);
	}
}

/* run.tools. */
static void
enc_tools(struct proto_enc *e, const struct proto_tool *t, size_t n)
{
	size_t i;

	if (n > PROTO_TOOLS_MAX || t == NULL)
		enc_fail(e, t == NULL ? -EINVAL : -E2BIG);
	enc_rawstr(e, "tools", PROTO_STR_MAX);
	enc_array(e, n);
	for (i = 0; e->err == 0 && i < n; i++) {
		if (t[i].name == NULL || !rules_tool_name_check(t[i].name, strlen(t[i].name)) ||
		    (t[i].schema != NULL && jsonscan_object(t[i].schema, strlen(t[i].schema)) < 0))
			enc_fail(e, -EINVAL);
		enc_map(e, 1 + (t[i].description != NULL) + (t[i].schema != NULL));
		enc_kv_str(e, "name", t[i].name, PROTO_TOOL_NAME_MAX, true);
		if (t[i].description != NULL)
			enc_kv_str(e, "description", t[i].description, PROTO_TOOL_DESC_MAX, false);
		if (t[i].schema != NULL)
			enc_kv_str(e, "schema", t[i].schema, PROTO_TOOL_SCHEMA_MAX, true);
	}
}

/* result.tool_calls. */
static void
enc_tool_records(struct proto_enc *e, const struct proto_tool_record *r, size_t n)
{
	size_t i;

	if (n > PROTO_TOOL_CALLS_LISTED_MAX || (n > 0 && r == NULL))
		enc_fail(e, n > PROTO_TOOL_CALLS_LISTED_MAX ? -E2BIG : -EINVAL);
	enc_rawstr(e, "tool_calls", PROTO_STR_MAX);
	enc_array(e, n);
	for (i = 0; e->err == 0 && i < n; i++) {
		if ((size_t)r[i].outcome >= PROTO_TOOL_OUTCOME_COUNT_)
			enc_fail(e, -EINVAL);
		enc_map(e, 5);
		enc_kv_str(e, "tool", r[i].tool, PROTO_TOOL_NAME_MAX, false);
		enc_rawstr(e, "outcome", PROTO_STR_MAX);
		enc_rawstr(e, proto_tool_outcome_name(r[i].outcome), PROTO_NAME_MAX);
		enc_kv_uint(e, "ms", r[i].ms);
		enc_kv_uint(e, "args_bytes", r[i].args_bytes);
		enc_kv_uint(e, "result_bytes", r[i].result_bytes);
	}
}

/* run.files. */
static void
enc_files(struct proto_enc *e, const struct proto_file *files, size_t n)
{
	size_t i;

	if (n > PROTO_FILES_MAX || (n > 0 && files == NULL))
		enc_fail(e, n > PROTO_FILES_MAX ? -E2BIG : -EINVAL);
	enc_rawstr(e, "files", PROTO_STR_MAX);
	enc_array(e, n);
	for (i = 0; e->err == 0 && i < n; i++) {
		enc_map(e, 2);
		enc_kv_str(e, "name", files[i].name, PROTO_NAME_MAX, true);
		enc_kv_blob(e, "data", &files[i].data);
	}
}

int
proto_encode_run(uint32_t id, const struct proto_run *run, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (run == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_RUN, id,
		  2 + run->code.present + (run->argc > 0) + (run->nenv > 0) +
			  run->stdin_data.present + (run->nfiles > 0) + run->file_bundle.present +
			  (run->session != NULL) + run->stream + (run->profile != NULL) +
			  (run->nmounts > 0) + (run->ntools > 0) + run->cell);
	enc_kv_str(&e, "runtime", run->runtime, PROTO_RUNTIME_MAX, true);
	if (run->code.present)
		enc_kv_blob(&e, "code", &run->code);
	if (run->argc > 0) {
		if (run->argc > PROTO_ARGV_MAX || run->argv == NULL)
			enc_fail(&e, run->argv == NULL ? -EINVAL : -E2BIG);
		enc_rawstr(&e, "argv", PROTO_STR_MAX);
		enc_array(&e, run->argc);
		for (i = 0; e.err == 0 && i < run->argc; i++)
			enc_rawstr(&e, run->argv[i], PROTO_STR_MAX);
	}
	if (run->nenv > 0)
		enc_env(&e, run->env, run->nenv);
	if (run->stdin_data.present)
		enc_kv_blob(&e, "stdin", &run->stdin_data);
	if (run->nfiles > 0)
		enc_files(&e, run->files, run->nfiles);
	if (run->file_bundle.present)
		enc_kv_blob(&e, "file_bundle", &run->file_bundle);
	enc_kv_limits(&e, "limits", &run->limits);
	if (run->session != NULL)
		enc_kv_session(&e, "session", run->session);
	if (run->stream)
		enc_kv_bool(&e, "stream", true);
	if (run->profile != NULL)
		enc_kv_profile(&e, "profile", run->profile);
	if (run->nmounts > 0) {
		if (run->nmounts > PROTO_MOUNTS_MAX)
			enc_fail(&e, -E2BIG);
		enc_rawstr(&e, "mounts", PROTO_STR_MAX);
		enc_array(&e, run->nmounts);
		for (i = 0; e.err == 0 && i < run->nmounts; i++) {
			if (run->mounts[i] == NULL || !rules_mount_name_valid(run->mounts[i]))
				enc_fail(&e, -EINVAL);
			else
				enc_rawstr(&e, run->mounts[i], PROTO_MOUNT_MAX);
		}
	}
	if (run->ntools > 0)
		enc_tools(&e, run->tools, run->ntools);
	if (run->cell)
		enc_kv_bool(&e, "cell", true);
	return enc_finish(&e, ret);
}

/* A stream or artifact's data must agree with its total and flag. */
static bool
enc_partial_ok(const struct proto_blob *b, uint64_t total, bool truncated)
{
	return b->len <= total && truncated == (b->len < total);
}

/* result.artifacts. */
static void
enc_artifacts(struct proto_enc *e, const char *key, const struct proto_artifact *a, size_t n,
	      size_t max)
{
	size_t i;

	if (n > max || (n > 0 && a == NULL))
		enc_fail(e, n > max ? -E2BIG : -EINVAL);
	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_array(e, n);
	for (i = 0; e->err == 0 && i < n; i++) {
		if (!enc_partial_ok(&a[i].data, a[i].size, a[i].truncated))
			enc_fail(e, -EINVAL);
		enc_map(e, 4);
		enc_kv_str(e, "name", a[i].name, PROTO_NAME_MAX, true);
		enc_kv_uint(e, "size", a[i].size);
		enc_kv_bool(e, "truncated", a[i].truncated);
		enc_kv_blob(e, "data", &a[i].data);
	}
}

/* result.network: bounds checked like the decoder checks them. */
static void
enc_network(struct proto_enc *e, const struct proto_network *n)
{
	size_t i;

	if (n->ncontacted > PROTO_NET_REPORT_MAX || n->nrefusals > PROTO_NET_REPORT_MAX ||
	    (n->nrefusals > 0 && n->refusals == NULL)) {
		enc_fail(e, -E2BIG);
		return;
	}
	enc_rawstr(e, "network", PROTO_STR_MAX);
	enc_map(e, 6);
	enc_kv_uint(e, "bytes_up", n->bytes_up);
	enc_kv_uint(e, "bytes_down", n->bytes_down);
	enc_kv_uint(e, "connections", n->connections);
	enc_kv_uint(e, "refused", n->refused);
	enc_rawstr(e, "contacted", PROTO_STR_MAX);
	enc_array(e, n->ncontacted);
	for (i = 0; e->err == 0 && i < n->ncontacted; i++)
		enc_rawstr(e, n->contacted[i], PROTO_NET_TARGET_MAX);
	enc_rawstr(e, "refusals", PROTO_STR_MAX);
	enc_array(e, n->nrefusals);
	for (i = 0; e->err == 0 && i < n->nrefusals; i++) {
		enc_map(e, 2);
		enc_kv_str(e, "host", n->refusals[i].host, PROTO_NET_TARGET_MAX, false);
		enc_kv_str(e, "reason", n->refusals[i].reason, PROTO_NET_REASON_MAX, true);
	}
}

int
proto_encode_result(uint32_t id, const struct proto_result *res, struct proto_out *ret)
{
	static const char *const keys[2][3] = {{"stdout", "stdout_bytes", "stdout_truncated"},
					       {"stderr", "stderr_bytes", "stderr_truncated"}};
	enum proto_outcome oc;
	struct proto_enc e;
	bool has_tools;
	size_t i;

	if (res == NULL || ret == NULL || (size_t)res->outcome >= PROTO_OUTCOME_COUNT_)
		return -EINVAL;
	oc = res->outcome;
	has_tools = res->ntool_calls > 0 || res->tool_calls_omitted > 0;
	if (res->cell != 0 && res->state == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_RESULT, id,
		  14 + 2 * has_tools + (res->nadvisories > 0) +
			  (res->cell != 0 ? 2 + (res->value != NULL) + (res->ndisplay > 0) : 0) +
			  (oc == PROTO_OUTCOME_EXITED || oc == PROTO_OUTCOME_SIGNALED ||
			   oc == PROTO_OUTCOME_ERROR) +
			  (res->network != NULL));
	enc_rawstr(&e, "outcome", PROTO_STR_MAX);
	enc_rawstr(&e, proto_outcome_name(oc), PROTO_NAME_MAX);
	if (oc == PROTO_OUTCOME_EXITED)
		enc_kv_int(&e, "exit_code", res->exit_code);
	if (oc == PROTO_OUTCOME_SIGNALED)
		enc_kv_int(&e, "signal", res->signal);
	if (oc == PROTO_OUTCOME_ERROR)
		enc_kv_str(&e, "error", res->error, PROTO_STR_MAX, false);
	enc_kv_uint(&e, "wall_ms", res->wall_ms);
	enc_kv_uint(&e, "cpu_ms", res->cpu_ms);
	enc_kv_uint(&e, "memory_peak_bytes", res->memory_peak_bytes);
	enc_kv_uint(&e, "queued_ms", res->queued_ms);
	for (i = 0; i < 2; i++) {
		const struct proto_stream_out *s = &res->out[i];

		if (!enc_partial_ok(&s->data, s->total, s->truncated))
			enc_fail(&e, -EINVAL);
		enc_kv_blob(&e, keys[i][0], &s->data);
		enc_kv_uint(&e, keys[i][1], s->total);
		enc_kv_bool(&e, keys[i][2], s->truncated);
	}
	enc_artifacts(&e, "artifacts", res->artifacts, res->nartifacts, PROTO_ARTIFACTS_MAX);
	enc_kv_uint(&e, "artifacts_omitted", res->artifacts_omitted);
	enc_kv_uint(&e, "artifacts_omitted_bytes", res->artifacts_omitted_bytes);
	if (res->network != NULL)
		enc_network(&e, res->network);
	if (has_tools) {
		enc_tool_records(&e, res->tool_calls, res->ntool_calls);
		enc_kv_uint(&e, "tool_calls_omitted", res->tool_calls_omitted);
	}
	if (res->cell != 0) {
		enc_kv_uint(&e, "cell", res->cell);
		enc_kv_oneof(&e, "state", proto_cell_states, res->state);
		if (res->value != NULL)
			enc_kv_str(&e, "value", res->value, PROTO_VALUE_MAX, false);
		if (res->ndisplay > 0)
			enc_artifacts(&e, "display", res->display, res->ndisplay,
				      PROTO_DISPLAY_MAX);
	}
	if (res->nadvisories > 0)
		enc_strlist(&e, "advisories", res->advisories, res->nadvisories,
			    PROTO_ADVISORIES_MAX, PROTO_ADVISORY_MAX);
	return enc_finish(&e, ret);
}

int
proto_encode_cancel(uint32_t id, const struct proto_cancel *c, struct proto_out *ret)
{
	struct proto_enc e;

	if (c == NULL || ret == NULL || (c->request == 0) == (c->run == 0))
		return -EINVAL;
	enc_begin(&e, PROTO_CANCEL, id, 1);
	if (c->request != 0)
		enc_kv_uint(&e, "request", c->request);
	else
		enc_kv_uint(&e, "run", c->run);
	return enc_finish(&e, ret);
}

int
proto_encode_ps(uint32_t id, const struct proto_ps *ps, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (ps == NULL || ret == NULL || (ps->nruns > 0 && ps->runs == NULL))
		return -EINVAL;
	if (ps->nruns > PROTO_PS_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_PS_OK, id, 1);
	enc_rawstr(&e, "runs", PROTO_STR_MAX);
	enc_array(&e, ps->nruns);
	for (i = 0; e.err == 0 && i < ps->nruns; i++) {
		const struct proto_ps_entry *p = &ps->runs[i];

		enc_map(&e, 6);
		enc_kv_uint(&e, "run", p->run);
		enc_kv_uint(&e, "uid", p->uid);
		enc_kv_int(&e, "pid", p->pid);
		enc_kv_str(&e, "runtime", p->runtime, PROTO_RUNTIME_MAX, true);
		enc_kv_str(&e, "state", p->state, PROTO_NAME_MAX, true);
		enc_kv_uint(&e, "elapsed_ms", p->elapsed_ms);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_session_open(uint32_t id, const struct proto_session_open *o, struct proto_out *ret)
{
	struct proto_enc e;

	if (o == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_SESSION_OPEN, id, 4 + (o->profile != NULL) + (o->interpreter != NULL));
	enc_kv_uint(&e, "workspace_bytes", o->workspace_bytes);
	enc_kv_uint(&e, "idle_timeout_ms", o->idle_timeout_ms);
	enc_kv_uint(&e, "lifetime_ms", o->lifetime_ms);
	enc_kv_limits(&e, "limits", &o->limits);
	if (o->profile != NULL)
		enc_kv_profile(&e, "profile", o->profile);
	if (o->interpreter != NULL)
		enc_kv_str(&e, "interpreter", o->interpreter, PROTO_RUNTIME_MAX, true);
	return enc_finish(&e, ret);
}

int
proto_encode_session(uint32_t id, enum proto_type type, const char *session, struct proto_out *ret)
{
	struct proto_enc e;

	if (ret == NULL || (type != PROTO_SESSION_OK && type != PROTO_SESSION_CLOSE))
		return -EINVAL;
	enc_begin(&e, type, id, 1);
	enc_kv_session(&e, "session", session);
	return enc_finish(&e, ret);
}

int
proto_encode_session_list(uint32_t id, const struct proto_session_list *l, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (l == NULL || ret == NULL || (l->nsessions > 0 && l->sessions == NULL))
		return -EINVAL;
	if (l->nsessions > PROTO_SESSIONS_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_SESSION_LIST_OK, id, 1);
	enc_rawstr(&e, "sessions", PROTO_STR_MAX);
	enc_array(&e, l->nsessions);
	for (i = 0; e.err == 0 && i < l->nsessions; i++) {
		const struct proto_session_entry *s = &l->sessions[i];

		enc_map(&e, 5 + (s->interpreter != NULL));
		enc_kv_session(&e, "session", s->session);
		enc_kv_uint(&e, "age_ms", s->age_ms);
		enc_kv_uint(&e, "idle_ms", s->idle_ms);
		enc_kv_uint(&e, "runs", s->runs);
		enc_kv_oneof(&e, "state", proto_session_states, s->state);
		if (s->interpreter != NULL)
			enc_kv_str(&e, "interpreter", s->interpreter, PROTO_RUNTIME_MAX, true);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_file_op(uint32_t id, enum proto_type type, const struct proto_file_op *op,
		     struct proto_out *ret)
{
	bool list = type == PROTO_FILE_LIST, wr = type == PROTO_FILE_WRITE;
	struct proto_enc e;

	if (op == NULL || ret == NULL ||
	    (!list && !wr && type != PROTO_FILE_READ && type != PROTO_FILE_DELETE))
		return -EINVAL;
	/* file_list may leave the path out (NULL or ""): the workspace itself. */
	enc_begin(&e, type, id, 1 + (!list || op->path != NULL) + wr);
	enc_kv_session(&e, "session", op->session);
	if (!list || op->path != NULL)
		enc_kv_str(&e, "path", op->path, PROTO_PATH_MAX, !list);
	if (wr)
		enc_kv_blob(&e, "data", &op->data);
	return enc_finish(&e, ret);
}

int
proto_encode_file_data(uint32_t id, const struct proto_file_data *d, struct proto_out *ret)
{
	struct proto_enc e;

	if (d == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_FILE_DATA, id, 3);
	if (!enc_partial_ok(&d->data, d->size, d->truncated))
		enc_fail(&e, -EINVAL);
	enc_kv_blob(&e, "data", &d->data);
	enc_kv_uint(&e, "size", d->size);
	enc_kv_bool(&e, "truncated", d->truncated);
	return enc_finish(&e, ret);
}

int
proto_encode_file_list(uint32_t id, const struct proto_file_list *l, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (l == NULL || ret == NULL || (l->nentries > 0 && l->entries == NULL))
		return -EINVAL;
	if (l->nentries > PROTO_LIST_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_FILE_LIST_OK, id, 2);
	enc_kv_bool(&e, "truncated", l->truncated);
	enc_rawstr(&e, "entries", PROTO_STR_MAX);
	enc_array(&e, l->nentries);
	for (i = 0; e.err == 0 && i < l->nentries; i++) {
		const struct proto_file_entry *f = &l->entries[i];

		enc_map(&e, 4);
		enc_kv_str(&e, "name", f->name, PROTO_NAME_MAX, true);
		enc_kv_oneof(&e, "kind", proto_file_kinds, f->kind);
		enc_kv_uint(&e, "size", f->size);
		enc_kv_uint(&e, "mtime_ms", f->mtime_ms);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_stream(uint32_t id, const struct proto_stream *s, struct proto_out *ret)
{
	struct proto_enc e;

	/* Inline only: a present blob with an fd is a memfd, which a stream never is. */
	if (s == NULL || ret == NULL || !s->data.present || s->data.fd >= 0 || s->data.len == 0 ||
	    s->data.data == NULL)
		return -EINVAL;
	if (s->data.len > PROTO_INLINE_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_STREAM, id, 2);
	enc_kv_oneof(&e, "stream", proto_stream_names, s->stream);
	enc_kv_blob(&e, "data", &s->data);
	return enc_finish(&e, ret);
}

int
proto_encode_tool_call(uint32_t id, const struct proto_tool_call *c, struct proto_out *ret)
{
	struct proto_enc e;

	if (c == NULL || ret == NULL || c->call == 0 || !c->args.present || c->tool == NULL ||
	    !rules_tool_name_check(c->tool, strlen(c->tool)))
		return -EINVAL;
	if (c->args.len > PROTO_TOOL_BYTES_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_TOOL_CALL, id, 3);
	enc_kv_uint(&e, "call", c->call);
	enc_kv_str(&e, "tool", c->tool, PROTO_TOOL_NAME_MAX, true);
	enc_kv_blob(&e, "args", &c->args);
	return enc_finish(&e, ret);
}

int
proto_encode_tool_reply(uint32_t id, const struct proto_tool_reply *r, struct proto_out *ret)
{
	struct proto_enc e;

	if (r == NULL || ret == NULL || r->call == 0 || r->result.present != r->ok ||
	    (r->error != NULL) == r->ok || (r->refused && r->ok))
		return -EINVAL;
	if (r->result.len > PROTO_TOOL_BYTES_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_TOOL_REPLY, id, 2 + 1 + r->refused);
	enc_kv_uint(&e, "call", r->call);
	enc_kv_bool(&e, "ok", r->ok);
	if (r->ok)
		enc_kv_blob(&e, "result", &r->result);
	else
		enc_kv_str(&e, "error", r->error, PROTO_TOOL_ERROR_MAX, false);
	if (r->refused)
		enc_kv_bool(&e, "refused", true);
	return enc_finish(&e, ret);
}

int
proto_encode_error(uint32_t id, enum proto_error code, const char *message, struct proto_out *ret)
{
	char buf[PROTO_MSG_PRINTABLE_MAX + 1];
	struct proto_enc e;

	if (ret == NULL || code <= PROTO_ERR_NONE || code >= PROTO_ERR_COUNT_)
		return -EINVAL;
	/* An error path must not fail on a long message: cut it to the bound. */
	snprintf(buf, sizeof(buf), "%s", message != NULL ? message : proto_error_message(code));
	enc_begin(&e, PROTO_ERROR, id, 2);
	enc_rawstr(&e, "code", PROTO_STR_MAX);
	enc_rawstr(&e, proto_error_name(code), PROTO_NAME_MAX);
	enc_kv_str(&e, "message", buf, PROTO_MSG_PRINTABLE_MAX, false);
	return enc_finish(&e, ret);
}

void
proto_out_free(struct proto_out *out)
{
	size_t i;

	if (out == NULL)
		return;
	fdpass_close_all(out->fds, out->nfds < PROTO_FDS_MAX ? out->nfds : PROTO_FDS_MAX);
	free(out->buf);
	out->buf = NULL;
	out->len = 0;
	out->nfds = 0;
	for (i = 0; i < PROTO_FDS_MAX; i++)
		out->fds[i] = -1;
}

int
proto_send(int sock, const struct proto_out *out)
{
	if (out == NULL || out->buf == NULL || out->len == 0 || out->nfds > PROTO_FDS_MAX)
		return -EINVAL;
	return fdpass_send(sock, out->buf, out->len, out->fds, out->nfds);
}
