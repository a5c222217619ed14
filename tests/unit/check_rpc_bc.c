/*
 * check_rpc_bc.c - the backward direction (RFC 8167) of
 * src/rpc on the host, over the fake transport (fake_rt.h), in both
 * versions (each loop test runs with _i = 0 in v1 and _i = 1 in v2).
 *
 * Client side (rr_clnt, rr_bc.c): the test is the server that calls its
 * client back; what the client takes, queues, drops and counts, and the
 * bytes of the Replies it sends.  Server side (rr_srv, rr_srv_bc.c): the
 * test is the client that calls the server and answers its backward Calls;
 * the bytes of those Calls, the backward grant, routing by direction,
 * timeouts and connection loss.
 *
 * Everything asserted is what the peer sees on the wire of the fake (the
 * Sends it logged) or what the API returns; the counters only where they
 * are the sole trace of a dropped message.
 */
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "check_util.h"
#include "fake_rt.h"
#include "rpc_peer.h"
#include "trace_file.h"
#include "rpc/rr_call.h"
#include "rpc/rr_clock.h"
#include "rpc/rr_serve.h"
#include "wire/rw_props.h"
#include "wire/rw_role.h"

#define CREDITS 16u
#define XID	0x62000000u /* forward XIDs */
#define BXID	0x7b000000u /* backward XIDs */
#define BC_PROC 9u	    /* the procedure of backward Calls */
#define WAIT_MS 5000

static struct rr_clnt *clnt;
static struct rr_srv *srv;
static struct rt_conn *conn;

static void setup(void)
{
	fake_reset();
	clnt = NULL;
	srv = NULL;
	conn = NULL;
}

static void teardown(void)
{
	rr_clnt_destroy(clnt);
	rr_srv_destroy(srv);
	clnt = NULL;
	srv = NULL;
	ck_assert_msg(fake_misuses() == 0, "transport misused: %s",
		      fake_misuse_msg());
	fake_reset();
}

/* ---- The peer's messages ---------------------------------------------- */

/* The peer sends an RDMA_MSG in version vers (direction dir in v2) with
 * rpc[0..n) inline; h_extra (NULL: none) adds chunk lists. */
static void peer_msg(uint32_t vers, uint32_t dir, uint32_t xid, uint32_t credit,
		     const void *rpc, uint32_t n, const struct rw_hdr *h_extra)
{
	static uint8_t msg[16 * 1024];
	struct rw_hdr h;
	uint32_t m;

	rw_hdr_init(&h, vers, RW_MSG, xid, credit);
	if (h_extra) {
		h.nwrites = h_extra->nwrites;
		h.writes = h_extra->writes;
		h.has_reply = h_extra->has_reply;
		h.reply = h_extra->reply;
	}
	h.direction = dir;
	m = rp_msg(msg, sizeof(msg), &h, rpc, n);
	ck_assert_uint_gt(m, 0);
	ck_assert_int_eq(fake_recv(conn, msg, m, 0), 0);
}

/* An RPC Call of proc carrying arg[0..alen), from the peer. */
static void peer_call(uint32_t vers, uint32_t xid, uint32_t credit,
		      uint32_t proc, const void *arg, uint32_t alen,
		      const struct rw_hdr *h_extra)
{
	static uint8_t rpc[8192];
	uint32_t n = rp_call(rpc, sizeof(rpc), xid, proc, arg, alen);

	ck_assert_uint_gt(n, 0);
	peer_msg(vers, RW_DIR_CALL, xid, credit, rpc, n, h_extra);
}

/* An RPC Reply carrying res[0..rlen), from the peer. */
static void peer_reply(uint32_t vers, uint32_t xid, uint32_t credit,
		       const void *res, uint32_t rlen)
{
	static uint8_t rpc[8192];
	uint32_t n = rp_reply(rpc, sizeof(rpc), xid, res, rlen);

	ck_assert_uint_gt(n, 0);
	peer_msg(vers, RW_DIR_REPLY, xid, credit, rpc, n, NULL);
}

/* ---- What the peer received ------------------------------------------- */

/* One Send of the code under test, decoded against the v2 limits. */
struct sent {
	struct rw_hdr h;
	struct rw_hdr_space sp;
	const uint8_t *rpc; /* the inline RPC message (RDMA_MSG) */
	uint32_t len;
	int dir; /* rw_hdr_direction(): CALL, REPLY or -1 */
};

static bool sent_get(unsigned int i, struct sent *s)
{
	struct fake_msg m;

	if (!fake_send_get(conn, i, &m))
		return false;
	rw_hdr_space_init(&s->sp, &rw_v2_limits);
	ck_assert_int_eq(rw_hdr_decode(m.data, m.len, &s->h, &s->sp), RW_R_OK);
	s->rpc = m.data + s->h.hdr_len;
	s->len = m.len - s->h.hdr_len;
	s->dir = s->h.proc == RW_MSG ? rw_hdr_direction(&s->h, s->rpc, s->len) :
				       -1;
	return true;
}

/* Wait for the RDMA_MSG of direction dir and XID xid; its index. */
static unsigned int sent_find(uint32_t xid, int dir, struct sent *s)
{
	int64_t deadline = rr_now_ms() + WAIT_MS;
	unsigned int i = 0;

	for (;;) {
		while (sent_get(i, s)) {
			if (s->h.proc == RW_MSG && s->h.xid == xid &&
			    s->dir == dir)
				return i;
			i++;
		}
		ck_assert_msg(rr_now_ms() < deadline,
			      "no %s with XID 0x%08x was sent",
			      dir == RW_DIR_CALL ? "Call" : "Reply", xid);
		usleep(1000);
	}
}

/* RDMA_MSGs of direction dir sent so far. */
static unsigned int sent_count(int dir)
{
	struct sent s;
	unsigned int i, n = 0;

	for (i = 0; sent_get(i, &s); i++)
		n += s.h.proc == RW_MSG && s.dir == dir;
	return n;
}

