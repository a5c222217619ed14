/*
 * rr_serve.h - the responder side of RPC-over-RDMA v1 on one connection
 * (prefix rr_): from a Receive to an RPC message ready to decode, and from
 * an encoded RPC reply to the RDMA Writes and the Send that deliver it.
 *
 * It sits between the transport (rt_conn.h: one connection, its buffers and
 * completions) and the libtirpc glue (svc_rdma.c), and knows neither verbs
 * nor SVCXPRT.  Everything the peer says passes the wire layer's checks
 * (rw_recv_call) before it is used.
 *
 * Model: an rr_srv owns one rt_conn and turns its events into requests.
 *   - A Receive is copied out of its buffer, which is posted again at once
 *     (so the grant of the next reply can count it, V1-CR-8), and decoded.
 *     A runt, an RDMA_ERROR or anything else that must not be answered is
 *     dropped (V1-ERR-2, V1-PROC-9); a bad header gets the RDMA_ERROR the
 *     wire layer names (ERR_VERS with the supported range, ERR_CHUNK).
 *   - A Call with Read chunks (a Position-Zero Read chunk for a Long Call,
 *     or chunks inside the payload) is pulled with RDMA Read into memory of
 *     the connection (local access only) before it is reported ready.  This
 *     is a state machine, not a wait: rr_srv_progress() starts the Reads and
 *     returns; their completions make the connection's fd readable and a
 *     later rr_srv_progress() moves the request to the ready queue.  The
 *     transport keeps at most ORD Reads on the wire.
 *   - The bytes one Call may make us pull are capped (max_read_bytes): a
 *     Call whose Read chunks add up to more is answered with ERR_CHUNK
 *     before anything is allocated or read (V1-SEC-4).  Pulled memory held
 *     by one connection is bounded by the same number: Calls that would
 *     exceed it wait their turn.
 *   - The ready request's XDR stream is the reassembling decoder (rw_axdr,
 *     positional mode, missing XDR pad supplied: V1-RC-8) over the inline
 *     payload or the pulled PZRC plus the other Read chunks.  It accepts a
 *     Read chunk only at an argument item the caller's policy designates
 *     (rr_sreq_set_ddp, from the Upper-Layer Binding); by default none, so
 *     a chunk anywhere else fails the decode: GARBAGE_ARGS (V1-DDP-1,
 *     AMB-V1-15).
 *   - A reply is encoded by the caller's function through the reducing
 *     encoder: the result items its policy designates (rr_sreq_enc.ddp),
 *     at most one per Write chunk the Call offered, are cut out, copied
 *     into connection memory and RDMA-Written into Write chunk 0, 1, ...
 *     with their exact length (V1-WC-2/3/9/10); an item larger than its
 *     chunk gets ERR_CHUNK and nothing is written.  The rest goes first
 *     straight into a Send buffer; if it does not fit inline and the Call
 *     offered a Reply chunk, again into connection memory, RDMA-Written
 *     into the Reply chunk (never past its end) and announced by an
 *     RDMA_NOMSG; if it fits nowhere, the Call gets ERR_CHUNK (AMB-V1-14,
 *     S-4).  The Write list is returned in both cases with the lengths
 *     written, unused chunks 0 (V1-WC-4/6, AMB-V1-13).  Writes are posted
 *     before the Send, without waiting (the send queue keeps the order).
 *     The credit grant is rw_srv_credits_grant(): never more than the
 *     Receives really posted, never 0.
 *
 * Threading: srv->lock serializes everything that touches the connection
 * or the shared queues and counters - rr_srv_progress(), rr_srv_next(),
 * rr_srv_defer(), rr_sreq_reply(), rr_sreq_fail(), rr_sreq_done(), the
 * readers (rr_srv_stats, rr_srv_peer_props) and the backward direction -
 * so the thread that polls (svc_run's) and threads that answer requests
 * it handed out (svc_rdma_detach) may call them at the same time.  A
 * request handed out by rr_srv_next() belongs to one thread at a time
 * until rr_sreq_done(): rr_sreq_xdr(), rr_sreq_set_ddp(), rr_sreq_xid()
 * and rr_sreq_args_done() touch only the request (its own message copy,
 * pulled sink and decode stream) and take no lock.  Several requests may
 * be handed out at once; the caller keeps the rr_srv alive until the last
 * is done.  Nothing here blocks except the bounded wait for a free Send
 * buffer in rr_sreq_reply() (RR_SEND_WAIT_MS, then the connection is
 * closed: V1-ERR-13), under the lock.
 */
#ifndef RR_SERVE_H
#define RR_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/types.h>
#include <rpc/xdr.h>

