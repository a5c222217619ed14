/*
 * t_svc_many.c - one server (one svc_run thread), sixteen clients at once:
 * sixteen processes, each with its own connection, run a mix of Short
 * calls, Long Calls, Long replies and pipelined bursts up to the grant,
 * and check every octet that comes back.  Then measurements from one
 * client: round-trip time of a NULL call, Long Call and Long reply
 * throughput, and the aggregate call rate of the sixteen.
 *
 * Run in the VM (tests/vm/run -- tests/vm/t_svc_many); 77 without a device.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtest.h"
#include "tests/vm/t_svc_util.h"

#define T_MS	 TS_TIMEOUT_MS
#define NCLIENTS 16
#define ROUNDS	 6

static struct ts_server srv;

static bool echo(struct tc *t, struct tc_call *k, uint32_t len, uint32_t seed,
		 struct tc_reply *rep)
{
	rtest_data arg, res;
	bool ok;

	arg.rtest_data_len = len;
	arg.rtest_data_val = malloc(len ? len : 1);
	memset(&res, 0, sizeof(res));
	ts_fill(arg.rtest_data_val, len, seed);
	k->proc = RTEST_ECHO;
	k->xargs = (xdrproc_t)xdr_rtest_data;
	k->args = &arg;
	ok = !tc_rpc(t, k, (xdrproc_t)xdr_rtest_data, &res, rep, T_MS) &&
	     rep->rpc && rep->ar_stat == SUCCESS && res.rtest_data_len == len &&
	     ts_check_fill(res.rtest_data_val, len, seed) < 0;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	free(arg.rtest_data_val);
	return ok;
}

static bool fill(struct tc *t, uint32_t len, uint32_t seed,
		 struct tc_reply *rep)
{
	rtest_fill_args a = { len, seed };
	rtest_data res = { 0, NULL };
	struct tc_call k = { .proc = RTEST_FILL,
			     .reply_chunk = len + 4096,
			     .xargs = (xdrproc_t)xdr_rtest_fill_args,
			     .args = &a };
	bool ok;

	ok = !tc_rpc(t, &k, (xdrproc_t)xdr_rtest_data, &res, rep, T_MS) &&
	     rep->rpc && rep->ar_stat == SUCCESS && res.rtest_data_len == len &&
	     ts_check_fill(res.rtest_data_val, len, seed) < 0;
	xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	return ok;
}

/* n NULL calls sent back to back, then their replies. */
static bool burst(struct tc *t, int n, struct tc_reply *rep)
{
	uint8_t msg[256], got[4096];
	uint32_t len;
	int i, ok = 0, r;

	for (i = 0; i < n; i++) {
		len = tc_short_call(t, ++t->xid, RTEST_NULL, NULL, NULL, msg,
				    sizeof(msg));
		if (tc_send(t, msg, len))
			return false;
	}
	for (i = 0; i < n; i++) {
		r = tc_recv(t, got, sizeof(got), T_MS);
		if (r <= 0)
			return false;
		tc_decode(got, (uint32_t)r, NULL, NULL, rep);
		ok += rep->rpc && rep->ar_stat == SUCCESS;
	}
	return ok == n;
}

static int client(int id)
{
	struct tc_reply *rep = malloc(sizeof(*rep));
	struct tc_call k;
	int fails = 0, r;
	struct tc t;

	if (!rep || tc_connect(&t, &srv, T_MS))
		return 100;
	for (r = 0; r < ROUNDS; r++) {
		uint32_t seed = (uint32_t)(id * 1000 + r);

		memset(&k, 0, sizeof(k));
		k.proc = RTEST_NULL;
		fails += tc_rpc(&t, &k, NULL, NULL, rep, T_MS) || !rep->rpc;
		memset(&k, 0, sizeof(k));
		fails += !echo(&t, &k, 1024, seed, rep);
		memset(&k, 0, sizeof(k));
		k.long_call = true;
		k.reply_chunk = 70000;
		fails += !echo(&t, &k, 65536, seed + 1, rep);
		fails += !fill(&t, 256u << 10, seed + 2, rep);
		memset(&k, 0, sizeof(k));
		k.read_item = true;
		fails += !echo(&t, &k, 3000, seed + 3, rep);
		fails += !burst(&t, (int)(t.grant < 8 ? t.grant : 8), rep);
	}
	tc_close(&t);
	free(rep);
	return fails;
}

