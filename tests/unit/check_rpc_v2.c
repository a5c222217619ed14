/*
 * check_rpc_v2.c - Version Two behaviour of src/rpc on the host, row by row
 * of doc/requirements.md, over the fake transport
 * (fake_rt.h).
 *
 * Responder (rr_srv): the test is the client and sends v2 Calls, property
 * messages, OPTIONAL messages and malformed headers; it checks what the
 * server hands up and the octets of every Send it posts (with the handle of
 * a Send With Invalidate).  Requester (rr_clnt): the test is the server
 * and checks the v2 Calls, the invalidation handle they name, the CONNPROP
 * and how many messages are outstanding before the first Reply.
 *
 * Each test names the rows it checks; the assertion messages name the row
 * where the failure alone would not say which rule broke.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "check_util.h"
#include "fake_rt.h"
#include "hdr_vectors.h"
#include "rpc_peer.h"
#include "rpc/rr_call.h"
#include "rpc/rr_serve.h"
#include "wire/rw_props.h"
#include "wire/rw_role.h"

#define CREDITS 16u
#define XID	0x12345678u /* the header vectors' XID */
#define H_WRITE 0xa010u
#define O_WRITE 0x7f3a123a0000ull
#define WAIT_MS 5000

static struct rt_conn *conn;
static struct rr_srv *srv;
static struct rr_srv_opts opts; /* for the next srv_start() */
static struct rr_clnt *clnt;
static uint8_t msg[64 * 1024];
static uint8_t rpc[64 * 1024];

static void setup(void)
{
	fake_reset();
	conn = NULL;
	srv = NULL;
	clnt = NULL;
	memset(&opts, 0, sizeof(opts));
}

static void teardown(void)
{
	rr_srv_destroy(srv);
	rr_clnt_destroy(clnt);
	srv = NULL;
	clnt = NULL;
	ck_assert_msg(fake_misuses() == 0, "transport misused: %s",
		      fake_misuse_msg());
	fake_reset();
}

/* ---- The responder and the test as its client -------------------------- */

/* A responder (versions 1 and 2, the default) over a fresh connection whose
 * Send and Receive buffers are inline_send and inline_recv octets (0: the
 * default, 4096). */
static void srv_start(uint32_t inline_send, uint32_t inline_recv)
{
	struct rt_conn_attr a;
	struct rt_err err;

	opts.max_read_bytes = 1 << 20;
	rt_conn_attr_init(&a);
	a.credits = CREDITS;
	if (inline_send)
		a.inline_send = inline_send;
	if (inline_recv)
		a.inline_recv = inline_recv;
	conn = fake_conn_new(&a);
	srv = rr_srv_create(conn, &opts, &err);
	ck_assert_msg(srv != NULL, "rr_srv_create: %s", err.msg);
}

static void peer_recv(const void *m, uint32_t len)
{
	ck_assert_int_eq(fake_recv(conn, m, len, 0), 0);
}

/* The octets of header vector name (doc/requirements.md §6), as the client
 * sends them. */
static void peer_vec(const char *name)
{
	uint8_t v[256];
	size_t n = hdr_vec(name, v, sizeof(v));

	peer_recv(v, (uint32_t)n);
}

/* The same from hex words of the test's own. */
static void peer_hex(const char *hex)
{
	uint8_t v[256];
	size_t n = hdr_hex(hex, v, sizeof(v));

	ck_assert_uint_gt(n, 0);
	peer_recv(v, (uint32_t)n);
}

/* What svc_run does: progress while the fd says there is more.  The
 * number of ready requests. */
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

static struct rr_srv_stats stats(void)
{
	struct rr_srv_stats st;

	rr_srv_stats(srv, &st);
	return st;
}

/* A Call in h's version of xid carrying arg[0..alen) inline, with the chunk
 * lists and invalidation handle already in h. */
static void call_in(struct rw_hdr *h, uint32_t xid, const void *arg,
		    uint32_t alen)
{
	uint32_t n = rp_call(rpc, sizeof(rpc), xid, 3, arg, alen);

	ck_assert_uint_gt(n, 0);
	h->xid = xid;
	h->direction = RW_DIR_CALL;
	n = rp_msg(msg, sizeof(msg), h, rpc, n);
	ck_assert_uint_gt(n, 0);
	peer_recv(msg, n);
}

/* A v2 Call offering one Write chunk of wlen octets in the peer's wmem
 * (none if wlen is 0) and naming inv as the handle to invalidate. */
static void call_v2(uint32_t xid, uint8_t *wmem, uint32_t wlen, uint32_t inv)
{
	static struct rw_segment wseg;
	static struct rw_chunk wc;
	uint8_t arg[16] = { 3 };
	struct rw_hdr h;

	rw_hdr_init(&h, RW_VERS_2, RW_MSG, xid, CREDITS);
	if (wlen) {
		wseg.handle = H_WRITE;
		wseg.length = wlen;
		wseg.offset = O_WRITE;
		wc.nsegs = 1;
		wc.segs = &wseg;
		h.nwrites = 1;
		h.writes = &wc;
		fake_peer_mem(conn, H_WRITE, O_WRITE, wmem, wlen);
	}
	h.inv_handle = inv;
	call_in(&h, xid, arg, sizeof(arg));
}

static struct rr_sreq *next_req(void)
{
	struct rr_sreq *r;

	ck_assert_int_ge(pump(), 1);
	r = rr_srv_next(srv);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* Decode r's Call (no Read chunk designated); the argument lands in out. */
static uint32_t decode_args(struct rr_sreq *r, uint8_t *out, uint32_t cap)
{
	struct rp_args a = { .out = out, .cap = cap };
	XDR *x = rr_sreq_xdr(r);

	ck_assert(rp_xdr_call_hdr(x, &a));
	ck_assert_uint_eq(a.xid, rr_sreq_xid(r));
	ck_assert(rw_xdr_begin_body(x));
	ck_assert(rp_xdr_opaque(x, &a));
	ck_assert_int_eq(rr_sreq_args_done(r), 0);
	return a.len;
}

/* Answer r with res[0..len); mask: result items for Write chunks. */
static int reply(struct rr_sreq *r, const void *res, uint32_t len,
		 uint64_t mask)
{
	struct rp_args a = { .xid = rr_sreq_xid(r), .data = res, .len = len };
	struct rr_sreq_enc e = { .encode = rp_xdr_reply, .arg = &a };

	if (mask) {
		e.ddp.mode = RW_DDP_ITEMS;
		e.ddp.mask = mask;
	}
	return rr_sreq_reply(srv, r, &e);
}

/* Serve the next Call: answer it with rlen octets; rr_sreq_reply's
 * return. */
static int serve(uint32_t rlen, uint64_t mask)
{
	static uint8_t out[8192], res[16384];
	struct rr_sreq *r = next_req();
	int ret;

	decode_args(r, out, sizeof(out));
	ck_assert_uint_le(rlen, sizeof(res));
	rp_fill(res, rlen, rlen);
	ret = reply(r, res, rlen, mask);
	rr_sreq_done(srv, r);
	return ret;
}

/* The server's Send i as the client receives it: decoded in v2's limits. */
static const struct fake_msg *sent(unsigned int i, struct rw_hdr *h,
				   struct rw_hdr_space *sp)
{
	const struct fake_msg *m = fake_send(conn, i);

