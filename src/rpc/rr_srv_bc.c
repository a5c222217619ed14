/*
 * rr_srv_bc.c - backward-direction Calls: the server as requester on a
 * connection its client made (RFC 8167; REQUIRED by v2,
 * V2-DIR-1).
 *
 * Message: an RDMA_MSG in the connection's version, direction CALL, every
 * chunk list empty, the RPC Call inline behind it (V1-BD-8; v2: the client
 * advertises Backward Request Support INLINE at most, AMB-X-3).  So a Call
 * must fit the client's Receive buffers; one that does not is refused with
 * a message saying so, never sent (V1-BD size rule).
 *
 * Credits (V1-BD-2/3): a backward Call asks for bc_max credits, never 0;
 * the client's grant comes back in each backward Reply and is 1 until the
 * first; no more Calls are outstanding than that grant, nor than the
 * Receives we keep for their Replies (bc_max, V1-BD-5).  Forward credits
 * are untouched.
 *
 * XIDs are the caller's and independent of the forward ones (V1-BD-1): a
 * backward Reply is told apart from a forward Call by its direction
 * (msg_type in v1, rdma_direction in v2), before any XID is looked at
 * (rr_srv_recv.c classify).
 *
 * Waiting: the connection is driven by svc_run's thread (xp_recv), but a
 * backward caller may be that very thread (a dispatch function calling its
 * client back) or another while svc_run sleeps: so a caller that finds no
 * one polling polls the connection itself (with srv->lock released while it
 * sleeps), hands forward Calls it collects to the ready queue and kicks the
 * fd so that svc_run sees them.  Everything is done under srv->lock.
 *
 * A caller that gives up (deadline) leaves its Call behind: the credit and
 * the Receive stay taken until the late Reply comes (it is then dropped),
 * the connection ends, or RR_BC_ORPHAN_MS more pass - a client that
 * dropped the Call (it was not ready, V1-BD-7) never answers, and its
 * credit must not be lost for good.  A Reply later still finds no Call
 * and is dropped as one with an unknown XID.  A backward requester cannot retransmit until its
 * client reconnects (V1-BD-10): the glue's CLIENT fails instead, and a new
 * one is made on the new connection.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/rr_clock.h"
#include "rpc/rr_res.h"
#include "rpc/rr_srv_bc.h"
#include "rpc/rr_srv_conn.h"
#include "rpc/rr_srv_pool.h"
#include "wire/rw_plan.h"

/* Longest a leading caller sleeps before looking at the world again. */
#define RR_BC_SLICE_MS 100
/* How long an abandoned Call keeps its credit, waiting for a late Reply. */
#define RR_BC_ORPHAN_MS 2000

struct rr_srv_bcall {
	struct rr_srv_bcall *next;
	uint32_t xid;
	bool done;	       /* the Reply came (or the connection
					 * ended: reply NULL) */
	bool orphan;	       /* the caller left */
	int64_t orphan_until;  /* ... its credit comes back then */
	struct rr_sreq *reply; /* holds the Reply message */
	XDR xdr;	       /* over its RPC Reply */
};

static void unlink_call(struct rr_srv *srv, struct rr_srv_bcall *bcall)
{
	struct rr_srv_bcall **pp;

	for (pp = &srv->bcalls; *pp; pp = &(*pp)->next) {
		if (*pp == bcall) {
			*pp = bcall->next;
			return;
		}
	}
}

static void free_call(struct rr_srv *srv, struct rr_srv_bcall *bcall)
{
	if (bcall->reply)
		rr_srv_req_put(srv, bcall->reply);
	free(bcall);
}

/* The credit of a finished Call returns: its Reply came, or it never
 * will. */
static void credit_back(struct rr_srv *srv)
{
	if (srv->bc_inflight)
		srv->bc_inflight--;
}

/*
 * req is a backward Reply (classify decided by its direction): give it to
 * its Call.  false if no Call of ours has its XID (the caller then drops
 * it, counted).
 */
