/*
 * rr_serve.c - one connection's responder: its lifecycle, the events of the
 * connection and where they go (the top of the server files, rr_srv_priv.h),
 * the hand over of ready requests to the caller, counters.
 *
 * Every event the transport has is collected each time (rr_srv_progress):
 * the connection's fd is readable only while something new is pending, so
 * an event left in the transport's queue would never be looked at again.
 * What cannot be finished at once (Reads in flight, an RDMA_ERROR waiting
 * for a Send buffer, a reply source waiting for its Send) stays in our own
 * queues, and its completion makes the fd readable again.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_srv_bc.h"
#include "rpc/rr_srv_conn.h"
#include "rpc/rr_srv_ctl.h"
#include "rpc/rr_srv_pool.h"
#include "rpc/rr_srv_recv.h"
#include "rpc/rr_srv_replay.h"
#include "rpc/rr_srv_reply.h"
#include "rpc/rr_srv_xidlog.h"

#define RR_EV_BATCH 16

/* ---- Connection state --------------------------------------------------- */

void rr_srv_disconnect(struct rr_srv *srv)
{
	pthread_mutex_lock(&srv->lock);
	rr_srv_kill(srv, ECONNRESET, "the server closed the connection");
	pthread_mutex_unlock(&srv->lock);
}

/* ---- Events ------------------------------------------------------------- */

static void on_event(struct rr_srv *srv, const struct rt_event *ev)
{
	struct rr_sreq *req;
	uint64_t cookie;

	switch (ev->type) {
	case RT_EV_RECV:
		rr_srv_on_recv(srv, ev);
		break;
	case RT_EV_READ_DONE:
		req = rr_srv_req_by_cookie(srv, ev->cookie);
		if (req && req->state == RR_PULLING)
			rr_srv_on_read_done(srv, req, ev->status);
		break;
	case RT_EV_SEND_DONE:
		req = rr_srv_req_by_cookie(srv, ev->cookie);
		if (req && req->send_pending)
			rr_srv_on_send_done(srv, req);
		break;
	case RT_EV_DEAD:
		srv->dead = true;
		if (rt_conn_peer_fault(srv->conn, &cookie))
			rr_srv_xid_failed(srv,
					  rr_srv_req_by_cookie(srv, cookie));
		rr_srv_bc_lost(srv);
		break;
	default:
		break; /* Writes are never signalled */
	}
}

/* One rt_conn_poll() - or, !full, rt_conn_collect(): completions only,
 * without a system call - and what it returned; -ENOTCONN once dead. */
static int poll_once(struct rr_srv *srv, int timeout_ms, bool full)
{
	struct rt_event ev[RR_EV_BATCH];
	int n, i;

	n = full ? rt_conn_poll(srv->conn, ev, RR_EV_BATCH, timeout_ms) :
		   rt_conn_collect(srv->conn, ev, RR_EV_BATCH);
	if (n < 0) {
		srv->dead = true;
		return -ENOTCONN;
	}
	for (i = 0; i < n; i++)
		on_event(srv, &ev[i]);
	return n;
}

/* Collect everything pending, so nothing waits unseen in the transport:
 * the fd's sources once if full (what a wake-up announced), then the
 * completions that come meanwhile.  What a collect leaves keeps the fd
 * readable (rt_conn_collect). */
static void drain(struct rr_srv *srv, bool full)
{
	while (poll_once(srv, 0, full) > 0)
		full = false;
}

/* A full poll takes the kick too: one that was not progress() must
 * leave it for svc_run's thread, whose call it is. */
static int wait_events(struct rr_srv *srv, int timeout_ms)
{
	int n = poll_once(srv, timeout_ms, true);

	if (srv->kicked)
		rt_conn_kick(srv->conn);
	if (n > 0)
		drain(srv, false);
	return srv->dead ? -ENOTCONN : n;
}

void rr_srv_defer(struct rr_srv *srv)
{
	pthread_mutex_lock(&srv->lock);
	rr_srv_kick(srv);
	pthread_mutex_unlock(&srv->lock);
}

static int progress(struct rr_srv *srv, bool full)
{
	bool again;

	/* the full poll takes the kick; a collect leaves it readable */
	if (full)
		srv->kicked = false;
	do {
		drain(srv, full);
		full = false;
		if (srv->dead)
			return -ENOTCONN;
		rr_srv_start_pulls(srv);
		/* Taking a Send buffer may reap completions into the
		 * transport's queue: collect them too. */
		again = rr_srv_flush_errors(srv);
		rr_srv_send_connprop(srv);
	} while (again);
	return srv->dead ? -ENOTCONN : (int)srv->ready.n;
}