	ck_assert_msg(m != NULL, "no Send %u", i);
	rw_hdr_space_init(sp, &rw_v2_limits);
	ck_assert_int_eq(rw_hdr_decode(m->data, m->len, h, sp), RW_R_OK);
	return m;
}

/* The last Send is exactly the hex words want. */
static void last_sent_is(const char *want, const char *row)
{
	const struct fake_msg *m;
	uint8_t v[256];
	size_t n = hdr_hex(want, v, sizeof(v));

	ck_assert_uint_gt(fake_nsends(conn), 0);
	m = fake_send(conn, fake_nsends(conn) - 1);
	ck_assert_msg(m->len == n && !memcmp(m->data, v, n),
		      "%s: the Send (%u octets) is not %s", row, m->len, want);
}

/* How many Sends the server posted of proc (and, for OPTIONAL, of opttype
 * type; any type: type 0). */
static unsigned int sent_procs(uint32_t proc, uint32_t type)
{
	struct rw_hdr_space sp;
	struct rw_hdr h;
	unsigned int i, n = 0;

	for (i = 0; i < fake_nsends(conn); i++) {
		sent(i, &h, &sp);
		n += h.proc == proc &&
		     (proc != RW2_OPTIONAL || !type || h.opt.type == type);
	}
	return n;
}

static struct rw_props peer_props(void)
{
	struct rw_props p;

	rr_srv_peer_props(srv, &p);
	return p;
}

/* ---- Inline size, payload, version ------------------------------------ */

/*
 * V2-INL-1: a v2 Call of 4096 octets in all (header, RPC message with a
 * 4016-octet argument) is taken inline and served.  V2-PAY-1: the reply,
 * an RDMA2_MSG, carries exactly the RPC reply right after its header.
 * V2-NEG-7: it is in version 2, the Call's; V2-DIR-2 its direction REPLY;
 * V2-RI-3: the Call named no handle, so a plain Send.
 */
START_TEST(test_v2_inline_4096_served)
{
	static uint8_t arg[4016], out[8192], want[8192];
	const struct fake_msg *m;
	struct rw_hdr_space sp;
	struct rr_sreq *r;
	struct rw_hdr h;
	uint32_t n;

	srv_start(0, 0);
	rp_fill(arg, sizeof(arg), 1);
	rw_hdr_init(&h, RW_VERS_2, RW_MSG, XID, CREDITS);
	n = rp_call(rpc, sizeof(rpc), XID, 3, arg, sizeof(arg));
	n = rp_msg(msg, sizeof(msg), &h, rpc, n);
	ck_assert_uint_eq(n, 4096);
	ck_assert_msg(fake_recv(conn, msg, n, 0) == 0,
		      "V2-INL-1: a 4096-octet v2 Call does not fit a Receive");
	r = next_req();
	ck_assert_uint_eq(decode_args(r, out, sizeof(out)), sizeof(arg));
	ck_assert_mem_eq(out, arg, sizeof(arg));
	ck_assert_uint_eq(rr_srv_version(srv), RW_VERS_2);
	ck_assert_int_eq(reply(r, arg, sizeof(arg), 0), 0);
	rr_sreq_done(srv, r);

	m = sent(0, &h, &sp);
	ck_assert_msg(h.vers == RW_VERS_2, "V2-NEG-7: answered in v%u", h.vers);
	ck_assert_uint_eq(h.proc, RW_MSG);
	ck_assert_uint_eq(h.xid, XID);
	ck_assert_uint_eq(h.direction, RW_DIR_REPLY);
	ck_assert_uint_eq(h.inv_handle, 0);
	ck_assert_uint_eq(h.nreads + h.nwrites + h.has_reply, 0);
	n = rp_reply(want, sizeof(want), XID, arg, sizeof(arg));
	ck_assert_msg(m->len - h.hdr_len == n &&
			      !memcmp(m->data + h.hdr_len, want, n),
		      "V2-PAY-1: the RPC reply does not follow the header");
	ck_assert_msg(m->inv_rkey == 0,
		      "V2-RI-3: Send With Invalidate of "
		      "0x%x for a Call that named none",
		      m->inv_rkey);
	ck_assert_uint_eq(stats().v2_requests, 1);
	ck_assert_uint_eq(stats().replies_inline, 1);
}
END_TEST

/* V2-NEG-7: the same responder answers a v1 client in v1 (and takes no
 * v2 limit for it: its Receives are its RFC 8797 size). */
START_TEST(test_v2_answers_v1_in_v1)
{
	struct rw_hdr_space sp;
	uint8_t arg[100] = { 7 };
	struct rw_hdr h;

	srv_start(0, 0);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, XID, CREDITS);
	call_in(&h, XID, arg, sizeof(arg));
	ck_assert_int_eq(serve(200, 0), 0);
	sent(0, &h, &sp);
	ck_assert_msg(h.vers == RW_VERS_1, "V2-NEG-7: answered in v%u", h.vers);
	ck_assert_uint_eq(h.proc, RW_MSG);
	ck_assert_uint_eq(rr_srv_version(srv), RW_VERS_1);
	ck_assert_uint_eq(stats().v2_requests, 0);
}
END_TEST

/* ---- Remote invalidation ---------------------------------------------- */

/*
 * V2-RI-3/4: a Call offering a Write chunk and naming handle 0 gets a
 * plain Send; naming the chunk's handle, Send With Invalidate of exactly
 * that handle.  The reply header's own rdma_inv_handle is 0 (AMB-V2-13).
 */
START_TEST(test_v2_invalidates_the_named_handle)
{
	static uint8_t wmem[4096];
	const struct fake_msg *m;
	struct rw_hdr_space sp;
	struct rw_hdr h;

	srv_start(0, 0);
	call_v2(XID, wmem, sizeof(wmem), 0);
	ck_assert_int_eq(serve(100, 0), 0);
	m = sent(0, &h, &sp);
	ck_assert_msg(m->inv_rkey == 0, "V2-RI-3: invalidated 0x%x",
		      m->inv_rkey);
	call_v2(XID + 1, wmem, sizeof(wmem), H_WRITE);
	ck_assert_int_eq(serve(100, 0), 0);
	m = sent(1, &h, &sp);
	ck_assert_uint_eq(h.xid, XID + 1);
	ck_assert_uint_eq(h.inv_handle, 0);
	ck_assert_msg(m->inv_rkey == H_WRITE,
		      "V2-RI-4: invalidated 0x%x, the Call named 0x%x",
		      m->inv_rkey, H_WRITE);
	ck_assert_uint_eq(stats().replies_inv, 1);
}
END_TEST

