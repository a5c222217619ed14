/*
 * rr_srv_recv.c - from a Receive to a ready request (digest 1.5, 1.7,
 * 1.10): the message is copied out and its Receive posted again, decoded
 * and checked by the wire layer, answered with the RDMA_ERROR it calls for
 * or dropped, its Read chunks pulled by RDMA Read within the connection's
 * budget, and its decode stream built over the inline payload or the PZRC
 * plus the item chunks.
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
#include <stdlib.h>
#include <string.h>

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
static int map_chunks(struct rr_sreq *r)
{
	const uint8_t *base = r->sink ? rt_lmem_addr(r->sink) : NULL;
	struct rw_read_iter it;
	struct rw_read_chunk c;
	uint64_t off = 0;

	r->nchunks = 0;
	rw_read_iter_init(&it, &r->rx.hdr);
	while (rw_read_iter_next(&it, &c) > 0) {
		if (!base) /* nothing pulled: every chunk is empty */
			return c.position ? -EINVAL : 0;
		if (c.position == 0) {
			r->payload = base + off;
			r->plen = c.length;
		} else {
			if (r->nchunks >= RW_MAX_READ_CHUNKS)
				return -E2BIG;
			r->segs[r->nchunks].data = base + off;
			r->segs[r->nchunks].len = c.length;
			r->chunks[r->nchunks].position = c.position;
			r->chunks[r->nchunks].nsegs = 1;
			r->chunks[r->nchunks].segs = &r->segs[r->nchunks];
			r->nchunks++;
		}
		off += c.length;
	}
	return 0;
}

/*
 * All of r is here: build its stream and make it ready, or refuse it.  The
 * stream starts with no argument item eligible: which ones are depends on
 * the procedure, known only once the caller has decoded the RPC header
 * (rr_sreq_set_ddp).  Until then a Read chunk at an item fails the decode
 * (V1-DDP-1): nothing is placed without an Upper-Layer Binding.
 */
static void make_ready(struct rr_srv *s, struct rr_sreq *r)
{
	static const struct rw_ddp_policy none = { .mode = RW_DDP_NONE };
	const struct rw_hdr *h = &r->rx.hdr;

	r->payload = NULL;
	r->plen = 0;
	if (h->proc == RW_MSG) {
		r->payload = r->msg + h->hdr_len;
		r->plen = r->len - h->hdr_len;
	}
	if (map_chunks(r))
		goto bad;
	/* A Long Call's XID is checked once its payload is here (V1-HDR-2). */
	if (h->proc == RW_NOMSG && rw_check_payload(h, r->payload, r->plen))
		goto bad;
	if (!rw_axdr_create(&r->ax, r->payload, r->plen, RW_AXDR_READ,
			    r->chunks, r->nchunks, &none))
		goto bad;
	if (h->proc == RW_MSG)
		s->st.inline_bytes += r->plen;
	s->vers_seen = h->vers;
	if (h->vers == RW_VERS_2 && !s->v2_send)
		rr_srv_v2_limits(s);
	r->replay = rr_replay_take(s, r);
	r->state = RR_READY;
	rr_srv_q_push(&s->ready, r);
	return;
bad:
	/* Chunk positions or the pulled payload do not fit the message:
	 * an XDR error in the Call (V1-ERR-7, AMB-V1-10). */
	rr_srv_release_sink(s, r);
	rr_srv_set_error(r, RW_ERR_CHUNK, RR_CAUSE_BAD_MSG);
	rr_srv_queue_error(s, r);
}

/* ---- Read chunks ------------------------------------------------------- */

/*
 * What r asks us to pull, checked before anything is allocated: the sum of
 * every Read segment, and no segment whose address range wraps.  -E2BIG
 * over max_read_bytes, -EINVAL for a wrapping segment.
 */
