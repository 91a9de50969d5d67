/*
 * session_record.c: a kept session's record (session_record.h): written by
 * the frontend, read back by the next daemon, parsed strictly since the
 * daemon treats its own state directory as input (docs/design-sessions.md).
 */
#include "session_record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
session_record_format(const struct session_facts *f, char *buf, size_t len)
{
	size_t off, i;
	int n;

	n = snprintf(buf, len,
		     "version=1\nid=%s\nuid=%u\nprofile=%s\ninterpreter=%s\n"
		     "workspace_bytes=%" PRIu64 "\nidle_ms=%" PRIu64 "\nlifetime_ms=%" PRIu64
		     "\nlease_end_ms=%" PRIu64 "\ndetached=%d\nbackground=%d\ngids=",
		     f->id, (unsigned)f->uid, f->profile, f->interpreter, f->workspace_bytes,
		     f->idle_ms, f->lifetime_ms, f->lease_end_ms, f->detached ? 1 : 0,
		     f->background ? 1 : 0);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (i = 0; i < f->ngids && i < SESSION_GROUPS_MAX; i++) {
		n = snprintf(buf + off, len - off, "%s%u", i ? "," : "", (unsigned)f->gids[i]);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	if (off + 2 > len)
		return -ENOSPC;
	buf[off++] = '\n';
	buf[off] = '\0';
	return (int)off;
}

/* A decimal number of v (no sign, no leading junk) up to max. */
static int
store_number(const char *v, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long n;

	if (v[0] < '0' || v[0] > '9')
		return -EBADMSG;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || n > max)
		return -EBADMSG;
	*ret = n;
	return 0;
}

/* A name field: at most max bytes of [A-Za-z0-9_.-] (a profile's or a
 * runtime's name), empty only if may_be_empty. */
static int
store_name(const char *v, char *out, size_t max, bool may_be_empty)
{
	size_t n = strlen(v);

	if (n >= max || (n == 0 && !may_be_empty) ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_.-") != n)
		return -EBADMSG;
	memcpy(out, v, n + 1);
	return 0;
}

static int
store_gids(const char *v, struct session_facts *f)
{
	uint64_t g;
	char tmp[16];

	f->ngids = 0;
	while (*v != '\0') {
		size_t n = strcspn(v, ",");

		if (n == 0 || n >= sizeof(tmp) || f->ngids == SESSION_GROUPS_MAX)
			return -EBADMSG;
		memcpy(tmp, v, n);
		tmp[n] = '\0';
		if (store_number(tmp, UINT32_MAX - 1, &g) < 0)
			return -EBADMSG;
		f->gids[f->ngids++] = (gid_t)g;
		v += n;
		if (*v == ',' && *++v == '\0')
			return -EBADMSG;
	}
	return 0;
}

/* One key=value line into f; seen marks the keys given. */
static int
store_line(char *line, struct session_facts *f, unsigned *seen)
{
	static const char *const keys[] = {"version", "id",	     "uid",
					   "profile", "interpreter", "workspace_bytes",
					   "idle_ms", "lifetime_ms", "lease_end_ms",
					   "gids",    "detached",    "background"};
	char *v = strchr(line, '=');
	uint64_t n;
	unsigned i;

	if (v == NULL)
		return -EBADMSG;
	*v++ = '\0';
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]) && strcmp(line, keys[i]) != 0; i++)
		;
	if (i == sizeof(keys) / sizeof(keys[0]) || (*seen & (1u << i)))
		return -EBADMSG;
	*seen |= 1u << i;
	switch (i) {
	case 0:
		return strcmp(v, "1") == 0 ? 0 : -EBADMSG;
	case 1:
		if (strlen(v) != PROTO_SESSION_ID_LEN ||
		    strspn(v, "0123456789abcdef") != PROTO_SESSION_ID_LEN)
			return -EBADMSG;
		memcpy(f->id, v, PROTO_SESSION_ID_LEN + 1);
		return 0;
	case 2:
		if (store_number(v, UINT32_MAX - 1, &n) < 0)
			return -EBADMSG;
		f->uid = (uid_t)n;
		return 0;
	case 3:
		return store_name(v, f->profile, sizeof(f->profile), false);
	case 4:
		return store_name(v, f->interpreter, sizeof(f->interpreter), true);
	case 9:
		return store_gids(v, f);
	case 10:
	case 11:
		/* A flag: exactly 0 or 1. */
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
			return -EBADMSG;
		*(i == 10 ? &f->detached : &f->background) = v[0] == '1';
		return 0;
	default:
		break;
	}
	if (store_number(v, UINT64_MAX / 2, &n) < 0)
		return -EBADMSG;
	*(i == 5   ? &f->workspace_bytes
	  : i == 6 ? &f->idle_ms
	  : i == 7 ? &f->lifetime_ms
		   : &f->lease_end_ms) = n;
	return 0;
}

int
session_record_parse(const char *text, size_t len, const char *name, struct session_facts *ret,
		     char *why, size_t whylen)
{
	char buf[SESSION_RECORD_MAX + 1], *line, *next;
	struct session_facts f;
	unsigned seen = 0, lineno = 0;

	if (len > SESSION_RECORD_MAX || memchr(text, '\0', len) != NULL) {
		snprintf(why, whylen, "a record longer than %d bytes, or with a NUL",
			 SESSION_RECORD_MAX);
		return -EBADMSG;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	memset(&f, 0, sizeof(f));
	for (line = buf; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next == NULL) {
			snprintf(why, whylen, "no newline at its end");
			return -EBADMSG;
		}
		*next++ = '\0';
		lineno++;
		if (store_line(line, &f, &seen) < 0) {
			snprintf(why, whylen, "line %u: an unknown, repeated or bad key", lineno);
			return -EBADMSG;
		}
	}
	if (seen != (1u << 12) - 1) {
		snprintf(why, whylen, "a key missing");
		return -EBADMSG;
	}
	if (strncmp(name, f.id, PROTO_SESSION_ID_LEN) != 0 ||
	    strcmp(name + PROTO_SESSION_ID_LEN, ".rec") != 0) {
		snprintf(why, whylen, "its id is not its file's name");
		return -EBADMSG;
	}
	*ret = f;
	return 0;
}
