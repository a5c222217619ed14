/*
 * t_detach.c - svc_rdma_detach(3) in the VM ("several requests
 * in parallel"): one process holds a server thread (libtirpc's loop over an
 * svc_rdma_create() listener and a TCP listener, NFSv3 of
 * examples/nfs3d/nfs3_prot.x), worker threads that serve the detached
 * WRITEs, and the clients.
 *
 * The server detaches every WRITE and queues it; a worker decodes the
 * arguments (svc_getargs on the detached SVCXPRT, Read chunk included),
 * waits as long as the offset's low 32 bits say (ms), and answers with the
 * data's length and its FNV-1a hash in the verifier, so the client checks
 * the data the worker decoded.  The offset's high 32 bits name the call.
 *
 * Checks: threads of one CLIENT (one connection) whose WRITEs are served
 * at the same time and answered out of order with the right data; bulk
 * data in Read chunks decoded on the worker (V1-DDP-1, V1-RC-4); a
 * detached call whose connection the client closed gets FALSE from
 * svc_sendreply and is destroyed; the same when the listener is destroyed
 * meanwhile; a call destroyed unanswered is dropped and the pull budget
 * it held goes to the next; a client address whose every connection has a
 * call in service is refused one more (max_conns_per_peer), and served
 * again once they are idle; svc_rdma_detach() refuses a TCP transport, a
 * call taken already and a detached transport.  Under ASan the end of each shows
 * as a leak or a use after free.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netconfig.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "nfs3_prot.h"
#include "tests/vm/t_util.h"

#define NWORKERS 4
#define MAXTAG	 10
#define KiB	 1024u

/* Tags of the calls (the offset's high word). */
enum {
	TAG_SLOW = 1,
	TAG_FAST,
	TAG_MID,
	TAG_CLOSED,
	TAG_LSN_GONE,
	TAG_DROP,
	TAG_AFTER_DROP,
	TAG_HOLD
};

/* The listener's pull budget (max_read_bytes): two of the bulk WRITEs of
 * case_parallel fit, the dropped one and the next do not. */
#define PULL_BUDGET (600 * KiB)

/* The listener's max_conns_per_peer: case_busy_peer keeps each of them
 * busy (every client here has the same address). */
#define PER_PEER 2

/* ---- Server ------------------------------------------------------------- */

struct job {
	struct job *next;
	SVCXPRT *dx;
	unsigned int uid; /* copied from the caller's stack (rq_clntcred) */
	bool unix_cred;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static struct job *q_head;
static bool q_stop;

static atomic_bool loop_stop;
static atomic_int in_service, max_in_service;
static atomic_int destroyed;
static atomic_int tcp_detach = -1; /* 1: svc_rdma_detach() gave NULL */
static atomic_int null_checks = -1;
static atomic_bool closed_done, lsn_gone, hold_done;
/* per tag: svc_sendreply's result (0/1, -1 not yet), the uid seen */
static atomic_int reply_ok[MAXTAG];
static atomic_uint uid_seen[MAXTAG];
static atomic_uint active_at_reply[MAXTAG];

static uint64_t fnv1a(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t h = 1469598103934665603ull;

	while (len--)
		h = (h ^ *p++) * 1099511628211ull;
	return h;
}

static void queue_push(struct job *job)
{
	pthread_mutex_lock(&q_lock);
	job->next = q_head;
	q_head = job;
	pthread_cond_signal(&q_cv);
	pthread_mutex_unlock(&q_lock);
}

static struct job *queue_pop(void)
{
	struct job *job;

