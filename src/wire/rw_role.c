/*
 * rw_role.c - reason -> action per role, RDMA_ERROR builders and the
 * role-aware encode/receive entry points.
 *
 * The action table is the receiver-checks table of RFC 8166 §4.5 extended
 * with the v2 error codes of v2-05 §7.2.4: a responder answers what it can
 * attribute to a trustworthy XID and stays silent otherwise; a requester
 * never answers.
 */
#include "rw_role.h"
#include "rw_be.h"

static const char *const rw_counter_names[RW_CNT_NR] = {
	[RW_CNT_NONE] = "none",
	[RW_CNT_RUNT] = "runt",
	[RW_CNT_BAD_VERS] = "bad_vers",
	[RW_CNT_BAD_HDR] = "bad_hdr",
	[RW_CNT_OVER_LIMIT] = "over_limit",
	[RW_CNT_UNSUPPORTED] = "unsupported",
	[RW_CNT_ERR_RECEIVED] = "err_received",
	[RW_CNT_BAD_REPLY] = "bad_reply",
	[RW_CNT_BAD_ERROR] = "bad_error",
	[RW_CNT_DDP] = "ddp",
};

const char *rw_counter_str(enum rw_counter c)
{
	if ((unsigned int)c >= RW_CNT_NR)
		return "?";
	return rw_counter_names[c];
}

static struct rw_action act(enum rw_act what, enum rw_counter counter)
{
	struct rw_action a = { .what = what, .counter = counter };

	return a;
}

static struct rw_action act_err(uint32_t err, uint32_t arg1, uint32_t arg2,
				enum rw_counter counter)
{
	struct rw_action a = {
		.what = RW_ACT_REPLY_ERR,
		.counter = counter,
		.err = err,
		.arg1 = arg1,
		.arg2 = arg2,
	};

	return a;
}

/* Over a limit: v2 says which limit and its value (V2-ERR-7/9/11); v1 can
 * only say ERR_CHUNK. */
static struct rw_action over_limit(uint32_t vers, enum rw_reason why,
				   const struct rw_limits *lim)
{
	if (vers != RW_VERS_2)
		return act_err(RW_ERR_CHUNK, 0, 0, RW_CNT_OVER_LIMIT);
	switch (why) {
	case RW_R_TOO_MANY_READS:
		return act_err(RW2_ERR_READ_CHUNKS, lim->max_read_chunks, 0,
			       RW_CNT_OVER_LIMIT);
	case RW_R_TOO_MANY_WRITES:
		/* V2-ERR-9: no Write chunks at all means REPLY_RESOURCE; the
		 * length needed is unknown before the Reply exists. */
		if (!lim->max_write_chunks)
			return act_err(RW2_ERR_REPLY_RESOURCE, 0, 0,
				       RW_CNT_OVER_LIMIT);
		return act_err(RW2_ERR_WRITE_CHUNKS, lim->max_write_chunks, 0,
			       RW_CNT_OVER_LIMIT);
	case RW_R_TOO_MANY_SEGS:
		return act_err(RW2_ERR_SEGMENTS, lim->max_chunk_segs, 0,
			       RW_CNT_OVER_LIMIT);
	default: /* TOO_MANY_PROPS: no dedicated code */
		return act_err(RW2_ERR_SYSTEM, 0, 0, RW_CNT_OVER_LIMIT);
	}
}

