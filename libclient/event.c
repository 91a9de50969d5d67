/* event.c: stream events, one chunk of a run's output (airlock_event_*). */
#include "airlock.h"
#include "event.h"
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct airlock_event {
	struct airlock_event *next; /* the connection's queue */
	uint32_t id;
	enum airlock_stream stream;
	size_t len;
	uint8_t data[]; /* len >= 1 bytes, at most PROTO_INLINE_MAX */
};

int
event_from_proto(uint32_t id, const struct proto_stream *ps, struct airlock_event **ret)
{
	struct airlock_event *ev;

	/* The decoder bounds an event to an inline bin of 1..PROTO_INLINE_MAX bytes. */
	ev = malloc(sizeof(*ev) + ps->data.len);
	if (ev == NULL)
		return -ENOMEM;
	ev->next = NULL;
	ev->id = id;
	ev->stream =
		strcmp(ps->stream, "stderr") == 0 ? AIRLOCK_STREAM_STDERR : AIRLOCK_STREAM_STDOUT;
	ev->len = ps->data.len;
	if (ps->data.len > 0)
		memcpy(ev->data, ps->data.data, ps->data.len);
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
	return ev != NULL ? ev->stream : (enum airlock_stream)0;
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
