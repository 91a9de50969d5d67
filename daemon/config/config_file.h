/*
 * config_file.h: airlockd.conf as a file, parsing nothing: its checks and a
 * sealed copy. The spawner links this alone, not the parser (config_parse.c and the rest), so
 * the privileged processes link no parser (tests/layout).
 */
#ifndef AIRLOCKD_CONFIG_FILE_H
#define AIRLOCKD_CONFIG_FILE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CONFIG_FILE_MAX (1U << 20) /* bytes of the file a reload reads */

/* Write "path:line: reason" (or "path: reason" for line 0) into the error buffer. */
void config_verr(char *err, size_t errlen, const char *path, unsigned line, const char *fmt,
		 va_list ap) __attribute__((format(printf, 5, 0)));

/*
 * Open path and refuse it when anyone but root could have written it (not a
 * regular file, a link, not owned by root, writable by group or others).
 * *ret is left alone when the file is missing and must_exist is false.
 * Errors are written as "path: reason" into err. Returns 0 or -errno.
 */
int config_file_open(const char *path, bool must_exist, FILE **ret, char *err, size_t errlen);

/*
 * The spawner's part of a reload (docs/design-service.md): open path with the
 * checks of config_load() (a regular file, not a link, owned by root, not
 * writable by group or others) and copy it, at most CONFIG_FILE_MAX bytes,
 * into a sealed memfd, parsing nothing. *ret_fd is -1 when there is no file
 * and must_exist is false. Errors as in config_load(). Returns 0 or -errno.
 */
int config_read_sealed(const char *path, bool must_exist, int *ret_fd, char *err, size_t errlen);

#endif
