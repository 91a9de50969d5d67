/* request.c: building run requests (airlock_run_req_*) and encoding them. */
#include "airlock.h"
#include "export.h"
#include "getter.h"
#include "request.h"
#include "jsonscan.h"
#include "rules.h"
#include "strv.h"

#include "bundle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct request_bytes {
	uint8_t *data;
	size_t len;
	bool present;
};

struct request_file {
	char *name;
	struct request_bytes data;
	uint32_t mode; /* 0644 or 0755 */
};

struct airlock_run_req {
	char *runtime;
	struct request_bytes code;
	char **argv;
	size_t argc;
	char **env_keys;
	char **env_values;
	size_t nenv;
	struct request_bytes stdin_data;
	struct request_file *files;
	size_t nfiles;
	uint64_t limits[PROTO_LIMIT_COUNT_];
	char session[PROTO_SESSION_ID_LEN + 1];		    /* "" = a one-shot run */
	char profile[PROTO_PROFILE_MAX + 1];		    /* "" = the daemon's default */
	char mounts[PROTO_MOUNTS_MAX][PROTO_MOUNT_MAX + 1]; /* [mount] names asked */
	size_t nmounts;
	bool stream;
	struct proto_tool tools[PROTO_TOOLS_MAX]; /* owned strings */
	size_t ntools;
	bool cell;	  /* a cell of an interpreter session */
	bool figures_svg; /* a cell's figures as SVG */
	bool ipython;	  /* a cell through IPython */
};

/* Free the bytes held by b and mark it absent. */
static void
request_bytes_clear(struct request_bytes *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->present = false;
}

/* Copy len bytes of buf into b, replacing what b held. */
static int
request_bytes_set(struct request_bytes *b, const void *buf, size_t len)
{
	uint8_t *copy = NULL;

	if (buf == NULL && len > 0)
		return -EINVAL;
	if ((uint64_t)len > PROTO_BLOB_MAX)
		return -E2BIG;
	if (len > 0) {
		copy = malloc(len);
		if (copy == NULL)
			return -ENOMEM;
		memcpy(copy, buf, len);
	}
	request_bytes_clear(b);
	b->data = copy;
	b->len = len;
	b->present = true;
	return 0;
}

/* int fn(struct airlock_run_req *req, const void *buf, size_t len): a copy
 * of buf into req->field (request_bytes_set()), or -EINVAL for NULL. One
 * line each below its comment, as getter.h's SETTER. */
#define REQUEST_BYTES_SETTER(fn, field)                                                            \
	AIRLOCK_EXPORT int fn(struct airlock_run_req *req, const void *buf, size_t len)            \
	{                                                                                          \
		if (req == NULL)                                                                   \
			return -EINVAL;                                                            \
		return request_bytes_set(&req->field, buf, len);                                   \
	}

/* Point a protocol blob at b (inline; the codec moves it to a memfd if big). */
static struct proto_blob
request_bytes_blob(const struct request_bytes *b)
{
	static const uint8_t empty[1];
	struct proto_blob blob = {.data = b->data != NULL ? b->data : empty,
				  .len = b->len,
				  .fd = -1,
				  .present = b->present};

	return blob;
}

/* Create an empty run request. */
AIRLOCK_EXPORT int
airlock_run_req_new(struct airlock_run_req **ret)
{
	struct airlock_run_req *req;

	if (ret == NULL)
		return -EINVAL;
	req = calloc(1, sizeof(*req));
	if (req == NULL)
		return -ENOMEM;
	req->runtime = strdup("python");
	if (req->runtime == NULL) {
		free(req);
		return -ENOMEM;
	}
	*ret = req;
	return 0;
}

/* Free a run request and everything it copied. */
AIRLOCK_EXPORT void
airlock_run_req_free(struct airlock_run_req *req)
{
	size_t i;

	if (req == NULL)
		return;
	free(req->runtime);
	request_bytes_clear(&req->code);
	strv_free(req->argv, req->argc);
	strv_free(req->env_keys, req->nenv);
	strv_free(req->env_values, req->nenv);
	request_bytes_clear(&req->stdin_data);
	for (i = 0; i < req->nfiles; i++) {
		free(req->files[i].name);
		request_bytes_clear(&req->files[i].data);
	}
	free(req->files);
	for (i = 0; i < req->ntools; i++) {
		free((char *)req->tools[i].name);
		free((char *)req->tools[i].description);
		free((char *)req->tools[i].schema);
	}
	free(req);
}

