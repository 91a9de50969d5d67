/* mcp/tools.c: the tool table (names, descriptions, schemas) and tools/list. */
#include "mcp.h"
#include "airlock.h"
#include "../cli/net.h"
#include "../cli/util.h"
#include "clock.h"
#include "content.h"
#include "server.h"
#include "rules.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

/* ---- What the sandbox offers ------------------------------------------ */

/* Run code in runtime (blocking, bounded) and return its stdout, or NULL. */
static char *
mcp_probe_run(struct mcp *m, const char *runtime, const char *code)
{
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	char *text = NULL;
	const void *out;
	size_t len;
	int r;

	r = airlock_run_req_new(&req);
	if (r == 0)
		r = airlock_run_req_set_runtime(req, runtime);
	if (r == 0)
		r = airlock_run_req_set_code(req, code, strlen(code));
	if (r == 0)
		r = airlock_run_req_set_limit(req, AIRLOCK_LIMIT_WALL_MS, MCP_PROBE_MS / 2);
	if (r == 0) {
		airlock_conn_set_timeout(m->conn, MCP_PROBE_MS);
		r = airlock_run(m->conn, req, &res);
		airlock_conn_set_timeout(m->conn, 60000);
	}
	if (r == 0 && airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
	    airlock_result_exit_code(res) == 0) {
		airlock_result_stdout(res, &out, &len);
		text = mcp_oom(mcp_text_clean(out, len, 2000, NULL));
		while (text[0] != '\0' && strchr(" \n", text[strlen(text) - 1]) != NULL)
			text[strlen(text) - 1] = '\0';
	} else if (r < 0)
		mcp_log("probe of %s: %s", runtime, strerror(-r));
	airlock_result_free(res);
	airlock_run_req_free(req);
	return text;
}

/*
 * Find out once what the runtimes offer (the Python version and its
 * packages beyond the standard library; the commands the shell finds), so
 * that the tool descriptions tell the model what it can use instead of
 * letting it try `pip install` in a sandbox without network.
 */
static void
mcp_probe(struct mcp *m)
{
	char why[512];

	if (m->probed || mcp_connect(m, why, sizeof(why)) < 0)
		return;
	m->probed = true;
	m->env_python = mcp_probe_run(
		m, "python",
		"import sys, pkgutil\n"
		"std = set(getattr(sys, 'stdlib_module_names', ()))\n"
		"names = sorted({x.name for x in pkgutil.iter_modules()\n"
		"                if not x.name.startswith('_') and x.name not in std})\n"
		"print('Python %d.%d.%d' % sys.version_info[:3])\n"
		"print(', '.join(names[:60]) + (', ...' if len(names) > 60 else ''))\n");
	m->env_sh = mcp_probe_run(m, "sh",
				  "for c in python3 perl awk sed grep find sort jq bc dc tar gzip "
				  "xz zip unzip sqlite3 git gcc cc make node curl; do "
				  "command -v $c >/dev/null 2>&1 && printf '%s ' $c; done; echo");
	mcp_collect(m); /* what the runs in flight sent meanwhile */
}

/* ---- The tool list ---------------------------------------------------- */

/* Input and output schemas shared by the run tools. */
#define MCP_RUN_LIMITS                                                                             \
	"\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"                         \
	"\"description\":\"Wall-clock limit of the run in seconds (default: the daemon's, "        \
	"usually 10). Raising it also raises the CPU-time limit to the same value unless "         \
	"cpu_seconds is given.\"},"                                                                \
	"\"cpu_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"                             \
	"\"description\":\"CPU-time limit in seconds, all processes and threads together "         \
	"(default: the daemon's, usually 5)\"},"                                                   \
	"\"memory_mb\":{\"type\":\"number\",\"exclusiveMinimum\":0,"                               \
	"\"description\":\"Memory limit in MiB (default: the daemon's, usually 256)\"},"           \
	"\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\","                         \
	"\"description\":\"Run in this session's workspace (from session_open) instead of a "      \
	"fresh one\"}"
