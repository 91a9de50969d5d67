/* cells_done.h: the done pipe of an interpreter session's supervisor, on
 * which the cells driver says that a cell is done
 * (docs/design-interpreters.md §2.9). */
#ifndef AIRLOCK_CELLS_DONE_H
#define AIRLOCK_CELLS_DONE_H

#include <stdbool.h>
#include <stdint.h>

/* At most this many packets read a wake-up (cells_done_read). */
#define CELLS_DONE_READS 64

/* A packet pipe (O_DIRECT), both ends close-on-exec, the read end
 * non-blocking: 0, or -errno (errno set too) with nothing left open. */
int cells_done_pipe(int *ret_rd, int *ret_wr);
/* Whether the read end rd holds the number of cell (0: none is timed) in a
 * packet of exactly 8 bytes; reads at most CELLS_DONE_READS packets,
 * dropping every other. */
bool cells_done_read(int rd, uint64_t cell);

#endif
