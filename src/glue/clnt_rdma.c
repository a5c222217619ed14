/*
 * clnt_rdma.c - the libtirpc CLIENT of netids "rdma" and "rdma6":
 * clnt_rdma_create() and the clnt_ops vector over the requester layer
 * (src/rpc/rr_call.h).  The only file that knows libtirpc's CLIENT
 * contract (libtirpc-integration.md 4.3); it never touches verbs.
 *
 * cl_call follows clnt_vc_call: the call header (xid, CALL, RPC version 2,
 * program, version), the procedure, AUTH_MARSHALL and AUTH_WRAP of the
 * arguments are encoded by rr_call() through its reducing stream; the Reply
 * is decoded with xdr_replymsg, _seterr_reply, AUTH_VALIDATE and
 * AUTH_UNWRAP on the decode stream rr_call() hands back, with up to two
 * AUTH_REFRESH retries (none for RPCSEC_GSS, whose context code retries
 * itself).  Which argument and result items move by RDMA is what the
 * Upper-Layer Binding table says for (program, version, procedure)
 * (src/ulb), looked up for each call; nothing is reduced under RPCSEC_GSS
 * (V1-GSS-3).
 *
 * Several threads may call on one CLIENT at once, up to the credits the
 * server grants.  clnt_vc's own rule applies to the CLIENT's settings and
 * the error of cl_geterr: they are per CLIENT, so with concurrent calls
 * cl_geterr reports the latest call to finish.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "compiler.h"
#include "glue/clnt_msg.h"
#include "glue/clnt_rdma.h"
#include "glue/rpcrdma_err.h"
#include "glue/rpcrdma_attr.h"
#include "glue/rpcrdma_stats.h"
#include "rpc/rr_call.h"
#include "rpc/rr_listen.h"
#include "rpc/rr_policy.h"

/* An RPC call header: xid, direction, rpcvers, prog, vers, proc, and the
 * credential and verifier of the largest size. */
#define CLNT_RDMA_HDR_MAX (6 * 4 + 2 * (8 + MAX_AUTH_BYTES))

struct clnt_rdma {
	atomic_uint refs; /* the CLIENT's, and a backward
					 * service's (svc_rdma_bc.c) */
	atomic_bool gone; /* clnt_destroy() was called */
	struct rr_clnt *rr;
	pthread_mutex_t lock;	   /* the members below */
	pthread_mutex_t auth_lock; /* AUTH_* operations on cl_auth */
	pthread_mutex_t gss_lock;  /* one RPCSEC_GSS call at a time */
	struct timeval wait;	   /* CLSET_TIMEOUT */
	bool waitset;
	struct timeval retry; /* CLSET_RETRY_TIMEOUT (unused) */
	uint32_t xid;	      /* XID of the latest call */
	rpcprog_t prog;
	rpcvers_t vers;
	struct rr_policy_cache ulb_cache; /* the binding of each procedure */
	struct rpc_err err;		  /* of the latest call to finish */
	char errmsg[RPCRDMA_ERRMSG_LEN];
	struct sockaddr_storage addr;
	struct netbuf nb;		    /* CLGET_SVC_ADDR: points at addr */
	struct rpcrdma_stats_reg stats_reg; /* RPCRDMA_STATS printing */
};

/* One call: its message (clnt_msg.h) and the binding of its results. */
struct clnt_rdma_enc {
	struct clnt_msg_call m;
	struct rpcrdma_ulb_entry reply_ulb; /* this call's results */
	/* a one-way call's: the NULL call the requester may send so that
	 * the server's reply gives back one-way credits (doc/oneway.md) */
	struct clnt_msg_call null_m;
	struct rr_req null_req;
};

static const struct clnt_ops clnt_rdma_ops;

bool clnt_rdma_is(const CLIENT *cl)
{
	return cl && cl->cl_ops == &clnt_rdma_ops;
}

static bool cl_is_gss(const CLIENT *cl)
{
	return cl->cl_auth && cl->cl_auth->ah_cred.oa_flavor == RPCSEC_GSS;
}

