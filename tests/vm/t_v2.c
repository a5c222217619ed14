/*
 * t_v2.c - RPC-over-RDMA Version Two in the VM: the project's
 * CLIENT and SVCXPRT against each other, forced to one version or
 * negotiating, and a raw client (t_svc_util.h) that puts exact v2 headers
 * on the wire and reads back the server's bytes.  The server is
 * v2t_server (tests/rpc/v2t.x): results of any size with no Upper-Layer
 * Binding entry, and SEEN, which says what the server saw.
 *
 * Groups (t_v2 --only GROUP, one VM test each, tests/vm/v2-part.sh):
 *   nego    version negotiation both ways, fallback, forced versions, the
 *           properties each side sends (v2-05 §6, §8)
 *   wire    the server's answers byte for byte: replies in the Call's
 *           version, ERR_VERS, INVAL_OPTION, properties never taken as
 *           calls, RESPROP, errors with the limits, REPLY_RESOURCE and the
 *           resend answered from the kept reply (v2-05 §7.2.4)
 *   resend  64 MiB results with no binding over rdma and rdma6, in v2
 *           (one resend with the room named) and v1 (larger Reply chunks),
 *           each procedure executed once; small results cost nothing
 *   inv     remote invalidation: the window a v2 Call nominates is fenced
 *           by the server's Send With Invalidate, one local invalidation
 *           fewer per call; RPCRDMA_REMOTE_INV=0; v1 with RFC 8797
 *   xch     xcharext-02 compatibility per peer (RPCRDMA_XCHAREXT,
 *           AMB-V2-1): INITXCH/UPDXCH taken with xcharext ids, REQXCH answered
 *           by RESPXCH, over rdma and rdma6 when the list names the
 *           client; INVAL_OPTION when it does not; never an xcharext
 *           message from a server where it is off
 *
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "v2t.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"
#include "tests/vm/t_svc_util.h"
#include "compiler.h"
#include "wire/rw_hdr.h"
#include "wire/rw_props.h"
#include "wire/rw_role.h"

#define WATCHDOG_S 110
#define BIG	   (64u * MiB)

static struct ts_server srv4, srv6;
static struct ts_server *const servers[] = { &srv4, &srv6 };

/* ---- Servers and CLIENTs ------------------------------------------------- */

/* v2t_server on host speaking vers ("1", "2" or NULL: both). */
static bool start(struct ts_server *s, const char *host, const char *vers)
{
	int ret;

	if (vers)
		setenv("TIRPC_RDMA_SERVER_VERSION", vers, 1);
	ret = td_server_start(s, "v2t_server", host, "/dev/null");
	unsetenv("TIRPC_RDMA_SERVER_VERSION");
	CHECK(ret == 0, "v2t_server on %s (%s) port %u", host,
	      vers ? vers : "versions 1 and 2", s->port);
	return ret == 0;
}

static void stop(struct ts_server *s)
{
	CHECK(ts_server_stop(s) == 0, "v2t_server on %s: clean exit", s->host);
}

static CLIENT *client(const struct ts_server *s, enum rpcrdma_version v,
		      enum rpcrdma_reg_mode reg, size_t max_reply)
{
	struct timeval tv = { 60, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;

	rpcrdma_attr_init(&a);
	a.version = v;
	a.reg_mode = reg;
	if (max_reply)
		a.max_reply_size = max_reply;
	t_sockaddr(&ss, s->host, s->port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, V2T_PROG, V2T_VERS, &a);
	if (!cl)
		NOTE("clnt_rdma_create: %s", clnt_spcreateerror("create"));
	else
		clnt_control(cl, CLSET_TIMEOUT, &tv);
	return cl;
}

static unsigned int version(CLIENT *cl)
{
	unsigned int v = 0;

	clnt_control(cl, CLGET_RDMA_VERSION, &v);
	return v;
}

static v2t_seen seen(CLIENT *cl)
{
	v2t_seen s;

	memset(&s, 0, sizeof(s));
	if (v2t_seen_1(NULL, &s, cl) != RPC_SUCCESS)
		NOTE("SEEN: %s [%s]", clnt_sperror(cl, "seen"), td_errmsg(cl));
	return s;
}

/* FILL of len octets, the pattern checked; errno of a failure in *err. */
static enum clnt_stat fill(CLIENT *cl, uint32_t len, uint32_t seed,
			   bool *intact, int *err)
{
	v2t_fill_args a = { .len = len, .seed = seed };
	v2t_data d = { 0, NULL };
	struct rpc_err e;
	enum clnt_stat st;

	st = v2t_fill_1(&a, &d, cl);
	clnt_geterr(cl, &e);
	if (err)
		*err = e.re_errno;
	*intact = st == RPC_SUCCESS && d.v2t_data_len == len &&
		  t_fill_check(d.v2t_data_val, len, seed) < 0;
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_v2t_data, (char *)&d);
	return st;
}

#define D(f) TD_D(&b, &a, f)

/* ---- nego ---------------------------------------------------------------- */

/* The other side's CONNPROP arrives once v2 is settled (AMB-V2-9): a few
 * calls give both sides the chance. */
static bool peer_props(CLIENT *cl, struct rpcrdma_props *p)
{
	int i;

	for (i = 0; i < 20; i++) {
		memset(p, 0, sizeof(*p));
		if (clnt_control(cl, CLGET_RDMA_PEER_PROPS, p) && p->received)
			return true;
		v2t_null_1(NULL, NULL, cl);
		usleep(50000);
	}
	return false;
}