#define MCP_RUN_FILES                                                                              \
	"\"files\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},"           \
	"\"description\":\"Input files placed in the working directory before the code runs: "     \
	"relative file name to text content (at most 64)\"},"
#define MCP_RUN_OUTPUT                                                                             \
	"{\"type\":\"object\",\"properties\":{"                                                    \
	"\"outcome\":{\"type\":\"string\",\"description\":\"exited, signaled, wall_limit, "        \
	"cpu_limit, memory_limit, process_limit, error or cancelled\"},"                           \
	"\"exit_code\":{\"type\":[\"integer\",\"null\"]},"                                         \
	"\"signal\":{\"type\":[\"integer\",\"null\"]},"                                            \
	"\"wall_seconds\":{\"type\":\"number\"},\"cpu_seconds\":{\"type\":\"number\"},"            \
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"                       \
	"\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"},"         \
	"\"output_cut\":{\"type\":\"boolean\"},"                                                   \
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"            \
	"\"name\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}},"                         \
	"\"required\":[\"name\",\"size\"]}},"                                                      \
	"\"files_omitted\":{\"type\":\"integer\",\"description\":\"files left out: past the "      \
	"artifacts limit\"},\"files_omitted_bytes\":{\"type\":\"integer\"},"                       \
	"\"session\":{\"type\":[\"string\",\"null\"]},"                                            \
	"\"network\":{\"type\":\"object\",\"description\":\"a profile with network = proxy: "      \
	"bytes_up, bytes_down, connections, refused, contacted (host:port), refusals "             \
	"({host, reason})\"},"                                                                     \
	"\"advisories\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"                      \
	"\"description\":\"what the daemon's advisory checks found (a profile's blocked "          \
	"imports); the run was not refused\"}},"                                                   \
	"\"required\":[\"outcome\",\"exit_code\",\"wall_seconds\",\"cpu_seconds\",\"stdout\","     \
	"\"stderr\",\"files\"]}"
#define MCP_SESSION_ARG "\"session\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{32}$\"}"

/* The tools: name, title, description, schemas, annotations (readOnly,
 * destructive, idempotent; none is open-world: the sandbox has no network),
 * handler (struct mcp_tool: server.h). */
