/* mcp_content.h: MCP content blocks built from what a run or a file read returned. */
#ifndef AIRLOCK_MCP_CONTENT_H
#define AIRLOCK_MCP_CONTENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds of what one tool result may carry back into the model's context. */
#define MCP_OUTPUT_MAX 20000		 /* bytes of stdout, and of stderr, in a result */
#define MCP_FILE_TEXT_MAX 100000	 /* bytes of text of one read_file result */
#define MCP_IMAGE_MAX (1024 * 1024)	 /* bytes of one image block (before base64) */
#define MCP_IMAGES_MAX 4		 /* image blocks in one result */
#define MCP_RESOURCE_MAX (64 * 1024)	 /* bytes of one embedded resource */
#define MCP_RESOURCES_TOTAL (256 * 1024) /* bytes of all embedded resources of a result */
#define MCP_ARTIFACT_BLOCKS_MAX 16	 /* artifact blocks of any kind in one result */

/* What is left of a result's allowance for artifacts. */
struct mcp_budget {
	int images;	       /* image blocks left */
	size_t resource_bytes; /* embedded resource bytes left */
	int blocks;	       /* artifact blocks left */
	bool links;	       /* whether the client understands resource_link (2025-06-18) */
};

/* A fresh budget: MCP_IMAGES_MAX images, MCP_RESOURCES_TOTAL bytes. */
void mcp_budget_init(struct mcp_budget *b, bool links);

/*
 * Up to max bytes of len bytes of raw output as UTF-8 text, a new string
 * (malloc): invalid sequences and NULs become U+FFFD, the text is cut at a
 * character boundary, and *ret_used says how many input bytes it covers.
 * Returns NULL only when out of memory.
 */
char *mcp_text_clean(const void *buf, size_t len, size_t max, size_t *ret_used);

/* A text block {"type":"text","text":...} of a NUL-terminated UTF-8 string. */
json_t *mcp_block_text(const char *text);

/*
 * A text block "label:\n" followed by at most max bytes of the output buf
 * (len bytes kept, total bytes written by the code), then, when not all of
 * it is there, "\n[... output truncated: N bytes more ...]".
 */
json_t *mcp_block_output(const char *label, const void *buf, size_t len, uint64_t total,
			 size_t max);

/* The image MIME type of a file by its magic bytes (PNG, JPEG, GIF, WebP)
 * or, for SVG, by its name or its first bytes; NULL when it is no image. */
const char *mcp_image_type(const char *name, const void *buf, size_t len);

/* The URI of an artifact: "airlock://artifact/" and the name, percent-encoded
 * except for unreserved characters and '/'. A new string, NULL if no memory. */
char *mcp_artifact_uri(const char *name);

/*
 * Append to content the block for one file (an artifact, or a file read):
 * an image block for an image that fits, an embedded text or blob resource
 * within the budget, else a resource link (or, for an older client, a text
 * note) naming it. buf holds len bytes of a file of size bytes; truncated
 * says the daemon cut it. Returns 0, or -ENOMEM.
 */
int mcp_content_file(json_t *content, struct mcp_budget *b, const char *name, const void *buf,
		     size_t len, uint64_t size, bool truncated);

#endif