/* Auto and forced clients against a server of both versions. */
static void nego_both(void)
{
	struct rpcrdma_clnt_stats a, b;
	struct rpcrdma_props p;
	bool intact;
	v2t_seen s;
	CLIENT *cl;

	if (!start(&srv4, t_addr4(), NULL))
		return;
	cl = client(&srv4, RPCRDMA_VERSION_AUTO, RPCRDMA_REG_AUTO, 0);
	if (cl) {
		td_stats(cl, &a);
		CHECK(fill(cl, 3000, 1, &intact, NULL) == RPC_SUCCESS && intact,
		      "auto: FILL 3000 intact");
		intact = peer_props(cl, &p);
		CHECK(intact && p.version == 2 && p.rbsiz == 4096 && p.brs == 1,
		      "auto: version 2 (%u), the server's CONNPROP: RBSIZ %u, BRS %u (V2-NEG-3, V2-OPS-4)",
		      p.version, p.rbsiz, p.brs);
		s = seen(cl);
		td_stats(cl, &b);
		CHECK(s.rdma_version == 2 && s.props_received &&
			      s.rbsiz == 4096 && s.brs == 1,
		      "auto: the server saw version %u and our CONNPROP: RBSIZ %u, BRS %u (AMB-V2-9)",
		      s.rdma_version, s.rbsiz, s.brs);
		CHECK(D(v2_calls) == D(calls) && D(vers_fallbacks) == 0 &&
			      D(err_vers) == 0,
		      "auto: every Call in v2 (%llu of %llu), no fallback",
		      D(v2_calls), D(calls));
		clnt_destroy(cl);
	}
	cl = client(&srv4, RPCRDMA_VERSION_1, RPCRDMA_REG_AUTO, 0);
	if (cl) {
		td_stats(cl, &a);
		CHECK(fill(cl, 3000, 2, &intact, NULL) == RPC_SUCCESS &&
			      intact && version(cl) == 1,
		      "forced v1 against a server of both: FILL 3000 intact, version %u",
		      version(cl));
		s = seen(cl);
		td_stats(cl, &b);
		CHECK(s.rdma_version == 1 && !s.props_received &&
			      D(v2_calls) == 0,
		      "forced v1: the server answers in v1 (%u, V2-NEG-7), no properties, no v2 Call (%llu)",
		      s.rdma_version, D(v2_calls));
		clnt_destroy(cl);
	}
	stop(&srv4);
}

/* Clients against a server that speaks only version 1. */
static void nego_v1_server(void)
{
	struct rpcrdma_clnt_stats a, b;
	struct rpc_err e;
	bool intact;
	v2t_seen s;
	CLIENT *cl;
	int err = 0;

	if (!start(&srv4, t_addr4(), "1"))
		return;
	cl = client(&srv4, RPCRDMA_VERSION_AUTO, RPCRDMA_REG_AUTO, 0);
	if (cl) {
		td_stats(cl, &a);
		CHECK(fill(cl, 3000, 3, &intact, &err) == RPC_SUCCESS && intact,
		      "auto against a v1-only server: the first call succeeds (%s) [%s]",
		      strerror(err), td_errmsg(cl));
		s = seen(cl);
		td_stats(cl, &b);
		CHECK(version(cl) == 1 && s.rdma_version == 1 &&
			      D(vers_fallbacks) == 1 && s.err_vers == 1 &&
			      D(err_vers) == 0 && D(resends) == 1,
		      "... after ERR_VERS (%llu sent) the same RPC went on in v1 on the same connection: version %u, fallbacks %llu, connects %llu (V2-NEG-4/5, S-6)",
		      (unsigned long long)s.err_vers, version(cl),
		      D(vers_fallbacks), D(connects));
		CHECK(D(connects) == 0, "... no new connection for it (%llu)",
		      D(connects));
		clnt_destroy(cl);
	}
	cl = client(&srv4, RPCRDMA_VERSION_2, RPCRDMA_REG_AUTO, 0);
	if (cl) {
		CHECK(v2t_null_1(NULL, NULL, cl) == RPC_SYSTEMERROR,
		      "forced v2 against a v1-only server: RPC_SYSTEMERROR [%s]",
		      td_errmsg(cl));
		clnt_geterr(cl, &e);
		CHECK(e.re_errno == EPROTONOSUPPORT, "... EPROTONOSUPPORT (%s)",
		      strerror(e.re_errno));
		clnt_destroy(cl);
	}
	stop(&srv4);
}

static void group_nego(void)
{
	nego_both();
	nego_v1_server();
}

/* ---- wire ---------------------------------------------------------------- */

/* Send a hand-built header (and payload) and read the answer. */
static int raw_send(struct tc *t, const struct rw_hdr *h, const void *pay,
		    uint32_t plen, struct tc_reply *rep, int ms)
{
	uint8_t msg[4096];
	size_t n = rw_hdr_encode(h, msg, sizeof(msg));
	int got;

	memset(rep, 0, sizeof(*rep));
	if (!n || n + plen > sizeof(msg))
		return -EINVAL;
	if (plen)
		memcpy(msg + n, pay, plen);
	if (tc_send(t, msg, (uint32_t)(n + plen)))
		return -ENOTCONN;
	got = tc_recv(t, rep->raw, sizeof(rep->raw), ms);
	if (got < 0)
		return got;
	rep->len = (uint32_t)got;
	rw_hdr_space_init(&rep->sp, &rw_v2_limits);
	rep->why = rw_hdr_decode(rep->raw, rep->len, &rep->h, &rep->sp);
	return 0;
}

/* h encoded, then its rdma_vers word replaced by vers. */
static int raw_send_vers(struct tc *t, const struct rw_hdr *h, uint32_t vers,
			 struct tc_reply *rep, int ms)
{
	uint8_t msg[256];
	size_t n = rw_hdr_encode(h, msg, sizeof(msg));
	uint32_t w = tc_be(vers);
	int got;

	memset(rep, 0, sizeof(*rep));
	if (!n)
		return -EINVAL;
	memcpy(msg + 4, &w, 4);
	if (tc_send(t, msg, (uint32_t)n))
		return -ENOTCONN;
	got = tc_recv(t, rep->raw, sizeof(rep->raw), ms);
	if (got < 0)
		return got;
	rep->len = (uint32_t)got;
	rw_hdr_space_init(&rep->sp, &rw_v2_limits);
	rep->why = rw_hdr_decode(rep->raw, rep->len, &rep->h, &rep->sp);
	return 0;
}

