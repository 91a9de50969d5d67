/* test_proto_cells.c: unit tests of the proto module's cell result fields
 * for the Jupyter kernel (docs/design-jupyter.md §5): restarted and the
 * exception's ename, evalue and traceback, round trip and every bound on
 * both sides. Beside test_proto.c (which is at its size), same module. */
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

static struct proto_blob
blob(const char *s)
{
	return (struct proto_blob){
		.data = (const uint8_t *)s, .len = strlen(s), .fd = -1, .present = true};
}

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
	res.out[0] = (struct proto_stream_out){blob(""), 0, false};
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
	res.out[0] = (struct proto_stream_out){blob(""), 0, false};
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
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encoder_bounds),
		cmocka_unit_test(test_decoder_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
