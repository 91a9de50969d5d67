/*
 * session.c: sessions in the frontend (docs/design-sessions.md).
 *
 * A session owns a uid slot and a keeper process for its whole life. The
 * keeper answers fixed requests in order; this file keeps the FIFO of what
 * each answer is for (a client's file operation, a run's input file, a run's
 * workspace mount) and turns keeper answers into client replies.
 */
#include "session.h"
#include "session_reply.h"
#include "session_state.h"
#include "session_int.h"
#include "session_store.h"
#include "run_owner.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admit_facts.h"
#include "cells.h"
#include "clock.h"
#include "config.h"
#include "frontend.h"
#include "keep_msg.h"
#include "keep_wrap.h"
#include "log.h"
#include "memfd.h"
#include "rules.h"
#include "xalloc.h"
#include "compiler.h"
#include "fdio.h"
#include "xevent.h"

static void session_end(struct session *s, const char *why);
static void session_end_by(struct session *s, enum session_event ev, const char *why);

/* The one place a session changes state: its table (session_state.c) says where ev
 * leads; an event that cannot happen in the state is a broken invariant. */
static void
session_transition(struct session *s, enum session_event ev)
{
	int to = fsm_next(&session_fsm, (int)s->state, (int)ev);

	if (to < 0)
		fatalx("session %.8s: event %s in state %s", s->id,
		       fsm_event_name(&session_fsm, (int)ev),
		       fsm_state_name(&session_fsm, (int)s->state));
	log_debug("session %.8s: %s -> %s (%s)", s->id, fsm_state_name(&session_fsm, (int)s->state),
		  fsm_state_name(&session_fsm, to), fsm_event_name(&session_fsm, (int)ev));
	s->state = (enum session_state)to;
}

/* Has the session ended (ENDING or later)? */
static bool
session_is_ended(const struct session *s)
{
	return s->state >= SESSION_ENDING;
}

static void
session_timer(struct event *ev, uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000),
			     .tv_usec = (suseconds_t)((ms % 1000) * 1000)};

	event_add(ev, &tv);
}

/* Something happened: the idle clock starts again. */
static void
session_touch(struct session *s)
{
	clock_gettime(CLOCK_MONOTONIC, &s->t_active);
	if (!session_is_ended(s))
		session_timer(s->idle_ev, s->idle_ms);
}

struct session *
session_find(struct daemon *d, uid_t uid, const char *id)
{
	struct session *s;

	if (id == NULL)
		return NULL;
	/* Another uid's session is not found: exactly like one that never
	 * existed, so ids leak nothing across uids. */
	TAILQ_FOREACH(s, &d->sessions, entry)
	if (!session_is_ended(s) && s->uid == uid && strcmp(s->id, id) == 0)
		return s;
	return NULL;
}

static uint32_t
session_count_uid(const struct daemon *d, uid_t uid)
{
	const struct session *s;
	uint32_t n = 0;

	TAILQ_FOREACH(s, &d->sessions, entry)
	if (!session_is_ended(s) && s->uid == uid)
		n++;
	return n;
}

/* Interpreter sessions open (each keeps one live interpreter): of uid, and
 * of every uid into *ret_all. */
static uint32_t
session_count_interps(const struct daemon *d, uid_t uid, uint32_t *ret_all)
{
	const struct session *s;
	uint32_t n = 0, all = 0;

	TAILQ_FOREACH(s, &d->sessions, entry)
	{
		if (session_is_ended(s) || s->cells == NULL)
			continue;
		all++;
		if (s->uid == uid)
			n++;
	}
	*ret_all = all;
	return n;
}

/* ---- freeing ---------------------------------------------------------------- */

