/* ps.c: the runs in progress a ps reply lists (airlock_ps_*). */
#include "airlock.h"
#include "export.h"
#include "ps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ps_entry {
	uint32_t run;
	uint32_t uid;
	int32_t pid;
	char *runtime;
	char *state;
	uint64_t elapsed_ms;
};

struct airlock_ps {
	struct ps_entry *runs;
	size_t nruns;
};

/* Free a list of runs. */
AIRLOCK_EXPORT void
airlock_ps_free(struct airlock_ps *ps)
{
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->nruns; i++) {
		free(ps->runs[i].runtime);
		free(ps->runs[i].state);
	}
	free(ps->runs);
	free(ps);
}

int
ps_from_proto(const struct proto_ps *pp, struct airlock_ps **ret)
{
	struct airlock_ps *ps;
	size_t i;

	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return -ENOMEM;
	if (pp->nruns > 0) {
		ps->runs = calloc(pp->nruns, sizeof(*ps->runs));
		if (ps->runs == NULL)
			goto fail;
	}
	/* nruns counts the entries whose strings are owned, so a failure frees exactly those. */
	for (i = 0; i < pp->nruns; i++) {
		const struct proto_ps_entry *p = &pp->runs[i];
		struct ps_entry *e = &ps->runs[i];

		e->run = p->run;
		e->uid = p->uid;
		e->pid = p->pid;
		e->elapsed_ms = p->elapsed_ms;
		e->runtime = strdup(p->runtime != NULL ? p->runtime : "");
		e->state = strdup(p->state != NULL ? p->state : "");
		ps->nruns = i + 1;
		if (e->runtime == NULL || e->state == NULL)
			goto fail;
	}
	*ret = ps;
	return 0;
fail:
	airlock_ps_free(ps);
	return -ENOMEM;
}

/* Look up entry i, or NULL. */
static const struct ps_entry *
ps_entry(const struct airlock_ps *ps, size_t i)
{
	if (ps == NULL || i >= ps->nruns)
		return NULL;
	return &ps->runs[i];
}

/* How many runs the list holds. */
AIRLOCK_EXPORT size_t
airlock_ps_count(const struct airlock_ps *ps)
{
	return ps != NULL ? ps->nruns : 0;
}

/* The daemon-wide run id of entry i. */
AIRLOCK_EXPORT uint32_t
airlock_ps_run_id(const struct airlock_ps *ps, size_t i)
{
	const struct ps_entry *e = ps_entry(ps, i);

	return e != NULL ? e->run : 0;
}

/* The uid that owns entry i. */
AIRLOCK_EXPORT uint32_t
airlock_ps_uid(const struct airlock_ps *ps, size_t i)
{
	const struct ps_entry *e = ps_entry(ps, i);

	return e != NULL ? e->uid : 0;
}

/* The pid the daemon reports for entry i. */
AIRLOCK_EXPORT int32_t
airlock_ps_pid(const struct airlock_ps *ps, size_t i)
{
	const struct ps_entry *e = ps_entry(ps, i);

	return e != NULL ? e->pid : 0;
}

/* The runtime of entry i. */
AIRLOCK_EXPORT const char *
airlock_ps_runtime(const struct airlock_ps *ps, size_t i)
{
	const struct ps_entry *e = ps_entry(ps, i);

	return e != NULL ? e->runtime : NULL;
}

/* The state of entry i ("queued" or "running"). */
AIRLOCK_EXPORT const char *
airlock_ps_state(const struct airlock_ps *ps, size_t i)
{
	const struct ps_entry *e = ps_entry(ps, i);

	return e != NULL ? e->state : NULL;
}

/* How long entry i has existed in the daemon, milliseconds. */
AIRLOCK_EXPORT uint64_t
airlock_ps_elapsed_ms(const struct airlock_ps *ps, size_t i)
{
	const struct ps_entry *e = ps_entry(ps, i);

	return e != NULL ? e->elapsed_ms : 0;
}
