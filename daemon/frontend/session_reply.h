/*
 * session_reply.h: a session's file operations answered (session_reply.c),
 * for session.c, from its keeper's answer to the request k (keep_wrap.h).
 */
#ifndef AIRLOCKD_SESSION_REPLY_H
#define AIRLOCKD_SESSION_REPLY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "keep_wrap.h"

struct client;
struct daemon;

/* A keeper's -errno for path as the client's error reply. */
void session_reply_errno(struct client *c, uint32_t req_id, const char *path, int neg_err);
/* ok to a file operation that answers nothing else. */
void session_reply_ok(struct client *c, uint32_t req_id);
/* file_read: the opened file fd (the caller's, closed by it) copied, at
 * most file_max, into a sealed memfd within uid's budget, and sent. */
void session_reply_read(struct daemon *d, uid_t uid, struct kop *k, int fd);
/* file_list: count keeper records (struct keep_entry) read from fd (the
 * caller's), checked, as many as fit in one packet; more: the keeper left
 * some out. */
void session_reply_list(struct kop *k, int fd, uint32_t count, bool more);

#endif
