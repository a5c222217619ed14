/*
 * rpc/rpcrdma.h - public interface of librpcrdma, the RPC-over-RDMA
 * transport for libtirpc (netids "rdma" and "rdma6").
 *
 * Link with "-lrpcrdma -ltirpc" (in that order), or use
 * "pkg-config --libs librpcrdma".
 */
#ifndef _RPC_RPCRDMA_H
#define _RPC_RPCRDMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version string of the library actually loaded, e.g. "0.1.0". */
const char *rpcrdma_version(void);

/*
 * How chunk memory is exposed to the peer.  AUTO picks memory windows when
 * the device has type 2 windows, else one registration per RPC.  The
 * environment variable RPCRDMA_REG_MODE=mw|mr overrides AUTO.
 */
enum rpcrdma_reg_mode {
	RPCRDMA_REG_AUTO = 0,
	RPCRDMA_REG_MW = 1,	/* type 2 memory windows over registered pools */
	RPCRDMA_REG_MR = 2,	/* ibv_reg_mr / ibv_dereg_mr per RPC */
};

/*
 * How completions are waited for.  EVENT sleeps on the completion channel;
 * POLL spins on the completion queue (lowest latency, one busy core).  The
 * environment variable RPCRDMA_COMP_MODE=event|poll overrides the default.
 */
enum rpcrdma_comp_mode {
	RPCRDMA_COMP_EVENT = 0,
	RPCRDMA_COMP_POLL = 1,
};

/*
 * Options of clnt_rdma_create() and svc_rdma_create().  Initialize with
 * rpcrdma_attr_init(), then change what you need; 0 keeps a default.
 */
struct rpcrdma_attr {
	unsigned int credits;		/* client: credits requested; server:
					 * most credits granted per connection
					 * (default 32) */
	unsigned int inline_send;	/* largest message sent inline (4096;
					 * the peer may lower it, RFC 8797) */
	unsigned int inline_recv;	/* receive buffer size (4096) */
	enum rpcrdma_reg_mode reg_mode;
	enum rpcrdma_comp_mode comp_mode;
	unsigned int connect_timeout_ms; /* address, route, connect (5000) */
	size_t max_reply_size;		/* client: largest reply payload it is
					 * prepared to receive; a Reply chunk
					 * of this size is offered when a reply
					 * may not fit inline (1 MiB) */
	size_t max_read_bytes;		/* server: most octets one request may
					 * ask it to pull by RDMA Read (16 MiB) */
	unsigned int max_conns;		/* server: connections at once (256) */
	unsigned int max_conns_per_peer; /* server: per client address (64) */
	unsigned long reserved[8];	/* must be zero */
};

void rpcrdma_attr_init(struct rpcrdma_attr *attr);

#ifdef __cplusplus
}
#endif

#endif /* _RPC_RPCRDMA_H */