/* An RDMA2_ERROR for xid with code: the fixed words right. */
static bool is_err(const struct tc_reply *r, uint32_t xid, uint32_t vers,
		   uint32_t code)
{
	return !r->why && r->h.proc == RW_ERROR && r->h.xid == xid &&
	       r->h.vers == vers && r->h.err.code == code && r->h.credit;
}

static void null_call(struct tc *t, uint32_t vers, const char *what)
{
	struct tc_call k = { .prog = V2T_PROG,
			     .vers = V2T_VERS,
			     .proc = V2T_NULL,
			     .rdma_vers = vers };
	struct tc_reply r;
	int ret = tc_rpc(t, &k, NULL, NULL, &r, 5000);

	CHECK(!ret && !r.why && r.h.vers == vers && r.h.proc == RW_MSG &&
		      (vers == 1 ||
		       (r.h.direction == RW_DIR_REPLY && !r.h.inv_handle)) &&
		      r.rpc && r.ar_stat == SUCCESS,
	      "%s: NULL in v%u answered in v%u%s (V2-NEG-7, V2-DIR-2, AMB-V2-13) [%s]",
	      what, vers, r.h.vers,
	      vers == 2 ? ", direction REPLY, inv_handle 0" : "",
	      ret ? strerror(-ret) : rw_reason_str(r.why));
}

/* What the server answers to header-only messages (no RPC involved). */
static void wire_headers(struct tc *t)
{
	struct rw_prop pp[2];
	uint8_t vals[2][4] = { { 0, 0, 0x20, 0 }, { 0, 0, 0, 0 } };
	uint8_t bad[4] = { 0, 0, 0, 7 };
	struct tc_reply r;
	struct rw_hdr h;
	int ret;

	/* a v1 header relabelled version 3: the codec sends no such thing */
	rw_hdr_init(&h, RW_VERS_1, RW_MSG, 0x3001, 1);
	ret = raw_send_vers(t, &h, 3, &r, 5000);
	CHECK(!ret && is_err(&r, 0x3001, 3, RW_ERR_VERS) && r.h.err.low == 1 &&
		      r.h.err.high == 2,
	      "version 3: ERR_VERS 1..2, the XID echoed (V2-NEG-4, V1-ERR-6)");

	rw_hdr_init(&h, RW_VERS_2, RW2_OPTIONAL, 0x3002, 1);
	h.opt.dir = RW_DIR_CALL;
	h.opt.type = 77;
	ret = raw_send(t, &h, NULL, 0, &r, 5000);
	CHECK(!ret && is_err(&r, 0x3002, 2, RW2_ERR_INVAL_OPTION),
	      "RDMA2_OPTIONAL opttype 77: INVAL_OPTION, same XID (V2-OPT-1, V2-ERR-15)");
	h.xid = 0x3003;
	h.opt.type = 1; /* xcharext INITXCH: compatibility is off */
	ret = raw_send(t, &h, NULL, 0, &r, 5000);
	CHECK(!ret && is_err(&r, 0x3003, 2, RW2_ERR_INVAL_OPTION),
	      "RDMA2_OPTIONAL opttype 1 (xcharext, compatibility off): INVAL_OPTION (AMB-V2-1)");

	/* CONNPROP: one-way, never an RPC call */
	pp[0] = (struct rw_prop){ RW2_PROP_RBSIZ, 4, vals[0] };
	pp[1] = (struct rw_prop){ RW2_PROP_BRS, 4, vals[1] };
	rw_hdr_init(&h, RW_VERS_2, RW2_CONNPROP, 0x3004, 1);
	h.props.n = 2;
	h.props.props = pp;
	ret = raw_send(t, &h, NULL, 0, &r, 500);
	CHECK(ret == -ETIMEDOUT,
	      "CONNPROP {RBSIZ 8192, BRS NONE}: no answer, it is one-way (%s)",
	      ret ? strerror(-ret) : "answered");

	/* REQPROP: answered by RESPROP, same XID (V2-OPS-8/9) */
	vals[1][3] = RW2_BRS_INLINE; /* the server's own: done */
	pp[0] = (struct rw_prop){ RW2_PROP_BRS, 4, vals[1] };
	pp[1] = (struct rw_prop){ RW2_PROP_RBSIZ, 4, vals[0] }; /* change */
	rw_hdr_init(&h, RW_VERS_2, RW2_REQPROP, 0x3005, 1);
	h.props.n = 2;
	h.props.props = pp;
	ret = raw_send(t, &h, NULL, 0, &r, 5000);
	CHECK(!ret && !r.why && r.h.proc == RW2_RESPROP && r.h.xid == 0x3005 &&
		      rw_subset_test(&r.h.subset1, 0) &&
		      !rw_subset_test(&r.h.subset1, 1) &&
		      rw_subset_test(&r.h.subset2, 1) &&
		      !rw_subset_test(&r.h.subset2, 0) && r.h.props.n == 0,
	      "REQPROP {BRS INLINE, RBSIZ 8192}: RESPROP, same XID, done {0}, rejected {1} (V2-OPS-8/9/11, V2-PROP-6)");

	/* UPDPROP with an impossible value: an XDR error (V2-PROP-2) */
	pp[0] = (struct rw_prop){ RW2_PROP_BRS, 4, bad };
	rw_hdr_init(&h, RW_VERS_2, RW2_UPDPROP, 0x3006, 1);
	h.props.n = 1;
	h.props.props = pp;
	ret = raw_send(t, &h, NULL, 0, &r, 5000);
	CHECK(!ret && is_err(&r, 0x3006, 2, RW2_ERR_BAD_XDR),
	      "UPDPROP BRS 7: BAD_XDR (V2-PROP-2, AMB-V2-2)");

	/* an unsolicited RESPROP is dropped */
	rw_hdr_init(&h, RW_VERS_2, RW2_RESPROP, 0x3007, 1);
	ret = raw_send(t, &h, NULL, 0, &r, 500);
	CHECK(ret == -ETIMEDOUT, "RESPROP never asked for: dropped (%s)",
	      ret ? strerror(-ret) : "answered");
}

