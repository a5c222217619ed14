/*
 * t_clnt.c - the RPC-over-RDMA CLIENT (clnt_rdma_create) against a real
 * Soft-RoCE device, through librpcrdma's public interface and rpcgen stubs:
 * creation failures and their messages, Short/Long Calls and Replies of
 * 0 B to 8 MiB verified byte for byte over IPv4 and IPv6 in both
 * registration modes and both completion modes, every control request,
 * AUTH_SYS, RDMA_ERROR and malformed Replies (fake responder only),
 * timeouts (measured), send-only calls, 8 threads x 1000 calls within the
 * credit grant, a server killed mid-run and restarted (reconnect), and
 * (vcache, fake responder only) a v1-only server that drops v2
 * connections, remembered so that the next connection speaks v1.
 *
 * The server is the fake responder of t_clnt_srv.c, or the command in
 * $T_CLNT_SERVER ("%p" port, "%c" credits), started in the background.
 * One line per check; exit 1 if any failed, 77 (skip) without a device.
 *
 *   t_clnt [--quick] [--only PARTS]   run the tests (--quick: sizes up to
 *                     64 KiB, a tenth of the calls; PARTS: a comma-separated
 *                     list of sizes4, sizes6, misc, threads, vcache;
 *                     default all)
 *   t_clnt --serve PORT CREDITS       be the fake responder
 *   t_clnt --probe HOST PORT          one NULL call and one echo, verbose
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "glue/clnt_rdma.h"
#include "rpc/rr_call.h"
#include "rtest.h"
#include "tests/vm/t_clnt_util.h"

#define MiB	(1u << 20)
#define CREDITS 16u

static struct t_server srv;
static bool quick;
static bool fake; /* the fake responder: hooks available */

static const unsigned int sizes[] = {
	0, 1, 3, 4, 1000, 1024, 4095, 4096, 65536, MiB, 8 * MiB,
};

static const char *mode_name(enum rpcrdma_reg_mode m)
{
	return m == RPCRDMA_REG_MW ? "mw" : m == RPCRDMA_REG_MR ? "mr" : "auto";
}

static CLIENT *mk(const char *host, enum rpcrdma_reg_mode reg,
		  enum rpcrdma_comp_mode comp)
{
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;

	rpcrdma_attr_init(&a);
	a.reg_mode = reg;
	a.comp_mode = comp;
	a.max_reply_size = 8 * MiB + 4096;
	a.connect_timeout_ms = 5000;
	t_sockaddr(&ss, host, srv.port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      &a);
	if (!cl)
		NOTE("clnt_rdma_create(%s): %s", host,
		     clnt_spcreateerror("create"));
	return cl;
}

static const char *errmsg(CLIENT *cl)
{
	static char m[RPCRDMA_ERRMSG_LEN];

	if (!clnt_control(cl, CLGET_RDMA_ERRMSG, m))
		snprintf(m, sizeof(m), "(no message)");
	return m;
}

/* The requester's counters; a refusal is a failure, since zeros would
 * pass every "none beyond the grant" check. */
static void rr_stats(CLIENT *cl, struct rr_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!clnt_control(cl, CLGET_RDMA_RR_STATS, st))
		CHECK(false, "CLGET_RDMA_RR_STATS refused");
}

/* ---- Data ------------------------------------------------------------------ */

static bool echo(CLIENT *cl, uint32_t len, uint32_t seed)
{
	rtest_data in, out;
	enum clnt_stat st;
	bool ok;

	in.rtest_data_len = len;
	in.rtest_data_val = malloc(len ? len : 1);
	t_fill(in.rtest_data_val, len, seed);
	memset(&out, 0, sizeof(out));
	st = rtest_echo_1(&in, &out, cl);
	ok = st == RPC_SUCCESS && out.rtest_data_len == len &&
	     t_fill_check(out.rtest_data_val, len, seed) < 0;
	if (st != RPC_SUCCESS)
		NOTE("echo %u: %s (%s)", len, clnt_sperror(cl, "echo"),
		     errmsg(cl));
	free(in.rtest_data_val);
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
	return ok;
}

static bool fill(CLIENT *cl, uint32_t len, uint32_t seed)
{
	rtest_fill_args a = { .len = len, .seed = seed };
	rtest_data out;
	enum clnt_stat st;
	bool ok;

	memset(&out, 0, sizeof(out));
	st = rtest_fill_1(&a, &out, cl);
	ok = st == RPC_SUCCESS && out.rtest_data_len == len &&
	     t_fill_check(out.rtest_data_val, len, seed) < 0;
	if (st != RPC_SUCCESS)
		NOTE("fill %u: %s (%s)", len, clnt_sperror(cl, "fill"),
		     errmsg(cl));
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
	return ok;
}

