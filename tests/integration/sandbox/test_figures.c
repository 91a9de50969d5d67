/*
 * test_figures.c: a python run's matplotlib figures (issue 30, point 2)
 * through the real daemon, the C library and the airlock command: the
 * result's display items (PNG, SVG when asked), their refusal for a shell
 * run, and the command's notes, --artifacts files and --json. The figures
 * need python3-matplotlib on the host (the python-site runtime sees it);
 * without it those tests are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "sbx.h"

static const char png_magic[] = "\x89PNG\r\n\x1a\n";

static const char plot[] = "import matplotlib.pyplot as plt\n"
			   "plt.plot([1, 2, 3]); plt.show(); plt.close('all')\n"
			   "plt.figure(); plt.bar([1], [2])\n";

static int
setup(void **state)
{
	static struct sbx s;

	if (sbx_start(&s, NULL) < 0)
		return -1;
	*state = &s;
	return 0;
}

static int
teardown(void **state)
{
	return sbx_stop(*state) == 0 ? 0 : -1;
}

static void
need_matplotlib(void)
{
	if (system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") != 0)
		skip();
}

/* The runs' wall and cpu limits: matplotlib's import takes seconds on a
 * loaded host. */
static struct airlock_run_req *
figures_req(const char *runtime, const char *code)
{
	struct airlock_run_req *req = sbx_req(runtime, code);

	sbx_limit(req, AIRLOCK_LIMIT_WALL_MS, 60000);
	sbx_limit(req, AIRLOCK_LIMIT_CPU_MS, 60000);
	return req;
}

/* Display item i of res: its mime type and bytes. */
static void
display_at(const struct airlock_result *res, size_t i, const char **mime, const void **data,
	   size_t *len)
{
	assert_int_equal(airlock_result_display_get(res, i, mime, data, len), 0);
}

/* The library gives a run's figures as display items: one shown, one left
 * open; none for a run without; out of range is -ERANGE or -EINVAL. */
static void
test_library_png(void **state)
{
	struct sbx *s = *state;
	struct airlock_result *res;
	const char *mime;
	const void *data;
	size_t len, i;

	need_matplotlib();
	res = sbx_run(s, figures_req("python-site", plot));
	sbx_assert_ok(res);
	assert_int_equal(airlock_result_display_count(res), 2);
	for (i = 0; i < 2; i++) {
		display_at(res, i, &mime, &data, &len);
		assert_string_equal(mime, "image/png");
		assert_true(len > 8);
		assert_memory_equal(data, png_magic, 8);
	}
	assert_true(airlock_result_display_get(res, 2, &mime, &data, &len) < 0);
	assert_int_equal(airlock_result_cell(res), 0);
	assert_int_equal(airlock_result_artifact_count(res), 0);
	airlock_result_free(res);

	res = sbx_run(s, sbx_req("python", "print(1)"));
	sbx_assert_ok(res);
	assert_int_equal(airlock_result_display_count(res), 0);
	airlock_result_free(res);
}

/* airlock_run_req_set_figures_svg() on a python run: SVG; on a shell run:
 * refused (bad_request) with the reason. */
static void
test_library_svg(void **state)
{
	struct sbx *s = *state;
	struct airlock_run_req *req;
	struct airlock_result *res = NULL;
	const char *mime, *code = "", *msg = "";
	const void *data;
	size_t len;

	need_matplotlib();
	req = figures_req("python-site", "import matplotlib.pyplot as plt\nplt.plot([1])\n");
	assert_int_equal(airlock_run_req_set_figures_svg(req, true), 0);
	res = sbx_run(s, req);
	sbx_assert_ok(res);
	assert_int_equal(airlock_result_display_count(res), 1);
	display_at(res, 0, &mime, &data, &len);
	assert_string_equal(mime, "image/svg+xml");
	assert_non_null(memmem(data, len, "<svg", 4));
	airlock_result_free(res);

	req = sbx_req("sh", "true");
	assert_int_equal(airlock_run_req_set_figures_svg(req, true), 0);
	res = NULL;
	assert_true(airlock_run(s->conn, req, &res) < 0);
	assert_null(res);
	airlock_conn_last_error(s->conn, &code, &msg);
	assert_string_equal(code, "bad_request");
	assert_non_null(strstr(msg, "figures_svg is for cells and python runs"));
	airlock_run_req_free(req);
}

