/*
 * hdr_ref.h - adapters between struct rw_hdr and the rpcgen reference codec
 * (xdr/libxdrref.la), for the differential test, the fuzzer's oracle and
 * the benchmark.  Test code only: the reference codec is never linked into
 * librpcrdma.
 */
#ifndef TESTS_HDR_REF_H
#define TESTS_HDR_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "rpcrdma_v1.h"
#include "rpcrdma_v2.h"

#include "wire/rw_hdr.h"

/* Linked-list nodes and arrays the rpcgen structs of one header point to. */
struct hdr_ref_pool {
	xdr_read_list rl1[RW_MAX_READ_SEGS];
	xdr_write_list wl1[RW_MAX_WRITE_CHUNKS];
	xdr_rdma_segment ws1[RW_MAX_WRITE_CHUNKS][RW_MAX_CHUNK_SEGS];
	xdr_write_chunk rc1;
	xdr_rdma_segment rs1[RW_MAX_CHUNK_SEGS];

	rpcrdma2_read_list rl2[RW_MAX_READ_SEGS];
	rpcrdma2_write_list wl2[RW_MAX_WRITE_CHUNKS];
	rpcrdma2_segment ws2[RW_MAX_WRITE_CHUNKS][RW_MAX_CHUNK_SEGS];
	rpcrdma2_write_chunk rc2;
	rpcrdma2_segment rs2[RW_MAX_CHUNK_SEGS];
	rpcrdma2_propval props[RW_MAX_PROPS];
	uint32 sub1[RW_MAX_SUBSET_WORDS];
	uint32 sub2[RW_MAX_SUBSET_WORDS];
};

/* Whether h is encoded with the v1 (struct rdma_msg) or the v2 XDR: an
 * ERR_VERS of any version but 2 uses the v1 layout, which it shares. */
bool hdr_ref_is_v2(const struct rw_hdr *h);

/* The rpcgen struct for h (any v1 proc incl. MSGP/DONE, any v2 proc). */
void hdr_ref_from_v1(const struct rw_hdr *h, rdma_msg *m,
		     struct hdr_ref_pool *pool);
void hdr_ref_from_v2(const struct rw_hdr *h, rpcrdma2_xprt_hdr *m,
		     struct hdr_ref_pool *pool);

/* Encode h with xdrmem + xdr_rdma_msg / xdr_rpcrdma2_xprt_hdr; octets
 * written or 0 on failure.  MSGP's align/thresh are taken as 0. */
size_t hdr_ref_encode(const struct rw_hdr *h, void *buf, size_t cap);

/*
 * Decode buf[0..len) with the reference codec (v1 or v2 XDR as
 * hdr_ref_is_v2(h) says) and compare it with h field by field; *used gets
 * the octets the reference consumed.  False if the reference refuses the
 * bytes or decodes something else.
 */
bool hdr_ref_decode_matches(const void *buf, size_t len, const struct rw_hdr *h,
			    size_t *used);

#endif /* TESTS_HDR_REF_H */
