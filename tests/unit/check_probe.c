/*
 * check_probe.c - the probe stream (rw_pxdr), rw_rxdr_peek_word /
 * rw_rxdr_body_pos and rw_axdr_set_policy (src/wire/rw_xdr.h; V1-WC-3 item
 * order, V1-DDP-1 eligibility).
 *
 * Messages come from real rpcgen code (tests/unit/red_prog.x).  The oracle
 * for the probe is the reducing encoder run over the same structure with
 * the same policy and the body begun at once: both must name the same
 * items, with the same ordinals, pointers and lengths.  The oracle for
 * rw_rxdr_peek_word is a plain xdrmem encoding of the same message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "wire/rw_xdr.h"
#include "red_msg.h"
#include "red_fixture.h"
#include "red_codec.h"
#include "check_util.h"

#define PR_MAX	    16
#define MIXED_ITEMS 8 /* body items of a full red_mixed */

static const struct rw_ddp_policy pr_all = { .mode = RW_DDP_ALL };
static const struct rw_ddp_policy pr_none = { .mode = RW_DDP_NONE };

/* ---------------------------------------------------------------------- */
/* helpers                                                                 */

/* What an item is expected to be: ordinal, the caller's pointer, length. */
struct pr_exp {
	uint32_t ordinal;
	uint32_t len;
	const void *data;
};

/* The body items of a full red_mixed (every item non-empty), in order. */
static void pr_mixed_expect(const struct red_mixed_store *s, struct pr_exp *e)
{
	unsigned i;

	e[0] = (struct pr_exp){ 0, s->m.blob.red_blob_len,
				s->m.blob.red_blob_val };
	e[1] = (struct pr_exp){ 1, (uint32_t)strlen(s->m.name), s->m.name };
	e[2] = (struct pr_exp){ 2, 6, s->m.tag };
	e[3] = (struct pr_exp){ 3, s->opt.body.red_blob_len,
				s->opt.body.red_blob_val };
	for (i = 0; i < 3; i++)
		e[4 + i] = (struct pr_exp){ 4 + i, s->list[i].red_blob_len,
					    s->list[i].red_blob_val };
	e[7] = (struct pr_exp){ 7, s->m.last.red_blob_len,
				s->m.last.red_blob_val };
}

/* Keep the expected items the policy designates. */
static unsigned pr_filter(const struct pr_exp *all, unsigned n,
			  const struct rw_ddp_policy *pol, struct pr_exp *out)
{
	unsigned i, k = 0;

	for (i = 0; i < n; i++)
		if (rw_ddp_designated(pol, all[i].ordinal))
			out[k++] = all[i];
	return k;
}

/*
 * The reducing encoder over the bare xdrproc, body begun at offset 0: the
 * items it moves are the ones the probe must find.  Returns their number.
 */
static unsigned pr_rxdr_items(xdrproc_t proc, void *obj,
			      const struct rw_ddp_policy *pol, size_t cap,
			      struct rw_ddp_item *items)
{
	unsigned char *buf = red_xmalloc(cap);
	struct rw_rxdr r;
	unsigned n;

	ck_assert(rw_rxdr_create(&r, buf, cap, pol, items, PR_MAX));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert_uint_eq(rw_rxdr_body_pos(&r), 0);
	ck_assert_msg(proc(&r.xdr, obj), "rxdr encode: %s",
		      rw_xdr_err_str(rw_rxdr_error(&r)));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	n = rw_rxdr_nitems(&r);
	free(buf);
	return n;
}

/* Probe with room for PR_MAX items; asserts the xdrproc ran to its end. */
static unsigned pr_probe(xdrproc_t proc, void *obj,
			 const struct rw_ddp_policy *pol,
			 struct rw_probe_item *found)
{
	struct rw_pxdr p;

	rw_pxdr_create(&p, pol, found, PR_MAX);
	ck_assert_msg(proc(&p.xdr, obj), "probe walk stopped early");
	return rw_pxdr_found(&p);
}

/* The probe found exactly exp[0..n), and the reducing encoder agrees. */
static void pr_check_found(const struct rw_probe_item *found, unsigned nfound,
			   const struct pr_exp *exp, unsigned n,
			   const struct rw_ddp_item *ritems, unsigned nr)
{
	unsigned i;

	ck_assert_uint_eq(nfound, n);
	ck_assert_uint_eq(nr, n);
	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(found[i].ordinal, exp[i].ordinal);
		ck_assert_uint_eq(found[i].len, exp[i].len);
		ck_assert_ptr_eq(found[i].data, exp[i].data);
		/* same ordinal, pointer and length as the reducing encoder */
		ck_assert_uint_eq(found[i].ordinal, ritems[i].ordinal);
		ck_assert_uint_eq(found[i].len, ritems[i].len);
		ck_assert_ptr_eq(found[i].data, ritems[i].data);
		if (i)
			ck_assert_uint_gt(found[i].ordinal,
					  found[i - 1].ordinal);
	}
}

/* Probe and reduce obj with pol (cap for the encoding): exp[0..n) found. */
static void pr_check_proc(xdrproc_t proc, void *obj,
			  const struct rw_ddp_policy *pol, size_t cap,
			  const struct pr_exp *exp, unsigned n)
{
	struct rw_probe_item found[PR_MAX];
	struct rw_ddp_item ritems[PR_MAX];
	unsigned nf, nr;

	nf = pr_probe(proc, obj, pol, found);
	nr = pr_rxdr_items(proc, obj, pol, cap, ritems);
	pr_check_found(found, nf, exp, n, ritems, nr);
}

