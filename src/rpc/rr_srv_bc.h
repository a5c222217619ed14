/*
 * rr_srv_bc.h - the responder's side of backward-direction Calls
 * (rr_srv_bc.c), as the other server files see it; rr_serve.h has the
 * callers' functions.  Every function wants srv->lock held.
 */
#ifndef RR_SRV_BC_H
#define RR_SRV_BC_H

#include "rpc/rr_srv_priv.h"

bool rr_srv_bc_reply(struct rr_srv *srv, struct rr_sreq *req);
void rr_srv_bc_lost(struct rr_srv *srv);
void rr_srv_bc_free(struct rr_srv *srv);

#endif /* RR_SRV_BC_H */
