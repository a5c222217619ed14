/*
 * check_chunk.c - chunk lists and roles: the builders and the Read-chunk
 * iterator, Call and Reply validation (RFC 8166 §3.4, §4.3, AMB-V1-4/6/10/11),
 * reason -> action for both roles (RFC 8166 §4.5, v2-05 §7.2.4), the RDMA_ERROR
 * builders and the role-aware encoders, and the negative vectors N-1..N-18
 * of doc/requirements.md §7 from bytes to the action taken and the error sent.
 */
#include <string.h>

#include "check_util.h"
#include "compiler.h"
#include "hdr_vectors.h"
#include "wire/rw_be.h"
#include "wire/rw_role.h"

static struct rw_hdr_space sp, sp2;

static const struct rw_limits lim12 = {
	.vers_low = 1,
	.vers_high = 2,
	.max_read_chunks = 8,
	.max_write_chunks = 8,
	.max_chunk_segs = 16,
	.max_props = 16,
};

static void setup(void)
{
	rw_hdr_space_init(&sp, &lim12);
	rw_hdr_space_init(&sp2, &lim12);
}

/* Decode a vector that must decode; its arrays come from space. */
static void dec(const char *name, struct rw_hdr *h, struct rw_hdr_space *space,
		uint8_t *buf)
{
	size_t n = hdr_vec(name, buf, 256);

	ck_assert_msg(rw_hdr_decode(buf, n, h, space) == RW_R_OK, "%s", name);
}

static struct rw_segment seg(uint32_t handle, uint32_t len, uint64_t off)
{
	struct rw_segment s = {
		.handle = handle,
		.length = len,
		.offset = off,
	};

	return s;
}

/* ---- Builders and iterator -------------------------------------------- */

/* V1-RC-1/3: the TV8 Read chunk built from (position, segments). */
START_TEST(test_read_builder_tv8)
{
	struct rw_segment s[2] = {
		seg(0xa002, 4096, 0x00007f3a12350000ull),
		seg(0xa003, 1905, 0x00007f3a12360000ull),
	};
	struct rw_read_seg reads[4];
	struct rw_read_builder b;
	uint8_t want[256], out[256];
	struct rw_hdr h;
	size_t n = hdr_vec("V1-TV8", want, sizeof(want));

	rw_read_builder_init(&b, reads, ARRAY_SIZE(reads));
	ck_assert_int_eq(rw_read_builder_add(&b, 96, s, 2), RW_R_OK);
	rw_hdr_init(&h, 1, RW_MSG, 0x12345678, 32);
	rw_hdr_set_reads(&h, &b);
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), n);
	ck_assert(!memcmp(out, want, n));
}
END_TEST

/* V1-RC-2, AMB-V1-5/6. */
START_TEST(test_read_builder_rules)
{
	struct rw_segment a = seg(1, 5, 0), b5 = seg(2, 10, 0);
	struct rw_segment z = seg(3, 100, 0);
	struct rw_segment big[2] = { seg(4, 0xffffffffu, 0), seg(5, 1, 0) };
	struct rw_read_seg reads[3];
	struct rw_read_builder b;

	rw_read_builder_init(&b, reads, ARRAY_SIZE(reads));
	ck_assert_int_eq(rw_read_builder_add(&b, 98, &a, 1), RW_R_BAD_POSITION);
	ck_assert_int_eq(rw_read_builder_add(&b, 104, &a, 0), RW_R_EMPTY_CHUNK);
	ck_assert_int_eq(rw_read_builder_add(&b, 104, big, 2),
			 RW_R_CHUNK_OVERFLOW);
	ck_assert_int_eq(rw_read_builder_add(&b, 104, &a, 1), RW_R_OK);
	/* chunk A occupies 104..112 of the unreduced stream: B may not start
	 * at 108, nor at A's position again */
	ck_assert_int_eq(rw_read_builder_add(&b, 108, &b5, 1),
			 RW_R_READ_OVERLAP);
	ck_assert_int_eq(rw_read_builder_add(&b, 104, &b5, 1),
			 RW_R_POSITION_ORDER);
	ck_assert_int_eq(rw_read_builder_add(&b, 100, &b5, 1),
			 RW_R_POSITION_ORDER);
	/* the PZRC comes first or not at all */
	ck_assert_int_eq(rw_read_builder_add(&b, 0, &z, 1),
			 RW_R_POSITION_ORDER);
	ck_assert_int_eq(rw_read_builder_add(&b, 120, &b5, 1), RW_R_OK);
	ck_assert_uint_eq(b.n, 2);
	ck_assert_int_eq(rw_read_builder_add(&b, 200, big, 2),
			 RW_R_TOO_MANY_READS);
	ck_assert_uint_eq(b.n, 2);
	/* a PZRC reserves nothing: a chunk may follow at any position */
	rw_read_builder_init(&b, reads, ARRAY_SIZE(reads));
	ck_assert_int_eq(rw_read_builder_add(&b, 0, &z, 1), RW_R_OK);
	ck_assert_int_eq(rw_read_builder_add(&b, 4, &a, 1), RW_R_OK);
	ck_assert_int_eq(rw_read_builder_add(&b, 0xfffffff8u, &b5, 1),
			 RW_R_CHUNK_OVERFLOW);
}
END_TEST

/* V1-RC-4: chunks in list order, segments concatenated, lengths summed. */
START_TEST(test_read_iter)
{
	uint8_t buf[256];
	struct rw_read_chunk c;
	struct rw_read_iter it;
	struct rw_read_seg r[4];
	struct rw_hdr h;

	dec("V1-TV8", &h, &sp, buf);
	rw_read_iter_init(&it, &h);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), 1);
	ck_assert_uint_eq(c.position, 96);
	ck_assert_uint_eq(c.first, 0);
	ck_assert_uint_eq(c.nsegs, 2);
	ck_assert_uint_eq(c.length, 6001);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), 0);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), 0);

	/* PZRC, then two chunks; the last one's length overflows */
	r[0].position = 0;
	r[0].seg = seg(1, 2048, 0);
	r[1].position = 8;
	r[1].seg = seg(2, 3, 0);
	r[2].position = 16;
	r[2].seg = seg(3, 0xffffffffu, 0);
	r[3].position = 16;
	r[3].seg = seg(4, 1, 0);
	rw_hdr_init(&h, 1, RW_NOMSG, 1, 1);
	h.reads = r;
	h.nreads = 4;
	rw_read_iter_init(&it, &h);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), 1);
	ck_assert_uint_eq(c.position, 0);
	ck_assert_uint_eq(c.length, 2048);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), 1);
	ck_assert_uint_eq(c.first, 1);
	ck_assert_uint_eq(c.length, 3);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), -1);
	ck_assert_int_eq(rw_read_iter_next(&it, &c), 0);
	ck_assert_int_eq(rw_validate_call(&h), RW_R_CHUNK_OVERFLOW);
}
END_TEST