static void
session_free_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct session *s = arg;
	struct daemon *d = s->d;

	TAILQ_REMOVE(&d->sessions, s, entry);
	d->nsessions--;
	/* The uid slot (its key's) is free only now: the keeper was reaped
	 * and no run of the session is left in a sandbox. */
	spawnref_del(&d->refs, s->key);
	XEVENTS_FREE(s->idle_ev, s->life_ev, s->orphan_ev, s->free_ev, s->snap_ev);
	cells_free(s->cells);
	free(s);
	frontend_status(d);
	frontend_run_ended(d);
	run_dispatch(d);
}

static void
session_maybe_free(struct session *s)
{
	if (s->state != SESSION_ENDED || s->active != NULL || s->queued > 0)
		return;
	session_transition(s, SESSION_EV_FREE);
	event_active(s->free_ev, 0, 0);
}

/* ---- replies ---------------------------------------------------------------- */

/* The keeper answered the oldest request: finish it. fd may be -1. */
static void
session_answer(struct session *s, struct kop *k, const struct keep_reply *rep, int fd)
{
	switch (k->kind) {
	case KOP_SAVE:
	case KOP_RESTORE:
		session_store_answer(s, k, rep);
		break;
	case KOP_FILE:
		if (k->c == NULL)
			break; /* its client left */
		if (rep->err != 0) {
			session_reply_errno(k->c, k->req_id, k->what, rep->err);
			break;
		}
		if (k->op == KEEP_READ && fd >= 0)
			session_reply_read(s->d, s->uid, k, fd);
		else if (k->op == KEEP_LIST && fd >= 0)
			session_reply_list(k, fd, rep->count, rep->size != 0);
		else if (k->op == KEEP_READ || k->op == KEEP_LIST)
			client_send_error(k->c, k->req_id, PROTO_ERR_INTERNAL,
					  "the keeper sent no data");
		else
			session_reply_ok(k->c, k->req_id);
		if (k->op == KEEP_WRITE || k->op == KEEP_DELETE)
			session_store_snapshot(s);
		break;
	case KOP_INPUT:
		if (k->r != NULL && rep->err != 0) {
			struct kop *o;

			k->done(k->r, -1, rep->err, k->what);
			/* The run has failed: its later requests answer nobody. */
			TAILQ_FOREACH(o, &s->ops, entry)
			if (o->r == k->r)
				o->r = NULL;
		}
		break;
	case KOP_MOUNT:
		if (k->r == NULL)
			break;
		if (rep->err != 0 || fd < 0) {
			k->done(k->r, -1, rep->err ? rep->err : -EIO, "workspace mount");
		} else {
			k->done(k->r, fd, 0, NULL);
			return; /* the run owns the fd now */
		}
		break;
	}
	fd_close(fd);
}

/* Fail every request still waiting: the keeper is gone. */
static void
session_fail_ops(struct session *s)
{
	struct kop *k;

	while ((k = TAILQ_FIRST(&s->ops)) != NULL) {
		TAILQ_REMOVE(&s->ops, k, entry);
		if ((k->kind == KOP_FILE || k->kind == KOP_SAVE) && k->c != NULL)
			client_send_error(k->c, k->req_id, PROTO_ERR_NOT_FOUND, "session %s ended",
					  s->id);
		else if (k->kind != KOP_FILE && k->r != NULL)
			k->done(k->r, -1, -ESHUTDOWN, "session");
		if (k->kind == KOP_SAVE && k->c != NULL)
			fd_close(k->fd);
		free(k);
	}
}

/* Send one request to the keeper and remember what its answer is for. */
int
session_send(struct session *s, struct kop *k, const char *path, int fd)
{
	int r;

	k->seq = ++s->next_seq;
	r = keep_wrap_send(s->keeper, k->op, k->seq, path, fd);
	if (r < 0)
		return r;
	TAILQ_INSERT_TAIL(&s->ops, k, entry);
	return 0;
}

void
session_ready(struct session *s)
{
	session_transition(s, SESSION_EV_KEEPER_READY);
	if (s->open_c != NULL) {
		struct proto_out out;

		if (proto_encode_session(s->open_req, PROTO_SESSION_OK, s->id, &out) < 0)
			fatalx("cannot encode session_ok");
		client_send(s->open_c, &out);
	}
	s->open_c = NULL;
	session_touch(s);
}

