/*
 * red_codec.c - the one copy of the unit tests' encode/decode helpers over
 * red_prog.x (see red_codec.h): oracle and reduced encodings, their
 * comparison, Read/Write chunk lists and the reassembling decodes.  The
 * suites differ only in what they ask of these, which is passed in.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "red_codec.h"
#include "red_fixture.h"
#include "red_msg.h"

void rc_enc_free(struct rc_enc *e)
{
	free(e->buf);
	e->buf = NULL;
}

bool rc_put_call(XDR *x, void *obj, xdrproc_t proc, uint32_t nr)
{
	return red_put_call(x, RED_XID, nr, authnone_create(), proc, obj);
}

bool rc_put_reply(XDR *x, void *obj, xdrproc_t proc, uint32_t nr)
{
	(void)nr;
	return red_put_reply(x, RED_XID, proc, obj);
}

void rc_ref_encode(struct rc_enc *e, rc_put_fn put, xdrproc_t proc, void *obj,
		   uint32_t nr, size_t cap)
{
	XDR x;

	memset(e, 0, sizeof(*e));
	e->cap = cap;
	e->buf = red_xmalloc(cap);
	xdrmem_create(&x, (char *)e->buf, (u_int)cap, XDR_ENCODE);
	ck_assert(put(&x, obj, proc, nr));
	e->len = e->ulen = XDR_GETPOS(&x);
	XDR_DESTROY(&x);
}

void rc_red_encode(struct rc_enc *e, rc_put_fn put, xdrproc_t proc, void *obj,
		   uint32_t nr, size_t cap, const struct rw_ddp_policy *pol)
{
	struct rw_rxdr r;

	memset(e, 0, sizeof(*e));
	e->cap = cap;
	e->buf = red_xmalloc(cap);
	ck_assert(rw_rxdr_create(&r, e->buf, cap, pol, e->items, RC_MAX_ITEMS));
	ck_assert_msg(put(&r.xdr, obj, proc, nr), "encode: %s",
		      rw_xdr_err_str(rw_rxdr_error(&r)));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	e->len = rw_rxdr_reduced_len(&r);
	e->ulen = rw_rxdr_unreduced_len(&r);
	e->body = rw_rxdr_body_pos(&r);
	e->nitems = rw_rxdr_nitems(&r);
	ck_assert_uint_eq(XDR_GETPOS(&r.xdr), e->len);
}

void rc_mixed_encode(struct red_mixed_store *s, size_t n, rc_put_fn put,
		     uint32_t nr, const struct rw_ddp_policy *pol,
		     struct rc_enc *ref, struct rc_enc *red)
{
	red_mixed_make(s, n);
	rc_ref_encode(ref, put, (xdrproc_t)xdr_red_mixed, &s->m, nr,
		      red_mixed_cap(n));
	rc_red_encode(red, put, (xdrproc_t)xdr_red_mixed, &s->m, nr,
		      red_mixed_cap(n), pol);
}

void rc_mixed_free(struct red_mixed_store *s, struct rc_enc *ref,
		   struct rc_enc *red)
{
	rc_enc_free(red);
	rc_enc_free(ref);
	red_mixed_free(s);
}

void rc_check_items(const struct rc_enc *red, const struct rc_enc *ref,
		    unsigned what)
{
	unsigned char *u = red_xmalloc(ref->len);
	enum rw_xdr_err err;
	uint32_t n, cut = 0;
	unsigned i;

	ck_assert_uint_eq(red->ulen, ref->len);
	for (i = 0; i < red->nitems; i++) {
		const struct rw_ddp_item *it = &red->items[i];
		uint32_t p;

		ck_assert_uint_eq(it->position % 4, 0);
		ck_assert_uint_le((uint64_t)it->position + it->len, ref->len);
		ck_assert(!memcmp(ref->buf + it->position, it->data, it->len));
		for (p = it->position + it->len; p % 4; p++)
			ck_assert_uint_eq(ref->buf[p], 0);
		if ((what & RC_ITEMS_ASCEND) && i)
			ck_assert_uint_gt(it->position,
					  red->items[i - 1].position);
		if (what & RC_ITEMS_CUTS) {
			/* cut out of the reduced payload where the oracle
			 * had it */
			ck_assert_uint_eq(it->cut, it->position - cut);
			cut += rc_round4(it->len);
		}
	}
	if (what & RC_ITEMS_CUTS)
		ck_assert_uint_eq(red->len, ref->len - cut);
	n = rw_ddp_unreduce(red->buf, red->len, red->items, red->nitems, u,
			    ref->len, &err);
	ck_assert_int_eq(err, RW_XERR_OK);
	ck_assert_uint_eq(n, ref->len);
	ck_assert(!memcmp(u, ref->buf, n));
	free(u);
}