/* Set the runtime name. */
AIRLOCK_EXPORT int
airlock_run_req_set_runtime(struct airlock_run_req *req, const char *name)
{
	char *copy;
	size_t len;

	if (req == NULL || name == NULL)
		return -EINVAL;
	len = strlen(name);
	if (len == 0 || len > PROTO_RUNTIME_MAX)
		return -EINVAL;
	copy = strdup(name);
	if (copy == NULL)
		return -ENOMEM;
	free(req->runtime);
	req->runtime = copy;
	return 0;
}

/* Set the code to run. */
REQUEST_BYTES_SETTER(airlock_run_req_set_code, code)

/* Append one argument to argv. */
AIRLOCK_EXPORT int
airlock_run_req_add_arg(struct airlock_run_req *req, const char *arg)
{
	char **argv;
	char *copy;

	if (req == NULL || arg == NULL)
		return -EINVAL;
	if (req->argc >= PROTO_ARGV_MAX || strlen(arg) > PROTO_STR_MAX)
		return -E2BIG;
	argv = realloc(req->argv, (req->argc + 1) * sizeof(*argv));
	if (argv == NULL)
		return -ENOMEM;
	req->argv = argv;
	copy = strdup(arg);
	if (copy == NULL)
		return -ENOMEM;
	req->argv[req->argc++] = copy;
	return 0;
}

/* Set one environment variable, replacing an earlier value of the key. */
AIRLOCK_EXPORT int
airlock_run_req_set_env(struct airlock_run_req *req, const char *key, const char *value)
{
	char **keys, **values;
	char *kcopy = NULL, *vcopy = NULL;
	size_t i;
	int r;

	if (req == NULL || key == NULL || value == NULL)
		return -EINVAL;
	/* The daemon's rule, so that the encoder never meets a name it refuses. */
	r = rules_env_name_check(key, strlen(key));
	if (r < 0)
		return r;
	if (strlen(value) > PROTO_STR_MAX)
		return -E2BIG;
	vcopy = strdup(value);
	if (vcopy == NULL)
		return -ENOMEM;
	for (i = 0; i < req->nenv; i++)
		if (strcmp(req->env_keys[i], key) == 0) {
			free(req->env_values[i]);
			req->env_values[i] = vcopy;
			return 0;
		}
	r = -E2BIG;
	if (req->nenv >= PROTO_ENV_MAX)
		goto out;
	r = -ENOMEM;
	kcopy = strdup(key);
	if (kcopy == NULL)
		goto out;
	keys = realloc(req->env_keys, (req->nenv + 1) * sizeof(*keys));
	if (keys == NULL)
		goto out;
	req->env_keys = keys;
	values = realloc(req->env_values, (req->nenv + 1) * sizeof(*values));
	if (values == NULL)
		goto out;
	req->env_values = values;
	/* Ownership of both copies moves into the request here. */
	req->env_keys[req->nenv] = kcopy;
	req->env_values[req->nenv] = vcopy;
	req->nenv++;
	kcopy = vcopy = NULL;
	r = 0;
out:
	free(kcopy);
	free(vcopy);
	return r;
}

/* Set what the code reads on stdin. */
REQUEST_BYTES_SETTER(airlock_run_req_set_stdin, stdin_data)

/* Add one input file. */
AIRLOCK_EXPORT int
airlock_run_req_add_file(struct airlock_run_req *req, const char *name, const void *buf, size_t len)
{
	return airlock_run_req_add_file_mode(req, name, buf, len, 0644);
}

/* Add one input file with its mode. */
AIRLOCK_EXPORT int
airlock_run_req_add_file_mode(struct airlock_run_req *req, const char *name, const void *buf,
			      size_t len, unsigned int mode)
{
	struct request_file *files;
	struct request_file f = {0};
	size_t i;
	int r;

	if (req == NULL || name == NULL || (buf == NULL && len > 0) || bundle_mode_check(mode) < 0)
		return -EINVAL;
	if (rules_input_name_check(name) < 0)
		return -EINVAL;
	for (i = 0; i < req->nfiles; i++)
		if (strcmp(req->files[i].name, name) == 0)
			return -EEXIST;
	if (req->nfiles >= PROTO_RUN_FILES_MAX)
		return -E2BIG;
	r = request_bytes_set(&f.data, buf, len);
	if (r < 0)
		goto out;
	f.mode = mode;
	r = -ENOMEM;
	f.name = strdup(name);
	if (f.name == NULL)
		goto out;
	files = realloc(req->files, (req->nfiles + 1) * sizeof(*files));
	if (files == NULL)
		goto out;
	req->files = files;
	/* Ownership of f moves into the request here. */
	req->files[req->nfiles++] = f;
	f = (struct request_file){0};
	r = 0;
out:
	free(f.name);
	request_bytes_clear(&f.data);
	return r;
}

