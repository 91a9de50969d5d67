/*
 * test_plan.c: unit tests of daemon/ipc/plan_build.c and plan_parse.c: round trips,
 * plan_parse against malformed and mutated plans, plan_env_build. (The
 * workspace name rule the plan applies is tested in tests/rules.)
 *
 * Plans under test are copied to the very end of a mapping followed by a
 * PROT_NONE page, so a parser read one byte past the plan faults here even
 * without a sanitizer.
 */
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "memfd.h"
#include "plan.h"
#include "rules.h"

/* A plan copied so that its last byte is the last readable byte. */
struct gbuf {
	uint8_t *map;
	size_t maplen;
	uint8_t *p;
	size_t size;
};

/* Copy size bytes (a multiple of 8, so the header stays aligned) before a guard page. */
static void
gbuf_new(struct gbuf *g, const void *data, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (size + pg - 1) / pg * pg;

	assert_int_equal(size % 8, 0);
	g->maplen = body + pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(g->map != MAP_FAILED);
	assert_int_equal(mprotect(g->map + body, pg, PROT_NONE), 0);
	g->p = g->map + body - size;
	g->size = size;
	if (size > 0)
		memcpy(g->p, data, size);
}

/* Unmap a guarded copy. */
static void
gbuf_free(struct gbuf *g)
{
	if (g->map != NULL)
		munmap(g->map, g->maplen);
	memset(g, 0, sizeof(*g));
}

/* The reference plan: every field set, embedded NULs in the binary parts. */
static const char *const fx_argv[] = {"/usr/bin/python3", "-u", "/run/airlock/main.py", "two words",
				      ""};
static const char *const fx_envp[] = {"PATH=/usr/bin", "HOME=/workspace", "EMPTY=", "EQ=a=b"};
static const uint8_t fx_code[] = {'p', 'r', 'i', 'n', 't', '(', '1', ')', '\n', 0, 0xff, 'z'};
static const uint8_t fx_stdin[] = {'l', 'i', 'n', 'e', '\n', 0, 0x80, 0x7f, 'x'};
static const uint8_t fx_f0[] = {'a', 'b', 'c'};
static const uint8_t fx_f2_base[] = {0, 1, 2, 3, 0xfe, 0xff, 0, 'q', 'r', 's', 't'};
static const char *const fx_fnames[] = {"data/in.txt", "empty", ".hidden/d/e.bin"};

struct fixture {
	struct proto_limits limits;
	uint8_t f2[sizeof(fx_f2_base) + 8]; /* padded so the plan's size is a multiple of 8 */
	const void *fdata[3];
	size_t flen[3];
	struct plan_input in;
	int fd;
	uint8_t *bytes; /* the plan read back from the memfd */
	size_t size;
	struct gbuf g;
};

/* Build in into a memfd and read its bytes into a fresh buffer. */
static int
build_bytes(const struct plan_input *in, int *ret_fd, uint8_t **ret_bytes, size_t *ret_size)
{
	struct stat st;
	uint8_t *b;
	int fd, r;

	/* Defined on failure too: cmocka's asserts return as far as the
	 * analyzer knows, so a caller's loop would see last round's (freed)
	 * buffer (docs/static-analysis.md). */
	*ret_fd = -1;
	*ret_bytes = NULL;
	*ret_size = 0;
	r = plan_build(in, &fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	*ret_fd = fd;
	*ret_bytes = b;
	*ret_size = (size_t)st.st_size;
	return 0;
}

/* Fill in the reference input, padding the last file so the plan size % 8 == 0. */
static void
fixture_input(struct fixture *f, size_t pad)
{
	size_t i;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++)
		f->limits.v[i] = 1000003ULL * (i + 1) + i;
	f->limits.v[0] = 0;
	f->limits.v[PROTO_LIMIT_COUNT_ - 1] = UINT64_MAX;
	memcpy(f->f2, fx_f2_base, sizeof(fx_f2_base));
	memset(f->f2 + sizeof(fx_f2_base), 'P', sizeof(f->f2) - sizeof(fx_f2_base));
	f->fdata[0] = fx_f0;
	f->fdata[1] = NULL;
	f->fdata[2] = f->f2;
	f->flen[0] = sizeof(fx_f0);
	f->flen[1] = 0;
	f->flen[2] = sizeof(fx_f2_base) + pad;
	memset(&f->in, 0, sizeof(f->in));
	f->in.argv = fx_argv;
	f->in.argc = sizeof(fx_argv) / sizeof(fx_argv[0]);
	f->in.envp = fx_envp;
	f->in.envc = sizeof(fx_envp) / sizeof(fx_envp[0]);
	f->in.code_name = "main.py";
	f->in.code = fx_code;
	f->in.code_len = sizeof(fx_code);
	f->in.stdin_data = fx_stdin;
	f->in.stdin_len = sizeof(fx_stdin);
	f->in.file_names = fx_fnames;
	f->in.file_data = f->fdata;
	f->in.file_len = f->flen;
	f->in.nfiles = 3;
	f->in.hostname = "airlock-7";
	f->in.limits = &f->limits;
}

/* Build the reference plan; keep its fd, its bytes and a guarded copy. */
static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	size_t pad;

	if (f == NULL)
		return -1;
	fixture_input(f, 0);
	if (build_bytes(&f->in, &f->fd, &f->bytes, &f->size) < 0)
		return -1;
	pad = (8 - f->size % 8) % 8;
	if (pad > 0) {
		close(f->fd);
		free(f->bytes);
		fixture_input(f, pad);
		if (build_bytes(&f->in, &f->fd, &f->bytes, &f->size) < 0)
			return -1;
	}
	if (f->size % 8 != 0)
		return -1;
	gbuf_new(&f->g, f->bytes, f->size);
	*state = f;
	return 0;
}

