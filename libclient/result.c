/* result.c: results and info objects (airlock_result_*, airlock_info_*) and names. */
#include "airlock.h"
#include "export.h"
#include "limit.h"
#include "result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(AIRLOCK_OUTCOME_EXITED == (int)PROTO_OUTCOME_EXITED &&
		       AIRLOCK_OUTCOME_SIGNALED == (int)PROTO_OUTCOME_SIGNALED &&
		       AIRLOCK_OUTCOME_WALL_LIMIT == (int)PROTO_OUTCOME_WALL_LIMIT &&
		       AIRLOCK_OUTCOME_CPU_LIMIT == (int)PROTO_OUTCOME_CPU_LIMIT &&
		       AIRLOCK_OUTCOME_MEMORY_LIMIT == (int)PROTO_OUTCOME_MEMORY_LIMIT &&
		       AIRLOCK_OUTCOME_ERROR == (int)PROTO_OUTCOME_ERROR &&
		       AIRLOCK_OUTCOME_CANCELLED == (int)PROTO_OUTCOME_CANCELLED &&
		       AIRLOCK_OUTCOME_PROCESS_LIMIT == (int)PROTO_OUTCOME_PROCESS_LIMIT &&
		       PROTO_OUTCOME_COUNT_ == 8,
	       "public outcomes mirror the protocol's");
_Static_assert(AIRLOCK_LIMIT_WALL_MS == (int)PROTO_LIMIT_WALL_MS &&
		       AIRLOCK_LIMIT_CPU_MS == (int)PROTO_LIMIT_CPU_MS &&
		       AIRLOCK_LIMIT_MEMORY_BYTES == (int)PROTO_LIMIT_MEMORY_BYTES &&
		       AIRLOCK_LIMIT_PROCESSES == (int)PROTO_LIMIT_PROCESSES &&
		       AIRLOCK_LIMIT_OPEN_FILES == (int)PROTO_LIMIT_OPEN_FILES &&
		       AIRLOCK_LIMIT_FILE_SIZE_BYTES == (int)PROTO_LIMIT_FILE_SIZE_BYTES &&
		       AIRLOCK_LIMIT_OUTPUT_BYTES == (int)PROTO_LIMIT_OUTPUT_BYTES &&
		       AIRLOCK_LIMIT_WORKSPACE_BYTES == (int)PROTO_LIMIT_WORKSPACE_BYTES &&
		       AIRLOCK_LIMIT_TMP_BYTES == (int)PROTO_LIMIT_TMP_BYTES &&
		       AIRLOCK_LIMIT_ARTIFACTS == (int)PROTO_LIMIT_ARTIFACTS &&
		       AIRLOCK_LIMIT_ARTIFACT_BYTES == (int)PROTO_LIMIT_ARTIFACT_BYTES &&
		       PROTO_LIMIT_COUNT_ == 11,
	       "public limits mirror the protocol's");

struct result_stream {
	struct result_bytes data;
	uint64_t total;
	bool truncated;
};

struct result_artifact {
	char *name;
	uint64_t size;
	bool truncated;
	struct result_bytes data;
};

/* result.network, copied out of the message. */
struct result_network {
	uint64_t figures[4]; /* enum airlock_net_figure */
	char contacted[PROTO_NET_REPORT_MAX][PROTO_NET_TARGET_MAX + 1];
	size_t ncontacted;
	struct {
		char host[PROTO_NET_TARGET_MAX + 1];
		char reason[PROTO_NET_REASON_MAX + 1];
	} refusals[PROTO_NET_REPORT_MAX];
	size_t nrefusals;
};

struct airlock_result {
	enum airlock_outcome outcome;
	int exit_code;
	int signal;
	uint64_t wall_ms;
	uint64_t cpu_ms;
	uint64_t memory_peak_bytes;
	uint64_t queued_ms;
	struct result_stream out[2];
	struct result_artifact *artifacts;
	size_t nartifacts;
	uint64_t artifacts_omitted;
	uint64_t artifacts_omitted_bytes;
	char *error;
	struct result_network *network; /* NULL: not a network = proxy run */
	struct result_tool_call *tool_calls;
	size_t ntool_calls;
	uint64_t tool_calls_omitted;
	uint64_t cell;			 /* 0: not a cell */
	enum airlock_cell_state state;	 /* a cell's */
	char *value;			 /* a cell's trailing expression, or NULL */
	struct result_artifact *display; /* name: the mime type */
	size_t ndisplay;
	char (*advisories)[PROTO_ADVISORY_MAX + 1];
	size_t nadvisories;
};