/* ---- Errors ------------------------------------------------------------- */

static void cl_set_err(struct clnt_rdma *clnt, const struct rpc_err *e,
		       const char *msg)
{
	pthread_mutex_lock(&clnt->lock);
	clnt->err = *e;
	/* Every successful call comes here with "": no formatting for it. */
	if (*msg)
		snprintf(clnt->errmsg, sizeof(clnt->errmsg), "%s", msg);
	else
		clnt->errmsg[0] = '\0';
	pthread_mutex_unlock(&clnt->lock);
}

/* ---- cl_call ------------------------------------------------------------ */

static int64_t cl_tv_ms(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
}

/*
 * What moves by direct data placement: what the Upper-Layer Binding table
 * says for this procedure, in each direction, as the CLIENT's cache
 * remembers it (clnt->lock held).  Not called under RPCSEC_GSS, whose
 * integrity and privacy services wrap the arguments and results into one
 * opaque blob (V1-GSS-2/3; libtirpc hides is_authgss_client(), hence
 * make_req's flavour test): gss_reply_max() instead.  Only the results
 * need the entry itself (its sizes depend on the encoded arguments).
 */
static void ddp_lookup(struct clnt_rdma *clnt, struct clnt_rdma_enc *e,
		       struct rr_req *req, xdrproc_t xres, void *resp)
{
	if (rr_policy_clnt(&clnt->ulb_cache, e->m.prog, e->m.vers, e->m.proc,
			   RPCRDMA_DEFAULT_DDP_MIN, req, &e->reply_ulb)) {
		req->xres = xres;
		req->resp = resp;
	}
}

/*
 * Under RPCSEC_GSS nothing is placed directly (V1-GSS-2/3), but a Reply
 * larger than the inline threshold still needs a Reply chunk offered with
 * the Call (V1-RP-1): the Linux kernel's server closes the connection
 * rather than answer ERR_CHUNK.  The Call carries the arguments wrapped,
 * so the binding's sizes (an NFS READ's count) are read from a plain
 * encoding of their first GSS_ARGS_PEEK octets instead.
 */
#define GSS_ARGS_PEEK 1024

static void gss_reply_max(const struct clnt_rdma_enc *e, struct rr_req *req)
{
	uint32_t words[GSS_ARGS_PEEK / 4];
	bool whole;
	XDR xdrs;

	if (!e->m.xargs)
		return;
	xdrmem_create(&xdrs, (char *)words, sizeof(words), XDR_ENCODE);
	whole = (*e->m.xargs)(&xdrs, e->m.argsp);
	req->reply_max = rr_policy_gss_reply_max(e->m.prog, e->m.vers,
						 e->m.proc, words,
						 xdr_getpos(&xdrs), whole);
	xdr_destroy(&xdrs);
}

/* A timeout clnt_vc refuses (its time_not_ok()): CLSET_TIMEOUT fails with
 * it, and a call's own is not remembered for CLGET_TIMEOUT. */
static bool bad_time(const struct timeval *t)
{
	return t->tv_sec <= -1 || t->tv_sec > 100000000 || t->tv_usec <= -1 ||
	       t->tv_usec > 1000000;
}

/* The NULL call of a one-way call's request: procedure 0 of the same
 * program and version, AUTH_NONE (no credential of the program's is
 * spent on it), nothing reduced. */
static void make_null_req(struct clnt_rdma_enc *e, uint32_t xid)
{
	e->null_m = e->m;
	e->null_m.xid = xid;
	e->null_m.proc = NULLPROC;
	e->null_m.anon = authnone_create();
	e->null_m.xargs = (xdrproc_t)(void (*)(void))xdr_void;
	e->null_m.argsp = NULL;
	memset(&e->null_req, 0, sizeof(e->null_req));
	e->null_req.xid = xid;
	e->null_req.encode = clnt_msg_encode;
	e->null_req.arg = &e->null_m;
	e->null_req.size_hint = CLNT_RDMA_HDR_MAX;
}