/* Release the reference plan. */
static int
teardown(void **state)
{
	struct fixture *f = *state;

	gbuf_free(&f->g);
	free(f->bytes);
	close(f->fd);
	free(f);
	return 0;
}

/* The header of the guarded copy, to mutate. */
static struct plan_hdr *
ghdr(struct fixture *f)
{
	return (struct plan_hdr *)(void *)f->g.p;
}

/* The file table of the guarded copy. */
static struct plan_file *
gfiles(struct fixture *f)
{
	return (struct plan_file *)(void *)(f->g.p + sizeof(struct plan_hdr));
}

/* Parse the guarded copy. */
static int
gparse(struct fixture *f)
{
	static struct plan_view v;

	return plan_parse(f->g.p, f->g.size, &v);
}

/* Does [p, p+len) lie inside [base, base+size)? */
static bool
in_buf(const void *p, uint64_t len, const uint8_t *base, uint64_t size)
{
	const uint8_t *q = p;

	return q >= base && q <= base + size && len <= (uint64_t)(base + size - q);
}

/* Is s a string that starts and ends (NUL included) inside the buffer? */
static bool
str_in_buf(const char *s, const uint8_t *base, uint64_t size)
{
	const uint8_t *q = (const uint8_t *)s;

	return q >= base && q < base + size && memchr(q, '\0', (size_t)(base + size - q)) != NULL;
}

/* Every pointer of a successfully parsed view lies inside the plan. */
static void
assert_view_inside(const struct plan_view *v, const uint8_t *base, uint64_t size)
{
	const struct plan_hdr *h = (const struct plan_hdr *)(const void *)base;
	uint32_t i;

	assert_ptr_equal(v->hdr, base);
	assert_true(h->argc >= 1 && h->argc <= PLAN_ARGV_MAX);
	assert_true(h->envc <= PLAN_ENV_MAX);
	for (i = 0; i < h->argc; i++)
		assert_true(str_in_buf(v->argv[i], base, size));
	assert_null(v->argv[h->argc]);
	for (i = 0; i < h->envc; i++)
		assert_true(str_in_buf(v->envp[i], base, size));
	assert_null(v->envp[h->envc]);
	assert_true(str_in_buf(v->code_name, base, size));
	assert_null(strchr(v->code_name, '/'));
	assert_true(str_in_buf(v->hostname, base, size));
	assert_true(in_buf(v->code, h->code_len, base, size));
	if (h->has_stdin)
		assert_true(in_buf(v->stdin_data, h->stdin_len, base, size));
	else
		assert_null(v->stdin_data);
	assert_int_equal(v->nfiles, h->nfiles);
	assert_true(v->nfiles <= PLAN_FILES_MAX);
	for (i = 0; i < v->nfiles; i++) {
		assert_true(str_in_buf(v->files[i].name, base, size));
		assert_int_equal(rules_workspace_name_check(v->files[i].name), 0);
		assert_true(in_buf(v->files[i].data, v->files[i].len, base, size));
	}
}

/* A parsed view holds exactly the input it was built from. */
static void
assert_view_matches(const struct plan_view *v, const struct plan_input *in)
{
	size_t i;

	assert_int_equal(v->hdr->magic, PLAN_MAGIC);
	assert_int_equal(v->hdr->argc, in->argc);
	for (i = 0; i < in->argc; i++)
		assert_string_equal(v->argv[i], in->argv[i]);
	assert_null(v->argv[in->argc]);
	assert_int_equal(v->hdr->envc, in->envc);
	for (i = 0; i < in->envc; i++)
		assert_string_equal(v->envp[i], in->envp[i]);
	assert_null(v->envp[in->envc]);
	assert_string_equal(v->code_name, in->code_name ? in->code_name : "");
	assert_string_equal(v->hostname, in->hostname);
	assert_int_equal(v->hdr->code_len, in->code_len);
	if (in->code_len > 0)
		assert_memory_equal(v->code, in->code, in->code_len);
	if (in->stdin_data == NULL) {
		assert_int_equal(v->hdr->has_stdin, 0);
		assert_null(v->stdin_data);
		assert_int_equal(v->hdr->stdin_len, 0);
	} else {
		assert_int_equal(v->hdr->has_stdin, 1);
		assert_non_null(v->stdin_data);
		assert_int_equal(v->hdr->stdin_len, in->stdin_len);
		if (in->stdin_len > 0)
			assert_memory_equal(v->stdin_data, in->stdin_data, in->stdin_len);
	}
	assert_int_equal(v->nfiles, in->nfiles);
	for (i = 0; i < in->nfiles; i++) {
		assert_string_equal(v->files[i].name, in->file_names[i]);
		assert_int_equal(v->files[i].len, in->file_len[i]);
		if (in->file_len[i] > 0)
			assert_memory_equal(v->files[i].data, in->file_data[i], in->file_len[i]);
	}
	assert_memory_equal(v->hdr->limits, in->limits->v, sizeof(in->limits->v));
}

