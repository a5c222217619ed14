/*
 * rr_srv_reply.c - from an RPC reply to the wire, responder side of RFC
 * 8166 §3.5 and §3.4.5: encode it through the reducing encoder straight into a
 * Send buffer behind an RDMA_MSG header; if it does not fit and the Call
 * offered a Reply chunk, encode it into connection memory, RDMA Write it into
 * the Reply chunk and send an RDMA_NOMSG header returning that chunk with the
 * lengths written; otherwise answer ERR_CHUNK (AMB-V1-14, S-4).
 * rw_plan_reply() takes the decision from the actual sizes.
 *
 * Direct data placement of results (V1-WC-*): the caller's policy (its
 * Upper-Layer Binding) designates result items; the encoder cuts the
 * designated ones out, in body order, one per Write chunk the Call offered
 * (V1-WC-3), and item k goes into Write chunk k with exactly its length,
 * never its XDR pad (V1-WC-9/10).  The items live in the RPC layer's memory,
 * which is neither registered nor kept once the reply returns, so they are
 * copied back to back into one piece of connection memory that is kept
 * until the Send completes.  Before anything is written every item is
 * checked against its chunk (rw_write_chunk_return refuses an overrun): one
 * that does not fit gets ERR_CHUNK and no Write at all, because leaving it
 * inline would break V1-WC-2 / V1-DDP-3 for the requester.  The Write list
 * is returned in RDMA_MSG and RDMA_NOMSG alike: same count, handles and
 * offsets, the lengths written, unused chunks 0 (V1-WC-4/5/6, AMB-V1-13).
 * Without a binding (or under RPCSEC_GSS, V1-GSS-3) nothing is designated
 * and every chunk comes back empty.  The Read list of a reply is always
 * empty (V1-RC-9).
 *
 * Reply memory is sized from the encoder's own estimate of the results,
 * never from the Reply chunk the peer offers, and grows (doubling, up to
 * that chunk's size) only if the estimate was short.  The Writes are posted
 * unsignalled and the Send after them, signalled when it has sources to
 * free: the send queue completes in order, so the Send's completion says
 * the source memory is free.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_srv_conn.h"
#include "rpc/rr_srv_err.h"
#include "rpc/rr_srv_pool.h"
#include "rpc/rr_srv_replay.h"
#include "rpc/rr_srv_reply.h"
#include "wire/rw_plan.h"

/* Room for the RPC reply header and verifier beyond the results. */
#define RR_REPLY_SLACK 1024u
/* First size tried when the encoder cannot estimate. */
#define RR_SRV_REPLY_FIRST (64u * 1024u)

/* A reply header with the storage of its echoed chunk lists. */
struct reply_hdr {
	struct rw_hdr h;
	struct rw_chunk writes[RW_MAX_WRITE_CHUNKS];
	struct rw_segment wsegs[RW_MAX_WRITE_CHUNKS][RW_MAX_CHUNK_SEGS];
	struct rw_segment rsegs[RW_MAX_CHUNK_SEGS];
};

/* One encoding of the reply: the reduced payload and the result items cut
 * out of it, in body order (item k goes into Write chunk k). */
struct reply_enc {
	const struct rr_sreq_enc *enc;
	struct rw_ddp_policy pol;
	struct rw_ddp_item items[RW_MAX_WRITE_CHUNKS];
	uint32_t nitems;
	uint32_t len;	/* reduced payload octets */
	uint64_t moved; /* item octets, no pads */
};

/* The Reply header for req: Write list echoed with zero lengths (filled in
 * by items_place for the chunks that carry an item). */
static void hdr_init(struct reply_hdr *o, const struct rr_sreq *req,
		     uint32_t proc)
{
	const struct rw_hdr *call = &req->rx.hdr;
	uint32_t i;

	rw_hdr_init(&o->h, call->vers, proc, call->xid, 1);
	o->h.direction = RW_DIR_REPLY; /* v2 only (V2-DIR-2) */
	for (i = 0; i < call->nwrites; i++) {
		rw_write_chunk_return(&call->writes[i], 0, o->wsegs[i]);
		o->writes[i].nsegs = call->writes[i].nsegs;
		o->writes[i].segs = o->wsegs[i];
	}
	o->h.nwrites = call->nwrites;
	o->h.writes = o->writes;
}

