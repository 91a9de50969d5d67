/* proto_testlib.h: the helpers the proto unit tests share (proto_testlib.c). */
#ifndef AIRLOCK_PROTO_TESTLIB_H
#define AIRLOCK_PROTO_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "proto.h"

/* A raw msgpack builder for hand-made (and malformed) packets. */
struct mb {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

int count_fds(void);
int fd_setup(void **state);
int fd_teardown(void **state);
void mb_init(struct mb *b);
void mb_free(struct mb *b);
void mb_str(struct mb *b, const char *s);
void mb_strn(struct mb *b, char c, size_t n);
void mb_uint(struct mb *b, uint64_t v);
void mb_int(struct mb *b, int64_t v);
void mb_map(struct mb *b, size_t n);
void mb_array(struct mb *b, size_t n);
void mb_bin(struct mb *b, const void *p, size_t n);
void mb_fdref(struct mb *b, const char *key, uint64_t idx, uint64_t size);
void mb_head(struct mb *b, size_t nfields, uint64_t type, uint64_t id);
void mb_info_ok(struct mb *b, size_t extra, uint64_t id, const char *runtime);
void check_fail_fds(const void *buf, size_t len, int *fds, size_t nfds, enum proto_error want,
		    const char *why_part, uint32_t want_id);
void check_fail(struct mb *b, enum proto_error want, const char *why_part, uint32_t want_id);
void decode_out(struct proto_out *o, struct proto_msg *m);
void decode_mb(struct mb *b, int *fds, size_t nfds, struct proto_msg *m);
struct proto_blob inline_blob(const char *s);
uint8_t *pattern(size_t n, unsigned seed);
int unsealed_memfd(size_t n);

#endif
