/* result.c: the getters and frees of results and info objects
 * (airlock_result_*, airlock_info_*) and names; result_proto.c builds them. */
#include "airlock.h"
#include "export.h"
#include "getter.h"
#include "limit.h"
#include "result.h"
#include "strv.h"

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

/* Free n artifacts (or display items) and the array. */
void
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
	free(res->ename);
	free(res->evalue);
	free(res->traceback);
	free(res->error);
	free(res->network);
	free(res->tool_calls);
	free(res->advisories);
	free(res);
}

/* The advisories of the run (blocked_imports findings). */
GETTER(size_t, airlock_result_advisory_count, struct airlock_result, nadvisories, 0)

/* Advisory i, or NULL. */
AIRLOCK_EXPORT const char *
airlock_result_advisory(const struct airlock_result *res, size_t i)
{
	return res != NULL && i < res->nadvisories ? res->advisories[i] : NULL;
}

/* How many tool calls the result lists. */
GETTER(size_t, airlock_result_tool_call_count, struct airlock_result, ntool_calls, 0)

/* Tool call i's tool name. */
GETTER_AT(const char *, airlock_result_tool_call_name, struct airlock_result, ntool_calls,
	  tool_calls, name, NULL)

/* Tool call i's outcome, by name. */
AIRLOCK_EXPORT const char *
airlock_result_tool_call_outcome(const struct airlock_result *res, size_t i)
{
	return res != NULL && i < res->ntool_calls
		       ? proto_tool_outcome_name(res->tool_calls[i].outcome)
		       : NULL;
}

/* Tool call i's time to its answer. */
GETTER_AT(uint64_t, airlock_result_tool_call_ms, struct airlock_result, ntool_calls, tool_calls, ms,
	  0)

/* Tool calls past the listed ones. */
GETTER(uint64_t, airlock_result_tool_calls_omitted, struct airlock_result, tool_calls_omitted, 0)

/* How the run ended. */
GETTER(enum airlock_outcome, airlock_result_outcome, struct airlock_result, outcome,
       AIRLOCK_OUTCOME_ERROR)

/* The exit code. */
GETTER(int, airlock_result_exit_code, struct airlock_result, exit_code, 0)

/* The terminating signal. */
GETTER(int, airlock_result_signal, struct airlock_result, signal, 0)

/* Wall-clock milliseconds. */
GETTER(uint64_t, airlock_result_wall_ms, struct airlock_result, wall_ms, 0)

/* CPU milliseconds. */
GETTER(uint64_t, airlock_result_cpu_ms, struct airlock_result, cpu_ms, 0)

/* Peak memory, bytes. */
GETTER(uint64_t, airlock_result_memory_peak_bytes, struct airlock_result, memory_peak_bytes, 0)

/* Milliseconds spent queued. */
GETTER(uint64_t, airlock_result_queued_ms, struct airlock_result, queued_ms, 0)

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
GETTER(uint64_t, airlock_result_stdout_total, struct airlock_result, out[0].total, 0)

/* Total stderr bytes written. */
GETTER(uint64_t, airlock_result_stderr_total, struct airlock_result, out[1].total, 0)

/* Whether stdout was truncated. */
GETTER(bool, airlock_result_stdout_truncated, struct airlock_result, out[0].truncated, false)

/* Whether stderr was truncated. */
GETTER(bool, airlock_result_stderr_truncated, struct airlock_result, out[1].truncated, false)

/* What failed, for outcome ERROR. */
GETTER(const char *, airlock_result_error, struct airlock_result, error, NULL)

/* Number of artifacts. */
GETTER(size_t, airlock_result_artifact_count, struct airlock_result, nartifacts, 0)

/* Files left out of the artifacts, and their total size. */
GETTER(uint64_t, airlock_result_artifacts_omitted, struct airlock_result, artifacts_omitted, 0)

GETTER(uint64_t, airlock_result_artifacts_omitted_bytes, struct airlock_result,
       artifacts_omitted_bytes, 0)

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
GETTER_AT(const char *, airlock_result_artifact_name, struct airlock_result, nartifacts, artifacts,
	  name, NULL)

/* Size of artifact i in the workspace. */
GETTER_AT(uint64_t, airlock_result_artifact_size, struct airlock_result, nartifacts, artifacts,
	  size, 0)

