/*
 * cells_reply.h: a cell's answer read (cells_reply.c), for cells.c: the
 * driver's done message checked, the result's outputs, value and displays
 * read from the cell's memfds.
 */
#ifndef AIRLOCKD_CELLS_REPLY_H
#define AIRLOCKD_CELLS_REPLY_H

#include <stdint.h>

#include "cells_msg.h"
#include "proto.h"
#include "spawn_msg.h"

/* One output memfd fd into o: its first cap bytes, read into *ret_buf (the
 * caller frees it). */
void cells_output(int fd, uint64_t cap, struct proto_stream_out *o, uint8_t **ret_buf);
/*
 * A done cell's result: the supervisor's end (figures, the limit that
 * interrupted it) and the driver's answer dn (status, value and displays
 * from reply_fd, read into *ret_value and dbuf for the caller to free;
 * disp and dbuf have CELLS_DISPLAY_MAX entries).
 */
void cells_answer_done(const struct cells_done *dn, int reply_fd, const struct sup_msg *end,
		       struct proto_result *res, struct proto_artifact *disp, uint8_t **dbuf,
		       uint8_t **ret_value);
/* Check the driver's answer dn to cell number cell (displays of at most max
 * bytes each) against its reply memfd; NULL if it is good, else what is
 * wrong. */
const char *cells_check_done(uint64_t cell, uint64_t max, int reply_fd,
			     const struct cells_done *dn);
/* The exception's name, value and traceback of a checked dn, from
 * reply_fd into *ret as "ename\0evalue\0traceback\0" (NULL: none; the
 * caller frees it); NULL if they are good, else what is wrong. */
const char *cells_read_error(const struct cells_done *dn, int reply_fd, char **ret);

#endif
