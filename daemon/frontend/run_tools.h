/*
 * run_tools.h: the frontend's end of the tool bridge (docs/design-tool-bridge.md).
 *
 * A run that declares tools gets the listening socket its supervisor made
 * at /run/tools/tools.sock (SUP_TOOLS). The frontend accepts the code's
 * connections, reads JSON lines, checks each with the strict scanner
 * (common/jsonscan.h), answers what it can itself (undeclared, malformed,
 * too large, past the limit) and relays the rest to the run's client as
 * tool_call events; the client's tool_reply is checked for form and
 * written back as one line. The daemon never interprets args or results.
 */
#ifndef AIRLOCKD_RUN_TOOLS_H
#define AIRLOCKD_RUN_TOOLS_H

#include <stddef.h>

#include "plan.h"
#include "proto.h"

struct run;
struct run_tools;

/* Fixed bounds of the bridge, per run (docs/protocol.md, "Tools"). */
#define RUN_TOOLS_CALLS_MAX 256	  /* calls answered by the client; later ones: limit */
#define RUN_TOOLS_WAIT_MS 30000	  /* the client's time to answer one call */
#define RUN_TOOLS_CONNS_MAX 8	  /* connections of the code open at once */
#define RUN_TOOLS_PENDING_MAX 4	  /* calls one connection may have waiting */
#define RUN_TOOLS_MALFORMED_MAX 3 /* bad lines before a connection is closed */
#define RUN_TOOLS_SOCK "/run/tools/tools.sock"

/* The tools of a request, copied; NULL when it declares none. Exits on OOM. */
struct run_tools *run_tools_new(struct run *r, const struct proto_tool *tools, size_t n);

/* The code's environment for a run with tools: AIRLOCK_TOOLS (the socket),
 * AIRLOCK_TOOL_NAMES (the names, comma-separated) and /run/tools first in
 * PATH, added to env (replacing the request's own). 0 or -ENOMEM. */
int run_tools_env(const struct proto_run *req, struct plan_env *env);

/* The supervisor's listening socket came (fd is the run's now). */
void run_tools_listen(struct run *r, int fd);

/* A client's tool_reply for r: answered to the code, or dropped when the
 * call is not waiting (answered, timed out, run over). */
void run_tools_reply(struct run *r, const struct proto_tool_reply *rep);

/* The run is ending: waiting calls are abandoned, every socket closed. */
void run_tools_close(struct run *r);

/* The calls for the result (valid until run_tools_free). */
void run_tools_result(const struct run *r, struct proto_result *res);

/* Free everything (closes first). NULL is fine. */
void run_tools_free(struct run_tools *t);

#endif
