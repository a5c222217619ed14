/*
 * check_credit.c - credit accounting (RFC 8166 §3.3; V1-CR-*, AMB-V1-8/9/16,
 * sequence tests S-1 and S-2 of doc/requirements.md §8).
 */
#include <check.h>

#include "wire/rw_credit.h"
#include "check_util.h"

/* V1-CR-6 / S-1: one Call outstanding until the first valid Reply. */
START_TEST(test_cr6_one_credit_until_first_reply)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert_uint_eq(rw_credits_window(&c), 1);
	ck_assert(rw_credits_take(&c));
	ck_assert(!rw_credits_take(&c));
	rw_credits_complete(&c, 16, false);
	ck_assert_uint_eq(rw_credits_window(&c), 16);
}
END_TEST

/* V1-CR-4 / V1-CR-9: never more in flight than min(requested, granted). */
START_TEST(test_cr4_window_is_min_requested_granted)
{
	struct rw_credits c;
	unsigned n = 0;

	rw_credits_init(&c, 8);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 64, false); /* grant above our request */
	while (rw_credits_take(&c))
		n++;
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(c.inflight, 8);
}
END_TEST

/* V1-CR-9: grants are absolute values, not increments. */
START_TEST(test_cr9_grants_are_absolute)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 4, false);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 4, false); /* same grant: still 4, not 8 */
	ck_assert_uint_eq(rw_credits_window(&c), 4);
}
END_TEST

/* S-2: the responder lowers its grant from 32 to 4; after that Reply the
 * requester never exceeds 4 in flight. */
START_TEST(test_s2_grant_lowered)
{
	struct rw_credits c;
	unsigned i;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 32, false);
	for (i = 0; i < 32; i++)
		ck_assert(rw_credits_take(&c));
	ck_assert(!rw_credits_take(&c));
	rw_credits_complete(&c, 4, false); /* 31 still in flight */
	ck_assert_uint_eq(rw_credits_window(&c), 0);
	for (i = 0; i < 27; i++)
		rw_credits_complete(&c, 4, false);
	ck_assert_uint_eq(c.inflight, 4);
	ck_assert(!rw_credits_take(&c));
	rw_credits_complete(&c, 4, false);
	ck_assert(rw_credits_take(&c));
	ck_assert(!rw_credits_take(&c));
}
END_TEST

/* N-17 / AMB-V1-8: a grant of 0 is survived: previous grant kept, counted. */
START_TEST(test_n17_zero_grant_survived)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 8, false);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 0, false);
	ck_assert_uint_eq(c.granted, 8);
	ck_assert_uint_eq(c.zero_grants, 1);
	ck_assert_uint_eq(rw_credits_window(&c), 8);
}
END_TEST

/* A zero grant as the very first Reply leaves the connection at 1 credit
 * rather than deadlocking it. */
START_TEST(test_zero_first_grant_keeps_one)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 0, false);
	ck_assert_uint_eq(rw_credits_window(&c), 1);
}
END_TEST

/* AMB-V1-8 / v2-05 §8: an RDMA_ERROR completes the Call (frees its slot)
 * but is not a grant report in the initial single-credit state. */
START_TEST(test_error_frees_slot_not_grant_initially)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 64, true);
	ck_assert_uint_eq(c.inflight, 0);
	ck_assert(!c.established);
	ck_assert_uint_eq(rw_credits_window(&c), 1);
}
END_TEST

/* AMB-V1-8: after establishment, a non-zero credit in an RDMA_ERROR updates
 * the grant. */
START_TEST(test_error_updates_grant_when_established)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 16, false);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 2, true);
	ck_assert_uint_eq(rw_credits_window(&c), 2);
}
END_TEST

/* RFC 8166 §4.5.3-4.5.5: every reconnect starts again at one credit
 * (V1-CR-6). */
START_TEST(test_reconnect_resets_to_one)
{
	struct rw_credits c;

	rw_credits_init(&c, 32);
	ck_assert(rw_credits_take(&c));
	rw_credits_complete(&c, 16, false);
	ck_assert(rw_credits_take(&c));
	ck_assert(rw_credits_take(&c));
	rw_credits_reset(&c);
	ck_assert_uint_eq(c.inflight, 0);
	ck_assert_uint_eq(rw_credits_window(&c), 1);
}
END_TEST

/* AMB-V1-16: a requested value of 0 is never used. */
START_TEST(test_requested_zero_becomes_one)
{
	struct rw_credits c;

	rw_credits_init(&c, 0);
	ck_assert_uint_eq(c.requested, 1);
}
END_TEST

START_TEST(test_cancel_returns_credit)
{
	struct rw_credits c;

	rw_credits_init(&c, 4);
	ck_assert(rw_credits_take(&c));
	ck_assert(!rw_credits_take(&c));
	rw_credits_cancel(&c);
	ck_assert(rw_credits_take(&c));
}
END_TEST

/* V1-CR-8 / V1-RB-3: the responder never grants more than it has posted. */
START_TEST(test_srv_grant_bounded_by_posted)
{
	struct rw_srv_credits s;

	rw_srv_credits_init(&s, 64);
	s.posted = 16;
	ck_assert_uint_eq(rw_srv_credits_grant(&s), 16);
	s.posted = 128;
	ck_assert_uint_eq(rw_srv_credits_grant(&s), 64);
}
END_TEST

/* V1-CR-3: the grant is never 0. */
START_TEST(test_cr3_srv_grant_never_zero)
{
	struct rw_srv_credits s;

	rw_srv_credits_init(&s, 0);
	s.posted = 0;
	ck_assert_uint_ge(rw_srv_credits_grant(&s), 1);
}
END_TEST

/* AMB-V1-9: after lowering the grant, Receives for the old, larger grant
 * stay required. */
START_TEST(test_srv_lowered_grant_keeps_receives)
{
	struct rw_srv_credits s;

	rw_srv_credits_init(&s, 32);
	s.posted = 32;
	ck_assert_uint_eq(rw_srv_credits_grant(&s), 32);
	s.target = 4;
	ck_assert_uint_eq(rw_srv_credits_grant(&s), 4);
	ck_assert_uint_eq(rw_srv_credits_min_posted(&s), 32);
}
END_TEST

Suite *credit_suite(void)
{
	Suite *s = suite_create("credit");
	TCase *tc = tcase_create("requester");
	TCase *ts = tcase_create("responder");

	tcase_add_test(tc, test_cr6_one_credit_until_first_reply);
	tcase_add_test(tc, test_cr4_window_is_min_requested_granted);
	tcase_add_test(tc, test_cr9_grants_are_absolute);
	tcase_add_test(tc, test_s2_grant_lowered);
	tcase_add_test(tc, test_n17_zero_grant_survived);
	tcase_add_test(tc, test_zero_first_grant_keeps_one);
	tcase_add_test(tc, test_error_frees_slot_not_grant_initially);
	tcase_add_test(tc, test_error_updates_grant_when_established);
	tcase_add_test(tc, test_reconnect_resets_to_one);
	tcase_add_test(tc, test_requested_zero_becomes_one);
	tcase_add_test(tc, test_cancel_returns_credit);
	tcase_add_test(ts, test_srv_grant_bounded_by_posted);
	tcase_add_test(ts, test_cr3_srv_grant_never_zero);
	tcase_add_test(ts, test_srv_lowered_grant_keeps_receives);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ts);
	return s;
}
