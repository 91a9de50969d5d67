/*
 * proto_dec.h: the decoder's state, field schemas and strict primitives,
 * shared by proto_dec.c (primitives: one decoder per kind of field) and
 * proto_dec_msg.c (the schema of each message, the message-level checks,
 * proto_decode()). Internal to the protocol module.
 */
#ifndef AIRLOCK_PROTO_DEC_H
#define AIRLOCK_PROTO_DEC_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_impl.h"

struct proto_mapping {
	void *addr;
	size_t len;
};

/* What a decoded message owns: the zone, the fds that came with it, mappings. */
struct proto_priv {
	msgpack_zone *zone;
	size_t nfds;
	int fds[PROTO_FDS_MAX];
	bool used[PROTO_FDS_MAX];
	size_t nmaps;
	struct proto_mapping maps[PROTO_FDS_MAX];
};

/* Decoder state: where the failure is reported and the field path so far. */
struct proto_dec {
	struct proto_priv *priv;
	enum proto_error code;
	char *why;
	size_t why_len;
	size_t pathlen;
	char path[160];
};

#define DF_REQUIRED 0x1u
#define DF_NONEMPTY 0x2u

/* One known key of a map: how to check it and where its value goes. */
struct dec_field {
	const char *name;
	enum dec_kind kind;
	unsigned flags;
	size_t off;	 /* value's offset in the target struct */
	size_t cnt_off;	 /* arrays: the count's offset */
	size_t max;	 /* strings: bytes; arrays and maps: entries */
	size_t elem_max; /* string arrays: bytes per entry */
};

/* A memfd reference: {"fd": index, "size": bytes}. */
struct dec_blobref {
	uint32_t fd;
	uint64_t size;
};

#define DEC_NO_BLOB SIZE_MAX

/* The element of each array-of-maps kind: its size, its fields, its blob. */
struct dec_elem {
	size_t size;
	const struct dec_field *fields;
	size_t nfields;
	size_t blob_off; /* a blob to give fd -1 before decoding, or DEC_NO_BLOB */
};

/* Indexed by enum dec_kind, for the kinds decoded as maps (proto_dec_msg.c). */
extern const struct dec_elem dec_elems[];

#define dec_bad(d, ...) dec_fail((d), PROTO_ERR_BAD_REQUEST, __VA_ARGS__)
#define dec_big(d, ...) dec_fail((d), PROTO_ERR_TOO_LARGE, __VA_ARGS__)

/* Check an artifact's or a stream's data against its total and flag. */
int dec_check_partial(struct proto_dec *d, const struct proto_blob *b, uint64_t total,
		      bool truncated);

/* Record the failure with the current path; returns the matching -errno. */
__attribute__((format(printf, 3, 4))) int dec_fail(struct proto_dec *d, enum proto_error code,
						   const char *fmt, ...);

/* Find a key in a map whose keys may not have been checked yet. */
const msgpack_object *dec_find(const msgpack_object *o, const char *name);

/* Decode a map against a field table into base; unknown keys are ignored. */
int dec_object(struct proto_dec *d, const msgpack_object *o, const struct dec_field *fields,
	       size_t nfields, void *base, uint32_t *ret_seen);

/* Cut the field path back to a length dec_push() returned. */
void dec_pop(struct proto_dec *d, size_t len);

/*
 * Walk the packet's msgpack structure without allocating anything. msgpack-c
 * allocates an array or map from its declared count before reading a single
 * element, so a 5-byte packet could ask it for gigabytes; here every count
 * must fit in the bytes that are left (each object takes at least one byte),
 * which bounds what msgpack-c allocates by the packet's length. Also refuses
 * truncation, trailing bytes, the never-used byte 0xc1 and deep nesting.
 */
int dec_prescan(struct proto_dec *d, const uint8_t *p, size_t len);

/* Append a segment to the field path; returns the length to restore. */
__attribute__((format(printf, 2, 3))) size_t dec_push(struct proto_dec *d, const char *fmt, ...);

/* An unsigned integer no larger than max. */
int dec_uint(struct proto_dec *d, const msgpack_object *o, uint64_t max, uint64_t *ret);

#endif
