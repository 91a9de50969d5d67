/* mcp_content.c: MCP content blocks built from what a run or a file read returned.
 *
 * Everything here comes from code the caller chose not to trust: output,
 * file names and file contents. It goes back into a model's context, so
 * every block is bounded (see mcp_content.h) and says when it was cut. */
#include "mcp_content.h"
#include "cli_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char mcp_replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The length of the valid UTF-8 sequence at s (n bytes available), or 0. */
static size_t
mcp_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, k;
	uint32_t cp;

	if (s[0] < 0x80)
		return s[0] == 0 ? 0 : 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void
mcp_budget_init(struct mcp_budget *b, bool links)
{
	b->images = MCP_IMAGES_MAX;
	b->resource_bytes = MCP_RESOURCES_TOTAL;
	b->blocks = MCP_ARTIFACT_BLOCKS_MAX;
	b->links = links;
}

char *
mcp_text_clean(const void *buf, size_t len, size_t max, size_t *ret_used)
{
	const unsigned char *s = buf;
	size_t i = 0, o = 0, n;
	char *out;

	/* At most 3 output bytes per input byte, never more than max. */
	out = malloc((len < max ? len * 3 : max) + 1);
	if (out == NULL)
		return NULL;
	while (i < len) {
		n = mcp_utf8_seq(s + i, len - i);
		if (n == 0) {
			if (o + 3 > max)
				break;
			memcpy(out + o, mcp_replacement, 3);
			o += 3;
			i++;
			continue;
		}
		if (o + n > max)
			break;
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	out[o] = '\0';
	if (ret_used != NULL)
		*ret_used = i;
	return out;
}

/* jansson returns NULL only when out of memory for these: the command exits. */
static json_t *
mcp_check(json_t *v)
{
	if (v == NULL) {
		fputs("airlock: mcp: out of memory\n", stderr);
		exit(70);
	}
	return v;
}

json_t *
mcp_block_text(const char *text)
{
	return mcp_check(json_pack("{s:s, s:s}", "type", "text", "text", text));
}

json_t *
mcp_block_output(const char *label, const void *buf, size_t len, uint64_t total, size_t max)
{
	char *text, *all;
	size_t used;
	json_t *block;

	text = mcp_text_clean(buf, len, max, &used);
	if (text == NULL)
		mcp_check(NULL);
	if (total < len)
		total = len;
	if (used < total) {
		if (asprintf(&all, "%s:\n%s\n[... output truncated: %llu bytes more ...]", label,
			     text, (unsigned long long)(total - used)) < 0)
			all = NULL;
	} else if (asprintf(&all, "%s:\n%s", label, text) < 0)
		all = NULL;
	free(text);
	if (all == NULL)
		mcp_check(NULL);
	block = mcp_block_text(all);
	free(all);
	return block;
}

/* Whether name ends in suffix, ignoring case. */
static bool
mcp_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n >= s && strcasecmp(name + n - s, suffix) == 0;
}

/* Whether the first bytes of buf look like an SVG document. */
static bool
mcp_looks_svg(const unsigned char *s, size_t len)
{
	size_t i = 0, n = len < 1024 ? len : 1024;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	if (n - i >= 4 && memcmp(s + i, "<svg", 4) == 0)
		return true;
	if (n - i >= 5 && memcmp(s + i, "<?xml", 5) == 0)
		return memmem(s + i, n - i, "<svg", 4) != NULL;
	return false;
}

const char *
mcp_image_type(const char *name, const void *buf, size_t len)
{
	const unsigned char *s = buf;

	if (len >= 8 && memcmp(s, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (len >= 3 && memcmp(s, "\xff\xd8\xff", 3) == 0)
		return "image/jpeg";
	if (len >= 6 && (memcmp(s, "GIF87a", 6) == 0 || memcmp(s, "GIF89a", 6) == 0))
		return "image/gif";
	if (len >= 12 && memcmp(s, "RIFF", 4) == 0 && memcmp(s + 8, "WEBP", 4) == 0)
		return "image/webp";
	if ((name != NULL && mcp_ends_with(name, ".svg")) || mcp_looks_svg(s, len))
		return cli_utf8_valid(buf, len) ? "image/svg+xml" : NULL;
	return NULL;
}

char *
mcp_artifact_uri(const char *name)
{
	static const char prefix[] = "airlock://artifact/";
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(name), o;
	char *uri;

	uri = malloc(sizeof(prefix) + n * 3);
	if (uri == NULL)
		return NULL;
	memcpy(uri, prefix, sizeof(prefix) - 1);
	o = sizeof(prefix) - 1;
	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p) != NULL) {
			uri[o++] = (char)*p;
		} else {
			uri[o++] = '%';
			uri[o++] = hex[*p >> 4];
			uri[o++] = hex[*p & 15];
		}
	}
	uri[o] = '\0';
	return uri;
}

