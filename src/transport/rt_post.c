/*
 * rt_post.c - the send queue of one connection: posting Sends, RDMA Reads
 * and Writes, window binds and invalidations; selective signalling; the
 * bound on outstanding work; reaping.
 *
 * Operation
 *   Every send-queue work request gets the next sequence number as its
 *   wr_id and a record in a ring indexed by it.  An RC send queue completes
 *   in order, so a completion for sequence S retires every record up to S:
 *   unsignalled work is reaped by the next signalled completion, exactly as
 *   the hardware frees its slots.  Retiring a record gives back what it held
 *   (a Send buffer, an RDMA slot, a Read slot) and, if the caller asked
 *   (RT_WR_SIGNAL), queues an event with its cookie.
 *
 * Signalling
 *   A work request is posted signalled when the caller wants its
 *   completion, when rt_reg waits for it, when signal_every unsignalled ones
 *   precede it, or when posting it uses up the last of a resource (send
 *   queue slot, RDMA window, Read slot, free Send buffer): otherwise nothing
 *   could ever give that resource back.  Never sq_sig_all.
 *
 * Bounded work
 *   At most rdma_depth RDMA Reads and Writes (and at most ORD Reads) are on
 *   the wire at once; Soft-RoCE degrades badly beyond about 16 large ones.
 *   Whatever does not fit waits in a FIFO and is posted from rt_conn_poll()
 *   as completions free room.  Once anything waits, everything posted after
 *   it waits too, so the order of the caller's calls is the order on the
 *   wire (RDMA Writes before the Send that announces them).
 *
 * Errors
 *   The first failed completion ends the connection with a message naming
 *   the operation and the work completion status; the rest flush.  A queued
 *   or flushed request the caller asked to hear about still produces its
 *   event (status ECONNRESET), so the caller's bookkeeping has one path.
 *   When the peer's side of the work was at fault (its handle or length,
 *   its Receive), that work's cookie is kept for rt_conn_peer_fault().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/rt_priv.h"
#include "transport/rt_buf_priv.h"
#include "transport/rt_cq.h"
#include "transport/rt_post.h"
#include "transport/rt_state.h"

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case RT_K_SEND:
		return "Send";
	case RT_K_READ:
		return "RDMA Read";
	case RT_K_WRITE:
		return "RDMA Write";
	case RT_K_BIND:
		return "memory window bind";
	case RT_K_LINV:
		return "local invalidation";
	default:
		return "work request";
	}
}

static int wc_errno(int status)
{
	if (status == IBV_WC_SUCCESS)
		return 0;
	return status == IBV_WC_WR_FLUSH_ERR ? ECONNRESET : EIO;
}

static void post_report(struct rt_conn *conn, uint8_t kind, uint64_t cookie,
			int status)
{
	struct rt_event ev = { .cookie = cookie };

	ev.type = kind == RT_K_SEND ? RT_EV_SEND_DONE :
		  kind == RT_K_READ ? RT_EV_READ_DONE :
				      RT_EV_WRITE_DONE;
	ev.status = wc_errno(status);
	ev.status_str = rt_wc_status_str(status);
	rt_evq_push(conn, &ev);
}

/* Work is finished (completed, flushed, or never posted): give back what
 * it holds.  posted: it held send-queue resources. */
static void work_done(struct rt_conn *conn, uint8_t kind, bool want,
		      uint64_t cookie, void *ctx, int status, bool posted)
{
	switch (kind) {
	case RT_K_SEND:
		rt_buf_sbuf_reclaim(conn, ctx);
		break;
	case RT_K_READ:
		if (posted) {
			conn->rdma_used--;
			conn->reads_used--;
		}
		/* before the event: the data goes up fenced */
		rt_reg_sink_put(conn, ctx);
		break;
	case RT_K_WRITE:
		if (posted)
			conn->rdma_used--;
		break;
	case RT_K_BIND:
	case RT_K_LINV:
		if (ctx) /* NULL: the window was destroyed meanwhile */
			rt_reg_wr_done(conn, kind, ctx, status);
		return;
	}
	if (want)
		post_report(conn, kind, cookie, status);
}

/* What the peer's side of a work request can make fail (rt_conn_peer_fault):
 * its handles and lengths, its Receive buffers. */
