/*
 * fixture.h: start a real airlockd on a private socket in a temporary
 * directory, for integration tests. The binary comes from $AIRLOCKD (set by
 * meson). Tests run as root; the frontend runs as nobody.
 */
#ifndef AIRLOCK_TEST_FIXTURE_H
#define AIRLOCK_TEST_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct fixture {
	char dir[64];	  /* the temporary directory */
	char sock[128];	  /* dir/airlock.sock */
	char config[128]; /* dir/airlockd.conf */
	char log[128];	  /* dir/airlockd.log: the daemon's stderr */
	pid_t pid;
};

/*
 * Write config_text (may be NULL) as the config file and start the daemon;
 * return once the socket accepts connections. Returns 0 or -errno.
 */
int fixture_start(struct fixture *f, const char *config_text);

/* SIGTERM the daemon, wait for it, remove the directory. Returns its exit
 * status (0 when it stopped cleanly) or -errno. */
int fixture_stop(struct fixture *f);

/* Does the daemon's log (its stderr, the first MiB) contain s? */
bool fixture_log_has(const struct fixture *f, const char *s);

/* Replace the config file with text (mode 0644, root's), e.g. before a
 * SIGHUP. Returns 0 or -errno. */
int fixture_write_config(const struct fixture *f, const char *text);

/* Is the daemon process still alive? */
int fixture_alive(const struct fixture *f);

/*
 * The host uid range of this test's daemons, handed out by meson
 * (AIRLOCK_TEST_UID_BASE and AIRLOCK_TEST_UID_COUNT, from the table in
 * tests/meson.build) so that tests running at once never share a uid;
 * outside meson FIXTURE_UID_BASE_BY_HAND. Returns 0, or -EINVAL when the
 * environment holds something else than two numbers.
 */
int fixture_uid_range(unsigned *ret_base, unsigned *ret_count);

/* The range of a test started by hand (tests/lib/airlock_testlib.py too). */
#define FIXTURE_UID_BASE_BY_HAND 2000000U
#define FIXTURE_UID_COUNT_BY_HAND 2048U

/*
 * The uid bands (tests/meson.build): a build directory configured with
 * -Dtest_uid_offset=K runs every test daemon on uids moved by
 * K * FIXTURE_UID_BAND, so that two build directories with different offsets
 * run their suites at once without sharing a host uid. meson compiles the
 * shift in (FIXTURE_UID_SHIFT). Uids the tests write (the front-door configs'
 * uid_base, the ranges they count) are those of offset 0, all below
 * FIXTURE_UID_BAND (the test uid-ranges checks it).
 */
#ifndef FIXTURE_UID_BAND
#define FIXTURE_UID_BAND 2000000U
#endif

/* This build's shift: test_uid_offset * FIXTURE_UID_BAND. */
unsigned fixture_uid_shift(void);

/*
 * The uid of this build's band for uid: uid + shift when uid is below
 * FIXTURE_UID_BAND (an offset-0 uid a test wrote), uid itself otherwise (a
 * range meson handed out, already moved; the by-hand range).
 */
unsigned fixture_uid(unsigned uid);

/*
 * Copy config text in to buf with the value of every "uid_base = N" line
 * moved to fixture_uid(N) with this shift (not fixture_uid_shift(), so that
 * a unit test can try any). Returns 0, -E2BIG when buf is too small, or
 * -ERANGE when a moved value would leave 32 bits.
 */
int fixture_move_uid_bases(const char *in, unsigned shift, char *buf, size_t size);

/* Count processes whose real uid is in [fixture_uid(lo), fixture_uid(hi)]
 * (leftover sandbox processes). */
int fixture_count_uid_procs(unsigned lo, unsigned hi);

#endif
