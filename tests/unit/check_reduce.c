/*
 * check_reduce.c - the reduction and reassembly XDR streams (src/wire/
 * rw_xdr.h; RFC 8166 §3.4, §3.4.5; V1-CH-*, V1-RC-*, V1-WC-9..11, V1-GSS-2/3,
 * AMB-V1-5, AMB-V1-12, vectors V1-TV8, V1-TV10a/b, N-5, N-16).
 *
 * Messages come from real rpcgen code (tests/unit/red_prog.x) marshalled
 * the way clnt_vc/svc_vc do (red_msg.h).  The oracle for every reduced
 * encoding is a plain xdrmem encoding of the same message: rebuilt bytes
 * must equal it, decoded values must re-encode to it.
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

static const struct rw_ddp_policy pol_all = { .mode = RW_DDP_ALL,
					      .min_len = 1 };
static const struct rw_ddp_policy pol_none = { .mode = RW_DDP_NONE };

/* ---------------------------------------------------------------------- */
/* helpers                                                                 */

static size_t hex2bin(const char *hex, unsigned char *out, size_t cap)
{
	size_t n = 0;
	unsigned v;

	while (*hex) {
		if (*hex == ' ' || *hex == '\n') {
			hex++;
			continue;
		}
		ck_assert(sscanf(hex, "%2x", &v) == 1);
		ck_assert_uint_lt(n, cap);
		out[n++] = (unsigned char)v;
		hex += 2;
	}
	return n;
}

/* ---------------------------------------------------------------------- */
/* red_prog values                                                          */

static unsigned char tv8_fh[32];

/* NFSv3 WRITE of V1-TV8: 32-byte fh 01..20, offset 0, 6001 bytes, FILE_SYNC */
static void tv8_args(red_write_args *w, char *data)
{
	unsigned i;

	for (i = 0; i < 32; i++)
		tv8_fh[i] = (unsigned char)(i + 1);
	red_write_make(w, (char *)tv8_fh, data, 6001);
}

static const char tv8_payload_hex[] =
	"12345678 00000000 00000002 000186a3 00000003 00000007 00000000 00000000"
	"00000000 00000000 00000020 01020304 05060708 090a0b0c 0d0e0f10 11121314"
	"15161718 191a1b1c 1d1e1f20 00000000 00000000 00001771 00000002 00001771";

static const size_t sizes[] = { 0, 1, 3, 4, 4095, 4096, 1u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---------------------------------------------------------------------- */
/* reducing encoder                                                        */

/*
 * V1-TV8: the reduced Call payload is exactly
 * the 96 bytes of the vector, ending with the data<> length word (V1-CH-3);
 * one item at unreduced position 96 (V1-RC-1, V1-RC-2), 6001 octets
 * without pad (V1-RC-5, V1-RC-7, V1-CH-7), pointing at the caller's data.
 */
START_TEST(test_tv8_v1_rc_1_2_5_7_reduced_payload)
{
	static const struct rw_ddp_policy pol = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(1),
		.min_len = 1024,
	};
	unsigned char expect[96];
	char *data = red_xmalloc(6001);
	red_write_args w;
	struct rc_enc red, ref;

	red_fill(data, 6001, 8);
	tv8_args(&w, data);
	ck_assert_uint_eq(hex2bin(tv8_payload_hex, expect, sizeof(expect)), 96);
	rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_write_args, &w,
		      RED_WRITE, 256, &pol);
	ck_assert_uint_eq(red.len, 96);
	ck_assert(!memcmp(red.buf, expect, 96));
	ck_assert_uint_eq(red.nitems, 1);
	ck_assert_uint_eq(red.items[0].position, 96);
	ck_assert_uint_eq(red.items[0].len, 6001);
	ck_assert_uint_eq(red.items[0].ordinal, 1);
	ck_assert_ptr_eq(red.items[0].data, data); /* zero copy */
	ck_assert_uint_eq(red.ulen, 6100);

	rc_ref_encode(&ref, rc_put_call, (xdrproc_t)xdr_red_write_args, &w,
		      RED_WRITE, 8192);
	ck_assert_uint_eq(ref.len, 6100);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);

	/* "every opaque >= 1024" picks the same single item */
	rc_enc_free(&red);
	{
		static const struct rw_ddp_policy all1k = {
			.mode = RW_DDP_ALL,
			.min_len = 1024,
		};

		rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_write_args,
			      &w, RED_WRITE, 256, &all1k);
		ck_assert_uint_eq(red.len, 96);
		ck_assert(!memcmp(red.buf, expect, 96));
	}
	rc_enc_free(&red);
	rc_enc_free(&ref);
	free(data);
}
END_TEST

/*
 * V1-TV8 at the responder: the chunk arrives as two segments 4096 + 1905
 * (V1-RC-3, V1-RC-4, V1-CH-8) without pad; the pad is supplied (V1-RC-8),
 * the rebuilt Call is the 6100-byte oracle; the padded variant 4096 + 1908
 * is accepted as well (V1-RC-6, AMB-V1-12).
 */
START_TEST(test_tv8_v1_rc_3_4_6_8_responder_rebuild)
{
	static const struct rw_ddp_policy pol = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(1),
	};
	unsigned char expect[96], *rebuilt = red_xmalloc(6100);
	char *data = red_xmalloc(6004);
	struct rw_ddp_seg segs[2];
	struct rw_ddp_chunk c = { .position = 96, .nsegs = 2, .segs = segs };
	red_write_args w, out;
	struct rc_enc ref;
	enum rw_xdr_err err;
	unsigned pass;

	red_fill(data, 6001, 8);
	memset(data + 6001, 0xee, 3); /* a sender's pad need not be zero */
	tv8_args(&w, data);
	hex2bin(tv8_payload_hex, expect, sizeof(expect));
	rc_ref_encode(&ref, rc_put_call, (xdrproc_t)xdr_red_write_args, &w,
		      RED_WRITE, 8192);
	for (pass = 0; pass < 2; pass++) {
		segs[0].data = data;
		segs[0].len = 4096;
		segs[1].data = data + 4096;
		segs[1].len = pass ? 1908 : 1905;

		if (!pass) {
			ck_assert_uint_eq(rw_ddp_flatten(expect, 96, &c, 1,
							 rebuilt, 6100, &err),
					  6100);
			ck_assert_int_eq(err, RW_XERR_OK);
			ck_assert(!memcmp(rebuilt, ref.buf, 6100));
		}
		memset(&out, 0, sizeof(out));
		ck_assert_int_eq(rc_decode_call(expect, 96, &c, 1, &pol,
						(xdrproc_t)xdr_red_write_args,
						&out),
				 RW_XERR_OK);
		ck_assert_uint_eq(out.data.data_len, 6001);
		ck_assert(!memcmp(out.data.data_val, data, 6001));
		ck_assert_uint_eq(out.count, 6001);
		rc_check_reencodes(rc_put_call, (xdrproc_t)xdr_red_write_args,
				   &out, RED_WRITE, &ref);
		xdr_free((xdrproc_t)xdr_red_write_args, (char *)&out);
	}
	rc_enc_free(&ref);
	free(rebuilt);
	free(data);
}
END_TEST

