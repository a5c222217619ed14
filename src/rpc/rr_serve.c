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
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

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

void rr_srv_disconnect(struct rr_srv *s)
{
	pthread_mutex_lock(&s->lock);
	rr_srv_kill(s, ECONNRESET, "the server closed the connection");
	pthread_mutex_unlock(&s->lock);
}

/* ---- Events ------------------------------------------------------------- */

static void on_event(struct rr_srv *s, const struct rt_event *ev)
{
	struct rr_sreq *r;
	uint64_t cookie;

	switch (ev->type) {
	case RT_EV_RECV:
		rr_srv_on_recv(s, ev);
		break;
	case RT_EV_READ_DONE:
		r = rr_srv_req_by_cookie(s, ev->cookie);
		if (r && r->state == RR_PULLING)
			rr_srv_on_read_done(s, r, ev->status);
		break;
	case RT_EV_SEND_DONE:
		r = rr_srv_req_by_cookie(s, ev->cookie);
		if (r && r->send_pending)
			rr_srv_on_send_done(s, r);
		break;
	case RT_EV_DEAD:
		s->dead = true;
		if (rt_conn_peer_fault(s->c, &cookie))
			rr_srv_xid_failed(s, rr_srv_req_by_cookie(s, cookie));
		rr_srv_bc_lost(s);
		break;
	default:
		break; /* Writes are never signalled */
	}
}

/* One rt_conn_poll() and what it returned; -ENOTCONN once dead. */
static int poll_once(struct rr_srv *s, int timeout_ms)
{
	struct rt_event ev[RR_EV_BATCH];
	int n, i;

	n = rt_conn_poll(s->c, ev, RR_EV_BATCH, timeout_ms);
	if (n < 0) {
		s->dead = true;
		return -ENOTCONN;
	}
	for (i = 0; i < n; i++)
		on_event(s, &ev[i]);
	return n;
}

/* Collect everything pending, so nothing waits unseen in the transport. */
static void drain(struct rr_srv *s)
{
	while (poll_once(s, 0) > 0)
		;
}

static int wait_events(struct rr_srv *s, int timeout_ms)
{
	int n = poll_once(s, timeout_ms);

	if (n > 0)
		drain(s);
	return s->dead ? -ENOTCONN : n;
}

void rr_srv_defer(struct rr_srv *s)
{
	pthread_mutex_lock(&s->lock);
	rr_srv_kick(s);
	pthread_mutex_unlock(&s->lock);
}

static int progress_locked(struct rr_srv *s)
{
	uint64_t v;
	bool again;

	if (s->kicked && read(s->kick, &v, sizeof(v)) == sizeof(v))
		s->kicked = false;
	do {
		drain(s);
		if (s->dead)
			return -ENOTCONN;
		rr_srv_start_pulls(s);
		/* Taking a Send buffer may reap completions into the
		 * transport's queue: collect them too. */
		again = rr_srv_flush_errors(s);
		rr_srv_send_connprop(s);
	} while (again);
	return s->dead ? -ENOTCONN : (int)s->ready.n;
}

