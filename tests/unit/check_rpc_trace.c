/*
 * check_rpc_trace.c - the trace lines src/rpc writes (rpcrdma-trace(7)),
 * over the fake transport (fake_rt.h) with the trace log in a file: the
 * requester's version, each call's plan with its chunk counts and sizes,
 * the Reply's kind, RDMA_ERRORs and fences; the responder's view of a Call,
 * its reply and its RDMA_ERRORs.  Every line must carry the connection's
 * id and the XID of its RPC; the values are checked against what went on
 * the wire (the Send's length) and what the test sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include "check_util.h"
#include "fake_rt.h"
#include "hdr_vectors.h"
#include "rpc_peer.h"
#include "rpc/rr_call.h"
#include "rpc/rr_serve.h"
#include "trace/tr_trace.h"
#include "trace_file.h"
#include "wire/rw_role.h"

#define GRANT	 8u
#define CREDITS	 16u
#define XID_S	 0x7a000001u /* a Short call */
#define XID_C	 0x7a000002u /* a Chunked call */
#define XID_E	 0x7a000003u /* answered with ERR_VERS */
#define ITEM_LEN 8192u	     /* the Chunked call's argument */
#define RES_LEN	 16u	     /* the requester's results */

/* What the scripted server saw and does. */
static struct {
	uint32_t err_xid;    /* answer this XID with ERR_VERS */
	uint32_t drop_xid;   /* never answer this XID */
	unsigned int pulled; /* Read chunks it read from our memory */
	int timeout_ms;	     /* the requester's calls wait this long */
} peer;

static void setup(void)
{
	fake_reset();
	memset(&peer, 0, sizeof(peer));
	peer.timeout_ms = 5000;
	tf_open();
}

static void teardown(void)
{
	tf_close();
	ck_assert_msg(fake_misuses() == 0, "transport misused: %s",
		      fake_misuse_msg());
	fake_reset();
}

/* ---- The requester, with the test as a scripted server -------------------- */

/* Every Call: its Read chunks read as a server pulls them (which needs
 * them exposed), then answered inline with RES_LEN octets, or with
 * ERR_VERS 1..1. */
static void on_send(struct rt_conn *c, const struct fake_msg *m, void *arg)
{
	static uint8_t item[ITEM_LEN], rpc[256], res[RES_LEN], out[512];
	struct rw_hdr_space sp;
	struct rw_rx_call rx;
	struct rw_hdr h;
	uint32_t i, n;

	rw_hdr_space_init(&sp, NULL);
	ck_assert_int_eq(rw_recv_call(m->data, m->len, &rx, &sp), RW_R_OK);
	for (i = 0; i < rx.hdr.nreads; i++) {
		ck_assert_uint_le(rx.hdr.reads[i].seg.length, sizeof(item));
		ck_assert_int_eq(fake_peer_rdma_read(c, &rx.hdr.reads[i].seg,
						     item),
				 0);
		peer.pulled++;
	}
	if (rx.hdr.xid == peer.drop_xid)
		return;
	if (rx.hdr.xid == peer.err_xid) {
		rw_hdr_init(&h, RW_VERS_1, RW_ERROR, rx.hdr.xid, GRANT);
		h.err.code = RW_ERR_VERS;
		h.err.low = h.err.high = 1;
		n = rp_msg(out, sizeof(out), &h, NULL, 0);
	} else {
		rp_fill(res, sizeof(res), rx.hdr.xid);
		n = rp_reply(rpc, sizeof(rpc), rx.hdr.xid, res, sizeof(res));
		rw_hdr_init(&h, RW_VERS_1, RW_MSG, rx.hdr.xid, GRANT);
		n = rp_msg(out, sizeof(out), &h, rpc, n);
	}
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(fake_recv(c, out, n, 0), 0);
}

static struct rr_clnt *clnt_start(void)
{
	struct sockaddr_in dst;
	struct rr_clnt *clnt;
	struct rr_opts o;
	struct rt_err err;

	fake_cfg()->on_send = on_send;
	memset(&o, 0, sizeof(o));
	rt_conn_attr_init(&o.conn);
	o.conn.credits = CREDITS;
	o.conn.timeout_ms = 2000;
	o.max_reply = 64 * 1024;
	o.ddp_reg_min = 64 * 1024;
	o.vers = RR_VERS_1;
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(20049);
	inet_pton(AF_INET, "192.0.2.9", &dst.sin_addr);
	clnt = rr_clnt_create((struct sockaddr *)&dst, &o, &err);
	ck_assert_msg(clnt != NULL, "rr_clnt_create: %s", err.msg);
	return clnt;
}

/* One call of alen octets, its argument a Read chunk candidate when ddp;
 * the status, and for RR_OK the results checked. */