	pthread_mutex_lock(&q_lock);
	while (!q_head && !q_stop)
		pthread_cond_wait(&q_cv, &q_lock);
	job = q_head;
	if (job)
		q_head = job->next;
	pthread_mutex_unlock(&q_lock);
	return job;
}

/* Wait until flag is set or 15 s pass. */
static void wait_flag(atomic_bool *flag)
{
	int64_t deadline = tu_now_ms() + 15000;

	while (!atomic_load(flag) && tu_now_ms() < deadline)
		usleep(10000);
}

/* Wait until the call tagged tag was answered or 15 s pass. */
static void wait_replied(uint32_t tag)
{
	int64_t deadline = tu_now_ms() + 15000;

	while (atomic_load(&reply_ok[tag]) < 0 && tu_now_ms() < deadline)
		usleep(10000);
}

/* The connections of the listener still alive, through the detached
 * handle (the counters are the connection's server's). */
static unsigned int conns_active(SVCXPRT *dx)
{
	struct rpcrdma_svc_stats st;

	if (!SVC_CONTROL(dx, SVCGET_RDMA_STATS, &st))
		return ~0u;
	return st.conns_active;
}

static void wait_conns(SVCXPRT *dx, unsigned int n)
{
	int64_t deadline = tu_now_ms() + 15000;

	while (conns_active(dx) != n && tu_now_ms() < deadline)
		usleep(10000);
}

static void serve_write(struct job *job)
{
	WRITE3args args;
	WRITE3res res;
	uint32_t tag, delay;
	uint64_t h;
	int now;

	memset(&args, 0, sizeof(args));
	if (!svc_getargs(job->dx, (xdrproc_t)xdr_WRITE3args, &args)) {
		svcerr_decode(job->dx);
		return;
	}
	now = atomic_fetch_add(&in_service, 1) + 1;
	for (int m = atomic_load(&max_in_service); now > m;)
		if (atomic_compare_exchange_weak(&max_in_service, &m, now))
			break;
	tag = (uint32_t)(args.offset >> 32) % MAXTAG;
	delay = (uint32_t)args.offset;
	if (tag == TAG_CLOSED) { /* the client gave up and closed */
		wait_flag(&closed_done);
		wait_conns(job->dx, 0);
	} else if (tag == TAG_LSN_GONE) {
		wait_flag(&lsn_gone);
	} else if (tag == TAG_HOLD) { /* in service until the test says */
		wait_flag(&hold_done);
	} else if (tag == TAG_DROP) { /* never answered */
		usleep(300 * 1000);
		atomic_fetch_sub(&in_service, 1);
		svc_freeargs(job->dx, (xdrproc_t)xdr_WRITE3args, &args);
		return;
	} else if (tag == TAG_SLOW) { /* first in, answered last */
		wait_replied(TAG_FAST);
		wait_replied(TAG_MID);
		usleep(300 * 1000); /* their clients wake first */
	} else {
		usleep((delay < 5000 ? delay : 5000) * 1000u);
	}
	h = fnv1a(args.data.data_val, args.data.data_len);
	memset(&res, 0, sizeof(res));
	res.status = NFS3_OK;
	res.WRITE3res_u.resok.count = args.data.data_len;
	res.WRITE3res_u.resok.committed = FILE_SYNC;
	memcpy(res.WRITE3res_u.resok.verf, &h, sizeof(h));
	uid_seen[tag] = job->unix_cred ? job->uid : ~0u;
	active_at_reply[tag] = conns_active(job->dx);
	atomic_fetch_sub(&in_service, 1);
	reply_ok[tag] =
		svc_sendreply(job->dx, (xdrproc_t)xdr_WRITE3res, &res) ? 1 : 0;
	svc_freeargs(job->dx, (xdrproc_t)xdr_WRITE3args, &args);
}

static void *worker(void *arg)
{
	struct job *job;

	while ((job = queue_pop())) {
		serve_write(job);
		svc_destroy(job->dx);
		free(job);
		atomic_fetch_add(&destroyed, 1);
	}
	return NULL;
}

/* NULL over RDMA: the call is detached once; asking again, or asking the
 * detached handle, gives NULL; the reply goes out on the handle. */
static void null_rdma(SVCXPRT *xprt)
{
	SVCXPRT *dx = svc_rdma_detach(xprt);
	int ok = dx != NULL;

	ok += svc_rdma_detach(xprt) == NULL;
	ok += dx && svc_rdma_detach(dx) == NULL;
	null_checks = ok;
	if (!dx) {
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		return;
	}
	svc_sendreply(dx, (xdrproc_t)xdr_void, NULL);
	svc_destroy(dx);
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct job *job;

	if (rq->rq_proc == NFSPROC3_NULL) {
		if (strcmp(xprt->xp_netid, "tcp") == 0) {
			tcp_detach = svc_rdma_detach(xprt) == NULL;
			svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		} else {
			null_rdma(xprt);
		}
		return;
	}
	if (rq->rq_proc != NFSPROC3_WRITE) {
		svcerr_noproc(xprt);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (job)
		job->dx = svc_rdma_detach(xprt);
	if (!job || !job->dx) {
		free(job);
		svcerr_systemerr(xprt);
		return;
	}
	/* rq and what it points to are on svc_getreq_common's stack */
	job->unix_cred = rq->rq_cred.oa_flavor == AUTH_SYS;
	if (job->unix_cred)
		job->uid = ((struct authunix_parms *)rq->rq_clntcred)->aup_uid;
	queue_push(job);
}

/* libtirpc's loop, with a way out for the test (svc_exit() is not meant
 * for another thread). */
static void *server_loop(void *arg)
{
	struct pollfd fds[FD_SETSIZE];
	int n, r;

	while (!atomic_load(&loop_stop)) {
		n = svc_max_pollfd < FD_SETSIZE ? svc_max_pollfd : FD_SETSIZE;
		memcpy(fds, svc_pollfd, (size_t)n * sizeof(fds[0]));
		r = poll(fds, (nfds_t)n, 100);
		if (r > 0)
			svc_getreq_poll(fds, r);
	}
	return NULL;
}

/* ---- Clients ------------------------------------------------------------ */

static struct sockaddr_storage srv_addr;

static CLIENT *rdma_client(void)
{
	CLIENT *cl = clnt_rdma_create((struct sockaddr *)&srv_addr, NFS_PROGRAM,
				      NFS_V3, NULL);

	CHECK(cl != NULL, "NFSv3 CLIENT over rdma%s%s", cl ? "" : ": ",
	      cl ? "" : clnt_spcreateerror("clnt_rdma_create"));
	if (cl)
		cl->cl_auth = authunix_create_default();
	return cl;
}

static void client_free(CLIENT *cl)
{
	if (!cl)
		return;
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
}

struct wcall {
	CLIENT *cl;
	uint32_t tag, delay, len;
	int timeout_s;
	enum clnt_stat stat;
	bool data_ok; /* count and hash as sent */
	int64_t done_ms;
	pthread_t thr;
};

static void *wcall_run(void *arg)
{
	struct wcall *w = arg;
	struct timeval tv = { w->timeout_s, 0 };
	uint8_t *data = malloc(w->len);
	WRITE3args args;
	WRITE3res res;
	uint64_t h;

	memset(&args, 0, sizeof(args));
	memset(&res, 0, sizeof(res));
	if (!data) {
		w->stat = RPC_SYSTEMERROR;
		return NULL;
	}
	tu_fill(data, w->len, w->tag);
	h = fnv1a(data, w->len);
	args.offset = (uint64_t)w->tag << 32 | w->delay;
	args.count = w->len;
	args.stable = FILE_SYNC;
	args.data.data_len = w->len;
	args.data.data_val = (char *)data;
	w->stat = clnt_call(w->cl, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args,
			    (caddr_t)&args, (xdrproc_t)xdr_WRITE3res,
			    (caddr_t)&res, tv);
	w->done_ms = tu_now_ms();
	w->data_ok = w->stat == RPC_SUCCESS && res.status == NFS3_OK &&
		     res.WRITE3res_u.resok.count == w->len &&
		     memcmp(res.WRITE3res_u.resok.verf, &h, sizeof(h)) == 0;
	if (w->stat == RPC_SUCCESS)
		xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&res);
	free(data);
	return NULL;
}

static void wcall_start(struct wcall *w)
{
	if (pthread_create(&w->thr, NULL, wcall_run, w)) {
		w->stat = RPC_SYSTEMERROR;
		w->thr = 0;
	}
}

static void wcall_join(struct wcall *w)
{
	if (w->thr)
		pthread_join(w->thr, NULL);
}

static struct rpcrdma_svc_stats svc_stats(SVCXPRT *lsn)
{
	struct rpcrdma_svc_stats st;

