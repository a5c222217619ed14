/*
 * rr_srv_recv.h - from a Receive to a ready request (rr_srv_recv.c).
 * Every function wants srv->lock held.
 */
#ifndef RR_SRV_RECV_H
#define RR_SRV_RECV_H

#include "rpc/rr_srv_priv.h"

void rr_srv_on_recv(struct rr_srv *srv, const struct rt_event *ev);
void rr_srv_on_read_done(struct rr_srv *srv, struct rr_sreq *req, int status);
void rr_srv_start_pulls(struct rr_srv *srv);

#endif /* RR_SRV_RECV_H */
