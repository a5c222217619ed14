/*
 * svc_rdma_bc.c - svc_rdma_bc_create(): an SVCXPRT that serves the
 * backward-direction calls (RFC 8167) arriving on a CLIENT's connections,
 * over the requester's backward service (src/rpc/rr_call.h rr_clnt_bc_*).
 *
 * A program registers its callback program on it with svc_reg() and lets
 * svc_run() serve it, like any SVCXPRT: its xp_fd is readable when a
 * backward call waits or the connection has something to collect.  A
 * program that never calls svc_run() polls xp_fd itself and calls
 * svc_getreq_common(xp_fd), or simply svc_rdma_bc_poll().
 *
 * Creating it is the program saying it is ready (V1-BD-7): backward calls
 * that came before were dropped.  The SVCXPRT follows the CLIENT from
 * connection to connection.  Calls and replies are inline, with libtirpc's
 * plain XDR; the reply goes back on the connection its call came on.
 *
 * Lifetime: the SVCXPRT holds the CLIENT's state.  After clnt_destroy()
 * it reports XPRT_DIED, and svc_run() destroys it; svc_destroy() may be
 * called at any time.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "glue/clnt_rdma.h"
#include "glue/rpcrdma_err.h"
#include "glue/svc_xprt.h"
#include "log/rl_log.h"
#include "rpc/rr_call.h"

struct svc_rdma_bc {
	struct clnt_rdma *clnt; /* held */
	struct rr_clnt *rr;
	struct rr_bcq *cur; /* the call being dispatched */
	bool answered;	    /* ... has had its one reply (or its
					 * one attempt) */
	XDR xdr;	    /* ... decoded from its message */
	char verf[MAX_AUTH_BYTES];
	unsigned int streak; /* calls taken in this turn */
};

/* Calls taken in a row before svc_run is given back to other fds. */
#define BC_STREAK 16

static void end_call(struct svc_rdma_bc *bc)
{
	if (bc->cur)
		rr_clnt_bc_done(bc->rr, bc->cur);
	bc->cur = NULL;
}

static bool_t bc_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_bc *bc = xprt->xp_p1;
	const uint8_t *m;
	uint32_t len;

	end_call(bc);
	xprt->xp_verf.oa_base = bc->verf;
	if (clnt_rdma_gone(bc->clnt))
		return FALSE;
	bc->answered = false;
	while ((bc->cur = rr_clnt_bc_next(bc->rr))) {
		m = rr_bcq_msg(bc->cur, &len);
		xdrmem_create(&bc->xdr, (char *)m, len, XDR_DECODE);
		if (xdr_callmsg(&bc->xdr, msg)) {
			bc->streak++;
			return TRUE;
		}
		/* not an RPC call we can read: no reply is possible */
		end_call(bc);
	}
	return FALSE;
}

static enum xprt_stat bc_stat(SVCXPRT *xprt)
{
	struct svc_rdma_bc *bc = xprt->xp_p1;

	end_call(bc);
	if (clnt_rdma_gone(bc->clnt))
		return XPRT_DIED;
	if (!rr_clnt_bc_pending(bc->rr) || bc->streak >= BC_STREAK) {
		if (bc->streak >= BC_STREAK)
			rr_clnt_bc_wake(bc->rr); /* the rest after the poll */
		bc->streak = 0;
		return XPRT_IDLE;
	}
	return XPRT_MOREREQS;
}

static bool_t bc_getargs(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	struct svc_rdma_bc *bc = xprt->xp_p1;
	SVCAUTH *auth = svc_xprt_auth(xprt);
	bool_t ok;

	if (!bc->cur)
		return FALSE;
	ok = auth ? SVCAUTH_UNWRAP(auth, &bc->xdr, proc, where) :
		    proc(&bc->xdr, where);
	if (!ok)
		xdr_free(proc, where);
	return ok;
}

static bool encode_reply(XDR *xdrs, void *arg)
{
	return svc_xprt_reply_encode(xdrs, arg);
}

static bool_t bc_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_bc *bc = xprt->xp_p1;
	struct svc_xprt_reply rep;
	struct rr_result res;

	/* one reply per call: rpcgen's dispatch follows a failed
	 * svc_sendreply with svcerr_systemerr */
	if (!bc->cur || bc->answered)
		return FALSE;
	bc->answered = true;
	msg->rm_xid = rr_bcq_xid(bc->cur);
	svc_xprt_reply_init(&rep, xprt, msg);
	if (!rr_clnt_bc_reply(bc->rr, bc->cur, encode_reply, &rep, &res))
		return TRUE;
	rl_warn("svc_rdma_bc: backward reply to XID 0x%08x: %s", msg->rm_xid,
		res.msg);
	if (res.status != RR_CANTENCODE || !rep.has_results)
		return FALSE;
	/* Results too large for the server's Receives (backward messages
	 * are inline): the caller hears SYSTEM_ERR now rather than nothing
	 * until its timeout. */
	msg->acpted_rply.ar_stat = SYSTEM_ERR;
	svc_xprt_reply_init(&rep, xprt, msg);
	rr_clnt_bc_reply(bc->rr, bc->cur, encode_reply, &rep, &res);
	return FALSE;
}