/* Set up one attempt: the XID, the deadline, the request.  A zero timeout
 * makes a one-way call (clnt_vc: "send, do not wait"), which reduces
 * nothing: the caller's memory is its own again when clnt_call returns. */
static void make_req(CLIENT *cl, struct clnt_rdma_enc *e, struct rr_req *req,
		     xdrproc_t xres, void *resp, struct timeval timeout)
{
	struct clnt_rdma *clnt = cl->cl_private;
	uint32_t null_xid;
	struct timeval tv;
	bool oneway, bound, gss = cl_is_gss(cl);

	memset(req, 0, sizeof(*req));
	pthread_mutex_lock(&clnt->lock);
	/* As clnt_vc: without CLSET_TIMEOUT, CLGET_TIMEOUT gives the latest
	 * call's timeout. */
	if (!clnt->waitset && !bad_time(&timeout))
		clnt->wait = timeout;
	tv = clnt->waitset ? clnt->wait : timeout;
	oneway = tv.tv_sec == 0 && tv.tv_usec == 0;
	e->m.xid = --clnt->xid;
	null_xid = oneway ? --clnt->xid : 0;
	e->m.prog = clnt->prog;
	e->m.vers = clnt->vers;
	/* no lookup for a program or procedure without a binding */
	bound = !oneway && rr_policy_bound(&clnt->ulb_cache.memo, clnt->prog,
					   clnt->vers, e->m.proc);
	if (bound && !gss)
		ddp_lookup(clnt, e, req, xres, resp);
	pthread_mutex_unlock(&clnt->lock);
	req->xid = e->m.xid;
	req->encode = clnt_msg_encode;
	req->arg = &e->m;
	req->size_hint = e->m.xargs ? xdr_sizeof(e->m.xargs, e->m.argsp) : 0;
	req->size_hint += CLNT_RDMA_HDR_MAX;
	req->send_only = oneway;
	req->deadline_ms = rr_deadline_ms(cl_tv_ms(&tv));
	if (!oneway) {
		if (bound && gss)
			gss_reply_max(e, req);
		return;
	}
	make_null_req(e, null_xid);
	req->null_req = &e->null_req;
}

static bool call_decoded(void *call)
{
	return rr_call_decoded(call);
}

static enum clnt_stat call_one(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
			       void *argsp, xdrproc_t xres, void *resp,
			       struct timeval timeout)
{
	struct clnt_rdma *clnt = cl->cl_private;
	struct clnt_rdma_enc enc = { .m = { .cl = cl,
					    .auth_lock = &clnt->auth_lock,
					    .proc = proc,
					    .xargs = xargs,
					    .argsp = argsp } };
	int refreshes = cl_is_gss(cl) ? 0 : 2;
	struct clnt_msg_stream in;
	struct rpc_msg reply;
	struct rr_result res;
	struct rr_call *call;
	struct rr_req req;
	struct rpc_err e;
	bool refused;

again:
	make_req(cl, &enc, &req, xres, resp, timeout);
	if (rr_call(clnt->rr, &req, &call, &res) != RR_OK) {
		clnt_msg_release(&enc.m);
		clnt_msg_status(&res, &e);
		/* clnt_vc: a zero timeout means "send, do not wait"; only a
		 * call without results (batching) reports success. */
		if (res.status == RR_SENT && xres)
			e.re_status = RPC_TIMEDOUT;
		cl_set_err(clnt, &e, res.msg);
		return e.re_status;
	}
	in = (struct clnt_msg_stream){ .xdrs = rr_call_xdr(call),
				       .head = rr_call_peek(call,
							    CLNT_MSG_HEAD),
				       .finish = call_decoded,
				       .ctx = call };
	refused = clnt_msg_decode(cl, &clnt->auth_lock, &in, xres, resp, &reply,
				  &e);
	rr_call_done(clnt->rr, call);
	clnt_msg_release(&enc.m);
	if (refused && refreshes-- > 0 &&
	    clnt_msg_refresh(cl, &clnt->auth_lock, &reply))
		goto again;
	cl_set_err(clnt, &e,
		   e.re_status == RPC_SUCCESS ? "" : clnt_sperrno(e.re_status));
	return e.re_status;
}

