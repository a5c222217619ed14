/*
 * hdr_ref.c - struct rw_hdr <-> rpcgen reference structs, and the reference
 * encode/decode used as an oracle by the differential test and the fuzzer.
 *
 * The v1 and v2 rpcgen types are distinct but shaped alike, so each
 * direction is written twice; the pool keeps everything off the heap on the
 * encode side.  Decoding through rpcgen allocates, and every such decode is
 * paired with xdr_free().
 */
#include <string.h>

#include "hdr_ref.h"

bool hdr_ref_is_v2(const struct rw_hdr *h)
{
	return h->vers == RW_VERS_2;
}

/* ---- rw_hdr -> rpcgen, v1 -------------------------------------------- */

static void v1_seg(const struct rw_segment *s, xdr_rdma_segment *d)
{
	d->handle = s->handle;
	d->length = s->length;
	d->offset = s->offset;
}

static void v1_lists(const struct rw_hdr *h, struct hdr_ref_pool *pool,
		     xdr_read_list **reads, xdr_write_list **writes,
		     xdr_write_chunk **reply)
{
	*reads = NULL;
	for (uint32_t i = h->nreads; i-- > 0;) {
		pool->rl1[i].entry.position = h->reads[i].position;
		v1_seg(&h->reads[i].seg, &pool->rl1[i].entry.target);
		pool->rl1[i].next = *reads;
		*reads = &pool->rl1[i];
	}
	*writes = NULL;
	for (uint32_t i = h->nwrites; i-- > 0;) {
		const struct rw_chunk *c = &h->writes[i];

		for (uint32_t j = 0; j < c->nsegs; j++)
			v1_seg(&c->segs[j], &pool->ws1[i][j]);
		pool->wl1[i].entry.target.target_len = c->nsegs;
		pool->wl1[i].entry.target.target_val = pool->ws1[i];
		pool->wl1[i].next = *writes;
		*writes = &pool->wl1[i];
	}
	*reply = NULL;
	if (h->has_reply) {
		for (uint32_t j = 0; j < h->reply.nsegs; j++)
			v1_seg(&h->reply.segs[j], &pool->rs1[j]);
		pool->rc1.target.target_len = h->reply.nsegs;
		pool->rc1.target.target_val = pool->rs1;
		*reply = &pool->rc1;
	}
}

void hdr_ref_from_v1(const struct rw_hdr *h, rdma_msg *m,
		     struct hdr_ref_pool *pool)
{
	rdma_body *b = &m->rdma_body;
	rpc_rdma_error *e = &b->rdma_body_u.rdma_error;

	memset(m, 0, sizeof(*m));
	m->rdma_xid = h->xid;
	m->rdma_vers = h->vers;
	m->rdma_credit = h->credit;
	b->proc = (rdma_proc)h->proc;
	switch (h->proc) {
	case RDMA_MSG:
		v1_lists(h, pool, &b->rdma_body_u.rdma_msg.rdma_reads,
			 &b->rdma_body_u.rdma_msg.rdma_writes,
			 &b->rdma_body_u.rdma_msg.rdma_reply);
		break;
	case RDMA_NOMSG:
		v1_lists(h, pool, &b->rdma_body_u.rdma_nomsg.rdma_reads,
			 &b->rdma_body_u.rdma_nomsg.rdma_writes,
			 &b->rdma_body_u.rdma_nomsg.rdma_reply);
		break;
	case RDMA_MSGP:
		v1_lists(h, pool, &b->rdma_body_u.rdma_msgp.rdma_reads,
			 &b->rdma_body_u.rdma_msgp.rdma_writes,
			 &b->rdma_body_u.rdma_msgp.rdma_reply);
		break;
	case RDMA_ERROR:
		e->err = (rpc_rdma_errcode)h->err.code;
		e->rpc_rdma_error_u.range.rdma_vers_low = h->err.low;
		e->rpc_rdma_error_u.range.rdma_vers_high = h->err.high;
		break;
	default:
		break;
	}
}

/* ---- rw_hdr -> rpcgen, v2 -------------------------------------------- */

static void v2_seg(const struct rw_segment *s, rpcrdma2_segment *d)
{
	d->rdma_handle = s->handle;
	d->rdma_length = s->length;
	d->rdma_offset = s->offset;
}

