/*
 * t_svc.c - the RPC-over-RDMA server (svc_rdma_create + svc_run, through
 * tests/vm/rtest_server) against a raw client that controls every byte:
 * Short, Chunked and Long calls, Long replies, Write-list echo, credits,
 * the receiver checks of RFC 8166 §4.5 with the exact RDMA_ERROR bytes, the
 * Read-chunk size limit, Reply-chunk overruns, connection limits, IPv6;
 * and finally a clean SIGTERM shutdown of every server (exit status 0: no
 * leak under the ASan build).  Requirement IDs are doc/requirements.md's.
 *
 * Run in the VM (tests/vm/run -- tests/vm/t_svc); without an RDMA device it
 * exits 77.  One line per check; exit status 1 if any failed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtest.h"
#include "tests/vm/t_svc_util.h"
#include "wire/rw_chunk.h"

#define T_MS TS_TIMEOUT_MS

static struct tc_reply rep; /* large: one, reused */

/* Hand-made transport messages: big-endian words. */
static uint32_t put_words(uint8_t *buf, unsigned int n, const uint32_t *w)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t v = tc_be(w[i]);

		memcpy(buf + 4 * i, &v, 4);
	}
	return 4 * n;
}

static uint32_t word(const uint8_t *buf, unsigned int i)
{
	uint32_t v;

	memcpy(&v, buf + 4 * i, 4);
	return ntohl(v);
}

static bool null_ok(struct tc *t)
{
	struct tc_call k = { .proc = RTEST_NULL };

	return !tc_rpc(t, &k, NULL, NULL, &rep, T_MS) && rep.rpc &&
	       rep.ar_stat == SUCCESS;
}

/* ECHO of len pattern octets with the options of k; true if the same
 * octets came back.  The buffer has room for a pad (V1-RC-6 tests). */
static bool echo(struct tc *t, struct tc_call *k, uint32_t len, uint32_t seed)
{
	rtest_data arg, res;
	bool ok;

	arg.rtest_data_len = len;
	arg.rtest_data_val = malloc(len + 4);
	memset(&res, 0, sizeof(res));
	ts_fill(arg.rtest_data_val, len, seed);
	memset(arg.rtest_data_val + len, 0, 4);
	k->proc = RTEST_ECHO;
	k->xargs = (xdrproc_t)xdr_rtest_data;
	k->args = &arg;
	ok = !tc_rpc(t, k, (xdrproc_t)xdr_rtest_data, &res, &rep, T_MS) &&
	     rep.rpc && rep.ar_stat == SUCCESS && res.rtest_data_len == len &&
	     ts_check_fill(res.rtest_data_val, len, seed) < 0;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	free(arg.rtest_data_val);
	return ok;
}

static bool fill(struct tc *t, struct tc_call *k, uint32_t len, uint32_t seed)
{
	rtest_fill_args arg = { len, seed };
	rtest_data res;
	bool ok;

	memset(&res, 0, sizeof(res));
	k->proc = RTEST_FILL;
	k->xargs = (xdrproc_t)xdr_rtest_fill_args;
	k->args = &arg;
	ok = !tc_rpc(t, k, (xdrproc_t)xdr_rtest_data, &res, &rep, T_MS) &&
	     rep.rpc && rep.ar_stat == SUCCESS && res.rtest_data_len == len &&
	     ts_check_fill(res.rtest_data_val, len, seed) < 0;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	return ok;
}

static bool stats(struct tc *t, rtest_stats *st)
{
	struct tc_call k = { .proc = RTEST_STATS };

	memset(st, 0, sizeof(*st));
	return !tc_rpc(t, &k, (xdrproc_t)xdr_rtest_stats, st, &rep, T_MS) &&
	       rep.rpc && rep.ar_stat == SUCCESS;
}

static uint32_t reply_chunk_total(void)
{
	uint32_t i, n = 0;

	for (i = 0; rep.h.has_reply && i < rep.h.reply.nsegs; i++)
		n += rep.h.reply.segs[i].length;
	return n;
}

/* ---- Calls and replies ----------------------------------------------------- */

static void test_short(struct tc *t)
{
	struct tc_call k = { 0 };

	CHECK(null_ok(t), "NULL call answered inline (RDMA_MSG)");
	CHECK(rep.h.proc == RW_MSG && rep.rpc_xid == rep.h.xid,
	      "reply is RDMA_MSG and rdma_xid is the RPC XID (V1-HDR-2)");
	CHECK(rep.h.credit >= 8 && rep.h.credit <= 16,
	      "grant within the configured 16 credits, at least the 8 a "
	      "connection starts with, not 0 (V1-CR-2/3/8): %u",
	      rep.h.credit);
	CHECK(!rep.h.nreads && !rep.h.nwrites && !rep.h.has_reply,
	      "reply carries no chunk lists (V1-RC-9, AMB-V1-4)");
	CHECK(echo(t, &k, 1000, 1),
	      "ECHO of 1000 octets inline: a Call over 1024 octets (V1-SZ-1)");
	memset(&k, 0, sizeof(k));
	CHECK(echo(t, &k, 0, 2), "ECHO of 0 octets");
}