static bool null_call(CLIENT *cl)
{
	return rtest_null_1(NULL, NULL, cl) == RPC_SUCCESS;
}

/* Average round trip of n calls, in microseconds, or -1. */
static double rtt_null(CLIENT *cl, int n)
{
	int64_t t0 = t_us();
	int i;

	for (i = 0; i < n; i++)
		if (!null_call(cl))
			return -1;
	return (double)(t_us() - t0) / n;
}

static double rtt_echo(CLIENT *cl, uint32_t len, int n)
{
	int64_t t0 = t_us();
	int i;

	for (i = 0; i < n; i++)
		if (!echo(cl, len, (uint32_t)i))
			return -1;
	return (double)(t_us() - t0) / n;
}

static void test_sizes(const char *host, enum rpcrdma_reg_mode reg,
		       enum rpcrdma_comp_mode comp)
{
	const char *cm = comp == RPCRDMA_COMP_POLL ? "poll" : "event";
	enum rpcrdma_reg_mode got = RPCRDMA_REG_AUTO;
	struct rr_stats st;
	unsigned int i, max = quick ? 65536 : 8 * MiB;
	CLIENT *cl = mk(host, reg, comp);
	unsigned int g0 = 0, g1 = 0;
	double us;

	CHECK(cl != NULL, "%s %s %s: create", host, mode_name(reg), cm);
	if (!cl)
		return;
	clnt_control(cl, CLGET_RDMA_CREDITS, &g0);
	CHECK(null_call(cl), "%s %s %s: NULL call", host, mode_name(reg), cm);
	clnt_control(cl, CLGET_RDMA_CREDITS, &g1);
	CHECK(g0 == 1 && g1 > 1,
	      "%s: one credit on a new connection, then the grant: %u (V1-CR-6)",
	      host, g1);
	clnt_control(cl, CLGET_RDMA_REG_MODE, &got);
	CHECK(got == reg, "%s: registration mode is %s (asked %s)", host,
	      mode_name(got), mode_name(reg));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (sizes[i] > max)
			continue;
		CHECK(echo(cl, sizes[i], i + 7), "%s %s %s: echo %u octets",
		      host, mode_name(reg), cm, sizes[i]);
		CHECK(fill(cl, sizes[i], i + 11), "%s %s %s: fill %u octets",
		      host, mode_name(reg), cm, sizes[i]);
	}
	rr_stats(cl, &st);
	CHECK(st.long_calls > 0 && st.long_replies > 0 && st.short_calls > 0,
	      "%s %s %s: Short calls %llu, Long calls %llu, Long replies %llu",
	      host, mode_name(reg), cm, (unsigned long long)st.short_calls,
	      (unsigned long long)st.long_calls,
	      (unsigned long long)st.long_replies);
	us = rtt_null(cl, 200);
	NOTE("%s %s %s: NULL round trip %.1f us", host, mode_name(reg), cm, us);
	us = rtt_echo(cl, MiB, quick ? 2 : 10);
	NOTE("%s %s %s: 1 MiB echo %.2f ms (%.1f MiB/s both ways)", host,
	     mode_name(reg), cm, us / 1000, us > 0 ? 2e6 / us : 0);
	clnt_destroy(cl);
}

/* ---- Creation failures ----------------------------------------------------- */

static void expect_create_fail(const char *host, uint16_t port,
			       const char *what, int max_ms)
{
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	int64_t t0 = t_ms();
	CLIENT *cl;
	int ms;

	rpcrdma_attr_init(&a);
	a.connect_timeout_ms = 3000;
	t_sockaddr(&ss, host, port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      &a);
	ms = (int)(t_ms() - t0);
	CHECK(!cl && rpc_createerr.cf_stat != RPC_SUCCESS && ms <= max_ms,
	      "%s (%s port %u) fails in %d ms: %s", what, host, port, ms,
	      cl ? "(created!)" : clnt_spcreateerror("clnt_rdma_create"));
	if (cl)
		clnt_destroy(cl);
}

static void test_create_errors(void)
{
	struct sockaddr_storage ss;
	CLIENT *cl;

	expect_create_fail("127.0.0.1", T_PORT, "no RDMA device", 3500);
	CHECK(rpc_createerr.cf_stat == RPC_SYSTEMERROR,
	      "no device: RPC_SYSTEMERROR (errno %d)",
	      rpc_createerr.cf_error.re_errno);
	expect_create_fail(t_addr4(), T_PORT + 1, "no listener", 3500);
	CHECK(rpc_createerr.cf_stat == RPC_SYSTEMERROR &&
		      rpc_createerr.cf_error.re_errno == ECONNREFUSED,
	      "no listener: RPC_SYSTEMERROR with ECONNREFUSED (errno %d)",
	      rpc_createerr.cf_error.re_errno);
	expect_create_fail("203.0.113.5", T_PORT, "unreachable address", 3500);
	expect_create_fail(t_addr6(), T_PORT + 1, "no listener (IPv6)", 3500);
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      NULL);
	CHECK(!cl && rpc_createerr.cf_stat == RPC_UNKNOWNADDR,
	      "AF_UNIX address refused: %s",
	      clnt_spcreateerror("clnt_rdma_create"));
	t_sockaddr(&ss, t_addr4(), 0);
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      NULL);
	CHECK(!cl && rpc_createerr.cf_stat == RPC_UNKNOWNADDR,
	      "port 0 refused: %s", clnt_spcreateerror("clnt_rdma_create"));
}

