/*
 * nfs3d_pool.c - rpcrdma-nfs3d's worker threads (-t THREADS): READ, WRITE
 * and COMMIT are taken off their connection with svc_rdma_detach(3) and
 * served by rpcgen's dispatcher (nfs_program_3) on a worker, so that
 * svc_run's thread goes on receiving - and pulling the next WRITE's data
 * by RDMA Read - while the file I/O, the decoding of the data and the
 * reply run elsewhere.
 *
 * Only these three: they open files as the server, check the caller's
 * permission themselves (nfs3d_proc.c) and touch nothing shared but the
 * export's constant description.  The others run as the caller through
 * the one identity thread of nfs3d_fs.c (nfs3d_as_caller), which serves
 * one operation at a time, and stay on svc_run's thread.  A worker never
 * changes its credentials: it writes to the verbs descriptors when it
 * replies (see nfs3d_as_caller).
 *
 * A READ is decoded first, on svc_run's thread: one of less than
 * POOL_MIN_READ octets is served there (handing it over costs more than
 * its I/O: 4 KiB random reads were measured slower on workers), a larger
 * one goes to a worker with its decoded arguments.
 *
 * The svc_req the dispatch routine gets and what it points to live on
 * svc_getreq_common's stack: a job carries copies (the AUTH_SYS
 * parameters with their groups and machine name, the raw credential).
 * The queue is bounded: when it is full, or the call cannot be detached
 * (RPCSEC_GSS, no memory), the call is served inline as without workers.
 * At the end the workers answer what is queued, then are joined.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "nfs3d.h"

/* Smallest READ handed to a worker. */
#define POOL_MIN_READ (64u * 1024)

/* libtirpc's AUTH_SYS limits (NGRPS, MAX_MACHINE_NAME). */
#define JOB_MAX_GIDS 16
#define JOB_MAX_HOST 255

struct job {
	struct job *next;
	struct svc_req rq; /* rq_xprt: the detached SVCXPRT */
	struct authunix_parms unix_cred;
	gid_t gids[JOB_MAX_GIDS];
	char host[JOB_MAX_HOST + 1];
	char cred_body[MAX_AUTH_BYTES];
	bool decoded; /* a READ whose arguments are read_args */
	READ3args read_args;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct job *head, *tail;
	unsigned int queued, queue_max;
	bool stopping;
	pthread_t *threads;
	unsigned int nthreads;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static bool detachable(rpcproc_t proc)
{
	return proc == NFSPROC3_READ || proc == NFSPROC3_WRITE ||
	       proc == NFSPROC3_COMMIT;
}

/* What rq points into the caller's stack, copied into job. */
static void job_copy_req(struct job *job, const struct svc_req *rq)
{
	const struct authunix_parms *p = (const void *)rq->rq_clntcred;
	u_int len = rq->rq_cred.oa_length;

	job->rq = *rq;
	if (len > sizeof(job->cred_body))
		len = sizeof(job->cred_body);
	if (len && rq->rq_cred.oa_base)
		memcpy(job->cred_body, rq->rq_cred.oa_base, len);
	job->rq.rq_cred.oa_base = job->cred_body;
	job->rq.rq_cred.oa_length = len;
	job->rq.rq_clntcred = NULL;
	if (rq->rq_cred.oa_flavor != AUTH_SYS || !p)
		return;
	job->unix_cred = *p;
	if (job->unix_cred.aup_len > JOB_MAX_GIDS)
		job->unix_cred.aup_len = JOB_MAX_GIDS;
	memcpy(job->gids, p->aup_gids,
	       job->unix_cred.aup_len * sizeof(job->gids[0]));
	job->unix_cred.aup_gids = job->gids;
	snprintf(job->host, sizeof(job->host), "%s",
		 p->aup_machname ? p->aup_machname : "");
	job->unix_cred.aup_machname = job->host;
	job->rq.rq_clntcred = (caddr_t)&job->unix_cred;
}

static struct job *pop(void)
{
	struct job *job;