/* The keeper's socket: ready, answers, or its end. */
static void
session_keeper_cb(evutil_socket_t sock, short what UNUSED, void *arg)
{
	struct session *s = arg;
	int budget;

	for (budget = 64; budget > 0 && s->keeper >= 0; budget--) {
		struct keep_reply rep;
		int fd = -1;
		int n = keep_wrap_recv((int)sock, &rep, &fd);
		struct kop *k;

		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			session_end(s, n == 0 ? "its keeper ended" : "bad message from its keeper");
			return;
		}
		if (rep.op == KEEP_READY && s->state == SESSION_OPENING) {
			fd_close(fd);
			if (rep.err != 0) {
				log_warnx("session %.8s: keeper set-up failed: %s", s->id,
					  strerror(-rep.err));
				if (s->open_c != NULL)
					client_send_error(
						s->open_c, s->open_req, PROTO_ERR_INTERNAL,
						"session set-up failed: %s", strerror(-rep.err));
				s->open_c = NULL;
				session_end(s, "its keeper failed");
				return;
			}
			/* A session restored after a restart takes runs
			 * once its files are back (session_store.c). */
			if (s->restore != NULL)
				session_store_restore_start(s);
			else
				session_ready(s);
			continue;
		}
		k = TAILQ_FIRST(&s->ops);
		if (rep.op != KEEP_REPLY || k == NULL || rep.seq != k->seq) {
			fd_close(fd);
			session_end(s, "out-of-order answer from its keeper");
			return;
		}
		TAILQ_REMOVE(&s->ops, k, entry);
		session_answer(s, k, &rep, fd);
		free(k);
		session_touch(s);
	}
}

/* ---- ending ----------------------------------------------------------------- */

static void
session_close_keeper(struct session *s)
{
	frontend_unwatch(&s->keeper_ev, &s->keeper);
}

/*
 * End a session: its runs are cancelled, the keeper's socket closed (it
 * exits, and its tmpfs goes with its mount namespace), waiting requests
 * answered. The memory and the uid slot follow once the keeper was reaped.
 */
static void
session_end(struct session *s, const char *why)
{
	session_end_by(s, SESSION_EV_END, why);
}

void
session_end_why(struct session *s, const char *why)
{
	session_end(s, why);
}

/* The end by ev (END, REVOKED): ENDING's entry action. */
static void
session_end_by(struct session *s, enum session_event ev, const char *why)
{
	if (session_is_ended(s))
		return;
	session_transition(s, ev);
	log_info("session %.8s uid %u: ended (%s) after %" PRIu64 " runs", s->id, (unsigned)s->uid,
		 why, s->nruns);
	event_del(s->idle_ev);
	event_del(s->life_ev);
	event_del(s->orphan_ev);
	/* Its opener still waits: refused, if a reload refused it. */
	if (s->open_c != NULL)
		client_send_error(s->open_c, s->open_req,
				  ev == SESSION_EV_REVOKED ? PROTO_ERR_UNAUTHORIZED
							   : PROTO_ERR_INTERNAL,
				  "session %s", why);
	s->open_c = NULL;
	session_close_keeper(s);
	session_fail_ops(s);
	/* Only a stopping daemon keeps a session's files for its restart. */
	session_store_end(s, !s->keep_store);
	if (s->cells != NULL)
		cells_end(s->cells, why);
	run_cancel_session(s->d, s);
	session_maybe_free(s);
}

/* The keeper is gone (reaped, or it never had a process): the session
 * ends if it had not, and is freed once no run of it is left. */
static void
session_keeper_gone(struct session *s, const char *why)
{
	session_end(s, why);
	session_transition(s, SESSION_EV_KEEPER_GONE);
	session_maybe_free(s);
}

