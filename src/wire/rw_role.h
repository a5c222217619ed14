/*
 * rw_role.h - the role-aware face of the header codec: what a requester or a
 * responder does with a refused header, and the only ways each role can
 * produce a header (RFC 8166 §4.5, v2-05 §7.2.4).
 *
 * A responder receives Calls with rw_recv_call(), which yields a struct
 * rw_rx_call; errors are built only from such a received Call (rw_err_*),
 * and Replies are encoded only against it (rw_encode_reply).  A requester
 * encodes with rw_encode_call(), which refuses RDMA_ERROR, and gets only
 * "discard" or "fail the XID" from rw_reason_action(): no path through this
 * interface lets a requester emit an RDMA_ERROR (V1-PROC-8, V2-ERR-1).
 */
#ifndef RW_ROLE_H
#define RW_ROLE_H

#include "rw_chunk.h"

enum rw_role {
	RW_ROLE_REQUESTER, /* sent the Call, receives Replies */
	RW_ROLE_RESPONDER, /* receives Calls, sends Replies */
};

enum rw_act {
	RW_ACT_ACCEPT,	     /* process the message */
	RW_ACT_DISCARD,	     /* drop it silently, bump the counter */
	RW_ACT_REPLY_ERR,    /* responder: send RDMA_ERROR err/arg1/arg2,
				 * process nothing else (V2-ERR-6) */
	RW_ACT_FAIL_XID,     /* requester: end the RPC with that XID with a
				 * permanent transport error, free its credit
				 * (AMB-V2-10, V1-DDP-2) */
	RW_ACT_GARBAGE_ARGS, /* responder: RPC Reply GARBAGE_ARGS in an
				 * RDMA_MSG (V1-ERR-8) */
};

/* Statistics a receiver keeps; rw_reason_action() names the one to bump. */
enum rw_counter {
	RW_CNT_NONE,
	RW_CNT_RUNT,	     /* too short to trust (V1-ERR-2) */
	RW_CNT_BAD_VERS,     /* unsupported or mismatched version */
	RW_CNT_BAD_HDR,	     /* malformed Call header (V1-ERR-3/7) */
	RW_CNT_OVER_LIMIT,   /* over a configured chunk/prop limit */
	RW_CNT_UNSUPPORTED,  /* proc, option or property op not done */
	RW_CNT_ERR_RECEIVED, /* RDMA_ERROR at a responder (V1-PROC-9) */
	RW_CNT_BAD_REPLY,    /* malformed Reply discarded (V1-ERR-4) */
	RW_CNT_BAD_ERROR,    /* undecodable RDMA_ERROR (V1-ERR-10) */
	RW_CNT_DDP,	     /* chunk length vs XDR item (AMB-V1-12) */
	RW_CNT_NR
};

struct rw_action {
	enum rw_act what;
	enum rw_counter counter;
	uint32_t err;	     /* RW_ACT_REPLY_ERR: rdma_err code */
	uint32_t arg1, arg2; /* ERR_VERS low/high, v2 max or length */
};

/*
 * What role must do about a header refused for why.  vers is the rdma_vers
 * of the refused header (it picks v1 ERR_CHUNK or the v2 codes); lim gives
 * the ERR_VERS range and the maxima of the v2 over-limit errors: pass the
 * sp->lim the header was decoded with (NULL: rw_default_limits).
 * A responder answers with an error, GARBAGE_ARGS or silence (runts,
 * RDMA_ERRORs: V1-ERR-2, V1-PROC-9); a requester never answers (V1-ERR-4,
 * V1-ERR-10), it discards or fails the XID.
 */
struct rw_action rw_reason_action(enum rw_role role, uint32_t vers,
				  enum rw_reason why,
				  const struct rw_limits *lim);

/*
 * What a requester does with a Reply header refused for why (reply as
 * rw_hdr_decode() left it), given the Call of the same XID it sent (NULL:
 * none waits).  The Call's version decides, not the Reply's: an
 * RDMA_ERROR labelled with another version than the Call's is no answer
 * to it and is discarded (V1-ERR-10), except ERR_VERS, whose layout and
 * meaning every version shares (AMB-V1-1, V2-ERR-3).
 */
struct rw_action rw_reply_action(const struct rw_hdr *call,
				 const struct rw_hdr *reply,
				 enum rw_reason why);

const char *rw_counter_str(enum rw_counter c);

/*
 * Direction of a message for routing (RFC 8167, v2-05 §7.2.2): RW_DIR_CALL,
 * RW_DIR_REPLY, or -1 when the header cannot tell (a v1 RDMA_NOMSG, whose
 * direction follows from the endpoint's role, or a v1 RDMA_MSG whose inline
 * RPC message is too short).  payload is what follows the header.
 */
int rw_hdr_direction(const struct rw_hdr *h, const void *payload, size_t len);

/* ---- Responder ------------------------------------------------------- */

/* A Call as received by a responder: the only source of error replies. */
struct rw_rx_call {
	struct rw_hdr hdr;
	enum rw_reason why; /* as returned by rw_recv_call() */
};