/* V2-RI-5: a device that cannot Send With Invalidate never does, whatever
 * the Call names; nor a responder told not to (no_remote_inv). */
START_TEST(test_v2_no_invalidation_without_support)
{
	static uint8_t wmem[4096];
	const struct fake_msg *m;
	struct rw_hdr_space sp;
	struct rw_hdr h;
	int i;

	for (i = 0; i < 2; i++) {
		fake_reset();
		memset(&opts, 0, sizeof(opts));
		fake_cfg()->no_send_inv = i == 0;
		opts.no_remote_inv = i == 1;
		srv_start(0, 0);
		call_v2(XID, wmem, sizeof(wmem), H_WRITE);
		ck_assert_int_eq(serve(100, 0), 0);
		m = sent(0, &h, &sp);
		ck_assert_uint_eq(h.proc, RW_MSG);
		ck_assert_msg(m->inv_rkey == 0,
			      "V2-RI-5: invalidated 0x%x (case %d)",
			      m->inv_rkey, i);
		ck_assert_uint_eq(stats().replies_inv, 0);
		rr_srv_destroy(srv);
		srv = NULL;
	}
}
END_TEST

/* ---- Errors ------------------------------------------------------------ */

/*
 * V2-OPT-1, V2-ERR-15: an OPTIONAL message of a type we do not know gets
 * RDMA2_ERR_INVAL_OPTION with its XID: exactly V2-TV6 (grant 0x10).
 * V2-PAY-2: the error is those 20 octets, no RPC message after them.
 * Nothing is handed up.
 */
START_TEST(test_v2_unknown_option)
{
	srv_start(0, 0);
	/* optdir CALL, opttype 0x77, 4 octets of optinfo */
	peer_hex("12345678 00000002 00000010 00000005 00000000 00000077 "
		 "00000004 deadbeef");
	ck_assert_int_eq(pump(), 0);
	ck_assert_ptr_null(rr_srv_next(srv));
	ck_assert_uint_eq(fake_nsends(conn), 1);
	last_sent_is("12345678 00000002 00000010 00000004 00000009",
		     "V2-OPT-1/V2-ERR-15/V2-PAY-2");
	ck_assert_uint_eq(stats().requests, 0);
}
END_TEST

/* V2-ERR-4: a v2 header with a procedure v2 does not define gets
 * RDMA2_ERR_INVAL_PROC with its XID (and no RPC message, V2-PAY-2). */
START_TEST(test_v2_unknown_proc)
{
	static const char *const procs[] = { "0000000a", "00000100",
					     "ffffffff" };
	char hex[128];
	unsigned int i;

	srv_start(0, 0);
	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		snprintf(hex, sizeof(hex),
			 "%08x 00000002 00000010 %s "
			 "00000000 00000000 00000000 00000000 00000000",
			 XID + i, procs[i]);
		peer_hex(hex);
		ck_assert_int_eq(pump(), 0);
		ck_assert_uint_eq(fake_nsends(conn), i + 1);
		snprintf(hex, sizeof(hex),
			 "%08x 00000002 00000010 00000004 00000003", XID + i);
		last_sent_is(hex, "V2-ERR-4");
	}
	ck_assert_ptr_null(rr_srv_next(srv));
	ck_assert_uint_eq(stats().requests, 0);
}
END_TEST

/*
 * V2-ERR-5/6: a v2 Call header that does not parse gets RDMA2_ERR_BAD_XDR
 * with its XID, and nothing more is done with it: the upper layer never
 * sees it, nothing is read or written.  Then a good Call is served, so the
 * errors did not just stop the connection.
 */
START_TEST(test_v2_bad_xdr_not_executed)
{
	static const char *const bad[] = {
		/* rdma_direction 7 */
		"00000007 00000000 00000000 00000000 00000000",
		/* Read list discriminator 2 */
		"00000000 00000000 00000002 00000000 00000000",
		/* Reply chunk discriminator 2 */
		"00000000 00000000 00000000 00000000 00000002",
		/* a Write chunk of 5 segments (80 octets), 52 there */
		"00000000 00000000 00000000 00000001 00000005",
	};
	uint8_t arg[8] = { 1 };
	char hex[256];
	struct rw_hdr h;
	unsigned int i;
	uint32_t n;

	srv_start(0, 0);
	n = rp_call(rpc, sizeof(rpc), XID, 3, arg, sizeof(arg));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t hl;

		snprintf(hex, sizeof(hex), "%08x 00000002 00000010 00000000 %s",
			 XID, bad[i]);
		hl = hdr_hex(hex, msg, sizeof(msg));
		ck_assert_uint_eq(hl, 36);
		memcpy(msg + hl, rpc, n); /* an RPC Call follows */
		peer_recv(msg, (uint32_t)hl + n);
		ck_assert_int_eq(pump(), 0);
		ck_assert_msg(rr_srv_next(srv) == NULL,
			      "V2-ERR-6: bad header %u handed up", i);
		ck_assert_uint_eq(fake_nsends(conn), i + 1);
		snprintf(hex, sizeof(hex),
			 "%08x 00000002 00000010 00000004 00000002", XID);
		last_sent_is(hex, "V2-ERR-5");
	}
	ck_assert_uint_eq(stats().requests, 0);
	ck_assert_uint_eq(fake_nreads(conn) + fake_nwrites(conn), 0);

	rw_hdr_init(&h, RW_VERS_2, RW_MSG, XID + 1, CREDITS);
	call_in(&h, XID + 1, arg, sizeof(arg));
	ck_assert_int_eq(serve(8, 0), 0);
	ck_assert_uint_eq(stats().requests, 1);
}
END_TEST

/*
 * V2-ERR-12: a result item larger than its Write chunk gets
 * RDMA2_ERR_WRITE_RESOURCE naming the chunk 1-based (1 for the first) and
 * the octets it needs; nothing is written, no RPC message follows
 * (V2-PAY-2).
 */
START_TEST(test_v2_write_resource)
{
	static uint8_t wmem[8192];
	char hex[128];

	srv_start(0, 0);
	call_v2(XID, wmem, sizeof(wmem), 0);
	ck_assert_int_eq(serve(9000, RW_DDP_ITEM(0)), -EMSGSIZE);
	ck_assert_uint_eq(fake_nwrites(conn), 0);
	snprintf(hex, sizeof(hex),
		 "%08x 00000002 00000010 00000004 00000007 "
		 "00000001 %08x",
		 XID, 9000u);
	last_sent_is(hex, "V2-ERR-12");
	ck_assert_uint_eq(stats().err_resource, 1);
}
END_TEST