	memset(&st, 0, sizeof(st));
	SVC_CONTROL(lsn, SVCGET_RDMA_STATS, &st);
	return st;
}

static enum clnt_stat null_call(CLIENT *cl, int timeout_s)
{
	struct timeval tv = { timeout_s, 0 };

	return clnt_call(cl, NFSPROC3_NULL, (xdrproc_t)xdr_void, NULL,
			 (xdrproc_t)xdr_void, NULL, tv);
}

static uint64_t read_chunks(SVCXPRT *lsn)
{
	return svc_stats(lsn).read_chunks;
}

static void wait_destroyed(int n)
{
	int64_t deadline = tu_now_ms() + 20000;

	while (atomic_load(&destroyed) < n && tu_now_ms() < deadline)
		usleep(10000);
}

/* ---- The cases ---------------------------------------------------------- */

/* Three threads of one CLIENT: the slow call is in service while the
 * others are answered; the bulk ones come in Read chunks. */
static void case_parallel(SVCXPRT *lsn)
{
	CLIENT *cl = rdma_client();
	struct wcall slow = { .cl = cl,
			      .tag = TAG_SLOW,
			      .delay = 0,
			      .len = 320 * KiB,
			      .timeout_s = 30 };
	struct wcall fast = { .cl = cl,
			      .tag = TAG_FAST,
			      .delay = 0,
			      .len = 256 * KiB,
			      .timeout_s = 30 };
	struct wcall mid = { .cl = cl,
			     .tag = TAG_MID,
			     .delay = 500,
			     .len = 1 * KiB,
			     .timeout_s = 30 };
	uint64_t rc0 = read_chunks(lsn);
	int64_t deadline;

	if (!cl)
		return;
	/* A new connection carries one call until the first reply brings
	 * the real grant (V1-CR-6): take it first. */
	CHECK(null_call(cl, 10) == RPC_SUCCESS,
	      "NULL first: the connection has its grant");
	wcall_start(&slow);
	deadline = tu_now_ms() + 15000;
	while (atomic_load(&in_service) < 1 && tu_now_ms() < deadline)
		usleep(5000);
	CHECK(atomic_load(&in_service) == 1,
	      "the slow WRITE is in service on a worker");
	wcall_start(&fast);
	wcall_start(&mid);
	wcall_join(&fast);
	wcall_join(&mid);
	wcall_join(&slow);
	CHECK(slow.stat == RPC_SUCCESS && slow.data_ok,
	      "slow WRITE (320 KiB): answered, count and hash of the data the "
	      "worker decoded (%s)",
	      clnt_sperrno(slow.stat));
	CHECK(fast.stat == RPC_SUCCESS && fast.data_ok,
	      "fast WRITE (256 KiB): answered, data right (%s)",
	      clnt_sperrno(fast.stat));
	CHECK(mid.stat == RPC_SUCCESS && mid.data_ok,
	      "inline WRITE (1 KiB): answered, data right (%s)",
	      clnt_sperrno(mid.stat));
	CHECK(fast.done_ms && slow.done_ms && fast.done_ms < mid.done_ms &&
		      mid.done_ms < slow.done_ms,
	      "answered out of order on one connection: the first call "
	      "last (fast, then +%lld ms inline, then +%lld ms slow)",
	      (long long)(mid.done_ms - fast.done_ms),
	      (long long)(slow.done_ms - fast.done_ms));
	CHECK(atomic_load(&max_in_service) >= 2,
	      "calls of one connection in service at once: %d",
	      atomic_load(&max_in_service));
	CHECK(read_chunks(lsn) - rc0 >= 2,
	      "the two bulk WRITEs came in Read chunks (%llu), decoded on "
	      "the workers (V1-DDP-1, V1-RC-4)",
	      (unsigned long long)(read_chunks(lsn) - rc0));
	CHECK(uid_seen[TAG_FAST] == getuid(),
	      "the AUTH_SYS uid copied for the worker: %u",
	      (unsigned int)uid_seen[TAG_FAST]);
	client_free(cl);
}

/* svc_tli_create() leaves xp_port unset: the bound socket says it. */
static uint16_t tcp_port(SVCXPRT *tx)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if (getsockname(tx->xp_fd, (struct sockaddr *)&sin, &len))
		return 0;
	return ntohs(sin.sin_port);
}