/* The RPC Call inside s: its XID, procedure and argument. */
static void sent_rpc_call(const struct sent *s, struct rp_args *a)
{
	XDR x;

	xdrmem_create(&x, (char *)s->rpc, s->len, XDR_DECODE);
	ck_assert(rp_xdr_call_hdr(&x, a));
	ck_assert(rp_xdr_opaque(&x, a));
}

/* V1-BD-8/9 and V1-BD-2: an RDMA_MSG in vers, every chunk list empty, a
 * grant that is not 0, direction dir (v2's rdma_direction), the XID. */
static void sent_shape(const struct sent *s, uint32_t vers, int dir,
		       uint32_t xid)
{
	ck_assert_uint_eq(s->h.xid, xid);
	ck_assert_uint_eq(s->h.vers, vers);
	ck_assert_uint_eq(s->h.proc, RW_MSG);
	ck_assert_uint_eq(s->h.nreads, 0);
	ck_assert_uint_eq(s->h.nwrites, 0);
	ck_assert(!s->h.has_reply);
	ck_assert_uint_ne(s->h.credit, 0);
	if (vers == RW_VERS_2)
		ck_assert_uint_eq(s->h.direction, (uint32_t)dir);
	ck_assert_int_eq(s->dir, dir);
}

/* ---- The client (rr_clnt) --------------------------------------------- */

/* The test as server: answers forward Calls at once while answer is set,
 * echoing their argument in their version.  CONNPROP and backward
 * Replies are left alone. */
static struct {
	bool answer;
	uint32_t grant;
} fwd_srv;

static void on_send(struct rt_conn *c, const struct fake_msg *m, void *arg)
{
	static uint8_t out[8192];
	struct rp_args a = { .out = out, .cap = sizeof(out) };
	struct rw_hdr_space sp;
	struct rw_hdr h;
	XDR x;

	rw_hdr_space_init(&sp, &rw_v2_limits);
	if (!fwd_srv.answer || rw_hdr_decode(m->data, m->len, &h, &sp) ||
	    h.proc != RW_MSG ||
	    rw_hdr_direction(&h, m->data + h.hdr_len, m->len - h.hdr_len) !=
		    RW_DIR_CALL)
		return;
	xdrmem_create(&x, (char *)m->data + h.hdr_len, m->len - h.hdr_len,
		      XDR_DECODE);
	ck_assert(rp_xdr_call_hdr(&x, &a) && rp_xdr_opaque(&x, &a));
	peer_reply(h.vers, h.xid, fwd_srv.grant, out, a.len);
}

/* A client speaking vers only, keeping recv_extra Receives for backward
 * Calls (the grant it gives is recv_extra - 1, rr_bc.c). */
static void clnt_start(uint32_t vers, uint32_t recv_extra)
{
	struct sockaddr_in dst;
	struct rr_opts o;
	struct rt_err err;

	fwd_srv.grant = 8;
	fake_cfg()->on_send = on_send;
	memset(&o, 0, sizeof(o));
	rt_conn_attr_init(&o.conn);
	o.conn.credits = CREDITS;
	o.conn.recv_extra = recv_extra;
	o.conn.timeout_ms = 2000;
	o.max_reply = 1024;
	o.vers = vers == RW_VERS_2 ? RR_VERS_2 : RR_VERS_1;
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(20049);
	inet_pton(AF_INET, "192.0.2.9", &dst.sin_addr);
	clnt = rr_clnt_create((struct sockaddr *)&dst, &o, &err);
	ck_assert_msg(clnt != NULL, "rr_clnt_create: %s", err.msg);
	conn = fake_last_conn();
}

static void bc_enable(void)
{
	struct rt_err err;

	ck_assert_msg(rr_clnt_bc_enable(clnt, &err) == 0, "%s", err.msg);
}

/* rr_encode_fn of a backward Reply (plain XDR: ra.plain set). */
static bool reply_enc(XDR *xdrs, void *arg)
{
	return rp_xdr_reply(xdrs, arg);
}

/* The next queued backward Call, collecting the connection's events. */
static struct rr_bcq *bc_next(void)
{
	int64_t deadline = rr_now_ms() + WAIT_MS;
	struct rr_bcq *q;

	while (!(q = rr_clnt_bc_next(clnt))) {
		ck_assert_msg(rr_now_ms() < deadline, "no backward Call");
		usleep(1000);
	}
	return q;
}

/* q is the Call of xid carrying arg[0..alen). */
static void bcq_is(const struct rr_bcq *q, uint32_t xid, const void *arg,
		   uint32_t alen)
{
	uint8_t out[1024];
	struct rp_args a = { .out = out, .cap = sizeof(out) };
	const uint8_t *msg;
	uint32_t len;
	XDR x;

	ck_assert_uint_eq(rr_bcq_xid(q), xid);
	msg = rr_bcq_msg(q, &len);
	xdrmem_create(&x, (char *)msg, len, XDR_DECODE);
	ck_assert(rp_xdr_call_hdr(&x, &a));
	ck_assert_uint_eq(a.xid, xid);
	ck_assert_uint_eq(a.proc, BC_PROC);
	ck_assert(rp_xdr_opaque(&x, &a));
	ck_assert_uint_eq(a.len, alen);
	ck_assert_mem_eq(out, arg, alen);
}

static struct rr_stats clnt_stats(void)
{
	struct rr_stats st;

	rr_clnt_stats(clnt, &st);
	return st;
}

/* One forward call, on a thread of its own or not. */
struct fwd {
	uint32_t xid;
	uint8_t arg[64];
	enum rr_status st;
	struct rr_result res;
	uint8_t out[256];
	uint32_t outlen;
	bool decoded;
	pthread_t thread;
};

