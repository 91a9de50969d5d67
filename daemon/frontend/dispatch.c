/*
 * dispatch.c: what the frontend does with a client's requests: the one
 * dispatch table (client_handlers, with its hello rule per message) and a
 * handler per request, each handing the work to the module that does it
 * (run.c, session.c). client.c owns the connection and calls none of
 * them: it reaches this file through the hooks dispatch_init() sets, so
 * the call graph goes dispatch -> run, session -> client, never back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "pypkgs.h"
#include "session.h"
#include "log.h"
#include "xalloc.h"

/* Handler flags, in the table rather than in each handler. */
#define H_BEFORE_HELLO 0x1 /* allowed as the first message */
#define H_AFTER_HELLO 0x2  /* allowed once the handshake is done */

struct client_handler {
	enum proto_type type;
	unsigned flags;
	void (*fn)(struct client *c, const struct proto_msg *m);
};

static void client_on_hello(struct client *c, const struct proto_msg *m);
static void client_on_ping(struct client *c, const struct proto_msg *m);
static void client_on_info(struct client *c, const struct proto_msg *m);
static void client_on_run(struct client *c, const struct proto_msg *m);
static void client_on_cancel(struct client *c, const struct proto_msg *m);
static void client_on_ps(struct client *c, const struct proto_msg *m);
static void client_on_session_open(struct client *c, const struct proto_msg *m);
static void client_on_session_close(struct client *c, const struct proto_msg *m);
static void client_on_session_list(struct client *c, const struct proto_msg *m);
static void client_on_file(struct client *c, const struct proto_msg *m);
static void client_on_tool_reply(struct client *c, const struct proto_msg *m);

static const struct client_handler client_handlers[] = {
	{PROTO_HELLO, H_BEFORE_HELLO, client_on_hello},
	{PROTO_PING, H_AFTER_HELLO, client_on_ping},
	{PROTO_INFO, H_AFTER_HELLO, client_on_info},
	{PROTO_RUN, H_AFTER_HELLO, client_on_run},
	{PROTO_CANCEL, H_AFTER_HELLO, client_on_cancel},
	{PROTO_PS, H_AFTER_HELLO, client_on_ps},
	{PROTO_SESSION_OPEN, H_AFTER_HELLO, client_on_session_open},
	{PROTO_SESSION_CLOSE, H_AFTER_HELLO, client_on_session_close},
	{PROTO_SESSION_LIST, H_AFTER_HELLO, client_on_session_list},
	{PROTO_FILE_WRITE, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_READ, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_LIST, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_DELETE, H_AFTER_HELLO, client_on_file},
	{PROTO_TOOL_REPLY, H_AFTER_HELLO, client_on_tool_reply},
};

static void
client_on_hello(struct client *c, const struct proto_msg *m)
{
	struct proto_hello h = {.version = PROTO_VERSION,
				.peer = "airlockd " AIRLOCK_VERSION,
				.features = {PROTO_FEATURE_PROCESS_LIMIT, PROTO_FEATURE_NETWORK,
					     PROTO_FEATURE_FILE_BUNDLE, PROTO_FEATURE_TOOLS},
				.nfeatures = 4};
	struct proto_out out;

	/* Refusals wait for the hello so the reply has an id to answer and
	 * the client reads it (closing with its hello unread would reset it).
	 * Checked again here: a reload between the connect and the hello may
	 * have removed the user. */
	if (!client_allowed_at_connect(c) || !client_allowed(c)) {
		client_send_error(c, m->id, PROTO_ERR_UNAUTHORIZED,
				  "uid %u is not allowed to use this daemon",
				  (unsigned)client_uid(c));
		client_refuse(c);
		return;
	}
	if (client_over_limit(c)) {
		client_send_error(c, m->id, PROTO_ERR_BUSY, "uid %u has %u connections, the limit",
				  (unsigned)client_uid(c),
				  client_daemon(c)->cfg->max_connections_per_uid);
		client_refuse(c);
		return;
	}
	if (m->u.hello.version != PROTO_VERSION) {
		client_send_error(c, m->id, PROTO_ERR_UNSUPPORTED_VERSION,
				  "protocol version %" PRIu32
				  " is not supported; this daemon speaks %d",
				  m->u.hello.version, PROTO_VERSION);
		client_refuse(c);
		return;
	}
	client_hello_ok(c, &m->u.hello);
	if (proto_encode_hello(m->id, PROTO_HELLO_OK, &h, &out) < 0)
		fatalx("cannot encode hello_ok");
	client_send(c, &out);
}

