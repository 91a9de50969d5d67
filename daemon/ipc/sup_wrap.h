/*
 * sup_wrap.h: the frontend's side of a run's lifeline (spawn_msg.h, struct
 * sup_msg): one message received and checked against the table of what
 * the supervisor may send, sup_rows[], before any handler sees it.
 */
#ifndef AIRLOCKD_SUP_WRAP_H
#define AIRLOCKD_SUP_WRAP_H

#include <stddef.h>
#include <stdint.h>

#include "spawn_msg.h"

/* The most fds any row carries. */
#define SUP_FDS_MAX 1

/* One past the highest type of enum sup_msg_type (spawn_msg.h): the
 * tables' size; a new type past SUP_DISPLAY moves it. */
#define SUP_TYPE_END (SUP_DISPLAY + 1)

/* One type the supervisor may send: its name for the log, its fds, exactly. */
struct sup_row {
	const char *name;
	uint8_t nfds;
};

/* The row of type, or NULL for a type the lifeline does not carry;
 * a row's type is below SUP_TYPE_END. */
const struct sup_row *sup_row_find(uint32_t type);

/*
 * Receive one message from the lifeline fd into m, its fds into fds
 * (SUP_FDS_MAX of them, CLOEXEC), and check it: the exact size of struct
 * sup_msg, a type of sup_rows[], the row's fd count. Returns 1 with
 * *ret_row and *ret_nfds set; 0 at EOF (or a receive error: the lifeline
 * is over either way); -EAGAIN when nothing waits; or, with every fd it
 * received closed, -EMSGSIZE (wrong size, or fds beyond SUP_FDS_MAX),
 * -EPROTO (a type not in the table: m->type says which) or -EBADMSG (a
 * wrong fd count for its row).
 */
int sup_wrap_recv(int fd, struct sup_msg *m, int *fds, size_t *ret_nfds,
		  const struct sup_row **ret_row);

#endif
