/*
 * session_store.c: sessions kept across a restart (session_store.h,
 * docs/design-sessions.md "Sessions outlive the daemon").
 *
 * The state directory's sessions/ (d->store_fd, opened as root before the
 * split, owned by the service user, mode 0700) holds ID.rec and ID.tar per
 * session, each written as NAME.tmp and renamed over NAME (never fsync'd:
 * that would stall the event loop for every client, and a daemon that is
 * killed loses nothing the kernel holds; a host crash may cost the last
 * snapshot). Only this process writes them, but a restarted daemon reads them
 * as input: sizes capped, files opened O_NOFOLLOW and checked (regular,
 * ours, 0600), records parsed strictly, archives read by the strict reader
 * (session_archive.c) before one entry reaches a keeper.
 */
#include "session_store.h"
#include "session_int.h"
#include "session.h"
#include "session_archive.h"
#include "session_record.h"

#include <dirent.h>
#include <event2/event.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admit.h"
#include "admit_facts.h"
#include "cells.h"
#include "clock.h"
#include "config.h"
#include "fdio.h"
#include "frontend.h"
#include "log.h"
#include "memfd.h"
#include "session_reply.h"
#include "xalloc.h"
#include "xevent.h"

/* The archive a session is being restored from, one entry at a time: a
 * keeper's socket takes a bounded number of requests and fds in flight. */
struct session_restore {
	void *map;
	size_t len;
	struct session_archive_iter it;
	char why[256];
};

#define STORE_NAME_MAX (PROTO_SESSION_ID_LEN + 16)
/* At most one snapshot of a session per this many ms (its changes in
 * between are written by the next, or by the stop). */
#define SESSION_SNAP_INTERVAL_MS 1000

/* ---- files ------------------------------------------------------------------- */

/* Write len bytes of buf as name, atomically for a reader: name.tmp,
 * then renamed over name. 0 or -errno. */
static int
store_write(int dir, const char *name, const void *buf, size_t len)
{
	char tmp[STORE_NAME_MAX];
	int fd, r;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = fd_write_all(fd, buf, len);
	close(fd);
	if (r == 0 && renameat(dir, tmp, dir, name) < 0)
		r = -errno;
	if (r != 0)
		(void)unlinkat(dir, tmp, 0);
	return r;
}

/* Open name for reading, as a kept file must be: a regular file of ours,
 * mode 0600 at most, at most max bytes. The fd, or -errno. */
static int
store_open(int dir, const char *name, uint64_t max, struct stat *st)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	memset(st, 0, sizeof(*st)); /* defined on every path, for the analyzer */
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid() ||
	    (st->st_mode & 077) != 0 || (uint64_t)st->st_size > max) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

static void
store_unlink(int dir, const char *id, const char *suffix)
{
	char name[STORE_NAME_MAX];

	snprintf(name, sizeof(name), "%s%s", id, suffix);
	(void)unlinkat(dir, name, 0);
}

/* A kept session that cannot come back: its files to lost/ for the
 * administrator, and one line that names it and says why. */
static void
store_lost(struct daemon *d, const char *id, const char *why)
{
	static const char *const sfx[] = {".rec", ".tar"};
	char name[STORE_NAME_MAX];
	int lost;
	size_t i;

	log_warnx("session %s: cannot be restored: %s (its files are in lost/)", id, why);
	if (mkdirat(d->store_fd, "lost", 0700) < 0 && errno != EEXIST)
		return;
	lost = openat(d->store_fd, "lost", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s%s", id, sfx[i]);
		if (lost < 0 || renameat(d->store_fd, name, lost, name) < 0)
			(void)unlinkat(d->store_fd, name, 0);
	}
	fd_close(lost);
}

/* ---- a live session's files -------------------------------------------------- */

static void
store_facts(const struct session *s, struct session_facts *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->id, s->id, sizeof(f->id));
	f->uid = s->uid;
	f->ngids = s->ngids;
	memcpy(f->gids, s->gids, s->ngids * sizeof(f->gids[0]));
	snprintf(f->profile, sizeof(f->profile), "%s", s->profile);
	snprintf(f->interpreter, sizeof(f->interpreter), "%s",
		 s->cells != NULL ? cells_runtime(s->cells) : "");
	f->workspace_bytes = s->workspace_bytes;
	f->idle_ms = s->idle_ms;
	f->lifetime_ms = s->lifetime_ms;
	f->lease_end_ms = s->lease_end_ms;
	f->detached = s->detached;
	f->background = s->background;
}

