/*
 * t_soak.c - a long run of mixed traffic and connection churn (issue 16),
 * with the memory of every process sampled once a minute: does anything
 * grow?  Not in CI: "make soak" (tests/vm/soak.am) runs it for 30 minutes.
 *
 * Traffic, all checked octet by octet (a wrong result or an RPC error is a
 * failure: no fault is injected here but the raw client's own drops):
 *   steady   4 threads on one long-lived CLIENT of rtest_server: ECHO and
 *            FILL from 0 octets to 2 MiB (Short, Long Calls, Reply chunks)
 *   ddp      2 threads, each with its own long-lived CLIENT of ddpt_server:
 *            ECHO (Read and Write chunks) and READ (Write chunk) up to 1 MiB
 *   churn    2 threads: a CLIENT of either server made, used for 5 to 20
 *            calls and destroyed, again and again
 *   raw      1 thread: a raw connection (t_svc_util.h) made, a few calls
 *            (one Long Call of up to 1 MiB), every third time ended by
 *            this client in the middle of a 4 MiB Long Call, closed
 * Samples (VM_SOAK_INTERVAL seconds apart, 60 by default): resident memory
 * (VmRSS) and registered memory (rdma resource show mr) of both servers and
 * of this process, and the servers' fds.  Verdict: after the warm-up (the
 * first fifth of the run), no series may end more than 10 % and 4 MiB
 * above its value at the end of the warm-up, nor keep rising through the
 * last third.  The table and the verdict are printed.
 *
 *   t_soak [MINUTES]     (default VM_SOAK_MINUTES, or 30)
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

#include "ddpt.h"
#include "rtest.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"
#include "tests/vm/t_svc_util.h"

#define MAX_SAMPLES 256

static struct ts_server srv, dsrv;
static atomic_bool stopping;
static atomic_ullong ncalls, nbad, nchurn, ndrops;

/* ---- Calls -------------------------------------------------------------- */

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static CLIENT *client(const struct ts_server *s, rpcprog_t prog)
{
	return td_client_sized(s, prog, 1, RPCRDMA_REG_AUTO, 2 * MiB + 4096,
			       60);
}

static void bad(CLIENT *cl, const char *what, u_int len, enum clnt_stat st)
{
	if (atomic_fetch_add(&nbad, 1) < 10)
		t_note("FAILED %s %u octets: %s [%s]", what, len,
		       clnt_sperrno(st), td_errmsg(cl));
}

static void rtest_call(CLIENT *cl, uint32_t *r)
{
	u_int len = rnd(r) % 8 ? rnd(r) % 70000 : rnd(r) % (2 * MiB);
	uint32_t s = rnd(r);
	rtest_data in = { 0, NULL }, out;
	rtest_fill_args fa = { .len = len, .seed = s };
	enum clnt_stat st;
	bool echo = rnd(r) % 2;

	memset(&out, 0, sizeof(out));
	if (echo) {
		in.rtest_data_len = len;
		in.rtest_data_val = (char *)td_filled(len, s);
		st = rtest_echo_1(&in, &out, cl);
		free(in.rtest_data_val);
	} else {
		st = rtest_fill_1(&fa, &out, cl);
	}
	atomic_fetch_add(&ncalls, 1);
	if (st != RPC_SUCCESS || out.rtest_data_len != len ||
	    t_fill_check(out.rtest_data_val, len, s) >= 0)
		bad(cl, echo ? "ECHO" : "FILL", len, st);
	if (st == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&out);
}

static void ddpt_call(CLIENT *cl, uint32_t *r)
{
	u_int len = 1 + rnd(r) % (rnd(r) % 4 ? 100000 : MiB);
	uint32_t s = rnd(r);
	ddpt_echo_args ea = { .room = len };
	ddpt_read_args ra = { .count = len, .seed = s };
	ddpt_echo_res er;
	ddpt_read_res rr;
	enum clnt_stat st;
	const char *d;
	u_int got;

	memset(&er, 0, sizeof(er));
	memset(&rr, 0, sizeof(rr));
	if (rnd(r) % 2) {
		ea.data.data_len = len;
		ea.data.data_val = (char *)td_filled(len, s);
		st = ddpt_echo_1(&ea, &er, cl);
		free(ea.data.data_val);
		d = er.data.data_val;
		got = er.data.data_len;
	} else {
		st = ddpt_read_1(&ra, &rr, cl);
		d = rr.data.data_val;
		got = rr.data.data_len;
	}
	atomic_fetch_add(&ncalls, 1);
	if (st != RPC_SUCCESS || got != len || t_fill_check(d, len, s) >= 0)
		bad(cl, "DDP", len, st);
	if (st == RPC_SUCCESS) {
		xdr_free((xdrproc_t)xdr_ddpt_echo_res, (char *)&er);
		xdr_free((xdrproc_t)xdr_ddpt_read_res, (char *)&rr);
	}
}

/* ---- Threads ------------------------------------------------------------ */

