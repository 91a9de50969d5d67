/*
 * test_mounts.c: named read-only mounts end to end through the real daemon
 * and library (issue 17, step 4 of docs/design-profiles.md): a dataset a
 * profile gives is visible read-only at its target and nowhere else, writes
 * and exec fail there, a package tree may exec, a mount that does not exist
 * or that the profile does not allow is refused naming it, and a [mount]
 * whose source is a link, world-writable, missing or relative is refused
 * with file:line at start-up and at reload (the old configuration stays).
 * info lists the caller's mounts (name, target, kind; never the source).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "airlock.h"
#include "fixture.h"
#include "front_util.h"

/* The mount sources: a root-owned tree no one else may write, made beside
 * this executable (the build tree; /tmp is world-writable, so nothing under
 * it may be a source). */
static char base[PATH_MAX];

#define CFG_SANDBOX "[sandbox]\nuid_base = 1530000\nuid_count = 64\n"
#define CFG_HEAD "[daemon]\nsocket_mode = 0666\n" CFG_SANDBOX

static struct fixture fx;

/* Write a file of mode under base. */
static void
put(const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* Make a directory of mode under base. */
static void
dir(const char *rel, mode_t mode)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	assert_int_equal(mkdir(path, mode), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* The good config with extra text appended (a buffer of the caller's). */
static const char *
config(char *buf, size_t len, const char *extra)
{
	snprintf(buf, len,
		 CFG_HEAD "[mount data]\nsource = %s/data\ntarget = /data/x\n"
			  "[mount tools]\nsource = %s/tools\ntarget = /opt/tools\npackage = true\n"
			  "[mount secret]\nsource = %s/secret\ntarget = /secret\n"
			  "[profile ds]\nmounts = data\nallow_mounts = tools\n%s",
		 base, base, base, extra);
	return buf;
}

static int
setup(void **state)
{
	char cfg[8192];

	(void)state;
	/* Not next to the test program: a build tree below /tmp (or any
	 * directory others may write) fails the source check itself. Every
	 * component of /var/lib is root's and 0755. */
	snprintf(base, sizeof(base), "/var/lib/airlock-test-mounts-XXXXXX");
	if (mkdtemp(base) == NULL || chmod(base, 0755) < 0)
		return -1;
	dir("data", 0755);
	put("data/hello.txt", "dataset bytes\n", 0666); /* only the mount refuses */
	put("data/run.sh", "#!/bin/sh\necho ran\n", 0755);
	dir("tools", 0755);
	put("tools/hello.sh", "#!/bin/sh\necho tool ran\n", 0755);
	dir("secret", 0755);
	put("secret/key", "not for ds\n", 0644);
	if (fixture_start(&fx, config(cfg, sizeof(cfg), "")) < 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	int r = fixture_stop(&fx);

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		return -1;
	return r == 0 ? 0 : -1;
}

/* Run python code with profile and mounts (NULL-terminated); the daemon's
 * error code and message on refusal. */
static int
run_py(const char *code, const char *profile, const char *const *mounts,
       struct airlock_result **ret, char *ecode, char *emsg)
{
	struct airlock_conn *c = NULL;
	struct airlock_run_req *req = NULL;
	const char *ec, *em;
	int r;

	assert_int_equal(airlock_connect(fx.sock, &c), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "python"), 0);
	assert_int_equal(airlock_run_req_set_code(req, code, strlen(code)), 0);
	assert_int_equal(airlock_run_req_set_profile(req, profile), 0);
	for (; mounts != NULL && *mounts != NULL; mounts++)
		assert_int_equal(airlock_run_req_add_mount(req, *mounts), 0);
	*ret = NULL;
	ecode[0] = emsg[0] = '\0';
	r = airlock_run(c, req, ret);
	if (r < 0 && airlock_conn_last_error(c, &ec, &em) == 0) {
		snprintf(ecode, 64, "%s", ec);
		snprintf(emsg, 512, "%s", em);
	}
	airlock_run_req_free(req);
	airlock_conn_free(c);
	return r;
}

/* Run code that must exit 0; return its stdout (free()). */
static char *
run_ok(const char *code, const char *profile, const char *const *mounts)
{
	struct airlock_result *res;
	char ecode[64], emsg[512];
	const void *out, *err;
	size_t len, elen;
	char *s;

	if (run_py(code, profile, mounts, &res, ecode, emsg) < 0)
		fail_msg("refused: %s: %s", ecode, emsg);
	assert_int_equal(airlock_result_stdout(res, &out, &len), 0);
	assert_int_equal(airlock_result_stderr(res, &err, &elen), 0);
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED ||
	    airlock_result_exit_code(res) != 0)
		fail_msg("outcome %s exit %d error %s\nstdout %.*s\nstderr %.*s",
			 airlock_outcome_name(airlock_result_outcome(res)),
			 airlock_result_exit_code(res),
			 airlock_result_error(res) ? airlock_result_error(res) : "", (int)len,
			 (const char *)out, (int)elen, (const char *)err);
	s = strndup(out, len);
	airlock_result_free(res);
	return s;
}

/* Every way to change the dataset fails; its mount is ro, nosuid, nodev,
 * noexec; it is mounted at /data/x only (no other mount point of its
 * filesystem's files), and a run of a profile that does not give it has no
 * /data at all. */
#define DATASET_CODE                                                                               \
	"import os, errno, subprocess\n"                                                           \
	"print(open('/data/x/hello.txt').read(), end='')\n"                                        \
	"def refused(f):\n"                                                                        \
	"    try:\n"                                                                               \
	"        f()\n"                                                                            \
	"    except OSError as e:\n"                                                               \
	"        return errno.errorcode[e.errno]\n"                                                \
	"    return 'ALLOWED'\n"                                                                   \
	"print('write', refused(lambda: open('/data/x/new', 'w')))\n"                              \
	"print('append', refused(lambda: open('/data/x/hello.txt', 'a')))\n"                       \
	"print('chmod', refused(lambda: os.chmod('/data/x/hello.txt', 0o777)))\n"                  \
	"print('unlink', refused(lambda: os.unlink('/data/x/hello.txt')))\n"                       \
	"print('mkdir', refused(lambda: os.mkdir('/data/x/d')))\n"                                 \
	"print('link', refused(lambda: os.link('/data/x/hello.txt', '/tmp/l')))\n"                 \
	"print('exec', refused(lambda: subprocess.run(['/data/x/run.sh'])))\n"                     \
	"ml = [l.split() for l in open('/proc/self/mountinfo')]\n"                                 \
	"me = [f for f in ml if f[4] == '/data/x'][0]\n"                                           \
	"def near(a, b):\n"                                                                        \
	"    return a == b or a.startswith(b.rstrip('/') + '/') or b.startswith(a.rstrip('/') + "  \
	"'/')\n"                                                                                   \
	"print('points', [f[4] for f in ml if f[2] == me[2] and near(f[3], me[3])])\n"             \
	"print('opts', sorted(set(me[5].split(',')) & {'ro', 'nosuid', 'nodev', 'noexec'}))\n"

static void
test_dataset_read_only(void **state)
{
	const char *want = "dataset bytes\n"
			   "write EROFS\nappend EROFS\nchmod EROFS\nunlink EROFS\nmkdir EROFS\n"
			   "link EXDEV\nexec EACCES\n"
			   "points ['/data/x']\n"
			   "opts ['nodev', 'noexec', 'nosuid', 'ro']\n";
	char *out;

	(void)state;
	out = run_ok(DATASET_CODE, "ds", NULL);
	assert_string_equal(out, want);
	free(out);
	/* Another profile: nothing of it. */
	out = run_ok("import os\nprint(os.path.exists('/data'), os.path.exists('/secret'))\n",
		     "standard", NULL);
	assert_string_equal(out, "False False\n");
	free(out);
}

/* A package tree a request asks for (allowed by the profile): exec works. */
static void
test_package_tree_exec(void **state)
{
	static const char *const tools[] = {"tools", NULL};
	char *out;

	(void)state;
	out = run_ok("import subprocess, os\n"
		     "subprocess.run(['/opt/tools/hello.sh'], check=True)\n"
		     "print(os.access('/opt/tools/hello.sh', os.W_OK))\n",
		     "ds", tools);
	assert_string_equal(out, "tool ran\nFalse\n");
	free(out);
}

/* A mount that does not exist, or that the profile does not allow: refused
 * naming it; the library refuses a name that is not one. */
static void
test_refusals(void **state)
{
	static const char *const nope[] = {"nope", NULL};
	static const char *const secret[] = {"secret", NULL};
	static const char *const tools[] = {"tools", NULL};
	struct airlock_run_req *req = NULL;
	struct airlock_result *res;
	char ecode[64], emsg[512];

	(void)state;
	assert_int_equal(run_py("print(1)\n", "ds", nope, &res, ecode, emsg), -ENOENT);
	assert_string_equal(ecode, "not_found");
	assert_string_equal(emsg, "mount 'nope' does not exist");
	assert_int_equal(run_py("print(1)\n", "ds", secret, &res, ecode, emsg), -EACCES);
	assert_string_equal(ecode, "unauthorized");
	assert_string_equal(emsg, "mount 'secret' is not available to uid 0 under profile 'ds' "
				  "(not in its allow_mounts)");
	assert_int_equal(run_py("print(1)\n", "standard", tools, &res, ecode, emsg), -EACCES);
	assert_non_null(strstr(emsg, "mount 'tools'"));
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_add_mount(req, "/srv/x"), -EINVAL);
	assert_int_equal(airlock_run_req_add_mount(req, "Data"), -EINVAL);
	assert_int_equal(airlock_run_req_add_mount(req, NULL), -EINVAL);
	airlock_run_req_free(req);
}

/* The size of the daemon's log, bytes. */
static off_t
log_size(void)
{
	struct stat st;

	assert_int_equal(stat(fx.log, &st), 0);
	return st.st_size;
}

/* Show the daemon's log (its last 64 KiB) and fail with msg. */
#define FAIL_WITH_LOG(...)                                                                         \
	do {                                                                                       \
		char cmd_[256];                                                                    \
		snprintf(cmd_, sizeof(cmd_), "tail -c 65536 %s >&2", fx.log);                      \
		(void)system(cmd_);                                                                \
		fail_msg(__VA_ARGS__);                                                             \
	} while (0)

/*
 * Issue 28, point 4: a [mount] source renamed under the running daemon
 * fails only the runs that use it, naming the mount and its target (a
 * client never learns a host path: info hides sources too), while runs of
 * another profile keep working, the pool included; the daemon does not
 * spin (its log grows by little: before, 260,000 lines in 5 s); and once
 * the source is back, runs that use it work again by themselves.
 */
static void
test_vanished_source(void **state)
{
	char from[PATH_MAX + 16], to[PATH_MAX + 16], ecode[64], emsg[512];
	struct airlock_result *res = NULL;
	off_t before, grown;
	char *out = NULL;
	int i, r;

	(void)state;
	snprintf(from, sizeof(from), "%s/data", base);
	snprintf(to, sizeof(to), "%s/data.gone", base);
	before = log_size();
	assert_int_equal(rename(from, to), 0);
	/* Runs of a profile without it: every one of them works (more than
	 * the pool holds, so fresh and prepared sandboxes both). */
	for (i = 0; i < 6; i++) {
		out = run_ok("print('other')\n", "standard", NULL);
		assert_string_equal(out, "other\n");
		free(out);
	}
	/* A run of the profile that gives it: refused, the mount named. */
	r = run_py("print(1)\n", "ds", NULL, &res, ecode, emsg);
	if (r >= 0) {
		const char *e = res != NULL ? airlock_result_error(res) : NULL;

		FAIL_WITH_LOG("a run of ds worked without its mount's source (error %s)",
			      e != NULL ? e : "none");
	}
	assert_string_equal(ecode, "not_found");
	if (strstr(emsg, "mount 'data'") == NULL || strstr(emsg, "/data/x") == NULL)
		FAIL_WITH_LOG("error without the mount's name and target: %s", emsg);
	assert_null(strstr(emsg, base));
	/* The daemon still works for others after that refusal. */
	out = run_ok("print('still')\n", "standard", NULL);
	assert_string_equal(out, "still\n");
	free(out);
	/* No spinning: a pool refill that fails or a repeated warning adds
	 * a few lines, not megabytes (1 MB is over a thousand times what a
	 * working daemon writes here). Give a spin half a second to show. */
	front_sleep_ms(500);
	grown = log_size() - before;
	if (grown > 64 * 1024)
		FAIL_WITH_LOG("the log grew by %lld bytes while the source was gone",
			      (long long)grown);
	if (!fixture_log_has(&fx, "mount data") || !fixture_log_has(&fx, from))
		FAIL_WITH_LOG("the log does not name the mount and its source %s", from);
	/* Back: runs that use it work again, with no reload. */
	assert_int_equal(rename(to, from), 0);
	for (i = 0; i < 500; i++) {
		r = run_py("print(open('/data/x/hello.txt').read(), end='')\n", "ds", NULL, &res,
			   ecode, emsg);
		if (r == 0 && airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
		    airlock_result_exit_code(res) == 0)
			break;
		if (res != NULL)
			airlock_result_free(res);
		res = NULL;
		front_sleep_ms(10);
	}
	if (res == NULL)
		FAIL_WITH_LOG("runs of ds did not work again after the source came back: %s: %s",
			      ecode, emsg);
	airlock_result_free(res);
}

/*
 * Set the soft RLIMIT_NOFILE of process pid (the frontend, run as nobody)
 * to cur, from a child as nobody (this root has no CAP_SYS_RESOURCE, and a
 * process may set the limits of one of its own uid); the old one in
 * *ret_old (may be NULL).
 */
static void
nofile_as_nobody(pid_t pid, rlim_t cur, rlim_t *ret_old)
{
	struct rlimit old;
	int p[2], st;
	pid_t c;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		struct passwd *pw = getpwnam("nobody");
		struct rlimit rl;

		if (pw == NULL || setgroups(0, NULL) < 0 ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0 ||
		    prlimit(pid, RLIMIT_NOFILE, NULL, &rl) < 0 ||
		    write(p[1], &rl, sizeof(rl)) != (ssize_t)sizeof(rl))
			_exit(1);
		rl.rlim_cur = cur;
		_exit(prlimit(pid, RLIMIT_NOFILE, &rl, NULL) < 0 ? 2 : 0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &old, sizeof(old)), (ssize_t)sizeof(old));
	close(p[0]);
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (ret_old != NULL)
		*ret_old = old.rlim_cur;
}

