/*
 * svc_rdma.h - internal face of the connection SVCXPRTs of svc_rdma.c for
 * the backward CLIENT (clnt_rdma_bc.c): the connection behind an SVCXPRT,
 * held so that it outlives the SVCXPRT while the CLIENT uses it.
 */
#ifndef RPCRDMA_GLUE_SVC_RDMA_H
#define RPCRDMA_GLUE_SVC_RDMA_H

#include <rpc/rpc.h>

struct svr_conn;
struct rr_srv;

/* xprt's connection, held; NULL if xprt is not a connection of svc_rdma. */
struct svr_conn *svc_rdma_conn_hold(SVCXPRT *xprt);
void svc_rdma_conn_release(struct svr_conn *conn);
struct rr_srv *svc_rdma_conn_srv(const struct svr_conn *conn);
const char *svc_rdma_conn_netid(const struct svr_conn *conn);

#endif /* RPCRDMA_GLUE_SVC_RDMA_H */