static uint64_t dropped(SVCXPRT *lsn)
{
	return svc_stats(lsn).dropped;
}

/*
 * A detached call destroyed unanswered: dropped (the client times out),
 * and the pull budget it held goes to the next WRITE, which waited for it
 * with nothing new on the connection to wake svc_run.
 */
static void case_drop(SVCXPRT *lsn)
{
	CLIENT *cl = rdma_client();
	struct wcall drop = {
		.cl = cl, .tag = TAG_DROP, .len = 512 * KiB, .timeout_s = 3
	};
	struct wcall next = { .cl = cl,
			      .tag = TAG_AFTER_DROP,
			      .len = 256 * KiB,
			      .timeout_s = 15 };
	uint64_t d0 = dropped(lsn);
	int64_t deadline, t0;

	if (!cl)
		return;
	CHECK(null_call(cl, 10) == RPC_SUCCESS,
	      "NULL first: the connection has its grant");
	wcall_start(&drop);
	deadline = tu_now_ms() + 15000;
	while (atomic_load(&in_service) < 1 && tu_now_ms() < deadline)
		usleep(5000);
	t0 = tu_now_ms();
	wcall_start(&next);
	wcall_join(&next);
	wcall_join(&drop);
	CHECK(drop.stat == RPC_TIMEDOUT && reply_ok[TAG_DROP] < 0,
	      "a detached call destroyed unanswered is dropped: the client "
	      "times out (%s)",
	      clnt_sperrno(drop.stat));
	CHECK(dropped(lsn) - d0 == 1, "... counted as dropped (%llu)",
	      (unsigned long long)(dropped(lsn) - d0));
	CHECK(next.stat == RPC_SUCCESS && next.data_ok &&
		      next.done_ms - t0 < 10000,
	      "the WRITE that waited for its pull budget is answered when "
	      "the dropped call ends, after %lld ms (%s)",
	      (long long)(next.done_ms - t0), clnt_sperrno(next.stat));
	client_free(cl);
}

