/*
 * rt_conn.h - the transport layer (prefix rt_): one RDMA connection.
 *
 * An rt_conn is one reliable-connected queue pair with everything that
 * belongs to it alone: its protection domain (so a handle exposed on one
 * connection is useless on any other, V1-SEC-3), one completion queue with
 * a completion channel, the Send and Receive buffers, the registrations of
 * rt_reg.h and the RFC 8797 parameters agreed at connection time.  The glue
 * above (CLIENT and SVCXPRT ops) drives it through this header, rt_buf.h and
 * rt_reg.h; nothing here knows about RPC messages, and no verbs or rdma_cm
 * type appears in these headers.
 *
 * Life of a connection
 *   client:  rt_connect() resolves the address and the route, builds the
 *            verbs resources, posts every Receive, and connects with RFC 8797
 *            private data; it returns an established connection or an error
 *            naming the cause, within attr->timeout_ms.
 *   server:  rt_listen() binds and listens; its fd (rt_listener_fd()) becomes
 *            readable when CM events are pending, or completion events of
 *            the connections it accepted (they share one completion channel
 *            per device, so each has one fd); rt_listener_process(), which
 *            never blocks, accepts CONNECT_REQUESTs (Receives posted before
 *            the accept, V1-RB-1) and returns the new connections, notices
 *            disconnection of connections it accepted, and wakes those
 *            whose completions came (or hands them to rt_listener_woken()).
 *   both:    rt_conn_fd() is readable when rt_conn_poll() has something to
 *            report; rt_conn_poll() returns typed events (a Receive with its
 *            buffer, a caller-signalled Send/Read/Write done, the connection
 *            dead).  A connection ends only by itself: flushed or failed
 *            completions, DISCONNECTED, device removal or a failed
 *            invalidation mark it RT_CONN_DEAD, with the cause in
 *            rt_conn_error(); no other connection is affected.  Reconnecting
 *            is the caller's business (a new rt_connect()).  Asynchronous
 *            device events (ibv_get_async_event) are not read, since rdma_cm
 *            shares one device context among all connections: a queue pair
 *            that fails that way also flushes its work, which is noticed.
 *            After a device removal everything on it must be destroyed;
 *            librdmacm itself lets go of the device only at process exit.
 *
 * Posting (rt_post_send / rt_post_read / rt_post_write) never blocks and
 * never fails for lack of queue space: work beyond the send queue, the RDMA
 * window (attr.rdma_depth outstanding RDMA Read/Write work requests, 16 by
 * default, the depth Soft-RoCE handles well) or the negotiated number of
 * outstanding RDMA Reads is queued inside the connection, in posting order,
 * and posted as completions free room.  Order is therefore always that of the
 * calls: a Send posted after RDMA Writes is never put on the wire before
 * them.  Sends are signalled selectively (every attr.signal_every-th work
 * request, and whenever a send-queue resource would otherwise run out); the
 * queue is never created with sq_sig_all.
 *
 * Threading rules
 *   - A connection is not internally locked.  All calls on one rt_conn, and
 *     on the rt_sbuf/rt_rbuf/rt_lmem/rt_regset objects that belong to it,
 *     must be serialized by the caller (one thread at a time, e.g. under a
 *     per-connection mutex).  rt_reg_revoke() may wait, boundedly, inside
 *     that serialization.  Different connections are independent.
 *   - A listener is serialized the same way.  rt_listener_process() may run
 *     in one thread while connections it accepted are used in others: the
 *     only thing it does to them (marking them dead on DISCONNECTED etc.) is
 *     made safe internally.
 *   - rt_conn_destroy() of an accepted connection may run concurrently with
 *     rt_listener_process(); destroying the listener first is allowed, its
 *     memory lives until the last accepted connection is destroyed.
 */
#ifndef RT_CONN_H
#define RT_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "transport/rt_err.h"
#include "wire/rw_cm.h"
#include "wire/rw_credit.h"
#include "wire/rw_hdr.h"

struct rt_conn;
struct rt_listener;
struct rt_rbuf;
struct rt_sbuf;

/* Memory registration strategy for chunks (rt_reg.h). */
enum rt_reg_mode {
	RT_REG_AUTO = 0, /* memory windows if the device has them */
	RT_REG_MW,	 /* type 2 memory windows over pooled MRs */
	RT_REG_MR,	 /* ibv_reg_mr/ibv_dereg_mr per exposure */
};