static void
client_on_ping(struct client *c, const struct proto_msg *m)
{
	struct proto_out out;

	if (proto_encode_simple(m->id, PROTO_PONG, &out) < 0)
		fatalx("cannot encode pong");
	client_send(c, &out);
}

/* The names of the mounts of mask into out (at most CONFIG_MOUNTS_MAX); their count. */
static size_t
client_mount_names(const struct config *cfg, uint32_t mask, const char **out)
{
	size_t k, n = 0;

	for (k = 0; k < cfg->nmounts && k < CONFIG_MOUNTS_MAX; k++)
		if (mask & (1U << k))
			out[n++] = cfg->mounts[k].name;
	return n;
}

/* One row of names per profile: its mounts, allow_mounts, blocked_imports. */
struct client_info_names {
	const char *mounts[CONFIG_MOUNTS_MAX];
	const char *allow_mounts[CONFIG_MOUNTS_MAX];
	const char *blocked[PROTO_BLOCKED_IMPORTS_MAX];
};

static void
client_on_info(struct client *c, const struct proto_msg *m)
{
	const struct daemon *d = client_daemon(c);
	const struct config *cfg = d->cfg;
	struct proto_profile profiles[PROTO_PROFILES_MAX];
	struct proto_mount_info mounts[CONFIG_MOUNTS_MAX];
	struct client_info_names *names;
	uint32_t seen = 0;
	char(*texts)[PROTO_ALLOW_ENTRY_MAX + 1] = NULL;
	const char **lists = NULL;
	struct proto_info info;
	struct proto_out out;
	size_t i, k, nent = 0, used = 0;
	int r;

	memset(&info, 0, sizeof(info));
	info.daemon = "airlockd " AIRLOCK_VERSION;
	info.version = PROTO_VERSION;
	info.uid = (uint32_t)client_uid(c);
	for (i = 0; i < cfg->nruntimes && i < PROTO_RUNTIMES_MAX; i++)
		info.runtimes[info.nruntimes++] = cfg->runtimes[i].name;
	info.defaults = cfg->defaults;
	info.ceilings = cfg->ceilings;
	info.resource_control = cgroup_kind_name(d->resource_control);
	/* What a user's parallelism is (docs/design-service.md). */
	info.max_runs = cfg->max_runs;
	info.max_runs_per_uid = cfg->max_runs_per_uid;
	info.max_interpreters = cfg->max_interpreters;
	info.max_interpreters_per_uid = cfg->max_interpreters_per_uid;
	for (i = 0; i < cfg->nruntimes && i < PROTO_RUNTIMES_MAX; i++) {
		struct proto_runtime_packages *p = &info.runtime_packages[info.nruntime_packages];

		if (pypkgs_scan(&cfg->runtimes[i], p->packages, &p->npackages)) {
			p->runtime = cfg->runtimes[i].name;
			info.nruntime_packages++;
		}
	}
	info.profiles = profiles;
	names = xcalloc(PROTO_PROFILES_MAX, sizeof(*names));
	/* The allow-lists as listed: config_egress_finish() bounds them all
	 * together, so that the reply fits a packet. */
	for (i = 0; i < cfg->nprofiles && i < PROTO_PROFILES_MAX; i++)
		if (cfg->profiles[i].egress != NULL)
			nent += cfg->profiles[i].egress->nentries;
	if (nent > 0) {
		texts = xcalloc(nent, sizeof(*texts));
		lists = xcalloc(nent, sizeof(*lists));
	}
	for (i = 0; i < cfg->nprofiles && i < PROTO_PROFILES_MAX; i++) {
		const struct config_profile *prof = &cfg->profiles[i];
		struct proto_profile *e = &profiles[info.nprofiles];

		if (!client_may_use_profile(c, prof))
			continue;
		memset(e, 0, sizeof(*e));
		e->name = prof->name;
		e->is_default = !strcmp(prof->name, cfg->default_profile);
		e->limits = prof->defaults;
		e->ceilings = prof->ceilings;
		e->network = prof->network_proxy ? "proxy" : "none";
		if (prof->network_proxy) {
			const struct egress_policy *pol = prof->egress;

			/* Listed entries first, then the private ones, each in
			 * order: two runs of lists[]. */
			e->allow_hosts = &lists[used];
			for (k = 0; k < pol->nentries; k++)
				if (!pol->entries[k].allow_private) {
					egress_entry_format(&pol->entries[k], texts[used],
							    sizeof(texts[used]));
					lists[used] = texts[used];
					used++;
					e->nallow_hosts++;
				}
			e->allow_private_hosts = &lists[used];
			for (k = 0; k < pol->nentries; k++)
				if (pol->entries[k].allow_private) {
					egress_entry_format(&pol->entries[k], texts[used],
							    sizeof(texts[used]));
					lists[used] = texts[used];
					used++;
					e->nallow_private_hosts++;
				}
		}
		e->no_file_write = prof->no_file_write;
		e->no_subprocess = prof->no_subprocess;
		e->hidden_paths = (const char **)prof->hidden;
		e->nhidden_paths = prof->nhidden;
		/* config_listed_finish() bounds these lists together. */
		e->mounts = names[info.nprofiles].mounts;
		e->nmounts = client_mount_names(cfg, prof->mounts, names[info.nprofiles].mounts);
		e->allow_mounts = names[info.nprofiles].allow_mounts;
		e->nallow_mounts = client_mount_names(cfg, prof->allow_mounts,
						      names[info.nprofiles].allow_mounts);
		for (k = 0; k < prof->nblocked_imports; k++)
			names[info.nprofiles].blocked[k] = prof->blocked_imports[k];
		e->blocked_imports = names[info.nprofiles].blocked;
		e->nblocked_imports = prof->nblocked_imports;
		seen |= prof->mounts | prof->allow_mounts;
		info.nprofiles++;
	}
	/*
	 * The mounts a run of the caller can get: its profiles' and every
	 * runtime's. The target and whether it is a package tree, never the
	 * host source: that is the administrator's layout, not the caller's
	 * business (docs/security.md, "Named mounts").
	 */
	for (i = 0; i < cfg->nruntimes; i++)
		seen |= cfg->runtimes[i].mounts;
	info.mounts = mounts;
	for (i = 0; i < cfg->nmounts && i < CONFIG_MOUNTS_MAX; i++)
		if (seen & (1U << i))
			mounts[info.nmounts++] = (struct proto_mount_info){
				.name = cfg->mounts[i].name,
				.target = cfg->mounts[i].target,
				.package = cfg->mounts[i].package,
			};
	r = proto_encode_info(m->id, &info, &out);
	free(texts);
	free(lists);
	free(names);
	client_send_encoded(c, m->id, r, &out, "info");
}

