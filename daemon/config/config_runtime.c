/* config_runtime.c: [runtime NAME] and [mount NAME] sections, their finishers and look-ups
 * (what a reload changes: config_reload.c). */
#include "config_parse.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "rules.h"
#include "rootspec.h"

/*
 * Split the value of key into at most max words (config_split_words) for a
 * hook; a failure is recorded in p, naming key.
 */
static int
config_runtime_words(struct config_parse *p, const char *key, const char *value, char **words,
		     size_t max, size_t *ret_n)
{
	int r = config_split_words(value, words, max, ret_n);

	if (r == -E2BIG)
		return config_fail_at(p, -EINVAL, p->line, "%s: more than %zu words", key, max);
	if (r < 0)
		return config_fail_at(p, r, p->line, "out of memory");
	return 0;
}

/* Put the n words (owned) in the nslots slots (NULL-terminated, owned),
 * freeing what was there, or with error != 0 free the words: returns error. */
static int
config_runtime_words_put(char **slots, size_t nslots, char **words, size_t n, int error)
{
	size_t i;

	for (i = 0; error != 0 && i < n; i++)
		free(words[i]);
	for (i = 0; error == 0 && i < nslots; i++) {
		free(slots[i]);
		slots[i] = i < n ? words[i] : NULL;
	}
	return error;
}

/* Free a runtime's argv and clear everything but its name. */
void
config_runtime_clear(struct config_runtime *rt)
{
	config_runtime_words_put(rt->argv, CONFIG_RUNTIME_ARGV_MAX + 1, NULL, 0, 0);
	rt->argc = 0;
	rt->code_name[0] = '\0';
	rt->is_exec = false;
	rt->mounts = 0;
	config_runtime_words_put(rt->env, CONFIG_RUNTIME_ENV_MAX + 1, NULL, 0, 0);
	rt->nenv = 0;
	rt->cwd[0] = '\0';
	rt->prestart = false;
	rt->zygote = false;
	rt->language = RULES_LANG_OTHER;
}

/* Keep a list of [mount] names for mask, resolved once every section is read. */
int
config_key_mounts(struct config_parse *p, const char *key, const char *value, uint32_t *mask)
{
	struct config_pending_mounts *pm;

	if (p->npending == CONFIG_PENDING_MAX)
		return config_fail_at(p, -EINVAL, p->line, "too many mount lists");
	pm = &p->pending[p->npending];
	pm->value = strdup(value);
	if (pm->value == NULL)
		return config_fail_at(p, -ENOMEM, p->line, "out of memory");
	pm->mask = mask;
	pm->line = p->line;
	pm->key = key;
	p->npending++;
	*mask = 0;
	return 0;
}

/* [mount NAME] source, target = PATH: checked at the end (config_mounts_finish()). */
int
config_hook_mount_path(struct config_parse *p, const struct config_key *k, const char *value,
		       void *field)
{
	size_t idx = (size_t)(p->mnt - p->cfg->mounts);

	if (strlen(value) >= ROOTSPEC_PATH_MAX)
		return config_fail_at(p, -EINVAL, p->line, "%s: longer than %d bytes", k->name,
				      ROOTSPEC_PATH_MAX - 1);
	strcpy(field, value);
	if (k->name[0] == 's')
		p->mnt_source_line[idx] = p->line;
	else
		p->mnt_target_line[idx] = p->line;
	return 0;
}

/* [mount NAME] package = true|false. */
int
config_hook_package(struct config_parse *p, const struct config_key *k, const char *value,
		    void *field)
{
	if (config_parse_bool(value, field) < 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "package: expected true or false, got '%s'", value);
	return 0;
}

/* Is this a valid code file name: not empty, no '/', not "." or "..", printable? */
static bool
config_code_name_valid(const char *s)
{
	return strlen(s) < sizeof(((struct config_runtime *)NULL)->code_name) &&
	       rules_code_name_valid(s);
}

/*
 * env = KEY=VALUE ...: the runtime's environment, words split at blanks, each
 * a valid name (the request's rule) and a value; a request's entry of the
 * same name replaces it (plan_env_build).
 */
