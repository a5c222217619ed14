/*
 * t_ddp.c - direct data placement driven by the Upper-Layer Binding table,
 * end to end on Soft-RoCE: the project's CLIENT
 * (clnt_rdma_create, rpcgen -M stubs of tests/rpc/ddpt.x) against
 * ddpt_server, both with RPCRDMA_ULB_CONF naming tests/rpc/ddpt.conf, the
 * table rpcrdma-ulbgen generated from the annotations of ddpt.x.
 *
 * It owns the checks that eligible argument items travel in Read chunks,
 * eligible results in Write chunks of the room the entry computes, that
 * nothing else is reduced, that the bytes arrive intact at every length
 * (0, 1, 3, 4, 4095, 4096, 1 MiB, 8 MiB: the XDR pad cases included) into
 * a buffer of the caller (zero copy) or one the library allocates, that a
 * result larger than its Write chunk ends the call with ERR_CHUNK without
 * writing past the chunk, and that the counters of both ends
 * (CLGET_RDMA_STATS, SVCGET_RDMA_STATS through DDPT_STATS) say so.
 * A Call that fits inline unreduced may stay Short (RFC 8166 §3.5), so ECHO's
 * Read chunk is certain only from 4095 octets on; MULTI, whose first item
 * forces reduction, moves 1, 3 and 4-octet items in Read chunks.
 * Counters are asserted as deltas around single calls; the server's are
 * read with DDPT_STATS before the client's snapshot and after it, so that
 * the STATS calls themselves are not in the client's deltas.
 *
 *   t_ddp [--only GROUP]   GROUP: sizes, misc, regmin or noconf (one per
 *                          process: each needs its own environment);
 *                          without --only, each group in a child process
 *
 * sizes   ECHO of every size, caller's buffer and library buffer; IPv6
 * misc    MULTI, LONG (DDP + Reply chunk), READ (Write chunk too small,
 *         short result), the 8 MiB counters in both registration modes,
 *         the control without an entry (PLAIN), and the server refusing
 *         a Read chunk at an item its table does not designate (raw client)
 * regmin  RPCRDMA_DDP_REG_MIN=65536: the zero-copy threshold
 * noconf  the client without the table (RPCRDMA_ULB_CONF=/dev/null), the
 *         server with it: ECHO moves nothing by Read or Write chunks
 *
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "ddpt.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"
#include "tests/vm/t_svc_util.h"
#include "wire/rw_xdr.h"

#ifndef DDPT_CONF
#error "DDPT_CONF: the generated tests/rpc/ddpt.conf"
#endif

#define WATCHDOG_S 110	  /* the VM suite kills at 120 s */
#define REGMIN	   65536u /* RPCRDMA_DDP_REG_MIN of group regmin */
#define STATS_FILE "/tmp/t_ddp-regmin-stats.txt" /* and RPCRDMA_STATS */
/* The smallest ECHO whose Call cannot be Short with the default inline
 * thresholds (4096 both ways): RPC header, room, length and 4095 octets. */
#define MUST_REDUCE 4095u

static struct ts_server srv, srv6;

/* Both counter sets around one call. */
struct snap {
	struct rpcrdma_clnt_stats c;
	ddpt_stats s;
};

/* ---- Watchdog: also kills the servers ------------------------------------- */

static void watchdog(unsigned int seconds)
{
	static struct ts_server *const servers[] = { &srv, &srv6 };

	td_watchdog(seconds, servers, 2);
}

/* ---- Counters ---------------------------------------------------------------- */

static void server_stats(CLIENT *cl, ddpt_stats *s)
{
	memset(s, 0, sizeof(*s));
	/* zeros would pass every "the server moved nothing" check */
	if (ddpt_stats_1(NULL, s, cl) != RPC_SUCCESS)
		CHECK(false, "DDPT_STATS: %s", clnt_sperror(cl, "stats"));
}

static void snap_before(CLIENT *cl, struct snap *sn)
{
	server_stats(cl, &sn->s);
	td_stats(cl, &sn->c);
}

static void snap_after(CLIENT *cl, struct snap *sn)
{
	td_stats(cl, &sn->c);
	server_stats(cl, &sn->s);
}

#define CD(f) TD_D(&b->c, &a->c, f) /* client delta, a before b */
#define SD(f) TD_D(&b->s, &a->s, f) /* server delta */

/* ---- Connection losses -------------------------------------------------------- */

/*
 * With two devices (tests/vm/run --net two) frames are resent, and
 * Soft-RoCE then re-runs memory window binds (t_mw_stress.c): in MW mode
 * a connection may be lost.  There, and only there, a call that ends with
 * an RPC error is a loss, reported, not a failure; a wrong result still
 * fails.  client() decides from the mode the CLIENT really uses.
 */
static bool losses_ok;
static unsigned int losses;

static bool lost(CLIENT *cl, const char *what, uint32_t len)
{
	if (!losses_ok)
		return false;
	losses++;
	NOTE("LOSS: %s %u octets: %s [%s] (MW on two devices: counted, not failed)",
	     what, len, clnt_sperror(cl, "call"), td_errmsg(cl));
	return true;
}

/* ---- ECHO ------------------------------------------------------------------- */

/*
 * ECHO's argument item of len octets went in one Read chunk, exact length
 * (no pad, V1-RC-5/7), at both ends.  A Call that fits inline unreduced
 * may stay Short (RFC 8166 §3.5: Short "may still reduce"; min= only keeps
 * shorter items inline): below MUST_REDUCE the chunk is optional, but if
 * there is one it is exact.  MULTI forces 1, 3 and 4-octet Read chunks.
 */
static bool read_ok(const struct snap *a, const struct snap *b, uint32_t len)
{
	unsigned long long n = CD(read_chunks);

	if (len >= MUST_REDUCE && n != 1)
		return false;
	return n <= 1 && CD(read_bytes) == (n ? len : 0) &&
	       SD(read_chunks) == n && SD(read_bytes) == (n ? len : 0);
}

