/* test_ledger.c: unit tests of daemon/frontend/ledger.c, the per-uid
 * ledger: what each decision charges, the start turning a queue place into
 * a run slot, and the one unwind giving back exactly what was taken. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "admit.h"
#include "ledger.h"

static void
facts(struct admit_facts *f, enum admit_kind kind, enum admit_phase phase, uid_t uid)
{
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->phase = phase;
	f->uid = uid;
}

static void
decision(struct admit_decision *d, enum admit_verdict v)
{
	memset(d, 0, sizeof(*d));
	d->verdict = v;
}

static uint32_t
count(const struct ledger *l, uid_t uid, enum ledger_count c, bool all)
{
	struct ledger_uid h, a;

	ledger_get(l, uid, &h, &a);
	return all ? a.n[c] : h.n[c];
}

/* A run: a queue place at the request, a run slot at its start, nothing after. */
static void
test_run_queue_then_start(void **state)
{
	struct ledger l;
	struct ledger_ticket t = {0};
	struct admit_facts f;
	struct admit_decision d;

	(void)state;
	ledger_init(&l);
	facts(&f, ADMIT_RUN, ADMIT_AT_REQUEST, 1000);
	decision(&d, ADMIT_QUEUE);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), 0);
	assert_true(t.live);
	assert_int_equal(count(&l, 1000, LEDGER_QUEUED, false), 1);
	ledger_add(&t, LEDGER_HELD, 0, 4096, 0); /* the plan's pages */
	f.phase = ADMIT_AT_START;
	decision(&d, ADMIT_NOW);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), 0);
	assert_int_equal(count(&l, 1000, LEDGER_QUEUED, false), 0);
	assert_int_equal(count(&l, 1000, LEDGER_RUNNING, false), 1);
	assert_int_equal(count(&l, 1000, LEDGER_RUNNING, true), 1);
	/* A second start of the same ticket has no queue place to turn. */
	assert_int_equal(ledger_charge(&l, &f, &d, &t), -EINVAL);
	ledger_release(&t);
	assert_false(t.live);
	assert_int_equal(l.nrecs, 0);
	assert_int_equal(l.all.n[LEDGER_RUNNING], 0);
	assert_int_equal(l.all.bytes, 0);
	ledger_release(&t); /* twice: nothing */
	ledger_release(NULL);
	ledger_free(&l);
}

/* An interpreter's start gives up its queue place and takes no run slot. */
static void
test_interp_takes_no_slot(void **state)
{
	struct ledger l;
	struct ledger_ticket t = {0};
	struct admit_facts f;
	struct admit_decision d;

	(void)state;
	ledger_init(&l);
	facts(&f, ADMIT_INTERP_START, ADMIT_AT_REQUEST, 1000);
	decision(&d, ADMIT_QUEUE);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), 0);
	f.phase = ADMIT_AT_START;
	decision(&d, ADMIT_NOW);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), 0);
	assert_int_equal(count(&l, 1000, LEDGER_RUNNING, false), 0);
	assert_int_equal(count(&l, 1000, LEDGER_QUEUED, false), 0);
	ledger_release(&t);
	ledger_free(&l);
}

/* Nothing is charged for a refusal, or for a start that must wait. */
static void
test_nothing_for_refusal(void **state)
{
	struct ledger l;
	struct ledger_ticket t = {0}, q = {0};
	struct admit_facts f;
	struct admit_decision d;

	(void)state;
	ledger_init(&l);
	facts(&f, ADMIT_SESSION_OPEN, ADMIT_AT_REQUEST, 1000);
	decision(&d, ADMIT_REFUSE);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), -EPERM);
	assert_false(t.live);
	assert_int_equal(l.nrecs, 0);
	facts(&f, ADMIT_RUN, ADMIT_AT_REQUEST, 1000);
	decision(&d, ADMIT_QUEUE);
	assert_int_equal(ledger_charge(&l, &f, &d, &q), 0);
	f.phase = ADMIT_AT_START;
	assert_int_equal(ledger_charge(&l, &f, &d, &q), -EPERM); /* still waits */
	assert_int_equal(count(&l, 1000, LEDGER_QUEUED, false), 1);
	/* A fresh ticket cannot start, nor a live one be charged again at a request. */
	decision(&d, ADMIT_NOW);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), -EINVAL);
	f.phase = ADMIT_AT_REQUEST;
	decision(&d, ADMIT_QUEUE);
	assert_int_equal(ledger_charge(&l, &f, &d, &q), -EINVAL);
	/* Nor a ticket of another uid start. */
	f.phase = ADMIT_AT_START;
	f.uid = 1001;
	decision(&d, ADMIT_NOW);
	assert_int_equal(ledger_charge(&l, &f, &d, &q), -EINVAL);
	assert_int_equal(count(&l, 1000, LEDGER_QUEUED, false), 1);
	ledger_release(&q);
	assert_int_equal(l.nrecs, 0);
	ledger_free(&l);
}