/* Whether buf is text: valid UTF-8 without NULs. */
static bool
mcp_is_text(const void *buf, size_t len)
{
	return memchr(buf, '\0', len) == NULL && cli_utf8_valid(buf, len);
}

/* The block that names a file without its contents: a resource link, or for
 * a client older than 2025-06-18 (which has none) a text note. */
static json_t *
mcp_block_link(const struct mcp_budget *b, const char *name, const char *uri, const char *mime,
	       uint64_t size, const char *why)
{
	char *text;
	json_t *block;

	if (b->links)
		return mcp_check(json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "type",
					   "resource_link", "uri", uri, "name", name, "mimeType",
					   mime, "size", (json_int_t)size, "description", why));
	if (asprintf(&text, "file %s (%s, %llu bytes) not included: %s", name, mime,
		     (unsigned long long)size, why) < 0)
		mcp_check(NULL);
	block = mcp_block_text(text);
	free(text);
	return block;
}

int
mcp_content_file(json_t *content, struct mcp_budget *b, const char *name, const void *buf,
		 size_t len, uint64_t size, bool truncated)
{
	const char *image = mcp_image_type(name, buf, len);
	bool text = image == NULL && mcp_is_text(buf, len);
	const char *mime = image != NULL ? image : text ? "text/plain" : "application/octet-stream";
	char *clean = NULL, *uri = NULL, *data = NULL;
	json_t *block = NULL;
	int r = -ENOMEM;

	/* A name is chosen by the code that ran: keep it valid UTF-8. */
	clean = mcp_text_clean(name, strlen(name), 4096 * 3, NULL);
	uri = mcp_artifact_uri(name);
	if (clean == NULL || uri == NULL)
		goto out;
	if (size < len)
		size = len;
	b->blocks--;
	if (image != NULL && truncated) {
		block = mcp_block_link(b, clean, uri, mime, size,
				       "the image is larger than the daemon returns");
	} else if (image != NULL && len <= MCP_IMAGE_MAX && !truncated && b->images > 0) {
		data = cli_base64(buf, len);
		if (data == NULL)
			goto out;
		block = mcp_check(json_pack("{s:s, s:s, s:s}", "type", "image", "data", data,
					    "mimeType", mime));
		b->images--;
	} else if (image != NULL && len <= MCP_IMAGE_MAX && !truncated) {
		block = mcp_block_link(b, clean, uri, mime, size,
				       "more images than one result carries");
	} else if (text && b->resource_bytes > 0) {
		/* Text is cut rather than left out: its head is what a model can use. */
		size_t max =
			b->resource_bytes < MCP_RESOURCE_MAX ? b->resource_bytes : MCP_RESOURCE_MAX;
		size_t used;
		char *part = mcp_text_clean(buf, len, max, &used), *all = NULL;

		if (part == NULL)
			goto out;
		if (used < size) {
			if (asprintf(&all, "%s\n[... file truncated: %llu bytes more ...]", part,
				     (unsigned long long)(size - used)) < 0)
				all = NULL;
			free(part);
			if (all == NULL)
				goto out;
			part = all;
		}
		b->resource_bytes -= used;
		block = mcp_check(json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
					    "resource", "uri", uri, "mimeType", mime, "text",
					    part));
		free(part);
	} else if (!text && image == NULL && !truncated && len <= MCP_RESOURCE_MAX &&
		   len <= b->resource_bytes) {
		data = cli_base64(buf, len);
		if (data == NULL)
			goto out;
		b->resource_bytes -= len;
		block = mcp_check(json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
					    "resource", "uri", uri, "mimeType", mime, "blob",
					    data));
	} else {
		block = mcp_block_link(b, clean, uri, mime, size,
				       "too large to include in the result");
	}
	if (json_array_append_new(content, block) < 0) {
		block = NULL;
		goto out;
	}
	r = 0;
out:
	free(data);
	free(uri);
	free(clean);
	return r;
}
