/* run_outcome.c: a run's outcome from its facts (run_outcome.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "run_outcome.h"
#include "sandbox.h"

/* The outcome a wait status says by itself: exited or signaled. */
static void
run_outcome_status(int st, struct proto_result *res, char *err, size_t errlen)
{
	res->exit_code = 0;
	res->signal = 0;
	if (WIFEXITED(st)) {
		res->outcome = PROTO_OUTCOME_EXITED;
		res->exit_code = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		res->outcome = PROTO_OUTCOME_SIGNALED;
		res->signal = WTERMSIG(st);
	} else {
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen, "unexpected wait status %#x", (unsigned)st);
	}
}

void
run_outcome_decide(const struct run_facts *f, struct proto_result *res, char *err, size_t errlen)
{
	bool oom;

	err[0] = '\0';
	/* The memory figures: from the spawner's reap, or read ahead of it. */
	if (f->spawn_done) {
		res->memory_peak_bytes = f->done_ev.memory_peak;
		oom = f->done_ev.oom != 0;
	} else if (f->mem_read) {
		res->memory_peak_bytes = f->mem_peak;
		oom = f->mem_oom;
	} else {
		res->memory_peak_bytes = 0;
		oom = false;
	}
	if (f->prep_error[0] != '\0') {
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen, "%s", f->prep_error);
	} else if (f->spawn_failed) {
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen, "sandbox could not start: %s: %s", f->spawn_ev.step,
			 strerror(-f->spawn_ev.err));
	} else if (f->setup_failed) {
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen, "sandbox set-up failed at step %s: %s",
			 sandbox_step_name(f->fail_step), strerror(-f->fail_err));
	} else if (f->lifeline_bad) {
		/* Before its report: a supervisor that broke the protocol is
		 * not believed on what the code did. */
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen, "sandbox error: %s", f->lifeline_why);
	} else if (f->cancelled && !f->sup_exit) {
		res->outcome = PROTO_OUTCOME_CANCELLED;
	} else if (f->sup_exit) {
		res->wall_ms = f->exit_msg.wall_ns / 1000000ULL;
		res->cpu_ms = f->exit_msg.cpu_ns / 1000000ULL;
		if (f->exit_msg.reason == SUP_REASON_WALL)
			res->outcome = PROTO_OUTCOME_WALL_LIMIT;
		else if (f->exit_msg.reason == SUP_REASON_CPU)
			res->outcome = PROTO_OUTCOME_CPU_LIMIT;
		else if (oom)
			res->outcome = PROTO_OUTCOME_MEMORY_LIMIT;
		else if (f->exit_msg.reason == SUP_REASON_PROCS)
			res->outcome = PROTO_OUTCOME_PROCESS_LIMIT;
		else
			run_outcome_status(f->exit_msg.status, res, err, errlen);
	} else if (f->backstop_fired) {
		res->outcome = PROTO_OUTCOME_WALL_LIMIT;
	} else if (oom) {
		res->outcome = PROTO_OUTCOME_MEMORY_LIMIT;
	} else {
		res->outcome = PROTO_OUTCOME_ERROR;
		snprintf(err, errlen,
			 "the sandbox's supervisor ended without a report (status %#x)",
			 (unsigned)f->done_ev.status);
	}
}

void
run_outcome_for_client(const struct run_facts *f, bool knows_process_limit,
		       struct proto_result *res, char *err, size_t errlen)
{
	if (res->outcome == PROTO_OUTCOME_PROCESS_LIMIT && !knows_process_limit)
		run_outcome_status(f->exit_msg.status, res, err, errlen);
}

bool
run_outcome_reaped(const struct run_facts *f)
{
	return f->spawn_done || (f->spawn_failed && f->spawn_ev.pid == 0);
}

bool
run_outcome_retry_fresh(const struct run_facts *f)
{
	/* Never after SUP_EXIT: only a report that the code did not run
	 * lets the code run again. */
	return (f->setup_failed || f->spawn_failed) && !f->sup_exit && f->prep_error[0] == '\0' &&
	       !f->cancelled && !f->backstop_fired && !f->lifeline_bad;
}

bool
run_outcome_may_answer_early(const struct run_facts *f, bool outs_eof, bool lifeline_open)
{
	int st = f->exit_msg.status;

	/*
	 * The supervisor's last word came and every process of the run is
	 * gone (it killed and reaped them before SUP_EXIT): the answer need
	 * not wait for the namespaces' teardown and the reap. Not after a
	 * SIGKILL: the oom killer signals its victim before it counts the
	 * kill in the cgroup, so the count may still be 0 here; the reap
	 * comes after it for sure (6d76a40).
	 */
	if (!outs_eof || lifeline_open || run_outcome_reaped(f) || !f->sup_exit)
		return false;
	return !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

bool
run_outcome_memory_usable(int read_rc, uint64_t peak)
{
	/* A zero peak is a cgroup whose counters did not catch up (54f7d39). */
	return read_rc == 0 && peak != 0;
}