/*
 * libtirpc's RPCSEC_GSS context checks a Reply's verifier and wrapped
 * results against the sequence number it gave last (authgss_validate,
 * authgss_unwrap): the calls of a context must not overlap, or a Reply
 * is checked against another call's number and fails with
 * RPC_AUTHERROR.  clnt_vc serializes every call of a CLIENT; here only
 * RPCSEC_GSS calls are (other flavours keep their concurrency).
 */
static enum clnt_stat cl_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs,
			      void *argsp, xdrproc_t xres, void *resp,
			      struct timeval timeout)
{
	struct clnt_rdma *clnt = cl->cl_private;
	enum clnt_stat st;

	if (!cl_is_gss(cl))
		return call_one(cl, proc, xargs, argsp, xres, resp, timeout);
	pthread_mutex_lock(&clnt->gss_lock);
	st = call_one(cl, proc, xargs, argsp, xres, resp, timeout);
	pthread_mutex_unlock(&clnt->gss_lock);
	return st;
}

/* ---- The other operations ----------------------------------------------- */

static void cl_abort(CLIENT *cl)
{
}

static void cl_geterr(CLIENT *cl, struct rpc_err *errp)
{
	struct clnt_rdma *clnt = cl->cl_private;

	pthread_mutex_lock(&clnt->lock);
	*errp = clnt->err;
	pthread_mutex_unlock(&clnt->lock);
}

static bool_t cl_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	xdr_free(xres, resp);
	return TRUE;
}

static void cl_priv_free(struct clnt_rdma *clnt)
{
	pthread_mutex_destroy(&clnt->lock);
	pthread_mutex_destroy(&clnt->auth_lock);
	pthread_mutex_destroy(&clnt->gss_lock);
	free(clnt);
}

/* The last reference is gone: the connections with it. */
void clnt_rdma_release(struct clnt_rdma *clnt)
{
	if (!clnt || atomic_fetch_sub(&clnt->refs, 1) != 1)
		return;
	rpcrdma_stats_untrack(&clnt->stats_reg, true);
	rr_clnt_destroy(clnt->rr);
	cl_priv_free(clnt);
}

struct clnt_rdma *clnt_rdma_hold(CLIENT *cl)
{
	struct clnt_rdma *clnt;

	if (!clnt_rdma_is(cl))
		return NULL;
	clnt = cl->cl_private;
	atomic_fetch_add(&clnt->refs, 1);
	return clnt;
}

struct rr_clnt *clnt_rdma_rr(const struct clnt_rdma *clnt)
{
	return clnt->rr;
}

bool clnt_rdma_gone(const struct clnt_rdma *clnt)
{
	return atomic_load(&clnt->gone);
}

/* A backward service on the CLIENT's connections keeps them until it is
 * destroyed too (svc_rdma_bc.c); it is told to go. */
static void cl_destroy(CLIENT *cl)
{
	struct clnt_rdma *clnt = cl->cl_private;

	atomic_store(&clnt->gone, true);
	rr_clnt_bc_wake(clnt->rr);
	clnt_rdma_release(clnt);
	free(cl->cl_netid);
	free(cl->cl_tp);
	free(cl);
}

/* As clnt_vc's time_not_ok(). */
static enum rt_reg_mode reg_mode_rt(enum rpcrdma_reg_mode m)
{
	return m == RPCRDMA_REG_MW ? RT_REG_MW :
	       m == RPCRDMA_REG_MR ? RT_REG_MR :
				     RT_REG_AUTO;
}

static enum rpcrdma_reg_mode reg_mode_pub(enum rt_reg_mode m)
{
	return m == RT_REG_MW ? RPCRDMA_REG_MW :
	       m == RT_REG_MR ? RPCRDMA_REG_MR :
				RPCRDMA_REG_AUTO;
}

