/*
 * t_soak.c - a long run of mixed traffic and connection churn,
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
 * Samples, VM_SOAK_INTERVAL seconds apart (60 by default), each taken at
 * rest: every thread parks between two calls (a churn thread destroys its
 * CLIENT first, the raw one closes its connection; the gate below), and
 * the sample waits until the kernel's resource tracking shows each server
 * down to its long-lived connections (rtest_server 1, ddpt_server 2, this
 * process 3 queue pairs) with nothing registered outside them.  What is
 * sampled then is what the run left behind, not what happened to be in
 * flight.  For both servers and this process: resident memory (VmRSS),
 * registered memory (rdma resource show mr, by protection domain), of
 * which the connections' caches of chunk buffers, MRs, QPs and fds.
 *
 * Verdict, on the samples at rest:
 *   - resident memory beyond the registered memory (which is pinned, so
 *     resident, and judged by the next rule) is flat: after the warm-up
 *     (the first fifth of the run) it does not end more than 10 % and
 *     4 MiB above its value at the end of the warm-up, nor rise by that
 *     margin from the middle third to the last;
 *   - registered memory is exact: the same long-lived connections
 *     throughout, nothing registered outside them, their set-up
 *     registrations unchanged, and beyond those only a cache of chunk
 *     buffers within its bound (CACHE_PER_CALL says why it may grow);
 *   - fds are exactly as at the end of the warm-up;
 *   - every call succeeded with the right data, and both servers exit 0.
 *
 * ALLOCATOR: every process runs with glibc's malloc as it comes;
 * VM_SOAK_TUNABLES, when set, is passed as GLIBC_TUNABLES (e.g.
 * glibc.malloc.mmap_threshold=131072, the setting the soak needed before).
 * By default glibc's mmap threshold follows the largest block freed, so
 * after the first 2 MiB block freed every block up to 32 MiB comes from the
 * heap, and what is freed stays resident among the blocks still in use.
 * The library's chunk buffers and slabs were such blocks: measured at rest
 * (6 minutes, rtest_server), the heap grew 31 -> 46 MB and RSS 40 -> 54
 * MB.  They are mapped by themselves now (rt_buf.c) and the connection's
 * cache of them has a byte cap, so RSS follows what is in use.
 *
 *   t_soak [MINUTES]     (default VM_SOAK_MINUTES, or 30)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* As td_client_sized(), with 30 s to connect: the machine running the
 * VM may be busy, and a churn thread measures no latency. */
static CLIENT *client(const struct ts_server *s, rpcprog_t prog)
{
	struct timeval tv = { 60, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;

	rpcrdma_attr_init(&a);
	a.max_reply_size = 2 * MiB + 4096;
	a.connect_timeout_ms = 30000;
	t_sockaddr(&ss, s->host, s->port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, prog, 1, &a);
	if (!cl)
		NOTE("clnt_rdma_create(%s port %u): %s", s->host, s->port,
		     clnt_spcreateerror("create"));
	else
		clnt_control(cl, CLSET_TIMEOUT, (char *)&tv);
	return cl;
}

/* A failed call or connection (cl NULL: no CLIENT to ask why). */
static void bad(CLIENT *cl, const char *what, u_int len, enum clnt_stat st)
{
	if (atomic_fetch_add(&nbad, 1) < 10)
		NOTE("FAILED %s %u octets: %s [%s]", what, len,
		     clnt_sperrno(st), cl ? td_errmsg(cl) : "-");
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

/* ---- The gate: every worker stops for a sample ------------------------- */

/*
 * A sample is taken with no call in flight and no connection but the
 * long-lived ones: the main thread closes the gate, each worker finishes
 * what it is doing (a churn thread destroys its CLIENT first, a raw thread
 * closes its connection) and parks behind it; the sample is taken once all
 * have parked and the servers have let go of the closed connections; the
 * gate opens again.  Between two samples the traffic runs as before.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* parked went up, or the gate opened */
	atomic_bool closed;  /* also read without the lock: churn */
	unsigned int parked;
} gate = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void gate_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&gate.cond, &a);
	pthread_condattr_destroy(&a);
}

/* A worker between two pieces of work: wait here while the gate is shut. */
static void gate_pass(void)
{
	pthread_mutex_lock(&gate.lock);
	if (atomic_load(&gate.closed)) {
		gate.parked++;
		pthread_cond_broadcast(&gate.cond);
		while (atomic_load(&gate.closed))
			pthread_cond_wait(&gate.cond, &gate.lock);
		gate.parked--;
	}
	pthread_mutex_unlock(&gate.lock);
}

