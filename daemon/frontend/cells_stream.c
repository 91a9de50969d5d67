/*
 * cells_stream.c: a streaming cell's output sent while it runs
 * (docs/design-jupyter.md §6.3).
 *
 * The cell's stdout and stderr are memfds the frontend made (cells_send):
 * every CELLS_STREAM_MS while the cell is with the driver, and once more
 * before its answer, what they gained is read and sent as `stream` events
 * of the cell's request, as a streaming run's output is. Nothing comes
 * from the driver: it runs in the code's process, so a wake-up from it
 * would be the code's to forge or withhold; the memfds' size is the
 * kernel's word. Only the bytes within the cell's output_bytes are sent,
 * so the events of a cell never carry more than its result would.
 */
#include "cells.h"
#include "cells_int.h"

#include <errno.h>
#include <event2/event.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler.h"
#include "frontend.h"
#include "log.h"

/* Send what output k of cl gained since the last look, in inline chunks,
 * up to the cell's output limit. A cell that truncated its output or
 * seeked back only changes what its result carries. */
static void
cells_stream_one(struct cell *cl, int k)
{
	static const char *const names[2] = {"stdout", "stderr"};
	uint8_t buf[PROTO_INLINE_MAX];
	uint64_t cap = cl->lim.v[PROTO_LIMIT_OUTPUT_BYTES], end;
	struct stat st;

	if (cl->fd[k] < 0 || fstat(cl->fd[k], &st) < 0 || st.st_size <= 0)
		return;
	end = (uint64_t)st.st_size < cap ? (uint64_t)st.st_size : cap;
	while (cl->c != NULL && cl->streamed[k] < end) {
		uint64_t left = end - cl->streamed[k];
		size_t n = left > sizeof(buf) ? sizeof(buf) : (size_t)left;
		ssize_t got = pread(cl->fd[k], buf, n, (off_t)cl->streamed[k]);
		struct proto_stream ev = {.stream = names[k]};
		struct proto_out out;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return;
		ev.data = (struct proto_blob){
			.data = buf, .len = (size_t)got, .fd = -1, .present = true};
		if (proto_encode_stream(cl->req_id, &ev, &out) < 0)
			fatalx("cannot encode a stream event");
		cl->streamed[k] += (uint64_t)got;
		client_send(cl->c, &out);
	}
}

void
cells_stream_flush(struct cell *cl)
{
	int k;

	if (!cl->stream)
		return;
	for (k = 0; k < 2; k++)
		cells_stream_one(cl, k);
}

void
cells_stream_arm(struct cells *cs)
{
	struct timeval tv = {0, CELLS_STREAM_MS * 1000};

	evtimer_add(cs->stream_ev, &tv);
}

/* The timer: the head cell, while it is with the driver, looked at again. */
void
cells_stream_cb(int fd UNUSED, short what UNUSED, void *arg)
{
	struct cells *cs = arg;
	struct cell *cl = TAILQ_FIRST(&cs->q);

	if (cl == NULL || !cl->stream || cl->stage == CELL_QUEUED)
		return;
	cells_stream_flush(cl);
	if (cl->c != NULL)
		cells_stream_arm(cs);
}