/* Build in, check the memfd's seals, map it and parse it back. */
static void
round_trip(const struct plan_input *in)
{
	struct plan_view *v = calloc(1, sizeof(*v));
	struct stat st;
	uint64_t size = 0;
	void *map;
	int fd = -1;

	assert_non_null(v);
	assert_int_equal(plan_build(in, &fd), 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(memfd_check_sealed(fd, PLAN_SIZE_MAX, &size), 0);
	assert_int_equal(size, (uint64_t)st.st_size);
	/* Sealed for real: neither written nor resized. */
	assert_int_equal(pwrite(fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(errno, EPERM);
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(plan_parse(map, size, v), 0);
	assert_view_inside(v, map, size);
	assert_view_matches(v, in);
	munmap(map, (size_t)size);
	close(fd);
	free(v);
}

/* ---- round trips ---- */

/* Every field of the reference plan comes back exactly. */
static void
test_round_trip_full(void **state)
{
	struct fixture *f = *state;

	round_trip(&f->in);
}

/* No stdin is told apart from an empty stdin. */
static void
test_round_trip_stdin_absent_and_empty(void **state)
{
	struct fixture *f = *state;

	f->in.stdin_data = NULL;
	f->in.stdin_len = 0;
	round_trip(&f->in);
	f->in.stdin_data = "";
	f->in.stdin_len = 0;
	round_trip(&f->in);
}

/* The smallest plan: one argv, no env, no code, no stdin, no files. */
static void
test_round_trip_minimal(void **state)
{
	struct fixture *f = *state;
	static const char *const argv1[] = {"true"};

	memset(&f->in, 0, sizeof(f->in));
	f->in.argv = argv1;
	f->in.argc = 1;
	f->in.hostname = "";
	f->in.limits = &f->limits;
	round_trip(&f->in);
}

/* argc, envc and nfiles at their maxima round-trip too. */
static void
test_round_trip_maxima(void **state)
{
	struct fixture *f = *state;
	static char argbuf[PLAN_ARGV_MAX][12], envbuf[PLAN_ENV_MAX][16],
		namebuf[PLAN_FILES_MAX][16];
	static const char *argv[PLAN_ARGV_MAX], *envp[PLAN_ENV_MAX], *names[PLAN_FILES_MAX];
	static const void *data[PLAN_FILES_MAX];
	static size_t len[PLAN_FILES_MAX];
	size_t i;

	for (i = 0; i < PLAN_ARGV_MAX; i++) {
		snprintf(argbuf[i], sizeof(argbuf[i]), "a%zu", i);
		argv[i] = argbuf[i];
	}
	for (i = 0; i < PLAN_ENV_MAX; i++) {
		snprintf(envbuf[i], sizeof(envbuf[i]), "K%zu=v%zu", i, i);
		envp[i] = envbuf[i];
	}
	for (i = 0; i < PLAN_FILES_MAX; i++) {
		snprintf(namebuf[i], sizeof(namebuf[i]), "d%zu/f", i);
		names[i] = namebuf[i];
		data[i] = namebuf[i];
		len[i] = strlen(namebuf[i]);
	}
	f->in.argv = argv;
	f->in.argc = PLAN_ARGV_MAX;
	f->in.envp = envp;
	f->in.envc = PLAN_ENV_MAX;
	f->in.file_names = names;
	f->in.file_data = data;
	f->in.file_len = len;
	f->in.nfiles = PLAN_FILES_MAX;
	round_trip(&f->in);
}

/* plan_build refuses counts outside the plan's bounds and writes no fd. */
static void
test_build_rejects_counts(void **state)
{
	struct fixture *f = *state;
	struct plan_input in;
	int fd = -77;

	in = f->in;
	in.argc = 0;
	assert_int_equal(plan_build(&in, &fd), -EINVAL);
	in = f->in;
	in.argc = PLAN_ARGV_MAX + 1;
	assert_int_equal(plan_build(&in, &fd), -EINVAL);
	in = f->in;
	in.envc = PLAN_ENV_MAX + 1;
	assert_int_equal(plan_build(&in, &fd), -EINVAL);
	in = f->in;
	in.nfiles = PLAN_FILES_MAX + 1;
	assert_int_equal(plan_build(&in, &fd), -EINVAL);
	assert_int_equal(fd, -77);
}

/* plan_build refuses code or stdin that is NULL with a length (the caller's
 * contract, checked where it is relied on) and writes no fd. */
static void
test_build_rejects_null_with_length(void **state)
{
	struct fixture *f = *state;
	struct plan_input in;
	int fd = -77;

	in = f->in;
	in.stdin_data = NULL;
	in.stdin_len = 1;
	assert_int_equal(plan_build(&in, &fd), -EINVAL);
	in = f->in;
	in.code = NULL;
	in.code_len = 1;
	assert_int_equal(plan_build(&in, &fd), -EINVAL);
	assert_int_equal(fd, -77);
}

/* ---- malformed plans ---- */

/* The unmodified guarded copy parses; the tests below break one thing each. */
static void
test_parse_reference_ok(void **state)
{
	struct fixture *f = *state;
	struct plan_view *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	assert_int_equal(plan_parse(f->g.p, f->g.size, v), 0);
	assert_view_inside(v, f->g.p, f->g.size);
	assert_view_matches(v, &f->in);
	free(v);
}

/* Shorter than a header: refused without reading past the given size. */
static void
test_parse_too_small(void **state)
{
	struct fixture *f = *state;
	static struct plan_view v;
	struct gbuf g;
	size_t i;

	assert_int_equal(plan_parse(f->g.p, 0, &v), -EINVAL);
	assert_int_equal(plan_parse(f->g.p, sizeof(struct plan_hdr) - 1, &v), -EINVAL);
	/* A header cut short, right before the guard page: refused unread. */
	for (i = 8; i < sizeof(struct plan_hdr); i += 8) {
		gbuf_new(&g, f->bytes, i);
		assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
		gbuf_free(&g);
	}
	/* A whole header, but the strings it points at are cut off. */
	gbuf_new(&g, f->bytes, sizeof(struct plan_hdr));
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	gbuf_free(&g);
}

/* Magic, argc and the counts. */
static void
test_parse_bad_header_fields(void **state)
{
	struct fixture *f = *state;

	ghdr(f)->magic = PLAN_MAGIC ^ 1;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->magic = PLAN_MAGIC;
	assert_int_equal(gparse(f), 0);

	ghdr(f)->argc = 0;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->argc = PLAN_ARGV_MAX + 1;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->argc = UINT32_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->argc = (uint32_t)f->in.argc;

	ghdr(f)->envc = PLAN_ENV_MAX + 1;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->envc = UINT32_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->envc = (uint32_t)f->in.envc;

	ghdr(f)->nfiles = PLAN_FILES_MAX + 1;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->nfiles = UINT32_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	/* Within the bound but the file table runs past the end of this plan. */
	assert_true(sizeof(struct plan_hdr) + PLAN_FILES_MAX * sizeof(struct plan_file) >
		    f->g.size);
	ghdr(f)->nfiles = PLAN_FILES_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->nfiles = (uint32_t)f->in.nfiles;
	assert_int_equal(gparse(f), 0);
}

/*
 * A file table cut off by the end of the plan is refused before it is read:
 * here the plan is the header and half of one entry, whose name is a valid
 * string inside the header; reading the entry's data_off would fault.
 */
static void
test_parse_file_table_cut_off(void **state)
{
	struct fixture *f = *state;
	uint8_t b[sizeof(struct plan_hdr) + 8];
	struct plan_hdr *h = (struct plan_hdr *)(void *)b;
	struct plan_file pf;
	static struct plan_view v;
	struct gbuf g;

	(void)f;
	memset(b, 0, sizeof(b));
	h->magic = PLAN_MAGIC;
	h->argc = 1;
	h->nfiles = 1;
	/* argv[0], code name, hostname and cwd: "" at the (zero) limits. */
	h->argv_off = h->code_name_off = h->hostname_off = h->cwd_off =
		offsetof(struct plan_hdr, limits);
	memcpy(&h->flags, "a", 2);
	memset(&pf, 0, sizeof(pf));
	pf.name_off = offsetof(struct plan_hdr, flags);
	memcpy(b + sizeof(*h), &pf, 8);
	gbuf_new(&g, b, sizeof(b));
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	/* The same plan without the file parses: only the cut-off table was wrong. */
	((struct plan_hdr *)(void *)g.p)->nfiles = 0;
	assert_int_equal(plan_parse(g.p, g.size, &v), 0);
	assert_string_equal(v.argv[0], "");
	gbuf_free(&g);
}

/*
 * argc or envc above their maxima are refused even when the plan holds that
 * many strings (the view has room for no more).
 */
static void
test_parse_counts_over_max_with_strings(void **state)
{
	struct fixture *f = *state;
	static char argbuf[PLAN_ARGV_MAX + 1][12];
	static char envbuf[PLAN_ENV_MAX + 1][16];
	static const char *argv[PLAN_ARGV_MAX + 1], *envp[PLAN_ENV_MAX + 1];
	struct plan_view *v = calloc(1, sizeof(*v));
	struct plan_hdr *h;
	uint8_t *b;
	size_t i, size;
	int fd;

	assert_non_null(v);
	for (i = 0; i <= PLAN_ARGV_MAX; i++) {
		snprintf(argbuf[i], sizeof(argbuf[i]), "a%zu", i);
		argv[i] = argbuf[i];
	}
	for (i = 0; i <= PLAN_ENV_MAX; i++) {
		snprintf(envbuf[i], sizeof(envbuf[i]), "K%zu=v", i);
		envp[i] = envbuf[i];
	}
	f->in.argv = argv;
	f->in.argc = PLAN_ARGV_MAX;
	f->in.envp = envp;
	f->in.envc = PLAN_ENV_MAX;
	assert_int_equal(build_bytes(&f->in, &fd, &b, &size), 0);
	h = (struct plan_hdr *)(void *)b;
	assert_int_equal(plan_parse(b, size, v), 0);
	/* One more argv string: the first env string follows the last argv one. */
	h->argc = PLAN_ARGV_MAX + 1;
	assert_int_equal(plan_parse(b, size, v), -EINVAL);
	h->argc = PLAN_ARGV_MAX;
	/* One more env string: the code name follows the last env one. */
	h->envc = PLAN_ENV_MAX + 1;
	assert_int_equal(plan_parse(b, size, v), -EINVAL);
	h->envc = PLAN_ENV_MAX;
	assert_int_equal(plan_parse(b, size, v), 0);
	free(b);
	close(fd);
	free(v);
}

/* A string whose NUL would lie past the end of the plan. */
static void
test_parse_unterminated_string(void **state)
{
	struct fixture *f = *state;
	static const char tail[] = "UNTERMIN"; /* 8 bytes, no NUL copied */
	uint8_t *b = malloc(f->size + 8);
	struct gbuf g;
	struct plan_hdr *h;
	static struct plan_view v;
	uint32_t end = (uint32_t)f->size;

	assert_non_null(b);
	memcpy(b, f->bytes, f->size);
	memcpy(b + f->size, tail, 8);
	gbuf_new(&g, b, f->size + 8);
	h = (struct plan_hdr *)(void *)g.p;
	assert_int_equal(plan_parse(g.p, g.size, &v), 0);

	h->hostname_off = end;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	h->hostname_off = end + 7;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	memcpy(g.p, f->bytes, sizeof(*h));

	h->code_name_off = end + 3;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	memcpy(g.p, f->bytes, sizeof(*h));

	h->argv_off = end;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	memcpy(g.p, f->bytes, sizeof(*h));

	h->env_off = end + 1;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	memcpy(g.p, f->bytes, sizeof(*h));

	/* More argv strings than the plan holds: the walk reaches the tail. */
	h->argc = PLAN_ARGV_MAX;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);
	memcpy(g.p, f->bytes, sizeof(*h));

	((struct plan_file *)(void *)(g.p + sizeof(*h)))[0].name_off = end;
	assert_int_equal(plan_parse(g.p, g.size, &v), -EINVAL);

	gbuf_free(&g);
	free(b);
}

/* String offsets at or past the end of the plan. */
static void
test_parse_offsets_past_end(void **state)
{
	struct fixture *f = *state;
	uint32_t size = (uint32_t)f->g.size;
	uint32_t offs[] = {size, size + 1, size + 4096, UINT32_MAX};
	size_t i;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		memcpy(f->g.p, f->bytes, sizeof(struct plan_hdr));
		ghdr(f)->argv_off = offs[i];
		assert_int_equal(gparse(f), -EINVAL);
		memcpy(f->g.p, f->bytes, sizeof(struct plan_hdr));
		ghdr(f)->env_off = offs[i];
		assert_int_equal(gparse(f), -EINVAL);
		memcpy(f->g.p, f->bytes, sizeof(struct plan_hdr));
		ghdr(f)->code_name_off = offs[i];
		assert_int_equal(gparse(f), -EINVAL);
		memcpy(f->g.p, f->bytes, sizeof(struct plan_hdr));
		ghdr(f)->hostname_off = offs[i];
		assert_int_equal(gparse(f), -EINVAL);
		memcpy(f->g.p, f->bytes, sizeof(struct plan_hdr));
		gfiles(f)[2].name_off = offs[i];
		assert_int_equal(gparse(f), -EINVAL);
		gfiles(f)[2].name_off =
			((const struct plan_file *)(const void *)(f->bytes +
								  sizeof(struct plan_hdr)))[2]
				.name_off;
	}
	assert_int_equal(gparse(f), 0);
}

/* Data ranges: past the end, one byte too long, and off+len wrapping around. */
static void
test_parse_data_ranges(void **state)
{
	struct fixture *f = *state;
	uint64_t size = f->g.size;
	struct plan_hdr *h = ghdr(f);
	struct plan_file *pf = gfiles(f);
	static struct plan_view v;

	/* Exactly to the end is fine, and an empty range at the very end too. */
	h->code_off = size - 1;
	h->code_len = 1;
	assert_int_equal(gparse(f), 0);
	h->code_off = size;
	h->code_len = 0;
	assert_int_equal(plan_parse(f->g.p, size, &v), 0);
	assert_ptr_equal(v.code, f->g.p + size);

	h->code_off = size + 1;
	h->code_len = 0;
	assert_int_equal(gparse(f), -EINVAL);
	h->code_off = size - 1;
	h->code_len = 2;
	assert_int_equal(gparse(f), -EINVAL);
	h->code_off = size - 1;
	h->code_len = UINT64_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	h->code_off = UINT64_MAX;
	h->code_len = 1;
	assert_int_equal(gparse(f), -EINVAL);
	h->code_off = 0;
	h->code_len = size + 1;
	assert_int_equal(gparse(f), -EINVAL);
	memcpy(f->g.p, f->bytes, sizeof(*h));

	h->stdin_off = size - 1;
	h->stdin_len = UINT64_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	h->stdin_off = size + 1;
	h->stdin_len = 0;
	assert_int_equal(gparse(f), -EINVAL);
	/* Checked even when there is no stdin. */
	h->has_stdin = 0;
	h->stdin_off = size - 1;
	h->stdin_len = UINT64_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	memcpy(f->g.p, f->bytes, sizeof(*h));

	pf[1].data_off = size - 1;
	pf[1].data_len = UINT64_MAX;
	assert_int_equal(gparse(f), -EINVAL);
	pf[1].data_off = UINT64_MAX - 2;
	pf[1].data_len = 3;
	assert_int_equal(gparse(f), -EINVAL);
	pf[1].data_off = size;
	pf[1].data_len = 1;
	assert_int_equal(gparse(f), -EINVAL);
	pf[1].data_off = size;
	pf[1].data_len = 0;
	assert_int_equal(gparse(f), 0);
}

/* Point the first file's name at a string placed in a copy with room for it. */
static int
parse_with_file_name(struct fixture *f, const char *name)
{
	size_t nlen = strlen(name) + 1, room = (nlen + 7) / 8 * 8;
	uint8_t *b = calloc(1, f->size + room);
	static struct plan_view v;
	struct gbuf g;
	int r;

	assert_non_null(b);
	memcpy(b, f->bytes, f->size);
	memcpy(b + f->size, name, nlen);
	((struct plan_file *)(void *)(b + sizeof(struct plan_hdr)))[0].name_off = (uint32_t)f->size;
	gbuf_new(&g, b, f->size + room);
	r = plan_parse(g.p, g.size, &v);
	if (r == 0)
		assert_string_equal(v.files[0].name, name);
	gbuf_free(&g);
	free(b);
	return r;
}

static const char *const bad_names[] = {
	"",	"..",	 ".",	"../x", "x/..", "a/../b", "/abs", "/",
	"a//b", "a/./b", "./a", "a/.",	"a/",	"d/e/",	  "//",
};

/* A file whose name is not a clean relative path is refused. */
static void
test_parse_bad_file_names(void **state)
{
	struct fixture *f = *state;
	char longname[PROTO_NAME_MAX + 2];
	size_t i;

	assert_int_equal(parse_with_file_name(f, "ok/name.txt"), 0);
	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		print_message("file name \"%s\"\n", bad_names[i]);
		assert_int_equal(parse_with_file_name(f, bad_names[i]), -EINVAL);
	}
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(parse_with_file_name(f, longname), -EINVAL);
	/* An absolute string already in the plan (argv[0]). */
	gfiles(f)[0].name_off = ghdr(f)->argv_off;
	assert_int_equal(gparse(f), -EINVAL);
}