/* ECHO len octets, room len; caller: into a buffer of ours (zero copy). */
static void echo_case(CLIENT *cl, const char *tag, uint32_t len, bool caller,
		      uint32_t seed)
{
	const char *how = caller ? "caller's buffer" : "library buffer";
	ddpt_echo_args arg;
	ddpt_echo_res res;
	struct snap sa, sb, *a = &sa, *b = &sb;
	uint8_t *buf = NULL;
	enum clnt_stat st;
	bool ok;

	arg.room = len;
	arg.data.data_len = len;
	arg.data.data_val = malloc(len ? len : 1);
	t_fill(arg.data.data_val, len, seed);
	memset(&res, 0, sizeof(res));
	if (caller) {
		buf = td_guarded(len);
		res.data.data_val = (char *)buf;
		res.data.data_len = len; /* its capacity: the room */
	}
	snap_before(cl, a);
	st = ddpt_echo_1(&arg, &res, cl);
	snap_after(cl, b);
	ok = st == RPC_SUCCESS && res.data.data_len == len &&
	     t_fill_check(res.data.data_val, len, seed) < 0;
	if (caller)
		ok = ok && res.data.data_val == (char *)buf &&
		     td_guard_ok(buf, len);
	if (st != RPC_SUCCESS && lost(cl, "ECHO", len))
		goto out;
	CHECK(ok, "%sECHO %u octets, %s: intact%s [%s]", tag, len, how,
	      caller ? ", nothing written past it (V1-WC-9)" : "",
	      st == RPC_SUCCESS ? "ok" : td_errmsg(cl));
	if (len)
		CHECK(read_ok(a, b, len) && CD(write_chunks) == 1 &&
			      CD(write_bytes) == len && CD(long_calls) == 0 &&
			      CD(reply_chunks) == 0 &&
			      CD(ddp_zero_copies) + CD(ddp_copies) == 1 &&
			      SD(write_chunks) == 1 && SD(write_bytes) == len,
		      "%sECHO %u, %s: Read chunk %llu/%llu octets%s, Write "
		      "chunk %llu/%llu, Long calls %llu, Reply chunks %llu, "
		      "placed %llu+%llu; server read %llu/%llu, wrote "
		      "%llu/%llu (V1-RC-7, V1-WC-2/10)",
		      tag, len, how, CD(read_chunks), CD(read_bytes),
		      len < MUST_REDUCE ? " (optional: the Call fits inline)" :
					  "",
		      CD(write_chunks), CD(write_bytes), CD(long_calls),
		      CD(reply_chunks), CD(ddp_zero_copies), CD(ddp_copies),
		      SD(read_chunks), SD(read_bytes), SD(write_chunks),
		      SD(write_bytes));
	else
		CHECK(CD(read_chunks) == 0 && CD(write_chunks) == 0 &&
			      CD(write_bytes) == 0 && SD(read_chunks) == 0,
		      "%sECHO 0, %s: an empty item is no item: no Read chunk "
		      "(%llu), no Write chunk for room 0 < min=1 (%llu)",
		      tag, how, CD(read_chunks), CD(write_chunks));
	if (caller && len >= MiB)
		CHECK(CD(ddp_zero_copies) == TD_ZERO_COPY &&
			      CD(ddp_copies) == !TD_ZERO_COPY,
		      "%sECHO %u into the caller's buffer: zero copy (%llu) "
		      "and no copy (%llu)%s",
		      tag, len, CD(ddp_zero_copies), CD(ddp_copies),
		      TD_ZERO_COPY ?
			      "" :
			      " [ASan build: probe off, one copy expected]");
out:
	free(arg.data.data_val);
	if (caller)
		free(buf);
	else if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_echo_res, (char *)&res);
}

/* The client's table says what the generated file says. */
static void check_table(bool want)
{
	struct rpcrdma_ulb_entry e;
	int call, reply;

	call = rpcrdma_ulb_lookup(DDPT_PROG, DDPT_VERS, DDPT_ECHO,
				  RPCRDMA_ULB_CALL, &e);
	reply = rpcrdma_ulb_lookup(DDPT_PROG, DDPT_VERS, DDPT_ECHO,
				   RPCRDMA_ULB_REPLY, &e);
	if (want)
		CHECK(!call && !reply && e.room.kind == RPCRDMA_ULB_SIZE_ARG &&
			      e.room.offset == 0,
		      "RPCRDMA_ULB_CONF=%s: ECHO entries loaded, room = arg[0]",
		      getenv("RPCRDMA_ULB_CONF"));
	else
		CHECK(call == ENOENT && reply == ENOENT,
		      "RPCRDMA_ULB_CONF=%s: no entry for ECHO",
		      getenv("RPCRDMA_ULB_CONF"));
}

static const char *reg_name(enum rpcrdma_reg_mode m)
{
	return m == RPCRDMA_REG_MW ? "mw" : m == RPCRDMA_REG_MR ? "mr" : "auto";
}

static CLIENT *client(const struct ts_server *s, enum rpcrdma_reg_mode reg)
{
	struct rpcrdma_clnt_stats st;
	CLIENT *cl = td_client(s, DDPT_PROG, DDPT_VERS, reg);

	enum rpcrdma_reg_mode got = RPCRDMA_REG_AUTO;

	CHECK(cl != NULL, "CLIENT to ddpt_server at %s port %u", s->host,
	      s->port);
	if (!cl)
		return NULL;
	CHECK(td_stats(cl, &st), "CLGET_RDMA_STATS answers");
	clnt_control(cl, CLGET_RDMA_REG_MODE, &got);
	losses_ok = tu_net_two() && got == RPCRDMA_REG_MW;
	if (tu_net_two())
		NOTE("two devices, registration mode %s: %s", reg_name(got),
		     losses_ok ? "RPC errors counted as losses" :
				 "every call must succeed");
	return cl;
}

static void group_sizes(void)
{
	static const uint32_t sizes[] = {
		0, 1, 3, 4, 4095, 4096, MiB, 8 * MiB,
	};
	unsigned int i;
	CLIENT *cl;

	check_table(true);
	cl = client(&srv, RPCRDMA_REG_AUTO);
	if (!cl)
		return;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		echo_case(cl, "", sizes[i], true, i + 1);
		echo_case(cl, "", sizes[i], false, i + 101);
	}
	clnt_destroy(cl);
	cl = client(&srv6, RPCRDMA_REG_AUTO);
	if (!cl)
		return;
	echo_case(cl, "rdma6: ", MiB + 1, true, 7);
	echo_case(cl, "rdma6: ", 3, false, 8);
	clnt_destroy(cl);
}

/* ---- MULTI ------------------------------------------------------------------- */

static void multi_case(CLIENT *cl, uint32_t la, uint32_t lb, bool caller)
{
	static char note[] = "between two eligible items";
	uint32_t room = la > lb ? la : lb;
	ddpt_multi_args arg;
	ddpt_multi_res res;
	struct snap sa, sb, *a = &sa, *b = &sb;
	uint8_t *ba = NULL, *bb = NULL;
	enum clnt_stat st;
	bool ok;

	memset(&arg, 0, sizeof(arg));
	memset(&res, 0, sizeof(res));
	arg.room = room;
	arg.a.a_len = la;
	arg.a.a_val = malloc(la);
	arg.b.b_len = lb;
	arg.b.b_val = malloc(lb);
	arg.note.note_len = sizeof(note) - 1;
	arg.note.note_val = note;
	t_fill(arg.a.a_val, la, 21);
	t_fill(arg.b.b_val, lb, 22);
	if (caller) {
		ba = td_guarded(room);
		bb = td_guarded(room);
		res.a.a_val = (char *)ba;
		res.a.a_len = room;
		res.b.b_val = (char *)bb;
		res.b.b_len = room;
	}
	snap_before(cl, a);
	st = ddpt_multi_1(&arg, &res, cl);
	snap_after(cl, b);
	ok = st == RPC_SUCCESS && res.a.a_len == la && res.b.b_len == lb &&
	     t_fill_check(res.a.a_val, la, 21) < 0 &&
	     t_fill_check(res.b.b_val, lb, 22) < 0 &&
	     res.note.note_len == sizeof(note) - 1 &&
	     !memcmp(res.note.note_val, note, sizeof(note) - 1);
	if (caller)
		ok = ok && td_guard_ok(ba, room) && td_guard_ok(bb, room);
	CHECK(ok,
	      "MULTI a=%u b=%u, %s buffers: both results and the inline "
	      "note intact, in their places (V1-WC-3) [%s]",
	      la, lb, caller ? "caller's" : "library",
	      st == RPC_SUCCESS ? "ok" : td_errmsg(cl));
	CHECK(CD(read_chunks) == 2 && CD(read_bytes) == la + lb &&
		      CD(write_chunks) == 2 && CD(write_bytes) == la + lb &&
		      CD(ddp_zero_copies) + CD(ddp_copies) == 2 &&
		      CD(long_calls) == 0 && CD(reply_chunks) == 0 &&
		      SD(read_chunks) == 2 && SD(write_chunks) == 2 &&
		      SD(write_bytes) == la + lb,
	      "MULTI a=%u b=%u: Read chunks %llu/%llu octets, Write chunks "
	      "%llu/%llu, the note inline; server read %llu, wrote %llu/%llu "
	      "(V1-CH-2, V1-RC-1/7/8)",
	      la, lb, CD(read_chunks), CD(read_bytes), CD(write_chunks),
	      CD(write_bytes), SD(read_chunks), SD(write_chunks),
	      SD(write_bytes));
	free(arg.a.a_val);
	free(arg.b.b_val);
	if (caller) {
		free(ba);
		free(bb);
	} else if (st == RPC_SUCCESS) {
		xdr_free((xdrproc_t)xdr_ddpt_multi_res, (char *)&res);
	}
	if (caller && st == RPC_SUCCESS)
		free(res.note.note_val);
}