static int progress_locked(struct rr_srv *srv)
{
	return progress(srv, true);
}

int rr_srv_progress(struct rr_srv *srv)
{
	int n;

	pthread_mutex_lock(&srv->lock);
	n = progress(srv, true);
	/* The Call that polling missed: how long after did it come? */
	if (n > 0 && srv->idle_since) {
		rr_spin_adapt(&srv->spin, false, srv->idle_since,
			      rr_clock_us());
		srv->idle_since = 0;
	}
	pthread_mutex_unlock(&srv->lock);
	return n;
}

/* Poll for the next Call within the budget (lock held, released between
 * polls for the backward direction's callers). */
static int poll_for_call(struct rr_srv *srv)
{
	int64_t start = rr_clock_us(), now = start;
	unsigned int spin;
	int n = 0;

	for (spin = 1; !n && now - start < (int64_t)srv->spin.cur_us; spin++) {
		pthread_mutex_unlock(&srv->lock);
		pthread_mutex_lock(&srv->lock);
		n = progress(srv, false);
		if (spin % RR_SPIN_CLOCK_EVERY == 0)
			now = rr_clock_us();
	}
	srv->idle_since = n ? 0 : start;
	return n;
}

int rr_srv_collect(struct rr_srv *srv)
{
	int n;

	pthread_mutex_lock(&srv->lock);
	n = progress(srv, false);
	if (!n && srv->spin.max_us)
		n = srv->spin.cur_us ? poll_for_call(srv) : 0;
	if (!n && srv->spin.max_us && !srv->idle_since)
		srv->idle_since = rr_clock_us();
	pthread_mutex_unlock(&srv->lock);
	return n;
}

bool rr_srv_idle(struct rr_srv *srv)
{
	bool idle;
	int n;

	pthread_mutex_lock(&srv->lock);
	n = progress(srv, false);
	if (n > 0)
		rr_srv_kick(srv); /* svc_run must come for it */
	/* a dead connection has nothing left to lose either */
	idle = n < 0 || (!n && !srv->st.inflight);
	pthread_mutex_unlock(&srv->lock);
	return idle;
}

/* ---- The caller's side --------------------------------------------------- */

/* Answer req, a resend, from its record; the reply path decides inline, the
 * Reply chunk or (still no room) another resource error and record. */
static void answer_resend(struct rr_srv *srv, struct rr_sreq *req)
{
	struct rr_replay *p = req->replay;
	struct rr_sreq_enc enc;

	rr_replay_enc(p, &enc);
	req->state = RR_CURRENT;
	srv->st.replays_done++;
	rr_srv_reply(srv, req, &enc);
	req->replay = NULL;
	rr_replay_free(srv, p);
	rr_srv_done(srv, req);
}

/* A resend answered from a recorded reply never reaches the caller: the
 * procedure must not run twice (rr_srv_replay.c). */
struct rr_sreq *rr_srv_next(struct rr_srv *srv)
{
	struct rr_sreq *req;

	pthread_mutex_lock(&srv->lock);
	while (!srv->dead && (req = rr_srv_q_pop(&srv->ready))) {
		if (req->replay) {
			answer_resend(srv, req);
			continue;
		}
		req->state = RR_CURRENT;
		srv->st.requests++;
		if (req->rx.hdr.vers == RW_VERS_2)
			srv->st.v2_requests++;
		pthread_mutex_unlock(&srv->lock);
		return req;
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

XDR *rr_sreq_xdr(struct rr_sreq *req)
{
	return &req->ax.xdr;
}

bool rr_sreq_set_ddp(struct rr_sreq *req, const struct rw_ddp_policy *pol)
{
	return rw_axdr_set_policy(&req->ax, pol);
}

uint32_t rr_sreq_xid(const struct rr_sreq *req)
{
	return req->rx.hdr.xid;
}

int rr_sreq_args_done(struct rr_sreq *req)
{
	enum rw_xdr_err e = rw_axdr_finish(&req->ax);

	return e == RW_XERR_OK || e == RW_XERR_TRAILING ? 0 : -EPROTO;
}

void rr_sreq_done(struct rr_srv *srv, struct rr_sreq *req)
{
	pthread_mutex_lock(&srv->lock);
	rr_srv_done(srv, req);
	pthread_mutex_unlock(&srv->lock);
}

/* ---- Lifecycle ----------------------------------------------------------- */

/* Backward callers wait with CLOCK_MONOTONIC deadlines. */
static int cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t ca;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	ret = pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
	return ret;
}

/* What Calls are decoded against: our versions and chunk limits, within
 * the wire layer's ceilings. */
static void limits_init(struct rr_srv *srv)
{
	const struct rr_srv_opts *o = &srv->opts;

	srv->lim = o->vers_max == RW_VERS_1 ? rw_default_limits : rw_v2_limits;
	if (o->vers_min == RW_VERS_2)
		srv->lim.vers_low = RW_VERS_2;
	if (o->max_read_chunks)
		srv->lim.max_read_chunks = o->max_read_chunks;
	if (o->max_write_chunks)
		srv->lim.max_write_chunks = o->max_write_chunks;
	if (o->max_chunk_segs)
		srv->lim.max_chunk_segs = o->max_chunk_segs;
}

struct rr_srv *rr_srv_create(struct rt_conn *conn, const struct rr_srv_opts *o,
			     struct rt_err *err)
{
	struct rr_srv *srv = calloc(1, sizeof(*srv));
	uint32_t target = rt_conn_srv_credits(conn)->target;

