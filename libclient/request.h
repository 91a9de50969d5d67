/* request.h: run requests as the library stores them (internal). */
#ifndef AIRLOCK_REQUEST_H
#define AIRLOCK_REQUEST_H

#include "proto.h"

struct airlock_run_req;

#include <stdbool.h>

/*
 * Encode req as a run message with request id, asking for stream events when
 * stream is set (whatever req says). Blobs above PROTO_INLINE_MAX become
 * sealed memfds (the codec's doing). Returns 0 or -errno.
 */
int request_encode(const struct airlock_run_req *req, uint32_t id, bool stream,
		   struct proto_out *ret);

/* Whether req asked for stream events (airlock_run_req_set_stream()). */
bool request_stream(const struct airlock_run_req *req);

#endif