/* ---- LONG: DDP and a Reply chunk --------------------------------------------- */

static void long_case(CLIENT *cl, uint32_t len, uint32_t blob, bool chunk)
{
	ddpt_long_args arg = {
		.room = len, .seed = 31, .len = len, .blob = blob
	};
	ddpt_long_res res;
	struct snap sa, sb, *a = &sa, *b = &sb;
	enum clnt_stat st;
	bool ok;

	memset(&res, 0, sizeof(res));
	snap_before(cl, a);
	st = ddpt_long_1(&arg, &res, cl);
	snap_after(cl, b);
	ok = st == RPC_SUCCESS && res.data.data_len == len &&
	     res.blob.blob_len == blob &&
	     t_fill_check(res.data.data_val, len, 31) < 0 &&
	     t_fill_check(res.blob.blob_val, blob, 32) < 0;
	CHECK(ok, "LONG data %u + blob %u: both intact [%s]", len, blob,
	      st == RPC_SUCCESS ? "ok" : td_errmsg(cl));
	if (chunk)
		CHECK(CD(write_chunks) == 1 && CD(write_bytes) == len &&
			      CD(reply_chunks) == 1 && CD(long_replies) == 1 &&
			      CD(reply_bytes) > blob && CD(read_chunks) == 0 &&
			      SD(write_bytes) == len && SD(replies_long) == 1,
		      "LONG %u + %u: data in the Write chunk (%llu/%llu), the "
		      "rest in the Reply chunk (offered %llu, used %llu, %llu "
		      "octets); server wrote %llu, Long replies %llu "
		      "(V1-RP-1/3)",
		      len, blob, CD(write_chunks), CD(write_bytes),
		      CD(reply_chunks), CD(long_replies), CD(reply_bytes),
		      SD(write_bytes), SD(replies_long));
	else
		CHECK(CD(write_chunks) == 1 && CD(write_bytes) == len &&
			      CD(reply_chunks) == 0 && CD(long_replies) == 0,
		      "LONG %u + %u: max=arg.blob+12 fits inline, so no Reply "
		      "chunk offered (%llu), data in the Write chunk (%llu/%llu) "
		      "(V1-RP-1, V1-ULB-4)",
		      len, blob, CD(reply_chunks), CD(write_chunks),
		      CD(write_bytes));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_long_res, (char *)&res);
}

/* ---- READ: a result larger (or smaller) than its Write chunk ------------------- */

static enum clnt_stat read_call(CLIENT *cl, uint32_t count, int extra,
				ddpt_read_res *res, struct snap *a,
				struct snap *b, int *err)
{
	ddpt_read_args arg = { .count = count, .seed = 41, .extra = extra };
	struct rpc_err e;
	enum clnt_stat st;

	snap_before(cl, a);
	st = ddpt_read_1(&arg, res, cl);
	clnt_geterr(cl, &e);
	*err = e.re_errno;
	snap_after(cl, b);
	return st;
}

static void read_fits(CLIENT *cl, uint32_t count, int extra)
{
	uint32_t want = (uint32_t)((int64_t)count + extra);
	struct snap sa, sb, *a = &sa, *b = &sb;
	ddpt_read_res res;
	enum clnt_stat st;
	int err;

	memset(&res, 0, sizeof(res));
	st = read_call(cl, count, extra, &res, a, b, &err);
	CHECK(st == RPC_SUCCESS && res.count == want &&
		      res.data.data_len == want &&
		      t_fill_check(res.data.data_val, want, 41) < 0 &&
		      CD(write_chunks) == 1 && CD(write_bytes) == want &&
		      SD(write_bytes) == want,
	      "READ count %u returning %u: intact, Write chunk of room %u "
	      "filled with exactly %llu octets (server %llu) (V1-WC-4) [%s]",
	      count, want, count, CD(write_bytes), SD(write_bytes),
	      st == RPC_SUCCESS ? "ok" : td_errmsg(cl));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_read_res, (char *)&res);
}

/* The RPC-over-RDMA version of cl's connection (CLGET_RDMA_VERSION). */
static unsigned int version(CLIENT *cl)
{
	unsigned int v = 0;

	clnt_control(cl, CLGET_RDMA_VERSION, &v);
	return v;
}

/*
 * count + extra octets for a Write chunk of count.  In v1 the server can
 * only say ERR_CHUNK and the call fails with RPC_SYSTEMERROR / EREMOTEIO
 * (V1-ERR-9).  In v2 it says WRITE_RESOURCE with the 1-based chunk and the
 * length needed (V2-ERR-12), keeps the reply, and the client resends the
 * same XID with that room (V2-ERR-13): the result arrives, the procedure
 * ran once - unless the room needed exceeds a buffer the caller supplied,
 * or the caller's results cannot be probed (ASan builds), where it fails as
 * in v1.  A caller's buffer (capacity cap >= count, so the chunk points into
 * it) is unchanged beyond what arrived: no overrun.
 */
static void read_overflow(CLIENT *cl, uint32_t count, int extra, size_t cap)
{
	uint32_t want = (uint32_t)((int64_t)count + extra);
	struct snap sa, sb, *a = &sa, *b = &sb;
	bool resend = version(cl) == 2 && TD_ZERO_COPY && (!cap || cap >= want);
	ddpt_read_res res;
	uint8_t *buf = NULL;
	enum clnt_stat st;
	size_t i;
	bool intact = true;
	int err;

	memset(&res, 0, sizeof(res));
	if (cap) {
		buf = td_guarded(cap);
		memset(buf, 0x5a, cap);
		res.data.data_val = (char *)buf;
		res.data.data_len = (u_int)cap;
	}
	st = read_call(cl, count, extra, &res, a, b, &err);
	for (i = resend ? want : count; buf && i < cap; i++)
		intact = intact && buf[i] == 0x5a;
	if (resend)
		/* requests: the READ, once, and the STATS of snap_after */
		CHECK(st == RPC_SUCCESS && res.data.data_len == want &&
			      t_fill_check(res.data.data_val, want, 41) < 0 &&
			      CD(resends) == 1 && CD(err_chunk) == 0 &&
			      SD(err_resource) == 1 && SD(replays_done) == 1 &&
			      SD(requests) == 2,
		      "READ count %u returning %u, %s: WRITE_RESOURCE (%llu), resent with the room named (%llu), answered from the kept reply (%llu), executed once (%llu requests with STATS): %s (V2-ERR-12/13)",
		      count, want, cap ? "caller's buffer" : "library buffer",
		      SD(err_resource), CD(resends), SD(replays_done),
		      SD(requests), clnt_sperrno(st));
	else
		CHECK(st == RPC_SYSTEMERROR && err == EREMOTEIO &&
			      CD(err_chunk) == 1 && SD(err_write_room) == 1 &&
			      SD(err_chunk) == 1,
		      "READ count %u returning %u, %s: %s, errno %d (want EREMOTEIO); "
		      "client ERR_CHUNK %llu, server err_write_room %llu [%s]",
		      count, want, cap ? "caller's buffer" : "library buffer",
		      clnt_sperrno(st), err, CD(err_chunk), SD(err_write_room),
		      td_errmsg(cl));
	if (cap)
		CHECK(intact && td_guard_ok(buf, cap),
		      "... the caller's buffer beyond what arrived "
		      "(octets %u..%zu) is unchanged: no overrun",
		      resend ? want : count, cap - 1);
	if (buf)
		free(buf);
	else if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_read_res, (char *)&res);
}

