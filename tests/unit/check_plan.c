/*
 * check_plan.c - Short/Chunked/Long decisions and header sizing (RFC 8166
 * §4.2-4.3, §3.5; V1-HDR-7, V1-RP-1..4, V1-SZ-2, S-4).
 */
#include <check.h>
#include <stdint.h>

#include "wire/rw_plan.h"
#include "check_util.h"

/* Header sizes of the vectors of doc/requirements.md §6 (their byte counts). */
START_TEST(test_shape_len_matches_vectors)
{
	struct rw_hdr_shape tv1 = { .vers = 1 };
	struct rw_hdr_shape v2tv1 = { .vers = 2 };
	struct rw_hdr_shape tv6 = { .vers = 1, .read_segs = 1 };
	struct rw_hdr_shape tv7 = {
		.vers = 1, .read_segs = 1, .reply_chunk = true, .reply_segs = 1
	};
	struct rw_hdr_shape tv8 = { .vers = 1, .read_segs = 2 };
	struct rw_hdr_shape tv9 = { .vers = 1,
				    .write_chunks = 1,
				    .write_segs = 2 };
	struct rw_hdr_shape tv11a = { .vers = 1,
				      .reply_chunk = true,
				      .reply_segs = 1 };
	struct rw_hdr_shape v2tv3 = { .vers = 2, .read_segs = 1 };

	ck_assert_uint_eq(rw_hdr_shape_len(&tv1), 28);	 /* V1-TV1 */
	ck_assert_uint_eq(rw_hdr_shape_len(&v2tv1), 36); /* V2-TV1 */
	ck_assert_uint_eq(rw_hdr_shape_len(&tv6), 52);	 /* V1-TV6 */
	ck_assert_uint_eq(rw_hdr_shape_len(&tv7), 72);	 /* V1-TV7 */
	ck_assert_uint_eq(rw_hdr_shape_len(&tv8), 76);	 /* V1-TV8 */
	ck_assert_uint_eq(rw_hdr_shape_len(&tv9), 68);	 /* V1-TV9 */
	ck_assert_uint_eq(rw_hdr_shape_len(&tv11a), 48); /* V1-TV11a */
	ck_assert_uint_eq(rw_hdr_shape_len(&v2tv3), 60); /* V2-TV3 */
}
END_TEST

static struct rw_call_in v1_call(uint32_t payload)
{
	struct rw_call_in in = {
		.vers = 1,
		.call_inline = RW_V1_INLINE_DEFAULT,
		.reply_inline = RW_V1_INLINE_DEFAULT,
		.payload_len = payload,
		.reduced_len = payload,
		.pzrc_segs = 1,
		.max_reply_len = 100,
		.reply_chunk_segs = 1,
	};
	return in;
}

/* V1-TV2: a NULL Call (40 octets) is Short, 68 octets in all. */
START_TEST(test_null_call_is_short)
{
	struct rw_call_in in = v1_call(40);
	struct rw_call_plan p;

	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_SHORT);
	ck_assert_uint_eq(p.send_len, 68);
	ck_assert(!p.reply_chunk);
}
END_TEST

/* V1-HDR-7: the threshold covers header + payload; exactly 1024 fits,
 * 1025 does not (and then, with nothing reduced, the Call is Long). */
START_TEST(test_hdr7_threshold_includes_header)
{
	struct rw_call_in in = v1_call(1024 - 28);
	struct rw_call_plan p;

	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_SHORT);
	ck_assert_uint_eq(p.send_len, 1024);

	in = v1_call(1024 - 28 + 4);
	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_LONG);
}
END_TEST

/* V1-RP-4: nothing eligible and too big -> Long Call, the Send carries only
 * an RDMA_NOMSG header with a PZRC (V1-TV6: 52 octets): items that are not
 * DDP-eligible leave the Send only inside a Long message (V1-RP-6). */
START_TEST(test_rp4_long_call)
{
	struct rw_call_in in = v1_call(2048);
	struct rw_call_plan p;

	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_LONG);
	ck_assert_uint_eq(p.hdr_len, 52);
	ck_assert_uint_eq(p.send_len, 52);
}
END_TEST

/* V1-TV8: a 6100-octet NFS WRITE reduced to 96 octets
 * with a 2-segment Read chunk is Chunked: 76 + 96 octets. */
START_TEST(test_chunked_call_tv8)
{
	struct rw_call_in in = v1_call(6100);
	struct rw_call_plan p;

	in.reduced_len = 96;
	in.read_segs = 2;
	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_CHUNKED);
	ck_assert_uint_eq(p.hdr_len, 76);
	ck_assert_uint_eq(p.send_len, 172);
}
END_TEST

/* Reduced but still too large: Long, PZRC plus the items' Read chunks. */
START_TEST(test_reduced_still_too_big_is_long)
{
	struct rw_call_in in = v1_call(100000);
	struct rw_call_plan p;

	in.reduced_len = 5000;
	in.read_segs = 1;
	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_LONG);
	ck_assert_uint_eq(p.hdr_len, 28 + 2 * 24);
}
END_TEST

/* V1-RP-1/2: a Reply chunk is offered exactly when the largest possible
 * Reply (header included) exceeds our receive size, sized for it. */
