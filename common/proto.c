/*
 * proto.c: the names and bounds of the wire protocol (docs/protocol.md). The
 * protocol module is five files: this one; proto_dec.c (strict primitives)
 * and proto_dec_msg.c (each message's schema, proto_decode()); proto_enc.c
 * (primitives) and proto_enc_msg.c (each message's encoder).
 */
#include "proto.h"
#include "proto_impl.h"

#include <errno.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "fdpass.h"
#include "limit.h"
#include "nametab.h"

const char *const proto_type_names[PROTO_TYPE_END_] = {
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
	[PROTO_SESSION_PS] = "session_ps",
	[PROTO_SESSION_PS_OK] = "session_ps_ok",
	[PROTO_PROCESS_STOP] = "process_stop",
	[PROTO_SESSION_EXTEND] = "session_extend",
	[PROTO_SESSION_SAVE] = "session_save",
};

/* The closed sets of names some string fields take (NULL-terminated). */
const char *const proto_file_kinds[] = {"file", "dir", "link", "other", NULL};
const char *const proto_session_states[] = {"idle", "running", NULL};
const char *const proto_stream_names[] = {"stdout", "stderr", NULL};
const char *const proto_netmodes[] = {"none", "proxy", NULL};
const char *const proto_cell_states[] = {"kept", "lost", NULL};

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

/* The entry of a NULL-terminated name set equal to s, or NULL. */
const char *
proto_name_in(const char *const *names, const char *s)
{
	size_t i;

	for (i = 0; s != NULL && names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0)
			return names[i];
	return NULL;
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