static void group_read(CLIENT *cl)
{
	read_fits(cl, 65536, 0);
	read_fits(cl, 65536, -1001);
	read_overflow(cl, MiB, 1, MiB + 8192);
	read_overflow(cl, 4096, 3, 4096 + 4096);
	read_overflow(cl, 65536, 4096, 0);
	read_fits(cl, MiB, 0); /* the connection still works */
}

/* ---- The 8 MiB counters -------------------------------------------------------- */

static bool echo_8m(CLIENT *cl, bool caller, struct snap *a, struct snap *b)
{
	const uint32_t len = 8 * MiB;
	ddpt_echo_args arg = { .room = len };
	ddpt_echo_res res;
	enum clnt_stat st;
	char *buf = NULL;
	bool ok;

	arg.data.data_len = len;
	arg.data.data_val = malloc(len);
	t_fill(arg.data.data_val, len, 51);
	memset(&res, 0, sizeof(res));
	if (caller) {
		buf = calloc(1, len);
		res.data.data_val = buf;
		res.data.data_len = len;
	}
	snap_before(cl, a);
	st = ddpt_echo_1(&arg, &res, cl);
	snap_after(cl, b);
	ok = st == RPC_SUCCESS && res.data.data_len == len &&
	     (!caller || res.data.data_val == buf) &&
	     t_fill_check(res.data.data_val, len, 51) < 0;
	if (st != RPC_SUCCESS)
		NOTE("ECHO 8 MiB: %s [%s]", clnt_sperror(cl, "echo"),
		     td_errmsg(cl));
	free(arg.data.data_val);
	if (caller)
		free(buf);
	else if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_echo_res, (char *)&res);
	return ok;
}

/*
 * Every exposure of the call fenced exactly once, by us or by the server's
 * Send With Invalidate: in MW mode the MR a window is bound over when the
 * memory is the caller's own (not the pool's) is no exposure, and its
 * deregistration is no fence.  The snapshots also hold the STATS calls
 * (no chunks, no exposure).
 */
static void fenced_once(const struct snap *a, const struct snap *b,
			const char *m, const char *whose)
{
	CHECK(CD(registrations) >= 2 &&
		      CD(registrations) ==
			      CD(invalidations) + CD(remote_invalidations),
	      "%s: ECHO 8 MiB into %s: registrations %llu = invalidations "
	      "%llu + remote invalidations %llu",
	      m, whose, CD(registrations), CD(invalidations),
	      CD(remote_invalidations));
}

static void stats_8m(enum rpcrdma_reg_mode reg)
{
	const unsigned long long len = 8 * MiB;
	struct snap sa, sb, *a = &sa, *b = &sb;
	const char *m = reg_name(reg);
	enum rpcrdma_reg_mode got = RPCRDMA_REG_AUTO;
	CLIENT *cl = client(&srv, reg);
	bool ok;

	if (!cl)
		return;
	ok = echo_8m(cl, true, a, b);
	clnt_control(cl, CLGET_RDMA_REG_MODE, &got);
	CHECK(ok && got == reg,
	      "%s: ECHO 8 MiB into the caller's buffer: "
	      "intact (mode %s)",
	      m, reg_name(got));
	CHECK(CD(read_chunks) == 1 && CD(read_bytes) == len,
	      "%s: 8 MiB by RDMA Read: %llu Read chunk, %llu octets", m,
	      CD(read_chunks), CD(read_bytes));
	CHECK(CD(write_chunks) == 1 && CD(write_bytes) == len,
	      "%s: 8 MiB by RDMA Write: %llu Write chunk, %llu octets", m,
	      CD(write_chunks), CD(write_bytes));
	CHECK(CD(inline_bytes) < 1024 && CD(long_calls) == 0 &&
		      CD(reply_chunks) == 0,
	      "%s: inline %llu octets (< 1024), Long calls %llu, Reply "
	      "chunks %llu",
	      m, CD(inline_bytes), CD(long_calls), CD(reply_chunks));
	CHECK(CD(ddp_zero_copies) == TD_ZERO_COPY &&
		      CD(ddp_copies) == !TD_ZERO_COPY,
	      "%s: zero copy %llu, copies %llu%s", m, CD(ddp_zero_copies),
	      CD(ddp_copies),
	      TD_ZERO_COPY ? "" :
			     " [ASan build: probe off, one copy expected]");
	CHECK(SD(read_chunks) == 1 && SD(read_bytes) == len &&
		      SD(write_chunks) == 1 && SD(write_bytes) == len,
	      "%s: the server agrees: read %llu/%llu, wrote %llu/%llu", m,
	      SD(read_chunks), SD(read_bytes), SD(write_chunks),
	      SD(write_bytes));
	fenced_once(a, b, m, "the caller's memory");
	ok = echo_8m(cl, false, a, b);
	CHECK(ok, "%s: ECHO 8 MiB into a library buffer: intact", m);
	CHECK(CD(ddp_copies) == 1 && CD(ddp_copy_bytes) == len &&
		      CD(ddp_zero_copies) == 0 && CD(write_bytes) == len &&
		      CD(read_bytes) == len,
	      "%s: NULL result buffer: copies %llu (%llu octets), zero copy "
	      "%llu, Write %llu octets",
	      m, CD(ddp_copies), CD(ddp_copy_bytes), CD(ddp_zero_copies),
	      CD(write_bytes));
	fenced_once(a, b, m, "a library buffer");
	clnt_destroy(cl);
}

/* ---- Nothing by chunks: the control (no entry), the client without the table -- */

/*
 * A call that moves nothing by Read or Write chunks, as a Long call and a
 * Long reply if long_msgs: with plain, PLAIN, whose items have no entry in
 * the table (the control of group misc), its result in a buffer the
 * library allocates; else ECHO from the client without the table (group
 * noconf), its result in a buffer of ours.
 */
