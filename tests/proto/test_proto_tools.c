/* test_proto.c: unit tests of the wire codec in common/proto.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <msgpack.h>

#include "fdpass.h"
#include "memfd.h"
#include "proto.h"
#include "proto_testlib.h"

/* ------------------------------------------------------- tool bridge */

/* run.tools: names, descriptions and schemas survive; absent is none. */
static void
test_roundtrip_run_tools(void **state)
{
	struct proto_tool tools[2] = {
		{"search", "Search the index", "{\"type\":\"object\"}"},
		{"_fetch2", NULL, NULL},
	};
	struct proto_run run = {.runtime = "python", .tools = tools, .ntools = 2};
	struct proto_out o;
	struct proto_msg m;

	(void)state;
	run.code.fd = run.stdin_data.fd = -1;
	assert_int_equal(proto_encode_run(3, &run, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.run.ntools, 2);
	assert_string_equal(m.u.run.tools[0].name, "search");
	assert_string_equal(m.u.run.tools[0].description, "Search the index");
	assert_string_equal(m.u.run.tools[0].schema, "{\"type\":\"object\"}");
	assert_string_equal(m.u.run.tools[1].name, "_fetch2");
	assert_null(m.u.run.tools[1].description);
	assert_null(m.u.run.tools[1].schema);
	proto_msg_free(&m);

	/* The encoder refuses what the decoder would. */
	tools[1].name = "1bad";
	assert_int_equal(proto_encode_run(3, &run, &o), -EINVAL);
	tools[1].name = "ok";
	tools[1].schema = "[]";
	assert_int_equal(proto_encode_run(3, &run, &o), -EINVAL);
	tools[1].schema = NULL;
	run.ntools = PROTO_TOOLS_MAX + 1;
	assert_int_equal(proto_encode_run(3, &run, &o), -E2BIG);
}

/* A run whose tools field is built by fn. */
static void
run_tools_with(struct mb *b, size_t ntools, void (*fn)(struct mb *, size_t))
{
	size_t i;

	mb_head(b, 2, PROTO_RUN, 9);
	mb_str(b, "runtime");
	mb_str(b, "python");
	mb_str(b, "tools");
	mb_array(b, ntools);
	for (i = 0; i < ntools; i++)
		fn(b, i);
}

static void
t_named(struct mb *b, const char *name, const char *schema)
{
	mb_map(b, schema != NULL ? 2 : 1);
	mb_str(b, "name");
	mb_str(b, name);
	if (schema != NULL) {
		mb_str(b, "schema");
		mb_str(b, schema);
	}
}

static void
t_same(struct mb *b, size_t i)
{
	(void)i;
	t_named(b, "x", NULL);
}

static void
t_badname(struct mb *b, size_t i)
{
	(void)i;
	t_named(b, "a-b", NULL);
}

static void
t_badschema(struct mb *b, size_t i)
{
	(void)i;
	t_named(b, "a", "{\"a\":}");
}

static void
t_many(struct mb *b, size_t i)
{
	char name[16];

	snprintf(name, sizeof(name), "t%zu", i);
	t_named(b, name, NULL);
}

static void
t_longname(struct mb *b, size_t i)
{
	(void)i;
	mb_map(b, 1);
	mb_str(b, "name");
	mb_strn(b, 'a', PROTO_TOOL_NAME_MAX + 1);
}

static void
t_longschema(struct mb *b, size_t i)
{
	(void)i;
	mb_map(b, 2);
	mb_str(b, "name");
	mb_str(b, "a");
	mb_str(b, "schema");
	mb_strn(b, ' ', PROTO_TOOL_SCHEMA_MAX + 1);
}

static void
t_nothing(struct mb *b, size_t i)
{
	(void)b;
	(void)i;
}

/* run.tools: every bound and rule refused by the decoder, naming the field. */
static void
test_bad_run_tools(void **state)
{
	struct mb b;

	(void)state;
	run_tools_with(&b, 2, t_same);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "declared twice", 9);
	run_tools_with(&b, 1, t_badname);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "run.tools[0].name", 9);
	run_tools_with(&b, 1, t_badschema);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "not a JSON object", 9);
	run_tools_with(&b, PROTO_TOOLS_MAX + 1, t_many);
	check_fail(&b, PROTO_ERR_TOO_LARGE, "run.tools", 9);
	run_tools_with(&b, 1, t_longname);
	check_fail(&b, PROTO_ERR_TOO_LARGE, "run.tools[0].name", 9);
	run_tools_with(&b, 1, t_longschema);
	check_fail(&b, PROTO_ERR_TOO_LARGE, "run.tools[0].schema", 9);
	run_tools_with(&b, 0, t_nothing);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "empty", 9);
	/* PROTO_TOOLS_MAX is fine. */
	{
		struct proto_msg m;

		run_tools_with(&b, PROTO_TOOLS_MAX, t_many);
		decode_mb(&b, NULL, 0, &m);
		assert_int_equal(m.u.run.ntools, PROTO_TOOLS_MAX);
		proto_msg_free(&m);
	}
}