/* How many times s is in the daemon's log. */
static int
log_count(const char *s)
{
	char line[4096];
	int n = 0;
	FILE *fp = fopen(fx.log, "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		n += strstr(line, s) != NULL;
	fclose(fp);
	return n;
}

/*
 * The RLIMIT_NOFILE under which the frontend fe has exactly nfree free fd
 * numbers (a limit counts fd numbers, not open fds: a high fd it opened
 * before does not take a place below it), once the same figure was read
 * three times in a row 50 ms apart (a run's reap or a pool refill may
 * still close or open some), at most 5 s.
 */
static rlim_t
free_fd_limit(pid_t fe, int nfree)
{
	rlim_t last = 0, lim = 0;
	int same = 0, i;

	for (i = 0; i < 100 && same < 3; i++) {
		char path[64];
		bool open_fd[1024] = {false};
		struct dirent *e;
		DIR *dir;
		int free_below = 0;

		snprintf(path, sizeof(path), "/proc/%d/fd", (int)fe);
		dir = opendir(path);
		assert_non_null(dir);
		while ((e = readdir(dir)) != NULL) {
			long fd = strtol(e->d_name, NULL, 10);

			if (e->d_name[0] != '.' && fd >= 0 && fd < 1024)
				open_fd[fd] = true;
		}
		closedir(dir);
		for (lim = 0; lim < 1024; lim++) {
			free_below += !open_fd[lim];
			if (free_below == nfree + 1)
				break;
		}
		same = lim == last ? same + 1 : 1;
		last = lim;
		front_sleep_ms(50);
	}
	return last;
}

/*
 * Issue 28, point 8, the reload path: a reload that changes the [mount]
 * sections must seal a new root spec; when the frontend cannot have one
 * more fd (EMFILE), that reload is refused and the old configuration stays
 * (it was fatalx() after the switch: the service stopped). The frontend's
 * limit is set to its fds + 1, room for the config's memfd the spawner
 * passes and none for the seal; should its fd count change in between
 * (the reload then applies), the next try reloads the other file.
 */
static void
test_reload_seal_fails(void **state)
{
	char cfg[2][8192];
	rlim_t old;
	pid_t fe;
	int i, k, ok, refused = 0;
	char *out;

	(void)state;
	fe = front_first_child(fx.pid);
	assert_true(fe > 0);
	/* Without [mount secret], and with it: each a new root spec. No
	 * interpreter started ahead: a reload closes its plan's fd first,
	 * which would make room for the seal. */
	for (i = 0; i < 2; i++)
		snprintf(cfg[i], sizeof(cfg[i]),
			 "[daemon]\nsocket_mode = 0666\nprestarted_interpreters = 0\n" CFG_SANDBOX
			 "[mount data]\nsource = %s/data\ntarget = /data/x\n"
			 "[mount tools]\nsource = %s/tools\ntarget = /opt/tools\npackage = true\n"
			 "%s%s%s"
			 "[profile ds]\nmounts = data\nallow_mounts = tools\n",
			 base, base, i ? "[mount secret]\nsource = " : "", i ? base : "",
			 i ? "/secret\ntarget = /secret\n" : "");
	for (i = 0; i < 6 && refused == 0; i++) {
		assert_int_equal(fixture_write_config(&fx, cfg[i % 2]), 0);
		ok = log_count("reloaded: ");
		/* Room for the config's memfd the spawner passes, none for a seal. */
		nofile_as_nobody(fe, free_fd_limit(fe, 1), &old);
		assert_int_equal(kill(fx.pid, SIGHUP), 0);
		for (k = 0; k < 500 && fixture_alive(&fx) && log_count("reloaded: ") == ok &&
			    (refused = log_count("cannot seal the root spec")) == 0;
		     k++)
			front_sleep_ms(10);
		if (!fixture_alive(&fx))
			FAIL_WITH_LOG("the daemon stopped at a reload that could not seal");
		nofile_as_nobody(fe, old, NULL);
	}
	if (refused == 0 ||
	    !fixture_log_has(&fx, "reload refused, the old configuration stays: cannot seal"))
		FAIL_WITH_LOG("no reload refused for want of an fd in %d tries", i);
	/* The old configuration: its mounts work. */
	out = run_ok("print(open('/data/x/hello.txt').read(), end='')\n", "ds", NULL);
	assert_string_equal(out, "dataset bytes\n");
	free(out);
	assert_int_equal(fixture_write_config(&fx, config(cfg[1], sizeof(cfg[1]), "")), 0);
	ok = log_count("reloaded: ");
	assert_int_equal(kill(fx.pid, SIGHUP), 0);
	for (i = 0; i < 500 && log_count("reloaded: ") == ok; i++)
		front_sleep_ms(10);
}

/*
 * Issue 28, point 8, the receiving side: at a reload the spawner passes the
 * file as a memfd; a frontend with no free fd number cannot receive it.
 * That reload is refused and the daemon goes on (the truncated message was
 * "malformed message from the spawner", fatalx(): the service stopped).
 */
static void
test_reload_fd_lost(void **state)
{
	rlim_t old;
	pid_t fe;
	int i, ok;
	char *out;

	(void)state;
	fe = front_first_child(fx.pid);
	assert_true(fe > 0);
	ok = log_count("Too many open files");
	nofile_as_nobody(fe, free_fd_limit(fe, 0), &old);
	assert_int_equal(kill(fx.pid, SIGHUP), 0);
	for (i = 0; i < 500 && fixture_alive(&fx) && log_count("Too many open files") == ok; i++)
		front_sleep_ms(10);
	if (!fixture_alive(&fx))
		FAIL_WITH_LOG("the daemon stopped at a reload whose memfd it could not receive");
	nofile_as_nobody(fe, old, NULL);
	if (!fixture_log_has(&fx, "its fds could not be received") ||
	    !fixture_log_has(&fx, "reload refused, the old configuration stays"))
		FAIL_WITH_LOG("no refused reload for the fd not received");
	out = run_ok("print(open('/data/x/hello.txt').read(), end='')\n", "ds", NULL);
	assert_string_equal(out, "dataset bytes\n");
	free(out);
}

/* The source line of the [mount bad] section in config(extra) with extra
 * "[mount bad]\nsource = ...\n...": line 20 of the file (18 before it). */
#define BAD_LINE 20

/* One bad [mount] (detail: the reason after "source: "): refused at start-up by a second daemon
 * with file:line, and at reload of the running one, which keeps its old mounts. */
static void
check_bad(const char *source, const char *detail)
{
	char cfg[8192], extra[PATH_MAX + 128], want[PATH_MAX + 256], out[4096], err[4096];
	char cpath[PATH_MAX + 32], sock[PATH_MAX + 32], cmd[256];
	char *argv[8];
	char *res;
	int fd, st, i;

	snprintf(extra, sizeof(extra), "[mount bad]\nsource = %s\ntarget = /bad\n", source);
	config(cfg, sizeof(cfg), extra);
	/* Start-up: a daemon of its own on this file exits with file:line. */
	snprintf(cpath, sizeof(cpath), "%s/bad.conf", base);
	snprintf(sock, sizeof(sock), "%s/bad.sock", base);
	fd = open(cpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
	close(fd);
	argv[0] = getenv("AIRLOCKD");
	argv[1] = "-f";
	argv[2] = "-c";
	argv[3] = cpath;
	argv[4] = "-s";
	argv[5] = sock;
	argv[6] = NULL;
	assert_non_null(argv[0]);
	st = front_run_cmd((uid_t)-1, (gid_t)-1, argv, out, sizeof(out), err, sizeof(err));
	assert_int_not_equal(st, 0);
	snprintf(want, sizeof(want), "%s:%d: [mount bad] source: %s", cpath, BAD_LINE, detail);
	if (strstr(err, want) == NULL)
		fail_msg("start-up: want \"%s\" in:\n%s", want, err);
	unlink(cpath);

	/* Reload: refused with file:line; the old mounts stay. */
	assert_int_equal(fixture_write_config(&fx, cfg), 0);
	assert_int_equal(kill(fx.pid, SIGHUP), 0);
	snprintf(want, sizeof(want), "%s:%d: [mount bad] source: %s", fx.config, BAD_LINE, detail);
	for (i = 0; i < 300 && !fixture_log_has(&fx, want); i++)
		front_sleep_ms(10);
	if (!fixture_log_has(&fx, want)) {
		snprintf(cmd, sizeof(cmd), "cat %s >&2", fx.log);
		(void)system(cmd);
		fail_msg("reload: no \"%s\" in the log", want);
	}
	res = run_ok("print(open('/data/x/hello.txt').read(), end='')\n", "ds", NULL);
	assert_string_equal(res, "dataset bytes\n");
	free(res);
}

/*
 * The [mount] and [runtime python] sections of airlockd.conf(5)'s EXAMPLE,
 * as the page has them, with only the mount's source moved to a venv this
 * test makes under base (python3 -m venv --without-pip: offline). The
 * example's runtime must run code through it.
 */
static void
example_sections(char *buf, size_t len, const char *src_root)
{
	const char *page = getenv("AIRLOCK_MAN5");
	char line[512];
	size_t n = 0;
	bool in_ex = false, keep = false;
	FILE *fp;

	assert_non_null(page);
	fp = fopen(page, "r");
	assert_non_null(fp);
	buf[0] = '\0';
	while (fgets(line, sizeof(line), fp) != NULL) {
		char clean[512], *o = clean;
		const char *c;

		if (!strncmp(line, ".SH EXAMPLE", 11)) {
			in_ex = true;
			continue;
		}
		if (in_ex && !strncmp(line, ".SH", 3))
			break;
		if (!in_ex || line[0] == '.')
			continue;
		/* roff's \- is a '-' */
		for (c = line; *c != '\0'; c++) {
			if (c[0] == '\\' && c[1] == '-')
				c++;
			*o++ = *c;
		}
		*o = '\0';
		if (clean[0] == '[')
			keep = !strncmp(clean, "[mount ", 7) ||
			       !strcmp(clean, "[runtime python]\n");
		if (!keep)
			continue;
		if (!strncmp(clean, "source = ", 9))
			n += (size_t)snprintf(buf + n, len - n, "source = %s%s", src_root,
					      clean + 9);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s", clean);
		assert_true(n < len);
	}
	fclose(fp);
	assert_non_null(strstr(buf, "argv = /opt/python3.12/bin/python3 -I -S -B {code}"));
	assert_non_null(strstr(buf, "mounts = opt-python312"));
}

/* Make a venv at base/opt/python3.12 (the example's path, under base). */
static void
make_venv(void)
{
	char cmd[PATH_MAX + 128];

	dir("opt", 0755);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -m venv --without-pip '%s/opt/python3.12'",
		 base);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd),
		 "chmod -R go-w '%s/opt' && mkdir -p '%s/opt/python3.12/lib/site'", base, base);
	assert_int_equal(system(cmd), 0);
	put("opt/python3.12/lib/site/vmod.py", "WHERE = 'venv module'\n", 0644);
}

