/*
 * rr_srv_bc.c - backward-direction Calls: the server as requester on a
 * connection its client made (RFC 8167, digest 1.14; REQUIRED by v2,
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
 * one polling polls the connection itself (with s->lock released while it
 * sleeps), hands forward Calls it collects to the ready queue and kicks the
 * fd so that svc_run sees them.  Everything is done under s->lock.
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
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void res_set(struct rr_result *res, enum rr_status st, int err,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void res_set(struct rr_result *res, enum rr_status st, int err,
		    const char *fmt, ...)
{
	va_list ap;

	res->status = st;
	res->err = err;
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void unlink_call(struct rr_srv *s, struct rr_srv_bcall *k)
{
	struct rr_srv_bcall **pp;

	for (pp = &s->bcalls; *pp; pp = &(*pp)->next) {
		if (*pp == k) {
			*pp = k->next;
			return;
		}
	}
}

static void free_call(struct rr_srv *s, struct rr_srv_bcall *k)
{
	if (k->reply)
		rr_srv_req_put(s, k->reply);
	free(k);
}

/* The credit of a finished Call returns: its Reply came, or it never
 * will. */
static void credit_back(struct rr_srv *s)
{
	if (s->bc_inflight)
		s->bc_inflight--;
}

/*
 * r is a backward Reply (classify decided by its direction): give it to
 * its Call.  false if no Call of ours has its XID (the caller then drops
 * it, counted).
 */
bool rr_srv_bc_reply(struct rr_srv *s, struct rr_sreq *r)
{
	const struct rw_hdr *h = &r->rx.hdr;
	struct rr_srv_bcall *k;

	for (k = s->bcalls; k && (k->xid != h->xid || k->done); k = k->next)
		;
	if (!k || h->proc != RW_MSG || h->nreads || h->nwrites ||
	    h->has_reply ||
	    rw_check_payload(h, r->msg + h->hdr_len, r->len - h->hdr_len))
		return false;
	if (h->credit)
		s->bc_granted = h->credit; /* a 0 never counts (V1-BD-2) */
	credit_back(s);
	TR_EVENT(srv_bc_reply, s->trace_id, h->xid, "len=%u grant=%u orphan=%d",
		 r->len - h->hdr_len, s->bc_granted, k->orphan ? 1 : 0);
	if (k->orphan) {
		unlink_call(s, k);
		rr_srv_req_put(s, r);
		free(k);
		return true;
	}
	r->state = RR_BCREPLY;
	k->reply = r;
	k->done = true;
	pthread_cond_broadcast(&s->bc_cv);
	return true;
}

/* The connection ended: every Call waiting is done, without a Reply. */
void rr_srv_bc_lost(struct rr_srv *s)
{
	struct rr_srv_bcall *k;

	for (k = s->bcalls; k; k = k->next)
		k->done = true;
	s->bc_inflight = 0;
	pthread_cond_broadcast(&s->bc_cv);
}

void rr_srv_bc_free(struct rr_srv *s)
{
	struct rr_srv_bcall *k;

	while ((k = s->bcalls)) {
		s->bcalls = k->next;
		free_call(s, k);
	}
	pthread_cond_destroy(&s->bc_cv);
}

/* ---- Waiting --------------------------------------------------------- */

/* Poll the connection for everyone, once (lock held, released while
 * asleep), then make svc_run look at what this found for it. */
static void lead_once(struct rr_srv *s, int64_t deadline)
{
	struct pollfd pfd = { .fd = s->epfd, .events = POLLIN };
	int64_t left = deadline - now_ms();

	s->bc_leading = true;
	pthread_mutex_unlock(&s->lock);
	if (left > 0)
		poll(&pfd, 1,
		     left < RR_BC_SLICE_MS ? (int)left : RR_BC_SLICE_MS);
	pthread_mutex_lock(&s->lock);
	s->bc_leading = false;
	if (s->progress_locked(s) > 0)
		rr_srv_kick(s);
	if (s->dead)
		rr_srv_bc_lost(s);
	pthread_cond_broadcast(&s->bc_cv);
}

