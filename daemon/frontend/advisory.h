/*
 * advisory.h: the blocked_imports pre-check of a profile (docs/design-profiles.md,
 * section 4). ADVISORY ONLY: it reads the code's text for import statements and
 * reports what it found in result.advisories; it refuses nothing and is bypassed
 * by any code that builds a module name at run time (docs/security.md,
 * "blocked_imports"). The boundary is file_write, subprocess and hidden_paths.
 */
#ifndef AIRLOCKD_ADVISORY_H
#define AIRLOCKD_ADVISORY_H

#include <stdbool.h>
#include <stddef.h>

#include "proto.h"

/* Bytes of the code read: past them the check stops and says so. */
#define ADVISORY_SCAN_MAX (1U << 20)
/* Bytes of an imported name kept for matching and the message. */
#define ADVISORY_IMPORT_MAX 128

/* What one scan found: at most PROTO_ADVISORIES_MAX lines of at most
 * PROTO_ADVISORY_MAX bytes, e.g. "blocked import: subprocess (line 3)". */
struct advisory_list {
	char text[PROTO_ADVISORIES_MAX][PROTO_ADVISORY_MAX + 1];
	size_t n;
};

/*
 * Read len bytes of Python source (any bytes: NULs, invalid UTF-8, no final
 * newline) for imports of the n module names in blocked (each valid by
 * rules_module_name_check) or of their submodules: `import a.b`,
 * `import x as y, a`, `from a.b import c` (a.b, and a.b.c when that is
 * blocked), `__import__("a")` and `import_module("a")` (importlib's) with a
 * plain string literal. Comments and string literals are skipped. Fills *ret
 * (n = 0: nothing found); when there were more findings than fit, the last
 * line counts the rest; when len > ADVISORY_SCAN_MAX, one line says where the
 * check stopped. A pure function: no allocation, linear in min(len,
 * ADVISORY_SCAN_MAX). Returns the number of findings (listed or not).
 */
size_t advisory_scan(const char *const *blocked, size_t n, const void *code, size_t len,
		     struct advisory_list *ret);

#endif