/* tool_call and tool_reply round trips, inline and as a memfd. */
static void
test_roundtrip_tool_messages(void **state)
{
	struct proto_tool_call c = {.call = 1, .tool = "search", .args = inline_blob("{\"q\":1}")};
	struct proto_tool_reply r = {.call = 1, .ok = true, .result = inline_blob("[1,2]")};
	uint8_t *big = pattern(PROTO_TOOL_BYTES_MAX, 3);
	struct proto_out o;
	struct proto_msg m;

	(void)state;
	assert_int_equal(proto_encode_tool_call(5, &c, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_TOOL_CALL);
	assert_int_equal(m.id, 5);
	assert_int_equal(m.u.tool_call.call, 1);
	assert_string_equal(m.u.tool_call.tool, "search");
	assert_int_equal(m.u.tool_call.args.len, 7);
	assert_memory_equal(m.u.tool_call.args.data, "{\"q\":1}", 7);
	proto_msg_free(&m);

	assert_int_equal(proto_encode_tool_reply(5, &r, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.type, PROTO_TOOL_REPLY);
	assert_true(m.u.tool_reply.ok);
	assert_false(m.u.tool_reply.refused);
	assert_null(m.u.tool_reply.error);
	assert_memory_equal(m.u.tool_reply.result.data, "[1,2]", 5);
	proto_msg_free(&m);

	/* The largest result travels as a memfd. */
	r.result = (struct proto_blob){
		.data = big, .len = PROTO_TOOL_BYTES_MAX, .fd = -1, .present = true};
	assert_int_equal(proto_encode_tool_reply(5, &r, &o), 0);
	assert_int_equal(o.nfds, 1);
	decode_out(&o, &m);
	assert_int_equal(m.u.tool_reply.result.len, PROTO_TOOL_BYTES_MAX);
	assert_memory_equal(m.u.tool_reply.result.data, big, PROTO_TOOL_BYTES_MAX);
	proto_msg_free(&m);
	r.result.len = PROTO_TOOL_BYTES_MAX + 1;
	assert_int_equal(proto_encode_tool_reply(5, &r, &o), -E2BIG);
	c.args = r.result;
	assert_int_equal(proto_encode_tool_call(5, &c, &o), -E2BIG);
	free(big);

	/* A refusal: no result, an error, refused. */
	r = (struct proto_tool_reply){.call = 2, .ok = false, .error = "no", .refused = true};
	r.result.fd = -1;
	assert_int_equal(proto_encode_tool_reply(6, &r, &o), 0);
	decode_out(&o, &m);
	assert_false(m.u.tool_reply.ok);
	assert_true(m.u.tool_reply.refused);
	assert_string_equal(m.u.tool_reply.error, "no");
	assert_false(m.u.tool_reply.result.present);
	proto_msg_free(&m);

	/* The encoder refuses inconsistent replies and calls. */
	r.ok = true;
	assert_int_equal(proto_encode_tool_reply(6, &r, &o), -EINVAL);
	r = (struct proto_tool_reply){.call = 0, .ok = false, .error = "x"};
	assert_int_equal(proto_encode_tool_reply(6, &r, &o), -EINVAL);
	c = (struct proto_tool_call){.call = 1, .tool = "a b", .args = inline_blob("{}")};
	assert_int_equal(proto_encode_tool_call(6, &c, &o), -EINVAL);
	c.tool = "a";
	c.call = 0;
	assert_int_equal(proto_encode_tool_call(6, &c, &o), -EINVAL);
}

/* A tool_reply with these fields (a bitmask of which to include). */
static void
b_reply(struct mb *b, unsigned what, bool ok, uint64_t call)
{
	mb_head(b, 2 + !!(what & 1) + !!(what & 2) + !!(what & 4), PROTO_TOOL_REPLY, 4);
	mb_str(b, "call");
	mb_uint(b, call);
	mb_str(b, "ok");
	assert_int_equal(ok ? msgpack_pack_true(&b->pk) : msgpack_pack_false(&b->pk), 0);
	if (what & 1) {
		mb_str(b, "result");
		mb_bin(b, "1", 1);
	}
	if (what & 2) {
		mb_str(b, "error");
		mb_str(b, "bad");
	}
	if (what & 4) {
		mb_str(b, "refused");
		assert_int_equal(msgpack_pack_true(&b->pk), 0);
	}
}

/* tool_reply: ok with a result, not ok with an error, refused only when not ok. */
static void
test_bad_tool_reply(void **state)
{
	struct proto_msg m;
	struct mb b;

	(void)state;
	b_reply(&b, 0, true, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "tool_reply.result: missing", 4);
	b_reply(&b, 1 | 2, true, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "tool_reply.error: not allowed", 4);
	b_reply(&b, 1 | 4, true, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "tool_reply.refused", 4);
	b_reply(&b, 0, false, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "tool_reply.error: missing", 4);
	b_reply(&b, 1 | 2, false, 1);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "tool_reply.result: not allowed", 4);
	b_reply(&b, 1, true, 0);
	check_fail(&b, PROTO_ERR_BAD_REQUEST, "tool_reply.call", 4);
	b_reply(&b, 2 | 4, false, 7);
	decode_mb(&b, NULL, 0, &m);
	assert_true(m.u.tool_reply.refused);
	assert_int_equal(m.u.tool_reply.call, 7);
	proto_msg_free(&m);
}

/* result.tool_calls and result.advisories: they round trip; absent when
 * there is none. */
static void
test_roundtrip_result_tool_calls(void **state)
{
	struct proto_tool_record rec[2] = {
		{"search", PROTO_TOOL_OK, 12, 15, 30},
		{"", PROTO_TOOL_UNDECLARED, 0, 2, 0},
	};
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED};
	struct proto_out o;
	struct proto_msg m;
	size_t i;

	(void)state;
	res.out[0].data.fd = res.out[1].data.fd = -1;
	assert_int_equal(proto_encode_result(2, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.ntool_calls, 0);
	assert_int_equal(m.u.result.tool_calls_omitted, 0);
	assert_int_equal(m.u.result.nadvisories, 0);
	proto_msg_free(&m);

	/* result.advisories, the same way: absent when none, every bound. */
	res.advisories[0] = "blocked import: subprocess (line 3)";
	res.advisories[1] = "blocked import: 4 more not listed";
	res.nadvisories = 2;
	assert_int_equal(proto_encode_result(2, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.nadvisories, 2);
	assert_string_equal(m.u.result.advisories[0], "blocked import: subprocess (line 3)");
	assert_string_equal(m.u.result.advisories[1], res.advisories[1]);
	proto_msg_free(&m);
	res.nadvisories = PROTO_ADVISORIES_MAX + 1;
	assert_int_equal(proto_encode_result(2, &res, &o), -E2BIG);
	res.nadvisories = 1;
	res.advisories[0] = "";
	assert_int_equal(proto_encode_result(2, &res, &o), -EINVAL);
	res.nadvisories = 0;

	res.tool_calls = rec;
	res.ntool_calls = 2;
	res.tool_calls_omitted = 5;
	assert_int_equal(proto_encode_result(2, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.ntool_calls, 2);
	for (i = 0; i < 2; i++) {
		assert_string_equal(m.u.result.tool_calls[i].tool, rec[i].tool);
		assert_int_equal(m.u.result.tool_calls[i].outcome, rec[i].outcome);
		assert_int_equal(m.u.result.tool_calls[i].ms, rec[i].ms);
		assert_int_equal(m.u.result.tool_calls[i].args_bytes, rec[i].args_bytes);
		assert_int_equal(m.u.result.tool_calls[i].result_bytes, rec[i].result_bytes);
	}
	assert_int_equal(m.u.result.tool_calls_omitted, 5);
	proto_msg_free(&m);

	rec[1].outcome = PROTO_TOOL_OUTCOME_COUNT_;
	assert_int_equal(proto_encode_result(2, &res, &o), -EINVAL);
	res.ntool_calls = PROTO_TOOL_CALLS_LISTED_MAX + 1;
	assert_int_equal(proto_encode_result(2, &res, &o), -E2BIG);

	/* Every outcome has a name that reads back. */
	for (i = 0; i < PROTO_TOOL_OUTCOME_COUNT_; i++) {
		enum proto_tool_outcome oc;

		assert_int_equal(proto_tool_outcome_from_name(
					 proto_tool_outcome_name((enum proto_tool_outcome)i), &oc),
				 0);
		assert_int_equal(oc, i);
	}
	{
		enum proto_tool_outcome oc;

		assert_int_equal(proto_tool_outcome_from_name("nope", &oc), -ENOENT);
	}
}
#define T(f) cmocka_unit_test_setup_teardown(f, fd_setup, fd_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_roundtrip_run_tools),	     T(test_bad_run_tools),
		T(test_roundtrip_tool_messages),     T(test_bad_tool_reply),
		T(test_roundtrip_result_tool_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