/* One call of the run's tools, from result.tool_calls. */
struct result_tool_call {
	char name[PROTO_TOOL_NAME_MAX + 1];
	enum proto_tool_outcome outcome;
	uint64_t ms;
};

/* One profile the caller may use, from info_ok.profiles. */
struct info_profile {
	char name[PROTO_PROFILE_MAX + 1];
	bool is_default;
	bool proxy;   /* network = proxy */
	char **allow; /* allow_hosts, then allow_private_hosts */
	size_t nallow, npublic;
	uint64_t limits[PROTO_LIMIT_COUNT_];
	uint64_t ceilings[PROTO_LIMIT_COUNT_];
	bool no_file_write; /* "file_write": false */
	bool no_subprocess; /* "subprocess": false */
	/* enum airlock_profile_list: mounts, allow_mounts, blocked_imports, hidden_paths */
	char **lists[AIRLOCK_PROFILE_HIDDEN_PATHS + 1];
	size_t nlists[AIRLOCK_PROFILE_HIDDEN_PATHS + 1];
};

/* One mount of info_ok.mounts. */
struct info_mount {
	char name[PROTO_MOUNT_MAX + 1];
	char target[PROTO_NAME_MAX + 1];
	bool package;
};

struct airlock_info {
	char *daemon;
	uint32_t version;
	uint32_t uid;
	char **runtimes;
	size_t nruntimes;
	uint64_t defaults[PROTO_LIMIT_COUNT_];
	uint64_t ceilings[PROTO_LIMIT_COUNT_];
	char *resource_control; /* NULL: not said */
	char **packages;	/* per runtime: "numpy,pandas", or NULL: not said */
	struct info_profile *profiles;
	size_t nprofiles;
	struct info_mount *mounts;
	size_t nmounts;
	uint32_t capacity[4]; /* by enum airlock_capacity; 0: not said */
};

/* Copy n strings (checked by the decoder) into *ret, n of them on success. */
static int
info_strv_copy(const char *const *v, size_t n, char ***ret, size_t *ret_n)
{
	size_t k;

	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (*ret == NULL)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		(*ret)[k] = strdup(v[k]);
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

/* What an empty payload points at, so data is never NULL. */
static const char result_empty[1];

/* Release what b holds. */
void
result_bytes_clear(struct result_bytes *b)
{
	if (b->mapped)
		munmap(b->data, b->len);
	else
		free(b->data);
	b->data = NULL;
	b->len = 0;
	b->mapped = false;
}

/*
 * Take a blob out of a decoded message so that it outlives the message. A
 * memfd blob is mapped again from its fd (the kernel keeps the memfd alive
 * through the mapping; its seals, checked by the decoder, keep the bytes from
 * changing); an inline blob is copied.
 */
int
result_bytes_take(const struct proto_blob *blob, struct result_bytes *ret)
{
	void *p;

	if (!blob->present || blob->len == 0) {
		*ret = (struct result_bytes){0};
		return 0;
	}
	if (blob->fd >= 0) {
		p = mmap(NULL, blob->len, PROT_READ, MAP_SHARED, blob->fd, 0);
		if (p != MAP_FAILED) {
			*ret = (struct result_bytes){.data = p, .len = blob->len, .mapped = true};
			return 0;
		}
		if (blob->data == NULL)
			return -errno;
		/* Fall back to a copy of the decoder's mapping. */
	}
	p = malloc(blob->len);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, blob->data, blob->len);
	*ret = (struct result_bytes){.data = p, .len = blob->len, .mapped = false};
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

/* Build a result that outlives the decoded message. */
static void result_artifacts_free(struct result_artifact *a, size_t n);

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

int
result_from_proto(const struct proto_result *pr, struct airlock_result **ret)
{
	struct airlock_result *res;
	size_t i;
	int r;

	res = calloc(1, sizeof(*res));
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
	res->artifacts_omitted = pr->artifacts_omitted;
	res->artifacts_omitted_bytes = pr->artifacts_omitted_bytes;
	for (i = 0; i < 2; i++) {
		r = result_bytes_take(&pr->out[i].data, &res->out[i].data);
		if (r < 0)
			goto out;
		res->out[i].total = pr->out[i].total;
		res->out[i].truncated = pr->out[i].truncated;
	}
	r = result_strdup(pr->error, &res->error);
	if (r < 0)
		goto out;
	if (pr->network != NULL) {
		const struct proto_network *pn = pr->network;
		struct result_network *n;

		r = -ENOMEM;
		n = res->network = calloc(1, sizeof(*res->network));
		if (n == NULL)
			goto out;
		n->figures[AIRLOCK_NET_BYTES_UP] = pn->bytes_up;
		n->figures[AIRLOCK_NET_BYTES_DOWN] = pn->bytes_down;
		n->figures[AIRLOCK_NET_CONNECTIONS] = pn->connections;
		n->figures[AIRLOCK_NET_REFUSED] = pn->refused;
		/* The decoder checked every count and length against these bounds. */
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
	}
	res->tool_calls_omitted = pr->tool_calls_omitted;
	if (pr->ntool_calls > 0) {
		r = -ENOMEM;
		res->tool_calls = calloc(pr->ntool_calls, sizeof(*res->tool_calls));
		if (res->tool_calls == NULL)
			goto out;
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
		r = -ENOMEM;
		res->advisories = calloc(pr->nadvisories, sizeof(*res->advisories));
		if (res->advisories == NULL)
			goto out;
		/* The decoder bounded the count and each length. */
		for (i = 0; i < pr->nadvisories && i < PROTO_ADVISORIES_MAX; i++)
			snprintf(res->advisories[res->nadvisories++], sizeof(res->advisories[0]),
				 "%s", pr->advisories[i]);
	}
	r = result_artifacts_take(pr->artifacts, pr->nartifacts, &res->artifacts, &res->nartifacts);
	if (r < 0)
		goto out;
	res->cell = pr->cell;
	if (pr->cell != 0) {
		res->state = pr->state != NULL && strcmp(pr->state, "kept") == 0
				     ? AIRLOCK_CELL_KEPT
				     : AIRLOCK_CELL_LOST;
		r = result_strdup(pr->value, &res->value);
		if (r < 0)
			goto out;
		r = result_artifacts_take(pr->display, pr->ndisplay, &res->display, &res->ndisplay);
		if (r < 0)
			goto out;
	}
	*ret = res;
	res = NULL;
	r = 0;
out:
	airlock_result_free(res);
	return r;
}

/* Free n artifacts (or display items) and the array. */
static void
result_artifacts_free(struct result_artifact *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(a[i].name);
		result_bytes_clear(&a[i].data);
	}
	free(a);
}

