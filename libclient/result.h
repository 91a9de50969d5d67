/* result.h: building results and info objects from decoded messages (internal). */
#ifndef AIRLOCK_RESULT_H
#define AIRLOCK_RESULT_H

#include "proto.h"

#include <stdbool.h>

struct airlock_result;
struct airlock_info;

/* Bytes owned by a library object: a heap copy, or a read-only mapping of a
 * sealed memfd. */
struct result_bytes {
	void *data;
	size_t len;
	bool mapped;
};

/* Take a decoded blob into *ret so that it outlives the message (a memfd is
 * mapped again, inline bytes are copied). Returns 0 or -errno. */
int result_bytes_take(const struct proto_blob *blob, struct result_bytes *ret);

/* Release what b holds; b is empty afterwards. */
void result_bytes_clear(struct result_bytes *b);

/* Hand out b's bytes, never a NULL pointer. Returns 0 or -EINVAL for NULL
 * out parameters. */
int result_bytes_get(const struct result_bytes *b, const void **ret_data, size_t *ret_len);

/* Copy a decoded result into a new airlock_result that does not depend on
 * the message (memfd payloads are mapped, not copied). Returns 0 or -errno. */
int result_from_proto(const struct proto_result *pr, struct airlock_result **ret);

/* Copy a decoded info reply into a new airlock_info. Returns 0 or -errno. */
int result_info_from_proto(const struct proto_info *pi, struct airlock_info **ret);

#endif
