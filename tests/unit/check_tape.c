/*
 * check_tape.c - a recorded reply played back (src/wire/rw_tape.h): the
 * playback is the same message, and the reducing encoder cuts the same
 * items from it as from the original encoding, so a resend after
 * RDMA2_ERR_REPLY_RESOURCE / WRITE_RESOURCE (V2-ERR-13, AMB-V2-4) can be
 * answered without running the procedure again.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "wire/rw_tape.h"
#include "check_util.h"
#include "red_codec.h"
#include "red_fixture.h"

/* rc_put_fn that plays the tape passed as obj. */
static bool play(XDR *x, void *obj, xdrproc_t proc, uint32_t nr)
{
	(void)proc;
	(void)nr;
	return rw_tape_play(obj, x);
}

static void record(struct rw_tape *t, rc_put_fn put, xdrproc_t proc, void *obj)
{
	struct rw_txdr x;

	rw_txdr_create(&x, t);
	ck_assert(put(&x.xdr, obj, proc, 0));
	ck_assert_int_eq(rw_txdr_error(&x), RW_XERR_OK);
}

/* Played into xdrmem, the tape is the oracle's octets. */
START_TEST(test_play_is_message)
{
	struct red_mixed_store s;
	struct rc_enc ref, red, back;
	struct rw_ddp_policy all = { .mode = RW_DDP_ALL };
	struct rw_tape t;

	rw_tape_init(&t, 1u << 24);
	rc_mixed_encode(&s, (size_t)_i * 3 + 1, rc_put_reply, 0, &all, &ref,
			&red);
	record(&t, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s.m);
	ck_assert_uint_eq(t.len, ref.len);
	ck_assert_mem_eq(t.img, ref.buf, ref.len);
	rc_ref_encode(&back, play, NULL, &t, 0, ref.cap);
	ck_assert_uint_eq(back.len, ref.len);
	ck_assert_mem_eq(back.buf, ref.buf, ref.len);
	rc_enc_free(&back);
	rw_tape_free(&t);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* Played into the reducing encoder, the same items are cut at the same
 * positions and the reduced octets are the same: item ordinals agree. */
START_TEST(test_play_reduces_alike)
{
	static const struct rw_ddp_policy pols[] = {
		{ .mode = RW_DDP_ALL },
		{ .mode = RW_DDP_ITEMS,
		  .mask = RW_DDP_ITEM(1) | RW_DDP_ITEM(3) },
		{ .mode = RW_DDP_ITEMS, .mask = RW_DDP_ITEM(0), .min_len = 8 },
		{ .mode = RW_DDP_ALL, .max_chunks = 2 },
	};
	const struct rw_ddp_policy *pol = &pols[_i % 4];
	struct red_mixed_store s;
	struct rc_enc ref, red, back;
	struct rw_tape t;
	unsigned k;

	rw_tape_init(&t, 1u << 24);
	rc_mixed_encode(&s, (size_t)_i + 2, rc_put_reply, 0, pol, &ref, &red);
	record(&t, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s.m);
	rc_red_encode(&back, play, NULL, &t, 0, ref.cap, pol);
	ck_assert_uint_eq(back.nitems, red.nitems);
	ck_assert_uint_eq(back.len, red.len);
	ck_assert_uint_eq(back.ulen, red.ulen);
	ck_assert_uint_eq(back.body, red.body);
	ck_assert_mem_eq(back.buf, red.buf, red.len);
	for (k = 0; k < red.nitems; k++) {
		ck_assert_uint_eq(back.items[k].position,
				  red.items[k].position);
		ck_assert_uint_eq(back.items[k].len, red.items[k].len);
		ck_assert_uint_eq(back.items[k].slot, red.items[k].slot);
		ck_assert_mem_eq(back.items[k].data, red.items[k].data,
				 red.items[k].len);
	}
	rc_check_items(&back, &ref, RC_ITEMS_ASCEND);
	rc_enc_free(&back);
	rw_tape_free(&t);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* An encoder that back-patches a length, as RPCSEC_GSS integrity does
 * with XDR_SETPOS: the image has the final octets. */
static bool put_patched(XDR *x, void *obj, xdrproc_t proc, uint32_t nr)
{
	static char data[9] = "abcdefghi";
	u_int start = XDR_GETPOS(x), end, len;
	char *p = data;

	(void)obj;
	(void)proc;
	(void)nr;
	if (!XDR_SETPOS(x, start + 4) || !xdr_bytes(x, &p, &(u_int){ 9 }, 9))
		return false;
	end = XDR_GETPOS(x);
	len = end - start - 4;
	return XDR_SETPOS(x, start) && xdr_u_int(x, &len) && XDR_SETPOS(x, end);
}

START_TEST(test_setpos_backpatch)
{
	struct rc_enc ref, back;
	struct rw_tape t;

	rw_tape_init(&t, 4096);
	rc_ref_encode(&ref, put_patched, NULL, NULL, 0, 256);
	record(&t, put_patched, NULL, NULL);
	ck_assert_uint_eq(t.len, ref.len);
	ck_assert_mem_eq(t.img, ref.buf, ref.len);
	rc_ref_encode(&back, play, NULL, &t, 0, 256);
	ck_assert_mem_eq(back.buf, ref.buf, ref.len);
	rc_enc_free(&back);
	rc_enc_free(&ref);
	rw_tape_free(&t);
}
END_TEST

/* A message beyond the tape's limit fails the recording (the reply is
 * then not kept), and the tape can be used again. */
START_TEST(test_limit)
{
	struct red_mixed_store s;
	struct rc_enc ref, red;
	struct rw_ddp_policy none = { .mode = RW_DDP_NONE };
	struct rw_txdr x;
	struct rw_tape t;

	rc_mixed_encode(&s, 40, rc_put_reply, 0, &none, &ref, &red);
	rw_tape_init(&t, ref.len - 1);
	rw_txdr_create(&x, &t);
	ck_assert(!rc_put_reply(&x.xdr, &s.m, (xdrproc_t)xdr_red_mixed, 0));
	ck_assert_int_eq(rw_txdr_error(&x), RW_XERR_NOSPACE);
	ck_assert_uint_le(rw_tape_bytes(&t), ref.len + 64 * 8);
	t.max = ref.len;
	record(&t, rc_put_reply, (xdrproc_t)xdr_red_mixed, &s.m);
	ck_assert_mem_eq(t.img, ref.buf, ref.len);
	rw_tape_free(&t);
	ck_assert_uint_eq(rw_tape_bytes(&t), 0);
	rc_mixed_free(&s, &ref, &red);
}
END_TEST

/* A recording stream refuses to decode. */
START_TEST(test_no_decode)
{
	struct rw_txdr x;
	struct rw_tape t;
	u_int v;

	rw_tape_init(&t, 64);
	rw_txdr_create(&x, &t);
	x.xdr.x_op = XDR_DECODE;
	ck_assert(!xdr_u_int(&x.xdr, &v));
	ck_assert_int_eq(rw_txdr_error(&x), RW_XERR_BAD_ARG);
	rw_tape_free(&t);
}
END_TEST

Suite *tape_suite(void)
{
	Suite *s = suite_create("tape");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_play_is_message, 0, 6);
	tcase_add_loop_test(tc, test_play_reduces_alike, 0, 12);
	tcase_add_test(tc, test_setpos_backpatch);
	tcase_add_test(tc, test_limit);
	tcase_add_test(tc, test_no_decode);
	suite_add_tcase(s, tc);
	return s;
}