/*
 * Decode buf[0..len) as a Call with sp's limits: rw_hdr_decode(), the Read
 * list sorted by position (stable: a requester need not list its chunks in
 * order, AMB-V1-6, and segments of one position form one chunk in list
 * order), rw_validate_call() and, for RDMA_MSG, rw_check_payload() on the
 * inline RPC message.  Returns (and stores in rx->why) the first refusal
 * reason.
 */
enum rw_reason rw_recv_call(const void *buf, size_t len, struct rw_rx_call *rx,
			    struct rw_hdr_space *sp);

/*
 * RDMA_ERROR replies to rx, echoing its XID and version (V1-ERR-5, V2-ERR-2)
 * and carrying credit, the current grant.  They return the octets written
 * to buf, or 0, writing nothing, if credit is 0 (AMB-V1-8, V1-CR-3), if rx
 * must not be answered (a runt: XID untrusted; itself an RDMA_ERROR:
 * V1-PROC-9), if the code does not exist in rx's version (v1 has only
 * ERR_VERS and ERR_CHUNK; an unknown version only gets ERR_VERS), or if cap
 * is too small.
 */
size_t rw_err_vers(const struct rw_rx_call *rx, uint32_t credit, uint32_t low,
		   uint32_t high, void *buf, size_t cap);
/* v1 ERR_CHUNK, v2 RDMA2_ERR_BAD_XDR (same value). */
size_t rw_err_chunk(const struct rw_rx_call *rx, uint32_t credit, void *buf,
		    size_t cap);
/* Any v2 code: arg1/arg2 are max, or chunk_index/length_needed
 * (WRITE_RESOURCE), or length_needed (REPLY_RESOURCE). */
size_t rw_err2(const struct rw_rx_call *rx, uint32_t credit, uint32_t code,
	       uint32_t arg1, uint32_t arg2, void *buf, size_t cap);
/* The error an RW_ACT_REPLY_ERR action asks for; 0 for other actions. */
size_t rw_err_from_action(const struct rw_rx_call *rx,
			  const struct rw_action *a, uint32_t credit, void *buf,
			  size_t cap);

/*
 * Encode reply, the answer to the accepted Call rx, into buf.  Returns 0
 * (nothing sent) for an RDMA_ERROR (use rw_err_*), a credit of 0 (V1-CR-3),
 * an rx that was refused, a header rw_validate_reply(&rx->hdr, reply)
 * refuses (a Read list, V1-RC-9; a Write list that is not the echo of the
 * Call's, V1-WC-4/5; a misused Reply chunk), or one that does not follow
 * the responder side of AMB-V1-4: every Write chunk echoed, unused ones
 * zeroed (V1-WC-6, see rw_write_chunk_return()), the Reply chunk present
 * only in RDMA_NOMSG, and (v2) inv_handle 0 (AMB-V2-13).
 */
size_t rw_encode_reply(const struct rw_rx_call *rx, const struct rw_hdr *reply,
		       void *buf, size_t cap);

/* ---- Requester ------------------------------------------------------- */

/*
 * Encode a Call (or a one-way v2 property message) into buf.  Returns 0 for
 * an RDMA_ERROR (V1-PROC-8), MSGP/DONE (V1-PROC-4/6), a RESPROP, a credit
 * of 0 (AMB-V1-16), or anything rw_validate_call() refuses, so a requester
 * never sends what a responder must reject.
 */
size_t rw_encode_call(const struct rw_hdr *call, void *buf, size_t cap);

/*
 * What a requester may do after an RDMA_ERROR answered its Call (v2-05
 * §7.2.4, §8): resend the same RPC, with the same XID, changed as the error
 * asks, or end it.  Each kind is tried once: a second identical error is
 * final (AMB-V2-4), which the caller keeps track of.
 */
enum rw_resend_kind {
	RW_RESEND_NONE = 0,   /* final: end the RPC (V1-ERR-9, V2-ERR-16) */
	RW_RESEND_VERS,	      /* ERR_VERS while negotiating: resend in
				 * version vers (V2-NEG-5, AMB-V2-19) */
	RW_RESEND_NO_READS,   /* READ_CHUNKS: arguments inline or in a
				 * Position-Zero Read chunk (V2-ERR-8) */
	RW_RESEND_WRITES,     /* WRITE_CHUNKS: at most max Write chunks
				 * (V2-ERR-9/10) */
	RW_RESEND_WRITE_ROOM, /* WRITE_RESOURCE: Write chunk index
				 * (0-based) of at least length octets */
	RW_RESEND_REPLY_ROOM, /* REPLY_RESOURCE: a Reply chunk of at least
				 * length octets (V2-ERR-13); v1 ERR_CHUNK to
				 * a Call whose Reply size was not known:
				 * length 0, a larger Reply chunk */
};

struct rw_resend {
	enum rw_resend_kind what;
	uint32_t vers;
	uint32_t max;
	uint32_t index;
	uint32_t length;
};

/*
 * The resend err allows for call.  negotiating: call was the first Call of
 * its connection in version 2 and no valid Reply has come yet;
 * reply_unsized: call offered no Reply chunk, or one not sized from a known
 * largest Reply (a v1 ERR_CHUNK may then mean "the Reply did not fit").
 */
struct rw_resend rw_resend_plan(const struct rw_hdr *call,
				const struct rw_hdr *err, bool negotiating,
				bool reply_unsized);

#endif /* RW_ROLE_H */
