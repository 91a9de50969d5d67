/*
 * test_session_archive.c: unit tests of daemon/frontend/session_archive.c,
 * the frontend's strict reader of workspace archives: a good archive's
 * entries in order (files, directories, the prefix field, "./" names), and
 * every refusal (links, devices, FIFOs, pax headers, absolute and ".."
 * names, empty components, past the quota, a bad checksum, no end, data
 * after the end, contents past the end), with each's error stopping it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "session_archive.h"
#include "ustar.h"

#define ARCH_MAX (64 * USTAR_BLOCK)

struct arch {
	uint8_t b[ARCH_MAX];
	size_t len;
};

/* Append one entry: a header (type, prefix, name, size) and its data. */
static void
arch_add(struct arch *a, char type, const char *prefix, const char *name, const char *data)
{
	struct ustar_header *h = (struct ustar_header *)(a->b + a->len);
	size_t n = data != NULL ? strlen(data) : 0;

	memset(h, 0, sizeof(*h));
	memcpy(h->name, name, strnlen(name, sizeof(h->name)));
	if (prefix != NULL)
		memcpy(h->prefix, prefix, strnlen(prefix, sizeof(h->prefix)));
	snprintf(h->mode, sizeof(h->mode), "%07o", 0644);
	snprintf(h->uid, sizeof(h->uid), "%07o", 0);
	snprintf(h->gid, sizeof(h->gid), "%07o", 0);
	snprintf(h->size, sizeof(h->size), "%011zo", n);
	snprintf(h->mtime, sizeof(h->mtime), "%011o", 0);
	h->typeflag = type;
	memcpy(h->magic, "ustar\0", 6);
	memcpy(h->version, "00", 2);
	snprintf(h->chksum, sizeof(h->chksum), "%06o", ustar_checksum(h));
	a->len += USTAR_BLOCK;
	if (n > 0) {
		memcpy(a->b + a->len, data, n);
		a->len += (n + USTAR_BLOCK - 1) / USTAR_BLOCK * USTAR_BLOCK;
	}
}

/* The two zero blocks that end it. */
static void
arch_end(struct arch *a)
{
	memset(a->b + a->len, 0, 2 * USTAR_BLOCK);
	a->len += 2 * USTAR_BLOCK;
}

struct seen {
	char paths[8][64];
	bool dir[8];
	char data[8][16];
	int n;
	int fail_at; /* -1: never */
};

static int
collect(const struct session_archive_entry *e, void *arg)
{
	struct seen *s = arg;

	if (s->n == s->fail_at)
		return -ENOSPC;
	snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", e->path);
	s->dir[s->n] = e->dir;
	snprintf(s->data[s->n], sizeof(s->data[0]), "%.*s", (int)e->size, (const char *)e->data);
	s->n++;
	return 0;
}

/* Walk a with quota; the error, the reason in why. */
static int
walk(const struct arch *a, uint64_t quota, struct seen *s, char *why, size_t *ret_n)
{
	return session_archive_walk(a->b, a->len, quota, s != NULL ? collect : NULL, s, why, 256,
				    ret_n);
}

