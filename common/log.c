/* log.c: leveled logging to stderr, with sd-daemon "<N>" prefixes under systemd. */
#include "log.h"

#include "clock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Log settings are the only mutable globals the conventions allow. */
static const char *log_ident = "airlock";
static enum log_level log_max = LOG_LVL_INFO;
static bool log_journal;

void
log_init(const char *ident, enum log_level max, bool journal_prefix)
{
	log_ident = ident;
	log_max = max;
	log_journal = journal_prefix;
}

void
log_set_ident(const char *ident)
{
	log_ident = ident;
}

size_t
log_escape(char *dst, size_t dstlen, const char *src, const char *also)
{
	static const char hex[] = "0123456789abcdef";
	size_t off = 0;

	for (; *src != '\0'; src++) {
		unsigned char c = (unsigned char)*src;

		if (c < 0x20 || c == 0x7f || (also != NULL && strchr(also, c) != NULL)) {
			if (off + 4 >= dstlen)
				break;
			dst[off++] = '\\';
			dst[off++] = 'x';
			dst[off++] = hex[c >> 4];
			dst[off++] = hex[c & 0xf];
		} else {
			if (off + 1 >= dstlen)
				break;
			dst[off++] = (char)c;
		}
	}
	dst[off] = '\0';
	return off;
}

/*
 * Format, escape and write one line with a single write, so that lines of
 * the spawner and the frontend (which share stderr) do not interleave.
 * Messages carry strings a client chose (file names, runtime names, peer
 * names): a newline in one must not start a forged line of its own (with its
 * own "<N>" priority under journald), and a terminal escape must not reach
 * an administrator's terminal. So every control character is escaped.
 */
__attribute__((format(printf, 2, 0))) static void
log_vemit(enum log_level lvl, const char *fmt, va_list ap, int err)
{
	char msg[2048], line[4 * sizeof(msg) + 256];
	size_t off = 0;
	int n;

	if (lvl > log_max)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	/* sd-daemon(3) priority prefixes, so journald keeps the level. */
	if (log_journal)
		off += (size_t)snprintf(line, sizeof(line), "<%d>", (int)lvl);
	off += log_escape(line + off, sizeof(line) - off, log_ident, NULL);
	off += log_escape(line + off, sizeof(line) - off, ": ", NULL);
	off += log_escape(line + off, sizeof(line) - off, msg, NULL);
	if (err != 0) {
		off += log_escape(line + off, sizeof(line) - off, ": ", NULL);
		off += log_escape(line + off, sizeof(line) - off, strerror(err), NULL);
	}
	line[off++] = '\n'; /* room: log_escape leaves at least one byte */
	fwrite(line, 1, off, stderr);
}

#define LOG_BODY(lvl, err)                                                                         \
	do {                                                                                       \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		log_vemit(lvl, fmt, ap, err);                                                      \
		va_end(ap);                                                                        \
	} while (0)

/*
 * The printf-like entry points below fatal: each a level, and whether it
 * adds strerror(errno) (errno as the caller left it, read first).
 */
#define LOG_FN(name, lvl, with_errno)                                                              \
	void name(const char *fmt, ...)                                                            \
	{                                                                                          \
		int err = (with_errno) ? errno : 0;                                                \
		LOG_BODY(lvl, err);                                                                \
	}

LOG_FN(log_debug, LOG_LVL_DEBUG, false)
LOG_FN(log_info, LOG_LVL_INFO, false)
LOG_FN(log_warn, LOG_LVL_WARN, true)
LOG_FN(log_warnx, LOG_LVL_WARN, false)

void
fatal(const char *fmt, ...)
{
	int err = errno;
	LOG_BODY(LOG_LVL_ERR, err);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_ERR, 0);
	exit(1);
}

void
log_repeat_at(struct log_repeat *lr, uint64_t now_ms, const char *msg)
{
	bool same = lr->any && strncmp(lr->last, msg, sizeof(lr->last) - 1) == 0;

	if (same && now_ms - lr->last_ms < lr->interval_ms) {
		if (lr->held < UINT32_MAX)
			lr->held++;
		return;
	}
	if (same && lr->held > 0) {
		log_warnx("%s (repeated %" PRIu32 " times)", msg, lr->held);
	} else {
		if (lr->held > 0)
			log_warnx("%s (repeated %" PRIu32 " times)", lr->last, lr->held);
		log_warnx("%s", msg);
		snprintf(lr->last, sizeof(lr->last), "%s", msg);
		lr->any = true;
	}
	lr->held = 0;
	lr->last_ms = now_ms;
}

void
log_repeat_warnx(struct log_repeat *lr, const char *fmt, ...)
{
	char msg[sizeof(lr->last)];
	va_list ap;

	if (LOG_LVL_WARN > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_repeat_at(lr, clock_now_ms(), msg);
}
