/*
 * rpcrdma_attr.h - internal helpers for struct rpcrdma_attr (the glue
 * layer's options), shared by the CLIENT and SVCXPRT constructors.
 */
#ifndef RPCRDMA_GLUE_ATTR_H
#define RPCRDMA_GLUE_ATTR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpcrdma.h>

#define RPCRDMA_DEFAULT_CREDITS	   32
#define RPCRDMA_DEFAULT_INLINE	   4096
#define RPCRDMA_DEFAULT_CONNECT_MS 5000
#define RPCRDMA_DEFAULT_MAX_REPLY  ((size_t)256 << 20)
#define RPCRDMA_DEFAULT_BC_CREDITS 4
/* How long a server found not to speak RPC-over-RDMA v2 is spoken to in
 * v1 (seconds). */
#define RPCRDMA_DEFAULT_V2_RETRY_S 600
#define RPCRDMA_DEFAULT_MAX_READ   (16u << 20)
/* Smallest caller result buffer a Write chunk points at directly instead
 * of pool memory and one copy (RPCRDMA_DDP_REG_MIN; measured on
 * Soft-RoCE, see rpcrdma_ulb(3)). */
#define RPCRDMA_DEFAULT_DDP_REG_MIN (64u << 10)
/* Smallest argument item moved by a Read chunk when the ULB entry leaves
 * it to the transport (min=0). */
#define RPCRDMA_DEFAULT_DDP_MIN		   1024u
#define RPCRDMA_DEFAULT_MAX_CONNS	   256
#define RPCRDMA_MAX_BC_CREDITS		   256u
#define RPCRDMA_DEFAULT_MAX_CONNS_PER_PEER 64
/* Event mode's polling before sleeping, at most (microseconds), chosen by
 * measurement (tests/bench/README.md, null_rtt_sleep): polling pays only
 * when both sides poll, and the budget adapts up only when a sleeping
 * round trip fits in it, so it must exceed the platform's sleeping round
 * trip: ~370 us for a NULL call on Soft-RoCE under TCG (50, 100 and 200
 * collapse to no polling there; 400 holds it at 83-94 us instead of
 * 366-389 us, with less CPU per call), ~10-20 us on an HCA. */
#define RPCRDMA_DEFAULT_POLL_US 500

/* Seconds without a call before a server closes a connection: the Linux
 * kernel's server ages its connections out after about six minutes too;
 * the client's next call connects again. */
#define RPCRDMA_DEFAULT_IDLE_TIMEOUT 360

/* idle_timeout of a filled attr in seconds: 0 for RPCRDMA_IDLE_NONE. */
uint32_t rpcrdma_attr_idle_s(const struct rpcrdma_attr *a);

/* poll_us of a filled attr in microseconds: 0 for RPCRDMA_POLL_NONE. */
uint32_t rpcrdma_attr_poll_us(const struct rpcrdma_attr *a);

/* Replace zeros by defaults and apply RPCRDMA_COMP_MODE / RPCRDMA_VERSION /
 * RPCRDMA_BC_CREDITS (RPCRDMA_REG_MODE: the transport, at connection). */
void rpcrdma_attr_fill(struct rpcrdma_attr *a);

/* bc_credits of a filled attr as a count: 0 for RPCRDMA_BC_NONE (or
 * RPCRDMA_BC_CREDITS=0). */
unsigned int rpcrdma_attr_bc(const struct rpcrdma_attr *a);

/*
 * Settings that only the environment gives (rpcrdma-environ(7)), read in
 * this one place: RPCRDMA_V2_RETRY, RPCRDMA_REMOTE_INV, RPCRDMA_MAX_READ_CHUNKS,
 * RPCRDMA_MAX_WRITE_CHUNKS, RPCRDMA_MAX_SEGMENTS, RPCRDMA_REPLAY_BYTES,
 * RPCRDMA_XCHAREXT.
 */
struct rpcrdma_env {
	uint32_t v2_retry_s;
	bool no_remote_inv;
	uint32_t max_read_chunks; /* 0: the wire layer's default */
	uint32_t max_write_chunks;
	uint32_t max_chunk_segs;
	size_t replay_bytes;
	const char *xcharext; /* "all", or addresses, or NULL */
};

void rpcrdma_env_read(struct rpcrdma_env *env);

/* RPCRDMA_XCHAREXT names this peer (its address without the port). */
bool rpcrdma_env_xcharext(const struct rpcrdma_env *env,
			  const struct sockaddr *peer);

/* The octet count in environment variable name (N, Nk, Nm), or dflt when
 * it is unset or malformed. */
size_t rpcrdma_env_size(const char *name, size_t dflt);

/* 0 if a is usable (reserved fields zero, enums in range), else -1. */
int rpcrdma_attr_check(const struct rpcrdma_attr *a);

#endif
