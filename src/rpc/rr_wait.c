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

/*
 * A waiter's condition variable is made the first time it sleeps on it:
 * most waits lead, and leave without ever sleeping there.  Everything is
 * under rr->lock, and a waiter looks at its call before it sleeps, so a
 * wake-up that finds no condition variable has nothing to wake.
 */
void rr_wake(struct rr_waiter *w)
{
	if (w && w->cv_made)
		pthread_cond_signal(&w->cv);
}

void rr_wake_all(struct rr_clnt *rr)
{
	struct rr_waiter *w;

	for (w = rr->waiters; w; w = w->next)
		rr_wake(w);
}

static void waiter_cv_make(struct rr_waiter *w)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	w->cv_made = true;
}

/* Until deadline (rr_now_ms()) and a tick: the condition variable's clock
 * is the fine one, ahead of the coarse by up to a tick, and a wait that
 * ended before the coarse clock reached the deadline would be repeated at
 * once until it did. */
static void wait_timed(struct rr_clnt *rr, struct rr_waiter *w,
		       int64_t deadline)
{
	int64_t until = deadline + rr_tick_ms();
	struct timespec ts = {
		.tv_sec = until / 1000,
		.tv_nsec = (until % 1000) * 1000000,
	};

	if (!w->cv_made)
		waiter_cv_make(w);
	pthread_cond_timedwait(&w->cv, &rr->lock, &ts);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Sleep on conn's fd, at most left_ms, or poll its completions (busy
 * polling; event mode within the leader's budget, rr_spin.h), without the
 * lock, then collect what came.  A polling leader gives the processor away
 * only every RR_BUSY_YIELD_EVERY spins: a system call per spin costs more
 * than the round trip it waits for (make profile).  Returns whether it
 * slept.
 */
static bool wait_lead_once(struct rr_clnt *rr, struct rr_conn *conn,
			   int64_t left_ms, unsigned int spin, bool polling)
{
	struct pollfd pfd = { .fd = rt_conn_fd(conn->rt), .events = POLLIN };

	pthread_mutex_unlock(&rr->lock);
	if (polling) {
		if (spin % RR_BUSY_YIELD_EVERY == RR_BUSY_YIELD_EVERY - 1)
			sched_yield();
	} else if (left_ms > 0) {
		poll(&pfd, 1, (int)min64(left_ms, RR_LEAD_SLICE_MS));
	}
	pthread_mutex_lock(&rr->lock);
	if (polling && !conn->busy_poll)
		rr_collect(rr, conn); /* the fd keeps what this leaves */
	else
		rr_drain(rr, conn);
	return !polling;
}

/* Is the leader the only thread waiting on rr?  Others (threads sharing
 * the CLIENT) mean Replies come often enough to wake it, and a polling
 * leader would take the processor from the callers (the 8- and 32-thread
 * echo rates fell by a third when it polled regardless). */
static bool alone(const struct rr_clnt *rr)
{
	return !rr->waiters || !rr->waiters->next;
}

/*
 * Lead until done, the connection is lost or the deadline.  One slice of
 * sleep at most per turn, so that a leader also notices its own deadline
 * and a changed world.  While polling, the clocks are read every
 * RR_SPIN_CLOCK_EVERY spins only.  The fine clock (a system call on some
 * clock sources) is read for the event-mode budget alone: busy polling
 * and the deadline need only the coarse one.
 */
static void lead(struct rr_clnt *rr, struct rr_conn *conn, bool (*done)(void *),
		 void *arg, int64_t deadline)
{
	bool event = !conn->busy_poll && rr->spin.max_us && alone(rr);
	int64_t start = event ? rr_clock_us() : 0, now_ms = rr_now_ms();
	bool polling = event && rr->spin.cur_us, slept = false;
	unsigned int spin = 0;

	rr->leading = true;
	conn->refs++;
	while (!done(arg) && !conn->lost && now_ms < deadline) {
		slept |= wait_lead_once(rr, conn, deadline - now_ms, spin++,
					polling || conn->busy_poll);
		if ((polling || conn->busy_poll) && spin % RR_SPIN_CLOCK_EVERY)
			continue;
		now_ms = rr_now_ms();
		polling = polling &&
			  rr_clock_us() - start < (int64_t)rr->spin.cur_us;
		/* company came: sleep, and do not judge the budget by it */
		if (polling && !alone(rr))
			polling = event = false;
	}
	if (event && done(arg)) {
		/* a wait that polling ended leaves the budget alone: no
		 * need to read the clock for it */
		if (slept)
			rr_spin_adapt(&rr->spin, false, start, rr_clock_us());
		rr->st.waits_polled += !slept;
	}
	rr->leading = false;
	rr_conn_put(rr, conn);
}

bool rr_wait(struct rr_clnt *rr, struct rr_conn *conn, bool (*done)(void *),
	     void *arg, int64_t deadline, struct rr_waiter **pub)
{
	struct rr_waiter w = { .cv_made = false };
	bool ok;

	waiter_add(rr, &w);
	/* published while we wait, set back to NULL before w goes away */
	if (pub)
		*pub = &w; /* cppcheck-suppress autoVariables */
	while (!done(arg) && rr_now_ms() < deadline) {
		if (conn && !conn->lost && !rr->leading)
			lead(rr, conn, done, arg, deadline);
		else
			wait_timed(rr, &w, deadline);
	}
	ok = done(arg);
	if (pub)
		*pub = NULL;
	waiter_del(rr, &w);
	if (w.cv_made)
		pthread_cond_destroy(&w.cv);
	/* Whoever leaves hands the connection over: the first waiter leads
	 * next if nobody does. */
	if (!rr->leading)
		rr_wake(rr->waiters);
	return ok;
}