/*
 * The default of attr.cache_bytes: what one connection keeps of the chunk
 * buffers it registered (RDMA Read sinks, Write and Reply sources, the
 * registration pool), idle, for its next calls.  Four buffers of the
 * 2 MiB class: a call that moves 1 MiB each way (NFS's usual rsize and
 * wsize) needs two, so two such calls at once register nothing; more
 * concurrency than that pays one registration per buffer, small beside
 * moving the megabyte itself.  Bounded so that a server's many connections
 * do not each hold the high-water mark of their traffic (pinned memory
 * that nothing uses): 256 connections (max_conns' default) keep 2 GiB at
 * most, and an idle one is reaped after idle_timeout.
 */
#define RT_CACHE_BYTES ((size_t)8 << 20)

/*
 * Connection parameters.  rt_conn_attr_init() sets the defaults; values are
 * clamped to what the device supports, inline sizes to 1 KiB..256 KiB in
 * whole KiB (RFC 8797's encodable range).
 */
struct rt_conn_attr {
	uint32_t inline_send;	   /* largest message we send (4096) */
	uint32_t inline_recv;	   /* our Receive buffer size (4096) */
	uint32_t credits;	   /* requester: credits asked for; responder:
				 * the grant target (32).  One Receive per
				 * credit is kept posted. */
	uint32_t recv_extra;	   /* Receives beyond credits, e.g. for
				 * backward-direction calls (0) */
	uint32_t recv_start;	   /* responder: Receives for credits posted
				 * at setup, the grant target until
				 * rt_conn_recv_grow() posts more; 0: all
				 * of them (credits) */
	uint32_t send_bufs;	   /* Send buffers (credits + 8) */
	uint32_t rdma_depth;	   /* RDMA Read/Write WRs in flight (16) */
	uint32_t signal_every;	   /* signal at least every Nth send-queue WR
				 * (16) */
	uint32_t timeout_ms;	   /* rt_connect(): address, route and
				 * connection, all together (5000) */
	bool busy_poll;		   /* no completion channel: rt_conn_poll()
				 * spins on the CQ; rt_conn_fd() then wakes
				 * only for connection death */
	bool no_remote_inv;	   /* never advertise Send With Invalidate */
	enum rt_reg_mode reg_mode; /* RT_REG_AUTO; the environment variable
				    * RPCRDMA_REG_MODE=mw|mr overrides AUTO */
	size_t cache_bytes;	   /* idle chunk buffers kept registered for
				    * reuse, at most (RT_CACHE_BYTES; 0:
				    * none kept), rt_buf.h */
};

void rt_conn_attr_init(struct rt_conn_attr *a);

enum rt_state {
	RT_CONN_ACCEPTING = 1, /* accepted, ESTABLISHED not yet seen */
	RT_CONN_UP,	       /* established */
	RT_CONN_DEAD,	       /* ended; rt_conn_error() says why */
};

/* ---- Client ---------------------------------------------------------- */

/*
 * Connect to dst (AF_INET or AF_INET6 with a port) within attr->timeout_ms
 * (attr NULL: defaults).  Returns an established connection with its
 * Receives posted and its private data exchanged, or NULL with err set:
 * ENODEV "no RDMA device for address ...", ETIMEDOUT "address ... not
 * resolved: timed out after N ms", ECONNREFUSED "connection refused by
 * ...", EHOSTUNREACH, ...  The caller retries if it wants to (a server may
 * still be starting).
 */
struct rt_conn *rt_connect(const struct sockaddr *dst,
			   const struct rt_conn_attr *attr, struct rt_err *err);

/*
 * Could a connection to dst be made from here?  Resolves the address and
 * the route as rt_connect() does, within timeout_ms (0: the default), and
 * stops there.  0, or a negative errno with err set: ENODEV "no RDMA
 * device on this host" or "no RDMA device for address ...", ETIMEDOUT,
 * ...  It sends nothing to dst beyond address resolution.  dst NULL:
 * only whether this host has an RDMA device at all.
 */
int rt_probe(const struct sockaddr *dst, unsigned int timeout_ms,
	     struct rt_err *err);

/* Whether this host has an RDMA device: 0, or -ENODEV with err set to
 * "no RDMA device on this host". */
int rt_dev_present(struct rt_err *err);

/* ---- Server ---------------------------------------------------------- */

/*
 * Listen on addr (wildcard or specific; port 0 picks a free port, see
 * rt_listener_port()).  attr (NULL: defaults) applies to every accepted
 * connection.  backlog <= 0 means 16.
 */
struct rt_listener *rt_listen(const struct sockaddr *addr, int backlog,
			      const struct rt_conn_attr *attr,
			      struct rt_err *err);

/* Non-blocking fd, readable when rt_listener_process() has work. */
int rt_listener_fd(const struct rt_listener *l);