/*
 * Run the runtime venv-env (cwd = /workspace/src/deep) under profile (NULL:
 * the default) and compare its output with want: the module of its package
 * tree, its cwd, its env, the cwd's owner and whether the cwd is writable.
 */
static void
venv_env_run(const char *profile, const char *want)
{
	struct airlock_conn *c = NULL;
	struct airlock_run_req *req = NULL;
	struct airlock_result *res = NULL;
	static const char code[] = "import errno, os, sys\n"
				   "assert sys.prefix == '/opt/python3.12', sys.prefix  # "
				   "site.py ran: the venv's\n"
				   "sys.path.insert(0, '/opt/python3.12/lib/site')\n"
				   "import vmod\n"
				   "try:\n"
				   "    open('here.txt', 'w').close()\n"
				   "    w = 'writable'\n"
				   "except OSError as e:\n"
				   "    w = errno.errorcode[e.errno]\n"
				   "print(vmod.WHERE, os.getcwd(), os.environ['GREETING'], "
				   "os.environ['LANG'],\n"
				   "      os.environ['OVER'], os.stat('.').st_uid, w)\n";
	const void *o;
	size_t len;

	assert_int_equal(airlock_connect(fx.sock, &c), 0);
	assert_int_equal(airlock_run_req_new(&req), 0);
	assert_int_equal(airlock_run_req_set_runtime(req, "venv-env"), 0);
	if (profile != NULL)
		assert_int_equal(airlock_run_req_set_profile(req, profile), 0);
	assert_int_equal(airlock_run_req_set_code(req, code, strlen(code)), 0);
	assert_int_equal(airlock_run_req_set_env(req, "OVER", "req"), 0);
	assert_int_equal(airlock_run(c, req, &res), 0);
	assert_int_equal(airlock_result_stdout(res, &o, &len), 0);
	if (airlock_result_outcome(res) != AIRLOCK_OUTCOME_EXITED ||
	    airlock_result_exit_code(res) != 0)
		fail_msg("venv-env (profile %s): %s %s", profile ? profile : "default",
			 airlock_outcome_name(airlock_result_outcome(res)),
			 airlock_result_error(res) ? airlock_result_error(res) : "");
	if (len != strlen(want) || memcmp(o, want, len) != 0)
		fail_msg("venv-env (profile %s): %.*s", profile ? profile : "default", (int)len,
			 (const char *)o);
	airlock_result_free(res);
	airlock_run_req_free(req);
	airlock_conn_free(c);
}