static void *fwd_run(void *arg)
{
	struct fwd *f = arg;
	struct rp_args a = {
		.xid = f->xid, .proc = 3, .data = f->arg, .len = sizeof(f->arg)
	};
	struct rp_args r = { .xid = f->xid,
			     .out = f->out,
			     .cap = sizeof(f->out) };
	struct rr_call *call;
	struct rr_req req;
	XDR *x;

	memset(&req, 0, sizeof(req));
	req.xid = f->xid;
	req.encode = rp_xdr_call;
	req.arg = &a;
	req.size_hint = 256;
	req.deadline_ms = rr_now_ms() + WAIT_MS;
	f->st = rr_call(clnt, &req, &call, &f->res);
	if (f->st != RR_OK)
		return NULL;
	x = rr_call_xdr(call);
	f->decoded = rp_xdr_reply_hdr(x, &r) && rw_xdr_begin_body(x) &&
		     rp_xdr_opaque(x, &r) && rr_call_decoded(call);
	f->outlen = r.len;
	rr_call_done(clnt, call);
	return NULL;
}

static void fwd_init(struct fwd *f, uint32_t xid)
{
	memset(f, 0, sizeof(*f));
	f->xid = xid;
	rp_fill(f->arg, sizeof(f->arg), xid);
}

/* The forward call came back with the echo of its own argument. */
static void fwd_echoed(const struct fwd *f)
{
	ck_assert_msg(f->st == RR_OK, "status %d: %s", f->st, f->res.msg);
	ck_assert(f->decoded);
	ck_assert_uint_eq(f->outlen, sizeof(f->arg));
	ck_assert_mem_eq(f->out, f->arg, sizeof(f->arg));
}

/*
 * V1-BD-1, RFC 8167: a backward Call whose XID is that of a forward
 * call in flight is taken as a backward Call, not as that call's Reply
 * (v1 by msg_type CALL, v2 by rdma_direction CALL); the forward call
 * completes with its real Reply.  In v2 a message whose rdma_direction is
 * CALL never completes a forward call even when it carries an RPC Reply
 * of that XID: it is dropped, counted.
 */
START_TEST(test_bc_clnt_call_with_forward_xid)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct fwd f;
	static uint8_t rpc[256];
	struct rr_bcq *q;
	struct sent s;
	uint32_t n;

	clnt_start(vers, 3);
	bc_enable();
	fwd_init(&f, XID);
	ck_assert_int_eq(pthread_create(&f.thread, NULL, fwd_run, &f), 0);
	sent_find(XID, RW_DIR_CALL, &s);
	peer_call(vers, XID, 1, BC_PROC, "same xid", 8, NULL);
	q = bc_next();
	bcq_is(q, XID, "same xid", 8);
	if (vers == RW_VERS_2) {
		n = rp_reply(rpc, sizeof(rpc), XID, f.arg, sizeof(f.arg));
		peer_msg(vers, RW_DIR_CALL, XID, 8, rpc, n, NULL);
		ck_assert_ptr_null(rr_clnt_bc_next(clnt));
		ck_assert_uint_eq(clnt_stats().bc_dropped, 1);
	}
	ck_assert_uint_eq(clnt_stats().replies, 0);
	peer_reply(vers, XID, 8, f.arg, sizeof(f.arg));
	ck_assert_int_eq(pthread_join(f.thread, NULL), 0);
	fwd_echoed(&f);
	ck_assert_uint_eq(clnt_stats().bc_calls, 1);
	ck_assert_uint_eq(clnt_stats().replies, 1);
	ck_assert_uint_eq(clnt_stats().unknown_xid, 0);
	ck_assert_uint_eq(clnt_stats().discarded, 0);
	rr_clnt_bc_done(clnt, q);
}
END_TEST

/*
 * V1-BD-7: a backward Call before rr_clnt_bc_enable() is dropped and
 * counted (its Receive posted again), never queued later; after it, the
 * next one is queued.  Without Receives kept for backward Calls the
 * service cannot be enabled.
 */
START_TEST(test_bc_clnt_dropped_until_enabled)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct fwd f;
	struct rr_bcq *q;
	struct rt_err err;

	clnt_start(vers, 3);
	fwd_srv.answer = true;
	peer_call(vers, BXID, 1, BC_PROC, "early", 5, NULL);
	fwd_init(&f, XID);
	fwd_run(&f); /* its wait collects the early Call */
	fwd_echoed(&f);
	ck_assert_uint_eq(clnt_stats().bc_dropped, 1);
	ck_assert_uint_eq(clnt_stats().bc_calls, 0);
	bc_enable();
	ck_assert_ptr_null(rr_clnt_bc_next(clnt));
	peer_call(vers, BXID + 1, 1, BC_PROC, "ready", 5, NULL);
	q = bc_next();
	bcq_is(q, BXID + 1, "ready", 5);
	ck_assert_uint_eq(clnt_stats().bc_calls, 1);
	ck_assert_uint_eq(clnt_stats().bc_dropped, 1);
	ck_assert_uint_eq(rt_conn_recvs_posted(conn), CREDITS + 3);
	rr_clnt_bc_done(clnt, q);
	rr_clnt_destroy(clnt); /* disables the backward service too */

	/* no Receives kept for them: no backward service */
	fake_reset();
	clnt_start(vers, 0);
	ck_assert_int_eq(rr_clnt_bc_enable(clnt, &err), -EINVAL);
	ck_assert_int_eq(rr_clnt_bc_fd(clnt), -1);
}
END_TEST

/*
 * V1-BD-3, V1-BD-8: a backward Call with a chunk list is dropped (they are
 * inline only); so is one beyond the grant the client gave (recv_extra 3:
 * 2 Calls at once, queued or being served), until a Reply frees a place.
 */
