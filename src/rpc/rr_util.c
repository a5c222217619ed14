/*
 * rr_util.c - the requester's general helpers, used by all its files and
 * calling none of them: the clock of deadlines, filling a call's result.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "rpc/rr_clock.h"
#include "rpc/rr_util.h"

int64_t rr_now_ms(void)
{
	return rr_clock_ms();
}

void rr_res_set(struct rr_result *res, enum rr_status st, int err,
		const char *fmt, ...)
{
	va_list ap;

	res->status = st;
	res->err = err;
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
}
