/*
 * gen_seeds.c: write a seed corpus of valid inputs for the fuzz harnesses,
 * made with the real encoders (common/proto.c, daemon/ipc/plan_build.c, common/bundle.c):
 *   gen_seeds DIR  ->  files in DIR/proto, DIR/plan, DIR/config and DIR/bundle
 * Only inline blobs: the harnesses decode without fds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan.h"
#include "bundle.h"
#include "proto.h"

static const char *gen_dir;

/* Write len bytes as DIR/sub/name. */
static void
gen_write(const char *sub, const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", gen_dir, sub);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", gen_dir, sub, name);
	f = fopen(path, "wbe");
	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Write one encoded message; it must have no fds. */
static void
gen_msg(const char *name, int r, struct proto_out *out)
{
	if (r < 0 || out->nfds != 0) {
		fprintf(stderr, "gen_seeds: encoding %s failed (%d, %zu fds)\n", name, r,
			out->nfds);
		exit(1);
	}
	gen_write("proto", name, out->buf, out->len);
	proto_out_free(out);
}

static void
gen_proto(void)
{
	static const char *argv[] = {"/bin/echo", "hello", "world"};
	static struct proto_env env[] = {{"A", "1"}, {"LONG_NAME", ""}};
	static const uint8_t code[] = "print('hi')\n", data[] = "a,b\n1,2\n";
	struct proto_file files[] = {
		{"data.csv", {data, sizeof(data) - 1, -1, true}},
		{"dir/x.txt", {data, 3, -1, true}},
	};
	struct proto_artifact arts[] = {
		{"out.txt", 3, false, {data, 3, -1, true}},
		{"big.bin", 1000000, true, {data, 8, -1, true}},
	};
	struct proto_profile profiles[] = {{.name = "default", .is_default = true},
					   {.name = "minimal", .no_file_write = true}};
	struct proto_session_open sopen = {.workspace_bytes = 1 << 20, .profile = "standard"};
	struct proto_hello hello = {.version = PROTO_VERSION, .peer = "gen_seeds"};
	struct proto_info info = {.daemon = "airlockd 0.1.0",
				  .version = 1,
				  .uid = 1000,
				  .runtimes = {"python", "sh", "exec"},
				  .nruntimes = 3,
				  .profiles = profiles,
				  .nprofiles = 2};
	struct proto_run run = {.runtime = "python",
				.code = {code, sizeof(code) - 1, -1, true},
				.argv = argv,
				.argc = 3,
				.env = env,
				.nenv = 2,
				.stdin_data = {data, 4, -1, true},
				.files = files,
				.nfiles = 2};
	struct proto_run exec = {.runtime = "exec", .argv = argv, .argc = 2, .profile = "minimal"};
	struct proto_result res = {
		.outcome = PROTO_OUTCOME_EXITED,
		.exit_code = 3,
		.wall_ms = 12,
		.cpu_ms = 5,
		.memory_peak_bytes = 1 << 20,
		.out = {{{data, 4, -1, true}, 4, false}, {{data, 2, -1, true}, 9, true}},
		.artifacts = arts,
		.nartifacts = 2};
	struct proto_result err = {.outcome = PROTO_OUTCOME_ERROR, .error = "mount: EPERM"};
	struct proto_cancel cancel = {.request = 7};
	struct proto_ps_entry ent[] = {{.run = 1,
					.uid = 0,
					.pid = 42,
					.runtime = "sh",
					.state = "running",
					.elapsed_ms = 10}};
	struct proto_ps ps = {.runs = ent, .nruns = 1};
	struct proto_out out;
	size_t i;

	for (i = 0; i < PROTO_LIMIT_COUNT_; i++) {
		info.defaults.v[i] = 1000 + i;
		info.ceilings.v[i] = 100000 + i;
		run.limits.v[i] = i % 3 ? 0 : 500 + i;
		profiles[0].limits.v[i] = profiles[1].limits.v[i] = 1000 + i;
		profiles[0].ceilings.v[i] = 100000 + i;
		profiles[1].ceilings.v[i] = 1000 + i;
	}
	gen_msg("hello", proto_encode_hello(1, PROTO_HELLO, &hello, &out), &out);
	gen_msg("hello_ok", proto_encode_hello(1, PROTO_HELLO_OK, &hello, &out), &out);
	gen_msg("ping", proto_encode_simple(2, PROTO_PING, &out), &out);
	gen_msg("pong", proto_encode_simple(2, PROTO_PONG, &out), &out);
	gen_msg("info", proto_encode_simple(3, PROTO_INFO, &out), &out);
	gen_msg("info_ok", proto_encode_info(3, &info, &out), &out);
	gen_msg("run", proto_encode_run(4, &run, &out), &out);
	gen_msg("run_exec", proto_encode_run(5, &exec, &out), &out);
	gen_msg("result", proto_encode_result(4, &res, &out), &out);
	gen_msg("result_error", proto_encode_result(5, &err, &out), &out);
	gen_msg("error", proto_encode_error(0, PROTO_ERR_BAD_REQUEST, "no id", &out), &out);
	gen_msg("cancel", proto_encode_cancel(6, &cancel, &out), &out);
	gen_msg("ps", proto_encode_simple(7, PROTO_PS, &out), &out);
	gen_msg("ps_ok", proto_encode_ps(7, &ps, &out), &out);
	gen_msg("session_open", proto_encode_session_open(8, &sopen, &out), &out);
}

