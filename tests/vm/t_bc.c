/*
 * t_bc.c - the backward direction (RFC 8167) in the VM: our
 * server calls our clients back on their own connections while they call
 * it.  The server is bct_server (tests/rpc/bct.x), which calls back with
 * clnt_rdma_bc_create(rq->rq_xprt); this program is the client, serving
 * the callback program (tests/rpc/bctcb.x, rpcgen's dispatch function) on
 * svc_rdma_bc_create(cl), driven by svc_rdma_bc_poll() or by svc_run().
 *
 * Groups (t_bc --only GROUP, one VM test each, tests/vm/bc-part.sh), each
 * in version 1 and in version 2:
 *   basic    readiness (calls before svc_rdma_bc_create are dropped,
 *            V1-BD-7), data both ways, backward XIDs equal to a forward
 *            call's in flight (V1-BD-1), a call or a reply too large for
 *            the peer's Receives, a timeout and its late reply, more
 *            callers than the backward grant (V1-BD-3), a client with no
 *            backward credits (v2: its Backward Request Support is none)
 *   threads  forward calls from 4 threads while 4 server threads call
 *            back, every octet checked on both sides; svc_run() drives
 *            the callback service in version 2
 *   loss     the client goes away while the server calls it back; the
 *            server is killed while the client serves a call back and is
 *            restarted: the same CLIENT and SVCXPRT go on
 *
 * One line per check; exit 0 only when all passed, 77 without a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "bct.h"
#include "bctcb.h"
#include "tests/vm/t_clnt_util.h"
#include "tests/vm/t_ddp_util.h"
#include "tests/vm/t_svc_util.h"

#define WATCHDOG_S 110

/* The dispatch function of bctcb_svc.c (rpcgen declares it nowhere). */
void bctcb_prog_1(struct svc_req *rq, SVCXPRT *x);

static struct ts_server srv4, srv6;
static struct ts_server *const servers[] = { &srv4, &srv6 };

/* ---- The callback program, as the client serves it ----------------------- */

static atomic_uint cb_echo_ok, cb_echo_bad, cb_fills, cb_hangs;

bool_t bctcb_null_1_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

bool_t bctcb_echo_1_svc(bctcb_data *arg, bctcb_data *res, struct svc_req *rq)
{
	uint32_t len = arg->bctcb_data_len;

	if (len &&
	    t_fill_check(arg->bctcb_data_val, len, arg->bctcb_data_val[0]) >= 0)
		cb_echo_bad++;
	else
		cb_echo_ok++;
	*res = *arg; /* the argument's memory becomes the result's */
	arg->bctcb_data_len = 0;
	arg->bctcb_data_val = NULL;
	return TRUE;
}

bool_t bctcb_fill_1_svc(u_int *len, bctcb_data *res, struct svc_req *rq)
{
	cb_fills++;
	res->bctcb_data_len = *len;
	res->bctcb_data_val = malloc(*len ? *len : 1);
	if (!res->bctcb_data_val) {
		res->bctcb_data_len = 0;
		svcerr_systemerr(rq->rq_xprt);
		return FALSE;
	}
	t_fill(res->bctcb_data_val, *len, 7);
	return TRUE;
}

bool_t bctcb_hang_1_svc(u_int *ms, void *res, struct svc_req *rq)
{
	cb_hangs++;
	usleep(*ms * 1000u);
	return TRUE;
}