/* ---- Controls, auth, hooks, timeouts ----------------------------------------- */

static void test_controls(CLIENT *cl)
{
	struct timeval tv = { 7, 0 }, got;
	struct netbuf nb;
	struct sockaddr_storage sa;
	unsigned int credits = 0;
	uint32_t x = 0, v = 0;
	enum rpcrdma_comp_mode cm;
	int fd = -1;
	bool ok;

	CHECK(!strcmp(cl->cl_netid, "rdma") || !strcmp(cl->cl_netid, "rdma6"),
	      "cl_netid is %s", cl->cl_netid);
	CHECK(clnt_control(cl, CLSET_TIMEOUT, &tv) &&
		      clnt_control(cl, CLGET_TIMEOUT, &got) && got.tv_sec == 7,
	      "CLSET/CLGET_TIMEOUT");
	CHECK(clnt_control(cl, CLSET_RETRY_TIMEOUT, &tv) &&
		      clnt_control(cl, CLGET_RETRY_TIMEOUT, &got),
	      "CLSET/CLGET_RETRY_TIMEOUT accepted");
	ok = clnt_control(cl, CLGET_FD, &fd) && fd >= 0;
	CHECK(ok, "CLGET_FD gives fd %d", fd);
	CHECK(clnt_control(cl, CLSET_FD_CLOSE, NULL) &&
		      clnt_control(cl, CLSET_FD_NCLOSE, NULL),
	      "CLSET_FD_CLOSE / NCLOSE accepted");
	ok = clnt_control(cl, CLGET_SVC_ADDR, &nb) && nb.len > 0 &&
	     clnt_control(cl, CLGET_SERVER_ADDR, &sa) &&
	     !memcmp(&sa, nb.buf, nb.len);
	CHECK(ok, "CLGET_SVC_ADDR / CLGET_SERVER_ADDR (%u octets)", nb.len);
	x = 0x12345678;
	ok = clnt_control(cl, CLSET_XID, &x) && null_call(cl) &&
	     clnt_control(cl, CLGET_XID, &x) && x == 0x12345678;
	CHECK(ok, "CLSET_XID then a call uses it (CLGET_XID 0x%x)", x);
	CHECK(clnt_control(cl, CLGET_VERS, &v) && v == RTEST_VERS &&
		      clnt_control(cl, CLGET_PROG, &v) && v == RTEST_PROG,
	      "CLGET_VERS / CLGET_PROG");
	v = RTEST_VERS;
	CHECK(clnt_control(cl, CLSET_VERS, &v) &&
		      clnt_control(cl, CLSET_PROG, &(uint32_t){ RTEST_PROG }),
	      "CLSET_VERS / CLSET_PROG");
	ok = clnt_control(cl, CLGET_RDMA_CREDITS, &credits) && credits >= 1;
	CHECK(ok, "CLGET_RDMA_CREDITS: grant %u", credits);
	CHECK(!clnt_control(cl, 0x7fff, &x), "unknown request refused");
	cm = RPCRDMA_COMP_POLL;
	CHECK(clnt_control(cl, CLSET_RDMA_COMP_MODE, &cm) && null_call(cl) &&
		      clnt_control(cl, CLGET_RDMA_COMP_MODE, &cm) &&
		      cm == RPCRDMA_COMP_POLL && null_call(cl) &&
		      echo(cl, 70000, 5),
	      "CLSET_RDMA_COMP_MODE poll: used from the next call on");
	cm = RPCRDMA_COMP_EVENT;
	CHECK(clnt_control(cl, CLSET_RDMA_COMP_MODE, &cm) && null_call(cl) &&
		      clnt_control(cl, CLGET_RDMA_COMP_MODE, &cm) &&
		      cm == RPCRDMA_COMP_EVENT && echo(cl, 5000, 6),
	      "CLSET_RDMA_COMP_MODE event: back");
	tv.tv_sec = 25;
	clnt_control(cl, CLSET_TIMEOUT, &tv);
}

/* Forcing MR on a connection that advertised Send With Invalidate (MW):
 * the next call runs on a new connection in MR mode. */