void
session_store_record(struct session *s)
{
	char buf[SESSION_RECORD_MAX], name[STORE_NAME_MAX];
	struct session_facts f;
	int n;

	if (s->d->store_fd < 0)
		return;
	store_facts(s, &f);
	n = session_record_format(&f, buf, sizeof(buf));
	snprintf(name, sizeof(name), "%s.rec", s->id);
	if (n < 0 || (n = store_write(s->d->store_fd, name, buf, (size_t)n)) < 0)
		log_warnx("session %.8s: cannot keep its record: %s", s->id, strerror(-n));
}

/* The debounce's timer: the snapshot that waited is due. */
static void
store_snap_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	session_store_snapshot(arg);
}

/* A snapshot could not start: a stopping daemon ends the session anyway. */
static void
store_snap_failed(struct session *s)
{
	if (s->stop_after_snap)
		session_end_why(s, "the daemon is stopping");
}

void
session_store_snapshot(struct session *s)
{
	char name[STORE_NAME_MAX];
	uint64_t now = clock_now_ms();
	struct kop *k;
	int r;

	if (s->d->store_fd < 0 || s->state != SESSION_READY || s->keeper < 0)
		return;
	if (s->snap_fd >= 0) {
		s->snap_dirty = true; /* one more after this one */
		return;
	}
	/*
	 * At most one per interval: each copies the whole workspace through
	 * the keeper, whose other requests (a client's file operations, a
	 * run's mount) wait behind it. A crash loses at most the interval's
	 * changes; a stop writes them first (session_store_flush).
	 */
	if (!s->stop_after_snap && s->snap_done_ms != 0 &&
	    now - s->snap_done_ms < SESSION_SNAP_INTERVAL_MS) {
		struct timeval tv;
		uint64_t left = SESSION_SNAP_INTERVAL_MS - (now - s->snap_done_ms);

		if (s->snap_ev == NULL)
			s->snap_ev = xevtimer_new(s->d->base, store_snap_cb, s);
		if (!event_pending(s->snap_ev, EV_TIMEOUT, NULL)) {
			tv.tv_sec = (time_t)(left / 1000);
			tv.tv_usec = (suseconds_t)((left % 1000) * 1000);
			event_add(s->snap_ev, &tv);
		}
		return;
	}
	if (s->snap_ev != NULL)
		event_del(s->snap_ev);
	s->snap_dirty = false;
	snprintf(name, sizeof(name), "%s.tar.tmp", s->id);
	s->snap_fd = openat(s->d->store_fd, name,
			    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->snap_fd < 0) {
		log_warn("session %.8s: cannot snapshot its workspace", s->id);
		store_snap_failed(s);
		return;
	}
	k = xcalloc(1, sizeof(*k));
	k->kind = KOP_SAVE;
	k->op = KEEP_SAVE;
	k->fd = -1;
	snprintf(k->what, sizeof(k->what), "snapshot");
	r = session_send(s, k, "", s->snap_fd);
	if (r < 0) {
		free(k);
		log_warnx("session %.8s: cannot snapshot its workspace: %s", s->id, strerror(-r));
		store_unlink(s->d->store_fd, s->id, ".tar.tmp");
		s->snap_fd = fd_close(s->snap_fd);
		store_snap_failed(s);
	}
}

bool
session_store_flush(struct session *s)
{
	bool due = s->snap_fd >= 0 || s->snap_dirty ||
		   (s->snap_ev != NULL && event_pending(s->snap_ev, EV_TIMEOUT, NULL));

	if (s->d->store_fd < 0 || s->state != SESSION_READY || s->keeper < 0 || !due)
		return false;
	s->stop_after_snap = true;
	if (s->snap_fd >= 0)
		s->snap_dirty = true; /* the changes since it began: one more, at once */
	else
		session_store_snapshot(s);
	return true;
}