static bool_t bc_freeargs(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	xdr_free(proc, where);
	return TRUE;
}

static void bc_xp_destroy(SVCXPRT *xprt)
{
	struct svc_rdma_bc *bc = xprt->xp_p1;

	xprt_unregister(xprt);
	end_call(bc);
	rr_clnt_bc_disable(bc->rr);
	clnt_rdma_release(bc->clnt);
	free(bc);
	svc_xprt_free(xprt);
}

static bool_t bc_xp_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	return FALSE;
}

static const struct xp_ops bc_ops = {
	.xp_recv = bc_recv,
	.xp_stat = bc_stat,
	.xp_getargs = bc_getargs,
	.xp_reply = bc_reply,
	.xp_freeargs = bc_freeargs,
	.xp_destroy = bc_xp_destroy,
};

static const struct xp_ops2 bc_ops2 = {
	.xp_control = bc_xp_control,
};

/* rpc_createerr (RPC_SYSTEMERROR, code) and why, in words. */
static SVCXPRT *bc_xp_fail(int code, const char *why)
{
	return rpcrdma_createerr_why(RPC_SYSTEMERROR, code,
				     "svc_rdma_bc_create", "%s", why);
}

/* The addresses the SVCXPRT names: the CLIENT's server, and (unknown
 * locally before a connection) the wildcard of its family. */
static SVCXPRT *bc_xprt(struct svc_rdma_bc *bc, CLIENT *cl, int fd)
{
	struct sockaddr_storage srv, any;
	struct netbuf nb = { .buf = &srv, .maxlen = sizeof(srv) };

	memset(&srv, 0, sizeof(srv));
	memset(&any, 0, sizeof(any));
	if (!clnt_control(cl, CLGET_SVC_ADDR, (char *)&nb))
		return NULL;
	memcpy(&srv, nb.buf, nb.len < sizeof(srv) ? nb.len : sizeof(srv));
	any.ss_family = srv.ss_family;
	return svc_xprt_new(fd, &bc_ops, &bc_ops2, bc, cl->cl_netid,
			    (struct sockaddr *)&any, (struct sockaddr *)&srv);
}

RPCRDMA_EXPORT SVCXPRT *svc_rdma_bc_create(CLIENT *cl)
{
	struct svc_rdma_bc *bc;
	struct rt_err err;
	SVCXPRT *xprt;

	if (!clnt_rdma_is(cl))
		return bc_xp_fail(
			EINVAL,
			"not an RDMA CLIENT (clnt_rdma_create, netid rdma or rdma6)");
	bc = calloc(1, sizeof(*bc));
	if (!bc)
		return bc_xp_fail(ENOMEM, "out of memory");
	bc->clnt = clnt_rdma_hold(cl);
	bc->rr = clnt_rdma_rr(bc->clnt);
	if (rr_clnt_bc_enable(bc->rr, &err)) {
		clnt_rdma_release(bc->clnt);
		free(bc);
		return bc_xp_fail(err.code, err.msg);
	}
	xprt = bc_xprt(bc, cl, rr_clnt_bc_fd(bc->rr));
	if (!xprt) {
		rr_clnt_bc_disable(bc->rr);
		clnt_rdma_release(bc->clnt);
		free(bc);
		return bc_xp_fail(ENOMEM, "out of memory");
	}
	xprt->xp_verf.oa_base = bc->verf;
	xprt_register(xprt);
	return xprt;
}

RPCRDMA_EXPORT int svc_rdma_bc_poll(SVCXPRT *xprt, int timeout_ms)
{
	struct pollfd pfd = { .events = POLLIN };
	struct svc_rdma_bc *bc;

	if (!xprt || xprt->xp_ops != &bc_ops) {
		errno = EINVAL;
		return -1;
	}
	bc = xprt->xp_p1;
	pfd.fd = xprt->xp_fd;
	if (!rr_clnt_bc_pending(bc->rr) && poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	/* it takes the calls waiting (XPRT_MOREREQS), and destroys xprt if
	 * the CLIENT is gone: xprt is not touched after it */
	svc_getreq_common(pfd.fd);
	return 1;
}