#include "rpc/rr_call.h"
#include "transport/rt_conn.h"
#include "wire/rw_xdr.h"

struct rr_srv;
struct rr_sreq;
struct rr_xidlog;

/* Longest wait for a free Send buffer before a reply gives up. */
#define RR_SEND_WAIT_MS 5000

struct rr_srv_opts {
	size_t max_read_bytes; /* most octets one Call may make us pull
				 * by RDMA Read, all its Read chunks
				 * together */
	/* RPC-over-RDMA versions spoken, within 1..2 (0: 1 and 2); Calls
	 * of another get ERR_VERS with this range (V1-ERR-6, V2-NEG-4). */
	uint32_t vers_min;
	uint32_t vers_max;
	/* Limits of a Call's chunk lists (0: the wire layer's defaults);
	 * over them v2 answers READ_CHUNKS, WRITE_CHUNKS or SEGMENTS with
	 * the limit (V2-ERR-7/9/11), v1 ERR_CHUNK. */
	uint32_t max_read_chunks;
	uint32_t max_write_chunks;
	uint32_t max_chunk_segs;
	bool no_remote_inv;	  /* never answer with Send With Invalidate */
	bool xcharext;		  /* read xcharext-02 characteristics from this
				 * peer (RDMA2_OPTIONAL opttype 1-4,
				 * AMB-V2-1); off: INVAL_OPTION */
	size_t replay_bytes;	  /* memory for replies kept for a resend, per
				 * connection (0: RR_REPLAY_BYTES) */
	uint32_t replay_ms;	  /* how long one is kept (0: RR_REPLAY_MS) */
	uint32_t bc_max;	  /* backward Calls outstanding at once: the
				 * connection keeps that many Receives
				 * beyond the credits (rt attr recv_extra),
				 * 0: none */
	struct rr_xidlog *xidlog; /* XIDs that failed for an operational
					 * reason, shared by the connections
					 * of a listener (rr_srv_xidlog.h,
					 * V1-ERR-11); NULL: none kept */
	uint32_t poll_us;	  /* most microseconds rr_srv_collect() polls
			   * for the next Call (rr_spin.h; 0: never) */
};

/* Replies that could not be sent (REPLY_RESOURCE / WRITE_RESOURCE, v1
 * ERR_CHUNK) are kept to answer the resend with the same XID without
 * executing the procedure again (V2-ERR-13, AMB-V2-4). */
#define RR_REPLAY_BYTES ((size_t)128 << 20)
#define RR_REPLAY_MS	15000u
#define RR_REPLAY_MAX	16u

/* Counters of one connection (cumulative).  Error counters count the
 * RDMA_ERRORs sent, by cause. */
struct rr_srv_stats {
	uint64_t requests;	 /* Calls handed up (rr_srv_next) */
	uint64_t replies_inline; /* RDMA_MSG replies */
	uint64_t replies_long;	 /* replies written into a Reply chunk */
	uint64_t err_vers;	 /* ERR_VERS sent */
	uint64_t err_chunk;	 /* ERR_CHUNK sent, every cause below */
	uint64_t err_too_big;	 /* ... Read chunks over max_read_bytes */
	uint64_t err_no_room;	 /* ... reply fits neither inline nor in the
				 * Reply chunk */
	uint64_t err_bad_msg;	 /* ... RPC message or chunks unusable */
	uint64_t discarded;	 /* messages dropped without an answer */
	uint64_t dropped;	 /* Calls the RPC layer never answered */
	uint64_t err_write_room; /* ... a result item larger than its
				 * Write chunk */
	uint64_t err_failed_xid; /* ... a retransmission of an XID
				 * that failed (V1-ERR-11) */
	uint64_t failed_xids;	 /* XIDs recorded as failed for an
				 * operational reason */
	uint64_t read_chunks;	 /* Read chunks pulled (PZRC included) */
	uint64_t read_bytes;
	uint64_t write_chunks; /* Write chunks filled with a result item */
	uint64_t write_bytes;
	uint64_t reply_chunks; /* Reply chunks written (Long replies) */
	uint64_t reply_bytes;
	uint64_t inline_bytes; /* RPC message octets received inline
				 * (RDMA_MSG Calls) and sent inline
				 * (RDMA_MSG replies); no transport headers */
	uint64_t ddp_copies;   /* DDP items copied between the RPC layer's
				 * memory and registered memory: argument
				 * items out of the pulled Read chunks,
				 * result items into Write-chunk sources */
	uint64_t ddp_copy_bytes;
	/* RPC-over-RDMA v2 and the resend of replies */
	uint64_t v2_requests;	  /* Calls handed up that came in version 2 */
	uint64_t replies_inv;	  /* replies sent With Invalidate */
	uint64_t err_v2;	  /* v2 RDMA_ERRORs sent other than ERR_VERS and
				 * BAD_XDR (counted in err_chunk): */
	uint64_t err_resource;	  /*   REPLY_RESOURCE and WRITE_RESOURCE */
	uint64_t replays_kept;	  /* replies recorded for a resend */
	uint64_t replays_done;	  /* resends answered from the record, the
				 * procedure not executed again */
	uint64_t replays_dropped; /* records expired or pushed out unused */
	uint64_t replays_missed;  /* replies too large to record: a resend
				 * executes the procedure again */
	uint64_t props_received;  /* CONNPROP/UPDPROP/REQPROP (and xcharext)
				 * messages taken */
	uint64_t props_sent;	  /* CONNPROP and RESPROP sent */
	uint64_t bc_calls;	  /* backward Calls sent */
	uint64_t bc_replies;	  /* ... answered */
	uint64_t bc_timeouts;	  /* ... whose caller gave up */
	uint32_t inflight;	  /* Calls received and not yet answered */
	uint32_t max_inflight;	  /* the most there ever were */
	uint32_t max_granted;	  /* largest credit grant sent */
};