void rc_check_reencodes(rc_put_fn put, xdrproc_t proc, void *obj, uint32_t nr,
			const struct rc_enc *ref)
{
	struct rc_enc again;

	rc_ref_encode(&again, put, proc, obj, nr, ref->len + 64);
	ck_assert_uint_eq(again.len, ref->len);
	ck_assert(!memcmp(again.buf, ref->buf, ref->len));
	rc_enc_free(&again);
}

void rc_rchunks_make(struct rc_rchunks *rc, const struct rc_enc *red,
		     unsigned how)
{
	unsigned i;

	memset(rc, 0, sizeof(*rc));
	for (i = 0; i < red->nitems; i++) {
		const struct rw_ddp_item *it = &red->items[i];
		uint32_t len = it->len;
		const unsigned char *data = it->data;

		if (how & (RC_RCH_COPY | RC_RCH_PAD)) {
			/* room for the pad, zeroed, whether or not the
			 * chunk includes it */
			rc->copy[i] = red_xmalloc(rc_round4(len));
			memset(rc->copy[i], 0, rc_round4(len));
			memcpy(rc->copy[i], data, len);
			data = rc->copy[i];
		}
		if (how & RC_RCH_PAD)
			len = rc_round4(len);
		rc->c[i].position = it->position;
		rc->c[i].segs = rc->s[i];
		if ((how & RC_RCH_SPLIT) && len > 1) {
			rc->s[i][0].data = data;
			rc->s[i][0].len = len / 2;
			rc->s[i][1].data = data + len / 2;
			rc->s[i][1].len = len - len / 2;
			rc->c[i].nsegs = 2;
		} else {
			rc->s[i][0].data = data;
			rc->s[i][0].len = len;
			rc->c[i].nsegs = 1;
		}
	}
	rc->n = red->nitems;
}

void rc_rchunks_free(struct rc_rchunks *rc)
{
	unsigned i;

	for (i = 0; i < rc->n; i++)
		free(rc->copy[i]);
}

void rc_wchunks_make(struct rc_wchunks *wc, const struct rc_enc *red,
		     unsigned nchunks)
{
	unsigned i;

	memset(wc, 0, sizeof(*wc));
	ck_assert_uint_le(nchunks, RC_MAX_ITEMS);
	for (i = 0; i < nchunks; i++) {
		wc->c[i].nsegs = 1;
		wc->c[i].segs = &wc->s[i];
	}
	for (i = 0; i < red->nitems; i++) {
		const struct rw_ddp_item *it = &red->items[i];

		ck_assert_uint_lt(it->slot, nchunks);
		ck_assert_ptr_null(wc->mem[it->slot]);
		wc->mem[it->slot] = red_xmalloc(it->len);
		memcpy(wc->mem[it->slot], it->data, it->len);
		wc->s[it->slot].data = wc->mem[it->slot];
		wc->s[it->slot].len = it->len;
	}
	wc->n = nchunks;
}

void rc_wchunks_free(struct rc_wchunks *wc)
{
	unsigned i;

	/* all of them: a test may have rearranged c, s and n */
	for (i = 0; i < RC_MAX_ITEMS; i++)
		free(wc->mem[i]);
}

enum rw_xdr_err rc_decode_call(const void *pay, uint32_t len,
			       const struct rw_ddp_chunk *c, unsigned n,
			       const struct rw_ddp_policy *pol, xdrproc_t proc,
			       void *obj)
{
	struct rw_axdr a;
	struct rpc_msg m;
	struct red_cred_area ca;

	if (!rw_axdr_create(&a, pay, len, RW_AXDR_READ, c, n, pol))
		return rw_axdr_error(&a);
	if (!red_get_call(&a.xdr, &m, &ca, proc, obj))
		return rw_axdr_error(&a) ? rw_axdr_error(&a) : RC_DEC_REFUSED;
	ck_assert_uint_eq(m.rm_xid, RED_XID);
	return rw_axdr_finish(&a);
}

enum rw_xdr_err rc_decode_reply(const void *pay, uint32_t len,
				const struct rw_ddp_chunk *c, unsigned n,
				const struct rw_ddp_policy *pol, xdrproc_t proc,
				void *obj, struct rw_axdr *a)
{
	if (!rw_axdr_create(a, pay, len, RW_AXDR_WRITE, c, n, pol))
		return rw_axdr_error(a);
	if (!red_get_reply(&a->xdr, proc, obj))
		return rw_axdr_error(a) ? rw_axdr_error(a) : RC_DEC_REFUSED;
	return rw_axdr_finish(a);
}
