/*
 * rr_call.h - the requester's marshaling layer (prefix rr_): one RPC call,
 * as data, over one RPC-over-RDMA v1 connection (architecture.md "One call,
 * as data"; RFC 8166 §3.3-3.5, §4.4-4.5).
 *
 * An rr_clnt is what a CLIENT talks through: the current connection to one
 * server (reconnected by the next call after it was lost), its credit
 * window, the table of calls in flight matched by XID, and the threads
 * waiting for them.  It knows RPC-over-RDMA (the transport header, chunks,
 * credits, fencing) but not libtirpc's CLIENT: the caller hands it an
 * encoder for the RPC message and gets back a decode stream over the Reply.
 *
 * One call:
 *   rr_call() takes a credit (waiting, up to the deadline, while there is
 *   none; a new connection starts with one, V1-CR-6), encodes the RPC
 *   message with req->encode through the reducing stream (rw_rxdr, policy
 *   req->ddp), decides Short or Long with rw_plan (Long: the message goes in
 *   a Position-Zero Read chunk exposed read-only, V1-RP-4), offers a Reply
 *   chunk exposed remote-write whenever the largest possible Reply (the
 *   max_reply option) might not fit inline (V1-RP-1/2), encodes the
 *   transport header (rw_encode_call), posts the Send and waits for the
 *   Reply with its XID.  A Reply is decoded and checked against what the
 *   Call offered before anything in it is used (rw_validate_reply; a bad one
 *   is dropped and counted, V1-ERR-4); then every exposure of the call is
 *   revoked (rt_reg_revoke) before the result is decoded (V1-MR-2/6), and
 *   rr_call_xdr() gives the reassembling decode stream over the inline
 *   payload or the Reply chunk.  RDMA_ERROR ends the call for good
 *   (V1-ERR-9).  rr_call_done() gives everything back.
 *
 * Ending early: a call that times out, or whose connection is lost, goes
 * through the same completion path.  Memory of the caller exposed to the
 * peer (reduced items) is revoked before rr_call() returns; the layer's own
 * buffers (the PZRC copy of the message, the Reply chunk) stay exposed as
 * long as the peer may still use them - until the late Reply arrives or the
 * connection ends - and are revoked then, before they are reused (V1-MR-4,
 * V1-MR-7).  Such an orphaned call keeps its credit until then (V1-CR-4);
 * when orphans hold every credit and a new call cannot get one in time, the
 * connection is closed so that the next call starts afresh.
 *
 * Threads: every function may be called from several threads at once on
 * one rr_clnt.  The connection itself is not thread-safe (rt_conn.h), so a
 * mutex serializes every use of it; one waiting thread at a time (the
 * leader) sleeps on the connection's fd, collects completions and hands the
 * other threads their replies.
 */
#ifndef RR_CALL_H
#define RR_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/types.h>
#include <rpc/xdr.h>
#include <rpc/rpcrdma.h>

#include "transport/rt_conn.h"
#include "transport/rt_err.h"
#include "wire/rw_xdr.h"
#include "wire/rw_props.h"

struct rr_clnt;
struct rr_call;

/* Which RPC-over-RDMA version an rr_clnt speaks (v2-05 §8). */
enum rr_vers_mode {
	RR_VERS_AUTO = 0, /* v2 first, v1 if the server says ERR_VERS or
				 * is remembered not to speak v2 */
	RR_VERS_1 = 1,
	RR_VERS_2 = 2, /* v2 only: ERR_VERS fails the call */
};

/* How an rr_clnt connects, and the largest Reply it accepts. */
struct rr_opts {
	struct rt_conn_attr conn; /* credits, inline sizes, busy_poll,
					 * reg_mode, connect timeout */
	size_t max_reply;	  /* largest Reply payload accepted, at
					 * most RR_MAX_REPLY.  A Reply of
					 * unknown size is first asked inline;
					 * only when the server says it does
					 * not fit is a Reply chunk offered
					 * (the size the server names in v2;
					 * in v1 RR_REPLY_FIRST, then larger
					 * up to this size) */
	size_t ddp_reg_min;	  /* smallest caller result buffer a
					 * Write chunk points at directly
					 * (registered); smaller ones get pool
					 * memory and one copy */
	enum rr_vers_mode vers;
	uint32_t v2_retry_s;  /* how long a server found without v2
					 * is spoken to in v1 (RR_VERS_AUTO) */
	bool no_inv_nominate; /* v2: never ask for remote
					 * invalidation */
	uint32_t poll_us;     /* event mode: most microseconds a waiting
			       * thread polls before it sleeps
			       * (rr_spin.h; 0: never) */
};