/* V2-ERR-14: a reply that fits neither inline nor a Reply chunk (none
 * offered) gets RDMA2_ERR_REPLY_RESOURCE with the octets the whole RPC
 * reply needs, for the resend's Reply chunk. */
START_TEST(test_v2_reply_resource)
{
	char hex[128];

	srv_start(0, 0);
	call_v2(XID, NULL, 0, 0);
	ck_assert_int_eq(serve(10000, 0), -EMSGSIZE);
	ck_assert_uint_eq(fake_nwrites(conn), 0);
	snprintf(hex, sizeof(hex),
		 "%08x 00000002 00000010 00000004 00000008 "
		 "%08x",
		 XID, rp_reply_len(10000));
	last_sent_is(hex, "V2-ERR-14");
	ck_assert_uint_eq(stats().err_resource, 1);
}
END_TEST

/* ---- Properties ---------------------------------------------------------- */

/* The RESPROP of the last Send: its done and rejected positions, and how
 * many properties it reports in rdma_other. */
static void last_resprop(uint32_t xid, uint32_t *done, uint32_t *rej,
			 uint32_t *other)
{
	struct rw_hdr_space sp;
	struct rw_hdr h;

	sent(fake_nsends(conn) - 1, &h, &sp);
	ck_assert_uint_eq(h.proc, RW2_RESPROP);
	ck_assert_uint_eq(h.xid, xid);
	*done = h.subset1.nwords ? h.subset1.words[0] : 0;
	*rej = h.subset2.nwords ? h.subset2.words[0] : 0;
	*other = h.props.n;
}

/*
 * V2-OPS-10: a RESPROP reports in rdma_other no property that was not
 * asked about (we report none at all), and answers every position asked:
 * a raise of RBSIZ (V2-TV11, 16384), a lowering (2048) and an unknown
 * property are rejected, RBSIZ at the size our Receives are is done.
 * V2-PROP-9/10: we neither raise nor lower our Receive size on a live
 * connection, so we announce no change (no UPDPROP) and a 4096-octet Call
 * still fits a Receive afterwards.  V2-OPS-1: REQPROP is an operation we
 * support, so never INVAL_OPTION.
 */
START_TEST(test_v2_reqprop_answered)
{
	uint32_t done, rej, other;
	struct rw_hdr h;
	uint32_t n;

	srv_start(0, 0);
	peer_vec("V2-TV11");
	ck_assert_int_eq(pump(), 0);
	last_resprop(0xc001, &done, &rej, &other);
	ck_assert_msg(other == 0, "V2-OPS-10: %u properties not asked for",
		      other);
	ck_assert_uint_eq(done, 0);
	ck_assert_msg(rej == 1, "V2-PROP-9: a raise to 16384 not rejected");

	/* RBSIZ 2048 and the experimental id 0xffffff00 */
	peer_hex("0000c002 00000002 00000020 00000007 00000002 "
		 "00000001 00000004 00000800 "
		 "ffffff00 00000004 00000001");
	ck_assert_int_eq(pump(), 0);
	last_resprop(0xc002, &done, &rej, &other);
	ck_assert_uint_eq(other, 0);
	ck_assert_msg(done == 0 && rej == 3,
		      "V2-PROP-10/V2-OPS-10: done 0x%x rejected 0x%x", done,
		      rej);
	/* RBSIZ 4096, the size in force */
	peer_hex("0000c003 00000002 00000020 00000007 00000001 "
		 "00000001 00000004 00001000");
	ck_assert_int_eq(pump(), 0);
	last_resprop(0xc003, &done, &rej, &other);
	ck_assert_uint_eq(other, 0);
	ck_assert_msg(done == 1 && rej == 0,
		      "V2-OPS-10: done 0x%x rejected 0x%x", done, rej);
	ck_assert_uint_eq(sent_procs(RW_ERROR, 0), 0);
	ck_assert_msg(sent_procs(RW2_UPDPROP, 0) == 0,
		      "V2-PROP-9/10: we announced a change");

	rw_hdr_init(&h, RW_VERS_2, RW_MSG, XID, CREDITS);
	n = rp_call(rpc, sizeof(rpc), XID, 3, rpc + 8192, 4016);
	n = rp_msg(msg, sizeof(msg), &h, rpc, n);
	ck_assert_int_eq(fake_recv(conn, msg, n, 0), 0);
	ck_assert_int_eq(serve(8, 0), 0);
}
END_TEST

/* V2-OPS-10 (the receiver's side), V2-OPS-1: a RESPROP to something we
 * never asked is ignored, whatever it reports: no answer, no error,
 * nothing handed up, the peer's properties unchanged. */
START_TEST(test_v2_unasked_resprop_ignored)
{
	srv_start(0, 0);
	peer_vec("V2-TV12b");
	ck_assert_int_eq(pump(), 0);
	ck_assert_ptr_null(rr_srv_next(srv));
	ck_assert_uint_eq(fake_nsends(conn), 0);
	ck_assert_uint_eq(peer_props().advertised, 0);
	ck_assert_uint_eq(stats().discarded, 1);
}
END_TEST

/*
 * The peer's Receive Buffer Size and its use (V2-PROP-8..10, V2-OPS-5):
 * with Send buffers of 8192, a reply of 6000 octets is inline once the
 * client's CONNPROP says RBSIZ 8192 (V2-TV10) and needs a Reply chunk
 * before; our own CONNPROP, sent because the client takes backward
 * messages, fits 1024 octets and reports the Receives we post, not to
 * change (so no later raise or lowering to announce, V2-PROP-9/10).
 * V2-OPS-1: CONNPROP is supported, never INVAL_OPTION.
 */
