/*
 * clnt_rdma_bc.c - clnt_rdma_bc_create(): a CLIENT with which a server
 * calls its client back on the client's own connection (RFC 8167), over
 * the responder's backward requester (src/rpc/rr_serve.h rr_srv_bc_call).
 *
 * It behaves as a CLIENT of clnt_vc does for a program: clnt_call with a
 * timeout, clnt_geterr, clnt_control for the timeout, the XID, program and
 * version, clnt_destroy.  Calls go inline (a backward call larger than the
 * client's Receive buffers fails with RPC_CANTENCODEARGS and says so).  The
 * CLIENT holds the connection: it stays usable after svc_run has dropped
 * the connection's SVCXPRT, its calls then failing with RPC_CANTSEND, until
 * clnt_destroy().  Several threads may call at once, up to the client's
 * backward grant; the others wait for a credit within their timeout.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "glue/clnt_msg.h"
#include "glue/rpcrdma_err.h"
#include "glue/svc_rdma.h"
#include "glue/svc_xprt.h"
#include "rpc/rr_clock.h"
#include "rpc/rr_serve.h"

struct clnt_rdma_bc {
	struct svr_conn *conn; /* held */
	struct rr_srv *srv;
	pthread_mutex_t lock;	   /* the members below */
	pthread_mutex_t auth_lock; /* AUTH_* operations on cl_auth */
	struct timeval wait;	   /* CLSET_TIMEOUT */
	bool waitset;
	uint32_t xid; /* XID of the latest call */
	rpcprog_t prog;
	rpcvers_t vers;
	struct rpc_err err; /* of the latest call to finish */
	char errmsg[RPCRDMA_ERRMSG_LEN];
};

static const struct clnt_ops clnt_rdma_bc_ops;

static void bc_set_err(struct clnt_rdma_bc *clnt, const struct rpc_err *e,
		       const char *msg)
{
	pthread_mutex_lock(&clnt->lock);
	clnt->err = *e;
	snprintf(clnt->errmsg, sizeof(clnt->errmsg), "%s", msg);
	pthread_mutex_unlock(&clnt->lock);
}

static int64_t bc_tv_ms(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
}

static enum clnt_stat bc_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
			      void *argsp, xdrproc_t xres, void *resp,
			      struct timeval timeout)
{
	struct clnt_rdma_bc *clnt = cl->cl_private;
	struct clnt_msg_call m = { .cl = cl,
				   .auth_lock = &clnt->auth_lock,
				   .proc = proc,
				   .xargs = xargs,
				   .argsp = argsp };
	struct rr_srv_bcall *call;
	struct rr_result res;
	struct clnt_msg_stream in = { .xdrs = NULL };
	struct rpc_msg reply;
	struct rpc_err e;
	struct timeval tv;

	pthread_mutex_lock(&clnt->lock);
	tv = clnt->waitset ? clnt->wait : timeout;
	m.xid = --clnt->xid;
	m.prog = clnt->prog;
	m.vers = clnt->vers;
	pthread_mutex_unlock(&clnt->lock);
	if (rr_srv_bc_call(clnt->srv, m.xid, clnt_msg_encode, &m,
			   rr_clock_ms() + bc_tv_ms(&tv), &call,
			   &res) != RR_OK) {
		clnt_msg_release(&m);
		clnt_msg_status(&res, &e);
		bc_set_err(clnt, &e, res.msg);
		return e.re_status;
	}
	/* a refused call is not refreshed: backward callers use AUTH_NONE
	 * or AUTH_SYS (RFC 5661 callbacks) */
	in.xdrs = rr_srv_bcall_xdr(call);
	clnt_msg_decode(cl, &clnt->auth_lock, &in, xres, resp, &reply, &e);
	rr_srv_bcall_done(clnt->srv, call);
	clnt_msg_release(&m);
	bc_set_err(clnt, &e,
		   e.re_status == RPC_SUCCESS ? "" : clnt_sperrno(e.re_status));
	return e.re_status;
}

static void bc_abort(CLIENT *cl)
{
}

static void bc_geterr(CLIENT *cl, struct rpc_err *errp)
{
	struct clnt_rdma_bc *clnt = cl->cl_private;

	pthread_mutex_lock(&clnt->lock);
	*errp = clnt->err;
	pthread_mutex_unlock(&clnt->lock);
}

static bool_t bc_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	xdr_free(xres, resp);
	return TRUE;
}

static void bc_priv_free(struct clnt_rdma_bc *clnt)
{
	svc_rdma_conn_release(clnt->conn);
	pthread_mutex_destroy(&clnt->lock);
	pthread_mutex_destroy(&clnt->auth_lock);
	free(clnt);
}

/* cl_auth is the caller's to destroy, as with clnt_vc. */
static void bc_cl_destroy(CLIENT *cl)
{
	bc_priv_free(cl->cl_private);
	free(cl->cl_netid);
	free(cl->cl_tp);
	free(cl);
}

