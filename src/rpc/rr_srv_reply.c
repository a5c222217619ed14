/*
 * rr_srv_reply.c - from an RPC reply to the wire, responder side of digest
 * 1.6: encode it straight into a Send buffer behind an RDMA_MSG header; if
 * it does not fit and the Call offered a Reply chunk, encode it into
 * connection memory, RDMA Write it into the Reply chunk and send an
 * RDMA_NOMSG header returning that chunk with the lengths written;
 * otherwise answer ERR_CHUNK (AMB-V1-14, S-4).  rw_plan_reply() takes the
 * decision from the actual sizes.
 *
 * Nothing is DDP-eligible without an Upper-Layer Binding, so the reply is
 * encoded unreduced and a Write list offered by the Call is returned with
 * every segment length 0, same count, handles and offsets (V1-WC-5/6,
 * AMB-V1-13).  The Read list of a reply is always empty (V1-RC-9).
 *
 * Reply memory is sized from the encoder's own estimate of the results,
 * never from the Reply chunk the peer offers, and grows (doubling, up to
 * that chunk's size) only if the estimate was short.  The Writes are posted
 * unsignalled and the Send after them, signalled: the send queue completes
 * in order, so the Send's completion says the source memory is free.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_srv_priv.h"
#include "wire/rw_plan.h"

/* Room for the RPC reply header and verifier beyond the results. */
#define RR_REPLY_SLACK 1024u
/* First size tried when the encoder cannot estimate. */
#define RR_REPLY_FIRST (64u * 1024u)

/* A reply header with the storage of its echoed chunk lists. */
struct reply_hdr {
	struct rw_hdr h;
	struct rw_chunk writes[RW_MAX_WRITE_CHUNKS];
	struct rw_segment wsegs[RW_MAX_WRITE_CHUNKS][RW_MAX_CHUNK_SEGS];
	struct rw_segment rsegs[RW_MAX_CHUNK_SEGS];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct rt_sbuf *rr_srv_sbuf_wait(struct rr_srv *s)
{
	int64_t deadline = now_ms() + RR_SEND_WAIT_MS, left;
	struct rt_sbuf *b;
	struct rt_err err;