static bool peer_fault(int status)
{
	return status == IBV_WC_REM_ACCESS_ERR ||
	       status == IBV_WC_REM_INV_REQ_ERR ||
	       status == IBV_WC_REM_OP_ERR || status == IBV_WC_LOC_LEN_ERR;
}

/* A completion that is not a success ends the connection: a flush means it
 * already ended (or the listener ended it), anything else is the cause. */
static void fail_completion(struct rt_conn *conn, uint8_t kind, int status)
{
	char a[RT_ADDR_STRLEN];
	struct rt_err why;

	rt_addr_str(rt_conn_peer_addr(conn), 1, a);
	if (status == IBV_WC_WR_FLUSH_ERR) {
		conn->st.flushed++;
		if (conn->dead)
			return;
		rt_err_set(&why, ECONNRESET,
			   "connection to %s ended: work flushed", a);
	} else {
		conn->st.errors++;
		rt_err_set(&why, EIO, "%s failed on the connection to %s: %s",
			   kind_name(kind), a, rt_wc_status_str(status));
	}
	rt_conn_kill(conn, &why);
}

void rt_sq_complete(struct rt_conn *conn, uint64_t seq, int status)
{
	uint8_t kind;
	uint64_t s;
	int st;

	if (seq < conn->sq_done || seq >= conn->sq_seq) {
		struct rt_err why;

		conn->st.errors++;
		rt_err_set(&why, EIO,
			   "completion for an unknown work request on %s",
			   conn->devname);
		rt_conn_kill(conn, &why);
		return;
	}
	kind = conn->ring[seq % conn->sq_size].kind;
	if (!conn->dead && peer_fault(status)) {
		conn->peer_fault = true;
		conn->peer_fault_cookie =
			conn->ring[seq % conn->sq_size].cookie;
	}
	for (s = conn->sq_done; s <= seq; s++) {
		struct rt_sq_rec *r = &conn->ring[s % conn->sq_size];

		/* Earlier unsignalled work completed before this one, unless
		 * the queue was flushed. */
		st = s == seq || status == IBV_WC_SUCCESS ? status :
							    IBV_WC_WR_FLUSH_ERR;
		conn->sq_done = s + 1;
		work_done(conn, r->kind, r->report, r->cookie, r->ctx, st,
			  true);
	}
	if (status != IBV_WC_SUCCESS)
		fail_completion(conn, kind, status);
}

/* Room on the wire for w now? */
static bool room(const struct rt_conn *conn, const struct rt_work *w)
{
	if (conn->sq_seq - conn->sq_done >= conn->sq_size)
		return false;
	if (w->kind == RT_K_READ)
		return conn->rdma_used < conn->attr.rdma_depth &&
		       conn->reads_used < conn->ord;
	if (w->kind == RT_K_WRITE)
		return conn->rdma_used < conn->attr.rdma_depth;
	return true;
}

/* Would posting w unsignalled leave a resource that nothing can return? */
static bool needs_signal(const struct rt_conn *conn, const struct rt_work *w)
{
	if (w->report || w->must_signal)
		return true;
	if (conn->unsig + 1 >= conn->attr.signal_every)
		return true;
	if (conn->sq_seq + 1 - conn->sq_done >= conn->sq_size)
		return true;
	if ((w->kind == RT_K_READ || w->kind == RT_K_WRITE) &&
	    conn->rdma_used + 1 >= conn->attr.rdma_depth)
		return true;
	if (w->kind == RT_K_READ && conn->reads_used + 1 >= conn->ord)
		return true;
	return w->kind == RT_K_SEND && conn->nsfree == 0;
}

static void account(struct rt_conn *conn, const struct rt_work *w, bool signal)
{
	uint32_t i, bytes = 0;

	for (i = 0; i < (uint32_t)w->wr.num_sge; i++)
		bytes += w->sge[i].length;
	conn->unsig = signal ? 0 : conn->unsig + 1;
	conn->st.signalled += signal;
	switch (w->kind) {
	case RT_K_SEND:
		conn->st.sends++;
		conn->st.sends_inv += w->wr.opcode == IBV_WR_SEND_WITH_INV;
		break;
	case RT_K_READ:
		conn->rdma_used++;
		conn->reads_used++;
		conn->st.reads++;
		conn->st.read_bytes += bytes;
		break;
	case RT_K_WRITE:
		conn->rdma_used++;
		conn->st.writes++;
		conn->st.write_bytes += bytes;
		break;
	case RT_K_BIND:
		/* The provider identifies a window by its current key: from
		 * now on that is the one this bind installs. */
		if (w->ctx)
			((struct rt_mw *)w->ctx)->mw->rkey = w->wr.bind_mw.rkey;
		break;
	}
}