/* plan_build does not judge file names, so the parser must. */
static void
test_parse_bad_file_names_built(void **state)
{
	struct fixture *f = *state;
	const char *names[3];
	uint8_t *b;
	size_t i, size;
	int fd;
	static struct plan_view v;

	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		names[0] = fx_fnames[0];
		names[1] = bad_names[i];
		names[2] = fx_fnames[2];
		f->in.file_names = names;
		assert_int_equal(build_bytes(&f->in, &fd, &b, &size), 0);
		assert_int_equal(plan_parse(b, size, &v), -EINVAL);
		free(b);
		close(fd);
	}
}

/* The code file lives in one directory: no '/', not "." or "..". */
static void
test_parse_bad_code_name(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {"a/b", "/x", "x/", "/", "..", ".", "../main.py"};
	static const char *const good[] = {"main.py", "...", ".x", "a..b", "Main"};
	static struct plan_view v;
	uint8_t *b;
	size_t i, size;
	int fd;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f->in.code_name = bad[i];
		assert_int_equal(build_bytes(&f->in, &fd, &b, &size), 0);
		print_message("code name \"%s\"\n", bad[i]);
		assert_int_equal(plan_parse(b, size, &v), -EINVAL);
		free(b);
		close(fd);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		f->in.code_name = good[i];
		assert_int_equal(build_bytes(&f->in, &fd, &b, &size), 0);
		assert_int_equal(plan_parse(b, size, &v), 0);
		assert_string_equal(v.code_name, good[i]);
		free(b);
		close(fd);
	}
	/* The code name pointed at an absolute string already in the plan. */
	ghdr(f)->code_name_off = ghdr(f)->argv_off;
	assert_int_equal(gparse(f), -EINVAL);
}