/* A runtime under /opt: the page's example as written, and one with env,
 * cwd and the venv's own module. Runs last but one (it reloads). */
static void
test_venv_runtime(void **state)
{
	char cfg[16384], ex[4096], extra[8192];
	char *out;
	int i;

	(void)state;
	make_venv();
	example_sections(ex, sizeof(ex), base);
	snprintf(extra, sizeof(extra),
		 "%s\n[runtime venv-env]\n"
		 "argv = /opt/python3.12/bin/python3 -I -B {code}\ncode_name = main.py\n"
		 "mounts = opt-python312\n"
		 "env = PYTHONSAFEPATH=1 GREETING=hello LANG=C.UTF-8\n"
		 "cwd = /workspace/src/deep\n"
		 "[profile ro]\nfile_write = false\n",
		 ex);
	config(cfg, sizeof(cfg), extra);
	assert_int_equal(fixture_write_config(&fx, cfg), 0);
	assert_int_equal(kill(fx.pid, SIGHUP), 0);
	for (i = 0; i < 300 && !fixture_log_has(&fx, "reloaded: "); i++)
		front_sleep_ms(10);
	/* The example's runtime replaced the built-in python: its program is the venv's
	 * (-S: site.py, which would set sys.prefix to the venv, does not run). */
	for (i = 0; i < 300; i++) {
		struct airlock_result *res;
		char ecode[64], emsg[512];
		const void *o;
		size_t len;
		bool venv;

		if (run_py("import sys\nprint(sys.executable)\n", NULL, NULL, &res, ecode, emsg) <
		    0)
			fail_msg("refused: %s", emsg);
		assert_int_equal(airlock_result_stdout(res, &o, &len), 0);
		venv = len == 28 && !memcmp(o, "/opt/python3.12/bin/python3\n", 28);
		airlock_result_free(res);
		if (venv)
			break;
		front_sleep_ms(10);
	}
	out = run_ok("import sys, os\n"
		     "print(sys.executable, sys.flags.isolated, sys.flags.no_site)\n"
		     "print(os.access('/opt/python3.12/bin/python3', os.W_OK))\n",
		     NULL, NULL);
	assert_string_equal(out, "/opt/python3.12/bin/python3 1 1\nFalse\n");
	free(out);
	/* env, cwd, and exec from the package tree through the runtime; the
	 * cwd made as the code's (uid 1000). */
	venv_env_run(NULL, "venv module /workspace/src/deep hello C.UTF-8 req 1000 writable\n");
	/* The same under file_write = false: the cwd is made before the
	 * workspace becomes read-only (it failed at step chdir, EROFS), and
	 * stays read-only for the code. */
	venv_env_run("ro", "venv module /workspace/src/deep hello C.UTF-8 req 1000 EROFS\n");
}

