/*
 * zygote_msg.h: the order the spawner sends a zygote for one run
 * (docs/design-bursts.md §3.3): one fixed-size struct per SOCK_SEQPACKET
 * packet, its fds by SCM_RIGHTS in the order of enum zygote_msg_fd, then
 * the optional ones the flags name, in flag order. The zygote decodes it
 * strictly (zygote_order.c) before anything uses it.
 */
#ifndef AIRLOCKD_ZYGOTE_MSG_H
#define AIRLOCKD_ZYGOTE_MSG_H

#include <stdint.h>

#define ZYGOTE_MSG_MAGIC 0x7a79676fU /* "zygo" */
#define ZYGOTE_MSG_RLIMITS 8
#define ZYGOTE_MSG_CWD_MAX 128

/* Which optional fds follow the fixed ones, in this order. */
enum zygote_msg_flag {
	ZYGOTE_MSG_F_CGROUP_NS = 1u << 0,    /* the code cgroup's namespace */
	ZYGOTE_MSG_F_CGROUP_PROCS = 1u << 1, /* its cgroup.procs, opened by the spawner */
	ZYGOTE_MSG_F_LANDLOCK = 1u << 2,     /* a Landlock ruleset */
	ZYGOTE_MSG_F_ALL_ = (1u << 3) - 1
};

/* The fixed fds, in order. */
enum zygote_msg_fd {
	ZYGOTE_MSG_FD_USER,
	ZYGOTE_MSG_FD_MNT,
	ZYGOTE_MSG_FD_NET,
	ZYGOTE_MSG_FD_IPC,
	ZYGOTE_MSG_FD_UTS,
	ZYGOTE_MSG_FD_PID,
	ZYGOTE_MSG_FD_STDIN,
	ZYGOTE_MSG_FD_STDOUT,
	ZYGOTE_MSG_FD_STDERR,
	ZYGOTE_MSG_FD_REPORT,
	ZYGOTE_MSG_FD_CODE,
	ZYGOTE_MSG_FDS_FIXED_
};

#define ZYGOTE_MSG_FDS_MAX (ZYGOTE_MSG_FDS_FIXED_ + 3)

struct zygote_msg_rlimit {
	int32_t resource;
	uint32_t pad; /* 0 */
	uint64_t cur;
	uint64_t max;
};

struct zygote_msg_order {
	uint32_t magic; /* ZYGOTE_MSG_MAGIC */
	uint32_t flags; /* enum zygote_msg_flag */
	uint32_t uid;	/* the code's, in the run's namespace: not 0 */
	uint32_t gid;
	uint32_t nrlimits; /* <= ZYGOTE_MSG_RLIMITS */
	uint32_t pad;	   /* 0 */
	struct zygote_msg_rlimit rlimit[ZYGOTE_MSG_RLIMITS];
	char cwd[ZYGOTE_MSG_CWD_MAX]; /* absolute, NUL-terminated, zero-filled after */
};

#endif
