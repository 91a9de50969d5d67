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

#endif