/* V1-WC-1, AMB-V1-11: Write list and Reply chunk builders (TV9, TV11a). */
START_TEST(test_write_and_reply_builders)
{
	struct rw_segment w[2] = {
		seg(0xa004, 4096, 0x00007f3a12370000ull),
		seg(0xa005, 4096, 0x00007f3a12380000ull),
	};
	struct rw_segment r = seg(0xa006, 16384, 0x00007f3a12390000ull);
	struct rw_segment ov[2] = { seg(1, 0x80000000u, 0),
				    seg(2, 0x80000000u, 0) };
	struct rw_chunk chunks[2];
	struct rw_write_builder b;
	uint8_t want[256], out[256];
	struct rw_hdr h;
	size_t n;

	rw_write_builder_init(&b, chunks, ARRAY_SIZE(chunks));
	ck_assert_int_eq(rw_write_builder_add(&b, w, 0), RW_R_EMPTY_CHUNK);
	ck_assert_int_eq(rw_write_builder_add(&b, ov, 2), RW_R_CHUNK_OVERFLOW);
	ck_assert_int_eq(rw_write_builder_add(&b, w, 2), RW_R_OK);
	rw_hdr_init(&h, 1, RW_MSG, 0x12345678, 32);
	rw_hdr_set_writes(&h, &b);
	n = hdr_vec("V1-TV9", want, sizeof(want));
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), n);
	ck_assert(!memcmp(out, want, n));
	ck_assert_int_eq(rw_write_builder_add(&b, w, 1), RW_R_OK);
	ck_assert_int_eq(rw_write_builder_add(&b, w, 1), RW_R_TOO_MANY_WRITES);

	rw_hdr_init(&h, 1, RW_MSG, 0x12345678, 32);
	ck_assert_int_eq(rw_hdr_set_reply(&h, &r, 0), RW_R_EMPTY_CHUNK);
	ck_assert(!h.has_reply);
	ck_assert_int_eq(rw_hdr_set_reply(&h, &r, 1), RW_R_OK);
	n = hdr_vec("V1-TV11a", want, sizeof(want));
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), n);
	ck_assert(!memcmp(out, want, n));
}
END_TEST

/* ---- Call validation (responder) -------------------------------------- */

START_TEST(test_validate_call_accepts_vectors)
{
	static const char *const calls[] = {
		"V1-TV1",  "V1-TV2",   "V1-TV6",  "V1-TV7", "V1-TV8",
		"V1-TV9",  "V1-TV11a", "V2-TV1",  "V2-TV3", "V2-TV9a",
		"V2-TV10", "V2-TV11",  "V2-TV13", "N-14",
	};

	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		uint8_t buf[256];
		struct rw_hdr h;

		dec(calls[i], &h, &sp, buf);
		ck_assert_msg(rw_validate_call(&h) == RW_R_OK, "%s: %s",
			      calls[i], rw_reason_str(rw_validate_call(&h)));
	}
}
END_TEST

/* V1-PROC-2 (N-3), V1-RC-2 (N-5), AMB-V1-11 (N-6), AMB-V1-10 (N-10). */
START_TEST(test_validate_call_shape_rules)
{
	static const struct {
		const char *name;
		enum rw_reason why;
	} bad[] = {
		{ "N-3", RW_R_NOMSG_NO_CHUNK },
		{ "N-5", RW_R_BAD_POSITION },
		{ "N-6", RW_R_EMPTY_CHUNK },
		{ "N-10a", RW_R_MISPLACED_PZRC },
		{ "N-10b", RW_R_MISPLACED_PZRC },
		{ "N-11", RW_R_BAD_INV_HANDLE },
		{ "V1-TV5", RW_R_ERROR_RECEIVED }, /* N-8 */
		{ "V2-TV2", RW_R_DIR_MISMATCH },   /* a Reply as Call */
		{ "V2-TV12a", RW_R_UNEXPECTED_PROC },
		{ "N-15", RW_R_BAD_OPTION },
		{ "XC-TV1", RW_R_BAD_OPTION }, /* AMB-V2-1 */
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint8_t buf[256];
		struct rw_hdr h;

		dec(bad[i].name, &h, &sp, buf);
		ck_assert_msg(rw_validate_call(&h) == bad[i].why, "%s: %s",
			      bad[i].name, rw_reason_str(rw_validate_call(&h)));
	}
}
END_TEST

/* AMB-V1-6: positions never decrease; AMB-V1-5: chunks do not overlap in
 * the unreduced stream (AMB-V1-5 with B's reduced offset). */
START_TEST(test_validate_call_read_order)
{
	struct rw_read_seg r[3];
	struct rw_hdr h;

	rw_hdr_init(&h, 1, RW_MSG, 1, 1);
	h.reads = r;
	h.nreads = 2;
	r[0].position = 104;
	r[0].seg = seg(1, 5, 0);
	r[1].position = 120;
	r[1].seg = seg(2, 10, 0);
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	r[1].position = 112;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	r[1].position = 108;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_READ_OVERLAP);
	r[1].position = 100;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_POSITION_ORDER);
	/* interleaved segments of two chunks */
	h.nreads = 3;
	r[1].position = 120;
	r[2].position = 104;
	r[2].seg = seg(3, 1, 0);
	ck_assert_int_eq(rw_validate_call(&h), RW_R_POSITION_ORDER);
	/* V1-RC-10: every PZRC segment has position 0 and they come first */
	h.proc = RW_NOMSG;
	r[0].position = 0;
	r[1].position = 0;
	r[2].position = 8;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	r[0].position = 8;
	r[2].position = 0;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_POSITION_ORDER);
}
END_TEST

/* An RDMA_MSG Call with Read list r[0..n) as listed, and 8 payload octets
 * (XID, CALL), received by a responder with limits lim. */
static enum rw_reason recv_reads(const struct rw_read_seg *r, uint32_t n,
				 const struct rw_limits *lim,
				 struct rw_rx_call *rx)
{
	static struct rw_hdr_space space;
	struct rw_read_seg copy[32];
	uint8_t buf[1024];
	struct rw_hdr h;
	size_t len;

	memcpy(copy, r, n * sizeof(*r));
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, 0x4242, 8);
	h.reads = copy;
	h.nreads = n;
	len = rw_hdr_encode(&h, buf, sizeof(buf) - 8);
	ck_assert_uint_gt(len, 0);
	rw_put32(buf + len, 0x4242);
	rw_put32(buf + len + 4, 0);
	rw_hdr_space_init(&space, lim);
	return rw_recv_call(buf, len + 8, rx, &space);
}

/*
 * AMB-V1-6: a responder takes a Read list in any order, grouped by
 * position with list order kept within a position (V1-RC-4); chunks that
 * overlap once sorted are refused (AMB-V1-5), and merged runs obey the
 * segment limit.
 */
