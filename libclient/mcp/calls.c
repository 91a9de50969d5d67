/* mcp/calls.c: the queues (lines read, calls) and the runs in flight: progress
 * notes, sending, collecting, cancelling. */
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

/* ---- The queues: lines read, calls --------------------------------- */

/* Free a line. NULL-safe. */
void
mcp_line_free(struct mcp_line *line)
{
	if (line == NULL)
		return;
	json_decref(line->msg);
	json_decref(line->id);
	free(line->error);
	free(line);
}

/* Free a call. NULL-safe. */
void
mcp_call_free(struct mcp_call *call)
{
	if (call == NULL)
		return;
	json_decref(call->id);
	json_decref(call->token);
	airlock_run_req_free(call->req);
	free(call);
}

/* At exit: free the calls in flight and waiting, and the lines not handled.
 * Runs still in flight are abandoned with the connection: the daemon ends
 * them; runs in a session end with it. */
void
mcp_queues_free(struct mcp *m)
{
	struct mcp_line *line;
	struct mcp_call *call;

	while ((call = m->calls) != NULL) {
		m->calls = call->next;
		mcp_call_free(call);
	}
	while ((call = m->waiting) != NULL) {
		m->waiting = call->next;
		mcp_call_free(call);
	}
	while ((line = mcp_take(m)) != NULL)
		mcp_line_free(line);
}

/* ---- Runs: progress -------------------------------------------------- */

/* Send a progress notification for call with message text. */
static void
mcp_progress(struct mcp *m, struct mcp_call *call, const char *text)
{
	call->notes++;
	call->last_note_ms = clock_now_ms();
	mcp_send(m,
		 json_pack("{s:s, s:{s:O, s:I, s:s}}", "method", "notifications/progress", "params",
			   "progressToken", call->token, "progress", call->notes, "message", text));
}

/* Send the output collected since the last progress note, if any. */
static void
mcp_progress_flush(struct mcp *m, struct mcp_call *call)
{
	if (call->note_len == 0)
		return;
	call->note[call->note_len] = '\0';
	mcp_progress(m, call, call->note);
	call->note_len = 0;
	call->note_stream = 0;
}

/* Collect one chunk of the run's output for the next progress note. */
static void
mcp_run_chunk(struct mcp_call *call, const struct airlock_event *ev)
{
	enum airlock_stream stream = airlock_event_stream(ev);
	const void *data;
	size_t len, room, used;
	char *text;
	int n;

	if (call->token == NULL || airlock_event_data(ev, &data, &len) < 0)
		return;
	if (call->note_len >= MCP_NOTE_TEXT)
		return; /* the note is full; the rest of this chunk is in the result */
	if (call->note_stream != (int)stream) {
		n = snprintf(call->note + call->note_len, sizeof(call->note) - call->note_len,
			     "%s%s: ", call->note_len > 0 ? "\n" : "",
			     stream == AIRLOCK_STREAM_STDERR ? "stderr" : "stdout");
		if (n > 0)
			call->note_len += (size_t)n;
		call->note_stream = (int)stream;
	}
	room = MCP_NOTE_TEXT > call->note_len ? MCP_NOTE_TEXT - call->note_len : 0;
	text = mcp_oom(mcp_text_clean(data, len, room, &used));
	memcpy(call->note + call->note_len, text, strlen(text));
	call->note_len += strlen(text);
	if (used < len && call->note_len + 4 < sizeof(call->note)) {
		memcpy(call->note + call->note_len, "...", 3);
		call->note_len += 3;
	}
	free(text);
}

/* Whether ps entry a arrived before entry b (ids grow with arrival). */
static bool
mcp_ps_before(const struct airlock_ps *ps, size_t a, size_t b)
{
	uint64_t ea = airlock_ps_elapsed_ms(ps, a), eb = airlock_ps_elapsed_ms(ps, b);

	return ea > eb || (ea == eb && airlock_ps_run_id(ps, a) < airlock_ps_run_id(ps, b));
}

/*
 * Learn which calls in flight airlockd holds in its queue, and their place
 * in it: a sent run is not running until the daemon has a slot for it
 * (max_runs, max_runs_per_uid), and a client told "running" waits without
 * knowing why. ps lists the runs of this process (by pid) with their state;
 * the daemon starts queued runs in their order of arrival, and m->calls is
 * newest first, so the calls queued are the first ones of m->calls. A
 * call's place is 1 + the queued runs the caller may see that arrived
 * before it. One round trip, at most once per tick; a failed ps leaves the
 * calls "running", as before.
 */
