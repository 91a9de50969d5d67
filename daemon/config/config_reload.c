/*
 * config_reload.c: what a reload changes for a live session's sandbox
 * (config_sandbox_changed(), asked by the frontend): two configs' profile,
 * runtime and mounts compared by what they bind, never by index. Nothing
 * of config/ calls it: it reads the profile, runtime and egress files'
 * look-ups only.
 */
#include "config_parse.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Is mount k of a the same (name, source, target, package) as one of n's in mask? */
static bool
config_mount_in(const struct config_mount *m, const struct config *n, uint32_t mask)
{
	size_t k;

	for (k = 0; k < n->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if ((mask & (1U << k)) && !strcmp(n->mounts[k].name, m->name) &&
		    !strcmp(n->mounts[k].source, m->source) &&
		    !strcmp(n->mounts[k].target, m->target) && n->mounts[k].package == m->package)
			return true;
	return false;
}

/* The mounts of mask a under o and of mask b under n: the same set? By
 * name and what they bind, never by bit: a reload may renumber them. */
static bool
config_mounts_same(const struct config *o, uint32_t a, const struct config *n, uint32_t b)
{
	size_t k, ca = 0, cb = 0;

	for (k = 0; k < o->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (a & (1U << k)) {
			if (!config_mount_in(&o->mounts[k], n, b))
				return false;
			ca++;
		}
	for (k = 0; k < n->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (b & (1U << k))
			cb++;
	return ca == cb;
}

/* Two NULL-terminated string vectors the same? */
static bool
config_strv_same(char *const *a, char *const *b)
{
	size_t i;

	for (i = 0; a[i] != NULL && b[i] != NULL; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return a[i] == NULL && b[i] == NULL;
}

/* Something differs: note it, and append item to why (", "-separated). */
static void
config_why_add(bool *changed, char *why, size_t whylen, const char *item)
{
	size_t len;

	*changed = true;
	if (why == NULL || whylen == 0)
		return;
	len = strnlen(why, whylen);
	if (len + 1 >= whylen)
		return;
	snprintf(why + len, whylen - len, "%s%s", len > 0 ? ", " : "", item);
}

bool
config_sandbox_changed(const struct config *o, const struct config *n, const char *profile,
		       const char *runtime, char *why, size_t whylen)
{
	const struct config_profile *op = config_profile_find(o, profile);
	const struct config_profile *np = config_profile_find(n, profile);
	const struct config_runtime *ort = config_runtime_find(o, runtime);
	const struct config_runtime *nrt = config_runtime_find(n, runtime);
	bool changed = false;
	size_t i;

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (op == NULL || np == NULL) {
		config_why_add(&changed, why, whylen, "the profile is gone");
	} else {
		if (!config_mounts_same(o, op->mounts, n, np->mounts))
			config_why_add(&changed, why, whylen, "mounts");
		if (op->network_proxy != np->network_proxy)
			config_why_add(&changed, why, whylen, "network");
		else if (!config_egress_same(op->network_proxy ? op->egress : NULL,
					     np->network_proxy ? np->egress : NULL))
			config_why_add(&changed, why, whylen, "allow-list");
		if (op->no_file_write != np->no_file_write)
			config_why_add(&changed, why, whylen, "file_write");
		if (op->no_subprocess != np->no_subprocess)
			config_why_add(&changed, why, whylen, "subprocess");
		if (op->background_processes != np->background_processes)
			config_why_add(&changed, why, whylen, "background_processes");
		if (op->nhidden != np->nhidden)
			config_why_add(&changed, why, whylen, "hidden_paths");
		else
			for (i = 0; i < op->nhidden && i < CONFIG_HIDDEN_MAX; i++)
				if (strcmp(op->hidden[i], np->hidden[i]) != 0) {
					config_why_add(&changed, why, whylen, "hidden_paths");
					break;
				}
		if (memcmp(&op->defaults, &np->defaults, sizeof(op->defaults)) != 0 ||
		    memcmp(&op->ceilings, &np->ceilings, sizeof(op->ceilings)) != 0)
			config_why_add(&changed, why, whylen, "limits");
	}
	if (ort == NULL || nrt == NULL)
		config_why_add(&changed, why, whylen, "the runtime is gone");
	else if (ort->is_exec != nrt->is_exec || !config_strv_same(ort->argv, nrt->argv) ||
		 !config_strv_same(ort->env, nrt->env) || strcmp(ort->cwd, nrt->cwd) != 0 ||
		 strcmp(ort->code_name, nrt->code_name) != 0 ||
		 !config_mounts_same(o, ort->mounts, n, nrt->mounts))
		config_why_add(&changed, why, whylen, "runtime");
	return changed;
}