	if (!srv) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	srv->conn = conn;
	srv->trace_id = rt_conn_trace_id(conn);
	srv->progress_locked = progress_locked;
	srv->wait_events = wait_events;
	srv->lost = rr_srv_bc_lost;
	if (pthread_mutex_init(&srv->lock, NULL)) {
		rt_err_set(err, ENOMEM, "out of memory");
		free(srv);
		return NULL;
	}
	if (cond_init(&srv->bc_cv)) {
		rt_err_set(err, ENOMEM, "out of memory");
		pthread_mutex_destroy(&srv->lock);
		free(srv);
		return NULL;
	}
	srv->opts = *o;
	rr_spin_init(&srv->spin, o->poll_us);
	/* Every Call in flight holds one request object, a Long reply one
	 * until its Send completes: a peer within its credits never needs
	 * more than this. */
	srv->max_reqs = 2 * target + 16 + o->bc_max;
	limits_init(srv);
	srv->bc_max = o->bc_max;
	srv->bc_granted = 1; /* until the first backward Reply */
	srv->cm_send = rt_conn_inline(conn)->send;
	rw_props_init(&srv->peer);
	srv->bc_xid = (uint32_t)(uintptr_t)srv * 2654435761u;
	return srv;
}

void rr_srv_destroy(struct rr_srv *srv)
{
	uint32_t i;

	if (!srv)
		return;
	/* The transport fences and frees every sink and reply source with
	 * the connection; the requests only own their message copies. */
	rt_conn_destroy(srv->conn);
	rr_replay_free_all(srv);
	rr_srv_bc_free(srv);
	pthread_mutex_destroy(&srv->lock);
	for (i = 0; i < srv->nall; i++) {
		/* a resend still waiting to be answered from its record
		 * (taken out of the list by rr_replay_take) */
		if (srv->all[i]->replay)
			rr_replay_free(srv, srv->all[i]->replay);
		free(srv->all[i]->copy);
		free(srv->all[i]);
	}
	free(srv->all);
	free(srv);
}

/* The connection's own fd, which its kick makes readable too. */
int rr_srv_fd(const struct rr_srv *srv)
{
	return rt_conn_fd(srv->conn);
}

const struct sockaddr *rr_srv_peer_addr(const struct rr_srv *srv)
{
	return rt_conn_peer_addr(srv->conn);
}

const struct sockaddr *rr_srv_local_addr(const struct rr_srv *srv)
{
	return rt_conn_local_addr(srv->conn);
}

/* The readers below take the lock: a backward caller may be changing what
 * they read (srv is not really const to them). */
void rr_srv_stats(const struct rr_srv *srv, struct rr_srv_stats *out)
{
	struct rr_srv *w = (struct rr_srv *)srv;

	pthread_mutex_lock(&w->lock);
	*out = srv->st;
	pthread_mutex_unlock(&w->lock);
}

void rr_srv_cache(const struct rr_srv *srv, uint64_t *bytes, uint64_t *released)
{
	struct rr_srv *w = (struct rr_srv *)srv;
	struct rt_stats st;

	pthread_mutex_lock(&w->lock);
	rt_conn_stats(srv->conn, &st);
	*bytes = rt_conn_cache_bytes(srv->conn);
	pthread_mutex_unlock(&w->lock);
	*released = st.cache_released;
}

uint32_t rr_srv_version(const struct rr_srv *srv)
{
	return __atomic_load_n(&srv->vers_seen, __ATOMIC_RELAXED);
}

void rr_srv_peer_props(const struct rr_srv *srv, struct rw_props *out)
{
	struct rr_srv *w = (struct rr_srv *)srv;

	pthread_mutex_lock(&w->lock);
	*out = srv->peer;
	pthread_mutex_unlock(&w->lock);
}
