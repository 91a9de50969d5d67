/* spawnref.c: the registry of spawn keys and their owners (spawnref.h). */
#include "spawnref.h"
#include "uidpool.h"

#include <errno.h>
#include <stdlib.h>

void
spawnrefs_init(struct spawnrefs *t, struct uidpool *uids)
{
	TAILQ_INIT(&t->list);
	t->next_key = 0;
	t->n = 0;
	t->uids = uids;
}

struct spawnref *
spawnref_find(const struct spawnrefs *t, uint32_t key)
{
	struct spawnref *ref;

	if (key == 0)
		return NULL;
	TAILQ_FOREACH(ref, &t->list, entry)
	if (ref->key == key)
		return ref;
	return NULL;
}

/* Register owner under a new key (*ret: the new reference); 0, -ENOSPC or
 * -ENOMEM. */
static int
spawnref_new(struct spawnrefs *t, enum spawnref_kind kind, void *owner, struct spawnref **ret)
{
	struct spawnref *ref;
	uint32_t key;

	/* Fewer refs than keys are alive (each holds a uid slot or a run), so
	 * the search ends; a wrapped counter skips 0 and keys in use. */
	if (t->n == UINT32_MAX - 1)
		return -ENOSPC;
	do
		key = ++t->next_key;
	while (key == 0 || spawnref_find(t, key) != NULL);
	ref = calloc(1, sizeof(*ref));
	if (ref == NULL)
		return -ENOMEM;
	ref->key = key;
	ref->kind = kind;
	ref->owner = owner;
	TAILQ_INSERT_TAIL(&t->list, ref, entry);
	t->n++;
	*ret = ref;
	return 0;
}

int
spawnref_add(struct spawnrefs *t, enum spawnref_kind kind, void *owner, uint32_t *ret_key)
{
	struct spawnref *ref;
	int r = spawnref_new(t, kind, owner, &ref);

	if (r < 0)
		return r;
	*ret_key = ref->key;
	return 0;
}

int
spawnref_add_slot(struct spawnrefs *t, enum spawnref_kind kind, void *owner, uint32_t *ret_key,
		  uint32_t *ret_slot)
{
	struct spawnref *ref;
	uint32_t slot;
	int r;

	r = uidpool_get(t->uids, &slot);
	if (r < 0)
		return r;
	r = spawnref_new(t, kind, owner, &ref);
	if (r < 0) {
		uidpool_put(t->uids, slot);
		return r;
	}
	ref->slot = slot;
	ref->holds_slot = true;
	*ret_key = ref->key;
	*ret_slot = slot;
	return 0;
}

int
spawnref_hand(struct spawnrefs *t, uint32_t key, enum spawnref_kind kind, void *owner)
{
	struct spawnref *ref = spawnref_find(t, key);

	if (ref == NULL)
		return -ENOENT;
	ref->kind = kind;
	ref->owner = owner;
	return 0;
}

void
spawnref_del(struct spawnrefs *t, uint32_t key)
{
	struct spawnref *ref = spawnref_find(t, key);

	if (ref == NULL)
		return;
	TAILQ_REMOVE(&t->list, ref, entry);
	t->n--;
	if (ref->holds_slot)
		uidpool_put(t->uids, ref->slot);
	free(ref);
}
