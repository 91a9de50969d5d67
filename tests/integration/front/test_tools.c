/*
 * test_tools.c: the tool bridge (issue 19) through the real daemon, with a
 * raw client speaking the protocol (common/proto.c): Python in the sandbox
 * calls the client's tools with `import airlock_tools`; undeclared, refused,
 * malformed, huge and flooding calls get errors; code that leaves mid-call
 * and a client that disconnects mid-call end truthfully; the daemon serves
 * on after each.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "front/front_util.h"
#include "proto.h"

#define CONFIG "[sandbox]\nuid_base = 770000\n"

/* A connection whose hello named the feature tools. */
static int
tools_connect(const struct fixture *f)
{
	struct proto_hello h = {.version = PROTO_VERSION,
				.peer = "test-tools",
				.features = {PROTO_FEATURE_TOOLS},
				.nfeatures = 1};
	struct proto_out out;
	struct proto_msg m;
	int fd = front_raw_connect(f->sock);

	assert_true(fd >= 0);
	assert_int_equal(proto_encode_hello(1, PROTO_HELLO, &h, &out), 0);
	assert_int_equal(front_call(fd, &out, 1, &m), 0);
	assert_int_equal(m.type, PROTO_HELLO_OK);
	assert_true(proto_hello_has_feature(&m.u.hello, PROTO_FEATURE_TOOLS));
	proto_msg_free(&m);
	return fd;
}

