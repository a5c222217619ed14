/*
 * fuzz_srv.c - libFuzzer target for the responder's receive path
 * (src/rpc/rr_serve.h) over the fake transport (tests/unit/fake_rt.h).
 *
 * One rr_srv lives across inputs (a fresh one every FUZZ_SRV_LIFE inputs,
 * and whenever its connection died); each input is a script of operations
 * the peer performs on it:
 *   op % 8 = 0  a Receive of raw octets: u16 length, the octets
 *            1  a Receive of a Call built from descriptors: header fields,
 *               up to 3 Read segments, 2 Write chunks and a Reply chunk
 *               (each a valid region of the peer's memory or arbitrary
 *               handle, offset and length), and an RPC Call payload of a
 *               given size, optionally with one octet changed
 *            2  rr_srv_progress() until the fd settles, then every ready
 *               request decoded (with or without a Read chunk designated)
 *               and answered inline, in the Reply chunk, into a Write chunk,
 *               with rr_sreq_fail(), or not at all
 *            3  complete the n oldest RDMA Reads (the fake holds them)
 *            4  fail the oldest RDMA Read (the connection ends)
 *            5  end the connection
 *            6  a raw Receive as Send With Invalidate of a given handle
 *            7  rr_srv_defer()
 * After the script every Read is completed and every request served, and
 * then: no misuse of the transport's contract, nothing in flight, every
 * Receive posted again, no local memory held (sinks and reply sources are
 * all given back), and every Send the responder made decodes as a
 * transport header with a grant of 1..credits (V1-CR-3, V1-CR-8).
 * LeakSanitizer checks the rest at exit.
 *
 * Seeds (tests/fuzz/seeds/srv/): scripts of the shapes above - the header
 * vectors of doc/requirements.md §6 as raw Receives, Short and Long Calls, Read
 * chunks at an item, Reply and Write chunks, failures.  Any file is a valid
 * script.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_rt.h"
#include "rpc_peer.h"
#include "rpc/rr_serve.h"
#include "wire/rw_chunk.h"

#define FUZZ_CHECK(cond)                                              \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "%s:%d: %s (%s)\n", __FILE__, \
				__LINE__, #cond, fake_misuse_msg());  \
			abort();                                      \
		}                                                     \
	} while (0)

#define FUZZ_SRV_LIFE 256
#define CREDITS	      8u
#define MAX_READ      (32u * 1024u)
#define H_PEER	      0xa000u /* the peer's Call data */
#define O_PEER	      0x10000ull
#define H_WMEM	      0xb000u /* the peer's Reply/Write chunk memory */
#define O_WMEM	      0x7f0000000000ull
#define PZRC_ARG      3000u /* the Long Call at the start of pmem */
#define ITEM_OFF      8192u /* argument data from here on */

static uint8_t pmem[1 << 16], wmem[1 << 16];
static uint8_t buf[1 << 16], res[1 << 16], out[1 << 16];
static struct rt_conn *conn;
static struct rr_srv *srv;
static unsigned int uses;

/* The script being read; past its end every read is 0. */
struct script {
	const uint8_t *p;
	size_t n;
};

static uint8_t u8(struct script *s)
{
	if (!s->n)
		return 0;
	s->n--;
	return *s->p++;
}

static uint16_t u16(struct script *s)
{
	uint16_t v = u8(s);

	return (uint16_t)(v << 8 | u8(s));
}

static void srv_fresh(uint8_t how)
{
	/* sometimes a limit below the Long Call plus an item */
	struct rr_srv_opts o = { .max_read_bytes = how & 0x40 ? MAX_READ / 8 :
								MAX_READ };
	struct rt_conn_attr a;
	struct rt_err err;

	rr_srv_destroy(srv);
	fake_reset();
	fake_cfg()->hold_reads = true;
	fake_cfg()->peer_priv.recv_size = how & 1 ? 1024 : 4096;
	fake_cfg()->peer_priv.send_size = how & 2 ? 1024 : 4096;
	fake_cfg()->ord = how & 4 ? 1 : 4;
	rt_conn_attr_init(&a);
	a.credits = CREDITS;
	conn = fake_conn_new(&a);
	srv = rr_srv_create(conn, &o, &err);
	FUZZ_CHECK(srv != NULL);
	if (!pmem[0]) { /* once: the same for every server */
		rp_fill(pmem, sizeof(pmem), 1);
		rp_call(pmem, sizeof(pmem), 0x12345678, 3, pmem + ITEM_OFF,
			PZRC_ARG);
	}
	fake_peer_mem(conn, H_PEER, O_PEER, pmem, sizeof(pmem));
	fake_peer_mem(conn, H_WMEM, O_WMEM, wmem, sizeof(wmem));
	uses = 0;
}