static void
mcp_queue_places(struct mcp *m)
{
	int32_t me = (int32_t)getpid();
	struct airlock_ps *ps = NULL;
	struct mcp_call *call;
	size_t i, k, n, ours = 0, rank, place;

	for (call = m->calls; call != NULL; call = call->next)
		call->place = 0;
	if (m->conn == NULL || airlock_ps(m->conn, &ps) < 0)
		return;
	n = airlock_ps_count(ps);
	for (i = 0; i < n; i++)
		if (airlock_ps_pid(ps, i) == me && strcmp(airlock_ps_state(ps, i), "queued") == 0)
			ours++;
	/* The j-th call from the newest is our queued run of rank ours - j
	 * (rank 1: the oldest). */
	for (call = m->calls, k = ours; call != NULL && k > 0; call = call->next, k--) {
		for (i = 0; i < n; i++) {
			if (airlock_ps_pid(ps, i) != me ||
			    strcmp(airlock_ps_state(ps, i), "queued") != 0)
				continue;
			rank = 1;
			place = 1;
			for (size_t o = 0; o < n; o++) {
				if (strcmp(airlock_ps_state(ps, o), "queued") != 0 ||
				    !mcp_ps_before(ps, o, i))
					continue;
				place++;
				if (airlock_ps_pid(ps, o) == me)
					rank++;
			}
			if (rank == k)
				call->place = place;
		}
	}
	airlock_ps_free(ps);
}

/* The progress text of a tick of call: where it is, for how long. */
static void
mcp_tick_text(const struct mcp *m, const struct mcp_call *call, uint64_t now, char *buf, size_t len)
{
	uint64_t s = (now - call->start_ms + 500) / 1000;

	if (call->req_id != 0 && call->place > 0)
		snprintf(buf, len, "waiting in airlockd's queue: place %zu (for %" PRIu64 " s)",
			 call->place, s);
	else if (call->req_id != 0)
		snprintf(buf, len, "running for %" PRIu64 " s", s);
	else
		snprintf(buf, len,
			 "waiting for a free slot of this server (--parallel %u): place %zu "
			 "(for %" PRIu64 " s)",
			 m->parallel, call->place, s);
}

/* Whether a tick of a call of list is due: its place is then looked up. */
static bool
mcp_tick_due(const struct mcp_call *list, uint64_t now)
{
	const struct mcp_call *call;

	for (call = list; call != NULL; call = call->next)
		if (call->token != NULL && !call->cancelled && now >= call->next_tick_ms &&
		    now - call->last_note_ms >= MCP_TICK_MS / 2)
			return true;
	return false;
}

/*
 * Send the progress notes that are due (output collected, or a tick after a
 * second without one: clients that reset their request timeout on progress
 * then wait for a run of any length) and return the milliseconds until the
 * next one is due, or -1 for none.
 */
int
mcp_progress_due(struct mcp *m, struct mcp_call *list, uint64_t now, int timeout)
{
	struct mcp_call *call;
	size_t place = 0;
	char text[160];

	if (list == m->calls && list != NULL && mcp_tick_due(list, now))
		mcp_queue_places(m);
	for (call = list; call != NULL; call = call->next) {
		if (list == m->waiting)
			call->place = ++place;
		uint64_t until;

		if (call->token == NULL || call->cancelled)
			continue;
		if (now >= call->next_tick_ms) {
			mcp_progress_flush(m, call);
			if (now - call->last_note_ms >= MCP_TICK_MS / 2) {
				mcp_tick_text(m, call, now, text, sizeof(text));
				mcp_progress(m, call, text);
			}
			call->next_tick_ms = now + MCP_TICK_MS;
		}
		if (call->note_len > 0 && now >= call->last_note_ms + MCP_NOTE_MS)
			mcp_progress_flush(m, call);
		until = call->next_tick_ms;
		if (call->note_len > 0 && call->last_note_ms + MCP_NOTE_MS < until)
			until = call->last_note_ms + MCP_NOTE_MS;
		until = until > now ? until - now : 0;
		if (timeout < 0 || until < (uint64_t)timeout)
			timeout = (int)until;
	}
	return timeout;
}

/* ---- Runs: the calls in flight ---------------------------------------- */

/* Unlink call from *list. */
static void
mcp_call_unlink(struct mcp_call **list, struct mcp_call *call)
{
	struct mcp_call **p;

	for (p = list; *p != NULL; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			call->next = NULL;
			return;
		}
}

/* Append call to the waiting list (front: to the head, for a retry). */
void
mcp_call_wait(struct mcp *m, struct mcp_call *call, bool front)
{
	struct mcp_call **p = &m->waiting;

	call->req_id = 0;
	if (front) {
		call->next = m->waiting;
		m->waiting = call;
		return;
	}
	while (*p != NULL)
		p = &(*p)->next;
	call->next = NULL;
	*p = call;
}

