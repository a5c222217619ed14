/*
 * check_rpc_clnt.c - the requester (rr_call.h) on the host, over the fake
 * transport (fake_rt.h) with the test as the server: credits, Calls in
 * flight, XID matching, malformed Replies, RDMA_ERROR, timeouts and
 * orphans, connection loss and reconnection, and fencing: every exposure
 * of a call is revoked before rr_call() returns it to its caller.
 *
 * The server is either scripted (the fake's on_send hook answers each Call
 * at once, echoing its argument as the result) or played by the test
 * thread while callers block in rr_call() on threads of their own.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "check_util.h"
#include "fake_rt.h"
#include "rpc_peer.h"
#include "rpc/rr_call.h"
#include "rpc/rr_clock.h"
#include "wire/rw_role.h"

#define XID	    0x51000000u
#define REQUESTED   16u	  /* credits our Calls ask for */
#define SMALL_REPLY 1024u /* max_reply that never needs a Reply chunk */

static struct rr_clnt *clnt;

/*
 * The REPLY binding every call carries unless it says unsized: the largest
 * Reply is known (half of clnt_start's max_reply), so a Reply chunk is
 * offered up front exactly when that may not fit inline (V1-RP-1/2).
 * Without one the size is unknown and the requester first asks inline,
 * offering a Reply chunk only on a resend after ERR_CHUNK (main's choice
 * for Replies of unknown size; test_clnt_unsized_reply_resent).
 */
static struct rpcrdma_ulb_entry sized_reply;

/* What the scripted server does with each Call. */
static struct {
	bool answer;	    /* answer at once (else the test does) */
	bool null_only;	    /* ... only NULL Calls (procedure 0), as a
			     * server whose other routines send no
			     * reply (batching) */
	uint32_t grant;	    /* rdma_credit of its Replies */
	unsigned int calls; /* Calls it saw */
	unsigned int nulls; /* ... of procedure 0 */
	uint32_t last_xid;  /* XID of the last non-NULL Call */
	bool out_of_order;  /* a non-NULL Call came out of order */
} srv;

static void setup(void)
{
	fake_reset();
	clnt = NULL;
	memset(&srv, 0, sizeof(srv));
	srv.grant = 8;
}

static void teardown(void)
{
	rr_clnt_destroy(clnt);
	clnt = NULL;
	ck_assert_msg(fake_misuses() == 0, "transport misused: %s",
		      fake_misuse_msg());
	fake_reset();
}

/* ---- The server's side ------------------------------------------------- */

/* A Call as the server sees it: header, the RPC message (fetched from the
 * PZRC for a Long Call) and its argument. */
struct seen {
	struct rw_rx_call rx;
	struct rw_hdr_space sp;
	uint8_t rpc[64 * 1024];
	uint32_t len;
	struct rp_args args;
	uint8_t arg[32 * 1024];
};

static bool seen_parse(struct rt_conn *c, const struct fake_msg *m,
		       struct seen *s)
{
	const struct rw_hdr *h = &s->rx.hdr;
	XDR x;

	rw_hdr_space_init(&s->sp, NULL);
	if (rw_recv_call(m->data, m->len, &s->rx, &s->sp) != RW_R_OK)
		return false;
	if (h->proc == RW_MSG) {
		s->len = m->len - h->hdr_len;
		memcpy(s->rpc, m->data + h->hdr_len, s->len);
	} else {
		if (h->nreads < 1 || h->reads[0].position != 0 ||
		    h->reads[0].seg.length > sizeof(s->rpc) ||
		    fake_peer_rdma_read(c, &h->reads[0].seg, s->rpc))
			return false;
		s->len = h->reads[0].seg.length;
	}
	memset(&s->args, 0, sizeof(s->args));
	s->args.out = s->arg;
	s->args.cap = sizeof(s->arg);
	xdrmem_create(&x, (char *)s->rpc, s->len, XDR_DECODE);
	return rp_xdr_call_hdr(&x, &s->args) && rp_xdr_opaque(&x, &s->args);
}

/* Answer the Call seen: res[0..len) inline if it fits, else written into
 * its Reply chunk (RDMA_NOMSG).  A reply of another XID: xid != 0. */
static void answer(struct rt_conn *c, const struct seen *s, uint32_t grant,
		   const void *res, uint32_t len, uint32_t inv)
{
	static uint8_t rpc[64 * 1024], msg[8192];
	struct rw_segment seg;
	struct rw_hdr h;
	uint32_t n, m;

	n = rp_reply(rpc, sizeof(rpc), s->rx.hdr.xid, res, len);
	ck_assert_uint_gt(n, 0);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, s->rx.hdr.xid, grant);
	if (n + 64 > fake_conn_attr(c)->inline_recv) {
		ck_assert_msg(s->rx.hdr.has_reply, "no Reply chunk offered");
		seg = s->rx.hdr.reply.segs[0];
		ck_assert_uint_le(n, seg.length);
		seg.length = n;
		ck_assert_int_eq(fake_peer_rdma_write(c, &seg, rpc), 0);
		h.proc = RW_NOMSG;
		h.has_reply = true;
		h.reply.nsegs = 1;
		h.reply.segs = &seg;
		n = 0;
	}
	m = rp_msg(msg, sizeof(msg), &h, rpc, n);
	ck_assert_uint_gt(m, 0);
	ck_assert_int_eq(fake_recv(c, msg, m, inv), 0);
}