const struct mcp_tool mcp_tools[] = {
	{"run_python", "Run Python code in a sandbox",
	 "Run Python 3 code as a script in a fresh, single-use sandbox: no network, no access to "
	 "the host, time, CPU and memory limited. Returns the exit code, stdout and stderr (cut "
	 "to fit, saying what was cut) and the files the code created: images (PNG, JPEG, GIF, "
	 "WebP) as image content, other files as embedded resources; matplotlib figures "
	 "(plt.show(), or left open at the end) as images too. A limit that fires is an "
	 "error naming the limit. Print what you want to see. Calls run in parallel. With "
	 "'session' the code runs in that session's workspace, whose files persist between "
	 "runs (variables do not).",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"code\":{\"type\":\"string\",\"description\":\"Python 3 source to run as a "
	 "script\"},\"runtime\":{\"type\":\"string\",\"description\":\"python: the standard "
	 "library only; python-site: also the system's packages (numpy, pandas, matplotlib, "
	 "scipy where installed); or another Python runtime of the daemon's. Default: the "
	 "server's --python-runtime, else python\"},"
	 "\"figure_format\":{\"type\":\"string\",\"enum\":[\"png\",\"svg\"],"
	 "\"description\":\"The run's matplotlib figures (plt.show(), or left open at its "
	 "end) as PNG images (the default) or SVG (embedded resources)\"}," MCP_RUN_FILES
		 MCP_RUN_LIMITS "},\"required\":[\"code\"],\"additionalProperties\":false}",
	 MCP_RUN_OUTPUT, false, false, false, mcp_tool_run_python},
	{"run_shell", "Run a shell script in a sandbox",
	 "Run a POSIX shell script (/bin/sh) in a fresh, single-use sandbox: no network, no "
	 "access to the host, time, CPU and memory limited. Returns the exit code, stdout and "
	 "stderr (cut to fit, saying what was cut) and the files the script created, like "
	 "run_python. Calls run in parallel. With 'session' it runs in that session's "
	 "workspace.",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"command\":{\"type\":\"string\",\"description\":\"Shell script to run with "
	 "/bin/sh\"}," MCP_RUN_FILES MCP_RUN_LIMITS
	 "},\"required\":[\"command\"],\"additionalProperties\":false}",
	 MCP_RUN_OUTPUT, false, false, false, mcp_tool_run_shell},
	{"run_python_cell", "Run a Python cell (state kept)",
	 "Run Python code in this server's one persistent interpreter, like a notebook cell: "
	 "variables, imports and functions stay from one call to the next (started on the "
	 "first call, in a sandbox without network; time, CPU and memory limited). Returns "
	 "stdout, stderr, the repr of a trailing expression as 'value', and matplotlib "
	 "figures left open as images. A cell over its time limit is interrupted "
	 "(KeyboardInterrupt) and the variables stay; one that does not stop, or runs out of "
	 "memory, restarts the interpreter empty (the result says so). Calls run one at a "
	 "time. The interpreter is a session: the answer names its id, for read_file and "
	 "list_files on the files cells write. display(obj) and objects with _repr_png_, "
	 "_repr_svg_, _repr_html_ or _repr_markdown_ show as images or text. reset_python "
	 "starts over (needed to change the runtime or the profile).",
	 "{\"type\":\"object\",\"properties\":{"
	 "\"code\":{\"type\":\"string\",\"description\":\"Python 3 code, run in the "
	 "interpreter's globals\"},"
	 "\"runtime\":{\"type\":\"string\",\"description\":\"The interpreter's runtime "
	 "when it starts (python: the standard library only; python-site: also the system's "
	 "packages, numpy, matplotlib...). Default: the server's --python-runtime, else "
	 "python\"},"
	 "\"figure_format\":{\"type\":\"string\",\"enum\":[\"png\",\"svg\"],"
	 "\"description\":\"The cell's matplotlib figures as PNG images (the default) or SVG "
	 "(embedded resources)\"},"
	 "\"timeout_seconds\":{\"type\":\"number\",\"description\":\"Wall-clock limit of "
	 "this cell\"},\"cpu_seconds\":{\"type\":\"number\",\"description\":\"CPU-time "
	 "limit of this cell\"}},\"required\":[\"code\"],\"additionalProperties\":false}",
	 NULL, false, false, false, mcp_tool_run_python_cell},
	{"reset_python", "Reset the Python interpreter",
	 "End run_python_cell's interpreter: every variable is gone, and the next "
	 "run_python_cell starts a new, empty one. With background true, the processes its "
	 "cells start (a web server, a long job) keep running between cells, so a later cell "
	 "can talk to them on 127.0.0.1, until the next reset (if the daemon's profile "
	 "allows it; else the next run_python_cell says so).",
	 "{\"type\":\"object\",\"properties\":{\"background\":{\"type\":\"boolean\","
	 "\"description\":\"Keep the processes cells start running between cells\"}},"
	 "\"additionalProperties\":false}",
	 NULL, false, true, true, mcp_tool_reset_python},
	{"list_processes", "List the Python interpreter's background processes",
	 "The processes run_python_cell's cells started that keep running between cells (after "
	 "reset_python with background true): pid, name, cpu time and memory of each.",
	 "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	 "{\"type\":\"object\",\"properties\":{\"processes\":{\"type\":\"array\"}},"
	 "\"required\":[\"processes\"]}",
	 true, false, true, mcp_tool_list_processes},
	{"stop_process", "Stop a background process",
	 "Stop (kill) one of the Python interpreter's background processes by the pid "
	 "list_processes gave; returns the processes left.",
	 "{\"type\":\"object\",\"properties\":{\"pid\":{\"type\":\"integer\","
	 "\"description\":\"The process to stop\"}},\"required\":[\"pid\"],"
	 "\"additionalProperties\":false}",
	 "{\"type\":\"object\",\"properties\":{\"processes\":{\"type\":\"array\"}},"
	 "\"required\":[\"processes\"]}",
	 false, true, false, mcp_tool_stop_process},
	{"session_open", "Open a session",
	 "Open a session: a workspace that keeps its files between runs (each run is still a "
	 "fresh sandbox), under a profile (its limits, switches and network) if one is "
	 "given. Returns the session id to pass as 'session' to the other tools. "
	 "Close it with session_close when done. With 'archive' (what session_save returned) "
	 "the workspace starts with those files.",
	 "{\"type\":\"object\",\"properties\":{\"archive\":{\"type\":\"string\","
	 "\"description\":\"base64 of a tar archive (session_save's)\"}},"
	 "\"additionalProperties\":false}",
	 "{\"type\":\"object\",\"properties\":{\"session\":{\"type\":\"string\"}},"
	 "\"required\":[\"session\"]}",
	 false, false, false, mcp_tool_session_open},
	{"session_extend", "Extend a session's lease",
	 "Keep a session longer: it now ends 'seconds' from now (at most the daemon's "
	 "maximum lifetime). Sessions also survive a restart of the daemon.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"seconds\":{\"type\":\"number\",\"description\":\"From now\"}},"
	 "\"required\":[\"session\",\"seconds\"],\"additionalProperties\":false}",
	 NULL, false, false, true, mcp_tool_session_extend},
	{"session_save", "Save a session's workspace",
	 "The session's workspace as a tar archive (an embedded resource, base64): keep it, "
	 "and pass it as 'archive' to session_open to start a new session from it.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG "},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 NULL, true, false, true, mcp_tool_session_save},
	{"session_close", "Close a session",
	 "Close a session: its files are deleted and a run in it is stopped.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG "},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 NULL, false, true, true, mcp_tool_session_close},
	{"write_file", "Write a file into a session",
	 "Write a text file into a session's workspace (replacing it; parent directories are "
	 "made). The path is relative to the workspace.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative path in the workspace\"},"
	 "\"content\":{\"type\":\"string\",\"description\":\"The file's text\"}},"
	 "\"required\":[\"session\",\"path\",\"content\"],\"additionalProperties\":false}",
	 NULL, false, true, true, mcp_tool_write_file},
	{"read_file", "Read a file of a session",
	 "Read a file of a session's workspace: text (cut to fit, saying so), an image as image "
	 "content, other files as an embedded resource.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative path in the workspace\"}},"
	 "\"required\":[\"session\",\"path\"],\"additionalProperties\":false}",
	 NULL, true, false, true, mcp_tool_read_file},
	{"list_files", "List files of a session",
	 "List a directory of a session's workspace (default: its top): kind, size and name "
	 "of each entry.",
	 "{\"type\":\"object\",\"properties\":{" MCP_SESSION_ARG ","
	 "\"path\":{\"type\":\"string\",\"description\":\"Relative directory (default: the "
	 "workspace)\"}},"
	 "\"required\":[\"session\"],\"additionalProperties\":false}",
	 "{\"type\":\"object\",\"properties\":{\"entries\":{\"type\":\"array\",\"items\":{"
	 "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
	 "\"kind\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}}}},"
	 "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"entries\",\"truncated\"]}",
	 true, false, true, mcp_tool_list_files},
	{NULL, NULL, NULL, NULL, NULL, false, false, false, NULL},
};