/* Free a result. */
AIRLOCK_EXPORT void
airlock_result_free(struct airlock_result *res)
{
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < 2; i++)
		result_bytes_clear(&res->out[i].data);
	result_artifacts_free(res->artifacts, res->nartifacts);
	result_artifacts_free(res->display, res->ndisplay);
	free(res->value);
	free(res->error);
	free(res->network);
	free(res->tool_calls);
	free(res->advisories);
	free(res);
}

/* The advisories of the run (blocked_imports findings). */
AIRLOCK_EXPORT size_t
airlock_result_advisory_count(const struct airlock_result *res)
{
	return res != NULL ? res->nadvisories : 0;
}

/* Advisory i, or NULL. */
AIRLOCK_EXPORT const char *
airlock_result_advisory(const struct airlock_result *res, size_t i)
{
	return res != NULL && i < res->nadvisories ? res->advisories[i] : NULL;
}

/* How many tool calls the result lists. */
AIRLOCK_EXPORT size_t
airlock_result_tool_call_count(const struct airlock_result *res)
{
	return res != NULL ? res->ntool_calls : 0;
}

/* Tool call i's tool name. */
AIRLOCK_EXPORT const char *
airlock_result_tool_call_name(const struct airlock_result *res, size_t i)
{
	return res != NULL && i < res->ntool_calls ? res->tool_calls[i].name : NULL;
}

/* Tool call i's outcome, by name. */
AIRLOCK_EXPORT const char *
airlock_result_tool_call_outcome(const struct airlock_result *res, size_t i)
{
	return res != NULL && i < res->ntool_calls
		       ? proto_tool_outcome_name(res->tool_calls[i].outcome)
		       : NULL;
}

/* Tool call i's time to its answer. */
AIRLOCK_EXPORT uint64_t
airlock_result_tool_call_ms(const struct airlock_result *res, size_t i)
{
	return res != NULL && i < res->ntool_calls ? res->tool_calls[i].ms : 0;
}

/* Tool calls past the listed ones. */
AIRLOCK_EXPORT uint64_t
airlock_result_tool_calls_omitted(const struct airlock_result *res)
{
	return res != NULL ? res->tool_calls_omitted : 0;
}

/* How the run ended. */
AIRLOCK_EXPORT enum airlock_outcome
airlock_result_outcome(const struct airlock_result *res)
{
	return res != NULL ? res->outcome : AIRLOCK_OUTCOME_ERROR;
}

/* The exit code. */
AIRLOCK_EXPORT int
airlock_result_exit_code(const struct airlock_result *res)
{
	return res != NULL ? res->exit_code : 0;
}