/* Shut the gate and wait until all workers have parked: true, or false
 * after timeout_s (the gate stays shut; gate_open() opens it). */
static bool gate_close(unsigned int workers, unsigned int timeout_s)
{
	struct timespec dl;
	bool all;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_s;
	pthread_mutex_lock(&gate.lock);
	atomic_store(&gate.closed, true);
	while (gate.parked < workers &&
	       pthread_cond_timedwait(&gate.cond, &gate.lock, &dl) != ETIMEDOUT)
		;
	all = gate.parked == workers;
	pthread_mutex_unlock(&gate.lock);
	return all;
}

static void gate_open(void)
{
	pthread_mutex_lock(&gate.lock);
	atomic_store(&gate.closed, false);
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

/* ---- Threads ------------------------------------------------------------ */

#define NSTEADY	 4 /* on the shared CLIENT of rtest_server */
#define NDDP	 2 /* each with its own CLIENT of ddpt_server */
#define NCHURN	 2
#define NWORKERS (NSTEADY + NDDP + NCHURN + 1) /* and the raw one */

struct worker {
	pthread_t th;
	CLIENT *cl; /* steady, ddp: shared or own */
	bool ddp;
	uint32_t rng;
};

static void *steady_run(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stopping)) {
		gate_pass();
		if (w->ddp)
			ddpt_call(w->cl, &w->rng);
		else
			rtest_call(w->cl, &w->rng);
	}
	return NULL;
}

static void *churn_run(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stopping)) {
		bool ddp = rnd(&w->rng) % 2;
		unsigned int n = 5 + rnd(&w->rng) % 16, i;
		CLIENT *cl;

		gate_pass();
		cl = client(ddp ? &dsrv : &srv, ddp ? DDPT_PROG : RTEST_PROG);
		if (!cl) {
			bad(NULL, "clnt_rdma_create", 0, RPC_FAILED);
			sleep(1);
			continue;
		}
		/* Cut short when the gate shuts: it waits for this CLIENT's
		 * end. */
		for (i = 0; i < n && !atomic_load(&stopping) &&
			    !atomic_load(&gate.closed);
		     i++)
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

	while (!atomic_load(&stopping)) {
		gate_pass();
		raw_round(w, round++);
	}
	return NULL;
}

/* ---- What each process holds on the device ------------------------------ */

#define MAX_PDS 64
#define MAX_MRS 4096

/*
 * One process's RDMA resources, from the kernel's resource tracking
 * (iproute2's "rdma resource show"): its queue pairs, one per live
 * connection, and its memory regions with their protection domains.  Each
 * connection has a protection domain of its own (rt_conn.c), so a region
 * in a domain that no queue pair of the process uses outlived its
 * connection: an orphan.
 */
struct census {
	long pid;
	int qps;
	unsigned int npd, nmr;
	long pdn[MAX_PDS]; /* of its queue pairs */
	struct {
		long pdn;
		long long len;
	} mr[MAX_MRS];
	bool lost; /* a PD number missing, or too many to list */
};

static long field(const char *line, const char *name)
{
	const char *p = strstr(line, name);

	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

static bool has_pd(const struct census *c, long pd)
{
	unsigned int i;

	for (i = 0; i < c->npd; i++)
		if (c->pdn[i] == pd)
			return true;
	return false;
}

static void census_qp(struct census *c, const char *line)
{
	long pd = field(line, " pdn ");

	c->qps++;
	if (pd < 0 || c->npd == MAX_PDS)
		c->lost = true;
	else
		c->pdn[c->npd++] = pd;
}

static void census_mr(struct census *c, const char *line)
{
	if (c->nmr == MAX_MRS) {
		c->lost = true;
		return;
	}
	c->mr[c->nmr].pdn = field(line, " pdn ");
	c->mr[c->nmr].len = field(line, " mrlen ");
	c->lost |= c->mr[c->nmr].pdn < 0 || c->mr[c->nmr].len < 0;
	c->nmr++;
}

/*
 * The process of the task that made a resource: the kernel names the
 * thread (its task id), so what a worker thread of this program
 * registered or connected shows under that thread's id.  -1 when the task
 * is gone, which leaves the resource unattributed.
 */
static long tgid_of(long tid)
{
	return tid < 0 ? -1 : ts_proc_kb((pid_t)tid, "Tgid"); /* a number */
}

/* Feed each line of "rdma resource show what" made by a task of a
 * process of c[0..n) to take.  false when the tool failed, or a resource
 * of no known task was listed (a thread that ended). */
static bool census_read(const char *what,
			void (*take)(struct census *, const char *),
			struct census *c, unsigned int n)
{
	char cmd[64], line[1024];
	bool known = true;
	unsigned int i;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>/dev/null", what);
	f = popen(cmd, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		long tid = field(line, " pid "), pid = tgid_of(tid);

		if (tid >= 0 && pid < 0)
			known = false;
		for (i = 0; i < n; i++)
			if (c[i].pid == pid)
				take(&c[i], line);
	}
	return pclose(f) == 0 && known;
}

static bool census_take(struct census *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		long pid = c[i].pid;

		memset(&c[i], 0, sizeof(c[i]));
		c[i].pid = pid;
	}
	return census_read("qp", census_qp, c, n) &&
	       census_read("mr", census_mr, c, n);
}