/* The bound port in host order. */
uint16_t rt_listener_port(const struct rt_listener *l);

/*
 * Handle the pending connection-manager events without blocking: accept
 * connection requests (storing up to max new connections in newc; requests
 * beyond max stay pending), note ESTABLISHED, and mark accepted connections
 * dead on DISCONNECTED / DEVICE_REMOVAL / TIMEWAIT_EXIT, forcing their queue
 * pair into the error state so their own fd wakes up.  A request that cannot
 * be served is rejected and reported through err without failing the call.
 * Returns the number of new connections, or -errno if the listener itself
 * failed (-ENODEV: its device was removed; it still passes accepted
 * connections their events but accepts nothing more: destroy it).
 */
int rt_listener_process(struct rt_listener *l, struct rt_conn **newc,
			unsigned int max, struct rt_err *err);

/*
 * The fds (rt_conn_fd()) of up to max connections whose completion events
 * rt_listener_process() took since the last call, each once, and forget
 * them; for a caller that serves them at once (svc_rdma.c).  Calling it
 * once is a promise: from then on the listener does not make the fds of
 * the connections it returns readable (unless a thread waits in
 * rt_conn_wait()), so the caller must call rt_conn_poll() or
 * rt_conn_collect() on every one that still exists.  An fd may belong to
 * a connection destroyed since, or to another object by now.
 */
unsigned int rt_listener_woken(struct rt_listener *l, int *fds,
			       unsigned int max);

/* Stop listening.  Accepted connections stay valid, but from now on only
 * their own completions (flushes, errors) tell that they ended. */
void rt_listener_destroy(struct rt_listener *l);

/* ---- Events ---------------------------------------------------------- */

enum rt_ev_type {
	RT_EV_RECV = 1,	  /* a message arrived in rbuf */
	RT_EV_SEND_DONE,  /* a Send posted with RT_WR_SIGNAL completed */
	RT_EV_READ_DONE,  /* an RDMA Read posted with RT_WR_SIGNAL */
	RT_EV_WRITE_DONE, /* an RDMA Write posted with RT_WR_SIGNAL */
	RT_EV_DEAD,	  /* the connection ended (reported once) */
};

/* wc_flags of RT_EV_RECV */
#define RT_WC_WITH_INV 0x1 /* Send With Invalidate: inv_rkey is valid */

struct rt_event {
	enum rt_ev_type type;
	int status;		/* 0; or an errno: EIO failed, ECONNRESET
				 * flushed because the connection ended */
	const char *status_str; /* text of the work completion status */
	uint64_t cookie;	/* SEND/READ/WRITE_DONE: the caller's */
	struct rt_rbuf *rbuf;	/* RECV: give back with rt_recv_repost() */
	void *data;		/* RECV: the message, in rbuf */
	uint32_t len;		/* RECV: its length (validated) */
	unsigned int wc_flags;	/* RECV: RT_WC_* */
	uint32_t inv_rkey;	/* RECV with RT_WC_WITH_INV: the handle the
				 * peer invalidated (rt_reg.h records it) */
};

/*
 * Readable when rt_conn_poll() has something to report (completions,
 * connection death).  Valid for the connection's lifetime; never closed by
 * the caller.  Suitable as a SVCXPRT's xp_fd.
 */
int rt_conn_fd(const struct rt_conn *c);

/*
 * Wait at most timeout_ms (< 0: no limit) for rt_conn_fd() to be readable;
 * > 0 when it is, 0 on timeout, < 0 (errno set) when poll() fails.  An
 * accepted connection's completion events arrive on its listener's
 * channel, taken by rt_listener_process() or by this: a thread waiting for
 * its connection must wait here, not in poll() on the fd alone.
 */
int rt_conn_wait(struct rt_conn *c, int timeout_ms);

/*
 * Collect up to max events, waiting at most timeout_ms (0: do not wait,
 * < 0: wait until an event) for the first.  Returns the number of events
 * stored, 0 on timeout, -ENOTCONN once the connection is dead and every
 * event including RT_EV_DEAD has been collected.  Work queued for lack of
 * room is posted from here.  RT_EV_DEAD comes when the death is noticed;
 * flushed completions of RT_WR_SIGNAL work may still follow it (status
 * ECONNRESET) until rt_conn_destroy(), which drops what is left.
 */
int rt_conn_poll(struct rt_conn *c, struct rt_event *ev, unsigned int max,
		 int timeout_ms);

