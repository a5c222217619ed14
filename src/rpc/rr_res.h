/*
 * rr_res.h - filling a struct rr_result (rr_call.h): a status, an errno and
 * a message.  Header only: the requester and the responder's backward
 * direction both report results, and neither library links the other.
 */
#ifndef RR_RES_H
#define RR_RES_H

#include <stdarg.h>
#include <stdio.h>

#include "rpc/rr_call.h"

/* Set res to st, err and a message made from fmt. */
static inline void rr_res_set(struct rr_result *res, enum rr_status st, int err,
			      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline void rr_res_set(struct rr_result *res, enum rr_status st, int err,
			      const char *fmt, ...)
{
	va_list ap;

	res->status = st;
	res->err = err;
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
}

#endif /* RR_RES_H */
