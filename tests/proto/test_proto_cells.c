/* test_proto_cells.c: unit tests of the proto module's interpreter
 * sessions: session_open.interpreter, run.cell, a cell's result (cell,
 * state, value, display, value_display), and the fields for the Jupyter
 * kernel (docs/design-jupyter.md §6): restarted and the exception's ename,
 * evalue and traceback, round trip and every bound on both sides. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <msgpack.h>

#include "proto.h"
#include "proto_testlib.h"

/* Encode res, decode it into *m (free with proto_msg_free). */
static void
round_trip(const struct proto_result *res, struct proto_msg *m)
{
	enum proto_error code = PROTO_ERR_INTERNAL;
	struct proto_out o;
	char why[256] = "";
	int r;

	assert_int_equal(proto_encode_result(5, res, &o), 0);
	r = proto_decode(o.buf, o.len, o.fds, o.nfds, m, &code, NULL, why, sizeof(why));
	if (r != 0)
		fail_msg("decode failed: %d %s", r, why);
	o.nfds = 0;
	proto_out_free(&o);
}

static void
pk_str(msgpack_packer *pk, const char *s, size_t n)
{
	assert_int_equal(msgpack_pack_str(pk, n), 0);
	assert_int_equal(msgpack_pack_str_body(pk, s, n), 0);
}

#define PK_KEY(pk, k) pk_str(pk, k, strlen(k))

/* Interpreter sessions' requests: session_open.interpreter and
 * .background, run.cell: round trip and the bounds. */