static void test_long(struct tc *t)
{
	struct tc_call k = { .long_call = true, .reply_chunk = 200000 };

	CHECK(echo(t, &k, 100000, 3),
	      "ECHO 100000 as Long Call (PZRC) with Long reply (V1-RC-10, V1-RP-4)");
	CHECK(rep.h.proc == RW_NOMSG && rep.h.has_reply &&
		      reply_chunk_total() == rep.payload_len,
	      "Long reply: RDMA_NOMSG, Reply chunk returned with the %u octets written (V1-RP-3, V1-WC-4)",
	      reply_chunk_total());
	CHECK(rep.h.has_reply && rep.h.reply.nsegs >= 1 &&
		      rep.h.reply.segs[0].handle == rep.offered_r[0].handle &&
		      rep.h.reply.segs[0].offset == rep.offered_r[0].offset,
	      "returned Reply chunk keeps handle and offset (V1-WC-5)");

	memset(&k, 0, sizeof(k));
	k.long_call = true;
	CHECK(echo(t, &k, 2000, 4), "Long Call whose reply fits inline");
	CHECK(rep.h.proc == RW_MSG, "... is answered Short (AMB-V1-3)");

	memset(&k, 0, sizeof(k));
	k.reply_chunk = 9u << 20;
	CHECK(fill(t, &k, 8u << 20, 5),
	      "FILL 8 MiB through the Reply chunk, pattern intact");
	CHECK(rep.h.proc == RW_NOMSG, "... as RDMA_NOMSG");
}

static void test_read_chunks(struct tc *t)
{
	struct tc_call k = { .read_item = true };

	CHECK(echo(t, &k, 3001, 6),
	      "Chunked call: 3001-octet item in a Read chunk without pad (V1-RC-4/7/8)");
	memset(&k, 0, sizeof(k));
	k.read_item = true;
	k.read_item_pad = true;
	CHECK(echo(t, &k, 3001, 7),
	      "... and with its pad in the chunk (V1-RC-6)");
	memset(&k, 0, sizeof(k));
	k.read_item = true;
	k.reply_chunk = 300000;
	CHECK(echo(t, &k, 200000, 8), "Chunked 200000-octet item, Long reply");
	memset(&k, 0, sizeof(k));
	k.read_item = true;
	k.long_call = true;
	k.reply_chunk = 300000;
	CHECK(echo(t, &k, 150001, 9),
	      "PZRC plus an item Read chunk at its unreduced position (AMB-V1-5)");
}

static void test_write_list(struct tc *t)
{
	struct tc_call k = { .write_segs = 2, .write_seg_len = 4096 };
	const struct rw_chunk *w;
	bool same = true;
	uint32_t i;

	CHECK(echo(t, &k, 100, 10), "ECHO with a Write list offered");
	w = rep.h.nwrites ? &rep.h.writes[0] : NULL;
	CHECK(rep.h.proc == RW_MSG && rep.h.nwrites == 1 && w && w->nsegs == 2,
	      "Write list echoed with the same segment count (V1-WC-5, AMB-V1-4)");
	for (i = 0; w && i < w->nsegs && i < 2; i++)
		same = same && w->segs[i].length == 0 &&
		       w->segs[i].handle == rep.offered_w[i].handle &&
		       w->segs[i].offset == rep.offered_w[i].offset;
	CHECK(w && same,
	      "unused Write chunk returned with every length 0, handles and offsets kept (V1-WC-6, AMB-V1-13)");
}

static void test_misc_calls(struct tc *t)
{
	struct tc_call k = { .proc = RTEST_SUM, .long_call = true };
	rtest_ints ints;
	quad_t sum = 0;
	char *s = "hello, rdma", *r = NULL;
	int v[1000], i;
	bool ok;

	for (i = 0; i < 1000; i++)
		v[i] = i * 7 - 3000;
	ints.rtest_ints_len = 1000;
	ints.rtest_ints_val = v;
	k.xargs = (xdrproc_t)xdr_rtest_ints;
	k.args = &ints;
	ok = !tc_rpc(t, &k, (xdrproc_t)xdr_quad_t, &sum, &rep, T_MS) &&
	     rep.ar_stat == SUCCESS;
	CHECK(ok && sum == 496500, "SUM of 1000 ints as a Long Call = %lld",
	      (long long)sum);

	memset(&k, 0, sizeof(k));
	k.proc = RTEST_ECHOSTR;
	k.xargs = (xdrproc_t)xdr_wrapstring;
	k.args = &s;
	CHECK(!tc_rpc(t, &k, (xdrproc_t)xdr_wrapstring, &r, &rep, T_MS) && r &&
		      !strcmp(r, s),
	      "ECHOSTR");
	xdr_free((xdrproc_t)xdr_wrapstring, (char *)&r);

	memset(&k, 0, sizeof(k));
	k.proc = RTEST_NULL;
	k.auth = authunix_create_default();
	CHECK(!tc_rpc(t, &k, NULL, NULL, &rep, T_MS) && rep.ar_stat == SUCCESS,
	      "AUTH_SYS call accepted (_gss_authenticate through our SVCXPRT)");
	auth_destroy(k.auth);

	memset(&k, 0, sizeof(k));
	k.prog = 0x20005244;
	CHECK(!tc_rpc(t, &k, NULL, NULL, &rep, T_MS) &&
		      rep.ar_stat == PROG_UNAVAIL,
	      "unknown program: PROG_UNAVAIL");
	memset(&k, 0, sizeof(k));
	k.proc = 99;
	CHECK(!tc_rpc(t, &k, NULL, NULL, &rep, T_MS) &&
		      rep.ar_stat == PROC_UNAVAIL,
	      "unknown procedure: PROC_UNAVAIL");
}

/* ---- Replies that do not fit ---------------------------------------------- */

static void test_no_room(struct tc *t)
{
	struct tc_call k = { 0 };

	fill(t, &k, 8000, 11);
	CHECK(rep.len == 20 && rep.h.proc == RW_ERROR &&
		      rep.h.err.code == RW_ERR_CHUNK && rep.h.credit,
	      "reply over the inline threshold, no Reply chunk: ERR_CHUNK (S-4, AMB-V1-14)");
	CHECK(null_ok(t), "... and the connection goes on");

	memset(&k, 0, sizeof(k));
	k.reply_chunk = 16384;
	k.reply_guard = 16384;
	fill(t, &k, 65536, 12);
	CHECK(rep.len == 20 && rep.h.proc == RW_ERROR &&
		      rep.h.err.code == RW_ERR_CHUNK,
	      "reply larger than the Reply chunk: ERR_CHUNK (V1-RP-2, AMB-V1-14)");
	CHECK(rep.guard_ok, "nothing written past the Reply chunk");
	CHECK(null_ok(t),
	      "... and no RDMA Write hit unexposed memory (connection alive)");
}