/* The scripted server: echo every Call's argument. */
static void on_send(struct rt_conn *c, const struct fake_msg *m, void *arg)
{
	static struct seen s;

	srv.calls++;
	if (!srv.answer)
		return;
	ck_assert(seen_parse(c, m, &s));
	if (s.args.proc == 0)
		srv.nulls++;
	if (srv.null_only && s.args.proc != 0) {
		/* the one-way tests number their Calls downwards */
		if (srv.last_xid && s.rx.hdr.xid != srv.last_xid - 1)
			srv.out_of_order = true;
		srv.last_xid = s.rx.hdr.xid;
		return;
	}
	answer(c, &s, srv.grant, s.arg, s.args.len, 0);
}

/* The test as the server: Call i, parsed. */
static struct seen *call_seen(struct rt_conn *c, unsigned int i)
{
	static struct seen s;

	ck_assert_msg(fake_wait_sends(c, i + 1, 5000), "no Call %u", i);
	ck_assert(seen_parse(c, fake_send(c, i), &s));
	return &s;
}

/* Send raw octets (a header, maybe with a payload) to the requester. */
static void send_raw(struct rt_conn *c, const struct rw_hdr *h,
		     const void *payload, uint32_t plen)
{
	uint8_t msg[4096];
	uint32_t n = rp_msg(msg, sizeof(msg), h, payload, plen);

	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(fake_recv(c, msg, n, 0), 0);
}

/* ---- The requester's side ---------------------------------------------- */

static struct rt_conn *clnt_start(uint32_t credits, size_t max_reply)
{
	unsigned int connects = fake_connects();
	struct sockaddr_in dst;
	struct rr_opts o;
	struct rt_err err;

	fake_cfg()->on_send = on_send;
	memset(&o, 0, sizeof(o));
	rt_conn_attr_init(&o.conn);
	o.conn.credits = credits;
	o.conn.timeout_ms = 2000;
	o.max_reply = max_reply;
	o.ddp_reg_min = 64 * 1024;
	o.vers = RR_VERS_1; /* these tests are of version 1 */
	memset(&sized_reply, 0, sizeof(sized_reply));
	sized_reply.prog = RP_PROG;
	sized_reply.vers = RP_VERS;
	sized_reply.proc = 3;
	sized_reply.dir = RPCRDMA_ULB_REPLY;
	sized_reply.reply_max.kind = RPCRDMA_ULB_SIZE_FIXED;
	sized_reply.reply_max.value = (uint32_t)(max_reply / 2);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(20049);
	inet_pton(AF_INET, "192.0.2.9", &dst.sin_addr);
	clnt = rr_clnt_create((struct sockaddr *)&dst, &o, &err);
	ck_assert_msg(clnt != NULL, "rr_clnt_create: %s", err.msg);
	ck_assert_uint_eq(fake_connects(), connects + 1);
	return fake_last_conn();
}

/* One call and its outcome. */
struct one {
	uint32_t xid;
	uint32_t alen;
	int timeout_ms;
	bool send_only;
	bool unsized; /* no REPLY binding: the size is unknown */
	enum rr_status st;
	struct rr_result res;
	uint64_t mark; /* right after rr_call() returned */
	uint32_t live; /* exposures live at that moment */
	int64_t elapsed_ms;
	bool decoded;
	uint8_t arg[16 * 1024];
	uint8_t out[16 * 1024];
	uint32_t outlen;
	pthread_t thread;
};

static void one_init(struct one *o, uint32_t xid, uint32_t alen, int timeout_ms)
{
	memset(o, 0, sizeof(*o));
	o->xid = xid;
	o->alen = alen;
	o->timeout_ms = timeout_ms;
	rp_fill(o->arg, alen, xid);
}

static void one_run(struct one *o)
{
	struct rp_args a = {
		.xid = o->xid, .proc = 3, .data = o->arg, .len = o->alen
	};
	struct rr_req req;
	struct rr_call *call;
	struct rp_args r = { .xid = o->xid,
			     .out = o->out,
			     .cap = sizeof(o->out) };
	struct rt_conn *c;
	int64_t t0 = rr_now_ms();
	XDR *x;

	memset(&req, 0, sizeof(req));
	req.xid = o->xid;
	req.encode = rp_xdr_call;
	req.arg = &a;
	req.size_hint = o->alen + 64;
	req.deadline_ms = t0 + o->timeout_ms;
	req.send_only = o->send_only;
	req.reply_ulb = o->unsized ? NULL : &sized_reply;
	o->st = rr_call(clnt, &req, &call, &o->res);
	o->mark = fake_mark();
	o->elapsed_ms = rr_now_ms() - t0;
	c = fake_last_conn();
	o->live = c ? fake_live_regs(c) : 0;
	if (o->st != RR_OK)
		return;
	x = rr_call_xdr(call);
	o->decoded = rp_xdr_reply_hdr(x, &r) && rw_xdr_begin_body(x) &&
		     rp_xdr_opaque(x, &r) && rr_call_decoded(call);
	o->outlen = r.len;
	rr_call_done(clnt, call);
}

static void *one_thread(void *arg)
{
	one_run(arg);
	return NULL;
}

static void one_start(struct one *o)
{
	ck_assert_int_eq(pthread_create(&o->thread, NULL, one_thread, o), 0);
}

static void one_join(struct one *o)
{
	ck_assert_int_eq(pthread_join(o->thread, NULL), 0);
}

/* The call succeeded and its result is the echo of its argument. */
static void one_echoed(const struct one *o)
{
	ck_assert_msg(o->st == RR_OK, "XID 0x%08x: status %d: %s", o->xid,
		      o->st, o->res.msg);
	ck_assert(o->decoded);
	ck_assert_uint_eq(o->outlen, o->alen);
	ck_assert_mem_eq(o->out, o->arg, o->alen);
}

static struct rr_stats stats(void)
{
	struct rr_stats st;

	rr_clnt_stats(clnt, &st);
	return st;
}