/*
 * Flip every byte of the header and the file table to a few values: each
 * result is either refused or every pointer it yields lies inside the plan.
 * The guard page turns any read past the plan into a crash.
 */
static void
test_parse_mutations(void **state)
{
	struct fixture *f = *state;
	static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x07, 0x40, 0x7f, 0x80, 0xfe, 0xff};
	size_t region = sizeof(struct plan_hdr) + f->in.nfiles * sizeof(struct plan_file);
	struct plan_view *v = calloc(1, sizeof(*v));
	size_t i, j, accepted = 0, refused = 0;

	assert_non_null(v);
	assert_true(region <= f->g.size);
	for (i = 0; i < region; i++) {
		for (j = 0; j < sizeof(vals) / sizeof(vals[0]) + 1; j++) {
			uint8_t val = j < sizeof(vals) ? vals[j] : (uint8_t)(f->bytes[i] ^ 0x10);
			int r;

			memcpy(f->g.p, f->bytes, region);
			f->g.p[i] = val;
			memset(v, 0, sizeof(*v));
			r = plan_parse(f->g.p, f->g.size, v);
			if (r == 0) {
				assert_view_inside(v, f->g.p, f->g.size);
				accepted++;
			} else {
				assert_int_equal(r, -EINVAL);
				refused++;
			}
		}
	}
	/* Both outcomes occur, so the loop really exercised the parser. */
	assert_true(accepted > 0);
	assert_true(refused > 0);
	free(v);
}