#define RR_MAX_REPLY ((size_t)1 << 30)
/* The Reply chunk of the first resend in v1, where the error does not say
 * how much is needed, and of the next ones: RR_REPLY_STEP times larger, at
 * most RR_REPLY_STEPS resends, never beyond max_reply. */
#define RR_REPLY_FIRST ((size_t)1 << 20)
#define RR_REPLY_STEP  16
#define RR_REPLY_STEPS 3

enum rr_status {
	RR_OK = 0,     /* Reply ready: rr_call_xdr() */
	RR_SENT,       /* send-only call posted, no Reply awaited */
	RR_TIMEDOUT,   /* no Reply before the deadline */
	RR_CANTENCODE, /* the encoder failed */
	RR_CANTSEND,   /* not sent: no connection, or posting
				 * failed */
	RR_CANTRECV,   /* sent, then the connection was lost */
	RR_ERR_VERS,   /* RDMA_ERROR / ERR_VERS (V1-ERR-9) */
	RR_ERR_CHUNK,  /* RDMA_ERROR / ERR_CHUNK or another code,
				 * after any resend it allowed */
	RR_CANTDECODE, /* Reply unusable once fenced */
};

/* Why a call failed: status, errno value and one line of text. */
struct rr_result {
	enum rr_status status;
	int err;
	uint32_t vers_low, vers_high; /* RR_ERR_VERS */
	char msg[RT_ERR_MSG_LEN];
};

/* Encode the whole RPC Call message (header, credentials, arguments) on
 * xdrs; call rw_xdr_begin_body(xdrs) right before the arguments. */
typedef bool (*rr_encode_fn)(XDR *xdrs, void *arg);

struct ulb_walker;

struct rr_req {
	uint32_t xid; /* the XID the encoder writes */
	rr_encode_fn encode;
	void *arg;
	size_t size_hint; /* expected octets of the message; 0: unknown */
	struct rw_ddp_policy ddp; /* which arguments to reduce (RW_DDP_NONE
				   * without an Upper-Layer Binding, and
				   * always with RPCSEC_GSS integrity or
				   * privacy, V1-GSS-3) */
	/* Results: the ULB entry saying which result items get Write chunks
	 * and how large the Reply may be (NULL: none, and never under
	 * RPCSEC_GSS integrity or privacy, V1-GSS-3), and the caller's
	 * results, probed for buffers to place them in (rw_pxdr). */
	const struct rpcrdma_ulb_entry *reply_ulb;
	const struct ulb_walker *reply_walk; /* a walker binding's
						 * results (ulb.h) */
	xdrproc_t xres;
	void *resp;
	/* The largest results the caller knows of when the binding cannot be
	 * read from the Call (RPCSEC_GSS: rr_policy_gss_reply_max), octets of
	 * RPC message after the reply header; 0: none.  Larger than the
	 * inline threshold, it gets a Reply chunk on the first attempt
	 * (V1-RP-1): a peer need not answer ERR_CHUNK. */
	uint32_t reply_max;
	int64_t deadline_ms; /* rr_deadline_ms() */
	bool send_only;	     /* post and return RR_SENT: a one-way Call */
	/* With send_only: a NULL Call (procedure 0 of the same program,
	 * an XID of its own, nothing reduced) the layer may send, and for
	 * a connection not yet settled wait for, so that the Reply to it
	 * brings back the credits one-way Calls hold (doc/oneway.md).
	 * NULL: none, and one-way Calls then wait for a later Call's
	 * Reply. */
	const struct rr_req *null_req;
};

