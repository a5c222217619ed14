/*
 * rt_cq.c - completions of one connection and the events the caller sees.
 *
 * One completion queue serves both queues of the QP.  With a completion
 * channel, draining follows ibv_get_cq_event(3): take every pending channel
 * event, acknowledge them in batches (ibv_destroy_cq() needs them all
 * acknowledged), re-arm, then poll until the queue is empty, so that a
 * completion that arrives between the poll and the re-arm still raises an
 * event; an event that finds no completion is harmless.  In busy-poll mode
 * there is no channel and rt_conn_poll() spins on ibv_poll_cq().  An
 * accepted connection's channel is its listener's (rt_cm.c): whoever takes
 * an event there asks it to re-arm (and wakes it, unless it is served at
 * once), and its service or collect re-arms before it polls, for the same
 * reason.
 *
 * The service asks epoll, with one system call, which of the connection's
 * sources are ready and touches only those: asking each source in turn
 * cost three or four calls that said EAGAIN on every service (make profile:
 * 12 of a NULL call's 22 client system calls).  rt_cq_reap() makes no system
 * call at all; whatever it leaves (a channel, CM or wake-up event) keeps
 * the fd readable, so the next wait returns at once and the next service
 * takes it.  Busy polling spins on the CQ only, and does the full service
 * every RT_BUSY_CM_EVERY spins of the connection, counted across calls.
 *
 * Completions are turned into rt_events, or consumed inside the layer:
 * send-queue bookkeeping is rt_post.c's, Receives rt_buf.c's, window binds
 * and invalidations rt_reg.c's.  The events wait in rt_state.c's ring.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "transport/rt_priv.h"
#include "transport/rt_cq.h"
#include "transport/rt_state.h"

#define RT_POLL_BATCH	 16
#define RT_POLL_BUDGET	 512 /* completions per service call */
#define RT_ACK_BATCH	 32
#define RT_BUSY_CM_EVERY 64 /* busy poll: look at the CM every N spins */
#define RT_NFDS		 3  /* in the epoll set: wake-up, channel, CM */

const char *rt_wc_status_str(int status)
{
	return ibv_wc_status_str((enum ibv_wc_status)status);
}

static void cq_dispatch(struct rt_conn *conn, const struct ibv_wc *wc)
{
	if (wc->wr_id & RT_WRID_RECV)
		rt_buf_recv_done(conn, (uint32_t)(wc->wr_id & ~RT_WRID_RECV),
				 wc);
	else
		rt_sq_complete(conn, wc->wr_id, (int)wc->status);
}

/* Poll up to the budget; true if the queue may still hold completions. */
static bool poll_cq(struct rt_conn *conn)
{
	struct ibv_wc wc[RT_POLL_BATCH];
	unsigned int budget = RT_POLL_BUDGET;
	struct rt_err why;
	int n, i;

	while (budget) {
		n = ibv_poll_cq(conn->cq, RT_POLL_BATCH, wc);
		if (n < 0) {
			conn->st.errors++;
			rt_err_set(&why, EIO,
				   "polling the completion queue on %s failed",
				   conn->devname);
			rt_conn_kill(conn, &why);
			return false;
		}
		for (i = 0; i < n; i++)
			cq_dispatch(conn, &wc[i]);
		if (n < RT_POLL_BATCH)
			return false;
		budget -= (unsigned int)n < budget ? (unsigned int)n : budget;
	}
	return true;
}

/* The channel is ready: with one CQ on it and re-arming only after an
 * event, one read takes the only event there can be. */
static void channel_event(struct rt_conn *conn)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(conn->cch, &cq, &ctx))
		return;
	if (++conn->cq_unacked >= RT_ACK_BATCH) {
		ibv_ack_cq_events(conn->cq, conn->cq_unacked);
		conn->cq_unacked = 0;
	}
	ibv_req_notify_cq(conn->cq, 0);
}

/* Only what rt_conn_wake() wrote: no read that would say EAGAIN. */
static void clear_wake(struct rt_conn *conn)
{
	uint64_t v;

	if (!atomic_exchange(&conn->woken, false))
		return;
	if (read(conn->wakefd, &v, sizeof(v)) < 0)
		return; /* EAGAIN: a racing read took it */
}

/* An accepted connection's shared channel had an event for it: re-arm
 * before polling (the poll then finds what came before the arm). */
static void accepted_rearm(struct rt_conn *conn)
{
	if (conn->scch && atomic_load(&conn->rearm) &&
	    atomic_exchange(&conn->rearm, false))
		ibv_req_notify_cq(conn->cq, 0);
}

/* Death noticed by the listener (another thread) becomes ours. */
static void take_external_state(struct rt_conn *conn)
{
	struct rt_err why;

	if (!conn->up && atomic_load(&conn->ext_up))
		conn->up = true;
	if (!conn->dead &&
	    atomic_load_explicit(&conn->ext_dead, memory_order_acquire)) {
		why = conn->ext_err;
		rt_conn_kill(conn, &why);
	}
}