START_TEST(test_amb_v1_6_recv_unsorted_reads)
{
	struct rw_read_seg r[18];
	struct rw_rx_call rx;
	struct rw_limits lim = rw_default_limits;

	/* reversed: b at 120, then a at 104 */
	r[0] = (struct rw_read_seg){ 120, seg(2, 10, 0) };
	r[1] = (struct rw_read_seg){ 104, seg(1, 5, 0) };
	ck_assert_int_eq(recv_reads(r, 2, &lim, &rx), RW_R_OK);
	ck_assert_uint_eq(rx.hdr.reads[0].position, 104);
	ck_assert_uint_eq(rx.hdr.reads[0].seg.handle, 1);
	ck_assert_uint_eq(rx.hdr.reads[1].seg.handle, 2);
	/* interleaved a1 b1 a2 b2: chunks a = a1 a2, b = b1 b2 */
	r[0] = (struct rw_read_seg){ 104, seg(11, 2, 0) };
	r[1] = (struct rw_read_seg){ 120, seg(21, 5, 0) };
	r[2] = (struct rw_read_seg){ 104, seg(12, 3, 0) };
	r[3] = (struct rw_read_seg){ 120, seg(22, 5, 0) };
	ck_assert_int_eq(recv_reads(r, 4, &lim, &rx), RW_R_OK);
	ck_assert_uint_eq(rx.hdr.reads[0].seg.handle, 11);
	ck_assert_uint_eq(rx.hdr.reads[1].seg.handle, 12);
	ck_assert_uint_eq(rx.hdr.reads[2].seg.handle, 21);
	ck_assert_uint_eq(rx.hdr.reads[3].seg.handle, 22);
	/* sorted, they overlap: a (5 octets at 104) reaches 112 */
	r[0] = (struct rw_read_seg){ 108, seg(2, 10, 0) };
	r[1] = (struct rw_read_seg){ 104, seg(1, 5, 0) };
	ck_assert_int_eq(recv_reads(r, 2, &lim, &rx), RW_R_READ_OVERLAP);
	ck_assert_int_eq(rw_reason_action(RW_ROLE_RESPONDER, 1, rx.why, NULL)
				 .err,
			 RW_ERR_CHUNK);
	/* a PZRC listed last still makes an RDMA_MSG Call wrong (N-10) */
	r[0] = (struct rw_read_seg){ 104, seg(1, 5, 0) };
	r[1] = (struct rw_read_seg){ 0, seg(3, 8, 0) };
	ck_assert_int_eq(recv_reads(r, 2, &lim, &rx), RW_R_MISPLACED_PZRC);
	/* runs of 8 and 8 segments at 100 around one at 200: a chunk of
	 * 16, the limit; of 9 and 8: 17, over it, though each run was not */
	for (uint32_t i = 0; i < 17; i++)
		r[i] = (struct rw_read_seg){ i == 8 ? 200 : 100, seg(i, 4, 0) };
	ck_assert_int_eq(recv_reads(r, 17, &lim, &rx), RW_R_OK);
	ck_assert_uint_eq(rx.hdr.reads[15].position, 100);
	ck_assert_uint_eq(rx.hdr.reads[15].seg.handle, 16);
	r[17] = r[16];
	r[17].seg.handle = 17;
	ck_assert_int_eq(recv_reads(r, 18, &lim, &rx), RW_R_TOO_MANY_SEGS);
}
END_TEST

/* V2-RI-1/2, AMB-V2-14: inv_handle is 0 or a handle of the same header. */
START_TEST(test_v2_ri_1_2_inv_handle)
{
	uint8_t buf[256];
	struct rw_segment w = seg(0xb001, 8, 0), r = seg(0xb002, 8, 0);
	struct rw_chunk wc = { 1, &w };
	struct rw_hdr h;

	dec("V2-TV3", &h, &sp, buf);
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	h.inv_handle = 0;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	h.nwrites = 1;
	h.writes = &wc;
	h.has_reply = true;
	h.reply.nsegs = 1;
	h.reply.segs = &r;
	h.inv_handle = 0xb001;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	h.inv_handle = 0xb002;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_OK);
	h.inv_handle = 0xbeef;
	ck_assert_int_eq(rw_validate_call(&h), RW_R_BAD_INV_HANDLE);
}
END_TEST

/* ---- Reply validation (requester) ------------------------------------- */

/* V1-WC-4/5/6 and AMB-V1-4 against the TV9 Call. */
START_TEST(test_validate_reply_write_echo)
{
	uint8_t cb[256], rb[256];
	struct rw_segment s[2];
	struct rw_chunk ch = { 2, s };
	struct rw_hdr call, r;

	dec("V1-TV9", &call, &sp, cb);
	dec("V1-TV10a", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V1-TV10b", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V1-TV12", &r, &sp2, rb); /* unused: lengths 0 */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("N-16", &r, &sp2, rb); /* 1920 <= 4096 provisioned */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V1-TV3", &r, &sp2, rb); /* missing = unused */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);

	dec("V1-TV10a", &r, &sp2, rb);
	memcpy(s, r.writes[0].segs, sizeof(s));
	r.writes = &ch;
	s[1].length = 4097;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_WRITE_OVERRUN);
	s[1].length = 1905;
	s[1].handle = 0xa00f;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_WRITE_MISMATCH);
	s[1].handle = 0xa005;
	s[1].offset++;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_WRITE_MISMATCH);
	s[1].offset--;
	ch.nsegs = 1; /* V1-WC-5 */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_WRITE_MISMATCH);
	ch.nsegs = 2;
	r.nwrites = 2; /* more chunks than offered */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_WRITE_MISMATCH);
}
END_TEST

/* AMB-V1-3/4: Reply chunk used (NOMSG), unused (absent or zeroed). */
START_TEST(test_validate_reply_reply_chunk)
{
	uint8_t cb[256], rb[256];
	struct rw_segment s;
	struct rw_hdr call, r;

	dec("V1-TV11a", &call, &sp, cb);
	dec("V1-TV11b", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V1-TV3", &r, &sp2, rb); /* Short reply: absent */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	s = seg(0xa006, 0, 0x00007f3a12390000ull);
	r.has_reply = true; /* MSG, returned zeroed */
	r.reply.nsegs = 1;
	r.reply.segs = &s;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	s.length = 8; /* MSG that also used it */
	ck_assert_int_eq(rw_validate_reply(&call, &r),
			 RW_R_REPLY_CHUNK_MISMATCH);
	r.proc = RW_NOMSG;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	s.length = 16385;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_WRITE_OVERRUN);
	s.length = 8;
	s.handle = 1;
	ck_assert_int_eq(rw_validate_reply(&call, &r),
			 RW_R_REPLY_CHUNK_MISMATCH);
	r.has_reply = false;
	ck_assert_int_eq(rw_validate_reply(&call, &r),
			 RW_R_NOMSG_NO_REPLY_CHUNK);
	/* a Reply chunk the Call never offered */
	dec("V1-TV1", &call, &sp, cb);
	dec("V1-TV11b", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r),
			 RW_R_REPLY_CHUNK_MISMATCH);
}
END_TEST

/* V1-RC-9 (N-9), XID/version, v2 direction and inv_handle (AMB-V2-13). */
START_TEST(test_validate_reply_misc)
{
	uint8_t cb[256], rb[256];
	struct rw_hdr call, r;

	dec("V1-TV8", &call, &sp, cb);
	dec("V1-TV8", &r, &sp2, rb); /* N-9: Reads in a Reply */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_READS_IN_REPLY);
	dec("V1-TV3", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	r.xid++;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_XID_MISMATCH);
	dec("V2-TV2", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_VERS_MISMATCH);
	dec("V1-TV5", &r, &sp2, rb); /* errors pass to the caller */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);

	dec("V2-TV1", &call, &sp, cb);
	dec("V2-TV2", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	r.inv_handle = 0x1234; /* ignored in Replies */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V2-TV1", &r, &sp2, rb); /* direction CALL */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_DIR_MISMATCH);
	/* AMB-V1-1, N-18: ERR_VERS in either version answers a v2 Call */
	dec("V1-TV4a", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V1-TV4b", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V1-TV5", &r, &sp2, rb); /* v1 ERR_CHUNK, v2 Call */
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_VERS_MISMATCH);
	/* V2-OPS-9: RESPROP answers a REQPROP with its XID */
	dec("V2-TV11", &call, &sp, cb);
	dec("V2-TV12b", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	dec("V2-TV13", &r, &sp2, rb);
	r.xid = call.xid;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_UNEXPECTED_PROC);
	dec("V2-TV1", &call, &sp, cb);
	dec("V2-TV12a", &r, &sp2, rb);
	r.xid = call.xid;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_UNEXPECTED_PROC);
}
END_TEST

