/*
 * rt_priv.h - the transport layer's internal structures: the connection
 * and the listener, and the records of the units kept in them, grouped by
 * the file that owns them.  Only src/transport includes this header (and
 * with it verbs and rdma_cm).  Prototypes live in each unit's own header.
 *
 * The units, each a .c file with its headers, and the direction of their
 * calls, lowest first; a unit includes and calls only those before it:
 *
 *   rt_err    errors and addresses as text            rt_err.h
 *   rt_conn   attributes and accessors                rt_conn.h
 *   rt_state  ending a connection, waking it, events  rt_state.h
 *   rt_cq     the completion queue service            rt_cq.h
 *   rt_buf    Send/Receive pools, local memory        rt_buf.h rt_buf_priv.h
 *   rt_post   the send queue                          rt_post.h
 *   rt_reg    registration and fencing                rt_reg.h rt_reg_priv.h
 *   rt_setup  making and freeing a connection         rt_setup.h
 *   rt_cm     connect, listen, accept, destroy        (rt_conn.h)
 *
 * Where a lower unit must reach a higher one it declares a hook in its own
 * header and the higher unit implements it, so that the call goes up
 * through the lower header and never the other way:
 *
 *   rt_state -> rt_post  rt_sq_drop_pending      (rt_state.h)
 *   rt_cq    -> rt_buf   rt_buf_recv_done        (rt_cq.h)
 *   rt_cq    -> rt_post  rt_sq_complete, rt_sq_run_pending
 *   rt_cq    -> rt_cm    rt_cm_client_events, rt_cm_chan_events
 *   rt_buf   -> rt_reg   rt_reg_peer_invalidated (rt_buf_priv.h)
 *   rt_post  -> rt_reg   rt_reg_wr_done          (rt_post.h)
 *   rt_post  -> rt_reg   rt_reg_sink_get/_sge/_hold/_put (rt_post.h: an
 *                        iWARP Read's sink, granted for that Read)
 *
 * tests/unit/rt_units.sh fails if the includes of src/transport form a
 * cycle; doc/architecture.md has the same picture.
 */
#ifndef RT_PRIV_H
#define RT_PRIV_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "trace/tr_trace.h"
#include "transport/rt_conn.h"
#include "transport/rt_err.h"

/* ---- Buffers (rt_buf.c) ---------------------------------------------- */

struct rt_sbuf {
	struct rt_sbuf *next; /* free list */
	void *data;
	uint32_t size;
	uint32_t lkey;
	bool busy; /* held by the caller or in flight */
};

struct rt_rbuf {
	void *data;
	uint32_t size;
	uint32_t lkey;
	uint32_t index;
	bool posted;
	bool lent; /* its message is with the caller until rt_recv_repost() */
};

/* Power-of-two size classes of cached local memory: 4 KiB .. 64 MiB. */
#define RT_LMEM_MIN_SHIFT 12
#define RT_LMEM_CLASSES	  15

struct rt_lmem {
	struct rt_lmem *next;  /* cache free list */
	struct rt_lmem *anext; /* every lmem of the connection */
	struct rt_lmem *aprev;
	void *addr;
	size_t len; /* asked for */
	size_t cap; /* allocated */
	struct ibv_mr *mr;
	int cls;     /* size class, -1: not cached */
	bool owned;  /* memory allocated by us */
	bool regbuf; /* rt_reg_buf_alloc() pool memory */
	bool live;   /* handed out */
};

/* ---- Send queue (rt_post.c) ------------------------------------------ */

enum rt_wr_kind {
	RT_K_SEND = 1,
	RT_K_READ,
	RT_K_WRITE,
	RT_K_BIND,
	RT_K_LINV,
};

