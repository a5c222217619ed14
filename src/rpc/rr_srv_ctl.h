/*
 * rr_srv_ctl.h - control messages (properties, xcharext) and the control
 * queue (rr_srv_ctl.c).  Every function wants srv->lock held.
 */
#ifndef RR_SRV_CTL_H
#define RR_SRV_CTL_H

#include "rpc/rr_srv_priv.h"

bool rr_srv_take_control(struct rr_srv *srv, struct rr_sreq *req);
int rr_srv_send_ctl(struct rr_srv *srv, struct rr_sreq *req, struct rt_sbuf *b);
void rr_srv_send_connprop(struct rr_srv *srv);
void rr_srv_v2_limits(struct rr_srv *srv);
/* Send what waits in the control queue; true if a Send buffer was asked
 * for (which may have collected completions the caller must look at). */
bool rr_srv_flush_errors(struct rr_srv *srv);

#endif /* RR_SRV_CTL_H */
