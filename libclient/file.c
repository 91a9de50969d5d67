/* file.c: a file read from a session (airlock_file_*) and directory listings
 * (airlock_file_list_*). */
#include "airlock.h"
#include "export.h"
#include "getter.h"
#include "list.h"
#include "file.h"
#include "result.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct airlock_file {
	struct result_bytes data;
	uint64_t size;
	bool truncated;
};

struct file_entry {
	char *name;
	enum airlock_file_kind kind;
	uint64_t size;
	uint64_t mtime_ms;
};

struct airlock_file_list {
	struct file_entry *entries;
	size_t nentries;
	bool truncated;
};

/* The wire names of the kinds, indexed by enum airlock_file_kind. */
static const char *const file_kind_names[] = {
	[AIRLOCK_FILE_FILE] = "file",
	[AIRLOCK_FILE_DIR] = "dir",
	[AIRLOCK_FILE_LINK] = "link",
	[AIRLOCK_FILE_OTHER] = "other",
};

int
file_path_check(const char *path, bool may_be_empty)
{
	size_t len;

	if (path == NULL)
		return may_be_empty ? 0 : -EINVAL;
	len = strnlen(path, PROTO_PATH_MAX + 1);
	if (len == 0 && !may_be_empty)
		return -EINVAL;
	if (len > PROTO_PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int
file_from_proto(const struct proto_file_data *pd, struct airlock_file **ret)
{
	struct airlock_file *file;
	int r;

	file = calloc(1, sizeof(*file));
	if (file == NULL)
		return -ENOMEM;
	r = result_bytes_take(&pd->data, &file->data);
	if (r < 0) {
		free(file);
		return r;
	}
	file->size = pd->size;
	file->truncated = pd->truncated;
	*ret = file;
	return 0;
}

/* Free a file read. */
AIRLOCK_EXPORT void
airlock_file_free(struct airlock_file *file)
{
	if (file == NULL)
		return;
	result_bytes_clear(&file->data);
	free(file);
}

/* The bytes read. */
AIRLOCK_EXPORT int
airlock_file_data(const struct airlock_file *file, const void **ret_data, size_t *ret_len)
{
	if (file == NULL)
		return -EINVAL;
	return result_bytes_get(&file->data, ret_data, ret_len);
}

/* The file's whole size. */
GETTER(uint64_t, airlock_file_size, struct airlock_file, size, 0)

/* Whether fewer bytes than the size came back. */
GETTER(bool, airlock_file_truncated, struct airlock_file, truncated, false)

/* The kind named name; the decoder admits only the four names. */
static enum airlock_file_kind
file_kind_from_name(const char *name)
{
	unsigned i;

	for (i = 0; i < sizeof(file_kind_names) / sizeof(file_kind_names[0]); i++)
		if (name != NULL && strcmp(name, file_kind_names[i]) == 0)
			return (enum airlock_file_kind)i;
	return AIRLOCK_FILE_OTHER;
}

/* Entry e from decoded entry p (list_type.conv; the name is owned). */
static void
file_entry_from_proto(void *dst, const void *src)
{
	const struct proto_file_entry *p = src;
	struct file_entry *e = dst;

	e->kind = file_kind_from_name(p->kind);
	e->size = p->size;
	e->mtime_ms = p->mtime_ms;
}

static const struct list_type file_list = LIST_TYPE(
	struct airlock_file_list, entries, nentries, struct proto_file_entry, file_entry_from_proto,
	LIST_OWNED(struct file_entry, name, struct proto_file_entry, name));

/* Free a directory listing. */
LIST_FREE(airlock_file_list_free, struct airlock_file_list, file_list)

int
file_list_from_proto(const struct proto_file_list *pl, struct airlock_file_list **ret)
{
	struct airlock_file_list *list;
	int r;

	r = list_from_proto(&file_list, pl->entries, pl->nentries, &list);
	if (r == 0) {
		list->truncated = pl->truncated;
		*ret = list;
	}
	return r;
}

/* How many entries the listing holds. */
GETTER(size_t, airlock_file_list_count, struct airlock_file_list, nentries, 0)

/* The name of entry i. */
GETTER_AT(const char *, airlock_file_list_name, struct airlock_file_list, nentries, entries, name,
	  NULL)

/* The kind of entry i. */
GETTER_AT(enum airlock_file_kind, airlock_file_list_kind, struct airlock_file_list, nentries,
	  entries, kind, AIRLOCK_FILE_OTHER)

/* The size of entry i. */
GETTER_AT(uint64_t, airlock_file_list_size, struct airlock_file_list, nentries, entries, size, 0)

/* The modification time of entry i. */
GETTER_AT(uint64_t, airlock_file_list_mtime_ms, struct airlock_file_list, nentries, entries,
	  mtime_ms, 0)

/* Whether the directory holds more than the listing. */
GETTER(bool, airlock_file_list_truncated, struct airlock_file_list, truncated, false)

/* The name of a kind. */
AIRLOCK_EXPORT const char *
airlock_file_kind_name(enum airlock_file_kind kind)
{
	if ((unsigned)kind >= sizeof(file_kind_names) / sizeof(file_kind_names[0]))
		return NULL;
	return file_kind_names[kind];
}