/* ---- Receiver checks (RFC 8166 §4.5, doc/requirements.md §7) ------------- */

/* Send n words (the first trunc octets if trunc), then what came back
 * within 1.5 s: its length, -ETIMEDOUT, -ENOTCONN, or -EIO if the message
 * could not even be sent (so that "no answer" cannot pass then). */
static int answer(struct tc *t, const uint32_t *w, unsigned int n,
		  uint32_t trunc, uint8_t *got)
{
	uint8_t msg[256];
	uint32_t len = put_words(msg, n, w);

	if (trunc)
		len = trunc;
	if (tc_send(t, msg, len))
		return -EIO;
	return tc_recv(t, got, 4096, 1500);
}

static void expect_err(struct tc *t, const char *what, const uint32_t *w,
		       unsigned int n, uint32_t code)
{
	uint8_t got[4096];
	int len = answer(t, w, n, 0, got);

	CHECK(len == 20 && word(got, 0) == w[0] && word(got, 1) == w[1] &&
		      word(got, 2) >= 1 && word(got, 2) <= 16 &&
		      word(got, 3) == 4 && word(got, 4) == code,
	      "%s: RDMA_ERROR %s, XID and version echoed, credit %u (V1-ERR-5)",
	      what, code == RW_ERR_CHUNK ? "ERR_CHUNK" : "?",
	      len >= 12 ? word(got, 2) : 0);
}

static void expect_silence(struct tc *t, const char *what, const uint32_t *w,
			   unsigned int n, uint32_t trunc)
{
	uint8_t got[4096];
	int len = answer(t, w, n, trunc, got);

	CHECK(len == -ETIMEDOUT, "%s: sent, no answer (%d)", what, len);
	CHECK(null_ok(t), "... and the connection still serves");
}

static void test_vers(struct tc *t)
{
	uint32_t w[] = { 0x11110001, 3, 32, 0, 0, 0, 0 };
	uint8_t got[4096];
	int len = answer(t, w, 7, 0, got);

	CHECK(len == 28 && word(got, 0) == w[0] && word(got, 1) == 3 &&
		      word(got, 2) != 0 && word(got, 3) == 4 &&
		      word(got, 4) == 1 && word(got, 5) == 1 &&
		      word(got, 6) == 2,
	      "version 3 call: ERR_VERS low 1 high 2, version 3 echoed (V1-ERR-6, AMB-V1-1, V2-NEG-4): %d octets",
	      len);
	w[0]++;
	w[1] = 0x12345;
	len = answer(t, w, 7, 0, got);
	CHECK(len == 28 && word(got, 1) == 0x12345 && word(got, 4) == 1,
	      "version 0x12345: ERR_VERS (V1-EXT-2)");
}

/* Calls with bad headers: each answered with RDMA_ERROR/ERR_CHUNK
 * (V1-ERR-3/7). */
static void test_header_errors(struct tc *t)
{
	uint32_t nomsg[] = { 0x22220001, 1, 32, 1, 0, 0, 0 };
	uint32_t msgp[] = { 0x22220002, 1, 32, 2, 0, 0, 0 };
	uint32_t done[] = { 0x22220003, 1, 32, 3, 0, 0, 0 };
	uint32_t p5[] = { 0x22220004, 1, 32, 5, 0, 0, 0 };
	uint32_t wseg0[] = { 0x22220005, 1, 32, 0, 0, 1, 0, 0, 0 };
	uint32_t trunc[] = { 0x22220006, 1, 32, 0, 1, 0, 0, 0 };
	uint32_t pos98[] = { 0x22220007, 1,    32, 0, 1, 98,	     7, 64,
			     0,		 4096, 0,  0, 0, 0x22220007, 0, 2 };
	uint32_t pos0[] = { 0x22220008, 1,    32, 0, 1, 0,	    7, 64,
			    0,		4096, 0,  0, 0, 0x22220008, 0, 2 };
	uint32_t nopz[] = { 0x22220009, 1, 32, 1, 0, 0, 1, 1, 7, 4096, 0, 4096 };

	expect_err(t, "RDMA_NOMSG without chunks (N-3, V1-PROC-2)", nomsg, 7,
		   RW_ERR_CHUNK);
	expect_err(t, "RDMA_MSGP (V1-PROC-5)", msgp, 7, RW_ERR_CHUNK);
	expect_err(t, "RDMA_DONE (V1-PROC-7)", done, 7, RW_ERR_CHUNK);
	expect_err(t, "v1 proc 5 (N-2a)", p5, 7, RW_ERR_CHUNK);
	expect_err(t, "Write chunk of 0 segments (N-6, AMB-V1-11)", wseg0, 9,
		   RW_ERR_CHUNK);
	expect_err(t, "Read list cut short (N-7)", trunc, 8, RW_ERR_CHUNK);
	expect_err(t, "Read position 98 (N-5, V1-RC-2)", pos98, 16,
		   RW_ERR_CHUNK);
	expect_err(t, "RDMA_MSG with a position-0 chunk (N-10, AMB-V1-10)",
		   pos0, 16, RW_ERR_CHUNK);
	expect_err(t, "RDMA_NOMSG with only a Reply chunk (N-10)", nopz, 12,
		   RW_ERR_CHUNK);
	CHECK(null_ok(t), "connection serves after nine refused headers");
}

