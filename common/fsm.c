/* fsm.c: the lookup of a lifecycle's transition table (fsm.h). */
#include "fsm.h"

#include "nametab.h"

int
fsm_next(const struct fsm *f, int state, int event)
{
	int to;

	if (state < 0 || state >= f->nstates || event < 0 || event >= f->nevents)
		return -1;
	to = f->next[(size_t)state * (size_t)f->nevents + (size_t)event] - 1;
	/* 0 is "cannot happen"; an entry outside the states is a typo in the
	 * table, which must not become an index either. */
	if (to < 0 || to >= f->nstates)
		return -1;
	return to;
}

const char *
fsm_state_name(const struct fsm *f, int state)
{
	return nametab_get(f->state_names, (size_t)f->nstates, state, "invalid");
}

const char *
fsm_event_name(const struct fsm *f, int event)
{
	return nametab_get(f->event_names, (size_t)f->nevents, event, "invalid");
}