static void unchunked_case(CLIENT *cl, uint32_t len, bool long_msgs, bool plain)
{
	const char *name = plain ? "PLAIN" : "no table: ECHO";
	uint32_t seed = plain ? 61 : 91;
	struct snap sa, sb, *a = &sa, *b = &sb;
	ddpt_plain_args pa = { .room = len };
	ddpt_echo_args ea = { .room = len };
	ddpt_plain_res pr;
	ddpt_echo_res er;
	enum clnt_stat st;
	char *data = malloc(len ? len : 1);
	char *buf = plain ? NULL : malloc(len ? len : 1);
	const char *got;
	u_int got_len;

	t_fill(data, len, seed);
	pa.data.data_len = ea.data.data_len = len;
	pa.data.data_val = ea.data.data_val = data;
	memset(&pr, 0, sizeof(pr));
	er.data.data_val = buf;
	er.data.data_len = len;
	snap_before(cl, a);
	if (plain) {
		st = ddpt_plain_1(&pa, &pr, cl);
		got = pr.data.data_val;
		got_len = pr.data.data_len;
	} else {
		st = ddpt_echo_1(&ea, &er, cl);
		got = er.data.data_val;
		got_len = er.data.data_len;
	}
	snap_after(cl, b);
	CHECK(st == RPC_SUCCESS && got_len == len &&
		      t_fill_check(got, len, seed) < 0,
	      "%s%s %u%s intact [%s]", name, plain ? " (no entry)" : "", len,
	      plain ? " octets:" : "",
	      st == RPC_SUCCESS ? "ok" : td_errmsg(cl));
	/* The Reply's size is unknown (no entry), so it is asked inline
	 * first: a Long Reply comes after one resend (the room named, v2)
	 * or two (1 MiB, then max_reply_size, v1); each resend is a Long
	 * Call again. */
	CHECK(CD(read_chunks) == 0 && CD(read_bytes) == 0 &&
		      CD(write_chunks) == 0 && CD(write_bytes) == 0 &&
		      CD(ddp_zero_copies) == 0 && CD(ddp_copies) == 0 &&
		      SD(write_chunks) == 0 && SD(write_bytes) == 0 &&
		      CD(long_calls) == (long_msgs ? 1 + CD(resends) : 0) &&
		      CD(resends) ==
			      (long_msgs ? (version(cl) == 2 ? 1 : 2) : 0) &&
		      CD(long_replies) == (long_msgs ? 1 : 0),
	      "%s %u%s nothing by Read/Write chunks (%llu/%llu, %llu/%llu; "
	      "server wrote %llu), Long call %llu, Long reply %llu after %llu resend(s)%s",
	      name, len, plain ? ":" : " moves", CD(read_chunks),
	      CD(read_bytes), CD(write_chunks), CD(write_bytes),
	      SD(write_bytes), CD(long_calls), CD(long_replies), CD(resends),
	      plain ? " (V1-CH-2, V1-RP-4/6)" : "");
	free(data);
	free(buf);
	if (plain && st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_plain_res, (char *)&pr);
}

/* ---- The server refuses Read chunks at items it does not designate ------------- */

static bool refused(const struct tc_reply *rep)
{
	return (rep->h.proc == RW_ERROR && rep->h.err.code == RW_ERR_CHUNK) ||
	       (rep->rpc && rep->rp_stat == MSG_ACCEPTED &&
		rep->ar_stat == GARBAGE_ARGS);
}

static void raw_refuse(void)
{
	static struct tc_reply rep; /* 8 KiB */
	ddpt_plain_args pa = { .room = 3001 };
	ddpt_echo_args ea = { .room = 3001 };
	ddpt_plain_res pr;
	ddpt_echo_res er;
	struct tc_call k;
	struct tc t;
	char data[3001];
	int r;

	t_fill(data, sizeof(data), 71);
	if (tc_connect(&t, &srv, 10000)) {
		CHECK(false, "raw client: connect");
		return;
	}
	memset(&k, 0, sizeof(k));
	memset(&pr, 0, sizeof(pr));
	pa.data.data_len = sizeof(data);
	pa.data.data_val = data;
	k.prog = DDPT_PROG;
	k.vers = DDPT_VERS;
	k.proc = DDPT_PLAIN;
	k.xargs = (xdrproc_t)xdr_ddpt_plain_args;
	k.args = &pa;
	k.read_item = true;
	r = tc_rpc(&t, &k, (xdrproc_t)xdr_ddpt_plain_res, &pr, &rep, 20000);
	CHECK(r == 0 && refused(&rep),
	      "a Read chunk at an item without an entry (PLAIN item 0) is "
	      "refused: %s (V1-DDP-1)",
	      r			     ? strerror(-r) :
	      rep.h.proc == RW_ERROR ? "RDMA_ERROR" :
	      rep.rpc		     ? "an RPC reply" :
				       "?");
	if (rep.res_ok)
		xdr_free((xdrproc_t)xdr_ddpt_plain_res, (char *)&pr);

	memset(&er, 0, sizeof(er));
	ea.data.data_len = sizeof(data);
	ea.data.data_val = data;
	k.proc = DDPT_ECHO;
	k.xargs = (xdrproc_t)xdr_ddpt_echo_args;
	k.args = &ea;
	r = tc_rpc(&t, &k, (xdrproc_t)xdr_ddpt_echo_res, &er, &rep, 20000);
	CHECK(r == 0 && rep.h.proc == RW_MSG && rep.res_ok &&
		      rep.ar_stat == SUCCESS &&
		      er.data.data_len == sizeof(data) &&
		      t_fill_check(er.data.data_val, sizeof(data), 71) < 0,
	      "a Read chunk at ECHO's designated item 0 is taken, echoed "
	      "intact");
	if (rep.res_ok)
		xdr_free((xdrproc_t)xdr_ddpt_echo_res, (char *)&er);
	tc_close(&t);
}

/* ---- RPCSEC_GSS (V1-GSS-2/3, V1-WC-2) ------------------------------------ */

/*
 * A stand-in for an RPCSEC_GSS context, as libtirpc's auth_gss would
 * marshal it (RFC 2203 section 5.3): the credential is RPCSEC_GSS_DATA on
 * the context "fake" with a service; with integrity or privacy AUTH_WRAP
 * turns the arguments into rpc_gss_integ_data (sequence number and
 * arguments as one opaque) followed by a checksum, and AUTH_UNWRAP
 * undoes the same on the results.  No Kerberos is needed to see what the
 * transport does with the call: ddpt_server accepts "fake" through its
 * stand-in service (gss_standin.c).
 *
 * disguised: the AUTH's own ah_cred says AUTH_NONE while the credential it
 * marshals says RPCSEC_GSS.  librpcrdma's client reduces nothing under
 * RPCSEC_GSS whatever the service (libtirpc keeps the service private);
 * disguised, it places data by the table as the Linux client does under
 * sec=krb5, so the server's side of the rule can be seen.
 */
#define FG_SEQ		 1u
#define FG_SVC_NONE	 1u
#define FG_SVC_INTEGRITY 2u
#define FG_SVC_PRIVACY	 3u
#define FG_CKSUM_LEN	 16u

struct fg {
	uint32_t svc;
	struct opaque_auth wire; /* the credential marshalled */
	uint8_t cred[32];
	uint8_t verf[FG_CKSUM_LEN];
};

static int fg_marshal(AUTH *a, XDR *x)
{
	struct fg *g = (struct fg *)a->ah_private;

	return xdr_opaque_auth(x, &g->wire) && xdr_opaque_auth(x, &a->ah_verf);
}

static int fg_wrap(AUTH *a, XDR *x, xdrproc_t f, caddr_t p)
{
	struct fg *g = (struct fg *)a->ah_private;
	u_int len = (u_int)xdr_sizeof(f, p) + 4, n = FG_CKSUM_LEN;
	char *body, *ck = (char *)g->verf;
	uint32_t seq = FG_SEQ;
	bool_t ok;
	XDR m;

	if (g->svc == FG_SVC_NONE)
		return (*f)(x, p);
	body = malloc(len);
	if (!body)
		return FALSE;
	xdrmem_create(&m, body, len, XDR_ENCODE);
	ok = xdr_u_int(&m, &seq) && (*f)(&m, p) &&
	     xdr_bytes(x, &body, &len, len) && xdr_bytes(x, &ck, &n, n);
	free(body);
	return ok;
}

