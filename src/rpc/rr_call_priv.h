/*
 * rr_call_priv.h - the requester's internal structures and the prototypes
 * its files share, grouped by the file that owns them.  The files call one
 * way, top to bottom (a file calls only files below it; tests/unit/
 * rr_units.sh checks it):
 *
 *   rr_life.c      creating and destroying an rr_clnt; sets the hooks
 *   rr_recv.c      the Receive path: dispatch of Replies to calls by XID,
 *                  of backward Calls, properties and deaths
 *   rr_probe.c     whether a server can be reached (rr_call.h)
 *   rr_bc.c        the backward direction
 *   rr_call.c      one call: credit, encoding, plan, exposure, Send,
 *                  completion, fencing, decode stream
 *   rr_clnt.c      the connections (connect, reconnect, loss, version,
 *                  properties) and the control functions
 *   rr_wait.c      waiting: waiters, the leader that polls the connection,
 *                  the XID table
 *   rr_conn_ref.c  a connection's last reference
 *   rr_vcache.c    servers that lack v2
 *   rr_util.c      clock, results
 *
 * Three calls go inherently back up - a drain (from the waiting leader, a
 * call, a connection change) dispatches what came to the files above, a
 * lost connection fails its calls, and a new or lost connection moves the
 * backward fd - so they go through the hooks of struct rr_clnt below,
 * which rr_life.c sets at creation: the lower files never name a function
 * above them.
 *
 * Everything below is protected by rr_clnt.lock unless said otherwise.
 */
#ifndef RR_CALL_PRIV_H
#define RR_CALL_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpc/rr_call.h"
#include "rpc/rr_spin.h"
#include "trace/tr_trace.h"
#include "transport/rt_buf.h"
#include "transport/rt_conn.h"
#include "transport/rt_reg.h"
#include "ulb/ulb.h"
#include "wire/rw_chunk.h"
#include "wire/rw_credit.h"
#include "wire/rw_hdr.h"
#include "wire/rw_plan.h"
#include "wire/rw_props.h"
#include "wire/rw_role.h"
#include "wire/rw_xdr.h"

/* Segments of the Reply chunk (RR_MAX_REPLY / RT_REG_MAX_SEG) and of the
 * PZRC (a message of up to 4 GiB). */
#define RR_REPLY_SEGS 1
#define RR_PZRC_SEGS  4
/* Reduced argument items one Call may carry as Read chunks. */
#define RR_MAX_ITEMS RW_MAX_READ_CHUNKS
#define RR_MAX_READS (RR_PZRC_SEGS + RR_MAX_ITEMS * 4)
/* Write chunks one Call may offer for result items, one segment each (a
 * result item is at most RT_REG_MAX_SEG octets). */
#define RR_MAX_WRITES 4
/* XID table buckets (a power of two). */
#define RR_XID_BUCKETS 64
/* Longest the leader sleeps before looking at the world again. */
#define RR_LEAD_SLICE_MS 200
/* A busy-polling leader yields the processor once per this many spins. */
#define RR_BUSY_YIELD_EVERY 64
/* Events taken from the connection per rt_conn_poll(). */
#define RR_EV_BATCH 16

/* A thread waiting for something (its reply, a credit, a connection). */
struct rr_waiter {
	pthread_cond_t cv;
	bool cv_made; /* cv initialised: only a waiter that sleeps on it
		       * needs one (rr_wait.c) */
	struct rr_waiter *next;
	struct rr_waiter *prev;
};

/* One connection and the calls that still refer to it. */
struct rr_conn {
	struct rt_conn *rt;
	uint32_t trace_id; /* rt_conn_trace_id(rt), at hand for the trace */
	/* RPC-over-RDMA version (v2-05 §8): vers is what Calls carry;
	 * negotiating while the first v2 Call waits for its Reply; known
	 * once a valid Reply came in that version; fell_back after the
	 * server's ERR_VERS. */
	uint32_t vers;
	bool negotiating;
	bool known;
	bool fell_back;
	uint32_t call_inline;  /* largest Call sent inline now */
	uint32_t reply_inline; /* largest Reply we may receive inline */
	/* v2 properties: our CONNPROP (sent once v2 is known, a one-way
	 * message holding a credit until a Reply to a later Call comes,
	 * AMB-V2-6) and the server's */
	bool connprop_sent;
	bool oneway_credit;
	uint64_t oneway_seq;
	uint64_t seq; /* Calls sent on this connection */
	/* One-way Calls (send-only) not yet known to be taken by the
	 * server, oldest first: the Reply to any later Call finishes them
	 * (doc/oneway.md); flush_pending while the layer's NULL Call that
	 * brings such a Reply is on its way */
	struct rr_call *oneway_head;
	struct rr_call *oneway_tail;
	unsigned int oneways;
	bool flush_pending;
	struct rw_props peer;
	unsigned int refs; /* the rr_clnt's while current, calls (in
				 * flight, orphaned or finishing), a polling
				 * leader */
	bool lost;	   /* seen dead: its calls have been failed */
	bool busy_poll;	   /* its completion mode */
	bool retire;	   /* replace it once idle (mode change) */
	bool draining;	   /* rr_drain() is running on it ... */
	bool redrain;	   /* ... and was asked again meanwhile */
};

