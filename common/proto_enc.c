/* proto_enc.c: the encoder's primitives (proto_enc.h). */
#include "proto_enc.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "fdpass.h"
#include "limit.h"
#include "memfd.h"
#include "rules.h"

/* Record the first failure. */
void
enc_fail(struct proto_enc *e, int err)
{
	if (e->err == 0)
		e->err = err;
}

/* msgpack write callback: the sbuffer, capped at PROTO_MSG_MAX. */
static int
enc_write(void *data, const char *buf, size_t len)
{
	struct proto_enc *e = data;

	if (len == 0)
		return 0;
	if (len > PROTO_MSG_MAX - e->sb.size) {
		enc_fail(e, -E2BIG);
		return -1;
	}
	if (msgpack_sbuffer_write(&e->sb, buf, len) != 0) {
		enc_fail(e, -ENOMEM);
		return -1;
	}
	return 0;
}

/* Record a failed msgpack call (enc_write has usually named the reason). */
static void
enc_check(struct proto_enc *e, int r)
{
	if (r != 0)
		enc_fail(e, -ENOMEM);
}

/* A string of at most max bytes. */
void
enc_rawstr(struct proto_enc *e, const char *s, size_t max)
{
	size_t n;

	if (e->err != 0)
		return;
	if (s == NULL) {
		enc_fail(e, -EINVAL);
		return;
	}
	n = strnlen(s, max + 1);
	if (n > max) {
		enc_fail(e, -E2BIG);
		return;
	}
	enc_check(e, msgpack_pack_str(&e->pk, n));
	if (e->err == 0 && n > 0)
		enc_check(e, msgpack_pack_str_body(&e->pk, s, n));
}

/* A map header of n entries. */
void
enc_map(struct proto_enc *e, size_t n)
{
	if (e->err == 0)
		enc_check(e, msgpack_pack_map(&e->pk, n));
}

/* An array header of n entries. */
void
enc_array(struct proto_enc *e, size_t n)
{
	if (e->err == 0)
		enc_check(e, msgpack_pack_array(&e->pk, n));
}

/* key: an array header of n entries of v, at most max. */
void
enc_kv_array(struct proto_enc *e, const char *key, const void *v, size_t n, size_t max)
{
	if (n > max || (n > 0 && v == NULL))
		enc_fail(e, n > max ? -E2BIG : -EINVAL);
	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_array(e, n);
}

/* The key of a key: value pair; whether to go on with the value. */
static bool
enc_key(struct proto_enc *e, const char *key)
{
	enc_rawstr(e, key, PROTO_STR_MAX);
	return e->err == 0;
}

/* key: unsigned value. */
void
enc_kv_uint(struct proto_enc *e, const char *key, uint64_t v)
{
	if (enc_key(e, key))
		enc_check(e, msgpack_pack_uint64(&e->pk, v));
}

/* key: signed value. */
void
enc_kv_int(struct proto_enc *e, const char *key, int64_t v)
{
	if (enc_key(e, key))
		enc_check(e, msgpack_pack_int64(&e->pk, v));
}

/* key: boolean. */
void
enc_kv_bool(struct proto_enc *e, const char *key, bool v)
{
	if (enc_key(e, key))
		enc_check(e, v ? msgpack_pack_true(&e->pk) : msgpack_pack_false(&e->pk));
}

/* key: string of at most max bytes (nonempty when asked). */
void
enc_kv_str(struct proto_enc *e, const char *key, const char *s, size_t max, bool nonempty)
{
	if (nonempty && s != NULL && s[0] == '\0')
		enc_fail(e, -EINVAL);
	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_rawstr(e, s, max);
}

/* key: a session id, checked like the decoder checks it. */
void
enc_kv_session(struct proto_enc *e, const char *key, const char *session)
{
	if (!rules_session_id_str_valid(session))
		enc_fail(e, -EINVAL);
	enc_kv_str(e, key, session, PROTO_SESSION_ID_LEN, true);
}

/* key: a profile name, checked like the decoder checks it. */
void
enc_kv_profile(struct proto_enc *e, const char *key, const char *name)
{
	if (!rules_profile_name_valid(name))
		enc_fail(e, -EINVAL);
	enc_kv_str(e, key, name, PROTO_PROFILE_MAX, true);
}

/* key: one of a closed set of names. */
void
enc_kv_oneof(struct proto_enc *e, const char *key, const char *const *names, const char *s)
{
	if (proto_name_in(names, s) == NULL)
		enc_fail(e, -EINVAL);
	enc_kv_str(e, key, s, PROTO_NAME_MAX, true);
}

/* key: an array of n (<= max) non-empty strings of at most len bytes
 * (info_ok.profiles: allow-list entries, hidden paths). */
void
enc_strlist(struct proto_enc *e, const char *key, const char *const *v, size_t n, size_t max,
	    size_t len)
{
	size_t i;

	enc_kv_array(e, key, v, n, max);
	for (i = 0; e->err == 0 && i < n; i++) {
		if (v[i] != NULL && v[i][0] == '\0')
			enc_fail(e, -EINVAL);
		enc_rawstr(e, v[i], len);
	}
}