/*
 * As rt_conn_poll() with timeout 0, without a system call on providers
 * that poll in user space: the completions and queued work only.  What it
 * leaves (a completion channel, CM or wake-up event) keeps rt_conn_fd()
 * readable, so the next wait returns at once and the next rt_conn_poll()
 * takes it.  For a caller that has no reason to think the fd readable
 * (after posting, before letting the connection go).
 */
int rt_conn_collect(struct rt_conn *c, struct rt_event *ev, unsigned int max);

/*
 * A responder whose Receives are posted as the load asks (attr.recv_start):
 * register and post up to RT_RECV_GROW more and raise its grant target
 * (rt_conn_srv_credits()->target) by as many.  0, -ENOSPC when all are
 * there, or -errno when they cannot be registered (the connection goes on
 * with what it has).
 */
int rt_conn_recv_grow(struct rt_conn *c);

/*
 * Make rt_conn_fd() readable although nothing is pending, until the next
 * rt_conn_poll() (not rt_conn_collect()): for an owner that wants its
 * poller to come back (work it left queued, another thread's news).  Any
 * thread.  An owner's own kick would cost it two more fds per connection.
 */
void rt_conn_kick(struct rt_conn *c);

/* ---- Posting --------------------------------------------------------- */

/* Local memory for a work request: from an rt_sbuf, rt_rbuf or rt_lmem. */
struct rt_sge {
	void *addr;
	uint32_t length;
	uint32_t lkey;
};

#define RT_WR_SIGNAL 0x1 /* report completion as an event with cookie */
#define RT_WR_INV_NOMINATED \
	0x2 /* Send With Invalidate of a handle the
				 * peer nominated itself (RPC-over-RDMA v2
				 * rdma_inv_handle): its RFC 8797 flag is
				 * not needed */

/*
 * Post a Send of the first len octets of b, followed by nmore local
 * fragments (at most RT_MAX_SGE - 1).  The total must not exceed the
 * inline send threshold (-EMSGSIZE).  inv_rkey != 0 sends With Invalidate:
 * only if the device can (rt_conn_can_send_inv()) and the peer advertised
 * it or nominated the handle (RT_WR_INV_NOMINATED), -EINVAL otherwise.  b
 * belongs to the connection again from this call on, whatever it returns.
 * -ENOTCONN on a dead connection.
 */
#define RT_MAX_SGE 8
int rt_post_send(struct rt_conn *c, struct rt_sbuf *b, uint32_t len,
		 const struct rt_sge *more, unsigned int nmore,
		 uint32_t inv_rkey, uint64_t cookie, unsigned int flags,
		 struct rt_err *err);

/*
 * RDMA Read seg (a peer's segment, untrusted) into the nsink local
 * fragments, whose lengths must add up to seg->length.  RDMA Write the nsrc
 * fragments into seg; their total may be less than seg->length, not more.
 * Both split the transfer into work requests of at most RT_RDMA_MAX_WR
 * octets (and the device's message size), the last of which reports the
 * completion when RT_WR_SIGNAL is given.  A zero-length transfer posts
 * nothing and reports at once.  On iWARP the sink fragments are registered
 * with remote write for this Read alone (rt_reg.c; the peer's answer
 * writes into them) and deregistered when it ends, before its event; a
 * failed registration is -errno with nothing posted.
 */
#define RT_RDMA_MAX_WR (1u << 20)
int rt_post_read(struct rt_conn *c, const struct rt_sge *sink,
		 unsigned int nsink, const struct rw_segment *seg,
		 uint64_t cookie, unsigned int flags, struct rt_err *err);
int rt_post_write(struct rt_conn *c, const struct rt_sge *src,
		  unsigned int nsrc, const struct rw_segment *seg,
		  uint64_t cookie, unsigned int flags, struct rt_err *err);

/* ---- State and parameters ------------------------------------------- */

enum rt_state rt_conn_state(const struct rt_conn *c);

/* Why the connection is dead (code 0 while it is not). */
const struct rt_err *rt_conn_error(const struct rt_conn *c);

/*
 * Did the connection end because the peer's side of one work request was
 * unusable - a handle, offset or length it gave that its device refused
 * (remote access or invalid request), or a Receive too small for our Send
 * (RFC 8166 §4.5, "operational errors", V1-ERR-11)?  Then true, with the
 * cookie that work was posted with.  False for every other ending: flushes,
 * retries exhausted (the link, not the request), disconnects.
 */
bool rt_conn_peer_fault(const struct rt_conn *c, uint64_t *cookie);

/* End the connection (idempotent): the peer sees a disconnect, pending work
 * is flushed, rt_conn_poll() reports RT_EV_DEAD. */
void rt_conn_disconnect(struct rt_conn *c);