/* A send-queue work request, posted or waiting for room. */
struct rt_work {
	struct rt_work *next; /* pending queue */
	uint8_t kind;
	bool report;	  /* RT_WR_SIGNAL: caller wants an event */
	bool must_signal; /* signal regardless (revoke waits on it) */
	uint64_t cookie;
	void *ctx; /* rt_sbuf (SEND), rt_mw (BIND, LINV), rt_sink (READ
		    * on iWARP) */
	struct ibv_send_wr wr;
	struct ibv_sge sge[RT_MAX_SGE];
};

/* Bookkeeping of one posted WR, indexed by its sequence number. */
struct rt_sq_rec {
	uint64_t seq;
	uint8_t kind;
	bool report;
	uint64_t cookie;
	void *ctx;
};

/* wr_id of Receives; send-queue wr_ids are sequence numbers below it. */
#define RT_WRID_RECV (1ull << 63)

/* ---- Registration (rt_reg.c) ----------------------------------------- */

enum rt_mw_state {
	RT_MW_FREE = 0,	    /* not bound: no remote access */
	RT_MW_BOUND,	    /* bind posted: handle valid */
	RT_MW_INVALIDATING, /* LOCAL_INV posted */
};

struct rt_mw {
	struct rt_mw *next;  /* free list */
	struct rt_mw *anext; /* every window of the connection */
	struct ibv_mw *mw;
	uint32_t rkey; /* current handle */
	enum rt_mw_state state;
	bool failed;   /* a bind or invalidation failed */
	bool peer_inv; /* invalidated by the peer, not yet counted */
};

struct rt_expo {
	struct rt_mw *mw;  /* MW mode */
	struct ibv_mr *mr; /* MR mode: remote-access MR; MW mode outside
				 * the pool: the local MR under the window */
	uint32_t handle;
	size_t len;
};

struct rt_regset {
	struct rt_conn *c;
	struct rt_regset *next;
	struct rt_regset *prev;
	unsigned int n;
	unsigned int cap;
	struct rt_expo *e;
};

/* ---- The connection -------------------------------------------------- */

/* Devices one listener's connections may be on (a wildcard listener takes
 * connections on any): one shared completion channel each. */
#define RT_LISTEN_DEVS 16
/* Connections rt_listener_process() remembers having woken. */
#define RT_LISTEN_WOKEN 64

/* A listener's completion channel for one device, shared by every
 * connection it accepted there (rt_cm.c). */
struct rt_chan {
	struct ibv_context *ctx;
	struct ibv_comp_channel *cch;
};

struct rt_listener {
	struct rdma_event_channel *ch;
	int epfd; /* rt_listener_fd(): ch and every chans[].cch */
	struct rt_chan chans[RT_LISTEN_DEVS];
	unsigned int nchans;	    /* grown under lock, never shrinks */
	int woken[RT_LISTEN_WOKEN]; /* rt_listener_woken() */
	unsigned int nwoken;
	bool serves_woken;   /* its caller serves them (rt_listener_woken) */
	unsigned int rounds; /* rt_listener_process() calls */
	struct rdma_cm_id *id;
	struct rt_conn_attr attr;
	uint16_t port;
	pthread_mutex_t lock; /* children list, refs, closing */
	struct rt_conn *children;
	unsigned int refs; /* accepted connections not yet destroyed */
	bool closing;
	bool dead;
	struct rt_err err;
};

struct rt_conn {
	struct rt_conn_attr attr;
	uint32_t trace_id; /* rt_conn_trace_id() */
	struct rdma_cm_id *id;
	struct rdma_event_channel *cm_ch; /* client: our own */
	struct rt_listener *listener;	  /* accepted: the owner */
	bool accepted;			  /* set before rt_conn_setup() */
	struct rt_conn *lnext;		  /* listener's children */
	struct rt_conn *lprev;
	bool linked;