static struct rw_action responder_action(uint32_t vers, enum rw_reason why,
					 const struct rw_limits *lim)
{
	bool v2 = vers == RW_VERS_2;

	switch (why) {
	case RW_R_OK:
		return act(RW_ACT_ACCEPT, RW_CNT_NONE);
	case RW_R_RUNT:
		return act(RW_ACT_DISCARD, RW_CNT_RUNT);
	case RW_R_BAD_VERS:
		return act_err(RW_ERR_VERS, lim->vers_low, lim->vers_high,
			       RW_CNT_BAD_VERS);
	case RW_R_BAD_PROC:
		return act_err(v2 ? RW2_ERR_INVAL_PROC : RW_ERR_CHUNK, 0, 0,
			       RW_CNT_UNSUPPORTED);
	case RW_R_DEPRECATED_PROC:
		return act_err(RW_ERR_CHUNK, 0, 0, RW_CNT_UNSUPPORTED);
	case RW_R_TOO_MANY_READS:
	case RW_R_TOO_MANY_WRITES:
	case RW_R_TOO_MANY_SEGS:
	case RW_R_TOO_MANY_PROPS:
		return over_limit(vers, why, lim);
	case RW_R_BAD_OPTION:
	case RW_R_PROPS_UNSUPPORTED:
		return act_err(v2 ? RW2_ERR_INVAL_OPTION : RW_ERR_CHUNK, 0, 0,
			       RW_CNT_UNSUPPORTED);
	case RW_R_ERROR_RECEIVED:
	case RW_R_BAD_ERROR:
	case RW_R_UNKNOWN_ERROR:
		return act(RW_ACT_DISCARD, RW_CNT_ERR_RECEIVED);
	case RW_R_UNEXPECTED_PROC:
		return act(RW_ACT_DISCARD, RW_CNT_UNSUPPORTED);
	case RW_R_DDP_LENGTH:
		return act(RW_ACT_GARBAGE_ARGS, RW_CNT_DDP);
	case RW_R_READS_IN_REPLY:
	case RW_R_NOMSG_NO_REPLY_CHUNK:
	case RW_R_WRITE_MISMATCH:
	case RW_R_WRITE_OVERRUN:
	case RW_R_REPLY_CHUNK_MISMATCH:
	case RW_R_VERS_MISMATCH:
		/* Reply-only reasons: a responder never validates a Reply
		 * of its own direction, and answering one could loop. */
		return act(RW_ACT_DISCARD, RW_CNT_BAD_REPLY);
	default: /* every other malformed-header reason (V1-ERR-7) */
		return act_err(RW_ERR_CHUNK, 0, 0, RW_CNT_BAD_HDR);
	}
}

static struct rw_action requester_action(uint32_t vers, enum rw_reason why)
{
	switch (why) {
	case RW_R_OK:
		return act(RW_ACT_ACCEPT, RW_CNT_NONE);
	case RW_R_RUNT:
		return act(RW_ACT_DISCARD, RW_CNT_RUNT);
	case RW_R_BAD_VERS:
	case RW_R_VERS_MISMATCH:
		return act(RW_ACT_DISCARD, RW_CNT_BAD_VERS);
	case RW_R_BAD_ERROR:
	case RW_R_UNKNOWN_ERROR:
		/* v1: discard (V1-ERR-10).  v2: words 3-4 were there, so the
		 * XID's RPC fails now instead of timing out (AMB-V2-10). */
		return act(vers == RW_VERS_2 ? RW_ACT_FAIL_XID : RW_ACT_DISCARD,
			   RW_CNT_BAD_ERROR);
	case RW_R_DDP_LENGTH:
		return act(RW_ACT_FAIL_XID, RW_CNT_DDP);
	default: /* V1-ERR-4: malformed Replies are dropped */
		return act(RW_ACT_DISCARD, RW_CNT_BAD_REPLY);
	}
}

struct rw_action rw_reason_action(enum rw_role role, uint32_t vers,
				  enum rw_reason why,
				  const struct rw_limits *lim)
{
	if (!lim)
		lim = &rw_default_limits;
	if (role == RW_ROLE_RESPONDER)
		return responder_action(vers, why, lim);
	return requester_action(vers, why);
}

struct rw_action rw_reply_action(const struct rw_hdr *call,
				 const struct rw_hdr *reply, enum rw_reason why)
{
	/* A runt's fields past the first words were never read. */
	bool error = why != RW_R_RUNT && reply->proc == RW_ERROR;
	struct rw_action a;

	if (!call) { /* nothing to fail */
		a = requester_action(reply->vers, why);
		if (a.what == RW_ACT_FAIL_XID)
			a.what = RW_ACT_DISCARD;
		return a;
	}
	if (error && reply->vers != call->vers &&
	    reply->err.code != RW_ERR_VERS)
		return act(RW_ACT_DISCARD, RW_CNT_BAD_VERS);
	return requester_action(call->vers, why);
}

int rw_hdr_direction(const struct rw_hdr *h, const void *payload, size_t len)
{
	const uint8_t *p = payload;
	uint32_t type;

	switch (h->proc) {
	case RW_ERROR:
	case RW2_RESPROP:
		return RW_DIR_REPLY;
	case RW2_CONNPROP:
	case RW2_REQPROP:
	case RW2_UPDPROP:
		return RW_DIR_CALL;
	case RW2_OPTIONAL:
		return (int)h->opt.dir;
	case RW_MSG:
	case RW_NOMSG:
		if (h->vers == RW_VERS_2)
			return (int)h->direction;
		if (h->proc == RW_NOMSG || len < 8)
			return -1;
		type = rw_get32(p + 4);
		return type <= RW_DIR_REPLY ? (int)type : -1;
	default:
		return -1;
	}
}

/* ---- Responder ------------------------------------------------------- */

