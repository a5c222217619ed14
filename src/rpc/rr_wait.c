/*
 * rr_wait.c - waiting for Replies: the waiters, the leader that polls the
 * connection for all of them, and the dispatch of what the connection
 * reports to the calls, matched by XID.
 *
 * Leader/follower: the connection is not thread-safe, so only one waiting
 * thread at a time - the leader - sleeps on its fd, with the lock released
 * (a plain poll() of the fd touches nothing of the connection); the others
 * sleep on their own condition variables.  Back under the lock the leader
 * collects every pending event (rr_drain) and hands each Reply to its call,
 * waking that call's thread.  When the leader's own call is done it leaves,
 * waking the first waiter, which takes over.  Any thread that used the
 * connection under the lock drains it before letting go, so that no event
 * can sit in the connection's queue while the leader sleeps on an fd that
 * will not wake it.
 *
 * A Reply is looked at in this order (digest 1.10, V1-ERR-1): transport
 * header decoded (a refused one: rw_reply_action() says discard or fail
 * the XID, V1-ERR-4, V1-ERR-10), XID matched to a call of this connection,
 * header checked against what that Call offered (rw_validate_reply), inline
 * payload's XID checked (V1-HDR-2).  Nothing of the payload is used before
 * that, and nothing of a Reply chunk before the call's memory is fenced
 * (rr_call.c).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

/* ---- XID table ---------------------------------------------------------- */

static struct rr_call **bucket(struct rr_clnt *rr, uint32_t xid)
{
	return &rr->xids[(xid ^ (xid >> 16)) & (RR_XID_BUCKETS - 1)];
}

void rr_xid_insert(struct rr_clnt *rr, struct rr_call *call)
{
	struct rr_call **b = bucket(rr, call->xid);

	call->next = *b;
	*b = call;
}

void rr_xid_remove(struct rr_clnt *rr, struct rr_call *call)
{
	struct rr_call **pp;

	for (pp = bucket(rr, call->xid); *pp; pp = &(*pp)->next) {
		if (*pp == call) {
			*pp = call->next;
			call->next = NULL;
			return;
		}
	}
}

struct rr_call *rr_xid_find(struct rr_clnt *rr, uint32_t xid)
{
	struct rr_call *call;

	for (call = *bucket(rr, xid); call; call = call->next)
		if (call->xid == xid)
			return call;
	return NULL;
}

/* ---- Dispatch ----------------------------------------------------------- */

static void repost(struct rr_conn *conn, struct rt_rbuf *b)
{
	if (b)
		rt_recv_repost(conn->rt, b);
}

/* A header we refuse: discard it, or end the call it names for good. */
static void refuse(struct rr_clnt *rr, struct rr_call *call,
		   const struct rw_hdr *h, enum rw_reason why)
{
	struct rw_action a = rw_reply_action(call ? &call->hdr : NULL, h, why);

	if (a.what != RW_ACT_FAIL_XID || !call) {
		rr->st.discarded++;
		return;
	}
	rr->st.rdma_errors++;
	rr->st.err_chunk++;
	TR_EVENT(bad_reply, call->conn->trace_id, call->xid, "reason=%s",
		 rw_reason_str(why));
	call->grant = h->credit;
	rr_res_set(&call->res, RR_ERR_CHUNK, EREMOTEIO,
		   "RPC-over-RDMA error from the server for XID 0x%08x: %s",
		   call->xid, rw_reason_str(why));
	rr_call_complete(rr, call);
}

static void take_error(struct rr_clnt *rr, struct rr_call *call,
		       const struct rw_hdr *h)
{
	/* counted by rr_call once it knows whether the error is final */
	call->grant = h->credit;
	call->errh = *h; /* what a resend may change (rr_call.c) */
	TR_EVENT(rdma_error, call->conn->trace_id, call->xid,
		 "code=%u err=%s low=%u high=%u credits=%u", h->err.code,
		 rw_err_str(h->vers, h->err.code), h->err.low, h->err.high,
		 h->credit);
	rr_conn_oneway_done(call->conn, call);
	if (h->err.code == RW_ERR_VERS) {
		rr_res_set(
			&call->res, RR_ERR_VERS, EPROTONOSUPPORT,
			"the server does not speak RPC-over-RDMA version %u (it supports %u to %u)",
			call->hdr.vers, h->err.low, h->err.high);
		call->res.vers_low = h->err.low;
		call->res.vers_high = h->err.high;
	} else {
		rr_res_set(
			&call->res, RR_ERR_CHUNK, EREMOTEIO,
			"the server refused the call's transport header or could not send the reply (RDMA_ERROR %u: %s)",
			h->err.code, rw_err_str(h->vers, h->err.code));
	}
	rr_call_complete(rr, call);
}

/* The Reply taken for call (before it completes: an abandoned call is
 * finished then): its kind, payload octets, what its Write chunks carried
 * and the grant. */