/* Probe and reduce a red_mixed with pol; compare with the expected items. */
static void pr_mixed_check(struct red_mixed_store *s, size_t n,
			   const struct rw_ddp_policy *pol)
{
	struct pr_exp all[MIXED_ITEMS], exp[MIXED_ITEMS];
	unsigned ne;

	pr_mixed_expect(s, all);
	ne = pr_filter(all, MIXED_ITEMS, pol, exp);
	pr_check_proc((xdrproc_t)xdr_red_mixed, &s->m, pol, red_mixed_cap(n),
		      exp, ne);
}

/* ---------------------------------------------------------------------- */
/* rw_pxdr                                                                 */

static const size_t pr_sizes[] = { 1, 3, 4, 5, 100, 4096 };
#define PR_NSIZES (sizeof(pr_sizes) / sizeof(pr_sizes[0]))

/*
 * V1-WC-3: with RW_DDP_ALL every non-empty body item of red_mixed is found
 * in body order - blob, the string<> name, the fixed tag, the optional
 * body, the three list entries, last - with the structure's own pointers
 * and lengths and the ordinals the reducing encoder gives them.
 */
START_TEST(test_v1_wc_3_probe_all_items_in_body_order)
{
	size_t n = pr_sizes[_i];
	struct red_mixed_store s;

	red_mixed_make(&s, n);
	pr_mixed_check(&s, n, &pr_all);
	red_mixed_free(&s);
}
END_TEST

/*
 * V1-WC-3 with RW_DDP_ITEMS: only the designated ordinals are found, still
 * in order, and still numbered as the reducing encoder numbers them.
 */
START_TEST(test_v1_wc_3_probe_item_masks)
{
	static const uint64_t masks[] = {
		RW_DDP_ITEM(0),
		RW_DDP_ITEM(7),
		RW_DDP_ITEM(0) | RW_DDP_ITEM(3) | RW_DDP_ITEM(5) |
			RW_DDP_ITEM(7),
		RW_DDP_ITEM(1) | RW_DDP_ITEM(2),
		RW_DDP_ITEM(4) | RW_DDP_ITEM(6),
		RW_DDP_ITEM(6) | RW_DDP_ITEM(8) | RW_DDP_ITEM(63),
		0,
	};
	struct red_mixed_store s;
	unsigned i, j;

	for (j = 0; j < PR_NSIZES; j++) {
		red_mixed_make(&s, pr_sizes[j]);
		for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
			struct rw_ddp_policy pol = {
				.mode = RW_DDP_ITEMS,
				.mask = masks[i],
			};

			pr_mixed_check(&s, pr_sizes[j], &pol);
		}
		red_mixed_free(&s);
	}
}
END_TEST

/*
 * The other red_prog shapes: red_read_res (results of NFS READ: the data
 * is item 0 after an optional attr run and two words), red_two_args (a and
 * b), red_write_args (fh 0, data 1).
 */
START_TEST(test_v1_wc_3_probe_read_res_two_args_write_args)
{
	static const struct rw_ddp_policy only1 = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(1),
	};
	struct rw_probe_item found[PR_MAX];
	struct rw_ddp_item ritems[PR_MAX];
	struct pr_exp exp[2];
	red_attr attr = { 1, 2, 3, 4, 5, 6 };
	red_read_res rr;
	red_two_args t;
	red_write_args w;
	char data[6001], a[5], b[10], fh[32];
	unsigned nf, nr, pass;

	red_fill(data, sizeof(data), 1);
	red_fill(fh, sizeof(fh), 4);

	for (pass = 0; pass < 2; pass++) {
		memset(&rr, 0, sizeof(rr));
		rr.attr = pass ? &attr : NULL;
		rr.count = 6001;
		rr.eof = TRUE;
		rr.data.data_len = 6001;
		rr.data.data_val = data;
		exp[0] = (struct pr_exp){ 0, 6001, data };
		nf = pr_probe((xdrproc_t)xdr_red_read_res, &rr, &pr_all, found);
		nr = pr_rxdr_items((xdrproc_t)xdr_red_read_res, &rr, &pr_all,
				   256, ritems);
		pr_check_found(found, nf, exp, 1, ritems, nr);
		/* the data is where the xdrmem encoding has it */
		ck_assert_uint_eq(ritems[0].position,
				  pass ? 4 + 28 + 12 : 4 + 12);
	}

	red_two_make(&t, a, b);
	exp[0] = (struct pr_exp){ 0, 5, a };
	exp[1] = (struct pr_exp){ 1, 10, b };
	pr_check_proc((xdrproc_t)xdr_red_two_args, &t, &pr_all, 512, exp, 2);
	pr_check_proc((xdrproc_t)xdr_red_two_args, &t, &only1, 512, exp + 1, 1);

	red_write_make(&w, fh, data, 6001);
	exp[0] = (struct pr_exp){ 0, 32, fh };
	exp[1] = (struct pr_exp){ 1, 6001, data };
	pr_check_proc((xdrproc_t)xdr_red_write_args, &w, &pr_all, 256, exp, 2);
	pr_check_proc((xdrproc_t)xdr_red_write_args, &w, &only1, 256, exp + 1,
		      1);
}
END_TEST