START_TEST(test_bc_clnt_chunks_and_over_grant_dropped)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct rw_segment seg = { .handle = 0xa0,
					 .length = 512,
					 .offset = 0x10000 };
	struct rw_chunk wc = { .nsegs = 1, .segs = &seg };
	struct rp_args ra = {
		.xid = BXID, .data = "ok", .len = 2, .plain = true
	};
	struct rr_bcq *q0, *q1, *q4;
	struct rr_result res;
	struct rw_hdr extra;

	clnt_start(vers, 3);
	bc_enable();
	memset(&extra, 0, sizeof(extra));
	extra.nwrites = 1;
	extra.writes = &wc;
	peer_call(vers, BXID + 10, 1, BC_PROC, "w", 1, &extra);
	memset(&extra, 0, sizeof(extra));
	extra.has_reply = true;
	extra.reply = wc;
	peer_call(vers, BXID + 11, 1, BC_PROC, "r", 1, &extra);
	peer_call(vers, BXID, 1, BC_PROC, "0", 1, NULL);
	peer_call(vers, BXID + 1, 1, BC_PROC, "1", 1, NULL);
	peer_call(vers, BXID + 2, 1, BC_PROC, "2", 1, NULL); /* over */
	q0 = bc_next();
	bcq_is(q0, BXID, "0", 1);
	ck_assert_uint_eq(clnt_stats().bc_dropped, 3);
	peer_call(vers, BXID + 3, 1, BC_PROC, "3", 1, NULL); /* over */
	q1 = bc_next();
	bcq_is(q1, BXID + 1, "1", 1);
	ck_assert_uint_eq(clnt_stats().bc_dropped, 4);
	/* q0's Reply gives its place back */
	ck_assert_int_eq(rr_clnt_bc_reply(clnt, q0, reply_enc, &ra, &res), 0);
	rr_clnt_bc_done(clnt, q0);
	peer_call(vers, BXID + 4, 1, BC_PROC, "4", 1, NULL);
	q4 = bc_next();
	bcq_is(q4, BXID + 4, "4", 1);
	ck_assert_uint_eq(clnt_stats().bc_dropped, 4);
	ck_assert_uint_eq(clnt_stats().bc_calls, 3);
	rr_clnt_bc_done(clnt, q1);
	rr_clnt_bc_done(clnt, q4);
}
END_TEST

/*
 * The trace (rpcrdma-trace(7)) of the client's side: each backward Call
 * taken (bc_call, with the RPC message's length and the queue's depth) or
 * dropped (bc_drop, with why: chunks, full), and each Reply sent (bc_reply,
 * with the Send's length as posted), under the server's XIDs.
 */
START_TEST(test_bc_clnt_trace)
{
	uint32_t vers = (uint32_t)_i + 1, id;
	static struct rw_segment seg = { .handle = 0xa0,
					 .length = 512,
					 .offset = 0x10000 };
	struct rw_chunk wc = { .nsegs = 1, .segs = &seg };
	struct rp_args ra = {
		.xid = BXID, .data = "pong", .len = 4, .plain = true
	};
	struct rr_bcq *q0, *q1;
	struct rr_result res;
	struct rw_hdr extra;
	char want[512];
	struct sent s;
	unsigned int i;

	tf_open();
	clnt_start(vers, 3);
	id = rt_conn_trace_id(conn);
	bc_enable();
	memset(&extra, 0, sizeof(extra));
	extra.nwrites = 1;
	extra.writes = &wc;
	peer_call(vers, BXID + 10, 1, BC_PROC, "w", 1, &extra);
	peer_call(vers, BXID, 1, BC_PROC, "ping", 4, NULL);
	peer_call(vers, BXID + 1, 1, BC_PROC, "second", 6, NULL);
	peer_call(vers, BXID + 2, 1, BC_PROC, "over", 4, NULL);
	q0 = bc_next();
	bcq_is(q0, BXID, "ping", 4);
	ck_assert_int_eq(rr_clnt_bc_reply(clnt, q0, reply_enc, &ra, &res), 0);
	rr_clnt_bc_done(clnt, q0);
	i = sent_find(BXID, RW_DIR_REPLY, &s);
	q1 = bc_next();
	bcq_is(q1, BXID + 1, "second", 6);
	rr_clnt_bc_done(clnt, q1);
	tf_read();

	ck_assert_events(id, BXID + 10, "bc_drop reason=chunks\n");
	snprintf(want, sizeof(want),
		 "bc_call vers=%u len=%u queued=1\n"
		 "bc_reply vers=%u send=%u errno=0\n",
		 vers, rp_call_len(4), vers, fake_send(conn, i)->len);
	ck_assert_events(id, BXID, want);
	snprintf(want, sizeof(want), "bc_call vers=%u len=%u queued=2\n", vers,
		 rp_call_len(6));
	ck_assert_events(id, BXID + 1, want);
	ck_assert_events(id, BXID + 2, "bc_drop reason=full\n");
	tf_close();
}
END_TEST

/*
 * V1-BD-9, V1-BD-2: the Reply rr_clnt_bc_reply() sends has the Call's XID
 * and version, direction REPLY (v2) and an RPC Reply (msg_type REPLY),
 * empty chunk lists, and the client's backward grant, never 0.
 */
START_TEST(test_bc_clnt_reply_on_the_wire)
{
	uint32_t vers = (uint32_t)_i + 1;
	uint8_t out[64];
	struct rp_args ra = {
		.xid = BXID, .data = "pong", .len = 4, .plain = true
	};
	struct rp_args rd = { .xid = BXID, .out = out, .cap = sizeof(out) };
	struct rr_result res;
	struct rr_bcq *q;
	struct sent s;
	unsigned int i;
	XDR x;

	clnt_start(vers, 3);
	bc_enable();
	peer_call(vers, BXID, 1, BC_PROC, "ping", 4, NULL);
	q = bc_next();
	ck_assert_int_eq(rr_clnt_bc_reply(clnt, q, reply_enc, &ra, &res), 0);
	rr_clnt_bc_done(clnt, q);
	i = sent_find(BXID, RW_DIR_REPLY, &s);
	ck_assert_uint_eq(i, fake_nsends(conn) - 1);
	sent_shape(&s, vers, RW_DIR_REPLY, BXID);
	ck_assert_uint_eq(s.h.credit, 2); /* recv_extra 3, less one */
	xdrmem_create(&x, (char *)s.rpc, s.len, XDR_DECODE);
	ck_assert(rp_xdr_reply_hdr(&x, &rd));
	ck_assert(rp_xdr_opaque(&x, &rd));
	ck_assert_uint_eq(rd.len, 4);
	ck_assert_mem_eq(out, "pong", 4);
	ck_assert_uint_eq(clnt_stats().bc_replies, 1);
}
END_TEST

