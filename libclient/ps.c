/* ps.c: the runs in progress a ps reply lists (airlock_ps_*). */
#include "airlock.h"
#include "export.h"
#include "getter.h"
#include "list.h"
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
	uint64_t more; /* runs the daemon left out (its reply's cap) */
};

/* Entry e from decoded entry p (list_type.conv; runtime and state are
 * owned). */
static void
ps_entry_from_proto(void *dst, const void *src)
{
	const struct proto_ps_entry *p = src;
	struct ps_entry *e = dst;

	e->run = p->run;
	e->uid = p->uid;
	e->pid = p->pid;
	e->elapsed_ms = p->elapsed_ms;
}

static const struct list_type ps_list =
	LIST_TYPE(struct airlock_ps, runs, nruns, struct proto_ps_entry, ps_entry_from_proto,
		  LIST_OWNED(struct ps_entry, runtime, struct proto_ps_entry, runtime),
		  LIST_OWNED(struct ps_entry, state, struct proto_ps_entry, state));

/* Free a list of runs. */
LIST_FREE(airlock_ps_free, struct airlock_ps, ps_list)

LIST_FROM_PROTO_MORE(ps_from_proto, struct airlock_ps, ps_list, struct proto_ps, runs, nruns, more)

/* How many runs the list holds. */
GETTER(size_t, airlock_ps_count, struct airlock_ps, nruns, 0)

/* How many runs the caller may see the daemon left out of the list. */
GETTER(uint64_t, airlock_ps_more, struct airlock_ps, more, 0)

/* The daemon-wide run id of entry i. */
GETTER_AT(uint32_t, airlock_ps_run_id, struct airlock_ps, nruns, runs, run, 0)

/* The uid that owns entry i. */
GETTER_AT(uint32_t, airlock_ps_uid, struct airlock_ps, nruns, runs, uid, 0)

/* The pid the daemon reports for entry i. */
GETTER_AT(int32_t, airlock_ps_pid, struct airlock_ps, nruns, runs, pid, 0)

/* The runtime of entry i. */
GETTER_AT(const char *, airlock_ps_runtime, struct airlock_ps, nruns, runs, runtime, NULL)

/* The state of entry i ("queued" or "running"). */
GETTER_AT(const char *, airlock_ps_state, struct airlock_ps, nruns, runs, state, NULL)

/* How long entry i has existed in the daemon, milliseconds. */
GETTER_AT(uint64_t, airlock_ps_elapsed_ms, struct airlock_ps, nruns, runs, elapsed_ms, 0)