/* The requester's counters as <rpc/rpcrdma.h> publishes them. */
static void stats_get(struct clnt_rdma *clnt, struct rpcrdma_clnt_stats *o)
{
	struct rr_stats s;
	uint32_t inflight;

	rr_clnt_stats(clnt->rr, &s);
	memset(o, 0, sizeof(*o));
	o->calls = s.calls;
	o->replies = s.replies;
	o->long_calls = s.long_calls;
	o->long_replies = s.long_replies;
	o->inline_bytes = s.inline_bytes;
	o->long_bytes = s.long_bytes;
	o->read_chunks = s.read_chunks;
	o->read_bytes = s.read_bytes;
	o->write_chunks = s.write_chunks;
	o->write_bytes = s.write_bytes;
	o->reply_chunks = s.reply_chunks;
	o->reply_bytes = s.reply_bytes;
	o->ddp_zero_copies = s.ddp_zero_copies;
	o->ddp_copies = s.ddp_copies;
	o->ddp_copy_bytes = s.ddp_copy_bytes;
	o->ddp_caller_regs = s.ddp_caller_regs;
	o->registrations = s.conn.exposures;
	o->invalidations = s.conn.invalidations + s.conn.mr_fences;
	o->remote_invalidations = s.conn.remote_invs;
	o->err_vers = s.err_vers;
	o->err_chunk = s.err_chunk;
	o->timeouts = s.timeouts;
	o->discarded = s.discarded;
	o->conn_losses = s.conn_losses;
	o->connects = (uint32_t)s.connects;
	o->credits = rr_clnt_credits(clnt->rr, &inflight);
	o->max_granted = s.max_granted;
	o->max_inflight = s.max_inflight;
	o->v2_calls = s.v2_calls;
	o->vers_fallbacks = s.vers_fallbacks;
	o->resends = s.resends;
	o->inv_nominated = s.inv_nominated;
	o->bc_calls = s.bc_calls;
	o->bc_replies = s.bc_replies;
	o->bc_dropped = s.bc_dropped;
	o->waits_polled = s.waits_polled;
}

static void call_stats_get(struct clnt_rdma *clnt,
			   struct rpcrdma_clnt_call_stats *o)
{
	struct rr_stats s;

	rr_clnt_stats(clnt->rr, &s);
	memset(o, 0, sizeof(*o));
	o->oneway_calls = s.oneway_calls;
	o->null_calls = s.null_calls;
	o->abandoned = s.timeouts;
	o->late_replies = s.late_replies;
	o->recoveries = s.recoveries;
}

/* The server's properties as <rpc/rpcrdma.h> publishes them. */
static bool peer_props(struct clnt_rdma *clnt, struct rpcrdma_props *o)
{
	struct rw_props p;

	memset(o, 0, sizeof(*o));
	if (!rr_clnt_peer_props(clnt->rr, &p))
		return false;
	o->version = rr_clnt_version(clnt->rr, NULL);
	o->received = p.advertised != 0;
	o->rbsiz = p.val[RW_SP_RBSIZ];
	o->brs = p.val[RW_SP_BRS];
	return true;
}

/* RPCRDMA_STATS: the counters on destroy or at exit; RPCRDMA_STATS_SOCKET:
 * whenever asked, on the socket's thread (rpcrdma-environ(7)). */
static void stats_print(struct rpcrdma_stats_reg *reg, FILE *f)
{
	struct clnt_rdma *clnt =
		RPCRDMA_STATS_OWNER(reg, struct clnt_rdma, stats_reg);
	char label[RPCRDMA_STATS_LABEL_LEN];
	struct rpcrdma_clnt_stats st;
	rpcprog_t prog;
	rpcvers_t vers;

	stats_get(clnt, &st);
	/* CLSET_PROG and CLSET_VERS change them under the lock */
	pthread_mutex_lock(&clnt->lock);
	prog = clnt->prog;
	vers = clnt->vers;
	pthread_mutex_unlock(&clnt->lock);
	rpcrdma_stats_label(label, sizeof(label), "clnt",
			    (const struct sockaddr *)&clnt->addr, prog, vers);
	rpcrdma_stats_print_clnt(f, label, &st);
}

