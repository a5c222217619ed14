/*
 * rw_plan.h - how a message travels: Short, Chunked or Long (RFC 8166 §3.5).
 *
 * The sender decision procedure of RFC 8166 §3.5, as arithmetic on sizes.  The
 * requester asks rw_plan_call() once it has encoded the Call (and knows how
 * many octets reduction removed); the responder asks rw_plan_reply() once it
 * has encoded the Reply.  Both compare the whole RPC-over-RDMA message,
 * transport header included, with the receiver's inline threshold
 * (V1-HDR-7): the header grows with every chunk it carries, so the sizes of
 * the chunk lists are part of the question.
 */
#ifndef RW_PLAN_H
#define RW_PLAN_H

#include <stdbool.h>
#include <stdint.h>

/* Default inline thresholds (V1-SZ-2, V2-INL-2). */
#define RW_V1_INLINE_DEFAULT 1024u
#define RW_V2_INLINE_DEFAULT 4096u

/* Shape of the chunk lists a header will carry, for sizing it. */
struct rw_hdr_shape {
	uint32_t vers;	       /* 1 or 2 */
	uint32_t read_segs;    /* Read-list entries (PZRC included) */
	uint32_t write_chunks; /* Write-list chunks */
	uint32_t write_segs;   /* segments of all Write chunks */
	bool reply_chunk;
	uint32_t reply_segs;
};

/* Octets of an RDMA_MSG/RDMA_NOMSG header of this shape (RFC 8166 §4.2-4.3,
 * v2-05 §7.2). */
uint32_t rw_hdr_shape_len(const struct rw_hdr_shape *s);

enum rw_msg_kind {
	RW_SHORT,   /* RDMA_MSG, whole payload inline (for a Reply: RDMA_MSG,
			 * with or without Write-chunk items) */
	RW_CHUNKED, /* RDMA_MSG, reduced payload inline, items in chunks */
	RW_LONG,    /* RDMA_NOMSG, payload in a PZRC or the Reply chunk */
	RW_NO_ROOM, /* Reply only: no way to send it (ERR_CHUNK / v2
			 * REPLY_RESOURCE, AMB-V1-14) */
};

struct rw_call_in {
	uint32_t vers;
	uint32_t call_inline;  /* responder's receive size */
	uint32_t reply_inline; /* our own posted receive size */
	uint32_t payload_len;  /* unreduced Call payload */
	uint32_t reduced_len;  /* after reduction (== payload_len if none) */
	uint32_t read_segs;    /* segments of the reduced items */
	uint32_t pzrc_segs;    /* segments a PZRC would need (>= 1) */
	uint32_t write_chunks; /* Write chunks offered for results */
	uint32_t write_segs;
	uint32_t max_reply_len;	   /* largest possible Reply payload, minus
					 * what Write chunks take */
	uint32_t reply_chunk_segs; /* segments a Reply chunk would need */
};

struct rw_call_plan {
	enum rw_msg_kind kind;
	bool reply_chunk;	  /* offer a Reply chunk (V1-RP-1) */
	uint32_t reply_chunk_len; /* its size (V1-RP-2) */
	uint32_t hdr_len;	  /* header octets for this plan */
	uint32_t send_len;	  /* octets of the Send */
};

/*
 * Plan a Call.  Reduction is taken as already decided by the caller
 * (reduced_len < payload_len and read_segs > 0 when it reduced anything):
 * Short if the unreduced Call fits, Chunked if the reduced one fits, else
 * Long with a PZRC carrying the reduced payload.
 */
void rw_plan_call(const struct rw_call_in *in, struct rw_call_plan *out);

struct rw_reply_in {
	uint32_t vers;
	uint32_t reply_inline; /* requester's receive size */
	uint32_t reduced_len;  /* Reply payload after Write-chunk items */
	uint32_t write_chunks; /* Write list echoed as offered */
	uint32_t write_segs;
	bool reply_chunk; /* requester offered a Reply chunk */
	uint32_t reply_chunk_segs;
	uint32_t reply_chunk_len; /* its capacity */
};

/*
 * Plan a Reply: RDMA_MSG if it fits inline with the Reply chunk absent,
 * else RDMA_NOMSG into the Reply chunk if one was offered and is large
 * enough, else RW_NO_ROOM.  The Reply chunk is never written past its end.
 */
enum rw_msg_kind rw_plan_reply(const struct rw_reply_in *in);

#endif /* RW_PLAN_H */