START_TEST(test_v2_connprop_rbsiz_used)
{
	struct rw_props p;
	struct rw_hdr_space sp;
	struct rw_hdr h;
	unsigned int i;
	uint32_t rbsiz = 0;

	srv_start(8192, 0);
	call_v2(XID, NULL, 0, 0);
	ck_assert_int_eq(serve(6000, 0), -EMSGSIZE); /* > 4096 */
	peer_vec("V2-TV10");
	ck_assert_int_eq(pump(), 0);
	p = peer_props();
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 8192);
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_GENL);
	ck_assert_uint_eq(sent_procs(RW2_CONNPROP, 0), 1);
	for (i = 0; i < fake_nsends(conn); i++) {
		const struct fake_msg *m = sent(i, &h, &sp);

		if (h.proc != RW2_CONNPROP)
			continue;
		ck_assert_msg(m->len <= 1024, "V2-OPS-5: CONNPROP of %u",
			      m->len);
		ck_assert_uint_eq(h.props.n, 2);
		ck_assert_uint_eq(h.props.props[0].id, RW2_PROP_RBSIZ);
		ck_assert_uint_eq(h.props.props[0].len, 4);
		rbsiz = (uint32_t)h.props.props[0].data[2] << 8 |
			h.props.props[0].data[3];
		ck_assert_uint_eq(h.subset1.words[0] & 3, 3);
	}
	ck_assert_uint_eq(rbsiz, 4096); /* the Receives we post */
	call_v2(XID + 1, NULL, 0, 0);
	ck_assert_msg(serve(6000, 0) == 0,
		      "V2-PROP-8: RBSIZ 8192 not used for a 6000 reply");
	sent(fake_nsends(conn) - 1, &h, &sp);
	ck_assert_uint_eq(h.proc, RW_MSG);
	ck_assert_uint_eq(sent_procs(RW2_UPDPROP, 0), 0);
	ck_assert_uint_eq(sent_procs(RW_ERROR, 0), 1); /* the first */
}
END_TEST

/* V2-PROP-10, receiver's side: a client lowering its RBSIZ by UPDPROP (it
 * did not mark it unchangeable) is sent no more than that from then on;
 * one that marked it unchangeable (V2-OPS-6) keeps its size. */
START_TEST(test_v2_peer_lowers_rbsiz)
{
	srv_start(0, 0);
	/* CONNPROP RBSIZ 4096, BRS NONE, nochg {} */
	peer_hex("0000c001 00000002 00000010 00000006 00000002 00000001 "
		 "00000004 00001000 00000002 00000004 00000000 00000000");
	/* UPDPROP RBSIZ 2048 */
	peer_hex("0000c002 00000002 00000010 00000009 00000001 00000001 "
		 "00000004 00000800");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(peer_props().val[RW_SP_RBSIZ], 2048);
	call_v2(XID, NULL, 0, 0);
	ck_assert_msg(serve(3000, 0) == -EMSGSIZE,
		      "V2-PROP-10: 3000 octets sent to a 2048 Receive");
	call_v2(XID + 1, NULL, 0, 0);
	ck_assert_int_eq(serve(1500, 0), 0);
	ck_assert_uint_eq(sent_procs(RW2_CONNPROP, 0), 0); /* BRS NONE */

	rr_srv_destroy(srv);
	fake_reset();
	srv_start(0, 0);
	/* the same, RBSIZ marked not to change: the update is ignored */
	peer_hex("0000c001 00000002 00000010 00000006 00000002 00000001 "
		 "00000004 00001000 00000002 00000004 00000000 00000001 "
		 "00000001");
	peer_hex("0000c002 00000002 00000010 00000009 00000001 00000001 "
		 "00000004 00000800");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(peer_props().val[RW_SP_RBSIZ], 4096);
	call_v2(XID, NULL, 0, 0);
	ck_assert_int_eq(serve(3000, 0), 0);
}
END_TEST

/* ---- xcharext-02 compatibility (opts.xcharext) --------------------------- */

/*
 * XC-4, AMB-V2-1: with xcharext off, INITXCH (XC-TV1), REQXCH and UPDXCH
 * (XC-TV3) are OPTIONAL messages of types we do not support: each gets
 * RDMA2_ERR_INVAL_OPTION with its XID and nothing of it is decoded (the
 * peer's properties stay the defaults).  We send no OPTIONAL message.
 */
START_TEST(test_xc_off_inval_option)
{
	struct rw_props p;

	srv_start(0, 0);
	peer_vec("XC-TV1");
	ck_assert_int_eq(pump(), 0);
	last_sent_is("12345679 00000002 00000010 00000004 00000009", "XC-4");
	peer_hex("0000c003 00000002 00000010 00000005 00000000 00000002 "
		 "00000010 00000001 00000001 00000004 00001000");
	ck_assert_int_eq(pump(), 0);
	last_sent_is("0000c003 00000002 00000010 00000004 00000009", "XC-4");
	peer_vec("XC-TV3");
	ck_assert_int_eq(pump(), 0);
	last_sent_is("0000c002 00000002 00000010 00000004 00000009", "XC-4");
	p = peer_props();
	ck_assert_uint_eq(p.advertised, 0);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], RW2_RBSIZ_DEFAULT);
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_INLINE);
	ck_assert_uint_eq(sent_procs(RW2_OPTIONAL, 0), 0);
	ck_assert_uint_eq(stats().props_received, 0);
}
END_TEST

/*
 * With xcharext on: INITXCH is taken in xcharext's ids (XC-TV1: RBSIZ 8192,
 * readable through rr_srv_peer_props), one-way, nothing answered (XC-6: we
 * send RESPXCH and so take INITXCH); UPDXCH
 * of BRS (XC-TV3), absent from the INITXCH and so unchangeable (V2-OPS-6
 * applied to xcharext, AMB-X-7), is ignored; an UPDXCH of RBSIZ is
 * applied.  We send no xcharext message of our own: no INITXCH, no
 * UPDXCH (XC-11: we never have one pending); our properties go in
 * a v2-05 CONNPROP (AMB-V2-1), here because the INITXCH left
 * Backward Request Support at its default, INLINE.
 */
START_TEST(test_xc_on_initxch_taken)
{
	struct rw_props p;

	opts.xcharext = true;
	srv_start(0, 0);
	peer_vec("XC-TV1");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(sent_procs(RW2_CONNPROP, 0), 1);
	ck_assert_uint_eq(fake_nsends(conn), 1);
	p = peer_props();
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 8192);
	ck_assert(p.advertised & RW_SP_BIT(RW_SP_RBSIZ));
	peer_vec("XC-TV3");
	/* UPDXCH RBSIZ (xcharid 1) = 2048, pendclr FALSE */
	peer_hex("0000c004 00000002 00000010 00000005 00000000 00000004 "
		 "00000010 00000001 00000004 00000800 00000000");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(fake_nsends(conn), 1);
	p = peer_props();
	ck_assert_uint_eq(p.val[RW_SP_BRS], RW2_BRS_INLINE);
	ck_assert_uint_eq(p.val[RW_SP_RBSIZ], 2048);
	ck_assert_uint_eq(stats().props_received, 3);
	call_v2(XID, NULL, 0, 0);
	ck_assert_int_eq(serve(3000, 0), -EMSGSIZE);
	ck_assert_uint_eq(sent_procs(RW2_OPTIONAL, 0), 0);
}
END_TEST

/* The last Send is the RESPXCH of xid, done and rejected as given (first
 * words), nothing pending. */