/*
 * Backward messages are inline only: a Reply larger than the server's
 * Receives fails with RR_CANTENCODE and nothing goes on the wire; the
 * Call can still be answered.  The server's Receives are 1024 octets in
 * its private data (RFC 8797); in v1 that is the limit, in v2 the server
 * posts at least 4096 (V2-INL-2), so 2000 octets fit and 5000 do not.
 */
START_TEST(test_bc_clnt_reply_too_large)
{
	uint32_t vers = (uint32_t)_i + 1;
	static uint8_t big[5000];
	struct rp_args ra = { .xid = BXID, .data = big, .plain = true };
	struct rr_result res;
	struct rr_bcq *q;
	unsigned int sends;
	struct sent s;

	fake_cfg()->peer_priv.recv_size = 1024;
	clnt_start(vers, 3);
	bc_enable();
	peer_call(vers, BXID, 1, BC_PROC, "big", 3, NULL);
	q = bc_next();
	sends = fake_nsends(conn);
	ra.len = vers == RW_VERS_1 ? 2000 : sizeof(big);
	ck_assert_int_eq(rr_clnt_bc_reply(clnt, q, reply_enc, &ra, &res), -1);
	ck_assert_int_eq(res.status, RR_CANTENCODE);
	ck_assert_uint_eq(fake_nsends(conn), sends);
	ck_assert_uint_eq(clnt_stats().bc_replies, 0);
	ra.len = vers == RW_VERS_1 ? 16 : 2000;
	ck_assert_int_eq(rr_clnt_bc_reply(clnt, q, reply_enc, &ra, &res), 0);
	sent_find(BXID, RW_DIR_REPLY, &s);
	ck_assert_uint_eq(fake_nsends(conn), sends + 1);
	rr_clnt_bc_done(clnt, q);
}
END_TEST

/* ---- The server (rr_srv) ---------------------------------------------- */

/* A responder keeping bc_max Receives for backward Replies. */
static void srv_start(uint32_t bc_max)
{
	struct rr_srv_opts o = { .max_read_bytes = 1 << 20, .bc_max = bc_max };
	struct rt_conn_attr a;
	struct rt_err err;

	rt_conn_attr_init(&a);
	a.credits = CREDITS;
	a.recv_extra = bc_max;
	conn = fake_conn_new(&a);
	srv = rr_srv_create(conn, &o, &err);
	ck_assert_msg(srv != NULL, "rr_srv_create: %s", err.msg);
}

static struct rr_srv_stats srv_stats(void)
{
	struct rr_srv_stats st;

	rr_srv_stats(srv, &st);
	return st;
}

/* What svc_run does: progress while the fd says there is more. */
static int pump(void)
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

/* The next forward request (a backward caller may have collected it). */
static struct rr_sreq *srv_next(void)
{
	int64_t deadline = rr_now_ms() + WAIT_MS;
	struct rr_sreq *r;

	for (;;) {
		ck_assert_int_ge(pump(), 0);
		r = rr_srv_next(srv);
		if (r)
			return r;
		ck_assert_msg(rr_now_ms() < deadline, "no forward Call");
		usleep(1000);
	}
}

/* Serve r: its argument echoed; r must be the Call of xid. */
static void srv_answer(struct rr_sreq *r, uint32_t xid)
{
	static uint8_t arg[1024];
	struct rp_args a = { .out = arg, .cap = sizeof(arg) };
	struct rr_sreq_enc e = { .encode = rp_xdr_reply, .arg = &a };
	XDR *x = rr_sreq_xdr(r);

	ck_assert_uint_eq(rr_sreq_xid(r), xid);
	ck_assert(rp_xdr_call_hdr(x, &a));
	ck_assert_uint_eq(a.xid, xid);
	ck_assert(rw_xdr_begin_body(x));
	ck_assert(rp_xdr_opaque(x, &a));
	ck_assert_int_eq(rr_sreq_args_done(r), 0);
	a.data = arg;
	ck_assert_int_eq(rr_sreq_reply(srv, r, &e), 0);
	rr_sreq_done(srv, r);
}

/* The client calls (version vers) and is answered: the server now knows
 * the client's version. */
static void client_calls(uint32_t vers, uint32_t xid)
{
	struct sent s;

	peer_call(vers, xid, CREDITS, 3, "hello", 5, NULL);
	srv_answer(srv_next(), xid);
	sent_find(xid, RW_DIR_REPLY, &s);
}

/* One backward caller. */
struct bcc {
	uint32_t xid;
	uint32_t alen;
	int timeout_ms;
	uint8_t arg[8192];
	enum rr_status st;
	struct rr_result res;
	uint8_t out[8192];
	uint32_t outlen;
	bool decoded;
	bool finished;	/* rr_srv_bc_call() returned */
	int64_t end_ms; /* when */
	pthread_t thread;
};

static void bcc_init(struct bcc *b, uint32_t xid, uint32_t alen, int timeout_ms)
{
	memset(b, 0, sizeof(*b));
	b->xid = xid;
	b->alen = alen;
	b->timeout_ms = timeout_ms;
	rp_fill(b->arg, alen, xid);
}

