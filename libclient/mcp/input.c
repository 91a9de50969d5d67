/* mcp/input.c: stdin split into JSON-RPC messages, an overlong line's id kept. */
#include "mcp.h"
#include "airlock.h"
#include "../cli/net.h"
#include "../cli/util.h"
#include "clock.h"
#include "content.h"
#include "server.h"
#include "rules.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

/* ---- Input ----------------------------------------------------------- */

/* Queue a line (parsed, or with the reason it did not parse). */
static void
mcp_queue(struct mcp *m, struct mcp_line *line)
{
	*m->tail = line;
	m->tail = &line->next;
}

/* Parse one line (without its newline) and queue it; blank lines are skipped. */
static void
mcp_queue_line(struct mcp *m, const char *buf, size_t len)
{
	struct mcp_line *line;
	json_error_t err;
	size_t i;

	for (i = 0; i < len && strchr(" \t\r", buf[i]) != NULL; i++)
		;
	if (i == len)
		return;
	line = mcp_oom(calloc(1, sizeof(*line)));
	line->msg = json_loadb(buf, len, 0, &err);
	if (line->msg == NULL)
		line->error = mcp_oom(strdup(err.text));
	mcp_queue(m, line);
}

/* The JSON id value (an integer or a string without escapes) at s[*i], or
 * NULL; *i moves past it. */
static json_t *
mcp_scan_id(const char *s, size_t len, size_t *i)
{
	size_t k = *i;

	if (k < len && s[k] == '"') {
		size_t start = ++k;

		while (k < len && s[k] != '"' && s[k] != '\\' && (unsigned char)s[k] >= 0x20)
			k++;
		if (k >= len || s[k] != '"' || k - start > 256)
			return NULL;
		*i = k + 1;
		return json_stringn(s + start, k - start);
	}
	if (k < len && (s[k] == '-' || (s[k] >= '0' && s[k] <= '9'))) {
		char num[24];
		size_t start = k++;

		while (k < len && s[k] >= '0' && s[k] <= '9')
			k++;
		if (k - start >= sizeof(num))
			return NULL;
		memcpy(num, s + start, k - start);
		num[k - start] = '\0';
		*i = k;
		return json_integer(strtoll(num, NULL, 10));
	}
	return NULL;
}

/* The id of an overlong message that ends in `, "id": VALUE }`, or NULL. */
static json_t *
mcp_overlong_tail_id(const char *t, size_t n)
{
	size_t j, q;

	while (n > 0 && strchr(" \t\r", t[n - 1]) != NULL)
		n--;
	if (n < 8 || t[n - 1] != '}')
		return NULL;
	j = n - 1;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	/* The value ends before j. */
	if (j > 0 && t[j - 1] == '"') {
		q = j - 1;
		while (q > 0 && t[q - 1] != '"')
			q--;
		if (q == 0)
			return NULL;
		q--; /* the opening quote */
	} else {
		q = j;
		while (q > 0 && ((t[q - 1] >= '0' && t[q - 1] <= '9') || t[q - 1] == '-'))
			q--;
		if (q == j)
			return NULL;
	}
	j = q;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	if (j == 0 || t[j - 1] != ':')
		return NULL;
	j--;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	if (j < 5 || memcmp(t + j - 4, "\"id\"", 4) != 0)
		return NULL;
	j -= 4;
	while (j > 0 && strchr(" \t\r", t[j - 1]) != NULL)
		j--;
	if (j == 0 || (t[j - 1] != ',' && t[j - 1] != '{'))
		return NULL;
	return mcp_scan_id(t, n, &q);
}

/*
 * The id of a message too long to parse, from the first and last bytes
 * kept of it: a top-level "id" member near its start (as most clients
 * write it) or as its last member (as the TypeScript SDK does). NULL when
 * neither is there: the error then has id null, as JSON-RPC says.
 */
