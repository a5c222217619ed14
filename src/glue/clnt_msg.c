/*
 * clnt_msg.c - a CLIENT's RPC Call and Reply messages (clnt_msg.h),
 * following clnt_vc_call.
 */
#include "config.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "glue/clnt_msg.h"
#include "rpc/rr_call.h"
#include "rpc/rr_policy.h"

/* The call header, the procedure and the credential and verifier of auth
 * (the RPC header, up to the arguments): the six words at once where the
 * stream gives them in one piece, as xdr_callmsg does. */
static bool encode_hdr(XDR *xdrs, const struct clnt_msg_call *call, AUTH *auth)
{
	int32_t *buf = XDR_INLINE(xdrs, 6 * BYTES_PER_XDR_UNIT);
	int32_t proc = (int32_t)call->proc;
	struct rpc_msg m;

	if (buf) {
		IXDR_PUT_U_INT32(buf, call->xid);
		IXDR_PUT_ENUM(buf, CALL);
		IXDR_PUT_U_INT32(buf, RPC_MSG_VERSION);
		IXDR_PUT_U_INT32(buf, call->prog);
		IXDR_PUT_U_INT32(buf, call->vers);
		IXDR_PUT_U_INT32(buf, call->proc);
		return AUTH_MARSHALL(auth, xdrs);
	}

	memset(&m, 0, sizeof(m));
	m.rm_xid = call->xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = call->prog;
	m.rm_call.cb_vers = call->vers;
	return xdr_callhdr(xdrs, &m) && XDR_PUTINT32(xdrs, &proc) &&
	       AUTH_MARSHALL(auth, xdrs);
}

/*
 * libtirpc's AUTH_NONE (authnone_create(): one AUTH for the process, its
 * marshalled credential made once) keeps no state a call changes, so its
 * operations need not be serialized by the CLIENT's auth lock.  Other
 * flavours do: AUTH_SYS takes a short-hand verifier in validate, and
 * RPCSEC_GSS counts sequence numbers.
 */
static const struct auth_ops *none_ops;
static pthread_once_t none_once = PTHREAD_ONCE_INIT;

static void none_init(void)
{
	AUTH *auth = authnone_create();

	none_ops = auth ? auth->ah_ops : NULL;
}

static bool auth_stateless(const AUTH *auth)
{
	pthread_once(&none_once, none_init);
	return none_ops && auth->ah_ops == none_ops;
}

/* Lock and unlock call's auth lock unless its AUTH needs none. */
static void auth_lock(pthread_mutex_t *lock, const AUTH *auth)
{
	if (!auth_stateless(auth))
		pthread_mutex_lock(lock);
}

static void auth_unlock(pthread_mutex_t *lock, const AUTH *auth)
{
	if (!auth_stateless(auth))
		pthread_mutex_unlock(lock);
}

static bool msg_is_gss(const AUTH *auth)
{
	return auth && auth->ah_cred.oa_flavor == RPCSEC_GSS;
}

/* Octets beyond the arguments an RPCSEC_GSS Call may need: the RPC
 * header with the largest credential and verifier, the sequence number,
 * the lengths and the checksum or wrap token of integrity and privacy. */
#define GSS_SLACK (6 * 4 + 2 * (8 + MAX_AUTH_BYTES) + 1024)

/*
 * The RPCSEC_GSS Call, encoded once into call->gss_msg (lock held).
 * AUTH_MARSHALL takes the context's next sequence number and the
 * credential carries it; AUTH_VALIDATE and AUTH_UNWRAP then check the
 * Reply against that number.  An attempt encoded again would take a new
 * one, and its Reply - which the server answers from the record of the
 * first attempt when the Reply did not fit (rr_srv_replay.c) - would carry
 * the old one: RPC_AUTHERROR.  So every attempt sends the same octets.
 */
static bool gss_encode_once(struct clnt_msg_call *call)
{
	AUTH *auth = call->cl->cl_auth;
	unsigned long want;
	u_int cap;
	XDR x;
	int i;

	want = call->xargs ? xdr_sizeof(call->xargs, call->argsp) : 0;
	if (want > UINT32_MAX / 2 - GSS_SLACK)
		return false;
	cap = (u_int)want + GSS_SLACK;
	/* a wrap token larger than the slack: once more, twice the room
	 * (a sequence number skipped is nothing to the server's window) */
	for (i = 0; i < 2; i++, cap *= 2) {
		call->gss_msg = malloc(cap);
		if (!call->gss_msg)
			return false;
		xdrmem_create(&x, (char *)call->gss_msg, cap, XDR_ENCODE);
		if (encode_hdr(&x, call, auth)) {
			call->gss_body = XDR_GETPOS(&x);
			if (AUTH_WRAP(auth, &x, call->xargs, call->argsp)) {
				call->gss_len = XDR_GETPOS(&x);
				return true;
			}
		}
		free(call->gss_msg);
		call->gss_msg = NULL;
	}
	return false;
}