bool rr_srv_bc_reply(struct rr_srv *srv, struct rr_sreq *req)
{
	const struct rw_hdr *h = &req->rx.hdr;
	struct rr_srv_bcall *bcall;

	for (bcall = srv->bcalls;
	     bcall && (bcall->xid != h->xid || bcall->done);
	     bcall = bcall->next)
		;
	if (!bcall || h->proc != RW_MSG || h->nreads || h->nwrites ||
	    h->has_reply ||
	    rw_check_payload(h, req->msg + h->hdr_len, req->len - h->hdr_len))
		return false;
	/* Its caller reads it later; its Receive goes back now, as the
	 * credit does (out of memory: as if it were lost). */
	if (!bcall->orphan && !rr_srv_release_recv(srv, req, true))
		return false;
	if (h->credit)
		srv->bc_granted = h->credit; /* a 0 never counts (V1-BD-2) */
	credit_back(srv);
	TR_EVENT(srv_bc_reply, srv->trace_id, h->xid,
		 "len=%u grant=%u orphan=%d", req->len - h->hdr_len,
		 srv->bc_granted, bcall->orphan ? 1 : 0);
	if (bcall->orphan) {
		unlink_call(srv, bcall);
		rr_srv_req_put(srv, req);
		free(bcall);
		return true;
	}
	req->state = RR_BCREPLY;
	bcall->reply = req;
	bcall->done = true;
	pthread_cond_broadcast(&srv->bc_cv);
	return true;
}

/* The connection ended: every Call waiting is done, without a Reply. */
void rr_srv_bc_lost(struct rr_srv *srv)
{
	struct rr_srv_bcall *bcall;

	for (bcall = srv->bcalls; bcall; bcall = bcall->next)
		bcall->done = true;
	srv->bc_inflight = 0;
	pthread_cond_broadcast(&srv->bc_cv);
}

void rr_srv_bc_free(struct rr_srv *srv)
{
	struct rr_srv_bcall *bcall;

	while ((bcall = srv->bcalls)) {
		srv->bcalls = bcall->next;
		free_call(srv, bcall);
	}
	pthread_cond_destroy(&srv->bc_cv);
}

/* ---- Waiting --------------------------------------------------------- */

/* Poll the connection for everyone, once (lock held, released while
 * asleep), then make svc_run look at what this found for it. */
static void bc_lead_once(struct rr_srv *srv, int64_t deadline)
{
	int64_t left = deadline - rr_clock_ms();

	srv->bc_leading = true;
	pthread_mutex_unlock(&srv->lock);
	if (left > 0)
		rt_conn_wait(srv->conn, left < RR_BC_SLICE_MS ? (int)left :
								RR_BC_SLICE_MS);
	pthread_mutex_lock(&srv->lock);
	srv->bc_leading = false;
	if (srv->progress_locked(srv) > 0)
		rr_srv_kick(srv);
	if (srv->dead)
		rr_srv_bc_lost(srv);
	pthread_cond_broadcast(&srv->bc_cv);
}

static void bc_timed_wait(struct rr_srv *srv, int64_t deadline)
{
	int64_t t = rr_clock_ms() + RR_BC_SLICE_MS;
	struct timespec ts;

	if (t > deadline)
		t = deadline;
	ts.tv_sec = t / 1000;
	ts.tv_nsec = (t % 1000) * 1000000;
	pthread_cond_timedwait(&srv->bc_cv, &srv->lock, &ts);
}

/* Wait until done(srv, arg) or the deadline (lock held). */
static bool wait_for(struct rr_srv *srv, bool (*done)(struct rr_srv *, void *),
		     void *arg, int64_t deadline)
{
	while (!done(srv, arg) && !srv->dead && rr_clock_ms() < deadline) {
		if (!srv->bc_leading)
			bc_lead_once(srv, deadline);
		else
			bc_timed_wait(srv, deadline);
	}
	return done(srv, arg);
}

