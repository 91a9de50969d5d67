/* proto.c: the single implementation of the wire protocol (see docs/protocol.md). */
#include "proto.h"

#include <errno.h>
#include <string.h>

static const char *const proto_type_names[] = {
	[PROTO_HELLO] = "hello",   [PROTO_HELLO_OK] = "hello_ok", [PROTO_PING] = "ping",
	[PROTO_PONG] = "pong",     [PROTO_INFO] = "info",         [PROTO_INFO_OK] = "info_ok",
	[PROTO_RUN] = "run",       [PROTO_RESULT] = "result",     [PROTO_ERROR] = "error",
};

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
	[PROTO_OUTCOME_EXITED] = "exited",         [PROTO_OUTCOME_SIGNALED] = "signaled",
	[PROTO_OUTCOME_WALL_LIMIT] = "wall_limit", [PROTO_OUTCOME_CPU_LIMIT] = "cpu_limit",
	[PROTO_OUTCOME_MEMORY_LIMIT] = "memory_limit", [PROTO_OUTCOME_ERROR] = "error",
};

static const char *const proto_limit_names[PROTO_LIMIT_COUNT_] = {
	[PROTO_LIMIT_WALL_MS] = "wall_ms",
	[PROTO_LIMIT_CPU_MS] = "cpu_ms",
	[PROTO_LIMIT_MEMORY_BYTES] = "memory_bytes",
	[PROTO_LIMIT_PROCESSES] = "processes",
	[PROTO_LIMIT_OPEN_FILES] = "open_files",
	[PROTO_LIMIT_FILE_SIZE_BYTES] = "file_size_bytes",
	[PROTO_LIMIT_OUTPUT_BYTES] = "output_bytes",
	[PROTO_LIMIT_WORKSPACE_BYTES] = "workspace_bytes",
	[PROTO_LIMIT_TMP_BYTES] = "tmp_bytes",
	[PROTO_LIMIT_ARTIFACTS] = "artifacts",
	[PROTO_LIMIT_ARTIFACT_BYTES] = "artifact_bytes",
};

const char *
proto_type_name(enum proto_type type)
{
	if ((size_t)type >= sizeof(proto_type_names) / sizeof(proto_type_names[0]) ||
	    proto_type_names[type] == NULL)
		return "unknown";
	return proto_type_names[type];
}

const char *
proto_error_name(enum proto_error code)
{
	if ((size_t)code >= PROTO_ERR_COUNT_)
		return "internal";
	return proto_error_names[code];
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
	size_t i;

	for (i = 1; i < PROTO_ERR_COUNT_; i++)
		if (strcmp(proto_error_names[i], name) == 0) {
			*ret = (enum proto_error)i;
			return 0;
		}
	return -ENOENT;
}

const char *
proto_outcome_name(enum proto_outcome outcome)
{
	if ((size_t)outcome >= PROTO_OUTCOME_COUNT_)
		return "error";
	return proto_outcome_names[outcome];
}

int
proto_outcome_from_name(const char *name, enum proto_outcome *ret)
{
	size_t i;

	for (i = 0; i < PROTO_OUTCOME_COUNT_; i++)
		if (strcmp(proto_outcome_names[i], name) == 0) {
			*ret = (enum proto_outcome)i;
			return 0;
		}
	return -ENOENT;
}

const char *
proto_limit_name(enum proto_limit limit)
{
	if ((size_t)limit >= PROTO_LIMIT_COUNT_)
		return "unknown";
	return proto_limit_names[limit];
}

/* CODEC: implemented below by the protocol module (encode/decode). */