/* The terminating signal. */
AIRLOCK_EXPORT int
airlock_result_signal(const struct airlock_result *res)
{
	return res != NULL ? res->signal : 0;
}

/* Wall-clock milliseconds. */
AIRLOCK_EXPORT uint64_t
airlock_result_wall_ms(const struct airlock_result *res)
{
	return res != NULL ? res->wall_ms : 0;
}

/* CPU milliseconds. */
AIRLOCK_EXPORT uint64_t
airlock_result_cpu_ms(const struct airlock_result *res)
{
	return res != NULL ? res->cpu_ms : 0;
}

/* Peak memory, bytes. */
AIRLOCK_EXPORT uint64_t
airlock_result_memory_peak_bytes(const struct airlock_result *res)
{
	return res != NULL ? res->memory_peak_bytes : 0;
}

/* Milliseconds spent queued. */
AIRLOCK_EXPORT uint64_t
airlock_result_queued_ms(const struct airlock_result *res)
{
	return res != NULL ? res->queued_ms : 0;
}

/* Hand out the bytes of b, never a NULL pointer. */
int
result_bytes_get(const struct result_bytes *b, const void **ret_data, size_t *ret_len)
{
	if (ret_data == NULL || ret_len == NULL)
		return -EINVAL;
	*ret_data = b->data != NULL ? b->data : result_empty;
	*ret_len = b->len;
	return 0;
}

/* The stdout kept. */
AIRLOCK_EXPORT int
airlock_result_stdout(const struct airlock_result *res, const void **ret_data, size_t *ret_len)
{
	if (res == NULL)
		return -EINVAL;
	return result_bytes_get(&res->out[0].data, ret_data, ret_len);
}

/* The stderr kept. */
AIRLOCK_EXPORT int
airlock_result_stderr(const struct airlock_result *res, const void **ret_data, size_t *ret_len)
{
	if (res == NULL)
		return -EINVAL;
	return result_bytes_get(&res->out[1].data, ret_data, ret_len);
}

/* Total stdout bytes written. */
AIRLOCK_EXPORT uint64_t
airlock_result_stdout_total(const struct airlock_result *res)
{
	return res != NULL ? res->out[0].total : 0;
}

/* Total stderr bytes written. */
AIRLOCK_EXPORT uint64_t
airlock_result_stderr_total(const struct airlock_result *res)
{
	return res != NULL ? res->out[1].total : 0;
}

/* Whether stdout was truncated. */
AIRLOCK_EXPORT bool
airlock_result_stdout_truncated(const struct airlock_result *res)
{
	return res != NULL && res->out[0].truncated;
}

/* Whether stderr was truncated. */
AIRLOCK_EXPORT bool
airlock_result_stderr_truncated(const struct airlock_result *res)
{
	return res != NULL && res->out[1].truncated;
}

/* What failed, for outcome ERROR. */
AIRLOCK_EXPORT const char *
airlock_result_error(const struct airlock_result *res)
{
	return res != NULL ? res->error : NULL;
}

/* Number of artifacts. */
AIRLOCK_EXPORT size_t
airlock_result_artifact_count(const struct airlock_result *res)
{
	return res != NULL ? res->nartifacts : 0;
}

/* Files left out of the artifacts, and their total size. */
AIRLOCK_EXPORT uint64_t
airlock_result_artifacts_omitted(const struct airlock_result *res)
{
	return res != NULL ? res->artifacts_omitted : 0;
}

AIRLOCK_EXPORT uint64_t
airlock_result_artifacts_omitted_bytes(const struct airlock_result *res)
{
	return res != NULL ? res->artifacts_omitted_bytes : 0;
}

/* Whether the run went through the egress proxy (network = proxy). */
AIRLOCK_EXPORT bool
airlock_result_has_network(const struct airlock_result *res)
{
	return res != NULL && res->network != NULL;
}

/* One of its figures. */
AIRLOCK_EXPORT uint64_t
airlock_result_network(const struct airlock_result *res, enum airlock_net_figure figure)
{
	if (res == NULL || res->network == NULL || (unsigned)figure > AIRLOCK_NET_REFUSED)
		return 0;
	return res->network->figures[figure];
}

/* Destinations contacted ("host:port"). */
AIRLOCK_EXPORT size_t
airlock_result_network_contacted_count(const struct airlock_result *res)
{
	return res != NULL && res->network != NULL ? res->network->ncontacted : 0;
}

AIRLOCK_EXPORT const char *
airlock_result_network_contacted(const struct airlock_result *res, size_t i)
{
	if (res == NULL || res->network == NULL || i >= res->network->ncontacted)
		return NULL;
	return res->network->contacted[i];
}