static void
test_good(void **state)
{
	static struct arch a;
	struct seen s = {.fail_at = -1};
	char why[256];
	size_t n = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	arch_add(&a, '5', NULL, "./", NULL);
	arch_add(&a, '5', NULL, "./d/", NULL);
	arch_add(&a, '0', NULL, "./d/a.txt", "hello");
	arch_add(&a, '\0', "deep/er", "b", "x");
	arch_add(&a, '0', NULL, "empty", NULL);
	arch_end(&a);
	a.len += 4 * USTAR_BLOCK; /* tar's record padding: zeros */
	assert_int_equal(walk(&a, 6, &s, why, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(s.n, 5);
	assert_string_equal(s.paths[0], "");
	assert_true(s.dir[0]);
	assert_string_equal(s.paths[1], "d");
	assert_true(s.dir[1]);
	assert_string_equal(s.paths[2], "d/a.txt");
	assert_false(s.dir[2]);
	assert_string_equal(s.data[2], "hello");
	assert_string_equal(s.paths[3], "deep/er/b");
	assert_string_equal(s.data[3], "x");
	assert_string_equal(s.paths[4], "empty");
	assert_string_equal(s.data[4], "");
	/* An empty archive is two zero blocks. */
	memset(&a, 0, sizeof(a));
	arch_end(&a);
	assert_int_equal(walk(&a, 0, NULL, why, &n), 0);
	assert_int_equal(n, 0);
}

/* One entry of type, name; refused with err and a reason naming what. */
static void
refused(char type, const char *prefix, const char *name, int err, const char *what)
{
	static struct arch a;
	struct seen s = {.fail_at = -1};
	char why[256];
	size_t n = 77;

	memset(&a, 0, sizeof(a));
	arch_add(&a, '0', NULL, "ok", "1");
	arch_add(&a, type, prefix, name, NULL);
	arch_end(&a);
	assert_int_equal(walk(&a, 100, NULL, why, &n), err);
	assert_non_null(strstr(why, what));
	assert_int_equal(n, 77); /* untouched on failure */
	/* Nothing after the refused entry is handed on. */
	assert_int_equal(walk(&a, 100, &s, why, &n), err);
	assert_int_equal(s.n, 1);
}

static void
test_types_refused(void **state)
{
	(void)state;
	refused('2', NULL, "evil", -EPERM, "a link");
	refused('1', NULL, "hard", -EPERM, "a link");
	refused('3', NULL, "tty", -EPERM, "a device");
	refused('4', NULL, "sda", -EPERM, "a device");
	refused('6', NULL, "fifo", -EPERM, "a device or FIFO");
	refused('x', NULL, "pax", -EPERM, "type 'x'");
	refused('L', NULL, "././@LongLink", -EPERM, "type 'L'");
}

static void
test_names_refused(void **state)
{
	(void)state;
	refused('0', NULL, "/etc/passwd", -EPERM, "absolute");
	refused('0', "/etc", "passwd", -EPERM, "absolute");
	refused('0', NULL, "../out", -EPERM, "\"..\"");
	refused('0', NULL, "a/../../out", -EPERM, "\"..\"");
	refused('0', "..", "out", -EPERM, "\"..\"");
	refused('0', NULL, "a//b", -EPERM, "empty");
	refused('0', NULL, "a/./b", -EPERM, "\".\"");
	refused('0', NULL, "dir/", -EPERM, "empty"); /* a file named like a directory */
	refused('0', NULL, "", -EPERM, "empty");
	refused('5', NULL, "..", -EPERM, "\"..\"");
}

static void
test_quota(void **state)
{
	static struct arch a;
	char why[256];
	size_t n;

	(void)state;
	memset(&a, 0, sizeof(a));
	arch_add(&a, '0', NULL, "a", "0123456789");
	arch_add(&a, '0', NULL, "b", "0123456789");
	arch_end(&a);
	assert_int_equal(walk(&a, 20, NULL, why, &n), 0);
	assert_int_equal(walk(&a, 19, NULL, why, &n), -EFBIG);
	assert_non_null(strstr(why, "b: past the workspace's 19 bytes"));
}

static void
test_malformed(void **state)
{
	static struct arch a;
	struct ustar_header *h = (struct ustar_header *)a.b;
	char why[256];
	size_t n;

	(void)state;
	memset(&a, 0, sizeof(a));
	arch_add(&a, '0', NULL, "a", "x");
	arch_end(&a);
	/* A bad checksum. */
	h->name[0] = 'b';
	assert_int_equal(walk(&a, 100, NULL, why, &n), -EBADMSG);
	assert_non_null(strstr(why, "checksum"));
	h->name[0] = 'a';
	assert_int_equal(walk(&a, 100, NULL, why, &n), 0);
	/* Not whole blocks; no end; data after the end. */
	a.len -= 1;
	assert_int_equal(walk(&a, 100, NULL, why, &n), -EBADMSG);
	a.len -= USTAR_BLOCK - 1;
	assert_int_equal(walk(&a, 100, NULL, why, &n), -EBADMSG);
	assert_non_null(strstr(why, "no end"));
	a.len += 2 * USTAR_BLOCK;
	a.b[a.len - 1] = 1;
	assert_int_equal(walk(&a, 100, NULL, why, &n), -EBADMSG);
	assert_non_null(strstr(why, "after the end"));
	a.b[a.len - 1] = 0;
	/* Contents said to run past the archive's end. */
	snprintf(h->size, sizeof(h->size), "%011o", 8 * USTAR_BLOCK);
	snprintf(h->chksum, sizeof(h->chksum), "%06o", ustar_checksum(h));
	assert_int_equal(walk(&a, 1 << 20, NULL, why, &n), -EBADMSG);
	assert_non_null(strstr(why, "past the archive's end"));
	/* A size that is not octal (base-256, GNU) and a bad magic. */
	memset(h->size, 0, sizeof(h->size));
	h->size[0] = (char)0x80;
	h->size[11] = 1;
	snprintf(h->chksum, sizeof(h->chksum), "%06o", ustar_checksum(h));
	assert_int_equal(walk(&a, 100, NULL, why, &n), -EBADMSG);
	memcpy(h->magic, "nottar", 6);
	assert_int_equal(walk(&a, 100, NULL, why, &n), -EBADMSG);
	assert_non_null(strstr(why, "not a ustar header"));
}

/* The caller's error stops the walk at that entry and is returned. */
static void
test_each_error(void **state)
{
	static struct arch a;
	struct seen s = {.fail_at = 1};
	char why[256];
	size_t n;

	(void)state;
	memset(&a, 0, sizeof(a));
	arch_add(&a, '0', NULL, "a", "x");
	arch_add(&a, '0', NULL, "b", "y");
	arch_add(&a, '0', NULL, "c", "z");
	arch_end(&a);
	assert_int_equal(walk(&a, 100, &s, why, &n), -ENOSPC);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(why, "b: "));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),	      cmocka_unit_test(test_types_refused),
		cmocka_unit_test(test_names_refused), cmocka_unit_test(test_quota),
		cmocka_unit_test(test_malformed),     cmocka_unit_test(test_each_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