/* Whether artifact i was truncated. */
GETTER_AT(bool, airlock_result_artifact_truncated, struct airlock_result, nartifacts, artifacts,
	  truncated, false)

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
GETTER(uint64_t, airlock_result_cell, struct airlock_result, cell, 0)

/* Whether a cell ran in the state the cells before it left. */
AIRLOCK_EXPORT enum airlock_cell_state
airlock_result_state(const struct airlock_result *res)
{
	return res != NULL && res->cell != 0 ? res->state : AIRLOCK_CELL_NONE;
}

/* The repr of a cell's trailing expression, or NULL. */
GETTER(const char *, airlock_result_value, struct airlock_result, value, NULL)

/* Whether a cell's interpreter ended during it (since 0.10). */
GETTER(bool, airlock_result_restarted, struct airlock_result, restarted, false)

/* The exception a cell raised: its name, str() and traceback, or NULL. */
GETTER(const char *, airlock_result_error_name, struct airlock_result, ename, NULL)
GETTER(const char *, airlock_result_error_value, struct airlock_result, evalue, NULL)
GETTER(const char *, airlock_result_traceback, struct airlock_result, traceback, NULL)

/* How many rich outputs a cell gave. */
GETTER(size_t, airlock_result_display_count, struct airlock_result, ndisplay, 0)

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

/* Whether rich output i is one of the trailing value's representations. */
AIRLOCK_EXPORT bool
airlock_result_display_is_value(const struct airlock_result *res, size_t i)
{
	if (res == NULL || i >= res->ndisplay || i >= 32)
		return false;
	return (res->value_display >> i) & 1u;
}

/* Free an info object. */
AIRLOCK_EXPORT void
airlock_info_free(struct airlock_info *info)
{
	size_t i, l;

	if (info == NULL)
		return;
	strv_free(info->runtimes, info->nruntimes);
	strv_free(info->packages, info->nruntimes);
	free(info->daemon);
	free(info->resource_control);
	for (i = 0; info->profiles != NULL && i < info->nprofiles; i++) {
		strv_free(info->profiles[i].allow, info->profiles[i].nallow);
		for (l = 0; l <= AIRLOCK_PROFILE_HIDDEN_PATHS; l++)
			strv_free(info->profiles[i].lists[l], info->profiles[i].nlists[l]);
	}
	free(info->profiles);
	free(info->mounts);
	free(info);
}

/* How many profiles the caller may use (0 from a daemon before profiles). */
GETTER(size_t, airlock_info_profile_count, struct airlock_info, nprofiles, 0)

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
GETTER(size_t, airlock_info_mount_count, struct airlock_info, nmounts, 0)

/* Mount i's name, or NULL. */
GETTER_AT(const char *, airlock_info_mount_name, struct airlock_info, nmounts, mounts, name, NULL)

/* Mount i's target in the sandbox, or NULL. */
GETTER_AT(const char *, airlock_info_mount_target, struct airlock_info, nmounts, mounts, target,
	  NULL)

/* Whether mount i is a package tree (exec allowed). */
GETTER_AT(bool, airlock_info_mount_is_package, struct airlock_info, nmounts, mounts, package, false)

/* What enforces the limits, or NULL. */
GETTER(const char *, airlock_info_resource_control, struct airlock_info, resource_control, NULL)

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
GETTER(const char *, airlock_info_daemon_version, struct airlock_info, daemon, NULL)

/* The daemon's protocol version. */
GETTER(uint32_t, airlock_info_protocol_version, struct airlock_info, version, 0)

/* The uid the daemon sees. */
GETTER(uint32_t, airlock_info_uid, struct airlock_info, uid, 0)

/* Number of runtimes. */
GETTER(size_t, airlock_info_runtime_count, struct airlock_info, nruntimes, 0)

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
GETTER_AT(bool, airlock_info_profile_network, struct airlock_info, nprofiles, profiles, proxy,
	  false)

/* Its allow-list entries: allow_hosts, then allow_private_hosts. */
GETTER_AT(size_t, airlock_info_profile_allow_count, struct airlock_info, nprofiles, profiles,
	  nallow, 0)

AIRLOCK_EXPORT const char *
airlock_info_profile_allow(const struct airlock_info *info, size_t i, size_t k, bool *ret_private)
{
	if (info == NULL || i >= info->nprofiles || k >= info->profiles[i].nallow)
		return NULL;
	if (ret_private != NULL)
		*ret_private = k >= info->profiles[i].npublic;
	return info->profiles[i].allow[k];
}
