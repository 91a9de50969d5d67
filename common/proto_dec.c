/* proto_dec.c: the decoder's strict primitives, one per kind of field (proto_dec.h). */
#include "proto_dec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "compiler.h"
#include "limit.h"
#include "memfd.h"
#include "rules.h"

#define U(s, f) offsetof(struct s, f)

static const struct dec_field dec_blobref_fields[] = {
	{"fd", DEC_U32, DF_REQUIRED, U(dec_blobref, fd), 0, 0, 0},
	{"size", DEC_U64, DF_REQUIRED, U(dec_blobref, size), 0, 0, 0},
};

#undef U

static int dec_value(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f,
		     void *base);

/* Record the failure with the current path; returns the matching -errno. */
__attribute__((format(printf, 3, 4))) int
dec_fail(struct proto_dec *d, enum proto_error code, const char *fmt, ...)
{
	va_list ap;
	int n;

	d->code = code;
	if (d->why != NULL && d->why_len > 0) {
		n = snprintf(d->why, d->why_len, "%s: ", d->path);
		if (n >= 0 && (size_t)n < d->why_len) {
			va_start(ap, fmt);
			vsnprintf(d->why + n, d->why_len - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	if (code == PROTO_ERR_TOO_LARGE)
		return -E2BIG;
	if (code == PROTO_ERR_INTERNAL)
		return -ENOMEM;
	return -EBADMSG;
}

/* Append a segment to the field path; returns the length to restore. */
__attribute__((format(printf, 2, 3))) size_t
dec_push(struct proto_dec *d, const char *fmt, ...)
{
	size_t old = d->pathlen;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(d->path + old, sizeof(d->path) - old, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->pathlen =
			old + (size_t)n < sizeof(d->path) ? old + (size_t)n : sizeof(d->path) - 1;
	return old;
}

/* Cut the field path back to a length dec_push() returned. */
void
dec_pop(struct proto_dec *d, size_t len)
{
	d->pathlen = len;
	d->path[len] = '\0';
}

/* Allocate n zeroed bytes in the message's zone. */
static void *
dec_alloc(struct proto_dec *d, size_t n)
{
	void *p = msgpack_zone_malloc(d->priv->zone, n > 0 ? n : 1);

	if (p != NULL)
		memset(p, 0, n > 0 ? n : 1);
	return p;
}

/* True when a msgpack string equals name. */
static bool
dec_str_eq(const msgpack_object_str *s, const char *name)
{
	return strlen(name) == s->size && memcmp(s->ptr, name, s->size) == 0;
}

/* Read one big-endian length of w bytes at *off. */
static int
dec_scan_len(struct proto_dec *d, const uint8_t *p, size_t len, size_t *off, unsigned w,
	     uint64_t *ret)
{
	uint64_t v = 0;
	unsigned i;

	if (w > len - *off)
		return dec_bad(d, "truncated packet");
	for (i = 0; i < w; i++)
		v = (v << 8) | p[(*off)++];
	*ret = v;
	return 0;
}

/*
 * For header bytes 0xc4..0xdf: the width of the big-endian length that
 * follows, the fixed bytes after it, and 1/2 when the length counts array
 * elements/map pairs rather than bytes.
 */
static const struct {
	uint8_t lw, extra, kids;
} dec_scan_tab[0xe0 - 0xc4] = {
	{1, 0, 0}, {2, 0, 0}, {4, 0, 0},			/* bin 8/16/32 */
	{1, 1, 0}, {2, 1, 0}, {4, 1, 0},			/* ext 8/16/32 */
	{0, 4, 0}, {0, 8, 0},					/* float 32/64 */
	{0, 1, 0}, {0, 2, 0}, {0, 4, 0}, {0, 8, 0},		/* uint 8..64 */
	{0, 1, 0}, {0, 2, 0}, {0, 4, 0}, {0, 8, 0},		/* int 8..64 */
	{0, 2, 0}, {0, 3, 0}, {0, 5, 0}, {0, 9, 0}, {0, 17, 0}, /* fixext */
	{1, 0, 0}, {2, 0, 0}, {4, 0, 0},			/* str 8/16/32 */
	{2, 0, 1}, {4, 0, 1}, {2, 0, 2}, {4, 0, 2},		/* array, map */
};

/*
 * Walk the packet's msgpack structure without allocating anything. msgpack-c
 * allocates an array or map from its declared count before reading a single
 * element, so a 5-byte packet could ask it for gigabytes; here every count
 * must fit in the bytes that are left (each object takes at least one byte),
 * which bounds what msgpack-c allocates by the packet's length. Also refuses
 * truncation, trailing bytes, the never-used byte 0xc1 and deep nesting.
 */
int
dec_prescan(struct proto_dec *d, const uint8_t *p, size_t len)
{
	uint64_t left[PROTO_DEPTH_MAX] = {1};
	uint64_t pending = 1, n = 0, kids, skip;
	size_t depth = 0, off = 0;
	uint8_t c;
	int r;

	while (pending > 0) {
		while (left[depth] == 0)
			depth--;
		if (off >= len)
			return dec_bad(d, "truncated packet");
		c = p[off++];
		pending--;
		left[depth]--;
		kids = skip = 0;
		if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
			;
		else if (c <= 0x8f)
			kids = 2u * (c & 0x0fu);
		else if (c <= 0x9f)
			kids = c & 0x0fu;
		else if (c <= 0xbf)
			skip = c & 0x1fu;
		else if (c == 0xc1)
			return dec_bad(d, "invalid msgpack byte 0xc1");
		else {
			r = dec_scan_len(d, p, len, &off, dec_scan_tab[c - 0xc4].lw, &n);
			if (r < 0)
				return r;
			if (dec_scan_tab[c - 0xc4].kids > 0)
				kids = n * dec_scan_tab[c - 0xc4].kids;
			else
				skip = n + dec_scan_tab[c - 0xc4].extra;
		}
		if (skip > len - off)
			return dec_bad(d, "truncated packet");
		off += skip;
		if (kids == 0)
			continue;
		if (kids > len - off || pending > len - off - kids)
			return dec_bad(d, "truncated packet (count larger than the packet)");
		if (depth + 1 >= PROTO_DEPTH_MAX)
			return dec_bad(d, "nested too deeply");
		left[++depth] = kids;
		pending += kids;
	}
	if (off != len)
		return dec_bad(d, "trailing bytes after the message");
	return 0;
}

/* Check a map: bounded size, string keys only, no key twice. */
static int
dec_check_map(struct proto_dec *d, const msgpack_object *o, size_t max)
{
	const msgpack_object_kv *kv;
	size_t i, j;

	if (o->type != MSGPACK_OBJECT_MAP)
		return dec_bad(d, "not a map");
	if (o->via.map.size > max)
		return dec_big(d, "more than %zu entries", max);
	kv = o->via.map.ptr;
	for (i = 0; i < o->via.map.size; i++) {
		if (kv[i].key.type != MSGPACK_OBJECT_STR)
			return dec_bad(d, "key of entry %zu is not a string", i);
		for (j = 0; j < i; j++)
			if (kv[j].key.via.str.size == kv[i].key.via.str.size &&
			    memcmp(kv[j].key.via.str.ptr, kv[i].key.via.str.ptr,
				   kv[i].key.via.str.size) == 0)
				return dec_bad(d, "duplicate key in entry %zu", i);
	}
	return 0;
}

/* Find a key in a map whose keys may not have been checked yet. */
const msgpack_object *
dec_find(const msgpack_object *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->via.map.size; i++)
		if (o->via.map.ptr[i].key.type == MSGPACK_OBJECT_STR &&
		    dec_str_eq(&o->via.map.ptr[i].key.via.str, name))
			return &o->via.map.ptr[i].val;
	return NULL;
}

/* An unsigned integer no larger than max. */
int
dec_uint(struct proto_dec *d, const msgpack_object *o, uint64_t max, uint64_t *ret)
{
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return dec_bad(d, "negative");
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return dec_bad(d, "not an unsigned integer");
	if (o->via.u64 > max)
		return dec_bad(d, "out of range (max %llu)", (unsigned long long)max);
	*ret = o->via.u64;
	return 0;
}

/* A signed 32-bit integer. */
static int
dec_i32(struct proto_dec *d, const msgpack_object *o, int32_t *ret)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT32_MAX)
		*ret = (int32_t)o->via.u64;
	else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 >= INT32_MIN)
		*ret = (int32_t)o->via.i64;
	else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
		 o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		return dec_bad(d, "out of the 32-bit range");
	else
		return dec_bad(d, "not an integer");
	return 0;
}