/* Completions and queued work only: no system call on providers that
 * poll in user space.  A channel event left pending keeps the fd readable,
 * and the next rt_cq_service() takes it. */
void rt_cq_reap(struct rt_conn *conn)
{
	accepted_rearm(conn);
	take_external_state(conn);
	if (poll_cq(conn))
		rt_conn_wake(conn);
	rt_sq_run_pending(conn);
}

/* An accepted connection's fd is its wake-up eventfd alone. */
static void accepted_sources(struct rt_conn *conn)
{
	clear_wake(conn);
	accepted_rearm(conn);
}

/* Everything that needs doing without blocking: CM events, completions,
 * queued work.  Only the sources epoll reports ready are asked. */
void rt_cq_service(struct rt_conn *conn)
{
	struct epoll_event ready[RT_NFDS];
	int n = 0, i;

	if (conn->epfd < 0)
		accepted_sources(conn);
	else
		n = epoll_wait(conn->epfd, ready, RT_NFDS, 0);
	for (i = 0; i < n; i++) {
		if (ready[i].data.fd == conn->wakefd)
			clear_wake(conn);
		else if (conn->cch && ready[i].data.fd == conn->cch->fd)
			channel_event(conn);
		else
			rt_cm_client_events(conn);
	}
	take_external_state(conn);
	if (poll_cq(conn))
		rt_conn_wake(conn); /* budget spent: come back */
	rt_sq_run_pending(conn);
}

/*
 * An accepted connection waits on its listener's channel too: the thread
 * that would take the events there (svc_run's) may be this one.  A
 * listener whose caller serves the connections it woke does not write
 * their fds unless someone waits here (rt_cm.c chan_events): so a waiter
 * counts itself before it looks for an event already taken for it (rearm),
 * and the listener sets rearm before it looks for waiters - one of the two
 * sees the other.
 */
static int wait_shared(struct rt_conn *conn, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = conn->wakefd, .events = POLLIN },
		{ .fd = conn->scch->fd, .events = POLLIN },
	};
	int n = 1;

	atomic_fetch_add(&conn->waiters, 1);
	if (!atomic_load(&conn->rearm))
		n = poll(pfd, 2, timeout_ms);
	if (n > 0 && pfd[1].revents) {
		rt_cm_chan_events(conn);
		n = poll(pfd, 1, 0); /* was the event ours? */
	}
	atomic_fetch_sub(&conn->waiters, 1);
	return n;
}

int rt_conn_wait(struct rt_conn *conn, int timeout_ms)
{
	struct pollfd pfd = { .fd = rt_conn_fd(conn), .events = POLLIN };

	if (conn->scch && conn->listener)
		return wait_shared(conn, timeout_ms);
	return poll(&pfd, 1, timeout_ms);
}

/* Wait for the fd, at most timeout_ms (< 0: no limit).  In busy-poll mode
 * a live connection does not sleep. */
int rt_cq_wait(struct rt_conn *conn, int timeout_ms)
{
	if (conn->attr.busy_poll && !conn->dead)
		return 0;
	return rt_conn_wait(conn, timeout_ms);
}

static int64_t cq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Busy poll: only the CQ on most spins; the rest now and then.  The
 * count is the connection's, so that a caller polling once per spin does
 * not pay the full service every time. */
static void busy_service(struct rt_conn *conn)
{
	if (++conn->busy_spins % RT_BUSY_CM_EVERY == 0) {
		rt_cq_service(conn);
		return;
	}
	take_external_state(conn);
	poll_cq(conn);
	rt_sq_run_pending(conn);
}

int rt_conn_poll(struct rt_conn *conn, struct rt_event *ev, unsigned int max,
		 int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? cq_now_ms() + timeout_ms : 0;
	unsigned int n;
	int64_t left = -1;

	if (!max)
		return 0;
	for (;;) {
		if (conn->attr.busy_poll && !conn->dead)
			busy_service(conn);
		else
			rt_cq_service(conn);
		n = rt_evq_pop(conn, ev, max);
		if (n || timeout_ms == 0)
			return (int)n;
		if (conn->dead)
			return -ENOTCONN; /* RT_EV_DEAD already taken */
		if (timeout_ms > 0) {
			left = deadline - cq_now_ms();
			if (left <= 0)
				return 0;
		}
		if (rt_cq_wait(conn, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

void rt_conn_kick(struct rt_conn *conn)
{
	rt_conn_wake(conn);
}

int rt_conn_collect(struct rt_conn *conn, struct rt_event *ev, unsigned int max)
{
	if (!max)
		return 0;
	if (conn->attr.busy_poll && !conn->dead)
		busy_service(conn);
	else
		rt_cq_reap(conn);
	return (int)rt_evq_pop(conn, ev, max);
}