static void test_reg_mode_control(CLIENT *cl)
{
	enum rpcrdma_reg_mode m = RPCRDMA_REG_MR, got = RPCRDMA_REG_AUTO;
	bool ok;

	ok = clnt_control(cl, CLSET_RDMA_REG_MODE, &m) && echo(cl, 100000, 3) &&
	     clnt_control(cl, CLGET_RDMA_REG_MODE, &got) &&
	     got == RPCRDMA_REG_MR && echo(cl, 5000, 3);
	CHECK(ok, "CLSET_RDMA_REG_MODE mr: the next call uses it (%s) [%s]",
	      mode_name(got), errmsg(cl));
}

static void test_auth_sys(CLIENT *cl)
{
	AUTH *old = cl->cl_auth;

	cl->cl_auth = authunix_create_default();
	CHECK(cl->cl_auth && null_call(cl) && echo(cl, 20000, 9),
	      "AUTH_SYS: calls work");
	auth_destroy(cl->cl_auth);
	cl->cl_auth = old;
}

static enum clnt_stat hook(CLIENT *cl, uint32_t proc, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	xdrproc_t xv = (xdrproc_t)(void (*)(void))xdr_void;

	return clnt_call(cl, proc, xv, NULL, xv, NULL, tv);
}

/*
 * Every header of the fuzzers' seed corpus (tests/fuzz/seeds/hdr) sent to
 * the CLIENT by the fake responder under the XID of a pending call, before
 * that call's right Reply.  Each is either taken as the answer (a valid
 * RDMA_ERROR ends the call with RPC_SYSTEMERROR) or dropped, and the right
 * Reply then completes the call; the CLIENT never crashes, hangs or
 * misreads (on the host these seeds reach only the wire layer, fuzz_hdr;
 * the ASan build checks here).
 */
static void test_seeds(CLIENT *cl)
{
	unsigned int i, ok = 0, err = 0, n = 0, after = 0;
	uint8_t buf[4096];
	char name[256];
	enum clnt_stat st;

	for (i = 0; t_seed(i, buf, sizeof(buf), name, sizeof(name)) >= 0; i++) {
		n++;
		st = hook(cl, T_PROC_SEED + i, 5000);
		if (st == RPC_SUCCESS)
			ok++;
		else if (st == RPC_SYSTEMERROR)
			err++;
		else
			NOTE("seed %s: %s [%s]", name, clnt_sperrno(st),
			     errmsg(cl));
		after += null_call(cl);
	}
	CHECK(n > 0 && ok + err == n && after == n,
	      "%u seeds as Replies: %u calls then completed by their Reply, %u ended by the seed's RDMA_ERROR, a call worked after %u",
	      n, ok, err, after);
}

/* The RPC-over-RDMA version in force on cl's connection (0: none yet). */
static unsigned int rdma_version(CLIENT *cl)
{
	unsigned int v = 0;

	clnt_control(cl, CLGET_RDMA_VERSION, (char *)&v);
	return v;
}

static void test_hooks(CLIENT *cl)
{
	struct rpc_err e;
	struct rr_stats a, b;
	enum clnt_stat st;

	st = hook(cl, T_PROC_ERR_CHUNK, 5000);
	clnt_geterr(cl, &e);
	CHECK(st == RPC_SYSTEMERROR && e.re_errno == EREMOTEIO,
	      "RDMA_ERROR/ERR_CHUNK: %s [%s] (V1-ERR-9)",
	      clnt_sperror(cl, "call"), errmsg(cl));
	st = hook(cl, T_PROC_ERR_VERS, 5000);
	clnt_geterr(cl, &e);
	CHECK(st == RPC_SYSTEMERROR && e.re_errno == EPROTONOSUPPORT,
	      "RDMA_ERROR/ERR_VERS: %s [%s]", clnt_sperror(cl, "call"),
	      errmsg(cl));
	CHECK(null_call(cl), "calls work after RDMA_ERRORs (no retry)");
	rr_stats(cl, &a);
	CHECK(hook(cl, T_PROC_BAD_FIRST, 5000) == RPC_SUCCESS,
	      "a Reply with a Read list is dropped, the right one taken");
	CHECK(hook(cl, T_PROC_XID_FIRST, 5000) == RPC_SUCCESS,
	      "a Reply for an unknown XID is dropped");
	CHECK(hook(cl, T_PROC_RUNT_FIRST, 5000) == RPC_SUCCESS,
	      "a 12-octet runt is dropped");
	st = hook(cl, T_PROC_ERR_V2_FIRST, 5000);
	CHECK(st == RPC_SUCCESS,
	      "an RDMA_ERROR labelled version %u does not end a version %u call, the right Reply is taken (V1-ERR-10): %s",
	      rdma_version(cl) == 2 ? 1 : 2, rdma_version(cl),
	      clnt_sperrno(st));
	rr_stats(cl, &b);
	CHECK(b.discarded - a.discarded == 3 &&
		      b.unknown_xid - a.unknown_xid == 1,
	      "counters: %llu discarded, %llu unknown XID (V1-ERR-4, V1-ERR-2)",
	      (unsigned long long)(b.discarded - a.discarded),
	      (unsigned long long)(b.unknown_xid - a.unknown_xid));
	CHECK(hook(cl, T_PROC_LONG_REPLY, 5000) == RPC_SUCCESS,
	      "a void Reply sent through the Reply chunk");
	test_seeds(cl);
	st = hook(cl, T_PROC_NOREPLY, 300);
	CHECK(st == RPC_TIMEDOUT, "no reply: %s", clnt_sperror(cl, "call"));
	CHECK(null_call(cl) && echo(cl, 300000, 4),
	      "calls work after an abandoned call");
}