/* A segment: a valid region or whatever the script says. */
static void segment(struct script *s, struct rw_segment *g, bool sink)
{
	uint8_t kind = u8(s);
	uint16_t off = u16(s), len = u16(s);

	switch (kind & 3) {
	case 0: /* the Long Call, or a Reply/Write region */
		g->handle = sink ? H_WMEM : H_PEER;
		g->offset = sink ? O_WMEM + (off & 0x7fff) : O_PEER;
		g->length = sink ? len & 0x7fff : rp_call_len(PZRC_ARG);
		break;
	case 1: /* argument data */
		g->handle = sink ? H_WMEM : H_PEER;
		g->offset = (sink ? O_WMEM : O_PEER + ITEM_OFF) + (off & 0xfff);
		g->length = len & 0x1fff;
		break;
	case 2: /* anything */
		g->handle = (uint32_t)kind << 24 | off;
		g->offset = (uint64_t)u16(s) << 48 | (uint64_t)off << 8;
		g->length = (uint32_t)len << (kind >> 4 & 15);
		break;
	default: /* the right handle, any place */
		g->handle = sink ? H_WMEM : H_PEER;
		g->offset = (sink ? O_WMEM : O_PEER) + off;
		g->length = len;
		break;
	}
}

/* op 1: a Call from descriptors. */
static void op_call(struct script *s)
{
	static struct rw_read_seg reads[3];
	static struct rw_chunk writes[2];
	static struct rw_segment wsegs[2][2], rsegs[2];
	uint8_t flags = u8(s), i, j;
	uint32_t xid = 0x12345600u | u8(s), plen, n;
	uint16_t alen = u16(s), at;
	uint32_t vers = flags & 0x80 ? u8(s) : RW_VERS_1;
	uint32_t proc = flags & 1    ? RW_NOMSG :
			flags & 0x40 ? u8(s) % 8 :
				       RW_MSG;
	uint32_t credit = flags & 0x20 ? u8(s) : CREDITS;
	struct rw_hdr h;

	rw_hdr_init(&h, vers, proc, xid, credit);
	h.nreads = (flags >> 1) & 3;
	h.reads = reads;
	for (i = 0; i < h.nreads && i < 3; i++) {
		reads[i].position = i == 0 && (flags & 1) ? 0 :
				    u8(s) & 1		  ? RP_ARG_POS :
							    u16(s);
		segment(s, &reads[i].seg, false);
	}
	h.nwrites = (flags >> 3) & 1 ? 1 + (u8(s) & 1) : 0;
	h.writes = writes;
	for (i = 0; i < h.nwrites; i++) {
		writes[i].nsegs = 1 + (u8(s) & 1);
		writes[i].segs = wsegs[i];
		for (j = 0; j < writes[i].nsegs; j++)
			segment(s, &wsegs[i][j], true);
	}
	if (flags & 0x10) {
		h.has_reply = true;
		h.reply.nsegs = 1 + (u8(s) & 1);
		h.reply.segs = rsegs;
		for (j = 0; j < h.reply.nsegs; j++)
			segment(s, &rsegs[j], true);
	}
	plen = rp_call(res, sizeof(res), xid, 3, pmem + ITEM_OFF,
		       alen & 0x3fff);
	if (flags & 1)
		plen = 0; /* Long: the message is in the PZRC */
	else if (h.nreads && (u8(s) & 1))
		plen = plen < RP_ARG_POS ? plen : RP_ARG_POS; /* reduced */
	at = u16(s);
	if (plen && (at & 0x8000))
		res[at % plen] ^= (uint8_t)(at >> 8 | 1);
	n = rp_msg(buf, sizeof(buf), &h, res, plen);
	if (n)
		fake_recv(conn, buf, n, 0);
}

/* op 0 / 6: a raw Receive. */
static void op_raw(struct script *s, bool inv)
{
	uint32_t rkey = inv ? H_WMEM ^ u8(s) : 0;
	uint16_t len = u16(s);

	if (len > s->n)
		len = (uint16_t)s->n;
	fake_recv(conn, s->p, len, rkey);
	s->p += len;
	s->n -= len;
}

static int pump(void)
{
	struct pollfd pfd = { .fd = rr_srv_fd(srv), .events = POLLIN };
	unsigned int i;
	int n = 0;

	for (i = 0; i < 1000; i++) {
		n = rr_srv_progress(srv);
		if (n < 0 || poll(&pfd, 1, 0) <= 0)
			return n;
	}
	FUZZ_CHECK(!"the responder's fd never settles");
	return n;
}