/* Post w now.  On failure the connection ends; w's resources are given
 * back, with its event only if it had been accepted earlier (queued). */
static int post_now(struct rt_conn *conn, struct rt_work *w, bool queued,
		    struct rt_err *err)
{
	struct ibv_send_wr *bad;
	struct rt_sq_rec *r;
	struct rt_err why;
	bool signal = needs_signal(conn, w);
	int ret;

	w->wr.wr_id = conn->sq_seq;
	w->wr.next = NULL;
	w->wr.sg_list = w->sge;
	w->wr.send_flags = signal ? IBV_SEND_SIGNALED : 0;
	ret = ibv_post_send(conn->qp, &w->wr, &bad);
	if (ret) {
		conn->st.errors++;
		rt_err_set(&why, ret, "cannot post a %s on %s: %s",
			   kind_name(w->kind), conn->devname, strerror(ret));
		rt_err_copy(err, &why);
		work_done(conn, w->kind, w->report && queued, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
		rt_conn_kill(conn, &why);
		return -ret;
	}
	r = &conn->ring[conn->sq_seq % conn->sq_size];
	r->seq = conn->sq_seq;
	r->kind = w->kind;
	r->report = w->report;
	r->cookie = w->cookie;
	r->ctx = w->ctx;
	conn->sq_seq++;
	account(conn, w, signal);
	return 0;
}

static int enqueue(struct rt_conn *conn, const struct rt_work *w,
		   struct rt_err *err)
{
	struct rt_work *q = malloc(sizeof(*q));