	pthread_mutex_lock(&pool.lock);
	while (!pool.head && !pool.stopping)
		pthread_cond_wait(&pool.cv, &pool.lock);
	job = pool.head;
	if (job) {
		pool.head = job->next;
		if (!pool.head)
			pool.tail = NULL;
		pool.queued--;
	}
	pthread_mutex_unlock(&pool.lock);
	return job;
}

/* A READ whose arguments are decoded, as rpcgen's dispatcher goes on. */
static void serve_read(struct svc_req *rq, SVCXPRT *xprt, READ3args *args)
{
	READ3res res;

	if (nfsproc3_read_3_svc(args, &res, rq) &&
	    !svc_sendreply(xprt, (xdrproc_t)xdr_READ3res, (char *)&res))
		svcerr_systemerr(xprt);
	svc_freeargs(xprt, (xdrproc_t)xdr_READ3args, (char *)args);
	nfs_program_3_freeresult(xprt, (xdrproc_t)xdr_READ3res, (char *)&res);
}

/* Until stopped and the queue is empty: every queued call is answered. */
static void *worker(void *unused)
{
	struct job *job;

	while ((job = pop())) {
		if (job->decoded)
			serve_read(&job->rq, job->rq.rq_xprt, &job->read_args);
		else
			nfs_program_3(&job->rq, job->rq.rq_xprt);
		svc_destroy(job->rq.rq_xprt);
		free(job);
	}
	return NULL;
}

/* A READ decoded into job: false if it is answered already (GARBAGE_ARGS,
 * or small enough to serve here). */
static bool read_big(struct job *job, struct svc_req *rq, SVCXPRT *xprt)
{
	if (!svc_getargs(xprt, (xdrproc_t)xdr_READ3args,
			 (char *)&job->read_args)) {
		svcerr_decode(xprt);
		return false;
	}
	if (job->read_args.count < POOL_MIN_READ) {
		serve_read(rq, xprt, &job->read_args);
		return false;
	}
	job->decoded = true;
	return true;
}

static bool queue_full(void)
{
	bool full;

	pthread_mutex_lock(&pool.lock);
	full = pool.queued >= pool.queue_max;
	pthread_mutex_unlock(&pool.lock);
	return full;
}

bool nfs3d_pool_submit(struct svc_req *rq, SVCXPRT *xprt)
{
	struct job *job;
	SVCXPRT *dx;

	/* Only svc_run's thread adds: the count can only fall meanwhile. */
	if (!pool.nthreads || !detachable(rq->rq_proc) || queue_full())
		return false;
	job = calloc(1, sizeof(*job));
	if (!job)
		return false;
	if (rq->rq_proc == NFSPROC3_READ && !read_big(job, rq, xprt)) {
		free(job);
		return true;
	}
	dx = svc_rdma_detach(xprt);
	if (!dx && job->decoded) { /* served here after all */
		serve_read(rq, xprt, &job->read_args);
		free(job);
		return true;
	}
	if (!dx) {
		free(job);
		return false;
	}
	job_copy_req(job, rq);
	job->rq.rq_xprt = dx;
	pthread_mutex_lock(&pool.lock);
	if (pool.tail)
		pool.tail->next = job;
	else
		pool.head = job;
	pool.tail = job;
	pool.queued++;
	pthread_cond_signal(&pool.cv);
	pthread_mutex_unlock(&pool.lock);
	return true;
}

bool nfs3d_pool_start(unsigned int threads, unsigned int queue_max)
{
	sigset_t all, old;
	unsigned int i;
	int err = 0;

	if (threads < 2)
		return true; /* served inline, on svc_run's thread */
	pool.threads = calloc(threads, sizeof(*pool.threads));
	if (!pool.threads) {
		fprintf(stderr, "rpcrdma-nfs3d: out of memory\n");
		return false;
	}
	pool.queue_max = queue_max;
	/* signals stay with the main thread's signalfd */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < threads && !err; i++) {
		err = pthread_create(&pool.threads[i], NULL, worker, NULL);
		if (!err)
			pool.nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "rpcrdma-nfs3d: cannot start a thread: %s\n",
			strerror(err));
		nfs3d_pool_stop();
		return false;
	}
	return true;
}

void nfs3d_pool_stop(void)
{
	unsigned int i;

	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.lock);
	for (i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);
	free(pool.threads);
	pool.threads = NULL;
	pool.nthreads = 0;
}