static void v2_lists(const struct rw_hdr *h, struct hdr_ref_pool *pool,
		     rpcrdma2_chunk_lists *cl)
{
	cl->rdma_direction = (rpcrdma2_msg_type)h->direction;
	cl->rdma_inv_handle = h->inv_handle;
	cl->rdma_reads = NULL;
	for (uint32_t i = h->nreads; i-- > 0;) {
		pool->rl2[i].rdma_entry.rdma_position = h->reads[i].position;
		v2_seg(&h->reads[i].seg, &pool->rl2[i].rdma_entry.rdma_target);
		pool->rl2[i].rdma_next = cl->rdma_reads;
		cl->rdma_reads = &pool->rl2[i];
	}
	cl->rdma_writes = NULL;
	for (uint32_t i = h->nwrites; i-- > 0;) {
		const struct rw_chunk *c = &h->writes[i];

		for (uint32_t j = 0; j < c->nsegs; j++)
			v2_seg(&c->segs[j], &pool->ws2[i][j]);
		pool->wl2[i].rdma_entry.rdma_target.rdma_target_len = c->nsegs;
		pool->wl2[i].rdma_entry.rdma_target.rdma_target_val =
			pool->ws2[i];
		pool->wl2[i].rdma_next = cl->rdma_writes;
		cl->rdma_writes = &pool->wl2[i];
	}
	cl->rdma_reply = NULL;
	if (h->has_reply) {
		for (uint32_t j = 0; j < h->reply.nsegs; j++)
			v2_seg(&h->reply.segs[j], &pool->rs2[j]);
		pool->rc2.rdma_target.rdma_target_len = h->reply.nsegs;
		pool->rc2.rdma_target.rdma_target_val = pool->rs2;
		cl->rdma_reply = &pool->rc2;
	}
}

static void v2_error(const struct rw_hdr *h, rpcrdma2_error *e)
{
	e->rdma_err = (rpcrdma2_errcode)h->err.code;
	switch (h->err.code) {
	case RDMA2_ERR_VERS:
		e->rpcrdma2_error_u.rdma_vrange.rdma_vers_low = h->err.low;
		e->rpcrdma2_error_u.rdma_vrange.rdma_vers_high = h->err.high;
		break;
	case RDMA2_ERR_READ_CHUNKS:
	case RDMA2_ERR_WRITE_CHUNKS:
		e->rpcrdma2_error_u.rdma_max_chunks = h->err.max;
		break;
	case RDMA2_ERR_SEGMENTS:
		e->rpcrdma2_error_u.rdma_max_segments = h->err.max;
		break;
	case RDMA2_ERR_WRITE_RESOURCE:
		e->rpcrdma2_error_u.rdma_writeres.rdma_chunk_index =
			h->err.chunk_index;
		e->rpcrdma2_error_u.rdma_writeres.rdma_length_needed =
			h->err.length_needed;
		break;
	case RDMA2_ERR_REPLY_RESOURCE:
		e->rpcrdma2_error_u.rdma_length_needed = h->err.length_needed;
		break;
	default:
		break;
	}
}

static void v2_propset(const struct rw_propset *ps, rpcrdma2_propset *d,
		       struct hdr_ref_pool *pool)
{
	for (uint32_t i = 0; i < ps->n; i++) {
		pool->props[i].rdma_which = ps->props[i].id;
		pool->props[i].rdma_data.rdma_data_len = ps->props[i].len;
		/* rpcgen's types are not const; encoding does not write. */
		pool->props[i].rdma_data.rdma_data_val =
			(char *)(uintptr_t)ps->props[i].data;
	}
	d->rpcrdma2_propset_len = ps->n;
	d->rpcrdma2_propset_val = pool->props;
}

static void v2_subset(const struct rw_subset *s, rpcrdma2_propsubset *d,
		      uint32 *words)
{
	for (uint32_t i = 0; i < s->nwords; i++)
		words[i] = s->words[i];
	d->rpcrdma2_propsubset_len = s->nwords;
	d->rpcrdma2_propsubset_val = words;
}

void hdr_ref_from_v2(const struct rw_hdr *h, rpcrdma2_xprt_hdr *m,
		     struct hdr_ref_pool *pool)
{
	rpcrdma2_body *b = &m->rdma_body;
	typeof(b->rpcrdma2_body_u) *u = &b->rpcrdma2_body_u;

