/*
 * clnt_msg.h - the RPC messages of a CLIENT, as clnt_vc makes and reads
 * them: the Call (call header, procedure, AUTH_MARSHALL, AUTH_WRAP of the
 * arguments) and the Reply (xdr_replymsg, _seterr_reply, AUTH_VALIDATE,
 * AUTH_UNWRAP of the results).  One copy for both CLIENTs of the library:
 * the forward one (clnt_rdma.c) and the backward one that a server uses to
 * call its client (clnt_rdma_bc.c).
 */
#ifndef RPCRDMA_GLUE_CLNT_MSG_H
#define RPCRDMA_GLUE_CLNT_MSG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

/* What the encoder of one Call needs (an rr_encode_fn's arg). */
struct clnt_msg_call {
	CLIENT *cl;
	pthread_mutex_t *auth_lock; /* serializes AUTH_* on cl_auth */
	AUTH *anon;		    /* set: marshal this AUTH_NONE instead
				     * of cl_auth (the library's own NULL
				     * calls, doc/oneway.md) */
	uint32_t xid;
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	xdrproc_t xargs;
	void *argsp;
	/* Under RPCSEC_GSS, the Call as first encoded: every attempt of the
	 * RPC sends these octets (clnt_msg_encode) */
	uint8_t *gss_msg;
	uint32_t gss_len;  /* octets of the Call */
	uint32_t gss_body; /* where the arguments begin */
};

/*
 * Encode the whole Call on xdrs; rr_begin_body() before the arguments,
 * which a plain xdrmem stream ignores.  The requester calls it once per
 * attempt of the RPC (a resend after an RDMA_ERROR, a Long call after an
 * inline one that did not fit); under RPCSEC_GSS each attempt must carry
 * the same credential and sequence number, so the Call is encoded once
 * into memory of its own, and copied from there (clnt_msg_release frees
 * it).
 */
bool clnt_msg_encode(XDR *xdrs, void *arg);

/* Free what clnt_msg_encode kept of the call, once the RPC is over. */
void clnt_msg_release(struct clnt_msg_call *call);

/* Where a Reply is decoded from. */
#define CLNT_MSG_HEAD 24 /* xid, REPLY, MSG_ACCEPTED, AUTH_NONE, 0, SUCCESS */
struct clnt_msg_stream {
	XDR *xdrs;
	const uint8_t *head;	   /* its first CLNT_MSG_HEAD octets, unconsumed
			      * and in one piece, or NULL */
	bool (*finish)(void *ctx); /* whether the stream was consumed
				    * properly, after the results (or NULL) */
	void *ctx;
};

/*
 * Decode a Reply from in into *e (and the results into resp).  Returns
 * true when the server refused the call (the case AUTH_REFRESH may cure),
 * with reply for the refresh.
 */
bool clnt_msg_decode(CLIENT *cl, pthread_mutex_t *auth_lock,
		     const struct clnt_msg_stream *in, xdrproc_t xres,
		     void *resp, struct rpc_msg *reply, struct rpc_err *e);

/* AUTH_REFRESH under the lock. */
bool clnt_msg_refresh(CLIENT *cl, pthread_mutex_t *auth_lock,
		      struct rpc_msg *reply);

/* The requester's status as libtirpc's (documented in clnt_rdma_create(3)). */
struct rr_result;
void clnt_msg_status(const struct rr_result *res, struct rpc_err *e);

#endif /* RPCRDMA_GLUE_CLNT_MSG_H */
