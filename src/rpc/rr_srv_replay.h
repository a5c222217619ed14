/*
 * rr_srv_replay.h - replies kept for a resend with the same XID
 * (rr_srv_replay.c).  Every function wants srv->lock held.
 */
#ifndef RR_SRV_REPLAY_H
#define RR_SRV_REPLAY_H

#include "rpc/rr_srv_priv.h"

bool rr_replay_keep(struct rr_srv *srv, struct rr_sreq *req,
		    const struct rr_sreq_enc *enc, uint32_t *len);
struct rr_replay *rr_replay_take(struct rr_srv *srv, const struct rr_sreq *req);
void rr_replay_free(struct rr_srv *srv, struct rr_replay *p);
void rr_replay_free_all(struct rr_srv *srv);
/* The encoder that plays p's reply again, with the policy it had. */
void rr_replay_enc(struct rr_replay *p, struct rr_sreq_enc *enc);

#endif /* RR_SRV_REPLAY_H */
