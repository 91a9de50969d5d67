/*
 * cells_reply.c: a cell's answer read: the driver's done message checked
 * against the cell and its reply memfd (cells_msg.h), the value, the
 * displays and the outputs read from the memfds into a result.
 */
#include "cells_reply.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

/* Issue 31 added text/latex and application/json (IPython's formats of a
 * value): text like text/plain, read as data (docs/security.md). */
static const char *const cells_mimes[] = {
	"image/png",	 "image/svg+xml", "text/plain",	      "text/html",
	"text/markdown", "text/latex",	  "application/json", NULL};

/* Is s, of len bytes, UTF-8 without NUL (a msgpack str every client decodes)? */
static bool
cells_utf8(const uint8_t *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t b = s[i];
		size_t n, k;
		uint32_t cp;

		if (b == 0)
			return false;
		if (b < 0x80) {
			i++;
			continue;
		}
		if ((b & 0xe0) == 0xc0)
			n = 1, cp = b & 0x1f;
		else if ((b & 0xf0) == 0xe0)
			n = 2, cp = b & 0x0f;
		else if ((b & 0xf8) == 0xf0)
			n = 3, cp = b & 0x07;
		else
			return false;
		for (k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

/* Read len bytes at off of fd into a new buffer (NUL-terminated). */
static int
cells_pread(int fd, uint64_t off, size_t len, uint8_t **ret)
{
	uint8_t *b = xmalloc(len + 1);
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, b + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(b);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	b[len] = '\0';
	*ret = b;
	return 0;
}

/* One output memfd into res->out[k]: its first output_bytes. */
void
cells_output(int fd, uint64_t cap, struct proto_stream_out *o, uint8_t **ret_buf)
{
	struct stat st;
	uint64_t size = 0, keep;

	*ret_buf = NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0)
		size = (uint64_t)st.st_size;
	keep = size < cap ? size : cap;
	if (keep > 0 && cells_pread(fd, 0, (size_t)keep, ret_buf) < 0)
		keep = 0;
	o->data.data = *ret_buf != NULL ? *ret_buf : (const uint8_t *)"";
	o->data.len = (size_t)keep;
	o->data.fd = -1;
	o->data.present = true;
	o->total = size;
	o->truncated = size > keep;
}

/*
 * A done cell's result: the supervisor's end (figures, the limit that
 * interrupted it) and the driver's answer (status, value and displays from
 * the reply memfd, read into *ret_value and dbuf for the caller to free).
 */
void
cells_answer_done(const struct cells_done *dn, int reply_fd, const struct sup_msg *end,
		  struct proto_result *res, struct proto_artifact *disp, uint8_t **dbuf,
		  uint8_t **ret_value)
{
	uint64_t off = dn->has_value ? dn->value_len : 0;
	uint32_t i, nd = 0;

	res->cpu_ms = end->cpu_ns / 1000000ULL;
	res->wall_ms = end->wall_ns / 1000000ULL;
	res->memory_peak_bytes = end->memory_peak;
	if (end->reason == SUP_REASON_WALL)
		res->outcome = PROTO_OUTCOME_WALL_LIMIT;
	else if (end->reason == SUP_REASON_CPU)
		res->outcome = PROTO_OUTCOME_CPU_LIMIT;
	else
		res->outcome = PROTO_OUTCOME_EXITED;
	res->exit_code = dn->status == CELLS_OK		   ? 0
			 : dn->status == CELLS_EXIT	   ? dn->exit_code
			 : dn->status == CELLS_INTERRUPTED ? 130
							   : 1;
	if (dn->has_value && cells_pread(reply_fd, 0, dn->value_len, ret_value) == 0 &&
	    cells_utf8(*ret_value, dn->value_len))
		res->value = (const char *)*ret_value;
	for (i = 0; i < dn->ndisplay; i++) {
		size_t len = (size_t)dn->display[i].len;

		if (cells_pread(reply_fd, off, len, &dbuf[nd]) == 0) {
			memset(&disp[nd], 0, sizeof(disp[nd]));
			disp[nd].name = dn->display[i].mime;
			disp[nd].size = len;
			disp[nd].data.data = dbuf[nd];
			disp[nd].data.len = len;
			disp[nd].data.fd = -1;
			disp[nd].data.present = true;
			if (dn->value_display & (1u << i))
				res->value_display |= 1u << nd;
			nd++;
		}
		off += len;
	}
	res->display = disp;
	res->ndisplay = nd;
}

static bool
cells_mime_known(const char *mime)
{
	size_t i;

	for (i = 0; cells_mimes[i] != NULL; i++)
		if (strcmp(cells_mimes[i], mime) == 0)
			return true;
	return false;
}

/* Check the driver's answer against the cell (cells_msg.h); NULL if it is
 * good, else what is wrong. */
const char *
cells_check_done(uint64_t cell, uint64_t max, int reply_fd, const struct cells_done *dn)
{
	uint64_t total;
	struct stat st;
	uint32_t i;

	if (dn->magic != CELLS_MAGIC)
		return "bad magic";
	if (dn->cell != cell)
		return "wrong cell number";
	if (dn->status >= CELLS_STATUS_COUNT_)
		return "unknown status";
	if (dn->has_value > 1 || (!dn->has_value && dn->value_len != 0) ||
	    dn->value_len > PROTO_VALUE_MAX)
		return "bad value length";
	if (dn->ndisplay > CELLS_DISPLAY_MAX)
		return "too many display items";
	if ((dn->value_display >> dn->ndisplay) != 0 ||
	    (dn->value_display != 0 && !dn->has_value) || dn->reserved != 0)
		return "bad value display items";
	total = dn->value_len;
	for (i = 0; i < CELLS_DISPLAY_MAX; i++) {
		const char *mime = dn->display[i].mime;
		size_t ml = strnlen(mime, CELLS_MIME_MAX);
		size_t j;

		if (i >= dn->ndisplay) {
			if (ml != 0 || dn->display[i].len != 0)
				return "data past the display items";
			continue;
		}
		if (ml == CELLS_MIME_MAX || !cells_mime_known(mime))
			return "a mime type outside the set";
		for (j = ml; j < CELLS_MIME_MAX; j++)
			if (mime[j] != '\0')
				return "bytes after a mime type";
		if (dn->display[i].len > max || total + dn->display[i].len > PROTO_VALUE_MAX + max)
			return "display larger than its bound";
		total += dn->display[i].len;
	}
	/* The exception (design-jupyter.md §6.2): for a cell that raised or
	 * was interrupted only; bounded here before anything is read. */
	if (dn->ename_len > PROTO_ENAME_MAX || dn->evalue_len > PROTO_EVALUE_MAX ||
	    dn->tb_len > PROTO_TRACEBACK_MAX || dn->err_reserved != 0)
		return "error fields larger than their bounds";
	if (dn->ename_len == 0 && (dn->evalue_len != 0 || dn->tb_len != 0))
		return "an error without a name";
	/* A cell that raised has no value: the two never share a result,
	 * which keeps its inline strings within one packet (64 KiB). */
	if (dn->ename_len != 0 && dn->has_value)
		return "an error with a value";
	if (dn->ename_len != 0 && dn->status != CELLS_EXCEPTION && dn->status != CELLS_INTERRUPTED)
		return "error fields for a cell that raised nothing";
	total += (uint64_t)dn->ename_len + dn->evalue_len + dn->tb_len;
	if (fstat(reply_fd, &st) < 0 || (uint64_t)st.st_size < total)
		return "lengths past the reply";
	return NULL;
}

/*
 * The exception's fields of a checked done message (cells_check_done),
 * read from the reply after the value and the display items into one
 * buffer, "ename\0evalue\0traceback\0", for the caller to free (NULL
 * when there is none). Each must be UTF-8 without NUL (a msgpack str every
 * client decodes and prints), and the name a single word of visible
 * characters (a Jupyter client shows it as the error's title): the driver
 * runs in the code's process, so these are the code's bytes. NULL if they
 * are good, else what is wrong (the caller restarts the interpreter).
 */
const char *
cells_read_error(const struct cells_done *dn, int reply_fd, char **ret)
{
	uint64_t off = dn->has_value ? dn->value_len : 0;
	size_t lens[3] = {dn->ename_len, dn->evalue_len, dn->tb_len};
	size_t total = lens[0] + lens[1] + lens[2], pos = 0, i;
	uint8_t *raw = NULL;
	char *b;

	*ret = NULL;
	if (dn->ename_len == 0)
		return NULL;
	for (i = 0; i < dn->ndisplay; i++)
		off += dn->display[i].len;
	/* raw checked too: the analyzer cannot tell -errno from 0. */
	if (cells_pread(reply_fd, off, total, &raw) < 0 || raw == NULL)
		return "cannot read the error fields";
	for (i = 0; i < lens[0]; i++) {
		if (raw[i] <= 0x20 || raw[i] == 0x7f) {
			free(raw);
			return "an error name with a space or a control character";
		}
	}
	b = xmalloc(total + 3);
	for (i = 0; i < 3; i++) {
		if (!cells_utf8(raw + pos, lens[i])) {
			free(raw);
			free(b);
			return "error fields that are not UTF-8";
		}
		memcpy(b + pos + i, raw + pos, lens[i]);
		b[pos + i + lens[i]] = '\0';
		pos += lens[i];
	}
	free(raw);
	*ret = b;
	return NULL;
}