static void last_respxch(uint32_t xid, uint32_t want_done, uint32_t want_rej)
{
	struct rw_subset done, rej, pend;
	struct rw_hdr_space sp;
	struct rw_hdr h;
	size_t off = 0;

	sent(fake_nsends(conn) - 1, &h, &sp);
	ck_assert_uint_eq(h.proc, RW2_OPTIONAL);
	ck_assert_uint_eq(h.vers, RW_VERS_2);
	ck_assert_msg(h.xid == xid, "XC-9: RESPXCH of XID 0x%x", h.xid);
	ck_assert_msg(h.opt.dir == RW_DIR_REPLY, "V2-DIR-4: optdir %u",
		      h.opt.dir);
	ck_assert_uint_eq(h.opt.type, RW_XC_RESPXCH);
	ck_assert_int_eq(rw_body_get_subset(h.opt.info, h.opt.len, &off, &done),
			 RW_R_OK);
	ck_assert_int_eq(rw_body_get_subset(h.opt.info, h.opt.len, &off, &rej),
			 RW_R_OK);
	ck_assert_int_eq(rw_body_get_subset(h.opt.info, h.opt.len, &off, &pend),
			 RW_R_OK);
	ck_assert_uint_eq(off, h.opt.len);
	ck_assert_msg((done.nwords ? done.words[0] : 0) == want_done,
		      "XC-10: done 0x%x", done.nwords ? done.words[0] : 0);
	ck_assert_msg((rej.nwords ? rej.words[0] : 0) == want_rej,
		      "XC-10: rejected 0x%x", rej.nwords ? rej.words[0] : 0);
	ck_assert_msg(pend.nwords == 0 || pend.words[0] == 0,
		      "XC-11: something pending");
}

/*
 * REQXCH with xcharext on gets a RESPXCH: an OPTIONAL of type 3 carrying
 * the REQXCH's XID (XC-9), direction REPLY as a responder's OPTIONAL
 * without an RPC message (V2-DIR-4); done and rejected cover the two
 * positions asked without overlap and nothing is pending (XC-10, XC-11):
 * RBSIZ at our Receive size is done, REQREMINV (which we never change) and
 * a lowered RBSIZ are rejected (XC-8, XC-12 as V2-PROP-9/10).
 */
START_TEST(test_xc_reqxch_respxch)
{
	opts.xcharext = true;
	srv_start(0, 0);
	/* want {RBSIZ 4096, REQREMINV TRUE} */
	peer_hex("0000c005 00000002 00000010 00000005 00000000 00000002 "
		 "0000001c 00000002 00000001 00000004 00001000 00000002 "
		 "00000004 00000001");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(fake_nsends(conn), 1);
	last_respxch(0xc005, 1, 2);
	/* want {RBSIZ 2048} */
	peer_hex("0000c006 00000002 00000010 00000005 00000000 00000002 "
		 "00000010 00000001 00000001 00000004 00000800");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(fake_nsends(conn), 2);
	last_respxch(0xc006, 0, 1);
	ck_assert_uint_eq(sent_procs(RW2_OPTIONAL, RW_XC_INITXCH) +
				  sent_procs(RW2_OPTIONAL, RW_XC_UPDXCH),
			  0);
}
END_TEST

/*
 * XC-10 (V2-PROP-6): "done" says the value asked for is the one in force.
 * With Receives of 8192, REQXCH and REQPROP asking RBSIZ 8192 are done and
 * asking 4096 is rejected, in both codecs alike.
 */
START_TEST(test_xc_respxch_receive_size)
{
	uint32_t done, rej, other;

	opts.xcharext = true;
	srv_start(0, 8192);
	/* REQXCH want {RBSIZ 8192}, then {RBSIZ 4096} */
	peer_hex("0000c008 00000002 00000010 00000005 00000000 00000002 "
		 "00000010 00000001 00000001 00000004 00002000");
	ck_assert_int_eq(pump(), 0);
	last_respxch(0xc008, 1, 0);
	peer_hex("0000c009 00000002 00000010 00000005 00000000 00000002 "
		 "00000010 00000001 00000001 00000004 00001000");
	ck_assert_int_eq(pump(), 0);
	last_respxch(0xc009, 0, 1);
	/* REQPROP the same */
	peer_hex("0000c00a 00000002 00000020 00000007 00000001 "
		 "00000001 00000004 00002000");
	ck_assert_int_eq(pump(), 0);
	last_resprop(0xc00a, &done, &rej, &other);
	ck_assert_msg(done == 1 && rej == 0 && other == 0,
		      "V2-PROP-6: done 0x%x rejected 0x%x", done, rej);
}
END_TEST

/* XC-4: with xcharext on, a RESPXCH (an answer to a REQXCH, which we never
 * send) is an operation we do not support: INVAL_OPTION. */
START_TEST(test_xc_unasked_respxch)
{
	opts.xcharext = true;
	srv_start(0, 0);
	/* RESPXCH done {0}, rej {}, pend {} (XC-TV4) */
	peer_hex("0000c006 00000002 00000010 00000005 00000000 00000003 "
		 "00000010 00000001 00000001 00000000 00000000");
	ck_assert_int_eq(pump(), 0);
	last_sent_is("0000c006 00000002 00000010 00000004 00000009", "XC-4");
}
END_TEST

/*
 * XC-7: a client whose INITXCH says REQREMINV FALSE, and whose v2 Calls
 * then name no handle (AMB-X-2: only rdma_inv_handle counts), is answered
 * with plain Sends even when the Call has a single handle the server could
 * guess (as it does in v1, RFC 8797).
 */
START_TEST(test_xc_no_reqreminv_plain_send)
{
	static uint8_t wmem[4096];
	const struct fake_msg *m;
	struct rw_hdr_space sp;
	struct rw_hdr h;

	opts.xcharext = true;
	srv_start(0, 0);
	/* INITXCH {REQREMINV FALSE}, nochg {} */
	peer_hex("0000c007 00000002 00000010 00000005 00000000 00000001 "
		 "00000014 00000001 00000002 00000004 00000000 00000000");
	ck_assert_int_eq(pump(), 0);
	ck_assert_uint_eq(sent_procs(RW_ERROR, 0), 0);
	ck_assert(peer_props().advertised & RW_SP_BIT(RW_SP_REQREMINV));
	ck_assert_uint_eq(peer_props().val[RW_SP_REQREMINV], 0);
	call_v2(XID, wmem, sizeof(wmem), 0);
	ck_assert_int_eq(serve(100, 0), 0);
	m = sent(fake_nsends(conn) - 1, &h, &sp);
	ck_assert_uint_eq(h.xid, XID);
	ck_assert_uint_eq(h.proc, RW_MSG);
	ck_assert_msg(m->inv_rkey == 0, "XC-7: Send With Invalidate of 0x%x",
		      m->inv_rkey);
}
END_TEST

/* ---- The requester and the test as its server ------------------------- */

/* The scripted server: answers each v2 Call at once (echo) while answer
 * is set, with grant. */