static uint32_t inflight(void)
{
	uint32_t n = 0;

	rr_clnt_credits(clnt, &n);
	return n;
}

/* ---- Calls and credits ------------------------------------------------- */

/* A Short Call: RDMA_MSG v1 carrying exactly the RPC message, asking for
 * the configured credits; one credit until the first Reply (V1-CR-6),
 * then the grant. */
START_TEST(test_clnt_short_call)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	const struct fake_msg *m;
	struct rw_hdr_space sp;
	uint8_t want[512];
	struct rw_hdr h;
	uint32_t n;

	srv.answer = true;
	ck_assert_uint_eq(rr_clnt_credits(clnt, NULL), 1);
	one_init(&o, XID, 100, 2000);
	one_run(&o);
	one_echoed(&o);
	m = fake_send(c, 0);
	rw_hdr_space_init(&sp, NULL);
	ck_assert_int_eq(rw_hdr_decode(m->data, m->len, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.xid, XID);
	ck_assert_uint_eq(h.vers, RW_VERS_1);
	ck_assert_uint_eq(h.credit, REQUESTED);
	ck_assert_uint_eq(h.proc, RW_MSG);
	ck_assert_uint_eq(h.nreads + h.nwrites + h.has_reply, 0);
	n = rp_call(want, sizeof(want), XID, 3, o.arg, o.alen);
	ck_assert_uint_eq(m->len - h.hdr_len, n);
	ck_assert_mem_eq(m->data + h.hdr_len, want, n);
	ck_assert_uint_eq(fake_nregs(c), 0);
	ck_assert_uint_eq(rr_clnt_credits(clnt, NULL), 8);
	ck_assert_uint_eq(inflight(), 0);
	ck_assert_uint_eq(stats().replies, 1);
	/* the Receive of the Reply is posted again once the call is done */
	ck_assert_uint_eq(rt_conn_recvs_posted(c), REQUESTED);
}
END_TEST

/* V1-CR-6: before the first Reply one Call at a time, whatever is asked. */
START_TEST(test_clnt_one_credit_until_first_reply)
{
	static struct one a, b;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	struct seen *s;

	one_init(&a, XID, 10, 5000);
	one_init(&b, XID + 1, 10, 5000);
	one_start(&a);
	one_start(&b);
	ck_assert(fake_wait_sends(c, 1, 2000));
	usleep(200 * 1000);
	ck_assert_uint_eq(fake_nsends(c), 1);
	s = call_seen(c, 0);
	answer(c, s, 4, s->arg, s->args.len, 0);
	s = call_seen(c, 1);
	answer(c, s, 4, s->arg, s->args.len, 0);
	one_join(&a);
	one_join(&b);
	one_echoed(&a);
	one_echoed(&b);
	ck_assert_uint_eq(stats().max_inflight, 1);
	ck_assert_uint_eq(stats().over_grant, 0);
	ck_assert_uint_eq(rr_clnt_credits(clnt, NULL), 4);
}
END_TEST

/* V1-CR-4: never more Calls in flight than the grant: 6 callers, a grant
 * of 2, the server answering the oldest Call only once it has looked. */
START_TEST(test_clnt_never_more_than_grant)
{
	static struct one first, many[6];
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	unsigned int i, answered = 1, sent;
	struct seen *s;

	srv.answer = true;
	srv.grant = 2;
	one_init(&first, XID, 10, 2000);
	one_run(&first);
	one_echoed(&first);
	srv.answer = false;
	for (i = 0; i < 6; i++) {
		one_init(&many[i], XID + 1 + i, 20 + i, 10000);
		one_start(&many[i]);
	}
	while (answered < 7) {
		/* as many in flight as the grant lets the callers left */
		ck_assert(fake_wait_sends(c, answered + (answered < 6 ? 2 : 1),
					  5000));
		usleep(50 * 1000); /* and let any other caller try */
		sent = fake_nsends(c);
		ck_assert_msg(sent - answered <= 2,
			      "%u Calls in flight, grant 2", sent - answered);
		s = call_seen(c, answered);
		answer(c, s, 2, s->arg, s->args.len, 0);
		answered++;
	}
	for (i = 0; i < 6; i++) {
		one_join(&many[i]);
		one_echoed(&many[i]);
	}
	ck_assert_uint_eq(stats().over_grant, 0);
	ck_assert_uint_eq(stats().max_inflight, 2);
}
END_TEST

/* ---- Replies ----------------------------------------------------------- */

/* RFC 8166 §4.5: a Reply for an XID of no call is dropped and counted, its
 * Receive posted again; the right one then completes the call. */
START_TEST(test_clnt_unknown_xid_dropped)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	struct seen *s;
	uint8_t rpc[256];
	struct rw_hdr h;
	uint32_t n;

	one_init(&o, XID, 40, 5000);
	one_start(&o);
	s = call_seen(c, 0);
	n = rp_reply(rpc, sizeof(rpc), XID + 99, "zz", 2);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, XID + 99, 8);
	send_raw(c, &h, rpc, n);
	usleep(100 * 1000);
	ck_assert_uint_eq(stats().unknown_xid, 1);
	answer(c, s, 8, s->arg, s->args.len, 0);
	one_join(&o);
	one_echoed(&o);
	ck_assert_uint_eq(rt_conn_recvs_posted(c), REQUESTED);
}
END_TEST

/* V1-ERR-4: malformed Replies are dropped; the call waits for a good one:
 * a runt, a Read list in a Reply (V1-RC-9), RDMA_NOMSG without a Reply
 * chunk, an RPC XID that is not the header's (V1-HDR-2). */