/*
 * What the run tools' descriptions say of the network: none, or, for each
 * profile of this user with network = proxy, the hosts its runs may reach
 * through the daemon's proxy. A new string.
 */
static char *
mcp_network_note(const struct mcp *m, const char *none)
{
	size_t i, k, n = m->info != NULL ? airlock_info_profile_count(m->info) : 0;
	char *text = mcp_oom(strdup(none)), *next;

	for (i = 0; i < n; i++) {
		if (!airlock_info_profile_network(m->info, i))
			continue;
		if (asprintf(&next,
			     "%s With profile '%s' the code may reach, through the daemon's "
			     "HTTP proxy (HTTP_PROXY and HTTPS_PROXY are set), only:",
			     text, airlock_info_profile_name(m->info, i)) < 0)
			mcp_oom(NULL);
		free(text);
		text = next;
		for (k = 0; k < airlock_info_profile_allow_count(m->info, i); k++) {
			if (asprintf(&next, "%s%s %s", text, k > 0 ? "," : "",
				     airlock_info_profile_allow(m->info, i, k, NULL)) < 0)
				mcp_oom(NULL);
			free(text);
			text = next;
		}
		if (asprintf(&next, "%s.", text) < 0)
			mcp_oom(NULL);
		free(text);
		text = next;
	}
	return text;
}