/*
 * A string<> target is a buffer too: the name alone, by ordinal, points at
 * the caller's string and has its strlen.
 */
START_TEST(test_probe_string_target)
{
	static const struct rw_ddp_policy name_only = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(1),
	};
	struct rw_probe_item found[PR_MAX];
	struct red_mixed_store s;

	red_mixed_make(&s, 300); /* name capped at 255 */
	ck_assert_uint_eq(pr_probe((xdrproc_t)xdr_red_mixed, &s.m, &name_only,
				   found),
			  1);
	ck_assert_uint_eq(found[0].ordinal, 1);
	ck_assert_uint_eq(found[0].len, RED_NAME_MAX);
	ck_assert_ptr_eq(found[0].data, s.name);
	pr_mixed_check(&s, 300, &name_only);
	red_mixed_free(&s);
}
END_TEST

/*
 * Empty items are not items (xdr_opaque never calls the stream for 0
 * octets), whether the buffer is NULL or not, and a NULL optional body is
 * no item either: the following items move down one ordinal each, exactly
 * as in the reducing encoder.
 */
START_TEST(test_v1_wc_3_probe_empty_items_not_counted)
{
	struct red_mixed_store s;
	struct pr_exp exp[MIXED_ITEMS];

	red_mixed_make(&s, 20);
	s.m.blob.red_blob_len = 0; /* empty, NULL buffer */
	s.m.blob.red_blob_val = NULL;
	s.opt.body.red_blob_len = 0; /* empty, real buffer */
	s.list[1].red_blob_len = 0;
	s.list[1].red_blob_val = NULL;
	/* name 0, tag 1, list[0] 2, list[2] 3, last 4 */
	exp[0] = (struct pr_exp){ 0, 20, s.name };
	exp[1] = (struct pr_exp){ 1, 6, s.m.tag };
	exp[2] = (struct pr_exp){ 2, 22, s.bufs[2] };
	exp[3] = (struct pr_exp){ 3, 24, s.bufs[4] };
	exp[4] = (struct pr_exp){ 4, 25, s.bufs[5] };
	pr_check_proc((xdrproc_t)xdr_red_mixed, &s.m, &pr_all,
		      red_mixed_cap(20), exp, 5);

	/* no optional body, empty name: tag 0, list[0] 1, list[2] 2, last 3 */
	s.m.opt = NULL;
	s.name[0] = 0;
	exp[0] = (struct pr_exp){ 0, 6, s.m.tag };
	exp[1] = (struct pr_exp){ 1, 22, s.bufs[2] };
	exp[2] = (struct pr_exp){ 2, 24, s.bufs[4] };
	exp[3] = (struct pr_exp){ 3, 25, s.bufs[5] };
	pr_check_proc((xdrproc_t)xdr_red_mixed, &s.m, &pr_all,
		      red_mixed_cap(20), exp, 4);
	red_mixed_free(&s);
}
END_TEST

/*
 * A NULL target with a non-zero length field is no buffer the caller
 * supplied (rw_xdr.h: "an xdr_bytes/xdr_string target that is not NULL"):
 * it is not recorded, but it is still a body item (the encoder counts it,
 * the Reply will carry it), so the next item keeps its ordinal.
 */
START_TEST(test_v1_wc_3_probe_null_target_not_recorded)
{
	static const struct rw_ddp_policy blob_last = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(0) | RW_DDP_ITEM(7),
	};
	struct rw_probe_item found[PR_MAX];
	struct red_mixed_store s;
	unsigned nf;

	red_mixed_make(&s, 64);
	s.m.blob.red_blob_val = NULL; /* length 64 kept */
	nf = pr_probe((xdrproc_t)xdr_red_mixed, &s.m, &blob_last, found);
	ck_assert_uint_ge(nf, 1);
	ck_assert_ptr_nonnull(found[0].data);
	ck_assert_uint_eq(nf, 1);
	ck_assert_uint_eq(found[0].ordinal, 7);
	ck_assert_ptr_eq(found[0].data, s.m.last.red_blob_val);
	ck_assert_uint_eq(found[0].len, 69);
	/* the NULL item still takes Write chunk 0: this one gets chunk 1 */
	ck_assert_uint_eq(found[0].index, 1);
	red_mixed_free(&s);
}
END_TEST

/*
 * It stops once max items are found: the xdrproc fails right after the
 * max-th item's data (XDR_GETPOS is that item's end in the unreduced
 * stream), and nothing is recorded past max.
 */
