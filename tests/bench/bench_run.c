/*
 * bench_run.c: one run of a payload through a variant of airlock-bench
 * (tests/bench/bench.h): the payloads, their run requests, the ns program.
 * Every variant reads the payload's stdout and stderr to EOF and waits for it.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENCH_NS_UID 2000000 /* host uid of root in the ns program's userns */

const char *const bench_variant_names[V_COUNT] = {"lib", "cli", "bare", "ns", "bwrap", "base"};

const struct bench_payload bench_payloads[] = {
	{"true", "exec", NULL, {"/bin/true", NULL}},
	{"sh-c-true", "exec", NULL, {"/bin/sh", "-c", "true", NULL}},
	{"py-pass", "python", "pass\n", {"/usr/bin/python3", "-I", "-S", "-B", "-c", "pass", NULL}},
	{"py-print",
	 "python",
	 "print(1)\n",
	 {"/usr/bin/python3", "-I", "-S", "-B", "-c", "print(1)", NULL}},
};

/* Read fd to EOF, discarding. */
static void
bench_drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0 || errno == EINTR)
		;
	close(fd);
}

/* Write a whole string to a file. */
static int
bench_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* The ns program's child: build the root and exec. No allocation, no stdio. */
static void __attribute__((noreturn)) bench_ns_child(int syncfd, int outfd, const char *const *argv)
{
	char c;

	if (read(syncfd, &c, 1) != 1)
		_exit(120);
	close(syncfd);
	/* Become the mapped root of the new user namespace (host uid BENCH_NS_UID). */
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		_exit(130);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(121);
	if (mount("bench", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m") < 0)
		_exit(122);
	if (mkdir("/tmp/usr", 0755) < 0 || mkdir("/tmp/proc", 0755) < 0 ||
	    mkdir("/tmp/tmp", 01777) < 0)
		_exit(123);
	if (symlink("usr/bin", "/tmp/bin") < 0 || symlink("usr/lib", "/tmp/lib") < 0 ||
	    symlink("usr/lib64", "/tmp/lib64") < 0)
		_exit(124);
	if (mount("/usr", "/tmp/usr", NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, "/tmp/usr", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		_exit(125);
	if (mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		_exit(126);
	if (chdir("/tmp") < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		_exit(127);
	if (dup2(outfd, 1) < 0 || dup2(outfd, 2) < 0)
		_exit(128);
	execv(argv[0], (char *const *)argv);
	_exit(129);
}

/* Fork (or clone into new namespaces) and exec argv; drain its output. */
static int
bench_spawn(const char *const *argv, bool ns, bool newnet)
{
	int out[2], sync[2] = {-1, -1};
	char path[64], map[64];
	pid_t pid;
	int r = 0;

	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	if (ns && pipe2(sync, O_CLOEXEC) < 0)
		return -errno;
	if (ns) {
		unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
				      CLONE_NEWUTS | (newnet ? CLONE_NEWNET : 0) | SIGCHLD;

		pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	} else {
		pid = fork();
	}
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(out[0]);
		if (ns) {
			close(sync[1]);
			bench_ns_child(sync[0], out[1], argv);
		}
		dup2(out[1], 1);
		dup2(out[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	if (ns) {
		close(sync[0]);
		snprintf(map, sizeof(map), "0 %d 1\n", BENCH_NS_UID);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
		r = bench_write_file(path, map);
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		if (r == 0)
			r = bench_write_file(path, "deny");
		snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
		if (r == 0)
			r = bench_write_file(path, map);
		if (r == 0 && write(sync[1], "x", 1) != 1)
			r = -EIO;
		close(sync[1]);
	}
	bench_drain(out[0]);
	if (bench_wait(pid) < 0 && r == 0)
		r = -EIO;
	return r;
}

/* One run of payload p through variant v. */
int
bench_one(struct bench *b, enum bench_variant v, size_t p)
{
	const struct bench_payload *pl = &bench_payloads[p];
	const char *av[32];
	size_t n = 0, i;
	int r;

	switch (v) {
	case V_LIB:
	case V_BASE: {
		struct airlock_result *res;

		r = airlock_run(v == V_LIB ? b->conn : b->base_conn, b->req[p], &res);
		if (r < 0)
			return r;
		r = airlock_result_outcome(res) == AIRLOCK_OUTCOME_EXITED &&
				    airlock_result_exit_code(res) == 0
			    ? 0
			    : -EIO;
		if (r < 0 && airlock_result_error(res) != NULL)
			fprintf(stderr, "run error: %s\n", airlock_result_error(res));
		airlock_result_free(res);
		return r;
	}
	case V_CLI:
		av[n++] = b->cli;
		av[n++] = "--socket";
		av[n++] = b->socket;
		av[n++] = "run";
		av[n++] = "--lang";
		av[n++] = pl->runtime;
		if (pl->code != NULL) {
			av[n++] = "-c";
			av[n++] = pl->code;
		} else {
			av[n++] = "--";
			for (i = 0; pl->argv[i] != NULL; i++)
				av[n++] = pl->argv[i];
		}
		av[n] = NULL;
		return bench_spawn(av, false, false);
	case V_BARE:
		return bench_spawn(pl->argv, false, false);
	case V_NS:
		return bench_spawn(pl->argv, true, b->newnet);
	case V_BWRAP: {
		static const char *const pre[] = {
			"--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc",
			"--unshare-uts",  "--ro-bind",	   "/usr",	    "/usr",
			"--symlink",	  "usr/bin",	   "/bin",	    "--symlink",
			"usr/lib",	  "/lib",	   "--symlink",	    "usr/lib64",
			"/lib64",	  "--tmpfs",	   "/tmp",	    "--proc",
			"/proc",	  "--dev",	   "/dev",	    "--"};

		av[n++] = b->bwrap;
		for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			av[n++] = pre[i];
		for (i = 0; pl->argv[i] != NULL; i++)
			av[n++] = pl->argv[i];
		av[n] = NULL;
		return bench_spawn(av, false, false);
	}
	default:
		return -EINVAL;
	}
}

/* The run request of every payload. */
void
bench_make_reqs(struct bench *b)
{
	size_t p, i;
	int r;

	for (p = 0; p < BENCH_NPAYLOADS; p++) {
		const struct bench_payload *pl = &bench_payloads[p];

		r = airlock_run_req_new(&b->req[p]);
		if (r == 0)
			r = airlock_run_req_set_runtime(b->req[p], pl->runtime);
		if (r == 0 && pl->code != NULL)
			r = airlock_run_req_set_code(b->req[p], pl->code, strlen(pl->code));
		for (i = 0; r == 0 && pl->code == NULL && pl->argv[i] != NULL; i++)
			r = airlock_run_req_add_arg(b->req[p], pl->argv[i]);
		for (i = 0; r == 0 && i < (size_t)b->nmounts; i++)
			r = airlock_run_req_add_mount(b->req[p], b->mounts[i]);
		if (r < 0)
			bench_die("run request", r);
	}
}