static bool encode_gss(XDR *xdrs, struct clnt_msg_call *call)
{
	bool ok;

	if (!call->gss_msg) {
		pthread_mutex_lock(call->auth_lock);
		ok = gss_encode_once(call);
		pthread_mutex_unlock(call->auth_lock);
		if (!ok)
			return false;
	}
	ok = XDR_PUTBYTES(xdrs, (char *)call->gss_msg, call->gss_body);
	rr_begin_body(xdrs);
	return ok && XDR_PUTBYTES(xdrs, (char *)call->gss_msg + call->gss_body,
				  call->gss_len - call->gss_body);
}

bool clnt_msg_encode(XDR *xdrs, void *arg)
{
	struct clnt_msg_call *call = arg;
	AUTH *auth;
	bool ok;

	if (call->anon) {
		ok = encode_hdr(xdrs, call, call->anon);
		rr_begin_body(xdrs);
		return ok && call->xargs(xdrs, call->argsp);
	}
	if (msg_is_gss(call->cl->cl_auth))
		return encode_gss(xdrs, call);
	auth = call->cl->cl_auth;
	auth_lock(call->auth_lock, auth);
	ok = encode_hdr(xdrs, call, auth);
	rr_begin_body(xdrs); /* false for a plain stream: fine */
	ok = ok && AUTH_WRAP(auth, xdrs, call->xargs, call->argsp);
	auth_unlock(call->auth_lock, auth);
	return ok;
}

void clnt_msg_release(struct clnt_msg_call *call)
{
	free(call->gss_msg);
	call->gss_msg = NULL;
}

/*
 * The Reply nearly every call gets - accepted, an AUTH_NONE verifier of no
 * octets, SUCCESS - read as six words at once and skipped with XDR_INLINE,
 * where xdr_replymsg takes them one at a time through the stream (a tenth
 * of a NULL call's instructions, tests/bench/README.md).  False, nothing
 * consumed, for any other Reply.
 */
static bool msg_reply_common(const struct clnt_msg_stream *in,
			     struct rpc_msg *reply)
{
	static const uint32_t want[CLNT_MSG_HEAD / 4 - 1] = {
		REPLY, MSG_ACCEPTED, AUTH_NONE, 0, SUCCESS
	};
	const uint8_t *p = in->head;
	unsigned int i;
	uint32_t w;

	if (!p)
		return false;
	for (i = 0; i < CLNT_MSG_HEAD / 4 - 1; i++) {
		memcpy(&w, p + 4 * (i + 1), 4);
		if (ntohl(w) != want[i])
			return false;
	}
	if (!XDR_INLINE(in->xdrs, CLNT_MSG_HEAD))
		return false;
	memcpy(&w, p, 4);
	reply->rm_xid = ntohl(w);
	reply->rm_direction = REPLY;
	reply->rm_reply.rp_stat = MSG_ACCEPTED;
	reply->acpted_rply.ar_stat = SUCCESS;
	return true;
}

static void verf_free(struct rpc_msg *reply)
{
	if (reply->acpted_rply.ar_verf.oa_base)
		xdr_free((xdrproc_t)xdr_opaque_auth,
			 (char *)&reply->acpted_rply.ar_verf);
	reply->acpted_rply.ar_verf = _null_auth;
}

bool clnt_msg_decode(CLIENT *cl, pthread_mutex_t *lock,
		     const struct clnt_msg_stream *in, xdrproc_t xres,
		     void *resp, struct rpc_msg *reply, struct rpc_err *e)
{
	XDR *xdrs = in->xdrs;
	AUTH *auth;

	memset(reply, 0, sizeof(*reply));
	reply->acpted_rply.ar_verf = _null_auth;
	reply->acpted_rply.ar_results.where = NULL;
	reply->acpted_rply.ar_results.proc =
		(xdrproc_t)(void (*)(void))xdr_void;
	memset(e, 0, sizeof(*e));
	if (!msg_reply_common(in, reply) && !xdr_replymsg(xdrs, reply)) {
		e->re_status = RPC_CANTDECODERES;
		return false;
	}
	_seterr_reply(reply, e);
	if (e->re_status != RPC_SUCCESS) {
		/* an accepted Reply that failed (GARBAGE_ARGS, ...) still
		 * carries a verifier - RPCSEC_GSS's checksum of the sequence
		 * number - which AUTH_REFRESH does not read (libtirpc's
		 * clnt_vc leaks it here) */
		if (reply->rm_reply.rp_stat == MSG_ACCEPTED)
			verf_free(reply);
		return true;
	}
	auth = cl->cl_auth;
	auth_lock(lock, auth);
	if (!AUTH_VALIDATE(auth, &reply->acpted_rply.ar_verf)) {
		e->re_status = RPC_AUTHERROR;
		e->re_why = AUTH_INVALIDRESP;
	} else {
		rr_begin_body(xdrs);
		if (!AUTH_UNWRAP(auth, xdrs, xres, resp) ||
		    (in->finish && !in->finish(in->ctx)))
			e->re_status = RPC_CANTDECODERES;
	}
	auth_unlock(lock, auth);
	verf_free(reply);
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
