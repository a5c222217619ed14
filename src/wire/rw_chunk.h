/*
 * rw_chunk.h - chunk lists: builders, the Read-chunk iterator and the
 * structural rules of Calls and Replies (RFC 8166 §3.4, §3.4.5, v2-05 §4).
 *
 * rw_hdr_decode() only checks that a header is well-formed XDR within the
 * limits.  Whether its chunk lists make sense depends on the direction:
 * rw_validate_call() applies the rules a responder checks on a Call,
 * rw_validate_reply() the rules a requester checks on a Reply against the
 * Call it sent.  The builders produce lists that pass those rules, so a
 * sender that uses them cannot emit what a receiver must refuse.
 */
#ifndef RW_CHUNK_H
#define RW_CHUNK_H

#include "rw_hdr.h"

/* XDR roundup of a length, in 64 bits so it cannot wrap. */
static inline uint64_t rw_roundup4(uint64_t n)
{
	return (n + 3) & ~(uint64_t)3;
}

/* Sum of a chunk's segment lengths; false if it does not fit 32 bits. */
bool rw_chunk_len(const struct rw_chunk *c, uint32_t *len);

/* ---- Read list: builder and iterator --------------------------------- */

struct rw_read_builder {
	struct rw_read_seg *reads; /* caller's array */
	uint32_t cap;
	uint32_t n;
	uint64_t next_pos; /* lowest position the next chunk may have */
};

void rw_read_builder_init(struct rw_read_builder *b, struct rw_read_seg *reads,
			  uint32_t cap);

/*
 * Append one Read chunk: nsegs segments, in order, all at position (an
 * offset in the unreduced Payload stream, V1-RC-1, AMB-V1-5).  Position 0 is
 * the PZRC and must be the first chunk; later chunks must start at or after
 * the end of the previous one rounded up to 4 (V1-RC-2/3, AMB-V1-6).
 * Returns RW_R_OK, or RW_R_BAD_POSITION, RW_R_POSITION_ORDER,
 * RW_R_READ_OVERLAP, RW_R_EMPTY_CHUNK, RW_R_TOO_MANY_SEGS, RW_R_TOO_MANY_READS
 * (array full) or RW_R_CHUNK_OVERFLOW, leaving the list unchanged.
 */
enum rw_reason rw_read_builder_add(struct rw_read_builder *b, uint32_t position,
				   const struct rw_segment *segs,
				   uint32_t nsegs);

void rw_hdr_set_reads(struct rw_hdr *h, const struct rw_read_builder *b);

/* One Read chunk of a decoded list: h->reads[first .. first + nsegs). */
struct rw_read_chunk {
	uint32_t position;
	uint32_t first;
	uint32_t nsegs;
	uint32_t length; /* sum of the segment lengths */
};

struct rw_read_iter {
	const struct rw_hdr *h;
	uint32_t next;
};

static inline void rw_read_iter_init(struct rw_read_iter *it,
				     const struct rw_hdr *h)
{
	it->h = h;
	it->next = 0;
}

/*
 * Next chunk (maximal run of equal positions, list order kept, V1-RC-4).
 * Returns 1 with *c filled, 0 at the end, or -1 if the chunk's length does
 * not fit 32 bits (never for a list rw_validate_call() accepted).
 */
int rw_read_iter_next(struct rw_read_iter *it, struct rw_read_chunk *c);

/* ---- Write list and Reply chunk builders ----------------------------- */

struct rw_write_builder {
	struct rw_chunk *chunks; /* caller's array */
	uint32_t cap;
	uint32_t n;
};

void rw_write_builder_init(struct rw_write_builder *b, struct rw_chunk *chunks,
			   uint32_t cap);

/*
 * Append one Write chunk made of segs[0..nsegs), referenced, not copied: the
 * caller keeps segs alive while the header is in use.  Each chunk is sized
 * by the caller for the largest possible result (V1-WC-1).  Returns RW_R_OK,
 * RW_R_EMPTY_CHUNK, RW_R_TOO_MANY_SEGS, RW_R_TOO_MANY_WRITES or
 * RW_R_CHUNK_OVERFLOW.
 */