static void
test_bad_sources(void **state)
{
	char path[PATH_MAX + 64], target[PATH_MAX + 64], detail[PATH_MAX + 128];

	(void)state;
	/* A link as the source, and as a component on the way. */
	snprintf(path, sizeof(path), "%s/link", base);
	snprintf(target, sizeof(target), "%s/data", base);
	assert_int_equal(symlink(target, path), 0);
	snprintf(detail, sizeof(detail), "%s/link is a symbolic link: refused", base);
	check_bad(path, detail);
	snprintf(path, sizeof(path), "%s/link/sub", base);
	check_bad(path, detail);
	/* World-writable. */
	dir("open", 0777);
	snprintf(path, sizeof(path), "%s/open", base);
	snprintf(detail, sizeof(detail), "%s is writable by group or others (mode 0777): refused",
		 path);
	check_bad(path, detail);
	/* Not root's. */
	dir("theirs", 0755);
	snprintf(path, sizeof(path), "%s/theirs", base);
	assert_int_equal(chown(path, 65534, 65534), 0);
	snprintf(detail, sizeof(detail), "%s is owned by uid 65534, not root: refused", path);
	check_bad(path, detail);
	/* A directory on the way that only root can search, and a source
	 * only root can read: the run's uid could not open either. */
	dir("private", 0700);
	dir("private/data", 0755);
	snprintf(path, sizeof(path), "%s/private/data", base);
	snprintf(detail, sizeof(detail),
		 "%s/private is not searchable by others (mode 0700): refused", base);
	check_bad(path, detail);
	dir("closed", 0711);
	snprintf(path, sizeof(path), "%s/closed", base);
	snprintf(detail, sizeof(detail), "%s is not readable by others (mode 0711): refused", path);
	check_bad(path, detail);
	/* Missing. */
	snprintf(path, sizeof(path), "%s/missing", base);
	snprintf(detail, sizeof(detail), "%s does not exist: refused", path);
	check_bad(path, detail);
	/* Relative. */
	check_bad("srv/data", "source srv/data: expected an absolute path");
}

