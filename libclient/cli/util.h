/* cli/util.h: the airlock command's helpers that need no daemon (unit-tested alone). */
#ifndef AIRLOCK_CLI_UTIL_H
#define AIRLOCK_CLI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parse a size: decimal digits with an optional K, M, G or T suffix (powers
 * of 1024, either case, optionally followed by "B" or "iB"). 0 is refused
 * because it means "the daemon's default" on the wire. Returns 0, -EINVAL
 * for a malformed string, -ERANGE for 0 or an overflow.
 */
int cli_parse_size(const char *s, uint64_t *ret);

/*
 * Parse seconds, possibly fractional ("2", "0.5", "1.25"), into milliseconds,
 * rounding a sub-millisecond rest up. Returns 0, -EINVAL for a malformed
 * string (negative, exponent, junk), -ERANGE for 0 or an overflow.
 */
int cli_parse_seconds(const char *s, uint64_t *ret_ms);

/* Parse a positive decimal count. Returns 0, -EINVAL or -ERANGE (0, overflow). */
int cli_parse_count(const char *s, uint64_t *ret);

/*
 * Write len bytes of data as a new file name below the directory dirfd,
 * creating missing parent directories (0755). The name is checked with
 * rules_workspace_name_check() (the rule the daemon names
 * artifacts by: it stays inside its directory by construction), then every component is resolved
 * with openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, and the file is created with O_CREAT | O_EXCL
 * | O_NOFOLLOW (mode 0644): a symlink anywhere on the way
 * (-ELOOP), an existing file (-EEXIST) or a non-directory parent (-ENOTDIR)
 * is refused, never followed or overwritten. With replace (`--force`), the
 * file is created under a temporary name next to it and renamed over an
 * existing file (a link there is replaced, not followed; a directory there
 * is -EISDIR). Returns 0 or -errno.
 */
int cli_artifact_write(int dirfd, const char *name, const void *data, size_t len, bool replace);

/*
 * Format a duration in milliseconds for `airlock ps` into buf (len bytes):
 * "0.0s" to "59.9s" below a minute (tenths, rounded down), then "1m05s" up
 * to an hour, then "2h03m". Returns buf.
 */
char *cli_format_elapsed(uint64_t ms, char *buf, size_t len);

/* Whether len bytes at buf are valid UTF-8 (no overlongs, no surrogates). */
bool cli_utf8_valid(const void *buf, size_t len);

/* Encode len bytes as standard base64 with padding into a new string (malloc);
 * returns NULL only when out of memory. */
char *cli_base64(const void *buf, size_t len);

#endif
