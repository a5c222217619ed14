/*
 * bct_server.c - the server of the backward-direction VM tests (t_bc.c,
 * RFC 8167): BCT_PROG (tests/rpc/bct.x) over RPC-over-RDMA, which calls
 * its caller back on the caller's own connection with BCTCB_PROG
 * (tests/rpc/bctcb.x) through clnt_rdma_bc_create(rq->rq_xprt), and says
 * what those backward calls returned.
 *
 * BCT_PING calls back from the dispatch function itself, so svc_run's
 * thread is the one waiting; BCT_START does the same from threads of its
 * own and answers at once, so forward calls go on being served meanwhile
 * (BCT_RESULT collects the outcome).  A job keeps its backward CLIENT, and
 * with it the connection, until its threads end: a client that goes away
 * meanwhile makes the remaining calls fail (RPC_CANTSEND/RPC_CANTRECV)
 * instead of waiting out their timeout.
 *
 * usage: bct_server [-4|-6] [-a ADDR] [-p PORT] [-c CREDITS]
 * (prints "listening on ADDR port N"; SIGTERM: clean exit 0, ddp_serve.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "bct.h"
#include "bctcb.h"
#include "tests/vm/ddp_serve.h"

#define MAX_JOBS    64
#define MAX_THREADS 16

void bct_prog_1(struct svc_req *rq, SVCXPRT *x);

struct job {
	bct_ping_args args;
	CLIENT *cl; /* the backward CLIENT, shared by the threads */
	pthread_mutex_t lock;
	bct_ping_res res; /* msg: a buffer of its own */
	char msg[256];
	unsigned int running; /* threads not yet finished */
	int64_t start_ms;
	bool failed_once;
};

static struct job jobs[MAX_JOBS];
static unsigned int njobs;
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- One backward call --------------------------------------------------- */

static bool data_is(const bctcb_data *d, uint32_t len, uint32_t seed)
{
	uint8_t *want;
	bool same;

	if (d->bctcb_data_len != len)
		return false;
	want = malloc(len ? len : 1);
	if (!want)
		return false;
	ddp_pattern(want, len, seed);
	same = !memcmp(want, d->bctcb_data_val, len);
	free(want);
	return same;
}

/* Call number i of a job: true if it gave what was expected; *st its
 * status. */
static bool call_once(struct job *j, unsigned int i, enum clnt_stat *st)
{
	const bct_ping_args *a = &j->args;
	uint32_t seed = (a->seed + i) & 0xff;
	bctcb_data arg = { 0, NULL }, res = { 0, NULL };
	bool ok = false;

	switch (a->proc) {
	case BCTCB_ECHO:
		arg.bctcb_data_len = a->len;
		arg.bctcb_data_val = malloc(a->len ? a->len : 1);
		if (!arg.bctcb_data_val) {
			*st = RPC_SYSTEMERROR;
			return false;
		}
		ddp_pattern(arg.bctcb_data_val, a->len, seed);
		*st = bctcb_echo_1(&arg, &res, j->cl);
		ok = *st == RPC_SUCCESS && data_is(&res, a->len, seed);
		free(arg.bctcb_data_val);
		break;
	case BCTCB_FILL:
		*st = bctcb_fill_1((u_int *)&a->len, &res, j->cl);
		ok = *st == RPC_SUCCESS && data_is(&res, a->len, 7);
		break;
	case BCTCB_HANG:
		*st = bctcb_hang_1((u_int *)&a->hang_ms, NULL, j->cl);
		ok = *st == RPC_SUCCESS;
		break;
	default:
		*st = bctcb_null_1(NULL, NULL, j->cl);
		ok = *st == RPC_SUCCESS;
		break;
	}
	if (*st == RPC_SUCCESS)
		clnt_freeres(j->cl, (xdrproc_t)xdr_bctcb_data, (caddr_t)&res);
	return ok;
}

static void note_result(struct job *j, bool ok, enum clnt_stat st)
{
	uint32_t xid = 0;

	pthread_mutex_lock(&j->lock);
	if (!j->res.first_xid && clnt_control(j->cl, CLGET_XID, &xid))
		j->res.first_xid = xid;
	if (ok)
		j->res.ok++;
	else if (st == RPC_SUCCESS)
		j->res.bad_data++;
	else
		j->res.failed++;
	if (!ok && !j->failed_once) {
		j->failed_once = true;
		j->res.first_status = (int)st;
		if (st == RPC_SUCCESS)
			snprintf(j->msg, sizeof(j->msg), "unexpected data");
		else if (!clnt_control(j->cl, CLGET_RDMA_ERRMSG, j->msg) ||
			 !j->msg[0])
			snprintf(j->msg, sizeof(j->msg), "%s",
				 clnt_sperrno(st));
	}
	j->res.elapsed_ms = (unsigned int)(now_ms() - j->start_ms);
	pthread_mutex_unlock(&j->lock);
}

/* A thread of j ends, with unmade calls that count as failed. */
static void thread_end(struct job *j, unsigned int unmade)
{
	pthread_mutex_lock(&j->lock);
	j->res.failed += unmade;
	if (--j->running == 0) {
		j->res.done = 1;
		clnt_destroy(j->cl); /* lets the connection go */
		j->cl = NULL;
	}
	pthread_mutex_unlock(&j->lock);
}