/* A string of at most max bytes without NUL, copied NUL-terminated into the zone. */
static int
dec_str(struct proto_dec *d, const msgpack_object *o, size_t max, bool nonempty, const char **ret)
{
	char *s;

	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	if (o->via.str.size > max)
		return dec_big(d, "longer than %zu bytes", max);
	if (nonempty && o->via.str.size == 0)
		return dec_bad(d, "empty");
	if (memchr(o->via.str.ptr, '\0', o->via.str.size) != NULL)
		return dec_bad(d, "contains a NUL byte");
	s = dec_alloc(d, (size_t)o->via.str.size + 1);
	if (s == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	memcpy(s, o->via.str.ptr, o->via.str.size);
	*ret = s;
	return 0;
}

/*
 * A name (1 to PROTO_NAME_MAX bytes) that lookup maps into *ret: the one
 * decoder of the wire's closed name sets, an enum's names or a
 * NULL-terminated set of strings (set, for dec_set_lookup). A name lookup
 * does not know is bad_request.
 */
static int
dec_enum(struct proto_dec *d, const msgpack_object *o,
	 int (*lookup)(const char *const *set, const char *name, void *ret), const char *const *set,
	 void *ret)
{
	const char *s = ""; /* dec_fail() is opaque to the analyzer: s set on every path */
	int r;

	r = dec_str(d, o, PROTO_NAME_MAX, true, &s);
	if (r < 0)
		return r;
	if (lookup(set, s, ret) < 0)
		return dec_bad(d, "unknown name");
	return 0;
}

/* proto_outcome_from_name() with a generic signature for dec_enum(). */
static int
dec_outcome_lookup(UNUSED const char *const *set, const char *name, void *ret)
{
	return proto_outcome_from_name(name, ret);
}

/* proto_error_from_name() with a generic signature for dec_enum(). */
static int
dec_errcode_lookup(UNUSED const char *const *set, const char *name, void *ret)
{
	return proto_error_from_name(name, ret);
}

/* proto_tool_outcome_from_name() with a generic signature for dec_enum(). */
static int
dec_tool_outcome_lookup(UNUSED const char *const *set, const char *name, void *ret)
{
	return proto_tool_outcome_from_name(name, ret);
}

/* A string of the NULL-terminated set: *(const char **)ret gets the set's
 * own copy, so the decoded message points at no wire bytes for it. */
static int
dec_set_lookup(const char *const *set, const char *name, void *ret)
{
	const char *s = proto_name_in(set, name);

	if (s == NULL)
		return -ENOENT;
	memcpy(ret, &s, sizeof(s));
	return 0;
}

/* A tool's name: [A-Za-z_][A-Za-z0-9_]*, 1 to PROTO_TOOL_NAME_MAX bytes. */
static int
dec_tool_name(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	if (o->type == MSGPACK_OBJECT_STR && o->via.str.size > PROTO_TOOL_NAME_MAX)
		return dec_big(d, "longer than %d bytes", PROTO_TOOL_NAME_MAX);
	if (o->type != MSGPACK_OBJECT_STR ||
	    !rules_tool_name_check(o->via.str.ptr, o->via.str.size))
		return dec_bad(d, "not a tool name ([A-Za-z_][A-Za-z0-9_]*)");
	return dec_str(d, o, PROTO_TOOL_NAME_MAX, true, ret);
}

#define DEC_STR_(x) #x
#define DEC_STR(x) DEC_STR_(x)

/* A str that rule ok admits, of at most max bytes: any other string, of
 * whatever length, is bad_request "not WHAT". */
static int
dec_checked(struct proto_dec *d, const msgpack_object *o, bool (*ok)(const char *, size_t),
	    size_t max, const char *what, const char **ret)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	if (!ok(o->via.str.ptr, o->via.str.size))
		return dec_bad(d, "not %s", what);
	return dec_str(d, o, max, true, ret);
}