/* Answer a call that ended with result res (0) or error r, and free it. */
static void
mcp_call_finish(struct mcp *m, struct mcp_call *call, int r, struct airlock_result *res)
{
	char why[512];

	if (call->token != NULL)
		mcp_progress_flush(m, call);
	if (call->cancelled) {
		/* The MCP spec: a cancelled request SHOULD NOT be answered. */
		mcp_log("%s: request cancelled; not answering it", call->tool);
	} else if (r == -ENOENT && strcmp(call->tool, "run_python_cell") == 0) {
		/* The interpreter session ended (idle, lifetime): the next call opens
		 * a new one. */
		if (strcmp(m->cell_session, call->session) == 0) {
			mcp_session_note(m, m->cell_session, false);
			m->cell_session[0] = '\0';
		}
		mcp_tool_fail(m, call->id,
			      "run_python_cell: the interpreter session had ended (unused too "
			      "long); the next call starts a new interpreter, with no variables");
	} else if (r == -ENOENT && call->session[0] != '\0') {
		mcp_tool_fail(m, call->id,
			      "%s: no such session: %s (it was closed, ended after being idle, "
			      "or never existed); open one with session_open",
			      call->tool, call->session);
	} else if (r < 0) {
		mcp_failure(m, r, why, sizeof(why));
		mcp_tool_fail(m, call->id, "%s: the run failed: %s", call->tool, why);
	} else
		mcp_run_reply(m, call, res);
	airlock_result_free(res);
	mcp_call_free(call);
}

/* The connection broke: every run in flight on it fails (its result will
 * never come), and the next call connects again. */
void
mcp_conn_lost(struct mcp *m, int err)
{
	struct mcp_call *call;

	mcp_log("connection to airlockd lost: %s", strerror(-err));
	while ((call = m->calls) != NULL) {
		m->calls = call->next;
		m->ncalls--;
		if (!call->cancelled)
			mcp_tool_fail(
				m, call->id,
				"%s: the connection to airlockd was lost during the run (%s); "
				"whether it ran is unknown; the next call reconnects",
				call->tool, strerror(-err));
		mcp_call_free(call);
	}
	mcp_disconnect(m);
}

/* Send the waiting calls while fewer than --parallel are in flight. */
void
mcp_start(struct mcp *m)
{
	struct mcp_call *call;
	char why[512];
	int r;

	while (m->waiting != NULL && m->ncalls < m->parallel && !m->out_failed) {
		call = m->waiting;
		if (call->cancelled) {
			m->waiting = call->next;
			mcp_call_free(call);
			continue;
		}
		if (mcp_connect(m, why, sizeof(why)) < 0) {
			/* Nothing can run now: answer every waiting call at once. */
			while ((call = m->waiting) != NULL) {
				m->waiting = call->next;
				mcp_tool_fail(m, call->id, "%s", why);
				mcp_call_free(call);
			}
			return;
		}
		m->waiting = call->next;
		r = airlock_run_submit(m->conn, call->req, &call->req_id);
		if (r < 0) {
			mcp_failure(m, r, why, sizeof(why));
			mcp_tool_fail(m, call->id, "%s: the run was not sent: %s", call->tool, why);
			mcp_call_free(call);
			continue;
		}
		call->next = m->calls;
		m->calls = call;
		m->ncalls++;
	}
}

/* The call in flight with libairlock request id req_id, or NULL. */
static struct mcp_call *
mcp_call_find(struct mcp *m, uint32_t req_id)
{
	struct mcp_call *call;

	for (call = m->calls; call != NULL; call = call->next)
		if (call->req_id == req_id)
			return call;
	return NULL;
}

/* Take what the connection has queued: output for progress notes, and
 * results, each answered as it comes. */
void
mcp_collect(struct mcp *m)
{
	struct airlock_result *res;
	struct airlock_event *ev;
	struct mcp_call *call;
	uint32_t got;
	int r;

	if (m->conn == NULL)
		return;
	while (airlock_conn_next_event(m->conn, &ev) == 0) {
		call = mcp_call_find(m, airlock_event_request_id(ev));
		if (call != NULL)
			mcp_run_chunk(call, ev);
		airlock_event_free(ev);
	}
	for (;;) {
		got = 0;
		res = NULL;
		r = airlock_conn_next_result(m->conn, &got, &res);
		if (r == -EAGAIN)
			break;
		call = got != 0 ? mcp_call_find(m, got) : NULL;
		if (call == NULL) {
			airlock_result_free(res); /* a run of the probe, or nothing */
			if (got == 0) {
				if (m->calls != NULL)
					mcp_conn_lost(m, r);
				else
					mcp_disconnect(m);
				return;
			}
			continue;
		}
		mcp_call_unlink(&m->calls, call);
		m->ncalls--;
		if (r == -EBUSY && m->ncalls > 0 && !call->cancelled) {
			/* The daemon's queue is full: try again when a run ends. */
			mcp_call_wait(m, call, true);
			continue;
		}
		mcp_call_finish(m, call, r, res);
	}
}

/* Honour a notifications/cancelled: cancel the run of the request named, or
 * drop it while it waits. */
void
mcp_cancelled(struct mcp *m, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct mcp_call *call;
	int r;

	if (rid == NULL)
		return;
	for (call = m->waiting; call != NULL; call = call->next)
		if (json_equal(rid, call->id))
			call->cancelled = true; /* mcp_start() drops it */
	for (call = m->calls; call != NULL; call = call->next) {
		if (!json_equal(rid, call->id) || call->cancelled)
			continue;
		call->cancelled = true;
		r = airlock_cancel(m->conn, call->req_id);
		if (r < 0 && r != -ENOENT)
			mcp_log("cancel: %s", strerror(-r));
	}
}
