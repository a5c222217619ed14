/*
 * rr_srv_recv.c - from a Receive to a ready request (RFC 8166 §3.4, §3.4.5,
 * §4.5): the message is decoded where it arrived (its Receive is posted
 * again when it is answered, rr_srv_pool.c), checked by the wire layer,
 * answered with the RDMA_ERROR it calls for or dropped, its Read chunks
 * pulled by RDMA Read within the connection's budget, and its decode
 * stream built over the inline payload or the PZRC plus the item chunks.
 *
 * Peer-claimed sizes: the Read chunks' total is compared with
 * max_read_bytes before any memory is taken for them (V1-SEC-4), each
 * segment's address range is checked not to wrap, and the sink is exactly
 * the claimed total.  A Call that may be pulled waits until the memory the
 * connection already holds for earlier Calls, plus its own, fits the same
 * budget: one connection never holds more than max_read_bytes of pulled
 * data (or one Call's worth).
 */
#include <errno.h>

#include "rpc/rr_srv_bc.h"
#include "rpc/rr_srv_conn.h"
#include "rpc/rr_srv_ctl.h"
#include "rpc/rr_srv_err.h"
#include "rpc/rr_srv_pool.h"
#include "rpc/rr_srv_recv.h"
#include "rpc/rr_srv_replay.h"
#include "rpc/rr_srv_xidlog.h"

/* ---- The decode stream ------------------------------------------------- */

/*
 * The pulled data lies in the sink chunk after chunk, in Read-list order.
 * The PZRC (position 0, first by rw_validate_call) is the payload of an
 * RDMA_NOMSG Call; every other chunk is inserted at its position by the
 * reassembling decoder, which also supplies a missing pad (V1-RC-8).
 */
static int map_chunks(struct rr_sreq *req)
{
	const uint8_t *base = req->sink ? rt_lmem_addr(req->sink) : NULL;
	struct rw_read_iter it;
	struct rw_read_chunk c;
	uint64_t off = 0;

	req->nchunks = 0;
	rw_read_iter_init(&it, &req->rx.hdr);
	while (rw_read_iter_next(&it, &c) > 0) {
		if (!base) /* nothing pulled: every chunk is empty */
			return c.position ? -EINVAL : 0;
		if (c.position == 0) {
			req->payload = base + off;
			req->plen = c.length;
		} else {
			if (req->nchunks >= RW_MAX_READ_CHUNKS)
				return -E2BIG;
			req->segs[req->nchunks].data = base + off;
			req->segs[req->nchunks].len = c.length;
			req->chunks[req->nchunks].position = c.position;
			req->chunks[req->nchunks].nsegs = 1;
			req->chunks[req->nchunks].segs =
				&req->segs[req->nchunks];
			req->nchunks++;
		}
		off += c.length;
	}
	return 0;
}

/*
 * All of req is here: build its stream and make it ready, or refuse it.  The
 * stream starts with no argument item eligible: which ones are depends on
 * the procedure, known only once the caller has decoded the RPC header
 * (rr_sreq_set_ddp).  Until then a Read chunk at an item fails the decode
 * (V1-DDP-1): nothing is placed without an Upper-Layer Binding.
 */
static void make_ready(struct rr_srv *srv, struct rr_sreq *req)
{
	static const struct rw_ddp_policy none = { .mode = RW_DDP_NONE };
	const struct rw_hdr *h = &req->rx.hdr;

	req->payload = NULL;
	req->plen = 0;
	if (h->proc == RW_MSG) {
		req->payload = req->msg + h->hdr_len;
		req->plen = req->len - h->hdr_len;
	}
	if (map_chunks(req))
		goto bad;
	/* A Long Call's XID is checked once its payload is here (V1-HDR-2). */
	if (h->proc == RW_NOMSG && rw_check_payload(h, req->payload, req->plen))
		goto bad;
	if (!rw_axdr_create(&req->ax, req->payload, req->plen, RW_AXDR_READ,
			    req->chunks, req->nchunks, &none))
		goto bad;
	if (h->proc == RW_MSG) {
		req->ax_on_msg = true; /* read in the Receive buffer */
		srv->st.inline_bytes += req->plen;
	}
	srv->vers_seen = h->vers;
	if (h->vers == RW_VERS_2 && !srv->v2_send)
		rr_srv_v2_limits(srv);
	req->replay = rr_replay_take(srv, req);
	req->state = RR_READY;
	rr_srv_q_push(&srv->ready, req);
	return;
bad:
	/* Chunk positions or the pulled payload do not fit the message:
	 * an XDR error in the Call (V1-ERR-7, AMB-V1-10). */
	rr_srv_release_sink(srv, req);
	rr_srv_set_error(req, RW_ERR_CHUNK, RR_CAUSE_BAD_MSG);
	rr_srv_queue_error(srv, req);
}

/* ---- Read chunks ------------------------------------------------------- */