START_TEST(test_clnt_malformed_reply_dropped)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	struct rw_read_seg rs = { .position = 0,
				  .seg = { 0xa001, 64, 0x1000 } };
	uint8_t rpc[256], runt[12] = { 0x51 };
	struct seen *s;
	struct rw_hdr h;
	uint32_t n;

	one_init(&o, XID, 40, 5000);
	one_start(&o);
	s = call_seen(c, 0);
	ck_assert_int_eq(fake_recv(c, runt, sizeof(runt), 0), 0);
	n = rp_reply(rpc, sizeof(rpc), XID, "ab", 2);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, XID, 8);
	h.nreads = 1;
	h.reads = &rs;
	send_raw(c, &h, rpc, n);
	rw_hdr_init(&h, RW_VERS_1, RW_NOMSG, XID, 8);
	send_raw(c, &h, NULL, 0);
	n = rp_reply(rpc, sizeof(rpc), XID + 1, "ab", 2);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, XID, 8);
	send_raw(c, &h, rpc, n);
	usleep(100 * 1000);
	ck_assert_uint_eq(stats().discarded, 4);
	ck_assert_uint_eq(stats().replies, 0);
	answer(c, s, 8, s->arg, s->args.len, 0);
	one_join(&o);
	one_echoed(&o);
	ck_assert_uint_eq(rt_conn_recvs_posted(c), REQUESTED);
}
END_TEST

/* V1-ERR-9: an RDMA_ERROR ends the call for good, with its range for
 * ERR_VERS; the credit comes back and the next call goes out. */
static void rdma_error_case(uint32_t code, enum rr_status want)
{
	static struct one o, next;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	struct rw_hdr h;

	one_init(&o, XID, 40, 5000);
	one_start(&o);
	call_seen(c, 0);
	rw_hdr_init(&h, RW_VERS_1, RW_ERROR, XID, 8);
	h.err.code = code;
	h.err.low = 1;
	h.err.high = 1;
	send_raw(c, &h, NULL, 0);
	one_join(&o);
	ck_assert_int_eq(o.st, want);
	ck_assert_uint_eq(stats().rdma_errors, 1);
	ck_assert_uint_eq(inflight(), 0);
	srv.answer = true;
	one_init(&next, XID + 1, 8, 2000);
	one_run(&next);
	one_echoed(&next);
}

START_TEST(test_clnt_err_vers_ends_call)
{
	rdma_error_case(RW_ERR_VERS, RR_ERR_VERS);
	ck_assert_uint_eq(stats().err_vers, 1);
}
END_TEST

START_TEST(test_clnt_err_chunk_ends_call)
{
	rdma_error_case(RW_ERR_CHUNK, RR_ERR_CHUNK);
	ck_assert_uint_eq(stats().err_chunk, 1);
	ck_assert_uint_eq(stats().resends, 0);
}
END_TEST

/*
 * A Reply of unknown size is first asked inline (no Reply chunk); a v1
 * ERR_CHUNK, which does not say what the Reply needs, then brings the
 * same XID again with a Reply chunk of RR_REPLY_FIRST, at most max_reply
 * (main's behaviour since v2 resends, rr_call.c ladder_room), and the
 * Long Reply written there completes the call.
 */
START_TEST(test_clnt_unsized_reply_resent)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);
	struct seen *s;
	struct rw_hdr h;

	one_init(&o, XID, 9000, 5000);
	o.unsized = true;
	one_start(&o);
	s = call_seen(c, 0);
	ck_assert(!s->rx.hdr.has_reply);
	rw_hdr_init(&h, RW_VERS_1, RW_ERROR, XID, 8);
	h.err.code = RW_ERR_CHUNK;
	send_raw(c, &h, NULL, 0);
	s = call_seen(c, 1);
	ck_assert_uint_eq(s->rx.hdr.xid, XID);
	ck_assert(s->rx.hdr.has_reply);
	ck_assert_uint_eq(s->rx.hdr.reply.segs[0].length, 64 * 1024);
	answer(c, s, 8, s->arg, s->args.len, 0);
	one_join(&o);
	one_echoed(&o);
	ck_assert_uint_eq(stats().resends, 1);
	ck_assert_uint_eq(stats().err_chunk, 0);
	ck_assert_uint_eq(stats().long_replies, 1);
	ck_assert_uint_eq(fake_live_regs(c), 0);
}
END_TEST

/* ---- Timeouts, orphans ------------------------------------------------- */

/* No Reply: RR_TIMEDOUT at the deadline.  The orphan keeps its credit
 * (V1-CR-4) until its late Reply comes, which is then accepted. */
START_TEST(test_clnt_timeout_then_late_reply)
{
	static struct one o, next;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);
	struct seen *s;

	one_init(&o, XID, 40, 150);
	one_run(&o);
	ck_assert_int_eq(o.st, RR_TIMEDOUT);
	ck_assert_int_eq(o.res.err, ETIMEDOUT);
	ck_assert_int_ge(o.elapsed_ms, 150);
	ck_assert_int_lt(o.elapsed_ms, 1000);
	ck_assert_uint_eq(stats().timeouts, 1);
	ck_assert_uint_eq(stats().orphans, 1);
	ck_assert_uint_eq(inflight(), 1);
	s = call_seen(c, 0);
	answer(c, s, 8, s->arg, s->args.len, 0);
	srv.answer = true;
	one_init(&next, XID + 1, 8, 2000);
	one_run(&next);
	one_echoed(&next);
	ck_assert_uint_eq(stats().late_replies, 1);
	ck_assert_uint_eq(inflight(), 0);
	ck_assert_uint_eq(rt_conn_recvs_posted(c), REQUESTED);
}
END_TEST