START_TEST(test_probe_stops_at_max)
{
	static const struct rw_ddp_policy pol25 = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(2) | RW_DDP_ITEM(5),
	};
	struct rw_probe_item found[PR_MAX], sentinel;
	struct rw_ddp_item ritems[PR_MAX];
	struct pr_exp all[MIXED_ITEMS];
	struct red_mixed_store s;
	struct rw_pxdr p;
	unsigned max, i, nr;

	red_mixed_make(&s, 37);
	pr_mixed_expect(&s, all);
	nr = pr_rxdr_items((xdrproc_t)xdr_red_mixed, &s.m, &pr_all,
			   red_mixed_cap(37), ritems);
	ck_assert_uint_eq(nr, MIXED_ITEMS);
	memset(&sentinel, 0xa5, sizeof(sentinel));

	for (max = 1; max <= MIXED_ITEMS; max++) {
		for (i = 0; i < PR_MAX; i++)
			found[i] = sentinel;
		rw_pxdr_create(&p, &pr_all, found, max);
		ck_assert(!xdr_red_mixed(&p.xdr, &s.m));
		ck_assert_uint_eq(rw_pxdr_found(&p), max);
		for (i = 0; i < max; i++) {
			ck_assert_uint_eq(found[i].ordinal, all[i].ordinal);
			ck_assert_uint_eq(found[i].len, all[i].len);
			ck_assert_ptr_eq(found[i].data, all[i].data);
		}
		for (i = max; i < PR_MAX; i++)
			ck_assert(!memcmp(&found[i], &sentinel,
					  sizeof(sentinel)));
		ck_assert_uint_eq(XDR_GETPOS(&p.xdr),
				  ritems[max - 1].position +
					  ritems[max - 1].len);
	}

	/* with a mask: the first designated item is enough for max 1 */
	for (i = 0; i < PR_MAX; i++)
		found[i] = sentinel;
	rw_pxdr_create(&p, &pol25, found, 1);
	ck_assert(!xdr_red_mixed(&p.xdr, &s.m));
	ck_assert_uint_eq(rw_pxdr_found(&p), 1);
	ck_assert_uint_eq(found[0].ordinal, 2);
	ck_assert_ptr_eq(found[0].data, s.m.tag);
	ck_assert(!memcmp(&found[1], &sentinel, sizeof(sentinel)));
	ck_assert_uint_eq(XDR_GETPOS(&p.xdr), ritems[2].position + 6);

	/* max 0, or no array: nothing recorded, the walk goes to the end */
	rw_pxdr_create(&p, &pr_all, found, 0);
	ck_assert(xdr_red_mixed(&p.xdr, &s.m));
	ck_assert_uint_eq(rw_pxdr_found(&p), 0);
	rw_pxdr_create(&p, &pr_all, NULL, 4);
	ck_assert(xdr_red_mixed(&p.xdr, &s.m));
	ck_assert_uint_eq(rw_pxdr_found(&p), 0);

	/* more room than items: the walk completes with all of them */
	rw_pxdr_create(&p, &pr_all, found, MIXED_ITEMS + 1);
	ck_assert(xdr_red_mixed(&p.xdr, &s.m));
	ck_assert_uint_eq(rw_pxdr_found(&p), MIXED_ITEMS);
	red_mixed_free(&s);
}
END_TEST

/*
 * RW_DDP_NONE (and a NULL policy) records nothing and lets the xdrproc run
 * to the end: XDR_GETPOS is then the body's xdrmem length.
 */
START_TEST(test_probe_none_records_nothing)
{
	struct rw_probe_item found[PR_MAX];
	struct red_mixed_store s;
	struct rw_pxdr p;
	unsigned pass;

	red_mixed_make(&s, 4096);
	for (pass = 0; pass < 2; pass++) {
		memset(found, 0x5a, sizeof(found));
		rw_pxdr_create(&p, pass ? NULL : &pr_none, found, PR_MAX);
		ck_assert(xdr_red_mixed(&p.xdr, &s.m));
		ck_assert_uint_eq(rw_pxdr_found(&p), 0);
		ck_assert_uint_eq(XDR_GETPOS(&p.xdr),
				  xdr_sizeof((xdrproc_t)xdr_red_mixed, &s.m));
		ck_assert_uint_eq(((unsigned char *)found)[0], 0x5a);
		ck_assert_uint_eq(((unsigned char *)found)[sizeof(found) - 1],
				  0x5a);
	}
	red_mixed_free(&s);
}
END_TEST