static struct {
	bool answer;
	uint32_t grant;
} peer;

/* The server answers Call rx (carrying the RPC Call rpc[0..n)) with the
 * echo of its argument, inline, in the Call's version. */
static void peer_answer(struct rt_conn *c, const struct rw_hdr *call,
			const uint8_t *crpc, uint32_t n, uint32_t grant)
{
	static uint8_t out[8192], rep[8192], buf[8192];
	struct rp_args a = { .out = out, .cap = sizeof(out) };
	struct rw_hdr h;
	uint32_t m;
	XDR x;

	xdrmem_create(&x, (char *)crpc, n, XDR_DECODE);
	ck_assert(rp_xdr_call_hdr(&x, &a) && rp_xdr_opaque(&x, &a));
	m = rp_reply(rep, sizeof(rep), call->xid, out, a.len);
	rw_hdr_init(&h, call->vers, RW_MSG, call->xid, grant);
	h.direction = RW_DIR_REPLY;
	m = rp_msg(buf, sizeof(buf), &h, rep, m);
	ck_assert_uint_gt(m, 0);
	ck_assert_int_eq(fake_recv(c, buf, m, 0), 0);
}

/* The requester's Send i, decoded; NULL if it is not a Call (RDMA_MSG). */
static const struct fake_msg *clnt_sent(struct rt_conn *c, unsigned int i,
					struct rw_hdr *h,
					struct rw_hdr_space *sp)
{
	const struct fake_msg *m = fake_send(c, i);

	ck_assert_msg(m != NULL, "no Send %u", i);
	rw_hdr_space_init(sp, &rw_v2_limits);
	ck_assert_int_eq(rw_hdr_decode(m->data, m->len, h, sp), RW_R_OK);
	return m;
}

/* Wait for the requester's Call of xid (an RDMA_MSG), decoded. */
static const struct fake_msg *clnt_call_sent(struct rt_conn *c, uint32_t xid,
					     struct rw_hdr *h,
					     struct rw_hdr_space *sp)
{
	int64_t deadline = rr_now_ms() + WAIT_MS;
	const struct fake_msg *m;
	unsigned int i = 0;

	for (;;) {
		for (; i < fake_nsends(c); i++) {
			m = clnt_sent(c, i, h, sp);
			if (h->proc == RW_MSG && h->xid == xid)
				return m;
		}
		ck_assert_msg(rr_now_ms() < deadline, "no Call 0x%08x", xid);
		usleep(1000);
	}
}

static void on_send(struct rt_conn *c, const struct fake_msg *m, void *arg)
{
	struct rw_hdr_space sp;
	struct rw_hdr h;

	(void)arg;
	rw_hdr_space_init(&sp, &rw_v2_limits);
	if (!peer.answer || rw_hdr_decode(m->data, m->len, &h, &sp) ||
	    h.proc != RW_MSG)
		return;
	peer_answer(c, &h, m->data + h.hdr_len, m->len - h.hdr_len, peer.grant);
}

/* The binding of procedure 3: its largest Reply, so a Reply chunk is
 * offered exactly when that may not fit inline. */
static struct rpcrdma_ulb_entry reply_ulb;

static struct rt_conn *clnt_start(enum rr_vers_mode vers, bool no_inv,
				  uint32_t reply_max)
{
	struct sockaddr_in dst;
	struct rr_opts o;
	struct rt_err err;

	peer.grant = 8;
	fake_cfg()->on_send = on_send;
	memset(&o, 0, sizeof(o));
	rt_conn_attr_init(&o.conn);
	o.conn.credits = CREDITS;
	o.conn.timeout_ms = 2000;
	o.max_reply = 64 * 1024;
	o.ddp_reg_min = 64 * 1024;
	o.vers = vers;
	o.no_inv_nominate = no_inv;
	memset(&reply_ulb, 0, sizeof(reply_ulb));
	reply_ulb.prog = RP_PROG;
	reply_ulb.vers = RP_VERS;
	reply_ulb.proc = 3;
	reply_ulb.dir = RPCRDMA_ULB_REPLY;
	reply_ulb.reply_max.kind = RPCRDMA_ULB_SIZE_FIXED;
	reply_ulb.reply_max.value = reply_max;
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(20049);
	inet_pton(AF_INET, "192.0.2.9", &dst.sin_addr);
	clnt = rr_clnt_create((struct sockaddr *)&dst, &o, &err);
	ck_assert_msg(clnt != NULL, "rr_clnt_create: %s", err.msg);
	return fake_last_conn();
}

/* One call of the requester, maybe on a thread of its own. */
struct one {
	uint32_t xid;
	uint8_t arg[64];
	enum rr_status st;
	struct rr_result res;
	pthread_t thread;
};

static void *one_run(void *arg)
{
	struct one *o = arg;
	struct rp_args a = {
		.xid = o->xid, .proc = 3, .data = o->arg, .len = sizeof(o->arg)
	};
	uint8_t out[256];
	struct rp_args r = { .xid = o->xid, .out = out, .cap = sizeof(out) };
	struct rr_call *call;
	struct rr_req req;
	XDR *x;

	memset(&req, 0, sizeof(req));
	req.xid = o->xid;
	req.encode = rp_xdr_call;
	req.arg = &a;
	req.size_hint = 256;
	req.deadline_ms = rr_now_ms() + WAIT_MS;
	req.reply_ulb = &reply_ulb;
	rp_fill(o->arg, sizeof(o->arg), o->xid);
	o->st = rr_call(clnt, &req, &call, &o->res);
	if (o->st != RR_OK)
		return NULL;
	x = rr_call_xdr(call);
	if (!rp_xdr_reply_hdr(x, &r) || !rw_xdr_begin_body(x) ||
	    !rp_xdr_opaque(x, &r) || !rr_call_decoded(call) ||
	    r.len != sizeof(o->arg) || memcmp(out, o->arg, r.len))
		o->st = RR_CANTDECODE;
	rr_call_done(clnt, call);
	return NULL;
}

static void one_ok(struct one *o, uint32_t xid)
{
	memset(o, 0, sizeof(*o));
	o->xid = xid;
	one_run(o);
	ck_assert_msg(o->st == RR_OK, "XID 0x%08x: status %d: %s", xid, o->st,
		      o->res.msg);
}

/*
 * V2-RI-2: a v2 Call that allows no remote invalidation says 0 in
 * rdma_inv_handle: one with no Write or Reply chunk, and one with a Reply
 * chunk from a client told not to nominate (no_inv_nominate).  With the
 * option off the Reply chunk's handle is named (V2-RI-1).
 */
