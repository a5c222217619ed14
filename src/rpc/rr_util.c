/*
 * rr_util.c - the requester's general helpers, used by all its files and
 * calling none of them: the clock of deadlines (filling a call's result is
 * rr_res.h's, shared with the responder).
 */
#include <stdatomic.h>
#include <time.h>

#include "rpc/rr_clock.h"
#include "rpc/rr_util.h"

/*
 * Deadlines are kept on the coarse clock: a call reads the clock several
 * times (its deadline, each check of it), and where the clock source is
 * not one user space can read - qemu's emulated HPET in our test VM - a
 * read of CLOCK_MONOTONIC is a system call and an emulated device access,
 * 0.8 to 2 us each there, while CLOCK_MONOTONIC_COARSE stays in the vDSO
 * (0.04 us).  The coarse clock lags by up to one tick, so a deadline gets
 * a tick more (rr_deadline_ms()) and never comes early.
 */
int64_t rr_now_ms(void)
{
	return rr_clock_coarse_ms();
}

int64_t rr_tick_ms(void)
{
	static atomic_int tick = -1; /* the same for every thread */
	struct timespec res;
	int ms = atomic_load_explicit(&tick, memory_order_relaxed);

	if (ms < 0) {
		if (clock_getres(CLOCK_MONOTONIC_COARSE, &res)) {
			res.tv_sec = 0;
			res.tv_nsec = 10000000; /* HZ=100, the coarsest */
		}
		ms = (int)(res.tv_sec * 1000 +
			   (res.tv_nsec + 999999) / 1000000);
		atomic_store_explicit(&tick, ms, memory_order_relaxed);
	}
	return ms;
}

int64_t rr_deadline_ms(int64_t timeout_ms)
{
	return rr_now_ms() + timeout_ms + rr_tick_ms();
}