static void test_discards(struct tc *t)
{
	uint32_t runt[] = { 0x33330001, 1, 32 };
	uint32_t short27[] = { 0x33330002, 1, 32, 0, 0, 0, 0 };
	uint32_t err[] = { 0x33330003, 1, 32, 4, 2 };
	uint32_t errv[] = { 0x33330004, 1, 32, 4, 1, 1, 1 };

	expect_silence(t, "12-octet runt (N-1, V1-ERR-2)", runt, 3, 0);
	expect_silence(t, "27-octet RDMA_MSG (V1-ERR-2, AMB-V1-7)", short27, 7,
		       27);
	expect_silence(
		t, "RDMA_ERROR/ERR_CHUNK sent to the server (N-8, V1-PROC-9)",
		err, 5, 0);
	expect_silence(t, "RDMA_ERROR/ERR_VERS sent to the server (V1-PROC-9)",
		       errv, 7, 0);
}

/*
 * A 0-octet Send as the first message of a fresh connection, whose request
 * objects hold no message buffer yet: a runt, dropped in silence
 * (V1-ERR-2).  Copying it once called memcpy(NULL, data, 0), undefined
 * behaviour on which the UBSan build aborted the whole server.
 */
static void test_empty_send(const struct ts_server *s)
{
	uint8_t got[64];
	struct tc t;
	int n;

	if (tc_connect(&t, s, T_MS)) {
		CHECK(false, "0-octet Send: connect");
		return;
	}
	CHECK(!tc_send(&t, got, 0), "0-octet Send posted");
	n = tc_recv(&t, got, sizeof(got), 1500);
	CHECK(n == -ETIMEDOUT, "0-octet Send (V1-ERR-2): no answer (%d)", n);
	CHECK(null_ok(&t), "... and the connection still serves");
	tc_close(&t);
	CHECK(waitpid(s->pid, NULL, WNOHANG) == 0, "... and the server lives");
}

/* A Short call's bytes with the payload's word i replaced by v. */
static uint32_t patched_call(struct tc *t, uint32_t xid, uint32_t proc,
			     xdrproc_t xa, void *a, unsigned int i, uint32_t v,
			     uint8_t *msg)
{
	uint32_t len = tc_short_call(t, xid, proc, xa, a, msg, 4096);
	uint32_t be = tc_be(v);

	memcpy(msg + 28 + 4 * i, &be, 4);
	return len;
}

static void test_payload_errors(struct tc *t)
{
	uint8_t msg[4096], got[4096];
	rtest_data d = { 100, NULL };
	char data[100] = { 0 };
	struct tc_call k;
	uint32_t len;
	int n;

	/* payload XID differs from rdma_xid */
	len = patched_call(t, 0x44440001, RTEST_NULL, NULL, NULL, 0, 0x44440002,
			   msg);
	tc_send(t, msg, len);
	n = tc_recv(t, got, sizeof(got), 2000);
	CHECK(n == 20 && word(got, 0) == 0x44440001 && word(got, 3) == 4 &&
		      word(got, 4) == RW_ERR_CHUNK,
	      "rdma_xid != RPC XID: ERR_CHUNK (N-4, V1-HDR-2)");

	/* ECHO whose length word claims 1000 octets, 100 present:
	 * word 10 of the payload (after the 40-octet call header) */
	d.rtest_data_val = data;
	len = patched_call(t, 0x44440003, RTEST_ECHO, (xdrproc_t)xdr_rtest_data,
			   &d, 10, 1000, msg);
	tc_send(t, msg, len);
	n = tc_recv(t, got, sizeof(got), 2000);
	if (n > 0)
		tc_decode(got, (uint32_t)n, NULL, NULL, &rep);
	CHECK(n > 0 && rep.h.proc == RW_MSG && rep.rpc &&
		      rep.rp_stat == MSG_ACCEPTED &&
		      rep.ar_stat == GARBAGE_ARGS,
	      "arguments that do not decode: GARBAGE_ARGS in RDMA_MSG (V1-ERR-8)");

	/* a Long Call whose pulled payload has another XID: the check is
	 * made once the PZRC is here */
	memset(&k, 0, sizeof(k));
	k.proc = RTEST_NULL;
	k.long_call = true;
	k.payload_xid = 0x44440009;
	CHECK(!tc_rpc(t, &k, NULL, NULL, &rep, T_MS) &&
		      rep.h.proc == RW_ERROR && rep.h.err.code == RW_ERR_CHUNK,
	      "Long Call whose PZRC carries another XID: ERR_CHUNK (V1-HDR-2)");

	/* an RPC Reply in an RDMA_MSG (backward direction): dropped */
	len = patched_call(t, 0x44440005, RTEST_NULL, NULL, NULL, 1, REPLY,
			   msg);
	n = len && !tc_send(t, msg, len) ? tc_recv(t, got, sizeof(got), 1500) :
					   -EIO;
	CHECK(n == -ETIMEDOUT,
	      "RPC Reply sent to the server (no backward Calls): dropped (%d)",
	      n);

	/* not an RPC call at all (msg_type 7) */
	len = patched_call(t, 0x44440004, RTEST_NULL, NULL, NULL, 1, 7, msg);
	tc_send(t, msg, len);
	n = tc_recv(t, got, sizeof(got), 2000);
	CHECK(n == 20 && word(got, 4) == RW_ERR_CHUNK,
	      "undecodable RPC header: ERR_CHUNK (no RPC reply possible)");
	CHECK(null_ok(t), "connection serves after payload errors");
}

/* ---- Read-chunk size limit (V1-SEC-4, RFC 8166 §8) ----------------------- */

/*
 * An ECHO whose data (claimed 2 GiB) sits in a Read chunk of two 1 GiB
 * segments with a handle that does not exist: a server that pulled, or even
 * allocated, it would die or grow; it must answer ERR_CHUNK at once.
 */
