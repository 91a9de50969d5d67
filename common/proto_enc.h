/*
 * proto_enc.h: the encoder's state and primitives (proto_enc.c), for the
 * encoder of each message (proto_enc_msg.c). Internal to the protocol module.
 */
#ifndef AIRLOCK_PROTO_ENC_H
#define AIRLOCK_PROTO_ENC_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_impl.h"

/* Encoder state; the first failure sticks in err and later steps do nothing. */
struct proto_enc {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int fds[PROTO_FDS_MAX];
	size_t nfds;
	uint32_t id;
	int err;
};

/* An array header of n entries. */
void enc_array(struct proto_enc *e, size_t n);

/*
 * key: an array header of n entries of v: E2BIG past max, EINVAL for
 * entries but no v (both recorded in e, as every encoder's failure is).
 */
void enc_kv_array(struct proto_enc *e, const char *key, const void *v, size_t n, size_t max);

/* Start a message: the top map with nfields beyond type and id. */
void enc_begin(struct proto_enc *e, enum proto_type type, uint32_t id, size_t nfields);

/* Record the first failure. */
void enc_fail(struct proto_enc *e, int err);

/* Finish a message: hand bytes and fds to *ret, or undo everything. */
int enc_finish(struct proto_enc *e, struct proto_out *ret);

/* key: blob, inline when small and not already an fd. */
void enc_kv_blob(struct proto_enc *e, const char *key, const struct proto_blob *b);

/* key: boolean. */
void enc_kv_bool(struct proto_enc *e, const char *key, bool v);

/* key: signed value. */
void enc_kv_int(struct proto_enc *e, const char *key, int64_t v);

/* key: every limit by name. */
void enc_kv_limits(struct proto_enc *e, const char *key, const struct proto_limits *l);

/* key: one of a closed set of names. */
void enc_kv_oneof(struct proto_enc *e, const char *key, const char *const *names, const char *s);

/* key: a profile name, checked like the decoder checks it. */
void enc_kv_profile(struct proto_enc *e, const char *key, const char *name);

/* key: a session id, checked like the decoder checks it. */
void enc_kv_session(struct proto_enc *e, const char *key, const char *session);

/* key: string of at most max bytes (nonempty when asked). */
void enc_kv_str(struct proto_enc *e, const char *key, const char *s, size_t max, bool nonempty);

/* key: unsigned value. */
void enc_kv_uint(struct proto_enc *e, const char *key, uint64_t v);

/* A map header of n entries. */
void enc_map(struct proto_enc *e, size_t n);

/* key: an array of names that pass their rule (DEC_MOUNTV, DEC_MODULEV). */
void enc_namelist(struct proto_enc *e, const char *key, const char *const *v, size_t n,
		  enum dec_kind kind);

/* A string of at most max bytes. */
void enc_rawstr(struct proto_enc *e, const char *s, size_t max);

/* key: an array of n (<= max) non-empty strings of at most len bytes
 * (info_ok.profiles: allow-list entries, hidden paths). */
void enc_strlist(struct proto_enc *e, const char *key, const char *const *v, size_t n, size_t max,
		 size_t len);

#endif