/*
 * info lists the caller's mounts (those its profiles give or allow; "secret"
 * is in no profile) with target and kind, and each profile its mounts and
 * allow_mounts; the host source is not in the reply, so neither `airlock
 * info` nor its --json can print it.
 */
static void
test_info_mounts(void **state)
{
	char *argv[] = {(char *)getenv("AIRLOCK_CLI"), "--socket", fx.sock, "info", NULL, NULL};
	struct airlock_conn *c = NULL;
	struct airlock_info *info = NULL;
	static char out[65536], err[4096];
	size_t i, seen = 0;

	(void)state;
	assert_int_equal(airlock_connect(fx.sock, &c), 0);
	assert_int_equal(airlock_info(c, &info), 0);
	assert_int_equal(airlock_info_mount_count(info), 2);
	for (i = 0; i < airlock_info_mount_count(info); i++) {
		const char *name = airlock_info_mount_name(info, i);

		if (strcmp(name, "data") == 0) {
			assert_string_equal(airlock_info_mount_target(info, i), "/data/x");
			assert_false(airlock_info_mount_is_package(info, i));
			seen |= 1;
		} else if (strcmp(name, "tools") == 0) {
			assert_string_equal(airlock_info_mount_target(info, i), "/opt/tools");
			assert_true(airlock_info_mount_is_package(info, i));
			seen |= 2;
		} else {
			fail_msg("info lists mount '%s', which no profile or runtime names", name);
		}
	}
	assert_int_equal(seen, 3);
	assert_null(airlock_info_mount_name(info, 2));
	assert_null(airlock_info_mount_target(info, 2));
	for (i = 0; i < airlock_info_profile_count(info); i++) {
		bool ds = strcmp(airlock_info_profile_name(info, i), "ds") == 0;

		assert_int_equal(airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_MOUNTS),
				 ds ? 1 : 0);
		assert_int_equal(
			airlock_info_profile_list_count(info, i, AIRLOCK_PROFILE_ALLOW_MOUNTS),
			ds ? 1 : 0);
		if (!ds)
			continue;
		seen |= 4;
		assert_string_equal(airlock_info_profile_list(info, i, AIRLOCK_PROFILE_MOUNTS, 0),
				    "data");
		assert_string_equal(
			airlock_info_profile_list(info, i, AIRLOCK_PROFILE_ALLOW_MOUNTS, 0),
			"tools");
		assert_null(airlock_info_profile_list(info, i, AIRLOCK_PROFILE_MOUNTS, 1));
		assert_null(airlock_info_profile_list(info, i, (enum airlock_profile_list)7, 0));
	}
	assert_int_equal(seen, 7);
	airlock_info_free(info);
	airlock_conn_free(c);

	assert_non_null(argv[0]);
	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "\n  data               data     /data/x\n"));
	assert_non_null(strstr(out, "\n  tools              package  /opt/tools\n"));
	assert_non_null(strstr(out, "\n    data (mounts)\n    tools (allow_mounts)\n"));
	assert_null(strstr(out, "secret"));
	assert_null(strstr(out, base));
	argv[4] = "--json";
	assert_int_equal(front_run_cmd((uid_t)-1, 0, argv, out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "{\"name\":\"tools\",\"target\":\"/opt/tools\","
				    "\"package\":true}"));
	assert_non_null(strstr(out, "\"allow_mounts\":[\"tools\"]"));
	assert_null(strstr(out, base));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataset_read_only), cmocka_unit_test(test_package_tree_exec),
		cmocka_unit_test(test_refusals),	  cmocka_unit_test(test_vanished_source),
		cmocka_unit_test(test_reload_seal_fails), cmocka_unit_test(test_reload_fd_lost),
		cmocka_unit_test(test_info_mounts),	  cmocka_unit_test(test_venv_runtime),
		cmocka_unit_test(test_bad_sources),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
