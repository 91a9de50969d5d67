/*
 * cells_procs.h: a background interpreter session's processes, listed and
 * stopped by its owner (session_ps, process_stop): the questions on their
 * way to the interpreter's supervisor and its answers, in order
 * (docs/design-interpreters.md §2.7).
 */
#ifndef AIRLOCKD_CELLS_PROCS_H
#define AIRLOCKD_CELLS_PROCS_H

#include <stdbool.h>
#include <stdint.h>

struct client;
struct run;
struct sup_msg;
struct cells_procs;

/* Questions waiting for an answer, at most (more: busy). */
#define CELLS_PROCS_WAIT_MAX 8

struct cells_procs *cells_procs_new(void);
/* Free p; what still waits is answered not_found (the session ended). */
void cells_procs_free(struct cells_procs *p);
/*
 * Ask the supervisor of interp (NULL: no interpreter now, an empty list or
 * not_found at once): list its processes (stop false) or SIGKILL pid.
 * c is answered when the supervisor says (cells_procs_sup), or at once.
 */
void cells_procs_ask(struct cells_procs *p, struct run *interp, struct client *c, uint32_t req_id,
		     bool stop, uint32_t pid);
/*
 * A SUP_PROC, SUP_PROCS_END or SUP_PROC_STOPPED of the interpreter: 0, or
 * -EPROTO for one that answers no question waiting (the caller ends the
 * interpreter: a sound supervisor answers in order).
 */
int cells_procs_sup(struct cells_procs *p, const struct sup_msg *m);
/* c is gone: its questions are answered to no one. */
void cells_procs_client_gone(struct cells_procs *p, struct client *c);
/* The interpreter ended: what waits is answered (its processes went with it). */
void cells_procs_ended(struct cells_procs *p);

#endif