/* Abandoned Calls whose time is up give their credit back (lock held). */
static void reap_orphans(struct rr_srv *srv)
{
	struct rr_srv_bcall **pp = &srv->bcalls, *bcall;
	int64_t now = rr_clock_ms();

	while ((bcall = *pp)) {
		if (bcall->orphan && !bcall->done &&
		    now >= bcall->orphan_until) {
			*pp = bcall->next;
			credit_back(srv);
			free_call(srv, bcall);
			continue;
		}
		pp = &bcall->next;
	}
}

static bool credit_free(struct rr_srv *srv, void *arg)
{
	uint32_t limit = srv->bc_granted < srv->bc_max ? srv->bc_granted :
							 srv->bc_max;

	reap_orphans(srv);

	return srv->bc_inflight < limit;
}

static bool bc_call_done(struct rr_srv *srv, void *arg)
{
	return ((struct rr_srv_bcall *)arg)->done;
}

/* ---- The Call -------------------------------------------------------- */

/* What the client takes inline in the connection's version. */
static uint32_t send_limit(const struct rr_srv *srv)
{
	return srv->vers_seen == RW_VERS_2 && srv->v2_send ? srv->v2_send :
							     srv->cm_send;
}

/* Header and RPC Call into b: octets, or 0 with res set. */
static uint32_t encode_call(struct rr_srv *srv, uint32_t xid, rr_encode_fn enc,
			    void *arg, struct rt_sbuf *b, struct rr_result *res)
{
	uint32_t cap = send_limit(srv), hl;
	uint8_t *p = rt_sbuf_data(b);
	struct rw_hdr h;
	XDR x;

	if (cap > rt_sbuf_size(b))
		cap = rt_sbuf_size(b);
	rw_hdr_init(&h, srv->vers_seen, RW_MSG, xid, srv->bc_max);
	h.direction = RW_DIR_CALL;
	hl = (uint32_t)rw_hdr_encode(&h, p, cap);
	if (!hl) {
		rr_res_set(res, RR_CANTENCODE, EINVAL,
			   "cannot encode a backward call header");
		return 0;
	}
	xdrmem_create(&x, (char *)p + hl, cap - hl, XDR_ENCODE);
	if (!enc(&x, arg)) {
		rr_res_set(
			res, RR_CANTENCODE, EMSGSIZE,
			"the backward call does not fit the client's %u-octet Receive buffers (backward calls are inline only)",
			cap);
		return 0;
	}
	return hl + xdr_getpos(&x);
}

static bool can_call(struct rr_srv *srv, struct rr_result *res)
{
	if (srv->dead) {
		rr_res_set(res, RR_CANTSEND, ENOTCONN, "%s",
			   rr_srv_error(srv)->msg);
		return false;
	}
	if (!srv->bc_max) {
		rr_res_set(
			res, RR_CANTSEND, EINVAL,
			"no Receives are kept for backward replies (the server was made with bc_credits RPCRDMA_BC_NONE)");
		return false;
	}
	if (!srv->vers_seen) {
		rr_res_set(
			res, RR_CANTSEND, EAGAIN,
			"the client has not called yet: its version is unknown");
		return false;
	}
	/* v2: the client says whether it takes backward requests (its
	 * Backward Request Support, v2 6.2.2); silence means inline */
	if (srv->vers_seen == RW_VERS_2 &&
	    srv->peer.val[RW_SP_BRS] == RW2_BRS_NONE) {
		rr_res_set(
			res, RR_CANTSEND, EOPNOTSUPP,
			"the client does not take backward requests (its Backward Request Support property is none)");
		return false;
	}
	return true;
}

/* Send the Call (lock held): bcall joins the table, a credit is taken. */
static bool bc_send_call(struct rr_srv *srv, struct rr_srv_bcall *bcall,
			 rr_encode_fn enc, void *arg, int64_t deadline,
			 struct rr_result *res)
{
	struct rt_sbuf *b;
	struct rt_err err;
	uint32_t n;

