/* limit.h: every limit of a run as one row of one table.
 *
 * From the table follow the names on the wire (proto_limit_name(), the
 * decoder and encoder of a limits map), airlockd.conf's [limits] keys
 * (NAME, NAME_max), their built-in defaults and ceilings and the largest
 * value a config may give, how the airlock command parses a value and which
 * option sets it, and the help text; and its enforcement columns: the
 * rlimit the code's process gets (supervisor/sandbox_code.c, setrlimit, and
 * for a pre-started interpreter sandbox_prestart.c, prlimit), the cgroup
 * file the spawner writes, the outcome that ends a run at it, and whether a
 * pre-started interpreter can take a run with it (frontend/run_pool.c). A
 * new limit is a new value of enum proto_limit, one row here, and its
 * enforcement; tests/rules checks that every value has a complete row and
 * that the docs name it. */
#ifndef AIRLOCK_LIMIT_H
#define AIRLOCK_LIMIT_H

#include "proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a limit counts, which decides how it is written and parsed. */
enum limit_kind {
	LIMIT_KIND_COUNT = 1, /* a plain number */
	LIMIT_KIND_BYTES,     /* a size: the config takes K/M/G suffixes, the command too */
	LIMIT_KIND_MS,	      /* milliseconds: the command takes seconds (1.5) */
};

struct limit_row {
	const char *name;     /* on the wire, in airlock info, in [limits] */
	enum limit_kind kind; /* 0 only in a missing row */
	uint64_t def;	      /* built-in default */
	uint64_t ceiling;     /* built-in ceiling ([limits] NAME_max) */
	uint64_t bound;	      /* the most a config may set (what the protocol carries) */
	const char *option;   /* the airlock command's option (without "--"), or NULL:
			       * only --limit NAME=VALUE sets it */
	const char *doc;      /* what it limits (no unit: the kind says it), for help */
	/* Enforcement. rlimit: the code's RLIMIT_* (a backstop where a
	 * cgroup counts too: sandbox_rlimit()), or -1. */
	int rlimit;
	/* The cgroup v2 file of the code's cgroup that holds it (cgroup.c),
	 * or NULL: counted by the supervisor, the frontend or an rlimit. */
	const char *cgroup_file;
	/* The outcome of a run ended at it; PROTO_OUTCOME_EXITED: reaching
	 * it ends nothing by itself (a refused call, a cut stream). */
	enum proto_outcome outcome;
	/* A pre-started interpreter (started with the ceilings) has it
	 * lowered to the run's at the hand-off (prlimit), so a run asking
	 * more than the ceiling cannot take one (run_pool_eligible). */
	bool prestart_lower;
};

/* The table, indexed by enum proto_limit. */
extern const struct limit_row limit_table[PROTO_LIMIT_COUNT_];

/* Look a limit up by its name (len bytes, not NUL-terminated). 0 or -ENOENT. */
int limit_from_name(const char *name, size_t len, enum proto_limit *ret);

/* How a value of this kind is written on a command line (SECONDS, SIZE, N). */
const char *limit_kind_metavar(enum limit_kind kind);

#endif
