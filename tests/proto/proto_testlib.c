/* proto_testlib.c: the helpers the proto unit tests share (hand-made
 * msgpack packets, decoding with checks, fd counts). */
/* test_proto.c: unit tests of the wire codec in common/proto.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>

#include "fdpass.h"
#include "memfd.h"
#include "proto.h"
#include "proto_testlib.h"

/* ------------------------------------------------------------ helpers */

/* Count the open fds of this process. */
int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* Remember the fd count before each test. */
int
fd_setup(void **state)
{
	*state = (void *)(intptr_t)count_fds();
	return 0;
}

/* Fail the test when it leaked an fd. */
int
fd_teardown(void **state)
{
	assert_int_equal(count_fds(), (int)(intptr_t)*state);
	return 0;
}

void
mb_init(struct mb *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
}

void
mb_free(struct mb *b)
{
	msgpack_sbuffer_destroy(&b->sb);
}

void
mb_str(struct mb *b, const char *s)
{
	size_t n = strlen(s);

	assert_int_equal(msgpack_pack_str(&b->pk, n), 0);
	assert_int_equal(msgpack_pack_str_body(&b->pk, s, n), 0);
}

/* A string of n copies of c. */
void
mb_strn(struct mb *b, char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	mb_str(b, s);
	free(s);
}

void
mb_uint(struct mb *b, uint64_t v)
{
	assert_int_equal(msgpack_pack_uint64(&b->pk, v), 0);
}

void
mb_int(struct mb *b, int64_t v)
{
	assert_int_equal(msgpack_pack_int64(&b->pk, v), 0);
}

void
mb_map(struct mb *b, size_t n)
{
	assert_int_equal(msgpack_pack_map(&b->pk, n), 0);
}

void
mb_array(struct mb *b, size_t n)
{
	assert_int_equal(msgpack_pack_array(&b->pk, n), 0);
}

void
mb_bin(struct mb *b, const void *p, size_t n)
{
	assert_int_equal(msgpack_pack_bin(&b->pk, n), 0);
	if (n > 0)
		assert_int_equal(msgpack_pack_bin_body(&b->pk, p, n), 0);
}

/* key: {"fd": idx, "size": size} */
void
mb_fdref(struct mb *b, const char *key, uint64_t idx, uint64_t size)
{
	mb_str(b, key);
	mb_map(b, 2);
	mb_str(b, "fd");
	mb_uint(b, idx);
	mb_str(b, "size");
	mb_uint(b, size);
}

/* The top map with type and id plus nfields more entries. */
void
mb_head(struct mb *b, size_t nfields, uint64_t type, uint64_t id)
{
	mb_init(b);
	mb_map(b, nfields + 2);
	mb_str(b, "type");
	mb_uint(b, type);
	mb_str(b, "id");
	mb_uint(b, id);
}

/* An info_ok head with its required fields (one runtime) plus extra more. */
void
mb_info_ok(struct mb *b, size_t extra, uint64_t id, const char *runtime)
{
	mb_head(b, 6 + extra, PROTO_INFO_OK, id);
	mb_str(b, "daemon");
	mb_str(b, "d");
	mb_str(b, "version");
	mb_uint(b, 1);
	mb_str(b, "uid");
	mb_uint(b, 1);
	mb_str(b, "runtimes");
	mb_array(b, 1);
	mb_str(b, runtime);
	mb_str(b, "defaults");
	mb_map(b, 0);
	mb_str(b, "ceilings");
	mb_map(b, 0);
}

/* Decode and expect failure with this code, a reason containing why, and this id. */
void
check_fail_fds(const void *buf, size_t len, int *fds, size_t nfds, enum proto_error want,
	       const char *why_part, uint32_t want_id)
{
	struct proto_msg m;
	enum proto_error code = PROTO_ERR_NONE;
	uint32_t id = 12345;
	char why[256] = "";
	int r;

	memset(&m, 0x5a, sizeof(m));
	r = proto_decode(buf, len, fds, nfds, &m, &code, &id, why, sizeof(why));
	if (why_part != NULL && strstr(why, why_part) == NULL)
		fail_msg("why \"%s\" lacks \"%s\"", why, why_part);
	assert_int_equal(r, want == PROTO_ERR_TOO_LARGE ? -E2BIG : -EBADMSG);
	assert_int_equal(code, want);
	assert_int_equal(id, want_id);
	assert_true(why[0] != '\0');
	/* The message is untouched on failure. */
	assert_int_equal(((unsigned char *)&m)[0], 0x5a);
}

void
check_fail(struct mb *b, enum proto_error want, const char *why_part, uint32_t want_id)
{
	check_fail_fds(b->sb.data, b->sb.size, NULL, 0, want, why_part, want_id);
	mb_free(b);
}

/* Decode an encoded packet (consuming its fds) and expect success. */
void
decode_out(struct proto_out *o, struct proto_msg *m)
{
	enum proto_error code = PROTO_ERR_INTERNAL;
	char why[256] = "";
	uint32_t id = 0;
	int r;

	r = proto_decode(o->buf, o->len, o->fds, o->nfds, m, &code, &id, why, sizeof(why));
	if (r != 0)
		fail_msg("decode failed: %d %s", r, why);
	assert_int_equal(code, PROTO_ERR_NONE);
	assert_int_equal(id, m->id);
	o->nfds = 0; /* the decoder owns them now */
	proto_out_free(o);
}

/* Decode a hand-built packet and expect success. */
void
decode_mb(struct mb *b, int *fds, size_t nfds, struct proto_msg *m)
{
	char why[256] = "";
	int r;

	r = proto_decode(b->sb.data, b->sb.size, fds, nfds, m, NULL, NULL, why, sizeof(why));
	if (r != 0)
		fail_msg("decode failed: %d %s", r, why);
	mb_free(b);
}

struct proto_blob
inline_blob(const char *s)
{
	return (struct proto_blob){
		.data = (const uint8_t *)s, .len = strlen(s), .fd = -1, .present = true};
}

/* A buffer of n bytes with a recognisable pattern. */
uint8_t *
pattern(size_t n, unsigned seed)
{
	uint8_t *p = malloc(n);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed);
	return p;
}

/* An unsealed memfd holding n bytes. */
int
unsealed_memfd(size_t n)
{
	uint8_t *p = pattern(n, 1);
	int fd;

	assert_int_equal(memfd_new("test", &fd), 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	free(p);
	return fd;
}
