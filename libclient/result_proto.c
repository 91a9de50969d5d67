/* result_proto.c: results and info objects built from decoded messages, so
 * that they outlive the message (result_from_proto, result_info_from_proto). */
#include "airlock.h"
#include "result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy at most max of n strings (checked by the decoder; NULL becomes "")
 * into *ret, counting each copy in *ret_n: on failure the ones copied are
 * freed with their owner. */
static int
info_strv_copy(const char *const *v, size_t n, size_t max, char ***ret, size_t *ret_n)
{
	size_t k;

	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (*ret == NULL)
		return -ENOMEM;
	for (k = 0; k < n && k < max; k++) {
		(*ret)[k] = strdup(v[k] != NULL ? v[k] : "");
		if ((*ret)[k] == NULL)
			return -ENOMEM; /* the ones copied are freed with the info */
		(*ret_n)++;
	}
	return 0;
}

/* A profile's network mode and allow-lists, copied. */
static int
info_profile_network(const struct proto_profile *pp, struct info_profile *p)
{
	size_t n = pp->nallow_hosts + pp->nallow_private_hosts, k;

	p->proxy = pp->network != NULL && !strcmp(pp->network, "proxy");
	if (!p->proxy || n == 0)
		return 0;
	p->allow = calloc(n, sizeof(*p->allow));
	if (p->allow == NULL)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		const char *s = k < pp->nallow_hosts
					? pp->allow_hosts[k]
					: pp->allow_private_hosts[k - pp->nallow_hosts];

		p->allow[k] = strdup(s);
		if (p->allow[k] == NULL)
			return -ENOMEM;
		p->nallow++;
	}
	p->npublic = pp->nallow_hosts;
	return 0;
}

/* Duplicate a possibly NULL string; *ret is NULL for NULL. */
static int
result_strdup(const char *s, char **ret)
{
	char *copy = NULL;

	if (s != NULL) {
		copy = strdup(s);
		if (copy == NULL)
			return -ENOMEM;
	}
	*ret = copy;
	return 0;
}

/* Copy n decoded artifacts (or display items) into *ret, *ret_n. */
static int
result_artifacts_take(const struct proto_artifact *pa, size_t n, struct result_artifact **ret,
		      size_t *ret_n)
{
	struct result_artifact *a;
	size_t i, done = 0;
	int r = 0;

	if (n == 0)
		return 0;
	a = calloc(n, sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r = result_strdup(pa[i].name != NULL ? pa[i].name : "", &a[i].name);
		if (r < 0)
			break;
		done++;
		a[i].size = pa[i].size;
		a[i].truncated = pa[i].truncated;
		r = result_bytes_take(&pa[i].data, &a[i].data);
		if (r < 0)
			break;
	}
	if (r < 0) {
		result_artifacts_free(a, done);
		return r;
	}
	*ret = a;
	*ret_n = n;
	return 0;
}

/* result.network, copied; the decoder checked every count and length
 * against these bounds. */
static int
result_network_from_proto(const struct proto_network *pn, struct result_network **ret)
{
	struct result_network *n = calloc(1, sizeof(*n));
	size_t i;

	if (n == NULL)
		return -ENOMEM;
	n->figures[AIRLOCK_NET_BYTES_UP] = pn->bytes_up;
	n->figures[AIRLOCK_NET_BYTES_DOWN] = pn->bytes_down;
	n->figures[AIRLOCK_NET_CONNECTIONS] = pn->connections;
	n->figures[AIRLOCK_NET_REFUSED] = pn->refused;
	for (i = 0; i < pn->ncontacted && i < PROTO_NET_REPORT_MAX; i++)
		snprintf(n->contacted[n->ncontacted++], sizeof(n->contacted[0]), "%s",
			 pn->contacted[i]);
	for (i = 0; i < pn->nrefusals && i < PROTO_NET_REPORT_MAX; i++) {
		snprintf(n->refusals[i].host, sizeof(n->refusals[0].host), "%s",
			 pn->refusals[i].host);
		snprintf(n->refusals[i].reason, sizeof(n->refusals[0].reason), "%s",
			 pn->refusals[i].reason);
		n->nrefusals++;
	}
	*ret = n;
	return 0;
}

/* result.tool_calls and advisories, copied into res. */
static int
result_calls_from_proto(const struct proto_result *pr, struct airlock_result *res)
{
	size_t i;

	res->tool_calls_omitted = pr->tool_calls_omitted;
	if (pr->ntool_calls > 0) {
		res->tool_calls = calloc(pr->ntool_calls, sizeof(*res->tool_calls));
		if (res->tool_calls == NULL)
			return -ENOMEM;
		/* The decoder bounded the count, the names and the outcomes. */
		for (i = 0; i < pr->ntool_calls; i++) {
			snprintf(res->tool_calls[i].name, sizeof(res->tool_calls[i].name), "%s",
				 pr->tool_calls[i].tool);
			res->tool_calls[i].outcome = pr->tool_calls[i].outcome;
			res->tool_calls[i].ms = pr->tool_calls[i].ms;
		}
		res->ntool_calls = pr->ntool_calls;
	}
	if (pr->nadvisories > 0) {
		res->advisories = calloc(pr->nadvisories, sizeof(*res->advisories));
		if (res->advisories == NULL)
			return -ENOMEM;
		/* The decoder bounded the count and each length. */
		for (i = 0; i < pr->nadvisories && i < PROTO_ADVISORIES_MAX; i++)
			snprintf(res->advisories[res->nadvisories++], sizeof(res->advisories[0]),
				 "%s", pr->advisories[i]);
	}
	return 0;
}

