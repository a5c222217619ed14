/*
 * t_batch.c - calls no reply answers, as an old ONC RPC program makes
 * them, over tcp and over rdma and rdma6 with the same code
 * (doc/oneway.md, doc/libtirpc-contract.md):
 *
 *   batching   clnt_call() with a zero timeout and no results to a
 *              procedure whose server routine sends no reply: 10 000 in a
 *              row from one thread, then 4 x 2 500 from threads sharing the
 *              CLIENT; each returns at once with RPC_SUCCESS, the server
 *              runs every one, in order per thread, with its data intact,
 *              and the next ordinary call gets its reply;
 *   zero timeout with results: RPC_TIMEDOUT, as clnt_vc says;
 *   dropped    ordinary calls (a timeout) to a routine that never replies,
 *              more of them than the connection has credits: each times
 *              out, and the next call is answered at once (its credits come
 *              back: the connection is replaced, counted in
 *              CLGET_RDMA_CALL_STATS, as no reply will come);
 *   the server none of this costs anything: SVCGET_RDMA_STATS counts every
 *              unanswered call as dropped, its resident memory stays within
 *              a bound, and it exits cleanly (under ASan: no leak).
 *
 * The server is this program with --serve, a hand-written dispatcher over
 * svc_tli_create() and svc_reg(), as old programs are written.  The VM
 * suite runs it in version 2 (plain) and version 1 (ASan).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "tests/vm/t_util.h"

#define BATCH_PROG 0x20005250u
#define BATCH_VERS 1u
#define B_NULL	   0u
#define B_PUT	   1u /* struct item: no reply */
#define B_REPORT   2u /* struct report, counters then reset */
#define B_DROP	   3u /* u_int: no reply (a dropped call) */
#define B_QUIT	   4u /* replies, then svc_exit() */

#define PORT	 20760 /* tcp; rdma +1, rdma6 +2 */
#define NTHREADS 4
#define NBATCH	 10000
#define ITEM_MAX 256
#define SLOW_MS	 5000 /* a batched call that takes this long blocked */

/* Under AddressSanitizer freed memory waits in its quarantine, so the
 * server's resident memory grows with every call whatever the library
 * does: there LeakSanitizer's verdict at the server's exit is the check. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_COMPARED false
#else
#define RSS_COMPARED true
#endif

/* ---- The messages --------------------------------------------------------- */

struct item {
	u_int thread;
	u_int seq;
	u_int len;
	char data[ITEM_MAX];
};

struct report {
	u_int puts;	    /* PUTs run since the last report */
	u_int out_of_order; /* ... whose seq was not the thread's next */
	u_int bad_data;	    /* ... whose data was not the pattern */
	u_int drops;	    /* DROPs run */
	u_int dropped;	    /* the transport's count of unanswered calls
			     * (rdma; 0 over tcp) */
	u_int rss_kb;	    /* the server's VmRSS */
};

static bool_t xdr_item(XDR *xdrs, struct item *it)
{
	char *p = it->data;

	return xdr_u_int(xdrs, &it->thread) && xdr_u_int(xdrs, &it->seq) &&
	       xdr_bytes(xdrs, &p, &it->len, ITEM_MAX);
}

static bool_t xdr_report(XDR *xdrs, struct report *r)
{
	return xdr_u_int(xdrs, &r->puts) && xdr_u_int(xdrs, &r->out_of_order) &&
	       xdr_u_int(xdrs, &r->bad_data) && xdr_u_int(xdrs, &r->drops) &&
	       xdr_u_int(xdrs, &r->dropped) && xdr_u_int(xdrs, &r->rss_kb);
}

static void item_fill(struct item *it, u_int thread, u_int seq)
{
	it->thread = thread;
	it->seq = seq;
	it->len = 8 + (seq * 37) % (ITEM_MAX - 8);
	tu_fill(it->data, it->len, thread * 100003u + seq);
}

/* ---- The server ----------------------------------------------------------- */

static struct {
	u_int next_seq[NTHREADS + 1];
	struct report rep;
} served;

