/* plan_build.c: pack a run into a sealed memfd (the frontend); the
 * supervisor reads it back with plan_parse.c. */
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfd.h"

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
	    in->nfiles > PLAN_FILES_MAX || in->nhidden > PLAN_HIDDEN_MAX ||
	    (in->stdin_data == NULL && in->stdin_len > 0) || (in->code == NULL && in->code_len > 0))
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
plan_env_set(struct plan_env *env, const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (eq == NULL || eq == kv)
		return -EINVAL;
	if (env->envc >= PLAN_ENV_MAX)
		return -E2BIG;
	plan_env_put(env, kv, (size_t)(eq - kv));
	env->envp[env->envc] = NULL;
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
