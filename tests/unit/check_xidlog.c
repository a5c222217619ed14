/*
 * check_xidlog.c - the responder's record of XIDs that failed for an
 * operational reason (src/rpc/rr_srv_xidlog.[ch], V1-ERR-11): keyed by the
 * requester's host (any port) and the XID, answered once, the oldest entry
 * dropped when full.  The hooks that fill and consult it run in the VM
 * (t_svc, test_failed_xid).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include <check.h>

#include "check_util.h"
#include "rpc/rr_srv_xidlog.h"

static struct sockaddr_storage addr(const char *host, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	} else {
		ck_assert_int_eq(inet_pton(AF_INET, host, &s4->sin_addr), 1);
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	}
	return ss;
}

#define SA(ss) ((const struct sockaddr *)&(ss))

/* V1-ERR-11: the XID from the same host on a new connection (another port)
 * is recognized once; another host's or another XID is not. */
START_TEST(test_v1_err_11_take_once_per_host)
{
	struct rr_xidlog *log = rr_xidlog_create();
	struct sockaddr_storage a = addr("192.0.2.1", 40001);
	struct sockaddr_storage a2 = addr("192.0.2.1", 40999);
	struct sockaddr_storage b = addr("192.0.2.2", 40001);
	struct sockaddr_storage v6 = addr("2001:db8::1", 40001);

	ck_assert_ptr_nonnull(log);
	ck_assert(!rr_xidlog_take(log, SA(a), 7));
	rr_xidlog_add(log, SA(a), 7);
	rr_xidlog_add(log, SA(v6), 9);
	ck_assert(!rr_xidlog_take(log, SA(b), 7));
	ck_assert(!rr_xidlog_take(log, SA(a), 8));
	ck_assert(!rr_xidlog_take(log, SA(a), 9));
	ck_assert(rr_xidlog_take(log, SA(a2), 7));
	ck_assert(!rr_xidlog_take(log, SA(a), 7));
	ck_assert(rr_xidlog_take(log, SA(v6), 9));
	rr_xidlog_destroy(log);
	rr_xidlog_destroy(NULL);
	ck_assert(!rr_xidlog_take(NULL, SA(a), 7));
}
END_TEST

/* A full record forgets its oldest failure first, and only that one; an
 * emptied one records again. */
START_TEST(test_xidlog_ring)
{
	struct rr_xidlog *log = rr_xidlog_create();
	struct sockaddr_storage a = addr("192.0.2.1", 1);
	uint32_t x;

	for (x = 0; x < RR_XIDLOG_SIZE + 1; x++)
		rr_xidlog_add(log, SA(a), 1000 + x);
	ck_assert(!rr_xidlog_take(log, SA(a), 1000));
	for (x = 1; x < RR_XIDLOG_SIZE + 1; x++)
		ck_assert_msg(rr_xidlog_take(log, SA(a), 1000 + x), "xid %u",
			      1000 + x);
	/* emptied (the quick "nothing recorded" answer), then used again:
	 * slots freed by takes count once more when refilled */
	ck_assert(!rr_xidlog_take(log, SA(a), 1001));
	for (x = 0; x < 3; x++)
		rr_xidlog_add(log, SA(a), 2000 + x);
	ck_assert(rr_xidlog_take(log, SA(a), 2001));
	ck_assert(rr_xidlog_take(log, SA(a), 2000));
	ck_assert(rr_xidlog_take(log, SA(a), 2002));
	ck_assert(!rr_xidlog_take(log, SA(a), 2002));
	rr_xidlog_add(log, SA(a), 3000);
	ck_assert(rr_xidlog_take(log, SA(a), 3000));
	rr_xidlog_destroy(log);
}
END_TEST

Suite *xidlog_suite(void)
{
	Suite *s = suite_create("xidlog");
	TCase *t = tcase_create("record");

	tcase_add_test(t, test_v1_err_11_take_once_per_host);
	tcase_add_test(t, test_xidlog_ring);
	suite_add_tcase(s, t);
	return s;
}