static void test_too_big(struct tc *t, const struct ts_server *s)
{
	struct rw_segment segs[2] = { { 0x1234, 1u << 30, 0x10000 },
				      { 0x1234, 1u << 30,
					0x10000 + (1ull << 30) } };
	struct rw_read_seg reads[2];
	struct rw_read_builder rb;
	rtest_data d = { 0, NULL };
	uint8_t msg[4096], got[4096], pay[256];
	long before = ts_proc_kb(s->pid, "VmHWM"), after;
	uint32_t hl, pl, be;
	struct rw_hdr h;
	int n;

	pl = tc_short_call(t, 0x55550001, RTEST_ECHO, (xdrproc_t)xdr_rtest_data,
			   &d, pay, sizeof(pay));
	pl -= 28;
	memmove(pay, pay + 28, pl);
	be = tc_be(0x80000000u); /* the claimed length */
	memcpy(pay + 40, &be, 4);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, 0x55550001, 32);
	rw_read_builder_init(&rb, reads, 2);
	rw_read_builder_add(&rb, 44, segs, 2);
	rw_hdr_set_reads(&h, &rb);
	hl = (uint32_t)rw_encode_call(&h, msg, sizeof(msg));
	memcpy(msg + hl, pay, pl);
	tc_send(t, msg, hl + pl);
	n = tc_recv(t, got, sizeof(got), 3000);
	CHECK(n == 20 && word(got, 0) == 0x55550001 &&
		      word(got, 4) == RW_ERR_CHUNK,
	      "Read chunk of 2 GiB over max_read_bytes: ERR_CHUNK (V1-SEC-4)");
	CHECK(null_ok(t),
	      "... without reading it (a Read with that handle would kill the connection)");
	after = ts_proc_kb(s->pid, "VmHWM");
	CHECK(before > 0 && after - before < 65536,
	      "... nor allocating it: server peak RSS %ld -> %ld kB", before,
	      after);
}

static void test_limit_edge(struct tc *t)
{
	struct tc_call k = { .long_call = true, .reply_chunk = 5u << 20 };

	CHECK(echo(t, &k, (4u << 20) - 4096, 13),
	      "Long Call just under max_read_bytes (4 MiB) is served");
	memset(&k, 0, sizeof(k));
	k.long_call = true;
	k.reply_chunk = 5u << 20;
	echo(t, &k, (4u << 20) + 64, 14);
	CHECK(rep.len == 20 && rep.h.proc == RW_ERROR &&
		      rep.h.err.code == RW_ERR_CHUNK,
	      "Long Call just over max_read_bytes: ERR_CHUNK");
	CHECK(null_ok(t), "... connection alive");
}

/* ---- Credits and in-flight requests ----------------------------------------- */

/*
 * n calls at once, the first a 400 ms SLEEP so that all are in flight
 * together; how many were answered, how many of the replies granted want,
 * and the last reply's grant.
 */
static int pipeline(struct tc *t, uint32_t xid, int n, uint32_t want,
		    int *grants, uint32_t *last)
{
	uint8_t msg[4096], got[4096];
	int ms = 400, good = 0, i, len;

	*grants = 0;
	len = (int)tc_short_call(t, xid, RTEST_SLEEP, (xdrproc_t)xdr_int, &ms,
				 msg, sizeof(msg));
	tc_send(t, msg, (uint32_t)len);
	for (i = 1; i < n; i++) {
		len = (int)tc_short_call(t, xid + (uint32_t)i, RTEST_NULL, NULL,
					 NULL, msg, sizeof(msg));
		tc_send(t, msg, (uint32_t)len);
	}
	for (i = 0; i < n; i++) {
		len = tc_recv(t, got, sizeof(got), T_MS);
		if (len <= 0)
			break;
		tc_decode(got, (uint32_t)len, NULL, NULL, &rep);
		good += rep.rpc && rep.ar_stat == SUCCESS;
		*grants += rep.h.credit == want;
		*last = rep.h.credit;
	}
	return good;
}

/*
 * A connection starts with 8 of its 16 credits (8 Receives for calls: an
 * idle one registers little); a client that uses all it
 * was granted gets more Receives, and the next replies grant them, up to
 * the configured 16 (V1-CR-8: never more than is posted).
 */
static void test_credits(const struct ts_server *s)
{
	uint32_t last = 0;
	int good, grants;
	rtest_stats st;
	struct tc t;
	bool ok;

	if (tc_connect(&t, s, T_MS)) {
		CHECK(false, "connect for the credit test");
		return;
	}
	ok = null_ok(&t);
	CHECK(ok && t.grant == 8,
	      "first reply grants 8, what a connection starts with: %u",
	      t.grant);
	good = pipeline(&t, 0x66660000, 8, 16, &grants, &last);
	CHECK(good == 8 && last == 16,
	      "8 pipelined calls (the whole first grant) answered: %d; the "
	      "server posted more Receives: the last reply grants %u (16)",
	      good, last);
	good = pipeline(&t, 0x66670000, 16, 16, &grants, &last);
	CHECK(good == 16, "16 pipelined calls (the whole grant) answered: %d",
	      good);
	CHECK(grants == 16, "every reply grants 16 (never 0, V1-CR-3): %d",
	      grants);
	ok = stats(&t, &st);
	CHECK(ok && st.max_inflight >= 15 && st.max_granted == 16,
	      "server saw %u calls in flight on one connection, granted at most %u",
	      st.max_inflight, st.max_granted);
	tc_close(&t);
}

/* ---- Connection limits ------------------------------------------------------ */

