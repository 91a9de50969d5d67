/*
 * run_outcome.h: what a run's result says, decided from the facts gathered
 * while it ran. Pure functions: no clock, no fd, no daemon; the unit test
 * drives them by a table (tests/daemon/test_run_outcome.c).
 */
#ifndef AIRLOCKD_RUN_OUTCOME_H
#define AIRLOCKD_RUN_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "spawn_msg.h"

/* Everything heard about a run, from the frontend, the spawner and the
 * supervisor. Each fact is set once (the first word counts). */
struct run_facts {
	char prep_error[PROTO_NAME_MAX + 64]; /* failed before its sandbox ran */
	bool spawn_failed;		      /* SPAWN_FAILED, in spawn_ev */
	struct spawn_ev spawn_ev;
	bool spawn_done; /* SPAWN_DONE (the reap), in done_ev */
	struct spawn_ev done_ev;
	bool setup_failed; /* SUP_SETUP_FAILED; fail_err is -errno */
	int fail_step, fail_err;
	bool sup_exit; /* SUP_EXIT, in exit_msg */
	struct sup_msg exit_msg;
	/* The supervisor broke the lifeline's protocol (lifeline.c): a type
	 * not in its table, a wrong size or fd count, a message its run cannot
	 * have, anything after SUP_EXIT; lifeline_why says which. */
	bool lifeline_bad;
	char lifeline_why[96];
	bool cancelled; /* by its client, its session's end, the stop, or the client's leaving */
	bool backstop_fired; /* the frontend's own wall clock ran out */
	bool mem_read;	     /* mem_peak, mem_oom were read before the reap */
	bool mem_oom;
	uint64_t mem_peak;
};

/*
 * Fill res->outcome, exit_code, signal, wall_ms, cpu_ms and
 * memory_peak_bytes from f, and err (errlen bytes; "" when none) with the
 * error text. The order of the tests is the rule: a failure before the code
 * ran, then the supervisor's report, then what the frontend saw alone.
 */
void run_outcome_decide(const struct run_facts *f, struct proto_result *res, char *err,
			size_t errlen);

/*
 * What a client that did not name process_limit in its hello is told
 * instead (it would refuse the outcome): what the code's status says, the
 * supervisor's SIGKILL. Anything else is left as it is.
 */
void run_outcome_for_client(const struct run_facts *f, bool knows_process_limit,
			    struct proto_result *res, char *err, size_t errlen);

/* Is the run's sandbox reaped, or known never to have had a process? */
bool run_outcome_reaped(const struct run_facts *f);

/*
 * Did the run's sandbox end before any of its code ran, by the sandbox's
 * own word (its set-up failed, or the spawner could not hand it the run),
 * with nobody having given up on the run? For a pre-started interpreter
 * that is one found gone or broken at its hand-off: the run may be run
 * again in a fresh sandbox (docs/design-interpreters.md §1).
 */
bool run_outcome_retry_fresh(const struct run_facts *f);

/*
 * May the run be answered before its reap, given that both outputs are at
 * EOF and the lifeline is closed (or not)? Only if the supervisor's last
 * word came and did not report a SIGKILL; the memory figures must then be
 * readable too (run_outcome_memory_usable).
 */
bool run_outcome_may_answer_early(const struct run_facts *f, bool outs_eof, bool lifeline_open);

/*
 * Are memory figures read before the reap (read_rc: 0 or -errno) worth
 * answering with? A run that ran has a peak: 0 means not counted yet.
 */
bool run_outcome_memory_usable(int read_rc, uint64_t peak);

#endif