static int
config_key_runtime_env(struct config_parse *p, struct config_runtime *rt, const char *value)
{
	char *words[CONFIG_RUNTIME_ENV_MAX + 1];
	size_t n, i;
	int r;

	r = config_runtime_words(p, "env", value, words, CONFIG_RUNTIME_ENV_MAX, &n);
	if (r < 0)
		return r;
	for (i = 0; i < n; i++) {
		const char *eq = strchr(words[i], '=');

		if (eq == NULL || rules_env_name_check(words[i], (size_t)(eq - words[i])) < 0) {
			r = config_fail_at(p, -EINVAL, p->line,
					   "env: '%s' is not KEY=VALUE with KEY of [A-Za-z0-9_] "
					   "(not starting with a digit)",
					   words[i]);
			break;
		}
	}
	if (config_runtime_words_put(rt->env, CONFIG_RUNTIME_ENV_MAX + 1, words, n, r) < 0)
		return r;
	rt->nenv = n;
	return 0;
}

/* [runtime NAME] argv = WORDS: an absolute program, {code} exactly once. */
int
config_hook_argv(struct config_parse *p, const struct config_key *k, const char *value, void *field)
{
	struct config_runtime *rt = p->rt;
	char *argv[CONFIG_RUNTIME_ARGV_MAX + 1];
	size_t argc, i, ncode = 0;
	int r;

	r = config_runtime_words(p, "argv", value, argv, CONFIG_RUNTIME_ARGV_MAX, &argc);
	if (r < 0)
		return r;
	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "{code}"))
			ncode++;
	if (argc == 0 || argv[0][0] != '/')
		r = config_fail_at(p, -EINVAL, p->line,
				   "argv: the first word must be an absolute path");
	else if (ncode != 1)
		r = config_fail_at(p, -EINVAL, p->line,
				   "argv: must contain the word {code} exactly once");
	if (config_runtime_words_put(rt->argv, CONFIG_RUNTIME_ARGV_MAX + 1, argv, argc, r) < 0)
		return r;
	rt->argc = argc;
	p->rt_argv_line[rt - p->cfg->runtimes] = p->line;
	return 0;
}

/* [runtime NAME] code_name = a file name. */
int
config_hook_code_name(struct config_parse *p, const struct config_key *k, const char *value,
		      void *field)
{
	struct config_runtime *rt = p->rt;

	if (!config_code_name_valid(value))
		return config_fail_at(p, -EINVAL, p->line,
				      "code_name '%s': expected a file name (no '/', at "
				      "most %zu bytes)",
				      value, sizeof(rt->code_name) - 1);
	strcpy(rt->code_name, value);
	return 0;
}

/* [runtime NAME] prestart = true|false: given, so no default at the end. */
int
config_hook_prestart(struct config_parse *p, const struct config_key *k, const char *value,
		     void *field)
{
	if (config_parse_bool(value, &p->rt->prestart) < 0)
		return config_fail_at(p, -EINVAL, p->line, "prestart = %s: expected true or false",
				      value);
	p->rt_prestart_set[p->rt - p->cfg->runtimes] = true;
	return 0;
}

/* [runtime NAME] zygote = true|false: its line kept for the check that
 * the runtime pre-starts (config_runtimes_finish). */
int
config_hook_zygote(struct config_parse *p, const struct config_key *k, const char *value,
		   void *field)
{
	if (config_parse_bool(value, &p->rt->zygote) < 0)
		return config_fail_at(p, -EINVAL, p->line, "zygote = %s: expected true or false",
				      value);
	p->rt_zygote_line[p->rt - p->cfg->runtimes] = p->rt->zygote ? p->line : 0;
	return 0;
}

/* [runtime NAME] language = python|shell|other: given, so not guessed at the end. */
int
config_hook_language(struct config_parse *p, const struct config_key *k, const char *value,
		     void *field)
{
	if (rules_language_from_name(value, &p->rt->language) < 0)
		return config_fail_at(p, -EINVAL, p->line,
				      "language = %s: expected python, shell or other", value);
	p->rt_language_set[p->rt - p->cfg->runtimes] = true;
	return 0;
}

/*
 * What a runtime is when the file does not say: its program's language, by
 * argv[0]'s name or else by the name of the file it resolves to (a venv's
 * bin/python is a link to /usr/bin/python3.N; /usr/bin/py3 may be one
 * too). Never by the runtime's own name, which is a label the
 * administrator chose (issue 32: "python-x" running /bin/sh is no Python).
 */