/* ---- plan_env_build ---- */

/* How many entries of env start with "key="; the last one in *ret_val. */
static size_t
env_count(const struct plan_env *env, const char *key, const char **ret_val)
{
	size_t i, n = 0, kl = strlen(key);

	for (i = 0; i < env->envc; i++)
		if (strncmp(env->envp[i], key, kl) == 0 && env->envp[i][kl] == '=') {
			n++;
			*ret_val = env->envp[i] + kl + 1;
		}
	return n;
}

/* Assert key appears exactly once with value val. */
static void
assert_env(const struct plan_env *env, const char *key, const char *val)
{
	const char *got = NULL;

	assert_int_equal(env_count(env, key, &got), 1);
	assert_string_equal(got, val);
}

/* No request entries: exactly the base environment. */
static void
test_env_base(void **state)
{
	struct plan_env env;

	(void)state;
	assert_int_equal(setenv("AIRLOCK_LEAK", "1", 1), 0);
	assert_int_equal(plan_env_build(&env, NULL, 0, NULL, 0), 0);
	assert_int_equal(env.envc, 12);
	assert_null(env.envp[env.envc]);
	assert_env(&env, "PATH", "/usr/local/bin:/usr/bin:/bin");
	/* Home and caches are outside the workspace: never artifacts. */
	assert_env(&env, "HOME", "/tmp/home");
	assert_env(&env, "XDG_CACHE_HOME", "/tmp/home/.cache");
	assert_env(&env, "XDG_CONFIG_HOME", "/tmp/home/.config");
	assert_env(&env, "XDG_DATA_HOME", "/tmp/home/.local/share");
	assert_env(&env, "XDG_STATE_HOME", "/tmp/home/.local/state");
	assert_env(&env, "MPLCONFIGDIR", "/tmp/home/.config/matplotlib");
	assert_env(&env, "MPLBACKEND", "Agg");
	assert_env(&env, "LANG", "C.UTF-8");
	assert_env(&env, "TMPDIR", "/tmp");
	assert_env(&env, "OPENBLAS_NUM_THREADS", "1");
	assert_env(&env, "USER", "sandbox");
	plan_env_free(&env);
	unsetenv("AIRLOCK_LEAK");
}

/* The runtime's entries come after the base and before the request's: a
 * runtime key replaces a base one, a request key a runtime one. */
static void
test_env_runtime(void **state)
{
	static const char *const rt[] = {"LANG=en_US.UTF-8", "GEM_HOME=/opt/gems", "A=rt"};
	static const char *const bad[] = {"NOEQ"};
	static const struct proto_env req[] = {{"A", "req"}};
	struct plan_env env;

	(void)state;
	assert_int_equal(plan_env_build(&env, rt, 3, req, 1), 0);
	assert_int_equal(env.envc, 14);
	assert_env(&env, "LANG", "en_US.UTF-8");
	assert_env(&env, "GEM_HOME", "/opt/gems");
	assert_env(&env, "A", "req");
	assert_env(&env, "PATH", "/usr/local/bin:/usr/bin:/bin");
	plan_env_free(&env);
	assert_int_equal(plan_env_build(&env, bad, 1, NULL, 0), -EINVAL);
	assert_int_equal(plan_env_build(&env, rt, PLAN_ENV_RUNTIME_MAX + 1, NULL, 0), -E2BIG);
}

/* The least input plan_build() takes: /bin/true, hostname "h", lim. */
static void
bare_input(struct plan_input *in, const struct proto_limits *lim)
{
	static const char *const argv[] = {"/bin/true", NULL};

	memset(in, 0, sizeof(*in));
	in->argv = argv;
	in->argc = 1;
	in->hostname = "h";
	in->limits = lim;
}

