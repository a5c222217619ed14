/*
 * clnt_msg.call - a CLIENT's RPC Call and Reply messages (clnt_msg.h),
 * following clnt_vc_call.
 */
#include "config.h"

#include <string.h>

#include <rpc/rpc.h>

#include "glue/clnt_msg.h"
#include "rpc/rr_call.h"
#include "rpc/rr_policy.h"

bool clnt_msg_encode(XDR *xdrs, void *arg)
{
	struct clnt_msg_call *call = arg;
	struct rpc_msg m;
	int32_t proc = (int32_t)call->proc;
	bool ok;

	memset(&m, 0, sizeof(m));
	m.rm_xid = call->xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = call->prog;
	m.rm_call.cb_vers = call->vers;
	if (!xdr_callhdr(xdrs, &m) || !XDR_PUTINT32(xdrs, &proc))
		return false;
	if (call->anon) {
		ok = AUTH_MARSHALL(call->anon, xdrs);
		rr_begin_body(xdrs);
		return ok && call->xargs(xdrs, call->argsp);
	}
	pthread_mutex_lock(call->auth_lock);
	ok = AUTH_MARSHALL(call->cl->cl_auth, xdrs);
	rr_begin_body(xdrs); /* false for a plain stream: fine */
	ok = ok && AUTH_WRAP(call->cl->cl_auth, xdrs, call->xargs, call->argsp);
	pthread_mutex_unlock(call->auth_lock);
	return ok;
}

bool clnt_msg_decode(CLIENT *cl, pthread_mutex_t *auth_lock, XDR *xdrs,
		     xdrproc_t xres, void *resp, bool (*finish)(void *),
		     void *ctx, struct rpc_msg *reply, struct rpc_err *e)
{
	memset(reply, 0, sizeof(*reply));
	reply->acpted_rply.ar_verf = _null_auth;
	reply->acpted_rply.ar_results.where = NULL;
	reply->acpted_rply.ar_results.proc =
		(xdrproc_t)(void (*)(void))xdr_void;
	memset(e, 0, sizeof(*e));
	if (!xdr_replymsg(xdrs, reply)) {
		e->re_status = RPC_CANTDECODERES;
		return false;
	}
	_seterr_reply(reply, e);
	if (e->re_status != RPC_SUCCESS)
		return true;
	pthread_mutex_lock(auth_lock);
	if (!AUTH_VALIDATE(cl->cl_auth, &reply->acpted_rply.ar_verf)) {
		e->re_status = RPC_AUTHERROR;
		e->re_why = AUTH_INVALIDRESP;
	} else {
		rr_begin_body(xdrs);
		if (!AUTH_UNWRAP(cl->cl_auth, xdrs, xres, resp) ||
		    (finish && !finish(ctx)))
			e->re_status = RPC_CANTDECODERES;
	}
	pthread_mutex_unlock(auth_lock);
	if (reply->acpted_rply.ar_verf.oa_base)
		xdr_free((xdrproc_t)xdr_opaque_auth,
			 (char *)&reply->acpted_rply.ar_verf);
	return false;
}

bool clnt_msg_refresh(CLIENT *cl, pthread_mutex_t *auth_lock,
		      struct rpc_msg *reply)
{
	bool ok;

	pthread_mutex_lock(auth_lock);
	ok = AUTH_REFRESH(cl->cl_auth, reply);
	pthread_mutex_unlock(auth_lock);
	return ok;
}

/* rr_call's statuses as libtirpc's (documented in clnt_rdma_create(3)). */
void clnt_msg_status(const struct rr_result *res, struct rpc_err *e)
{
	memset(e, 0, sizeof(*e));
	switch (res->status) {
	case RR_OK:
	case RR_SENT:
		e->re_status = RPC_SUCCESS;
		break;
	case RR_TIMEDOUT:
		e->re_status = RPC_TIMEDOUT;
		break;
	case RR_CANTENCODE:
		e->re_status = RPC_CANTENCODEARGS;
		break;
	case RR_CANTSEND:
		e->re_status = RPC_CANTSEND;
		e->re_errno = res->err;
		break;
	case RR_CANTRECV:
		e->re_status = RPC_CANTRECV;
		e->re_errno = res->err;
		break;
	case RR_ERR_VERS:
	case RR_ERR_CHUNK:
		/* RDMA_ERROR: permanent (V1-ERR-9).  ERR_VERS gives
		 * EPROTONOSUPPORT, ERR_CHUNK EREMOTEIO. */
		e->re_status = RPC_SYSTEMERROR;
		e->re_errno = res->err;
		break;
	case RR_CANTDECODE:
		e->re_status = RPC_CANTDECODERES;
		break;
	}
}
