/*
 * session_reply.c: a session's file operations answered to their client
 * from what its keeper sent: an error by its errno, ok, a file read
 * (copied into a sealed memfd within the uid's budget), a directory list.
 */
#include "session_reply.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admit_facts.h"
#include "budget.h"
#include "config.h"
#include "frontend.h"
#include "keep_msg.h"
#include "log.h"
#include "memfd.h"
#include "rules.h"
#include "xalloc.h"
#include "fdio.h"

/* A keeper's -errno as a client error. */
void
session_reply_errno(struct client *c, uint32_t req_id, const char *path, int neg_err)
{
	int err = -neg_err;

	switch (err) {
	case ENOENT:
		client_send_error(c, req_id, PROTO_ERR_NOT_FOUND, "%s: %s", path, strerror(err));
		break;
	case ELOOP:
	case EXDEV:
		client_send_error(
			c, req_id, PROTO_ERR_BAD_REQUEST,
			"%s: refused: the path leaves the workspace or goes through a link", path);
		break;
	case ENOSPC:
	case EFBIG:
	case EDQUOT:
		client_send_error(c, req_id, PROTO_ERR_TOO_LARGE, "%s: %s", path, strerror(err));
		break;
	case EISDIR:
	case ENOTDIR:
	case EINVAL:
	case ENOTEMPTY:
	case EEXIST:
	case ENAMETOOLONG:
		client_send_error(c, req_id, PROTO_ERR_BAD_REQUEST, "%s: %s%s", path, strerror(err),
				  err == EINVAL ? " (not a regular file, or not a valid path)"
						: "");
		break;
	default:
		client_send_error(c, req_id, PROTO_ERR_INTERNAL, "%s: %s", path, strerror(err));
		break;
	}
}

void
session_reply_ok(struct client *c, uint32_t req_id)
{
	struct proto_out out;

	if (proto_encode_simple(req_id, PROTO_OK, &out) < 0)
		fatalx("cannot encode ok");
	client_send(c, &out);
}

/* file_read: copy the opened file (at most file_max) into a sealed memfd. */
void
session_reply_read(struct daemon *d, uid_t uid, struct kop *k, int fd)
{
	struct proto_file_data fdata;
	struct proto_out out;
	uint64_t len, size, left, want = budget_fd_bytes(fd);
	struct admit_decision dec;
	struct admit_gather g;
	int mfd, r;

	/*
	 * The copy is held for the uid until its client read the reply: a
	 * client that sends file_read after file_read and never reads would
	 * otherwise pin file_max_bytes per request (issue 13, finding 2).
	 * Counted by what the copy will really hold (holes stay holes).
	 */
	admit_gather_file_copy(d, uid, k->what, want, &g);
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		client_send_error(k->c, k->req_id, dec.code, "%s", dec.why);
		return;
	}
	/* Its memfd needs a probe: admit_decide refused it past the uid's
	 * share (max_fds_per_uid) or the daemon's (client.c, budget_hold()). */
	left = budget_bytes_left(&d->budget, uid, d->cfg->max_bytes_per_uid);
	r = memfd_sealed_copy_sparse(fd, d->cfg->session_file_max, left - PROTO_MSG_MAX, &mfd, &len,
				     &size);
	if (r < 0) {
		session_reply_errno(k->c, k->req_id, k->what, r);
		return;
	}
	memset(&fdata, 0, sizeof(fdata));
	fdata.data = (struct proto_blob){.len = (size_t)len, .fd = mfd, .present = true};
	fdata.size = size < len ? len : size;
	fdata.truncated = len < fdata.size;
	r = proto_encode_file_data(k->req_id, &fdata, &out);
	close(mfd);
	client_send_encoded(k->c, k->req_id, r, &out, "file_data");
}

/* file_list: the keeper's records, checked, as many as fit in one packet. */
void
session_reply_list(struct kop *k, int fd, uint32_t count, bool more)
{
	static const char *const kinds[] = {"file", "dir", "link", "other"};
	struct proto_file_entry *ents = NULL;
	struct proto_file_list l = {0};
	struct proto_out out;
	struct stat st;
	const struct keep_entry *rec = NULL;
	size_t i, n = 0;
	int r;

	/* The keeper lives next to hostile files: its records are checked. */
	if (count > KEEP_LIST_MAX || fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_size != (uint64_t)count * sizeof(struct keep_entry)) {
		client_send_error(k->c, k->req_id, PROTO_ERR_INTERNAL,
				  "bad listing from the keeper");
		return;
	}
	if (count > 0) {
		rec = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (rec == MAP_FAILED) {
			client_send_error(k->c, k->req_id, PROTO_ERR_INTERNAL, "mmap: %s",
					  strerror(errno));
			return;
		}
		ents = xcalloc(count, sizeof(*ents));
	}
	for (i = 0; i < count; i++) {
		const struct keep_entry *e = &rec[i];

		if (memchr(e->name, '\0', sizeof(e->name)) == NULL || e->name[0] == '\0' ||
		    e->kind > KEEP_KIND_OTHER)
			continue;
		ents[n++] = (struct proto_file_entry){.name = e->name,
						      .kind = kinds[e->kind],
						      .size = e->size,
						      .mtime_ms = e->mtime_ms};
	}
	l.entries = ents;
	l.nentries = n;
	l.truncated = more;
	/* Long names can make a full listing larger than a packet: send the
	 * first entries that fit, and say so. */
	while ((r = proto_encode_file_list(k->req_id, &l, &out)) == -E2BIG && l.nentries > 0) {
		l.nentries = l.nentries * 3 / 4;
		l.truncated = true;
	}
	client_send_encoded(k->c, k->req_id, r, &out, "file_list");
	free(ents);
	if (rec != NULL)
		munmap((void *)rec, (size_t)st.st_size);
}