START_TEST(test_v2_clnt_inv_handle)
{
	struct rw_hdr_space sp;
	struct rt_conn *c;
	struct rw_hdr h;
	struct one o;
	unsigned int i;
	int k;

	for (k = 0; k < 3; k++) {
		fake_reset();
		/* k 0: no chunk; 1: Reply chunk; 2: the same, no_inv */
		c = clnt_start(RR_VERS_2, k == 2, k ? 16384 : 512);
		peer.answer = true;
		one_ok(&o, XID + (uint32_t)k);
		for (i = 0; i < fake_nsends(c); i++) {
			clnt_sent(c, i, &h, &sp);
			if (h.proc == RW_MSG || h.proc == RW_NOMSG)
				break;
		}
		ck_assert_uint_lt(i, fake_nsends(c));
		ck_assert_uint_eq(h.vers, RW_VERS_2);
		ck_assert_int_eq(h.has_reply, k != 0);
		if (k == 1) {
			ck_assert_uint_ne(h.inv_handle, 0);
			ck_assert_uint_eq(h.inv_handle, h.reply.segs[0].handle);
		} else {
			ck_assert_msg(h.inv_handle == 0,
				      "V2-RI-2: case %d names 0x%x", k,
				      h.inv_handle);
		}
		rr_clnt_destroy(clnt);
		clnt = NULL;
	}
}
END_TEST

/*
 * V2-NEG-1: until a valid Reply reports the server's credits, a v2 client
 * has one message outstanding: of two calls started together (asking for
 * 16 credits) only one is sent; the second only once the first Reply came.
 * Both when it insists on v2 and when it offers v2 (auto).
 */
START_TEST(test_v2_clnt_one_message_until_reply)
{
	static const enum rr_vers_mode modes[] = { RR_VERS_2, RR_VERS_AUTO };
	struct rw_hdr_space sp;
	struct one a, b;
	struct rt_conn *c;
	struct rw_hdr h;
	const struct fake_msg *m;
	unsigned int k;

	for (k = 0; k < 2; k++) {
		fake_reset();
		c = clnt_start(modes[k], false, 512);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		a.xid = XID;
		b.xid = XID + 1;
		ck_assert_int_eq(pthread_create(&a.thread, NULL, one_run, &a),
				 0);
		ck_assert_int_eq(pthread_create(&b.thread, NULL, one_run, &b),
				 0);
		ck_assert(fake_wait_sends(c, 1, WAIT_MS));
		usleep(200 * 1000);
		ck_assert_msg(fake_nsends(c) == 1,
			      "V2-NEG-1: %u messages before the first Reply",
			      fake_nsends(c));
		m = clnt_sent(c, 0, &h, &sp);
		ck_assert_uint_eq(h.vers, RW_VERS_2);
		ck_assert_uint_eq(h.proc, RW_MSG);
		peer_answer(c, &h, m->data + h.hdr_len, m->len - h.hdr_len, 4);
		m = clnt_call_sent(c, h.xid == XID ? XID + 1 : XID, &h, &sp);
		peer_answer(c, &h, m->data + h.hdr_len, m->len - h.hdr_len, 4);
		ck_assert_int_eq(pthread_join(a.thread, NULL), 0);
		ck_assert_int_eq(pthread_join(b.thread, NULL), 0);
		ck_assert_int_eq(a.st, RR_OK);
		ck_assert_int_eq(b.st, RR_OK);
		rr_clnt_destroy(clnt);
		clnt = NULL;
	}
}
END_TEST

/*
 * V2-OPS-5: the client's first CONNPROP (sent once v2 is settled) fits
 * 1024 octets and reports the Receives it posts, not to change
 * (V2-PROP-9/10: nothing to announce later, no UPDPROP).  It sends no
 * OPTIONAL message at all: no xcharext on the wire (AMB-V2-1).
 */
START_TEST(test_v2_clnt_connprop)
{
	struct rw_hdr_space sp;
	const struct fake_msg *m;
	unsigned int i, nconn = 0;
	struct rt_conn *c;
	struct rw_hdr h;
	struct one o;

	c = clnt_start(RR_VERS_2, false, 512);
	peer.answer = true;
	one_ok(&o, XID);
	one_ok(&o, XID + 1);
	one_ok(&o, XID + 2);
	for (i = 0; i < fake_nsends(c); i++) {
		m = clnt_sent(c, i, &h, &sp);
		ck_assert_uint_eq(h.vers, RW_VERS_2);
		ck_assert_msg(h.proc != RW2_OPTIONAL,
			      "AMB-V2-1: the client sent an OPTIONAL");
		ck_assert_uint_ne(h.proc, RW2_UPDPROP);
		if (h.proc != RW2_CONNPROP)
			continue;
		nconn++;
		ck_assert_msg(m->len <= 1024, "V2-OPS-5: CONNPROP of %u",
			      m->len);
		ck_assert_uint_eq(h.props.props[0].id, RW2_PROP_RBSIZ);
		ck_assert_uint_eq(h.subset1.words[0] & 1, 1);
	}
	ck_assert_uint_eq(nconn, 1);
}
END_TEST

Suite *rpc_v2_suite(void)
{
	Suite *s = suite_create("rpc_v2");
	TCase *ts = tcase_create("responder");
	TCase *tx = tcase_create("xcharext");
	TCase *tc = tcase_create("requester");

	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_add_checked_fixture(tx, setup, teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(ts, test_v2_inline_4096_served);
	tcase_add_test(ts, test_v2_answers_v1_in_v1);
	tcase_add_test(ts, test_v2_invalidates_the_named_handle);
	tcase_add_test(ts, test_v2_no_invalidation_without_support);
	tcase_add_test(ts, test_v2_unknown_option);
	tcase_add_test(ts, test_v2_unknown_proc);
	tcase_add_test(ts, test_v2_bad_xdr_not_executed);
	tcase_add_test(ts, test_v2_write_resource);
	tcase_add_test(ts, test_v2_reply_resource);
	tcase_add_test(ts, test_v2_reqprop_answered);
	tcase_add_test(ts, test_v2_unasked_resprop_ignored);
	tcase_add_test(ts, test_v2_connprop_rbsiz_used);
	tcase_add_test(ts, test_v2_peer_lowers_rbsiz);
	tcase_add_test(tx, test_xc_off_inval_option);
	tcase_add_test(tx, test_xc_on_initxch_taken);
	tcase_add_test(tx, test_xc_reqxch_respxch);
	tcase_add_test(tx, test_xc_respxch_receive_size);
	tcase_add_test(tx, test_xc_unasked_respxch);
	tcase_add_test(tx, test_xc_no_reqreminv_plain_send);
	tcase_add_test(tc, test_v2_clnt_inv_handle);
	tcase_add_test(tc, test_v2_clnt_one_message_until_reply);
	tcase_add_test(tc, test_v2_clnt_connprop);
	suite_add_tcase(s, ts);
	suite_add_tcase(s, tx);
	suite_add_tcase(s, tc);
	return s;
}