enum rw_reason rw_write_builder_add(struct rw_write_builder *b,
				    struct rw_segment *segs, uint32_t nsegs);

void rw_hdr_set_writes(struct rw_hdr *h, const struct rw_write_builder *b);

/* Make segs[0..nsegs) the Reply chunk of h (same checks as a Write chunk). */
enum rw_reason rw_hdr_set_reply(struct rw_hdr *h, struct rw_segment *segs,
				uint32_t nsegs);

/* ---- Validation ------------------------------------------------------ */

/*
 * Rules a responder applies to a decoded Call (RFC 8166 §3.4, §4.3, §4.5):
 * Read positions multiples of 4 and non-decreasing, chunks not overlapping
 * in the unreduced stream, a PZRC only first and only in NOMSG, NOMSG with
 * a PZRC (AMB-V1-10), no empty Write/Reply chunk (AMB-V1-11), chunk lengths
 * within 32 bits; v2: direction CALL and an inv_handle that is 0 or one of
 * the header's handles (V2-RI-1/2, AMB-V2-14).  An RDMA_ERROR yields
 * RW_R_ERROR_RECEIVED (V1-PROC-9), an OPTIONAL RW_R_BAD_OPTION (no opttype
 * is supported, AMB-V2-1), a RESPROP RW_R_UNEXPECTED_PROC.  The other v2
 * property messages pass: whether they are supported is the caller's call
 * (RW_R_PROPS_UNSUPPORTED).
 */
enum rw_reason rw_validate_call(const struct rw_hdr *h);

/*
 * Rules a requester applies to a decoded Reply, given the Call it sent
 * (RFC 8166 §3.4, AMB-V1-4): same XID and version (an ERR_VERS may carry any
 * version, AMB-V1-1), no Read list (V1-RC-9), the Write list a prefix of the
 * Call's with the same segment counts, handles and offsets and lengths no
 * larger than provisioned (V1-WC-4/5/6), the Reply chunk either absent,
 * all-zero in an RDMA_MSG, or the Call's with lengths no larger than
 * provisioned; RDMA_NOMSG only with a Reply chunk; v2: direction REPLY
 * (inv_handle is ignored, AMB-V2-13); RESPROP only for a REQPROP.
 * An RDMA_ERROR with matching XID and version passes: the caller handles it.
 */
enum rw_reason rw_validate_reply(const struct rw_hdr *call,
				 const struct rw_hdr *reply);

/*
 * The RPC message a header carries, inline after an RDMA_MSG header or as
 * pulled from a PZRC/Reply chunk: its XID must be rdma_xid (V1-HDR-2) and,
 * in v2, its msg_type the header's direction (V2-DIR-2, V2-DIR-3).
 */
enum rw_reason rw_check_payload(const struct rw_hdr *h, const void *rpc,
				size_t len);

/* ---- Chunk lengths against the XDR items they carry ------------------ */

/*
 * Responder: the segments to return for a Write chunk into which `written`
 * octets were placed (V1-WC-4): prov's handles and offsets, the count kept
 * (V1-WC-5), lengths filled in segment order, trailing ones 0 (and all 0 for
 * an unused chunk, V1-WC-6).  out has prov->nsegs entries.  Returns
 * RW_R_WRITE_OVERRUN, writing nothing, if written exceeds the chunk.
 */
enum rw_reason rw_write_chunk_return(const struct rw_chunk *prov,
				     uint64_t written, struct rw_segment *out);

/*
 * Requester: check a returned Write chunk against the XDR length word L of
 * the result it carries: L <= total <= roundup4(L) (V1-WC-10, tolerating
 * RFC 5666 roundup, AMB-V1-12); *use is set to L, never more (N-16).
 */
enum rw_reason rw_write_result_check(const struct rw_chunk *ret, uint32_t L,
				     uint32_t *use);

/* Responder: a Read chunk for an item of length L is L or roundup4(L)
 * octets long (V1-RC-6/7, AMB-V1-12). */
enum rw_reason rw_read_chunk_check(uint32_t chunk_len, uint32_t L);

#endif /* RW_CHUNK_H */