/* Refusals: "host:port" (or "") and the reason. */
AIRLOCK_EXPORT size_t
airlock_result_network_refusal_count(const struct airlock_result *res)
{
	return res != NULL && res->network != NULL ? res->network->nrefusals : 0;
}

AIRLOCK_EXPORT const char *
airlock_result_network_refusal(const struct airlock_result *res, size_t i, const char **ret_reason)
{
	if (res == NULL || res->network == NULL || i >= res->network->nrefusals)
		return NULL;
	if (ret_reason != NULL)
		*ret_reason = res->network->refusals[i].reason;
	return res->network->refusals[i].host;
}

/* Artifact i, or NULL. */
static const struct result_artifact *
result_artifact(const struct airlock_result *res, size_t i)
{
	if (res == NULL || i >= res->nartifacts)
		return NULL;
	return &res->artifacts[i];
}

/* Name of artifact i. */
AIRLOCK_EXPORT const char *
airlock_result_artifact_name(const struct airlock_result *res, size_t i)
{
	const struct result_artifact *a = result_artifact(res, i);

	return a != NULL ? a->name : NULL;
}

/* Size of artifact i in the workspace. */
AIRLOCK_EXPORT uint64_t
airlock_result_artifact_size(const struct airlock_result *res, size_t i)
{
	const struct result_artifact *a = result_artifact(res, i);

	return a != NULL ? a->size : 0;
}

/* Whether artifact i was truncated. */
AIRLOCK_EXPORT bool
airlock_result_artifact_truncated(const struct airlock_result *res, size_t i)
{
	const struct result_artifact *a = result_artifact(res, i);

	return a != NULL && a->truncated;
}

/* The bytes kept of artifact i. */
AIRLOCK_EXPORT int
airlock_result_artifact_data(const struct airlock_result *res, size_t i, const void **ret_data,
			     size_t *ret_len)
{
	const struct result_artifact *a = result_artifact(res, i);

	if (a == NULL)
		return -EINVAL;
	return result_bytes_get(&a->data, ret_data, ret_len);
}

/* A cell's number (1, 2, ...), 0 for a run that is not a cell. */
AIRLOCK_EXPORT uint64_t
airlock_result_cell(const struct airlock_result *res)
{
	return res != NULL ? res->cell : 0;
}

/* Whether a cell ran in the state the cells before it left. */
AIRLOCK_EXPORT enum airlock_cell_state
airlock_result_state(const struct airlock_result *res)
{
	return res != NULL && res->cell != 0 ? res->state : AIRLOCK_CELL_NONE;
}

/* The repr of a cell's trailing expression, or NULL. */
AIRLOCK_EXPORT const char *
airlock_result_value(const struct airlock_result *res)
{
	return res != NULL ? res->value : NULL;
}

/* How many rich outputs a cell gave. */
AIRLOCK_EXPORT size_t
airlock_result_display_count(const struct airlock_result *res)
{
	return res != NULL ? res->ndisplay : 0;
}

/* Rich output i: its mime type (never NULL) and its bytes. */
AIRLOCK_EXPORT int
airlock_result_display_get(const struct airlock_result *res, size_t i, const char **ret_mime,
			   const void **ret_data, size_t *ret_len)
{
	int r;

	if (res == NULL || i >= res->ndisplay || ret_mime == NULL)
		return -EINVAL;
	r = result_bytes_get(&res->display[i].data, ret_data, ret_len);
	if (r == 0)
		*ret_mime = res->display[i].name;
	return r;
}