int bctcb_prog_1_freeresult(SVCXPRT *x, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

/* ---- Driving the callback service ---------------------------------------- */

struct drv {
	SVCXPRT *x;
	pthread_t thread;
	atomic_bool stop;
	bool running;
};

static void *poll_loop(void *arg)
{
	struct drv *d = arg;

	while (!d->stop)
		if (svc_rdma_bc_poll(d->x, 100) < 0)
			break;
	return NULL;
}

/* Ready for backward calls: the SVCXPRT, the program registered, a thread
 * that polls it. */
static bool serve_callbacks(struct drv *d, CLIENT *cl, const char *what)
{
	memset(d, 0, sizeof(*d));
	d->x = svc_rdma_bc_create(cl);
	CHECK(d->x != NULL, "%s: svc_rdma_bc_create", what);
	if (!d->x)
		return false;
	CHECK(svc_reg(d->x, BCTCB_PROG, BCTCB_VERS, bctcb_prog_1, NULL),
	      "%s: svc_reg of the callback program on it", what);
	d->running = !pthread_create(&d->thread, NULL, poll_loop, d);
	return d->running;
}

/* Stop the polling thread, then destroy the SVCXPRT. */
static void stop_callbacks(struct drv *d)
{
	if (d->running) {
		d->stop = true;
		pthread_join(d->thread, NULL);
		d->running = false;
	}
	if (d->x)
		svc_destroy(d->x);
	d->x = NULL;
}

static void *svc_run_thread(void *arg)
{
	svc_run();
	return NULL;
}

/* ---- Servers and CLIENTs ------------------------------------------------- */

static bool start(struct ts_server *s, const char *host,
		  const char *const *args)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	int ret;

	if (n <= 0)
		return false;
	path[n] = 0;
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "bct_server");
	setenv("RTEST_SERVER", path, 1);
	ret = ts_server_start(s, host, args);
	CHECK(ret == 0, "bct_server on %s port %u", host, s->port);
	return ret == 0;
}