/* V1-HDR-2 (N-4), V2-DIR-2: the RPC message matches the header. */
START_TEST(test_check_payload)
{
	uint8_t buf[256];
	struct rw_rx_call rx;
	struct rw_hdr h;
	size_t n = hdr_vec("V1-TV2", buf, sizeof(buf));

	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_OK);
	ck_assert_int_eq(rw_check_payload(&rx.hdr, buf + 28, 7),
			 RW_R_NO_PAYLOAD);
	ck_assert_int_eq(rw_recv_call(buf, 28, &rx, &sp), RW_R_NO_PAYLOAD);
	buf[31] = 0x79; /* N-4 */
	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_XID_MISMATCH);

	/* v2: a Call header followed by an RPC Reply */
	n = hdr_vec("V2-TV1", buf, sizeof(buf));
	memcpy(buf + n, "\x12\x34\x56\x78\0\0\0\1", 8);
	ck_assert_int_eq(rw_recv_call(buf, n + 8, &rx, &sp), RW_R_DIR_MISMATCH);
	buf[n + 7] = 0;
	ck_assert_int_eq(rw_recv_call(buf, n + 8, &rx, &sp), RW_R_OK);
	/* NOMSG: checked by the caller on the pulled PZRC */
	dec("V2-TV3", &h, &sp, buf);
	ck_assert_int_eq(rw_check_payload(&h, "\x12\x34\x56\x78\0\0\0\0", 8),
			 RW_R_OK);
}
END_TEST

/* ---- Chunk lengths against XDR items ---------------------------------- */

/* V1-WC-4/5/6/10: the responder returns TV10a, or TV12 when unused. */
START_TEST(test_write_chunk_return)
{
	uint8_t cb[256], want[256], out[256];
	struct rw_segment s[2];
	struct rw_chunk ret = { 2, s };
	struct rw_hdr call, r;
	struct rw_rx_call rx;
	size_t n;

	n = hdr_vec("V1-TV9", cb, sizeof(cb));
	memcpy(cb + n, "\x12\x34\x56\x78\0\0\0\0", 8); /* RPC Call */
	ck_assert_int_eq(rw_recv_call(cb, n + 8, &rx, &sp), RW_R_OK);
	call = rx.hdr;
	ck_assert_int_eq(rw_write_chunk_return(&call.writes[0], 6001, s),
			 RW_R_OK);
	rw_hdr_init(&r, 1, RW_MSG, 0x12345678, 16);
	r.nwrites = 1;
	r.writes = &ret;
	n = hdr_vec("V1-TV10a", want, sizeof(want));
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), n);
	ck_assert(!memcmp(out, want, n));
	ck_assert_int_eq(rw_write_chunk_return(&call.writes[0], 0, s), RW_R_OK);
	n = hdr_vec("V1-TV12", want, sizeof(want));
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), n);
	ck_assert(!memcmp(out, want, n));
	ck_assert_int_eq(rw_write_chunk_return(&call.writes[0], 8193, s),
			 RW_R_WRITE_OVERRUN);
	ck_assert_int_eq(rw_write_chunk_return(&call.writes[0], 8192, s),
			 RW_R_OK);
	ck_assert_uint_eq(s[1].length, 4096);
}
END_TEST

/* AMB-V1-12, V1-WC-10, N-16; V1-RC-6/7. */
START_TEST(test_ddp_lengths)
{
	uint8_t rb[256];
	struct rw_hdr r;
	uint32_t use = 0;

	dec("V1-TV10a", &r, &sp, rb);
	ck_assert_int_eq(rw_write_result_check(&r.writes[0], 6001, &use),
			 RW_R_OK);
	ck_assert_uint_eq(use, 6001);
	dec("V1-TV10b", &r, &sp, rb); /* RFC 5666 roundup */
	use = 0;
	ck_assert_int_eq(rw_write_result_check(&r.writes[0], 6001, &use),
			 RW_R_OK);
	ck_assert_uint_eq(use, 6001);
	ck_assert_int_eq(rw_write_result_check(&r.writes[0], 6005, &use),
			 RW_R_DDP_LENGTH);
	dec("N-16", &r, &sp, rb);
	ck_assert_int_eq(rw_write_result_check(&r.writes[0], 6001, &use),
			 RW_R_DDP_LENGTH);
	ck_assert_int_eq(rw_read_chunk_check(6001, 6001), RW_R_OK);
	ck_assert_int_eq(rw_read_chunk_check(6004, 6001), RW_R_OK);
	ck_assert_int_eq(rw_read_chunk_check(6002, 6001), RW_R_DDP_LENGTH);
	ck_assert_int_eq(rw_read_chunk_check(6000, 6001), RW_R_DDP_LENGTH);
	ck_assert_int_eq(rw_read_chunk_check(0, 0xffffffffu), RW_R_DDP_LENGTH);
}
END_TEST

/* ---- Reason -> action ------------------------------------------------- */

/* An RDMA_ERROR's words as a requester decodes them, with limits lim. */
static enum rw_reason dec_err(const struct rw_limits *lim, uint32_t vers,
			      uint32_t code, unsigned int nbody,
			      struct rw_hdr *h)
{
	uint32_t w[7] = { 0x5151, vers, 5, RW_ERROR, code, 1, 2 };
	static struct rw_hdr_space space;
	uint8_t buf[28];

	rw_hdr_space_init(&space, lim);
	for (unsigned int i = 0; i < 7; i++)
		rw_put32(buf + 4 * i, w[i]);
	return rw_hdr_decode(buf, 20 + 4 * nbody, h, &space);
}

/*
 * V1-ERR-10: an RDMA_ERROR labelled with a version other than the Call's
 * is discarded, whether the requester speaks that version or not, and
 * whatever its code; ERR_VERS is the exception (AMB-V1-1, V2-ERR-3).  The
 * Call's version, not the error's, picks between discarding and failing
 * an undecodable one (AMB-V2-10).
 */
START_TEST(test_v1_err_10_error_of_another_version)
{
	struct rw_hdr v1call, v2call, e;
	enum rw_reason why;

	rw_hdr_init(&v1call, RW_VERS_1, RW_MSG, 0x5151, 5);
	rw_hdr_init(&v2call, RW_VERS_2, RW_MSG, 0x5151, 5);
	/* v1-only requester: a v2 BAD_XDR (= ERR_CHUNK) does not decode */
	why = dec_err(&rw_default_limits, 2, RW2_ERR_BAD_XDR, 0, &e);
	ck_assert_int_eq(why, RW_R_BAD_ERROR);
	ck_assert_int_eq(rw_reply_action(&v1call, &e, why).what,
			 RW_ACT_DISCARD);
	/* v1+v2 requester: it decodes; a v1 Call still ignores it */
	why = dec_err(&lim12, 2, RW2_ERR_SYSTEM, 0, &e);
	ck_assert_int_eq(why, RW_R_OK);
	ck_assert_int_eq(rw_validate_reply(&v1call, &e), RW_R_VERS_MISMATCH);
	ck_assert_int_eq(rw_reply_action(&v1call, &e,
					 rw_validate_reply(&v1call, &e))
				 .what,
			 RW_ACT_DISCARD);
	why = dec_err(&lim12, 2, 77, 0, &e);
	ck_assert_int_eq(why, RW_R_UNKNOWN_ERROR);
	ck_assert_int_eq(rw_reply_action(&v1call, &e, why).what,
			 RW_ACT_DISCARD);
	/* ... and the same code for a v2 Call fails it (AMB-V2-10) */
	ck_assert_int_eq(rw_reply_action(&v2call, &e, why).what,
			 RW_ACT_FAIL_XID);
	/* a v1 error of a code v1 lacks, for a v2 Call: discarded */
	why = dec_err(&lim12, 1, 9, 0, &e);
	ck_assert_int_eq(why, RW_R_UNKNOWN_ERROR);
	ck_assert_int_eq(rw_reply_action(&v2call, &e, why).what,
			 RW_ACT_DISCARD);
	ck_assert_int_eq(rw_reply_action(&v2call, &e, why).counter,
			 RW_CNT_BAD_VERS);
	/* ERR_VERS in either version answers either Call */
	why = dec_err(&rw_default_limits, 2, RW_ERR_VERS, 2, &e);
	ck_assert_int_eq(why, RW_R_OK);
	ck_assert_int_eq(rw_validate_reply(&v1call, &e), RW_R_OK);
	why = dec_err(&lim12, 1, RW_ERR_VERS, 1, &e); /* cut short */
	ck_assert_int_eq(why, RW_R_BAD_ERROR);
	ck_assert_int_eq(rw_reply_action(&v2call, &e, why).what,
			 RW_ACT_FAIL_XID);
	ck_assert_int_eq(rw_reply_action(&v1call, &e, why).what,
			 RW_ACT_DISCARD);
	/* a runt's fields were never read; no Call: nothing to fail */
	e.proc = RW_ERROR;
	ck_assert_int_eq(rw_reply_action(&v2call, &e, RW_R_RUNT).what,
			 RW_ACT_DISCARD);
	ck_assert_int_eq(rw_reply_action(NULL, &e, RW_R_UNKNOWN_ERROR).what,
			 RW_ACT_DISCARD);
}
END_TEST

