/*
 * check_cm.c - RFC 8797 connection private data (bytes on the wire, the
 * defaults for peers that send none, the negotiated thresholds).
 */
#include <check.h>
#include <string.h>

#include "wire/rw_cm.h"
#include "check_util.h"

/* Linux xprtrdma's client REQ for 4 KiB inline both ways with remote
 * invalidation: f6ab0e18 01 01 03 03. */
START_TEST(test_encode_bytes)
{
	struct rw_cm_private p = { .remote_inv = true,
				   .send_size = 4096,
				   .recv_size = 4096 };
	const uint8_t want[8] = {
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03
	};
	uint8_t buf[8];

	rw_cm_encode(&p, buf);
	ck_assert_mem_eq(buf, want, 8);
}
END_TEST

START_TEST(test_encode_clamps_range)
{
	struct rw_cm_private p = { .send_size = 100, .recv_size = 1u << 30 };
	uint8_t buf[8];

	rw_cm_encode(&p, buf);
	ck_assert_uint_eq(buf[5], 0);
	ck_assert_uint_eq(buf[6], 0);	/* 1 KiB */
	ck_assert_uint_eq(buf[7], 255); /* 256 KiB */
}
END_TEST

START_TEST(test_round_trip)
{
	struct rw_cm_private p = { .remote_inv = false,
				   .send_size = 8192,
				   .recv_size = 65536 },
			     q;
	uint8_t buf[8];

	rw_cm_encode(&p, buf);
	rw_cm_decode(buf, sizeof(buf), &q);
	ck_assert(q.valid);
	ck_assert(!q.remote_inv);
	ck_assert_uint_eq(q.send_size, 8192);
	ck_assert_uint_eq(q.recv_size, 65536);
}
END_TEST

/* A peer that sends no private data, a short one, a foreign magic or an
 * unknown version gets the v1 defaults (V1-SZ-2). */
START_TEST(test_absent_or_foreign_is_default)
{
	const uint8_t foreign[8] = { 1, 2, 3, 4, 1, 1, 3, 3 };
	const uint8_t vers2[8] = { 0xf6, 0xab, 0x0e, 0x18,
				   0x02, 0x01, 0x03, 0x03 };
	const uint8_t *cases[] = { NULL, foreign, vers2 };
	struct rw_cm_private q;

	for (unsigned i = 0; i < 3; i++) {
		rw_cm_decode(cases[i], cases[i] ? 8 : 0, &q);
		ck_assert(!q.valid);
		ck_assert(!q.remote_inv);
		ck_assert_uint_eq(q.send_size, 1024);
		ck_assert_uint_eq(q.recv_size, 1024);
	}
	rw_cm_decode(vers2, 5, &q); /* truncated */
	ck_assert(!q.valid);
}
END_TEST

/* Longer private data (rdma_cm pads it, later versions may append) is
 * accepted: only the first eight octets are read. */
START_TEST(test_trailing_bytes_ignored)
{
	uint8_t buf[56] = { 0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x07, 0x0f };
	struct rw_cm_private q;

	rw_cm_decode(buf, sizeof(buf), &q);
	ck_assert(q.valid);
	ck_assert_uint_eq(q.send_size, 8192);
	ck_assert_uint_eq(q.recv_size, 16384);
}
END_TEST

/* Each side's thresholds become the minimum of both. */
START_TEST(test_negotiate_min_of_both)
{
	struct rw_cm_private local = { .valid = true,
				       .remote_inv = true,
				       .send_size = 4096,
				       .recv_size = 8192 };
	struct rw_cm_private peer = { .valid = true,
				      .remote_inv = true,
				      .send_size = 65536,
				      .recv_size = 2048 };
	struct rw_cm_private none;
	struct rw_cm_inline in;

	rw_cm_negotiate(&local, &peer, &in);
	ck_assert_uint_eq(in.send, 2048);
	ck_assert_uint_eq(in.recv, 8192);
	ck_assert(in.peer_remote_inv);

	rw_cm_decode(NULL, 0, &none);
	rw_cm_negotiate(&local, &none, &in);
	ck_assert_uint_eq(in.send, 1024);
	ck_assert_uint_eq(in.recv, 1024);
	ck_assert(!in.peer_remote_inv);
}
END_TEST

Suite *cm_suite(void)
{
	Suite *s = suite_create("cm_private");
	TCase *tc = tcase_create("rfc8797");

	tcase_add_test(tc, test_encode_bytes);
	tcase_add_test(tc, test_encode_clamps_range);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_absent_or_foreign_is_default);
	tcase_add_test(tc, test_trailing_bytes_ignored);
	tcase_add_test(tc, test_negotiate_min_of_both);
	suite_add_tcase(s, tc);
	return s;
}