static void
session_idle_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	struct session *s = arg;

	/* An interpreter session's interpreter is always there: it is busy
	 * while a cell is. */
	if ((s->active != NULL && s->cells == NULL) || s->queued > 0 || !TAILQ_EMPTY(&s->ops) ||
	    (s->cells != NULL && cells_busy(s->cells))) {
		session_touch(s);
		return;
	}
	session_end(s, "idle timeout");
}

static void
session_life_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	session_end(arg, "lifetime over");
}

static void
session_orphan_cb(evutil_socket_t fd UNUSED, short what UNUSED, void *arg)
{
	session_end(arg, "its owner has been gone too long");
}

void
session_spawner_event(struct session *s, const struct spawn_ev *ev)
{
	switch (ev->type) {
	case SPAWN_STARTED:
		break;
	case SPAWN_FAILED:
		log_warnx("session %.8s: %s: %s", s->id, ev->step, strerror(-ev->err));
		if (ev->pid == 0)
			session_keeper_gone(s, "its keeper could not start");
		else
			session_end(s, "its keeper could not start");
		break;
	case SPAWN_DONE:
		session_keeper_gone(s, "its keeper ended");
		break;
	default:
		break;
	}
}

/* ---- client requests ------------------------------------------------------------ */

/* Ask the spawner for the session's keeper, over a new socket pair whose
 * end it keeps is watched; 0 or -errno. */