/* Octets registered, all or outside the domains of live connections. */
static long long census_bytes(const struct census *c, bool orphans_only)
{
	long long sum = 0;
	unsigned int i;

	for (i = 0; i < c->nmr; i++)
		if (!orphans_only || !has_pd(c, c->mr[i].pdn))
			sum += c->mr[i].len;
	return sum;
}

/* ---- The registration cache of a live connection ------------------------ */

/*
 * Besides what a connection registers when it is set up (its Send and
 * Receive slabs), it keeps the buffers it registered for chunks (Read
 * sinks and reply sources on a server, Long-call, Reply and Write buffers
 * on a client) in a cache by size class, a power of two from 4 KiB
 * (rt_buf.c): a class holds as many buffers as the connection ever had in
 * use at once, until the connection ends.  That grows in steps whenever
 * the traffic first reaches a new concurrency in a class, which a random
 * mix may do late in a run, so it is held to its bound, not to its value
 * at some sample: a call holds at most three such buffers on either side
 * (client: Long call, Reply, one Write chunk; server: Read sink, Reply
 * source, Write source), and a server keeps a call's sources until its
 * Send completion is reaped, when the client may already have its next
 * call in flight: CACHE_PER_CALL per call the connection carries at once.
 * A buffer that is not given back is replaced by a new one the next time
 * its class is needed: at thousands of calls a minute such a leak passes
 * the bound within the run unless its path is rare.
 */
#define CACHE_PER_CALL	6
#define CACHE_MIN_SHIFT 12
#define CACHE_MAX_SHIFT 26

/* What a census shows beyond its connections' set-up registrations. */
struct cache {
	long long bytes;
	unsigned int most; /* buffers of one size on one connection */
	char bad[160];	   /* why it is not a bounded cache; "" if it is */
};

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The registrations of domain pd, sorted; their count. */
static unsigned int pd_sizes(const struct census *c, long pd, long long *out)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->nmr; i++)
		if (c->mr[i].pdn == pd)
			out[n++] = c->mr[i].len;
	qsort(out, n, sizeof(*out), cmp_ll);
	return n;
}

static bool is_class(long long len)
{
	int k;

	for (k = CACHE_MIN_SHIFT; k <= CACHE_MAX_SHIFT; k++)
		if (len == 1LL << k)
			return true;
	return false;
}

/* The sizes beyond the set-up ones (set, sorted) in now (sorted) into
 * out: their count, or -1 if a set-up registration is gone. */
static int beyond(const long long *set, unsigned int nset, const long long *now,
		  unsigned int nnow, long long *out)
{
	unsigned int i = 0, j = 0;
	int n = 0;

	while (j < nnow) {
		if (i < nset && set[i] == now[j]) {
			i++;
			j++;
		} else if (i < nset && set[i] < now[j]) {
			return -1;
		} else {
			out[n++] = now[j++];
		}
	}
	return i == nset ? n : -1;
}

/* Judge one connection (domain pd, carrying up to calls calls at once) of
 * now against its set-up registrations in set. */
