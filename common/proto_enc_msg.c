/* proto_enc_msg.c: the encoder of each message (docs/protocol.md). */
#include "proto_enc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jsonscan.h"
#include "rules.h"

int
proto_encode_hello(uint32_t id, enum proto_type type, const struct proto_hello *h,
		   struct proto_out *ret)
{
	struct proto_enc e;
	bool ok = type == PROTO_HELLO_OK;

	if (h == NULL || ret == NULL || (type != PROTO_HELLO && !ok))
		return -EINVAL;
	enc_begin(&e, type, id, (ok || h->peer != NULL ? 2 : 1) + (h->nfeatures > 0 ? 1 : 0));
	enc_kv_uint(&e, "version", h->version);
	if (ok || h->peer != NULL)
		enc_kv_str(&e, ok ? "daemon" : "client", h->peer, PROTO_NAME_MAX, false);
	if (h->nfeatures > 0) {
		size_t i;

		if (h->nfeatures > PROTO_FEATURES_MAX)
			enc_fail(&e, -E2BIG);
		enc_rawstr(&e, "features", PROTO_STR_MAX);
		enc_array(&e, h->nfeatures);
		for (i = 0; e.err == 0 && i < h->nfeatures; i++)
			enc_rawstr(&e, h->features[i], PROTO_FEATURE_NAME_MAX);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_simple(uint32_t id, enum proto_type type, struct proto_out *ret)
{
	struct proto_enc e;

	if (ret == NULL || (type != PROTO_PING && type != PROTO_PONG && type != PROTO_INFO &&
			    type != PROTO_CANCEL_OK && type != PROTO_PS && type != PROTO_OK &&
			    type != PROTO_SESSION_LIST))
		return -EINVAL;
	enc_begin(&e, type, id, 0);
	return enc_finish(&e, ret);
}

/* info_ok.runtime_packages, when there are any: runtime -> [package]. */
static void
enc_info_packages(struct proto_enc *e, const struct proto_info *info)
{
	size_t i, k;

	if (info->nruntime_packages > 0) {
		enc_rawstr(e, "runtime_packages", PROTO_STR_MAX);
		enc_map(e, info->nruntime_packages);
	}
	for (i = 0; e->err == 0 && i < info->nruntime_packages; i++) {
		const struct proto_runtime_packages *p = &info->runtime_packages[i];

		if (p->runtime == NULL || p->runtime[0] == '\0' ||
		    p->npackages > PROTO_PACKAGES_MAX)
			enc_fail(e, -EINVAL);
		enc_rawstr(e, p->runtime, PROTO_RUNTIME_MAX);
		enc_array(e, p->npackages);
		for (k = 0; e->err == 0 && k < p->npackages; k++) {
			if (p->packages[k] != NULL && p->packages[k][0] == '\0')
				enc_fail(e, -EINVAL);
			enc_rawstr(e, p->packages[k], PROTO_PACKAGE_NAME_MAX);
		}
	}
}

/* One entry of info_ok.profiles. */
static void
enc_info_profile(struct proto_enc *e, const struct proto_profile *p)
{
	bool proxy = p->network != NULL && !strcmp(p->network, "proxy");

	enc_map(e, 6 + (p->network != NULL) + 2 * proxy + (p->nhidden_paths > 0) +
			   (p->nmounts > 0) + (p->nallow_mounts > 0) + (p->nblocked_imports > 0));
	enc_kv_profile(e, "name", p->name);
	enc_kv_bool(e, "default", p->is_default);
	enc_kv_limits(e, "limits", &p->limits);
	enc_kv_limits(e, "ceilings", &p->ceilings);
	if (p->network != NULL)
		enc_kv_oneof(e, "network", proto_netmodes, p->network);
	if (proxy) {
		enc_strlist(e, "allow_hosts", p->allow_hosts, p->nallow_hosts, PROTO_ALLOW_MAX,
			    PROTO_ALLOW_ENTRY_MAX);
		enc_strlist(e, "allow_private_hosts", p->allow_private_hosts,
			    p->nallow_private_hosts, PROTO_ALLOW_MAX, PROTO_ALLOW_ENTRY_MAX);
	}
	enc_kv_bool(e, "file_write", !p->no_file_write);
	enc_kv_bool(e, "subprocess", !p->no_subprocess);
	if (p->nhidden_paths > 0)
		enc_strlist(e, "hidden_paths", p->hidden_paths, p->nhidden_paths, PROTO_HIDDEN_MAX,
			    PROTO_HIDDEN_PATH_MAX);
	if (p->nmounts > 0)
		enc_namelist(e, "mounts", p->mounts, p->nmounts, DEC_MOUNTV);
	if (p->nallow_mounts > 0)
		enc_namelist(e, "allow_mounts", p->allow_mounts, p->nallow_mounts, DEC_MOUNTV);
	if (p->nblocked_imports > 0)
		enc_namelist(e, "blocked_imports", p->blocked_imports, p->nblocked_imports,
			     DEC_MODULEV);
}

/* info_ok.profiles, when there are any. */
static void
enc_info_profiles(struct proto_enc *e, const struct proto_info *info)
{
	size_t i;

	if (info->nprofiles > 0) {
		enc_rawstr(e, "profiles", PROTO_STR_MAX);
		enc_array(e, info->nprofiles);
	}
	for (i = 0; e->err == 0 && i < info->nprofiles; i++)
		enc_info_profile(e, &info->profiles[i]);
}

/* info_ok.mounts, when there are any: {name, target, package}. */
static void
enc_info_mounts(struct proto_enc *e, const struct proto_info *info)
{
	size_t i;

	if (info->nmounts > 0) {
		enc_rawstr(e, "mounts", PROTO_STR_MAX);
		enc_array(e, info->nmounts);
	}
	for (i = 0; e->err == 0 && i < info->nmounts; i++) {
		const struct proto_mount_info *m = &info->mounts[i];

		if (m->name == NULL || !rules_mount_name_valid(m->name))
			enc_fail(e, -EINVAL);
		enc_map(e, 3);
		enc_kv_str(e, "name", m->name, PROTO_MOUNT_MAX, true);
		enc_kv_str(e, "target", m->target, PROTO_NAME_MAX, true);
		enc_kv_bool(e, "package", m->package);
	}
}

int
proto_encode_info(uint32_t id, const struct proto_info *info, struct proto_out *ret)
{
	struct proto_enc e;

	if (info == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_INFO_OK, id,
		  6 + (info->resource_control != NULL) + (info->nruntime_packages > 0) +
			  (info->nprofiles > 0) + (info->nmounts > 0) + (info->max_runs != 0) +
			  (info->max_runs_per_uid != 0) + (info->max_interpreters != 0) +
			  (info->max_interpreters_per_uid != 0));
	if (info->nruntimes > PROTO_RUNTIMES_MAX || info->nruntime_packages > PROTO_RUNTIMES_MAX ||
	    info->nprofiles > PROTO_PROFILES_MAX || info->nmounts > PROTO_INFO_MOUNTS_MAX)
		enc_fail(&e, -E2BIG);
	if ((info->nprofiles > 0 && info->profiles == NULL) ||
	    (info->nmounts > 0 && info->mounts == NULL))
		enc_fail(&e, -EINVAL);
	enc_kv_str(&e, "daemon", info->daemon, PROTO_NAME_MAX, false);
	enc_kv_uint(&e, "version", info->version);
	enc_kv_uint(&e, "uid", info->uid);
	enc_strlist(&e, "runtimes", info->runtimes, info->nruntimes, PROTO_RUNTIMES_MAX,
		    PROTO_RUNTIME_MAX);
	enc_kv_limits(&e, "defaults", &info->defaults);
	enc_kv_limits(&e, "ceilings", &info->ceilings);
	if (info->resource_control != NULL)
		enc_kv_str(&e, "resource_control", info->resource_control, PROTO_FEATURE_NAME_MAX,
			   true);
	enc_info_packages(&e, info);
	enc_info_profiles(&e, info);
	enc_info_mounts(&e, info);
	/* The capacity: each key only when known (0 is no daemon's value). */
	if (info->max_runs != 0)
		enc_kv_uint(&e, "max_runs", info->max_runs);
	if (info->max_runs_per_uid != 0)
		enc_kv_uint(&e, "max_runs_per_uid", info->max_runs_per_uid);
	if (info->max_interpreters != 0)
		enc_kv_uint(&e, "max_interpreters", info->max_interpreters);
	if (info->max_interpreters_per_uid != 0)
		enc_kv_uint(&e, "max_interpreters_per_uid", info->max_interpreters_per_uid);
	return enc_finish(&e, ret);
}

/* run.env: names checked like the decoder checks them. */
static void
enc_env(struct proto_enc *e, const struct proto_env *env, size_t n)
{
	size_t i, klen;
	int r;

	if (n > PROTO_ENV_MAX || (n > 0 && env == NULL))
		enc_fail(e, n > PROTO_ENV_MAX ? -E2BIG : -EINVAL);
	enc_rawstr(e, "env", PROTO_STR_MAX);
	enc_map(e, n);
	/* env != NULL: e->err says so, but the analyzer cannot see into proto_enc.c */
	for (i = 0; e->err == 0 && env != NULL && i < n; i++) {
		klen = env[i].key != NULL ? strlen(env[i].key) : 0;
		r = rules_env_name_check(env[i].key, klen);
		if (r < 0)
			enc_fail(e, r);
		enc_rawstr(e, env[i].key, PROTO_ENV_KEY_MAX);
		enc_rawstr(e, env[i].value, PROTO_STR_MAX);
	}
}

/* run.tools. */
static void
enc_tools(struct proto_enc *e, const struct proto_tool *t, size_t n)
{
	size_t i;

	if (n > PROTO_TOOLS_MAX || t == NULL)
		enc_fail(e, t == NULL ? -EINVAL : -E2BIG);
	enc_rawstr(e, "tools", PROTO_STR_MAX);
	enc_array(e, n);
	/* t != NULL: as in enc_env() */
	for (i = 0; e->err == 0 && t != NULL && i < n; i++) {
		if (t[i].name == NULL || !rules_tool_name_check(t[i].name, strlen(t[i].name)) ||
		    (t[i].schema != NULL && jsonscan_object(t[i].schema, strlen(t[i].schema)) < 0))
			enc_fail(e, -EINVAL);
		enc_map(e, 1 + (t[i].description != NULL) + (t[i].schema != NULL));
		enc_kv_str(e, "name", t[i].name, PROTO_TOOL_NAME_MAX, true);
		if (t[i].description != NULL)
			enc_kv_str(e, "description", t[i].description, PROTO_TOOL_DESC_MAX, false);
		if (t[i].schema != NULL)
			enc_kv_str(e, "schema", t[i].schema, PROTO_TOOL_SCHEMA_MAX, true);
	}
}

/* result.tool_calls. */
static void
enc_tool_records(struct proto_enc *e, const struct proto_tool_record *r, size_t n)
{
	size_t i;

	enc_kv_array(e, "tool_calls", r, n, PROTO_TOOL_CALLS_LISTED_MAX);
	for (i = 0; e->err == 0 && i < n; i++) {
		if ((size_t)r[i].outcome >= PROTO_TOOL_OUTCOME_COUNT_)
			enc_fail(e, -EINVAL);
		enc_map(e, 5);
		enc_kv_str(e, "tool", r[i].tool, PROTO_TOOL_NAME_MAX, false);
		enc_rawstr(e, "outcome", PROTO_STR_MAX);
		enc_rawstr(e, proto_tool_outcome_name(r[i].outcome), PROTO_NAME_MAX);
		enc_kv_uint(e, "ms", r[i].ms);
		enc_kv_uint(e, "args_bytes", r[i].args_bytes);
		enc_kv_uint(e, "result_bytes", r[i].result_bytes);
	}
}

/* run.files. */
static void
enc_files(struct proto_enc *e, const struct proto_file *files, size_t n)
{
	size_t i;

	enc_kv_array(e, "files", files, n, PROTO_FILES_MAX);
	for (i = 0; e->err == 0 && i < n; i++) {
		enc_map(e, 2);
		enc_kv_str(e, "name", files[i].name, PROTO_NAME_MAX, true);
		enc_kv_blob(e, "data", &files[i].data);
	}
}

int
proto_encode_run(uint32_t id, const struct proto_run *run, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (run == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_RUN, id,
		  2 + run->code.present + (run->argc > 0) + (run->nenv > 0) +
			  run->stdin_data.present + (run->nfiles > 0) + run->file_bundle.present +
			  (run->session != NULL) + run->stream + (run->profile != NULL) +
			  (run->nmounts > 0) + (run->ntools > 0) + run->cell + run->figures_svg +
			  run->ipython);
	enc_kv_str(&e, "runtime", run->runtime, PROTO_RUNTIME_MAX, true);
	if (run->code.present)
		enc_kv_blob(&e, "code", &run->code);
	if (run->argc > 0) {
		if (run->argc > PROTO_ARGV_MAX || run->argv == NULL)
			enc_fail(&e, run->argv == NULL ? -EINVAL : -E2BIG);
		enc_rawstr(&e, "argv", PROTO_STR_MAX);
		enc_array(&e, run->argc);
		/* argv != NULL: as in enc_env() */
		for (i = 0; e.err == 0 && run->argv != NULL && i < run->argc; i++)
			enc_rawstr(&e, run->argv[i], PROTO_STR_MAX);
	}
	if (run->nenv > 0)
		enc_env(&e, run->env, run->nenv);
	if (run->stdin_data.present)
		enc_kv_blob(&e, "stdin", &run->stdin_data);
	if (run->nfiles > 0)
		enc_files(&e, run->files, run->nfiles);
	if (run->file_bundle.present)
		enc_kv_blob(&e, "file_bundle", &run->file_bundle);
	enc_kv_limits(&e, "limits", &run->limits);
	if (run->session != NULL)
		enc_kv_session(&e, "session", run->session);
	if (run->stream)
		enc_kv_bool(&e, "stream", true);
	if (run->profile != NULL)
		enc_kv_profile(&e, "profile", run->profile);
	if (run->nmounts > 0) {
		if (run->nmounts > PROTO_MOUNTS_MAX)
			enc_fail(&e, -E2BIG);
		enc_rawstr(&e, "mounts", PROTO_STR_MAX);
		enc_array(&e, run->nmounts);
		for (i = 0; e.err == 0 && i < run->nmounts; i++) {
			if (run->mounts[i] == NULL || !rules_mount_name_valid(run->mounts[i]))
				enc_fail(&e, -EINVAL);
			else
				enc_rawstr(&e, run->mounts[i], PROTO_MOUNT_MAX);
		}
	}
	if (run->ntools > 0)
		enc_tools(&e, run->tools, run->ntools);
	if (run->cell)
		enc_kv_bool(&e, "cell", true);
	if (run->figures_svg)
		enc_kv_bool(&e, "figures_svg", true);
	if (run->ipython)
		enc_kv_bool(&e, "ipython", true);
	return enc_finish(&e, ret);
}

/* A stream or artifact's data must agree with its total and flag. */
static bool
enc_partial_ok(const struct proto_blob *b, uint64_t total, bool truncated)
{
	return b->len <= total && truncated == (b->len < total);
}

/* result.artifacts. */
static void
enc_artifacts(struct proto_enc *e, const char *key, const struct proto_artifact *a, size_t n,
	      size_t max)
{
	size_t i;

	enc_kv_array(e, key, a, n, max);
	for (i = 0; e->err == 0 && i < n; i++) {
		if (!enc_partial_ok(&a[i].data, a[i].size, a[i].truncated))
			enc_fail(e, -EINVAL);
		enc_map(e, 4);
		enc_kv_str(e, "name", a[i].name, PROTO_NAME_MAX, true);
		enc_kv_uint(e, "size", a[i].size);
		enc_kv_bool(e, "truncated", a[i].truncated);
		enc_kv_blob(e, "data", &a[i].data);
	}
}

/* result.network: bounds checked like the decoder checks them. */
static void
enc_network(struct proto_enc *e, const struct proto_network *n)
{
	size_t i;

	if (n->ncontacted > PROTO_NET_REPORT_MAX || n->nrefusals > PROTO_NET_REPORT_MAX ||
	    (n->nrefusals > 0 && n->refusals == NULL)) {
		enc_fail(e, -E2BIG);
		return;
	}
	enc_rawstr(e, "network", PROTO_STR_MAX);
	enc_map(e, 6);
	enc_kv_uint(e, "bytes_up", n->bytes_up);
	enc_kv_uint(e, "bytes_down", n->bytes_down);
	enc_kv_uint(e, "connections", n->connections);
	enc_kv_uint(e, "refused", n->refused);
	enc_rawstr(e, "contacted", PROTO_STR_MAX);
	enc_array(e, n->ncontacted);
	for (i = 0; e->err == 0 && i < n->ncontacted; i++)
		enc_rawstr(e, n->contacted[i], PROTO_NET_TARGET_MAX);
	enc_rawstr(e, "refusals", PROTO_STR_MAX);
	enc_array(e, n->nrefusals);
	for (i = 0; e->err == 0 && i < n->nrefusals; i++) {
		enc_map(e, 2);
		enc_kv_str(e, "host", n->refusals[i].host, PROTO_NET_TARGET_MAX, false);
		enc_kv_str(e, "reason", n->refusals[i].reason, PROTO_NET_REASON_MAX, true);
	}
}

int
proto_encode_result(uint32_t id, const struct proto_result *res, struct proto_out *ret)
{
	static const char *const keys[2][3] = {{"stdout", "stdout_bytes", "stdout_truncated"},
					       {"stderr", "stderr_bytes", "stderr_truncated"}};
	enum proto_outcome oc;
	struct proto_enc e;
	bool has_tools;
	size_t i;

	if (res == NULL || ret == NULL || (size_t)res->outcome >= PROTO_OUTCOME_COUNT_)
		return -EINVAL;
	oc = res->outcome;
	has_tools = res->ntool_calls > 0 || res->tool_calls_omitted > 0;
	if (res->cell != 0 && res->state == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_RESULT, id,
		  14 + 2 * has_tools + (res->nadvisories > 0) +
			  (res->cell != 0 ? 2 + res->restarted + 3 * (res->ename != NULL) +
						    (res->value != NULL) + (res->value_display != 0)
					  : 0) +
			  (res->ndisplay > 0) +
			  (oc == PROTO_OUTCOME_EXITED || oc == PROTO_OUTCOME_SIGNALED ||
			   oc == PROTO_OUTCOME_ERROR) +
			  (res->network != NULL));
	enc_rawstr(&e, "outcome", PROTO_STR_MAX);
	enc_rawstr(&e, proto_outcome_name(oc), PROTO_NAME_MAX);
	if (oc == PROTO_OUTCOME_EXITED)
		enc_kv_int(&e, "exit_code", res->exit_code);
	if (oc == PROTO_OUTCOME_SIGNALED)
		enc_kv_int(&e, "signal", res->signal);
	if (oc == PROTO_OUTCOME_ERROR)
		enc_kv_str(&e, "error", res->error, PROTO_STR_MAX, false);
	enc_kv_uint(&e, "wall_ms", res->wall_ms);
	enc_kv_uint(&e, "cpu_ms", res->cpu_ms);
	enc_kv_uint(&e, "memory_peak_bytes", res->memory_peak_bytes);
	enc_kv_uint(&e, "queued_ms", res->queued_ms);
	for (i = 0; i < 2; i++) {
		const struct proto_stream_out *s = &res->out[i];

		if (!enc_partial_ok(&s->data, s->total, s->truncated))
			enc_fail(&e, -EINVAL);
		enc_kv_blob(&e, keys[i][0], &s->data);
		enc_kv_uint(&e, keys[i][1], s->total);
		enc_kv_bool(&e, keys[i][2], s->truncated);
	}
	enc_artifacts(&e, "artifacts", res->artifacts, res->nartifacts, PROTO_ARTIFACTS_MAX);
	enc_kv_uint(&e, "artifacts_omitted", res->artifacts_omitted);
	enc_kv_uint(&e, "artifacts_omitted_bytes", res->artifacts_omitted_bytes);
	if (res->network != NULL)
		enc_network(&e, res->network);
	if (has_tools) {
		enc_tool_records(&e, res->tool_calls, res->ntool_calls);
		enc_kv_uint(&e, "tool_calls_omitted", res->tool_calls_omitted);
	}
	if (res->cell != 0) {
		enc_kv_uint(&e, "cell", res->cell);
		enc_kv_oneof(&e, "state", proto_cell_states, res->state);
		if (res->restarted)
			enc_kv_bool(&e, "restarted", true);
		if (res->ename != NULL) {
			enc_kv_str(&e, "ename", res->ename, PROTO_ENAME_MAX, true);
			enc_kv_str(&e, "evalue", res->evalue != NULL ? res->evalue : "",
				   PROTO_EVALUE_MAX, false);
			enc_kv_str(&e, "traceback", res->traceback != NULL ? res->traceback : "",
				   PROTO_TRACEBACK_MAX, false);
		}
		if (res->value != NULL)
			enc_kv_str(&e, "value", res->value, PROTO_VALUE_MAX, false);
		/* Bits name display items: none past them. */
		if (res->ndisplay < 32 && (res->value_display >> res->ndisplay) != 0)
			enc_fail(&e, -EINVAL);
		if (res->value_display != 0)
			enc_kv_uint(&e, "value_display", res->value_display);
	}
	/* A cell's rich outputs, or a python run's figures (issue 30). */
	if (res->ndisplay > 0)
		enc_artifacts(&e, "display", res->display, res->ndisplay, PROTO_DISPLAY_MAX);
	if (res->nadvisories > 0)
		enc_strlist(&e, "advisories", res->advisories, res->nadvisories,
			    PROTO_ADVISORIES_MAX, PROTO_ADVISORY_MAX);
	return enc_finish(&e, ret);
}

int
proto_encode_cancel(uint32_t id, const struct proto_cancel *c, struct proto_out *ret)
{
	struct proto_enc e;

	if (c == NULL || ret == NULL || (c->request == 0) == (c->run == 0))
		return -EINVAL;
	enc_begin(&e, PROTO_CANCEL, id, 1);
	if (c->request != 0)
		enc_kv_uint(&e, "request", c->request);
	else
		enc_kv_uint(&e, "run", c->run);
	return enc_finish(&e, ret);
}

int
proto_encode_ps(uint32_t id, const struct proto_ps *ps, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (ps == NULL || ret == NULL || (ps->nruns > 0 && ps->runs == NULL))
		return -EINVAL;
	if (ps->nruns > PROTO_PS_MAX)
		return -E2BIG;
	/* more: only when some are left out, so that a full reply is as before. */
	enc_begin(&e, PROTO_PS_OK, id, 1 + (ps->more > 0));
	if (ps->more > 0)
		enc_kv_uint(&e, "more", ps->more);
	enc_kv_array(&e, "runs", ps->runs, ps->nruns, PROTO_PS_MAX);
	for (i = 0; e.err == 0 && i < ps->nruns; i++) {
		const struct proto_ps_entry *p = &ps->runs[i];

		enc_map(&e, 6);
		enc_kv_uint(&e, "run", p->run);
		enc_kv_uint(&e, "uid", p->uid);
		enc_kv_int(&e, "pid", p->pid);
		enc_kv_str(&e, "runtime", p->runtime, PROTO_RUNTIME_MAX, true);
		enc_kv_str(&e, "state", p->state, PROTO_NAME_MAX, true);
		enc_kv_uint(&e, "elapsed_ms", p->elapsed_ms);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_session_open(uint32_t id, const struct proto_session_open *o, struct proto_out *ret)
{
	struct proto_enc e;

	if (o == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_SESSION_OPEN, id,
		  4 + (o->profile != NULL) + (o->interpreter != NULL) + o->detached +
			  o->background + o->archive.present);
	enc_kv_uint(&e, "workspace_bytes", o->workspace_bytes);
	enc_kv_uint(&e, "idle_timeout_ms", o->idle_timeout_ms);
	enc_kv_uint(&e, "lifetime_ms", o->lifetime_ms);
	enc_kv_limits(&e, "limits", &o->limits);
	if (o->profile != NULL)
		enc_kv_profile(&e, "profile", o->profile);
	if (o->interpreter != NULL)
		enc_kv_str(&e, "interpreter", o->interpreter, PROTO_RUNTIME_MAX, true);
	/* Only when asked: a daemon before 0.10 ignores it anyway. */
	if (o->detached)
		enc_kv_bool(&e, "detached", true);
	if (o->background)
		enc_kv_bool(&e, "background", true);
	if (o->archive.present)
		enc_kv_blob(&e, "archive", &o->archive);
	return enc_finish(&e, ret);
}

int
proto_encode_session(uint32_t id, enum proto_type type, const char *session, struct proto_out *ret)
{
	struct proto_enc e;

	if (ret == NULL || (type != PROTO_SESSION_OK && type != PROTO_SESSION_CLOSE &&
			    type != PROTO_SESSION_PS && type != PROTO_SESSION_SAVE))
		return -EINVAL;
	enc_begin(&e, type, id, 1);
	enc_kv_session(&e, "session", session);
	return enc_finish(&e, ret);
}

int
proto_encode_session_extend(uint32_t id, const struct proto_session_extend *x,
			    struct proto_out *ret)
{
	struct proto_enc e;

	if (x == NULL || ret == NULL || x->lifetime_ms == 0)
		return -EINVAL;
	enc_begin(&e, PROTO_SESSION_EXTEND, id, 2);
	enc_kv_session(&e, "session", x->session);
	enc_kv_uint(&e, "lifetime_ms", x->lifetime_ms);
	return enc_finish(&e, ret);
}

int
proto_encode_session_list(uint32_t id, const struct proto_session_list *l, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (l == NULL || ret == NULL || (l->nsessions > 0 && l->sessions == NULL))
		return -EINVAL;
	if (l->nsessions > PROTO_SESSIONS_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_SESSION_LIST_OK, id, 1 + (l->more > 0));
	if (l->more > 0)
		enc_kv_uint(&e, "more", l->more);
	enc_kv_array(&e, "sessions", l->sessions, l->nsessions, PROTO_SESSIONS_MAX);
	for (i = 0; e.err == 0 && i < l->nsessions; i++) {
		const struct proto_session_entry *s = &l->sessions[i];

		enc_map(&e, 5 + (s->interpreter != NULL) + s->background);
		enc_kv_session(&e, "session", s->session);
		enc_kv_uint(&e, "age_ms", s->age_ms);
		enc_kv_uint(&e, "idle_ms", s->idle_ms);
		enc_kv_uint(&e, "runs", s->runs);
		enc_kv_oneof(&e, "state", proto_session_states, s->state);
		if (s->interpreter != NULL)
			enc_kv_str(&e, "interpreter", s->interpreter, PROTO_RUNTIME_MAX, true);
		if (s->background)
			enc_kv_bool(&e, "background", true);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_session_ps_ok(uint32_t id, const struct proto_process_list *l, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (l == NULL || ret == NULL || (l->nprocesses > 0 && l->processes == NULL))
		return -EINVAL;
	if (l->nprocesses > PROTO_PROCESSES_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_SESSION_PS_OK, id, 2);
	enc_kv_array(&e, "processes", l->processes, l->nprocesses, PROTO_PROCESSES_MAX);
	for (i = 0; e.err == 0 && i < l->nprocesses; i++) {
		const struct proto_process *p = &l->processes[i];

		enc_map(&e, 4);
		enc_kv_uint(&e, "pid", p->pid);
		enc_kv_str(&e, "name", p->name, PROTO_PROCESS_NAME_MAX, false);
		enc_kv_uint(&e, "cpu_ms", p->cpu_ms);
		enc_kv_uint(&e, "memory_bytes", p->memory_bytes);
	}
	enc_kv_bool(&e, "truncated", l->truncated);
	return enc_finish(&e, ret);
}

int
proto_encode_process_stop(uint32_t id, const struct proto_process_stop *s, struct proto_out *ret)
{
	struct proto_enc e;

	if (s == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_PROCESS_STOP, id, 2);
	enc_kv_session(&e, "session", s->session);
	enc_kv_uint(&e, "pid", s->pid);
	return enc_finish(&e, ret);
}

int
proto_encode_file_op(uint32_t id, enum proto_type type, const struct proto_file_op *op,
		     struct proto_out *ret)
{
	bool list = type == PROTO_FILE_LIST, wr = type == PROTO_FILE_WRITE;
	struct proto_enc e;

	if (op == NULL || ret == NULL ||
	    (!list && !wr && type != PROTO_FILE_READ && type != PROTO_FILE_DELETE))
		return -EINVAL;
	/* file_list may leave the path out (NULL or ""): the workspace itself. */
	enc_begin(&e, type, id, 1 + (!list || op->path != NULL) + wr);
	enc_kv_session(&e, "session", op->session);
	if (!list || op->path != NULL)
		enc_kv_str(&e, "path", op->path, PROTO_PATH_MAX, !list);
	if (wr)
		enc_kv_blob(&e, "data", &op->data);
	return enc_finish(&e, ret);
}

int
proto_encode_file_data(uint32_t id, const struct proto_file_data *d, struct proto_out *ret)
{
	struct proto_enc e;

	if (d == NULL || ret == NULL)
		return -EINVAL;
	enc_begin(&e, PROTO_FILE_DATA, id, 3);
	if (!enc_partial_ok(&d->data, d->size, d->truncated))
		enc_fail(&e, -EINVAL);
	enc_kv_blob(&e, "data", &d->data);
	enc_kv_uint(&e, "size", d->size);
	enc_kv_bool(&e, "truncated", d->truncated);
	return enc_finish(&e, ret);
}

int
proto_encode_file_list(uint32_t id, const struct proto_file_list *l, struct proto_out *ret)
{
	struct proto_enc e;
	size_t i;

	if (l == NULL || ret == NULL || (l->nentries > 0 && l->entries == NULL))
		return -EINVAL;
	if (l->nentries > PROTO_LIST_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_FILE_LIST_OK, id, 2);
	enc_kv_bool(&e, "truncated", l->truncated);
	enc_kv_array(&e, "entries", l->entries, l->nentries, PROTO_LIST_MAX);
	for (i = 0; e.err == 0 && i < l->nentries; i++) {
		const struct proto_file_entry *f = &l->entries[i];

		enc_map(&e, 4);
		enc_kv_str(&e, "name", f->name, PROTO_NAME_MAX, true);
		enc_kv_oneof(&e, "kind", proto_file_kinds, f->kind);
		enc_kv_uint(&e, "size", f->size);
		enc_kv_uint(&e, "mtime_ms", f->mtime_ms);
	}
	return enc_finish(&e, ret);
}

int
proto_encode_stream(uint32_t id, const struct proto_stream *s, struct proto_out *ret)
{
	struct proto_enc e;

	/* Inline only: a present blob with an fd is a memfd, which a stream never is. */
	if (s == NULL || ret == NULL || !s->data.present || s->data.fd >= 0 || s->data.len == 0 ||
	    s->data.data == NULL)
		return -EINVAL;
	if (s->data.len > PROTO_INLINE_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_STREAM, id, 2);
	enc_kv_oneof(&e, "stream", proto_stream_names, s->stream);
	enc_kv_blob(&e, "data", &s->data);
	return enc_finish(&e, ret);
}

int
proto_encode_tool_call(uint32_t id, const struct proto_tool_call *c, struct proto_out *ret)
{
	struct proto_enc e;

	if (c == NULL || ret == NULL || c->call == 0 || !c->args.present || c->tool == NULL ||
	    !rules_tool_name_check(c->tool, strlen(c->tool)))
		return -EINVAL;
	if (c->args.len > PROTO_TOOL_BYTES_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_TOOL_CALL, id, 3);
	enc_kv_uint(&e, "call", c->call);
	enc_kv_str(&e, "tool", c->tool, PROTO_TOOL_NAME_MAX, true);
	enc_kv_blob(&e, "args", &c->args);
	return enc_finish(&e, ret);
}

int
proto_encode_tool_reply(uint32_t id, const struct proto_tool_reply *r, struct proto_out *ret)
{
	struct proto_enc e;

	if (r == NULL || ret == NULL || r->call == 0 || r->result.present != r->ok ||
	    (r->error != NULL) == r->ok || (r->refused && r->ok))
		return -EINVAL;
	if (r->result.len > PROTO_TOOL_BYTES_MAX)
		return -E2BIG;
	enc_begin(&e, PROTO_TOOL_REPLY, id, 2 + 1 + r->refused);
	enc_kv_uint(&e, "call", r->call);
	enc_kv_bool(&e, "ok", r->ok);
	if (r->ok)
		enc_kv_blob(&e, "result", &r->result);
	else
		enc_kv_str(&e, "error", r->error, PROTO_TOOL_ERROR_MAX, false);
	if (r->refused)
		enc_kv_bool(&e, "refused", true);
	return enc_finish(&e, ret);
}

int
proto_encode_error(uint32_t id, enum proto_error code, const char *message, struct proto_out *ret)
{
	char buf[PROTO_MSG_PRINTABLE_MAX + 1];
	struct proto_enc e;

	if (ret == NULL || code <= PROTO_ERR_NONE || code >= PROTO_ERR_COUNT_)
		return -EINVAL;
	/* An error path must not fail on a long message: cut it to the bound. */
	snprintf(buf, sizeof(buf), "%s", message != NULL ? message : proto_error_message(code));
	enc_begin(&e, PROTO_ERROR, id, 2);
	enc_rawstr(&e, "code", PROTO_STR_MAX);
	enc_rawstr(&e, proto_error_name(code), PROTO_NAME_MAX);
	enc_kv_str(&e, "message", buf, PROTO_MSG_PRINTABLE_MAX, false);
	return enc_finish(&e, ret);
}