static void sixteen(void)
{
	pid_t pids[NCLIENTS];
	int64_t t0 = ts_now_us(), us;
	int i, st, good = 0, calls;
	rtest_stats s;
	struct tc t;
	struct tc_reply *rep = malloc(sizeof(*rep));
	struct tc_call k = { .proc = RTEST_STATS };

	fflush(stdout);
	for (i = 0; i < NCLIENTS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(client(i));
	}
	for (i = 0; i < NCLIENTS; i++) {
		waitpid(pids[i], &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			good++;
		else
			NOTE("client %d: %s %d", i,
			     WIFEXITED(st) ? "failures" : "signal",
			     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	us = ts_now_us() - t0;
	/* per round: NULL, 3 ECHO, FILL, burst of up to 8 */
	calls = NCLIENTS * ROUNDS * (5 + 8);
	CHECK(good == NCLIENTS,
	      "%d clients at once, every octet checked: %d succeeded", NCLIENTS,
	      good);
	NOTE("16 clients: %d calls in %.2f s, %.0f calls/s", calls,
	     (double)us / 1e6, calls / ((double)us / 1e6));
	memset(&s, 0, sizeof(s));
	if (!rep || tc_connect(&t, &srv, T_MS)) {
		CHECK(false, "connect for STATS");
		free(rep);
		return;
	}
	st = tc_rpc(&t, &k, (xdrproc_t)xdr_rtest_stats, &s, rep, T_MS);
	CHECK(!st && s.conns >= NCLIENTS + 1 && s.calls >= (uint64_t)calls,
	      "server counted %u connections and %llu calls", s.conns,
	      (unsigned long long)s.calls);
	NOTE("server: most calls in flight on one connection %u, largest grant %u",
	     s.max_inflight, s.max_granted);
	tc_close(&t);
	free(rep);
}

static void measure(void)
{
	struct tc_reply *rep = malloc(sizeof(*rep));
	struct tc_call k;
	int64_t t0;
	struct tc t;
	int i, n, ok;

	if (!rep || tc_connect(&t, &srv, T_MS)) {
		CHECK(false, "connect for measurements");
		free(rep);
		return;
	}
	n = 300;
	t0 = ts_now_us();
	for (i = ok = 0; i < n; i++) {
		memset(&k, 0, sizeof(k));
		k.proc = RTEST_NULL;
		ok += !tc_rpc(&t, &k, NULL, NULL, rep, T_MS) && rep->rpc;
	}
	CHECK(ok == n, "%d NULL calls", n);
	NOTE("NULL round trip: %.1f us", (double)(ts_now_us() - t0) / n);

	n = 10;
	t0 = ts_now_us();
	for (i = ok = 0; i < n; i++) {
		memset(&k, 0, sizeof(k));
		k.long_call = true;
		k.reply_chunk = (1u << 20) + 4096;
		ok += echo(&t, &k, 1u << 20, (uint32_t)i, rep);
	}
	CHECK(ok == n, "%d Long ECHO calls of 1 MiB", n);
	NOTE("Long ECHO 1 MiB: %.1f MB/s each way",
	     n * 1.048576 / ((double)(ts_now_us() - t0) / 1e6));

	n = 5;
	t0 = ts_now_us();
	for (i = ok = 0; i < n; i++)
		ok += fill(&t, 8u << 20, (uint32_t)i, rep);
	CHECK(ok == n, "%d FILL calls of 8 MiB (Long reply)", n);
	NOTE("Long reply 8 MiB: %.1f MB/s",
	     n * 8.388608 / ((double)(ts_now_us() - t0) / 1e6));
	tc_close(&t);
	free(rep);
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
	sixteen();
	measure();
	st = ts_server_stop(&srv);
	CHECK(st == 0, "SIGTERM: clean exit, status %d (ASan: no leak)", st);
	return tu_done();
}