/* A v2 RDMA_MSG with nchunks Write chunks of nsegs segments each, then
 * pay: built word by word, since the codec refuses more than its
 * ceilings. */
static int raw_writes(struct tc *t, uint32_t xid, uint32_t nchunks,
		      uint32_t nsegs, const void *pay, uint32_t plen,
		      struct tc_reply *rep)
{
	uint32_t w[1024], n = 0, c, g;
	int got;

	w[n++] = tc_be(xid);
	w[n++] = tc_be(RW_VERS_2);
	w[n++] = tc_be(1);
	w[n++] = tc_be(RW_MSG);
	w[n++] = tc_be(RW_DIR_CALL);
	w[n++] = 0; /* inv_handle */
	w[n++] = 0; /* no Read list */
	for (c = 0; c < nchunks; c++) {
		w[n++] = tc_be(1);
		w[n++] = tc_be(nsegs);
		for (g = 0; g < nsegs; g++) {
			w[n++] = tc_be(0x200 + g);
			w[n++] = tc_be(4096);
			w[n++] = 0;
			w[n++] = tc_be(0x10000 + 4096 * g);
		}
	}
	w[n++] = 0; /* end of the Write list */
	w[n++] = 0; /* no Reply chunk */
	memcpy(w + n, pay, plen);
	memset(rep, 0, sizeof(*rep));
	if (tc_send(t, w, 4 * n + plen))
		return -ENOTCONN;
	got = tc_recv(t, rep->raw, sizeof(rep->raw), 5000);
	if (got < 0)
		return got;
	rep->len = (uint32_t)got;
	rw_hdr_space_init(&rep->sp, &rw_v2_limits);
	rep->why = rw_hdr_decode(rep->raw, rep->len, &rep->h, &rep->sp);
	return 0;
}

/* A v2 Call header with n Read chunks, or n Write chunks, or one Write
 * chunk of n segments: over the server's limits of 8, 8 and 16. */
static void wire_limits(struct tc *t)
{
	static struct rw_read_seg reads[9];
	uint8_t pay[512];
	struct tc_reply r;
	struct rw_hdr h;
	uint32_t plen, i;
	int ret;

	for (i = 0; i < 9; i++) {
		reads[i] = (struct rw_read_seg){ 4 * (i + 1),
						 { 0x100 + i, 4, 0x1000 } };
	}
	plen = tc_short_call(t, 0x4001, V2T_NULL, NULL, NULL, pay, sizeof(pay));
	CHECK(plen > RW_V1_MIN_LEN, "an RPC Call to put behind the headers");
	if (plen <= RW_V1_MIN_LEN)
		return;
	/* tc_short_call puts its own v1 header first: keep the payload */
	plen -= RW_V1_MIN_LEN;
	memmove(pay, pay + RW_V1_MIN_LEN, plen);

	rw_hdr_init(&h, RW_VERS_2, RW_MSG, 0x4001, 1);
	h.nreads = 9;
	h.reads = reads;
	ret = raw_send(t, &h, pay, plen, &r, 5000);
	CHECK(!ret && is_err(&r, 0x4001, 2, RW2_ERR_READ_CHUNKS) &&
		      r.h.err.max == 8,
	      "9 Read chunks: READ_CHUNKS, max %u (V2-ERR-7)", r.h.err.max);
	/* past the codec's own ceilings: written word by word */
	ret = raw_writes(t, 0x4001, 9, 1, pay, plen, &r);
	CHECK(!ret && is_err(&r, 0x4001, 2, RW2_ERR_WRITE_CHUNKS) &&
		      r.h.err.max == 8,
	      "9 Write chunks: WRITE_CHUNKS, max %u (V2-ERR-9)", r.h.err.max);
	ret = raw_writes(t, 0x4001, 1, 17, pay, plen, &r);
	CHECK(!ret && is_err(&r, 0x4001, 2, RW2_ERR_SEGMENTS) &&
		      r.h.err.max == 16,
	      "a Write chunk of 17 segments: SEGMENTS, max %u (V2-ERR-11)",
	      r.h.err.max);
}

/* SEEN over the raw connection. */
static v2t_seen raw_seen(struct tc *t)
{
	struct tc_call k = { .prog = V2T_PROG,
			     .vers = V2T_VERS,
			     .proc = V2T_SEEN,
			     .rdma_vers = 2 };
	struct tc_reply r;
	v2t_seen s;

	memset(&s, 0, sizeof(s));
	if (tc_rpc(t, &k, (xdrproc_t)xdr_v2t_seen, &s, &r, 5000) || !r.res_ok)
		NOTE("SEEN over the raw connection failed");
	return s;
}

/* REPLY_RESOURCE, then the resend with the room it names, answered from
 * the kept reply: FILL ran once (V2-ERR-13/14, S-5, AMB-V2-4). */
