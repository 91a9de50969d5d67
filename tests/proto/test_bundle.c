/* test_bundle.c: the file bundle codec (common/bundle.c), both ways. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "bundle.h"
#include "memfd.h"
#include "proto.h"

/* Encode files and map the result (munmap it, len bytes). */
static uint8_t *
encode(const struct bundle_file *files, size_t n, size_t *ret_len)
{
	uint64_t len;
	uint8_t *map;
	int fd;

	assert_int_equal(bundle_encode_memfd(files, n, PROTO_RUN_FILES_MAX, 1 << 20, &fd, &len), 0);
	/* What the decoder of a blob checks: sealed, and that size. */
	assert_int_equal(memfd_check_sealed(fd, PROTO_BLOB_MAX, &len), 0);
	map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	*ret_len = (size_t)len;
	return map;
}

static void
test_round_trip(void **state)
{
	static const struct bundle_file files[] = {
		{"a.txt", 0644, (const uint8_t *)"alpha", 5},
		{"d/e/b.bin", 0644, (const uint8_t *)"\0\1\2", 3},
		{"run.sh", 0755, (const uint8_t *)"#!/bin/sh\n", 10},
		{"empty", 0644, NULL, 0},
	};
	struct bundle b;
	char why[256];
	size_t len, i;
	uint8_t *map;

	(void)state;
	map = encode(files, 4, &len);
	assert_int_equal(len, 8 + 4 * 14 + 5 + 9 + 6 + 5 + 5 + 3 + 10);
	assert_memory_equal(map, "ALFB\4\0\0\0", 8);
	assert_int_equal(bundle_decode(map, len, PROTO_RUN_FILES_MAX, &b, why, sizeof(why)), 0);
	assert_int_equal(b.n, 4);
	assert_int_equal(b.bytes, 18);
	for (i = 0; i < 4; i++) {
		assert_string_equal(b.files[i].name, files[i].name);
		assert_int_equal(b.files[i].mode, files[i].mode);
		assert_int_equal(b.files[i].len, files[i].len);
		if (files[i].len > 0)
			assert_memory_equal(b.files[i].data, files[i].data, files[i].len);
	}
	bundle_free(&b);
	bundle_free(&b); /* a freed bundle is empty: freeing again is harmless */
	/* Fewer entries allowed than it holds: too large, by the count. */
	assert_int_equal(bundle_decode(map, len, 3, &b, why, sizeof(why)), -E2BIG);
	assert_string_equal(why, "4 entries; at most 3");
	/* Every prefix is refused: a bundle cut anywhere is truncated. */
	for (i = 0; i < len; i++)
		assert_int_equal(bundle_decode(map, i, PROTO_RUN_FILES_MAX, &b, why, sizeof(why)),
				 -EBADMSG);
	munmap(map, len);
	/* No files: the header alone. */
	map = encode(NULL, 0, &len);
	assert_int_equal(bundle_decode(map, len, PROTO_RUN_FILES_MAX, &b, why, sizeof(why)), 0);
	assert_int_equal(b.n, 0);
	bundle_free(&b);
	munmap(map, len);
}

/* The encoder refuses what the decoder would. */
static void
test_encode_refusals(void **state)
{
	struct bundle_file f = {"ok", 0644, (const uint8_t *)"x", 1};
	uint64_t len;
	int fd = -1;

	(void)state;
	f.name = "../x";
	assert_int_equal(bundle_encode_memfd(&f, 1, 10, 1 << 20, &fd, &len), -EINVAL);
	f.name = "a\tb";
	assert_int_equal(bundle_encode_memfd(&f, 1, 10, 1 << 20, &fd, &len), -EINVAL);
	f.name = "ok";
	f.mode = 0120777;
	assert_int_equal(bundle_encode_memfd(&f, 1, 10, 1 << 20, &fd, &len), -EINVAL);
	f.mode = 0644;
	assert_int_equal(bundle_encode_memfd(&f, 2, 1, 1 << 20, &fd, &len), -E2BIG);
	assert_int_equal(bundle_encode_memfd(&f, 1, 10, 20, &fd, &len), -E2BIG);
	assert_int_equal(fd, -1);
}

/* Hand-made entries the decoder must refuse, with the reason it gives. */
static void
test_decode_refusals(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *why;
	} cases[] = {
#define B(s) s, sizeof(s) - 1
		{B("ALF"), "not a bundle"},
		{B("PK\3\4\1\0\0\0"), "not a bundle"},
		{B("ALFB\1\0\0\0"), "truncated: entry 0 of 1 has no header"},
		{B("ALFB\1\0\0\0\0\0"), "entry 0: name length 0 is not 1 to 255"},
		{B("ALFB\1\0\0\0\0\1"), "entry 0: name length 256 is not 1 to 255"},
		{B("ALFB\1\0\0\0\1\0a\244\1\0\0\5\0\0\0\0\0\0\0ab"),
		 "truncated: entry 0 says 5 bytes, 2 are left"},
		{B("ALFB\1\0\0\0\1\0a\244\1\0\0\0\0\0\0\0\0\0"),
		 "truncated: entry 0 of 1 ends past"},
		{B("ALFB\1\0\0\0\1\0a\244\1\0\0\0\0\0\0\0\0\0\0x"), "1 bytes after the last of 1"},
		{B("ALFB\1\0\0\0\1\0/\244\1\0\0\0\0\0\0\0\0\0\0"),
		 "entry 0: \"/\" is not a relative path inside the workspace"},
		{B("ALFB\1\0\0\0\2\0..\244\1\0\0\0\0\0\0\0\0\0\0"),
		 "\"..\" is not a relative path"},
		{B("ALFB\1\0\0\0\3\0a\0b\244\1\0\0\0\0\0\0\0\0\0\0"),
		 "entry 0: the name holds a NUL byte"},
		{B("ALFB\1\0\0\0\3\0a\rb\244\1\0\0\0\0\0\0\0\0\0\0"),
		 "entry 0: the name holds a control character"},
		{B("ALFB\1\0\0\0\4\0../\n\244\1\0\0\0\0\0\0\0\0\0\0"),
		 "entry 0: \"(not printable)\" is not a relative path"},
		{B("ALFB\1\0\0\0\1\0l\377\241\0\0\0\0\0\0\0\0\0\0"), "mode 0120777 is not 0644"},
		{B("ALFB\1\0\0\0\1\0s\355\11\0\0\0\0\0\0\0\0\0\0"), "mode 04755 is not 0644"},
#undef B
	};
	struct bundle b;
	char why[256];
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = bundle_decode(cases[i].bytes, cases[i].len, 16, &b, why, sizeof(why));
		if (r != -EBADMSG || strstr(why, cases[i].why) == NULL)
			fprintf(stderr, "case %zu: %d \"%s\", want \"%s\"\n", i, r, why,
				cases[i].why);
		assert_int_equal(r, -EBADMSG);
		assert_non_null(strstr(why, cases[i].why));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encode_refusals),
		cmocka_unit_test(test_decode_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