/*
 * AMB-V1-5: two chunks; B's position is its
 * offset in the unreduced stream (120), not in the reduced one (112).
 */
START_TEST(test_example2_amb_v1_5_unreduced_positions)
{
	red_two_args t, out;
	char a[5], b[10];
	struct rc_enc red, ref;
	struct rc_rchunks rc;

	red_two_make(&t, a, b);

	rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_two_args, &t,
		      RED_TWO, 512, &pol_all);
	ck_assert_uint_eq(red.nitems, 2);
	ck_assert_uint_eq(red.items[0].position, 104);
	ck_assert_uint_eq(red.items[0].len, 5);
	ck_assert_uint_eq(red.items[1].position, 120);
	ck_assert_uint_eq(red.items[1].len, 10);
	ck_assert_uint_eq(red.items[1].cut, 112);
	ck_assert_uint_eq(red.len, 112);
	ck_assert_uint_eq(red.ulen, 132);
	rc_ref_encode(&ref, rc_put_call, (xdrproc_t)xdr_red_two_args, &t,
		      RED_TWO, 512);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);

	rc_rchunks_make(&rc, &red, 0);
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(rc_decode_call(red.buf, red.len, rc.c, rc.n, NULL,
					(xdrproc_t)xdr_red_two_args, &out),
			 RW_XERR_OK);
	rc_check_reencodes(rc_put_call, (xdrproc_t)xdr_red_two_args, &out,
			   RED_TWO, &ref);
	xdr_free((xdrproc_t)xdr_red_two_args, (char *)&out);

	/* the classic bug: B placed at its reduced offset lands on the
	 * uint32 between the items, which is refused (GARBAGE_ARGS) */
	rc.c[1].position = 112;
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(rc_decode_call(red.buf, red.len, rc.c, rc.n, NULL,
					(xdrproc_t)xdr_red_two_args, &out),
			 RW_XERR_CHUNK_TYPE);
	xdr_free((xdrproc_t)xdr_red_two_args, (char *)&out);
	rc_rchunks_free(&rc);
	rc_enc_free(&red);
	rc_enc_free(&ref);
}
END_TEST

/*
 * V1-GSS-2: nothing before the body is a candidate, even with "every opaque"
 * and an AUTH_SYS credential whose body goes through x_putbytes.
 */
START_TEST(test_gss_2_header_never_reduced)
{
	AUTH *auth = authunix_create("reduce-test-host", 1000, 100, 0, NULL);
	char *data = red_xmalloc(6001);
	static const struct rw_ddp_policy pol0 = { .mode = RW_DDP_ALL };
	struct rw_ddp_item items[RC_MAX_ITEMS];
	struct rw_rxdr r;
	red_write_args w;
	unsigned char buf[512];

	ck_assert_ptr_nonnull(auth);
	red_fill(data, 6001, 3);
	tv8_args(&w, data);
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol0, items,
				 RC_MAX_ITEMS));
	ck_assert(red_put_call(&r.xdr, RED_XID, RED_WRITE, auth,
			       (xdrproc_t)xdr_red_write_args, &w));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	/* fh (item 0) and data (item 1) only; never the credential */
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 2);
	ck_assert_uint_eq(rw_rxdr_ordinals(&r), 2);
	ck_assert_ptr_eq(items[0].data, tv8_fh);
	ck_assert_ptr_eq(items[1].data, data);
	AUTH_DESTROY(auth);
	free(data);
}
END_TEST

/*
 * V1-GSS-3: "no reduction" is the same stream type and encodes exactly what
 * xdrmem does; the counters still work.
 */
START_TEST(test_gss_3_no_reduction_mode)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;

	rc_mixed_encode(&s, 4096, rc_put_call, RED_MIXED, &pol_none, &ref,
			&red);
	ck_assert_uint_eq(red.nitems, 0);
	ck_assert_uint_eq(red.len, ref.len);
	ck_assert_uint_eq(red.ulen, ref.len);
	ck_assert(!memcmp(red.buf, ref.buf, ref.len));
	rc_enc_free(&red);

	/* a NULL policy is the same */
	rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_mixed, &s.m,
		      RED_MIXED, red_mixed_cap(4096), NULL);
	ck_assert(!memcmp(red.buf, ref.buf, ref.len));
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* Items shorter than the policy's minimum stay inline (V1-CH-2: only what
 * the sender chose among the eligible moves). */
START_TEST(test_min_len_keeps_small_items_inline)
{
	static const struct rw_ddp_policy pol = {
		.mode = RW_DDP_ALL,
		.min_len = 4096,
	};
	struct red_mixed_store s;
	struct rc_enc red, ref;
	unsigned i;

	/* items of 4095..4100 octets, name 255 */
	rc_mixed_encode(&s, 4095, rc_put_call, RED_MIXED, &pol, &ref, &red);
	/* opt body (4096), list 4097..4099, last 4100: blob 4095 stays */
	ck_assert_uint_eq(red.nitems, 5);
	for (i = 0; i < red.nitems; i++)
		ck_assert_uint_ge(red.items[i].len, 4096);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/*
 * Several designated items by ordinal; the others stay put (V1-CH-2): an
 * item that is not DDP-eligible never goes into a chunk (V1-RP-6).
 * Body items of red_mixed with n=4: blob 0, name 1, tag 2, opt body 3,
 * list 4..6, last 7.
 */
START_TEST(test_ch_2_item_mask_several)
{
	static const struct rw_ddp_policy pol = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(0) | RW_DDP_ITEM(3) | RW_DDP_ITEM(5) |
			RW_DDP_ITEM(7),
	};
	struct red_mixed_store s;
	struct rc_enc red, ref;

	rc_mixed_encode(&s, 4, rc_put_call, RED_MIXED, &pol, &ref, &red);
	ck_assert_uint_eq(red.nitems, 4);
	ck_assert_uint_eq(red.items[0].ordinal, 0);
	ck_assert_ptr_eq(red.items[0].data, s.m.blob.red_blob_val);
	ck_assert_uint_eq(red.items[1].ordinal, 3);
	ck_assert_ptr_eq(red.items[1].data, s.opt.body.red_blob_val);
	ck_assert_uint_eq(red.items[2].ordinal, 5);
	ck_assert_ptr_eq(red.items[2].data, s.list[1].red_blob_val);
	ck_assert_uint_eq(red.items[3].ordinal, 7);
	ck_assert_ptr_eq(red.items[3].data, s.m.last.red_blob_val);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/*
 * V1-CH-5: optional data - the "is present" word stays in the payload and
 * only the data item moves; the fixed opaque[6] item moves without a
 * length word and its pad is dropped (V1-CH-7).
 */
START_TEST(test_ch_5_7_optional_and_fixed)
{
	static const struct rw_ddp_policy pol = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(2) | RW_DDP_ITEM(3),
	};
	struct red_mixed_store s;
	struct rc_enc red, ref;
	uint32_t w;

	rc_mixed_encode(&s, 8, rc_put_call, RED_MIXED, &pol, &ref, &red);
	ck_assert_uint_eq(red.nitems, 2);
	ck_assert_uint_eq(red.items[0].len, 6); /* tag */
	ck_assert_uint_eq(red.items[1].len, 9); /* opt body */
	/* reduced = oracle minus 8 (tag + pad) minus 12 (body + pad) */
	ck_assert_uint_eq(red.len, ref.len - 8 - 12);
	/* the cut for the opt body comes right after its length word, which
	 * follows flags and the present word (1) */
	memcpy(&w, red.buf + red.items[1].cut - 12, 4);
	ck_assert_uint_eq(ntohl(w), 1);
	memcpy(&w, red.buf + red.items[1].cut - 4, 4);
	ck_assert_uint_eq(ntohl(w), 9);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* V1-WC-3: results beyond the Write chunks offered stay inline. */
START_TEST(test_wc_3_max_chunks_rest_inline)
{
	static const struct rw_ddp_policy pol = {
		.mode = RW_DDP_ALL,
		.max_chunks = 2,
	};
	struct red_mixed_store s;
	struct rc_enc red, ref;

	rc_mixed_encode(&s, 100, rc_put_reply, 0, &pol, &ref, &red);
	ck_assert_uint_eq(red.nitems, 2);
	ck_assert_uint_eq(red.items[0].ordinal, 0);
	ck_assert_uint_eq(red.items[1].ordinal, 1);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* A buffer too small fails cleanly at every size, never writing past cap. */
START_TEST(test_encode_buffer_full_every_cap)
{
	struct red_mixed_store s;
	struct rc_enc red;
	struct rw_ddp_item items[RC_MAX_ITEMS];
	unsigned char *buf;
	uint32_t cap;

	red_mixed_make(&s, 37);
	rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_mixed, &s.m,
		      RED_MIXED, red_mixed_cap(37), &pol_all);
	buf = red_xmalloc(red.len + 64);
	for (cap = 0; cap < red.len; cap++) {
		struct rw_rxdr r;
		uint32_t i;

		memset(buf, 0xa5, red.len + 64);
		ck_assert(rw_rxdr_create(&r, buf, cap, &pol_all, items,
					 RC_MAX_ITEMS));
		ck_assert(!red_put_call(&r.xdr, RED_XID, RED_MIXED,
					authnone_create(),
					(xdrproc_t)xdr_red_mixed, &s.m));
		ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_NOSPACE);
		ck_assert_uint_le(rw_rxdr_reduced_len(&r), cap);
		for (i = cap; i < red.len + 64; i++)
			ck_assert_uint_eq(buf[i], 0xa5);
		/* sticky: nothing works afterwards */
		ck_assert_ptr_null(XDR_INLINE(&r.xdr, 4));
		ck_assert(!XDR_SETPOS(&r.xdr, 0));
	}
	free(buf);
	rc_enc_free(&red);
	red_mixed_free(&s);
}
END_TEST