static void wire_resource(struct tc *t)
{
	v2t_fill_args fa = { .len = 20000, .seed = 9 };
	struct tc_call k = { .prog = V2T_PROG,
			     .vers = V2T_VERS,
			     .proc = V2T_FILL,
			     .rdma_vers = 2,
			     .xargs = (xdrproc_t)xdr_v2t_fill_args,
			     .args = &fa,
			     .xid = 0x5001 };
	v2t_data d = { 0, NULL };
	v2t_seen s0, s1;
	struct tc_reply r;
	uint32_t need;
	int ret;

	s0 = raw_seen(t);
	CHECK(s0.props_received && s0.rbsiz == 8192 && s0.brs == 0,
	      "the server took our CONNPROP (RBSIZ %u, BRS %u), not as a call",
	      s0.rbsiz, s0.brs);
	ret = tc_rpc(t, &k, (xdrproc_t)xdr_v2t_data, &d, &r, 5000);
	need = r.h.err.length_needed;
	CHECK(!ret && is_err(&r, 0x5001, 2, RW2_ERR_REPLY_RESOURCE) &&
		      need >= fa.len && need < fa.len + 1024,
	      "FILL 20000 with no Reply chunk: REPLY_RESOURCE, %u octets needed (V2-ERR-14, S-5)",
	      need);
	k.reply_chunk = need;
	k.inv_handle = TC_INV_REPLY;
	ret = tc_rpc(t, &k, (xdrproc_t)xdr_v2t_data, &d, &r, 5000);
	CHECK(!ret && !r.why && r.h.proc == RW_NOMSG && r.res_ok &&
		      d.v2t_data_len == fa.len &&
		      t_fill_check(d.v2t_data_val, fa.len, fa.seed) < 0,
	      "... the resend with the same XID and a Reply chunk of that size: the result in the Reply chunk, intact (V2-ERR-13)");
	if (r.res_ok)
		xdr_free((xdrproc_t)xdr_v2t_data, (char *)&d);
	s1 = raw_seen(t);
	CHECK(s1.fills == s0.fills + 1 &&
		      s1.replays_done == s0.replays_done + 1 &&
		      s1.err_resource == s0.err_resource + 1,
	      "... FILL ran once (%llu), the resend was answered from the kept reply (%llu) (AMB-V2-4)",
	      (unsigned long long)(s1.fills - s0.fills),
	      (unsigned long long)(s1.replays_done - s0.replays_done));
	CHECK(s1.replies_inv == s0.replies_inv + 1,
	      "... and sent With Invalidate of the Reply chunk's handle, as nominated (V2-RI-4)");
	k.inv_handle = 0xdead0001; /* names no handle of the Call */
	k.xid = 0x5002;
	ret = tc_rpc(t, &k, (xdrproc_t)xdr_v2t_data, &d, &r, 5000);
	CHECK(!ret && is_err(&r, 0x5002, 2, RW2_ERR_BAD_XDR),
	      "inv_handle naming no handle of the Call: BAD_XDR, nothing invalidated (AMB-V2-14)");
	if (r.res_ok)
		xdr_free((xdrproc_t)xdr_v2t_data, (char *)&d);
}

static void group_wire(void)
{
	struct tc t;

	if (!start(&srv4, t_addr4(), NULL))
		return;
	memset(&t, 0, sizeof(t));
	/* memory windows: a handle nominated for Send With Invalidate must
	 * be one the device can invalidate (V2-RI-6) */
	setenv("RPCRDMA_REG_MODE", "mw", 1);
	CHECK(tc_connect(&t, &srv4, 10000) == 0, "raw client connected");
	unsetenv("RPCRDMA_REG_MODE");
	null_call(&t, 2, "raw v2");
	null_call(&t, 1, "raw v1 on the same server");
	wire_headers(&t);
	wire_limits(&t);
	wire_resource(&t);
	null_call(&t, 2, "after all that, the connection");
	tc_close(&t);
	stop(&srv4);
}

/* ---- resend -------------------------------------------------------------- */

/* A result of len octets with no binding, on cl: intact, FILL ran once. */
static void big_fill(CLIENT *cl, uint32_t len, const char *what,
		     unsigned int resends_min, unsigned int resends_max)
{
	struct rpcrdma_clnt_stats a, b;
	v2t_seen s0, s1;
	bool intact;
	int err = 0;

	s0 = seen(cl);
	td_stats(cl, &a);
	CHECK(fill(cl, len, 11, &intact, &err) == RPC_SUCCESS && intact,
	      "%s: FILL %u with no binding: intact (%s) [%s]", what, len,
	      strerror(err), td_errmsg(cl));
	td_stats(cl, &b);
	s1 = seen(cl);
	CHECK(D(resends) >= resends_min && D(resends) <= resends_max &&
		      D(long_replies) == 1 && D(err_chunk) == 0,
	      "%s: %llu resend(s), the result in a Reply chunk (%llu)", what,
	      D(resends), D(long_replies));
	CHECK(s1.fills == s0.fills + 1 &&
		      s1.replays_done == s0.replays_done + D(resends),
	      "%s: FILL executed once (%llu), every resend answered from the kept reply (%llu)",
	      what, (unsigned long long)(s1.fills - s0.fills),
	      (unsigned long long)(s1.replays_done - s0.replays_done));
}

static void small_fill(CLIENT *cl, const char *what)
{
	struct rpcrdma_clnt_stats a, b;
	bool intact;

	td_stats(cl, &a);
	CHECK(fill(cl, 3000, 12, &intact, NULL) == RPC_SUCCESS && intact,
	      "%s: FILL 3000 intact", what);
	td_stats(cl, &b);
	CHECK(D(reply_chunks) == 0 && D(registrations) == 0 && D(resends) == 0,
	      "%s: inline, no Reply chunk (%llu), no registration (%llu), no resend",
	      what, D(reply_chunks), D(registrations));
}

static void group_resend(void)
{
	CLIENT *cl;

	if (!start(&srv4, t_addr4(), NULL) || !start(&srv6, t_addr6(), NULL))
		return;
	cl = client(&srv4, RPCRDMA_VERSION_2, RPCRDMA_REG_AUTO, 0);
	if (cl) {
		small_fill(cl, "rdma v2");
		big_fill(cl, BIG, "rdma v2", 1, 1);
		clnt_destroy(cl);
	}
	cl = client(&srv6, RPCRDMA_VERSION_2, RPCRDMA_REG_AUTO, 0);
	if (cl) {
		big_fill(cl, BIG, "rdma6 v2", 1, 1);
		clnt_destroy(cl);
	}
	/* v1: Reply chunks of 1 MiB, 16 MiB, then max_reply_size */
	cl = client(&srv4, RPCRDMA_VERSION_1, RPCRDMA_REG_AUTO, BIG + MiB);
	if (cl) {
		small_fill(cl, "rdma v1");
		big_fill(cl, BIG, "rdma v1", 3, 3);
		clnt_destroy(cl);
	}
	cl = client(&srv6, RPCRDMA_VERSION_1, RPCRDMA_REG_AUTO, BIG + MiB);
	if (cl) {
		big_fill(cl, 2 * MiB, "rdma6 v1", 2, 2);
		clnt_destroy(cl);
	}
	stop(&srv4);
	stop(&srv6);
}