/* V1-PROC-8, V1-ERR-4, V1-ERR-10: a requester never answers. */
START_TEST(test_v1_err_4_requester_never_answers)
{
	for (int r = 0; r < RW_R_NR_REASONS; r++)
		for (uint32_t v = 0; v < 4; v++) {
			struct rw_action a =
				rw_reason_action(RW_ROLE_REQUESTER, v,
						 (enum rw_reason)r, NULL);

			ck_assert_int_ne(a.what, RW_ACT_REPLY_ERR);
			ck_assert_int_ne(a.what, RW_ACT_GARBAGE_ARGS);
			ck_assert_int_eq(a.what == RW_ACT_ACCEPT, r == RW_R_OK);
			if (a.what == RW_ACT_DISCARD)
				ck_assert_int_ne(a.counter, RW_CNT_NONE);
			ck_assert_str_ne(rw_counter_str(a.counter), "?");
		}
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1, RW_R_BAD_ERROR,
					  NULL)
				 .what,
			 RW_ACT_DISCARD);
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1,
					  RW_R_UNKNOWN_ERROR, NULL)
				 .counter,
			 RW_CNT_BAD_ERROR);
	/* AMB-V2-10: a v2 error with an unknown code fails its XID */
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 2,
					  RW_R_UNKNOWN_ERROR, NULL)
				 .what,
			 RW_ACT_FAIL_XID);
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1,
					  RW_R_READS_IN_REPLY, NULL)
				 .counter,
			 RW_CNT_BAD_REPLY);
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1, RW_R_RUNT, NULL)
				 .counter,
			 RW_CNT_RUNT);
	/* V1-DDP-2 */
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1, RW_R_DDP_LENGTH,
					  NULL)
				 .what,
			 RW_ACT_FAIL_XID);
}
END_TEST

