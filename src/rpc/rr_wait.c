/*
 * rr_wait.c - waiting for Replies: the waiters, the leader that polls the
 * connection for all of them, and the table of calls by XID.
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
 * What the connection reports is dispatched by rr_recv.c, above every other
 * requester file: rr_drain() reaches it through the rr_clnt's drain hook,
 * which rr_life.c sets (rr_call_priv.h).
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

/* ---- Draining ---------------------------------------------------------- */

/* Collect and dispatch conn's events: rr_recv.c, above, through the hook. */
void rr_drain(struct rr_clnt *rr, struct rr_conn *conn)
{
	rr->drain(rr, conn, true);
}

void rr_collect(struct rr_clnt *rr, struct rr_conn *conn)
{
	rr->drain(rr, conn, false);
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

/* The condition variable runs on CLOCK_MONOTONIC, deadlines on the coarse
 * clock (rr_now_ms), which lags it by up to a tick: wait for what is left
 * from now, so that a wait never ends before the deadline it is for. */
static void timed_wait(struct rr_clnt *rr, struct rr_waiter *w,
		       int64_t deadline)
{
	int64_t left = deadline - rr_now_ms();
	struct timespec ts;

	if (left <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += left / 1000;
	ts.tv_nsec += (left % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&w->cv, &rr->lock, &ts);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Sleep on conn's fd (event mode) or spin (busy polling) without the lock,
 * then collect what came.  One slice at most, so that a leader also
 * notices its own deadline and a changed world.  A spinning leader gives
 * the processor away only every RR_BUSY_YIELD_EVERY spins: a system call
 * per spin costs more than the round trip it waits for (make profile).
 */
static void lead_once(struct rr_clnt *rr, struct rr_conn *conn,
		      int64_t deadline, unsigned int spin)
{
	struct pollfd pfd = { .fd = rt_conn_fd(conn->rt), .events = POLLIN };
	int64_t left = min64(deadline - rr_now_ms(), RR_LEAD_SLICE_MS);

	pthread_mutex_unlock(&rr->lock);
	if (conn->busy_poll) {
		if (spin % RR_BUSY_YIELD_EVERY == RR_BUSY_YIELD_EVERY - 1)
			sched_yield();
	} else if (left > 0) {
		poll(&pfd, 1, (int)left);
	}
	pthread_mutex_lock(&rr->lock);
	rr_drain(rr, conn);
}

static void lead(struct rr_clnt *rr, struct rr_conn *conn, bool (*done)(void *),
		 void *arg, int64_t deadline)
{
	unsigned int spin = 0;

	rr->leading = true;
	conn->refs++;
	while (!done(arg) && !conn->lost && rr_now_ms() < deadline)
		lead_once(rr, conn, deadline, spin++);
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