/* Disconnect if needed and free everything, including the connection's
 * buffers, local memory and registration sets (all fenced first): none of
 * their handles may be used afterwards. */
void rt_conn_destroy(struct rt_conn *c);

/* RFC 8797 outcome: inline thresholds both ways and whether the peer
 * accepts Send With Invalidate. */
const struct rw_cm_inline *rt_conn_inline(const struct rt_conn *c);

/*
 * Change the inline send threshold of a live connection: what a protocol
 * version or the peer's Receive Buffer Size property allows, once known
 * (RPC-over-RDMA v2: at least 4096, V2-INL-2).  Never beyond our own Send
 * buffers; returns the threshold in force.
 */
uint32_t rt_conn_set_inline_send(struct rt_conn *c, uint32_t send);

/* The device can post Send With Invalidate (MEM_MGT_EXTENSIONS). */
bool rt_conn_can_send_inv(const struct rt_conn *c);

/* What the peer sent (valid == false: none or foreign, v1 defaults). */
const struct rw_cm_private *rt_conn_peer_private(const struct rt_conn *c);

/* What we sent. */
const struct rw_cm_private *rt_conn_local_private(const struct rt_conn *c);

const struct sockaddr *rt_conn_peer_addr(const struct rt_conn *c);
const struct sockaddr *rt_conn_local_addr(const struct rt_conn *c);

/* The connection's id in the trace: the conn= of its lines and the first
 * argument of its probes (rpcrdma-trace(7)); unique in the process. */
uint32_t rt_conn_trace_id(const struct rt_conn *c);

/* The device's name, e.g. "rxe0". */
const char *rt_conn_device(const struct rt_conn *c);

/* RDMA Reads we may have outstanding (negotiated ORD) and that the peer may
 * have outstanding against us (IRD). */
unsigned int rt_conn_ord(const struct rt_conn *c);
unsigned int rt_conn_ird(const struct rt_conn *c);

/*
 * Credit state for the glue (rw_credit.h).  The requester side is
 * initialized with attr.credits and reset on every new connection; the
 * responder side's "posted" is kept equal to the Receives really posted by
 * this layer plus those lent to the caller (RT_EV_RECV, not yet
 * rt_recv_repost()ed: the caller posts each again before it answers its
 * message), so rw_srv_credits_grant() never grants more than exists.
 */
struct rw_credits *rt_conn_credits(struct rt_conn *c);
struct rw_srv_credits *rt_conn_srv_credits(struct rt_conn *c);

/* Receives currently posted. */
unsigned int rt_conn_recvs_posted(const struct rt_conn *c);

/* Counters, cumulative for the connection's lifetime. */
struct rt_stats {
	uint64_t sends;	    /* Sends posted */
	uint64_t sends_inv; /* ... of which With Invalidate */
	uint64_t recvs;	    /* Receives completed with a message */
	uint64_t reads;	    /* RDMA Read WRs posted */
	uint64_t writes;    /* RDMA Write WRs posted */
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t signalled;	/* WRs posted signalled */
	uint64_t queued;	/* WRs that waited for room in the queue */
	uint64_t registrations; /* ibv_reg_mr for exposures (MR mode, and
				 * MW mode outside the pool) and for
				 * iWARP Read sinks */
	uint64_t deregistrations;
	uint64_t binds;		 /* memory window binds */
	uint64_t invalidations;	 /* local invalidations completed */
	uint64_t mr_fences;	 /* MR-mode exposures fenced by deregistering
				 * them (the MR under a window is none) */
	uint64_t remote_invs;	 /* remote invalidations honoured */
	uint64_t exposures;	 /* rt_reg_expose() calls that succeeded */
	uint64_t revokes;	 /* rt_reg_revoke() calls */
	uint64_t sink_regs;	 /* iWARP RDMA Reads whose sink was registered
				 * with remote write for that Read alone */
	uint64_t sink_deregs;	 /* ... and released again: the difference
				 * is the Reads not yet finished */
	uint64_t errors;	 /* failed (non-flush) completions and
				 * other connection-ending errors */
	uint64_t flushed;	 /* completions flushed by connection end */
	uint64_t cache_released; /* chunk buffers given back to the system
				  * when freed, the cache being full
				  * (attr.cache_bytes) */
};

void rt_conn_stats(const struct rt_conn *c, struct rt_stats *out);

/* Octets of idle chunk buffers the connection's cache holds now (at most
 * attr.cache_bytes; rt_buf.h). */
size_t rt_conn_cache_bytes(const struct rt_conn *c);

#endif /* RT_CONN_H */
