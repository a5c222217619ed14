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

static void set_err(struct clnt_rdma_bc *bt, const struct rpc_err *e,
		    const char *msg)
{
	pthread_mutex_lock(&bt->lock);
	bt->err = *e;
	snprintf(bt->errmsg, sizeof(bt->errmsg), "%s", msg);
	pthread_mutex_unlock(&bt->lock);
}

static int64_t tv_ms(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
}

static enum clnt_stat bc_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
			      void *argsp, xdrproc_t xres, void *resp,
			      struct timeval timeout)
{
	struct clnt_rdma_bc *bt = cl->cl_private;
	struct clnt_msg_call m = { .cl = cl,
				   .auth_lock = &bt->auth_lock,
				   .proc = proc,
				   .xargs = xargs,
				   .argsp = argsp };
	struct rr_srv_bcall *k;
	struct rr_result res;
	struct rpc_msg reply;
	struct rpc_err e;
	struct timeval tv;

	pthread_mutex_lock(&bt->lock);
	tv = bt->waitset ? bt->wait : timeout;
	m.xid = --bt->xid;
	m.prog = bt->prog;
	m.vers = bt->vers;
	pthread_mutex_unlock(&bt->lock);
	if (rr_srv_bc_call(bt->srv, m.xid, clnt_msg_encode, &m,
			   rr_now_ms() + tv_ms(&tv), &k, &res) != RR_OK) {
		clnt_msg_status(&res, &e);
		set_err(bt, &e, res.msg);
		return e.re_status;
	}
	/* a refused call is not refreshed: backward callers use AUTH_NONE
	 * or AUTH_SYS (RFC 5661 callbacks) */
	clnt_msg_decode(cl, &bt->auth_lock, rr_srv_bcall_xdr(k), xres, resp,
			NULL, NULL, &reply, &e);
	rr_srv_bcall_done(bt->srv, k);
	set_err(bt, &e,
		e.re_status == RPC_SUCCESS ? "" : clnt_sperrno(e.re_status));
	return e.re_status;
}

static void bc_abort(CLIENT *cl)
{
}

static void bc_geterr(CLIENT *cl, struct rpc_err *errp)
{
	struct clnt_rdma_bc *bt = cl->cl_private;

	pthread_mutex_lock(&bt->lock);
	*errp = bt->err;
	pthread_mutex_unlock(&bt->lock);
}

static bool_t bc_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	xdr_free(xres, resp);
	return TRUE;
}

static void bt_free(struct clnt_rdma_bc *bt)
{
	svc_rdma_conn_release(bt->conn);
	pthread_mutex_destroy(&bt->lock);
	pthread_mutex_destroy(&bt->auth_lock);
	free(bt);
}

/* cl_auth is the caller's to destroy, as with clnt_vc. */
static void bc_destroy(CLIENT *cl)
{
	bt_free(cl->cl_private);
	free(cl->cl_netid);
	free(cl->cl_tp);
	free(cl);
}

/* The requests of clnt_vc that make sense here (lock held). */
static bool_t control(struct clnt_rdma_bc *bt, u_int req, void *info)
{
	switch (req) {
	case CLSET_TIMEOUT:
		bt->wait = *(struct timeval *)info;
		bt->waitset = true;
		return TRUE;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = bt->wait;
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = bt->xid;
		return TRUE;
	case CLSET_XID:
		bt->xid = *(uint32_t *)info + 1;
		return TRUE;
	case CLGET_VERS:
		*(uint32_t *)info = (uint32_t)bt->vers;
		return TRUE;
	case CLSET_VERS:
		bt->vers = *(uint32_t *)info;
		return TRUE;
	case CLGET_PROG:
		*(uint32_t *)info = (uint32_t)bt->prog;
		return TRUE;
	case CLSET_PROG:
		bt->prog = *(uint32_t *)info;
		return TRUE;
	case CLGET_RDMA_ERRMSG:
		memcpy(info, bt->errmsg, sizeof(bt->errmsg));
		return TRUE;
	case CLGET_RDMA_VERSION:
		*(unsigned int *)info = rr_srv_version(bt->srv);
		return TRUE;
	default:
		return FALSE;
	}
}

static bool_t bc_control(CLIENT *cl, u_int req, void *info)
{
	struct clnt_rdma_bc *bt = cl->cl_private;
	bool_t ok;

	if (req == CLSET_FD_CLOSE || req == CLSET_FD_NCLOSE)
		return TRUE;
	if (!info)
		return FALSE;
	pthread_mutex_lock(&bt->lock);
	ok = control(bt, req, info);
	pthread_mutex_unlock(&bt->lock);
	return ok;
}

static const struct clnt_ops clnt_rdma_bc_ops = {
	.cl_call = bc_call,
	.cl_abort = bc_abort,
	.cl_geterr = bc_geterr,
	.cl_freeres = bc_freeres,
	.cl_destroy = bc_destroy,
	.cl_control = bc_control,
};

static CLIENT *create_failed(enum clnt_stat st, int code, const char *msg)
{
	return rpcrdma_createerr_why(st, code, "clnt_rdma_bc_create", "%s",
				     msg);
}

static struct clnt_rdma_bc *bt_alloc(struct svr_conn *conn, rpcprog_t prog,
				     rpcvers_t vers)
{
	struct clnt_rdma_bc *bt = calloc(1, sizeof(*bt));

	if (!bt)
		return NULL;
	if (pthread_mutex_init(&bt->lock, NULL)) {
		free(bt);
		return NULL;
	}
	if (pthread_mutex_init(&bt->auth_lock, NULL)) {
		pthread_mutex_destroy(&bt->lock);
		free(bt);
		return NULL;
	}
	bt->conn = conn;
	bt->srv = svc_rdma_conn_srv(conn);
	bt->wait.tv_sec = 25; /* what rpcgen stubs pass */
	if (getrandom(&bt->xid, sizeof(bt->xid), GRND_NONBLOCK) !=
	    sizeof(bt->xid))
		bt->xid = (uint32_t)(uintptr_t)bt * 2654435761u;
	bt->prog = prog;
	bt->vers = vers;
	return bt;
}

RPCRDMA_EXPORT CLIENT *clnt_rdma_bc_create(SVCXPRT *xprt, rpcprog_t prog,
					   rpcvers_t vers)
{
	struct svr_conn *conn = svc_rdma_conn_hold(xprt);
	struct clnt_rdma_bc *bt;
	CLIENT *cl;

	if (!conn)
		return create_failed(
			RPC_UNKNOWNPROTO, EINVAL,
			"not a connection of an RDMA server (svc_rdma_create, netid rdma or rdma6)");
	bt = bt_alloc(conn, prog, vers);
	cl = bt ? calloc(1, sizeof(*cl)) : NULL;
	if (cl) {
		cl->cl_ops = (struct clnt_ops *)&clnt_rdma_bc_ops;
		cl->cl_private = bt;
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
		if (bt)
			bt_free(bt);
		else
			svc_rdma_conn_release(conn);
		return create_failed(RPC_SYSTEMERROR, ENOMEM, "out of memory");
	}
	return cl;
}
