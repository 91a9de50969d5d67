/* cli/net.h: what a network = proxy run did, and a cell's keys, as the
 * command and the MCP server show them in JSON. */
#ifndef AIRLOCK_CLI_NET_H
#define AIRLOCK_CLI_NET_H

#include <jansson.h>

#include "airlock.h"

/*
 * One line: "network: 3 connections (1 refused), 1.2 MB down, 310 B up;
 * contacted pypi.org:443; refused evil.test:443 (not_listed)". A new string
 * (malloc), or NULL when the result has no network figures or memory ran out
 * (*ret_oom then true).
 */
char *cli_network_text(const struct airlock_result *res, bool *ret_oom);

/*
 * {"bytes_up", "bytes_down", "connections", "refused", "contacted": [str],
 * "refusals": [{"host", "reason"}]}, or JSON null without network figures.
 * NULL only when out of memory.
 */
json_t *cli_network_json(const struct airlock_result *res);

/* A cell's keys into obj: "cell", "state" ("kept" or "lost"), "value" (a
 * string or null), "restarted" (its interpreter ended during it); nothing
 * for a result that is no cell. 0, or -1 when
 * out of memory. */
int cli_cell_keys_json(json_t *obj, const struct airlock_result *res);

#endif
