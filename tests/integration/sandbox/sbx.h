/*
 * sbx.h: helpers shared by the sandboxed-run integration tests: one real
 * airlockd per test executable on its own host uid range, a connection to it,
 * and short ways to build a request, run it and read the result.
 */
#ifndef AIRLOCK_TEST_SBX_H
#define AIRLOCK_TEST_SBX_H

#include <stddef.h>
#include <stdint.h>

#include "airlock.h"
#include "fixture.h"

struct sbx {
	struct fixture f;
	struct airlock_conn *conn;
	unsigned uid_base; /* the range meson handed the test (fixture_uid_range()) */
	unsigned uid_count;
};

/* Start a daemon on the test's uid range (fixture_uid_range()) with
 * extra_config (may be NULL) and connect to it. Returns 0 or -errno. */
int sbx_start(struct sbx *s, const char *extra_config);

/* The same with nslots uid slots (uid_count 2 * nslots, at the start of
 * the test's range; 0: the whole range). */
int sbx_start_slots(struct sbx *s, unsigned nslots, const char *extra_config);

/* Disconnect, stop the daemon, print its log when it did not stop cleanly. */
int sbx_stop(struct sbx *s);

/* A request for runtime with code (NUL-terminated; may be NULL). Aborts the
 * test on failure. */
struct airlock_run_req *sbx_req(const char *runtime, const char *code);

/* Set a limit on req; asserts success. */
void sbx_limit(struct airlock_run_req *req, enum airlock_limit limit, uint64_t value);

/* Run req on s->conn and return the result; asserts that a result came back
 * (prints the daemon's error and log otherwise). Frees req. */
struct airlock_result *sbx_run(struct sbx *s, struct airlock_run_req *req);

/* stdout / stderr / artifact i as a fresh NUL-terminated string (free()). */
char *sbx_stdout(const struct airlock_result *res);
char *sbx_stderr(const struct airlock_result *res);
char *sbx_artifact(const struct airlock_result *res, size_t i);

/* The index of the artifact called name, or -1. */
long sbx_artifact_find(const struct airlock_result *res, const char *name);

/* Print outcome, status, stdout and stderr of res (for failing tests). */
void sbx_dump(const struct airlock_result *res);

/* Assert outcome EXITED with exit code 0, printing the result otherwise. */
void sbx_assert_ok(const struct airlock_result *res);

/* Processes left in s's uid range, after waiting up to timeout_ms for
 * them to go away. */
int sbx_leftover(const struct sbx *s, int timeout_ms);

/* Milliseconds on the monotonic clock. */
uint64_t sbx_now_ms(void);

#endif
