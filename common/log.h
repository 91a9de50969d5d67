/* log.h: the one logging API of airlockd (libclient never logs). */
#ifndef AIRLOCK_LOG_H
#define AIRLOCK_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

/* Set the process name shown in every line and the most verbose level shown. */
void log_init(const char *ident, enum log_level max, bool journal_prefix);
void log_set_ident(const char *ident);

/*
 * Copy src into dst (dstlen > 0, always NUL-terminated) with every control
 * character (below 0x20, and 0x7f) and every byte of also (may be NULL)
 * written as \xHH. A truncated copy never ends inside an escape. Returns the
 * length written. Every log line goes through this (controls only), so no
 * string can start a line of its own; callers that quote a value pass the
 * quote and the backslash in also.
 */
size_t log_escape(char *dst, size_t dstlen, const char *src, const char *also);

/*
 * Format the reason of a refusal into why (when why != NULL and whylen > 0)
 * and return err, so that a check reads `return log_why(-EINVAL, why,
 * whylen, "...")`. Writes nothing to the log: the caller decides.
 */
int log_why(int err, char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log and exit(1). fatal() appends strerror(errno), fatalx() does not. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
