/*
 * info.c: the info reply: what this daemon offers its caller (runtimes and
 * their packages, limits, the profiles the caller may use, the mounts its
 * runs can get), one builder per list. What it lists points into a struct
 * info_build that lives for the encoding.
 */
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "pypkgs.h"
#include "xalloc.h"

/* One row of names per profile: its mounts, allow_mounts, blocked_imports. */
struct client_info_names {
	const char *mounts[CONFIG_MOUNTS_MAX];
	const char *allow_mounts[CONFIG_MOUNTS_MAX];
	const char *blocked[PROTO_BLOCKED_IMPORTS_MAX];
};

/* The reply and the storage its lists point into. */
struct info_build {
	struct proto_info info;
	struct proto_profile profiles[PROTO_PROFILES_MAX];
	struct proto_mount_info mounts[CONFIG_MOUNTS_MAX];
	struct client_info_names *names; /* PROTO_PROFILES_MAX rows */
	/* The egress allow-lists' entries as text, lists[] pointing at them;
	 * used of them are taken. */
	char (*texts)[PROTO_ALLOW_ENTRY_MAX + 1];
	const char **lists;
	size_t used;
};

/* The names of the mounts of mask into out (at most CONFIG_MOUNTS_MAX); their count. */
static size_t
client_mount_names(const struct config *cfg, uint32_t mask, const char **out)
{
	size_t k, n = 0;

	for (k = 0; k < cfg->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (mask & (1U << k))
			out[n++] = cfg->mounts[k].name;
	return n;
}

/* The daemon, the caller's uid, defaults, ceilings and capacity. */
static void
info_daemon(struct proto_info *info, const struct daemon *d, uid_t uid)
{
	const struct config *cfg = d->cfg;

	info->daemon = "airlockd " AIRLOCK_VERSION;
	info->version = PROTO_VERSION;
	info->uid = (uint32_t)uid;
	info->defaults = cfg->defaults;
	info->ceilings = cfg->ceilings;
	info->resource_control = cgroup_kind_name(d->resource_control);
	/* What a user's parallelism is (docs/design-service.md). */
	info->max_runs = cfg->max_runs;
	info->max_runs_per_uid = cfg->max_runs_per_uid;
	info->max_interpreters = cfg->max_interpreters;
	info->max_interpreters_per_uid = cfg->max_interpreters_per_uid;
}

/* The runtimes, and the packages of those whose packages were looked for. */
static void
info_runtimes(struct proto_info *info, const struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nruntimes && i < PROTO_RUNTIMES_MAX; i++)
		info->runtimes[info->nruntimes++] = cfg->runtimes[i].name;
	for (i = 0; i < cfg->nruntimes && i < PROTO_RUNTIMES_MAX; i++) {
		struct proto_runtime_packages *p = &info->runtime_packages[info->nruntime_packages];

		if (pypkgs_scan(&cfg->runtimes[i], p->packages, &p->npackages)) {
			p->runtime = cfg->runtimes[i].name;
			info->nruntime_packages++;
		}
	}
}

/* Room for the allow-lists as listed: config_egress_finish() bounds them
 * all together, so that the reply fits a packet. */
static void
info_egress_alloc(struct info_build *b, const struct config *cfg)
{
	size_t i, nent = 0;

	for (i = 0; i < cfg->nprofiles && i < PROTO_PROFILES_MAX; i++)
		if (cfg->profiles[i].egress != NULL)
			nent += cfg->profiles[i].egress->nentries;
	if (nent > 0) {
		b->texts = xcalloc(nent, sizeof(*b->texts));
		b->lists = xcalloc(nent, sizeof(*b->lists));
	}
}

/* The entries of pol whose allow_private is want_private, as text, in order,
 * from b->lists[b->used] on; their count. */
static size_t
info_egress_list(struct info_build *b, const struct egress_policy *pol, bool want_private)
{
	size_t k, n = 0;

	for (k = 0; k < pol->nentries; k++)
		if (pol->entries[k].allow_private == want_private) {
			egress_entry_format(&pol->entries[k], b->texts[b->used],
					    sizeof(b->texts[b->used]));
			b->lists[b->used] = b->texts[b->used];
			b->used++;
			n++;
		}
	return n;
}