/* A tool's description, with what the probe found for the run tools. */
static char *
mcp_tool_description(const struct mcp *m, const struct mcp_tool *t)
{
	char *text, *net;
	int r = -1;

	if (strcmp(t->name, "run_python") == 0 && m->env_python != NULL) {
		const char *nl = strchr(m->env_python, '\n');
		const char *packages = nl != NULL ? nl + 1 : "";

		r = asprintf(&text, "%s Environment: %.*s%s%s.%s", t->description,
			     nl != NULL ? (int)(nl - m->env_python) : (int)strlen(m->env_python),
			     m->env_python,
			     packages[0] != '\0'
				     ? " with the standard library and these packages: "
				     : " with the standard library only (no third-party "
				       "packages)",
			     packages,
			     (net = mcp_network_note(
				      m, " There is no network: nothing can be installed (no pip "
					 "install).")));
		free(net);
	} else if (strcmp(t->name, "run_shell") == 0 && m->env_sh != NULL) {
		r = asprintf(&text, "%s Commands found on the PATH include: %s.%s", t->description,
			     m->env_sh[0] != '\0' ? m->env_sh : "(none probed)",
			     (net = mcp_network_note(m, " There is no network: nothing can be "
							"downloaded or installed.")));
		free(net);
	}
	if (r < 0)
		text = mcp_oom(strdup(t->description));
	return text;
}

/* Append to *text (an asprintf string) what profile i lets a run do: its main
 * limits, its policy switches, its network, its mounts and advisory checks. */
static void
mcp_profile_text(const struct mcp *m, size_t i, char **text)
{
	const struct airlock_info *info = m->info;
	size_t k, nb = airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS);
	size_t nm = airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_MOUNTS);
	size_t nh = airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS);
	char *next;

	if (asprintf(&next,
		     "%s '%s': %" PRIu64 " s wall, %" PRIu64 " MiB memory, %" PRIu64
		     " processes; %s; %s; %s",
		     *text, airlock_info_profile_name(info, i),
		     airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_WALL_MS) / 1000,
		     airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_MEMORY_BYTES) >> 20,
		     airlock_info_profile_limit(info, i, AIRLOCK_LIMIT_PROCESSES),
		     airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_FILE_WRITE) == 0
			     ? "file_write off (workspace and /tmp read-only: output only through "
			       "stdout and stderr)"
			     : "file_write on",
		     airlock_info_profile_switch(info, i, AIRLOCK_SWITCH_SUBPROCESS) == 0
			     ? "subprocess off (one process: fork, threads and exec fail)"
			     : "subprocess on",
		     airlock_info_profile_network(info, i) ? "network through the daemon's proxy"
							   : "no network") < 0)
		mcp_oom(NULL);
	free(*text);
	*text = next;
	for (k = 0; k < nm; k++) {
		if (asprintf(&next, "%s%s%s", *text, k == 0 ? "; read-only mounts: " : ", ",
			     airlock_info_profile_list(info, i, AIRLOCK_PROFILE_MOUNTS, k)) < 0)
			mcp_oom(NULL);
		free(*text);
		*text = next;
	}
	for (k = 0; k < nh; k++) {
		if (asprintf(&next, "%s%s%s", *text, k == 0 ? "; not there in its runs: " : ", ",
			     airlock_info_profile_list(info, i, AIRLOCK_PROFILE_HIDDEN_PATHS, k)) <
		    0)
			mcp_oom(NULL);
		free(*text);
		*text = next;
	}
	for (k = 0; k < nb; k++) {
		if (asprintf(&next, "%s%s%s", *text,
			     k == 0 ? "; imports of these are reported, not blocked: " : ", ",
			     airlock_info_profile_list(info, i, AIRLOCK_PROFILE_BLOCKED_IMPORTS,
						       k)) < 0)
			mcp_oom(NULL);
		free(*text);
		*text = next;
	}
	if (asprintf(&next, "%s.", *text) < 0)
		mcp_oom(NULL);
	free(*text);
	*text = next;
}

