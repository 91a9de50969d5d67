/* ps.h: lists of runs in progress (airlock_ps) built from a ps_ok reply (internal). */
#ifndef AIRLOCK_PS_H
#define AIRLOCK_PS_H

#include "proto.h"

struct airlock_ps;

/* Copy a decoded ps_ok reply into a new airlock_ps that does not depend on
 * the message. Returns 0 or -ENOMEM. */
int ps_from_proto(const struct proto_ps *pp, struct airlock_ps **ret);

#endif