/* More designated items than the item array holds: a clean failure. */
START_TEST(test_encode_too_many_items)
{
	struct red_mixed_store s;
	struct rw_ddp_item items[3];
	struct rw_rxdr r;
	unsigned char *buf = red_xmalloc(red_mixed_cap(64));

	red_mixed_make(&s, 64);
	ck_assert(
		rw_rxdr_create(&r, buf, red_mixed_cap(64), &pol_all, items, 3));
	ck_assert(!red_put_call(&r.xdr, RED_XID, RED_MIXED, authnone_create(),
				(xdrproc_t)xdr_red_mixed, &s.m));
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_TOO_MANY);
	ck_assert_int_eq(rw_xdr_err_class(rw_rxdr_error(&r)), RW_XC_LOCAL);
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 3);
	/* no item array at all */
	ck_assert(
		rw_rxdr_create(&r, buf, red_mixed_cap(64), &pol_all, NULL, 8));
	ck_assert(!red_put_call(&r.xdr, RED_XID, RED_MIXED, authnone_create(),
				(xdrproc_t)xdr_red_mixed, &s.m));
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_TOO_MANY);
	free(buf);
	red_mixed_free(&s);
}
END_TEST

/*
 * Positions are 32-bit on the wire: an unreduced stream that would pass
 * 4 GiB fails cleanly.  The moved item is never read by the encoder (zero
 * copy), so a small buffer stands in for a huge one.
 */
START_TEST(test_encode_position_range)
{
	struct rw_ddp_item items[RC_MAX_ITEMS];
	static const struct rw_ddp_policy pol0 = { .mode = RW_DDP_ALL };
	static char tiny[4];
	uint32_t bufw[16];
	struct rw_rxdr r;
	long l = 1;

	ck_assert(rw_rxdr_create(&r, bufw, sizeof(bufw), &pol0, items,
				 RC_MAX_ITEMS));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert(XDR_PUTLONG(&r.xdr, &l));
	ck_assert(XDR_PUTBYTES(&r.xdr, tiny, 0xfffffff0u));
	ck_assert_uint_eq(items[0].position, 4);
	ck_assert_uint_eq(rw_rxdr_unreduced_len(&r), 0xfffffff4u);
	ck_assert(XDR_PUTLONG(&r.xdr, &l));
	ck_assert(XDR_PUTLONG(&r.xdr, &l));
	ck_assert_uint_eq(rw_rxdr_unreduced_len(&r), 0xfffffffcu);
	ck_assert_ptr_null(XDR_INLINE(&r.xdr, 4 + 4));
	ck_assert(!XDR_SETPOS(&r.xdr, 16));
	ck_assert(!XDR_PUTLONG(&r.xdr, &l)); /* would reach 4 GiB */
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_RANGE);
	ck_assert_uint_eq(rw_rxdr_unreduced_len(&r), 0xfffffffcu);

	ck_assert(rw_rxdr_create(&r, bufw, sizeof(bufw), &pol0, items,
				 RC_MAX_ITEMS));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert(XDR_PUTLONG(&r.xdr, &l));
	ck_assert(!XDR_PUTBYTES(&r.xdr, tiny, 0xfffffffdu));
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_RANGE);
}
END_TEST

/*
 * x_inline: rpcgen's red_attr run is encoded through XDR_INLINE when the
 * buffer is aligned, through x_putlong when it is not; same bytes.
 */
START_TEST(test_encode_inline_aligned_and_not)
{
	struct red_mixed_store s;
	struct rc_enc ref;
	struct rw_ddp_item items[RC_MAX_ITEMS];
	unsigned char *mem = red_xmalloc(red_mixed_cap(16) + 4);
	unsigned off;

	red_mixed_make(&s, 16);
	rc_ref_encode(&ref, rc_put_call, (xdrproc_t)xdr_red_mixed, &s.m,
		      RED_MIXED, red_mixed_cap(16));
	for (off = 0; off < 4; off++) {
		struct rw_rxdr r;
		int32_t *p;

		ck_assert(rw_rxdr_create(&r, mem + off, red_mixed_cap(16),
					 &pol_none, items, RC_MAX_ITEMS));
		ck_assert(red_put_call(&r.xdr, RED_XID, RED_MIXED,
				       authnone_create(),
				       (xdrproc_t)xdr_red_mixed, &s.m));
		ck_assert_uint_eq(rw_rxdr_reduced_len(&r), ref.len);
		ck_assert(!memcmp(mem + off, ref.buf, ref.len));
		p = XDR_INLINE(&r.xdr, 8);
		if (off)
			ck_assert_ptr_null(p);
		else
			ck_assert_ptr_eq(p, (void *)(mem + ref.len));
		/* never beyond cap */
		ck_assert_ptr_null(
			XDR_INLINE(&r.xdr, (u_int)red_mixed_cap(16)));
	}
	free(mem);
	rc_enc_free(&ref);
	red_mixed_free(&s);
}
END_TEST

