/*
 * rr_policy.h - what moves by direct data placement in one call, decided
 * in src/rpc for the glue (prefix rr_policy_, rr_): the Upper-Layer Binding
 * lookup of (program, version, procedure) in each direction, the
 * RPCSEC_GSS rule (nothing is placed when the body is wrapped, V1-GSS-3),
 * and where the RPC body begins on a call's XDR stream.
 *
 * The glue only knows libtirpc: it names the procedure and says whether
 * the body is wrapped; these functions give the policy the requester
 * (rr_req) or the responder (rr_sreq_set_ddp, rr_sreq_enc) applies.
 */
#ifndef RR_POLICY_H
#define RR_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>
#include <rpc/rpcrdma.h>

#include "rpc/rr_call.h"

/*
 * Whether procedure proc of program prog version vers has an Upper-Layer
 * Binding, remembered in memo (owned and serialized by the caller: one per
 * CLIENT or connection) until the table changes: for the program as a
 * whole, and for each of its procedures 0-63 once asked about.  A call of
 * a procedure without one then costs no lookup (a NULL call of a bound
 * program included).  Without one, rr_policy_clnt() and rr_policy_srv()
 * would give no placement: the caller may skip them.
 */
struct rr_policy_memo {
	unsigned int gen; /* 0: nothing remembered */
	rpcprog_t prog;
	rpcvers_t vers;
	bool bound;	       /* the program has an entry */
	uint64_t procs_known;  /* procedures asked about, bit per number */
	uint64_t procs_bound;  /* ... and of them those with an entry */
	uint64_t procs_placed; /* ... and those whose entry places an item */
};

bool rr_policy_bound(struct rr_policy_memo *memo, rpcprog_t prog,
		     rpcvers_t vers, rpcproc_t proc);

/*
 * The same, for a binding that places something in either direction (an
 * eligible item, or a walker's pick).  A binding that only bounds the
 * size of the results (rpcrdma-ulbgen's "reply max=N" of every
 * procedure) places nothing: rr_policy_srv() would give RW_DDP_NONE for
 * it, so a responder may skip that lookup as well.
 */
bool rr_policy_placed(struct rr_policy_memo *memo, rpcprog_t prog,
		      rpcvers_t vers, rpcproc_t proc);

/*
 * A requester's answers of rr_policy_clnt(), remembered per procedure
 * (RR_POLICY_SLOTS of them, by number modulo the count) until the table
 * changes, so that the calls of a bound procedure cost a copy and no
 * lookup.  Owned and serialized by the caller, one per CLIENT.
 */
#define RR_POLICY_SLOTS 16

struct rr_policy_slot {
	unsigned int gen; /* the memo's when filled; 0: empty */
	rpcproc_t proc;
	bool reply_bound; /* reply and reply_walk hold a REPLY entry */
	struct rw_ddp_policy call;
	const struct ulb_walker *reply_walk;
	struct rpcrdma_ulb_entry reply;
};

struct rr_policy_cache {
	struct rr_policy_memo memo;
	struct rr_policy_slot slots[RR_POLICY_SLOTS];
};

/*
 * Under RPCSEC_GSS nothing is placed directly, but a binding still bounds
 * the results: the largest, every eligible item inline, for plain
 * arguments args of len octets (their XDR encoding if whole, else only its
 * first len octets), plus room for what integrity or privacy adds.  0 when
 * the procedure has no REPLY entry with a bound, or when the words its
 * sizes are read from are not within what is known.
 */
uint32_t rr_policy_gss_reply_max(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
				 const void *args, size_t len, bool whole);

/*
 * A requester's policy for a call of a bound procedure (rr_policy_bound()
 * true, just asked of cache->memo): the arguments' placement in req->ddp,
 * and whether the results have a REPLY entry (then copied to *reply,
 * req->reply_ulb pointing at it, and req->reply_walk set).  Arguments
 * shorter than dflt_min stay inline unless the entry says otherwise; the
 * cache assumes one dflt_min per CLIENT.
 */
bool rr_policy_clnt(struct rr_policy_cache *cache, rpcprog_t prog,
		    rpcvers_t vers, rpcproc_t proc, uint32_t dflt_min,
		    struct rr_req *req, struct rpcrdma_ulb_entry *reply);

/*
 * The server's policy for one call in direction dir: its binding entry, or
 * nothing eligible (no entry, or wrapped).  No minimum size: the decoder
 * takes a chunk at any eligible item, and a reply places every eligible
 * result it has a Write chunk for (V1-WC-2).
 */
void rr_policy_srv(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc, bool wrapped,
		   enum rpcrdma_ulb_dir dir, struct rw_ddp_policy *pol);

/*
 * Is the body of a call with this credential anything but the procedure's
 * XDR (RPCSEC_GSS integrity, privacy or a control procedure)?
 */
bool rr_policy_gss_wrapped(const struct opaque_auth *cred);

/* The RPC header is done: what follows on xdrs is the body, where items
 * are counted (false for a stream that is not ours: harmless). */
bool rr_begin_body(XDR *xdrs);

#endif /* RR_POLICY_H */
