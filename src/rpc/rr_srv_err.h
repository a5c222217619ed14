/*
 * rr_srv_err.h - RDMA_ERROR answers (rr_srv_err.c).  The functions taking
 * srv want srv->lock held.
 */
#ifndef RR_SRV_ERR_H
#define RR_SRV_ERR_H

#include "rpc/rr_srv_priv.h"

/* Answer req with RDMA_ERROR code (and its two arguments), for cause. */
void rr_srv_set_error(struct rr_sreq *req, uint32_t code,
		      enum rr_srv_cause cause);
void rr_srv_set_error2(struct rr_sreq *req, uint32_t code, uint32_t arg1,
		       uint32_t arg2, enum rr_srv_cause cause);
/* A fault of ours: v2 SYSTEM, v1 ERR_CHUNK. */
void rr_srv_set_fault(struct rr_sreq *req, enum rr_srv_cause cause);
/* req waits in the control queue for a Send buffer. */
void rr_srv_queue_error(struct rr_srv *srv, struct rr_sreq *req);
/* Send req's RDMA_ERROR in b (consumed); 0 or a negative errno. */
int rr_srv_send_error(struct rr_srv *srv, struct rr_sreq *req,
		      struct rt_sbuf *b);

#endif /* RR_SRV_ERR_H */
