/*
 * rr_recv.c - the Receive path of the requester: every event the connection
 * reports is dispatched here - a Reply (or RDMA_ERROR) to its call, matched
 * by XID, a backward Call to rr_bc.c, the server's properties and a death
 * to the connection (rr_clnt.c).
 *
 * A Reply is looked at in this order (RFC 8166 §4.5, V1-ERR-1): transport
 * header decoded (a refused one: rw_reply_action() says discard or fail
 * the XID, V1-ERR-4, V1-ERR-10), XID matched to a call of this connection,
 * header checked against what that Call offered (rw_validate_reply), inline
 * payload's XID checked (V1-HDR-2).  Nothing of the payload is used before
 * that, and nothing of a Reply chunk before the call's memory is fenced
 * (rr_call.c).
 *
 * It sits above every requester file but rr_life.c, so it calls them all
 * directly; the files below that must drain a connection (the waiting
 * leader, a call, a connection change) reach rr_recv_drain() through the
 * rr_clnt's drain hook (rr_drain(), rr_wait.c).
 */
#include <errno.h>
#include <string.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

/* ---- Dispatch ----------------------------------------------------------- */

static void repost(struct rr_conn *conn, struct rt_rbuf *b)
{
	if (b)
		rt_recv_repost(conn->rt, b);
}

/* A header we refuse: discard it, or end the call it names for good. */
static void recv_refuse(struct rr_clnt *rr, struct rr_call *call,
			const struct rw_hdr *h, enum rw_reason why)
{
	struct rw_action a = rw_reply_action(call ? &call->hdr : NULL, h, why);

	if (a.what != RW_ACT_FAIL_XID || !call) {
		rr->st.discarded++;
		return;
	}
	rr->st.rdma_errors++;
	rr->st.err_chunk++;
	TR_EVENT(bad_reply, call->conn->trace_id, call->xid, "reason=%s",
		 rw_reason_str(why));
	call->grant = h->credit;
	rr_res_set(&call->res, RR_ERR_CHUNK, EREMOTEIO,
		   "RPC-over-RDMA error from the server for XID 0x%08x: %s",
		   call->xid, rw_reason_str(why));
	rr_call_complete(rr, call);
}

static void take_error(struct rr_clnt *rr, struct rr_call *call,
		       const struct rw_hdr *h)
{
	/* counted by rr_call once it knows whether the error is final */
	call->grant = h->credit;
	call->errh = *h; /* what a resend may change (rr_call.c) */
	TR_EVENT(rdma_error, call->conn->trace_id, call->xid,
		 "code=%u err=%s low=%u high=%u credits=%u", h->err.code,
		 rw_err_str(h->vers, h->err.code), h->err.low, h->err.high,
		 h->credit);
	rr_conn_oneway_done(call->conn, call);
	if (h->err.code == RW_ERR_VERS) {
		rr_res_set(
			&call->res, RR_ERR_VERS, EPROTONOSUPPORT,
			"the server does not speak RPC-over-RDMA version %u (it supports %u to %u)",
			call->hdr.vers, h->err.low, h->err.high);
		call->res.vers_low = h->err.low;
		call->res.vers_high = h->err.high;
	} else {
		rr_res_set(
			&call->res, RR_ERR_CHUNK, EREMOTEIO,
			"the server refused the call's transport header or could not send the reply (RDMA_ERROR %u: %s)",
			h->err.code, rw_err_str(h->vers, h->err.code));
	}
	rr_call_complete(rr, call);
}

/* The Reply taken for call (before it completes: an abandoned call is
 * finished then): its kind, payload octets, what its Write chunks carried
 * and the grant. */
static void recv_trace_reply(const struct rr_call *call, const struct rw_hdr *h,
			     uint32_t len)
{
	uint64_t wbytes = 0;
	uint32_t i, used = 0;

	for (i = 0; i < call->nwrites; i++) {
		wbytes += call->wlen[i];
		used += call->wlen[i] != 0;
	}
	TR_EVENT(reply, call->conn->trace_id, call->xid,
		 "kind=%s len=%u writes=%u write_bytes=%llu credits=%u",
		 h->proc == RW_NOMSG ? "long" :
		 used		     ? "chunked" :
				       "short",
		 len, used, (unsigned long long)wbytes, h->credit);
}

/* RDMA_MSG: the Reply is inline after the header, in the Receive. */
static bool take_inline(struct rr_clnt *rr, struct rr_call *call,
			const struct rw_hdr *h, const struct rt_event *ev)
{
	const uint8_t *p = (const uint8_t *)ev->data + h->hdr_len;
	uint32_t n = ev->len - h->hdr_len;

	if (rw_check_payload(h, p, n) != RW_R_OK) {
		rr->st.discarded++;
		return false;
	}
	call->grant = h->credit;
	call->rbuf = ev->rbuf;
	call->payload = p;
	call->plen = n;
	rr_conn_settled(rr, call->conn);
	rr_conn_oneway_done(call->conn, call);
	rr_call_take_writes(rr, call, h);
	rr->st.replies++;
	rr->st.inline_bytes += n;
	recv_trace_reply(call, h, n);
	rr_call_complete(rr, call);
	return true;
}