int rr_srv_progress(struct rr_srv *s)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = progress_locked(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* ---- The caller's side --------------------------------------------------- */

/* Answer r, a resend, from its record; the reply path decides inline, the
 * Reply chunk or (still no room) another resource error and record. */
static void answer_resend(struct rr_srv *s, struct rr_sreq *r)
{
	struct rr_replay *p = r->replay;
	struct rr_sreq_enc enc;

	rr_replay_enc(p, &enc);
	r->state = RR_CURRENT;
	s->st.replays_done++;
	rr_srv_reply(s, r, &enc);
	r->replay = NULL;
	rr_replay_free(s, p);
	rr_srv_done(s, r);
}

/* A resend answered from a recorded reply never reaches the caller: the
 * procedure must not run twice (rr_srv_replay.c). */
struct rr_sreq *rr_srv_next(struct rr_srv *s)
{
	struct rr_sreq *r;

	pthread_mutex_lock(&s->lock);
	while (!s->dead && (r = rr_srv_q_pop(&s->ready))) {
		if (r->replay) {
			answer_resend(s, r);
			continue;
		}
		r->state = RR_CURRENT;
		s->st.requests++;
		if (r->rx.hdr.vers == RW_VERS_2)
			s->st.v2_requests++;
		pthread_mutex_unlock(&s->lock);
		return r;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

XDR *rr_sreq_xdr(struct rr_sreq *r)
{
	return &r->ax.xdr;
}

bool rr_sreq_set_ddp(struct rr_sreq *r, const struct rw_ddp_policy *pol)
{
	return rw_axdr_set_policy(&r->ax, pol);
}

uint32_t rr_sreq_xid(const struct rr_sreq *r)
{
	return r->rx.hdr.xid;
}

int rr_sreq_args_done(struct rr_sreq *r)
{
	enum rw_xdr_err e = rw_axdr_finish(&r->ax);

	return e == RW_XERR_OK || e == RW_XERR_TRAILING ? 0 : -EPROTO;
}

void rr_sreq_done(struct rr_srv *s, struct rr_sreq *r)
{
	pthread_mutex_lock(&s->lock);
	rr_srv_done(s, r);
	pthread_mutex_unlock(&s->lock);
}

/* ---- Lifecycle ----------------------------------------------------------- */

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The fd the caller polls: the connection's, plus our own kick. */
static int setup_fd(struct rr_srv *s, struct rt_err *err)
{
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->kick < 0 || epoll_add(s->epfd, s->kick) ||
	    epoll_add(s->epfd, rt_conn_fd(s->c)))
		return rt_err_set(err, errno, "cannot create a pollable fd: %s",
				  strerror(errno));
	return 0;
}

static void close_fds(struct rr_srv *s)
{
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->kick >= 0)
		close(s->kick);
}

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
static void limits_init(struct rr_srv *s)
{
	const struct rr_srv_opts *o = &s->opts;

	s->lim = o->vers_max == RW_VERS_1 ? rw_default_limits : rw_v2_limits;
	if (o->vers_min == RW_VERS_2)
		s->lim.vers_low = RW_VERS_2;
	if (o->max_read_chunks)
		s->lim.max_read_chunks = o->max_read_chunks;
	if (o->max_write_chunks)
		s->lim.max_write_chunks = o->max_write_chunks;
	if (o->max_chunk_segs)
		s->lim.max_chunk_segs = o->max_chunk_segs;
}

struct rr_srv *rr_srv_create(struct rt_conn *c, const struct rr_srv_opts *o,
			     struct rt_err *err)
{
	struct rr_srv *s = calloc(1, sizeof(*s));
	uint32_t target = rt_conn_srv_credits(c)->target;

	if (!s) {
		rt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	s->c = c;
	s->trace_id = rt_conn_trace_id(c);
	s->progress_locked = progress_locked;
	s->wait_events = wait_events;
	s->lost = rr_srv_bc_lost;
	if (setup_fd(s, err) || pthread_mutex_init(&s->lock, NULL) ||
	    cond_init(&s->bc_cv)) {
		close_fds(s);
		free(s);
		return NULL;
	}
	s->opts = *o;
	/* Every Call in flight holds one request object, a Long reply one
	 * until its Send completes: a peer within its credits never needs
	 * more than this. */
	s->max_reqs = 2 * target + 16 + o->bc_max;
	limits_init(s);
	s->bc_max = o->bc_max;
	s->bc_granted = 1; /* until the first backward Reply */
	s->cm_send = rt_conn_inline(c)->send;
	rw_props_init(&s->peer);
	s->bc_xid = (uint32_t)(uintptr_t)s * 2654435761u;
	return s;
}

void rr_srv_destroy(struct rr_srv *s)
{
	uint32_t i;

	if (!s)
		return;
	/* The transport fences and frees every sink and reply source with
	 * the connection; the requests only own their message copies. */
	rt_conn_destroy(s->c);
	close_fds(s);
	rr_replay_free_all(s);
	rr_srv_bc_free(s);
	pthread_mutex_destroy(&s->lock);
	for (i = 0; i < s->nall; i++) {
		/* a resend still waiting to be answered from its record
		 * (taken out of the list by rr_replay_take) */
		if (s->all[i]->replay)
			rr_replay_free(s, s->all[i]->replay);
		free(s->all[i]->msg);
		free(s->all[i]);
	}
	free(s->all);
	free(s);
}

int rr_srv_fd(const struct rr_srv *s)
{
	return s->epfd;
}

const struct sockaddr *rr_srv_peer_addr(const struct rr_srv *s)
{
	return rt_conn_peer_addr(s->c);
}

const struct sockaddr *rr_srv_local_addr(const struct rr_srv *s)
{
	return rt_conn_local_addr(s->c);
}

/* The readers below take the lock: a backward caller may be changing what
 * they read (s is not really const to them). */
void rr_srv_stats(const struct rr_srv *s, struct rr_srv_stats *out)
{
	struct rr_srv *w = (struct rr_srv *)s;

	pthread_mutex_lock(&w->lock);
	*out = s->st;
	pthread_mutex_unlock(&w->lock);
}

uint32_t rr_srv_version(const struct rr_srv *s)
{
	return __atomic_load_n(&s->vers_seen, __ATOMIC_RELAXED);
}

void rr_srv_peer_props(const struct rr_srv *s, struct rw_props *out)
{
	struct rr_srv *w = (struct rr_srv *)s;

	pthread_mutex_lock(&w->lock);
	*out = s->peer;
	pthread_mutex_unlock(&w->lock);
}