/*
 * A run tool's input schema gains "profile", an enum of the profiles the
 * daemon's info lists for this user (none listed: no such argument offered),
 * described by what each lets a run do, switches and limits.
 */
static void
mcp_schema_profiles(const struct mcp *m, const struct mcp_tool *t, json_t *schema)
{
	json_t *names, *prop;
	size_t i, n = m->info != NULL ? airlock_info_profile_count(m->info) : 0;
	const char *def = NULL;
	char *text;

	if (n == 0 ||
	    (strcmp(t->name, "run_python") != 0 && strcmp(t->name, "run_shell") != 0 &&
	     strcmp(t->name, "run_python_cell") != 0 && strcmp(t->name, "session_open") != 0))
		return;
	names = mcp_oom(json_array());
	for (i = 0; i < n; i++) {
		json_array_append_new(names,
				      mcp_oom(json_string(airlock_info_profile_name(m->info, i))));
		if (airlock_info_profile_is_default(m->info, i))
			def = airlock_info_profile_name(m->info, i);
	}
	if (asprintf(&text,
		     "The daemon's named policy for the run (default: %s). Its limits "
		     "are the defaults and the most the other arguments may ask; its switches "
		     "are enforced by the kernel.",
		     def != NULL ? def : "the daemon's") < 0)
		mcp_oom(NULL);
	for (i = 0; i < n; i++)
		mcp_profile_text(m, i, &text);
	prop = mcp_oom(
		json_pack("{s:s, s:o, s:s}", "type", "string", "enum", names, "description", text));
	free(text);
	json_object_set_new(json_object_get(schema, "properties"), "profile", prop);
}

/* Parse one of the schemas above (a bug if it does not parse). */
static json_t *
mcp_schema(const char *tool, const char *text)
{
	json_t *schema = json_loads(text, 0, NULL);

	if (schema == NULL) {
		mcp_log("tool %s: bad schema", tool); /* a bug */
		abort();
	}
	return schema;
}

void
mcp_tools_list(struct mcp *m, json_t *id, json_t *params)
{
	json_t *tools = mcp_oom(json_array());
	size_t i;

	mcp_probe(m);
	for (i = 0; mcp_tools[i].name != NULL; i++) {
		const struct mcp_tool *t = &mcp_tools[i];
		char *description = mcp_tool_description(m, t);
		json_t *input = mcp_schema(t->name, t->input);
		json_t *tool;

		mcp_schema_profiles(m, t, input);
		tool = mcp_oom(json_pack("{s:s, s:s, s:s, s:o, s:{s:s, s:b, s:b, s:b, s:b}}",
					 "name", t->name, "title", t->title, "description",
					 description, "inputSchema", input, "annotations", "title",
					 t->title, "readOnlyHint", t->read_only, "destructiveHint",
					 t->destructive, "idempotentHint", t->idempotent,
					 "openWorldHint", false));

		if (t->output != NULL && mcp_since(m, "2025-06-18"))
			json_object_set_new(tool, "outputSchema", mcp_schema(t->name, t->output));
		json_array_append_new(tools, tool);
		free(description);
	}
	mcp_reply(m, id, json_pack("{s:o}", "tools", tools));
}