/* RFC 8166 §4.5 table at the responder, v1 and v2 codes. */
START_TEST(test_responder_actions)
{
	static const struct {
		uint32_t vers;
		enum rw_reason why;
		enum rw_act what;
		uint32_t err, arg1;
	} t[] = {
		{ 1, RW_R_OK, RW_ACT_ACCEPT, 0, 0 },
		{ 1, RW_R_RUNT, RW_ACT_DISCARD, 0, 0 }, /* V1-ERR-2 */
		{ 2, RW_R_RUNT, RW_ACT_DISCARD, 0, 0 },
		{ 7, RW_R_BAD_VERS, RW_ACT_REPLY_ERR, RW_ERR_VERS, 1 },
		{ 1, RW_R_BAD_PROC, RW_ACT_REPLY_ERR, RW_ERR_CHUNK, 0 },
		{ 2, RW_R_BAD_PROC, RW_ACT_REPLY_ERR, RW2_ERR_INVAL_PROC, 0 },
		{ 1, RW_R_DEPRECATED_PROC, RW_ACT_REPLY_ERR, RW_ERR_CHUNK, 0 },
		{ 1, RW_R_TRUNCATED, RW_ACT_REPLY_ERR, RW_ERR_CHUNK, 0 },
		{ 2, RW_R_TRUNCATED, RW_ACT_REPLY_ERR, RW2_ERR_BAD_XDR, 0 },
		{ 1, RW_R_XID_MISMATCH, RW_ACT_REPLY_ERR, RW_ERR_CHUNK, 0 },
		{ 2, RW_R_DIR_MISMATCH, RW_ACT_REPLY_ERR, RW2_ERR_BAD_XDR, 0 },
		{ 2, RW_R_BAD_INV_HANDLE, RW_ACT_REPLY_ERR, RW2_ERR_BAD_XDR,
		  0 },
		{ 2, RW_R_BAD_PROP, RW_ACT_REPLY_ERR, RW2_ERR_BAD_XDR, 0 },
		{ 1, RW_R_TOO_MANY_READS, RW_ACT_REPLY_ERR, RW_ERR_CHUNK, 0 },
		{ 2, RW_R_TOO_MANY_READS, RW_ACT_REPLY_ERR, RW2_ERR_READ_CHUNKS,
		  8 },
		{ 2, RW_R_TOO_MANY_WRITES, RW_ACT_REPLY_ERR,
		  RW2_ERR_WRITE_CHUNKS, 8 },
		{ 2, RW_R_TOO_MANY_SEGS, RW_ACT_REPLY_ERR, RW2_ERR_SEGMENTS,
		  16 },
		{ 2, RW_R_TOO_MANY_PROPS, RW_ACT_REPLY_ERR, RW2_ERR_SYSTEM, 0 },
		{ 2, RW_R_BAD_OPTION, RW_ACT_REPLY_ERR, RW2_ERR_INVAL_OPTION,
		  0 },
		{ 2, RW_R_PROPS_UNSUPPORTED, RW_ACT_REPLY_ERR,
		  RW2_ERR_INVAL_OPTION, 0 },
		/* V1-PROC-9 */
		{ 1, RW_R_ERROR_RECEIVED, RW_ACT_DISCARD, 0, 0 },
		{ 2, RW_R_ERROR_RECEIVED, RW_ACT_DISCARD, 0, 0 }, /* V2-ERR-1 */
		{ 2, RW_R_UNKNOWN_ERROR, RW_ACT_DISCARD, 0, 0 },
		{ 1, RW_R_BAD_ERROR, RW_ACT_DISCARD, 0, 0 },
		/* V1-ERR-8 */
		{ 1, RW_R_DDP_LENGTH, RW_ACT_GARBAGE_ARGS, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct rw_action a = rw_reason_action(RW_ROLE_RESPONDER,
						      t[i].vers, t[i].why,
						      &lim12);

		ck_assert_msg(a.what == t[i].what, "%zu: %s", i,
			      rw_reason_str(t[i].why));
		if (a.what == RW_ACT_REPLY_ERR) {
			ck_assert_uint_eq(a.err, t[i].err);
			ck_assert_uint_eq(a.arg1, t[i].arg1);
		}
	}
	/* ERR_VERS advertises the configured range (1..1 by default) */
	ck_assert_uint_eq(rw_reason_action(RW_ROLE_RESPONDER, 3, RW_R_BAD_VERS,
					   NULL)
				  .arg2,
			  1);
	ck_assert_uint_eq(rw_reason_action(RW_ROLE_RESPONDER, 3, RW_R_BAD_VERS,
					   &lim12)
				  .arg2,
			  2);
	/* every reason maps to some action, never "accept" unless OK */
	for (int r = 1; r < RW_R_NR_REASONS; r++)
		ck_assert_int_ne(rw_reason_action(RW_ROLE_RESPONDER, 1,
						  (enum rw_reason)r, NULL)
					 .what,
				 RW_ACT_ACCEPT);
}
END_TEST

/* V2-ERR-7/9/11 maxima follow the limits; no Write chunks at all means
 * REPLY_RESOURCE (V2-ERR-9). */
START_TEST(test_v2_err_9_over_limit_maxima)
{
	struct rw_limits lim = lim12;
	struct rw_action a;

	lim.max_read_chunks = 2;
	lim.max_write_chunks = 3;
	lim.max_chunk_segs = 4;
	a = rw_reason_action(RW_ROLE_RESPONDER, 2, RW_R_TOO_MANY_READS, &lim);
	ck_assert_uint_eq(a.arg1, 2);
	a = rw_reason_action(RW_ROLE_RESPONDER, 2, RW_R_TOO_MANY_WRITES, &lim);
	ck_assert_uint_eq(a.err, RW2_ERR_WRITE_CHUNKS);
	ck_assert_uint_eq(a.arg1, 3);
	a = rw_reason_action(RW_ROLE_RESPONDER, 2, RW_R_TOO_MANY_SEGS, &lim);
	ck_assert_uint_eq(a.arg1, 4);
	lim.max_write_chunks = 0;
	a = rw_reason_action(RW_ROLE_RESPONDER, 2, RW_R_TOO_MANY_WRITES, &lim);
	ck_assert_uint_eq(a.err, RW2_ERR_REPLY_RESOURCE);
	a = rw_reason_action(RW_ROLE_RESPONDER, 1, RW_R_TOO_MANY_WRITES, &lim);
	ck_assert_uint_eq(a.err, RW_ERR_CHUNK);
}
END_TEST

/* ---- RDMA_ERROR builders (responder) ---------------------------------- */

/* Receive name as a Call and return the error bytes the action asks for. */
static size_t answer(const char *name, const struct rw_limits *lim,
		     uint32_t credit, uint8_t *out, size_t cap,
		     enum rw_reason *why, struct rw_action *a)
{
	struct rw_hdr_space space;
	struct rw_rx_call rx;
	uint8_t buf[256];
	size_t n = hdr_vec(name, buf, sizeof(buf));

	rw_hdr_space_init(&space, lim);
	*why = rw_recv_call(buf, n, &rx, &space);
	*a = rw_reason_action(RW_ROLE_RESPONDER, rx.hdr.vers, *why, lim);
	return rw_err_from_action(&rx, a, credit, out, cap);
}

static void assert_hex(const uint8_t *got, size_t n, const char *hex)
{
	uint8_t want[64];
	size_t m = hdr_hex(hex, want, sizeof(want));

	ck_assert_uint_eq(n, m);
	ck_assert(!memcmp(got, want, m));
}

/* V1-ERR-5/6, V2-ERR-2/3, V2-NEG-4: echo XID and version, caller's credit. */
START_TEST(test_v1_err_5_errors_echo)
{
	uint8_t out[64];
	struct rw_action a;
	enum rw_reason why;
	size_t n;

	/* V1-TV4a: a v1-only server answers a v2 Call */
	n = answer("V2-TV1", NULL, 16, out, sizeof(out), &why, &a);
	ck_assert_int_eq(why, RW_R_BAD_VERS);
	assert_hex(out, n,
		   "12345678 00000002 00000010 00000004 00000001 "
		   "00000001 00000001");
	/* V2-TV4: a v1+v2 server answers a v3 Call */
	{
		uint8_t buf[64];
		struct rw_rx_call rx;

		n = hdr_vec("V2-TV1", buf, sizeof(buf));
		buf[7] = 3;
		buf[11] = 0x10;
		ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_BAD_VERS);
		n = rw_err_vers(&rx, 16, 1, 2, out, sizeof(out));
		assert_hex(out, n,
			   "12345678 00000003 00000010 00000004 "
			   "00000001 00000001 00000002");
		/* an unknown version gets nothing but ERR_VERS */
		ck_assert_uint_eq(rw_err_chunk(&rx, 16, out, sizeof(out)), 0);
	}
	/* V1-TV5 for a v1 header error (N-3) */
	n = answer("N-3", NULL, 16, out, sizeof(out), &why, &a);
	ck_assert_int_eq(why, RW_R_NOMSG_NO_CHUNK);
	assert_hex(out, n, "12345678 00000001 00000010 00000004 00000002");
}
END_TEST

/* V2-TV5..TV8 built with rw_err2(). */
START_TEST(test_v2_err_builders_exact)
{
	uint8_t buf[64], out[64];
	struct rw_rx_call rx;
	size_t n = hdr_vec("V2-TV1", buf, sizeof(buf));

	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_NO_PAYLOAD);
	n = rw_err2(&rx, 16, RW2_ERR_WRITE_RESOURCE, 1, 8192, out, 64);
	assert_hex(out, n,
		   "12345678 00000002 00000010 00000004 00000007 "
		   "00000001 00002000");
	n = rw_err2(&rx, 16, RW2_ERR_INVAL_OPTION, 0, 0, out, 64);
	assert_hex(out, n, "12345678 00000002 00000010 00000004 00000009");
	n = rw_err2(&rx, 16, RW2_ERR_READ_CHUNKS, 0, 0, out, 64);
	assert_hex(out, n,
		   "12345678 00000002 00000010 00000004 00000004 "
		   "00000000");
	n = rw_err2(&rx, 16, RW2_ERR_REPLY_RESOURCE, 65536, 0, out, 64);
	assert_hex(out, n,
		   "12345678 00000002 00000010 00000004 00000008 "
		   "00010000");
	n = rw_err2(&rx, 16, RW2_ERR_SEGMENTS, 16, 0, out, 64);
	assert_hex(out, n,
		   "12345678 00000002 00000010 00000004 00000006 "
		   "00000010");
	ck_assert_uint_eq(rw_err2(&rx, 16, 11, 0, 0, out, 64), 0);
	ck_assert_uint_eq(rw_err2(&rx, 16, RW2_ERR_SYSTEM, 0, 0, out, 19), 0);
}
END_TEST

/* AMB-V1-8, V1-PROC-9, V1-ERR-2: when no error may be built. */
START_TEST(test_amb_v1_8_no_error_without_credit)
{
	uint8_t buf[64], out[64];
	struct rw_rx_call rx;
	size_t n = hdr_vec("V1-TV1", buf, sizeof(buf));

	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_NO_PAYLOAD);
	ck_assert_uint_gt(rw_err_chunk(&rx, 1, out, sizeof(out)), 0);
	ck_assert_uint_eq(rw_err_chunk(&rx, 0, out, sizeof(out)), 0);
	ck_assert_uint_eq(rw_err_vers(&rx, 0, 1, 1, out, sizeof(out)), 0);
	/* v1 has no v2 codes */
	ck_assert_uint_eq(rw_err2(&rx, 1, RW2_ERR_SYSTEM, 0, 0, out, 64), 0);
	/* a runt's XID is not trusted */
	ck_assert_int_eq(rw_recv_call(buf, 12, &rx, &sp), RW_R_RUNT);
	ck_assert_uint_eq(rw_err_chunk(&rx, 1, out, sizeof(out)), 0);
	ck_assert_uint_eq(rw_err_vers(&rx, 1, 1, 1, out, sizeof(out)), 0);
	/* nor is an RDMA_ERROR ever answered */
	n = hdr_vec("V1-TV5", buf, sizeof(buf));
	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_ERROR_RECEIVED);
	ck_assert_uint_eq(rw_err_chunk(&rx, 1, out, sizeof(out)), 0);
	n = hdr_vec("V2-TV6", buf, sizeof(buf));
	buf[19] = 77;
	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_UNKNOWN_ERROR);
	ck_assert_uint_eq(rw_err_chunk(&rx, 1, out, sizeof(out)), 0);
}
END_TEST

