/*
 * keeper.h: a session's keeper, cloned by the spawner into a new user and
 * mount namespace. It holds the session's workspace (a tmpfs in its mount
 * namespace) and does the session's file operations, resolving every path
 * with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS).
 */
#ifndef AIRLOCKD_KEEPER_H
#define AIRLOCKD_KEEPER_H

#include <stdint.h>

struct keeper_ctx {
	int sync_fd; /* read end: one byte once the uid/gid maps are written */
	int sock;    /* SOCK_SEQPACKET to the frontend */
	uint64_t workspace_bytes;
};

/* Become the keeper. Never returns; exits when the socket closes. */
__attribute__((noreturn)) void keeper_main(const struct keeper_ctx *ctx);

#endif