/* A session id. */
static int
dec_session_id(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	return dec_checked(
		d, o, rules_session_id_valid, PROTO_SESSION_ID_LEN,
		"a session id (" DEC_STR(PROTO_SESSION_ID_LEN) " lowercase hex characters)", ret);
}

/* A profile name: 1 to PROTO_PROFILE_MAX of [a-z0-9_-]. */
static int
dec_profile(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	return dec_checked(
		d, o, rules_profile_name_check, PROTO_PROFILE_MAX,
		"a profile name (1 to " DEC_STR(PROTO_PROFILE_MAX) " of a-z, 0-9, '-', '_')", ret);
}

/* A name of a kind with a rule: a [mount] name, or (DEC_MODULEV) a Python
 * module name; anything else is bad_request. */
static int
dec_named_check(struct proto_dec *d, const char *s, size_t len, enum dec_kind kind)
{
	if (kind == DEC_MODULEV)
		return rules_module_name_check(s, len)
			       ? 0
			       : dec_bad(d,
					 "not a Python module name (1 to %d bytes of dotted "
					 "identifiers)",
					 PROTO_MODULE_NAME_MAX);
	return rules_mount_name_check(s, len)
		       ? 0
		       : dec_bad(d, "not a mount name (1 to %d of a-z, 0-9, '-', '_')",
				 PROTO_MOUNT_MAX);
}