static enum rr_status call(struct rr_clnt *clnt, uint32_t xid, uint32_t alen,
			   bool ddp)
{
	static uint8_t arg[ITEM_LEN], res[RES_LEN], want[RES_LEN];
	struct rp_args a = { .xid = xid, .proc = 3, .data = arg, .len = alen };
	struct rp_args r = { .xid = xid, .out = res, .cap = sizeof(res) };
	struct rr_result out;
	struct rr_call *k;
	struct rr_req req;
	enum rr_status st;
	XDR *x;

	rp_fill(arg, alen, xid);
	memset(&req, 0, sizeof(req));
	req.xid = xid;
	req.encode = rp_xdr_call;
	req.arg = &a;
	req.size_hint = alen + 64;
	req.ddp.mode = ddp ? RW_DDP_ITEMS : RW_DDP_NONE;
	req.ddp.mask = 1; /* the opaque argument */
	req.deadline_ms = rr_now_ms() + peer.timeout_ms;
	st = rr_call(clnt, &req, &k, &out);
	if (st != RR_OK)
		return st;
	x = rr_call_xdr(k);
	ck_assert(rp_xdr_reply_hdr(x, &r) && rw_xdr_begin_body(x) &&
		  rp_xdr_opaque(x, &r) && rr_call_decoded(k));
	rp_fill(want, sizeof(want), xid);
	ck_assert_uint_eq(r.len, RES_LEN);
	ck_assert_mem_eq(res, want, RES_LEN);
	rr_call_done(clnt, k);
	return st;
}

/*
 * A Short call, a Chunked call and one ended by an RDMA_ERROR on one
 * connection: each XID's lines are exactly its plan (the Send's length
 * as posted, the payload, the Read chunk moving the 8192-octet argument),
 * its Reply's kind and length with the grant, and - only for the call that
 * exposed memory - one fence of one handle, after the Reply; the
 * connection's own lines (xid 0) give the version chosen, then settled.
 */
START_TEST(test_trace_clnt_calls)
{
	struct rr_clnt *clnt = clnt_start();
	struct rt_conn *c = fake_last_conn();
	uint32_t id = rt_conn_trace_id(c), reply = rp_reply_len(RES_LEN);
	char want[1024];

	peer.err_xid = XID_E;
	ck_assert_int_eq(call(clnt, XID_S, 100, false), RR_OK);
	ck_assert_int_eq(call(clnt, XID_C, ITEM_LEN, true), RR_OK);
	ck_assert_int_eq(call(clnt, XID_E, 40, false), RR_ERR_VERS);
	ck_assert_uint_eq(peer.pulled, 1);
	ck_assert_uint_eq(fake_nsends(c), 3);
	rr_clnt_destroy(clnt);
	tf_read();

	snprintf(want, sizeof(want),
		 "version vers=1 state=chosen call_inline=4096 "
		 "reply_inline=4096\n"
		 "version vers=1 state=settled call_inline=4096 "
		 "reply_inline=4096\n");
	ck_assert_events(id, 0, want);

	snprintf(want, sizeof(want),
		 "call kind=short vers=1 send=%u payload=%u reads=0 "
		 "read_bytes=0 pzrc=0 writes=0 write_bytes=0 reply_chunk=0\n"
		 "reply kind=short len=%u writes=0 write_bytes=0 credits=%u\n",
		 fake_send(c, 0)->len, rp_call_len(100), reply, GRANT);
	ck_assert_events(id, XID_S, want);

	snprintf(want, sizeof(want),
		 "call kind=chunked vers=1 send=%u payload=%u reads=1 "
		 "read_bytes=%u pzrc=0 writes=0 write_bytes=0 reply_chunk=0\n"
		 "reply kind=short len=%u writes=0 write_bytes=0 credits=%u\n"
		 "fence handles=1 status=0\n",
		 fake_send(c, 1)->len, rp_call_len(ITEM_LEN), ITEM_LEN, reply,
		 GRANT);
	ck_assert_events(id, XID_C, want);

	snprintf(want, sizeof(want),
		 "call kind=short vers=1 send=%u payload=%u reads=0 "
		 "read_bytes=0 pzrc=0 writes=0 write_bytes=0 reply_chunk=0\n"
		 "rdma_error code=1 err=ERR_VERS low=1 high=1 credits=%u\n",
		 fake_send(c, 2)->len, rp_call_len(40), GRANT);
	ck_assert_events(id, XID_E, want);
}
END_TEST

/* A call the server drops holds the only credit of a new connection: the
 * next call replaces the connection at once, and the old one's log says
 * why, once (rpcrdma-trace(7), recover; doc/oneway.md). */
START_TEST(test_trace_clnt_recover)
{
	struct rr_clnt *clnt = clnt_start();
	struct rt_conn *c = fake_last_conn();
	uint32_t id = rt_conn_trace_id(c);
	char got[1024];

	peer.drop_xid = XID_S;
	peer.timeout_ms = 100;
	ck_assert_int_eq(call(clnt, XID_S, 100, false), RR_TIMEDOUT);
	peer.timeout_ms = 5000;
	ck_assert_int_eq(call(clnt, XID_C, 100, false), RR_OK);
	ck_assert_ptr_ne(fake_last_conn(), c);
	rr_clnt_destroy(clnt);
	tf_read();
	tf_events(id, 0, got, sizeof(got));
	ck_assert_msg(strstr(got, "recover abandoned=1 oneway=0\n") != NULL,
		      "no recover line in\n%s", got);
	ck_assert_ptr_null(strstr(strstr(got, "recover ") + 1, "recover "));
	tf_events(id, XID_S, got, sizeof(got));
	ck_assert_msg(strstr(got, "timeout inflight=1\n") != NULL,
		      "no timeout line in\n%s", got);
}
END_TEST

