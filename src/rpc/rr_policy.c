/*
 * rr_policy.c - per-call direct data placement policy for the glue
 * (rr_policy.h): the Upper-Layer Binding table (src/ulb) asked for the
 * procedure of a call, and the RPCSEC_GSS rule.
 */
#include "config.h"

#include "rpc/rr_policy.h"
#include "ulb/ulb.h"
#include "wire/rw_be.h"
#include "wire/rw_xdr.h"

bool rr_policy_bound(struct rr_policy_memo *memo, rpcprog_t prog,
		     rpcvers_t vers)
{
	if (memo->gen && memo->gen == ulb_generation() && memo->prog == prog &&
	    memo->vers == vers)
		return memo->bound;
	memo->gen = ulb_bound(prog, vers, &memo->bound);
	memo->prog = prog;
	memo->vers = vers;
	return memo->bound;
}

bool rr_policy_clnt(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
		    bool wrapped, uint32_t dflt_min, struct rr_req *req,
		    struct rpcrdma_ulb_entry *reply)
{
	const struct ulb_walker *walk;
	struct rpcrdma_ulb_entry call;

	req->ddp.mode = RW_DDP_NONE;
	if (wrapped)
		return false;
	if (!ulb_lookup(prog, vers, proc, RPCRDMA_ULB_CALL, &call, &walk)) {
		if (walk)
			ulb_walk_policy(walk, false, dflt_min, &req->ddp);
		else
			ulb_ddp_policy(&call, false, dflt_min, &req->ddp);
	}
	if (ulb_lookup(prog, vers, proc, RPCRDMA_ULB_REPLY, reply,
		       &req->reply_walk))
		return false;
	req->reply_ulb = reply;
	return true;
}

void rr_policy_srv(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc, bool wrapped,
		   enum rpcrdma_ulb_dir dir, struct rw_ddp_policy *pol)
{
	const struct ulb_walker *walk;
	struct rpcrdma_ulb_entry e;

	if (wrapped || ulb_lookup(prog, vers, proc, dir, &e, &walk))
		ulb_ddp_policy(NULL, true, 0, pol);
	else if (walk)
		ulb_walk_policy(walk, dir == RPCRDMA_ULB_REPLY, 0, pol);
	else
		ulb_ddp_policy(&e, true, 0, pol);
}

/*
 * Under RPCSEC_GSS (RFC 2203 section 5) the credential body is version,
 * gss_proc, seq_num, service, handle: the arguments are the procedure's
 * own only for RPCSEC_GSS_DATA (0) with rpc_gss_svc_none (1); integrity
 * and privacy wrap them (V1-GSS-3), the control procedures carry tokens.
 * A credential too short to say counts as wrapped.
 */
bool rr_policy_gss_wrapped(const struct opaque_auth *cred)
{
	const uint8_t *p = (const uint8_t *)cred->oa_base;

	if (cred->oa_flavor != RPCSEC_GSS)
		return false;
	if (!p || cred->oa_length < 16)
		return true;
	return rw_get32(p) != 1 || rw_get32(p + 4) != 0 ||
	       rw_get32(p + 12) != 1;
}

bool rr_begin_body(XDR *xdrs)
{
	return rw_xdr_begin_body(xdrs);
}
