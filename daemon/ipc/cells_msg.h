/*
 * cells_msg.h: the messages of an interpreter session (docs/design-interpreters.md
 * §2), in two places:
 *
 * - frontend <-> supervisor, on the interpreter sandbox's lifeline: struct
 *   cells_sup (frontend to supervisor: CELLS_SUP_BEGIN, CELLS_SUP_FINISH,
 *   CELLS_SUP_KILL, CELLS_SUP_INTERRUPT); the supervisor answers a FINISH
 *   with a struct sup_msg of type SUP_CELL_END, and a cell whose
 *   interpreter ended gets SUP_CELL_LOST (spawn_msg.h). The supervisor
 *   never reads the driver.
 * - frontend <-> driver (daemon/cells/cells.py), on the channel the
 *   supervisor made (the driver's fd 0; the frontend's end came as SUP_CELLS):
 *   struct cells_start with four fds (the code, sealed; stdout, stderr and
 *   reply: memfds the frontend made), and struct cells_done without any fd.
 *   The driver is as untrusted as the code it runs: cells.c checks every
 *   field, and anything else restarts the interpreter.
 *
 * Little-endian fixed layouts; cells.py packs the same with struct.
 */
#ifndef AIRLOCKD_CELLS_MSG_H
#define AIRLOCKD_CELLS_MSG_H

#include <stdint.h>

enum cells_sup_type {
	CELLS_SUP_BEGIN = 1,  /* a cell starts: its clock and cpu baseline */
	CELLS_SUP_FINISH = 2, /* the driver answered: kill the cell's other processes */
	CELLS_SUP_KILL = 3,   /* end the interpreter (SUP_CELL_LOST, SUP_EXIT follow) */
	/* A cancel (cells_cancel): SIGINT now, as at the cell's limit, with
	 * its grace; ignored unless `cell` is the cell being timed and it
	 * was not interrupted yet. The reason stays EXITED. */
	CELLS_SUP_INTERRUPT = 4,
	/* PLAN_F_BACKGROUND only (else the sandbox ends): list the processes
	 * but 1 and the interpreter (SUP_PROC..., SUP_PROCS_END); SIGKILL one,
	 * cell = its pid (SUP_PROC_STOPPED) */
	CELLS_SUP_PS = 5,
	CELLS_SUP_STOP = 6,
};

struct cells_sup {
	uint32_t type;
	uint32_t reserved;
	uint64_t cell;
	uint64_t wall_ms, cpu_ms; /* BEGIN: at the limit, SIGINT */
	uint64_t grace_ms;	  /* BEGIN: no answer this long after it: restart */
};

#define CELLS_MAGIC 0x4C4C4543u /* "CELL" */
#define CELLS_DISPLAY_MAX 8	/* = PROTO_DISPLAY_MAX */
#define CELLS_MIME_MAX 32
#define CELLS_NFDS 4 /* code, stdout, stderr, reply */

#define CELLS_START_SVG 0x1u /* cells_start.flags: figures as SVG (request figures_svg) */
/* cells_start.flags: the session keeps its cells' processes (background,
 * design-interpreters.md §2.7): the driver leaves its children for the
 * code to wait for, never reaping them itself between cells. */
#define CELLS_START_F_BACKGROUND 0x2u
/* cells_start.flags: the supervisor sent the last cell a SIGINT that it did
 * not take (its answer was not CELLS_INTERRUPTED): one pending now is that
 * cell's, and the driver drops it. Without the flag a pending SIGINT is
 * this cell's own cancel, come before its first line. */
#define CELLS_START_F_DRAIN_SIGINT 0x4u
/* cells_start.flags: run the cell through IPython's InteractiveShell when
 * the runtime can import it (request ipython; design-jupyter.md §5). */
#define CELLS_START_IPYTHON 0x8u
/* cells_start.flags: the client streams the cell's output (request
 * `stream`, design-jupyter.md §6.3): the driver line-buffers stdout, and
 * leaves an exception's traceback to the done message's error fields
 * instead of stderr (streamed bytes cannot be taken back). */
#define CELLS_START_F_STREAM 0x10u

struct cells_start {
	uint32_t magic;
	uint32_t flags; /* CELLS_START_*; other bits 0 */
	uint64_t cell;
	uint32_t value_max;   /* bytes of the value's repr */
	uint32_t display_max; /* bytes of all display items together */
};

enum cells_status {
	CELLS_OK = 0,
	CELLS_EXCEPTION = 1,   /* traceback on stderr (unless streaming), and the error fields */
	CELLS_INTERRUPTED = 2, /* KeyboardInterrupt */
	CELLS_EXIT = 3,	       /* SystemExit: exit_code */
	CELLS_STATUS_COUNT_
};

struct cells_done {
	uint32_t magic;
	uint32_t status; /* enum cells_status */
	uint64_t cell;
	int32_t exit_code;
	uint32_t has_value;
	uint32_t value_len; /* at offset 0 of reply */
	uint32_t ndisplay;  /* then each item's bytes, in order */
	/* Bit i: display item i is one of the trailing value's representations
	 * (design-jupyter.md §2: one execute_result); only with has_value,
	 * no bit at or past ndisplay. */
	uint32_t value_display;
	uint32_t reserved; /* 0 */
	struct {
		char mime[CELLS_MIME_MAX]; /* NUL-padded */
		uint64_t len;
	} display[CELLS_DISPLAY_MAX];
	/* The exception (CELLS_EXCEPTION, CELLS_INTERRUPTED; else all 0): its
	 * type's name, str() and the user's traceback, their bytes after the
	 * display items' in reply (design-jupyter.md §6.2). */
	uint32_t ename_len;    /* <= PROTO_ENAME_MAX; 0 only with the others 0 */
	uint32_t evalue_len;   /* <= PROTO_EVALUE_MAX */
	uint32_t tb_len;       /* <= PROTO_TRACEBACK_MAX */
	uint32_t err_reserved; /* 0 */
};

_Static_assert(sizeof(struct cells_start) == 24, "cells.py packs <IIQII");
_Static_assert(sizeof(struct cells_done) == 40 + CELLS_DISPLAY_MAX * 40 + 16,
	       "cells.py packs <IIQiIIIII, 8 x <32sQ, then <IIII");

#endif