static void
test_cells_requests(void **state)
{
	struct proto_session_open so = {.interpreter = "python"};
	struct proto_run run = {.runtime = "python", .code = inline_blob("x"), .cell = true};
	struct proto_out o;
	struct proto_msg m;

	(void)state;
	assert_int_equal(proto_encode_session_open(3, &so, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.session_open.interpreter, "python");
	assert_false(m.u.session_open.background);
	proto_msg_free(&m);
	so.background = true;
	assert_int_equal(proto_encode_session_open(3, &so, &o), 0);
	decode_out(&o, &m);
	assert_true(m.u.session_open.background);
	proto_msg_free(&m);
	so.background = false;
	so.interpreter = "";
	assert_int_equal(proto_encode_session_open(3, &so, &o), -EINVAL);

	assert_int_equal(proto_encode_run(4, &run, &o), 0);
	decode_out(&o, &m);
	assert_true(m.u.run.cell);
	proto_msg_free(&m);
	run.cell = false;
	assert_int_equal(proto_encode_run(4, &run, &o), 0);
	decode_out(&o, &m);
	assert_false(m.u.run.cell);
	proto_msg_free(&m);
}

/* A cell's result (cell, state, value, display, value_display): round
 * trip and the bounds. */
static void
test_cells(void **state)
{
	static const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	struct proto_artifact disp[PROTO_DISPLAY_MAX + 1];
	struct proto_result res = {.outcome = PROTO_OUTCOME_WALL_LIMIT};
	struct proto_out o;
	struct proto_msg m;
	char big[PROTO_VALUE_MAX + 2];
	size_t i;

	(void)state;
	memset(disp, 0, sizeof(disp));
	for (i = 0; i <= PROTO_DISPLAY_MAX; i++) {
		disp[i].name = "image/png";
		disp[i].size = sizeof(png);
		disp[i].data = (struct proto_blob){png, sizeof(png), -1, true};
	}
	res.out[0] = (struct proto_stream_out){inline_blob(""), 0, false};
	res.out[1] = res.out[0];
	res.cell = 3;
	res.state = "kept";
	res.value = "2";
	res.display = disp;
	res.ndisplay = 1;
	assert_int_equal(proto_encode_result(5, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.cell, 3);
	assert_string_equal(m.u.result.state, "kept");
	assert_string_equal(m.u.result.value, "2");
	assert_int_equal(m.u.result.ndisplay, 1);
	assert_string_equal(m.u.result.display[0].name, "image/png");
	assert_int_equal(m.u.result.display[0].data.len, sizeof(png));
	assert_memory_equal(m.u.result.display[0].data.data, png, sizeof(png));
	assert_int_equal(m.u.result.value_display, 0);
	proto_msg_free(&m);
	/* value_display: the value's items, a bit per display item; none past them. */
	res.ndisplay = 3;
	res.value_display = 0x6;
	assert_int_equal(proto_encode_result(5, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.ndisplay, 3);
	assert_int_equal(m.u.result.value_display, 0x6);
	proto_msg_free(&m);
	res.value_display = 0x8;
	assert_int_equal(proto_encode_result(5, &res, &o), -EINVAL);
	res.value_display = 0;
	res.ndisplay = 1;
	/* Not a cell: none of the cell's keys; a python run's figures
	 * (display) still (issue 30). */
	res.cell = 0;
	assert_int_equal(proto_encode_result(5, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.cell, 0);
	assert_null(m.u.result.state);
	assert_null(m.u.result.value);
	assert_int_equal(m.u.result.ndisplay, 1);
	assert_string_equal(m.u.result.display[0].name, "image/png");
	proto_msg_free(&m);
	res.ndisplay = 0;
	assert_int_equal(proto_encode_result(5, &res, &o), 0);
	decode_out(&o, &m);
	assert_int_equal(m.u.result.ndisplay, 0);
	proto_msg_free(&m);
	res.ndisplay = 1;
	/* The encoder's bounds: a state from the set, the value's size, 8 items. */
	res.cell = 3;
	res.state = "maybe";
	assert_int_equal(proto_encode_result(5, &res, &o), -EINVAL);
	res.state = NULL;
	assert_int_equal(proto_encode_result(5, &res, &o), -EINVAL);
	res.state = "lost";
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	res.value = big;
	assert_int_equal(proto_encode_result(5, &res, &o), -E2BIG);
	res.value = NULL;
	res.ndisplay = PROTO_DISPLAY_MAX + 1;
	assert_int_equal(proto_encode_result(5, &res, &o), -E2BIG);
	res.ndisplay = PROTO_DISPLAY_MAX;
	assert_int_equal(proto_encode_result(5, &res, &o), 0);
	decode_out(&o, &m);
	assert_string_equal(m.u.result.state, "lost");
	assert_int_equal(m.u.result.ndisplay, PROTO_DISPLAY_MAX);
	proto_msg_free(&m);
}

/* A cell's result by hand, with key and a value (a str of len bytes of
 * val, or the uint 1 when val is NULL) added: decoded, the code and reason. */
static int
decode_with(const char *key, const char *val, size_t len, enum proto_error *ret_code, char *why,
	    size_t whylen)
{
	static const char *const zero[] = {"wall_ms",	"cpu_ms",	"memory_peak_bytes",
					   "queued_ms", "stdout_bytes", "stderr_bytes"};
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct proto_msg m;
	size_t i;
	int r;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	assert_int_equal(msgpack_pack_map(&pk, 18), 0);
	PK_KEY(&pk, "type");
	assert_int_equal(msgpack_pack_uint64(&pk, PROTO_RESULT), 0);
	PK_KEY(&pk, "id");
	assert_int_equal(msgpack_pack_uint64(&pk, 3), 0);
	PK_KEY(&pk, "outcome");
	PK_KEY(&pk, "exited");
	PK_KEY(&pk, "exit_code");
	assert_int_equal(msgpack_pack_int64(&pk, 1), 0);
	for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		PK_KEY(&pk, zero[i]);
		assert_int_equal(msgpack_pack_uint64(&pk, 0), 0);
	}
	for (i = 0; i < 2; i++) {
		PK_KEY(&pk, i == 0 ? "stdout" : "stderr");
		assert_int_equal(msgpack_pack_bin(&pk, 0), 0);
		PK_KEY(&pk, i == 0 ? "stdout_truncated" : "stderr_truncated");
		assert_int_equal(msgpack_pack_false(&pk), 0);
	}
	PK_KEY(&pk, "artifacts");
	assert_int_equal(msgpack_pack_array(&pk, 0), 0);
	PK_KEY(&pk, "cell");
	assert_int_equal(msgpack_pack_uint64(&pk, 2), 0);
	PK_KEY(&pk, "state");
	PK_KEY(&pk, "lost");
	PK_KEY(&pk, key);
	if (val != NULL)
		pk_str(&pk, val, len);
	else
		assert_int_equal(msgpack_pack_uint64(&pk, 1), 0);
	r = proto_decode(sb.data, sb.size, NULL, 0, &m, ret_code, NULL, why, whylen);
	if (r == 0)
		proto_msg_free(&m);
	msgpack_sbuffer_destroy(&sb);
	return r;
}

static void
test_round_trip(void **state)
{
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED, .exit_code = 1};
	struct proto_msg m;

	(void)state;
	res.out[0] = (struct proto_stream_out){inline_blob(""), 0, false};
	res.out[1] = res.out[0];
	res.cell = 2;
	res.state = "lost";
	res.restarted = true;
	res.ename = "ValueError";
	res.evalue = "x";
	res.traceback = "Traceback (most recent call last):\nValueError: x\n";
	round_trip(&res, &m);
	assert_true(m.u.result.restarted);
	assert_string_equal(m.u.result.ename, "ValueError");
	assert_string_equal(m.u.result.evalue, "x");
	assert_string_equal(m.u.result.traceback, res.traceback);
	proto_msg_free(&m);
	/* Unset: none of the keys (an older client sees what it saw). */
	res.restarted = false;
	res.ename = NULL;
	round_trip(&res, &m);
	assert_false(m.u.result.restarted);
	assert_null(m.u.result.ename);
	assert_null(m.u.result.evalue);
	assert_null(m.u.result.traceback);
	proto_msg_free(&m);
	/* A run's result never carries them. */
	res.cell = 0;
	res.restarted = true;
	res.ename = "ValueError";
	round_trip(&res, &m);
	assert_false(m.u.result.restarted);
	assert_null(m.u.result.ename);
	proto_msg_free(&m);
}

/* The encoder's bounds: a name not empty, each length at its bound. */
static void
test_encoder_bounds(void **state)
{
	struct proto_result res = {.outcome = PROTO_OUTCOME_EXITED, .cell = 2, .state = "kept"};
	static char tb[PROTO_TRACEBACK_MAX + 2], name[PROTO_ENAME_MAX + 2];
	struct proto_out o;
	struct proto_msg m;

	(void)state;
	res.out[0] = (struct proto_stream_out){inline_blob(""), 0, false};
	res.out[1] = res.out[0];
	res.ename = "";
	assert_int_equal(proto_encode_result(5, &res, &o), -EINVAL);
	memset(name, 'E', sizeof(name) - 1);
	res.ename = name;
	assert_int_equal(proto_encode_result(5, &res, &o), -E2BIG);
	name[PROTO_ENAME_MAX] = '\0';
	memset(tb, 't', sizeof(tb) - 1);
	res.traceback = tb;
	assert_int_equal(proto_encode_result(5, &res, &o), -E2BIG);
	tb[PROTO_TRACEBACK_MAX] = '\0';
	round_trip(&res, &m);
	assert_int_equal(strlen(m.u.result.ename), PROTO_ENAME_MAX);
	assert_int_equal(strlen(m.u.result.traceback), PROTO_TRACEBACK_MAX);
	proto_msg_free(&m);
}

/* The decoder's: an empty name, each string past its bound, a flag of
 * another type; the same message with good values decodes. */
static void
test_decoder_bounds(void **state)
{
	static char big[PROTO_TRACEBACK_MAX + 1];
	enum proto_error code;
	char why[256];

	(void)state;
	memset(big, 'v', sizeof(big));
	assert_int_equal(decode_with("ename", "E", 1, &code, why, sizeof(why)), 0);
	assert_int_equal(decode_with("ename", "", 0, &code, why, sizeof(why)), -EBADMSG);
	assert_int_equal(code, PROTO_ERR_BAD_REQUEST);
	assert_non_null(strstr(why, "result.ename"));
	assert_int_equal(decode_with("ename", big, PROTO_ENAME_MAX + 1, &code, why, sizeof(why)),
			 -E2BIG);
	assert_int_equal(code, PROTO_ERR_TOO_LARGE);
	assert_int_equal(decode_with("evalue", big, PROTO_EVALUE_MAX, &code, why, sizeof(why)), 0);
	assert_int_equal(decode_with("evalue", big, PROTO_EVALUE_MAX + 1, &code, why, sizeof(why)),
			 -E2BIG);
	assert_int_equal(
		decode_with("traceback", big, PROTO_TRACEBACK_MAX + 1, &code, why, sizeof(why)),
		-E2BIG);
	assert_int_equal(decode_with("restarted", NULL, 0, &code, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "result.restarted: not a boolean"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cells_requests), cmocka_unit_test(test_cells),
		cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_encoder_bounds),
		cmocka_unit_test(test_decoder_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
