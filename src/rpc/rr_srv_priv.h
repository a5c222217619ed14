/*
 * rr_srv_priv.h - the responder's internal structures, shared by its files;
 * types only: each file's functions are declared in its own header.
 *
 * The server files call each other one way, top to bottom (a file calls
 * only files below it; tests/unit/rr_units.sh checks it):
 *
 *   rr_serve.c       lifecycle, the event loop, the caller's side
 *   rr_srv_recv.c    Receive to ready request, Read chunks
 *   rr_srv_reply.c   reply to RDMA Writes and Send
 *   rr_srv_bc.c      backward-direction Calls
 *   rr_srv_replay.c  replies kept for a resend
 *   rr_srv_xidlog.c  XIDs that failed before
 *   rr_srv_ctl.c     control messages, the control queue
 *   rr_srv_err.c     RDMA_ERROR
 *   rr_srv_conn.c    kill, kick, grant, waiting for a Send buffer
 *   rr_srv_pool.c    request objects, queues, cookies
 *
 * Two calls go inherently back up - waiting for a Send buffer runs the
 * event loop (which receives, replies, ...), a backward caller that polls
 * runs it too, and ending the connection wakes the backward callers - so
 * they go through the hooks of struct rr_srv below, which rr_serve.c sets
 * at creation: the lower files never name a function above them.
 */
#ifndef RR_SRV_PRIV_H
#define RR_SRV_PRIV_H

#include <pthread.h>

#include "rpc/rr_serve.h"
#include "rpc/rr_spin.h"
#include "trace/tr_trace.h"
#include "transport/rt_buf.h"
#include "wire/rw_props.h"
#include "wire/rw_role.h"
#include "wire/rw_tape.h"
#include "wire/rw_xdr.h"

/*
 * Where a request is.  From its Receive until it is answered (reply or
 * RDMA_ERROR posted) it counts in rr_srv_stats.inflight.
 */
enum rr_sreq_state {
	RR_FREE = 0,
	RR_WAIT_PULL, /* Read chunks to pull, waiting for the budget */
	RR_PULLING,   /* RDMA Reads posted */
	RR_READY,     /* in the ready queue */
	RR_CURRENT,   /* handed to the caller (rr_srv_next) */
	RR_ERRQ,      /* an RDMA_ERROR to send, waiting for a Send buffer */
	RR_SENDING,   /* answered with a reply whose source memory (Reply
			 * chunk, Write-chunk items) is kept until the Send
			 * completes */
	RR_BCREPLY,   /* holds a backward Reply for its caller
			 * (rr_srv_bc.c) */
};

/* Why an RDMA_ERROR is sent, for the counters. */
enum rr_srv_cause {
	RR_CAUSE_HDR = 0,    /* the header was refused (rw_recv_call) */
	RR_CAUSE_TOO_BIG,    /* Read chunks over max_read_bytes
				 * (V1-SEC-4) */
	RR_CAUSE_NO_ROOM,    /* reply fits nowhere (AMB-V1-14) */
	RR_CAUSE_BAD_MSG,    /* RPC message or chunk data unusable */
	RR_CAUSE_WRITE_ROOM, /* a result item larger than its Write
				 * chunk */
	RR_CAUSE_FAILED_XID, /* the XID failed before (V1-ERR-11) */
	RR_CAUSE_SYSTEM,     /* v2 SYSTEM: a fault of ours */
};

/* What a request in the control queue is answered with. */
enum rr_ctl {
	RR_CTL_ERROR = 0, /* RDMA_ERROR req->err */
	RR_CTL_RESPROP,	  /* RESPROP to a REQPROP (V2-OPS-8) */
	RR_CTL_RESPXCH,	  /* xcharext RESPXCH to a REQXCH */
};

/* A reply recorded for a resend with the same XID (rr_srv_replay.c). */
struct rr_replay {
	struct rr_replay *next;
	uint32_t xid;
	uint32_t prog, vers, proc; /* the Call's, checked on the resend */
	int64_t expires_ms;
	struct rw_ddp_policy pol; /* which results its reply moves */
	struct rw_tape tape;
};

struct rr_sreq {
	struct rr_sreq *next; /* queue link */
	uint32_t idx;	      /* in srv->all[] */
	uint32_t gen;	      /* bumped each use (cookies) */
	enum rr_sreq_state state;
	bool answered; /* reply or RDMA_ERROR posted */
	bool counted;  /* counted in inflight */