static enum rules_language
config_runtime_guess(const struct config_runtime *rt)
{
	char real[PATH_MAX];
	enum rules_language lang;

	if (rt->is_exec || rt->argc == 0)
		return RULES_LANG_OTHER;
	lang = rules_program_language(rt->argv[0]);
	if (lang == RULES_LANG_OTHER && realpath(rt->argv[0], real) != NULL)
		lang = rules_program_language(real);
	return lang;
}

/* [runtime NAME] mounts = NAME[, ...]: config_key_mounts(). */
int
config_hook_runtime_mounts(struct config_parse *p, const struct config_key *k, const char *value,
			   void *field)
{
	return config_key_mounts(p, "mounts", value, field);
}

/* [runtime NAME] env = KEY=VALUE ...: config_key_runtime_env(). */
int
config_hook_env(struct config_parse *p, const struct config_key *k, const char *value, void *field)
{
	return config_key_runtime_env(p, p->rt, value);
}

/* [runtime NAME] cwd = /workspace[/...]. */
int
config_hook_cwd(struct config_parse *p, const struct config_key *k, const char *value, void *field)
{
	struct config_runtime *rt = p->rt;

	/* Under the workspace: made there by the code itself if missing
	 * (sandbox_code.c), so it is the code's, like the workspace. */
	if (strlen(value) >= sizeof(rt->cwd) ||
	    (strcmp(value, PLAN_WORKSPACE) != 0 &&
	     (strncmp(value, PLAN_WORKSPACE "/", sizeof(PLAN_WORKSPACE)) != 0 ||
	      rules_workspace_name_check(value + sizeof(PLAN_WORKSPACE)) < 0)))
		return config_fail_at(p, -EINVAL, p->line,
				      "cwd %s: expected %s or a normalised path beneath it, "
				      "under %zu bytes",
				      value, PLAN_WORKSPACE, sizeof(rt->cwd));
	strcpy(rt->cwd, value);
	return 0;
}

/* A runtime section ends: it must have set both argv and code_name. */
int
config_runtime_end(struct config_parse *p)
{
	struct config_runtime *rt = p->rt;

	if (rt == NULL)
		return 0;
	p->rt = NULL;
	if (rt->argc == 0)
		return config_fail_at(p, -EINVAL, p->rt_line, "[runtime %s] has no argv", rt->name);
	if (rt->code_name[0] == '\0')
		return config_fail_at(p, -EINVAL, p->rt_line, "[runtime %s] has no code_name",
				      rt->name);
	return 0;
}

/* Start a [mount NAME] section. */
int
config_mount_begin(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;

	if (!rules_mount_name_valid(name))
		return config_fail_at(p, -EINVAL, p->line,
				      "bad mount name '%s': expected 1 to %d of a-z, 0-9, '-', '_'",
				      name, PROTO_MOUNT_MAX);
	if (config_mount_find(cfg, name) >= 0)
		return config_fail_at(p, -EINVAL, p->line, "duplicate section [mount %s]", name);
	if (cfg->nmounts == CONFIG_MOUNTS_MAX)
		return config_fail_at(p, -EINVAL, p->line, "more than %d mounts",
				      CONFIG_MOUNTS_MAX);
	p->mnt = &cfg->mounts[cfg->nmounts];
	memset(p->mnt, 0, sizeof(*p->mnt));
	strcpy(p->mnt->name, name);
	p->mnt_line[cfg->nmounts] = p->line;
	cfg->nmounts++;
	return 0;
}

/* Start a [runtime NAME] section: a new runtime, or one replacing a built-in. */
int
config_runtime_begin(struct config_parse *p, const char *name)
{
	struct config *cfg = p->cfg;
	const struct config_slots slots = {"runtime",
					   cfg->runtimes,
					   sizeof(cfg->runtimes[0]),
					   offsetof(struct config_runtime, name),
					   &cfg->nruntimes,
					   CONFIG_RUNTIMES_MAX,
					   p->rt_from_file};
	size_t i;
	int r;

	if (!strcmp(name, "exec"))
		return config_fail_at(p, -EINVAL, p->line,
				      "[runtime exec] is built in and takes no template");
	r = config_section_slot(p, &slots, name, rules_runtime_name_valid(name), PROTO_RUNTIME_MAX,
				&i);
	if (r < 0)
		return r;
	config_runtime_clear(&cfg->runtimes[i]);
	p->rt_prestart_set[i] = false;
	p->rt_language_set[i] = false;
	p->rt_zygote_line[i] = 0;
	p->rt = &cfg->runtimes[i];
	p->rt_line = p->line;
	return 0;
}