/*
 * x_getpostn is the reduced offset; x_setpostn may not go before the last
 * cut; the RPCSEC_GSS wrap pattern (skip a length word, encode, go back,
 * read back through XDR_INLINE) works in no-reduction mode.
 */
START_TEST(test_encode_getpos_setpos)
{
	static char data[10] = "0123456789";
	struct rw_ddp_item items[RC_MAX_ITEMS];
	uint32_t bufw[16];
	unsigned char *buf = (unsigned char *)bufw;
	struct rw_rxdr r;
	u_int len = 10, start, end;
	char *p = data;
	int32_t *ip;

	ck_assert(rw_rxdr_create(&r, buf, sizeof(bufw), &pol_all, items,
				 RC_MAX_ITEMS));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert(xdr_u_int(&r.xdr, &len));
	ck_assert(xdr_bytes(&r.xdr, &p, &len, 100));
	ck_assert_uint_eq(XDR_GETPOS(&r.xdr), 8);
	ck_assert_uint_eq(rw_rxdr_unreduced_len(&r), 4 + 4 + 12);
	ck_assert(!XDR_SETPOS(&r.xdr, 0)); /* before the cut */
	ck_assert(!XDR_SETPOS(&r.xdr, 4));
	ck_assert(XDR_SETPOS(&r.xdr, 8));
	ck_assert(!XDR_SETPOS(&r.xdr, sizeof(bufw) + 1));
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_OK);

	/* GSS integrity shape, plain mode */
	ck_assert(rw_rxdr_create(&r, buf, sizeof(bufw), &pol_none, NULL, 0));
	start = XDR_GETPOS(&r.xdr);
	ck_assert(XDR_SETPOS(&r.xdr, start + 4));
	ck_assert(xdr_u_int(&r.xdr, &len));
	ck_assert(xdr_bytes(&r.xdr, &p, &len, 100));
	end = XDR_GETPOS(&r.xdr);
	ck_assert_uint_eq(end, 4 + 4 + 4 + 12);
	ck_assert(XDR_SETPOS(&r.xdr, start + 4));
	ip = XDR_INLINE(&r.xdr, end - start - 4);
	ck_assert_ptr_eq(ip, (void *)(buf + 4));
	ck_assert(XDR_SETPOS(&r.xdr, start));
	len = end - start - 4;
	ck_assert(xdr_u_int(&r.xdr, &len));
	ck_assert(XDR_SETPOS(&r.xdr, end));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_OK);
	ck_assert_uint_eq(rw_rxdr_reduced_len(&r), end);
}
END_TEST

/*
 * A moved item owes its pad; anything else next is refused (the stream
 * would otherwise lose 4-alignment, V1-CH-7).  Puts that start unaligned
 * are not items.  Decoding calls on an encoder are refused.
 */
START_TEST(test_encode_pad_rules)
{
	struct rw_ddp_item items[RC_MAX_ITEMS];
	unsigned char buf[64];
	struct rw_rxdr r;
	long l = 5;
	char c[8];

	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol_all, items,
				 RC_MAX_ITEMS));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert(XDR_PUTBYTES(&r.xdr, "abcde", 5));
	ck_assert_uint_eq(rw_rxdr_nitems(&r), 1);
	ck_assert_ptr_null(XDR_INLINE(&r.xdr, 4));
	ck_assert(!XDR_SETPOS(&r.xdr, 0));
	ck_assert_int_eq(rw_rxdr_finish(&r), RW_XERR_PAD);
	ck_assert(!XDR_PUTLONG(&r.xdr, &l));

	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol_all, items,
				 RC_MAX_ITEMS));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert(XDR_PUTBYTES(&r.xdr, "abcde", 5));
	ck_assert(!XDR_PUTBYTES(&r.xdr, "\0\0", 2)); /* wrong pad size */
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_PAD);

	/* unaligned puts are continuations, not items */
	ck_assert(rw_rxdr_create(&r, buf, sizeof(buf), &pol_none, items,
				 RC_MAX_ITEMS));
	ck_assert(rw_xdr_begin_body(&r.xdr));
	ck_assert(XDR_PUTBYTES(&r.xdr, "abc", 3));
	ck_assert(XDR_PUTBYTES(&r.xdr, "defgh", 5));
	ck_assert_uint_eq(rw_rxdr_ordinals(&r), 1);

	ck_assert(!XDR_GETLONG(&r.xdr, &l));
	ck_assert(!XDR_GETBYTES(&r.xdr, c, 4));
	ck_assert_int_eq(rw_rxdr_error(&r), RW_XERR_BAD_ARG);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* round trips                                                             */

/*
 * Call round trip through Read chunks for every item size: reduce, rebuild
 * (== xdrmem), decode (== original values).  Loop i picks the size; the
 * variants split chunks in two segments (V1-CH-8, V1-RC-4) and include the
 * pad in the chunk (V1-RC-6, AMB-V1-12).
 */
static void call_roundtrip(size_t n, unsigned how)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_rchunks rc;
	red_mixed out;
	unsigned char *flat;
	enum rw_xdr_err err;

	rc_mixed_encode(&s, n, rc_put_call, RED_MIXED, &pol_all, &ref, &red);
	/* blob, name, tag, opt body, 3 list items, last; blob and name are
	 * empty for n = 0 and never reach the stream */
	ck_assert_uint_eq(red.nitems, n ? 8 : 6);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);

	rc_rchunks_make(&rc, &red, how);
	flat = red_xmalloc(ref.len);
	ck_assert_uint_eq(rw_ddp_flatten(red.buf, red.len, rc.c, rc.n, NULL, 0,
					 &err),
			  ref.len);
	ck_assert_int_eq(err, RW_XERR_OK);
	ck_assert_uint_eq(rw_ddp_flatten(red.buf, red.len, rc.c, rc.n, flat,
					 ref.len, &err),
			  ref.len);
	if (!(how & RC_RCH_PAD))
		ck_assert(!memcmp(flat, ref.buf, ref.len));

	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(rc_decode_call(red.buf, red.len, rc.c, rc.n, &pol_all,
					(xdrproc_t)xdr_red_mixed, &out),
			 RW_XERR_OK);
	ck_assert_uint_eq(out.blob.red_blob_len, n);
	ck_assert(!n || !memcmp(out.blob.red_blob_val, s.bufs[0], n));
	ck_assert_ptr_nonnull(out.opt);
	ck_assert_uint_eq(out.opt->body.red_blob_len, n + 1);
	ck_assert(!memcmp(out.opt->body.red_blob_val, s.bufs[1], n + 1));
	ck_assert_uint_eq(out.last.red_blob_len, n + 5);
	ck_assert(!memcmp(out.last.red_blob_val, s.bufs[5], n + 5));
	rc_check_reencodes(rc_put_call, (xdrproc_t)xdr_red_mixed, &out,
			   RED_MIXED, &ref);
	xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);

	free(flat);
	rc_rchunks_free(&rc);
	rc_mixed_free(&s, &ref, &red);
}