/* What the requester takes inline in this Call's version: 4096 or its
 * Receive Buffer Size in v2, RFC 8797's agreement in v1. */
static uint32_t reply_threshold(const struct rr_srv *srv,
				const struct rr_sreq *req)
{
	return req->rx.hdr.vers == RW_VERS_2 && srv->v2_send ? srv->v2_send :
							       srv->cm_send;
}

static void reply_plan_in(struct rw_reply_in *in, const struct rr_srv *srv,
			  const struct rr_sreq *req, uint32_t len)
{
	const struct rw_hdr *call = &req->rx.hdr;
	uint32_t i;

	memset(in, 0, sizeof(*in));
	in->vers = call->vers;
	in->reply_inline = reply_threshold(srv, req);
	in->reduced_len = len;
	in->write_chunks = call->nwrites;
	for (i = 0; i < call->nwrites; i++)
		in->write_segs += call->writes[i].nsegs;
	in->reply_chunk = call->has_reply;
	if (call->has_reply) {
		in->reply_chunk_segs = call->reply.nsegs;
		rw_chunk_len(&call->reply, &in->reply_chunk_len);
	}
}

/* Octets of req's reply header, RDMA_MSG or (with the Reply chunk)
 * RDMA_NOMSG; the returned lengths do not change it: the chunks keep their
 * shape (V1-WC-5). */
static uint32_t hdr_len(const struct rr_sreq *req, bool nomsg)
{
	const struct rw_hdr *call = &req->rx.hdr;
	struct rw_hdr_shape sh = { .vers = call->vers,
				   .write_chunks = call->nwrites };
	uint32_t i;

	for (i = 0; i < call->nwrites; i++)
		sh.write_segs += call->writes[i].nsegs;
	if (nomsg) {
		sh.reply_chunk = true;
		sh.reply_segs = call->reply.nsegs;
	}
	return rw_hdr_shape_len(&sh);
}

/*
 * The reducing encoder's policy for req's reply: the caller's designation,
 * at most one item per Write chunk offered (V1-WC-3) and never more than
 * the item array holds, every eligible item whatever its size (V1-WC-2).
 * Without a Write list nothing moves, whatever the binding says: an item
 * has nowhere to go (and max_chunks 0 would mean "no limit").
 */
static void reply_policy(const struct rr_sreq *req,
			 const struct rr_sreq_enc *enc,
			 struct rw_ddp_policy *pol)
{
	uint32_t n = req->rx.hdr.nwrites;

	if (n > RW_MAX_WRITE_CHUNKS)
		n = RW_MAX_WRITE_CHUNKS;
	*pol = enc->ddp;
	pol->min_len = 0;
	if (!n || pol->mode == RW_DDP_NONE) {
		memset(pol, 0, sizeof(*pol));
		pol->mode = RW_DDP_NONE;
		return;
	}
	if (!pol->max_chunks || pol->max_chunks > n)
		pol->max_chunks = n;
}

/* Run the encoder into buf[0..cap): the reduced length and the items in
 * re.  RW_XERR_OK, RW_XERR_NOSPACE, or another error when the encoder
 * itself failed (RW_XERR_BAD_ARG if it failed without the stream's help). */
static enum rw_xdr_err reply_encode(struct reply_enc *re, void *buf, size_t cap)
{
	struct rw_rxdr x;
	enum rw_xdr_err e;
	uint32_t i;
	bool_t ok;

	rw_rxdr_create(&x, buf, cap, &re->pol, re->items, RW_MAX_WRITE_CHUNKS);
	ok = re->enc->encode(&x.xdr, re->enc->arg);
	e = rw_rxdr_finish(&x);
	re->len = rw_rxdr_reduced_len(&x);
	re->nitems = rw_rxdr_nitems(&x);
	re->moved = 0;
	for (i = 0; i < re->nitems; i++)
		re->moved += re->items[i].len;
	if (!ok && e == RW_XERR_OK)
		e = RW_XERR_BAD_ARG;
	return e;
}

