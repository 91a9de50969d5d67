/* result.h: building results and info objects from decoded messages (internal). */
#ifndef AIRLOCK_RESULT_H
#define AIRLOCK_RESULT_H

#include "proto.h"

struct airlock_result;
struct airlock_info;

/* Copy a decoded result into a new airlock_result that does not depend on
 * the message (memfd payloads are mapped, not copied). Returns 0 or -errno. */
int result_from_proto(const struct proto_result *pr, struct airlock_result **ret);

/* Copy a decoded info reply into a new airlock_info. Returns 0 or -errno. */
int result_info_from_proto(const struct proto_info *pi, struct airlock_info **ret);

#endif
