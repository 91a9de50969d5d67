/*
 * cli/tool.c: `airlock run --tool NAME=COMMAND` (tool.h). COMMAND is
 * split at blanks (no shell) and run on the host as the caller for each call
 * of NAME, with the call's arguments (a JSON object) on its standard input;
 * its standard output (at most 64 KiB) is the result, as JSON text; a
 * non-zero exit is a failed call whose message is the first line of its
 * standard error.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "fdio.h"
#include "proto.h"

/* Split cmd at blanks into a NULL-terminated argv; NULL on ENOMEM or no word. */
static char **
cli_tools_split(const char *cmd)
{
	char **argv = calloc(strlen(cmd) / 2 + 2, sizeof(*argv));
	size_t n = 0;
	const char *p = cmd;

	if (argv == NULL)
		return NULL;
	while (*p != '\0') {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == 0)
			break;
		argv[n] = strndup(p, len);
		if (argv[n++] == NULL)
			goto fail;
		p += len;
	}
	if (n > 0)
		return argv;
fail:
	while (n > 0)
		free(argv[--n]);
	free(argv);
	return NULL;
}

int
cli_tools_add(struct cli_tools *tools, struct airlock_run_req *req, const char *spec,
	      const char **ret_why)
{
	const char *eq = strchr(spec, '=');
	char *name;
	int r;

	*ret_why = "expected NAME=COMMAND";
	if (eq == NULL || eq == spec || eq[1] == '\0')
		return -EINVAL;
	*ret_why = "too many tools (32 at most)";
	if (tools->n == CLI_TOOLS_MAX)
		return -EINVAL;
	name = strndup(spec, (size_t)(eq - spec));
	if (name == NULL)
		return -ENOMEM;
	r = airlock_run_req_add_tool(req, name, NULL, NULL);
	*ret_why = r == -EINVAL	  ? "not a tool name ([A-Za-z_][A-Za-z0-9_]*, 1 to 64 bytes)"
		   : r == -EEXIST ? "given twice"
				  : "cannot declare it";
	if (r == 0) {
		tools->t[tools->n].argv = cli_tools_split(eq + 1);
		*ret_why = "no command";
		r = tools->t[tools->n].argv == NULL ? -EINVAL : 0;
	}
	if (r < 0) {
		free(name);
		return r == -ENOMEM ? r : -EINVAL;
	}
	tools->t[tools->n++].name = name;
	return 0;
}

/* A memfd holding len bytes of data, at offset 0; -1 on failure. */
static int
cli_tools_memfd(const char *data, size_t len)
{
	int fd = memfd_create("airlock-tool", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if ((len > 0 && fd_write_all(fd, data, len) < 0) || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The first line of what fd (a memfd at its end) holds, malloc()ed, or NULL. */
static char *
cli_tools_first_line(int fd)
{
	char buf[PROTO_TOOL_ERROR_MAX + 1];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] != '\0' ? strdup(buf) : NULL;
}

int
cli_tools_call(void *arg, const char *name, const char *args, size_t args_len, char **ret_json,
	       size_t *ret_len)
{
	struct cli_tools *tools = arg;
	char *out = NULL;
	size_t i, len = 0;
	int in_fd = -1, err_fd = -1, pipefd[2] = {-1, -1}, status, r = -EIO;
	pid_t pid;

	for (i = 0; i < tools->n; i++)
		if (strcmp(tools->t[i].name, name) == 0)
			break;
	if (i == tools->n)
		return AIRLOCK_TOOL_REFUSED;
	in_fd = cli_tools_memfd(args, args_len);
	err_fd = cli_tools_memfd("", 0);
	out = malloc(PROTO_TOOL_BYTES_MAX + 1);
	if (in_fd < 0 || err_fd < 0 || out == NULL || pipe2(pipefd, O_CLOEXEC) < 0)
		goto out;
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		if (dup2(in_fd, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(err_fd, 2) < 0)
			_exit(127);
		execvp(tools->t[i].argv[0], tools->t[i].argv);
		dprintf(2, "cannot run %s: %s\n", tools->t[i].argv[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	/* Read to the end: past the bound the rest is drained, the call fails. */
	for (;;) {
		char sink[4096];
		ssize_t n = len <= PROTO_TOOL_BYTES_MAX
				    ? read(pipefd[0], out + len, PROTO_TOOL_BYTES_MAX + 1 - len)
				    : read(pipefd[0], sink, sizeof(sink));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len <= PROTO_TOOL_BYTES_MAX)
			len += (size_t)n;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && len <= PROTO_TOOL_BYTES_MAX) {
		*ret_json = out;
		*ret_len = len;
		out = NULL;
		r = 0;
	} else if (len > PROTO_TOOL_BYTES_MAX) {
		*ret_json = strdup("the tool's output is longer than 64 KiB");
	} else {
		*ret_json = cli_tools_first_line(err_fd);
		if (*ret_json == NULL &&
		    asprintf(ret_json, "the tool exited with status %d",
			     WIFEXITED(status) ? WEXITSTATUS(status) : 128) < 0)
			*ret_json = NULL;
	}
out:
	free(out);
	if (in_fd >= 0)
		close(in_fd);
	if (err_fd >= 0)
		close(err_fd);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	return r;
}

void
cli_tools_free(struct cli_tools *tools)
{
	size_t i, k;

	for (i = 0; i < tools->n; i++) {
		free(tools->t[i].name);
		for (k = 0; tools->t[i].argv[k] != NULL; k++)
			free(tools->t[i].argv[k]);
		free(tools->t[i].argv);
	}
	tools->n = 0;
}