/* ---- Role-aware encoding ---------------------------------------------- */

/* V1-PROC-8, V1-PROC-4, V1-PROC-6, AMB-V1-16: what a requester cannot send
 * (RDMA_ERROR, RDMA_MSGP, RDMA_DONE, ...). */
START_TEST(test_v1_proc_8_requester_encode)
{
	uint8_t buf[256], out[256];
	struct rw_hdr h;
	size_t n;

	dec("V1-TV5", &h, &sp, buf);
	ck_assert_uint_eq(rw_hdr_encode(&h, out, sizeof(out)), 20);
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 1, RW_MSGP, 1, 1);
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 1, RW_DONE, 1, 1);
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	rw_hdr_init(&h, 1, RW_MSG, 1, 0); /* credit 0 */
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	h.credit = 1;
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 28);
	h.proc = RW_NOMSG; /* V1-PROC-2 */
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	dec("V2-TV12a", &h, &sp, buf); /* RESPROP */
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	dec("XC-TV1", &h, &sp, buf); /* never opttype 1-4 (AMB-V2-1) */
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), 0);
	n = hdr_vec("V2-TV10", buf, sizeof(buf)); /* CONNPROP */
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(rw_encode_call(&h, out, sizeof(out)), n);
	ck_assert(!memcmp(out, buf, n));
}
END_TEST

/* V1-RC-9, V1-CR-3, AMB-V2-13: what a responder cannot send as a Reply. */
START_TEST(test_v1_rc_9_responder_encode)
{
	uint8_t cb[256], rb[256], out[256];
	struct rw_rx_call rx;
	struct rw_hdr r;
	size_t n;

	n = hdr_vec("V1-TV8", cb, sizeof(cb));
	ck_assert_int_eq(rw_recv_call(cb, n, &rx, &sp), RW_R_NO_PAYLOAD);
	ck_assert_uint_eq(rw_encode_reply(&rx, &rx.hdr, out, 256), 0);
	{
		uint8_t full[256];
		size_t m =
			hdr_vec("V1-TV8-payload", full + n, sizeof(full) - n);

		memcpy(full, cb, n);
		ck_assert_int_eq(rw_recv_call(full, n + m, &rx, &sp), RW_R_OK);
	}
	dec("V1-TV3", &r, &sp2, rb);
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 28);
	r.credit = 0; /* V1-CR-3 */
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
	r.credit = 16;
	r.reads = rx.hdr.reads; /* V1-RC-9 */
	r.nreads = 1;
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
	dec("V1-TV5", &r, &sp2, rb); /* use rw_err_* */
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);

	n = hdr_vec("V2-TV3", cb, sizeof(cb));
	ck_assert_int_eq(rw_recv_call(cb, n, &rx, &sp), RW_R_OK);
	dec("V2-TV2", &r, &sp2, rb);
	r.proc = RW_NOMSG;
	r.has_reply = false;
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
	r.proc = RW_MSG;
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 36);
	r.inv_handle = 0xa001;
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
	/* nothing is ever encoded against a refused Call */
	n = hdr_vec("N-11", cb, sizeof(cb));
	ck_assert_int_eq(rw_recv_call(cb, n, &rx, &sp), RW_R_BAD_INV_HANDLE);
	r.inv_handle = 0;
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
}
END_TEST

/* AMB-V1-4: a requester tolerates what a responder must not send. */
START_TEST(test_amb_v1_4_responder_echoes_all)
{
	uint8_t cb[256], rb[256], out[256];
	struct rw_segment z = seg(0xa006, 0, 0x00007f3a12390000ull);
	struct rw_rx_call rx;
	struct rw_hdr r;
	size_t n;

	n = hdr_vec("V1-TV9", cb, sizeof(cb));
	memcpy(cb + n, "\x12\x34\x56\x78\0\0\0\0", 8);
	ck_assert_int_eq(rw_recv_call(cb, n + 8, &rx, &sp), RW_R_OK);
	dec("V1-TV3", &r, &sp2, rb); /* Write chunk left out */
	ck_assert_int_eq(rw_validate_reply(&rx.hdr, &r), RW_R_OK);
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
	dec("V1-TV12", &r, &sp2, rb); /* echoed, zeroed */
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 68);

	n = hdr_vec("V1-TV11a", cb, sizeof(cb));
	memcpy(cb + n, "\x12\x34\x56\x78\0\0\0\0", 8);
	ck_assert_int_eq(rw_recv_call(cb, n + 8, &rx, &sp), RW_R_OK);
	dec("V1-TV3", &r, &sp2, rb);
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 28);
	r.has_reply = true; /* unused, returned zeroed */
	r.reply.nsegs = 1;
	r.reply.segs = &z;
	ck_assert_int_eq(rw_validate_reply(&rx.hdr, &r), RW_R_OK);
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), 0);
	dec("V1-TV11b", &r, &sp2, rb); /* used: NOMSG */
	n = hdr_vec("V1-TV11b", cb, sizeof(cb));
	ck_assert_uint_eq(rw_encode_reply(&rx, &r, out, sizeof(out)), n);
	ck_assert(!memcmp(out, cb, n));
}
END_TEST

/* RFC 8167, v2-05 §7.2.2: which way a message travels. */
START_TEST(test_hdr_direction)
{
	uint8_t buf[256];
	struct rw_hdr h;
	size_t n = hdr_vec("V1-TV2", buf, sizeof(buf));

	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_int_eq(rw_hdr_direction(&h, buf + 28, n - 28), RW_DIR_CALL);
	n = hdr_vec("V1-TV3", buf, sizeof(buf));
	ck_assert_int_eq(rw_hdr_decode(buf, n, &h, &sp), RW_R_OK);
	ck_assert_int_eq(rw_hdr_direction(&h, buf + 28, n - 28), RW_DIR_REPLY);
	ck_assert_int_eq(rw_hdr_direction(&h, buf + 28, 4), -1);
	dec("V1-TV6", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), -1);
	dec("V2-TV3", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), RW_DIR_CALL);
	dec("V2-TV2", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), RW_DIR_REPLY);
	dec("V1-TV5", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), RW_DIR_REPLY);
	dec("V2-TV10", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), RW_DIR_CALL);
	dec("V2-TV12a", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), RW_DIR_REPLY);
	dec("XC-TV1", &h, &sp, buf);
	ck_assert_int_eq(rw_hdr_direction(&h, NULL, 0), RW_DIR_CALL);
}
END_TEST

/* ---- Negative vectors, bytes to action -------------------------------- */

/*
 * N-1..N-15 received by a responder: the reason, the action and, when one
 * is due, the exact error sent (grant 0x10).  Vectors that are Replies
 * (N-9, N-16..N-18) are covered by the requester tests.
 */
