/*
 * cli/tool.h: `airlock run --tool NAME=COMMAND`: a tool of the run's code
 * served by a command on the host, for scripting and tests.
 */
#ifndef AIRLOCK_CLI_TOOL_H
#define AIRLOCK_CLI_TOOL_H

#include <stddef.h>

#include "airlock.h"

#define CLI_TOOLS_MAX 32

/* The --tool options of one run. */
struct cli_tools {
	struct {
		char *name;
		char **argv; /* COMMAND split at blanks, NULL-terminated */
	} t[CLI_TOOLS_MAX];
	size_t n;
};

/* Parse NAME=COMMAND, declare NAME on req and keep COMMAND. Returns 0,
 * -ENOMEM, or -EINVAL with *ret_why saying what is wrong. */
int cli_tools_add(struct cli_tools *tools, struct airlock_run_req *req, const char *spec,
		  const char **ret_why);

/* The handler for airlock_run_tools(): arg is the struct cli_tools. */
int cli_tools_call(void *arg, const char *name, const char *args, size_t args_len, char **ret_json,
		   size_t *ret_len);

void cli_tools_free(struct cli_tools *tools);

#endif
