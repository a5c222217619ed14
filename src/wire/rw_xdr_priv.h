/*
 * rw_xdr_priv.h - helpers shared by the reduction (rw_reduce.c) and
 * reassembly (rw_reasm.c) streams; not part of the wire layer's interface.
 */
#ifndef RW_XDR_PRIV_H
#define RW_XDR_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rw_xdr.h"

/* XDR pad after n octets of data: 0..3 (RFC 4506 opaque). */
static inline uint32_t rw_xdr_pad(uint32_t n)
{
	return (4u - (n & 3u)) & 3u;
}

/* roundup4 in 64 bits, so it cannot wrap for n near 4 GiB. */
static inline uint64_t rw_xdr_round(uint32_t n)
{
	return (uint64_t)n + rw_xdr_pad(n);
}

/* Unaligned-safe big-endian word access: buffers come from callers. */
static inline void rw_xdr_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t rw_xdr_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* memcpy that tolerates n == 0 with NULL pointers (C forbids passing them) */
static inline void rw_xdr_copy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

static inline bool rw_xdr_aligned(const void *p)
{
	return ((uintptr_t)p & 3u) == 0;
}

bool rw_rxdr_begin_body(XDR *xdrs);
bool rw_axdr_begin_body(XDR *xdrs);

/*
 * The RFC 8166 §3.4.5 reconstruction walk, one chunk at a time, shared by
 * rw_axdr_create(), rw_ddp_flatten() and rw_ddp_unreduce() so all three
 * refuse exactly the same descriptors.
 */
struct rw_reasm_walk {
	uint32_t plen;	  /* reduced payload octets */
	uint32_t in_off;  /* payload octets before the current chunk */
	uint64_t out_off; /* unreduced octets before the current chunk */
};

/*
 * Account for a chunk of len octets at position pos.  On success *need is
 * the payload octets to copy before it and the walk has advanced past the
 * chunk and its pad.
 */
enum rw_xdr_err rw_reasm_step(struct rw_reasm_walk *w, uint32_t pos,
			      uint64_t len, uint32_t *need);

/* Unreduced length once all chunks are stepped. */
enum rw_xdr_err rw_reasm_total(const struct rw_reasm_walk *w, uint32_t *ulen);

#endif /* RW_XDR_PRIV_H */