/* RDMA requests of <rpc/rpcrdma.h>; false for an unknown request. */
static bool_t control_rdma(struct clnt_rdma *clnt, u_int req, void *info)
{
	struct rt_err err;

	switch (req) {
	case CLGET_RDMA_REG_MODE:
		*(enum rpcrdma_reg_mode *)info =
			reg_mode_pub(rr_clnt_reg_mode(clnt->rr));
		return TRUE;
	case CLSET_RDMA_REG_MODE:
		if (*(enum rpcrdma_reg_mode *)info > RPCRDMA_REG_MR)
			return FALSE;
		if (!rr_clnt_set_reg_mode(clnt->rr,
					  reg_mode_rt(*(
						  enum rpcrdma_reg_mode *)info),
					  &err))
			return TRUE;
		pthread_mutex_lock(&clnt->lock);
		snprintf(clnt->errmsg, sizeof(clnt->errmsg), "%s", err.msg);
		pthread_mutex_unlock(&clnt->lock);
		return FALSE;
	case CLGET_RDMA_COMP_MODE:
		*(enum rpcrdma_comp_mode *)info = rr_clnt_busy_poll(clnt->rr) ?
							  RPCRDMA_COMP_POLL :
							  RPCRDMA_COMP_EVENT;
		return TRUE;
	case CLSET_RDMA_COMP_MODE:
		if (*(enum rpcrdma_comp_mode *)info > RPCRDMA_COMP_POLL)
			return FALSE;
		rr_clnt_set_busy_poll(clnt->rr,
				      *(enum rpcrdma_comp_mode *)info ==
					      RPCRDMA_COMP_POLL);
		return TRUE;
	case CLGET_RDMA_CREDITS:
		*(unsigned int *)info = rr_clnt_credits(clnt->rr, NULL);
		return TRUE;
	case CLGET_RDMA_ERRMSG:
		pthread_mutex_lock(&clnt->lock);
		memcpy(info, clnt->errmsg, sizeof(clnt->errmsg));
		pthread_mutex_unlock(&clnt->lock);
		return TRUE;
	case CLGET_RDMA_RR_STATS:
		rr_clnt_stats(clnt->rr, info);
		return TRUE;
	case CLGET_RDMA_STATS:
		stats_get(clnt, info);
		return TRUE;
	case CLGET_RDMA_CALL_STATS:
		call_stats_get(clnt, info);
		return TRUE;
	case CLGET_RDMA_VERSION:
		*(unsigned int *)info = rr_clnt_version(clnt->rr, NULL);
		return TRUE;
	case CLGET_RDMA_PEER_PROPS:
		return peer_props(clnt, info);
	default:
		return FALSE;
	}
}

/* The requests clnt_vc supports, with its semantics (lock held). */
static bool_t control_vc(struct clnt_rdma *clnt, u_int req, void *info)
{
	switch (req) {
	case CLSET_FD_CLOSE:
	case CLSET_FD_NCLOSE:
		return TRUE; /* the fd is the connection's own */
	case CLSET_TIMEOUT:
		if (bad_time(info))
			return FALSE;
		clnt->wait = *(struct timeval *)info;
		clnt->waitset = true;
		return TRUE;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = clnt->wait;
		return TRUE;
	case CLSET_RETRY_TIMEOUT:
		if (bad_time(info))
			return FALSE;
		clnt->retry = *(struct timeval *)info;
		return TRUE;
	case CLGET_RETRY_TIMEOUT:
		*(struct timeval *)info = clnt->retry;
		return TRUE;
	case CLGET_SERVER_ADDR:
		memcpy(info, &clnt->addr, clnt->nb.len);
		return TRUE;
	case CLGET_SVC_ADDR:
		*(struct netbuf *)info = clnt->nb; /* not to be freed */
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = clnt->xid; /* the previous call's */
		return TRUE;
	case CLSET_XID:
		clnt->xid = *(uint32_t *)info + 1; /* the next call's */
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
	default:
		return FALSE;
	}
}

