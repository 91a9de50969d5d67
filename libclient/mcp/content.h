/* mcp/content.h: MCP content blocks built from what a run or a file read returned. */
#ifndef AIRLOCK_MCP_CONTENT_H
#define AIRLOCK_MCP_CONTENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Bounds of what one tool result may carry back into the model's context.
 * Text (output, embedded files, base64 of binary files) shares one budget per
 * result, `airlock mcp --output-budget` (MCP_BUDGET_DEFAULT): agent clients cap
 * a tool result (Claude Code at 25,000 tokens), and a result cut by the client
 * loses its end without saying so.
 */
#define MCP_BUDGET_DEFAULT 40000     /* bytes of text in one result */
#define MCP_BUDGET_MIN 1000	     /* the least --output-budget taken */
#define MCP_BUDGET_MAX (16u << 20)   /* the most --output-budget taken */
#define MCP_IMAGE_MAX (1024 * 1024)  /* bytes of one image block (before base64) */
#define MCP_IMAGES_MAX 4	     /* image blocks in one result */
#define MCP_RESOURCE_MAX (64 * 1024) /* bytes of one embedded resource */
#define MCP_ARTIFACT_BLOCKS_MAX 16   /* artifact blocks of any kind in one result */
#define MCP_READ_MAX (16u << 20)     /* bytes of one resources/read answer */

/* What is left of a result's allowance for files. */
struct mcp_budget {
	int images;	       /* image blocks left */
	size_t resource_bytes; /* text (and base64) bytes of embedded resources left */
	int blocks;	       /* file blocks left */
	bool links;	       /* whether the client understands resource_link (2025-06-18) */
	/* "airlock://session/ID/" when the files are in a live session, so that
	 * resources/read serves them (links allowed); NULL for a one-shot run,
	 * whose workspace is gone (no links). */
	const char *base;
};

/* A fresh budget of bytes, MCP_IMAGES_MAX images; base as above. */
void mcp_budget_init(struct mcp_budget *b, size_t bytes, bool links, const char *base);

/*
 * Up to max bytes of len bytes of raw output as UTF-8 text, a new string
 * (malloc): invalid sequences and NULs become U+FFFD, the text is cut at a
 * character boundary, and *ret_used says how many input bytes it covers.
 * Returns NULL only when out of memory.
 */
char *mcp_text_clean(const void *buf, size_t len, size_t max, size_t *ret_used);

/*
 * A file name as UTF-8 text, a new string (malloc): as it is when it is
 * UTF-8; else each byte of an invalid sequence as \xHH and each backslash
 * doubled, so that no two names read alike (the resource URI keeps the
 * exact bytes, percent-encoded). NULL only when out of memory.
 */
char *mcp_name_clean(const char *name);

/* A text block {"type":"text","text":...} of a NUL-terminated UTF-8 string. */
json_t *mcp_block_text(const char *text);

/*
 * At most max bytes of the output buf (len bytes kept by the sandbox, total
 * bytes written by the code) as UTF-8 text, a new string: all of it, or its
 * head and its tail around "\n[... N bytes cut ...]\n" (the end of a
 * traceback is what a model needs), or, when the sandbox did not keep the
 * end, the head and "\n[... output truncated: N bytes more ...]".
 * *ret_cut (may be NULL) says whether anything was left out.
 */
char *mcp_text_cut(const void *buf, size_t len, uint64_t total, size_t max, bool *ret_cut);

/* A text block "label:\n" and mcp_text_cut() of the output. */
json_t *mcp_block_output(const char *label, const void *buf, size_t len, uint64_t total,
			 size_t max);

/* Whether a model API takes this image type as image content: PNG, JPEG,
 * GIF and WebP. SVG is text for them (an embedded resource). */
bool mcp_image_for_model(const char *mime);

/* The image MIME type of a file by its magic bytes (PNG, JPEG, GIF, WebP)
 * or, for SVG, by its name or its first bytes; NULL when it is no image. */
const char *mcp_image_type(const char *name, const void *buf, size_t len);

/* The URI of a file: base (NULL: "airlock://artifact/") and the name,
 * percent-encoded except for unreserved characters and '/'. A new string,
 * NULL if no memory. */
char *mcp_artifact_uri(const char *base, const char *name);

/* Decode the percent-encoding of s (len bytes) into a new NUL-terminated
 * string; NULL for a bad escape or an encoded NUL (errno EINVAL) or no
 * memory. */
char *mcp_uri_decode(const char *s, size_t len);

/*
 * Append to content the block for one file (an artifact, or a file read):
 * an image block for an image a model takes that fits, an embedded text or
 * blob resource within the budget, else a resource link when the file can be
 * read later (b->base and a client that knows links), or a text note saying
 * why it is not there. buf holds len bytes of a file of size bytes;
 * truncated says the daemon cut it. Returns 0, or -ENOMEM.
 */
int mcp_content_file(json_t *content, struct mcp_budget *b, const char *name, const void *buf,
		     size_t len, uint64_t size, bool truncated);

#endif