static void
client_on_run(struct client *c, const struct proto_msg *m)
{
	/* A client that did not name tools could not answer a tool_call. */
	if (m->u.run.ntools > 0 && !client_knows_tools(c)) {
		client_send_error(c, m->id, PROTO_ERR_BAD_REQUEST,
				  "run.tools: the client's hello did not name the feature tools");
		return;
	}
	run_start(client_daemon(c), c, m->id, &m->u.run);
}

/* An answer to an event: it gets no reply of its own. */
static void
client_on_tool_reply(struct client *c, const struct proto_msg *m)
{
	run_tool_reply(client_daemon(c), c, m->id, &m->u.tool_reply);
}

static void
client_on_cancel(struct client *c, const struct proto_msg *m)
{
	run_cancel_request(client_daemon(c), c, m->id, &m->u.cancel);
}

static void
client_on_ps(struct client *c, const struct proto_msg *m)
{
	run_ps(client_daemon(c), c, m->id);
}

static void
client_on_session_open(struct client *c, const struct proto_msg *m)
{
	session_open(client_daemon(c), c, m->id, &m->u.session_open);
}

static void
client_on_session_close(struct client *c, const struct proto_msg *m)
{
	session_close(client_daemon(c), c, m->id, m->u.session.session);
}

static void
client_on_session_list(struct client *c, const struct proto_msg *m)
{
	session_list(client_daemon(c), c, m->id);
}

