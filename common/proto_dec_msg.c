/* proto_dec_msg.c: the schema of each message and proto_decode() (docs/protocol.md). */
#include "proto_dec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fdpass.h"
#include "jsonscan.h"

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
	{"figures_svg", DEC_BOOL, 0, U(proto_run, figures_svg), 0, 0, 0},
	{"ipython", DEC_BOOL, 0, U(proto_run, ipython), 0, 0, 0},
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
	{"restarted", DEC_BOOL, 0, U(proto_result, restarted), 0, 0, 0},
	{"ename", DEC_STR, DF_NONEMPTY, U(proto_result, ename), 0, PROTO_ENAME_MAX, 0},
	{"evalue", DEC_STR, 0, U(proto_result, evalue), 0, PROTO_EVALUE_MAX, 0},
	{"traceback", DEC_STR, 0, U(proto_result, traceback), 0, PROTO_TRACEBACK_MAX, 0},
	{"value", DEC_STR, 0, U(proto_result, value), 0, PROTO_VALUE_MAX, 0},
	{"display", DEC_ARTIFACTS, 0, U(proto_result, display), U(proto_result, ndisplay),
	 PROTO_DISPLAY_MAX, 0},
	{"value_display", DEC_U32, 0, U(proto_result, value_display), 0, 0, 0},
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
	{"more", DEC_U64, 0, U(proto_ps, more), 0, 0, 0},
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
	{"detached", DEC_BOOL, 0, U(proto_session_open, detached), 0, 0, 0},
	{"background", DEC_BOOL, 0, U(proto_session_open, background), 0, 0, 0},
	{"archive", DEC_BLOB, 0, U(proto_session_open, archive), 0, 0, 0},
};

/* session_ok, session_close */
static const struct dec_field dec_session_ref_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_session_ref, session), 0, 0, 0},
};

static const struct dec_field dec_session_extend_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_session_extend, session), 0, 0, 0},
	{"lifetime_ms", DEC_U64, DF_REQUIRED, U(proto_session_extend, lifetime_ms), 0, 0, 0},
};

static const struct dec_field dec_session_list_ok_fields[] = {
	{"sessions", DEC_SESSIONS, DF_REQUIRED, U(proto_session_list, sessions),
	 U(proto_session_list, nsessions), PROTO_SESSIONS_MAX, 0},
	{"more", DEC_U64, 0, U(proto_session_list, more), 0, 0, 0},
};

static const struct dec_field dec_session_entry_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_session_entry, session), 0, 0, 0},
	{"age_ms", DEC_U64, DF_REQUIRED, U(proto_session_entry, age_ms), 0, 0, 0},
	{"idle_ms", DEC_U64, DF_REQUIRED, U(proto_session_entry, idle_ms), 0, 0, 0},
	{"runs", DEC_U64, DF_REQUIRED, U(proto_session_entry, runs), 0, 0, 0},
	{"state", DEC_SESSION_STATE, DF_REQUIRED, U(proto_session_entry, state), 0, 0, 0},
	{"interpreter", DEC_STR, DF_NONEMPTY, U(proto_session_entry, interpreter), 0,
	 PROTO_RUNTIME_MAX, 0},
	{"background", DEC_BOOL, 0, U(proto_session_entry, background), 0, 0, 0},
};

static const struct dec_field dec_process_fields[] = {
	{"pid", DEC_U32, DF_REQUIRED, U(proto_process, pid), 0, 0, 0},
	{"name", DEC_STR, DF_REQUIRED, U(proto_process, name), 0, PROTO_PROCESS_NAME_MAX, 0},
	{"cpu_ms", DEC_U64, DF_REQUIRED, U(proto_process, cpu_ms), 0, 0, 0},
	{"memory_bytes", DEC_U64, DF_REQUIRED, U(proto_process, memory_bytes), 0, 0, 0},
};

static const struct dec_field dec_session_ps_ok_fields[] = {
	{"processes", DEC_PROCESSES, DF_REQUIRED, U(proto_process_list, processes),
	 U(proto_process_list, nprocesses), PROTO_PROCESSES_MAX, 0},
	{"truncated", DEC_BOOL, 0, U(proto_process_list, truncated), 0, 0, 0},
};

static const struct dec_field dec_process_stop_fields[] = {
	{"session", DEC_SESSION_ID, DF_REQUIRED, U(proto_process_stop, session), 0, 0, 0},
	{"pid", DEC_U32, DF_REQUIRED, U(proto_process_stop, pid), 0, 0, 0},
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

#undef U

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
	[PROTO_SESSION_PS] = {dec_session_ref_fields, NELEM(dec_session_ref_fields)},
	[PROTO_SESSION_PS_OK] = {dec_session_ps_ok_fields, NELEM(dec_session_ps_ok_fields)},
	[PROTO_PROCESS_STOP] = {dec_process_stop_fields, NELEM(dec_process_stop_fields)},
	[PROTO_SESSION_EXTEND] = {dec_session_extend_fields, NELEM(dec_session_extend_fields)},
	[PROTO_SESSION_SAVE] = {dec_session_ref_fields, NELEM(dec_session_ref_fields)},
};

/* Every message type has a name and a schema, and nothing else does. */
_Static_assert(NELEM(dec_schemas) == NELEM(proto_type_names), "a type lacks a schema or name");

/* The element of each array-of-maps kind: its size, its fields, its blob. */
const struct dec_elem dec_elems[] = {
	[DEC_FILES] = {sizeof(struct proto_file), dec_file_fields, NELEM(dec_file_fields),
		       offsetof(struct proto_file, data)},
	[DEC_ARTIFACTS] = {sizeof(struct proto_artifact), dec_artifact_fields,
			   NELEM(dec_artifact_fields), offsetof(struct proto_artifact, data)},
	[DEC_PSRUNS] = {sizeof(struct proto_ps_entry), dec_ps_entry_fields,
			NELEM(dec_ps_entry_fields), DEC_NO_BLOB},
	[DEC_SESSIONS] = {sizeof(struct proto_session_entry), dec_session_entry_fields,
			  NELEM(dec_session_entry_fields), DEC_NO_BLOB},
	[DEC_PROCESSES] = {sizeof(struct proto_process), dec_process_fields,
			   NELEM(dec_process_fields), DEC_NO_BLOB},
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
	[DEC_NETWORK] = {sizeof(struct proto_network), dec_network_fields,
			 NELEM(dec_network_fields), DEC_NO_BLOB},
};

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
	case PROTO_SESSION_OPEN:
		m->u.session_open.archive.fd = -1;
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
	if (m->type == PROTO_SESSION_EXTEND && m->u.session_extend.lifetime_ms == 0)
		return dec_at(d, ".lifetime_ms", PROTO_ERR_BAD_REQUEST, "must not be 0");
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