static void cache_pd(const struct census *set, const struct census *now,
		     long pd, unsigned int calls, struct cache *out)
{
	static long long a[MAX_MRS], b[MAX_MRS], r[MAX_MRS];
	unsigned int na = pd_sizes(set, pd, a), nb = pd_sizes(now, pd, b);
	int nr = beyond(a, na, b, nb, r), i, run;

	if (nr < 0) {
		snprintf(out->bad, sizeof(out->bad),
			 "a set-up registration of PD %ld is gone", pd);
		return;
	}
	for (i = 0; i < nr; i += run) {
		for (run = 1; i + run < nr && r[i + run] == r[i]; run++)
			;
		out->bytes += r[i] * run;
		if ((unsigned int)run > out->most)
			out->most = (unsigned int)run;
		if (!is_class(r[i]))
			snprintf(out->bad, sizeof(out->bad),
				 "PD %ld holds %lld octets that are no cache class",
				 pd, r[i]);
		else if ((unsigned int)run > CACHE_PER_CALL * calls)
			snprintf(out->bad, sizeof(out->bad),
				 "PD %ld holds %d buffers of %lld octets, more than %u",
				 pd, run, r[i], CACHE_PER_CALL * calls);
	}
}

/* The connections of set (calls[k]: what the one in set->pdn[k] carries
 * at once) in now: the same ones, each a bounded cache. */
static void cache_take(const struct census *set, const unsigned int *calls,
		       const struct census *now, struct cache *out)
{
	unsigned int k;

	memset(out, 0, sizeof(*out));
	if (now->npd != set->npd)
		snprintf(out->bad, sizeof(out->bad),
			 "%u connections, %u when set up", now->npd, set->npd);
	for (k = 0; k < set->npd && !out->bad[0]; k++) {
		if (!has_pd(now, set->pdn[k]))
			snprintf(out->bad, sizeof(out->bad),
				 "the connection of PD %ld was replaced",
				 set->pdn[k]);
		else
			cache_pd(set, now, set->pdn[k], calls[k], out);
	}
}

/* ---- Samples ------------------------------------------------------------ */

enum proc {
	P_RTEST,
	P_DDPT,
	P_CLIENT,
	NPROC
};

static const char *const proc_name[NPROC] = { "rtest_server", "ddpt_server",
					      "client" };
/* Live connections at rest: the shared CLIENT; the two DDP CLIENTs; all
 * three seen from the client. */
static const int want_qps[NPROC] = { 1, NDDP, 1 + NDDP };

struct psample {
	long long rss, reg, orphan, cache; /* kB */
	int mrs, qps, fds;
	struct cache c;
};

struct sample {
	struct psample p[NPROC];
	long long t_s;	 /* since the start */
	double settle_s; /* from shutting the gate to the sample */
	bool quiet;	 /* every worker parked, the servers settled */
	unsigned long long calls, churn, drops, bad;
};

static struct sample sample[MAX_SAMPLES];
static pid_t procs[NPROC];
/* The long-lived connections as set up, and how many calls each carries
 * at once. */
static struct census set_up[NPROC];
static unsigned int set_calls[NPROC][MAX_PDS];
static struct census now[NPROC];

static void census_init(struct census *c)
{
	unsigned int p;

	for (p = 0; p < NPROC; p++)
		c[p].pid = procs[p];
}

/* Every process down to its long-lived connections, nothing registered
 * outside them? */
static bool settled(const struct census *c)
{
	unsigned int i;

	for (i = 0; i < NPROC; i++)
		if (c[i].lost || c[i].qps != want_qps[i] ||
		    census_bytes(&c[i], true))
			return false;
	return true;
}

/* A census of a settled system, within timeout_s: false if none came. */
static bool census_settled(struct census *c, unsigned int timeout_s)
{
	int64_t dl = tu_now_ms() + timeout_s * 1000;
	bool ok;

	census_init(c);
	while ((ok = census_take(c, NPROC)) && !settled(c) && tu_now_ms() < dl)
		usleep(200000);
	return ok && settled(c);
}

/*
 * The long-lived CLIENTs are connected and no call has been made: record
 * what each connection registered when it was set up.  The client's
 * connection to rtest_server is told apart from the DDP ones by its
 * domain, the only one it had before they were made (shared_pd).
 */
static bool record_set_up(long shared_pd)
{
	unsigned int p, k;

	if (!census_settled(set_up, 60))
		return false;
	for (p = 0; p < NPROC; p++)
		for (k = 0; k < set_up[p].npd; k++)
			set_calls[p][k] = p == P_RTEST || (p == P_CLIENT &&
							   set_up[p].pdn[k] ==
								   shared_pd) ?
						  NSTEADY :
						  1;
	return true;
}