static int
session_spawn_keeper(struct session *s)
{
	struct daemon *d = s->d;
	struct spawn_req sreq;
	int pair[2], r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return -errno;
	s->keeper = pair[0];
	if (fcntl(s->keeper, F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		close(pair[1]);
		return r;
	}
	s->keeper_ev = xevent_new(d->base, s->keeper, EV_READ | EV_PERSIST, session_keeper_cb, s);
	event_add(s->keeper_ev, NULL);
	memset(&sreq, 0, sizeof(sreq));
	sreq.type = SPAWN_KEEPER;
	sreq.run_id = s->key;
	sreq.uid_slot = s->slot;
	sreq.memory_bytes = s->workspace_bytes;
	r = frontend_spawn_fds(d, &sreq, &pair[1], SPAWN_KEEPER_NFDS);
	close(pair[1]);
	/* This session fails alone (an fd pass can fail with ETOOMANYREFS):
	 * the spawner never saw it, and its slot is free again. */
	if (r < 0)
		log_warnx("session %.8s uid %u: cannot reach the spawner: %s", s->id,
			  (unsigned)s->uid, strerror(-r));
	return r;
}

/* What an interpreter session's cells ask of it (cells.h). */
static const struct cells_session_ops session_cells_ops = {
	.id = session_id,
	.profile = session_profile,
	.background = session_background,
	.touch = session_cell_touch,
};

struct session *
session_create(struct daemon *d, const struct session_facts *f)
{
	struct session *s = xcalloc(1, sizeof(*s));
	int r;

	s->workspace_bytes = f->workspace_bytes;
	s->idle_ms = f->idle_ms;
	s->lifetime_ms = f->lifetime_ms;
	s->lease_end_ms = f->lease_end_ms;
	snprintf(s->profile, sizeof(s->profile), "%s", f->profile);
	s->detached = f->detached;
	s->background = f->background;
	if (f->interpreter[0] != '\0')
		s->cells = cells_new(d, s, &session_cells_ops, f->uid, f->interpreter);
	/* The keeper's key holds the session's uid slot, which its runs use,
	 * until the session is freed. admit_decide() saw one free (rule 8);
	 * -EBUSY stays the backstop, answered in its words. */
	r = spawnref_add_slot(&d->refs, SPAWNREF_KEEPER, s, &s->key, &s->slot);
	if (r == -EBUSY) {
		cells_free(s->cells);
		free(s);
		return NULL;
	}
	if (r < 0)
		fatalx("cannot register a spawn key: %s", strerror(-r));
	memcpy(s->id, f->id, sizeof(s->id));
	s->d = d;
	s->uid = f->uid;
	s->ngids = f->ngids < SESSION_GROUPS_MAX ? f->ngids : SESSION_GROUPS_MAX;
	memcpy(s->gids, f->gids, s->ngids * sizeof(s->gids[0]));
	s->keeper = -1;
	s->snap_fd = -1;
	TAILQ_INIT(&s->ops);
	clock_gettime(CLOCK_MONOTONIC, &s->t_open);
	s->t_active = s->t_open;
	s->idle_ev = xevtimer_new(d->base, session_idle_cb, s);
	s->life_ev = xevtimer_new(d->base, session_life_cb, s);
	s->orphan_ev = xevtimer_new(d->base, session_orphan_cb, s);
	s->free_ev = xevtimer_new(d->base, session_free_cb, s);
	TAILQ_INSERT_TAIL(&d->sessions, s, entry);
	d->nsessions++;
	return s;
}

int
session_start(struct session *s, uint64_t lease_ms)
{
	int r = session_spawn_keeper(s);

	if (r < 0) {
		if (s->open_c != NULL)
			client_send_error(s->open_c, s->open_req, PROTO_ERR_INTERNAL,
					  "cannot open a session: %s", strerror(-r));
		s->open_c = NULL;
		session_keeper_gone(s, "set-up failed");
		return r;
	}
	session_timer(s->life_ev, lease_ms);
	log_info("session %.8s uid %u: %s, workspace %" PRIu64 " bytes, idle %" PRIu64
		 " ms, lifetime %" PRIu64 " ms%s",
		 s->id, (unsigned)s->uid, s->open_c == NULL ? "restored" : "opened",
		 s->workspace_bytes, s->idle_ms, lease_ms, s->detached ? ", detached" : "");
	return 0;
}

void
session_open(struct daemon *d, struct client *c, uint32_t req_id,
	     const struct proto_session_open *o)
{
	struct admit_decision dec;
	struct admit_gather g;
	struct session_restore *rs = NULL;
	struct session_facts f;
	struct session *s;
	uint8_t rnd[PROTO_SESSION_ID_LEN / 2];
	int i;

	/* What only the sessions know: the uid's sessions and interpreters
	 * open, and whether the interpreter asked is a python runtime. */
	admit_gather_session_open(d, c, o, &g);
	g.f.held.n[LEDGER_SESSIONS] = session_count_uid(d, client_uid(c));
	g.f.held.n[LEDGER_INTERPRETERS] =
		session_count_interps(d, client_uid(c), &g.f.all.n[LEDGER_INTERPRETERS]);
	g.f.runtime_ok = o->interpreter != NULL &&
			 cells_runtime_ok(config_runtime_find(d->cfg, o->interpreter));
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		client_send_error(c, req_id, dec.code, "%s", dec.why);
		return;
	}
	/* An archive to start from is checked whole first (session_store.c):
	 * a refused one opens nothing. */
	if (o->archive.present &&
	    session_store_archive_check(c, req_id, &o->archive, dec.workspace_bytes, &rs) < 0)
		return;
	memset(&f, 0, sizeof(f));
	/* 128 bits from the kernel's CSPRNG: ids are capabilities of a kind,
	 * though every lookup also checks the owner's uid. */
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		fatal("getrandom");
	for (i = 0; i < (int)sizeof(rnd); i++)
		snprintf(f.id + 2 * i, 3, "%02x", rnd[i]);
	f.uid = client_uid(c);
	f.ngids = client_gids(c, f.gids, SESSION_GROUPS_MAX);
	snprintf(f.profile, sizeof(f.profile), "%s", g.prof->name);
	snprintf(f.interpreter, sizeof(f.interpreter), "%s", o->interpreter ? o->interpreter : "");
	f.workspace_bytes = dec.workspace_bytes;
	f.idle_ms = dec.idle_ms;
	f.lifetime_ms = dec.lifetime_ms;
	/* Safe to grant: a detached session is still bounded by max_per_uid,
	 * its idle timeout and its lifetime (and their ceilings); only the
	 * orphan grace, a convenience for clients that crash, does not apply
	 * (docs/security.md "Sessions"). */
	f.detached = o->detached;
	f.background = o->background;
	f.lease_end_ms = clock_realtime_ms() + dec.lifetime_ms;
	s = session_create(d, &f);
	if (s == NULL) {
		session_store_restore_free(rs);
		client_send_error(c, req_id, PROTO_ERR_BUSY, "no free sandbox uid");
		return;
	}
	s->restore = rs;
	s->run_defaults = o->limits;
	s->open_c = c;
	s->open_req = req_id;
	if (session_start(s, s->lifetime_ms) == 0)
		session_store_record(s);
}