/* ---- inv ----------------------------------------------------------------- */

/* FILL's results bounded, so every call offers a Reply chunk: one window
 * per call in MW mode. */
static void bound_fill(void)
{
	struct rpcrdma_ulb_entry e = {
		.prog = V2T_PROG,
		.vers = V2T_VERS,
		.proc = V2T_FILL,
		.dir = RPCRDMA_ULB_REPLY,
		.reply_max = { RPCRDMA_ULB_SIZE_ARG, 64, 0 },
	};

	CHECK(rpcrdma_ulb_register(&e) == 0,
	      "FILL's results bounded by the length asked for: a Reply chunk on every call");
}

/* n FILLs of 20000 in MW mode: what fenced their windows. */
static void inv_round(enum rpcrdma_version v, const char *what,
		      bool want_remote)
{
	struct rpcrdma_clnt_stats a, b;
	v2t_seen s0, s1;
	bool intact, all = true;
	CLIENT *cl;
	int i, n = 10;

	cl = client(&srv4, v, RPCRDMA_REG_MW, 0);
	if (!cl)
		return;
	s0 = seen(cl);
	td_stats(cl, &a);
	for (i = 0; i < n; i++)
		all &= fill(cl, 20000, 20 + i, &intact, NULL) == RPC_SUCCESS &&
		       intact;
	td_stats(cl, &b);
	s1 = seen(cl);
	CHECK(all && D(reply_chunks) == (unsigned long long)n,
	      "%s: %d FILLs intact, each through a Reply chunk (%llu)", what, n,
	      D(reply_chunks));
	CHECK(D(registrations) == D(invalidations) + D(remote_invalidations),
	      "%s: every window fenced: %llu = %llu local + %llu remote", what,
	      D(registrations), D(invalidations), D(remote_invalidations));
	if (want_remote)
		CHECK(D(remote_invalidations) == (unsigned long long)n &&
			      D(invalidations) == 0 &&
			      s1.replies_inv - s0.replies_inv == (uint64_t)n,
		      "%s: the server invalidated each window with its Send (%llu sent, %llu seen): one local invalidation fewer per call (V2-RI-4, S-10)",
		      what,
		      (unsigned long long)(s1.replies_inv - s0.replies_inv),
		      D(remote_invalidations));
	else
		CHECK(D(remote_invalidations) == 0 && D(inv_nominated) == 0 &&
			      D(invalidations) == (unsigned long long)n,
		      "%s: nothing nominated (%llu), every window invalidated locally (%llu)",
		      what, D(inv_nominated), D(invalidations));
	clnt_destroy(cl);
}

static void group_inv(void)
{
	if (!start(&srv4, t_addr4(), NULL))
		return;
	bound_fill();
	inv_round(RPCRDMA_VERSION_2, "v2, MW", true);
	inv_round(RPCRDMA_VERSION_1, "v1, MW, RFC 8797", true);
	setenv("RPCRDMA_REMOTE_INV", "0", 1);
	inv_round(RPCRDMA_VERSION_2, "v2, MW, RPCRDMA_REMOTE_INV=0", false);
	unsetenv("RPCRDMA_REMOTE_INV");
	stop(&srv4);
}

/* ---- xch ----------------------------------------------------------------- */

/* What the raw client received on one connection (tc.on_recv). */
struct xch_watch {
	unsigned int msgs;
	unsigned int xchar;   /* RDMA2_OPTIONAL with opttype 1-4 */
	unsigned int respxch; /* ... of them opttype 3 */
};

/* Every message is looked at here, before tc_rpc() passes over the ones
 * it does not wait for: words 1, 3 and 5 of an RDMA2_OPTIONAL are
 * rdma_vers, rdma_proc and opttype (XC-TV1). */
static void xch_look(void *arg, const uint8_t *msg, uint32_t len)
{
	struct xch_watch *w = arg;
	uint32_t word[6];

	w->msgs++;
	if (len < sizeof(word))
		return;
	memcpy(word, msg, sizeof(word));
	if (tc_be(word[1]) != RW_VERS_2 || tc_be(word[3]) != RW2_OPTIONAL ||
	    tc_be(word[5]) < RW_XC_INITXCH || tc_be(word[5]) > RW_XC_UPDXCH)
		return;
	w->xchar++;
	if (tc_be(word[5]) == RW_XC_RESPXCH)
		w->respxch++;
}

/* The address clients leave from in the VM (tests/vm/README.md). */
static const char *client_addr4(void)
{
	const char *a = getenv("RDMA_CLIENT_ADDR4");

	return a && *a ? a : t_addr4();
}

/* v2t_server on host with RPCRDMA_XCHAREXT=list in its environment. */
static bool start_xch(struct ts_server *s, const char *host, const char *list)
{
	bool ok;

	setenv("RPCRDMA_XCHAREXT", list, 1);
	ok = start(s, host, NULL);
	unsetenv("RPCRDMA_XCHAREXT");
	NOTE("... with RPCRDMA_XCHAREXT=%s", list);
	return ok;
}

/* The address of sa as the server's list must write it (inet_ntop). */
static const char *addr_text(const struct sockaddr *sa, char *buf,
			     socklen_t len)
{
	const struct sockaddr_in6 *s6 = (const void *)sa;
	const struct sockaddr_in *s4 = (const void *)sa;

	if (!sa)
		return "";
	if (!inet_ntop(sa->sa_family,
		       sa->sa_family == AF_INET6 ?
			       (const void *)&s6->sin6_addr :
			       (const void *)&s4->sin_addr,
		       buf, len))
		return "";
	return buf;
}

/* A raw client of s watched by w, leaving from the address we expect
 * (the one the server's list names, or not). */