/* One profile the caller may use into e, row its row of names. */
static void
info_profile(struct info_build *b, const struct config *cfg, const struct config_profile *prof,
	     struct proto_profile *e, struct client_info_names *row)
{
	size_t k;

	memset(e, 0, sizeof(*e));
	e->name = prof->name;
	e->is_default = !strcmp(prof->name, cfg->default_profile);
	e->limits = prof->defaults;
	e->ceilings = prof->ceilings;
	e->network = prof->network_proxy ? "proxy" : "none";
	if (prof->network_proxy) {
		/* Listed entries first, then the private ones, each in
		 * order: two runs of lists[]. */
		e->allow_hosts = &b->lists[b->used];
		e->nallow_hosts = info_egress_list(b, prof->egress, false);
		e->allow_private_hosts = &b->lists[b->used];
		e->nallow_private_hosts = info_egress_list(b, prof->egress, true);
	}
	e->no_file_write = prof->no_file_write;
	e->no_subprocess = prof->no_subprocess;
	e->hidden_paths = (const char **)prof->hidden;
	e->nhidden_paths = prof->nhidden;
	/* config_listed_finish() bounds these lists together. */
	e->mounts = row->mounts;
	e->nmounts = client_mount_names(cfg, prof->mounts, row->mounts);
	e->allow_mounts = row->allow_mounts;
	e->nallow_mounts = client_mount_names(cfg, prof->allow_mounts, row->allow_mounts);
	for (k = 0; k < prof->nblocked_imports; k++)
		row->blocked[k] = prof->blocked_imports[k];
	e->blocked_imports = row->blocked;
	e->nblocked_imports = prof->nblocked_imports;
}

/* The profiles c may use; the mask of the mounts they name. */
static uint32_t
info_profiles(struct info_build *b, struct client *c, const struct config *cfg)
{
	uint32_t seen = 0;
	size_t i;

	b->info.profiles = b->profiles;
	b->names = xcalloc(PROTO_PROFILES_MAX, sizeof(*b->names));
	info_egress_alloc(b, cfg);
	for (i = 0; i < cfg->nprofiles && i < PROTO_PROFILES_MAX; i++) {
		const struct config_profile *prof = &cfg->profiles[i];
		size_t n = b->info.nprofiles;

		if (!client_may_use_profile(c, prof))
			continue;
		info_profile(b, cfg, prof, &b->profiles[n], &b->names[n]);
		seen |= prof->mounts | prof->allow_mounts;
		b->info.nprofiles++;
	}
	return seen;
}

/*
 * The mounts a run of the caller can get: its profiles' (seen) and every
 * runtime's. The target and whether it is a package tree, never the host
 * source: that is the administrator's layout, not the caller's business
 * (docs/security.md, "Named mounts").
 */
static void
info_mounts(struct info_build *b, const struct config *cfg, uint32_t seen)
{
	size_t i;

	for (i = 0; i < cfg->nruntimes; i++)
		seen |= cfg->runtimes[i].mounts;
	b->info.mounts = b->mounts;
	for (i = 0; i < cfg->nmounts && i < CONFIG_MOUNTS_MAX; i++)
		if (seen & (1U << i))
			b->mounts[b->info.nmounts++] = (struct proto_mount_info){
				.name = cfg->mounts[i].name,
				.target = cfg->mounts[i].target,
				.package = cfg->mounts[i].package,
			};
}

void
info_reply(struct client *c, uint32_t req_id)
{
	const struct daemon *d = client_daemon(c);
	struct info_build *b = xcalloc(1, sizeof(*b));
	struct proto_out out;
	int r;

	info_daemon(&b->info, d, client_uid(c));
	info_runtimes(&b->info, d->cfg);
	info_mounts(b, d->cfg, info_profiles(b, c, d->cfg));
	r = proto_encode_info(req_id, &b->info, &out);
	free(b->texts);
	free(b->lists);
	free(b->names);
	free(b);
	client_send_encoded(c, req_id, r, &out, "info");
}