static void trace_reply(const struct rr_call *call, const struct rw_hdr *h,
			uint32_t len)
{
	uint64_t wbytes = 0;
	uint32_t i, used = 0;

	for (i = 0; i < call->nwrites; i++) {
		wbytes += call->wlen[i];
		used += call->wlen[i] != 0;
	}
	TR_EVENT(reply, call->conn->trace_id, call->xid,
		 "kind=%s len=%u writes=%u write_bytes=%llu credits=%u",
		 h->proc == RW_NOMSG ? "long" :
		 used		     ? "chunked" :
				       "short",
		 len, used, (unsigned long long)wbytes, h->credit);
}

/* RDMA_MSG: the Reply is inline after the header, in the Receive. */
static bool take_inline(struct rr_clnt *rr, struct rr_call *call,
			const struct rw_hdr *h, const struct rt_event *ev)
{
	const uint8_t *p = (const uint8_t *)ev->data + h->hdr_len;
	uint32_t n = ev->len - h->hdr_len;

	if (rw_check_payload(h, p, n) != RW_R_OK) {
		rr->st.discarded++;
		return false;
	}
	call->grant = h->credit;
	call->rbuf = ev->rbuf;
	call->payload = p;
	call->plen = n;
	rr_conn_settled(rr, call->conn);
	rr_conn_oneway_done(call->conn, call);
	rr_call_take_writes(rr, call, h);
	rr->st.replies++;
	rr->st.inline_bytes += n;
	trace_reply(call, h, n);
	rr_call_complete(rr, call);
	return true;
}

/* RDMA_NOMSG: the Reply is in the Reply chunk, one contiguous run from its
 * start: segments are filled in order, so only the last one written may be
 * short.  Its XID is checked once the chunk is fenced. */
static bool take_long(struct rr_clnt *rr, struct rr_call *call,
		      const struct rw_hdr *h)
{
	bool partial = false;
	uint64_t total = 0;
	uint32_t i, len;

	for (i = 0; i < h->reply.nsegs; i++) {
		len = h->reply.segs[i].length;
		if (partial && len) {
			rr->st.discarded++;
			return false;
		}
		partial = len < call->reply_segs[i].length;
		total += len;
	}
	call->grant = h->credit;
	call->payload = call->reply_buf;
	call->plen = (uint32_t)total;
	rr_conn_settled(rr, call->conn);
	rr_conn_oneway_done(call->conn, call);
	rr_call_take_writes(rr, call, h);
	rr->st.replies++;
	rr->st.long_replies++;
	rr->st.reply_bytes += total;
	trace_reply(call, h, (uint32_t)total);
	rr_call_complete(rr, call);
	return true;
}

/*
 * A message in the backward direction: the server as requester (digest
 * 1.14, 2.5).  Its properties (CONNPROP, UPDPROP: one-way) are applied; an
 * RPC Call goes to the backward service (rr_bc.c); anything else is
 * dropped and counted.
 */
static void recv_backward(struct rr_clnt *rr, struct rr_conn *conn,
			  const struct rw_hdr *h, const struct rt_event *ev)
{
	if (h->vers == RW_VERS_2 &&
	    (h->proc == RW2_CONNPROP || h->proc == RW2_UPDPROP)) {
		rr_conn_peer_props(rr, conn, h);
		return;
	}
	if (h->proc == RW_MSG) {
		rr_bc_take(rr, conn, h, (const uint8_t *)ev->data + h->hdr_len,
			   ev->len - h->hdr_len);
		return;
	}
	rr->st.bc_dropped++;
}

static bool is_backward(const struct rw_hdr *h, const struct rt_event *ev)
{
	return rw_hdr_direction(h, (const uint8_t *)ev->data + h->hdr_len,
				ev->len - h->hdr_len) == RW_DIR_CALL;
}

static void recv_reply(struct rr_clnt *rr, struct rr_conn *conn,
		       const struct rt_event *ev)
{
	struct rr_call *call = NULL;
	enum rw_reason why;
	struct rw_hdr h;
	bool kept = false;

	why = rw_hdr_decode(ev->data, ev->len, &h, &rr->hsp);
	if (why == RW_R_OK && is_backward(&h, ev)) {
		recv_backward(rr, conn, &h, ev);
		rt_recv_repost(conn->rt, ev->rbuf);
		return;
	}
	if (why == RW_R_OK || ev->len >= RW_FIXED_LEN)
		call = rr_xid_find(rr, h.xid);
	if (call && (call->conn != conn || call->state == RR_S_DONE))
		call = NULL; /* not a call waiting on this connection */
	if (why == RW_R_OK && !call)
		rr->st.unknown_xid++;
	if (why == RW_R_OK && call)
		why = rw_validate_reply(&call->hdr, &h);
	if (why != RW_R_OK) {
		refuse(rr, call, &h, why);
	} else if (call) {
		if ((ev->wc_flags & RT_WC_WITH_INV) &&
		    ev->inv_rkey != call->inv_handle)
			rr->st.foreign_inv++;
		if (h.proc == RW_ERROR)
			take_error(rr, call, &h);
		else if (h.proc == RW_MSG)
			kept = take_inline(rr, call, &h, ev);
		else if (h.proc == RW_NOMSG)
			take_long(rr, call, &h);
		else
			rr->st.discarded++;
	}
	if (!kept)
		repost(conn, ev->rbuf);
}

