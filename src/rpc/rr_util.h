/*
 * rr_util.h - the requester's general helpers (rr_util.c); rr_now_ms() is
 * in rr_call.h, for the glue too.
 */
#ifndef RR_UTIL_H
#define RR_UTIL_H

#include "rpc/rr_call.h"
#include "rpc/rr_res.h"

#endif /* RR_UTIL_H */