	/* The message as received, decoded in place: msg lies in the Receive
	 * rbuf until rr_srv_release_recv() posts it again (at the latest
	 * just before anything answers it), then in copy if still needed. */
	const uint8_t *msg;
	uint32_t len;
	struct rt_rbuf *rbuf;
	bool ax_on_msg; /* ax reads the inline payload, in msg */
	uint8_t *copy;
	uint32_t copy_cap;
	struct rw_rx_call rx;
	struct rw_hdr_space sp;

	/* RR_ERRQ, or an error answered at once: which RDMA_ERROR, why (or
	 * which other control message answers it) */
	struct rw_action err;
	enum rr_srv_cause cause;
	enum rr_ctl ctl;
	struct rr_replay *replay; /* a resend answered from a record */

	/* Read chunks, pulled back to back into sink in Read-list order */
	uint64_t pull_len;
	struct rt_lmem *sink;
	uint32_t nchunks; /* item chunks (PZRC excluded) */
	struct rw_ddp_seg segs[RW_MAX_READ_CHUNKS];
	struct rw_ddp_chunk chunks[RW_MAX_READ_CHUNKS];

	/* decode stream over the payload and the item chunks */
	const uint8_t *payload;
	uint32_t plen;
	struct rw_axdr ax;

	/* Reply sources, kept until the Send that follows their Writes
	 * completes: the Long reply's payload, the Write-chunk items (all
	 * of them back to back in one allocation) */
	struct rt_lmem *rsrc;
	struct rt_lmem *isrc;
	bool send_pending;
};

/* A FIFO of requests. */
struct rr_srv_queue {
	struct rr_sreq *head;
	struct rr_sreq *tail;
	uint32_t n;
};

struct rr_srv_bcall;

struct rr_srv {
	pthread_mutex_t lock; /* everything below: svc_run's thread
					 * and backward callers share srv */
	struct rt_conn *conn;
	bool kicked; /* rt_conn_kick()ed since the last full poll */
	struct rr_srv_opts opts;
	struct rr_spin spin; /* polling for the next Call (rr_spin.h) */
	int64_t idle_since;  /* us: a poll found none; 0: none pending */
	uint32_t max_reqs;   /* request objects we ever allocate */
	bool dead;
	struct rt_err err;
	uint32_t trace_id; /* rt_conn_trace_id(conn), at hand for the trace */

	struct rr_sreq **all; /* every request object, by idx */
	uint32_t nall;
	struct rr_srv_queue free;
	struct rr_srv_queue wait_pull;
	struct rr_srv_queue ready;
	struct rr_srv_queue errq;

	uint64_t pull_held; /* octets of sinks held */
	uint32_t pulling;   /* Calls whose Reads are posted, not done */
	struct rr_srv_stats st;

	/* versions and properties (v2-05 §6, §8) */
	struct rw_limits lim; /* what Calls are decoded against */
	uint32_t vers_seen;   /* of the latest Call */
	uint32_t cm_send;     /* inline send threshold of RFC 8797 */
	uint32_t v2_send;     /* ... for v2 Replies (0: not yet) */
	struct rw_props peer; /* the client's */
	bool connprop_due;    /* our CONNPROP waits for a Send */
	bool connprop_sent;
	uint32_t bc_xid; /* XIDs of our one-way messages */

	/* replies kept for a resend */
	struct rr_replay *replays;
	size_t replay_bytes;
	uint32_t nreplays;

	/* backward-direction Calls in flight (rr_srv_bc.c) */
	struct rr_srv_bcall *bcalls;
	uint32_t bc_granted; /* the client's backward grant (1
					 * until its first backward Reply) */
	uint32_t bc_inflight;
	uint32_t bc_max;      /* Receives we keep for their Replies */
	bool bc_leading;      /* a backward caller polls the fd */
	pthread_cond_t bc_cv; /* backward callers wait on it */

	/* The one way back up (set by rr_srv_create, see the top): run the
	 * event loop and drain it / wait up to timeout_ms for events;
	 * tell the backward callers the connection ended. */
	int (*progress_locked)(struct rr_srv *srv);
	int (*wait_events)(struct rr_srv *srv, int timeout_ms);
	void (*lost)(struct rr_srv *srv);
};

#endif /* RR_SRV_PRIV_H */