/* Deadlines are kept on the coarse clock, which lags the fine one by up to
 * a tick: a deadline T ms away is still not reached before T ms have
 * passed on the fine clock. */
START_TEST(test_clnt_deadline_not_early)
{
	int64_t t0, deadline;
	int i;

	ck_assert_int_gt(rr_tick_ms(), 0);
	for (i = 0; i < 20; i++) {
		t0 = rr_clock_us();
		deadline = rr_deadline_ms(7);
		while (rr_now_ms() < deadline)
			usleep(100);
		ck_assert_int_ge(rr_clock_us() - t0, 7000);
	}
}
END_TEST

/* An orphan's XID stays taken until its Reply or its connection ends. */
START_TEST(test_clnt_orphan_xid_in_use)
{
	static struct one o, again;

	clnt_start(REQUESTED, SMALL_REPLY);
	one_init(&o, XID, 40, 100);
	one_run(&o);
	ck_assert_int_eq(o.st, RR_TIMEDOUT);
	one_init(&again, XID, 40, 100);
	one_run(&again);
	ck_assert_int_eq(again.st, RR_CANTSEND);
	ck_assert_int_eq(again.res.err, EBUSY);
}
END_TEST

/* V1-MR-4/7: the layer's own Reply chunk stays exposed while the server
 * may still write it (the late Reply) and is revoked when it came. */
START_TEST(test_clnt_orphan_reply_chunk_until_late_reply)
{
	static struct one o, next;
	static uint8_t big[6000];
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);
	const struct fake_reg *r;
	struct seen *s;

	one_init(&o, XID, 40, 150);
	one_run(&o);
	ck_assert_int_eq(o.st, RR_TIMEDOUT);
	s = call_seen(c, 0);
	ck_assert(s->rx.hdr.has_reply);
	r = fake_reg_find(c, s->rx.hdr.reply.segs[0].handle);
	ck_assert_ptr_nonnull(r);
	ck_assert(r->live);
	rp_fill(big, sizeof(big), 3);
	answer(c, s, 8, big, sizeof(big), 0); /* a Long Reply, late */
	srv.answer = true;
	one_init(&next, XID + 1, 8, 2000);
	one_run(&next);
	one_echoed(&next);
	ck_assert_uint_eq(stats().late_replies, 1);
	ck_assert(!r->live);
	ck_assert_uint_eq(fake_live_regs(c), 0);
}
END_TEST

/* Calls that timed out holding every credit: the next call does not wait
 * for its own deadline - the connection is closed at once (a recovery,
 * counted) and the call goes on a new connection, where it is answered. */
START_TEST(test_clnt_orphans_hold_all_credits)
{
	static struct one o, next;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);

	one_init(&o, XID, 40, 100);
	one_run(&o);
	ck_assert_int_eq(o.st, RR_TIMEDOUT);
	ck_assert_uint_eq(stats().recoveries, 0);
	srv.answer = true;
	one_init(&next, XID + 1, 8, 5000);
	one_run(&next);
	one_echoed(&next);
	ck_assert_int_lt(next.elapsed_ms, 2500);
	ck_assert_uint_eq(fake_nsends(c), 1);
	ck_assert_uint_eq(fake_disconnects(c), 1);
	ck_assert_uint_eq(fake_connects(), 2);
	ck_assert(fake_destroyed(c));
	ck_assert_uint_eq(stats().recoveries, 1);
}
END_TEST

/* Calls the server never answers, one after the other, each timing out:
 * one recovery per grant's worth of them, never more (no reconnect
 * storm), and an answered call after them all. */
START_TEST(test_clnt_dropped_calls_recover)
{
	static struct one o;
	unsigned int i;

	clnt_start(REQUESTED, SMALL_REPLY);
	srv.answer = true;
	srv.grant = 4;
	one_init(&o, XID, 8, 2000);
	one_run(&o);
	one_echoed(&o);
	srv.null_only = true;
	for (i = 1; i <= 12; i++) {
		one_init(&o, XID + 100 - i, 8, 30);
		one_run(&o);
		ck_assert_int_eq(o.st, RR_TIMEDOUT);
	}
	srv.null_only = false;
	one_init(&o, XID + 1000, 8, 2000);
	one_run(&o);
	one_echoed(&o);
	/* The first connection's 4 credits held by calls 1-4; calls 5-12
	 * each find a connection whose single credit (no Reply has set a
	 * grant) a timed-out call holds, and so does the last call: one
	 * recovery per timed-out call beyond the grant, each after a full
	 * timeout, never two in a row */
	ck_assert_uint_eq(stats().recoveries, 12 - 4 + 1);
	ck_assert_uint_eq(stats().connects, 12 - 4 + 2);
	ck_assert_uint_eq(stats().over_grant, 0);
}
END_TEST

/* One one-way call: with a connection not yet settled, the NULL Call goes
 * first and is waited for; then the call is posted, RR_SENT. */
static enum rr_status oneway_run(uint32_t xid, uint32_t alen,
				 struct rr_result *res)
{
	static uint8_t arg[512];
	struct rp_args a = { .xid = xid, .proc = 3, .data = arg, .len = alen };
	struct rp_args n = { .xid = xid + 0x800000u, .proc = 0 };
	struct rr_req req, null_req;
	struct rr_call *call;
	enum rr_status st;

	rp_fill(arg, alen, xid);
	memset(&null_req, 0, sizeof(null_req));
	null_req.xid = n.xid;
	null_req.encode = rp_xdr_call;
	null_req.arg = &n;
	null_req.size_hint = 64;
	memset(&req, 0, sizeof(req));
	req.xid = xid;
	req.encode = rp_xdr_call;
	req.arg = &a;
	req.size_hint = alen + 64;
	req.send_only = true;
	req.null_req = &null_req;
	st = rr_call(clnt, &req, &call, res);
	ck_assert_ptr_null(call);
	return st;
}

