/*
 * rpc/rpcrdma.h - public interface of librpcrdma, the RPC-over-RDMA
 * transport for libtirpc (netids "rdma" and "rdma6").
 *
 * Link with "-lrpcrdma -ltirpc" (in that order), or use
 * "pkg-config --libs librpcrdma".
 */
#ifndef _RPC_RPCRDMA_H
#define _RPC_RPCRDMA_H

#ifdef __cplusplus
extern "C" {
#endif

/* Version string of the library actually loaded, e.g. "0.1.0". */
const char *rpcrdma_version(void);

#ifdef __cplusplus
}
#endif

#endif /* _RPC_RPCRDMA_H */