/* The probe reads the structure only: nothing in it or its buffers changes. */
START_TEST(test_probe_never_writes)
{
	static const struct rw_ddp_policy masks[] = {
		{ .mode = RW_DDP_ALL },
		{ .mode = RW_DDP_NONE },
		{ .mode = RW_DDP_ITEMS,
		  .mask = RW_DDP_ITEM(1) | RW_DDP_ITEM(3) },
	};
	struct rw_probe_item found[PR_MAX];
	struct red_mixed_store s, before;
	unsigned char *copy[6];
	struct rw_pxdr p;
	unsigned i, k, max;

	red_mixed_make(&s, 101);
	for (i = 0; i < 6; i++) {
		copy[i] = red_xmalloc(s.blen[i]);
		memcpy(copy[i], s.bufs[i], s.blen[i]);
	}
	memcpy(&before, &s, sizeof(s));
	for (k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		for (max = 0; max <= PR_MAX; max += 3) {
			rw_pxdr_create(&p, &masks[k], found, max);
			(void)xdr_red_mixed(&p.xdr, &s.m);
			ck_assert(!memcmp(&before, &s, sizeof(s)));
			for (i = 0; i < 6; i++)
				ck_assert(
					!memcmp(copy[i], s.bufs[i], s.blen[i]));
		}
	}
	for (i = 0; i < 6; i++)
		free(copy[i]);
	red_mixed_free(&s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* rw_rxdr_peek_word, rw_rxdr_body_pos                                     */

struct pr_msg {
	unsigned char *buf;
	uint32_t len;
};

/* Plain xdrmem encoding of a Call (auth given) or a Reply (auth NULL). */
static struct pr_msg pr_ref(AUTH *auth, uint32_t proc_nr, xdrproc_t proc,
			    void *obj, size_t cap)
{
	struct pr_msg m = { red_xmalloc(cap), 0 };
	XDR x;

	xdrmem_create(&x, (char *)m.buf, (u_int)cap, XDR_ENCODE);
	if (auth)
		ck_assert(red_put_call(&x, RED_XID, proc_nr, auth, proc, obj));
	else
		ck_assert(red_put_reply(&x, RED_XID, proc, obj));
	m.len = XDR_GETPOS(&x);
	XDR_DESTROY(&x);
	return m;
}

/* The same message through the reducing encoder. */
static void pr_red(struct rw_rxdr *r, unsigned char *buf, size_t cap,
		   struct rw_ddp_item *items, const struct rw_ddp_policy *pol,
		   AUTH *auth, uint32_t proc_nr, xdrproc_t proc, void *obj)
{
	ck_assert(rw_rxdr_create(r, buf, cap, pol, items, PR_MAX));
	if (auth)
		ck_assert(red_put_call(&r->xdr, RED_XID, proc_nr, auth, proc,
				       obj));
	else
		ck_assert(red_put_reply(&r->xdr, RED_XID, proc, obj));
	ck_assert_int_eq(rw_rxdr_finish(r), RW_XERR_OK);
}

/*
 * Every word of the unreduced message, at every offset (4-aligned or not),
 * reads as in the xdrmem encoding; a word that does not fit is refused.
 */
static void pr_peek_all(const struct rw_rxdr *r, const struct pr_msg *ref)
{
	uint32_t u, w, want;

	ck_assert_uint_eq(rw_rxdr_unreduced_len(r), ref->len);
	for (u = 0; u + 4 <= ref->len; u++) {
		w = 0xdeadbeef;
		ck_assert_msg(rw_rxdr_peek_word(r, u, &w),
			      "peek at %u of %u refused", u, ref->len);
		want = (uint32_t)ref->buf[u] << 24 |
		       (uint32_t)ref->buf[u + 1] << 16 |
		       (uint32_t)ref->buf[u + 2] << 8 | ref->buf[u + 3];
		ck_assert_msg(w == want, "peek at %u: 0x%08x, want 0x%08x", u,
			      w, want);
	}
	for (u = ref->len > 3 ? ref->len - 3 : 0; u <= ref->len + 4; u++) {
		w = 0x01020304;
		ck_assert_msg(!rw_rxdr_peek_word(r, u, &w),
			      "peek at %u of %u accepted", u, ref->len);
	}
	ck_assert(!rw_rxdr_peek_word(r, UINT32_MAX, &w));
	ck_assert(!rw_rxdr_peek_word(r, UINT32_MAX - 3, &w));
	ck_assert(!rw_rxdr_peek_word(r, UINT32_MAX - 2, &w));
}

/* The header length of a Call / Reply: the message with void results. */
static uint32_t pr_hdr_len(AUTH *auth)
{
	struct pr_msg m = pr_ref(auth, RED_NULL, RED_XDR_VOID, NULL, 1024);
	uint32_t n = m.len;

	free(m.buf);
	return n;
}

/*
 * A WRITE Call whose data moved as a Read chunk: each word reads as in the
 * plain encoding - header, fh, words, the data<> length word, the data
 * itself from the caller's memory, its zero pad - and the body starts
 * where the header ends (40 octets with AUTH_NONE).
 */
START_TEST(test_peek_word_write_args_moved_data)
{
	static const struct rw_ddp_policy data_only = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(1),
	};
	static const uint32_t lens[] = { 1, 2, 3, 4, 5, 6001, 8192 };
	struct rw_ddp_item items[PR_MAX];
	unsigned char buf[256], fh[32];
	AUTH *auth = authnone_create();
	red_write_args w;
	struct rw_rxdr r;
	struct pr_msg ref;
	char *data;
	uint32_t wd;
	unsigned i;

	ck_assert_uint_eq(pr_hdr_len(auth), 40);
	red_fill(fh, sizeof(fh), 9);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		data = red_xmalloc(lens[i]);
		red_fill(data, lens[i], 10 + i);
		red_write_make(&w, (char *)fh, data, lens[i]);
		w.offset = 0x1122334455667788ULL;
		w.stable = RED_DATA_SYNC;
		ref = pr_ref(auth, RED_WRITE, (xdrproc_t)xdr_red_write_args, &w,
			     lens[i] + 256);
		pr_red(&r, buf, sizeof(buf), items, &data_only, auth, RED_WRITE,
		       (xdrproc_t)xdr_red_write_args, &w);
		ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
		ck_assert_uint_eq(items[0].position, 96);
		ck_assert_uint_eq(rw_rxdr_reduced_len(&r), 96);
		ck_assert_uint_eq(rw_rxdr_body_pos(&r), 40);
		pr_peek_all(&r, &ref);
		/* the count word the ULB would read: body offset 44 */
		ck_assert(
			rw_rxdr_peek_word(&r, rw_rxdr_body_pos(&r) + 44, &wd));
		ck_assert_uint_eq(wd, lens[i]);
		/* the first data word comes from the caller's memory */
		ck_assert(rw_rxdr_peek_word(&r, 96, &wd));
		if (lens[i] >= 4)
			ck_assert_uint_eq(wd >> 24, (unsigned char)data[0]);
		free(ref.buf);
		free(data);
	}
	AUTH_DESTROY(auth);
}
END_TEST