	memset(m, 0, sizeof(*m));
	m->rdma_xid = h->xid;
	m->rdma_vers = h->vers;
	m->rdma_credit = h->credit;
	b->rdma_proc = (rpcrdma2_proc)h->proc;
	switch (h->proc) {
	case RDMA2_MSG:
	case RDMA2_NOMSG:
		v2_lists(h, pool, &b->rpcrdma2_body_u.rdma_chunks);
		break;
	case RDMA2_ERROR:
		v2_error(h, &b->rpcrdma2_body_u.rdma_error);
		break;
	case RDMA2_OPTIONAL:
		b->rpcrdma2_body_u.rdma_optional.rdma_optdir =
			(rpcrdma2_msg_type)h->opt.dir;
		b->rpcrdma2_body_u.rdma_optional.rdma_opttype = h->opt.type;
		b->rpcrdma2_body_u.rdma_optional.rdma_optinfo.rdma_optinfo_len =
			h->opt.len;
		b->rpcrdma2_body_u.rdma_optional.rdma_optinfo.rdma_optinfo_val =
			(char *)(uintptr_t)h->opt.info;
		break;
	case RDMA2_CONNPROP:
		v2_propset(&h->props, &u->rdma_connprop.rdma_start, pool);
		v2_subset(&h->subset1, &u->rdma_connprop.rdma_nochg,
			  pool->sub1);
		break;
	case RDMA2_REQPROP:
		v2_propset(&h->props, &u->rdma_reqprop.rdma_want, pool);
		break;
	case RDMA2_RESPROP:
		v2_subset(&h->subset1, &u->rdma_resprop.rdma_done, pool->sub1);
		v2_subset(&h->subset2, &u->rdma_resprop.rdma_rejected,
			  pool->sub2);
		v2_propset(&h->props, &u->rdma_resprop.rdma_other, pool);
		break;
	case RDMA2_UPDPROP:
		v2_propset(&h->props, &u->rdma_updprop.rdma_now, pool);
		break;
	default:
		break;
	}
}

size_t hdr_ref_encode(const struct rw_hdr *h, void *buf, size_t cap)
{
	static struct hdr_ref_pool pool;
	rpcrdma2_xprt_hdr m2;
	rdma_msg m1;
	bool_t ok;
	XDR x;

	xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
	if (hdr_ref_is_v2(h)) {
		hdr_ref_from_v2(h, &m2, &pool);
		ok = xdr_rpcrdma2_xprt_hdr(&x, &m2);
	} else {
		hdr_ref_from_v1(h, &m1, &pool);
		ok = xdr_rdma_msg(&x, &m1);
	}
	return ok ? xdr_getpos(&x) : 0;
}

/* ---- rpcgen (decoded) == rw_hdr -------------------------------------- */

static bool v1_seg_eq(const xdr_rdma_segment *d, const struct rw_segment *s)
{
	return d->handle == s->handle && d->length == s->length &&
	       d->offset == s->offset;
}

static bool v1_chunk_eq(const xdr_write_chunk *d, const struct rw_chunk *c)
{
	if (d->target.target_len != c->nsegs)
		return false;
	for (uint32_t j = 0; j < c->nsegs; j++)
		if (!v1_seg_eq(&d->target.target_val[j], &c->segs[j]))
			return false;
	return true;
}

static bool v1_lists_eq(const struct rw_hdr *h, const xdr_read_list *r,
			const xdr_write_list *w, const xdr_write_chunk *rc)
{
	uint32_t i = 0;

	for (; r; r = r->next, i++)
		if (i >= h->nreads ||
		    r->entry.position != h->reads[i].position ||
		    !v1_seg_eq(&r->entry.target, &h->reads[i].seg))
			return false;
	if (i != h->nreads)
		return false;
	for (i = 0; w; w = w->next, i++)
		if (i >= h->nwrites || !v1_chunk_eq(&w->entry, &h->writes[i]))
			return false;
	if (i != h->nwrites || !rc != !h->has_reply)
		return false;
	return !rc || v1_chunk_eq(rc, &h->reply);
}