static bool xch_connect(struct tc *t, const struct ts_server *s,
			struct xch_watch *w, const char *from)
{
	char buf[INET6_ADDRSTRLEN];
	const char *local;

	memset(w, 0, sizeof(*w));
	if (!CHECK_OK(tc_connect(t, s, 10000) == 0,
		      "raw client connected to %s", s->host))
		return false;
	t->on_recv = xch_look;
	t->on_recv_arg = w;
	local = addr_text(rt_conn_local_addr(t->c), buf, sizeof(buf));
	return CHECK_OK(!strcmp(local, from), "... from %s (%s)", from, local);
}

/*
 * The xcharext optinfo bodies sent (doc/requirements.md §6; big-endian words).
 * INITXCH: xcharspec {RBSIZ 2048, REQREMINV TRUE, BRS NONE}, no
 * xcharsubset.  Read with v2-05 ids, {2, 1} would be BRS INLINE and 3
 * unknown: BRS is NONE only when the xcharext ids are used (AMB-X-1).  Our
 * Receives are 4096 octets: 2048 promises less than we take.
 */
static const uint32_t xch_init[] = { 3, 1, 4, 2048,	    2, 4,
				     1, 3, 4, RW2_BRS_NONE, 0 };
/* UPDXCH: one xcharval, RBSIZ 3072, pendclr FALSE (XC-11). */
static const uint32_t xch_upd[] = { 1, 4, 3072, 0 };
/* REQXCH: {RBSIZ 4096, REQREMINV TRUE, BRS INLINE, id 77 empty}: the
 * server's own RBSIZ and BRS (its CONNPROP says 4096, INLINE) are done,
 * REQREMINV (its own is FALSE) and the unknown id are rejected. */
static const uint32_t xch_req[] = { 4, 1, 4, 4096,	     2,	 4,
				    1, 3, 4, RW2_BRS_INLINE, 77, 0 };
/* INITXCH with one xcharspec announced and none there (XC-1). */
static const uint32_t xch_short[] = { 1 };

/* Send RDMA2_OPTIONAL opttype type with optinfo words (host order) and
 * read the answer, waiting ms. */
static int xch_send(struct tc *t, uint32_t xid, uint32_t type,
		    const uint32_t *words, size_t n, struct tc_reply *r, int ms)
{
	uint8_t info[64];
	struct rw_hdr h;
	uint32_t be;
	size_t i;

	if (4 * n > sizeof(info))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		be = tc_be(words[i]);
		memcpy(info + 4 * i, &be, 4);
	}
	rw_hdr_init(&h, RW_VERS_2, RW2_OPTIONAL, xid, 1);
	h.opt.dir = RW_DIR_CALL;
	h.opt.type = type;
	h.opt.len = (uint32_t)(4 * i);
	h.opt.info = info;
	return raw_send(t, &h, NULL, 0, r, ms);
}

/* No message within ms (-ETIMEDOUT); anything that came is still shown to
 * the watch. */
static int xch_quiet(struct tc *t, int ms)
{
	uint8_t buf[4096];

	return tc_recv(t, buf, sizeof(buf), ms);
}

/* The RESPXCH to xch_req, word by word: the REQXCH's XID (XC-9), version
 * 2, a grant, RDMA2_OPTIONAL, optdir REPLY, opttype 3, then optinfo_respxch
 * {done {0, 2}, rej {1, 3}, pend {}} (doc/requirements.md §6, XC-TV4's
 * layout). */
static bool is_respxch(const struct tc_reply *r, uint32_t xid)
{
	static const uint32_t want[] = {
		RW2_OPTIONAL, RW_DIR_REPLY, RW_XC_RESPXCH, 20, 1, 0x5, 1, 0xa, 0
	};
	uint32_t w[12];
	size_t i;

	if (r->len != sizeof(w))
		return false;
	memcpy(w, r->raw, sizeof(w));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (tc_be(w[3 + i]) != want[i])
			return false;
	return tc_be(w[0]) == xid && tc_be(w[1]) == RW_VERS_2 && w[2] &&
	       !r->why && r->h.proc == RW2_OPTIONAL &&
	       r->h.opt.type == RW_XC_RESPXCH;
}

/* Compatibility on for this client: everything taken or answered. */
static void xch_on(struct ts_server *s, const char *from, const char *what)
{
	struct xch_watch w;
	struct tc_reply r;
	v2t_seen s0, s1;
	struct tc t;
	int ret;

	if (!xch_connect(&t, s, &w, from)) {
		tc_close(&t);
		return;
	}
	null_call(&t, 2, what);
	s0 = raw_seen(&t);
	ret = xch_send(&t, 0x6001, RW_XC_INITXCH, xch_init,
		       ARRAY_SIZE(xch_init), &r, 500);
	CHECK(ret == -ETIMEDOUT,
	      "%s: INITXCH {RBSIZ 2048, REQREMINV TRUE, BRS NONE} taken, nothing answered, no error (AMB-V2-1) (%s)",
	      what, ret ? strerror(-ret) : "answered");
	s1 = raw_seen(&t);
	CHECK(!s0.props_received && s1.props_received && s1.rbsiz == 2048 &&
		      s1.brs == RW2_BRS_NONE,
	      "%s: ... read with xcharext ids: RBSIZ %u, BRS %u (id 3; id 2 is REQREMINV, not v2-05's BRS) (AMB-X-1)",
	      what, s1.rbsiz, s1.brs);
	ret = xch_send(&t, 0x6002, RW_XC_UPDXCH, xch_upd, ARRAY_SIZE(xch_upd),
		       &r, 500);
	s1 = raw_seen(&t);
	CHECK(ret == -ETIMEDOUT && s1.rbsiz == 3072 && s1.brs == RW2_BRS_NONE,
	      "%s: UPDXCH RBSIZ 3072 taken, nothing answered: RBSIZ now %u (XC-11)",
	      what, s1.rbsiz);
	ret = xch_send(&t, 0x6003, RW_XC_REQXCH, xch_req, ARRAY_SIZE(xch_req),
		       &r, 5000);
	CHECK(!ret && is_respxch(&r, 0x6003),
	      "%s: REQXCH {RBSIZ 4096, REQREMINV TRUE, BRS INLINE, 77}: RESPXCH with its XID 0x6003 (%#x), done {0, 2}, rejected {1, 3}, nothing pending (XC-9, XC-8, XC-3, XC-10)",
	      what, r.h.xid);
	ret = xch_send(&t, 0x6004, RW_XC_RESPXCH, NULL, 0, &r, 5000);
	CHECK(!ret && is_err(&r, 0x6004, 2, RW2_ERR_INVAL_OPTION),
	      "%s: a RESPXCH the server never asked for: INVAL_OPTION (XC-4)",
	      what);
	ret = xch_send(&t, 0x6005, RW_XC_INITXCH, xch_short,
		       ARRAY_SIZE(xch_short), &r, 5000);
	CHECK(!ret && is_err(&r, 0x6005, 2, RW2_ERR_BAD_XDR),
	      "%s: INITXCH announcing a value it does not hold: BAD_XDR (XC-1)",
	      what);
	null_call(&t, 2, what);
	s1 = raw_seen(&t);
	CHECK(s1.rbsiz == 3072,
	      "%s: ... and the bad INITXCH changed nothing: RBSIZ %u", what,
	      s1.rbsiz);
	ret = xch_quiet(&t, 300);
	CHECK(ret == -ETIMEDOUT && w.xchar == 1 && w.respxch == 1,
	      "%s: of %u messages received, one xcharext message, the RESPXCH (%u): the server sends no other (AMB-V2-1)",
	      what, w.msgs, w.xchar);
	tc_close(&t);
}