/* Batching (doc/oneway.md): 10 000 one-way Calls to a server that answers
 * only NULL Calls never run out of credits, go out in order, never more
 * in flight than the grant (V1-CR-4); the layer's NULL Calls bring their
 * credits back; an ordinary call after them is answered. */
START_TEST(test_clnt_oneway_batch)
{
	static struct one o;
	struct rr_result res;
	unsigned int i;

	clnt_start(REQUESTED, SMALL_REPLY);
	srv.answer = true;
	srv.null_only = true;
	srv.grant = 8;
	for (i = 0; i < 10000; i++)
		ck_assert_msg(oneway_run(XID - i, 40, &res) == RR_SENT,
			      "one-way call %u: %s", i, res.msg);
	ck_assert(!srv.out_of_order);
	ck_assert_uint_eq(srv.calls - srv.nulls, 10000);
	ck_assert_uint_eq(stats().oneway_calls, 10000);
	ck_assert_uint_gt(stats().null_calls, 0);
	/* one NULL per half grant, and the first that settled the
	 * connection */
	ck_assert_uint_le(stats().null_calls, 10000 / 4 + 2);
	ck_assert_uint_eq(srv.nulls, stats().null_calls + 1);
	ck_assert_uint_eq(stats().over_grant, 0);
	ck_assert_uint_le(stats().max_inflight, 8);
	ck_assert_uint_eq(stats().recoveries, 0);
	ck_assert_uint_eq(stats().connects, 1);
	srv.null_only = false;
	one_init(&o, XID + 1, 8, 2000);
	one_run(&o);
	one_echoed(&o);
	/* that Reply gave back every one-way credit */
	ck_assert_uint_eq(inflight(), 0);
}
END_TEST

struct oneway_thread {
	pthread_t thread;
	uint32_t first;
	unsigned int n, sent;
};

static void *oneway_thread(void *arg)
{
	struct oneway_thread *t = arg;
	struct rr_result res;
	unsigned int i;

	for (i = 0; i < t->n; i++)
		t->sent += oneway_run(t->first - i, 24, &res) == RR_SENT;
	return NULL;
}

/* Several threads batching on one rr_clnt: every call sent, none blocks
 * for good, never more in flight than the grant. */
START_TEST(test_clnt_oneway_threads)
{
	static struct oneway_thread t[4];
	static struct one o;
	unsigned int i;

	clnt_start(REQUESTED, SMALL_REPLY);
	srv.answer = true;
	srv.grant = 4;
	one_init(&o, XID + 1, 8, 2000);
	one_run(&o);
	one_echoed(&o);
	srv.null_only = true;
	for (i = 0; i < 4; i++) {
		t[i].first = XID - 0x10000u * (i + 1);
		t[i].n = 2500;
		ck_assert_int_eq(pthread_create(&t[i].thread, NULL,
						oneway_thread, &t[i]),
				 0);
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(t[i].thread, NULL), 0);
		ck_assert_uint_eq(t[i].sent, 2500);
	}
	ck_assert_uint_eq(stats().oneway_calls, 10000);
	ck_assert_uint_eq(stats().over_grant, 0);
	ck_assert_uint_eq(stats().recoveries, 0);
	srv.null_only = false;
	one_init(&o, XID + 2, 8, 2000);
	one_run(&o);
	one_echoed(&o);
	ck_assert_uint_eq(inflight(), 0);
}
END_TEST

/* A send-only call returns once posted and is finished by the layer. */
START_TEST(test_clnt_send_only)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY);

	one_init(&o, XID, 40, 1000);
	o.send_only = true;
	one_run(&o);
	ck_assert_int_eq(o.st, RR_SENT);
	ck_assert_uint_eq(fake_nsends(c), 1);
	ck_assert_uint_eq(stats().orphans, 1);
}
END_TEST

/* ---- Connection loss --------------------------------------------------- */

/* RFC 8166 §4.5.3-4.5.5: a lost connection fails the waiting call with
 * RR_CANTRECV; the next call connects again and starts over at one credit
 * (V1-CR-6). */
START_TEST(test_clnt_conn_loss_reconnect)
{
	static struct one o, next;
	struct rt_conn *c = clnt_start(REQUESTED, SMALL_REPLY), *c2;
	struct seen *s;
	uint32_t inflight;
	unsigned int i;

	srv.answer = true;
	one_init(&next, XID + 10, 8, 2000);
	one_run(&next);
	one_echoed(&next);
	ck_assert_uint_eq(rr_clnt_credits(clnt, NULL), 8);
	srv.answer = false;
	one_init(&o, XID, 40, 5000);
	one_start(&o);
	call_seen(c, 1);
	fake_kill(c, ECONNRESET, "the server went away");
	one_join(&o);
	ck_assert_int_eq(o.st, RR_CANTRECV);
	ck_assert_int_eq(o.res.err, ECONNRESET);
	ck_assert_int_lt(o.elapsed_ms, 2000);
	ck_assert_uint_eq(stats().conn_losses, 1);

	one_init(&o, XID + 1, 40, 5000);
	one_start(&o);
	for (i = 0; i < 2000 && fake_last_conn() == c; i++)
		usleep(1000);
	c2 = fake_last_conn();
	ck_assert_ptr_ne(c2, c);
	ck_assert_uint_eq(fake_connects(), 2);
	/* The new connection exists before the client adopts it: its grant
	 * is read once the Call went out on it (waited for, 5 s at most), so
	 * the client's connection is c2 and nothing has answered yet - the
	 * one credit of a fresh connection, held by that Call. */
	s = call_seen(c2, 0);
	ck_assert_uint_eq(rr_clnt_credits(clnt, &inflight), 1);
	ck_assert_uint_eq(inflight, 1);
	answer(c2, s, 8, s->arg, s->args.len, 0);
	one_join(&o);
	one_echoed(&o);
	ck_assert(fake_destroyed(c));
}
END_TEST