/* A working directory beneath the workspace travels; anything else is refused. */
static void
test_cwd(void **state)
{
	static const char *const good[] = {"/workspace/src", "/workspace/a/b.c"};
	static const char *const badcwd[] = {"/etc",	    "/workspace/../etc", "/workspace/",
					     "/workspacex", "/workspace//a",	 "workspace/a"};
	struct proto_limits lim = {{0}};
	struct plan_input in;
	static struct plan_view v;
	uint8_t *bytes;
	size_t size, i;
	int fd;

	(void)state;
	bare_input(&in, &lim);
	for (i = 0; i < 2; i++) {
		in.cwd = good[i];
		assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
		assert_int_equal(plan_parse(bytes, size, &v), 0);
		assert_string_equal(v.cwd, good[i]);
		free(bytes);
		close(fd);
	}
	in.cwd = "/workspace"; /* the default: travels as "" */
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
	assert_int_equal(plan_parse(bytes, size, &v), 0);
	assert_string_equal(v.cwd, "");
	free(bytes);
	close(fd);
	for (i = 0; i < sizeof(badcwd) / sizeof(badcwd[0]); i++) {
		in.cwd = badcwd[i];
		assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
		if (plan_parse(bytes, size, &v) != -EINVAL)
			fail_msg("cwd %s parsed", badcwd[i]);
		free(bytes);
		close(fd);
	}
}

/* hidden_paths travel in order; plan_parse applies the config's rule again
 * (beneath /usr or an /etc entry of the root, normalised, none beneath
 * another, at most PLAN_HIDDEN_MAX); hidden_off without paths is refused. */
static void
test_hidden(void **state)
{
	static const char *const good[] = {"/usr/bin/gcc", "/usr/lib/gcc", "/etc/ssl",
					   "/etc/passwd"};
	static const char *const bad[] = {"/opt/x",	   "/usr",	 "/usr/bin/",
					  "/usr//bin",	   "/usr/./bin", "/usr/bin/..",
					  "usr/bin",	   "/etc",	 "/etc/ssl/private",
					  "/etc/hostname", "/proc/self", "/workspace/a"};
	static struct plan_view v;
	struct proto_limits lim = {{0}};
	const char *many[PLAN_HIDDEN_MAX + 1], *pair[2];
	char names[PLAN_HIDDEN_MAX + 1][16];
	struct plan_input in;
	size_t size, i;
	uint8_t *bytes;
	int fd;

	(void)state;
	bare_input(&in, &lim);
	in.hidden = good;
	in.nhidden = 4;
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
	assert_int_equal(plan_parse(bytes, size, &v), 0);
	assert_int_equal(v.nhidden, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(v.hidden[i], good[i]);
	assert_null(v.hidden[4]);
	/* No paths: offset 0; an offset without paths is refused. */
	free(bytes);
	close(fd);
	in.nhidden = 0;
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
	assert_int_equal(plan_parse(bytes, size, &v), 0);
	assert_int_equal(v.nhidden, 0);
	((struct plan_hdr *)bytes)->hidden_off = (uint32_t)sizeof(struct plan_hdr);
	assert_int_equal(plan_parse(bytes, size, &v), -EINVAL);
	/* A count running past the end of the plan. */
	((struct plan_hdr *)bytes)->nhidden = 3;
	((struct plan_hdr *)bytes)->hidden_off = (uint32_t)size - 1;
	assert_int_equal(plan_parse(bytes, size, &v), -EINVAL);
	free(bytes);
	close(fd);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pair[0] = "/usr/share/doc";
		pair[1] = bad[i];
		in.hidden = pair;
		in.nhidden = 2;
		assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
		if (plan_parse(bytes, size, &v) != -EINVAL)
			fail_msg("hidden path %s parsed", bad[i]);
		free(bytes);
		close(fd);
	}
	/* One beneath another, or the same twice. */
	pair[0] = "/usr/lib";
	pair[1] = "/usr/lib/gcc";
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
	assert_int_equal(plan_parse(bytes, size, &v), -EINVAL);
	free(bytes);
	close(fd);
	pair[0] = pair[1] = "/etc/ssl";
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
	assert_int_equal(plan_parse(bytes, size, &v), -EINVAL);
	free(bytes);
	close(fd);
	/* PLAN_HIDDEN_MAX: built and parsed; one more: refused by both. */
	for (i = 0; i <= PLAN_HIDDEN_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "/usr/x%zu", i);
		many[i] = names[i];
	}
	in.hidden = many;
	in.nhidden = PLAN_HIDDEN_MAX;
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), 0);
	assert_int_equal(plan_parse(bytes, size, &v), 0);
	assert_int_equal(v.nhidden, PLAN_HIDDEN_MAX);
	((struct plan_hdr *)bytes)->nhidden = PLAN_HIDDEN_MAX + 1;
	assert_int_equal(plan_parse(bytes, size, &v), -EINVAL);
	free(bytes);
	close(fd);
	in.nhidden = PLAN_HIDDEN_MAX + 1;
	assert_int_equal(build_bytes(&in, &fd, &bytes, &size), -EINVAL);
}

