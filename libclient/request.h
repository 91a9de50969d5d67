/* request.h: run requests as the library stores them (internal). */
#ifndef AIRLOCK_REQUEST_H
#define AIRLOCK_REQUEST_H

#include "proto.h"

struct airlock_run_req;

/*
 * Encode req as a run message with request id. Blobs above PROTO_INLINE_MAX
 * become sealed memfds (the codec's doing). Returns 0 or -errno.
 */
int request_encode(const struct airlock_run_req *req, uint32_t id, struct proto_out *ret);

#endif
