/*
 * jsonscan.h: a strict JSON (RFC 8259) scanner that builds nothing.
 *
 * The tool bridge (docs/design-tool-bridge.md) reads JSON lines written by
 * the sandboxed code and JSON answers written by a client. The daemon never
 * converts or interprets them: it checks that they are well-formed and
 * copies the bytes. This scanner is that check: no allocation, no number
 * conversion (but the call's id), bounded recursion (JSONSCAN_DEPTH_MAX),
 * UTF-8 checked (no overlong form, no surrogate, nothing past U+10FFFF),
 * \u escapes checked (a high surrogate needs its low one).
 */
#ifndef AIRLOCK_JSONSCAN_H
#define AIRLOCK_JSONSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONSCAN_DEPTH_MAX 32
#define JSONSCAN_ID_MAX ((1ULL << 53) - 1) /* an id JavaScript reads exactly */

/* Whether s (len bytes) is exactly one JSON value, with optional whitespace
 * around it. Returns 0 or -EBADMSG. */
int jsonscan_value(const char *s, size_t len);

/* The same, and the value is an object. */
int jsonscan_object(const char *s, size_t len);

/* One call from the code: {"id": N, "tool": "NAME", "args": {...}}. */
struct jsonscan_call {
	uint64_t id;
	bool has_id;	  /* id was read (also on failure, when it came first) */
	const char *tool; /* the name's bytes between the quotes (no escape in it) */
	size_t tool_len;
	const char *args; /* the args object's bytes */
	size_t args_len;
};

/*
 * Scan a call line (without its newline): an object with exactly the keys
 * id (an integer 0..JSONSCAN_ID_MAX), tool (a string without escapes) and
 * args (an object), each once, in any order. Returns 0 or -EBADMSG; on
 * failure ret->has_id says whether the id could still be read.
 */
int jsonscan_call(const char *s, size_t len, struct jsonscan_call *ret);

#endif