/*
 * Several moved items of every kind (red_mixed: string, fixed opaque,
 * optional body, list entries), some moved and some not, in a Call and in
 * a Reply: every word reads as in the plain encoding.
 */
START_TEST(test_peek_word_several_items)
{
	static const struct rw_ddp_policy pols[] = {
		{ .mode = RW_DDP_ALL },
		{ .mode = RW_DDP_NONE },
		{ .mode = RW_DDP_ITEMS,
		  .mask = RW_DDP_ITEM(1) | RW_DDP_ITEM(2) | RW_DDP_ITEM(5) },
		{ .mode = RW_DDP_ITEMS,
		  .mask = RW_DDP_ITEM(0) | RW_DDP_ITEM(3) | RW_DDP_ITEM(7) },
	};
	static const size_t ns[] = { 1, 2, 3, 4, 7, 64 };
	struct rw_ddp_item items[PR_MAX];
	AUTH *auth = authnone_create();
	struct red_mixed_store s;
	struct rw_rxdr r;
	struct pr_msg ref;
	unsigned char *buf;
	unsigned i, k, call;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		red_mixed_make(&s, ns[i]);
		buf = red_xmalloc(red_mixed_cap(ns[i]));
		for (call = 0; call < 2; call++) {
			ref = pr_ref(call ? auth : NULL, RED_MIXED,
				     (xdrproc_t)xdr_red_mixed, &s.m,
				     red_mixed_cap(ns[i]));
			for (k = 0; k < sizeof(pols) / sizeof(pols[0]); k++) {
				pr_red(&r, buf, red_mixed_cap(ns[i]), items,
				       &pols[k], call ? auth : NULL, RED_MIXED,
				       (xdrproc_t)xdr_red_mixed, &s.m);
				ck_assert_uint_eq(rw_rxdr_body_pos(&r),
						  pr_hdr_len(call ? auth :
								    NULL));
				ck_assert_uint_eq(rw_rxdr_body_pos(&r),
						  call ? 40 : 24);
				pr_peek_all(&r, &ref);
			}
			free(ref.buf);
		}
		free(buf);
		red_mixed_free(&s);
	}
	AUTH_DESTROY(auth);
}
END_TEST

/*
 * AMB-V1-5 (two items, B after a moved A): words inside,
 * across and after both items; and with an AUTH_SYS credential the body
 * starts after the longer header.
 */
START_TEST(test_peek_word_two_items_auth_sys)
{
	struct rw_ddp_item items[PR_MAX];
	AUTH *none = authnone_create();
	AUTH *sys = authunix_create("probe-test-host", 1000, 100, 0, NULL);
	unsigned char buf[512];
	red_two_args t;
	char a[5], b[10];
	struct rw_rxdr r;
	struct pr_msg ref;
	uint32_t hl, w;

	ck_assert_ptr_nonnull(sys);
	red_two_make(&t, a, b);

	ref = pr_ref(none, RED_TWO, (xdrproc_t)xdr_red_two_args, &t, 512);
	pr_red(&r, buf, sizeof(buf), items, &pr_all, none, RED_TWO,
	       (xdrproc_t)xdr_red_two_args, &t);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 2);
	ck_assert_uint_eq(items[1].position, 120);
	ck_assert_uint_eq(rw_rxdr_body_pos(&r), 40);
	pr_peek_all(&r, &ref);
	/* mid, between the items, is at 112 */
	ck_assert(rw_rxdr_peek_word(&r, 112, &w));
	ck_assert_uint_eq(w, 0xabcdef01);
	free(ref.buf);

	hl = pr_hdr_len(sys);
	ck_assert_uint_gt(hl, 40);
	ref = pr_ref(sys, RED_TWO, (xdrproc_t)xdr_red_two_args, &t, 512);
	pr_red(&r, buf, sizeof(buf), items, &pr_all, sys, RED_TWO,
	       (xdrproc_t)xdr_red_two_args, &t);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 2);
	ck_assert_uint_eq(rw_rxdr_body_pos(&r), hl);
	ck_assert(rw_rxdr_peek_word(&r, hl, &w));
	ck_assert_uint_eq(w, 0x100);
	pr_peek_all(&r, &ref);
	free(ref.buf);
	AUTH_DESTROY(sys);
	AUTH_DESTROY(none);
}
END_TEST

/*
 * rw_rxdr_body_pos is the unreduced offset where rw_xdr_begin_body was
 * called: 0 if never called (then nothing is an item, and every word still
 * peeks), 12 if called after three words.
 */