static void
gen_plan(const char *name, const struct plan_input *in)
{
	struct stat st;
	char *buf;
	int fd;

	if (plan_build(in, &fd) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "gen_seeds: plan_build %s failed\n", name);
		exit(1);
	}
	buf = malloc((size_t)st.st_size);
	if (buf == NULL || pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		exit(1);
	gen_write("plan", name, buf, (size_t)st.st_size);
	free(buf);
	close(fd);
}

static void
gen_plans(void)
{
	static const char *argv[] = {"/usr/bin/python3", "-I", "/run/airlock/main.py", "x"};
	static const char *envp[] = {"PATH=/usr/bin:/bin", "HOME=/workspace", "A=b"};
	static const char *names[] = {"data.csv", "sub/dir/f"};
	static const void *datas[] = {"a,b\n", "xyz"};
	static const size_t lens[] = {4, 3};
	struct proto_limits lim = {
		{1000, 500, 1 << 26, 64, 256, 1 << 20, 1 << 20, 1 << 24, 1 << 24, 32, 1 << 20}};
	struct plan_input full = {.argv = argv,
				  .argc = 4,
				  .envp = envp,
				  .envc = 3,
				  .code_name = "main.py",
				  .code = "print(1)\n",
				  .code_len = 9,
				  .stdin_data = "in",
				  .stdin_len = 2,
				  .file_names = names,
				  .file_data = datas,
				  .file_len = lens,
				  .nfiles = 2,
				  .hostname = "airlock",
				  .limits = &lim};
	struct plan_input bare = {.argv = argv, .argc = 1, .hostname = "h", .limits = &lim};

	gen_plan("full", &full);
	gen_plan("bare", &bare);
}

static void
gen_configs(void)
{
	static const char *cfgs[][2] = {
		{"empty", ""},
		{"full",
		 "[daemon]\nsocket = /run/airlock/airlock.sock\nsocket_mode = 0660\n"
		 "max_runs = 8\nmax_runs_per_uid = 4\nmax_connections_per_uid = 16\n"
		 "[access]\nallow_users = nobody, daemon\nallow_groups = airlock\n"
		 "[sandbox]\nuid_base = 900000\nuid_count = 256\nhostname = sandbox\n"
		 "[limits]\nwall_ms = 10000\nwall_ms_max = 300000\nmemory_bytes = 256M\n"
		 "[runtime ruby]\nargv = /usr/bin/ruby {code} {args}\ncode_name = main.rb\n"},
		{"bad", "[nope]\nx\n=\n[runtime]\nargv=\n"},
		{"profiles", "[access]\ndefault_profile = small\n"
			     "[profile small]\nwall_ms = 2000\nmemory_bytes = 64M\nprocesses = 8\n"
			     "[profile standard]\nmemory_bytes = 1G\nallow_users = nobody\n"
			     "allow_groups = airlock, 100\n"
			     "[limits]\nmemory_bytes_max = 1G\n"},
		{"profile_bad", "[profile Big]\n[profile x]\nwall_ms_max = 1\n[access]\n"
				"default_profile = nope\n"},
	};
	size_t i;

	for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
		gen_write("config", cfgs[i][0], cfgs[i][1], strlen(cfgs[i][1]));
}

/* File bundles: an empty one, a few files in directories, one executable. */
static void
gen_bundles(void)
{
	static const struct bundle_file files[] = {
		{"a.txt", 0644, (const uint8_t *)"alpha", 5},
		{"d/e/b.bin", 0644, (const uint8_t *)"\0\1\2", 3},
		{"run.sh", 0755, (const uint8_t *)"#!/bin/sh\n", 10},
		{"empty", 0644, (const uint8_t *)"", 0},
	};
	const size_t counts[] = {0, 1, 4};
	char name[32];
	uint64_t len;
	void *map;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (bundle_encode_memfd(files, counts[i], 4096, 1 << 20, &fd, &len) < 0) {
			fprintf(stderr, "gen_seeds: bundle of %zu failed\n", counts[i]);
			exit(1);
		}
		map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			fprintf(stderr, "gen_seeds: mmap: %s\n", strerror(errno));
			exit(1);
		}
		snprintf(name, sizeof(name), "bundle-%zu", counts[i]);
		gen_write("bundle", name, map, (size_t)len);
		munmap(map, (size_t)len);
		close(fd);
	}
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	gen_dir = argv[1];
	mkdir(gen_dir, 0755);
	gen_proto();
	gen_plans();
	gen_configs();
	gen_bundles();
	return 0;
}