/* RDMA_NOMSG: the Reply is in the Reply chunk, one contiguous run from its
 * start: segments are filled in order, so only the last one written may be
 * short.  Its XID is checked once the chunk is fenced. */
static bool take_long(struct rr_clnt *rr, struct rr_call *call,
		      const struct rw_hdr *h)
{
	bool partial = false;
	uint64_t total = 0;
	uint32_t i, len;

	for (i = 0; i < h->reply.nsegs; i++) {
		len = h->reply.segs[i].length;
		if (partial && len) {
			rr->st.discarded++;
			return false;
		}
		partial = len < call->reply_segs[i].length;
		total += len;
	}
	call->grant = h->credit;
	call->payload = call->reply_buf;
	call->plen = (uint32_t)total;
	rr_conn_settled(rr, call->conn);
	rr_conn_oneway_done(call->conn, call);
	rr_call_take_writes(rr, call, h);
	rr->st.replies++;
	rr->st.long_replies++;
	rr->st.reply_bytes += total;
	recv_trace_reply(call, h, (uint32_t)total);
	rr_call_complete(rr, call);
	return true;
}

/*
 * A message in the backward direction: the server as requester (RFC
 * 8167, v2-05 §7.2.2).  Its properties (CONNPROP, UPDPROP: one-way) are
 * applied; an RPC Call goes to the backward service (rr_bc.c); anything else is
 * dropped and counted.
 */
static void recv_backward(struct rr_clnt *rr, struct rr_conn *conn,
			  const struct rw_hdr *h, const struct rt_event *ev)
{
	if (h->vers == RW_VERS_2 &&
	    (h->proc == RW2_CONNPROP || h->proc == RW2_UPDPROP)) {
		rr_conn_peer_props(rr, conn, h);
		return;
	}
	if (h->proc == RW_MSG) {
		rr_bc_take(rr, conn, h, (const uint8_t *)ev->data + h->hdr_len,
			   ev->len - h->hdr_len);
		return;
	}
	rr->st.bc_dropped++;
}

static bool is_backward(const struct rw_hdr *h, const struct rt_event *ev)
{
	return rw_hdr_direction(h, (const uint8_t *)ev->data + h->hdr_len,
				ev->len - h->hdr_len) == RW_DIR_CALL;
}

static void recv_reply(struct rr_clnt *rr, struct rr_conn *conn,
		       const struct rt_event *ev)
{
	struct rr_call *call = NULL;
	enum rw_reason why;
	struct rw_hdr h;
	bool kept = false;

	why = rw_hdr_decode(ev->data, ev->len, &h, &rr->hsp);
	if (why == RW_R_OK && is_backward(&h, ev)) {
		recv_backward(rr, conn, &h, ev);
		rt_recv_repost(conn->rt, ev->rbuf);
		return;
	}
	if (why == RW_R_OK || ev->len >= RW_FIXED_LEN)
		call = rr_xid_find(rr, h.xid);
	if (call && (call->conn != conn || call->state == RR_S_DONE))
		call = NULL; /* not a call waiting on this connection */
	if (why == RW_R_OK && !call)
		rr->st.unknown_xid++;
	if (why == RW_R_OK && call)
		why = rw_validate_reply(&call->hdr, &h);
	if (why != RW_R_OK) {
		recv_refuse(rr, call, &h, why);
	} else if (call) {
		if ((ev->wc_flags & RT_WC_WITH_INV) &&
		    ev->inv_rkey != call->inv_handle)
			rr->st.foreign_inv++;
		if (h.proc == RW_ERROR)
			take_error(rr, call, &h);
		else if (h.proc == RW_MSG)
			kept = take_inline(rr, call, &h, ev);
		else if (h.proc == RW_NOMSG)
			take_long(rr, call, &h);
		else
			rr->st.discarded++;
	}
	if (!kept)
		repost(conn, ev->rbuf);
}

static bool recv_dispatch(struct rr_clnt *rr, struct rr_conn *conn,
			  const struct rt_event *ev)
{
	switch (ev->type) {
	case RT_EV_RECV:
		recv_reply(rr, conn, ev);
		return false;
	case RT_EV_DEAD:
		return true;
	default:
		return false; /* nothing is posted signalled */
	}
}

/*
 * Dispatching can finish an abandoned call, which uses the connection and
 * would drain again: a nested drain of the same connection only asks the
 * running one to look once more.
 */
void rr_recv_drain(struct rr_clnt *rr, struct rr_conn *conn, bool full)
{
	struct rt_event ev[RR_EV_BATCH];
	bool dead = false;
	int n, i;

	if (conn->lost)
		return;
	if (conn->draining) {
		conn->redrain = true;
		return;
	}
	conn->draining = true;
	do {
		conn->redrain = false;
		/* The fd's sources once; then what completes meanwhile. */
		n = full ? rt_conn_poll(conn->rt, ev, RR_EV_BATCH, 0) :
			   rt_conn_collect(conn->rt, ev, RR_EV_BATCH);
		full = false;
		for (i = 0; i < n; i++)
			dead |= recv_dispatch(rr, conn, &ev[i]);
	} while (n == RR_EV_BATCH || (n > 0 && conn->redrain));
	conn->draining = false;
	if (dead || n < 0 || rt_conn_state(conn->rt) == RT_CONN_DEAD)
		rr_conn_lost(rr, conn);
}