/* A str that is a [mount] name. */
static int
dec_mount_name(struct proto_dec *d, const msgpack_object *o, const char **ret)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return dec_bad(d, "not a string");
	int r = dec_named_check(d, o->via.str.ptr, o->via.str.size, DEC_MOUNT_NAME);

	if (r < 0)
		return r;
	return dec_str(d, o, PROTO_MOUNT_MAX, true, ret);
}

/*
 * Attach memfd number idx to a blob. The seals are what make this safe
 * against a sender that keeps its own copy of the fd: with F_SEAL_WRITE,
 * F_SEAL_SHRINK and F_SEAL_GROW set (and F_SEAL_SEAL so they stay), the
 * contents and size can no longer change, so the size checked here is the
 * size mapped and reading the mapping can neither race nor SIGBUS.
 */
static int
dec_blob_fd(struct proto_dec *d, const struct dec_blobref *ref, struct proto_blob *b)
{
	struct proto_priv *p = d->priv;
	uint64_t size;
	size_t old;
	void *addr;
	int r, fd;

	old = dec_push(d, ".fd");
	if (ref->fd >= p->nfds)
		return dec_bad(d, "fd index %u out of range (%zu attached)", ref->fd, p->nfds);
	if (p->used[ref->fd])
		return dec_bad(d, "fd index %u referenced twice", ref->fd);
	p->used[ref->fd] = true;
	fd = p->fds[ref->fd];
	r = memfd_check_sealed(fd, PROTO_BLOB_MAX, &size);
	if (r == -E2BIG)
		return dec_big(d, "memfd larger than %llu bytes",
			       (unsigned long long)PROTO_BLOB_MAX);
	if (r < 0)
		return dec_bad(d, "not a sealed memfd (%s)", strerror(-r));
	if (size != ref->size)
		return dec_bad(d, "memfd holds %llu bytes, size says %llu",
			       (unsigned long long)size, (unsigned long long)ref->size);
	dec_pop(d, old);
	b->data = (const uint8_t *)"";
	if (size > 0) {
		addr = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
		if (addr == MAP_FAILED)
			return dec_fail(d, PROTO_ERR_INTERNAL, "cannot map memfd: %s",
					strerror(errno));
		p->maps[p->nmaps].addr = addr;
		p->maps[p->nmaps++].len = (size_t)size;
		b->data = addr;
	}
	b->len = (size_t)size;
	b->fd = fd;
	b->present = true;
	return 0;
}

