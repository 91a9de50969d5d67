/*
 * fixture.h: start a real airlockd on a private socket in a temporary
 * directory, for integration tests. The binary comes from $AIRLOCKD (set by
 * meson). Tests run as root; the frontend runs as nobody.
 */
#ifndef AIRLOCK_TEST_FIXTURE_H
#define AIRLOCK_TEST_FIXTURE_H

#include <stdbool.h>
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

/* Count processes whose real uid is in [lo, hi] (leftover sandbox processes). */
int fixture_count_uid_procs(unsigned lo, unsigned hi);

#endif
