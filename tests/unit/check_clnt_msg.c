/*
 * check_clnt_msg.c - the CLIENT's Reply decoding (src/glue/clnt_msg.c),
 * over plain xdrmem streams: the common Reply (accepted, AUTH_NONE
 * verifier, SUCCESS) read at once from its first octets gives what
 * xdr_replymsg gives word by word, and every other Reply - a verifier with
 * a body, another accept status, a denial, one too short, one whose first
 * octets are not in one piece - goes through xdr_replymsg as before.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include <check.h>
#include <rpc/rpc.h>

#include "glue/clnt_msg.h"
#include "check_util.h" /* the suite constructors */

#define XID 0x01020304u

static size_t put_words(uint8_t *buf, const uint32_t *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t be = htonl(w[i]);

		memcpy(buf + 4 * i, &be, 4);
	}
	return 4 * n;
}

struct decoded {
	bool refused;
	struct rpc_err err;
	uint32_t xid;
	u_int result;
	u_int pos; /* of the stream afterwards */
};

/* Decode buf[0..len) as a Reply with u_int results, head given or not. */
static struct decoded decode(const uint8_t *buf, size_t len, bool head)
{
	struct clnt_msg_stream in;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct decoded d;
	struct rpc_msg reply;
	CLIENT cl;
	XDR xdrs;

	memset(&d, 0, sizeof(d));
	memset(&cl, 0, sizeof(cl));
	cl.cl_auth = authnone_create();
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	in = (struct clnt_msg_stream){
		.xdrs = &xdrs, .head = head && len >= CLNT_MSG_HEAD ? buf : NULL
	};
	d.refused = clnt_msg_decode(&cl, &lock, &in, (xdrproc_t)xdr_u_int,
				    &d.result, &reply, &d.err);
	d.xid = reply.rm_xid;
	d.pos = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	return d;
}

static void same(const uint8_t *buf, size_t len)
{
	struct decoded fast = decode(buf, len, true);
	struct decoded slow = decode(buf, len, false);

	ck_assert_int_eq(fast.refused, slow.refused);
	ck_assert_int_eq(fast.err.re_status, slow.err.re_status);
	ck_assert_int_eq(fast.err.re_why, slow.err.re_why);
	ck_assert_uint_eq(fast.result, slow.result);
	ck_assert_uint_eq(fast.pos, slow.pos);
	if (fast.err.re_status == RPC_SUCCESS)
		ck_assert_uint_eq(fast.xid, slow.xid);
}

START_TEST(test_common_reply)
{
	const uint32_t w[] = { XID,	REPLY, MSG_ACCEPTED, AUTH_NONE, 0,
			       SUCCESS, 77 };
	uint8_t buf[64];
	size_t len = put_words(buf, w, 7);
	struct decoded d = decode(buf, len, true);

	ck_assert_int_eq(d.err.re_status, RPC_SUCCESS);
	ck_assert(!d.refused);
	ck_assert_uint_eq(d.xid, XID);
	ck_assert_uint_eq(d.result, 77);
	ck_assert_uint_eq(d.pos, len);
	same(buf, len);
}
END_TEST

START_TEST(test_other_replies)
{
	/* a verifier with a body: AUTH_SYS's AUTH_SHORT, 4 octets */
	const uint32_t verf[] = { XID, REPLY, MSG_ACCEPTED, AUTH_SHORT,
				  4,   9,     SUCCESS,	    5 };
	const uint32_t unavail[] = { XID,	REPLY, MSG_ACCEPTED,
				     AUTH_NONE, 0,     PROG_UNAVAIL };
	const uint32_t mismatch[] = { XID,	 REPLY, MSG_ACCEPTED,
				      AUTH_NONE, 0,	PROG_MISMATCH,
				      2,	 3 };
	const uint32_t denied[] = { XID, REPLY, MSG_DENIED, AUTH_ERROR,
				    AUTH_TOOWEAK };
	const uint32_t call[] = { XID,	   CALL, MSG_ACCEPTED, AUTH_NONE, 0,
				  SUCCESS, 1 };
	const uint32_t short_res[] = { XID,	  REPLY, MSG_ACCEPTED,
				       AUTH_NONE, 0,	 SUCCESS };
	uint8_t buf[64];
	struct decoded d;

	same(buf, put_words(buf, verf, 8));
	same(buf, put_words(buf, unavail, 6));
	d = decode(buf, put_words(buf, unavail, 6), true);
	ck_assert_int_eq(d.err.re_status, RPC_PROGUNAVAIL);
	same(buf, put_words(buf, mismatch, 8));
	same(buf, put_words(buf, denied, 5));
	d = decode(buf, put_words(buf, denied, 5), true);
	ck_assert_int_eq(d.err.re_status, RPC_AUTHERROR);
	ck_assert_int_eq(d.err.re_why, AUTH_TOOWEAK);
	/* not a Reply at all, and a Reply without its results */
	same(buf, put_words(buf, call, 7));
	d = decode(buf, put_words(buf, call, 7), true);
	ck_assert_int_eq(d.err.re_status, RPC_CANTDECODERES);
	same(buf, put_words(buf, short_res, 6));
	d = decode(buf, put_words(buf, short_res, 6), true);
	ck_assert_int_eq(d.err.re_status, RPC_CANTDECODERES);
	/* shorter than the common header */
	same(buf, put_words(buf, short_res, 4));
}
END_TEST

Suite *clnt_msg_suite(void)
{
	Suite *s = suite_create("clnt_msg");
	TCase *tc = tcase_create("reply");

	tcase_add_test(tc, test_common_reply);
	tcase_add_test(tc, test_other_replies);
	suite_add_tcase(s, tc);
	return s;
}
