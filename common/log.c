/* log.c: leveled logging to stderr, with sd-daemon "<N>" prefixes under systemd. */
#include "log.h"

#include <errno.h>
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

__attribute__((format(printf, 2, 0))) static void
log_vemit(enum log_level lvl, const char *fmt, va_list ap, int err)
{
	char msg[2048];
	int n;

	if (lvl > log_max)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	/* sd-daemon(3) priority prefixes, so journald keeps the level. */
	if (log_journal)
		fprintf(stderr, "<%d>", (int)lvl);
	if (err != 0)
		fprintf(stderr, "%s: %s: %s\n", log_ident, msg, strerror(err));
	else
		fprintf(stderr, "%s: %s\n", log_ident, msg);
}

#define LOG_BODY(lvl, err)                                                                         \
	do {                                                                                       \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		log_vemit(lvl, fmt, ap, err);                                                      \
		va_end(ap);                                                                        \
	} while (0)

void
log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_DEBUG, 0);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_INFO, 0);
}

void
log_warn(const char *fmt, ...)
{
	int err = errno;
	LOG_BODY(LOG_LVL_WARN, err);
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_WARN, 0);
}

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