START_TEST(test_rc_call_roundtrip_sizes)
{
	call_roundtrip(sizes[_i], 0);
}
END_TEST

START_TEST(test_rc_4_6_call_roundtrip_split_padded)
{
	call_roundtrip(sizes[_i], RC_RCH_SPLIT | RC_RCH_PAD);
}
END_TEST

/* Reply round trip through Write chunks for every item size (V1-WC-9/11). */
START_TEST(test_wc_11_reply_roundtrip_sizes)
{
	size_t n = sizes[_i];
	static const struct rw_ddp_policy pol = { .mode = RW_DDP_ALL };
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;

	rc_mixed_encode(&s, n, rc_put_reply, 0, &pol, &ref, &red);
	rc_check_items(&red, &ref, RC_ITEMS_ASCEND);
	rc_wchunks_make(&wc, &red, red.nitems + 2);

	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(rc_decode_reply(red.buf, red.len, wc.c, wc.n, &pol,
					 (xdrproc_t)xdr_red_mixed, &out, &a),
			 RW_XERR_OK);
	ck_assert_uint_eq(rw_axdr_chunks_used(&a), red.nitems);
	ck_assert_uint_eq(rw_axdr_copies(&a), red.nitems);
	ck_assert_uint_eq(XDR_GETPOS(&a.xdr), ref.len);
	rc_check_reencodes(rc_put_reply, (xdrproc_t)xdr_red_mixed, &out, 0,
			   &ref);
	xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);
	rc_wchunks_free(&wc);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/*
 * Zero copy at the requester: the result buffer handed to the decoder is
 * the memory registered as the Write chunk, so nothing is copied.
 */
START_TEST(test_wc_reply_zero_copy)
{
	static const struct rw_ddp_policy pol = { .mode = RW_DDP_ALL };
	char *src = red_xmalloc(1u << 20);
	red_read_res res, out;
	red_attr attr = { 1, 2, 3, 4, 5, 6 };
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;

	red_fill(src, 1u << 20, 9);
	memset(&res, 0, sizeof(res));
	res.attr = &attr;
	res.count = 1u << 20;
	res.eof = TRUE;
	res.data.data_len = 1u << 20;
	res.data.data_val = src;
	rc_red_encode(&red, rc_put_reply, (xdrproc_t)xdr_red_read_res, &res, 0,
		      256, &pol);
	ck_assert_uint_eq(red.nitems, 1);
	rc_ref_encode(&ref, rc_put_reply, (xdrproc_t)xdr_red_read_res, &res, 0,
		      (1u << 20) + 256);
	rc_wchunks_make(&wc, &red, red.nitems);

	memset(&out, 0, sizeof(out));
	out.data.data_val = wc.mem[0]; /* "read into this buffer" */
	ck_assert_int_eq(rc_decode_reply(red.buf, red.len, wc.c, wc.n, &pol,
					 (xdrproc_t)xdr_red_read_res, &out, &a),
			 RW_XERR_OK);
	ck_assert_ptr_eq(out.data.data_val, wc.mem[0]);
	ck_assert_uint_eq(rw_axdr_zero_copies(&a), 1);
	ck_assert_uint_eq(rw_axdr_copies(&a), 0);
	ck_assert_uint_eq(rw_axdr_bytes_copied(&a), 0);
	ck_assert(!memcmp(out.data.data_val, src, 1u << 20));
	rc_check_reencodes(rc_put_reply, (xdrproc_t)xdr_red_read_res, &out, 0,
			   &ref);
	out.data.data_val = NULL; /* owned by wc */
	xdr_free((xdrproc_t)xdr_red_read_res, (char *)&out);
	rc_wchunks_free(&wc);
	rc_enc_free(&red);
	rc_enc_free(&ref);
	free(src);
}
END_TEST

/* A payload that is not 4-aligned in memory: x_inline says NULL and the
 * rpcgen fallbacks decode the same values. */
START_TEST(test_decode_unaligned_payload)
{
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_rchunks rc;
	red_mixed out;
	unsigned char *mem;
	unsigned off;

	rc_mixed_encode(&s, 33, rc_put_call, RED_MIXED, &pol_all, &ref, &red);
	rc_rchunks_make(&rc, &red, 0);
	mem = red_xmalloc(red.len + 4);
	for (off = 0; off < 4; off++) {
		memcpy(mem + off, red.buf, red.len);
		memset(&out, 0, sizeof(out));
		ck_assert_int_eq(rc_decode_call(mem + off, red.len, rc.c, rc.n,
						NULL, (xdrproc_t)xdr_red_mixed,
						&out),
				 RW_XERR_OK);
		rc_check_reencodes(rc_put_call, (xdrproc_t)xdr_red_mixed, &out,
				   RED_MIXED, &ref);
		xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);
	}
	free(mem);
	rc_rchunks_free(&rc);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Read-chunk descriptors and lengths refused                              */

/* The V1-TV8 payload and a one-chunk list to mutate. */
struct tv8_fixture {
	unsigned char pay[96];
	char data[6004];
	struct rw_ddp_seg seg;
	struct rw_ddp_chunk c;
	red_write_args out;
};

static void tv8_fixture(struct tv8_fixture *f)
{
	memset(f, 0, sizeof(*f));
	hex2bin(tv8_payload_hex, f->pay, sizeof(f->pay));
	red_fill(f->data, 6001, 8);
	f->seg.data = f->data;
	f->seg.len = 6001;
	f->c.position = 96;
	f->c.nsegs = 1;
	f->c.segs = &f->seg;
}

static enum rw_xdr_err tv8_decode(struct tv8_fixture *f,
				  const struct rw_ddp_chunk *c, unsigned n)
{
	enum rw_xdr_err e;

	memset(&f->out, 0, sizeof(f->out));
	e = rc_decode_call(f->pay, 96, c, n, NULL,
			   (xdrproc_t)xdr_red_write_args, &f->out);
	xdr_free((xdrproc_t)xdr_red_write_args, (char *)&f->out);
	return e;
}

/* N-5 / V1-RC-2: position 98 is refused before decoding (ERR_CHUNK). */
START_TEST(test_n5_rc_2_position_not_multiple_of_4)
{
	struct tv8_fixture f;
	enum rw_xdr_err err;

	tv8_fixture(&f);
	f.c.position = 98;
	ck_assert_int_eq(tv8_decode(&f, &f.c, 1), RW_XERR_POS_ALIGN);
	ck_assert_int_eq(rw_xdr_err_class(RW_XERR_POS_ALIGN), RW_XC_ERR_CHUNK);
	ck_assert_uint_eq(rw_ddp_flatten(f.pay, 96, &f.c, 1, NULL, 0, &err), 0);
	ck_assert_int_eq(err, RW_XERR_POS_ALIGN);
}
END_TEST

/* A position past the end of the payload (RFC 8166 §3.4.5: need >
 * |P'|-in_off). */