static void timed_wait(struct rr_srv *s, int64_t deadline)
{
	int64_t t = now_ms() + RR_BC_SLICE_MS;
	struct timespec ts;

	if (t > deadline)
		t = deadline;
	ts.tv_sec = t / 1000;
	ts.tv_nsec = (t % 1000) * 1000000;
	pthread_cond_timedwait(&s->bc_cv, &s->lock, &ts);
}

/* Wait until done(s, arg) or the deadline (lock held). */
static bool wait_for(struct rr_srv *s, bool (*done)(struct rr_srv *, void *),
		     void *arg, int64_t deadline)
{
	while (!done(s, arg) && !s->dead && now_ms() < deadline) {
		if (!s->bc_leading)
			lead_once(s, deadline);
		else
			timed_wait(s, deadline);
	}
	return done(s, arg);
}

/* Abandoned Calls whose time is up give their credit back (lock held). */
static void reap_orphans(struct rr_srv *s)
{
	struct rr_srv_bcall **pp = &s->bcalls, *k;
	int64_t now = now_ms();

	while ((k = *pp)) {
		if (k->orphan && !k->done && now >= k->orphan_until) {
			*pp = k->next;
			credit_back(s);
			free_call(s, k);
			continue;
		}
		pp = &k->next;
	}
}

static bool credit_free(struct rr_srv *s, void *arg)
{
	uint32_t limit = s->bc_granted < s->bc_max ? s->bc_granted : s->bc_max;

	reap_orphans(s);

	return s->bc_inflight < limit;
}

static bool call_done(struct rr_srv *s, void *arg)
{
	return ((struct rr_srv_bcall *)arg)->done;
}

/* ---- The Call -------------------------------------------------------- */

/* What the client takes inline in the connection's version. */
static uint32_t send_limit(const struct rr_srv *s)
{
	return s->vers_seen == RW_VERS_2 && s->v2_send ? s->v2_send :
							 s->cm_send;
}

/* Header and RPC Call into b: octets, or 0 with res set. */
static uint32_t encode_call(struct rr_srv *s, uint32_t xid, rr_encode_fn enc,
			    void *arg, struct rt_sbuf *b, struct rr_result *res)
{
	uint32_t cap = send_limit(s), hl;
	uint8_t *p = rt_sbuf_data(b);
	struct rw_hdr h;
	XDR x;

	if (cap > rt_sbuf_size(b))
		cap = rt_sbuf_size(b);
	rw_hdr_init(&h, s->vers_seen, RW_MSG, xid, s->bc_max);
	h.direction = RW_DIR_CALL;
	hl = (uint32_t)rw_hdr_encode(&h, p, cap);
	if (!hl) {
		res_set(res, RR_CANTENCODE, EINVAL,
			"cannot encode a backward call header");
		return 0;
	}
	xdrmem_create(&x, (char *)p + hl, cap - hl, XDR_ENCODE);
	if (!enc(&x, arg)) {
		res_set(res, RR_CANTENCODE, EMSGSIZE,
			"the backward call does not fit the client's %u-octet Receive buffers (backward calls are inline only)",
			cap);
		return 0;
	}
	return hl + xdr_getpos(&x);
}

static bool can_call(struct rr_srv *s, struct rr_result *res)
{
	if (s->dead) {
		res_set(res, RR_CANTSEND, ENOTCONN, "%s", rr_srv_error(s)->msg);
		return false;
	}
	if (!s->bc_max) {
		res_set(res, RR_CANTSEND, EINVAL,
			"no Receives are kept for backward replies (the server was made with bc_credits RPCRDMA_BC_NONE)");
		return false;
	}
	if (!s->vers_seen) {
		res_set(res, RR_CANTSEND, EAGAIN,
			"the client has not called yet: its version is unknown");
		return false;
	}
	/* v2: the client says whether it takes backward requests (its
	 * Backward Request Support, v2 6.2.2); silence means inline */
	if (s->vers_seen == RW_VERS_2 &&
	    s->peer.val[RW_SP_BRS] == RW2_BRS_NONE) {
		res_set(res, RR_CANTSEND, EOPNOTSUPP,
			"the client does not take backward requests (its Backward Request Support property is none)");
		return false;
	}
	return true;
}