/* Build an info object that outlives the decoded message. */
int
result_info_from_proto(const struct proto_info *pi, struct airlock_info **ret)
{
	struct airlock_info *info;
	size_t i;
	int r = -ENOMEM;

	info = calloc(1, sizeof(*info));
	if (info == NULL)
		return -ENOMEM;
	info->daemon = strdup(pi->daemon != NULL ? pi->daemon : "");
	if (info->daemon == NULL)
		goto out;
	info->version = pi->version;
	info->uid = pi->uid;
	if (pi->nruntimes > 0) {
		info->runtimes = calloc(pi->nruntimes, sizeof(*info->runtimes));
		if (info->runtimes == NULL)
			goto out;
	}
	for (i = 0; i < pi->nruntimes && i < PROTO_RUNTIMES_MAX; i++) {
		info->runtimes[i] = strdup(pi->runtimes[i] != NULL ? pi->runtimes[i] : "");
		if (info->runtimes[i] == NULL)
			goto out;
		info->nruntimes++;
	}
	memcpy(info->defaults, pi->defaults.v, sizeof(info->defaults));
	memcpy(info->ceilings, pi->ceilings.v, sizeof(info->ceilings));
	info->capacity[AIRLOCK_CAPACITY_RUNS] = pi->max_runs;
	info->capacity[AIRLOCK_CAPACITY_RUNS_PER_UID] = pi->max_runs_per_uid;
	info->capacity[AIRLOCK_CAPACITY_INTERPRETERS] = pi->max_interpreters;
	info->capacity[AIRLOCK_CAPACITY_INTERPRETERS_PER_UID] = pi->max_interpreters_per_uid;
	if (pi->resource_control != NULL) {
		info->resource_control = strdup(pi->resource_control);
		if (info->resource_control == NULL)
			goto out;
	}
	if (info->nruntimes > 0) {
		info->packages = calloc(info->nruntimes, sizeof(*info->packages));
		if (info->packages == NULL)
			goto out;
	}
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
			goto out;
		s[0] = '\0';
		for (k = 0; k < p->npackages; k++) {
			if (k > 0)
				strcat(s, ",");
			strcat(s, p->packages[k]);
		}
		info->packages[j] = s;
	}
	if (pi->nprofiles > 0) {
		info->profiles = calloc(pi->nprofiles, sizeof(*info->profiles));
		if (info->profiles == NULL)
			goto out;
	}
	for (i = 0; i < pi->nprofiles && i < PROTO_PROFILES_MAX; i++) {
		struct info_profile *p = &info->profiles[i];

		/* The decoder checked the name: 1 to PROTO_PROFILE_MAX bytes. */
		strcpy(p->name, pi->profiles[i].name);
		p->is_default = pi->profiles[i].is_default;
		memcpy(p->limits, pi->profiles[i].limits.v, sizeof(p->limits));
		memcpy(p->ceilings, pi->profiles[i].ceilings.v, sizeof(p->ceilings));
		p->no_file_write = pi->profiles[i].no_file_write;
		p->no_subprocess = pi->profiles[i].no_subprocess;
		info->nprofiles++;
		r = info_profile_network(&pi->profiles[i], p);
		if (r == 0)
			r = info_strv_copy(pi->profiles[i].mounts, pi->profiles[i].nmounts,
					   &p->lists[AIRLOCK_PROFILE_MOUNTS],
					   &p->nlists[AIRLOCK_PROFILE_MOUNTS]);
		if (r == 0)
			r = info_strv_copy(pi->profiles[i].allow_mounts,
					   pi->profiles[i].nallow_mounts,
					   &p->lists[AIRLOCK_PROFILE_ALLOW_MOUNTS],
					   &p->nlists[AIRLOCK_PROFILE_ALLOW_MOUNTS]);
		if (r == 0)
			r = info_strv_copy(pi->profiles[i].blocked_imports,
					   pi->profiles[i].nblocked_imports,
					   &p->lists[AIRLOCK_PROFILE_BLOCKED_IMPORTS],
					   &p->nlists[AIRLOCK_PROFILE_BLOCKED_IMPORTS]);
		if (r == 0)
			r = info_strv_copy(pi->profiles[i].hidden_paths,
					   pi->profiles[i].nhidden_paths,
					   &p->lists[AIRLOCK_PROFILE_HIDDEN_PATHS],
					   &p->nlists[AIRLOCK_PROFILE_HIDDEN_PATHS]);
		if (r < 0)
			goto out;
	}
	if (pi->nmounts > 0) {
		r = -ENOMEM;
		info->mounts = calloc(pi->nmounts, sizeof(*info->mounts));
		if (info->mounts == NULL)
			goto out;
	}
	/* The decoder checked each name and the target's length. */
	for (i = 0; i < pi->nmounts && i < PROTO_INFO_MOUNTS_MAX; i++) {
		struct info_mount *mt = &info->mounts[info->nmounts++];

		snprintf(mt->name, sizeof(mt->name), "%s", pi->mounts[i].name);
		snprintf(mt->target, sizeof(mt->target), "%s", pi->mounts[i].target);
		mt->package = pi->mounts[i].package;
	}
	*ret = info;
	info = NULL;
	r = 0;
out:
	airlock_info_free(info);
	return r;
}