static bool_t cl_control(CLIENT *cl, u_int req, void *info)
{
	struct clnt_rdma *clnt = cl->cl_private;
	bool_t ok;
	int fd;

	if (req == CLSET_FD_CLOSE || req == CLSET_FD_NCLOSE)
		return TRUE;
	if (!info)
		return FALSE;
	if (req == CLGET_FD) {
		fd = rr_clnt_fd(clnt->rr);
		if (fd < 0)
			return FALSE;
		*(int *)info = fd;
		return TRUE;
	}
	if (control_rdma(clnt, req, info))
		return TRUE;
	pthread_mutex_lock(&clnt->lock);
	ok = control_vc(clnt, req, info);
	pthread_mutex_unlock(&clnt->lock);
	return ok;
}

static const struct clnt_ops clnt_rdma_ops = {
	.cl_call = cl_call,
	.cl_abort = cl_abort,
	.cl_geterr = cl_geterr,
	.cl_freeres = cl_freeres,
	.cl_destroy = cl_destroy,
	.cl_control = cl_control,
};

/* ---- Creation ----------------------------------------------------------- */

/* A creation failure: rpc_createerr with words (per thread) and one
 * logged line. */
static CLIENT *cl_create_failed(enum clnt_stat st, int code, const char *msg)
{
	return rpcrdma_createerr_why(st, code, "clnt_rdma_create", "%s", msg);
}

static uint32_t first_xid(void)
{
	struct timespec ts;
	uint32_t x;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) == sizeof(x))
		return x;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)getpid() ^ (uint32_t)ts.tv_sec ^ (uint32_t)ts.tv_nsec;
}

static void make_opts(const struct rpcrdma_attr *a, struct rr_opts *o)
{
	struct rpcrdma_env env;

	rpcrdma_env_read(&env);
	memset(o, 0, sizeof(*o));
	rr_conn_attr_init(&o->conn);
	o->conn.credits = a->credits;
	o->conn.inline_send = a->inline_send;
	o->conn.inline_recv = a->inline_recv;
	o->conn.timeout_ms = a->connect_timeout_ms;
	o->conn.busy_poll = a->comp_mode == RPCRDMA_COMP_POLL;
	o->conn.reg_mode = reg_mode_rt(a->reg_mode);
	o->conn.no_remote_inv = env.no_remote_inv;
	o->conn.cache_bytes =
		rpcrdma_env_size("RPCRDMA_CACHE_BYTES", o->conn.cache_bytes);
	/* Receives for backward Calls, and one for the server's CONNPROP
	 * (AMB-V2-9) */
	o->conn.recv_extra = rpcrdma_attr_bc(a) ? rpcrdma_attr_bc(a) + 1 : 0;
	o->max_reply = a->max_reply_size;
	o->vers = a->version == RPCRDMA_VERSION_1 ? RR_VERS_1 :
		  a->version == RPCRDMA_VERSION_2 ? RR_VERS_2 :
						    RR_VERS_AUTO;
	o->v2_retry_s = env.v2_retry_s;
	o->no_inv_nominate = env.no_remote_inv;
	o->poll_us = rpcrdma_attr_poll_us(a);
	o->ddp_reg_min = rpcrdma_env_size("RPCRDMA_DDP_REG_MIN",
					  RPCRDMA_DEFAULT_DDP_REG_MIN);
}

static socklen_t cl_addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

static uint16_t addr_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ?
			     ((const struct sockaddr_in6 *)sa)->sin6_port :
			     ((const struct sockaddr_in *)sa)->sin_port);
}