/*
 * max_conns_per_peer when every connection of the address is busy:
 * each of PER_PEER CLIENTs has a WRITE detached and in
 * service, so none can be closed to make room, and one more connection
 * from the address is refused (counted), while the busy ones go on and are
 * answered in full.  Once they are idle, a new connection is served (the
 * least recently used one makes room).
 */
static void case_busy_peer(SVCXPRT *lsn)
{
	struct wcall held[PER_PEER];
	CLIENT *cl[PER_PEER] = { NULL }, *extra;
	struct rpcrdma_svc_stats s0, s1;
	int before = atomic_load(&destroyed);
	enum clnt_stat st = RPC_FAILED;
	int64_t deadline;
	int i, n = 0;

	for (i = 0; i < PER_PEER; i++) {
		cl[i] = rdma_client();
		if (!cl[i] || null_call(cl[i], 10) != RPC_SUCCESS)
			break;
		held[i] = (struct wcall){ .cl = cl[i],
					  .tag = TAG_HOLD,
					  .len = 4 * KiB,
					  .timeout_s = 30 };
		wcall_start(&held[i]);
		n++;
	}
	deadline = tu_now_ms() + 15000;
	while (atomic_load(&in_service) < n && tu_now_ms() < deadline)
		usleep(5000);
	CHECK(n == PER_PEER && atomic_load(&in_service) == PER_PEER,
	      "per-peer limit %d: as many connections, each with a WRITE "
	      "held in service (%d)",
	      PER_PEER, atomic_load(&in_service));
	s0 = svc_stats(lsn);
	extra = clnt_rdma_create((struct sockaddr *)&srv_addr, NFS_PROGRAM,
				 NFS_V3, NULL);
	if (extra)
		st = null_call(extra, 3);
	s1 = svc_stats(lsn);
	CHECK(st != RPC_SUCCESS && s1.conns_rejected > s0.conns_rejected &&
		      s1.conns_reaped == s0.conns_reaped,
	      "one more connection from the address is refused, none of the "
	      "busy ones closed for it (%s; %u refused, %u closed)",
	      extra ? clnt_sperrno(st) : "clnt_rdma_create failed",
	      s1.conns_rejected - s0.conns_rejected,
	      s1.conns_reaped - s0.conns_reaped);
	if (extra)
		clnt_destroy(extra);
	atomic_store(&hold_done, true);
	for (i = 0; i < n; i++) {
		wcall_join(&held[i]);
		CHECK(held[i].stat == RPC_SUCCESS && held[i].data_ok,
		      "held WRITE %d answered, data right (%s)", i,
		      clnt_sperrno(held[i].stat));
	}
	/* idle once the workers have let go of the calls */
	wait_destroyed(before + n);
	extra = rdma_client();
	st = extra ? null_call(extra, 10) : RPC_FAILED;
	CHECK(st == RPC_SUCCESS,
	      "once they are idle, a new connection from the address is "
	      "served (%s)",
	      clnt_sperrno(st));
	client_free(extra);
	for (i = 0; i < PER_PEER; i++)
		client_free(cl[i]);
}

