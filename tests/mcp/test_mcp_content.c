/* test_mcp_content.c: unit tests of libclient/mcp/content.c (content blocks for MCP results). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/content.h"

static const unsigned char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

static void
test_text_clean_replaces_and_cuts(void **state)
{
	size_t used;
	char *s;

	(void)state;
	s = mcp_text_clean("a\xff"
			   "b\0c",
			   5, 100, &used);
	assert_string_equal(s, "a\xef\xbf\xbd"
			       "b\xef\xbf\xbd"
			       "c");
	assert_int_equal(used, 5);
	free(s);
	/* "é" is two bytes: a cut never splits it. */
	s = mcp_text_clean("x\xc3\xa9y", 4, 2, &used);
	assert_string_equal(s, "x");
	assert_int_equal(used, 1);
	free(s);
	/* Overlong and surrogate encodings are invalid. */
	s = mcp_text_clean("\xc0\xaf\xed\xa0\x80", 5, 100, &used);
	assert_null(strstr(s, "\xc0"));
	assert_null(strstr(s, "\xed\xa0"));
	free(s);
}

/* A name that is not UTF-8 is escaped (\xHH, backslash doubled); a UTF-8
 * name is as it is. */
static void
test_name_clean(void **state)
{
	char *s;

	(void)state;
	s = mcp_name_clean("plot \xc3\xa9\\.png");
	assert_string_equal(s, "plot \xc3\xa9\\.png");
	free(s);
	s = mcp_name_clean("a\xff"
			   "b\\c\xc3\xa9");
	assert_string_equal(s, "a\\xffb\\\\c\xc3\xa9");
	free(s);
}

static void
test_output_marker(void **state)
{
	json_t *b;

	(void)state;
	b = mcp_block_output("stdout", "0123456789", 10, 50, 4);
	assert_string_equal(json_string_value(json_object_get(b, "type")), "text");
	assert_string_equal(json_string_value(json_object_get(b, "text")),
			    "stdout:\n0123\n[... output truncated: 46 bytes more ...]");
	json_decref(b);
	b = mcp_block_output("stderr", "ok", 2, 2, 100);
	assert_string_equal(json_string_value(json_object_get(b, "text")), "stderr:\nok");
	json_decref(b);
}

/* All the output kept but too long: its head and its tail, the middle cut
 * and counted; a cut never splits a character. */
static void
test_output_head_and_tail(void **state)
{
	char buf[3000], *t;
	bool cut = false;

	(void)state;
	memset(buf, 'h', 1000);
	memset(buf + 1000, 'm', 1000);
	memset(buf + 2000, 't', 1000);
	buf[2999] = '!';
	t = mcp_text_cut(buf, sizeof(buf), sizeof(buf), 1000, &cut);
	assert_true(cut);
	assert_int_equal(strspn(t, "h"), 400);
	assert_non_null(strstr(t, "\n[... 2000 bytes cut ...]\n"));
	assert_int_equal(t[strlen(t) - 1], '!');
	assert_int_equal(strlen(strstr(t, "cut ...]\n") + 9), 600);
	free(t);
	/* The tail starts on a character boundary: "é" is two bytes. */
	for (int i = 0; i < 1500; i++)
		memcpy(buf + 2 * i, "\xc3\xa9", 2);
	t = mcp_text_cut(buf, 3000, 3000, 301, &cut);
	assert_true(cut);
	assert_null(strstr(t, "\xef\xbf\xbd")); /* no U+FFFD from a split character */
	free(t);
	/* Fits: untouched. */
	t = mcp_text_cut("abc", 3, 3, 10, &cut);
	assert_false(cut);
	assert_string_equal(t, "abc");
	free(t);
}

static void
test_image_types(void **state)
{
	(void)state;
	assert_string_equal(mcp_image_type("x", png, sizeof(png) - 1), "image/png");
	assert_string_equal(mcp_image_type("x.bin", "\xff\xd8\xff\xe0", 4), "image/jpeg");
	assert_string_equal(mcp_image_type("a.svg", "<svg/>", 6), "image/svg+xml");
	assert_string_equal(mcp_image_type("plot", "  <?xml version='1.0'?><svg></svg>", 34),
			    "image/svg+xml");
	assert_null(mcp_image_type("a.png", "not a png", 9)); /* magic, not the name */
	assert_null(mcp_image_type("b.svg", "\xff\xfe", 2));  /* SVG must be text */
	/* Model APIs take these four as images, not SVG. */
	assert_true(mcp_image_for_model("image/png"));
	assert_true(mcp_image_for_model("image/webp"));
	assert_false(mcp_image_for_model("image/svg+xml"));
	assert_false(mcp_image_for_model(NULL));
}

static void
test_uri_escapes(void **state)
{
	char *uri;

	(void)state;
	uri = mcp_artifact_uri(NULL, "out dir/a#b?.txt");
	assert_string_equal(uri, "airlock://artifact/out%20dir/a%23b%3F.txt");
	free(uri);
	uri = mcp_artifact_uri("airlock://session/0123/", "a b");
	assert_string_equal(uri, "airlock://session/0123/a%20b");
	free(uri);
	uri = mcp_uri_decode("out%20dir/a%23b%3f.txt", 22);
	assert_string_equal(uri, "out dir/a#b?.txt");
	free(uri);
	assert_null(mcp_uri_decode("a%00b", 5)); /* no NUL */
	assert_null(mcp_uri_decode("a%2", 3));
	assert_null(mcp_uri_decode("a%zz", 4));
}

