/* session.c: session options and the sessions a session_list reply lists. */
#include "airlock.h"
#include "export.h"
#include "getter.h"
#include "list.h"
#include "rules.h"
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct airlock_session_opts {
	struct proto_session_open o; /* o.profile points at profile or is NULL */
	char profile[PROTO_PROFILE_MAX + 1];
	char interpreter[PROTO_RUNTIME_MAX + 1]; /* o.interpreter points here or is NULL */
};

struct session_entry {
	char id[PROTO_SESSION_ID_LEN + 1];
	uint64_t age_ms;
	uint64_t idle_ms;
	uint64_t runs;
	char *state;
	char interpreter[PROTO_RUNTIME_MAX + 1]; /* "": not an interpreter session */
	bool background;			 /* opened with background processes */
};

struct airlock_session_list {
	struct session_entry *sessions;
	size_t nsessions;
	uint64_t more; /* the caller's sessions the daemon left out (its reply's cap) */
};

/* Create session options, every value the daemon's default. */
AIRLOCK_EXPORT int
airlock_session_opts_new(struct airlock_session_opts **ret)
{
	struct airlock_session_opts *opts;

	if (ret == NULL)
		return -EINVAL;
	opts = calloc(1, sizeof(*opts));
	if (opts == NULL)
		return -ENOMEM;
	*ret = opts;
	return 0;
}

/* Free session options. */
AIRLOCK_EXPORT void
airlock_session_opts_free(struct airlock_session_opts *opts)
{
	free(opts);
}

/* Set the workspace size. */
SETTER(airlock_session_opts_set_workspace_bytes, struct airlock_session_opts, uint64_t,
       o.workspace_bytes)

/* Point *field at a copy of value in buf (which the caller checked it fits),
 * or at nothing for NULL. */
static void
session_opts_string(const char **field, char *buf, const char *value)
{
	if (value != NULL)
		strcpy(buf, value);
	*field = value != NULL ? buf : NULL;
}

/* Name the session's profile, or NULL for the daemon's default. */
AIRLOCK_EXPORT int
airlock_session_opts_set_profile(struct airlock_session_opts *opts, const char *name)
{
	if (opts == NULL || (name != NULL && !rules_profile_name_valid(name)))
		return -EINVAL;
	session_opts_string(&opts->o.profile, opts->profile, name);
	return 0;
}

/* Open the session with an interpreter of this runtime (cells), or none. */
AIRLOCK_EXPORT int
airlock_session_opts_set_interpreter(struct airlock_session_opts *opts, const char *runtime)
{
	if (opts == NULL ||
	    (runtime != NULL && (runtime[0] == '\0' || strlen(runtime) > PROTO_RUNTIME_MAX)))
		return -EINVAL;
	session_opts_string(&opts->o.interpreter, opts->interpreter, runtime);
	return 0;
}

/* Keep what the session's cells start between cells (or not). */
SETTER(airlock_session_opts_set_background, struct airlock_session_opts, bool, o.background)

/* Start the session's workspace as this ustar archive (buf must live
 * until airlock_session_open() returns), or as an empty one (NULL). */
AIRLOCK_EXPORT int
airlock_session_opts_set_archive(struct airlock_session_opts *opts, const void *buf, size_t len)
{
	static const uint8_t empty[1];

	if (opts == NULL || (buf == NULL && len > 0) || (uint64_t)len > PROTO_BLOB_MAX)
		return -EINVAL;
	if (buf == NULL) {
		opts->o.archive = (struct proto_blob){.fd = -1};
		return 0;
	}
	opts->o.archive = (struct proto_blob){
		.data = len > 0 ? buf : empty, .len = len, .fd = -1, .present = true};
	return 0;
}

/* Set the idle timeout. */
SETTER(airlock_session_opts_set_idle_timeout_ms, struct airlock_session_opts, uint64_t,
       o.idle_timeout_ms)

/* Ask for a session that does not end with the owner's connections. */
SETTER(airlock_session_opts_set_detached, struct airlock_session_opts, bool, o.detached)

/* Set the lifetime. */
SETTER(airlock_session_opts_set_lifetime_ms, struct airlock_session_opts, uint64_t, o.lifetime_ms)

/* Set a default limit of the session's runs. */
AIRLOCK_EXPORT int
airlock_session_opts_set_limit(struct airlock_session_opts *opts, enum airlock_limit limit,
			       uint64_t value)
{
	if (opts == NULL || (unsigned)limit >= PROTO_LIMIT_COUNT_)
		return -EINVAL;
	opts->o.limits.v[limit] = value;
	return 0;
}

void
session_opts_to_proto(const struct airlock_session_opts *opts, struct proto_session_open *ret)
{
	if (opts == NULL)
		*ret = (struct proto_session_open){0};
	else
		*ret = opts->o;
}

