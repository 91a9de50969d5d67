/* session.h: session options and lists of sessions (internal). */
#ifndef AIRLOCK_SESSION_H
#define AIRLOCK_SESSION_H

#include "proto.h"

struct airlock_session_opts;
struct airlock_session_list;

/* Fill a session_open message from opts (NULL: every value the default). */
void session_opts_to_proto(const struct airlock_session_opts *opts, struct proto_session_open *ret);

/* Copy a decoded session_list_ok reply into a new airlock_session_list that
 * does not depend on the message. Returns 0 or -ENOMEM. */
int session_list_from_proto(const struct proto_session_list *pl, struct airlock_session_list **ret);

struct airlock_process_list;
/* The same for a session_ps_ok reply. */
int process_list_from_proto(const struct proto_process_list *pl, struct airlock_process_list **ret);

#endif