/*
 * Once CLSET_TIMEOUT has been set, the timeout passed to clnt_call() is
 * ignored, as clnt_vc does: a call of RTEST_SLEEP 300 ms with a per-call
 * timeout of 50 ms must succeed after at least 300 ms.  The other way round
 * it would time out after about 50 ms.
 */
static void test_timeout_wins(CLIENT *cl)
{
	struct timeval tv = { 0, 0 }, per_call = { 0, 50000 };
	int ms = 300, res = 0, took;
	enum clnt_stat st;
	int64_t t0;
	bool got = clnt_control(cl, CLGET_TIMEOUT, &tv);

	CHECK(got && tv.tv_sec == 25 && tv.tv_usec == 0,
	      "precondition: CLSET_TIMEOUT of 25 s in force (CLGET_TIMEOUT "
	      "%ld s)",
	      (long)tv.tv_sec);
	t0 = t_ms();
	st = clnt_call(cl, RTEST_SLEEP, (xdrproc_t)xdr_int, (char *)&ms,
		       (xdrproc_t)xdr_int, (char *)&res, per_call);
	took = (int)(t_ms() - t0);
	CHECK(st == RPC_SUCCESS && res == ms && took >= ms && took < 25000,
	      "CLSET_TIMEOUT 25 s wins over the per-call timeout of 50 ms: "
	      "RTEST_SLEEP %d ms answered %d (%s, after %d ms)",
	      ms, res, clnt_sperrno(st), took);
}

static void test_timeouts(CLIENT *cl)
{
	struct timeval tv = { 1, 0 }, zero = { 0, 0 };
	rtest_stats s1, s2;
	int ms = 2500, res = 0;
	enum clnt_stat st;
	int64_t t0;
	int took;

	clnt_control(cl, CLSET_TIMEOUT, &tv);
	t0 = t_ms();
	st = rtest_sleep_1(&ms, &res, cl);
	took = (int)(t_ms() - t0);
	CHECK(st == RPC_TIMEDOUT && took >= 1000 && took < 2000,
	      "CLSET_TIMEOUT 1 s, RTEST_SLEEP 2.5 s: %s after %d ms",
	      clnt_sperror(cl, "sleep"), took);
	tv.tv_sec = 30;
	clnt_control(cl, CLSET_TIMEOUT, &tv);
	t0 = t_ms();
	st = rtest_null_1(NULL, NULL, cl);
	CHECK(st == RPC_SUCCESS, "next call: %s after %d ms",
	      clnt_sperror(cl, "null"), (int)(t_ms() - t0));
	ms = 100;
	CHECK(rtest_sleep_1(&ms, &res, cl) == RPC_SUCCESS && res == 100,
	      "RTEST_SLEEP 100 ms within the timeout");
	CHECK(rtest_stats_1(NULL, &s1, cl) == RPC_SUCCESS, "RTEST_STATS");
	clnt_control(cl, CLSET_TIMEOUT, &zero);
	t0 = t_ms();
	st = rtest_null_1(NULL, NULL, cl);
	took = (int)(t_ms() - t0);
	tv.tv_sec = 25;
	clnt_control(cl, CLSET_TIMEOUT, &tv);
	usleep(300000);
	CHECK(st == RPC_TIMEDOUT && took < 500 &&
		      rtest_stats_1(NULL, &s2, cl) == RPC_SUCCESS &&
		      s2.calls >= s1.calls + 2,
	      "zero timeout: sent without waiting (%s, %d ms), the server got it",
	      clnt_sperrno(st), took);
	test_timeout_wins(cl);
}

/* ---- Threads --------------------------------------------------------------- */

#define NTHREADS 8
#define NCALLS	 1000

struct mt {
	CLIENT *cl;
	int id;
	atomic_int *fails;
};