/* Entry e from decoded entry p (list_type.conv; the state is owned). */
static void
session_entry_from_proto(void *dst, const void *src)
{
	const struct proto_session_entry *p = src;
	struct session_entry *e = dst;

	/* The decoder checked the id: exactly PROTO_SESSION_ID_LEN hex characters. */
	snprintf(e->id, sizeof(e->id), "%s", p->session != NULL ? p->session : "");
	e->age_ms = p->age_ms;
	e->idle_ms = p->idle_ms;
	e->runs = p->runs;
	/* The decoder bounded it to PROTO_RUNTIME_MAX bytes. */
	snprintf(e->interpreter, sizeof(e->interpreter), "%s",
		 p->interpreter != NULL ? p->interpreter : "");
	e->background = p->background;
}

static const struct list_type session_list =
	LIST_TYPE(struct airlock_session_list, sessions, nsessions, struct proto_session_entry,
		  session_entry_from_proto,
		  LIST_OWNED(struct session_entry, state, struct proto_session_entry, state));

/* Free a list of sessions. */
LIST_FREE(airlock_session_list_free, struct airlock_session_list, session_list)

LIST_FROM_PROTO_MORE(session_list_from_proto, struct airlock_session_list, session_list,
		     struct proto_session_list, sessions, nsessions, more)

/* Look up entry i, or NULL. */
static const struct session_entry *
session_entry(const struct airlock_session_list *list, size_t i)
{
	if (list == NULL || i >= list->nsessions)
		return NULL;
	return &list->sessions[i];
}

/* How many sessions the list holds. */
GETTER(size_t, airlock_session_list_count, struct airlock_session_list, nsessions, 0)

/* How many of the caller's sessions the daemon left out of the list. */
GETTER(uint64_t, airlock_session_list_more, struct airlock_session_list, more, 0)

/* The id of session i. */
GETTER_AT(const char *, airlock_session_list_id, struct airlock_session_list, nsessions, sessions,
	  id, NULL)

/* The age of session i. */
GETTER_AT(uint64_t, airlock_session_list_age_ms, struct airlock_session_list, nsessions, sessions,
	  age_ms, 0)

/* How long session i has been idle. */
GETTER_AT(uint64_t, airlock_session_list_idle_ms, struct airlock_session_list, nsessions, sessions,
	  idle_ms, 0)

/* How many runs session i has had. */
GETTER_AT(uint64_t, airlock_session_list_runs, struct airlock_session_list, nsessions, sessions,
	  runs, 0)

/* The interpreter runtime of session i, or NULL. */
AIRLOCK_EXPORT const char *
airlock_session_list_interpreter(const struct airlock_session_list *list, size_t i)
{
	const struct session_entry *e = session_entry(list, i);

	return e != NULL && e->interpreter[0] != '\0' ? e->interpreter : NULL;
}

/* Whether session i was opened with background processes. */
GETTER_AT(bool, airlock_session_list_background, struct airlock_session_list, nsessions, sessions,
	  background, false)

/* The state of session i. */
GETTER_AT(const char *, airlock_session_list_state, struct airlock_session_list, nsessions,
	  sessions, state, NULL)

/* ---- a background session's processes (session_ps_ok) ---- */

struct process_entry {
	uint32_t pid;
	char *name;
	uint64_t cpu_ms;
	uint64_t memory_bytes;
};

struct airlock_process_list {
	struct process_entry *processes;
	size_t nprocesses;
	bool truncated;
};

/* Entry e from decoded entry p (list_type.conv; the name is owned). */
static void
process_entry_from_proto(void *dst, const void *src)
{
	const struct proto_process *p = src;
	struct process_entry *e = dst;

	e->pid = p->pid;
	e->cpu_ms = p->cpu_ms;
	e->memory_bytes = p->memory_bytes;
}

static const struct list_type process_list =
	LIST_TYPE(struct airlock_process_list, processes, nprocesses, struct proto_process,
		  process_entry_from_proto,
		  LIST_OWNED(struct process_entry, name, struct proto_process, name));

/* Free a list of processes. */
LIST_FREE(airlock_process_list_free, struct airlock_process_list, process_list)

int
process_list_from_proto(const struct proto_process_list *pl, struct airlock_process_list **ret)
{
	struct airlock_process_list *l;
	int r = list_from_proto(&process_list, pl->processes, pl->nprocesses, &l);

	if (r < 0)
		return r;
	l->truncated = pl->truncated;
	*ret = l;
	return 0;
}

/* How many processes the list holds. */
GETTER(size_t, airlock_process_list_count, struct airlock_process_list, nprocesses, 0)

/* Whether the session had more than the list holds. */
GETTER(bool, airlock_process_list_truncated, struct airlock_process_list, truncated, false)

/* The pid of process i, in the session's sandbox. */
GETTER_AT(uint32_t, airlock_process_list_pid, struct airlock_process_list, nprocesses, processes,
	  pid, 0)

/* The name (comm) of process i. */
GETTER_AT(const char *, airlock_process_list_name, struct airlock_process_list, nprocesses,
	  processes, name, NULL)

/* The cpu time of process i so far. */
GETTER_AT(uint64_t, airlock_process_list_cpu_ms, struct airlock_process_list, nprocesses, processes,
	  cpu_ms, 0)

/* The resident memory of process i. */
GETTER_AT(uint64_t, airlock_process_list_memory_bytes, struct airlock_process_list, nprocesses,
	  processes, memory_bytes, 0)