/* The one handle every segment of the Call names, or 0. */
static uint32_t sole_handle(const struct rw_hdr *call)
{
	uint32_t h = 0, i, j;

#define SOLE(x)                    \
	do {                       \
		if (!h)            \
			h = (x);   \
		else if (h != (x)) \
			return 0;  \
	} while (0)
	for (i = 0; i < call->nreads; i++)
		SOLE(call->reads[i].seg.handle);
	for (i = 0; i < call->nwrites; i++)
		for (j = 0; j < call->writes[i].nsegs; j++)
			SOLE(call->writes[i].segs[j].handle);
	for (j = 0; call->has_reply && j < call->reply.nsegs; j++)
		SOLE(call->reply.segs[j].handle);
#undef SOLE
	return h;
}

/*
 * The handle a reply invalidates with Send With Invalidate, or 0 for a
 * plain Send.  v2: the one the Call nominated (V2-RI-3/4).  v1: when the
 * client advertised it (RFC 8797) and every segment of the Call names the
 * same handle, which the client then knows to be that one, as the Linux
 * server does.  Never without the device's support (V2-RI-5).
 */
static uint32_t reply_inv(const struct rr_srv *srv, const struct rr_sreq *req,
			  unsigned int *flags)
{
	const struct rw_hdr *call = &req->rx.hdr;

	if (srv->opts.no_remote_inv || !rt_conn_can_send_inv(srv->conn))
		return 0;
	if (call->vers == RW_VERS_2) {
		*flags |= RT_WR_INV_NOMINATED;
		return call->inv_handle;
	}
	return rt_conn_inline(srv->conn)->peer_remote_inv ? sole_handle(call) :
							    0;
}

/* The reply as sent: kind, payload octets (inline or in the Reply chunk),
 * what the Write chunks carry, the grant. */
static void reply_trace(const struct rr_srv *srv, const struct rr_sreq *req,
			const struct reply_enc *re, const char *kind,
			uint32_t credit)
{
	TR_EVENT(srv_reply, srv->trace_id, req->rx.hdr.xid,
		 "kind=%s len=%u writes=%u write_bytes=%llu credits=%u", kind,
		 re->len, re->nitems, (unsigned long long)re->moved, credit);
}

/* Post b (len octets) as req's answer; signalled when req has sources to free
 * once the Send (and so every Write before it) has completed. */
static int post(struct rr_srv *srv, struct rr_sreq *req, struct rt_sbuf *b,
		uint32_t len)
{
	bool signal = req->rsrc || req->isrc;
	unsigned int flags = signal ? RT_WR_SIGNAL : 0;
	uint32_t inv = reply_inv(srv, req, &flags);
	struct rt_err err;
	int ret;

	req->send_pending = signal;
	rr_srv_answered(srv, req); /* its Receive first (V1-CR-8) */
	ret = rt_post_send(srv->conn, b, len, NULL, 0, inv, rr_srv_cookie(req),
			   flags, &err);
	if (!ret && inv)
		srv->st.replies_inv++;
	if (ret) {
		/* Not accepted: no completion will come for it. */
		req->send_pending = false;
		rr_srv_release_reply(srv, req);
		rr_srv_kill(srv, -ret, "%s", err.msg);
		return -ENOTCONN;
	}
	return 0;
}

/* Encode the header into the first hlen octets of b (exactly hlen). */
static int put_hdr(struct rr_srv *srv, struct rr_sreq *req, struct reply_hdr *o,
		   struct rt_sbuf *b, uint32_t hlen)
{
	size_t n;

	o->h.credit = rr_srv_grant(srv);
	n = rw_encode_reply(&req->rx, &o->h, rt_sbuf_data(b), hlen);
	if (n != hlen) {
		rt_sbuf_put(srv->conn, b);
		rr_srv_kill(srv, EPROTO,
			    "cannot encode a reply header (%zu/%u)", n, hlen);
		return -ENOTCONN;
	}
	return 0;
}