/* Copy name into buf if valid (which bounds its length to buf's), or empty
 * buf for NULL. */
static int
request_name_set(char *buf, const char *name, bool (*valid)(const char *))
{
	if (name == NULL)
		buf[0] = '\0';
	else if (valid(name))
		strcpy(buf, name);
	else
		return -EINVAL;
	return 0;
}

/* Set one limit. */
AIRLOCK_EXPORT int
airlock_run_req_set_limit(struct airlock_run_req *req, enum airlock_limit limit, uint64_t value)
{
	if (req == NULL || (unsigned)limit >= PROTO_LIMIT_COUNT_)
		return -EINVAL;
	req->limits[limit] = value;
	return 0;
}

/* Run in a session's workspace, or (NULL) in a fresh one. */
AIRLOCK_EXPORT int
airlock_run_req_set_session(struct airlock_run_req *req, const char *id)
{
	return req != NULL ? request_name_set(req->session, id, rules_session_id_str_valid)
			   : -EINVAL;
}

/* Ask for one more of the daemon's [mount] sections. */
AIRLOCK_EXPORT int
airlock_run_req_add_mount(struct airlock_run_req *req, const char *name)
{
	if (req == NULL || name == NULL || !rules_mount_name_valid(name))
		return -EINVAL;
	if (req->nmounts == PROTO_MOUNTS_MAX)
		return -E2BIG;
	strcpy(req->mounts[req->nmounts++], name);
	return 0;
}

/* Name the profile the run uses, or NULL for the daemon's default. */
AIRLOCK_EXPORT int
airlock_run_req_set_profile(struct airlock_run_req *req, const char *name)
{
	return req != NULL ? request_name_set(req->profile, name, rules_profile_name_valid)
			   : -EINVAL;
}

/* Ask for stream events or not. */
SETTER(airlock_run_req_set_stream, struct airlock_run_req, bool, stream)

/* Make the request a cell of its session's interpreter. */
SETTER(airlock_run_req_set_cell, struct airlock_run_req, bool, cell)

/* Ask a cell's matplotlib figures as SVG. */
SETTER(airlock_run_req_set_figures_svg, struct airlock_run_req, bool, figures_svg)

/* Ask a cell run through IPython (magics, !cmd) when the runtime has it. */
SETTER(airlock_run_req_set_ipython, struct airlock_run_req, bool, ipython)

/* Declare a tool the run's code may call. */
AIRLOCK_EXPORT int
airlock_run_req_add_tool(struct airlock_run_req *req, const char *name, const char *description,
			 const char *schema_json)
{
	struct proto_tool t = {0};

	if (req == NULL || name == NULL || !rules_tool_name_check(name, strlen(name)) ||
	    (schema_json != NULL && jsonscan_object(schema_json, strlen(schema_json)) < 0))
		return -EINVAL;
	if ((description != NULL && strlen(description) > PROTO_TOOL_DESC_MAX) ||
	    (schema_json != NULL && strlen(schema_json) > PROTO_TOOL_SCHEMA_MAX))
		return -E2BIG;
	if (request_has_tool(req, name))
		return -EEXIST;
	if (req->ntools == PROTO_TOOLS_MAX)
		return -E2BIG;
	t.name = strdup(name);
	t.description = description != NULL ? strdup(description) : NULL;
	t.schema = schema_json != NULL ? strdup(schema_json) : NULL;
	if (t.name == NULL || (description != NULL && t.description == NULL) ||
	    (schema_json != NULL && t.schema == NULL)) {
		free((char *)t.name);
		free((char *)t.description);
		free((char *)t.schema);
		return -ENOMEM;
	}
	req->tools[req->ntools++] = t;
	return 0;
}

/* Whether req declares the tool name. */
bool
request_has_tool(const struct airlock_run_req *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->ntools; i++)
		if (strcmp(req->tools[i].name, name) == 0)
			return true;
	return false;
}

/* Whether req declares tools. */
bool
request_tools(const struct airlock_run_req *req)
{
	return req->ntools > 0;
}

/* Whether req asks for stream events. */
bool
request_stream(const struct airlock_run_req *req)
{
	return req->stream;
}