static json_t *
mcp_overlong_id(const char *head, size_t hlen, const char *tail, size_t tlen)
{
	size_t i, depth = 0;
	char prev = 0;
	json_t *id;

	for (i = 0; i < hlen; i++) {
		char c = head[i];

		if (c == '"') {
			size_t start = i + 1, k = start;

			while (k < hlen && head[k] != '"')
				k += head[k] == '\\' ? 2 : 1;
			if (k >= hlen)
				break;
			if (depth == 1 && (prev == '{' || prev == ',') && k - start == 2 &&
			    memcmp(head + start, "id", 2) == 0) {
				size_t j = k + 1;

				while (j < hlen && strchr(" \t\r", head[j]) != NULL)
					j++;
				if (j < hlen && head[j] == ':') {
					j++;
					while (j < hlen && strchr(" \t\r", head[j]) != NULL)
						j++;
					id = mcp_scan_id(head, hlen, &j);
					if (id != NULL)
						return id;
				}
			}
			i = k;
			prev = '"';
		} else if (c == '{' || c == '[') {
			depth++;
			prev = c;
		} else if (c == '}' || c == ']') {
			depth--;
			prev = c;
		} else if (strchr(" \t\r", c) == NULL) {
			prev = c;
		}
	}
	/* The tail: ... ,"id" : VALUE } */
	return mcp_overlong_tail_id(tail, tlen);
}

/* Keep the last bytes of an overlong line, for its id. */
static void
mcp_skip_feed(struct mcp *m, const char *buf, size_t len)
{
	if (len >= MCP_LINE_KEEP) {
		memcpy(m->skip_tail, buf + len - MCP_LINE_KEEP, MCP_LINE_KEEP);
		m->skip_tail_len = MCP_LINE_KEEP;
		return;
	}
	if (m->skip_tail_len + len > MCP_LINE_KEEP) {
		size_t drop = m->skip_tail_len + len - MCP_LINE_KEEP;

		memmove(m->skip_tail, m->skip_tail + drop, m->skip_tail_len - drop);
		m->skip_tail_len -= drop;
	}
	memcpy(m->skip_tail + m->skip_tail_len, buf, len);
	m->skip_tail_len += len;
}

/* The overlong line has ended: queue its error, with its id when found. */
static void
mcp_skip_end(struct mcp *m)
{
	struct mcp_line *line = mcp_oom(calloc(1, sizeof(*line)));

	line->id = mcp_overlong_id(m->skip_head, m->skip_head_len, m->skip_tail, m->skip_tail_len);
	if (asprintf(&line->error, "message longer than %u bytes", MCP_LINE_MAX) < 0)
		mcp_oom(NULL);
	mcp_queue(m, line);
	m->in_skip = false;
	m->skip_head_len = m->skip_tail_len = 0;
}

/* Take the first queued line, or NULL. */
struct mcp_line *
mcp_take(struct mcp *m)
{
	struct mcp_line *line = m->head;

	if (line != NULL) {
		m->head = line->next;
		if (m->head == NULL)
			m->tail = &m->head;
		line->next = NULL;
	}
	return line;
}

/* Read what stdin has (call when it is readable) and queue complete lines. */
void
mcp_read_input(struct mcp *m)
{
	size_t start = 0;
	ssize_t n;
	char *nl;

	if (m->in_cap - m->in_len < MCP_READ_CHUNK) {
		m->in_cap = m->in_cap == 0 ? 2 * MCP_READ_CHUNK : m->in_cap * 2;
		m->in = mcp_oom(realloc(m->in, m->in_cap));
	}
	n = read(STDIN_FILENO, m->in + m->in_len, m->in_cap - m->in_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (n < 0)
			mcp_log("stdin: %s", strerror(errno));
		m->in_eof = true;
		if (m->in_skip) {
			mcp_skip_feed(m, m->in, m->in_len);
			mcp_skip_end(m);
		} else if (m->in_len > 0)
			mcp_queue_line(m, m->in, m->in_len);
		m->in_len = m->in_scan = 0;
		return;
	}
	m->in_len += (size_t)n;
	while ((nl = memchr(m->in + m->in_scan, '\n', m->in_len - m->in_scan)) != NULL) {
		size_t end = (size_t)(nl - m->in);

		if (m->in_skip) {
			mcp_skip_feed(m, m->in + start, end - start);
			mcp_skip_end(m);
		} else
			mcp_queue_line(m, m->in + start, end - start);
		start = m->in_scan = end + 1;
	}
	memmove(m->in, m->in + start, m->in_len - start);
	m->in_len -= start;
	m->in_scan = m->in_len;
	if (m->in_skip) {
		mcp_skip_feed(m, m->in, m->in_len);
		m->in_len = m->in_scan = 0;
	} else if (m->in_len > MCP_LINE_MAX) {
		/* Too long to parse: keep both ends to find its id, drop the rest. */
		m->skip_head_len = MCP_LINE_KEEP;
		memcpy(m->skip_head, m->in, MCP_LINE_KEEP);
		m->skip_tail_len = 0;
		mcp_skip_feed(m, m->in, m->in_len);
		m->in_skip = true;
		m->in_len = m->in_scan = 0;
	}
}
