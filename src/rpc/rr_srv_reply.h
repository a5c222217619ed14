/*
 * rr_srv_reply.h - from an RPC reply to the wire (rr_srv_reply.c).  Every
 * function wants srv->lock held.
 */
#ifndef RR_SRV_REPLY_H
#define RR_SRV_REPLY_H

#include "rpc/rr_srv_priv.h"

int rr_srv_reply(struct rr_srv *srv, struct rr_sreq *req,
		 const struct rr_sreq_enc *enc);
void rr_srv_on_send_done(struct rr_srv *srv, struct rr_sreq *req);

#endif /* RR_SRV_REPLY_H */