static void *bcc_run(void *arg)
{
	struct bcc *b = arg;
	struct rp_args a = { .xid = b->xid,
			     .proc = BC_PROC,
			     .data = b->arg,
			     .len = b->alen,
			     .plain = true };
	struct rp_args r = { .xid = b->xid,
			     .out = b->out,
			     .cap = sizeof(b->out) };
	struct rr_srv_bcall *k;
	XDR *x;

	b->st = rr_srv_bc_call(srv, b->xid, rp_xdr_call, &a,
			       rr_clock_ms() + b->timeout_ms, &k, &b->res);
	if (b->st == RR_OK) {
		x = rr_srv_bcall_xdr(k);
		b->decoded = rp_xdr_reply_hdr(x, &r) && rp_xdr_opaque(x, &r);
		b->outlen = r.len;
		rr_srv_bcall_done(srv, k);
	}
	b->end_ms = rr_now_ms();
	__atomic_store_n(&b->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

static void bcc_start(struct bcc *b)
{
	ck_assert_int_eq(pthread_create(&b->thread, NULL, bcc_run, b), 0);
}

static void bcc_join(struct bcc *b)
{
	ck_assert_int_eq(pthread_join(b->thread, NULL), 0);
}

static bool bcc_finished(struct bcc *b)
{
	return __atomic_load_n(&b->finished, __ATOMIC_ACQUIRE);
}

/* The Reply the client (the test) sends to b's Call: the echo of its
 * argument, with grant. */
static void bcc_answer(uint32_t vers, const struct bcc *b, uint32_t grant)
{
	peer_reply(vers, b->xid, grant, b->arg, b->alen);
}

/* b got its own echo back. */
static void bcc_echoed(const struct bcc *b)
{
	ck_assert_msg(b->st == RR_OK, "backward XID 0x%08x: status %d: %s",
		      b->xid, b->st, b->res.msg);
	ck_assert(b->decoded);
	ck_assert_uint_eq(b->outlen, b->alen);
	ck_assert_mem_eq(b->out, b->arg, b->alen);
}

/*
 * V1-BD-8, V1-BD-2: rr_srv_bc_call() sends an RDMA_MSG in the version the
 * client's Calls use, direction CALL, every chunk list empty, a grant
 * request that is not 0 (bc_max), the XID given, the RPC Call inline; the
 * client's Reply completes it.  Before the client called, the version is
 * unknown: refused, nothing sent.
 */
START_TEST(test_bc_srv_call_on_the_wire)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc b;
	uint8_t got[8192];
	struct rp_args a = { .out = got, .cap = sizeof(got) };
	struct sent s;

	srv_start(2);
	bcc_init(&b, BXID, 100, 500);
	bcc_run(&b);
	ck_assert_int_eq(b.st, RR_CANTSEND);
	ck_assert_uint_eq(fake_nsends(conn), 0);

	client_calls(vers, XID);
	bcc_init(&b, BXID, 100, WAIT_MS);
	bcc_start(&b);
	sent_find(BXID, RW_DIR_CALL, &s);
	sent_shape(&s, vers, RW_DIR_CALL, BXID);
	ck_assert_uint_eq(s.h.credit, 2);
	sent_rpc_call(&s, &a);
	ck_assert_uint_eq(a.xid, BXID);
	ck_assert_uint_eq(a.proc, BC_PROC);
	ck_assert_uint_eq(a.len, b.alen);
	ck_assert_mem_eq(got, b.arg, b.alen);
	bcc_answer(vers, &b, 2);
	bcc_join(&b);
	bcc_echoed(&b);
	ck_assert_uint_eq(rr_srv_version(srv), vers);
	ck_assert_uint_eq(srv_stats().bc_calls, 1);
	ck_assert_uint_eq(srv_stats().bc_replies, 1);
	ck_assert_uint_eq(srv_stats().discarded, 0);
}
END_TEST

/*
 * A backward Call too large for the client's Receives (4096 octets) is
 * refused with RR_CANTENCODE and nothing is sent; it took no credit, so
 * the next Call goes out at once.
 */
START_TEST(test_bc_srv_call_too_large)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc b;
	unsigned int sends;
	struct sent s;

	srv_start(1);
	client_calls(vers, XID);
	sends = fake_nsends(conn);
	bcc_init(&b, BXID, 5000, WAIT_MS);
	bcc_run(&b);
	ck_assert_int_eq(b.st, RR_CANTENCODE);
	ck_assert_uint_eq(fake_nsends(conn), sends);
	bcc_init(&b, BXID + 1, 3000, WAIT_MS);
	bcc_start(&b);
	sent_find(BXID + 1, RW_DIR_CALL, &s);
	bcc_answer(vers, &b, 1);
	bcc_join(&b);
	bcc_echoed(&b);
}
END_TEST

/* v2 6.2.2: a client whose CONNPROP says Backward Request Support NONE is
 * never called back (RR_CANTSEND, EOPNOTSUPP, nothing sent). */
START_TEST(test_bc_srv_v2_brs_none)
{
	struct rw_prop props[RW_SP_NR];
	uint8_t data[4 * RW_SP_NR], msg[256];
	static struct bcc b;
	struct rw_props local;
	unsigned int sends;
	struct rw_hdr h;
	uint32_t n;

	srv_start(2);
	client_calls(RW_VERS_2, XID);
	rw_props_init(&local);
	local.val[RW_SP_BRS] = RW2_BRS_NONE;
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, XID + 1, CREDITS);
	rw_props_start(&local, &h.props, &h.subset1, props, data);
	n = rp_msg(msg, sizeof(msg), &h, NULL, 0);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(fake_recv(conn, msg, n, 0), 0);
	ck_assert_int_ge(pump(), 0);
	ck_assert_uint_eq(srv_stats().props_received, 1);
	sends = fake_nsends(conn);
	bcc_init(&b, BXID, 100, WAIT_MS);
	bcc_run(&b);
	ck_assert_int_eq(b.st, RR_CANTSEND);
	ck_assert_int_eq(b.res.err, EOPNOTSUPP);
	ck_assert_uint_eq(fake_nsends(conn), sends);
	ck_assert_uint_eq(sent_count(RW_DIR_CALL), 0);
}
END_TEST

/* Every caller of n sent its Call or finished: how many have sent. */
static unsigned int bc_calls_out(void)
{
	return sent_count(RW_DIR_CALL);
}

/* The count of Calls sent stays at n for a while (nothing more goes). */
static void calls_stay(unsigned int n)
{
	usleep(300 * 1000);
	ck_assert_uint_eq(bc_calls_out(), n);
}

static void calls_reach(unsigned int n)
{
	int64_t deadline = rr_now_ms() + WAIT_MS;

	while (bc_calls_out() < n) {
		ck_assert_msg(rr_now_ms() < deadline,
			      "%u backward Calls sent, "
			      "%u expected",
			      bc_calls_out(), n);
		usleep(1000);
	}
	ck_assert_uint_eq(bc_calls_out(), n);
}