/*
 * What req asks us to pull, checked before anything is allocated: the sum of
 * every Read segment, and no segment whose address range wraps.  -E2BIG
 * over max_read_bytes, -EINVAL for a wrapping segment.
 */
static int pull_size(const struct rr_srv *srv, const struct rr_sreq *req,
		     uint64_t *total)
{
	const struct rw_hdr *h = &req->rx.hdr;
	uint32_t i;

	*total = 0;
	for (i = 0; i < h->nreads; i++) {
		const struct rw_segment *g = &h->reads[i].seg;

		if (g->offset + g->length < g->offset)
			return -EINVAL;
		*total += g->length;
	}
	return *total > srv->opts.max_read_bytes ? -E2BIG : 0;
}

/* Read every segment into the sink, in list order; only the last one
 * that moves data reports (an RC send queue completes in order). */
static int post_reads(struct rr_srv *srv, struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;
	uint8_t *base = rt_lmem_addr(req->sink);
	uint32_t i, last = 0;
	uint64_t off = 0;
	struct rt_sge sge;
	struct rt_err err;
	int ret;

	for (i = 0; i < h->nreads; i++)
		if (h->reads[i].seg.length)
			last = i;
	for (i = 0; i < h->nreads; i++) {
		const struct rw_segment *g = &h->reads[i].seg;

		if (!g->length)
			continue;
		sge = rt_lmem_sge(req->sink, base + off, g->length);
		ret = rt_post_read(srv->conn, &sge, 1, g, rr_srv_cookie(req),
				   i == last ? RT_WR_SIGNAL : 0, &err);
		if (ret) {
			rr_srv_kill(srv, -ret, "%s", err.msg);
			return ret;
		}
		off += g->length;
	}
	return 0;
}

static uint32_t count_chunks(const struct rw_hdr *h)
{
	struct rw_read_iter it;
	struct rw_read_chunk c;
	uint32_t n = 0;

	rw_read_iter_init(&it, h);
	while (rw_read_iter_next(&it, &c) > 0)
		n++;
	return n;
}

static void start_pull(struct rr_srv *srv, struct rr_sreq *req)
{
	struct rt_err err;

	if (!rt_conn_ord(srv->conn)) {
		/* The peer accepts no RDMA Read: its chunks cannot be
		 * pulled. */
		rr_srv_set_fault(req, RR_CAUSE_SYSTEM);
		rr_srv_queue_error(srv, req);
		return;
	}
	req->sink = rt_lmem_alloc(srv->conn, req->pull_len, &err);
	if (!req->sink) {
		rr_srv_set_fault(req, RR_CAUSE_SYSTEM);
		rr_srv_queue_error(srv, req);
		return;
	}
	srv->pull_held += req->pull_len;
	req->state = RR_PULLING; /* its completion comes in that state */
	srv->pulling++;
	if (post_reads(srv, req))
		return; /* the connection is closed */
	srv->st.read_chunks += count_chunks(&req->rx.hdr);
	srv->st.read_bytes += req->pull_len;
	/* How many Calls' Reads are posted at once, and the limit they are
	 * held to: the pipelining of Read chunks, seen from outside. */
	TR_EVENT(srv_pull, srv->trace_id, req->rx.hdr.xid,
		 "bytes=%llu pulling=%u held=%llu limit=%llu",
		 (unsigned long long)req->pull_len, srv->pulling,
		 (unsigned long long)srv->pull_held,
		 (unsigned long long)srv->opts.max_read_bytes);
}

void rr_srv_start_pulls(struct rr_srv *srv)
{
	struct rr_sreq *req;

	while ((req = srv->wait_pull.head) && !srv->dead) {
		if (srv->pull_held &&
		    srv->pull_held + req->pull_len > srv->opts.max_read_bytes)
			break;
		start_pull(srv, rr_srv_q_pop(&srv->wait_pull));
	}
}

void rr_srv_on_read_done(struct rr_srv *srv, struct rr_sreq *req, int status)
{
	if (srv->pulling)
		srv->pulling--;
	TR_EVENT(srv_pulled, srv->trace_id, req->rx.hdr.xid,
		 "status=%d pulling=%u", status, srv->pulling);
	/* A failed Read ended the connection; the sink stays until the
	 * transport frees it with the connection. */
	if (status)
		return;
	make_ready(srv, req);
}

/* ---- Receive ----------------------------------------------------------- */

/* An RDMA_MSG carrying an RPC Reply: a backward-direction Reply (RFC
 * 8167), told by msg_type in v1 and rdma_direction in v2 (a v2 Reply is
 * refused as a Call only for its direction). */
static bool is_reply(const struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;

	return (req->rx.why == RW_R_OK ||
		(h->vers == RW_VERS_2 && req->rx.why == RW_R_DIR_MISMATCH)) &&
	       h->proc == RW_MSG &&
	       rw_hdr_direction(h, req->msg + h->hdr_len,
				req->len - h->hdr_len) == RW_DIR_REPLY;
}