static void print_sample(unsigned int i)
{
	const struct sample *v = &sample[i];
	unsigned int p;

	printf("# %3u %5lld |", i, v->t_s);
	for (p = 0; p < NPROC; p++)
		printf(" %6lld %6lld %6lld %3d %d %2d |", v->p[p].rss,
		       v->p[p].reg, v->p[p].cache, v->p[p].mrs, v->p[p].qps,
		       v->p[p].fds);
	printf(" %4.1f%s %llu %llu %llu %llu\n", v->settle_s,
	       v->quiet ? "" : " NOT AT REST", v->calls, v->churn, v->drops,
	       v->bad);
	fflush(stdout);
}

/*
 * Quiesce, then measure: the workers parked (at most 240 s: a call may
 * take up to its 60 s timeout, a raw round three of 30 s), then at most
 * 60 s for the servers to take down the connections that were closed.
 */
static void take(unsigned int i, int64_t t0)
{
	struct sample *v = &sample[i];
	int64_t start = tu_now_ms();
	unsigned int p;
	bool parked;

	parked = gate_close(NWORKERS, 240);
	v->quiet = census_settled(now, 60) && parked;
	v->settle_s = (double)(tu_now_ms() - start) / 1000;
	v->t_s = (start - t0) / 1000;
	for (p = 0; p < NPROC; p++) {
		struct psample *s = &v->p[p];

		cache_take(&set_up[p], set_calls[p], &now[p], &s->c);
		s->rss = ts_proc_kb(procs[p], "VmRSS");
		s->reg = census_bytes(&now[p], false) / 1024;
		s->orphan = census_bytes(&now[p], true) / 1024;
		s->cache = s->c.bytes / 1024;
		s->mrs = (int)now[p].nmr;
		s->qps = now[p].qps;
		s->fds = ts_proc_fds(procs[p]);
	}
	v->calls = atomic_load(&ncalls);
	v->churn = atomic_load(&nchurn);
	v->drops = atomic_load(&ndrops);
	v->bad = atomic_load(&nbad);
	gate_open();
	print_sample(i);
}

/* ---- Verdict ------------------------------------------------------------ */

/* Resident memory beyond registered memory (kB): registered memory is
 * resident (pinned) and judged by its own rules. */
static long long unregistered(unsigned int i, unsigned int p)
{
	return sample[i].p[p].rss - sample[i].p[p].reg;
}

static long long avg(unsigned int p, unsigned int from, unsigned int to)
{
	long long sum = 0;
	unsigned int i;

	for (i = from; i < to; i++)
		sum += unregistered(i, p);
	return to > from ? sum / (to - from) : 0;
}

/*
 * Resident memory beyond the registered is flat: the last sample within
 * 10 % and 4 MiB of the end of the warm-up (sample w), and the last third
 * no higher on average than the middle third by more than that margin.
 */
static void judge_rss(unsigned int p, unsigned int n, unsigned int w)
{
	unsigned int third = n / 3;
	long long base = unregistered(w, p), last = unregistered(n - 1, p);
	long long mid = avg(p, third, 2 * third), end = avg(p, 2 * third, n);
	long long margin = base / 10 > 4096 ? base / 10 : 4096;

#if defined(__SANITIZE_ADDRESS__)
	NOTE("%s RSS not judged under AddressSanitizer: %lld kB at sample 0, %lld kB at the end",
	     proc_name[p], sample[0].p[p].rss, sample[n - 1].p[p].rss);
	return;
#endif
	CHECK(sample[w].p[p].rss > 0 && last - base <= margin &&
		      end - mid <= margin,
	      "%s RSS beyond registered memory flat: %lld kB after %lld s (warm-up), %lld kB at the end; averages %lld (middle third), %lld (last third); RSS %lld, %lld, %lld kB",
	      proc_name[p], base, sample[w].t_s, last, mid, end,
	      sample[0].p[p].rss, sample[w].p[p].rss, sample[n - 1].p[p].rss);
}

/*
 * Registered memory, at every sample: the long-lived connections only
 * (their count of queue pairs), nothing registered outside them (every
 * churn and raw connection of the run left nothing behind), and in them
 * exactly their set-up registrations plus a bounded cache (see
 * CACHE_PER_CALL).  Exact, not "flat": the cache may grow, within its
 * bound, at any time.
 */