static void
test_file_blocks_and_budget(void **state)
{
	struct mcp_budget b;
	json_t *content = json_array(), *blk;
	char *big = malloc(MCP_RESOURCE_MAX + 10);
	int i;

	(void)state;
	mcp_budget_init(&b, 256 * 1024, true, "airlock://session/s/");
	for (i = 0; i < MCP_IMAGES_MAX + 1; i++)
		assert_int_equal(mcp_content_file(content, &b, "p.png", png, sizeof(png) - 1,
						  sizeof(png) - 1, false),
				 0);
	for (i = 0; i < MCP_IMAGES_MAX; i++) {
		blk = json_array_get(content, (size_t)i);
		assert_string_equal(json_string_value(json_object_get(blk, "type")), "image");
		assert_string_equal(json_string_value(json_object_get(blk, "data")),
				    "iVBORw0KGgoAAAANSUhEUg==");
	}
	blk = json_array_get(content, MCP_IMAGES_MAX);
	assert_string_equal(json_string_value(json_object_get(blk, "type")), "resource_link");

	/* A truncated image is never sent as one: it would not decode. */
	assert_int_equal(mcp_content_file(content, &b, "q.png", png, sizeof(png) - 1, 9999, true),
			 0);
	blk = json_array_get(content, json_array_size(content) - 1);
	assert_string_equal(json_string_value(json_object_get(blk, "type")), "resource_link");

	/* Text above the per-resource bound is embedded cut, with a marker. */
	memset(big, 'a', MCP_RESOURCE_MAX + 10);
	assert_int_equal(mcp_content_file(content, &b, "t.txt", big, MCP_RESOURCE_MAX + 10,
					  MCP_RESOURCE_MAX + 10, false),
			 0);
	blk = json_object_get(json_array_get(content, json_array_size(content) - 1), "resource");
	assert_string_equal(json_string_value(json_object_get(blk, "mimeType")), "text/plain");
	assert_non_null(strstr(json_string_value(json_object_get(blk, "text")),
			       "[... file truncated: 10 bytes more ...]"));

	/* Binary: a blob; too large binary: a link, or a note for older clients. */
	assert_int_equal(mcp_content_file(content, &b, "d.bin", "\0\1\2", 3, 3, false), 0);
	blk = json_object_get(json_array_get(content, json_array_size(content) - 1), "resource");
	assert_string_equal(json_string_value(json_object_get(blk, "blob")), "AAEC");
	big[0] = '\0';
	b.links = false;
	assert_int_equal(mcp_content_file(content, &b, "e.bin", big, MCP_RESOURCE_MAX + 10,
					  MCP_RESOURCE_MAX + 10, false),
			 0);
	blk = json_array_get(content, json_array_size(content) - 1);
	assert_string_equal(json_string_value(json_object_get(blk, "type")), "text");
	assert_non_null(strstr(json_string_value(json_object_get(blk, "text")), "not included"));
	/* A one-shot run (no base): never a link, a note saying why. */
	b.links = true;
	b.base = NULL;
	assert_int_equal(mcp_content_file(content, &b, "f.bin", big, MCP_RESOURCE_MAX + 10,
					  MCP_RESOURCE_MAX + 10, false),
			 0);
	blk = json_array_get(content, json_array_size(content) - 1);
	assert_string_equal(json_string_value(json_object_get(blk, "type")), "text");
	assert_non_null(strstr(json_string_value(json_object_get(blk, "text")), "session"));
	free(big);
	json_decref(content);
}

/* SVG is an embedded text resource, never image content; the budget runs
 * out: the file is named, not embedded. */
static void
test_svg_and_budget(void **state)
{
	struct mcp_budget b;
	json_t *content = json_array(), *blk;
	char text[2000];

	(void)state;
	mcp_budget_init(&b, 1500, true, NULL);
	assert_int_equal(mcp_content_file(content, &b, "plot.svg", "<svg></svg>", 11, 11, false),
			 0);
	blk = json_array_get(content, 0);
	assert_string_equal(json_string_value(json_object_get(blk, "type")), "resource");
	blk = json_object_get(blk, "resource");
	assert_string_equal(json_string_value(json_object_get(blk, "mimeType")), "image/svg+xml");
	assert_string_equal(json_string_value(json_object_get(blk, "text")), "<svg></svg>");
	memset(text, 'x', sizeof(text));
	assert_int_equal(mcp_content_file(content, &b, "a.txt", text, 1000, 1000, false), 0);
	assert_int_equal(mcp_content_file(content, &b, "b.txt", text, 2000, 2000, false), 0);
	blk = json_array_get(content, 2);
	assert_string_equal(json_string_value(json_object_get(blk, "type")), "text");
	assert_non_null(strstr(json_string_value(json_object_get(blk, "text")), "budget"));
	json_decref(content);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_clean_replaces_and_cuts),
		cmocka_unit_test(test_output_marker),
		cmocka_unit_test(test_name_clean),
		cmocka_unit_test(test_image_types),
		cmocka_unit_test(test_uri_escapes),
		cmocka_unit_test(test_file_blocks_and_budget),
		cmocka_unit_test(test_output_head_and_tail),
		cmocka_unit_test(test_svg_and_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