/* Whose Call is the i-th backward Call sent. */
static struct bcc *call_owner(struct bcc *b, unsigned int nb, unsigned int i)
{
	struct sent s;
	unsigned int j, k, seen = 0;

	for (j = 0; sent_get(j, &s); j++) {
		if (s.h.proc != RW_MSG || s.dir != RW_DIR_CALL)
			continue;
		if (seen++ != i)
			continue;
		for (k = 0; k < nb; k++)
			if (b[k].xid == s.h.xid)
				return &b[k];
	}
	ck_abort_msg("no backward Call %u", i);
	return NULL;
}

/*
 * V1-BD-3: never more backward Calls outstanding than min(the client's
 * grant from its last backward Reply, bc_max).  The grant is 1 until the
 * first Reply, so the second caller waits; a Reply granting 5 lets bc_max
 * (2) out, not more; each further Reply lets one more go.
 */
START_TEST(test_bc_srv_grant_limits_calls)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc b[4];
	struct bcc *first, *o1, *o2, *last;
	unsigned int i;

	srv_start(2);
	client_calls(vers, XID);
	for (i = 0; i < 4; i++) {
		bcc_init(&b[i], BXID + i, 16, 10000);
		bcc_start(&b[i]);
	}
	calls_reach(1);
	calls_stay(1); /* grant 1 until the first Reply */
	first = call_owner(b, 4, 0);
	bcc_answer(vers, first, 5);
	calls_reach(3);
	calls_stay(3); /* min(5, bc_max 2) outstanding */
	o1 = call_owner(b, 4, 1);
	o2 = call_owner(b, 4, 2);
	bcc_answer(vers, o1, 5);
	calls_reach(4);
	last = call_owner(b, 4, 3);
	bcc_answer(vers, o2, 5);
	bcc_answer(vers, last, 5);
	for (i = 0; i < 4; i++) {
		bcc_join(&b[i]);
		bcc_echoed(&b[i]);
	}
	ck_assert_uint_eq(srv_stats().bc_replies, 4);
}
END_TEST

/*
 * V1-BD-1: the directions are told apart before the XIDs.  A backward
 * Reply whose XID equals a forward Call in progress goes to its backward
 * Call, and that forward Call is still answered; a forward Call whose XID
 * equals an outstanding backward Call is served as a Call, and the
 * backward Call still gets its own Reply.
 */
START_TEST(test_bc_srv_routed_by_direction)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc b;
	struct rr_sreq *r;
	struct sent s;

	srv_start(2);
	client_calls(vers, XID);

	/* forward XID + 1 in progress, backward XID + 1 answered */
	peer_call(vers, XID + 1, CREDITS, 3, "fwd", 3, NULL);
	r = srv_next();
	bcc_init(&b, XID + 1, 32, WAIT_MS);
	bcc_start(&b);
	sent_find(XID + 1, RW_DIR_CALL, &s);
	bcc_answer(vers, &b, 2);
	bcc_join(&b);
	bcc_echoed(&b);
	srv_answer(r, XID + 1);
	sent_find(XID + 1, RW_DIR_REPLY, &s);

	/* backward BXID outstanding, forward BXID served */
	bcc_init(&b, BXID, 32, WAIT_MS);
	bcc_start(&b);
	sent_find(BXID, RW_DIR_CALL, &s);
	peer_call(vers, BXID, CREDITS, 3, "fwd", 3, NULL);
	r = srv_next();
	srv_answer(r, BXID);
	sent_find(BXID, RW_DIR_REPLY, &s);
	ck_assert(!bcc_finished(&b));
	bcc_answer(vers, &b, 2);
	bcc_join(&b);
	bcc_echoed(&b);
	ck_assert_uint_eq(srv_stats().requests, 3);
	ck_assert_uint_eq(srv_stats().discarded, 0);
}
END_TEST

/*
 * V1-BD-11: a runt in the backward direction (a Reply's header cut short)
 * is dropped and nothing of it is used: not its XID (the Call still
 * waits), not its credit (the grant stays 1, so a second caller still
 * waits).
 */
START_TEST(test_bc_srv_runt_reply_ignored)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc b[2];
	static uint8_t rpc[256], msg[512];
	struct rw_hdr h;
	uint32_t n, m;

	srv_start(2);
	client_calls(vers, XID);
	bcc_init(&b[0], BXID, 16, WAIT_MS);
	bcc_start(&b[0]);
	calls_reach(1);
	bcc_init(&b[1], BXID + 1, 16, WAIT_MS);
	bcc_start(&b[1]);
	n = rp_reply(rpc, sizeof(rpc), BXID, b[0].arg, b[0].alen);
	rw_hdr_init(&h, vers, RW_MSG, BXID, 2);
	h.direction = RW_DIR_REPLY;
	m = rp_msg(msg, sizeof(msg), &h, rpc, n);
	ck_assert_uint_gt(m, 0);
	ck_assert_int_eq(fake_recv(conn, msg, 20, 0), 0); /* cut */
	calls_stay(1);
	ck_assert(!bcc_finished(&b[0]));
	ck_assert_uint_eq(srv_stats().discarded, 1);
	bcc_answer(vers, &b[0], 2);
	calls_reach(2);
	bcc_answer(vers, &b[1], 2);
	bcc_join(&b[0]);
	bcc_join(&b[1]);
	bcc_echoed(&b[0]);
	bcc_echoed(&b[1]);
}
END_TEST

/*
 * A caller that times out leaves its Call behind: its credit stays taken
 * (bc_max 1: the next caller waits) until the late Reply comes, which is
 * then dropped (the next caller gets its own Reply, not that one).
 */
