/*
 * rr_spin.h - how long a waiting thread polls the completion queue before
 * it sleeps on the connection's fd (event mode): the
 * budget of the requester's leader (rr_wait.c) and of the responder after
 * a call (rr_serve.c).
 *
 * Sleeping costs a wake-up and the system calls around it (make profile:
 * the server's svc_run thread spent 20 % of its samples in the switch back
 * from poll()); polling costs the processor for as long as it lasts.  The
 * budget adapts as the kernel's halt polling does: a wait that polling
 * ended is left alone; a wait that ended while asleep, but within the most
 * polling allowed, doubles the budget (polling longer would have caught
 * it); a longer one halves it, down to none.  So a peer that answers
 * within the budget is polled for, and a slow or idle one costs nothing
 * after a few waits.
 *
 * Header only: the requester's and the responder's libraries both use it.
 */
#ifndef RR_SPIN_H
#define RR_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc/rr_clock.h"

/* The smallest budget worth having; below it, none. */
#define RR_SPIN_START_US 10
/* Polls between two clock reads.  A clock read may be a system call, and
 * an expensive one: under qemu TCG the clock source is the emulated HPET,
 * whose read_hpet took 13 % of the server's samples with 16 here (make
 * profile); a poll of an empty CQ costs well under a microsecond, so 64
 * keeps a budget's overshoot in the tens of microseconds. */
#define RR_SPIN_CLOCK_EVERY 64

struct rr_spin {
	uint32_t max_us; /* the most polling allowed (0: never poll) */
	uint32_t cur_us; /* the current budget, within 0..max_us */
};

static inline void rr_spin_init(struct rr_spin *spin, uint32_t max_us)
{
	spin->max_us = max_us;
	spin->cur_us = max_us;
}

/* A wait began at start (rr_clock_us) and ended at now: polled says
 * whether polling ended it. */
static inline void rr_spin_adapt(struct rr_spin *spin, bool polled,
				 int64_t start, int64_t now)
{
	uint32_t grown;

	if (polled || !spin->max_us)
		return;
	if (now - start <= (int64_t)spin->max_us) {
		grown = spin->cur_us * 2;
		if (grown < RR_SPIN_START_US)
			grown = RR_SPIN_START_US;
		spin->cur_us = grown < spin->max_us ? grown : spin->max_us;
		return;
	}
	spin->cur_us /= 2;
	if (spin->cur_us < RR_SPIN_START_US)
		spin->cur_us = 0;
}

#endif /* RR_SPIN_H */