/*
 * RFC 8166 groups Read segments into chunks by position and asks no order
 * of the list (AMB-V1-6: bis-01's "SHOULD sort" was dropped).  Sort it by
 * position, stable so that list order holds within a chunk (V1-RC-4);
 * what then overlaps is left to rw_validate_call().  The decoder bounded
 * segments per run of equal positions: runs merged here are checked again.
 */
static enum rw_reason sort_reads(struct rw_hdr *h, const struct rw_limits *lim)
{
	struct rw_read_seg *r = h->reads, x;
	uint32_t i, j, run = 0;

	for (i = 1; i < h->nreads; i++) {
		x = r[i];
		for (j = i; j && r[j - 1].position > x.position; j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
	for (i = 0; i < h->nreads; i++) {
		run = i && r[i].position == r[i - 1].position ? run + 1 : 1;
		if (run > lim->max_chunk_segs)
			return RW_R_TOO_MANY_SEGS;
	}
	return RW_R_OK;
}

enum rw_reason rw_recv_call(const void *buf, size_t len, struct rw_rx_call *rx,
			    struct rw_hdr_space *sp)
{
	struct rw_hdr *h = &rx->hdr;
	enum rw_reason why;

	why = rw_hdr_decode(buf, len, h, sp);
	if (!why && h->nreads)
		why = sort_reads(h, &sp->lim);
	if (!why)
		why = rw_validate_call(h);
	if (!why && h->proc == RW_MSG)
		why = rw_check_payload(h, (const uint8_t *)buf + h->hdr_len,
				       len - h->hdr_len);
	rx->why = why;
	return why;
}

/*
 * Never answer a header whose XID cannot be trusted, nor an RDMA_ERROR
 * (V1-PROC-9); never advertise a grant of 0 (AMB-V1-8).
 */
static bool rx_answerable(const struct rw_rx_call *rx, uint32_t credit)
{
	return credit && rx->why != RW_R_RUNT && rx->hdr.proc != RW_ERROR;
}

/* Codes rx's version defines.  An unsupported version gets only ERR_VERS,
 * the one layout every version shares (V1-EXT-2). */
static bool err_code_ok(const struct rw_rx_call *rx, uint32_t code)
{
	if (code == RW_ERR_VERS)
		return true;
	if (rx->why == RW_R_BAD_VERS)
		return false;
	if (rx->hdr.vers == RW_VERS_1)
		return code == RW_ERR_CHUNK;
	return rx->hdr.vers == RW_VERS_2 && code >= RW2_ERR_BAD_XDR &&
	       code <= RW2_ERR_SYSTEM;
}

static size_t err_build(const struct rw_rx_call *rx, uint32_t credit,
			uint32_t code, uint32_t arg1, uint32_t arg2, void *buf,
			size_t cap)
{
	struct rw_hdr e;

	if (!rx_answerable(rx, credit) || !err_code_ok(rx, code))
		return 0;
	rw_hdr_init(&e, rx->hdr.vers, RW_ERROR, rx->hdr.xid, credit);
	e.err.code = code;
	switch (code) {
	case RW_ERR_VERS:
		e.err.low = arg1;
		e.err.high = arg2;
		break;
	case RW2_ERR_WRITE_RESOURCE:
		e.err.chunk_index = arg1;
		e.err.length_needed = arg2;
		break;
	case RW2_ERR_REPLY_RESOURCE:
		e.err.length_needed = arg1;
		break;
	default:
		e.err.max = arg1;
		break;
	}
	return rw_hdr_encode(&e, buf, cap);
}

size_t rw_err_vers(const struct rw_rx_call *rx, uint32_t credit, uint32_t low,
		   uint32_t high, void *buf, size_t cap)
{
	return err_build(rx, credit, RW_ERR_VERS, low, high, buf, cap);
}

size_t rw_err_chunk(const struct rw_rx_call *rx, uint32_t credit, void *buf,
		    size_t cap)
{
	return err_build(rx, credit, RW_ERR_CHUNK, 0, 0, buf, cap);
}

size_t rw_err2(const struct rw_rx_call *rx, uint32_t credit, uint32_t code,
	       uint32_t arg1, uint32_t arg2, void *buf, size_t cap)
{
	if (rx->hdr.vers != RW_VERS_2 && code != RW_ERR_VERS)
		return 0;
	return err_build(rx, credit, code, arg1, arg2, buf, cap);
}

size_t rw_err_from_action(const struct rw_rx_call *rx,
			  const struct rw_action *a, uint32_t credit, void *buf,
			  size_t cap)
{
	if (a->what != RW_ACT_REPLY_ERR)
		return 0;
	return err_build(rx, credit, a->err, a->arg1, a->arg2, buf, cap);
}

/*
 * What a requester tolerates is not what a responder sends (AMB-V1-4): echo
 * every Write chunk, unused ones zeroed (V1-WC-6), send the Reply chunk only
 * when it carries the Reply (RDMA_NOMSG), and name no handle to invalidate
 * in a Reply header (AMB-V2-13).
 */
static bool reply_echo_complete(const struct rw_hdr *call,
				const struct rw_hdr *reply)
{
	if (reply->nwrites != call->nwrites)
		return false;
	if (reply->proc == RW_MSG && reply->has_reply)
		return false;
	return reply->vers != RW_VERS_2 || !reply->inv_handle;
}

size_t rw_encode_reply(const struct rw_rx_call *rx, const struct rw_hdr *reply,
		       void *buf, size_t cap)
{
	if (rx->why || reply->proc == RW_ERROR || !reply->credit)
		return 0;
	if (rw_validate_reply(&rx->hdr, reply))
		return 0;
	if ((reply->proc == RW_MSG || reply->proc == RW_NOMSG) &&
	    !reply_echo_complete(&rx->hdr, reply))
		return 0;
	return rw_hdr_encode(reply, buf, cap);
}

/* ---- Requester ------------------------------------------------------- */

size_t rw_encode_call(const struct rw_hdr *call, void *buf, size_t cap)
{
	if (call->proc == RW_ERROR || !call->credit)
		return 0;
	if (rw_validate_call(call))
		return 0;
	return rw_hdr_encode(call, buf, cap);
}

/* ---- Resending after an RDMA_ERROR ------------------------------------- */

static bool call_has_item_reads(const struct rw_hdr *call)
{
	for (uint32_t i = 0; i < call->nreads; i++)
		if (call->reads[i].position)
			return true;
	return false;
}

static uint32_t call_write_len(const struct rw_hdr *call, uint32_t i)
{
	uint32_t len = 0;

	if (i < call->nwrites)
		rw_chunk_len(&call->writes[i], &len);
	return len;
}

static struct rw_resend resend_v2(const struct rw_hdr *call,
				  const struct rw_hdr *err)
{
	struct rw_resend r = { .what = RW_RESEND_NONE };
	uint32_t have = 0;

	switch (err->err.code) {
	case RW2_ERR_READ_CHUNKS:
		/* a Call that moved nothing but its PZRC cannot do with
		 * fewer Read chunks (V2-ERR-8, AMB-V2-8) */
		if (call_has_item_reads(call))
			r.what = RW_RESEND_NO_READS;
		break;
	case RW2_ERR_WRITE_CHUNKS:
		if (err->err.max < call->nwrites) {
			r.what = RW_RESEND_WRITES;
			r.max = err->err.max;
		}
		break;
	case RW2_ERR_WRITE_RESOURCE:
		/* 1-based; 0 = the responder could not tell which */
		if (err->err.chunk_index &&
		    err->err.chunk_index <= call->nwrites &&
		    err->err.length_needed >
			    call_write_len(call, err->err.chunk_index - 1)) {
			r.what = RW_RESEND_WRITE_ROOM;
			r.index = err->err.chunk_index - 1;
			r.length = err->err.length_needed;
		}
		break;
	case RW2_ERR_REPLY_RESOURCE:
		if (call->has_reply)
			rw_chunk_len(&call->reply, &have);
		if (err->err.length_needed > have) {
			r.what = RW_RESEND_REPLY_ROOM;
			r.length = err->err.length_needed;
		}
		break;
	default: /* BAD_XDR, INVAL_PROC, SEGMENTS, INVAL_OPTION, SYSTEM */
		break;
	}
	return r;
}

struct rw_resend rw_resend_plan(const struct rw_hdr *call,
				const struct rw_hdr *err, bool negotiating,
				bool reply_unsized)
{
	struct rw_resend r = { .what = RW_RESEND_NONE };

	if (err->proc != RW_ERROR || err->xid != call->xid)
		return r;
	if (err->err.code == RW_ERR_VERS) {
		/* ERR_VERS ends an RPC, except the one that negotiates */
		if (negotiating && call->vers == RW_VERS_2 &&
		    err->err.low <= RW_VERS_1 && err->err.high >= RW_VERS_1) {
			r.what = RW_RESEND_VERS;
			r.vers = RW_VERS_1;
		}
		return r;
	}
	if (err->vers != call->vers)
		return r;
	if (call->vers == RW_VERS_2)
		return resend_v2(call, err);
	if (err->err.code == RW_ERR_CHUNK && reply_unsized)
		r.what = RW_RESEND_REPLY_ROOM;
	return r;
}