	for (;;) {
		if (s->dead)
			return NULL;
		b = rt_sbuf_get(s->c, &err);
		if (b)
			return b;
		if (err.code != EAGAIN)
			return NULL;
		left = deadline - now_ms();
		if (left <= 0) {
			/* A reply that cannot be sent: close, so the peer
			 * learns it is lost (V1-ERR-13). */
			rr_srv_kill(s, ETIMEDOUT,
				    "no Send buffer came free within %d ms",
				    RR_SEND_WAIT_MS);
			return NULL;
		}
		if (rr_srv_wait_events(s, (int)left) < 0)
			return NULL;
	}
}

/* The Reply header for r: Write list echoed with zero lengths. */
static void hdr_init(struct reply_hdr *o, const struct rr_sreq *r,
		     uint32_t proc)
{
	const struct rw_hdr *call = &r->rx.hdr;
	uint32_t i;

	rw_hdr_init(&o->h, call->vers, proc, call->xid, 1);
	for (i = 0; i < call->nwrites; i++) {
		rw_write_chunk_return(&call->writes[i], 0, o->wsegs[i]);
		o->writes[i].nsegs = call->writes[i].nsegs;
		o->writes[i].segs = o->wsegs[i];
	}
	o->h.nwrites = call->nwrites;
	o->h.writes = o->writes;
}

static void plan_in(struct rw_reply_in *in, const struct rr_srv *s,
		    const struct rr_sreq *r, uint32_t len)
{
	const struct rw_hdr *call = &r->rx.hdr;
	uint32_t i;

	memset(in, 0, sizeof(*in));
	in->vers = call->vers;
	in->reply_inline = rt_conn_inline(s->c)->send;
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

/* Octets of the RDMA_MSG header for r. */
static uint32_t msg_hdr_len(const struct rr_sreq *r)
{
	const struct rw_hdr *call = &r->rx.hdr;
	struct rw_hdr_shape sh = { .vers = call->vers,
				   .write_chunks = call->nwrites };
	uint32_t i;

	for (i = 0; i < call->nwrites; i++)
		sh.write_segs += call->writes[i].nsegs;
	return rw_hdr_shape_len(&sh);
}

/* Run the encoder into buf[0..cap); its length in *len.  RW_XERR_OK,
 * RW_XERR_NOSPACE, or RW_XERR_BAD_ARG when the encoder itself failed. */
static enum rw_xdr_err encode(const struct rr_sreq_enc *enc, void *buf,
			      size_t cap, uint32_t *len)
{
	struct rw_rxdr x;
	bool_t ok;
	enum rw_xdr_err e;

	rw_rxdr_create(&x, buf, cap, NULL, NULL, 0);
	ok = enc->encode(&x.xdr, enc->arg);
	e = rw_rxdr_finish(&x);
	*len = rw_rxdr_reduced_len(&x);
	if (!ok && e == RW_XERR_OK)
		e = RW_XERR_BAD_ARG;
	return e;
}

/* Post b (len octets) as r's answer. */
static int post(struct rr_srv *s, struct rr_sreq *r, struct rt_sbuf *b,
		uint32_t len, bool signal)
{
	struct rt_err err;
	int ret;

	ret = rt_post_send(s->c, b, len, NULL, 0, 0, rr_srv_cookie(r),
			   signal ? RT_WR_SIGNAL : 0, &err);
	rr_srv_answered(s, r);
	if (ret) {
		rr_srv_kill(s, -ret, "%s", err.msg);
		return -ENOTCONN;
	}
	return 0;
}

/* Encode the header into the first hlen octets of b (exactly hlen). */
static int put_hdr(struct rr_srv *s, struct rr_sreq *r, struct reply_hdr *o,
		   struct rt_sbuf *b, uint32_t hlen)
{
	size_t n;

	o->h.credit = rr_srv_grant(s);
	n = rw_encode_reply(&r->rx, &o->h, rt_sbuf_data(b), hlen);
	if (n != hlen) {
		rt_sbuf_put(s->c, b);
		rr_srv_kill(s, EPROTO, "cannot encode a reply header (%zu/%u)",
			    n, hlen);
		return -ENOTCONN;
	}
	return 0;
}

/* The answer when the reply fits nowhere: ERR_CHUNK in b. */
static int no_room(struct rr_srv *s, struct rr_sreq *r, struct rt_sbuf *b)
{
	rr_srv_set_error(r, RW_ERR_CHUNK, RR_CAUSE_NO_ROOM);
	if (rr_srv_send_error(s, r, b))
		return -ENOTCONN;
	return -EMSGSIZE;
}

/* Short reply: RDMA_MSG with the payload behind the header.  -ENOSPC if it
 * does not fit (b is still ours), -EINVAL if the encoder failed. */
static int reply_inline(struct rr_srv *s, struct rr_sreq *r,
			const struct rr_sreq_enc *enc, struct rt_sbuf *b)
{
	uint32_t cap = rt_conn_inline(s->c)->send, hlen = msg_hdr_len(r), len;
	struct rw_reply_in in;
	struct reply_hdr o;
	enum rw_xdr_err e;

	if (cap > rt_sbuf_size(b))
		cap = rt_sbuf_size(b);
	if (hlen >= cap)
		return -ENOSPC;
	e = encode(enc, (uint8_t *)rt_sbuf_data(b) + hlen, cap - hlen, &len);
	if (e == RW_XERR_NOSPACE)
		return -ENOSPC;
	if (e != RW_XERR_OK) {
		rt_sbuf_put(s->c, b);
		return -EINVAL;
	}
	plan_in(&in, s, r, len);
	if (rw_plan_reply(&in) != RW_SHORT)
		return -ENOSPC;
	hdr_init(&o, r, RW_MSG);
	if (put_hdr(s, r, &o, b, hlen))
		return -ENOTCONN;
	s->st.replies_inline++;
	return post(s, r, b, hlen + len, false);
}

/* Encode the reply into connection memory: sized from the encoder's
 * estimate, doubled while short, never beyond the Reply chunk (cap). */
static enum rw_xdr_err encode_long(struct rr_srv *s,
				   const struct rr_sreq_enc *enc, uint32_t cap,
				   struct rt_lmem **mp, uint32_t *len)
{
	uint64_t size = enc->size_hint ? enc->size_hint(enc->arg) : 0;
	enum rw_xdr_err e;
	struct rt_err err;
	struct rt_lmem *m;

	size = size ? size + RR_REPLY_SLACK : RR_REPLY_FIRST;
	for (;;) {
		if (size > cap)
			size = cap;
		m = rt_lmem_alloc(s->c, (size_t)size, &err);
		if (!m)
			return RW_XERR_NOSPACE;
		e = encode(enc, rt_lmem_addr(m), (size_t)size, len);
		if (e == RW_XERR_OK) {
			*mp = m;
			return e;
		}
		rt_lmem_free(s->c, m);
		if (e != RW_XERR_NOSPACE || size >= cap)
			return e;
		size *= 2;
	}
}

/* Segments whose address range wraps cannot be written (rt_post_write
 * would refuse them half way). */
static bool chunk_sane(const struct rw_chunk *c)
{
	uint32_t i;

	for (i = 0; i < c->nsegs; i++)
		if (c->segs[i].offset + c->segs[i].length < c->segs[i].offset)
			return false;
	return true;
}

/* RDMA Write len octets of m into the Reply chunk, segment by segment,
 * never past a segment's end; the returned chunk in rsegs (V1-WC-4). */
static int write_chunk(struct rr_srv *s, const struct rw_chunk *rc,
		       struct rt_lmem *m, uint32_t len,
		       struct rw_segment *rsegs)
{
	uint8_t *base = rt_lmem_addr(m);
	uint32_t i, n, off = 0;
	struct rt_sge sge;
	struct rt_err err;
	int ret;

	if (rw_write_chunk_return(rc, len, rsegs))
		return -EMSGSIZE;
	for (i = 0; i < rc->nsegs && off < len; i++) {
		n = rsegs[i].length;
		if (!n)
			continue;
		sge = rt_lmem_sge(m, base + off, n);
		ret = rt_post_write(s->c, &sge, 1, &rc->segs[i], 0, 0, &err);
		if (ret) {
			rr_srv_kill(s, -ret, "%s", err.msg);
			return -ENOTCONN;
		}
		off += n;
	}
	return 0;
}

/* Long reply: the payload into the Reply chunk, RDMA_NOMSG header. */
static int reply_long(struct rr_srv *s, struct rr_sreq *r,
		      const struct rr_sreq_enc *enc, struct rt_sbuf *b)
{
	const struct rw_chunk *rc = &r->rx.hdr.reply;
	struct rt_lmem *m = NULL;
	struct rw_reply_in in;
	struct reply_hdr o;
	enum rw_xdr_err e;
	uint32_t cap, len;
	size_t n;
	int ret;

	plan_in(&in, s, r, 0);
	cap = in.reply_chunk_len;
	if (!cap || !chunk_sane(rc))
		return no_room(s, r, b);
	e = encode_long(s, enc, cap, &m, &len);
	if (e == RW_XERR_NOSPACE)
		return no_room(s, r, b);
	if (e != RW_XERR_OK) {
		rt_sbuf_put(s->c, b);
		return -EINVAL;
	}
	in.reduced_len = len;
	if (rw_plan_reply(&in) != RW_LONG) {
		rt_lmem_free(s->c, m);
		return no_room(s, r, b);
	}
	hdr_init(&o, r, RW_NOMSG);
	ret = write_chunk(s, rc, m, len, o.rsegs);
	if (ret) {
		rt_lmem_free(s->c, m);
		if (ret == -EMSGSIZE)
			return no_room(s, r, b);
		rt_sbuf_put(s->c, b);
		return ret;
	}
	o.h.has_reply = true;
	o.h.reply.nsegs = rc->nsegs;
	o.h.reply.segs = o.rsegs;
	o.h.credit = rr_srv_grant(s);
	n = rw_encode_reply(&r->rx, &o.h, rt_sbuf_data(b), rt_sbuf_size(b));
	if (!n) {
		rt_sbuf_put(s->c, b);
		rr_srv_kill(s, EPROTO, "cannot encode a Long reply header");
		return -ENOTCONN;
	}
	/* The source stays until the Send (after the Writes) completes. */
	r->rsrc = m;
	r->send_pending = true;
	s->st.replies_long++;
	s->st.write_chunks++;
	s->st.write_bytes += len;
	return post(s, r, b, (uint32_t)n, true);
}

int rr_sreq_reply(struct rr_srv *s, struct rr_sreq *r,
		  const struct rr_sreq_enc *enc)
{
	struct rt_sbuf *b;
	int ret;

	if (r->answered)
		return -EALREADY;
	b = rr_srv_sbuf_wait(s);
	if (!b)
		return -ENOTCONN;
	ret = reply_inline(s, r, enc, b);
	if (ret != -ENOSPC)
		return ret;
	if (!r->rx.hdr.has_reply)
		return no_room(s, r, b);
	return reply_long(s, r, enc, b);
}

void rr_sreq_fail(struct rr_srv *s, struct rr_sreq *r)
{
	struct rt_sbuf *b;

	if (r->answered)
		return;
	b = rr_srv_sbuf_wait(s);
	if (!b)
		return;
	rr_srv_set_error(r, RW_ERR_CHUNK, RR_CAUSE_BAD_MSG);
	rr_srv_send_error(s, r, b);
}

void rr_srv_on_send_done(struct rr_srv *s, struct rr_sreq *r)
{
	if (r->rsrc)
		rt_lmem_free(s->c, r->rsrc);
	r->rsrc = NULL;
	r->send_pending = false;
	if (r->state == RR_SENDING)
		rr_srv_req_put(s, r);
}
