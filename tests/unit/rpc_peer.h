/*
 * rpc_peer.h - the far end of host tests of src/rpc: RPC messages and
 * RPC-over-RDMA messages built and read the way the peer would, over the
 * wire codec (rw_hdr_encode / rw_hdr_decode) and plain XDR.  Shared by
 * check_rpc_clnt.c, check_rpc_srv.c and the fuzzer fuzz_srv.c, so it does
 * not use Check: every helper returns what it built, or 0 / false.
 *
 * The test program: program RP_PROG version RP_VERS, every procedure takes
 * one opaque<> argument and returns one opaque<> result, AUTH_NONE.  In
 * the unreduced stream the argument's data starts at RP_ARG_POS (the Read
 * chunk position of a reduced argument, V1-RC-1) and the result's data at
 * RP_RES_POS.
 */
#ifndef TESTS_RPC_PEER_H
#define TESTS_RPC_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

#include "wire/rw_hdr.h"

#define RP_PROG	    0x2000f00du
#define RP_VERS	    1u
#define RP_CALL_HDR 40u /* xid .. verifier: ten words */
#define RP_ARG_POS  (RP_CALL_HDR + 4u)
#define RP_REPLY_HDR \
	24u /* xid, REPLY, MSG_ACCEPTED, verifier,
				 * SUCCESS */
#define RP_RES_POS (RP_REPLY_HDR + 4u)

/* Octets of the whole message with an opaque of n octets. */
static inline uint32_t rp_call_len(uint32_t n)
{
	return RP_ARG_POS + ((n + 3u) & ~3u);
}

static inline uint32_t rp_reply_len(uint32_t n)
{
	return RP_RES_POS + ((n + 3u) & ~3u);
}

/* An RPC Call of procedure proc carrying arg[0..alen) into buf[0..cap):
 * octets written, 0 if cap is short. */
uint32_t rp_call(void *buf, size_t cap, uint32_t xid, uint32_t proc,
		 const void *arg, uint32_t alen);

/* An accepted, successful RPC Reply carrying res[0..rlen). */
uint32_t rp_reply(void *buf, size_t cap, uint32_t xid, const void *res,
		  uint32_t rlen);

/* The transport header h followed by payload[0..plen): octets, or 0. */
uint32_t rp_msg(void *buf, size_t cap, const struct rw_hdr *h,
		const void *payload, uint32_t plen);

/* Fill n octets with a pattern that depends on seed (never all zero). */
void rp_fill(void *buf, size_t n, uint32_t seed);

/* ---- XDR routines for the code under test ------------------------------ */

/* One message's fields for the routines below. */
struct rp_args {
	uint32_t xid;
	uint32_t proc;
	const void *data; /* encode: the opaque */
	uint32_t len;
	void *out;    /* decode: where the opaque goes ... */
	uint32_t cap; /* ... and its room */
	bool plain;   /* encode on plain XDR (the backward
				 * direction): no body mark */
};

/* rr_encode_fn: the whole Call, rw_xdr_begin_body() before the argument
 * (unless plain). */
bool rp_xdr_call(XDR *xdrs, void *arg);

/* rr_sreq_enc.encode: the whole Reply, body marked likewise. */
bool_t rp_xdr_reply(XDR *xdrs, void *arg);

/*
 * Decode a Call's RPC header (a->xid and a->proc are set) and stop before
 * the body; rp_xdr_opaque() then decodes the argument.  A Reply's header
 * likewise, checking it is an accepted SUCCESS for a->xid.
 */
bool rp_xdr_call_hdr(XDR *xdrs, struct rp_args *a);
bool rp_xdr_reply_hdr(XDR *xdrs, const struct rp_args *a);

/* The opaque<> of the body into a->out (a->len set). */
bool rp_xdr_opaque(XDR *xdrs, struct rp_args *a);

#endif /* TESTS_RPC_PEER_H */
