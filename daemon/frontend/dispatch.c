/*
 * dispatch.c: what the frontend does with a client's requests: the one
 * dispatch table (client_handlers, with its hello rule per message) and a
 * handler per request, each handing the work to the module that does it
 * (run.c, session.c). client.c owns the connection and calls none of
 * them: it reaches this file through the hooks dispatch_init() sets, so
 * the call graph goes dispatch -> run, session -> client, never back.
 */
#include <inttypes.h>
#include <string.h>

#include "admit_facts.h"
#include "frontend.h"
#include "session.h"
#include "session_store.h"
#include "log.h"

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
static void client_on_session_ps(struct client *c, const struct proto_msg *m);
static void client_on_process_stop(struct client *c, const struct proto_msg *m);
static void client_on_file(struct client *c, const struct proto_msg *m);
static void client_on_tool_reply(struct client *c, const struct proto_msg *m);
static void client_on_session_extend(struct client *c, const struct proto_msg *m);
static void client_on_session_save(struct client *c, const struct proto_msg *m);

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
	{PROTO_SESSION_PS, H_AFTER_HELLO, client_on_session_ps},
	{PROTO_PROCESS_STOP, H_AFTER_HELLO, client_on_process_stop},
	{PROTO_FILE_WRITE, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_READ, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_LIST, H_AFTER_HELLO, client_on_file},
	{PROTO_FILE_DELETE, H_AFTER_HELLO, client_on_file},
	{PROTO_TOOL_REPLY, H_AFTER_HELLO, client_on_tool_reply},
	{PROTO_SESSION_EXTEND, H_AFTER_HELLO, client_on_session_extend},
	{PROTO_SESSION_SAVE, H_AFTER_HELLO, client_on_session_save},
};

static void
client_on_hello(struct client *c, const struct proto_msg *m)
{
	struct proto_hello h = {.version = PROTO_VERSION,
				.peer = "airlockd " AIRLOCK_VERSION,
				.features = {PROTO_FEATURE_PROCESS_LIMIT, PROTO_FEATURE_NETWORK,
					     PROTO_FEATURE_FILE_BUNDLE, PROTO_FEATURE_TOOLS},
				.nfeatures = 4};
	struct admit_decision dec;
	struct admit_gather g;
	struct proto_out out;

	/* Refusals wait for the hello so the reply has an id to answer and
	 * the client reads it (closing with its hello unread would reset it):
	 * its access and its uid's connections (admit_decide). */
	admit_gather_hello(client_daemon(c), c, &g);
	admit_decide(&g.f, &dec);
	if (dec.verdict == ADMIT_REFUSE) {
		client_send_error(c, m->id, dec.code, "%s", dec.why);
		client_refuse(c);
		return;
	}
	/* The version: the protocol's, not an admission. */
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

/* The info reply is info.c's. */
static void
client_on_info(struct client *c, const struct proto_msg *m)
{
	info_reply(c, m->id);
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
client_on_session_extend(struct client *c, const struct proto_msg *m)
{
	session_store_extend(client_daemon(c), c, m->id, &m->u.session_extend);
}

static void
client_on_session_save(struct client *c, const struct proto_msg *m)
{
	session_store_save(client_daemon(c), c, m->id, m->u.session.session);
}

static void
client_on_session_list(struct client *c, const struct proto_msg *m)
{
	session_list(client_daemon(c), c, m->id);
}

static void
client_on_session_ps(struct client *c, const struct proto_msg *m)
{
	session_processes(client_daemon(c), c, m->id, m->u.session_ps.session, false, 0);
}

static void
client_on_process_stop(struct client *c, const struct proto_msg *m)
{
	session_processes(client_daemon(c), c, m->id, m->u.process_stop.session, true,
			  m->u.process_stop.pid);
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