static bool dispatch(struct rr_clnt *rr, struct rr_conn *conn,
		     const struct rt_event *ev)
{
	switch (ev->type) {
	case RT_EV_RECV:
		recv_reply(rr, conn, ev);
		return false;
	case RT_EV_DEAD:
		return true;
	default:
		return false; /* nothing is posted signalled */
	}
}

/*
 * Dispatching can finish an abandoned call, which uses the connection and
 * would drain again: a nested drain of the same connection only asks the
 * running one to look once more.
 */
void rr_drain(struct rr_clnt *rr, struct rr_conn *conn)
{
	struct rt_event ev[RR_EV_BATCH];
	bool dead = false;
	int n, i;

	if (conn->lost)
		return;
	if (conn->draining) {
		conn->redrain = true;
		return;
	}
	conn->draining = true;
	do {
		conn->redrain = false;
		n = rt_conn_poll(conn->rt, ev, RR_EV_BATCH, 0);
		for (i = 0; i < n; i++)
			dead |= dispatch(rr, conn, &ev[i]);
	} while (n == RR_EV_BATCH || (n > 0 && conn->redrain));
	conn->draining = false;
	if (dead || n < 0 || rt_conn_state(conn->rt) == RT_CONN_DEAD)
		rr_conn_lost(rr, conn);
}

/* ---- Waiting ------------------------------------------------------------ */

static void waiter_add(struct rr_clnt *rr, struct rr_waiter *w)
{
	struct rr_waiter *t = rr->waiters;

	w->next = NULL;
	w->prev = NULL;
	if (!t) {
		rr->waiters = w;
		return;
	}
	while (t->next)
		t = t->next;
	t->next = w;
	w->prev = t;
}

static void waiter_del(struct rr_clnt *rr, struct rr_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		rr->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
}

void rr_wake(struct rr_waiter *w)
{
	if (w)
		pthread_cond_signal(&w->cv);
}

void rr_wake_all(struct rr_clnt *rr)
{
	struct rr_waiter *w;

	for (w = rr->waiters; w; w = w->next)
		pthread_cond_signal(&w->cv);
}

static void timed_wait(struct rr_clnt *rr, struct rr_waiter *w,
		       int64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / 1000,
		.tv_nsec = (deadline % 1000) * 1000000,
	};

	pthread_cond_timedwait(&w->cv, &rr->lock, &ts);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Sleep on conn's fd (event mode) or give the processor away (busy polling)
 * without the lock, then collect what came.  One slice at most, so that a
 * leader also notices its own deadline and a changed world.
 */
static void lead_once(struct rr_clnt *rr, struct rr_conn *conn,
		      int64_t deadline)
{
	struct pollfd pfd = { .fd = rt_conn_fd(conn->rt), .events = POLLIN };
	int64_t left = min64(deadline - rr_now_ms(), RR_LEAD_SLICE_MS);

	pthread_mutex_unlock(&rr->lock);
	if (conn->busy_poll)
		sched_yield();
	else if (left > 0)
		poll(&pfd, 1, (int)left);
	pthread_mutex_lock(&rr->lock);
	rr_drain(rr, conn);
}

static void lead(struct rr_clnt *rr, struct rr_conn *conn, bool (*done)(void *),
		 void *arg, int64_t deadline)
{
	rr->leading = true;
	conn->refs++;
	while (!done(arg) && !conn->lost && rr_now_ms() < deadline)
		lead_once(rr, conn, deadline);
	rr->leading = false;
	rr_conn_put(rr, conn);
}

bool rr_wait(struct rr_clnt *rr, struct rr_conn *conn, bool (*done)(void *),
	     void *arg, int64_t deadline, struct rr_waiter **pub)
{
	struct rr_waiter w;
	pthread_condattr_t ca;
	bool ok;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cv, &ca);
	pthread_condattr_destroy(&ca);
	waiter_add(rr, &w);
	/* published while we wait, set back to NULL before w goes away */
	if (pub)
		*pub = &w; /* cppcheck-suppress autoVariables */
	while (!done(arg) && rr_now_ms() < deadline) {
		if (conn && !conn->lost && !rr->leading)
			lead(rr, conn, done, arg, deadline);
		else
			timed_wait(rr, &w, deadline);
	}
	ok = done(arg);
	if (pub)
		*pub = NULL;
	waiter_del(rr, &w);
	pthread_cond_destroy(&w.cv);
	/* Whoever leaves hands the connection over: the first waiter leads
	 * next if nobody does. */
	if (!rr->leading)
		rr_wake(rr->waiters);
	return ok;
}