/* Compatibility off for this client: every xcharext operation refused. */
static void xch_off(struct ts_server *s, const char *from, const char *what)
{
	struct xch_watch w;
	struct tc_reply r;
	v2t_seen s0, s1;
	struct tc t;
	int ret;

	if (!xch_connect(&t, s, &w, from)) {
		tc_close(&t);
		return;
	}
	null_call(&t, 2, what);
	s0 = raw_seen(&t);
	ret = xch_send(&t, 0x7001, RW_XC_INITXCH, xch_init,
		       ARRAY_SIZE(xch_init), &r, 5000);
	CHECK(!ret && is_err(&r, 0x7001, 2, RW2_ERR_INVAL_OPTION),
	      "%s: INITXCH: INVAL_OPTION, its XID (AMB-V2-1, XC-4)", what);
	ret = xch_send(&t, 0x7002, RW_XC_REQXCH, xch_req, ARRAY_SIZE(xch_req),
		       &r, 5000);
	CHECK(!ret && is_err(&r, 0x7002, 2, RW2_ERR_INVAL_OPTION),
	      "%s: REQXCH: INVAL_OPTION, its XID, no RESPXCH (XC-4)", what);
	ret = xch_send(&t, 0x7003, RW_XC_UPDXCH, xch_upd, ARRAY_SIZE(xch_upd),
		       &r, 5000);
	CHECK(!ret && is_err(&r, 0x7003, 2, RW2_ERR_INVAL_OPTION),
	      "%s: UPDXCH: INVAL_OPTION (XC-4)", what);
	s1 = raw_seen(&t);
	CHECK(!s0.props_received && !s1.props_received && s1.rbsiz == 4096 &&
		      s1.brs == RW2_BRS_INLINE,
	      "%s: ... none of them taken: properties received %llu, RBSIZ %u, BRS %u (the defaults)",
	      what, (unsigned long long)s1.props_received, s1.rbsiz, s1.brs);
	null_call(&t, 2, what);
	ret = xch_quiet(&t, 300);
	CHECK(ret == -ETIMEDOUT && w.msgs >= 6 && w.xchar == 0,
	      "%s: of %u messages received, %u xcharext: the server sends none where it is off (AMB-V2-1)",
	      what, w.msgs, w.xchar);
	tc_close(&t);
}

static void group_xch(void)
{
	const char *c4 = client_addr4(), *c6 = t_addr6();
	char on[160], off6[80];

	/* another address first: the match is per entry of the list */
	snprintf(on, sizeof(on), "198.51.100.7,%s,%s", c4, c6);
	if (start_xch(&srv4, t_addr4(), on)) {
		xch_on(&srv4, c4, "rdma, client listed");
		stop(&srv4);
	}
	if (start_xch(&srv6, t_addr6(), on)) {
		xch_on(&srv6, c6, "rdma6, client listed");
		stop(&srv6);
	}
	if (start_xch(&srv4, t_addr4(), "198.51.100.7,2001:db8::99")) {
		xch_off(&srv4, c4, "rdma, client not listed");
		stop(&srv4);
	}
	/* the client's IPv4 address does not name its IPv6 one */
	snprintf(off6, sizeof(off6), "%s,2001:db8::99", c4);
	if (start_xch(&srv6, t_addr6(), off6)) {
		xch_off(&srv6, c6,
			"rdma6, only the client's IPv4 address listed");
		stop(&srv6);
	}
}

/* ---- main ---------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*run)(void);
} groups[] = {
	{ "nego", group_nego },	    { "wire", group_wire },
	{ "resend", group_resend }, { "inv", group_inv },
	{ "xch", group_xch },
};

int main(int argc, char **argv)
{
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; argc == 3 && !strcmp(argv[1], "--only") &&
		    i < sizeof(groups) / sizeof(groups[0]);
	     i++)
		if (!strcmp(argv[2], groups[i].name))
			break;
	if (argc != 3 || i == sizeof(groups) / sizeof(groups[0])) {
		fprintf(stderr,
			"usage: t_v2 --only nego|wire|resend|inv|xch\n");
		return 2;
	}
	if (!ts_have_rdma())
		return 77;
	/* the version in force comes from each test, not the suite's */
	unsetenv("RPCRDMA_VERSION");
	td_watchdog(WATCHDOG_S, servers, 2);
	groups[i].run();
	return tu_done();
}
