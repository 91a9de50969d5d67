/* limit.c: the table of limits (limit.h). */
#include "limit.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

/* The supervisor counts time in nanoseconds: 10^12 ms (31 years) times 10^6
 * stays below 2^64; an "unlimited" 2^64-1 would wrap to almost nothing. */
#define LIMIT_MS_BOUND 1000000000000ULL

/*
 * The enforcement columns (limit.h). cpu_ms: the supervisor counts the whole
 * run (cpu.stat or /proc), RLIMIT_CPU is a per-process backstop; cpu.max is
 * a rate ([profile] cpu_percent), not this limit. memory_bytes: memory.max,
 * and RLIMIT_AS only without a memory cgroup (it counts address space).
 * processes: pids.max on cgroup v2, RLIMIT_NPROC on the run's own uid (a
 * backstop above it with v2: sandbox_nproc_limit). The sizes of the
 * workspace and /tmp are their tmpfs mounts' (ENOSPC), the artifacts and
 * output the supervisor's and the frontend's counts.
 */
const struct limit_row limit_table[PROTO_LIMIT_COUNT_] = {
	[PROTO_LIMIT_WALL_MS] = {"wall_ms", LIMIT_KIND_MS, 10000, 300000, LIMIT_MS_BOUND, "wall",
				 "wall-clock time", -1, NULL, PROTO_OUTCOME_WALL_LIMIT, false},
	[PROTO_LIMIT_CPU_MS] = {"cpu_ms", LIMIT_KIND_MS, 5000, 60000, LIMIT_MS_BOUND, "cpu",
				"CPU time", RLIMIT_CPU, NULL, PROTO_OUTCOME_CPU_LIMIT, true},
	[PROTO_LIMIT_MEMORY_BYTES] = {"memory_bytes", LIMIT_KIND_BYTES, 256ULL << 20, 4ULL << 30,
				      UINT64_MAX, "memory", "memory of the whole run", RLIMIT_AS,
				      "memory.max", PROTO_OUTCOME_MEMORY_LIMIT, true},
	[PROTO_LIMIT_PROCESSES] = {"processes", LIMIT_KIND_COUNT, 64, 1024, UINT64_MAX, "processes",
				   "processes and threads", RLIMIT_NPROC, "pids.max",
				   PROTO_OUTCOME_PROCESS_LIMIT, true},
	[PROTO_LIMIT_OPEN_FILES] = {"open_files", LIMIT_KIND_COUNT, 256, 4096, UINT64_MAX, NULL,
				    "open files per process", RLIMIT_NOFILE, NULL,
				    PROTO_OUTCOME_EXITED, true},
	[PROTO_LIMIT_FILE_SIZE_BYTES] = {"file_size_bytes", LIMIT_KIND_BYTES, 64ULL << 20,
					 1ULL << 30, UINT64_MAX, NULL,
					 "largest file the code may write", RLIMIT_FSIZE, NULL,
					 PROTO_OUTCOME_EXITED, true},
	[PROTO_LIMIT_OUTPUT_BYTES] = {"output_bytes", LIMIT_KIND_BYTES, 1ULL << 20, 64ULL << 20,
				      PROTO_BLOB_MAX, "output",
				      "output kept, per stream (stdout, stderr)", -1, NULL,
				      PROTO_OUTCOME_EXITED, false},
	[PROTO_LIMIT_WORKSPACE_BYTES] = {"workspace_bytes", LIMIT_KIND_BYTES, 64ULL << 20,
					 1ULL << 30, UINT64_MAX, NULL, "size of the workspace", -1,
					 NULL, PROTO_OUTCOME_EXITED, false},
	[PROTO_LIMIT_TMP_BYTES] = {"tmp_bytes", LIMIT_KIND_BYTES, 64ULL << 20, 1ULL << 30,
				   UINT64_MAX, NULL, "size of /tmp", -1, NULL, PROTO_OUTCOME_EXITED,
				   false},
	/* Each artifact may travel as an fd, PROTO_FDS_MAX a packet. */
	[PROTO_LIMIT_ARTIFACTS] = {"artifacts", LIMIT_KIND_COUNT, 32, 60, PROTO_ARTIFACTS_MAX, NULL,
				   "files returned", -1, NULL, PROTO_OUTCOME_EXITED, false},
	[PROTO_LIMIT_ARTIFACT_BYTES] = {"artifact_bytes", LIMIT_KIND_BYTES, 1ULL << 20, 64ULL << 20,
					PROTO_BLOB_MAX, NULL, "bytes returned, per file", -1, NULL,
					PROTO_OUTCOME_EXITED, false},
};

int
limit_from_name(const char *name, size_t len, enum proto_limit *ret)
{
	size_t i;

	for (i = 0; name != NULL && i < PROTO_LIMIT_COUNT_; i++)
		if (limit_table[i].name != NULL && strlen(limit_table[i].name) == len &&
		    memcmp(limit_table[i].name, name, len) == 0) {
			*ret = (enum proto_limit)i;
			return 0;
		}
	return -ENOENT;
}

const char *
limit_kind_metavar(enum limit_kind kind)
{
	switch (kind) {
	case LIMIT_KIND_MS:
		return "SECONDS";
	case LIMIT_KIND_BYTES:
		return "SIZE";
	default:
		return "N";
	}
}
