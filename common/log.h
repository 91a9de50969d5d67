/* log.h: the one logging API of airlockd (libclient never logs). */
#ifndef AIRLOCK_LOG_H
#define AIRLOCK_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * Format the reason of a refusal into why (when why != NULL and whylen > 0).
 * Writes nothing to the log: the caller decides.
 */
void log_whyf(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * log_whyf() and then err, so that a check reads `return log_why(-EINVAL,
 * why, whylen, "...")`. A macro, not a function, so that the value is seen
 * to be err where it is returned (clang's analyzer inlines no variadic
 * function: docs/static-analysis.md). err is evaluated once, first.
 */
#define log_why(err, why, whylen, ...)                                                             \
	__extension__({                                                                            \
		int log_why_err_ = (err);                                                          \
		log_whyf((why), (whylen), __VA_ARGS__);                                            \
		log_why_err_;                                                                      \
	})

/*
 * A warning that may repeat in a loop (a pool refill that keeps failing, a
 * mount whose source stays missing): an identical message within
 * interval_ms of the last one written is counted, not written, so a fault
 * that repeats thousands of times a second cannot fill the disk or the
 * journal (issue 28: 260,000 lines in 5 s). The next one written after the
 * interval says "(repeated N times)", N the identical lines held back since;
 * a different message first writes the held-back count of the last one.
 * Zero-initialise with interval_ms set (LOG_REPEAT_INIT).
 */
struct log_repeat {
	char last[512];	      /* the last message written */
	uint64_t last_ms;     /* when, CLOCK_MONOTONIC ms */
	uint64_t interval_ms; /* identical messages within this are held back */
	uint32_t held;	      /* identical messages held back since */
	bool any;	      /* last is set */
};
#define LOG_REPEAT_INIT(ms)                                                                        \
	{                                                                                          \
		.interval_ms = (ms)                                                                \
	}

/* log_warnx() through lr: an identical message within its interval is
 * counted, not written. */
void log_repeat_warnx(struct log_repeat *lr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same at now_ms (CLOCK_MONOTONIC milliseconds), msg formatted: what
 * log_repeat_warnx() does after reading the clock, for a test to drive. */
void log_repeat_at(struct log_repeat *lr, uint64_t now_ms, const char *msg);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log and exit(1). fatal() appends strerror(errno), fatalx() does not. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