/*
 * Every runtime's program must be inside the sandbox: under /usr, a
 * top-level directory the root takes from the host (/bin, /sbin, /lib*), or
 * a package tree of the runtime's own mounts. Else every run of it would
 * fail at "step exec" (the old airlockd.conf(5) example did); now the file
 * does, at its argv line.
 */
static int
config_runtimes_finish(struct config_parse *p)
{
	static const char *const tops[] = {"/usr",   "/bin",   "/sbin",	 "/lib",
					   "/lib32", "/lib64", "/libx32"};
	struct config *cfg = p->cfg;
	size_t i, j;

	for (i = 0; i < cfg->nruntimes; i++) {
		struct config_runtime *rt = &cfg->runtimes[i];
		bool inside = false;

		if (!p->rt_language_set[i])
			rt->language = config_runtime_guess(rt);
		/* prestart's default: yes for a python (the FIFO hand-off is
		 * checked for CPython only: docs/design-interpreters.md §1). */
		if (p->rt_from_file[i] && !p->rt_prestart_set[i])
			rt->prestart =
				!rt->is_exec && rt->argc > 0 && rt->language == RULES_LANG_PYTHON;
		/* A zygote serves the runs a pre-started interpreter would (the
		 * same eligibility, the same base environment): without prestart
		 * its runs would be unlike the runtime's other runs. */
		if (rt->zygote && (!rt->prestart || rt->language != RULES_LANG_PYTHON))
			return config_fail_at(p, -EINVAL, p->rt_zygote_line[i],
					      "[runtime %s] zygote = yes needs prestart = yes "
					      "and a python",
					      rt->name);
		if (rt->is_exec || rt->argc == 0)
			continue;
		for (j = 0; j < sizeof(tops) / sizeof(tops[0]) && !inside; j++)
			inside = rootspec_paths_overlap(rt->argv[0], tops[j]);
		for (j = 0; j < cfg->nmounts && !inside; j++)
			inside = (rt->mounts & (1U << j)) && cfg->mounts[j].package &&
				 rootspec_paths_overlap(rt->argv[0], cfg->mounts[j].target);
		if (!inside)
			return config_fail_at(p, -EINVAL, p->rt_argv_line[i],
					      "[runtime %s] argv[0] %s is not inside the sandbox: "
					      "add a [mount] with package = true to its mounts",
					      rt->name, rt->argv[0]);
	}
	return 0;
}

/*
 * The names every profile entry of info_ok lists (mounts, allow_mounts,
 * blocked_imports), all profiles together, within CONFIG_LISTED_BYTES_MAX:
 * with the allow-lists' own bound, the reply fits one packet.
 */
static int
config_listed_finish(struct config_parse *p)
{
	const struct config *cfg = p->cfg;
	size_t i, k, total = 0;

	for (i = 0; i < cfg->nprofiles; i++) {
		const struct config_profile *prof = &cfg->profiles[i];

		for (k = 0; k < cfg->nmounts; k++)
			total += (!!(prof->mounts & (1U << k)) +
				  !!(prof->allow_mounts & (1U << k))) *
				 (strlen(cfg->mounts[k].name) + 2);
		for (k = 0; k < prof->nblocked_imports; k++)
			total += strlen(prof->blocked_imports[k]) + 2;
		if (total > CONFIG_LISTED_BYTES_MAX)
			return config_fail_at(p, -EINVAL, p->lines.profile_lists[i],
					      "[profile %s]: the mounts, allow_mounts and "
					      "blocked_imports of all profiles together are longer "
					      "than %d bytes",
					      prof->name, CONFIG_LISTED_BYTES_MAX);
	}
	return 0;
}

