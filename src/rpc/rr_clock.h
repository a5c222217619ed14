/*
 * rr_clock.h - the RPC layer's clocks: CLOCK_MONOTONIC in milliseconds
 * (the responder's deadlines, timeouts, record lifetimes) and microseconds
 * (polling budgets, rr_spin.h), and CLOCK_MONOTONIC_COARSE in milliseconds
 * (the requester's deadlines, rr_util.c).  Header only: the requester's and
 * the responder's libraries both read it and link nothing of each other.
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

static inline int64_t rr_clock_read_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t rr_clock_ms(void)
{
	return rr_clock_read_ms(CLOCK_MONOTONIC);
}

static inline int64_t rr_clock_coarse_ms(void)
{
	return rr_clock_read_ms(CLOCK_MONOTONIC_COARSE);
}

#endif /* RR_CLOCK_H */