/* The keeper wrote the snapshot (or failed): it replaces the last one. */
static void
store_snapshot_done(struct session *s, const struct keep_reply *rep)
{
	char tmp[STORE_NAME_MAX], name[STORE_NAME_MAX];
	int r = rep->err;

	snprintf(name, sizeof(name), "%s.tar", s->id);
	snprintf(tmp, sizeof(tmp), "%s.tar.tmp", s->id);
	if (r == 0 && renameat(s->d->store_fd, tmp, s->d->store_fd, name) < 0)
		r = -errno;
	if (r != 0) {
		log_warnx("session %.8s: its snapshot failed: %s", s->id, strerror(-r));
		(void)unlinkat(s->d->store_fd, tmp, 0);
	} else {
		if (rep->count > 0)
			log_info("session %.8s: snapshot of %" PRIu64 " bytes left out %u links, "
				 "devices or long names",
				 s->id, rep->size, rep->count);
	}
	s->snap_fd = fd_close(s->snap_fd);
	s->snap_done_ms = clock_now_ms();
	if (s->snap_dirty)
		session_store_snapshot(s);
	else if (s->stop_after_snap)
		session_end_why(s, "the daemon is stopping");
}

static void store_save_done(struct session *s, struct kop *k, const struct keep_reply *rep);

void
session_store_restore_free(struct session_restore *rs)
{
	if (rs == NULL)
		return;
	if (rs->map != NULL && rs->map != MAP_FAILED)
		munmap(rs->map, rs->len);
	free(rs);
}

/* The restore failed at why: a client's archive (its opener waits) is
 * refused to it; a kept session goes to lost/. Either way it ends. */
static void
store_restore_failed(struct session *s, const char *why)
{
	if (s->open_c != NULL) {
		client_send_error(s->open_c, s->open_req, PROTO_ERR_BAD_REQUEST, "archive: %s",
				  why);
		s->open_c = NULL;
	} else {
		store_lost(s->d, s->id, why);
	}
	session_end_why(s, "its workspace could not be restored");
}

/* The next entry of the archive to the keeper, or the end of the restore. */
static void
store_restore_next(struct session *s)
{
	struct session_restore *rs = s->restore;
	struct session_archive_entry e;
	struct kop *k;
	int r, fd = -1;

	do
		r = session_archive_next(&rs->it, &e);
	while (r > 0 && e.dir && e.path[0] == '\0'); /* the workspace itself */
	if (r <= 0) {
		if (r < 0) {
			store_restore_failed(s, rs->why);
			return;
		}
		session_store_restore_free(rs);
		s->restore = NULL;
		session_ready(s);
		/* A session opened from a client's archive has no copy kept
		 * yet (a restored one's is the same files: kept again). */
		session_store_snapshot(s);
		return;
	}
	if (!e.dir && memfd_sealed_create("airlock-restore", e.data, (size_t)e.size, &fd) < 0) {
		store_restore_failed(s, "no memory for a file");
		return;
	}
	k = xcalloc(1, sizeof(*k));
	k->kind = KOP_RESTORE;
	k->op = e.dir ? KEEP_MKDIR : KEEP_WRITE;
	snprintf(k->what, sizeof(k->what), "%s", e.path);
	r = session_send(s, k, e.path, fd);
	fd_close(fd);
	if (r < 0) {
		free(k);
		store_restore_failed(s, "its keeper refused a request");
	}
}

void
session_store_restore_start(struct session *s)
{
	store_restore_next(s);
}

void
session_store_answer(struct session *s, struct kop *k, const struct keep_reply *rep)
{
	char why[PROTO_NAME_MAX + 64];

	if (k->kind == KOP_SAVE && k->c != NULL) {
		store_save_done(s, k, rep);
		return;
	}
	if (k->kind == KOP_SAVE) {
		store_snapshot_done(s, rep);
		return;
	}
	if (s->restore == NULL)
		return;
	if (rep->err != 0) {
		snprintf(why, sizeof(why), "%s: %s", k->what, strerror(-rep->err));
		store_restore_failed(s, why);
		return;
	}
	store_restore_next(s);
}

void
session_store_end(struct session *s, bool forget)
{
	if (s->snap_ev != NULL)
		event_del(s->snap_ev);
	if (s->snap_fd >= 0) {
		store_unlink(s->d->store_fd, s->id, ".tar.tmp");
		s->snap_fd = fd_close(s->snap_fd);
	}
	session_store_restore_free(s->restore);
	s->restore = NULL;
	if (forget && s->d->store_fd >= 0) {
		store_unlink(s->d->store_fd, s->id, ".rec");
		store_unlink(s->d->store_fd, s->id, ".tar");
	}
}