/* Send a python run declaring search and fetch, as request id. */
static void
send_run(int fd, uint32_t id, const char *code, uint64_t wall_ms)
{
	struct proto_tool tools[2] = {
		{"search", "Search the index", "{\"type\":\"object\"}"},
		{"fetch", NULL, NULL},
	};
	struct proto_run run;
	struct proto_out out;

	front_run_init(&run, "python", code);
	run.tools = tools;
	run.ntools = 2;
	run.limits.v[PROTO_LIMIT_WALL_MS] = wall_ms;
	assert_int_equal(proto_encode_run(id, &run, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
}

/* Answer one call: ok with result, or an error (refused or not). */
static void
reply(int fd, uint32_t id, uint32_t call, const char *result, const char *error, bool refused)
{
	struct proto_tool_reply r = {
		.call = call, .ok = result != NULL, .error = error, .refused = refused};
	struct proto_out out;

	r.result.fd = -1;
	if (result != NULL)
		r.result = (struct proto_blob){.data = (const uint8_t *)result,
					       .len = strlen(result),
					       .fd = -1,
					       .present = true};
	assert_int_equal(proto_encode_tool_reply(id, &r, &out), 0);
	assert_int_equal(front_send_out(fd, &out), 0);
}

/* The client's tools: search answers hits, fetch a record unless asked for a secret. */
static void
serve_call(int fd, const struct proto_msg *m, unsigned *ncalls)
{
	const struct proto_tool_call *c = &m->u.tool_call;
	char args[256];

	(*ncalls)++;
	snprintf(args, sizeof(args), "%.*s", (int)c->args.len, (const char *)c->args.data);
	if (strcmp(c->tool, "search") == 0)
		reply(fd, m->id, c->call, "{\"hits\":\n[7, 8]}", NULL, false);
	else if (strstr(args, "secret") != NULL)
		reply(fd, m->id, c->call, NULL, "not allowed: \"secret\"", true);
	else if (strstr(args, "boom") != NULL)
		reply(fd, m->id, c->call, NULL, "the tool failed", false);
	else if (strstr(args, "notjson") != NULL)
		reply(fd, m->id, c->call, "{oops", NULL, false);
	else
		reply(fd, m->id, c->call, "\"record 7\"", NULL, false);
}

/* Serve calls until the result of id; returns it in *ret. */
static void
serve_until_result(int fd, uint32_t id, struct proto_msg *ret, unsigned *ncalls)
{
	for (;;) {
		struct proto_msg m;

		assert_int_equal(front_recv(fd, FRONT_REPLY_MS, &m), 0);
		if (m.type == PROTO_TOOL_CALL) {
			assert_int_equal(m.id, id);
			serve_call(fd, &m, ncalls);
			proto_msg_free(&m);
			continue;
		}
		if (m.type == PROTO_ERROR)
			fail_msg("error: %s", m.u.error.message);
		assert_int_equal(m.type, PROTO_RESULT);
		*ret = m;
		return;
	}
}

static char *
out_str(const struct proto_msg *m, int k)
{
	char *s = calloc(1, m->u.result.out[k].data.len + 1);

	assert_non_null(s);
	memcpy(s, m->u.result.out[k].data.data, m->u.result.out[k].data.len);
	return s;
}

/* The daemon still answers, and a plain run still works. */
static void
assert_serving(const struct fixture *f)
{
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	int fd = front_hello(f->sock);

	assert_true(fd >= 0);
	assert_int_equal(front_send_ping(fd, 2), 0);
	assert_int_equal(front_recv_reply(fd, 2, FRONT_REPLY_MS, &m), 0);
	assert_int_equal(m.type, PROTO_PONG);
	proto_msg_free(&m);
	front_run_init(&run, "python", "print('still here')\n");
	assert_int_equal(proto_encode_run(3, &run, &out), 0);
	assert_int_equal(front_call(fd, &out, 3, &m), 0);
	assert_int_equal(m.type, PROTO_RESULT);
	assert_int_equal(m.u.result.outcome, PROTO_OUTCOME_EXITED);
	assert_int_equal(m.u.result.exit_code, 0);
	proto_msg_free(&m);
	close(fd);
}

static const char code_two_tools[] = "import airlock_tools as t\n"
				     "a = t.search(query='x')\n"
				     "b = t.call('fetch', id=a['hits'][0])\n"
				     "print('got', a['hits'][0] + a['hits'][1], b)\n"
				     "try:\n"
				     "    t.call('nope', x=1)\n"
				     "except t.ToolError as e:\n"
				     "    print('undeclared', e.code)\n"
				     "try:\n"
				     "    t.fetch(id='secret')\n"
				     "except t.ToolError as e:\n"
				     "    print('refused', e.code, e.message)\n"
				     "try:\n"
				     "    t.fetch(id='boom')\n"
				     "except t.ToolError as e:\n"
				     "    print('failed', e.code, e.message)\n"
				     "try:\n"
				     "    t.fetch(id='notjson')\n"
				     "except t.ToolError as e:\n"
				     "    print('bad result', e.code)\n"
				     "print(sorted(t.names))\n";

/* Two declared tools used together; undeclared, refused, failed and bad results as errors. */
static void
test_two_tools(void **state)
{
	static const struct {
		const char *tool;
		enum proto_tool_outcome oc;
	} want[] = {
		{"search", PROTO_TOOL_OK},	 {"fetch", PROTO_TOOL_OK},
		{"nope", PROTO_TOOL_UNDECLARED}, {"fetch", PROTO_TOOL_REFUSED},
		{"fetch", PROTO_TOOL_ERROR},	 {"fetch", PROTO_TOOL_MALFORMED},
	};
	struct fixture f;
	struct proto_msg m;
	unsigned ncalls = 0;
	char *out, *err;
	size_t i;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fd = tools_connect(&f);
	send_run(fd, 5, code_two_tools, 20000);
	serve_until_result(fd, 5, &m, &ncalls);
	out = out_str(&m, 0);
	err = out_str(&m, 1);
	if (m.u.result.outcome != PROTO_OUTCOME_EXITED || m.u.result.exit_code != 0)
		fail_msg("run failed: stdout %s stderr %s", out, err);
	assert_string_equal(out, "got 15 record 7\n"
				 "undeclared undeclared\n"
				 "refused refused not allowed: \"secret\"\n"
				 "failed failed the tool failed\n"
				 "bad result malformed\n"
				 "['fetch', 'search']\n");
	/* The undeclared call never reached the client. */
	assert_int_equal(ncalls, 5);
	assert_int_equal(m.u.result.ntool_calls, 6);
	for (i = 0; i < 6; i++) {
		assert_string_equal(m.u.result.tool_calls[i].tool, want[i].tool);
		assert_int_equal(m.u.result.tool_calls[i].outcome, want[i].oc);
	}
	assert_true(m.u.result.tool_calls[0].args_bytes > 0);
	assert_true(m.u.result.tool_calls[0].result_bytes > 0);
	free(out);
	free(err);
	proto_msg_free(&m);
	close(fd);
	assert_true(fixture_log_has(&f, "tool_calls=6"));
	assert_int_equal(fixture_stop(&f), 0);
}

/* Raw lines from the code: malformed, huge, undeclared flood, then the limit. */
static const char code_abuse[] =
	"import json, os, socket\n"
	"def conn():\n"
	"    s = socket.socket(socket.AF_UNIX); s.connect(os.environ['AIRLOCK_TOOLS'])\n"
	"    return s, s.makefile('rb')\n"
	"s, f = conn()\n"
	"s.sendall(b'{\"id\": 1, \"tool\": \"search\"}\\n')\n"
	"print(json.loads(f.readline())['code'])\n"
	"s.sendall(b'\\xff\\xfe\\n')\n"
	"print(json.loads(f.readline())['code'])\n"
	"s, f = conn()\n"
	"s.sendall(b'{\"id\":2,\"tool\":\"search\",\"args\":{\"q\":\"' + b'a' * 70000 + "
	"b'\"}}\\n')\n"
	"a = json.loads(f.readline()); print(a['code'], a['id'])\n"
	"try:\n"
	"    print(repr(f.readline()))\n"
	"except ConnectionResetError:\n"
	"    print('reset')\n"
	"s, f = conn()\n"
	"for i in range(300):\n"
	"    s.sendall(b'{\"id\":%d,\"tool\":\"fetch\",\"args\":{}}\\n' % i)\n"
	"codes = {}; ids = set()\n"
	"for i in range(300):\n"
	"    a = json.loads(f.readline())\n"
	"    ids.add(a['id'])\n"
	"    k = 'ok' if a['ok'] else a['code']; codes[k] = codes.get(k, 0) + 1\n"
	"print(sorted(codes.items()), ids == set(range(300)))\n";

static void
test_abuse(void **state)
{
	struct fixture f;
	struct proto_msg m;
	unsigned ncalls = 0;
	char *out, *err;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fd = tools_connect(&f);
	send_run(fd, 6, code_abuse, 60000);
	serve_until_result(fd, 6, &m, &ncalls);
	out = out_str(&m, 0);
	err = out_str(&m, 1);
	if (m.u.result.outcome != PROTO_OUTCOME_EXITED || m.u.result.exit_code != 0)
		fail_msg("run failed: stdout %s stderr %s", out, err);
	assert_string_equal(out, "malformed\nmalformed\ntoo_large None\nreset\n"
				 "[('limit', 44), ('ok', 256)] True\n");
	assert_int_equal(ncalls, 256);
	assert_int_equal(m.u.result.ntool_calls, PROTO_TOOL_CALLS_LISTED_MAX);
	assert_int_equal(m.u.result.tool_calls_omitted, 3 + 300 - PROTO_TOOL_CALLS_LISTED_MAX);
	free(out);
	free(err);
	proto_msg_free(&m);
	close(fd);
	assert_serving(&f);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * The client answers call (of run id) after the run ended: the answer is
 * dropped without an error and the connection goes on; then fd is closed,
 * the daemon still serves, and f is stopped.
 */
static void
late_answer_dropped(struct fixture *f, int fd, uint32_t id, struct proto_msg *call)
{
	struct proto_msg m;

	reply(fd, id, call->u.tool_call.call, "1", NULL, false);
	proto_msg_free(call);
	assert_int_equal(front_send_ping(fd, id + 1), 0);
	assert_int_equal(front_recv_reply(fd, id + 1, FRONT_REPLY_MS, &m), 0);
	assert_int_equal(m.type, PROTO_PONG);
	proto_msg_free(&m);
	close(fd);
	assert_serving(f);
	assert_int_equal(fixture_stop(f), 0);
}

/* Code that leaves mid-call: the call is abandoned, the late answer dropped. */
static void
test_code_exits_mid_call(void **state)
{
	struct fixture f;
	struct proto_msg m, call;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fd = tools_connect(&f);
	send_run(fd, 7,
		 "import os, socket\n"
		 "s = socket.socket(socket.AF_UNIX); s.connect(os.environ['AIRLOCK_TOOLS'])\n"
		 "s.sendall(b'{\"id\":1,\"tool\":\"search\",\"args\":{}}\\n')\n"
		 "import time; time.sleep(0.5)\n"
		 "os._exit(3)\n",
		 20000);
	assert_int_equal(front_recv(fd, FRONT_REPLY_MS, &call), 0);
	assert_int_equal(call.type, PROTO_TOOL_CALL);
	assert_int_equal(front_recv(fd, FRONT_REPLY_MS, &m), 0);
	assert_int_equal(m.type, PROTO_RESULT);
	assert_int_equal(m.u.result.exit_code, 3);
	assert_int_equal(m.u.result.ntool_calls, 1);
	assert_int_equal(m.u.result.tool_calls[0].outcome, PROTO_TOOL_ABANDONED);
	proto_msg_free(&m);
	late_answer_dropped(&f, fd, 7, &call);
}

/* A client that disconnects mid-call: its run is cancelled, the daemon serves on. */
static void
test_client_disconnects(void **state)
{
	struct fixture f;
	struct proto_msg call;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fd = tools_connect(&f);
	send_run(fd, 9, "import airlock_tools\nairlock_tools.search(q=1)\n", 20000);
	assert_int_equal(front_recv(fd, FRONT_REPLY_MS, &call), 0);
	assert_int_equal(call.type, PROTO_TOOL_CALL);
	proto_msg_free(&call);
	close(fd);
	assert_serving(&f);
	assert_int_equal(fixture_stop(&f), 0);
}

/*
 * A client that takes the call and never answers: after RUN_TOOLS_WAIT_MS
 * (30 s) the code gets the error "timeout" and goes on, the result records
 * the call as timed out, and a late answer is dropped.
 */
static void
test_client_never_answers(void **state)
{
	struct fixture f;
	struct proto_msg m, call;
	char *out;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fd = tools_connect(&f);
	send_run(fd, 11,
		 "import airlock_tools, time\n"
		 "t0 = time.monotonic()\n"
		 "try:\n"
		 "    airlock_tools.search(q=1)\n"
		 "except airlock_tools.ToolError as e:\n"
		 "    print('error', e.code, 25 <= time.monotonic() - t0 <= 40)\n",
		 60000);
	assert_int_equal(front_recv(fd, FRONT_REPLY_MS, &call), 0);
	assert_int_equal(call.type, PROTO_TOOL_CALL);
	assert_int_equal(front_recv(fd, 45000, &m), 0);
	assert_int_equal(m.type, PROTO_RESULT);
	out = out_str(&m, 0);
	assert_string_equal(out, "error timeout True\n");
	free(out);
	assert_int_equal(m.u.result.exit_code, 0);
	assert_int_equal(m.u.result.ntool_calls, 1);
	assert_int_equal(m.u.result.tool_calls[0].outcome, PROTO_TOOL_TIMEOUT);
	proto_msg_free(&m);
	late_answer_dropped(&f, fd, 11, &call);
}

/* A client that did not name the feature cannot declare tools, nor reply. */
static void
test_feature_required(void **state)
{
	struct fixture f;
	struct proto_tool tools[1] = {{"search", NULL, NULL}};
	struct proto_run run;
	struct proto_out out;
	struct proto_msg m;
	int fd;

	(void)state;
	assert_int_equal(fixture_start(&f, CONFIG), 0);
	fd = front_hello(f.sock);
	assert_true(fd >= 0);
	front_run_init(&run, "python", "print(1)\n");
	run.tools = tools;
	run.ntools = 1;
	assert_int_equal(proto_encode_run(4, &run, &out), 0);
	assert_int_equal(front_call(fd, &out, 4, &m), 0);
	assert_int_equal(m.type, PROTO_ERROR);
	assert_int_equal(m.u.error.code, PROTO_ERR_BAD_REQUEST);
	assert_non_null(strstr(m.u.error.message, "tools"));
	proto_msg_free(&m);
	close(fd);
	assert_int_equal(fixture_stop(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature_required),
		cmocka_unit_test(test_two_tools),
		cmocka_unit_test(test_abuse),
		cmocka_unit_test(test_code_exits_mid_call),
		cmocka_unit_test(test_client_disconnects),
		cmocka_unit_test(test_client_never_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