/* Refused: the connect fails, or the connection ends before a reply. */
static bool refused(const struct ts_server *s)
{
	struct tc t;
	bool r;

	if (tc_connect(&t, s, 3000))
		return true;
	r = !null_ok(&t) && tc_wait_dead(&t, 5000) >= 0;
	tc_close(&t);
	return r;
}

static void test_conn_limit(const struct ts_server *s, const char *what)
{
	struct tc a, b;
	bool later = false;
	int i;

	CHECK(!tc_connect(&a, s, T_MS) && null_ok(&a), "%s: first connection",
	      what);
	CHECK(!tc_connect(&b, s, T_MS) && null_ok(&b), "%s: second connection",
	      what);
	CHECK(refused(s), "%s: third connection refused", what);
	CHECK(null_ok(&a), "%s: the others go on", what);
	tc_close(&a);
	/* the server notices the disconnect, then the slot is free */
	for (i = 0; i < 30 && !later; i++) {
		struct tc c;

		usleep(200000);
		if (!tc_connect(&c, s, 3000)) {
			later = null_ok(&c);
			tc_close(&c);
		}
	}
	CHECK(later, "%s: a slot freed by a disconnect is usable again", what);
	tc_close(&b);
}

/*
 * max_conns_per_peer 2: a third connection from the same
 * address is served, and the address's least recently used idle connection
 * is closed instead - one program's idle connections must not lock the
 * host's other programs out.
 */
static void test_peer_lru(const struct ts_server *s)
{
	struct tc a, b, c;
	rtest_stats st;
	bool up;

	up = !tc_connect(&a, s, T_MS) && null_ok(&a);
	up = !tc_connect(&b, s, T_MS) && null_ok(&b) && up;
	/* a is used again: b is now the least recently used */
	CHECK(up && null_ok(&a), "per-peer LRU: two connections, both served");
	CHECK(!tc_connect(&c, s, T_MS) && null_ok(&c),
	      "max_conns_per_peer 2: a third connection from the address is "
	      "served, not refused");
	CHECK(tc_wait_dead(&b, 5000) >= 0,
	      "... the least recently used idle one (the second) was closed "
	      "to make room");
	CHECK(!tc_dead(&a) && null_ok(&a),
	      "... the one used more recently goes on");
	up = stats(&c, &st);
	CHECK(up && st.conns == 3 && st.conns_reaped == 1,
	      "RTEST_STATS: %u accepted (3), %u closed by the server (1)",
	      st.conns, st.conns_reaped);
	tc_close(&c);
	tc_close(&b);
	tc_close(&a);
}

/*
 * idle_timeout 1 s: a connection without a call is closed
 * by the server between 1 and 1.25 s (its timer ticks every 250 ms) after
 * its last call, one that calls every 100 ms stays open.
 */
static void test_idle(const struct ts_server *s)
{
	struct tc busy, idle;
	int64_t t0 = 0, closed_ms = -1;
	bool up, busy_ok = true;
	rtest_stats st;

	up = !tc_connect(&busy, s, T_MS) && null_ok(&busy);
	up = !tc_connect(&idle, s, T_MS) && up;
	if (up) {
		up = null_ok(&idle);
		t0 = ts_now_ms();
	}
	CHECK(up, "idle_timeout 1: two connections served");
	while (up && ts_now_ms() - t0 < 4000) {
		usleep(100000);
		busy_ok = busy_ok && null_ok(&busy);
		if (closed_ms < 0 && tc_dead(&idle))
			closed_ms = ts_now_ms() - t0;
	}
	CHECK(closed_ms >= 900 && closed_ms <= 2500,
	      "idle_timeout 1: the connection without calls closed by the "
	      "server %lld ms after its last call (1000-1250 expected, then "
	      "the disconnect's way to the client, seen in 100 ms steps)",
	      (long long)closed_ms);
	CHECK(up && busy_ok && !tc_dead(&busy),
	      "... the one calling every 100 ms stayed open for 4 s");
	up = stats(&busy, &st);
	CHECK(up && st.conns_reaped == 1,
	      "RTEST_STATS: %u closed by the server (1)", st.conns_reaped);
	tc_close(&idle);
	tc_close(&busy);
}

/*
 * What an idle connection costs the server.  File
 * descriptors: they count against the fd limit, which bounds the
 * connections one server holds; one each, the transport's wake-up eventfd
 * (the accepted rdma_cm id and the completion queue use the listener's
 * channels), the responder adds none of its own.  Registered memory: the
 * 8 Receive buffers a connection starts with, the 4 of the backward
 * direction, and the Send buffers it has needed so far - after one call,
 * the first 4: 64 KiB, not one of each per credit (16 here; the issue's
 * limit is 64 KiB).
 */
#define FDS_CONNS    8
#define IDLE_REG_MAX (64 * 1024)

/* The server's fd count once it stops changing (connections that ended
 * before are torn down at its pace). */
static int settled_fds(pid_t pid)
{
	int last = -1, now = ts_proc_fds(pid), i;

	for (i = 0; i < 50 && now != last; i++) {
		usleep(200000);
		last = now;
		now = ts_proc_fds(pid);
	}
	return now;
}