/* Decode and answer (or not) one request as the script says. */
static void serve(struct script *s, struct rr_sreq *r)
{
	struct rw_ddp_policy pol = { .mode = RW_DDP_ITEMS, .mask = 1 };
	struct rp_args a = { .out = out, .cap = sizeof(out) };
	struct rr_sreq_enc e = { .encode = rp_xdr_reply, .arg = &a };
	uint8_t how = u8(s);
	XDR *x = rr_sreq_xdr(r);
	int ret;

	if (rp_xdr_call_hdr(x, &a)) {
		if (how & 1)
			FUZZ_CHECK(rr_sreq_set_ddp(r, &pol));
		if (rw_xdr_begin_body(x) && rp_xdr_opaque(x, &a))
			(void)rr_sreq_args_done(r);
	}
	a.xid = rr_sreq_xid(r);
	a.data = res;
	a.len = u16(s) & 0x7fff;
	if (how & 2) {
		e.ddp.mode = RW_DDP_ITEMS;
		e.ddp.mask = 1;
	}
	switch (how >> 2 & 3) {
	case 0:
	case 1:
		ret = rr_sreq_reply(srv, r, &e);
		FUZZ_CHECK(ret == 0 || ret == -EMSGSIZE || ret == -ENOTCONN);
		/* answered (a reply or ERR_CHUNK went out): never twice */
		if (ret != -ENOTCONN)
			FUZZ_CHECK(rr_sreq_reply(srv, r, &e) == -EALREADY);
		break;
	case 2:
		rr_sreq_fail(srv, r);
		break;
	default:
		break; /* dropped by the RPC layer */
	}
	rr_sreq_done(srv, r);
}

static void op_progress(struct script *s)
{
	struct rr_sreq *r;

	if (pump() < 0)
		return;
	while ((r = rr_srv_next(srv)))
		serve(s, r);
}

/* Every Send of the responder is a header it may send. */
static void check_sends(void)
{
	static struct rw_hdr_space sp;
	const struct fake_msg *m;
	struct rw_hdr h;
	unsigned int i;

	rw_hdr_space_init(&sp, &rw_v2_limits);
	for (i = 0; (m = fake_send(conn, i)); i++) {
		if (rw_hdr_decode(m->data, m->len, &h, &sp) != RW_R_OK) {
			/* only an ERR_VERS echoing an unknown version */
			FUZZ_CHECK(m->len == RW_ERR_VERS_LEN &&
				   h.proc == RW_ERROR &&
				   h.err.code == RW_ERR_VERS);
		}
		FUZZ_CHECK(h.credit >= 1 && h.credit <= CREDITS);
		/* v2 adds the responder's CONNPROP and RESPROP */
		FUZZ_CHECK(h.proc == RW_MSG || h.proc == RW_NOMSG ||
			   h.proc == RW_ERROR ||
			   (h.vers == RW_VERS_2 &&
			    (h.proc == RW2_CONNPROP || h.proc == RW2_RESPROP)));
		FUZZ_CHECK(h.nreads == 0 || h.proc == RW_ERROR);
	}
	fake_sends_clear(conn);
}

/* Finish everything, then nothing may be left. */
static void settle(struct script *s)
{
	struct rr_srv_stats st;
	unsigned int i;
	int n;

	/* Reads complete, requests are served, then pulls that waited for
	 * the budget start: until nothing is ready and nothing pulled. */
	for (i = 0; i < 64; i++) {
		fake_complete_reads(conn, 0, 0);
		op_progress(s);
		n = pump();
		if (n < 0 || (!n && !fake_reads_held(conn)))
			break;
	}
	FUZZ_CHECK(i < 64);
	FUZZ_CHECK(fake_misuses() == 0);
	check_sends();
	if (rr_srv_progress(srv) < 0)
		return;
	rr_srv_stats(srv, &st);
	FUZZ_CHECK(!fake_reads_held(conn));
	FUZZ_CHECK(st.inflight == 0);
	FUZZ_CHECK(fake_lmem_live(conn) == 0);
	FUZZ_CHECK(rt_conn_recvs_posted(conn) == CREDITS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct script s = { data, size };
	unsigned int ops = 0;

	if (!srv || ++uses >= FUZZ_SRV_LIFE || rr_srv_progress(srv) < 0)
		srv_fresh(size ? data[0] : 0);
	while (s.n && ops++ < 256) {
		switch (u8(&s) % 8) {
		case 0:
			op_raw(&s, false);
			break;
		case 1:
			op_call(&s);
			break;
		case 2:
			op_progress(&s);
			break;
		case 3:
			fake_complete_reads(conn, u8(&s) % 4, 0);
			break;
		case 4:
			fake_complete_reads(conn, 1, EIO);
			break;
		case 5:
			if (u8(&s) == 0x5a)
				fake_kill(conn, ECONNRESET, "fuzz: killed");
			break;
		case 6:
			op_raw(&s, true);
			break;
		default:
			rr_srv_defer(srv);
			break;
		}
	}
	settle(&s);
	return 0;
}