static int fg_unwrap(AUTH *a, XDR *x, xdrproc_t f, caddr_t p)
{
	struct fg *g = (struct fg *)a->ah_private;
	char ck[FG_CKSUM_LEN], *body = NULL, *c = ck;
	u_int len = 0, n = 0;
	uint32_t seq;
	bool_t ok;
	XDR m;

	if (g->svc == FG_SVC_NONE)
		return (*f)(x, p);
	if (!xdr_bytes(x, &body, &len, ~0u) ||
	    !xdr_bytes(x, &c, &n, FG_CKSUM_LEN)) {
		free(body);
		return FALSE;
	}
	xdrmem_create(&m, body, len, XDR_DECODE);
	ok = xdr_u_int(&m, &seq) && (*f)(&m, p);
	free(body);
	return ok;
}

static int fg_validate(AUTH *a, struct opaque_auth *v)
{
	(void)a;
	(void)v;
	return TRUE;
}

static int fg_refresh(AUTH *a, void *m)
{
	(void)a;
	(void)m;
	return FALSE;
}

static void fg_nextverf(AUTH *a)
{
	(void)a;
}

static void fg_destroy(AUTH *a)
{
	free(a->ah_private);
	free(a);
}

static struct auth_ops fg_ops = {
	.ah_nextverf = fg_nextverf,
	.ah_marshal = fg_marshal,
	.ah_validate = fg_validate,
	.ah_refresh = fg_refresh,
	.ah_destroy = fg_destroy,
	.ah_wrap = fg_wrap,
	.ah_unwrap = fg_unwrap,
};

static AUTH *fake_gss_create(uint32_t svc, bool disguised)
{
	static const char handle[4] = "fake";
	AUTH *a = calloc(1, sizeof(*a));
	struct fg *g = calloc(1, sizeof(*g));
	uint32_t v[4] = { 1, 0 /* RPCSEC_GSS_DATA */, FG_SEQ, svc };
	char *h = (char *)handle;
	u_int hl = sizeof(handle);
	unsigned int i;
	XDR m;

	if (!a || !g) {
		free(a);
		free(g);
		return NULL;
	}
	g->svc = svc;
	xdrmem_create(&m, (char *)g->cred, sizeof(g->cred), XDR_ENCODE);
	for (i = 0; i < 4; i++)
		xdr_u_int(&m, &v[i]);
	xdr_bytes(&m, &h, &hl, hl);
	g->wire.oa_flavor = RPCSEC_GSS;
	g->wire.oa_base = (caddr_t)g->cred;
	g->wire.oa_length = XDR_GETPOS(&m);
	a->ah_cred = g->wire;
	if (disguised)
		a->ah_cred.oa_flavor = AUTH_NONE;
	a->ah_verf.oa_flavor = RPCSEC_GSS;
	a->ah_verf.oa_base = (caddr_t)g->verf;
	a->ah_verf.oa_length = FG_CKSUM_LEN;
	a->ah_ops = &fg_ops;
	a->ah_private = (caddr_t)g;
	return a;
}

/*
 * ECHO of len octets with auth (NULL: the CLIENT's own); deltas in a, b;
 * *intact: the result is the argument.  The snapshots are calls too: they
 * keep the CLIENT's own AUTH.
 */
static enum clnt_stat gss_echo(CLIENT *cl, AUTH *auth, uint32_t len,
			       struct snap *a, struct snap *b, bool *intact)
{
	AUTH *own = cl->cl_auth;
	ddpt_echo_args arg;
	ddpt_echo_res res;
	enum clnt_stat st;

	memset(&res, 0, sizeof(res));
	arg.room = len;
	arg.data.data_len = len;
	arg.data.data_val = malloc(len);
	t_fill(arg.data.data_val, len, 91);
	snap_before(cl, a);
	cl->cl_auth = auth ? auth : own;
	st = ddpt_echo_1(&arg, &res, cl);
	cl->cl_auth = own;
	snap_after(cl, b);
	*intact = st == RPC_SUCCESS && res.data.data_len == len &&
		  !memcmp(res.data.data_val, arg.data.data_val, len);
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_ddpt_echo_res, (char *)&res);
	free(arg.data.data_val);
	return st;
}

/*
 * ECHO's argument and result are DDP-eligible by the table: with AUTH_NONE
 * the 64 KiB argument goes in a Read chunk and the result gets a Write
 * chunk; with an RPCSEC_GSS integrity credential our client reduces
 * nothing - the arguments travel whole (a Long call) and no Write chunk is
 * offered (V1-GSS-3).  The snapshots use AUTH_NONE: STATS is a call too.
 */
static void gss_case(CLIENT *cl)
{
	struct snap sa, sb, *a = &sa, *b = &sb;
	const uint32_t len = 65536;
	AUTH *gss = fake_gss_create(FG_SVC_INTEGRITY, false);
	enum clnt_stat st;
	bool intact;

	st = gss_echo(cl, NULL, len, a, b, &intact);
	CHECK(st == RPC_SUCCESS && intact && CD(read_chunks) == 1 &&
		      CD(write_chunks) == 1 && SD(read_chunks) == 1,
	      "RPCSEC_GSS control, AUTH_NONE: ECHO %u moves its item in a "
	      "Read chunk (%llu) and offers a Write chunk (%llu)",
	      len, CD(read_chunks), CD(write_chunks));
	if (!gss) {
		CHECK(false, "fake RPCSEC_GSS AUTH");
		return;
	}
	st = gss_echo(cl, gss, len, a, b, &intact);
	auth_destroy(gss);
	/* the wrapped reply's size is unknown: in v2 it is asked inline and
	 * REPLY_RESOURCE brings one resend with a Reply chunk */
	CHECK(CD(resends) <= 1 && CD(calls) == 1 + CD(resends) &&
		      CD(read_chunks) == 0 && CD(write_chunks) == 0 &&
		      CD(long_calls) == CD(calls) && CD(long_bytes) > len,
	      "RPCSEC_GSS integrity: ECHO %u reduces nothing: Read chunks "
	      "%llu, Write chunks %llu, sent whole as a Long call (%llu, "
	      "%llu octets, %llu resend) [%s] (V1-GSS-3)",
	      len, CD(read_chunks), CD(write_chunks), CD(long_calls),
	      CD(long_bytes), CD(resends), clnt_sperrno(st));
	CHECK(SD(write_chunks) == 0 && SD(read_bytes) == CD(long_bytes),
	      "RPCSEC_GSS integrity: the server pulled only the Long call "
	      "(%llu octets) and filled no Write chunk (%llu)",
	      SD(read_bytes), SD(write_chunks));
	CHECK(st == RPC_SUCCESS && intact,
	      "RPCSEC_GSS integrity: the stand-in service answers, the "
	      "echo is intact [%s]",
	      clnt_sperrno(st));
}

/*
 * The server's side: a client that places data under
 * RPCSEC_GSS (disguised, above).  Authentication only (service none)
 * leaves the body as ECHO's XDR, so the server takes the Read chunk and
 * fills the Write chunk as under AUTH_NONE (V1-WC-2); under integrity and
 * privacy the body is one wrapped opaque, nothing is eligible, and the
 * chunk the client made of it is refused: GARBAGE_ARGS, no Write chunk
 * filled (V1-GSS-3, V1-DDP-1).
 */