START_TEST(test_clnt_connect_refused)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(20049) };
	static struct one o;
	struct rr_opts opts;
	struct rt_err err;

	memset(&opts, 0, sizeof(opts));
	rt_conn_attr_init(&opts.conn);
	fake_cfg()->connect_err = ECONNREFUSED;
	ck_assert_ptr_null(
		rr_clnt_create((struct sockaddr *)&dst, &opts, &err));
	ck_assert_int_eq(err.code, ECONNREFUSED);
	ck_assert_uint_eq(fake_connects(), 1);

	/* refused again on the reconnect after a loss */
	fake_cfg()->connect_err = 0;
	clnt_start(REQUESTED, SMALL_REPLY);
	fake_kill(fake_last_conn(), ECONNRESET, "gone");
	fake_cfg()->connect_err = ECONNREFUSED;
	one_init(&o, XID, 8, 1000);
	one_run(&o);
	ck_assert_int_eq(o.st, RR_CANTSEND);
	ck_assert_int_eq(o.res.err, ECONNREFUSED);
}
END_TEST

/* The registration mode: a device without windows refuses MW; a live MW
 * connection that advertised Send With Invalidate cannot become MR, so
 * the next call replaces it by one in MR mode. */
START_TEST(test_clnt_reg_mode_change)
{
	static struct one o;
	struct rt_conn *c;
	struct rt_err err;

	srv.answer = true;
	c = clnt_start(REQUESTED, SMALL_REPLY);
	ck_assert_int_eq(rr_clnt_reg_mode(clnt), RT_REG_MW);
	ck_assert_int_eq(rr_clnt_set_reg_mode(clnt, RT_REG_MR, &err), 0);
	ck_assert_int_eq(rt_reg_mode(c), RT_REG_MW);
	one_init(&o, XID, 8, 2000);
	one_run(&o);
	one_echoed(&o);
	ck_assert_uint_eq(fake_connects(), 2);
	ck_assert(fake_destroyed(c));
	ck_assert_int_eq(rt_reg_mode(fake_last_conn()), RT_REG_MR);
	ck_assert_int_eq(rr_clnt_reg_mode(clnt), RT_REG_MR);

	rr_clnt_destroy(clnt);
	clnt = NULL;
	fake_cfg()->no_windows = true;
	clnt_start(REQUESTED, SMALL_REPLY);
	ck_assert_int_eq(rr_clnt_reg_mode(clnt), RT_REG_MR);
	ck_assert_int_eq(rr_clnt_set_reg_mode(clnt, RT_REG_MW, &err), -ENOTSUP);
}
END_TEST

/* ---- Fencing ----------------------------------------------------------- */

/* Every exposure of c was revoked before the moment mark. */
static void fenced_before(const struct rt_conn *c, uint64_t mark)
{
	unsigned int i;

	for (i = 0; i < fake_nregs(c); i++) {
		const struct fake_reg *r = fake_reg(c, i);

		ck_assert_msg(
			!r->live && r->seq_revoke < mark,
			"exposure %u (handle 0x%x) not fenced before the call returned",
			i, r->handle);
	}
}

/* V1-RP-4, V1-MR-2/6: a Long Call's message goes in a PZRC exposed for
 * remote read only, and is revoked before rr_call() returns. */
START_TEST(test_clnt_long_call_fenced)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);
	const struct fake_reg *r;
	struct rw_hdr_space sp;
	const struct fake_msg *m;
	static uint8_t want[16 * 1024], got[16 * 1024];
	struct rw_hdr h;
	uint32_t n;

	srv.answer = true;
	one_init(&o, XID, 10000, 2000);
	one_run(&o);
	one_echoed(&o);
	m = fake_send(c, 0);
	rw_hdr_space_init(&sp, NULL);
	ck_assert_int_eq(rw_hdr_decode(m->data, m->len, &h, &sp), RW_R_OK);
	ck_assert_uint_eq(h.proc, RW_NOMSG);
	ck_assert_uint_eq(h.nreads, 1);
	ck_assert_uint_eq(h.reads[0].position, 0);
	ck_assert(h.has_reply);
	ck_assert_uint_eq(fake_nregs(c), 2); /* the PZRC, the Reply chunk */
	r = fake_reg_find(c, h.reads[0].seg.handle);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->acc, RT_REMOTE_READ);
	r = fake_reg_find(c, h.reply.segs[0].handle);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->acc, RT_REMOTE_WRITE);
	n = rp_call(want, sizeof(want), XID, 3, o.arg, o.alen);
	ck_assert_uint_eq(h.reads[0].seg.length, n);
	fenced_before(c, o.mark);
	ck_assert_uint_eq(o.live, 0);
	ck_assert_int_eq(fake_peer_rdma_read(c, &h.reads[0].seg, got), -EACCES);
	ck_assert_uint_eq(stats().long_calls, 1);
}
END_TEST

/* V1-RP-1/2: a Reply chunk exposed for remote write only, the Long Reply
 * decoded from it, the chunk revoked before rr_call() returns. */