START_TEST(test_body_pos_where_begun)
{
	struct rw_ddp_item items[PR_MAX];
	unsigned char buf[256];
	char data[9];
	red_read_res rr;
	struct rw_rxdr r;
	uint32_t w;
	long v = 0x7777;

	red_fill(data, sizeof(data), 3);
	memset(&rr, 0, sizeof(rr));
	rr.count = 9;
	rr.data.data_len = 9;
	rr.data.data_val = data;

	/* never begun: 0, and nothing is an item */
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pr_all, items, PR_MAX));
	ck_assert(xdr_red_read_res(&r.xdr, &rr));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	ck_assert_uint_eq(rw_rxdr_body_pos(&r), 0);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 0);
	ck_assert(rw_rxdr_peek_word(&r, 0, &w));
	ck_assert_uint_eq(w, 0); /* attr absent */

	/* begun after three words: 12, and the item is at 12 + 16 */
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pr_all, items, PR_MAX));
	ck_assert(XDR_PUTLONG(&r.xdr, &v));
	ck_assert(XDR_PUTLONG(&r.xdr, &v));
	ck_assert(XDR_PUTLONG(&r.xdr, &v));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert_uint_eq(rw_rxdr_body_pos(&r), 12);
	ck_assert(xdr_red_read_res(&r.xdr, &rr));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	ck_assert_uint_eq(rw_rxdr_body_pos(&r), 12);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
	ck_assert_uint_eq(items[0].position, 28);
	ck_assert_uint_eq(rw_rxdr_unreduced_len(&r), 28 + 12);
	ck_assert(rw_rxdr_peek_word(&r, rw_rxdr_body_pos(&r) + 4, &w));
	ck_assert_uint_eq(w, 9); /* count */
	ck_assert(rw_rxdr_peek_word(&r, 36, &w));
	ck_assert_uint_eq(w, (uint32_t)(unsigned char)data[8] << 24);
	ck_assert(!rw_rxdr_peek_word(&r, 37, &w));
}
END_TEST

/* ---------------------------------------------------------------------- */
/* rw_axdr_set_policy                                                      */

/* A reduced WRITE Call: data (item 1) moved as one Read chunk at 96. */
struct pr_call {
	char data[6001];
	unsigned char fh[32];
	red_write_args w;
	unsigned char buf[256];
	uint32_t len;
	struct rw_ddp_seg seg;
	struct rw_ddp_chunk c;
};

static void pr_call_make(struct pr_call *k)
{
	static const struct rw_ddp_policy data_only = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(1),
	};
	struct rw_ddp_item items[PR_MAX];
	AUTH *auth = authnone_create();
	struct rw_rxdr r;

	memset(k, 0, sizeof(*k));
	red_fill(k->data, sizeof(k->data), 12);
	red_fill(k->fh, sizeof(k->fh), 13);
	red_write_make(&k->w, (char *)k->fh, k->data, 6001);
	pr_red(&r, k->buf, sizeof(k->buf), items, &data_only, auth, RED_WRITE,
	       (xdrproc_t)xdr_red_write_args, &k->w);
	AUTH_DESTROY(auth);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
	ck_assert_uint_eq(items[0].position, 96);
	ck_assert_uint_eq(items[0].ordinal, 1);
	k->len = rw_rxdr_reduced_len(&r);
	k->seg.data = k->data;
	k->seg.len = 6001;
	k->c.position = 96;
	k->c.nsegs = 1;
	k->c.segs = &k->seg;
}

enum pr_when {
	PR_AT_CREATE,  /* right after rw_axdr_create */
	PR_AFTER_HDR,  /* after xdr_callmsg, before the body */
	PR_AFTER_BODY, /* after rw_xdr_begin_body: refused */
};

static const struct rw_ddp_policy pr_item0 = {
	.mode = RW_DDP_ITEMS,
	.mask = RW_DDP_ITEM(0),
};
static const struct rw_ddp_policy pr_item1 = {
	.mode = RW_DDP_ITEMS,
	.mask = RW_DDP_ITEM(1),
};

/*
 * Decode the Call as a responder does (svc: header, then the body), created
 * with policy p0 and switched to p1 at 'when'.  *set gets what
 * rw_axdr_set_policy returned.
 */
static enum rw_xdr_err pr_decode(struct pr_call *k,
				 const struct rw_ddp_policy *p0,
				 const struct rw_ddp_policy *p1,
				 enum pr_when when, bool *set)
{
	struct red_cred_area ca;
	struct rpc_msg m;
	red_write_args out;
	struct rw_axdr a;
	enum rw_xdr_err e;
	bool ok;

	ck_assert(
		rw_axdr_create(&a, k->buf, k->len, RW_AXDR_READ, &k->c, 1, p0));
	if (when == PR_AT_CREATE)
		*set = rw_axdr_set_policy(&a, p1);
	memset(&m, 0, sizeof(m));
	m.rm_call.cb_cred.oa_base = ca.cred;
	m.rm_call.cb_verf.oa_base = ca.verf;
	ck_assert(xdr_callmsg(&a.xdr, &m));
	ck_assert_uint_eq(m.rm_xid, RED_XID);
	ck_assert_uint_eq(m.rm_call.cb_proc, RED_WRITE);
	if (when == PR_AFTER_HDR)
		*set = rw_axdr_set_policy(&a, p1);
	ck_assert(rw_xdr_begin_body(&a.xdr));
	if (when == PR_AFTER_BODY) {
		*set = rw_axdr_set_policy(&a, p1);
		/* a refusal is no stream error */
		ck_assert_int_eq(rw_axdr_error(&a), RW_XERR_OK);
	}
	memset(&out, 0, sizeof(out));
	ok = xdr_red_write_args(&a.xdr, &out);
	if (ok) {
		e = rw_axdr_finish(&a);
		if (e == RW_XERR_OK) {
			ck_assert_uint_eq(out.data.data_len, 6001);
			ck_assert(!memcmp(out.data.data_val, k->data, 6001));
			ck_assert_uint_eq(out.file.red_fh_len, 32);
			ck_assert(!memcmp(out.file.red_fh_val, k->fh, 32));
			ck_assert_uint_eq(rw_axdr_chunks_used(&a), 1);
		}
	} else {
		e = rw_axdr_error(&a) ? rw_axdr_error(&a) : RC_DEC_REFUSED;
	}
	xdr_free((xdrproc_t)xdr_red_write_args, (char *)&out);
	return e;
}

