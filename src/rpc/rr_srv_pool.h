/*
 * rr_srv_pool.h - the responder's request objects, their queues and cookies
 * (rr_srv_pool.c).  Every function wants srv->lock held.
 */
#ifndef RR_SRV_POOL_H
#define RR_SRV_POOL_H

#include "rpc/rr_srv_priv.h"

void rr_srv_q_push(struct rr_srv_queue *q, struct rr_sreq *req);
struct rr_sreq *rr_srv_q_pop(struct rr_srv_queue *q);

/* A request object for a new Receive, NULL at max_reqs or out of memory. */
struct rr_sreq *rr_srv_req_get(struct rr_srv *srv);
/* req back to the free list, with what it still holds. */
void rr_srv_req_put(struct rr_srv *srv, struct rr_sreq *req);

/* What names req in the transport's events, and the request a cookie
 * names (NULL once its object has been reused). */
uint64_t rr_srv_cookie(const struct rr_sreq *req);
struct rr_sreq *rr_srv_req_by_cookie(struct rr_srv *srv, uint64_t cookie);

/* req is being answered: call before posting the Send that answers it
 * (reply, RDMA_ERROR or control message), whose grant counts req's
 * Receive, posted again here (rt_buf.h).  No longer in flight. */
void rr_srv_answered(struct rr_srv *srv, struct rr_sreq *req);
/* The caller is done with req (RR_CURRENT): freed, or once its Send
 * completes. */
void rr_srv_done(struct rr_srv *srv, struct rr_sreq *req);

/*
 * Post req's Receive again (done by rr_srv_answered() and when req is put).
 * What may still be read of its message is copied first: the arguments,
 * if some are unread, or the whole message with keep (a backward Reply,
 * read by its caller later).  False, the Receive posted all the same, if
 * memory for the copy failed: what was left is then lost.
 */
bool rr_srv_release_recv(struct rr_srv *srv, struct rr_sreq *req, bool keep);

/* Free req's sink of pulled Read chunks / its reply sources. */
void rr_srv_release_sink(struct rr_srv *srv, struct rr_sreq *req);
void rr_srv_release_reply(struct rr_srv *srv, struct rr_sreq *req);

#endif /* RR_SRV_POOL_H */