/* ---- the owner's requests ------------------------------------------------------ */

/* The session uid asks for by id, admitted as a file operation of type on
 * it (found, ready, the uid allowed); NULL when refused (answered). */
static struct session *
store_admit(struct daemon *d, struct client *c, uint32_t req_id, enum proto_type type,
	    const char *id)
{
	struct session *s = session_find(d, client_uid(c), id);
	struct proto_file_op op = {.session = id, .path = ""};
	struct admit_decision dec;
	struct admit_gather g;

	admit_gather_file_op(d, c, type, &op, s != NULL, s != NULL && s->state == SESSION_READY,
			     &g);
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		client_send_error(c, req_id, dec.code, "%s", dec.why);
		return NULL;
	}
	if (s == NULL) /* refused above (rule 3): said here where s is used */
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "no session %s", id);
	return s;
}

void
session_store_extend(struct daemon *d, struct client *c, uint32_t req_id,
		     const struct proto_session_extend *x)
{
	struct session *s = store_admit(d, c, req_id, PROTO_SESSION_EXTEND, x->session);
	uint64_t max = d->cfg->session_lifetime_ms_max;
	struct timeval tv;

	if (s == NULL)
		return;
	/* The same bound as at open: a lease is never longer than a session
	 * may ask for, counted from now. */
	if (x->lifetime_ms > max) {
		client_send_error(c, req_id, PROTO_ERR_TOO_LARGE, "lifetime_ms: at most %" PRIu64,
				  max);
		return;
	}
	s->lifetime_ms = x->lifetime_ms;
	s->lease_end_ms = clock_realtime_ms() + x->lifetime_ms;
	tv.tv_sec = (time_t)(x->lifetime_ms / 1000);
	tv.tv_usec = (suseconds_t)((x->lifetime_ms % 1000) * 1000);
	event_add(s->life_ev, &tv);
	session_store_record(s);
	log_info("session %.8s uid %u: lease extended by %" PRIu64 " ms", s->id, (unsigned)s->uid,
		 x->lifetime_ms);
	session_reply_ok(c, req_id);
}

void
session_store_save(struct daemon *d, struct client *c, uint32_t req_id, const char *id)
{
	struct session *s = store_admit(d, c, req_id, PROTO_SESSION_SAVE, id);
	struct kop *k;
	int fd, r;

	if (s == NULL)
		return;
	fd = memfd_create("airlock-save", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		client_send_error(c, req_id, PROTO_ERR_INTERNAL, "cannot save: %s",
				  strerror(errno));
		return;
	}
	k = xcalloc(1, sizeof(*k));
	k->kind = KOP_SAVE;
	k->op = KEEP_SAVE;
	k->c = c;
	k->req_id = req_id;
	k->fd = fd;
	snprintf(k->what, sizeof(k->what), "the workspace");
	r = session_send(s, k, "", fd);
	if (r < 0) {
		client_send_error(c, req_id, PROTO_ERR_INTERNAL, "cannot save: %s", strerror(-r));
		close(fd);
		free(k);
	}
}

/* The keeper wrote a client's archive into k->fd: sent as file_data
 * within the uid's byte budget, or refused past file_max_bytes (a cut
 * archive would be a broken one). */
static void
store_save_done(struct session *s, struct kop *k, const struct keep_reply *rep)
{
	if (rep->err != 0)
		session_reply_errno(k->c, k->req_id, "the workspace", rep->err);
	else if (rep->size > s->d->cfg->session_file_max)
		client_send_error(k->c, k->req_id, PROTO_ERR_TOO_LARGE,
				  "the archive is %" PRIu64 " bytes, past file_max_bytes",
				  rep->size);
	else if (lseek(k->fd, 0, SEEK_SET) < 0)
		client_send_error(k->c, k->req_id, PROTO_ERR_INTERNAL, "cannot read the archive");
	else
		session_reply_read(s->d, s->uid, k, k->fd);
	k->fd = fd_close(k->fd);
}