	if (!q)
		return rt_err_set(err, ENOMEM, "out of memory");
	*q = *w;
	q->next = NULL;
	if (conn->pend_tail)
		conn->pend_tail->next = q;
	else
		conn->pend_head = q;
	conn->pend_tail = q;
	conn->st.queued++;
	return 0;
}

/*
 * Post w, or queue it behind earlier waiting work.  On -errno nothing of w
 * remains (its resources are given back without an event); 0 means its
 * completion (and event, if asked) will come.
 */
int rt_sq_submit(struct rt_conn *conn, struct rt_work *w, struct rt_err *err)
{
	int ret;

	if (conn->dead) {
		work_done(conn, w->kind, false, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
		return rt_err_set(err, ENOTCONN, "connection is down: %s",
				  conn->err.msg);
	}
	if (!conn->pend_head && room(conn, w))
		return post_now(conn, w, false, err);
	ret = enqueue(conn, w, err);
	if (ret)
		work_done(conn, w->kind, false, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
	return ret;
}

void rt_sq_run_pending(struct rt_conn *conn)
{
	struct rt_work *w;

	while ((w = conn->pend_head) && !conn->dead && room(conn, w)) {
		conn->pend_head = w->next;
		if (!conn->pend_head)
			conn->pend_tail = NULL;
		post_now(conn, w, true, NULL);
		free(w);
	}
	if (conn->dead)
		rt_sq_drop_pending(conn);
}

void rt_sq_drop_pending(struct rt_conn *conn)
{
	struct rt_work *w;

	while ((w = conn->pend_head)) {
		conn->pend_head = w->next;
		if (!conn->pend_head)
			conn->pend_tail = NULL;
		conn->st.flushed++;
		work_done(conn, w->kind, w->report, w->cookie, w->ctx,
			  IBV_WC_WR_FLUSH_ERR, false);
		free(w);
	}
}

/*
 * ctx is about to be freed (a window deallocated on a dead connection
 * before its flushed work requests were reaped): make its records point
 * nowhere.  Only the death path gets here, so a scan is fine.
 */
void rt_sq_forget_ctx(struct rt_conn *conn, const void *ctx)
{
	struct rt_work *w;
	uint64_t s;

	for (s = conn->sq_done; s < conn->sq_seq; s++)
		if (conn->ring[s % conn->sq_size].ctx == ctx)
			conn->ring[s % conn->sq_size].ctx = NULL;
	for (w = conn->pend_head; w; w = w->next)
		if (w->ctx == ctx)
			w->ctx = NULL;
}

void rt_sq_free(struct rt_conn *conn)
{
	struct rt_work *w;

	while ((w = conn->pend_head)) {
		conn->pend_head = w->next;
		free(w);
	}
	conn->pend_tail = NULL;
	free(conn->ring);
	conn->ring = NULL;
}

/* ---- The caller's operations ------------------------------------------ */

static int check_sbuf(struct rt_conn *conn, struct rt_sbuf *b)
{
	return b >= conn->sbufs && b < conn->sbufs + conn->nsbufs && b->busy;
}

static int send_checks(struct rt_conn *conn, const struct rt_sbuf *b,
		       uint32_t len, const struct rt_sge *more,
		       unsigned int nmore, uint32_t inv_rkey,
		       unsigned int flags, struct rt_err *err)
{
	uint64_t total = len;
	unsigned int i;

	if (nmore + 1 > conn->max_sge)
		return rt_err_set(err, EINVAL,
				  "%u fragments exceed the %u a Send may carry",
				  nmore + 1, conn->max_sge);
	if (len > b->size)
		return rt_err_set(err, EINVAL,
				  "%u octets exceed the %u-octet Send buffer",
				  len, b->size);
	for (i = 0; i < nmore; i++)
		total += more[i].length;
	if (total > conn->inl.send)
		return rt_err_set(
			err, EMSGSIZE,
			"message of %llu octets exceeds the inline send threshold of %u",
			(unsigned long long)total, conn->inl.send);
	if (inv_rkey && !conn->dev_send_inv)
		return rt_err_set(err, EINVAL, "%s cannot send With Invalidate",
				  conn->devname);
	if (inv_rkey && !conn->inl.peer_remote_inv &&
	    !(flags & RT_WR_INV_NOMINATED))
		return rt_err_set(
			err, EINVAL,
			"the peer did not advertise Send With Invalidate");
	return 0;
}

int rt_post_send(struct rt_conn *conn, struct rt_sbuf *b, uint32_t len,
		 const struct rt_sge *more, unsigned int nmore,
		 uint32_t inv_rkey, uint64_t cookie, unsigned int flags,
		 struct rt_err *err)
{
	struct rt_work w;
	unsigned int i;
	int ret;

	if (!b || !check_sbuf(conn, b))
		return rt_err_set(err, EINVAL,
				  "not a Send buffer of this connection");
	ret = send_checks(conn, b, len, more, nmore, inv_rkey, flags, err);
	if (ret) {
		rt_buf_sbuf_reclaim(conn, b);
		return ret;
	}
	memset(&w, 0, sizeof(w));
	w.kind = RT_K_SEND;
	w.report = flags & RT_WR_SIGNAL;
	w.cookie = cookie;
	w.ctx = b;
	w.sge[0] = (struct ibv_sge){ (uintptr_t)b->data, len, b->lkey };
	for (i = 0; i < nmore; i++)
		w.sge[i + 1] = (struct ibv_sge){ (uintptr_t)more[i].addr,
						 more[i].length, more[i].lkey };
	w.wr.num_sge = (int)nmore + 1;
	w.wr.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	w.wr.invalidate_rkey = inv_rkey;
	return rt_sq_submit(conn, &w, err);
}

/* Walks a caller's fragment list in pieces of bounded size. */
struct sge_cursor {
	const struct rt_sge *sge;
	unsigned int n;
	unsigned int i;
	uint32_t off;
};

/* Fill w's SGEs with up to max octets from the cursor; returns octets. */
static uint32_t cursor_take(struct sge_cursor *k, struct rt_work *w,
			    uint32_t max, unsigned int max_sge)
{
	uint32_t got = 0, take;
	unsigned int ns = 0;

	while (got < max && k->i < k->n && ns < max_sge) {
		const struct rt_sge *s = &k->sge[k->i];

		take = s->length - k->off;
		if (take > max - got)
			take = max - got;
		if (take) {
			w->sge[ns++] =
				(struct ibv_sge){ (uintptr_t)s->addr + k->off,
						  take, s->lkey };
			got += take;
			k->off += take;
		}
		if (k->off == s->length) {
			k->i++;
			k->off = 0;
		}
	}
	w->wr.num_sge = (int)ns;
	return got;
}

static int rdma_checks(struct rt_conn *conn, uint8_t kind,
		       const struct rt_sge *sge, unsigned int n,
		       const struct rw_segment *seg, uint64_t *total,
		       struct rt_err *err)
{
	unsigned int i;

	for (*total = 0, i = 0; i < n; i++)
		*total += sge[i].length;
	if (kind == RT_K_READ && *total != seg->length)
		return rt_err_set(
			err, EINVAL,
			"RDMA Read of %u octets into %llu octets of local memory",
			seg->length, (unsigned long long)*total);
	if (kind == RT_K_WRITE && *total > seg->length)
		return rt_err_set(
			err, EINVAL,
			"RDMA Write of %llu octets into a %u-octet segment",
			(unsigned long long)*total, seg->length);
	if (seg->offset + *total < seg->offset)
		return rt_err_set(err, EINVAL, "segment offset 0x%llx wraps",
				  (unsigned long long)seg->offset);
	if (kind == RT_K_READ && !conn->ord)
		return rt_err_set(
			err, EOPNOTSUPP,
			"the peer accepts no RDMA Reads on this connection");
	if (conn->dead)
		return rt_err_set(err, ENOTCONN, "connection is down: %s",
				  conn->err.msg);
	return 0;
}

/* Post the work requests of one Read or Write of total octets; on iWARP
 * each Read work request holds the sink registration (one sge each: an
 * iWARP Read Request names a single sink). */
static int post_pieces(struct rt_conn *conn, uint8_t kind, struct sge_cursor *k,
		       uint64_t total, const struct rw_segment *seg,
		       struct rt_sink *sink, uint64_t cookie,
		       unsigned int flags, struct rt_err *err)
{
	uint32_t piece = conn->max_msg < RT_RDMA_MAX_WR ? conn->max_msg :
							  RT_RDMA_MAX_WR;
	unsigned int max_sge = sink ? 1 : conn->max_sge;
	uint64_t left, raddr = seg->offset;
	struct rt_work w;
	uint32_t got;
	int ret;

	for (left = total; left; left -= got, raddr += got) {
		memset(&w, 0, sizeof(w));
		w.kind = kind;
		w.cookie = cookie;
		w.wr.opcode = kind == RT_K_READ ? IBV_WR_RDMA_READ :
						  IBV_WR_RDMA_WRITE;
		w.wr.wr.rdma.rkey = seg->handle;
		w.wr.wr.rdma.remote_addr = raddr;
		got = cursor_take(k, &w, piece, max_sge);
		/* Only the last piece reports: completions are in order. */
		w.report = got == left && (flags & RT_WR_SIGNAL);
		if (sink) {
			rt_reg_sink_hold(sink);
			w.ctx = sink;
		}
		ret = rt_sq_submit(conn, &w, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int post_rdma(struct rt_conn *conn, uint8_t kind,
		     const struct rt_sge *sge, unsigned int n,
		     const struct rw_segment *seg, uint64_t cookie,
		     unsigned int flags, struct rt_err *err)
{
	struct sge_cursor k = { .sge = sge, .n = n };
	struct rt_sink *sink = NULL;
	uint64_t total = 0;
	int ret;

	/* here, where seg is used: the clang analyser does not follow the
	 * failure paths of rdma_checks() */
	if (!seg || (n && !sge))
		return rt_err_set(err, EINVAL, "no segment or no local memory");
	ret = rdma_checks(conn, kind, sge, n, seg, &total, err);
	if (ret)
		return ret;
	if (!total) {
		if (flags & RT_WR_SIGNAL)
			post_report(conn, kind, cookie, IBV_WC_SUCCESS);
		return 0;
	}
	if (kind == RT_K_READ) {
		ret = rt_reg_sink_get(conn, sge, n, &sink, err);
		if (ret)
			return ret;
		if (sink)
			k.sge = rt_reg_sink_sge(sink);
	}
	ret = post_pieces(conn, kind, &k, total, seg, sink, cookie, flags, err);
	/* the work requests hold it now, or nothing does */
	rt_reg_sink_put(conn, sink);
	return ret;
}

int rt_post_read(struct rt_conn *conn, const struct rt_sge *sink,
		 unsigned int nsink, const struct rw_segment *seg,
		 uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	return post_rdma(conn, RT_K_READ, sink, nsink, seg, cookie, flags, err);
}

int rt_post_write(struct rt_conn *conn, const struct rt_sge *src,
		  unsigned int nsrc, const struct rw_segment *seg,
		  uint64_t cookie, unsigned int flags, struct rt_err *err)
{
	return post_rdma(conn, RT_K_WRITE, src, nsrc, seg, cookie, flags, err);
}
