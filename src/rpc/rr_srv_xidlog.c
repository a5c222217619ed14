/*
 * rr_srv_xidlog.c - the record of Calls that failed for an operational
 * reason, and the two hooks that fill and consult it (rr_srv_xidlog.h,
 * V1-ERR-11).
 *
 * A ring of the latest RR_XIDLOG_SIZE failures: a retransmission comes
 * soon after the reconnect or not at all, so a small record kept for a few
 * minutes is enough, and a peer that fails requests on purpose can only
 * push its own older entries out.
 *
 * Every Call asks it, and it is nearly always empty: a count of the slots
 * in use answers that without the lock or the clock (a system call under
 * some clock sources, make profile).
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_srv_err.h"
#include "rpc/rr_srv_priv.h"
#include "rpc/rr_srv_xidlog.h"

struct rr_xident {
	struct sockaddr_storage peer;
	uint32_t xid;
	time_t when; /* CLOCK_MONOTONIC seconds; 0: free */
};

struct rr_xidlog {
	pthread_mutex_t lock;
	atomic_uint used;  /* slots with an entry (when != 0) */
	unsigned int next; /* the slot the next failure takes */
	struct rr_xident e[RR_XIDLOG_SIZE];
};

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1; /* never 0 */
}

struct rr_xidlog *rr_xidlog_create(void)
{
	struct rr_xidlog *log = calloc(1, sizeof(*log));

	if (log && pthread_mutex_init(&log->lock, NULL)) {
		free(log);
		return NULL;
	}
	return log;
}

void rr_xidlog_destroy(struct rr_xidlog *log)
{
	if (!log)
		return;
	pthread_mutex_destroy(&log->lock);
	free(log);
}

static socklen_t xidlog_addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

void rr_xidlog_add(struct rr_xidlog *log, const struct sockaddr *peer,
		   uint32_t xid)
{
	struct rr_xident *e;

	if (!log || !peer)
		return;
	pthread_mutex_lock(&log->lock);
	e = &log->e[log->next];
	log->next = (log->next + 1) % RR_XIDLOG_SIZE;
	if (!e->when)
		atomic_fetch_add(&log->used, 1);
	memset(e, 0, sizeof(*e));
	memcpy(&e->peer, peer, xidlog_addr_len(peer));
	e->xid = xid;
	e->when = now_s();
	pthread_mutex_unlock(&log->lock);
}

/* Free e (lock held). */
static void forget(struct rr_xidlog *log, struct rr_xident *e)
{
	e->when = 0;
	atomic_fetch_sub(&log->used, 1);
}

bool rr_xidlog_take(struct rr_xidlog *log, const struct sockaddr *peer,
		    uint32_t xid)
{
	bool found = false;
	unsigned int i;
	time_t now;

	if (!log || !peer || !atomic_load(&log->used))
		return false;
	now = now_s();
	pthread_mutex_lock(&log->lock);
	for (i = 0; i < RR_XIDLOG_SIZE && !found; i++) {
		struct rr_xident *e = &log->e[i];

		if (!e->when)
			continue;
		if (now - e->when > RR_XIDLOG_TTL_S) {
			forget(log, e); /* expired: no longer asked for */
			continue;
		}
		if (e->xid != xid ||
		    !rt_addr_same_host((const struct sockaddr *)&e->peer, peer))
			continue;
		forget(log, e);
		found = true;
	}
	pthread_mutex_unlock(&log->lock);
	return found;
}

/* ---- Hooks --------------------------------------------------------- */

/* Its Read chunks being pulled, or its reply being written and sent: the
 * work of req, not of a request already answered and reused. */
static bool in_flight(const struct rr_sreq *req)
{
	return req->state == RR_PULLING || req->state == RR_CURRENT ||
	       req->state == RR_SENDING || req->send_pending;
}

void rr_srv_xid_failed(struct rr_srv *srv, struct rr_sreq *req)
{
	if (!req || !in_flight(req))
		return;
	rr_xidlog_add(srv->opts.xidlog, rt_conn_peer_addr(srv->conn),
		      req->rx.hdr.xid);
	srv->st.failed_xids++;
}

bool rr_srv_xid_refuse(struct rr_srv *srv, struct rr_sreq *req)
{
	if (!rr_xidlog_take(srv->opts.xidlog, rt_conn_peer_addr(srv->conn),
			    req->rx.hdr.xid))
		return false;
	/* v2 has no ERR_CHUNK: the failure was an operational one, SYSTEM */
	if (req->rx.hdr.vers == RW_VERS_2)
		rr_srv_set_error2(req, RW2_ERR_SYSTEM, 0, 0,
				  RR_CAUSE_FAILED_XID);
	else
		rr_srv_set_error(req, RW_ERR_CHUNK, RR_CAUSE_FAILED_XID);
	rr_srv_queue_error(srv, req);
	return true;
}
