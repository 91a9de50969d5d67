/*
 * keep_msg.h: the fixed messages between the frontend and a session's keeper
 * (docs/design-sessions.md). One SOCK_SEQPACKET packet per message, exactly
 * the struct's size; fds cross with SCM_RIGHTS. The keeper answers every
 * request with one reply, in order.
 */
#ifndef AIRLOCKD_KEEP_MSG_H
#define AIRLOCKD_KEEP_MSG_H

#include <stdint.h>

#include "proto.h"

enum keep_op {
	KEEP_READY = 1,	 /* keeper -> frontend, once: err = 0 or the set-up's -errno */
	KEEP_MOUNT = 2,	 /* reply fd: a detached clone of the workspace (open_tree) */
	KEEP_WRITE = 3,	 /* request fd: a sealed memfd with the contents */
	KEEP_READ = 4,	 /* reply fd: the regular file, opened read-only */
	KEEP_LIST = 5,	 /* reply fd: a memfd of struct keep_entry, count entries */
	KEEP_DELETE = 6, /* a file, a link or an empty directory */
	KEEP_REPLY = 7,	 /* keeper -> frontend: the answer to one request */
	/* request fd: where to write the workspace as ustar (keeper_tar.h);
	 * reply size: the archive's bytes, count: entries left out */
	KEEP_SAVE = 8,
	KEEP_MKDIR = 9, /* a directory (and its parents), owned by the code's uid */
};

enum keep_kind {
	KEEP_KIND_FILE = 0,
	KEEP_KIND_DIR = 1,
	KEEP_KIND_LINK = 2,
	KEEP_KIND_OTHER = 3,
};

#define KEEP_LIST_MAX PROTO_LIST_MAX

struct keep_req {
	uint32_t op;
	uint32_t seq;
	char path[PROTO_PATH_MAX + 1]; /* NUL-terminated, relative to the workspace */
};

struct keep_reply {
	uint32_t op;	/* KEEP_REPLY or KEEP_READY */
	uint32_t seq;	/* the request's */
	int32_t err;	/* 0 or -errno */
	uint32_t count; /* KEEP_LIST: entries */
	uint64_t size;	/* KEEP_READ: the file's size; KEEP_LIST: 1 if there were more */
};

struct keep_entry {
	char name[PROTO_NAME_MAX + 1];
	uint32_t kind;
	uint32_t reserved;
	uint64_t size;
	uint64_t mtime_ms;
};

#endif
