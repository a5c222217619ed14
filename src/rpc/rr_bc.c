/*
 * rr_bc.c - the backward direction on a requester's connections (RFC 8167,
 * RFC 8167): Calls the server sends to the client, taken from the
 * connection, queued for the caller (an SVCXPRT of the glue), answered on
 * the connection they came on.
 *
 * Readiness (V1-BD-7): nothing is taken before rr_clnt_bc_enable(); a
 * backward Call that arrives earlier is dropped and counted.  So is one
 * with chunks (backward messages are inline, V1-BD-8; we advertise Backward
 * Request Support INLINE in v2, AMB-X-3) and one beyond the backward grant
 * (V1-BD-3): the Receives kept for backward Calls are attr.recv_extra.
 *
 * Directions are told apart before XIDs are looked at (rr_wait.c
 * recv_reply: rw_hdr_direction), so a backward Call can never complete a
 * forward call whatever its XID (V1-BD-1): the XID spaces are independent.
 *
 * The caller polls rr_clnt_bc_fd(), an epoll set of the current
 * connection's fd and a kick: readable when a Call waits, or when the
 * connection has events (then rr_clnt_bc_next() collects them, forward
 * Replies included, which go to their waiters as usual).  Connections come
 * and go; the set follows the current one (rr_bc_conn_changed).
 *
 * Replies go inline (V1-BD-9): an RDMA_MSG in the Call's version, direction
 * REPLY, no chunks, carrying our backward grant (never 0, V1-BD-2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rpc/rr_call_priv.h"
#include "rpc/rr_util.h"

/* How long a reply waits for a free Send buffer. */
#define RR_BC_SEND_WAIT_MS 5000

static void kick(struct rr_bc *bc)
{
	uint64_t one = 1;

	if (!bc->kicked && write(bc->kick, &one, sizeof(one)) == sizeof(one))
		bc->kicked = true;
}

static void unkick(struct rr_bc *bc)
{
	uint64_t v;

	if (bc->kicked && read(bc->kick, &v, sizeof(v)) == sizeof(v))
		bc->kicked = false;
}

/* The epoll set follows the current connection (lock held). */
void rr_bc_conn_changed(struct rr_clnt *rr)
{
	struct rr_bc *bc = rr->bc;
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = rr->conn && !rr->conn->lost ? rt_conn_fd(rr->conn->rt) : -1;

	if (!bc || fd == bc->conn_fd)
		return;
	if (bc->conn_fd >= 0)
		epoll_ctl(bc->epfd, EPOLL_CTL_DEL, bc->conn_fd, NULL);
	bc->conn_fd = -1;
	ev.data.fd = fd;
	if (fd >= 0 && !epoll_ctl(bc->epfd, EPOLL_CTL_ADD, fd, &ev))
		bc->conn_fd = fd;
	/* whoever polls must look again: the new connection may already
	 * have something */
	kick(bc);
}

static void bcq_free(struct rr_clnt *rr, struct rr_bcq *q)
{
	if (q->conn)
		rr_conn_put(rr, q->conn);
	free(q->msg);
	free(q);
}

/* Why a backward Call cannot be taken (the trace's bc_drop reason), or
 * NULL. */
static const char *bc_refusal(const struct rr_bc *bc, const struct rw_hdr *h,
			      const uint8_t *payload, uint32_t len)
{
	if (!bc)
		return "disabled";
	if (h->proc != RW_MSG)
		return "not_msg";
	if (h->nreads || h->nwrites || h->has_reply)
		return "chunks";
	if (bc->n + bc->busy >= bc->max)
		return "full";
	if (rw_check_payload(h, payload, len))
		return "bad_payload";
	return NULL;
}

static void bc_drop(struct rr_clnt *rr, const struct rr_conn *conn,
		    uint32_t xid, const char *why)
{
	rr->st.bc_dropped++;
	TR_EVENT(bc_drop, conn->trace_id, xid, "reason=%s", why);
}

/*
 * A backward Call arrived on conn (lock held): h is its decoded header,
 * payload the RPC Call after it.  Queued, or dropped and counted.
 */