static struct clnt_rdma *priv_alloc(const struct sockaddr *raddr,
				    rpcprog_t prog, rpcvers_t vers)
{
	struct clnt_rdma *clnt = calloc(1, sizeof(*clnt));

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
	if (pthread_mutex_init(&clnt->gss_lock, NULL)) {
		pthread_mutex_destroy(&clnt->auth_lock);
		pthread_mutex_destroy(&clnt->lock);
		free(clnt);
		return NULL;
	}
	atomic_init(&clnt->refs, 1);
	atomic_init(&clnt->gone, false);
	/* CLGET_TIMEOUT before any call and CLSET_TIMEOUT: 0, as clnt_vc */
	clnt->wait.tv_sec = 0;
	clnt->wait.tv_usec = 0;
	clnt->xid = first_xid();
	clnt->prog = prog;
	clnt->vers = vers;
	memcpy(&clnt->addr, raddr, cl_addr_len(raddr));
	clnt->nb.buf = &clnt->addr;
	clnt->nb.len = cl_addr_len(raddr);
	clnt->nb.maxlen = sizeof(clnt->addr);
	return clnt;
}

static CLIENT *cl_alloc(struct clnt_rdma *clnt, int family)
{
	CLIENT *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->cl_ops = (struct clnt_ops *)&clnt_rdma_ops;
	cl->cl_private = clnt;
	cl->cl_netid = strdup(family == AF_INET6 ? "rdma6" : "rdma");
	cl->cl_tp = strdup("-");
	cl->cl_auth = authnone_create();
	if (!cl->cl_netid || !cl->cl_tp || !cl->cl_auth) {
		free(cl->cl_netid);
		free(cl->cl_tp);
		free(cl);
		return NULL;
	}
	return cl;
}

/* Connecting failed: the transport's errno and text, as rpc_createerr. */
static CLIENT *connect_failed(const struct rt_err *err)
{
	return cl_create_failed(RPC_SYSTEMERROR, err->code ? err->code : EIO,
				err->msg);
}

RPCRDMA_EXPORT CLIENT *clnt_rdma_create(const struct sockaddr *raddr,
					rpcprog_t prog, rpcvers_t vers,
					const struct rpcrdma_attr *attr)
{
	struct rpcrdma_attr a;
	struct clnt_rdma *clnt;
	struct rr_opts o;
	struct rt_err err;
	CLIENT *cl;

	if (!raddr ||
	    (raddr->sa_family != AF_INET && raddr->sa_family != AF_INET6))
		return cl_create_failed(RPC_UNKNOWNADDR, EAFNOSUPPORT,
					"RDMA needs an IPv4 or IPv6 address");
	if (!addr_port(raddr))
		return cl_create_failed(RPC_UNKNOWNADDR, EINVAL,
					"the server address has no port");
	if (attr)
		a = *attr;
	else
		memset(&a, 0, sizeof(a));
	rpcrdma_attr_fill(&a);
	if (rpcrdma_attr_check(&a))
		return cl_create_failed(
			RPC_SYSTEMERROR, EINVAL,
			"invalid struct rpcrdma_attr (reserved fields must be zero, enums in range, bc_credits at most 256)");
	clnt = priv_alloc(raddr, prog, vers);
	cl = clnt ? cl_alloc(clnt, raddr->sa_family) : NULL;
	if (!cl) {
		if (clnt)
			cl_priv_free(clnt);
		return cl_create_failed(RPC_SYSTEMERROR, ENOMEM,
					"out of memory");
	}
	make_opts(&a, &o);
	clnt->rr = rr_clnt_create(raddr, &o, &err);
	if (!clnt->rr) {
		auth_destroy(cl->cl_auth);
		cl_priv_free(clnt);
		free(cl->cl_netid);
		free(cl->cl_tp);
		free(cl);
		return connect_failed(&err);
	}
	rpcrdma_stats_reg_init(&clnt->stats_reg, stats_print);
	rpcrdma_stats_track(&clnt->stats_reg);
	return cl;
}