/* key: an array of names that pass their rule (DEC_MOUNTV, DEC_MODULEV). */
void
enc_namelist(struct proto_enc *e, const char *key, const char *const *v, size_t n,
	     enum dec_kind kind)
{
	bool module = kind == DEC_MODULEV;
	size_t i, max = module ? PROTO_BLOCKED_IMPORTS_MAX : PROTO_INFO_MOUNTS_MAX;

	if (n > max)
		enc_fail(e, -E2BIG);
	for (i = 0; e->err == 0 && i < n && v != NULL; i++)
		if (v[i] == NULL || (module ? !rules_module_name_check(v[i], strlen(v[i]))
					    : !rules_mount_name_check(v[i], strlen(v[i]))))
			enc_fail(e, -EINVAL);
	enc_strlist(e, key, v, n, max, module ? PROTO_MODULE_NAME_MAX : PROTO_MOUNT_MAX);
}

/* Attach a blob as an fd: a dup of the caller's sealed memfd, or a new one. */
static void
enc_attach(struct proto_enc *e, const struct proto_blob *b)
{
	uint64_t size;
	int r, fd;

	if (b->len > PROTO_BLOB_MAX || e->nfds >= PROTO_FDS_MAX) {
		enc_fail(e, -E2BIG);
		return;
	}
	if (b->fd >= 0) {
		r = memfd_check_sealed(b->fd, PROTO_BLOB_MAX, &size);
		if (r == 0 && size != b->len)
			r = -EINVAL;
		if (r < 0) {
			enc_fail(e, r == -EPERM ? -EINVAL : r);
			return;
		}
		fd = fcntl(b->fd, F_DUPFD_CLOEXEC, 0);
		r = fd < 0 ? -errno : 0;
	} else if (b->data == NULL) {
		r = -EINVAL;
	} else {
		r = memfd_sealed_create(PROTO_BLOB_MEMFD_NAME, b->data, b->len, &fd);
	}
	if (r < 0) {
		enc_fail(e, r);
		return;
	}
	e->fds[e->nfds] = fd;
	enc_map(e, 2);
	enc_kv_uint(e, "fd", e->nfds++);
	enc_kv_uint(e, "size", b->len);
}

/* key: blob, inline when small and not already an fd. */
void
enc_kv_blob(struct proto_enc *e, const char *key, const struct proto_blob *b)
{
	enc_rawstr(e, key, PROTO_STR_MAX);
	if (e->err != 0)
		return;
	/* A zeroed struct has fd 0: an absent blob is empty, whatever fd holds. */
	if (!b->present) {
		enc_check(e, msgpack_pack_bin(&e->pk, 0));
		return;
	}
	if (b->fd >= 0 || b->len > PROTO_INLINE_MAX) {
		enc_attach(e, b);
		return;
	}
	if (b->len > 0 && b->data == NULL) {
		enc_fail(e, -EINVAL);
		return;
	}
	enc_check(e, msgpack_pack_bin(&e->pk, b->len));
	if (e->err == 0 && b->len > 0)
		enc_check(e, msgpack_pack_bin_body(&e->pk, b->data, b->len));
}

/* key: every limit by name. */
void
enc_kv_limits(struct proto_enc *e, const char *key, const struct proto_limits *l)
{
	size_t i;

	enc_rawstr(e, key, PROTO_STR_MAX);
	enc_map(e, PROTO_LIMIT_COUNT_);
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		enc_kv_uint(e, limit_table[i].name, l->v[i]);
}

/* Start a message: the top map with nfields beyond type and id. */
void
enc_begin(struct proto_enc *e, enum proto_type type, uint32_t id, size_t nfields)
{
	size_t i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < PROTO_FDS_MAX; i++)
		e->fds[i] = -1;
	msgpack_sbuffer_init(&e->sb);
	msgpack_packer_init(&e->pk, e, enc_write);
	if (id == 0 && type != PROTO_ERROR)
		enc_fail(e, -EINVAL);
	enc_map(e, nfields + 2);
	enc_kv_uint(e, "type", (uint64_t)type);
	enc_kv_uint(e, "id", id);
	e->id = id;
}

/* Finish a message: hand bytes and fds to *ret, or undo everything. */
int
enc_finish(struct proto_enc *e, struct proto_out *ret)
{
	size_t i;

	if (e->err != 0) {
		fdpass_close_all(e->fds, e->nfds);
		msgpack_sbuffer_destroy(&e->sb);
		return e->err;
	}
	ret->len = e->sb.size;
	ret->buf = msgpack_sbuffer_release(&e->sb);
	for (i = 0; i < PROTO_FDS_MAX; i++)
		ret->fds[i] = e->fds[i];
	ret->nfds = e->nfds;
	ret->id = e->id;
	return 0;
}