	if (!wait_for(srv, credit_free, NULL, deadline)) {
		rr_res_set(
			res, srv->dead ? RR_CANTSEND : RR_TIMEDOUT,
			srv->dead ? ENOTCONN : ETIMEDOUT,
			"no backward credit before the deadline (%u outstanding, grant %u)",
			srv->bc_inflight, srv->bc_granted);
		return false;
	}
	b = rr_srv_sbuf_wait(srv);
	if (!b) {
		rr_res_set(res, RR_CANTSEND, ENOTCONN, "%s",
			   rr_srv_error(srv)->msg);
		return false;
	}
	n = encode_call(srv, bcall->xid, enc, arg, b, res);
	if (!n) {
		rt_sbuf_put(srv->conn, b);
		return false;
	}
	if (rt_post_send(srv->conn, b, n, NULL, 0, 0, 0, 0, &err)) {
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
		return false;
	}
	srv->bc_inflight++;
	bcall->next = srv->bcalls;
	srv->bcalls = bcall;
	srv->st.bc_calls++;
	TR_EVENT(srv_bc_call, srv->trace_id, bcall->xid,
		 "send=%u inflight=%u grant=%u", n, srv->bc_inflight,
		 srv->bc_granted);
	return true;
}

enum rr_status rr_srv_bc_call(struct rr_srv *srv, uint32_t xid,
			      rr_encode_fn enc, void *arg, int64_t deadline,
			      struct rr_srv_bcall **callp,
			      struct rr_result *res)
{
	struct rr_srv_bcall *bcall = calloc(1, sizeof(*bcall));
	struct rr_sreq *req;

	*callp = NULL;
	memset(res, 0, sizeof(*res));
	if (!bcall) {
		rr_res_set(res, RR_CANTSEND, ENOMEM, "out of memory");
		return res->status;
	}
	bcall->xid = xid;
	pthread_mutex_lock(&srv->lock);
	if (!can_call(srv, res) ||
	    !bc_send_call(srv, bcall, enc, arg, deadline, res)) {
		free(bcall);
		goto out;
	}
	if (!wait_for(srv, bc_call_done, bcall, deadline)) {
		bcall->orphan = true; /* its Reply will be dropped */
		bcall->orphan_until = rr_clock_ms() + RR_BC_ORPHAN_MS;
		srv->st.bc_timeouts++;
		TR_EVENT(srv_bc_timeout, srv->trace_id, xid, "lost=%d",
			 srv->dead ? 1 : 0);
		rr_res_set(res, srv->dead ? RR_CANTRECV : RR_TIMEDOUT,
			   srv->dead ? ENOTCONN : ETIMEDOUT,
			   "no reply to backward XID 0x%08x", xid);
		if (srv->dead) {
			unlink_call(srv, bcall);
			free(bcall);
		}
		goto out;
	}
	unlink_call(srv, bcall);
	req = bcall->reply;
	if (!req) {
		rr_res_set(res, RR_CANTRECV, ENOTCONN,
			   "the connection ended before the backward reply");
		free(bcall);
		goto out;
	}
	xdrmem_create(&bcall->xdr, (char *)req->msg + req->rx.hdr.hdr_len,
		      req->len - req->rx.hdr.hdr_len, XDR_DECODE);
	srv->st.bc_replies++;
	*callp = bcall;
out:
	pthread_mutex_unlock(&srv->lock);
	return res->status;
}

XDR *rr_srv_bcall_xdr(struct rr_srv_bcall *bcall)
{
	return &bcall->xdr;
}

void rr_srv_bcall_done(struct rr_srv *srv, struct rr_srv_bcall *bcall)
{
	if (!bcall)
		return;
	pthread_mutex_lock(&srv->lock);
	free_call(srv, bcall);
	pthread_mutex_unlock(&srv->lock);
}