struct worker {
	pthread_t th;
	CLIENT *cl; /* steady, ddp: shared or own */
	bool ddp;
	uint32_t rng;
};

static void *steady_run(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stopping))
		if (w->ddp)
			ddpt_call(w->cl, &w->rng);
		else
			rtest_call(w->cl, &w->rng);
	return NULL;
}

static void *churn_run(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stopping)) {
		bool ddp = rnd(&w->rng) % 2;
		CLIENT *cl = client(ddp ? &dsrv : &srv,
				    ddp ? DDPT_PROG : RTEST_PROG);
		unsigned int n = 5 + rnd(&w->rng) % 16, i;

		if (!cl) {
			bad(NULL, "clnt_rdma_create", 0, RPC_FAILED);
			sleep(1);
			continue;
		}
		for (i = 0; i < n && !atomic_load(&stopping); i++)
			if (ddp)
				ddpt_call(cl, &w->rng);
			else
				rtest_call(cl, &w->rng);
		clnt_destroy(cl);
		atomic_fetch_add(&nchurn, 1);
	}
	return NULL;
}

static bool after_packets(void *arg)
{
	uint64_t *until = arg;

	return tu_hw_counter("sent_pkts") >= *until;
}

/* One raw connection: a NULL, a Long ECHO, and every third time a 4 MiB
 * Long Call that this client ends in its middle. */
static void raw_round(struct worker *w, unsigned int round)
{
	static struct tc_reply rep; /* this thread's alone */
	struct tc_call k = { .proc = RTEST_NULL };
	u_int len = 1 + rnd(&w->rng) % MiB;
	rtest_data d, res;
	uint64_t until;
	struct tc t;

	if (tc_connect(&t, &srv, 20000)) {
		bad(NULL, "raw connect", 0, RPC_FAILED);
		return;
	}
	if (tc_rpc(&t, &k, NULL, NULL, &rep, 30000) || !rep.rpc)
		bad(NULL, "raw NULL", 0, RPC_FAILED);
	d.rtest_data_len = len;
	d.rtest_data_val = (char *)td_filled(len, 5);
	memset(&res, 0, sizeof(res));
	k.proc = RTEST_ECHO;
	k.xargs = (xdrproc_t)xdr_rtest_data;
	k.args = &d;
	k.long_call = true;
	k.reply_chunk = len + 4096;
	if (tc_rpc(&t, &k, (xdrproc_t)xdr_rtest_data, &res, &rep, 30000) ||
	    !rep.res_ok || res.rtest_data_len != len ||
	    t_fill_check(res.rtest_data_val, len, 5) >= 0)
		bad(NULL, "raw Long ECHO", len, RPC_FAILED);
	if (rep.res_ok)
		xdr_free((xdrproc_t)xdr_rtest_data, (char *)&res);
	atomic_fetch_add(&ncalls, 2);
	free(d.rtest_data_val);
	if (round % 3 == 2) {
		d.rtest_data_len = 4 * MiB;
		d.rtest_data_val = (char *)td_filled(4 * MiB, 6);
		k.reply_chunk = 4 * MiB + 4096;
		until = tu_hw_counter("sent_pkts") + 1 + rnd(&w->rng) % 8000;
		k.drop_when = after_packets;
		k.drop_arg = &until;
		tc_rpc(&t, &k, NULL, NULL, &rep, 30000);
		free(d.rtest_data_val);
		atomic_fetch_add(&ndrops, 1);
	}
	tc_close(&t);
}

static void *raw_run(void *arg)
{
	struct worker *w = arg;
	unsigned int round = 0;

	while (!atomic_load(&stopping))
		raw_round(w, round++);
	return NULL;
}

/* ---- Samples ------------------------------------------------------------ */

enum series {
	S_RSS,
	S_REG,
	D_RSS,
	D_REG,
	C_RSS,
	C_REG,
	S_FDS,
	NSERIES
};

static const char *const series_name[NSERIES] = {
	"rtest_server RSS kB", "rtest_server registered kB",
	"ddpt_server RSS kB",  "ddpt_server registered kB",
	"client RSS kB",       "client registered kB",
	"rtest_server fds",
};

static long long sample[MAX_SAMPLES][NSERIES];

static void take(unsigned int i)
{
	long long *v = sample[i];

	v[S_RSS] = ts_proc_kb(srv.pid, "VmRSS");
	v[S_REG] = tu_mr_bytes(srv.pid) / 1024;
	v[D_RSS] = ts_proc_kb(dsrv.pid, "VmRSS");
	v[D_REG] = tu_mr_bytes(dsrv.pid) / 1024;
	v[C_RSS] = ts_proc_kb(getpid(), "VmRSS");
	v[C_REG] = tu_mr_bytes(getpid()) / 1024;
	v[S_FDS] = 0;
	printf("# sample %3u:", i);
	for (int s = 0; s < NSERIES - 1; s++)
		printf(" %lld", v[s]);
	printf(" | calls %llu, CLIENTs made and destroyed %llu, raw drops %llu, failures %llu\n",
	       (unsigned long long)atomic_load(&ncalls),
	       (unsigned long long)atomic_load(&nchurn),
	       (unsigned long long)atomic_load(&ndrops),
	       (unsigned long long)atomic_load(&nbad));
	fflush(stdout);
}

