/* plan.c: pack a run into a sealed memfd, and read it back without allocating. */
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfd.h"
#include "rules.h"
#include "sandbox_fs_root.h"

/* A growing byte buffer for plan_build(). */
struct plan_buf {
	uint8_t *p;
	size_t len, cap;
};

static int
plan_buf_reserve(struct plan_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *np;

	if (more > PLAN_SIZE_MAX || b->len + more > PLAN_SIZE_MAX)
		return -E2BIG;
	while (cap < b->len + more)
		cap *= 2;
	if (cap == b->cap)
		return 0;
	np = realloc(b->p, cap);
	if (np == NULL)
		return -ENOMEM;
	memset(np + b->cap, 0, cap - b->cap);
	b->p = np;
	b->cap = cap;
	return 0;
}

/* Append bytes, returning their offset. */
static int
plan_buf_put(struct plan_buf *b, const void *data, size_t len, uint64_t *ret_off)
{
	int r = plan_buf_reserve(b, len + 1);

	if (r < 0)
		return r;
	if (len > 0)
		memcpy(b->p + b->len, data, len);
	*ret_off = b->len;
	b->len += len;
	return 0;
}

/* Append a NUL-terminated string, returning its offset. */
static int
plan_buf_str(struct plan_buf *b, const char *s, uint32_t *ret_off)
{
	uint64_t off;
	int r = plan_buf_put(b, s, strlen(s) + 1, &off);

	if (r < 0)
		return r;
	if (off > UINT32_MAX)
		return -E2BIG;
	*ret_off = (uint32_t)off;
	return 0;
}

int
plan_build(const struct plan_input *in, int *ret_fd)
{
	struct plan_buf b = {0};
	struct plan_hdr hdr = {0};
	struct plan_file *pf = NULL;
	size_t hdr_len, i;
	uint32_t off;
	int r;

	if (in->argc == 0 || in->argc > PLAN_ARGV_MAX || in->envc > PLAN_ENV_MAX ||
	    in->nfiles > PLAN_FILES_MAX || in->nhidden > PLAN_HIDDEN_MAX)
		return -EINVAL;
	hdr_len = sizeof(hdr) + in->nfiles * sizeof(struct plan_file);
	if (in->nfiles > 0) {
		pf = calloc(in->nfiles, sizeof(*pf));
		if (pf == NULL)
			return -ENOMEM;
	}
	r = plan_buf_reserve(&b, hdr_len);
	if (r < 0)
		goto out;
	b.len = hdr_len;
	hdr.magic = PLAN_MAGIC;
	hdr.argc = (uint32_t)in->argc;
	hdr.envc = (uint32_t)in->envc;
	hdr.nfiles = (uint32_t)in->nfiles;
	hdr.argv_off = (uint32_t)b.len;
	for (i = 0; i < in->argc; i++)
		if ((r = plan_buf_str(&b, in->argv[i], &off)) < 0)
			goto out;
	hdr.env_off = (uint32_t)b.len;
	for (i = 0; i < in->envc; i++)
		if ((r = plan_buf_str(&b, in->envp[i], &off)) < 0)
			goto out;
	if ((r = plan_buf_str(&b, in->code_name ? in->code_name : "", &hdr.code_name_off)) < 0)
		goto out;
	if ((r = plan_buf_str(&b, in->hostname, &hdr.hostname_off)) < 0)
		goto out;
	if ((r = plan_buf_str(
		     &b, in->cwd != NULL && strcmp(in->cwd, PLAN_WORKSPACE) != 0 ? in->cwd : "",
		     &hdr.cwd_off)) < 0)
		goto out;
	if (in->nhidden > 0)
		hdr.hidden_off = (uint32_t)b.len;
	for (i = 0; i < in->nhidden; i++)
		if ((r = plan_buf_str(&b, in->hidden[i], &off)) < 0)
			goto out;
	hdr.nhidden = (uint32_t)in->nhidden;
	if ((r = plan_buf_put(&b, in->code, in->code_len, &hdr.code_off)) < 0)
		goto out;
	hdr.code_len = in->code_len;
	hdr.has_stdin = in->stdin_data != NULL;
	if ((r = plan_buf_put(&b, in->stdin_data, in->stdin_len, &hdr.stdin_off)) < 0)
		goto out;
	hdr.stdin_len = in->stdin_len;
	for (i = 0; i < in->nfiles; i++) {
		pf[i].mode = in->file_mode != NULL ? in->file_mode[i] : 0644;
		if (pf[i].mode != 0644 && pf[i].mode != 0755) {
			r = -EINVAL;
			goto out;
		}
		if ((r = plan_buf_str(&b, in->file_names[i], &pf[i].name_off)) < 0)
			goto out;
		if ((r = plan_buf_put(&b, in->file_data[i], in->file_len[i], &pf[i].data_off)) < 0)
			goto out;
		pf[i].data_len = in->file_len[i];
	}
	memcpy(hdr.limits, in->limits->v, sizeof(hdr.limits));
	hdr.flags = in->flags;
	hdr.egress_port = (in->flags & PLAN_F_EGRESS) ? in->egress_port : 0;
	hdr.mounts = in->mounts;
	hdr.rootspec_gen = in->rootspec_gen;
	memcpy(b.p, &hdr, sizeof(hdr));
	if (in->nfiles > 0)
		memcpy(b.p + sizeof(hdr), pf, in->nfiles * sizeof(struct plan_file));
	r = memfd_sealed_create("airlock-plan", b.p, b.len, ret_fd);
out:
	free(pf);
	free(b.p);
	return r;
}