static void *job_thread(void *arg)
{
	struct job *j = arg;
	enum clnt_stat st;
	unsigned int i;
	bool ok;

	for (i = 0; i < j->args.count; i++) {
		ok = call_once(j, i, &st);
		note_result(j, ok, st);
		/* the client is gone: a real server forgets it */
		if (st == RPC_CANTSEND || st == RPC_CANTRECV)
			break;
	}
	thread_end(j, j->args.count - (i < j->args.count ? i + 1 : i));
	return NULL;
}

/* ---- Jobs ---------------------------------------------------------------- */

static struct job *job_new(const bct_ping_args *a, SVCXPRT *x, unsigned int *id)
{
	struct timeval tv;
	struct job *j;

	pthread_mutex_lock(&jobs_lock);
	if (njobs == MAX_JOBS) {
		pthread_mutex_unlock(&jobs_lock);
		return NULL;
	}
	*id = njobs;
	j = &jobs[njobs++];
	pthread_mutex_unlock(&jobs_lock);
	memset(j, 0, sizeof(*j));
	pthread_mutex_init(&j->lock, NULL);
	j->args = *a;
	if (j->args.threads == 0)
		j->args.threads = 1;
	if (j->args.threads > MAX_THREADS)
		j->args.threads = MAX_THREADS;
	j->res.msg = j->msg;
	j->cl = clnt_rdma_bc_create(x, BCTCB_PROG, BCTCB_VERS);
	if (!j->cl) {
		snprintf(j->msg, sizeof(j->msg), "clnt_rdma_bc_create: %s",
			 clnt_spcreateerror("bc"));
		j->res.done = 1;
		j->res.first_status = (int)rpc_createerr.cf_stat;
		return j;
	}
	tv.tv_sec = a->timeout_ms / 1000;
	tv.tv_usec = (a->timeout_ms % 1000) * 1000;
	clnt_control(j->cl, CLSET_TIMEOUT, &tv);
	if (a->xid)
		clnt_control(j->cl, CLSET_XID, (char *)&a->xid);
	clnt_control(j->cl, CLGET_RDMA_VERSION, &j->res.rdma_version);
	return j;
}

/* Run job j's threads; wait for them when sync. */
static void job_run(struct job *j, bool sync)
{
	pthread_t t[MAX_THREADS];
	bool started[MAX_THREADS];
	unsigned int i, n = j->args.threads;

	if (!j->cl)
		return;
	j->running = n;
	j->start_ms = now_ms();
	for (i = 0; i < n; i++) {
		started[i] = !pthread_create(&t[i], NULL, job_thread, j);
		if (!started[i])
			thread_end(j, j->args.count);
		else if (!sync)
			pthread_detach(t[i]);
	}
	for (i = 0; sync && i < n; i++)
		if (started[i])
			pthread_join(t[i], NULL);
}

static void *delayed_start(void *arg)
{
	struct job *j = arg;
	struct timespec ts = { j->args.delay_ms / 1000,
			       (j->args.delay_ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	job_run(j, false);
	return NULL;
}

static void res_copy(bct_ping_res *out, struct job *j)
{
	pthread_mutex_lock(&j->lock);
	*out = j->res;
	out->msg = strdup(j->msg);
	pthread_mutex_unlock(&j->lock);
}

/* ---- Procedures ---------------------------------------------------------- */

bool_t bct_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t bct_echo_1_svc(bct_data *arg, bct_data *res, struct svc_req *rq)
{
	*res = *arg; /* the argument's memory becomes the result's */
	arg->bct_data_len = 0;
	arg->bct_data_val = NULL;
	return TRUE;
}

bool_t bct_ping_1_svc(bct_ping_args *arg, bct_ping_res *res, struct svc_req *rq)
{
	unsigned int id;
	struct job *j = job_new(arg, rq->rq_xprt, &id);

	if (!j) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	job_run(j, true);
	res_copy(res, j);
	return TRUE;
}

bool_t bct_start_1_svc(bct_ping_args *arg, u_int *res, struct svc_req *rq)
{
	struct job *j = job_new(arg, rq->rq_xprt, res);
	pthread_t t;

	if (!j) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	if (!j->cl)
		return TRUE;
	if (!arg->delay_ms) {
		job_run(j, false);
		return TRUE;
	}
	j->running = 1; /* until delayed_start runs it */
	if (pthread_create(&t, NULL, delayed_start, j)) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	pthread_detach(t);
	return TRUE;
}

bool_t bct_result_1_svc(u_int *id, bct_ping_res *res, struct svc_req *rq)
{
	if (*id >= njobs) {
		svcerr_decode(rq->rq_xprt);
		return FALSE;
	}
	res_copy(res, &jobs[*id]);
	return TRUE;
}

bool_t bct_stats_1_svc(void *arg, bct_stats *res, struct svc_req *rq)
{
	struct rpcrdma_svc_stats st;

	memset(&st, 0, sizeof(st));
	if (!SVC_CONTROL(rq->rq_xprt, SVCGET_RDMA_STATS, &st)) {
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	res->bc_calls = st.bc_calls;
	res->bc_replies = st.bc_replies;
	res->bc_timeouts = st.bc_timeouts;
	res->requests = st.requests;
	return TRUE;
}

int bct_prog_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

int main(int argc, char **argv)
{
	return ddp_serve(argc, argv, "bct_server", BCT_PROG, BCT_VERS,
			 bct_prog_1);
}