/* A restore of the archive in fd (len bytes; the caller keeps fd), from
 * our own read-only mapping, checked whole against quota before one entry
 * goes to a keeper: 0 with *ret, or -errno with why. */
static int
store_restore_new(int fd, size_t len, uint64_t quota, char *why, size_t whylen,
		  struct session_restore **ret)
{
	struct session_restore *rs;
	size_t n;
	int r;

	if (len == 0) {
		snprintf(why, whylen, "an empty archive");
		return -EBADMSG;
	}
	rs = xcalloc(1, sizeof(*rs));
	rs->len = len;
	rs->map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (rs->map == MAP_FAILED) {
		r = -errno;
		snprintf(why, whylen, "cannot map the archive: %s", strerror(-r));
		session_store_restore_free(rs);
		return r;
	}
	r = session_archive_walk(rs->map, rs->len, quota, NULL, NULL, why, whylen, &n);
	if (r < 0) {
		session_store_restore_free(rs);
		return r;
	}
	session_archive_iter_init(&rs->it, rs->map, rs->len, quota, rs->why, sizeof(rs->why));
	*ret = rs;
	return 0;
}

int
session_store_archive_check(struct client *c, uint32_t req_id, const struct proto_blob *blob,
			    uint64_t quota, struct session_restore **ret)
{
	char why[256];
	int fd = -1, r;

	/* Our own mapping of a sealed memfd (the client's, or one made of
	 * inline bytes): it outlives the message, and nobody can change it
	 * between the check and the restore. */
	if (blob->fd >= 0)
		fd = fcntl(blob->fd, F_DUPFD_CLOEXEC, 0);
	else if (memfd_sealed_create("airlock-archive", blob->data ? (const void *)blob->data : "",
				     blob->len, &fd) < 0)
		fd = -1;
	if (fd < 0) {
		client_send_error(c, req_id, PROTO_ERR_INTERNAL, "archive: cannot be passed on");
		return -ENOMEM;
	}
	r = store_restore_new(fd, blob->len, quota, why, sizeof(why), ret);
	close(fd);
	if (r < 0)
		client_send_error(c, req_id,
				  r == -EFBIG			 ? PROTO_ERR_TOO_LARGE
				  : r == -EBADMSG || r == -EPERM ? PROTO_ERR_BAD_REQUEST
								 : PROTO_ERR_INTERNAL,
				  "archive: %s", why);
	return r;
}

int
session_store_open(const char *dir)
{
	struct stat st;
	int top, fd = -1;

	if (dir == NULL)
		return -1;
	/* Ours (main_state_dir() gave it to us), not a link, 0700; the same
	 * for sessions/ in it, which we make. */
	top = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0 || fstat(top, &st) < 0 || st.st_uid != geteuid() || fchmod(top, 0700) < 0)
		goto fail;
	if (mkdirat(top, "sessions", 0700) < 0 && errno != EEXIST)
		goto fail;
	fd = openat(top, "sessions", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || fchmod(fd, 0700) < 0)
		goto fail;
	close(top);
	return fd;
fail:
	log_warn("state_directory %s: sessions will not outlive the daemon", dir);
	fd_close(fd);
	fd_close(top);
	return -1;
}

/* ---- a restart ----------------------------------------------------------------- */

/* The checks a record's facts must pass to come back; why if not. */
static bool
store_refuses(struct daemon *d, const struct session_facts *f, char *why, size_t len)
{
	const struct config *cfg = d->cfg;

	if (f->uid >= cfg->uid_base && f->uid < cfg->uid_base + cfg->uid_count)
		snprintf(why, len, "its owner %u is a sandbox uid", (unsigned)f->uid);
	else if (session_policy_refuses(cfg, f->uid, f->gids, f->ngids, f->profile, why, len))
		return true;
	else if (f->interpreter[0] != '\0' &&
		 !cells_runtime_ok(config_runtime_find(cfg, f->interpreter)))
		snprintf(why, len, "its interpreter %s is gone", f->interpreter);
	/* As admission refuses it (admit.c): background is for interpreter
	 * sessions only; the profile's background_processes is checked again
	 * at every interpreter's start (run_ask_flags). */
	else if (f->background && f->interpreter[0] == '\0')
		snprintf(why, len, "background processes without an interpreter");
	else if (f->workspace_bytes == 0 || f->workspace_bytes > PROTO_BLOB_MAX * 64ULL)
		snprintf(why, len, "a workspace of %" PRIu64 " bytes", f->workspace_bytes);
	else
		return false;
	return true;
}