static void gss_server_case(CLIENT *cl)
{
	static const struct {
		uint32_t svc;
		const char *name;
	} svcs[] = {
		{ FG_SVC_NONE, "authentication only" },
		{ FG_SVC_INTEGRITY, "integrity" },
		{ FG_SVC_PRIVACY, "privacy" },
	};
	struct snap sa, sb, *a = &sa, *b = &sb;
	const uint32_t len = 65536;
	enum clnt_stat st;
	bool intact;
	unsigned int i;
	AUTH *gss;

	for (i = 0; i < sizeof(svcs) / sizeof(svcs[0]); i++) {
		gss = fake_gss_create(svcs[i].svc, true);
		if (!gss) {
			CHECK(false, "fake RPCSEC_GSS AUTH");
			return;
		}
		st = gss_echo(cl, gss, len, a, b, &intact);
		auth_destroy(gss);
		if (svcs[i].svc == FG_SVC_NONE)
			CHECK(st == RPC_SUCCESS && intact &&
				      CD(read_chunks) == 1 &&
				      SD(read_chunks) == 1 &&
				      SD(write_chunks) == 1 &&
				      SD(write_bytes) == len,
			      "RPCSEC_GSS %s: the server takes ECHO %u's Read "
			      "chunk (%llu) and fills its Write chunk (%llu, "
			      "%llu octets), the echo intact [%s] (V1-WC-2)",
			      svcs[i].name, len, SD(read_chunks),
			      SD(write_chunks), SD(write_bytes),
			      clnt_sperrno(st));
		else
			CHECK(st == RPC_CANTDECODEARGS &&
				      CD(read_chunks) == 1 &&
				      SD(write_chunks) == 0,
			      "RPCSEC_GSS %s: a Read chunk of the wrapped "
			      "body is refused, GARBAGE_ARGS (%s), no Write "
			      "chunk filled (%llu) (V1-GSS-3, V1-DDP-1)",
			      svcs[i].name, clnt_sperrno(st), SD(write_chunks));
	}
}

/*
 * Reply size (V1-RP-1/2, V1-ULB-4): NULL's entry says max=0, empty results,
 * so no Reply chunk is offered and nothing is registered for it; STATS has
 * no entry, so its Reply is asked inline, with no Reply chunk either: a
 * Reply that fits inline costs no registration.
 */
static void void_case(CLIENT *cl)
{
	struct rpcrdma_clnt_stats a, b;
	struct timeval tv = { 30, 0 };
	enum clnt_stat st;
	ddpt_stats s;

	td_stats(cl, &a);
	st = clnt_call(cl, DDPT_NULL, (xdrproc_t)xdr_void, NULL,
		       (xdrproc_t)xdr_void, NULL, tv);
	td_stats(cl, &b);
	CHECK(st == RPC_SUCCESS && b.calls == a.calls + 1 &&
		      b.reply_chunks == a.reply_chunks &&
		      b.registrations == a.registrations,
	      "NULL, entry max=0: no Reply chunk (%llu), no registration "
	      "(%llu) [%s]",
	      (unsigned long long)(b.reply_chunks - a.reply_chunks),
	      (unsigned long long)(b.registrations - a.registrations),
	      clnt_sperrno(st));
	memset(&s, 0, sizeof(s));
	td_stats(cl, &a);
	st = ddpt_stats_1(NULL, &s, cl);
	td_stats(cl, &b);
	CHECK(st == RPC_SUCCESS && b.reply_chunks == a.reply_chunks &&
		      b.registrations == a.registrations &&
		      b.resends == a.resends,
	      "STATS, no entry: asked inline, no Reply chunk (%llu), no registration (%llu), no resend [%s]",
	      (unsigned long long)(b.reply_chunks - a.reply_chunks),
	      (unsigned long long)(b.registrations - a.registrations),
	      clnt_sperrno(st));
	xdr_free((xdrproc_t)xdr_ddpt_stats, (char *)&s);
}

/*
 * MULTI's two Read chunks (items a and b) listed out of order by the raw
 * client.  RFC 8166 groups Read segments into chunks by position and asks
 * no order of the list (AMB-V1-6, dropped from bis-01): the server sorts
 * it, keeping list order within a position, so a reversed list and
 * interleaved segments are taken; chunks that overlap in the unreduced
 * stream cannot both be inserted, and are refused (AMB-V1-5, ERR_CHUNK).
 */
static void raw_read_order(void)
{
	static struct tc_reply rep; /* 8 KiB */
	static char note[] = "between two Read chunks";
	static const struct {
		enum tc_reads order;
		const char *what;
	} cases[] = {
		{ TC_READS_REVERSED, "listed last chunk first" },
		{ TC_READS_INTERLEAVED, "in two segments each, interleaved" },
		{ TC_READS_OVERLAP, "overlapping (b 4 octets after a)" },
	};
	ddpt_multi_args arg = { .room = 5001 };
	ddpt_multi_res res;
	char da[5001], db[3001];
	struct tc_call k;
	struct tc t;
	unsigned int i;
	bool ok;
	int r;

	t_fill(da, sizeof(da), 81);
	t_fill(db, sizeof(db), 82);
	arg.a.a_len = sizeof(da);
	arg.a.a_val = da;
	arg.b.b_len = sizeof(db);
	arg.b.b_val = db;
	arg.note.note_len = sizeof(note) - 1;
	arg.note.note_val = note;
	if (tc_connect(&t, &srv, 10000)) {
		CHECK(false, "raw client: connect");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&k, 0, sizeof(k));
		memset(&res, 0, sizeof(res));
		k.prog = DDPT_PROG;
		k.vers = DDPT_VERS;
		k.proc = DDPT_MULTI;
		k.xargs = (xdrproc_t)xdr_ddpt_multi_args;
		k.args = &arg;
		k.read_item = true;
		k.read_mask = RW_DDP_ITEM(0) | RW_DDP_ITEM(2);
		k.read_order = cases[i].order;
		k.reply_chunk = 16384;
		r = tc_rpc(&t, &k, (xdrproc_t)xdr_ddpt_multi_res, &res, &rep,
			   20000);
		if (cases[i].order == TC_READS_OVERLAP) {
			CHECK(r == 0 && rep.h.proc == RW_ERROR &&
				      rep.h.err.code == RW_ERR_CHUNK,
			      "MULTI, Read chunks %s: ERR_CHUNK (AMB-V1-5)",
			      cases[i].what);
		} else {
			ok = r == 0 && rep.res_ok && rep.ar_stat == SUCCESS &&
			     res.a.a_len == sizeof(da) &&
			     res.b.b_len == sizeof(db) &&
			     !memcmp(res.a.a_val, da, sizeof(da)) &&
			     !memcmp(res.b.b_val, db, sizeof(db)) &&
			     res.note.note_len == sizeof(note) - 1;
			CHECK(ok,
			      "MULTI, Read chunks %s: taken, both items "
			      "intact (AMB-V1-6) [%s]",
			      cases[i].what,
			      r			     ? strerror(-r) :
			      rep.h.proc == RW_ERROR ? "RDMA_ERROR" :
			      rep.rpc		     ? "an RPC reply" :
						       "?");
		}
		if (rep.res_ok)
			xdr_free((xdrproc_t)xdr_ddpt_multi_res, (char *)&res);
	}
	tc_close(&t);
}

static void group_misc(void)
{
	CLIENT *cl;

	check_table(true);
	cl = client(&srv, RPCRDMA_REG_AUTO);
	if (!cl)
		return;
	multi_case(cl, MiB + 1, 3, false);
	multi_case(cl, 70001, 8191, true);
	multi_case(cl, 4097, 1, true);
	multi_case(cl, 5003, 4, false);
	long_case(cl, MiB, 65536 + 1, true);
	long_case(cl, 100000, 100, false);
	group_read(cl);
	unchunked_case(cl, 8 * MiB, true, true);
	unchunked_case(cl, 3, false, true);
	void_case(cl);
	gss_case(cl);
	gss_server_case(cl);
	clnt_destroy(cl);
	stats_8m(RPCRDMA_REG_MW);
	stats_8m(RPCRDMA_REG_MR);
	raw_refuse();
	raw_read_order();
}