void
session_close(struct daemon *d, struct client *c, uint32_t req_id, const char *id)
{
	struct session *s = session_find(d, client_uid(c), id);

	if (s == NULL) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "no such session");
		return;
	}
	session_end(s, "closed by its owner");
	session_reply_ok(c, req_id);
}

void
session_file_op(struct daemon *d, struct client *c, uint32_t req_id, enum proto_type type,
		const struct proto_file_op *op)
{
	struct session *s = session_find(d, client_uid(c), op->session);
	struct admit_decision dec;
	struct admit_gather g;
	struct kop *k;
	int fd = -1, r;

	admit_gather_file_op(d, c, type, op, s != NULL, s != NULL && s->state == SESSION_READY, &g);
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		client_send_error(c, req_id, dec.code, "%s", dec.why);
		return;
	}
	/* admit_decide() refuses a session that is not found (rule 3); this
	 * says so where s is used, for the reader and clang's analyzer. */
	if (s == NULL) {
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "no session %s", op->session);
		return;
	}
	k = xcalloc(1, sizeof(*k));
	k->kind = KOP_FILE;
	k->c = c;
	k->req_id = req_id;
	snprintf(k->what, sizeof(k->what), "%s", op->path[0] ? op->path : ".");
	switch (type) {
	case PROTO_FILE_WRITE:
		k->op = KEEP_WRITE;
		/* The keeper reads the contents from a sealed memfd: the
		 * client's own, or one made of the inline bytes. */
		if (op->data.fd >= 0)
			fd = fcntl(op->data.fd, F_DUPFD_CLOEXEC, 0);
		else if (memfd_sealed_create("airlock-put",
					     op->data.data ? (const void *)op->data.data : "",
					     op->data.len, &fd) < 0)
			fd = -1;
		if (fd < 0) {
			client_send_error(c, req_id, PROTO_ERR_INTERNAL, "cannot pass the data");
			free(k);
			return;
		}
		break;
	case PROTO_FILE_READ:
		k->op = KEEP_READ;
		break;
	case PROTO_FILE_LIST:
		k->op = KEEP_LIST;
		break;
	case PROTO_FILE_DELETE:
		k->op = KEEP_DELETE;
		break;
	default:
		free(k);
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST, "not a file operation");
		return;
	}
	r = session_send(s, k, op->path, fd);
	fd_close(fd);
	if (r < 0) {
		client_send_error(c, req_id,
				  r == -ENAMETOOLONG ? PROTO_ERR_TOO_LARGE : PROTO_ERR_INTERNAL,
				  "%s: %s", k->what, strerror(-r));
		free(k);
		return;
	}
	session_touch(s);
}

/* ---- connections ------------------------------------------------------------------ */

void
session_client_new(struct daemon *d, uid_t uid)
{
	struct session *s;

	TAILQ_FOREACH(s, &d->sessions, entry)
	if (s->uid == uid)
		event_del(s->orphan_ev);
}