/* The archive of id, checked whole (absent: an empty workspace) into
 * *ret; 0, or -errno with why. */
static int
store_archive(struct daemon *d, const struct session_facts *f, struct session_restore **ret,
	      char *why, size_t len)
{
	char name[STORE_NAME_MAX];
	struct stat st;
	int fd, r;

	snprintf(name, sizeof(name), "%s.tar", f->id);
	/* Its contents at most the quota, plus a header per entry and tar's padding. */
	fd = store_open(d->store_fd, name,
			f->workspace_bytes + (SESSION_ARCHIVE_ENTRIES_MAX + 22) * 1024ULL, &st);
	if (fd == -ENOENT) {
		*ret = NULL;
		return 0;
	}
	if (fd < 0) {
		snprintf(why, len, "%s: %s", name, strerror(-fd));
		return fd;
	}
	r = store_restore_new(fd, (size_t)st.st_size, f->workspace_bytes, why, len, ret);
	close(fd);
	return r;
}

/* One kept session, named by its record name (ID.rec). */
static void
store_recover_one(struct daemon *d, const char *name)
{
	char text[SESSION_RECORD_MAX + 1], why[320], id[PROTO_SESSION_ID_LEN + 1];
	struct session_restore *rs = NULL;
	struct session_facts f;
	struct session *s;
	struct stat st;
	uint64_t now = clock_realtime_ms();
	ssize_t n;
	int fd;

	snprintf(id, sizeof(id), "%.*s", PROTO_SESSION_ID_LEN, name);
	fd = store_open(d->store_fd, name, SESSION_RECORD_MAX, &st);
	if (fd < 0) {
		snprintf(why, sizeof(why), "its record: %s", strerror(-fd));
		store_lost(d, id, why);
		return;
	}
	n = read(fd, text, sizeof(text));
	close(fd);
	if (n < 0 || session_record_parse(text, (size_t)n, name, &f, why, sizeof(why)) < 0) {
		if (n < 0)
			snprintf(why, sizeof(why), "its record: %s", strerror(errno));
		store_lost(d, id, why);
		return;
	}
	if (f.lease_end_ms <= now) {
		log_info("session %.8s: its lease ended while the daemon was down", f.id);
		store_unlink(d->store_fd, f.id, ".rec");
		store_unlink(d->store_fd, f.id, ".tar");
		return;
	}
	if (store_refuses(d, &f, why, sizeof(why)) ||
	    store_archive(d, &f, &rs, why, sizeof(why)) < 0) {
		store_lost(d, f.id, why);
		return;
	}
	s = session_create(d, &f);
	if (s == NULL) {
		session_store_restore_free(rs);
		store_lost(d, f.id, "no free sandbox uid");
		return;
	}
	s->restore = rs; /* NULL: never snapshotted, restored empty as it began */
	if (s->cells != NULL)
		cells_mark_lost(s->cells, "the daemon was restarted: the interpreter is a new one "
					  "(variables are gone; files are kept)");
	/* A start that fails (logged) leaves its files for the next start. */
	s->keep_store = true;
	if (session_start(s, f.lease_end_ms - now) == 0)
		s->keep_store = false;
}

void
session_store_recover(struct daemon *d)
{
	struct dirent *e;
	DIR *dir;
	int fd;

	if (d->store_fd < 0)
		return;
	fd = fcntl(d->store_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 || (dir = fdopendir(fd)) == NULL) {
		log_warn("the sessions' state directory");
		fd_close(fd);
		return;
	}
	while ((e = readdir(dir)) != NULL) {
		size_t len = strlen(e->d_name);

		/* Left by a snapshot or a record the daemon was stopped in. */
		if (len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0) {
			(void)unlinkat(d->store_fd, e->d_name, 0);
			continue;
		}
		if (len == PROTO_SESSION_ID_LEN + 4 && strcmp(e->d_name + len - 4, ".rec") == 0)
			store_recover_one(d, e->d_name);
	}
	closedir(dir);
}