static int pull_size(const struct rr_srv *s, const struct rr_sreq *r,
		     uint64_t *total)
{
	const struct rw_hdr *h = &r->rx.hdr;
	uint32_t i;

	*total = 0;
	for (i = 0; i < h->nreads; i++) {
		const struct rw_segment *g = &h->reads[i].seg;

		if (g->offset + g->length < g->offset)
			return -EINVAL;
		*total += g->length;
	}
	return *total > s->opts.max_read_bytes ? -E2BIG : 0;
}

/* Read every segment into the sink, in list order; only the last one
 * that moves data reports (an RC send queue completes in order). */
static int post_reads(struct rr_srv *s, struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;
	uint8_t *base = rt_lmem_addr(r->sink);
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
		sge = rt_lmem_sge(r->sink, base + off, g->length);
		ret = rt_post_read(s->c, &sge, 1, g, rr_srv_cookie(r),
				   i == last ? RT_WR_SIGNAL : 0, &err);
		if (ret) {
			rr_srv_kill(s, -ret, "%s", err.msg);
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

static void start_pull(struct rr_srv *s, struct rr_sreq *r)
{
	struct rt_err err;

	if (!rt_conn_ord(s->c)) {
		/* The peer accepts no RDMA Read: its chunks cannot be
		 * pulled. */
		rr_srv_set_fault(r, RR_CAUSE_SYSTEM);
		rr_srv_queue_error(s, r);
		return;
	}
	r->sink = rt_lmem_alloc(s->c, r->pull_len, &err);
	if (!r->sink) {
		rr_srv_set_fault(r, RR_CAUSE_SYSTEM);
		rr_srv_queue_error(s, r);
		return;
	}
	s->pull_held += r->pull_len;
	r->state = RR_PULLING;
	if (post_reads(s, r))
		return; /* the connection is closed */
	s->st.read_chunks += count_chunks(&r->rx.hdr);
	s->st.read_bytes += r->pull_len;
}

void rr_srv_start_pulls(struct rr_srv *s)
{
	struct rr_sreq *r;

	while ((r = s->wait_pull.head) && !s->dead) {
		if (s->pull_held &&
		    s->pull_held + r->pull_len > s->opts.max_read_bytes)
			break;
		start_pull(s, rr_srv_q_pop(&s->wait_pull));
	}
}

void rr_srv_on_read_done(struct rr_srv *s, struct rr_sreq *r, int status)
{
	/* A failed Read ended the connection; the sink stays until the
	 * transport frees it with the connection. */
	if (status)
		return;
	make_ready(s, r);
}

/* ---- Receive ----------------------------------------------------------- */

static bool copy_msg(struct rr_sreq *r, const struct rt_event *ev)
{
	uint8_t *m;

	if (ev->len > r->msg_cap) {
		m = realloc(r->msg, ev->len);
		if (!m)
			return false;
		r->msg = m;
		r->msg_cap = ev->len;
	}
	/* A 0-octet Send is a runt for classify(); a fresh request has no
	 * buffer, and memcpy() with NULL is undefined even for 0 octets. */
	if (ev->len)
		memcpy(r->msg, ev->data, ev->len);
	r->len = ev->len;
	return true;
}

/* An RDMA_MSG carrying an RPC Reply: a backward-direction Reply (digest
 * 1.14), told by msg_type in v1 and rdma_direction in v2 (a v2 Reply is
 * refused as a Call only for its direction). */
static bool is_reply(const struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;

	return (r->rx.why == RW_R_OK ||
		(h->vers == RW_VERS_2 && r->rx.why == RW_R_DIR_MISMATCH)) &&
	       h->proc == RW_MSG &&
	       rw_hdr_direction(h, r->msg + h->hdr_len, r->len - h->hdr_len) ==
		       RW_DIR_REPLY;
}

/* r is a Call we answer: count it, and refuse a peer over its credits
 * (V1-CR-4; V1-CR-5 allows dropping the connection). */
static bool count_inflight(struct rr_srv *s, struct rr_sreq *r)
{
	uint32_t target = rt_conn_srv_credits(s->c)->target;

	r->counted = true;
	if (++s->st.inflight > s->st.max_inflight)
		s->st.max_inflight = s->st.inflight;
	if (s->st.inflight <= target)
		return true;
	rr_srv_kill(s, EPROTO, "peer exceeded its %u credits", target);
	return false;
}

/* A Call accepted for service: how it came (kind as the requester
 * planned it), what its Read list brings and what it offers for the
 * reply. */
static void trace_call(const struct rr_srv *s, const struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;
	uint32_t reply = 0;

	if (h->has_reply)
		rw_chunk_len(&h->reply, &reply);
	TR_EVENT(srv_call, s->trace_id, h->xid,
		 "kind=%s vers=%u len=%u read_segs=%u read_bytes=%llu "
		 "writes=%u reply_chunk=%u",
		 h->proc == RW_NOMSG ? "long" :
		 h->nreads	     ? "chunked" :
				       "short",
		 h->vers, r->len, h->nreads, (unsigned long long)r->pull_len,
		 h->nwrites, reply);
}

/* Decode and sort a received message. */
static void classify(struct rr_srv *s, struct rr_sreq *r)
{
	enum rw_reason why = rw_recv_call(r->msg, r->len, &r->rx, &r->sp);
	struct rw_action a = rw_reason_action(RW_ROLE_RESPONDER, r->rx.hdr.vers,
					      why, &r->sp.lim);
	int ret;

	if (is_reply(r)) {
		/* never a forward Call, whatever its XID (V1-BD-1) */
		if (!rr_srv_bc_reply(s, r)) {
			s->st.discarded++;
			rr_srv_req_put(s, r);
		}
		return;
	}
	if (a.what == RW_ACT_DISCARD) {
		s->st.discarded++; /* runt, RDMA_ERROR (V1-PROC-9) ... */
		rr_srv_req_put(s, r);
		return;
	}
	if (!count_inflight(s, r)) {
		rr_srv_req_put(s, r);
		return;
	}
	if (rr_srv_take_control(s, r))
		return; /* properties: answered, queued or done */
	if (a.what == RW_ACT_REPLY_ERR) {
		/* ERR_VERS with the range we speak, or ERR_CHUNK */
		r->err = a;
		r->cause = RR_CAUSE_HDR;
		rr_srv_queue_error(s, r);
		return;
	}
	if (a.what != RW_ACT_ACCEPT) {
		/* GARBAGE_ARGS cannot come from a header alone */
		rr_srv_set_error(r, RW_ERR_CHUNK, RR_CAUSE_HDR);
		rr_srv_queue_error(s, r);
		return;
	}
	/* It failed before: ERR_CHUNK (V1-ERR-11). */
	if (rr_srv_xid_refuse(s, r))
		return;
	ret = pull_size(s, r, &r->pull_len);
	if (ret == -E2BIG) {
		rr_srv_set_fault(r, RR_CAUSE_TOO_BIG);
		r->pull_len = 0;
		rr_srv_queue_error(s, r);
		return;
	}
	if (ret) {
		rr_srv_set_error(r, RW_ERR_CHUNK, RR_CAUSE_BAD_MSG);
		r->pull_len = 0;
		rr_srv_queue_error(s, r);
		return;
	}
	trace_call(s, r);
	if (!r->pull_len) {
		make_ready(s, r);
		return;
	}
	r->state = RR_WAIT_PULL;
	rr_srv_q_push(&s->wait_pull, r);
}

void rr_srv_on_recv(struct rr_srv *s, const struct rt_event *ev)
{
	struct rr_sreq *r = rr_srv_req_get(s);
	bool ok = r && copy_msg(r, ev);

	/* Post the buffer again before anything can answer this message,
	 * so that the answer's grant counts it (V1-CR-8). */
	rt_recv_repost(s->c, ev->rbuf);
	if (!ok) {
		if (r)
			rr_srv_req_put(s, r);
		if (s->nall >= s->max_reqs)
			rr_srv_kill(s, EPROTO,
				    "peer exceeded its credits (%u requests)",
				    s->nall);
		else
			rr_srv_kill(s, ENOMEM, "out of memory for a request");
		return;
	}
	classify(s, r);
}