START_TEST(test_rc_1_position_beyond_payload)
{
	struct tv8_fixture f;

	tv8_fixture(&f);
	f.c.position = 100;
	ck_assert_int_eq(tv8_decode(&f, &f.c, 1), RW_XERR_POS_RANGE);
	f.c.position = 0xfffffffc;
	ck_assert_int_eq(tv8_decode(&f, &f.c, 1), RW_XERR_POS_RANGE);
	f.c.position = 0;
	ck_assert_int_eq(tv8_decode(&f, &f.c, 1), RW_XERR_POS_ZERO);
}
END_TEST

/* Decreasing, repeated and overlapping positions (AMB-V1-6). */
START_TEST(test_positions_decreasing_overlapping)
{
	struct tv8_fixture f;
	struct rw_ddp_chunk c[2];

	tv8_fixture(&f);
	c[0] = f.c;
	c[1] = f.c;
	c[0].position = 96;
	c[1].position = 48; /* decreasing */
	ck_assert_int_eq(tv8_decode(&f, c, 2), RW_XERR_POS_ORDER);
	c[1].position = 96; /* repeated */
	ck_assert_int_eq(tv8_decode(&f, c, 2), RW_XERR_POS_ORDER);
	c[1].position = 96 + 6000; /* inside the first chunk */
	ck_assert_int_eq(tv8_decode(&f, c, 2), RW_XERR_POS_ORDER);
	c[1].position = 96 + 6004; /* right after it, at the end: valid,
					 * but the message never reaches it */
	ck_assert_int_eq(tv8_decode(&f, c, 2), RW_XERR_UNUSED_CHUNK);
	c[1].position = 96 + 6008; /* past the payload */
	ck_assert_int_eq(tv8_decode(&f, c, 2), RW_XERR_POS_RANGE);
	/* a chunk of length 0 */
	f.seg.len = 0;
	ck_assert_int_eq(tv8_decode(&f, &f.c, 1), RW_XERR_CHUNK_EMPTY);
}
END_TEST

/*
 * AMB-V1-12 / V1-CH-11: for L = 6001 only 6001 and 6004 are accepted;
 * anything else is GARBAGE_ARGS, never an overrun.
 */
START_TEST(test_amb_v1_12_read_chunk_len)
{
	struct tv8_fixture f;
	uint32_t len;

	tv8_fixture(&f);
	for (len = 5990; len <= 6004; len++) {
		enum rw_xdr_err e;

		f.seg.len = len;
		e = tv8_decode(&f, &f.c, 1);
		if (len == 6001 || len == 6004) {
			ck_assert_int_eq(e, RW_XERR_OK);
		} else {
			ck_assert_int_eq(e, RW_XERR_CHUNK_LEN);
			ck_assert_int_eq(rw_xdr_err_class(e),
					 RW_XC_GARBAGE_ARGS);
		}
	}
}
END_TEST

/*
 * A chunk where the decoder reads a word, or in the RPC header, or at an
 * item the ULB does not designate (V1-DDP-1, V1-GSS-2).
 */
START_TEST(test_ddp_1_chunk_at_wrong_item)
{
	static const struct rw_ddp_policy fh_only = {
		.mode = RW_DDP_ITEMS,
		.mask = RW_DDP_ITEM(0),
	};
	struct tv8_fixture f;
	unsigned char pay[64];
	char fh[32];
	struct rw_ddp_seg seg = { fh, 32 };
	struct rw_ddp_chunk c = { 44, 1, &seg };

	tv8_fixture(&f);
	/* position 92 is the data<> length word: read as a word */
	f.c.position = 92;
	memset(&f.out, 0, sizeof(f.out));
	ck_assert_int_eq(rc_decode_call(f.pay, 92, &f.c, 1, NULL,
					(xdrproc_t)xdr_red_write_args, &f.out),
			 RW_XERR_CHUNK_TYPE);
	xdr_free((xdrproc_t)xdr_red_write_args, (char *)&f.out);

	/* position 20 is inside the call header (cred flavor) */
	f.c.position = 20;
	ck_assert_int_eq(tv8_decode(&f, &f.c, 1), RW_XERR_NOT_ELIGIBLE);

	/* the data item where the ULB only allows the file handle */
	f.c.position = 96;
	memset(&f.out, 0, sizeof(f.out));
	ck_assert_int_eq(rc_decode_call(f.pay, 96, &f.c, 1, &fh_only,
					(xdrproc_t)xdr_red_write_args, &f.out),
			 RW_XERR_NOT_ELIGIBLE);
	xdr_free((xdrproc_t)xdr_red_write_args, (char *)&f.out);

	/* ... and the file handle itself as a chunk is fine */
	memcpy(pay, f.pay, 44);
	memcpy(pay + 44, f.pay + 76, 20);
	memcpy(fh, f.pay + 44, 32);
	memset(&f.out, 0, sizeof(f.out));
	{
		struct rw_ddp_chunk two[2] = { c, f.c };

		ck_assert_int_eq(rc_decode_call(pay, 64, two, 2, NULL,
						(xdrproc_t)xdr_red_write_args,
						&f.out),
				 RW_XERR_OK);
		ck_assert(!memcmp(f.out.file.red_fh_val, fh, 32));
		xdr_free((xdrproc_t)xdr_red_write_args, (char *)&f.out);
	}
}
END_TEST

/* A chunk the message never reaches, and payload left over. */
START_TEST(test_unused_chunk_and_trailing)
{
	struct tv8_fixture f;
	struct rw_axdr a;
	struct rpc_msg m;
	struct red_cred_area ca;
	long l;

	tv8_fixture(&f);
	/* decode only the header: the chunk at 96 is never consumed */
	ck_assert(rw_axdr_create(&a, f.pay, 96, RW_AXDR_READ, &f.c, 1, NULL));
	ck_assert(red_get_call(&a.xdr, &m, &ca, RED_XDR_VOID, NULL));
	ck_assert_int_eq(rw_axdr_finish(&a), RW_XERR_UNUSED_CHUNK);

	/* no chunk, and stop before the end */
	ck_assert(rw_axdr_create(&a, f.pay, 96, RW_AXDR_READ, NULL, 0, NULL));
	ck_assert(XDR_GETLONG(&a.xdr, &l));
	ck_assert_int_eq(rw_axdr_finish(&a), RW_XERR_TRAILING);

	/* the item read but not its pad */
	ck_assert(rw_axdr_create(&a, f.pay, 96, RW_AXDR_READ, &f.c, 1, NULL));
	ck_assert(XDR_SETPOS(&a.xdr, 0));
	ck_assert(!XDR_SETPOS(&a.xdr, 4));
	ck_assert_ptr_nonnull(XDR_INLINE(&a.xdr, 92));
	ck_assert_ptr_null(XDR_INLINE(&a.xdr, 8)); /* runs into chunk */
	ck_assert(XDR_GETLONG(&a.xdr, &l));
	ck_assert(rw_xdr_begin_body(&a.xdr));
	{
		char *buf = red_xmalloc(6001);

		ck_assert(XDR_GETBYTES(&a.xdr, buf, 6001));
		ck_assert_uint_eq(XDR_GETPOS(&a.xdr), 96 + 6001);
		ck_assert(!XDR_GETLONG(&a.xdr, &l)); /* pad pending */
		ck_assert_int_eq(rw_axdr_error(&a), RW_XERR_CHUNK_TYPE);
		free(buf);
	}
}
END_TEST