static void judge_reg(unsigned int p, unsigned int n)
{
	unsigned int i, off = 0, first = n, most = 0;
	long long orphan = 0;
	const char *why = "";

	for (i = 0; i < n; i++) {
		const struct psample *s = &sample[i].p[p];

		if (s->c.most > most)
			most = s->c.most;
		if (s->orphan > orphan)
			orphan = s->orphan;
		if (sample[i].quiet && s->qps == want_qps[p] && !s->orphan &&
		    !s->c.bad[0])
			continue;
		off++;
		if (first == n) {
			first = i;
			why = s->c.bad[0] ? s->c.bad : "";
		}
	}
	CHECK(!off,
	      "%s registered memory at rest: the same %d connection(s) throughout, nothing outside them (most seen: %lld kB), their %lld kB of set-up registrations unchanged, their cache %lld kB after the warm-up, %lld kB at the end, at most %u buffers of one size on one connection (bound: %u per call it carries at once)",
	      proc_name[p], want_qps[p], orphan,
	      census_bytes(&set_up[p], false) / 1024, sample[n / 5].p[p].cache,
	      sample[n - 1].p[p].cache, most, CACHE_PER_CALL);
	if (off)
		NOTE("%s: %u sample(s) off, the first %u: %s%d QPs, %lld kB outside them; %s",
		     proc_name[p], off, first,
		     sample[first].quiet ? "" : "not at rest, ",
		     sample[first].p[p].qps, sample[first].p[p].orphan, why);
}

/* fds: with the same live connections and nothing in flight, a process
 * holds exactly the fds it held at the end of the warm-up. */
static void judge_fds(unsigned int p, unsigned int n, unsigned int w)
{
	unsigned int i, off = 0, first = n;

	for (i = w; i < n; i++)
		if (sample[i].p[p].fds != sample[w].p[p].fds) {
			off++;
			if (first == n)
				first = i;
		}
	CHECK(sample[w].p[p].fds > 0 && !off,
	      "%s fds: %d at sample 0, %d at every sample from the warm-up on (%d at the end)",
	      proc_name[p], sample[0].p[p].fds, sample[w].p[p].fds,
	      sample[n - 1].p[p].fds);
	if (off)
		NOTE("%s: fds differ at %u sample(s), the first %u (%d)",
		     proc_name[p], off, first, sample[first].p[p].fds);
}

/*
 * Flatness needs a warm-up and thirds: 6 samples at least (a run cut short
 * has failed already).  Under AddressSanitizer freed memory waits in its
 * quarantine, so RSS says nothing; LeakSanitizer judges every process at
 * its exit instead (the servers' exit status, this program's).
 */
static void judge(unsigned int n)
{
	unsigned int w = n / 5, p;

	for (p = 0; p < NPROC; p++) {
		if (n >= 6)
			judge_rss(p, n, w);
		judge_reg(p, n);
		judge_fds(p, n, w);
	}
}

/* ---- Main --------------------------------------------------------------- */

/* The domain of the only connection the client has, or -1. */
static long shared_domain(void)
{
	struct census *c = &now[P_CLIENT];

	c->pid = getpid();
	return census_take(c, 1) && c->npd == 1 ? c->pdn[0] : -1;
}

