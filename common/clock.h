/* clock.h: the monotonic clock in milliseconds, for timeouts and idle checks. */
#ifndef AIRLOCK_CLOCK_H
#define AIRLOCK_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds of CLOCK_MONOTONIC (never jumps with the wall clock). */
static inline uint64_t
clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Milliseconds of CLOCK_REALTIME: for what must count the time the daemon
 * was down too (a session's lease, kept across a restart). */
static inline uint64_t
clock_realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec > 0 ? (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 : 0;
}

/* Whole milliseconds from instant a to instant b; 0 if b is not later. */
static inline uint64_t
clock_ms_between(const struct timespec *a, const struct timespec *b)
{
	int64_t ms = (int64_t)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;

	return ms > 0 ? (uint64_t)ms : 0;
}

/* Whole milliseconds of CLOCK_MONOTONIC since t0. */
static inline uint64_t
clock_ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return clock_ms_between(t0, &now);
}

#endif