/* req is a Call we answer: count it, and refuse a peer over its credits
 * (V1-CR-4; V1-CR-5 allows dropping the connection).  A peer with half
 * its grant in flight is given more Receives, up to the configured
 * credits, so that the next grant is larger (rt_conn_recv_grow): early,
 * because calls already answered when the last of a burst is counted do
 * not show how many the peer keeps outstanding. */
static bool count_inflight(struct rr_srv *srv, struct rr_sreq *req)
{
	uint32_t target = rt_conn_srv_credits(srv->conn)->target;

	req->counted = true;
	if (++srv->st.inflight > srv->st.max_inflight)
		srv->st.max_inflight = srv->st.inflight;
	if (srv->st.inflight == (target + 1) / 2)
		rt_conn_recv_grow(srv->conn);
	if (srv->st.inflight <= target)
		return true;
	rr_srv_kill(srv, EPROTO, "peer exceeded its %u credits", target);
	return false;
}

/* A Call accepted for service: how it came (kind as the requester
 * planned it), what its Read list brings and what it offers for the
 * reply. */
static void srv_recv_trace_call(const struct rr_srv *srv,
				const struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;
	uint32_t reply = 0;

	if (h->has_reply)
		rw_chunk_len(&h->reply, &reply);
	TR_EVENT(srv_call, srv->trace_id, h->xid,
		 "kind=%s vers=%u len=%u read_segs=%u read_bytes=%llu "
		 "writes=%u reply_chunk=%u",
		 h->proc == RW_NOMSG ? "long" :
		 h->nreads	     ? "chunked" :
				       "short",
		 h->vers, req->len, h->nreads,
		 (unsigned long long)req->pull_len, h->nwrites, reply);
}

/* Decode and sort a received message. */
static void classify(struct rr_srv *srv, struct rr_sreq *req)
{
	enum rw_reason why =
		rw_recv_call(req->msg, req->len, &req->rx, &req->sp);
	struct rw_action a = rw_reason_action(RW_ROLE_RESPONDER,
					      req->rx.hdr.vers, why,
					      &req->sp.lim);
	int ret;

	if (is_reply(req)) {
		/* never a forward Call, whatever its XID (V1-BD-1) */
		if (!rr_srv_bc_reply(srv, req)) {
			srv->st.discarded++;
			rr_srv_req_put(srv, req);
		}
		return;
	}
	if (a.what == RW_ACT_DISCARD) {
		srv->st.discarded++; /* runt, RDMA_ERROR (V1-PROC-9) ... */
		rr_srv_req_put(srv, req);
		return;
	}
	if (!count_inflight(srv, req)) {
		rr_srv_req_put(srv, req);
		return;
	}
	if (rr_srv_take_control(srv, req))
		return; /* properties: answered, queued or done */
	if (a.what == RW_ACT_REPLY_ERR) {
		/* ERR_VERS with the range we speak, or ERR_CHUNK */
		req->err = a;
		req->cause = RR_CAUSE_HDR;
		rr_srv_queue_error(srv, req);
		return;
	}
	if (a.what != RW_ACT_ACCEPT) {
		/* GARBAGE_ARGS cannot come from a header alone */
		rr_srv_set_error(req, RW_ERR_CHUNK, RR_CAUSE_HDR);
		rr_srv_queue_error(srv, req);
		return;
	}
	/* It failed before: ERR_CHUNK (V1-ERR-11). */
	if (rr_srv_xid_refuse(srv, req))
		return;
	ret = pull_size(srv, req, &req->pull_len);
	if (ret == -E2BIG) {
		rr_srv_set_fault(req, RR_CAUSE_TOO_BIG);
		req->pull_len = 0;
		rr_srv_queue_error(srv, req);
		return;
	}
	if (ret) {
		rr_srv_set_error(req, RW_ERR_CHUNK, RR_CAUSE_BAD_MSG);
		req->pull_len = 0;
		rr_srv_queue_error(srv, req);
		return;
	}
	srv_recv_trace_call(srv, req);
	if (!req->pull_len) {
		make_ready(srv, req);
		return;
	}
	req->state = RR_WAIT_PULL;
	rr_srv_q_push(&srv->wait_pull, req);
}

void rr_srv_on_recv(struct rr_srv *srv, const struct rt_event *ev)
{
	struct rr_sreq *req = rr_srv_req_get(srv);

	if (!req) {
		rt_recv_repost(srv->conn, ev->rbuf);
		if (srv->nall >= srv->max_reqs)
			rr_srv_kill(srv, EPROTO,
				    "peer exceeded its credits (%u requests)",
				    srv->nall);
		else
			rr_srv_kill(srv, ENOMEM, "out of memory for a request");
		return;
	}
	/* Lent until req is answered or put (rr_srv_release_recv) */
	req->msg = ev->data;
	req->len = ev->len;
	req->rbuf = ev->rbuf;
	classify(srv, req);
}