int main(int argc, char **argv)
{
	static const char *const rargs[] = { "-c", "32", "--max-read",
					     "20000000", NULL };
	const char *tun = getenv("VM_SOAK_TUNABLES");
	/* glibc's malloc as it comes, unless asked (see ALLOCATOR). */
	const struct td_env env[] = {
		{ "RPCRDMA_ULB_CONF", DDPT_CONF },
		{ "GLIBC_TUNABLES", tun }, /* NULL: unset */
	};
	struct ts_server *wd[TD_WATCHDOG_MAX] = { &srv, &dsrv };
	const char *m = getenv("VM_SOAK_MINUTES"), *iv;
	unsigned int minutes = m ? (unsigned int)atoi(m) : 30;
	unsigned int interval = 60, n, i, planned;
	struct worker w[NWORKERS];
	CLIENT *shared;
	long shared_pd;
	int64_t t0;
	bool ok;

	if (argc > 1)
		minutes = (unsigned int)atoi(argv[1]);
	iv = getenv("VM_SOAK_INTERVAL");
	if (iv && atoi(iv) > 0)
		interval = (unsigned int)atoi(iv);
	n = planned = minutes * 60 / interval + 1;
	if (!minutes || n > MAX_SAMPLES || n < 6) {
		fprintf(stderr,
			"usage: t_soak [MINUTES]  (6 to %u samples of VM_SOAK_INTERVAL s)\n",
			MAX_SAMPLES);
		return 2;
	}
	td_env_ensure(argv, env, 2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ts_have_rdma())
		return 77;
	/* The run, up to 20 s per sample to come to rest (a second or two is
	 * usual), and one sample that cannot (300 s), which ends the run.
	 * soak.am's VM timeout allows for MAX_SAMPLES. */
	td_watchdog(minutes * 60 + n * 20 + 600, wd, 2);
	gate_init();
	CHECK(ts_server_start(&srv, t_addr4(), rargs) == 0 &&
		      td_server_start(&dsrv, "ddpt_server", t_addr4(),
				      DDPT_CONF) == 0,
	      "rtest_server on port %u, ddpt_server on port %u", srv.port,
	      dsrv.port);
	procs[P_RTEST] = srv.pid;
	procs[P_DDPT] = dsrv.pid;
	procs[P_CLIENT] = getpid();
	shared = client(&srv, RTEST_PROG);
	shared_pd = shared_domain();
	CHECK(shared != NULL && shared_pd >= 0,
	      "the steady threads' CLIENT (PD %ld)", shared_pd);
	for (i = 0; i < NWORKERS; i++) {
		w[i] = (struct worker){ .rng = 2654435761u * (i + 1) };
		if (i < NSTEADY) {
			w[i].cl = shared;
		} else if (i < NSTEADY + NDDP) {
			w[i].ddp = true;
			w[i].cl = client(&dsrv, DDPT_PROG);
			CHECK(w[i].cl != NULL, "a DDP thread's CLIENT");
		}
	}
	ok = !t_failures && record_set_up(shared_pd);
	CHECK(ok,
	      "set up: rtest_server %d connection(s), %lld kB registered; ddpt_server %d, %lld kB; client %d, %lld kB",
	      set_up[P_RTEST].qps, census_bytes(&set_up[P_RTEST], false) / 1024,
	      set_up[P_DDPT].qps, census_bytes(&set_up[P_DDPT], false) / 1024,
	      set_up[P_CLIENT].qps,
	      census_bytes(&set_up[P_CLIENT], false) / 1024);
	if (t_failures)
		return 1;
	for (i = 0; i < NWORKERS; i++)
		pthread_create(&w[i].th, NULL,
			       i < NSTEADY + NDDP	   ? steady_run :
			       i < NSTEADY + NDDP + NCHURN ? churn_run :
							     raw_run,
			       &w[i]);
	NOTE("%u minutes, a sample every %u s, each at rest: every thread between two calls, churn CLIENTs and raw connections closed, the servers down to %d and %d connection(s)",
	     minutes, interval, want_qps[P_RTEST], want_qps[P_DDPT]);
	NOTE("sample, s | rtest_server: RSS, registered, of which cached (kB), MRs, QPs, fds | ddpt_server: the same | client: the same | s to come to rest, calls, CLIENTs made and destroyed, raw drops, failures");
	t0 = tu_now_ms();
	for (i = 0; i < n; i++) {
		if (i)
			sleep(interval);
		take(i, t0);
		if (!sample[i].quiet) {
			NOTE("sample %u: no rest within the limits; the run ends here",
			     i);
			n = i + 1;
		}
	}
	atomic_store(&stopping, true);
	gate_open();
	for (i = 0; i < NWORKERS; i++)
		pthread_join(w[i].th, NULL);
	for (i = NSTEADY; i < NSTEADY + NDDP; i++)
		clnt_destroy(w[i].cl);
	clnt_destroy(shared);
	CHECK(atomic_load(&nbad) == 0,
	      "%llu calls, %llu CLIENTs made and destroyed, %llu raw connections ended mid-call: %llu failures",
	      (unsigned long long)atomic_load(&ncalls),
	      (unsigned long long)atomic_load(&nchurn),
	      (unsigned long long)atomic_load(&ndrops),
	      (unsigned long long)atomic_load(&nbad));
	CHECK(n == planned, "%u of %u samples taken", n, planned);
	judge(n);
	CHECK(ts_server_stop(&srv) == 0 && ts_server_stop(&dsrv) == 0,
	      "both servers exit 0 on SIGTERM");
	return tu_done();
}