static long long avg(unsigned int s, unsigned int from, unsigned int to)
{
	long long sum = 0;
	unsigned int i;

	for (i = from; i < to; i++)
		sum += sample[i][s];
	return to > from ? sum / (to - from) : 0;
}

/*
 * Flat: the last sample within 10 % and 4 MiB of the end of the warm-up
 * (sample w), and the last third no higher on average than the middle
 * third by more than that margin.
 */
static void judge(unsigned int n, unsigned int interval)
{
	unsigned int w = n / 5, third = n / 3, s;

	for (s = 0; s < NSERIES - 1; s++) {
		long long base = sample[w][s], last = sample[n - 1][s];
		long long mid = avg(s, third, 2 * third);
		long long end = avg(s, 2 * third, n);
		long long margin = base / 10 > 4096 ? base / 10 : 4096;

		t_check(base >= 0 && last - base <= margin &&
				end - mid <= margin,
			"%s flat: %lld after %u s (warm-up), %lld at the end; averages %lld (middle third), %lld (last third)",
			series_name[s], base, w * interval, last, mid, end);
	}
}

/* ---- Main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const char *const rargs[] = { "-c", "32", "--max-read",
					     "20000000", NULL };
	const struct td_env env[] = { { "RPCRDMA_ULB_CONF", DDPT_CONF } };
	struct ts_server *wd[TD_WATCHDOG_MAX] = { &srv, &dsrv };
	const char *m = getenv("VM_SOAK_MINUTES"), *iv;
	unsigned int minutes = m ? (unsigned int)atoi(m) : 30;
	unsigned int interval = 60, n, i;
	struct worker w[9];
	CLIENT *shared;

	if (argc > 1)
		minutes = (unsigned int)atoi(argv[1]);
	iv = getenv("VM_SOAK_INTERVAL");
	if (iv && atoi(iv) > 0)
		interval = (unsigned int)atoi(iv);
	n = minutes * 60 / interval + 1;
	if (!minutes || n > MAX_SAMPLES || n < 6) {
		fprintf(stderr,
			"usage: t_soak [MINUTES]  (6 to %u samples of VM_SOAK_INTERVAL s)\n",
			MAX_SAMPLES);
		return 2;
	}
	td_env_ensure(argv, env, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ts_have_rdma())
		return 77;
	td_watchdog(minutes * 60 + 300, wd, 2);
	t_check(ts_server_start(&srv, t_addr4(), rargs) == 0 &&
			td_server_start(&dsrv, "ddpt_server", t_addr4(),
					DDPT_CONF) == 0,
		"rtest_server on port %u, ddpt_server on port %u", srv.port,
		dsrv.port);
	shared = client(&srv, RTEST_PROG);
	t_check(shared != NULL, "the steady threads' CLIENT");
	if (t_failures)
		return 1;
	for (i = 0; i < 9; i++) {
		w[i] = (struct worker){ .rng = 2654435761u * (i + 1) };
		if (i < 4) {
			w[i].cl = shared;
		} else if (i < 6) {
			w[i].ddp = true;
			w[i].cl = client(&dsrv, DDPT_PROG);
			t_check(w[i].cl != NULL, "a DDP thread's CLIENT");
		}
		pthread_create(&w[i].th, NULL,
			       i < 6 ? steady_run :
			       i < 8 ? churn_run :
				       raw_run,
			       &w[i]);
	}
	t_note("%u minutes, a sample every %u s: %s", minutes, interval,
	       "server RSS, server registered, ddpt RSS, ddpt registered, client RSS, client registered (kB)");
	for (i = 0; i < n; i++) {
		if (i)
			sleep(interval);
		take(i);
	}
	atomic_store(&stopping, true);
	for (i = 0; i < 9; i++)
		pthread_join(w[i].th, NULL);
	for (i = 4; i < 6; i++)
		if (w[i].cl)
			clnt_destroy(w[i].cl);
	clnt_destroy(shared);
	t_check(atomic_load(&nbad) == 0,
		"%llu calls, %llu CLIENTs made and destroyed, %llu raw connections ended mid-call: %llu failures",
		(unsigned long long)atomic_load(&ncalls),
		(unsigned long long)atomic_load(&nchurn),
		(unsigned long long)atomic_load(&ndrops),
		(unsigned long long)atomic_load(&nbad));
	judge(n, interval);
	t_check(ts_server_stop(&srv) == 0 && ts_server_stop(&dsrv) == 0,
		"both servers exit 0 on SIGTERM");
	printf("%s: %d failure(s)\n", t_failures ? "FAIL" : "PASS", t_failures);
	return t_failures ? 1 : 0;
}