static u_int rss_kb(void)
{
	char line[256];
	u_int kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %u kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void run_put(SVCXPRT *xprt)
{
	struct item it;

	memset(&it, 0, sizeof(it));
	if (!svc_getargs(xprt, (xdrproc_t)xdr_item, (char *)&it)) {
		svcerr_decode(xprt);
		return;
	}
	served.rep.puts++;
	if (it.thread > NTHREADS || it.seq != served.next_seq[it.thread])
		served.rep.out_of_order++;
	else
		served.next_seq[it.thread]++;
	if (tu_fill_check(it.data, it.len, it.thread * 100003u + it.seq) >= 0)
		served.rep.bad_data++;
	/* no reply: this is what a batched procedure's server does */
}

static void run_report(SVCXPRT *xprt)
{
	struct rpcrdma_svc_stats st;

	memset(&st, 0, sizeof(st));
	if (SVC_CONTROL(xprt, SVCGET_RDMA_STATS, &st))
		served.rep.dropped = (u_int)st.dropped;
	served.rep.rss_kb = rss_kb();
	svc_sendreply(xprt, (xdrproc_t)xdr_report, (char *)&served.rep);
	memset(&served, 0, sizeof(served));
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	u_int n;

	switch (rq->rq_proc) {
	case B_NULL:
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		return;
	case B_PUT:
		run_put(xprt);
		return;
	case B_REPORT:
		run_report(xprt);
		return;
	case B_DROP:
		if (svc_getargs(xprt, (xdrproc_t)xdr_u_int, (char *)&n))
			served.rep.drops++;
		return; /* never answered */
	case B_QUIT:
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		svc_exit();
		return;
	default:
		svcerr_noproc(xprt);
	}
}

static bool listen_on(const char *netid, const char *addr, int port)
{
	struct netconfig *nc = getnetconfigent(netid);
	struct sockaddr_storage ss;
	struct t_bind tb;
	SVCXPRT *xprt;

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		tb.addr.len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
		tb.addr.len = sizeof(*s4);
	}
	tb.addr.maxlen = sizeof(ss);
	tb.addr.buf = &ss;
	tb.qlen = 64;
	xprt = nc ? svc_tli_create(RPC_ANYFD, nc, &tb, 0, 0) : NULL;
	if (!xprt || !svc_reg(xprt, BATCH_PROG, BATCH_VERS, dispatch, NULL)) {
		fprintf(stderr,
			"t_batch server: %s on %s port %d: cannot serve\n",
			netid, addr, port);
		return false;
	}
	freenetconfigent(nc);
	return true;
}

static int serve(void)
{
	const char *a4 = getenv("RDMA_ADDR4"), *a6 = getenv("RDMA_ADDR6");

	if (!listen_on("tcp", a4, PORT) || !listen_on("rdma", a4, PORT + 1) ||
	    !listen_on("rdma6", a6, PORT + 2))
		return 1;
	printf("ready\n");
	fflush(stdout);
	svc_run();
	svc_unreg(BATCH_PROG, BATCH_VERS);
	return 0;
}

/* ---- The client ----------------------------------------------------------- */

static const struct timeval zero_tv = { 0, 0 };
static const struct timeval call_tv = { 20, 0 };

static CLIENT *connect_to(const char *netid)
{
	const char *a4 = getenv("RDMA_ADDR4"), *a6 = getenv("RDMA_ADDR6");
	bool six = !strcmp(netid, "rdma6");
	int port = PORT + (!strcmp(netid, "rdma") ? 1 : six ? 2 : 0);
	struct netconfig *nc = getnetconfigent(netid);
	struct sockaddr_storage ss;
	struct netbuf nb;
	CLIENT *cl;

	memset(&ss, 0, sizeof(ss));
	if (six) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, a6, &s6->sin6_addr);
		nb.len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, a4, &s4->sin_addr);
		nb.len = sizeof(*s4);
	}
	nb.maxlen = sizeof(ss);
	nb.buf = &ss;
	cl = nc ? clnt_tli_create(RPC_ANYFD, nc, &nb, BATCH_PROG, BATCH_VERS, 0,
				  0) :
		  NULL;
	if (nc)
		freenetconfigent(nc);
	CHECK(cl != NULL, "%s: clnt_tli_create%s", netid,
	      cl ? "" : clnt_spcreateerror(""));
	return cl;
}

static bool is_rdma(const char *netid)
{
	return strncmp(netid, "rdma", 4) == 0;
}

static bool report(CLIENT *cl, const char *netid, struct report *r)
{
	enum clnt_stat st;

	memset(r, 0, sizeof(*r));
	st = clnt_call(cl, B_REPORT, (xdrproc_t)xdr_void, NULL,
		       (xdrproc_t)xdr_report, (char *)r, call_tv);
	return CHECK_OK(st == RPC_SUCCESS, "%s: REPORT after the batch: %s",
			netid, clnt_sperrno(st));
}

struct batcher {
	pthread_t thread;
	CLIENT *cl;
	u_int thread_no;
	u_int n;
	u_int ok;	 /* calls that returned RPC_SUCCESS */
	int64_t slowest; /* longest clnt_call, microseconds */
	enum clnt_stat first_bad;
};