static void test_fds_per_conn(const struct ts_server *s)
{
	struct tc t[FDS_CONNS];
	int before, after = -1, gone = -1, i, up = 0;
	long long reg0, reg1 = -1;

	/* The listener's completion channel for the device comes with the
	 * first connection it accepts there and stays: not counted. */
	if (!tc_connect(&t[0], s, T_MS)) {
		null_ok(&t[0]);
		tc_close(&t[0]);
	}
	before = settled_fds(s->pid);
	reg0 = tu_mr_bytes(s->pid);
	for (i = 0; i < FDS_CONNS; i++)
		up += !tc_connect(&t[i], s, T_MS) && null_ok(&t[i]);
	if (up == FDS_CONNS) {
		after = ts_proc_fds(s->pid);
		reg1 = tu_mr_bytes(s->pid);
	}
	CHECK(reg0 >= 0 && reg1 >= 0 &&
		      (reg1 - reg0) / FDS_CONNS <= IDLE_REG_MAX,
	      "%d idle connections: %lld octets registered each (%d at most)",
	      up, reg0 >= 0 && reg1 >= 0 ? (reg1 - reg0) / FDS_CONNS : -1,
	      IDLE_REG_MAX);
	CHECK(up == FDS_CONNS && before > 0 && after - before <= FDS_CONNS,
	      "%d connections cost the server %d fds: %.2f per connection "
	      "(1 at most)",
	      up, after - before, (double)(after - before) / FDS_CONNS);
	for (i = 0; i < FDS_CONNS; i++)
		tc_close(&t[i]);
	for (i = 0; i < 50 && gone != before; i++) {
		usleep(100000);
		gone = ts_proc_fds(s->pid);
	}
	CHECK(gone == before,
	      "... and they come back when the clients leave "
	      "(%d, %d before)",
	      gone, before);
}

/* ---- The fuzzers' seeds -------------------------------------------------- */

static int seed_filter(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/*
 * Every header of the fuzzers' seed corpus (tests/fuzz/seeds/hdr: the
 * vectors of doc/requirements.md §6-7, valid and not - Calls, Replies, errors,
 * version 2) sent to the server as it is, under a fresh XID.  On the host they
 * only reach the wire layer (fuzz_hdr); here they reach the responder.
 * Whatever each gets - an answer, silence, or the end of its connection
 * when it names memory that does not exist - the server must serve the
 * next call, and at the end exit cleanly (the ASan build: no error, no
 * leak).
 */
static void test_seeds(const struct ts_server *s)
{
	unsigned int answered = 0, silent = 0, ended = 0, served = 0;
	uint8_t msg[4096], got[4096];
	struct dirent **e = NULL;
	char path[PATH_MAX];
	struct tc t;
	int n, i, len;
	uint32_t xid = 0x77770000, be;
	FILE *f;

	n = scandir(FUZZ_SEEDS "/hdr", &e, seed_filter, alphasort);
	CHECK(n > 0, "%d seeds in %s/hdr", n, FUZZ_SEEDS);
	if (n <= 0 || tc_connect(&t, s, T_MS))
		return;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/hdr/%s", FUZZ_SEEDS,
			 e[i]->d_name);
		f = fopen(path, "rb");
		len = f ? (int)fread(msg, 1, sizeof(msg), f) : -1;
		if (f)
			fclose(f);
		if (len >= 4) {
			be = tc_be(++xid);
			memcpy(msg, &be, 4);
		}
		if (len < 0 || tc_send(&t, msg, (uint32_t)len)) {
			NOTE("seed %s: not sent", e[i]->d_name);
			continue;
		}
		len = tc_recv(&t, got, sizeof(got), 300);
		if (len >= 0)
			answered++;
		else if (len == -ETIMEDOUT && !tc_dead(&t))
			silent++;
		if (tc_dead(&t) || !null_ok(&t)) {
			ended++;
			tc_close(&t);
			if (tc_connect(&t, s, T_MS))
				break;
		}
		served += null_ok(&t);
	}
	CHECK(served == (unsigned int)n,
	      "%d seeds: %u answered, %u silent, %u ended their connection; the server served a call after %u of them",
	      n, answered, silent, ended, served);
	tc_close(&t);
	while (n-- > 0)
		free(e[n]);
	free(e);
}

/* ---- Operational failures (V1-ERR-11) ------------------------------------- */

/*
 * Send xid as a Call whose chunk the server's device must refuse (handle
 * 0x1234 exists nowhere): an ECHO of 100 octets in a Read chunk (read), or
 * a FILL of 8000 octets, too large to send inline, with a Reply chunk
 * (!read).  True if the connection then died.
 */
static bool fail_call(struct tc *t, uint32_t xid, bool read)
{
	struct rw_segment bad = { 0x1234, read ? 100 : 16384, 0x10000 };
	rtest_fill_args fa = { .len = 8000, .seed = 3 };
	rtest_data d = { 0, NULL };
	struct rw_read_seg reads[1];
	struct rw_read_builder rb;
	uint8_t msg[4096], pay[256];
	uint32_t hl, pl, be;
	struct rw_hdr h;

	if (read)
		pl = tc_short_call(t, xid, RTEST_ECHO,
				   (xdrproc_t)xdr_rtest_data, &d, pay,
				   sizeof(pay));
	else
		pl = tc_short_call(t, xid, RTEST_FILL,
				   (xdrproc_t)xdr_rtest_fill_args, &fa, pay,
				   sizeof(pay));
	pl -= 28;
	memmove(pay, pay + 28, pl);
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, xid, 32);
	if (read) {
		be = tc_be(100); /* the item's length word */
		memcpy(pay + 40, &be, 4);
		rw_read_builder_init(&rb, reads, 1);
		rw_read_builder_add(&rb, 44, &bad, 1);
		rw_hdr_set_reads(&h, &rb);
	} else {
		rw_hdr_set_reply(&h, &bad, 1);
	}
	hl = (uint32_t)rw_encode_call(&h, msg, sizeof(msg));
	memcpy(msg + hl, pay, pl);
	return hl && !tc_send(t, msg, hl + pl) && tc_wait_dead(t, T_MS) >= 0;
}

/*
 * A Call whose RDMA Read (or Write into its Reply chunk) the client's
 * device refuses ends the connection (an operational error, RFC 8166
 * 4.5.3).  The client reconnects and sends the same XID again, now well
 * formed: the server answers RDMA_ERROR / ERR_CHUNK for it, once, so that a
 * retransmission cannot fail the same way for ever (V1-ERR-11); another
 * XID is served, and so is the same XID after that.
 */