/* A truncated payload at every length: clean FALSE, never a crash. */
START_TEST(test_payload_truncated_every_length)
{
	struct red_mixed_store s;
	struct rc_enc red;
	struct rc_rchunks rc;
	uint32_t len;

	red_mixed_make(&s, 21);
	rc_red_encode(&red, rc_put_call, (xdrproc_t)xdr_red_mixed, &s.m,
		      RED_MIXED, red_mixed_cap(21), &pol_all);
	rc_rchunks_make(&rc, &red, RC_RCH_SPLIT);
	for (len = 0; len < red.len; len++) {
		unsigned char *cut = red_xmalloc(len);
		red_mixed out;
		unsigned n = rc.n;
		enum rw_xdr_err e;

		memcpy(cut, red.buf, len);
		/* the longest chunk list still valid for this payload */
		while (n && (rw_ddp_flatten(cut, len, rc.c, n, NULL, 0, &e),
			     e != RW_XERR_OK))
			n--;
		memset(&out, 0, sizeof(out));
		e = rc_decode_call(cut, len, rc.c, n, NULL,
				   (xdrproc_t)xdr_red_mixed, &out);
		if (n == rc.n)
			ck_assert_int_ne(e, RW_XERR_OK);
		xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);
		free(cut);
	}
	rc_rchunks_free(&rc);
	rc_enc_free(&red);
	red_mixed_free(&s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Write-chunk returned lengths (V1-TV10)                     */

/* The READ reply of V1-TV9/10: 6001 bytes, Write chunk 2 x 4096. */
struct tv10_fixture {
	char src[6001];
	char wmem[8192]; /* the requester's registered buffer */
	red_read_res res;
	struct rc_enc red;
	struct rw_ddp_seg seg[2];
	struct rw_ddp_chunk c;
};

static void tv10_fixture(struct tv10_fixture *f)
{
	static const struct rw_ddp_policy pol = { .mode = RW_DDP_ALL };

	memset(f, 0, sizeof(*f));
	red_fill(f->src, sizeof(f->src), 10);
	f->res.count = 6001;
	f->res.eof = TRUE;
	f->res.data.data_len = 6001;
	f->res.data.data_val = f->src;
	rc_red_encode(&f->red, rc_put_reply, (xdrproc_t)xdr_red_read_res,
		      &f->res, 0, 256, &pol);
	ck_assert_uint_eq(f->red.nitems, 1);
	/* reply header 24 + attr/count/eof/len 16; no data, no pad */
	ck_assert_uint_eq(f->red.len, 40);
	ck_assert_uint_eq(f->red.items[0].position, 40);
	memcpy(f->wmem, f->src, 6001); /* the responder's RDMA Write */
	memset(f->wmem + 6001, 0x5a, sizeof(f->wmem) - 6001);
	f->seg[0].data = f->wmem;
	f->seg[0].len = 4096;
	f->seg[1].data = f->wmem + 4096;
	f->c.nsegs = 2;
	f->c.segs = f->seg;
}

static enum rw_xdr_err tv10_decode(struct tv10_fixture *f, uint32_t len2)
{
	red_read_res out;
	struct rw_axdr a;
	enum rw_xdr_err e;

	f->seg[1].len = len2;
	memset(&out, 0, sizeof(out));
	e = rc_decode_reply(f->red.buf, f->red.len, &f->c, 1, NULL,
			    (xdrproc_t)xdr_red_read_res, &out, &a);
	if (e == RW_XERR_OK) {
		/* exactly L octets used, pad not taken from the payload */
		ck_assert_uint_eq(out.data.data_len, 6001);
		ck_assert(!memcmp(out.data.data_val, f->src, 6001));
		ck_assert_uint_eq(XDR_GETPOS(&a.xdr), 40 + 6004);
	}
	xdr_free((xdrproc_t)xdr_red_read_res, (char *)&out);
	return e;
}

/* V1-TV10a / V1-WC-10: 4096 + 1905 = 6001 accepted. */
START_TEST(test_tv10a_wc_10_returned_len_exact)
{
	struct tv10_fixture *f = red_xmalloc(sizeof(*f));

	tv10_fixture(f);
	ck_assert_int_eq(tv10_decode(f, 1905), RW_XERR_OK);
	rc_enc_free(&f->red);
	free(f);
}
END_TEST

/* V1-TV10b / AMB-V1-12: an RFC 5666 peer's 4096 + 1908 = 6004 accepted,
 * and still only 6001 octets used. */
START_TEST(test_tv10b_amb_v1_12_returned_len_rounded)
{
	struct tv10_fixture *f = red_xmalloc(sizeof(*f));

	tv10_fixture(f);
	ck_assert_int_eq(tv10_decode(f, 1908), RW_XERR_OK);
	ck_assert_int_eq(tv10_decode(f, 1906), RW_XERR_OK);
	rc_enc_free(&f->red);
	free(f);
}
END_TEST

/* N-16: 4096 + 1920 = 6016 > roundup4(6001) refused; Lret < L refused
 * (DDP violation: fail the RPC). */
START_TEST(test_n16_returned_len_refused)
{
	struct tv10_fixture *f = red_xmalloc(sizeof(*f));

	tv10_fixture(f);
	ck_assert_int_eq(tv10_decode(f, 1920), RW_XERR_CHUNK_LEN);
	ck_assert_int_eq(tv10_decode(f, 1909), RW_XERR_CHUNK_LEN);
	ck_assert_int_eq(tv10_decode(f, 1904), RW_XERR_CHUNK_LEN);
	ck_assert_int_eq(tv10_decode(f, 0), RW_XERR_CHUNK_LEN);
	f->seg[0].len = 0; /* whole chunk returned unused: V1-DDP-3 */
	ck_assert_int_eq(tv10_decode(f, 0), RW_XERR_CHUNK_LEN);
	rc_enc_free(&f->red);
	free(f);
}
END_TEST

/*
 * V1-WC-3/6, V1-DDP-2: fewer chunks than results leaves the rest inline;
 * unused chunks come back zeroed and are fine; a chunk carrying data that
 * no result claims is a DDP violation.
 */
START_TEST(test_wc_3_6_ddp_2_chunk_accounting)
{
	static const struct rw_ddp_policy pol2 = {
		.mode = RW_DDP_ALL,
		.max_chunks = 2,
	};
	static const struct rw_ddp_policy none = { .mode = RW_DDP_NONE };
	struct red_mixed_store s;
	struct rc_enc red, ref;
	struct rc_wchunks wc;
	struct rw_axdr a;
	red_mixed out;

	rc_mixed_encode(&s, 40, rc_put_reply, 0, &pol2, &ref, &red);
	ck_assert_uint_eq(red.nitems, 2);
	rc_wchunks_make(&wc, &red, red.nitems);
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(rc_decode_reply(red.buf, red.len, wc.c, wc.n, NULL,
					 (xdrproc_t)xdr_red_mixed, &out, &a),
			 RW_XERR_OK);
	rc_check_reencodes(rc_put_reply, (xdrproc_t)xdr_red_mixed, &out, 0,
			   &ref);
	xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);
	rc_wchunks_free(&wc);
	rc_enc_free(&red);

	/* nothing reduced, chunks returned with data anyway */
	rc_red_encode(&red, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s.m, 0,
		      red_mixed_cap(40), &none);
	{
		char junk[8] = "junkjunk";
		struct rw_ddp_seg sg[2] = { { NULL, 0 }, { junk, 8 } };
		struct rw_ddp_chunk c[2] = { { 0, 1, &sg[0] },
					     { 0, 1, &sg[1] } };

		memset(&out, 0, sizeof(out));
		ck_assert_int_eq(rc_decode_reply(red.buf, red.len, c, 1, &none,
						 (xdrproc_t)xdr_red_mixed, &out,
						 &a),
				 RW_XERR_OK);
		xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);
		memset(&out, 0, sizeof(out));
		ck_assert_int_eq(rc_decode_reply(red.buf, red.len, c, 2, &none,
						 (xdrproc_t)xdr_red_mixed, &out,
						 &a),
				 RW_XERR_UNUSED_CHUNK);
		xdr_free((xdrproc_t)xdr_red_mixed, (char *)&out);
	}
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* Bad arguments, wrong direction, error names. */
START_TEST(test_bad_args_and_names)
{
	struct rw_axdr a;
	struct rw_rxdr r;
	struct rw_ddp_seg seg = { NULL, 4 };
	struct rw_ddp_chunk c = { 4, 1, &seg };
	unsigned char pay[8] = { 0 };
	enum rw_xdr_err e;
	long l = 0;
	int i;

	ck_assert(!rw_axdr_create(&a, NULL, 4, RW_AXDR_READ, NULL, 0, NULL));
	ck_assert_int_eq(rw_axdr_error(&a), RW_XERR_BAD_ARG);
	ck_assert(!rw_axdr_create(&a, pay, 8, RW_AXDR_READ, &c, 1, NULL));
	ck_assert_int_eq(rw_axdr_error(&a), RW_XERR_BAD_ARG);
	ck_assert(!rw_axdr_create(&a, pay, 8, RW_AXDR_WRITE, NULL, 1, NULL));
	ck_assert(!rw_axdr_create(&a, pay, 8, (enum rw_axdr_mode)7, NULL, 0,
				  NULL));
	ck_assert(rw_axdr_create(&a, NULL, 0, RW_AXDR_READ, NULL, 0, NULL));
	ck_assert(!XDR_GETLONG(&a.xdr, &l));
	ck_assert_int_eq(rw_axdr_error(&a), RW_XERR_SHORT);
	ck_assert(rw_axdr_create(&a, pay, 8, RW_AXDR_WRITE, NULL, 0, NULL));
	ck_assert(!XDR_PUTLONG(&a.xdr, &l));
	ck_assert_int_eq(rw_axdr_error(&a), RW_XERR_BAD_ARG);
	ck_assert(!XDR_GETLONG(&a.xdr, &l)); /* sticky */
	ck_assert(!rw_rxdr_create(&r, NULL, 16, NULL, NULL, 0));
	ck_assert(!rw_ddp_unreduce(NULL, 4, NULL, 0, pay, 8, &e));
	ck_assert_int_eq(e, RW_XERR_BAD_ARG);
	ck_assert(!rw_ddp_flatten(pay, 8, NULL, 0, pay, 4, &e));
	ck_assert_int_eq(e, RW_XERR_NOSPACE);
	{
		XDR mem;

		xdrmem_create(&mem, (char *)pay, 8, XDR_ENCODE);
		ck_assert(!rw_xdr_begin_body(&mem));
	}
	for (i = 0; i <= RW_XERR_NR; i++)
		ck_assert_ptr_nonnull(rw_xdr_err_str((enum rw_xdr_err)i));
	ck_assert_str_eq(rw_xdr_err_str(RW_XERR_NR), "unknown");
	ck_assert(!rw_ddp_designated(&pol_none, 0));
	ck_assert(rw_ddp_designated(NULL, 99));
	{
		static const struct rw_ddp_policy hi = {
			.mode = RW_DDP_ITEMS,
			.mask = ~(uint64_t)0,
		};

		ck_assert(rw_ddp_designated(&hi, 63));
		ck_assert(!rw_ddp_designated(&hi, 64));
	}
}
END_TEST