/* ---- RPCRDMA_DDP_REG_MIN --------------------------------------------------------- */

static void regmin_case(CLIENT *cl, uint32_t len, bool zero)
{
	struct snap sa, sb, *a = &sa, *b = &sb;
	ddpt_echo_args arg = { .room = len };
	ddpt_echo_res res;
	uint8_t *buf = td_guarded(len);
	enum clnt_stat st;

	arg.data.data_len = len;
	arg.data.data_val = malloc(len);
	t_fill(arg.data.data_val, len, 81);
	res.data.data_val = (char *)buf;
	res.data.data_len = len;
	snap_before(cl, a);
	st = ddpt_echo_1(&arg, &res, cl);
	snap_after(cl, b);
	CHECK(st == RPC_SUCCESS && res.data.data_len == len &&
		      res.data.data_val == (char *)buf &&
		      t_fill_check(buf, len, 81) < 0 && td_guard_ok(buf, len) &&
		      CD(write_bytes) == len &&
		      CD(ddp_zero_copies) == (zero && TD_ZERO_COPY ? 1 : 0) &&
		      CD(ddp_copies) == (zero && TD_ZERO_COPY ? 0 : 1),
	      "RPCRDMA_DDP_REG_MIN=%u, caller's buffer of %u: %s (zero copy "
	      "%llu, copies %llu), intact [%s]",
	      REGMIN, len, zero ? "registered" : "a pool buffer, copied once",
	      CD(ddp_zero_copies), CD(ddp_copies),
	      st == RPC_SUCCESS ? "ok" : td_errmsg(cl));
	free(arg.data.data_val);
	free(buf);
}

/* The value printed for counter name in text, or -1. */
static long long printed(const char *text, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s ", name);
	p = strstr(text, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/*
 * RPCRDMA_STATS=1 (with RPCRDMA_STATS_FILE) prints a CLIENT's counters
 * when it is destroyed: the two regmin calls, one zero copy and one copy.
 */
static void check_printed(void)
{
	char text[8192];
	size_t n = 0;
	FILE *f = fopen(STATS_FILE, "r");

	if (f) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = '\0';
	CHECK(strstr(text, "rpcrdma: clnt ") && printed(text, "calls") >= 2 &&
		      printed(text, "ddp_zero_copies") == TD_ZERO_COPY &&
		      printed(text, "ddp_copies") == 2 - TD_ZERO_COPY &&
		      printed(text, "write_bytes") == 2 * REGMIN - 1,
	      "RPCRDMA_STATS=1: clnt_destroy printed the counters to "
	      "RPCRDMA_STATS_FILE (calls %lld, zero copies %lld, copies "
	      "%lld, write_bytes %lld)",
	      printed(text, "calls"), printed(text, "ddp_zero_copies"),
	      printed(text, "ddp_copies"), printed(text, "write_bytes"));
}

static void group_regmin(void)
{
	CLIENT *cl;

	unlink(STATS_FILE);
	cl = client(&srv, RPCRDMA_REG_AUTO);
	if (!cl)
		return;
	regmin_case(cl, REGMIN - 1, false);
	regmin_case(cl, REGMIN, true);
	clnt_destroy(cl);
	check_printed();
}

/* ---- The client without the table ----------------------------------------------- */

static void group_noconf(void)
{
	CLIENT *cl;

	check_table(false);
	cl = client(&srv, RPCRDMA_REG_AUTO);
	if (!cl)
		return;
	unchunked_case(cl, 8 * MiB, true, false);
	unchunked_case(cl, 3, false, false);
	clnt_destroy(cl);
}

/* ---- Main ---------------------------------------------------------------------- */

static const char *const groups[] = { "sizes", "misc", "regmin", "noconf" };

/* Every group in a child process of its own; the worst exit status, or
 * 77 if a group skipped and none failed. */
static int run_all(const char *self)
{
	int worst = 0, st;
	bool skipped = false;
	unsigned int i;
	pid_t pid;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", self, "--only", groups[i],
			      (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		if (st == 77)
			skipped = true;
		else if (st > worst)
			worst = st;
	}
	return worst ? worst : skipped ? 77 : 0;
}

/* The environment of a group (see td_env_ensure). */
static void group_env(char **argv, const char *g)
{
	struct td_env env[4] = {
		{ "RPCRDMA_ULB_CONF", DDPT_CONF },
		{ "RPCRDMA_DDP_REG_MIN", NULL },
		{ "RPCRDMA_STATS", NULL },
		{ "RPCRDMA_STATS_FILE", NULL },
	};
	char regmin[16];

	snprintf(regmin, sizeof(regmin), "%u", REGMIN);
	if (!strcmp(g, "noconf"))
		env[0].value = "/dev/null"; /* built-in entries only */
	if (!strcmp(g, "regmin")) {
		env[1].value = regmin;
		env[2].value = "1";
		env[3].value = STATS_FILE;
	}
	td_env_ensure(argv, env, 4);
}

static void run_group(const char *g)
{
	/* the server always has the table; the client per group_env */
	int r = td_server_start(&srv, "ddpt_server", t_addr4(), DDPT_CONF);
	uint64_t retry0[TU_NRETRY], retry1[TU_NRETRY], sum;
	char line[512];

	tu_retry_read(retry0);

	CHECK(r == 0, "ddpt_server listening on %s port %u", t_addr4(),
	      srv.port);
	if (r)
		return;
	if (!strcmp(g, "sizes")) {
		r = td_server_start(&srv6, "ddpt_server", t_addr6(), DDPT_CONF);
		CHECK(r == 0, "ddpt_server listening on %s port %u", t_addr6(),
		      srv6.port);
		if (!r)
			group_sizes();
	} else if (!strcmp(g, "misc")) {
		group_misc();
	} else if (!strcmp(g, "regmin")) {
		group_regmin();
	} else if (!strcmp(g, "noconf")) {
		group_noconf();
	}
	if (srv6.pid > 0)
		CHECK(ts_server_stop(&srv6) == 0,
		      "ddpt_server (IPv6) exits 0 on SIGTERM");
	CHECK(ts_server_stop(&srv) == 0, "ddpt_server exits 0 on SIGTERM");
	tu_retry_read(retry1);
	sum = tu_retry_delta(retry0, retry1, line, sizeof(line));
	NOTE("device retry counters: %s", line);
	if (tu_net_two())
		CHECK(sum > 0,
		      "two devices: frames crossed the veth and were retransmitted (%llu retry events)",
		      (unsigned long long)sum);
	if (losses)
		NOTE("LOSSES: %u calls ended with an RPC error (MW on two devices), no wrong result",
		     losses);
}

static bool known(const char *g)
{
	unsigned int i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(g, groups[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *only = NULL;

	if (argc == 3 && !strcmp(argv[1], "--only") && known(argv[2]))
		only = argv[2];
	else if (argc != 1) {
		fprintf(stderr,
			"usage: t_ddp [--only sizes|misc|regmin|noconf]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (only)
		group_env(argv, only); /* may re-execute us */
	if (!ts_have_rdma())
		return 77;
	if (!only) {
		watchdog(4 * WATCHDOG_S);
		return run_all(argv[0]);
	}
	watchdog(WATCHDOG_S);
	printf("# t_ddp %s: RPCRDMA_ULB_CONF=%s\n", only,
	       getenv("RPCRDMA_ULB_CONF"));
	run_group(only);
	return tu_done();
}