static bool v1_eq(const rdma_msg *m, const struct rw_hdr *h)
{
	const rdma_body *b = &m->rdma_body;
	const rpc_rdma_error *e = &b->rdma_body_u.rdma_error;

	if (m->rdma_xid != h->xid || m->rdma_vers != h->vers ||
	    m->rdma_credit != h->credit || (uint32_t)b->proc != h->proc)
		return false;
	switch (b->proc) {
	case RDMA_MSG:
		return v1_lists_eq(h, b->rdma_body_u.rdma_msg.rdma_reads,
				   b->rdma_body_u.rdma_msg.rdma_writes,
				   b->rdma_body_u.rdma_msg.rdma_reply);
	case RDMA_NOMSG:
		return v1_lists_eq(h, b->rdma_body_u.rdma_nomsg.rdma_reads,
				   b->rdma_body_u.rdma_nomsg.rdma_writes,
				   b->rdma_body_u.rdma_nomsg.rdma_reply);
	case RDMA_ERROR:
		if ((uint32_t)e->err != h->err.code)
			return false;
		return e->err != ERR_VERS ||
		       (e->rpc_rdma_error_u.range.rdma_vers_low == h->err.low &&
			e->rpc_rdma_error_u.range.rdma_vers_high ==
				h->err.high);
	default:
		return true;
	}
}

static bool v2_seg_eq(const rpcrdma2_segment *d, const struct rw_segment *s)
{
	return d->rdma_handle == s->handle && d->rdma_length == s->length &&
	       d->rdma_offset == s->offset;
}

static bool v2_chunk_eq(const rpcrdma2_write_chunk *d, const struct rw_chunk *c)
{
	if (d->rdma_target.rdma_target_len != c->nsegs)
		return false;
	for (uint32_t j = 0; j < c->nsegs; j++)
		if (!v2_seg_eq(&d->rdma_target.rdma_target_val[j], &c->segs[j]))
			return false;
	return true;
}

static bool v2_lists_eq(const struct rw_hdr *h, const rpcrdma2_chunk_lists *cl)
{
	const rpcrdma2_read_list *r = cl->rdma_reads;
	const rpcrdma2_write_list *w = cl->rdma_writes;
	uint32_t i = 0;

	if ((uint32_t)cl->rdma_direction != h->direction ||
	    cl->rdma_inv_handle != h->inv_handle)
		return false;
	for (; r; r = r->rdma_next, i++)
		if (i >= h->nreads ||
		    r->rdma_entry.rdma_position != h->reads[i].position ||
		    !v2_seg_eq(&r->rdma_entry.rdma_target, &h->reads[i].seg))
			return false;
	if (i != h->nreads)
		return false;
	for (i = 0; w; w = w->rdma_next, i++)
		if (i >= h->nwrites ||
		    !v2_chunk_eq(&w->rdma_entry, &h->writes[i]))
			return false;
	if (i != h->nwrites || !cl->rdma_reply != !h->has_reply)
		return false;
	return !cl->rdma_reply || v2_chunk_eq(cl->rdma_reply, &h->reply);
}

static bool v2_error_eq(const rpcrdma2_error *e, const struct rw_hdr *h)
{
	if ((uint32_t)e->rdma_err != h->err.code)
		return false;
	switch (e->rdma_err) {
	case RDMA2_ERR_VERS:
		return e->rpcrdma2_error_u.rdma_vrange.rdma_vers_low ==
			       h->err.low &&
		       e->rpcrdma2_error_u.rdma_vrange.rdma_vers_high ==
			       h->err.high;
	case RDMA2_ERR_READ_CHUNKS:
	case RDMA2_ERR_WRITE_CHUNKS:
		return e->rpcrdma2_error_u.rdma_max_chunks == h->err.max;
	case RDMA2_ERR_SEGMENTS:
		return e->rpcrdma2_error_u.rdma_max_segments == h->err.max;
	case RDMA2_ERR_WRITE_RESOURCE:
		return e->rpcrdma2_error_u.rdma_writeres.rdma_chunk_index ==
			       h->err.chunk_index &&
		       e->rpcrdma2_error_u.rdma_writeres.rdma_length_needed ==
			       h->err.length_needed;
	case RDMA2_ERR_REPLY_RESOURCE:
		return e->rpcrdma2_error_u.rdma_length_needed ==
		       h->err.length_needed;
	default:
		return true;
	}
}

static bool v2_bytes_eq(u_int dlen, const char *d, uint32_t len,
			const uint8_t *s)
{
	return dlen == len && (!len || !memcmp(d, s, len));
}

