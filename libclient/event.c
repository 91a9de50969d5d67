/* event.c: a run's events: a chunk of its output, or a call of one of its
 * tools (airlock_event_*). */
#include "airlock.h"
#include "event.h"
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct airlock_event {
	struct airlock_event *next; /* the connection's queue */
	uint32_t id;
	enum airlock_event_kind kind;
	enum airlock_stream stream;	    /* AIRLOCK_EVENT_STREAM */
	uint32_t call;			    /* AIRLOCK_EVENT_TOOL_CALL */
	char tool[PROTO_TOOL_NAME_MAX + 1]; /* AIRLOCK_EVENT_TOOL_CALL */
	size_t len;
	uint8_t data[]; /* a stream: 1..PROTO_INLINE_MAX bytes; a call's args, <=
			   PROTO_TOOL_BYTES_MAX */
};

int
event_from_proto(uint32_t id, const struct proto_stream *ps, struct airlock_event **ret)
{
	struct airlock_event *ev;

	/* The decoder bounds an event to an inline bin of 1..PROTO_INLINE_MAX bytes. */
	ev = malloc(sizeof(*ev) + ps->data.len);
	if (ev == NULL)
		return -ENOMEM;
	memset(ev, 0, sizeof(*ev));
	ev->id = id;
	ev->kind = AIRLOCK_EVENT_STREAM;
	ev->stream =
		strcmp(ps->stream, "stderr") == 0 ? AIRLOCK_STREAM_STDERR : AIRLOCK_STREAM_STDOUT;
	ev->len = ps->data.len;
	if (ps->data.len > 0)
		memcpy(ev->data, ps->data.data, ps->data.len);
	*ret = ev;
	return 0;
}

int
event_from_tool_call(uint32_t id, const struct proto_tool_call *tc, struct airlock_event **ret)
{
	struct airlock_event *ev;

	/* The decoder bounds the name (a tool name) and the args (PROTO_TOOL_BYTES_MAX). */
	ev = malloc(sizeof(*ev) + tc->args.len + 1);
	if (ev == NULL)
		return -ENOMEM;
	memset(ev, 0, sizeof(*ev));
	ev->id = id;
	ev->kind = AIRLOCK_EVENT_TOOL_CALL;
	ev->call = tc->call;
	snprintf(ev->tool, sizeof(ev->tool), "%s", tc->tool);
	ev->len = tc->args.len;
	if (tc->args.len > 0)
		memcpy(ev->data, tc->args.data, tc->args.len);
	ev->data[ev->len] = 0; /* args are also a C string (JSON has no NUL) */
	*ret = ev;
	return 0;
}

struct airlock_event *
event_next(const struct airlock_event *ev)
{
	return ev->next;
}

void
event_set_next(struct airlock_event *ev, struct airlock_event *next)
{
	ev->next = next;
}

/* Free an event. */
AIRLOCK_EXPORT void
airlock_event_free(struct airlock_event *ev)
{
	free(ev);
}

/* The request id of the event's run. */
AIRLOCK_EXPORT uint32_t
airlock_event_request_id(const struct airlock_event *ev)
{
	return ev != NULL ? ev->id : 0;
}

/* Which output the event carries. */
AIRLOCK_EXPORT enum airlock_stream
airlock_event_stream(const struct airlock_event *ev)
{
	return ev != NULL && ev->kind == AIRLOCK_EVENT_STREAM ? ev->stream : (enum airlock_stream)0;
}

/* What the event is. */
AIRLOCK_EXPORT enum airlock_event_kind
airlock_event_kind(const struct airlock_event *ev)
{
	return ev != NULL ? ev->kind : (enum airlock_event_kind)0;
}

/* A tool call's number in its run. */
AIRLOCK_EXPORT uint32_t
airlock_event_tool_call(const struct airlock_event *ev)
{
	return ev != NULL && ev->kind == AIRLOCK_EVENT_TOOL_CALL ? ev->call : 0;
}

/* A tool call's tool name. */
AIRLOCK_EXPORT const char *
airlock_event_tool_name(const struct airlock_event *ev)
{
	return ev != NULL && ev->kind == AIRLOCK_EVENT_TOOL_CALL ? ev->tool : NULL;
}

/* The event's bytes. */
AIRLOCK_EXPORT int
airlock_event_data(const struct airlock_event *ev, const void **ret_data, size_t *ret_len)
{
	if (ev == NULL || ret_data == NULL || ret_len == NULL)
		return -EINVAL;
	*ret_data = ev->data;
	*ret_len = ev->len;
	return 0;
}
