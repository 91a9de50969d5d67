/* cli/net.c: the network figures of a result, as text and as JSON; a
 * cell's JSON keys. */
#include "net.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte count for people: "310 B", "12.5 KB", "1.2 MB". */
static void
cli_net_bytes(uint64_t n, char *buf, size_t len)
{
	if (n < 1024)
		snprintf(buf, len, "%" PRIu64 " B", n);
	else if (n < 1024 * 1024)
		snprintf(buf, len, "%.1f KB", (double)n / 1024.0);
	else
		snprintf(buf, len, "%.1f MB", (double)n / (1024.0 * 1024.0));
}

/* Append s to the growing string *buf (*len bytes used). false when out of memory. */
static bool
cli_net_append(char **buf, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *p = realloc(*buf, *len + n + 1);

	if (p == NULL)
		return false;
	memcpy(p + *len, s, n + 1);
	*buf = p;
	*len += n;
	return true;
}

char *
cli_network_text(const struct airlock_result *res, bool *ret_oom)
{
	char head[256], up[32], down[32];
	char *buf = NULL;
	size_t len = 0, i, n;
	bool ok;

	*ret_oom = false;
	if (!airlock_result_has_network(res))
		return NULL;
	cli_net_bytes(airlock_result_network(res, AIRLOCK_NET_BYTES_DOWN), down, sizeof(down));
	cli_net_bytes(airlock_result_network(res, AIRLOCK_NET_BYTES_UP), up, sizeof(up));
	snprintf(head, sizeof(head),
		 "network: %" PRIu64 " connections (%" PRIu64 " refused), %s down, %s up",
		 airlock_result_network(res, AIRLOCK_NET_CONNECTIONS),
		 airlock_result_network(res, AIRLOCK_NET_REFUSED), down, up);
	ok = cli_net_append(&buf, &len, head);
	n = airlock_result_network_contacted_count(res);
	for (i = 0; ok && i < n; i++)
		ok = cli_net_append(&buf, &len, i == 0 ? "; contacted " : ", ") &&
		     cli_net_append(&buf, &len, airlock_result_network_contacted(res, i));
	n = airlock_result_network_refusal_count(res);
	for (i = 0; ok && i < n; i++) {
		const char *reason = "";
		const char *host = airlock_result_network_refusal(res, i, &reason);

		ok = cli_net_append(&buf, &len, i == 0 ? "; refused " : ", ") &&
		     cli_net_append(&buf, &len, host[0] != '\0' ? host : "(before a request)") &&
		     cli_net_append(&buf, &len, " (") && cli_net_append(&buf, &len, reason) &&
		     cli_net_append(&buf, &len, ")");
	}
	if (!ok) {
		free(buf);
		*ret_oom = true;
		return NULL;
	}
	return buf;
}

json_t *
cli_network_json(const struct airlock_result *res)
{
	json_t *obj, *contacted, *refusals;
	size_t i;

	if (!airlock_result_has_network(res))
		return json_null();
	/* contacted and refusals are borrowed from obj, which owns them from the start. */
	obj = json_pack("{s:I, s:I, s:I, s:I, s:[], s:[]}", "bytes_up",
			(json_int_t)airlock_result_network(res, AIRLOCK_NET_BYTES_UP), "bytes_down",
			(json_int_t)airlock_result_network(res, AIRLOCK_NET_BYTES_DOWN),
			"connections",
			(json_int_t)airlock_result_network(res, AIRLOCK_NET_CONNECTIONS), "refused",
			(json_int_t)airlock_result_network(res, AIRLOCK_NET_REFUSED), "contacted",
			"refusals");
	if (obj == NULL)
		return NULL;
	contacted = json_object_get(obj, "contacted");
	refusals = json_object_get(obj, "refusals");
	for (i = 0; i < airlock_result_network_contacted_count(res); i++)
		if (json_array_append_new(
			    contacted, json_string(airlock_result_network_contacted(res, i))) < 0)
			goto fail;
	for (i = 0; i < airlock_result_network_refusal_count(res); i++) {
		const char *reason = "";
		const char *host = airlock_result_network_refusal(res, i, &reason);

		if (json_array_append_new(
			    refusals, json_pack("{s:s, s:s}", "host", host, "reason", reason)) < 0)
			goto fail;
	}
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

int
cli_cell_keys_json(json_t *obj, const struct airlock_result *res)
{
	const char *value = airlock_result_value(res);
	bool kept = airlock_result_state(res) == AIRLOCK_CELL_KEPT;

	if (airlock_result_cell(res) == 0)
		return 0;
	if (json_object_set_new(obj, "cell", json_integer((json_int_t)airlock_result_cell(res))) <
		    0 ||
	    json_object_set_new(obj, "state", json_string(kept ? "kept" : "lost")) < 0 ||
	    json_object_set_new(obj, "value", value != NULL ? json_string(value) : json_null()) <
		    0 ||
	    json_object_set_new(obj, "restarted", json_boolean(airlock_result_restarted(res))) < 0)
		return -1;
	return 0;
}