/* A blob: inline bin, or {fd, size} naming an attached sealed memfd. */
static int
dec_blob(struct proto_dec *d, const msgpack_object *o, struct proto_blob *b)
{
	struct dec_blobref ref = {0};
	uint8_t *copy;
	size_t i;
	int r;

	if (o->type == MSGPACK_OBJECT_BIN) {
		if (o->via.bin.size > PROTO_INLINE_MAX)
			return dec_big(d, "inline blob longer than %d bytes", PROTO_INLINE_MAX);
		copy = dec_alloc(d, o->via.bin.size);
		if (copy == NULL)
			return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
		if (o->via.bin.size > 0)
			memcpy(copy, o->via.bin.ptr, o->via.bin.size);
		*b = (struct proto_blob){
			.data = copy, .len = o->via.bin.size, .fd = -1, .present = true};
		return 0;
	}
	if (o->type != MSGPACK_OBJECT_MAP)
		return dec_bad(d, "not a blob (bin or {fd, size})");
	r = dec_check_map(d, o, PROTO_KEYS_MAX);
	for (i = 0; r == 0 && i < NELEM(dec_blobref_fields); i++) {
		const msgpack_object *v = dec_find(o, dec_blobref_fields[i].name);
		size_t old = dec_push(d, ".%s", dec_blobref_fields[i].name);

		if (v == NULL)
			return dec_bad(d, "missing");
		r = dec_value(d, v, &dec_blobref_fields[i], &ref);
		if (r == 0)
			dec_pop(d, old);
	}
	if (r < 0)
		return r;
	if (ref.size > PROTO_BLOB_MAX) {
		dec_push(d, ".size");
		return dec_big(d, "larger than %llu bytes", (unsigned long long)PROTO_BLOB_MAX);
	}
	return dec_blob_fd(d, &ref, b);
}

/* Decode a map against a field table into base; unknown keys are ignored. */
int
dec_object(struct proto_dec *d, const msgpack_object *o, const struct dec_field *fields,
	   size_t nfields, void *base, uint32_t *ret_seen)
{
	uint32_t seen = 0;
	size_t i, k, old;
	int r;

	r = dec_check_map(d, o, PROTO_KEYS_MAX);
	if (r < 0)
		return r;
	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		for (k = 0; k < nfields; k++)
			if (dec_str_eq(&kv->key.via.str, fields[k].name))
				break;
		if (k == nfields)
			continue; /* unknown key: forward compatibility */
		old = dec_push(d, ".%s", fields[k].name);
		r = dec_value(d, &kv->val, &fields[k], base);
		if (r < 0)
			return r;
		dec_pop(d, old);
		seen |= 1u << k;
	}
	for (k = 0; k < nfields; k++)
		if ((fields[k].flags & DF_REQUIRED) != 0 && (seen & (1u << k)) == 0) {
			dec_push(d, ".%s", fields[k].name);
			return dec_bad(d, "missing");
		}
	if (ret_seen != NULL)
		*ret_seen = seen;
	return 0;
}

/* Check that an array holds at most max entries. */
static int
dec_check_array(struct proto_dec *d, const msgpack_object *o, size_t max)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return dec_bad(d, "not an array");
	if (o->via.array.size > max)
		return dec_big(d, "more than %zu entries", max);
	return 0;
}

