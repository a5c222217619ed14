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

/* The table changed since memo was filled, or memo is of another program. */
static bool memo_stale(const struct rr_policy_memo *memo, rpcprog_t prog,
		       rpcvers_t vers)
{
	return !memo->gen || memo->gen != ulb_generation() ||
	       memo->prog != prog || memo->vers != vers;
}

/* Remember procedure proc of memo's program (0-63): its bits filled. */
static void memo_proc(struct rr_policy_memo *memo, rpcproc_t proc)
{
	uint64_t bit = (uint64_t)1 << proc;
	bool bound, placed;

	if (memo->procs_known & bit)
		return;
	/* the table changed in between: remember nothing */
	if (ulb_proc_bound(memo->prog, memo->vers, proc, &bound, &placed) !=
	    memo->gen) {
		memo->gen = 0;
		return;
	}
	memo->procs_known |= bit;
	if (bound)
		memo->procs_bound |= bit;
	if (placed)
		memo->procs_placed |= bit;
}

/*
 * Bring memo to (prog, vers) and the table of now, and proc's bits with
 * it; false when they cannot be remembered (a procedure past 63, or a
 * table that changed meanwhile): the caller asks the table itself.
 */
static bool memo_fill(struct rr_policy_memo *memo, rpcprog_t prog,
		      rpcvers_t vers, rpcproc_t proc)
{
	if (memo_stale(memo, prog, vers)) {
		memo->gen = ulb_bound(prog, vers, &memo->bound);
		memo->prog = prog;
		memo->vers = vers;
		memo->procs_known = 0;
		memo->procs_bound = 0;
		memo->procs_placed = 0;
	}
	if (!memo->bound || proc >= 64)
		return !memo->bound;
	memo_proc(memo, proc);
	return memo->gen != 0;
}

bool rr_policy_bound(struct rr_policy_memo *memo, rpcprog_t prog,
		     rpcvers_t vers, rpcproc_t proc)
{
	bool bound, placed;

	if (!memo_fill(memo, prog, vers, proc)) {
		if (proc >= 64 && memo->gen)
			return memo->bound;
		ulb_proc_bound(prog, vers, proc, &bound, &placed);
		return bound;
	}
	return memo->bound && (memo->procs_bound >> proc) & 1;
}

bool rr_policy_placed(struct rr_policy_memo *memo, rpcprog_t prog,
		      rpcvers_t vers, rpcproc_t proc)
{
	bool bound, placed;

	if (!memo_fill(memo, prog, vers, proc)) {
		ulb_proc_bound(prog, vers, proc, &bound, &placed);
		return placed;
	}
	return memo->bound && (memo->procs_placed >> proc) & 1;
}

/* The table's answers for proc into slot. */
static void slot_fill(struct rr_policy_slot *slot, rpcprog_t prog,
		      rpcvers_t vers, rpcproc_t proc, uint32_t dflt_min)
{
	const struct ulb_walker *walk;
	struct rpcrdma_ulb_entry call;

	slot->proc = proc;
	slot->call.mode = RW_DDP_NONE;
	if (!ulb_lookup(prog, vers, proc, RPCRDMA_ULB_CALL, &call, &walk)) {
		if (walk)
			ulb_walk_policy(walk, false, dflt_min, &slot->call);
		else
			ulb_ddp_policy(&call, false, dflt_min, &slot->call);
	}
	slot->reply_bound = !ulb_lookup(prog, vers, proc, RPCRDMA_ULB_REPLY,
					&slot->reply, &slot->reply_walk);
}

bool rr_policy_clnt(struct rr_policy_cache *cache, rpcprog_t prog,
		    rpcvers_t vers, rpcproc_t proc, uint32_t dflt_min,
		    struct rr_req *req, struct rpcrdma_ulb_entry *reply)
{
	struct rr_policy_slot *slot = &cache->slots[proc % RR_POLICY_SLOTS];
	unsigned int gen = cache->memo.gen;

	/* a memo of another program or table leaves gen unequal: refill,
	 * and keep it only if the table did not change meanwhile */
	if (!gen || cache->memo.prog != prog || cache->memo.vers != vers ||
	    slot->gen != gen || slot->proc != proc) {
		slot_fill(slot, prog, vers, proc, dflt_min);
		slot->gen = gen && cache->memo.prog == prog &&
					    cache->memo.vers == vers &&
					    ulb_generation() == gen ?
				    gen :
				    0;
	}
	req->ddp = slot->call;
	if (!slot->reply_bound)
		return false;
	*reply = slot->reply;
	req->reply_ulb = reply;
	req->reply_walk = slot->reply_walk;
	return true;
}

/*
 * What RPCSEC_GSS adds to the results: the sequence number and length of
 * rpc_gss_integ_data with its checksum, or the wrap token of
 * rpc_gss_priv_data (RFC 2203 5.3.2; a krb5 token is well under this),
 * beyond the reply verifier RR_REPLY_HDR already counts.
 */
#define GSS_WRAP_SLACK 1024u

/* An offset from the end of the arguments, which a prefix cannot give. */
static bool from_end(const struct rpcrdma_ulb_size *sz)
{
	return sz->kind == RPCRDMA_ULB_SIZE_ARG && sz->offset < 0;
}

uint32_t rr_policy_gss_reply_max(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
				 const void *args, size_t len, bool whole)
{
	const struct ulb_walker *walk;
	struct rpcrdma_ulb_entry e;
	uint32_t room = 0, max = 0;
	uint64_t want;

	if (ulb_lookup(prog, vers, proc, RPCRDMA_ULB_REPLY, &e, &walk) ||
	    walk || e.reply_max.kind == RPCRDMA_ULB_SIZE_NONE)
		return 0;
	if (!whole && (from_end(&e.room) || from_end(&e.reply_max)))
		return 0;
	if (rpcrdma_ulb_sizes(&e, args, len, &room, &max))
		return 0;
	want = (uint64_t)max + (uint64_t)__builtin_popcountll(e.items) * room +
	       GSS_WRAP_SLACK;
	return want < UINT32_MAX ? (uint32_t)want : UINT32_MAX;
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