START_TEST(test_clnt_long_reply_fenced)
{
	static struct one o;
	static uint8_t big[9000];
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);
	struct rw_segment seg;
	const struct fake_reg *r;
	struct seen *s;

	one_init(&o, XID, 9000, 5000);
	one_start(&o);
	s = call_seen(c, 0);
	ck_assert(s->rx.hdr.has_reply);
	seg = s->rx.hdr.reply.segs[0];
	r = fake_reg_find(c, seg.handle);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->acc, RT_REMOTE_WRITE);
	ck_assert_uint_ge(seg.length, rp_reply_len(9000));
	answer(c, s, 8, s->arg, s->args.len, 0);
	one_join(&o);
	one_echoed(&o);
	fenced_before(c, o.mark);
	ck_assert_uint_eq(o.live, 0);
	ck_assert_int_eq(fake_peer_rdma_write(c, &seg, big), -EACCES);
	ck_assert_uint_eq(stats().long_replies, 1);
}
END_TEST

/* V1-HDR-2: a Reply chunk that does not hold the reply to this XID is
 * refused once fenced: RR_CANTDECODE. */
START_TEST(test_clnt_long_reply_wrong_xid)
{
	static struct one o;
	static uint8_t rpc[8192], res[6000];
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);
	struct rw_segment seg;
	struct seen *s;
	struct rw_hdr h;
	uint32_t n;

	one_init(&o, XID, 40, 5000);
	one_start(&o);
	s = call_seen(c, 0);
	rp_fill(res, sizeof(res), 6);
	n = rp_reply(rpc, sizeof(rpc), XID + 5, res, sizeof(res));
	seg = s->rx.hdr.reply.segs[0];
	seg.length = n;
	ck_assert_int_eq(fake_peer_rdma_write(c, &seg, rpc), 0);
	rw_hdr_init(&h, RW_VERS_1, RW_NOMSG, XID, 8);
	h.has_reply = true;
	h.reply.nsegs = 1;
	h.reply.segs = &seg;
	send_raw(c, &h, NULL, 0);
	one_join(&o);
	ck_assert_int_eq(o.st, RR_CANTDECODE);
	fenced_before(c, o.mark);
}
END_TEST

/* Send With Invalidate of the handle the Call nominated fences it in the
 * "device"; a handle it did not nominate is counted as foreign. */
START_TEST(test_clnt_remote_invalidation)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);
	const struct fake_reg *r;
	struct seen *s;

	one_init(&o, XID, 40, 5000);
	one_start(&o);
	s = call_seen(c, 0);
	r = fake_reg_find(c, s->rx.hdr.reply.segs[0].handle);
	ck_assert_ptr_nonnull(r);
	answer(c, s, 8, s->arg, s->args.len, r->handle);
	one_join(&o);
	one_echoed(&o);
	ck_assert(r->remote_inv);
	ck_assert_uint_eq(stats().foreign_inv, 0);

	one_init(&o, XID + 1, 40, 5000);
	one_start(&o);
	s = call_seen(c, 1);
	answer(c, s, 8, s->arg, s->args.len, 0x7777);
	one_join(&o);
	one_echoed(&o);
	ck_assert_uint_eq(stats().foreign_inv, 1);
	fenced_before(c, o.mark);
}
END_TEST

/* Destroying the client with an orphan outstanding fences and frees it. */
START_TEST(test_clnt_destroy_with_orphan)
{
	static struct one o;
	struct rt_conn *c = clnt_start(REQUESTED, 64 * 1024);

	one_init(&o, XID, 10000, 100);
	one_run(&o);
	ck_assert_int_eq(o.st, RR_TIMEDOUT);
	ck_assert_uint_gt(fake_live_regs(c), 0);
	rr_clnt_destroy(clnt);
	clnt = NULL;
	ck_assert_uint_eq(fake_live_regs(c), 0);
	ck_assert(fake_destroyed(c));
}
END_TEST

Suite *rpc_clnt_suite(void)
{
	Suite *s = suite_create("rpc_clnt");
	TCase *tc = tcase_create("credits");
	TCase *tr = tcase_create("replies");
	TCase *tf = tcase_create("fencing");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tc, test_clnt_short_call);
	tcase_add_test(tc, test_clnt_deadline_not_early);
	tcase_add_test(tc, test_clnt_one_credit_until_first_reply);
	tcase_add_test(tc, test_clnt_never_more_than_grant);
	tcase_add_test(tc, test_clnt_orphans_hold_all_credits);
	tcase_add_test(tc, test_clnt_dropped_calls_recover);
	tcase_add_test(tc, test_clnt_oneway_batch);
	tcase_add_test(tc, test_clnt_oneway_threads);
	tcase_add_test(tc, test_clnt_conn_loss_reconnect);
	tcase_add_test(tc, test_clnt_connect_refused);
	tcase_add_test(tc, test_clnt_reg_mode_change);
	tcase_add_test(tr, test_clnt_unknown_xid_dropped);
	tcase_add_test(tr, test_clnt_malformed_reply_dropped);
	tcase_add_test(tr, test_clnt_err_vers_ends_call);
	tcase_add_test(tr, test_clnt_err_chunk_ends_call);
	tcase_add_test(tr, test_clnt_unsized_reply_resent);
	tcase_add_test(tr, test_clnt_timeout_then_late_reply);
	tcase_add_test(tr, test_clnt_orphan_xid_in_use);
	tcase_add_test(tr, test_clnt_send_only);
	tcase_add_test(tf, test_clnt_long_call_fenced);
	tcase_add_test(tf, test_clnt_long_reply_fenced);
	tcase_add_test(tf, test_clnt_long_reply_wrong_xid);
	tcase_add_test(tf, test_clnt_remote_invalidation);
	tcase_add_test(tf, test_clnt_orphan_reply_chunk_until_late_reply);
	tcase_add_test(tf, test_clnt_destroy_with_orphan);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tr);
	suite_add_tcase(s, tf);
	return s;
}