void rr_bc_take(struct rr_clnt *rr, struct rr_conn *conn,
		const struct rw_hdr *h, const uint8_t *payload, uint32_t len)
{
	const char *why = bc_refusal(rr->bc, h, payload, len);
	struct rr_bc *bc = rr->bc;
	struct rr_bcq *q;

	if (why) {
		bc_drop(rr, conn, h->xid, why);
		return;
	}
	q = calloc(1, sizeof(*q));
	if (q)
		q->msg = malloc(len);
	if (!q || !q->msg) {
		free(q);
		bc_drop(rr, conn, h->xid, "no_memory");
		return;
	}
	/* a v2 message from the server settles v2 on this connection, and
	 * with it the 4096-octet threshold our Reply may use (V2-INL-2): the
	 * forward Reply that settles it may still be on its way to its
	 * waiter */
	if (h->vers == RW_VERS_2 && conn->vers == RW_VERS_2)
		rr_conn_settled(rr, conn);
	memcpy(q->msg, payload, len);
	q->len = len;
	q->xid = h->xid;
	q->vers = h->vers;
	q->conn = conn;
	conn->refs++;
	if (bc->tail)
		bc->tail->next = q;
	else
		bc->head = q;
	bc->tail = q;
	bc->n++;
	rr->st.bc_calls++;
	TR_EVENT(bc_call, conn->trace_id, h->xid, "vers=%u len=%u queued=%u",
		 h->vers, len, bc->n);
	kick(bc);
}

