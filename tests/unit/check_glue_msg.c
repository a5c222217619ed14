/*
 * check_glue_msg.c - the glue's Reply decoding and encoding
 * (src/glue/clnt_msg.c, src/glue/svc_xprt.c), over plain xdrmem streams:
 * the common Reply (accepted, AUTH_NONE verifier, SUCCESS) read at once
 * from its first octets gives what xdr_replymsg gives word by word, and
 * every other Reply - a verifier with a body, another accept status, a
 * denial, one too short - goes through xdr_replymsg as before; the server
 * writes the octets xdr_replymsg writes, for the common Reply and others;
 * the client writes a Call's header as libtirpc does.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include <check.h>
#include <rpc/rpc.h>

#include "glue/clnt_msg.h"
#include "glue/svc_xprt.h"
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
	const uint32_t garbage[] = { XID, REPLY, MSG_ACCEPTED, AUTH_SHORT,
				     4,	  9,	 GARBAGE_ARGS };
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
	/* a failed accepted Reply with a verifier: freed (LeakSanitizer) */
	same(buf, put_words(buf, garbage, 7));
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

/* svc_xprt_reply_encode's octets for msg (results: one u_int), and
 * libtirpc's own (xdr_replymsg with the results in the header). */
static void encode_both(const struct rpc_msg *msg, u_int *val, uint8_t *ours,
			u_int *ours_len, uint8_t *ref, u_int *ref_len)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct svc_xprt_reply rep;
	struct rpc_msg copy = *msg;
	SVCXPRT *xprt;
	XDR xdrs;

	xprt = svc_xprt_new(-1, NULL, NULL, NULL, "rdma",
			    (struct sockaddr *)&sin, NULL);
	ck_assert_ptr_nonnull(xprt);
	svc_xprt_reply_init(&rep, xprt, &copy);
	xdrmem_create(&xdrs, (char *)ours, 128, XDR_ENCODE);
	ck_assert(svc_xprt_reply_encode(&xdrs, &rep));
	*ours_len = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
	svc_xprt_free(xprt);
	copy = *msg;
	copy.acpted_rply.ar_results.where = (caddr_t)val;
	copy.acpted_rply.ar_results.proc = (xdrproc_t)xdr_u_int;
	xdrmem_create(&xdrs, (char *)ref, 128, XDR_ENCODE);
	ck_assert(xdr_replymsg(&xdrs, &copy));
	*ref_len = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);
}

static void encodes_as_libtirpc(const struct rpc_msg *msg)
{
	uint8_t ours[128], ref[128];
	u_int val = 4242, ours_len, ref_len;
	struct rpc_msg m = *msg;

	m.acpted_rply.ar_results.where = (caddr_t)&val;
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_u_int;
	encode_both(&m, &val, ours, &ours_len, ref, &ref_len);
	ck_assert_uint_eq(ours_len, ref_len);
	ck_assert_mem_eq(ours, ref, ref_len);
}

START_TEST(test_server_replies)
{
	static char body[4] = { 0, 0, 0, 9 };
	struct rpc_msg m;

	memset(&m, 0, sizeof(m));
	m.rm_xid = XID;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	encodes_as_libtirpc(&m);
	/* a verifier with a body (AUTH_SHORT) */
	m.acpted_rply.ar_verf.oa_flavor = AUTH_SHORT;
	m.acpted_rply.ar_verf.oa_base = body;
	m.acpted_rply.ar_verf.oa_length = sizeof(body);
	encodes_as_libtirpc(&m);
	/* another accept status: no results */
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = PROC_UNAVAIL;
	encodes_as_libtirpc(&m);
}
END_TEST

/* A Call's octets: the header written at once, then the arguments; the
 * reference is libtirpc's xdr_callhdr, the procedure, AUTH_MARSHALL. */
START_TEST(test_call_header)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	uint8_t ours[128], ref[128];
	struct clnt_msg_call call;
	u_int val = 99, pos;
	struct rpc_msg m;
	int32_t proc = 7;
	CLIENT cl;
	XDR xdrs;

	memset(&cl, 0, sizeof(cl));
	cl.cl_auth = authnone_create();
	memset(&call, 0, sizeof(call));
	call.cl = &cl;
	call.auth_lock = &lock;
	call.xid = XID;
	call.prog = 400123;
	call.vers = 2;
	call.proc = 7;
	call.xargs = (xdrproc_t)xdr_u_int;
	call.argsp = &val;
	xdrmem_create(&xdrs, (char *)ours, sizeof(ours), XDR_ENCODE);
	ck_assert(clnt_msg_encode(&xdrs, &call));
	pos = xdr_getpos(&xdrs);
	xdr_destroy(&xdrs);

	memset(&m, 0, sizeof(m));
	m.rm_xid = XID;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = 400123;
	m.rm_call.cb_vers = 2;
	xdrmem_create(&xdrs, (char *)ref, sizeof(ref), XDR_ENCODE);
	ck_assert(xdr_callhdr(&xdrs, &m) && xdr_int32_t(&xdrs, &proc) &&
		  AUTH_MARSHALL(cl.cl_auth, &xdrs) && xdr_u_int(&xdrs, &val));
	ck_assert_uint_eq(pos, xdr_getpos(&xdrs));
	ck_assert_mem_eq(ours, ref, pos);
	xdr_destroy(&xdrs);
	/* a stream too short for the header fails, as before */
	xdrmem_create(&xdrs, (char *)ours, 20, XDR_ENCODE);
	ck_assert(!clnt_msg_encode(&xdrs, &call));
	xdr_destroy(&xdrs);
}
END_TEST

Suite *glue_msg_suite(void)
{
	Suite *s = suite_create("glue_msg");
	TCase *tc = tcase_create("reply");

	tcase_add_test(tc, test_common_reply);
	tcase_add_test(tc, test_other_replies);
	tcase_add_test(tc, test_server_replies);
	tcase_add_test(tc, test_call_header);
	suite_add_tcase(s, tc);
	return s;
}