START_TEST(test_bc_srv_timeout_late_reply)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc late, next;
	struct sent s;

	srv_start(1);
	client_calls(vers, XID);
	bcc_init(&late, BXID, 16, 200);
	bcc_run(&late);
	ck_assert_int_eq(late.st, RR_TIMEDOUT);
	ck_assert_uint_eq(srv_stats().bc_timeouts, 1);
	sent_find(BXID, RW_DIR_CALL, &s);
	bcc_init(&next, BXID + 1, 16, WAIT_MS);
	bcc_start(&next);
	calls_stay(1);
	bcc_answer(vers, &late, 1); /* late: dropped */
	sent_find(BXID + 1, RW_DIR_CALL, &s);
	ck_assert(!bcc_finished(&next));
	bcc_answer(vers, &next, 1);
	bcc_join(&next);
	bcc_echoed(&next);
	ck_assert_uint_eq(srv_stats().bc_replies, 1);
}
END_TEST

/*
 * The trace of the server's side: each backward Call sent (srv_bc_call,
 * with the Send's length, the Calls waiting and the client's grant), its
 * timeout (srv_bc_timeout) and each Reply (srv_bc_reply, orphan=1 for the
 * one that came too late).
 */
START_TEST(test_bc_srv_trace)
{
	uint32_t vers = (uint32_t)_i + 1, id;
	static struct bcc late, next;
	unsigned int i_late, i_next;
	char want[512];
	struct sent s;

	tf_open();
	srv_start(1);
	id = rt_conn_trace_id(conn);
	client_calls(vers, XID);
	bcc_init(&late, BXID, 16, 200);
	bcc_run(&late);
	ck_assert_int_eq(late.st, RR_TIMEDOUT);
	i_late = sent_find(BXID, RW_DIR_CALL, &s);
	bcc_init(&next, BXID + 1, 24, WAIT_MS);
	bcc_start(&next);
	calls_stay(1);
	bcc_answer(vers, &late, 1);
	i_next = sent_find(BXID + 1, RW_DIR_CALL, &s);
	bcc_answer(vers, &next, 1);
	bcc_join(&next);
	bcc_echoed(&next);
	tf_read();

	snprintf(want, sizeof(want),
		 "srv_bc_call send=%u inflight=1 grant=1\n"
		 "srv_bc_timeout lost=0\n"
		 "srv_bc_reply len=%u grant=1 orphan=1\n",
		 fake_send(conn, i_late)->len, rp_reply_len(16));
	ck_assert_events(id, BXID, want);
	snprintf(want, sizeof(want),
		 "srv_bc_call send=%u inflight=1 grant=1\n"
		 "srv_bc_reply len=%u grant=1 orphan=0\n",
		 fake_send(conn, i_next)->len, rp_reply_len(24));
	ck_assert_events(id, BXID + 1, want);
	tf_close();
}
END_TEST

/*
 * A Call whose Reply never comes gives its credit back RR_BC_ORPHAN_MS
 * (2 s) after its caller left: the next caller waits that long, not
 * forever.  A Reply after that finds no Call: dropped and counted.
 */
START_TEST(test_bc_srv_orphan_credit_returns)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc gone, next;
	int64_t left, waited;
	struct sent s;

	srv_start(1);
	client_calls(vers, XID);
	bcc_init(&gone, BXID, 16, 100);
	bcc_run(&gone);
	ck_assert_int_eq(gone.st, RR_TIMEDOUT);
	left = rr_now_ms();
	bcc_init(&next, BXID + 1, 16, 6000);
	bcc_start(&next);
	sent_find(BXID + 1, RW_DIR_CALL, &s);
	waited = rr_now_ms() - left;
	ck_assert_int_ge(waited, 1800);
	ck_assert_int_lt(waited, 4000);
	bcc_answer(vers, &gone, 1); /* no Call any more */
	bcc_answer(vers, &next, 1);
	bcc_join(&next);
	bcc_echoed(&next);
	ck_assert_uint_eq(srv_stats().discarded, 1);
}
END_TEST

/*
 * The connection ends: the caller waiting for its Reply gets RR_CANTRECV,
 * the one waiting for a credit RR_CANTSEND, both at once (well within a
 * second), not at their deadlines.
 */
START_TEST(test_bc_srv_conn_loss_wakes_callers)
{
	uint32_t vers = (uint32_t)_i + 1;
	static struct bcc sent_one, waiting;
	int64_t killed;

	srv_start(1);
	client_calls(vers, XID);
	bcc_init(&sent_one, BXID, 16, 20000);
	bcc_start(&sent_one);
	calls_reach(1);
	bcc_init(&waiting, BXID + 1, 16, 20000);
	bcc_start(&waiting);
	calls_stay(1);
	killed = rr_now_ms();
	fake_kill(conn, ECONNRESET, "the client went away");
	bcc_join(&sent_one);
	bcc_join(&waiting);
	ck_assert_int_eq(sent_one.st, RR_CANTRECV);
	ck_assert_int_eq(waiting.st, RR_CANTSEND);
	ck_assert_int_lt(sent_one.end_ms - killed, 1000);
	ck_assert_int_lt(waiting.end_ms - killed, 1000);
}
END_TEST

Suite *rpc_bc_suite(void)
{
	Suite *s = suite_create("rpc_bc");
	TCase *tc = tcase_create("client");
	TCase *ts = tcase_create("server");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_add_loop_test(tc, test_bc_clnt_call_with_forward_xid, 0, 2);
	tcase_add_loop_test(tc, test_bc_clnt_dropped_until_enabled, 0, 2);
	tcase_add_loop_test(tc, test_bc_clnt_chunks_and_over_grant_dropped, 0,
			    2);
	tcase_add_loop_test(tc, test_bc_clnt_reply_on_the_wire, 0, 2);
	tcase_add_loop_test(tc, test_bc_clnt_trace, 0, 2);
	tcase_add_loop_test(tc, test_bc_clnt_reply_too_large, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_call_on_the_wire, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_call_too_large, 0, 2);
	tcase_add_test(ts, test_bc_srv_v2_brs_none);
	tcase_add_loop_test(ts, test_bc_srv_grant_limits_calls, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_routed_by_direction, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_runt_reply_ignored, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_timeout_late_reply, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_trace, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_orphan_credit_returns, 0, 2);
	tcase_add_loop_test(ts, test_bc_srv_conn_loss_wakes_callers, 0, 2);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ts);
	return s;
}
