/*
 * rpcrdma_attr.h - internal helpers for struct rpcrdma_attr (the glue
 * layer's options), shared by the CLIENT and SVCXPRT constructors.
 */
#ifndef RPCRDMA_GLUE_ATTR_H
#define RPCRDMA_GLUE_ATTR_H

#include <rpc/rpcrdma.h>

#define RPCRDMA_DEFAULT_CREDITS 32
#define RPCRDMA_DEFAULT_INLINE 4096
#define RPCRDMA_DEFAULT_CONNECT_MS 5000
#define RPCRDMA_DEFAULT_MAX_REPLY (1u << 20)
#define RPCRDMA_DEFAULT_MAX_READ (16u << 20)
/* Smallest caller result buffer a Write chunk points at directly instead
 * of pool memory and one copy (RPCRDMA_DDP_REG_MIN; measured on
 * Soft-RoCE, see rpcrdma_ulb(3)). */
#define RPCRDMA_DEFAULT_DDP_REG_MIN (64u << 10)
/* Smallest argument item moved by a Read chunk when the ULB entry leaves
 * it to the transport (min=0). */
#define RPCRDMA_DEFAULT_DDP_MIN 1024u
#define RPCRDMA_DEFAULT_MAX_CONNS 256
#define RPCRDMA_DEFAULT_MAX_CONNS_PER_PEER 64

/* Replace zeros by defaults and apply RPCRDMA_REG_MODE / RPCRDMA_COMP_MODE. */
void rpcrdma_attr_fill(struct rpcrdma_attr *a);

/* The octet count in environment variable name (N, Nk, Nm), or dflt when
 * it is unset or malformed. */
size_t rpcrdma_env_size(const char *name, size_t dflt);

/* 0 if a is usable (reserved fields zero, enums in range), else -1. */
int rpcrdma_attr_check(const struct rpcrdma_attr *a);

#endif
