/*
 * rr_srv_conn.h - the connection as the server files see it
 * (rr_srv_conn.c).  Every function wants srv->lock held.
 */
#ifndef RR_SRV_CONN_H
#define RR_SRV_CONN_H

#include "rpc/rr_srv_priv.h"

/* End the connection with this error (the first one is kept). */
void rr_srv_kill(struct rr_srv *srv, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Make the fd readable, so svc_run calls rr_srv_progress. */
void rr_srv_kick(struct rr_srv *srv);
/* The credits an answer grants now (counted in max_granted). */
uint32_t rr_srv_grant(struct rr_srv *srv);
/* A free Send buffer, running the event loop while none is; NULL once
 * the connection is dead or none came within RR_SEND_WAIT_MS (then it is
 * killed). */
struct rt_sbuf *rr_srv_sbuf_wait(struct rr_srv *srv);

#endif /* RR_SRV_CONN_H */
