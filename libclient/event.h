/* event.h: events of runs, stream chunks and tool calls (internal). */
#ifndef AIRLOCK_EVENT_H
#define AIRLOCK_EVENT_H

#include "proto.h"

struct airlock_event;

/* Copy a decoded stream event of request id into a new airlock_event.
 * Returns 0 or -ENOMEM. */
int event_from_proto(uint32_t id, const struct proto_stream *ps, struct airlock_event **ret);

/* The same for a decoded tool_call of request id. Returns 0 or -ENOMEM. */
int event_from_tool_call(uint32_t id, const struct proto_tool_call *tc, struct airlock_event **ret);

/* The next event in a queue of events (internal link), and setting it. */
struct airlock_event *event_next(const struct airlock_event *ev);
void event_set_next(struct airlock_event *ev, struct airlock_event *next);

#endif