int rr_clnt_bc_enable(struct rr_clnt *rr, struct rt_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct rr_bc *bc;
	int ret = 0;

	pthread_mutex_lock(&rr->lock);
	if (rr->bc)
		goto out;
	if (!rr->opts.conn.recv_extra) {
		ret = rt_err_set(
			err, EINVAL,
			"no Receives are kept for backward calls (the CLIENT was made with bc_credits RPCRDMA_BC_NONE)");
		goto out;
	}
	bc = calloc(1, sizeof(*bc));
	if (!bc) {
		ret = rt_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	bc->conn_fd = -1;
	/* one Receive of recv_extra is the server's CONNPROP's */
	bc->max = rr->opts.conn.recv_extra > 1 ? rr->opts.conn.recv_extra - 1 :
						 1;
	bc->epfd = epoll_create1(EPOLL_CLOEXEC);
	bc->kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ev.data.fd = bc->kick;
	if (bc->epfd < 0 || bc->kick < 0 ||
	    epoll_ctl(bc->epfd, EPOLL_CTL_ADD, bc->kick, &ev)) {
		ret = rt_err_set(err, errno, "cannot create a pollable fd: %s",
				 strerror(errno));
		if (bc->epfd >= 0)
			close(bc->epfd);
		if (bc->kick >= 0)
			close(bc->kick);
		free(bc);
		goto out;
	}
	rr->bc = bc;
	rr_bc_conn_changed(rr);
out:
	pthread_mutex_unlock(&rr->lock);
	return ret;
}

void rr_clnt_bc_disable(struct rr_clnt *rr)
{
	struct rr_bc *bc;
	struct rr_bcq *q;

	pthread_mutex_lock(&rr->lock);
	bc = rr->bc;
	rr->bc = NULL;
	while (bc && (q = bc->head)) {
		bc->head = q->next;
		bcq_free(rr, q);
	}
	pthread_mutex_unlock(&rr->lock);
	if (!bc)
		return;
	close(bc->epfd);
	close(bc->kick);
	free(bc);
}

int rr_clnt_bc_fd(struct rr_clnt *rr)
{
	int fd;

	pthread_mutex_lock(&rr->lock);
	fd = rr->bc ? rr->bc->epfd : -1;
	pthread_mutex_unlock(&rr->lock);
	return fd;
}

struct rr_bcq *rr_clnt_bc_next(struct rr_clnt *rr)
{
	struct rr_bc *bc;
	struct rr_bcq *q = NULL;

	pthread_mutex_lock(&rr->lock);
	bc = rr->bc;
	if (!bc)
		goto out;
	unkick(bc);
	if (rr->conn && !rr->conn->lost)
		rr_drain(rr, rr->conn);
	rr_bc_conn_changed(rr); /* a loss found by the drain */
	q = bc->head;
	if (q) {
		bc->head = q->next;
		if (!bc->head)
			bc->tail = NULL;
		q->next = NULL;
		bc->n--;
		bc->busy++;
		q->busy = true;
	}
	if (bc->head)
		kick(bc); /* more: poll again at once */
out:
	pthread_mutex_unlock(&rr->lock);
	return q;
}

void rr_clnt_bc_wake(struct rr_clnt *rr)
{
	pthread_mutex_lock(&rr->lock);
	if (rr->bc)
		kick(rr->bc);
	pthread_mutex_unlock(&rr->lock);
}

bool rr_clnt_bc_pending(struct rr_clnt *rr)
{
	bool more;

	pthread_mutex_lock(&rr->lock);
	more = rr->bc && rr->bc->head;
	pthread_mutex_unlock(&rr->lock);
	return more;
}

const uint8_t *rr_bcq_msg(const struct rr_bcq *q, uint32_t *len)
{
	*len = q->len;
	return q->msg;
}

uint32_t rr_bcq_xid(const struct rr_bcq *q)
{
	return q->xid;
}

/* q no longer counts against our grant: the server may send the next
 * Call as soon as it has q's Reply (lock held). */
static void bcq_idle(struct rr_clnt *rr, struct rr_bcq *q)
{
	if (q->busy && rr->bc)
		rr->bc->busy--;
	q->busy = false;
}

/* A Send buffer of conn, waiting a little for one (lock held). */
static struct rt_sbuf *bc_sbuf(struct rr_clnt *rr, struct rr_conn *conn,
			       struct rr_result *res)
{
	int64_t deadline = rr_deadline_ms(RR_BC_SEND_WAIT_MS);
	struct rt_sbuf *b;
	struct rt_err err;

	while (!(b = rt_sbuf_get(conn->rt, &err))) {
		if (err.code != EAGAIN || rr_now_ms() >= deadline) {
			rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
			return NULL;
		}
		pthread_mutex_unlock(&rr->lock);
		usleep(100);
		pthread_mutex_lock(&rr->lock);
		rr_drain(rr, conn);
		if (conn->lost) {
			rr_res_set(res, RR_CANTSEND, ECONNRESET,
				   "the connection of the backward call ended");
			return NULL;
		}
	}
	return b;
}

/* Header and RPC Reply into b: octets, or 0 with res set. */
static uint32_t bc_encode(struct rr_clnt *rr, const struct rr_bcq *q,
			  struct rt_sbuf *b, uint32_t cap, rr_encode_fn enc,
			  void *arg, struct rr_result *res)
{
	uint8_t *p = rt_sbuf_data(b);
	struct rw_hdr h;
	uint32_t hl;
	XDR x;

	rw_hdr_init(&h, q->vers, RW_MSG, q->xid, rr->bc ? rr->bc->max : 1);
	h.direction = RW_DIR_REPLY;
	hl = (uint32_t)rw_hdr_encode(&h, p, cap);
	if (!hl) {
		rr_res_set(res, RR_CANTENCODE, EINVAL,
			   "cannot encode a backward reply header");
		return 0;
	}
	xdrmem_create(&x, (char *)p + hl, cap - hl, XDR_ENCODE);
	if (!enc(&x, arg)) {
		rr_res_set(
			res, RR_CANTENCODE, EMSGSIZE,
			"the backward reply does not fit the server's %u-octet Receive buffers (backward messages are inline only)",
			cap);
		return 0;
	}
	return hl + xdr_getpos(&x);
}

int rr_clnt_bc_reply(struct rr_clnt *rr, struct rr_bcq *q, rr_encode_fn enc,
		     void *arg, struct rr_result *res)
{
	struct rr_conn *conn = q->conn;
	struct rt_sbuf *b;
	struct rt_err err;
	uint32_t cap, n;

	memset(res, 0, sizeof(*res));
	pthread_mutex_lock(&rr->lock);
	if (conn->lost) {
		rr_res_set(res, RR_CANTSEND, ECONNRESET,
			   "the connection the backward call came on has ended");
		goto out;
	}
	b = bc_sbuf(rr, conn, res);
	if (!b)
		goto out;
	/* the server takes what its Receives hold (RFC 8797; 4096 at least
	 * once v2 is settled) */
	cap = conn->call_inline < rt_sbuf_size(b) ? conn->call_inline :
						    rt_sbuf_size(b);
	n = bc_encode(rr, q, b, cap, enc, arg, res);
	if (!n) {
		rt_sbuf_put(conn->rt, b);
		goto out;
	}
	bcq_idle(rr, q);
	if (rt_post_send(conn->rt, b, n, NULL, 0, 0, 0, 0, &err))
		rr_res_set(res, RR_CANTSEND, err.code, "%s", err.msg);
	else
		rr->st.bc_replies++;
	TR_EVENT(bc_reply, conn->trace_id, q->xid, "vers=%u send=%u errno=%d",
		 q->vers, n, res->status == RR_OK ? 0 : res->err);
	rr_drain(rr, conn);
out:
	pthread_mutex_unlock(&rr->lock);
	return res->status == RR_OK ? 0 : -1;
}

void rr_clnt_bc_done(struct rr_clnt *rr, struct rr_bcq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&rr->lock);
	bcq_idle(rr, q);
	bcq_free(rr, q);
	pthread_mutex_unlock(&rr->lock);
}
