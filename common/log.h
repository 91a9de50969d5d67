/* log.h: the one logging API of airlockd (libclient never logs). */
#ifndef AIRLOCK_LOG_H
#define AIRLOCK_LOG_H

#include <stdbool.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

/* Set the process name shown in every line and the most verbose level shown. */
void log_init(const char *ident, enum log_level max, bool journal_prefix);
void log_set_ident(const char *ident);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log and exit(1). fatal() appends strerror(errno), fatalx() does not. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