static void *batch_run(void *arg)
{
	struct batcher *b = arg;
	struct item it;
	enum clnt_stat st;
	int64_t t0, dt;
	u_int i;

	for (i = 0; i < b->n; i++) {
		item_fill(&it, b->thread_no, i);
		t0 = tu_now_us();
		st = clnt_call(b->cl, B_PUT, (xdrproc_t)xdr_item, (char *)&it,
			       NULL, NULL, zero_tv);
		dt = tu_now_us() - t0;
		if (dt > b->slowest)
			b->slowest = dt;
		if (st == RPC_SUCCESS)
			b->ok++;
		else if (b->first_bad == RPC_SUCCESS)
			b->first_bad = st;
	}
	return NULL;
}

/* Batches from nthreads threads sharing cl, n calls each, then the report
 * (the ordinary call that follows a batch). */
static void batch(CLIENT *cl, const char *netid, u_int nthreads, u_int n,
		  struct report *r)
{
	struct batcher b[NTHREADS];
	int64_t slowest = 0;
	u_int i, ok = 0;

	memset(b, 0, sizeof(b));
	for (i = 0; i < nthreads; i++) {
		b[i].cl = cl;
		b[i].thread_no = nthreads == 1 ? 0 : i + 1;
		b[i].n = n;
		if (pthread_create(&b[i].thread, NULL, batch_run, &b[i]))
			CHECK(false, "pthread_create");
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(b[i].thread, NULL);
		ok += b[i].ok;
		if (b[i].slowest > slowest)
			slowest = b[i].slowest;
		if (b[i].first_bad != RPC_SUCCESS)
			NOTE("%s: thread %u: %s", netid, i,
			     clnt_sperrno(b[i].first_bad));
	}
	CHECK(ok == nthreads * n,
	      "%s: %u thread(s) x %u batched calls: %u returned RPC_SUCCESS",
	      netid, nthreads, n, ok);
	CHECK(slowest < SLOW_MS * 1000,
	      "%s: no batched call blocked (slowest %lld us, limit %d ms)",
	      netid, (long long)slowest, SLOW_MS);
	if (!report(cl, netid, r))
		return;
	CHECK(r->puts == nthreads * n && r->out_of_order == 0 &&
		      r->bad_data == 0,
	      "%s: the server ran %u of %u, %u out of order, %u with bad data",
	      netid, r->puts, nthreads * n, r->out_of_order, r->bad_data);
	if (is_rdma(netid))
		CHECK(r->dropped >= nthreads * n,
		      "%s: the server counts %u unanswered calls (>= %u)",
		      netid, r->dropped, nthreads * n);
}

static void zero_timeout_with_results(CLIENT *cl, const char *netid)
{
	struct report r;
	enum clnt_stat st;

	st = clnt_call(cl, B_NULL, (xdrproc_t)xdr_void, NULL,
		       (xdrproc_t)xdr_void, NULL, zero_tv);
	CHECK(st == RPC_TIMEDOUT,
	      "%s: zero timeout with results: %s (clnt_vc: RPC_TIMEDOUT)",
	      netid, clnt_sperrno(st));
	report(cl, netid, &r);
}

/* Ordinary calls the server never answers, more than the credits. */
static void dropped(CLIENT *cl, const char *netid)
{
	struct timeval short_tv = { 0, 500 * 1000 };
	struct rpcrdma_clnt_call_stats cs;
	unsigned int credits = 8, i, timedout = 0;
	enum clnt_stat st;
	struct report r;
	int64_t t0;

	if (is_rdma(netid) &&
	    clnt_control(cl, CLGET_RDMA_CREDITS, (char *)&credits) &&
	    credits > 64)
		credits = 64;
	for (i = 0; i < credits + 2; i++) {
		st = clnt_call(cl, B_DROP, (xdrproc_t)xdr_u_int, (char *)&i,
			       (xdrproc_t)xdr_void, NULL, short_tv);
		timedout += st == RPC_TIMEDOUT;
	}
	CHECK(timedout == credits + 2,
	      "%s: %u of %u calls to a routine that never replies timed out",
	      netid, timedout, credits + 2);
	/* Over tcp clnt_vc (libtirpc 1.3.3) takes the reply that follows a
	 * timed-out call for part of the abandoned record and waits on, so
	 * the next call on that CLIENT times out too: there, the report
	 * goes on a new CLIENT.  Over rdma the same CLIENT must answer. */
	if (!is_rdma(netid)) {
		CLIENT *fresh = connect_to(netid);
		bool ok = fresh && report(fresh, netid, &r);

		if (fresh)
			clnt_destroy(fresh);
		if (ok)
			CHECK(r.drops == credits + 2,
			      "%s: the server ran %u of %u DROPs", netid,
			      r.drops, credits + 2);
		return;
	}
	t0 = tu_now_ms();
	if (!report(cl, netid, &r))
		return;
	CHECK(tu_now_ms() - t0 < SLOW_MS,
	      "%s: the next call answered in %lld ms (limit %d)", netid,
	      (long long)(tu_now_ms() - t0), SLOW_MS);
	CHECK(r.drops == credits + 2, "%s: the server ran %u of %u DROPs",
	      netid, r.drops, credits + 2);
	memset(&cs, 0, sizeof(cs));
	CHECK(clnt_control(cl, CLGET_RDMA_CALL_STATS, (char *)&cs),
	      "%s: CLGET_RDMA_CALL_STATS", netid);
	CHECK(cs.recoveries >= 1 && cs.recoveries <= 3,
	      "%s: %llu connection(s) replaced to get credits back (1-3)",
	      netid, (unsigned long long)cs.recoveries);
	CHECK(cs.abandoned >= credits + 2, "%s: %llu abandoned calls counted",
	      netid, (unsigned long long)cs.abandoned);
}