/* Free an info object. */
AIRLOCK_EXPORT void
airlock_info_free(struct airlock_info *info)
{
	size_t i;

	if (info == NULL)
		return;
	for (i = 0; i < info->nruntimes; i++) {
		free(info->runtimes[i]);
		if (info->packages != NULL)
			free(info->packages[i]);
	}
	free(info->runtimes);
	free(info->packages);
	free(info->daemon);
	free(info->resource_control);
	for (i = 0; info->profiles != NULL && i < info->nprofiles; i++) {
		size_t k;

		size_t l;

		for (k = 0; k < info->profiles[i].nallow; k++)
			free(info->profiles[i].allow[k]);
		free(info->profiles[i].allow);
		for (l = 0; l <= AIRLOCK_PROFILE_HIDDEN_PATHS; l++) {
			for (k = 0; k < info->profiles[i].nlists[l]; k++)
				free(info->profiles[i].lists[l][k]);
			free(info->profiles[i].lists[l]);
		}
	}
	free(info->profiles);
	free(info->mounts);
	free(info);
}

/* How many profiles the caller may use (0 from a daemon before profiles). */
AIRLOCK_EXPORT size_t
airlock_info_profile_count(const struct airlock_info *info)
{
	return info != NULL ? info->nprofiles : 0;
}

/* Profile i's name, or NULL. */
AIRLOCK_EXPORT const char *
airlock_info_profile_name(const struct airlock_info *info, size_t i)
{
	if (info == NULL || i >= info->nprofiles)
		return NULL;
	return info->profiles[i].name;
}

/* Whether profile i is what a request naming none gets. */
AIRLOCK_EXPORT bool
airlock_info_profile_is_default(const struct airlock_info *info, size_t i)
{
	if (info == NULL || i >= info->nprofiles)
		return false;
	return info->profiles[i].is_default;
}

/* Profile i's default (or ceiling) of a limit, or 0 out of range. */
static uint64_t
info_profile_value(const struct airlock_info *info, size_t i, enum airlock_limit limit,
		   bool ceiling)
{
	if (info == NULL || i >= info->nprofiles || (unsigned)limit >= PROTO_LIMIT_COUNT_)
		return 0;
	return ceiling ? info->profiles[i].ceilings[limit] : info->profiles[i].limits[limit];
}

/* Profile i's default for a limit, or 0. */
AIRLOCK_EXPORT uint64_t
airlock_info_profile_limit(const struct airlock_info *info, size_t i, enum airlock_limit limit)
{
	return info_profile_value(info, i, limit, false);
}

/* Profile i's ceiling for a limit, or 0. */
AIRLOCK_EXPORT uint64_t
airlock_info_profile_ceiling(const struct airlock_info *info, size_t i, enum airlock_limit limit)
{
	return info_profile_value(info, i, limit, true);
}

/* Whether profile i's runs may do what sw names: 1, 0, or -EINVAL. */
AIRLOCK_EXPORT int
airlock_info_profile_switch(const struct airlock_info *info, size_t i,
			    enum airlock_profile_switch sw)
{
	if (info == NULL || i >= info->nprofiles)
		return -EINVAL;
	switch (sw) {
	case AIRLOCK_SWITCH_FILE_WRITE:
		return !info->profiles[i].no_file_write;
	case AIRLOCK_SWITCH_SUBPROCESS:
		return !info->profiles[i].no_subprocess;
	}
	return -EINVAL;
}

/* How many names profile i's list has. */
AIRLOCK_EXPORT size_t
airlock_info_profile_list_count(const struct airlock_info *info, size_t i,
				enum airlock_profile_list list)
{
	if (info == NULL || i >= info->nprofiles || (unsigned)list > AIRLOCK_PROFILE_HIDDEN_PATHS)
		return 0;
	return info->profiles[i].nlists[list];
}

/* Name k of profile i's list, or NULL. */
AIRLOCK_EXPORT const char *
airlock_info_profile_list(const struct airlock_info *info, size_t i, enum airlock_profile_list list,
			  size_t k)
{
	if (k >= airlock_info_profile_list_count(info, i, list))
		return NULL;
	return info->profiles[i].lists[list][k];
}

/* How many mounts info lists. */
AIRLOCK_EXPORT size_t
airlock_info_mount_count(const struct airlock_info *info)
{
	return info != NULL ? info->nmounts : 0;
}

/* Mount i's name, or NULL. */
AIRLOCK_EXPORT const char *
airlock_info_mount_name(const struct airlock_info *info, size_t i)
{
	return info != NULL && i < info->nmounts ? info->mounts[i].name : NULL;
}

/* Mount i's target in the sandbox, or NULL. */
AIRLOCK_EXPORT const char *
airlock_info_mount_target(const struct airlock_info *info, size_t i)
{
	return info != NULL && i < info->nmounts ? info->mounts[i].target : NULL;
}

