/*
 * rr_util.c - the requester's general helpers, used by all its files and
 * calling none of them: the clock of deadlines (filling a call's result is
 * rr_res.h's, shared with the responder).
 */
#include "rpc/rr_clock.h"
#include "rpc/rr_util.h"

int64_t rr_now_ms(void)
{
	return rr_clock_ms();
}