	/* verbs */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;  /* client: our own */
	struct ibv_comp_channel *scch; /* accepted: the listener's */
	atomic_bool rearm;	       /* scch: an event came, re-arm */
	atomic_uint waiters;	       /* scch: threads in rt_conn_wait() */
	atomic_bool woken;	       /* wakefd written, not yet read */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned int cq_unacked;
	unsigned int busy_spins; /* busy poll: spins so far (rt_cq.c) */
	int epfd;   /* client: wakefd, cch and cm_ch; accepted: -1 */
	int wakefd; /* accepted: the connection's only fd */
	char devname[IBV_SYSFS_NAME_MAX];
	uint32_t max_msg;
	unsigned int max_sge;
	unsigned int ord;
	unsigned int ird;
	bool dev_mw;
	bool dev_send_inv; /* can post Send With Invalidate */
	bool iwarp;
	bool quirk_inv_flag;  /* rxe: WITH_INV reported as kernel bit 2 */
	bool quirk_mw_rebind; /* rxe: a retransmission re-runs binds */

	/* state */
	bool up;
	bool dead;
	bool dead_reported;
	struct rt_err err;
	bool peer_fault; /* rt_conn_peer_fault() */
	uint64_t peer_fault_cookie;
	atomic_bool ext_up;    /* ESTABLISHED seen by the listener */
	atomic_bool ext_dead;  /* death noticed by the listener */
	atomic_bool closed;    /* rt_conn_kill() ran (for the
					 * listener: disconnect once
					 * ESTABLISHED) */
	struct rt_err ext_err; /* written before ext_dead */

	/* RFC 8797 and credits */
	struct rw_cm_private local_pd;
	struct rw_cm_private peer_pd;
	uint8_t pd_buf[RW_CM_LEN]; /* local_pd encoded, sent */
	struct rw_cm_inline inl;
	struct rw_credits credits;
	struct rw_srv_credits srv_credits;

	/* buffers */
	void *sslab;
	struct ibv_mr **smrs; /* one per registered run of sslab */
	unsigned int nsmrs;
	struct rt_sbuf *sbufs;
	unsigned int nsbufs;
	unsigned int sreg; /* sbufs[0..sreg) registered, the rest not yet */
	struct rt_sbuf *sfree;
	unsigned int nsfree;
	void *rslab;
	struct ibv_mr **rmrs; /* one per registered run of rslab */
	unsigned int nrmrs;
	struct rt_rbuf *rbufs;
	unsigned int nrbufs;
	unsigned int rreg; /* rbufs[0..rreg) registered (and posted) */
	unsigned int rposted;
	unsigned int rlent; /* delivered, not yet posted again */
	struct rt_lmem *lcache[RT_LMEM_CLASSES];
	struct rt_lmem *rcache[RT_LMEM_CLASSES]; /* reg pool */
	size_t cached; /* octets in lcache and rcache, <= attr.cache_bytes */
	struct rt_lmem *lall;
	size_t sslab_len; /* as allocated: rt_buf.c's pages_free() */
	size_t rslab_len;

	/* registration */
	enum rt_reg_mode reg_mode;
	bool advertised_inv;
	struct rt_mw *mw_free;
	struct rt_mw *mw_all;
	struct rt_regset *regsets;
	unsigned int live_expos;
	struct rt_lmem **regbufs; /* live pool buffers, sorted by addr */
	unsigned int nregbufs;
	unsigned int capregbufs;
	uint32_t key_seed;
	struct rt_sink *sinks;	 /* live iWARP Read sink registrations */
	struct ibv_mr **zombies; /* MRs that refused deregistration */
	unsigned int nzombies;

	/* send queue */
	uint32_t sq_size;
	uint64_t sq_seq;  /* next sequence number */
	uint64_t sq_done; /* every seq below is reaped */
	struct rt_sq_rec *ring;
	unsigned int rdma_used;
	unsigned int reads_used;
	unsigned int unsig;
	struct rt_work *pend_head;
	struct rt_work *pend_tail;

	/* events for the caller */
	struct rt_event *evq;
	unsigned int evq_cap;
	unsigned int evq_head;
	unsigned int evq_n;

	struct rt_stats st;
	struct sockaddr_storage peer_addr;
	struct sockaddr_storage local_addr;
};

#endif /* RT_PRIV_H */