START_TEST(test_rp1_reply_chunk_when_max_reply_exceeds)
{
	struct rw_call_in in = v1_call(40);
	struct rw_call_plan p;

	in.max_reply_len = 1024 - 28;
	rw_plan_call(&in, &p);
	ck_assert(!p.reply_chunk);

	in.max_reply_len = 1024 - 28 + 4;
	rw_plan_call(&in, &p);
	ck_assert(p.reply_chunk);
	ck_assert_uint_eq(p.reply_chunk_len, 1024 - 28 + 4);
	ck_assert_uint_eq(p.send_len, 48 + 40); /* V1-TV11a header + call */
}
END_TEST

/* Write chunks grow the Reply's header; the check must include them. */
START_TEST(test_rp1_reply_header_includes_write_list)
{
	struct rw_call_in in = v1_call(40);
	struct rw_call_plan p;

	in.write_chunks = 1;
	in.write_segs = 2;
	in.max_reply_len = 1024 - 68 + 4; /* fits only without the list */
	rw_plan_call(&in, &p);
	ck_assert(p.reply_chunk);
}
END_TEST

/* V2-INL-2: the v2 base header is 36 octets. */
START_TEST(test_v2_header_size_in_plan)
{
	struct rw_call_in in = v1_call(4096 - 36);
	struct rw_call_plan p;

	in.vers = 2;
	in.call_inline = RW_V2_INLINE_DEFAULT;
	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_SHORT);
	in.payload_len = in.reduced_len = 4096 - 32;
	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_LONG);
}
END_TEST

/* Lengths near 4 GiB must not wrap around into "fits". */
START_TEST(test_no_wraparound)
{
	struct rw_call_in in = v1_call(UINT32_MAX - 8);
	struct rw_call_plan p;
	struct rw_reply_in r = {
		.vers = 1,
		.reply_inline = 1024,
		.reduced_len = UINT32_MAX,
	};

	rw_plan_call(&in, &p);
	ck_assert_int_eq(p.kind, RW_LONG);
	in = v1_call(40);
	in.max_reply_len = UINT32_MAX;
	rw_plan_call(&in, &p);
	ck_assert(p.reply_chunk);
	ck_assert_int_eq(rw_plan_reply(&r), RW_NO_ROOM);
}
END_TEST

/* Responder side (V1-RP-3, AMB-V1-14, S-4). */
START_TEST(test_reply_plans)
{
	struct rw_reply_in r = {
		.vers = 1,
		.reply_inline = 1024,
		.reduced_len = 1024 - 28,
	};

	ck_assert_int_eq(rw_plan_reply(&r), RW_SHORT);
	r.reduced_len += 4;
	ck_assert_int_eq(rw_plan_reply(&r), RW_NO_ROOM); /* S-4 */
	r.reply_chunk = true;
	r.reply_chunk_segs = 1;
	r.reply_chunk_len = 1000;
	ck_assert_int_eq(rw_plan_reply(&r), RW_LONG);
	r.reply_chunk_len = 999; /* too small */
	ck_assert_int_eq(rw_plan_reply(&r), RW_NO_ROOM);
	r.reduced_len = 500;
	r.write_chunks = 1;
	r.write_segs = 2;
	ck_assert_int_eq(rw_plan_reply(&r), RW_SHORT);
}
END_TEST

/*
 * A Long reply's RDMA_NOMSG header must itself fit the requester's
 * Receive (V1-HDR-7): with a Write list so long that it does not, there
 * is no way to reply (AMB-V1-14).  Header: 16 fixed + 4 (no Read list) +
 * Write list (4 + per chunk 8 + 16 per segment, + 4 end) + Reply chunk
 * (4 + 4 + 16 per segment).
 */
START_TEST(test_reply_long_header_must_fit)
{
	struct rw_reply_in r = {
		.vers = 1,
		.reply_inline = 1024,
		.reduced_len = 2000,
		.reply_chunk = true,
		.reply_chunk_segs = 1,
		.reply_chunk_len = 4096,
		.write_chunks = 1,
	};
	struct rw_hdr_shape sh = { .vers = 1,
				   .write_chunks = 1,
				   .reply_chunk = true,
				   .reply_segs = 1 };

	/* the largest Write list whose NOMSG header still fits */
	for (sh.write_segs = 1; rw_hdr_shape_len(&sh) <= 1024; sh.write_segs++)
		;
	r.write_segs = sh.write_segs - 1;
	ck_assert_int_eq(rw_plan_reply(&r), RW_LONG);
	r.write_segs = sh.write_segs;
	ck_assert_int_eq(rw_plan_reply(&r), RW_NO_ROOM);
}
END_TEST

Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_shape_len_matches_vectors);
	tcase_add_test(tc, test_reply_long_header_must_fit);
	tcase_add_test(tc, test_null_call_is_short);
	tcase_add_test(tc, test_hdr7_threshold_includes_header);
	tcase_add_test(tc, test_rp4_long_call);
	tcase_add_test(tc, test_chunked_call_tv8);
	tcase_add_test(tc, test_reduced_still_too_big_is_long);
	tcase_add_test(tc, test_rp1_reply_chunk_when_max_reply_exceeds);
	tcase_add_test(tc, test_rp1_reply_header_includes_write_list);
	tcase_add_test(tc, test_v2_header_size_in_plan);
	tcase_add_test(tc, test_no_wraparound);
	tcase_add_test(tc, test_reply_plans);
	suite_add_tcase(s, tc);
	return s;
}