/* Send the Call (lock held): k joins the table, a credit is taken. */
static bool send_call(struct rr_srv *s, struct rr_srv_bcall *k,
		      rr_encode_fn enc, void *arg, int64_t deadline,
		      struct rr_result *res)
{
	struct rt_sbuf *b;
	struct rt_err err;
	uint32_t n;

	if (!wait_for(s, credit_free, NULL, deadline)) {
		res_set(res, s->dead ? RR_CANTSEND : RR_TIMEDOUT,
			s->dead ? ENOTCONN : ETIMEDOUT,
			"no backward credit before the deadline (%u outstanding, grant %u)",
			s->bc_inflight, s->bc_granted);
		return false;
	}
	b = rr_srv_sbuf_wait(s);
	if (!b) {
		res_set(res, RR_CANTSEND, ENOTCONN, "%s", rr_srv_error(s)->msg);
		return false;
	}
	n = encode_call(s, k->xid, enc, arg, b, res);
	if (!n) {
		rt_sbuf_put(s->c, b);
		return false;
	}
	if (rt_post_send(s->c, b, n, NULL, 0, 0, 0, 0, &err)) {
		res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
		return false;
	}
	s->bc_inflight++;
	k->next = s->bcalls;
	s->bcalls = k;
	s->st.bc_calls++;
	TR_EVENT(srv_bc_call, s->trace_id, k->xid,
		 "send=%u inflight=%u grant=%u", n, s->bc_inflight,
		 s->bc_granted);
	return true;
}

enum rr_status rr_srv_bc_call(struct rr_srv *s, uint32_t xid, rr_encode_fn enc,
			      void *arg, int64_t deadline,
			      struct rr_srv_bcall **callp,
			      struct rr_result *res)
{
	struct rr_srv_bcall *k = calloc(1, sizeof(*k));
	struct rr_sreq *r;

	*callp = NULL;
	memset(res, 0, sizeof(*res));
	if (!k) {
		res_set(res, RR_CANTSEND, ENOMEM, "out of memory");
		return res->status;
	}
	k->xid = xid;
	pthread_mutex_lock(&s->lock);
	if (!can_call(s, res) || !send_call(s, k, enc, arg, deadline, res)) {
		free(k);
		goto out;
	}
	if (!wait_for(s, call_done, k, deadline)) {
		k->orphan = true; /* its Reply will be dropped */
		k->orphan_until = now_ms() + RR_BC_ORPHAN_MS;
		s->st.bc_timeouts++;
		TR_EVENT(srv_bc_timeout, s->trace_id, xid, "lost=%d",
			 s->dead ? 1 : 0);
		res_set(res, s->dead ? RR_CANTRECV : RR_TIMEDOUT,
			s->dead ? ENOTCONN : ETIMEDOUT,
			"no reply to backward XID 0x%08x", xid);
		if (s->dead) {
			unlink_call(s, k);
			free(k);
		}
		goto out;
	}
	unlink_call(s, k);
	r = k->reply;
	if (!r) {
		res_set(res, RR_CANTRECV, ENOTCONN,
			"the connection ended before the backward reply");
		free(k);
		goto out;
	}
	xdrmem_create(&k->xdr, (char *)r->msg + r->rx.hdr.hdr_len,
		      r->len - r->rx.hdr.hdr_len, XDR_DECODE);
	s->st.bc_replies++;
	*callp = k;
out:
	pthread_mutex_unlock(&s->lock);
	return res->status;
}

XDR *rr_srv_bcall_xdr(struct rr_srv_bcall *k)
{
	return &k->xdr;
}

void rr_srv_bcall_done(struct rr_srv *s, struct rr_srv_bcall *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&s->lock);
	free_call(s, k);
	pthread_mutex_unlock(&s->lock);
}
