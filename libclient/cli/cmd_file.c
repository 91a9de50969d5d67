/* cli/cmd_file.c: put, get, files, rm in a session's workspace. */
#include "airlock.h"
#include "cli.h"
#include "net.h"
#include "tool.h"
#include "util.h"
#include "compiler.h"
#include "fdio.h"
#include "limit.h"
#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Print a file command's --json answer: o with the remote path as "name"
 * (or, not UTF-8, "name" escaped and "name_base64", as files lists it). */
static int
cli_json_file(json_t *o, const char *remote)
{
	if (o != NULL && cli_json_name(o, remote) < 0) {
		json_decref(o);
		o = NULL;
	}
	return cli_json_print(o);
}

/* `airlock put SESSION LOCAL REMOTE`: LOCAL (- = stdin) into the session.
 * It connects itself (conn NULL) once LOCAL is read: no connection waits
 * on a slow stdin. */
int
cli_put(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	char *buf = NULL;
	size_t len;
	int r, status;

	r = cli_read_file(args[1], &buf, &len);
	if (r < 0) {
		cli_errorf("put: read %s: %s\n", strcmp(args[1], "-") == 0 ? "stdin" : args[1],
			   strerror(-r));
		return CLI_EXIT_NOINPUT;
	}
	status = cli_connect(cli, &conn);
	if (status != 0)
		goto out;
	r = airlock_file_write(conn, args[0], args[2], buf, len);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		cli_errorf("put: %s: bad remote path (empty or too long)\n", args[2]);
		status = CLI_EXIT_USAGE;
	} else if (r < 0)
		status = cli_session_error(conn, "put", r);
	else if (cli->json)
		status = cli_json_file(
			json_pack("{s:s, s:I}", "session", args[0], "bytes", (json_int_t)len),
			args[2]);
out:
	airlock_conn_free(conn);
	free(buf);
	return status;
}

/*
 * Write len bytes to path atomically: a new file next to it (O_CREAT | O_EXCL
 * | O_NOFOLLOW, mode 0666 less the umask), filled and synced, then renamed
 * over path. A reader never sees a partial file, and a symbolic link at path
 * is replaced, not followed. Returns 0 or -errno.
 */
int
cli_write_atomic(const char *path, const void *data, size_t len)
{
	char *dcopy = NULL, *bcopy = NULL, tmp[300];
	const char *dir, *base;
	int dfd = -1, fd = -1, r, i;
	uint64_t rnd;

	dcopy = strdup(path);
	bcopy = strdup(path);
	r = -ENOMEM;
	if (dcopy == NULL || bcopy == NULL)
		goto out;
	dir = dirname(dcopy);
	base = basename(bcopy);
	r = -EISDIR;
	if (base[0] == '\0' || strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0 || path[strlen(path) - 1] == '/')
		goto out;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		goto out;
	}
	for (i = 0; fd < 0; i++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint64_t)getpid() * 1000003u + (uint64_t)i;
		snprintf(tmp, sizeof(tmp), ".%.200s.%016" PRIx64 ".tmp", base, rnd);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && (errno != EEXIST || i >= 16)) {
			r = -errno;
			goto out;
		}
	}
	r = fd_write_all(fd, data, len);
	if (r < 0)
		goto fail;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		goto fail;
	}
	r = 0;
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	fd = -1;
	unlinkat(dfd, tmp, 0);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(dcopy);
	free(bcopy);
	return r;
}

int
cli_write_out(const char *what, const char *dest, const void *data, size_t len)
{
	int r;

	if (strcmp(dest, "-") == 0) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) == EOF)
			return cli_err(CLI_EXIT_SOFTWARE, "internal", "%s: write stdout: %s", what,
				       strerror(EIO)); /* cli_fail's words */
		return CLI_EXIT_OK;
	}
	if ((r = cli_write_atomic(dest, data, len)) < 0)
		return cli_err(CLI_EXIT_CANTCREAT, "cantcreat", "%s: write %s: %s", what, dest,
			       strerror(-r));
	return CLI_EXIT_OK;
}