/* Request keys add, replace a base key in place, and a later one wins. */
static void
test_env_request(void **state)
{
	static const struct proto_env req[] = {
		{"FOO", "bar"}, {"PATH", "/opt/bin"}, {"PATHX", "px"}, {"PAT", "p"},
		{"EMPTY", ""},	{"EQ", "a=b"},	      {"FOO", "baz"},
	};
	struct plan_env env;
	const char *got;
	size_t i;

	(void)state;
	assert_int_equal(setenv("AIRLOCK_LEAK", "1", 1), 0);
	assert_int_equal(plan_env_build(&env, NULL, 0, req, sizeof(req) / sizeof(req[0])), 0);
	/* 6 base + FOO, PATHX, PAT, EMPTY, EQ (PATH and the second FOO replace). */
	assert_int_equal(env.envc, 17);
	assert_null(env.envp[env.envc]);
	assert_env(&env, "PATH", "/opt/bin");
	assert_env(&env, "FOO", "baz");
	assert_env(&env, "PATHX", "px");
	assert_env(&env, "PAT", "p");
	assert_env(&env, "EMPTY", "");
	assert_env(&env, "EQ", "a=b");
	assert_env(&env, "HOME", "/tmp/home");
	assert_env(&env, "TMPDIR", "/tmp");
	assert_env(&env, "OPENBLAS_NUM_THREADS", "1");
	assert_int_equal(env_count(&env, "AIRLOCK_LEAK", &got), 0);
	for (i = 0; i < env.envc; i++)
		assert_null(strstr(env.envp[i], "AIRLOCK_LEAK"));
	plan_env_free(&env);
	assert_int_equal(env.envc, 0);
	assert_int_equal(env.nowned, 0);
	unsetenv("AIRLOCK_LEAK");
}

/* network = proxy: the proxy variables, each once; a name the request set keeps its value. */
static void
test_env_proxy(void **state)
{
	static const struct proto_env req[] = {{"no_proxy", "mine"}, {"HTTP_PROXY", "x"}};
	struct plan_env env;

	(void)state;
	assert_int_equal(plan_env_build(&env, NULL, 0, req, 2), 0);
	assert_int_equal(plan_env_proxy(&env, 8080), 0);
	assert_int_equal(env.envc, 12 + 2 + 6);
	assert_null(env.envp[env.envc]);
	assert_env(&env, "HTTP_PROXY", "x");
	assert_env(&env, "no_proxy", "mine");
	assert_env(&env, "http_proxy", "http://127.0.0.1:8080");
	assert_env(&env, "HTTPS_PROXY", "http://127.0.0.1:8080");
	assert_env(&env, "https_proxy", "http://127.0.0.1:8080");
	assert_env(&env, "ALL_PROXY", "http://127.0.0.1:8080");
	assert_env(&env, "all_proxy", "http://127.0.0.1:8080");
	assert_env(&env, "NO_PROXY", "localhost,127.0.0.1,::1");
	plan_env_free(&env);
}

/* PLAN_F_EGRESS and egress_port go together, the port within 16 bits, reserved 0. */
static void
test_parse_egress(void **state)
{
	struct fixture *f = *state;

	ghdr(f)->flags |= PLAN_F_EGRESS;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->egress_port = 3128;
	assert_int_equal(gparse(f), 0);
	ghdr(f)->egress_port = 65536;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->flags &= ~PLAN_F_EGRESS;
	ghdr(f)->egress_port = 3128;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->egress_port = 0;
	ghdr(f)->reserved = 1;
	assert_int_equal(gparse(f), -EINVAL);
	ghdr(f)->reserved = 0;
	assert_int_equal(gparse(f), 0);
}

/* A request may override HOME too, still only once. */
static void
test_env_request_overrides_home(void **state)
{
	static const struct proto_env req[] = {{"HOME", "/elsewhere"}};
	struct plan_env env;

	(void)state;
	assert_int_equal(plan_env_build(&env, NULL, 0, req, 1), 0);
	assert_int_equal(env.envc, 12);
	assert_env(&env, "HOME", "/elsewhere");
	plan_env_free(&env);
}

/* Keys that are empty or hold '=' are refused; so is too many entries. */
static void
test_env_bad_keys(void **state)
{
	static const struct proto_env eq[] = {{"OK", "1"}, {"A=B", "x"}};
	static const struct proto_env eq_end[] = {{"A=", "x"}};
	static const struct proto_env empty[] = {{"OK", "1"}, {"", "x"}};
	static struct proto_env many[PROTO_ENV_MAX + 1];
	struct plan_env env;
	size_t i;

	(void)state;
	assert_int_equal(plan_env_build(&env, NULL, 0, eq, 2), -EINVAL);
	assert_int_equal(plan_env_build(&env, NULL, 0, eq_end, 1), -EINVAL);
	assert_int_equal(plan_env_build(&env, NULL, 0, empty, 2), -EINVAL);
	for (i = 0; i < PROTO_ENV_MAX + 1; i++) {
		many[i].key = "K";
		many[i].value = "v";
	}
	assert_int_equal(plan_env_build(&env, NULL, 0, many, PROTO_ENV_MAX + 1), -E2BIG);
	/* PROTO_ENV_MAX entries are fine. */
	assert_int_equal(plan_env_build(&env, NULL, 0, many, PROTO_ENV_MAX), 0);
	assert_env(&env, "K", "v");
	plan_env_free(&env);
}

/* plan_env_free accepts NULL and a freed env. */
static void
test_env_free_null(void **state)
{
	struct plan_env env;

	(void)state;
	plan_env_free(NULL);
	assert_int_equal(plan_env_build(&env, NULL, 0, NULL, 0), 0);
	plan_env_free(&env);
	plan_env_free(&env);
	assert_int_equal(env.envc, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_stdin_absent_and_empty, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_minimal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_maxima, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_rejects_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_rejects_null_with_length, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_parse_reference_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_too_small, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_bad_header_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_egress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_file_table_cut_off, setup, teardown),
		cmocka_unit_test(test_env_runtime),
		cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test_setup_teardown(test_parse_counts_over_max_with_strings, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_parse_unterminated_string, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_offsets_past_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_data_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_bad_file_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_bad_file_names_built, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_bad_code_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_mutations, setup, teardown),
		cmocka_unit_test(test_env_base),
		cmocka_unit_test(test_env_request),
		cmocka_unit_test(test_env_proxy),
		cmocka_unit_test(test_env_request_overrides_home),
		cmocka_unit_test(test_env_bad_keys),
		cmocka_unit_test(test_env_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