enum rr_slot_state {
	RR_S_FREE = 0,
	RR_S_PREP,   /* being built, or never sent; not in the
				 * XID table */
	RR_S_WAIT,   /* sent, the caller waits */
	RR_S_DONE,   /* completed, the caller finishes it */
	RR_S_ORPHAN, /* sent, the caller left (timeout,
				 * send-only): the layer finishes it */
};

/* One call.  Slots live in the rr_clnt (orphans outlive their caller). */
struct rr_call {
	struct rr_call *next; /* XID chain or free list */
	enum rr_slot_state state;
	uint32_t xid;
	struct rr_conn *conn;	  /* referenced while set */
	struct rr_waiter *waiter; /* the caller, while it waits */
	bool credit;		  /* holds a credit of conn */
	bool caller_mem;	  /* exposes memory of the caller */
	uint64_t seq;		  /* its order among conn's Calls */
	bool negotiating;	  /* sent as conn's version probe */
	bool oneway;		  /* send-only: on conn's one-way list */
	bool flush;		  /* the layer's NULL Call for them */
	bool retired;		  /* finished by a later Call's Reply */
	bool recovered;		  /* its wait for a credit closed conn */
	bool reply_sized;	  /* its Reply chunk (or none) follows a
					 * known largest Reply */
	struct rw_hdr errh;	  /* RDMA_ERROR that ended it (proc
					 * RW_ERROR), fixed words and err */

	/* its place on conn's one-way list */
	struct rr_call *oneway_prev;
	struct rr_call *oneway_next;

	/* what the Call offered (rw_validate_reply compares with it) */
	struct rw_hdr hdr;
	struct rw_segment reply_segs[RR_REPLY_SEGS];
	uint32_t inv_handle; /* the handle it nominates */
	struct rw_chunk wchunks[RR_MAX_WRITES];
	struct rw_segment wsegs[RR_MAX_WRITES];

	/* result items: Write chunk memory, the caller's or a pool buffer */
	uint32_t nwrites;
	uint32_t wroom[RR_MAX_WRITES]; /* octets of each Write chunk */
	void *wbuf[RR_MAX_WRITES];
	bool wpool[RR_MAX_WRITES];
	uint32_t wlen[RR_MAX_WRITES]; /* lengths the Reply returned */
	uint32_t wcap[RR_MAX_WRITES]; /* room of the caller's own buffer
					 * for each result (0: none) */
	bool results_unknown;	      /* the caller's results could not be
					 * probed (ASan builds) */
	struct rw_ddp_seg wdseg[RR_MAX_WRITES];
	struct rw_ddp_chunk wdchunk[RR_MAX_WRITES];
	struct rw_ddp_policy rpol; /* result items designated */
	size_t max_reply;	   /* largest Reply payload expected */

	/* resources */
	struct rt_sbuf *sbuf;
	struct rt_regset *regs;
	void *long_buf; /* PZRC copy of the message */
	size_t long_cap;
	void *reply_buf; /* Reply chunk */
	size_t reply_cap;
	bool reply_heap;   /* reply_buf is malloc'd, not pool
					 * memory (a large resend's) */
	bool reply_resent; /* its size came from an earlier
					 * attempt's error */

	/* completion */
	struct rr_result res;
	uint32_t grant;		/* rdma_credit of the Reply */
	struct rt_rbuf *rbuf;	/* RDMA_MSG: the Receive it came in */
	const uint8_t *payload; /* the RPC Reply message ... */
	uint32_t plen;		/* ... and its length */
	struct rw_axdr ax;	/* its decode stream */