/* `airlock get SESSION REMOTE LOCAL`: a file of the session into LOCAL (- = stdout). */
int
cli_get(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	struct airlock_file *file = NULL;
	const void *data;
	size_t len;
	int r, status = CLI_EXIT_OK;

	r = airlock_file_read(conn, args[0], args[1], &file);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		cli_errorf("get: %s: bad remote path (empty or too long)\n", args[1]);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	if (r < 0) {
		status = cli_session_error(conn, "get", r);
		goto out;
	}
	airlock_file_data(file, &data, &len);
	if ((status = cli_write_out("get", args[2], data, len)) != CLI_EXIT_OK)
		goto out;
	if (airlock_file_truncated(file))
		fprintf(stderr, "airlock: get: %s: truncated to %zu of %" PRIu64 " bytes\n",
			args[1], len, airlock_file_size(file));
	/* To stdout (-), the file's bytes are the answer, --json or not. */
	if (cli->json && strcmp(args[2], "-") != 0)
		status = cli_json_file(json_pack("{s:s, s:I, s:I, s:b}", "session", args[0],
						 "bytes", (json_int_t)len, "size",
						 (json_int_t)airlock_file_size(file), "truncated",
						 airlock_file_truncated(file)),
				       args[1]);
out:
	airlock_file_free(file);
	return status;
}

/* Print a name from the sandbox for a terminal: control bytes and backslash as \xHH. */
static void
cli_print_name(const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			printf("\\x%02x", *p);
		else
			putchar(*p);
}

/* Entry i of `airlock files --json` (a list of {name (or name_base64), kind,
 * size, mtime_ms}). */
static json_t *
cli_file_row(const void *files, size_t i)
{
	const struct airlock_file_list *list = files;
	json_t *o = json_pack("{s:s, s:I, s:I}", "kind",
			      airlock_file_kind_name(airlock_file_list_kind(list, i)), "size",
			      (json_int_t)airlock_file_list_size(list, i), "mtime_ms",
			      (json_int_t)airlock_file_list_mtime_ms(list, i));

	if (o != NULL && cli_json_name(o, airlock_file_list_name(list, i)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* `airlock files SESSION [DIR]`: one line per entry, KIND SIZE MTIME NAME. */
int
cli_files(const struct cli *cli, struct airlock_conn *conn, int nargs, char **args)
{
	struct airlock_file_list *list = NULL;
	const char *dir = nargs > 1 ? args[1] : NULL;
	char mtime[32], cut[64];
	struct tm tm;
	time_t t;
	size_t i;
	int r, status = CLI_EXIT_OK;

	r = airlock_file_list(conn, args[0], dir, &list);
	if (r == -ENAMETOOLONG) {
		cli_errorf("files: %s: path too long\n", dir);
		status = CLI_EXIT_USAGE;
		goto out;
	}
	snprintf(cut, sizeof(cut), "listing truncated at %zu entries",
		 airlock_file_list_count(list));
	status = cli_list_head(cli, conn, "files", r, cli_session_error, list,
			       airlock_file_list_count(list), cli_file_row,
			       airlock_file_list_truncated(list) ? cut : NULL);
	if (status >= 0)
		goto out;
	status = CLI_EXIT_OK;
	printf("%-5s %12s %-20s %s\n", "KIND", "SIZE", "MTIME", "NAME");
	for (i = 0; i < airlock_file_list_count(list); i++) {
		t = (time_t)(airlock_file_list_mtime_ms(list, i) / 1000);
		if (gmtime_r(&t, &tm) == NULL ||
		    strftime(mtime, sizeof(mtime), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
			snprintf(mtime, sizeof(mtime), "-");
		printf("%-5s %12" PRIu64 " %-20s ",
		       airlock_file_kind_name(airlock_file_list_kind(list, i)),
		       airlock_file_list_size(list, i), mtime);
		cli_print_name(airlock_file_list_name(list, i));
		putchar('\n');
	}
	status = cli_flushed(status);
out:
	airlock_file_list_free(list);
	return status;
}

/* `airlock rm SESSION REMOTE`: delete a file, link or empty directory. */
int
cli_rm(const struct cli *cli, struct airlock_conn *conn, int nargs UNUSED, char **args)
{
	int r;

	r = airlock_file_delete(conn, args[0], args[1]);
	if (r == -EINVAL || r == -ENAMETOOLONG) {
		cli_errorf("rm: %s: bad remote path (empty or too long)\n", args[1]);
		return CLI_EXIT_USAGE;
	}
	if (r < 0)
		return cli_session_error(conn, "rm", r);
	if (cli->json)
		return cli_json_file(json_pack("{s:s, s:b}", "session", args[0], "deleted", 1),
				     args[1]);
	return CLI_EXIT_OK;
}