/* The request's files as one sealed memfd in the bundle format (bundle.h). */
static int
request_bundle(const struct airlock_run_req *req, struct proto_blob *ret)
{
	struct bundle_file *bf;
	uint64_t len;
	size_t i;
	int fd, r;

	bf = calloc(req->nfiles, sizeof(*bf));
	if (bf == NULL)
		return -ENOMEM;
	for (i = 0; i < req->nfiles; i++) {
		bf[i].name = req->files[i].name;
		bf[i].mode = req->files[i].mode;
		bf[i].data = req->files[i].data.data;
		bf[i].len = req->files[i].data.len;
	}
	r = bundle_encode_memfd(bf, req->nfiles, PROTO_RUN_FILES_MAX, PROTO_BLOB_MAX, &fd, &len);
	free(bf);
	if (r < 0)
		return r;
	*ret = (struct proto_blob){.data = NULL, .len = (size_t)len, .fd = fd, .present = true};
	return 0;
}

/* Encode a run request for the wire, its files as "files" or as a bundle. */
static int
request_encode_as(const struct airlock_run_req *req, uint32_t id, bool stream, bool bundle,
		  struct proto_out *ret)
{
	struct proto_run run = {0};
	struct proto_env *env = NULL;
	struct proto_file *files = NULL;
	size_t i;
	int r;

	run.file_bundle.fd = -1;
	r = -ENOMEM;
	if (req->nenv > 0) {
		env = calloc(req->nenv, sizeof(*env));
		if (env == NULL)
			goto out;
	}
	if (req->nfiles > 0 && !bundle) {
		files = calloc(req->nfiles, sizeof(*files));
		if (files == NULL)
			goto out;
	}
	run.runtime = req->runtime;
	run.code = request_bytes_blob(&req->code);
	run.argv = (const char **)req->argv;
	run.argc = req->argc;
	for (i = 0; i < req->nenv; i++) {
		env[i].key = req->env_keys[i];
		env[i].value = req->env_values[i];
	}
	run.env = env;
	run.nenv = req->nenv;
	run.stdin_data = request_bytes_blob(&req->stdin_data);
	if (bundle) {
		r = request_bundle(req, &run.file_bundle);
		if (r < 0)
			goto out;
	} else {
		for (i = 0; i < req->nfiles; i++) {
			files[i].name = req->files[i].name;
			files[i].data = request_bytes_blob(&req->files[i].data);
			files[i].data.present = true;
		}
		run.files = files;
		run.nfiles = req->nfiles;
	}
	memcpy(run.limits.v, req->limits, sizeof(run.limits.v));
	run.session = req->session[0] != '\0' ? req->session : NULL;
	run.profile = req->profile[0] != '\0' ? req->profile : NULL;
	for (i = 0; i < req->nmounts; i++)
		run.mounts[i] = req->mounts[i];
	run.nmounts = req->nmounts;
	run.stream = stream;
	run.cell = req->cell;
	run.figures_svg = req->figures_svg;
	run.ipython = req->ipython;
	run.tools = req->ntools > 0 ? (struct proto_tool *)req->tools : NULL;
	run.ntools = req->ntools;
	r = proto_encode_run(id, &run, ret);
out:
	if (run.file_bundle.fd >= 0)
		close(run.file_bundle.fd);
	free(env);
	free(files);
	return r;
}

/*
 * Encode a run request for the wire. Files that do not fit one packet as
 * "files" (more than PROTO_FILES_MAX, or more bytes or fds than a packet
 * carries) go as one file_bundle, to a daemon that takes it. A session run
 * never bundles: the daemon refuses a bundle there.
 */
int
request_encode(const struct airlock_run_req *req, uint32_t id, bool stream, bool bundle_ok,
	       struct proto_out *ret)
{
	bool can_bundle = bundle_ok && req->session[0] == '\0';
	int r = -E2BIG;
	size_t i;

	/* "files" says no mode: an executable file needs the bundle. */
	for (i = 0; i < req->nfiles; i++)
		if (req->files[i].mode != 0644)
			return can_bundle ? request_encode_as(req, id, stream, true, ret)
					  : -EOPNOTSUPP;
	if (req->nfiles <= PROTO_FILES_MAX)
		r = request_encode_as(req, id, stream, false, ret);
	if (r == -E2BIG && req->nfiles > 0 && can_bundle)
		r = request_encode_as(req, id, stream, true, ret);
	return r;
}