/*
 * The [mount] sections once every section is read: each has a source that
 * passes rootspec_source_check() now (the error at its source line) and a
 * valid target; no two targets overlap. Then the lists that name them.
 */
int
config_mounts_finish(struct config_parse *p)
{
	struct config *cfg = p->cfg;
	char why[512], item[PROTO_MOUNT_MAX + 2];
	size_t i, j;
	int r;

	for (i = 0; i < cfg->nmounts; i++) {
		const struct config_mount *m = &cfg->mounts[i];

		if (m->source[0] == '\0' || m->target[0] == '\0')
			return config_fail_at(p, -EINVAL, p->mnt_line[i], "[mount %s] has no %s",
					      m->name, m->source[0] == '\0' ? "source" : "target");
		r = rootspec_source_check(m->source, why, sizeof(why));
		if (r < 0)
			return config_fail_at(p, r, p->mnt_source_line[i],
					      "[mount %s] source: %s: refused", m->name, why);
		r = rootspec_target_check(m->target, why, sizeof(why));
		if (r < 0)
			return config_fail_at(p, r, p->mnt_target_line[i], "[mount %s] %s", m->name,
					      why);
		for (j = 0; j < i; j++)
			if (rootspec_paths_overlap(m->target, cfg->mounts[j].target))
				return config_fail_at(p, -EINVAL, p->mnt_target_line[i],
						      "[mount %s] target %s overlaps [mount %s] "
						      "target %s",
						      m->name, m->target, cfg->mounts[j].name,
						      cfg->mounts[j].target);
	}
	/* A [mount] at or over a hidden path would put it back (phase two
	 * attaches the mounts after it hides): refused, whichever profile. */
	for (i = 0; i < cfg->nprofiles; i++)
		for (j = 0; j < cfg->profiles[i].nhidden; j++) {
			const char *h = cfg->profiles[i].hidden[j];
			size_t k;

			for (k = 0; k < cfg->nmounts; k++)
				if (rootspec_paths_overlap(h, cfg->mounts[k].target))
					return config_fail_at(
						p, -EINVAL, p->lines.profile_hidden[i][j],
						"[profile %s] hidden_paths: %s overlaps [mount %s] "
						"target %s",
						cfg->profiles[i].name, h, cfg->mounts[k].name,
						cfg->mounts[k].target);
		}
	for (i = 0; i < p->npending; i++) {
		const struct config_pending_mounts *pm = &p->pending[i];
		const char *s = pm->value;

		while ((r = config_list_next(p, pm->line, pm->key, &s, item, sizeof(item))) > 0) {
			int idx = config_mount_find(cfg, item);

			if (idx < 0)
				return config_fail_at(p, -EINVAL, pm->line,
						      "%s: no [mount %s] section", pm->key, item);
			*pm->mask |= 1U << idx;
		}
		if (r < 0)
			return r;
	}
	r = config_listed_finish(p);
	if (r < 0)
		return r;
	return config_runtimes_finish(p);
}

const struct config_runtime *
config_runtime_find(const struct config *cfg, const char *name)
{
	size_t i;

	if (cfg == NULL || name == NULL)
		return NULL;
	for (i = 0; i < cfg->nruntimes && i < CONFIG_RUNTIMES_MAX; i++)
		if (!strcmp(cfg->runtimes[i].name, name))
			return &cfg->runtimes[i];
	return NULL;
}

int
config_mount_find(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nmounts; i++)
		if (!strcmp(cfg->mounts[i].name, name))
			return (int)i;
	return -1;
}

int
config_mounts_resolve(const struct config *cfg, const struct config_profile *prof,
		      const struct config_runtime *rt, const char *const *asked, size_t n,
		      uint32_t *ret, size_t *ret_bad)
{
	uint32_t mask = prof->mounts | (rt != NULL ? rt->mounts : 0);
	uint32_t allowed = prof->allow_mounts | mask; /* asking for what it gets is fine */
	size_t i;

	for (i = 0; i < n; i++) {
		int idx = config_mount_find(cfg, asked[i]);

		if (idx < 0 || !(allowed & (1U << idx))) {
			*ret_bad = i;
			return idx < 0 ? -ENOENT : -EPERM;
		}
		mask |= 1U << idx;
	}
	*ret = mask;
	return 0;
}