/* An array of strings into a NULL-terminated zone array. */
static int
dec_strv(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, const char ***ret,
	 size_t *ret_n)
{
	const char **v;
	size_t i, old;
	int r;

	r = dec_check_array(d, o, f->max);
	if (r < 0)
		return r;
	v = dec_alloc(d, ((size_t)o->via.array.size + 1) * sizeof(*v));
	if (v == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	for (i = 0; i < o->via.array.size; i++) {
		old = dec_push(d, "[%zu]", i);
		r = dec_str(d, &o->via.array.ptr[i], f->elem_max, (f->flags & DF_NONEMPTY) != 0,
			    &v[i]);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* env: a map of variable names to values. */
static int
dec_env(struct proto_dec *d, const msgpack_object *o, struct proto_env **ret, size_t *ret_n)
{
	struct proto_env *v;
	size_t i, old;
	int r;

	r = dec_check_map(d, o, PROTO_ENV_MAX);
	if (r < 0)
		return r;
	v = dec_alloc(d, (size_t)o->via.map.size * sizeof(*v));
	if (v == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	for (i = 0; i < o->via.map.size; i++) {
		old = dec_push(d, "[%zu]", i);
		r = dec_str(d, &o->via.map.ptr[i].key, PROTO_ENV_KEY_MAX, true, &v[i].key);
		if (r < 0)
			return r;
		if (rules_env_name_check(v[i].key, strlen(v[i].key)) < 0)
			return dec_bad(d, "not a valid variable name");
		r = dec_str(d, &o->via.map.ptr[i].val, PROTO_STR_MAX, false, &v[i].value);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* runtime_packages: a map of runtime names to arrays of package names. */
static int
dec_rtpkgs(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f,
	   struct proto_runtime_packages *v, size_t *ret_n)
{
	const struct dec_field pf = {"packages", DEC_STRV,	     DF_NONEMPTY, 0,
				     0,		 PROTO_PACKAGES_MAX, f->elem_max};
	const char **strv;
	size_t i, n, old;
	int r;

	r = dec_check_map(d, o, f->max);
	if (r < 0)
		return r;
	for (i = 0; i < o->via.map.size; i++) {
		old = dec_push(d, "[%zu]", i);
		r = dec_str(d, &o->via.map.ptr[i].key, PROTO_RUNTIME_MAX, true, &v[i].runtime);
		if (r < 0)
			return r;
		r = dec_strv(d, &o->via.map.ptr[i].val, &pf, &strv, &n);
		if (r < 0)
			return r;
		memcpy(v[i].packages, strv, n * sizeof(*strv));
		v[i].npackages = n;
		dec_pop(d, old);
	}
	*ret_n = i;
	return 0;
}

/* Check an artifact's or a stream's data against its total and flag. */
int
dec_check_partial(struct proto_dec *d, const struct proto_blob *b, uint64_t total, bool truncated)
{
	if (b->len > total)
		return dec_bad(d, "data longer than the size given");
	if (truncated != (b->len < total))
		return dec_bad(d, "truncated flag does not match the data");
	return 0;
}

/* An array of maps (files, artifacts, ps, sessions, entries), each decoded by dec_elems. */
static int
dec_list(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void **ret,
	 size_t *ret_n)
{
	const struct dec_elem *el = &dec_elems[f->kind];
	size_t i, old;
	uint8_t *v;
	int r;

	r = dec_check_array(d, o, f->max);
	if (r < 0)
		return r;
	v = dec_alloc(d, (size_t)o->via.array.size * el->size);
	if (v == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	for (i = 0; i < o->via.array.size; i++) {
		uint8_t *elem = v + i * el->size;

		old = dec_push(d, "[%zu]", i);
		if (el->blob_off != DEC_NO_BLOB)
			((struct proto_blob *)(elem + el->blob_off))->fd = -1;
		r = dec_object(d, &o->via.array.ptr[i], el->fields, el->nfields, elem, NULL);
		if (r == 0 && f->kind == DEC_ARTIFACTS) {
			const struct proto_artifact *a = (const struct proto_artifact *)elem;

			r = dec_check_partial(d, &a->data, a->size, a->truncated);
		}
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* limits: a map of proto_limit_name() names to unsigned values. */
static int
dec_limits(struct proto_dec *d, const msgpack_object *o, bool strict, struct proto_limits *ret)
{
	size_t i, old;
	int r;

	r = dec_check_map(d, o, PROTO_KEYS_MAX);
	if (r < 0)
		return r;
	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object_str *key = &o->via.map.ptr[i].key.via.str;
		enum proto_limit k;

		if (limit_from_name(key->ptr, key->size, &k) < 0) {
			if (strict)
				return dec_bad(d, "entry %zu: unknown limit", i);
			continue;
		}
		old = dec_push(d, ".%s", limit_table[k].name);
		r = dec_uint(d, &o->via.map.ptr[i].val, UINT64_MAX, &ret->v[k]);
		if (r < 0)
			return r;
		dec_pop(d, old);
	}
	return 0;
}

/*
 * One decoder per kind of field (enum dec_kind), chosen by dec_kinds[]: each
 * gets the msgpack object, the field's row, where the value goes (dst) and
 * where an array's count goes (cnt).
 */
typedef int dec_kind_fn(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f,
			void *dst, size_t *cnt);

static int
dec_k_u32(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	  size_t *cnt)
{
	uint64_t u = 0;
	int r = dec_uint(d, o, UINT32_MAX, &u);

	if (r == 0)
		*(uint32_t *)dst = (uint32_t)u;
	return r;
}

static int
dec_k_u64(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	  size_t *cnt)
{
	return dec_uint(d, o, UINT64_MAX, (uint64_t *)dst);
}

static int
dec_k_i32(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	  size_t *cnt)
{
	return dec_i32(d, o, (int32_t *)dst);
}

/* DEC_BOOL, and DEC_BOOL_NOT stored negated. */
static int
dec_k_bool(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return dec_bad(d, "not a boolean");
	*(bool *)dst = f->kind == DEC_BOOL_NOT ? !o->via.boolean : o->via.boolean;
	return 0;
}

static int
dec_k_str(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	  size_t *cnt)
{
	return dec_str(d, o, f->max, (f->flags & DF_NONEMPTY) != 0, (const char **)dst);
}

static int
dec_k_blob(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	return dec_blob(d, o, (struct proto_blob *)dst);
}

/* DEC_INLINE: a bin in the message itself, never a memfd reference. */
static int
dec_k_inline(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	     size_t *cnt)
{
	if (o->type != MSGPACK_OBJECT_BIN)
		return dec_bad(d, "not an inline bin (never a memfd here)");
	if ((f->flags & DF_NONEMPTY) != 0 && o->via.bin.size == 0)
		return dec_bad(d, "empty");
	return dec_blob(d, o, (struct proto_blob *)dst);
}

static int
dec_k_strv(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	return dec_strv(d, o, f, (const char ***)dst, cnt);
}

/* DEC_STRA, DEC_MOUNTS (fixed arrays), DEC_MOUNTV, DEC_MODULEV (zone
 * arrays): strings, each a name that passes its rule but for DEC_STRA. */
static int
dec_k_strs(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	const char **strv;
	size_t n;
	int r;

	r = dec_strv(d, o, f, &strv, &n);
	for (size_t i = 0; r == 0 && f->kind != DEC_STRA && i < n; i++)
		r = dec_named_check(d, strv[i], strlen(strv[i]), f->kind);
	if (r == 0 && (f->kind == DEC_STRA || f->kind == DEC_MOUNTS)) {
		memcpy(dst, strv, n * sizeof(*strv));
	} else if (r == 0) {
		*(const char ***)dst = strv;
	}
	if (r == 0)
		*cnt = n;
	return r;
}

static int
dec_k_env(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	  size_t *cnt)
{
	return dec_env(d, o, (struct proto_env **)dst, cnt);
}

static int
dec_k_rtpkgs(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	     size_t *cnt)
{
	return dec_rtpkgs(d, o, f, (struct proto_runtime_packages *)dst, cnt);
}

/* An array of maps by dec_elems; DEC_TOOLS and DEC_TOOL_RECORDS may not be
 * empty where the field says so. */
static int
dec_k_list(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	if ((f->kind == DEC_TOOLS || f->kind == DEC_TOOL_RECORDS) &&
	    (f->flags & DF_NONEMPTY) != 0 && o->type == MSGPACK_OBJECT_ARRAY &&
	    o->via.array.size == 0)
		return dec_bad(d, "empty (leave it out)");
	return dec_list(d, o, f, (void **)dst, cnt);
}

/* DEC_NETWORK: one map by dec_elems, into a zone struct. */
static int
dec_k_network(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	      size_t *cnt)
{
	struct proto_network *net = dec_alloc(d, sizeof(*net));
	int r;

	if (net == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "out of memory");
	memset(net, 0, sizeof(*net));
	r = dec_object(d, o, dec_elems[DEC_NETWORK].fields, dec_elems[DEC_NETWORK].nfields, net,
		       NULL);
	if (r == 0)
		*(const struct proto_network **)dst = net;
	return r;
}

static int
dec_k_limits(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	     size_t *cnt)
{
	return dec_limits(d, o, f->kind == DEC_LIMITS_REQ, (struct proto_limits *)dst);
}

/* The name lookup of each kind dec_k_name() decodes: a closed set of
 * strings, or an enum by its names. */
static const struct dec_name_kind {
	int (*lookup)(const char *const *set, const char *name, void *ret);
	const char *const *set;
} dec_name_kinds[DEC_KIND_COUNT_] = {
	[DEC_NETMODE] = {dec_set_lookup, proto_netmodes},
	[DEC_FILE_KIND] = {dec_set_lookup, proto_file_kinds},
	[DEC_SESSION_STATE] = {dec_set_lookup, proto_session_states},
	[DEC_CELL_STATE] = {dec_set_lookup, proto_cell_states},
	[DEC_STREAM_NAME] = {dec_set_lookup, proto_stream_names},
	[DEC_OUTCOME] = {dec_outcome_lookup, NULL},
	[DEC_ERRCODE] = {dec_errcode_lookup, NULL},
	[DEC_TOOL_OUTCOME] = {dec_tool_outcome_lookup, NULL},
};

static int
dec_k_name(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	const struct dec_name_kind *k = &dec_name_kinds[f->kind];

	return dec_enum(d, o, k->lookup, k->set, dst);
}

/* The rule of each kind of checked string dec_k_rule() decodes. */
static int (*const dec_rules[DEC_KIND_COUNT_])(struct proto_dec *, const msgpack_object *,
					       const char **) = {
	[DEC_SESSION_ID] = dec_session_id,
	[DEC_PROFILE] = dec_profile,
	[DEC_MOUNT_NAME] = dec_mount_name,
	[DEC_TOOL_NAME] = dec_tool_name,
};

static int
dec_k_rule(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *dst,
	   size_t *cnt)
{
	return dec_rules[f->kind](d, o, (const char **)dst);
}

/* The decoder of each kind; every kind has one (unit test proto: a message
 * of every type round-trips). */
static dec_kind_fn *const dec_kinds[DEC_KIND_COUNT_] = {
	[DEC_U32] = dec_k_u32,
	[DEC_U64] = dec_k_u64,
	[DEC_I32] = dec_k_i32,
	[DEC_BOOL] = dec_k_bool,
	[DEC_BOOL_NOT] = dec_k_bool,
	[DEC_STR] = dec_k_str,
	[DEC_BLOB] = dec_k_blob,
	[DEC_INLINE] = dec_k_inline,
	[DEC_STRV] = dec_k_strv,
	[DEC_STRA] = dec_k_strs,
	[DEC_MOUNTS] = dec_k_strs,
	[DEC_MOUNTV] = dec_k_strs,
	[DEC_MODULEV] = dec_k_strs,
	[DEC_ENV] = dec_k_env,
	[DEC_RTPKGS] = dec_k_rtpkgs,
	[DEC_FILES] = dec_k_list,
	[DEC_ARTIFACTS] = dec_k_list,
	[DEC_PSRUNS] = dec_k_list,
	[DEC_SESSIONS] = dec_k_list,
	[DEC_ENTRIES] = dec_k_list,
	[DEC_PROFILES] = dec_k_list,
	[DEC_REFUSALS] = dec_k_list,
	[DEC_MOUNT_INFOS] = dec_k_list,
	[DEC_TOOLS] = dec_k_list,
	[DEC_TOOL_RECORDS] = dec_k_list,
	[DEC_NETWORK] = dec_k_network,
	[DEC_LIMITS] = dec_k_limits,
	[DEC_LIMITS_REQ] = dec_k_limits,
	[DEC_NETMODE] = dec_k_name,
	[DEC_FILE_KIND] = dec_k_name,
	[DEC_SESSION_STATE] = dec_k_name,
	[DEC_CELL_STATE] = dec_k_name,
	[DEC_STREAM_NAME] = dec_k_name,
	[DEC_OUTCOME] = dec_k_name,
	[DEC_ERRCODE] = dec_k_name,
	[DEC_TOOL_OUTCOME] = dec_k_name,
	[DEC_SESSION_ID] = dec_k_rule,
	[DEC_PROFILE] = dec_k_rule,
	[DEC_MOUNT_NAME] = dec_k_rule,
	[DEC_TOOL_NAME] = dec_k_rule,
	[DEC_PROCESSES] = dec_k_list, /* session_ps_ok */
};

/* Decode one value of a known field into base + f->off. */
static int
dec_value(struct proto_dec *d, const msgpack_object *o, const struct dec_field *f, void *base)
{
	uint8_t *dst = (uint8_t *)base + f->off;
	size_t *cnt = (size_t *)((uint8_t *)base + f->cnt_off);

	if ((size_t)f->kind >= DEC_KIND_COUNT_ || dec_kinds[f->kind] == NULL)
		return dec_fail(d, PROTO_ERR_INTERNAL, "unknown field kind");
	return dec_kinds[f->kind](d, o, f, dst, cnt);
}
