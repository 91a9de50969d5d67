/* plan_parse.c: read a plan back without allocating (the supervisor, between
 * clone and exec); plan_build.c packs it (the frontend). */
#include "plan.h"

#include <errno.h>
#include <string.h>

#include "rules.h"
#include "sandbox_fs_root.h"

/* Is [off, off+len) inside size? */
static int
plan_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Walk n NUL-terminated strings from off; store pointers; return the end. */
static int
plan_strings(const char *base, uint64_t size, uint64_t off, uint32_t n, const char **out,
	     size_t max)
{
	uint32_t i;

	if (n > max)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const char *s = base + off;
		const char *nul;

		if (off >= size)
			return -EINVAL;
		nul = memchr(s, '\0', size - off);
		if (nul == NULL)
			return -EINVAL;
		out[i] = s;
		off += (uint64_t)(nul - s) + 1;
	}
	out[n] = NULL;
	return 0;
}

/* One NUL-terminated string at off. */
static const char *
plan_str_at(const char *base, uint64_t size, uint64_t off)
{
	if (off >= size || memchr(base + off, '\0', size - off) == NULL)
		return NULL;
	return base + off;
}

/*
 * The hidden paths: each by the rule the config applied
 * (sandbox_fs_root_hidable: beneath /usr or an /etc entry of the root),
 * none the same as or beneath another (the supervisor makes one whiteout
 * per path, in a tree).
 */
static int
plan_parse_hidden(const char *b, uint64_t size, const struct plan_hdr *h, struct plan_view *ret)
{
	size_t i, j;
	uint32_t k;

	ret->nhidden = 0;
	ret->hidden[0] = NULL;
	if (h->nhidden == 0)
		return h->hidden_off == 0 ? 0 : -EINVAL;
	if (plan_strings(b, size, h->hidden_off, h->nhidden, ret->hidden, PLAN_HIDDEN_MAX) < 0)
		return -EINVAL;
	for (k = 0; k < h->nhidden; k++)
		if (!sandbox_fs_root_hidable(ret->hidden[k]))
			return -EINVAL;
	if (sandbox_fs_root_hidden_overlap(ret->hidden, h->nhidden, &i, &j) < 0)
		return -EINVAL;
	ret->nhidden = h->nhidden;
	return 0;
}

/* plan_parse() into ret, which the caller zeroes when it fails. */
static int plan_parse_view(const void *base, uint64_t size, struct plan_view *ret);

int
plan_parse(const void *base, uint64_t size, struct plan_view *ret)
{
	/* Into ret directly: a copy of the view would not fit the
	 * supervisor's stack. A failed parse leaves nothing half-filled. */
	int r = plan_parse_view(base, size, ret);

	if (r < 0)
		memset(ret, 0, sizeof(*ret));
	return r;
}

static int
plan_parse_view(const void *base, uint64_t size, struct plan_view *ret)
{
	const char *b = base;
	const struct plan_hdr *h = base;
	const struct plan_file *pf;
	uint32_t i;

	if (size < sizeof(*h) || h->magic != PLAN_MAGIC || h->nfiles > PLAN_FILES_MAX ||
	    h->argc == 0)
		return -EINVAL;
	if (!plan_range_ok(sizeof(*h), (uint64_t)h->nfiles * sizeof(*pf), size))
		return -EINVAL;
	ret->hdr = h;
	if (plan_strings(b, size, h->argv_off, h->argc, ret->argv, PLAN_ARGV_MAX) < 0 ||
	    plan_strings(b, size, h->env_off, h->envc, ret->envp, PLAN_ENV_MAX) < 0)
		return -EINVAL;
	if (((h->flags & PLAN_F_EGRESS) != 0) != (h->egress_port != 0) || h->egress_port > 65535 ||
	    h->reserved != 0)
		return -EINVAL;
	ret->code_name = plan_str_at(b, size, h->code_name_off);
	ret->hostname = plan_str_at(b, size, h->hostname_off);
	ret->cwd = plan_str_at(b, size, h->cwd_off);
	if (ret->code_name == NULL || ret->hostname == NULL || ret->cwd == NULL ||
	    h->reserved2 != 0)
		return -EINVAL;
	/* The code makes its working directory itself (sandbox_code.c): a
	 * path beneath the workspace, by the workspace's own rule. */
	if (ret->cwd[0] != '\0' &&
	    (strncmp(ret->cwd, PLAN_WORKSPACE "/", sizeof(PLAN_WORKSPACE)) != 0 ||
	     rules_workspace_name_check(ret->cwd + sizeof(PLAN_WORKSPACE)) < 0))
		return -EINVAL;
	if (ret->code_name[0] != '\0' && !rules_code_name_valid(ret->code_name))
		return -EINVAL;
	if (plan_parse_hidden(b, size, h, ret) < 0)
		return -EINVAL;
	if (!plan_range_ok(h->code_off, h->code_len, size) ||
	    !plan_range_ok(h->stdin_off, h->stdin_len, size))
		return -EINVAL;
	ret->code = (const uint8_t *)b + h->code_off;
	ret->stdin_data = h->has_stdin ? (const uint8_t *)b + h->stdin_off : NULL;
	pf = (const struct plan_file *)(b + sizeof(*h));
	for (i = 0; i < h->nfiles; i++) {
		const char *name = plan_str_at(b, size, pf[i].name_off);

		if (name == NULL || rules_input_name_check(name) < 0 ||
		    (pf[i].mode != 0644 && pf[i].mode != 0755) ||
		    !plan_range_ok(pf[i].data_off, pf[i].data_len, size))
			return -EINVAL;
		ret->files[i].name = name;
		ret->files[i].data = (const uint8_t *)b + pf[i].data_off;
		ret->files[i].len = pf[i].data_len;
		ret->files[i].mode = pf[i].mode;
	}
	ret->nfiles = h->nfiles;
	return 0;
}