/*
 * Take over conn (an accepted connection): from now on it belongs to the
 * rr_srv and is destroyed with it.  NULL with err set if out of memory
 * (conn is then left to the caller).
 */
struct rr_srv *rr_srv_create(struct rt_conn *conn, const struct rr_srv_opts *o,
			     struct rt_err *err);

/* Destroy the connection (fenced, disconnected) and every request. */
void rr_srv_destroy(struct rr_srv *srv);

/* End the connection now (the peer sees a disconnect); srv stays usable
 * until rr_srv_destroy(), every operation failing. */
void rr_srv_disconnect(struct rr_srv *srv);

/* The fd to poll: readable when rr_srv_progress() has work. */
int rr_srv_fd(const struct rr_srv *srv);

const struct sockaddr *rr_srv_peer_addr(const struct rr_srv *srv);
const struct sockaddr *rr_srv_local_addr(const struct rr_srv *srv);

/*
 * Do everything that can be done without blocking: collect every pending
 * event of the connection (none is left behind, so the fd is readable
 * again only for new ones), decode Receives, start RDMA Reads, finish
 * pulled Calls, send queued RDMA_ERRORs.  Returns the number of requests
 * ready, or -ENOTCONN once the connection is dead (with the cause in
 * rr_srv_error()).
 */
int rr_srv_progress(struct rr_srv *srv);

/*
 * As rr_srv_progress(), but of the connection's events only its
 * completions, without a system call (rt_conn_collect): for a caller that
 * was not woken by the fd, after serving a call.  An event it leaves keeps
 * the fd readable, so the next poll returns at once.  When nothing is
 * ready it keeps polling, within the adaptive budget of opts.poll_us, for
 * the next Call: the caller (svc_run's thread) is held that long.
 */
int rr_srv_collect(struct rr_srv *srv);

const struct rt_err *rr_srv_error(const struct rr_srv *srv);

/*
 * True when the connection has no Call in progress (received and not yet
 * answered) and none waiting in its completion queue, or is dead:
 * closing it now loses nothing.  Collects what completed, without a
 * system call; a Call found that way keeps rr_srv_fd() readable.  For the
 * svc_run thread, between calls.
 */
bool rr_srv_idle(struct rr_srv *srv);

/*
 * Make rr_srv_fd() readable although nothing new is pending, so that a
 * caller that stops taking ready requests (to let other connections have
 * their turn) is called again after its next poll().  Cleared by
 * rr_srv_progress().
 */
void rr_srv_defer(struct rr_srv *srv);

/*
 * The next ready request, or NULL.  It stays the caller's until
 * rr_sreq_done(); its stream (rr_sreq_xdr) is positioned at the start of the
 * RPC message.
 */
struct rr_sreq *rr_srv_next(struct rr_srv *srv);

/* The decode stream of req: an rw_axdr (rw_xdr.h).  The caller decodes the
 * RPC header, calls rr_sreq_set_ddp(), rw_xdr_begin_body(), then the
 * arguments. */
XDR *rr_sreq_xdr(struct rr_sreq *req);

/*
 * Which argument items of req may arrive in Read chunks: the Upper-Layer
 * Binding's call policy for the procedure the RPC header named, or
 * RW_DDP_NONE (no binding, RPCSEC_GSS: V1-GSS-3).  Until it is called
 * the policy is RW_DDP_NONE.  A Read chunk at any other item fails the
 * argument decode (RW_XERR_NOT_ELIGIBLE: GARBAGE_ARGS, V1-DDP-1,
 * AMB-V1-15).  Only before rw_xdr_begin_body() on the stream: false,
 * changing nothing, once the arguments have begun (or pol is NULL).
 */
