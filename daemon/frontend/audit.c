/*
 * audit.c: one structured line per finished run: who (uid, client pid), what
 * (runtime, limits asked), what came of it (outcome, exit, times, bytes).
 * To the journal, with one field per item, when under systemd; to stderr as
 * key=value pairs in the foreground.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "egress.h"
#include "frontend.h"
#include "log.h"

/* "wall_ms:1000,memory_bytes:67108864" of the limits the request named. */
static void
audit_limits(const struct proto_limits *asked, char *buf, size_t len)
{
	size_t off = 0, i;

	buf[0] = '\0';
	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		int n;

		if (asked->v[i] == 0)
			continue;
		n = snprintf(buf + off, len - off, "%s%s:%" PRIu64, off ? "," : "",
			     proto_limit_name((enum proto_limit)i), asked->v[i]);
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, len, "defaults");
}

/*
 * The proxy's figures of a network = proxy run: " net_up=... net_down=...
 * net_conns=... net_refused=... net_contacted="a:443,..." net_refusals=
 * "b:443/not_listed,..."" ("" for a run without). Destinations are the
 * code's choice: escaped like the error text.
 */
static void
audit_net(const struct egress_stats *net, char *buf, size_t len)
{
	char list[2048], q[4 * 2048];
	size_t off = 0, i;
	int n;

	buf[0] = '\0';
	if (net == NULL)
		return;
	list[0] = '\0';
	for (i = 0; i < net->ncontacted; i++) {
		n = snprintf(list + off, sizeof(list) - off, "%s%s", i ? "," : "",
			     net->contacted[i]);
		if (n < 0 || (size_t)n >= sizeof(list) - off)
			break;
		off += (size_t)n;
	}
	log_escape(q, sizeof(q), list, "\"\\");
	n = snprintf(buf, len,
		     " net_up=%" PRIu64 " net_down=%" PRIu64 " net_conns=%" PRIu32
		     " net_refused=%" PRIu32 " net_contacted=\"%s\"",
		     net->bytes_up, net->bytes_down, net->connections, net->refused, q);
	if (n < 0 || (size_t)n >= len)
		return;
	off = 0;
	list[0] = '\0';
	for (i = 0; i < net->nrefusals; i++) {
		int m = snprintf(list + off, sizeof(list) - off, "%s%s/%s", i ? "," : "",
				 net->refusals[i].host, net->refusals[i].reason);

		if (m < 0 || (size_t)m >= sizeof(list) - off)
			break;
		off += (size_t)m;
	}
	log_escape(q, sizeof(q), list, "\"\\");
	snprintf(buf + n, len - (size_t)n, " net_refusals=\"%s\"", q);
}

void
audit_run(struct daemon *d, uint32_t run_id, uid_t uid, pid_t pid, const char *runtime,
	  const struct proto_limits *asked, const struct proto_result *res,
	  const struct egress_stats *net, bool prestarted, const char *err)
{
	char limits[512], line[4096 + 8192], qerr[4 * 512], qrt[4 * 64], qnet[8192], tools[80] = "";
	char cell[64] = "";
	uint64_t abytes = 0, tcalls = res->ntool_calls + res->tool_calls_omitted, trefused = 0;
	size_t i;

	/*
	 * The error text can hold what a client chose (an input file's name):
	 * escaped with its quote and backslash, so it can neither end the line
	 * (a forged "audit ... uid=0" line after a newline) nor the quoted value
	 * (a forged field after a quote). The runtime is a configured name, but
	 * escaped anyway with the characters that would split a field.
	 */
	log_escape(qerr, sizeof(qerr), err != NULL ? err : "", "\"\\");
	log_escape(qrt, sizeof(qrt), runtime, "\"\\= ");
	audit_limits(asked, limits, sizeof(limits));
	audit_net(net, qnet, sizeof(qnet));
	for (i = 0; i < res->nartifacts; i++)
		abytes += res->artifacts[i].data.len;
	/* The tool bridge: calls made (listed or not) and the listed ones refused. */
	for (i = 0; i < res->ntool_calls; i++)
		trefused += res->tool_calls[i].outcome == PROTO_TOOL_REFUSED;
	if (tcalls > 0)
		snprintf(tools, sizeof(tools), " tool_calls=%" PRIu64 " tool_refused=%" PRIu64,
			 tcalls, trefused);
	/* blocked_imports findings: counted here, the text is in the result. */
	if (res->nadvisories > 0)
		snprintf(tools + strlen(tools), sizeof(tools) - strlen(tools), " advisories=%zu",
			 res->nadvisories);
	/* A cell of an interpreter session: run= is its interpreter's. */
	if (res->cell != 0)
		snprintf(cell, sizeof(cell), " cell=%" PRIu64 " state=%s", res->cell,
			 res->state != NULL ? res->state : "lost");
	snprintf(line, sizeof(line),
		 "audit run=%" PRIu32 " uid=%u pid=%d runtime=%s limits=%s outcome=%s"
		 " exit_code=%d signal=%d wall_ms=%" PRIu64 " cpu_ms=%" PRIu64 " queued_ms=%" PRIu64
		 " memory_peak_bytes=%" PRIu64 " stdout_bytes=%" PRIu64 " stderr_bytes=%" PRIu64
		 " artifacts=%zu artifact_bytes=%" PRIu64 "%s%s%s%s%s%s%s",
		 run_id, (unsigned)uid, (int)pid, qrt, limits, proto_outcome_name(res->outcome),
		 res->exit_code, res->signal, res->wall_ms, res->cpu_ms, res->queued_ms,
		 res->memory_peak_bytes, res->out[0].total, res->out[1].total, res->nartifacts,
		 abytes, qnet, tools, cell, prestarted ? " prestarted=1" : "",
		 qerr[0] ? " error=\"" : "", qerr, qerr[0] ? "\"" : "");
	if (!d->journal) {
		log_info("%s", line);
		return;
	}
	sd_journal_send("MESSAGE=%s", line, "PRIORITY=6", "SYSLOG_IDENTIFIER=airlockd",
			"AIRLOCK_RUN=%" PRIu32, run_id, "AIRLOCK_UID=%u", (unsigned)uid,
			"AIRLOCK_CLIENT_PID=%d", (int)pid, "AIRLOCK_RUNTIME=%s", qrt,
			"AIRLOCK_LIMITS=%s", limits, "AIRLOCK_OUTCOME=%s",
			proto_outcome_name(res->outcome), "AIRLOCK_EXIT_CODE=%d", res->exit_code,
			"AIRLOCK_SIGNAL=%d", res->signal, "AIRLOCK_WALL_MS=%" PRIu64, res->wall_ms,
			"AIRLOCK_CPU_MS=%" PRIu64, res->cpu_ms, "AIRLOCK_QUEUED_MS=%" PRIu64,
			res->queued_ms, "AIRLOCK_STDOUT_BYTES=%" PRIu64, res->out[0].total,
			"AIRLOCK_STDERR_BYTES=%" PRIu64, res->out[1].total,
			"AIRLOCK_ARTIFACT_BYTES=%" PRIu64, abytes, "AIRLOCK_NET=%s", qnet,
			"AIRLOCK_PRESTARTED=%d", prestarted ? 1 : 0, "AIRLOCK_CELL=%s", cell, NULL);
}