/* NULL on a TCP transport: svc_rdma_detach() refuses it. */
static void case_tcp(SVCXPRT *tx)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct timeval tv = { 10, 0 };
	enum clnt_stat st = RPC_FAILED;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct netbuf nb = { sizeof(sin), sizeof(sin), &sin };
	CLIENT *cl = NULL;

	sin.sin_port = htons(tcp_port(tx));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
		cl = clnt_vc_create(fd, &nb, NFS_PROGRAM, NFS_V3, 0, 0);
	if (cl)
		st = clnt_call(cl, NFSPROC3_NULL, (xdrproc_t)xdr_void, NULL,
			       (xdrproc_t)xdr_void, NULL, tv);
	CHECK(st == RPC_SUCCESS && tcp_detach == 1,
	      "svc_rdma_detach() on a tcp SVCXPRT gives NULL; the call is "
	      "answered inline (%s)",
	      clnt_sperrno(st));
	if (cl)
		clnt_destroy(cl);
	if (fd >= 0)
		close(fd);
}

static void case_null(void)
{
	CLIENT *cl = rdma_client();
	enum clnt_stat st;

	if (!cl)
		return;
	st = null_call(cl, 10);
	CHECK(st == RPC_SUCCESS && null_checks == 3,
	      "NULL answered on its detached handle; a second detach and a "
	      "detach of the handle give NULL (%d of 3, %s)",
	      null_checks, clnt_sperrno(st));
	client_free(cl);
}

/* The client gives up and closes; the worker answers afterwards. */
static void case_closed(void)
{
	CLIENT *cl = rdma_client();
	struct wcall w = { .cl = cl,
			   .tag = TAG_CLOSED,
			   .delay = 0,
			   .len = 64 * KiB,
			   .timeout_s = 2 };
	int before = atomic_load(&destroyed);

	if (!cl)
		return;
	wcall_run(&w);
	CHECK(w.stat == RPC_TIMEDOUT, "the call left unanswered times out (%s)",
	      clnt_sperrno(w.stat));
	client_free(cl);
	atomic_store(&closed_done, true);
	wait_destroyed(before + 1);
	CHECK(atomic_load(&destroyed) == before + 1 &&
		      active_at_reply[TAG_CLOSED] == 0 &&
		      reply_ok[TAG_CLOSED] == 0,
	      "connection closed by the client: svc_sendreply FALSE (%d), "
	      "the detached call destroyed (connections left %u)",
	      reply_ok[TAG_CLOSED], (unsigned int)active_at_reply[TAG_CLOSED]);
}

/* The listener (and with it the connection) is destroyed while a call is
 * detached: the reply fails, the destroy frees the rest. */