struct cli_out {
	int status;
	char *out, *err;
};

/* Read a whole file into a fresh string. */
static char *
slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	assert_int_equal(getdelim(&buf, &len, '\0', f) >= 0 || feof(f), 1);
	fclose(f);
	if (buf == NULL)
		buf = calloc(1, 1);
	assert_non_null(buf);
	return buf;
}

/* Run $AIRLOCK_CLI --socket SOCK args... to the end; its status and output. */
static struct cli_out
cli(struct sbx *s, const char *const *args)
{
	const char *bin = getenv("AIRLOCK_CLI");
	char outp[192], errp[192];
	const char *argv[32];
	struct cli_out r;
	int n = 0, st;
	pid_t pid;

	assert_non_null(bin);
	snprintf(outp, sizeof(outp), "%s/fig.out", s->f.dir);
	snprintf(errp, sizeof(errp), "%s/fig.err", s->f.dir);
	argv[n++] = bin;
	argv[n++] = "--socket";
	argv[n++] = s->f.sock;
	for (; *args != NULL && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = slurp(outp);
	r.err = slurp(errp);
	return r;
}

static void
cli_free(struct cli_out *r)
{
	free(r->out);
	free(r->err);
}

/* The command: each figure named on stderr, written by --artifacts as
 * display-N.png, listed in --json; --figures svg on a python run. */
static void
test_cli(void **state)
{
	struct sbx *s = *state;
	char dir[192], path[256];
	struct cli_out r;
	struct stat st;

	need_matplotlib();
	snprintf(dir, sizeof(dir), "%s/figs", s->f.dir);
	{
		const char *a[] = {"run",   "--lang", "python-site", "--wall", "60",
				   "--cpu", "60",     "-c",	     plot,     NULL};

		r = cli(s, a);
		assert_int_equal(r.status, 0);
		assert_non_null(strstr(r.err, "airlock: display 1: image/png, "));
		assert_non_null(strstr(r.err, "airlock: display 2: image/png, "));
		assert_non_null(strstr(r.err, "--artifacts DIR writes it as display-1.png"));
		cli_free(&r);
	}
	{
		const char *a[] = {"run", "--lang",	 "python-site", "--wall", "60", "--cpu",
				   "60",  "--artifacts", dir,		"-c",	  plot, NULL};
		char *bytes;

		r = cli(s, a);
		assert_int_equal(r.status, 0);
		cli_free(&r);
		snprintf(path, sizeof(path), "%s/display-2.png", dir);
		assert_int_equal(stat(path, &st), 0);
		bytes = slurp(path);
		assert_memory_equal(bytes, png_magic, 8);
		free(bytes);
	}
	{
		const char *a[] = {
			"--json",      "run",	 "--lang",
			"python-site", "--wall", "60",
			"--cpu",       "60",	 "--figures",
			"svg",	       "-c",	 "import matplotlib.pyplot as plt\nplt.plot([1])\n",
			NULL};
		json_error_t jerr;
		json_t *obj, *disp;

		r = cli(s, a);
		assert_int_equal(r.status, 0);
		obj = json_loads(r.out, 0, &jerr);
		assert_non_null(obj);
		disp = json_object_get(obj, "display");
		assert_int_equal(json_array_size(disp), 1);
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(disp, 0), "mime")),
			"image/svg+xml");
		assert_null(json_object_get(obj, "cell"));
		json_decref(obj);
		cli_free(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_library_png),
		cmocka_unit_test(test_library_svg),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