/* Whether mount i is a package tree (exec allowed). */
AIRLOCK_EXPORT bool
airlock_info_mount_is_package(const struct airlock_info *info, size_t i)
{
	return info != NULL && i < info->nmounts && info->mounts[i].package;
}

/* What enforces the limits, or NULL. */
AIRLOCK_EXPORT const char *
airlock_info_resource_control(const struct airlock_info *info)
{
	return info != NULL ? info->resource_control : NULL;
}

/* One figure of the daemon's capacity, or 0. */
AIRLOCK_EXPORT uint32_t
airlock_info_capacity(const struct airlock_info *info, enum airlock_capacity what)
{
	if (info == NULL || (unsigned)what >= sizeof(info->capacity) / sizeof(info->capacity[0]))
		return 0;
	return info->capacity[what];
}

/* Which data-science packages runtime i sees, comma-separated, or NULL. */
AIRLOCK_EXPORT const char *
airlock_info_runtime_packages(const struct airlock_info *info, size_t i)
{
	if (info == NULL || info->packages == NULL || i >= info->nruntimes)
		return NULL;
	return info->packages[i];
}

/* The daemon's version string. */
AIRLOCK_EXPORT const char *
airlock_info_daemon_version(const struct airlock_info *info)
{
	return info != NULL ? info->daemon : NULL;
}

/* The daemon's protocol version. */
AIRLOCK_EXPORT uint32_t
airlock_info_protocol_version(const struct airlock_info *info)
{
	return info != NULL ? info->version : 0;
}

/* The uid the daemon sees. */
AIRLOCK_EXPORT uint32_t
airlock_info_uid(const struct airlock_info *info)
{
	return info != NULL ? info->uid : 0;
}

/* Number of runtimes. */
AIRLOCK_EXPORT size_t
airlock_info_runtime_count(const struct airlock_info *info)
{
	return info != NULL ? info->nruntimes : 0;
}

/* Name of runtime i. */
AIRLOCK_EXPORT const char *
airlock_info_runtime_name(const struct airlock_info *info, size_t i)
{
	if (info == NULL || i >= info->nruntimes)
		return NULL;
	return info->runtimes[i];
}

/* Default of a limit. */
AIRLOCK_EXPORT uint64_t
airlock_info_limit_default(const struct airlock_info *info, enum airlock_limit limit)
{
	if (info == NULL || (unsigned)limit >= PROTO_LIMIT_COUNT_)
		return 0;
	return info->defaults[limit];
}

/* Ceiling of a limit. */
AIRLOCK_EXPORT uint64_t
airlock_info_limit_ceiling(const struct airlock_info *info, enum airlock_limit limit)
{
	if (info == NULL || (unsigned)limit >= PROTO_LIMIT_COUNT_)
		return 0;
	return info->ceilings[limit];
}

/* Name of an outcome. */
AIRLOCK_EXPORT const char *
airlock_outcome_name(enum airlock_outcome outcome)
{
	if ((unsigned)outcome >= PROTO_OUTCOME_COUNT_)
		return NULL;
	return proto_outcome_name((enum proto_outcome)outcome);
}

/* Name of a limit. */
AIRLOCK_EXPORT const char *
airlock_limit_name(enum airlock_limit limit)
{
	if ((unsigned)limit >= PROTO_LIMIT_COUNT_)
		return NULL;
	return proto_limit_name((enum proto_limit)limit);
}

/* Look a limit up by name. */
AIRLOCK_EXPORT int
airlock_limit_from_name(const char *name, enum airlock_limit *ret)
{
	enum proto_limit l;

	if (name == NULL || ret == NULL)
		return -EINVAL;
	if (limit_from_name(name, strlen(name), &l) < 0)
		return -ENOENT;
	*ret = (enum airlock_limit)l;
	return 0;
}

/* Whether profile i has network = proxy. */
AIRLOCK_EXPORT bool
airlock_info_profile_network(const struct airlock_info *info, size_t i)
{
	return info != NULL && i < info->nprofiles && info->profiles[i].proxy;
}

/* Its allow-list entries: allow_hosts, then allow_private_hosts. */
AIRLOCK_EXPORT size_t
airlock_info_profile_allow_count(const struct airlock_info *info, size_t i)
{
	return info != NULL && i < info->nprofiles ? info->profiles[i].nallow : 0;
}

AIRLOCK_EXPORT const char *
airlock_info_profile_allow(const struct airlock_info *info, size_t i, size_t k, bool *ret_private)
{
	if (info == NULL || i >= info->nprofiles || k >= info->profiles[i].nallow)
		return NULL;
	if (ret_private != NULL)
		*ret_private = k >= info->profiles[i].npublic;
	return info->profiles[i].allow[k];
}