	/* Written before they are read, up to a count kept elsewhere (the
	 * Read list's in hdr, the items' in the encoder's stream): slot_get
	 * zeroes the struct only up to here, 1 120 of its 2 672 octets. */
	struct rw_read_seg reads[RR_MAX_READS]; /* the Read list offered */
	struct rw_ddp_item items[RR_MAX_ITEMS]; /* argument items reduced */
};
#define RR_CALL_ZEROED offsetof(struct rr_call, reads)

/*
 * What the RDMA_ERRORs of earlier attempts of one RPC changed (rr_call's
 * resend loop, rw_resend_plan): each kind is used once (AMB-V2-4), the v1
 * Reply-chunk ladder at most twice.
 */
struct rr_try {
	unsigned int used;   /* bit per enum rw_resend_kind */
	unsigned int ladder; /* v1 ERR_CHUNK resends so far */
	bool no_reads;	     /* arguments inline or in a PZRC */
	bool limit_writes;
	uint32_t max_writes;
	uint32_t wroom[RR_MAX_WRITES]; /* at least this room (0: as planned) */
	size_t reply_room;	       /* offer a Reply chunk this large */
	bool reply_guess;	       /* ... a v1 guess, not a size the
					 * server named */
};

/* A backward-direction Call taken from a connection (rr_bc.c). */
struct rr_bcq {
	struct rr_bcq *next;
	struct rr_conn *conn; /* referenced: the Reply goes on it */
	uint32_t xid;
	uint32_t vers;
	uint8_t *msg; /* the RPC Call, copied */
	uint32_t len;
	bool busy; /* counted in rr_bc.busy: taken, not
					 * yet answered */
};

/* The backward service of an rr_clnt, once enabled (rr_bc.c). */
struct rr_bc {
	int epfd; /* rr_clnt_bc_fd(): conn_fd and kick */
	int kick; /* eventfd: a Call waits */
	bool kicked;
	int conn_fd;	     /* the connection's fd in epfd, or -1 */
	struct rr_bcq *head; /* Calls waiting for the caller */
	struct rr_bcq *tail;
	uint32_t n;
	uint32_t busy; /* handed out, not yet done */
	uint32_t max;  /* our backward grant */
};

struct rr_clnt {
	pthread_mutex_t lock;
	struct rr_opts opts;
	struct sockaddr_storage dst;

	struct rr_conn *conn; /* current, or NULL */
	bool connecting;      /* a thread is in rt_connect() */
	bool leading;	      /* a thread polls the connection */
	bool want_busy;	      /* completion mode for new connections */
	struct rr_spin spin;  /* the leader's polling before it sleeps */

	struct rr_waiter *waiters;   /* all waiting threads, FIFO */
	unsigned int credit_waiters; /* ... of which wait for a credit */
	struct rr_call *xids[RR_XID_BUCKETS];
	struct rr_call *free_slots;
	unsigned int nslots;	 /* allocated */
	unsigned int busy_slots; /* not free */

	struct rw_hdr_space hsp; /* decoding Replies */
	uint32_t ctl_xid;	 /* XIDs of our one-way messages */
	struct rr_bc *bc;	 /* backward service, or NULL */
	struct rr_stats st;

	/* Calls up, set by rr_clnt_create (rr_life.c), never changed:
	 * rr_recv_drain, rr_call_fail, rr_bc_conn_changed. */
	void (*drain)(struct rr_clnt *rr, struct rr_conn *conn, bool full);
	void (*call_fail)(struct rr_clnt *rr, struct rr_call *call,
			  enum rr_status st, int err, const char *msg);
	void (*bc_conn_changed)(struct rr_clnt *rr);
};

/* ---- rr_recv.c ---------------------------------------------------------- */

/* Collect every pending event of conn and dispatch it (lock held); the lower
 * files reach it as rr_drain() and rr_collect() (rr->drain).  full: ask
 * the connection's fd too (rt_conn_poll), else its completions only
 * (rt_conn_collect). */
void rr_recv_drain(struct rr_clnt *rr, struct rr_conn *conn, bool full);

/* ---- rr_clnt.c ---------------------------------------------------------- */

/* A new connection to the server, of rr's options (without the lock).  NULL
 * with err set on failure. */
struct rr_conn *rr_conn_open(struct rr_clnt *rr, int64_t deadline,
			     struct rt_err *err);
/* The client goes: its current connection ends (lock held). */
void rr_conn_end(struct rr_clnt *rr);

