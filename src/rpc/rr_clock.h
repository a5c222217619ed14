/*
 * rr_clock.h - the RPC layer's one clock: CLOCK_MONOTONIC in milliseconds
 * (deadlines, timeouts, record lifetimes) and microseconds (polling
 * budgets, rr_spin.h).  Header only: the requester's and the responder's
 * libraries both read it and link nothing of each other.
 */
#ifndef RR_CLOCK_H
#define RR_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t rr_clock_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline int64_t rr_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* RR_CLOCK_H */
