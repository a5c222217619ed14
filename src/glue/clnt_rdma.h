/*
 * clnt_rdma.h - internal face of the RPC-over-RDMA CLIENT (clnt_rdma.c):
 * what other parts of the library and white-box tests may ask of a CLIENT
 * beyond <rpc/rpcrdma.h>.
 */
#ifndef RPCRDMA_GLUE_CLNT_RDMA_H
#define RPCRDMA_GLUE_CLNT_RDMA_H

#include <stdbool.h>

#include <rpc/rpc.h>

/*
 * clnt_control() request for tests: copies the requester's counters into a
 * struct rr_stats (src/rpc/rr_call.h).  Not part of the public interface:
 * the layout may change with the library.
 */
#define CLGET_RDMA_RR_STATS 0x524400f0

/* True if cl was made by clnt_rdma_create(). */
bool clnt_rdma_is(const CLIENT *cl);

/*
 * For the backward service on a CLIENT's connections (svc_rdma_bc.c):
 * cl's state, held so that it outlives clnt_destroy() while the service
 * runs (NULL if cl is not ours); its requester; whether clnt_destroy()
 * was called.
 */
struct clnt_rdma;
struct rr_clnt;
struct clnt_rdma *clnt_rdma_hold(CLIENT *cl);
void clnt_rdma_release(struct clnt_rdma *clnt);
struct rr_clnt *clnt_rdma_rr(const struct clnt_rdma *clnt);
bool clnt_rdma_gone(const struct clnt_rdma *clnt);

#endif /* RPCRDMA_GLUE_CLNT_RDMA_H */