static bool v2_propset_eq(const rpcrdma2_propset *d,
			  const struct rw_propset *ps)
{
	if (d->rpcrdma2_propset_len != ps->n)
		return false;
	for (uint32_t i = 0; i < ps->n; i++) {
		const rpcrdma2_propval *v = &d->rpcrdma2_propset_val[i];

		if (v->rdma_which != ps->props[i].id ||
		    !v2_bytes_eq(v->rdma_data.rdma_data_len,
				 v->rdma_data.rdma_data_val, ps->props[i].len,
				 ps->props[i].data))
			return false;
	}
	return true;
}

static bool v2_subset_eq(const rpcrdma2_propsubset *d,
			 const struct rw_subset *s)
{
	if (d->rpcrdma2_propsubset_len != s->nwords)
		return false;
	for (uint32_t i = 0; i < s->nwords; i++)
		if (d->rpcrdma2_propsubset_val[i] != s->words[i])
			return false;
	return true;
}

static bool v2_eq(const rpcrdma2_xprt_hdr *m, const struct rw_hdr *h)
{
	const rpcrdma2_body *b = &m->rdma_body;
	const rpcrdma2_optional *o = &b->rpcrdma2_body_u.rdma_optional;
	const rpcrdma2_connprop *cp = &b->rpcrdma2_body_u.rdma_connprop;
	const rpcrdma2_resprop *rp = &b->rpcrdma2_body_u.rdma_resprop;

	if (m->rdma_xid != h->xid || m->rdma_vers != h->vers ||
	    m->rdma_credit != h->credit || (uint32_t)b->rdma_proc != h->proc)
		return false;
	switch (b->rdma_proc) {
	case RDMA2_MSG:
	case RDMA2_NOMSG:
		return v2_lists_eq(h, &b->rpcrdma2_body_u.rdma_chunks);
	case RDMA2_ERROR:
		return v2_error_eq(&b->rpcrdma2_body_u.rdma_error, h);
	case RDMA2_OPTIONAL:
		return (uint32_t)o->rdma_optdir == h->opt.dir &&
		       o->rdma_opttype == h->opt.type &&
		       v2_bytes_eq(o->rdma_optinfo.rdma_optinfo_len,
				   o->rdma_optinfo.rdma_optinfo_val, h->opt.len,
				   h->opt.info);
	case RDMA2_CONNPROP:
		return v2_propset_eq(&cp->rdma_start, &h->props) &&
		       v2_subset_eq(&cp->rdma_nochg, &h->subset1);
	case RDMA2_REQPROP:
		return v2_propset_eq(&b->rpcrdma2_body_u.rdma_reqprop.rdma_want,
				     &h->props);
	case RDMA2_RESPROP:
		return v2_subset_eq(&rp->rdma_done, &h->subset1) &&
		       v2_subset_eq(&rp->rdma_rejected, &h->subset2) &&
		       v2_propset_eq(&rp->rdma_other, &h->props);
	case RDMA2_UPDPROP:
		return v2_propset_eq(&b->rpcrdma2_body_u.rdma_updprop.rdma_now,
				     &h->props);
	default:
		return false;
	}
}

bool hdr_ref_decode_matches(const void *buf, size_t len, const struct rw_hdr *h,
			    size_t *used)
{
	rpcrdma2_xprt_hdr m2;
	rdma_msg m1;
	bool same;
	XDR x;

	/* xdrmem takes a non-const buffer; decoding only reads it. */
	xdrmem_create(&x, (char *)(uintptr_t)buf, (u_int)len, XDR_DECODE);
	if (hdr_ref_is_v2(h)) {
		memset(&m2, 0, sizeof(m2));
		same = xdr_rpcrdma2_xprt_hdr(&x, &m2) && v2_eq(&m2, h);
		*used = xdr_getpos(&x);
		xdr_free((xdrproc_t)xdr_rpcrdma2_xprt_hdr, (char *)&m2);
	} else {
		memset(&m1, 0, sizeof(m1));
		same = xdr_rdma_msg(&x, &m1) && v1_eq(&m1, h);
		*used = xdr_getpos(&x);
		xdr_free((xdrproc_t)xdr_rdma_msg, (char *)&m1);
	}
	xdr_destroy(&x);
	return same;
}
