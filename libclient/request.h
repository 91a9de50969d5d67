/* request.h: run requests as the library stores them (internal). */
#ifndef AIRLOCK_REQUEST_H
#define AIRLOCK_REQUEST_H

#include "proto.h"

struct airlock_run_req;

#include <stdbool.h>

/*
 * Encode req as a run message with request id, asking for stream events when
 * stream is set (whatever req says). Blobs above PROTO_INLINE_MAX become
 * sealed memfds (the codec's doing). The input files go as "files" when they
 * fit one packet, else as one file_bundle when bundle_ok (the daemon named
 * the feature). Returns 0, -E2BIG (too many or too large for this daemon)
 * or another -errno.
 */
int request_encode(const struct airlock_run_req *req, uint32_t id, bool stream, bool bundle_ok,
		   struct proto_out *ret);

/* Whether req asked for stream events (airlock_run_req_set_stream()). */
bool request_stream(const struct airlock_run_req *req);

/* Whether req declares tools, and whether it declares the tool name. */
bool request_tools(const struct airlock_run_req *req);
bool request_has_tool(const struct airlock_run_req *req, const char *name);

#endif