void
session_client_gone(struct daemon *d, struct client *c, bool last_of_uid)
{
	struct session *s;
	struct kop *k;

	TAILQ_FOREACH(s, &d->sessions, entry)
	{
		if (s->open_c == c)
			s->open_c = NULL;
		if (s->cells != NULL)
			cells_client_gone(s->cells, c);
		TAILQ_FOREACH(k, &s->ops, entry)
		if (k->c == c)
			k->c = NULL;
		if (last_of_uid && s->uid == client_uid(c) && !session_is_ended(s) && !s->detached)
			session_timer(s->orphan_ev, d->cfg->session_orphan_grace_ms);
	}
}

void
session_stop_all(struct daemon *d)
{
	struct session *s, *next;

	for (s = TAILQ_FIRST(&d->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		s->keep_store = true;
		/* Its last changes are written first; the stop waits for it
		 * (bounded by the stop's grace) as for a run. */
		if (!session_store_flush(s))
			session_end(s, "the daemon is stopping");
	}
}

/* ---- runs ------------------------------------------------------------------------ */

uint32_t
session_cell_slots_uid(const struct daemon *d, uid_t uid)
{
	const struct session *s;
	uint32_t n = 0;

	TAILQ_FOREACH(s, &d->sessions, entry)
	if (s->uid == uid && s->cells != NULL && cells_holds_slot(s->cells))
		n++;
	return n;
}

struct cells *
session_cells_of_request(const struct daemon *d, const struct client *c, uint32_t req_id)
{
	const struct session *s;

	/* Request ids are per connection: only c's own cells can match, so
	 * no other uid's cell is ever found (docs/security.md). */
	TAILQ_FOREACH(s, &d->sessions, entry)
	if (s->uid == client_uid(c) && s->cells != NULL && cells_has_request(s->cells, c, req_id))
		return s->cells;
	return NULL;
}

struct cells *
session_cells(const struct session *s)
{
	return s->cells;
}

void
session_cell_touch(struct session *s)
{
	session_touch(s);
	session_store_snapshot(s);
}

bool
session_background(const struct session *s)
{
	return s->background;
}

const char *
session_id(const struct session *s)
{
	return s->id;
}

bool
session_can_queue(const struct session *s)
{
	return s->state == SESSION_READY;
}

bool
session_can_start(const struct session *s)
{
	return s->state == SESSION_READY && s->active == NULL;
}

const struct proto_limits *
session_run_defaults(const struct session *s)
{
	return &s->run_defaults;
}

/*
 * Does cfg refuse a session of uid (with gids, the groups of the connection
 * that opened it) and profile (why into why)? Its profile gone, or its uid
 * not allowed by [access] or by its profile: what a new request of that
 * connection would be refused for (client_access(), the profile check of
 * session_open()). A reload and a restart (session_store.c) ask it.
 */
bool
session_policy_refuses(const struct config *cfg, uid_t uid, const gid_t *gids, size_t ngids,
		       const char *profile, char *why, size_t len)
{
	const struct config_profile *prof = config_profile_find(cfg, profile);

	if (!config_peer_allowed(cfg, uid, gids, ngids))
		snprintf(why, len, "uid %u is no longer allowed to use this daemon", (unsigned)uid);
	else if (prof == NULL)
		snprintf(why, len, "its profile %s is gone", profile);
	else if (!config_profile_allowed(prof, uid, gids, ngids))
		snprintf(why, len, "profile %s no longer allows uid %u", profile, (unsigned)uid);
	else
		return false;
	return true;
}

/*
 * A reload, for one session not ended: REVOKED if the new config refuses
 * it (it ends now, its interpreter and runs with it), else RELOAD (it stays
 * as it is) and its interpreter hears of it, with what changed in its
 * sandbox, the new config compared with the old one.
 */
static void
session_reload(struct session *s, const struct config *old)
{
	const struct config *cfg = s->d->cfg;
	const struct config_profile *prof;
	char refused[160], changed[96];

	/* A one-shot run of that uid or profile is refused now: a session
	 * must not keep its keeper, workspace and interpreter, nor take
	 * runs, under a policy that no longer allows it (docs/security.md). */
	if (session_policy_refuses(cfg, s->uid, s->gids, s->ngids, s->profile, refused,
				   sizeof(refused))) {
		session_end_by(s, SESSION_EV_REVOKED, refused);
		return;
	}
	session_transition(s, SESSION_EV_RELOAD);
	if (s->cells == NULL)
		return;
	if (!config_sandbox_changed(old, cfg, s->profile, cells_runtime(s->cells), changed,
				    sizeof(changed))) {
		cells_reload(s->cells, NULL, NULL);
		return;
	}
	log_info("session %s: the reload changed its sandbox (%s): its interpreter is restarted",
		 session_id(s), changed);
	prof = config_profile_find(cfg, s->profile);
	cells_reload(s->cells, changed, prof != NULL && prof->network_proxy ? prof->egress : NULL);
}

void
session_reloaded(struct daemon *d, const struct config *old)
{
	struct session *s, *next;

	for (s = TAILQ_FIRST(&d->sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (!session_is_ended(s))
			session_reload(s, old);
	}
}

const char *
session_profile(const struct session *s)
{
	return s->profile;
}

void
session_run_queued(struct session *s)
{
	s->queued++;
}

void
session_run_unqueued(struct session *s)
{
	if (s->queued > 0)
		s->queued--;
	session_maybe_free(s);
}

uint32_t
session_run_begin(struct session *s, struct run *r)
{
	s->active = r;
	s->nruns++;
	session_touch(s);
	return s->slot;
}

void
session_run_prepare(struct session *s, struct run *r, const char *const *names, const int *fds,
		    size_t nfiles, void (*done)(struct run *r, int fd, int err, const char *what))
{
	size_t i;
	struct kop *k;
	int rc;

	if (session_is_ended(s) || s->keeper < 0) {
		done(r, -1, -ESHUTDOWN, "session");
		return;
	}
	/* Input files go through the keeper's link-refusing writes: in a
	 * session the workspace holds whatever earlier runs left there. */
	for (i = 0; i <= nfiles; i++) {
		k = xcalloc(1, sizeof(*k));
		k->kind = i < nfiles ? KOP_INPUT : KOP_MOUNT;
		k->op = i < nfiles ? KEEP_WRITE : KEEP_MOUNT;
		k->r = r;
		k->done = done;
		snprintf(k->what, sizeof(k->what), "%s", i < nfiles ? names[i] : "workspace");
		rc = session_send(s, k, i < nfiles ? names[i] : "", i < nfiles ? fds[i] : -1);
		if (rc < 0) {
			struct kop *o;

			free(k);
			TAILQ_FOREACH(o, &s->ops, entry)
			if (o->r == r)
				o->r = NULL;
			done(r, -1, rc, "keeper");
			return;
		}
	}
}

void
session_run_end(struct session *s, struct run *r)
{
	struct kop *k;

	/* Nothing the keeper still owes may reach a freed run. */
	TAILQ_FOREACH(k, &s->ops, entry)
	if (k->r == r)
		k->r = NULL;
	if (s->active == r)
		s->active = NULL;
	session_touch(s);
	session_store_snapshot(s);
	session_maybe_free(s);
}

/* What runs ask of their session (run_owner.h). */
const struct run_session_ops session_run_ops = {
	.find = session_find,
	.can_queue = session_can_queue,
	.can_start = session_can_start,
	.profile = session_profile,
	.id = session_id,
	.defaults = session_run_defaults,
	.cells = session_cells,
	.background = session_background,
	.cell_slots = session_cell_slots_uid,
	.cells_of_request = session_cells_of_request,
	.queued = session_run_queued,
	.unqueued = session_run_unqueued,
	.begin = session_run_begin,
	.prepare = session_run_prepare,
	.end = session_run_end,
};