static void
client_on_file(struct client *c, const struct proto_msg *m)
{
	session_file_op(client_daemon(c), c, m->id, m->type, &m->u.file);
}

/*
 * The one access check of every request after the hello, whatever its kind
 * (run, cell, file operation, session open, list and close, cancel, ps,
 * info, ping, tool reply): is the client's uid still allowed by [access] of
 * the config in force? Read again for each request, never kept from the
 * connect, because a reload may have removed the user since: a revoked
 * user's open connection must not go on using the daemon (its sessions'
 * files included; issue 28). The refusal is the one a refused connect gets,
 * "unauthorized". Returns true when the request may go on.
 */
static bool
client_access(struct client *c, const struct proto_msg *m)
{
	if (client_allowed(c))
		return true;
	client_send_error(c, m->id, PROTO_ERR_UNAUTHORIZED,
			  "uid %u is no longer allowed to use this daemon",
			  (unsigned)client_uid(c));
	return false;
}

/* Decode and dispatch one packet (client_hooks.packet). */
static void
client_dispatch(struct client *c, const char *buf, size_t len, int *fds, size_t nfds)
{
	struct proto_msg m;
	enum proto_error code = PROTO_ERR_BAD_REQUEST;
	uint32_t id = 0;
	char why[256] = "";
	size_t i;
	int r;

	memset(&m, 0, sizeof(m));
	r = proto_decode(buf, len, fds, nfds, &m, &code, &id, why, sizeof(why));
	if (r < 0) {
		client_send_error(c, id, code, "%s", why[0] ? why : strerror(-r));
		if (!client_ready(c))
			client_refuse(c);
		return;
	}
	for (i = 0; i < sizeof(client_handlers) / sizeof(client_handlers[0]); i++)
		if (client_handlers[i].type == m.type)
			break;
	if (i == sizeof(client_handlers) / sizeof(client_handlers[0])) {
		client_send_error(c, m.id, PROTO_ERR_BAD_REQUEST, "a client may not send %s",
				  proto_type_name(m.type));
	} else if (!client_ready(c) && !(client_handlers[i].flags & H_BEFORE_HELLO)) {
		client_send_error(c, m.id, PROTO_ERR_BAD_REQUEST,
				  "the first message must be hello, not %s",
				  proto_type_name(m.type));
		client_refuse(c);
	} else if (client_ready(c) && !(client_handlers[i].flags & H_AFTER_HELLO)) {
		client_send_error(c, m.id, PROTO_ERR_BAD_REQUEST, "%s was already done",
				  proto_type_name(m.type));
	} else if (client_ready(c) && !client_access(c, &m)) {
		/* refused: client_access() answered */
	} else
		client_handlers[i].fn(c, &m);
	proto_msg_free(&m);
}

/* A connection [access] allows was adopted: its uid's sessions hear of it. */
static void
dispatch_adopted(struct client *c)
{
	session_client_new(client_daemon(c), client_uid(c));
}

/* The connection ended: its runs are killed, its sessions told (once). */
static void
dispatch_orphaned(struct client *c, bool last_of_uid)
{
	struct daemon *d = client_daemon(c);

	run_orphan_client(d, c);
	session_client_gone(d, c, last_of_uid);
}

static const struct client_hooks dispatch_hooks = {
	.packet = client_dispatch,
	.adopted = dispatch_adopted,
	.orphaned = dispatch_orphaned,
};

void
dispatch_init(struct daemon *d)
{
	d->client_hooks = &dispatch_hooks;
}