/* Counters of one rr_clnt, cumulative over its connections. */
struct rr_stats {
	uint64_t calls;	       /* Calls sent */
	uint64_t short_calls;  /* ... inline (RDMA_MSG) */
	uint64_t long_calls;   /* ... Long (RDMA_NOMSG + PZRC) */
	uint64_t reply_chunks; /* Reply chunks offered */
	uint64_t long_replies; /* Replies that came in the Reply chunk */
	uint64_t replies;      /* Replies accepted */
	uint64_t rdma_errors;  /* RDMA_ERRORs that ended a call of ours */
	uint64_t discarded;    /* Replies dropped (V1-ERR-4, V1-ERR-10) */
	uint64_t unknown_xid;  /* Replies for no call of ours */
	uint64_t orphans;      /* calls abandoned (timeout, send-only) */
	uint64_t oneway_calls; /* send-only Calls (doc/oneway.md) */
	uint64_t null_calls;   /* NULL Calls the layer sent for their
				* credits */
	uint64_t recoveries;   /* connections closed because calls that
				* timed out held every credit */
	uint64_t late_replies; /* Replies to abandoned calls */
	uint64_t foreign_inv;  /* Send With Invalidate of a handle the call
				 * did not nominate */
	uint64_t timeouts;
	uint64_t connects;     /* connections made */
	uint64_t inline_bytes; /* RPC octets sent and received inline */
	uint64_t long_bytes;   /* octets of Long Calls (PZRC) */
	uint64_t read_chunks;  /* argument items sent in Read chunks */
	uint64_t read_bytes;
	uint64_t write_chunks;	  /* Write chunks offered */
	uint64_t write_bytes;	  /* octets returned in them */
	uint64_t reply_bytes;	  /* octets of Replies in the Reply chunk */
	uint64_t ddp_zero_copies; /* result items decoded in place */
	uint64_t ddp_copies;	  /* result items copied from pool memory */
	uint64_t ddp_copy_bytes;
	uint64_t ddp_caller_regs; /* caller buffers exposed as Write chunks */
	uint64_t err_vers;	  /* RDMA_ERROR / ERR_VERS that ended a call */
	uint64_t err_chunk;	  /* RDMA_ERROR / ERR_CHUNK (or another code)
				 * that ended a call (not one a resend
				 * cured: see resends) */
	struct rt_stats conn;	  /* transport counters of the connections
				 * already gone (rr_clnt_stats adds the
				 * current one) */
	uint64_t conn_losses;	  /* connections found dead */
	uint64_t revoke_failures; /* fences that closed the connection */
	uint32_t max_inflight;	  /* most Calls outstanding at once */
	uint32_t over_grant;	  /* Calls sent beyond the grant (must be 0) */
	uint32_t max_granted;	  /* largest grant received */
	/* RPC-over-RDMA v2 */
	uint64_t v2_calls;	 /* Calls sent in version 2 */
	uint64_t vers_fallbacks; /* connections that went on in v1 after
				 * ERR_VERS (or were known to need it) */
	uint64_t resends;	 /* Calls sent again after an RDMA_ERROR that
				 * allowed it (same XID) */
	uint64_t inv_nominated;	 /* v2 Calls naming a handle to invalidate */
	uint64_t connprops;	 /* CONNPROP messages sent */
	uint64_t peer_props;	 /* CONNPROP/UPDPROP received and applied */
	uint64_t bc_dropped;	 /* backward-direction messages dropped: no
				 * backward service yet, chunks, over the
				 * backward grant */
	uint64_t bc_calls;	 /* backward Calls taken */
	uint64_t bc_replies;	 /* backward Replies sent */
	uint64_t waits_polled;	 /* event mode: waits for a Reply that
				 * polling ended, without a sleep */
};

/* Milliseconds of CLOCK_MONOTONIC_COARSE, the clock of rr_req.deadline_ms;
 * rr_tick_ms() is how far it may lag; rr_deadline_ms() is timeout_ms from
 * now, a tick added so that it does not come early. */
int64_t rr_now_ms(void);
int64_t rr_tick_ms(void);
int64_t rr_deadline_ms(int64_t timeout_ms);

/*
 * Could this host reach dst over RDMA (an RDMA device, the address and
 * route resolved within timeout_ms, 0: the default)?  0, or a negative
 * errno with err saying why (rt_probe()); dst NULL: is there an RDMA
 * device at all?  Lets a caller name the missing device before it asks
 * anyone else, e.g. rpcbind, about the server.
 */
int rr_clnt_probe(const struct sockaddr *dst, unsigned int timeout_ms,
		  struct rt_err *err);

/*
 * Connect to dst (with port) and return the requester state, or NULL with
 * err saying why (rt_connect()'s messages: no device, refused, ...).
 */
struct rr_clnt *rr_clnt_create(const struct sockaddr *dst,
			       const struct rr_opts *opts, struct rt_err *err);

/* Wait (boundedly) for calls still being finished, fence and free all. */
void rr_clnt_destroy(struct rr_clnt *rr);

/*
 * Perform one call.  RR_OK: *callp is the finished call, whose decode
 * stream is rr_call_xdr(); give it back with rr_call_done().  Any other
 * status: *callp is NULL and res says why (res is filled for RR_OK too).
 */
enum rr_status rr_call(struct rr_clnt *rr, const struct rr_req *req,
		       struct rr_call **callp, struct rr_result *res);