/* The outputs and the files a run left: stdout, stderr, artifacts, and a
 * cell's value and rich outputs. */
static int
result_outputs_from_proto(const struct proto_result *pr, struct airlock_result *res)
{
	size_t i;
	int r;

	for (i = 0; i < 2; i++) {
		r = result_bytes_take(&pr->out[i].data, &res->out[i].data);
		if (r < 0)
			return r;
		res->out[i].total = pr->out[i].total;
		res->out[i].truncated = pr->out[i].truncated;
	}
	res->artifacts_omitted = pr->artifacts_omitted;
	res->artifacts_omitted_bytes = pr->artifacts_omitted_bytes;
	r = result_artifacts_take(pr->artifacts, pr->nartifacts, &res->artifacts, &res->nartifacts);
	if (r < 0)
		return r;
	/* A cell's rich outputs, or a python run's figures (issue 30). */
	r = result_artifacts_take(pr->display, pr->ndisplay, &res->display, &res->ndisplay);
	if (r < 0)
		return r;
	res->cell = pr->cell;
	if (pr->cell == 0)
		return 0;
	res->state = pr->state != NULL && strcmp(pr->state, "kept") == 0 ? AIRLOCK_CELL_KEPT
									 : AIRLOCK_CELL_LOST;
	r = result_strdup(pr->value, &res->value);
	if (r < 0)
		return r;
	/* The value's items are display items: a bit past them is a bad reply. */
	if (pr->ndisplay < 32 && (pr->value_display >> pr->ndisplay) != 0)
		return -EPROTO;
	res->value_display = pr->value_display;
	/* The exception's three come together (a daemon sends evalue and
	 * traceback with ename), so that a client reads all or none. */
	res->restarted = pr->restarted;
	if (pr->ename != NULL) {
		if (result_strdup(pr->ename, &res->ename) < 0 ||
		    result_strdup(pr->evalue != NULL ? pr->evalue : "", &res->evalue) < 0 ||
		    result_strdup(pr->traceback != NULL ? pr->traceback : "", &res->traceback) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Build a result that outlives the decoded message. */
int
result_from_proto(const struct proto_result *pr, struct airlock_result **ret)
{
	struct airlock_result *res = calloc(1, sizeof(*res));
	int r;

	if (res == NULL)
		return -ENOMEM;
	res->outcome = (unsigned)pr->outcome < PROTO_OUTCOME_COUNT_
			       ? (enum airlock_outcome)pr->outcome
			       : AIRLOCK_OUTCOME_ERROR;
	res->exit_code = res->outcome == AIRLOCK_OUTCOME_EXITED ? pr->exit_code : 0;
	res->signal = res->outcome == AIRLOCK_OUTCOME_SIGNALED ? pr->signal : 0;
	res->wall_ms = pr->wall_ms;
	res->cpu_ms = pr->cpu_ms;
	res->memory_peak_bytes = pr->memory_peak_bytes;
	res->queued_ms = pr->queued_ms;
	r = result_outputs_from_proto(pr, res);
	if (r == 0)
		r = result_strdup(pr->error, &res->error);
	if (r == 0 && pr->network != NULL)
		r = result_network_from_proto(pr->network, &res->network);
	if (r == 0)
		r = result_calls_from_proto(pr, res);
	if (r == 0)
		*ret = res;
	else
		airlock_result_free(res);
	return r;
}

/* info.runtime_packages as one "numpy,pandas" string per runtime listed
 * (info->packages[j] for info->runtimes[j]); the first entry wins. */
static int
info_packages_from_proto(const struct proto_info *pi, struct airlock_info *info)
{
	size_t i;

	/* calloc(0, ...) may answer NULL, which is no failure (here and below). */
	info->packages = calloc(info->nruntimes, sizeof(*info->packages));
	if (info->packages == NULL && info->nruntimes > 0)
		return -ENOMEM;
	for (i = 0; i < pi->nruntime_packages && i < PROTO_RUNTIMES_MAX; i++) {
		const struct proto_runtime_packages *p = &pi->runtime_packages[i];
		size_t j, k, len = 1;
		char *s;

		/* Only for a runtime the reply lists; the first entry wins. */
		for (j = 0; j < info->nruntimes; j++)
			if (strcmp(info->runtimes[j], p->runtime) == 0)
				break;
		if (j == info->nruntimes || info->packages[j] != NULL)
			continue;
		for (k = 0; k < p->npackages; k++)
			len += strlen(p->packages[k]) + 1;
		s = malloc(len);
		if (s == NULL)
			return -ENOMEM;
		s[0] = '\0';
		for (k = 0; k < p->npackages; k++) {
			if (k > 0)
				strcat(s, ",");
			strcat(s, p->packages[k]);
		}
		info->packages[j] = s;
	}
	return 0;
}

/* One profile of info.profiles into p; what it copied is freed with the
 * info on failure too. */
static int
info_profile_from_proto(const struct proto_profile *pp, struct info_profile *p)
{
	const struct {
		const char *const *v;
		size_t n;
	} lists[] = {
		[AIRLOCK_PROFILE_MOUNTS] = {pp->mounts, pp->nmounts},
		[AIRLOCK_PROFILE_ALLOW_MOUNTS] = {pp->allow_mounts, pp->nallow_mounts},
		[AIRLOCK_PROFILE_BLOCKED_IMPORTS] = {pp->blocked_imports, pp->nblocked_imports},
		[AIRLOCK_PROFILE_HIDDEN_PATHS] = {pp->hidden_paths, pp->nhidden_paths},
	};
	size_t l;
	int r;

	/* The decoder checked the name: 1 to PROTO_PROFILE_MAX bytes. */
	strcpy(p->name, pp->name);
	p->is_default = pp->is_default;
	memcpy(p->limits, pp->limits.v, sizeof(p->limits));
	memcpy(p->ceilings, pp->ceilings.v, sizeof(p->ceilings));
	p->no_file_write = pp->no_file_write;
	p->no_subprocess = pp->no_subprocess;
	r = info_profile_network(pp, p);
	for (l = 0; r == 0 && l <= AIRLOCK_PROFILE_HIDDEN_PATHS; l++)
		r = info_strv_copy(lists[l].v, lists[l].n, SIZE_MAX, &p->lists[l], &p->nlists[l]);
	return r;
}

/* info.profiles and info.mounts, copied into info. */
static int
info_lists_from_proto(const struct proto_info *pi, struct airlock_info *info)
{
	size_t i;
	int r;

	info->profiles = calloc(pi->nprofiles, sizeof(*info->profiles));
	if (info->profiles == NULL && pi->nprofiles > 0)
		return -ENOMEM;
	for (i = 0; i < pi->nprofiles && i < PROTO_PROFILES_MAX; i++) {
		info->nprofiles++;
		r = info_profile_from_proto(&pi->profiles[i], &info->profiles[i]);
		if (r < 0)
			return r;
	}
	info->mounts = calloc(pi->nmounts, sizeof(*info->mounts));
	if (info->mounts == NULL && pi->nmounts > 0)
		return -ENOMEM;
	/* The decoder checked each name and the target's length. */
	for (i = 0; i < pi->nmounts && i < PROTO_INFO_MOUNTS_MAX; i++) {
		struct info_mount *mt = &info->mounts[info->nmounts++];

		snprintf(mt->name, sizeof(mt->name), "%s", pi->mounts[i].name);
		snprintf(mt->target, sizeof(mt->target), "%s", pi->mounts[i].target);
		mt->package = pi->mounts[i].package;
	}
	return 0;
}

/* Build an info object that outlives the decoded message. */
int
result_info_from_proto(const struct proto_info *pi, struct airlock_info **ret)
{
	struct airlock_info *info;
	int r = -ENOMEM;

	info = calloc(1, sizeof(*info));
	if (info == NULL)
		return -ENOMEM;
	info->daemon = strdup(pi->daemon != NULL ? pi->daemon : "");
	if (info->daemon == NULL)
		goto out;
	info->version = pi->version;
	info->uid = pi->uid;
	memcpy(info->defaults, pi->defaults.v, sizeof(info->defaults));
	memcpy(info->ceilings, pi->ceilings.v, sizeof(info->ceilings));
	info->capacity[AIRLOCK_CAPACITY_RUNS] = pi->max_runs;
	info->capacity[AIRLOCK_CAPACITY_RUNS_PER_UID] = pi->max_runs_per_uid;
	info->capacity[AIRLOCK_CAPACITY_INTERPRETERS] = pi->max_interpreters;
	info->capacity[AIRLOCK_CAPACITY_INTERPRETERS_PER_UID] = pi->max_interpreters_per_uid;
	r = result_strdup(pi->resource_control, &info->resource_control);
	if (r == 0)
		r = info_strv_copy((const char *const *)pi->runtimes, pi->nruntimes,
				   PROTO_RUNTIMES_MAX, &info->runtimes, &info->nruntimes);
	if (r == 0)
		r = info_packages_from_proto(pi, info);
	if (r == 0)
		r = info_lists_from_proto(pi, info);
	if (r < 0)
		goto out;
	*ret = info;
	info = NULL;
out:
	airlock_info_free(info);
	return r;
}
