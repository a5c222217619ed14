/*
 * t_svc_clnt.c - the server with the project's own CLIENT: sixteen threads,
 * each with its own clnt_rdma_create() CLIENT, call every rtest procedure
 * through the rpcgen stubs (Short and Long calls, Long replies) against one
 * rtest_server, and check every result.  Then RTEST_STATS, and a clean
 * SIGTERM shutdown of the server.  Last, a server that closes idle
 * connections after a second: the CLIENT's next call connects again and
 * succeeds the first time.
 *
 * Run in the VM (tests/vm/run -- tests/vm/t_svc_clnt); 77 without a device.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rtest.h"
#include "tests/vm/t_svc_util.h"

#define NTHREADS 16
#define ROUNDS	 4

static struct ts_server srv;

static CLIENT *client(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rpcrdma_attr a;
	CLIENT *cl;

	sin.sin_port = htons(srv.port);
	inet_pton(AF_INET, srv.host, &sin.sin_addr);
	rpcrdma_attr_init(&a);
	a.max_reply_size = 2u << 20;
	cl = clnt_rdma_create((struct sockaddr *)&sin, RTEST_PROG, RTEST_VERS,
			      &a);
	if (!cl)
		NOTE("clnt_rdma_create: %s", clnt_spcreateerror("rtest"));
	return cl;
}

static int echo(CLIENT *cl, uint32_t len, uint32_t seed)
{
	rtest_data arg, res;
	int bad;

	arg.rtest_data_len = len;
	arg.rtest_data_val = malloc(len ? len : 1);
	memset(&res, 0, sizeof(res));
	ts_fill(arg.rtest_data_val, len, seed);
	bad = rtest_echo_1(&arg, &res, cl) != RPC_SUCCESS ||
	      res.rtest_data_len != len ||
	      ts_check_fill(res.rtest_data_val, len, seed) >= 0;
	if (bad)
		NOTE("ECHO %u: %s", len, clnt_sperror(cl, "rtest"));
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	free(arg.rtest_data_val);
	return bad;
}

static int fill(CLIENT *cl, uint32_t len, uint32_t seed)
{
	rtest_fill_args a = { len, seed };
	rtest_data res = { 0, NULL };
	int bad;

	bad = rtest_fill_1(&a, &res, cl) != RPC_SUCCESS ||
	      res.rtest_data_len != len ||
	      ts_check_fill(res.rtest_data_val, len, seed) >= 0;
	if (bad)
		NOTE("FILL %u: %s", len, clnt_sperror(cl, "rtest"));
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	return bad;
}

static int sum_and_str(CLIENT *cl)
{
	int v[2000], i;
	rtest_ints ints = { 2000, v };
	quad_t sum = 0;
	char *s = "over rdma", *r = NULL;
	int bad;

	for (i = 0; i < 2000; i++)
		v[i] = i;
	bad = rtest_sum_1(&ints, &sum, cl) != RPC_SUCCESS || sum != 1999000;
	bad += rtest_echostr_1(&s, &r, cl) != RPC_SUCCESS || !r || strcmp(r, s);
	xdr_free((xdrproc_t)xdr_wrapstring, (char *)&r);
	return bad;
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	long fails = 0;
	CLIENT *cl = client();
	int r;

	if (!cl)
		return (void *)1000;
	for (r = 0; r < ROUNDS; r++) {
		uint32_t seed = (uint32_t)(id * 100 + (uintptr_t)r);

		fails += rtest_null_1(NULL, NULL, cl) != RPC_SUCCESS;
		fails += echo(cl, 1000, seed);
		fails += echo(cl, 100000, seed + 1);
		fails += fill(cl, 1u << 20, seed + 2);
		fails += sum_and_str(cl);
	}
	clnt_destroy(cl);
	return (void *)fails;
}

static void threads(void)
{
	pthread_t th[NTHREADS];
	int i, good = 0;
	void *ret;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], &ret);
		if (!ret)
			good++;
		else
			NOTE("thread %d: %ld failures", i, (long)ret);
	}
	CHECK(good == NTHREADS,
	      "%d threads with a CLIENT each, all results checked: %d succeeded",
	      NTHREADS, good);
}

static void server_stats(void)
{
	CLIENT *cl = client();
	rtest_stats st;
	enum clnt_stat s;

	memset(&st, 0, sizeof(st));
	s = cl ? rtest_stats_1(NULL, &st, cl) : RPC_FAILED;
	CHECK(s == RPC_SUCCESS && st.conns >= NTHREADS + 1 &&
		      st.calls >= NTHREADS * ROUNDS * 6,
	      "RTEST_STATS: %u connections, %llu calls, max in flight %u, largest grant %u",
	      st.conns, (unsigned long long)st.calls, st.max_inflight,
	      st.max_granted);
	if (cl)
		clnt_destroy(cl);
}

/*
 * idle_timeout 1: the server closes the CLIENT's
 * connection while no call is in flight; the next call must not fail.
 */
static void idle_reconnect(void)
{
	static const char *const args[] = { "--idle-timeout", "1", NULL };
	struct rpcrdma_clnt_stats cs;
	rtest_stats st;
	CLIENT *cl;
	int i, ok = 0;

	if (ts_server_start(&srv, ts_addr4(), args)) {
		CHECK(false, "start rtest_server --idle-timeout 1");
		return;
	}
	cl = client();
	CHECK(cl && !echo(cl, 1000, 7), "idle_timeout 1: a call");
	sleep(2);
	for (i = 0; cl && i < 3; i++)
		ok += !echo(cl, 70000 + i, 8 + i);
	memset(&cs, 0, sizeof(cs));
	if (cl)
		clnt_control(cl, CLGET_RDMA_STATS, (char *)&cs);
	CHECK(ok == 3 && cs.connects == 2 && cs.conn_losses == 1,
	      "after 2 s idle: the server had closed the connection "
	      "(connections made %u, lost %llu) and the next %d of 3 calls "
	      "succeeded at once",
	      cs.connects, (unsigned long long)cs.conn_losses, ok);
	memset(&st, 0, sizeof(st));
	ok = cl && rtest_stats_1(NULL, &st, cl) == RPC_SUCCESS;
	CHECK(ok && st.conns_reaped == 1 && st.conns == 2,
	      "RTEST_STATS: %u accepted (2), %u closed as idle (1)", st.conns,
	      st.conns_reaped);
	if (cl)
		clnt_destroy(cl);
	i = ts_server_stop(&srv);
	CHECK(i == 0, "SIGTERM: clean exit, status %d (ASan: no leak)", i);
}

int main(void)
{
	static const char *const args[] = { "-c", "16", NULL };
	int st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ts_have_rdma())
		return 77;
	ts_watchdog(600);
	if (ts_server_start(&srv, ts_addr4(), args)) {
		CHECK(false, "start rtest_server");
		return 1;
	}
	/* libtirpc 1.3.3's authnone_create() reads its singleton outside its
	 * lock: sixteen first calls at once (clnt_rdma_create sets cl_auth)
	 * can allocate it twice and leak one.  Create it before the threads. */
	authnone_create();
	threads();
	server_stats();
	st = ts_server_stop(&srv);
	CHECK(st == 0, "SIGTERM: clean exit, status %d (ASan: no leak)", st);
	idle_reconnect();
	return tu_done();
}