static void *mt_worker(void *arg)
{
	struct mt *m = arg;
	int i;

	for (i = 0; i < (quick ? NCALLS / 10 : NCALLS); i++) {
		uint32_t len = (uint32_t)((i * 37 + m->id * 101) % 3000);

		if (!(i % 100 == 0 ? echo(m->cl, 20000 + len, m->id + i) :
				     echo(m->cl, len, m->id + i)))
			atomic_fetch_add(m->fails, 1);
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[NTHREADS];
	struct mt m[NTHREADS];
	atomic_int fails = 0;
	struct rr_stats st;
	rtest_stats ss;
	int64_t t0;
	CLIENT *cl = mk(t_addr4(), RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);
	unsigned int vers;
	bool ok;
	int i;

	CHECK(cl != NULL, "threads: create");
	if (!cl)
		return;
	t0 = t_ms();
	for (i = 0; i < NTHREADS; i++) {
		m[i] = (struct mt){ cl, i, &fails };
		pthread_create(&th[i], NULL, mt_worker, &m[i]);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	rr_stats(cl, &st);
	CHECK(atomic_load(&fails) == 0,
	      "%d threads x %d calls on one CLIENT: %d failed, %lld ms",
	      NTHREADS, quick ? NCALLS / 10 : NCALLS, atomic_load(&fails),
	      (long long)(t_ms() - t0));
	/* In v2 each connection starts with a CONNPROP, a one-way message
	 * the server must neither answer nor take for a Call: it has no
	 * chunks to pull (AMB-V2-6). */
	vers = 0;
	ok = clnt_control(cl, CLGET_RDMA_VERSION, &vers) &&
	     (vers == 1 || st.connprops > 0) && st.unknown_xid == 0 &&
	     st.discarded == 0;
	CHECK(ok,
	      "client: v%u, %llu CONNPROP sent, %llu messages for no call of ours, %llu discarded",
	      vers, (unsigned long long)st.connprops,
	      (unsigned long long)st.unknown_xid,
	      (unsigned long long)st.discarded);
	CHECK(st.over_grant == 0 && st.max_inflight <= st.max_granted &&
		      st.max_inflight > 1,
	      "client: at most %u calls in flight, grant %u, %u beyond it (V1-CR-4)",
	      st.max_inflight, st.max_granted, st.over_grant);
	memset(&ss, 0, sizeof(ss));
	ok = rtest_stats_1(NULL, &ss, cl) == RPC_SUCCESS &&
	     ss.max_inflight <= ss.max_granted && ss.max_granted > 0;
	CHECK(ok, "server: at most %u requests in flight, largest grant %u",
	      ss.max_inflight, ss.max_granted);
	clnt_destroy(cl);
}

/* ---- Server killed and restarted ---------------------------------------------- */

struct sleeper {
	CLIENT *cl;
	enum clnt_stat st;
	char msg[RPCRDMA_ERRMSG_LEN];
	int took;
};

static void *sleeper_run(void *arg)
{
	struct sleeper *s = arg;
	int ms = 4000, res;
	int64_t t0 = t_ms();

	s->st = rtest_sleep_1(&ms, &res, s->cl);
	s->took = (int)(t_ms() - t0);
	clnt_control(s->cl, CLGET_RDMA_ERRMSG, s->msg);
	return NULL;
}

static void test_server_death(void)
{
	struct timeval tv = { 10, 0 };
	struct sleeper sl = { 0 };
	struct rr_stats st;
	enum clnt_stat stn;
	pthread_t th;
	CLIENT *cl = mk(t_addr4(), RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);
	int i, ok = 0;

	CHECK(cl != NULL, "server death: create");
	if (!cl)
		return;
	clnt_control(cl, CLSET_TIMEOUT, &tv);
	CHECK(echo(cl, 100000, 1), "server death: a call before");
	sl.cl = cl;
	pthread_create(&th, NULL, sleeper_run, &sl);
	usleep(500000);
	t_server_kill(&srv, true);
	pthread_join(th, NULL);
	/* The connection loss ends the call: a timeout (10 s) would mean
	 * the CLIENT never noticed the server die. */
	CHECK((sl.st == RPC_CANTRECV || sl.st == RPC_CANTSEND) &&
		      sl.took < tv.tv_sec * 1000,
	      "call in flight when the server is killed: %s after %d ms, "
	      "before its timeout [%s]",
	      clnt_sperrno(sl.st), sl.took, sl.msg);
	stn = rtest_null_1(NULL, NULL, cl);
	CHECK(stn != RPC_SUCCESS, "call while the server is down: %s [%s]",
	      clnt_sperror(cl, "null"), errmsg(cl));
	CHECK(t_server_start(&srv, CREDITS, 30000) == 0, "server restarted");
	for (i = 0; i < 20 && !ok; i++) {
		ok = null_call(cl);
		if (!ok)
			usleep(200000);
	}
	CHECK(ok && echo(cl, 2 * MiB, 3) && fill(cl, 70000, 2),
	      "calls work again after the restart (reconnected)");
	rr_stats(cl, &st);
	CHECK(st.connects >= 2 && st.conn_losses >= 1,
	      "%llu connections made, %llu lost",
	      (unsigned long long)st.connects,
	      (unsigned long long)st.conn_losses);
	clnt_destroy(cl);
}

/* ---- A server that drops what it does not understand --------------------- */

static struct rpcrdma_clnt_stats vc_stats(CLIENT *cl)
{
	struct rpcrdma_clnt_stats st;

	memset(&st, 0, sizeof(st));
	CHECK(clnt_control(cl, CLGET_RDMA_STATS, (char *)&st),
	      "CLGET_RDMA_STATS");
	return st;
}

/*
 * The fake speaks only version 1 and ends the connection on a version 2
 * message.  A negotiating client's first call fails with the connection;
 * the server is remembered (RPCRDMA_V2_RETRY seconds, here 3), so the
 * next connection, and the next CLIENT's, speak version 1 at once: no
 * negotiation loop (V2-NEG-6, v2-05 §8).  After the time is up v2 is
 * tried again.
 */
static void test_vcache(void)
{
	struct rpcrdma_clnt_stats st;
	enum clnt_stat s1, s2;
	CLIENT *cl;

	t_server_kill(&srv, false);
	/* this part negotiates, whatever the suite forces */
	unsetenv("RPCRDMA_VERSION");
	setenv("T_CLNT_FAKE_DROP_V2", "1", 1);
	CHECK(t_server_start(&srv, CREDITS, 30000) == 0,
	      "a fake of version 1 only that drops a v2 connection");
	unsetenv("T_CLNT_FAKE_DROP_V2");
	setenv("RPCRDMA_V2_RETRY", "3", 1);
	cl = mk(t_addr4(), RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);
	if (!cl)
		return;
	s1 = rtest_null_1(NULL, NULL, cl);
	s2 = rtest_null_1(NULL, NULL, cl);
	st = vc_stats(cl);
	CHECK(s1 != RPC_SUCCESS && s2 == RPC_SUCCESS && rdma_version(cl) == 1 &&
		      st.connects == 2 && st.v2_calls == 1,
	      "first call lost with its v2 connection (%s), the second on a new connection in v1: version %u, %llu connections, %llu v2 call(s) (V2-NEG-6)",
	      clnt_sperrno(s1), rdma_version(cl),
	      (unsigned long long)st.connects, (unsigned long long)st.v2_calls);
	CHECK(echo(cl, 100000, 5), "... and it goes on in v1 (ECHO 100000)");
	clnt_destroy(cl);
	cl = mk(t_addr4(), RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);
	if (cl) {
		s1 = rtest_null_1(NULL, NULL, cl);
		st = vc_stats(cl);
		CHECK(s1 == RPC_SUCCESS && rdma_version(cl) == 1 &&
			      st.v2_calls == 0 && st.connects == 1,
		      "a new CLIENT to the same server speaks v1 at once: %s, %llu v2 call(s), %llu connection(s)",
		      clnt_sperrno(s1), (unsigned long long)st.v2_calls,
		      (unsigned long long)st.connects);
		clnt_destroy(cl);
	}
	usleep(3300000);
	cl = mk(t_addr4(), RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);
	if (cl) {
		s1 = rtest_null_1(NULL, NULL, cl);
		s2 = rtest_null_1(NULL, NULL, cl);
		st = vc_stats(cl);
		CHECK(s1 != RPC_SUCCESS && s2 == RPC_SUCCESS &&
			      st.v2_calls == 1,
		      "after RPCRDMA_V2_RETRY=3 s, v2 is tried again (%s, then %s; %llu v2 call)",
		      clnt_sperrno(s1), clnt_sperrno(s2),
		      (unsigned long long)st.v2_calls);
		clnt_destroy(cl);
	}
	unsetenv("RPCRDMA_V2_RETRY");
}

/* ---- Polling before sleeping --------------------------------------------- */

/* n NULL calls on a new CLIENT of poll_us/comp; the waits polling ended. */
static int64_t polled_waits(unsigned long poll_us, enum rpcrdma_comp_mode comp,
			    int n)
{
	struct rpcrdma_clnt_stats st;
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;
	int i, ok = 0;

	rpcrdma_attr_init(&a);
	a.comp_mode = comp;
	a.poll_us = poll_us;
	t_sockaddr(&ss, t_addr4(), srv.port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, RTEST_PROG, RTEST_VERS,
			      &a);
	if (!cl) {
		NOTE("clnt_rdma_create: %s", clnt_spcreateerror("create"));
		return -1;
	}
	for (i = 0; i < n; i++)
		ok += null_call(cl);
	memset(&st, 0, sizeof(st));
	if (ok != n || !clnt_control(cl, CLGET_RDMA_STATS, (char *)&st)) {
		NOTE("%d of %d calls answered", ok, n);
		clnt_destroy(cl);
		return -1;
	}
	clnt_destroy(cl);
	return (int64_t)st.waits_polled;
}

/*
 * Event mode polls the completion queue within poll_us before it sleeps:
 * with a budget far above the round trip (0.5 s; a NULL call takes well
 * under a millisecond here) the replies are found by polling; with
 * RPCRDMA_POLL_NONE, and in busy-poll mode (which never sleeps), no wait
 * counts as ended by event-mode polling.
 */
static void test_polling(void)
{
	int64_t big = polled_waits(500000, RPCRDMA_COMP_EVENT, 50);
	int64_t none = polled_waits(RPCRDMA_POLL_NONE, RPCRDMA_COMP_EVENT, 50);
	int64_t busy = polled_waits(500000, RPCRDMA_COMP_POLL, 50);

	CHECK(big >= 45, "poll_us 500000: %lld of 50 replies found by polling",
	      (long long)big);
	CHECK(none == 0, "RPCRDMA_POLL_NONE: %lld of 50 found by polling",
	      (long long)none);
	CHECK(busy == 0,
	      "busy-poll mode: %lld of 50 counted as event-mode "
	      "polling",
	      (long long)busy);
}

/* ---- Main ------------------------------------------------------------------ */

static void test_one_client(void)
{
	CLIENT *cl = mk(t_addr4(), RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);

	CHECK(cl != NULL, "create for controls");
	if (!cl)
		return;
	test_controls(cl);
	test_auth_sys(cl);
	/* only the fake responder can misbehave on request */
	if (fake)
		test_hooks(cl);
	else
		NOTE("misbehaving-server checks: only against the fake "
		     "responder (clnt-misc)");
	test_timeouts(cl);
	test_reg_mode_control(cl);
	clnt_destroy(cl);
}

/* One NULL call and one echo, saying what happened (for debugging). */
static int probe(const char *host, uint16_t port)
{
	CLIENT *cl;
	bool ok;

	srv.port = port;
	cl = mk(host, RPCRDMA_REG_AUTO, RPCRDMA_COMP_EVENT);
	if (!cl)
		return 1;
	ok = null_call(cl);
	printf("NULL: %s [%s]\n", clnt_sperror(cl, "probe"), errmsg(cl));
	ok = ok && echo(cl, 100000, 1);
	printf("echo: %s\n", ok ? "ok" : "failed");
	clnt_destroy(cl);
	return ok ? 0 : 1;
}

static bool part(const char *only, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (!only)
		return true;
	for (p = only; (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	int i;

	if (argc == 4 && !strcmp(argv[1], "--serve"))
		return t_clnt_serve((uint16_t)atoi(argv[2]),
				    (unsigned int)atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "--probe"))
		return probe(argv[2], (uint16_t)atoi(argv[3]));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!t_have_device())
		return 77;
	t_watchdog(quick ? 300 : 900);
	fake = !getenv("T_CLNT_SERVER");
	if (part(only, "misc"))
		test_create_errors();
	i = t_server_start(&srv, CREDITS, 30000);
	CHECK(i == 0, "%s started on port %u", srv.what, srv.port);
	if (i)
		return 1;
	if (part(only, "sizes4")) {
		test_sizes(t_addr4(), RPCRDMA_REG_MW, RPCRDMA_COMP_EVENT);
		test_sizes(t_addr4(), RPCRDMA_REG_MR, RPCRDMA_COMP_EVENT);
		test_sizes(t_addr4(), RPCRDMA_REG_MW, RPCRDMA_COMP_POLL);
	}
	if (part(only, "sizes6")) {
		test_sizes(t_addr6(), RPCRDMA_REG_MW, RPCRDMA_COMP_EVENT);
		test_sizes(t_addr6(), RPCRDMA_REG_MR, RPCRDMA_COMP_EVENT);
		test_sizes(t_addr6(), RPCRDMA_REG_MR, RPCRDMA_COMP_POLL);
	}
	if (part(only, "misc")) {
		test_one_client();
		test_polling();
	}
	if (part(only, "threads"))
		test_threads();
	if (part(only, "misc"))
		test_server_death();
	/* last: it restarts the fake in another mode */
	if (part(only, "vcache") && fake)
		test_vcache();
	t_server_kill(&srv, false);
	return tu_done();
}