static const char *const plan_base_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	/* Home, caches and configuration outside the workspace: what tools
	 * keep there (pip, matplotlib's font cache, .config) must not take the
	 * artifact slots. The request's env may name others. */
	"HOME=" PLAN_HOME,
	"XDG_CACHE_HOME=" PLAN_HOME "/.cache",
	"XDG_CONFIG_HOME=" PLAN_HOME "/.config",
	"XDG_DATA_HOME=" PLAN_HOME "/.local/share",
	"XDG_STATE_HOME=" PLAN_HOME "/.local/state",
	"MPLCONFIGDIR=" PLAN_HOME "/.config/matplotlib",
	/* No display in a sandbox: matplotlib draws to files (PNG, SVG). */
	"MPLBACKEND=Agg",
	"LANG=C.UTF-8",
	"TMPDIR=/tmp",
	"OPENBLAS_NUM_THREADS=1",
	"USER=sandbox",
};

/* Put kv ("KEY=VALUE", key kl bytes) into env, replacing the same key. */
static void
plan_env_put(struct plan_env *env, const char *kv, size_t kl)
{
	size_t j;

	for (j = 0; j < env->envc; j++)
		if (strncmp(env->envp[j], kv, kl + 1) == 0)
			break;
	env->envp[j] = kv;
	if (j == env->envc)
		env->envc++;
}

int
plan_env_build(struct plan_env *ret, const char *const *rt_env, size_t nrt,
	       const struct proto_env *env, size_t nenv)
{
	size_t i, nbase = sizeof(plan_base_env) / sizeof(plan_base_env[0]);

	memset(ret, 0, sizeof(*ret));
	if (nenv > PROTO_ENV_MAX || nrt > PLAN_ENV_RUNTIME_MAX)
		return -E2BIG;
	for (i = 0; i < nbase; i++)
		ret->envp[ret->envc++] = plan_base_env[i];
	for (i = 0; i < nrt; i++) {
		const char *eq = strchr(rt_env[i], '=');

		if (eq == NULL || eq == rt_env[i]) {
			plan_env_free(ret);
			return -EINVAL;
		}
		plan_env_put(ret, rt_env[i], (size_t)(eq - rt_env[i]));
	}
	for (i = 0; i < nenv; i++) {
		size_t kl = strlen(env[i].key);
		char *kv;

		if (kl == 0 || strchr(env[i].key, '=') != NULL) {
			plan_env_free(ret);
			return -EINVAL;
		}
		if (asprintf(&kv, "%s=%s", env[i].key, env[i].value) < 0) {
			plan_env_free(ret);
			return -ENOMEM;
		}
		ret->owned[ret->nowned++] = kv;
		plan_env_put(ret, kv, kl);
	}
	ret->envp[ret->envc] = NULL;
	return 0;
}

int
plan_env_proxy(struct plan_env *env, uint16_t port)
{
	static const char *const names[PLAN_PROXY_ENV_MAX] = {
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
		"http_proxy", "https_proxy", "all_proxy", "no_proxy",
	};
	size_t i, j;

	for (i = 0; i < PLAN_PROXY_ENV_MAX; i++) {
		size_t kl = strlen(names[i]);
		char *kv;
		int n;

		for (j = 0; j < env->envc; j++)
			if (strncmp(env->envp[j], names[i], kl) == 0 && env->envp[j][kl] == '=')
				break;
		if (j < env->envc)
			continue; /* the request's */
		if (i % 4 == 3)
			n = asprintf(&kv, "%s=localhost,127.0.0.1,::1", names[i]);
		else
			n = asprintf(&kv, "%s=http://127.0.0.1:%u", names[i], port);
		if (n < 0)
			return -ENOMEM;
		env->owned[env->nowned++] = kv;
		env->envp[env->envc++] = kv;
	}
	env->envp[env->envc] = NULL;
	return 0;
}

void
plan_env_free(struct plan_env *env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; i < env->nowned; i++)
		free(env->owned[i]);
	memset(env, 0, sizeof(*env));
}

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