/* A live connection for a new call, connecting if needed (lock held; it is
 * released while connecting).  NULL with res set on failure. */
struct rr_conn *rr_conn_get(struct rr_clnt *rr, int64_t deadline,
			    struct rr_result *res);
/* End conn now (lock held): disconnect, then everything rr_conn_lost()
 * does, so the next call connects afresh. */
void rr_conn_retire(struct rr_clnt *rr, struct rr_conn *conn);
/* conn ended: fail the calls still waiting on it, finish its orphans. */
void rr_conn_lost(struct rr_clnt *rr, struct rr_conn *conn);
/* A valid Reply came on conn: its version is settled (lock held). */
void rr_conn_settled(struct rr_clnt *rr, struct rr_conn *conn);
/* The server answered conn's version probe with ERR_VERS: go on in v1. */
void rr_conn_fall_back(struct rr_clnt *rr, struct rr_conn *conn);
/* A Reply to call was accepted: a one-way message's credit comes back if call
 * was sent after it (AMB-V2-6). */
void rr_conn_oneway_done(struct rr_conn *conn, const struct rr_call *call);
/* The server's CONNPROP or UPDPROP arrived on conn (lock held). */
void rr_conn_peer_props(struct rr_clnt *rr, struct rr_conn *conn,
			const struct rw_hdr *h);

/* ---- rr_conn_ref.c ---------------------------------------------------------- */

/* Drop a reference to conn; the last one destroys it. */
void rr_conn_put(struct rr_clnt *rr, struct rr_conn *conn);
/* Add the counters of the transport connection rt to to. */
void rr_conn_stats_add(struct rt_stats *to, const struct rt_conn *rt);

/* ---- rr_wait.c ---------------------------------------------------------- */

/* Wait until done(arg) or the deadline, leading on conn if nobody else polls
 * (lock held).  *pub (if given) points at the waiter meanwhile, for
 * rr_wake().  Returns done(arg). */
bool rr_wait(struct rr_clnt *rr, struct rr_conn *conn, bool (*done)(void *),
	     void *arg, int64_t deadline, struct rr_waiter **pub);
void rr_wake(struct rr_waiter *w);
void rr_wake_all(struct rr_clnt *rr);
/* Collect every pending event of conn and dispatch it (lock held): the
 * drain hook, rr_recv_drain().  rr_drain() asks every source of the
 * connection (after a wake-up, before using it); rr_collect() only its
 * completions, without a system call, for a thread that has just used the
 * connection and lets it go: what it leaves keeps the fd readable for the
 * leader. */
void rr_drain(struct rr_clnt *rr, struct rr_conn *conn);
void rr_collect(struct rr_clnt *rr, struct rr_conn *conn);

void rr_xid_insert(struct rr_clnt *rr, struct rr_call *call);
void rr_xid_remove(struct rr_clnt *rr, struct rr_call *call);
struct rr_call *rr_xid_find(struct rr_clnt *rr, uint32_t xid);

/* ---- rr_call.c ---------------------------------------------------------- */

/* Complete call with a failure, or finish it if orphaned (lock held). */
void rr_call_fail(struct rr_clnt *rr, struct rr_call *call, enum rr_status st,
		  int err, const char *msg);
/* A Reply (or RDMA_ERROR) for call has been accepted (lock held). */
void rr_call_complete(struct rr_clnt *rr, struct rr_call *call);
void rr_slots_free(struct rr_clnt *rr);
/* A Reply for call was accepted: note what it returned in the Write list. */
void rr_call_take_writes(struct rr_clnt *rr, struct rr_call *call,
			 const struct rw_hdr *h);

/* ---- rr_bc.c ------------------------------------------------------------- */

/* A backward Call arrived on conn (lock held). */
void rr_bc_take(struct rr_clnt *rr, struct rr_conn *conn,
		const struct rw_hdr *h, const uint8_t *payload, uint32_t len);
/* The current connection changed: the backward fd follows (lock held). */
void rr_bc_conn_changed(struct rr_clnt *rr);

/* ---- rr_vcache.c --------------------------------------------------------- */

/* Servers found not to speak v2, remembered for ttl_s seconds per address
 * (AMB-V2-20): the next connection speaks v1, so negotiation cannot loop
 * (V2-NEG-6). */
bool rr_vcache_lacks_v2(const struct sockaddr *server);
void rr_vcache_note(const struct sockaddr *server, uint32_t ttl_s);

#endif /* RR_CALL_PRIV_H */