/* The requests of clnt_vc that make sense here (lock held). */
static bool_t control(struct clnt_rdma_bc *clnt, u_int req, void *info)
{
	switch (req) {
	case CLSET_TIMEOUT:
		clnt->wait = *(struct timeval *)info;
		clnt->waitset = true;
		return TRUE;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = clnt->wait;
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = clnt->xid;
		return TRUE;
	case CLSET_XID:
		clnt->xid = *(uint32_t *)info + 1;
		return TRUE;
	case CLGET_VERS:
		*(uint32_t *)info = (uint32_t)clnt->vers;
		return TRUE;
	case CLSET_VERS:
		clnt->vers = *(uint32_t *)info;
		return TRUE;
	case CLGET_PROG:
		*(uint32_t *)info = (uint32_t)clnt->prog;
		return TRUE;
	case CLSET_PROG:
		clnt->prog = *(uint32_t *)info;
		return TRUE;
	case CLGET_RDMA_ERRMSG:
		memcpy(info, clnt->errmsg, sizeof(clnt->errmsg));
		return TRUE;
	case CLGET_RDMA_VERSION:
		*(unsigned int *)info = rr_srv_version(clnt->srv);
		return TRUE;
	default:
		return FALSE;
	}
}

static bool_t bc_cl_control(CLIENT *cl, u_int req, void *info)
{
	struct clnt_rdma_bc *clnt = cl->cl_private;
	bool_t ok;

	if (req == CLSET_FD_CLOSE || req == CLSET_FD_NCLOSE)
		return TRUE;
	if (!info)
		return FALSE;
	pthread_mutex_lock(&clnt->lock);
	ok = control(clnt, req, info);
	pthread_mutex_unlock(&clnt->lock);
	return ok;
}

static const struct clnt_ops clnt_rdma_bc_ops = {
	.cl_call = bc_call,
	.cl_abort = bc_abort,
	.cl_geterr = bc_geterr,
	.cl_freeres = bc_freeres,
	.cl_destroy = bc_cl_destroy,
	.cl_control = bc_cl_control,
};

static CLIENT *bc_create_failed(enum clnt_stat st, int code, const char *msg)
{
	return rpcrdma_createerr_why(st, code, "clnt_rdma_bc_create", "%s",
				     msg);
}

static struct clnt_rdma_bc *bt_alloc(struct svr_conn *conn, rpcprog_t prog,
				     rpcvers_t vers)
{
	struct clnt_rdma_bc *clnt = calloc(1, sizeof(*clnt));

	if (!clnt)
		return NULL;
	if (pthread_mutex_init(&clnt->lock, NULL)) {
		free(clnt);
		return NULL;
	}
	if (pthread_mutex_init(&clnt->auth_lock, NULL)) {
		pthread_mutex_destroy(&clnt->lock);
		free(clnt);
		return NULL;
	}
	clnt->conn = conn;
	clnt->srv = svc_rdma_conn_srv(conn);
	clnt->wait.tv_sec = 25; /* what rpcgen stubs pass */
	if (getrandom(&clnt->xid, sizeof(clnt->xid), GRND_NONBLOCK) !=
	    sizeof(clnt->xid))
		clnt->xid = (uint32_t)(uintptr_t)clnt * 2654435761u;
	clnt->prog = prog;
	clnt->vers = vers;
	return clnt;
}

RPCRDMA_EXPORT CLIENT *clnt_rdma_bc_create(SVCXPRT *xprt, rpcprog_t prog,
					   rpcvers_t vers)
{
	struct svr_conn *conn = svc_rdma_conn_hold(xprt);
	struct clnt_rdma_bc *clnt;
	CLIENT *cl;

	if (!conn)
		return bc_create_failed(
			RPC_UNKNOWNPROTO, EINVAL,
			"not a connection of an RDMA server (svc_rdma_create, netid rdma or rdma6)");
	clnt = bt_alloc(conn, prog, vers);
	cl = clnt ? calloc(1, sizeof(*cl)) : NULL;
	if (cl) {
		cl->cl_ops = (struct clnt_ops *)&clnt_rdma_bc_ops;
		cl->cl_private = clnt;
		cl->cl_netid = strdup(svc_rdma_conn_netid(conn));
		cl->cl_tp = strdup("-");
		cl->cl_auth = authnone_create();
	}
	if (!cl || !cl->cl_netid || !cl->cl_tp || !cl->cl_auth) {
		if (cl) {
			free(cl->cl_netid);
			free(cl->cl_tp);
			free(cl);
		}
		if (clnt)
			bc_priv_free(clnt);
		else
			svc_rdma_conn_release(conn);
		return bc_create_failed(RPC_SYSTEMERROR, ENOMEM,
					"out of memory");
	}
	return cl;
}
