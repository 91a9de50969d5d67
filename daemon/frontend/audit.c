/*
 * audit.c: one structured line per finished run: who (uid, client pid), what
 * (runtime, profile, limits asked), what came of it (outcome, exit code or
 * signal, times, bytes). The fields are gathered once into a list, so the
 * two renderings cannot disagree: to the journal, with one AIRLOCK_* field
 * per item, when under systemd; to stderr as key=value pairs, with a time
 * stamp first, in the foreground. docs/security.md ("The audit line") lists
 * the fields; daemon-profiles checks that list against real lines.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "egress.h"
#include "frontend.h"
#include "log.h"
#include "svcmgr.h"

#define AUDIT_FIELDS_MAX 40
#define AUDIT_VALUES_BYTES 16384

/* The fields of one line: key, value (escaped) and whether it is quoted. */
struct audit_fields {
	const char *key[AUDIT_FIELDS_MAX];
	const char *val[AUDIT_FIELDS_MAX];
	bool quoted[AUDIT_FIELDS_MAX];
	size_t n;
	char buf[AUDIT_VALUES_BYTES];
	size_t off;
};

/* Add key=value (printf); a value that does not fit is cut, never split. */
__attribute__((format(printf, 4, 5))) static void
audit_add(struct audit_fields *a, const char *key, bool quoted, const char *fmt, ...)
{
	size_t room = sizeof(a->buf) - a->off;
	va_list ap;
	int n;

	if (a->n >= AUDIT_FIELDS_MAX || room < 2)
		return;
	va_start(ap, fmt);
	n = vsnprintf(a->buf + a->off, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	a->key[a->n] = key;
	a->val[a->n] = a->buf + a->off;
	a->quoted[a->n] = quoted;
	a->n++;
	a->off += (size_t)n < room ? (size_t)n + 1 : room;
}

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
 * The proxy's figures of a network = proxy run (none for a run without).
 * Destinations are the code's choice: escaped like the error text.
 */
static void
audit_net(struct audit_fields *a, const struct egress_stats *net)
{
	char list[2048], q[4 * 2048];
	size_t off = 0, i;
	int n;

	if (net == NULL)
		return;
	audit_add(a, "net_up", false, "%" PRIu64, net->bytes_up);
	audit_add(a, "net_down", false, "%" PRIu64, net->bytes_down);
	audit_add(a, "net_conns", false, "%" PRIu32, net->connections);
	audit_add(a, "net_refused", false, "%" PRIu32, net->refused);
	list[0] = '\0';
	for (i = 0; i < net->ncontacted; i++) {
		n = snprintf(list + off, sizeof(list) - off, "%s%s", i ? "," : "",
			     net->contacted[i]);
		if (n < 0 || (size_t)n >= sizeof(list) - off)
			break;
		off += (size_t)n;
	}
	log_escape(q, sizeof(q), list, "\"\\");
	audit_add(a, "net_contacted", true, "%s", q);
	off = 0;
	list[0] = '\0';
	for (i = 0; i < net->nrefusals; i++) {
		n = snprintf(list + off, sizeof(list) - off, "%s%s/%s", i ? "," : "",
			     net->refusals[i].host, net->refusals[i].reason);
		if (n < 0 || (size_t)n >= sizeof(list) - off)
			break;
		off += (size_t)n;
	}
	log_escape(q, sizeof(q), list, "\"\\");
	audit_add(a, "net_refusals", true, "%s", q);
}

/*
 * What came of it. An exit code only for a run that exited (a killed one
 * has none: exit_code=0 there read as a success), a signal only for one a
 * signal ended (the limits' kills included, when the result names it).
 */
static void
audit_result(struct audit_fields *a, const struct proto_result *res)
{
	uint64_t abytes = 0, tcalls = res->ntool_calls + res->tool_calls_omitted, trefused = 0;
	size_t i;

	audit_add(a, "outcome", false, "%s", proto_outcome_name(res->outcome));
	if (res->outcome == PROTO_OUTCOME_EXITED)
		audit_add(a, "exit_code", false, "%d", res->exit_code);
	if (res->outcome == PROTO_OUTCOME_SIGNALED || res->signal != 0)
		audit_add(a, "signal", false, "%d", res->signal);
	audit_add(a, "wall_ms", false, "%" PRIu64, res->wall_ms);
	audit_add(a, "cpu_ms", false, "%" PRIu64, res->cpu_ms);
	audit_add(a, "queued_ms", false, "%" PRIu64, res->queued_ms);
	audit_add(a, "memory_peak_bytes", false, "%" PRIu64, res->memory_peak_bytes);
	audit_add(a, "stdout_bytes", false, "%" PRIu64, res->out[0].total);
	audit_add(a, "stderr_bytes", false, "%" PRIu64, res->out[1].total);
	for (i = 0; i < res->nartifacts; i++)
		abytes += res->artifacts[i].data.len;
	audit_add(a, "artifacts", false, "%zu", res->nartifacts);
	audit_add(a, "artifact_bytes", false, "%" PRIu64, abytes);
	/* The tool bridge: calls made (listed or not) and the listed ones refused. */
	for (i = 0; i < res->ntool_calls; i++)
		trefused += res->tool_calls[i].outcome == PROTO_TOOL_REFUSED;
	if (tcalls > 0) {
		audit_add(a, "tool_calls", false, "%" PRIu64, tcalls);
		audit_add(a, "tool_refused", false, "%" PRIu64, trefused);
	}
}

/* Under systemd: one AIRLOCK_<KEY> journal field per item, beside MESSAGE. */
static void
audit_journal(const struct audit_fields *a, const char *line)
{
	struct iovec iov[AUDIT_FIELDS_MAX + 3];
	char msg[sizeof(a->buf) + 64], fields[sizeof(a->buf) + AUDIT_FIELDS_MAX * 32];
	size_t i, k, n = 0, off = 0;

	snprintf(msg, sizeof(msg), "MESSAGE=%s", line);
	iov[n++] = (struct iovec){msg, strlen(msg)};
	iov[n++] = (struct iovec){(char *)"PRIORITY=6", 10};
	iov[n++] = (struct iovec){(char *)"SYSLOG_IDENTIFIER=airlockd", 26};
	for (i = 0; i < a->n; i++) {
		/* pid is the client's: its journal name says so. */
		const char *key = strcmp(a->key[i], "pid") == 0 ? "client_pid" : a->key[i];
		size_t start = off;
		int w = snprintf(fields + off, sizeof(fields) - off, "AIRLOCK_");

		if (w < 0 || (size_t)w >= sizeof(fields) - off)
			break;
		off += (size_t)w;
		for (k = 0; key[k] != '\0' && off < sizeof(fields) - 1; k++)
			fields[off++] =
				(char)(key[k] >= 'a' && key[k] <= 'z' ? key[k] - 32 : key[k]);
		w = snprintf(fields + off, sizeof(fields) - off, "=%s", a->val[i]);
		if (w < 0 || (size_t)w >= sizeof(fields) - off)
			break;
		off += (size_t)w;
		iov[n++] = (struct iovec){fields + start, off - start};
	}
	(void)svcmgr_journal_sendv(iov, n);
}

/*
 * In the foreground (or under a service manager other than systemd's
 * journal) nothing else dates the line: a time stamp goes first, UTC to
 * the millisecond (RFC 3339), by the wall clock an administrator compares
 * with other logs.
 */
static void
audit_stderr(const char *line)
{
	struct timespec now;
	struct tm tm;
	char ts[40] = "unknown";

	if (clock_gettime(CLOCK_REALTIME, &now) == 0 && gmtime_r(&now.tv_sec, &tm) != NULL) {
		size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);

		snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", now.tv_nsec / 1000000L);
	}
	/* line starts with "audit": the time is its first field. */
	log_info("audit time=%s%s", ts, line + strlen("audit"));
}

