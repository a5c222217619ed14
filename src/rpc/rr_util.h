/*
 * rr_util.h - the requester's general helpers (rr_util.c); rr_now_ms() is
 * in rr_call.h, for the glue too.
 */
#ifndef RR_UTIL_H
#define RR_UTIL_H

#include "rpc/rr_call.h"

/* Set res to st, err and a message made from fmt. */
void rr_res_set(struct rr_result *res, enum rr_status st, int err,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* RR_UTIL_H */