static void case_lsn_gone(SVCXPRT *lsn, pthread_t loop)
{
	CLIENT *cl = rdma_client();
	struct wcall w = { .cl = cl,
			   .tag = TAG_LSN_GONE,
			   .delay = 0,
			   .len = 4 * KiB,
			   .timeout_s = 2 };
	int before = atomic_load(&destroyed);

	if (!cl)
		return;
	wcall_run(&w);
	CHECK(w.stat == RPC_TIMEDOUT, "a call left in service times out (%s)",
	      clnt_sperrno(w.stat));
	atomic_store(&loop_stop, true);
	pthread_join(loop, NULL);
	svc_destroy(lsn);
	atomic_store(&lsn_gone, true);
	wait_destroyed(before + 1);
	CHECK(atomic_load(&destroyed) == before + 1 &&
		      reply_ok[TAG_LSN_GONE] == 0,
	      "listener destroyed meanwhile: svc_sendreply FALSE (%d), the "
	      "detached call destroyed",
	      reply_ok[TAG_LSN_GONE]);
	client_free(cl);
}

/* ---- main ----------------------------------------------------------------- */

static SVCXPRT *listen_rdma(const char *addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&srv_addr;
	struct rpcrdma_attr attr;
	SVCXPRT *lsn;

	memset(&srv_addr, 0, sizeof(srv_addr));
	sin->sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
		return NULL;
	rpcrdma_attr_init(&attr);
	attr.max_read_bytes = PULL_BUDGET;
	attr.max_conns_per_peer = PER_PEER;
	lsn = svc_rdma_create((struct sockaddr *)sin, &attr);
	if (!lsn)
		return NULL;
	sin->sin_port = htons(lsn->xp_port);
	if (!svc_reg(lsn, NFS_PROGRAM, NFS_V3, dispatch, NULL)) {
		svc_destroy(lsn);
		return NULL;
	}
	return lsn;
}

static SVCXPRT *listen_tcp(void)
{
	struct netconfig *nc = getnetconfigent("tcp");
	SVCXPRT *tx = NULL;

	if (nc)
		tx = svc_tli_create(RPC_ANYFD, nc, NULL, 0, 0);
	if (tx && !svc_reg(tx, NFS_PROGRAM, NFS_V3, dispatch, NULL)) {
		svc_destroy(tx);
		tx = NULL;
	}
	if (nc)
		freenetconfigent(nc);
	return tx;
}

int main(void)
{
	const char *addr = getenv("RDMA_ADDR4");
	pthread_t workers[NWORKERS], loop;
	SVCXPRT *lsn, *tx;
	int i, nw = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!getenv("TIRPC_RDMA_VM")) {
		printf("SKIP: no RDMA device (runs in the VM)\n");
		return 77;
	}
	tu_watchdog(240, "FAIL - t_detach: watchdog (240 s)", 1);
	for (i = 0; i < MAXTAG; i++)
		reply_ok[i] = -1;
	lsn = listen_rdma(addr ? addr : "192.0.2.1");
	tx = listen_tcp();
	CHECK(lsn && tx, "rdma listener on port %u, tcp on %u",
	      lsn ? lsn->xp_port : 0, tx ? tcp_port(tx) : 0);
	if (!lsn || !tx)
		return tu_done();
	for (i = 0; i < NWORKERS; i++)
		if (!pthread_create(&workers[i], NULL, worker, NULL))
			nw++;
	if (pthread_create(&loop, NULL, server_loop, NULL)) {
		CHECK(false, "server thread");
		return tu_done();
	}
	case_null();
	case_tcp(tx);
	case_parallel(lsn);
	case_drop(lsn);
	case_busy_peer(lsn);
	case_closed();
	case_lsn_gone(lsn, loop);
	pthread_mutex_lock(&q_lock);
	q_stop = true;
	pthread_cond_broadcast(&q_cv);
	pthread_mutex_unlock(&q_lock);
	for (i = 0; i < nw; i++)
		pthread_join(workers[i], NULL);
	svc_destroy(tx);
	return tu_done();
}