void
audit_run(struct daemon *d, const struct audit_who *who, const struct proto_result *res,
	  const struct egress_stats *net, const char *err)
{
	struct audit_fields a;
	char limits[512], q[4 * 512], line[sizeof(a.buf) + 8 * AUDIT_FIELDS_MAX];
	size_t i, off = 0;
	int w;

	a.n = a.off = 0;
	audit_add(&a, "run", false, "%" PRIu32, who->run_id);
	audit_add(&a, "uid", false, "%u", (unsigned)who->uid);
	audit_add(&a, "pid", false, "%d", (int)who->pid);
	/*
	 * The runtime and profile are configured names, escaped anyway with the
	 * characters that would split a field. The error text can hold what a
	 * client chose (an input file's name): escaped with its quote and
	 * backslash, so it can neither end the line (a forged "audit ... uid=0"
	 * line after a newline) nor the quoted value (a forged field after a
	 * quote).
	 */
	log_escape(q, sizeof(q), who->runtime, "\"\\= ");
	audit_add(&a, "runtime", false, "%s", q);
	log_escape(q, sizeof(q), who->profile != NULL ? who->profile : "default", "\"\\= ");
	audit_add(&a, "profile", false, "%s", q);
	audit_limits(who->asked, limits, sizeof(limits));
	audit_add(&a, "limits", false, "%s", limits);
	audit_result(&a, res);
	audit_net(&a, net);
	/* blocked_imports findings: counted here, the text is in the result. */
	if (res->nadvisories > 0)
		audit_add(&a, "advisories", false, "%zu", res->nadvisories);
	/* A cell of an interpreter session: run= is its interpreter's. */
	if (res->cell != 0) {
		audit_add(&a, "cell", false, "%" PRIu64, res->cell);
		audit_add(&a, "state", false, "%s", res->state != NULL ? res->state : "lost");
	}
	if (who->prestarted)
		audit_add(&a, "prestarted", false, "1");
	if (who->zygote != NULL)
		audit_add(&a, "zygote", false, "%s", who->zygote);
	if (err != NULL && err[0] != '\0') {
		log_escape(q, sizeof(q), err, "\"\\");
		audit_add(&a, "error", true, "%s", q);
	}
	w = snprintf(line, sizeof(line), "audit");
	off = (size_t)w;
	for (i = 0; i < a.n && off < sizeof(line); i++) {
		w = snprintf(line + off, sizeof(line) - off, a.quoted[i] ? " %s=\"%s\"" : " %s=%s",
			     a.key[i], a.val[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (d->journal) {
		audit_journal(&a, line);
		return;
	}
	audit_stderr(line);
}
