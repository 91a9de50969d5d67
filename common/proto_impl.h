/*
 * proto_impl.h: what the files of the protocol module share and nobody else
 * sees (proto.c names and bounds; proto_dec.c, proto_dec_msg.c decode;
 * proto_enc.c, proto_enc_msg.c encode). Not installed, not for callers:
 * they use proto.h.
 */
#ifndef AIRLOCK_PROTO_IMPL_H
#define AIRLOCK_PROTO_IMPL_H

#include "proto.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* One past the last message type: the length of the name and schema tables. */
#define PROTO_TYPE_END_ (PROTO_SESSION_SAVE + 1)

/* Nesting the pre-scan accepts; version 1 needs 5 levels. */
#define PROTO_DEPTH_MAX 16
#define PROTO_BLOB_MEMFD_NAME "airlock-blob"

/* The kinds of field the decoder knows (proto_dec.c); the encoder names
 * two of them (enc_namelist). */
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
	DEC_PROCESSES,	   /* [{pid, name, cpu_ms, memory_bytes}]: session_ps_ok */
	DEC_KIND_COUNT_,
};

/* The name of each message type (proto.c). */
extern const char *const proto_type_names[PROTO_TYPE_END_];

/* The closed sets of names some string fields take (NULL-terminated). */
extern const char *const proto_file_kinds[];
extern const char *const proto_session_states[];
extern const char *const proto_stream_names[];
extern const char *const proto_netmodes[];
extern const char *const proto_cell_states[];

/* The entry of a NULL-terminated name set equal to s, or NULL. */
const char *proto_name_in(const char *const *names, const char *s);

#endif