bool rr_sreq_set_ddp(struct rr_sreq *req, const struct rw_ddp_policy *pol);

uint32_t rr_sreq_xid(const struct rr_sreq *req);

/*
 * The arguments are decoded: 0, or -EPROTO if a Read chunk was never
 * consumed (a chunk the message does not account for, V1-DDP-1); the
 * caller then answers GARBAGE_ARGS.  Payload octets after the message are
 * tolerated, as a TCP transport ignores the rest of a record.
 */
int rr_sreq_args_done(struct rr_sreq *req);

/* The caller's reply encoder: the RPC reply header and results, on xdrs
 * (encode it the same way each time: it may run twice). */
struct rr_sreq_enc {
	bool_t (*encode)(XDR *xdrs, void *arg);
	/* octets the results will take, or 0 if unknown; asked only when
	 * the reply does not fit inline */
	size_t (*size_hint)(void *arg);
	void *arg;
	/* The result items that go into the Call's Write chunks: the
	 * Upper-Layer Binding's reply policy (ulb_ddp_policy(e, true, ...)),
	 * or RW_DDP_NONE (zero-initialized: no binding, RPCSEC_GSS,
	 * V1-GSS-3).  Moved items are the designated ones in body order,
	 * item k into Write chunk k, at most one per chunk offered (and at
	 * most ddp.max_chunks if set); the rest stay in the payload.  min_len
	 * is ignored: every eligible result is placed (V1-WC-2). */
	struct rw_ddp_policy ddp;
};

/*
 * Reply to req (see the model above).  Returns 0 when the reply is on its
 * way; -EMSGSIZE when it fitted nowhere, or a result item did not fit its
 * Write chunk, and ERR_CHUNK was sent instead;
 * -EINVAL if the encoder failed (nothing sent: the caller may answer
 * otherwise, e.g. SYSTEM_ERR); -EALREADY if req was answered already;
 * -ENOTCONN if the connection is dead or had to be closed.
 */
int rr_sreq_reply(struct rr_srv *srv, struct rr_sreq *req,
		  const struct rr_sreq_enc *enc);

/*
 * Answer req with RDMA_ERROR/ERR_CHUNK instead of an RPC reply ("no
 * RPC-level reply is possible"), e.g. when its RPC call header cannot be
 * decoded.  Nothing is sent if req was answered already.
 */
void rr_sreq_fail(struct rr_srv *srv, struct rr_sreq *req);

/*
 * The caller is finished with req.  A Call never answered is counted as
 * dropped (its requester will time out: the RPC layer chose not to reply).
 */
void rr_sreq_done(struct rr_srv *srv, struct rr_sreq *req);

void rr_srv_stats(const struct rr_srv *srv, struct rr_srv_stats *out);

/* The connection's cache of chunk buffers: the octets it holds now, and
 * the buffers let go because it was full (rt_buf.h). */
void rr_srv_cache(const struct rr_srv *srv, uint64_t *bytes,
		  uint64_t *released);

/* ---- Backward direction (RFC 8167, rr_srv_bc.c) -------------------------- */

struct rr_srv_bcall;

/*
 * Call the client back on srv's connection: enc encodes the whole RPC Call
 * (header with xid, credentials, arguments) with plain XDR; the message
 * goes inline.  Waits until deadline (CLOCK_MONOTONIC ms, rr_clock_ms()) for
 * the Reply, polling the connection itself when nobody else does.  RR_OK:
 * *callp's stream (rr_srv_bcall_xdr) is the RPC Reply; give it back with
 * rr_srv_bcall_done().  Otherwise res says why: RR_CANTENCODE (too large
 * for the client's Receives), RR_CANTSEND (connection gone, no call from
 * the client yet, bc_max 0), RR_TIMEDOUT, RR_CANTRECV.  Safe from any
 * thread, svc_run's included.
 */
enum rr_status rr_srv_bc_call(struct rr_srv *srv, uint32_t xid,
			      rr_encode_fn enc, void *arg, int64_t deadline,
			      struct rr_srv_bcall **callp,
			      struct rr_result *res);
XDR *rr_srv_bcall_xdr(struct rr_srv_bcall *bcall);
void rr_srv_bcall_done(struct rr_srv *srv, struct rr_srv_bcall *bcall);

/* The version the peer's Calls use (0 before the first), and its transport
 * properties as received (defaults until its CONNPROP). */
uint32_t rr_srv_version(const struct rr_srv *srv);
struct rw_props;
void rr_srv_peer_props(const struct rr_srv *srv, struct rw_props *out);

#endif /* RR_SERVE_H */
