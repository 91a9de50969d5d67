/* mcp/content.c: MCP content blocks built from what a run or a file read returned.
 *
 * Everything here comes from code the caller chose not to trust: output,
 * file names and file contents. It goes back into a model's context, so
 * every block is bounded (see mcp_content.h) and says when it was cut. */
#include "content.h"
#include "../cli/util.h"

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
mcp_budget_init(struct mcp_budget *b, size_t bytes, bool links, const char *base)
{
	b->images = MCP_IMAGES_MAX;
	b->resource_bytes = bytes;
	b->blocks = MCP_ARTIFACT_BLOCKS_MAX;
	b->links = links;
	b->base = base;
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

char *
mcp_name_clean(const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t len = strlen(name), i = 0, o = 0, n;
	bool valid = true;
	char *out;

	for (i = 0; i < len && valid; i += n)
		if ((n = mcp_utf8_seq(s + i, len - i)) == 0)
			valid = false;
	if (valid)
		return strdup(name);
	out = malloc(len * 4 + 1);
	if (out == NULL)
		return NULL;
	for (i = 0; i < len; i += n) {
		n = mcp_utf8_seq(s + i, len - i);
		if (n == 0 || s[i] == '\\') {
			if (s[i] == '\\') {
				memcpy(out + o, "\\\\", 2);
				o += 2;
			} else
				o += (size_t)snprintf(out + o, 5, "\\x%02x", s[i]);
			n = 1;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
	}
	out[o] = '\0';
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

char *
mcp_text_cut(const void *buf, size_t len, uint64_t total, size_t max, bool *ret_cut)
{
	const unsigned char *s = buf;
	char *head = NULL, *tail = NULL, *all = NULL;
	size_t used, start, tail_used;

	if (total < len)
		total = len;
	if (ret_cut != NULL)
		*ret_cut = false;
	head = mcp_text_clean(buf, len, max, &used);
	if (head == NULL || used == total)
		return head;
	if (ret_cut != NULL)
		*ret_cut = true;
	if (total > len || max < 200) {
		/* The sandbox did not keep the end: only the head is there. */
		if (asprintf(&all, "%s\n[... output truncated: %llu bytes more ...]", head,
			     (unsigned long long)(total - used)) < 0)
			all = NULL;
		free(head);
		return all;
	}
	/* Two fifths for the head, the rest for the tail, which starts on a
	 * character boundary. */
	free(head);
	head = mcp_text_clean(buf, len, max * 2 / 5, &used);
	start = len - (max - max * 2 / 5);
	if (start < used)
		start = used;
	for (int k = 0; k < 3 && start < len && (s[start] & 0xc0) == 0x80; k++)
		start++;
	tail = mcp_text_clean(s + start, len - start, max - max * 2 / 5, &tail_used);
	if (head != NULL && tail != NULL &&
	    asprintf(&all, "%s\n[... %llu bytes cut ...]\n%s", head,
		     (unsigned long long)(total - used - tail_used), tail) < 0)
		all = NULL;
	free(head);
	free(tail);
	return all;
}

json_t *
mcp_block_output(const char *label, const void *buf, size_t len, uint64_t total, size_t max)
{
	char *text, *all;
	json_t *block;

	text = mcp_text_cut(buf, len, total, max, NULL);
	if (text == NULL)
		mcp_check(NULL);
	if (asprintf(&all, "%s:\n%s", label, text) < 0)
		all = NULL;
	free(text);
	if (all == NULL)
		mcp_check(NULL);
	block = mcp_block_text(all);
	free(all);
	return block;
}

bool
mcp_image_for_model(const char *mime)
{
	return mime != NULL && (strcmp(mime, "image/png") == 0 || strcmp(mime, "image/jpeg") == 0 ||
				strcmp(mime, "image/gif") == 0 || strcmp(mime, "image/webp") == 0);
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
mcp_artifact_uri(const char *base, const char *name)
{
	const char *prefix = base != NULL ? base : "airlock://artifact/";
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(name), o;
	char *uri;

	uri = malloc(strlen(prefix) + 1 + n * 3);
	if (uri == NULL)
		return NULL;
	memcpy(uri, prefix, strlen(prefix));
	o = strlen(prefix);
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

/* The value of a hex digit, or -1. */
static int
mcp_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *
mcp_uri_decode(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t i, o = 0;

	if (out == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (i + 2 >= len + 0 || mcp_hex(s[i + 1]) < 0 || mcp_hex(s[i + 2]) < 0 ||
		    (s[i + 1] == '0' && s[i + 2] == '0')) {
			free(out);
			errno = EINVAL;
			return NULL;
		}
		out[o++] = (char)(mcp_hex(s[i + 1]) * 16 + mcp_hex(s[i + 2]));
		i += 2;
	}
	out[o] = '\0';
	return out;
}

/* Whether buf is text: valid UTF-8 without NULs. */
static bool
mcp_is_text(const void *buf, size_t len)
{
	return memchr(buf, '\0', len) == NULL && cli_utf8_valid(buf, len);
}

/* The block that names a file without its contents: a resource link when
 * resources/read can serve it and the client knows links (2025-06-18), else
 * a text note that says why it is not there and how to get it. */
static json_t *
mcp_block_link(const struct mcp_budget *b, const char *name, const char *uri, const char *mime,
	       uint64_t size, const char *why)
{
	char *text;
	json_t *block;

	if (b->links && b->base != NULL)
		return mcp_check(json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "type",
					   "resource_link", "uri", uri, "name", name, "mimeType",
					   mime, "size", (json_int_t)size, "description", why));
	if (asprintf(&text, "file %s (%s, %llu bytes) not included: %s%s", name, mime,
		     (unsigned long long)size, why,
		     b->base != NULL
			     ? "; it is in the session: read_file reads it"
			     : "; the workspace of a one-shot run is gone: run the code in a "
			       "session (session_open) to keep its files and read them with "
			       "read_file") < 0)
		mcp_check(NULL);
	block = mcp_block_text(text);
	free(text);
	return block;
}

int
mcp_content_file(json_t *content, struct mcp_budget *b, const char *name, const void *buf,
		 size_t len, uint64_t size, bool truncated)
{
	const char *type = mcp_image_type(name, buf, len);
	/* SVG and the like are text to a model: an embedded resource. */
	const char *image = mcp_image_for_model(type) ? type : NULL;
	bool text = image == NULL && mcp_is_text(buf, len);
	const char *mime = type != NULL ? type : text ? "text/plain" : "application/octet-stream";
	char *clean = NULL, *uri = NULL, *data = NULL;
	json_t *block = NULL;
	int r = -ENOMEM;

	/* A name is chosen by the code that ran: keep it valid UTF-8. */
	clean = mcp_name_clean(name);
	uri = mcp_artifact_uri(b->base, name);
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
	} else if (text && (b->resource_bytes >= 512 || b->resource_bytes >= len)) {
		/* Text is cut rather than left out: its head is what a model can use. */
		size_t max =
			b->resource_bytes < MCP_RESOURCE_MAX ? b->resource_bytes : MCP_RESOURCE_MAX;
		size_t used;
		char *part = mcp_text_clean(buf, len, max, &used), *all = NULL;

		if (part == NULL)
			goto out;
		b->resource_bytes -= strlen(part); /* at most max */
		if (used < size) {
			if (asprintf(&all, "%s\n[... file truncated: %llu bytes more ...]", part,
				     (unsigned long long)(size - used)) < 0)
				all = NULL;
			free(part);
			if (all == NULL)
				goto out;
			part = all;
		}
		block = mcp_check(json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
					    "resource", "uri", uri, "mimeType", mime, "text",
					    part));
		free(part);
	} else if (!text && image == NULL && !truncated && len <= MCP_RESOURCE_MAX &&
		   (len + 2) / 3 * 4 <= b->resource_bytes) {
		data = cli_base64(buf, len);
		if (data == NULL)
			goto out;
		b->resource_bytes -= (len + 2) / 3 * 4;
		block = mcp_check(json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
					    "resource", "uri", uri, "mimeType", mime, "blob",
					    data));
	} else {
		block = mcp_block_link(b, clean, uri, mime, size,
				       "it does not fit in what is left of this result's output "
				       "budget");
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