/* Sessions, interpreters and connections, per uid and in all. */
static void
test_counts_per_uid(void **state)
{
	struct ledger l;
	struct ledger_ticket s1 = {0}, s2 = {0}, c1 = {0};
	struct admit_facts f;
	struct admit_decision d;

	(void)state;
	ledger_init(&l);
	decision(&d, ADMIT_NOW);
	facts(&f, ADMIT_SESSION_OPEN, ADMIT_AT_REQUEST, 1000);
	f.runtime = "python";
	assert_int_equal(ledger_charge(&l, &f, &d, &s1), 0);
	facts(&f, ADMIT_SESSION_OPEN, ADMIT_AT_REQUEST, 1001);
	assert_int_equal(ledger_charge(&l, &f, &d, &s2), 0);
	/* A connection over its limit waits for its hello: counted already. */
	decision(&d, ADMIT_QUEUE);
	facts(&f, ADMIT_CONNECTION, ADMIT_AT_REQUEST, 1000);
	assert_int_equal(ledger_charge(&l, &f, &d, &c1), 0);
	assert_int_equal(count(&l, 1000, LEDGER_SESSIONS, false), 1);
	assert_int_equal(count(&l, 1000, LEDGER_INTERPRETERS, false), 1);
	assert_int_equal(count(&l, 1001, LEDGER_INTERPRETERS, false), 0);
	assert_int_equal(count(&l, 1001, LEDGER_SESSIONS, true), 2);
	assert_int_equal(count(&l, 1000, LEDGER_CONNECTIONS, false), 1);
	assert_int_equal(count(&l, 1002, LEDGER_SESSIONS, false), 0);
	ledger_release(&s1);
	assert_int_equal(count(&l, 1000, LEDGER_SESSIONS, false), 0);
	assert_int_equal(count(&l, 1000, LEDGER_CONNECTIONS, false), 1);
	assert_int_equal(count(&l, 1000, LEDGER_INTERPRETERS, true), 0);
	ledger_release(&c1);
	ledger_release(&s2);
	assert_int_equal(l.nrecs, 0);
	ledger_free(&l);
}

/* Many uids (the array grows), released out of order: the others' figures stay. */
static void
test_many_uids(void **state)
{
	struct ledger l;
	struct ledger_ticket t[20];
	struct admit_facts f;
	struct admit_decision d;
	uid_t u;

	(void)state;
	ledger_init(&l);
	memset(t, 0, sizeof(t));
	decision(&d, ADMIT_NOW);
	for (u = 0; u < 20; u++) {
		facts(&f, ADMIT_SESSION_OPEN, ADMIT_AT_REQUEST, 1000 + u);
		assert_int_equal(ledger_charge(&l, &f, &d, &t[u]), 0);
		ledger_add(&t[u], LEDGER_HELD, 0, 100 + u, 0);
	}
	for (u = 0; u < 20; u += 2)
		ledger_release(&t[u]);
	assert_int_equal(l.nrecs, 10);
	assert_int_equal(l.all.n[LEDGER_SESSIONS], 10);
	for (u = 0; u < 20; u++) {
		struct ledger_uid h;

		ledger_get(&l, 1000 + u, &h, NULL);
		assert_int_equal(h.n[LEDGER_SESSIONS], u % 2);
		assert_int_equal(h.bytes, u % 2 ? 100 + u : 0);
	}
	for (u = 1; u < 20; u += 2)
		ledger_release(&t[u]);
	assert_int_equal(l.nrecs, 0);
	assert_int_equal(l.all.bytes, 0);
	ledger_free(&l);
}

/* Bytes, fds and memfds added to a ticket and given back in parts. */
static void
test_add_sub(void **state)
{
	struct ledger l;
	struct ledger_ticket t = {0};
	struct admit_facts f;
	struct admit_decision d;
	struct ledger_uid h;

	(void)state;
	ledger_init(&l);
	facts(&f, ADMIT_FILE_OP, ADMIT_AT_REQUEST, 1000);
	decision(&d, ADMIT_NOW);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), 0);
	assert_int_equal(l.nrecs, 0); /* holds nothing yet */
	ledger_add(&t, LEDGER_HELD, 1, 100000, 2);
	ledger_get(&l, 1000, &h, NULL);
	assert_int_equal(h.bytes, 100000);
	assert_int_equal(h.fds, 2);
	assert_int_equal(h.n[LEDGER_HELD], 1);
	ledger_sub(&t, LEDGER_HELD, 0, 0, 2); /* the reply read */
	ledger_get(&l, 1000, &h, NULL);
	assert_int_equal(h.fds, 0);
	assert_int_equal(h.bytes, 100000);
	ledger_release(&t); /* the memfd let go */
	ledger_get(&l, 1000, &h, NULL);
	assert_int_equal(h.bytes, 0);
	assert_int_equal(h.n[LEDGER_HELD], 0);
	assert_int_equal(l.nrecs, 0);
	ledger_free(&l);
}

/* Giving back more than a ticket holds is a broken invariant: fatal. */
static void
test_sub_too_much_fatal(void **state)
{
	struct ledger l;
	struct ledger_ticket t = {0};
	struct admit_facts f;
	struct admit_decision d;
	int status;
	pid_t pid;

	(void)state;
	ledger_init(&l);
	facts(&f, ADMIT_FILE_OP, ADMIT_AT_REQUEST, 1000);
	decision(&d, ADMIT_NOW);
	assert_int_equal(ledger_charge(&l, &f, &d, &t), 0);
	ledger_add(&t, LEDGER_HELD, 0, 10, 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ledger_sub(&t, LEDGER_HELD, 0, 11, 0);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	ledger_release(&t);
	ledger_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_queue_then_start),
		cmocka_unit_test(test_interp_takes_no_slot),
		cmocka_unit_test(test_nothing_for_refusal),
		cmocka_unit_test(test_counts_per_uid),
		cmocka_unit_test(test_many_uids),
		cmocka_unit_test(test_add_sub),
		cmocka_unit_test(test_sub_too_much_fatal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