static CLIENT *client(const struct ts_server *s, enum rpcrdma_version v,
		      unsigned int bc_credits)
{
	struct timeval tv = { 30, 0 };
	struct sockaddr_storage ss;
	struct rpcrdma_attr a;
	CLIENT *cl;

	rpcrdma_attr_init(&a);
	a.version = v;
	a.bc_credits = bc_credits;
	t_sockaddr(&ss, s->host, s->port);
	cl = clnt_rdma_create((struct sockaddr *)&ss, BCT_PROG, BCT_VERS, &a);
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

/* The server's calls back: BCT_PING, answered when they are done. */
static bct_ping_res ping(CLIENT *cl, bct_ping_args a)
{
	bct_ping_res r;

	memset(&r, 0, sizeof(r));
	if (bct_ping_1(&a, &r, cl) != RPC_SUCCESS) {
		NOTE("BCT_PING: %s [%s]", clnt_sperror(cl, "ping"),
		     td_errmsg(cl));
		r.failed = UINT_MAX;
	}
	return r;
}

static void ping_free(bct_ping_res *r)
{
	xdr_free((xdrproc_t)xdr_bct_ping_res, (char *)r);
}

/* BCT_RESULT until the job is done or deadline_ms passes. */
static bct_ping_res result(CLIENT *cl, u_int job, int64_t deadline_ms)
{
	bct_ping_res r;

	for (;;) {
		memset(&r, 0, sizeof(r));
		if (bct_result_1(&job, &r, cl) != RPC_SUCCESS) {
			NOTE("BCT_RESULT: %s", clnt_sperror(cl, "result"));
			r.failed = UINT_MAX;
			return r;
		}
		if (r.done || t_ms() >= deadline_ms)
			return r;
		ping_free(&r);
		usleep(20000);
	}
}

static bct_stats server_stats(CLIENT *cl)
{
	bct_stats s;

	memset(&s, 0, sizeof(s));
	CHECK(bct_stats_1(NULL, &s, cl) == RPC_SUCCESS,
	      "BCT_STATS: the server's counters");
	return s;
}

static const char *vname(enum rpcrdma_version v)
{
	return v == RPCRDMA_VERSION_2 ? "v2" : "v1";
}

static bct_ping_args echo_args(unsigned int count, unsigned int len,
			       unsigned int timeout_ms)
{
	bct_ping_args a = { .count = count,
			    .threads = 1,
			    .proc = BCTCB_ECHO,
			    .len = len,
			    .seed = 3,
			    .timeout_ms = timeout_ms };

	return a;
}

/* ---- basic --------------------------------------------------------------- */

/* Before the program is ready nothing is taken (V1-BD-7). */
static void basic_readiness(CLIENT *cl, const char *v)
{
	struct rpcrdma_clnt_stats b, a;
	bct_ping_res r;

	td_stats(cl, &b);
	r = ping(cl, echo_args(1, 100, 500));
	td_stats(cl, &a);
	CHECK(r.failed == 1 && r.first_status == RPC_TIMEDOUT &&
		      TD_D(&a, &b, bc_dropped) == 1 &&
		      TD_D(&a, &b, bc_calls) == 0,
	      "%s: a call back before svc_rdma_bc_create is dropped, the server times out (%s; dropped %llu) (V1-BD-7)",
	      v, clnt_sperrno(r.first_status), TD_D(&a, &b, bc_dropped));
	ping_free(&r);
}

static void basic_data(CLIENT *cl, const char *v, unsigned int vers)
{
	struct rpcrdma_clnt_stats b, a;
	unsigned int ok0 = cb_echo_ok;
	bct_stats sb = server_stats(cl), sa;
	bct_ping_res r;

	td_stats(cl, &b);
	r = ping(cl, echo_args(20, 1000, 5000));
	td_stats(cl, &a);
	sa = server_stats(cl);
	CHECK(r.ok == 20 && r.failed == 0 && r.bad_data == 0 &&
		      cb_echo_ok - ok0 == 20 && cb_echo_bad == 0,
	      "%s: 20 calls back of 1000 octets, each checked by the client and by the server (ok %u, failed %u: %s)",
	      v, r.ok, r.failed, r.msg ? r.msg : "");
	CHECK(r.rdma_version == vers,
	      "%s: the backward CLIENT speaks the connection's version (%u)", v,
	      r.rdma_version);
	CHECK(TD_D(&a, &b, bc_calls) == 20 && TD_D(&a, &b, bc_replies) == 20 &&
		      TD_D(&a, &b, bc_dropped) == 0 &&
		      sa.bc_calls - sb.bc_calls == 20 &&
		      sa.bc_replies - sb.bc_replies == 20,
	      "%s: counters: client took %llu answered %llu dropped %llu, server sent %llu got %llu",
	      v, TD_D(&a, &b, bc_calls), TD_D(&a, &b, bc_replies),
	      TD_D(&a, &b, bc_dropped),
	      (unsigned long long)(sa.bc_calls - sb.bc_calls),
	      (unsigned long long)(sa.bc_replies - sb.bc_replies));
	ping_free(&r);
}

/* The server's backward XIDs equal the XID of the forward call in flight
 * (BCT_PING's): neither may complete the other (V1-BD-1). */
static void basic_xids(CLIENT *cl, const char *v)
{
	uint32_t xid = 0x5a5a0000u + (v[1] - '0') * 0x100, got = 0;
	bct_ping_args args = echo_args(5, 200, 5000);
	bct_ping_res r;

	clnt_control(cl, CLSET_XID, (char *)&xid);
	args.xid = xid;
	r = ping(cl, args);
	clnt_control(cl, CLGET_XID, (char *)&got);
	CHECK(got == xid && r.first_xid == xid && r.ok == 5 && r.failed == 0,
	      "%s: backward calls with XID 0x%08x, the XID of the forward call waiting for them: each side gets its own answer (forward 0x%08x, backward 0x%08x, ok %u) (V1-BD-1)",
	      v, xid, got, r.first_xid, r.ok);
	ping_free(&r);
}

/* Backward messages are inline only (V1-BD-8/9). */
static void basic_too_large(CLIENT *cl, const char *v)
{
	struct rpcrdma_clnt_stats b, a;
	bct_ping_args args = echo_args(1, 8192, 3000);
	bct_ping_res r;

	td_stats(cl, &b);
	r = ping(cl, args);
	td_stats(cl, &a);
	CHECK(r.failed == 1 && r.first_status == RPC_CANTENCODEARGS && r.msg &&
		      strstr(r.msg, "Receive buffers") &&
		      TD_D(&a, &b, bc_calls) == 0,
	      "%s: a call back of 8192 octets is refused before it is sent: %s [%s]",
	      v, clnt_sperrno(r.first_status), r.msg ? r.msg : "");
	ping_free(&r);

	args.proc = BCTCB_FILL;
	td_stats(cl, &b);
	r = ping(cl, args);
	td_stats(cl, &a);
	CHECK(r.failed == 1 && r.first_status == RPC_SYSTEMERROR &&
		      r.elapsed_ms < 2500 && TD_D(&a, &b, bc_calls) == 1,
	      "%s: results of 8192 octets do not fit the server's Receives: the client answers SYSTEM_ERR (%s after %u ms)",
	      v, clnt_sperrno(r.first_status), r.elapsed_ms);
	ping_free(&r);
}

/* A caller that gives up; the late reply is dropped, the credit comes
 * back. */
static void basic_timeout(CLIENT *cl, const char *v)
{
	bct_ping_args args = echo_args(1, 0, 300);
	bct_stats sb = server_stats(cl), sa;
	bct_ping_res r;

	args.proc = BCTCB_HANG;
	args.hang_ms = 1500;
	r = ping(cl, args);
	CHECK(r.failed == 1 && r.first_status == RPC_TIMEDOUT &&
		      r.elapsed_ms >= 300 && r.elapsed_ms < 1300,
	      "%s: a call back the client answers after 1.5 s, timeout 300 ms: %s after %u ms",
	      v, clnt_sperrno(r.first_status), r.elapsed_ms);
	ping_free(&r);
	usleep(1600000);
	r = ping(cl, echo_args(8, 100, 3000));
	sa = server_stats(cl);
	CHECK(r.ok == 8 && sa.bc_timeouts - sb.bc_timeouts == 1,
	      "%s: after the late reply, 8 calls back work (ok %u), 1 timeout counted",
	      v, r.ok);
	ping_free(&r);
}

/* More callers than the client grants: the server waits for credits and
 * never goes over the grant, or the client would drop (V1-BD-3). */
static void basic_credits(CLIENT *cl, const char *v)
{
	struct rpcrdma_clnt_stats b, a;
	bct_ping_args args = echo_args(10, 500, 10000);
	bct_ping_res r;

	args.threads = 12;
	td_stats(cl, &b);
	r = ping(cl, args);
	td_stats(cl, &a);
	CHECK(r.ok == 120 && r.failed == 0 && TD_D(&a, &b, bc_dropped) == 0 &&
		      TD_D(&a, &b, bc_replies) == 120,
	      "%s: 12 server threads over a grant of 4: 120 calls back answered, none dropped (ok %u, dropped %llu) (V1-BD-3)",
	      v, r.ok, TD_D(&a, &b, bc_dropped));
	ping_free(&r);
}

/* RPCRDMA_BC_NONE: no Receives for backward calls. */
static void basic_no_credits(const struct ts_server *s,
			     enum rpcrdma_version vers)
{
	const char *v = vname(vers);
	CLIENT *cl = client(s, vers, RPCRDMA_BC_NONE);
	bct_ping_res r;
	SVCXPRT *x;

	if (!CHECK_OK(cl != NULL,
		      "%s: a CLIENT with bc_credits RPCRDMA_BC_NONE", v))
		return;
	/* v2: the first call settles the version, the second carries the
	 * client's properties (AMB-V2-9) */
	bct_null_1(NULL, NULL, cl);
	bct_null_1(NULL, NULL, cl);
	r = ping(cl, echo_args(1, 100, 500));
	if (vers == RPCRDMA_VERSION_2)
		CHECK(r.failed == 1 && r.first_status == RPC_CANTSEND &&
			      r.elapsed_ms < 300 && r.msg &&
			      strstr(r.msg, "Backward Request Support"),
		      "v2: its Backward Request Support is none: the server does not call (%s: %s)",
		      clnt_sperrno(r.first_status), r.msg ? r.msg : "");
	else
		CHECK(r.failed == 1 && r.first_status == RPC_TIMEDOUT,
		      "v1: nothing tells the server; the call back is dropped, it times out (%s)",
		      clnt_sperrno(r.first_status));
	ping_free(&r);
	x = svc_rdma_bc_create(cl);
	CHECK(x == NULL,
	      "%s: svc_rdma_bc_create refuses a CLIENT without backward credits",
	      v);
	if (x)
		svc_destroy(x);
	clnt_destroy(cl);
}

static void basic_one(const struct ts_server *s, enum rpcrdma_version vers)
{
	const char *v = vname(vers);
	unsigned int n = vers == RPCRDMA_VERSION_2 ? 2 : 1;
	CLIENT *cl = client(s, vers, 4);
	struct drv d;

	if (!CHECK_OK(cl && bct_null_1(NULL, NULL, cl) == RPC_SUCCESS &&
			      version(cl) == n,
		      "%s: CLIENT to %s, version %u", v, s->host,
		      cl ? version(cl) : 0))
		goto out;
	basic_readiness(cl, v);
	if (!serve_callbacks(&d, cl, v))
		goto out;
	basic_data(cl, v, n);
	basic_xids(cl, v);
	basic_too_large(cl, v);
	basic_timeout(cl, v);
	basic_credits(cl, v);
	stop_callbacks(&d);
	basic_no_credits(s, vers);
out:
	if (cl)
		clnt_destroy(cl);
}

static void run_basic(void)
{
	if (start(&srv4, t_addr4(), NULL))
		basic_one(&srv4, RPCRDMA_VERSION_1);
	if (start(&srv6, t_addr6(), NULL))
		basic_one(&srv6, RPCRDMA_VERSION_2);
}

/* ---- threads ------------------------------------------------------------- */

struct fwd {
	CLIENT *cl;
	unsigned int id;
	unsigned int calls, ok;
	pthread_t thread;
};

/* Forward ECHOs, small and large (Long Call and Reply chunk), checked. */
static void *fwd_thread(void *arg)
{
	struct fwd *f = arg;
	bct_data in, out;
	unsigned int i, len;

	for (i = 0; i < f->calls; i++) {
		len = i % 10 == 9 ? 100000 : 2000;
		in.bct_data_len = len;
		in.bct_data_val = malloc(len);
		if (!in.bct_data_val)
			continue;
		t_fill(in.bct_data_val, len, f->id * 1000 + i);
		memset(&out, 0, sizeof(out));
		if (bct_echo_1(&in, &out, f->cl) == RPC_SUCCESS) {
			if (out.bct_data_len == len &&
			    !memcmp(out.bct_data_val, in.bct_data_val, len))
				f->ok++;
			xdr_free((xdrproc_t)xdr_bct_data, (char *)&out);
		}
		free(in.bct_data_val);
	}
	return NULL;
}

static void threads_one(const struct ts_server *s, enum rpcrdma_version vers,
			bool use_svc_run)
{
	const char *v = vname(vers);
	bct_ping_args args = echo_args(50, 1000, 20000);
	unsigned int ok0 = cb_echo_ok, i, fwd_ok = 0;
	struct rpcrdma_clnt_stats b, a;
	CLIENT *cl = client(s, vers, 4);
	struct fwd f[4];
	struct drv d;
	pthread_t run;
	bct_ping_res r;
	u_int job = 0;
	int64_t t0;
	int fd;

	memset(&d, 0, sizeof(d));
	if (!CHECK_OK(cl != NULL, "%s: CLIENT", v))
		return;
	if (use_svc_run) {
		d.x = svc_rdma_bc_create(cl);
		CHECK(d.x &&
			      svc_reg(d.x, BCTCB_PROG, BCTCB_VERS, bctcb_prog_1,
				      NULL) &&
			      !pthread_create(&run, NULL, svc_run_thread, NULL),
		      "%s: svc_rdma_bc_create, svc_reg, svc_run() in a thread",
		      v);
	} else if (!serve_callbacks(&d, cl, v)) {
		clnt_destroy(cl);
		return;
	}
	td_stats(cl, &b);
	args.threads = 4;
	CHECK(bct_start_1(&args, &job, cl) == RPC_SUCCESS,
	      "%s: BCT_START: 4 server threads, 50 calls back each", v);
	for (i = 0; i < 4; i++) {
		f[i] = (struct fwd){ .cl = cl, .id = i, .calls = 60 };
		pthread_create(&f[i].thread, NULL, fwd_thread, &f[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(f[i].thread, NULL);
		fwd_ok += f[i].ok;
	}
	r = result(cl, job, t_ms() + 60000);
	td_stats(cl, &a);
	CHECK(fwd_ok == 240,
	      "%s: 240 forward ECHOs from 4 threads meanwhile (2000 and 100000 octets), each intact (%u)",
	      v, fwd_ok);
	CHECK(r.done && r.ok == 200 && r.bad_data == 0 && r.failed == 0 &&
		      cb_echo_ok - ok0 == 200 && cb_echo_bad == 0 &&
		      TD_D(&a, &b, bc_dropped) == 0,
	      "%s: 200 calls back from 4 server threads, each intact on both sides (ok %u, failed %u, client saw %u)%s",
	      v, r.ok, r.failed, cb_echo_ok - ok0,
	      use_svc_run ? ", served by svc_run()" : "");
	ping_free(&r);
	if (!use_svc_run) {
		stop_callbacks(&d);
		clnt_destroy(cl);
		return;
	}
	/* svc_run owns the SVCXPRT now: the CLIENT's end makes it report
	 * XPRT_DIED, and svc_run destroys it (its fd closes).  svc_run's
	 * thread is left running: the process ends with it. */
	fd = d.x->xp_fd;
	clnt_destroy(cl);
	for (t0 = t_ms(); fcntl(fd, F_GETFD) != -1 && t_ms() - t0 < 3000;)
		usleep(10000);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF,
	      "%s: clnt_destroy: svc_run destroys the SVCXPRT (fd %d closed)",
	      v, fd);
}

static void run_threads(void)
{
	if (!start(&srv4, t_addr4(), NULL))
		return;
	threads_one(&srv4, RPCRDMA_VERSION_1, false);
	threads_one(&srv4, RPCRDMA_VERSION_2, true);
}

/* ---- loss ---------------------------------------------------------------- */

/* The client goes away while the server calls it back: the server's
 * calls fail at once, not at their timeout, and it serves on. */
static void loss_client(const struct ts_server *s, enum rpcrdma_version vers)
{
	const char *v = vname(vers);
	bct_ping_args args = echo_args(100000, 500, 20000);
	CLIENT *cl = client(s, vers, 4), *cl2;
	bct_ping_res r;
	struct drv d;
	int64_t t0;
	u_int job = 0;

	if (!CHECK_OK(cl != NULL, "%s: CLIENT", v) ||
	    !serve_callbacks(&d, cl, v))
		return;
	args.threads = 2;
	CHECK(bct_start_1(&args, &job, cl) == RPC_SUCCESS,
	      "%s: BCT_START: 2 server threads calling back without end", v);
	for (t0 = t_ms(); t_ms() - t0 < 10000; usleep(20000)) {
		memset(&r, 0, sizeof(r));
		if (bct_result_1(&job, &r, cl) != RPC_SUCCESS)
			break;
		if (r.ok >= 20)
			break;
		ping_free(&r);
	}
	CHECK(r.ok >= 20, "%s: calls back flowing (%u)", v, r.ok);
	ping_free(&r);
	stop_callbacks(&d);
	clnt_destroy(cl); /* the connection goes */
	t0 = t_ms();
	cl2 = client(s, vers, 4);
	if (!CHECK_OK(cl2 != NULL, "%s: a new CLIENT", v))
		return;
	r = result(cl2, job, t0 + 10000);
	CHECK(r.done && r.failed >= 1 &&
		      (r.first_status == RPC_CANTSEND ||
		       r.first_status == RPC_CANTRECV) &&
		      t_ms() - t0 < 10000,
	      "%s: the client went away: the server's calls back ended with %s [%s] within %lld ms, not at their 20 s timeout",
	      v, clnt_sperrno(r.first_status), r.msg ? r.msg : "",
	      (long long)(t_ms() - t0));
	ping_free(&r);
	CHECK(bct_null_1(NULL, NULL, cl2) == RPC_SUCCESS &&
		      serve_callbacks(&d, cl2, v),
	      "%s: the server serves the new CLIENT", v);
	r = ping(cl2, echo_args(5, 100, 5000));
	CHECK(r.ok == 5, "%s: ... and calls it back (ok %u)", v, r.ok);
	ping_free(&r);
	stop_callbacks(&d);
	clnt_destroy(cl2);
}

/* The server dies while the client serves its call back; restarted on the
 * same port, the same CLIENT reconnects and the same SVCXPRT serves the
 * calls back of the new connection. */
static void loss_server(struct ts_server *s, enum rpcrdma_version vers)
{
	const char *v = vname(vers);
	bct_ping_args args = echo_args(1, 0, 20000);
	unsigned int hangs0 = cb_hangs;
	struct rpcrdma_clnt_stats b, a;
	CLIENT *cl = client(s, vers, 4);
	char port[16], host[64];
	const char *const again[] = { "-p", port, NULL };
	enum clnt_stat st;
	bct_ping_res r;
	struct drv d;
	int64_t t0;
	u_int job = 0;

	if (!CHECK_OK(cl != NULL, "%s: CLIENT", v) ||
	    !serve_callbacks(&d, cl, v))
		return;
	args.proc = BCTCB_HANG;
	args.hang_ms = 1500;
	td_stats(cl, &b);
	CHECK(bct_start_1(&args, &job, cl) == RPC_SUCCESS,
	      "%s: BCT_START: a call back the client answers after 1.5 s", v);
	for (t0 = t_ms(); cb_hangs == hangs0 && t_ms() - t0 < 5000;)
		usleep(10000);
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	close(s->out);
	s->pid = 0;
	st = bct_null_1(NULL, NULL, cl);
	usleep(1700000); /* the reply finds the connection gone */
	td_stats(cl, &a);
	CHECK(cb_hangs == hangs0 + 1 && st != RPC_SUCCESS &&
		      TD_D(&a, &b, bc_calls) == 1 &&
		      TD_D(&a, &b, bc_replies) == 0,
	      "%s: server killed while the client served its call back: forward call %s, the reply not sent",
	      v, clnt_sperrno(st));
	snprintf(port, sizeof(port), "%u", s->port);
	snprintf(host, sizeof(host), "%s", s->host);
	if (!start(s, host, again))
		goto out;
	for (t0 = t_ms(); t_ms() - t0 < 5000; usleep(100000))
		if ((st = bct_null_1(NULL, NULL, cl)) == RPC_SUCCESS)
			break;
	CHECK(st == RPC_SUCCESS, "%s: the same CLIENT reconnects (%s)", v,
	      clnt_sperrno(st));
	r = ping(cl, echo_args(10, 300, 5000));
	CHECK(r.ok == 10,
	      "%s: the same SVCXPRT serves the new connection's calls back (ok %u, failed %u: %s) (V1-BD-6)",
	      v, r.ok, r.failed, r.msg ? r.msg : "");
	ping_free(&r);
out:
	stop_callbacks(&d);
	clnt_destroy(cl);
}

static void run_loss(void)
{
	if (!start(&srv4, t_addr4(), NULL))
		return;
	loss_client(&srv4, RPCRDMA_VERSION_1);
	loss_client(&srv4, RPCRDMA_VERSION_2);
	loss_server(&srv4, RPCRDMA_VERSION_1);
	if (srv4.pid)
		loss_server(&srv4, RPCRDMA_VERSION_2);
}

/* ---- main ---------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*run)(void);
} groups[] = {
	{ "basic", run_basic },
	{ "threads", run_threads },
	{ "loss", run_loss },
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
		fprintf(stderr, "usage: t_bc --only basic|threads|loss\n");
		return 2;
	}
	if (!t_have_device())
		return 77;
	/* each check names its version */
	unsetenv("RPCRDMA_VERSION");
	signal(SIGPIPE, SIG_IGN);
	td_watchdog(WATCHDOG_S, servers, 2);
	groups[i].run();
	for (i = 0; i < 2; i++)
		if (servers[i]->pid)
			CHECK(ts_server_stop(servers[i]) == 0,
			      "bct_server on %s: clean exit", servers[i]->host);
	return tu_done();
}