/* Send the error req->err in b instead of the reply. */
static int answer_error(struct rr_srv *srv, struct rr_sreq *req,
			struct rt_sbuf *b)
{
	if (rr_srv_send_error(srv, req, b))
		return -ENOTCONN;
	return -EMSGSIZE;
}

/* Answer ERR_CHUNK (v2 BAD_XDR; SYSTEM for a fault of ours) instead of
 * the reply, counted under cause. */
static int reply_refuse(struct rr_srv *srv, struct rr_sreq *req,
			struct rt_sbuf *b, enum rr_srv_cause cause)
{
	if (cause == RR_CAUSE_SYSTEM)
		rr_srv_set_fault(req, cause);
	else
		rr_srv_set_error(req, RW_ERR_CHUNK, cause);
	return answer_error(srv, req, b);
}

static uint32_t encoded_size(const struct rr_sreq_enc *enc)
{
	unsigned long n =
		xdr_sizeof((xdrproc_t)(void (*)(void))enc->encode, enc->arg);

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/*
 * The reply does not fit what the Call offered (cause NO_ROOM), or result
 * item slot of len octets does not fit its Write chunk (WRITE_ROOM).  The
 * procedure has run: its reply is kept to answer the resend
 * (rr_srv_replay.c), and v2 says what the resend needs - REPLY_RESOURCE
 * with the length (V2-ERR-14), WRITE_RESOURCE with the 1-based chunk and
 * the length (V2-ERR-12) - where v1 can only say ERR_CHUNK (S-4, S-5).
 */
static int resource_error(struct rr_srv *srv, struct rr_sreq *req,
			  const struct reply_enc *re, struct rt_sbuf *b,
			  enum rr_srv_cause cause, uint32_t slot, uint32_t len)
{
	uint32_t need;

	if (!rr_replay_keep(srv, req, re->enc, &need))
		need = encoded_size(re->enc);
	if (req->rx.hdr.vers != RW_VERS_2)
		rr_srv_set_error(req, RW_ERR_CHUNK, cause);
	else if (cause == RR_CAUSE_WRITE_ROOM)
		rr_srv_set_error2(req, RW2_ERR_WRITE_RESOURCE, slot + 1, len,
				  cause);
	else
		rr_srv_set_error2(req, RW2_ERR_REPLY_RESOURCE, need, 0, cause);
	return answer_error(srv, req, b);
}

/* The answer when the reply fits nowhere. */
static int no_room(struct rr_srv *srv, struct rr_sreq *req,
		   const struct reply_enc *re, struct rt_sbuf *b)
{
	return resource_error(srv, req, re, b, RR_CAUSE_NO_ROOM, 0, 0);
}

/* Why items_place refused a reply, and for WRITE_ROOM which item. */
struct place_fail {
	enum rr_srv_cause cause;
	uint32_t slot;
	uint32_t len;
};

/* Answer what items_place found. */
static int place_refused(struct rr_srv *srv, struct rr_sreq *req,
			 const struct reply_enc *re, struct rt_sbuf *b,
			 const struct place_fail *f)
{
	if (f->cause == RR_CAUSE_WRITE_ROOM)
		return resource_error(srv, req, re, b, f->cause, f->slot,
				      f->len);
	return reply_refuse(srv, req, b, f->cause);
}

/* Segments whose address range wraps cannot be written (rt_post_write
 * would refuse them half way). */
static bool segs_sane(const struct rw_segment *g, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (g[i].offset + g[i].length < g[i].offset)
			return false;
	return true;
}

/*
 * Where the items go: item k into the Write chunk of its slot (V1-WC-3:
 * its rank, or the binding's mapping, RFC 8267 6.4), exactly its length,
 * no pad (V1-WC-9/10), the segments filled in order and never past one's
 * end (V1-WC-4); o's Write list gets the returned lengths, the chunks
 * left over keep 0 (V1-WC-6).  Nothing is written here.  Returns 0, or the
 * cause for refusing the reply: an item larger than its chunk, or a
 * segment it needs that wraps the address space (a malformed chunk).
 */
static int items_place(const struct rr_sreq *req, const struct reply_enc *re,
		       struct reply_hdr *o, struct place_fail *f)
{
	const struct rw_hdr *call = &req->rx.hdr;
	uint32_t k, c;

	for (k = 0; k < re->nitems; k++) {
		const struct rw_chunk *wc;

		/* reply_policy never lets the encoder go past the list, and
		 * a slot is used once (slots ascend) */
		c = re->items[k].slot;
		if (c >= call->nwrites || (k && c <= re->items[k - 1].slot)) {
			f->cause = RR_CAUSE_BAD_MSG;
			return -EINVAL;
		}
		wc = &call->writes[c];
		if (rw_write_chunk_return(wc, re->items[k].len, o->wsegs[c])) {
			f->cause = RR_CAUSE_WRITE_ROOM;
			f->slot = c;
			f->len = re->items[k].len;
			return -EMSGSIZE;
		}
		if (!segs_sane(o->wsegs[c], wc->nsegs)) {
			f->cause = RR_CAUSE_BAD_MSG;
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * RDMA Write the octets at src, in m, into the returned segments g[0..n) in
 * order, skipping empty ones; unsignalled: the Send that follows reports
 * for them (the send queue completes in order), and req's cookie names them
 * if the peer refuses one (rt_conn_peer_fault, V1-ERR-11).  -ENOTCONN on
 * failure (the connection is closed).
 */
static int post_segs(struct rr_srv *srv, struct rr_sreq *req, struct rt_lmem *m,
		     uint8_t *src, const struct rw_segment *g, uint32_t n)
{
	struct rt_sge sge;
	struct rt_err err;
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (!g[i].length)
			continue;
		sge = rt_lmem_sge(m, src, g[i].length);
		ret = rt_post_write(srv->conn, &sge, 1, &g[i],
				    rr_srv_cookie(req), 0, &err);
		if (ret) {
			rr_srv_kill(srv, -ret, "%s", err.msg);
			return -ENOTCONN;
		}
		src += g[i].length;
	}
	return 0;
}

/*
 * Copy the items back to back into one piece of connection memory - theirs
 * is the RPC layer's, unregistered and gone once the reply returns - and
 * post their Writes as items_place computed them.  The memory is req's
 * (isrc) until its Send completes.  -ENOMEM if none could be had (nothing
 * posted), -ENOTCONN.
 */
static int items_write(struct rr_srv *srv, struct rr_sreq *req,
		       const struct reply_enc *re, const struct reply_hdr *o)
{
	const struct rw_hdr *call = &req->rx.hdr;
	struct rt_lmem *m;
	struct rt_err err;
	uint8_t *p;
	uint32_t k, c;
	int ret;

	if (!re->nitems)
		return 0;
	m = rt_lmem_alloc(srv->conn, (size_t)re->moved, &err);
	if (!m)
		return -ENOMEM;
	p = rt_lmem_addr(m);
	for (k = 0; k < re->nitems; k++) {
		memcpy(p, re->items[k].data, re->items[k].len);
		p += re->items[k].len;
	}
	req->isrc = m;
	p = rt_lmem_addr(m);
	for (k = 0; k < re->nitems; k++) {
		c = re->items[k].slot;
		ret = post_segs(srv, req, m, p, o->wsegs[c],
				call->writes[c].nsegs);
		if (ret)
			return ret;
		p += re->items[k].len;
	}
	srv->st.write_chunks += re->nitems;
	srv->st.write_bytes += re->moved;
	srv->st.ddp_copies += re->nitems;
	srv->st.ddp_copy_bytes += re->moved;
	return 0;
}

/* items_write failed after the header was built into b: answer ERR_CHUNK
 * (v2 SYSTEM) if it only lacked memory, else give up (the connection is
 * closed). */
static int items_failed(struct rr_srv *srv, struct rr_sreq *req,
			struct rt_sbuf *b, int ret)
{
	rr_srv_release_reply(srv, req);
	if (ret == -ENOMEM)
		return reply_refuse(srv, req, b, RR_CAUSE_SYSTEM);
	rt_sbuf_put(srv->conn, b);
	return ret;
}

/* Short reply: RDMA_MSG with the (reduced) payload behind the header.
 * -ENOSPC if it does not fit (b is still ours), -EINVAL if the encoder
 * failed. */
static int reply_inline(struct rr_srv *srv, struct rr_sreq *req,
			struct reply_enc *re, struct rt_sbuf *b)
{
	uint32_t cap = reply_threshold(srv, req), hlen = hdr_len(req, false);
	struct place_fail fail;
	struct rw_reply_in in;
	struct reply_hdr o;
	enum rw_xdr_err e;
	int ret;

	if (cap > rt_sbuf_size(b))
		cap = rt_sbuf_size(b);
	if (hlen >= cap)
		return -ENOSPC;
	e = reply_encode(re, (uint8_t *)rt_sbuf_data(b) + hlen, cap - hlen);
	if (e == RW_XERR_NOSPACE)
		return -ENOSPC;
	if (e != RW_XERR_OK) {
		rt_sbuf_put(srv->conn, b);
		return -EINVAL;
	}
	reply_plan_in(&in, srv, req, re->len);
	if (rw_plan_reply(&in) != RW_SHORT)
		return -ENOSPC;
	hdr_init(&o, req, RW_MSG);
	if (items_place(req, re, &o, &fail))
		return place_refused(srv, req, re, b, &fail);
	if (put_hdr(srv, req, &o, b, hlen))
		return -ENOTCONN;
	ret = items_write(srv, req, re, &o);
	if (ret)
		return items_failed(srv, req, b, ret);
	srv->st.replies_inline++;
	srv->st.inline_bytes += re->len;
	ret = post(srv, req, b, hlen + re->len);
	if (!ret)
		reply_trace(srv, req, re, re->nitems ? "chunked" : "short",
			    o.h.credit);
	return ret;
}

/* Encode the reply into connection memory: sized from the encoder's
 * estimate, doubled while short, never beyond the Reply chunk (cap). */
static enum rw_xdr_err encode_long(struct rr_srv *srv, struct reply_enc *re,
				   uint32_t cap, struct rt_lmem **mp)
{
	const struct rr_sreq_enc *enc = re->enc;
	uint64_t size = enc->size_hint ? enc->size_hint(enc->arg) : 0;
	enum rw_xdr_err e;
	struct rt_err err;
	struct rt_lmem *m;

	size = size ? size + RR_REPLY_SLACK : RR_SRV_REPLY_FIRST;
	for (;;) {
		if (size > cap)
			size = cap;
		m = rt_lmem_alloc(srv->conn, (size_t)size, &err);
		if (!m)
			return RW_XERR_NOSPACE;
		e = reply_encode(re, rt_lmem_addr(m), (size_t)size);
		if (e == RW_XERR_OK) {
			*mp = m;
			return e;
		}
		rt_lmem_free(srv->conn, m);
		if (e != RW_XERR_NOSPACE || size >= cap)
			return e;
		size *= 2;
	}
}

/* The RDMA_NOMSG header returning the Reply chunk (rsegs already set) and
 * the Write list, into b: its length, or 0 (connection closed, b freed). */
static size_t put_long_hdr(struct rr_srv *srv, struct rr_sreq *req,
			   struct reply_hdr *o, struct rt_sbuf *b)
{
	const struct rw_chunk *rc = &req->rx.hdr.reply;
	size_t n;

	o->h.has_reply = true;
	o->h.reply.nsegs = rc->nsegs;
	o->h.reply.segs = o->rsegs;
	o->h.credit = rr_srv_grant(srv);
	n = rw_encode_reply(&req->rx, &o->h, rt_sbuf_data(b), rt_sbuf_size(b));
	if (!n) {
		rt_sbuf_put(srv->conn, b);
		rr_srv_kill(srv, EPROTO, "cannot encode a Long reply header");
	}
	return n;
}

/* Long reply: the (reduced) payload into the Reply chunk, RDMA_NOMSG
 * header. */
static int reply_long(struct rr_srv *srv, struct rr_sreq *req,
		      struct reply_enc *re, struct rt_sbuf *b)
{
	const struct rw_chunk *rc = &req->rx.hdr.reply;
	struct place_fail fail;
	struct rt_lmem *m = NULL;
	struct rw_reply_in in;
	struct reply_hdr o;
	enum rw_xdr_err e;
	uint32_t cap;
	size_t n;
	int ret;

	reply_plan_in(&in, srv, req, 0);
	cap = in.reply_chunk_len;
	/* rw_plan_reply() does not ask whether the RDMA_NOMSG header itself
	 * fits inline: a long Write list can make it too large to send. */
	if (!cap || !segs_sane(rc->segs, rc->nsegs) ||
	    hdr_len(req, true) > in.reply_inline ||
	    hdr_len(req, true) > rt_sbuf_size(b))
		return no_room(srv, req, re, b);
	e = encode_long(srv, re, cap, &m);
	if (e == RW_XERR_NOSPACE)
		return no_room(srv, req, re, b);
	if (e != RW_XERR_OK) {
		rt_sbuf_put(srv->conn, b);
		return -EINVAL;
	}
	in.reduced_len = re->len;
	hdr_init(&o, req, RW_NOMSG);
	/* Never past the Reply chunk's end (AMB-V1-14, V1-WC-4). */
	if (rw_plan_reply(&in) != RW_LONG ||
	    rw_write_chunk_return(rc, re->len, o.rsegs)) {
		rt_lmem_free(srv->conn, m);
		return no_room(srv, req, re, b);
	}
	if (items_place(req, re, &o, &fail)) {
		rt_lmem_free(srv->conn, m);
		return place_refused(srv, req, re, b, &fail);
	}
	n = put_long_hdr(srv, req, &o, b);
	req->rsrc = m;
	if (!n) {
		rr_srv_release_reply(srv, req);
		return -ENOTCONN;
	}
	ret = items_write(srv, req, re, &o);
	if (!ret)
		ret = post_segs(srv, req, m, rt_lmem_addr(m), o.rsegs,
				rc->nsegs);
	if (ret)
		return items_failed(srv, req, b, ret);
	/* The sources stay until the Send (after the Writes) completes. */
	srv->st.replies_long++;
	srv->st.reply_chunks++;
	srv->st.reply_bytes += re->len;
	ret = post(srv, req, b, (uint32_t)n);
	if (!ret)
		reply_trace(srv, req, re, "long", o.h.credit);
	return ret;
}

int rr_sreq_reply(struct rr_srv *srv, struct rr_sreq *req,
		  const struct rr_sreq_enc *enc)
{
	int ret;

	pthread_mutex_lock(&srv->lock);
	ret = rr_srv_reply(srv, req, enc);
	pthread_mutex_unlock(&srv->lock);
	return ret;
}

int rr_srv_reply(struct rr_srv *srv, struct rr_sreq *req,
		 const struct rr_sreq_enc *enc)
{
	struct reply_enc re = { .enc = enc };
	struct rt_sbuf *b;
	int ret;

	if (req->answered)
		return -EALREADY;
	b = rr_srv_sbuf_wait(srv);
	if (!b)
		return -ENOTCONN;
	reply_policy(req, enc, &re.pol);
	ret = reply_inline(srv, req, &re, b);
	if (ret != -ENOSPC)
		return ret;
	if (!req->rx.hdr.has_reply)
		return no_room(srv, req, &re, b);
	return reply_long(srv, req, &re, b);
}

void rr_sreq_fail(struct rr_srv *srv, struct rr_sreq *req)
{
	struct rt_sbuf *b;

	pthread_mutex_lock(&srv->lock);
	if (!req->answered) {
		b = rr_srv_sbuf_wait(srv);
		if (b) {
			rr_srv_set_error(req, RW_ERR_CHUNK, RR_CAUSE_BAD_MSG);
			rr_srv_send_error(srv, req, b);
		}
	}
	pthread_mutex_unlock(&srv->lock);
}

void rr_srv_on_send_done(struct rr_srv *srv, struct rr_sreq *req)
{
	rr_srv_release_reply(srv, req);
	req->send_pending = false;
	if (req->state == RR_SENDING)
		rr_srv_req_put(srv, req);
}