/*
 * V1-DDP-1: before the body the policy can still change (the responder
 * learns the procedure from the header), and the new one decides: the
 * chunk at item 1 is accepted with a policy designating 1 and refused
 * (NOT_ELIGIBLE) with one that does not, whatever the policy at create.
 */
START_TEST(test_v1_ddp_1_set_policy_before_body)
{
	struct pr_call *k = red_xmalloc(sizeof(*k));
	enum pr_when when;
	bool set;

	pr_call_make(k);
	/* the baselines, no change */
	ck_assert_int_eq(pr_decode(k, &pr_item1, &pr_item1, PR_AT_CREATE, &set),
			 RW_XERR_OK);
	ck_assert(set);
	ck_assert_int_eq(pr_decode(k, &pr_item0, &pr_item0, PR_AT_CREATE, &set),
			 RW_XERR_NOT_ELIGIBLE);
	ck_assert(set);
	for (when = PR_AT_CREATE; when <= PR_AFTER_HDR; when++) {
		set = false;
		ck_assert_int_eq(pr_decode(k, &pr_item0, &pr_item1, when, &set),
				 RW_XERR_OK);
		ck_assert(set);
		set = false;
		ck_assert_int_eq(pr_decode(k, &pr_none, &pr_all, when, &set),
				 RW_XERR_OK);
		ck_assert(set);
		set = false;
		ck_assert_int_eq(pr_decode(k, NULL, &pr_item1, when, &set),
				 RW_XERR_OK);
		ck_assert(set);
		set = false;
		ck_assert_int_eq(pr_decode(k, &pr_item1, &pr_item0, when, &set),
				 RW_XERR_NOT_ELIGIBLE);
		ck_assert(set);
		set = false;
		ck_assert_int_eq(pr_decode(k, &pr_all, &pr_none, when, &set),
				 RW_XERR_NOT_ELIGIBLE);
		ck_assert(set);
		set = false;
		ck_assert_int_eq(pr_decode(k, NULL, &pr_item0, when, &set),
				 RW_XERR_NOT_ELIGIBLE);
		ck_assert(set);
	}
	free(k);
}
END_TEST

/*
 * V1-DDP-1: once the body has begun the policy is fixed - set_policy says
 * no and the policy given at create still decides, both ways.
 */
START_TEST(test_v1_ddp_1_set_policy_refused_after_body)
{
	struct pr_call *k = red_xmalloc(sizeof(*k));
	bool set;

	pr_call_make(k);
	set = true;
	ck_assert_int_eq(pr_decode(k, &pr_item1, &pr_item0, PR_AFTER_BODY,
				   &set),
			 RW_XERR_OK);
	ck_assert(!set);
	set = true;
	ck_assert_int_eq(pr_decode(k, &pr_all, &pr_none, PR_AFTER_BODY, &set),
			 RW_XERR_OK);
	ck_assert(!set);
	set = true;
	ck_assert_int_eq(pr_decode(k, NULL, &pr_item0, PR_AFTER_BODY, &set),
			 RW_XERR_OK);
	ck_assert(!set);
	set = true;
	ck_assert_int_eq(pr_decode(k, &pr_item0, &pr_item1, PR_AFTER_BODY,
				   &set),
			 RW_XERR_NOT_ELIGIBLE);
	ck_assert(!set);
	set = true;
	ck_assert_int_eq(pr_decode(k, &pr_none, &pr_all, PR_AFTER_BODY, &set),
			 RW_XERR_NOT_ELIGIBLE);
	ck_assert(!set);
	free(k);
}
END_TEST

Suite *probe_suite(void)
{
	Suite *s = suite_create("probe");
	TCase *pr = tcase_create("probe");
	TCase *pk = tcase_create("peek");
	TCase *sp = tcase_create("set_policy");

	tcase_add_loop_test(pr, test_v1_wc_3_probe_all_items_in_body_order, 0,
			    PR_NSIZES);
	tcase_add_test(pr, test_v1_wc_3_probe_item_masks);
	tcase_add_test(pr, test_v1_wc_3_probe_read_res_two_args_write_args);
	tcase_add_test(pr, test_probe_string_target);
	tcase_add_test(pr, test_v1_wc_3_probe_empty_items_not_counted);
	tcase_add_test(pr, test_v1_wc_3_probe_null_target_not_recorded);
	tcase_add_test(pr, test_probe_stops_at_max);
	tcase_add_test(pr, test_probe_none_records_nothing);
	tcase_add_test(pr, test_probe_never_writes);
	suite_add_tcase(s, pr);

	tcase_add_test(pk, test_peek_word_write_args_moved_data);
	tcase_add_test(pk, test_peek_word_several_items);
	tcase_add_test(pk, test_peek_word_two_items_auth_sys);
	tcase_add_test(pk, test_body_pos_where_begun);
	suite_add_tcase(s, pk);

	tcase_add_test(sp, test_v1_ddp_1_set_policy_before_body);
	tcase_add_test(sp, test_v1_ddp_1_set_policy_refused_after_body);
	suite_add_tcase(s, sp);
	return s;
}