static void test_failed_xid(const struct ts_server *s, bool read)
{
	const char *what = read ? "RDMA Read of its Read chunk" :
				  "RDMA Write into its Reply chunk";
	uint32_t xid = read ? 0x66660001 : 0x66660002;
	rtest_fill_args fa = { .len = 8000, .seed = 3 };
	struct tc_call k = { .xid = xid, .reply_chunk = 16384 };
	rtest_data d;
	struct tc t;
	char data[100];

	if (tc_connect(&t, s, T_MS)) {
		CHECK(false, "failed XID: connect");
		return;
	}
	CHECK(fail_call(&t, xid, read),
	      "%s refused by the client's device: the connection ends", what);
	tc_close(&t);
	if (tc_connect(&t, s, T_MS)) {
		CHECK(false, "failed XID: reconnect");
		return;
	}
	ts_fill(data, sizeof(data), 9);
	d.rtest_data_len = sizeof(data);
	d.rtest_data_val = data;
	if (read) {
		k.proc = RTEST_ECHO;
		k.xargs = (xdrproc_t)xdr_rtest_data;
		k.args = &d;
		k.read_item = true;
	} else {
		k.proc = RTEST_FILL;
		k.xargs = (xdrproc_t)xdr_rtest_fill_args;
		k.args = &fa;
	}
	CHECK(!tc_rpc(&t, &k, NULL, NULL, &rep, T_MS) &&
		      rep.h.proc == RW_ERROR && rep.h.xid == xid &&
		      rep.h.err.code == RW_ERR_CHUNK,
	      "the same XID again, well formed, after the reconnect: RDMA_ERROR ERR_CHUNK, no reply possible (V1-ERR-11)");
	CHECK(null_ok(&t), "... another XID is served on that connection");
	CHECK(!tc_rpc(&t, &k, NULL, NULL, &rep, T_MS) && rep.rpc &&
		      rep.ar_stat == SUCCESS,
	      "... and the same XID once more is served: the record answers once");
	tc_close(&t);
}

/* ---- Servers ---------------------------------------------------------------- */

static void stop(struct ts_server *s, const char *name)
{
	int st = ts_server_stop(s);

	CHECK(st == 0,
	      "%s: SIGTERM shuts it down cleanly, exit status %d (ASan: no leak)",
	      name, st);
}

static void main_server(void)
{
	static const char *const args[] = { "-c", "16", "--max-read", "4194304",
					    NULL };
	struct ts_server s;
	struct tc t;

	if (ts_server_start(&s, ts_addr4(), args)) {
		CHECK(false, "start rtest_server on %s", ts_addr4());
		return;
	}
	NOTE("server on %s port %u", s.host, s.port);
	if (tc_connect(&t, &s, T_MS)) {
		CHECK(false, "connect");
		stop(&s, "main server");
		return;
	}
	test_short(&t);
	test_long(&t);
	test_read_chunks(&t);
	test_write_list(&t);
	test_misc_calls(&t);
	test_no_room(&t);
	test_vers(&t);
	test_header_errors(&t);
	test_discards(&t);
	test_empty_send(&s);
	test_payload_errors(&t);
	test_too_big(&t, &s);
	test_limit_edge(&t);
	tc_close(&t);
	test_failed_xid(&s, true);
	test_failed_xid(&s, false);
	test_seeds(&s);
	test_credits(&s);
	test_fds_per_conn(&s);
	stop(&s, "main server");
}

static void limit_servers(void)
{
	static const char *const per_peer[] = { "--max-conns-per-peer", "2",
						NULL };
	static const char *const total[] = { "--max-conns", "2", NULL };
	static const char *const idle[] = { "--idle-timeout", "1", NULL };
	struct ts_server s;

	if (!ts_server_start(&s, ts_addr4(), per_peer)) {
		test_peer_lru(&s);
		stop(&s, "per-peer server");
	} else {
		CHECK(false, "start per-peer server");
	}
	if (!ts_server_start(&s, ts_addr4(), idle)) {
		test_idle(&s);
		stop(&s, "idle-timeout server");
	} else {
		CHECK(false, "start idle-timeout server");
	}
	if (!ts_server_start(&s, ts_addr4(), total)) {
		test_conn_limit(&s, "max_conns 2");
		stop(&s, "max_conns server");
	} else {
		CHECK(false, "start max_conns server");
	}
}

/* New connections whose fds svc_run could not poll are refused. */
static void fd_limit_server(void)
{
	static const char *const args[] = { "--spend-fds", "1030", NULL };
	struct ts_server s;

	if (ts_server_start(&s, ts_addr4(), args)) {
		CHECK(false, "start a server with its fds spent");
		return;
	}
	CHECK(refused(&s),
	      "connection whose fd would be beyond libtirpc's descriptor table refused (svc_run would never poll it)");
	CHECK(kill(s.pid, 0) == 0, "... and the server goes on");
	stop(&s, "fd-limit server");
}

static void ipv6_server(void)
{
	struct ts_server s;
	struct tc_call k = { .long_call = true, .reply_chunk = 100000 };
	struct tc t;

	if (ts_server_start(&s, ts_addr6(), NULL)) {
		CHECK(false, "start rtest_server on %s", ts_addr6());
		return;
	}
	CHECK(!tc_connect(&t, &s, T_MS) && null_ok(&t) &&
		      echo(&t, &k, 50000, 15),
	      "rdma6: NULL and a Long ECHO over IPv6");
	tc_close(&t);
	stop(&s, "IPv6 server");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ts_have_rdma())
		return 77;
	ts_watchdog(600);
	main_server();
	limit_servers();
	fd_limit_server();
	ipv6_server();
	return tu_done();
}