/* The log off: the same calls write nothing. */
START_TEST(test_trace_clnt_off)
{
	struct rr_clnt *clnt;

	tr_close();
	clnt = clnt_start();
	ck_assert_int_eq(call(clnt, XID_S, 100, false), RR_OK);
	ck_assert_int_eq(call(clnt, XID_C, ITEM_LEN, true), RR_OK);
	rr_clnt_destroy(clnt);
	tf_read();
	ck_assert_str_eq(tf_lines, "");
}
END_TEST

/* ---- The responder, with the test as the requester ------------------------ */

static int pump(struct rr_srv *srv)
{
	struct pollfd pfd = { .fd = rr_srv_fd(srv), .events = POLLIN };
	unsigned int i;
	int n = 0;

	for (i = 0; i < 100; i++) {
		n = rr_srv_progress(srv);
		if (n < 0 || poll(&pfd, 1, 0) <= 0)
			return n;
	}
	ck_abort_msg("the responder's fd never settles");
	return n;
}

/*
 * A Short Call answered inline, then a v2 header to a v1-only responder:
 * srv_call with the Call's length as received, srv_reply with the reply's
 * payload and the grant, srv_rdma_error ERR_VERS for the header (the
 * vector N-2b, XID 0x12345678).
 */
START_TEST(test_trace_srv_call_reply_error)
{
	static uint8_t rpc[512], msg[1024], arg[100], res[300], out[200];
	struct rr_srv_opts o = { .max_read_bytes = 1 << 20 };
	struct rp_args a = { .out = out, .cap = sizeof(out) };
	struct rp_args ra = { .xid = XID_S, .data = res, .len = sizeof(res) };
	struct rr_sreq_enc e = { .encode = rp_xdr_reply, .arg = &ra };
	struct rt_conn_attr attr;
	struct rr_sreq *r;
	struct rr_srv *srv;
	struct rt_conn *c;
	struct rt_err err;
	struct rw_hdr h;
	uint32_t n, len;
	char want[512];
	uint8_t v[64];
	XDR *x;

	o.vers_min = o.vers_max = 1;
	rt_conn_attr_init(&attr);
	attr.credits = CREDITS;
	c = fake_conn_new(&attr);
	srv = rr_srv_create(c, &o, &err);
	ck_assert_msg(srv != NULL, "rr_srv_create: %s", err.msg);

	rp_fill(arg, sizeof(arg), 1);
	n = rp_call(rpc, sizeof(rpc), XID_S, 3, arg, sizeof(arg));
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, XID_S, CREDITS);
	len = rp_msg(msg, sizeof(msg), &h, rpc, n);
	ck_assert_int_eq(fake_recv(c, msg, len, 0), 0);
	ck_assert_int_eq(pump(srv), 1);
	r = rr_srv_next(srv);
	ck_assert_ptr_nonnull(r);
	x = rr_sreq_xdr(r);
	ck_assert(rp_xdr_call_hdr(x, &a) && rw_xdr_begin_body(x) &&
		  rp_xdr_opaque(x, &a) && rr_sreq_args_done(r) == 0);
	rp_fill(res, sizeof(res), 2);
	ck_assert_int_eq(rr_sreq_reply(srv, r, &e), 0);
	rr_sreq_done(srv, r);

	n = (uint32_t)hdr_vec("N-2b", v, sizeof(v));
	ck_assert_int_eq(fake_recv(c, v, n, 0), 0);
	ck_assert_int_eq(pump(srv), 0);
	ck_assert_uint_eq(fake_nsends(c), 2);
	rr_srv_destroy(srv);
	tf_read();

	snprintf(want, sizeof(want),
		 "srv_call kind=short vers=1 len=%u read_segs=0 read_bytes=0 "
		 "writes=0 reply_chunk=0\n"
		 "srv_reply kind=short len=%u writes=0 write_bytes=0 "
		 "credits=%u\n",
		 len, rp_reply_len(sizeof(res)), CREDITS);
	ck_assert_events(rt_conn_trace_id(c), XID_S, want);
	snprintf(want, sizeof(want),
		 "srv_rdma_error code=1 err=ERR_VERS cause=header "
		 "credits=%u\n",
		 CREDITS);
	ck_assert_events(rt_conn_trace_id(c), 0x12345678u, want);
}
END_TEST

Suite *rpc_trace_suite(void)
{
	Suite *s = suite_create("rpc_trace");
	TCase *tc = tcase_create("events");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_trace_clnt_calls);
	tcase_add_test(tc, test_trace_clnt_off);
	tcase_add_test(tc, test_trace_clnt_recover);
	tcase_add_test(tc, test_trace_srv_call_reply_error);
	suite_add_tcase(s, tc);
	return s;
}
