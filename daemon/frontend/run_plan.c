/*
 * run_plan.c: a run's plan: the request checked against the config and
 * packed into a sealed memfd for the spawner (ipc/plan.h), and the plan of
 * a runtime's pre-started interpreter (run_pool.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "plan.h"
#include "run.h"
#include "run_files.h"
#include "run_tools.h"

#include "run_boot.h"

/* Find an executable for a bare argv[0] the way a shell would, in /usr. */
static int
run_resolve_exec(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin",
					   "/sbin"};
	size_t i;

	if (strchr(name, '/') != NULL)
		return snprintf(buf, len, "%s", name) < (int)len ? 0 : -ENAMETOOLONG;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if ((size_t)snprintf(buf, len, "%s/%s", dirs[i], name) >= len)
			return -ENAMETOOLONG;
		if (access(buf, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/*
 * Does a run of rt start through run_boot_py (docs/design-interpreters.md,
 * "figures of a plain run")? A python runtime whose argv is PROGRAM, then
 * only clusters of CPython's options that take no argument, then {code}:
 * `-c BOOT` can go before {code} and the run is what it would have been
 * (BOOT runs the file as __main__). Any other shape (-m, -X opt, a wrapper
 * script) is left as it is, without figures; so is -x (skip the script's
 * first line), which BOOT's own read of the file would not honour.
 */
bool
run_plan_boots(const struct config_runtime *rt)
{
	size_t i;

	if (rt->is_exec || rt->language != RULES_LANG_PYTHON)
		return false;
	for (i = 1; i < rt->argc && strcmp(rt->argv[i], "{code}") != 0; i++)
		if (rt->argv[i][0] != '-' || rt->argv[i][1] == '\0' ||
		    strspn(rt->argv[i] + 1, "bBdEhiIOqsSuvVRP") != strlen(rt->argv[i] + 1))
			return false;
	return i < rt->argc;
}

/* The argv of the run's code: exec's own, or the runtime's with {code}
 * replaced by the code's path (preceded by -c BOOT when boot:
 * run_plan_boots). argv has PLAN_ARGV_MAX + 1 entries. */
static int
run_plan_argv(const struct config_runtime *rt, const struct proto_run *req, bool boot,
	      const char **argv, size_t *ret_argc, char *code_path, size_t code_len,
	      char *exec_path, size_t exec_len, char *why, size_t whylen)
{
	size_t argc = 0, i;

	if (rt->is_exec) {
		if (req->argc == 0) {
			snprintf(why, whylen, "runtime exec needs argv");
			return -EINVAL;
		}
		if (run_resolve_exec(req->argv[0], exec_path, exec_len) < 0) {
			snprintf(why, whylen,
				 "exec: %s: not found in /usr/local/bin, /usr/bin, /bin",
				 req->argv[0]);
			return -ENOENT;
		}
		argv[argc++] = exec_path;
		for (i = 1; i < req->argc; i++)
			argv[argc++] = req->argv[i];
	} else {
		if (!req->code.present) {
			snprintf(why, whylen, "runtime %s needs code", rt->name);
			return -EINVAL;
		}
		snprintf(code_path, code_len, PLAN_CODE_DIR "/%s", rt->code_name);
		for (i = 0; i < rt->argc; i++) {
			bool code = strcmp(rt->argv[i], "{code}") == 0;

			if (code && boot) {
				argv[argc++] = "-c";
				argv[argc++] = run_boot_py;
			}
			argv[argc++] = code ? code_path : rt->argv[i];
		}
		for (i = 0; i < req->argc && argc < PLAN_ARGV_MAX; i++)
			argv[argc++] = req->argv[i];
	}
	argv[argc] = NULL;
	*ret_argc = argc;
	return 0;
}

/* Fill the plan's input from the request and what was built for it. */
static void
run_plan_input(const struct daemon *d, const struct proto_run *req, const struct config_runtime *rt,
	       const struct config_profile *prof, const struct proto_limits *lim, uint32_t flags,
	       uint32_t mounts, const struct plan_env *env, const struct run_files *files,
	       struct plan_input *in)
{
	bool session = (flags & PLAN_F_SESSION) != 0;

	in->envp = env->envp;
	in->envc = env->envc;
	in->code_name = rt->is_exec ? NULL : rt->code_name;
	in->code = req->code.data;
	in->code_len = req->code.present ? req->code.len : 0;
	in->stdin_data = req->stdin_data.present
				 ? (req->stdin_data.data ? req->stdin_data.data : (const void *)"")
				 : NULL;
	in->stdin_len = req->stdin_data.present ? req->stdin_data.len : 0;
	in->file_names = files->names;
	in->file_data = files->data;
	in->file_len = files->len;
	in->file_mode = files->mode;
	/* A session run's files are written by the session's keeper instead. */
	in->nfiles = session ? 0 : files->n;
	in->flags = flags | (req->ntools > 0 ? PLAN_F_TOOLS : 0);
	if (prof->network_proxy) {
		in->flags |= PLAN_F_EGRESS;
		in->egress_port = d->cfg->egress_port;
	}
	in->hostname = d->cfg->hostname;
	in->limits = lim;
	in->mounts = mounts;
	in->cwd = rt->cwd[0] != '\0' ? rt->cwd : NULL;
	in->rootspec_gen = d->rootspec.generation;
	/* hidden_paths: absent in the sandbox (sandbox_fs.c, phase two). */
	in->hidden = (const char *const *)prof->hidden;
	in->nhidden = prof->nhidden;
}

int
run_make_plan(struct daemon *d, const struct proto_run *req, uint32_t flags,
	      const struct config_profile *prof, const struct proto_limits *lim, uint32_t mounts,
	      int *ret_fd, enum proto_error *ret_code, char *why, size_t whylen)
{
	bool session = (flags & PLAN_F_SESSION) != 0;
	const struct config_runtime *rt = config_runtime_find(d->cfg, req->runtime);
	const char *argv[PLAN_ARGV_MAX + 1];
	struct plan_env env = {0};
	struct run_files files = {0};
	char code_path[128], exec_path[PROTO_STR_MAX + 16];
	struct plan_input in;
	size_t argc = 0;
	int r;

	*ret_code = PROTO_ERR_BAD_REQUEST;
	if (rt == NULL) {
		*ret_code = PROTO_ERR_UNKNOWN_RUNTIME;
		snprintf(why, whylen, "no runtime named \"%s\"", req->runtime);
		return -ENOENT;
	}
	/* An interpreter session's driver (PLAN_F_CELLS) hooks pyplot itself:
	 * its interpreter starts without the run start-up. */
	r = run_plan_argv(rt, req, run_plan_boots(rt) && !(flags & PLAN_F_CELLS), argv, &argc,
			  code_path, sizeof(code_path), exec_path, sizeof(exec_path), why, whylen);
	if (r < 0)
		return r;

	r = plan_env_build(&env, (const char *const *)rt->env, rt->nenv, req->env, req->nenv);
	/* A run's SVG figures: read by run_boot_py (a cell's go in cell_start). */
	if (r == 0 && req->figures_svg && !req->cell)
		r = plan_env_set(&env, "AIRLOCK_FIGURES=svg");
	if (r == 0 && req->ntools > 0)
		r = run_tools_env(req, &env);
	if (r < 0) {
		*ret_code = PROTO_ERR_INTERNAL;
		snprintf(why, whylen, "cannot build the environment: %s", strerror(-r));
		goto out;
	}

	if (prof->network_proxy && plan_env_proxy(&env, d->cfg->egress_port) < 0)
		fatalx("out of memory");

	r = run_files_collect(req, session, lim->v[PROTO_LIMIT_WORKSPACE_BYTES], &files, ret_code,
			      why, whylen);
	if (r < 0)
		goto out;

	memset(&in, 0, sizeof(in));
	in.argv = argv;
	in.argc = argc;
	run_plan_input(d, req, rt, prof, lim, flags, mounts, &env, &files, &in);
	r = plan_build(&in, ret_fd);
	if (r < 0) {
		*ret_code = PROTO_ERR_INTERNAL;
		snprintf(why, whylen, "cannot build the plan: %s", strerror(-r));
	}
out:
	run_files_free(&files);
	plan_env_free(&env);
	return r;
}

int
run_prestart_plan(struct daemon *d, const struct config_runtime *rt, int *ret_fd)
{
	static const struct config_profile none; /* no network, no switches */
	struct proto_run req;
	enum proto_error code;
	char why[256];
	int r;

	memset(&req, 0, sizeof(req));
	req.runtime = rt->name;
	req.code.present = true;
	req.code.data = (const uint8_t *)"";
	r = run_make_plan(d, &req, 0, &none, &d->cfg->ceilings, 0, ret_fd, &code, why, sizeof(why));
	if (r < 0)
		log_warnx("runtime %s: cannot make its pre-start plan: %s", rt->name, why);
	return r;
}