Suite *reduce_suite(void)
{
	Suite *s = suite_create("reduce");
	TCase *enc = tcase_create("encode");
	TCase *rt = tcase_create("roundtrip");
	TCase *neg = tcase_create("refuse");

	tcase_add_test(enc, test_tv8_v1_rc_1_2_5_7_reduced_payload);
	tcase_add_test(enc, test_example2_amb_v1_5_unreduced_positions);
	tcase_add_test(enc, test_gss_2_header_never_reduced);
	tcase_add_test(enc, test_gss_3_no_reduction_mode);
	tcase_add_test(enc, test_min_len_keeps_small_items_inline);
	tcase_add_test(enc, test_ch_2_item_mask_several);
	tcase_add_test(enc, test_ch_5_7_optional_and_fixed);
	tcase_add_test(enc, test_wc_3_max_chunks_rest_inline);
	tcase_add_test(enc, test_encode_buffer_full_every_cap);
	tcase_add_test(enc, test_encode_too_many_items);
	tcase_add_test(enc, test_encode_position_range);
	tcase_add_test(enc, test_encode_inline_aligned_and_not);
	tcase_add_test(enc, test_encode_getpos_setpos);
	tcase_add_test(enc, test_encode_pad_rules);
	suite_add_tcase(s, enc);

	tcase_add_test(rt, test_tv8_v1_rc_3_4_6_8_responder_rebuild);
	tcase_add_loop_test(rt, test_rc_call_roundtrip_sizes, 0, NSIZES);
	tcase_add_loop_test(rt, test_rc_4_6_call_roundtrip_split_padded, 0,
			    NSIZES);
	tcase_add_loop_test(rt, test_wc_11_reply_roundtrip_sizes, 0, NSIZES);
	tcase_add_test(rt, test_wc_reply_zero_copy);
	tcase_add_test(rt, test_decode_unaligned_payload);
	suite_add_tcase(s, rt);

	tcase_add_test(neg, test_n5_rc_2_position_not_multiple_of_4);
	tcase_add_test(neg, test_rc_1_position_beyond_payload);
	tcase_add_test(neg, test_positions_decreasing_overlapping);
	tcase_add_test(neg, test_amb_v1_12_read_chunk_len);
	tcase_add_test(neg, test_ddp_1_chunk_at_wrong_item);
	tcase_add_test(neg, test_unused_chunk_and_trailing);
	tcase_add_test(neg, test_payload_truncated_every_length);
	tcase_add_test(neg, test_tv10a_wc_10_returned_len_exact);
	tcase_add_test(neg, test_tv10b_amb_v1_12_returned_len_rounded);
	tcase_add_test(neg, test_n16_returned_len_refused);
	tcase_add_test(neg, test_wc_3_6_ddp_2_chunk_accounting);
	tcase_add_test(neg, test_bad_args_and_names);
	suite_add_tcase(s, neg);
	return s;
}