START_TEST(test_negative_vectors_responder)
{
	static const struct {
		const char *name;
		enum rw_reason why;
		const char *reply; /* NULL: silence */
	} t[] = {
		{ "N-1", RW_R_RUNT, NULL },
		{ "N-2a", RW_R_BAD_PROC,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "N-2b", RW_R_BAD_PROC,
		  "12345678 00000002 00000010 00000004 00000003" },
		{ "N-3", RW_R_NOMSG_NO_CHUNK,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "N-5", RW_R_BAD_POSITION,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "N-6", RW_R_EMPTY_CHUNK,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "N-7", RW_R_TRUNCATED,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "V1-TV5", RW_R_ERROR_RECEIVED, NULL }, /* N-8 */
		{ "N-10a", RW_R_MISPLACED_PZRC,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "N-10b", RW_R_MISPLACED_PZRC,
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "N-11", RW_R_BAD_INV_HANDLE,
		  "12345678 00000002 00000010 00000004 00000002" },
		{ "N-12", RW_R_TRUNCATED,
		  "12345679 00000002 00000010 00000004 00000002" },
		{ "N-13", RW_R_BAD_PROP,
		  "12345679 00000002 00000010 00000004 00000002" },
		{ "N-14", RW_R_OK, NULL },
		{ "N-15", RW_R_BAD_OPTION,
		  "12345679 00000002 00000010 00000004 00000009" },
		{ "XC-TV1", RW_R_BAD_OPTION, /* AMB-V2-1 */
		  "12345679 00000002 00000010 00000004 00000009" },
		{ "V1-TV13", RW_R_DEPRECATED_PROC, /* V1-PROC-5 */
		  "12345678 00000001 00000010 00000004 00000002" },
		{ "V1-TV14", RW_R_DEPRECATED_PROC, /* V1-PROC-7 */
		  "12345678 00000001 00000010 00000004 00000002" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		uint8_t out[64];
		struct rw_action a;
		enum rw_reason why;
		size_t n = answer(t[i].name, &lim12, 0x10, out, sizeof(out),
				  &why, &a);

		ck_assert_msg(why == t[i].why, "%s: %s", t[i].name,
			      rw_reason_str(why));
		if (!t[i].reply) {
			ck_assert_int_ne(a.what, RW_ACT_REPLY_ERR);
			ck_assert_uint_eq(n, 0);
			continue;
		}
		ck_assert_int_eq(a.what, RW_ACT_REPLY_ERR);
		assert_hex(out, n, t[i].reply);
	}
}
END_TEST

/* N-4: the XID check needs the inline payload. */
START_TEST(test_n4_xid_mismatch)
{
	uint8_t buf[128], out[64];
	struct rw_rx_call rx;
	struct rw_action a;
	size_t n = hdr_vec("V1-TV2", buf, sizeof(buf));

	buf[31] = 0x79;
	ck_assert_int_eq(rw_recv_call(buf, n, &rx, &sp), RW_R_XID_MISMATCH);
	a = rw_reason_action(RW_ROLE_RESPONDER, 1, rx.why, NULL);
	n = rw_err_from_action(&rx, &a, 0x10, out, sizeof(out));
	assert_hex(out, n, "12345678 00000001 00000010 00000004 00000002");
}
END_TEST

/* N-9, N-16, N-17, N-18 at the requester (V1-ERR-4, AMB-V1-8/12). */
START_TEST(test_negative_vectors_requester)
{
	uint8_t cb[256], rb[256], out[256];
	struct rw_hdr call, r;
	enum rw_reason why;
	uint32_t use;

	/* N-9 */
	dec("V1-TV9", &call, &sp, cb);
	dec("V1-TV8", &r, &sp2, rb);
	r.credit = 16;
	why = rw_validate_reply(&call, &r);
	ck_assert_int_eq(why, RW_R_READS_IN_REPLY);
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1, why, NULL).what,
			 RW_ACT_DISCARD);
	/* N-16 */
	dec("N-16", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	why = rw_write_result_check(&r.writes[0], 6001, &use);
	ck_assert_int_eq(why, RW_R_DDP_LENGTH);
	ck_assert_int_eq(rw_reason_action(RW_ROLE_REQUESTER, 1, why, NULL).what,
			 RW_ACT_FAIL_XID);
	/* N-17: a grant of 0 still decodes and validates (rw_credits keeps
	 * the previous grant); a responder can never send one */
	dec("V1-TV3", &r, &sp2, rb);
	r.credit = 0;
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	ck_assert_uint_eq(rw_hdr_encode(&r, out, sizeof(out)), 28);
	/* N-18: a v2 client reads ERR_VERS from either kind of server */
	dec("V2-TV1", &call, &sp, cb);
	dec("V1-TV4a", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	ck_assert_uint_eq(r.err.code, RW_ERR_VERS);
	ck_assert_uint_eq(r.err.high, 1);
	dec("V1-TV4b", &r, &sp2, rb);
	ck_assert_int_eq(rw_validate_reply(&call, &r), RW_R_OK);
	ck_assert_uint_eq(r.err.low, 1);
}
END_TEST

Suite *chunk_suite(void)
{
	Suite *s = suite_create("chunk");
	TCase *tb = tcase_create("build");
	TCase *tv = tcase_create("validate");
	TCase *ta = tcase_create("action");
	TCase *tn = tcase_create("negative");

	tcase_add_checked_fixture(tb, setup, NULL);
	tcase_add_checked_fixture(tv, setup, NULL);
	tcase_add_checked_fixture(ta, setup, NULL);
	tcase_add_checked_fixture(tn, setup, NULL);
	tcase_add_test(tb, test_read_builder_tv8);
	tcase_add_test(tb, test_read_builder_rules);
	tcase_add_test(tb, test_read_iter);
	tcase_add_test(tb, test_write_and_reply_builders);
	tcase_add_test(tb, test_write_chunk_return);
	tcase_add_test(tb, test_ddp_lengths);
	tcase_add_test(tv, test_validate_call_accepts_vectors);
	tcase_add_test(tv, test_validate_call_shape_rules);
	tcase_add_test(tv, test_validate_call_read_order);
	tcase_add_test(tv, test_amb_v1_6_recv_unsorted_reads);
	tcase_add_test(tv, test_v2_ri_1_2_inv_handle);
	tcase_add_test(tv, test_validate_reply_write_echo);
	tcase_add_test(tv, test_validate_reply_reply_chunk);
	tcase_add_test(tv, test_validate_reply_misc);
	tcase_add_test(tv, test_check_payload);
	tcase_add_test(ta, test_v1_err_4_requester_never_answers);
	tcase_add_test(ta, test_v1_err_10_error_of_another_version);
	tcase_add_test(ta, test_responder_actions);
	tcase_add_test(ta, test_v2_err_9_over_limit_maxima);
	tcase_add_test(ta, test_v1_err_5_errors_echo);
	tcase_add_test(ta, test_v2_err_builders_exact);
	tcase_add_test(ta, test_amb_v1_8_no_error_without_credit);
	tcase_add_test(ta, test_v1_proc_8_requester_encode);
	tcase_add_test(ta, test_v1_rc_9_responder_encode);
	tcase_add_test(ta, test_amb_v1_4_responder_echoes_all);
	tcase_add_test(ta, test_hdr_direction);
	tcase_add_test(tn, test_negative_vectors_responder);
	tcase_add_test(tn, test_n4_xid_mismatch);
	tcase_add_test(tn, test_negative_vectors_requester);
	suite_add_tcase(s, tb);
	suite_add_tcase(s, tv);
	suite_add_tcase(s, ta);
	suite_add_tcase(s, tn);
	return s;
}