static void one_netid(const char *netid)
{
	struct rpcrdma_clnt_call_stats cs;
	struct rpcrdma_clnt_stats st;
	unsigned int grant1 = 0, grant2 = 0;
	struct report r1, r2;
	CLIENT *cl = connect_to(netid);

	if (!cl)
		return;
	batch(cl, netid, 1, NBATCH, &r1);
	if (is_rdma(netid))
		clnt_control(cl, CLGET_RDMA_CREDITS, (char *)&grant1);
	batch(cl, netid, NTHREADS, NBATCH / NTHREADS, &r2);
	/* the server's grant backs every credit with a posted Receive
	 * (V1-CR-8): 10 000 more unanswered calls do not shrink it (a
	 * Receive not re-posted would); it may have grown meanwhile, as the
	 * server adds Receives to a connection that uses its whole grant
	 * (rr_srv_recv.c) */
	if (is_rdma(netid)) {
		clnt_control(cl, CLGET_RDMA_CREDITS, (char *)&grant2);
		CHECK(grant1 > 1 && grant2 >= grant1,
		      "%s: the server's grant %u after the first batch, %u after the second",
		      netid, grant1, grant2);
	}
	if (!RSS_COMPARED)
		NOTE("%s: server VmRSS %u kB, then %u: not compared under ASan (its quarantine keeps freed memory)",
		     netid, r1.rss_kb, r2.rss_kb);
	else
		CHECK(r1.rss_kb && r2.rss_kb && r2.rss_kb < r1.rss_kb + 4096,
		      "%s: server VmRSS %u kB after the first batch, %u after the second (bound +4096)",
		      netid, r1.rss_kb, r2.rss_kb);
	zero_timeout_with_results(cl, netid);
	if (is_rdma(netid)) {
		memset(&cs, 0, sizeof(cs));
		memset(&st, 0, sizeof(st));
		CHECK(clnt_control(cl, CLGET_RDMA_CALL_STATS, (char *)&cs) &&
			      clnt_control(cl, CLGET_RDMA_STATS, (char *)&st),
		      "%s: CLGET_RDMA_CALL_STATS, CLGET_RDMA_STATS", netid);
		CHECK(cs.oneway_calls == 2 * NBATCH + 1 && cs.null_calls > 0 &&
			      cs.recoveries == 0 && st.connects == 1,
		      "%s: %llu one-way calls, %llu NULL calls for their credits, %llu recoveries, %u connection(s)",
		      netid, (unsigned long long)cs.oneway_calls,
		      (unsigned long long)cs.null_calls,
		      (unsigned long long)cs.recoveries, st.connects);
	}
	dropped(cl, netid);
	clnt_destroy(cl);
}

static int server_start(const char *self, pid_t *pid)
{
	int fds[2];
	char line[64];
	FILE *f;

	if (pipe(fds))
		return -1;
	*pid = fork();
	if (*pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(self, self, "--serve", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n"))
		return -1;
	fclose(f);
	return 0;
}

static void server_quit(pid_t pid)
{
	CLIENT *cl = connect_to("tcp");
	int status = -1;

	if (cl) {
		clnt_call(cl, B_QUIT, (xdrproc_t)xdr_void, NULL,
			  (xdrproc_t)xdr_void, NULL, call_tv);
		clnt_destroy(cl);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the server exited cleanly (status 0x%x)", status);
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "--serve"))
		return serve();
	if (!getenv("TIRPC_RDMA_VM")) {
		printf("SKIP: no RDMA device (run in the VM: tests/vm/run)\n");
		return 77;
	}
	tu_watchdog(400, "FAIL: t_batch: watchdog", 1);
	signal(SIGPIPE, SIG_IGN);
	if (server_start(argv[0], &pid)) {
		CHECK(false, "the server started");
		return tu_done();
	}
	one_netid("tcp");
	one_netid("rdma");
	one_netid("rdma6");
	server_quit(pid);
	return tu_done();
}