/* The Reply's decode stream (reassembling, over the inline payload or the
 * Reply chunk, already fenced).  Call rw_xdr_begin_body() before the
 * results. */
XDR *rr_call_xdr(struct rr_call *call);

/* The next len octets of that stream, not consumed, where they lie in one
 * piece (rw_axdr_peek): a caller may read a fixed header at once, then
 * skip it with XDR_INLINE.  NULL otherwise. */
const uint8_t *rr_call_peek(const struct rr_call *call, unsigned int len);

/* After decoding: false if the stream failed or was left unfinished. */
bool rr_call_decoded(struct rr_call *call);

/* Give back the Receive buffer, the chunk memory and the slot. */
void rr_call_done(struct rr_clnt *rr, struct rr_call *call);

/* ---- Control ---------------------------------------------------------- */

/* The current connection's pollable fd, or -1 when there is none. */
int rr_clnt_fd(struct rr_clnt *rr);

/* The current connection's registration mode (RT_REG_AUTO if none) and
 * forcing one: applied to the current connection if it can change now,
 * else that connection is replaced by the next call that finds it idle;
 * every later connection uses it.  -ENOTSUP: the device cannot. */
enum rt_reg_mode rr_clnt_reg_mode(struct rr_clnt *rr);
int rr_clnt_set_reg_mode(struct rr_clnt *rr, enum rt_reg_mode m,
			 struct rt_err *err);

/* Completion mode: busy polling or sleeping on the completion channel.  A
 * change takes effect on the next connection; an idle connection in the
 * other mode is replaced at the next call. */
bool rr_clnt_busy_poll(struct rr_clnt *rr);
void rr_clnt_set_busy_poll(struct rr_clnt *rr, bool busy);

/* The grant in force on the current connection (1 until the first Reply,
 * V1-CR-6), and the number of calls outstanding. */
uint32_t rr_clnt_credits(struct rr_clnt *rr, uint32_t *inflight);

/* The RPC-over-RDMA version of the current connection: 1 or 2, 0 with no
 * connection; *known (if given): a valid Reply has settled it. */
uint32_t rr_clnt_version(struct rr_clnt *rr, bool *known);

/* The server's transport properties as received (defaults until its
 * CONNPROP arrives), false with no connection. */
struct rw_props;
bool rr_clnt_peer_props(struct rr_clnt *rr, struct rw_props *out);

/* ---- Backward direction (RFC 8167, rr_bc.c) ----------------------------- */

struct rr_bcq;

/*
 * Take backward-direction Calls from now on (the program is ready,
 * V1-BD-7); they are dropped before.  -EINVAL when the connections keep no
 * Receives for them (opts.conn.recv_extra 0).
 */
int rr_clnt_bc_enable(struct rr_clnt *rr, struct rt_err *err);
/* Stop, and drop what waits. */
void rr_clnt_bc_disable(struct rr_clnt *rr);
/* Readable when rr_clnt_bc_next() may have something (-1: not enabled). */
int rr_clnt_bc_fd(struct rr_clnt *rr);
/* Collect the connection's events, and the next waiting Call or NULL. */
struct rr_bcq *rr_clnt_bc_next(struct rr_clnt *rr);
bool rr_clnt_bc_pending(struct rr_clnt *rr);
/* Make rr_clnt_bc_fd() readable (the caller has news for its poller). */
void rr_clnt_bc_wake(struct rr_clnt *rr);
/* The RPC Call message of q, and its XID. */
const uint8_t *rr_bcq_msg(const struct rr_bcq *q, uint32_t *len);
uint32_t rr_bcq_xid(const struct rr_bcq *q);
/* Send q's Reply, encoded by enc, inline on q's connection: 0, or -1 with
 * res saying why (too large for the server's Receives, connection gone). */
int rr_clnt_bc_reply(struct rr_clnt *rr, struct rr_bcq *q, rr_encode_fn enc,
		     void *arg, struct rr_result *res);
/* Give q back. */
void rr_clnt_bc_done(struct rr_clnt *rr, struct rr_bcq *q);

/* The address the rr_clnt connects to. */
const struct sockaddr *rr_clnt_peer(const struct rr_clnt *rr);

void rr_clnt_stats(struct rr_clnt *rr, struct rr_stats *out);

/* Transport counters of the current connection (zeros if none). */
void rr_clnt_conn_stats(struct rr_clnt *rr, struct rt_stats *out);

#endif /* RR_CALL_H */
